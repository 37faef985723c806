//! Pre-resolved forms of the hottest instructions, built once per [`Program`] slot.
//!
//! A [`FastOp`] names the operation by a dense [`Kind`] (one jump-table dispatch, instead
//! of matching the full opcode space) and carries its operands already decoded: VGPR and
//! SGPR indices, and inline constants and literals as their 32-bit values. The interpreter
//! loop runs a slot's `FastOp` when it has one and falls back to the general handlers when
//! there is none or when [`run`] declines (f32 arithmetic under a non-default MODE, or with
//! a NaN result, which the host would encode differently; with no NaN result the host's
//! IEEE arithmetic is exact).
//!
//! Only instructions without modifiers, DPP or SDWA are pre-resolved; their semantics are
//! those of the general handlers, which the exec tests compare against.
//!
//! [`Program`]: super::Program

#![allow(clippy::needless_range_loop)] // lane loops index lane arrays in lockstep

use crate::decode::{Encoding, Opcode};
use crate::numeric::valu::{fma_f32_rne, max_f32, min_f32};
use crate::numeric::{DenormMode, RoundMode};

use super::interp::{scalar_src, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use super::program::{CachedInst, Extension};
use super::program::Program;
use super::wave::{Wave, WaveStatus, WAVE_LANES};

const N: usize = WAVE_LANES;

/// A pre-decoded 32-bit source operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// `v<n>`.
    Vgpr(u8),
    /// Scalar slot `n` (SGPRs, VCC, M0, EXEC, ...).
    Sgpr(u8),
    /// An inline constant or literal, resolved.
    Const(u32),
    /// A source read at run time through the general operand decoder (`scc`, `vccz`, ...).
    Other(u16),
}

/// The operation of a [`FastOp`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    VMov,
    VNot,
    VAdd,
    VSub,
    VSubrev,
    VAnd,
    VOr,
    VXor,
    VLshlrev,
    VLshrrev,
    VAshrrev,
    VMulLo,
    VMulU24,
    VMinU,
    VMaxU,
    VAddF,
    VSubF,
    VMulF,
    VMaxF,
    VMinF,
    VFma,
    VFmac,
    VMadU24,
    VAdd3,
    VLshlAdd,
    VLshlOr,
    VAndOr,
    VOr3,
    VCndmask,
    /// `s_nop`, `s_waitcnt` and the other functional no-ops.
    SNop,
    SBranch,
    SCbranchScc0,
    SCbranchScc1,
    SCbranchVccz,
    SCbranchVccnz,
    SCbranchExecz,
    SCbranchExecnz,
    SAddU32,
    SSubU32,
    SAddI32,
    SSubI32,
    SAndB32,
    SOrB32,
    SXorB32,
    SLshlB32,
    SLshrB32,
    SMulI32,
    SMovB32,
    SCmpEq,
    SCmpLg,
    SCmpGtI32,
    SCmpGeI32,
    SCmpLtI32,
    SCmpLeI32,
    SCmpGtU32,
    SCmpGeU32,
    SCmpLtU32,
    SCmpLeU32,
}

/// One pre-resolved instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct FastOp {
    kind: Kind,
    /// Destination VGPR or scalar slot.
    dst: u8,
    src: [Src; 3],
    /// Branch displacement in bytes from the next instruction.
    offset: i32,
}

/// A source of the 9-bit VALU / 8-bit scalar operand space, resolved as far as it is
/// static. `literal` is the instruction's literal dword.
fn resolve_src(code: u32, literal: u32) -> Src {
    match code {
        0..=127 => Src::Sgpr(code as u8),
        128..=208 | 240..=248 => Src::Const(scalar_src_static(code)),
        235 | 236 => Src::Const(SHARED_APERTURE_HI),
        237 | 238 => Src::Const(PRIVATE_APERTURE_HI),
        255 => Src::Const(literal),
        256..=511 => Src::Vgpr((code - 256) as u8),
        _ => Src::Other(code as u16),
    }
}

/// The value of an inline integer or f32 constant code.
fn scalar_src_static(code: u32) -> u32 {
    match code {
        128..=192 => code - 128,
        193..=208 => (192i32 - code as i32) as u32,
        _ => super::interp::inline_f32(code),
    }
}

