//! Recoverable GPU page faults (XNACK on), served like the driver's
//! `svm_range_restore_pages`: the faulting GPU's access is retried once the page is
//! mapped, or faults for good (a memory exception) when the driver cannot map it.
//!
//! For a fault at page `p` on GPU `g`:
//! 1. XNACK off: no retry, the access faults.
//! 2. The range holding `p`; with none, a new range over the application's memory
//!    around `p` (the 2 MiB-aligned window inside `p`'s mapping and between the
//!    neighbouring ranges, or just `p` next to a buffer object; none at all inside one,
//!    or where nothing is mapped). On the initial heap or stack it prefers system memory.
//! 3. The mapping at `p` must allow the access (a store needs a writable mapping).
//! 4. The best location (`svm_range_best_restore_location`): the preferred location if
//!    it is `g` or system memory; else `g` with ACCESS; else, with ACCESS_IN_PLACE,
//!    where the pages are; else no access, and the access faults.
//! 5. The pages move there (bookkeeping only) and the granularity-aligned window
//!    around `p` inside the range is mapped on `g`.

use std::sync::Weak;

use amdgpu::gpu::memory::{FaultResolver, PageFault};

use super::ranges::SvmRange;
use super::{overlaps, SvmShared};
use crate::kfd::abi::svm::{LOCATION_SYSMEM, LOCATION_UNDEFINED};
use crate::kfd::backing::PAGE;
use crate::kfd::lock;
use crate::kfd::vma::{self, VmaKind};

/// The window an unregistered range may cover around a fault: 2 MiB (512 pages).
const UNREGISTERED_WINDOW: u64 = 512 * PAGE;

/// The page-fault handler of one GPU for one process.
pub(super) struct SvmFaults {
    /// The process's SVM state (gone once its context closes).
    pub(super) shared: Weak<SvmShared>,
    /// The GPU's index.
    pub(super) gpu: usize,
}

impl FaultResolver for SvmFaults {
    fn resolve(&self, fault: PageFault) -> bool {
        self.shared.upgrade().is_some_and(|s| s.restore_pages(self.gpu, fault.addr.0 & !(PAGE - 1), fault.write))
    }
}

impl SvmShared {
    /// Serves a fault of GPU `gpu` at `page`; whether the page is now mapped. See the
    /// [module docs](self).
    fn restore_pages(&self, gpu: usize, page: u64, write: bool) -> bool {
        let bos = self.bo_spans();
        let mut state = lock(&self.state);
        if !state.xnack {
            return false;
        }
        let Ok(vmas) = vma::own_mappings(page.saturating_sub(UNREGISTERED_WINDOW), page.saturating_add(UNREGISTERED_WINDOW)) else {
            return false;
        };
        let Some(area) = vma::find(&vmas, page).copied() else { return false };
        if !area.read || (write && !area.write) {
            return false;
        }
        let mut next = state.clone();
        let start = match next.ranges.find(page) {
            Some((s, _)) => s,
            None => {
                let (before, after) = next.ranges.gap_around(page);
                let mut start = area.start.max(page - page % UNREGISTERED_WINDOW).max(before);
                let mut end = area.end.min((page + PAGE).next_multiple_of(UNREGISTERED_WINDOW)).min(after);
                let in_bo = |s: u64, e: u64| bos.iter().any(|b| b.mapped.is_some_and(|m| overlaps(m, s, e)) || b.userptr.is_some_and(|u| overlaps(u, s, e)));
                if in_bo(page, page + PAGE) {
                    return false;
                }
                if in_bo(start, end) {
                    (start, end) = (page, page + PAGE);
                }
                let mut r = SvmRange::new(end, self.supported);
                if matches!(area.kind, VmaKind::Heap | VmaKind::Stack) {
                    r.preferred_loc = LOCATION_SYSMEM;
                }
                next.ranges.insert(start, r);
                start
            }
        };
        let Some(r) = next.ranges.get(start).copied() else { return false };
        let Some(best) = self.best_restore_location(gpu, &r) else { return false };
        // 2^granularity pages, at most 2^63 bytes (a granularity of 0x3f is "all of it").
        let window = if u32::from(r.granularity) + PAGE.trailing_zeros() < 63 { PAGE << r.granularity } else { 1 << 63 };
        let from = (page - page % window).max(start);
        let to = page.saturating_add(PAGE).checked_next_multiple_of(window).unwrap_or(u64::MAX).min(r.end);
        if r.actual_loc != LOCATION_SYSMEM || best != LOCATION_SYSMEM {
            if let Some(m) = next.ranges.get_mut(start) {
                m.actual_loc = best;
            }
        }
        // Only the parts of the window in readable memory can be mapped.
        let Ok(all) = vma::own_mappings(from, to) else { return false };
        let readable: Vec<_> = all.into_iter().filter(|v| v.read).collect();
        for v in &readable {
            let (s, e) = (v.start.max(from), v.end.min(to));
            if self.validate_and_map(&mut next, start, s, e, Some(gpu), std::slice::from_ref(v)).is_err() {
                return false;
            }
        }
        if !next.maps[gpu].covers(page, write) || self.commit(&mut state, next).is_err() {
            return false;
        }
        true
    }

    /// `svm_range_best_restore_location`: where the range should be for GPU `gpu` (a
    /// gpu id, or 0 for system memory), `None` when `gpu` may not access it.
    fn best_restore_location(&self, gpu: usize, r: &SvmRange) -> Option<u32> {
        let gpu_id = self.gpu_ids[gpu];
        if r.preferred_loc == gpu_id || r.preferred_loc == LOCATION_SYSMEM {
            return Some(r.preferred_loc);
        }
        if r.preferred_loc != LOCATION_UNDEFINED && self.index_of(r.preferred_loc).is_some_and(|p| self.same_hive(gpu, p)) {
            return Some(r.preferred_loc);
        }
        if r.access.contains(gpu) {
            return Some(gpu_id);
        }
        if r.in_place.contains(gpu) {
            if r.actual_loc == LOCATION_SYSMEM {
                return Some(LOCATION_SYSMEM);
            }
            let home = self.index_of(r.actual_loc);
            return Some(if home.is_some_and(|h| self.same_hive(gpu, h)) { r.actual_loc } else { LOCATION_SYSMEM });
        }
        None
    }
}
