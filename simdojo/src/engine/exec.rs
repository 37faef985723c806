//! The epoch loop: conservative synchronization of partitions without a global barrier.
//!
//! Each of `workers` threads owns a contiguous *home* range of partitions. A worker
//! claims a free partition that has an event before its horizon (its own first, then
//! any other: it steals ready partitions), and *activates* it: takes in the batches
//! other partitions posted to it, handles its events before the horizon, publishing
//! every [`FLUSH_EVENTS`] events (post outboxes, then raise its lower bound on the
//! board), and extends the horizon while a pass can. When no partition is ready the
//! worker runs a horizon pass ([`crate::engine::pass`]), which raises the horizons from
//! what every partition published; decisions that need the whole state (end, exit,
//! idle, errors, external input, end of segment) are taken by an exclusive pass once
//! no partition is claimed. Nothing waits for all workers: a partition waits only for
//! the partitions whose events can reach it before its next event.
//!
//! Horizon of partition q: the earliest time anything can still arrive in q,
//! `min over s of lb(s) + reach(s, q)` ([`crate::engine::horizon`]), capped at the end
//! time, the caller's `run_until` limit, exit requests, and `lb(e) + exit_delay` for
//! every partition e holding a component that may end the run (so an exit stops every
//! partition at the same tick). Empty time is skipped: the horizon follows the next
//! events, not a fixed step.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam::utils::CachePadded;

use crate::component::Event;
use crate::engine::board::{Board, Claimed, Parts};
use crate::engine::control::{ExitRequest, ExitStatus};
use crate::engine::external::ExternalInbox;
use crate::engine::hooks::Hooks;
use crate::engine::mailbox::{Mailbox, OUTSIDE};
use crate::engine::observe::{self, Observer, WindowSpan};
use crate::engine::partition_state::{PartitionState, WindowEnd};
use crate::engine::pass::{self, Control, Outcome, PassState};
use crate::engine::progress::Progress;
use crate::engine::wait::Idle;
use crate::engine::wiring::Wiring;
use crate::engine::EngineError;
use crate::stats::Distribution;
use crate::time::Tick;

/// Events a partition handles in one activation before its worker looks for other
/// work, and (with one partition) between looks at external input and progress.
const ACTIVATION_EVENTS: u64 = 1 << 16;

/// Events between two publications of a partition's progress (outboxes posted, lower
/// bound raised) inside an activation: other partitions' horizons follow it while it
/// runs, instead of waiting for its window to end.
pub(crate) const FLUSH_EVENTS: u64 = 256;

/// Emptied batches a partition keeps for its own sends before it gives them back to
/// their senders.
const KEPT_BATCHES: usize = 32;

/// What limits one call of the loop.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// The run's end time (topology `max_ticks`).
    pub max_ticks: Tick,
    /// The caller's pause time (`run_until`).
    pub until: Tick,
    /// Handle one timestamp, then stop.
    pub step: bool,
    /// Passes after which the loop yields to its caller (who may change the mode).
    pub max_passes: u64,
    /// Whether a segment yields after [`SERIAL_SEGMENT_BUDGET`] of wall time (a segment
    /// on one thread, when worker threads could take over).
    pub time_budget: bool,
}

/// Run-wide counters of the synchronization.
#[derive(Clone, Debug, Default)]
pub struct SyncStats {
    /// Horizon passes run: the rounds of synchronization (a pass computes every
    /// partition's horizon from what the others published; without a barrier, it is
    /// what an epoch was).
    pub epochs: u64,
    /// Wall time between consecutive passes, in nanoseconds.
    pub epoch_ns: Distribution,
    /// Activations: a worker claiming a partition and running it up to its horizon.
    pub windows: u64,
    /// External inputs routed so far (their sequence numbers continue from here).
    pub(crate) ext_seq: u64,
}

/// Why a run of the loop ended.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The shared decision: the run (or this `run_until` / `step`) is over.
    Status(ExitStatus),
    /// The segment's budget is spent; the caller continues in another segment.
    Yield,
}

/// Wall time after which a segment on one thread yields, so a run whose rounds are
/// heavy is not stuck on one thread for its whole probe. Windows also end early once it
/// has passed: one heavy round (every compute unit of a GPU starting its waves) would
/// otherwise run on one thread.
pub(crate) const SERIAL_SEGMENT_BUDGET: std::time::Duration = std::time::Duration::from_millis(2);

