//! Where a woken worker runs: off the CPU of the thread that wakes it.
//!
//! A worker that sleeps is woken by the thread that pushed work, most often the control thread
//! spawning a graph's first tasks. Linux may queue the woken thread on the waker's own CPU (the
//! cache it shares with the waker looks warm, and on a virtual machine an idle virtual CPU may
//! not look available), where the waker keeps running: the worker then waits for the scheduler's
//! next balancing, milliseconds later. Measured on the 2-core VM (a worker asleep for a second,
//! the waker spinning): its first wake-up took 2.5 to 3.7 ms, placed on the waker's CPU; with
//! the waker's CPU left out of the sleeper's mask, 60 to 260 us on the other CPU. In the
//! generated programs it showed as a worker without a task for the first 1.5 to 4.5 ms of a
//! graph in a third of the runs (gemm at LARGE on 2 threads: the control thread ran 247 to 300
//! tiles of its own before the worker's first; bicg at EXTRALARGE ran 3.4 ms instead of 2.1).
//!
//! So a waker first sets the CPU mask of every sleeping worker to the CPUs the process started
//! with less its own (when that leaves one at least), and a worker that wakes with such a mask
//! gives itself back the full one before it looks for work: a running worker is never bound,
//! so the scheduler moves it as it would any thread. A worker's wake-up then costs two system
//! calls (about a microsecond each). Off Linux this does nothing.

use std::sync::atomic::{AtomicI32, Ordering};

/// The workers' kernel thread ids and the CPU each one's mask leaves out, and the CPUs the
/// process may run on (read when the runtime starts).
pub(crate) struct Placement {
    cpus: Option<CpuSet>,
    /// Kernel thread id of worker `i` (0 until it has started).
    tids: Box<[AtomicI32]>,
    /// The CPU worker `i`'s mask leaves out, or -1 when its mask is the full set.
    left_out: Box<[AtomicI32]>,
}

impl Placement {
    /// The placement of `n_workers` workers among the CPUs the calling thread may run on.
    pub(crate) fn new(n_workers: usize) -> Placement {
        let cpus = CpuSet::of_this_thread().filter(|c| c.count() > 1);
        Placement {
            cpus,
            tids: (0..n_workers).map(|_| AtomicI32::new(0)).collect(),
            left_out: (0..n_workers).map(|_| AtomicI32::new(-1)).collect(),
        }
    }

    /// Worker `index`, starting: records its thread id.
    pub(crate) fn register(&self, index: usize) {
        if self.cpus.is_some() {
            self.tids[index].store(sys::thread_id(), Ordering::Relaxed);
        }
    }

    /// A thread about to wake sleeping workers (`asleep(i)`: worker `i` sleeps; called under
    /// the sleep mutex, so none of them wakes meanwhile): leaves its own CPU out of their masks.
    pub(crate) fn before_wake(&self, asleep: impl Fn(usize) -> bool) {
        let Some(cpus) = &self.cpus else { return };
        let Some(here) = sys::current_cpu() else {
            return;
        };
        let Some(mask) = cpus.without(here) else {
            return;
        };
        for (i, tid) in self.tids.iter().enumerate() {
            let tid = tid.load(Ordering::Relaxed);
            if tid == 0 || !asleep(i) || self.left_out[i].load(Ordering::Relaxed) == here as i32 {
                continue;
            }
            if sys::set_mask(tid, &mask) {
                self.left_out[i].store(here as i32, Ordering::Relaxed);
            }
        }
    }

    /// Worker `index`, just woken: gives itself back the full mask if a waker narrowed it.
    pub(crate) fn after_wake(&self, index: usize) {
        let Some(cpus) = &self.cpus else { return };
        if self.left_out[index].load(Ordering::Relaxed) < 0 {
            return;
        }
        if sys::set_mask(0, cpus) {
            self.left_out[index].store(-1, Ordering::Relaxed);
        }
    }
}

/// A set of CPU numbers (below [`sys::MAX_CPUS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CpuSet(Vec<usize>);

