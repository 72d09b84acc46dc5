//! Work on threads: each item of a list on a thread of its own, the results in the list's order.
//! The fusion candidates ([`crate::fusion`]) and the pieces of a tile's code
//! ([`crate::tile_code`]) run so. ISL's objects belong to the thread that made them, so the items
//! and the results cross threads as plain data (text, ASTs); each thread works in its own shared
//! ISL context (`Ctx::shared`).

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::this_thread_cpu_time;
    use std::time::Duration;

    #[test]
    fn work_on_threads_counts_toward_the_group_of_its_starter() {
        let group = std::sync::Arc::new(CpuGroup::default());
        let _member = CpuGroup::enter(&group);
        let before = group.used().unwrap();
        let spin = |_: &u32| -> Result<()> {
            let start = this_thread_cpu_time().unwrap();
            let mut x = 0u64;
            while this_thread_cpu_time().unwrap() - start < Duration::from_millis(60) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            Ok(())
        };
        let done = on_threads(&[1, 2, 3], spin);
        assert!(done.iter().all(Result::is_ok));
        let used = group.used().unwrap() - before;
        assert!(used >= Duration::from_millis(180), "{used:?}");
    }
}
