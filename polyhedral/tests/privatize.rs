//! Scalar expansion on the PolyBench kernels that write scalars, against the live ranges read
//! off their source (each test says why).

mod common;

use polyhedral::{
    dependences, expand_scalars, scalar_expansions, schedule, task_private, ScalarExpansion,
    ScheduleConfig,
};

/// The names of the expanded scalars with their depths.
fn expanded(scop: &frontend::ir::Scop, e: &[ScalarExpansion]) -> Vec<(String, usize)> {
    e.iter()
        .map(|x| (scop.array(x.array).name.clone(), x.loops))
        .collect()
}

/// gramschmidt: `nrm = 0` (S0) then `nrm += A[i][k] * A[i][k]` for each i, read by `R[k][k] =
/// sqrt(nrm)`: each value lives inside one iteration of k (but across iterations of i), so nrm is
/// expanded over the k loop only.
/// durbin: `sum = 0`, accumulated over i and read for `alpha`, inside one iteration of k: expanded
/// over k. `alpha` and `beta` are read at the start of iteration k from iteration k - 1 (and
/// before the loop from their initialization): not expanded.
/// ludcmp: `w` is the temporary of three nests; in each, its values live within one iteration of
/// the nest's outer loop i (within one (i, j) in the first nest, but the depth is one for all the
/// statements that access `w`, and some have only i around them): expanded over i.
/// symm: `temp2 = 0` for each (i, j), accumulated over k, read for `C[i][j]`: expanded over i, j.
#[test]
fn temporaries_are_expanded_over_the_loops_their_values_live_in() {
    let cases: [(&str, &[(&str, usize)]); 4] = [
        ("gramschmidt", &[("nrm", 1)]),
        ("durbin", &[("sum", 1)]),
        ("ludcmp", &[("w", 1)]),
        ("symm", &[("temp2", 2)]),
    ];
    for (kernel, want) in cases {
        let scop = common::kernel_scop(kernel, &["MINI_DATASET"]);
        let got = expanded(&scop, &scalar_expansions(&scop).unwrap());
        let want: Vec<(String, usize)> = want.iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(got, want, "{kernel}");
    }
}

/// In gramschmidt, S0 (`nrm = 0`) touches only nrm. Unexpanded, it must wait for the previous
/// iteration of k to have read nrm (anti) and written it (output); expanded, S0[k] is the first
/// access to nrm[k] and nothing flows into it.
#[test]
fn expansion_removes_the_dependences_carried_through_the_scalar() {
    let scop = common::kernel_scop("gramschmidt", &["MINI_DATASET"]);
    let into_s0 = |deps: &polyhedral::Dependences| {
        [&deps.flow, &deps.anti, &deps.output]
            .iter()
            .any(|m| m.contains("-> S0["))
    };
    assert!(into_s0(&dependences(&scop).unwrap()));
    let expanded_scop = expand_scalars(&scop, &scalar_expansions(&scop).unwrap()).unwrap();
    let nrm = expanded_scop
        .arrays
        .iter()
        .find(|a| a.name == "nrm")
        .unwrap();
    assert_eq!(nrm.rank, 1);
    let deps = dependences(&expanded_scop).unwrap();
    assert!(!into_s0(&deps), "{deps}");
}

/// The SCoP of `kernel` at MINI, scheduled and tiled (tiles of `tile`) with its expandable
/// scalars expanded, and which of them one variable per task serves: `(name, copy-out nests)`.
fn task_private_scalars(kernel: &str, tile: i64) -> Vec<(String, Vec<usize>)> {
    let scop = common::kernel_scop(kernel, &["MINI_DATASET"]);
    let candidates = scalar_expansions(&scop).unwrap();
    let expanded_scop = expand_scalars(&scop, &candidates).unwrap();
    let deps = dependences(&expanded_scop).unwrap();
    let config = ScheduleConfig {
        tile_sizes: Some(vec![tile]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&expanded_scop, &deps, &config).unwrap();
    task_private(&scop, &candidates, &sched)
        .unwrap()
        .into_iter()
        .map(|p| {
            let nests = p
                .copy_out
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_some())
                .map(|(k, _)| k)
                .collect();
            (scop.array(p.array).name.clone(), nests)
        })
        .collect()
}

