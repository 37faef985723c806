//! Vector memory: the FLAT/GLOBAL/SCRATCH handler, and the load/store/atomic machinery it
//! shares with DS ([`super::ds`]) and MUBUF/MTBUF ([`super::buffer`]).
//!
//! Global/flat/buffer instructions are described at load time by [`mem_aux`] (kind,
//! width, atomic operation) so the hot path does not look at mnemonics. LDS accesses out
//! of the work-group's allocation read zero and drop writes; buffer accesses outside the
//! resource's `num_records` do the same; global accesses to unmapped memory fault.
//!
//! Every FLAT/GLOBAL/SCRATCH/MUBUF load, store and atomic, and every `buffer_*` cache
//! operation, first asks [`DeviceMemory::route`]; a deferred access becomes a
//! [`VmemRequest`](super::VmemRequest) parked in the wave (see [`super::device`]).

#![allow(clippy::needless_range_loop)] // lane loops index lane arrays in lockstep

use crate::decode::{Encoding, Opcode};
use crate::Target;

use super::device::{AccessKind, AtomicOp, CachePolicy, DeviceMemory, Element, Route, Space, VgprDest, VmemAccess};
use super::operands::{unsupported, Ctx, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use super::program::CachedInst;
use super::reg_file::RegFile;
use super::wave::{PendingAccess, VReg, Wave, WaveStatus, M0, WAVE_LANES};
use super::ExecFault;

const N: usize = WAVE_LANES;

pub(super) const KIND_LOAD: u16 = 1;
pub(super) const KIND_STORE: u16 = 2;
pub(super) const KIND_ATOMIC: u16 = 3;

/// Element types of loads and stores (bits 4..7).
const T_DWORDS: u16 = 0;
const T_UBYTE: u16 = 1;
const T_SBYTE: u16 = 2;
const T_USHORT: u16 = 3;
const T_SSHORT: u16 = 4;
/// A format (typed) load or store: bits 11:8 hold the component count.
pub(super) const T_FORMAT: u16 = 5;

/// `_d16` forms (bits 15:14): a load fills the low half of its destination and keeps the
/// high half; a `_d16_hi` load fills the high half and keeps the low one; a `_d16_hi`
/// store stores from the high half of its data register.
pub(super) const D16_LO: u16 = 1 << 14;
pub(super) const D16_HI: u16 = 2 << 14;

/// The aux descriptor of `global_load_dword`.
const LOAD_DWORD: u16 = KIND_LOAD | (T_DWORDS << 4) | (1 << 8);
/// The aux descriptor of `global_store_dword`.
const STORE_DWORD: u16 = KIND_STORE | (T_DWORDS << 4) | (1 << 8);

/// Memory descriptor of a global/flat/scratch/buffer mnemonic: bits 3:0 kind, 7:4 element
/// type, 11:8 dword count (loads/stores); for atomics bits 12:8 the index of the
/// operation in [`AtomicOp::ALL`] and bit 13 the `_x2` (64-bit) form. 0 when the form is
/// not supported (d16, lds, format conversions).
pub(crate) fn mem_aux(mnemonic: &str) -> u16 {
    if let Some(aux) = format_aux(mnemonic) {
        return aux;
    }
    let rest = ["global_", "flat_", "scratch_", "buffer_"].iter().find_map(|p| mnemonic.strip_prefix(p));
    let Some(rest) = rest else { return 0 };
    if let Some(a) = rest.strip_prefix("atomic_") {
        let (name, x2) = match a.strip_suffix("_x2") {
            Some(n) => (n, true),
            None => (a, false),
        };
        return match AtomicOp::ALL.iter().position(|op| *op != AtomicOp::Mskor && op.stem() == name) {
            Some(index) => KIND_ATOMIC | ((index as u16) << 8) | ((x2 as u16) << 13),
            None => 0,
        };
    }
    let (kind, ty) = if let Some(t) = rest.strip_prefix("load_") {
        (KIND_LOAD, t)
    } else if let Some(t) = rest.strip_prefix("store_") {
        (KIND_STORE, t)
    } else {
        return 0;
    };
    let (ty, d16) = if let Some(t) = ty.strip_suffix("_d16_hi") {
        (t, D16_HI)
    } else if let Some(t) = ty.strip_suffix("_d16") {
        // Stores have no low `_d16` form: storing the low half is the plain store.
        if kind == KIND_STORE {
            return 0;
        }
        (t, D16_LO)
    } else {
        (ty, 0)
    };
    let (t, count) = match ty {
        "dword" => (T_DWORDS, 1),
        "dwordx2" => (T_DWORDS, 2),
        "dwordx3" => (T_DWORDS, 3),
        "dwordx4" => (T_DWORDS, 4),
        "ubyte" | "byte" => (T_UBYTE, 1),
        "sbyte" => (T_SBYTE, 1),
        "ushort" | "short" => (T_USHORT, 1),
        "sshort" => (T_SSHORT, 1),
        _ => return 0,
    };
    if d16 != 0 && t == T_DWORDS {
        return 0;
    }
    kind | (t << 4) | (count << 8) | d16
}

/// The aux descriptor of a `buffer_*_format_*` / `tbuffer_*_format_*` mnemonic: kind,
/// [`T_FORMAT`], the component count and the d16 flags (`_d16_hi_x`: [`D16_HI`]).
fn format_aux(mnemonic: &str) -> Option<u16> {
    let rest = mnemonic.strip_prefix("t").unwrap_or(mnemonic).strip_prefix("buffer_")?;
    let (kind, rest) = match rest.strip_prefix("load_format_") {
        Some(r) => (KIND_LOAD, r),
        None => (KIND_STORE, rest.strip_prefix("store_format_")?),
    };
    let (d16, comps) = if let Some(r) = rest.strip_prefix("d16_hi_") {
        (D16_HI, r)
    } else if let Some(r) = rest.strip_prefix("d16_") {
        (D16_LO, r)
    } else {
        (0, rest)
    };
    let count = match comps {
        "x" => 1,
        "xy" => 2,
        "xyz" => 3,
        "xyzw" => 4,
        _ => return None,
    };
    Some(kind | (T_FORMAT << 4) | (count << 8) | d16)
}

/// Merges a `_d16` load's 16-bit value into the destination's old contents.
#[inline]
fn d16_merge(aux: u16, old: u32, value: u32) -> u32 {
    match aux & (3 << 14) {
        D16_LO => (old & 0xffff_0000) | (value & 0xffff),
        D16_HI => (old & 0xffff) | (value << 16),
        _ => value,
    }
}

/// The atomic operation and width (64-bit?) of an atomic aux descriptor.
pub(super) fn aux_atomic(aux: u16) -> (AtomicOp, bool) {
    let index = ((aux >> 8) & 0x1f) as usize;
    // mem_aux only stores indices of AtomicOp::ALL; Swap is never reached for valid aux.
    let op = AtomicOp::ALL.get(index).copied().unwrap_or(AtomicOp::Swap);
    (op, (aux >> 13) & 1 != 0 || op.is_f64())
}

/// The element and dword count of a load/store aux descriptor.
pub(super) fn aux_element(aux: u16) -> (Element, usize) {
    match (aux >> 4) & 0xf {
        T_DWORDS => (Element::Dwords, ((aux >> 8) & 0xf) as usize),
        T_UBYTE => (Element::U8, 1),
        T_SBYTE => (Element::I8, 1),
        T_USHORT => (Element::U16, 1),
        _ => (Element::I16, 1),
    }
}

/// The LDS byte offset M0 gives loads into LDS and `buffer_store_lds_dword`: `M0[15:0]`
/// (gfx950: `M0[17:0]`, its LDS being 160 KiB).
pub(super) fn lds_base(w: &Wave, target: Target) -> u32 {
    w.sgpr[M0] & if target == Target::Gfx950 { 0x3_ffff } else { 0xffff }
}

/// Reads one lane's element of a load into LDS from `addr`: the dwords it writes to LDS
/// (bytes and shorts extended to a dword as the matching VGPR load would).
pub(super) fn read_lds_element<M: DeviceMemory>(mem: &mut M, pc: u64, addr: u64, element: Element, count: usize) -> Result<[u32; 4], ExecFault> {
    let size = element.bytes(count as u32) as usize;
    let mut buf = [0u8; 16];
    mem.read(addr, &mut buf[..size.min(16)]).map_err(|f| ExecFault::mem(pc, f))?;
    let mut d = [0u32; 4];
    for (k, chunk) in buf.chunks_exact(4).enumerate() {
        d[k] = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    d[0] = match element {
        Element::U8 => buf[0] as u32,
        Element::I8 => buf[0] as i8 as i32 as u32,
        Element::U16 => u16::from_le_bytes([buf[0], buf[1]]) as u32,
        Element::I16 => u16::from_le_bytes([buf[0], buf[1]]) as i16 as i32 as u32,
        Element::Dwords => d[0],
    };
    Ok(d)
}

/// Writes lane `lane`'s `count` dwords of a load into LDS at `base + lane * 4` (`* 16` for
/// 3- and 4-dword loads); bytes outside the work-group's LDS are dropped.
pub(super) fn write_lds_element(lds: &mut [u8], base: u32, lane: usize, dwords: &[u32; 4], count: usize) {
    let lane_stride = if count >= 3 { 16 } else { 4 };
    let at = base.wrapping_add(lane as u32 * lane_stride);
    for (k, d) in dwords.iter().enumerate().take(count.clamp(1, 4)) {
        lds_write(lds, at.wrapping_add(4 * k as u32), &d.to_le_bytes());
    }
}

/// The element of a GLOBAL/SCRATCH load into LDS (`*_load_lds_*`; gfx942, gfx950).
fn flat_lds_element(op: Opcode) -> Option<(Element, usize)> {
    use Opcode as O;
    Some(match op {
        O::GlobalLoadLdsUbyte | O::ScratchLoadLdsUbyte => (Element::U8, 1),
        O::GlobalLoadLdsSbyte | O::ScratchLoadLdsSbyte => (Element::I8, 1),
        O::GlobalLoadLdsUshort | O::ScratchLoadLdsUshort => (Element::U16, 1),
        O::GlobalLoadLdsSshort | O::ScratchLoadLdsSshort => (Element::I16, 1),
        O::GlobalLoadLdsDword | O::ScratchLoadLdsDword => (Element::Dwords, 1),
        O::GlobalLoadLdsDwordx3 => (Element::Dwords, 3),
        O::GlobalLoadLdsDwordx4 => (Element::Dwords, 4),
        _ => return None,
    })
}

/// A GLOBAL/SCRATCH load into LDS: each active lane reads its element at its usual address
/// and writes it to LDS at `M0 + offset + lane * 4` (`* 16` for 3 and 4 dwords), the
/// instruction offset added to both addresses as for the MUBUF `lds` forms. Performed at
/// once (the result goes to LDS, not to registers a completion could fill).
fn flat_load_lds<M: DeviceMemory>(w: &mut Wave, c: &CachedInst, pc: u64, ctx: &mut Ctx<M>, element: Element, count: usize) -> Result<(), ExecFault> {
    let w0 = c.inst.words()[0];
    let offset = (((w0 & 0x1fff) << 19) as i32 >> 19) as u32;
    let base = lds_base(w, ctx.target).wrapping_add(offset);
    let addrs = flat_addresses(w, c, ctx.target);
    let exec = w.exec();
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        let addr = match addrs[lane] {
            LaneAddr::Global(a) => a,
            LaneAddr::Private(off) => {
                check_private(w, pc, off, element.bytes(count as u32))?;
                private_addr(w, lane, off)
            }
            LaneAddr::Lds(_) => return Err(unsupported(&c.inst, pc)),
        };
        let dwords = read_lds_element(ctx.mem, pc, addr, element, count)?;
        write_lds_element(ctx.lds, base, lane, &dwords, count);
    }
    Ok(())
}

/// Where a lane's flat address points.
pub(super) enum LaneAddr {
    Global(u64),
    Lds(u32),
    Private(u64),
}

/// Per-lane addresses of a FLAT/GLOBAL/SCRATCH instruction.
fn flat_addresses(w: &Wave, c: &CachedInst, target: Target) -> [LaneAddr; N] {
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let enc = c.enc;
    let raw_off = w0 & 0x1fff;
    let offset = if enc == Encoding::Flat { raw_off as i64 } else { (((raw_off << 19) as i32) >> 19) as i64 };
    let vaddr = (w1 & 0xff) as usize;
    let saddr = ((w1 >> 16) & 0x7f) as usize;
    let exec = w.exec();
    std::array::from_fn(|lane| {
        if (exec >> lane) & 1 == 0 {
            return LaneAddr::Global(0);
        }
        match enc {
            Encoding::Global => {
                let a = if saddr == 0x7f {
                    (w.vgpr[vaddr][lane] as u64) | ((w.vgpr[(vaddr + 1) & 255][lane] as u64) << 32)
                } else {
                    w.sgpr_pair(saddr).wrapping_add(w.vgpr[vaddr][lane] as u64)
                };
                LaneAddr::Global(a.wrapping_add(offset as u64))
            }
            Encoding::Scratch => {
                let uses_v = if target.is_gfx940_family() { (w0 >> 13) & 1 != 0 } else { saddr == 0x7f };
                let mut a = offset;
                if uses_v {
                    a += w.vgpr[vaddr][lane] as i32 as i64;
                }
                if saddr != 0x7f {
                    a += w.sgpr[saddr] as i32 as i64;
                }
                LaneAddr::Private(a as u64 & 0xffff_ffff)
            }
            _ => {
                let a = ((w.vgpr[vaddr][lane] as u64) | ((w.vgpr[(vaddr + 1) & 255][lane] as u64) << 32)).wrapping_add(offset as u64);
                match (a >> 32) as u32 {
                    SHARED_APERTURE_HI => LaneAddr::Lds(a as u32),
                    PRIVATE_APERTURE_HI => LaneAddr::Private(a & 0xffff_ffff),
                    _ => LaneAddr::Global(a),
                }
            }
        }
    })
}

/// The device addresses of a FLAT or GLOBAL instruction's lanes of `exec` (0 for the
/// other lanes), when none of them falls in the LDS or private aperture of the flat
/// address space (`None` then, and for SCRATCH: those take [`flat_addresses`]).
#[inline]
fn device_addresses(w: &Wave, c: &CachedInst, exec: u64) -> Option<[u64; N]> {
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let vaddr = (w1 & 0xff) as usize;
    let saddr = ((w1 >> 16) & 0x7f) as usize;
    let lo = &w.vgpr[vaddr];
    let hi = &w.vgpr[(vaddr + 1) & 255];
    let mut out = [0u64; N];
    match c.enc {
        Encoding::Global => {
            let offset = ((((w0 & 0x1fff) << 19) as i32) >> 19) as i64 as u64;
            if saddr == 0x7f {
                for_lanes(exec, &mut out, |i| (lo[i] as u64 | ((hi[i] as u64) << 32)).wrapping_add(offset));
            } else {
                let base = w.sgpr_pair(saddr).wrapping_add(offset);
                for_lanes(exec, &mut out, |i| base.wrapping_add(lo[i] as u64));
            }
            Some(out)
        }
        Encoding::Flat => {
            let offset = (w0 & 0x1fff) as u64;
            for_lanes(exec, &mut out, |i| (lo[i] as u64 | ((hi[i] as u64) << 32)).wrapping_add(offset));
            // Inactive lanes hold 0, outside both apertures: one pass over all lanes.
            let aperture = out.iter().fold(false, |any, &a| any | matches!((a >> 32) as u32, SHARED_APERTURE_HI | PRIVATE_APERTURE_HI));
            (!aperture).then_some(out)
        }
        _ => None,
    }
}

/// Sets `out[lane] = f(lane)` for the lanes of `exec` (the others stay 0): all 64 in one
/// branch-free pass when most lanes are active, lane by lane when few are.
#[inline(always)]
fn for_lanes(exec: u64, out: &mut [u64; N], f: impl Fn(usize) -> u64) {
    if exec == u64::MAX {
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(i);
        }
    } else if exec.count_ones() > 8 {
        for (i, o) in out.iter_mut().enumerate() {
            let on = 0u64.wrapping_sub((exec >> i) & 1);
            *o = f(i) & on;
        }
    } else {
        let mut m = exec;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            out[lane] = f(lane);
        }
    }
}

