//! Runs the pre-resolved instructions of a [`Program`] ([`FastOp`]s) in straight-line
//! runs, with the best code for the host CPU.
//!
//! One call ([`BurstFn`]) executes runs from the table of [`FastSlot`](super::fast::FastSlot)s for as long as
//! they last. A run is checked once when it starts (PC inside `.text` and aligned, budget,
//! every VGPR it names allocated); its instructions then follow one another without
//! looking the PC up again. MODE is read once per call: no pre-resolved instruction
//! changes it.
//!
//! Lane loops work in chunks of eight lanes (one AVX2 register) that read their operands
//! before they write the destination, so a destination that is also a source is updated in
//! place without copying any register, and the chunks vectorize without alias checks.
//! f32 arithmetic computes all 64 results before it writes any: the operation declines
//! (writes nothing, and the general handler runs it) when a result is a NaN, whose
//! encoding the host would choose differently.

#![allow(clippy::needless_range_loop)] // lane loops index lane arrays in lockstep

use crate::numeric::valu::{fma_f32_rne, max_f32, min_f32};
use crate::numeric::{DenormMode, RoundMode};

use super::fast::{FastOp, Kind, Src};
use super::operands::{icmp, scalar_src};
use super::program::Program;
use super::wave::{Wave, WaveStatus, WAVE_LANES};

const N: usize = WAVE_LANES;
/// Lanes per chunk of a lane loop: eight u32, one AVX2 register.
const C: usize = 8;
/// Chunks per register.
const CHUNKS: usize = N / C;

/// Runs straight-line runs of pre-resolved instructions from `w.pc` for as long as they
/// last: until `budget` is spent, the PC reaches a slot without a [`FastOp`] (or outside
/// the program, or a run naming VGPRs the wave does not have), or an operation declines.
/// Each executed instruction decrements `budget` and counts in `counts` (indexed by
/// opcode; empty: no counting). The instruction at the PC it stops at is left for the
/// general handlers (which also report bad PCs).
pub(crate) type BurstFn = unsafe fn(&mut Wave, &Program, &mut u64, &mut [u64]);

/// The best [`BurstFn`] for this CPU.
pub(crate) fn host_burst_fn() -> BurstFn {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
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

/// What an operation did.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Flow {
    /// Done; the next instruction follows.
    Next,
    /// Nothing was written: the general handler must run the instruction.
    Decline,
    /// A branch, taken or not (it ends the run).
    Jump(bool),
}

/// The MODE facts of f32 arithmetic, read once per burst.
#[derive(Copy, Clone)]
struct Fp {
    /// Round to nearest even, denormals kept: the host's IEEE arithmetic is exact.
    plain: bool,
    /// MODE.ieee (NaN rules of min/max).
    ieee: bool,
}

#[inline(always)]
fn burst<const HW_FMA: bool>(
    w: &mut Wave,
    program: &Program,
    budget: &mut u64,
    counts: &mut [u64],
) {
    // Counting is decided once per call: the loop without it stays as short as it was.
    if counts.is_empty() {
        runs::<HW_FMA, false>(w, program, budget, counts)
    } else {
        runs::<HW_FMA, true>(w, program, budget, counts)
    }
}

/// [`burst`], counting each executed instruction in `counts` when `COUNT`.
#[inline(always)]
fn runs<const HW_FMA: bool, const COUNT: bool>(
    w: &mut Wave,
    program: &Program,
    budget: &mut u64,
    counts: &mut [u64],
) {
    // VGPR indexing (MODE.GPR_IDX_EN) changes the registers VALU instructions name; the
    // general handlers apply it.
    if w.status != WaveStatus::Running || w.gpr_idx_enabled() {
        return;
    }
    // Pre-resolved instructions change neither MODE nor the wave's status.
    let fp = Fp {
        plain: w.mode.round_f32 == RoundMode::NearestEven
            && w.mode.denorm_f32 == DenormMode::FlushNone,
        ieee: w.mode.ieee,
    };
    let table = program.fast_table();
    let text = program.text_start();
    let slot_pc = |s: usize| text.wrapping_add(4 * s as u64);
    while *budget != 0 {
        let off = w.pc.wrapping_sub(text);
        if !off.is_multiple_of(4) {
            return;
        }
        let Some(head) = usize::try_from(off / 4).ok().and_then(|s| table.get(s)) else {
            return;
        };
        if head.run == 0 || w.vgpr.len() < head.vgprs as usize {
            return;
        }
        let start = (off / 4) as usize;
        let n = (head.run as u64).min(*budget) as usize;
        let (mut s, mut done, mut flow) = (start, 0usize, Flow::Next);
        while done < n {
            let Some(e) = table.get(s) else { break };
            flow = run::<HW_FMA>(w, &e.op, fp);
            if COUNT && flow != Flow::Decline {
                if let Some(c) = counts.get_mut(e.opcode as usize) {
                    *c += 1;
                }
            }
            match flow {
                Flow::Next => s += e.step as usize,
                Flow::Decline => break,
                Flow::Jump(taken) => {
                    let next = slot_pc(s + e.step as usize);
                    w.pc = if taken {
                        next.wrapping_add(e.op.offset as i64 as u64)
                    } else {
                        next
                    };
                    done += 1;
                    break;
                }
            }
            done += 1;
        }
        *budget -= done as u64;
        match flow {
            Flow::Next => w.pc = slot_pc(s),
            Flow::Decline => {
                w.pc = slot_pc(s);
                return;
            }
            Flow::Jump(_) => {}
        }
    }
}

