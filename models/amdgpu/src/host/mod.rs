//! The host side of GPU programs and the embedding facade: [`rpc`] (the RPC server the
//! device runtime calls), [`cc`] (the compiler driver with the embedded device runtime),
//! [`loader`] (`dojo exec`), [`machine`] (the typed view of a GPU topology), [`node`]
//! (choosing one GPU of a multi-GPU node for it) and [`vm`] (the VM the C API and the Python module wrap).
//!
//! **API Boundary:** this is what embedders call; it reaches the GPU through
//! [`crate::gpu::shared::GpuShared`] and builds the components from topologies.

pub mod cc;
pub mod loader;
pub mod machine;
pub mod node;
pub mod rpc;
pub mod spec;
pub mod vm;
