//! A cache level of the memory system: a tag model fed with the line accesses of the
//! level above, keeping per-dispatch hit/miss counts and producing the traffic for the
//! level below (fills as reads, dirty evictions as writes). The L2 and the memory-side
//! cache use it; which replacement policy it has is the component type's choice.
//!
//! [`LineCache`] is the functional-mode level (no time). [`TimedLevel`] wraps it for
//! timing mode: per-channel bandwidth ([`BandwidthPort`]), a hit latency, and
//! miss-status holding registers ([`MshrFile`]) that merge misses to a line already on
//! its way and hold back misses while every entry is busy. It is pure (cycles in,
//! answers out); the owning component turns the answers into messages.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::gpu::ids::DispatchSeq;
use crate::gpu::messages::LineAccess;
use crate::gpu::stats::CacheCounts;
use crate::timing::{
    AccessKind, Bandwidth, BandwidthPort, CacheConfig, CacheModel, ConfigError, Cycle, LineAddr,
    MshrAllocation, MshrConfig, MshrFile, ReplacementPolicy, WritePolicy,
};

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
    /// A slice of an address-interleaved cache: its tags index the slice-local address.
    #[serde(default)]
    slicing: Option<Slicing>,
}

/// How a slice of a cache interleaved over `slices` slices in `granule`-byte pieces
/// indexes its lines: by the address with the slice-selecting bits removed, so every
/// set of the slice is used (indexing the global address would use only
/// 1/`slices` of them: the bits that pick the slice are the same for all its lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slicing {
    /// Interleave granule, bytes (a power of two).
    pub granule: u64,
    /// Slices (the addresses of one slice share `(addr / granule) % slices`).
    pub slices: u64,
    /// This slice's index, learned from the first address it sees.
    #[serde(default)]
    pub index: Option<u64>,
}

impl Slicing {
    /// The slice-local byte address of `addr`.
    pub fn local(&mut self, addr: u64) -> u64 {
        let stripe = self.granule * self.slices;
        self.index
            .get_or_insert((addr / self.granule) % self.slices);
        (addr / stripe) * self.granule + addr % self.granule
    }

    /// The global byte address of slice-local `local`.
    pub fn global(&self, local: u64) -> u64 {
        let index = self.index.unwrap_or(0);
        ((local / self.granule) * self.slices + index) * self.granule + local % self.granule
    }
}

impl LineCache {
    /// A write-back, write-allocate level.
    pub fn new(
        size_bytes: u64,
        line_bytes: u64,
        ways: u32,
        policy: &str,
    ) -> Result<LineCache, ConfigError> {
        let config = CacheConfig {
            size_bytes,
            line_bytes,
            ways,
            policy: ReplacementPolicy::from_name(policy)?,
            write_policy: WritePolicy::WriteBack,
        };
        Ok(LineCache {
            cache: CacheModel::new(&config)?,
            line_bytes,
            per_dispatch: BTreeMap::new(),
            slicing: None,
        })
    }

    /// Makes this level one slice of an interleaved cache (see [`Slicing`]). `slices` of
    /// 1 (or 0) changes nothing.
    pub fn sliced(mut self, granule: u64, slices: u64) -> LineCache {
        if slices > 1 && granule.is_power_of_two() {
            self.slicing = Some(Slicing {
                granule,
                slices,
                index: None,
            });
        }
        self
    }

    /// The tag model's line of byte address `addr`.
    fn tag_line(&mut self, addr: u64) -> LineAddr {
        let local = self.slicing.as_mut().map_or(addr, |s| s.local(addr));
        LineAddr(local >> self.line_bytes.trailing_zeros())
    }

    /// The global byte address of the tag model's line `line`.
    fn line_address(&self, line: LineAddr) -> u64 {
        let local = line.0 << self.line_bytes.trailing_zeros();
        self.slicing.as_ref().map_or(local, |s| s.global(local))
    }

    /// Line size.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// Applies `lines` (addresses of any granule; they are re-aligned to this level's
    /// lines) and returns the traffic to the level below.
    pub fn apply(&mut self, seq: DispatchSeq, lines: &[LineAccess]) -> Vec<LineAccess> {
        let mut below = Vec::new();
        let mut last = None;
        let line_bytes = self.line_bytes;
        // This batch's counts, added to the dispatch's once at the end.
        let mut d = LevelCounts::default();
        let mut accessed = false;
        for l in lines {
            let line = self.tag_line(l.line);
            if last == Some((line, l.write)) {
                continue; // the same line twice in a row: one access at this level
            }
            last = Some((line, l.write));
            accessed = true;
            let kind = if l.write {
                AccessKind::Write
            } else {
                AccessKind::Read
            };
            let out = self.cache.access(line, kind, true);
            if out.is_hit() {
                d.counts.hits += 1;
            } else {
                d.counts.misses += 1;
                d.read_bytes += line_bytes;
                below.push(LineAccess {
                    line: l.line & !(line_bytes - 1),
                    write: false,
                });
            }
            if let Some(victim) = out.dirty_victim() {
                d.write_bytes += line_bytes;
                below.push(LineAccess {
                    line: self.line_address(victim),
                    write: true,
                });
            }
        }
        if accessed {
            let total = self.per_dispatch.entry(seq).or_default();
            total.counts.hits += d.counts.hits;
            total.counts.misses += d.counts.misses;
            total.read_bytes += d.read_bytes;
            total.write_bytes += d.write_bytes;
        }
        below
    }

