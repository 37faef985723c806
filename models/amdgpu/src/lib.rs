//! AMD Instinct GPU models as simdojo plug-ins.
//!
//! The ISA (code objects, decoder, disassembler, functional executor) lives in the
//! `amdgpu-isa` crate, which knows nothing about simulated time; this crate will hold
//! the timed components built on it and on `simdojo`.

pub use amdgpu_isa as isa;

pub mod cc;
pub mod rpc;
