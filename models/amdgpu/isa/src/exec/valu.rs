//! Vector ALU handlers: VOP1, VOP2, VOPC, VOP3 (A and B), VOP3P, with DPP and SDWA.
//!
//! Each handler fetches its sources for all 64 lanes into lane-contiguous arrays, computes
//! every lane unconditionally, then blends the results into the destination under EXEC
//! (and the DPP/SDWA write masks), so the per-lane loops vectorize.

// Lane loops index several lane arrays in lockstep on purpose: that is the shape the
// compiler vectorizes.
#![allow(clippy::needless_range_loop)]

use crate::decode::{Encoding, Opcode};
use crate::numeric::valu::{max_f32, max_f64, min_f32, min_f64, output_f16, output_f32, output_f64, OutputModifier};
use crate::numeric::{dot, fp8, int, transcendental, valu, Fp8Format, Mode};
use crate::Target;

use super::operands::{icmp, inline_f64, scalar_src, scalar_src64, unsupported, VCC};
use super::program::{CachedInst, Extension};
use super::reg_file::RegFile;
use super::wave::{VReg, Wave, WAVE_LANES};
use super::{dpp, ExecFault};

const N: usize = WAVE_LANES;
type L32 = [u32; N];
type L64 = [u64; N];

/// The operand fields of a VALU instruction, normalised across encodings.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Fields {
    /// 9-bit source operand codes (256+ = VGPR).
    pub(crate) src: [u32; 3],
    pub(crate) vdst: usize,
    /// Scalar destination (VOP3B carry-out, VOPC mask destination).
    pub(crate) sdst: usize,
    pub(crate) abs: u8,
    pub(crate) neg: u8,
    pub(crate) clamp: bool,
    pub(crate) omod: u32,
    pub(crate) opsel: u8,
    pub(crate) literal: u32,
    /// No modifiers, DPP, SDWA, compare or VOP3P: eligible for the [`fast`] path (set at
    /// load time).
    pub(crate) plain: bool,
    /// VOP3 `op_sel` bits the instruction does not define (LLVM neither prints nor accepts
    /// them): the executor refuses such words as illegal rather than guess what the bits
    /// do.
    pub(crate) opsel_undefined: bool,
}

/// Compare descriptor computed at load time from a `v_cmp*` mnemonic: bit 15 valid,
/// bit 14 writes EXEC (`v_cmpx`), bits 7:4 operand type, bits 3:0 condition.
pub(crate) fn compare_aux(mnemonic: &str) -> u16 {
    let (rest, x) = if let Some(r) = mnemonic.strip_prefix("v_cmpx_") {
        (r, true)
    } else if let Some(r) = mnemonic.strip_prefix("v_cmp_") {
        (r, false)
    } else {
        return 0;
    };
    let rest = rest.trim_end_matches("_e32").trim_end_matches("_e64").trim_end_matches("_sdwa").trim_end_matches("_dpp");
    let Some((cond, ty)) = rest.split_once('_') else { return 0 };
    let ty_code = match ty {
        "f16" => 0,
        "f32" => 1,
        "f64" => 2,
        "i16" => 3,
        "i32" => 4,
        "i64" => 5,
        "u16" => 6,
        "u32" => 7,
        "u64" => 8,
        _ => return 0,
    };
    let cond_code = match (cond, ty_code <= 2) {
        ("class", true) => 15,
        ("f", _) => 0,
        ("lt", _) => 1,
        ("eq", _) => 2,
        ("le", _) => 3,
        ("gt", _) => 4,
        ("lg", true) | ("ne", false) => 5,
        ("ge", _) => 6,
        ("o", true) => 7,
        ("u", true) => 8,
        ("nge", true) => 9,
        ("nlg", true) => 10,
        ("ngt", true) => 11,
        ("nle", true) => 12,
        ("neq", true) => 13,
        ("nlt", true) => 14,
        ("tru", true) | ("t", false) => 16,
        _ => return 0,
    };
    // Condition 16 (always true) is stored as 0 with bit 13 set.
    let (cond_code, always) = if cond_code == 16 { (0, 1u16 << 13) } else { (cond_code, 0) };
    0x8000 | ((x as u16) << 14) | always | (ty_code << 4) | cond_code
}

/// The VOP3B opcodes (a scalar carry/flag destination in place of abs and op_sel).
fn is_vop3b(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::VAddCoU32E64
            | O::VSubCoU32E64
            | O::VSubrevCoU32E64
            | O::VAddcCoU32E64
            | O::VSubbCoU32E64
            | O::VSubbrevCoU32E64
            | O::VDivScaleF32
            | O::VDivScaleF64
            | O::VMadU64U32
            | O::VMadI64I32
    )
}

/// VOP3 opcodes that read `op_sel` bits the decoder's table does not list: the fp8
/// conversions take their byte select there (CDNA3 ISA, "FP8 conversions" table), and the
/// gfx950 scaled conversions (another module's) read their own.
fn opsel_beyond_table(op: Opcode) -> bool {
    use Opcode as O;
    matches!(op, O::VCvtF32Fp8E64 | O::VCvtF32Bf8E64) || op.mnemonic().starts_with("v_cvt_scalef32") || op.mnemonic().starts_with("v_cvt_sr_")
}

/// Decodes the operand fields of a VALU instruction (done once, at load time).
pub(crate) fn fields(c: &CachedInst) -> Fields {
    let words = c.inst.words();
    let w0 = words[0];
    let w1 = words.get(1).copied().unwrap_or(0);
    let literal = c.inst.literal().unwrap_or(0);
    let mut f = Fields { literal, sdst: VCC, ..Fields::default() };
    match c.enc {
        Encoding::Vop1 => {
            f.src[0] = w0 & 0x1ff;
            f.vdst = ((w0 >> 17) & 0xff) as usize;
        }
        Encoding::Vop2 | Encoding::Vopc => {
            f.src[0] = w0 & 0x1ff;
            f.src[1] = 256 + ((w0 >> 9) & 0xff);
            f.src[2] = 256 + ((w0 >> 17) & 0xff);
            f.vdst = ((w0 >> 17) & 0xff) as usize;
        }
        Encoding::Vop3 => {
            f.vdst = (w0 & 0xff) as usize;
            f.sdst = ((w0 >> 8) & 0x7f) as usize;
            f.abs = ((w0 >> 8) & 7) as u8;
            f.opsel = ((w0 >> 11) & 0xf) as u8;
            f.clamp = (w0 >> 15) & 1 != 0;
            f.src = [w1 & 0x1ff, (w1 >> 9) & 0x1ff, (w1 >> 18) & 0x1ff];
            f.omod = (w1 >> 27) & 3;
            f.neg = ((w1 >> 29) & 7) as u8;
            if is_vop3b(c.op) {
                // VOP3B: bits 14:8 are the scalar destination, there is no abs/op_sel.
                f.abs = 0;
                f.opsel = 0;
            }
        }
        Encoding::Vop3p => {
            f.vdst = (w0 & 0xff) as usize;
            f.opsel = ((w0 >> 11) & 7) as u8;
            f.clamp = (w0 >> 15) & 1 != 0;
            f.src = [w1 & 0x1ff, (w1 >> 9) & 0x1ff, (w1 >> 18) & 0x1ff];
            f.neg = ((w1 >> 29) & 7) as u8;
        }
        _ => {}
    }
    match c.ext {
        Extension::Dpp(ctrl) => {
            f.src[0] = 256 + (ctrl & 0xff);
            f.neg = (((ctrl >> 20) & 1) | (((ctrl >> 22) & 1) << 1)) as u8;
            f.abs = (((ctrl >> 21) & 1) | (((ctrl >> 23) & 1) << 1)) as u8;
        }
        Extension::Sdwa(ctrl) => {
            f.src[0] = (ctrl & 0xff) + if (ctrl >> 23) & 1 != 0 { 0 } else { 256 };
            if c.enc != Encoding::Vop1 && (ctrl >> 31) & 1 != 0 {
                f.src[1] -= 256;
            }
            f.neg = (((ctrl >> 20) & 1) | (((ctrl >> 28) & 1) << 1)) as u8;
            f.abs = (((ctrl >> 21) & 1) | (((ctrl >> 29) & 1) << 1)) as u8;
            if c.enc == Encoding::Vopc {
                if (ctrl >> 15) & 1 != 0 {
                    f.sdst = ((ctrl >> 8) & 0x7f) as usize;
                }
            } else {
                f.clamp = (ctrl >> 13) & 1 != 0;
                f.omod = (ctrl >> 14) & 3;
            }
        }
        Extension::None => {}
    }
    if c.enc == Encoding::Vop3 {
        f.opsel_undefined = f.opsel & !c.inst.entry().opsel_mask != 0 && !opsel_beyond_table(c.op);
    }
    f.plain = c.ext == Extension::None
        && c.enc != Encoding::Vop3p
        && c.aux & 0x8000 == 0
        && f.abs == 0
        && f.neg == 0
        && !f.clamp
        && f.omod == 0
        && f.opsel == 0;
    f
}

/// Source `v` for all lanes as 32 bits (`f16`: half-precision inline constants).
#[inline]
pub(crate) fn fetch(w: &Wave, v: u32, literal: u32, f16: bool) -> L32 {
    if v >= 256 {
        w.vgpr[(v - 256) as usize]
    } else {
        [scalar_src(w, v, literal, f16); N]
    }
}

/// Source `v` for all lanes as 64 bits (VGPR pairs; `float`: f64 inline constants).
#[inline]
pub(crate) fn fetch64(w: &Wave, v: u32, literal: u32, float: bool) -> L64 {
    if v >= 256 {
        let r = (v - 256) as usize;
        let lo = &w.vgpr[r];
        let hi = &w.vgpr[(r + 1) & 255];
        let mut out = [0u64; N];
        for i in 0..N {
            out[i] = lo[i] as u64 | ((hi[i] as u64) << 32);
        }
        out
    } else if float && (240..=248).contains(&v) {
        [inline_f64(v); N]
    } else if float && v == 255 {
        // A 32-bit literal of an f64 operand supplies the high half.
        [(literal as u64) << 32; N]
    } else {
        [scalar_src64(w, v, literal); N]
    }
}

/// Blends `vals` into VGPR `dst` under `mask`.
#[inline]
pub(crate) fn write(reg: &mut VReg, vals: &L32, mask: u64) {
    if mask == u64::MAX {
        *reg = *vals;
        return;
    }
    for i in 0..N {
        let on = (mask >> i) & 1 != 0;
        reg[i] = if on { vals[i] } else { reg[i] };
    }
}

/// Blends 64-bit `vals` into the VGPR pair at `dst` under `mask`.
#[inline]
pub(crate) fn write64(file: &mut RegFile, dst: usize, vals: &L64, mask: u64) {
    let mut lo = [0u32; N];
    let mut hi = [0u32; N];
    for i in 0..N {
        lo[i] = vals[i] as u32;
        hi[i] = (vals[i] >> 32) as u32;
    }
    write(&mut file[dst & 255], &lo, mask);
    write(&mut file[(dst + 1) & 255], &hi, mask);
}

#[inline]
fn map1(a: &L32, f: impl Fn(u32) -> u32) -> L32 {
    let mut out = [0u32; N];
    for i in 0..N {
        out[i] = f(a[i]);
    }
    out
}

#[inline]
fn map2(a: &L32, b: &L32, f: impl Fn(u32, u32) -> u32) -> L32 {
    let mut out = [0u32; N];
    for i in 0..N {
        out[i] = f(a[i], b[i]);
    }
    out
}

#[inline]
fn map3(a: &L32, b: &L32, c: &L32, f: impl Fn(u32, u32, u32) -> u32) -> L32 {
    let mut out = [0u32; N];
    for i in 0..N {
        out[i] = f(a[i], b[i], c[i]);
    }
    out
}

#[inline]
fn map64_2(a: &L64, b: &L64, f: impl Fn(u64, u64) -> u64) -> L64 {
    let mut out = [0u64; N];
    for i in 0..N {
        out[i] = f(a[i], b[i]);
    }
    out
}

#[inline]
fn map64_3(a: &L64, b: &L64, c: &L64, f: impl Fn(u64, u64, u64) -> u64) -> L64 {
    let mut out = [0u64; N];
    for i in 0..N {
        out[i] = f(a[i], b[i], c[i]);
    }
    out
}

