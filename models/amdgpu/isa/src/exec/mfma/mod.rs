//! Matrix instructions: every `v_mfma_*` and `v_smfmac_*` of gfx90a, gfx942 and gfx950,
//! `v_mfma_ld_scale_b32`, and the VOP3P AccVGPR moves (`v_accvgpr_read_b32`,
//! `v_accvgpr_write_b32`).
//!
//! Codemap: [`desc`] (shape and types, decoded once per program slot into the slot's
//! `aux` word), [`layout`] (where elements live in registers), [`kernel`] (the arithmetic;
//! `block_avx2` its k-block form with AVX2 intrinsics),
//! this file (operand fetch, modifiers, write-back, the scale and AccVGPR instructions).
//!
//! # Shapes and layouts
//! An instruction computes `D = A * B + C` for `blocks` independent blocks of
//! `M x N x K` (M = N = 4, 16 or 32). With `E = K * M * blocks / 64` elements per lane:
//! - A (`M x K` per block): element `(b, i, k)` is element `k % E` of lane
//!   `i + M*b + M*blocks*(k / E)` of the A registers (elements packed from bit 0 up,
//!   `bits` each; f64 elements take register pairs). B (`K x N`) likewise with column `j`.
//! - C/D: see [`layout::d_row`] (groups of four rows per register for 32-bit outputs,
//!   one row per register pair for f64).
//! - SMFMAC: A is 2:4 sparse and stores K/2 values per row in the same layout (with K/2);
//!   stored element `s` of a row comes from the group of four `k` values `4*(s/2)..` at
//!   position `idx`, a 2-bit field of the index VGPR (src2) in the lane that holds the
//!   element: bits `2*(e + E*set)` for the lane's element `e`, where `set` is ABID when
//!   CBSZ is 0 and 0 otherwise (the register holds `32 / (2E)` sets). D is also C.
//! - gfx950 `*_f8f6f4`: E = 32 elements per lane of the format CBSZ (A) and BLGP (B) name
//!   (0 fp8 E4M3, 1 bf8 E5M2, 2 fp6 E2M3, 3 bf6 E3M2, 4 fp4 E2M1; OCP/MX encodings), packed
//!   densely (fp6: 32 x 6 bits in 6 registers, fp4 in 4), so narrow formats read fewer
//!   registers.
//!
//! # Modifiers
//! - CBSZ/ABID (multi-block forms): output block `b` multiplies A block
//!   `(b >> CBSZ << CBSZ) + ABID`. Legal when `CBSZ <= log2(blocks)` and
//!   `ABID < 2^CBSZ`.
//! - BLGP: lane `l` of the matrix core reads B from lane [`layout::blgp_lane`]`(l)`.
//!   Legal on every gfx90a non-f64 form; on gfx942 and gfx950 on the multi-block forms and
//!   the single-block f32 forms (AMD's Matrix Instruction Calculator lists no BLGP for the
//!   other CDNA3 forms; gfx950 is taken to follow CDNA3 for its new forms too).
//! - f64 on gfx942/gfx950 (`kind=mai_neg`): the BLGP bits are `neg:[A,B,C]` (sign flips of
//!   the inputs); CBSZ/ABID and (on gfx90a) BLGP are not used by f64 forms.
//! - `acc` bits (A/B in AccVGPRs) and `acc_cd` (C and D in AccVGPRs) everywhere.
//! - Sources: A and B must be registers, C a register tuple or an inline constant (every
//!   element that value); the SMFMAC index a VGPR or an inline integer.
//!
//! A modifier value or operand outside these rules (which LLVM assembles but the ISA does
//! not define) stops the wave with [`ExecFault::Illegal`] rather than computing a guess.
//! EXEC does not mask matrix instructions: every lane of D is written.
//!
//! # Numeric model
//! - f64 (`v_mfma_f64_*`): one fused multiply-add per k step, in k order.
//! - f32 (`*_f32`) and xf32 (gfx942 `*_xf32`, inputs first rounded to nearest even to 10
//!   mantissa bits): one fused multiply-add in f32 per k step, in k order.
//! - f16, bf16 (all generations), fp8/bf8 (FNUZ on gfx942, OCP on gfx950, any mix), the
//!   f8f6f4 formats and i8: the products of one k-block (the `E` consecutive k one lane
//!   holds; for SMFMAC the `E` stored elements) are exact; they are summed in f64 in k order
//!   starting from -0.0; for f8f6f4 the block sum is multiplied by the block's two E8M0
//!   scales (exact); the result is added to the f32 accumulator and rounded once to nearest
//!   even (the exact sum of the f32 accumulator and the f64 block sum, not a double
//!   rounding). i8 sums are exact and wrap into the i32 accumulator.
//! - Denormal inputs and outputs are kept (MODE's denormal controls do not apply); a NaN
//!   result is the default quiet NaN (`0x7fc00000` / `0x7ff8000000000000`).
//!
//! The hardware's adder-tree width is not public; one rounding per k-block is this
//! model's reading of the ISA's products-then-accumulate description.
//!
//! # Scaled f8f6f4 (gfx950)
//! LLVM writes `v_mfma_scale_f32_*_f8f6f4 ... vScaleA, vScaleB` as `v_mfma_ld_scale_b32
//! vScaleA, vScaleB` followed by the f8f6f4 MFMA word with bit 11 set (LLVM decodes that
//! word only as part of the pair). The loader decodes such a word as its f8f6f4 MFMA marked
//! *scaled*. `v_mfma_ld_scale_b32` arms one E8M0 scale per lane for A and for B
//! ([`Wave::mfma_scales`]): the byte `op_sel[i] | op_sel_hi[i] << 1` of a VGPR source, or
//! bits 30:23 of an SGPR or inline-constant source (the hardware behaviour LLVM documents
//! when it restricts the operands to VGPRs). The armed scales belong to the instruction 8
//! bytes later: a scaled MFMA there applies and disarms them (A row `i`, k-group `g` takes
//! lane `i + M*g`'s scale; B column `j` lane `j + N*g`'s), an unscaled one ignores them, and
//! any other instruction there leaves them unused (the ISA requires the MFMA to follow). A
//! scaled MFMA word reached without armed scales (a jump into the pair) is illegal. E8M0
//! follows the OCP MX spec: `2^(e-127)`, `0xff` NaN.

