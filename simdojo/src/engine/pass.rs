//! Horizon passes: how the partitions learn how far they may run, without a barrier.
//!
//! Every partition publishes on the board a lower bound `lb` on the time of every event
//! it will still handle. A pass (run by whichever worker needs one; one at a time)
//! reads the board and computes for every partition q its horizon
//! `min over s of src(s) + reach(s, q)` ([`LookaheadGraph::arrivals`]) and its new
//! lower bound `D(q) = min(src(q), horizon(q))`, where `src(s)` bounds the events s
//! holds now: its published `lb` while a worker runs it, and `max(lb, next, inbox)`
//! when the pass saw it free before and after reading it (the board's claim word is
//! a seqlock). Horizons and lower bounds only rise.
//!
//! Why no snapshot is needed. Invariant: `lb(s)` is at most every event s handles
//! after publishing it. A partition publishes `min(next, h)` after draining its inbox,
//! where h is the horizon it ran to, and it posts its outboxes before publishing. A
//! message m that s sends to r was created while s handled an event at t >= lb(s), so
//! m's time is at least `lb(s) + latency`; a pass that read s's `lb` from before m was
//! posted covers m through s, and one that read it after sees m in r's `inbox_min`
//! (the post happens before the publication, the pass reads `lb` first). Chains of
//! messages through other partitions are covered the same way, so the computed
//! horizon never lets a partition run past an event that can still reach it,
//! whatever the other workers do meanwhile.
//!
//! Decisions that need the whole state at one instant (stop at the end time, an exit,
//! the release of the last primary component, idling for external input, errors, an
//! interrupt, the end of a segment) are taken by an *exclusive* pass: it sets the
//! attention flag, which keeps workers from claiming partitions, and runs once no
//! partition is claimed ([`Board::any_claimed`]). With nothing running, every
//! partition's next event and inbox are exact: the pass routes external input, takes
//! the decision ([`decide`]) from the exact state and the run control every partition
//! published ([`Control`]), and resets every horizon and lower bound to exact values.
//! A worker stops the world when it asks for such a decision, or when a pass finds
//! nothing to run and nothing running (the run is at its end, or waits for input).

use std::sync::atomic::{fence, Ordering};
use std::time::Instant;

use crate::component::Event;
use crate::engine::board::Board;
use crate::engine::control::{ExitReason, ExitRequest, ExitStatus};
use crate::engine::exec::{Shared, Stop, SERIAL_SEGMENT_BUDGET};
use crate::engine::horizon::Scratch;
use crate::engine::mailbox::{Batch, OUTSIDE};
use crate::engine::order::{EventKey, EXTERNAL_SOURCE};
use crate::engine::queue::Pending;
use crate::engine::EngineError;
use crate::stats::Distribution;
use crate::time::Tick;

/// The run control the partitions published, summed: what an exclusive pass decides on.
#[derive(Debug, Default)]
pub(crate) struct Control {
    /// The earliest exit request.
    pub exit: Option<ExitRequest>,
    /// Primary holds minus releases, holds ever, the latest release.
    pub held: i64,
    pub registered: u64,
    pub last_release: Option<Tick>,
    /// The error of the lowest partition that has one.
    pub error: Option<(usize, EngineError)>,
}

/// The buffers of the passes and what they keep from pass to pass (behind
/// `Shared::pass`).
#[derive(Debug)]
pub(crate) struct PassState {
    /// Per partition: its source value, the claim word read first, whether the pass saw
    /// it free throughout, and its pending minimum (when free).
    src: Vec<Tick>,
    seen: Vec<u64>,
    settled: Vec<bool>,
    pending: Vec<Tick>,
    arrivals: Vec<Tick>,
    scratch: Scratch,
    /// The highest lower bound of every partition's events a pass has seen.
    gvt: Option<Tick>,
    /// The sum over passes of the rise of `gvt`, each rise capped at the smallest
    /// lookahead: simulated progress, counting a jump over empty time once.
    pub progress: u64,
    /// Passes run in this segment.
    pub passes: u64,
    /// Whether an exclusive pass decided to run (a step then stops at the next).
    ran: bool,
    /// External inputs routed so far.
    pub ext_seq: u64,
    /// Wall time between passes.
    pub pass_ns: Distribution,
    last: Instant,
    started: Instant,
}

