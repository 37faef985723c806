//! The simdojo integration tests: one binary, one module per behaviour.

mod checkpoint;
mod control;
mod phold;
mod support;
