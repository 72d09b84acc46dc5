//! A parametric copy of a scheduling problem: the problem sizes that the C preprocessor turned
//! into constants (PolyBench's `N`, `TSTEPS`, ...) become parameters again, for the ISL scheduler
//! only.
//!
//! Why: the scheduler's Farkas constraints carry every constant bound of the domains and
//! dependences, and its integer programs multiply them while pivoting. At PolyBench's LARGE sizes
//! the numbers outgrow ISL's small integers, and most of the time goes to big-number gcds
//! (perf: `isl_tab_basic_set_non_trivial_lexmin` → `isl_seq_normalize` → `isl_mp_int_gcd`).
//! heat-3d took 0.67 s to schedule at LARGE, its copy 0.06 s, with the same schedule; fdtd-2d
//! 0.80 s and 0.03 s.
//!
//! How ([`parametric_copy`]): every constant term `c` of a constraint of the domains or of the
//! dependences with `|c| >= MIN_SIZE` is taken for a size. The sizes are grouped (values at most
//! `GAP` apart are one size: `N - 1` and `N - 2` are 119 and 118) and each group gets a parameter
//! `tf_sizeK` standing for its smallest value `b`; `c = ±(b + d)` becomes `±(tf_sizeK + d)`. The
//! context adds `tf_sizeK >= b`. The copy is printed piece by piece in the original's order.
//! The copy is scheduled without parameter coefficients (`schedule_parametric` off) when the
//! original has no parameters of its own: the original's schedule cannot use a size either
//! (constant terms are bounded by 8, see `schedule`).
//!
//! Why it is sound: at `tf_sizeK = b` the copy is the original problem, constraint for
//! constraint, so a schedule that respects the copy's dependences for every parameter value of its
//! context respects the original ones. The schedule is used only when it does not mention the
//! new parameters ([`concrete_tree`]), i.e. when it is also a schedule of the original domains;
//! otherwise the original problem is scheduled. The verifier checks the final schedule against
//! the original dependences either way.
//!
//! When: only for problems whose every dependence is a translation (each output dimension is one
//! input dimension plus a constant, or a constant: stencils, as in [`is_translation`]). With
//! other dependences the copy is a different problem for ISL's heuristics: a distance that
//! grows with a size is unbounded in the copy and bounded in the original, and the clustering of
//! `--fuse smart` decides differently (2mm fused its `D *= beta` nest into the product's band,
//! nussinov at MINI got a tile dependence more). With translations only, the 30 PolyBench
//! kernels × 3 fusion heuristics × MINI and LARGE get the same bands, tile dependences and task
//! classes as without the copy; the C differs, for bicg, deriche, fdtd-2d, gesummv, jacobi-2d and
//! trmm, in the order of statements or nests that do not depend on each other (the scheduler's
//! ties), and adi with `--fuse max` at LARGE is now scheduled within the time limit.
//!
//! Measured again for the kernels whose scheduling costs most at LARGE and whose dependences are
//! not translations (nussinov, lu, cholesky, ludcmp, gramschmidt): the copy of every problem, not
//! only of translations, changes the tree of 12 of the 30 kernels at LARGE (and 8 at MINI) under
//! at least one fusion heuristic, those five among them: lu's band becomes `(k, i, j)` instead of
//! `(i, j, k)`, nussinov's `(-i, j)` instead of `(j - i, j)`, with other fusion. The reason is the
//! proximity objective: for a distance that grows with a size, the original problem minimizes its
//! constant bound `w`, in which `u · N` is folded, while the copy minimizes the parametric part
//! `u` first and `w` after it, and the feasible rows must hold for every size above `N`. So the
//! copy stays limited to translations, where no distance depends on a size.

use crate::isl::{Rows, Set, UnionMap, UnionSet};
use crate::Result;

/// The smallest constant taken for a problem size. Loop offsets and shifts in affine programs
/// are far smaller; the smallest PolyBench MINI size (heat-3d's `N`) is 10, and copies at MINI
/// schedule fast either way.
pub(crate) const MIN_SIZE: i64 = 32;

/// Constants at most this far apart are one size (`N`, `N - 1`, `N - 2`, ...).
const GAP: i64 = 8;

/// The prefix of the parameter names of the copy.
const PREFIX: &str = "tf_size";

/// A scheduling problem with its sizes as parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParametricProblem {
    pub domains: String,
    pub context: String,
    pub deps: String,
    /// The new parameters, `tf_size0`, ...
    pub names: Vec<String>,
    /// Whether the original problem has parameters of its own. When it has none, the copy is
    /// scheduled without parameter coefficients, which the original could not have either.
    pub own_params: bool,
}

