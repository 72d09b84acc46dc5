//! The tiledflow driver.
