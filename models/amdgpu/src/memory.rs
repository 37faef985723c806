//! GPU memory: host memory mapped at the same address for the simulated GPU and for the
//! host, so a GPU virtual address is a host pointer (what the KFD emulation needs too:
//! the application and the simulator see a buffer at one address).
//!
//! [`GpuMemory`] reserves one large arena of address space (`MAP_NORESERVE`: untouched
//! pages cost nothing) and hands out allocations from it. Only allocated ranges are
//! accessible: every access is checked against the region table, and an access outside
//! it is a [`MemFault`] value, like a GPU page fault, never a host crash.
//!
//! [`MemView`] is one component's handle (a compute unit's, an L2's): it caches the
//! last region it hit, and implements the executor's `DeviceMemory`.
//!
//! **Architecture Invariant:** memory is shared by worker threads without locks on the
//! data. Results stay deterministic because every access whose order across partitions
//! matters (device- and system-scope atomics and coherent accesses) is carried to its
//! home component in a message and performed there, in simulated-time order; plain
//! accesses of a data-race-free program touch data nobody else touches at that time.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use amdgpu_isa::exec::{AtomicOp, DeviceMemory, MemFault, MemFaultKind, VmemRequest, VmemResponse};
use serde::{Deserialize, Serialize};

use crate::ids::GpuAddr;

/// Allocation granule and alignment (the GPU's 4 KiB page).
pub const PAGE: u64 = 4096;

/// Preferred address of the first GPU arena (16 TiB), so GPU addresses repeat from run
/// to run.
const ARENA_HINT: u64 = 0x1000_0000_0000;
/// Distance between preferred arena addresses (1 TiB: the largest arena fits).
const ARENA_STRIDE: u64 = 0x100_0000_0000;
/// Preferred arena addresses tried before letting the kernel choose.
const ARENA_SLOTS: u64 = 32;

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllocError {
    /// The arena has no free range of this size.
    #[error("out of GPU memory: {requested} bytes requested, arena of {arena} bytes")]
    OutOfMemory {
        /// Bytes asked for.
        requested: u64,
        /// Arena size.
        arena: u64,
    },
    /// Zero bytes were requested.
    #[error("zero-byte allocation")]
    Zero,
    /// `free` of an address that is not the start of an allocation.
    #[error("free of {0}, which is not an allocation")]
    NotAllocated(GpuAddr),
    /// A host mapping would overlap the arena or another range.
    #[error("mapping at {0} overlaps GPU memory already mapped")]
    Overlap(GpuAddr),
    /// The operating system refused the reservation.
    #[error("reserving {bytes} bytes of address space failed: {reason}")]
    Reserve {
        /// Bytes of the arena.
        bytes: u64,
        /// The OS error.
        reason: String,
    },
}

/// The reserved arena.
struct Arena {
    base: u64,
    len: u64,
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: the arena was mapped by `GpuMemory::new` with exactly this base and
        // length, and nothing refers to it once the last `GpuMemory` handle is gone.
        unsafe {
            let _ = rustix::mm::munmap(self.base as *mut std::ffi::c_void, self.len as usize);
        }
    }
}

/// How an allocation is cached: the MTYPE its pages get.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum MemKind {
    /// Coarse-grained device memory: cached in the L2s; coherence only at dispatch
    /// boundaries and through atomics.
    #[default]
    Coarse,
    /// Fine-grained (host-coherent) memory, like HSA's fine-grained pools: every access
    /// is coherent with the host and the other XCDs, so the model performs each one at the
    /// coherent home in simulated-time order (the RPC buffer of `dojo exec` is such).
    Fine,
}

/// One accessible range of GPU addresses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Region {
    end: u64,
    kind: MemKind,
    /// Host address minus GPU address (wrapping): 0 for the arena's own allocations,
    /// which are identity-mapped; another value for host memory mapped into the GPU's
    /// address space at another address ([`GpuMemory::map_host`]).
    delta: u64,
}

