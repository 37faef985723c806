//! The epoch loop: conservative synchronization of partitions on worker threads.
//!
//! One worker thread per partition. Each epoch:
//! 1. read every partition's record of the previous epoch (double-buffered by epoch
//!    parity, so nobody overwrites a record another worker may still read);
//! 2. move the message batches other partitions sent into the own queue;
//! 3. decide, from the records alone, whether to stop and each partition's horizon
//!    (every worker computes the same decision: no coordinator);
//! 4. handle own events before the horizon;
//! 5. publish the own record, hand the batches for other partitions to their inboxes
//!    (lock-free `SegQueue`s, one push per destination per epoch) and meet at the
//!    spin-then-park barrier.
//!
//! Horizon of partition q: the earliest time any other partition s can still make
//! an event for q, `min over s -> q of next(s) + lookahead(s, q)`, where `next(s)`
//! includes the messages in flight to s, and `lookahead(s, q)` is the smallest
//! latency of a link or fabric from s to q. It is also capped at
//! `min next + exit_delay` (so exit requests stop every partition at the same tick),
//! at the end time, and at the caller's `run_until` limit. Empty time is skipped: the
//! horizon follows the next events, not a fixed step.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam::queue::SegQueue;
use crossbeam::utils::CachePadded;

use crate::component::Event;
use crate::engine::barrier::SpinBarrier;
use crate::engine::control::{ExitReason, ExitRequest, ExitStatus};
use crate::engine::external::ExternalInbox;
use crate::engine::order::{EventKey, EXTERNAL_SOURCE};
use crate::engine::partition_state::PartitionState;
use crate::engine::progress::Progress;
use crate::engine::queue::Pending;
use crate::engine::wiring::Wiring;
use crate::engine::EngineError;
use crate::stats::Distribution;
use crate::time::Tick;

/// Events a partition handles before it looks at the epoch boundary again, so
/// external input and progress keep flowing in long windows.
const BUDGET: u64 = 1 << 16;

/// What limits one call of the loop.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// The run's end time (topology `max_ticks`).
    pub max_ticks: Tick,
    /// The caller's pause time (`run_until`).
    pub until: Tick,
    /// Handle one timestamp, then stop.
    pub step: bool,
    /// Epochs after which the loop yields to its caller (who may change the mode).
    pub max_epochs: u64,
}

/// A partition's record of one epoch.
#[derive(Debug, Default)]
pub(crate) struct Record {
    pub next: Tick,
    pub min_sent: Vec<Tick>,
    pub exit: Option<ExitRequest>,
    pub held: i64,
    pub registered: u64,
    pub last_release: Option<Tick>,
    pub error: Option<EngineError>,
    pub handled: u64,
    pub frontier: Tick,
    pub interrupted: bool,
    /// Whether any external sender was alive at the end of the epoch (worker 0 only;
    /// read from the record so every worker decides on the same value).
    pub senders_open: bool,
    /// External inputs this partition routed this epoch (worker 0 only).
    pub ext_seq: u64,
}

impl Clone for Record {
    fn clone(&self) -> Record {
        let mut r = Record::default();
        r.clone_from(self);
        r
    }

    /// Field by field, so the per-epoch copies reuse `min_sent`'s allocation.
    fn clone_from(&mut self, src: &Record) {
        self.next = src.next;
        self.min_sent.clone_from(&src.min_sent);
        self.exit.clone_from(&src.exit);
        self.held = src.held;
        self.registered = src.registered;
        self.last_release = src.last_release;
        self.error.clone_from(&src.error);
        self.handled = src.handled;
        self.frontier = src.frontier;
        self.interrupted = src.interrupted;
        self.senders_open = src.senders_open;
        self.ext_seq = src.ext_seq;
    }
}

