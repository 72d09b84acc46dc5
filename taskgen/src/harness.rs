//! A program that runs one SCoP on its own and prints how long it took: what the driver's
//! autotuner builds for each candidate schedule and times on the machine.
//!
//! The SCoP's code is emitted exactly as in the user's file ([`crate::emit_file`] on a small
//! file of the harness's own), so the time measured is that of the code the user gets. Around
//! it, `main` declares what the SCoP reaches in the user's program: its parameters with the
//! values of a [`polyhedral::RunSizes`], its arrays with constant extents (the declared ones
//! where the user's type has them, otherwise what the SCoP reaches at those values), allocated
//! and filled with small positive numbers before the clock starts, and its scalars. A short SCoP
//! runs several times, a longer one up to three times, and its fastest run counts ([`MAX_RUNS`],
//! [`MIN_RUNS`]). Variables
//! that the user declared at file scope are declared at file scope here too, since the task code
//! names them directly. The values do not matter for the schedule's speed, only their kind:
//! no zeros to divide by, no subnormal numbers.

use crate::emit_c::{emit_file, EmitOptions, ScopCode};
use polyhedral::RunSizes;
use scop_ir::{Scop, SourceFile, Span, Storage};
use std::fmt::Write as _;

/// What the harness prints before the SCoP's seconds.
pub const SECONDS_LABEL: &str = "tiledflow-harness-seconds";

/// The line the harness prints (and flushes) as each run of the SCoP starts, so that whoever
/// watches it can tell how long the current run has taken.
pub const START_LABEL: &str = "tiledflow-harness-start";

/// A SCoP runs again (on the arrays as it left them) until its runs add up to [`MIN_SECONDS`],
/// up to this many times, and the fastest run counts: one run of a few microseconds says more
/// about the clock than about the schedule.
const MAX_RUNS: u32 = 1000;
/// See [`MAX_RUNS`].
const MIN_SECONDS: f64 = 0.05;
/// A SCoP runs at least this many times while its runs add up to less than [`FEW_SECONDS`]: on a
/// shared machine one run of a few tenths of a second varies by several percent (ludcmp's and
/// gemm's candidates swapped places from one build to the next), more than what separates
/// candidates whose code differs little.
const MIN_RUNS: u32 = 3;
/// See [`MIN_RUNS`].
const FEW_SECONDS: f64 = 1.0;

/// Where the emitted SCoP goes in the harness's text.
const REGION: &str = "  /* the SCoP */\n";

