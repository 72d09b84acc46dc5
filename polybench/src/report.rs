//! The results of a run as plain data (serialized as the JSON that `--baseline` reads back),
//! and their renderings: the terminal table, the JSON and the CSV.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use comfy_table::{presets, Cell, CellAlignment, Table};
use serde::{Deserialize, Serialize};

/// How one build of one kernel came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Built, ran, and every array equals the original's.
    #[serde(rename = "verified")]
    Verified,
    /// Built and ran, but some array differs from the original's.
    #[serde(rename = "WRONG")]
    Wrong,
    /// Did not build, crashed, exited non-zero or ran past the time limit (or the original did).
    #[serde(rename = "failed")]
    Failed,
}

impl Status {
    /// As printed: `verified`, `WRONG`, `failed`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Verified => "verified",
            Status::Wrong => "WRONG",
            Status::Failed => "failed",
        }
    }
}

/// Where the SCoPs of a cuda target's build ran (see the crate doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RanOn {
    /// On a GPU: the program found a device and printed no fallback notice.
    #[serde(rename = "GPU")]
    Gpu,
    /// On streamrt's emulated device (`TILEDFLOW_GPU=emulate`), without a fallback notice.
    #[serde(rename = "emulated GPU")]
    EmulatedGpu,
    /// On the CPU because the compiler kept every SCoP there (its note is the reason).
    #[serde(rename = "CPU by compiler")]
    CpuByCompiler,
    /// On the CPU because the program fell back (its notice is the reason).
    #[serde(rename = "CPU fallback")]
    CpuFallback,
}

impl RanOn {
    /// As printed: `GPU`, `emulated GPU`, `CPU by compiler`, `CPU fallback`.
    pub fn label(self) -> &'static str {
        match self {
            RanOn::Gpu => "GPU",
            RanOn::EmulatedGpu => "emulated GPU",
            RanOn::CpuByCompiler => "CPU by compiler",
            RanOn::CpuFallback => "CPU fallback",
        }
    }
}

/// One build of one kernel, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// How it came out.
    pub status: Status,
    /// Why it is WRONG or failed (the first differing values, the compiler's message, …); for a
    /// cuda target that ran on the CPU, the compiler's note or the program's notice.
    pub reason: Option<String>,
    /// cuda targets: where the SCoPs ran; `None` for the other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_on: Option<RanOn>,
    /// Wall time of the build command, in seconds (absent when it did not build).
    pub build_s: Option<f64>,
    /// Wall time of tiledflow's source-to-source step alone (tiledflow targets, timed runs).
    pub tiledflow_s: Option<f64>,
    /// The kernel's time in each run, in seconds (empty in verification-only runs).
    pub times_s: Vec<f64>,
    /// The median of `times_s`.
    pub median_s: Option<f64>,
}

impl Measurement {
    /// A build that failed before anything ran.
    pub fn failed(reason: impl Into<String>, build_s: Option<f64>) -> Self {
        Measurement {
            status: Status::Failed,
            reason: Some(reason.into()),
            ran_on: None,
            build_s,
            tiledflow_s: None,
            times_s: Vec::new(),
            median_s: None,
        }
    }
}

/// One target's result for one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// The target's name (`seq`, `tasks`, `polly`, …).
    pub target: String,
    /// Its build and runs.
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The original's median over this target's median; only for verified, timed results.
    pub speedup: Option<f64>,
}

/// One kernel: the original and every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelReport {
    /// The kernel's name.
    pub kernel: String,
    /// The original (`cc` with the same flags); its dump is the reference.
    pub original: Measurement,
    /// Each target, in the order asked for.
    pub targets: Vec<TargetResult>,
    /// The dataset it ran at when not the run's (`--promote-below`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
}

/// A requested peer that is not installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedTarget {
    /// The target's name.
    pub target: String,
    /// Why it was skipped.
    pub reason: String,
}

/// The geometric mean of one target's speedups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geomean {
    /// The target's name.
    pub target: String,
    /// Geometric mean over the kernels it verified on (absent if none, or not timed).
    pub speedup: Option<f64>,
    /// Over how many kernels.
    pub n_kernels: usize,
    /// How many kernels it verified on.
    pub n_verified: usize,
    /// How many of its results are WRONG.
    pub n_wrong: usize,
    /// How many failed.
    pub n_failed: usize,
}