/// Accessible ranges, by start address.
#[derive(Default)]
struct Regions {
    by_start: BTreeMap<u64, Region>,
}

impl Regions {
    fn find(&self, addr: u64) -> Option<(Range<u64>, Region)> {
        let (&start, &r) = self.by_start.range(..=addr).next_back()?;
        (addr < r.end).then_some((start..r.end, r))
    }

    fn overlaps(&self, range: &Range<u64>) -> bool {
        self.by_start.range(..range.end).next_back().is_some_and(|(_, r)| r.end > range.start)
    }
}

/// The memory of one simulated GPU. See the [module docs](self).
pub struct GpuMemory {
    arena: Arena,
    regions: RwLock<Regions>,
    /// Free ranges of the arena, by start: start -> end.
    free: Mutex<BTreeMap<u64, u64>>,
    /// Bumped on every free, so views drop cached regions.
    generation: AtomicU64,
}

impl std::fmt::Debug for GpuMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuMemory").field("base", &format_args!("{:#x}", self.arena.base)).field("len", &self.arena.len).finish()
    }
}

impl GpuMemory {
    /// Reserves `bytes` of address space (rounded up to pages) for the GPU's memory.
    pub fn new(bytes: u64) -> Result<GpuMemory, AllocError> {
        let len = bytes.max(PAGE).next_multiple_of(PAGE);
        let reserve_err = |reason: String| AllocError::Reserve { bytes: len, reason };
        let size = usize::try_from(len).map_err(|_| reserve_err("larger than the address space".into()))?;
        use rustix::mm::{MapFlags, ProtFlags};
        // Prefer fixed addresses, so GPU addresses (which programs may print or hash)
        // are the same from run to run; the kernel refuses (FIXED_NOREPLACE) a range
        // that is taken, and then the next slot or any address will do.
        let mut mapped = None;
        for slot in 0..ARENA_SLOTS {
            let hint = ARENA_HINT + slot * ARENA_STRIDE;
            if hint.checked_add(len).is_none_or(|end| end > ARENA_HINT + ARENA_SLOTS * ARENA_STRIDE) {
                break;
            }
            // SAFETY: FIXED_NOREPLACE never replaces an existing mapping.
            let at = unsafe {
                rustix::mm::mmap_anonymous(
                    hint as *mut std::ffi::c_void,
                    size,
                    ProtFlags::READ | ProtFlags::WRITE,
                    MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED_NOREPLACE,
                )
            };
            if let Ok(ptr) = at {
                mapped = Some(ptr);
                break;
            }
        }
        let ptr = match mapped {
            Some(p) => p,
            // SAFETY: an anonymous mapping at an address the kernel chooses touches no
            // existing memory.
            None => unsafe {
                rustix::mm::mmap_anonymous(
                    std::ptr::null_mut(),
                    size,
                    ProtFlags::READ | ProtFlags::WRITE,
                    MapFlags::PRIVATE | MapFlags::NORESERVE,
                )
            }
            .map_err(|e| reserve_err(e.to_string()))?,
        };
        let base = ptr as u64;
        let mut free = BTreeMap::new();
        free.insert(base, base + len);
        Ok(GpuMemory {
            arena: Arena { base, len },
            regions: RwLock::new(Regions::default()),
            free: Mutex::new(free),
            generation: AtomicU64::new(0),
        })
    }

    /// First address of the arena.
    pub fn base(&self) -> GpuAddr {
        GpuAddr(self.arena.base)
    }

    /// Bytes of the arena.
    pub fn size(&self) -> u64 {
        self.arena.len
    }

