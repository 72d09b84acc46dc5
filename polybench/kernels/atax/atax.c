/* atax.c: y := A^T * (A * x), with tmp := A * x.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "atax.h"

/* A is M x N, x and y have N elements, tmp has M. */
static void init_array(DATA_TYPE POLYBENCH_2D(A, M, N, m, n), DATA_TYPE POLYBENCH_1D(x, N, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        x[i] = SCALAR_VAL(1.0) + (DATA_TYPE)i / N;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (DATA_TYPE)((i + 2 * j) % N) / (5 * M);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_1D(y, N, n), DATA_TYPE POLYBENCH_1D(tmp, M, m))
{
    int i;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("y");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y[i]);
    }
    POLYBENCH_DUMP_END("y");
    POLYBENCH_DUMP_BEGIN("tmp");
    for (i = 0; i < M; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, tmp[i]);
    }
    POLYBENCH_DUMP_END("tmp");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_atax(DATA_TYPE POLYBENCH_2D(A, M, N, m, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                        DATA_TYPE POLYBENCH_1D(y, N, n), DATA_TYPE POLYBENCH_1D(tmp, M, m))
{
    int i, j;

#pragma scop
    for (i = 0; i < _PB_N; i++)
        y[i] = SCALAR_VAL(0.0);
    for (i = 0; i < _PB_M; i++) {
        tmp[i] = SCALAR_VAL(0.0);
        for (j = 0; j < _PB_N; j++)
            tmp[i] = tmp[i] + A[i][j] * x[j];
        for (j = 0; j < _PB_N; j++)
            y[j] = y[j] + A[i][j] * tmp[i];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, N, m, n);
    POLYBENCH_1D_ARRAY_DECL(x, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(y, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(tmp, DATA_TYPE, M, m);

    init_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x));

    polybench_start_instruments;
    kernel_atax(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(tmp));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(tmp)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(x);
    POLYBENCH_FREE_ARRAY(y);
    POLYBENCH_FREE_ARRAY(tmp);
    return 0;
}