/// The pre-resolved form of `c`, if it has one.
pub(crate) fn resolve(c: &CachedInst) -> Option<FastOp> {
    if c.ext != Extension::None {
        return None;
    }
    match c.enc {
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vop3 => resolve_valu(c),
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc | Encoding::Sopp => resolve_scalar(c),
        _ => None,
    }
}

fn resolve_valu(c: &CachedInst) -> Option<FastOp> {
    use Opcode as O;
    let fl = &c.fields;
    if !fl.plain {
        return None;
    }
    let kind = match c.op {
        O::VMovB32E32 | O::VMovB32E64 => Kind::VMov,
        O::VNotB32E32 => Kind::VNot,
        O::VAddU32E32 | O::VAddU32E64 => Kind::VAdd,
        O::VSubU32E32 | O::VSubU32E64 => Kind::VSub,
        O::VSubrevU32E32 | O::VSubrevU32E64 => Kind::VSubrev,
        O::VAndB32E32 | O::VAndB32E64 => Kind::VAnd,
        O::VOrB32E32 | O::VOrB32E64 => Kind::VOr,
        O::VXorB32E32 | O::VXorB32E64 => Kind::VXor,
        O::VLshlrevB32E32 | O::VLshlrevB32E64 => Kind::VLshlrev,
        O::VLshrrevB32E32 | O::VLshrrevB32E64 => Kind::VLshrrev,
        O::VAshrrevI32E32 | O::VAshrrevI32E64 => Kind::VAshrrev,
        O::VMulLoU32 => Kind::VMulLo,
        O::VMulU32U24E32 => Kind::VMulU24,
        O::VMinU32E32 => Kind::VMinU,
        O::VMaxU32E32 => Kind::VMaxU,
        O::VAddF32E32 | O::VAddF32E64 => Kind::VAddF,
        O::VSubF32E32 | O::VSubF32E64 => Kind::VSubF,
        O::VMulF32E32 | O::VMulF32E64 => Kind::VMulF,
        O::VMaxF32E32 | O::VMaxF32E64 => Kind::VMaxF,
        O::VMinF32E32 | O::VMinF32E64 => Kind::VMinF,
        O::VFmaF32 => Kind::VFma,
        O::VFmacF32E32 => Kind::VFmac,
        O::VMadU32U24 => Kind::VMadU24,
        O::VAdd3U32 => Kind::VAdd3,
        O::VLshlAddU32 => Kind::VLshlAdd,
        O::VLshlOrB32 => Kind::VLshlOr,
        O::VAndOrB32 => Kind::VAndOr,
        O::VOr3B32 => Kind::VOr3,
        O::VCndmaskB32E32 => Kind::VCndmask,
        // D = S0 * K + S1 and D = S0 * S1 + K: an fma with the literal K as an operand.
        O::VFmamkF32 => {
            let src = [resolve_src(fl.src[0], fl.literal), Src::Const(fl.literal), resolve_src(fl.src[1], fl.literal)];
            return Some(FastOp { kind: Kind::VFma, dst: (fl.vdst & 255) as u8, src, offset: 0 });
        }
        O::VFmaakF32 => {
            let src = [resolve_src(fl.src[0], fl.literal), resolve_src(fl.src[1], fl.literal), Src::Const(fl.literal)];
            return Some(FastOp { kind: Kind::VFma, dst: (fl.vdst & 255) as u8, src, offset: 0 });
        }
        _ => return None,
    };
    let src = fl.src.map(|s| resolve_src(s, fl.literal));
    Some(FastOp { kind, dst: (fl.vdst & 255) as u8, src, offset: 0 })
}

