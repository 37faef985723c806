//! MUBUF and MTBUF: buffer addressing, range checking, typed (format) loads and stores,
//! loads into LDS, and the `buffer_*` cache operations.
//!
//! **Addressing** (CDNA3/CDNA4 ISA, "Buffer Addressing"): `index = (idxen ? vgpr_index :
//! 0) + (ADD_TID_ENABLE ? lane : 0)`, `offset = (offen ? vgpr_offset : 0) + inst_offset`
//! computed in 32 bits (it wraps: clang's stack accesses `buffer_load_ubyte v1, v1,
//! s[0:3], 0 offen offset:1` with v1 = -1 read byte 0), and `address = base + soffset +
//! offset + index * stride`. With ADD_TID_ENABLE a non-format instruction's stride is 18
//! bits, its top four bits in the DATA_FORMAT field. Swizzled resources (SWIZZLE_ENABLE)
//! are refused as unsupported: the CDNA descriptor has no element-size field to swizzle
//! with.
//!
//! **Range checking**: a private buffer (ADD_TID_ENABLE, no idxen) is not checked; a raw
//! buffer (no idxen, or stride 0) checks the 32-bit offset against NUM_RECORDS bytes (a
//! component is in range when all its bytes are, `offset + bytes <= num_records`: the guide
//! states the start-offset test only); a structured buffer (idxen, stride != 0) checks
//! `index < num_records`. Dword loads and stores are checked per dword; format loads and
//! stores and atomics all or nothing. Out-of-range reads return zero (`dst_sel` SEL_1: one),
//! out-of-range writes and atomics are dropped (a returning atomic returns zero).
//!
//! **Unbound resources**: a resource whose DATA_FORMAT is INVALID (0) is unbound (the guide:
//! the data format is then not replaced by the instruction's implied one), so every access
//! through it behaves as out of range. With ADD_TID_ENABLE a non-format instruction reads
//! that field as stride bits instead. A `tbuffer_*` whose own DFMT is INVALID likewise,
//! and (a decision, see `buffer_format`) a format instruction whose DATA_FORMAT /
//! NUM_FORMAT pair the format table does not define (reserved codes included): loads
//! return zero, stores are dropped.
//!
//! **Format loads** return the converted channels through the resource's `dst_sel`
//! (MTBUF: X, Y, Z, W in order): SEL_0 reads 0, SEL_1 one (1.0, or the integer 1 for
//! uint/sint), SEL_X..SEL_W the channel, where a channel the format lacks reads 0 and a
//! missing W reads one (`buffer_format`'s fill rule). The reserved selects 2 and 3 read 0
//! (a decision: the guides list them as reserved, as SEL_0 they select no data).
//!
//! **Model layout of private memory**: the wave's own private-segment resource (the one
//! [`init_group_waves`](super::init_group_waves) builds) addresses each lane's private
//! memory contiguously (the layout flat scratch addresses use), its stride the wave's
//! private size and its SGPR offset a wave offset (divided by 64).
//!
//! **Loads into LDS** (the `lds` bit; `buffer_load_{ubyte,sbyte,ushort,sshort,dword,
//! format_x}`, gfx950 also `dwordx3`/`dwordx4`): lane `l` writes the dword(s) it would have
//! returned to `M0[15:0]` (gfx950: `M0[17:0]`) `+ inst_offset + l * 4` (`* 16` for 3 and 4
//! dwords, the fourth slot of a 3-dword load skipped); writes outside the work-group's LDS
//! are dropped. Such loads, and lanes of a dword load that are partly in range, are always
//! performed at once, whatever the memory's route says (their results do not fit a
//! [`VmemRequest`](super::VmemRequest) completion). `buffer_store_lds_dword` (gfx90a,
//! gfx942) is the reverse: lane `l` stores the LDS dword at `M0[15:0] + inst_offset + l * 4`
//! (the same LDS address rule; the guides give no other) to its buffer address.

#![allow(clippy::needless_range_loop)] // lane loops index lane arrays in lockstep

use crate::decode::{Encoding, Opcode};
use crate::Target;