impl PassState {
    pub fn new(n: usize, ext_seq: u64) -> PassState {
        let now = Instant::now();
        PassState {
            src: vec![Tick::ZERO; n],
            seen: vec![0; n],
            settled: vec![false; n],
            pending: vec![Tick::MAX; n],
            arrivals: Vec::with_capacity(n),
            scratch: Scratch::default(),
            gvt: None,
            progress: 0,
            passes: 0,
            ran: false,
            ext_seq,
            pass_ns: Distribution::default(),
            last: now,
            started: now,
        }
    }
}

/// What a pass found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A free partition has an event before its horizon.
    Ready,
    /// Nothing to run until a running partition publishes (or another worker holds the
    /// pass, or the world could not be stopped yet: running partitions end soon).
    Wait,
    /// The segment is over; `Shared` holds why.
    Stopped,
}

/// Runs a pass unless another worker is running one. With `may_stop_world`, the pass is
/// exclusive when a decision is asked for, or when it finds nothing to run and nothing
/// running; otherwise it only raises horizons.
pub(crate) fn pass(sh: &Shared<'_>, may_stop_world: bool) -> Outcome {
    let Ok(mut guard) = sh.pass.try_lock() else {
        return Outcome::Wait;
    };
    if sh.is_stopped() {
        return Outcome::Stopped;
    }
    let ps = &mut *guard;
    ps.passes += 1;
    sh.passes.store(ps.passes, Ordering::Relaxed);
    let now = Instant::now();
    ps.pass_ns.record(now.duration_since(ps.last).as_nanos() as u64);
    ps.last = now;
    if let Some(p) = &sh.progress {
        let mut p = p.lock().unwrap_or_else(|e| e.into_inner());
        p.update(sh.board.frontier(), sh.board.handled(), sh.epoch_base + ps.passes, std::time::Duration::ZERO);
    }
    if !sh.attention.load(Ordering::Acquire) && wants_decision(sh, ps) {
        sh.attention.store(true, Ordering::SeqCst);
    }
    if !sh.attention.load(Ordering::Acquire) {
        let ready = concurrent(sh, ps);
        sh.idle.bump();
        if ready || !may_stop_world {
            return if ready { Outcome::Ready } else { Outcome::Wait };
        }
        if sh.board.claim.iter().any(|c| c.load(Ordering::Relaxed) & 1 == 1) {
            return Outcome::Wait;
        }
        sh.attention.store(true, Ordering::SeqCst);
    }
    if !may_stop_world || sh.board.any_claimed() {
        return Outcome::Wait;
    }
    let outcome = exclusive(sh, ps);
    sh.idle.bump();
    sh.idle.wake();
    outcome
}

/// Whether a decision only an exclusive pass can take is due: input to route, an
/// interrupt, or the end of the segment.
fn wants_decision(sh: &Shared<'_>, ps: &PassState) -> bool {
    if sh.external.has_pending() || sh.external.stop_requested() {
        return true;
    }
    if sh.limits.step {
        return false;
    }
    ps.passes >= sh.limits.max_passes || (sh.limits.time_budget && ps.started.elapsed() >= SERIAL_SEGMENT_BUDGET)
}

/// A pass while workers may be running partitions: raises horizons and the lower
/// bounds of free partitions. Returns whether a free partition can run.
fn concurrent(sh: &Shared<'_>, ps: &mut PassState) -> bool {
    let b = &sh.board;
    let n = b.claim.len();
    for q in 0..n {
        ps.seen[q] = b.claim[q].load(Ordering::Acquire);
        ps.src[q] = Tick(b.lb[q].load(Ordering::Acquire));
    }
    // Read after the lower bounds: a request or release published before a lower bound
    // this pass read is seen here.
    let cap = Tick(sh.cap.load(Ordering::Acquire).min(sh.exit_at.load(Ordering::Acquire)).min(sh.release_cap.load(Ordering::Acquire)));
    for q in 0..n {
        if ps.seen[q] & 1 == 0 {
            ps.pending[q] = Tick(b.pending(q));
        }
    }
    fence(Ordering::Acquire);
    for q in 0..n {
        ps.settled[q] = ps.seen[q] & 1 == 0 && b.claim[q].load(Ordering::Relaxed) == ps.seen[q];
        if ps.settled[q] {
            ps.src[q] = ps.src[q].max(ps.pending[q]);
        }
    }
    horizons(sh, ps, cap, false)
}

