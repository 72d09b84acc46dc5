//! C statement forms beyond plain assignments inside SCoPs (`testsuite/data/forms/*.c`): each
//! program is built by `cc` as the reference and by `tiledflow-cc --tiledflow-strict` (so that a
//! refused SCoP fails instead of falling back) on every CPU target, with 1 and 2 threads, several
//! sizes and tile sizes; it prints every result as a hexadecimal float, and the outputs must be
//! identical. `-v` must show how many statements the SCoP has, so that a form silently dropped
//! from the SCoP fails too.

use std::path::PathBuf;
use std::time::Duration;
use testsuite::paths::{reference_cc, repo_root, tool_path};
use testsuite::process::{compile, compile_with_stderr, run};

/// The items `-v` lists after the others: where a list read from its line ends.
const LATER: [&str; 3] = [
    ", tiles spawned in the order: ",
    ", tiles spawned together: ",
    ", tiles spread over the threads in blocks: ",
];

/// `s` up to the first of the [`LATER`] items, if any.
fn before_later(s: &str) -> &str {
    let end = LATER
        .iter()
        .filter_map(|label| s.find(label))
        .min()
        .unwrap_or(s.len());
    &s[..end]
}

fn data(name: &str) -> PathBuf {
    repo_root().join("testsuite/data/forms").join(name)
}

/// Checks `file` against `cc` for each set of `-D` flags; `scop_line` is the verbose line's
/// `SCoP in ...: N statements` part that must appear.
fn check(file: &str, sizes: &[&[&str]], scop_line: &str) {
    check_with(file, sizes, &[], &[], scop_line);
}

/// [`check`] with `extra` flags for both compilers and `ours` for tiledflow-cc only.
fn check_with(file: &str, sizes: &[&[&str]], extra: &[&str], ours_only: &[&str], scop_line: &str) {
    let dir = tempfile::tempdir().unwrap();
    let src = data(file);
    let tiledflow_cc = tool_path("tiledflow-cc").expect("the workspace is built");
    for defines in sizes {
        let mut flags: Vec<String> = vec!["-O1".into(), "-ffp-contract=off".into(), "-lm".into()];
        flags.extend(extra.iter().map(|d| d.to_string()));
        flags.extend(defines.iter().map(|d| d.to_string()));
        let reference = dir.path().join("reference");
        compile(reference_cc(), &[&src], &flags, &reference).unwrap();
        let want = run(&reference, &[], Duration::from_secs(60)).unwrap();
        assert!(want.status.success());
        for (target, tiles) in [("tasks", ""), ("tasks", "5,3"), ("seq", "4"), ("omp", "")] {
            let exe = dir
                .path()
                .join(format!("{target}{}", tiles.replace(',', "_")));
            let mut ours = flags.clone();
            ours.extend([
                "--tiledflow-strict".to_string(),
                "--tiledflow-verbose".to_string(),
                format!("--tiledflow-target={target}"),
            ]);
            if !tiles.is_empty() {
                ours.push(format!("--tiledflow-tile-sizes={tiles}"));
            }
            ours.extend(ours_only.iter().map(|f| f.to_string()));
            let said = compile_with_stderr(&tiledflow_cc, &[&src], &ours, &exe)
                .unwrap_or_else(|e| panic!("{file} {defines:?} {target}: {e:#}"));
            assert!(said.contains(scop_line), "{file} {target}: {said}");
            for threads in ["1", "2"] {
                let env = [
                    ("TILEDFLOW_NUM_THREADS", threads),
                    ("OMP_NUM_THREADS", threads),
                ];
                let got = run(&exe, &env, Duration::from_secs(60)).unwrap();
                assert!(
                    got.status.success() && got.stdout == want.stdout,
                    "{file} {defines:?} {target} tiles {tiles:?}, {threads} thread(s): the output differs from cc's\n{}",
                    String::from_utf8_lossy(&got.stderr)
                );
            }
        }
    }
}

