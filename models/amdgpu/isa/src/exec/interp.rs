//! The interpreter loop: [`run_wave`] fetches from the [`Program`] cache, advances the PC,
//! and [`execute`] dispatches on the encoding family to the handlers ([`super::salu`],
//! [`super::smem`], [`super::valu`], [`super::ds`], [`super::vmem`], [`super::buffer`]),
//! which dispatch on the [`Opcode`](crate::decode::Opcode) (a `match` the compiler lowers
//! to a jump table) and read their operands from the raw instruction words. This is the
//! only module that imports the handlers; what they share lives below them in
//! [`super::operands`].
//!
//! **VSKIP** (MODE bit 28, set by `s_setvskip` or `s_setreg`): while it is set, every
//! vector instruction (VALU, LDS, FLAT/GLOBAL/SCRATCH, buffer) is skipped without effect;
//! [`run_wave`] then leaves out the fast-path runs, which hold vector instructions.
//!
//! **GPR indexing mode** (MODE bit 27, GPR_IDX_EN; set and cleared by the scalar
//! instructions of [`super::salu`]): while the mode is on, the hardware adds the index to
//! the VGPR numbers of the operands the mask selects in "vector instructions" (the
//! documents do not say whether vector memory is included, nor what an index past the
//! allocation does beyond "V0"): the VALU applies it (`valu::execute_indexed`); vector
//! memory instructions stop the wave with `Unsupported` while GPR_IDX_EN is set (VSKIP
//! still skips them first).

use crate::decode::{Encoding, Inst};

use super::device::DeviceMemory;
use super::hwreg::{MODE_GPR_IDX_EN, MODE_VSKIP};
use super::operands::{unsupported, Ctx};
use super::program::{CachedInst, Program};
use super::wave::{Wave, WaveStatus};
use super::{buffer, ds, image, salu, smem, valu, vmem, ExecFault};

/// Why [`run_wave`] returned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The wave's status is no longer `Running` (ended, barrier, sleep, memory wait).
    Yield,
    /// The instruction budget ran out.
    Budget,
}

/// Runs `wave` until its status leaves `Running`, it faults or executes `budget`
/// instructions.
pub(crate) fn run_wave<M: DeviceMemory>(wave: &mut Wave, program: &Program, ctx: &mut Ctx<M>, budget: &mut u64) -> Result<Stop, ExecFault> {
    while wave.status == WaveStatus::Running {
        if wave.mode_bits & VECTOR_MODES == 0 {
            // SAFETY: `burst_fn` is the function `host_burst_fn` chose for this CPU (its
            // AVX2 variant only when the CPU has AVX2 and FMA).
            unsafe { (program.burst_fn())(wave, program, budget, ctx.counts) };
        }
        if *budget == 0 {
            return Ok(Stop::Budget);
        }
        // The burst stopped at an instruction the general handlers execute.
        *budget -= 1;
        let pc = wave.pc;
        let cached = program.slot(pc)?;
        if let Some(n) = ctx.counts.get_mut(cached.inst.opcode() as usize) {
            *n += 1;
        }
        wave.pc = pc.wrapping_add(cached.size as u64);
        execute(wave, cached, pc, ctx)?;
    }
    Ok(Stop::Yield)
}

/// Executes one instruction; `wave.pc` already points at the next one.
pub(crate) fn execute<M: DeviceMemory>(wave: &mut Wave, c: &CachedInst, pc: u64, ctx: &mut Ctx<M>) -> Result<(), ExecFault> {
    match c.enc {
        Encoding::Sop2 => salu::sop2(wave, &c.inst, pc),
        Encoding::Sopk => salu::sopk(wave, &c.inst, pc, ctx.target),
        Encoding::Sop1 => salu::sop1(wave, &c.inst, pc),
        Encoding::Sopc => salu::sopc(wave, &c.inst, pc),
        Encoding::Sopp => salu::sopp(wave, &c.inst, pc),
        Encoding::Smem => smem::execute(wave, &c.inst, pc, ctx),
        // VSKIP skips vector ALU instructions; GPR indexing mode is the VALU's to apply.
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p if wave.mode_bits & MODE_VSKIP != 0 => Ok(()),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p => valu::execute(wave, c, pc, ctx.target),
        Encoding::Ds | Encoding::Flat | Encoding::Global | Encoding::Scratch | Encoding::Mubuf | Encoding::Mtbuf | Encoding::Mimg if wave.mode_bits & VECTOR_MODES != 0 => {
            vector_mode(wave, &c.inst, pc)
        }
        Encoding::Ds => ds::ds(wave, c, pc, ctx),
        Encoding::Flat | Encoding::Global | Encoding::Scratch => vmem::flat(wave, c, pc, ctx),
        Encoding::Mubuf | Encoding::Mtbuf => buffer::mubuf(wave, c, pc, ctx),
        Encoding::Mimg => image::execute(wave, c, pc, ctx),
        _ => Err(unsupported(&c.inst, pc)),
    }
}

/// MODE bits that change what vector instructions do.
const VECTOR_MODES: u32 = MODE_VSKIP | MODE_GPR_IDX_EN;

/// A vector memory instruction while VSKIP or GPR indexing mode is on: VSKIP skips it;
/// GPR indexing of memory operands (not modelled) stops the wave.
#[cold]
fn vector_mode(wave: &Wave, inst: &Inst, pc: u64) -> Result<(), ExecFault> {
    if wave.mode_bits & MODE_VSKIP != 0 {
        return Ok(());
    }
    Err(ExecFault::Unsupported { pc, mnemonic: "vector memory instruction in GPR indexing mode (MODE.GPR_IDX_EN)", encoding: inst.encoding().name(), word: inst.words()[0] })
}
