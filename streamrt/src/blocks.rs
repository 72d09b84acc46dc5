//! Blocks of scratch memory lent to the tasks of one part of a graph and taken back when they
//! are all done: the storage of an array of copies (a temporary expanded per iteration of an
//! outer loop, doitgen's `sum[r][q][p]`) where the compiler proved that every task touching
//! copy `c`'s elements belongs to one tile row `c` (`tf_blocks_*` in `streamrt.h`).
//!
//! Block `c` exists from the first [`Blocks::at`] of any of its tasks to the [`Blocks::leave`]
//! that brings its user count to zero; its memory then goes to a free list and serves the next
//! block asked for, so the program touches a few blocks' memory (hot in the cache, its pages
//! already mapped) instead of the whole array's. The counts are given at creation: the number
//! of tasks of each tile row, which the compiler knows (a fixed tile space), plus one for a
//! block the control thread reads after the graph. Each task leaves when its body is done, so a
//! count reaches zero only after the row's last task, whatever the order the tasks are spawned
//! and run in. A count that is wrong cannot go unnoticed: a task that finds its block given
//! back, or leaves it below zero, is an error. Ordering: a task's writes happen before the
//! block's next user reads the same memory (the count's release/acquire, then the free list's
//! lock).
//!
//! The memory is owned here as boxed slices of cache lines (no unsafe code): callers get its
//! address. A block's first use finds it holding whatever its last user left (or zeros): the
//! compiler uses blocks only for copies that every iteration writes before it reads them.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::Error;

/// One cache line of a block's memory (blocks are aligned to lines).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// The memory and free list behind [`Blocks`].
struct Store {
    /// Every block allocated, for their lifetime.
    owned: Vec<Box<[Line]>>,
    /// Addresses of owned blocks not lent to any block index.
    free: Vec<usize>,
}

/// A set of `count` blocks of `bytes` bytes each, lent by index (see the module doc).
pub struct Blocks {
    bytes: usize,
    /// The address of each block's memory, 0 while it has none.
    slots: Box<[AtomicUsize]>,
    /// Each block's holds: the control thread's and one per spawned, unfinished task.
    users: Box<[AtomicI64]>,
    store: Mutex<Store>,
}

impl Blocks {
    /// One block per entry of `users`, of `bytes` bytes each, with that many users (tasks that
    /// will [`Blocks::leave`] it).
    pub fn new(users: &[i64], bytes: usize) -> Result<Blocks, Error> {
        if let Some((b, n)) = users.iter().enumerate().find(|(_, &n)| n < 0) {
            return Err(Error::Misuse(format!(
                "tf_blocks_new: block {b} with {n} users"
            )));
        }
        Ok(Blocks {
            bytes,
            slots: users.iter().map(|_| AtomicUsize::new(0)).collect(),
            users: users.iter().map(|&n| AtomicI64::new(n)).collect(),
            store: Mutex::new(Store {
                owned: Vec::new(),
                free: Vec::new(),
            }),
        })
    }

    /// The number of blocks.
    pub fn count(&self) -> usize {
        self.slots.len()
    }

    fn index(&self, block: i64, function: &str) -> Result<usize, Error> {
        usize::try_from(block)
            .ok()
            .filter(|&b| b < self.slots.len())
            .ok_or_else(|| {
                Error::Misuse(format!(
                    "{function}: block {block} of {} (0 to {})",
                    self.slots.len(),
                    self.slots.len() as i64 - 1
                ))
            })
    }

    /// The address of `block`'s memory, taken from the free list (or allocated) by its first
    /// caller.
    pub fn at(&self, block: i64) -> Result<usize, Error> {
        let b = self.index(block, "tf_blocks_at")?;
        let slot = &self.slots[b];
        let now = slot.load(Ordering::Acquire);
        if now != 0 {
            return Ok(now);
        }
        if self.users[b].load(Ordering::Acquire) <= 0 {
            return Err(Error::Misuse(format!(
                "tf_blocks_at: block {block} was already given back (all its users left)"
            )));
        }
        let fresh = self.take()?;
        match slot.compare_exchange(0, fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(fresh),
            Err(won) => {
                self.give(fresh);
                Ok(won)
            }
        }
    }

    /// One user of `block` less; the last gives its memory back.
    pub fn leave(&self, block: i64) -> Result<(), Error> {
        let b = self.index(block, "tf_blocks_leave")?;
        let before = self.users[b].fetch_sub(1, Ordering::AcqRel);
        if before <= 0 {
            return Err(Error::Misuse(format!(
                "tf_blocks_leave: block {block} has no user left"
            )));
        }
        if before == 1 {
            let address = self.slots[b].swap(0, Ordering::AcqRel);
            if address != 0 {
                self.give(address);
            }
        }
        Ok(())
    }

