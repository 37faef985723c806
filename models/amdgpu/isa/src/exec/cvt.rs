//! Executor glue for the gfx950 block-scaled conversions (`v_cvt_scalef32_*`): operand
//! fetch, op_sel byte/word steering and multi-register sources and destinations. The
//! arithmetic is [`crate::numeric::scaled`]; its module docs record the semantic choices.
//!
//! Operand rules (CDNA4 ISA guide, section 7.3 and the per-opcode pseudocode):
//!
//! - The scale is the last source (S1 for two-source forms, S2 for three-source ones); only
//!   its exponent field is read, so its abs/neg modifiers change nothing.
//! - f32 sources take abs/neg and are flushed per MODE.FP_DENORM. A packed f16/bf16 source
//!   (two or thirty-two elements in one operand) gets its operand's abs/neg applied to every
//!   element (*model*: the guide lists the modifiers as supported for the f32 forms only;
//!   LLVM accepts them on the f16 forms). A single f16/bf16 element (`sr_{fp8,bf8}_{f16,bf16}`)
//!   is the half op_sel[0] selects. fp4/fp6/fp8 sources ignore input modifiers ("Conversion
//!   from F4/F6/F8 do not support input modifiers"); the seed of the `_sr_` forms is an
//!   integer and ignores them too.
//! - clamp and omod are ignored (table 31: "ignores: clamp, omod"; "Convert ops do not
//!   support OMOD"); fp8 saturation is MODE.FP16_OVFL only.
//! - Narrow destinations write the byte (op_sel[3:2]) or word (op_sel[3]) the pseudocode
//!   names and keep the other destination bits. `v_cvt_scalef32_f16_{fp8,bf8}` write the half
//!   op_sel[3] selects and keep the other half (*model*: the pseudocode's comment "OPSEL[3]
//!   controls destination hi/lo", with LLVM tying the destination as an input).
//! - Op_sel bits the pseudocode of a form does not read are ignored.
//! - A multi-register source is consecutive VGPRs, or consecutive SGPRs for an SGPR code;
//!   a constant, literal or special register there has no defined meaning and stops the
//!   wave with [`ExecFault::Unsupported`].

use crate::decode::Opcode;
use crate::numeric::fp8::insert_byte;
use crate::numeric::scaled::{self, Narrow, Rounding, Scale, Wide};
use crate::numeric::MxFormat;

use super::operands::unsupported;
use super::program::CachedInst;
use super::valu::{fetch, Fields};
use super::wave::{Wave, WAVE_LANES};
use super::ExecFault;

const N: usize = WAVE_LANES;
type L32 = [u32; N];

/// What a scaled conversion does, decoded from its opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// Two wide elements to a packed narrow pair (`pk_{fp8,bf8,fp4}_*`, `sr_pk_fp4_*`).
    Down2 { narrow: Narrow, wide: Wide, sr: bool },
    /// One wide element to an fp8/bf8 byte with stochastic rounding (`sr_{fp8,bf8}_*`).
    DownSr1 { narrow: Narrow, wide: Wide },
    /// One fp8/bf8 byte to f32 or f16 (`f32_fp8`, `f16_bf8`, ...).
    Up1 { narrow: Narrow, wide: Wide },
    /// A packed narrow pair to two wide elements (`pk_{f32,f16,bf16}_{fp8,bf8,fp4}`).
    Up2 { narrow: Narrow, wide: Wide },
    /// Thirty-two wide elements to 192 bits of fp6/bf6 (`{sr_,}pk32_{fp6,bf6}_*`).
    Down32 { narrow: MxFormat, wide: Wide, sr: bool },
    /// Two sixteen-element f32 vectors, interleaved, to fp6/bf6 (`2xpk16_*`).
    Down2x16 { narrow: MxFormat },
    /// 192 bits of fp6/bf6 to thirty-two wide elements (`pk32_{f32,f16,bf16}_{fp6,bf6}`).
    Up32 { narrow: MxFormat, wide: Wide },
}

