/* ludcmp.c: solves A x = b: LU factorization of A without pivoting (in place, through the
 * scalar w), then forward substitution L y = b and back substitution U x = y.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "ludcmp.h"

/* A as in lu: strictly diagonally dominant, so no pivoting is needed. */
static void init_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n), DATA_TYPE POLYBENCH_1D(b, N, n),
                       DATA_TYPE POLYBENCH_1D(x, N, n), DATA_TYPE POLYBENCH_1D(y, N, n))
{
    int i, j;

    for (i = 0; i < N; i++) {
        b[i] = SCALAR_VAL(1.0) + (DATA_TYPE)(i % 6) / 6;
        x[i] = SCALAR_VAL(0.0);
        y[i] = SCALAR_VAL(0.0);
        for (j = 0; j < N; j++)
            A[i][j] = i == j ? SCALAR_VAL(2.0) : (DATA_TYPE)((5 * i + 3 * j) % 8 + 1) / (8 * N);
    }
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                        DATA_TYPE POLYBENCH_1D(y, N, n))
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
    POLYBENCH_DUMP_BEGIN("x");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x[i]);
    }
    POLYBENCH_DUMP_END("x");
    POLYBENCH_DUMP_BEGIN("y");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y[i]);
    }
    POLYBENCH_DUMP_END("y");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_ludcmp(DATA_TYPE POLYBENCH_2D(A, N, N, n, n), DATA_TYPE POLYBENCH_1D(b, N, n),
                          DATA_TYPE POLYBENCH_1D(x, N, n), DATA_TYPE POLYBENCH_1D(y, N, n))
{
    int i, j, k;
    DATA_TYPE w;

#pragma scop
    for (i = 0; i < _PB_N; i++) {
        for (j = 0; j < i; j++) {
            w = A[i][j];
            for (k = 0; k < j; k++)
                w -= A[i][k] * A[k][j];
            A[i][j] = w / A[j][j];
        }
        for (j = i; j < _PB_N; j++) {
            w = A[i][j];
            for (k = 0; k < i; k++)
                w -= A[i][k] * A[k][j];
            A[i][j] = w;
        }
    }
    for (i = 0; i < _PB_N; i++) {
        w = b[i];
        for (j = 0; j < i; j++)
            w -= A[i][j] * y[j];
        y[i] = w;
    }
    for (i = _PB_N - 1; i >= 0; i--) {
        w = y[i];
        for (j = i + 1; j < _PB_N; j++)
            w -= A[i][j] * x[j];
        x[i] = w / A[i][i];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);
    POLYBENCH_1D_ARRAY_DECL(b, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(x, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(y, DATA_TYPE, N, n);

    init_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(b), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(y));

    polybench_start_instruments;
    kernel_ludcmp(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(b), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(y));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(y)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(b);
    POLYBENCH_FREE_ARRAY(x);
    POLYBENCH_FREE_ARRAY(y);
    return 0;
}
