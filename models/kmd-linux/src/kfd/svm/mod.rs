//! Shared virtual memory (`AMDKFD_IOC_SVM`) and the XNACK mode (`SET_XNACK_MODE`), as
//! the Linux driver's `kfd_svm.c` implements them, for what ROCm's managed memory
//! (`hipMallocManaged`, `hipMemPrefetchAsync`, `hipMemAdvise`) needs.
//!
//! An SVM range is ordinary memory of the application (HIP maps it anonymously) that the
//! GPU accesses at the same address. The driver keeps the ranges and their attributes
//! ([`ranges`]) and each GPU's page-table entries for them ([`gpu_map`]), which are host
//! mappings of the GPU's memory at the same address. What "mapped" means follows the
//! process's XNACK mode, as in the driver:
//!
//! - **XNACK off** (the default of an MI210 with the driver's default `noretry`): setting
//!   ACCESS or ACCESS_IN_PLACE (or flags) maps the whole range on those GPUs at once; a
//!   GPU access anywhere else faults (memory exception), as without retry.
//! - **XNACK on** (`HSA_XNACK=1`: the runtime enables it before it creates queues): the
//!   driver maps nothing up front; a GPU access to an unmapped page is a recoverable
//!   fault that [`fault`] serves like `svm_range_restore_pages`: it finds the range (or
//!   makes one for any mapped memory of the process), picks the best location, and
//!   maps one migration-granularity window on the faulting GPU; the access is retried.
//!
//! Migration (prefetch, faults) moves no data: the simulated GPU and the host share one
//! memory, so "VRAM" and "system memory" differ only in the range's recorded location.
//!
//! When the application unmaps memory (munmap, or an mmap over it), the interposer tells
//! the driver first, which removes the ranges and the GPU mappings there, as the driver's
//! MMU notifier does.
//!
//! Every failure is detected before anything changes: a call computes the new state on a
//! copy and commits it, GPU mappings included, in one step.

pub mod gpu_map;
pub mod ranges;
mod fault;

use std::sync::{Arc, Mutex};

use amdgpu::gpu::memory::{GpuMemory, MemKind};

use crate::backend::Errno;
use crate::identity::cap;
use crate::kfd::abi::svm::{attr, flag, LOCATION_SYSMEM, LOCATION_UNDEFINED, OP_GET_ATTR, OP_SET_ATTR};
use crate::kfd::abi::{self, SvmArgs, SvmAttribute};
use crate::kfd::backing::PAGE;
use crate::kfd::user::UserMemory;
use crate::kfd::vma::{self, Vma};
use crate::kfd::{lock, BoMemory, Bos, Kfd};
use gpu_map::{GpuMap, Piece};
use ranges::{GpuSet, Ranges, SvmRange};

/// What the real driver's `svm_ioctl` returns for an unknown operation: a *positive*
/// EINVAL (the syscall returns 22 and sets no errno).
const UNKNOWN_OP_RESULT: i32 = libc::EINVAL;

/// Largest granularity a range records (`min(value, 0x3f)`).
const MAX_GRANULARITY: u32 = 0x3f;

/// The SVM state of one process.
#[derive(Clone, Debug)]
pub(crate) struct Svm {
    /// Whether GPU page faults are recoverable (the process's XNACK mode).
    xnack: bool,
    ranges: Ranges,
    /// Each GPU's SVM mappings.
    maps: Vec<GpuMap>,
}

/// What the SVM code needs of the machine and the process: the GPUs (their memory,
/// ids, hives, SVM support) and the process's buffer objects (SVM must not overlap them).
pub(crate) struct SvmShared {
    state: Mutex<Svm>,
    memories: Vec<Arc<GpuMemory>>,
    gpu_ids: Vec<u32>,
    hives: Vec<u64>,
    /// GPUs that support the SVM API (the topology's capability bit).
    supported: GpuSet,
    bos: Arc<Mutex<Bos>>,
}

