/* durbin.c: Levinson-Durbin recursion: solves the Toeplitz system T y = -r, where T is the
 * symmetric Toeplitz matrix with first column (1, r[0], ..., r[N-2]), one order at a time.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "durbin.h"

/* r[k] = 1 / (k + 2): the sequence 1, 1/2, 1/3, ... is convex and decreasing, so T is positive
 * definite (Polya's criterion) and every reflection coefficient lies in (-1, 1). */
static void init_array(DATA_TYPE POLYBENCH_1D(r, N, n))
{
    int i;

    for (i = 0; i < N; i++)
        r[i] = SCALAR_VAL(1.0) / (DATA_TYPE)(i + 2);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_1D(y, N, n), DATA_TYPE POLYBENCH_1D(z, N, n))
{
    int i;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("y");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y[i]);
    }
    POLYBENCH_DUMP_END("y");
    POLYBENCH_DUMP_BEGIN("z");
    for (i = 0; i < N; i++) {
        polybench_dump_wrap(i);
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, z[i]);
    }
    POLYBENCH_DUMP_END("z");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_durbin(DATA_TYPE POLYBENCH_1D(r, N, n), DATA_TYPE POLYBENCH_1D(y, N, n),
                          DATA_TYPE POLYBENCH_1D(z, N, n))
{
    int i, k;
    DATA_TYPE alpha, beta, sum;

#pragma scop
    y[0] = -r[0];
    beta = SCALAR_VAL(1.0);
    alpha = -r[0];
    for (k = 1; k < _PB_N; k++) {
        beta = (SCALAR_VAL(1.0) - alpha * alpha) * beta;
        sum = SCALAR_VAL(0.0);
        for (i = 0; i < k; i++)
            sum += r[k - i - 1] * y[i];
        alpha = -(r[k] + sum) / beta;
        for (i = 0; i < k; i++)
            z[i] = y[i] + alpha * y[k - i - 1];
        for (i = 0; i < k; i++)
            y[i] = z[i];
        y[k] = alpha;
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    POLYBENCH_1D_ARRAY_DECL(r, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(y, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(z, DATA_TYPE, N, n);

    init_array(POLYBENCH_ARRAY(r));

    polybench_start_instruments;
    kernel_durbin(POLYBENCH_ARRAY(r), POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(z));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(z)));

    POLYBENCH_FREE_ARRAY(r);
    POLYBENCH_FREE_ARRAY(y);
    POLYBENCH_FREE_ARRAY(z);
    return 0;
}
