//! The epoch loop: conservative synchronization of partitions on worker threads.
//!
//! One worker thread per partition (or fewer workers claiming partitions). Each
//! epoch, per partition:
//! 1. move the message batches other partitions sent into the own queue;
//! 2. take the epoch's decision: the first partition to look makes it, once, from
//!    every partition's record of the previous epoch (double-buffered by epoch parity,
//!    so nobody overwrites a record another may still read), the others read it:
//!    stop, idle, or run with a horizon per partition (O(P log P) per epoch, not per
//!    partition);
//! 3. handle own events before the own horizon;
//! 4. publish the own record (next event, the earliest time sent to each partition it
//!    sent to, run control), hand the batches for other partitions to their inboxes
//!    (lock-free `SegQueue`s, one push per destination per epoch) and meet at the
//!    spin-then-park barrier.
//!
//! Horizon of partition q: the earliest time anything can still arrive in q,
//! `min over s of next(s) + reach(s, q)` ([`crate::engine::horizon`]), where `next(s)`
//! includes the messages in flight to s and `reach` follows chains of links and
//! fabrics through any partitions; capped at the end time, the caller's `run_until`
//! limit, and `next(e) + exit_delay` for every partition e holding a component that
//! may end the run (so an exit stops every partition at the same tick; partitions with
//! no such component and no link between them never wait on each other). Empty time
//! is skipped: the horizon follows the next events, not a fixed step.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam::queue::SegQueue;
use crossbeam::utils::CachePadded;

use crate::component::Event;
use crate::engine::barrier::SpinBarrier;
use crate::engine::control::{ExitReason, ExitRequest, ExitStatus};
use crate::engine::external::ExternalInbox;
use crate::engine::horizon::Scratch;
use crate::engine::observe::{self, Observer, WindowSpan};
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
    /// Whether a segment on one thread yields after [`SERIAL_SEGMENT_BUDGET`] (when
    /// worker threads could take over: with one worker nothing could).
    pub time_budget: bool,
}