/// Where a buffer object is, for the overlap checks (`svm_range_check_vm`).
#[derive(Clone, Copy, Debug)]
struct BoSpan {
    /// Its GPU virtual range, when it is mapped on a GPU.
    mapped: Option<(u64, u64)>,
    /// The application memory of a USERPTR buffer.
    userptr: Option<(u64, u64)>,
}

fn overlaps((s, e): (u64, u64), start: u64, end: u64) -> bool {
    s < end && start < e
}

impl SvmShared {
    /// The SVM state of a new process on `gpus` (memory, gpu id, hive, capability bits).
    pub(crate) fn new(gpus: &[(Arc<GpuMemory>, u32, u64, u32)], bos: Arc<Mutex<Bos>>) -> Arc<SvmShared> {
        let mut supported = GpuSet::default();
        for (g, (_, _, _, capability)) in gpus.iter().enumerate() {
            if capability & cap::SVM_API_SUPPORTED != 0 {
                supported.insert(g);
            }
        }
        let shared = Arc::new(SvmShared {
            state: Mutex::new(Svm { xnack: false, ranges: Ranges::default(), maps: vec![GpuMap::default(); gpus.len()] }),
            memories: gpus.iter().map(|g| g.0.clone()).collect(),
            gpu_ids: gpus.iter().map(|g| g.1).collect(),
            hives: gpus.iter().map(|g| g.2).collect(),
            supported,
            bos,
        });
        for g in supported.iter() {
            let resolver = Arc::new(fault::SvmFaults { shared: Arc::downgrade(&shared), gpu: g });
            shared.memories[g].set_fault_resolver(Some(resolver));
        }
        shared
    }

    /// The GPU index of gpu id `id`.
    fn index_of(&self, id: u32) -> Option<usize> {
        self.gpu_ids.iter().position(|&g| g == id)
    }

    /// Whether GPUs `a` and `b` share memory (the same GPU, or one XGMI hive).
    fn same_hive(&self, a: usize, b: usize) -> bool {
        a == b || (self.hives[a] != 0 && self.hives[a] == self.hives[b])
    }

    fn bo_spans(&self) -> Vec<BoSpan> {
        lock(&self.bos)
            .by_handle
            .values()
            .map(|b| BoSpan {
                mapped: (!b.mapped_on.is_empty()).then_some((b.va, b.va + b.size)),
                userptr: match b.memory {
                    BoMemory::User(addr) => Some((addr, addr + b.size)),
                    _ => None,
                },
            })
            .collect()
    }

    /// Applies `next` to the GPUs (all of them or, on an error, none) and makes it the
    /// state.
    fn commit(&self, state: &mut Svm, next: Svm) -> Result<(), Errno> {
        for g in 0..self.memories.len() {
            if let Err(e) = GpuMap::transition(&self.memories[g], &state.maps[g], &next.maps[g]) {
                for k in 0..g {
                    let _ = GpuMap::transition(&self.memories[k], &next.maps[k], &state.maps[k]);
                }
                return Err(e);
            }
        }
        *state = next;
        Ok(())
    }

    /// `svm_range_check_attr`: every attribute type is known and every GPU it names is
    /// one of the process's, with SVM support.
    fn check_attrs(&self, attrs: &[SvmAttribute]) -> Result<(), Errno> {
        for a in attrs {
            let gpu = match a.ty {
                attr::PREFERRED_LOC if a.value != LOCATION_SYSMEM && a.value != LOCATION_UNDEFINED => Some(a.value),
                attr::PREFETCH_LOC if a.value != LOCATION_SYSMEM => Some(a.value),
                attr::ACCESS | attr::ACCESS_IN_PLACE | attr::NO_ACCESS => Some(a.value),
                attr::PREFERRED_LOC | attr::PREFETCH_LOC | attr::SET_FLAGS | attr::CLR_FLAGS | attr::GRANULARITY => None,
                _ => return Err(Errno::INVAL),
            };
            if let Some(id) = gpu {
                let g = self.index_of(id).ok_or(Errno::INVAL)?;
                if !self.supported.contains(g) {
                    return Err(Errno::INVAL);
                }
            }
        }
        Ok(())
    }

