//! The safe Rust API: results of small graphs, and every error a graph description can get.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use streamrt::{scope, Error, Graph, Runtime, StuckWait};

fn runtime(n: usize) -> Runtime {
    Runtime::new(n).expect("runtime")
}

#[test]
fn chain_runs_in_order_with_forward_references() {
    for threads in [1, 3] {
        let rt = runtime(threads);
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut g = Graph::new(&rt);
        let s = g.stream("S", &[1], &[6]).unwrap();
        // Spawned from the end: every input names a token whose producer comes later.
        for i in (1..=6).rev() {
            let log = Arc::clone(&log);
            let prev = [i - 1];
            let inputs: Vec<_> = if i > 1 { vec![(s, &prev[..])] } else { vec![] };
            g.spawn(s, &[i], &inputs, move |key| {
                log.lock().unwrap().push(key[0])
            })
            .unwrap();
        }
        g.wait().unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            vec![1, 2, 3, 4, 5, 6],
            "threads={threads}"
        );
    }
}

#[test]
fn keys_are_passed_to_bodies_and_scope_borrows() {
    let rt = runtime(2);
    let sums: Vec<AtomicU64> = (0..12).map(|_| AtomicU64::new(0)).collect();
    scope(&rt, |g| {
        let a = g.stream("A", &[-1, 10], &[1, 13]).unwrap();
        for i in -1..=1 {
            for j in 10..=13 {
                let sums = &sums;
                g.spawn(a, &[i, j], &[], move |key| {
                    let slot = ((key[0] + 1) * 4 + (key[1] - 10)) as usize;
                    sums[slot].fetch_add((key[0] * 100 + key[1] + 1000) as u64, Ordering::Relaxed);
                })
                .unwrap();
            }
        }
    })
    .unwrap();
    for i in -1..=1i64 {
        for j in 10..=13i64 {
            let slot = ((i + 1) * 4 + (j - 10)) as usize;
            assert_eq!(
                sums[slot].load(Ordering::Relaxed),
                (i * 100 + j + 1000) as u64
            );
        }
    }
}

