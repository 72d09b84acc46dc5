/* gramschmidt.c: QR decomposition of the M x N matrix A (M >= N) by modified Gram-Schmidt:
 * Q (M x N) gets orthonormal columns, R (N x N) is upper triangular, A is consumed.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md.
 *
 * Unlike upstream's datasets, ours have M >= N: with fewer rows than columns some column is
 * linearly dependent on the previous ones, its norm vanishes and the division by R[k][k]
 * produces infinities. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "gramschmidt.h"

/* The top N x N block of A is strictly diagonally dominant (diagonal N, other entries below 1),
 * so the columns are linearly independent and every R[k][k] is positive. */
static void init_array(DATA_TYPE POLYBENCH_2D(A, M, N, m, n), DATA_TYPE POLYBENCH_2D(R, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(Q, M, N, m, n))
{
    int i, j;

    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = (DATA_TYPE)((i * (j + 1)) % 7) / 7 + (i == j ? (DATA_TYPE)N : SCALAR_VAL(0.0));
            Q[i][j] = SCALAR_VAL(0.0);
        }
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            R[i][j] = SCALAR_VAL(0.0);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(A, M, N, m, n), DATA_TYPE POLYBENCH_2D(R, N, N, n, n),
                        DATA_TYPE POLYBENCH_2D(Q, M, N, m, n))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("R");
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, R[i][j]);
        }
    POLYBENCH_DUMP_END("R");
    POLYBENCH_DUMP_BEGIN("Q");
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, Q[i][j]);
        }
    POLYBENCH_DUMP_END("Q");
    POLYBENCH_DUMP_BEGIN("A");
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            polybench_dump_wrap((long)i * N + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
        }
    POLYBENCH_DUMP_END("A");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_gramschmidt(DATA_TYPE POLYBENCH_2D(A, M, N, m, n),
                               DATA_TYPE POLYBENCH_2D(R, N, N, n, n),
                               DATA_TYPE POLYBENCH_2D(Q, M, N, m, n))
{
    int i, j, k;
    DATA_TYPE nrm;

#pragma scop
    for (k = 0; k < _PB_N; k++) {
        /* Normalize column k. */
        nrm = SCALAR_VAL(0.0);
        for (i = 0; i < _PB_M; i++)
            nrm += A[i][k] * A[i][k];
        R[k][k] = SQRT_FUN(nrm);
        for (i = 0; i < _PB_M; i++)
            Q[i][k] = A[i][k] / R[k][k];
        /* Remove its component from the later columns. */
        for (j = k + 1; j < _PB_N; j++) {
            R[k][j] = SCALAR_VAL(0.0);
            for (i = 0; i < _PB_M; i++)
                R[k][j] += Q[i][k] * A[i][j];
            for (i = 0; i < _PB_M; i++)
                A[i][j] = A[i][j] - Q[i][k] * R[k][j];
        }
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, N, m, n);
    POLYBENCH_2D_ARRAY_DECL(R, DATA_TYPE, N, N, n, n);
    POLYBENCH_2D_ARRAY_DECL(Q, DATA_TYPE, M, N, m, n);

    init_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(R), POLYBENCH_ARRAY(Q));

    polybench_start_instruments;
    kernel_gramschmidt(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(R), POLYBENCH_ARRAY(Q));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(R), POLYBENCH_ARRAY(Q)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(R);
    POLYBENCH_FREE_ARRAY(Q);
    return 0;
}