    /// One access of `line` (a byte address of any granule) for dispatch `seq`, with
    /// allocation: whether it hit, and the dirty line it evicted (line-aligned bytes).
    pub fn access(&mut self, seq: DispatchSeq, line: u64, write: bool) -> (bool, Option<u64>) {
        let kind = if write {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        let tag_line = self.tag_line(line);
        let out = self.cache.access(tag_line, kind, true);
        let victim_address = out.dirty_victim().map(|v| self.line_address(v));
        let d = self.per_dispatch.entry(seq).or_default();
        let hit = out.is_hit();
        if hit {
            d.counts.hits += 1;
        } else {
            d.counts.misses += 1;
            if !write {
                d.read_bytes += self.line_bytes;
            }
        }
        let victim = victim_address.inspect(|_| {
            d.write_bytes += self.line_bytes;
        });
        (hit, victim)
    }

    /// Counts a miss of `seq` that merged into an outstanding fill (no tag access).
    pub fn count_merged_miss(&mut self, seq: DispatchSeq) {
        self.per_dispatch.entry(seq).or_default().counts.misses += 1;
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

/// The channel-selecting hash of a line index: the index with its higher 7-bit groups
/// folded in by XOR (consecutive lines stay on consecutive channels).
pub fn channel_hash(line: u64) -> u64 {
    line ^ (line >> 7) ^ (line >> 14) ^ (line >> 21)
}

/// Who asked a [`TimedLevel`] for lines, and how to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requester {
    /// Index of the port the request came in on.
    pub port: usize,
    /// The requester's tag, echoed in the answer.
    pub tag: u64,
    /// Whether the requester wants an answer.
    pub reply: bool,
}

/// Timing parameters of a [`TimedLevel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelTiming {
    /// Cycles from a request's arrival to the answer of a hit (after its channel slot).
    pub hit_latency: u64,
    /// Independent channels (lines are spread over them by line index).
    pub channels: u32,
    /// Bytes one channel moves per cycle.
    pub channel_bytes_per_clock: u64,
    /// Distinct lines outstanding below at once.
    pub mshrs: u32,
    /// Requests one outstanding line can hold.
    pub mshr_targets: u32,
}

/// What a [`TimedLevel`] asks its owner to do.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LevelOutput {
    /// Lines to fetch (reads) or write back (writes) from the level below.
    pub below: Vec<LineAccess>,
    /// Requests served: who, and the cycle at which the answer leaves.
    pub answers: Vec<(Requester, Cycle)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct PendingRequest {
    from: Requester,
    /// Lines still waiting for a fill.
    left: u32,
    /// The latest cycle any of its served lines is ready.
    ready: u64,
    /// Arrival cycle (for the average latency).
    arrived: u64,
}

/// Counters of a [`TimedLevel`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedStats {
    /// Requests answered.
    pub answered: u64,
    /// Sum of their latencies (arrival to answer), cycles.
    pub latency_cycles: u64,
    /// Line misses that merged into an outstanding fill.
    pub merged: u64,
    /// Line misses held back because every MSHR was busy.
    pub mshr_stalls: u64,
}

/// A timed cache level (see the [module docs](self)). Writes allocate without fetching
/// (the level keeps byte masks, as the CDNA L2 does), so only reads wait for a fill.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimedLevel {
    cache: LineCache,
    mshr: MshrFile<u64>,
    channels: Vec<BandwidthPort>,
    hit_latency: u64,
    requests: BTreeMap<u64, PendingRequest>,
    /// Read misses waiting for a free MSHR: (request id, line).
    blocked: VecDeque<(u64, LineAddr)>,
    next_id: u64,
    stats: TimedStats,
}

