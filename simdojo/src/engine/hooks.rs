//! Periodic synchronisation hooks: work a shared resource does at fixed boundaries of
//! simulated time, while no partition handles an event.
//!
//! A resource shared by several partitions (for example a memory whose stores become
//! visible to other agents only at the end of a window) registers a [`SyncHook`] with a
//! period Q ([`crate::component::BuildContext::sync_hook`]). The engine then caps every
//! partition's horizon at the next multiple of Q after the last boundary it synchronised,
//! and at that boundary B, once every partition has handled every event before B and
//! before any handles one at or after B, it runs the hook's [`SyncHook::sync`] once per
//! share (`share i of n`, n the run's worker count: with one worker thread the n calls
//! run one after the other on it), and lets the partitions go on only when every share
//! is done. A boundary whose window left the hook nothing to do ([`SyncHook::pending`]
//! false) costs no call, and empty simulated time is skipped: the next boundary is then
//! the first one after the earliest pending event.
//!
//! The boundaries at which `sync` is called depend only on simulated time (on when the
//! resource had pending work), never on the partitioning or the worker count. The hook
//! also runs, on the calling thread, when a run stops ([`SyncPoint::End`] or
//! [`SyncPoint::Pause`]) and before a checkpoint ([`SyncPoint::Checkpoint`]) if it has
//! pending work.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::time::Tick;

/// Why a hook runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncPoint {
    /// A multiple of the hook's period: every event before it is handled, none at or
    /// after it.
    Boundary,
    /// The run stopped and may be continued (`run_until` reached its time, a step, no
    /// events left): every event before the tick is handled, none at or after it.
    Pause,
    /// The run ended (end time, exit, error, interruption).
    End,
    /// A checkpoint is about to be taken.
    Checkpoint,
}

/// Which part of a synchronisation a call does: `index` of `count` (the run's workers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SyncShare {
    /// This call's share, `0..count`.
    pub index: usize,
    /// The number of shares; the same for every call of a run.
    pub count: usize,
}

/// A shared resource's periodic synchronisation (see the module docs).
pub trait SyncHook: Send + Sync {
    /// The period Q: boundaries are its multiples. At least one tick; read once, when
    /// the simulation is built.
    fn period(&self) -> Tick;

    /// Whether the resource has work for the next synchronisation. Asked by one thread
    /// once every partition has handled every event before the boundary; what the
    /// partitions did before (on any thread) is visible to it.
    fn pending(&self) -> bool;

    /// Does share `share` of the synchronisation at tick `at`. The shares of one
    /// synchronisation run at the same time on different threads (or one after the
    /// other on one), while no partition handles an event.
    fn sync(&self, at: Tick, point: SyncPoint, share: SyncShare);
}

/// A registered hook and the last boundary it was synchronised at.
struct Registered {
    hook: Arc<dyn SyncHook>,
    period: u64,
    /// A multiple of `period`: no event before it will be handled, and the hook has
    /// nothing pending from before it. Events may run up to `synced + period`.
    synced: AtomicU64,
}

/// The hooks of a simulation and the boundary synchronisation in progress.
#[derive(Default)]
pub(crate) struct Hooks {
    list: Vec<Registered>,
    /// The number of shares of every synchronisation (the run's workers).
    shares: usize,
    /// Rounds of boundary synchronisation started and finished; a round is in progress
    /// while they differ.
    started: AtomicU64,
    finished: AtomicU64,
    /// The boundary of the round in progress, the hooks it synchronises (a bit each)
    /// and the shares not yet done.
    at: AtomicU64,
    due: AtomicU64,
    left: AtomicUsize,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").field("hooks", &self.list.len()).field("shares", &self.shares).finish()
    }
}

/// The most hooks a simulation may register (the due set of a round is one word).
pub const MAX_SYNC_HOOKS: usize = 64;

impl Hooks {
    /// The hooks `list` (distinct, at most [`MAX_SYNC_HOOKS`], periods of at least one
    /// tick: checked by the caller), synchronised by `shares` shares, starting at `now`.
    pub fn new(list: Vec<Arc<dyn SyncHook>>, shares: usize, now: Tick) -> Hooks {
        debug_assert!(list.len() <= MAX_SYNC_HOOKS);
        let list = list
            .into_iter()
            .map(|hook| {
                let period = hook.period().0.max(1);
                Registered { hook, period, synced: AtomicU64::new(now.0 / period * period) }
            })
            .collect();
        Hooks { list, shares: shares.max(1), ..Hooks::default() }
    }

    /// Rounds of boundary synchronisation finished so far.
    pub fn rounds(&self) -> u64 {
        self.finished.load(Ordering::Acquire)
    }