/// A lane-loop operand: VGPR `reg`, or `value` in every lane (which of the two is a
/// compile-time parameter of the loops).
#[derive(Copy, Clone)]
struct Lanes {
    reg: usize,
    value: u32,
}

/// The operand `s`, and whether it is a VGPR.
#[inline(always)]
fn operand(w: &Wave, s: Src) -> (Lanes, bool) {
    match s {
        Src::Vgpr(r) => (
            Lanes {
                reg: r as usize,
                value: 0,
            },
            true,
        ),
        other => (
            Lanes {
                reg: 0,
                value: scalar(w, other),
            },
            false,
        ),
    }
}

/// Unchecked access to a wave's VGPRs for the lane loops, which run without a bounds check
/// per register and without borrowing a source while they write the destination.
///
/// Invariant: every register index it is given names an allocated register. The indices
/// come from the [`FastOp`]s of one run, whose [`FastSlot::vgprs`](super::fast::FastSlot::vgprs) (computed by
/// [`table`](super::fast::table) over every operation of the run) [`burst`] checks
/// against the wave's allocation before the run starts.
#[derive(Copy, Clone)]
struct Regs(*mut u32);

impl Regs {
    /// The VGPRs of `w`.
    #[inline(always)]
    fn of(w: &mut Wave) -> Regs {
        Regs(w.vgpr.as_mut_slice().as_mut_ptr().cast::<u32>())
    }

    /// Lanes `k * C ..` of an operand (`V`: VGPR `x.reg`; otherwise `x.value` broadcast).
    ///
    /// # Safety
    /// With `V`, `x.reg` names an allocated register (the [`Regs`] invariant).
    #[inline(always)]
    unsafe fn chunk<const V: bool>(self, x: Lanes, k: usize) -> [u32; C] {
        if V {
            // SAFETY: the register is allocated (caller), `k * C + C <= N`.
            unsafe { self.0.add(x.reg * N + k * C).cast::<[u32; C]>().read() }
        } else {
            [x.value; C]
        }
    }

    /// Lane `l` of an operand (`V`: VGPR `x.reg`; otherwise `x.value`).
    ///
    /// # Safety
    /// With `V`, `x.reg` names an allocated register (the [`Regs`] invariant); `l < N`.
    #[inline(always)]
    unsafe fn lane<const V: bool>(self, x: Lanes, l: usize) -> u32 {
        if V {
            // SAFETY: the caller's.
            unsafe { self.0.add(x.reg * N + l).read() }
        } else {
            x.value
        }
    }

    /// Writes lanes `k * C ..` of register `reg`.
    ///
    /// # Safety
    /// `reg` names an allocated register; no reference into the file is alive.
    #[inline(always)]
    unsafe fn store(self, reg: usize, k: usize, v: [u32; C]) {
        // SAFETY: as for `chunk`.
        unsafe { self.0.add(reg * N + k * C).cast::<[u32; C]>().write(v) }
    }
}

/// 1 when `x` is an f32 NaN, else 0.
#[inline(always)]
fn is_nan(x: u32) -> u32 {
    ((x & 0x7fff_ffff) > 0x7f80_0000) as u32
}

/// `d = f(a, b, c)` in every lane under EXEC, for operand shapes fixed at compile time.
/// With `F32`, declines (writing nothing) when a result lane is a NaN. Operations with
/// fewer sources pass a constant that `f` ignores.
#[inline(always)]
fn kernel<const F32: bool, const AV: bool, const BV: bool, const CV: bool>(
    w: &mut Wave,
    d: usize,
    (a, b, c): (Lanes, Lanes, Lanes),
    f: impl Fn(u32, u32, u32) -> u32,
) -> Flow {
    let exec = w.exec();
    let regs = Regs::of(w);
    // SAFETY (every access below): `d` and the VGPR operands come from the op being run
    // (the `Regs` invariant), and no reference into the file is alive.
    // Plain loops, no `array::from_fn`: a closure the compiler leaves out of line is
    // compiled without the caller's AVX2/FMA features (an f32 fma becomes a libm call).
    if !F32 && exec == u64::MAX {
        // Each chunk reads its operands before it writes: exact when `d` is a source.
        for k in 0..CHUNKS {
            let (x, y, z) = unsafe {
                (
                    regs.chunk::<AV>(a, k),
                    regs.chunk::<BV>(b, k),
                    regs.chunk::<CV>(c, k),
                )
            };
            let mut r = [0u32; C];
            for i in 0..C {
                r[i] = f(x[i], y[i], z[i]);
            }
            unsafe { regs.store(d, k, r) };
        }
        return Flow::Next;
    }
    // One flat loop over the lanes (which the loop vectorizer turns into whole-register
    // operations and a vector NaN reduction), into a local: nothing is written before the
    // NaN check.
    let mut out = [0u32; N];
    let mut nan = 0u32;
    for l in 0..N {
        let r = unsafe {
            f(
                regs.lane::<AV>(a, l),
                regs.lane::<BV>(b, l),
                regs.lane::<CV>(c, l),
            )
        };
        out[l] = r;
        if F32 {
            nan |= is_nan(r);
        }
    }
    if nan != 0 {
        return Flow::Decline;
    }
    unsafe { write(regs, d, &out, exec) };
    Flow::Next
}

