//! Streams: a named box of integer keys and one token slot per key.
//!
//! A [`Stream`] owns the geometry of its key box (row-major linearization, last dimension
//! fastest) and the dense array of token slot words indexed by the linearized key. The meaning
//! of a slot word (empty, list of waiting tasks, produced) belongs to [`crate::task`]; this
//! module only allocates the words and converts between keys, indices and printed names.
//!
//! A stream is immutable after creation except for its slot words, so workers read it through
//! a shared pointer while the control thread declares more streams.

#![forbid(unsafe_code)]

use crate::sync::AtomicPtr;
use std::fmt::Write as _;
use std::ptr;
use std::sync::Arc;

use crate::{Error, MAX_DIMS};

/// The largest number of keys (token slots) one stream may have: 2^32 (32 GiB of slots).
pub const MAX_KEYS: usize = 1 << 32;

/// A declared stream: name, key box and token slots.
#[derive(Debug)]
pub(crate) struct Stream {
    /// Position in the graph's stream list (the id handed to the user).
    pub(crate) id: u32,
    name: Arc<str>,
    ndims: usize,
    lo: [i64; MAX_DIMS],
    hi: [i64; MAX_DIMS],
    /// Row-major strides (in slots) of each dimension.
    stride: [usize; MAX_DIMS],
    /// The dimension along which the stream's tasks are spread over the threads
    /// ([`Stream::home`]), if any.
    spread: Option<usize>,
    /// One word per key, null at first; `task` owns their meaning (and the pointee type).
    pub(crate) slots: Box<[AtomicPtr<()>]>,
}

impl Stream {
    /// Declares the stream `id` with keys `lo[d] <= key[d] <= hi[d]`. An empty box (some
    /// `hi < lo`) is allowed and has no key.
    pub(crate) fn new(id: u32, name: &str, lo: &[i64], hi: &[i64]) -> Result<Stream, Error> {
        debug_assert_eq!(lo.len(), hi.len());
        let ndims = lo.len();
        if ndims > MAX_DIMS {
            return Err(Error::BadDims {
                name: name.to_string(),
                ndims: ndims as i64,
                max: MAX_DIMS,
            });
        }
        let mut stream = Stream {
            id,
            name: Arc::from(name),
            ndims,
            lo: [0; MAX_DIMS],
            hi: [0; MAX_DIMS],
            stride: [0; MAX_DIMS],
            spread: None,
            slots: Box::new([]),
        };
        stream.lo[..ndims].copy_from_slice(lo);
        stream.hi[..ndims].copy_from_slice(hi);
        let too_large = || Error::BoxTooLarge {
            name: name.to_string(),
            bounds: format_bounds(lo, hi),
            max: MAX_KEYS,
        };
        let mut len: usize = 1;
        for d in (0..ndims).rev() {
            stream.stride[d] = len;
            // Extents are computed in i128: hi - lo + 1 cannot overflow there.
            let extent = (i128::from(hi[d]) - i128::from(lo[d]) + 1).max(0);
            let extent = usize::try_from(extent).map_err(|_| too_large())?;
            len = len
                .checked_mul(extent)
                .filter(|&l| l <= MAX_KEYS)
                .ok_or_else(too_large)?;
        }
        stream.slots = (0..len).map(|_| AtomicPtr::new(ptr::null_mut())).collect();
        Ok(stream)
    }

    /// Spreads the stream's tasks over the threads along dimension `dim` ([`Stream::home`]).
    pub(crate) fn spread_along(mut self, dim: usize) -> Result<Stream, Error> {
        if dim >= self.ndims {
            return Err(Error::Misuse(format!(
                "stream {}: spread along dimension {dim} of a stream with {} dimension(s)",
                self.name, self.ndims
            )));
        }
        self.spread = Some(dim);
        Ok(self)
    }

    /// Whether the stream's tasks are spread over the threads ([`Stream::spread_along`]).
    pub(crate) fn is_spread(&self) -> bool {
        self.spread.is_some()
    }

    /// The thread (0 for control threads, `1 + i` for worker `i`) that the task of slot `idx`
    /// prefers, for a stream spread over `n_threads` threads: the keys' range along the spread
    /// dimension cut into `n_threads` consecutive blocks, block `t` to thread `t` (as OpenMP's
    /// static schedule of a loop over that dimension). `None` when the stream is not spread,
    /// there is one thread, or fewer keys along the dimension than threads (some thread would
    /// have no block, and the others' blocks would be no smaller).
    pub(crate) fn home(&self, idx: usize, n_threads: usize) -> Option<usize> {
        let dim = self.spread?;
        // `idx` is a slot of a non-empty box, so every extent is at least 1 and fits a usize.
        let extent = (self.hi[dim] - self.lo[dim] + 1) as usize;
        if n_threads < 2 || extent < n_threads {
            return None;
        }
        let offset = (idx / self.stride[dim]) % extent;
        Some(offset * n_threads / extent)
    }

