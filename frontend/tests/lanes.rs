//! The statements of real C read as vector code (`frontend::lanes`, defined in `scop-ir`): which
//! occurrences become vectors, packed buffers and accumulators, and what is refused. The tests
//! parse C, so they live with the frontend rather than with the IR crate.

use frontend::ir::{ArrayId, Scop};
use frontend::lanes::*;

/// The statements of the first SCoP of `body` (inside `void f(...)` over `double` arrays
/// `A`, `B`, `C`, a `float` array `F`, scalars `alpha` and `k2`, and `n`).
fn statements(body: &str) -> Scop {
    let text = format!(
        "double sqrt(double);\nvoid f(int n, double alpha, int k2, double A[n][n], double B[n][n], double C[n][n], float F[n][n], double x[n]) {{\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    );
    let (file, _) = frontend::parse_source("t.c", &text, &frontend::Options::default()).unwrap();
    file.scops.into_iter().next().expect("a SCoP")
}

/// The statement's text with `TF_V(..)` around its vector occurrences along its last
/// iterator, or the reason it is refused.
fn vectorized(body: &str) -> Result<String, String> {
    let scop = statements(body);
    let stmt = scop.statements.last().unwrap();
    let q = stmt.iterators.len() - 1;
    let elem = scop
        .arrays
        .iter()
        .find(|a| a.written)
        .map(|a| a.elem_type.clone())
        .unwrap();
    if let Some(why) = refusal(&scop, stmt, q, &elem) {
        return Err(why);
    }
    Ok(render(
        &stmt.body,
        q,
        &|k| stmt.iterators[k].clone(),
        &|v| scop.array(v).name.clone(),
        &|_| ("TF_V(".into(), ")".into()),
    ))
}

#[test]
fn occurrences_along_the_lane_iterator_become_vectors() {
    assert_eq!(
        vectorized(
            "for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) for (int j = 0; j < n; j++)\n  C[i][j] += alpha * A[i][k] * B[k][j];"
        ),
        Ok("TF_V(C[i][j]) += alpha * A[i][k] * TF_V(B[k][j]);".into())
    );
    assert_eq!(
        vectorized(
            "for (int i = 0; i < n; i++) for (int j = 1; j < n - 1; j++)\n  C[i][j] = 0.5 * (A[i][j - 1] + A[i][ j+1 ]) - 2 * B[i][i];"
        ),
        Ok("TF_V(C[i][j]) = 0.5 * (TF_V(A[i][j - 1]) + TF_V(A[i][ j+1 ])) - 2 * B[i][i];".into())
    );
}

/// [`render_packed`] of the SCoP's last statement along lanes `j` and reduction `k`, vectors as
/// `TF_V(..)`, packed buffer `n` as `packed(n)` and the scaled product, if any, as `scaled`.
fn render_jk(
    scop: &Scop,
    packed: &dyn Fn(usize) -> String,
    scaled: Option<&str>,
    frozen: bool,
) -> String {
    let stmt = scop.statements.last().unwrap();
    let pos = |name: &str| stmt.iterators.iter().position(|i| i == name).unwrap();
    render_packed(
        stmt,
        pos("j"),
        pos("k"),
        &|k| stmt.iterators[k].clone(),
        &|v| scop.array(v).name.clone(),
        &|_| ("TF_V(".into(), ")".into()),
        packed,
        scaled,
        frozen,
    )
}

/// The statement (the SCoP's last) printed with its packed occurrences along its iterator
/// `j` (lanes) and `k` (reduction) as `P<n>[k][j]`, or why it cannot be.
fn packed(body: &str) -> Result<String, String> {
    packed_with(body, false)
}

/// [`packed`], with the array the statement writes `frozen` (read-only where the kernel runs).
fn packed_with(body: &str, frozen: bool) -> Result<String, String> {
    let scop = statements(body);
    let stmt = scop.statements.last().unwrap();
    let pos = |name: &str| stmt.iterators.iter().position(|i| i == name).unwrap();
    let (q, r) = (pos("j"), pos("k"));
    let n = packed_refusal(&scop, stmt, q, r, "double", frozen)?;
    let iter = |k: usize| stmt.iterators[k].clone();
    let var = |v: ArrayId| scop.array(v).name.clone();
    let text = render_jk(&scop, &|n| format!("P{n}[k][j]"), None, frozen);
    let fills: Vec<String> = (0..n)
        .map(|m| packed_text(stmt, q, r, m, &iter, &var, frozen))
        .collect();
    Ok(format!("{text} / {}", fills.join(", ")))
}

/// Which packed occurrences read their lanes a row apart (`A[j][k]` for lanes `j`, whose fills
/// read columns and run a cache line of lanes at a time) and which along a row, in the order
/// the buffers are numbered.
#[test]
fn packed_occurrences_across_rows_are_told_from_those_along_a_row() {
    let loops =
        "for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) for (int j = 0; j <= i; j++)\n  ";
    for (stmt, want) in [
        ("C[i][j] += alpha * A[i][k] * A[j][k];", vec![true]),
        ("C[i][j] += alpha * A[i][k] * B[k][j];", vec![false]),
        ("C[i][j] += A[j][k] * B[k + 1][j - 1];", vec![true, false]),
        ("C[i][j] += B[k][j] * alpha * A[j][k];", vec![false, true]),
    ] {
        let scop = statements(&format!("{loops}{stmt}"));
        let stmt = scop.statements.last().unwrap();
        let pos = |name: &str| stmt.iterators.iter().position(|i| i == name).unwrap();
        let (q, r) = (pos("j"), pos("k"));
        assert_eq!(
            packed_refusal(&scop, stmt, q, r, "double", false),
            Ok(want.len())
        );
        assert_eq!(packed_across_rows(stmt, q, r, false), want, "{stmt:?}");
    }
}

#[test]
fn read_only_occurrences_along_the_lanes_are_packed() {
    let loops =
        "for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) for (int j = 0; j <= i; j++)\n  ";
    assert_eq!(
        packed(&format!("{loops}C[i][j] += alpha * A[i][k] * A[j][k];")),
        Ok("TF_V(C[i][j]) += alpha * A[i][k] * P0[k][j]; / A[j][k]".into())
    );
    assert_eq!(
        packed(&format!(
            "{loops}C[i][j] += A[j][k] * alpha * B[i][k] + B[j][ k ] * alpha * A[i][k];"
        )),
        Ok("TF_V(C[i][j]) += P0[k][j] * B[i][k] + P1[k][j] * A[i][k]; / A[j][k] * alpha, B[j][ k ] * alpha".into())
    );
    // A packed occurrence multiplied first by scalars and numbers only: the buffer holds the
    // product (C multiplies left to right). Not when something else comes first, nor in a
    // term with a division, a sign or brackets around the product.
    for (stmt, want) in [
        (
            "C[i][j] += alpha * B[k][j] * A[i][k];",
            "TF_V(C[i][j]) += P0[k][j] * A[i][k]; / alpha * B[k][j]",
        ),
        (
            "C[i][j] += 2 * B[k][j] * 0.5 * alpha * A[i][k] - B[k][j] * A[i][k];",
            "TF_V(C[i][j]) += P0[k][j] * A[i][k] - P1[k][j] * A[i][k]; / 2 * B[k][j] * 0.5 * alpha, B[k][j]",
        ),
        (
            "C[i][j] += A[i][k] * alpha * B[k][j];",
            "TF_V(C[i][j]) += A[i][k] * alpha * P0[k][j]; / B[k][j]",
        ),
        (
            "C[i][j] += B[k][j] * alpha / A[i][k];",
            "TF_V(C[i][j]) += P0[k][j] * alpha / A[i][k]; / B[k][j]",
        ),
        (
            "C[i][j] = -alpha * B[k][j] * A[i][k] + (alpha * B[k][j]) * A[i][k];",
            "TF_V(C[i][j]) = -alpha * P0[k][j] * A[i][k] + (alpha * P1[k][j]) * A[i][k]; / B[k][j], B[k][j]",
        ),
    ] {
        assert_eq!(packed(&format!("{loops}{stmt}")), Ok(want.into()), "{stmt}");
    }
    // Occurrences contiguous along the lanes are packed as well (for aligned rows), with
    // an offset along the lanes or the reduction as written.
    assert_eq!(
        packed(&format!("{loops}C[i][j] += alpha * A[i][k] * B[k][j];")),
        Ok("TF_V(C[i][j]) += alpha * A[i][k] * P0[k][j]; / B[k][j]".into())
    );
    assert_eq!(
        packed(&format!("{loops}C[i][j] += A[j][k] * B[k + 1][j - 1];")),
        Ok("TF_V(C[i][j]) += P0[k][j] * P1[k][j]; / A[j][k], B[k + 1][j - 1]".into())
    );
    // An array another statement writes is packed (it is not written while the kernel
    // runs).
    assert_eq!(
        packed(
            "for (int i = 0; i < n; i++) for (int k = 0; k < n; k++)\n  B[i][k] = 2 * A[i][k];\n\
             for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) for (int j = 0; j < n; j++)\n  \
             C[i][j] += A[i][k] * B[k][j];"
        ),
        Ok("TF_V(C[i][j]) += A[i][k] * P0[k][j]; / B[k][j]".into())
    );
    // Nothing to pack (a row's operand, a vector of rank 1, the array the statement
    // writes); another iterator in the occurrence; the lanes in two subscripts.
    for (stmt, why) in [
        ("C[i][j] += A[i][k] * x[j];", "no occurrence to pack"),
        ("C[i][j] += C[k][j] * A[i][k];", "no occurrence to pack"),
        ("C[i][j] += C[j][k] * A[i][k];", "subscript"),
        ("C[i][j] += A[j][i] * B[i][k];", "subscript"),
        ("C[i][j] += A[j][j] * B[i][k];", "subscript"),
    ] {
        let got = packed(&format!("{loops}{stmt}"));
        assert!(
            matches!(&got, Err(e) if e.contains(why)),
            "{stmt}: {got:?}, expected a refusal mentioning {why}"
        );
    }
    // The array the statement writes, where the caller proved that the elements it reads
    // there are not written (cholesky's tiles whose `k` lie below their `j`): packed like any
    // read-only array; its written element is not (it does not follow the reduction).
    let cholesky =
        "for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) for (int k = 0; k < j; k++)\n  \
                    A[i][j] -= A[i][k] * A[j][k];";
    assert!(packed(cholesky).is_err(), "{:?}", packed(cholesky));
    assert_eq!(
        packed_with(cholesky, true),
        Ok("TF_V(A[i][j]) -= A[i][k] * P0[k][j]; / A[j][k]".into())
    );
    assert_eq!(
        packed_with(&format!("{loops}C[i][j] += C[j][k] * A[i][k];"), true),
        Ok("TF_V(C[i][j]) += P0[k][j] * A[i][k]; / C[j][k]".into())
    );
}

/// The statement (the SCoP's last, packed along lanes `j` and reduction `k`) printed with the
/// product before its lanes read as `R`, and that product's text; `None` when it has none.
fn scaled(body: &str) -> Option<(String, String)> {
    scaled_with(body, false)
}

/// [`scaled`], with the array the statement writes `frozen` (see [`packed_with`]).
fn scaled_with(body: &str, frozen: bool) -> Option<(String, String)> {
    let scop = statements(body);
    let stmt = scop.statements.last().unwrap();
    let pos = |name: &str| stmt.iterators.iter().position(|i| i == name).unwrap();
    let (q, r) = (pos("j"), pos("k"));
    packed_refusal(&scop, stmt, q, r, "double", frozen).ok()?;
    if !has_scaled_prefix(stmt, q, r, frozen) {
        return None;
    }
    let iter = |k: usize| stmt.iterators[k].clone();
    let var = |v: ArrayId| scop.array(v).name.clone();
    let text = render_jk(&scop, &|n| format!("P{n}"), Some("R"), frozen);
    Some((text, scaled_text(stmt, q, r, &iter, &var, frozen)))
}

#[test]
fn the_product_before_the_lanes_is_computed_apart() {
    let loops =
        "for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) for (int j = 0; j < n; j++)\n  ";
    let got = |stmt: &str| scaled(&format!("{loops}{stmt}"));
    let pair = |a: &str, b: &str| Some((a.to_string(), b.to_string()));
    assert_eq!(
        got("C[i][j] += alpha * A[i][k] * B[k][j];"),
        pair("TF_V(C[i][j]) += R * P0;", "alpha * A[i][k]")
    );
    // A sign, a constant with an exponent, brackets, a factor after the lanes.
    assert_eq!(
        got("C[i][j] -= -2 * A[k][i] * B[k][j] * alpha;"),
        pair("TF_V(C[i][j]) -= R * P0 * alpha;", "-2 * A[k][i]")
    );
    assert_eq!(
        got("C[i][j] = (A[i][k] * 1.5e-3) * A[k][i] * B[k][j];"),
        pair("TF_V(C[i][j]) = R * P0;", "(A[i][k] * 1.5e-3) * A[k][i]")
    );
    // None: one factor (nothing to save), a sum or a quotient around the product (it is no
    // operand of its own), the lanes first, the written array in the product, a product the
    // reduction does not move (the C compiler hoists it), constants only.
    for stmt in [
        "C[i][j] += A[i][k] * B[k][j];",
        "C[i][j] = C[i][j] + alpha * A[i][k] * B[k][j];",
        "C[i][j] += alpha * A[i][k] * B[k][j] / 3;",
        "C[i][j] += alpha / A[i][k] * B[k][j];",
        "C[i][j] += B[k][j] * alpha * A[i][k];",
        "C[i][j] += alpha * C[i][k] * B[k][j];",
        "C[i][j] += alpha * A[i][0] * B[k][j];",
        "C[i][j] += 2 * 3 * B[k][j];",
    ] {
        assert_eq!(got(stmt), None, "{stmt}");
    }
    // With the written array frozen, a factor read from it goes to the buffer, one alone
    // included (lu's and cholesky's updates): read in the reduction loop, it would keep the C
    // compiler from holding the accumulators in registers. Not without `frozen`, and not a lone
    // factor of another array.
    let lu = format!("{loops}A[i][j] -= A[i][k] * A[k][j];");
    assert_eq!(
        scaled_with(&lu, true),
        pair("TF_V(A[i][j]) -= R * P0;", "A[i][k]")
    );
    assert_eq!(scaled_with(&lu, false), None);
    assert_eq!(
        scaled_with(&format!("{loops}A[i][j] -= B[i][k] * A[k][j];"), true),
        None
    );
}

#[test]
fn text_without_the_same_meaning_on_vectors_is_refused() {
    let loops = "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++)\n  ";
    for (stmt, why) in [
        ("C[i][j] = A[j][i];", "subscript"),
        ("C[i][j] = A[i][2 * j];", "subscript"),
        ("C[i][j] = A[i][j] * j;", "outside a subscript"),
        ("C[i][j] = A[i][j] > 0 ? 1.0 : 2.0;", "`>`"),
        ("C[i][j] = sqrt(A[i][j]);", "`s`"),
        ("C[i][j] = (double)k2 * A[i][j];", "type `int`"),
        ("C[i][j] = A[i][j] * 2.0f;", "`f`"),
        ("F[i][j] = F[i][j] * 0.5;", "floating literal"),
        ("F[i][j] = F[i][j] * alpha;", "type `double`"),
    ] {
        let got = vectorized(&format!("{loops}{stmt}"));
        assert!(
            matches!(&got, Err(e) if e.contains(why)),
            "{stmt}: {got:?}, expected a refusal mentioning {why}"
        );
    }
    assert_eq!(
        vectorized(&format!("{loops}F[i][j] = F[i][j] * 2 + F[i][i];")),
        Ok("TF_V(F[i][j]) = TF_V(F[i][j]) * 2 + F[i][i];".into())
    );
}

/// The column that the SCoP's last statement reads along its iterator `k` (`polyhedral::column`):
/// its relation, the statement with the assigned element as `acc` and the column from `col`,
/// and the fill; `None` when it has none.
fn column(body: &str) -> Option<(String, String, String)> {
    let scop = statements(body);
    let stmt = scop.statements.last().unwrap();
    let k = stmt.iterators.iter().position(|i| i == "k").unwrap();
    let (relation, _, _) = column_relation(&scop, stmt, k)?;
    let iter = |q: usize| stmt.iterators[q].clone();
    let var = |v: ArrayId| scop.array(v).name.clone();
    Some((
        relation,
        render_columned(stmt, k, &iter, &var, "acc", "col"),
        column_fill(stmt, k, &iter, &var, "col"),
    ))
}

#[test]
fn a_column_along_the_reduction_is_read_from_its_buffer() {
    let loops =
        "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) for (int k = i + 1; k < j; k++)\n";
    assert_eq!(
        column(&format!(
            "{loops}  A[i][j] = A[i][j] >= A[i][k] + A[k + 1][j] ? A[i][j] : A[i][k] + A[k + 1][j];"
        )),
        Some((
            "{ S0[i0, i1, i2] -> A[i2 + 1, i1] }".into(),
            "acc = acc >= A[i][k] + col[k + 1] ? acc : A[i][k] + col[k + 1];".into(),
            "col[k + 1] = A[k + 1][j];".into(),
        ))
    );
    // Another array's column, scaled.
    assert_eq!(
        column(&format!("{loops}  C[i][j] += B[2 * k][j] * x[k];")),
        Some((
            "{ S0[i0, i1, i2] -> B[2 * i2, i1] }".into(),
            "acc += col[2 * k] * x[k];".into(),
            "col[2 * k] = B[2 * k][j];".into(),
        ))
    );
    // No column: the reduction along a row, two spellings along `k`, `k` in a later subscript
    // too, a subscript with a variable, the assigned element itself.
    for refused in [
        "C[i][j] += A[i][k] * x[k];",
        "C[i][j] += A[k][j] * B[k + 1][j] + A[k + 1][j];",
        "C[i][j] += A[k][k];",
        "C[i][j] += A[k + k2][j];",
        "C[k][j] += A[i][j];",
    ] {
        assert_eq!(column(&format!("{loops}  {refused}")), None, "{refused}");
    }
}