/// Everything one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// `MINI` … `EXTRALARGE`.
    pub size: String,
    /// Threads of the parallel targets.
    pub threads: usize,
    /// Runs per build.
    pub repeat: usize,
    /// Whether runs were timed.
    pub timed: bool,
    /// Optimization flags of every build.
    pub opt_flags: Vec<String>,
    /// `--tiledflow-tile-sizes` given to tiledflow targets, if any.
    pub tile_sizes: Option<String>,
    /// The targets measured, in order.
    pub targets: Vec<String>,
    /// Requested peers that are not installed.
    pub skipped: Vec<SkippedTarget>,
    /// One entry per kernel, in the order run.
    pub kernels: Vec<KernelReport>,
    /// Per target, the geometric mean of its speedups.
    pub geomeans: Vec<Geomean>,
}

/// The median of `xs` (the mean of the two middle values for an even count); `None` if empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// `v` with three significant digits (at least two decimals): `12.3`, `1.23`, `0.0123`.
pub fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i64).clamp(2, 9) as usize;
    format!("{v:.decimals$}")
}

/// The geometric mean of positive values; `None` if there are none.
pub fn geomean(xs: &[f64]) -> Option<f64> {
    let positive: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    if positive.is_empty() || positive.len() != xs.len() {
        return None;
    }
    let log_sum: f64 = positive.iter().map(|x| x.ln()).sum();
    Some((log_sum / positive.len() as f64).exp())
}

impl Report {
    /// Fills `geomeans` from the kernels' results.
    pub fn compute_geomeans(&mut self) {
        self.geomeans = self
            .targets
            .iter()
            .map(|t| {
                let results: Vec<&TargetResult> = self
                    .kernels
                    .iter()
                    .flat_map(|k| k.targets.iter().filter(|r| &r.target == t))
                    .collect();
                let count =
                    |s: Status| results.iter().filter(|r| r.measurement.status == s).count();
                let speedups: Vec<f64> = results.iter().filter_map(|r| r.speedup).collect();
                Geomean {
                    target: t.clone(),
                    speedup: geomean(&speedups),
                    n_kernels: speedups.len(),
                    n_verified: count(Status::Verified),
                    n_wrong: count(Status::Wrong),
                    n_failed: count(Status::Failed),
                }
            })
            .collect();
    }

    /// Whether every build of every kernel verified.
    pub fn all_verified(&self) -> bool {
        self.kernels.iter().all(|k| {
            k.original.status == Status::Verified
                && k.targets
                    .iter()
                    .all(|r| r.measurement.status == Status::Verified)
        })
    }

    /// The terminal table: one row per kernel and target (the original first), then the
    /// geometric means.
    pub fn table(&self) -> String {
        let mut table = Table::new();
        table.load_preset(presets::UTF8_BORDERS_ONLY);
        table.set_header(vec![
            "kernel",
            "target",
            "result",
            "time (s)",
            "speedup",
            "build (s)",
            "tiledflow (s)",
        ]);
        let secs = |x: Option<f64>| x.map_or_else(|| "-".to_string(), significant);
        for k in &self.kernels {
            let mut rows: Vec<(&str, &Measurement, Option<f64>)> =
                vec![("original", &k.original, None)];
            rows.extend(
                k.targets
                    .iter()
                    .map(|r| (r.target.as_str(), &r.measurement, r.speedup)),
            );
            for (target, m, speedup) in rows {
                let kernel = match &k.size {
                    Some(size) => format!("{} ({size})", k.kernel),
                    None => k.kernel.clone(),
                };
                table.add_row(vec![
                    Cell::new(kernel),
                    Cell::new(target),
                    Cell::new(match m.ran_on {
                        Some(on) => format!("{}, {}", m.status.label(), on.label()),
                        None => m.status.label().to_string(),
                    }),
                    Cell::new(secs(m.median_s)).set_alignment(CellAlignment::Right),
                    Cell::new(
                        speedup.map_or_else(|| "-".to_string(), |s| format!("{}x", significant(s))),
                    )
                    .set_alignment(CellAlignment::Right),
                    Cell::new(secs(m.build_s)).set_alignment(CellAlignment::Right),
                    Cell::new(secs(m.tiledflow_s)).set_alignment(CellAlignment::Right),
                ]);
            }
        }
        let mut out = table.to_string();
        out.push('\n');
        for g in &self.geomeans {
            let speedup = match g.speedup {
                Some(s) => format!("geomean speedup {s:.2}x over {} kernel(s)", g.n_kernels),
                None if self.timed => "no verified timing".to_string(),
                None => "not timed".to_string(),
            };
            out.push_str(&format!(
                "{:<10} {speedup}; {} verified, {} WRONG, {} failed{}\n",
                g.target,
                g.n_verified,
                g.n_wrong,
                g.n_failed,
                self.ran_on_summary(&g.target)
            ));
        }
        for line in self.efficiencies() {
            out.push_str(&line);
            out.push('\n');
        }
        for s in &self.skipped {
            out.push_str(&format!("{:<10} skipped: {}\n", s.target, s.reason));
        }
        out
    }