#[inline]
fn fbits(x: f32) -> u32 {
    x.to_bits()
}

#[inline]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

#[inline]
fn d(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Applies abs/neg modifiers to f32 sources (bit operations on the sign).
fn mod32(a: &mut L32, abs: bool, neg: bool) {
    if abs || neg {
        let clear = if abs { 0x7fff_ffff } else { u32::MAX };
        let flip = if neg { 0x8000_0000 } else { 0 };
        for x in a.iter_mut() {
            *x = (*x & clear) ^ flip;
        }
    }
}

fn mod64(a: &mut L64, abs: bool, neg: bool) {
    if abs || neg {
        let clear = if abs { 0x7fff_ffff_ffff_ffff } else { u64::MAX };
        let flip = if neg { 1u64 << 63 } else { 0 };
        for x in a.iter_mut() {
            *x = (*x & clear) ^ flip;
        }
    }
}

fn mod16(a: &mut L32, abs: bool, neg: bool) {
    if abs || neg {
        let clear = if abs { 0x7fff } else { 0xffff };
        let flip = if neg { 0x8000 } else { 0 };
        for x in a.iter_mut() {
            *x = (*x & clear) ^ flip;
        }
    }
}

/// SDWA operand select: 0..3 bytes, 4..5 words, 6 dword.
#[inline]
fn sdwa_select(x: u32, sel: u32, sext: bool) -> u32 {
    match sel {
        0..=3 => {
            let b = (x >> (8 * sel)) & 0xff;
            if sext {
                b as u8 as i8 as i32 as u32
            } else {
                b
            }
        }
        4 | 5 => {
            let h = (x >> (16 * (sel - 4))) & 0xffff;
            if sext {
                h as u16 as i16 as i32 as u32
            } else {
                h
            }
        }
        _ => x,
    }
}

/// Reads source `i` as 32 bits, with DPP/SDWA applied to it.
struct Srcs<'a> {
    w: &'a Wave,
    f: Fields,
    ext: Extension,
    exec: u64,
    /// Lanes the instruction may write (EXEC, narrowed by DPP).
    write_mask: u64,
}

impl Srcs<'_> {
    fn get(&mut self, i: usize, f16: bool) -> L32 {
        let mut v = fetch(self.w, self.f.src[i], self.f.literal, f16);
        match self.ext {
            Extension::Dpp(ctrl) if i == 0 => {
                let (p, m) = dpp::permute(ctrl, &v, self.exec);
                self.write_mask &= m;
                v = p;
            }
            Extension::Sdwa(ctrl) if i < 2 => {
                let (sel, sext) = if i == 0 { ((ctrl >> 16) & 7, (ctrl >> 19) & 1 != 0) } else { ((ctrl >> 24) & 7, (ctrl >> 27) & 1 != 0) };
                if sel != 6 || sext {
                    v = map1(&v, |x| sdwa_select(x, sel, sext));
                }
            }
            _ => {}
        }
        v
    }

    fn f32(&mut self, i: usize) -> L32 {
        let mut v = self.get(i, false);
        mod32(&mut v, (self.f.abs >> i) & 1 != 0, (self.f.neg >> i) & 1 != 0);
        v
    }

    fn f16(&mut self, i: usize) -> L32 {
        let mut v = self.get(i, true);
        if self.f.opsel >> i & 1 != 0 {
            v = map1(&v, |x| x >> 16);
        }
        let mut v = map1(&v, |x| x & 0xffff);
        mod16(&mut v, (self.f.abs >> i) & 1 != 0, (self.f.neg >> i) & 1 != 0);
        v
    }

    /// A 16-bit integer operand: the low half, or the high half when its `op_sel` bit is
    /// set (VOP3), zero-extended. Inline float constants are f16 bit patterns (LLVM prints
    /// them so for 16-bit integer operands).
    fn u16s(&mut self, i: usize) -> L32 {
        let v = self.get(i, true);
        let hi = self.f.opsel >> i & 1 != 0;
        map1(&v, |x| if hi { x >> 16 } else { x & 0xffff })
    }

    /// An f16 operand for arithmetic: [`Srcs::f16`], then MODE's f16 input-denormal flush.
    fn h16(&mut self, i: usize) -> L32 {
        let mode = self.w.mode;
        map1(&self.f16(i), |x| mode.flush_in_f16(x as u16) as u32)
    }

    /// DPP on a 64-bit source 0: the whole 64-bit value moves between lanes.
    fn permute64(&mut self, i: usize, v: L64) -> L64 {
        match self.ext {
            Extension::Dpp(ctrl) if i == 0 => {
                let (p, m) = dpp::permute(ctrl, &v, self.exec);
                self.write_mask &= m;
                p
            }
            _ => v,
        }
    }

    fn u64(&mut self, i: usize) -> L64 {
        let v = fetch64(self.w, self.f.src[i], self.f.literal, false);
        self.permute64(i, v)
    }

    /// A signed 64-bit integer operand: a literal is sign-extended.
    fn i64(&mut self, i: usize) -> L64 {
        if self.f.src[i] == 255 {
            [self.f.literal as i32 as i64 as u64; N]
        } else {
            self.u64(i)
        }
    }

    fn f64(&mut self, i: usize) -> L64 {
        let v = fetch64(self.w, self.f.src[i], self.f.literal, true);
        let mut v = self.permute64(i, v);
        mod64(&mut v, (self.f.abs >> i) & 1 != 0, (self.f.neg >> i) & 1 != 0);
        v
    }
}

/// Executes a VALU instruction. The hot unmodified forms usually run pre-resolved
/// (`super::fast`) and reach this only when that path declines.
#[inline]
pub(crate) fn execute(w: &mut Wave, c: &CachedInst, pc: u64, target: Target) -> Result<(), ExecFault> {
    if w.gpr_idx_enabled() {
        return execute_indexed(w, c, pc, target);
    }
    execute_general(w, c, pc, target)
}

/// Executes a VALU instruction under the gfx9 VGPR indexing mode (MODE.GPR_IDX_EN, set by
/// `s_set_gpr_idx_on`): M0[7:0] is added to the VGPR operands that M0[15:12] enables
/// (bit 12 src0, 13 src1, 14 src2, 15 the destination), as CDNA3 ISA section 6.6 gives
/// it. SGPR and constant operands, and scalar destinations (`v_readlane`, compares, VOP3B
/// carry-outs), are not indexed. Following the ISA's table of special cases, the
/// accumulator a `v_mac`/`v_fmac` reads is the destination (indexed with it), and the
/// VSRC1 of `v_madmk`/`v_fmamk` is the operation's src2 (enabled by M0[14]).
///
/// An index that takes a register past v255 is illegal (the ISA) and refused; so are the
/// instructions whose registers are not all in the decoded fields (MFMA, AccVGPR moves,
/// the 64-bit and 128-bit operands of the SAD/permute families are indexed as their base
/// register like any other).
#[cold]
fn execute_indexed(w: &mut Wave, c: &CachedInst, pc: u64, target: Target) -> Result<(), ExecFault> {
    use Opcode as O;
    let mnemonic = c.op.mnemonic();
    if mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac") || mnemonic.starts_with("v_accvgpr") {
        return Err(unsupported(&c.inst, pc));
    }
    let m0 = w.m0();
    let index = m0 & 0xff;
    let enable = (m0 >> 12) & 0xf;
    let mut cached = *c;
    let fl = &mut cached.fields;
    let madmk = matches!(c.op, O::VMadmkF32 | O::VMadmkF16 | O::VFmamkF32);
    let n_src = match c.enc {
        Encoding::Vop1 => 1,
        Encoding::Vop2 | Encoding::Vopc => 2,
        _ => 3,
    };
    for i in 0..n_src {
        let bit = if madmk && i == 1 { 2 } else { i };
        if (enable >> bit) & 1 != 0 && fl.src[i] >= 256 {
            fl.src[i] += index;
            if fl.src[i] > 511 {
                return Err(unsupported(&c.inst, pc));
            }
        }
    }
    let scalar_dst = c.aux & 0x8000 != 0 || matches!(c.op, O::VReadlaneB32 | O::VReadfirstlaneB32);
    if (enable >> 3) & 1 != 0 && !scalar_dst {
        fl.vdst += index as usize;
        if fl.vdst > 255 {
            return Err(unsupported(&c.inst, pc));
        }
        if matches!(c.enc, Encoding::Vop2) {
            fl.src[2] = 256 + fl.vdst as u32;
        }
    }
    execute_general(w, &cached, pc, target)
}

/// A signed 16-bit result, saturated with `clamp`, as its zero-extended bit pattern.
#[inline]
fn i16_result(v: i32, clamp: bool) -> u32 {
    let v = if clamp { v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) } else { v };
    v as i16 as u16 as u32
}

/// `v_bitop3`: bit `i` of the result is `table[S0[i] << 2 | S1[i] << 1 | S2[i]]`.
#[inline]
fn bitop3(table: u32, a: u32, b: u32, c: u32) -> u32 {
    let mut r = 0;
    for k in 0..8 {
        if (table >> k) & 1 != 0 {
            let x = if k & 4 != 0 { a } else { !a };
            let y = if k & 2 != 0 { b } else { !b };
            let z = if k & 1 != 0 { c } else { !c };
            r |= x & y & z;
        }
    }
    r
}

/// The result of a VALU operation, before output modifiers and the destination write.
enum R {
    /// 32 bits, written as they are (SDWA destination select applied).
    B32(L32),
    /// An f32: output modifiers, then as [`R::B32`].
    F32(L32),
    /// An f64: output modifiers, then a VGPR pair.
    F64(L64),
    /// 64 bits to a VGPR pair.
    B64(L64),
    /// A 16-bit integer in the low half, zero-extended (the gfx9 rule for VOP1/VOP2
    /// 16-bit results) or placed by the SDWA destination select.
    U16(L32),
    /// An f16 in the low half: output modifiers (with MODE's output flush), then as
    /// [`R::U16`].
    F16(L32),
    /// The 16-bit result of a VOP3 instruction with a destination `op_sel` bit: written to
    /// the half `op_sel[3]` names, keeping the other half; a low-half write of a legacy
    /// (gfx8) form zeroes the high half instead (`preserve` false). `float`: an f16 that
    /// takes output modifiers.
    Half { v: L32, float: bool, preserve: bool },
}

/// A 128-bit source as four registers: a VGPR quad, or an SGPR quad (each dword the same
/// in every lane); `None` for constants.
fn quad_source(w: &Wave, v: u32) -> Option<[L32; 4]> {
    if v >= 256 {
        let r = (v - 256) as usize;
        Some(std::array::from_fn(|k| w.vgpr[(r + k) & 255]))
    } else if v + 3 < 128 {
        Some(std::array::from_fn(|k| [w.sgpr[v as usize + k]; N]))
    } else {
        None
    }
}

