//! VOP3P packed math (`v_pk_*`): operand half selection with `op_sel` / `op_sel_hi`,
//! per-half negation with `neg_lo` / `neg_hi`, and the packed f16, i16/u16 and f32 ops.
//!
//! For source `i`, the low result lane reads the half chosen by `op_sel[i]` and the high
//! result lane reads the half chosen by `op_sel_hi[i]` (0 = bits 15:0, 1 = bits 31:16).
//! For float ops `neg_lo[i]` flips the sign of the value the low lane reads and `neg_hi[i]`
//! that of the high lane. The packed f32 ops (`v_pk_fma_f32`, `v_pk_mul_f32`,
//! `v_pk_add_f32`, gfx90a+) select 32-bit halves of 64-bit register pairs the same way.

use super::mode::Mode;
use super::round::RoundMode;
use super::valu;

/// The VOP3P selection and negation fields, one bit per source (bit i = source i).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PackedSel {
    /// OP_SEL: which half feeds the low lane.
    pub op_sel: u8,
    /// OP_SEL_HI: which half feeds the high lane.
    pub op_sel_hi: u8,
    /// NEG_LO: negate the low-lane value (float ops).
    pub neg_lo: u8,
    /// NEG_HI: negate the high-lane value (float ops).
    pub neg_hi: u8,
}

impl Default for PackedSel {
    /// The assembler default: low lanes read low halves, high lanes read high halves.
    fn default() -> Self {
        Self { op_sel: 0, op_sel_hi: 0b111, neg_lo: 0, neg_hi: 0 }
    }
}

impl PackedSel {
    /// The (low-lane, high-lane) 16-bit values of source `i` (0..=2), without negation.
    #[inline]
    pub fn halves(self, src: u32, i: u32) -> (u16, u16) {
        let i = i & 3;
        let pick = |sel: u8| -> u16 {
            if (sel >> i) & 1 != 0 {
                (src >> 16) as u16
            } else {
                src as u16
            }
        };
        (pick(self.op_sel), pick(self.op_sel_hi))
    }

    /// The (low-lane, high-lane) f16 values of source `i`, with NEG_LO / NEG_HI applied.
    #[inline]
    pub fn halves_f16(self, src: u32, i: u32) -> (u16, u16) {
        let i = i & 3;
        let (lo, hi) = self.halves(src, i);
        let neg_lo = (((self.neg_lo >> i) & 1) as u16) << 15;
        let neg_hi = (((self.neg_hi >> i) & 1) as u16) << 15;
        (lo ^ neg_lo, hi ^ neg_hi)
    }

    /// The (low-lane, high-lane) f32 values of 64-bit source `i` of a packed f32 op.
    #[inline]
    pub fn dwords_f32(self, src: u64, i: u32) -> (f32, f32) {
        let i = i & 3;
        let pick = |sel: u8| -> u32 {
            if (sel >> i) & 1 != 0 {
                (src >> 32) as u32
            } else {
                src as u32
            }
        };
        let neg = |sel: u8| -> u32 { (((sel >> i) & 1) as u32) << 31 };
        (
            f32::from_bits(pick(self.op_sel) ^ neg(self.neg_lo)),
            f32::from_bits(pick(self.op_sel_hi) ^ neg(self.neg_hi)),
        )
    }
}

/// Joins two 16-bit lanes into a register value.
#[inline]
pub const fn pack(lo: u16, hi: u16) -> u32 {
    lo as u32 | ((hi as u32) << 16)
}

/// Finishes one f16 lane: input flushing already done; clamp and output flush per `mode`.
#[inline]
fn finish_f16(h: u16, clamp: bool, mode: Mode) -> u16 {
    valu::output_f16(h, valu::OutputModifier::None, clamp, mode)
}

/// Reads source `i` as two f16 lanes with modifiers and MODE input flushing.
#[inline]
fn f16_inputs(src: u32, i: u32, sel: PackedSel, mode: Mode) -> (u16, u16) {
    let (lo, hi) = sel.halves_f16(src, i);
    (mode.flush_in_f16(lo), mode.flush_in_f16(hi))
}

