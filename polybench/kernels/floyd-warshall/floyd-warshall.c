/* floyd-warshall.c: all-pairs shortest paths; path[i][j] is the length of the shortest path from
 * i to j once every vertex k has been allowed as an intermediate.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "floyd-warshall.h"

/* Edge lengths 1..7; some pairs have no edge, written as the large length 999. */
static void init_array(DATA_TYPE POLYBENCH_2D(path, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            if (i == j)
                path[i][j] = 0;
            else if ((3 * i + 5 * j) % 11 == 0 || (i + 2 * j) % 7 == 0)
                path[i][j] = 999;
            else
                path[i][j] = (DATA_TYPE)((i * j + i + 2 * j) % 7 + 1);
        }
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(path, N, N, n, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("path");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, path[i][j]);
        }
    POLYBENCH_DUMP_END("path");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_floyd_warshall(DATA_TYPE POLYBENCH_2D(path, N, N, n, n))
{
    int i, j, k;

#pragma scop
    for (k = 0; k < _PB_N; k++)
        for (i = 0; i < _PB_N; i++)
            for (j = 0; j < _PB_N; j++)
                path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j]
                                                                  : path[i][k] + path[k][j];
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(path, DATA_TYPE, N, N, n, n);

    init_array(POLYBENCH_ARRAY(path));

    polybench_start_instruments;
    kernel_floyd_warshall(POLYBENCH_ARRAY(path));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(path)));

    POLYBENCH_FREE_ARRAY(path);
    return 0;
}
