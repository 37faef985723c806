//! The board: what every partition publishes for the others while a segment runs, and
//! the claims through which one worker at a time runs a partition.
//!
//! Each field is a dense array of atomics indexed by partition (a horizon pass reads
//! all of them: eight partitions per cache line instead of one line each). Partitions
//! a worker usually runs are neighbours, so a line is mostly written from one core.
//!
//! - `claim`: even while the partition is free, odd while a worker runs it. Claiming
//!   is one compare-and-swap; releasing adds one. A pass reads it before and after
//!   reading the partition's `next` and `inbox_min`: unchanged and even means nobody
//!   ran the partition in between (a seqlock).
//! - `lb`: a lower bound on the time of every event the partition will still handle,
//!   raised only (see `engine::pass` for why this holds without a snapshot).
//! - `horizon`: events before it are safe to handle; raised by passes.
//! - `next`: the earliest event in the partition's queue when it last published.
//! - `inbox_min`: the earliest event posted to its inbox and not yet taken.
//! - `frontier`, `handled`: the time of its last handled event and its event count.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::engine::partition_state::PartitionState;
use crate::time::Tick;

/// What the partitions publish; see the module docs.
#[derive(Debug)]
pub(crate) struct Board {
    pub claim: Box<[AtomicU64]>,
    pub lb: Box<[AtomicU64]>,
    pub horizon: Box<[AtomicU64]>,
    pub next: Box<[AtomicU64]>,
    pub inbox_min: Box<[AtomicU64]>,
    pub frontier: Box<[AtomicU64]>,
    pub handled: Box<[AtomicU64]>,
}

fn column(values: impl Iterator<Item = u64>) -> Box<[AtomicU64]> {
    values.map(AtomicU64::new).collect()
}

impl Board {
    /// The board of `parts` between segments: nothing claimed or posted, every lower
    /// bound the partition's next event, no horizon yet (the segment's first pass
    /// decides them).
    pub fn new(parts: &[PartitionState]) -> Board {
        let next: Vec<u64> = parts.iter().map(|p| p.next_time().0).collect();
        Board {
            claim: column(parts.iter().map(|_| 0)),
            lb: column(next.iter().copied()),
            horizon: column(parts.iter().map(|_| 0)),
            next: column(next.iter().copied()),
            inbox_min: column(parts.iter().map(|_| u64::MAX)),
            frontier: column(parts.iter().map(|p| p.frontier.0)),
            handled: column(parts.iter().map(|p| p.emit.handled)),
        }
    }

    /// Partition `q`'s earliest pending event as published: its queue's or its inbox's.
    #[inline]
    pub fn pending(&self, q: usize) -> u64 {
        self.next[q].load(Ordering::Acquire).min(self.inbox_min[q].load(Ordering::Acquire))
    }

    /// Whether partition `q` is free and has an event before its horizon and `cap`.
    #[inline]
    pub fn ready(&self, q: usize, cap: u64) -> bool {
        self.claim[q].load(Ordering::Relaxed) & 1 == 0
            && self.pending(q) < self.horizon[q].load(Ordering::Acquire).min(cap)
    }

    /// Whether any partition is claimed. Called after setting the attention flag (see
    /// [`Parts::claim`]), a false answer means no worker runs a partition until the flag
    /// is cleared.
    pub fn any_claimed(&self) -> bool {
        self.claim.iter().any(|c| c.load(Ordering::SeqCst) & 1 == 1)
    }

    /// The latest time any partition reached.
    pub fn frontier(&self) -> Tick {
        Tick(self.frontier.iter().map(|f| f.load(Ordering::Relaxed)).max().unwrap_or(0))
    }

    /// Events handled, all partitions.
    pub fn handled(&self) -> u64 {
        self.handled.iter().map(|h| h.load(Ordering::Relaxed)).sum()
    }
}

/// The partitions of one segment, each reachable by one worker at a time through a
/// [`Claimed`].
pub(crate) struct Parts<'p> {
    ptr: *mut PartitionState,
    len: usize,
    /// Whether one thread runs the segment alone (claims need no atomic read-modify-write).
    solo: bool,
    _borrow: PhantomData<&'p mut [PartitionState]>,
}

// SAFETY: a partition's state is only reached through `Parts::claim`, whose
// compare-and-swap on the board's claim word lets one worker at a time have it (the
// word stays odd until the `Claimed` is dropped); `PartitionState` is `Send` (its
// components are), so handing it from thread to thread that way is sound.
unsafe impl Sync for Parts<'_> {}
// SAFETY: as above: `Parts` is a borrow of partitions that may move between threads.
unsafe impl Send for Parts<'_> {}

/// One worker's exclusive hold on a partition; dropping it releases the partition.
pub(crate) struct Claimed<'s> {
    pub q: usize,
    pub part: &'s mut PartitionState,
    word: &'s AtomicU64,
    /// The (odd) value of the claim word while held.
    held: u64,
}

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        // Only the holder changes an odd claim word: a store suffices.
        self.word.store(self.held + 1, Ordering::Release);
    }
}

impl<'p> Parts<'p> {
    /// The partitions of a segment run by one thread (`solo`) or several.
    pub fn new(parts: &'p mut [PartitionState], solo: bool) -> Parts<'p> {
        Parts { ptr: parts.as_mut_ptr(), len: parts.len(), solo, _borrow: PhantomData }
    }

    /// Claims partition `q` unless another worker has it or `attention` is set.
    ///
    /// The claim is taken (sequentially consistent) before `attention` is read, and a
    /// pass that stops the world sets `attention` before it reads every claim
    /// ([`Board::any_claimed`]): of the two, at least one sees the other, so a partition
    /// is never run while that pass believes none is.
    pub fn claim<'s>(&'s self, board: &'s Board, attention: &AtomicBool, q: usize) -> Option<Claimed<'s>> {
        assert!(q < self.len, "partition {q} of {}", self.len);
        let word = &board.claim[q];
        let v = word.load(Ordering::Relaxed);
        if v & 1 == 1 {
            return None;
        }
        if self.solo {
            // The only thread: nobody can claim in between.
            word.store(v + 1, Ordering::Relaxed);
        } else if word.compare_exchange(v, v + 1, Ordering::SeqCst, Ordering::Relaxed).is_err() {
            return None;
        }
        if attention.load(Ordering::SeqCst) {
            word.store(v + 2, Ordering::Release);
            return None;
        }
        // SAFETY: `q` is in bounds (asserted) and the claim word just went from even to
        // odd by this thread (atomically, or as the segment's only thread), so no other
        // `Claimed` for `q` exists until this one drops.
        let part = unsafe { &mut *self.ptr.add(q) };
        Some(Claimed { q, part, word, held: v + 1 })
    }
}