/// Executes any VALU instruction (modifiers, DPP, SDWA, compares, VOP3P, 64-bit and
/// transcendental operations).
#[inline(never)]
fn execute_general(w: &mut Wave, c: &CachedInst, pc: u64, target: Target) -> Result<(), ExecFault> {
    use Opcode as O;
    let op = c.op;
    let enc = c.enc;
    if enc == Encoding::Vop3p {
        return super::vop3p::execute(w, c, pc, target);
    }
    let fl = c.fields;
    if fl.opsel_undefined {
        return Err(ExecFault::Illegal { pc, encoding: c.inst.encoding().name(), word: c.inst.words()[0] });
    }
    if let Extension::Dpp(word) = c.ext {
        if !dpp::legal(word, c.inst.entry().kind == crate::tables::Kind::DpAlu) {
            return Err(ExecFault::Illegal { pc, encoding: c.inst.encoding().name(), word: c.inst.words()[0] });
        }
    }
    let exec = w.exec();
    if c.aux & 0x8000 != 0 {
        return compare(w, c, &fl, exec);
    }
    let mut s = Srcs { w, f: fl, ext: c.ext, exec, write_mask: exec };
    let mode = s.w.mode;
    let vop3 = enc == Encoding::Vop3;
    let r = match op {
        O::VNop => return Ok(()),
        O::VMovB32E32 | O::VMovB32E64 => R::B32(s.get(0, false)),
        O::VMovB64E32 | O::VMovB64E64 => R::B64(s.u64(0)),
        O::VCndmaskB32E32 | O::VCndmaskB32E64 => {
            let a = s.f32(0);
            let b = s.f32(1);
            let sel = if vop3 { scalar_src64(s.w, fl.src[2], 0) } else { s.w.vcc() };
            let mut out = [0u32; N];
            for i in 0..N {
                out[i] = if (sel >> i) & 1 != 0 { b[i] } else { a[i] };
            }
            R::B32(out)
        }
        O::VAddU32E32 | O::VAddU32E64 => {
            let (a, b) = (s.get(0, false), s.get(1, false));
            R::B32(if fl.clamp { map2(&a, &b, |x, y| x.saturating_add(y)) } else { map2(&a, &b, u32::wrapping_add) })
        }
        O::VSubU32E32 | O::VSubU32E64 => {
            let (a, b) = (s.get(0, false), s.get(1, false));
            R::B32(if fl.clamp { map2(&a, &b, |x, y| x.saturating_sub(y)) } else { map2(&a, &b, u32::wrapping_sub) })
        }
        O::VSubrevU32E32 | O::VSubrevU32E64 => {
            let (a, b) = (s.get(0, false), s.get(1, false));
            R::B32(map2(&a, &b, |x, y| y.wrapping_sub(x)))
        }
        O::VAddCoU32E32 | O::VAddCoU32E64 | O::VSubCoU32E32 | O::VSubCoU32E64 | O::VSubrevCoU32E32 | O::VSubrevCoU32E64
        | O::VAddcCoU32E32 | O::VAddcCoU32E64 | O::VSubbCoU32E32 | O::VSubbCoU32E64 | O::VSubbrevCoU32E32
        | O::VSubbrevCoU32E64 => {
            let (a, b) = (s.get(0, false), s.get(1, false));
            let cin_mask = match op {
                O::VAddcCoU32E32 | O::VSubbCoU32E32 | O::VSubbrevCoU32E32 => s.w.vcc(),
                O::VAddcCoU32E64 | O::VSubbCoU32E64 | O::VSubbrevCoU32E64 => scalar_src64(s.w, fl.src[2], 0),
                _ => 0,
            };
            let mut out = [0u32; N];
            let mut carry = 0u64;
            for i in 0..N {
                let cin = (cin_mask >> i) & 1;
                let (x, y) = (a[i] as u64, b[i] as u64);
                let (r, c) = match op {
                    O::VAddCoU32E32 | O::VAddCoU32E64 | O::VAddcCoU32E32 | O::VAddcCoU32E64 => {
                        let t = x + y + cin;
                        (t as u32, t >> 32 != 0)
                    }
                    O::VSubCoU32E32 | O::VSubCoU32E64 | O::VSubbCoU32E32 | O::VSubbCoU32E64 => {
                        (x.wrapping_sub(y).wrapping_sub(cin) as u32, y + cin > x)
                    }
                    _ => (y.wrapping_sub(x).wrapping_sub(cin) as u32, x + cin > y),
                };
                out[i] = r;
                carry |= (c as u64) << i;
            }
            let mask = s.write_mask;
            let sdst = if vop3 { fl.sdst } else { VCC };
            let old = s.w.sgpr_pair(sdst);
            write(&mut w.vgpr[fl.vdst], &out, mask);
            w.set_sgpr_pair(sdst, (old & !exec) | (carry & exec));
            return Ok(());
        }
        O::VAndB32E32 | O::VAndB32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| x & y)),
        O::VOrB32E32 | O::VOrB32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| x | y)),
        O::VXorB32E32 | O::VXorB32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| x ^ y)),
        O::VNotB32E32 | O::VNotB32E64 => R::B32(map1(&s.get(0, false), |x| !x)),
        O::VXnorB32E32 | O::VXnorB32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| !(x ^ y))),
        O::VLshlrevB32E32 | O::VLshlrevB32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| y << (x & 31))),
        O::VLshrrevB32E32 | O::VLshrrevB32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| y >> (x & 31))),
        O::VAshrrevI32E32 | O::VAshrrevI32E64 => {
            R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| ((y as i32) >> (x & 31)) as u32))
        }
        O::VLshlrevB64 => {
            let (a, b) = (s.get(0, false), s.u64(1));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = b[i] << (a[i] & 63);
            }
            R::B64(out)
        }
        O::VLshrrevB64 => {
            let (a, b) = (s.get(0, false), s.u64(1));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = b[i] >> (a[i] & 63);
            }
            R::B64(out)
        }
        O::VAshrrevI64 => {
            let (a, b) = (s.get(0, false), s.u64(1));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = ((b[i] as i64) >> (a[i] & 63)) as u64;
            }
            R::B64(out)
        }
        O::VLshlAddU64 => {
            let (a, b, cc) = (s.u64(0), s.get(1, false), s.u64(2));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = (a[i] << (b[i] & 7)).wrapping_add(cc[i]);
            }
            R::B64(out)
        }
        O::VLshlAddU32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| (x << (y & 31)).wrapping_add(z))),
        O::VAddLshlU32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| x.wrapping_add(y) << (z & 31))),
        O::VLshlOrB32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| (x << (y & 31)) | z)),
        O::VAndOrB32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| (x & y) | z)),
        O::VOr3B32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| x | y | z)),
        O::VAdd3U32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| x.wrapping_add(y).wrapping_add(z))),
        O::VMulLoU32 => R::B32(map2(&s.get(0, false), &s.get(1, false), u32::wrapping_mul)),
        O::VMulHiU32 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| ((x as u64 * y as u64) >> 32) as u32)),
        O::VMulHiI32 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| ((x as i32 as i64 * y as i32 as i64) >> 32) as u32)),
        O::VMulU32U24E32 | O::VMulU32U24E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff))),
        O::VMulI32I24E32 | O::VMulI32I24E64 => {
            R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| (sext24(x).wrapping_mul(sext24(y))) as u32))
        }
        O::VMulHiU32U24E32 | O::VMulHiU32U24E64 => {
            R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| (((x & 0xff_ffff) as u64 * (y & 0xff_ffff) as u64) >> 32) as u32))
        }
        O::VMadU32U24 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| {
            (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff).wrapping_add(z)
        })),
        O::VMadI32I24 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| {
            sext24(x).wrapping_mul(sext24(y)).wrapping_add(z as i32) as u32
        })),
        O::VMadU64U32 | O::VMadI64I32 => {
            let (a, b, cc) = (s.get(0, false), s.get(1, false), s.u64(2));
            let signed = op == O::VMadI64I32;
            let mut out = [0u64; N];
            let mut carry = 0u64;
            for i in 0..N {
                let (r, o) = if signed {
                    let p = a[i] as i32 as i128 * b[i] as i32 as i128 + cc[i] as i64 as i128;
                    (p as u64, p > i64::MAX as i128 || p < i64::MIN as i128)
                } else {
                    let p = a[i] as u128 * b[i] as u128 + cc[i] as u128;
                    (p as u64, p >> 64 != 0)
                };
                out[i] = r;
                carry |= (o as u64) << i;
            }
            let mask = s.write_mask;
            write64(&mut w.vgpr, fl.vdst, &out, mask);
            let old = w.sgpr_pair(fl.sdst);
            w.set_sgpr_pair(fl.sdst, (old & !exec) | (carry & exec));
            return Ok(());
        }
        O::VBfeU32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, o, wd| {
            let (o, wd) = (o & 31, wd & 31);
            if wd == 0 {
                0
            } else {
                (x >> o) & ((1u32 << wd) - 1)
            }
        })),
        O::VBfeI32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, o, wd| {
            let (o, wd) = (o & 31, wd & 31);
            if wd == 0 {
                0
            } else {
                ((((x >> o) << (32 - wd)) as i32) >> (32 - wd)) as u32
            }
        })),
        O::VBitop3B32 => {
            // gfx950: each result bit is the truth table (neg bits 2:0, abs bits 5:3,
            // omod bits 7:6) indexed by {S0, S1, S2} bits.
            let table = u32::from(fl.neg & 7) | u32::from(fl.abs & 7) << 3 | (fl.omod & 3) << 6;
            R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |a, b, c| bitop3(table, a, b, c)))
        }
        O::VBfiB32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |m, x, y| (m & x) | (!m & y))),
        O::VBfmB32 => {
            R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| ((1u32 << (x & 31)).wrapping_sub(1)) << (y & 31)))
        }
        O::VAlignbitB32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| {
            ((((x as u64) << 32) | y as u64) >> (z & 31)) as u32
        })),
        O::VAlignbyteB32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| {
            ((((x as u64) << 32) | y as u64) >> (8 * (z & 3))) as u32
        })),
        O::VBcntU32B32 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| x.count_ones().wrapping_add(y))),
        O::VBfrevB32E32 | O::VBfrevB32E64 => R::B32(map1(&s.get(0, false), u32::reverse_bits)),
        O::VFfbhU32E32 | O::VFfbhU32E64 => R::B32(map1(&s.get(0, false), |x| if x == 0 { u32::MAX } else { x.leading_zeros() })),
        O::VFfblB32E32 | O::VFfblB32E64 => R::B32(map1(&s.get(0, false), |x| if x == 0 { u32::MAX } else { x.trailing_zeros() })),
        O::VMinU32E32 | O::VMinU32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), u32::min)),
        O::VMaxU32E32 | O::VMaxU32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), u32::max)),
        O::VMinI32E32 | O::VMinI32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| (x as i32).min(y as i32) as u32)),
        O::VMaxI32E32 | O::VMaxI32E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| (x as i32).max(y as i32) as u32)),
        O::VMin3U32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| x.min(y).min(z))),
        O::VMax3U32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| x.max(y).max(z))),
        O::VMed3U32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| x.max(y).min(x.min(y).max(z)))),
        O::VMin3I32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| (x as i32).min(y as i32).min(z as i32) as u32)),
        O::VMax3I32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| (x as i32).max(y as i32).max(z as i32) as u32)),
        O::VMed3I32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| {
            let (x, y, z) = (x as i32, y as i32, z as i32);
            x.max(y).min(x.min(y).max(z)) as u32
        })),
        O::VPermB32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), crate::numeric::int::perm_b32)),
        O::VMbcntLoU32B32 => {
            let (a, b) = (s.get(0, false), s.get(1, false));
            let mut out = [0u32; N];
            for i in 0..N {
                let below = if i >= 32 { a[i] } else { a[i] & ((1u32 << i) - 1) };
                out[i] = below.count_ones().wrapping_add(b[i]);
            }
            R::B32(out)
        }
        O::VMbcntHiU32B32 => {
            let (a, b) = (s.get(0, false), s.get(1, false));
            let mut out = [0u32; N];
            for i in 0..N {
                let below = if i < 32 { 0 } else { a[i] & ((1u64 << (i - 32)) - 1) as u32 };
                out[i] = below.count_ones().wrapping_add(b[i]);
            }
            R::B32(out)
        }
        O::VReadfirstlaneB32 => {
            let v = s.get(0, false);
            let lane = if exec == 0 { 0 } else { exec.trailing_zeros() as usize };
            w.set_sgpr(fl.vdst, v[lane]);
            return Ok(());
        }
        O::VReadlaneB32 => {
            let v = s.get(0, false);
            let lane = (scalar_src(s.w, fl.src[1], fl.literal, false) & 63) as usize;
            w.set_sgpr(fl.vdst, v[lane]);
            return Ok(());
        }
        O::VWritelaneB32 => {
            let v = scalar_src(s.w, fl.src[0], fl.literal, false);
            let lane = (scalar_src(s.w, fl.src[1], fl.literal, false) & 63) as usize;
            w.vgpr[fl.vdst][lane] = v;
            return Ok(());
        }
        O::VAccvgprReadB32 => {
            let v = w.agpr[(fl.src[0] & 0xff) as usize];
            write(&mut w.vgpr[fl.vdst], &v, exec);
            return Ok(());
        }
        O::VAccvgprWriteB32 => {
            let v = s.get(0, false);
            write(&mut w.agpr[fl.vdst], &v, exec);
            return Ok(());
        }
        O::VAccvgprMovB32 => {
            let v = w.agpr[(fl.src[0] & 0xff) as usize];
            write(&mut w.agpr[fl.vdst], &v, exec);
            return Ok(());
        }
        // f32 arithmetic.
        O::VAddF32E32 | O::VAddF32E64 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| f32_mode(mode, |a, b| valu::add_f32(a, b, mode.round_f32), x, y))),
        O::VSubF32E32 | O::VSubF32E64 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| f32_mode(mode, |a, b| valu::sub_f32(a, b, mode.round_f32), x, y))),
        O::VSubrevF32E32 | O::VSubrevF32E64 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| f32_mode(mode, |a, b| valu::sub_f32(b, a, mode.round_f32), x, y))),
        O::VMulF32E32 | O::VMulF32E64 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| f32_mode(mode, |a, b| valu::mul_f32(a, b, mode.round_f32), x, y))),
        O::VMinF32E32 | O::VMinF32E64 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| fbits(min_f32(f(x), f(y), mode.ieee)))),
        O::VMaxF32E32 | O::VMaxF32E64 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| fbits(max_f32(f(x), f(y), mode.ieee)))),
        O::VFmaF32 => R::F32(map3(&s.f32(0), &s.f32(1), &s.f32(2), |x, y, z| fma_mode(mode, x, y, z))),
        O::VFmacF32E32 | O::VFmacF32E64 => {
            let acc = w.vgpr[fl.vdst];
            R::F32(map3(&s.f32(0), &s.f32(1), &acc, |x, y, z| fma_mode(mode, x, y, z)))
        }
        O::VFmaakF32 => {
            let k = fl.literal;
            R::F32(map2(&s.f32(0), &s.f32(1), |x, y| fma_mode(mode, x, y, k)))
        }
        O::VFmamkF32 => {
            let k = fl.literal;
            R::F32(map2(&s.f32(0), &s.f32(1), |x, y| fma_mode(mode, x, k, y)))
        }
        O::VCvtF32U32E32 | O::VCvtF32U32E64 => R::F32(map1(&s.get(0, false), |x| fbits(x as f32))),
        O::VCvtF32I32E32 | O::VCvtF32I32E64 => R::F32(map1(&s.get(0, false), |x| fbits(x as i32 as f32))),
        O::VCvtU32F32E32 | O::VCvtU32F32E64 => R::B32(map1(&s.f32(0), |x| crate::numeric::valu::cvt_u32_f32(f(x)))),
        O::VCvtI32F32E32 | O::VCvtI32F32E64 => R::B32(map1(&s.f32(0), |x| crate::numeric::valu::cvt_i32_f32(f(x)) as u32)),
        // v_rcp_iflag_f32 differs only in the exception flag it raises (integer divide
        // by zero), which the model does not record.
        O::VRcpF32E32 | O::VRcpF32E64 | O::VRcpIflagF32E32 | O::VRcpIflagF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::rcp_f32(f(x))))),
        O::VRsqF32E32 | O::VRsqF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::rsq_f32(f(x))))),
        O::VSqrtF32E32 | O::VSqrtF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::sqrt_f32(f(x))))),
        O::VExpF32E32 | O::VExpF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::exp_f32(f(x))))),
        O::VLogF32E32 | O::VLogF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::log_f32(f(x))))),
        O::VFloorF32E32 | O::VFloorF32E64 => R::F32(map1(&s.f32(0), |x| fbits(f(x).floor()))),
        O::VCeilF32E32 | O::VCeilF32E64 => R::F32(map1(&s.f32(0), |x| fbits(f(x).ceil()))),
        O::VTruncF32E32 | O::VTruncF32E64 => R::F32(map1(&s.f32(0), |x| fbits(f(x).trunc()))),
        O::VRndneF32E32 | O::VRndneF32E64 => R::F32(map1(&s.f32(0), |x| fbits(f(x).round_ties_even()))),
        O::VFractF32E32 | O::VFractF32E64 => R::F32(map1(&s.f32(0), |x| fbits(crate::numeric::valu::fract_f32(f(x))))),
        // f64 arithmetic.
        O::VAddF64 => R::F64(map64_2(&s.f64(0), &s.f64(1), |x, y| (d(x) + d(y)).to_bits())),
        O::VMulF64 => R::F64(map64_2(&s.f64(0), &s.f64(1), |x, y| (d(x) * d(y)).to_bits())),
        O::VFmaF64 => R::F64(map64_3(&s.f64(0), &s.f64(1), &s.f64(2), |x, y, z| d(x).mul_add(d(y), d(z)).to_bits())),
        O::VFmacF64E32 | O::VFmacF64E64 => {
            let acc = fetch64(s.w, 256 + fl.vdst as u32, 0, true);
            R::F64(map64_3(&s.f64(0), &s.f64(1), &acc, |x, y, z| d(x).mul_add(d(y), d(z)).to_bits()))
        }
        O::VMinF64 => R::F64(map64_2(&s.f64(0), &s.f64(1), |x, y| min_f64(d(x), d(y), mode.ieee).to_bits())),
        O::VMaxF64 => R::F64(map64_2(&s.f64(0), &s.f64(1), |x, y| max_f64(d(x), d(y), mode.ieee).to_bits())),
        O::VCvtF64F32E32 | O::VCvtF64F32E64 => {
            let a = s.f32(0);
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = (f(a[i]) as f64).to_bits();
            }
            R::F64(out)
        }
        O::VCvtF32F64E32 | O::VCvtF32F64E64 => {
            let a = s.f64(0);
            let mut out = [0u32; N];
            for i in 0..N {
                out[i] = (d(a[i]) as f32).to_bits();
            }
            R::F32(out)
        }
        O::VCvtF64I32E32 | O::VCvtF64I32E64 | O::VCvtF64U32E32 | O::VCvtF64U32E64 => {
            let a = s.get(0, false);
            let signed = matches!(op, O::VCvtF64I32E32 | O::VCvtF64I32E64);
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = if signed { (a[i] as i32 as f64).to_bits() } else { (a[i] as f64).to_bits() };
            }
            R::F64(out)
        }
        O::VCvtI32F64E32 | O::VCvtI32F64E64 => {
            let a = s.f64(0);
            let mut out = [0u32; N];
            for i in 0..N {
                out[i] = crate::numeric::valu::cvt_i32_f64(d(a[i])) as u32;
            }
            R::B32(out)
        }
        O::VCvtU32F64E32 | O::VCvtU32F64E64 => {
            let a = s.f64(0);
            let mut out = [0u32; N];
            for i in 0..N {
                out[i] = crate::numeric::valu::cvt_u32_f64(d(a[i]));
            }
            R::B32(out)
        }
        O::VDot2cF32F16E32 | O::VDot2cF32F16E64 | O::VDot2cF32Bf16E32 | O::VDot2cF32Bf16E64 => {
            let acc = w.vgpr[fl.vdst];
            let bf = matches!(op, O::VDot2cF32Bf16E32 | O::VDot2cF32Bf16E64);
            let rm = mode.round_f32;
            R::F32(map3(&s.get(0, false), &s.get(1, false), &acc, |x, y, z| {
                if bf {
                    fbits(dot::dot2c_f32_bf16(x, y, f(z), rm))
                } else {
                    fbits(dot::dot2_f32_f16(x, y, f(z), rm))
                }
            }))
        }
        O::VDot4cI32I8E32 | O::VDot4cI32I8E64 => {
            let acc = w.vgpr[fl.vdst];
            R::B32(map3(&s.get(0, false), &s.get(1, false), &acc, |x, y, z| dot4_i8(x, y, z, true)))
        }
        O::VDot2cI32I16E32 | O::VDot2cI32I16E64 => {
            let acc = w.vgpr[fl.vdst];
            R::B32(map3(&s.get(0, false), &s.get(1, false), &acc, |x, y, z| dot2_i16(x, y, z, true)))
        }
        // Division helpers (the compiler's f32/f64 division sequence).
        O::VDivScaleF32 => {
            let (a, b, cc) = (s.f32(0), s.f32(1), s.f32(2));
            let mut out = [0u32; N];
            let mut flags = 0u64;
            for i in 0..N {
                let (r, flag) = valu::div_scale_f32(f(a[i]), f(b[i]), f(cc[i]));
                out[i] = fbits(r);
                flags |= (flag as u64) << i;
            }
            let mask = s.write_mask;
            write(&mut w.vgpr[fl.vdst], &out, mask);
            let old = w.sgpr_pair(fl.sdst);
            w.set_sgpr_pair(fl.sdst, (old & !exec) | (flags & exec));
            return Ok(());
        }
        O::VDivScaleF64 => {
            let (a, b, cc) = (s.f64(0), s.f64(1), s.f64(2));
            let mut out = [0u64; N];
            let mut flags = 0u64;
            for i in 0..N {
                let (r, flag) = valu::div_scale_f64(d(a[i]), d(b[i]), d(cc[i]));
                out[i] = r.to_bits();
                flags |= (flag as u64) << i;
            }
            let mask = s.write_mask;
            write64(&mut w.vgpr, fl.vdst, &out, mask);
            let old = w.sgpr_pair(fl.sdst);
            w.set_sgpr_pair(fl.sdst, (old & !exec) | (flags & exec));
            return Ok(());
        }
        O::VDivFmasF32 => {
            let vcc = s.w.vcc();
            let (a, b, cc) = (s.f32(0), s.f32(1), s.f32(2));
            let mut out = [0u32; N];
            for i in 0..N {
                out[i] = fbits(valu::div_fmas_f32(f(a[i]), f(b[i]), f(cc[i]), (vcc >> i) & 1 != 0, mode.round_f32));
            }
            R::F32(out)
        }
        O::VDivFmasF64 => {
            let vcc = s.w.vcc();
            let (a, b, cc) = (s.f64(0), s.f64(1), s.f64(2));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = valu::div_fmas_f64(d(a[i]), d(b[i]), d(cc[i]), (vcc >> i) & 1 != 0).to_bits();
            }
            R::F64(out)
        }
        O::VDivFixupF32 => R::F32(map3(&s.f32(0), &s.f32(1), &s.f32(2), |x, y, z| fbits(valu::div_fixup_f32(f(x), f(y), f(z))))),
        O::VDivFixupF64 => R::F64(map64_3(&s.f64(0), &s.f64(1), &s.f64(2), |x, y, z| valu::div_fixup_f64(d(x), d(y), d(z)).to_bits())),
        O::VLdexpF32 => R::F32(map2(&s.f32(0), &s.get(1, false), |x, n| fbits(valu::ldexp_f32(f(x), n as i32)))),
        O::VLdexpF64 => {
            let (a, n) = (s.f64(0), s.get(1, false));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = valu::ldexp_f64(d(a[i]), n[i] as i32).to_bits();
            }
            R::F64(out)
        }
        O::VFrexpMantF32E32 | O::VFrexpMantF32E64 => R::F32(map1(&s.f32(0), |x| fbits(valu::frexp_mant_f32(f(x))))),
        O::VFrexpExpI32F32E32 | O::VFrexpExpI32F32E64 => R::B32(map1(&s.f32(0), |x| valu::frexp_exp_f32(f(x)) as u32)),
        O::VFrexpMantF64E32 | O::VFrexpMantF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| valu::frexp_mant_f64(d(a[i])).to_bits()))
        }
        O::VFrexpExpI32F64E32 | O::VFrexpExpI32F64E64 => {
            let a = s.f64(0);
            R::B32(std::array::from_fn(|i| valu::frexp_exp_f64(d(a[i])) as u32))
        }
        O::VRcpF64E32 | O::VRcpF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| transcendental::rcp_f64(d(a[i])).to_bits()))
        }
        O::VRsqF64E32 | O::VRsqF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| transcendental::rsq_f64(d(a[i])).to_bits()))
        }
        O::VSqrtF64E32 | O::VSqrtF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| transcendental::sqrt_f64(d(a[i])).to_bits()))
        }
        O::VFloorF64E32 | O::VFloorF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| d(a[i]).floor().to_bits()))
        }
        O::VTruncF64E32 | O::VTruncF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| d(a[i]).trunc().to_bits()))
        }
        O::VCeilF64E32 | O::VCeilF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| d(a[i]).ceil().to_bits()))
        }
        O::VRndneF64E32 | O::VRndneF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| d(a[i]).round_ties_even().to_bits()))
        }
        O::VFractF64E32 | O::VFractF64E64 => {
            let a = s.f64(0);
            R::F64(std::array::from_fn(|i| crate::numeric::valu::fract_f64(d(a[i])).to_bits()))
        }
        O::VCvtF32Ubyte0E32 | O::VCvtF32Ubyte0E64 => R::F32(map1(&s.get(0, false), |x| fbits((x & 0xff) as f32))),
        // 16-bit integer arithmetic: low halves in, the result zero-extended into the
        // destination (GFX9 clears the high half), SDWA destination selects applied.
        O::VAddU16E32 | O::VAddU16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| if fl.clamp { (x + y).min(0xffff) } else { (x + y) & 0xffff }))
        }
        O::VSubU16E32 | O::VSubU16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| if fl.clamp { x.saturating_sub(y) } else { x.wrapping_sub(y) & 0xffff }))
        }
        O::VSubrevU16E32 | O::VSubrevU16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| if fl.clamp { y.saturating_sub(x) } else { y.wrapping_sub(x) & 0xffff }))
        }
        O::VAddI16 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::Half { v: map2(&a, &b, |x, y| i16_result(i32::from(x as u16 as i16) + i32::from(y as u16 as i16), fl.clamp)), float: false, preserve: true }
        }
        O::VSubI16 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::Half { v: map2(&a, &b, |x, y| i16_result(i32::from(x as u16 as i16) - i32::from(y as u16 as i16), fl.clamp)), float: false, preserve: true }
        }
        O::VMulLoU16E32 | O::VMulLoU16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| x.wrapping_mul(y) & 0xffff))
        }
        O::VLshlrevB16E32 | O::VLshlrevB16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| (y << (x & 15)) & 0xffff))
        }
        O::VLshrrevB16E32 | O::VLshrrevB16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| y >> (x & 15)))
        }
        O::VAshrrevI16E32 | O::VAshrrevI16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| ((y as u16 as i16) >> (x & 15)) as u16 as u32))
        }
        O::VMaxU16E32 | O::VMaxU16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, u32::max))
        }
        O::VMinU16E32 | O::VMinU16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, u32::min))
        }
        O::VMaxI16E32 | O::VMaxI16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| (x as u16 as i16).max(y as u16 as i16) as u16 as u32))
        }
        O::VMinI16E32 | O::VMinI16E64 => {
            let (a, b) = (s.u16s(0), s.u16s(1));
            R::U16(map2(&a, &b, |x, y| (x as u16 as i16).min(y as u16 as i16) as u16 as u32))
        }
        // The gfx9 `op_sel` forms keep the other half of the destination; the legacy
        // (gfx8) forms zero it (CDNA3 ISA, V_MAD_LEGACY_U16 and V_MAD_U16 notes).
        O::VMadU16 | O::VMadLegacyU16 => {
            let (a, b, cc) = (s.u16s(0), s.u16s(1), s.u16s(2));
            let v = map3(&a, &b, &cc, |x, y, z| {
                let v = x * y + z;
                if fl.clamp { v.min(0xffff) } else { v & 0xffff }
            });
            R::Half { v, float: false, preserve: op == O::VMadU16 }
        }
        O::VMadI16 | O::VMadLegacyI16 => {
            let (a, b, cc) = (s.u16s(0), s.u16s(1), s.u16s(2));
            let v = map3(&a, &b, &cc, |x, y, z| {
                let (x, y, z) = (i32::from(x as u16 as i16), i32::from(y as u16 as i16), i32::from(z as u16 as i16));
                i16_result(x * y + z, fl.clamp)
            });
            R::Half { v, float: false, preserve: op == O::VMadI16 }
        }
        O::VMadU32U16 => {
            let (a, b, cc) = (s.u16s(0), s.u16s(1), s.get(2, false));
            R::B32(map3(&a, &b, &cc, |x, y, z| (x * y).wrapping_add(z)))
        }
        O::VMadI32I16 => {
            let (a, b, cc) = (s.u16s(0), s.u16s(1), s.get(2, false));
            R::B32(map3(&a, &b, &cc, |x, y, z| (i32::from(x as u16 as i16) * i32::from(y as u16 as i16)).wrapping_add(z as i32) as u32))
        }
        O::VMax3U16 | O::VMin3U16 | O::VMed3U16 | O::VMax3I16 | O::VMin3I16 | O::VMed3I16 => {
            let (a, b, cc) = (s.u16s(0), s.u16s(1), s.u16s(2));
            let signed = matches!(op, O::VMax3I16 | O::VMin3I16 | O::VMed3I16);
            let v = map3(&a, &b, &cc, |x, y, z| {
                let key = |v: u32| if signed { i32::from(v as u16 as i16) } else { v as i32 };
                let mut v = [x, y, z];
                v.sort_by_key(|&e| key(e));
                match op {
                    O::VMax3U16 | O::VMax3I16 => v[2],
                    O::VMin3U16 | O::VMin3I16 => v[0],
                    _ => v[1],
                }
            });
            R::Half { v, float: false, preserve: true }
        }
        // f16.
        O::VAddF16E32 | O::VAddF16E64 => {
            let (a, b) = (s.h16(0), s.h16(1));
            R::F16(map2(&a, &b, |x, y| valu::add_f16(x as u16, y as u16, mode.round_f16_f64, mode.fp16_ovfl) as u32))
        }
        O::VSubF16E32 | O::VSubF16E64 => {
            let (a, b) = (s.h16(0), s.h16(1));
            R::F16(map2(&a, &b, |x, y| valu::add_f16(x as u16, y as u16 ^ 0x8000, mode.round_f16_f64, mode.fp16_ovfl) as u32))
        }
        O::VMulF16E32 | O::VMulF16E64 => {
            let (a, b) = (s.h16(0), s.h16(1));
            R::F16(map2(&a, &b, |x, y| valu::mul_f16(x as u16, y as u16, mode.round_f16_f64, mode.fp16_ovfl) as u32))
        }
        O::VFmaF16 | O::VFmaLegacyF16 => {
            let (a, b, cc) = (s.h16(0), s.h16(1), s.h16(2));
            let v = map3(&a, &b, &cc, |x, y, z| valu::fma_f16(x as u16, y as u16, z as u16, mode.round_f16_f64, mode.fp16_ovfl) as u32);
            R::Half { v, float: true, preserve: op == O::VFmaF16 }
        }
        O::VMaxF16E32 | O::VMaxF16E64 => {
            let (a, b) = (s.f16(0), s.f16(1));
            R::F16(map2(&a, &b, |x, y| valu::max_f16(x as u16, y as u16, mode.ieee) as u32))
        }
        O::VMinF16E32 | O::VMinF16E64 => {
            let (a, b) = (s.f16(0), s.f16(1));
            R::F16(map2(&a, &b, |x, y| valu::min_f16(x as u16, y as u16, mode.ieee) as u32))
        }
        O::VCvtPkrtzF16F32 => R::B32(map2(&s.f32(0), &s.f32(1), |x, y| valu::cvt_pkrtz_f16_f32(f(x), f(y)))),
        O::VCvtF32F16E32 | O::VCvtF32F16E64 => {
            let a = s.f16(0);
            R::F32(map1(&a, |h| fbits(crate::numeric::convert::f16_to_f32(h as u16))))
        }
        O::VCvtF16F32E32 | O::VCvtF16F32E64 => {
            let a = s.f32(0);
            let rm = mode.round_f16_f64;
            R::F16(map1(&a, |x| crate::numeric::convert::f32_to_f16(f(x), rm) as u32))
        }
        // fp8 conversions (gfx940 family).
        O::VCvtF32Fp8E32 | O::VCvtF32Fp8E64 | O::VCvtF32Bf8E32 | O::VCvtF32Bf8E64 => {
            let ocp = target == Target::Gfx950;
            let fmt = Fp8Format::new(!matches!(op, O::VCvtF32Fp8E32 | O::VCvtF32Fp8E64), ocp);
            let mut a = s.get(0, false);
            if vop3 {
                let sel = (fl.opsel & 3) as u32;
                a = map1(&a, |x| x >> (8 * sel));
            }
            let table = fmt.table();
            R::F32(map1(&a, |x| table[(x & 0xff) as usize]))
        }
        O::VCvtPkFp8F32 | O::VCvtPkBf8F32 => {
            let ocp = target == Target::Gfx950;
            let fmt = Fp8Format::new(op != O::VCvtPkFp8F32, ocp);
            let (a, b) = (s.f32(0), s.f32(1));
            let hi = (fl.opsel >> 3) & 1 != 0;
            let sat = fl.clamp || mode.fp16_ovfl;
            let old = w.vgpr[fl.vdst];
            let mut out = [0u32; N];
            for i in 0..N {
                let word = fp8::cvt_pk_to_fp8(fmt, f(a[i]), f(b[i]), sat);
                out[i] = fp8::insert_word(old[i], word, hi);
            }
            R::B32(out)
        }
        // ---- f32 legacy, three-operand and cube-map operations ----
        O::VMadF32 | O::VMacF32E32 | O::VMacF32E64 | O::VMadakF32 | O::VMadmkF32 => {
            // gfx90a's MAD: unfused, denormals flushed (the ISA: "1ULP accuracy, denormals
            // are flushed"), two roundings per FP_ROUND.
            let (a, b) = (s.f32(0), s.f32(1));
            let acc = match op {
                O::VMadF32 => s.f32(2),
                O::VMacF32E32 | O::VMacF32E64 => s.w.vgpr[fl.vdst],
                O::VMadakF32 => [fl.literal; N],
                _ => b,
            };
            let (a, b) = if op == O::VMadmkF32 { (a, [fl.literal; N]) } else { (a, b) };
            R::F32(map3(&a, &b, &acc, |x, y, z| fbits(valu::mad_f32_legacy(f(x), f(y), f(z), mode.round_f32))))
        }
        O::VMadLegacyF32 => R::F32(map3(&s.f32(0), &s.f32(1), &s.f32(2), |x, y, z| fbits(valu::mad_legacy_f32(f(x), f(y), f(z), mode.round_f32)))),
        O::VMulLegacyF32 => R::F32(map2(&s.f32(0), &s.f32(1), |x, y| f32_mode(mode, |a, b| valu::mul_legacy_f32(a, b, mode.round_f32), x, y))),
        O::VMin3F32 | O::VMax3F32 | O::VMed3F32 => {
            let (a, b, cc) = (s.f32(0), s.f32(1), s.f32(2));
            let ieee = mode.ieee;
            R::F32(map3(&a, &b, &cc, |x, y, z| {
                let (x, y, z) = (f(x), f(y), f(z));
                fbits(match op {
                    O::VMin3F32 => valu::min3_f32(x, y, z, ieee),
                    O::VMax3F32 => valu::max3_f32(x, y, z, ieee),
                    _ => valu::med3_f32(x, y, z, ieee),
                })
            }))
        }
        O::VMinimum3F32 | O::VMaximum3F32 => {
            let (a, b, cc) = (s.f32(0), s.f32(1), s.f32(2));
            let min = op == O::VMinimum3F32;
            R::F32(map3(&a, &b, &cc, |x, y, z| {
                let (x, y, z) = (f(x), f(y), f(z));
                fbits(if min { valu::minimum3_f32(x, y, z) } else { valu::maximum3_f32(x, y, z) })
            }))
        }
        O::VCubeidF32 | O::VCubescF32 | O::VCubetcF32 | O::VCubemaF32 => {
            let (a, b, cc) = (s.f32(0), s.f32(1), s.f32(2));
            R::F32(map3(&a, &b, &cc, |x, y, z| {
                let (x, y, z) = (mode.flush_in_f32(f(x)), mode.flush_in_f32(f(y)), mode.flush_in_f32(f(z)));
                fbits(mode.flush_out_f32(match op {
                    O::VCubeidF32 => valu::cube_id(x, y, z),
                    O::VCubescF32 => valu::cube_sc(x, y, z),
                    O::VCubetcF32 => valu::cube_tc(x, y, z),
                    _ => valu::cube_ma(x, y, z, mode.round_f32),
                }))
            }))
        }
        O::VSinF32E32 | O::VSinF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::TransOp::Sin.eval_f32_mode(f(x), mode)))),
        O::VCosF32E32 | O::VCosF32E64 => R::F32(map1(&s.f32(0), |x| fbits(transcendental::TransOp::Cos.eval_f32_mode(f(x), mode)))),
        O::VExpLegacyF32E32 | O::VExpLegacyF32E64 => {
            R::F32(map1(&s.f32(0), |x| fbits(mode.flush_out_f32(transcendental::exp_legacy_f32(mode.flush_in_f32(f(x)))))))
        }
        O::VLogLegacyF32E32 | O::VLogLegacyF32E64 => {
            let a = s.f32(0);
            let active = s.write_mask;
            let mut out = [0u32; N];
            for i in 0..N {
                match transcendental::log_legacy_f32(mode.flush_in_f32(f(a[i]))) {
                    Some(r) => out[i] = fbits(mode.flush_out_f32(r)),
                    None if (active >> i) & 1 != 0 => return Err(unsupported(&c.inst, pc)),
                    None => {}
                }
            }
            R::F32(out)
        }
        // ---- conversions to and from f32 ----
        O::VCvtRpiI32F32E32 | O::VCvtRpiI32F32E64 => R::B32(map1(&s.f32(0), |x| valu::cvt_rpi_i32_f32(mode.flush_in_f32(f(x))) as u32)),
        O::VCvtFlrI32F32E32 | O::VCvtFlrI32F32E64 => R::B32(map1(&s.f32(0), |x| valu::cvt_flr_i32_f32(mode.flush_in_f32(f(x))) as u32)),
        O::VCvtOffF32I4E32 | O::VCvtOffF32I4E64 => R::F32(map1(&s.get(0, false), |x| fbits(valu::cvt_off_f32_i4(x)))),
        O::VCvtF32Ubyte1E32 | O::VCvtF32Ubyte1E64 => R::F32(map1(&s.get(0, false), |x| fbits(valu::cvt_f32_ubyte(x, 1)))),
        O::VCvtF32Ubyte2E32 | O::VCvtF32Ubyte2E64 => R::F32(map1(&s.get(0, false), |x| fbits(valu::cvt_f32_ubyte(x, 2)))),
        O::VCvtF32Ubyte3E32 | O::VCvtF32Ubyte3E64 => R::F32(map1(&s.get(0, false), |x| fbits(valu::cvt_f32_ubyte(x, 3)))),
        O::VCvtF32Bf16E32 | O::VCvtF32Bf16E64 => {
            // The bf16 in the low half is the high half of the f32; abs/neg act on its sign.
            let a = s.f16(0);
            // A bit move (the guide: D = {S0.bf16, 16'h0}): denormals pass whatever MODE says.
            R::F32(map1(&a, |h| h << 16))
        }
        O::VCvtPkU8F32 => {
            let (a, b, cc) = (s.f32(0), s.get(1, false), s.get(2, false));
            R::B32(map3(&a, &b, &cc, |x, y, z| valu::cvt_pk_u8_f32(mode.flush_in_f32(f(x)), y, z)))
        }
        O::VCvtPkaccumU8F32 => {
            let (a, b) = (s.f32(0), s.get(1, false));
            let acc = s.w.vgpr[fl.vdst];
            R::B32(map3(&a, &b, &acc, |x, y, z| valu::cvt_pk_u8_f32(mode.flush_in_f32(f(x)), y, z)))
        }
        O::VCvtPknormI16F32 | O::VCvtPknormU16F32 => {
            let (a, b) = (s.f32(0), s.f32(1));
            let signed = op == O::VCvtPknormI16F32;
            R::B32(map2(&a, &b, |x, y| {
                let (x, y) = (mode.flush_in_f32(f(x)), mode.flush_in_f32(f(y)));
                if signed { valu::cvt_pknorm_i16_f32(x, y) } else { valu::cvt_pknorm_u16_f32(x, y) }
            }))
        }
        O::VCvtPknormI16F16 | O::VCvtPknormU16F16 => {
            let (a, b) = (s.h16(0), s.h16(1));
            let signed = op == O::VCvtPknormI16F16;
            R::B32(map2(&a, &b, |x, y| {
                let (x, y) = (x as u16, y as u16);
                if signed {
                    (valu::cvt_norm_i16_f16(x) as u16 as u32) | ((valu::cvt_norm_i16_f16(y) as u16 as u32) << 16)
                } else {
                    valu::cvt_norm_u16_f16(x) as u32 | ((valu::cvt_norm_u16_f16(y) as u32) << 16)
                }
            }))
        }
        O::VCvtPkU16U32 => R::B32(map2(&s.get(0, false), &s.get(1, false), int::cvt_pk_u16_u32)),
        O::VCvtPkI16I32 => R::B32(map2(&s.get(0, false), &s.get(1, false), int::cvt_pk_i16_i32)),
        O::VCvtPkF32Fp8E32 | O::VCvtPkF32Fp8E64 | O::VCvtPkF32Bf8E32 | O::VCvtPkF32Bf8E64 => {
            let ocp = target == Target::Gfx950;
            let fp8 = matches!(op, O::VCvtPkF32Fp8E32 | O::VCvtPkF32Fp8E64);
            let fmt = if fp8 { Fp8Format::fp8(ocp) } else { Fp8Format::bf8(ocp) };
            // The word is chosen by SDWA_SRC0_SEL[1:0] == WORD_1 (the ISA pseudocode); the
            // SDWA select does not otherwise shape the operand, and other encodings convert
            // the low word.
            let raw = fetch(s.w, fl.src[0], fl.literal, false);
            let hi = matches!(c.ext, Extension::Sdwa(ctrl) if (ctrl >> 16) & 3 == 1);
            let a = match c.ext {
                Extension::Dpp(_) => s.get(0, false),
                _ => raw,
            };
            let mut out = [0u64; N];
            for i in 0..N {
                let [lo, hi] = fp8::v_cvt_pk_f32_f8(fmt, a[i], hi);
                let (lo, hi) = (output_f32(lo, OutputModifier::from_bits(fl.omod), fl.clamp, mode), output_f32(hi, OutputModifier::from_bits(fl.omod), fl.clamp, mode));
                out[i] = fbits(lo) as u64 | ((fbits(hi) as u64) << 32);
            }
            let mask = s.write_mask;
            write64(&mut w.vgpr, fl.vdst, &out, mask);
            return Ok(());
        }
        // ---- f16 ----
        O::VSubrevF16E32 | O::VSubrevF16E64 => {
            let (a, b) = (s.h16(0), s.h16(1));
            R::F16(map2(&a, &b, |x, y| valu::add_f16(y as u16, x as u16 ^ 0x8000, mode.round_f16_f64, mode.fp16_ovfl) as u32))
        }
        O::VRcpF16E32 | O::VRcpF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::rcp_f16(x as u16) as u32)),
        O::VRsqF16E32 | O::VRsqF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::rsq_f16(x as u16) as u32)),
        O::VSqrtF16E32 | O::VSqrtF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::sqrt_f16(x as u16) as u32)),
        O::VExpF16E32 | O::VExpF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::exp_f16(x as u16) as u32)),
        O::VLogF16E32 | O::VLogF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::log_f16(x as u16) as u32)),
        O::VSinF16E32 | O::VSinF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::sin_f16(x as u16) as u32)),
        O::VCosF16E32 | O::VCosF16E64 => R::F16(map1(&s.h16(0), |x| transcendental::cos_f16(x as u16) as u32)),
        O::VFloorF16E32 | O::VFloorF16E64 => R::F16(map1(&s.h16(0), |x| valu::floor_f16(x as u16) as u32)),
        O::VCeilF16E32 | O::VCeilF16E64 => R::F16(map1(&s.h16(0), |x| valu::ceil_f16(x as u16) as u32)),
        O::VTruncF16E32 | O::VTruncF16E64 => R::F16(map1(&s.h16(0), |x| valu::trunc_f16(x as u16) as u32)),
        O::VRndneF16E32 | O::VRndneF16E64 => R::F16(map1(&s.h16(0), |x| valu::rndne_f16(x as u16) as u32)),
        O::VFractF16E32 | O::VFractF16E64 => R::F16(map1(&s.h16(0), |x| valu::fract_f16(x as u16) as u32)),
        O::VFrexpMantF16E32 | O::VFrexpMantF16E64 => R::F16(map1(&s.h16(0), |x| valu::frexp_mant_f16(x as u16) as u32)),
        O::VFrexpExpI16F16E32 | O::VFrexpExpI16F16E64 => R::U16(map1(&s.h16(0), |x| valu::frexp_exp_f16(x as u16) as u16 as u32)),
        O::VLdexpF16E32 | O::VLdexpF16E64 => {
            // S1 reads inline float constants as f16 patterns (the ISA's note on V_LDEXP_F16).
            let (a, n) = (s.h16(0), map1(&s.get(1, true), |x| x & 0xffff));
            R::F16(map2(&a, &n, |x, e| valu::ldexp_f16(x as u16, e as u16 as i16, mode.round_f16_f64, mode.fp16_ovfl) as u32))
        }
        // 65505..=65535 round past f16's largest finite value: infinity, or that value
        // under MODE.FP16_OVFL.
        O::VCvtF16U16E32 | O::VCvtF16U16E64 => {
            R::F16(map1(&s.u16s(0), |x| valu::cvt_f16_u16(x as u16, mode.round_f16_f64, mode.fp16_ovfl) as u32))
        }
        O::VCvtF16I16E32 | O::VCvtF16I16E64 => R::F16(map1(&s.u16s(0), |x| valu::cvt_f16_i16(x as u16 as i16, mode.round_f16_f64) as u32)),
        O::VCvtU16F16E32 | O::VCvtU16F16E64 => R::U16(map1(&s.h16(0), |x| valu::cvt_u16_f16(x as u16) as u32)),
        O::VCvtI16F16E32 | O::VCvtI16F16E64 => R::U16(map1(&s.h16(0), |x| valu::cvt_i16_f16(x as u16) as u16 as u32)),
        O::VCvtNormI16F16E32 | O::VCvtNormI16F16E64 => R::U16(map1(&s.h16(0), |x| valu::cvt_norm_i16_f16(x as u16) as u16 as u32)),
        O::VCvtNormU16F16E32 | O::VCvtNormU16F16E64 => R::U16(map1(&s.h16(0), |x| valu::cvt_norm_u16_f16(x as u16) as u32)),
        O::VSatPkU8I16E32 | O::VSatPkU8I16E64 => R::U16(map1(&s.get(0, false), int::sat_pk_u8_i16)),
        O::VMadF16 | O::VMadLegacyF16 | O::VMacF16E32 | O::VMacF16E64 | O::VMadakF16 | O::VMadmkF16 => {
            let (a, b) = (s.f16(0), s.f16(1));
            let k = [fl.literal & 0xffff; N];
            let (a, b, acc) = match op {
                O::VMadF16 | O::VMadLegacyF16 => (a, b, s.f16(2)),
                O::VMacF16E32 | O::VMacF16E64 => (a, b, map1(&s.w.vgpr[fl.vdst], |x| x & 0xffff)),
                O::VMadakF16 => (a, b, k),
                _ => (a, k, b),
            };
            let v = map3(&a, &b, &acc, |x, y, z| valu::mad_f16(x as u16, y as u16, z as u16, mode.round_f16_f64, mode.fp16_ovfl) as u32);
            R::Half { v, float: true, preserve: op == O::VMadF16 }
        }
        O::VDivFixupF16 | O::VDivFixupLegacyF16 => {
            let (a, b, cc) = (s.h16(0), s.h16(1), s.h16(2));
            let v = map3(&a, &b, &cc, |x, y, z| valu::div_fixup_f16(x as u16, y as u16, z as u16) as u32);
            R::Half { v, float: true, preserve: op == O::VDivFixupF16 }
        }
        O::VMin3F16 | O::VMax3F16 | O::VMed3F16 => {
            let (a, b, cc) = (s.f16(0), s.f16(1), s.f16(2));
            let ieee = mode.ieee;
            let v = map3(&a, &b, &cc, |x, y, z| {
                let (x, y, z) = (x as u16, y as u16, z as u16);
                (match op {
                    O::VMin3F16 => valu::min3_f16(x, y, z, ieee),
                    O::VMax3F16 => valu::max3_f16(x, y, z, ieee),
                    _ => valu::med3_f16(x, y, z, ieee),
                }) as u32
            });
            R::Half { v, float: true, preserve: true }
        }
        O::VPackB32F16 => {
            let (a, b) = (s.f16(0), s.f16(1));
            let clamp = fl.clamp;
            let dx10 = mode.dx10_clamp;
            R::B32(map2(&a, &b, |x, y| {
                let (x, y) = if clamp { (valu::clamp_f16(x as u16, dx10) as u32, valu::clamp_f16(y as u16, dx10) as u32) } else { (x, y) };
                (x & 0xffff) | (y << 16)
            }))
        }
        O::VBitop3B16 => {
            let table = (fl.neg & 7) | (fl.abs & 7) << 3 | ((fl.omod & 3) as u8) << 6;
            let (a, b, cc) = (s.u16s(0), s.u16s(1), s.u16s(2));
            R::Half { v: map3(&a, &b, &cc, |x, y, z| int::bitop3_b16(x, y, z, table)), float: false, preserve: true }
        }
        // ---- integer ----
        O::VMulHiI32I24E32 | O::VMulHiI32I24E64 => R::B32(map2(&s.get(0, false), &s.get(1, false), int::mul_hi_i32_i24)),
        O::VAddI32 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| int::add_i32_clamp(x, y, fl.clamp))),
        O::VSubI32 => R::B32(map2(&s.get(0, false), &s.get(1, false), |x, y| int::sub_i32_clamp(x, y, fl.clamp))),
        O::VXadU32 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), int::xad_u32)),
        O::VFfbhI32E32 | O::VFfbhI32E64 => R::B32(map1(&s.get(0, false), int::ffbh_i32)),
        O::VScreenPartition4seB32E32 | O::VScreenPartition4seB32E64 => R::B32(map1(&s.get(0, false), int::screen_partition_4se_b32)),
        O::VPrngB32E32 | O::VPrngB32E64 => R::B32(map1(&s.get(0, false), int::prng_b32)),
        O::VLerpU8 => R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), int::lerp_u8)),
        O::VSadU8 | O::VSadHiU8 | O::VSadU16 | O::VSadU32 | O::VMsadU8 => {
            // Without clamp the sum wraps (the ISA: "overflow into the upper bits is
            // allowed"); with clamp it saturates at the destination's range, as clamp does
            // for every unsigned integer VALU result (ARCHITECTURE.md, decisions).
            let f3: fn(u32, u32, u32) -> u32 = match op {
                O::VSadU8 => int::sad_u8,
                O::VSadHiU8 => int::sad_hi_u8,
                O::VSadU16 => int::sad_u16,
                O::VSadU32 => int::sad_u32,
                _ => int::msad_u8,
            };
            let clamp = fl.clamp;
            R::B32(map3(&s.get(0, false), &s.get(1, false), &s.get(2, false), |x, y, z| {
                if clamp { int::sat_add_u(f3(x, y, 0), z, u32::MAX) } else { f3(x, y, z) }
            }))
        }
        O::VQsadPkU16U8 | O::VMqsadPkU16U8 => {
            let (a, b, cc) = (s.u64(0), s.get(1, false), s.u64(2));
            let masked = op == O::VMqsadPkU16U8;
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = if fl.clamp {
                    // Each 16-bit sum saturates at 0xffff instead of being truncated.
                    let sads = if masked { int::mqsad_pk_u16_u8(a[i], b[i], 0) } else { int::qsad_pk_u16_u8(a[i], b[i], 0) };
                    (0..4).fold(0u64, |acc, k| {
                        let (sad, add) = ((sads >> (16 * k)) as u32 & 0xffff, (cc[i] >> (16 * k)) as u32 & 0xffff);
                        acc | (int::sat_add_u(sad, add, 0xffff) as u64) << (16 * k)
                    })
                } else if masked {
                    int::mqsad_pk_u16_u8(a[i], b[i], cc[i])
                } else {
                    int::qsad_pk_u16_u8(a[i], b[i], cc[i])
                };
            }
            R::B64(out)
        }
        O::VMqsadU32U8 => {
            let (a, b) = (s.u64(0), s.get(1, false));
            let Some(acc) = quad_source(s.w, fl.src[2]) else { return Err(unsupported(&c.inst, pc)) };
            let mut out = [[0u32; N]; 4];
            for i in 0..N {
                let add = [acc[0][i], acc[1][i], acc[2][i], acc[3][i]];
                let r = if fl.clamp {
                    let sads = int::mqsad_u32_u8(a[i], b[i], [0; 4]);
                    std::array::from_fn(|k| int::sat_add_u(sads[k], add[k], u32::MAX))
                } else {
                    int::mqsad_u32_u8(a[i], b[i], add)
                };
                for k in 0..4 {
                    out[k][i] = r[k];
                }
            }
            let mask = s.write_mask;
            for (k, v) in out.iter().enumerate() {
                write(&mut w.vgpr[(fl.vdst + k) & 255], v, mask);
            }
            return Ok(());
        }
        O::VAshrPkI8I32 | O::VAshrPkU8I32 => {
            let (a, b, cc) = (s.get(0, false), s.get(1, false), s.get(2, false));
            let signed = op == O::VAshrPkI8I32;
            let v = map3(&a, &b, &cc, |x, y, z| if signed { int::ashr_pk_i8_i32(x, y, z) } else { int::ashr_pk_u8_i32(x, y, z) });
            R::Half { v, float: false, preserve: true }
        }
        O::VDot8cI32I4E32 | O::VDot8cI32I4E64 => {
            let acc = s.w.vgpr[fl.vdst];
            R::B32(map3(&s.get(0, false), &s.get(1, false), &acc, |x, y, z| dot::dot8_i32_i4(x, y, z, fl.clamp)))
        }
        O::VPkFmacF16E32 | O::VPkFmacF16E64 => {
            // The VOP3/DPP/SDWA modifiers of a non-VOP3P encoding act on both halves of
            // the packed operand: abs then neg on each f16 (as neg_lo and neg_hi together
            // would), SDWA selects the 32-bit operand before it is split, omod and clamp
            // shape each half's result (ARCHITECTURE.md, decisions).
            // What an inline constant holds in the high half of a packed operand is not
            // documented; registers and literals are plain 32-bit values.
            if (128..=254).contains(&fl.src[0]) {
                return Err(unsupported(&c.inst, pc));
            }
            let modify = |v: L32, i: usize| -> L32 {
                let abs = if (fl.abs >> i) & 1 != 0 { 0x8000_8000 } else { 0 };
                let neg = if (fl.neg >> i) & 1 != 0 { 0x8000_8000 } else { 0 };
                map1(&v, |x| (x & !abs) ^ neg)
            };
            let (a, b) = (modify(s.get(0, false), 0), modify(s.get(1, false), 1));
            let acc = s.w.vgpr[fl.vdst];
            let rm = mode.round_f16_f64;
            let omod = OutputModifier::from_bits(fl.omod);
            let v = map3(&a, &b, &acc, |x, y, z| {
                let lane = |k: u32| {
                    let h = |v: u32| mode.flush_in_f16((v >> (16 * k)) as u16);
                    let r = valu::fma_f16(h(x), h(y), h(z), rm, mode.fp16_ovfl);
                    valu::output_f16(r, omod, fl.clamp, mode) as u32
                };
                lane(0) | (lane(1) << 16)
            });
            R::B32(v)
        }
        O::VSwapB32 => {
            // SRC0 must be a VGPR (LLVM accepts nothing else): another source is an
            // encoding the ISA does not define.
            if fl.src[0] < 256 || c.ext != Extension::None {
                return Err(ExecFault::Illegal { pc, encoding: c.inst.encoding().name(), word: c.inst.words()[0] });
            }
            let (d, s0) = (fl.vdst, (fl.src[0] - 256) as usize);
            let (old_d, old_s) = (w.vgpr[d], w.vgpr[s0]);
            write(&mut w.vgpr[d], &old_s, exec);
            write(&mut w.vgpr[s0], &old_d, exec);
            return Ok(());
        }
        O::VPermlane16SwapB32E32 | O::VPermlane16SwapB32E64 | O::VPermlane32SwapB32E32 | O::VPermlane32SwapB32E64 => {
            if fl.src[0] < 256 || c.ext != Extension::None {
                return Err(ExecFault::Illegal { pc, encoding: c.inst.encoding().name(), word: c.inst.words()[0] });
            }
            // The VOP3 form's fi (op_sel[0]) and bound_ctrl (op_sel[1]); the VOP1 form has
            // neither.
            let vop3 = matches!(op, O::VPermlane16SwapB32E64 | O::VPermlane32SwapB32E64);
            let (fi, bound_ctrl) = (vop3 && fl.opsel & 1 != 0, vop3 && fl.opsel & 2 != 0);
            let (d, s0) = (fl.vdst, (fl.src[0] - 256) as usize);
            let (old_d, old_s) = (w.vgpr[d], w.vgpr[s0]);
            // permlane16: odd rows of VDST trade with even rows of SRC0 (lane ^ 16);
            // permlane32: the upper half of VDST with the lower half of SRC0 (lane ^ 32).
            let row_bit = if matches!(op, O::VPermlane16SwapB32E32 | O::VPermlane16SwapB32E64) { 16 } else { 32 };
            // As in DPP, a lane writes only when EXEC enables it; a value read from a lane
            // EXEC disables is fetched anyway under fi, is zero under bound_ctrl, and
            // otherwise the writing lane keeps its value. With a full EXEC every lane of
            // the swapped rows moves (the ISA's pseudocode).
            let on = |lane: usize| (exec >> lane) & 1 != 0;
            let pick = |from: usize, moved: u32, keep: u32| -> u32 {
                if on(from) || fi {
                    moved
                } else if bound_ctrl {
                    0
                } else {
                    keep
                }
            };
            let (mut new_d, mut new_s) = (old_d, old_s);
            for lane in (0..N).filter(|&l| on(l)) {
                let from = lane ^ row_bit;
                if lane & row_bit != 0 {
                    new_d[lane] = pick(from, old_s[from], old_d[lane]);
                } else {
                    new_s[lane] = pick(from, old_d[from], old_s[lane]);
                }
            }
            // The source register is written first: with VDST == SRC0 the destination's
            // values win.
            w.vgpr[s0] = new_s;
            w.vgpr[d] = new_d;
            return Ok(());
        }
        O::VClrexcp => return Ok(()),
        O::VTrigPreopF64 => {
            let (a, b) = (s.f64(0), s.get(1, false));
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = transcendental::trig_preop_f64(d(a[i]), b[i]).to_bits();
            }
            R::F64(out)
        }
        O::VCvtSrFp8F32 | O::VCvtSrBf8F32 => {
            let fmt = Fp8Format::new(op == O::VCvtSrBf8F32, target == Target::Gfx950);
            let (a, seed) = (s.f32(0), s.get(1, false));
            let old = w.vgpr[fl.vdst];
            let byte = (fl.opsel as u32 >> 2) & 3;
            R::B32(std::array::from_fn(|i| fp8::v_cvt_sr_f8_f32(fmt, old[i], f(a[i]), seed[i], byte, mode)))
        }
        // gfx950 stochastic rounding to a 16-bit half of the destination (op_sel[3]); clamp
        // and omod are ignored (CDNA4 guide table 31); f32 input denormals flush per MODE.
        O::VCvtSrF16F32 | O::VCvtSrBf16F32 => {
            let (a, seed) = (s.f32(0), s.get(1, false));
            let old = w.vgpr[fl.vdst];
            let hi = fl.opsel & 8 != 0;
            R::B32(std::array::from_fn(|i| {
                let x = mode.flush_in_f32(f(a[i]));
                let h = if op == O::VCvtSrF16F32 {
                    crate::numeric::convert::f32_to_f16_sr(x, seed[i], mode.fp16_ovfl)
                } else {
                    crate::numeric::convert::f32_to_bf16_sr(x, seed[i])
                };
                fp8::insert_word(old[i], h, hi)
            }))
        }
        // gfx950 `v_cvt_pk_{f16,bf16}_f32`: round to nearest even whatever MODE says. clamp
        // clamps each value to [0, 1] (the same before or after the monotone rounding);
        // omod has no defined order against the rounding and is refused.
        O::VCvtPkF16F32 | O::VCvtPkBf16F32 => {
            let (a, b) = (s.f32(0), s.f32(1));
            let omod = OutputModifier::from_bits(fl.omod);
            let rne = crate::numeric::RoundMode::NearestEven;
            let one = |x: u32| {
                let x = mode.flush_in_f32(f(x));
                let x = if fl.clamp { valu::clamp_f32(x, mode.dx10_clamp) } else { x };
                // omod scales the converted 16-bit value, as it scales v_cvt_f16_f32's
                // result (ARCHITECTURE.md, decisions); clamp commutes with the rounding.
                if op == O::VCvtPkF16F32 {
                    let h = crate::numeric::convert::f32_to_f16(x, rne);
                    if fl.omod == 0 { h as u32 } else { valu::output_f16(h, omod, fl.clamp, mode) as u32 }
                } else {
                    let h = crate::numeric::convert::f32_to_bf16(x, rne);
                    if fl.omod == 0 {
                        h as u32
                    } else {
                        let scaled = output_f32(f((h as u32) << 16), omod, fl.clamp, mode);
                        crate::numeric::convert::f32_to_bf16(scaled, rne) as u32
                    }
                }
            };
            R::B32(map2(&a, &b, |x, y| one(x) | one(y) << 16))
        }
        _ if super::cvt::is_scaled(op) => return super::cvt::execute(w, c, pc),
        _ => return Err(unsupported(&c.inst, pc)),
    };
    let mask = s.write_mask;
    let omod = OutputModifier::from_bits(fl.omod);
    let post = fl.clamp || fl.omod != 0;
    match r {
        R::B32(v) => write_sdwa(w, c, fl.vdst, v, mask),
        R::F32(mut v) => {
            if post {
                v = map1(&v, |x| fbits(output_f32(f(x), omod, fl.clamp, mode)));
            }
            write_sdwa(w, c, fl.vdst, v, mask)
        }
        R::U16(v) => write_sdwa(w, c, fl.vdst, map1(&v, |x| x & 0xffff), mask),
        R::F16(v) => {
            let v = map1(&v, |x| output_f16(x as u16, omod, fl.clamp, mode) as u32);
            write_sdwa(w, c, fl.vdst, v, mask)
        }
        R::Half { mut v, float, preserve } => {
            if float {
                v = map1(&v, |x| output_f16(x as u16, omod, fl.clamp, mode) as u32);
            }
            if matches!(c.ext, Extension::Sdwa(_)) {
                write_sdwa(w, c, fl.vdst, v, mask)
            } else {
                let hi = fl.opsel & 8 != 0;
                let old = w.vgpr[fl.vdst];
                let out = map2(&v, &old, |x, o| {
                    let x = x & 0xffff;
                    if hi {
                        (o & 0xffff) | (x << 16)
                    } else if preserve {
                        (o & 0xffff_0000) | x
                    } else {
                        x
                    }
                });
                write(&mut w.vgpr[fl.vdst], &out, mask)
            }
        }
        R::B64(v) => write64(&mut w.vgpr, fl.vdst, &v, mask),
        R::F64(mut v) => {
            if post {
                for x in v.iter_mut() {
                    *x = output_f64(d(*x), omod, fl.clamp, mode).to_bits();
                }
            }
            write64(&mut w.vgpr, fl.vdst, &v, mask)
        }
    }
    Ok(())
}


