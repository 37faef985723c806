//! What the instruction handlers share, below all of them: the executor context a
//! handler gets ([`Ctx`]), the fault of an unsupported instruction, the inline float
//! constants, scalar source operands of the 9-bit operand space, and the flat apertures.

use crate::decode::Inst;
use crate::Target;

use super::wave::{Wave, VCC_LO};
use super::ExecFault;

/// High 32 bits of the LDS (shared) aperture in the flat address space.
pub const SHARED_APERTURE_HI: u32 = 0x0001_0000;
/// High 32 bits of the private (scratch) aperture in the flat address space.
pub const PRIVATE_APERTURE_HI: u32 = 0x0002_0000;

/// Everything a wave's instructions touch besides the wave itself.
pub(crate) struct Ctx<'a, M: ?Sized> {
    pub(crate) mem: &'a mut M,
    pub(crate) lds: &'a mut [u8],
    pub(crate) target: Target,
    /// Executed wave-instructions per opcode (indexed by `Opcode as usize`; empty: none).
    pub(crate) counts: &'a mut [u64],
    /// What `s_memtime` returns.
    pub(crate) clock: u64,
    /// What `s_memrealtime` returns.
    pub(crate) realtime: u64,
}

/// The fault for an instruction this executor does not implement.
pub(crate) fn unsupported(inst: &Inst, pc: u64) -> ExecFault {
    ExecFault::Unsupported { pc, mnemonic: inst.opcode().mnemonic(), encoding: inst.encoding().name(), word: inst.words()[0] }
}

/// f32 bit pattern of an inline float constant code (240..=248).
#[inline]
pub(crate) fn inline_f32(v: u32) -> u32 {
    match v {
        240 => 0x3f00_0000,
        241 => 0xbf00_0000,
        242 => 0x3f80_0000,
        243 => 0xbf80_0000,
        244 => 0x4000_0000,
        245 => 0xc000_0000,
        246 => 0x4080_0000,
        247 => 0xc080_0000,
        248 => 0x3e22_f983,
        _ => 0,
    }
}

/// f64 bit pattern of an inline float constant code (240..=248).
#[inline]
pub(crate) fn inline_f64(v: u32) -> u64 {
    match v {
        240 => 0x3fe0_0000_0000_0000,
        241 => 0xbfe0_0000_0000_0000,
        242 => 0x3ff0_0000_0000_0000,
        243 => 0xbff0_0000_0000_0000,
        244 => 0x4000_0000_0000_0000,
        245 => 0xc000_0000_0000_0000,
        246 => 0x4010_0000_0000_0000,
        247 => 0xc010_0000_0000_0000,
        248 => 0x3fc4_5f30_6dc9_c882,
        _ => 0,
    }
}

/// f16 bit pattern of an inline float constant code (240..=248).
#[inline]
pub(crate) fn inline_f16(v: u32) -> u32 {
    match v {
        240 => 0x3800,
        241 => 0xb800,
        242 => 0x3c00,
        243 => 0xbc00,
        244 => 0x4000,
        245 => 0xc000,
        246 => 0x4400,
        247 => 0xc400,
        248 => 0x3118,
        _ => 0,
    }
}

/// A scalar (non-VGPR) source value of the 9-bit operand space as 32 bits. `f16` selects
/// the half-precision bit patterns of the inline float constants.
#[inline]
pub(crate) fn scalar_src(wave: &Wave, v: u32, literal: u32, f16: bool) -> u32 {
    match v {
        0..=127 => wave.sgpr[v as usize],
        128..=192 => v - 128,
        193..=208 => (192i32 - v as i32) as u32,
        // gfx950 `src_flat_scratch_base_lo/hi`: this wave's private-memory base.
        230 => wave.scratch_base as u32,
        231 => (wave.scratch_base >> 32) as u32,
        235 => SHARED_APERTURE_HI,
        236 => SHARED_APERTURE_HI,
        237 => PRIVATE_APERTURE_HI,
        238 => PRIVATE_APERTURE_HI,
        240..=248 => {
            if f16 {
                inline_f16(v)
            } else {
                inline_f32(v)
            }
        }
        251 => (wave.vcc() == 0) as u32,
        252 => (wave.exec() == 0) as u32,
        253 => wave.scc as u32,
        255 => literal,
        _ => 0,
    }
}

/// A scalar source as a 64-bit unsigned or bitwise operand (`b64`, `u64`): register
/// pairs, sign-extended inline integers, f64 inline float constants, and a 32-bit
/// literal zero-extended (the hardware extends a literal by the operand's type: a
/// `u64` compare against `0xffffff2f` compares with 4294967087, not with -209).
#[inline]
pub(crate) fn scalar_src64(wave: &Wave, v: u32, literal: u32) -> u64 {
    match v {
        255 => literal as u64,
        _ => scalar_src64_signed(wave, v, literal),
    }
}

/// [`scalar_src64`] for a signed 64-bit operand (`i64`): the literal is sign-extended.
#[inline]
pub(crate) fn scalar_src64_signed(wave: &Wave, v: u32, literal: u32) -> u64 {
    match v {
        0..=127 => wave.sgpr_pair(v as usize),
        128..=208 => scalar_src(wave, v, literal, false) as i32 as i64 as u64,
        230 => wave.scratch_base,
        235 | 236 => (SHARED_APERTURE_HI as u64) << 32,
        237 | 238 => (PRIVATE_APERTURE_HI as u64) << 32,
        240..=248 => inline_f64(v),
        255 => literal as i32 as i64 as u64,
        _ => scalar_src(wave, v, literal, false) as u64,
    }
}

/// `vcc_lo` slot, shared with the vector handlers.
pub(crate) const VCC: usize = VCC_LO;

/// Whether an integer compare's condition (a compare descriptor's: 1 lt, 2 eq, 3 le, 4 gt,
/// 5 ne, 6 ge; `always`: true) holds for the ordering `o` of its operands.
#[inline]
pub(crate) fn icmp(o: std::cmp::Ordering, cond: u32, always: bool) -> bool {
    use std::cmp::Ordering::*;
    if always {
        return true;
    }
    match cond {
        1 => o == Less,
        2 => o == Equal,
        3 => o != Greater,
        4 => o == Greater,
        5 => o != Equal,
        6 => o != Less,
        _ => false,
    }
}