#[test]
fn scalars_declared_inside_the_loops() {
    check(
        "blocktemp.c",
        &[&[], &["-DN=7", "-DM=65"], &["-DN=1", "-DM=2"]],
        "SCoP in kernel() at line 20: 13 statements",
    );
}

#[test]
fn chained_assignments_commas_increments_calls_and_conditionals() {
    check(
        "assignments.c",
        &[&[], &["-DN=9"], &["-DN=2"]],
        "SCoP in kernel() at line 19: 14 statements",
    );
}

/// Statements written as function-like macro calls (the whole statement one call, a call
/// whose definition ends with the `;`, calls in arguments) are re-emitted as written.
#[test]
fn statements_written_as_macro_calls() {
    check(
        "macros.c",
        &[&[], &["-DN=9"], &["-DN=2"]],
        "SCoP in kernel() at line 20: 4 statements",
    );
}

/// The vector extensions of this machine's processor that the generated code may use.
fn cpu_flags() -> Vec<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The register blocks of a kernel whose panel (the reduction by the lanes) stays in the L1, as
/// `-v` says them (`polyhedral::kernel::shapes_for`): 6 rows with 32-byte vectors where the
/// statement packs one operand at most.
const SMALL_PANEL: &str = "4x4 vectors of 64 bytes or 6x2 of 32";

/// [`SMALL_PANEL`] for a statement that packs two operands: 12 accumulators and their 4 vectors
/// would take every 32-byte register.
const SMALL_PANEL_TWO_PACKED: &str = "4x4 vectors of 64 bytes or 4x2 of 32";

/// The register blocks of a kernel whose panel is larger than the L1 (see below).
const LARGE_PANEL: &str = "8x2 vectors of 64 bytes or 6x2 of 32";

/// Tiles of 96 make the contractions' panels 72 KiB, more than the L1 holds: their full tiles
/// run 8 rows by 2 vectors with 64-byte vectors (`polyhedral::kernel::shapes_for`), and the
/// results stay cc's for each width.
#[test]
fn contractions_in_kernels_of_8_rows() {
    let kernels = register_kernels("contractions.c", &["--tile-sizes", "96", "-DN=200"]);
    assert!(
        kernels
            .concat()
            .iter()
            .any(|k| k.contains(&format!("in {LARGE_PANEL}"))),
        "{kernels:?}"
    );
    for extra in vector_widths() {
        check_with(
            "contractions.c",
            &[&["-DN=200"]],
            extra,
            &["--tiledflow-tile-sizes=96"],
            "SCoP in kernel() at line 27: 10 statements",
        );
    }
}

#[test]
fn contractions_in_vector_kernels() {
    // The kernels are compiled for 32- and 64-byte vectors: each width this processor has, and
    // none (the scalar code under the same `#if`). Separated (`min`), each statement's nest has
    // full tiles at the default size (100) as at 200, so it runs at 100 and 5 only.
    for extra in vector_widths() {
        for (fuse, sizes) in [
            (&[][..], &[&[][..], &["-DN=200"], &["-DN=5"]][..]),
            (&["--tiledflow-fuse=min"], &[&[], &["-DN=5"]]),
        ] {
            check_with(
                "contractions.c",
                sizes,
                extra,
                fuse,
                "SCoP in kernel() at line 27: 10 statements",
            );
        }
    }
}

/// Dynamic programs whose reductions read a column of a table: nussinov's shape gets its
/// column in a buffer (`polyhedral::column`) where the tiles are full, with tile sizes that make
/// full tiles at these sizes (`5,3` and `4`), and every result stays `cc`'s.
#[test]
fn columns_read_from_buffers() {
    check(
        "columns.c",
        &[&[], &["-DN=37"], &["-DN=2"]],
        "SCoP in kernel() at line 22: 9 statements",
    );
    for tiles in ["5,3", "4", "16,8"] {
        let kernels = register_kernels("columns.c", &["--tile-sizes", tiles]);
        let columns: Vec<&String> = kernels
            .iter()
            .flatten()
            .filter(|k| k.contains("reads a column"))
            .collect();
        assert_eq!(
            columns,
            ["S4 reads a column of T from a buffer"],
            "tiles {tiles}: {kernels:?}"
        );
    }
}

