//! GPU memory: host memory mapped at the same address for the simulated GPU and for the
//! host, so a GPU virtual address is a host pointer (what the KFD emulation needs too:
//! the application and the simulator see a buffer at one address). The one exception is
//! a memory restored from a snapshot of another arena ([`GpuMemory::restore`]): it keeps
//! the snapshot's GPU addresses at its own host address (a checkpoint restored while
//! the original simulation still holds those addresses, as embedders do); every access
//! goes through the region table, which translates.
//!
//! [`GpuMemory`] reserves one large arena of address space (`MAP_NORESERVE`: untouched
//! pages cost nothing) and hands out allocations from it. Only allocated ranges are
//! accessible: every access is checked against the region table, and an access outside
//! it is a [`MemFault`] value, like a GPU page fault, never a host crash.
//!
//! [`MemView`] is one component's handle (a compute unit's, an L2's): it caches the
//! last region it hit, and implements the executor's `DeviceMemory`.
//!
//! Host memory mapped into the GPU's address space ([`GpuMemory::map_host`],
//! [`GpuMemory::replace_host`]) may be read-only for the GPU. An access that finds no
//! region (or a store to a read-only one) first asks the [`FaultResolver`], if one is
//! installed: a driver serving recoverable page faults (XNACK) maps the page there and
//! the access is retried, as the GPU retries a faulting access until the driver has
//! updated its page table. Without a resolver, or when it declines, the access faults.
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

use amdgpu_isa::exec::device::{gather_dwords_by_lane, scatter_dwords_by_lane};
use amdgpu_isa::exec::{AtomicOp, DeviceMemory, MemFault, MemFaultKind, VmemRequest};
use serde::{Deserialize, Serialize};

use crate::gpu::ids::GpuAddr;

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

/// The reserved arena (host addresses).
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
    /// Whether GPU stores and atomics may write it (a read-only page faults them).
    writable: bool,
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
}

/// Host memory to make accessible to the GPU ([`GpuMemory::replace_host`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HostMapping {
    /// First GPU address.
    pub addr: GpuAddr,
    /// Bytes (a multiple of nothing in particular; usually pages).
    pub len: u64,
    /// The host address `addr` reads and writes.
    pub host: u64,
    /// The cache kind (MTYPE) of its pages.
    pub kind: MemKind,
    /// Whether GPU stores and atomics may write it.
    pub writable: bool,
}

/// A GPU access that found no mapping (or wrote a read-only page), as the driver's
/// page-fault handler gets it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageFault {
    /// The first address of the access with no (writable) mapping.
    pub addr: GpuAddr,
    /// Whether the access writes (a store or an atomic).
    pub write: bool,
}

/// The driver's handler of recoverable GPU page faults (XNACK): called, on the accessing
/// thread, for an access that found no mapping. It may map the page (with
/// [`GpuMemory::replace_host`], never with a lock the accessing thread holds) and
/// returns whether it did, so that the access is retried.
///
/// **Determinism:** the answer must depend only on the driver's state (which the
/// application sets up through system calls), never on timing.
pub trait FaultResolver: Send + Sync {
    /// Resolves `fault`; `true` when the faulting page is now mapped.
    fn resolve(&self, fault: PageFault) -> bool;
}

/// How many times one access asks the resolver before it faults (an access may span
/// two unmapped pages).
const RESOLVE_ATTEMPTS: usize = 4;

/// The memory of one simulated GPU. See the [module docs](self).
pub struct GpuMemory {
    arena: Arena,
    /// GPU address of the arena's first byte: its host address, unless a restore moved
    /// the GPU addresses ([`GpuMemory::restore`]).
    gpu_base: AtomicU64,
    regions: RwLock<Regions>,
    /// Free ranges of the arena, by start: start -> end.
    free: Mutex<BTreeMap<u64, u64>>,
    /// Bumped on every free, so views drop cached regions.
    generation: AtomicU64,
    /// The driver's page-fault handler, if faults are recoverable.
    resolver: RwLock<Option<Arc<dyn FaultResolver>>>,
}

