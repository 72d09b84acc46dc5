//! Every PolyBench kernel under the scheduling variants of issue 4: tile sizes 1, 4 and 512
//! (larger than every MINI dimension: one tile per band), the three fusion heuristics, and the
//! `seq` and `omp` targets, each differential against the `cc` build.
//!
//! All combinations for all kernels would be 30 × 3 × 3 × 2 builds; instead each kernel gets two
//! variants whose settings rotate with the kernel's position in the sorted list:
//! - `seq`, tile size `TILES[n % 3]`, fusion `FUSES[n % 3]`;
//! - `omp` on 2 threads, tile size `TILES[(n + 1) % 3]`, fusion `FUSES[(n + 2) % 3]`.
//!
//! Over the 30 kernels every tile size meets every fusion heuristic and both targets, and every
//! kernel runs with two different tile sizes and two different heuristics. Sizes are MINI, plus
//! SMALL for the kernels in [`AT_SMALL`] (one of each kind: a stencil, a solver, a reduction).

use testsuite::par::on_cores;
use testsuite::{differential, kernel_names, Variant};

const TILES: [&str; 3] = ["1", "4", "512"];
const FUSES: [&str; 3] = ["min", "smart", "max"];

/// Kernels also checked at SMALL.
const AT_SMALL: &[&str] = &["seidel-2d", "lu", "gramschmidt"];

fn variant(target: &str, tile: &str, fuse: &str) -> Variant {
    Variant::tiledflow_cc(format!("{target}, tile {tile}, fuse {fuse}"))
        .expect("tiledflow-cc is built (cargo build --workspace)")
        .arg("--tiledflow-strict")
        .arg(format!("--tiledflow-target={target}"))
        .arg(format!("--tiledflow-tile-sizes={tile}"))
        .compile_env("TILEDFLOW_FUSE", fuse)
        .env("OMP_NUM_THREADS", "2")
}

/// The two variants of the kernel at position `n`.
fn variants(n: usize) -> Vec<Variant> {
    vec![
        variant("seq", TILES[n % 3], FUSES[n % 3]),
        variant("omp", TILES[(n + 1) % 3], FUSES[(n + 2) % 3]),
    ]
}

#[test]
fn every_kernel_under_rotating_tile_sizes_fusions_and_targets() {
    let names = kernel_names().expect("kernels are listed");
    assert!(
        names.len() >= 30,
        "expected the 30 PolyBench kernels, found {}",
        names.len()
    );
    // The kernels side by side, one per core (`testsuite::par`).
    let positions: Vec<(usize, &String)> = names.iter().enumerate().collect();
    let failures: Vec<String> = on_cores(&positions, |&(n, name)| {
        let mut sizes: Vec<&[(&str, &str)]> = vec![&[("MINI_DATASET", "")]];
        if AT_SMALL.contains(&name.as_str()) {
            sizes.push(&[("SMALL_DATASET", "")]);
        }
        sizes
            .into_iter()
            .filter_map(|defines| differential(name, defines, &variants(n)).err())
            .map(|e| format!("{e:#}"))
            .collect::<Vec<_>>()
    })
    .concat();
    assert!(
        failures.is_empty(),
        "{} kernel run(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