/// The first address of a GLOBAL instruction whose 64 lanes address one unit-stride run
/// of dwords (lane `i` at `start + 4 * i`, no carry between the halves of a 64-bit address).
#[inline]
fn global_unit_stride(w: &Wave, c: &CachedInst) -> Option<u64> {
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let offset = ((((w0 & 0x1fff) << 19) as i32) >> 19) as i64 as u64;
    let vaddr = (w1 & 0xff) as usize;
    let saddr = ((w1 >> 16) & 0x7f) as usize;
    let lo = &w.vgpr[vaddr];
    let first = lo[0];
    if first > u32::MAX - 4 * (N as u32 - 1) {
        return None;
    }
    let mut differ = 0u32;
    for i in 0..N {
        differ |= lo[i] ^ first.wrapping_add(4 * i as u32);
    }
    let base = if saddr == 0x7f {
        let hi = &w.vgpr[(vaddr + 1) & 255];
        for i in 0..N {
            differ |= hi[i] ^ hi[0];
        }
        (hi[0] as u64) << 32
    } else {
        w.sgpr_pair(saddr)
    };
    (differ == 0).then(|| base.wrapping_add(first as u64).wrapping_add(offset))
}

/// A full-EXEC unit-stride dword load or store as one 256-byte access. Returns false,
/// having changed nothing, when that access fails: the per-lane path then reports the
/// fault of the first failing lane.
#[inline]
fn block_access<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, op: &MemOp, load: bool, start: u64) -> bool {
    let mut bytes = [0u8; 4 * N];
    if load {
        if ctx.mem.read(start, &mut bytes).is_err() {
            return false;
        }
        for (r, b) in w.vgpr[op.vdst].iter_mut().zip(bytes.chunks_exact(4)) {
            *r = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        true
    } else {
        for (b, r) in bytes.chunks_exact_mut(4).zip(w.vgpr[op.data].iter()) {
            b.copy_from_slice(&r.to_le_bytes());
        }
        ctx.mem.write(start, &bytes).is_ok()
    }
}

fn private_addr(w: &Wave, lane: usize, off: u64) -> u64 {
    w.scratch_base.wrapping_add(lane as u64 * w.scratch_lane_bytes as u64).wrapping_add(off)
}

/// Faults an access of `bytes` at offset `off` of a work-item's private segment that does
/// not fit in it (see [`ExecFault::PrivateOverflow`]).
pub(super) fn check_private(w: &Wave, pc: u64, off: u64, bytes: u32) -> Result<(), ExecFault> {
    if off.saturating_add(u64::from(bytes)) > u64::from(w.scratch_lane_bytes) {
        return Err(ExecFault::PrivateOverflow { pc, offset: off, bytes, segment: w.scratch_lane_bytes });
    }
    Ok(())
}

pub(super) fn lds_read(lds: &[u8], addr: u32, buf: &mut [u8]) {
    let a = addr as usize;
    match lds.get(a..a + buf.len()) {
        Some(s) => buf.copy_from_slice(s),
        None => buf.fill(0),
    }
}

pub(super) fn lds_write(lds: &mut [u8], addr: u32, data: &[u8]) {
    let a = addr as usize;
    if let Some(s) = lds.get_mut(a..a + data.len()) {
        s.copy_from_slice(data);
    }
}

/// The LDS byte range of a unit-stride dword access (lane `i` at `addr[0] + offset + 4 * i`)
/// when every lane's address follows that pattern without wrapping.
#[inline]
pub(super) fn lds_unit_stride(addr: &VReg, offset: u32) -> Option<std::ops::Range<usize>> {
    let base = addr[0];
    let mut differ = 0u32;
    for (i, &a) in addr.iter().enumerate() {
        differ |= a ^ base.wrapping_add(4 * i as u32);
    }
    if differ != 0 {
        return None;
    }
    // No lane's address may wrap around the 32-bit LDS address space.
    let start = base.checked_add(offset)?;
    start.checked_add(4 * N as u32 - 1)?;
    Some(start as usize..start as usize + 4 * N)
}

#[inline]
pub(super) fn lds_u32(lds: &[u8], addr: u32) -> u32 {
    let a = addr as usize;
    match lds.get(a..a + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

#[inline]
pub(super) fn lds_set_u32(lds: &mut [u8], addr: u32, v: u32) {
    let a = addr as usize;
    if let Some(s) = lds.get_mut(a..a + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

pub(super) fn file(w: &mut Wave, acc: bool) -> &mut RegFile {
    if acc {
        &mut w.agpr
    } else {
        &mut w.vgpr
    }
}

/// Applies an atomic to an LDS value of 4 or 8 bytes.
pub(super) fn apply(op: AtomicOp, old: u64, src: u64, cmp: u64, wide: bool) -> u64 {
    if wide {
        op.apply_u64(old, src, cmp)
    } else {
        op.apply_u32(old as u32, src as u32, cmp as u32) as u64
    }
}

/// The operands of one FLAT/GLOBAL/SCRATCH/MUBUF load, store or atomic.
pub(super) struct MemOp {
    /// Address of the instruction.
    pub(super) pc: u64,
    /// The [`mem_aux`] descriptor.
    pub(super) aux: u16,
    /// First data (store/atomic source) register.
    pub(super) data: usize,
    /// First destination register.
    pub(super) vdst: usize,
    /// AccVGPRs instead of VGPRs.
    pub(super) acc: bool,
    /// glc/sc0: atomics return the old value.
    pub(super) glc: bool,
    /// Cache-policy bits.
    pub(super) policy: CachePolicy,
    /// Address space.
    pub(super) space: Space,
}

impl MemOp {
    fn kind(&self) -> AccessKind {
        match self.aux & 0xf {
            KIND_LOAD => AccessKind::Load,
            KIND_STORE => AccessKind::Store,
            _ => AccessKind::Atomic { returns: self.glc },
        }
    }

    /// Bytes per lane.
    pub(super) fn bytes(&self) -> u32 {
        match self.aux & 0xf {
            KIND_ATOMIC => {
                if aux_atomic(self.aux).1 {
                    8
                } else {
                    4
                }
            }
            _ => {
                let (element, dwords) = aux_element(self.aux);
                element.bytes(dwords as u32)
            }
        }
    }
}

/// Asks the memory where `op` goes; `mask` lanes at `addrs`.
#[inline]
fn route<M: DeviceMemory>(ctx: &mut Ctx<M>, op: &MemOp, mask: u64, addrs: &[u64; N]) -> Route {
    if !M::OBSERVES_ROUTES {
        return Route::Now;
    }
    let access = VmemAccess { pc: op.pc, kind: op.kind(), space: op.space, policy: op.policy, bytes_per_lane: op.bytes(), mask, addrs };
    ctx.mem.route(&access)
}

/// Parks `op` in the wave as a [`VmemRequest`](super::VmemRequest) (in the box the wave reuses) and stops
/// the wave.
#[cold]
fn defer(w: &mut Wave, op: &MemOp, mask: u64, addrs: &[u64; N]) {
    let mut req = w.request_box();
    let regs = if op.acc { &w.agpr } else { &w.vgpr };
    let reg = |r: usize| regs[r & 255];
    let kind = op.kind();
    req.data.clear();
    req.cmp.clear();
    let (request_op, element, dwords, dest) = match kind {
        AccessKind::Load => {
            let (element, dwords) = aux_element(op.aux);
            (None, element, dwords, Some(dwords))
        }
        AccessKind::Store => {
            let (element, dwords) = aux_element(op.aux);
            let shift = if op.aux & D16_HI != 0 { 16 } else { 0 };
            for k in 0..dwords {
                req.data.push(reg(op.data + k).map(|v| v >> shift));
            }
            (None, element, dwords, None)
        }
        _ => {
            let (aop, wide) = aux_atomic(op.aux);
            let dwords = if wide { 2 } else { 1 };
            for k in 0..dwords {
                req.data.push(reg(op.data + k));
            }
            if aop == AtomicOp::Cmpswap {
                for k in 0..dwords {
                    req.cmp.push(reg(op.data + dwords + k));
                }
            }
            (Some(aop), Element::Dwords, dwords, op.glc.then_some(dwords))
        }
    };
    let dest = dest.map(|count| VgprDest { first: op.vdst as u8, count: count as u8, acc: op.acc });
    req.pc = op.pc;
    req.kind = kind;
    req.space = op.space;
    req.op = request_op;
    req.element = element;
    req.dwords = dwords as u32;
    req.mask = mask;
    req.addrs = *addrs;
    req.policy = op.policy;
    req.dest = dest;
    w.waiting = Some(PendingAccess { pc: op.pc, mask, dest });
    w.pending = Some(req);
    w.status = WaveStatus::WaitMemory;
}

/// The cache-policy bits of a FLAT/GLOBAL/SCRATCH instruction.
fn flat_policy(w0: u32) -> CachePolicy {
    CachePolicy { sc0: (w0 >> 16) & 1 != 0, nt: (w0 >> 17) & 1 != 0, sc1: (w0 >> 25) & 1 != 0 }
}

/// A FLAT, GLOBAL or SCRATCH instruction.
pub(crate) fn flat<M: DeviceMemory>(w: &mut Wave, c: &CachedInst, pc: u64, ctx: &mut Ctx<M>) -> Result<(), ExecFault> {
    let aux = c.aux;
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    if let Some((element, count)) = flat_lds_element(c.op) {
        return flat_load_lds(w, c, pc, ctx, element, count);
    }
    if aux == 0 || (w0 >> 13) & 1 != 0 && c.enc != Encoding::Scratch {
        return Err(unsupported(&c.inst, pc));
    }
    let op = MemOp {
        pc,
        aux,
        data: ((w1 >> 8) & 0xff) as usize,
        vdst: ((w1 >> 24) & 0xff) as usize,
        acc: (w1 >> 23) & 1 != 0,
        glc: (w0 >> 16) & 1 != 0,
        policy: flat_policy(w0),
        space: if c.enc == Encoding::Scratch { Space::Scratch } else { Space::Global },
    };
    let exec = w.exec();
    if !M::OBSERVES_ROUTES && exec == u64::MAX && c.enc == Encoding::Global && (aux & 0xfff == LOAD_DWORD || aux & 0xfff == STORE_DWORD) && !op.acc {
        if let Some(start) = global_unit_stride(w, c) {
            if block_access(w, ctx, &op, aux & 0xfff == LOAD_DWORD, start) {
                return Ok(());
            }
        }
    }
    match device_addresses(w, c, exec) {
        Some(addrs) => access_device(w, ctx, &op, exec, addrs),
        None => {
            let lanes = flat_addresses(w, c, ctx.target);
            access(w, ctx, &op, exec, &lanes)
        }
    }
}

/// Performs (or defers) a load, store or atomic for every lane of `exec` at `lanes`.
pub(super) fn access<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, op: &MemOp, exec: u64, lanes: &[LaneAddr; N]) -> Result<(), ExecFault> {
    // Device addresses of the lanes that go to memory; LDS-aperture lanes stay local.
    let mut addrs = [0u64; N];
    let mut device = 0u64;
    let mut lds_lanes = 0u64;
    for lane in 0..N {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        match lanes[lane] {
            LaneAddr::Global(a) => {
                addrs[lane] = a;
                device |= 1 << lane;
            }
            LaneAddr::Private(a) => {
                check_private(w, op.pc, a, op.bytes())?;
                addrs[lane] = private_addr(w, lane, a);
                device |= 1 << lane;
            }
            LaneAddr::Lds(a) => {
                addrs[lane] = a as u64;
                lds_lanes |= 1 << lane;
            }
        }
    }
    if lds_lanes == 0 {
        return access_device(w, ctx, op, device, addrs);
    }
    // An instruction with LDS lanes is performed at once, whatever the route.
    route(ctx, op, device, &addrs);
    perform_lanes(w, ctx, op, exec, &addrs, lds_lanes)
}

/// Performs (or defers) a load, store or atomic whose lanes of `mask` all access device
/// memory, at `addrs`: whole-dword loads and stores as one gather or scatter.
pub(super) fn access_device<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, op: &MemOp, mask: u64, addrs: [u64; N]) -> Result<(), ExecFault> {
    // A deferred load completes by replacing whole registers, so `_d16` loads (which
    // merge into half a register) are always performed at once.
    let d16_load = op.aux & 0xf == KIND_LOAD && op.aux & (3 << 14) != 0;
    if route(ctx, op, mask, &addrs) == Route::Defer && !d16_load {
        defer(w, op, mask, &addrs);
        return Ok(());
    }
    // Whole dwords into or out of registers inside the allocation (a range that wraps or
    // leaves it takes the per-lane path, which implements both).
    let kind = op.aux & 0xf;
    let (element, count) = aux_element(op.aux);
    if kind != KIND_ATOMIC && element == Element::Dwords && count > 0 {
        let fault = |f| ExecFault::mem(op.pc, f);
        if kind == KIND_LOAD {
            if let Some(regs) = file(w, op.acc).as_mut_slice().get_mut(op.vdst..op.vdst + count) {
                return ctx.mem.gather_dwords(&addrs, mask, regs).map_err(fault);
            }
        } else if let Some(data) = if op.acc { &w.agpr } else { &w.vgpr }.as_slice().get(op.data..op.data + count) {
            return ctx.mem.scatter_dwords(&addrs, mask, data).map_err(fault);
        }
    }
    perform_lanes(w, ctx, op, mask, &addrs, 0)
}

/// Performs a load, store or atomic lane by lane for the lanes of `exec` at `addrs`; the
/// lanes of `lds_lanes` access the work-group's LDS, the others device memory.
fn perform_lanes<M: DeviceMemory>(w: &mut Wave, ctx: &mut Ctx<M>, op: &MemOp, exec: u64, addrs: &[u64; N], lds_lanes: u64) -> Result<(), ExecFault> {
    let fault = |f| ExecFault::mem(op.pc, f);
    let (data, vdst, acc) = (op.data, op.vdst, op.acc);
    match op.aux & 0xf {
        KIND_LOAD => {
            let (element, count) = aux_element(op.aux);
            let size = element.bytes(count as u32) as usize;
            for lane in 0..N {
                if (exec >> lane) & 1 == 0 {
                    continue;
                }
                let mut buf = [0u8; 16];
                if (lds_lanes >> lane) & 1 != 0 {
                    lds_read(ctx.lds, addrs[lane] as u32, &mut buf[..size]);
                } else {
                    ctx.mem.read(addrs[lane], &mut buf[..size]).map_err(fault)?;
                }
                let regs = file(w, acc);
                match element {
                    Element::Dwords => {
                        for k in 0..count {
                            regs[(vdst + k) & 255][lane] = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
                        }
                    }
                    Element::U8 => regs[vdst][lane] = d16_merge(op.aux, regs[vdst][lane], buf[0] as u32),
                    Element::I8 => regs[vdst][lane] = d16_merge(op.aux, regs[vdst][lane], buf[0] as i8 as i32 as u32),
                    Element::U16 => regs[vdst][lane] = d16_merge(op.aux, regs[vdst][lane], u16::from_le_bytes([buf[0], buf[1]]) as u32),
                    Element::I16 => {
                        regs[vdst][lane] = d16_merge(op.aux, regs[vdst][lane], u16::from_le_bytes([buf[0], buf[1]]) as i16 as i32 as u32)
                    }
                }
            }
            Ok(())
        }
        KIND_STORE => {
            let (element, count) = aux_element(op.aux);
            let size = element.bytes(count as u32) as usize;
            for lane in 0..N {
                if (exec >> lane) & 1 == 0 {
                    continue;
                }
                let regs = if acc { &w.agpr } else { &w.vgpr };
                let mut buf = [0u8; 16];
                let shift = if op.aux & D16_HI != 0 { 16 } else { 0 };
                for k in 0..count {
                    buf[4 * k..4 * k + 4].copy_from_slice(&(regs[(data + k) & 255][lane] >> shift).to_le_bytes());
                }
                if (lds_lanes >> lane) & 1 != 0 {
                    lds_write(ctx.lds, addrs[lane] as u32, &buf[..size]);
                } else {
                    ctx.mem.write(addrs[lane], &buf[..size]).map_err(fault)?;
                }
            }
            Ok(())
        }
        _ => {
            let (aop, wide) = aux_atomic(op.aux);
            let bytes = if wide { 8 } else { 4 };
            for lane in 0..N {
                if (exec >> lane) & 1 == 0 {
                    continue;
                }
                let regs = if acc { &w.agpr } else { &w.vgpr };
                let rd = |k: usize| regs[(data + k) & 255][lane] as u64;
                let (src, cmp) = if wide { (rd(0) | (rd(1) << 32), rd(2) | (rd(3) << 32)) } else { (rd(0), rd(1)) };
                let old = if (lds_lanes >> lane) & 1 != 0 {
                    let at = addrs[lane] as u32;
                    let mut buf = [0u8; 8];
                    lds_read(ctx.lds, at, &mut buf[..bytes]);
                    let old = u64::from_le_bytes(buf);
                    lds_write(ctx.lds, at, &apply(aop, old, src, cmp, wide).to_le_bytes()[..bytes]);
                    old
                } else if wide {
                    ctx.mem.atomic_u64(addrs[lane], aop, src, cmp).map_err(fault)?
                } else {
                    ctx.mem.atomic_u32(addrs[lane], aop, src as u32, cmp as u32).map_err(fault)? as u64
                };
                if op.glc {
                    let regs = file(w, acc);
                    regs[vdst][lane] = old as u32;
                    if wide {
                        regs[(vdst + 1) & 255][lane] = (old >> 32) as u32;
                    }
                }
            }
            Ok(())
        }
    }
}