/// The C text of a program that runs `code`'s SCoP at `sizes` and prints [`SECONDS_LABEL`] and
/// the SCoP's wall-clock seconds (its fastest run) on one line, after a [`START_LABEL`] line
/// for each run. `declared` is the SCoP as the user wrote it (before
/// the compiler renamed or added variables): its variables are the ones the harness declares;
/// `sizes.extents` follows its arrays.
pub fn harness(
    code: &ScopCode<'_>,
    declared: &Scop,
    sizes: &RunSizes,
    opts: &EmitOptions,
) -> String {
    let mut head = String::new();
    let _ = writeln!(
        head,
        "/* tiledflow: autotuning harness for the SCoP of {}() at line {} */",
        declared.function, declared.loc.line
    );
    head.push_str(
        "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n",
    );
    for m in declared.macros.iter().filter(|m| m.origin != "<built-in>") {
        let _ = writeln!(head, "{}", m.define);
    }
    let mut body = String::new();
    for p in &declared.params {
        let value = sizes
            .params
            .iter()
            .find(|(n, _)| *n == p.name)
            .map_or(0, |(_, v)| *v);
        let decl = format!("{} {}", p.c_type, p.name);
        declare(
            &mut head,
            &mut body,
            p.storage,
            &decl,
            &p.name,
            &value.to_string(),
        );
    }
    for (a, reached) in declared.arrays.iter().zip(&sizes.extents) {
        if a.storage == Storage::Block {
            continue; // declared by the emitted code
        }
        let t = &a.elem_type;
        if a.rank == 0 {
            let decl = format!("{t} {}", a.name);
            declare(
                &mut head,
                &mut body,
                a.storage,
                &decl,
                &a.name,
                &format!("({t})1"),
            );
            continue;
        }
        let dims: Vec<i64> = (0..a.rank)
            .map(|d| match a.extents.get(d).copied().flatten() {
                Some(c) => i64::try_from(c).unwrap_or(i64::MAX),
                None => reached.get(d).copied().unwrap_or(1).max(1),
            })
            .collect();
        let inner: String = dims[1..].iter().map(|e| format!("[{e}]")).collect();
        let total = dims
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(" * ");
        let alloc = format!("({t} (*){inner})calloc((size_t){total}, sizeof({t}))");
        let decl = format!("{t} (*{}){inner}", a.name);
        declare(&mut head, &mut body, a.storage, &decl, &a.name, &alloc);
        let _ = writeln!(
            body,
            "  if (!{n}) return 3;\n  for (long tf_k = 0; tf_k < (long){total}; tf_k++) (({t} *){n})[tf_k] = ({t})(tf_k % 5 + 1);",
            n = a.name
        );
    }
    let _ = write!(
        body,
        "  double tf_best = 1e300, tf_total = 0;\n  for (int tf_rep = 0; tf_rep < {MAX_RUNS} && (tf_rep == 0 || tf_total < {MIN_SECONDS} || (tf_rep < {MIN_RUNS} && tf_total < {FEW_SECONDS:?})); tf_rep++) {{\n  \
         struct timespec tf_t0, tf_t1;\n  puts(\"{START_LABEL}\");\n  fflush(stdout);\n  clock_gettime(CLOCK_MONOTONIC, &tf_t0);\n"
    );
    let mut text = head;
    let insert_at = text.len();
    text.push_str("int main(void)\n{\n");
    text.push_str(&body);
    let region = Span {
        start: text.len(),
        end: text.len() + REGION.len(),
    };
    text.push_str(REGION);
    let _ = write!(
        text,
        "  clock_gettime(CLOCK_MONOTONIC, &tf_t1);\n  \
         double tf_s = (double)(tf_t1.tv_sec - tf_t0.tv_sec) + 1e-9 * (double)(tf_t1.tv_nsec - tf_t0.tv_nsec);\n  \
         tf_total += tf_s;\n  if (tf_s < tf_best) tf_best = tf_s;\n  }}\n  \
         printf(\"{SECONDS_LABEL} %.9f\\n\", tf_best);\n  return 0;\n}}\n"
    );
    let mut scop = code.scop.clone();
    scop.region = region;
    scop.insert_at = insert_at;
    let file = SourceFile {
        path: "tiledflow-harness.c".into(),
        text,
        scops: Vec::new(),
    };
    let placed = ScopCode {
        scop: &scop,
        program: code.program,
        omp: code.omp,
        private: code.private,
        cuda: code.cuda,
        materialized: code.materialized,
    };
    let opts = EmitOptions {
        line_directives: false,
        ..opts.clone()
    };
    emit_file(&file, &[placed], &opts)
}

/// Declares `decl` (`double (*A)[20]`, naming `name`) and sets it to `init` in `main`: at file
/// scope (`head`) when the user's variable is there, since the task code names it directly;
/// otherwise in `main`'s `body`, from which the emitted code captures it.
fn declare(
    head: &mut String,
    body: &mut String,
    storage: Storage,
    decl: &str,
    name: &str,
    init: &str,
) {
    match storage {
        Storage::File => {
            let _ = writeln!(head, "static {decl};");
            let _ = writeln!(body, "  {name} = {init};");
        }
        _ => {
            let _ = writeln!(body, "  {decl} = {init};");
        }
    }
}