impl std::fmt::Debug for GpuMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuMemory").field("base", &format_args!("{:#x}", self.gpu_base())).field("len", &self.arena.len).finish()
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
            gpu_base: AtomicU64::new(base),
            regions: RwLock::new(Regions::default()),
            free: Mutex::new(free),
            generation: AtomicU64::new(0),
            resolver: RwLock::new(None),
        })
    }

    /// Installs (or, with `None`, removes) the handler of recoverable page faults.
    pub fn set_fault_resolver(&self, resolver: Option<Arc<dyn FaultResolver>>) {
        *self.resolver.write().unwrap_or_else(|e| e.into_inner()) = resolver;
    }

    /// Asks the resolver to map the page of `fault`; false without one.
    fn resolve(&self, fault: PageFault) -> bool {
        // Cloned out, so the resolver runs without this lock held.
        let resolver = self.resolver.read().unwrap_or_else(|e| e.into_inner()).clone();
        resolver.is_some_and(|r| r.resolve(fault))
    }

    /// First GPU address of the arena.
    pub fn base(&self) -> GpuAddr {
        GpuAddr(self.gpu_base())
    }

    fn gpu_base(&self) -> u64 {
        self.gpu_base.load(Ordering::Acquire)
    }

    /// The arena's GPU addresses.
    fn gpu_range(&self) -> Range<u64> {
        let base = self.gpu_base();
        base..base + self.arena.len
    }

    /// Host address minus GPU address of the arena's allocations (wrapping; 0 unless a
    /// restore moved the GPU addresses).
    fn arena_delta(&self) -> u64 {
        self.arena.base.wrapping_sub(self.gpu_base())
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
        self.regions.write().unwrap_or_else(|e| e.into_inner()).by_start.insert(at, Region { end: at + len, kind, writable: true, delta: self.arena_delta() });
        Ok(GpuAddr(at))
    }

    /// Makes `len` bytes of host memory at `host` accessible to the GPU at
    /// `[addr, addr + len)` (the KFD emulation's buffer objects and user pointers),
    /// readable and writable.
    ///
    /// # Safety
    /// `host .. host + len` must stay mapped, readable and writable until
    /// [`GpuMemory::unmap_host`] removes the range (the GPU reads and writes it from
    /// any thread).
    pub unsafe fn map_host(&self, addr: GpuAddr, len: u64, host: u64, kind: MemKind) -> Result<(), AllocError> {
        // SAFETY: the caller's contract.
        unsafe { self.replace_host(&[], &[HostMapping { addr, len, host, kind, writable: true }]) }
    }

    /// In one step (no access sees a state in between): removes the host mappings
    /// starting at each address of `remove`, then adds `add`. Either all of it happens
    /// or, on an error, nothing. A mapping in `add` must not overlap the arena, a
    /// remaining mapping or another one of `add`.
    ///
    /// # Safety
    /// Each mapping of `add` must stay mapped, readable, and writable if it says so,
    /// until it is removed (the GPU reads and writes it from any thread).
    pub unsafe fn replace_host(&self, remove: &[GpuAddr], add: &[HostMapping]) -> Result<(), AllocError> {
        let arena = self.gpu_range();
        let mut regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
        for &at in remove {
            if arena.contains(&at.0) || !regions.by_start.contains_key(&at.0) {
                return Err(AllocError::NotAllocated(at));
            }
        }
        let mut ranges: Vec<Range<u64>> = Vec::with_capacity(add.len());
        for m in add {
            if m.len == 0 {
                return Err(AllocError::Zero);
            }
            let end = m.addr.0.checked_add(m.len).ok_or(AllocError::Overlap(m.addr))?;
            let range = m.addr.0..end;
            let overlaps = |r: &Range<u64>| r.start < range.end && range.start < r.end;
            let kept_overlap = regions
                .by_start
                .range(..range.end)
                .rev()
                .take_while(|(_, r)| r.end > range.start)
                .any(|(s, _)| !remove.contains(&GpuAddr(*s)));
            if overlaps(&arena) || kept_overlap || ranges.iter().any(overlaps) {
                return Err(AllocError::Overlap(m.addr));
            }
            ranges.push(range);
        }
        for at in remove {
            regions.by_start.remove(&at.0);
        }
        for m in add {
            regions.by_start.insert(m.addr.0, Region { end: m.addr.0 + m.len, kind: m.kind, writable: m.writable, delta: m.host.wrapping_sub(m.addr.0) });
        }
        drop(regions);
        if !remove.is_empty() {
            self.generation.fetch_add(1, Ordering::Release);
        }
        Ok(())
    }

    /// Removes a range added by [`GpuMemory::map_host`]; later accesses fault.
    pub fn unmap_host(&self, addr: GpuAddr) -> Result<(), AllocError> {
        // SAFETY: removes a mapping and adds none.
        unsafe { self.replace_host(&[addr], &[]) }
    }

    /// Frees the allocation starting at `addr`; its pages return to the OS and read as
    /// zero when allocated again.
    pub fn free(&self, addr: GpuAddr) -> Result<(), AllocError> {
        let arena = self.gpu_range();
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
            let host = addr.0.wrapping_add(self.arena_delta());
            let _ = rustix::mm::madvise(host as *mut std::ffi::c_void, (end - addr.0) as usize, rustix::mm::Advice::LinuxDontNeed);
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

    /// Whether `addr` is mapped read-only for the GPU (a store there faults).
    pub fn is_read_only(&self, addr: GpuAddr) -> bool {
        self.regions().find(addr.0).is_some_and(|(_, r)| !r.writable)
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
        let arena = self.gpu_range();
        self.regions().by_start.iter().filter(|(&s, _)| arena.contains(&s)).map(|(&s, r)| (s..r.end, r.kind)).collect()
    }

    /// A view for one component.
    pub fn view(self: &Arc<Self>) -> MemView {
        MemView { mem: self.clone(), cached: [const { CachedRegion::EMPTY }; VIEW_REGIONS], generation: u64::MAX }
    }

    /// Checks that `[addr, addr + len)` lies inside one region (a writable one for
    /// `write`), asking the resolver about a missing page; returns the host address of
    /// `addr`.
    fn check(&self, addr: u64, len: u64, write: bool) -> Result<u64, MemFault> {
        let end = addr.checked_add(len).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        let (_, region) = self.accessible_region(addr, end, write)?;
        Ok(addr.wrapping_add(region.delta))
    }

    /// The region holding all of `[addr, end)` (a writable one for `write`), with its
    /// span; a missing page is first offered to the resolver, and the lookup retried
    /// while it maps pages.
    fn accessible_region(&self, addr: u64, end: u64, write: bool) -> Result<(Range<u64>, Region), MemFault> {
        let mut attempts = 0;
        loop {
            // The read guard is gone before the resolver runs (it takes the write lock).
            let missing = match self.regions().find(addr) {
                Some((r, region)) if end <= r.end && (region.writable || !write) => return Ok((r, region)),
                Some((r, region)) if region.writable || !write => r.end,
                _ => addr,
            };
            attempts += 1;
            if attempts > RESOLVE_ATTEMPTS || !self.resolve(PageFault { addr: GpuAddr(missing), write }) {
                return Err(MemFault { addr: missing, kind: MemFaultKind::Unmapped });
            }
        }
    }

    /// Copies bytes out of GPU memory (for loaders and host services).
    pub fn read(&self, addr: GpuAddr, buf: &mut [u8]) -> Result<(), MemFault> {
        let host = self.check(addr.0, buf.len() as u64, false)?;
        // SAFETY: `check` proved the range is inside a live region (an arena allocation
        // or host memory its mapper keeps mapped).
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    /// Copies bytes into GPU memory (for loaders and host services).
    pub fn write(&self, addr: GpuAddr, data: &[u8]) -> Result<(), MemFault> {
        let host = self.check(addr.0, data.len() as u64, true)?;
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
        let host = self.check(addr.0, 8, true)?;
        atomic_u64_at(addr.0, host, op, src, cmp)
    }

    /// Atomically applies `op` to the u32 at `addr` (naturally aligned), returning the old value.
    pub fn atomic_u32(&self, addr: GpuAddr, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        let host = self.check(addr.0, 4, true)?;
        atomic_u32_at(addr.0, host, op, src, cmp)
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
        MemorySnapshot { base: self.gpu_base(), regions }
    }

    /// Replaces every allocation with the snapshot's, at the snapshot's GPU addresses.
    /// When the snapshot was taken of an arena at another address (its original still
    /// holds that range, or the kernel placed this one elsewhere), the arena's GPU
    /// addresses move to the snapshot's: GPU addresses then differ from host addresses
    /// by a fixed offset, which every access translates (see the [module docs](self)).
    pub fn restore(&self, snap: &MemorySnapshot) -> Result<(), RestoreError> {
        for (r, _) in self.arena_allocations() {
            let _ = self.free(GpuAddr(r.start));
        }
        if snap.base != self.gpu_base() {
            self.rebase(snap.base)?;
        }
        let arena = self.gpu_range();
        for r in &snap.regions {
            if r.start < arena.start || r.end > arena.end || r.start >= r.end {
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
            self.regions.write().unwrap_or_else(|e| e.into_inner()).by_start.insert(r.start, Region { end: r.end, kind: r.kind, writable: true, delta: self.arena_delta() });
            for (at, bytes) in &r.pages {
                self.write(GpuAddr(*at), bytes).map_err(|_| RestoreError::Range { start: *at, end: at + bytes.len() as u64 })?;
            }
        }
        Ok(())
    }
}

impl GpuMemory {
    /// Moves the (empty) arena's GPU addresses to start at `base`, keeping its host
    /// pages; refused if the new range wraps or overlaps mapped host memory.
    fn rebase(&self, base: u64) -> Result<(), RestoreError> {
        let len = self.arena.len;
        let end = base.checked_add(len).ok_or(RestoreError::Range { start: base, end: u64::MAX })?;
        let regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
        if regions.by_start.range(..end).next_back().is_some_and(|(_, r)| r.end > base) {
            return Err(RestoreError::Range { start: base, end });
        }
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.clear();
        free.insert(base, end);
        self.gpu_base.store(base, Ordering::Release);
        drop((free, regions));
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }
}

/// Atomically applies `op` to the u64 at GPU address `addr`, host address `host` (checked
/// to be inside a writable region), returning the old value; misaligned: a fault.
fn atomic_u64_at(addr: u64, host: u64, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
    if !addr.is_multiple_of(8) || !host.is_multiple_of(8) {
        return Err(MemFault { addr, kind: MemFaultKind::Misaligned });
    }
    // SAFETY: in bounds (the caller checked) and aligned; shared with other threads only
    // through atomic operations on this word.
    let cell = unsafe { AtomicU64::from_ptr(host as *mut u64) };
    // The closure always returns `Some`: the update cannot be refused.
    let old = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op.apply_u64(old, src, cmp)));
    Ok(old.unwrap_or_else(|v| v))
}

