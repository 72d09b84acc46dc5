//! The control thread's side of one graph ([`Core`]): its streams, which tokens have a producer,
//! spawning (validation, the task's record, its waits on its inputs), counted barriers, helping
//! the workers when ahead of them, and the end-of-graph wait.

use super::*;

/// How the end-of-graph wait ended.
enum GraphEnd {
    /// Every spawned task finished.
    Done,
    /// Some tasks remain, none is ready or running: they can never run.
    Stuck,
}

/// The control thread's side of one graph: streams, producers, spawn count, end-of-graph wait.
///
/// `'env` bounds the data that task bodies borrow. Every task is run or freed before the core
/// is dropped ([`Core::finish`], also called by `Drop`), so a `Core<'env>` that is dropped
/// (never leaked) keeps bodies from outliving `'env`. The public API hands out graphs with a
/// non-`'static` `'env` only by `&mut` (see [`crate::scope`]), so they cannot be leaked.
pub(crate) struct Core<'env> {
    rt: Arc<Queues<TaskRef>>,
    state: Arc<GraphState>,
    streams: Vec<Arc<Stream>>,
    /// Per stream, one bit per key: a task producing this token was spawned.
    claimed: Vec<Vec<u64>>,
    spawned: u64,
    /// Activations counted in the graph word ahead of the spawns that use them, one
    /// [`CREDIT_BATCH`] at a time: the word is shared with every thread that finishes a task,
    /// and one update of it per spawn moved its cache line between the cores at every task
    /// (a third of the spawn's time with empty tasks on 2 threads). Readers of the count on
    /// this thread subtract it; [`Core::wait_graph`] gives it back first.
    credit: u64,
    /// Whether the last check found this thread ahead of the workers (more tasks queued than
    /// [`HELP_AHEAD`] per thread; always on one thread): a task ready at its spawn then runs here
    /// at once. Checked every [`HELP_PERIOD`] spawns, not at each: the queue's length is two
    /// words the workers write.
    ahead: bool,
    /// Tasks made ready at their spawn, not yet handed to the workers: pushed together, up to
    /// [`PUSH_BATCH`] at a time (see [`Core::hand_over`]).
    pending: Vec<TaskRef>,
    finished: bool,
    /// When the graph began (observer's clock; 0 when not observing).
    began: u64,
    /// Task records of this graph.
    pool: Pool,
    /// The counted barriers, by (stream, slot index).
    barriers: HashMap<(u32, usize), Counted>,
    /// Invariant in `'env` (so `Core<'static>` cannot stand in for a `Core<'env>`).
    _env: PhantomData<fn(&'env ()) -> &'env ()>,
}

