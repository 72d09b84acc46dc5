/* nussinov.c: Nussinov's dynamic program for RNA secondary structure: table[i][j] is the largest
 * number of complementary base pairs (bases b1, b2 with b1 + b2 == 3) that can be formed, without
 * crossing, within seq[i..j].
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "nussinov.h"

/* Bases are coded 0..3; 0 pairs with 3 and 1 with 2. */
typedef char base;

static void init_array(base POLYBENCH_1D(seq, N, n), DATA_TYPE POLYBENCH_2D(table, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        seq[i] = (base)((7 * i + i / 3 + 1) % 4);
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            table[i][j] = 0;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(table, N, N, n, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("table");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, table[i][j]);
        }
    POLYBENCH_DUMP_END("table");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_nussinov(base POLYBENCH_1D(seq, N, n), DATA_TYPE POLYBENCH_2D(table, N, N, n, n))
{
    int i, j, k;

#pragma scop
    for (i = _PB_N - 1; i >= 0; i--)
        for (j = i + 1; j < _PB_N; j++) {
            /* Leave base j unpaired. */
            table[i][j] = table[i][j] >= table[i][j - 1] ? table[i][j] : table[i][j - 1];
            /* Leave base i unpaired. */
            table[i][j] = table[i][j] >= table[i + 1][j] ? table[i][j] : table[i + 1][j];
            /* Pair i with j (only if something lies between them). */
            if (i < j - 1)
                table[i][j] = table[i][j] >= table[i + 1][j - 1] + (seq[i] + seq[j] == 3 ? 1 : 0)
                                  ? table[i][j]
                                  : table[i + 1][j - 1] + (seq[i] + seq[j] == 3 ? 1 : 0);
            else
                table[i][j] = table[i][j] >= table[i + 1][j - 1] ? table[i][j] : table[i + 1][j - 1];
            /* Split into two independent halves. */
            for (k = i + 1; k < j; k++)
                table[i][j] = table[i][j] >= table[i][k] + table[k + 1][j]
                                  ? table[i][j]
                                  : table[i][k] + table[k + 1][j];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_1D_ARRAY_DECL(seq, base, N, n);
    POLYBENCH_2D_ARRAY_DECL(table, DATA_TYPE, N, N, n, n);

    init_array(POLYBENCH_ARRAY(seq), POLYBENCH_ARRAY(table));

    polybench_start_instruments;
    kernel_nussinov(POLYBENCH_ARRAY(seq), POLYBENCH_ARRAY(table));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(table)));

    POLYBENCH_FREE_ARRAY(seq);
    POLYBENCH_FREE_ARRAY(table);
    return 0;
}
