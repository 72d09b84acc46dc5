/* heat-3d.c: explicit scheme for the 3-D heat equation on an N^3 grid: each time step computes
 * B from A's 7-point neighbourhoods on the interior, then A from B.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "heat-3d.h"

static void init_array(DATA_TYPE POLYBENCH_3D(A, N, N, N, n, n, n),
                       DATA_TYPE POLYBENCH_3D(B, N, N, N, n, n, n))
{
    int i, j, k;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++) {
                A[i][j][k] = (DATA_TYPE)((2 * i + 3 * j + 5 * k) % N + 1) * 10 / N;
                B[i][j][k] = A[i][j][k];
            }
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_3D(A, N, N, N, n, n, n),
                        DATA_TYPE POLYBENCH_3D(B, N, N, N, n, n, n))
{
    int i, j, k;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("A");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++) {
                polybench_dump_wrap(((long)i * N + j) * N + k);
                fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j][k]);
            }
    POLYBENCH_DUMP_END("A");
    POLYBENCH_DUMP_BEGIN("B");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++) {
                polybench_dump_wrap(((long)i * N + j) * N + k);
                fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, B[i][j][k]);
            }
    POLYBENCH_DUMP_END("B");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_heat_3d(DATA_TYPE POLYBENCH_3D(A, N, N, N, n, n, n),
                           DATA_TYPE POLYBENCH_3D(B, N, N, N, n, n, n))
{
    int t, i, j, k;

#pragma scop
    for (t = 1; t <= _PB_TSTEPS; t++) {
        for (i = 1; i < _PB_N - 1; i++)
            for (j = 1; j < _PB_N - 1; j++)
                for (k = 1; k < _PB_N - 1; k++)
                    B[i][j][k] =
                        SCALAR_VAL(0.125) * (A[i + 1][j][k] - SCALAR_VAL(2.0) * A[i][j][k] + A[i - 1][j][k]) +
                        SCALAR_VAL(0.125) * (A[i][j + 1][k] - SCALAR_VAL(2.0) * A[i][j][k] + A[i][j - 1][k]) +
                        SCALAR_VAL(0.125) * (A[i][j][k + 1] - SCALAR_VAL(2.0) * A[i][j][k] + A[i][j][k - 1]) +
                        A[i][j][k];
        for (i = 1; i < _PB_N - 1; i++)
            for (j = 1; j < _PB_N - 1; j++)
                for (k = 1; k < _PB_N - 1; k++)
                    A[i][j][k] =
                        SCALAR_VAL(0.125) * (B[i + 1][j][k] - SCALAR_VAL(2.0) * B[i][j][k] + B[i - 1][j][k]) +
                        SCALAR_VAL(0.125) * (B[i][j + 1][k] - SCALAR_VAL(2.0) * B[i][j][k] + B[i][j - 1][k]) +
                        SCALAR_VAL(0.125) * (B[i][j][k + 1] - SCALAR_VAL(2.0) * B[i][j][k] + B[i][j][k - 1]) +
                        B[i][j][k];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_3D_ARRAY_DECL(A, DATA_TYPE, N, N, N, n, n, n);
    POLYBENCH_3D_ARRAY_DECL(B, DATA_TYPE, N, N, N, n, n, n);

    init_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

    polybench_start_instruments;
    kernel_heat_3d(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(B);
    return 0;
}