/// What the workers of one segment share.
pub(crate) struct Shared<'a> {
    pub wiring: &'a Wiring,
    pub limits: Limits,
    pub board: Board,
    /// Per partition, its inbox and the batch vectors given back to it.
    pub mail: Vec<CachePadded<Mailbox>>,
    /// The pass state; a worker that finds it locked leaves the pass to its holder.
    pub pass: Mutex<PassState>,
    /// Set while a decision needs the world stopped: no partition may be claimed.
    pub attention: AtomicBool,
    /// The end of what may run, from the last exclusive pass (end time, pause, exit,
    /// the end of a step).
    pub cap: AtomicU64,
    /// The earliest stop tick an exit request asked for.
    pub exit_at: AtomicU64,
    /// The earliest `release + exit_delay` of a primary release since the last
    /// exclusive pass: nothing runs past it until that pass knows whether the last
    /// primary released.
    pub release_cap: AtomicU64,
    /// The run control the partitions published.
    pub control: Mutex<Control>,
    /// Passes so far (for observed windows).
    pub passes: AtomicU64,
    stop: Mutex<Option<Stop>>,
    /// Set once `stop` holds why the segment ended.
    pub stopped: AtomicBool,
    pub external: &'a ExternalInbox,
    pub progress: Option<Mutex<Progress>>,
    /// Nanoseconds all partitions spent in activations (when `measure_work`).
    pub work_ns: AtomicU64,
    pub measure_work: bool,
    /// Activations run.
    pub windows: AtomicU64,
    /// The recorder of an observed run.
    pub observer: Option<&'a Observer>,
    /// Passes of earlier segments (observed windows are numbered over the run).
    pub epoch_base: u64,
    /// Where idle workers wait.
    pub idle: Idle,
    /// When windows end early (a segment on one thread with a time budget).
    pub deadline: Option<Instant>,
    /// Whether one thread runs the segment (no atomic read-modify-writes needed).
    pub solo: bool,
    /// The synchronisation hooks, and the rounds of them finished before the segment.
    pub hooks: &'a Hooks,
    rounds_before: u64,
}

/// What a segment needs besides its partitions.
pub(crate) struct SegmentSetup<'a> {
    pub wiring: &'a Wiring,
    pub limits: Limits,
    pub external: &'a ExternalInbox,
    pub progress: Option<Progress>,
    pub observer: Option<&'a Observer>,
    pub epoch_base: u64,
    pub ext_seq: u64,
    pub workers: usize,
    pub measure_work: bool,
    pub hooks: &'a Hooks,
}

impl<'a> Shared<'a> {
    /// The shared state of a segment over `parts`. The run control each partition
    /// published is summed and marked published; the first pass is exclusive.
    pub fn new(parts: &mut [PartitionState], setup: SegmentSetup<'a>) -> Shared<'a> {
        let n = parts.len();
        let mut control = Control::default();
        for (q, p) in parts.iter_mut().enumerate() {
            p.published = crate::engine::partition_state::Published::default();
            publish_control(&mut control, q, p, setup.wiring.exit_delay);
        }
        let exit_at = control.exit.as_ref().map_or(u64::MAX, |r| r.at.0);
        let budgeted = n > 1 && setup.limits.time_budget && !setup.limits.step;
        Shared {
            wiring: setup.wiring,
            board: Board::new(parts),
            mail: (0..n).map(|_| CachePadded::new(Mailbox::default())).collect(),
            pass: Mutex::new(PassState::new(n, setup.ext_seq)),
            attention: AtomicBool::new(true),
            cap: AtomicU64::new(0),
            exit_at: AtomicU64::new(exit_at),
            release_cap: AtomicU64::new(u64::MAX),
            control: Mutex::new(control),
            passes: AtomicU64::new(0),
            stop: Mutex::new(None),
            stopped: AtomicBool::new(false),
            external: setup.external,
            progress: setup.progress.map(Mutex::new),
            work_ns: AtomicU64::new(0),
            measure_work: setup.measure_work,
            windows: AtomicU64::new(0),
            observer: setup.observer,
            epoch_base: setup.epoch_base,
            idle: Idle::new(setup.workers),
            deadline: budgeted.then(|| Instant::now() + SERIAL_SEGMENT_BUDGET),
            solo: setup.workers <= 1,
            limits: setup.limits,
            rounds_before: setup.hooks.rounds(),
            hooks: setup.hooks,
        }
    }

    /// Whether the segment is over.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Ends the segment with `stop` (the first stop wins) and wakes every worker.
    pub fn finish(&self, stop: Stop) {
        let mut slot = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(stop);
        }
        self.stopped.store(true, Ordering::Release);
        drop(slot);
        self.idle.bump();
        self.idle.wake();
    }