/// The copy of (`domains`, `context`, `deps`) with sizes as parameters (see the module
/// documentation); `None` when there is no size, when a dependence is not a translation, when a
/// disjunct has local variables, or when the names `tf_size*` are already taken.
pub(crate) fn parametric_copy(
    domains: &UnionSet<'_>,
    context: &Set<'_>,
    deps: &UnionMap<'_>,
) -> Result<Option<ParametricProblem>> {
    for text in [domains.to_str()?, context.to_str()?, deps.to_str()?] {
        if text.contains(PREFIX) {
            return Ok(None);
        }
    }
    let mut sets = Vec::new();
    for set in domains.sets()? {
        let Some(rows) = set.constraint_rows()? else {
            return Ok(None);
        };
        let first = set.n_dims()?;
        sets.push((set, rows, first));
    }
    let mut maps = Vec::new();
    for map in deps.maps()? {
        let Some(rows) = map.constraint_rows()? else {
            return Ok(None);
        };
        let n_in = map.n_dims(crate::isl::Side::In)?;
        let n_out = map.n_dims(crate::isl::Side::Out)?;
        if !rows.iter().all(|r| is_translation(r, n_in, n_out)) {
            return Ok(None);
        }
        maps.push((map, rows, n_in + n_out));
    }
    let constants = sets
        .iter()
        .flat_map(|(_, rows, _)| rows)
        .chain(maps.iter().flat_map(|(_, rows, _)| rows))
        .flat_map(all_rows)
        .map(|row| row[0]);
    let sizes = size_groups(constants);
    if sizes.is_empty() {
        return Ok(None);
    }
    let names: Vec<String> = (0..sizes.len()).map(|k| format!("{PREFIX}{k}")).collect();
    let ctx = domains.ctx();
    // The copy is printed piece by piece in the original's order: ISL's scheduler breaks ties
    // (the order of independent statements) by the order in which it reads the pieces.
    let mut domain_texts = Vec::new();
    for (set, rows, dims) in &sets {
        let rows: Vec<Rows> = rows.iter().map(|r| with_sizes(r, *dims, &sizes)).collect();
        domain_texts.push(set.with_rows(&names, &rows)?.to_str()?);
    }
    let mut dep_texts = Vec::new();
    for (map, rows, dims) in &maps {
        let rows: Vec<Rows> = rows.iter().map(|r| with_sizes(r, *dims, &sizes)).collect();
        dep_texts.push(map.with_rows(&names, &rows)?.to_str()?);
    }
    let bounds: Vec<String> = names
        .iter()
        .zip(&sizes)
        .map(|(n, g)| format!("{n} >= {}", g[0]))
        .collect();
    let at_least = Set::read(
        ctx,
        &format!("[{}] -> {{ : {} }}", names.join(", "), bounds.join(" and ")),
    )?;
    let new_context = context.clone().intersect(at_least)?;
    let own_params =
        !context.param_names()?.is_empty() || !domains.clone().params()?.param_names()?.is_empty();
    Ok(Some(ParametricProblem {
        own_params,
        domains: joined(&domain_texts),
        context: new_context.to_str()?,
        deps: joined(&dep_texts),
        names,
    }))
}

/// One union (ISL text) of the sets or maps `texts` (ISL text, all with the same parameters), in
/// their order.
fn joined(texts: &[String]) -> String {
    let mut params = "";
    let mut bodies = Vec::new();
    for text in texts {
        let (Some(open), Some(close)) = (text.find('{'), text.rfind('}')) else {
            continue;
        };
        params = &text[..open];
        let body = text[open + 1..close].trim();
        if !body.is_empty() {
            bodies.push(body);
        }
    }
    format!("{params}{{ {} }}", bodies.join("; "))
}

/// Whether each output dimension of the disjunct `rows` (of a map with `n_in` input and `n_out`
/// output dimensions) is fixed by an equality to one input dimension plus a constant, or to a
/// constant: `out_k = in_j + c` or `out_k = c`.
fn is_translation(rows: &Rows, n_in: usize, n_out: usize) -> bool {
    (0..n_out).all(|k| {
        rows.equalities.iter().any(|row| {
            let params_end = row.len() - n_in - n_out;
            let (input, output) = row[params_end..].split_at(n_in);
            let b = output[k];
            let others: Vec<i64> = input.iter().copied().filter(|&v| v != 0).collect();
            b.abs() == 1
                && row[1..params_end].iter().all(|&v| v == 0)
                && output.iter().enumerate().all(|(j, &v)| j == k || v == 0)
                && (others.is_empty() || others == [-b])
        })
    })
}

