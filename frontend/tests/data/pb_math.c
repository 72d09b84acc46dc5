/* A PolyBench-style kernel whose statements use every math macro of the kernel headers
 * (SCALAR_VAL, SQRT_FUN, EXP_FUN, POW_FUN), and the bound macros in a subscript. */
#include <polybench.h>
#include "correlation.h"

static void kernel(DATA_TYPE A[N][M], DATA_TYPE B[N][M], DATA_TYPE x)
{
    int i, j;
#pragma scop
    for (i = 0; i < _PB_N; i++)
        for (j = 0; j < _PB_M; j++)
            B[i][j] = SQRT_FUN(A[_PB_N - 1 - i][j]) + EXP_FUN(x) * POW_FUN(A[i][_PB_M - 1], SCALAR_VAL(2.0));
#pragma endscop
}