impl Record {
    fn capture(part: &mut PartitionState, interrupted: bool, senders_open: bool, ext_seq: u64, into: &mut Record) {
        into.next = part.next_time();
        into.min_sent.clone_from(&part.emit.min_sent);
        part.emit.min_sent.iter_mut().for_each(|t| *t = Tick::MAX);
        into.exit.clone_from(&part.emit.exit);
        into.held = part.emit.primary_held;
        into.registered = part.emit.primaries_registered;
        into.last_release = part.emit.last_release;
        into.error.clone_from(&part.emit.error);
        into.handled = part.emit.handled;
        into.frontier = part.frontier;
        into.interrupted = interrupted;
        into.senders_open = senders_open;
        into.ext_seq = ext_seq;
    }
}

/// Run-wide counters of the synchronization.
#[derive(Clone, Debug, Default)]
pub struct SyncStats {
    /// Epochs run.
    pub epochs: u64,
    /// Wall time of the epochs, in nanoseconds.
    pub epoch_ns: Distribution,
    /// External inputs routed so far (their sequence numbers continue from here).
    pub(crate) ext_seq: u64,
}

/// What workers share during one call of the loop.
pub(crate) struct Shared<'a> {
    pub wiring: &'a Wiring,
    pub limits: Limits,
    pub barrier: SpinBarrier,
    pub records: Vec<CachePadded<[Mutex<Record>; 2]>>,
    /// Per partition, the batches sent to it: (sender, events).
    pub inboxes: Vec<SegQueue<(usize, Vec<Pending>)>>,
    /// Per partition, emptied batch vectors given back for reuse.
    pub spares: Vec<SegQueue<Vec<Pending>>>,
    pub external: &'a ExternalInbox,
    pub progress: Option<Mutex<Progress>>,
    /// Nanoseconds all partitions spent handling events in this segment (not waiting
    /// at the barrier): the work by which the next segment's mode is chosen.
    pub work_ns: AtomicU64,
}

enum Decision {
    Run { horizon_of: HorizonRule },
    Idle,
    Stop(ExitStatus),
}

enum HorizonRule {
    /// Same horizon for everyone.
    All(Tick),
    /// Per partition, computed by [`horizon`].
    PerPartition { end: Tick, cap: Tick },
}

fn effective_next(recs: &[Record], q: usize) -> Tick {
    recs.iter().fold(recs[q].next, |m, r| m.min(r.min_sent[q]))
}

