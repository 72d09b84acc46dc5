//! Test harness: compile C programs, run them, compare their outputs.
