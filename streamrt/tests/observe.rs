//! `TILEDFLOW_TRACE` and `TILEDFLOW_STATS` through the C ABI: the trace is valid JSON with one
//! complete event per task (worker, stream name, key), each starting after its inputs ended, and
//! one per graph holding its tasks;
//! the statistics name every thread and add up to the tasks of each graph.
//!
//! The runtime reads the environment once, when the process-wide runtime starts: each test
//! re-runs this test binary as a child with the variables set (`STREAMRT_OBSERVE_CHILD`).

use std::collections::HashMap;
use std::ffi::{c_long, c_void};
use std::process::{Command, Output};
use std::ptr;

use serde_json::Value;
use streamrt::ffi::{
    tf_graph_begin, tf_graph_end, tf_runtime_start, tf_stream_new, tf_task_begin, tf_task_end,
    tf_task_input,
};

const CHILD_ENV: &str = "STREAMRT_OBSERVE_CHILD";
const N: c_long = 12;
const M: c_long = 17;

unsafe extern "C" fn nop(_env: *const c_void, _coords: *const c_long) {}

/// A task long enough that both threads take some of a wavefront's.
unsafe extern "C" fn pause(_env: *const c_void, _coords: *const c_long) {
    std::thread::sleep(std::time::Duration::from_micros(200));
}

/// After a pause of 100 ms with the runtime started, two graphs: an N x M wavefront on stream
/// "Tile" (tasks of 200 µs), then a 0-dimensional task "Sum" waiting for M tasks of stream "Row". N*M + M + 1
/// tasks in all.
fn scenario() {
    unsafe {
        // The worker starts and sleeps while the program prepares: not idle time of a graph.
        tf_runtime_start();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let g = tf_graph_begin();
        let (lo, hi) = ([0 as c_long, 0], [N - 1, M - 1]);
        let s = tf_stream_new(g, c"Tile".as_ptr(), 2, lo.as_ptr(), hi.as_ptr());
        for i in 0..N {
            for j in 0..M {
                tf_task_begin(g, s, [i, j].as_ptr(), Some(pause), ptr::null());
                if i > 0 {
                    tf_task_input(g, s, [i - 1, j].as_ptr());
                }
                if j > 0 {
                    tf_task_input(g, s, [i, j - 1].as_ptr());
                }
                tf_task_end(g);
            }
        }
        tf_graph_end(g);

        let g = tf_graph_begin();
        let sum = tf_stream_new(g, c"Sum".as_ptr(), 0, ptr::null(), ptr::null());
        let row = tf_stream_new(
            g,
            c"Row".as_ptr(),
            1,
            [0 as c_long].as_ptr(),
            [M - 1].as_ptr(),
        );
        tf_task_begin(g, sum, ptr::null(), Some(nop), ptr::null());
        for j in 0..M {
            tf_task_input(g, row, [j].as_ptr());
        }
        tf_task_end(g);
        for j in 0..M {
            tf_task_begin(g, row, [j].as_ptr(), Some(nop), ptr::null());
            tf_task_end(g);
        }
        tf_graph_end(g);
    }
}

/// In the child (`CHILD_ENV` = `name`): runs the scenario and exits. In the parent: runs the
/// child with `env` and returns its output.
fn child(name: &str, env: &[(&str, &str)]) -> Option<Output> {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        scenario();
        std::process::exit(0);
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env_remove("TILEDFLOW_TRACE")
        .env_remove("TILEDFLOW_STATS")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{name}: child failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Some(output)
}

