//! One partition's state and its event loop: the components it owns, its queue, and
//! the handling of one window of events.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crate::component::{Component, Event};
use crate::engine::context::{Context, Emitter};
use crate::engine::observe::{self, ComponentCost, EventSpan, Observer, PartitionLog};
use crate::engine::queue::Pending;
use crate::engine::wiring::Wiring;
use crate::engine::EngineError;
use crate::ids::{ComponentId, PartitionId};
use crate::time::Tick;

/// Events between two looks at a window's wall-clock deadline.
pub(crate) const DEADLINE_STRIDE: u64 = 16;

/// A component instance owned by a partition.
pub(crate) struct Slot {
    pub id: ComponentId,
    pub comp: Box<dyn Component>,
    /// Events this component has created so far (its next sequence number).
    pub seq: u64,
    /// Events and host time, counted only when the run is observed.
    pub cost: ComponentCost,
}

/// A partition. Aligned to two cache lines so that partitions stored side by side
/// (the engine keeps them in one `Vec`) never share a line: each worker writes its
/// partition's counters and queue ends on every event, and a shared line would
/// bounce between the cores (this halved PHOLD's speed on 2 workers).
#[repr(align(128))]
pub(crate) struct PartitionState {
    pub id: PartitionId,
    pub slots: Vec<Slot>,
    pub emit: Emitter,
    /// Time of the last handled event.
    pub frontier: Tick,
    /// Sampled event spans, recorded only when the run is observed.
    pub log: PartitionLog,
    /// The run control last added to the segment's totals (see `exec::publish`).
    pub published: Published,
}

/// What a partition last published of its run control: the totals of a segment count
/// the differences.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Published {
    pub held: i64,
    pub registered: u64,
    pub last_release: Option<Tick>,
}

/// Why a window ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowEnd {
    /// Every event before the horizon was handled.
    Horizon,
    /// The event budget ran out first.
    Budget,
    /// A component caused an engine error.
    Error,
}

impl PartitionState {
    pub fn new(id: PartitionId, n_partitions: usize) -> PartitionState {
        PartitionState {
            id,
            slots: Vec::new(),
            emit: Emitter::new(id, n_partitions),
            frontier: Tick::ZERO,
            log: PartitionLog::default(),
            published: Published::default(),
        }
    }

    /// All partitions merged into one partition 0 holding every component in id
    /// order, every pending event and the combined run-control state. The partitions'
    /// outboxes must be empty (they are between segments of the epoch loop).
    pub fn merge_all(parts: Vec<PartitionState>) -> PartitionState {
        let mut one = PartitionState::new(PartitionId(0), 1);
        for mut p in parts {
            debug_assert!(p.emit.outboxes.is_empty());
            for ev in p.emit.queue.take_all() {
                one.emit.queue.push(ev);
            }
            one.slots.append(&mut p.slots);
            one.log.spans.append(&mut p.log.spans);
            one.log.stride = one.log.stride.max(p.log.stride);
            let (a, b) = (&mut one.emit, p.emit);
            a.cancelled.extend(b.cancelled);
            if let Some(req) = &b.exit {
                a.exit = crate::engine::control::ExitRequest::earliest(a.exit.take(), req);
            }
            a.primary_held += b.primary_held;
            a.primaries_registered += b.primaries_registered;
            a.last_release = a.last_release.max(b.last_release);
            if a.error.is_none() {
                a.error = b.error;
            }
            a.handled += b.handled;
            one.frontier = one.frontier.max(p.frontier);
        }
        one.slots.sort_by_key(|s| s.id);
        one
    }