fn decide(recs: &[Record], sh: &Shared<'_>, stepped: bool) -> Decision {
    let wiring = sh.wiring;
    let frontier = recs.iter().map(|r| r.frontier).max().unwrap_or(Tick::ZERO);
    if let Some(e) = recs.iter().find_map(|r| r.error.as_ref()) {
        return Decision::Stop(ExitStatus { reason: ExitReason::Error, tick: frontier, code: 1, message: e.to_string() });
    }
    if recs.iter().any(|r| r.interrupted) {
        return Decision::Stop(ExitStatus {
            reason: ExitReason::Interrupted,
            tick: frontier,
            code: 130,
            message: "interrupted".into(),
        });
    }
    let n = recs.len();
    let min_next = (0..n).map(|q| effective_next(recs, q)).min().unwrap_or(Tick::MAX);
    // The earliest exit: a request, or the release of the last primary component.
    let request = recs.iter().filter_map(|r| r.exit.as_ref()).fold(None, ExitRequest::earliest);
    let registered: u64 = recs.iter().map(|r| r.registered).sum();
    let held: i64 = recs.iter().map(|r| r.held).sum();
    let primaries_done = (registered > 0 && held <= 0)
        .then(|| recs.iter().filter_map(|r| r.last_release).max().unwrap_or(Tick::ZERO))
        .map(|t| t.saturating_add(wiring.exit_delay));
    let exit_at = request.as_ref().map_or(Tick::MAX, |r| r.at).min(primaries_done.unwrap_or(Tick::MAX));
    let end = exit_at.min(sh.limits.max_ticks).min(sh.limits.until);

    if stepped {
        return Decision::Stop(ExitStatus {
            reason: ExitReason::Stepped,
            tick: frontier,
            code: 0,
            message: "stepped one timestamp".into(),
        });
    }
    let stop = |reason, tick, code, message: String| Decision::Stop(ExitStatus { reason, tick, code, message });
    let limit = sh.limits.max_ticks.min(sh.limits.until);
    if exit_at != Tick::MAX && exit_at <= limit && min_next >= exit_at {
        return match (&request, primaries_done) {
            (Some(r), p) if p.is_none_or(|p| r.at <= p) => stop(
                ExitReason::Requested { component: wiring.paths[r.component.index()].clone(), reason: r.reason.clone() },
                r.at,
                r.code,
                format!("{} requested exit: {}", wiring.paths[r.component.index()], r.reason),
            ),
            _ => stop(ExitReason::PrimariesReleased, exit_at, 0, "all primary components released".into()),
        };
    }
    if min_next != Tick::MAX && min_next >= limit {
        return if sh.limits.until < sh.limits.max_ticks {
            stop(ExitReason::Paused, limit, 0, format!("paused at {limit}"))
        } else {
            stop(ExitReason::MaxTicks, limit, 0, format!("reached end time {limit}"))
        };
    }
    if min_next == Tick::MAX {
        if recs[0].senders_open && !sh.limits.step {
            return Decision::Idle;
        }
        let message = if held > 0 {
            format!("no events left while {held} primary component(s) still hold")
        } else {
            "no events left".to_string()
        };
        return stop(ExitReason::Quiescent, frontier, 0, message);
    }
    if sh.limits.step {
        return Decision::Run { horizon_of: HorizonRule::All(end.min(min_next.saturating_add(Tick(1)))) };
    }
    if n == 1 {
        return Decision::Run { horizon_of: HorizonRule::All(end) };
    }
    Decision::Run { horizon_of: HorizonRule::PerPartition { end, cap: min_next.saturating_add(wiring.exit_delay) } }
}

fn horizon(recs: &[Record], wiring: &Wiring, q: usize, end: Tick, cap: Tick) -> Tick {
    // Any partition (q itself included: a request whose reply comes back) may cause an
    // event in q no earlier than its next event plus the shortest chain of links to q.
    let mut h = end.min(cap);
    for (s, row) in wiring.reach.iter().enumerate() {
        if let Some(l) = row[q] {
            h = h.min(effective_next(recs, s).saturating_add(l));
        }
    }
    h
}

/// Why a run of the loop ended.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The shared decision: the run (or this `run_until` / `step`) is over.
    Status(ExitStatus),
    /// The segment's epoch budget is spent; the caller continues in another segment.
    Yield,
}

/// What one partition's worker carries from epoch to epoch.
pub(crate) struct EpochState {
    recs: Vec<Record>,
    epoch: u64,
    stepped: bool,
    ext_seq: u64,
    /// The epoch at whose start this partition yields (`Limits::max_epochs`, or earlier
    /// when the serial loop's time budget runs out).
    yield_at: u64,
    /// When windows end early: the serial loop's time budget, so that one heavy epoch
    /// (a GPU kernel starting on every compute unit) does not run on one thread.
    deadline: Option<Instant>,
}

impl EpochState {
    pub fn new(n: usize, yield_at: u64) -> EpochState {
        EpochState { recs: vec![Record::default(); n], epoch: 0, stepped: false, ext_seq: 0, yield_at, deadline: None }
    }
}

/// Wall time after which a serial segment of a multi-partition run yields even before
/// its epoch count, so a run whose epochs are heavy is not stuck on one thread for
/// its whole probe. Windows also end early once it has passed: one heavy epoch (every
/// compute unit of a GPU starting its waves) would otherwise run on one thread.
pub(crate) const SERIAL_SEGMENT_BUDGET: std::time::Duration = std::time::Duration::from_millis(2);

