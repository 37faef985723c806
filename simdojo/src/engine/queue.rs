//! The per-partition pending-event queue: a self-tuning calendar queue.

use crate::component::Event;
use crate::engine::order::EventKey;
use crate::ids::ComponentId;

/// A pending event: what the target will be handed (a timer's `id` is its key's
/// sequence number), and when.
#[derive(Debug)]
pub(crate) struct Pending {
    pub key: EventKey,
    pub target: ComponentId,
    pub body: Event,
}

/// An event in the slab, linked into a bucket list (or, when `body` is `None`, into
/// the free list).
#[derive(Debug)]
struct Node {
    key: EventKey,
    target: ComponentId,
    next: u32,
    body: Option<Event>,
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
/// overflow with a bucket width fitted to the pending events' density near the front
/// (four to eight per bucket). Push is O(1), pop O(1) on average.
///
/// Events live in one slab and buckets are singly linked lists through it; free slots
/// form a list through the same links, so the slot just handled is the next one
/// reused and the memory an event loop touches stays small.
#[derive(Debug)]
pub(crate) struct EventQueue {
    nodes: Vec<Node>,
    /// Head of the list of free slots.
    free: u32,
    heads: Vec<u32>,
    /// Bit i set iff bucket i is not empty.
    occupied: Vec<u64>,
    /// log2 of the bucket width in ticks.
    shift: u32,
    /// Time at which bucket 0 starts.
    start: u64,
    /// The bucket `now` was filled from; buckets before it are empty.
    cur: usize,
    /// Where bucket `cur + 1` starts: earlier events go straight into `now`.
    now_end: u64,
    /// Events of bucket `cur` (and any earlier time), sorted by key, smallest first;
    /// those before `head` have been handed out. A push into the current bucket, most
    /// often later than everything pending (a cache answering thousands of waves in
    /// the same cycle), lands at or near the end, and one earlier than everything
    /// takes the slot before `head`: neither shifts the bucket.
    now: Vec<(EventKey, u32)>,
    /// The next entry of `now` to hand out.
    head: usize,
    /// The next node of the following bucket's list to prefetch: each pop loads one
    /// more of them, so the list is in cache when its bucket is reached, instead of
    /// one cache miss per event while the list is walked.
    ahead: u32,
    /// Events beyond the wheel, with their count and smallest time.
    overflow: u32,
    overflow_len: usize,
    overflow_min: u64,
    /// The overflow's times while the wheel is refitted (kept, so refits allocate only
    /// when the queue holds more events than ever before).
    times: Vec<u64>,
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
            free: NIL,
            heads: vec![NIL; MIN_BUCKETS],
            occupied: vec![0; MIN_BUCKETS / 64],
            shift: 0,
            start: 0,
            cur: 0,
            now_end: 1,
            now: Vec::new(),
            head: 0,
            ahead: NIL,
            overflow: NIL,
            overflow_len: 0,
            overflow_min: u64::MAX,
            times: Vec::new(),
        }
    }

    #[inline]
    fn bucket_start(&self, i: usize) -> u64 {
        self.start.saturating_add((i as u64) << self.shift)
    }

    /// Makes bucket `b` the current one.
    #[inline]
    fn set_cur(&mut self, b: usize) {
        self.cur = b;
        self.now_end = self.bucket_start(b + 1);
    }

    /// Out of line: most pushes go to a later bucket.
    #[inline(never)]
    fn insert_now(&mut self, key: EventKey, idx: u32) {
        // Entries already handed out are dropped once they are the larger half, so a
        // bucket that keeps receiving events while it is handled (a component
        // rescheduling itself every tick inside one wide bucket) stays the size of
        // what is pending; the moves are paid for by the pops that made the half.
        if self.head >= 64 && self.head * 2 >= self.now.len() {
            self.now.drain(..self.head);
            self.head = 0;
        }
        let pos = self.head + self.now[self.head..].partition_point(|s| s.0 < key);
        if pos == self.head && self.head > 0 {
            self.head -= 1;
            self.now[self.head] = (key, idx);
        } else {
            self.now.insert(pos, (key, idx));
        }
    }

    /// Whether every event of the current bucket has been handed out.
    #[inline(always)]
    fn now_is_empty(&self) -> bool {
        self.head == self.now.len()
    }

    /// Links the filled node `idx` into the right place.
    #[inline(always)]
    fn place(&mut self, key: EventKey, idx: u32) {
        let t = key.time.0;
        if t < self.now_end {
            self.insert_now(key, idx);
            return;
        }
        let i = ((t - self.start) >> self.shift) as usize;
        if let Some(head) = self.heads.get_mut(i) {
            self.nodes[idx as usize].next = *head;
            *head = idx;
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.overflow_min = self.overflow_min.min(t);
            self.nodes[idx as usize].next = self.overflow;
            self.overflow = idx;
            self.overflow_len += 1;
        }
    }

    #[inline(always)]
    pub fn push(&mut self, ev: Pending) {
        let Pending { key, target, body } = ev;
        let idx = self.free;
        if let Some(node) = self.nodes.get_mut(idx as usize) {
            self.free = node.next;
            node.key = key;
            node.target = target;
            node.body = Some(body);
        } else {
            self.grow(key, target, body);
            return;
        }
        self.place(key, idx);
    }

    /// Pushes into a new slot (the free list is empty).
    #[inline(never)]
    fn grow(&mut self, key: EventKey, target: ComponentId, body: Event) {
        // A partition holding 2^32 pending events has long run out of memory.
        let idx = u32::try_from(self.nodes.len()).ok().filter(|&i| i != NIL).expect("pending events exceed u32");
        self.nodes.push(Node { key, target, next: NIL, body: Some(body) });
        self.place(key, idx);
    }

    /// The first non-empty bucket after `cur`, if any.
    #[inline]
    fn next_occupied(&self) -> Option<usize> {
        let from = self.cur + 1;
        let mut w = from / 64;
        let mut bits = *self.occupied.get(w)? & (!0u64).checked_shl((from % 64) as u32).unwrap_or(0);
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.occupied.get(w)?;
        }
    }

    /// Refits the wheel to the overflow's events and distributes them.
    fn rebuild(&mut self) {
        let n = self.overflow_len.max(1);
        let min = self.overflow_min;
        // The width follows the density of the earliest events (those handled next),
        // not the whole spread, which a long tail of late events would stretch: the
        // time by which a quarter of the events are due, over their count, is the
        // spacing of events at the front. Buckets of four to eight events (the width
        // is rounded down to a power of two) measured fastest on PHOLD: sorting a few
        // events costs less than walking to the next bucket.
        let mut times = std::mem::take(&mut self.times);
        times.clear();
        let mut i = self.overflow;
        while i != NIL {
            times.push(self.nodes[i as usize].key.time.0);
            i = self.nodes[i as usize].next;
        }
        let quarter = (times.len() / 4).max(1).min(times.len().saturating_sub(1));
        let q_time = if times.is_empty() { min } else { *times.select_nth_unstable(quarter).1 };
        self.times = times;
        let width = ((q_time - min) * 8 / quarter.max(1) as u64).max(1);
        self.shift = 63 - width.leading_zeros();
        let n_buckets = (2 * n).next_power_of_two().clamp(MIN_BUCKETS, 1 << 21);
        if n_buckets != self.heads.len() {
            // Resized in place: the vectors keep the largest capacity they ever had, so
            // a bucket count that moves back and forth does not allocate each time.
            self.heads.clear();
            self.heads.resize(n_buckets, NIL);
            self.occupied.clear();
            self.occupied.resize(n_buckets / 64, 0);
        }
        self.start = min >> self.shift << self.shift;
        self.set_cur(0);
        let mut i = std::mem::replace(&mut self.overflow, NIL);
        self.overflow_len = 0;
        self.overflow_min = u64::MAX;
        while i != NIL {
            let next = self.nodes[i as usize].next;
            let key = self.nodes[i as usize].key;
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
                self.set_cur(b);
                self.occupied[b / 64] &= !(1 << (b % 64));
                let mut i = std::mem::replace(&mut self.heads[b], NIL);
                self.now.clear();
                self.head = 0;
                while i != NIL {
                    let node = &self.nodes[i as usize];
                    self.now.push((node.key, i));
                    i = node.next;
                }
                if self.now.len() > 1 {
                    self.now.sort_unstable_by_key(|s| s.0);
                }
                // The next bucket's events will be wanted soon: start loading its first
                // one; the pops of this bucket walk on through its list.
                self.ahead = self.next_occupied().map_or(NIL, |n| self.heads[n]);
                if let Some(node) = self.nodes.get(self.ahead as usize) {
                    prefetch(node);
                }
                return true;
            }
            if self.overflow == NIL || self.overflow_min >= horizon {
                return false;
            }
            self.rebuild();
            if !self.now_is_empty() {
                return true;
            }
        }
    }

    /// Removes and returns the smallest event if its time is before `horizon`.
    /// Nothing at or after the horizon is reorganized, so events that arrive later
    /// from other partitions (all at or after the horizon) still fit the wheel.
    #[inline(always)]
    pub fn pop_before(&mut self, horizon: u64) -> Option<Pending> {
        if self.now_is_empty() && !self.advance(horizon) {
            return None;
        }
        let &(key, idx) = self.now.get(self.head)?;
        if key.time.0 >= horizon {
            return None;
        }
        self.head += 1;
        // One step of prefetching along the next bucket (a hint: any index will do).
        if let Some(node) = self.nodes.get(self.ahead as usize) {
            self.ahead = node.next;
            if let Some(next) = self.nodes.get(node.next as usize) {
                prefetch(next);
            }
        }
        let node = &mut self.nodes[idx as usize];
        let body = node.body.take()?;
        node.next = self.free;
        self.free = idx;
        Some(Pending { key, target: node.target, body })
    }

    /// Removes the earliest event if `dead` says it is one (a cancelled timer), so the
    /// queue's minimum is a live event's time; returns whether it removed one. It may
    /// bring the next bucket into the current one (events that arrive earlier later
    /// still go before it, see `place`).
    pub fn pop_if_dead(&mut self, dead: impl FnOnce(ComponentId, &Event) -> bool) -> bool {
        if self.now_is_empty() && !self.advance(u64::MAX) {
            return false;
        }
        let Some(&(key, idx)) = self.now.get(self.head) else { return false };
        let node = &self.nodes[idx as usize];
        match &node.body {
            Some(body) if dead(node.target, body) => self.pop_before(key.time.0.saturating_add(1)).is_some(),
            _ => false,
        }
    }

    /// The target of the event `pop_before` would hand out next, if it is known
    /// without reorganizing.
    #[inline(always)]
    pub fn peek_target(&self) -> Option<ComponentId> {
        let &(_, idx) = self.now.get(self.head)?;
        Some(self.nodes[idx as usize].target)
    }

    /// The time of the earliest event, if any.
    pub fn min_time(&self) -> Option<u64> {
        if let Some(s) = self.now.get(self.head) {
            return Some(s.0.time.0);
        }
        if let Some(b) = self.next_occupied() {
            let mut i = self.heads[b];
            let mut min = u64::MAX;
            while i != NIL {
                min = min.min(self.nodes[i as usize].key.time.0);
                i = self.nodes[i as usize].next;
            }
            return Some(min);
        }
        (self.overflow != NIL).then_some(self.overflow_min)
    }

    /// Removes every event, in no particular order.
    pub fn take_all(&mut self) -> Vec<Pending> {
        let out = self
            .nodes
            .iter_mut()
            .filter_map(|n| n.body.take().map(|body| Pending { key: n.key, target: n.target, body }))
            .collect();
        *self = EventQueue::new();
        out
    }

    /// Visits every pending event, in no particular order.
    pub fn for_each(&self, mut f: impl FnMut(EventKey, ComponentId, &Event)) {
        for n in &self.nodes {
            if let Some(body) = &n.body {
                f(n.key, n.target, body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::TimerId;
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
                        q.push(Pending { key, target: ComponentId(src), body: Event::Timer { id: TimerId(seq), token: seq } });
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

        /// The same with bursts: many events at a few instants, pushed while the
        /// instant is being handled, so the current bucket grows long and pushes
        /// land at its end, in its middle and before its head.
        #[test]
        fn matches_a_sorted_model_in_bursts(
            bursts in proptest::collection::vec((0u64..3, 1usize..120, 0u32..400), 1..40),
        ) {
            let mut q = EventQueue::new();
            let mut model = std::collections::BTreeSet::new();
            let (mut last, mut seq) = (0u64, 0u64);
            for (delta, pushes, src) in bursts {
                for j in 0..pushes {
                    let src = (src + j as u32 * 7) % 400;
                    let key = EventKey::new(Tick(last + delta + (j as u64 % 2)), src, seq);
                    seq += 1;
                    q.push(Pending { key, target: ComponentId(src), body: Event::Timer { id: TimerId(seq), token: seq } });
                    model.insert(key);
                }
                // Handle a third of what is pending, then push more at the same times.
                for _ in 0..model.len() / 3 {
                    let k = model.pop_first().unwrap();
                    // Known only once the bucket is sorted; then it is the right one.
                    if let Some(t) = q.peek_target() {
                        prop_assert_eq!(t, ComponentId(k.source()));
                    }
                    prop_assert_eq!(q.pop_before(u64::MAX).map(|p| p.key), Some(k));
                    last = k.time.0;
                }
                prop_assert_eq!(q.min_time(), model.first().map(|k| k.time.0));
            }
            while let Some(k) = model.pop_first() {
                prop_assert_eq!(q.pop_before(u64::MAX).map(|p| p.key), Some(k));
            }
            prop_assert!(q.pop_before(u64::MAX).is_none());
        }
    }
}
