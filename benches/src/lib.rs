//! Benchmarks of simdojo and its peers.
//!
//! The PHOLD pieces are engine-neutral: [`phold_spec`] fixes the model,
//! [`phold_heap`] is the sequential ground truth, [`phold_nexosim`] runs the
//! same model on the nexosim crate, and [`phold_cli`] gives every PHOLD binary
//! the same flags and report format.
#![warn(missing_docs)]

pub mod phold_cli;
pub mod phold_heap;
pub mod phold_nexosim;
pub mod phold_outcome;
pub mod phold_spec;