/// One epoch of partition `part`, up to (not including) the barrier: read the
/// records, take in the batches sent to it, decide, handle events, publish. Every
/// partition reaches the same decision, so all stop in the same epoch.
pub(crate) fn epoch(part: &mut PartitionState, sh: &Shared<'_>, st: &mut EpochState) -> Option<Stop> {
    let me = part.id.index();
    let read = ((st.epoch + 1) & 1) as usize;
    for (q, rec) in st.recs.iter_mut().enumerate() {
        rec.clone_from(&sh.records[q][read].lock().unwrap_or_else(|e| e.into_inner()));
    }
    st.ext_seq = st.ext_seq.max(st.recs[0].ext_seq);
    while let Some((sender, mut batch)) = sh.inboxes[me].pop() {
        for mut ev in batch.drain(..) {
            // External input is stamped by worker 0 with the latest frontier it knew;
            // this partition may have gone further in the same epoch. Input has no
            // sender time to respect, so it enters at this partition's present.
            if matches!(ev.body, Event::External { .. }) && ev.key.time < part.frontier {
                ev.key.time = part.frontier;
            }
            if ev.key.time < part.frontier && part.emit.error.is_none() {
                let what = format!(
                    "partition {me} had reached {} when an event for `{}` at {} arrived from partition {sender}",
                    part.frontier,
                    sh.wiring.paths[ev.target.index()],
                    ev.key.time
                );
                part.emit.fail(EngineError::Causality(what));
            }
            part.emit.queue.push(ev);
        }
        sh.spares[sender].push(batch);
    }
    if st.epoch >= st.yield_at {
        return Some(Stop::Yield);
    }
    let recs = &st.recs;
    match decide(recs, sh, st.stepped) {
        Decision::Stop(status) => return Some(Stop::Status(status)),
        Decision::Idle => {
            if me == 0 {
                sh.external.wait();
            }
        }
        Decision::Run { horizon_of } => {
            let h = match horizon_of {
                HorizonRule::All(h) => h,
                HorizonRule::PerPartition { end, cap } => horizon(recs, sh.wiring, me, end, cap),
            };
            let started = Instant::now();
            part.run_window(sh.wiring, h, BUDGET, st.deadline);
            sh.work_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
            st.stepped = sh.limits.step;
        }
    }
    let (mut interrupted, mut senders_open) = (false, false);
    if me == 0 {
        interrupted = sh.external.stop_requested();
        // Read before draining, so input sent just before the last sender closed
        // is routed in this epoch or seen as pending in the next.
        senders_open = sh.external.has_senders();
        let stamp = recs.iter().map(|r| r.frontier).max().unwrap_or(Tick::ZERO).max(part.frontier);
        while let Some((target, payload)) = sh.external.pop() {
            let key = EventKey::new(stamp, EXTERNAL_SOURCE, st.ext_seq);
            st.ext_seq += 1;
            part.emit.emit(sh.wiring, Pending { key, target, body: Event::External { payload } });
        }
    }
    {
        let mut slot = sh.records[me][(st.epoch & 1) as usize].lock().unwrap_or_else(|e| e.into_inner());
        Record::capture(part, interrupted, senders_open, st.ext_seq, &mut slot);
    }
    for (q, outbox) in part.emit.outboxes.iter_mut().enumerate() {
        if !outbox.is_empty() {
            let spare = sh.spares[me].pop().unwrap_or_default();
            sh.inboxes[q].push((me, std::mem::replace(outbox, spare)));
        }
    }
    None
}

/// Timing and progress, kept by the thread that runs partition 0.
pub(crate) struct EpochClock {
    last: Instant,
}

impl EpochClock {
    pub fn new() -> EpochClock {
        EpochClock { last: Instant::now() }
    }