    /// Calls `f` on every component with a context at time `now`.
    pub fn for_each_component(
        &mut self,
        wiring: &Wiring,
        now: Tick,
        mut f: impl FnMut(&mut dyn Component, &mut Context<'_>),
    ) -> Result<(), EngineError> {
        for slot in &mut self.slots {
            let mut ctx = Context { now, me: slot.id, seq: &mut slot.seq, wiring, out: &mut self.emit };
            let comp: &mut dyn Component = &mut *slot.comp;
            catch_unwind(AssertUnwindSafe(|| f(comp, &mut ctx))).map_err(|payload| EngineError::Panic {
                component: wiring.paths[slot.id.index()].clone(),
                message: panic_message(&payload),
            })?;
            if let Some(e) = self.emit.error.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Handles events with time below `horizon`, at most `budget` of them, and stops
    /// early (as with the budget) once the wall clock passes `deadline`, which is looked
    /// at every [`DEADLINE_STRIDE`] events. Ending a window early is always safe: the
    /// rest of it is handled in the next epoch, in the same order.
    ///
    /// A component's panic ends the window with [`WindowEnd::Error`] naming that
    /// component; the panicking event counts as handled. The panic is caught once
    /// around the whole window rather than around each event, which keeps the
    /// per-event path free of unwinding bookkeeping.
    /// With an `observer`, every event is timed for its component's cost and sampled
    /// into the partition's span log.
    pub fn run_window(
        &mut self,
        wiring: &Wiring,
        horizon: Tick,
        budget: u64,
        deadline: Option<Instant>,
        observer: Option<&Observer>,
    ) -> WindowEnd {
        let mut current = ComponentId(0);
        let window = AssertUnwindSafe(|| match observer {
            None => self.window::<false>(wiring, horizon, budget, deadline, &mut current, None),
            Some(o) => self.window::<true>(wiring, horizon, budget, deadline, &mut current, Some(o)),
        });
        match catch_unwind(window) {
            Ok(end) => end,
            Err(payload) => {
                self.emit.handled += 1;
                self.emit.fail_panic(wiring.paths[current.index()].clone(), panic_message(&payload));
                WindowEnd::Error
            }
        }
    }

    /// The event loop of [`PartitionState::run_window`]; `current` names the
    /// component being handed an event, for the panic report.
    #[inline(always)]
    fn window<const OBSERVE: bool>(
        &mut self,
        wiring: &Wiring,
        mut horizon: Tick,
        budget: u64,
        deadline: Option<Instant>,
        current: &mut ComponentId,
        observer: Option<&Observer>,
    ) -> WindowEnd {
        let mut left = budget;
        horizon = horizon.min(self.local_stop(wiring));
        loop {
            if left == 0 {
                return WindowEnd::Budget;
            }
            if let Some(d) = deadline {
                if (budget - left) % DEADLINE_STRIDE == DEADLINE_STRIDE - 1 && Instant::now() >= d {
                    return WindowEnd::Budget;
                }
            }
            let Some(Pending { key, target, body }) = self.emit.queue.pop_before(horizon.0) else {
                return WindowEnd::Horizon;
            };
            left -= 1;
            if let Event::Timer { id, .. } = body {
                if !self.emit.cancelled.is_empty() && self.emit.cancelled.remove(&(target, id.0)) {
                    continue;
                }
            }
            self.frontier = key.time;
            // Start loading the next event's component while this one runs.
            if let Some(next) = self.emit.queue.peek_target() {
                let s = &self.slots[wiring.local_index[next.index()] as usize];
                crate::engine::queue::prefetch(&*s.comp);
            }
            let slot = &mut self.slots[wiring.local_index[target.index()] as usize];
            *current = target;
            let mut ctx = Context { now: key.time, me: target, seq: &mut slot.seq, wiring, out: &mut self.emit };
            let started = OBSERVE.then(Instant::now);
            slot.comp.handle(body, &mut ctx);
            if let (Some(started), Some(o)) = (started, observer) {
                let dur_ns = started.elapsed().as_nanos() as u64;
                slot.cost.events += 1;
                slot.cost.host_ns += dur_ns;
                let span = EventSpan { worker: observe::worker(), component: target, start_ns: o.ns(started), dur_ns };
                self.log.span(span);
            }
            self.emit.handled += 1;
            if self.emit.attention {
                self.emit.attention = false;
                if self.emit.error.is_some() {
                    return WindowEnd::Error;
                }
                horizon = horizon.min(self.local_stop(wiring));
            }
        }
    }

    /// The stop time this partition knows of by itself: its own exit requests, and,
    /// when it is the only partition, the release of the last primary component.
    /// (With several partitions the epoch decision finds the global stop.)
    #[inline]
    fn local_stop(&self, wiring: &Wiring) -> Tick {
        let e = &self.emit;
        let mut stop = e.exit.as_ref().map_or(Tick::MAX, |r| r.at);
        if e.alone && e.primaries_registered > 0 && e.primary_held <= 0 {
            stop = stop.min(e.last_release.unwrap_or(Tick::ZERO).saturating_add(wiring.exit_delay));
        }
        stop
    }

    /// Drops the cancelled timers at the front of the queue, so that [`Self::next_time`]
    /// is a live event's: a timer cancelled when a component went quiet (a heartbeat
    /// stopped with the last dispatch) must not keep the partition looking busy, nor
    /// move simulated time on to it while the run waits for input.
    pub fn drop_cancelled_front(&mut self) {
        let e = &mut self.emit;
        while !e.cancelled.is_empty() {
            let cancelled = &mut e.cancelled;
            let dead = |target: ComponentId, body: &Event| match body {
                Event::Timer { id, .. } => cancelled.remove(&(target, id.0)),
                _ => false,
            };
            if !e.queue.pop_if_dead(dead) {
                break;
            }
        }
    }

    /// The time of the earliest pending event.
    pub fn next_time(&self) -> Tick {
        self.emit.queue.min_time().map_or(Tick::MAX, Tick)
    }
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
