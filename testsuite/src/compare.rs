//! Comparing the arrays dumped by two runs: exactly (text, hence bits) or within a relative
//! tolerance, with a report naming every array that differs.

use std::fmt;

use crate::dump::DumpedArray;

/// How two values must agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// The written values are identical. Kernels print values so that they round-trip, so this
    /// is bit equality (it tells `-0` from `0`, and one ulp apart is a difference).
    Exact,
    /// Identical text, or both parse as finite numbers with `|a - b| <= r * max(|a|, |b|)`,
    /// or both are NaN. Infinities must match exactly. A value that is not a number must be
    /// identical.
    Relative(f64),
}

impl Tolerance {
    /// Whether `expected` and `actual` agree under this tolerance.
    pub fn accepts(self, expected: &str, actual: &str) -> bool {
        if expected == actual {
            return true;
        }
        match self {
            Tolerance::Exact => false,
            Tolerance::Relative(r) => match (expected.parse::<f64>(), actual.parse::<f64>()) {
                (Ok(a), Ok(b)) if a.is_nan() && b.is_nan() => true,
                (Ok(a), Ok(b)) if a.is_finite() && b.is_finite() => {
                    (a - b).abs() <= r * a.abs().max(b.abs())
                }
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            },
        }
    }
}

/// One value that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueDiff {
    /// Flat (row-major) index in the array.
    pub index: usize,
    /// The expected value, as written.
    pub expected: String,
    /// The actual value, as written.
    pub actual: String,
}

/// How one array differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayMismatch {
    /// Expected but not dumped by the actual run.
    Missing {
        /// Array name.
        name: String,
    },
    /// Dumped by the actual run but not expected.
    Unexpected {
        /// Array name.
        name: String,
    },
    /// Different number of values.
    Length {
        /// Array name.
        name: String,
        /// Number of values expected.
        expected: usize,
        /// Number of values dumped.
        actual: usize,
    },
    /// Same length, some values differ.
    Values {
        /// Array name.
        name: String,
        /// How many values differ.
        n_differ: usize,
        /// How many values the array has.
        n_values: usize,
        /// The first few differences, in index order (at most [`Mismatch::SHOWN_DIFFS`]).
        first: Vec<ValueDiff>,
    },
}

/// Every way in which two dumps differ, in the expected dump's array order (arrays the actual
/// run added come last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The arrays that differ; never empty.
    pub arrays: Vec<ArrayMismatch>,
}

impl Mismatch {
    /// How many differing values a report lists per array.
    pub const SHOWN_DIFFS: usize = 5;
}

impl fmt::Display for ArrayMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrayMismatch::Missing { name } => {
                write!(f, "array `{name}` is missing from the output")
            }
            ArrayMismatch::Unexpected { name } => write!(f, "array `{name}` was not expected"),
            ArrayMismatch::Length {
                name,
                expected,
                actual,
            } => {
                write!(f, "array `{name}` has {actual} values, expected {expected}")
            }
            ArrayMismatch::Values {
                name,
                n_differ,
                n_values,
                first,
            } => {
                write!(f, "array `{name}`: {n_differ} of {n_values} values differ")?;
                for d in first {
                    write!(
                        f,
                        "\n    at flat index {}: expected {}, got {}",
                        d.index, d.expected, d.actual
                    )?;
                }
                if *n_differ > first.len() {
                    write!(f, "\n    ... and {} more", n_differ - first.len())?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} array(s) differ:", self.arrays.len())?;
        for a in &self.arrays {
            write!(f, "\n  {a}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Mismatch {}

/// Compares two dumps array by array (matched by name; order is not significant).
pub fn compare(
    expected: &[DumpedArray],
    actual: &[DumpedArray],
    tolerance: Tolerance,
) -> Result<(), Mismatch> {
    let mut problems = Vec::new();
    for exp in expected {
        let Some(act) = actual.iter().find(|a| a.name == exp.name) else {
            problems.push(ArrayMismatch::Missing {
                name: exp.name.clone(),
            });
            continue;
        };
        if exp.values.len() != act.values.len() {
            problems.push(ArrayMismatch::Length {
                name: exp.name.clone(),
                expected: exp.values.len(),
                actual: act.values.len(),
            });
            continue;
        }
        let mut n_differ = 0;
        let mut first = Vec::new();
        for (index, (e, a)) in exp.values.iter().zip(&act.values).enumerate() {
            if !tolerance.accepts(e, a) {
                n_differ += 1;
                if first.len() < Mismatch::SHOWN_DIFFS {
                    first.push(ValueDiff {
                        index,
                        expected: e.clone(),
                        actual: a.clone(),
                    });
                }
            }
        }
        if n_differ > 0 {
            problems.push(ArrayMismatch::Values {
                name: exp.name.clone(),
                n_differ,
                n_values: exp.values.len(),
                first,
            });
        }
    }
    for act in actual {
        if !expected.iter().any(|e| e.name == act.name) {
            problems.push(ArrayMismatch::Unexpected {
                name: act.name.clone(),
            });
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Mismatch { arrays: problems })
    }
}
