/* dag_bench.c: the DAGs of `make bench-runtime`, on streamrt (C ABI) or on OpenMP tasks.
 *
 * Compiled twice by benches/runtime.rs from this one source, so that both runtimes see the same
 * program: with -DUSE_STREAMRT against streamrt.h and libstreamrt.a, and with -fopenmp
 * -DUSE_OPENMP (gcc's libgomp, or LLVM's libomp through clang). Each task body only marks its
 * cell done; the program checks afterwards that every task ran.
 *
 * Usage: dag_bench KIND REPS, KIND one of
 *   wavefront    N x N tasks, task (i, j) waits for (i-1, j) and (i, j-1)           (N = 1000)
 *   broadcast    R rounds of: one root, W tasks waiting for the root, one sink waiting
 *                for the W tasks; each root waits for the previous sink             (R = 200, W = 1000)
 *   independent  T tasks without inputs                                              (T = 1000000)
 * Prints one line per timed repetition after one untimed warm-up: "tasks SECONDS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(USE_STREAMRT)
#include "streamrt.h"
#elif defined(USE_OPENMP)
#include <omp.h>
#else
#error "define USE_STREAMRT or USE_OPENMP"
#endif

enum { WAVE_N = 1000, BCAST_R = 200, BCAST_W = 1000, INDEP_T = 1000000 };

static unsigned char *cells; /* one per task: set by the task body */
static long n_cells;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void reset(long n) {
    n_cells = n;
    memset(cells, 0, (size_t)n);
}

static void check(const char *kind) {
    for (long k = 0; k < n_cells; k++)
        if (cells[k] != 1) {
            fprintf(stderr, "dag_bench %s: task %ld ran %d times\n", kind, k, cells[k]);
            exit(1);
        }
}

#if defined(USE_STREAMRT)

/* The body: env is unused, the key locates the cell. */
static void mark2(const void *env, const long *c) {
    (void)env;
    cells[c[0] * WAVE_N + c[1]] = 1;
}
static void mark_bcast(const void *env, const long *c) {
    (void)env;
    cells[c[0] * (BCAST_W + 2) + c[1]] = 1;
}
static void mark1(const void *env, const long *c) {
    (void)env;
    cells[c[0]] = 1;
}

static void wavefront(void) {
    long lo[2] = {0, 0}, hi[2] = {WAVE_N - 1, WAVE_N - 1};
    tf_graph *g = tf_graph_begin();
    int s = tf_stream_new(g, "wave", 2, lo, hi);
    for (long i = 0; i < WAVE_N; i++)
        for (long j = 0; j < WAVE_N; j++) {
            long key[2] = {i, j};
            tf_task_begin(g, s, key, mark2, NULL);
            if (i > 0) {
                long up[2] = {i - 1, j};
                tf_task_input(g, s, up);
            }
            if (j > 0) {
                long left[2] = {i, j - 1};
                tf_task_input(g, s, left);
            }
            tf_task_end(g);
        }
    tf_graph_end(g);
}

/* Keys (r, 0) root, (r, 1 + w) the W middle tasks, (r, W + 1) the sink of round r. */
static void broadcast(void) {
    long lo[2] = {0, 0}, hi[2] = {BCAST_R - 1, BCAST_W + 1};
    tf_graph *g = tf_graph_begin();
    int s = tf_stream_new(g, "bcast", 2, lo, hi);
    for (long r = 0; r < BCAST_R; r++) {
        long root[2] = {r, 0};
        tf_task_begin(g, s, root, mark_bcast, NULL);
        if (r > 0) {
            long prev[2] = {r - 1, BCAST_W + 1};
            tf_task_input(g, s, prev);
        }
        tf_task_end(g);
        for (long w = 1; w <= BCAST_W; w++) {
            long key[2] = {r, w};
            tf_task_begin(g, s, key, mark_bcast, NULL);
            tf_task_input(g, s, root);
            tf_task_end(g);
        }
        long sink[2] = {r, BCAST_W + 1};
        tf_task_begin(g, s, sink, mark_bcast, NULL);
        for (long w = 1; w <= BCAST_W; w++) {
            long key[2] = {r, w};
            tf_task_input(g, s, key);
        }
        tf_task_end(g);
    }
    tf_graph_end(g);
}