impl TimedLevel {
    /// A timed level over `cache`.
    pub fn new(cache: LineCache, timing: &LevelTiming) -> Result<TimedLevel, ConfigError> {
        let mshr = MshrFile::new(&MshrConfig {
            entries: timing.mshrs,
            targets_per_entry: timing.mshr_targets,
        })?;
        if timing.channels == 0 {
            return Err(ConfigError::Zero {
                model: "timed level",
                field: "channels",
            });
        }
        let port = BandwidthPort::new(Bandwidth::per_cycle(timing.channel_bytes_per_clock))?;
        Ok(TimedLevel {
            cache,
            mshr,
            channels: vec![port; timing.channels as usize],
            hit_latency: timing.hit_latency,
            requests: BTreeMap::new(),
            blocked: VecDeque::new(),
            next_id: 0,
            stats: TimedStats::default(),
        })
    }

    /// The functional tag model and its per-dispatch counters.
    pub fn cache(&mut self) -> &mut LineCache {
        &mut self.cache
    }

    /// The tag model, read-only.
    pub fn tags(&self) -> &LineCache {
        &self.cache
    }

    /// Counters since the start.
    pub fn stats(&self) -> &TimedStats {
        &self.stats
    }

    /// The cycle at which one line moved through its channel arriving at `now` is ready.
    /// Lines are spread over the channels by a hash of the line index (consecutive lines
    /// on consecutive channels, higher address bits folded in), as GPU caches hash
    /// addresses to channels: with a plain modulo, strides that are a multiple of
    /// `channels` lines (a grid-stride loop over a power-of-two grid) would send a
    /// wave's every access to the same few channels.
    fn through_channel(&mut self, now: u64, line: LineAddr, extra: u64) -> u64 {
        let n = self.channels.len() as u64;
        let bytes = self.cache.line_bytes();
        self.channels[(channel_hash(line.0) % n) as usize]
            .reserve(Cycle(now), bytes)
            .get()
            + extra
    }

    /// A request of `lines` arriving at cycle `now`.
    pub fn request(
        &mut self,
        now: Cycle,
        from: Requester,
        seq: DispatchSeq,
        lines: &[LineAccess],
    ) -> LevelOutput {
        let now = now.get();
        let id = self.next_id;
        self.next_id += 1;
        let shift = self.cache.line_bytes().trailing_zeros();
        let mut out = LevelOutput::default();
        let mut p = PendingRequest {
            from,
            left: 0,
            ready: now,
            arrived: now,
        };
        let mut last = None;
        for l in lines {
            let line = LineAddr(l.line >> shift);
            if last == Some((line, l.write)) {
                continue; // the same line twice in a row: one access at this level
            }
            last = Some((line, l.write));
            if !l.write && self.mshr.is_pending(line) {
                self.cache.count_merged_miss(seq);
                self.stats.merged += 1;
                self.wait_for(id, line, &mut p);
                continue;
            }
            let (hit, victim) = self.cache.access(seq, line.0 << shift, l.write);
            if let Some(v) = victim {
                out.below.push(LineAccess {
                    line: v,
                    write: true,
                });
            }
            if hit || l.write {
                p.ready = p
                    .ready
                    .max(self.through_channel(now, line, self.hit_latency));
                continue;
            }
            if self.wait_for(id, line, &mut p) {
                out.below.push(LineAccess {
                    line: line.0 << shift,
                    write: false,
                });
            }
        }
        if p.left == 0 {
            self.answer(p, &mut out);
        } else {
            self.requests.insert(id, p);
        }
        out
    }

    /// Makes request `id` wait for `line`; true when a new fetch must go below.
    fn wait_for(&mut self, id: u64, line: LineAddr, p: &mut PendingRequest) -> bool {
        p.left += 1;
        match self.mshr.allocate(line, id) {
            MshrAllocation::New => true,
            MshrAllocation::Merged => false,
            MshrAllocation::Full(id) => {
                self.stats.mshr_stalls += 1;
                self.blocked.push_back((id, line));
                false
            }
        }
    }

    fn answer(&mut self, p: PendingRequest, out: &mut LevelOutput) {
        self.stats.answered += 1;
        self.stats.latency_cycles += p.ready - p.arrived;
        out.answers.push((p.from, Cycle(p.ready)));
    }