fn resolve_scalar(c: &CachedInst) -> Option<FastOp> {
    use Opcode as O;
    let word = c.inst.words()[0];
    let literal = c.inst.literal().unwrap_or(0);
    let s0 = resolve_src(word & 0xff, literal);
    let s1 = resolve_src((word >> 8) & 0xff, literal);
    let sdst = ((word >> 16) & 0x7f) as u8;
    let simm = (word & 0xffff) as i16 as i32;
    let (kind, dst, src, offset) = match c.op {
        O::SNop | O::SWaitcnt | O::SSetprio | O::SIncperflevel | O::SDecperflevel | O::STtracedata => (Kind::SNop, 0, [s0; 3], 0),
        O::SBranch => (Kind::SBranch, 0, [s0; 3], simm * 4),
        O::SCbranchScc0 => (Kind::SCbranchScc0, 0, [s0; 3], simm * 4),
        O::SCbranchScc1 => (Kind::SCbranchScc1, 0, [s0; 3], simm * 4),
        O::SCbranchVccz => (Kind::SCbranchVccz, 0, [s0; 3], simm * 4),
        O::SCbranchVccnz => (Kind::SCbranchVccnz, 0, [s0; 3], simm * 4),
        O::SCbranchExecz => (Kind::SCbranchExecz, 0, [s0; 3], simm * 4),
        O::SCbranchExecnz => (Kind::SCbranchExecnz, 0, [s0; 3], simm * 4),
        op => {
            let kind = match op {
                O::SAddU32 => Kind::SAddU32,
                O::SSubU32 => Kind::SSubU32,
                O::SAddI32 => Kind::SAddI32,
                O::SSubI32 => Kind::SSubI32,
                O::SAndB32 => Kind::SAndB32,
                O::SOrB32 => Kind::SOrB32,
                O::SXorB32 => Kind::SXorB32,
                O::SLshlB32 => Kind::SLshlB32,
                O::SLshrB32 => Kind::SLshrB32,
                O::SMulI32 => Kind::SMulI32,
                O::SMovB32 => Kind::SMovB32,
                O::SCmpEqI32 | O::SCmpEqU32 => Kind::SCmpEq,
                O::SCmpLgI32 | O::SCmpLgU32 => Kind::SCmpLg,
                O::SCmpGtI32 => Kind::SCmpGtI32,
                O::SCmpGeI32 => Kind::SCmpGeI32,
                O::SCmpLtI32 => Kind::SCmpLtI32,
                O::SCmpLeI32 => Kind::SCmpLeI32,
                O::SCmpGtU32 => Kind::SCmpGtU32,
                O::SCmpGeU32 => Kind::SCmpGeU32,
                O::SCmpLtU32 => Kind::SCmpLtU32,
                O::SCmpLeU32 => Kind::SCmpLeU32,
                _ => return None,
            };
            (kind, sdst, [s0, s1, s0], 0)
        }
    };
    Some(FastOp { kind, dst, src, offset })
}

/// Runs pre-resolved instructions from `w.pc` for as long as they last: until `budget`
/// is spent, the PC reaches a slot without a [`FastOp`] (or outside the program), or a
/// `FastOp` declines. Each executed instruction decrements `budget` and counts in
/// `counts` (indexed by opcode). The instruction at the PC it stops at is left for the
/// general handlers (which also report bad PCs).
pub(crate) type BurstFn = unsafe fn(&mut Wave, &Program, &mut u64, &mut [u64]);

/// The best [`BurstFn`] for this CPU.
pub(crate) fn host_burst_fn() -> BurstFn {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return burst_avx2;
        }
    }
    burst_portable
}

/// [`burst`] for any CPU.
///
/// # Safety
/// None needed (the type is `unsafe fn` only to share [`BurstFn`] with [`burst_avx2`]).
unsafe fn burst_portable(w: &mut Wave, program: &Program, budget: &mut u64, counts: &mut [u64]) {
    burst::<false>(w, program, budget, counts)
}

/// [`burst`] compiled for AVX2 and FMA, using the host's fused multiply-add.
///
/// # Safety
/// The CPU must support AVX2 and FMA; [`host_burst_fn`] returns it only then.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn burst_avx2(w: &mut Wave, program: &Program, budget: &mut u64, counts: &mut [u64]) {
    burst::<true>(w, program, budget, counts)
}