/// Triangular products whose operands the innermost loop may read across rows: the tiles that
/// are not full copy those operands first where it does (`polyhedral::gather`: syrk's `A[j][k]`
/// and its shifted `A[j + 1][k - 1]`; syr2k's and the float product's tiles keep `k` innermost),
/// and every result stays `cc`'s.
#[test]
fn operands_gathered_in_the_other_tiles() {
    check(
        "gathers.c",
        &[&[], &["-DN=37", "-DM=29"], &["-DN=3", "-DM=2"]],
        "SCoP in kernel() at line 22: 7 statements",
    );
    for tiles in ["5,3", "16"] {
        let kernels = register_kernels("gathers.c", &["--tile-sizes", tiles]);
        let mut gathered: Vec<&String> = kernels
            .iter()
            .flatten()
            .filter(|k| k.contains("from a copy"))
            .collect();
        gathered.sort();
        assert_eq!(
            gathered,
            [
                "S1 reads A from a copy in the other tiles",
                "S6 reads A from a copy in the other tiles",
            ],
            "tiles {tiles}: {kernels:?}"
        );
    }
}

/// Nests that write rows of whole cache lines get their tiles shifted at run time onto the lines
/// of one of their arrays (`polyhedral::align`); the program runs its kernel with its arrays at
/// every offset in a line, so every value of the shift runs, and every result stays `cc`'s.
#[test]
fn tiles_shifted_onto_the_arrays_cache_lines() {
    check(
        "lines.c",
        &[&[], &["-DN=37", "-DM=32"], &["-DN=24", "-DM=48"]],
        "SCoP in kernel() at line 26: 6 statements",
    );
    // With the default tiles (the runs above without tile sizes), the two nests whose
    // neighbouring tiles wait for each other are shifted.
    for defines in [&[][..], &["-DN=37", "-DM=32"]] {
        let said = verbose("lines.c", defines);
        assert!(
            said.contains("tiles shifted at run time: N0 on the lines of F; N1 on the lines of R"),
            "{defines:?}: {said}"
        );
    }
    // `--emit schedule` shows the schedule the C has: the shifts are its parameters.
    let out = tiledflow("lines.c", &["--emit", "schedule"]);
    let schedule = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for param in ["tf_line0", "tf_line1"] {
        assert!(schedule.contains(param), "{param}: {schedule}");
    }
}

/// The register kernels' widths this processor can run: none (the scalar code under the same
/// `#if`), and AVX2's and AVX-512's where it has them.
fn vector_widths() -> Vec<&'static [&'static str]> {
    let cpu = cpu_flags();
    let mut widths: Vec<&[&str]> = vec![&[]];
    if cpu.iter().any(|f| f == "avx2") {
        widths.push(&["-mavx2"]);
    }
    if cpu.iter().any(|f| f == "avx512f") {
        widths.push(&["-mavx512f"]);
    }
    widths
}

/// tiledflow run on `file` with `args`, on the reference machine's cache sizes.
fn tiledflow(file: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(tool_path("tiledflow").expect("the workspace is built"))
        .envs(testsuite::REFERENCE_MACHINE)
        .args(args)
        .arg(data(file))
        .output()
        .unwrap()
}

/// What tiledflow's `-v` says on `file` with `args` (it must succeed).
fn verbose(file: &str, args: &[&str]) -> String {
    let mut all = vec!["-v", "-o", "-"];
    all.extend_from_slice(args);
    let out = tiledflow(file, &all);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    said
}

