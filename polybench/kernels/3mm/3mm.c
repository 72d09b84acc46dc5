/* 3mm.c: three matrix products, E := A*B, F := C*D, G := E*F.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "3mm.h"

/* A is NI x NK, B is NK x NJ, C is NJ x NM, D is NM x NL. */
static void init_array(DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                       DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj),
                       DATA_TYPE POLYBENCH_2D(C, NJ, NM, nj, nm),
                       DATA_TYPE POLYBENCH_2D(D, NM, NL, nm, nl))
{
    int i, j;

    for (i = 0; i < NI; i++)
        for (j = 0; j < NK; j++)
            A[i][j] = (DATA_TYPE)((i * (j + 2) + 1) % NI) / (5 * NI);
    for (i = 0; i < NK; i++)
        for (j = 0; j < NJ; j++)
            B[i][j] = (DATA_TYPE)((i * (j + 1) + 3) % NJ) / (5 * NJ);
    for (i = 0; i < NJ; i++)
        for (j = 0; j < NM; j++)
            C[i][j] = (DATA_TYPE)((i * (j + 4) + 2) % NL) / (5 * NL);
    for (i = 0; i < NM; i++)
        for (j = 0; j < NL; j++)
            D[i][j] = (DATA_TYPE)((i * (j + 3) + 1) % NK) / (5 * NK);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(E, NI, NJ, ni, nj),
                        DATA_TYPE POLYBENCH_2D(F, NJ, NL, nj, nl),
                        DATA_TYPE POLYBENCH_2D(G, NI, NL, ni, nl))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("E");
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++) {
            polybench_dump_wrap((long)i * NJ + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, E[i][j]);
        }
    POLYBENCH_DUMP_END("E");
    POLYBENCH_DUMP_BEGIN("F");
    for (i = 0; i < NJ; i++)
        for (j = 0; j < NL; j++) {
            polybench_dump_wrap((long)i * NL + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, F[i][j]);
        }
    POLYBENCH_DUMP_END("F");
    POLYBENCH_DUMP_BEGIN("G");
    for (i = 0; i < NI; i++)
        for (j = 0; j < NL; j++) {
            polybench_dump_wrap((long)i * NL + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, G[i][j]);
        }
    POLYBENCH_DUMP_END("G");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_3mm(DATA_TYPE POLYBENCH_2D(E, NI, NJ, ni, nj),
                       DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                       DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj),
                       DATA_TYPE POLYBENCH_2D(F, NJ, NL, nj, nl),
                       DATA_TYPE POLYBENCH_2D(C, NJ, NM, nj, nm),
                       DATA_TYPE POLYBENCH_2D(D, NM, NL, nm, nl),
                       DATA_TYPE POLYBENCH_2D(G, NI, NL, ni, nl))
{
    int i, j, k;

#pragma scop
    /* E := A * B */
    for (i = 0; i < _PB_NI; i++)
        for (j = 0; j < _PB_NJ; j++) {
            E[i][j] = SCALAR_VAL(0.0);
            for (k = 0; k < _PB_NK; k++)
                E[i][j] += A[i][k] * B[k][j];
        }
    /* F := C * D */
    for (i = 0; i < _PB_NJ; i++)
        for (j = 0; j < _PB_NL; j++) {
            F[i][j] = SCALAR_VAL(0.0);
            for (k = 0; k < _PB_NM; k++)
                F[i][j] += C[i][k] * D[k][j];
        }
    /* G := E * F */
    for (i = 0; i < _PB_NI; i++)
        for (j = 0; j < _PB_NL; j++) {
            G[i][j] = SCALAR_VAL(0.0);
            for (k = 0; k < _PB_NJ; k++)
                G[i][j] += E[i][k] * F[k][j];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(E, DATA_TYPE, NI, NJ, ni, nj);
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
    POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);
    POLYBENCH_2D_ARRAY_DECL(F, DATA_TYPE, NJ, NL, nj, nl);
    POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NJ, NM, nj, nm);
    POLYBENCH_2D_ARRAY_DECL(D, DATA_TYPE, NM, NL, nm, nl);
    POLYBENCH_2D_ARRAY_DECL(G, DATA_TYPE, NI, NL, ni, nl);

    init_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(D));

    polybench_start_instruments;
    kernel_3mm(POLYBENCH_ARRAY(E), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(F),
               POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(D), POLYBENCH_ARRAY(G));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(E), POLYBENCH_ARRAY(F), POLYBENCH_ARRAY(G)));

    POLYBENCH_FREE_ARRAY(E);
    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(B);
    POLYBENCH_FREE_ARRAY(F);
    POLYBENCH_FREE_ARRAY(C);
    POLYBENCH_FREE_ARRAY(D);
    POLYBENCH_FREE_ARRAY(G);
    return 0;
}
