//! DS (LDS) handlers: reads and writes (also the `_d16` and `addtid` forms), two-address
//! forms, atomics, lane permutes, `ds_append`/`ds_consume`, and the global wave sync
//! (GWS) requests (`gds` = 1), which are deferred to the scheduler.
//!
//! Addresses are `VGPR[addr] + offset` (two-address forms: each 8-bit offset scaled by the
//! element size); accesses outside the work-group's LDS read zero and drop writes. M0's
//! LDS clamp is not modelled (gfx9 and later do not require it).
//!
//! Semantics taken from the ISA guides' opcode descriptions, with these decisions:
//! - `ds_append` / `ds_consume`: the counter is the dword at `M0 + offset` (all of M0, the
//!   LDS pointer LLVM writes there); it grows (shrinks) by the number of active lanes, and
//!   every active lane gets the pre-operation value.
//! - `ds_read_addtid_b32` / `ds_write_addtid_b32`: lane `l` accesses `M0 + offset + 4 * l`.
//! - `ds_condxchg32_rtn_b64`: each dword of the 64-bit location is replaced by the matching
//!   dword of data0 with bit 31 cleared when that data dword's bit 31 is set; the old 64
//!   bits are returned.
//! - `ds_wrap_rtn_b32`: `old >= data0 ? old - data0 : old + data1`, returning `old`.
//! - `ds_pk_add_f16` / `ds_pk_add_bf16`: round to nearest even; denormals flush per MODE
//!   (the guide), f16 by FP_DENORM.f16_64 and bf16, which has f32's exponent range, by
//!   FP_DENORM.f32.
//! - The gfx950 transposing loads (`ds_read_b64_tr_b*`, `ds_read_b96_tr_b6`) are in
//!   `ds_transpose`, whose docs give their lane layout, its sources and the decisions for
//!   partial EXEC, alignment and out-of-range blocks.

#![allow(clippy::needless_range_loop)] // lane loops index lane arrays in lockstep

use crate::decode::Opcode;

use super::device::{AtomicOp, DeviceMemory};
use super::operands::{unsupported, Ctx};
use super::program::CachedInst;
use super::vmem::{apply, file, lds_read, lds_set_u32, lds_u32, lds_unit_stride, lds_write};
use super::wave::{Wave, M0, WAVE_LANES};
use super::ExecFault;

const N: usize = WAVE_LANES;