/// A partition's record of one epoch.
#[derive(Debug, Default)]
pub(crate) struct Record {
    pub next: Tick,
    /// The earliest time sent to each partition this epoch, for those sent to only.
    pub sent: Vec<(u32, Tick)>,
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

impl Record {
    fn capture(part: &mut PartitionState, interrupted: bool, senders_open: bool, ext_seq: u64, into: &mut Record) {
        into.next = part.next_time();
        into.sent.clear();
        into.sent.extend(part.emit.outboxes.iter().map(|o| (o.dest.0, o.min_time)));
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
    /// Per epoch parity, the decision of the epoch, made by the first partition to
    /// look (from the records of the previous epoch) and read by all others.
    pub judges: [CachePadded<Mutex<Judge>>; 2],
    /// Whether an epoch ran events in this call (a step then stops).
    pub ran: std::sync::atomic::AtomicBool,
    /// Per partition, the batches sent to it: (sender, events).
    pub inboxes: Vec<SegQueue<(usize, Vec<Pending>)>>,
    /// Per partition, emptied batch vectors given back for reuse.
    pub spares: Vec<SegQueue<Vec<Pending>>>,
    pub external: &'a ExternalInbox,
    pub progress: Option<Mutex<Progress>>,
    /// Nanoseconds all partitions spent handling events in this segment (not waiting
    /// at the barrier): the work by which the next segment's mode is chosen.
    pub work_ns: AtomicU64,
    /// The recorder of an observed run.
    pub observer: Option<&'a Observer>,
    /// Epochs of earlier segments (observed epochs are numbered over the run).
    pub epoch_base: u64,
    /// The earliest pending event when the last decision was made (ticks): a
    /// synchronisation boundary between it and the next decision's has been reached.
    pub sync_from: AtomicU64,
}

/// What an epoch does.
#[derive(Debug, Default)]
enum Decision {
    #[default]
    Idle,
    /// Handle events before the horizon ([`Verdict::horizon`]).
    Run,
    Stop(ExitStatus),
}

/// The decision of one epoch and what every partition needs from the records.
#[derive(Debug)]
struct Verdict {
    /// The epoch decided (`u64::MAX`: none yet).
    epoch: u64,
    decision: Decision,
    /// The horizon of every partition (when `per_partition` is empty).
    all: Tick,
    per_partition: Vec<Tick>,
    /// The latest time any partition reached.
    frontier: Tick,
    /// External inputs routed so far (partition 0's count).
    ext_seq: u64,
    /// Events handled, all partitions.
    events: u64,
}

impl Verdict {
    fn horizon(&self, q: usize) -> Tick {
        self.per_partition.get(q).copied().unwrap_or(self.all)
    }
}

/// One epoch parity's decision and the buffers that make it.
#[derive(Debug)]
pub(crate) struct Judge {
    verdict: Verdict,
    /// Per partition, its next event, counting the messages in flight to it.
    next: Vec<Tick>,
    arrivals: Vec<Tick>,
    scratch: Scratch,
}

impl Judge {
    pub fn new() -> Judge {
        Judge {
            verdict: Verdict {
                epoch: u64::MAX,
                decision: Decision::Idle,
                all: Tick::ZERO,
                per_partition: Vec::new(),
                frontier: Tick::ZERO,
                ext_seq: 0,
                events: 0,
            },
            next: Vec::new(),
            arrivals: Vec::new(),
            scratch: Scratch::default(),
        }
    }
}

/// Makes epoch `epoch`'s decision from the partitions' records of the epoch before:
/// O(P + messages' destinations) to read them, and one shortest-path pass over the
/// lookahead graph for the horizons.
fn decide(sh: &Shared<'_>, epoch: u64, j: &mut Judge) {
    let wiring = sh.wiring;
    let read = ((epoch + 1) & 1) as usize;
    let n = sh.records.len();
    j.next.clear();
    j.next.resize(n, Tick::MAX);
    let (mut error, mut interrupted, mut request) = (None, false, None);
    let (mut registered, mut held, mut last_release) = (0u64, 0i64, None::<Tick>);
    let (mut frontier, mut events, mut senders_open, mut ext_seq) = (Tick::ZERO, 0u64, false, 0u64);
    for (q, slots) in sh.records.iter().enumerate() {
        let r = slots[read].lock().unwrap_or_else(|e| e.into_inner());
        j.next[q] = j.next[q].min(r.next);
        for &(d, t) in &r.sent {
            let d = &mut j.next[d as usize];
            *d = (*d).min(t);
        }
        if error.is_none() {
            error.clone_from(&r.error);
        }
        interrupted |= r.interrupted;
        if let Some(e) = &r.exit {
            request = ExitRequest::earliest(request, e);
        }
        registered += r.registered;
        held += r.held;
        last_release = last_release.max(r.last_release);
        frontier = frontier.max(r.frontier);
        events += r.handled;
        if q == 0 {
            senders_open = r.senders_open;
            ext_seq = r.ext_seq;
        }
    }
    let v = &mut j.verdict;
    v.epoch = epoch;
    v.frontier = frontier;
    v.ext_seq = ext_seq;
    v.events = events;
    v.per_partition.clear();
    let stop = |reason, tick, code, message: String| Decision::Stop(ExitStatus { reason, tick, code, message });
    if let Some(e) = error {
        v.decision = stop(ExitReason::Error, frontier, 1, e.to_string());
        return;
    }
    if interrupted {
        v.decision = stop(ExitReason::Interrupted, frontier, 130, "interrupted".into());
        return;
    }
    let min_next = j.next.iter().copied().min().unwrap_or(Tick::MAX);
    if !wiring.sync.is_empty() && min_next != Tick::MAX {
        // Every event before `min_next` is handled and none after it: the boundaries
        // passed since the last decision are reached (see `engine::sync`).
        let from = Tick(sh.sync_from.swap(min_next.0, Ordering::Relaxed));
        wiring.sync.cross(from, min_next);
    }
    // The earliest exit: a request, or the release of the last primary component.
    let primaries_done = (registered > 0 && held <= 0)
        .then(|| last_release.unwrap_or(Tick::ZERO))
        .map(|t| t.saturating_add(wiring.exit_delay));
    let exit_at = request.as_ref().map_or(Tick::MAX, |r| r.at).min(primaries_done.unwrap_or(Tick::MAX));
    let end = exit_at.min(sh.limits.max_ticks).min(sh.limits.until);
    if sh.limits.step && sh.ran.load(Ordering::Relaxed) {
        v.decision = stop(ExitReason::Stepped, frontier, 0, "stepped one timestamp".into());
        return;
    }
    let limit = sh.limits.max_ticks.min(sh.limits.until);
    if exit_at != Tick::MAX && exit_at <= limit && min_next >= exit_at {
        v.decision = match (&request, primaries_done) {
            (Some(r), p) if p.is_none_or(|p| r.at <= p) => stop(
                ExitReason::Requested { component: wiring.paths[r.component.index()].clone(), reason: r.reason.clone() },
                r.at,
                r.code,
                format!("{} requested exit: {}", wiring.paths[r.component.index()], r.reason),
            ),
            _ => stop(ExitReason::PrimariesReleased, exit_at, 0, "all primary components released".into()),
        };
        return;
    }
    if min_next != Tick::MAX && min_next >= limit {
        v.decision = if sh.limits.until < sh.limits.max_ticks {
            stop(ExitReason::Paused, limit, 0, format!("paused at {limit}"))
        } else {
            stop(ExitReason::MaxTicks, limit, 0, format!("reached end time {limit}"))
        };
        return;
    }
    if min_next == Tick::MAX {
        v.decision = if senders_open && !sh.limits.step {
            Decision::Idle
        } else {
            let message = if held > 0 {
                format!("no events left while {held} primary component(s) still hold")
            } else {
                "no events left".to_string()
            };
            stop(ExitReason::Quiescent, frontier, 0, message)
        };
        return;
    }
    v.decision = Decision::Run;
    sh.ran.store(true, Ordering::Relaxed);
    if sh.limits.step {
        v.all = end.min(min_next.saturating_add(Tick(1)));
        return;
    }
    // A partition that may end the run may do so from its next event on: nobody runs
    // past that plus the exit delay, so an exit stops every partition at its tick.
    let exit_cap = wiring.graph.exit_sources().iter().map(|&e| j.next[e as usize]).min().unwrap_or(Tick::MAX);
    v.all = end.min(exit_cap.saturating_add(wiring.exit_delay)).min(wiring.sync.cap(min_next));
    if n > 1 {
        wiring.graph.arrivals(&j.next, &mut j.scratch, &mut j.arrivals);
        v.per_partition.extend(j.arrivals.iter().map(|&a| a.min(v.all)));
    }
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
    epoch: u64,
    ext_seq: u64,
    /// From the last decision: events handled and the latest time reached, all
    /// partitions (for the progress line).
    events: u64,
    frontier: Tick,
    /// The epoch at whose start this partition yields (`Limits::max_epochs`, or earlier
    /// when the serial loop's time budget runs out).
    yield_at: u64,
    /// When windows end early: the serial loop's time budget, so that one heavy epoch
    /// (a GPU kernel starting on every compute unit) does not run on one thread.
    deadline: Option<Instant>,
}

impl EpochState {
    pub fn new(yield_at: u64) -> EpochState {
        EpochState { epoch: 0, ext_seq: 0, events: 0, frontier: Tick::ZERO, yield_at, deadline: None }
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
    let (run, horizon) = {
        let mut judge = sh.judges[(st.epoch & 1) as usize].lock().unwrap_or_else(|e| e.into_inner());
        if judge.verdict.epoch != st.epoch {
            decide(sh, st.epoch, &mut judge);
        }
        let v = &judge.verdict;
        st.ext_seq = st.ext_seq.max(v.ext_seq);
        st.events = v.events;
        st.frontier = v.frontier;
        match &v.decision {
            Decision::Stop(status) => return Some(Stop::Status(status.clone())),
            Decision::Idle => (false, Tick::ZERO),
            Decision::Run => (true, v.horizon(me)),
        }
    };
    if run {
        let started = Instant::now();
        let before = part.emit.handled;
        part.run_window(sh.wiring, horizon, BUDGET, st.deadline, sh.observer);
        let ended = Instant::now();
        sh.work_ns.fetch_add(ended.duration_since(started).as_nanos() as u64, Ordering::Relaxed);
        if let Some(o) = sh.observer {
            o.window(WindowSpan {
                worker: observe::worker(),
                partition: part.id,
                epoch: sh.epoch_base + st.epoch,
                start_ns: o.ns(started),
                end_ns: o.ns(ended),
                events: part.emit.handled - before,
            });
        }
    } else if me == 0 {
        sh.external.wait();
    }
    let (mut interrupted, mut senders_open) = (false, false);
    if me == 0 {
        interrupted = sh.external.stop_requested();
        // Read before draining, so input sent just before the last sender closed
        // is routed in this epoch or seen as pending in the next.
        senders_open = sh.external.has_senders();
        let stamp = st.frontier.max(part.frontier);
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
    for outbox in part.emit.take_outboxes() {
        sh.inboxes[outbox.dest.index()].push((me, outbox.events));
    }
    while let Some(spare) = sh.spares[me].pop() {
        part.emit.spare.push(spare);
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
                p.lock().unwrap_or_else(|e| e.into_inner()).update(st.frontier, st.events, sync.epochs, Duration::ZERO);
            }
        }
    }
}

/// Meets the other workers at the barrier (timing the wait when observed).
fn wait_at_barrier(sh: &Shared<'_>) {
    match sh.observer {
        None => {
            sh.barrier.wait();
        }
        Some(o) => {
            let started = Instant::now();
            sh.barrier.wait();
            o.wait(started, Instant::now());
        }
    }
}

/// Runs partition `part` on this thread, meeting the other workers at the barrier
/// after every epoch, until the shared decision stops it. Every worker returns the
/// same result.
pub(crate) fn worker(part: &mut PartitionState, sh: &Shared<'_>, sync: &mut SyncStats) -> Stop {
    let mut st = EpochState::new(sh.limits.max_epochs);
    let mut clock = EpochClock::new();
    let me = part.id.index();
    observe::set_worker(me);
    loop {
        if let Some(stop) = epoch(part, sh, &mut st) {
            sync.ext_seq = st.ext_seq;
            return stop;
        }
        wait_at_barrier(sh);
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
    let claims = Claims {
        cells: parts
            .iter_mut()
            .map(|part| Mutex::new(Claimable { part, st: EpochState::new(sh.limits.max_epochs) }))
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
    observe::set_worker(me);
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
        wait_at_barrier(sh);
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
    let mut states: Vec<EpochState> = parts.iter().map(|_| EpochState::new(sh.limits.max_epochs)).collect();
    let mut clock = EpochClock::new();
    let started = Instant::now();
    observe::set_worker(0);
    // Not when stepping: a step handles the whole of one timestamp.
    let budgeted = parts.len() > 1 && sh.limits.time_budget;
    if budgeted && !sh.limits.step {
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
        let over_budget = budgeted && started.elapsed() >= SERIAL_SEGMENT_BUDGET;
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
            let mut twin = Record::default();
            Record::capture(p, false, senders_open, ext_seq, &mut twin);
            CachePadded::new([Mutex::new(r), Mutex::new(twin)])
        })
        .collect()
}