#[inline(always)]
fn burst<const HW_FMA: bool>(w: &mut Wave, program: &Program, budget: &mut u64, counts: &mut [u64]) {
    if w.status != WaveStatus::Running {
        return;
    }
    // Pre-resolved instructions never change the wave's status.
    while *budget != 0 {
        let pc = w.pc;
        let Some(c) = program.valid_slot(pc) else { return };
        let Some(op) = &c.fast else { return };
        w.pc = pc.wrapping_add(c.size as u64);
        if !run::<HW_FMA>(w, op) {
            w.pc = pc;
            return;
        }
        *budget -= 1;
        if let Some(n) = counts.get_mut(c.inst.opcode() as usize) {
            *n += 1;
        }
    }
}

/// The 64 lanes `f(0..64)`, written with a plain counted loop (inlined, so it vectorizes
/// under the caller's target features).
#[inline(always)]
fn build(f: impl Fn(usize) -> u32) -> [u32; N] {
    let mut out = [0u32; N];
    for i in 0..N {
        out[i] = f(i);
    }
    out
}

/// All ones in the lanes of `mask` that are set, zero in the others. Each half of the
/// mask is shifted so that lane `i`'s bit lands in the sign bit, then spread by an
/// arithmetic shift: constant per-lane shift counts, which vectorize (one variable
/// shift pair per eight lanes) where a per-lane `(mask >> i) & 1` stays scalar.
#[inline(always)]
fn lane_masks(mask: u64) -> [u32; N] {
    let halves = [mask as u32, (mask >> 32) as u32];
    let mut out = [0u32; N];
    for i in 0..N {
        out[i] = (((halves[i / 32] << (31 - (i % 32))) as i32) >> 31) as u32;
    }
    out
}

/// A source for all lanes (a copy of the VGPR, or the scalar value broadcast).
#[inline(always)]
fn lanes(w: &Wave, s: Src) -> [u32; N] {
    match s {
        Src::Vgpr(r) => w.vgpr[r as usize],
        other => [scalar(w, other); N],
    }
}

/// A scalar source's value.
#[inline(always)]
fn scalar(w: &Wave, s: Src) -> u32 {
    match s {
        Src::Sgpr(r) => w.sgpr[r as usize & 127],
        Src::Const(v) => v,
        // Only reached for VALU sources, which callers broadcast with `lanes`; the first
        // lane stands for all of them.
        Src::Vgpr(r) => w.vgpr[r as usize][0],
        Src::Other(code) => scalar_src(w, code as u32, 0, false),
    }
}

/// Writes `out` to `v<dst>` under EXEC.
#[inline(always)]
fn write(w: &mut Wave, dst: u8, out: &[u32; N]) {
    let exec = w.exec();
    let reg = &mut w.vgpr[dst as usize];
    if exec == u64::MAX {
        // A counted loop (vector moves) rather than a block copy, so that the next
        // instruction's loads of this register forward from these stores.
        #[allow(clippy::manual_memcpy)]
        for i in 0..N {
            reg[i] = out[i];
        }
    } else {
        let m = lane_masks(exec);
        for i in 0..N {
            reg[i] = (out[i] & m[i]) | (reg[i] & !m[i]);
        }
    }
}

#[inline(always)]
fn map1(w: &mut Wave, op: &FastOp, f: impl Fn(u32) -> u32) -> bool {
    let out: [u32; N] = match op.src[0] {
        Src::Vgpr(a) => {
            let a = &w.vgpr[a as usize];
            build(|i| f(a[i]))
        }
        s => [f(scalar(w, s)); N],
    };
    write(w, op.dst, &out);
    true
}

/// `f` over two sources, specialised on which are VGPRs so that no operand is copied.
/// Under a full EXEC the result is written in place (also when the destination is one of
/// the sources: each lane reads its operands before it writes).
#[inline(always)]
fn map2(w: &mut Wave, op: &FastOp, f: impl Fn(u32, u32) -> u32) -> bool {
    map2_impl::<false>(w, op, f)
}

/// [`map2`] for f32 arithmetic: declines (writing nothing) when a result lane is a NaN.
#[inline(always)]
fn map2_f32(w: &mut Wave, op: &FastOp, f: impl Fn(u32, u32) -> u32) -> bool {
    map2_impl::<true>(w, op, f)
}

