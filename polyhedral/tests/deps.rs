//! Dependences of small stencils and of the PolyBench kernels jacobi-1d, seidel-2d and lu (as
//! `tiledflow --emit deps` computes them), compared with relations derived by hand (ISL
//! equality, not text).

mod common;

use polyhedral::{dependences, maps_equal};

fn assert_maps_equal(kind: &str, got: &str, want: &str) {
    assert!(
        maps_equal(got, want).unwrap(),
        "{kind} dependences differ:\n got:  {got}\n want: {want}"
    );
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
        maps_equal(&deps.anti, chain).unwrap()
            || maps_equal(&deps.anti, "[N] -> { S0[i] -> S0[j] : false }").unwrap(),
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

/// PolyBench seidel-2d with T = 3 time steps on an N = 7 grid:
/// `A[i][j] = (sum of A over the 3x3 neighbourhood of (i, j)) / 9` at S0[t, i, j], 0 <= t < T,
/// 1 <= i, j <= N - 2, in place.
///
/// flow: of the nine elements read, the four that come before (i, j) in the sweep, offsets
/// (-1, -1), (-1, 0), (-1, 1), (0, -1), were last written at the same t; the other five, offsets
/// (0, 0), (0, 1), (1, -1), (1, 0), (1, 1), at t - 1 (none at t = 0). Border elements are never
/// written and give no dependence.
/// output: S0[t - 1, i, j] -> S0[t, i, j].
/// anti: S0[t, i, j] overwrites A[i][j], read since its previous write at t - 1 by the readers
/// after (i, j) in sweep t - 1 (positions (i, j + 1), (i + 1, j - 1..j + 1)) and those before it
/// in sweep t (positions (i - 1, j - 1..j + 1), (i, j - 1)), which are the flow pairs with a
/// non-zero offset; the read of the previous writer itself may be counted too (an output pair).
#[test]
fn seidel_2d_dependences() {
    let (t_max, n) = (3, 7);
    let scop = common::kernel_scop(
        "seidel-2d",
        &[&format!("TSTEPS={t_max}"), &format!("N={n}")],
    );
    let deps = dependences(&scop).unwrap();
    let piece = |dt: i64, di: i64, dj: i64| {
        format!(
            "S0[u, p, q] -> S0[t, i, j] : u = t + {dt} and p = i + {di} and q = j + {dj} and \
             0 <= u < {t_max} and 1 <= p <= {m} and 1 <= q <= {m} and 0 <= t < {t_max} and 1 <= i <= {m} and 1 <= j <= {m}",
            m = n - 2
        )
    };
    let union = |pieces: &[(i64, i64, i64)]| {
        format!(
            "{{ {} }}",
            pieces
                .iter()
                .map(|&(a, b, c)| piece(a, b, c))
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let same_t = [(0, -1, -1), (0, -1, 0), (0, -1, 1), (0, 0, -1)];
    let previous_t = [(-1, 0, 1), (-1, 1, -1), (-1, 1, 0), (-1, 1, 1)];
    let mut flow: Vec<_> = same_t.iter().chain(&previous_t).copied().collect();
    let anti = union(&flow);
    flow.push((-1, 0, 0));
    assert_maps_equal("flow", &deps.flow, &union(&flow));
    assert_maps_equal("output", &deps.output, &union(&[(-1, 0, 0)]));
    assert!(
        maps_equal(&deps.anti, &anti).unwrap() || maps_equal(&deps.anti, &union(&flow)).unwrap(),
        "anti dependences differ: {}",
        deps.anti
    );
}

/// PolyBench lu with N = 6 (in place, A = LU):
/// ```c
/// for (i = 0; i < N; i++) {
///   for (j = 0; j < i; j++) { for (k = 0; k < j; k++) A[i][j] -= A[i][k] * A[k][j];   // S0
///                             A[i][j] /= A[j][j]; }                                   // S1
///   for (j = i; j < N; j++) for (k = 0; k < i; k++) A[i][j] -= A[i][k] * A[k][j];     // S2
/// }
/// ```
/// Element (x, y) is written only in outer iteration x: below the diagonal by S0[x, y, 0..y-1]
/// then S1[x, y]; on or above it by S2[x, y, 0..x-1].
/// flow: S0[i, j, k] reads A[i][j] (S0[i, j, k-1]), A[i][k] (final: S1[i, k]) and A[k][j] (upper,
/// final: S2[k, j, k-1], none for k = 0); S1[i, j] reads A[i][j] (S0[i, j, j-1]) and A[j][j]
/// (S2[j, j, j-1]); S2[i, j, k] reads A[i][j] (S2[i, j, k-1]), A[i][k] (S1[i, k]) and A[k][j]
/// (S2[k, j, k-1]).
/// output: the chains S0[i, j, k-1] -> S0[i, j, k], S0[i, j, j-1] -> S1[i, j],
/// S2[i, j, k-1] -> S2[i, j, k].
/// anti: none but those output pairs (which ISL may count, through the read of the previous
/// writer itself): every other read of an element comes after its last write.
#[test]
fn lu_dependences() {
    let n = 6;
    let scop = common::kernel_scop("lu", &[&format!("N={n}")]);
    let deps = dependences(&scop).unwrap();
    let flow = format!(
        "{{ S0[a, b, c] -> S0[i, j, k] : a = i and b = j and c = k - 1 and 0 <= i < {n} and 0 <= j < i and 1 <= k < j; \
            S1[a, b] -> S0[i, j, k] : a = i and b = k and 0 <= k < j < i < {n}; \
            S2[a, b, c] -> S0[i, j, k] : a = k and b = j and c = k - 1 and 1 <= k < j < i < {n}; \
            S0[a, b, c] -> S1[i, j] : a = i and b = j and c = j - 1 and 1 <= j < i < {n}; \
            S2[a, b, c] -> S1[i, j] : a = j and b = j and c = j - 1 and 1 <= j < i < {n}; \
            S2[a, b, c] -> S2[i, j, k] : a = i and b = j and c = k - 1 and 1 <= k < i <= j < {n}; \
            S1[a, b] -> S2[i, j, k] : a = i and b = k and 0 <= k < i <= j < {n}; \
            S2[a, b, c] -> S2[i, j, k] : a = k and b = j and c = k - 1 and 1 <= k < i <= j < {n} }}"
    );
    let output = format!(
        "{{ S0[a, b, c] -> S0[i, j, k] : a = i and b = j and c = k - 1 and 0 <= i < {n} and 0 <= j < i and 1 <= k < j; \
            S0[a, b, c] -> S1[i, j] : a = i and b = j and c = j - 1 and 1 <= j < i < {n}; \
            S2[a, b, c] -> S2[i, j, k] : a = i and b = j and c = k - 1 and 1 <= k < i <= j < {n} }}"
    );
    assert_maps_equal("flow", &deps.flow, &flow);
    assert_maps_equal("output", &deps.output, &output);
    let anti_or_output = format!(
        "{} ; {}",
        deps.anti.trim_end_matches('}'),
        output.trim_start_matches('{')
    );
    assert!(
        maps_equal(&anti_or_output, &output).unwrap(),
        "anti dependences outside the output pairs: {}",
        deps.anti
    );
}

/// PolyBench jacobi-1d itself (T = 4, N = 9) has the dependences derived by hand for
/// `common::jacobi_1d` in [`jacobi_1d_dependences`], with the parameters fixed.
#[test]
fn jacobi_1d_kernel_dependences() {
    let scop = common::kernel_scop("jacobi-1d", &["TSTEPS=4", "N=9"]);
    let deps = dependences(&scop).unwrap();
    let dom = "1 <= i <= 7 and 1 <= j <= 7";
    let raw_war = format!(
        "{{ S0[t, j] -> S1[u, i] : u = t and 0 <= t < 4 and {dom} and j - 1 <= i <= j + 1; \
            S1[t, j] -> S0[u, i] : u = t + 1 and 0 <= t and t + 1 < 4 and {dom} and j - 1 <= i <= j + 1 }}"
    );
    assert_maps_equal("flow", &deps.flow, &raw_war);
    assert_maps_equal("anti", &deps.anti, &raw_war);
    assert_maps_equal(
        "output",
        &deps.output,
        "{ S0[t, i] -> S0[u, j] : u = t + 1 and j = i and 0 <= t and t + 1 < 4 and 1 <= i <= 7; \
           S1[t, i] -> S1[u, j] : u = t + 1 and j = i and 0 <= t and t + 1 < 4 and 1 <= i <= 7 }",
    );
}
