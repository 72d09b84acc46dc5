//! The part of a graph that the threads running its tasks touch besides its streams: the graph
//! word (`finished << 32 | active`, which tells "all done" from "stuck"), the first panic of a
//! task body, and the stack of task records given back to the graph's pool.

use super::*;

/// The part of a graph that workers touch besides its streams: the graph word and panics.
pub(crate) struct GraphState {
    /// `finished << 32 | active`: `finished` counts tasks that completed, `active` tasks that
    /// are ready or running. Updated by RMWs only (so every update continues the release
    /// sequence the control thread acquires at the end).
    pub(super) word: AtomicU64,
    /// Set when a body panicked: later bodies of this graph are skipped.
    pub(super) poisoned: AtomicBool,
    /// The first panic: (task name, message).
    pub(super) panic: Mutex<Option<(String, String)>>,
    /// Records given back by the threads that ran them (a stack linked by `Task::link`): any
    /// thread pushes (Release CAS); only the control thread takes, the whole stack at once
    /// (Acquire swap), so there is no ABA problem.
    pub(super) returned: AtomicPtr<Task>,
}

impl GraphState {
    pub(super) fn new() -> GraphState {
        GraphState {
            word: AtomicU64::new(0),
            poisoned: AtomicBool::new(false),
            panic: Mutex::new(None),
            returned: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Gives the record `t` back to the graph's pool.
    ///
    /// # Safety
    /// The caller owns `t` (a record of this graph's pool, its body taken) and never touches it
    /// again.
    pub(super) unsafe fn give_back(&self, t: *mut Task) {
        let mut head = self.returned.load(Ordering::Relaxed);
        loop {
            // SAFETY: we own `t` until the CAS below publishes it.
            unsafe { (*t).link = head };
            match self
                .returned
                .compare_exchange_weak(head, t, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// A task finishes (and leaves the active count if `counted`: it was counted active) and
    /// `n_ready` tasks become active, in one step (so the active count never drops to zero while
    /// some task is ready or running). Returns the active count after it. The caller's last
    /// access to the graph's memory.
    pub(super) fn finish_one(&self, n_ready: u64, counted: bool) -> u64 {
        let add = FINISHED_ONE + n_ready - u64::from(counted);
        let old = self.word.fetch_add(add, Ordering::AcqRel);
        (old & ACTIVE_MASK) + n_ready - u64::from(counted)
    }

    /// The control thread counts `n` tasks active ahead of their spawn ([`Core`]'s credit): each
    /// counts before it can run (the hand-over to the thread that runs it publishes the
    /// increment, made before it).
    pub(super) fn activate(&self, n: u64) {
        self.word.fetch_add(n, Ordering::Relaxed);
    }

    /// The control thread takes back `n` activations it counted ahead and did not use (before
    /// it waits for the graph, which reads the count).
    pub(super) fn deactivate(&self, n: u64) {
        self.word.fetch_sub(n, Ordering::AcqRel);
    }

    /// `(finished, active)`, read with Acquire: once `finished` equals the number of tasks
    /// spawned, every task body's writes are visible to the caller.
    pub(crate) fn snapshot(&self) -> (u64, u64) {
        let w = self.word.load(Ordering::Acquire);
        (w >> 32, w & ACTIVE_MASK)
    }

    pub(super) fn record_panic(&self, task: String, payload: Box<dyn Any + Send>) {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic payload that is not a string)".to_string()
        };
        self.poisoned.store(true, Ordering::Relaxed);
        let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some((task, message));
        }
    }

    pub(super) fn take_panic(&self) -> Option<(String, String)> {
        self.panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}
