/* cholesky.c: Cholesky factorization A = L * L^T of a symmetric positive-definite matrix; L
 * overwrites the lower triangle of A (the strict upper triangle is left as it was).
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "cholesky.h"

/* A symmetric matrix with diagonal 2 and off-diagonal entries in (0, 1/N]: strictly diagonally
 * dominant with a positive diagonal, hence positive definite, so every square root taken by
 * the factorization has a positive argument. */
static void init_array(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = i == j ? SCALAR_VAL(2.0) : (DATA_TYPE)((i + j) % 7 + 1) / (8 * N);
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

static void kernel_cholesky(DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
    int i, j, k;

#pragma scop
    for (i = 0; i < _PB_N; i++) {
        /* Row i of L left of the diagonal. */
        for (j = 0; j < i; j++) {
            for (k = 0; k < j; k++)
                A[i][j] -= A[i][k] * A[j][k];
            A[i][j] /= A[j][j];
        }
        /* The diagonal entry. */
        for (k = 0; k < i; k++)
            A[i][i] -= A[i][k] * A[i][k];
        A[i][i] = SQRT_FUN(A[i][i]);
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);

    init_array(POLYBENCH_ARRAY(A));

    polybench_start_instruments;
    kernel_cholesky(POLYBENCH_ARRAY(A));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A)));

    POLYBENCH_FREE_ARRAY(A);
    return 0;
}
