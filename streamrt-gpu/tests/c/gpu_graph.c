/* Launch graphs of the GPU path (tf_gpu_*), run on whatever device tf_gpu_load gives
 * (TILEDFLOW_GPU=emulate in the tests), checked against a CPU computation of the same thing.
 *
 *   gpu_graph wave T W      a T x T wavefront of tiles, each a vector of W values: tile (i, j)
 *                           waits for (i-1, j) and (i, j-1) and makes two ordered launches
 *   gpu_graph diamond       A -> B, C -> D, where A is slow (sleeps 200 ms)
 *   gpu_graph diamond-drop  the same with C's input (A) deliberately left out: on a faithful
 *                           device C then runs before A has written, and the result is wrong
 *   gpu_graph unknown-key   a task waits for a key no task produced (must be a runtime error)
 *   gpu_graph bad-kernel    a launch of kernel 5 of a 1-kernel module (must be a runtime error)
 *   gpu_graph no-emu        TILEDFLOW_GPU=emulate without the kernel's host version (fallback)
 *
 * Prints "ok <checksum> (gpu|cpu)" when the result matches, "mismatch ..." and exits 1 when
 * not. Without a device (tf_gpu_load returns NULL) it computes on the CPU, as a generated
 * program would. It loads the module twice, as two generated files would, to check that the
 * fallback notice is printed once.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamrt.h"

#define P 1000003L

/* dst[x] = (a * s1[x] + b * s2[x] + c + e * x) mod P for x < w, after sleeping delay_ms. */
static const char src[] =
    "extern \"C\" __global__ void lin(long *dst, const long *s1, const long *s2, long a, long b,\n"
    "                                 long c, long e, long w, int delay_ms)\n"
    "{\n"
    "    for (long x = blockIdx.x * (long)blockDim.x + threadIdx.x; x < w;\n"
    "         x += (long)gridDim.x * blockDim.x)\n"
    "        dst[x] = (a * s1[x] + b * s2[x] + c + e * x) % 1000003L;\n"
    "}\n";
static const char *const names[] = {"lin"};

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The host version of `lin`: every block and thread in turn. */
static void emu_lin(const unsigned *grid, const unsigned *block, void **args)
{
    long *dst = *(long **)args[0];
    const long *s1 = *(const long **)args[1];
    const long *s2 = *(const long **)args[2];
    long a = *(long *)args[3], b = *(long *)args[4], c = *(long *)args[5];
    long e = *(long *)args[6], w = *(long *)args[7];
    int delay_ms = *(int *)args[8];
    if (delay_ms > 0)
        sleep_ms(delay_ms);
    for (unsigned bx = 0; bx < grid[0]; bx++)
        for (unsigned tx = 0; tx < block[0]; tx++)
            for (long x = bx * (long)block[0] + tx; x < w; x += (long)grid[0] * block[0])
                dst[x] = (a * s1[x] + b * s2[x] + c + e * x) % P;
}

static const tf_gpu_emu_fn emu[] = {emu_lin};
static const tf_gpu_emu_fn no_emu[] = {NULL};

static void lin_cpu(long *dst, const long *s1, const long *s2, long a, long b, long c, long e, long w)
{
    for (long x = 0; x < w; x++)
        dst[x] = (a * s1[x] + b * s2[x] + c + e * x) % P;
}

/* One launch of `lin`; the argument variables are locals reused by the next call, so the
 * runtime must copy them at the call. */
static void launch_lin(tf_gpu_graph *g, int kernel, long *dst, const long *s1, const long *s2,
                       long a, long b, long c, long e, long w, int delay_ms)
{
    unsigned grid[3] = {(unsigned)((w + 31) / 32 > 4 ? 4 : (w + 31) / 32), 1, 1};
    unsigned block[3] = {32, 1, 1};
    void *args[9] = {&dst, &s1, &s2, &a, &b, &c, &e, &w, &delay_ms};
    size_t sizes[9] = {sizeof dst, sizeof s1, sizeof s2, sizeof a, sizeof b,
                       sizeof c, sizeof e, sizeof w, sizeof delay_ms};
    tf_gpu_launch(g, kernel, grid, block, 9, args, sizes);
    memset(&dst, 0, sizeof dst); /* clobbered at once: only the runtime's copy may be used */
    a = b = c = e = w = -1;
    (void)a, (void)b, (void)c, (void)e, (void)w;
}