/// A binary f32 operation under MODE: input denormals flushed, `op` rounds per FP_ROUND,
/// output denormals flushed.
#[inline]
fn f32_mode(mode: Mode, op: impl Fn(f32, f32) -> f32, x: u32, y: u32) -> u32 {
    fbits(mode.flush_out_f32(op(mode.flush_in_f32(f(x)), mode.flush_in_f32(f(y)))))
}

/// `v_fma_f32` under MODE.
#[inline]
fn fma_mode(mode: Mode, x: u32, y: u32, z: u32) -> u32 {
    let (a, b, c) = (mode.flush_in_f32(f(x)), mode.flush_in_f32(f(y)), mode.flush_in_f32(f(z)));
    fbits(mode.flush_out_f32(valu::fma_f32(a, b, c, mode.round_f32)))
}

/// `sum(a.byte[k] * b.byte[k]) + c` over the four bytes, signed or unsigned (wrapping).
#[inline]
fn dot4_i8(a: u32, b: u32, c: u32, signed: bool) -> u32 {
    let mut acc = c;
    for k in 0..4 {
        let (x, y) = ((a >> (8 * k)) as u8, (b >> (8 * k)) as u8);
        let p = if signed { (x as i8 as i32 * y as i8 as i32) as u32 } else { x as u32 * y as u32 };
        acc = acc.wrapping_add(p);
    }
    acc
}

