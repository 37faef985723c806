//! The lock-free tables the signal handlers read: watched ranges ([`WatchSlot`]) and the
//! per-thread record of a write in flight ([`Pending`]).
//!
//! **Architecture Invariant:** nothing here allocates or locks; every field is an atomic,
//! so the signal handlers may use any of it. Only `watch`/`unwatch` (under the registry
//! lock, outside handlers) move a slot between states; handlers only read the state and
//! count themselves in and out through `writers`.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// How many ranges can be watched at once (a process has one doorbell range per GPU).
pub(super) const MAX_WATCHES: usize = 128;

/// How many threads can be between a trapped write's fault and its single-step trap at
/// once. A thread that finds the table full yields and faults again.
pub(super) const MAX_PENDING: usize = 1024;

/// How many watched ranges one instruction's store can touch (a store straddling two
/// ranges; the rest is headroom).
pub(super) const MAX_SLOTS_PER_WRITE: usize = 4;

/// A slot nobody uses.
pub(super) const FREE: u32 = 0;
/// A slot being filled by `watch` (handlers ignore it).
pub(super) const FILLING: u32 = 1;
/// A watched range: writes to it are trapped.
pub(super) const ACTIVE: u32 = 2;
/// `unwatch` is waiting for the writes in flight; faults in the range retry until the
/// range is writable again.
pub(super) const UNWATCHING: u32 = 3;

/// One watched range.
pub(super) struct WatchSlot {
    /// [`FREE`], [`FILLING`], [`ACTIVE`] or [`UNWATCHING`].
    pub state: AtomicU32,
    /// Bumped by each `watch` of the slot, so a stale `WatchId` names nothing.
    pub generation: AtomicU32,
    /// First byte (page-aligned).
    pub start: AtomicUsize,
    /// One past the last byte (page-aligned).
    pub end: AtomicUsize,
    /// Threads that made the range writable and have not yet left (low 32 bits), and
    /// how many entered so far (high 32 bits, wrapping): see [`WRITER_IN`].
    pub writers: AtomicU64,
    /// A write completed since the notifier last looked.
    pub dirty: AtomicBool,
}

impl WatchSlot {
    const fn new() -> WatchSlot {
        WatchSlot {
            state: AtomicU32::new(FREE),
            generation: AtomicU32::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            writers: AtomicU64::new(0),
            dirty: AtomicBool::new(false),
        }
    }

    /// Threads in the range now.
    pub fn n_writers(&self) -> u32 {
        self.writers.load(Ordering::SeqCst) as u32
    }

    /// Whether `addr` is in this slot's range (whatever the state; callers check it).
    pub fn contains(&self, addr: usize) -> bool {
        let start = self.start.load(Ordering::Acquire);
        let end = self.end.load(Ordering::Acquire);
        start <= addr && addr < end
    }
}

/// Added to [`WatchSlot::writers`] by a thread entering; a thread leaving subtracts 1.
/// The entry count in the high half makes the last writer's "re-protect, then count
/// out" safe: if anyone entered (even and left) between its load and its
/// compare-exchange, the exchange fails and it re-protects again.
pub(super) const WRITER_IN: u64 = 1 | (1 << 32);

/// The watched ranges.
pub(super) static WATCHES: [WatchSlot; MAX_WATCHES] = [const { WatchSlot::new() }; MAX_WATCHES];

/// The slot whose range holds `addr` and is [`ACTIVE`] or [`UNWATCHING`].
pub(super) fn slot_of(addr: usize) -> Option<usize> {
    WATCHES.iter().position(|s| {
        let state = s.state.load(Ordering::SeqCst);
        (state == ACTIVE || state == UNWATCHING) && s.contains(addr)
    })
}

/// A thread's write in flight: the slots it made writable.
pub(super) struct Pending {
    /// The owning thread (0: free).
    pub tid: AtomicI32,
    /// How many entries of `slots` are used.
    pub n_slots: AtomicUsize,
    /// Indices into [`WATCHES`].
    pub slots: [AtomicUsize; MAX_SLOTS_PER_WRITE],
}

impl Pending {
    const fn new() -> Pending {
        Pending {
            tid: AtomicI32::new(0),
            n_slots: AtomicUsize::new(0),
            slots: [const { AtomicUsize::new(0) }; MAX_SLOTS_PER_WRITE],
        }
    }

    /// The slots recorded so far.
    pub fn slot_indices(&self) -> impl Iterator<Item = usize> + '_ {
        let n = self
            .n_slots
            .load(Ordering::Relaxed)
            .min(MAX_SLOTS_PER_WRITE);
        self.slots[..n].iter().map(|s| s.load(Ordering::Relaxed))
    }

    /// Whether `slot` is recorded.
    pub fn holds(&self, slot: usize) -> bool {
        self.slot_indices().any(|s| s == slot)
    }

    /// Whether no more slots can be recorded.
    pub fn is_full(&self) -> bool {
        self.n_slots.load(Ordering::Relaxed) >= MAX_SLOTS_PER_WRITE
    }

    /// Records `slot` (ignored when [full](Self::is_full)).
    pub fn push(&self, slot: usize) {
        let n = self.n_slots.load(Ordering::Relaxed);
        if n < MAX_SLOTS_PER_WRITE {
            self.slots[n].store(slot, Ordering::Relaxed);
            self.n_slots.store(n + 1, Ordering::Relaxed);
        }
    }
}

/// Writes in flight, one per thread at most.
pub(super) static PENDING: [Pending; MAX_PENDING] = [const { Pending::new() }; MAX_PENDING];

/// The calling thread's record, if it has one.
pub(super) fn pending_of(tid: i32) -> Option<&'static Pending> {
    PENDING
        .iter()
        .find(|p| p.tid.load(Ordering::Acquire) == tid)
}

/// Claims a free record for `tid`; `None` when all are taken.
pub(super) fn claim_pending(tid: i32) -> Option<&'static Pending> {
    PENDING.iter().find(|p| {
        if p.tid
            .compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            p.n_slots.store(0, Ordering::Relaxed);
            true
        } else {
            false
        }
    })
}

/// Frees a record claimed by [`claim_pending`].
pub(super) fn release_pending(p: &Pending) {
    p.n_slots.store(0, Ordering::Relaxed);
    p.tid.store(0, Ordering::Release);
}