    /// Why the segment ended.
    fn take_stop(&self) -> Stop {
        // Invariant: the workers return only once `finish` stored a stop.
        self.stop.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or(Stop::Yield)
    }

    /// Ends what is left of a segment: batches still posted go into their partitions'
    /// queues, given-back vectors to their senders. Returns the pass state.
    pub fn close(self, parts: &mut [PartitionState], sync: &mut SyncStats) -> (u64, u64) {
        let Shared { mut mail, pass, work_ns, windows, .. } = self;
        for (q, mailbox) in mail.iter_mut().enumerate() {
            for mut batch in mailbox.drain_all() {
                batch.events.drain(..).for_each(|ev| parts[q].emit.queue.push(ev));
                if batch.sender != OUTSIDE {
                    parts[batch.sender as usize].emit.spare.push(batch);
                }
            }
            parts[q].emit.spare.extend(mailbox.returned_all());
        }
        let ps = pass.into_inner().unwrap_or_else(|e| e.into_inner());
        sync.epochs += ps.passes;
        sync.epoch_ns.merge(&ps.pass_ns);
        sync.windows += windows.into_inner();
        sync.ext_seq = sync.ext_seq.max(ps.ext_seq);
        (work_ns.into_inner(), ps.progress)
    }
}

/// Adds what partition `q` changed in its run control since it last published to
/// `control`.
fn publish_control(control: &mut Control, q: usize, part: &mut PartitionState, exit_delay: Tick) -> Option<Tick> {
    let e = &mut part.emit;
    let marks = &mut part.published;
    e.control = false;
    if let Some(req) = &e.exit {
        control.exit = ExitRequest::earliest(control.exit.take(), req);
    }
    control.held += e.primary_held - marks.held;
    control.registered += e.primaries_registered - marks.registered;
    marks.held = e.primary_held;
    marks.registered = e.primaries_registered;
    let mut released = None;
    if e.last_release > marks.last_release {
        marks.last_release = e.last_release;
        control.last_release = control.last_release.max(e.last_release);
        released = e.last_release.map(|t| t.saturating_add(exit_delay));
    }
    if let Some(err) = &e.error {
        if control.error.as_ref().is_none_or(|(p, _)| q < *p) {
            control.error = Some((q, err.clone()));
        }
    }
    released
}

/// Runs one segment over `parts` on `workers` threads (this one included) until a pass
/// ends it.
pub(crate) fn run(parts: &mut [PartitionState], sh: &Shared<'_>, workers: usize) -> Stop {
    let n = parts.len();
    let workers = workers.clamp(1, n.max(1));
    assert_eq!(sh.solo, workers == 1, "a segment's workers are those it was set up for");
    let parts = Parts::new(parts, sh.solo);
    if workers == 1 {
        worker(0, 1, &parts, sh);
    } else {
        std::thread::scope(|s| {
            let parts = &parts;
            for w in 1..workers {
                s.spawn(move || worker(w, workers, parts, sh));
            }
            worker(0, workers, parts, sh);
        });
    }
    sh.take_stop()
}

/// How long another worker must have shown no activity (no publication, release or
/// pass) before this one steals its ready partitions: a worker that runs publishes every
/// few microseconds, so one silent for this long is preempted by the host or blocked.
/// Stealing from a worker that simply has not reached its partitions yet would move
/// their state between cores for nothing (it costs more than running them).
const STEAL_AFTER: Duration = Duration::from_micros(50);