/// [`atomic_u64_at`] for a u32.
fn atomic_u32_at(addr: u64, host: u64, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
    if !addr.is_multiple_of(4) || !host.is_multiple_of(4) {
        return Err(MemFault { addr, kind: MemFaultKind::Misaligned });
    }
    // SAFETY: as in `atomic_u64_at`.
    let cell = unsafe { AtomicU32::from_ptr(host as *mut u32) };
    // The closure always returns `Some`: the update cannot be refused.
    let old = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op.apply_u32(old, src, cmp)));
    Ok(old.unwrap_or_else(|v| v))
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
/// caching the last few regions it hit. Implements the executor's [`DeviceMemory`].
pub struct MemView {
    mem: Arc<GpuMemory>,
    /// Recently used regions, most recent first (a program alternates between a few:
    /// its buffers, the kernel arguments, the fine-grained host-call buffer).
    cached: [CachedRegion; VIEW_REGIONS],
    generation: u64,
}

/// Regions a [`MemView`] keeps.
const VIEW_REGIONS: usize = 4;

/// One region a [`MemView`] keeps (an empty range matches nothing).
#[derive(Clone, Debug)]
struct CachedRegion {
    range: Range<u64>,
    kind: MemKind,
    writable: bool,
    delta: u64,
}

impl CachedRegion {
    const EMPTY: CachedRegion = CachedRegion { range: 0..0, kind: MemKind::Coarse, writable: false, delta: 0 };
}

