/* wavefront.c: a 2-D wavefront on streamrt through the C ABI (used by tests/c_abi.rs).
 *
 * Usage: wavefront N M. Task (i, j) computes v[i][j] = (v[i-1][j] + v[i][j-1] + 1) mod P and
 * waits for the tokens (i-1, j) and (i, j-1). Graph 1 spawns in row-major order; graph 2 in
 * reverse order (every input names a later-spawned producer) into w, plus a 0-dimensional task
 * that sums w after the last tile. Each task checks that its inputs' tasks had finished.
 * Prints "ok <v[N-1][M-1]> <sum of w mod P>" when all checks pass, else "bad ..." and exits 1.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "streamrt.h"

#define P 1000003L

struct grid {
    long n, m;
    long *val;
    atomic_int *done;
    atomic_int *violations;
    long sum;
};

static void tile(const void *env, const long *c) {
    const struct grid *g = env;
    long i = c[0], j = c[1], up = 0, left = 0;
    if (i > 0) {
        if (!atomic_load_explicit(&g->done[(i - 1) * g->m + j], memory_order_acquire))
            atomic_fetch_add(g->violations, 1);
        up = g->val[(i - 1) * g->m + j];
    }
    if (j > 0) {
        if (!atomic_load_explicit(&g->done[i * g->m + j - 1], memory_order_acquire))
            atomic_fetch_add(g->violations, 1);
        left = g->val[i * g->m + j - 1];
    }
    g->val[i * g->m + j] = (up + left + 1) % P;
    atomic_store_explicit(&g->done[i * g->m + j], 1, memory_order_release);
}

static void sum_all(const void *env, const long *c) {
    struct grid *g = (struct grid *)env;
    (void)c;
    long s = 0;
    for (long k = 0; k < g->n * g->m; k++)
        s = (s + g->val[k]) % P;
    g->sum = s;
}

static void spawn_tile(tf_graph *tg, int w, long i, long j, struct grid *g) {
    long key[2] = {i, j};
    tf_task_begin(tg, w, key, tile, g);
    if (i > 0) {
        long up[2] = {i - 1, j};
        tf_task_input(tg, w, up);
    }
    if (j > 0) {
        long left[2] = {i, j - 1};
        tf_task_input(tg, w, left);
        tf_task_input(tg, w, left); /* the same token twice waits once */
    }
    tf_task_end(tg);
}

static void init(struct grid *g, long n, long m, atomic_int *violations) {
    g->n = n;
    g->m = m;
    g->val = calloc((size_t)(n * m), sizeof(long));
    g->done = calloc((size_t)(n * m), sizeof(atomic_int));
    g->violations = violations;
    g->sum = -1;
    if (!g->val || !g->done) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: wavefront N M\n");
        return 2;
    }
    long n = atol(argv[1]), m = atol(argv[2]);
    atomic_int violations = 0;
    struct grid v, w;
    init(&v, n, m, &violations);
    init(&w, n, m, &violations);
    long lo[2] = {0, 0}, hi[2] = {n - 1, m - 1};

    /* As generated programs do before main: start the workers early; a second call does nothing. */
    tf_runtime_start();
    tf_runtime_start();
    tf_graph *g1 = tf_graph_begin();
    int s1 = tf_stream_new(g1, "V", 2, lo, hi);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            spawn_tile(g1, s1, i, j, &v);
    tf_graph_end(g1);

    tf_graph *g2 = tf_graph_begin();
    int sum_stream = tf_stream_new(g2, "Sum", 0, NULL, NULL);
    int s2 = tf_stream_new(g2, "W", 2, lo, hi);
    tf_task_begin(g2, sum_stream, NULL, sum_all, &w);
    long last[2] = {n - 1, m - 1};
    tf_task_input(g2, s2, last);
    tf_task_end(g2);
    for (long i = n - 1; i >= 0; i--)
        for (long j = m - 1; j >= 0; j--)
            spawn_tile(g2, s2, i, j, &w);
    tf_graph_end(g2);

    long differ = 0;
    for (long k = 0; k < n * m; k++)
        differ += v.val[k] != w.val[k] || !atomic_load(&v.done[k]) || !atomic_load(&w.done[k]);
    if (differ || atomic_load(&violations) || w.sum < 0) {
        printf("bad: %ld cells differ, %d order violations, sum %ld\n", differ,
               atomic_load(&violations), w.sum);
        return 1;
    }
    printf("ok %ld %ld\n", v.val[n * m - 1], w.sum);
    free(v.val);
    free(v.done);
    free(w.val);
    free(w.done);
    return 0;
}