/// The 64 lanes `f(0..64)` (as [`build`]) and, with `NAN_CHECK`, whether one of them is
/// a NaN: one pass that computes and checks, for the f32 operations that decline on NaN
/// results.
#[inline(always)]
fn build_checked<const NAN_CHECK: bool>(f: impl Fn(usize) -> u32) -> ([u32; N], bool) {
    let mut out = [0u32; N];
    let mut nan = 0u32;
    for i in 0..N {
        let r = f(i);
        out[i] = r;
        if NAN_CHECK {
            nan |= ((r & 0x7fff_ffff) > 0x7f80_0000) as u32;
        }
    }
    (out, nan != 0)
}

#[inline(always)]
fn map2_impl<const F32: bool>(w: &mut Wave, op: &FastOp, f: impl Fn(u32, u32) -> u32) -> bool {
    if !F32 && w.exec() == u64::MAX {
        let d = op.dst as usize;
        match (op.src[0], op.src[1]) {
            (Src::Vgpr(a), Src::Vgpr(b)) => {
                let (a, b) = (a as usize, b as usize);
                if d == a && d != b {
                    if let Ok([dr, br]) = w.vgpr.get_disjoint_mut([d, b]) {
                        for i in 0..N {
                            dr[i] = f(dr[i], br[i]);
                        }
                        return true;
                    }
                } else if d == b && d != a {
                    if let Ok([dr, ar]) = w.vgpr.get_disjoint_mut([d, a]) {
                        for i in 0..N {
                            dr[i] = f(ar[i], dr[i]);
                        }
                        return true;
                    }
                } else if let Ok([dr, ar, br]) = w.vgpr.get_disjoint_mut([d, a, b]) {
                    for i in 0..N {
                        dr[i] = f(ar[i], br[i]);
                    }
                    return true;
                }
            }
            (s, Src::Vgpr(b)) => {
                let x = scalar(w, s);
                let b = b as usize;
                if d == b {
                    let dr = &mut w.vgpr[d];
                    for i in 0..N {
                        dr[i] = f(x, dr[i]);
                    }
                    return true;
                } else if let Ok([dr, br]) = w.vgpr.get_disjoint_mut([d, b]) {
                    for i in 0..N {
                        dr[i] = f(x, br[i]);
                    }
                    return true;
                }
            }
            _ => {}
        }
    }
    let out = match (op.src[0], op.src[1]) {
        (Src::Vgpr(a), Src::Vgpr(b)) => {
            let (a, b) = (&w.vgpr[a as usize], &w.vgpr[b as usize]);
            build_checked::<F32>(|i| f(a[i], b[i]))
        }
        (s, Src::Vgpr(b)) => {
            let (x, b) = (scalar(w, s), &w.vgpr[b as usize]);
            build_checked::<F32>(|i| f(x, b[i]))
        }
        (Src::Vgpr(a), t) => {
            let (a, y) = (&w.vgpr[a as usize], scalar(w, t));
            build_checked::<F32>(|i| f(a[i], y))
        }
        (s, t) => build_checked::<F32>(|_| f(scalar(w, s), scalar(w, t))),
    };
    if out.1 {
        return false;
    }
    write(w, op.dst, &out.0);
    true
}

/// `f` over three sources; the all-VGPR form reads the registers in place, the others
/// broadcast their scalar operands.
#[inline(always)]
fn map3(w: &mut Wave, op: &FastOp, c: Src, f: impl Fn(u32, u32, u32) -> u32) -> bool {
    map3_impl::<false>(w, op, c, f)
}

/// [`map3`] for f32 arithmetic: declines (writing nothing) when a result lane is a NaN.
#[inline(always)]
fn map3_f32(w: &mut Wave, op: &FastOp, c: Src, f: impl Fn(u32, u32, u32) -> u32) -> bool {
    map3_impl::<true>(w, op, c, f)
}

