//! simdojo: a deterministic, parallel, conservative discrete-event simulation engine.
//!
//! Knows nothing about GPUs: models plug in through the [`registry`].

#![warn(missing_docs)]

pub mod component;
pub mod engine;
pub mod ids;
pub mod params;
pub mod partition;
pub mod phold;
pub mod registry;
pub mod stats;
pub mod time;
pub mod topology;

pub use inventory;
