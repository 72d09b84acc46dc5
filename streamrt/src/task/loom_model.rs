//! Model test of the dependence protocol with loom: every interleaving (up to a preemption
//! bound) of the control thread registering a task and the producers of its inputs publishing
//! their tokens, with loom's model of the C11 memory orderings. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p streamrt --lib --release loom` (tests/loom.rs does).
//!
//! The threads run the protocol's own steps (`wait_on`, `release_guard`, `publish`,
//! `wake_waiters`, `count_down`, the graph word's `activate` / `deactivate` / `finish_one` /
//! `snapshot`);
//! only the hand-over of a ready task to the thread that runs it is modelled (the thread that
//! made it ready runs it, as `TaskRef::run`'s kept successor does). Checked in every
//! execution:
//! - a task runs exactly once, after the writes of every producer of its inputs (loom reports a
//!   data race on the producers' cells otherwise);
//! - the control thread's end-of-graph wait never sees `active == 0` before every task finished
//!   (the "stuck" verdict is exact), and when it sees `finished == spawned` every body's writes
//!   are visible to it; also when the control thread counts activations ahead and gives back
//!   those it did not use before it waits (`Core`'s credit).
//!
//! Mutation check done by hand: a Relaxed `publish` swap, or a Relaxed graph-word update in
//! `finish_one`, makes loom report a data race.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

use super::*;

/// Raw pointers shared by the model's threads.
struct Shared {
    graph: GraphState,
    /// The token slots: one per producer, then one for a barrier or the consumer.
    slots: Vec<AtomicPtr<()>>,
    /// What producer `i` writes before publishing its token.
    data: Vec<UnsafeCell<u32>>,
    /// The consumer and (scenario 2) the barrier records.
    consumer: *mut Task,
    /// Whether the control thread runs a task ready at spawn at once, uncounted (`release`'s
    /// path when it is ahead), rather than counting it active first.
    inline: bool,
    /// Activations the control thread counted ahead and has not used (`Core::credit`), when
    /// it counts them ahead: `None` when it counts each at the spawn. Only the control thread
    /// touches it.
    credit: Option<AtomicU64>,
    barrier: *mut Task,
    consumer_runs: AtomicUsize,
    /// What the consumer writes; the control thread reads it after the graph.
    result: UnsafeCell<u32>,
}