impl std::fmt::Debug for MemView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemView").field("cached", &self.cached[0].range).finish()
    }
}

impl MemView {
    /// The memory this view looks at.
    pub fn memory(&self) -> &Arc<GpuMemory> {
        &self.mem
    }

    /// The kept region holding `addr`, moved to the front; `None` when no kept region
    /// holds it (or regions were freed since they were kept).
    #[inline]
    fn cached_at(&mut self, addr: u64) -> Option<&CachedRegion> {
        let generation = self.mem.generation.load(Ordering::Acquire);
        if generation != self.generation {
            return None;
        }
        let i = self.cached.iter().position(|c| c.range.contains(&addr))?;
        if i != 0 {
            self.cached[..=i].rotate_right(1);
        }
        Some(&self.cached[0])
    }

    /// Keeps `region` (spanning `range`) as the most recent; `generation` is the memory's
    /// generation read before the region was looked up.
    fn keep(&mut self, range: Range<u64>, region: Region, generation: u64) {
        if generation != self.generation {
            self.cached = [const { CachedRegion::EMPTY }; VIEW_REGIONS];
            self.generation = generation;
        }
        self.cached.rotate_right(1);
        self.cached[0] = CachedRegion { range, kind: region.kind, writable: region.writable, delta: region.delta };
    }

