//! Scalar memory (SMEM): loads, stores, scratch loads and stores, atomics, cache
//! operations, probes and the clocks.
//!
//! **Addressing** (CDNA3/CDNA4 ISA, 8.2.1 "Scalar Memory Addressing"): the offset is
//! `SGPR[OFFSET[6:0]]` (IMM=0, SOE=0), `SGPR[SOFFSET]` (IMM=0, SOE=1; the OFFSET field is
//! unused), the signed 21-bit `OFFSET` (IMM=1, SOE=0), or `OFFSET + SGPR[SOFFSET]` (IMM=1,
//! SOE=1); M0 is SGPR 124. The two low bits of every component (base, SGPR offset, immediate)
//! are ignored. Plain forms add it to the 64-bit SGPR pair `SBASE`; buffer forms to the V#
//! base (48 bits) in the four SGPRs at `SBASE`. Scratch forms scale the SGPR term by 64
//! (`ADDR = base + inst_offset + SGPR * 64`) and use FLAT_SCRATCH, the wave's private
//! segment, as the base: LLVM's operand reference for these instructions says the
//! hardware ignores SBASE and supplies FLAT_SCRATCH (the ISA guide's shared formula
//! writes `SGPR[base]` for every SMEM form; the two agree for `s[...], flat_scratch`).
//! The guide says the two low bits of every component are ignored but also that the
//! scratch SGPR term counts 64-byte units, so an SGPR offset of 1 could mean 0 or 64
//! bytes; a scratch SGPR offset whose two low bits are not zero stops the wave with
//! `Unsupported` (the two readings agree on every other value).
//!
//! **Buffer bounds**: with a V# stride of 0, `num_records` is a byte count and each dword
//! that does not lie entirely below it is out of range: loads read zero for it (unchanged
//! behaviour), stores drop it, a non-returning atomic is not performed and a returning one
//! stops with `Unsupported` (the ISA does not say what it returns). The ISA uses the
//! stride only for bounds checking without saying how; a nonzero stride stops every
//! `s_buffer_*` instruction with `Unsupported`.
//!
//! **Stores and atomics are routed** like vector ones ([`DeviceMemory::route`], space
//! [`Space::Scalar`], lane 0 only): [`Route::Defer`] parks a [`VmemRequest`] (one lane,
//! `dwords` 1..=4 for stores, 1 or 2 for atomics, the compare value in `cmp` for
//! cmpswap) and stops the wave; the returned value of a `glc` atomic reaches SDATA when
//! the scheduler completes the wave ([`Wave::complete`], [`SgprDest`]). So the GPU model
//! performs scalar atomics, and scalar stores to fine-grained memory, at their home in
//! simulated-time order like every other such access. Atomic operands: 32-bit forms use
//! SDATA (cmpswap: SDATA is the new value, SDATA+1 the compare value); `_x2` forms SDATA
//! pairs (cmpswap_x2: SDATA[0:1] new, SDATA[2:3] compare). A 64-bit atomic must be
//! naturally aligned; a misaligned one stops with `Unsupported`.
//!
//! Decisions the documents leave open: the CDNA guides allow only M0 or an immediate as
//! the offset of stores and atomics while LLVM encodes any SGPR for gfx9-family targets;
//! SGPR offsets are accepted like for loads. A negative immediate whose sum with the SGPR
//! offset is negative is "illegal and undefined"; the sum wraps as a 64-bit address.
//! `s_dcache_discard` drops dirty scalar-cache lines, which this executor never has (its
//! scalar stores reach memory at once, as if written back right away, which the hardware
//! may also do), so it has no effect; `s_atc_probe*` only probe translation or prefetch.

use crate::decode::{Inst, Opcode};

use super::device::{AccessKind, AtomicOp, CachePolicy, DeviceMemory, Element, Route, Space, VmemAccess, VmemRequest};
use super::operands::{unsupported, Ctx};
use super::wave::{PendingAccess, SgprDest, Wave, WaveStatus, FLAT_SCRATCH_LO, WAVE_LANES};
use super::ExecFault;

/// What an SMEM opcode does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Load,
    Store,
    Atomic(AtomicOp),
}

