//! VOP3P handlers: packed 16-bit integer and f16 math, packed f32 math, `v_pk_mov_b32`,
//! the `v_dot*` dot products and the mixed-precision `v_fma_mix*` (MFMA and AccVGPR
//! moves are routed to their own module).
//!
//! Operand selection follows the CDNA3 ISA: source `i` of the low result lane is the half
//! (or, for packed f32, the dword) `op_sel[i]` names, that of the high lane the one
//! `op_sel_hi[i]` names; `neg_lo[i]` / `neg_hi[i]` negate the float value each lane reads.
//!
//! Decisions where the ISA is silent or forbids a field (each recorded in the handler):
//! - integer operations ignore `neg_lo` / `neg_hi` (only float values have a sign to flip;
//!   the executor kept this rule before these forms were added);
//! - a constant (inline) operand of a packed 16-bit operation may only feed the low half
//!   (its `op_sel` and `op_sel_hi` bits clear, the form LLVM emits): what the high half of an
//!   inline constant holds is not documented, so other selections are refused;
//! - the dot products' packed sources pass the same half selection as every VOP3P
//!   operand before the dot product sees them: the 32-bit value is {half `op_sel_hi[i]`,
//!   half `op_sel[i]`} (the ISA says "DOT instructions must not use SDWA or OPSEL" and LLVM
//!   accepts both fields, so the executor applies the one selection rule the VOP3P datapath
//!   has rather than refuse); `op_sel[2]` / `op_sel_hi[2]` of the 32-bit accumulator are
//!   ignored;
//! - `v_dot2_f32_f16` takes `neg_lo[2]` as a negation of the f32 accumulator and ignores
//!   `neg_hi[2]` (a 32-bit operand has no high half to negate); `v_dot2_f32_bf16` ignores
//!   both (the ISA: "NEG and ABS input modifiers do not affect S2");
//! - `v_fma_mix*`: `neg_hi` is the absolute value (the ISA), applied before `neg_lo`; the
//!   fused result is rounded per MODE.FP_ROUND.f32, then (`mixlo` / `mixhi`) converted to
//!   f16 per MODE.FP_ROUND.f16_64, as the pseudocode's `f32_to_f16(in0 * in1 + in2)` reads;
//!   f32 inputs flush per FP_DENORM.f32, f16 ones per FP_DENORM.f16_64; `mixlo` / `mixhi`
//!   keep the other half of the destination.

// Lane loops index several lane arrays in lockstep on purpose.
#![allow(clippy::needless_range_loop)]

use crate::decode::Opcode;
use crate::numeric::convert::{f16_to_f32, f32_to_f16};
use crate::numeric::packed::{self, PackedSel, PkIntOp};
use crate::numeric::valu::{self, output_f16, output_f32, OutputModifier};
use crate::numeric::{dot, Mode};
use crate::Target;

use super::operands::unsupported;
use super::program::CachedInst;
use super::valu::{fetch, fetch64, write, write64};
use super::wave::{Wave, WAVE_LANES};
use super::{mfma, ExecFault};

const N: usize = WAVE_LANES;
type L32 = [u32; N];

/// The VOP3P selection fields of an instruction.
fn selection(c: &CachedInst) -> PackedSel {
    let words = c.inst.words();
    let fl = &c.fields;
    PackedSel {
        op_sel: fl.opsel,
        op_sel_hi: (((words[1] >> 27) & 3) | (((words[0] >> 14) & 1) << 2)) as u8,
        neg_lo: fl.neg,
        neg_hi: ((words[0] >> 8) & 7) as u8,
    }
}

/// True when source `i` is an inline constant that a lane reads the high half of.
fn constant_high_half(c: &CachedInst, sel: PackedSel, i: usize) -> bool {
    let src = c.fields.src[i];
    (128..256).contains(&src) && ((sel.op_sel | sel.op_sel_hi) >> i) & 1 != 0
}

