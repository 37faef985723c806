//! The simdojo integration tests: one binary, one module per behaviour.

mod checkpoint;
mod control;
mod hooks;
mod overrides;
mod phold;
mod support;