    /// The fills of `lines` (byte addresses) arrived at cycle `now`.
    pub fn filled(&mut self, now: Cycle, lines: &[u64]) -> LevelOutput {
        let now = now.get();
        let shift = self.cache.line_bytes().trailing_zeros();
        let mut out = LevelOutput::default();
        for &l in lines {
            let line = LineAddr(l >> shift);
            // A fill nobody waits for (a duplicate) has nothing to wake.
            let waiters = self.mshr.complete(line).unwrap_or_default();
            if waiters.is_empty() {
                continue;
            }
            let ready = self.through_channel(now, line, 0);
            for id in waiters {
                let Some(p) = self.requests.get_mut(&id) else {
                    continue;
                };
                p.left = p.left.saturating_sub(1);
                p.ready = p.ready.max(ready);
                if p.left == 0 {
                    if let Some(p) = self.requests.remove(&id) {
                        self.answer(p, &mut out);
                    }
                }
            }
        }
        while let Some(&(id, line)) = self.blocked.front() {
            match self.mshr.allocate(line, id) {
                MshrAllocation::New => out.below.push(LineAccess {
                    line: line.0 << shift,
                    write: false,
                }),
                MshrAllocation::Merged => {}
                MshrAllocation::Full(_) => break,
            }
            self.blocked.pop_front();
        }
        out
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

    fn timing() -> LevelTiming {
        LevelTiming {
            hit_latency: 10,
            channels: 1,
            channel_bytes_per_clock: 128,
            mshrs: 1,
            mshr_targets: 4,
        }
    }

    #[test]
    fn timed_hits_answer_after_latency_and_misses_after_their_fill() {
        let mut t =
            TimedLevel::new(LineCache::new(1024, 128, 2, "lru").unwrap(), &timing()).unwrap();
        let s = DispatchSeq(1);
        let from = |tag| Requester {
            port: 0,
            tag,
            reply: true,
        };
        let r = |line: u64| LineAccess { line, write: false };
        // Cold miss: goes below, no answer yet.
        let out = t.request(Cycle(100), from(1), s, &[r(0)]);
        assert_eq!(out.below, vec![r(0)]);
        assert!(out.answers.is_empty());
        // A second reader of the same line merges; a third line finds the one MSHR busy.
        let out = t.request(Cycle(101), from(2), s, &[r(0), r(128)]);
        assert!(out.below.is_empty() && out.answers.is_empty());
        // The fill wakes both waiters of line 0 and lets line 128 go below.
        let out = t.filled(Cycle(200), &[0]);
        assert_eq!(out.answers, vec![(from(1), Cycle(201))]);
        assert_eq!(out.below, vec![r(128)]);
        let out = t.filled(Cycle(300), &[128]);
        assert_eq!(out.answers, vec![(from(2), Cycle(301))]);
        // Now a hit: one channel slot (1 cycle for 128 B at 128 B/clk) plus 10.
        let out = t.request(Cycle(400), from(3), s, &[r(0)]);
        assert_eq!(out.answers, vec![(from(3), Cycle(411))]);
        // Back-to-back hits queue on the channel.
        let out = t.request(Cycle(400), from(4), s, &[r(0)]);
        assert_eq!(out.answers, vec![(from(4), Cycle(412))]);
        assert_eq!(t.stats().merged, 1);
        assert_eq!(t.stats().mshr_stalls, 1);
        let d = t.cache().flush(s);
        assert_eq!(d.counts, CacheCounts { hits: 2, misses: 3 });
    }
}

#[cfg(test)]
mod slicing_tests {
    use super::*;

    /// Slice 3 of 8 (4 KiB granules) holding 1 MiB (512 sets of 16 ways of 128 B: the
    /// set index covers address bits 7-15, among them the slice-selecting bits 12-14):
    /// its own 1 MiB of addresses fit.
    #[test]
    fn a_slice_uses_all_its_sets() {
        const SIZE: u64 = 1024 * 1024;
        let lines: Vec<LineAccess> = (0..SIZE / 128)
            .map(|i: u64| {
                let local = i * 128;
                let global = ((local / 4096) * 8 + 3) * 4096 + local % 4096;
                LineAccess { line: global, write: false }
            })
            .collect();
        let n = lines.len() as u64;
        let mut sliced = LineCache::new(SIZE, 128, 16, "lru").expect("config").sliced(4096, 8);
        let seq = DispatchSeq(1);
        sliced.apply(seq, &lines);
        sliced.apply(seq, &lines);
        let counts = sliced.flush(seq).counts;
        assert_eq!((counts.hits, counts.misses), (n, n), "the second pass hits everywhere");
        // Indexing the global address, the slice's lines share 1/8 of the sets: the
        // cyclic second pass misses under LRU.
        let mut global = LineCache::new(SIZE, 128, 16, "lru").expect("config");
        global.apply(seq, &lines);
        global.apply(seq, &lines);
        assert!(global.flush(seq).counts.hits < n / 4);
    }

    #[test]
    fn victims_come_back_as_global_addresses() {
        let mut s = Slicing {
            granule: 4096,
            slices: 8,
            index: None,
        };
        for addr in [
            3 * 4096u64,
            3 * 4096 + 128,
            11 * 4096 + 4000,
            (8 * 100 + 3) * 4096 + 64,
        ] {
            let local = s.local(addr);
            assert_eq!(s.global(local), addr);
        }
    }
}
