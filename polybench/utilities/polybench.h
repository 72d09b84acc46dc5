/*
 * polybench.h -- tiledflow's support header for kernels in the PolyBench/C 4.2 layout.
 *
 * Header-only: every helper is a static inline function or a macro, so a kernel builds as one
 * C file:   cc -O2 -I polybench/utilities kernel.c -o kernel -lm
 *
 * It provides the interface PolyBench kernels are written against (array parameter and
 * allocation macros, SCALAR_VAL and the math function macros, timing instruments,
 * polybench_prevent_dce and the array dump), with one deliberate difference from upstream:
 * dumped values round-trip exactly (%.17g for double, %.9g for float, %d for int), so two
 * programs can be compared bit for bit. See polybench/kernels/README.md for the dump format.
 *
 * Options (all -D):
 *   POLYBENCH_TIME          time the kernel and print the elapsed seconds on stdout
 *   POLYBENCH_DUMP_ARRAYS   dump every output array on POLYBENCH_DUMP_TARGET (stderr), unless
 *                           the environment variable POLYBENCH_NO_DUMP is set at run time
 *   DATA_TYPE_IS_DOUBLE / DATA_TYPE_IS_FLOAT / DATA_TYPE_IS_INT   element type (in <kernel>.h)
 *   MINI_DATASET ... EXTRALARGE_DATASET, or any size macro (N=37)  problem size (in <kernel>.h)
 */
#ifndef TILEDFLOW_POLYBENCH_H
#define TILEDFLOW_POLYBENCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Kernels mark their loop nests with `#pragma scop` / `#pragma endscop`, which only polyhedral
 * tools read; C compilers would warn about them under -Wall. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#endif

/* ------------------------------------------------------------------------------------------ */
/* Array parameters: `DATA_TYPE POLYBENCH_2D(A, N, M, n, m)` declares `A[N + 0][M + 0]`.       */
/* The compile-time sizes are used so that every access is affine in constants the compiler    */
/* can see; the lower-case run-time sizes are accepted for compatibility and ignored.          */
/* ------------------------------------------------------------------------------------------ */
#define POLYBENCH_1D(var, dim1, ddim1) var[(dim1) + 0]
#define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2) var[(dim1) + 0][(dim2) + 0]
#define POLYBENCH_3D(var, dim1, dim2, dim3, ddim1, ddim2, ddim3) \
    var[(dim1) + 0][(dim2) + 0][(dim3) + 0]
#define POLYBENCH_4D(var, dim1, dim2, dim3, dim4, ddim1, ddim2, ddim3, ddim4) \
    var[(dim1) + 0][(dim2) + 0][(dim3) + 0][(dim4) + 0]

/* ------------------------------------------------------------------------------------------ */
/* Heap arrays. `POLYBENCH_2D_ARRAY_DECL(A, double, N, M, n, m)` declares `A` as a pointer to  */
/* a whole N x M array and allocates it zero-filled; `POLYBENCH_ARRAY(A)` is the array itself  */
/* (it decays to a pointer to its first row when passed to a POLYBENCH_2D parameter).         */
/* ------------------------------------------------------------------------------------------ */

/* Allocates `n_elems` elements of `elem_size` bytes, zero-filled; exits with a message if the
 * memory is not available (a benchmark cannot do anything useful without its arrays). */
static inline void *polybench_alloc_data(size_t n_elems, size_t elem_size)
{
    void *p = calloc(n_elems == 0 ? 1 : n_elems, elem_size == 0 ? 1 : elem_size);
    if (p == NULL) {
        fprintf(stderr, "[PolyBench] cannot allocate %zu elements of %zu bytes\n", n_elems,
                elem_size);
        exit(1);
    }
    return p;
}

#define POLYBENCH_1D_ARRAY_DECL(var, type, dim1, ddim1) \
    type(*var)[(dim1) + 0] =                            \
        (type(*)[(dim1) + 0])polybench_alloc_data((size_t)(dim1), sizeof(type))
#define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2) \
    type(*var)[(dim1) + 0][(dim2) + 0] =                              \
        (type(*)[(dim1) + 0][(dim2) + 0])polybench_alloc_data(        \
            (size_t)(dim1) * (size_t)(dim2), sizeof(type))
