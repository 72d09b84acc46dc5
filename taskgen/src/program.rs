//! The task program of one SCoP: one task class per nest of the tiled schedule.
//!
//! A task is one tile of a nest; its key is the tile's coordinates. The control program
//! enumerates the tiles of each nest in the order of the tiled schedule (nest by nest, tiles in
//! lexicographic order) and spawns a task for each. A task of nest `b` waits for the tokens of
//! the source tiles of every tile dependence into `b`; they are enumerated exactly, for the
//! task's own key, by code generated from the tile dependence relation. Since the sequential
//! spawn order is a legal execution order, every producer is spawned before its consumers.
//!
//! Everything here is plain data; the polyhedral questions are answered by `polyhedral`.

use frontend::ir::{Scop, StmtId};
use polyhedral::{Ast, Dependences, TileDep, TiledSchedule};

/// Prefix of the iterators of task bodies.
pub const BODY_ITER: &str = "tf_i";
/// Prefix of the iterators of the control program's tile loops.
pub const TILE_ITER: &str = "tf_c";
/// Prefix of the iterators that enumerate a task's input tiles.
pub const SOURCE_ITER: &str = "tf_s";
/// Prefix of the names a task body gives to its own tile coordinates.
pub const KEY_NAME: &str = "tf_k";
/// Prefix of the names of the consumer's coordinates while its inputs are enumerated.
pub const DST_NAME: &str = "tf_d";

/// The inputs of a task class coming from one source class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSet {
    /// Index of the producing class.
    pub src: usize,
    /// The tile dependence relation, `{ N<src>[..] -> N<dst>[..] }`.
    pub relation: String,
    /// Enumerates the producing tiles for a consumer whose coordinates are the parameters
    /// `tf_d0, tf_d1, ...`; its user nodes are `N<src>` with the producer's coordinates.
    pub sources: Ast,
}

/// The tasks of one nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskClass {
    /// `N<k>`: the name of the class, of its stream and of its tile space.
    pub name: String,
    /// Number of key (tile coordinate) dimensions.
    pub n_dims: usize,
    pub statements: Vec<StmtId>,
    pub tile_sizes: Vec<i64>,
    /// The tile domain, ISL text.
    pub tile_domain: String,
    /// Enumerates the class's tiles in schedule order; user nodes `N<k>` with the coordinates.
    pub tiles: Ast,
    /// The instances of one tile whose coordinates are `tf_k0, tf_k1, ...`; user nodes are
    /// statements `S<j>` with their original iterator values.
    pub body: Ast,
    pub inputs: Vec<InputSet>,
}

/// The task program of one SCoP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskProgram {
    /// Classes in execution order.
    pub classes: Vec<TaskClass>,
}

/// Names `prefix0, prefix1, ...`.
pub fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|k| format!("{prefix}{k}")).collect()
}

/// Builds the task program of a scheduled SCoP.
pub fn build(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    tile_deps: &[TileDep],
) -> polyhedral::Result<TaskProgram> {
    let _ = deps;
    let mut classes = Vec::with_capacity(sched.nests.len());
    for (k, nest) in sched.nests.iter().enumerate() {
        let n_dims = nest.tile_sizes.len();
        let keys = names(KEY_NAME, n_dims);
        let body = polyhedral::nest_body_ast(scop, sched, k, &keys, BODY_ITER)?;
        let tiles = polyhedral::points_ast(scop, &nest.tile_domain, TILE_ITER)?;
        let mut inputs = Vec::new();
        for dep in tile_deps.iter().filter(|d| d.dst == k) {
            let dst = names(DST_NAME, n_dims);
            let sources = polyhedral::tile_sources_ast(scop, dep, &dst, SOURCE_ITER)?;
            inputs.push(InputSet { src: dep.src, relation: dep.relation.clone(), sources });
        }
        classes.push(TaskClass {
            name: format!("N{k}"),
            n_dims,
            statements: nest.statements.clone(),
            tile_sizes: nest.tile_sizes.clone(),
            tile_domain: nest.tile_domain.clone(),
            tiles,
            body,
            inputs,
        });
    }
    Ok(TaskProgram { classes })
}

impl TaskProgram {
    /// A readable summary for `--emit tasks`.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for c in &self.classes {
            let stmts: Vec<String> = c.statements.iter().map(|s| s.to_string()).collect();
            s.push_str(&format!(
                "class {}: statements [{}], {} key dims, tile sizes {:?}\n  tiles: {}\n",
                c.name,
                stmts.join(", "),
                c.n_dims,
                c.tile_sizes,
                c.tile_domain
            ));
            if c.inputs.is_empty() {
                s.push_str("  inputs: none\n");
            }
            for i in &c.inputs {
                s.push_str(&format!("  input from N{}: {}\n", i.src, i.relation));
            }
        }
        s
    }
}
