/* trmm.c: triangular matrix product B := alpha * A^T * B, where the M x M matrix A is unit lower
 * triangular (its diagonal and upper triangle are not read) and B is M x N.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "trmm.h"

/* Entries of A that must not be read (diagonal and above) are set to -999. */
static void init_array(DATA_TYPE *alpha, DATA_TYPE POLYBENCH_2D(A, M, M, m, m),
                       DATA_TYPE POLYBENCH_2D(B, M, N, m, n))
{
    int i, j;

    *alpha = SCALAR_VAL(1.5);
    for (i = 0; i < M; i++) {
        for (j = 0; j < M; j++)
            A[i][j] = j < i ? (DATA_TYPE)((i * j + 2) % M) / (2 * M) : SCALAR_VAL(-999.0);
        for (j = 0; j < N; j++)
            B[i][j] = (DATA_TYPE)((N + i - j) % N) / N;
    }
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(B, M, N, m, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("B");
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, B[i][j]);
        }
    POLYBENCH_DUMP_END("B");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_trmm(DATA_TYPE alpha, DATA_TYPE POLYBENCH_2D(A, M, M, m, m),
                        DATA_TYPE POLYBENCH_2D(B, M, N, m, n))
{
    int i, j, k;

#pragma scop
    for (i = 0; i < _PB_M; i++)
        for (j = 0; j < _PB_N; j++) {
            /* Row i of A^T below the (unit) diagonal, applied to rows i+1.. of B, which are not
             * updated yet. */
            for (k = i + 1; k < _PB_M; k++)
                B[i][j] += A[k][i] * B[k][j];
            B[i][j] = alpha * B[i][j];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE alpha;
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, M, m, m);
    POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, M, N, m, n);

    init_array(&alpha, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

    polybench_start_instruments;
    kernel_trmm(alpha, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(B)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(B);
    return 0;
}
