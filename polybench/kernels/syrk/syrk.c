/* syrk.c: symmetric rank-k update of the lower triangle of the N x N matrix C,
 * C := alpha*A*A^T + beta*C, with A N x M.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "syrk.h"

static void init_array(DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
    int i, j;

    *alpha = SCALAR_VAL(1.5);
    *beta = SCALAR_VAL(1.25);
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            A[i][j] = (DATA_TYPE)((i * (j + 1) + 1) % N) / N;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            C[i][j] = (DATA_TYPE)((i * (j + 3) + 2) % M) / M;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(C, N, N, n, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("C");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
        }
    POLYBENCH_DUMP_END("C");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_syrk(DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                        DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
    int i, j, k;

#pragma scop
    for (i = 0; i < _PB_N; i++) {
        for (j = 0; j <= i; j++)
            C[i][j] *= beta;
        for (k = 0; k < _PB_M; k++)
            for (j = 0; j <= i; j++)
                C[i][j] += alpha * A[i][k] * A[j][k];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE alpha;
    DATA_TYPE beta;
    POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, N, N, n, n);
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, M, n, m);

    init_array(&alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));

    polybench_start_instruments;
    kernel_syrk(alpha, beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(C)));

    POLYBENCH_FREE_ARRAY(C);
    POLYBENCH_FREE_ARRAY(A);
    return 0;
}
