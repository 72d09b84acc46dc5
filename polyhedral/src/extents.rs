//! The sizes a SCoP runs at on its own: parameter values and, at those values, how many elements
//! of each array dimension its accesses reach. A program that runs one SCoP apart from the
//! user's (the driver's autotuning harness) allocates its arrays from them. Also the constant
//! bounding box of a tile space, which the task program declares its streams with.

use crate::isl::{Ctx, Set};
use crate::scop::ScopSets;
use crate::{Error, Result};
use scop_ir::Scop;

/// The values tried, largest first, for a parameter the caller does not give: the cost model's
/// [`crate::cost::PARAM_VALUE`], halved until the arrays' declared extents hold what the SCoP
/// touches and the SCoP's context allows them.
const DEFAULT_VALUES: [i64; 6] = [crate::cost::PARAM_VALUE, 500, 250, 125, 64, 32];

/// A SCoP's sizes on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSizes {
    /// Every parameter of the SCoP's context with its value, in the context's order.
    pub params: Vec<(String, i64)>,
    /// Per array ([`Scop::arrays`] order), the number of elements of each dimension that the
    /// accesses reach (the largest subscript plus one); empty for a scalar.
    pub extents: Vec<Vec<i64>>,
}

/// The sizes `scop` runs at with the parameters of `given` set to their values and the others to
/// the largest of [`DEFAULT_VALUES`] that fits the arrays' constant extents. An error says why
/// there are none: a given parameter the SCoP does not have, values its context excludes, a
/// subscript that can be negative or has no bound.
pub fn run_sizes(scop: &Scop, given: &[(String, i64)]) -> Result<RunSizes> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let names = sets.context.param_names()?;
    if let Some((unknown, _)) = given.iter().find(|(n, _)| !names.contains(n)) {
        return Err(Error::Unsupported(format!(
            "`{unknown}` is not a parameter of the SCoP (its parameters: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    }
    let mut why = String::new();
    for default in DEFAULT_VALUES {
        let params: Vec<(String, i64)> = names
            .iter()
            .map(|n| {
                let v = given
                    .iter()
                    .find(|(g, _)| g == n)
                    .map_or(default, |(_, v)| *v);
                (n.clone(), v)
            })
            .collect();
        match extents_at(ctx, scop, &sets, &params)? {
            Ok(extents) => return Ok(RunSizes { params, extents }),
            Err(e) => why = e,
        }
        if names.iter().all(|n| given.iter().any(|(g, _)| g == n)) {
            break; // nothing left to choose
        }
    }
    Err(Error::Unsupported(why))
}

/// The arrays' extents at `params`, `Err` with the reason when they are not usable (the outer
/// error is ISL's).
fn extents_at(
    ctx: &Ctx,
    scop: &Scop,
    sets: &ScopSets<'_>,
    params: &[(String, i64)],
) -> Result<std::result::Result<Vec<Vec<i64>>, String>> {
    let shown: Vec<String> = params.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    let fixed = Set::read(ctx, &crate::cost::params_text(params))?;
    if sets.context.clone().intersect(fixed.clone())?.is_empty()? {
        return Ok(Err(format!(
            "the SCoP's context excludes {}",
            shown.join(", ")
        )));
    }
    let domains = sets.domains.clone().intersect_params(fixed)?;
    let touched = sets
        .reads
        .clone()
        .union(sets.writes.clone())?
        .intersect_domain(domains)?
        .range()?;
    let mut extents: Vec<Vec<i64>> = scop.arrays.iter().map(|a| vec![0; a.rank]).collect();
    for set in touched.sets()? {
        let Some(name) = set.tuple_name() else {
            continue;
        };
        let Some(k) = scop.arrays.iter().position(|a| a.isl_name == name) else {
            continue;
        };
        let array = &scop.arrays[k];
        let n = set.n_dims()?;
        for (d, reached) in extents[k].iter_mut().enumerate().take(n) {
            let Some((lo, hi)) = set.dim_range(d)? else {
                return Ok(Err(format!(
                    "subscript {d} of `{}` has no bound at {}",
                    array.name,
                    shown.join(", ")
                )));
            };
            if lo < 0 {
                return Ok(Err(format!(
                    "subscript {d} of `{}` reaches {lo} at {}",
                    array.name,
                    shown.join(", ")
                )));
            }
            *reached = (*reached).max(hi + 1);
        }
    }
    for (array, reached) in scop.arrays.iter().zip(&extents) {
        for (d, &n) in reached.iter().enumerate() {
            if let Some(declared) = array.extents.get(d).copied().flatten() {
                if n as u64 > declared {
                    return Ok(Err(format!(
                        "`{}` is declared with {declared} elements in dimension {d}, the SCoP \
                         reaches {n} at {}",
                        array.name,
                        shown.join(", ")
                    )));
                }
            }
        }
    }
    Ok(Ok(extents))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scop(src: &str) -> Scop {
        let (file, _) = frontend::parse_source("t.c", src, &frontend::Options::default()).unwrap();
        file.scops.into_iter().next().unwrap()
    }

    #[test]
    fn parameters_take_the_largest_value_that_the_declared_extents_hold() {
        let s = scop(
            "void f(int n, double A[300][301], double *x) {\n#pragma scop\n\
             for (int i = 0; i < n; i++) for (int j = 0; j <= i; j++) A[i][j + 1] = x[2 * i];\n\
             #pragma endscop\n}\n",
        );
        let sizes = run_sizes(&s, &[]).unwrap();
        // 1000 and 500 overflow the 301 elements of A's rows (its first extent is a pointer's); 250 fits.
        assert_eq!(sizes.params, vec![("n".to_string(), 250)]);
        let by_name = |name: &str| {
            let k = s.arrays.iter().position(|a| a.name == name).unwrap();
            sizes.extents[k].clone()
        };
        assert_eq!(by_name("A"), vec![250, 251]);
        assert_eq!(by_name("x"), vec![499]);
        let given = run_sizes(&s, &[("n".to_string(), 10)]).unwrap();
        assert_eq!(given.params, vec![("n".to_string(), 10)]);
        let err = run_sizes(&s, &[("n".to_string(), 400)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("declared with 301 elements in dimension 1"),
            "{err}"
        );
        let err = run_sizes(&s, &[("m".to_string(), 4)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("`m` is not a parameter"), "{err}");
    }

    #[test]
    fn a_negative_subscript_has_no_sizes() {
        let s = scop(
            "void f(int n, double *x) {\n#pragma scop\n\
             for (int i = 0; i < n; i++) x[i - 1] = 0;\n#pragma endscop\n}\n",
        );
        let err = run_sizes(&s, &[]).unwrap_err().to_string();
        assert!(err.contains("reaches -1"), "{err}");
    }
}

/// The bounding box of the union of `sets` (ISL text, all of `n_dims` dimensions), one
/// `(lo, hi)` per dimension, when it is the same constant box whatever the parameters; `None`
/// when some dimension's bound depends on a parameter (or has none). Empty sets add nothing;
/// the box of no point is `(0, -1)` in every dimension. The task program declares each tile
/// stream with it, instead of measuring the box by a pass over the tiles at run time.
pub fn constant_box(sets: &[String], n_dims: usize) -> Result<Option<Vec<(i64, i64)>>> {
    let ctx = Ctx::shared()?;
    let mut found: Option<Vec<(i64, i64)>> = None;
    for text in sets {
        let set =
            Set::read(ctx, text).map_err(|e| crate::maps::input_error("tile domain", text, e))?;
        if set.n_dims()? != n_dims {
            return Err(Error::InvalidInput(format!(
                "the tile domain `{text}` does not have {n_dims} dimensions"
            )));
        }
        if set.is_empty()? {
            continue;
        }
        let mut range = Vec::with_capacity(n_dims);
        for d in 0..n_dims {
            match set.dim_range(d)? {
                Some(r) => range.push(r),
                None => return Ok(None),
            }
        }
        found = Some(match found {
            None => range,
            Some(acc) => acc
                .iter()
                .zip(&range)
                .map(|(&(lo, hi), &(l, h))| (lo.min(l), hi.max(h)))
                .collect(),
        });
    }
    Ok(Some(found.unwrap_or_else(|| vec![(0, -1); n_dims])))
}

#[cfg(test)]
mod box_tests {
    use super::constant_box;

    fn sets(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn the_box_of_constant_sets_is_their_bounding_box() {
        let b = constant_box(&sets(&["{ [i, j] : 0 <= i <= 3 and i <= j <= 5 }"]), 2).unwrap();
        assert_eq!(b, Some(vec![(0, 3), (0, 5)]));
        let b = constant_box(
            &sets(&[
                "{ [i] : 2 <= i <= 4 }",
                "{ [i] : 7 <= i <= 9 }",
                "{ [i] : 1 = 0 }",
            ]),
            1,
        )
        .unwrap();
        assert_eq!(b, Some(vec![(2, 9)]));
        // A parameter that the bounds do not depend on leaves the box constant.
        let b = constant_box(&sets(&["[n] -> { [i] : 0 <= i <= 5 and n >= 10 }"]), 1).unwrap();
        assert_eq!(b, Some(vec![(0, 5)]));
    }

    #[test]
    fn bounds_that_depend_on_parameters_give_no_box() {
        let b = constant_box(&sets(&["[n] -> { [i] : 0 <= i < n }"]), 1).unwrap();
        assert_eq!(b, None);
        let b = constant_box(
            &sets(&["{ [i] : 0 <= i <= 3 }", "[n] -> { [i] : 0 <= i < n }"]),
            1,
        )
        .unwrap();
        assert_eq!(b, None);
    }

    #[test]
    fn no_point_gives_the_empty_box() {
        let b = constant_box(&sets(&["{ [i, j] : 1 = 0 }"]), 2).unwrap();
        assert_eq!(b, Some(vec![(0, -1), (0, -1)]));
        assert!(constant_box(&sets(&["{ [i] : 0 <= i <= 1 }"]), 2).is_err());
    }
}
