//! streamrt: the dataflow task runtime.