    /// `svm_range_is_valid`: the span lies in mapped, non-device memory and overlaps no
    /// buffer object mapped on a GPU.
    fn check_span(vmas: &[Vma], bos: &[BoSpan], start: u64, end: u64) -> Result<(), Errno> {
        vma::check_covered(vmas, start, end)?;
        if bos.iter().filter_map(|b| b.mapped).any(|m| overlaps(m, start, end)) {
            return Err(Errno::ADDRINUSE);
        }
        Ok(())
    }

    /// `svm_range_set_attr` on `next`.
    fn set_attr(&self, next: &mut Svm, start: u64, end: u64, attrs: &[SvmAttribute], vmas: &[Vma]) -> Result<(), Errno> {
        let xnack_access = if next.xnack { self.supported } else { GpuSet::default() };
        let starts = next.ranges.cover(start, end, |e| SvmRange::new(e, xnack_access));
        let mut update_mapping = false;
        for &s in &starts {
            if let Some(r) = next.ranges.get_mut(s) {
                self.apply_attrs(r, attrs, next.xnack, &mut update_mapping);
            }
        }
        for s in starts {
            let migrated = self.migrate(next, s);
            let Some(r) = next.ranges.get(s).copied() else { continue };
            if migrated && (!next.xnack || r.flags & flag::GPU_ALWAYS_MAPPED != 0) && r.mapped {
                // The driver's restore work remaps the migrated pages; here they did not
                // move, and the mappings stay valid.
                continue;
            }
            if !migrated && !update_mapping {
                continue;
            }
            self.validate_and_map(next, s, s, r.end, None, vmas)?;
        }
        Ok(())
    }

    /// `svm_range_apply_attrs`.
    fn apply_attrs(&self, r: &mut SvmRange, attrs: &[SvmAttribute], xnack: bool, update_mapping: &mut bool) {
        for a in attrs {
            match a.ty {
                attr::PREFERRED_LOC => r.preferred_loc = a.value,
                attr::PREFETCH_LOC => r.prefetch_loc = a.value,
                attr::ACCESS | attr::ACCESS_IN_PLACE | attr::NO_ACCESS => {
                    if !xnack {
                        *update_mapping = true;
                    }
                    // Checked by `check_attrs`. (A GPU losing access keeps its mapping
                    // until the range changes otherwise: the driver's "TODO: unmap
                    // ranges from GPU that lost access".)
                    let Some(g) = self.index_of(a.value) else { continue };
                    match a.ty {
                        attr::NO_ACCESS => {
                            r.access.remove(g);
                            r.in_place.remove(g);
                        }
                        attr::ACCESS => {
                            r.access.insert(g);
                            r.in_place.remove(g);
                        }
                        _ => {
                            r.access.remove(g);
                            r.in_place.insert(g);
                        }
                    }
                }
                attr::SET_FLAGS => {
                    *update_mapping = true;
                    r.flags |= a.value;
                }
                attr::CLR_FLAGS => {
                    *update_mapping = true;
                    r.flags &= !a.value;
                }
                attr::GRANULARITY => r.granularity = a.value.min(MAX_GRANULARITY) as u8,
                _ => {}
            }
        }
    }

    /// `svm_range_best_prefetch_location`.
    fn best_prefetch_location(&self, xnack: bool, r: &SvmRange) -> u32 {
        let best = r.prefetch_loc;
        if best == LOCATION_SYSMEM || best == LOCATION_UNDEFINED {
            return best;
        }
        let Some(home) = self.index_of(best) else { return LOCATION_SYSMEM };
        let users = if xnack { r.in_place } else { r.access.union(r.in_place) };
        if users.iter().any(|g| !self.same_hive(g, home)) {
            return LOCATION_SYSMEM;
        }
        best
    }

    /// `svm_range_trigger_migration`: moves the range where it was prefetched to (in
    /// the records only); whether it moved.
    fn migrate(&self, next: &mut Svm, start: u64) -> bool {
        let xnack = next.xnack;
        let Some(r) = next.ranges.get_mut(start) else { return false };
        let best = self.best_prefetch_location(xnack, r);
        if best == LOCATION_UNDEFINED || (best == LOCATION_SYSMEM && r.actual_loc == LOCATION_SYSMEM) {
            return false;
        }
        r.actual_loc = best;
        true
    }

