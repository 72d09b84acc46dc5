//! Idle threads sleep: while a graph's only task blocks for a while, the other workers and the
//! waiting control thread must not burn CPU. Measured with the process's CPU time from
//! `/proc/self/stat` (Linux), in its own test binary so that no other test adds CPU time.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use streamrt::{Graph, Runtime};

/// User + system CPU time of this process, in clock ticks (1/100 s on Linux).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name (which is in parentheses): state is field 3; utime and
    // stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn idle_workers_and_waiting_control_thread_sleep() {
    let rt = Runtime::new(8).unwrap();
    // Warm up: every worker has run (or looked for) work and gone idle.
    let mut g = Graph::new(&rt);
    let s = g.stream("S", &[0], &[999]).unwrap();
    for i in 0..1000 {
        g.spawn(s, &[i], &[], |_| {}).unwrap();
    }
    g.wait().unwrap();

    let before = cpu_ticks();
    let began = Instant::now();
    let mut g = Graph::new(&rt);
    let s = g.stream("S", &[0], &[1]).unwrap();
    g.spawn(s, &[0], &[], |_| {
        std::thread::sleep(Duration::from_millis(500))
    })
    .unwrap();
    g.spawn(s, &[1], &[(s, &[0])], |_| {}).unwrap();
    g.wait().unwrap();
    let wall = began.elapsed();
    let used = cpu_ticks() - before;
    assert!(wall >= Duration::from_millis(500));
    // Spinning threads would use several hundred ticks in that time; allow a little noise.
    assert!(
        used <= 10,
        "{used} ticks of CPU used in {wall:?} while idle"
    );
}
