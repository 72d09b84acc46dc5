/* doitgen.c: multiresolution analysis kernel: every row A[r][q][*] is replaced by its product
 * with the NP x NP matrix C4, through the temporary sum.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "doitgen.h"

static void init_array(DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                       DATA_TYPE POLYBENCH_2D(C4, NP, NP, np, np))
{
    int i, j, k;

    for (i = 0; i < NR; i++)
        for (j = 0; j < NQ; j++)
            for (k = 0; k < NP; k++)
                A[i][j][k] = (DATA_TYPE)((i * j + 2 * k + 1) % NP) / NP;
    for (i = 0; i < NP; i++)
        for (j = 0; j < NP; j++)
            C4[i][j] = (DATA_TYPE)((i * (j + 1) + 3) % NP) / (2 * NP);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                        DATA_TYPE POLYBENCH_1D(sum, NP, np))
{
    int i, j, k;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("A");
    for (i = 0; i < NR; i++)
        for (j = 0; j < NQ; j++)
            for (k = 0; k < NP; k++) {
                polybench_dump_wrap(((long)i * NQ + j) * NP + k);
                fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j][k]);
            }
    POLYBENCH_DUMP_END("A");
    POLYBENCH_DUMP_BEGIN("sum");
    for (i = 0; i < NP; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, sum[i]);
    }
    POLYBENCH_DUMP_END("sum");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_doitgen(DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                           DATA_TYPE POLYBENCH_2D(C4, NP, NP, np, np),
                           DATA_TYPE POLYBENCH_1D(sum, NP, np))
{
    int r, q, p, s;

#pragma scop
    for (r = 0; r < _PB_NR; r++)
        for (q = 0; q < _PB_NQ; q++) {
            for (p = 0; p < _PB_NP; p++) {
                sum[p] = SCALAR_VAL(0.0);
                for (s = 0; s < _PB_NP; s++)
                    sum[p] += A[r][q][s] * C4[s][p];
            }
            for (p = 0; p < _PB_NP; p++)
                A[r][q][p] = sum[p];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_3D_ARRAY_DECL(A, DATA_TYPE, NR, NQ, NP, nr, nq, np);
    POLYBENCH_2D_ARRAY_DECL(C4, DATA_TYPE, NP, NP, np, np);
    POLYBENCH_1D_ARRAY_DECL(sum, DATA_TYPE, NP, np);

    init_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(C4));

    polybench_start_instruments;
    kernel_doitgen(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(C4), POLYBENCH_ARRAY(sum));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(sum)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(C4);
    POLYBENCH_FREE_ARRAY(sum);
    return 0;
}