use super::buffer_format::{one, BufferFormat};
use super::device::{AccessKind, CachePolicy, DeviceMemory, Element, Space, VmemAccess};
use super::operands::{scalar_src, unsupported, Ctx};
use super::vmem::{access, aux_element, file, lds_base, read_lds_element, write_lds_element, LaneAddr, MemOp, D16_HI, D16_LO, KIND_ATOMIC, KIND_LOAD, KIND_STORE, T_FORMAT};
use super::wave::{Wave, WAVE_LANES};
use super::ExecFault;

const N: usize = WAVE_LANES;

/// The cache-policy bits of a MUBUF/MTBUF instruction.
pub(super) fn mubuf_policy(w0: u32, w1: u32) -> CachePolicy {
    CachePolicy { sc0: (w0 >> 14) & 1 != 0, sc1: (w0 >> 15) & 1 != 0, nt: (w1 >> 22) & 1 != 0 }
}

/// `buffer_wbl2`, `buffer_inv`, `buffer_invl2`, `buffer_wbinvl1*`: reported to the route,
/// otherwise no-ops (the functional memory has no caches).
fn buffer_cache_op<M: DeviceMemory>(c: &super::program::CachedInst, pc: u64, ctx: &mut Ctx<M>) -> Option<()> {
    let kind = match c.op {
        Opcode::BufferWbl2 => AccessKind::Writeback,
        Opcode::BufferInv | Opcode::BufferInvl2 | Opcode::BufferWbinvl1 | Opcode::BufferWbinvl1Vol => AccessKind::Invalidate,
        _ => return None,
    };
    let [w0, w1] = [c.inst.words()[0], c.inst.words().get(1).copied().unwrap_or(0)];
    if M::OBSERVES_ROUTES {
        let addrs = [0u64; N];
        let access = VmemAccess { pc, kind, space: Space::Buffer, policy: mubuf_policy(w0, w1), bytes_per_lane: 0, mask: 1, addrs: &addrs };
        ctx.mem.route(&access);
    }
    Some(())
}

/// The fields of a buffer resource (V#) the executor uses.
struct Resource {
    base: u64,
    stride: u64,
    swizzle: bool,
    num_records: u64,
    dst_sel: [u32; 4],
    nfmt: u32,
    dfmt: u32,
    add_tid: bool,
}

impl Resource {
    fn read(w: &Wave, srsrc: usize) -> Resource {
        let d = [w.sgpr[srsrc & 127], w.sgpr[(srsrc + 1) & 127], w.sgpr[(srsrc + 2) & 127], w.sgpr[(srsrc + 3) & 127]];
        Resource {
            base: d[0] as u64 | (((d[1] & 0xffff) as u64) << 32),
            stride: ((d[1] >> 16) & 0x3fff) as u64,
            swizzle: (d[1] >> 31) & 1 != 0,
            num_records: d[2] as u64,
            dst_sel: [d[3] & 7, (d[3] >> 3) & 7, (d[3] >> 6) & 7, (d[3] >> 9) & 7],
            nfmt: (d[3] >> 12) & 7,
            dfmt: (d[3] >> 15) & 15,
            add_tid: (d[3] >> 23) & 1 != 0,
        }
    }
}

/// How an instruction's lanes are range-checked.
#[derive(Copy, Clone, PartialEq, Eq)]
enum RangeCheck {
    /// Private buffer: never out of range.
    None,
    /// Raw buffer: the offset against NUM_RECORDS bytes.
    Raw,
    /// Structured buffer: the index against NUM_RECORDS.
    Structured,
    /// Unbound resource: always out of range.
    Unbound,
}

/// One lane's address terms.
#[derive(Copy, Clone, Default)]
struct LaneTerms {
    /// The lane's address of component 0.
    addr: u64,
    /// The 32-bit wrapped offset.
    offset: u32,
    /// The record index (with the lane id under ADD_TID_ENABLE).
    index: u64,
}

