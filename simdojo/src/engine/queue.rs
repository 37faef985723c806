//! The per-partition pending-event queue: a self-tuning calendar queue.

use crate::engine::order::EventKey;
use crate::ids::{ComponentId, PortIdx};
use crate::registry::Payload;

/// What an event does when it is handled.
#[derive(Debug)]
pub(crate) enum Body {
    /// A message for `port` of the target.
    Message { port: PortIdx, payload: Payload },
    /// A timer of the target fired.
    Timer { token: u64 },
    /// An input from outside the simulation.
    External { payload: Payload },
}

/// A pending event.
#[derive(Debug)]
pub(crate) struct Pending {
    pub key: EventKey,
    pub target: ComponentId,
    pub body: Body,
}

/// An event in the slab, linked into a bucket list.
#[derive(Debug)]
struct Node {
    ev: Option<Pending>,
    next: u32,
}

const NIL: u32 = u32::MAX;

/// Asks the processor to start loading `r`'s cache line; a hint with no effect on
/// results.
#[inline(always)]
pub(crate) fn prefetch<T: ?Sized>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetching never faults and has no architectural effect; SSE is
        // part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// A min-queue of pending events ordered by [`EventKey`].
///
/// A self-tuning calendar queue (timing wheel). The wheel covers
/// `[start, start + buckets * width)`; an event goes into the bucket of its time, or
/// into the `overflow` list beyond the wheel. Handing out events walks the buckets in
/// time order (a bitmap skips empty ones) and sorts each bucket's few events into
/// `now`. When the walk reaches the wheel's end, the wheel is rebuilt from the
/// overflow with a bucket width fitted to the pending events' spread (about one per
/// bucket). Push is O(1), pop O(1) on average.
///
/// Events live in one slab and buckets are singly linked lists through it, so the
/// bucket heads fit in the first-level cache and a freed slot (the event just
/// handled) is the next one reused: the memory an event loop touches stays small.
#[derive(Debug)]
pub(crate) struct EventQueue {
    nodes: Vec<Node>,
    free: Vec<u32>,
    heads: Vec<u32>,
    /// Bit i set iff bucket i is not empty.
    occupied: Vec<u64>,
    /// log2 of the bucket width in ticks.
    shift: u32,
    /// Time at which bucket 0 starts.
    start: u64,
    /// The bucket `now` was filled from; buckets before it are empty.
    cur: usize,
    /// Events of bucket `cur` (and any earlier time), sorted by key, smallest last.
    now: Vec<(EventKey, u32)>,
    /// Events beyond the wheel, with their count and smallest time.
    overflow: u32,
    overflow_len: usize,
    overflow_min: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

const MIN_BUCKETS: usize = 64;

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            nodes: Vec::new(),
            free: Vec::new(),
            heads: vec![NIL; MIN_BUCKETS],
            occupied: vec![0; MIN_BUCKETS / 64],
            shift: 0,
            start: 0,
            cur: 0,
            now: Vec::new(),
            overflow: NIL,
            overflow_len: 0,
            overflow_min: u64::MAX,
        }
    }

    #[inline]
    fn bucket_start(&self, i: usize) -> u64 {
        self.start.saturating_add((i as u64) << self.shift)
    }

    #[inline]
    fn key_of(&self, idx: u32) -> EventKey {
        // Linked and `now` indices always refer to filled nodes.
        self.nodes[idx as usize].ev.as_ref().map_or(EventKey::new(crate::time::Tick::MAX, 0, 0), |e| e.key)
    }

    #[inline]
    fn insert_now(&mut self, key: EventKey, idx: u32) {
        let pos = self.now.partition_point(|s| s.0 > key);
        self.now.insert(pos, (key, idx));
    }

    /// Links the filled node `idx` into the right place.
    #[inline]
    fn place(&mut self, key: EventKey, idx: u32) {
        let t = key.time.0;
        if t < self.bucket_start(self.cur + 1) {
            self.insert_now(key, idx);
            return;
        }
        let rel = (t - self.start) >> self.shift;
        if rel < self.heads.len() as u64 {
            let i = rel as usize;
            self.nodes[idx as usize].next = self.heads[i];
            self.heads[i] = idx;
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.overflow_min = self.overflow_min.min(t);
            self.nodes[idx as usize].next = self.overflow;
            self.overflow = idx;
            self.overflow_len += 1;
        }
    }

    #[inline]
    pub fn push(&mut self, ev: Pending) {
        let key = ev.key;
        let idx = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize].ev = Some(ev);
                i
            }
            None => {
                // A partition holding 2^32 pending events has long run out of memory.
                let i = u32::try_from(self.nodes.len()).expect("pending events exceed u32");
                self.nodes.push(Node { ev: Some(ev), next: NIL });
                i
            }
        };
        self.place(key, idx);
    }

    /// The first non-empty bucket after `cur`, if any.
    fn next_occupied(&self) -> Option<usize> {
        let from = self.cur + 1;
        let mut w = from / 64;
        if w >= self.occupied.len() {
            return None;
        }
        let mut bits = self.occupied[w] & (!0u64).checked_shl((from % 64) as u32).unwrap_or(0);
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w >= self.occupied.len() {
                return None;
            }
            bits = self.occupied[w];
        }
    }

    /// Refits the wheel to the overflow's events and distributes them.
    fn rebuild(&mut self) {
        let n = self.overflow_len.max(1);
        let min = self.overflow_min;
        let mut max = min;
        let mut i = self.overflow;
        while i != NIL {
            max = max.max(self.key_of(i).time.0);
            i = self.nodes[i as usize].next;
        }
        let width = ((max - min) / n as u64).max(1);
        self.shift = 63 - width.leading_zeros();
        let n_buckets = (2 * n).next_power_of_two().clamp(MIN_BUCKETS, 1 << 21);
        if n_buckets != self.heads.len() {
            self.heads = vec![NIL; n_buckets];
            self.occupied = vec![0; n_buckets / 64];
        }
        self.start = min >> self.shift << self.shift;
        self.cur = 0;
        let mut i = std::mem::replace(&mut self.overflow, NIL);
        self.overflow_len = 0;
        self.overflow_min = u64::MAX;
        while i != NIL {
            let next = self.nodes[i as usize].next;
            let key = self.key_of(i);
            self.place(key, i);
            i = next;
        }
    }

    /// Fills `now` with the next bucket's events if that bucket starts before
    /// `horizon`. Returns false if there is none.
    fn advance(&mut self, horizon: u64) -> bool {
        loop {
            if let Some(b) = self.next_occupied() {
                if self.bucket_start(b) >= horizon {
                    return false;
                }
                self.cur = b;
                self.occupied[b / 64] &= !(1 << (b % 64));
                let mut i = std::mem::replace(&mut self.heads[b], NIL);
                while i != NIL {
                    self.now.push((self.key_of(i), i));
                    i = self.nodes[i as usize].next;
                }
                if self.now.len() > 1 {
                    self.now.sort_unstable_by_key(|s| std::cmp::Reverse(s.0));
                }
                // The next bucket's first event will be wanted soon: start loading it.
                if let Some(n) = self.next_occupied() {
                    prefetch(&self.nodes[self.heads[n] as usize]);
                }
                return true;
            }
            if self.overflow == NIL || self.overflow_min >= horizon {
                return false;
            }
            self.rebuild();
            if !self.now.is_empty() {
                return true;
            }
        }
    }

    /// Removes and returns the smallest event if its time is before `horizon`.
    /// Nothing at or after the horizon is reorganized, so events that arrive later
    /// from other partitions (all at or after the horizon) still fit the wheel.
    #[inline]
    pub fn pop_before(&mut self, horizon: u64) -> Option<Pending> {
        if self.now.is_empty() && !self.advance(horizon) {
            return None;
        }
        let &(key, idx) = self.now.last()?;
        if key.time.0 >= horizon {
            return None;
        }
        self.now.pop();
        self.free.push(idx);
        self.nodes[idx as usize].ev.take()
    }

    /// The target of the event `pop_before` would hand out next, if it is known
    /// without reorganizing.
    #[inline]
    pub fn peek_target(&self) -> Option<ComponentId> {
        let &(_, idx) = self.now.last()?;
        self.nodes[idx as usize].ev.as_ref().map(|e| e.target)
    }

    /// The time of the earliest event, if any.
    pub fn min_time(&self) -> Option<u64> {
        if let Some(s) = self.now.last() {
            return Some(s.0.time.0);
        }
        if let Some(b) = self.next_occupied() {
            let mut i = self.heads[b];
            let mut min = u64::MAX;
            while i != NIL {
                min = min.min(self.key_of(i).time.0);
                i = self.nodes[i as usize].next;
            }
            return Some(min);
        }
        (self.overflow != NIL).then_some(self.overflow_min)
    }

    /// Removes every event, in no particular order.
    pub fn take_all(&mut self) -> Vec<Pending> {
        let out = self.nodes.iter_mut().filter_map(|n| n.ev.take()).collect();
        *self = EventQueue::new();
        out
    }

    /// Visits every pending event, in no particular order.
    pub fn for_each(&self, mut f: impl FnMut(EventKey, ComponentId, &Body)) {
        for n in &self.nodes {
            if let Some(ev) = &n.ev {
                f(ev.key, ev.target, &ev.body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Tick;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        /// Push an event `delta` ticks after the last handled time, from `source`.
        Push(u64, u32),
        /// Pop with a horizon `delta` ticks after the last handled time.
        Pop(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (prop_oneof![0u64..4, 0u64..3000, 0u64..1_000_000], 0u32..6).prop_map(|(d, s)| Op::Push(d, s)),
            2 => prop_oneof![Just(u64::MAX), 0u64..2000].prop_map(Op::Pop),
        ]
    }

    proptest! {
        /// The queue hands out exactly what a sorted model would, for pushes that
        /// respect causality (never before the last handled time) and any horizons.
        #[test]
        fn matches_a_sorted_model(ops in proptest::collection::vec(op(), 0..600)) {
            let mut q = EventQueue::new();
            let mut model = std::collections::BTreeSet::new();
            let mut last = 0u64;
            let mut seq = 0u64;
            for op in ops {
                match op {
                    Op::Push(d, src) => {
                        let key = EventKey::new(Tick(last.saturating_add(d)), src, seq);
                        seq += 1;
                        q.push(Pending { key, target: ComponentId(src), body: Body::Timer { token: seq } });
                        model.insert(key);
                    }
                    Op::Pop(d) => {
                        let h = last.saturating_add(d);
                        prop_assert_eq!(q.min_time(), model.first().map(|k| k.time.0));
                        let expect = model.first().copied().filter(|k| k.time.0 < h);
                        let got = q.pop_before(h);
                        prop_assert_eq!(got.as_ref().map(|p| p.key), expect);
                        if let Some(k) = expect {
                            model.remove(&k);
                            last = k.time.0;
                            prop_assert_eq!(got.map(|p| p.target), Some(ComponentId(k.source())));
                        }
                    }
                }
            }
            while let Some(k) = model.pop_first() {
                prop_assert_eq!(q.pop_before(u64::MAX).map(|p| p.key), Some(k));
            }
            prop_assert!(q.pop_before(u64::MAX).is_none());
        }
    }
}