    /// Checks `[addr, addr + len)` (writable for `write`) and returns the host address of
    /// `addr`; the fast path is a compare against the kept regions. A miss asks the
    /// memory's fault resolver, as [`GpuMemory`]'s own accesses do.
    #[inline]
    fn check(&mut self, addr: u64, len: u64, write: bool) -> Result<u64, MemFault> {
        let end = addr.checked_add(len).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        if let Some(c) = self.cached_at(addr) {
            if end <= c.range.end && (c.writable || !write) {
                return Ok(addr.wrapping_add(c.delta));
            }
        }
        self.check_slow(addr, end, write)
    }

    #[cold]
    fn check_slow(&mut self, addr: u64, end: u64, write: bool) -> Result<u64, MemFault> {
        // Read before the lookup: a region removed meanwhile bumps it past this value,
        // so the kept regions are dropped at the next access.
        let generation = self.mem.generation.load(Ordering::Acquire);
        let (r, region) = self.mem.accessible_region(addr, end, write)?;
        self.keep(r, region, generation);
        Ok(addr.wrapping_add(region.delta))
    }

    /// Whether `addr` lies in fine-grained memory (false for unmapped addresses: their
    /// access faults anyway).
    #[inline]
    pub fn is_fine(&mut self, addr: u64) -> bool {
        self.check(addr, 1, false).is_ok() && self.cached[0].kind == MemKind::Fine
    }