/// The decoded addressing of one MUBUF/MTBUF instruction.
struct Addressing {
    terms: [LaneTerms; N],
    /// The wave's own private-segment resource: each lane's address lies in its private
    /// segment, which starts at this address plus `lane * stride`.
    private: Option<(u64, u64)>,
    check: RangeCheck,
    num_records: u64,
    /// The instruction's offset field (loads into LDS add it to the LDS address too).
    inst_offset: u32,
}

impl Addressing {
    /// Whether `bytes` bytes at byte `at` of the lane's element are in range.
    fn in_range(&self, lane: usize, at: u64, bytes: u64) -> bool {
        let t = &self.terms[lane];
        match self.check {
            RangeCheck::None => true,
            RangeCheck::Raw => t.offset as u64 + at + bytes <= self.num_records,
            RangeCheck::Structured => t.index < self.num_records,
            RangeCheck::Unbound => false,
        }
    }
}

/// Whether a MUBUF/MTBUF aux descriptor names a format instruction.
fn is_format(aux: u16) -> bool {
    (aux >> 4) & 0xf == T_FORMAT
}

pub(super) fn mubuf<M: DeviceMemory>(w: &mut Wave, c: &super::program::CachedInst, pc: u64, ctx: &mut Ctx<M>) -> Result<(), ExecFault> {
    if c.enc == Encoding::Mubuf && buffer_cache_op(c, pc, ctx).is_some() {
        return Ok(());
    }
    let aux = c.aux;
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    if c.op == Opcode::BufferStoreLdsDword {
        let res = Resource::read(w, (((w1 >> 16) & 0x1f) * 4) as usize);
        if res.swizzle {
            return Err(unsupported(&c.inst, pc));
        }
        return store_from_lds(w, ctx, pc, &addressing(w, c, &res, false));
    }
    let lds = c.enc == Encoding::Mubuf && (w0 >> 16) & 1 != 0;
    if aux == 0 || lds && !lds_form(c.op, ctx.target) {
        return Err(unsupported(&c.inst, pc));
    }
    let vdata = ((w1 >> 8) & 0xff) as usize;
    let op = MemOp {
        pc,
        aux,
        data: vdata,
        vdst: vdata,
        acc: (w1 >> 23) & 1 != 0,
        glc: (w0 >> 14) & 1 != 0,
        policy: mubuf_policy(w0, w1),
        space: Space::Buffer,
    };
    let res = Resource::read(w, (((w1 >> 16) & 0x1f) * 4) as usize);
    if res.swizzle {
        return Err(unsupported(&c.inst, pc));
    }
    // The format of a format instruction: MTBUF's own fields, else the resource's.
    let format = if c.enc == Encoding::Mtbuf { Some(((w0 >> 19) & 15, (w0 >> 23) & 7)) } else { is_format(aux).then_some((res.dfmt, res.nfmt)) };
    let addressing = addressing(w, c, &res, format.is_some());
    check_private_lanes(w, pc, &addressing, if format.is_some() { 1 } else { op.bytes() })?;
    if let Some((dfmt, nfmt)) = format {
        let dst_sel = if c.enc == Encoding::Mtbuf { None } else { Some(res.dst_sel) };
        return format_access(w, ctx, &op, &addressing, (dfmt, nfmt), dst_sel, lds);
    }
    if lds {
        return load_to_lds(w, ctx, &op, &addressing, |_| None);
    }
    dword_access(w, ctx, &op, &addressing)
}

/// Whether `op` may carry the `lds` bit on `target`.
fn lds_form(op: Opcode, target: Target) -> bool {
    use Opcode as O;
    match op {
        O::BufferLoadUbyte | O::BufferLoadSbyte | O::BufferLoadUshort | O::BufferLoadSshort | O::BufferLoadDword | O::BufferLoadFormatX => true,
        O::BufferLoadDwordx3 | O::BufferLoadDwordx4 => target == Target::Gfx950,
        _ => false,
    }
}