/// From `ps.src`: every partition's horizon (capped at `cap` and the exit cap) and
/// lower bound, stored (`exclusive`) or raised. Returns whether a settled partition
/// has an event before its horizon.
fn horizons(sh: &Shared<'_>, ps: &mut PassState, cap: Tick, exclusive: bool) -> bool {
    let b: &Board = &sh.board;
    let graph = &sh.wiring.graph;
    let n = ps.src.len();
    if n > 1 {
        graph.arrivals(&ps.src, &mut ps.scratch, &mut ps.arrivals);
    } else {
        ps.arrivals.clear();
        ps.arrivals.push(Tick::MAX);
    }
    // A partition that may end the run may do so at its lower bound: nobody runs past
    // that plus the exit delay. One partition needs no cap: its windows stop at its
    // own requests and releases.
    let exit_cap = if n > 1 {
        graph
            .exit_sources()
            .iter()
            .map(|&e| ps.src[e as usize].min(ps.arrivals[e as usize]))
            .min()
            .map_or(Tick::MAX, |d| d.saturating_add(sh.wiring.exit_delay))
    } else {
        Tick::MAX
    };
    let low = (0..n).map(|q| ps.src[q].min(ps.arrivals[q])).min().unwrap_or(Tick::MAX);
    // Synchronisation hooks cap every horizon at their next boundary.
    let (hook_cap, round) = sh.hooks.advance(low);
    let cap = cap.min(exit_cap).min(hook_cap);
    let mut ready = false;
    for q in 0..n {
        let d = ps.src[q].min(ps.arrivals[q]);
        let h = ps.arrivals[q].min(cap);
        if exclusive {
            b.horizon[q].store(h.0, Ordering::Release);
            b.lb[q].store(d.0, Ordering::Release);
        } else {
            b.horizon[q].fetch_max(h.0, Ordering::AcqRel);
            if ps.settled[q] {
                b.lb[q].fetch_max(d.0, Ordering::AcqRel);
            }
        }
        ready |= ps.settled[q] && ps.pending[q] < h.max(Tick(b.horizon[q].load(Ordering::Relaxed))).min(cap);
    }
    if round {
        // The workers serve the round (see `exec::serve_hooks`).
        sh.idle.bump();
        sh.idle.wake();
    }
    if low != Tick::MAX {
        if let Some(gvt) = ps.gvt {
            if low > gvt {
                let step = sh.wiring.graph.min_latency().unwrap_or(Tick::MAX);
                ps.progress = ps.progress.saturating_add((low.0 - gvt.0).min(step.0));
            }
        }
        ps.gvt = Some(ps.gvt.map_or(low, |g| g.max(low)));
    }
    ready
}

/// What an exclusive pass decided.
enum Decision {
    Stop(Stop),
    /// Nothing to do until external input arrives.
    Idle,
    /// Run, nothing past `cap`.
    Run { cap: Tick },
}