impl<'env> Core<'env> {
    /// A new, empty graph on runtime `rt`.
    pub(crate) fn new(rt: Arc<Queues<TaskRef>>) -> Core<'env> {
        let began = if rt.obs.on { rt.obs.graph_begin() } else { 0 };
        Core {
            began,
            ahead: rt.n_threads() == 1,
            rt,
            state: Arc::new(GraphState::new()),
            streams: Vec::new(),
            claimed: Vec::new(),
            spawned: 0,
            credit: 0,
            pending: Vec::with_capacity(PUSH_BATCH),
            finished: false,
            pool: Pool::default(),
            barriers: HashMap::new(),
            _env: PhantomData,
        }
    }

    /// The queues of the runtime this graph runs on.
    pub(crate) fn runtime(&self) -> &Queues<TaskRef> {
        &self.rt
    }

    /// Declares a stream and returns its id (its position); `spread`: the dimension along which
    /// its tasks are spread over the threads ([`Stream::home`]).
    pub(crate) fn add_stream(
        &mut self,
        name: &str,
        lo: &[i64],
        hi: &[i64],
        spread: Option<usize>,
    ) -> Result<u32, Error> {
        let id = u32::try_from(self.streams.len())
            .map_err(|_| Error::Misuse(format!("too many streams (at most {})", u32::MAX)))?;
        let mut stream = Stream::new(id, name, lo, hi)?;
        if let Some(dim) = spread {
            stream = stream.spread_along(dim)?;
        }
        self.claimed.push(vec![0u64; stream.len().div_ceil(64)]);
        self.streams.push(Arc::new(stream));
        Ok(id)
    }

    /// The stream with id `id`, if declared.
    pub(crate) fn stream(&self, id: usize) -> Option<&Stream> {
        self.streams.get(id).map(|s| &**s)
    }

    /// Number of streams declared.
    pub(crate) fn n_streams(&self) -> usize {
        self.streams.len()
    }

    fn is_claimed(&self, stream: u32, idx: usize) -> bool {
        self.claimed[stream as usize][idx / 64] & (1 << (idx % 64)) != 0
    }

    /// Declares a counted barrier: a bodiless task producing `out` once `count` tasks spawned
    /// later arrive at it (see [`Core::spawn`]'s `arrivals`).
    pub(crate) fn counted_barrier(&mut self, out: (u32, usize), count: u64) -> Result<(), Error> {
        let max = (usize::MAX / 2) as u64;
        if count > max {
            return Err(Error::Misuse(format!(
                "counted barrier {}: count {count} is larger than {max}",
                self.token_name(out)
            )));
        }
        // `count` fake inputs: the arrivals decrement them. Validation and the spawn proper are
        // shared with tasks; the barrier is registered only once the spawn succeeded.
        let record =
            self.spawn_record(out, &mut Vec::new(), &mut [], count as usize, Body::empty())?;
        self.barriers.insert(
            out,
            Counted {
                record,
                count,
                arrivals: 0,
            },
        );
        self.release(record, 0);
        self.help_if_ahead(out.0);
        Ok(())
    }

    /// Spawns a task producing `out` (stream id, slot index) that waits for `inputs` (sorted and
    /// deduplicated here) and, when it finishes, arrives at the counted barriers `arrivals`
    /// (each entry is one arrival). The task may start before this returns.
    pub(crate) fn spawn(
        &mut self,
        out: (u32, usize),
        inputs: &mut Vec<(u32, usize)>,
        arrivals: &mut [(u32, usize)],
        body: Body<'env>,
    ) -> Result<(), Error> {
        let task = self.spawn_record(out, inputs, arrivals, 0, body)?;
        let satisfied = self.register_inputs(task, inputs);
        self.release(task, satisfied);
        self.help_if_ahead(out.0);
        Ok(())
    }

    fn token_name(&self, (stream, idx): (u32, usize)) -> String {
        self.streams[stream as usize].token_name(idx)
    }

    /// Validates a spawn and sets up its record (`extra` more to count down than inputs, for a
    /// counted barrier), with the guard held: nothing is published yet. On error nothing
    /// changed.
    fn spawn_record(
        &mut self,
        out: (u32, usize),
        inputs: &mut Vec<(u32, usize)>,
        arrivals: &mut [(u32, usize)],
        extra: usize,
        body: Body<'env>,
    ) -> Result<*mut Task, Error> {
        if self.finished {
            return Err(Error::Misuse(
                "task spawned after the graph ended".to_string(),
            ));
        }
        if self.spawned >= MAX_TASKS {
            return Err(Error::TooManyTasks { max: MAX_TASKS });
        }
        // Validate everything before publishing anything: a failed spawn leaves no trace.
        let in_range = |&(s, idx): &(u32, usize)| {
            self.streams
                .get(s as usize)
                .is_some_and(|st| idx < st.len())
        };
        if !in_range(&out) || !inputs.iter().all(in_range) || !arrivals.iter().all(in_range) {
            return Err(Error::Misuse(
                "internal: unchecked stream or key in spawn".to_string(),
            ));
        }
        if self.is_claimed(out.0, out.1) {
            let token = self.streams[out.0 as usize].token_name(out.1);
            return Err(Error::ProducedTwice { token });
        }
        if u32::try_from(arrivals.len()).is_err() {
            return Err(Error::Misuse(format!(
                "task {} arrives at {} counted barriers (at most {})",
                self.token_name(out),
                arrivals.len(),
                u32::MAX
            )));
        }
        arrivals.sort_unstable();
        for group in arrivals.chunk_by(|a, b| a == b) {
            let barrier = group[0];
            let Some(b) = self.barriers.get(&barrier) else {
                return Err(Error::Misuse(format!(
                    "task {} arrives at {}, which is not a counted barrier declared before it \
                     (tf_barrier_counted)",
                    self.token_name(out),
                    self.token_name(barrier)
                )));
            };
            if b.arrivals + group.len() as u64 > b.count {
                return Err(Error::Misuse(format!(
                    "task {} arrives at the counted barrier {} beyond its count of {}",
                    self.token_name(out),
                    self.token_name(barrier),
                    b.count
                )));
            }
        }
        self.claimed[out.0 as usize][out.1 / 64] |= 1 << (out.1 % 64);
        inputs.sort_unstable();
        inputs.dedup();

        let n_inputs = inputs.len();
        // SAFETY (for the erasure): `Core::finish` runs or drops every body before the core is
        // dropped, and a `Core<'env>` is never leaked (see the type doc).
        let body = unsafe { body.erase() };
        let task = self.pool.take(&self.state);
        // SAFETY: a vacant record from the pool: the control thread owns it until the guard
        // release below, and no node of it is published.
        unsafe {
            (*task)
                .missing
                .store(n_inputs + extra + 1, Ordering::Relaxed);
            (*task).link = ptr::null_mut();
            (*task).graph = Arc::as_ptr(&self.state);
            (*task).stream = Arc::as_ptr(&self.streams[out.0 as usize]);
            // Slot indices are below `MAX_KEYS` (2^32), checked when the stream was declared.
            (*task).idx = out.1 as u32;
            (*task).body = Some(body);
            (*task).n_waits = n_inputs;
            if n_inputs > INLINE_WAITS {
                (*task).spill.clear();
                (*task).spill.resize(n_inputs, WaitNode::NONE);
            }
            if (*task).n_arrive > 0 {
                (*task).arrive.clear();
                (*task).n_arrive = 0;
            }
        }
        for barrier in arrivals.iter() {
            let b = self
                .barriers
                .get_mut(barrier)
                .expect("arrival at a counted barrier checked above");
            b.arrivals += 1;
            // SAFETY: as above. The barrier's record is alive: it has fewer than `count`
            // arrivals, so it cannot have run.
            unsafe { (*task).arrive.push(b.record) };
        }
        // SAFETY: as above. At most `u32::MAX` arrivals (checked above).
        unsafe { (*task).n_arrive = arrivals.len() as u32 };
        self.spawned += 1;
        Ok(task)
    }

    /// Pushes the waiter nodes of the registering record `task` for `inputs`; returns how many
    /// inputs were found produced already.
    fn register_inputs(&mut self, task: *mut Task, inputs: &[(u32, usize)]) -> usize {
        let mut satisfied = 0;
        for (i, &(s, idx)) in inputs.iter().enumerate() {
            let slot = &self.streams[s as usize].slots[idx];
            // SAFETY: `i < n_waits`, set by `spawn_record`; our guard in `missing` keeps the
            // record ours, and node `i` is not published yet.
            if unsafe { wait_on(slot, task, Task::node(task, i)) } {
                satisfied += 1;
            }
        }
        satisfied
    }

    /// Releases the guard of the registering record `task` together with `satisfied` inputs
    /// found produced; pushes the task if that made it ready.
    fn release(&mut self, task: *mut Task, satisfied: usize) {
        // SAFETY: the guard keeps the record ours up to this decrement.
        if unsafe { release_guard(task, satisfied) } {
            // SAFETY: records are never null.
            let t = TaskRef(unsafe { NonNull::new_unchecked(task) });
            let elsewhere = t.home(self.rt.n_threads()).is_some_and(|home| home != 0);
            if self.ahead && !elsewhere {
                // Ahead of the workers (or alone): run it here, with no deque operation and no
                // shared counter update before it; a successor it makes ready is queued.
                self.flush();
                if let Some(next) = t.run_inline(&self.rt) {
                    self.rt.push(&Sink::Global, next);
                    self.rt.notify_work(1);
                }
            } else {
                // Count it active before it can run (the push publishes the increment).
                if self.credit == 0 {
                    self.state.activate(CREDIT_BATCH);
                    self.credit = CREDIT_BATCH;
                }
                self.credit -= 1;
                self.hand_over(t);
            }
        }
    }

    /// Hands the ready task `t` to the workers: now if some of them sleep, else with the next
    /// ones, [`PUSH_BATCH`] at a time. Each push writes the shared queue's tail, which idle
    /// workers keep reading: pushed one at a time, its cache line moved between the cores at
    /// every task (a third of the spawn's time with empty tasks on 2 threads); a batch moves it
    /// about once, and the worker that steals takes the whole batch. A task waits here at most
    /// until the next [`HELP_PERIOD`] check, a batch or the end-of-graph wait, whichever comes
    /// first, and never while this thread runs a task.
    fn hand_over(&mut self, t: TaskRef) {
        self.pending.push(t);
        if self.pending.len() >= PUSH_BATCH || self.rt.has_sleepers() {
            self.flush();
        }
    }

    /// Pushes the tasks waiting in [`Core::pending`] and wakes workers for them.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let n = self.pending.len() as u64;
        let n_threads = self.rt.n_threads();
        for t in self.pending.drain(..) {
            match t.home(n_threads) {
                Some(home) => self.rt.push_home(home, t),
                None => self.rt.push(&Sink::Global, t),
            }
        }
        self.rt.notify_work(n);
    }

    /// The spawning thread helps when it is ahead: when more of this graph's tasks are ready or
    /// running than a small multiple of the thread count, it runs ready tasks until that is no
    /// longer so. Checked after every spawn on a single thread (tasks then run as soon as they
    /// are ready, in program order where they can), every [`HELP_PERIOD`] spawns otherwise (the
    /// graph word is shared with the workers). While it spawns a spread stream's tasks (the
    /// latest spawn was into `stream`) on more than one thread, it helps only once it is
    /// [`SPAWN_AHEAD`] spawns per thread ahead of the tasks finished (it still runs a task of its
    /// own block at its spawn when ahead).
    fn help_if_ahead(&mut self, stream: u32) {
        let n = self.rt.n_threads() as u64;
        if n > 1 && self.spawned & (HELP_PERIOD - 1) != 0 {
            return;
        }
        let limit = if n == 1 { 0 } else { HELP_AHEAD * n };
        let window = if n > 1 && self.streams[stream as usize].is_spread() {
            SPAWN_AHEAD * n
        } else {
            0
        };
        self.flush();
        self.help(limit, window);
        self.ahead = n == 1 || self.rt.queued() as u64 > HELP_AHEAD * n;
    }

    /// Runs ready tasks (of any graph) while more than `limit` tasks of this graph are ready or
    /// running (the control thread is ahead of the workers) and more than `window` of its
    /// spawned tasks have not finished.
    fn help(&self, limit: u64, window: u64) {
        let rt = &*self.rt;
        let mut next: Option<TaskRef> = None;
        loop {
            let (finished, active) = self.state.snapshot();
            if active - self.credit <= limit || self.spawned - finished <= window {
                break;
            }
            match next.take().or_else(|| rt.find_work_control()) {
                Some(task) => next = task.run(rt, &Sink::Global),
                None => break,
            }
        }
        if let Some(task) = next {
            rt.push(&Sink::Global, task);
            rt.notify_work(1);
        }
    }

    /// The end-of-graph wait: runs tasks (of any graph) until the graph word says every spawned
    /// task finished, or that none is ready or running.
    fn wait_graph(&mut self) -> GraphEnd {
        self.flush();
        if self.credit > 0 {
            self.state.deactivate(self.credit);
            self.credit = 0;
        }
        let (rt, state, spawned) = (&*self.rt, &*self.state, self.spawned);
        // A task made ready by the last task this thread ran, to run next.
        let mut next: Option<TaskRef> = None;
        loop {
            let (finished, active) = state.snapshot();
            if finished == spawned || active == 0 {
                // Either all of ours finished, or no task of this graph is ready or running and
                // no more can be spawned: nothing will ever decrement the counters of the
                // remaining ones. A held `next` belongs to another graph (one of ours would
                // count as active): hand it over.
                if let Some(task) = next {
                    rt.push(&Sink::Global, task);
                    rt.notify_work(1);
                }
                return if finished == spawned {
                    GraphEnd::Done
                } else {
                    GraphEnd::Stuck
                };
            }
            if let Some(task) = next.take().or_else(|| rt.find_work_control()) {
                next = task.run(rt, &Sink::Global);
                continue;
            }
            let graph_idle = || {
                let (finished, active) = state.snapshot();
                finished == spawned || active == 0
            };
            if !rt.spin(graph_idle) {
                rt.sleep_control(graph_idle);
            }
        }
    }

    /// Runs tasks until every spawned task finished (or none can make progress), then reports the
    /// first panic of a body or the tasks that can never run. Idempotent: later calls return
    /// `Ok(())`. After it returns, no thread touches this graph's tasks or streams.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        // A panic escaping the wait would drop the streams under running tasks: make it fatal.
        let guard = crate::FatalOnUnwind("waiting for the end of a graph");
        let end = self.wait_graph();
        let stuck = match end {
            GraphEnd::Done => None,
            GraphEnd::Stuck => Some(self.reclaim_stuck()),
        };
        std::mem::forget(guard);
        if self.rt.obs.on {
            self.rt.obs.graph_end(self.began);
        }
        if let Some((task, message)) = self.state.take_panic() {
            return Err(Error::TaskPanicked { task, message });
        }
        match stuck {
            Some(report) => Err(Error::Stuck(report)),
            None => Ok(()),
        }
    }

    /// Lists and frees the tasks of a graph that can make no more progress.
    fn reclaim_stuck(&mut self) -> StuckReport {
        let (finished, active) = self.state.snapshot();
        // `wait_graph` returned Stuck: no task is ready or running and none can be spawned, so no
        // other thread touches this graph's tasks or slots any more.
        assert_eq!(active, 0, "reclaim_stuck with active tasks");
        let mut waits: Vec<(u32, usize, u32, usize)> = Vec::new();
        let mut tasks: Vec<*mut Task> = Vec::new();
        for stream in &self.streams {
            for (idx, slot) in stream.slots.iter().enumerate() {
                let word = slot.load(Ordering::Acquire);
                if word == EMPTY || word == PRODUCED {
                    continue;
                }
                let mut node = word.cast::<WaitNode>();
                while !node.is_null() {
                    // SAFETY: quiescent graph (above): every node in a list belongs to a task that
                    // never ran, so it is alive; nothing else reads or writes it.
                    let (next, task) = unsafe { ((*node).next, (*node).task) };
                    // SAFETY: as above.
                    let (task_stream, task_idx) =
                        unsafe { ((*(*task).stream).id, (*task).idx as usize) };
                    waits.push((task_stream, task_idx, stream.id, idx));
                    tasks.push(task);
                    node = next;
                }
            }
        }
        tasks.sort_unstable();
        tasks.dedup();
        // Counted barriers wait for arrivals, not in slot lists: those not produced are stuck.
        let mut barriers: Vec<(u32, usize, u64, u64)> = self
            .barriers
            .iter()
            .filter(|(&(s, idx), _)| {
                self.streams[s as usize].slots[idx].load(Ordering::Acquire) != PRODUCED
            })
            .map(|(&(s, idx), b)| (s, idx, b.count, b.arrivals))
            .collect();
        barriers.sort_unstable();
        debug_assert_eq!(
            (tasks.len() + barriers.len()) as u64,
            self.spawned - finished
        );
        let n_tasks = tasks.len() + barriers.len();
        for task in tasks {
            // SAFETY: quiescent graph (above); each stuck task's body is dropped once
            // (deduplicated), unrun. The records are freed with the pool.
            drop(unsafe { (*task).body.take() });
        }
        for stream in &self.streams {
            for slot in stream.slots.iter() {
                if slot.load(Ordering::Relaxed) != PRODUCED {
                    slot.store(EMPTY, Ordering::Relaxed);
                }
            }
        }
        waits.sort_unstable();
        let n_waits = waits.len();
        let waits = waits
            .into_iter()
            .take(StuckReport::MAX_LISTED)
            .map(|(ts, ti, ks, ki)| StuckWait {
                task: self.streams[ts as usize].token_name(ti),
                token: self.streams[ks as usize].token_name(ki),
                has_producer: self.is_claimed(ks, ki),
            })
            .collect();
        let barriers = barriers
            .into_iter()
            .take(StuckReport::MAX_LISTED)
            .map(|(s, idx, count, arrivals)| StuckBarrier {
                barrier: self.streams[s as usize].token_name(idx),
                count,
                arrivals,
            })
            .collect();
        StuckReport {
            n_tasks,
            n_waits,
            waits,
            barriers,
        }
    }
}