    /// The GPUs `svm_range_validate_and_map` maps a range on.
    fn mapping_gpus(&self, xnack: bool, r: &SvmRange) -> GpuSet {
        if !xnack {
            return r.access.union(r.in_place);
        }
        let mut gpus = r.in_place;
        if let Some(g) = (r.actual_loc != LOCATION_SYSMEM).then(|| self.index_of(r.actual_loc)).flatten() {
            if r.access.contains(g) {
                gpus.insert(g);
            }
        }
        if gpus == GpuSet::default() && (r.mapped || r.flags & flag::GPU_ALWAYS_MAPPED != 0) {
            gpus = r.access;
        }
        gpus
    }

    /// `svm_range_validate_and_map`: maps `[from, to)` of the range at `start` on `gpu`
    /// (or on the GPUs its attributes name), as the application's mappings allow:
    /// read-only where they are, `EFAULT` where there is no readable memory.
    fn validate_and_map(&self, next: &mut Svm, start: u64, from: u64, to: u64, gpu: Option<usize>, vmas: &[Vma]) -> Result<(), Errno> {
        let Some(r) = next.ranges.get(start).copied() else { return Ok(()) };
        let gpus = match gpu {
            Some(g) => GpuSet(1 << g),
            None => self.mapping_gpus(next.xnack, &r),
        };
        if gpus == GpuSet::default() {
            return Ok(());
        }
        let pieces = pieces(&r, from, to, vmas)?;
        for g in gpus.iter() {
            next.maps[g].set(from, to, &pieces);
        }
        if let Some(r) = next.ranges.get_mut(start) {
            r.mapped = true;
        }
        Ok(())
    }

    /// `svm_range_get_attr`.
    fn get_attr(&self, state: &Svm, start: u64, end: u64, attrs: &mut [SvmAttribute]) -> Result<(), Errno> {
        let (mut get_preferred, mut get_prefetch, mut get_access, mut get_flags, mut get_granularity) = (false, false, false, false, false);
        for a in attrs.iter() {
            match a.ty {
                attr::PREFERRED_LOC => get_preferred = true,
                attr::PREFETCH_LOC => get_prefetch = true,
                attr::ACCESS => get_access = true,
                attr::SET_FLAGS | attr::CLR_FLAGS => get_flags = true,
                attr::GRANULARITY => get_granularity = true,
                _ => return Err(Errno::INVAL),
            }
        }
        let mut location = LOCATION_UNDEFINED;
        let mut prefetch = LOCATION_UNDEFINED;
        let mut granularity = u8::MAX;
        let (mut flags_and, mut flags_or) = (u32::MAX, 0);
        let (mut access, mut in_place);
        let mut found = state.ranges.overlapping(start, end).peekable();
        if found.peek().is_none() {
            let d = SvmRange::new(0, GpuSet::default());
            (location, prefetch, granularity, flags_and, flags_or) = (d.preferred_loc, d.prefetch_loc, d.granularity, d.flags, d.flags);
            access = if state.xnack { self.supported } else { GpuSet::default() };
            in_place = GpuSet::default();
        } else {
            (access, in_place) = (self.supported, self.supported);
            for (_, r) in found {
                fold_location(&mut get_preferred, &mut location, r.preferred_loc);
                fold_location(&mut get_prefetch, &mut prefetch, r.prefetch_loc);
                if get_access {
                    access = access.intersection(r.access);
                    in_place = in_place.intersection(r.in_place);
                }
                if get_flags {
                    flags_and &= r.flags;
                    flags_or |= r.flags;
                }
                if get_granularity {
                    granularity = granularity.min(r.granularity);
                }
            }
        }
        for a in attrs.iter_mut() {
            match a.ty {
                attr::PREFERRED_LOC => a.value = location,
                attr::PREFETCH_LOC => a.value = prefetch,
                attr::ACCESS => {
                    let g = self.index_of(a.value).ok_or(Errno::INVAL)?;
                    a.ty = if access.contains(g) {
                        attr::ACCESS
                    } else if in_place.contains(g) {
                        attr::ACCESS_IN_PLACE
                    } else {
                        attr::NO_ACCESS
                    };
                }
                attr::SET_FLAGS => a.value = flags_and,
                attr::CLR_FLAGS => a.value = !flags_or,
                attr::GRANULARITY => a.value = u32::from(granularity),
                _ => {}
            }
        }
        Ok(())
    }

