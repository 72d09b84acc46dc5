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
//!
//! A worker that has just started is in the same place: Linux queues a new thread on its
//! creator's CPU, or runs it there at once ahead of its creator, and the runtime starts as the
//! program does (the generated programs start it from a constructor), whose main thread keeps
//! running. Measured on a 2-core Zen 3 VM (jacobi-1d at EXTRALARGE, whose kernel begins a tenth
//! of a millisecond after the runtime starts): in half of the runs the worker shared its
//! creator's CPU for milliseconds while the other CPU idled, first run 1 to 2.7 ms after its
//! creation or yielding to the main thread at each look for work, and ran none or few of the
//! graph's 272 tasks (1.5 to 3 ms, no faster than one thread). So the creator leaves its own
//! CPU out of each new worker's mask ([`Placement::place_new`]), which moves a worker that has
//! not run yet (it starts 60 to 100 us later on another CPU), and a worker that starts on its
//! creator's CPU all the same moves itself off it ([`Placement::register`]); either way it then
//! has the full mask back.

use std::sync::atomic::{AtomicI32, Ordering};

/// The workers' kernel thread ids and the CPU each one's mask leaves out, and the CPUs the
/// process may run on (read when the runtime starts).
pub(crate) struct Placement {
    cpus: Option<CpuSet>,
    /// The CPU of the thread that created the placement (the runtime's creator, which spawns
    /// the workers), when it was created.
    creator: Option<usize>,
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
            creator: cpus.as_ref().and_then(|_| sys::current_cpu()),
            cpus,
            tids: (0..n_workers).map(|_| AtomicI32::new(0)).collect(),
            left_out: (0..n_workers).map(|_| AtomicI32::new(-1)).collect(),
        }
    }

    /// Worker `index`, starting: records its thread id; gives itself the full mask back if its
    /// creator narrowed it ([`Placement::place_new`]; the two are called under the sleep mutex,
    /// so a worker that has started is never narrowed by its creator), or else, where it runs
    /// on its creator's CPU, moves off it (its mask without that CPU, which migrates it at once,
    /// then the full mask).
    pub(crate) fn register(&self, index: usize) {
        let Some(cpus) = &self.cpus else { return };
        self.tids[index].store(sys::thread_id(), Ordering::Relaxed);
        if self.left_out[index].load(Ordering::Relaxed) >= 0 {
            self.after_wake(index);
            return;
        }
        let Some(creator) = self.creator else { return };
        if sys::current_cpu() != Some(creator) {
            return;
        }
        if let Some(mask) = cpus.without(creator) {
            if sys::set_mask(0, &mask) {
                sys::set_mask(0, cpus);
            }
        }
    }

    /// The creator of worker `index`, just after spawning it as `thread`: unless the worker has
    /// started, leaves the creator's CPU out of the worker's mask, so that it starts on another
    /// CPU rather than queued behind its creator.
    pub(crate) fn place_new<T>(&self, index: usize, thread: &std::thread::JoinHandle<T>) {
        let Some(cpus) = &self.cpus else { return };
        if self.tids[index].load(Ordering::Relaxed) != 0 {
            return;
        }
        let Some(here) = sys::current_cpu() else {
            return;
        };
        let Some(mask) = cpus.without(here) else {
            return;
        };
        if sys::set_thread_mask(thread, &mask) {
            self.left_out[index].store(here as i32, Ordering::Relaxed);
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

    fn cpu_set(cpus: &CpuSet) -> libc::cpu_set_t {
        // SAFETY: as above.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &cpus.0 {
            // SAFETY: the set's CPUs are below MAX_CPUS (read from a cpu_set_t).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        set
    }

    /// Sets the mask of thread `tid` (0: the calling thread); whether it took.
    pub(super) fn set_mask(tid: i32, cpus: &CpuSet) -> bool {
        let set = cpu_set(cpus);
        // SAFETY: `set` is a cpu_set_t of the size passed; a thread id that is gone only fails.
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) == 0 }
    }

    /// Sets the mask of `thread`, a thread of this process; whether it took.
    pub(super) fn set_thread_mask<T>(thread: &std::thread::JoinHandle<T>, cpus: &CpuSet) -> bool {
        use std::os::unix::thread::JoinHandleExt;
        let set = cpu_set(cpus);
        // SAFETY: the handle is not joined while it is borrowed, so its pthread is alive (or a
        // thread that has exited and not been joined, which only fails); `set` is a cpu_set_t
        // of the size passed.
        unsafe {
            libc::pthread_setaffinity_np(thread.as_pthread_t(), std::mem::size_of_val(&set), &set)
                == 0
        }
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

    pub(super) fn set_thread_mask<T>(_thread: &std::thread::JoinHandle<T>, _cpus: &CpuSet) -> bool {
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

    /// A placement over `cpus` as if created on `creator`.
    fn placement(cpus: &CpuSet, creator: usize) -> Placement {
        Placement {
            cpus: Some(cpus.clone()),
            creator: Some(creator),
            tids: vec![AtomicI32::new(0)].into(),
            left_out: vec![AtomicI32::new(-1)].into(),
        }
    }

    /// Runs `f` on a thread bound to `cpu` (the mask set before `f` runs); `None` where the
    /// system refuses masks (a sandbox).
    #[cfg(target_os = "linux")]
    fn on_cpu<T: Send>(cpu: usize, f: impl FnOnce() -> T + Send) -> Option<T> {
        std::thread::scope(|s| {
            s.spawn(|| sys::set_mask(0, &CpuSet(vec![cpu])).then(f))
                .join()
                .expect("the thread ran")
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_worker_that_starts_on_its_creators_cpu_moves_off_it() {
        let Some(full) = CpuSet::of_this_thread().filter(|c| c.count() > 1) else {
            return; // one CPU: nowhere to move
        };
        let creator = full.0[0];
        let placement = placement(&full, creator);
        // A worker that runs on the creator's CPU with the full mask as it registers (giving a
        // running thread a wider mask does not move it).
        let after = on_cpu(creator, || {
            assert!(sys::set_mask(0, &full), "the full mask back");
            assert_eq!(
                sys::current_cpu(),
                Some(creator),
                "still where it was bound"
            );
            placement.register(0);
            (sys::current_cpu(), CpuSet::of_this_thread())
        });
        let Some((cpu, mask)) = after else {
            eprintln!("sched_setaffinity refused: not tested");
            return;
        };
        assert_ne!(cpu, Some(creator), "moved off the creator's CPU");
        assert_eq!(mask, Some(full), "with the full mask");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_new_worker_starts_off_its_creators_cpu_with_the_full_mask_back() {
        let Some(full) = CpuSet::of_this_thread().filter(|c| c.count() > 1) else {
            return;
        };
        let creator = full.0[0];
        let placement = std::sync::Arc::new(placement(&full, creator));
        // The creator runs on its CPU; the worker it spawns waits until it is placed.
        let outcome = on_cpu(creator, || {
            let (go, wait) = std::sync::mpsc::channel::<()>();
            let worker = std::thread::spawn({
                let placement = std::sync::Arc::clone(&placement);
                move || {
                    wait.recv().expect("the creator placed this thread");
                    let placed = (sys::current_cpu(), CpuSet::of_this_thread());
                    placement.register(0);
                    (placed, CpuSet::of_this_thread())
                }
            });
            placement.place_new(0, &worker);
            go.send(()).expect("the worker waits");
            worker.join().expect("the worker ran")
        });
        let Some(((cpu, placed_mask), registered_mask)) = outcome else {
            eprintln!("sched_setaffinity refused: not tested");
            return;
        };
        assert_ne!(cpu, Some(creator), "started off the creator's CPU");
        assert_eq!(
            placed_mask,
            full.without(creator),
            "the creator's CPU left out"
        );
        assert_eq!(registered_mask, Some(full), "the full mask once registered");
    }
}
