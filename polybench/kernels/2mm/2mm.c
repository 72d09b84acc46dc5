/* 2mm.c: two matrix products, tmp := alpha*A*B, D := beta*D + tmp*C.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "2mm.h"

/* A is NI x NK, B is NK x NJ, C is NJ x NL, D is NI x NL. */
static void init_array(DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                       DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj),
                       DATA_TYPE POLYBENCH_2D(C, NJ, NL, nj, nl),
                       DATA_TYPE POLYBENCH_2D(D, NI, NL, ni, nl))
{
    int i, j;

    *alpha = SCALAR_VAL(1.5);
    *beta = SCALAR_VAL(1.25);
    for (i = 0; i < NI; i++)
        for (j = 0; j < NK; j++)
            A[i][j] = (DATA_TYPE)((i * j + 1) % NI) / NI;
    for (i = 0; i < NK; i++)
        for (j = 0; j < NJ; j++)
            B[i][j] = (DATA_TYPE)((i * (j + 1) + 2) % NJ) / NJ;
    for (i = 0; i < NJ; i++)
        for (j = 0; j < NL; j++)
            C[i][j] = (DATA_TYPE)((i * (j + 3) + 1) % NL) / NL;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NL; j++)
            D[i][j] = (DATA_TYPE)((i * (j + 2) + 3) % NK) / NK;
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(tmp, NI, NJ, ni, nj),
                        DATA_TYPE POLYBENCH_2D(D, NI, NL, ni, nl))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("tmp");
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++) {
            polybench_dump_wrap((long)i * NJ + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, tmp[i][j]);
        }
    POLYBENCH_DUMP_END("tmp");
    POLYBENCH_DUMP_BEGIN("D");
    for (i = 0; i < NI; i++)
        for (j = 0; j < NL; j++) {
            polybench_dump_wrap((long)i * NL + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, D[i][j]);
        }
    POLYBENCH_DUMP_END("D");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_2mm(DATA_TYPE alpha, DATA_TYPE beta,
                       DATA_TYPE POLYBENCH_2D(tmp, NI, NJ, ni, nj),
                       DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                       DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj),
                       DATA_TYPE POLYBENCH_2D(C, NJ, NL, nj, nl),
                       DATA_TYPE POLYBENCH_2D(D, NI, NL, ni, nl))
{
    int i, j, k;

#pragma scop
    /* tmp := alpha * A * B */
    for (i = 0; i < _PB_NI; i++)
        for (j = 0; j < _PB_NJ; j++) {
            tmp[i][j] = SCALAR_VAL(0.0);
            for (k = 0; k < _PB_NK; k++)
                tmp[i][j] += alpha * A[i][k] * B[k][j];
        }
    /* D := beta * D + tmp * C */
    for (i = 0; i < _PB_NI; i++)
        for (j = 0; j < _PB_NL; j++) {
            D[i][j] *= beta;
            for (k = 0; k < _PB_NJ; k++)
                D[i][j] += tmp[i][k] * C[k][j];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE alpha;
    DATA_TYPE beta;
    POLYBENCH_2D_ARRAY_DECL(tmp, DATA_TYPE, NI, NJ, ni, nj);
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
    POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);
    POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NJ, NL, nj, nl);
    POLYBENCH_2D_ARRAY_DECL(D, DATA_TYPE, NI, NL, ni, nl);

    init_array(&alpha, &beta, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C),
               POLYBENCH_ARRAY(D));

    polybench_start_instruments;
    kernel_2mm(alpha, beta, POLYBENCH_ARRAY(tmp), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B),
               POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(D));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(tmp), POLYBENCH_ARRAY(D)));

    POLYBENCH_FREE_ARRAY(tmp);
    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(B);
    POLYBENCH_FREE_ARRAY(C);
    POLYBENCH_FREE_ARRAY(D);
    return 0;
}