#[inline(always)]
fn map3_impl<const F32: bool>(w: &mut Wave, op: &FastOp, c: Src, f: impl Fn(u32, u32, u32) -> u32) -> bool {
    // In place under a full EXEC for the accumulate shape `d = f(a, b, d)` (v_fma, v_fmac,
    // v_mad with the destination as addend) and for three distinct sources.
    if let (false, Src::Vgpr(a), Src::Vgpr(b), Src::Vgpr(c)) = (F32, op.src[0], op.src[1], c) {
        if w.exec() == u64::MAX {
            let (d, a, b, c) = (op.dst as usize, a as usize, b as usize, c as usize);
            if d == c {
                if let Ok([dr, ar, br]) = w.vgpr.get_disjoint_mut([d, a, b]) {
                    for i in 0..N {
                        dr[i] = f(ar[i], br[i], dr[i]);
                    }
                    return true;
                }
            } else if let Ok([dr, ar, br, cr]) = w.vgpr.get_disjoint_mut([d, a, b, c]) {
                for i in 0..N {
                    dr[i] = f(ar[i], br[i], cr[i]);
                }
                return true;
            }
        }
    }
    // VGPR sources are read in place and scalar ones broadcast inside the loop, for the
    // shapes compilers emit (v_fma with an SGPR and a constant, v_fmamk, v_fmac with a
    // constant); the rarer shapes copy their sources.
    let out = match (op.src[0], op.src[1], c) {
        (Src::Vgpr(a), Src::Vgpr(b), Src::Vgpr(c)) => {
            let (a, b, c) = (&w.vgpr[a as usize], &w.vgpr[b as usize], &w.vgpr[c as usize]);
            build_checked::<F32>(|i| f(a[i], b[i], c[i]))
        }
        (Src::Vgpr(a), Src::Vgpr(b), z) => {
            let (a, b, z) = (&w.vgpr[a as usize], &w.vgpr[b as usize], scalar(w, z));
            build_checked::<F32>(|i| f(a[i], b[i], z))
        }
        (Src::Vgpr(a), y, Src::Vgpr(c)) => {
            let (a, y, c) = (&w.vgpr[a as usize], scalar(w, y), &w.vgpr[c as usize]);
            build_checked::<F32>(|i| f(a[i], y, c[i]))
        }
        (x, Src::Vgpr(b), Src::Vgpr(c)) => {
            let (x, b, c) = (scalar(w, x), &w.vgpr[b as usize], &w.vgpr[c as usize]);
            build_checked::<F32>(|i| f(x, b[i], c[i]))
        }
        (Src::Vgpr(a), y, z) => {
            let (a, y, z) = (&w.vgpr[a as usize], scalar(w, y), scalar(w, z));
            build_checked::<F32>(|i| f(a[i], y, z))
        }
        (a, b, c) => {
            let a = lanes(w, a);
            let b = lanes(w, b);
            let c = lanes(w, c);
            build_checked::<F32>(|i| f(a[i], b[i], c[i]))
        }
    };
    if out.1 {
        return false;
    }
    write(w, op.dst, &out.0);
    true
}

#[inline(always)]
fn fl(x: u32) -> f32 {
    f32::from_bits(x)
}

/// Sets a scalar destination and SCC.
#[inline(always)]
fn sdst(w: &mut Wave, op: &FastOp, v: u32, scc: bool) -> bool {
    w.set_sgpr(op.dst as usize, v);
    w.scc = scc;
    true
}

#[inline(always)]
fn branch(w: &mut Wave, op: &FastOp, take: bool) -> bool {
    if take {
        w.pc = w.pc.wrapping_add(op.offset as i64 as u64);
    }
    true
}

