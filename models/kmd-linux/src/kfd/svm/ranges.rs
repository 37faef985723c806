//! The SVM ranges of one process: page-aligned, non-overlapping address ranges with their
//! attributes (the real driver's `svm_range` interval tree). Setting attributes on a
//! span splits the ranges it cuts and fills its gaps with new ranges of default
//! attributes; ranges are never merged again, as in the driver.

use std::collections::BTreeMap;

use crate::kfd::abi::svm::{flag, LOCATION_UNDEFINED};

/// A set of GPUs, by index in the machine (the driver's per-process GPU bitmaps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuSet(pub u64);

impl GpuSet {
    /// Whether GPU `g` is in the set.
    pub fn contains(self, g: usize) -> bool {
        g < 64 && self.0 & (1 << g) != 0
    }

    /// Adds GPU `g`.
    pub fn insert(&mut self, g: usize) {
        self.0 |= 1 << g;
    }

    /// Removes GPU `g`.
    pub fn remove(&mut self, g: usize) {
        self.0 &= !(1 << g);
    }

    /// The GPUs of either set.
    pub fn union(self, other: GpuSet) -> GpuSet {
        GpuSet(self.0 | other.0)
    }

    /// The GPUs of both sets.
    pub fn intersection(self, other: GpuSet) -> GpuSet {
        GpuSet(self.0 & other.0)
    }

    /// The GPU indices, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..64).filter(move |&g| self.contains(g))
    }
}

/// Default migration granularity: 2^9 pages (2 MiB).
pub const DEFAULT_GRANULARITY: u8 = 9;

/// Flags of a new range.
pub const DEFAULT_FLAGS: u32 = flag::HOST_ACCESS | flag::COHERENT;

/// The attributes of one range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvmRange {
    /// One past the last byte.
    pub end: u64,
    /// Preferred location: a gpu id, 0 (system memory) or undefined.
    pub preferred_loc: u32,
    /// Where the range was last prefetched to (same encoding).
    pub prefetch_loc: u32,
    /// Where its pages are: 0 (system memory) or the gpu id whose VRAM holds them. The
    /// simulated GPUs and the host share one memory, so this is bookkeeping only.
    pub actual_loc: u32,
    /// log2 of the migration granularity in pages.
    pub granularity: u8,
    /// `KFD_IOCTL_SVM_FLAG_*`.
    pub flags: u32,
    /// GPUs given ACCESS.
    pub access: GpuSet,
    /// GPUs given ACCESS_IN_PLACE.
    pub in_place: GpuSet,
    /// Whether the range has been mapped on a GPU (`mapped_to_gpu`).
    pub mapped: bool,
}

impl SvmRange {
    /// A new range ending at `end` with default attributes; with XNACK on every GPU in
    /// `xnack_access` may access it.
    pub fn new(end: u64, xnack_access: GpuSet) -> SvmRange {
        SvmRange {
            end,
            preferred_loc: LOCATION_UNDEFINED,
            prefetch_loc: LOCATION_UNDEFINED,
            actual_loc: 0,
            granularity: DEFAULT_GRANULARITY,
            flags: DEFAULT_FLAGS,
            access: xnack_access,
            in_place: GpuSet::default(),
            mapped: false,
        }
    }
}

/// The ranges, by start address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranges {
    by_start: BTreeMap<u64, SvmRange>,
}

impl Ranges {
    /// Splits the range holding `at` (strictly inside it) in two at `at`.
    fn split_at(&mut self, at: u64) {
        let Some((&start, &r)) = self.by_start.range(..at).next_back() else {
            return;
        };
        if start < at && at < r.end {
            self.by_start.insert(start, SvmRange { end: at, ..r });
            self.by_start.insert(at, r);
        }
    }

    /// Makes `[start, end)` exactly a union of ranges: splits the ranges it cuts and
    /// fills its gaps with new ranges made by `new_range(end)`. Returns the starts of the
    /// ranges inside `[start, end)`, ascending.
    pub fn cover(&mut self, start: u64, end: u64, new_range: impl Fn(u64) -> SvmRange) -> Vec<u64> {
        self.split_at(start);
        self.split_at(end);
        let mut at = start;
        let mut gaps = Vec::new();
        for (&s, r) in self.by_start.range(start..end) {
            if s > at {
                gaps.push((at, s));
            }
            at = r.end;
        }
        if at < end {
            gaps.push((at, end));
        }
        for (s, e) in gaps {
            self.by_start.insert(s, new_range(e));
        }
        self.by_start.range(start..end).map(|(&s, _)| s).collect()
    }

