/* covariance.c: covariance matrix of M variables observed N times: centre each column of data,
 * then cov := data^T * data / (N - 1).
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "covariance.h"

/* data is N x M (one row per observation). */
static void init_array(DATA_TYPE *float_n, DATA_TYPE POLYBENCH_2D(data, N, M, n, m))
{
    int i, j;

    *float_n = (DATA_TYPE)N;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            data[i][j] = (DATA_TYPE)((i * (j + 2) + j) % N) / N + (DATA_TYPE)(i % 3) / M;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(cov, M, M, m, m), DATA_TYPE POLYBENCH_1D(mean, M, m),
                        DATA_TYPE POLYBENCH_2D(data, N, M, n, m))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("cov");
    for (i = 0; i < M; i++)
        for (j = 0; j < M; j++) {
            polybench_dump_wrap((long)i * M + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, cov[i][j]);
        }
    POLYBENCH_DUMP_END("cov");
    POLYBENCH_DUMP_BEGIN("mean");
    for (i = 0; i < M; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, mean[i]);
    }
    POLYBENCH_DUMP_END("mean");
    POLYBENCH_DUMP_BEGIN("data");
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++) {
            polybench_dump_wrap((long)i * M + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, data[i][j]);
        }
    POLYBENCH_DUMP_END("data");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_covariance(DATA_TYPE float_n, DATA_TYPE POLYBENCH_2D(data, N, M, n, m),
                              DATA_TYPE POLYBENCH_2D(cov, M, M, m, m),
                              DATA_TYPE POLYBENCH_1D(mean, M, m))
{
    int i, j, k;

#pragma scop
    for (j = 0; j < _PB_M; j++) {
        mean[j] = SCALAR_VAL(0.0);
        for (i = 0; i < _PB_N; i++)
            mean[j] += data[i][j];
        mean[j] /= float_n;
    }
    for (i = 0; i < _PB_N; i++)
        for (j = 0; j < _PB_M; j++)
            data[i][j] -= mean[j];
    for (i = 0; i < _PB_M; i++)
        for (j = i; j < _PB_M; j++) {
            cov[i][j] = SCALAR_VAL(0.0);
            for (k = 0; k < _PB_N; k++)
                cov[i][j] += data[k][i] * data[k][j];
            cov[i][j] /= float_n - SCALAR_VAL(1.0);
            cov[j][i] = cov[i][j];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE float_n;
    POLYBENCH_2D_ARRAY_DECL(data, DATA_TYPE, N, M, n, m);
    POLYBENCH_2D_ARRAY_DECL(cov, DATA_TYPE, M, M, m, m);
    POLYBENCH_1D_ARRAY_DECL(mean, DATA_TYPE, M, m);

    init_array(&float_n, POLYBENCH_ARRAY(data));

    polybench_start_instruments;
    kernel_covariance(float_n, POLYBENCH_ARRAY(data), POLYBENCH_ARRAY(cov), POLYBENCH_ARRAY(mean));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(cov), POLYBENCH_ARRAY(mean),
                                      POLYBENCH_ARRAY(data)));

    POLYBENCH_FREE_ARRAY(data);
    POLYBENCH_FREE_ARRAY(cov);
    POLYBENCH_FREE_ARRAY(mean);
    return 0;
}