    /// The region that holds `bytes` bytes at every address of `addrs` in `mask` (a
    /// writable one for `write`), if one does: the kept regions are tried first, then the
    /// region of the lowest address. `None` when the lanes need more than one region, or
    /// a lane's access would fault: the caller then goes lane by lane.
    #[inline]
    fn span(&mut self, addrs: &[u64; 64], mask: u64, bytes: u64, write: bool) -> Option<&CachedRegion> {
        let (lo, hi) = lane_span(addrs, mask)?;
        let end = hi.checked_add(bytes)?;
        if self.cached_at(lo).is_none() {
            // The region of the lowest lane, without asking the fault resolver: a lane
            // that needs a page mapped takes the per-lane path, which asks for exactly
            // the pages the lanes touch.
            let generation = self.mem.generation.load(Ordering::Acquire);
            let (r, region) = self.mem.regions().find(lo)?;
            self.keep(r, region, generation);
        }
        let c = &self.cached[0];
        (end <= c.range.end && (c.writable || !write)).then_some(c)
    }

    /// Whether some lane of `mask` addresses fine-grained memory (unmapped addresses
    /// count as not fine, as for [`MemView::is_fine`]). All lanes in one region take one
    /// check.
    pub fn any_fine(&mut self, addrs: &[u64; 64], mask: u64) -> bool {
        if mask == 0 {
            return false;
        }
        if let Some(c) = self.span(addrs, mask, 1, false) {
            return c.kind == MemKind::Fine;
        }
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.is_fine(addrs[lane]) {
                return true;
            }
        }
        false
    }
}

/// The lowest and highest address of the lanes of `mask` (`None` without lanes).
#[inline]
fn lane_span(addrs: &[u64; 64], mask: u64) -> Option<(u64, u64)> {
    if mask == 0 {
        return None;
    }
    if mask == u64::MAX {
        // Eight independent minima and maxima (one 64-byte row at a time), which the
        // compiler keeps in vector registers, instead of one chain of 64 compares.
        let (mut lo, mut hi) = ([u64::MAX; 8], [0u64; 8]);
        for row in addrs.chunks_exact(8) {
            for i in 0..8 {
                lo[i] = lo[i].min(row[i]);
                hi[i] = hi[i].max(row[i]);
            }
        }
        return Some((lo.into_iter().fold(u64::MAX, u64::min), hi.into_iter().fold(0, u64::max)));
    }
    let (mut lo, mut hi) = (u64::MAX, 0);
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        lo = lo.min(addrs[lane]);
        hi = hi.max(addrs[lane]);
    }
    Some((lo, hi))
}

/// Performs a deferred access where it is ordered (an L2 or the coherent home). With no
/// GPU memory (a topology without an `amdgpu.soc`) every address is unmapped.
/// The answer travels back in the request's own box ([`VmemRequest::perform_in_place`]).
pub fn perform(view: Option<&mut MemView>, mut req: Box<VmemRequest>) -> Result<Box<VmemRequest>, MemFault> {
    match view {
        Some(v) => req.perform_in_place(v).map(|()| req),
        None => Err(MemFault { addr: 0, kind: MemFaultKind::Unmapped }),
    }
}