/// Executes a VOP3P instruction.
pub(crate) fn execute(w: &mut Wave, c: &CachedInst, pc: u64, target: Target) -> Result<(), ExecFault> {
    use Opcode as O;
    let op = c.op;
    // Matrix instructions and the VOP3P AccVGPR moves, marked in `aux` at load time.
    if mfma::is_matrix(c.aux) {
        return mfma::execute(w, c, pc, target);
    }
    let fl = c.fields;
    let exec = w.exec();
    let mode = w.mode;
    let sel = selection(c);
    let n_src = match op {
        O::VPkFmaF16 | O::VPkMadI16 | O::VPkMadU16 | O::VPkMinimum3F16 | O::VPkMaximum3F16 => 3,
        _ => 2,
    };
    let packed16 = matches!(
        op,
        O::VPkMadI16
            | O::VPkMulLoU16
            | O::VPkAddI16
            | O::VPkSubI16
            | O::VPkLshlrevB16
            | O::VPkLshrrevB16
            | O::VPkAshrrevI16
            | O::VPkMaxI16
            | O::VPkMinI16
            | O::VPkMadU16
            | O::VPkAddU16
            | O::VPkSubU16
            | O::VPkMaxU16
            | O::VPkMinU16
            | O::VPkFmaF16
            | O::VPkAddF16
            | O::VPkMulF16
            | O::VPkMinF16
            | O::VPkMaxF16
            | O::VPkMinimum3F16
            | O::VPkMaximum3F16
    );
    if packed16 {
        if (0..n_src).any(|i| constant_high_half(c, sel, i)) {
            return Err(unsupported(&c.inst, pc));
        }
        let float = matches!(op, O::VPkFmaF16 | O::VPkAddF16 | O::VPkMulF16 | O::VPkMinF16 | O::VPkMaxF16 | O::VPkMinimum3F16 | O::VPkMaximum3F16);
        let mut src = [[0u32; N]; 3];
        for (k, slot) in src.iter_mut().enumerate().take(n_src) {
            *slot = fetch(w, fl.src[k], fl.literal, float);
        }
        let clamp = fl.clamp;
        let int_op = match op {
            O::VPkMulLoU16 => Some(PkIntOp::MulLoU16),
            O::VPkAddI16 => Some(PkIntOp::AddI16),
            O::VPkSubI16 => Some(PkIntOp::SubI16),
            O::VPkLshlrevB16 => Some(PkIntOp::LshlRevB16),
            O::VPkLshrrevB16 => Some(PkIntOp::LshrRevB16),
            O::VPkAshrrevI16 => Some(PkIntOp::AshrRevI16),
            O::VPkMaxI16 => Some(PkIntOp::MaxI16),
            O::VPkMinI16 => Some(PkIntOp::MinI16),
            O::VPkAddU16 => Some(PkIntOp::AddU16),
            O::VPkSubU16 => Some(PkIntOp::SubU16),
            O::VPkMaxU16 => Some(PkIntOp::MaxU16),
            O::VPkMinU16 => Some(PkIntOp::MinU16),
            _ => None,
        };
        let mut out = [0u32; N];
        for i in 0..N {
            let (a, b, cc) = (src[0][i], src[1][i], src[2][i]);
            out[i] = match (op, int_op) {
                (_, Some(k)) => k.eval(a, b, sel, clamp),
                (O::VPkMadI16, _) => packed::pk_mad_16(a, b, cc, sel, true, clamp),
                (O::VPkMadU16, _) => packed::pk_mad_16(a, b, cc, sel, false, clamp),
                (O::VPkFmaF16, _) => packed::pk_fma_f16(a, b, cc, sel, clamp, mode),
                (O::VPkAddF16, _) => packed::pk_add_f16(a, b, sel, clamp, mode),
                (O::VPkMulF16, _) => packed::pk_mul_f16(a, b, sel, clamp, mode),
                (O::VPkMinF16, _) => packed::pk_min_f16(a, b, sel, clamp, mode),
                (O::VPkMaxF16, _) => packed::pk_max_f16(a, b, sel, clamp, mode),
                (O::VPkMinimum3F16, _) => clamp_halves(packed::pk_minimum3_f16(a, b, cc, sel), clamp, mode),
                _ => clamp_halves(packed::pk_maximum3_f16(a, b, cc, sel), clamp, mode),
            };
        }
        write(&mut w.vgpr[fl.vdst], &out, exec);
        return Ok(());
    }
    match op {
        O::VDot2F32F16 | O::VDot2F32Bf16 | O::VDot2I32I16 | O::VDot2U32U16 | O::VDot4I32I8 | O::VDot4U32U8 | O::VDot8I32I4 | O::VDot8U32U4 => {
            let float = matches!(op, O::VDot2F32F16 | O::VDot2F32Bf16);
            // Each packed source passes the VOP3P half selection: its low half is the half
            // op_sel[i] names, its high half the one op_sel_hi[i] names (the default
            // op_sel:0 op_sel_hi:1 is the register as read).
            let select = |v: L32, i: u32| -> L32 {
                let (lo, hi) = ((sel.op_sel >> i) & 1, (sel.op_sel_hi >> i) & 1);
                if lo == 0 && hi == 1 {
                    return v;
                }
                let half = |x: u32, h: u8| if h != 0 { x >> 16 } else { x & 0xffff };
                std::array::from_fn(|l| half(v[l], lo) | half(v[l], hi) << 16)
            };
            let a = select(fetch(w, fl.src[0], fl.literal, float && op == O::VDot2F32F16), 0);
            let b = select(fetch(w, fl.src[1], fl.literal, float && op == O::VDot2F32F16), 1);
            let cc = fetch(w, fl.src[2], fl.literal, false);
            // The sign flips of each half of the packed float sources.
            let flip = |k: u32| -> u32 { (((sel.neg_lo >> k) & 1) as u32) << 15 | (((sel.neg_hi >> k) & 1) as u32) << 31 };
            let (fa, fb) = if float { (flip(0), flip(1)) } else { (0, 0) };
            let neg_c = op == O::VDot2F32F16 && sel.neg_lo & 4 != 0;
            let rm = mode.round_f32;
            let clamp = fl.clamp;
            let mut out = [0u32; N];
            for i in 0..N {
                let (x, y, z) = (a[i] ^ fa, b[i] ^ fb, cc[i]);
                out[i] = match op {
                    O::VDot2F32F16 => {
                        let z = f32::from_bits(z ^ ((neg_c as u32) << 31));
                        output_f32(dot::dot2_f32_f16(x, y, z, rm), OutputModifier::None, clamp, mode).to_bits()
                    }
                    O::VDot2F32Bf16 => output_f32(dot::dot2_f32_bf16(x, y, f32::from_bits(z), rm), OutputModifier::None, clamp, mode).to_bits(),
                    O::VDot2I32I16 => dot::dot2_i32_i16(x, y, z, clamp),
                    O::VDot2U32U16 => dot::dot2_u32_u16(x, y, z, clamp),
                    O::VDot4I32I8 => dot::dot4_i32_i8(x, y, z, clamp),
                    O::VDot4U32U8 => dot::dot4_u32_u8(x, y, z, clamp),
                    O::VDot8I32I4 => dot::dot8_i32_i4(x, y, z, clamp),
                    _ => dot::dot8_u32_u4(x, y, z, clamp),
                };
            }
            write(&mut w.vgpr[fl.vdst], &out, exec);
            Ok(())
        }
        O::VFmaMixF32 | O::VFmaMixloF16 | O::VFmaMixhiF16 => {
            // A constant read as an f16 has no documented f16 form.
            if (0..3).any(|i| (128..256).contains(&fl.src[i]) && (sel.op_sel_hi >> i) & 1 != 0) {
                return Err(unsupported(&c.inst, pc));
            }
            let src: [L32; 3] = std::array::from_fn(|k| fetch(w, fl.src[k], fl.literal, false));
            let old = w.vgpr[fl.vdst];
            let mut out = [0u32; N];
            for i in 0..N {
                let input = |k: usize| mix_input(src[k][i], k, sel, mode);
                let r = valu::fma_f32(input(0), input(1), input(2), mode.round_f32);
                out[i] = match op {
                    O::VFmaMixF32 => output_f32(r, OutputModifier::None, fl.clamp, mode).to_bits(),
                    _ => {
                        let h = output_f16(f32_to_f16(r, mode.round_f16_f64), OutputModifier::None, fl.clamp, mode) as u32;
                        if op == O::VFmaMixloF16 {
                            (old[i] & 0xffff_0000) | h
                        } else {
                            (old[i] & 0xffff) | (h << 16)
                        }
                    }
                };
            }
            write(&mut w.vgpr[fl.vdst], &out, exec);
            Ok(())
        }
        O::VPkMovB32 => {
            let a = fetch64(w, fl.src[0], fl.literal, false);
            let b = fetch64(w, fl.src[1], fl.literal, false);
            let out: [u64; N] = std::array::from_fn(|i| packed::pk_mov_b32(a[i], b[i], fl.opsel));
            write64(&mut w.vgpr, fl.vdst, &out, exec);
            Ok(())
        }
        O::VPkAddF32 | O::VPkMulF32 | O::VPkFmaF32 => {
            let k = match op {
                O::VPkAddF32 => packed::PkF32Op::Add,
                O::VPkMulF32 => packed::PkF32Op::Mul,
                _ => packed::PkF32Op::Fma,
            };
            let a = fetch64(w, fl.src[0], fl.literal, false);
            let b = fetch64(w, fl.src[1], fl.literal, false);
            let cc = if k == packed::PkF32Op::Fma { fetch64(w, fl.src[2], fl.literal, false) } else { [0; N] };
            let out: [u64; N] = std::array::from_fn(|i| packed::pk_f32(k, a[i], b[i], cc[i], sel, fl.clamp, mode));
            write64(&mut w.vgpr, fl.vdst, &out, exec);
            Ok(())
        }
        _ => Err(unsupported(&c.inst, pc)),
    }
}

/// The clamp modifier on both f16 halves of a packed result (MODE's output flush too).
fn clamp_halves(v: u32, clamp: bool, mode: Mode) -> u32 {
    let h = |x: u32| output_f16(x as u16, OutputModifier::None, clamp, mode) as u32;
    h(v & 0xffff) | (h(v >> 16) << 16)
}

/// Source `k` of a `v_fma_mix*` as f32: the whole dword with `op_sel_hi[k]` clear, else the
/// f16 half `op_sel[k]` names, widened exactly; denormals flushed per MODE; `neg_hi[k]`
/// (absolute value) then `neg_lo[k]` (negation).
fn mix_input(src: u32, k: usize, sel: PackedSel, mode: Mode) -> f32 {
    let x = if (sel.op_sel_hi >> k) & 1 == 0 {
        mode.flush_in_f32(f32::from_bits(src))
    } else {
        let h = if (sel.op_sel >> k) & 1 != 0 { (src >> 16) as u16 } else { src as u16 };
        f16_to_f32(mode.flush_in_f16(h))
    };
    let x = if (sel.neg_hi >> k) & 1 != 0 { x.abs() } else { x };
    if (sel.neg_lo >> k) & 1 != 0 {
        -x
    } else {
        x
    }
}
