/* lu.c: LU factorization A = L * U without pivoting, in place: U overwrites the upper triangle
 * of A, L (unit diagonal, not stored) the strict lower triangle.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "lu.h"

/* Diagonal 2, off-diagonal entries in (0, 1/N]: strictly diagonally dominant, so elimination
 * without pivoting never meets a zero (or small) pivot. */
static void init_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = i == j ? SCALAR_VAL(2.0) : (DATA_TYPE)((3 * i + 5 * j) % 8 + 1) / (8 * N);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("A");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
        }
    POLYBENCH_DUMP_END("A");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_lu(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j, k;

#pragma scop
    for (i = 0; i < _PB_N; i++) {
        /* Row i of L. */
        for (j = 0; j < i; j++) {
            for (k = 0; k < j; k++)
                A[i][j] -= A[i][k] * A[k][j];
            A[i][j] /= A[j][j];
        }
        /* Row i of U. */
        for (j = i; j < _PB_N; j++)
            for (k = 0; k < i; k++)
                A[i][j] -= A[i][k] * A[k][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);

    init_array(POLYBENCH_ARRAY(A));

    polybench_start_instruments;
    kernel_lu(POLYBENCH_ARRAY(A));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A)));

    POLYBENCH_FREE_ARRAY(A);
    return 0;
}
