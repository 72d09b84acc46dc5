//! Work on threads: each item of a list on a thread of its own ([`on_threads`]: the pieces of a
//! tile's code, [`crate::tile_code`]), or the items taken in the list's order by one thread per
//! core ([`on_cores`]: the fusion candidates, [`crate::fusion`], and the task program's nests'
//! tile code); the results in the list's order. ISL's objects belong to the thread that made
//! them, so the items and the results cross threads as plain data (text, ASTs); each thread
//! works in its own shared ISL context (`Ctx::shared`).

use crate::isl::CpuGroup;
use crate::Result;

/// `work` on each item, each on a thread of its own (one alone runs on this thread), in order.
/// Where no thread can be started, the item runs here.
pub(crate) fn on_threads<I: Sync, T: Send>(
    items: &[I],
    work: impl Fn(&I) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    if items.len() <= 1 || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return items.iter().map(&work).collect();
    }
    let work = &work;
    // The items' CPU time counts toward the bound of the SCoP's compilation.
    let group = CpuGroup::current();
    let group = &group;
    std::thread::scope(|scope| {
        let spawned: Vec<_> = items
            .iter()
            .map(|item| {
                std::thread::Builder::new()
                    .name("polyhedral-work".into())
                    .spawn_scoped(scope, move || {
                        let _member = group.as_ref().map(CpuGroup::enter);
                        work(item)
                    })
            })
            .collect();
        spawned
            .into_iter()
            .zip(items)
            .map(|(handle, item)| match handle {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => work(item),
            })
            .collect()
    })
}

/// `work` on each item, taken in the list's order by as many threads as the machine has cores
/// (this one among them), the results in order. Where the first items are the longest, as the
/// fusion candidates are (`smart` on the whole SCoP first), the longest runs on a core of its
/// own instead of sharing one with the others: ludcmp's three heuristics on two cores took
/// 0.77 s with a thread each, `smart`'s 0.48 s of CPU stretched by the other two.
pub fn on_cores<I: Sync, T: Send>(
    items: &[I],
    work: impl Fn(&I) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(items.len());
    if threads < 2 {
        return items.iter().map(&work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    // The items not yet taken, each with its position.
    let run = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(k) else {
                return done;
            };
            done.push((k, work(item)));
        }
    };
    let run = &run;
    // The items' CPU time counts toward the bound of the SCoP's compilation.
    let group = CpuGroup::current();
    let group = &group;
    let mut done: Vec<(usize, Result<T>)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("polyhedral-work".into())
                    .spawn_scoped(scope, move || {
                        let _member = group.as_ref().map(CpuGroup::enter);
                        run()
                    })
                    .ok()
            })
            .collect();
        // This thread takes its share, and every item where no helper could be started.
        let mut done = run();
        for helper in helpers {
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        done
    });
    done.sort_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::this_thread_cpu_time;
    use std::time::Duration;

    /// Spins for `ms` milliseconds of this thread's CPU time, then gives `ms` back.
    fn spin(ms: &u64) -> Result<u64> {
        let start = this_thread_cpu_time().unwrap();
        let mut x = 0u64;
        while this_thread_cpu_time().unwrap() - start < Duration::from_millis(*ms) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        Ok(*ms)
    }

    #[test]
    fn work_on_threads_counts_toward_the_group_of_its_starter() {
        for on_cores in [false, true] {
            let group = std::sync::Arc::new(CpuGroup::default());
            let _member = CpuGroup::enter(&group);
            let before = group.used().unwrap();
            let items = [60, 70, 80];
            let done = match on_cores {
                false => on_threads(&items, spin),
                true => super::on_cores(&items, spin),
            };
            // Every item, its result in the list's place.
            let done: Vec<u64> = done.into_iter().map(Result::unwrap).collect();
            assert_eq!(done, items, "on_cores: {on_cores}");
            let used = group.used().unwrap() - before;
            assert!(
                used >= Duration::from_millis(210),
                "on_cores: {on_cores}: {used:?}"
            );
        }
    }
}