/// What one worker keeps between activations.
struct WorkerState {
    /// Its home partitions and where to look first among them.
    home: std::ops::Range<usize>,
    cursor: usize,
    /// Activations run.
    windows: u64,
    /// Per worker, its activity count when this one last looked and since when it has
    /// stayed the same.
    seen: Vec<(u64, Instant)>,
    /// Before this, a pass would most likely find nothing new: the last one found
    /// nothing for this worker (it waits twice that pass's duration, so a worker
    /// waiting for others spends at most a third of its time passing, and the
    /// partitions whose progress it reads are not slowed by its reads).
    next_pass: Instant,
    /// The last round of synchronisation hooks this worker served.
    served: u64,
}

/// One worker: runs ready partitions, passes when none is, until the segment ends.
fn worker(w: usize, workers: usize, parts: &Parts<'_>, sh: &Shared<'_>) {
    observe::set_worker(w);
    let n = sh.board.claim.len();
    let home = (w * n / workers)..((w + 1) * n / workers);
    let now = Instant::now();
    let seen = (0..workers).map(|v| (sh.idle.of(v), now)).collect();
    let mut ws = WorkerState { cursor: home.start, home, windows: 0, seen, next_pass: now, served: sh.rounds_before };
    loop {
        if sh.is_stopped() {
            break;
        }
        if serve_own(sh, parts, &mut ws, w, workers) {
            continue;
        }
        let now = Instant::now();
        if now >= ws.next_pass {
            if pass::pass(sh, true) == Outcome::Stopped {
                break;
            }
            if serve_own(sh, parts, &mut ws, w, workers) {
                continue;
            }
            let ended = Instant::now();
            ws.next_pass = ended + 2 * ended.duration_since(now);
        }
        if let Some(claimed) = steal(sh, parts, &mut ws, w, workers, now) {
            serve(sh, claimed, &mut ws);
            continue;
        }
        sh.idle.wait(&sh.stopped, sh.observer);
    }
    sh.windows.fetch_add(ws.windows, Ordering::Relaxed);
}

/// Serves what this worker has at hand: its shares of a hook round in progress, else
/// one of its own ready partitions. Returns whether it did either.
fn serve_own(sh: &Shared<'_>, parts: &Parts<'_>, ws: &mut WorkerState, w: usize, workers: usize) -> bool {
    if serve_hooks(sh, ws, w, workers) {
        return true;
    }
    match find_own(sh, parts, ws) {
        Some(claimed) => {
            serve(sh, claimed, ws);
            true
        }
        None => false,
    }
}

/// Runs this worker's shares of the synchronisation hooks' round in progress, if it has
/// not yet, and tells the waiting workers. Returns whether it ran any.
fn serve_hooks(sh: &Shared<'_>, ws: &mut WorkerState, w: usize, workers: usize) -> bool {
    if !sh.hooks.serve(&mut ws.served, w, workers) {
        return false;
    }
    sh.idle.bump();
    sh.idle.wake();
    true
}

/// Activates claimed partition `c`, releases it and tells waiting workers.
fn serve(sh: &Shared<'_>, mut c: Claimed<'_>, ws: &mut WorkerState) {
    activate(sh, &mut c, ws);
    drop(c);
    sh.idle.bump();
    sh.idle.wake();
}

/// An exit or a primary release published since the last pass lowers every horizon.
fn transient_cap(sh: &Shared<'_>) -> u64 {
    sh.exit_at.load(Ordering::Acquire).min(sh.release_cap.load(Ordering::Acquire))
}

/// Claims the next ready partition of the worker's own, from its cursor on.
fn find_own<'s>(sh: &'s Shared<'_>, parts: &'s Parts<'_>, ws: &mut WorkerState) -> Option<Claimed<'s>> {
    if sh.attention.load(Ordering::Relaxed) {
        return None;
    }
    let own = ws.home.len();
    let cap = transient_cap(sh);
    for i in 0..own {
        let q = ws.home.start + (ws.cursor - ws.home.start + i) % own;
        if sh.board.ready(q, cap) {
            if let Some(c) = parts.claim(&sh.board, &sh.attention, q) {
                ws.cursor = if q + 1 == ws.home.end { ws.home.start } else { q + 1 };
                return Some(c);
            }
        }
    }
    None
}