    /// Blocks whose memory was allocated so far (the most lent at once).
    pub fn allocated(&self) -> usize {
        self.store.lock().map(|s| s.owned.len()).unwrap_or(0)
    }

    fn take(&self) -> Result<usize, Error> {
        let mut store = self.store.lock().map_err(|_| {
            Error::Misuse("tf_blocks_at: a task panicked holding the blocks".into())
        })?;
        if let Some(address) = store.free.pop() {
            return Ok(address);
        }
        let lines = self.bytes.div_ceil(64).max(1);
        let mut memory = vec![Line([0; 64]); lines].into_boxed_slice();
        let address = memory.as_mut_ptr() as usize;
        store.owned.push(memory);
        Ok(address)
    }

    fn give(&self, address: usize) {
        if let Ok(mut store) = self.store.lock() {
            store.free.push(address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_lives_while_it_has_users_and_its_memory_serves_the_next() {
        let blocks = Blocks::new(&[2, 1, 1], 1000).unwrap();
        let a = blocks.at(0).unwrap();
        assert_eq!(a % 64, 0, "aligned to a line");
        assert_eq!(blocks.at(0).unwrap(), a, "the same memory while used");
        // One task of block 0 ends; the other keeps it.
        blocks.leave(0).unwrap();
        assert_eq!(blocks.at(0).unwrap(), a);
        // The last leaves: the memory goes to block 1's first user.
        blocks.leave(0).unwrap();
        assert_eq!(blocks.at(1).unwrap(), a);
        // Block 2 while 1 holds that memory gets other memory.
        let c = blocks.at(2).unwrap();
        assert_ne!(c, a);
        assert_eq!(blocks.allocated(), 2);
    }

    #[test]
    fn misuse_is_an_error() {
        let blocks = Blocks::new(&[1, 1], 64).unwrap();
        assert!(blocks.at(2).is_err());
        assert!(blocks.leave(-1).is_err());
        blocks.leave(1).unwrap();
        assert!(blocks.leave(1).is_err(), "below zero");
        assert!(blocks.at(1).is_err(), "given back");
        assert!(Blocks::new(&[1, -1], 64).is_err());
        assert_eq!(blocks.count(), 2);
    }

    #[test]
    fn tasks_on_many_threads_never_share_a_blocks_memory() {
        // 64 blocks of 8 tasks each, run by 4 threads in order: each task writes its block's
        // index into the block's words and reads them back; memory lent to two blocks at once
        // would show another index. The last task of a block forgets the values before
        // leaving. A block is lent only while one of the 4 threads works in it (plus one that
        // lost the race for a slot, given back at once), so at most 8 blocks' memory is ever
        // allocated.
        const BLOCKS: i64 = 64;
        const TASKS: i64 = 8;
        let blocks = Blocks::new(&[TASKS; BLOCKS as usize], 4096).unwrap();
        let memory: Mutex<std::collections::HashMap<usize, Vec<i64>>> = Mutex::default();
        let next = AtomicI64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| loop {
                    let t = next.fetch_add(1, Ordering::Relaxed);
                    if t >= BLOCKS * TASKS {
                        break;
                    }
                    let b = t / TASKS;
                    let address = blocks.at(b).unwrap();
                    {
                        let mut m = memory.lock().unwrap();
                        let words = m.entry(address).or_insert_with(|| vec![-1; 8]);
                        assert!(words.iter().all(|&w| w == -1 || w == b), "{words:?} in {b}");
                        words.fill(b);
                    }
                    std::thread::yield_now();
                    {
                        let mut m = memory.lock().unwrap();
                        let words = m.get_mut(&address).unwrap();
                        assert!(words.iter().all(|&w| w == b), "{words:?} in {b}");
                        if blocks.users[b as usize].load(Ordering::Acquire) == 1 {
                            words.fill(-1);
                        }
                    }
                    blocks.leave(b).unwrap();
                });
            }
        });
        for b in 0..BLOCKS as usize {
            assert_eq!(blocks.users[b].load(Ordering::Acquire), 0);
            assert_eq!(blocks.slots[b].load(Ordering::Acquire), 0);
        }
        assert!(
            blocks.allocated() <= 8,
            "{} blocks allocated",
            blocks.allocated()
        );
    }
}