#[test]
fn duplicate_inputs_wait_once_and_zero_dim_streams_work() {
    let rt = runtime(2);
    let hits = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::new(&rt);
    let z = g.stream("Z", &[], &[]).unwrap();
    let a = g.stream("A", &[0], &[0]).unwrap();
    let h = Arc::clone(&hits);
    // A(0) waits for Z() three times; Z() is spawned afterwards.
    g.spawn(a, &[0], &[(z, &[]), (z, &[]), (z, &[])], move |_| {
        assert_eq!(h.fetch_add(1, Ordering::SeqCst), 1, "A ran before Z");
    })
    .unwrap();
    let h = Arc::clone(&hits);
    g.spawn(z, &[], &[], move |key| {
        assert!(key.is_empty());
        h.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    g.wait().unwrap();
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[test]
fn tokens_are_peeked_by_later_readers() {
    // A reader spawned after its producer finished still runs (the token is never consumed).
    let rt = runtime(2);
    let count = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::new(&rt);
    let p = g.stream("P", &[0], &[0]).unwrap();
    let r = g.stream("R", &[0], &[99]).unwrap();
    g.spawn(p, &[0], &[], |_| {}).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    for i in 0..100 {
        let c = Arc::clone(&count);
        g.spawn(r, &[i], &[(p, &[0])], move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    g.wait().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 100);
}

#[test]
fn graphs_run_in_sequence_and_concurrently_on_one_runtime() {
    let rt = runtime(3);
    let total = AtomicU64::new(0);
    std::thread::scope(|threads| {
        for t in 0..3u64 {
            let (rt, total) = (&rt, &total);
            threads.spawn(move || {
                for round in 0..20u64 {
                    scope(rt, |g| {
                        let s = g.stream("S", &[0], &[49]).unwrap();
                        for i in 0..50 {
                            let prev = [i - 1];
                            let inputs: Vec<_> = if i > 0 { vec![(s, &prev[..])] } else { vec![] };
                            g.spawn(s, &[i], &inputs, move |_| {
                                total.fetch_add(t * 1000 + round, Ordering::Relaxed);
                            })
                            .unwrap();
                        }
                    })
                    .unwrap();
                }
            });
        }
    });
    let expected: u64 = (0..3u64)
        .map(|t| (0..20u64).map(|r| 50 * (t * 1000 + r)).sum::<u64>())
        .sum();
    assert_eq!(total.load(Ordering::Relaxed), expected);
}

#[test]
fn errors_name_the_stream_key_and_task() {
    let rt = runtime(1);
    let mut g = Graph::new(&rt);
    let a = g.stream("A", &[0, 0], &[3, 3]).unwrap();
    let err = g.spawn(a, &[4, 0], &[], |_| {}).unwrap_err();
    assert!(matches!(err, Error::KeyOutOfBox { .. }));
    assert_eq!(
        err.to_string(),
        "key (4, 0) is outside the box [0..=3, 0..=3] of stream A (the output of a task)"
    );
    let err = g.spawn(a, &[1, 1], &[(a, &[0, -1])], |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key (0, -1) is outside the box [0..=3, 0..=3] of stream A (an input of task A(1, 1))"
    );
    let err = g.spawn(a, &[1], &[], |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key (1) has 1 value(s) but stream A has 2 dimension(s) (the output of a task)"
    );
    let mut other = Graph::new(&rt);
    let _ = other.stream("X", &[], &[]).unwrap();
    let foreign = other.stream("Y", &[], &[]).unwrap();
    let err = g.spawn(foreign, &[], &[], |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown stream id 1 in the output of a task; the graph has 1 stream(s)"
    );
    let err = g.stream("B", &[0], &[]).unwrap_err();
    assert!(matches!(err, Error::Misuse(_)), "{err}");
    let err = g.stream("C", &[0; 9], &[0; 9]).unwrap_err();
    assert!(matches!(err, Error::BadDims { ndims: 9, .. }), "{err}");

    // A failed spawn leaves no trace: the same output key can then be spawned.
    g.spawn(a, &[1, 1], &[], |_| {}).unwrap();
    let err = g.spawn(a, &[1, 1], &[], |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "token A(1, 1) is produced twice: a task producing it was already spawned"
    );
    g.wait().unwrap();
    other.wait().unwrap();
    assert!(matches!(Runtime::new(0), Err(Error::BadThreadCount { .. })));
}

#[test]
fn empty_box_has_no_keys() {
    let rt = runtime(1);
    let mut g = Graph::new(&rt);
    let e = g.stream("E", &[0, 5], &[3, 4]).unwrap();
    let err = g.spawn(e, &[0, 5], &[], |_| {}).unwrap_err();
    assert!(matches!(err, Error::KeyOutOfBox { .. }), "{err}");
    g.wait().unwrap();
}

#[test]
fn stuck_tasks_are_reported_and_dropped_unrun() {
    for threads in [1, 2] {
        let rt = runtime(threads);
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        struct CountDrop(Arc<AtomicUsize>);
        impl Drop for CountDrop {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let mut g = Graph::new(&rt);
        let a = g.stream("A", &[0], &[3]).unwrap();
        let b = g.stream("B", &[0], &[1]).unwrap();
        let spawn =
            |g: &mut Graph<'static>, out, key: i64, inputs: &[(streamrt::StreamId, &[i64])]| {
                let (ran, guard) = (Arc::clone(&ran), CountDrop(Arc::clone(&dropped)));
                g.spawn(out, &[key], inputs, move |_| {
                    let _guard = guard;
                    ran.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap();
            };
        spawn(&mut g, a, 0, &[]); // runs
        spawn(&mut g, b, 0, &[(a, &[3])]); // A(3) is never produced
        spawn(&mut g, a, 1, &[(b, &[0]), (a, &[0])]); // waits for the stuck B(0)
        spawn(&mut g, a, 2, &[(a, &[2])]); // waits for itself
        let err = g.wait().unwrap_err();
        let Error::Stuck(report) = &err else {
            panic!("expected Stuck, got {err}")
        };
        assert_eq!(report.n_tasks, 3);
        assert_eq!(report.n_waits, 3);
        let wait = |task: &str, token: &str, has_producer| StuckWait {
            task: task.to_string(),
            token: token.to_string(),
            has_producer,
        };
        assert_eq!(
            report.waits,
            vec![
                wait("A(1)", "B(0)", true),
                wait("A(2)", "A(2)", true),
                wait("B(0)", "A(3)", false)
            ]
        );
        assert_eq!(
            err.to_string(),
            "3 task(s) can never run:\n  task A(1) waits for B(0) (its producer is stuck too)\n  \
             task A(2) waits for A(2) (its producer is stuck too)\n  \
             task B(0) waits for A(3) (no task produces it)"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            4,
            "every body is dropped, run or not"
        );
    }
}

#[test]
fn a_panicking_body_reaches_the_waiter_and_skips_later_bodies() {
    let rt = runtime(2);
    let after = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::new(&rt);
    let s = g.stream("S", &[0], &[9]).unwrap();
    g.spawn(s, &[0], &[], |key| panic!("boom at {}", key[0]))
        .unwrap();
    for i in 1..10 {
        let after = Arc::clone(&after);
        let prev = [i - 1];
        g.spawn(s, &[i], &[(s, &prev)], move |_| {
            after.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    let err = g.wait().unwrap_err();
    assert_eq!(err.to_string(), "task S(0) panicked: boom at 0");
    assert_eq!(
        after.load(Ordering::SeqCst),
        0,
        "bodies after the panic are skipped"
    );
}

#[test]
fn a_graph_dropped_without_wait_still_waits() {
    let rt = runtime(2);
    let done = Arc::new(AtomicUsize::new(0));
    {
        let mut g = Graph::new(&rt);
        let s = g.stream("S", &[0], &[199]).unwrap();
        for i in 0..200 {
            let done = Arc::clone(&done);
            let prev = [i - 1];
            let inputs: Vec<_> = if i > 0 { vec![(s, &prev[..])] } else { vec![] };
            g.spawn(s, &[i], &inputs, move |_| {
                std::hint::black_box((0..200).sum::<i32>());
                done.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        }
    }
    assert_eq!(done.load(Ordering::SeqCst), 200);
}

#[test]
fn header_declarations_are_the_abi_implemented_in_ffi() {
    // Golden test of the C ABI: the declarations of `include/streamrt.h` (comments dropped).
    // Changing one means changing `src/ffi.rs` and every generated program: update both.
    let header =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/streamrt.h"))
            .unwrap();
    let mut code = String::new();
    let mut rest = header.as_str();
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        rest = &rest[start + rest[start..].find("*/").unwrap() + 2..];
    }
    code.push_str(rest);
    let declarations: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("tf_") || l.contains("TF_"))
        .collect();
    assert_eq!(
        declarations,
        [
            "#define TF_MAX_DIMS 8",
            "typedef void (*tf_task_fn)(const void *env, const long *coords);",
            "typedef struct tf_graph tf_graph;",
            "void tf_runtime_start(void);",
            "int tf_num_threads(void);",
            "tf_graph *tf_graph_begin(void);",
            "int tf_stream_new(tf_graph *g, const char *name, int ndims, const long *lo, const long *hi);",
            "int tf_stream_new_spread(tf_graph *g, const char *name, int ndims, const long *lo, const long *hi, int dim);",
            "void tf_task_begin(tf_graph *g, int out_stream, const long *key, tf_task_fn fn, const void *env);",
            "void tf_task_input(tf_graph *g, int stream, const long *key);",
            "void tf_task_end(tf_graph *g);",
            "void tf_barrier_begin(tf_graph *g, int out_stream, const long *key);",
            "void tf_barrier_counted(tf_graph *g, int out_stream, const long *key, long count);",
            "void tf_task_arrive(tf_graph *g, int stream, const long *key);",
            "void tf_graph_end(tf_graph *g);",
            "typedef struct tf_blocks tf_blocks;",
            "tf_blocks *tf_blocks_new(long count, size_t bytes, const long *users);",
            "void *tf_blocks_at(tf_blocks *b, long block);",
            "void tf_blocks_leave(tf_blocks *b, long block);",
            "void tf_blocks_free(tf_blocks *b);",
            // The GPU path (streamrt-gpu/src/gpu/abi.rs); a declaration's second line holds no `tf_`.
            "typedef struct tf_gpu tf_gpu;",
            "typedef struct tf_gpu_graph tf_gpu_graph;",
            "typedef void (*tf_gpu_emu_fn)(const unsigned *grid, const unsigned *block, void **args);",
            "tf_gpu *tf_gpu_load(const char *source, const char *const *names, const tf_gpu_emu_fn *emu, int n);",
            "void *tf_gpu_copy_in(tf_gpu *m, const void *host, size_t bytes);",
            "void  tf_gpu_copy_out(tf_gpu *m, void *host, const void *dev, size_t bytes);",
            "void  tf_gpu_free(tf_gpu *m, void *dev);",
            "tf_gpu_graph *tf_gpu_graph_begin(tf_gpu *m);",
            "int  tf_gpu_stream_new(tf_gpu_graph *g, const char *name, int ndims, const long *lo, const long *hi);",
            "void tf_gpu_task_begin(tf_gpu_graph *g, int out_stream, const long *key);",
            "void tf_gpu_task_input(tf_gpu_graph *g, int stream, const long *key);",
            "void tf_gpu_launch(tf_gpu_graph *g, int kernel, const unsigned grid[3], const unsigned block[3],",
            "void tf_gpu_task_end(tf_gpu_graph *g);",
            "void tf_gpu_graph_end(tf_gpu_graph *g);",
        ]
    );
    assert_eq!(streamrt::MAX_DIMS, 8, "TF_MAX_DIMS");
    // The Rust side has the same signatures (checked by the compiler through these coercions).
    use std::ffi::{c_char, c_int, c_long, c_void};
    use streamrt::ffi::*;
    let _: extern "C" fn() -> *mut TfGraph = tf_graph_begin;
    let _: unsafe extern "C" fn(
        *mut TfGraph,
        *const c_char,
        c_int,
        *const c_long,
        *const c_long,
    ) -> c_int = tf_stream_new;
    type TaskFn = unsafe extern "C" fn(*const c_void, *const c_long);
    let _: unsafe extern "C" fn(*mut TfGraph, c_int, *const c_long, Option<TaskFn>, *const c_void) =
        tf_task_begin;
    let _: unsafe extern "C" fn(*mut TfGraph, c_int, *const c_long) = tf_task_input;
    let _: unsafe extern "C" fn(*mut TfGraph) = tf_task_end;
    let _: unsafe extern "C" fn(*mut TfGraph, c_int, *const c_long) = tf_barrier_begin;
    let _: unsafe extern "C" fn(*mut TfGraph, c_int, *const c_long, c_long) = tf_barrier_counted;
    let _: unsafe extern "C" fn(*mut TfGraph, c_int, *const c_long) = tf_task_arrive;
    let _: unsafe extern "C" fn(*mut TfGraph) = tf_graph_end;
}

/// `n` producers each set their flag; every reader of the barrier must see all flags set.
fn check_all_set(flags: &[AtomicUsize]) -> bool {
    flags.iter().all(|f| f.load(Ordering::SeqCst) == 1)
}

#[test]
fn an_input_barrier_is_produced_once_all_its_inputs_are() {
    for threads in [1, 2, 4] {
        for barrier_first in [false, true] {
            let rt = runtime(threads);
            let n = 40;
            let flags: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let good = AtomicUsize::new(0);
            scope(&rt, |g| {
                let a = g.stream("A", &[0], &[n as i64 - 1]).unwrap();
                let b = g.stream("B", &[], &[]).unwrap();
                let r = g.stream("R", &[0], &[9]).unwrap();
                let keys: Vec<[i64; 1]> = (0..n as i64).map(|i| [i]).collect();
                let inputs: Vec<(streamrt::StreamId, &[i64])> =
                    keys.iter().map(|k| (a, &k[..])).collect();
                if barrier_first {
                    g.barrier(b, &[], &inputs).unwrap();
                }
                for (i, flag) in flags.iter().enumerate() {
                    g.spawn(a, &[i as i64], &[], move |_| {
                        flag.store(1, Ordering::SeqCst);
                    })
                    .unwrap();
                }
                if !barrier_first {
                    g.barrier(b, &[], &inputs).unwrap();
                }
                for j in 0..10 {
                    let (flags, good) = (&flags, &good);
                    g.spawn(r, &[j], &[(b, &[])], move |_| {
                        if check_all_set(flags) {
                            good.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                    .unwrap();
                }
            })
            .unwrap();
            assert_eq!(
                good.load(Ordering::SeqCst),
                10,
                "{threads} threads, barrier first: {barrier_first}"
            );
        }
    }
}

#[test]
fn a_counted_barrier_waits_for_a_count_known_at_run_time() {
    for threads in [1, 2, 4] {
        // The count comes from the run, not from the program text.
        let n: usize = std::hint::black_box(25 + threads);
        let rt = runtime(threads);
        let flags: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        let good = AtomicUsize::new(0);
        scope(&rt, |g| {
            let a = g.stream("A", &[0], &[99]).unwrap();
            let b = g.stream("B", &[0], &[1]).unwrap();
            let r = g.stream("R", &[0], &[9]).unwrap();
            g.counted_barrier(b, &[0], n as u64).unwrap();
            // A counted barrier with count 0 is produced at once.
            g.counted_barrier(b, &[1], 0).unwrap();
            for (i, flag) in flags.iter().enumerate() {
                g.spawn_arriving(a, &[i as i64], &[(b, &[1])], &[(b, &[0])], move |_| {
                    flag.store(1, Ordering::SeqCst);
                })
                .unwrap();
            }
            for j in 0..10 {
                let (flags, good) = (&flags, &good);
                g.spawn(r, &[j], &[(b, &[0])], move |_| {
                    if check_all_set(flags) {
                        good.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .unwrap();
            }
        })
        .unwrap();
        assert_eq!(good.load(Ordering::SeqCst), 10, "{threads} threads");
    }
}

#[test]
fn counted_barrier_misuse_is_refused_or_reported() {
    let rt = runtime(2);
    let mut g = Graph::new(&rt);
    let a = g.stream("A", &[0], &[9]).unwrap();
    let b = g.stream("B", &[0], &[1]).unwrap();
    g.counted_barrier(b, &[0], 2).unwrap();
    let err = g
        .spawn_arriving(a, &[0], &[], &[(b, &[1])], |_| {})
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "API misuse: task A(0) arrives at B(1), which is not a counted barrier declared before \
         it (tf_barrier_counted)"
    );
    let err = g
        .spawn_arriving(a, &[0], &[], &[(b, &[0]), (b, &[0]), (b, &[0])], |_| {})
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "API misuse: task A(0) arrives at the counted barrier B(0) beyond its count of 2"
    );
    // The refused spawns left no trace: A(0) may still be spawned, with one arrival.
    g.spawn_arriving(a, &[0], &[], &[(b, &[0])], |_| {})
        .unwrap();
    g.spawn(a, &[1], &[(b, &[0])], |_| {}).unwrap();
    let err = g.wait().unwrap_err();
    assert_eq!(
        err.to_string(),
        "2 task(s) can never run:\n  task A(1) waits for B(0) (its producer is stuck too)\n  \
         counted barrier B(0) has 1 of its 2 arrivals declared"
    );
}