/// `v_pk_fma_f16`: per lane fused multiply-add, rounded per MODE.FP_ROUND.f16_64.
#[inline]
pub fn pk_fma_f16(s0: u32, s1: u32, s2: u32, sel: PackedSel, clamp: bool, mode: Mode) -> u32 {
    let (a0, a1) = f16_inputs(s0, 0, sel, mode);
    let (b0, b1) = f16_inputs(s1, 1, sel, mode);
    let (c0, c1) = f16_inputs(s2, 2, sel, mode);
    let rm = mode.round_f16_f64;
    let lo = valu::fma_f16(a0, b0, c0, rm, mode.fp16_ovfl);
    let hi = valu::fma_f16(a1, b1, c1, rm, mode.fp16_ovfl);
    pack(finish_f16(lo, clamp, mode), finish_f16(hi, clamp, mode))
}

/// `v_pk_add_f16`.
#[inline]
pub fn pk_add_f16(s0: u32, s1: u32, sel: PackedSel, clamp: bool, mode: Mode) -> u32 {
    let (a0, a1) = f16_inputs(s0, 0, sel, mode);
    let (b0, b1) = f16_inputs(s1, 1, sel, mode);
    let rm = mode.round_f16_f64;
    let lo = valu::add_f16(a0, b0, rm, mode.fp16_ovfl);
    let hi = valu::add_f16(a1, b1, rm, mode.fp16_ovfl);
    pack(finish_f16(lo, clamp, mode), finish_f16(hi, clamp, mode))
}

/// `v_pk_mul_f16`.
#[inline]
pub fn pk_mul_f16(s0: u32, s1: u32, sel: PackedSel, clamp: bool, mode: Mode) -> u32 {
    let (a0, a1) = f16_inputs(s0, 0, sel, mode);
    let (b0, b1) = f16_inputs(s1, 1, sel, mode);
    let rm = mode.round_f16_f64;
    let lo = valu::mul_f16(a0, b0, rm, mode.fp16_ovfl);
    let hi = valu::mul_f16(a1, b1, rm, mode.fp16_ovfl);
    pack(finish_f16(lo, clamp, mode), finish_f16(hi, clamp, mode))
}

/// `v_pk_min_f16` (per-lane [`valu::min_f16`] rules).
#[inline]
pub fn pk_min_f16(s0: u32, s1: u32, sel: PackedSel, clamp: bool, mode: Mode) -> u32 {
    let (a0, a1) = f16_inputs(s0, 0, sel, mode);
    let (b0, b1) = f16_inputs(s1, 1, sel, mode);
    let lo = valu::min_f16(a0, b0, mode.ieee);
    let hi = valu::min_f16(a1, b1, mode.ieee);
    pack(finish_f16(lo, clamp, mode), finish_f16(hi, clamp, mode))
}

/// `v_pk_max_f16` (per-lane [`valu::max_f16`] rules).
#[inline]
pub fn pk_max_f16(s0: u32, s1: u32, sel: PackedSel, clamp: bool, mode: Mode) -> u32 {
    let (a0, a1) = f16_inputs(s0, 0, sel, mode);
    let (b0, b1) = f16_inputs(s1, 1, sel, mode);
    let lo = valu::max_f16(a0, b0, mode.ieee);
    let hi = valu::max_f16(a1, b1, mode.ieee);
    pack(finish_f16(lo, clamp, mode), finish_f16(hi, clamp, mode))
}

/// gfx950 `v_pk_minimum3_f16` (IEEE 754-2019 minimum, NaN-propagating).
#[inline]
pub fn pk_minimum3_f16(s0: u32, s1: u32, s2: u32, sel: PackedSel) -> u32 {
    let (a0, a1) = sel.halves_f16(s0, 0);
    let (b0, b1) = sel.halves_f16(s1, 1);
    let (c0, c1) = sel.halves_f16(s2, 2);
    pack(
        valu::minimum_f16(valu::minimum_f16(a0, b0), c0),
        valu::minimum_f16(valu::minimum_f16(a1, b1), c1),
    )
}

