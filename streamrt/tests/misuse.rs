//! Misuse of the C ABI ends the process with status 70 and a `streamrt: error:` message.
//!
//! Each test re-runs this test binary as a child process (filtered to the same test, with
//! `STREAMRT_MISUSE_CHILD` set); the child performs the misuse through the `extern "C"`
//! functions and must exit with 70 before it returns. The parent checks the status and stderr.
//! (A task body that crashes is tested with a C program, in `tests/c_abi.rs`; one that panics,
//! through the Rust API, in `tests/api.rs`.)

use std::ffi::{c_long, c_void, CStr};
use std::process::Command;
use std::ptr;

use streamrt::ffi::{
    tf_barrier_counted, tf_graph_begin, tf_graph_end, tf_stream_new, tf_task_arrive, tf_task_begin,
    tf_task_end, tf_task_input,
};

const CHILD_ENV: &str = "STREAMRT_MISUSE_CHILD";

unsafe extern "C" fn nop(_env: *const c_void, _coords: *const c_long) {}

/// In the child: runs `scenario` (which must not return). In the parent: runs the child and
/// checks that it exits with 70 and prints `expected` after `streamrt: error: `.
fn misuse(name: &str, threads: &str, scenario: impl FnOnce(), expected: &str) {
    misuse_env(
        name,
        &[("TILEDFLOW_NUM_THREADS", threads)],
        scenario,
        expected,
    );
}

/// [`misuse`] with the child's environment variables given.
fn misuse_env(name: &str, env: &[(&str, &str)], scenario: impl FnOnce(), expected: &str) {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        scenario();
        eprintln!("scenario {name} returned");
        std::process::exit(0);
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env_remove("TILEDFLOW_TRACE")
        .env_remove("TILEDFLOW_STATS")
        .envs(env.iter().copied())
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(70),
        "{name}: wrong exit status; stderr:\n{stderr}"
    );
    let wanted = format!("streamrt: error: {expected}");
    assert!(
        stderr.contains(&wanted),
        "{name}: stderr lacks\n{wanted}\n--- stderr:\n{stderr}"
    );
}

fn name(s: &CStr) -> *const std::ffi::c_char {
    s.as_ptr()
}

#[test]
fn key_out_of_bounds() {
    misuse(
        "key_out_of_bounds",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let (lo, hi) = ([0 as c_long, 0], [3 as c_long, 3]);
            let a = tf_stream_new(g, name(c"A"), 2, lo.as_ptr(), hi.as_ptr());
            tf_task_begin(g, a, [1 as c_long, 1].as_ptr(), Some(nop), ptr::null());
            tf_task_input(g, a, [1 as c_long, 4].as_ptr());
        },
        "key (1, 4) is outside the box [0..=3, 0..=3] of stream A (an input of task A(1, 1))",
    );
}

#[test]
fn output_key_out_of_bounds() {
    misuse(
        "output_key_out_of_bounds",
        "1",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(
                g,
                name(c"A"),
                1,
                [0 as c_long].as_ptr(),
                [9 as c_long].as_ptr(),
            );
            tf_task_begin(g, a, [-1 as c_long].as_ptr(), Some(nop), ptr::null());
        },
        "key (-1) is outside the box [0..=9] of stream A (the output of a task)",
    );
}

#[test]
fn unknown_stream() {
    misuse(
        "unknown_stream",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(g, name(c"A"), 0, ptr::null(), ptr::null());
            tf_task_begin(g, a, ptr::null(), Some(nop), ptr::null());
            tf_task_input(g, 7, [0 as c_long].as_ptr());
        },
        "unknown stream id 7 in an input of a task (tf_task_input); the graph has 1 stream(s)",
    );
}

