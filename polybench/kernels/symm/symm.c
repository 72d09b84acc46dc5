/* symm.c: C := alpha*A*B + beta*C where the M x M matrix A is symmetric and only its lower
 * triangle is read; B and C are M x N.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "symm.h"

/* The strict upper triangle of A is set to -999: it must never be read. */
static void init_array(DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE POLYBENCH_2D(C, M, N, m, n),
                       DATA_TYPE POLYBENCH_2D(A, M, M, m, m), DATA_TYPE POLYBENCH_2D(B, M, N, m, n))
{
    int i, j;

    *alpha = SCALAR_VAL(1.5);
    *beta = SCALAR_VAL(1.25);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            C[i][j] = (DATA_TYPE)((i + 2 * j) % 10) / 10;
            B[i][j] = (DATA_TYPE)((N + i - j) % 9) / 9;
        }
    for (i = 0; i < M; i++)
        for (j = 0; j < M; j++)
            A[i][j] = j <= i ? (DATA_TYPE)((i * j + i + j) % 11) / (11 * M) : SCALAR_VAL(-999.0);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(C, M, N, m, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("C");
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
        }
    POLYBENCH_DUMP_END("C");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_symm(DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE POLYBENCH_2D(C, M, N, m, n),
                        DATA_TYPE POLYBENCH_2D(A, M, M, m, m), DATA_TYPE POLYBENCH_2D(B, M, N, m, n))
{
    int i, j, k;
    DATA_TYPE temp2;

#pragma scop
    for (i = 0; i < _PB_M; i++)
        for (j = 0; j < _PB_N; j++) {
            /* Row i of A left of the diagonal is also column i above it: use it both ways. */
            temp2 = SCALAR_VAL(0.0);
            for (k = 0; k < i; k++) {
                C[k][j] += alpha * B[i][j] * A[i][k];
                temp2 += B[k][j] * A[i][k];
            }
            C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE alpha;
    DATA_TYPE beta;
    POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, M, N, m, n);
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, M, m, m);
    POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, M, N, m, n);

    init_array(&alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

    polybench_start_instruments;
    kernel_symm(alpha, beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(C)));

    POLYBENCH_FREE_ARRAY(C);
    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(B);
    return 0;
}