/// Where an SMEM opcode's address comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Base {
    /// A 64-bit address in SGPRs.
    Pair,
    /// A buffer descriptor (V#) in four SGPRs.
    Buffer,
    /// FLAT_SCRATCH, with the SGPR offset in units of 64 bytes.
    Scratch,
}

/// The memory access of an SMEM opcode: kind, base and dwords (atomics: 1 or 2).
fn access_of(op: Opcode) -> Option<(Kind, Base, u32)> {
    use Opcode as O;
    Some(match op {
        O::SLoadDword => (Kind::Load, Base::Pair, 1),
        O::SLoadDwordx2 => (Kind::Load, Base::Pair, 2),
        O::SLoadDwordx4 => (Kind::Load, Base::Pair, 4),
        O::SLoadDwordx8 => (Kind::Load, Base::Pair, 8),
        O::SLoadDwordx16 => (Kind::Load, Base::Pair, 16),
        O::SBufferLoadDword => (Kind::Load, Base::Buffer, 1),
        O::SBufferLoadDwordx2 => (Kind::Load, Base::Buffer, 2),
        O::SBufferLoadDwordx4 => (Kind::Load, Base::Buffer, 4),
        O::SBufferLoadDwordx8 => (Kind::Load, Base::Buffer, 8),
        O::SBufferLoadDwordx16 => (Kind::Load, Base::Buffer, 16),
        O::SScratchLoadDword => (Kind::Load, Base::Scratch, 1),
        O::SScratchLoadDwordx2 => (Kind::Load, Base::Scratch, 2),
        O::SScratchLoadDwordx4 => (Kind::Load, Base::Scratch, 4),
        O::SStoreDword => (Kind::Store, Base::Pair, 1),
        O::SStoreDwordx2 => (Kind::Store, Base::Pair, 2),
        O::SStoreDwordx4 => (Kind::Store, Base::Pair, 4),
        O::SBufferStoreDword => (Kind::Store, Base::Buffer, 1),
        O::SBufferStoreDwordx2 => (Kind::Store, Base::Buffer, 2),
        O::SBufferStoreDwordx4 => (Kind::Store, Base::Buffer, 4),
        O::SScratchStoreDword => (Kind::Store, Base::Scratch, 1),
        O::SScratchStoreDwordx2 => (Kind::Store, Base::Scratch, 2),
        O::SScratchStoreDwordx4 => (Kind::Store, Base::Scratch, 4),
        _ => return atomic_of(op.mnemonic()),
    })
}

/// `s_atomic_<op>[_x2]` and `s_buffer_atomic_<op>[_x2]`: the integer operations of the
/// vector atomics (swap, cmpswap, add, sub, smin, umin, smax, umax, and, or, xor, inc, dec).
fn atomic_of(mnemonic: &str) -> Option<(Kind, Base, u32)> {
    let (base, rest) = if let Some(r) = mnemonic.strip_prefix("s_buffer_atomic_") {
        (Base::Buffer, r)
    } else {
        (Base::Pair, mnemonic.strip_prefix("s_atomic_")?)
    };
    let (stem, dwords) = match rest.strip_suffix("_x2") {
        Some(s) => (s, 2),
        None => (rest, 1),
    };
    let op = AtomicOp::ALL.iter().copied().take_while(|op| *op != AtomicOp::AddF32).find(|op| op.stem() == stem)?;
    Some((Kind::Atomic(op), base, dwords))
}

/// The cache-policy bits of an SMEM instruction: glc (bit 16) is sc0.
fn policy(w0: u32) -> CachePolicy {
    CachePolicy { sc0: (w0 >> 16) & 1 != 0, sc1: false, nt: false }
}

