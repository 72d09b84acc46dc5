/* trisolv.c: forward substitution, solves L x = b for the lower triangular N x N matrix L.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "trisolv.h"

/* Diagonal 2, strictly lower entries in (0, 1/N], upper triangle zero: well conditioned. */
static void init_array(DATA_TYPE POLYBENCH_2D(L, N, N, n, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                       DATA_TYPE POLYBENCH_1D(b, N, n))
{
    int i, j;

    for (i = 0; i < N; i++) {
        x[i] = SCALAR_VAL(0.0);
        b[i] = SCALAR_VAL(1.0) + (DATA_TYPE)(i % 7) / 7;
        for (j = 0; j < N; j++)
            L[i][j] = i == j  ? SCALAR_VAL(2.0)
                      : j < i ? (DATA_TYPE)((i + 2 * j) % 5 + 1) / (5 * N)
                              : SCALAR_VAL(0.0);
    }
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_1D(x, N, n))
{
    int i;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("x");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x[i]);
    }
    POLYBENCH_DUMP_END("x");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_trisolv(DATA_TYPE POLYBENCH_2D(L, N, N, n, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                           DATA_TYPE POLYBENCH_1D(b, N, n))
{
    int i, j;

#pragma scop
    for (i = 0; i < _PB_N; i++) {
        x[i] = b[i];
        for (j = 0; j < i; j++)
            x[i] -= L[i][j] * x[j];
        x[i] = x[i] / L[i][i];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(L, DATA_TYPE, N, N, n, n);
    POLYBENCH_1D_ARRAY_DECL(x, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(b, DATA_TYPE, N, n);

    init_array(POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(b));

    polybench_start_instruments;
    kernel_trisolv(POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(b));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(x)));

    POLYBENCH_FREE_ARRAY(L);
    POLYBENCH_FREE_ARRAY(x);
    POLYBENCH_FREE_ARRAY(b);
    return 0;
}