    fn tick(&mut self, sh: &Shared<'_>, st: &EpochState, sync: &mut SyncStats) {
        sync.epochs += 1;
        let now = Instant::now();
        sync.epoch_ns.record(now.duration_since(self.last).as_nanos() as u64);
        self.last = now;
        if let Some(p) = &sh.progress {
            if st.epoch.is_multiple_of(64) {
                let events: u64 = st.recs.iter().map(|r| r.handled).sum();
                let sim = st.recs.iter().map(|r| r.frontier).max().unwrap_or(Tick::ZERO);
                p.lock().unwrap_or_else(|e| e.into_inner()).update(sim, events, sync.epochs, Duration::ZERO);
            }
        }
    }
}

/// Runs partition `part` on this thread, meeting the other workers at the barrier
/// after every epoch, until the shared decision stops it. Every worker returns the
/// same result.
pub(crate) fn worker(part: &mut PartitionState, sh: &Shared<'_>, sync: &mut SyncStats) -> Stop {
    let mut st = EpochState::new(sh.records.len(), sh.limits.max_epochs);
    let mut clock = EpochClock::new();
    let me = part.id.index();
    loop {
        if let Some(stop) = epoch(part, sh, &mut st) {
            sync.ext_seq = st.ext_seq;
            return stop;
        }
        sh.barrier.wait();
        st.epoch += 1;
        if me == 0 {
            clock.tick(sh, &st, sync);
        }
    }
}

/// A partition and its epoch state, for the worker that claims it in an epoch.
struct Claimable<'p> {
    part: &'p mut PartitionState,
    st: EpochState,
}

/// What the workers of [`claiming`] share besides [`Shared`].
struct Claims<'p> {
    cells: Vec<Mutex<Claimable<'p>>>,
    /// Per epoch parity, the next partition to claim. Reset by worker 0 after the
    /// barrier that ends its epoch: nobody claims from it again before the next
    /// barrier, and it is next used two epochs later.
    next: [CachePadded<std::sync::atomic::AtomicUsize>; 2],
    /// The partitions' common decision to stop, with the lowest partition that made it.
    stop: Mutex<Option<(usize, Stop)>>,
    /// The round in which the partitions decided to stop (`u64::MAX`: none yet). A
    /// round number, not a flag: a worker still to look after the barrier of round r
    /// must not take a decision of round r + 1 made by a faster worker for its own.
    stopped_in: AtomicU64,
    /// Epoch timing and progress, kept by whichever worker handles partition 0.
    clock: Mutex<(EpochClock, SyncStats)>,
}

/// Runs `parts` on `workers` threads (fewer than the partitions) that claim
/// partitions anew in every epoch: whoever is free takes the next one. The epoch
/// protocol is per partition ([`epoch`]), so results do not depend on which thread
/// handled a partition; and a worker on a slower (shared, preempted) core handles
/// fewer partitions instead of holding every other worker at the barrier.
pub(crate) fn claiming(parts: &mut [PartitionState], sh: &Shared<'_>, sync: &mut SyncStats, workers: usize) -> Stop {
    let n = parts.len();
    let claims = Claims {
        cells: parts
            .iter_mut()
            .map(|part| Mutex::new(Claimable { part, st: EpochState::new(n, sh.limits.max_epochs) }))
            .collect(),
        next: Default::default(),
        stop: Mutex::new(None),
        stopped_in: AtomicU64::new(u64::MAX),
        clock: Mutex::new((EpochClock::new(), SyncStats::default())),
    };
    let stop = std::thread::scope(|s| {
        let claims = &claims;
        for w in 1..workers {
            s.spawn(move || claim_loop(w, claims, sh));
        }
        claim_loop(0, claims, sh)
    });
    let (_, stats) = claims.clock.into_inner().unwrap_or_else(|e| e.into_inner());
    sync.epochs += stats.epochs;
    sync.epoch_ns.merge(&stats.epoch_ns);
    let ext_seq = claims.cells.into_iter().map(|c| c.into_inner().unwrap_or_else(|e| e.into_inner()).st.ext_seq).max();
    sync.ext_seq = ext_seq.unwrap_or(0);
    stop
}