    /// For each target run on a given number of threads `q` (`tasks:1`) beside the same target
    /// on `--threads` `p` (`tasks`): the parallel efficiency `q·T_q / (p·T_p)` of every kernel
    /// both verified and timed, as `tasks on 2 threads against tasks:1: efficiency geomean 0.91,
    /// lowest 0.52 (durbin)`.
    pub fn efficiencies(&self) -> Vec<String> {
        let p = self.threads as f64;
        let mut lines = Vec::new();
        for name in &self.targets {
            let Ok(target) = crate::Target::parse(name) else {
                continue;
            };
            let (Some(q), Some(all)) = (target.threads(), target.all_threads()) else {
                continue;
            };
            if !self.targets.iter().any(|t| t == all.name()) {
                continue;
            }
            let median = |k: &KernelReport, t: &str| {
                k.targets
                    .iter()
                    .find(|r| r.target == t && r.measurement.status == Status::Verified)
                    .and_then(|r| r.measurement.median_s)
            };
            let per_kernel: Vec<(f64, &str)> = self
                .kernels
                .iter()
                .filter_map(|k| {
                    let (tq, tp) = (median(k, name)?, median(k, all.name())?);
                    (tq > 0.0 && tp > 0.0).then(|| (q as f64 * tq / (p * tp), k.kernel.as_str()))
                })
                .collect();
            let values: Vec<f64> = per_kernel.iter().map(|(e, _)| *e).collect();
            let (Some(mean), Some((low, kernel))) = (
                geomean(&values),
                per_kernel
                    .iter()
                    .copied()
                    .min_by(|a, b| a.0.total_cmp(&b.0)),
            ) else {
                continue;
            };
            lines.push(format!(
                "{:<10} on {} threads against {name}: efficiency geomean {mean:.2}, lowest {low:.2} ({kernel}) over {} kernel(s)",
                all.name(),
                self.threads,
                values.len()
            ));
        }
        lines
    }

    /// For a cuda target: `; ran on: 25 emulated GPU, 5 CPU by compiler`; empty for the others.
    fn ran_on_summary(&self, target: &str) -> String {
        let mut counts: Vec<(RanOn, usize)> = Vec::new();
        let all = self.kernels.iter().flat_map(|k| k.targets.iter());
        for on in all
            .filter(|r| r.target == target)
            .filter_map(|r| r.measurement.ran_on)
        {
            match counts.iter_mut().find(|(o, _)| *o == on) {
                Some((_, n)) => *n += 1,
                None => counts.push((on, 1)),
            }
        }
        if counts.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = counts
            .iter()
            .map(|(on, n)| format!("{n} {}", on.label()))
            .collect();
        format!("; ran on: {}", parts.join(", "))
    }

    /// How many lines of each reason [`Report::problems`] shows (the JSON has all of it).
    pub const PROBLEM_LINES: usize = 12;

    /// The reasons of every WRONG or failed build, one paragraph each, each cut to
    /// [`Report::PROBLEM_LINES`] lines.
    pub fn problems(&self) -> String {
        let mut out = String::new();
        for k in &self.kernels {
            let rows = std::iter::once(("original", &k.original)).chain(
                k.targets
                    .iter()
                    .map(|r| (r.target.as_str(), &r.measurement)),
            );
            for (target, m) in rows {
                if let (Status::Wrong | Status::Failed, Some(reason)) = (m.status, &m.reason) {
                    let n_lines = reason.lines().count();
                    let mut reason: Vec<&str> = reason.lines().take(Self::PROBLEM_LINES).collect();
                    let more = format!(
                        "[... {} more lines]",
                        n_lines.saturating_sub(Self::PROBLEM_LINES)
                    );
                    if n_lines > Self::PROBLEM_LINES {
                        reason.push(&more);
                    }
                    let reason = reason.join("\n");
                    out.push_str(&format!(
                        "{} / {target}: {}: {reason}\n\n",
                        k.kernel,
                        m.status.label()
                    ));
                }
            }
        }
        out
    }

