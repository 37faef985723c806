//! The GPU's components, registered simdojo plug-ins (`dojo plugins amdgpu.cu` lists
//! a type's parameters, ports and statistics): [`soc`] (`amdgpu.soc`), [`cp`]
//! (`amdgpu.cp`), [`cu`] (`amdgpu.cu`), [`l2`] (`amdgpu.l2`), [`mall`]
//! (`amdgpu.mall`), [`hbm`] (`amdgpu.hbm`), [`xgmi`] (`amdgpu.xgmi`), and
//! [`line_cache`], the cache-level logic the L2 and the memory-side cache share.
//!
//! **Architecture Invariant:** components talk through [`crate::gpu`] (messages on
//! links, the shared state) and use [`crate::timing`]; none uses the host side
//! (`host`). The layer test (`tests/layers.rs`) enforces it.

pub mod cp;
pub mod cu;
pub mod hbm;
pub mod l2;
pub mod line_cache;
pub mod mall;
pub mod sdma;
pub mod soc;
pub mod xgmi;
