//! The task builder's errors, its own rather than the polyhedral stage's: a polyhedral analysis
//! that the builder ran and that failed (passed on as it is, so the driver can tell an
//! unsupported SCoP from a compiler bug as it does for the polyhedral stage's own calls), or a
//! task program that the builder's checks found inconsistent.

/// Why a task program (or a plan for the omp or cuda target) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A polyhedral analysis (the tile graph, an AST of a set, a tile body) failed.
    #[error(transparent)]
    Polyhedral(#[from] polyhedral::Error),
    /// The task graph the builder made breaks its own invariants (a compiler bug): each problem
    /// [`crate::task_graph::check`] found.
    #[error("the task graph is inconsistent (a compiler bug):\n{}", .0.join("\n"))]
    InconsistentGraph(Vec<String>),
}

/// The task builder's results.
pub type Result<T> = std::result::Result<T, Error>;