    fn regions(&self) -> std::sync::RwLockReadGuard<'_, Regions> {
        // Writers never leave the map half-updated (single insert/remove calls).
        self.regions.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Allocates `bytes` (rounded up to pages), zero-filled, aligned to `align` (a power
    /// of two; at least a page). First fit from the lowest address: deterministic.
    pub fn alloc(&self, bytes: u64, align: u64) -> Result<GpuAddr, AllocError> {
        self.alloc_kind(bytes, align, MemKind::Coarse)
    }

    /// [`GpuMemory::alloc`] with a cache kind.
    pub fn alloc_kind(&self, bytes: u64, align: u64, kind: MemKind) -> Result<GpuAddr, AllocError> {
        if bytes == 0 {
            return Err(AllocError::Zero);
        }
        let len = bytes.checked_next_multiple_of(PAGE).ok_or(AllocError::OutOfMemory { requested: bytes, arena: self.arena.len })?;
        let align = align.max(PAGE).checked_next_power_of_two().unwrap_or(PAGE);
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let found = free.iter().find_map(|(&start, &end)| {
            let at = start.checked_next_multiple_of(align)?;
            (at.checked_add(len)? <= end).then_some((start, end, at))
        });
        let Some((start, end, at)) = found else {
            return Err(AllocError::OutOfMemory { requested: bytes, arena: self.arena.len });
        };
        free.remove(&start);
        if start < at {
            free.insert(start, at);
        }
        if at + len < end {
            free.insert(at + len, end);
        }
        drop(free);
        self.regions.write().unwrap_or_else(|e| e.into_inner()).by_start.insert(at, Region { end: at + len, kind, delta: 0 });
        Ok(GpuAddr(at))
    }

    /// Makes `len` bytes of host memory at `host` accessible to the GPU at
    /// `[addr, addr + len)` (the KFD emulation's buffer objects and user pointers).
    ///
    /// # Safety
    /// `host .. host + len` must stay mapped, readable and writable until
    /// [`GpuMemory::unmap_host`] removes the range (the GPU reads and writes it from
    /// any thread).
    pub unsafe fn map_host(&self, addr: GpuAddr, len: u64, host: u64, kind: MemKind) -> Result<(), AllocError> {
        if len == 0 {
            return Err(AllocError::Zero);
        }
        let end = addr.0.checked_add(len).ok_or(AllocError::Overlap(addr))?;
        let range = addr.0..end;
        let arena = self.arena.base..self.arena.base + self.arena.len;
        if range.start < arena.end && arena.start < range.end {
            return Err(AllocError::Overlap(addr));
        }
        let mut regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
        if regions.overlaps(&range) {
            return Err(AllocError::Overlap(addr));
        }
        regions.by_start.insert(addr.0, Region { end, kind, delta: host.wrapping_sub(addr.0) });
        Ok(())
    }

    /// Removes a range added by [`GpuMemory::map_host`]; later accesses fault.
    pub fn unmap_host(&self, addr: GpuAddr) -> Result<(), AllocError> {
        let arena = self.arena.base..self.arena.base + self.arena.len;
        if arena.contains(&addr.0) {
            return Err(AllocError::NotAllocated(addr));
        }
        self.regions.write().unwrap_or_else(|e| e.into_inner()).by_start.remove(&addr.0).ok_or(AllocError::NotAllocated(addr))?;
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Frees the allocation starting at `addr`; its pages return to the OS and read as
    /// zero when allocated again.
    pub fn free(&self, addr: GpuAddr) -> Result<(), AllocError> {
        let arena = self.arena.base..self.arena.base + self.arena.len;
        if !arena.contains(&addr.0) {
            return Err(AllocError::NotAllocated(addr));
        }
        let end = {
            let mut regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
            regions.by_start.remove(&addr.0).ok_or(AllocError::NotAllocated(addr))?.end
        };
        self.generation.fetch_add(1, Ordering::Release);
        // SAFETY: the range lies inside the arena this object mapped, and no view can
        // reach it any more (its region is gone and the generation moved on).
        unsafe {
            let _ = rustix::mm::madvise(addr.0 as *mut std::ffi::c_void, (end - addr.0) as usize, rustix::mm::Advice::LinuxDontNeed);
        }
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let (mut start, mut stop) = (addr.0, end);
        if let Some((&s, &e)) = free.range(..start).next_back() {
            if e == start {
                free.remove(&s);
                start = s;
            }
        }
        if let Some(e) = free.remove(&stop) {
            stop = e;
        }
        free.insert(start, stop);
        Ok(())
    }

    /// The allocated range holding `addr`, if any.
    pub fn region_of(&self, addr: GpuAddr) -> Option<Range<u64>> {
        self.regions().find(addr.0).map(|(r, _)| r)
    }

    /// The cache kind of the allocation holding `addr`.
    pub fn kind_of(&self, addr: GpuAddr) -> Option<MemKind> {
        self.regions().find(addr.0).map(|(_, r)| r.kind)
    }

    /// Every accessible range (allocations and mapped host memory), by address.
    pub fn allocations(&self) -> Vec<Range<u64>> {
        self.regions().by_start.iter().map(|(&s, r)| s..r.end).collect()
    }

    /// The arena's own allocations with their kinds (what checkpoints hold).
    fn arena_allocations(&self) -> Vec<(Range<u64>, MemKind)> {
        self.regions().by_start.iter().filter(|(&s, _)| s >= self.arena.base && s < self.arena.base + self.arena.len).map(|(&s, r)| (s..r.end, r.kind)).collect()
    }

    /// A view for one component.
    pub fn view(self: &Arc<Self>) -> MemView {
        MemView { mem: self.clone(), cached: 0..0, cached_kind: MemKind::Coarse, cached_delta: 0, generation: u64::MAX }
    }

    /// Checks that `[addr, addr + len)` lies inside one region; returns the host address
    /// of `addr`.
    fn check(&self, addr: u64, len: u64) -> Result<u64, MemFault> {
        let end = addr.checked_add(len).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        match self.regions().find(addr) {
            Some((r, region)) if end <= r.end => Ok(addr.wrapping_add(region.delta)),
            Some((r, _)) => Err(MemFault { addr: r.end, kind: MemFaultKind::Unmapped }),
            None => Err(MemFault { addr, kind: MemFaultKind::Unmapped }),
        }
    }

    /// Copies bytes out of GPU memory (for loaders and host services).
    pub fn read(&self, addr: GpuAddr, buf: &mut [u8]) -> Result<(), MemFault> {
        let host = self.check(addr.0, buf.len() as u64)?;
        // SAFETY: `check` proved the range is inside a live region (an arena allocation
        // or host memory its mapper keeps mapped).
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    /// Copies bytes into GPU memory (for loaders and host services).
    pub fn write(&self, addr: GpuAddr, data: &[u8]) -> Result<(), MemFault> {
        let host = self.check(addr.0, data.len() as u64)?;
        // SAFETY: as in `read`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), host as *mut u8, data.len()) };
        Ok(())
    }

    /// Reads a little-endian u64.
    pub fn read_u64(&self, addr: GpuAddr) -> Result<u64, MemFault> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes a little-endian u64.
    pub fn write_u64(&self, addr: GpuAddr, v: u64) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Atomically applies `op` to the u64 at `addr` (naturally aligned), returning the old value.
    pub fn atomic_u64(&self, addr: GpuAddr, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
        let host = self.check(addr.0, 8)?;
        if !addr.0.is_multiple_of(8) || !host.is_multiple_of(8) {
            return Err(MemFault { addr: addr.0, kind: MemFaultKind::Misaligned });
        }
        // SAFETY: in bounds and aligned (checked); shared with other threads only
        // through atomic operations on this word.
        let cell = unsafe { AtomicU64::from_ptr(host as *mut u64) };
        // The closure always returns `Some`: the update cannot be refused.
        let old = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op.apply_u64(old, src, cmp)));
        Ok(old.unwrap_or_else(|v| v))
    }

    /// Atomically applies `op` to the u32 at `addr` (naturally aligned), returning the old value.
    pub fn atomic_u32(&self, addr: GpuAddr, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        let host = self.check(addr.0, 4)?;
        if !addr.0.is_multiple_of(4) || !host.is_multiple_of(4) {
            return Err(MemFault { addr: addr.0, kind: MemFaultKind::Misaligned });
        }
        // SAFETY: as in `atomic_u64`.
        let cell = unsafe { AtomicU32::from_ptr(host as *mut u32) };
        // The closure always returns `Some`: the update cannot be refused.
        let old = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op.apply_u32(old, src, cmp)));
        Ok(old.unwrap_or_else(|v| v))
    }

    /// A copy of every allocation's non-zero pages, for checkpoints.
    pub fn snapshot(&self) -> MemorySnapshot {
        let mut regions = Vec::new();
        for (r, kind) in self.arena_allocations() {
            let mut pages = Vec::new();
            let mut at = r.start;
            while at < r.end {
                let len = (r.end - at).min(64 * 1024);
                let mut buf = vec![0u8; len as usize];
                // In bounds: the range is a live allocation.
                if self.read(GpuAddr(at), &mut buf).is_ok() && buf.iter().any(|&b| b != 0) {
                    pages.push((at, buf));
                }
                at += len;
            }
            regions.push(SnapshotRegion { start: r.start, end: r.end, kind, pages });
        }
        MemorySnapshot { base: self.arena.base, regions }
    }

    /// Replaces every allocation with the snapshot's (same addresses: the snapshot must
    /// come from this memory or one reserved at the same base).
    pub fn restore(&self, snap: &MemorySnapshot) -> Result<(), RestoreError> {
        if snap.base != self.arena.base {
            return Err(RestoreError::Base { snapshot: snap.base, arena: self.arena.base });
        }
        for (r, _) in self.arena_allocations() {
            let _ = self.free(GpuAddr(r.start));
        }
        for r in &snap.regions {
            if r.start < self.arena.base || r.end > self.arena.base + self.arena.len || r.start >= r.end {
                return Err(RestoreError::Range { start: r.start, end: r.end });
            }
            {
                let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
                let (&fs, &fe) = free.range(..=r.start).next_back().filter(|(_, &fe)| fe >= r.end).ok_or(RestoreError::Range { start: r.start, end: r.end })?;
                free.remove(&fs);
                if fs < r.start {
                    free.insert(fs, r.start);
                }
                if r.end < fe {
                    free.insert(r.end, fe);
                }
            }
            self.regions.write().unwrap_or_else(|e| e.into_inner()).by_start.insert(r.start, Region { end: r.end, kind: r.kind, delta: 0 });
            for (at, bytes) in &r.pages {
                self.write(GpuAddr(*at), bytes).map_err(|_| RestoreError::Range { start: *at, end: at + bytes.len() as u64 })?;
            }
        }
        Ok(())
    }
}

