//! Which GPU addresses are another GPU's memory (peer VRAM mapped on this GPU), so
//! that the traffic of lines there leaves through the GPU's XGMI block
//! (the `amdgpu.xgmi` component) instead of going to the local memory-side caches and HBM.
//!
//! The driver that maps a buffer of GPU A on GPU B records it in B's table with A's
//! name (the SoC `name`, the `gpu` parameter of A's components); unmapping removes it.
//! Functional data never moves through this table: every GPU reads and writes the same
//! host pages, so only the statistics and the timing of peer traffic depend on it.
//!
//! **Determinism:** the table changes only through the driver's system calls (buffer
//! mapping), which a data-race-free program finishes before any kernel touches the
//! buffer, so a line's route depends only on the program, never on worker timing.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Peer memory ranges of one GPU: start -> (end, home GPU name).
#[derive(Debug, Default)]
pub struct RemoteRanges {
    by_start: RwLock<BTreeMap<u64, (u64, Arc<str>)>>,
    /// Whether any range is recorded: the common single-GPU case costs one load.
    any: AtomicBool,
}

impl RemoteRanges {
    /// Records that `range` is memory of the GPU named `home` (replacing a range that
    /// starts at the same address).
    pub fn add(&self, range: Range<u64>, home: &str) {
        let mut map = self.by_start.write().unwrap_or_else(|e| e.into_inner());
        map.insert(range.start, (range.end, Arc::from(home)));
        self.any.store(true, Ordering::Release);
    }

    /// Forgets the range starting at `start`, if any.
    pub fn remove(&self, start: u64) {
        let mut map = self.by_start.write().unwrap_or_else(|e| e.into_inner());
        map.remove(&start);
        self.any.store(!map.is_empty(), Ordering::Release);
    }

    /// Whether any peer range is recorded.
    #[inline]
    pub fn is_empty(&self) -> bool {
        !self.any.load(Ordering::Acquire)
    }

    /// The name of the GPU whose memory holds `addr`, if it is a peer's.
    pub fn home_of(&self, addr: u64) -> Option<Arc<str>> {
        if self.is_empty() {
            return None;
        }
        let map = self.by_start.read().unwrap_or_else(|e| e.into_inner());
        let (_, (end, home)) = map.range(..=addr).next_back()?;
        (addr < *end).then(|| home.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_name_their_home_until_removed() {
        let r = RemoteRanges::default();
        assert!(r.is_empty());
        assert_eq!(r.home_of(0x1000), None);
        r.add(0x1000..0x3000, "gpu1");
        r.add(0x8000..0x9000, "gpu2");
        assert_eq!(r.home_of(0x0fff), None);
        assert_eq!(r.home_of(0x1000).as_deref(), Some("gpu1"));
        assert_eq!(r.home_of(0x2fff).as_deref(), Some("gpu1"));
        assert_eq!(r.home_of(0x3000), None);
        assert_eq!(r.home_of(0x8800).as_deref(), Some("gpu2"));
        r.remove(0x1000);
        assert_eq!(r.home_of(0x1000), None);
        assert!(!r.is_empty());
        r.remove(0x8000);
        assert!(r.is_empty());
    }
}
