//! Small ISL texts this crate builds (projections, fixings, lexicographic orders) and the padding
//! of flat schedules to one common number of dimensions.

use crate::isl::{Side, UnionMap};
use crate::{Error, Result};

/// Variable names `{prefix}0 .. {prefix}{n-1}`.
pub(crate) fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|k| format!("{prefix}{k}")).collect()
}

/// `name[v0, v1, ...]`.
pub(crate) fn tuple(name: &str, vars: &[String]) -> String {
    format!("{name}[{}]", vars.join(", "))
}

/// `[p0, p1] -> ` (empty when there are no parameters).
pub(crate) fn params_prefix(params: &[String]) -> String {
    if params.is_empty() {
        String::new()
    } else {
        format!("[{}] -> ", params.join(", "))
    }
}

/// `{ [o0, ..., o{d-1}] -> name[o{k} for k in keep] }`: keeps some dimensions of a `d`-dimensional
/// anonymous space, in the order of `keep`.
pub(crate) fn projection(d: usize, name: &str, keep: &[usize]) -> String {
    let all = names("o", d);
    let kept: Vec<String> = keep.iter().map(|&k| all[k].clone()).collect();
    format!("{{ {} -> {} }}", tuple("", &all), tuple(name, &kept))
}

/// `[c0, ...] -> { name[o0, ..., o{d-1}] : o0 = c0 and ... }`: the points of a `d`-dimensional space
/// whose first `coords.len()` coordinates equal the parameters `coords`.
pub(crate) fn fixed_prefix(name: &str, d: usize, coords: &[String]) -> String {
    let all = names("o", d);
    let eqs: Vec<String> = coords
        .iter()
        .zip(&all)
        .map(|(c, o)| format!("{o} = {c}"))
        .collect();
    let cond = if eqs.is_empty() {
        String::new()
    } else {
        format!(" : {}", eqs.join(" and "))
    };
    format!("{}{{ {}{cond} }}", params_prefix(coords), tuple(name, &all))
}

/// `{ name[s..] -> name[t..] : s <lex t }` on a `d`-dimensional space.
pub(crate) fn lex_lt(name: &str, d: usize) -> String {
    let s = names("s", d);
    let t = names("t", d);
    let disjuncts: Vec<String> = (0..d)
        .map(|k| {
            let mut parts: Vec<String> = (0..k).map(|j| format!("{} = {}", s[j], t[j])).collect();
            parts.push(format!("{} < {}", s[k], t[k]));
            format!("({})", parts.join(" and "))
        })
        .collect();
    let cond = if disjuncts.is_empty() {
        "false".to_string()
    } else {
        disjuncts.join(" or ")
    };
    format!("{{ {} -> {} : {cond} }}", tuple(name, &s), tuple(name, &t))
}

/// `{ name[x..] -> name[x..] }` on a `d`-dimensional space (the tests' definition of tile
/// dependences; `crate::tile` itself avoids subtracting it).
#[cfg(test)]
pub(crate) fn identity(name: &str, d: usize) -> String {
    let x = names("x", d);
    format!("{{ {} -> {} }}", tuple(name, &x), tuple(name, &x))
}

/// Pads every map of a flat schedule with zero output dimensions up to the largest number of
/// output dimensions among them; returns that number.
pub(crate) fn pad_to_common_depth<'c>(umap: UnionMap<'c>) -> Result<(UnionMap<'c>, usize)> {
    let maps = umap.maps()?;
    let depths = maps
        .iter()
        .map(|m| m.n_dims(Side::Out))
        .collect::<Result<Vec<_>>>()?;
    let depth = depths.iter().copied().max().unwrap_or(0);
    if depths.iter().all(|&d| d == depth) {
        return Ok((umap, depth));
    }
    let mut padded = UnionMap::empty(umap.ctx())?;
    for (map, d) in maps.into_iter().zip(depths) {
        padded = padded.union(UnionMap::from_map(map.pad_out_with_zeros(depth - d)?)?)?;
    }
    Ok((padded, depth))
}

/// An ISL parse error on a caller's argument, as [`Error::InvalidInput`] naming the text.
pub(crate) fn input_error(what: &str, text: &str, err: Error) -> Error {
    match err {
        Error::Isl(msg) => Error::InvalidInput(format!("cannot parse the {what} `{text}`: {msg}")),
        other => other,
    }
}

/// The nest of a tile space name `N<k>`.
pub(crate) fn nest_of_name(name: &str) -> Option<crate::NestId> {
    name.strip_prefix('N')?.parse().ok().map(crate::NestId)
}