    /// The stream's name, as declared.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The stream's name, shared (for trace events that outlive the stream).
    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.name
    }

    /// Number of key dimensions.
    pub(crate) fn ndims(&self) -> usize {
        self.ndims
    }

    /// Number of keys in the box.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slot index of `key`, or `None` if it lies outside the box. `key.len()` must be
    /// `ndims` (checked by the caller, which reports arity errors with more context).
    pub(crate) fn index(&self, key: &[i64]) -> Option<usize> {
        if key.len() != self.ndims || self.slots.is_empty() {
            return None;
        }
        let mut idx = 0usize;
        for (d, &k) in key.iter().enumerate() {
            if k < self.lo[d] || k > self.hi[d] {
                return None;
            }
            // In range: the offset is below the extent, and idx stays below len.
            idx += (k - self.lo[d]) as usize * self.stride[d];
        }
        Some(idx)
    }

    /// The key of slot `idx` (the first `ndims` values are meaningful).
    pub(crate) fn coords(&self, idx: usize) -> [i64; MAX_DIMS] {
        debug_assert!(idx < self.len());
        let mut key = [0i64; MAX_DIMS];
        let Some(last) = self.ndims.checked_sub(1) else {
            return key;
        };
        let mut rest = idx;
        for ((k, &lo), &stride) in key.iter_mut().zip(&self.lo).zip(&self.stride).take(last) {
            *k = lo + (rest / stride) as i64;
            rest %= stride;
        }
        // The last dimension has stride 1: no division (this runs for every task).
        key[last] = self.lo[last] + rest as i64;
        key
    }

    /// The token of slot `idx`, printed as `name(k0, k1, ...)`.
    pub(crate) fn token_name(&self, idx: usize) -> String {
        let key = self.coords(idx);
        format!("{}({})", self.name, format_key(&key[..self.ndims]))
    }

    /// The box, printed as `[lo0..=hi0, lo1..=hi1, ...]`.
    pub(crate) fn bounds(&self) -> String {
        format_bounds(&self.lo[..self.ndims], &self.hi[..self.ndims])
    }
}

/// A box printed as `[lo0..=hi0, lo1..=hi1, ...]`.
fn format_bounds(lo: &[i64], hi: &[i64]) -> String {
    let mut s = String::from("[");
    for (d, (l, h)) in lo.iter().zip(hi).enumerate() {
        if d > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{l}..={h}");
    }
    s.push(']');
    s
}

/// A key printed as `k0, k1, ...` (without parentheses).
pub(crate) fn format_key(key: &[i64]) -> String {
    let parts: Vec<String> = key.iter().map(i64::to_string).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_coords_are_inverse_row_major() {
        let s = Stream::new(0, "A", &[-1, 2], &[1, 5]).unwrap();
        assert_eq!(s.len(), 3 * 4);
        assert_eq!(s.index(&[-1, 2]), Some(0));
        assert_eq!(s.index(&[-1, 3]), Some(1));
        assert_eq!(s.index(&[0, 2]), Some(4));
        assert_eq!(s.index(&[1, 5]), Some(11));
        assert_eq!(s.index(&[2, 5]), None);
        assert_eq!(s.index(&[1, 1]), None);
        assert_eq!(s.index(&[1]), None);
        for idx in 0..s.len() {
            let key = s.coords(idx);
            assert_eq!(s.index(&key[..2]), Some(idx));
        }
        assert_eq!(s.token_name(5), "A(0, 3)");
        assert_eq!(s.bounds(), "[-1..=1, 2..=5]");
    }

    #[test]
    fn zero_dims_has_one_key_and_empty_box_none() {
        let s = Stream::new(0, "S", &[], &[]).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s.index(&[]), Some(0));
        assert_eq!(s.token_name(0), "S()");
        let e = Stream::new(1, "E", &[0, 3], &[4, 2]).unwrap();
        assert_eq!(e.len(), 0);
        assert_eq!(e.index(&[0, 3]), None);
    }

    #[test]
    fn a_spread_stream_cuts_its_dimension_into_one_block_per_thread() {
        let s = Stream::new(0, "A", &[2, 0], &[11, 2]).unwrap();
        assert_eq!(s.home(0, 2), None, "not spread");
        let s = s.spread_along(0).unwrap();
        let homes: Vec<_> = (2..=11)
            .map(|k0| s.home(s.index(&[k0, 1]).unwrap(), 2).unwrap())
            .collect();
        assert_eq!(homes, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
        let homes: Vec<_> = (2..=11)
            .map(|k0| s.home(s.index(&[k0, 2]).unwrap(), 3).unwrap())
            .collect();
        assert_eq!(homes, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert_eq!(s.home(4, 1), None, "one thread");
        assert_eq!(
            s.home(4, 11),
            None,
            "more threads than keys along the dimension"
        );
        let t = Stream::new(1, "B", &[0, -3], &[1, 0])
            .unwrap()
            .spread_along(1)
            .unwrap();
        let homes: Vec<_> = (0..t.len()).map(|i| t.home(i, 2).unwrap()).collect();
        assert_eq!(homes, [0, 0, 1, 1, 0, 0, 1, 1]);
        let err = Stream::new(2, "C", &[0], &[3])
            .unwrap()
            .spread_along(1)
            .unwrap_err();
        assert!(err.to_string().contains("dimension 1"), "{err}");
    }

    #[test]
    fn huge_boxes_are_rejected() {
        let err = Stream::new(0, "H", &[0, 0, 0], &[1 << 20, 1 << 20, 1 << 20]).unwrap_err();
        assert!(matches!(err, Error::BoxTooLarge { .. }), "{err}");
        let err = Stream::new(0, "H", &[i64::MIN], &[i64::MAX]).unwrap_err();
        assert!(matches!(err, Error::BoxTooLarge { .. }), "{err}");
    }
}
