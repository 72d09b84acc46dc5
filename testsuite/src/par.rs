//! Work items of one test spread over the machine's cores. The test harness runs test functions
//! side by side, but a single test that builds and runs every kernel in a loop (the warnings
//! check, the scheduling variants) keeps one core busy while the others wait for it. (The
//! compiler has its own `polyhedral::on_cores`; this crate drives the built binaries and does
//! not link the compiler's crates.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` of each item, on one thread per core (at most one per item), items taken in order; the
/// results in the items' order. A panic in `f` reaches the caller once the other threads stop.
pub fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_items_order() {
        let items: Vec<u64> = (0..50).collect();
        let got = on_cores(&items, |&x| {
            // Uneven work, so that the threads finish out of order.
            std::thread::sleep(std::time::Duration::from_millis((x * 7) % 5));
            x * x
        });
        assert_eq!(got, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(on_cores(&[] as &[u8], |&x| x).is_empty());
    }
}