/// The allocations and data of a [`GpuMemory`], for checkpoints.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct MemorySnapshot {
    base: u64,
    regions: Vec<SnapshotRegion>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct SnapshotRegion {
    start: u64,
    end: u64,
    kind: MemKind,
    pages: Vec<(u64, Vec<u8>)>,
}

/// A snapshot does not fit this memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// The snapshot was taken of an arena at another address.
    #[error("snapshot of an arena at {snapshot:#x}, this arena is at {arena:#x}")]
    Base {
        /// The snapshot's arena base.
        snapshot: u64,
        /// This arena's base.
        arena: u64,
    },
    /// A region of the snapshot does not fit.
    #[error("snapshot region {start:#x}..{end:#x} does not fit the arena")]
    Range {
        /// Start.
        start: u64,
        /// End.
        end: u64,
    },
}

/// One component's handle on GPU memory: checks every access against the allocations,
/// caching the last region it hit. Implements the executor's [`DeviceMemory`].
pub struct MemView {
    mem: Arc<GpuMemory>,
    cached: Range<u64>,
    cached_kind: MemKind,
    cached_delta: u64,
    generation: u64,
}

impl std::fmt::Debug for MemView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemView").field("cached", &self.cached).finish()
    }
}

impl MemView {
    /// The memory this view looks at.
    pub fn memory(&self) -> &Arc<GpuMemory> {
        &self.mem
    }