pub(super) fn ds<M: DeviceMemory>(w: &mut Wave, c: &CachedInst, pc: u64, ctx: &mut Ctx<M>) -> Result<(), ExecFault> {
    use Opcode as O;
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let off0 = w0 & 0xff;
    let off1 = (w0 >> 8) & 0xff;
    let offset = off0 | (off1 << 8);
    if (w0 >> 16) & 1 != 0 {
        return super::gws::request(w, c, pc);
    }
    let lds = &mut *ctx.lds;
    let acc = (w0 >> 25) & 1 != 0;
    let addr_r = (w1 & 0xff) as usize;
    let d0 = ((w1 >> 8) & 0xff) as usize;
    let d1 = ((w1 >> 16) & 0xff) as usize;
    let vdst = ((w1 >> 24) & 0xff) as usize;
    let exec = w.exec();
    let op = c.op;
    // Hot single-dword forms on VGPRs: no per-lane register-file selection.
    if !acc && op == O::DsReadB32 {
        let addr = &w.vgpr[addr_r];
        if exec == u64::MAX {
            if let Some(bytes) = lds_unit_stride(addr, offset).and_then(|r| lds.get(r)) {
                let mut out = [0u32; N];
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                    *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                w.vgpr[vdst] = out;
                return Ok(());
            }
        }
        let mut out = w.vgpr[vdst];
        for lane in 0..N {
            let v = lds_u32(lds, addr[lane].wrapping_add(offset));
            if (exec >> lane) & 1 != 0 {
                out[lane] = v;
            }
        }
        w.vgpr[vdst] = out;
        return Ok(());
    }
    if !acc && op == O::DsWriteB32 {
        let (addr, data) = (&w.vgpr[addr_r], &w.vgpr[d0]);
        if exec == u64::MAX {
            if let Some(bytes) = lds_unit_stride(addr, offset).and_then(|r| lds.get_mut(r)) {
                for (b, &v) in bytes.chunks_exact_mut(4).zip(data) {
                    b.copy_from_slice(&v.to_le_bytes());
                }
                return Ok(());
            }
        }
        for lane in 0..N {
            if (exec >> lane) & 1 != 0 {
                lds_set_u32(lds, addr[lane].wrapping_add(offset), data[lane]);
            }
        }
        return Ok(());
    }
    let addr: [u32; N] = w.vgpr[addr_r];
    let regs_data = |w: &Wave, r: usize, lane: usize| if acc { w.agpr[r & 255][lane] } else { w.vgpr[r & 255][lane] };
    macro_rules! lanes {
        ($lane:ident, $body:block) => {
            for $lane in 0..N {
                if (exec >> $lane) & 1 == 0 {
                    continue;
                }
                $body
            }
        };
    }
    if let Some(form) = super::ds_transpose::TrLoad::of(op) {
        super::ds_transpose::read(w, form, acc, &addr, offset, vdst, lds);
        return Ok(());
    }
    match op {
        O::DsNop => {}
        O::DsReadB32 | O::DsReadB64 | O::DsReadB96 | O::DsReadB128 => {
            let n = match op {
                O::DsReadB32 => 1,
                O::DsReadB64 => 2,
                O::DsReadB96 => 3,
                _ => 4,
            };
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                for k in 0..n {
                    let v = lds_u32(lds, a.wrapping_add(4 * k as u32));
                    file(w, acc)[(vdst + k) & 255][lane] = v;
                }
            });
        }
        O::DsReadU8 | O::DsReadI8 | O::DsReadU16 | O::DsReadI16 => {
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                let mut b = [0u8; 2];
                let size = if matches!(op, O::DsReadU8 | O::DsReadI8) { 1 } else { 2 };
                lds_read(lds, a, &mut b[..size]);
                let v = match op {
                    O::DsReadU8 => b[0] as u32,
                    O::DsReadI8 => b[0] as i8 as i32 as u32,
                    O::DsReadU16 => u16::from_le_bytes(b) as u32,
                    _ => u16::from_le_bytes(b) as i16 as i32 as u32,
                };
                file(w, acc)[vdst][lane] = v;
            });
        }
        O::DsRead2B32 | O::DsRead2st64B32 | O::DsRead2B64 | O::DsRead2st64B64 => {
            let wide = matches!(op, O::DsRead2B64 | O::DsRead2st64B64);
            let unit = if wide { 8 } else { 4 } * if matches!(op, O::DsRead2st64B32 | O::DsRead2st64B64) { 64 } else { 1 };
            let n = if wide { 2 } else { 1 };
            lanes!(lane, {
                for (slot, o) in [off0, off1].into_iter().enumerate() {
                    let a = addr[lane].wrapping_add(o * unit);
                    for k in 0..n {
                        let v = lds_u32(lds, a.wrapping_add(4 * k as u32));
                        file(w, acc)[(vdst + slot * n + k) & 255][lane] = v;
                    }
                }
            });
        }
        O::DsWriteB32 | O::DsWriteB64 | O::DsWriteB96 | O::DsWriteB128 | O::DsWriteB8 | O::DsWriteB16 => {
            let (n, bytes) = match op {
                O::DsWriteB8 => (1, 1),
                O::DsWriteB16 => (1, 2),
                O::DsWriteB32 => (1, 4),
                O::DsWriteB64 => (2, 8),
                O::DsWriteB96 => (3, 12),
                _ => (4, 16),
            };
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                let mut buf = [0u8; 16];
                for k in 0..n {
                    buf[4 * k..4 * k + 4].copy_from_slice(&regs_data(w, d0 + k, lane).to_le_bytes());
                }
                lds_write(lds, a, &buf[..bytes]);
            });
        }
        O::DsWrite2B32 | O::DsWrite2st64B32 | O::DsWrite2B64 | O::DsWrite2st64B64 => {
            let wide = matches!(op, O::DsWrite2B64 | O::DsWrite2st64B64);
            let unit = if wide { 8 } else { 4 } * if matches!(op, O::DsWrite2st64B32 | O::DsWrite2st64B64) { 64 } else { 1 };
            let n = if wide { 2 } else { 1 };
            lanes!(lane, {
                for (o, src) in [(off0, d0), (off1, d1)] {
                    let a = addr[lane].wrapping_add(o * unit);
                    for k in 0..n {
                        lds_set_u32(lds, a.wrapping_add(4 * k as u32), regs_data(w, src + k, lane));
                    }
                }
            });
        }
        O::DsWrxchg2RtnB32 | O::DsWrxchg2st64RtnB32 | O::DsWrxchg2RtnB64 | O::DsWrxchg2st64RtnB64 => {
            let wide = matches!(op, O::DsWrxchg2RtnB64 | O::DsWrxchg2st64RtnB64);
            let unit = if wide { 8 } else { 4 } * if matches!(op, O::DsWrxchg2st64RtnB32 | O::DsWrxchg2st64RtnB64) { 64 } else { 1 };
            let n = if wide { 2 } else { 1 };
            lanes!(lane, {
                for (slot, (o, src)) in [(off0, d0), (off1, d1)].into_iter().enumerate() {
                    let a = addr[lane].wrapping_add(o * unit);
                    for k in 0..n {
                        let at = a.wrapping_add(4 * k as u32);
                        let old = lds_u32(lds, at);
                        lds_set_u32(lds, at, regs_data(w, src + k, lane));
                        file(w, acc)[(vdst + slot * n + k) & 255][lane] = old;
                    }
                }
            });
        }
        O::DsBpermuteB32 | O::DsPermuteB32 => {
            let src = if acc { w.agpr[d0] } else { w.vgpr[d0] };
            let mut out = [0u32; N];
            if op == O::DsBpermuteB32 {
                for lane in 0..N {
                    let from = ((addr[lane].wrapping_add(offset) >> 2) & 63) as usize;
                    out[lane] = if (exec >> from) & 1 != 0 { src[from] } else { 0 };
                }
            } else {
                out = if acc { w.agpr[vdst] } else { w.vgpr[vdst] };
                let mut written = 0u64;
                for lane in 0..N {
                    if (exec >> lane) & 1 == 0 {
                        continue;
                    }
                    let to = ((addr[lane].wrapping_add(offset) >> 2) & 63) as usize;
                    out[to] = src[lane];
                    written |= 1 << to;
                }
                for (lane, o) in out.iter_mut().enumerate() {
                    if (written >> lane) & 1 == 0 && (exec >> lane) & 1 != 0 {
                        *o = 0;
                    }
                }
            }
            super::valu::write(&mut file(w, acc)[vdst], &out, exec);
        }
        O::DsSwizzleB32 => {
            let src = if acc { w.agpr[d0] } else { w.vgpr[d0] };
            let mut out = [0u32; N];
            for (lane, o) in out.iter_mut().enumerate() {
                let from = if offset & 0x8000 != 0 {
                    // Quad permute mode.
                    (lane & !3) + ((offset >> (2 * (lane & 3))) & 3) as usize
                } else {
                    let and_mask = (offset & 0x1f) as usize;
                    let or_mask = ((offset >> 5) & 0x1f) as usize;
                    let xor_mask = ((offset >> 10) & 0x1f) as usize;
                    (lane & !31) | ((((lane & 31) & and_mask) | or_mask) ^ xor_mask)
                };
                *o = if (exec >> from) & 1 != 0 { src[from] } else { 0 };
            }
            super::valu::write(&mut file(w, acc)[vdst], &out, exec);
        }
        O::DsReadU8D16 | O::DsReadU8D16Hi | O::DsReadI8D16 | O::DsReadI8D16Hi | O::DsReadU16D16 | O::DsReadU16D16Hi => {
            let hi = matches!(op, O::DsReadU8D16Hi | O::DsReadI8D16Hi | O::DsReadU16D16Hi);
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                let mut b = [0u8; 2];
                let size = if matches!(op, O::DsReadU16D16 | O::DsReadU16D16Hi) { 2 } else { 1 };
                lds_read(lds, a, &mut b[..size]);
                let v = match op {
                    O::DsReadU8D16 | O::DsReadU8D16Hi => b[0] as u32,
                    O::DsReadI8D16 | O::DsReadI8D16Hi => b[0] as i8 as i16 as u16 as u32,
                    _ => u16::from_le_bytes(b) as u32,
                };
                let r = &mut file(w, acc)[vdst][lane];
                *r = if hi { (*r & 0xffff) | (v << 16) } else { (*r & 0xffff_0000) | v };
            });
        }
        O::DsWriteB8D16Hi | O::DsWriteB16D16Hi => {
            let bytes = if op == O::DsWriteB8D16Hi { 1 } else { 2 };
            lanes!(lane, {
                let v = regs_data(w, d0, lane) >> 16;
                lds_write(lds, addr[lane].wrapping_add(offset), &v.to_le_bytes()[..bytes]);
            });
        }
        O::DsReadAddtidB32 | O::DsWriteAddtidB32 => {
            let base = w.sgpr[M0].wrapping_add(offset);
            lanes!(lane, {
                let a = base.wrapping_add(4 * lane as u32);
                if op == O::DsReadAddtidB32 {
                    let v = lds_u32(lds, a);
                    file(w, acc)[vdst][lane] = v;
                } else {
                    lds_set_u32(lds, a, regs_data(w, d0, lane));
                }
            });
        }
        O::DsAppend | O::DsConsume => {
            let a = w.sgpr[M0].wrapping_add(offset);
            let old = lds_u32(lds, a);
            let n = exec.count_ones();
            lds_set_u32(lds, a, if op == O::DsAppend { old.wrapping_add(n) } else { old.wrapping_sub(n) });
            lanes!(lane, {
                file(w, acc)[vdst][lane] = old;
            });
        }
        O::DsWrapRtnB32 => {
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                let old = lds_u32(lds, a);
                let (data, data2) = (regs_data(w, d0, lane), regs_data(w, d1, lane));
                lds_set_u32(lds, a, if old >= data { old - data } else { old.wrapping_add(data2) });
                file(w, acc)[vdst][lane] = old;
            });
        }
        O::DsCondxchg32RtnB64 => {
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                for k in 0..2u32 {
                    let at = a.wrapping_add(4 * k);
                    let old = lds_u32(lds, at);
                    let data = regs_data(w, d0 + k as usize, lane);
                    if data >> 31 != 0 {
                        lds_set_u32(lds, at, data & 0x7fff_ffff);
                    }
                    file(w, acc)[(vdst + k as usize) & 255][lane] = old;
                }
            });
        }
        O::DsRsubU32 | O::DsRsubRtnU32 | O::DsRsubU64 | O::DsRsubRtnU64 => {
            let wide = matches!(op, O::DsRsubU64 | O::DsRsubRtnU64);
            let ret = matches!(op, O::DsRsubRtnU32 | O::DsRsubRtnU64);
            let bytes = if wide { 8 } else { 4 };
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                let rd = |r: usize| regs_data(w, r, lane) as u64;
                let src = if wide { rd(d0) | (rd(d0 + 1) << 32) } else { rd(d0) };
                let mut buf = [0u8; 8];
                lds_read(lds, a, &mut buf[..bytes]);
                let old = u64::from_le_bytes(buf);
                lds_write(lds, a, &src.wrapping_sub(old).to_le_bytes()[..bytes]);
                if ret {
                    let regs = file(w, acc);
                    regs[vdst][lane] = old as u32;
                    if wide {
                        regs[(vdst + 1) & 255][lane] = (old >> 32) as u32;
                    }
                }
            });
        }
        _ => {
            let Some((aop, ret, wide)) = ds_atomic(op) else { return Err(unsupported(&c.inst, pc)) };
            let mode = w.mode;
            let float_cmp = matches!(op, O::DsCmpstF32 | O::DsCmpstRtnF32 | O::DsCmpstF64 | O::DsCmpstRtnF64);
            lanes!(lane, {
                let a = addr[lane].wrapping_add(offset);
                let rd = |r: usize| regs_data(w, r, lane) as u64;
                let (src, cmp_v) = if wide { (rd(d0) | (rd(d0 + 1) << 32), rd(d1) | (rd(d1 + 1) << 32)) } else { (rd(d0), rd(d1)) };
                let bytes = if wide { 8 } else { 4 };
                let mut buf = [0u8; 8];
                lds_read(lds, a, &mut buf[..bytes]);
                let old = u64::from_le_bytes(buf);
                // ds_cmpst: data0 is the compare value, data1 the new value.
                let new = match aop {
                    AtomicOp::Cmpswap if float_cmp && !wide => {
                        if f32::from_bits(old as u32) == f32::from_bits(src as u32) { cmp_v } else { old }
                    }
                    AtomicOp::Cmpswap if float_cmp => {
                        if f64::from_bits(old) == f64::from_bits(src) { cmp_v } else { old }
                    }
                    AtomicOp::Cmpswap => {
                        if old == src { cmp_v } else { old }
                    }
                    AtomicOp::PkAddF16 | AtomicOp::PkAddBf16 => aop.pk_add(old as u32, src as u32, mode) as u64,
                    _ => apply(aop, old, src, cmp_v, wide),
                };
                lds_write(lds, a, &new.to_le_bytes()[..bytes]);
                if ret {
                    let regs = file(w, acc);
                    regs[vdst][lane] = old as u32;
                    if wide {
                        regs[(vdst + 1) & 255][lane] = (old >> 32) as u32;
                    }
                }
            });
        }
    }
    Ok(())
}