    /// The application unmapped `[start, end)` (MMU_NOTIFY_UNMAP): the ranges there go,
    /// and so do the GPUs' mappings of it.
    fn cpu_unmapped(&self, start: u64, end: u64) {
        let mut state = lock(&self.state);
        if state.ranges.overlapping(start, end).next().is_none() && state.maps.iter().all(|m| !m.covers_any(start, end)) {
            return;
        }
        let mut next = state.clone();
        next.ranges.remove(start, end);
        for m in &mut next.maps {
            m.unmap(start, end);
        }
        if let Err(e) = self.commit(&mut state, next) {
            eprintln!("dojo: SVM: removing the GPU mappings of unmapped memory {start:#x}..{end:#x} failed: {e}");
        }
    }

    /// The protection of `[start, end)` changes (MMU_NOTIFY_PROTECTION_VMA): before the
    /// change the GPUs' mappings there go; after it, with XNACK off, the ranges that
    /// were mapped are mapped again as the new protection allows (none where the
    /// memory is no longer readable). With XNACK on, faults map them again.
    fn cpu_protecting(&self, start: u64, end: u64, done: bool) {
        let mut state = lock(&self.state);
        let mut next = state.clone();
        if !done {
            if state.maps.iter().all(|m| !m.covers_any(start, end)) {
                return;
            }
            for m in &mut next.maps {
                m.unmap(start, end);
            }
        } else {
            if next.xnack {
                return;
            }
            let mapped: Vec<u64> = next.ranges.overlapping(start, end).filter(|(_, r)| r.mapped).map(|(s, _)| s).collect();
            if mapped.is_empty() {
                return;
            }
            let Ok(vmas) = vma::own_mappings(start, end) else { return };
            for s in mapped {
                let Some(r) = next.ranges.get(s).copied() else { continue };
                let (from, to) = (s.max(start), r.end.min(end));
                // Memory that is no longer readable stays unmapped, as in the driver.
                let mut trial = next.clone();
                if self.validate_and_map(&mut trial, s, from, to, None, &vmas).is_ok() {
                    next = trial;
                }
            }
        }
        if let Err(e) = self.commit(&mut state, next) {
            eprintln!("dojo: SVM: updating the GPU mappings of {start:#x}..{end:#x} after mprotect failed: {e}");
        }
    }

    /// Drops the GPU mappings of memory the application no longer has, or has with less
    /// permission than the GPU mapping gives, and the ranges of memory it no longer has: what calls inside the C
    /// library did, which the interposer cannot see (`free` unmaps a large block with an
    /// internal `munmap`, `realloc` moves one with an internal `mremap`). Run before a
    /// doorbell wakes the GPU, so a kernel finds such memory unmapped (and faults, or with
    /// XNACK on maps what is there now) instead of the simulator touching a dead page.
    pub(crate) fn revalidate(&self) {
        let mut state = lock(&self.state);
        if state.maps.iter().all(GpuMap::is_empty) && state.ranges.is_empty() {
            return;
        }
        let Ok(vmas) = vma::own_mappings(0, u64::MAX) else { return };
        let mut next = state.clone();
        for m in &mut next.maps {
            let stale: Vec<(u64, u64)> =
                m.pieces().flat_map(|(s, p)| uncovered(&vmas, s, p.end, |v| v.read && (v.write || !p.writable))).collect();
            for (s, e) in stale {
                m.unmap(s, e);
            }
        }
        // Ranges go only where the memory is gone (protection changes keep them).
        let gone: Vec<(u64, u64)> = next.ranges.overlapping(0, u64::MAX).flat_map(|(s, r)| uncovered(&vmas, s, r.end, |_| true)).collect();
        for (s, e) in gone {
            next.ranges.remove(s, e);
        }
        if next.maps != state.maps || next.ranges != state.ranges {
            if let Err(e) = self.commit(&mut state, next) {
                eprintln!("dojo: SVM: dropping the GPU mappings of memory the application no longer has failed: {e}");
            }
        }
    }

