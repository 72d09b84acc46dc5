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
        prefetch(self.free);
        t
    }

    fn grow(&mut self) {
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

/// Asks the processor to bring the first line of `t` (the next record to be taken) into this
/// core's cache, for writing. Records come back from the threads that ran them, so the next
/// spawn's first access to one (its link, then the update of its counter) missed in cache every
/// time: with empty tasks on 2 threads, the largest cost of a spawn. Fetched one spawn ahead,
/// the line is here; fetched for writing (`PREFETCHW`, where the processor has it), the
/// counter's atomic update does not wait for it either. A hint: any address, null included, is
/// allowed and nothing is read.
#[inline]
fn prefetch(t: *const Task) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_prefetchw() {
            // SAFETY: PREFETCHW (the processor has it, checked above) never faults, reads or
            // writes nothing the program sees, and leaves the flags and stack alone.
            unsafe {
                std::arch::asm!(
                    "prefetchw [{0}]",
                    in(reg) t,
                    options(nostack, preserves_flags, readonly)
                );
            }
        } else {
            // SAFETY: a prefetch never faults and has no effect visible to the program.
            #[allow(unused_unsafe)]
            unsafe {
                std::arch::x86_64::_mm_prefetch(t.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = t;
}

/// Whether the processor has `PREFETCHW` (CPUID leaf 0x8000_0001, ECX bit 8), asked once.
#[cfg(target_arch = "x86_64")]
fn has_prefetchw() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86-64 processor; the extended leaf is asked only when
        // the processor reports it.
        #[allow(unused_unsafe)]
        unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 8) != 0
        }
    })
}