/// `f` over one source (VGPR or scalar).
#[inline(always)]
fn map1(w: &mut Wave, op: &FastOp, f: impl Fn(u32) -> u32) -> Flow {
    let (a, av) = operand(w, op.src[0]);
    let z = Lanes { reg: 0, value: 0 };
    let g = |x: u32, _: u32, _: u32| f(x);
    let d = op.dst as usize;
    if av {
        kernel::<false, true, false, false>(w, d, (a, z, z), g)
    } else {
        kernel::<false, false, false, false>(w, d, (a, z, z), g)
    }
}

/// `f` over two sources; `F32` as in [`kernel`].
#[inline(always)]
fn map2<const F32: bool>(w: &mut Wave, op: &FastOp, f: impl Fn(u32, u32) -> u32) -> Flow {
    let (a, av) = operand(w, op.src[0]);
    let (b, bv) = operand(w, op.src[1]);
    let z = Lanes { reg: 0, value: 0 };
    let g = |x: u32, y: u32, _: u32| f(x, y);
    let (d, ops) = (op.dst as usize, (a, b, z));
    match (av, bv) {
        (true, true) => kernel::<F32, true, true, false>(w, d, ops, g),
        (true, false) => kernel::<F32, true, false, false>(w, d, ops, g),
        (false, true) => kernel::<F32, false, true, false>(w, d, ops, g),
        (false, false) => kernel::<F32, false, false, false>(w, d, ops, g),
    }
}

/// `f` over the sources `src[0]`, `src[1]` and `c`; `F32` as in [`kernel`].
#[inline(always)]
fn map3<const F32: bool>(
    w: &mut Wave,
    op: &FastOp,
    c: Src,
    f: impl Fn(u32, u32, u32) -> u32,
) -> Flow {
    let (a, av) = operand(w, op.src[0]);
    let (b, bv) = operand(w, op.src[1]);
    let (c, cv) = operand(w, c);
    let (d, ops) = (op.dst as usize, (a, b, c));
    match (av, bv, cv) {
        (true, true, true) => kernel::<F32, true, true, true>(w, d, ops, f),
        (true, true, false) => kernel::<F32, true, true, false>(w, d, ops, f),
        (true, false, true) => kernel::<F32, true, false, true>(w, d, ops, f),
        (false, true, true) => kernel::<F32, false, true, true>(w, d, ops, f),
        (true, false, false) => kernel::<F32, true, false, false>(w, d, ops, f),
        (false, true, false) => kernel::<F32, false, true, false>(w, d, ops, f),
        (false, false, true) => kernel::<F32, false, false, true>(w, d, ops, f),
        (false, false, false) => kernel::<F32, false, false, false>(w, d, ops, f),
    }
}

/// Lanes `k * C ..` of `mask` as all-ones (bit set) or zero words, the mask given as its
/// two 32-lane halves. Each half is shifted so that lane `l`'s bit lands in the sign bit,
/// then spread by an arithmetic shift: constant per-lane shift counts, which vectorize
/// (one variable shift per eight lanes) where a per-lane `(mask >> l) & 1` stays scalar.
#[inline(always)]
fn mask_chunk(halves: [u32; 2], k: usize) -> [u32; C] {
    let mut m = [0u32; C];
    for i in 0..C {
        let l = k * C + i;
        m[i] = (((halves[l / 32] << (31 - (l % 32))) as i32) >> 31) as u32;
    }
    m
}

/// All ones in the lanes of `mask` that are set, zero in the others (as [`mask_chunk`],
/// for all lanes).
#[inline(always)]
fn lane_masks(mask: u64) -> [u32; N] {
    let halves = [mask as u32, (mask >> 32) as u32];
    let mut out = [0u32; N];
    for l in 0..N {
        out[l] = (((halves[l / 32] << (31 - (l % 32))) as i32) >> 31) as u32;
    }
    out
}

/// Writes `out` to register `d` under `exec`.
///
/// # Safety
/// As [`Regs::store`].
#[inline(always)]
unsafe fn write(regs: Regs, d: usize, out: &[u32; N], exec: u64) {
    // SAFETY: the caller's; the reference is the only one into the file while it lives.
    let reg = unsafe { &mut *regs.0.add(d * N).cast::<[u32; N]>() };
    if exec == u64::MAX {
        // A counted loop (vector moves) rather than a block copy, so that the next
        // instruction's loads of this register forward from these stores.
        #[allow(clippy::manual_memcpy)]
        for l in 0..N {
            reg[l] = out[l];
        }
    } else {
        let m = lane_masks(exec);
        for l in 0..N {
            reg[l] = (out[l] & m[l]) | (reg[l] & !m[l]);
        }
    }
}

/// A scalar source's value.
#[inline(always)]
fn scalar(w: &Wave, s: Src) -> u32 {
    match s {
        Src::Sgpr(r) => w.sgpr[r as usize & 127],
        Src::Const(v) => v,
        // Only reached for VALU sources, which the lane loops read per lane; the first
        // lane stands for all of them.
        Src::Vgpr(r) => w.vgpr[r as usize][0],
        Src::Other(code) => scalar_src(w, code as u32, 0, false),
    }
}