    /// Ends the process's SVM: every mapping goes, and the GPUs stop asking it about faults.
    fn close(&self) {
        for g in self.supported.iter() {
            self.memories[g].set_fault_resolver(None);
        }
        let mut state = lock(&self.state);
        let next = Svm { xnack: state.xnack, ranges: Ranges::default(), maps: vec![GpuMap::default(); self.memories.len()] };
        let _ = self.commit(&mut state, next);
    }
}

/// GET_ATTR's location over several ranges: the common one, or undefined (and no more
/// looking) as soon as one range has none or another.
fn fold_location(looking: &mut bool, location: &mut u32, range_location: u32) {
    if !*looking {
        return;
    }
    if range_location == LOCATION_UNDEFINED || (*location != LOCATION_UNDEFINED && *location != range_location) {
        *location = LOCATION_UNDEFINED;
        *looking = false;
    } else {
        *location = range_location;
    }
}

/// The parts of `[start, end)` that `vmas` (in address order) do not cover with areas
/// that are `fit`.
fn uncovered(vmas: &[Vma], start: u64, end: u64, fit: impl Fn(&Vma) -> bool) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = start;
    for v in vmas.iter().filter(|v| v.end > start && v.start < end) {
        if v.start > at {
            out.push((at, v.start));
        }
        let (s, e) = (v.start.max(start), v.end.min(end));
        if !fit(v) {
            out.push((s, e));
        }
        at = e;
    }
    if at < end {
        out.push((at, end));
    }
    out
}

/// The pages `munmap(addr, len)` or `mprotect(addr, len)` affect; `None` when the call
/// fails with EINVAL (an unaligned address, no length) and changes nothing.
fn page_span(addr: usize, len: usize) -> Option<(u64, u64)> {
    let start = addr as u64;
    if !start.is_multiple_of(PAGE) || len == 0 {
        return None;
    }
    let end = start.saturating_add(len as u64).checked_next_multiple_of(PAGE).unwrap_or(u64::MAX - (PAGE - 1));
    Some((start, end))
}

/// The GPU mapping of `[from, to)` of range `r` over the application's areas `vmas`:
/// coherent ranges are fine-grained, read-only areas (and GPU_RO ranges) read-only.
fn pieces(r: &SvmRange, from: u64, to: u64, vmas: &[Vma]) -> Result<Vec<(u64, Piece)>, Errno> {
    let kind = if r.flags & (flag::COHERENT | flag::EXT_COHERENT) != 0 { MemKind::Fine } else { MemKind::Coarse };
    let mut out = Vec::new();
    let mut at = from;
    for v in vmas.iter().filter(|v| v.end > from && v.start < to) {
        if v.start > at || !v.read {
            return Err(Errno::FAULT);
        }
        let end = v.end.min(to);
        out.push((at, Piece { end, kind, writable: v.write && r.flags & flag::GPU_RO == 0 }));
        at = end;
    }
    if at < to {
        return Err(Errno::FAULT);
    }
    Ok(out)
}

