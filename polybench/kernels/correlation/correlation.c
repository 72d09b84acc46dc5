/* correlation.c: correlation matrix of M variables observed N times: centre and scale each
 * column of data (mean, standard deviation), then corr := data^T * data.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "correlation.h"

/* data is N x M (one row per observation). */
static void init_array(DATA_TYPE *float_n, DATA_TYPE POLYBENCH_2D(data, N, M, n, m))
{
    int i, j;

    *float_n = (DATA_TYPE)N;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            data[i][j] = (DATA_TYPE)((i * (j + 1) + 3 * j) % N) / N + (DATA_TYPE)j / M;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(corr, M, M, m, m), DATA_TYPE POLYBENCH_1D(mean, M, m),
                        DATA_TYPE POLYBENCH_1D(stddev, M, m),
                        DATA_TYPE POLYBENCH_2D(data, N, M, n, m))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("corr");
    for (i = 0; i < M; i++)
        for (j = 0; j < M; j++) {
            polybench_dump_wrap((long)i * M + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, corr[i][j]);
        }
    POLYBENCH_DUMP_END("corr");
    POLYBENCH_DUMP_BEGIN("mean");
    for (i = 0; i < M; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, mean[i]);
    }
    POLYBENCH_DUMP_END("mean");
    POLYBENCH_DUMP_BEGIN("stddev");
    for (i = 0; i < M; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, stddev[i]);
    }
    POLYBENCH_DUMP_END("stddev");
    POLYBENCH_DUMP_BEGIN("data");
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++) {
            polybench_dump_wrap((long)i * M + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, data[i][j]);
        }
    POLYBENCH_DUMP_END("data");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_correlation(DATA_TYPE float_n, DATA_TYPE POLYBENCH_2D(data, N, M, n, m),
                               DATA_TYPE POLYBENCH_2D(corr, M, M, m, m),
                               DATA_TYPE POLYBENCH_1D(mean, M, m),
                               DATA_TYPE POLYBENCH_1D(stddev, M, m))
{
    int i, j, k;
    /* A standard deviation this small is treated as 1 (a constant column). */
    DATA_TYPE eps = SCALAR_VAL(0.1);

#pragma scop
    for (j = 0; j < _PB_M; j++) {
        mean[j] = SCALAR_VAL(0.0);
        for (i = 0; i < _PB_N; i++)
            mean[j] += data[i][j];
        mean[j] /= float_n;
    }
    for (j = 0; j < _PB_M; j++) {
        stddev[j] = SCALAR_VAL(0.0);
        for (i = 0; i < _PB_N; i++)
            stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
        stddev[j] /= float_n;
        stddev[j] = SQRT_FUN(stddev[j]);
        stddev[j] = stddev[j] <= eps ? SCALAR_VAL(1.0) : stddev[j];
    }
    for (i = 0; i < _PB_N; i++)
        for (j = 0; j < _PB_M; j++) {
            data[i][j] -= mean[j];
            data[i][j] /= SQRT_FUN(float_n) * stddev[j];
        }
    for (i = 0; i < _PB_M; i++) {
        corr[i][i] = SCALAR_VAL(1.0);
        for (j = i + 1; j < _PB_M; j++) {
            corr[i][j] = SCALAR_VAL(0.0);
            for (k = 0; k < _PB_N; k++)
                corr[i][j] += data[k][i] * data[k][j];
            corr[j][i] = corr[i][j];
        }
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE float_n;
    POLYBENCH_2D_ARRAY_DECL(data, DATA_TYPE, N, M, n, m);
    POLYBENCH_2D_ARRAY_DECL(corr, DATA_TYPE, M, M, m, m);
    POLYBENCH_1D_ARRAY_DECL(mean, DATA_TYPE, M, m);
    POLYBENCH_1D_ARRAY_DECL(stddev, DATA_TYPE, M, m);

    init_array(&float_n, POLYBENCH_ARRAY(data));

    polybench_start_instruments;
    kernel_correlation(float_n, POLYBENCH_ARRAY(data), POLYBENCH_ARRAY(corr), POLYBENCH_ARRAY(mean),
                       POLYBENCH_ARRAY(stddev));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(corr), POLYBENCH_ARRAY(mean),
                                      POLYBENCH_ARRAY(stddev), POLYBENCH_ARRAY(data)));

    POLYBENCH_FREE_ARRAY(data);
    POLYBENCH_FREE_ARRAY(corr);
    POLYBENCH_FREE_ARRAY(mean);
    POLYBENCH_FREE_ARRAY(stddev);
    return 0;
}