#[inline(always)]
fn fl(x: u32) -> f32 {
    f32::from_bits(x)
}

/// The fused multiply-add of three f32 bit patterns, round to nearest even.
#[inline(always)]
fn fma<const HW_FMA: bool>(x: u32, y: u32, z: u32) -> u32 {
    if HW_FMA {
        fl(x).mul_add(fl(y), fl(z)).to_bits()
    } else {
        fma_f32_rne(fl(x), fl(y), fl(z)).to_bits()
    }
}

/// Sets a scalar destination and SCC.
#[inline(always)]
fn sdst(w: &mut Wave, op: &FastOp, v: u32, scc: bool) -> Flow {
    w.set_sgpr(op.dst as usize, v);
    w.scc = scc;
    Flow::Next
}

/// The two scalar sources of a SOP2/SOPC operation.
#[inline(always)]
fn scalar2(w: &Wave, op: &FastOp) -> (u32, u32) {
    (scalar(w, op.src[0]), scalar(w, op.src[1]))
}

#[inline(always)]
fn cmp(w: &mut Wave, op: &FastOp, f: impl Fn(u32, u32) -> bool) -> Flow {
    let (a, b) = scalar2(w, op);
    w.scc = f(a, b);
    Flow::Next
}

/// Runs `op`. Returns [`Flow::Decline`], with the wave unchanged, when the general handler
/// must run it (f32 arithmetic outside plain IEEE MODE, or with a NaN result).
#[inline(always)]
fn run<const HW_FMA: bool>(w: &mut Wave, op: &FastOp, fp: Fp) -> Flow {
    match op.kind {
        Kind::VMov => map1(w, op, |x| x),
        Kind::VNot => map1(w, op, |x| !x),
        Kind::VAdd => map2::<false>(w, op, u32::wrapping_add),
        Kind::VSub => map2::<false>(w, op, u32::wrapping_sub),
        Kind::VSubrev => map2::<false>(w, op, |x, y| y.wrapping_sub(x)),
        Kind::VAnd => map2::<false>(w, op, |x, y| x & y),
        Kind::VOr => map2::<false>(w, op, |x, y| x | y),
        Kind::VXor => map2::<false>(w, op, |x, y| x ^ y),
        Kind::VLshlrev => map2::<false>(w, op, |x, y| y << (x & 31)),
        Kind::VLshrrev => map2::<false>(w, op, |x, y| y >> (x & 31)),
        Kind::VAshrrev => map2::<false>(w, op, |x, y| ((y as i32) >> (x & 31)) as u32),
        Kind::VMulLo => map2::<false>(w, op, u32::wrapping_mul),
        Kind::VMulU24 => map2::<false>(w, op, |x, y| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
        Kind::VMinU => map2::<false>(w, op, u32::min),
        Kind::VMaxU => map2::<false>(w, op, u32::max),
        Kind::VAddF if fp.plain => map2::<true>(w, op, |x, y| (fl(x) + fl(y)).to_bits()),
        Kind::VSubF if fp.plain => map2::<true>(w, op, |x, y| (fl(x) - fl(y)).to_bits()),
        Kind::VMulF if fp.plain => map2::<true>(w, op, |x, y| (fl(x) * fl(y)).to_bits()),
        Kind::VMaxF if fp.plain => minmax::<true>(w, op, fp.ieee),
        Kind::VMinF if fp.plain => minmax::<false>(w, op, fp.ieee),
        Kind::VFma if fp.plain => map3::<true>(w, op, op.src[2], fma::<HW_FMA>),
        Kind::VFmac if fp.plain => map3::<true>(w, op, Src::Vgpr(op.dst), fma::<HW_FMA>),
        Kind::VAddF
        | Kind::VSubF
        | Kind::VMulF
        | Kind::VMaxF
        | Kind::VMinF
        | Kind::VFma
        | Kind::VFmac => Flow::Decline,
        Kind::VMadU24 => map3::<false>(w, op, op.src[2], |x, y, z| {
            (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff).wrapping_add(z)
        }),
        Kind::VAdd3 => map3::<false>(w, op, op.src[2], |x, y, z| {
            x.wrapping_add(y).wrapping_add(z)
        }),
        Kind::VLshlAdd => {
            map3::<false>(w, op, op.src[2], |x, y, z| (x << (y & 31)).wrapping_add(z))
        }
        Kind::VLshlOr => map3::<false>(w, op, op.src[2], |x, y, z| (x << (y & 31)) | z),
        Kind::VAndOr => map3::<false>(w, op, op.src[2], |x, y, z| (x & y) | z),
        Kind::VOr3 => map3::<false>(w, op, op.src[2], |x, y, z| x | y | z),
        Kind::VCndmask => {
            let vcc = w.vcc();
            cndmask(w, op, vcc)
        }
        Kind::VCndmask64 => {
            let sel = scalar64(w, op.src[2]);
            cndmask(w, op, sel)
        }
        Kind::VWritelane => {
            let v = scalar(w, op.src[0]);
            let lane = (scalar(w, op.src[1]) & 63) as usize;
            w.vgpr[op.dst as usize][lane] = v;
            Flow::Next
        }
        Kind::VMbcntLo | Kind::VMbcntHi => {
            let (a, b) = (lanes_of(w, op.src[0]), lanes_of(w, op.src[1]));
            let hi = op.kind == Kind::VMbcntHi;
            let mut out = [0u32; N];
            for i in 0..N {
                // The bits of `a` for the lanes below lane `i`, in the half the form counts.
                let below = match (hi, i >= 32) {
                    (false, false) => a[i] & ((1u32 << i) - 1),
                    (false, true) => a[i],
                    (true, false) => 0,
                    (true, true) => a[i] & ((1u64 << (i - 32)) - 1) as u32,
                };
                out[i] = below.count_ones().wrapping_add(b[i]);
            }
            write_exec(w, op.dst as usize, &out);
            Flow::Next
        }
        Kind::VReadfirstlane => {
            let exec = w.exec();
            let lane = if exec == 0 { 0 } else { exec.trailing_zeros() as usize };
            let v = lane_of(w, op.src[0], lane);
            w.set_sgpr(op.dst as usize, v);
            Flow::Next
        }
        Kind::VReadlane => {
            let lane = (scalar(w, op.src[1]) & 63) as usize;
            let v = lane_of(w, op.src[0], lane);
            w.set_sgpr(op.dst as usize, v);
            Flow::Next
        }
        Kind::VCmp32 => {
            let (a, b) = (lanes_of(w, op.src[0]), lanes_of(w, op.src[1]));
            let (signed, cond) = ((op.offset >> 4) & 0xf == 4, (op.offset & 0xf) as u32);
            let mut bits = 0u64;
            for i in 0..N {
                let o = if signed { (a[i] as i32).cmp(&(b[i] as i32)) } else { a[i].cmp(&b[i]) };
                bits |= (icmp(o, cond, false) as u64) << i;
            }
            let exec = w.exec();
            w.set_sgpr_pair(op.dst as usize, bits & exec);
            Flow::Next
        }
        Kind::VCmpU64 => {
            let (a, b) = (lanes64_of(w, op.src[0]), lanes64_of(w, op.src[1]));
            let cond = (op.offset & 0xf) as u32;
            let mut bits = 0u64;
            for i in 0..N {
                bits |= (icmp(a[i].cmp(&b[i]), cond, false) as u64) << i;
            }
            let exec = w.exec();
            w.set_sgpr_pair(op.dst as usize, bits & exec);
            Flow::Next
        }
        Kind::SNop => Flow::Next,
        Kind::SBranch => Flow::Jump(true),
        Kind::SCbranchScc0 => Flow::Jump(!w.scc),
        Kind::SCbranchScc1 => Flow::Jump(w.scc),
        Kind::SCbranchVccz => Flow::Jump(w.vcc() == 0),
        Kind::SCbranchVccnz => Flow::Jump(w.vcc() != 0),
        Kind::SCbranchExecz => Flow::Jump(w.exec() == 0),
        Kind::SCbranchExecnz => Flow::Jump(w.exec() != 0),
        Kind::SAddU32 => {
            let (a, b) = scalar2(w, op);
            let (r, c) = a.overflowing_add(b);
            sdst(w, op, r, c)
        }
        Kind::SSubU32 => {
            let (a, b) = scalar2(w, op);
            let (r, c) = a.overflowing_sub(b);
            sdst(w, op, r, c)
        }
        Kind::SAddI32 => {
            let (a, b) = scalar2(w, op);
            let (r, o) = (a as i32).overflowing_add(b as i32);
            sdst(w, op, r as u32, o)
        }
        Kind::SSubI32 => {
            let (a, b) = scalar2(w, op);
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            sdst(w, op, r as u32, o)
        }
        Kind::SAndB32 => {
            let (a, b) = scalar2(w, op);
            sdst(w, op, a & b, a & b != 0)
        }
        Kind::SOrB32 => {
            let (a, b) = scalar2(w, op);
            sdst(w, op, a | b, a | b != 0)
        }
        Kind::SXorB32 => {
            let (a, b) = scalar2(w, op);
            sdst(w, op, a ^ b, a ^ b != 0)
        }
        Kind::SLshlB32 => {
            let (a, b) = scalar2(w, op);
            let r = a << (b & 31);
            sdst(w, op, r, r != 0)
        }
        Kind::SLshrB32 => {
            let (a, b) = scalar2(w, op);
            let r = a >> (b & 31);
            sdst(w, op, r, r != 0)
        }
        Kind::SMulI32 => {
            let (a, b) = scalar2(w, op);
            let scc = w.scc;
            sdst(w, op, (a as i32).wrapping_mul(b as i32) as u32, scc)
        }
        Kind::SMovB32 => {
            let a = scalar(w, op.src[0]);
            w.set_sgpr(op.dst as usize, a);
            Flow::Next
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
        Kind::SAndn2B32 => {
            let (a, b) = scalar2(w, op);
            sdst(w, op, a & !b, a & !b != 0)
        }
        Kind::SNotB32 => {
            let v = !scalar(w, op.src[0]);
            sdst(w, op, v, v != 0)
        }
        Kind::SAddcU32 => {
            let (a, b) = scalar2(w, op);
            let s = a as u64 + b as u64 + w.scc as u64;
            sdst(w, op, s as u32, s >> 32 != 0)
        }
        Kind::SCselectB32 => {
            let (a, b) = scalar2(w, op);
            let scc = w.scc;
            sdst(w, op, if scc { a } else { b }, scc)
        }
        Kind::SFf1B32 => {
            let a = scalar(w, op.src[0]);
            w.set_sgpr(op.dst as usize, if a == 0 { u32::MAX } else { a.trailing_zeros() });
            Flow::Next
        }
        Kind::SFf1B64 => {
            let a = scalar64(w, op.src[0]);
            w.set_sgpr(op.dst as usize, if a == 0 { u32::MAX } else { a.trailing_zeros() });
            Flow::Next
        }
        Kind::SMovB64 => {
            let a = scalar64(w, op.src[0]);
            w.set_sgpr_pair(op.dst as usize, a);
            Flow::Next
        }
        Kind::SAndB64 => sop64(w, op, |a, b| a & b),
        Kind::SOrB64 => sop64(w, op, |a, b| a | b),
        Kind::SXorB64 => sop64(w, op, |a, b| a ^ b),
        Kind::SAndn2B64 => sop64(w, op, |a, b| a & !b),
        Kind::SLshlB64 | Kind::SLshrB64 => {
            let (a, b) = (scalar64(w, op.src[0]), scalar(w, op.src[1]) & 63);
            let r = if op.kind == Kind::SLshlB64 { a << b } else { a >> b };
            w.set_sgpr_pair(op.dst as usize, r);
            w.scc = r != 0;
            Flow::Next
        }
        Kind::SCselectB64 => {
            let (a, b) = (scalar64(w, op.src[0]), scalar64(w, op.src[1]));
            w.set_sgpr_pair(op.dst as usize, if w.scc { a } else { b });
            Flow::Next
        }
        Kind::SCmpEqU64 => {
            w.scc = scalar64(w, op.src[0]) == scalar64(w, op.src[1]);
            Flow::Next
        }
        Kind::SCmpLgU64 => {
            w.scc = scalar64(w, op.src[0]) != scalar64(w, op.src[1]);
            Flow::Next
        }
        Kind::SAndSaveexecB64 | Kind::SOrSaveexecB64 => {
            // The saved EXEC goes to the destination before EXEC changes.
            let s = scalar64(w, op.src[0]);
            let old = w.exec();
            let new = if op.kind == Kind::SAndSaveexecB64 { s & old } else { s | old };
            w.set_sgpr_pair(op.dst as usize, old);
            w.set_exec(new);
            w.scc = new != 0;
            Flow::Next
        }
    }
}

/// A 64-bit scalar operation on two 64-bit sources; SCC says whether the result is
/// non-zero.
#[inline(always)]
fn sop64(w: &mut Wave, op: &FastOp, f: impl Fn(u64, u64) -> u64) -> Flow {
    let r = f(scalar64(w, op.src[0]), scalar64(w, op.src[1]));
    w.set_sgpr_pair(op.dst as usize, r);
    w.scc = r != 0;
    Flow::Next
}

/// A 64-bit scalar source: an SGPR pair, or an inline integer sign-extended (what
/// [`super::fast`] resolves for 64-bit operands).
#[inline(always)]
fn scalar64(w: &Wave, s: Src) -> u64 {
    match s {
        Src::Sgpr(r) => w.sgpr_pair(r as usize),
        Src::Const(v) => v as i32 as i64 as u64,
        // Not resolved for 64-bit operands; the low lane of a VGPR pair stands in.
        Src::Vgpr(r) => w.vgpr[r as usize][0] as u64 | ((w.vgpr[(r as usize + 1) & 255][0] as u64) << 32),
        Src::Other(code) => super::operands::scalar_src64(w, code as u32, 0),
    }
}

/// Every lane of a 32-bit source.
#[inline(always)]
fn lanes_of(w: &Wave, s: Src) -> [u32; N] {
    match s {
        Src::Vgpr(r) => w.vgpr[r as usize],
        other => [scalar(w, other); N],
    }
}

/// Lane `lane` of a 32-bit source.
#[inline(always)]
fn lane_of(w: &Wave, s: Src, lane: usize) -> u32 {
    match s {
        Src::Vgpr(r) => w.vgpr[r as usize][lane],
        other => scalar(w, other),
    }
}

/// Every lane of a 64-bit source: a VGPR pair, or a scalar (see [`scalar64`]).
#[inline(always)]
fn lanes64_of(w: &Wave, s: Src) -> [u64; N] {
    match s {
        Src::Vgpr(r) => {
            let (lo, hi) = (&w.vgpr[r as usize], &w.vgpr[(r as usize + 1) & 255]);
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = lo[i] as u64 | ((hi[i] as u64) << 32);
            }
            out
        }
        other => [scalar64(w, other); N],
    }
}

/// Writes `out` to VGPR `d` in the lanes of EXEC.
#[inline(always)]
fn write_exec(w: &mut Wave, d: usize, out: &[u32; N]) {
    let exec = w.exec();
    let reg = &mut w.vgpr[d];
    for l in 0..N {
        if (exec >> l) & 1 != 0 {
            reg[l] = out[l];
        }
    }
}


/// `v_cndmask_b32`: `src1` where the bit of `sel` (VCC for VOP2, a 64-bit scalar for
/// VOP3) is set, `src0` elsewhere.
#[inline(always)]
fn cndmask(w: &mut Wave, op: &FastOp, sel: u64) -> Flow {
    let halves = [sel as u32, (sel >> 32) as u32];
    let (a, av) = operand(w, op.src[0]);
    let (b, bv) = operand(w, op.src[1]);
    let exec = w.exec();
    let d = op.dst as usize;
    match (av, bv) {
        (true, true) => select::<true, true>(w, d, a, b, halves, exec),
        (true, false) => select::<true, false>(w, d, a, b, halves, exec),
        (false, true) => select::<false, true>(w, d, a, b, halves, exec),
        (false, false) => select::<false, false>(w, d, a, b, halves, exec),
    }
}

/// `d = mask ? b : a` per lane (the mask as two 32-lane halves), under `exec`.
#[inline(always)]
fn select<const AV: bool, const BV: bool>(
    w: &mut Wave,
    d: usize,
    a: Lanes,
    b: Lanes,
    halves: [u32; 2],
    exec: u64,
) -> Flow {
    let regs = Regs::of(w);
    // SAFETY (every access): as in `kernel`.
    if exec == u64::MAX {
        for k in 0..CHUNKS {
            let r = unsafe { select_chunk::<AV, BV>(regs, a, b, halves, k) };
            unsafe { regs.store(d, k, r) };
        }
    } else {
        let mut out = [0u32; N];
        for k in 0..CHUNKS {
            out[k * C..k * C + C]
                .copy_from_slice(&unsafe { select_chunk::<AV, BV>(regs, a, b, halves, k) });
        }
        unsafe { write(regs, d, &out, exec) };
    }
    Flow::Next
}

/// Chunk `k` of [`select`].
///
/// # Safety
/// As [`Regs::chunk`].
#[inline(always)]
unsafe fn select_chunk<const AV: bool, const BV: bool>(
    regs: Regs,
    a: Lanes,
    b: Lanes,
    halves: [u32; 2],
    k: usize,
) -> [u32; C] {
    // SAFETY: the caller's.
    let (x, y) = unsafe { (regs.chunk::<AV>(a, k), regs.chunk::<BV>(b, k)) };
    let m = mask_chunk(halves, k);
    let mut r = [0u32; C];
    for i in 0..C {
        r[i] = (y[i] & m[i]) | (x[i] & !m[i]);
    }
    r
}

/// `v_max_f32` (`MAX`) or `v_min_f32` without modifiers. When no lane holds a NaN the
/// rules of [`max_f32`]/[`min_f32`] reduce to a compare-and-select plus the signed-zero
/// rule (max of two zeros is +0 unless both are -0: the AND of the bits; min: the OR),
/// which vectorizes; otherwise every lane goes through the exact scalar rules.
#[inline(always)]
fn minmax<const MAX: bool>(w: &mut Wave, op: &FastOp, ieee: bool) -> Flow {
    let (a, av) = operand(w, op.src[0]);
    let (b, bv) = operand(w, op.src[1]);
    let d = op.dst as usize;
    match (av, bv) {
        (true, true) => minmax_lanes::<MAX, true, true>(w, d, a, b, ieee),
        (true, false) => minmax_lanes::<MAX, true, false>(w, d, a, b, ieee),
        (false, true) => minmax_lanes::<MAX, false, true>(w, d, a, b, ieee),
        (false, false) => minmax_lanes::<MAX, false, false>(w, d, a, b, ieee),
    }
}

#[inline(always)]
fn minmax_lanes<const MAX: bool, const AV: bool, const BV: bool>(
    w: &mut Wave,
    d: usize,
    a: Lanes,
    b: Lanes,
    ieee: bool,
) -> Flow {
    let regs = Regs::of(w);
    // First pass: does an input lane hold a NaN? (One flat vectorized reduction.)
    let mut nan = 0u32;
    for l in 0..N {
        // SAFETY: as in `kernel`.
        let (x, y) = unsafe { (regs.lane::<AV>(a, l), regs.lane::<BV>(b, l)) };
        nan |= is_nan(x) | is_nan(y);
    }
    if nan != 0 {
        let exec = w.exec();
        let mut out = [0u32; N];
        for l in 0..N {
            // SAFETY: as in `kernel`.
            let (x, y) = unsafe { (regs.lane::<AV>(a, l), regs.lane::<BV>(b, l)) };
            out[l] = if MAX {
                max_f32(fl(x), fl(y), ieee)
            } else {
                min_f32(fl(x), fl(y), ieee)
            }
            .to_bits();
        }
        // SAFETY: as in `kernel`.
        unsafe { write(regs, d, &out, exec) };
        return Flow::Next;
    }
    // No NaN: a compare-and-select plus the signed-zero rule, branch-free (all-ones masks
    // instead of selects, so the lanes vectorize), in place under a full EXEC.
    let z = Lanes { reg: 0, value: 0 };
    kernel::<false, AV, BV, false>(w, d, (a, b, z), |x, y, _| {
        let both_zero = (((x | y) & 0x7fff_ffff == 0) as u32).wrapping_neg();
        let pick_x = ((if MAX { fl(x) >= fl(y) } else { fl(x) < fl(y) }) as u32).wrapping_neg();
        let zero = if MAX { x & y } else { x | y };
        let picked = (x & pick_x) | (y & !pick_x);
        (zero & both_zero) | (picked & !both_zero)
    })
}

#[cfg(test)]
mod tests {
    use crate::decode::Opcode;
    use crate::exec::{step, Memory, Program, StepEnv, StepStop, Wave};
    use crate::Target;

    const BASE: u64 = 0x1000;
    const S_ENDPGM: u32 = 0xbf81_0000;

    /// `v_add_u32 v<d>, v<a>, v<b>` (VOP2).
    fn v_add(d: u32, a: u32, b: u32) -> u32 {
        (0x34 << 25) | (d << 17) | (b << 9) | (256 + a)
    }

    /// A wave with `vgprs` registers, `v<r>[lane] = 1000 * r + lane`.
    fn wave(vgprs: usize) -> Wave {
        let mut w = Wave::with_registers(BASE, 0x3f0, vgprs, 0);
        for r in 0..vgprs {
            w.vgpr[r] = std::array::from_fn(|lane| 1000 * r as u32 + lane as u32);
        }
        w
    }

    fn run(w: &mut Wave, words: &[u32], budget: u64, counts: &mut [u64]) -> (u64, StepStop) {
        let program = Program::from_words(Target::Gfx942, BASE, words);
        let mut mem = Memory::new();
        let mut lds = vec![0u8; 64];
        let mut env = StepEnv {
            mem: &mut mem,
            lds: &mut lds,
            clock: 0,
            realtime: 0,
            counts: Some(counts),
        };
        let out = step(w, &program, &mut env, budget).expect("runs");
        (out.executed, out.stop)
    }

    /// A run naming registers beyond the wave's allocation goes through the general
    /// handlers: the read of v9 sees v0, the write of v9 vanishes, the other results are
    /// exact.
    #[test]
    fn runs_naming_unallocated_registers_keep_the_register_file_rules() {
        let mut w = wave(4);
        let mut counts = vec![0u64; 8192];
        let words = [v_add(3, 1, 2), v_add(9, 1, 2), v_add(2, 9, 1), S_ENDPGM];
        assert_eq!(run(&mut w, &words, 100, &mut counts), (4, StepStop::Ended));
        for lane in 0..64u32 {
            assert_eq!(w.vgpr[3][lane as usize], 3000 + 2 * lane, "v3 = v1 + v2");
            assert_eq!(
                w.vgpr[2][lane as usize],
                1000 + 2 * lane,
                "v2 = v9 (reads v0) + v1"
            );
        }
        assert_eq!(w.vgpr.len(), 4);
        assert_eq!(counts[Opcode::VAddU32E32 as usize], 3);
    }

    /// The budget can end a run anywhere: the wave stops at the next instruction, each
    /// executed instruction counts once, and the rest of the run follows on the next call.
    #[test]
    fn the_budget_splits_a_run_exactly() {
        let words = [
            v_add(3, 1, 2),
            v_add(4, 3, 3),
            v_add(5, 4, 1),
            v_add(6, 5, 5),
            S_ENDPGM,
        ];
        let mut whole = wave(8);
        let mut counts = vec![0u64; 8192];
        assert_eq!(
            run(&mut whole, &words, 100, &mut counts),
            (5, StepStop::Ended)
        );
        for budget in 1..=4u64 {
            let mut w = wave(8);
            let mut split = vec![0u64; 8192];
            assert_eq!(
                run(&mut w, &words, budget, &mut split),
                (budget, StepStop::Budget)
            );
            assert_eq!(w.pc, BASE + 4 * budget);
            assert_eq!(split[Opcode::VAddU32E32 as usize], budget);
            assert_eq!(
                run(&mut w, &words, 100, &mut split),
                (5 - budget, StepStop::Ended)
            );
            assert_eq!(split, counts, "budget {budget}");
            for r in 0..8 {
                assert_eq!(w.vgpr[r], whole.vgpr[r], "budget {budget}: v{r}");
            }
        }
    }

    /// An operation that declines in the middle of a run (an f32 NaN result) runs through
    /// the general handler; the instructions before and after it run once each.
    #[test]
    fn a_declining_operation_splits_its_run() {
        // v_mul_f32 v4, v5, v6 (VOP2).
        let v_mul = (0x05 << 25) | (4 << 17) | (6 << 9) | (256 + 5);
        let words = [v_add(3, 1, 2), v_mul, v_add(7, 3, 3), S_ENDPGM];
        let mut w = wave(8);
        w.vgpr[5] = [f32::INFINITY.to_bits(); 64];
        w.vgpr[6][9] = 0;
        let mut counts = vec![0u64; 8192];
        assert_eq!(run(&mut w, &words, 100, &mut counts), (4, StepStop::Ended));
        assert!(f32::from_bits(w.vgpr[4][9]).is_nan(), "inf * 0");
        assert_eq!(
            w.vgpr[4][10],
            f32::INFINITY.to_bits(),
            "inf * 6010 (as a denormal)"
        );
        for lane in 0..64u32 {
            assert_eq!(w.vgpr[3][lane as usize], 3000 + 2 * lane);
            assert_eq!(w.vgpr[7][lane as usize], 6000 + 4 * lane);
        }
        assert_eq!(
            (
                counts[Opcode::VAddU32E32 as usize],
                counts[Opcode::VMulF32E32 as usize]
            ),
            (2, 1)
        );
    }
}
