//! The functional wave executor: runs kernels of a [`CodeObject`](crate::code_object::CodeObject)
//! on a flat memory, one wavefront instruction at a time, without any notion of time.
//!
//! Codemap:
//! - [`device`]: the [`DeviceMemory`] trait the executor is generic over, atomics
//!   ([`AtomicOp`]) and the routing/deferral of vector memory accesses ([`VmemRequest`]).
//! - [`memory`]: the sparse paged device memory ([`Memory`], [`MemFault`]).
//! - [`mod@step`]: stepping one wave for an external scheduler ([`step::step`]).
//! - [`wave`]: the architectural state of one wavefront ([`Wave`]).
//! - [`program`]: the per-code-object decoded-instruction cache ([`Program`]).
//! - `fast`: pre-resolved forms of the hottest instructions, built per program slot, and
//!   their straight-line runs.
//! - `burst`: runs those runs (AVX2-compiled when the host has it).
//! - `interp`: the interpreter loop and the dispatch to the handlers by encoding family
//!   (the only module that imports the handlers).
//! - `operands`: what every handler shares (the handler context, inline constants, scalar
//!   sources, the unsupported-instruction fault, the flat apertures), below the handlers.
//! - `salu`: the scalar ALU and control (SOP*) handlers.
//! - `scalar_flow`: `s_cbranch_*_fork`/`join` (the fork/join stack) and M0-relative SGPR
//!   indexing (`s_movrels`/`s_movreld`).
//! - `smem`: scalar memory (SMEM): loads, stores, scratch, atomics, cache operations.
//! - [`hwreg`]: the hardware registers of `s_getreg`/`s_setreg` and where a wave runs
//!   ([`Placement`]).
//! - `valu`: vector ALU handlers (VOP1/VOP2/VOPC/VOP3, SDWA, GPR indexing mode); `vop3p`:
//!   packed math, dot products and mixed-precision FMA; `dpp`: the DPP lane permutations;
//!   `cvt`: the gfx950 block-scaled conversions (`v_cvt_scalef32_*`), called from `valu`.
//! - `vmem`: the FLAT/GLOBAL/SCRATCH handler and the load/store/atomic machinery shared
//!   with `buffer` (MUBUF/MTBUF addressing, formats and loads into LDS; conversions in
//!   `buffer_format`) and `ds` (LDS; the gfx950 transposing loads in `ds_transpose`).
//! - [`image`]: image instructions (MIMG, gfx90a): T#/S# descriptors, texel formats, the
//!   linear and tiled layouts ROCr creates, the sampler.
//! - [`gws`]: global wave sync requests and the device-wide [`GwsUnit`] that performs them.
//! - `mfma`: matrix instructions (MFMA, SMFMAC, `v_mfma_ld_scale_b32`, AccVGPR moves).
//! - [`dispatch`]: work-group scheduling, initial register state ([`init_group_waves`]),
//!   kernarg layout ([`run_kernel`]).
//!
//! **Architecture Invariant:** no input (instruction words, addresses, register values)
//! makes the executor panic: an unsupported instruction or a bad access stops the wave
//! with an [`ExecFault`] value.
//!
//! **Architecture Invariant:** this module knows nothing about simulated time; s_waitcnt
//! and s_nop are functional no-ops. `s_sleep` stops a stepped wave ([`step::StepStop::Sleep`])
//! and is a no-op for [`run_kernel`]; `s_memtime`/`s_memrealtime` return the clocks the
//! caller passes in [`step::StepEnv`] (0 under [`run_kernel`]).
//!
//! Known gaps (each stops the wave with [`ExecFault::Unsupported`] rather than computing
//! something wrong): swizzled buffer resources, vector memory instructions in GPR indexing
//! mode, an inline constant as the 128-bit accumulator of `v_mqsad_u32_u8`, the image
//! features [`image`] lists (multisampled images, anisotropic filtering, ...), trap
//! handlers. Words LLVM neither prints
//! nor accepts stop it with [`ExecFault::Illegal`]. f16 arithmetic rounds per MODE but does not flush
//! denormals; f64 arithmetic is IEEE round-to-nearest-even.
//!
//! ```no_run
//! use amdgpu_isa::code_object::CodeObject;
//! use amdgpu_isa::exec::{run_kernel, Memory};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let code = CodeObject::parse(&std::fs::read("saxpy.co")?)?;
//! let mut mem = Memory::new();
//! let (x, y) = (0x1_0000_0000u64, 0x1_1000_0000u64);
//! mem.map(x, 4096)?;
//! mem.map(y, 4096)?;
//! // Explicit kernel arguments as the metadata lays them out: n, a, x, y.
//! let mut args = Vec::new();
//! args.extend_from_slice(&1000u32.to_le_bytes());
//! args.extend_from_slice(&2.5f32.to_le_bytes());
//! args.extend_from_slice(&x.to_le_bytes());
//! args.extend_from_slice(&y.to_le_bytes());
//! let stats = run_kernel(&code, "saxpy", [1024, 1, 1], [256, 1, 1], &args, &mut mem)?;
//! println!("{} wave-instructions", stats.wave_instructions);
//! # Ok(())
//! # }
//! ```

mod buffer;
mod buffer_format;
mod burst;
mod cvt;
pub mod device;
pub mod dispatch;
mod dpp;
mod ds;
mod ds_transpose;
mod fast;
pub mod gws;
pub mod hwreg;
pub mod image;
mod interp;
mod mfma;
pub mod memory;
mod operands;
pub mod program;
pub mod reg_file;
mod salu;
mod scalar_flow;
mod smem;
pub mod step;
mod valu;
mod vmem;
mod vop3p;
pub mod wave;