/// Claims a ready partition of a worker that has shown no activity for
/// [`STEAL_AFTER`], from the far end of its home range (it resumes from its cursor).
fn steal<'s>(
    sh: &'s Shared<'_>,
    parts: &'s Parts<'_>,
    ws: &mut WorkerState,
    me: usize,
    workers: usize,
    now: Instant,
) -> Option<Claimed<'s>> {
    if workers == 1 || sh.attention.load(Ordering::Relaxed) {
        return None;
    }
    let n = sh.board.claim.len();
    let cap = transient_cap(sh);
    for v in (0..workers).filter(|&v| v != me) {
        let count = sh.idle.of(v);
        let (last, since) = &mut ws.seen[v];
        if count != *last {
            *last = count;
            *since = now;
            continue;
        }
        if now.duration_since(*since) < STEAL_AFTER {
            continue;
        }
        let victim = (v * n / workers)..((v + 1) * n / workers);
        for q in victim.rev() {
            if sh.board.ready(q, cap) {
                if let Some(c) = parts.claim(&sh.board, &sh.attention, q) {
                    return Some(c);
                }
            }
        }
    }
    None
}

/// Runs claimed partition `c` up to its horizon (extending it while passes can),
/// publishing as it goes.
fn activate(sh: &Shared<'_>, c: &mut Claimed<'_>, ws: &mut WorkerState) {
    let q = c.q;
    let part = &mut *c.part;
    let b = &sh.board;
    let timed = sh.measure_work || sh.observer.is_some();
    let started = timed.then(Instant::now);
    let before = part.emit.handled;
    let first_pass = sh.passes.load(Ordering::Relaxed);
    let mut h = Tick(b.horizon[q].load(Ordering::Acquire));
    let mut budget = ACTIVATION_EVENTS;
    let single = b.claim.len() == 1;
    // The simulated time of the first event, for an observed window.
    let first = sh.observer.map(|_| {
        drain(sh, q, part);
        part.next_time()
    });
    loop {
        drain(sh, q, part);
        let window = if single { budget } else { budget.min(FLUSH_EVENTS) };
        let handled = part.emit.handled;
        let end = part.run_window(sh.wiring, h, window, sh.deadline, sh.observer);
        budget = budget.saturating_sub(part.emit.handled - handled);
        publish(sh, q, part, h);
        if end == WindowEnd::Error || budget == 0 || sh.attention.load(Ordering::Acquire) {
            break;
        }
        if sh.deadline.is_some_and(|d| Instant::now() >= d) {
            // The segment's time is up: its next pass yields.
            sh.attention.store(true, Ordering::SeqCst);
            break;
        }
        if end == WindowEnd::Budget {
            continue;
        }
        // Nothing left to run: release it. A claimed partition counts in passes by the
        // lower bound it published, its horizon; raising its own horizon with nothing
        // to run would raise that bound pass after pass, so simulated time (and the
        // synchronisation hooks' boundaries) would creep on one window per pass while
        // the run waits for input, where a pass that sees it free jumps to its next
        // event (or idles).
        if b.pending(q) == u64::MAX {
            break;
        }
        // At the horizon: go on if a pass raised it: another worker's, or one now when
        // this worker has no other partition to turn to (else it turns to them first,
        // and passes when none is ready).
        let mut next_h = Tick(b.horizon[q].load(Ordering::Acquire));
        if next_h <= h && !single && ws.home.len() == 1 {
            pass::pass(sh, false);
            next_h = Tick(b.horizon[q].load(Ordering::Acquire));
        }
        if next_h <= h || b.pending(q) >= next_h.0 {
            break;
        }
        h = next_h;
    }
    ws.windows += 1;
    if let Some(started) = started {
        let ended = Instant::now();
        if sh.measure_work {
            sh.work_ns.fetch_add(ended.duration_since(started).as_nanos() as u64, Ordering::Relaxed);
        }
        if let Some(o) = sh.observer {
            o.window(WindowSpan {
                worker: observe::worker(),
                partition: part.id,
                epoch: sh.epoch_base + first_pass,
                first: first.unwrap_or(Tick::ZERO),
                last: part.frontier,
                start_ns: o.ns(started),
                end_ns: o.ns(ended),
                events: part.emit.handled - before,
            });
        }
    }
    if single {
        if let Some(p) = &sh.progress {
            let frontier = part.frontier;
            let events = part.emit.handled;
            p.lock().unwrap_or_else(|e| e.into_inner()).update(frontier, events, sh.epoch_base + sh.passes.load(Ordering::Relaxed), std::time::Duration::ZERO);
        }
    }
}

