//! Stress: a million tiny tasks on a 1000 x 1000 grid, each waiting for two tasks of the previous
//! row, with many more tasks than threads; checks every task ran once, after its inputs.

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::time::Instant;

use streamrt::{scope, Runtime, StreamId};

#[test]
fn a_million_tiny_tasks() {
    const N: i64 = 1000;
    let rt = Runtime::new(4).unwrap();
    let runs: Vec<AtomicU32> = (0..N * N).map(|_| AtomicU32::new(0)).collect();
    let done: Vec<AtomicU8> = (0..N * N).map(|_| AtomicU8::new(0)).collect();
    let late = AtomicU32::new(0);
    let began = Instant::now();
    scope(&rt, |g| {
        let s = g.stream("S", &[0, 0], &[N - 1, N - 1]).unwrap();
        for i in 0..N {
            for j in 0..N {
                let a = [i - 1, j];
                let b = [i - 1, (j + 1) % N];
                let inputs: &[(StreamId, &[i64])] = if i > 0 { &[(s, &a), (s, &b)] } else { &[] };
                let (runs, done, late) = (&runs, &done, &late);
                g.spawn(s, &[i, j], inputs, move |_| {
                    let t = (i * N + j) as usize;
                    if i > 0 {
                        let (a, b) = (t - N as usize, ((i - 1) * N + (j + 1) % N) as usize);
                        if done[a].load(Ordering::Acquire) == 0
                            || done[b].load(Ordering::Acquire) == 0
                        {
                            late.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    runs[t].fetch_add(1, Ordering::Relaxed);
                    done[t].store(1, Ordering::Release);
                })
                .unwrap();
            }
        }
    })
    .unwrap();
    eprintln!("1e6 tasks on 4 threads: {:?}", began.elapsed());
    assert_eq!(
        late.load(Ordering::Relaxed),
        0,
        "tasks ran before their inputs"
    );
    let wrong = runs
        .iter()
        .filter(|r| r.load(Ordering::Relaxed) != 1)
        .count();
    assert_eq!(wrong, 0, "{wrong} tasks did not run exactly once");
}
