/* Linked only into the tiledflow-cc build of the tests, with -Wl,--wrap=tf_task_begin: counts the
 * tasks the program really spawns on streamrt and prints the count on stderr at exit. */
#include <stdio.h>

typedef struct tf_graph tf_graph;
typedef void (*tf_task_fn)(const void *env, const long *coords);
void __real_tf_task_begin(tf_graph *g, int out_stream, const long *key, tf_task_fn fn, const void *env);

static long n_tasks;

void __wrap_tf_task_begin(tf_graph *g, int out_stream, const long *key, tf_task_fn fn, const void *env) {
  n_tasks++;
  __real_tf_task_begin(g, out_stream, key, fn, env);
}

__attribute__((destructor)) static void report(void) { fprintf(stderr, "tiledflow tasks spawned: %ld\n", n_tasks); }