/// The scaled-conversion form of an opcode, or `None` when it is not one.
fn form(op: Opcode) -> Option<Form> {
    use Form::*;
    use Opcode as O;
    use Wide::{Bf16, F16, F32};
    const FP8: Narrow = Narrow::FP8;
    const BF8: Narrow = Narrow::BF8;
    const FP4: Narrow = Narrow::FP4;
    const FP6: MxFormat = MxFormat::E2M3;
    const BF6: MxFormat = MxFormat::E3M2;
    Some(match op {
        O::VCvtScalef32PkFp8F32 => Down2 { narrow: FP8, wide: F32, sr: false },
        O::VCvtScalef32PkBf8F32 => Down2 { narrow: BF8, wide: F32, sr: false },
        O::VCvtScalef32PkFp8F16 => Down2 { narrow: FP8, wide: F16, sr: false },
        O::VCvtScalef32PkBf8F16 => Down2 { narrow: BF8, wide: F16, sr: false },
        O::VCvtScalef32PkFp8Bf16 => Down2 { narrow: FP8, wide: Bf16, sr: false },
        O::VCvtScalef32PkBf8Bf16 => Down2 { narrow: BF8, wide: Bf16, sr: false },
        O::VCvtScalef32PkFp4F32 => Down2 { narrow: FP4, wide: F32, sr: false },
        O::VCvtScalef32PkFp4F16 => Down2 { narrow: FP4, wide: F16, sr: false },
        O::VCvtScalef32PkFp4Bf16 => Down2 { narrow: FP4, wide: Bf16, sr: false },
        O::VCvtScalef32SrPkFp4F32 => Down2 { narrow: FP4, wide: F32, sr: true },
        O::VCvtScalef32SrPkFp4F16 => Down2 { narrow: FP4, wide: F16, sr: true },
        O::VCvtScalef32SrPkFp4Bf16 => Down2 { narrow: FP4, wide: Bf16, sr: true },
        O::VCvtScalef32SrFp8F32 => DownSr1 { narrow: FP8, wide: F32 },
        O::VCvtScalef32SrBf8F32 => DownSr1 { narrow: BF8, wide: F32 },
        O::VCvtScalef32SrFp8F16 => DownSr1 { narrow: FP8, wide: F16 },
        O::VCvtScalef32SrBf8F16 => DownSr1 { narrow: BF8, wide: F16 },
        O::VCvtScalef32SrFp8Bf16 => DownSr1 { narrow: FP8, wide: Bf16 },
        O::VCvtScalef32SrBf8Bf16 => DownSr1 { narrow: BF8, wide: Bf16 },
        O::VCvtScalef32F32Fp8 => Up1 { narrow: FP8, wide: F32 },
        O::VCvtScalef32F32Bf8 => Up1 { narrow: BF8, wide: F32 },
        O::VCvtScalef32F16Fp8 => Up1 { narrow: FP8, wide: F16 },
        O::VCvtScalef32F16Bf8 => Up1 { narrow: BF8, wide: F16 },
        O::VCvtScalef32PkF32Fp8 => Up2 { narrow: FP8, wide: F32 },
        O::VCvtScalef32PkF32Bf8 => Up2 { narrow: BF8, wide: F32 },
        O::VCvtScalef32PkF16Fp8 => Up2 { narrow: FP8, wide: F16 },
        O::VCvtScalef32PkF16Bf8 => Up2 { narrow: BF8, wide: F16 },
        O::VCvtScalef32PkBf16Fp8 => Up2 { narrow: FP8, wide: Bf16 },
        O::VCvtScalef32PkBf16Bf8 => Up2 { narrow: BF8, wide: Bf16 },
        O::VCvtScalef32PkF32Fp4 => Up2 { narrow: FP4, wide: F32 },
        O::VCvtScalef32PkF16Fp4 => Up2 { narrow: FP4, wide: F16 },
        O::VCvtScalef32PkBf16Fp4 => Up2 { narrow: FP4, wide: Bf16 },
        O::VCvtScalef32Pk32Fp6F16 => Down32 { narrow: FP6, wide: F16, sr: false },
        O::VCvtScalef32Pk32Fp6Bf16 => Down32 { narrow: FP6, wide: Bf16, sr: false },
        O::VCvtScalef32Pk32Bf6F16 => Down32 { narrow: BF6, wide: F16, sr: false },
        O::VCvtScalef32Pk32Bf6Bf16 => Down32 { narrow: BF6, wide: Bf16, sr: false },
        O::VCvtScalef32SrPk32Fp6F32 => Down32 { narrow: FP6, wide: F32, sr: true },
        O::VCvtScalef32SrPk32Fp6F16 => Down32 { narrow: FP6, wide: F16, sr: true },
        O::VCvtScalef32SrPk32Fp6Bf16 => Down32 { narrow: FP6, wide: Bf16, sr: true },
        O::VCvtScalef32SrPk32Bf6F32 => Down32 { narrow: BF6, wide: F32, sr: true },
        O::VCvtScalef32SrPk32Bf6F16 => Down32 { narrow: BF6, wide: F16, sr: true },
        O::VCvtScalef32SrPk32Bf6Bf16 => Down32 { narrow: BF6, wide: Bf16, sr: true },
        O::VCvtScalef322xpk16Fp6F32 => Down2x16 { narrow: FP6 },
        O::VCvtScalef322xpk16Bf6F32 => Down2x16 { narrow: BF6 },
        O::VCvtScalef32Pk32F32Fp6 => Up32 { narrow: FP6, wide: F32 },
        O::VCvtScalef32Pk32F32Bf6 => Up32 { narrow: BF6, wide: F32 },
        O::VCvtScalef32Pk32F16Fp6 => Up32 { narrow: FP6, wide: F16 },
        O::VCvtScalef32Pk32F16Bf6 => Up32 { narrow: BF6, wide: F16 },
        O::VCvtScalef32Pk32Bf16Fp6 => Up32 { narrow: FP6, wide: Bf16 },
        O::VCvtScalef32Pk32Bf16Bf6 => Up32 { narrow: BF6, wide: Bf16 },
        _ => return None,
    })
}