impl Kfd {
    /// `AMDKFD_IOC_SVM`: `buf` holds the encoded bytes of the request (the struct, then
    /// the attributes it counts).
    pub(crate) fn svm_ioctl(&self, buf: &mut [u8], user: &impl UserMemory) -> Result<i32, Errno> {
        if self.svm.supported == GpuSet::default() {
            self.warn_once("SVM: the simulated GPUs offer no shared virtual memory here (daemon mode does not share the application's address space; run without --daemon for managed memory)".into());
            return Err(Errno::PERM);
        }
        let head = size_of::<SvmArgs>();
        let mut args = SvmArgs::default();
        let n = buf.len().min(head);
        bytemuck::bytes_of_mut(&mut args)[..n].copy_from_slice(&buf[..n]);
        // kfd_ioctl_svm_validate: the request's size must hold every attribute.
        let expected = (args.nattr as usize).checked_mul(size_of::<SvmAttribute>()).and_then(|a| a.checked_add(head));
        if expected.is_none_or(|e| e > buf.len()) {
            return Err(Errno::INVAL);
        }
        if !args.start_addr.is_multiple_of(PAGE) || !args.size.is_multiple_of(PAGE) || args.start_addr == 0 || args.size == 0 {
            return Err(Errno::INVAL);
        }
        if args.op != OP_SET_ATTR && args.op != OP_GET_ATTR {
            return Ok(UNKNOWN_OP_RESULT);
        }
        let attr_bytes = &mut buf[head..head + args.nattr as usize * size_of::<SvmAttribute>()];
        let mut attrs: Vec<SvmAttribute> = attr_bytes.chunks_exact(size_of::<SvmAttribute>()).map(bytemuck::pod_read_unaligned).collect();
        let start = args.start_addr;
        let Some(end) = start.checked_add(args.size) else { return Err(Errno::FAULT) };
        let shared = &self.svm;
        if args.op == OP_SET_ATTR {
            shared.check_attrs(&attrs)?;
        }
        let bos = shared.bo_spans();
        let vmas = user.mappings(start, end)?;
        SvmShared::check_span(&vmas, &bos, start, end)?;
        let mut state = lock(&shared.state);
        if args.op == OP_GET_ATTR {
            shared.get_attr(&state, start, end, &mut attrs)?;
            attr_bytes.copy_from_slice(bytemuck::cast_slice(&attrs));
            return Ok(0);
        }
        let mut next = state.clone();
        shared.set_attr(&mut next, start, end, &attrs, &vmas)?;
        shared.commit(&mut state, next)?;
        Ok(0)
    }

    /// `AMDKFD_IOC_SET_XNACK_MODE`: a negative value asks for the mode; 0 or 1 sets it,
    /// while the process has no queues.
    pub(crate) fn set_xnack_mode(&self, a: &mut abi::SetXnackMode) -> Result<i32, Errno> {
        let shared = &self.svm;
        let mut state = lock(&shared.state);
        if a.xnack_enabled < 0 {
            a.xnack_enabled = i32::from(state.xnack);
            return Ok(0);
        }
        if !lock(&self.queues).is_empty() {
            return Err(Errno::BUSY);
        }
        let enable = a.xnack_enabled != 0;
        if enable == state.xnack {
            return Ok(0);
        }
        if enable && shared.supported == GpuSet::default() {
            // Recoverable faults serve SVM, which is not offered here.
            self.warn_once("SET_XNACK_MODE: XNACK cannot be enabled: the simulated GPUs offer no shared virtual memory here (daemon mode)".into());
            return Err(Errno::PERM);
        }
        state.xnack = enable;
        Ok(0)
    }

    /// Whether `[start, end)` overlaps an SVM range (ALLOC_MEMORY_OF_GPU then fails with
    /// `EADDRINUSE`, as in the driver).
    pub(crate) fn svm_overlaps(&self, start: u64, end: u64) -> bool {
        lock(&self.svm.state).ranges.overlapping(start, end).next().is_some()
    }

    /// The application unmaps `[addr, addr + len)`: SVM ranges and GPU mappings there go.
    pub(crate) fn svm_unmapping(&self, addr: usize, len: usize) {
        if let Some((start, end)) = page_span(addr, len) {
            self.svm.cpu_unmapped(start, end);
        }
    }

    /// The application changes the protection of `[addr, addr + len)`: before the call
    /// (`done` false) and after it succeeded (`done` true).
    pub fn svm_protecting(&self, addr: usize, len: usize, done: bool) {
        if let Some((start, end)) = page_span(addr, len) {
            self.svm.cpu_protecting(start, end, done);
        }
    }

    /// Ends the process's SVM (its context closes).
    pub(crate) fn svm_close(&self) {
        self.svm.close();
    }
}

#[cfg(test)]
mod tests;