#[test]
fn task_never_ready() {
    misuse(
        "task_never_ready",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(
                g,
                name(c"A"),
                1,
                [0 as c_long].as_ptr(),
                [3 as c_long].as_ptr(),
            );
            let b = tf_stream_new(
                g,
                name(c"B"),
                1,
                [0 as c_long].as_ptr(),
                [3 as c_long].as_ptr(),
            );
            tf_task_begin(g, a, [0 as c_long].as_ptr(), Some(nop), ptr::null());
            tf_task_end(g);
            tf_task_begin(g, b, [2 as c_long].as_ptr(), Some(nop), ptr::null());
            tf_task_input(g, a, [0 as c_long].as_ptr());
            tf_task_input(g, a, [3 as c_long].as_ptr());
            tf_task_end(g);
            tf_graph_end(g);
        },
        "1 task(s) can never run:\n  task B(2) waits for A(3) (no task produces it)",
    );
}

#[test]
fn token_produced_twice() {
    misuse(
        "token_produced_twice",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(
                g,
                name(c"A"),
                1,
                [0 as c_long].as_ptr(),
                [3 as c_long].as_ptr(),
            );
            for _ in 0..2 {
                tf_task_begin(g, a, [1 as c_long].as_ptr(), Some(nop), ptr::null());
                tf_task_end(g);
            }
            tf_graph_end(g);
        },
        "token A(1) is produced twice: a task producing it was already spawned",
    );
}

#[test]
fn input_without_begin() {
    misuse(
        "input_without_begin",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(
                g,
                name(c"A"),
                1,
                [0 as c_long].as_ptr(),
                [3 as c_long].as_ptr(),
            );
            tf_task_input(g, a, [0 as c_long].as_ptr());
        },
        "API misuse: task_input outside a task description (no task_begin before it)",
    );
}

#[test]
fn graph_end_inside_a_task_description() {
    misuse(
        "graph_end_inside_a_task_description",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(
                g,
                name(c"A"),
                1,
                [0 as c_long].as_ptr(),
                [3 as c_long].as_ptr(),
            );
            tf_task_begin(g, a, [0 as c_long].as_ptr(), Some(nop), ptr::null());
            tf_graph_end(g);
        },
        "API misuse: the graph ended while a task was being described",
    );
}

#[test]
fn null_graph() {
    misuse(
        "null_graph",
        "2",
        || unsafe { tf_task_end(ptr::null_mut()) },
        "API misuse: tf_task_end called with a NULL graph",
    );
}

#[test]
fn null_function() {
    misuse(
        "null_function",
        "2",
        || unsafe {
            let g = tf_graph_begin();
            let a = tf_stream_new(g, name(c"A"), 0, ptr::null(), ptr::null());
            tf_task_begin(g, a, ptr::null(), None, ptr::null());
        },
        "API misuse: tf_task_begin: NULL task function",
    );
}

#[test]
fn call_from_another_thread() {
    misuse(
        "call_from_another_thread",
        "2",
        || unsafe {
            struct SendPtr(*mut streamrt::ffi::TfGraph);
            unsafe impl Send for SendPtr {}
            let g = SendPtr(tf_graph_begin());
            std::thread::spawn(move || {
                let g = g;
                tf_stream_new(g.0, name(c"A"), 0, ptr::null(), ptr::null());
            })
            .join()
            .unwrap();
        },
        "API misuse: tf_stream_new called from a thread other than the one that called tf_graph_begin",
    );
}

#[test]
fn bad_thread_count() {
    misuse(
        "bad_thread_count",
        "lots",
        || {
            tf_graph_begin();
        },
        "invalid thread count \"lots\" (TILEDFLOW_NUM_THREADS): expected an integer from 1 to 1024",
    );
}

#[test]
fn too_many_dims() {
    misuse(
        "too_many_dims",
        "1",
        || unsafe {
            let g = tf_graph_begin();
            let lo = [0 as c_long; 9];
            tf_stream_new(g, name(c"Big"), 9, lo.as_ptr(), lo.as_ptr());
        },
        "stream Big: 9 dimensions; a stream has 0 to 8 dimensions",
    );
}

/// A graph with streams A and B, both of keys 0..=3.
unsafe fn graph_ab() -> (*mut streamrt::ffi::TfGraph, i32, i32) {
    let g = tf_graph_begin();
    let (lo, hi) = ([0 as c_long], [3 as c_long]);
    let a = tf_stream_new(g, name(c"A"), 1, lo.as_ptr(), hi.as_ptr());
    let b = tf_stream_new(g, name(c"B"), 1, lo.as_ptr(), hi.as_ptr());
    (g, a, b)
}