pub use device::{
    AccessKind, AtomicOp, CachePolicy, DeviceMemory, Element, GwsOp, LaneDwords, LaneRegs, Route, Space, VgprDest, VmemAccess, VmemRequest,
    VmemResponse,
};
pub use dispatch::{
    kernarg_segment,
    init_group_waves, init_group_waves_from, initial_mode_bits, load, prepare_dispatch, run_kernel, run_program, run_single_wave, DispatchConfig, DispatchSetup, DispatchStats, WaveLaunch,
    CODE_BASE, DISPATCH_BASE, KERNARG_BASE, QUEUE_BASE, SCRATCH_BASE,
};
pub use gws::GwsUnit;
pub use mfma::{mfma_work, MfmaClass, MfmaWork};
pub use memory::{MemFault, MemFaultKind, Memory, UnmappedReads};
pub use hwreg::{GroupIds, GroupPlace, Placement};
pub use program::{CachedInst, Extension, Program};
pub use step::{step, StepEnv, StepOutcome, StepStop};
pub use reg_file::RegFile;
pub use wave::{MfmaScales, PendingAccess, SgprDest, Wave, WaveStatus};

/// Why a wave (and its dispatch) stopped abnormally.
///
/// Every variant is fatal for the dispatch that raised it; the memory keeps whatever the
/// waves wrote before.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecFault {
    /// The instruction decodes but this executor does not implement it.
    #[error("unsupported instruction {mnemonic} ({encoding}) at {pc:#x}: word {word:#010x}")]
    Unsupported {
        /// Address of the instruction.
        pc: u64,
        /// Its mnemonic.
        mnemonic: &'static str,
        /// Its encoding family.
        encoding: &'static str,
        /// Its first word.
        word: u32,
    },
    /// The word at `pc` is not a valid instruction of the target.
    #[error("illegal instruction ({encoding}) at {pc:#x}: word {word:#010x}")]
    Illegal {
        /// Address of the word.
        pc: u64,
        /// The encoding family named by its top bits.
        encoding: &'static str,
        /// The word.
        word: u32,
    },
    /// The program counter left the loaded `.text`.
    #[error("program counter {pc:#x} is outside the code object's text")]
    PcOutOfRange {
        /// The bad PC.
        pc: u64,
    },
    /// A private (scratch) access outside the work-item's private segment: the stack
    /// overflowed (or a private pointer went wild). Each lane's segment is its own, so
    /// without this check one lane's overflow would silently overwrite its neighbour's
    /// stack.
    #[error("private-memory access of {bytes} bytes at offset {offset:#x} by the instruction at {pc:#x} is outside the work-item's {segment}-byte private segment (stack overflow?)")]
    PrivateOverflow {
        /// Address of the instruction.
        pc: u64,
        /// The lane's offset into its private segment.
        offset: u64,
        /// Bytes accessed.
        bytes: u32,
        /// The private segment's size per work-item.
        segment: u32,
    },
    /// A memory access faulted.
    #[error("memory fault at {addr:#x} ({kind:?}) by the instruction at {pc:#x}")]
    Memory {
        /// Address of the instruction.
        pc: u64,
        /// The faulting address.
        addr: u64,
        /// What went wrong.
        kind: MemFaultKind,
    },
    /// The wave executed `s_trap`.
    #[error("s_trap {code} at {pc:#x}")]
    Trap {
        /// Address of the instruction.
        pc: u64,
        /// The trap id.
        code: u32,
    },
    /// The wave halted (`s_sethalt 1`, `s_sendmsghalt`). Only a debugger or a host command
    /// resumes a halted wave, and none does here, so the dispatch can never finish.
    #[error("the wave halted at {pc:#x} ({mnemonic}); nothing resumes a halted wave")]
    Halted {
        /// Address of the halting instruction.
        pc: u64,
        /// Its mnemonic.
        mnemonic: &'static str,
    },
    /// The code object's processor is not gfx90a, gfx942 or gfx950.
    #[error("unsupported processor {mach}")]
    UnsupportedTarget {
        /// The `EF_AMDGPU_MACH` value.
        mach: String,
    },
    /// No kernel of this name in the code object.
    #[error("no kernel named {name:?}")]
    NoSuchKernel {
        /// The requested name.
        name: String,
    },
    /// The dispatch is malformed (zero sizes, too many work-items, wave32 kernel, ...).
    #[error("bad dispatch: {reason}")]
    BadDispatch {
        /// What is wrong.
        reason: String,
    },
    /// The code object could not be placed in memory.
    #[error("loading the code object failed: {reason}")]
    Load {
        /// What failed.
        reason: String,
    },
    /// [`Wave::complete`] was called on a wave that waits for no access, or with a response
    /// that does not fit the destination. Recoverable: the wave is unchanged.
    #[error("bad completion of the memory access at {pc:#x}: {reason}")]
    BadCompletion {
        /// Address of the memory instruction (or the wave's PC when it waits for nothing).
        pc: u64,
        /// What does not fit.
        reason: String,
    },
    /// [`step()`] was called on a wave that stopped at an earlier fault.
    #[error("the wave at {pc:#x} stopped at an earlier fault")]
    WaveFaulted {
        /// The wave's PC.
        pc: u64,
    },
    /// Every unfinished wave of a work-group waits at a barrier that can never open, or a
    /// wave exceeded the instruction budget.
    #[error("work-group {group:?} hung: {reason}")]
    Hang {
        /// The work-group id.
        group: [u32; 3],
        /// What happened.
        reason: String,
    },
}

impl ExecFault {
    pub(crate) fn mem(pc: u64, fault: MemFault) -> ExecFault {
        ExecFault::Memory { pc, addr: fault.addr, kind: fault.kind }
    }
}
