//! The AMDGPU CDNA instruction set: code objects, decoding, disassembly and functional
//! execution for gfx90a, gfx942 and gfx950.
//!
//! **Architecture Invariant:** this crate knows nothing about simulated time or the
//! simdojo engine; the GPU model drives it.

pub mod census;
pub mod code_object;
pub mod decode;
pub mod disasm;
pub mod exec;
pub mod numeric;
mod tables;
pub mod target;

pub use target::Target;

/// The mnemonic (as LLVM prints it) of the opcode whose flat index is `index`, the
/// number `Inst::opcode() as usize` gives and the executor's per-opcode tallies use.
pub fn opcode_mnemonic(index: usize) -> Option<&'static str> {
    tables::MNEMONICS.get(index).copied()
}