/// `a.lo * b.lo + a.hi * b.hi + c` over 16-bit halves, signed or unsigned (wrapping).
#[inline]
fn dot2_i16(a: u32, b: u32, c: u32, signed: bool) -> u32 {
    let mut acc = c;
    for k in 0..2 {
        let (x, y) = ((a >> (16 * k)) as u16, (b >> (16 * k)) as u16);
        let p = if signed { (x as i16 as i32 * y as i16 as i32) as u32 } else { x as u32 * y as u32 };
        acc = acc.wrapping_add(p);
    }
    acc
}

fn sext24(x: u32) -> i32 {
    ((x << 8) as i32) >> 8
}


/// Writes a 32-bit result, honouring the SDWA destination select.
fn write_sdwa(w: &mut Wave, c: &CachedInst, vdst: usize, v: L32, mask: u64) {
    let Extension::Sdwa(ctrl) = c.ext else {
        write(&mut w.vgpr[vdst], &v, mask);
        return;
    };
    let sel = (ctrl >> 8) & 7;
    let unused = (ctrl >> 11) & 3;
    if sel >= 6 {
        // 6 is DWORD; 7 is reserved and treated as DWORD.
        write(&mut w.vgpr[vdst], &v, mask);
        return;
    }
    let old = w.vgpr[vdst];
    let (shift, width) = if sel < 4 { (8 * sel, 8) } else { (16 * (sel - 4), 16) };
    let field = ((1u64 << width) - 1) as u32;
    let out = map2(&v, &old, |x, o| {
        let placed = (x & field) << shift;
        let keep = match unused {
            2 => o & !(field << shift),
            1 => {
                // Sign-extend the field into the upper bits, zero below.
                let top = shift + width;
                let sign = (x >> (width - 1)) & 1;
                if sign != 0 && top < 32 {
                    u32::MAX << top
                } else {
                    0
                }
            }
            _ => 0,
        };
        placed | keep
    });
    write(&mut w.vgpr[vdst], &out, mask);
}