    /// Checks `[addr, addr + len)` and returns the host address of `addr`; the fast
    /// path is one compare against the cached region.
    #[inline]
    fn check(&mut self, addr: u64, len: u64) -> Result<u64, MemFault> {
        let end = addr.checked_add(len).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        let generation = self.mem.generation.load(Ordering::Acquire);
        if generation == self.generation && addr >= self.cached.start && end <= self.cached.end {
            return Ok(addr.wrapping_add(self.cached_delta));
        }
        match self.mem.regions().find(addr) {
            Some((r, region)) if end <= r.end => {
                self.cached = r;
                self.cached_kind = region.kind;
                self.cached_delta = region.delta;
                self.generation = generation;
                Ok(addr.wrapping_add(region.delta))
            }
            Some((r, _)) => Err(MemFault { addr: r.end, kind: MemFaultKind::Unmapped }),
            None => Err(MemFault { addr, kind: MemFaultKind::Unmapped }),
        }
    }

    /// Whether `addr` lies in fine-grained memory (false for unmapped addresses: their
    /// access faults anyway).
    #[inline]
    pub fn is_fine(&mut self, addr: u64) -> bool {
        self.check(addr, 1).is_ok() && self.cached_kind == MemKind::Fine
    }
}

/// Performs a deferred access where it is ordered (an L2 or the coherent home). With no
/// GPU memory (a topology without an `amdgpu.soc`) every address is unmapped.
pub fn perform(view: Option<&mut MemView>, req: &VmemRequest) -> Result<Box<VmemResponse>, MemFault> {
    match view {
        Some(v) => req.perform(v).map(Box::new),
        None => Err(MemFault { addr: 0, kind: MemFaultKind::Unmapped }),
    }
}