/// Runs `op`; `w.pc` already points at the next instruction. Returns false, with the wave
/// unchanged, when the general handler must run (f32 arithmetic outside plain IEEE MODE).
#[inline(always)]
fn run<const HW_FMA: bool>(w: &mut Wave, op: &FastOp) -> bool {
    let plain = || w.mode.round_f32 == RoundMode::NearestEven && w.mode.denorm_f32 == DenormMode::FlushNone;
    let ieee = w.mode.ieee;
    let fma = |x: f32, y: f32, z: f32| if HW_FMA { x.mul_add(y, z) } else { fma_f32_rne(x, y, z) };
    let scalar2 = |w: &Wave| (scalar(w, op.src[0]), scalar(w, op.src[1]));
    match op.kind {
        Kind::VMov => map1(w, op, |x| x),
        Kind::VNot => map1(w, op, |x| !x),
        Kind::VAdd => map2(w, op, u32::wrapping_add),
        Kind::VSub => map2(w, op, u32::wrapping_sub),
        Kind::VSubrev => map2(w, op, |x, y| y.wrapping_sub(x)),
        Kind::VAnd => map2(w, op, |x, y| x & y),
        Kind::VOr => map2(w, op, |x, y| x | y),
        Kind::VXor => map2(w, op, |x, y| x ^ y),
        Kind::VLshlrev => map2(w, op, |x, y| y << (x & 31)),
        Kind::VLshrrev => map2(w, op, |x, y| y >> (x & 31)),
        Kind::VAshrrev => map2(w, op, |x, y| ((y as i32) >> (x & 31)) as u32),
        Kind::VMulLo => map2(w, op, u32::wrapping_mul),
        Kind::VMulU24 => map2(w, op, |x, y| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
        Kind::VMinU => map2(w, op, u32::min),
        Kind::VMaxU => map2(w, op, u32::max),
        Kind::VAddF if plain() => map2_f32(w, op, |x, y| (fl(x) + fl(y)).to_bits()),
        Kind::VSubF if plain() => map2_f32(w, op, |x, y| (fl(x) - fl(y)).to_bits()),
        Kind::VMulF if plain() => map2_f32(w, op, |x, y| (fl(x) * fl(y)).to_bits()),
        Kind::VMaxF if plain() => minmax::<true>(w, op, ieee),
        Kind::VMinF if plain() => minmax::<false>(w, op, ieee),
        Kind::VFma if plain() => map3_f32(w, op, op.src[2], |x, y, z| fma(fl(x), fl(y), fl(z)).to_bits()),
        Kind::VFmac if plain() => map3_f32(w, op, Src::Vgpr(op.dst), |x, y, z| fma(fl(x), fl(y), fl(z)).to_bits()),
        Kind::VAddF | Kind::VSubF | Kind::VMulF | Kind::VMaxF | Kind::VMinF | Kind::VFma | Kind::VFmac => false,
        Kind::VMadU24 => map3(w, op, op.src[2], |x, y, z| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff).wrapping_add(z)),
        Kind::VAdd3 => map3(w, op, op.src[2], |x, y, z| x.wrapping_add(y).wrapping_add(z)),
        Kind::VLshlAdd => map3(w, op, op.src[2], |x, y, z| (x << (y & 31)).wrapping_add(z)),
        Kind::VLshlOr => map3(w, op, op.src[2], |x, y, z| (x << (y & 31)) | z),
        Kind::VAndOr => map3(w, op, op.src[2], |x, y, z| (x & y) | z),
        Kind::VOr3 => map3(w, op, op.src[2], |x, y, z| x | y | z),
        Kind::VCndmask => {
            let vcc = w.vcc();
            let a = lanes(w, op.src[0]);
            let b = lanes(w, op.src[1]);
            let m = lane_masks(vcc);
            let out: [u32; N] = build(|i| (b[i] & m[i]) | (a[i] & !m[i]));
            write(w, op.dst, &out);
            true
        }
        Kind::SNop => true,
        Kind::SBranch => branch(w, op, true),
        Kind::SCbranchScc0 => branch(w, op, !w.scc),
        Kind::SCbranchScc1 => branch(w, op, w.scc),
        Kind::SCbranchVccz => branch(w, op, w.vcc() == 0),
        Kind::SCbranchVccnz => branch(w, op, w.vcc() != 0),
        Kind::SCbranchExecz => branch(w, op, w.exec() == 0),
        Kind::SCbranchExecnz => branch(w, op, w.exec() != 0),
        Kind::SAddU32 => {
            let (a, b) = scalar2(w);
            let (r, c) = a.overflowing_add(b);
            sdst(w, op, r, c)
        }
        Kind::SSubU32 => {
            let (a, b) = scalar2(w);
            let (r, c) = a.overflowing_sub(b);
            sdst(w, op, r, c)
        }
        Kind::SAddI32 => {
            let (a, b) = scalar2(w);
            let (r, o) = (a as i32).overflowing_add(b as i32);
            sdst(w, op, r as u32, o)
        }
        Kind::SSubI32 => {
            let (a, b) = scalar2(w);
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            sdst(w, op, r as u32, o)
        }
        Kind::SAndB32 => {
            let (a, b) = scalar2(w);
            sdst(w, op, a & b, a & b != 0)
        }
        Kind::SOrB32 => {
            let (a, b) = scalar2(w);
            sdst(w, op, a | b, a | b != 0)
        }
        Kind::SXorB32 => {
            let (a, b) = scalar2(w);
            sdst(w, op, a ^ b, a ^ b != 0)
        }
        Kind::SLshlB32 => {
            let (a, b) = scalar2(w);
            let r = a << (b & 31);
            sdst(w, op, r, r != 0)
        }
        Kind::SLshrB32 => {
            let (a, b) = scalar2(w);
            let r = a >> (b & 31);
            sdst(w, op, r, r != 0)
        }
        Kind::SMulI32 => {
            let (a, b) = scalar2(w);
            let scc = w.scc;
            sdst(w, op, (a as i32).wrapping_mul(b as i32) as u32, scc)
        }
        Kind::SMovB32 => {
            let a = scalar(w, op.src[0]);
            w.set_sgpr(op.dst as usize, a);
            true
        }
        Kind::SCmpEq => cmp(w, op, |a, b| a == b),
        Kind::SCmpLg => cmp(w, op, |a, b| a != b),
        Kind::SCmpGtI32 => cmp(w, op, |a, b| (a as i32) > (b as i32)),
        Kind::SCmpGeI32 => cmp(w, op, |a, b| (a as i32) >= (b as i32)),
        Kind::SCmpLtI32 => cmp(w, op, |a, b| (a as i32) < (b as i32)),
        Kind::SCmpLeI32 => cmp(w, op, |a, b| (a as i32) <= (b as i32)),
        Kind::SCmpGtU32 => cmp(w, op, |a, b| a > b),
        Kind::SCmpGeU32 => cmp(w, op, |a, b| a >= b),
        Kind::SCmpLtU32 => cmp(w, op, |a, b| a < b),
        Kind::SCmpLeU32 => cmp(w, op, |a, b| a <= b),
    }
}