// SAFETY: the records are shared the way the runtime shares them (the protocol decides who owns
// them when); the test frees them after every thread joined.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    fn new(n_producers: usize, barrier: bool, inline: bool, credit: bool) -> Shared {
        let record = || Box::into_raw(Box::new(Task::vacant()));
        Shared {
            graph: GraphState::new(),
            slots: (0..n_producers + 1)
                .map(|_| AtomicPtr::new(EMPTY))
                .collect(),
            data: (0..n_producers).map(|_| UnsafeCell::new(0)).collect(),
            consumer: record(),
            inline,
            credit: credit.then(|| AtomicU64::new(0)),
            barrier: if barrier { record() } else { ptr::null_mut() },
            consumer_runs: AtomicUsize::new(0),
            result: UnsafeCell::new(0),
        }
    }

    /// The consumer's body: every producer's write must be visible; then it finishes.
    fn run_consumer(&self, counted: bool) {
        for cell in &self.data {
            // SAFETY: loom checks that the producer's write happens before this read.
            assert_eq!(
                cell.with(|p| unsafe { *p }),
                1,
                "an input's write is not visible"
            );
        }
        self.consumer_runs.fetch_add(1, Ordering::Relaxed);
        // SAFETY: loom checks this write against the control thread's read after the graph.
        self.result.with_mut(|p| unsafe { *p = 7 });
        self.graph.finish_one(0, counted);
    }

    /// The barrier's (empty) run: publish its token and run the consumer if that made it ready.
    fn run_barrier(&self, counted: bool) {
        let slot = self.slots.len() - 1;
        let head = publish(&self.slots[slot]).expect("barrier published once");
        let mut ready = ptr::null_mut();
        // SAFETY: the list our publication took.
        let n = unsafe { wake_waiters(head, &mut ready) };
        self.graph.finish_one(n, counted);
        self.run_ready(ready, n, true);
    }

    /// Runs the `n` tasks of the ready list `ready` (this thread owns them; `counted`: they are
    /// counted active).
    fn run_ready(&self, ready: *mut Task, n: u64, counted: bool) {
        let mut t = ready;
        for _ in 0..n {
            assert!(!t.is_null());
            // SAFETY: we own the ready tasks; read the link before running.
            let next = unsafe { (*t).link };
            if t == self.consumer {
                self.run_consumer(counted);
            } else {
                assert_eq!(t, self.barrier, "an unknown task became ready");
                self.run_barrier(counted);
            }
            t = next;
        }
        assert!(t.is_null(), "more tasks in the ready list than counted");
    }

    /// Producer `i`: writes its data, publishes its token, wakes its waiters (scenario 1), or
    /// arrives at the barrier (scenario 2), then finishes.
    fn producer(&self, i: usize) {
        // SAFETY: loom checks this write against the consumer's reads.
        self.data[i].with_mut(|p| unsafe { *p = 1 });
        let head = publish(&self.slots[i]).expect("token published once");
        let mut ready = ptr::null_mut();
        // SAFETY: the list our publication took.
        let mut n = unsafe { wake_waiters(head, &mut ready) };
        if !self.barrier.is_null() {
            // SAFETY: the barrier admits one arrival per producer; it is alive until the last.
            n += u64::from(unsafe { count_down(self.barrier, &mut ready) });
        }
        self.graph.finish_one(n, true);
        self.run_ready(ready, n, true);
    }

    /// Control thread: sets up `task` with the token slots `inputs` (and `extra` arrivals),
    /// registers it, and runs it if that made it ready.
    fn spawn(&self, task: *mut Task, inputs: &[usize], extra: usize) {
        // SAFETY: a vacant record owned by this thread until the guard release.
        unsafe {
            (*task)
                .missing
                .store(inputs.len() + extra + 1, Ordering::Relaxed);
            (*task).n_waits = inputs.len();
        }
        let mut satisfied = 0;
        for (i, &slot) in inputs.iter().enumerate() {
            // SAFETY: registering; node `i` is unpublished.
            if unsafe { wait_on(&self.slots[slot], task, Task::node(task, i)) } {
                satisfied += 1;
            }
        }
        // SAFETY: registering, with `satisfied` inputs found produced.
        if unsafe { release_guard(task, satisfied) } {
            if self.inline {
                self.run_ready(task, 1, false);
            } else {
                match &self.credit {
                    Some(left) => {
                        let n = left.load(Ordering::Relaxed);
                        assert!(n > 0, "the scenario counted too few activations ahead");
                        left.store(n - 1, Ordering::Relaxed);
                    }
                    None => self.graph.activate(1),
                }
                self.run_ready(task, 1, true);
            }
        }
    }

    /// The end-of-graph wait, as `Core::wait_graph` reads the graph word; then, before any
    /// join, every task's writes must be visible (as a C program reads its arrays after
    /// `tf_graph_end`).
    fn wait_graph(&self, spawned: u64) {
        if let Some(left) = &self.credit {
            self.graph.deactivate(left.swap(0, Ordering::Relaxed));
        }
        loop {
            let (finished, active) = self.graph.snapshot();
            if finished == spawned {
                // SAFETY: loom checks that the writes happen before these reads.
                assert_eq!(self.result.with(|p| unsafe { *p }), 7);
                for cell in &self.data {
                    // SAFETY: as above.
                    assert_eq!(cell.with(|p| unsafe { *p }), 1);
                }
                return;
            }
            assert!(
                active > 0,
                "stuck verdict with {finished} of {spawned} finished"
            );
            thread::yield_now();
        }
    }

    fn free(self) {
        for t in [self.consumer, self.barrier] {
            if !t.is_null() {
                // SAFETY: every thread joined; each record was allocated once above.
                drop(unsafe { Box::from_raw(t) });
            }
        }
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

#[test]
fn loom_a_task_waits_for_two_producers_registered_concurrently() {
    two_producers_one_consumer(false);
}

#[test]
fn loom_a_task_ready_at_spawn_runs_inline_uncounted() {
    two_producers_one_consumer(true);
}

#[test]
fn loom_activations_counted_ahead_are_given_back_before_the_wait() {
    model(|| {
        let shared = Arc::new(Shared::new(2, false, false, true));
        // One spare activation beyond the consumer's: used when it is ready at its spawn,
        // given back otherwise.
        shared.credit.as_ref().unwrap().store(2, Ordering::Relaxed);
        shared.graph.activate(2);
        run_scenario(shared, |s| s.spawn(s.consumer, &[0, 1], 0), 3);
    });
}

fn two_producers_one_consumer(inline: bool) {
    model(move || {
        let shared = Arc::new(Shared::new(2, false, inline, false));
        run_scenario(shared, |s| s.spawn(s.consumer, &[0, 1], 0), 3);
    });
}

#[test]
fn loom_a_counted_barrier_and_its_reader() {
    model(|| {
        let shared = Arc::new(Shared::new(2, true, false, false));
        // The barrier first (count 2, no inputs), as a control program declares it.
        shared.spawn(shared.barrier, &[], 2);
        // The reader waits for the barrier's token (the last slot).
        run_scenario(shared, |s| s.spawn(s.consumer, &[2], 0), 4);
    });
}

/// Starts the two producers (ready at spawn: counted active, then handed to their threads),
/// runs `control` on this thread, waits for the graph's `spawned` tasks, and checks that the
/// consumer ran once.
fn run_scenario(shared: Arc<Shared>, control: impl FnOnce(&Shared), spawned: u64) {
    shared.graph.activate(1);
    shared.graph.activate(1);
    let producers: Vec<_> = (0..2)
        .map(|i| {
            let s = Arc::clone(&shared);
            thread::spawn(move || s.producer(i))
        })
        .collect();
    control(&shared);
    shared.wait_graph(spawned);
    for p in producers {
        p.join().unwrap();
    }
    assert_eq!(shared.consumer_runs.load(Ordering::Relaxed), 1);
    Arc::try_unwrap(shared).ok().expect("no other owner").free();
}
