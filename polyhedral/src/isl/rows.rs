//! Maps and sets as integer constraint rows: their disjuncts read as matrices, and rebuilt from
//! matrices with parameters added (`isl_basic_map_{equalities,inequalities}_matrix` and
//! `isl_basic_map_from_constraint_matrices`). The `parametric` module rewrites constant terms
//! this way.

use super::map::Map;
use super::set::Set;
use super::{c_string, check_size, ffi, to_c_int, Ctx};
use crate::{Error, Result};
use std::os::raw::{c_int, c_long, c_uint};

/// One disjunct's constraints. Columns: the constant, the parameters, the input dimensions, the
/// output (or set) dimensions. Each equality row is `= 0`, each inequality row `>= 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rows {
    pub equalities: Vec<Vec<i64>>,
    pub inequalities: Vec<Vec<i64>>,
}

/// The column order of the matrices: constant, parameters, inputs, outputs, local variables.
const ORDER: [c_int; 5] = [
    ffi::ISL_DIM_CST,
    ffi::ISL_DIM_PARAM,
    ffi::ISL_DIM_IN,
    ffi::ISL_DIM_OUT,
    ffi::ISL_DIM_DIV,
];

impl<'c> Map<'c> {
    /// The rows of each disjunct, in ISL's order; `None` when a disjunct has local variables
    /// (existentially quantified or integer divisions) or an entry does not fit `i64`.
    pub fn constraint_rows(&self) -> Result<Option<Vec<Rows>>> {
        let ctx = self.ctx();
        let mut out = Vec::new();
        for disjunct in self.basic_maps()? {
            // SAFETY: `disjunct` is live (keep); the list is owned and freed below.
            let list = unsafe { ffi::isl_map_get_basic_map_list(disjunct.as_raw()) };
            if list.is_null() {
                return Err(ctx.take_error());
            }
            // SAFETY: `list` is live (keep); `disjunct` has exactly one basic map.
            let bmap = unsafe { ffi::isl_basic_map_list_get_at(list, 0) };
            // SAFETY: `list` is owned and freed once; `bmap` is a copy of its element.
            unsafe { ffi::isl_basic_map_list_free(list) };
            if bmap.is_null() {
                return Err(ctx.take_error());
            }
            let rows = basic_map_rows(ctx, bmap);
            // SAFETY: `bmap` is owned and freed once.
            unsafe { ffi::isl_basic_map_free(bmap) };
            match rows? {
                Some(rows) => out.push(rows),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// The map between the same spaces with `names` appended to its parameters, whose disjuncts
    /// are `rows` (columns as in [`Map::constraint_rows`], with one column for each of `names`
    /// after the map's own parameters).
    pub fn with_rows(&self, names: &[String], rows: &[Rows]) -> Result<Map<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is live (keep); the space is owned.
        let mut space = unsafe { ffi::isl_map_get_space(self.as_raw()) };
        if space.is_null() {
            return Err(ctx.take_error());
        }
        // SAFETY: `space` is live (keep).
        let first = unsafe { ffi::isl_space_dim(space, ffi::ISL_DIM_PARAM) };
        let first = match check_size(ctx, first) {
            Ok(n) => n,
            Err(e) => {
                // SAFETY: `space` is owned and freed once.
                unsafe { ffi::isl_space_free(space) };
                return Err(e);
            }
        };
        let n_new =
            c_uint::try_from(names.len()).map_err(|_| Error::Isl("too many parameters".into()));
        // SAFETY: `space` is given to ISL (take); the result is owned (or NULL).
        space = unsafe { ffi::isl_space_add_dims(space, ffi::ISL_DIM_PARAM, n_new.unwrap_or(0)) };
        for (k, name) in names.iter().enumerate() {
            let pos = c_uint::try_from(first + k).unwrap_or(c_uint::MAX);
            let name = c_string(name)?;
            // SAFETY: `space` is given to ISL (take; NULL is passed through); `name` is only read.
            space = unsafe {
                ffi::isl_space_set_dim_name(space, ffi::ISL_DIM_PARAM, pos, name.as_ptr())
            };
        }
        if space.is_null() {
            return Err(ctx.take_error());
        }
        // SAFETY: `space` is live (keep).
        let width =
            1 + check_size(ctx, unsafe {
                ffi::isl_space_dim(space, ffi::ISL_DIM_PARAM)
            })? + check_size(ctx, unsafe { ffi::isl_space_dim(space, ffi::ISL_DIM_IN) })?
                + check_size(ctx, unsafe { ffi::isl_space_dim(space, ffi::ISL_DIM_OUT) })?;
        let mut union: Option<Map<'c>> = None;
        for disjunct in rows {
            let eq = matrix(ctx, &disjunct.equalities, width);
            let ineq = matrix(ctx, &disjunct.inequalities, width);
            let (eq, ineq) = match (eq, ineq) {
                (Ok(eq), Ok(ineq)) => (eq, ineq),
                (eq, ineq) => {
                    for m in [eq.as_ref().ok(), ineq.as_ref().ok()].into_iter().flatten() {
                        // SAFETY: an owned matrix, freed once.
                        unsafe { ffi::isl_mat_free(*m) };
                    }
                    // SAFETY: `space` is owned and freed once.
                    unsafe { ffi::isl_space_free(space) };
                    return Err(eq
                        .err()
                        .or(ineq.err())
                        .unwrap_or_else(|| Error::Isl("matrix".into())));
                }
            };
            // SAFETY: a copy of `space` and both matrices are given to ISL (take); the result is
            // owned and given to isl_map_from_basic_map (take).
            let raw = unsafe {
                ffi::isl_map_from_basic_map(ffi::isl_basic_map_from_constraint_matrices(
                    ffi::isl_space_copy(space),
                    eq,
                    ineq,
                    ORDER[0],
                    ORDER[1],
                    ORDER[2],
                    ORDER[3],
                    ORDER[4],
                ))
            };
            let map = match Map::from_raw(ctx, raw) {
                Ok(m) => m,
                Err(e) => {
                    // SAFETY: `space` is owned and freed once.
                    unsafe { ffi::isl_space_free(space) };
                    return Err(e);
                }
            };
            union = Some(match union {
                None => map,
                Some(u) => match u.union(map) {
                    Ok(u) => u,
                    Err(e) => {
                        // SAFETY: `space` is owned and freed once.
                        unsafe { ffi::isl_space_free(space) };
                        return Err(e);
                    }
                },
            });
        }
        match union {
            Some(u) => {
                // SAFETY: `space` is owned and freed once.
                unsafe { ffi::isl_space_free(space) };
                Ok(u)
            }
            // SAFETY: `space` is given to ISL (take); the result is owned.
            None => Map::from_raw(ctx, unsafe { ffi::isl_map_empty(space) }),
        }
    }
}

impl<'c> Set<'c> {
    /// [`Map::constraint_rows`] of the set (its dimensions are the output columns; there are no
    /// input columns).
    pub fn constraint_rows(&self) -> Result<Option<Vec<Rows>>> {
        self.clone().into_map()?.constraint_rows()
    }

    /// [`Map::with_rows`] for a set.
    pub fn with_rows(&self, names: &[String], rows: &[Rows]) -> Result<Set<'c>> {
        let map = self.clone().into_map()?.with_rows(names, rows)?;
        let ctx = self.ctx();
        // SAFETY: `map` is given to ISL (take); the result is owned.
        Set::from_raw(ctx, unsafe { ffi::isl_map_domain(map.into_raw()) })
    }

    /// `{ x -> [] : x in self }`: the set as the domain of a map to a zero-dimensional space, so
    /// that its dimensions come right after the parameters in the matrices' columns.
    fn into_map(self) -> Result<Map<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        Map::from_raw(ctx, unsafe { ffi::isl_map_from_domain(self.into_raw()) })
    }
}