/// `v_cmp*` and `v_cmpx*`, any encoding.
fn compare(w: &mut Wave, c: &CachedInst, fl: &Fields, exec: u64) -> Result<(), ExecFault> {
    let aux = c.aux;
    let cond = (aux & 0xf) as u32;
    let always = aux & (1 << 13) != 0;
    let ty = (aux >> 4) & 0xf;
    let cmpx = aux & (1 << 14) != 0;
    let mut s = Srcs { w, f: *fl, ext: c.ext, exec, write_mask: exec };
    let mut bits = 0u64;
    match ty {
        0 => {
            use crate::numeric::convert::f16_to_f32;
            let (a, b) = (s.f16(0), s.get(1, true));
            for i in 0..N {
                let r = if cond == 15 { class_f64(f16_to_f32(a[i] as u16) as f64, b[i], true) } else { fcmp(f16_to_f32(a[i] as u16) as f64, f16_to_f32(b[i] as u16) as f64, cond, always) };
                bits |= (r as u64) << i;
            }
        }
        1 => {
            let (a, b) = (s.f32(0), if cond == 15 { s.get(1, false) } else { s.f32(1) });
            for i in 0..N {
                let r = if cond == 15 { class_f64(f(a[i]) as f64, b[i], false) } else { fcmp(f(a[i]) as f64, f(b[i]) as f64, cond, always) };
                bits |= (r as u64) << i;
            }
        }
        2 => {
            let a = s.f64(0);
            if cond == 15 {
                let b = s.get(1, false);
                for i in 0..N {
                    bits |= (class_f64(d(a[i]), b[i], false) as u64) << i;
                }
            } else {
                let b = s.f64(1);
                for i in 0..N {
                    bits |= (fcmp(d(a[i]), d(b[i]), cond, always) as u64) << i;
                }
            }
        }
        3 | 4 | 6 | 7 => {
            let (a, b) = (s.get(0, ty == 3 || ty == 6), s.get(1, ty == 3 || ty == 6));
            for i in 0..N {
                let (x, y): (i64, i64) = match ty {
                    3 => (a[i] as u16 as i16 as i64, b[i] as u16 as i16 as i64),
                    4 => (a[i] as i32 as i64, b[i] as i32 as i64),
                    6 => ((a[i] & 0xffff) as i64, (b[i] & 0xffff) as i64),
                    _ => (a[i] as i64, b[i] as i64),
                };
                bits |= (icmp(x.cmp(&y), cond, always) as u64) << i;
            }
        }
        _ => {
            let (a, b) = if ty == 5 { (s.i64(0), s.i64(1)) } else { (s.u64(0), s.u64(1)) };
            for i in 0..N {
                let o = if ty == 5 { (a[i] as i64).cmp(&(b[i] as i64)) } else { a[i].cmp(&b[i]) };
                bits |= (icmp(o, cond, always) as u64) << i;
            }
        }
    }
    let bits = bits & exec;
    let dst = match c.enc {
        Encoding::Vop3 => fl.vdst,
        _ => fl.sdst,
    };
    if cmpx {
        w.set_exec(bits);
        if c.enc == Encoding::Vop3 || dst != VCC || w.target_writes_vcc_on_cmpx() {
            w.set_sgpr_pair(dst, bits);
        }
    } else {
        w.set_sgpr_pair(dst, bits);
    }
    Ok(())
}

