//! One GPU's SVM page-table entries: which application pages the GPU may access, at
//! their own address (an SVM range is the application's memory, and a GPU address is
//! a host address), with which cache kind and whether it may write them. Adjacent
//! pieces with the same kind and permission are one region of the GPU's memory, so an
//! access across two SVM ranges works as it does through real page tables. Changes
//! reach the GPU in one step ([`GpuMemory::replace_host`]).

use std::collections::BTreeMap;

use amdgpu::gpu::ids::GpuAddr;
use amdgpu::gpu::memory::{GpuMemory, HostMapping, MemKind};

use crate::backend::Errno;

/// A run of mapped pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// One past the last byte.
    pub end: u64,
    /// Cache kind (coherent ranges are fine-grained).
    pub kind: MemKind,
    /// Whether GPU stores may write it.
    pub writable: bool,
}

/// See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuMap {
    pieces: BTreeMap<u64, Piece>,
}

impl GpuMap {
    /// Cuts the piece holding `at` (strictly inside it) in two.
    fn split_at(&mut self, at: u64) {
        if let Some((&s, &p)) = self.pieces.range(..at).next_back() {
            if s < at && at < p.end {
                self.pieces.insert(s, Piece { end: at, ..p });
                self.pieces.insert(at, p);
            }
        }
    }

    /// Replaces whatever is mapped in `[start, end)` by `pieces` (start, piece), which
    /// lie inside it and do not overlap; the rest of the span becomes unmapped.
    pub fn set(&mut self, start: u64, end: u64, pieces: &[(u64, Piece)]) {
        self.split_at(start);
        self.split_at(end);
        let inside: Vec<u64> = self.pieces.range(start..end).map(|(&s, _)| s).collect();
        for s in inside {
            self.pieces.remove(&s);
        }
        for &(s, p) in pieces {
            debug_assert!(start <= s && s < p.end && p.end <= end);
            self.pieces.insert(s, p);
        }
        self.coalesce();
    }

    /// Unmaps `[start, end)`.
    pub fn unmap(&mut self, start: u64, end: u64) {
        self.set(start, end, &[]);
    }

    /// Merges touching pieces of equal kind and permission.
    fn coalesce(&mut self) {
        let mut merged: BTreeMap<u64, Piece> = BTreeMap::new();
        let mut last: Option<(u64, Piece)> = None;
        for (&s, &p) in &self.pieces {
            last = match last {
                Some((ls, lp)) if lp.end == s && lp.kind == p.kind && lp.writable == p.writable => Some((ls, Piece { end: p.end, ..lp })),
                Some((ls, lp)) => {
                    merged.insert(ls, lp);
                    Some((s, p))
                }
                None => Some((s, p)),
            };
        }
        if let Some((ls, lp)) = last {
            merged.insert(ls, lp);
        }
        self.pieces = merged;
    }

    /// Whether the page at `addr` is mapped (writable, for `write`).
    pub fn covers(&self, addr: u64, write: bool) -> bool {
        self.pieces.range(..=addr).next_back().is_some_and(|(_, p)| addr < p.end && (p.writable || !write))
    }

    /// Whether any page of `[start, end)` is mapped.
    pub fn covers_any(&self, start: u64, end: u64) -> bool {
        let before = self.pieces.range(..start).next_back().is_some_and(|(_, p)| p.end > start);
        before || self.pieces.range(start..end).next().is_some()
    }

    /// The mapped runs, in address order: (start, piece).
    pub fn pieces(&self) -> impl Iterator<Item = (u64, Piece)> + '_ {
        self.pieces.iter().map(|(&s, &p)| (s, p))
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Makes `memory` go from the mappings of `from` to those of `to`, in one step:
    /// pieces that did not change stay as they are.
    pub fn transition(memory: &GpuMemory, from: &GpuMap, to: &GpuMap) -> Result<(), Errno> {
        let remove: Vec<GpuAddr> = from.pieces.iter().filter(|(s, p)| to.pieces.get(s) != Some(p)).map(|(&s, _)| GpuAddr(s)).collect();
        let add: Vec<HostMapping> = to
            .pieces
            .iter()
            .filter(|(s, p)| from.pieces.get(s) != Some(p))
            .map(|(&s, p)| HostMapping { addr: GpuAddr(s), len: p.end - s, host: s, kind: p.kind, writable: p.writable })
            .collect();
        if remove.is_empty() && add.is_empty() {
            return Ok(());
        }
        // SAFETY: every piece is application memory the driver checked was mapped
        // (readable, and writable where the piece is) when it made the piece; the
        // interposer reports the application's unmaps, which remove the pieces first.
        unsafe { memory.replace_host(&remove, &add) }.map_err(|_| Errno::INVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 4096;

    fn piece(end: u64, writable: bool) -> Piece {
        Piece { end, kind: MemKind::Fine, writable }
    }

    #[test]
    fn pieces_split_merge_and_reach_the_gpu_in_one_step() {
        let mut m = GpuMap::default();
        m.set(0x10 * P, 0x20 * P, &[(0x10 * P, piece(0x20 * P, true))]);
        m.set(0x20 * P, 0x30 * P, &[(0x20 * P, piece(0x30 * P, true))]);
        assert_eq!(m.pieces.len(), 1, "touching equal pieces are one");
        m.set(0x18 * P, 0x19 * P, &[(0x18 * P, piece(0x19 * P, false))]);
        assert_eq!(m.pieces.len(), 3);
        assert!(m.covers(0x18 * P + 5, false) && !m.covers(0x18 * P, true) && m.covers(0x19 * P, true));
        m.unmap(0x2f * P, 0x40 * P);
        assert!(!m.covers(0x2f * P, false) && m.covers(0x2e * P, false));

        let mem = GpuMemory::new(1 << 24).unwrap();
        let host = vec![0u8; 0x40 * P as usize];
        let base = (host.as_ptr() as u64).next_multiple_of(P);
        let mut a = GpuMap::default();
        a.set(base, base + 8 * P, &[(base, piece(base + 8 * P, true))]);
        GpuMap::transition(&mem, &GpuMap::default(), &a).unwrap();
        let mut b = a.clone();
        b.set(base + 2 * P, base + 3 * P, &[(base + 2 * P, piece(base + 3 * P, false))]);
        GpuMap::transition(&mem, &a, &b).unwrap();
        assert_eq!(mem.allocations(), vec![base..base + 2 * P, base + 2 * P..base + 3 * P, base + 3 * P..base + 8 * P]);
        assert!(mem.write(GpuAddr(base + 2 * P), &[1]).is_err());
        mem.write(GpuAddr(base + 3 * P), &[1]).unwrap();
        GpuMap::transition(&mem, &b, &GpuMap::default()).unwrap();
        assert!(mem.allocations().is_empty());
        drop(host);
    }
}