#[test]
fn trace_has_one_event_per_task_after_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    let threads = 3;
    let Some(_) = child(
        "trace_has_one_event_per_task_after_its_inputs",
        &[
            ("TILEDFLOW_TRACE", path.to_str().unwrap()),
            ("TILEDFLOW_NUM_THREADS", &threads.to_string()),
            ("TILEDFLOW_STATS", "0"),
        ],
    ) else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: Value = serde_json::from_str(&text).expect("the trace is valid JSON");
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");

    // (name, key) -> (start, end, tid) of every complete event of a task.
    let mut tasks: HashMap<(String, Vec<i64>), (f64, f64, i64)> = HashMap::new();
    // name -> (start, end) of each graph's span.
    let mut graphs: HashMap<String, (f64, f64)> = HashMap::new();
    let mut thread_names = 0;
    for e in events {
        match e["ph"].as_str() {
            Some("M") => {
                assert_eq!(e["name"], "thread_name");
                thread_names += 1;
            }
            Some("X") if e["cat"] == "graph" => {
                let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
                assert_eq!(
                    e["tid"], 0,
                    "a graph's span is on the control thread's track: {e}"
                );
                let name = e["name"].as_str().expect("a graph name").to_string();
                assert!(graphs.insert(name, (ts, ts + dur)).is_none(), "{e}");
            }
            Some("X") => {
                assert_eq!(e["cat"], "task", "{e}");
                let name = e["name"].as_str().expect("an event name").to_string();
                let key: Vec<i64> = e["args"]["key"]
                    .as_array()
                    .expect("the key in args")
                    .iter()
                    .map(|k| k.as_i64().unwrap())
                    .collect();
                let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
                let tid = e["tid"].as_i64().unwrap();
                assert!(dur >= 0.0, "{e}");
                assert!(
                    (0..threads).contains(&tid),
                    "tid {tid} of {threads} threads"
                );
                let old = tasks.insert((name.clone(), key.clone()), (ts, ts + dur, tid));
                assert!(old.is_none(), "two events for {name}{key:?}");
            }
            other => panic!("unexpected event phase {other:?} in {e}"),
        }
    }
    assert_eq!(thread_names, threads);
    assert_eq!(tasks.len() as i64, N * M + M + 1, "one event per task");
    // One span per graph, holding its tasks (the trace's times are rounded to nanoseconds).
    assert_eq!(graphs.len(), 2, "{graphs:?}");
    for ((name, _), &(start, end, _)) in &tasks {
        let graph = if name == "Tile" { "graph 1" } else { "graph 2" };
        let (g_start, g_end) = graphs[graph];
        assert!(
            g_start <= start + 1e-3 && end <= g_end + 1e-3,
            "{name} ran outside {graph}"
        );
    }
    for i in 0..N {
        for j in 0..M {
            let (start, _, _) = tasks[&("Tile".to_string(), vec![i, j])];
            for (pi, pj) in [(i - 1, j), (i, j - 1)] {
                if pi >= 0 && pj >= 0 {
                    let (_, end, _) = tasks[&("Tile".to_string(), vec![pi, pj])];
                    assert!(
                        end <= start,
                        "Tile({i}, {j}) started before Tile({pi}, {pj}) ended"
                    );
                }
            }
        }
    }
    let (sum_start, _, _) = tasks[&("Sum".to_string(), vec![])];
    for j in 0..M {
        let (_, end, _) = tasks[&("Row".to_string(), vec![j])];
        assert!(end <= sum_start, "Sum started before Row({j}) ended");
    }
}

#[test]
fn stats_name_every_thread_and_add_up() {
    let Some(output) = child(
        "stats_name_every_thread_and_add_up",
        &[("TILEDFLOW_STATS", "1"), ("TILEDFLOW_NUM_THREADS", "2")],
    ) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("streamrt: stats:"))
        .collect();
    assert_eq!(
        lines.len(),
        6,
        "two graphs, each a header and 2 threads:\n{stderr}"
    );
    for (graph, tasks, block) in [(1, N * M, &lines[0..3]), (2, M + 1, &lines[3..6])] {
        let header = format!("streamrt: stats: graph {graph}: {tasks} tasks in ");
        assert!(block[0].starts_with(&header), "{} lacks {header}", block[0]);
        assert!(block[0].ends_with(" s on 2 thread(s)"), "{}", block[0]);
        let wall: f64 = block[0][header.len()..]
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no wall time in {}", block[0]));
        let mut sum = 0;
        for (slot, role) in [(0, "control"), (1, "worker")] {
            let prefix = format!("streamrt: stats:   thread {slot} ({role}): ");
            let rest = block[1 + slot]
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("{} lacks {prefix}", block[1 + slot]));
            // "<t> tasks, <s> steals, idle <x> s[, first task at <f> s]"
            let fields: Vec<&str> = rest.split_whitespace().collect();
            assert_eq!(fields[1], "tasks,", "{rest}");
            assert_eq!(fields[3], "steals,", "{rest}");
            assert_eq!(fields[4], "idle", "{rest}");
            let idle = fields[5].parse::<f64>().unwrap();
            assert!(idle >= 0.0);
            // Idle time falls inside the graph (the first follows a 100 ms pause).
            assert!(idle <= wall, "idle {idle} s in a graph of {wall} s: {rest}");
            let n_tasks = fields[0].parse::<i64>().unwrap();
            // The first task's start, for a thread that ran one, falls inside the graph too.
            if n_tasks > 0 {
                assert_eq!(fields[6..9], ["s,", "first", "task"], "{rest}");
                assert_eq!(fields[9], "at", "{rest}");
                let first = fields[10].parse::<f64>().unwrap();
                assert!(
                    (0.0..=wall).contains(&first),
                    "first task at {first} s in a graph of {wall} s: {rest}"
                );
            } else {
                assert_eq!(fields.len(), 7, "no first task to show: {rest}");
            }
            sum += n_tasks;
        }
        assert_eq!(sum, tasks, "thread task counts add up to the graph's");
    }
}

#[test]
fn nothing_is_printed_without_the_variables() {
    let Some(output) = child(
        "nothing_is_printed_without_the_variables",
        &[("TILEDFLOW_NUM_THREADS", "2")],
    ) else {
        return;
    };
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
