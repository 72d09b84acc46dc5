//! Comparing a run with an earlier one (`--baseline FILE`, the JSON of that run): every kernel
//! and target that verified before and is now WRONG or failed, and every one whose speedup over
//! the original fell by more than the threshold.
//!
//! Speedups, not raw times, are compared: both the original and the target are timed in the
//! same run, so a slower or busier machine moves both and the ratio stays put. Kernels and
//! targets present in only one of the two runs are not compared. Both runs must use the same
//! dataset and thread count, or the comparison means nothing and is refused.

use std::fmt;

use anyhow::{bail, Result};

use crate::report::{Report, Status};

/// One kernel and target that got worse.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// The kernel.
    pub kernel: String,
    /// The target (`original` for the original build).
    pub target: String,
    /// What got worse.
    pub what: RegressionKind,
}

/// How it got worse.
#[derive(Debug, Clone, PartialEq)]
pub enum RegressionKind {
    /// It verified in the baseline and is now WRONG or failed.
    NoLongerVerified {
        /// Its status now.
        now: Status,
    },
    /// Its speedup over the original fell by more than the threshold.
    Slower {
        /// Speedup in the baseline.
        before: f64,
        /// Speedup now.
        now: f64,
    },
}

impl fmt::Display for Regression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {}: ", self.kernel, self.target)?;
        match &self.what {
            RegressionKind::NoLongerVerified { now } => {
                write!(f, "verified in the baseline, {} now", now.label())
            }
            RegressionKind::Slower { before, now } => write!(
                f,
                "slower: speedup {now:.2}x, was {before:.2}x ({:+.1}%)",
                (now / before - 1.0) * 100.0
            ),
        }
    }
}

/// Every regression of `now` against `baseline`; `threshold` is the fraction (0.1 = 10%) by
/// which a speedup may fall before it counts.
pub fn compare_with_baseline(
    baseline: &Report,
    now: &Report,
    threshold: f64,
) -> Result<Vec<Regression>> {
    if !(threshold >= 0.0 && threshold.is_finite()) {
        bail!("the threshold must be a non-negative number, not {threshold}");
    }
    if baseline.size != now.size || baseline.threads != now.threads {
        bail!(
            "the baseline ran at {} with {} thread(s), this run at {} with {} thread(s): run with \
             the baseline's --size and --threads",
            baseline.size,
            baseline.threads,
            now.size,
            now.threads
        );
    }
    let mut regressions = Vec::new();
    for k in &now.kernels {
        let Some(old) = baseline.kernels.iter().find(|b| b.kernel == k.kernel) else {
            continue;
        };
        let pairs = std::iter::once(("original", &old.original, &k.original, None, None)).chain(
            k.targets.iter().filter_map(|r| {
                let o = old.targets.iter().find(|o| o.target == r.target)?;
                Some((
                    r.target.as_str(),
                    &o.measurement,
                    &r.measurement,
                    o.speedup,
                    r.speedup,
                ))
            }),
        );
        for (target, before, after, s_before, s_now) in pairs {
            let what = if before.status == Status::Verified && after.status != Status::Verified {
                Some(RegressionKind::NoLongerVerified { now: after.status })
            } else {
                match (s_before, s_now) {
                    (Some(b), Some(n)) if n < b / (1.0 + threshold) => {
                        Some(RegressionKind::Slower { before: b, now: n })
                    }
                    _ => None,
                }
            };
            if let Some(what) = what {
                regressions.push(Regression {
                    kernel: k.kernel.clone(),
                    target: target.to_string(),
                    what,
                });
            }
        }
    }
    Ok(regressions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn same_run_has_no_regression() {
        let r = sample();
        assert_eq!(compare_with_baseline(&r, &r, 0.1).unwrap(), vec![]);
    }

    #[test]
    fn wrong_results_and_slowdowns_past_the_threshold_are_flagged() {
        let before = sample();
        let mut now = sample();
        // gemm/seq: 2.0x -> 1.9x is within 10%; lu/seq: 8.0x -> 6.0x is not.
        now.kernels[0].targets[0].speedup = Some(1.9);
        now.kernels[1].targets[0].speedup = Some(6.0);
        let regs = compare_with_baseline(&before, &now, 0.1).unwrap();
        assert_eq!(regs.len(), 1, "{regs:?}");
        assert_eq!(
            regs[0].to_string(),
            "lu / seq: slower: speedup 6.00x, was 8.00x (-25.0%)"
        );
        // The original of gemm fails now; adi/seq was already WRONG, which is no regression.
        now.kernels[0].original.status = Status::Failed;
        let regs = compare_with_baseline(&before, &now, 0.5).unwrap();
        assert_eq!(regs.len(), 1, "{regs:?}");
        assert_eq!(
            regs[0].to_string(),
            "gemm / original: verified in the baseline, failed now"
        );
    }

    #[test]
    fn a_different_size_is_refused() {
        let before = sample();
        let mut now = sample();
        now.size = "LARGE".into();
        let err = compare_with_baseline(&before, &now, 0.1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--size"), "{err}");
        assert!(compare_with_baseline(&before, &before, -1.0).is_err());
    }
}
