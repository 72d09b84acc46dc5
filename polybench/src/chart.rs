//! The SVG chart of a report: per kernel, one bar per target showing its speedup over the
//! original on a logarithmic axis (bars grow up from 1x for a gain, down for a loss), a cross
//! at 1x where the target is WRONG or failed, and the geometric means in the legend.

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::report::{significant, Report, Status};

/// Pixels per kernel on the x axis (the chart is at least [`MIN_WIDTH`] wide).
const PX_PER_KERNEL: u32 = 48;
const MIN_WIDTH: u32 = 1000;
const HEIGHT: u32 = 620;
/// Width of the legend panel on the right.
const LEGEND_WIDTH: u32 = 330;

/// Writes the chart of `report` to `path` as SVG.
pub fn write_svg(report: &Report, path: &Path) -> Result<()> {
    let svg_err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let n = report.kernels.len().max(1);
    let width = (PX_PER_KERNEL * n as u32 + 150 + LEGEND_WIDTH).max(MIN_WIDTH);
    let whole = SVGBackend::new(path, (width, HEIGHT)).into_drawing_area();
    whole.fill(&WHITE).map_err(|e| svg_err(&e))?;
    let caption = format!(
        "PolyBench {}: speedup over the original ({}), {} thread(s), median of {} run(s)",
        report.size,
        report.opt_flags.join(" "),
        report.threads,
        report.repeat
    );
    let titled = whole
        .titled(&caption, ("sans-serif", 20))
        .map_err(|e| svg_err(&e))?;
    let (root, legend) = titled.split_horizontally(width - LEGEND_WIDTH);

    let speedups: Vec<f64> = report
        .kernels
        .iter()
        .flat_map(|k| k.targets.iter().filter_map(|r| r.speedup))
        .collect();
    let lo = speedups.iter().copied().fold(1.0f64, f64::min) / 1.5;
    let hi = speedups.iter().copied().fold(1.0f64, f64::max) * 1.5;

    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(120)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, (lo..hi).log_scale())
        .map_err(|e| svg_err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("speedup (log scale)")
        .y_label_formatter(&|y| format!("{}x", significant(*y)))
        .draw()
        .map_err(|e| svg_err(&e))?;
    // Kernel names under their bars, written downwards.
    let label_font = ("sans-serif", 14)
        .into_font()
        .transform(FontTransform::Rotate90);
    for (i, k) in report.kernels.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, lo));
        root.draw(&Text::new(
            k.kernel.clone(),
            (x + 6, y + 8),
            label_font.clone(),
        ))
        .map_err(|e| svg_err(&e))?;
    }

    // The 1x line.
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 1.0), (n as f64, 1.0)],
            BLACK.stroke_width(1),
        )))
        .map_err(|e| svg_err(&e))?;

    let n_targets = report.targets.len().max(1);
    let slot = 0.8 / n_targets as f64;
    let mut legend_entries: Vec<(String, Option<RGBAColor>)> = Vec::new();
    for (j, target) in report.targets.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let bars = report.kernels.iter().enumerate().filter_map(|(i, k)| {
            let s = k.targets.iter().find(|r| &r.target == target)?.speedup?;
            let x0 = i as f64 + 0.1 + j as f64 * slot;
            Some(Rectangle::new(
                [(x0, 1.0), (x0 + slot * 0.9, s)],
                color.filled(),
            ))
        });
        legend_entries.push((
            match report.geomeans.iter().find(|g| &g.target == target) {
                Some(g) => match g.speedup {
                    Some(s) => format!(
                        "{target}: geomean {}x ({} kernels)",
                        significant(s),
                        g.n_kernels
                    ),
                    None => format!(
                        "{target}: no verified timing ({} WRONG, {} failed)",
                        g.n_wrong, g.n_failed
                    ),
                },
                None => target.clone(),
            },
            Some(color),
        ));
        chart.draw_series(bars).map_err(|e| svg_err(&e))?;
    }

    let crosses: Vec<(f64, f64)> = report
        .kernels
        .iter()
        .enumerate()
        .flat_map(|(i, k)| {
            k.targets.iter().filter_map(move |r| {
                let j = report.targets.iter().position(|t| t == &r.target)?;
                (r.measurement.status != Status::Verified)
                    .then_some((i as f64 + 0.1 + (j as f64 + 0.45) * slot, 1.0))
            })
        })
        .collect();
    if !crosses.is_empty() {
        chart
            .draw_series(
                crosses
                    .into_iter()
                    .map(|p| Cross::new(p, 6, RED.stroke_width(3))),
            )
            .map_err(|e| svg_err(&e))?;
        legend_entries.push(("WRONG or failed".to_string(), None));
    }
    // The legend, in a panel of its own so that it never hides a bar.
    let font = ("sans-serif", 15).into_font();
    for (idx, (label, color)) in legend_entries.into_iter().enumerate() {
        let y = 30 + 26 * idx as i32;
        match color {
            Some(c) => legend.draw(&Rectangle::new([(10, y - 7), (26, y + 7)], c.filled())),
            None => legend.draw(&Cross::new((18, y), 6, RED.stroke_width(3))),
        }
        .map_err(|e| svg_err(&e))?;
        legend
            .draw(&Text::new(label, (34, y - 8), font.clone()))
            .map_err(|e| svg_err(&e))?;
    }
    whole.present().map_err(|e| svg_err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn the_chart_names_every_kernel_and_target() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.svg");
        write_svg(&sample(), &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        for text in [
            "gemm",
            "lu",
            "adi",
            "seq: geomean 4.00x (2 kernels)",
            "WRONG or failed",
        ] {
            assert!(svg.contains(text), "no `{text}` in the chart");
        }
        // Two verified bars and the legend's swatch, in the target's colour.
        let color = Palette99::pick(0).to_rgba();
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
        assert!(svg.matches(&fill).count() >= 3, "{fill} in {svg}");
    }
}