impl DeviceMemory for MemView {
    #[inline]
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let host = self.check(addr, buf.len() as u64, false)?;
        // SAFETY: `check` proved the range is inside a live region.
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let host = self.check(addr, data.len() as u64, true)?;
        // SAFETY: as in `read`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), host as *mut u8, data.len()) };
        Ok(())
    }

    /// One check for all lanes when they lie in one region, then plain copies; lane by
    /// lane otherwise (which finds the first faulting lane).
    fn gather_dwords(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [[u32; 64]]) -> Result<(), MemFault> {
        let dwords = out.len().min(4);
        let Some(delta) = self.span(addrs, mask, 4 * dwords as u64, false).map(|c| c.delta) else {
            return gather_dwords_by_lane(self, addrs, mask, out);
        };
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let host = addrs[lane].wrapping_add(delta) as *const u32;
            for (k, reg) in out.iter_mut().take(dwords).enumerate() {
                // SAFETY: `span` proved every lane's `4 * dwords` bytes lie inside one live
                // region; the GPU may address them unaligned.
                reg[lane] = u32::from_le(unsafe { host.add(k).read_unaligned() });
            }
        }
        Ok(())
    }

    /// As [`MemView::gather_dwords`], for stores (in lane order: a later lane wins).
    fn scatter_dwords(&mut self, addrs: &[u64; 64], mask: u64, data: &[[u32; 64]]) -> Result<(), MemFault> {
        let dwords = data.len().min(4);
        let Some(delta) = self.span(addrs, mask, 4 * dwords as u64, true).map(|c| c.delta) else {
            return scatter_dwords_by_lane(self, addrs, mask, data);
        };
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let host = addrs[lane].wrapping_add(delta) as *mut u32;
            for (k, reg) in data.iter().take(dwords).enumerate() {
                // SAFETY: as in `gather_dwords`, in a writable region.
                unsafe { host.add(k).write_unaligned(reg[lane].to_le()) };
            }
        }
        Ok(())
    }

    fn gather_u32(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [u32; 64]) -> Result<(), MemFault> {
        self.gather_dwords(addrs, mask, std::slice::from_mut(out))
    }

    fn scatter_u32(&mut self, addrs: &[u64; 64], mask: u64, vals: &[u32; 64]) -> Result<(), MemFault> {
        self.scatter_dwords(addrs, mask, std::slice::from_ref(vals))
    }

    fn atomic_u32(&mut self, addr: u64, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        let host = self.check(addr, 4, true)?;
        atomic_u32_at(addr, host, op, src, cmp)
    }

    fn atomic_u64(&mut self, addr: u64, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
        let host = self.check(addr, 8, true)?;
        atomic_u64_at(addr, host, op, src, cmp)
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
    fn replace_host_is_all_or_nothing_and_read_only_pages_refuse_stores() {
        let mem = Arc::new(GpuMemory::new(1 << 24).unwrap());
        let mut host = vec![0u64; 2048];
        let at = host.as_mut_ptr() as u64;
        let gpu = GpuAddr(0x7100_0000_0000);
        let m = |off: u64, len: u64, writable: bool| HostMapping { addr: GpuAddr(gpu.0 + off), len, host: at + off, kind: MemKind::Fine, writable };
        // SAFETY: `host` outlives every mapping (all removed below).
        unsafe {
            mem.replace_host(&[], &[m(0, 4096, true), m(4096, 4096, false)]).unwrap();
            // Overlapping additions, or removing what is not there, change nothing.
            assert_eq!(mem.replace_host(&[gpu], &[m(0, 8192, true)]), Err(AllocError::Overlap(gpu)), "the page at 4096 stays");
            assert_eq!(mem.replace_host(&[gpu], &[m(0, 4096, true), m(2048, 1024, true)]), Err(AllocError::Overlap(GpuAddr(gpu.0 + 2048))));
            assert_eq!(mem.replace_host(&[GpuAddr(gpu.0 + 8)], &[]), Err(AllocError::NotAllocated(GpuAddr(gpu.0 + 8))));
        }
        let mut v = mem.view();
        v.write(gpu.0 + 8, &5u64.to_le_bytes()).unwrap();
        assert_eq!(host[1], 5);
        // The read-only page reads, but refuses stores and atomics.
        host[513] = 9;
        assert_eq!(v.read_u64(gpu.0 + 4104).unwrap(), 9);
        assert_eq!(v.write(gpu.0 + 4104, &[1]).unwrap_err().kind, MemFaultKind::Unmapped);
        assert!(mem.atomic_u64(GpuAddr(gpu.0 + 4104), AtomicOp::Add, 1, 0).is_err());
        assert_eq!(host[513], 9);
        // One step: both pages become one writable mapping, with no gap seen.
        // SAFETY: as above.
        unsafe { mem.replace_host(&[gpu, GpuAddr(gpu.0 + 4096)], &[m(0, 8192, true)]).unwrap() };
        v.write(gpu.0 + 4090, &[7u8; 12]).unwrap();
        assert_eq!(host[512] & 0xff, 7);
        assert_eq!(mem.allocations(), vec![gpu.0..gpu.0 + 8192]);
        mem.unmap_host(gpu).unwrap();
        assert!(v.read_u64(gpu.0).is_err());
    }

    #[test]
    fn a_resolver_maps_missing_pages_and_the_access_is_retried() {
        struct OnDemand {
            mem: std::sync::Weak<GpuMemory>,
            host: u64,
            base: u64,
            calls: AtomicU64,
        }
        impl FaultResolver for OnDemand {
            fn resolve(&self, fault: PageFault) -> bool {
                self.calls.fetch_add(1, Ordering::Relaxed);
                let Some(mem) = self.mem.upgrade() else { return false };
                let page = fault.addr.0 & !(PAGE - 1);
                if !(self.base..self.base + 4 * PAGE).contains(&page) || fault.write && page == self.base + 3 * PAGE {
                    return false;
                }
                let writable = page != self.base + 3 * PAGE;
                let m = HostMapping { addr: GpuAddr(page), len: PAGE, host: self.host + (page - self.base), kind: MemKind::Coarse, writable };
                // SAFETY: the test's buffer outlives the memory.
                unsafe { mem.replace_host(&[], &[m]).is_ok() }
            }
        }
        let mut host = vec![0u8; 4 * PAGE as usize];
        let mem = Arc::new(GpuMemory::new(1 << 24).unwrap());
        let base = 0x7200_0000_0000;
        let r = Arc::new(OnDemand { mem: Arc::downgrade(&mem), host: host.as_mut_ptr() as u64, base, calls: AtomicU64::new(0) });
        mem.set_fault_resolver(Some(r.clone()));
        let mut v = mem.view();
        v.write(base + 16, &[3]).unwrap();
        assert_eq!(host[16], 3);
        // Each missing page of an access is resolved; pages mapped as two regions still
        // fault an access across them (a driver maps contiguous pages as one region).
        v.write(base + 2 * PAGE - 2, &[4; 4]).unwrap_err();
        assert!(r.calls.load(Ordering::Relaxed) >= 3);
        assert_eq!(mem.allocations().len(), 3);
        assert_eq!(mem.read(GpuAddr(base + 3 * PAGE), &mut [0u8; 1]), Ok(()));
        // The resolver declines: the access faults, at the address it could not map.
        assert_eq!(v.write(base + 3 * PAGE + 8, &[1]).unwrap_err().addr, base + 3 * PAGE + 8);
        assert_eq!(v.read(base + 4 * PAGE, &mut [0u8; 1]).unwrap_err().kind, MemFaultKind::Unmapped);
        mem.set_fault_resolver(None);
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

    #[test]
    fn a_snapshot_restores_into_another_arena_at_its_own_gpu_addresses() {
        let first = GpuMemory::new(1 << 24).unwrap();
        let a = first.alloc(2 * PAGE, 0).unwrap();
        first.write_u64(GpuAddr(a.0 + PAGE), 42).unwrap();
        let snap = first.snapshot();
        // The first memory still holds its range: the second lies elsewhere on the host.
        let second = GpuMemory::new(1 << 24).unwrap();
        assert_ne!(second.base(), first.base());
        second.restore(&snap).unwrap();
        assert_eq!(second.base(), first.base());
        assert_eq!(second.read_u64(GpuAddr(a.0 + PAGE)).unwrap(), 42);
        // The two are separate memories at the same GPU addresses.
        second.write_u64(GpuAddr(a.0 + PAGE), 7).unwrap();
        assert_eq!(first.read_u64(GpuAddr(a.0 + PAGE)).unwrap(), 42);
        let b = second.alloc(PAGE, 0).unwrap();
        assert!(b.0 >= second.base().0 && b.0 < second.base().0 + second.size());
        second.write_u64(b, 9).unwrap();
        let mut view = Arc::new(second).view();
        assert_eq!(DeviceMemory::read_u64(&mut view, b.0).unwrap(), 9);
        view.memory().free(b).unwrap();
        assert!(view.memory().read_u64(b).is_err());
        assert_eq!(snap, first.snapshot());
    }
}
