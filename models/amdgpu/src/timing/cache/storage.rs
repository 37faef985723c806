//! Lazily allocated tag storage: sets are grouped, and a group's arrays exist only once
//! one of its sets has been filled.
//!
//! **Invariant:** an unallocated group behaves exactly like a group whose ways are all
//! invalid, so allocation is invisible to everything but [`TagStore::heap_bytes`].
//! An idle 256 MiB cache costs one pointer-sized slot per group (64 KiB for 8192 groups),
//! not its 2 Mi tags.

use serde::{Deserialize, Serialize};

/// Sets per lazily allocated group (fewer when the cache has fewer sets).
pub(crate) const SETS_PER_GROUP: u64 = 16;

/// Per-way flag: the way holds a line.
pub(crate) const VALID: u8 = 1;
/// Per-way flag: the line differs from the next level.
pub(crate) const DIRTY: u8 = 2;

/// Structure-of-arrays tags of `sets_per_group` consecutive sets, way-major per set.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SetGroup {
    /// The full line address held by each way (meaningful only when valid).
    pub(crate) lines: Box<[u64]>,
    /// Replacement metadata, one byte per way (see `policy`).
    pub(crate) meta: Box<[u8]>,
    /// [`VALID`] / [`DIRTY`] bits per way.
    pub(crate) flags: Box<[u8]>,
}

impl SetGroup {
    fn new(ways_in_group: usize) -> SetGroup {
        SetGroup {
            lines: vec![0; ways_in_group].into_boxed_slice(),
            meta: vec![0; ways_in_group].into_boxed_slice(),
            flags: vec![0; ways_in_group].into_boxed_slice(),
        }
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<SetGroup>()
            + self.lines.len() * std::mem::size_of::<u64>()
            + self.meta.len()
            + self.flags.len()
    }
}

/// The ways of one set, borrowed from its group.
pub(crate) struct SetView<'a> {
    pub(crate) lines: &'a mut [u64],
    pub(crate) meta: &'a mut [u8],
    pub(crate) flags: &'a mut [u8],
}

/// All tag groups of one cache.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct TagStore {
    ways: usize,
    sets_per_group: u64,
    groups: Vec<Option<Box<SetGroup>>>,
}

impl TagStore {
    pub(crate) fn new(sets: u64, ways: u32) -> TagStore {
        let sets_per_group = sets.min(SETS_PER_GROUP);
        let n_groups = (sets / sets_per_group) as usize;
        TagStore {
            ways: ways as usize,
            sets_per_group,
            groups: vec![None; n_groups],
        }
    }

    /// An empty store (used by the ideal policy, which keeps no tags).
    pub(crate) fn empty(ways: u32) -> TagStore {
        TagStore {
            ways: ways as usize,
            sets_per_group: 1,
            groups: Vec::new(),
        }
    }

    #[inline]
    fn locate(&self, set: u64) -> (usize, usize) {
        // Set counts are powers of two, so is `sets_per_group`: a shift and a mask, not
        // two divisions per access.
        debug_assert!(self.sets_per_group.is_power_of_two());
        let group = (set >> self.sets_per_group.trailing_zeros()) as usize;
        let first_way = (set & (self.sets_per_group - 1)) as usize * self.ways;
        (group, first_way)
    }

    /// The set's ways if its group has been allocated.
    pub(crate) fn get(&mut self, set: u64) -> Option<SetView<'_>> {
        let (group, first) = self.locate(set);
        let ways = self.ways;
        let group = self.groups.get_mut(group)?.as_deref_mut()?;
        Some(SetView {
            lines: &mut group.lines[first..first + ways],
            meta: &mut group.meta[first..first + ways],
            flags: &mut group.flags[first..first + ways],
        })
    }

    /// Read-only lookup of the flags and lines of a set, if allocated.
    pub(crate) fn peek(&self, set: u64) -> Option<(&[u64], &[u8])> {
        let (group, first) = self.locate(set);
        let group = self.groups.get(group)?.as_deref()?;
        Some((
            &group.lines[first..first + self.ways],
            &group.flags[first..first + self.ways],
        ))
    }

    /// The set's ways, allocating its group on first touch.
    pub(crate) fn get_or_alloc(&mut self, set: u64) -> SetView<'_> {
        let (group_idx, first) = self.locate(set);
        let ways = self.ways;
        let ways_in_group = self.sets_per_group as usize * ways;
        // The set index is masked to the set count, so its group is always in range.
        let slot = &mut self.groups[group_idx];
        let group = slot.get_or_insert_with(|| Box::new(SetGroup::new(ways_in_group)));
        SetView {
            lines: &mut group.lines[first..first + ways],
            meta: &mut group.meta[first..first + ways],
            flags: &mut group.flags[first..first + ways],
        }
    }

    /// Every allocated group, in set order.
    pub(crate) fn groups_mut(&mut self) -> impl Iterator<Item = &mut SetGroup> {
        self.groups
            .iter_mut()
            .filter_map(|slot| slot.as_deref_mut())
    }

    /// Every allocated group, in set order.
    pub(crate) fn groups(&self) -> impl Iterator<Item = &SetGroup> {
        self.groups.iter().filter_map(|slot| slot.as_deref())
    }

    /// Frees every group.
    pub(crate) fn clear(&mut self) {
        for slot in &mut self.groups {
            *slot = None;
        }
    }

    /// Bytes of heap this store holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.groups.capacity() * std::mem::size_of::<Option<Box<SetGroup>>>()
            + self.groups().map(SetGroup::heap_bytes).sum::<usize>()
    }
}