/// Executes an SMEM instruction; `w.pc` already points at the next one.
pub(crate) fn execute<M: DeviceMemory>(w: &mut Wave, inst: &Inst, pc: u64, ctx: &mut Ctx<M>) -> Result<(), ExecFault> {
    use Opcode as O;
    let [w0, w1] = [inst.words()[0], inst.words()[1]];
    let sdata = ((w0 >> 6) & 0x7f) as usize;
    let op = inst.opcode();
    match op {
        O::SDcacheInv | O::SDcacheWb | O::SDcacheInvVol | O::SDcacheWbVol => {
            let kind = if matches!(op, O::SDcacheWb | O::SDcacheWbVol) { AccessKind::Writeback } else { AccessKind::Invalidate };
            if M::OBSERVES_ROUTES {
                let addrs = [0u64; WAVE_LANES];
                let access = VmemAccess { pc, kind, space: Space::Scalar, policy: policy(w0), bytes_per_lane: 0, mask: 1, addrs: &addrs };
                ctx.mem.route(&access);
            }
            return Ok(());
        }
        O::SMemtime => {
            w.set_sgpr_pair(sdata, ctx.clock);
            return Ok(());
        }
        O::SMemrealtime => {
            w.set_sgpr_pair(sdata, ctx.realtime);
            return Ok(());
        }
        // No architectural effect (see the module docs).
        O::SDcacheDiscard | O::SDcacheDiscardX2 | O::SAtcProbe | O::SAtcProbeBuffer => return Ok(()),
        _ => {}
    }
    let Some((kind, base, dwords)) = access_of(op) else { return Err(unsupported(inst, pc)) };
    // The offset: an immediate, an SGPR (scaled by 64 for scratch), or both.
    let (imm, soe) = ((w0 >> 17) & 1 != 0, (w0 >> 14) & 1 != 0);
    let sgpr = match (imm, soe) {
        (false, false) => Some(w.sgpr[(w1 & 0x7f) as usize]),
        (_, true) => Some(w.sgpr[((w1 >> 25) & 0x7f) as usize]),
        (true, false) => None,
    };
    let inst_offset = if imm { ((((w1 & 0x1f_ffff) << 11) as i32) >> 11) as i64 } else { 0 };
    // Whether the two ignored bits of a scratch SGPR offset are cleared before or after
    // the scaling by 64 is open (see the module docs).
    if base == Base::Scratch && sgpr.is_some_and(|s| s & 3 != 0) {
        return Err(unsupported(inst, pc));
    }
    let scale = if base == Base::Scratch { 64 } else { 1 };
    let offset = (inst_offset & !3) + i64::from(sgpr.unwrap_or(0) & !3) * scale;
    let sbase = ((w0 & 0x3f) * 2) as usize;
    let (start, limit) = match base {
        Base::Pair => (w.sgpr_pair(sbase), None),
        Base::Scratch => (w.sgpr_pair(FLAT_SCRATCH_LO), None),
        Base::Buffer => {
            let d1 = w.sgpr[(sbase + 1) & 127];
            if d1 >> 16 & 0x3fff != 0 {
                return Err(unsupported(inst, pc));
            }
            let start = u64::from(w.sgpr[sbase & 127]) | (u64::from(d1 & 0xffff) << 32);
            (start, Some(u64::from(w.sgpr[(sbase + 2) & 127])))
        }
    };
    let offset = offset as u64;
    let addr = (start & !3).wrapping_add(offset);
    // Dwords inside the buffer: a prefix, since the bound only rises with the dword index.
    let in_range = |k: u32| limit.is_none_or(|n| offset.wrapping_add(4 * u64::from(k)).checked_add(4).is_some_and(|end| end <= n));
    match kind {
        Kind::Load => load(w, ctx, pc, w0, addr, sdata, dwords, &in_range),
        Kind::Store => {
            let n = (0..dwords).take_while(|&k| in_range(k)).count() as u32;
            if n == 0 {
                return Ok(());
            }
            let mut data = [0u32; 4];
            for (k, d) in data.iter_mut().enumerate().take(n as usize) {
                *d = w.sgpr[(sdata + k) & 127];
            }
            let data = &data[..(n as usize).min(4)];
            let request = request(w, pc, AccessKind::Store, None, n, addr, data, &[], policy(w0));
            if route(ctx, &request) == Route::Defer {
                park(w, request, None);
                return Ok(());
            }
            w.keep_request_box(request);
            for (k, &d) in data.iter().enumerate() {
                ctx.mem.write_u32(addr.wrapping_add(4 * k as u64), d).map_err(|f| ExecFault::mem(pc, f))?;
            }
            Ok(())
        }
        Kind::Atomic(aop) => {
            let returns = policy(w0).sc0;
            if !in_range(dwords - 1) {
                return if returns { Err(unsupported(inst, pc)) } else { Ok(()) };
            }
            if dwords == 2 && addr % 8 != 0 {
                return Err(unsupported(inst, pc));
            }
            let reg = |k: u32| w.sgpr[(sdata + k as usize) & 127];
            let n = (dwords as usize).min(2);
            let (mut src, mut cmp) = ([0u32; 2], [0u32; 2]);
            for k in 0..n {
                src[k] = reg(k as u32);
                cmp[k] = reg(dwords + k as u32);
            }
            let cmp = if aop == AtomicOp::Cmpswap { &cmp[..n] } else { &[] };
            let mut request = request(w, pc, AccessKind::Atomic { returns }, Some(aop), dwords, addr, &src[..n], cmp, policy(w0));
            if route(ctx, &request) == Route::Defer {
                let dest = returns.then_some(SgprDest { first: sdata as u8, count: dwords as u8 });
                park(w, request, dest);
                return Ok(());
            }
            let done = request.perform_in_place(&mut *ctx.mem);
            if done.is_ok() && returns {
                for (k, d) in request.answer.data.iter().enumerate() {
                    w.set_sgpr(sdata + k, d.0[0]);
                }
            }
            w.keep_request_box(request);
            done.map_err(|f| ExecFault::mem(pc, f))
        }
    }
}

