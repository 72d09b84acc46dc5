//! The thread pool's shared state: where ready tasks wait (each worker's work-stealing deque and
//! the shared injector), how idle threads sleep and are woken, and the observer.
//!
//! [`Queues`] is generic over the handle it queues, so this module knows nothing of tasks: the
//! module `task` runs a task and pushes the tasks it made ready here (through a [`Sink`]), its
//! control side ([`crate::task::Core`]) waits for its graph by taking tasks from here, and the
//! module `runtime` starts the worker threads around one `Queues<TaskRef>`. The layering is
//! `runtime` -> `task` -> `queues`, with no way back up.
//!
//! Each worker owns a LIFO [`crossbeam_deque::Worker`]: the tasks it makes ready go there, and
//! other threads steal from the other end. A control thread pushes the tasks it makes ready to
//! the shared [`Injector`]. A task that prefers a thread (its stream is spread over the threads,
//! [`crate::stream::Stream::home`]) goes to that thread's *home* queue instead, a FIFO that the
//! thread looks at right after its own deque and that any other thread empties only when it has
//! nothing else to do. Idle threads sleep on one condition variable; the sleep/wake protocol is
//! described in the crate's `README.md` (section "Sleeping").

#![forbid(unsafe_code)]

use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};

use crate::observe::Observer;
use crate::placement::Placement;

/// Where the tasks made ready by a finishing task go.
pub(crate) enum Sink<'a, T> {
    /// The running worker's own deque, and the worker's slot (`1 + index`, for the observer).
    Local(&'a Worker<T>, usize),
    /// The shared injector (control threads, slot 0).
    Global,
}

impl<T> Sink<'_, T> {
    /// The running thread's slot in the observer: 0 for control threads, `1 + i` for worker `i`.
    pub(crate) fn slot(&self) -> usize {
        match self {
            Sink::Local(_, slot) => *slot,
            Sink::Global => 0,
        }
    }
}

/// The queues of ready tasks `T` of one runtime, shared by its workers and its graphs.
pub(crate) struct Queues<T> {
    injector: Injector<T>,
    stealers: Box<[Stealer<T>]>,
    /// One home queue per slot: 0 for the control threads, `1 + i` for worker `i`.
    homes: Box<[Injector<T>]>,
    n_threads: usize,
    sleep: Sleep,
    /// Whether worker `i` sleeps (written under the sleep mutex).
    asleep: Box<[AtomicBool]>,
    /// The workers' CPU masks around their wake-ups.
    placement: Placement,
    /// Trace and statistics (both off unless asked for).
    pub(crate) obs: Observer,
}

/// How long an idle thread (a worker, or a control thread waiting for its graph) looks for work
/// before it sleeps. A sleeping thread wakes through the kernel: on a VM 40 to 60 us pass
/// between the notification and its first task. Where tasks become ready in waves (adi's
/// sweeps: 16 tiles of about 0.2 ms, each needing every tile of the sweep before), each wave
/// began with that delay on the thread that had run out of work first. With 32 yields before
/// sleeping (about 30 us) and no looking at all on the control thread, a trace of adi at LARGE
/// on 2 threads put 119 ms of the threads' time between the end of a sweep and their next task;
/// 8.5 ms when they look for 3 ms. The 30 kernels at LARGE on 2 threads (EXTRALARGE for the short
/// ones; the same code linked with either runtime, medians of 5 to 21 runs in rounds): adi 1.785
/// -> 1.751 s, floyd-warshall 1.83 -> 1.71 s, doitgen 9% faster in the first round, the others
/// within their noise (geomean 1.003 before the short ones' reruns). 250 us covers the end of
/// a wave and is short against a sleep that lasts (`tests/sleep.rs`).
pub(crate) const SPIN_TIME: Duration = Duration::from_micros(250);