/// Per-lane address terms and the range-check kind of an instruction.
fn addressing(w: &Wave, c: &super::program::CachedInst, res: &Resource, format: bool) -> Addressing {
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let inst_offset = w0 & 0xfff;
    let offen = (w0 >> 12) & 1 != 0;
    let idxen = (w0 >> 13) & 1 != 0;
    let vaddr = (w1 & 0xff) as usize;
    let soffset = scalar_src(w, (w1 >> 24) & 0xff, 0, false) as u64;
    // A non-format instruction under ADD_TID_ENABLE has an 18-bit stride.
    let mut stride = if res.add_tid && !format { res.stride | ((res.dfmt as u64) << 14) } else { res.stride };
    // The model's private-segment resource: see the module docs.
    let private = res.add_tid && res.base == w.scratch_base & 0xffff_ffff_ffff;
    let soffset = if res.add_tid { soffset / WAVE_LANES as u64 } else { soffset };
    if private {
        stride = w.scratch_lane_bytes as u64;
    }
    let check = if res.dfmt == 0 && (format || !res.add_tid) && c.enc != Encoding::Mtbuf {
        RangeCheck::Unbound
    } else if res.add_tid && !idxen {
        RangeCheck::None
    } else if idxen && stride != 0 {
        RangeCheck::Structured
    } else {
        RangeCheck::Raw
    };
    let base = res.base.wrapping_add(soffset);
    let terms = std::array::from_fn(|lane| {
        let index = if idxen { w.vgpr[vaddr][lane] as u64 } else { 0 } + if res.add_tid { lane as u64 } else { 0 };
        let voff = if offen { w.vgpr[(vaddr + idxen as usize) & 255][lane] } else { 0 };
        let offset = voff.wrapping_add(inst_offset);
        LaneTerms { addr: base.wrapping_add(offset as u64).wrapping_add(index * stride), offset, index }
    });
    Addressing {
        terms,
        private: private.then_some((res.base, stride)),
        check,
        num_records: res.num_records,
        inst_offset,
    }
}

/// Faults a private-segment access of `bytes` per lane that leaves a lane's segment (see
/// [`ExecFault::PrivateOverflow`]); other resources pass.
fn check_private_lanes(w: &Wave, pc: u64, a: &Addressing, bytes: u32) -> Result<(), ExecFault> {
    let Some((base, stride)) = a.private else {
        return Ok(());
    };
    let exec = w.exec();
    for lane in 0..N {
        if (exec >> lane) & 1 != 0 {
            let start = base.wrapping_add(lane as u64 * stride);
            super::vmem::check_private(w, pc, a.terms[lane].addr.wrapping_sub(start), bytes)?;
        }
    }
    Ok(())
}

/// Loads, stores and atomics of whole dwords, bytes and shorts.
fn dword_access<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, op: &MemOp, a: &Addressing) -> Result<(), ExecFault> {
    let exec = w.exec();
    let kind = op.aux & 0xf;
    let (element, count) = if kind == KIND_ATOMIC { (Element::Dwords, 1) } else { aux_element(op.aux) };
    let size = op.bytes() as u64;
    let mut full = 0u64;
    let mut partial = 0u64;
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        if a.in_range(lane, 0, size) {
            full |= 1 << lane;
        } else if kind != KIND_ATOMIC && element == Element::Dwords && a.in_range(lane, 0, 4) {
            partial |= 1 << lane;
        }
    }
    let out = exec & !full & !partial;
    // Out-of-range loads and returning atomics return zero.
    if kind == KIND_LOAD || kind == KIND_ATOMIC && op.glc {
        let dwords = if kind == KIND_ATOMIC { op.bytes() as usize / 4 } else if element == Element::Dwords { count } else { 1 };
        let regs = file(w, op.acc);
        for lane in 0..N {
            if (out >> lane) & 1 != 0 {
                for k in 0..dwords {
                    let r = &mut regs[(op.vdst + k) & 255][lane];
                    *r = match op.aux & (3 << 14) {
                        D16_LO => *r & 0xffff_0000,
                        D16_HI => *r & 0xffff,
                        _ => 0,
                    };
                }
            }
        }
    }
    if partial != 0 {
        partly_in_range(w, ctx, op, a, partial, count)?;
    }
    let lanes: [LaneAddr; N] = std::array::from_fn(|lane| LaneAddr::Global(a.terms[lane].addr));
    access(w, ctx, op, full, &lanes)
}

