//! Dependences of small stencils, compared with relations derived by hand (ISL equality, not text).

mod common;

use polyhedral::{dependences, maps_equal};

fn assert_maps_equal(kind: &str, got: &str, want: &str) {
    assert!(maps_equal(got, want).unwrap(), "{kind} dependences differ:\n got:  {got}\n want: {want}");
}

/// jacobi-1d (see `common::jacobi_1d`), arrays A and B, statements S0 (writes B) and S1 (writes A).
///
/// flow: S1[t, i] reads B[i-1], B[i], B[i+1], last written by S0 at the same t; S0[t, i] reads
/// A[i-1], A[i], A[i+1], last written by S1 at t-1 (A[0] and A[N-1] are never written).
/// output: each S0 (S1) instance overwrites the element its instance at t-1 wrote.
/// anti: S1[t, i] overwrites A[i], read since S1[t-1, i] by S0[t, i-1..i+1]; S0[t, i] overwrites
/// B[i], read since S0[t-1, i] by S1[t-1, i-1..i+1]. These are the flow pairs again.
#[test]
fn jacobi_1d_dependences() {
    let deps = dependences(&common::jacobi_1d()).unwrap();
    let raw_war = "[T, N] -> { \
        S0[t, j] -> S1[t, i] : 0 <= t < T and 1 <= i <= N - 2 and 1 <= j <= N - 2 and j - 1 <= i <= j + 1; \
        S1[t, j] -> S0[t + 1, i] : 0 <= t and t + 1 < T and 1 <= i <= N - 2 and 1 <= j <= N - 2 and j - 1 <= i <= j + 1 }";
    assert_maps_equal("flow", &deps.flow, raw_war);
    assert_maps_equal("anti", &deps.anti, raw_war);
    assert_maps_equal(
        "output",
        &deps.output,
        "[T, N] -> { S0[t, i] -> S0[t + 1, i] : 0 <= t and t + 1 < T and 1 <= i <= N - 2; \
                     S1[t, i] -> S1[t + 1, i] : 0 <= t and t + 1 < T and 1 <= i <= N - 2 }",
    );
}

/// The seidel-like in-place stencil (see `common::seidel_1d`): S0[t, i] updates A[i] from A[i-1]
/// (already updated at t), A[i] and A[i+1] (from t-1).
///
/// flow: S0[t, i-1] -> S0[t, i] (i >= 2); S0[t-1, i] -> S0[t, i]; S0[t-1, i+1] -> S0[t, i] (i+1 <= N-2).
/// output: S0[t-1, i] -> S0[t, i].
/// anti: S0[t, i] overwrites A[i]; since the previous write S0[t-1, i], A[i] was read by
/// S0[t-1, i+1] (as its A[i-1]) and S0[t, i-1] (as its A[i+1]); S0[t-1, i] read it too, at the
/// very instance of that write, which ISL may or may not count (the pair is an output dependence
/// either way), so the test accepts both.
#[test]
fn seidel_1d_dependences() {
    let deps = dependences(&common::seidel_1d()).unwrap();
    // Sources are written S0[u, j] with the target S0[t, i] given by equalities.
    let dom = "0 <= t < T and 1 <= i <= N - 2";
    assert_maps_equal(
        "flow",
        &deps.flow,
        &format!(
            "[T, N] -> {{ S0[u, j] -> S0[t, i] : u = t and j = i - 1 and {dom} and i >= 2; \
                          S0[u, j] -> S0[t, i] : u = t - 1 and j = i and {dom} and t >= 1; \
                          S0[u, j] -> S0[t, i] : u = t - 1 and j = i + 1 and {dom} and t >= 1 and i + 1 <= N - 2 }}"
        ),
    );
    assert_maps_equal(
        "output",
        &deps.output,
        &format!("[T, N] -> {{ S0[u, j] -> S0[t, i] : u = t - 1 and j = i and {dom} and t >= 1 }}"),
    );
    let anti = format!(
        "[T, N] -> {{ S0[u, j] -> S0[t, i] : u = t - 1 and j = i + 1 and {dom} and t >= 1 and i + 1 <= N - 2; \
                      S0[u, j] -> S0[t, i] : u = t and j = i - 1 and {dom} and i >= 2 }}"
    );
    let anti_or_self = format!(
        "[T, N] -> {{ S0[u, j] -> S0[t, i] : u = t - 1 and j = i + 1 and {dom} and t >= 1 and i + 1 <= N - 2; \
                      S0[u, j] -> S0[t, i] : u = t and j = i - 1 and {dom} and i >= 2; \
                      S0[u, j] -> S0[t, i] : u = t - 1 and j = i and {dom} and t >= 1 }}"
    );
    assert!(
        maps_equal(&deps.anti, &anti).unwrap() || maps_equal(&deps.anti, &anti_or_self).unwrap(),
        "anti dependences differ: {}",
        deps.anti
    );
}

/// Reads before any write and writes never read give no dependence; a scalar (rank-0 array)
/// accumulated in a loop gives a chain.
/// ```c
/// for (i = 0; i < N; i++) s = s + x[i];   // S0
/// ```
/// flow and output: S0[i-1] -> S0[i]; anti: S0[i] overwrites s, read since S0[i-1]'s write only
/// by S0[i] itself (not a dependence) and by S0[i-1] at the instance of that write (optional).
#[test]
fn scalar_reduction_chain() {
    let scop = common::scop(
        &["N"],
        "[N] -> { : N >= 0 }",
        &[("s", 0), ("x", 1)],
        vec![common::stmt(
            0,
            &["i"],
            "[N] -> { S0[i] : 0 <= i < N }",
            "[N] -> { S0[i] -> [0, i, 0] }",
            vec![
                common::access(false, 0, "[N] -> { S0[i] -> s[] }"),
                common::access(false, 1, "[N] -> { S0[i] -> x[i] }"),
                common::access(true, 0, "[N] -> { S0[i] -> s[] }"),
            ],
        )],
    );
    let deps = dependences(&scop).unwrap();
    let chain = "[N] -> { S0[i] -> S0[i + 1] : 0 <= i and i + 1 < N }";
    assert_maps_equal("flow", &deps.flow, chain);
    assert_maps_equal("output", &deps.output, chain);
    assert!(
        maps_equal(&deps.anti, chain).unwrap() || maps_equal(&deps.anti, "[N] -> { S0[i] -> S0[j] : false }").unwrap(),
        "anti: {}",
        deps.anti
    );
}

#[test]
fn malformed_domain_is_a_clear_error() {
    let mut scop = common::seidel_1d();
    scop.statements[0].domain = "[T, N] -> { S0[t, i] : 0 <= t < }".into();
    let err = dependences(&scop).unwrap_err().to_string();
    assert!(err.contains("S0") && err.contains("domain"), "{err}");
}