/// The exclusive pass: nothing is claimed while it runs (the attention flag is set).
fn exclusive(sh: &Shared<'_>, ps: &mut PassState) -> Outcome {
    let b = &sh.board;
    let n = b.claim.len();
    loop {
        // Read before routing, so input sent just before the last sender closed is
        // routed now (and counts as an event) or was never sent.
        let senders_open = sh.external.has_senders();
        let interrupted = sh.external.stop_requested();
        let frontier = b.frontier();
        // Input enters at the latest time a partition reached, never before a boundary
        // a synchronisation hook has done (see `Hooks::input_entry`).
        let present = sh.hooks.input_entry(frontier);
        while let Some((target, payload)) = sh.external.pop() {
            let key = EventKey::new(present, EXTERNAL_SOURCE, ps.ext_seq);
            ps.ext_seq += 1;
            let q = sh.wiring.partition_of[target.index()].index();
            let mut batch = Batch::new(OUTSIDE);
            batch.min_time = present;
            batch.events.push(Pending { key, target, body: Event::External { payload } });
            sh.mail[q].post(batch, &b.inbox_min[q], sh.solo);
        }
        for q in 0..n {
            ps.pending[q] = Tick(b.pending(q));
            ps.src[q] = ps.pending[q];
            ps.settled[q] = true;
        }
        let min_next = ps.pending.iter().copied().min().unwrap_or(Tick::MAX);
        // A boundary of a synchronisation hook that every partition reached is served
        // before anything is decided (the world stays stopped until it is).
        if sh.hooks.advance(min_next).1 || sh.hooks.in_round() {
            sh.idle.bump();
            sh.idle.wake();
            return Outcome::Wait;
        }
        let decision = {
            let control = sh.control.lock().unwrap_or_else(|e| e.into_inner());
            decide(sh, ps, &control, min_next, frontier, senders_open, interrupted)
        };
        match decision {
            Decision::Stop(stop) => {
                sh.finish(stop);
                return Outcome::Stopped;
            }
            Decision::Idle => {
                sh.external.wait();
                continue;
            }
            Decision::Run { cap } => {
                sh.cap.store(cap.0, Ordering::Release);
                sh.release_cap.store(u64::MAX, Ordering::Release);
                let exit_at = sh.control.lock().unwrap_or_else(|e| e.into_inner()).exit.as_ref().map_or(Tick::MAX, |r| r.at);
                sh.exit_at.store(exit_at.0, Ordering::Release);
                let ready = horizons(sh, ps, cap, true);
                sh.attention.store(false, Ordering::SeqCst);
                return if ready { Outcome::Ready } else { Outcome::Wait };
            }
        }
    }
}

/// The decision of an exclusive pass from the exact state: the earliest pending event
/// `min_next`, the latest time reached, the run control.
fn decide(
    sh: &Shared<'_>,
    ps: &mut PassState,
    control: &Control,
    min_next: Tick,
    frontier: Tick,
    senders_open: bool,
    interrupted: bool,
) -> Decision {
    let wiring = sh.wiring;
    let limits = &sh.limits;
    let stop = |reason, tick, code, message: String| Decision::Stop(Stop::Status(ExitStatus { reason, tick, code, message }));
    if let Some((_, e)) = &control.error {
        return stop(ExitReason::Error, frontier, 1, e.to_string());
    }
    if interrupted {
        return stop(ExitReason::Interrupted, frontier, 130, "interrupted".into());
    }
    // The earliest exit: a request, or the release of the last primary component.
    let primaries_done = (control.registered > 0 && control.held <= 0)
        .then(|| control.last_release.unwrap_or(Tick::ZERO))
        .map(|t| t.saturating_add(wiring.exit_delay));
    let request = &control.exit;
    let exit_at = request.as_ref().map_or(Tick::MAX, |r| r.at).min(primaries_done.unwrap_or(Tick::MAX));
    let limit = limits.max_ticks.min(limits.until);
    let end = exit_at.min(limit);
    if limits.step && ps.ran {
        return stop(ExitReason::Stepped, frontier, 0, "stepped one timestamp".into());
    }
    if exit_at != Tick::MAX && exit_at <= limit && min_next >= exit_at {
        return match (request, primaries_done) {
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
        return if limits.until < limits.max_ticks {
            stop(ExitReason::Paused, limit, 0, format!("paused at {limit}"))
        } else {
            stop(ExitReason::MaxTicks, limit, 0, format!("reached end time {limit}"))
        };
    }
    if min_next == Tick::MAX {
        if senders_open && !limits.step {
            return Decision::Idle;
        }
        let message = if control.held > 0 {
            format!("no events left while {} primary component(s) still hold", control.held)
        } else {
            "no events left".to_string()
        };
        return stop(ExitReason::Quiescent, frontier, 0, message);
    }
    if wants_decision(sh, ps) && !sh.external.has_pending() && !sh.external.stop_requested() {
        return Decision::Stop(Stop::Yield);
    }
    ps.ran = true;
    let cap = if limits.step { end.min(min_next.saturating_add(Tick(1))) } else { end };
    Decision::Run { cap }
}