/// Dword loads and stores of lanes with some components out of range: each dword is
/// checked and moved on its own, at once.
fn partly_in_range<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, op: &MemOp, a: &Addressing, lanes: u64, count: usize) -> Result<(), ExecFault> {
    let fault = |f| ExecFault::mem(op.pc, f);
    for lane in 0..N {
        if (lanes >> lane) & 1 == 0 {
            continue;
        }
        for k in 0..count {
            let inside = a.in_range(lane, 4 * k as u64, 4);
            let addr = a.terms[lane].addr.wrapping_add(4 * k as u64);
            let reg = (op.data + k) & 255;
            if op.aux & 0xf == KIND_LOAD {
                let v = if inside { ctx.mem.read_u32(addr).map_err(fault)? } else { 0 };
                file(w, op.acc)[(op.vdst + k) & 255][lane] = v;
            } else if inside {
                let v = if op.acc { w.agpr[reg][lane] } else { w.vgpr[reg][lane] };
                ctx.mem.write_u32(addr, v).map_err(fault)?;
            }
        }
    }
    Ok(())
}

/// A load into LDS: `value(lane)` gives a lane's dwords (`None`: read them as the
/// instruction's element from memory). See the module docs.
fn load_to_lds<M: DeviceMemory>(
    w: &mut Wave,
    ctx: &mut Ctx<M>,
    op: &MemOp,
    a: &Addressing,
    mut value: impl FnMut(usize) -> Option<[u32; 4]>,
) -> Result<(), ExecFault> {
    let exec = w.exec();
    let (element, count) = if is_format(op.aux) { (Element::Dwords, 1) } else { aux_element(op.aux) };
    let size = element.bytes(count as u32) as u64;
    let base = lds_base(w, ctx.target).wrapping_add(a.inst_offset);
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        let dwords = match value(lane) {
            Some(v) => v,
            None if a.in_range(lane, 0, size) => read_lds_element(ctx.mem, op.pc, a.terms[lane].addr, element, count)?,
            None => [0; 4],
        };
        write_lds_element(ctx.lds, base, lane, &dwords, count);
    }
    Ok(())
}

/// `buffer_store_lds_dword`: lane `l` stores the LDS dword at `M0[15:0] + inst_offset +
/// 4 * l` to its buffer address (raw range checking per dword; out-of-range lanes store
/// nothing; LDS outside the work-group's allocation reads zero).
fn store_from_lds<M: DeviceMemory>(w: &Wave, ctx: &mut Ctx<M>, pc: u64, a: &Addressing) -> Result<(), ExecFault> {
    let exec = w.exec();
    let base = lds_base(w, ctx.target).wrapping_add(a.inst_offset);
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 || !a.in_range(lane, 0, 4) {
            continue;
        }
        let v = super::vmem::lds_u32(ctx.lds, base.wrapping_add(4 * lane as u32));
        ctx.mem.write_u32(a.terms[lane].addr, v).map_err(|f| ExecFault::mem(pc, f))?;
    }
    Ok(())
}

