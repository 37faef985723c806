//! AMD Instinct GPU models as simdojo plug-ins.
//!
//! The ISA (code objects, decoder, disassembler, functional executor) lives in the
//! `amdgpu-isa` crate, which knows nothing about simulated time; this crate builds a
//! whole GPU on it and on `simdojo`.
//!
//! Codemap:
//! - Components (registered plug-ins): [`soc`] (`amdgpu.soc`: memory, AQL queues,
//!   completion signals, coherent home, host services), [`cp`] (`amdgpu.cp`: an XCD's
//!   work-group dispatcher), [`cu`] (`amdgpu.cu`: a compute unit), [`l2`]
//!   (`amdgpu.l2.{lru,srrip,ideal}`), [`mall`] (`amdgpu.mall.{lru,srrip,ideal}`: a
//!   memory-side cache slice), [`hbm`] (`amdgpu.hbm`), [`xgmi`] (`amdgpu.xgmi`: a
//!   GPU's XGMI / Infinity Fabric links to its peers).
//! - Their shared state and protocol: [`shared`] (the per-GPU shared resource),
//!   [`memory`] (identity-mapped GPU memory), [`remote`] (peer memory ranges), [`messages`], [`aql`] (packets and signals),
//!   [`ids`], [`stats`] (per-kernel statistics), [`line_cache`].
//! - Pure timing models: [`timing`]. Host side of GPU programs: [`rpc`] (the RPC server),
//!   [`cc`] (the compiler driver with the device runtime), [`loader`] (`dojo exec`),
//!   [`node`] (choosing one GPU of a multi-GPU node for it).

#![warn(missing_docs)]

pub use amdgpu_isa as isa;

pub mod aql;
pub mod cc;
pub mod clock;
pub mod cp;
pub mod cu;
pub mod hbm;
pub mod ids;
pub mod l2;
pub mod line_cache;
pub mod loaded_image;
pub mod loader;
pub mod mall;
pub mod memory;
pub mod remote;
pub mod messages;
pub mod node;
pub mod rpc;
pub mod shared;
pub mod soc;
pub mod stats;
pub mod timing;
pub mod xgmi;
pub mod vm;

/// Makes sure the linker keeps this crate's component registrations: a binary that
/// only names component types in topology files calls this once.
pub fn link_components() -> usize {
    simdojo::registry::component_types().iter().filter(|t| t.name.starts_with("amdgpu.")).count()
}