    /// Writes the report as pretty JSON.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
    }

    /// Reads a report written by [`Report::write_json`].
    ///
    /// The geometric means are computed again from the kernels' results, so that a report whose
    /// kernels were edited or merged from several runs (reruns of a few kernels) prints and
    /// draws the means of what it holds.
    pub fn read_json(path: &Path) -> Result<Report> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut report: Report = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a polybench report", path.display()))?;
        report.compute_geomeans();
        Ok(report)
    }

    /// Writes one CSV row per kernel and build (the original included) with every figure.
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        let file =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        self.write_csv_to(file)
            .with_context(|| format!("writing {}", path.display()))
    }

    fn write_csv_to(&self, out: impl Write) -> Result<()> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "kernel",
            "target",
            "status",
            "ran_on",
            "median_s",
            "speedup",
            "build_s",
            "tiledflow_s",
            "times_s",
            "size",
            "threads",
            "reason",
        ])?;
        let num = |x: Option<f64>| x.map(|v| format!("{v}")).unwrap_or_default();
        for k in &self.kernels {
            let rows = std::iter::once(("original", &k.original, None)).chain(
                k.targets
                    .iter()
                    .map(|r| (r.target.as_str(), &r.measurement, r.speedup)),
            );
            for (target, m, speedup) in rows {
                let times: Vec<String> = m.times_s.iter().map(|t| format!("{t}")).collect();
                w.write_record([
                    k.kernel.as_str(),
                    target,
                    m.status.label(),
                    m.ran_on.map_or("", RanOn::label),
                    &num(m.median_s),
                    &num(speedup),
                    &num(m.build_s),
                    &num(m.tiledflow_s),
                    &times.join(" "),
                    k.size.as_deref().unwrap_or(&self.size),
                    &self.threads.to_string(),
                    m.reason.as_deref().unwrap_or(""),
                ])?;
            }
        }
        w.flush()?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_target_on_one_thread_beside_it_gives_its_parallel_efficiency() {
        // On 2 threads: gemm 1.0 s on one thread, 0.5 s on two (efficiency 1.0); lu 1.0 s and
        // 0.8 s (0.625); adi failed on one thread, so it is left out.
        let mut r = sample();
        r.targets = vec!["tasks:1".into(), "tasks".into()];
        let times = [
            (Some(1.0), Some(0.5)),
            (Some(1.0), Some(0.8)),
            (None, Some(0.3)),
        ];
        for (k, (one, two)) in r.kernels.iter_mut().zip(times) {
            let status = |t: Option<f64>| match t {
                Some(_) => Status::Verified,
                None => Status::Failed,
            };
            k.targets = vec![
                TargetResult {
                    target: "tasks:1".into(),
                    measurement: measured(status(one), one),
                    speedup: None,
                },
                TargetResult {
                    target: "tasks".into(),
                    measurement: measured(status(two), two),
                    speedup: None,
                },
            ];
        }
        let lines = r.efficiencies();
        assert_eq!(
            lines,
            vec!["tasks      on 2 threads against tasks:1: efficiency geomean 0.79, lowest 0.62 (lu) over 2 kernel(s)"]
        );
        assert!(r.table().contains(&lines[0]));
        // Without the all-threads target beside it, nothing.
        r.targets = vec!["tasks:1".into()];
        assert!(r.efficiencies().is_empty());
    }

    #[test]
    fn medians_and_geomeans() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(geomean(&[]), None);
        let g = geomean(&[2.0, 8.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "{g}");
        assert_eq!(geomean(&[2.0, 0.0]), None);
        assert_eq!(significant(123.456), "123.46");
        assert_eq!(significant(1.23456), "1.23");
        assert_eq!(significant(0.0123456), "0.0123");
        assert_eq!(significant(0.0), "0");
    }

    fn measured(status: Status, median_s: Option<f64>) -> Measurement {
        Measurement {
            status,
            reason: (status != Status::Verified).then(|| "because".to_string()),
            ran_on: None,
            build_s: Some(0.5),
            tiledflow_s: None,
            times_s: median_s.into_iter().collect(),
            median_s,
        }
    }

    pub(crate) fn sample() -> Report {
        let kernel = |name: &str, seq: (Status, Option<f64>, Option<f64>)| KernelReport {
            kernel: name.to_string(),
            original: measured(Status::Verified, Some(1.0)),
            targets: vec![TargetResult {
                target: "seq".to_string(),
                measurement: measured(seq.0, seq.1),
                speedup: seq.2,
            }],
            size: None,
        };
        let mut r = Report {
            size: "MINI".into(),
            threads: 2,
            repeat: 1,
            timed: true,
            opt_flags: vec!["-O1".into()],
            tile_sizes: None,
            targets: vec!["seq".into()],
            skipped: vec![SkippedTarget {
                target: "polly".into(),
                reason: "not installed".into(),
            }],
            kernels: vec![
                kernel("gemm", (Status::Verified, Some(0.5), Some(2.0))),
                kernel("lu", (Status::Verified, Some(0.125), Some(8.0))),
                kernel("adi", (Status::Wrong, Some(0.1), None)),
            ],
            geomeans: vec![],
        };
        r.compute_geomeans();
        r
    }

    #[test]
    fn geomeans_count_only_verified_speedups() {
        let r = sample();
        assert_eq!(r.geomeans.len(), 1);
        let g = &r.geomeans[0];
        assert!((g.speedup.unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(
            (g.n_kernels, g.n_verified, g.n_wrong, g.n_failed),
            (2, 2, 1, 0)
        );
        assert!(!r.all_verified());
    }

    #[test]
    fn a_report_read_back_has_the_means_of_its_kernels() {
        let mut r = sample();
        // A rerun's result merged in by hand: lu now at 2x, the stored means left as they were.
        r.kernels[1].targets[0].speedup = Some(2.0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merged.json");
        r.write_json(&path).unwrap();
        let back = Report::read_json(&path).unwrap();
        let g = back.geomeans[0].speedup.unwrap();
        assert!(
            (g - 2.0).abs() < 1e-12,
            "geomean of 2x and 2x, not the stored 4x: {g}"
        );
    }

    #[test]
    fn json_round_trips_and_csv_has_a_row_per_build() {
        let r = sample();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        r.write_json(&json).unwrap();
        assert_eq!(Report::read_json(&json).unwrap(), r);
        let mut csv = Vec::new();
        r.write_csv_to(&mut csv).unwrap();
        let text = String::from_utf8(csv).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 3 * 2, "{text}");
        assert!(lines[0].starts_with("kernel,target,status,ran_on,median_s,speedup"));
        assert!(
            lines.contains(&"gemm,seq,verified,,0.5,2,0.5,,0.5,MINI,2,"),
            "{text}"
        );
        assert!(
            lines.contains(&"adi,seq,WRONG,,0.1,,0.5,,0.1,MINI,2,because"),
            "{text}"
        );
    }

    #[test]
    fn problems_quote_the_start_of_each_reason() {
        let mut r = sample();
        let long: Vec<String> = (1..=20).map(|i| format!("line {i}")).collect();
        r.kernels[2].targets[0].measurement.reason = Some(long.join("\n"));
        let p = r.problems();
        assert!(p.starts_with("adi / seq: WRONG: line 1\n"), "{p}");
        assert!(p.contains("line 12\n[... 8 more lines]"), "{p}");
        assert!(!p.contains("line 13"), "{p}");
    }

    #[test]
    fn the_table_names_every_build_and_the_geomean() {
        let t = sample().table();
        assert!(t.contains("WRONG"), "{t}");
        assert!(t.contains("8.00x"), "{t}");
        assert!(
            t.contains(
                "seq        geomean speedup 4.00x over 2 kernel(s); 2 verified, 1 WRONG, 0 failed"
            ),
            "{t}"
        );
        assert!(t.contains("polly      skipped: not installed"), "{t}");
    }

    #[test]
    fn where_a_cuda_target_ran_is_in_the_table_and_the_json() {
        let mut r = sample();
        r.kernels[0].targets[0].measurement.ran_on = Some(RanOn::EmulatedGpu);
        r.kernels[1].targets[0].measurement.ran_on = Some(RanOn::CpuByCompiler);
        let t = r.table();
        assert!(t.contains("verified, emulated GPU"), "{t}");
        assert!(t.contains("verified, CPU by compiler"), "{t}");
        assert!(
            t.contains("ran on: 1 emulated GPU, 1 CPU by compiler"),
            "{t}"
        );
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"ran_on\":\"emulated GPU\""), "{json}");
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        // Reports of other targets (and older ones) have no ran_on.
        assert_eq!(
            serde_json::to_string(&sample())
                .unwrap()
                .matches("ran_on")
                .count(),
            0
        );
    }
}
