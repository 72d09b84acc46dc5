//! Results kept for the rest of the process, by their inputs: the driver and the searches ask
//! for the same schedule and the same cost estimate several times (the fusion candidates, then
//! the spread search, then the schedule stage), each a fraction of a second of ISL's work.
//! A memo holds the latest few results (the oldest leaves first) behind a lock, so any thread
//! may ask; the inputs are compared whole, so a hit is the result the same call would compute.

use std::sync::Mutex;

/// The latest `cap` results of a computation, with the inputs they came from.
pub(crate) struct Memo<K, V> {
    kept: Mutex<Vec<(K, V)>>,
    cap: usize,
}

impl<K, V: Clone> Memo<K, V> {
    pub(crate) const fn new(cap: usize) -> Self {
        Memo {
            kept: Mutex::new(Vec::new()),
            cap,
        }
    }

    /// The first result kept whose inputs and result `serves` accepts.
    pub(crate) fn find(&self, serves: impl Fn(&K, &V) -> bool) -> Option<V> {
        self.lock()
            .iter()
            .find(|(k, v)| serves(k, v))
            .map(|(_, v)| v.clone())
    }

    pub(crate) fn insert(&self, key: K, value: V) {
        let mut kept = self.lock();
        if kept.len() >= self.cap {
            kept.remove(0);
        }
        kept.push((key, value));
    }

    /// A thread that panicked while holding the lock left the memo whole (its changes are one
    /// push or one removal).
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(K, V)>> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_keeps_its_latest_results() {
        let memo: Memo<u32, String> = Memo::new(2);
        memo.insert(1, "one".into());
        memo.insert(2, "two".into());
        assert_eq!(memo.find(|k, _| *k == 1).as_deref(), Some("one"));
        memo.insert(3, "three".into());
        assert_eq!(memo.find(|k, _| *k == 1), None, "the oldest left");
        assert_eq!(memo.find(|k, _| *k == 2).as_deref(), Some("two"));
        assert_eq!(memo.find(|_, v| v.len() == 5).as_deref(), Some("three"));
    }
}