static long checksum(const long *v, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s = (s * 31 + v[i]) % P;
    return s;
}

static int compare(const long *got, const long *want, long n, const char *where)
{
    for (long i = 0; i < n; i++)
        if (got[i] != want[i]) {
            printf("mismatch in %s at %ld: %ld instead of %ld\n", where, i, got[i], want[i]);
            return 1;
        }
    return 0;
}

/* Tile (i, j) of the wavefront: v[(i * T + j) * W ...]. */
static int wave(tf_gpu *m, long T, long W)
{
    long n = T * T * W;
    long *v = calloc((size_t)n, sizeof *v), *want = calloc((size_t)n, sizeof *v);
    long *zero = calloc((size_t)W, sizeof *v);
    for (long i = 0; i < T; i++)
        for (long j = 0; j < T; j++) {
            long *t = want + (i * T + j) * W;
            lin_cpu(t, i > 0 ? t - T * W : zero, j > 0 ? t - W : zero, 1, 1, 1, 0, W);
            lin_cpu(t, t, zero, 3, 0, 0, 1, W);
        }
    const char *how = "cpu";
    if (m) {
        how = "gpu";
        long *dv = tf_gpu_copy_in(m, v, (size_t)n * sizeof *v);
        long *dz = tf_gpu_copy_in(m, zero, (size_t)W * sizeof *v);
        tf_gpu_graph *g = tf_gpu_graph_begin(m);
        long lo[2] = {0, 0}, hi[2] = {T - 1, T - 1};
        int s = tf_gpu_stream_new(g, "Tile", 2, lo, hi);
        for (long i = 0; i < T; i++)
            for (long j = 0; j < T; j++) {
                long key[2] = {i, j}, up[2] = {i - 1, j}, left[2] = {i, j - 1};
                long *t = dv + (i * T + j) * W;
                tf_gpu_task_begin(g, s, key);
                if (i > 0)
                    tf_gpu_task_input(g, s, up);
                if (j > 0)
                    tf_gpu_task_input(g, s, left);
                launch_lin(g, 0, t, i > 0 ? t - T * W : dz, j > 0 ? t - W : dz, 1, 1, 1, 0, W, 0);
                launch_lin(g, 0, t, t, dz, 3, 0, 0, 1, W, 0);
                tf_gpu_task_end(g);
            }
        tf_gpu_graph_end(g);
        tf_gpu_copy_out(m, v, dv, (size_t)n * sizeof *v);
        tf_gpu_free(m, dv);
        tf_gpu_free(m, dz);
    } else {
        memcpy(v, want, (size_t)n * sizeof *v);
    }
    int bad = compare(v, want, n, "wave");
    if (!bad)
        printf("ok %ld (%s)\n", checksum(v, n), how);
    free(v), free(want), free(zero);
    return bad;
}

