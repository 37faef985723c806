//! Per-cache counters: hits and misses by access kind, fills, bypasses, evictions and
//! write-backs by cause.

use serde::{Deserialize, Serialize};

use super::AccessKind;

/// Hit and miss counts of one access kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitMiss {
    /// Accesses that found their line.
    pub hits: u64,
    /// Accesses that did not.
    pub misses: u64,
}

impl HitMiss {
    /// Hits plus misses.
    pub fn accesses(&self) -> u64 {
        self.hits + self.misses
    }
}

/// Dirty lines written back, by what caused the write-back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writebacks {
    /// A dirty line was evicted to make room for a fill.
    pub eviction: u64,
    /// [`CacheModel::writeback_all`](super::CacheModel::writeback_all) cleaned the line.
    pub flush: u64,
    /// [`CacheModel::invalidate_all`](super::CacheModel::invalidate_all) or
    /// [`CacheModel::invalidate`](super::CacheModel::invalidate) dropped the dirty line and
    /// handed it back for writing.
    pub invalidate: u64,
}

impl Writebacks {
    /// All write-backs.
    pub fn total(&self) -> u64 {
        self.eviction + self.flush + self.invalidate
    }
}

/// Statistics of one [`CacheModel`](super::CacheModel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Reads.
    pub read: HitMiss,
    /// Writes.
    pub write: HitMiss,
    /// Atomics.
    pub atomic: HitMiss,
    /// Misses that allocated a line.
    pub fills: u64,
    /// Misses that did not allocate (the caller said so, or the write policy forbids it).
    pub bypasses: u64,
    /// Valid lines evicted by fills (clean and dirty).
    pub evictions: u64,
    /// Writes and atomics the cache forwarded downstream (write-through, or not allocated).
    pub writes_forwarded: u64,
    /// Lines dropped by invalidation.
    pub invalidations: u64,
    /// Dirty lines written back.
    pub writebacks: Writebacks,
}

impl CacheStats {
    /// The counters of one access kind.
    pub fn of(&self, kind: AccessKind) -> &HitMiss {
        match kind {
            AccessKind::Read => &self.read,
            AccessKind::Write => &self.write,
            AccessKind::Atomic => &self.atomic,
        }
    }

    pub(crate) fn of_mut(&mut self, kind: AccessKind) -> &mut HitMiss {
        match kind {
            AccessKind::Read => &mut self.read,
            AccessKind::Write => &mut self.write,
            AccessKind::Atomic => &mut self.atomic,
        }
    }

    /// Hits of every kind.
    pub fn hits(&self) -> u64 {
        self.read.hits + self.write.hits + self.atomic.hits
    }

    /// Misses of every kind.
    pub fn misses(&self) -> u64 {
        self.read.misses + self.write.misses + self.atomic.misses
    }

    /// Misses over accesses, 0 when there were none.
    pub fn miss_rate(&self) -> f64 {
        let accesses = self.hits() + self.misses();
        if accesses == 0 {
            0.0
        } else {
            self.misses() as f64 / accesses as f64
        }
    }
}