    /// Removes `[start, end)` from the ranges (splitting the ones it cuts).
    pub fn remove(&mut self, start: u64, end: u64) {
        self.split_at(start);
        self.split_at(end);
        let inside: Vec<u64> = self.by_start.range(start..end).map(|(&s, _)| s).collect();
        for s in inside {
            self.by_start.remove(&s);
        }
    }

    /// The ranges overlapping `[start, end)`, in address order, with their starts.
    pub fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, &SvmRange)> {
        let first = self
            .by_start
            .range(..=start)
            .next_back()
            .filter(|(_, r)| r.end > start)
            .map(|(&s, _)| s)
            .unwrap_or(start);
        self.by_start.range(first..end).map(|(&s, r)| (s, r))
    }

    /// The range holding `addr`, with its start.
    pub fn find(&self, addr: u64) -> Option<(u64, &SvmRange)> {
        let (&s, r) = self.by_start.range(..=addr).next_back()?;
        (addr < r.end).then_some((s, r))
    }

    /// The range starting at `start`.
    pub fn get_mut(&mut self, start: u64) -> Option<&mut SvmRange> {
        self.by_start.get_mut(&start)
    }

    /// The range starting at `start`.
    pub fn get(&self, start: u64) -> Option<&SvmRange> {
        self.by_start.get(&start)
    }

    /// Adds a range that overlaps none.
    pub fn insert(&mut self, start: u64, range: SvmRange) {
        debug_assert!(self.overlapping(start, range.end).next().is_none());
        self.by_start.insert(start, range);
    }

    /// The end of the last range starting before `addr` and the start of the first
    /// range after it (the gap an unregistered range may grow into).
    pub fn gap_around(&self, addr: u64) -> (u64, u64) {
        let before = self.by_start.range(..=addr).next_back().map_or(0, |(_, r)| r.end);
        let after = self.by_start.range(addr + 1..).next().map_or(u64::MAX, |(&s, _)| s);
        (before, after)
    }

    /// Whether no range exists.
    pub fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.by_start.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 4096;

    #[test]
    fn cover_splits_and_fills_and_remove_cuts() {
        let mut r = Ranges::default();
        let made = r.cover(10 * P, 20 * P, |e| SvmRange::new(e, GpuSet::default()));
        assert_eq!(made, vec![10 * P]);
        r.get_mut(10 * P).unwrap().flags = 0;
        // A span cutting the range and running past it: split, then a new range.
        let made = r.cover(15 * P, 25 * P, |e| SvmRange::new(e, GpuSet(1)));
        assert_eq!(made, vec![15 * P, 20 * P]);
        assert_eq!(r.get(10 * P).unwrap().end, 15 * P);
        assert_eq!(r.get(15 * P).unwrap().flags, 0, "the split part keeps its attributes");
        assert_eq!(r.get(20 * P).unwrap().access, GpuSet(1));
        assert_eq!(r.overlapping(14 * P, 16 * P).map(|(s, _)| s).collect::<Vec<_>>(), vec![10 * P, 15 * P]);
        assert_eq!(r.find(24 * P).map(|(s, _)| s), Some(20 * P));
        assert_eq!(r.find(25 * P), None);
        assert_eq!(r.gap_around(30 * P), (25 * P, u64::MAX));
        r.remove(12 * P, 22 * P);
        let left: Vec<(u64, u64)> = r.overlapping(0, u64::MAX).map(|(s, x)| (s, x.end)).collect();
        assert_eq!(left, vec![(10 * P, 12 * P), (22 * P, 25 * P)]);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn gpu_sets() {
        let mut s = GpuSet::default();
        s.insert(0);
        s.insert(3);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3]);
        s.remove(0);
        assert!(!s.contains(0) && s.contains(3) && !s.contains(64));
        assert_eq!(s.union(GpuSet(1)).intersection(GpuSet(9)), GpuSet(9));
    }
}