/// The `register kernels (...)` lists of tiledflow's `-v` on `file` with `args`, one per SCoP
/// that has any, each sorted.
fn register_kernels(file: &str, args: &[&str]) -> Vec<Vec<String>> {
    verbose(file, args)
        .lines()
        .map(|line| {
            let mut k: Vec<String> = line
                .split("register kernels (")
                .skip(1)
                .filter_map(|s| s.split(')').next())
                .flat_map(|s| s.split(", ").map(str::to_string))
                .collect();
            k.sort();
            k
        })
        .filter(|k| !k.is_empty())
        .collect()
}

#[test]
fn contractions_over_arrays_of_copies() {
    for extra in vector_widths() {
        check_with(
            "temporaries.c",
            &[&[], &["-DNR=3", "-DNQ=5", "-DNP=70", "-DM=33", "-DN=41"]],
            extra,
            &[],
            "SCoP in kernel() at line 32: 7 statements",
        );
    }
}

/// The contractions into the arrays of copies (doitgen's `sum[p] +=`, S1, and symm's
/// `temp2 +=`, S5) get vector kernels beside symm's update of `C` (S4): the kernels read the
/// statements' text with the copies' subscripts (`tf_x_sum[r][q][p]`), as it is emitted.
/// doitgen's, a batch of products (`tile_size::batch_products`), has tiles of 128 rows, lanes
/// and steps: its panel is larger than the L1.
#[test]
fn temporaries_get_register_kernels() {
    let want: Vec<String> = [
        ("S1", LARGE_PANEL),
        ("S4", SMALL_PANEL),
        ("S5", SMALL_PANEL),
    ]
    .iter()
    .map(|(s, panel)| format!("{s} in {panel}"))
    .collect();
    assert_eq!(
        register_kernels("temporaries.c", &[]).concat(),
        want,
        "temporaries.c"
    );
}

/// Scalars folded into the elements they stand for (`polyhedral::fold_element_scalars`), and
/// webs of the same scalars that must not be: the results are cc's, and `-v` names exactly the
/// webs checked by hand to qualify (the factorization's two, the row update's; not the web whose
/// element is read before its store, nor the store to another element, nor the last webs).
#[test]
fn scalars_folded_into_their_elements() {
    check(
        "folded.c",
        &[&[], &["-DN=7"], &["-DN=1"]],
        "SCoP in kernel() at line 19: 20 statements",
    );
    let said = verbose("folded.c", &[]);
    let folded = said
        .split("scalars folded into elements: ")
        .nth(1)
        .and_then(|s| s.rsplit_once(", ").map(|(webs, _ms)| webs))
        .map(before_later)
        .unwrap_or_default();
    assert_eq!(
        folded,
        "w into A[i][j] (lines 22-25); w into A[i][j] (lines 28-31); s into v[i] (lines 35-38)",
        "{said}"
    );
}

/// In-order reductions moved into the step before their own (`polyhedral::retime_reductions`):
/// the results are cc's at sizes from 1 to 60, and `-v` says what moved: the recurrence's sum
/// forwarded to `z` and moved beside its update; the second's moved beside the copy but not
/// forwarded (`v` is halved after the copy: reading it would change the sums).
#[test]
fn reductions_moved_into_the_step_before() {
    check(
        "retimed.c",
        &[&[], &["-DN=7"], &["-DN=2"], &["-DN=1"]],
        "SCoP in recurrence() at line 20: 10 statements",
    );
    let said = verbose("retimed.c", &[]);
    let retimed: Vec<&str> = said
        .lines()
        .filter_map(|l| l.split("retimed: ").nth(1))
        .filter_map(|s| s.rsplit_once(", ").map(|(what, _ms)| what))
        .map(before_later)
        .collect();
    assert_eq!(
        retimed,
        vec![
            "y forwarded to z in the statement at line 28; the statements at lines 26, 28 advanced by one step of `k` (fused with line 31)",
            "the statements at lines 47, 49 advanced by one step of `k` (fused with line 54)",
        ],
        "{said}"
    );
}