static void independent(void) {
    long lo[1] = {0}, hi[1] = {INDEP_T - 1};
    tf_graph *g = tf_graph_begin();
    int s = tf_stream_new(g, "indep", 1, lo, hi);
    for (long t = 0; t < INDEP_T; t++) {
        long key[1] = {t};
        tf_task_begin(g, s, key, mark1, NULL);
        tf_task_end(g);
    }
    tf_graph_end(g);
}

static void warm_up(void) {
    long lo[1] = {0}, hi[1] = {63};
    tf_graph *g = tf_graph_begin();
    int s = tf_stream_new(g, "warm", 1, lo, hi);
    for (long t = 0; t < 64; t++) {
        long key[1] = {t};
        tf_task_begin(g, s, key, mark1, NULL);
        tf_task_end(g);
    }
    tf_graph_end(g);
}

#else /* USE_OPENMP */

/* One dependence object per token; row/column -1 of the wavefront are the padding at index 0. */
static char *tok;

static void wavefront(void) {
    const long m = WAVE_N + 1;
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < WAVE_N; i++)
        for (long j = 0; j < WAVE_N; j++) {
#pragma omp task depend(in : tok[i * m + j + 1], tok[(i + 1) * m + j]) \
    depend(out : tok[(i + 1) * m + j + 1])
            cells[i * WAVE_N + j] = 1;
        }
}

static void broadcast(void) {
    const long m = BCAST_W + 2;
#pragma omp parallel
#pragma omp single
    for (long r = 0; r < BCAST_R; r++) {
        char *row = tok + r * m, *prev = r > 0 ? tok + (r - 1) * m : tok + BCAST_R * m;
#pragma omp task depend(in : prev[BCAST_W + 1]) depend(out : row[0])
        cells[r * m] = 1;
        for (long w = 1; w <= BCAST_W; w++) {
#pragma omp task depend(in : row[0]) depend(out : row[w])
            cells[r * m + w] = 1;
        }
#pragma omp task depend(iterator(k = 1 : BCAST_W + 1), in : row[k]) depend(out : row[BCAST_W + 1])
        cells[r * m + BCAST_W + 1] = 1;
    }
}

static void independent(void) {
#pragma omp parallel
#pragma omp single
    for (long t = 0; t < INDEP_T; t++) {
#pragma omp task depend(out : tok[t])
        cells[t] = 1;
    }
}

static void warm_up(void) {
#pragma omp parallel
#pragma omp single
    for (long t = 0; t < 64; t++) {
#pragma omp task depend(out : tok[t])
        cells[t] = 1;
    }
}

#endif

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: dag_bench wavefront|broadcast|independent REPS\n");
        return 2;
    }
    const char *kind = argv[1];
    int reps = atoi(argv[2]);
    void (*run)(void);
    long n;
    if (!strcmp(kind, "wavefront")) {
        run = wavefront;
        n = (long)WAVE_N * WAVE_N;
    } else if (!strcmp(kind, "broadcast")) {
        run = broadcast;
        n = (long)BCAST_R * (BCAST_W + 2);
    } else if (!strcmp(kind, "independent")) {
        run = independent;
        n = INDEP_T;
    } else {
        fprintf(stderr, "dag_bench: unknown kind %s\n", kind);
        return 2;
    }
    long size = n > (WAVE_N + 1L) * (WAVE_N + 1) ? n : (WAVE_N + 1L) * (WAVE_N + 1);
    cells = calloc((size_t)size, 1);
#if defined(USE_OPENMP)
    tok = calloc((size_t)size + BCAST_W + 2, 1);
    if (!tok)
        return 2;
#endif
    if (!cells)
        return 2;
    reset(64);
    warm_up();
    check("warm-up");
    for (int r = 0; r < reps; r++) {
        reset(n);
        double t0 = now();
        run();
        double t1 = now();
        check(kind);
        printf("%ld %.6f\n", n, t1 - t0);
        fflush(stdout);
    }
    return 0;
}