/// gfx950 `v_pk_maximum3_f16` (IEEE 754-2019 maximum, NaN-propagating).
#[inline]
pub fn pk_maximum3_f16(s0: u32, s1: u32, s2: u32, sel: PackedSel) -> u32 {
    let (a0, a1) = sel.halves_f16(s0, 0);
    let (b0, b1) = sel.halves_f16(s1, 1);
    let (c0, c1) = sel.halves_f16(s2, 2);
    pack(
        valu::maximum_f16(valu::maximum_f16(a0, b0), c0),
        valu::maximum_f16(valu::maximum_f16(a1, b1), c1),
    )
}

/// A packed 16-bit integer operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PkIntOp {
    /// `v_pk_add_u16` (clamp saturates unsigned).
    AddU16,
    /// `v_pk_sub_u16` (clamp saturates at 0).
    SubU16,
    /// `v_pk_add_i16` (clamp saturates signed).
    AddI16,
    /// `v_pk_sub_i16` (clamp saturates signed).
    SubI16,
    /// `v_pk_mul_lo_u16`.
    MulLoU16,
    /// `v_pk_min_i16`.
    MinI16,
    /// `v_pk_max_i16`.
    MaxI16,
    /// `v_pk_min_u16`.
    MinU16,
    /// `v_pk_max_u16`.
    MaxU16,
    /// `v_pk_lshlrev_b16`: `S1 << S0[3:0]`.
    LshlRevB16,
    /// `v_pk_lshrrev_b16`: `S1 >> S0[3:0]` (logical).
    LshrRevB16,
    /// `v_pk_ashrrev_i16`: `S1 >> S0[3:0]` (arithmetic).
    AshrRevI16,
}

impl PkIntOp {
    /// Evaluates one 16-bit lane.
    #[inline]
    pub fn lane(self, a: u16, b: u16, clamp: bool) -> u16 {
        match self {
            PkIntOp::AddU16 => {
                if clamp {
                    a.saturating_add(b)
                } else {
                    a.wrapping_add(b)
                }
            }
            PkIntOp::SubU16 => {
                if clamp {
                    a.saturating_sub(b)
                } else {
                    a.wrapping_sub(b)
                }
            }
            PkIntOp::AddI16 => {
                if clamp {
                    (a as i16).saturating_add(b as i16) as u16
                } else {
                    a.wrapping_add(b)
                }
            }
            PkIntOp::SubI16 => {
                if clamp {
                    (a as i16).saturating_sub(b as i16) as u16
                } else {
                    a.wrapping_sub(b)
                }
            }
            PkIntOp::MulLoU16 => a.wrapping_mul(b),
            PkIntOp::MinI16 => (a as i16).min(b as i16) as u16,
            PkIntOp::MaxI16 => (a as i16).max(b as i16) as u16,
            PkIntOp::MinU16 => a.min(b),
            PkIntOp::MaxU16 => a.max(b),
            PkIntOp::LshlRevB16 => b << (a & 15),
            PkIntOp::LshrRevB16 => b >> (a & 15),
            PkIntOp::AshrRevI16 => ((b as i16) >> (a & 15)) as u16,
        }
    }

    /// Evaluates both lanes with VOP3P selection (negation does not apply to integers).
    #[inline]
    pub fn eval(self, s0: u32, s1: u32, sel: PackedSel, clamp: bool) -> u32 {
        let (a0, a1) = sel.halves(s0, 0);
        let (b0, b1) = sel.halves(s1, 1);
        pack(self.lane(a0, b0, clamp), self.lane(a1, b1, clamp))
    }
}

