//! Printed forms of the intermediate results, for `--emit scop|deps|schedule|tasks`.
//!
//! Every form starts with a header naming the SCoP (function and line) and prints ISL text as the
//! stage produced it, one relation per line, in id order, so that outputs are deterministic.

use frontend::ir::Scop;
use polyhedral::{Dependences, TiledSchedule};
use std::fmt::Write;
use taskgen::TaskProgram;

fn header(s: &mut String, scop: &Scop) {
    let _ = writeln!(s, "# SCoP in {}() at line {}", scop.function, scop.loc.line);
}

/// Domains, schedules, accesses, parameters and arrays of a SCoP: the header, then the IR's own
/// text form ([`frontend::scop_to_string`], the one printer of a SCoP: `${i}` an iterator piece of
/// a body, `@{A}` an array piece).
pub fn scop(scop: &Scop) -> String {
    let mut s = String::new();
    header(&mut s, scop);
    s.push_str(&frontend::scop_to_string(scop));
    s
}

/// Flow, anti and output dependences.
pub fn deps(scop: &Scop, d: &Dependences) -> String {
    let mut s = String::new();
    header(&mut s, scop);
    let _ = writeln!(s, "flow:   {}", d.flow);
    let _ = writeln!(s, "anti:   {}", d.anti);
    let _ = writeln!(s, "output: {}", d.output);
    s
}

/// The tiled schedule: ISL's tree, then each nest's tiles.
pub fn schedule(scop: &Scop, t: &TiledSchedule) -> String {
    let mut s = String::new();
    header(&mut s, scop);
    let _ = writeln!(s, "{}", t.tree.trim_end());
    for (k, nest) in t.nests.iter().enumerate() {
        let stmts: Vec<String> = nest.statements.iter().map(|x| x.to_string()).collect();
        let _ = writeln!(
            s,
            "nest N{k}: statements [{}], tile sizes {}",
            stmts.join(", "),
            polyhedral::tile_sizes_text(&nest.tile_sizes)
        );
        let _ = writeln!(s, "  schedule: {}", nest.schedule);
        let _ = writeln!(s, "  tile map: {}", nest.tile_map);
        let _ = writeln!(s, "  tiles:    {}", nest.tile_domain);
    }
    s
}

/// Task classes and their inputs.
pub fn tasks(scop: &Scop, p: &TaskProgram) -> String {
    let mut s = String::new();
    header(&mut s, scop);
    s.push_str(&p.to_text());
    s.push_str(&parallelism(scop, p));
    s
}

/// Core counts whose speed-up `--emit tasks` gives.
const CORES: [usize; 4] = [2, 8, 64, 1000];

/// The work and span of the task graph at the cost model's parameter values
/// (`polyhedral::work_span`), or why there is none.
fn parallelism(scop: &Scop, p: &TaskProgram) -> String {
    let params = match polyhedral::estimate_params(scop) {
        Ok(Some(params)) => params,
        Ok(None) => return "work/span: none (the SCoP's context excludes the estimate's parameter values)\n".to_string(),
        Err(e) => return format!("work/span: none ({e})\n"),
    };
    let params = match polyhedral::with_row_lines(&params, &p.row_lines) {
        Ok(params) => params,
        Err(e) => return format!("work/span: none ({e})\n"),
    };
    let domains: Vec<String> = p.classes.iter().map(|c| c.tile_domain.clone()).collect();
    let sizes: Vec<Vec<i64>> = p.classes.iter().map(|c| c.tile_sizes.clone()).collect();
    let ws = match polyhedral::work_span(&p.graph, &domains, &sizes, &params) {
        Ok(Some(ws)) => ws,
        Ok(None) => {
            return format!(
                "work/span: none (more than {} tiles or pairs at {params})\n",
                polyhedral::MAX_TILES
            )
        }
        Err(e) => return format!("work/span: none ({e})\n"),
    };
    let at = match params.contains("->") {
        true => format!(" at {params}"),
        false => String::new(),
    };
    let speedups: Vec<String> = CORES
        .iter()
        .map(|&c| {
            format!(
                "{c}: {:.1}x-{:.1}x",
                ws.greedy_speedup(c),
                ws.parallelism().min(c as f64)
            )
        })
        .collect();
    format!(
        "work/span{at}: {} tasks, {} synchronized pairs; work {:.3e} instances, span {:.3e} along {} tasks; average parallelism {:.1}\nspeed-up on p threads (greedy schedule at least - at most): {}\n",
        ws.tasks,
        ws.edges,
        ws.work,
        ws.span,
        ws.span_tasks,
        ws.parallelism(),
        speedups.join(", ")
    )
}

/// Tile domains, tile dependences, signatures and partitions.
pub fn tiles(scop: &Scop, p: &TaskProgram) -> String {
    let mut s = String::new();
    header(&mut s, scop);
    s.push_str(&p.tiles_text());
    s
}