/// Moves the batches posted to partition `q` into its queue (after the horizon was
/// read: see `engine::pass`) and gives them back to their senders.
fn drain(sh: &Shared<'_>, q: usize, part: &mut PartitionState) {
    let b = &sh.board;
    if b.inbox_min[q].load(Ordering::Acquire) == u64::MAX {
        return;
    }
    for mut batch in sh.mail[q].take(&b.inbox_min[q], sh.solo) {
        let sender = batch.sender;
        for mut ev in batch.events.drain(..) {
            // External input is stamped with the latest time any partition had reached;
            // this partition may have gone further. Input has no sender time to
            // respect, so it enters at this partition's present.
            if matches!(ev.body, Event::External { .. }) && ev.key.time < part.frontier {
                ev.key.time = part.frontier;
            }
            if ev.key.time < part.frontier && part.emit.error.is_none() {
                let what = format!(
                    "partition {q} had reached {} when an event for `{}` at {} arrived from partition {}",
                    part.frontier,
                    sh.wiring.paths[ev.target.index()],
                    ev.key.time,
                    if sender == OUTSIDE { "outside".to_string() } else { sender.to_string() }
                );
                part.emit.fail(EngineError::Causality(what));
            }
            part.emit.queue.push(ev);
        }
        if sender == OUTSIDE {
            continue;
        }
        // Batches are interchangeable: keep it for this partition's own sends (no trip
        // back to the sender's core) unless this partition holds plenty already, as
        // under one-way traffic, where the sender needs them back.
        if part.emit.spare.len() < KEPT_BATCHES {
            part.emit.spare.push(batch);
        } else {
            sh.mail[sender as usize].give_back(batch, sh.solo);
        }
    }
}

/// Publishes partition `q`'s progress after a window that ran to horizon `h`: its run
/// control (if changed), its outboxes, then its next event and lower bound.
fn publish(sh: &Shared<'_>, q: usize, part: &mut PartitionState, h: Tick) {
    let b = &sh.board;
    if part.emit.control {
        let released = {
            let mut control = sh.control.lock().unwrap_or_else(|e| e.into_inner());
            publish_control(&mut control, q, part, sh.wiring.exit_delay)
        };
        if let Some(req) = &part.emit.exit {
            sh.exit_at.fetch_min(req.at.0, Ordering::AcqRel);
        }
        if let Some(cap) = released {
            sh.release_cap.fetch_min(cap.0, Ordering::AcqRel);
        }
        if part.emit.error.is_some() {
            sh.attention.store(true, Ordering::SeqCst);
        }
    }
    for outbox in part.emit.take_outboxes() {
        let d = outbox.dest.index();
        sh.mail[d].post(outbox.batch, &b.inbox_min[d], sh.solo);
    }
    sh.mail[q].reclaim(&mut part.emit.spare, sh.solo);
    part.drop_cancelled_front();
    let next = part.next_time();
    b.next[q].store(next.0, Ordering::Release);
    b.frontier[q].store(part.frontier.0, Ordering::Relaxed);
    b.handled[q].store(part.emit.handled, Ordering::Relaxed);
    // A store, not a maximum: a pass raises the bound only of partitions nobody
    // claimed, and what this partition publishes is a valid bound even if lower. With
    // nothing queued or posted it bounds its events by its own present (what it handles
    // later is sent to it, no earlier): a pass that sees it still claimed then takes it
    // for idle at its present, not for busy up to its horizon, and does not close the
    // synchronisation hooks' windows beyond the present while the run goes idle (input
    // would then enter later on some runs than on others).
    let lb = if b.pending(q) == u64::MAX { part.frontier.min(h) } else { next.min(h) };
    b.lb[q].store(lb.0, Ordering::Release);
    if !sh.solo {
        sh.idle.bump();
        sh.idle.nudge();
    }
    if sh.external.has_pending() || sh.external.stop_requested() {
        sh.attention.store(true, Ordering::SeqCst);
    }
}
