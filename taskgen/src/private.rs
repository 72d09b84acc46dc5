//! Scalars privatized per task (polyhedral's [`polyhedral::TaskPrivate`]) as plain data for
//! emission: each task function declares its own variable for the scalar, and the task of the
//! tile that runs the scalar's last write copies it back to the user's variable at its end.
//!
//! This module only turns the copy-out tiles into code; whether a scalar may be private to a
//! task is polyhedral's decision, never taken here.

use polyhedral::{Ast, TaskPrivate};
use scop_ir::{ArrayId, Scop};

/// Iterators of the copy-out code (they enumerate at most one tile).
pub const COPY_OUT_ITER: &str = "tf_w";

/// A scalar each task keeps in a variable of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivateScalar {
    pub array: ArrayId,
    /// For each class (nest): code enumerating the tile whose task copies the variable back,
    /// user nodes `N<k>` with its coordinates; `None` when no task of the class does.
    pub copy_out: Vec<Option<Ast>>,
    /// Per statement that may run the last write (in the original order): its name and code
    /// enumerating that instance, user nodes named by the statement with its coordinates.
    pub last_writes: Vec<(String, Ast)>,
}

/// The private scalars of `scop` with their copy-out code.
pub fn private_scalars(scop: &Scop, private: &[TaskPrivate]) -> crate::Result<Vec<PrivateScalar>> {
    private
        .iter()
        .map(|p| {
            let copy_out = p
                .copy_out
                .iter()
                .map(|set| {
                    set.as_deref()
                        .map(|set| polyhedral::points_ast(scop, set, COPY_OUT_ITER))
                        .transpose()
                })
                .collect::<polyhedral::Result<Vec<_>>>()?;
            let last_writes = p
                .last_writes
                .iter()
                .map(|(stmt, set)| {
                    Ok((
                        stmt.clone(),
                        polyhedral::points_ast(scop, set, COPY_OUT_ITER)?,
                    ))
                })
                .collect::<polyhedral::Result<Vec<_>>>()?;
            Ok(PrivateScalar {
                array: p.array,
                copy_out,
                last_writes,
            })
        })
        .collect()
}