fn all_rows(rows: &Rows) -> impl Iterator<Item = &Vec<i64>> {
    rows.equalities.iter().chain(&rows.inequalities)
}

/// The sizes among `constants`: the distinct magnitudes of at least [`MIN_SIZE`], ascending,
/// grouped so that neighbours at most [`GAP`] apart share a group.
fn size_groups(constants: impl Iterator<Item = i64>) -> Vec<Vec<i64>> {
    let mut values: Vec<i64> = constants
        .filter_map(|c| c.checked_abs())
        .filter(|&c| c >= MIN_SIZE)
        .collect();
    values.sort_unstable();
    values.dedup();
    let mut groups: Vec<Vec<i64>> = Vec::new();
    for v in values {
        match groups.last_mut() {
            Some(g) if v - g[g.len() - 1] <= GAP => g.push(v),
            _ => groups.push(vec![v]),
        }
    }
    groups
}

/// `rows` (of an object with `dims` dimensions) with a column per size group after the
/// parameters, and each constant of a group `±(b + d)` rewritten as `±(size + d)`.
fn with_sizes(rows: &Rows, dims: usize, sizes: &[Vec<i64>]) -> Rows {
    let rewrite = |row: &Vec<i64>| -> Vec<i64> {
        let params_end = row.len() - dims;
        let mut out = Vec::with_capacity(row.len() + sizes.len());
        out.push(row[0]);
        out.extend_from_slice(&row[1..params_end]);
        out.extend(std::iter::repeat_n(0, sizes.len()));
        out.extend_from_slice(&row[params_end..]);
        let c = row[0];
        if let Some(k) = sizes.iter().position(|g| g.contains(&c.abs())) {
            let sign = c.signum();
            out[0] = sign * (c.abs() - sizes[k][0]);
            out[params_end + k] = sign;
        }
        out
    };
    Rows {
        equalities: rows.equalities.iter().map(rewrite).collect(),
        inequalities: rows.inequalities.iter().map(rewrite).collect(),
    }
}