/// Sleep state: one mutex and condition variable for all idle threads.
///
/// `sleepers` counts threads between their registration (under the mutex) and their wake-up;
/// `control_sleepers` those of them that are control threads waiting for their graph. A thread
/// registers, then issues a SeqCst fence, then checks for work (and, for a control thread, its
/// graph word) before waiting; a thread that publishes work (or makes a graph idle) issues a
/// SeqCst fence after publishing and then reads the counter. One of the two sees the other's
/// write, and notifications are sent under the mutex, which the sleeper holds from its
/// registration until `wait` releases it: no wake-up is lost.
#[derive(Default)]
struct Sleep {
    mutex: Mutex<()>,
    cv: Condvar,
    shutdown: AtomicBool,
    sleepers: AtomicUsize,
    control_sleepers: AtomicUsize,
}

impl Sleep {
    fn lock(&self) -> MutexGuard<'_, ()> {
        self.mutex.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, ()>) -> MutexGuard<'a, ()> {
        self.cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Queues<T> {
    /// The queues of a runtime of `n_threads` threads whose workers own `locals` (one deque
    /// each, `n_threads - 1` of them).
    pub(crate) fn new(locals: &[Worker<T>], n_threads: usize, obs: Observer) -> Queues<T> {
        Queues {
            injector: Injector::new(),
            stealers: locals.iter().map(Worker::stealer).collect(),
            homes: (0..n_threads.max(locals.len() + 1))
                .map(|_| Injector::new())
                .collect(),
            n_threads,
            sleep: Sleep::default(),
            asleep: locals.iter().map(|_| AtomicBool::new(false)).collect(),
            placement: Placement::new(locals.len()),
            obs,
        }
    }

    /// Number of threads, the control thread included.
    pub(crate) fn n_threads(&self) -> usize {
        self.n_threads
    }

    /// Hands a ready task to `sink`. The caller then calls [`Queues::notify_work`].
    pub(crate) fn push(&self, sink: &Sink<'_, T>, task: T) {
        match sink {
            Sink::Local(local, _) => local.push(task),
            Sink::Global => self.injector.push(task),
        }
    }

    /// Hands a ready task to the home queue of slot `home` (0: the control threads, `1 + i`:
    /// worker `i`). The caller then calls [`Queues::notify_work`].
    pub(crate) fn push_home(&self, home: usize, task: T) {
        self.homes[home.min(self.homes.len() - 1)].push(task);
    }

    /// About how many tasks wait in the shared injector and the home queues.
    pub(crate) fn queued(&self) -> usize {
        self.injector.len() + self.homes.iter().map(Injector::len).sum::<usize>()
    }

    /// Wakes up to `n` sleeping threads after `n` tasks were pushed.
    pub(crate) fn notify_work(&self, n: u64) {
        fence(Ordering::SeqCst);
        let sleepers = self.sleep.sleepers.load(Ordering::Relaxed);
        if sleepers == 0 {
            return;
        }
        let _lock = self.sleep.lock();
        self.placement
            .before_wake(|i| self.asleep[i].load(Ordering::Relaxed));
        for _ in 0..n.min(sleepers as u64) {
            self.sleep.cv.notify_one();
        }
    }

    /// Wakes the sleeping control threads after a graph's active count dropped to zero (its
    /// end, or the point where it is stuck).
    pub(crate) fn notify_graph_idle(&self) {
        fence(Ordering::SeqCst);
        if self.sleep.control_sleepers.load(Ordering::Relaxed) == 0 {
            return;
        }
        let _lock = self.sleep.lock();
        self.sleep.cv.notify_all();
    }

    /// Whether some thread sleeps (or is about to). A hint: read without the protocol's fence,
    /// so a thread that registers meanwhile may be missed; the next [`Queues::notify_work`]
    /// sees it.
    pub(crate) fn has_sleepers(&self) -> bool {
        self.sleep.sleepers.load(Ordering::Relaxed) > 0
    }

    /// Whether some deque, the injector or a home queue holds a task.
    pub(crate) fn has_work(&self) -> bool {
        !self.injector.is_empty()
            || self.stealers.iter().any(|s| !s.is_empty())
            || self.homes.iter().any(|h| !h.is_empty())
    }

    /// Looks for work without sleeping, for at most [`SPIN_TIME`]: returns `true` as soon as some
    /// queue holds a task or `done` holds, `false` when the time is up. The processor is yielded
    /// between two looks (other runnable threads go first where threads outnumber cores).
    pub(crate) fn spin(&self, done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        loop {
            if self.has_work() || done() {
                return true;
            }
            if start.elapsed() >= SPIN_TIME {
                return false;
            }
            thread::yield_now();
        }
    }

    /// A task for worker `me`: its own deque first, then its home queue, the injector, other
    /// workers' deques, and last the other home queues.
    pub(crate) fn find_work_worker(
        &self,
        local: &Worker<T>,
        me: usize,
        rng: &mut XorShift,
    ) -> Option<T> {
        if let Some(t) = local.pop() {
            return Some(t);
        }
        loop {
            let mut retry = false;
            match self.homes[me + 1].steal() {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            match self.injector.steal_batch_and_pop(local) {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            let n = self.stealers.len();
            let start = rng.below(n);
            for i in 0..n {
                let victim = (start + i) % n;
                if victim == me {
                    continue;
                }
                match self.stealers[victim].steal_batch_and_pop(local) {
                    Steal::Success(t) => {
                        if self.obs.on {
                            self.obs.steal(me + 1);
                        }
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            match self.steal_home(me + 1) {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                return None;
            }
        }
    }

    /// A task for a control thread: the control threads' home queue first, then the injector,
    /// the workers' deques, and last the workers' home queues.
    pub(crate) fn find_work_control(&self) -> Option<T> {
        loop {
            let mut retry = false;
            match self.homes[0].steal() {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            match self.injector.steal() {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            for stealer in self.stealers.iter() {
                match stealer.steal() {
                    Steal::Success(t) => {
                        if self.obs.on {
                            self.obs.steal(0);
                        }
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            match self.steal_home(0) {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                return None;
            }
        }
    }

    /// One task from the home queue of a slot other than `me` (their oldest, one at a time: the
    /// owner keeps the rest of its block).
    fn steal_home(&self, me: usize) -> Steal<T> {
        let mut retry = false;
        for (slot, home) in self.homes.iter().enumerate() {
            if slot == me {
                continue;
            }
            match home.steal() {
                Steal::Success(t) => {
                    if self.obs.on {
                        self.obs.steal(me);
                    }
                    return Steal::Success(t);
                }
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
        }
        if retry {
            Steal::Retry
        } else {
            Steal::Empty
        }
    }

    /// A control thread sleeps until there may be work or `graph_idle` holds (its graph's
    /// active count reached zero). `graph_idle` is read after the registration, as the
    /// protocol requires; whoever makes it true calls [`Queues::notify_graph_idle`].
    pub(crate) fn sleep_control(&self, graph_idle: impl Fn() -> bool) {
        let sleep = &self.sleep;
        let guard = sleep.lock();
        sleep.sleepers.fetch_add(1, Ordering::SeqCst);
        sleep.control_sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let guard = if graph_idle() || self.has_work() {
            guard
        } else if self.obs.on {
            let since = self.obs.now();
            let guard = sleep.wait(guard);
            self.obs.idle(0, since);
            guard
        } else {
            sleep.wait(guard)
        };
        sleep.control_sleepers.fetch_sub(1, Ordering::Relaxed);
        sleep.sleepers.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
    }

    /// Worker `index` starts (before it looks for work).
    pub(crate) fn register_worker(&self, index: usize) {
        let _lock = self.sleep.lock();
        self.placement.register(index);
    }

    /// Worker `index` was just spawned as `thread`: it is to start off this thread's CPU.
    pub(crate) fn place_new_worker(&self, index: usize, thread: &std::thread::JoinHandle<()>) {
        let _lock = self.sleep.lock();
        self.placement.place_new(index, thread);
    }

    /// Worker `index` sleeps until there may be work. Returns `false` when the runtime shuts
    /// down.
    pub(crate) fn sleep_worker(&self, index: usize) -> bool {
        let sleep = &self.sleep;
        let guard = sleep.lock();
        if sleep.shutdown.load(Ordering::Relaxed) {
            return false;
        }
        sleep.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let guard = if self.has_work() {
            guard
        } else {
            self.asleep[index].store(true, Ordering::Relaxed);
            let guard = sleep.wait(guard);
            self.asleep[index].store(false, Ordering::Relaxed);
            guard
        };
        sleep.sleepers.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
        self.placement.after_wake(index);
        true
    }

    /// Tells the workers to stop once idle: sleeping ones wake and return `false` from
    /// [`Queues::sleep_worker`], busy ones at their next sleep.
    pub(crate) fn shut_down(&self) {
        let _lock = self.sleep.lock();
        self.sleep.shutdown.store(true, Ordering::Relaxed);
        self.sleep.cv.notify_all();
    }
}

/// A small xorshift generator for picking steal victims.
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A value in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            (self.0 % n as u64) as usize
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::observe::Observe;

    fn queues(locals: &[Worker<u32>]) -> Queues<u32> {
        let obs = Observer::new(&Observe::default(), locals.len() + 1).unwrap();
        Queues::new(locals, locals.len() + 1, obs)
    }

    #[test]
    fn a_thread_takes_its_own_deque_then_its_home_then_the_others() {
        let locals = [Worker::new_lifo(), Worker::new_lifo()];
        let q = queues(&locals);
        let mut rng = XorShift::new(1);
        q.push_home(2, 20);
        q.push_home(2, 21);
        q.push_home(0, 1);
        q.push(&Sink::Global, 9);
        q.push_home(1, 10);
        locals[0].push(5);
        assert_eq!(q.queued(), 5, "the injector and the home queues");
        // Worker 0 (slot 1): its deque, its home, the injector, then another home's oldest.
        let taken: Vec<_> = (0..4)
            .map(|_| q.find_work_worker(&locals[0], 0, &mut rng))
            .collect();
        assert_eq!(taken, [Some(5), Some(10), Some(9), Some(1)]);
        // The control threads take their home first; with it empty, a worker's home.
        q.push_home(0, 2);
        assert_eq!(q.find_work_control(), Some(2));
        assert_eq!(q.find_work_control(), Some(20));
        assert!(q.has_work());
        assert_eq!(q.find_work_worker(&locals[1], 1, &mut rng), Some(21));
        assert!(!q.has_work());
        assert_eq!(q.find_work_control(), None);
    }

    #[test]
    fn spin_returns_at_once_when_there_is_work_or_the_wait_is_over() {
        let q = queues(&[Worker::new_lifo()]);
        assert!(q.spin(|| true), "a done wait");
        q.push(&Sink::Global, 7);
        assert!(q.spin(|| false), "a queued task");
    }

    #[test]
    fn spin_gives_up_after_its_time_without_work() {
        let q = queues(&[Worker::new_lifo()]);
        let start = Instant::now();
        assert!(!q.spin(|| false));
        assert!(start.elapsed() >= SPIN_TIME);
    }

    #[test]
    fn spin_sees_a_task_another_thread_pushes() {
        let local = Worker::new_lifo();
        let q = queues(std::slice::from_ref(&local));
        let pushed = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                // The main thread pushes about 50 us after this starts: spin (again, if one
                // spin ends first) until a spin sees the task.
                while !pushed.load(Ordering::Acquire) {
                    if q.spin(|| false) {
                        return;
                    }
                }
                // The push came between two spins: the next one sees it at once.
                assert!(q.spin(|| false));
            });
            std::thread::sleep(Duration::from_micros(50));
            q.push(&Sink::Local(&local, 1), 3);
            pushed.store(true, Ordering::Release);
        });
        assert_eq!(local.pop(), Some(3));
    }
}
