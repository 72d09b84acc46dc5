//! Tiled schedule to task program.