#[test]
fn unknown_output_stream() {
    misuse(
        "unknown_output_stream",
        "2",
        || unsafe {
            let (g, _, _) = graph_ab();
            tf_task_begin(g, 2, [0 as c_long].as_ptr(), Some(nop), ptr::null());
        },
        "unknown stream id 2 in the output of a task (tf_task_begin); the graph has 2 stream(s)",
    );
}

#[test]
fn arrival_beyond_the_count() {
    misuse(
        "arrival_beyond_the_count",
        "2",
        || unsafe {
            let (g, a, b) = graph_ab();
            tf_barrier_counted(g, b, [1 as c_long].as_ptr(), 1);
            for i in 0..2 {
                tf_task_begin(g, a, [i as c_long].as_ptr(), Some(nop), ptr::null());
                tf_task_arrive(g, b, [1 as c_long].as_ptr());
                tf_task_end(g);
            }
        },
        "API misuse: task A(1) arrives at the counted barrier B(1) beyond its count of 1",
    );
}

#[test]
fn arrival_at_a_token_that_is_not_a_counted_barrier() {
    misuse(
        "arrival_at_a_token_that_is_not_a_counted_barrier",
        "2",
        || unsafe {
            let (g, a, b) = graph_ab();
            tf_task_begin(g, a, [0 as c_long].as_ptr(), Some(nop), ptr::null());
            tf_task_arrive(g, b, [2 as c_long].as_ptr());
            tf_task_end(g);
        },
        "API misuse: task A(0) arrives at B(2), which is not a counted barrier declared before it",
    );
}

#[test]
fn counted_barrier_never_complete() {
    misuse(
        "counted_barrier_never_complete",
        "2",
        || unsafe {
            let (g, a, b) = graph_ab();
            tf_barrier_counted(g, b, [0 as c_long].as_ptr(), 3);
            tf_task_begin(g, a, [0 as c_long].as_ptr(), Some(nop), ptr::null());
            tf_task_arrive(g, b, [0 as c_long].as_ptr());
            tf_task_end(g);
            tf_task_begin(g, a, [1 as c_long].as_ptr(), Some(nop), ptr::null());
            tf_task_input(g, b, [0 as c_long].as_ptr());
            tf_task_end(g);
            tf_graph_end(g);
        },
        "2 task(s) can never run:\n  task A(1) waits for B(0) (its producer is stuck too)\n  \
         counted barrier B(0) has 1 of its 3 arrivals declared",
    );
}

#[test]
fn negative_barrier_count() {
    misuse(
        "negative_barrier_count",
        "1",
        || unsafe {
            let (g, _, b) = graph_ab();
            tf_barrier_counted(g, b, [0 as c_long].as_ptr(), -2);
        },
        "API misuse: tf_barrier_counted: negative count -2",
    );
}

#[test]
fn arrive_outside_a_task_description() {
    misuse(
        "arrive_outside_a_task_description",
        "1",
        || unsafe {
            let (g, _, b) = graph_ab();
            tf_task_arrive(g, b, [0 as c_long].as_ptr());
        },
        "API misuse: task_arrive outside a task description (no task_begin before it)",
    );
}

#[test]
fn bad_stats_variable() {
    misuse_env(
        "bad_stats_variable",
        &[("TILEDFLOW_STATS", "yes")],
        || {
            tf_graph_begin();
        },
        "invalid TILEDFLOW_STATS=\"yes\": expected 0 or 1",
    );
}

#[test]
fn unwritable_trace_file() {
    misuse_env(
        "unwritable_trace_file",
        &[("TILEDFLOW_TRACE", "/nonexistent-dir/trace.json")],
        || {
            tf_graph_begin();
        },
        "cannot create the trace file /nonexistent-dir/trace.json (TILEDFLOW_TRACE): ",
    );
}
