/* seidel-2d.c: 2-D Gauss-Seidel stencil; each time step replaces every interior point of A, in
 * place and in row-major order, by the average of its 3 x 3 neighbourhood.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "seidel-2d.h"

static void init_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (DATA_TYPE)((i + 1) * (j + 3) % N + 2 * i) / N;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("A");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
        }
    POLYBENCH_DUMP_END("A");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_seidel_2d(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int t, i, j;

#pragma scop
    for (t = 0; t < _PB_TSTEPS; t++)
        for (i = 1; i < _PB_N - 1; i++)
            for (j = 1; j < _PB_N - 1; j++)
                A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] +
                           A[i][j - 1] + A[i][j] + A[i][j + 1] +
                           A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) /
                          SCALAR_VAL(9.0);
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);

    init_array(POLYBENCH_ARRAY(A));

    polybench_start_instruments;
    kernel_seidel_2d(POLYBENCH_ARRAY(A));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A)));

    POLYBENCH_FREE_ARRAY(A);
    return 0;
}