/* d[k * W ...] for k = A, B, C, D. */
static int diamond(tf_gpu *m, long W, int drop)
{
    long *d = calloc((size_t)(4 * W), sizeof *d), *want = calloc((size_t)(4 * W), sizeof *d);
    lin_cpu(want, want, want, 0, 0, 1, 1, W);                /* A: x + 1 */
    lin_cpu(want + W, want, want, 2, 0, 0, 0, W);            /* B: 2 A */
    lin_cpu(want + 2 * W, want, want, 3, 0, 0, 0, W);        /* C: 3 A */
    lin_cpu(want + 3 * W, want + W, want + 2 * W, 1, 1, 0, 0, W); /* D: B + C */
    const char *how = "cpu";
    if (m) {
        how = "gpu";
        long *dd = tf_gpu_copy_in(m, d, (size_t)(4 * W) * sizeof *d);
        tf_gpu_graph *g = tf_gpu_graph_begin(m);
        long lo = 0, hi = 3;
        int s = tf_gpu_stream_new(g, "Node", 1, &lo, &hi);
        long a = 0, b = 1, c = 2, e = 3;
        tf_gpu_task_begin(g, s, &a);
        launch_lin(g, 0, dd, dd, dd, 0, 0, 1, 1, W, 200);
        tf_gpu_task_end(g);
        tf_gpu_task_begin(g, s, &b);
        tf_gpu_task_input(g, s, &a);
        launch_lin(g, 0, dd + W, dd, dd, 2, 0, 0, 0, W, 0);
        tf_gpu_task_end(g);
        tf_gpu_task_begin(g, s, &c);
        if (!drop)
            tf_gpu_task_input(g, s, &a);
        launch_lin(g, 0, dd + 2 * W, dd, dd, 3, 0, 0, 0, W, 0);
        tf_gpu_task_end(g);
        tf_gpu_task_begin(g, s, &e);
        tf_gpu_task_input(g, s, &b);
        tf_gpu_task_input(g, s, &c);
        launch_lin(g, 0, dd + 3 * W, dd + W, dd + 2 * W, 1, 1, 0, 0, W, 0);
        tf_gpu_task_end(g);
        tf_gpu_graph_end(g);
        tf_gpu_copy_out(m, d, dd, (size_t)(4 * W) * sizeof *d);
        tf_gpu_free(m, dd);
    } else {
        memcpy(d, want, (size_t)(4 * W) * sizeof *d);
    }
    int bad = compare(d, want, 4 * W, "diamond");
    if (!bad)
        printf("ok %ld (%s)\n", checksum(d, 4 * W), how);
    free(d), free(want);
    return bad;
}

/* Misuse: ends in a runtime error before returning (or, without a device, does nothing). */
static int misuse(tf_gpu *m, const char *what)
{
    if (!m)
        return 0;
    long *dv = tf_gpu_copy_in(m, NULL, 0);
    tf_gpu_graph *g = tf_gpu_graph_begin(m);
    long lo[2] = {0, 0}, hi[2] = {3, 3}, k00[2] = {0, 0}, k12[2] = {1, 2};
    int s = tf_gpu_stream_new(g, "Tile", 2, lo, hi);
    tf_gpu_task_begin(g, s, k00);
    tf_gpu_task_end(g);
    tf_gpu_task_begin(g, s, k12);
    if (!strcmp(what, "unknown-key")) {
        long k11[2] = {1, 1};
        tf_gpu_task_input(g, s, k11);
    } else {
        launch_lin(g, 5, dv, dv, dv, 0, 0, 0, 0, 0, 0);
    }
    printf("misuse %s was not reported\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "wave";
    const tf_gpu_emu_fn *e = strcmp(mode, "no-emu") ? emu : no_emu;
    tf_gpu *m = tf_gpu_load(src, names, e, 1);
    /* A second module, as a second generated file would load: the notice is not repeated. */
    tf_gpu *m2 = tf_gpu_load(src, names, e, 1);
    if ((m == NULL) != (m2 == NULL)) {
        printf("the two loads disagree\n");
        return 1;
    }
    if (!strcmp(mode, "wave") || !strcmp(mode, "no-emu")) {
        long T = argc > 2 ? atol(argv[2]) : 6, W = argc > 3 ? atol(argv[3]) : 100;
        return wave(m, T, W) | wave(m2, 3, 5);
    }
    if (!strcmp(mode, "diamond") || !strcmp(mode, "diamond-drop"))
        return diamond(m, 1000, !strcmp(mode, "diamond-drop"));
    if (!strcmp(mode, "unknown-key") || !strcmp(mode, "bad-kernel"))
        return misuse(m, mode);
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