#[cfg(target_arch = "x86_64")]
mod block_avx2;
mod desc;
mod kernel;
mod layout;

use crate::numeric::convert::{bf16_to_f32, f16_to_f32};
use crate::numeric::matrix::{e8m0_to_f64, fp8_table, quiet_f32, quiet_f64, round_to_xf32, F8f6f4};
use crate::numeric::Fp8Format;
use crate::Target;

use super::operands::{inline_f64, scalar_src, unsupported};
use super::program::CachedInst;
use super::reg_file::RegFile;
use super::valu::{fetch, write};
use super::wave::{MfmaScales, Wave, WAVE_LANES};
use super::ExecFault;

use desc::{Desc, Elem, MatrixOp};
use kernel::{Accumulate, Work};

pub(crate) use desc::AUX_SCALED;
pub use desc::{mfma_work, MfmaClass, MfmaWork};

/// The `aux` word of a slot holding `mnemonic` (0 for anything that is not a matrix
/// instruction).
pub(crate) fn aux(mnemonic: &str) -> u16 {
    desc::pack(desc::from_mnemonic(mnemonic))
}

/// True when a VOP3P slot's `aux` names a matrix instruction.
#[inline]
pub(crate) fn is_matrix(aux: u16) -> bool {
    aux & 0xf != 0
}

/// The words of a gfx950 scaled f8f6f4 MFMA (the second half of `v_mfma_scale_*`) with
/// the scale bit cleared, or `None` when `words` do not start with one.
pub(crate) fn scaled_mfma_words(target: Target, words: &[u32]) -> Option<[u32; 2]> {
    let (&w0, &w1) = (words.first()?, words.get(1)?);
    let mfma = w0 & 0xff80_0000 == 0xd380_0000 && matches!((w0 >> 16) & 0x7f, 0x2d | 0x2e);
    (target == Target::Gfx950 && mfma && w0 & 0x7800 == 0x0800).then_some([w0 & !0x0800, w1])
}

