//! The CPU time of a thread that runs ISL, so that the scheduler is bounded by the work it did
//! rather than by wall-clock time, which grows with the machine's load (see
//! `ScheduleConfig::time_limit`). Here because it is `unsafe` (`libc` calls), which this crate
//! keeps in its `isl` module.

use std::marker::PhantomData;
use std::os::unix::thread::JoinHandleExt;
use std::thread::JoinHandle;
use std::time::Duration;

/// The CPU-time clock of another thread, valid while that thread's handle is neither joined nor
/// dropped (the borrow sees to it).
pub struct ThreadCpuClock<'h> {
    id: libc::clockid_t,
    handle: PhantomData<&'h ()>,
}

impl<'h> ThreadCpuClock<'h> {
    /// The clock of the thread of `handle`; `None` where the system has none.
    pub fn of<T>(handle: &'h JoinHandle<T>) -> Option<Self> {
        let mut id: libc::clockid_t = 0;
        // SAFETY: the handle is borrowed, so its thread is not joined or detached and its
        // `pthread_t` is valid; `id` is a valid place for the result.
        let rc = unsafe { libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut id) };
        (rc == 0).then_some(ThreadCpuClock {
            id,
            handle: PhantomData,
        })
    }

    /// The CPU time the thread has used; `None` once it has exited.
    pub fn used(&self) -> Option<Duration> {
        read_clock(self.id)
    }
}

/// The CPU time used by a group of threads: one that does bounded work and the threads it
/// starts to share it (the fusion candidates of a SCoP, its scheduler runs), so that a bound on
/// the work counts all of them. A thread joins with [`CpuGroup::enter`] and leaves when the guard
/// drops; [`CpuGroup::current`] is the calling thread's group, which a thread passes on to the
/// threads it starts.
#[derive(Debug, Default)]
pub struct CpuGroup {
    threads: std::sync::Mutex<GroupThreads>,
}

#[derive(Debug, Default)]
struct GroupThreads {
    /// CPU time of the threads that left the group.
    left: Duration,
    /// The clocks of the threads in the group now: valid while they are listed, since a thread
    /// takes itself off the list (under the lock) before it ends.
    live: Vec<libc::clockid_t>,
    /// Whether some clock could not be read: the total is then unknown.
    unknown: bool,
}

thread_local! {
    static CURRENT_GROUP: std::cell::RefCell<Option<std::sync::Arc<CpuGroup>>> =
        const { std::cell::RefCell::new(None) };
}

/// The calling thread's membership of a [`CpuGroup`]; dropping it leaves the group.
#[must_use = "the thread leaves the group when this is dropped"]
pub struct GroupMember {
    group: std::sync::Arc<CpuGroup>,
    clock: Option<libc::clockid_t>,
    /// The group the thread was in before (restored on leaving).
    outer: Option<std::sync::Arc<CpuGroup>>,
}

impl CpuGroup {
    /// The calling thread's group, if it entered one.
    pub fn current() -> Option<std::sync::Arc<CpuGroup>> {
        CURRENT_GROUP.with(|g| g.borrow().clone())
    }

    /// Adds the calling thread to `group` (its CPU time from its start, as the group counts
    /// whole threads) until the returned guard drops.
    pub fn enter(group: &std::sync::Arc<CpuGroup>) -> GroupMember {
        let mut id: libc::clockid_t = 0;
        // SAFETY: `pthread_self()` is the calling thread, alive during the call; `id` is a valid
        // place for the result.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        let clock = (rc == 0).then_some(id);
        let mut threads = group.lock();
        match clock {
            Some(id) => threads.live.push(id),
            None => threads.unknown = true,
        }
        drop(threads);
        let outer = CURRENT_GROUP.with(|g| g.replace(Some(std::sync::Arc::clone(group))));
        GroupMember {
            group: std::sync::Arc::clone(group),
            clock,
            outer,
        }
    }

    /// The CPU time the group's threads have used, those that left included; `None` where some
    /// thread's clock could not be read.
    pub fn used(&self) -> Option<Duration> {
        let threads = self.lock();
        if threads.unknown {
            return None;
        }
        let mut total = threads.left;
        for &id in &threads.live {
            total += read_clock(id)?;
        }
        Some(total)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GroupThreads> {
        self.threads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for GroupMember {
    fn drop(&mut self) {
        let mut threads = self.group.lock();
        if let Some(id) = self.clock {
            match this_thread_cpu_time() {
                Some(t) => threads.left += t,
                None => threads.unknown = true,
            }
            if let Some(at) = threads.live.iter().position(|&c| c == id) {
                threads.live.swap_remove(at);
            }
        }
        drop(threads);
        let outer = self.outer.take();
        CURRENT_GROUP.with(|g| *g.borrow_mut() = outer);
    }
}

/// The CPU time the calling thread has used.
pub fn this_thread_cpu_time() -> Option<Duration> {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn read_clock(id: libc::clockid_t) -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid place for the result; an invalid clock is an error return.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    match rc {
        0 => Some(Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_uses_cpu_time_and_a_sleeping_one_almost_none() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let busy = std::thread::spawn(move || {
            let mut x = 0u64;
            while rx.try_recv().is_err() {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        });
        let sleeper = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(300)));
        let (b, s) = (
            ThreadCpuClock::of(&busy).unwrap(),
            ThreadCpuClock::of(&sleeper).unwrap(),
        );
        let start = std::time::Instant::now();
        while b.used().unwrap() < Duration::from_millis(50) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the busy thread's clock does not advance"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(s.used().unwrap() < Duration::from_millis(50));
        tx.send(()).unwrap();
        busy.join().unwrap();
        sleeper.join().unwrap();
        assert!(this_thread_cpu_time().is_some());
    }

    #[test]
    fn a_group_counts_its_threads_running_and_gone() {
        let group = std::sync::Arc::new(CpuGroup::default());
        let spin = |d: Duration| {
            let start = this_thread_cpu_time().unwrap();
            let mut x = 0u64;
            while this_thread_cpu_time().unwrap() - start < d {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        };
        assert!(CpuGroup::current().is_none());
        let member = CpuGroup::enter(&group);
        let inner = CpuGroup::current().expect("entered");
        // A thread started by a member, entering the member's group: 100 ms, then gone.
        std::thread::spawn(move || {
            let _m = CpuGroup::enter(&inner);
            spin(Duration::from_millis(100));
        })
        .join()
        .unwrap();
        let after_child = group.used().unwrap();
        assert!(after_child >= Duration::from_millis(100), "{after_child:?}");
        // This thread's own time counts while it is in the group.
        spin(Duration::from_millis(50));
        assert!(group.used().unwrap() >= after_child + Duration::from_millis(50));
        drop(member);
        assert!(CpuGroup::current().is_none());
        let total = group.used().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        spin(Duration::from_millis(20));
        assert_eq!(group.used().unwrap(), total, "no thread left in the group");
    }
}
