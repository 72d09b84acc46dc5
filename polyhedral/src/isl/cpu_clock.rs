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
}
