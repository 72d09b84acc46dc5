//! Spread streams: when the control thread, spawning one, runs tasks itself.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use streamrt::{scope, Runtime};

/// Keeps the thread busy for `d` (a sleeping body would hand the processor to the scheduler).
fn work(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Spawns `n` independent tasks of 100 us on 2 threads, keys `0..n` in order, into a stream
/// spread along its only dimension or not; returns how many tasks the control thread ran,
/// while it had spawned fewer than `n / 2`, other than the one it had just spawned (a task
/// ready at its spawn may run there at once: anything else it ran, it took from a queue to
/// help).
fn control_helps_early(n: i64, spread: bool) -> usize {
    let rt = Runtime::new(2).expect("runtime");
    let control = thread::current().id();
    let spawned = AtomicUsize::new(0);
    let helped = AtomicUsize::new(0);
    scope(&rt, |g| {
        let s = if spread {
            g.spread_stream("S", &[0], &[n - 1], 0).unwrap()
        } else {
            g.stream("S", &[0], &[n - 1]).unwrap()
        };
        for i in 0..n {
            let (spawned, helped) = (&spawned, &helped);
            g.spawn(s, &[i], &[], move |key| {
                let now = spawned.load(Ordering::SeqCst);
                if thread::current().id() == control
                    && now < (n / 2) as usize
                    && key[0] != now as i64
                {
                    helped.fetch_add(1, Ordering::SeqCst);
                }
                work(Duration::from_micros(100));
            })
            .unwrap();
            spawned.fetch_add(1, Ordering::SeqCst);
        }
    })
    .unwrap();
    helped.load(Ordering::SeqCst)
}

#[test]
fn the_control_thread_spawns_the_workers_blocks_before_it_helps() {
    // Spread over 2 threads, the first half of the keys is the control thread's block and the
    // second half the worker's, spawned after it. Every task is ready at its spawn: far more
    // than two per thread wait while the first half is spawned, which is when the control thread
    // helps a graph that is not spread (below). Here, each task it took from a queue would put
    // off the worker's first task of its own block (the worker meanwhile takes the control
    // thread's tasks one at a time): it helps only once 256 spawns per thread are unfinished.
    assert_eq!(
        control_helps_early(256, true),
        0,
        "the control thread helped before spawning the worker's block"
    );
    // Not spread, the same tasks are the workers' as much as the control thread's: the control
    // thread helps as soon as more than two per thread are ready (checked every 16 spawns: the
    // worker cannot have drained them all in between at each of the 8 checks).
    assert!(
        control_helps_early(256, false) > 0,
        "the control thread never helped in the first half"
    );
}