/// `buffer_load_format_*`, `buffer_store_format_*` and every `tbuffer_*`.
fn format_access<M: DeviceMemory>(
    w: &mut Wave,
    ctx: &mut Ctx<M>,
    op: &MemOp,
    a: &Addressing,
    (dfmt, nfmt): (u32, u32),
    dst_sel: Option<[u32; 4]>,
    lds: bool,
) -> Result<(), ExecFault> {
    let count = ((op.aux >> 8) & 0xf) as usize;
    let d16 = op.aux & (D16_LO | D16_HI) != 0;
    let exec = w.exec();
    // INVALID, a reserved code or an unpaired combination: an unbound resource.
    let Some(fmt) = BufferFormat::new(dfmt, nfmt) else {
        return unbound_format(w, ctx, op, a, nfmt, dst_sel, lds);
    };
    let bytes = fmt.bytes();
    let fault = |f| ExecFault::mem(op.pc, f);
    if op.aux & 0xf == KIND_STORE {
        for lane in 0..N {
            if (exec >> lane) & 1 == 0 || !a.in_range(lane, 0, bytes as u64) {
                continue;
            }
            let regs = if op.acc { &w.agpr } else { &w.vgpr };
            let mut comps = [0u32; 4];
            for k in 0..count {
                let reg = regs[(op.data + if d16 { k / 2 } else { k }) & 255][lane];
                comps[k] = if !d16 {
                    reg
                } else if op.aux & D16_HI != 0 || k % 2 == 1 {
                    reg >> 16
                } else {
                    reg & 0xffff
                };
            }
            let (data, mask) = fmt.pack(&comps, count, d16);
            for i in 0..bytes {
                if (mask >> i) & 1 != 0 {
                    ctx.mem.write(a.terms[lane].addr.wrapping_add(i as u64), &data[i..i + 1]).map_err(fault)?;
                }
            }
        }
        return Ok(());
    }
    // Loads: fetch and convert (the fill rule gives the channels the format lacks), then
    // apply dst_sel; MTBUF reads X, Y, Z, W in order.
    let sel = dst_sel.unwrap_or([SEL_X, SEL_X + 1, SEL_X + 2, SEL_X + 3]);
    let mut values = [[0u32; 4]; N];
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        let inside = a.in_range(lane, 0, bytes as u64);
        let mut buf = [0u8; 16];
        if inside {
            ctx.mem.read(a.terms[lane].addr, &mut buf[..bytes]).map_err(fault)?;
        }
        let fetched = fmt.unpack(&buf, d16);
        values[lane] = sel.map(|s| match s {
            SEL_1 => one(nfmt, d16),
            SEL_X..=7 if inside => fetched[(s - SEL_X) as usize],
            _ => 0,
        });
    }
    if lds {
        return load_to_lds(w, ctx, op, a, |lane| Some(values[lane]));
    }
    write_format_result(w, op, &values);
    Ok(())
}

/// `dst_sel` SEL_1: the channel reads one.
const SEL_1: u32 = 1;
/// `dst_sel` SEL_X; SEL_Y, SEL_Z and SEL_W follow. SEL_0 (0) and the reserved selects 2
/// and 3 read zero.
const SEL_X: u32 = 4;

/// A format instruction through an unbound resource (DATA_FORMAT INVALID, or a format
/// pair the format table does not define): stores write nothing; loads return zero in
/// every component (one where the resource's `dst_sel` is SEL_1, in the number format's
/// encoding).
fn unbound_format<M: DeviceMemory>(
    w: &mut Wave,
    ctx: &mut Ctx<M>,
    op: &MemOp,
    a: &Addressing,
    nfmt: u32,
    dst_sel: Option<[u32; 4]>,
    lds: bool,
) -> Result<(), ExecFault> {
    if op.aux & 0xf == KIND_STORE {
        return Ok(());
    }
    let d16 = op.aux & (D16_LO | D16_HI) != 0;
    let v = dst_sel.unwrap_or([0; 4]).map(|s| if s == SEL_1 { one(nfmt, d16) } else { 0 });
    if lds {
        return load_to_lds(w, ctx, op, a, |_| Some(v));
    }
    write_format_result(w, op, &[v; N]);
    Ok(())
}

/// Writes the converted components of a format load to the destination registers of
/// the active lanes (`_d16`: packed in halves).
fn write_format_result(w: &mut Wave, op: &MemOp, values: &[[u32; 4]; N]) {
    let exec = w.exec();
    let count = ((op.aux >> 8) & 0xf) as usize;
    let d16 = op.aux & (D16_LO | D16_HI) != 0;
    let regs = file(w, op.acc);
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        let v = values[lane];
        if !d16 {
            for k in 0..count {
                regs[(op.vdst + k) & 255][lane] = v[k];
            }
        } else if op.aux & D16_HI != 0 {
            let r = &mut regs[op.vdst][lane];
            *r = (*r & 0xffff) | (v[0] << 16);
        } else {
            for k in 0..count {
                let r = &mut regs[(op.vdst + k / 2) & 255][lane];
                *r = if k % 2 == 0 { (*r & 0xffff_0000) | v[k] } else { (*r & 0xffff) | (v[k] << 16) };
            }
        }
    }
}