/// The rows of one basic map (kept), `None` if it has local variables or a large entry.
fn basic_map_rows(ctx: &Ctx, bmap: *mut ffi::isl_basic_map) -> Result<Option<Rows>> {
    // SAFETY: `bmap` is live (keep).
    let n_div = check_size(ctx, unsafe {
        ffi::isl_basic_map_dim(bmap, ffi::ISL_DIM_DIV)
    })?;
    if n_div > 0 {
        return Ok(None);
    }
    let [c1, c2, c3, c4, c5] = ORDER;
    // SAFETY: `bmap` is live (keep); the matrices are owned and freed by `read_matrix`.
    let eq = unsafe { ffi::isl_basic_map_equalities_matrix(bmap, c1, c2, c3, c4, c5) };
    let equalities = read_matrix(ctx, eq)?;
    // SAFETY: as above.
    let ineq = unsafe { ffi::isl_basic_map_inequalities_matrix(bmap, c1, c2, c3, c4, c5) };
    let inequalities = read_matrix(ctx, ineq)?;
    Ok(match (equalities, inequalities) {
        (Some(equalities), Some(inequalities)) => Some(Rows {
            equalities,
            inequalities,
        }),
        _ => None,
    })
}

/// The entries of an owned matrix (freed here); `None` if one does not fit `i64`.
fn read_matrix(ctx: &Ctx, mat: *mut ffi::isl_mat) -> Result<Option<Vec<Vec<i64>>>> {
    if mat.is_null() {
        return Err(ctx.take_error());
    }
    let result = (|| {
        // SAFETY: `mat` is live (keep).
        let rows = check_size(ctx, unsafe { ffi::isl_mat_rows(mat) })?;
        // SAFETY: `mat` is live (keep).
        let cols = check_size(ctx, unsafe { ffi::isl_mat_cols(mat) })?;
        let mut out = Vec::with_capacity(rows);
        for r in 0..rows {
            let mut row = Vec::with_capacity(cols);
            for c in 0..cols {
                // SAFETY: `mat` is live and (r, c) in bounds; the value is owned and freed by
                // take_int_val.
                let val = unsafe { ffi::isl_mat_get_element_val(mat, to_c_int(r)?, to_c_int(c)?) };
                match super::take_int_val(ctx, val)? {
                    Some(v) if v.checked_abs().is_some_and(|a| a < (1 << 40)) => row.push(v),
                    _ => return Ok(None),
                }
            }
            out.push(row);
        }
        Ok(Some(out))
    })();
    // SAFETY: `mat` is owned and freed once.
    unsafe { ffi::isl_mat_free(mat) };
    result
}

