//! The task records of one graph: allocated in chunks, taken by the control thread at each spawn,
//! given back by the threads that run them and reused.

use super::*;

/// The control thread's side of a graph's pool of task records.
///
/// Records are allocated in chunks, taken by [`Core::spawn`], given back by the thread that runs
/// the task (to [`GraphState`]'s `returned` stack) and reused, so that a graph holds about as
/// many records as it has tasks not yet run at once, and spawning rarely allocates. Chunks are
/// freed with the graph.
#[derive(Default)]
pub(super) struct Pool {
    /// Vacant records owned by the control thread (linked by `Task::link`).
    free: *mut Task,
    /// Every chunk: its first record and length (from `Box<[Task]>::into_raw`).
    chunks: Vec<(*mut Task, usize)>,
}

// SAFETY: the pool's records are owned by whoever owns the graph (the control thread); moving
// the graph to another thread moves that ownership with it.
unsafe impl Send for Pool {}

impl Pool {
    const FIRST_CHUNK: usize = 64;
    const MAX_CHUNK: usize = 4096;

    /// A vacant record: from the control thread's free list, else from those given back, else
    /// from a new chunk.
    pub(super) fn take(&mut self, state: &GraphState) -> *mut Task {
        if self.free.is_null() {
            // Acquire: the threads that gave the records back are done with them.
            self.free = state.returned.swap(ptr::null_mut(), Ordering::Acquire);
            if self.free.is_null() {
                self.grow();
            }
        }
        let t = self.free;
        // SAFETY: records in the free list are vacant and owned by the control thread.
        self.free = unsafe { (*t).link };
        t
    }

    pub(super) fn grow(&mut self) {
        let len = self
            .chunks
            .last()
            .map_or(Self::FIRST_CHUNK, |&(_, n)| (2 * n).min(Self::MAX_CHUNK));
        let chunk: Box<[Task]> = (0..len).map(|_| Task::vacant()).collect();
        let first = Box::into_raw(chunk).cast::<Task>();
        for i in (0..len).rev() {
            // SAFETY: `i < len`, a record of the chunk we just allocated and own.
            unsafe {
                let t = first.add(i);
                (*t).link = self.free;
                self.free = t;
            }
        }
        self.chunks.push((first, len));
    }

    /// Frees every chunk.
    ///
    /// # Safety
    /// No thread accesses any record of this pool any more, and the pool is not used afterwards.
    pub(super) unsafe fn free_all(&mut self) {
        self.free = ptr::null_mut();
        for (first, len) in self.chunks.drain(..) {
            // SAFETY: from `Box::into_raw` of a `Box<[Task]>` of this length, freed once.
            drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(first, len)) });
        }
    }
}