/// `v_pk_mad_u16` / `v_pk_mad_i16`: per lane `a * b + c`; clamp saturates the exact result
/// to the lane type (unsigned when `signed` is false).
#[inline]
pub fn pk_mad_16(s0: u32, s1: u32, s2: u32, sel: PackedSel, signed: bool, clamp: bool) -> u32 {
    let (a0, a1) = sel.halves(s0, 0);
    let (b0, b1) = sel.halves(s1, 1);
    let (c0, c1) = sel.halves(s2, 2);
    let lane = |a: u16, b: u16, c: u16| -> u16 {
        if signed {
            let exact = a as i16 as i64 * b as i16 as i64 + c as i16 as i64;
            if clamp {
                exact.clamp(i16::MIN as i64, i16::MAX as i64) as i16 as u16
            } else {
                exact as u16
            }
        } else {
            let exact = a as u64 * b as u64 + c as u64;
            if clamp {
                exact.min(u16::MAX as u64) as u16
            } else {
                exact as u16
            }
        }
    };
    pack(lane(a0, b0, c0), lane(a1, b1, c1))
}

/// Which packed f32 operation (gfx90a+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PkF32Op {
    /// `v_pk_fma_f32`.
    Fma,
    /// `v_pk_mul_f32`.
    Mul,
    /// `v_pk_add_f32`.
    Add,
}

/// `v_pk_{fma,mul,add}_f32` on 64-bit register pairs; `s2` is ignored for mul/add. Rounding
/// per MODE.FP_ROUND.f32, denormals per MODE.FP_DENORM.f32, clamp per lane.
#[inline]
pub fn pk_f32(op: PkF32Op, s0: u64, s1: u64, s2: u64, sel: PackedSel, clamp: bool, mode: Mode) -> u64 {
    let (a0, a1) = sel.dwords_f32(s0, 0);
    let (b0, b1) = sel.dwords_f32(s1, 1);
    let (c0, c1) = sel.dwords_f32(s2, 2);
    let rm: RoundMode = mode.round_f32;
    let lane = |a: f32, b: f32, c: f32| -> f32 {
        let (a, b, c) = (mode.flush_in_f32(a), mode.flush_in_f32(b), mode.flush_in_f32(c));
        let r = match op {
            PkF32Op::Fma => valu::fma_f32(a, b, c, rm),
            PkF32Op::Mul => valu::mul_f32(a, b, rm),
            PkF32Op::Add => valu::add_f32(a, b, rm),
        };
        valu::output_f32(r, valu::OutputModifier::None, clamp, mode)
    };
    let lo = lane(a0, b0, c0).to_bits() as u64;
    let hi = lane(a1, b1, c1).to_bits() as u64;
    lo | (hi << 32)
}

/// `v_pk_mov_b32`: `D[31:0]` = S0 dword `op_sel[0]`, `D[63:32]` = S1 dword `op_sel[1]`.
#[inline]
pub const fn pk_mov_b32(s0: u64, s1: u64, op_sel: u8) -> u64 {
    let lo = if op_sel & 1 != 0 { s0 >> 32 } else { s0 & 0xffff_ffff };
    let hi = if op_sel & 2 != 0 { s1 >> 32 } else { s1 & 0xffff_ffff };
    lo | (hi << 32)
}

/// `v_mad_mix_f32` / `v_fma_mix_f32` source selection: with `op_sel_hi[i]` clear the source
/// is an f32; otherwise it is the f16 half chosen by `op_sel[i]`, widened exactly.
#[inline]
pub fn mix_source(src: u32, i: u32, sel: PackedSel) -> f32 {
    let i = i & 3;
    if (sel.op_sel_hi >> i) & 1 == 0 {
        f32::from_bits(src)
    } else if (sel.op_sel >> i) & 1 != 0 {
        super::convert::f16_to_f32((src >> 16) as u16)
    } else {
        super::convert::f16_to_f32(src as u16)
    }
}

/// `v_fma_mix_f32`: fused `a * b + c` over mixed f32/f16 sources, f32 result.
#[inline]
pub fn fma_mix_f32(s0: u32, s1: u32, s2: u32, sel: PackedSel, rm: RoundMode) -> f32 {
    valu::fma_f32(mix_source(s0, 0, sel), mix_source(s1, 1, sel), mix_source(s2, 2, sel), rm)
}