impl DeviceMemory for MemView {
    #[inline]
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let host = self.check(addr, buf.len() as u64)?;
        // SAFETY: `check` proved the range is inside a live region.
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let host = self.check(addr, data.len() as u64)?;
        // SAFETY: as in `read`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), host as *mut u8, data.len()) };
        Ok(())
    }

    fn atomic_u32(&mut self, addr: u64, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        self.mem.atomic_u32(GpuAddr(addr), op, src, cmp)
    }

    fn atomic_u64(&mut self, addr: u64, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
        self.mem.atomic_u64(GpuAddr(addr), op, src, cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_and_faults() {
        let mem = Arc::new(GpuMemory::new(1 << 30).unwrap());
        let a = mem.alloc(100, 0).unwrap();
        let b = mem.alloc(8192, 1 << 16).unwrap();
        assert_eq!(b.0 % (1 << 16), 0);
        assert_eq!(mem.region_of(a), Some(a.0..a.0 + PAGE));
        let mut v = mem.view();
        v.write(a.0 + 8, &7u32.to_le_bytes()).unwrap();
        let mut four = [0u8; 4];
        v.read(a.0 + 8, &mut four).unwrap();
        assert_eq!(u32::from_le_bytes(four), 7);
        // Past the end of the allocation, and a freed allocation, fault.
        assert_eq!(v.read(a.0 + PAGE - 2, &mut four).unwrap_err().kind, MemFaultKind::Unmapped);
        mem.free(a).unwrap();
        assert!(v.read(a.0 + 8, &mut four).is_err(), "the view must notice the free");
        assert_eq!(mem.free(a), Err(AllocError::NotAllocated(a)));
        // A re-allocation reads zero.
        let c = mem.alloc(100, 0).unwrap();
        assert_eq!(c, a, "first fit reuses the lowest range");
        v.read(c.0 + 8, &mut four).unwrap();
        assert_eq!(u32::from_le_bytes(four), 0);
        assert!(matches!(mem.alloc(1 << 31, 0), Err(AllocError::OutOfMemory { .. })));
        // Atomics: real read-modify-writes, aligned only.
        assert_eq!(mem.atomic_u32(GpuAddr(c.0 + 8), AtomicOp::Add, 5, 0), Ok(0));
        assert_eq!(mem.atomic_u32(GpuAddr(c.0 + 8), AtomicOp::Add, 5, 0), Ok(5));
        assert_eq!(mem.atomic_u32(GpuAddr(c.0 + 10), AtomicOp::Add, 1, 0).unwrap_err().kind, MemFaultKind::Misaligned);
        assert_eq!(mem.atomic_u64(GpuAddr(c.0 + 12), AtomicOp::Add, 1, 0).unwrap_err().kind, MemFaultKind::Misaligned);
    }

    #[test]
    fn kinds_are_per_allocation_and_survive_snapshots() {
        let mem = Arc::new(GpuMemory::new(1 << 24).unwrap());
        let coarse = mem.alloc(PAGE, 0).unwrap();
        let fine = mem.alloc_kind(2 * PAGE, 0, MemKind::Fine).unwrap();
        let mut v = mem.view();
        assert!(!v.is_fine(coarse.0 + 8));
        assert!(v.is_fine(fine.0 + PAGE + 8));
        assert!(!v.is_fine(fine.0 + 2 * PAGE + 8), "past the end: unmapped, not fine");
        let snap = mem.snapshot();
        mem.free(fine).unwrap();
        assert_eq!(mem.kind_of(fine), None);
        mem.restore(&snap).unwrap();
        assert_eq!(mem.kind_of(fine), Some(MemKind::Fine));
        assert_eq!(mem.kind_of(coarse), Some(MemKind::Coarse));
    }

    #[test]
    fn host_memory_mapped_at_another_address() {
        let mem = Arc::new(GpuMemory::new(1 << 24).unwrap());
        let mut host = vec![0u64; 1024];
        let gpu = GpuAddr(0x7000_0000_0000);
        // SAFETY: `host` outlives the mapping (unmapped below, before it drops).
        unsafe { mem.map_host(gpu, 8192, host.as_mut_ptr() as u64, MemKind::Fine).unwrap() };
        let mut v = mem.view();
        v.write(gpu.0 + 16, &9u64.to_le_bytes()).unwrap();
        assert_eq!(host[2], 9, "a GPU write lands in the host memory");
        host[3] = 11;
        assert_eq!(mem.read_u64(GpuAddr(gpu.0 + 24)).unwrap(), 11);
        assert_eq!(mem.atomic_u64(GpuAddr(gpu.0 + 24), AtomicOp::Add, 1, 0), Ok(11));
        assert!(v.is_fine(gpu.0));
        // Overlaps with mapped ranges and the arena are refused.
        // SAFETY: refused, nothing is mapped.
        unsafe {
            assert_eq!(mem.map_host(GpuAddr(gpu.0 + 4096), 4096, 0, MemKind::Coarse), Err(AllocError::Overlap(GpuAddr(gpu.0 + 4096))));
            assert!(mem.map_host(mem.base(), 4096, 0, MemKind::Coarse).is_err());
        }
        assert!(mem.snapshot().regions.is_empty(), "host mappings are not checkpointed");
        mem.unmap_host(gpu).unwrap();
        assert!(v.read(gpu.0 + 16, &mut [0u8; 8]).is_err(), "the view notices the unmap");
        assert_eq!(mem.unmap_host(gpu), Err(AllocError::NotAllocated(gpu)));
    }

    #[test]
    fn snapshot_round_trip() {
        let mem = GpuMemory::new(1 << 24).unwrap();
        let a = mem.alloc(3 * PAGE, 0).unwrap();
        mem.write_u64(GpuAddr(a.0 + PAGE), 42).unwrap();
        let snap = mem.snapshot();
        mem.write_u64(GpuAddr(a.0 + PAGE), 1).unwrap();
        let b = mem.alloc(PAGE, 0).unwrap();
        mem.restore(&snap).unwrap();
        assert_eq!(mem.read_u64(GpuAddr(a.0 + PAGE)).unwrap(), 42);
        assert!(mem.region_of(b).is_none());
    }
}