/// An owned ISL matrix with `rows` (each of `width` entries).
fn matrix(ctx: &Ctx, rows: &[Vec<i64>], width: usize) -> Result<*mut ffi::isl_mat> {
    if let Some(bad) = rows.iter().find(|r| r.len() != width) {
        return Err(Error::InvalidInput(format!(
            "a constraint row of {} entries, expected {width}",
            bad.len()
        )));
    }
    let n_rows = c_uint::try_from(rows.len()).map_err(|_| Error::Isl("too many rows".into()))?;
    let n_cols = c_uint::try_from(width).map_err(|_| Error::Isl("too many columns".into()))?;
    to_c_int(rows.len())?;
    to_c_int(width)?;
    let entries = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|&v| {
                    c_long::try_from(v)
                        .map_err(|_| Error::Isl(format!("{v} does not fit ISL's long")))
                })
                .collect()
        })
        .collect::<Result<Vec<Vec<c_long>>>>()?;
    // SAFETY: `ctx` is live; the matrix is owned.
    let mut mat = unsafe { ffi::isl_mat_alloc(ctx.as_raw(), n_rows, n_cols) };
    for (r, row) in entries.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            // SAFETY: `mat` is given to ISL (take; NULL is passed through) with an owned value
            // (take); (r, c) is in bounds and fits a C int (checked above).
            mat = unsafe {
                ffi::isl_mat_set_element_val(
                    mat,
                    r as c_int,
                    c as c_int,
                    ffi::isl_val_int_from_si(ctx.as_raw(), v),
                )
            };
        }
    }
    if mat.is_null() {
        return Err(ctx.take_error());
    }
    Ok(mat)
}