/// A scalar load of `dwords` dwords at `addr` into SDATA; out-of-range dwords read zero.
#[allow(clippy::too_many_arguments)]
fn load<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, pc: u64, w0: u32, addr: u64, sdata: usize, dwords: u32, in_range: &dyn Fn(u32) -> bool) -> Result<(), ExecFault> {
    if M::OBSERVES_ROUTES {
        let mut addrs = [0u64; WAVE_LANES];
        addrs[0] = addr;
        let access = VmemAccess { pc, kind: AccessKind::ScalarLoad, space: Space::Scalar, policy: policy(w0), bytes_per_lane: 4 * dwords, mask: 1, addrs: &addrs };
        // Scalar loads are always performed at once; the route only observes them.
        ctx.mem.route(&access);
    }
    for k in 0..dwords {
        let value = if in_range(k) { ctx.mem.read_u32(addr.wrapping_add(4 * u64::from(k))).map_err(|f| ExecFault::mem(pc, f))? } else { 0 };
        w.set_sgpr(sdata + k as usize, value);
    }
    Ok(())
}

/// A one-lane request for a scalar store or atomic, in the box the wave reuses.
#[allow(clippy::too_many_arguments)]
fn request(w: &mut Wave, pc: u64, kind: AccessKind, op: Option<AtomicOp>, dwords: u32, addr: u64, data: &[u32], cmp: &[u32], policy: CachePolicy) -> Box<VmemRequest> {
    let lane0 = |v: u32| {
        let mut d = [0u32; WAVE_LANES];
        d[0] = v;
        d
    };
    let mut req = w.request_box();
    req.pc = pc;
    req.kind = kind;
    req.space = Space::Scalar;
    req.op = op;
    req.element = Element::Dwords;
    req.dwords = dwords;
    req.mask = 1;
    req.addrs = [0; WAVE_LANES];
    req.addrs[0] = addr;
    req.data.clear();
    for &v in data {
        req.data.push(lane0(v));
    }
    req.cmp.clear();
    for &v in cmp {
        req.cmp.push(lane0(v));
    }
    req.policy = policy;
    req.dest = None;
    req
}

/// Asks the memory where a scalar store or atomic goes.
fn route<M: DeviceMemory>(ctx: &mut Ctx<M>, request: &VmemRequest) -> Route {
    if !M::OBSERVES_ROUTES {
        return Route::Now;
    }
    ctx.mem.route(&request.access())
}

/// Parks a deferred scalar access in the wave and stops it.
#[cold]
fn park(w: &mut Wave, request: Box<VmemRequest>, dest: Option<SgprDest>) {
    w.waiting = Some(PendingAccess { pc: request.pc, mask: 1, dest: None });
    w.scalar_dest = dest;
    w.pending = Some(request);
    w.status = WaveStatus::WaitMemory;
}
