//! A functional-mode cache level: a tag model fed with the line accesses of the level
//! above, keeping per-dispatch hit/miss counts and producing the traffic for the level
//! below (fills as reads, dirty evictions as writes). The L2 and the memory-side cache
//! use it; which replacement policy it has is the component type's choice.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ids::DispatchSeq;
use crate::messages::LineAccess;
use crate::stats::CacheCounts;
use crate::timing::{AccessKind, CacheConfig, CacheModel, ConfigError, LineAddr, ReplacementPolicy, WritePolicy};

/// Counters of one dispatch at one level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelCounts {
    /// Hits and misses.
    pub counts: CacheCounts,
    /// Bytes fetched from the level below.
    pub read_bytes: u64,
    /// Bytes written to the level below.
    pub write_bytes: u64,
}

/// See the [module docs](self).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LineCache {
    cache: CacheModel,
    line_bytes: u64,
    per_dispatch: BTreeMap<DispatchSeq, LevelCounts>,
}

impl LineCache {
    /// A write-back, write-allocate level.
    pub fn new(size_bytes: u64, line_bytes: u64, ways: u32, policy: &str) -> Result<LineCache, ConfigError> {
        let config = CacheConfig { size_bytes, line_bytes, ways, policy: ReplacementPolicy::from_name(policy)?, write_policy: WritePolicy::WriteBack };
        Ok(LineCache { cache: CacheModel::new(&config)?, line_bytes, per_dispatch: BTreeMap::new() })
    }

    /// Line size.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// Applies `lines` (addresses of any granule; they are re-aligned to this level's
    /// lines) and returns the traffic to the level below.
    pub fn apply(&mut self, seq: DispatchSeq, lines: &[LineAccess]) -> Vec<LineAccess> {
        let shift = self.line_bytes.trailing_zeros();
        let d = self.per_dispatch.entry(seq).or_default();
        let mut below = Vec::new();
        let mut last = None;
        for l in lines {
            let line = LineAddr(l.line >> shift);
            if last == Some((line, l.write)) {
                continue; // the same line twice in a row: one access at this level
            }
            last = Some((line, l.write));
            let kind = if l.write { AccessKind::Write } else { AccessKind::Read };
            let out = self.cache.access(line, kind, true);
            if out.is_hit() {
                d.counts.hits += 1;
            } else {
                d.counts.misses += 1;
                d.read_bytes += self.line_bytes;
                below.push(LineAccess { line: line.0 << shift, write: false });
            }
            if let Some(victim) = out.dirty_victim() {
                d.write_bytes += self.line_bytes;
                below.push(LineAccess { line: victim.0 << shift, write: true });
            }
        }
        below
    }

    /// Takes the counters of `seq`.
    pub fn flush(&mut self, seq: DispatchSeq) -> LevelCounts {
        self.per_dispatch.remove(&seq).unwrap_or_default()
    }

    /// Total hits and misses since the start.
    pub fn totals(&self) -> (u64, u64) {
        let s = self.cache.stats();
        (s.hits(), s.misses())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_fill_and_dirty_victims_write_back() {
        // 2 lines of 128 B, direct-mapped into... one set of 2 ways.
        let mut c = LineCache::new(256, 128, 2, "lru").unwrap();
        let s = DispatchSeq(1);
        let w = |line: u64| LineAccess { line, write: true };
        let r = |line: u64| LineAccess { line, write: false };
        assert_eq!(c.apply(s, &[w(0), r(128)]), vec![r(0), r(128)]);
        assert_eq!(c.apply(s, &[r(0)]), vec![]);
        // A third line evicts the LRU one (128, clean); a fourth evicts 0 (dirty).
        assert_eq!(c.apply(s, &[r(256)]), vec![r(256)]);
        assert_eq!(c.apply(s, &[r(384)]), vec![r(384), w(0)]);
        let d = c.flush(s);
        assert_eq!(d.counts, CacheCounts { hits: 1, misses: 4 });
        assert_eq!((d.read_bytes, d.write_bytes), (512, 128));
        assert_eq!(c.flush(s), LevelCounts::default());
    }
}
