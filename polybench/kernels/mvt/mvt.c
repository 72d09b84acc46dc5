/* mvt.c: two matrix-vector products with A and its transpose, x1 := x1 + A*y1 and
 * x2 := x2 + A^T*y2.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "mvt.h"

static void init_array(DATA_TYPE POLYBENCH_1D(x1, N, n), DATA_TYPE POLYBENCH_1D(x2, N, n),
                       DATA_TYPE POLYBENCH_1D(y1, N, n), DATA_TYPE POLYBENCH_1D(y2, N, n),
                       DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++) {
        x1[i] = (DATA_TYPE)(i % N) / N;
        x2[i] = (DATA_TYPE)((i + 1) % N) / N;
        y1[i] = (DATA_TYPE)((2 * i + 3) % N) / N;
        y2[i] = (DATA_TYPE)((3 * i + 4) % N) / N;
        for (j = 0; j < N; j++)
            A[i][j] = (DATA_TYPE)((i * j + 2) % N) / N;
    }
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_1D(x1, N, n), DATA_TYPE POLYBENCH_1D(x2, N, n))
{
    int i;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("x1");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x1[i]);
    }
    POLYBENCH_DUMP_END("x1");
    POLYBENCH_DUMP_BEGIN("x2");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x2[i]);
    }
    POLYBENCH_DUMP_END("x2");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_mvt(DATA_TYPE POLYBENCH_1D(x1, N, n), DATA_TYPE POLYBENCH_1D(x2, N, n),
                       DATA_TYPE POLYBENCH_1D(y1, N, n), DATA_TYPE POLYBENCH_1D(y2, N, n),
                       DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

#pragma scop
    for (i = 0; i < _PB_N; i++)
        for (j = 0; j < _PB_N; j++)
            x1[i] = x1[i] + A[i][j] * y1[j];
    for (i = 0; i < _PB_N; i++)
        for (j = 0; j < _PB_N; j++)
            x2[i] = x2[i] + A[j][i] * y2[j];
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);
    POLYBENCH_1D_ARRAY_DECL(x1, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(x2, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(y1, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(y2, DATA_TYPE, N, n);

    init_array(POLYBENCH_ARRAY(x1), POLYBENCH_ARRAY(x2), POLYBENCH_ARRAY(y1), POLYBENCH_ARRAY(y2),
               POLYBENCH_ARRAY(A));

    polybench_start_instruments;
    kernel_mvt(POLYBENCH_ARRAY(x1), POLYBENCH_ARRAY(x2), POLYBENCH_ARRAY(y1), POLYBENCH_ARRAY(y2),
               POLYBENCH_ARRAY(A));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(x1), POLYBENCH_ARRAY(x2)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(x1);
    POLYBENCH_FREE_ARRAY(x2);
    POLYBENCH_FREE_ARRAY(y1);
    POLYBENCH_FREE_ARRAY(y2);
    return 0;
}