impl Wave {
    /// On gfx9, `v_cmpx_*_e32` writes VCC as well as EXEC.
    fn target_writes_vcc_on_cmpx(&self) -> bool {
        true
    }
}

fn fcmp(a: f64, b: f64, cond: u32, always: bool) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    if always {
        return true;
    }
    // `None` when either side is NaN: the ordered conditions fail, the "not" forms pass.
    let o = a.partial_cmp(&b);
    match cond {
        1 => o == Some(Less),
        2 => o == Some(Equal),
        3 => matches!(o, Some(Less | Equal)),
        4 => o == Some(Greater),
        5 => matches!(o, Some(Less | Greater)),
        6 => matches!(o, Some(Greater | Equal)),
        7 => o.is_some(),
        8 => o.is_none(),
        9 => !matches!(o, Some(Greater | Equal)),
        10 => !matches!(o, Some(Less | Greater)),
        11 => o != Some(Greater),
        12 => !matches!(o, Some(Less | Equal)),
        13 => o != Some(Equal),
        14 => o != Some(Less),
        _ => false,
    }
}


/// `v_cmp_class`: bit 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
/// 7 +denormal, 8 +normal, 9 +inf.
fn class_f64(x: f64, mask: u32, half: bool) -> bool {
    let bit = if x.is_nan() {
        // Quiet bit of the original format survives conversion to f64 for sNaN detection
        // only approximately; treat every NaN as quiet unless the f64 quiet bit is clear.
        if x.to_bits() & (1 << 51) == 0 { 0 } else { 1 }
    } else if x.is_infinite() {
        if x < 0.0 { 2 } else { 9 }
    } else if x == 0.0 {
        if x.is_sign_negative() { 5 } else { 6 }
    } else {
        let min_normal = if half { 6.103_515_625e-5 } else { f32::MIN_POSITIVE as f64 };
        let sub = x.abs() < min_normal;
        match (x < 0.0, sub) {
            (true, false) => 3,
            (true, true) => 4,
            (false, true) => 7,
            (false, false) => 8,
        }
    };
    (mask >> bit) & 1 != 0
}

#[cfg(test)]
mod bitop3_tests {
    use super::bitop3;

    #[test]
    fn truth_tables() {
        let (a, b, c) = (0xf0f0_f0f0, 0xcccc_cccc, 0xaaaa_aaaa);
        // The table of a function is the function applied to these three patterns' bytes.
        assert_eq!(bitop3(0xf0, a, b, c), a);
        assert_eq!(bitop3(0xcc, a, b, c), b);
        assert_eq!(bitop3(0xaa, a, b, c), c);
        assert_eq!(bitop3(0x80, 0x1234_5678, 0xffff_0000, 0x0ff0_0ff0), 0x1234_5678 & 0xffff_0000 & 0x0ff0_0ff0);
        assert_eq!(bitop3(0x96, 7, 12, 3), 7 ^ 12 ^ 3);
        assert_eq!(bitop3(0, a, b, c), 0);
        assert_eq!(bitop3(0xff, a, b, c), u32::MAX);
    }
}