/// True for the opcodes [`execute`] runs.
pub(crate) fn is_scaled(op: Opcode) -> bool {
    form(op).is_some()
}

/// Reads `n` consecutive registers of source code `src` (see the module docs), or `None`
/// for a code that names no register file.
fn gather<const K: usize>(w: &Wave, src: u32, literal: u32) -> Option<[L32; K]> {
    let mut out = [[0u32; N]; K];
    for (k, o) in out.iter_mut().enumerate() {
        *o = if src >= 256 {
            w.vgpr[((src - 256) as usize + k) & 255]
        } else if K <= 1 || (src as usize + K) <= 102 {
            fetch(w, src + k as u32, literal, false)
        } else {
            return None;
        };
    }
    Some(out)
}

/// Applies an operand's abs/neg to the sign bit at `sign` of a packed element.
#[inline]
fn sign_mods(x: u32, sign: u32, abs: bool, neg: bool) -> u32 {
    let x = if abs { x & !(1 << sign) } else { x };
    if neg {
        x ^ (1 << sign)
    } else {
        x
    }
}

/// Executes a scaled conversion (gfx950 VOP3), writing the lanes of EXEC.
pub(crate) fn execute(w: &mut Wave, c: &CachedInst, pc: u64) -> Result<(), ExecFault> {
    let Some(form) = form(c.op) else { return Err(unsupported(&c.inst, pc)) };
    let fl: Fields = c.fields;
    let exec = w.exec();
    let mode = w.mode;
    let flush = mode.denorm_f32.flushes_input();
    let sat = mode.fp16_ovfl;
    let lit = fl.literal;
    let abs = |i: usize| (fl.abs >> i) & 1 != 0;
    let neg = |i: usize| (fl.neg >> i) & 1 != 0;
    let opsel = fl.opsel as u32;
    let scale_of = |i: usize, w: &Wave| fetch(w, fl.src[i], lit, false);
    // One wide element: its bits with the operand's sign modifiers, as an exact value.
    let wide_value = |wide: Wide, bits: u32, i: usize| {
        let sign = if wide == Wide::F32 { 31 } else { 15 };
        wide.value(sign_mods(bits, sign, abs(i), neg(i)), flush)
    };
    let unsupported = || unsupported(&c.inst, pc);
    match form {
        Form::Down2 { narrow, wide, sr } => {
            let dst_old = w.vgpr[fl.vdst];
            let (pairs, seed, scale): ([L32; 2], Option<L32>, L32) = match (wide, sr) {
                (Wide::F32, false) => ([fetch(w, fl.src[0], lit, false), fetch(w, fl.src[1], lit, false)], None, scale_of(2, w)),
                (Wide::F32, true) => {
                    let [a, b] = gather::<2>(w, fl.src[0], lit).ok_or_else(unsupported)?;
                    ([a, b], Some(fetch(w, fl.src[1], lit, false)), scale_of(2, w))
                }
                (_, false) => {
                    let s = fetch(w, fl.src[0], lit, false);
                    ([s, s.map(|x| x >> 16)], None, scale_of(1, w))
                }
                (_, true) => {
                    let s = fetch(w, fl.src[0], lit, false);
                    ([s, s.map(|x| x >> 16)], Some(fetch(w, fl.src[1], lit, false)), scale_of(2, w))
                }
            };
            // Each element with the operand whose modifiers it takes: the f32 pair forms
            // read S0 and S1; the others read both elements from S0.
            let b_operand = usize::from(wide == Wide::F32 && !sr);
            let mask = if wide == Wide::F32 { u32::MAX } else { 0xffff };
            let mut out = dst_old;
            for i in 0..N {
                let a = wide_value(wide, pairs[0][i] & mask, 0);
                let b = wide_value(wide, pairs[1][i] & mask, b_operand);
                let scale = Scale::from_f32_bits(scale[i]);
                out[i] = match narrow {
                    Narrow::Fp8(f) => {
                        let word = scaled::pack2_fp8(f, a, b, scale, sat);
                        crate::numeric::fp8::insert_word(dst_old[i], word, (opsel >> 3) & 1 != 0)
                    }
                    Narrow::Mx(_) => {
                        let rounding = match seed {
                            Some(s) => Rounding::Stochastic(s[i]),
                            None => Rounding::NearestEven,
                        };
                        insert_byte(dst_old[i], scaled::pack2_fp4(a, b, scale, rounding), (opsel >> 2) & 3)
                    }
                };
            }
            super::valu::write(&mut w.vgpr[fl.vdst], &out, exec);
        }
        Form::DownSr1 { narrow, wide } => {
            let src = fetch(w, fl.src[0], lit, false);
            let seed = fetch(w, fl.src[1], lit, false);
            let scale = scale_of(2, w);
            let dst_old = w.vgpr[fl.vdst];
            let mut out = dst_old;
            for i in 0..N {
                let bits = if wide == Wide::F32 { src[i] } else if opsel & 1 != 0 { src[i] >> 16 } else { src[i] & 0xffff };
                let x = wide_value(wide, bits, 0);
                let code = scaled::scale_down(narrow, x, Scale::from_f32_bits(scale[i]), Rounding::Stochastic(seed[i]), sat);
                out[i] = insert_byte(dst_old[i], code, (opsel >> 2) & 3);
            }
            super::valu::write(&mut w.vgpr[fl.vdst], &out, exec);
        }
        Form::Up1 { narrow, wide } => {
            let src = fetch(w, fl.src[0], lit, false);
            let scale = scale_of(1, w);
            let dst_old = w.vgpr[fl.vdst];
            let mut out = [0u32; N];
            for i in 0..N {
                let code = (src[i] >> (8 * (opsel & 3))) as u8;
                let r = scaled::scale_up(narrow, code, Scale::from_f32_bits(scale[i]), wide);
                out[i] = match wide {
                    Wide::F32 => r,
                    _ if (opsel >> 3) & 1 != 0 => (dst_old[i] & 0xffff) | (r << 16),
                    _ => (dst_old[i] & 0xffff_0000) | r,
                };
            }
            super::valu::write(&mut w.vgpr[fl.vdst], &out, exec);
        }
        Form::Up2 { narrow, wide } => {
            let src = fetch(w, fl.src[0], lit, false);
            let scale = scale_of(1, w);
            let mut lo = [0u32; N];
            let mut hi = [0u32; N];
            for i in 0..N {
                let scale = Scale::from_f32_bits(scale[i]);
                let [a, b] = match narrow {
                    Narrow::Fp8(f) => scaled::unpack2_fp8(f, (src[i] >> (16 * (opsel & 1))) as u16, scale, wide),
                    Narrow::Mx(_) => scaled::unpack2_fp4((src[i] >> (8 * (opsel & 3))) as u8, scale, wide),
                };
                if wide == Wide::F32 {
                    (lo[i], hi[i]) = (a, b);
                } else {
                    lo[i] = a | (b << 16);
                }
            }
            super::valu::write(&mut w.vgpr[fl.vdst], &lo, exec);
            if wide == Wide::F32 {
                super::valu::write(&mut w.vgpr[(fl.vdst + 1) & 255], &hi, exec);
            }
        }
        Form::Down32 { narrow, wide, sr } => {
            let (seed, scale) = if sr { (Some(fetch(w, fl.src[1], lit, false)), scale_of(2, w)) } else { (None, scale_of(1, w)) };
            let src: [L32; 32] = if wide == Wide::F32 {
                gather::<32>(w, fl.src[0], lit).ok_or_else(unsupported)?
            } else {
                let packed = gather::<16>(w, fl.src[0], lit).ok_or_else(unsupported)?;
                std::array::from_fn(|e| packed[e / 2].map(|x| if e % 2 == 1 { x >> 16 } else { x & 0xffff }))
            };
            let out = pack_lanes(narrow, &scale, seed.as_ref(), |i, e| wide_value(wide, src[e][i], 0));
            write_regs(w, fl.vdst, &out, exec);
        }
        Form::Down2x16 { narrow } => {
            let a = gather::<16>(w, fl.src[0], lit).ok_or_else(unsupported)?;
            let b = gather::<16>(w, fl.src[1], lit).ok_or_else(unsupported)?;
            let scale = scale_of(2, w);
            // Element 2k is S0[k], element 2k+1 is S1[k] (the pseudocode interleaves them).
            let out = pack_lanes(narrow, &scale, None, |i, e| {
                if e % 2 == 0 {
                    wide_value(Wide::F32, a[e / 2][i], 0)
                } else {
                    wide_value(Wide::F32, b[e / 2][i], 1)
                }
            });
            write_regs(w, fl.vdst, &out, exec);
        }
        Form::Up32 { narrow, wide } => {
            let src = gather::<6>(w, fl.src[0], lit).ok_or_else(unsupported)?;
            let scale = scale_of(1, w);
            let mut out = [[0u32; N]; 32];
            for i in 0..N {
                let packed: [u32; 6] = std::array::from_fn(|k| src[k][i]);
                let vals = scaled::unpack32_fp6(narrow, &packed, Scale::from_f32_bits(scale[i]), wide);
                if wide == Wide::F32 {
                    for (e, v) in vals.iter().enumerate() {
                        out[e][i] = *v;
                    }
                } else {
                    for k in 0..16 {
                        out[k][i] = vals[2 * k] | (vals[2 * k + 1] << 16);
                    }
                }
            }
            let regs = if wide == Wide::F32 { 32 } else { 16 };
            write_regs(w, fl.vdst, &out[..regs], exec);
        }
    }
    Ok(())
}

/// Packs 32 elements per lane (`value(lane, element)`) into six result registers.
fn pack_lanes(narrow: MxFormat, scale: &L32, seed: Option<&L32>, value: impl Fn(usize, usize) -> f64) -> [L32; 6] {
    let mut out = [[0u32; N]; 6];
    for i in 0..N {
        let values: [f64; 32] = std::array::from_fn(|e| value(i, e));
        let rounding = seed.map_or(Rounding::NearestEven, |s| Rounding::Stochastic(s[i]));
        let packed = scaled::pack32_fp6(narrow, &values, Scale::from_f32_bits(scale[i]), rounding);
        for k in 0..6 {
            out[k][i] = packed[k];
        }
    }
    out
}

/// Writes consecutive destination VGPRs under `mask`.
fn write_regs(w: &mut Wave, vdst: usize, regs: &[L32], mask: u64) {
    for (k, r) in regs.iter().enumerate() {
        super::valu::write(&mut w.vgpr[(vdst + k) & 255], r, mask);
    }
}
