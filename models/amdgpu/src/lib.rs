//! AMD Instinct GPU models as simdojo plug-ins.
//!
//! The ISA (code objects, decoder, disassembler, functional executor) lives in the
//! `amdgpu-isa` crate, which knows nothing about simulated time; this crate builds a
//! whole GPU on it and on `simdojo`.
//!
//! Layers, each using only the ones below it (`tests/layers.rs` checks it, and that no
//! two modules of one layer import each other in a circle):
//! - [`host`]: the host side of GPU programs and the embedding facade (RPC server,
//!   compiler driver, `dojo exec` loader, node GPU selection, the VM).
//! - [`components`]: the registered plug-ins (SoC, command processor, compute unit, L2,
//!   memory-side cache, HBM, XGMI) and the cache-level logic they share.
//! - [`gpu`]: the GPU's shared state and the messages between its components (ids,
//!   memory, AQL, messages, `GpuShared`, statistics, clock, peer ranges, occupancy).
//! - [`timing`]: pure timing models, no engine dependency.

#![warn(missing_docs)]

pub use amdgpu_isa as isa;

pub mod components;
pub mod gpu;
pub mod host;
pub mod timing;

/// Makes sure the linker keeps this crate's component registrations: a binary that
/// only names component types in topology files calls this once.
pub fn link_components() -> usize {
    simdojo::registry::component_types().iter().filter(|t| t.name.starts_with("amdgpu.")).count()
}