/// The register kernels' packed and scaled buffers are the thread's (`static __thread`), not
/// the task's stack (`polyhedral::kernel`, "The buffers are the thread's"): every declaration
/// of one in the generated C, and there are some (`contractions_in_vector_kernels` checks that
/// the results stay cc's on several threads with them).
#[test]
fn kernel_buffers_are_thread_local() {
    let out = tiledflow("contractions.c", &["-o", "-", "-DN=200"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = String::from_utf8_lossy(&out.stdout);
    let decls: Vec<&str> = c
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("__attribute__((aligned(64)))"))
        .filter(|l| l.contains(" tf_pack") || l.contains(" tf_scaled"))
        .collect();
    assert!(decls.iter().any(|l| l.contains("tf_pack0")), "{c}");
    assert!(decls.iter().any(|l| l.contains("tf_scaled")), "{c}");
    for d in &decls {
        assert!(d.starts_with("static __thread "), "{d}");
    }
}

/// At the default tile sizes, the contractions' full tiles get kernels (the test above would
/// pass without them): vectors for the contractions but the one whose vector loop carries a
/// dependence (those whose products start with factors that do not vary along the lanes with
/// these products computed once per row), accumulators for the triangular solve (under
/// `--fuse min`, which tiles it in two dimensions; their rows as vector lanes, although the
/// solve reads the vector it writes at other elements: none that a block of rows holds), none
/// for the update whose row is also read through another subscript.
#[test]
fn contractions_get_register_kernels() {
    let kernels = register_kernels("contractions.c", &["--fuse", "min", "-DN=200"]);
    let mut vectors: Vec<String> = ["S1", "S2", "S3", "S4", "S6"]
        .iter()
        .map(|s| format!("{s} in {SMALL_PANEL}"))
        .collect();
    // The sum of two products, each with its operand along the lanes packed.
    vectors.push(format!("S9 in {SMALL_PANEL_TWO_PACKED}"));
    // The products before the lanes (`alpha * A[i][k]`, `3 * Fa[k][i]`) scaled in advance.
    for s in ["S0", "S8"] {
        vectors.push(format!("{s} in {SMALL_PANEL} with scaled rows"));
    }
    vectors.sort();
    // cholesky's update (the third SCoP), in the tiles below the diagonal: vectors, with the
    // transposed occurrence of the matrix it writes packed and its row's factor `L[i][k]` read
    // from a buffer (`polyhedral::kernel`).
    assert_eq!(
        kernels,
        vec![
            vectors,
            vec!["S1 in 8 accumulators as vector lanes".to_string()],
            vec![format!("S0 in {SMALL_PANEL} with scaled rows")]
        ],
        "contractions.c"
    );
}

/// Matrix-vector rows whose jammed copies run as the lanes of vectors (`polyhedral::rows`), on
/// every vector width this processor has and none: the results are cc's where the loops' steps
/// are a multiple of the lanes and where one step is left (`M = 1101`), and with the tile sizes
/// of [`check_with`] (rows jammed by four at tiles of 4, no rows jammed at `5,3`). At the large
/// size `-v` names a loop in each of the three nests of `kernel()` (the float one in eight lanes)
/// and none in `kept()`, whose rows read each other's sums or whose sum another statement reads.
#[test]
fn rows_run_as_vector_lanes() {
    for extra in vector_widths() {
        check_with(
            "rows.c",
            &[&[], &["-DN=1000", "-DM=1101"], &["-DN=37", "-DM=30"]],
            extra,
            &[],
            "SCoP in kernel() at line 23: 7 statements",
        );
    }
    let said = verbose("rows.c", &["-DN=1000", "-DM=1101"]);
    let lanes_in = |scop: &str| -> usize {
        let line = said
            .lines()
            .find(|l| l.contains(scop))
            .unwrap_or_else(|| panic!("{scop}: {said}"));
        before_later(line).matches("rows as vector lanes (").count()
    };
    assert_eq!(lanes_in("SCoP in kernel() at line 23"), 3, "{said}");
    assert_eq!(lanes_in("SCoP in kept() at line 44"), 0, "{said}");
    let out = tiledflow("rows.c", &["-o", "-", "-DN=1000", "-DM=1101"]);
    let c = String::from_utf8_lossy(&out.stdout);
    for transpose in ["tf_transpose_rowd(tf_rows", "tf_transpose_rowf(tf_rows"] {
        assert!(c.contains(transpose), "{transpose}");
    }
}

/// Full tiles whose statements get a register kernel only one at a time run them one after the
/// other (`polyhedral::apart`), a block of eight rows at a time with
/// the sums first: bicg's pair verifies with its sums in accumulators (their rows as vector
/// lanes where the C compiler has vectors, `polyhedral::rows`' "Accumulators as lanes", and
/// the update in the same loop, `polyhedral::apart`'s "One pass"; every vector width this
/// processor has, and none) and no loop jammed around both, at sizes with full tiles (whose
/// last tile's rows are whole blocks at `N = 1000`, and not at 1003) and at tiles of 5 x 3; the
/// pair whose sum reads the element the update has just written keeps the jammed loop; the pair
/// whose update is a recurrence along the rows' loop (skewed by the scheduler) keeps its update
/// in a loop of its own; mvt's pair in floats runs its update in the sums' loop too, eight rows
/// and eight columns a vector.
#[test]
fn statements_apart_in_full_tiles() {
    for extra in vector_widths() {
        check_with(
            "apart.c",
            &[
                &[],
                &["-DN=1000", "-DM=1200"],
                &["-DN=1003", "-DM=1200"],
                &["-DN=37", "-DM=30"],
            ],
            extra,
            &["--tiledflow-fuse=reuse"],
            "SCoP in apart() at line 21: 4 statements",
        );
    }
    let said = verbose("apart.c", &["--fuse", "reuse", "-DN=1000", "-DM=1200"]);
    let line = |scop: &str| -> &str {
        said.lines()
            .find(|l| l.contains(scop))
            .unwrap_or_else(|| panic!("{scop}: {said}"))
    };
    let apart = before_later(line("SCoP in apart() at line 21"));
    assert!(
        apart.contains("S3 in 8 accumulators as vector lanes with S2 in the same loop"),
        "{apart}"
    );
    assert!(
        apart.contains("statements apart in blocks of 8 rows, sums first"),
        "{apart}"
    );
    assert!(!apart.contains("jammed by"), "{apart}");
    let together = before_later(line("SCoP in together() at line 36"));
    assert!(together.contains("jammed by 4"), "{together}");
    assert!(!together.contains("register kernels"), "{together}");
    let recurrent = before_later(line("SCoP in recurrent() at line 50"));
    assert!(recurrent.contains("statements apart"), "{recurrent}");
    assert!(!recurrent.contains("in the same loop"), "{recurrent}");
    let floats = before_later(line("SCoP in mvt_float() at line 66"));
    assert!(
        floats.contains("S0 in 8 accumulators as vector lanes with S1 in the same loop"),
        "{floats}"
    );
}

/// Recurrences along rows jammed by sixteen whose rows run as the lanes of vectors step by step
/// (`polyhedral::rows`, "Steps as lanes"): adi's sweeps (a forward pair whose last values stay
/// in registers, operands read across the rows contiguously, a backward sweep) and a compound
/// assignment and deriche's running values (eight rows of floats, values of the step before and
/// of the same step in registers) verify bit for bit against cc at sizes with full tiles and
/// with tiles that cut the rows (guarded copies, which run the jammed scalar loop), at every
/// vector width this processor has; the recurrence that reads the row before at the same step
/// keeps its rows apart.
#[test]
fn recurrences_as_lanes_step_by_step() {
    for extra in vector_widths() {
        check_with(
            "recur.c",
            &[&[], &["-DN=1000", "-DM=1200"], &["-DN=37", "-DM=30"]],
            extra,
            &[],
            "SCoP in sweeps() at line 23: 6 statements",
        );
    }
    let said = verbose("recur.c", &["-DN=1000", "-DM=1200"]);
    let line = |scop: &str| -> &str {
        said.lines()
            .find(|l| l.contains(scop))
            .unwrap_or_else(|| panic!("{scop}: {said}"))
    };
    let sweeps = line("SCoP in sweeps() at line 23");
    assert!(sweeps.contains("jammed by 16"), "{sweeps}");
    assert!(
        sweeps.contains("steps as vector lanes (tf_i3, tf_i4)"),
        "{sweeps}"
    );
    let compound = line("SCoP in compound() at line 40");
    assert!(compound.contains("steps as vector lanes"), "{compound}");
    let running = line("SCoP in running() at line 49");
    assert!(running.contains("steps as vector lanes"), "{running}");
    let crossed = line("SCoP in crossed() at line 62");
    // Its rows run lagged, eight at a time (`polyhedral::chains`, "Lagged rows").
    assert!(crossed.contains("jammed by 8"), "{crossed}");
    assert!(!crossed.contains("steps as vector lanes"), "{crossed}");
    // The vectors filled lane by lane are defined first: the C compiler, optimizing, has
    // nothing to warn about (a user's `-Werror` build must not break).
    if cfg!(target_arch = "x86_64") {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("recur.c");
        let made = tiledflow(
            "recur.c",
            &["-DN=1000", "-DM=1200", "-o", out.to_str().unwrap()],
        );
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let cc = std::process::Command::new(reference_cc())
            .args([
                "-c", "-O1", "-mavx2", "-Wall", "-Wextra", "-DN=1000", "-DM=1200",
            ])
            .arg(&out)
            .arg("-o")
            .arg(dir.path().join("recur.o"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&cc.stderr);
        assert!(cc.status.success() && said.trim().is_empty(), "{said}");
    }
}

/// A reduction whose rows end with other statements (cholesky's), in tiles of 16: the tiles below
/// the diagonal of the rows and on the diagonal of the other two loops run eight rows'
/// reductions in accumulators and then each row's other statements in row order
/// (`polyhedral::kernel`'s "Accumulators with a tail"), and the tiles on the diagonal of the
/// first two loops run blocks of eight rows of `j < i` while a whole one fits, then single rows
/// ("Rows that end anywhere"). The results verify bit for bit against
/// cc at N = 128, where the last block of rows is whole, and at 100, 67 and 130, where it is
/// cut, at every vector width this processor has, and `-v` names the kernel and its tail.
#[test]
fn rows_of_triangles_run_eight_at_once_with_their_tails_and_ends() {
    for extra in vector_widths() {
        check_with(
            "tails.c",
            &[&[], &["-DN=67"], &["-DN=130"], &["-DN=128"]],
            extra,
            &["--tiledflow-tile-sizes=16"],
            "SCoP in cholesky() at line 17: 4 statements",
        );
    }
    let said = verbose("tails.c", &["--tile-sizes", "16"]);
    assert!(
        said.contains("S0 in 8 accumulators then each row's S1, S0, S2"),
        "{said}"
    );
    assert!(
        said.contains("S0 in 8 accumulators and single rows left"),
        "{said}"
    );
}

/// A reduction whose loop starts at the row (trmm's `k` from `i + 1`), under `--fuse max`: the
/// register kernel that ran a block of rows from the first row's bounds read the upper triangle
/// of `A` (large values here, so any such term shows) and is refused now; the results verify
/// bit for bit against cc at every vector width this processor has, and the tile code says no
/// kernel.
#[test]
fn reductions_whose_bounds_move_with_the_row_keep_their_rows_apart() {
    for extra in vector_widths() {
        check_with(
            "triangle.c",
            &[&[], &["-DM=200", "-DN=240"], &["-DM=37", "-DN=30"]],
            extra,
            &["--tiledflow-fuse=max"],
            "SCoP in triangle() at line 20: 2 statements",
        );
    }
    let said = verbose("triangle.c", &["--fuse", "max", "-DM=200", "-DN=240"]);
    assert!(said.contains("band loop tf_i5 innermost"), "{said}");
    assert!(!said.contains("register kernels"), "{said}");
}
