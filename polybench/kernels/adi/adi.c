/* adi.c: alternating direction implicit integration of the 2-D heat equation on an N x N grid.
 * Each time step solves one tridiagonal system per column (into v), then one per row (back into
 * u), both by forward elimination (coefficients p, right-hand sides q) and back substitution.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "adi.h"

static void init_array(DATA_TYPE POLYBENCH_2D(u, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            u[i][j] = (DATA_TYPE)((3 * i + 7 * j) % N + 1) / N;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(u, N, N, n, n),
                        DATA_TYPE POLYBENCH_2D(v, N, N, n, n),
                        DATA_TYPE POLYBENCH_2D(p, N, N, n, n),
                        DATA_TYPE POLYBENCH_2D(q, N, N, n, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("u");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, u[i][j]);
        }
    POLYBENCH_DUMP_END("u");
    POLYBENCH_DUMP_BEGIN("v");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, v[i][j]);
        }
    POLYBENCH_DUMP_END("v");
    POLYBENCH_DUMP_BEGIN("p");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, p[i][j]);
        }
    POLYBENCH_DUMP_END("p");
    POLYBENCH_DUMP_BEGIN("q");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, q[i][j]);
        }
    POLYBENCH_DUMP_END("q");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_adi(DATA_TYPE POLYBENCH_2D(u, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(v, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(p, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(q, N, N, n, n))
{
    int t, i, j;
    /* Grid spacing, time step and the two diffusion coefficients give the tridiagonal
     * coefficients: (a, b, c) for the column sweep, (d, e, f) for the row sweep. */
    DATA_TYPE dx = SCALAR_VAL(1.0) / (DATA_TYPE)_PB_N;
    DATA_TYPE dy = SCALAR_VAL(1.0) / (DATA_TYPE)_PB_N;
    DATA_TYPE dt = SCALAR_VAL(1.0) / (DATA_TYPE)_PB_TSTEPS;
    DATA_TYPE mul1 = SCALAR_VAL(2.0) * dt / (dx * dx);
    DATA_TYPE mul2 = SCALAR_VAL(1.0) * dt / (dy * dy);
    DATA_TYPE a = -mul1 / SCALAR_VAL(2.0);
    DATA_TYPE b = SCALAR_VAL(1.0) + mul1;
    DATA_TYPE c = a;
    DATA_TYPE d = -mul2 / SCALAR_VAL(2.0);
    DATA_TYPE e = SCALAR_VAL(1.0) + mul2;
    DATA_TYPE f = d;

#pragma scop
    for (t = 1; t <= _PB_TSTEPS; t++) {
        /* Column sweep: implicit along the first index, explicit along the second. */
        for (i = 1; i < _PB_N - 1; i++) {
            v[0][i] = SCALAR_VAL(1.0);
            p[i][0] = SCALAR_VAL(0.0);
            q[i][0] = v[0][i];
            for (j = 1; j < _PB_N - 1; j++) {
                p[i][j] = -c / (a * p[i][j - 1] + b);
                q[i][j] = (-d * u[j][i - 1] + (SCALAR_VAL(1.0) + SCALAR_VAL(2.0) * d) * u[j][i] -
                           f * u[j][i + 1] - a * q[i][j - 1]) /
                          (a * p[i][j - 1] + b);
            }
            v[_PB_N - 1][i] = SCALAR_VAL(1.0);
            for (j = _PB_N - 2; j >= 1; j--)
                v[j][i] = p[i][j] * v[j + 1][i] + q[i][j];
        }
        /* Row sweep: implicit along the second index, explicit along the first. */
        for (i = 1; i < _PB_N - 1; i++) {
            u[i][0] = SCALAR_VAL(1.0);
            p[i][0] = SCALAR_VAL(0.0);
            q[i][0] = u[i][0];
            for (j = 1; j < _PB_N - 1; j++) {
                p[i][j] = -f / (d * p[i][j - 1] + e);
                q[i][j] = (-a * v[i - 1][j] + (SCALAR_VAL(1.0) + SCALAR_VAL(2.0) * a) * v[i][j] -
                           c * v[i + 1][j] - d * q[i][j - 1]) /
                          (d * p[i][j - 1] + e);
            }
            u[i][_PB_N - 1] = SCALAR_VAL(1.0);
            for (j = _PB_N - 2; j >= 1; j--)
                u[i][j] = p[i][j] * u[i][j + 1] + q[i][j];
        }
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(u, DATA_TYPE, N, N, n, n);
    POLYBENCH_2D_ARRAY_DECL(v, DATA_TYPE, N, N, n, n);
    POLYBENCH_2D_ARRAY_DECL(p, DATA_TYPE, N, N, n, n);
    POLYBENCH_2D_ARRAY_DECL(q, DATA_TYPE, N, N, n, n);

    init_array(POLYBENCH_ARRAY(u));

    polybench_start_instruments;
    kernel_adi(POLYBENCH_ARRAY(u), POLYBENCH_ARRAY(v), POLYBENCH_ARRAY(p), POLYBENCH_ARRAY(q));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(u), POLYBENCH_ARRAY(v), POLYBENCH_ARRAY(p),
                                      POLYBENCH_ARRAY(q)));

    POLYBENCH_FREE_ARRAY(u);
    POLYBENCH_FREE_ARRAY(v);
    POLYBENCH_FREE_ARRAY(p);
    POLYBENCH_FREE_ARRAY(q);
    return 0;
}