/// gramschmidt's nrm and durbin's sum live inside one iteration of a loop that the tiled
/// schedule keeps inside one tile (their values never cross tasks), so each task may keep its
/// own copy; exactly one nest holds the last write, whose task copies the value back. ludcmp's w
/// too when the tiles (64) hold its whole reduction loops.
#[test]
fn temporaries_inside_one_tile_are_private_to_tasks() {
    for (kernel, tile) in [("gramschmidt", 4), ("durbin", 4), ("ludcmp", 64)] {
        let got = task_private_scalars(kernel, tile);
        assert_eq!(got.len(), 1, "{kernel}: {got:?}");
        assert_eq!(got[0].1.len(), 1, "{kernel}: {got:?}");
    }
}

/// symm's temp2 is summed over k for each (i, j), ludcmp's w over k for each (i, j) of its first
/// nest; tiles of 4 split those k loops, so a value would cross tasks: not private (their
/// dependences must be kept).
#[test]
fn a_temporary_whose_values_cross_tiles_is_not_private() {
    for kernel in ["symm", "ludcmp"] {
        assert_eq!(
            task_private_scalars(kernel, 4),
            Vec::<(String, Vec<usize>)>::new(),
            "{kernel}"
        );
    }
}

/// symm scheduled for the GPU (`parallel_point_loops_outer`, tiles of 256, so one tile): the
/// point loops run `j` outside `i`, against the source's order, so two iterations (i, j) reuse
/// temp2 in another order than the original and a variable per task whose accesses must all
/// keep their order is refused. But every value of temp2 stays inside one iteration (j, i),
/// where its accesses keep their order, and its last write (i = M - 1, j = N - 1) is the last
/// write of its task: one variable per task serves it, and nest 0 copies it back.
#[test]
fn a_temporary_of_one_point_iteration_is_private_even_when_iterations_are_reordered() {
    let scop = common::kernel_scop("symm", &["MINI_DATASET"]);
    let candidates = scalar_expansions(&scop).unwrap();
    let expanded_scop = expand_scalars(&scop, &candidates).unwrap();
    let deps = dependences(&expanded_scop).unwrap();
    let config = ScheduleConfig {
        tile_sizes: Some(vec![256]),
        parallel_point_loops_outer: true,
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&expanded_scop, &deps, &config).unwrap();
    let private = task_private(&scop, &candidates, &sched).unwrap();
    assert_eq!(private.len(), 1, "{:?}", sched.nests);
    assert_eq!(scop.array(private[0].array).name, "temp2");
    assert!(private[0].copy_out[0].is_some());
    // The last write is one instance of `temp2 += ...` (S2): i = M - 1 = 19, j = N - 1 = 29,
    // k = i - 1 = 18.
    assert_eq!(
        private[0].last_writes.len(),
        1,
        "{:?}",
        private[0].last_writes
    );
    let (stmt, set) = &private[0].last_writes[0];
    assert_eq!(stmt, "S2");
    assert!(
        polyhedral::sets_equal(set, "{ S2[19, 29, 18] }").unwrap(),
        "{set}"
    );
}

/// deriche's ten filter states (`xm1`, `ym1`, ..., `tp2`) live inside one row or column. With
/// tiles of 16 at MINI (64 × 64) every pass is tiled along its filter direction too: the causal
/// passes as written, the anti-causal ones through the mirror of their loops counting down
/// (`reversal`; they used to run their reversed loop inside one tile and keep six states
/// private). So every state's values cross tasks, and none is kept in one variable per task:
/// all ten live in arrays of copies.
#[test]
fn deriche_states_cross_the_tiles_of_every_pass() {
    let got = task_private_scalars("deriche", 16);
    assert!(got.is_empty(), "{got:?}");
    let scop = common::kernel_scop("deriche", &["MINI_DATASET"]);
    let expanded_names: Vec<(String, usize)> = expanded(&scop, &scalar_expansions(&scop).unwrap());
    assert_eq!(expanded_names.len(), 10, "{expanded_names:?}");
}