/// One worker of [`claiming`]: claims and runs partitions' epochs until none is left,
/// meets the others at the barrier, and stops with them. Worker 0 returns the
/// decision of the lowest partition (all partitions decide the same).
fn claim_loop(me: usize, claims: &Claims<'_>, sh: &Shared<'_>) -> Stop {
    use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
    let n = claims.cells.len();
    let mut round = 0u64;
    loop {
        let next = &claims.next[(round & 1) as usize];
        loop {
            let i = next.fetch_add(1, Relaxed);
            if i >= n {
                break;
            }
            let mut cell = claims.cells[i].lock().unwrap_or_else(|e| e.into_inner());
            let Claimable { part, st } = &mut *cell;
            match epoch(part, sh, st) {
                Some(stop) => {
                    let mut slot = claims.stop.lock().unwrap_or_else(|e| e.into_inner());
                    if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                        *slot = Some((i, stop));
                    }
                    claims.stopped_in.store(round, Release);
                }
                None => {
                    st.epoch += 1;
                    if i == 0 {
                        let mut clock = claims.clock.lock().unwrap_or_else(|e| e.into_inner());
                        let (clock, stats) = &mut *clock;
                        clock.tick(sh, st, stats);
                    }
                }
            }
        }
        sh.barrier.wait();
        if claims.stopped_in.load(Acquire) == round {
            if me == 0 {
                let taken = claims.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
                // Invariant: `stopped_in` is set only after a decision was stored.
                return taken.map_or(Stop::Yield, |(_, s)| s);
            }
            return Stop::Yield;
        }
        if me == 0 {
            claims.next[(round & 1) as usize].store(0, Relaxed);
        }
        round += 1;
    }
}

/// Runs every partition on this thread, one after the other in each epoch: the same
/// epochs and decisions as [`worker`] on many threads, without the barrier. For
/// epochs too small to pay for synchronizing threads.
pub(crate) fn serial(parts: &mut [PartitionState], sh: &Shared<'_>, sync: &mut SyncStats) -> Stop {
    let mut states: Vec<EpochState> = parts.iter().map(|_| EpochState::new(sh.records.len(), sh.limits.max_epochs)).collect();
    let mut clock = EpochClock::new();
    let started = Instant::now();
    // Not when stepping: a step handles the whole of one timestamp.
    if parts.len() > 1 && !sh.limits.step {
        let deadline = started + SERIAL_SEGMENT_BUDGET;
        states.iter_mut().for_each(|st| st.deadline = Some(deadline));
    }
    loop {
        let mut stop = None;
        for (part, st) in parts.iter_mut().zip(states.iter_mut()) {
            // Every partition reaches the same decision; keep partition 0's.
            if let Some(s) = epoch(part, sh, st) {
                stop.get_or_insert(s);
            }
        }
        if let Some(stop) = stop {
            sync.ext_seq = states[0].ext_seq;
            return stop;
        }
        let over_budget = parts.len() > 1 && started.elapsed() >= SERIAL_SEGMENT_BUDGET;
        for st in &mut states {
            st.epoch += 1;
            if over_budget {
                // Every partition yields at the start of the next epoch, as with
                // `max_epochs` (after taking in its batches).
                st.yield_at = st.yield_at.min(st.epoch);
            }
        }
        clock.tick(sh, &states[0], sync);
    }
}

/// Fills both record slots of every partition from the partitions' current state,
/// as the record of "epoch -1".
pub(crate) fn initial_records(
    parts: &mut [PartitionState],
    senders_open: bool,
    ext_seq: u64,
) -> Vec<CachePadded<[Mutex<Record>; 2]>> {
    parts
        .iter_mut()
        .map(|p| {
            let mut r = Record::default();
            Record::capture(p, false, senders_open, ext_seq, &mut r);
            CachePadded::new([Mutex::new(r.clone()), Mutex::new(r)])
        })
        .collect()
}