/// The schedule tree `tree` (ISL text) of a parametric copy, as a tree of the original problem
/// whose domain is `domains` (ISL text): the copy's domain replaced by `domains`, and the new
/// parameters `names` dropped from every parameter list. `None` when the tree uses one of them
/// anywhere else (a band or a filter that depends on a size).
pub(crate) fn concrete_tree(tree: &str, names: &[String], domains: &str) -> Option<String> {
    const HEAD: &str = "{ domain: \"";
    let rest = tree.strip_prefix(HEAD)?;
    let end = rest.find('"')?;
    let mut out = format!("{HEAD}{domains}");
    let mut rest = &rest[end..];
    // Each ISL object in the tree is a quoted string, starting with its parameter list if any.
    while let Some(start) = rest.find("\"[") {
        out.push_str(&rest[..start + 1]);
        let after = &rest[start + 1..];
        let close = after.find("] -> ")?;
        let kept: Vec<&str> = after[1..close]
            .split(", ")
            .filter(|p| !names.iter().any(|n| n == p))
            .collect();
        if !kept.is_empty() {
            out.push_str(&format!("[{}] -> ", kept.join(", ")));
        }
        rest = &after[close + "] -> ".len()..];
    }
    out.push_str(rest);
    let rest_of_tree = &out[HEAD.len() + domains.len()..];
    (!rest_of_tree.contains(PREFIX)).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::Ctx;

    #[test]
    fn sizes_group_neighbours_and_skip_small_constants() {
        let groups = size_groups([499, -500, 1, 118, 117, 8, -31, 2159, 4095, 118].into_iter());
        assert_eq!(
            groups,
            vec![vec![117, 118], vec![499, 500], vec![2159], vec![4095]]
        );
    }

    /// The copy equals the original at the sizes' values, and is larger beyond them.
    #[test]
    fn copy_is_the_original_at_the_sizes_values() {
        let ctx = Ctx::new().unwrap();
        let domains = UnionSet::read(
            &ctx,
            "[n] -> { S0[t, i] : 0 < t <= 500 and 0 < i <= 118 and i < n; S1[i] : 0 <= i <= 119 }",
        )
        .unwrap();
        let context = Set::read(&ctx, "[n] -> { : n >= 3 }").unwrap();
        let deps = UnionMap::read(&ctx, "[n] -> { S0[t, i] -> S0[t + 1, i - 1] : 0 < t <= 499 and 2 <= i <= 118 and i < n; S1[i] -> S0[1, i] : 0 < i <= 117 }").unwrap();
        let copy = parametric_copy(&domains, &context, &deps).unwrap().unwrap();
        assert_eq!(copy.names, ["tf_size0", "tf_size1"]);
        let fixed = "[n, tf_size0, tf_size1] -> { : tf_size0 = 117 and tf_size1 = 499 }";
        let at_values = |text: &str| {
            UnionSet::read(&ctx, text)
                .unwrap()
                .intersect_params(Set::read(&ctx, fixed).unwrap())
                .unwrap()
        };
        let copied_domains = at_values(&copy.domains);
        let original_domains = domains
            .clone()
            .intersect_params(Set::read(&ctx, fixed).unwrap())
            .unwrap();
        assert!(
            copied_domains.is_equal(&original_domains).unwrap(),
            "{}",
            copy.domains
        );
        let at = "[n, tf_size0, tf_size1] -> { S0[t, i] : tf_size0 = 117 and tf_size1 = 499; S1[i] : tf_size0 = 117 and tf_size1 = 499 }";
        let copied_deps = UnionMap::read(&ctx, &copy.deps)
            .unwrap()
            .intersect_domain(UnionSet::read(&ctx, at).unwrap())
            .unwrap();
        let original_deps = deps
            .clone()
            .intersect_domain(UnionSet::read(&ctx, at).unwrap())
            .unwrap();
        assert!(
            copied_deps.is_equal(&original_deps).unwrap(),
            "{}",
            copy.deps
        );
        // Beyond the values the domains grow: t = 600 is in the copy when tf_size1 >= 600.
        let point = UnionSet::read(&ctx, "[n, tf_size0, tf_size1] -> { S0[600, 150] : n = 300 and tf_size0 = 200 and tf_size1 = 700 }").unwrap();
        assert!(
            point
                .is_subset(&UnionSet::read(&ctx, &copy.domains).unwrap())
                .unwrap(),
            "{}",
            copy.domains
        );
        let context = Set::read(&ctx, &copy.context).unwrap();
        assert!(
            context.to_str().unwrap().contains("tf_size1 >= 499"),
            "{}",
            copy.context
        );
    }

    #[test]
    fn problems_without_sizes_are_not_copied() {
        let ctx = Ctx::new().unwrap();
        let domains = UnionSet::read(&ctx, "[n] -> { S0[i] : 0 <= i < n and i <= 20 }").unwrap();
        let context = Set::read(&ctx, "[n] -> { : n >= 0 }").unwrap();
        let deps = UnionMap::read(&ctx, "[n] -> { S0[i] -> S0[i + 1] : 0 <= i < n - 1 }").unwrap();
        assert_eq!(parametric_copy(&domains, &context, &deps).unwrap(), None);
    }

    #[test]
    fn concrete_tree_drops_the_sizes_or_refuses() {
        let names = vec!["tf_size0".to_string()];
        let tree = r#"{ domain: "[n, tf_size0] -> { S0[i] : 0 <= i <= tf_size0 }", child: { schedule: "[n, tf_size0] -> [{ S0[i] -> [(i)] }]", permutable: 1 } }"#;
        assert_eq!(
            concrete_tree(tree, &names, "[n] -> { S0[i] : 0 <= i <= 99 }").as_deref(),
            Some(
                r#"{ domain: "[n] -> { S0[i] : 0 <= i <= 99 }", child: { schedule: "[n] -> [{ S0[i] -> [(i)] }]", permutable: 1 } }"#
            )
        );
        let only = r#"{ domain: "[tf_size0] -> { S0[i] : 0 <= i <= tf_size0 }", child: { schedule: "[tf_size0] -> [{ S0[i] -> [(i)] }]" } }"#;
        assert_eq!(
            concrete_tree(only, &names, "{ S0[i] : 0 <= i <= 99 }").as_deref(),
            Some(
                r#"{ domain: "{ S0[i] : 0 <= i <= 99 }", child: { schedule: "[{ S0[i] -> [(i)] }]" } }"#
            )
        );
        let uses = r#"{ domain: "[tf_size0] -> { S0[i] : 0 <= i <= tf_size0 }", child: { schedule: "[tf_size0] -> [{ S0[i] -> [(tf_size0 - i)] }]" } }"#;
        assert_eq!(
            concrete_tree(uses, &names, "{ S0[i] : 0 <= i <= 99 }"),
            None
        );
    }
}