/// Executes a matrix instruction (the VOP3P router sends every slot [`is_matrix`] here).
pub(crate) fn execute(w: &mut Wave, c: &CachedInst, pc: u64, target: Target) -> Result<(), ExecFault> {
    match desc::unpack(c.aux) {
        MatrixOp::None => Err(unsupported(&c.inst, pc)),
        MatrixOp::AccRead => acc_read(w, c, pc),
        MatrixOp::AccWrite => acc_write(w, c, pc),
        MatrixOp::LdScale => ld_scale(w, c, pc),
        MatrixOp::Mfma(d) => mfma(w, c, pc, target, d),
    }
}

/// The fault for an operand or modifier value the ISA leaves undefined.
fn illegal(c: &CachedInst, pc: u64) -> ExecFault {
    ExecFault::Illegal { pc, encoding: c.inst.encoding().name(), word: c.inst.words()[0] }
}

/// `v_accvgpr_read_b32 vdst, aSrc`: under EXEC, from an AccVGPR.
fn acc_read(w: &mut Wave, c: &CachedInst, pc: u64) -> Result<(), ExecFault> {
    let fl = c.fields;
    if fl.src[0] < 256 {
        return Err(illegal(c, pc));
    }
    let v = w.agpr[(fl.src[0] - 256) as usize];
    let exec = w.exec();
    write(&mut w.vgpr[fl.vdst], &v, exec);
    Ok(())
}

/// `v_accvgpr_write_b32 aDst, src`: under EXEC, from a VGPR, SGPR or inline constant.
fn acc_write(w: &mut Wave, c: &CachedInst, pc: u64) -> Result<(), ExecFault> {
    let fl = c.fields;
    if fl.src[0] == 255 || (209..=239).contains(&fl.src[0]) {
        return Err(illegal(c, pc));
    }
    let v = fetch(w, fl.src[0], 0, false);
    let exec = w.exec();
    write(&mut w.agpr[fl.vdst], &v, exec);
    Ok(())
}

/// `v_mfma_ld_scale_b32 scaleA, scaleB`: arms the E8M0 scales of the MFMA that follows.
fn ld_scale(w: &mut Wave, c: &CachedInst, pc: u64) -> Result<(), ExecFault> {
    let words = c.inst.words();
    let sel = |i: u32| ((words[0] >> (11 + i)) & 1) | (((words[1] >> (27 + i)) & 1) << 1);
    let mut scales = MfmaScales { pc: pc.wrapping_add(8), a: [0; WAVE_LANES], b: [0; WAVE_LANES] };
    for (i, out) in [&mut scales.a, &mut scales.b].into_iter().enumerate() {
        let src = c.fields.src[i];
        match src {
            256.. => {
                let reg = &w.vgpr[(src - 256) as usize];
                let shift = 8 * sel(i as u32);
                for (o, &v) in out.iter_mut().zip(reg) {
                    *o = (v >> shift) as u8;
                }
            }
            0..=127 | 128..=208 | 240..=248 => *out = [(scalar_src(w, src, 0, false) >> 23) as u8; WAVE_LANES],
            _ => return Err(illegal(c, pc)),
        }
    }
    w.mfma_scales = Some(scales);
    Ok(())
}

/// The register file a source or destination names.
fn file(w: &Wave, agpr: bool) -> &RegFile {
    if agpr {
        &w.agpr
    } else {
        &w.vgpr
    }
}

/// Modifier fields of an MFMA word.
#[derive(Copy, Clone, Debug)]
struct Mods {
    cbsz: u32,
    abid: u32,
    blgp: u32,
    acc_a: bool,
    acc_b: bool,
    acc_cd: bool,
}