    /// When input from outside the simulation, arriving with every partition at or
    /// before `frontier`, enters: at `frontier`, but never before a boundary a hook
    /// synchronised (an event there would store into a window already folded: a kernel
    /// it launched could complete before its stores are visible to the host). While the
    /// run is idle no hook synchronises past the frontier (see [`Hooks::advance`] and
    /// `exec::publish`), so input then enters at the frontier whenever it arrives.
    pub fn input_entry(&self, frontier: Tick) -> Tick {
        self.list.iter().fold(frontier, |at, r| at.max(Tick(r.synced.load(Ordering::Acquire))))
    }

    /// Whether a round of boundary synchronisation is in progress.
    #[inline]
    pub fn in_round(&self) -> bool {
        self.started.load(Ordering::Acquire) != self.finished.load(Ordering::Acquire)
    }

    /// Called by a pass (one at a time) with `low`, a lower bound of every event any
    /// partition will still handle. Skips the boundaries of hooks with nothing pending
    /// that every partition has passed, starts a round for those with something pending
    /// (returning true when it did), and returns the tick nothing may run past.
    ///
    /// With no event left anywhere (`low` is `Tick::MAX`) nothing is synchronised: the
    /// run is waiting for input or about to stop (a stop flushes the hooks). A round
    /// there would close the window holding the present, and input arriving after it
    /// would enter at its end instead of at the present: simulated time would depend
    /// on whether the input came before or after the round, that is on wall-clock time.
    pub fn advance(&self, low: Tick) -> (Tick, bool) {
        if self.list.is_empty() {
            return (Tick::MAX, false);
        }
        let mut cap = u64::MAX;
        if self.in_round() || low == Tick::MAX {
            for r in &self.list {
                cap = cap.min(r.synced.load(Ordering::Acquire).saturating_add(r.period));
            }
            return (Tick(cap), false);
        }
        let mut due = 0u64;
        let mut at = u64::MAX;
        for (i, r) in self.list.iter().enumerate() {
            let synced = r.synced.load(Ordering::Acquire);
            let boundary = synced.saturating_add(r.period);
            if low.0 >= boundary {
                if r.hook.pending() {
                    due |= 1 << i;
                    at = at.min(boundary);
                } else {
                    // Nothing happened before `low` that the hook must see: skip to the
                    // window holding `low` (empty time costs no boundary).
                    r.synced.store(low.0 / r.period * r.period, Ordering::Release);
                }
            }
            cap = cap.min(r.synced.load(Ordering::Relaxed).saturating_add(r.period));
        }
        if due == 0 {
            return (Tick(cap), false);
        }
        // Hooks due at a later boundary than the earliest wait for their own round.
        for (i, r) in self.list.iter().enumerate() {
            if due & (1 << i) != 0 && r.synced.load(Ordering::Relaxed).saturating_add(r.period) != at {
                due &= !(1 << i);
            }
        }
        self.at.store(at, Ordering::Relaxed);
        self.due.store(due, Ordering::Relaxed);
        self.left.store(self.shares, Ordering::Relaxed);
        self.started.fetch_add(1, Ordering::AcqRel);
        (Tick(cap), true)
    }

    /// Runs the shares of the round in progress that belong to thread `thread` of
    /// `threads` (shares `thread`, `thread + threads`, ...) unless it ran them already
    /// (`served` is the last round it served). Returns whether it ran any; the thread
    /// that finishes a round ends it (the hooks' boundaries advance).
    pub fn serve(&self, served: &mut u64, thread: usize, threads: usize) -> bool {
        let round = self.started.load(Ordering::Acquire);
        if round == *served || round == self.finished.load(Ordering::Acquire) {
            return false;
        }
        *served = round;
        let at = Tick(self.at.load(Ordering::Relaxed));
        let due = self.due.load(Ordering::Relaxed);
        let mut mine = 0;
        for index in (thread..self.shares).step_by(threads.max(1)) {
            for (i, r) in self.list.iter().enumerate() {
                if due & (1 << i) != 0 {
                    r.hook.sync(at, SyncPoint::Boundary, SyncShare { index, count: self.shares });
                }
            }
            mine += 1;
        }
        if mine > 0 && self.left.fetch_sub(mine, Ordering::AcqRel) == mine {
            for (i, r) in self.list.iter().enumerate() {
                if due & (1 << i) != 0 {
                    r.synced.store(at.0, Ordering::Release);
                }
            }
            self.finished.store(round, Ordering::Release);
        }
        mine > 0
    }

    /// Runs every share of every hook with pending work on this thread, at `at` (a
    /// stop or a checkpoint; no round is in progress then).
    pub fn flush(&self, at: Tick, point: SyncPoint) {
        for r in &self.list {
            if r.hook.pending() {
                for index in 0..self.shares {
                    r.hook.sync(at, point, SyncShare { index, count: self.shares });
                }
            }
        }
    }
}