#define POLYBENCH_3D_ARRAY_DECL(var, type, dim1, dim2, dim3, ddim1, ddim2, ddim3) \
    type(*var)[(dim1) + 0][(dim2) + 0][(dim3) + 0] =                               \
        (type(*)[(dim1) + 0][(dim2) + 0][(dim3) + 0])polybench_alloc_data(         \
            (size_t)(dim1) * (size_t)(dim2) * (size_t)(dim3), sizeof(type))
#define POLYBENCH_ARRAY(var) (*(var))
#define POLYBENCH_FREE_ARRAY(var) free((void *)(var))

/* ------------------------------------------------------------------------------------------ */
/* Timing. With -DPOLYBENCH_TIME, start/stop read a monotonic-enough wall clock and print      */
/* writes the elapsed seconds ("%0.6f\n") on stdout; otherwise all three expand to nothing.    */
/* ------------------------------------------------------------------------------------------ */

/* Current time in seconds. */
static inline double polybench_now(void)
{
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && defined(TIME_UTC)
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) == TIME_UTC)
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1.0e-9;
#endif
    return (double)clock() / (double)CLOCKS_PER_SEC;
}

/* The timer's two readings: [0] at start, [1] at stop. */
static inline double *polybench_timer_slots(void)
{
    static double slots[2];
    return slots;
}

static inline void polybench_timer_start(void) { polybench_timer_slots()[0] = polybench_now(); }
static inline void polybench_timer_stop(void) { polybench_timer_slots()[1] = polybench_now(); }
static inline void polybench_timer_print(void)
{
    printf("%0.6f\n", polybench_timer_slots()[1] - polybench_timer_slots()[0]);
    fflush(stdout);
}

#ifdef POLYBENCH_TIME
#define polybench_start_instruments polybench_timer_start()
#define polybench_stop_instruments polybench_timer_stop()
#define polybench_print_instruments polybench_timer_print()
#else
#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments
#endif

/* ------------------------------------------------------------------------------------------ */
/* Dead-code prevention and the dump.                                                          */
/* `polybench_prevent_dce(print_array(...));` inside `main(int argc, char **argv)` prints with  */
/* -DPOLYBENCH_DUMP_ARRAYS unless the environment variable POLYBENCH_NO_DUMP is set (the        */
/* PolyBench runner times the very program it verified, without writing its arrays again);     */
/* otherwise it prints only under a condition the compiler cannot decide (it never holds in     */
/* practice), so the results stay live.                                                         */
/* ------------------------------------------------------------------------------------------ */
#ifdef POLYBENCH_DUMP_ARRAYS
#define polybench_prevent_dce(func)                \
    do {                                           \
        (void)argc;                                \
        (void)argv;                                \
        if (getenv("POLYBENCH_NO_DUMP") == NULL)   \
            func;                                  \
    } while (0)
#else
#define polybench_prevent_dce(func)                       \
    do {                                                  \
        if (argc > 42 && strcmp(argv[0], "") == 0) func; \
    } while (0)
#endif

/* Dump format (one value per whitespace-separated token, exact round trip):
 *   ==BEGIN DUMP_ARRAYS==
 *   begin dump: A
 *   v0 v1 ... (20 per line)
 *   end   dump: A
 *   ...
 *   ==END   DUMP_ARRAYS==
 */
#define POLYBENCH_DUMP_TARGET stderr
#define POLYBENCH_DUMP_START fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_FINISH fprintf(POLYBENCH_DUMP_TARGET, "==END   DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_BEGIN(s) fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s\n", s)
#define POLYBENCH_DUMP_END(s) fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", s)

/* Called before writing the value of flat index `idx` of an array: starts a new line every 20
 * values. DATA_PRINTF_MODIFIER ends with a space, so values never run together. */
static inline void polybench_dump_wrap(long idx)
{
    if (idx > 0 && idx % 20 == 0)
        fputc('\n', POLYBENCH_DUMP_TARGET);
}

#endif /* TILEDFLOW_POLYBENCH_H */