impl Mods {
    fn of(words: &[u32]) -> Mods {
        let (w0, w1) = (words[0], words[1]);
        Mods {
            cbsz: (w0 >> 8) & 7,
            abid: (w0 >> 11) & 0xf,
            blgp: w1 >> 29,
            acc_a: (w1 >> 27) & 1 != 0,
            acc_b: (w1 >> 28) & 1 != 0,
            acc_cd: (w0 >> 15) & 1 != 0,
        }
    }
}

/// How one operand's elements decode.
#[derive(Copy, Clone)]
enum Decode {
    F32,
    Xf32,
    F64 { neg: bool },
    F16,
    Bf16,
    I8,
    Table(&'static [f64; 256]),
}

impl Decode {
    fn of(e: Elem, target: Target, format: Option<F8f6f4>, neg: bool) -> Decode {
        let ocp = target == Target::Gfx950;
        match e {
            Elem::F32 => Decode::F32,
            Elem::Xf32 => Decode::Xf32,
            Elem::F64 => Decode::F64 { neg },
            Elem::F16 => Decode::F16,
            Elem::Bf16 => Decode::Bf16,
            Elem::I8 => Decode::I8,
            Elem::Fp8 => Decode::Table(fp8_table(Fp8Format::fp8(ocp))),
            Elem::Bf8 => Decode::Table(fp8_table(Fp8Format::bf8(ocp))),
            Elem::F8f6f4 => Decode::Table(format.unwrap_or(F8f6f4::Fp8).table()),
        }
    }

