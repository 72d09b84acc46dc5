/* crash.c: a task body that crashes (used by tests/c_abi.rs).
 *
 * Usage: crash segv|fpe|abort. Spawns a 5 x 6 grid of tasks on stream "Crash", each waiting for
 * its left neighbour; task (3, 4) crashes as asked. streamrt must report the task and die of the
 * signal. Prints "survived" and exits 0 if it does not.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamrt.h"

struct how {
    const char *what;
    volatile int *null; /* NULL, not known to the compiler */
    volatile int zero;  /* 0, likewise */
    volatile int seven;
};

static void body(const void *env, const long *c) {
    const struct how *h = env;
    if (c[0] != 3 || c[1] != 4)
        return;
    if (!strcmp(h->what, "segv")) {
        *h->null = 1;
    } else if (!strcmp(h->what, "fpe")) {
        volatile int x = h->seven / h->zero;
        (void)x;
    } else {
        abort();
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: crash segv|fpe|abort\n");
        return 2;
    }
    struct how h = {argv[1], argc == 2 ? NULL : (volatile int *)&h, argc - 2, 7};
    long lo[2] = {0, 0}, hi[2] = {4, 5};
    tf_graph *g = tf_graph_begin();
    int s = tf_stream_new(g, "Crash", 2, lo, hi);
    for (long i = 0; i <= 4; i++)
        for (long j = 0; j <= 5; j++) {
            long key[2] = {i, j};
            tf_task_begin(g, s, key, body, &h);
            if (j > 0) {
                long left[2] = {i, j - 1};
                tf_task_input(g, s, left);
            }
            tf_task_end(g);
        }
    tf_graph_end(g);
    printf("survived\n");
    return 0;
}