impl Drop for Core<'_> {
    fn drop(&mut self) {
        // Errors are reported by `Graph`; here only the guarantee matters: no task outlives us.
        let _ = self.finish();
        // SAFETY: `finish` returned: no thread touches this graph's records any more (a task
        // gives its record back before its final graph word update, which `finish` waited for).
        unsafe { self.pool.free_all() };
    }
}

// The steps of the dependence protocol (README.md), as free functions so that the model test
// (`loom_model`) runs exactly the code the runtime runs.

/// A counted barrier, as the control thread tracks it.
struct Counted {
    /// Its record: alive while `arrivals < count` (it cannot have run); not used afterwards.
    record: *mut Task,
    count: u64,
    /// Arrivals declared so far (by spawned tasks), at most `count`.
    arrivals: u64,
}

// SAFETY: only the control thread uses `record` (see the field's doc).
unsafe impl Send for Counted {}

/// How many of a graph's spawns pass between two checks of whether the control thread is
/// ahead (on more than one thread). A power of two.
const HELP_PERIOD: u64 = 16;
/// The control thread helps when more than `HELP_AHEAD * n_threads` tasks are ready or running.
const HELP_AHEAD: u64 = 2;
/// While it spawns into a spread stream (on more than one thread), the control thread helps
/// (takes ready tasks from the queues) only once more than `SPAWN_AHEAD * n_threads` of the
/// graph's spawned tasks have not finished; a task of its own block ready at its spawn still
/// runs there at once when it is ahead. The compiler spawns a spread stream one block of each
/// thread after the other (`tf_spread_at`): gemm at LARGE, a row of 18 output tiles of the
/// control thread's block (342 tasks: a chain of 19 along k each), then a row of the worker's,
/// and so on. Helping as soon as more than two tasks per thread were ready, the control thread
/// ran chains of its row before it had spawned the worker's next one, and the worker, its own
/// row done, took the control thread's chains one task at a time: about 1 000 steals a run on
/// each thread, chains cut between the cores, and in a third of the runs idle spells of 3-3.5
/// ms every 4 ms. Ahead by 512 tasks on 2 threads: 7-13 steals a run; gemm 1.07-1.10x, 2mm
/// 1.10-1.14x, 3mm 1.10-1.13x, symm 1.03-1.11x, covariance 1.03-1.08x, trmm 1.03x, gemver,
/// deriche, gesummv 1.00-1.04x, bicg 1.02-1.22x, atax 1.02-1.15x, trisolv level, mvt
/// 0.97-1.00x, doitgen 0.96-1.05x (medians of 11-21 in rounds, 2 threads, LARGE; EXTRALARGE
/// for the short ones). Variants measured alike: the same window for every stream ran trisolv
/// 0.78x (2 144 tasks of 3 us in a chain of rows, which its control thread no longer ran as it
/// spawned it); no run at a spawn either within the window, trmm 0.92-0.94x (its threads' time
/// in tasks 22.6-23.0 ms a run in a trace, against 19.3-20.6 before: the same tasks ran
/// longer); no help while a worker's home queue is empty, covariance 0.93-0.96x (its spread
/// nests are not ready at their spawns); help only after a spawn into another thread's block,
/// gemm 0.97x; 64 and 1 024 per thread instead of 256, gemm 1.00x and 1.08x.
const SPAWN_AHEAD: u64 = 256;
/// The most ready tasks the control thread holds before handing them to the workers together
/// (see [`Core::hand_over`]).
const PUSH_BATCH: usize = 8;
/// How many activations the control thread counts in the graph word at once (see
/// [`Core::credit`]).
const CREDIT_BATCH: u64 = 64;