    #[inline(always)]
    fn value(self, raw: u64) -> f64 {
        match self {
            Decode::F32 => f32::from_bits(raw as u32) as f64,
            Decode::Xf32 => round_to_xf32(f32::from_bits(raw as u32)) as f64,
            Decode::F64 { neg } => f64::from_bits(raw ^ ((neg as u64) << 63)),
            Decode::F16 => f16_to_f32(raw as u16) as f64,
            Decode::Bf16 => bf16_to_f32(raw as u16) as f64,
            Decode::I8 => raw as u8 as i8 as f64,
            Decode::Table(t) => t[raw as usize & 0xff],
        }
    }
}

/// One lane's packed elements: up to 8 registers and a zero guard word.
#[inline(always)]
fn lane_words(regs: &[&[u32; WAVE_LANES]; 8], count: usize, lane: usize) -> [u32; 9] {
    let mut out = [0u32; 9];
    for r in 0..count.min(8) {
        out[r] = regs[r][lane];
    }
    out
}

/// The `bits`-wide element `e` of a lane's packed words.
#[inline(always)]
fn element(words: &[u32; 9], e: usize, bits: u32) -> u64 {
    let bit = e * bits as usize;
    let (word, shift) = (bit / 32, bit % 32);
    let pair = words[word.min(7)] as u64 | (words[(word + 1).min(8)] as u64) << 32;
    if bits == 64 {
        pair
    } else {
        (pair >> shift) & ((1u64 << bits) - 1)
    }
}

/// An A or B operand: its registers and how its elements decode.
struct Source<'w> {
    regs: [&'w [u32; WAVE_LANES]; 8],
    count: usize,
    bits: u32,
    dec: Decode,
    per_lane: usize,
}

impl<'w> Source<'w> {
    /// The operand at 9-bit source `src` (a register) of `per_lane` `bits`-wide elements.
    fn new(w: &'w Wave, agpr: bool, src: u32, dec: Decode, bits: u32, per_lane: usize) -> Source<'w> {
        let count = Desc::regs(per_lane, bits);
        let file = file(w, agpr);
        let base = src.saturating_sub(256) as usize;
        let regs = std::array::from_fn(|r| &file[base + r.min(count.saturating_sub(1))]);
        Source { regs, count, bits, dec, per_lane }
    }

    /// Decodes every lane's elements into `out`: lane `l`'s come from register lane
    /// `source(l)`, its element `e` goes to `out[base(l) + e * stride]`.
    fn unpack(&self, out: &mut [f64], stride: usize, source: impl Fn(usize) -> usize, base: impl Fn(usize) -> usize) {
        match self.dec {
            Decode::Table(t) => self.unpack_with(out, stride, source, base, |raw| t[raw as usize & 0xff]),
            Decode::F16 => self.unpack_with(out, stride, source, base, |raw| f16_to_f32(raw as u16) as f64),
            Decode::Bf16 => self.unpack_with(out, stride, source, base, |raw| bf16_to_f32(raw as u16) as f64),
            Decode::I8 => self.unpack_with(out, stride, source, base, |raw| raw as u8 as i8 as f64),
            dec => self.unpack_with(out, stride, source, base, |raw| dec.value(raw)),
        }
    }

    #[inline(always)]
    fn unpack_with(&self, out: &mut [f64], stride: usize, source: impl Fn(usize) -> usize, base: impl Fn(usize) -> usize, dec: impl Fn(u64) -> f64) {
        match self.bits {
            4 => self.unpack_aligned::<4>(out, stride, source, base, dec),
            8 => self.unpack_aligned::<8>(out, stride, source, base, dec),
            16 => self.unpack_aligned::<16>(out, stride, source, base, dec),
            32 => self.unpack_aligned::<32>(out, stride, source, base, dec),
            _ => self.unpack_any(out, stride, source, base, dec),
        }
    }

    /// [`Self::unpack_with`] for elements that never straddle a register (`BITS`
    /// divides 32): each register's elements in turn, with constant shifts.
    #[inline(always)]
    fn unpack_aligned<const BITS: usize>(&self, out: &mut [f64], stride: usize, source: impl Fn(usize) -> usize, base: impl Fn(usize) -> usize, dec: impl Fn(u64) -> f64) {
        let per_word = 32 / BITS;
        let mask = (1u64 << BITS) - 1;
        let stride = stride.max(1);
        let regs = &self.regs[..self.count.min(8)];
        let stored = self.per_lane.min(regs.len() * per_word);
        for lane in 0..WAVE_LANES {
            let from = source(lane);
            let first = base(lane);
            // Elements whose slot lies past `out` are dropped (none for a well-sized area).
            let room = out.len().saturating_sub(first).div_ceil(stride);
            let Some(dst) = out.get_mut(first..) else { continue };
            for e in 0..stored.min(room) {
                let word = regs[e / per_word][from] as u64;
                dst[e * stride] = dec((word >> ((e % per_word) * BITS)) & mask);
            }
        }
    }

    /// [`Self::unpack_with`] for any element width (fp6, f64).
    #[inline(always)]
    fn unpack_any(&self, out: &mut [f64], stride: usize, source: impl Fn(usize) -> usize, base: impl Fn(usize) -> usize, dec: impl Fn(u64) -> f64) {
        for lane in 0..WAVE_LANES {
            let words = lane_words(&self.regs, self.count, source(lane));
            let first = base(lane);
            for e in 0..self.per_lane {
                if let Some(slot) = out.get_mut(first + e * stride) {
                    *slot = dec(element(&words, e, self.bits));
                }
            }
        }
    }
}

/// Validates the modifiers of `d` on `target`; returns the A/B formats of f8f6f4 forms.
fn check_mods(d: &Desc, target: Target, m: &Mods) -> Option<(Option<F8f6f4>, Option<F8f6f4>)> {
    let gfx90a = target == Target::Gfx90a;
    if d.a == Elem::F8f6f4 {
        let (fa, fb) = (F8f6f4::from_code(m.cbsz)?, F8f6f4::from_code(m.blgp)?);
        return (m.abid == 0).then_some((Some(fa), Some(fb)));
    }
    if d.sparse {
        let sets = 32 / (2 * d.a_per_lane()).max(1);
        let ok = m.blgp == 0 && (m.cbsz != 0 || (m.abid as usize) < sets);
        return ok.then_some((None, None));
    }
    let log2_blocks = d.blocks.trailing_zeros();
    let broadcast = d.blocks > 1 && d.a != Elem::F64;
    let cbsz_ok = if broadcast { m.cbsz <= log2_blocks && m.abid < (1 << m.cbsz) } else { m.cbsz == 0 && m.abid == 0 };
    let blgp_ok = match d.a {
        // gfx942/gfx950: the bits are neg:[A,B,C].
        Elem::F64 => !gfx90a || m.blgp == 0,
        _ if gfx90a => true,
        Elem::F32 => true,
        _ => d.blocks > 1 || m.blgp == 0,
    };
    (cbsz_ok && blgp_ok).then_some((None, None))
}

thread_local! {
    /// The operand and accumulator area, allocated once per thread (it is 50 KiB: on the
    /// stack its zeroing and moves cost more than the arithmetic of a small MFMA).
    static WORK: std::cell::RefCell<Box<Work>> = std::cell::RefCell::new(Box::new(Work::new()));
}

/// An MFMA or SMFMAC.
fn mfma(w: &mut Wave, c: &CachedInst, pc: u64, target: Target, d: Desc) -> Result<(), ExecFault> {
    WORK.with_borrow_mut(|work| run_mfma(w, c, pc, target, d, work))
}

/// [`mfma`] in the thread's work area: every field of `work` the kernel reads is written
/// here first.
fn run_mfma(w: &mut Wave, c: &CachedInst, pc: u64, target: Target, d: Desc, work: &mut Work) -> Result<(), ExecFault> {
    let words = c.inst.words();
    let m = Mods::of(words);
    let Some((fmt_a, fmt_b)) = check_mods(&d, target, &m) else { return Err(illegal(c, pc)) };
    let fl = c.fields;
    let (src_a, src_b, src_c) = (fl.src[0], fl.src[1], fl.src[2]);
    if src_a < 256 || src_b < 256 {
        return Err(illegal(c, pc));
    }
    let scales = if d.scaled {
        match w.mfma_scales.take() {
            Some(s) if s.pc == pc => Some(s),
            _ => return Err(illegal(c, pc)),
        }
    } else {
        None
    };
    let neg = if d.a == Elem::F64 && target != Target::Gfx90a { m.blgp } else { 0 };
    let blgp = if d.a == Elem::F8f6f4 || d.a == Elem::F64 { 0 } else { m.blgp };
    let wide = d.a == Elem::F64;
    let (mm, blocks) = (d.m, d.blocks);

    work.m = mm;
    work.blocks = blocks;
    work.k = d.k;
    work.ka = if d.sparse { d.k / 2 } else { d.k };
    work.per_lane = d.a_per_lane();
    work.mode = match d.a {
        Elem::F64 => Accumulate::StepF64,
        Elem::F32 | Elem::Xf32 => Accumulate::StepF32,
        Elem::I8 => Accumulate::BlockI32,
        _ => Accumulate::BlockF32,
    };
    for (b, slot) in work.a_block.iter_mut().enumerate().take(blocks) {
        *slot = if d.sparse { b as u8 } else { layout::broadcast_block(b, m.cbsz, m.abid) as u8 };
    }

    // A (stored elements of each row in k order).
    let per_lane_a = d.a_per_lane();
    let a = Source::new(w, m.acc_a, src_a, Decode::of(d.a, target, fmt_a, neg & 1 != 0), fmt_a.map_or(d.a.bits(), F8f6f4::bits), per_lane_a);
    let ka = work.ka;
    // Lane l holds row l % M of block (l / M) % blocks, k-group l / (M * blocks).
    let (lm, lb) = (mm.trailing_zeros(), blocks.trailing_zeros());
    let split = |lane: usize| (lane & (mm - 1), (lane >> lm) & (blocks - 1), lane >> (lm + lb));
    a.unpack(&mut work.a, 1, |lane| lane, |lane| {
        let (i, block, group) = split(lane);
        (block * mm + i) * ka + group * per_lane_a
    });

    // B, transposed, through the lane pattern.
    let per_lane_b = d.b_per_lane();
    let b = Source::new(w, m.acc_b, src_b, Decode::of(d.b, target, fmt_b, neg & 2 != 0), fmt_b.map_or(d.b.bits(), F8f6f4::bits), per_lane_b);
    let k = d.k;
    b.unpack(&mut work.bt, mm, |lane| layout::blgp_lane(lane, blgp), |lane| {
        let (j, block, group) = split(lane);
        (block * k + group * per_lane_b) * mm + j
    });

    // Which B row each stored A element multiplies.
    if d.sparse {
        let index: [u32; WAVE_LANES] = match src_c {
            256.. => w.vgpr[(src_c - 256) as usize],
            128..=208 => [scalar_src(w, src_c, 0, false); WAVE_LANES],
            _ => return Err(illegal(c, pc)),
        };
        let set = if m.cbsz == 0 { m.abid as usize } else { 0 };
        for (lane, &bits) in index.iter().enumerate() {
            let (i, group) = (lane % mm, lane / mm);
            for e in 0..per_lane_a {
                let ka = group * per_lane_a + e;
                let pos = (bits >> ((2 * (e + per_lane_a * set)) % 32)) & 3;
                work.rows[i * work.ka + ka] = (4 * (ka / 2) + pos as usize) as u8;
            }
        }
    }

    work.scaled = scales.is_some();
    if let Some(s) = scales {
        work.scaled = true;
        for lane in 0..WAVE_LANES {
            work.scale_a[lane] = e8m0_to_f64(s.a[lane]);
            work.scale_b[lane] = e8m0_to_f64(s.b[lane]);
        }
    }

    // C: the accumulator (SMFMAC: D itself).
    let vdst = fl.vdst;
    let c_base = if d.sparse { Some(vdst) } else if src_c >= 256 { Some((src_c - 256) as usize) } else { None };
    let constant: u64 = match (c_base, src_c) {
        (Some(_), _) => 0,
        (None, 128..=208) if wide => scalar_src(w, src_c, 0, false) as i32 as i64 as u64,
        (None, 240..=248) if wide => inline_f64(src_c),
        (None, 128..=208 | 240..=248) => scalar_src(w, src_c, 0, false) as u64,
        _ => return Err(illegal(c, pc)),
    };
    let neg_c = if neg & 4 != 0 { 1u64 << 63 } else { 0 };
    let cd = file(w, m.acc_cd);
    for block in 0..blocks {
        for i in 0..mm {
            let (reg, lane0) = layout::d_row(mm, block, i, wide);
            let out = &mut work.acc[(block * mm + i) * mm..(block * mm + i + 1) * mm];
            match c_base {
                Some(base) if wide => {
                    let (lo, hi) = (&cd[base + 2 * reg], &cd[base + 2 * reg + 1]);
                    for (j, o) in out.iter_mut().enumerate() {
                        *o = (lo[lane0 + j] as u64 | (hi[lane0 + j] as u64) << 32) ^ neg_c;
                    }
                }
                Some(base) => {
                    let r = &cd[base + reg][lane0..lane0 + mm];
                    for (o, &v) in out.iter_mut().zip(r) {
                        *o = v as u64;
                    }
                }
                None => out.fill(constant ^ neg_c),
            }
        }
    }

    kernel::run(work);

    // D: every lane, EXEC ignored.
    let dst = if m.acc_cd { &mut w.agpr } else { &mut w.vgpr };
    let integer = work.mode == Accumulate::BlockI32;
    for block in 0..blocks {
        for i in 0..mm {
            let (reg, lane0) = layout::d_row(mm, block, i, wide);
            let out = &work.acc[(block * mm + i) * mm..(block * mm + i + 1) * mm];
            if wide {
                for half in 0..2 {
                    let r = &mut dst[vdst + 2 * reg + half];
                    for (j, &v) in out.iter().enumerate() {
                        r[lane0 + j] = (quiet_f64(f64::from_bits(v)).to_bits() >> (32 * half)) as u32;
                    }
                }
            } else {
                let r = &mut dst[vdst + reg][lane0..lane0 + mm];
                for (slot, &v) in r.iter_mut().zip(out) {
                    *slot = if integer { v as u32 } else { quiet_f32(f32::from_bits(v as u32)).to_bits() };
                }
            }
        }
    }
    Ok(())
}