/// `v_max_f32` (`MAX`) or `v_min_f32` without modifiers. When no lane holds a NaN the
/// rules of [`max_f32`]/[`min_f32`] reduce to a compare-and-select plus the signed-zero
/// rule (max of two zeros is +0 unless both are -0: the AND of the bits; min: the OR),
/// which vectorizes; otherwise every lane goes through the exact scalar rules.
#[inline(always)]
fn minmax<const MAX: bool>(w: &mut Wave, op: &FastOp, ieee: bool) -> bool {
    let a = lanes(w, op.src[0]);
    let b = lanes(w, op.src[1]);
    let mut nan = 0u32;
    for i in 0..N {
        nan |= ((a[i] & 0x7fff_ffff) > 0x7f80_0000) as u32 | ((b[i] & 0x7fff_ffff) > 0x7f80_0000) as u32;
    }
    let out = if nan != 0 {
        build(|i| if MAX { max_f32(fl(a[i]), fl(b[i]), ieee) } else { min_f32(fl(a[i]), fl(b[i]), ieee) }.to_bits())
    } else {
        // Branch-free: all-ones masks instead of selects, so the lanes vectorize.
        build(|i| {
            let both_zero = (((a[i] | b[i]) & 0x7fff_ffff == 0) as u32).wrapping_neg();
            let pick_a = ((if MAX { fl(a[i]) >= fl(b[i]) } else { fl(a[i]) < fl(b[i]) }) as u32).wrapping_neg();
            let zero = if MAX { a[i] & b[i] } else { a[i] | b[i] };
            let picked = (a[i] & pick_a) | (b[i] & !pick_a);
            (zero & both_zero) | (picked & !both_zero)
        })
    };
    write(w, op.dst, &out);
    true
}

#[inline(always)]
fn cmp(w: &mut Wave, op: &FastOp, f: impl Fn(u32, u32) -> bool) -> bool {
    w.scc = f(scalar(w, op.src[0]), scalar(w, op.src[1]));
    true
}