impl CpuSet {
    /// The CPUs the calling thread may run on; `None` where that cannot be read.
    fn of_this_thread() -> Option<CpuSet> {
        sys::mask_of_this_thread()
    }

    fn count(&self) -> usize {
        self.0.len()
    }

    /// The set without `cpu`, unless that leaves it empty or `cpu` is not in it.
    fn without(&self, cpu: usize) -> Option<CpuSet> {
        if !self.0.contains(&cpu) || self.0.len() < 2 {
            return None;
        }
        Some(CpuSet(
            self.0.iter().copied().filter(|&c| c != cpu).collect(),
        ))
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::CpuSet;

    /// CPUs a `cpu_set_t` holds.
    pub(super) const MAX_CPUS: usize = 8 * std::mem::size_of::<libc::cpu_set_t>();

    pub(super) fn thread_id() -> i32 {
        // The system call rather than glibc's `gettid` (2.30 and later): programs link this
        // library against the C library of the machine that builds them.
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        i32::try_from(tid).unwrap_or(0)
    }

    pub(super) fn current_cpu() -> Option<usize> {
        // SAFETY: sched_getcpu has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok().filter(|&c| c < MAX_CPUS)
    }

    pub(super) fn mask_of_this_thread() -> Option<CpuSet> {
        // SAFETY: an all-zero cpu_set_t is a valid (empty) set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a writable cpu_set_t of the size passed.
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        if rc != 0 {
            return None;
        }
        // SAFETY: every index is below the set's capacity.
        let cpus = (0..MAX_CPUS).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) });
        Some(CpuSet(cpus.collect()))
    }

    /// Sets the mask of thread `tid` (0: the calling thread); whether it took.
    pub(super) fn set_mask(tid: i32, cpus: &CpuSet) -> bool {
        // SAFETY: as above.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &cpus.0 {
            // SAFETY: the set's CPUs are below MAX_CPUS (read from a cpu_set_t).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: `set` is a cpu_set_t of the size passed; a thread id that is gone only fails.
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use super::CpuSet;

    pub(super) const MAX_CPUS: usize = 0;

    pub(super) fn thread_id() -> i32 {
        0
    }

    pub(super) fn current_cpu() -> Option<usize> {
        None
    }

    pub(super) fn mask_of_this_thread() -> Option<CpuSet> {
        None
    }

    pub(super) fn set_mask(_tid: i32, _cpus: &CpuSet) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_without_a_cpu_keeps_the_others_and_never_empties() {
        let set = CpuSet(vec![0, 2, 5]);
        assert_eq!(set.without(2), Some(CpuSet(vec![0, 5])));
        assert_eq!(set.without(1), None, "not in the set: nothing to leave out");
        assert_eq!(CpuSet(vec![3]).without(3), None, "a single CPU stays");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_woken_worker_gets_its_full_mask_back() {
        // This thread plays a sleeping worker woken from another CPU, then wakes.
        let Some(full) = CpuSet::of_this_thread().filter(|c| c.count() > 1) else {
            return; // one CPU: nothing is ever left out
        };
        let placement = Placement::new(1);
        placement.register(0);
        // A waker on the first CPU other than this thread's current one.
        let here = sys::current_cpu().expect("Linux reports the current CPU");
        let waker = *full.0.iter().find(|&&c| c != here).expect("two CPUs");
        let narrowed = full.without(waker).expect("two CPUs");
        let waker_thread = std::thread::spawn({
            let mask = CpuSet(vec![waker]);
            move || {
                // Where the system refuses masks (a sandbox), there is nothing to test.
                let bound = sys::set_mask(0, &mask);
                if bound {
                    assert_eq!(sys::current_cpu(), Some(waker));
                    placement.before_wake(|_| true);
                }
                (placement, bound)
            }
        });
        let (placement, bound) = waker_thread.join().expect("the waker ran");
        if !bound {
            eprintln!("sched_setaffinity refused: not tested");
            return;
        }
        assert_eq!(
            CpuSet::of_this_thread(),
            Some(narrowed),
            "the waker's CPU left out"
        );
        placement.after_wake(0);
        assert_eq!(CpuSet::of_this_thread(), Some(full), "the full mask back");
    }
}
