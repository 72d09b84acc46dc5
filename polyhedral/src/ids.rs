//! Typed ids of the tiled schedule's parts that the later stages refer to: nests ([`NestId`],
//! printed `N<k>` as in ISL text and the generated code) and numbered tile dependences
//! ([`DepId`], printed `d<j>`). Statements are [`scop_ir::StmtId`]. Each id is an index: of a
//! nest in [`crate::TiledSchedule::nests`] (and of its task class), of a dependence in
//! [`crate::TileGraph::deps`].

use std::fmt;

/// Index of a nest of the tiled schedule; prints as `N0`, `N1`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NestId(pub u32);

/// Index of a numbered tile dependence; prints as `d0`, `d1`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DepId(pub u32);

impl NestId {
    /// The nest at position `index`.
    ///
    /// # Panics
    /// If `index` does not fit 32 bits (a schedule has a handful of nests).
    pub fn new(index: usize) -> NestId {
        NestId(u32::try_from(index).expect("a nest index fits 32 bits"))
    }

    /// Its position in the schedule's nests.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl DepId {
    /// The dependence at position `index`.
    ///
    /// # Panics
    /// If `index` does not fit 32 bits (a tile graph has at most a few hundred dependences).
    pub fn new(index: usize) -> DepId {
        DepId(u32::try_from(index).expect("a dependence index fits 32 bits"))
    }

    /// Its position in the tile graph's dependences.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "N{}", self.0)
    }
}

impl fmt::Display for DepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "d{}", self.0)
    }
}