/// The atomic operation of a DS opcode: (op, returns, 64-bit).
fn ds_atomic(op: Opcode) -> Option<(AtomicOp, bool, bool)> {
    use AtomicOp as A;
    use Opcode as O;
    Some(match op {
        O::DsAddU32 => (A::Add, false, false),
        O::DsAddRtnU32 => (A::Add, true, false),
        O::DsAddU64 => (A::Add, false, true),
        O::DsAddRtnU64 => (A::Add, true, true),
        O::DsSubU32 => (A::Sub, false, false),
        O::DsSubRtnU32 => (A::Sub, true, false),
        O::DsIncU32 => (A::Inc, false, false),
        O::DsIncRtnU32 => (A::Inc, true, false),
        O::DsDecU32 => (A::Dec, false, false),
        O::DsDecRtnU32 => (A::Dec, true, false),
        O::DsMinI32 => (A::Smin, false, false),
        O::DsMinRtnI32 => (A::Smin, true, false),
        O::DsMaxI32 => (A::Smax, false, false),
        O::DsMaxRtnI32 => (A::Smax, true, false),
        O::DsMinU32 => (A::Umin, false, false),
        O::DsMinRtnU32 => (A::Umin, true, false),
        O::DsMaxU32 => (A::Umax, false, false),
        O::DsMaxRtnU32 => (A::Umax, true, false),
        O::DsAndB32 => (A::And, false, false),
        O::DsAndRtnB32 => (A::And, true, false),
        O::DsOrB32 => (A::Or, false, false),
        O::DsOrRtnB32 => (A::Or, true, false),
        O::DsXorB32 => (A::Xor, false, false),
        O::DsXorRtnB32 => (A::Xor, true, false),
        O::DsWrxchgRtnB32 => (A::Swap, true, false),
        O::DsWrxchgRtnB64 => (A::Swap, true, true),
        O::DsCmpstB32 => (A::Cmpswap, false, false),
        O::DsCmpstRtnB32 => (A::Cmpswap, true, false),
        O::DsCmpstB64 => (A::Cmpswap, false, true),
        O::DsCmpstRtnB64 => (A::Cmpswap, true, true),
        O::DsAddF32 => (A::AddF32, false, false),
        O::DsAddRtnF32 => (A::AddF32, true, false),
        O::DsAddF64 => (A::AddF64, false, true),
        O::DsAddRtnF64 => (A::AddF64, true, true),
        O::DsSubU64 => (A::Sub, false, true),
        O::DsSubRtnU64 => (A::Sub, true, true),
        O::DsIncU64 => (A::Inc, false, true),
        O::DsIncRtnU64 => (A::Inc, true, true),
        O::DsDecU64 => (A::Dec, false, true),
        O::DsDecRtnU64 => (A::Dec, true, true),
        O::DsMinI64 => (A::Smin, false, true),
        O::DsMinRtnI64 => (A::Smin, true, true),
        O::DsMaxI64 => (A::Smax, false, true),
        O::DsMaxRtnI64 => (A::Smax, true, true),
        O::DsMinU64 => (A::Umin, false, true),
        O::DsMinRtnU64 => (A::Umin, true, true),
        O::DsMaxU64 => (A::Umax, false, true),
        O::DsMaxRtnU64 => (A::Umax, true, true),
        O::DsAndB64 => (A::And, false, true),
        O::DsAndRtnB64 => (A::And, true, true),
        O::DsOrB64 => (A::Or, false, true),
        O::DsOrRtnB64 => (A::Or, true, true),
        O::DsXorB64 => (A::Xor, false, true),
        O::DsXorRtnB64 => (A::Xor, true, true),
        O::DsMskorB32 => (A::Mskor, false, false),
        O::DsMskorRtnB32 => (A::Mskor, true, false),
        O::DsMskorB64 => (A::Mskor, false, true),
        O::DsMskorRtnB64 => (A::Mskor, true, true),
        O::DsCmpstF32 => (A::Cmpswap, false, false),
        O::DsCmpstRtnF32 => (A::Cmpswap, true, false),
        O::DsCmpstF64 => (A::Cmpswap, false, true),
        O::DsCmpstRtnF64 => (A::Cmpswap, true, true),
        O::DsMinF32 => (A::MinF32, false, false),
        O::DsMinRtnF32 => (A::MinF32, true, false),
        O::DsMaxF32 => (A::MaxF32, false, false),
        O::DsMaxRtnF32 => (A::MaxF32, true, false),
        O::DsMinF64 => (A::MinF64, false, true),
        O::DsMinRtnF64 => (A::MinF64, true, true),
        O::DsMaxF64 => (A::MaxF64, false, true),
        O::DsMaxRtnF64 => (A::MaxF64, true, true),
        O::DsPkAddF16 => (A::PkAddF16, false, false),
        O::DsPkAddRtnF16 => (A::PkAddF16, true, false),
        O::DsPkAddBf16 => (A::PkAddBf16, false, false),
        O::DsPkAddRtnBf16 => (A::PkAddBf16, true, false),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::Mode;

    #[test]
    fn pk_add_flushes_denormals_per_mode() {
        // MODE FP_DENORM: f32 bits 5:4, f16/f64 bits 7:6; 3 keeps, 0 flushes in and out.
        let keep = Mode::decode(0x3f0);
        let flush_f16 = Mode::decode(0x330);
        let flush_f32 = Mode::decode(0x3c0);
        // f16: 0x0001 (smallest denormal) + 0x0001 = 0x0002, flushed to +0 (the inputs flush).
        assert_eq!(AtomicOp::PkAddF16.pk_add(0x0001_0001, 0x0001_0001, keep), 0x0002_0002);
        assert_eq!(AtomicOp::PkAddF16.pk_add(0x0001_0001, 0x0001_0001, flush_f16), 0);
        assert_eq!(AtomicOp::PkAddF16.pk_add(0x0001_0001, 0x0001_0001, flush_f32), 0x0002_0002);
        // bf16 follows the f32 mode: 0x0001 is a bf16 denormal.
        assert_eq!(AtomicOp::PkAddBf16.pk_add(0x0001_0001, 0x0001_0001, keep), 0x0002_0002);
        assert_eq!(AtomicOp::PkAddBf16.pk_add(0x0001_0001, 0x0001_0001, flush_f32), 0);
        assert_eq!(AtomicOp::PkAddBf16.pk_add(0x0001_0001, 0x0001_0001, flush_f16), 0x0002_0002);
        // Normal values are untouched by either mode: 1.0 + 2.0 = 3.0 in both halves.
        assert_eq!(AtomicOp::PkAddF16.pk_add(0x3c00_3c00, 0x4000_4000, flush_f16), 0x4200_4200);
        assert_eq!(AtomicOp::PkAddBf16.pk_add(0x3f80_3f80, 0x4000_4000, flush_f32), 0x4040_4040);
    }
}
