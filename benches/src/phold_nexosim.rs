//! PHOLD on the nexosim 1.0 crate, as a side-by-side peer of simdojo's.
//!
//! One nexosim model per LP, each holding a [`LpState`]. One tick is one
//! nanosecond of nexosim time (`MonotonicTime::EPOCH + ticks ns`). Two ways
//! to move an event from LP `i` at time `t` to LP `j` at `t + delay` are
//! implemented ([`Via`]):
//!
//! ```text
//!  ports:     LP i ──Output<u64>[j]──► LP j.receive(at) ──cx.schedule_event(at)──► LP j.event
//!  scheduler: LP i ──global Scheduler.schedule_event(at, EventId[j])──────────────► LP j.event
//!  local (both):                         LP i ──cx.schedule_event(at)──────────────► LP i.event
//! ```
//!
//! In both transports a local event (`dest == i`, most of them) is
//! self-scheduled through the LP's context; only remote events differ. The
//! ports transport needs `N * (N - 1)` output connections (nexosim outputs
//! broadcast, they cannot address one of many targets), the scheduler one needs
//! `N` event sources. Events scheduled through the global scheduler share one
//! origin, and nexosim runs all same-time events of one origin as a single
//! sequential future; self-scheduled events have one origin per LP, so they
//! can run on different workers.
//!
//! Measured on a small run (256 LPs, 500 ns, one worker), the scheduler
//! transport was about twice as fast as the ports one and used far less
//! memory, so it is the default. Self-scheduling local events was as fast as
//! sending them through the global scheduler with one worker and several
//! times faster with two.
//!
//! Startup: one broadcast event source calls every LP's `start` input at time
//! zero, which makes its `K` initial sends through the chosen transport. The
//! run then calls `Simulation::step` until simulated time stops advancing;
//! events that would arrive at or after the end time are never scheduled
//! (they would never be handled), so that happens right after the last
//! handled event. The number of `step` calls that handled events is the
//! outcome's `epochs`. Final states are read back with one query per LP.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use nexosim::model::{schedulable, BuildContext, Context, Model, ProtoModel};
use nexosim::ports::{EventSource, Output, QuerySource};
use nexosim::simulation::{
    EventId, ExecutionError, Mailbox, QueryId, Scheduler, SimInit, Simulation, SimulationError,
};
use nexosim::time::MonotonicTime;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::phold_outcome::PholdOutcome;
use crate::phold_spec::{arrival, LpState, PholdParams, Send, Ticks};

/// How events travel between LPs on nexosim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// Output port to the destination, which self-schedules the event.
    Ports,
    /// The global scheduler, straight to the destination's event input.
    Scheduler,
}

impl Via {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Via::Ports => "ports",
            Via::Scheduler => "scheduler",
        }
    }
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure of the nexosim run. All variants are fatal for the run.
///
/// nexosim's own errors may hold a panic payload, which is not `Sync`; they
/// are kept here as their rendered messages so that this error can cross
/// threads and go into `anyhow`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum NexosimPholdError {
    /// Building the simulation bench failed.
    #[error("nexosim could not initialise the PHOLD bench: {0}")]
    Init(String),
    /// Processing events failed (a model panicked, a deadlock, ...).
    #[error("nexosim failed while {stage}: {message}")]
    Execution {
        /// What the run was doing.
        stage: &'static str,
        /// The nexosim error, rendered.
        message: String,
    },
}

impl From<SimulationError> for NexosimPholdError {
    fn from(err: SimulationError) -> Self {
        Self::Init(err.to_string())
    }
}

/// The outcome of a nexosim run plus how long its phases took.
#[derive(Clone, Debug, PartialEq)]
pub struct NexosimRun {
    /// Final LP states; `epochs` counts `step` calls that handled events.
    pub outcome: PholdOutcome,
    /// Building models, connections and the simulation.
    pub setup: Duration,
    /// From the startup broadcast to the last step.
    pub wall: Duration,
}

/// Converts spec ticks to nexosim time (one tick = one nanosecond).
pub fn time_of(ticks: Ticks) -> MonotonicTime {
    MonotonicTime::EPOCH + Duration::from_nanos(ticks.0)
}

/// Converts nexosim time back to spec ticks.
pub fn ticks_of(time: MonotonicTime) -> Ticks {
    // Simulated time never precedes the epoch it starts at, and never exceeds
    // 2^53 ns (the end time bound), so the nanoseconds fit a u64.
    Ticks(time.duration_since(MonotonicTime::EPOCH).as_nanos() as u64)
}

/// Schedules one event through a model's own context.
fn self_schedule<M: Model>(cx: &Context<M>, at: Ticks, id: &nexosim::model::SchedulableId<M, ()>) {
    // `at` is at least one lookahead (>= 1 tick = 1 ns) after the current time,
    // so nexosim's "deadline must be in the future" check cannot fail.
    cx.schedule_event(time_of(at), id, ())
        .expect("PHOLD events are always scheduled in the future");
}

/// An LP whose events travel through output ports.
#[derive(Serialize, Deserialize)]
pub struct PortLp {
    state: LpState,
    params: PholdParams,
    /// `links[j]` is connected to LP `j`'s `receive`; `links[i]` stays empty.
    links: Vec<Output<u64>>,
}

#[Model]
impl PortLp {
    /// Time-zero input: makes the LP's `K` initial sends.
    pub async fn start(&mut self, _: (), cx: &Context<Self>) {
        for _ in 0..self.params.events_per_lp {
            let send = self.state.generate(&self.params);
            self.dispatch(Ticks(0), send, cx).await;
        }
    }

    /// An event for this LP, sent at the current time, to handle at `at`.
    pub fn receive(&mut self, at: u64, cx: &Context<Self>) {
        self_schedule(cx, Ticks(at), schedulable!(Self::event));
    }

    /// Handles one event at the current time.
    #[nexosim(schedulable)]
    pub async fn event(&mut self, _: (), cx: &Context<Self>) {
        let now = ticks_of(cx.time());
        let send = self.state.handle(now, &self.params);
        self.dispatch(now, send, cx).await;
    }

    /// Replies with the LP's state.
    pub async fn report(&mut self, _: ()) -> LpState {
        self.state.clone()
    }

    async fn dispatch(&mut self, now: Ticks, send: Send, cx: &Context<Self>) {
        let Some(at) = arrival(now, send, self.params.end_time) else {
            return;
        };
        if send.dest == self.state.id() {
            self_schedule(cx, at, schedulable!(Self::event));
        } else {
            self.links[send.dest.index()].send(at.0).await;
        }
    }
}

/// The scheduler handle and per-LP event inputs, known only after `init`.
#[derive(Debug)]
pub struct Routes {
    scheduler: Scheduler,
    inputs: Vec<EventId<()>>,
}

/// Shared, set-once routing table of the scheduler transport.
type SharedRoutes = Arc<OnceLock<Routes>>;

/// An LP whose events travel through the global scheduler.
#[derive(Serialize, Deserialize)]
pub struct SchedulerLp {
    state: LpState,
    params: PholdParams,
}

#[Model(type Env = SharedRoutes)]
impl SchedulerLp {
    /// Time-zero input: makes the LP's `K` initial sends.
    pub fn start(&mut self, _: (), cx: &Context<Self>, routes: &mut SharedRoutes) {
        for _ in 0..self.params.events_per_lp {
            let send = self.state.generate(&self.params);
            self.dispatch(Ticks(0), send, cx, routes);
        }
    }

    /// Handles one event at the current time.
    #[nexosim(schedulable)]
    pub fn event(&mut self, _: (), cx: &Context<Self>, routes: &mut SharedRoutes) {
        let now = ticks_of(cx.time());
        let send = self.state.handle(now, &self.params);
        self.dispatch(now, send, cx, routes);
    }

    /// Replies with the LP's state.
    pub async fn report(&mut self, _: ()) -> LpState {
        self.state.clone()
    }

    fn dispatch(&mut self, now: Ticks, send: Send, cx: &Context<Self>, routes: &SharedRoutes) {
        let Some(at) = arrival(now, send, self.params.end_time) else {
            return;
        };
        if send.dest == self.state.id() {
            self_schedule(cx, at, schedulable!(Self::event));
            return;
        }
        // `run_nexosim` fills the routes before any input is called.
        let routes = routes.get().expect("routes are set before the first event");
        // `at` is at least one lookahead (>= 1 ns) in the future.
        routes
            .scheduler
            .schedule_event(time_of(at), &routes.inputs[send.dest.index()], ())
            .expect("PHOLD events are always scheduled in the future");
    }
}

/// Prototype that hands a [`SchedulerLp`] its shared routes as environment.
struct SchedulerLpProto {
    model: SchedulerLp,
    routes: SharedRoutes,
}

impl ProtoModel for SchedulerLpProto {
    type Model = SchedulerLp;

    fn build(self, _: &mut BuildContext<Self>) -> (SchedulerLp, SharedRoutes) {
        (self.model, self.routes)
    }
}

fn exec(stage: &'static str) -> impl FnOnce(ExecutionError) -> NexosimPholdError {
    move |err| NexosimPholdError::Execution {
        stage,
        message: err.to_string(),
    }
}

/// A built bench: the simulation plus its startup and readout endpoints.
struct Bench {
    sim: Simulation,
    start: EventId<()>,
    reports: Vec<QueryId<(), LpState>>,
}

fn build_ports(params: &PholdParams, bench: SimInit) -> Result<Bench, NexosimPholdError> {
    let n = params.lps as usize;
    let mailboxes: Vec<Mailbox<PortLp>> = (0..n).map(|_| Mailbox::new()).collect();
    let mut start = EventSource::new();
    let mut reports = Vec::with_capacity(n);
    let mut lps = Vec::with_capacity(n);
    for id in params.lp_ids() {
        let links = (0..n)
            .map(|j| {
                let mut out = Output::new();
                if j != id.index() {
                    out.connect(PortLp::receive, &mailboxes[j]);
                }
                out
            })
            .collect();
        lps.push(PortLp {
            state: LpState::new(id, params.seed),
            params: *params,
            links,
        });
        start = start.connect(PortLp::start, &mailboxes[id.index()]);
    }
    let mut bench = bench;
    let start = start.register(&mut bench);
    for mailbox in &mailboxes {
        reports.push(
            QuerySource::new()
                .connect(PortLp::report, mailbox)
                .register(&mut bench),
        );
    }
    for ((lp, mailbox), id) in lps.into_iter().zip(mailboxes).zip(params.lp_ids()) {
        bench = bench.add_model(lp, mailbox, &id.to_string());
    }
    let sim = bench.init(MonotonicTime::EPOCH)?;
    Ok(Bench {
        sim,
        start,
        reports,
    })
}

fn build_scheduler(params: &PholdParams, bench: SimInit) -> Result<Bench, NexosimPholdError> {
    let n = params.lps as usize;
    let mailboxes: Vec<Mailbox<SchedulerLp>> = (0..n).map(|_| Mailbox::new()).collect();
    let routes: SharedRoutes = Arc::default();
    let mut bench = bench;
    let mut start = EventSource::new();
    let mut inputs = Vec::with_capacity(n);
    let mut reports = Vec::with_capacity(n);
    for mailbox in &mailboxes {
        start = start.connect(SchedulerLp::start, mailbox);
        inputs.push(
            EventSource::new()
                .connect(SchedulerLp::event, mailbox)
                .register(&mut bench),
        );
        reports.push(
            QuerySource::new()
                .connect(SchedulerLp::report, mailbox)
                .register(&mut bench),
        );
    }
    let start = start.register(&mut bench);
    for (mailbox, id) in mailboxes.into_iter().zip(params.lp_ids()) {
        let proto = SchedulerLpProto {
            model: SchedulerLp {
                state: LpState::new(id, params.seed),
                params: *params,
            },
            routes: Arc::clone(&routes),
        };
        bench = bench.add_model(proto, mailbox, &id.to_string());
    }
    let sim = bench.init(MonotonicTime::EPOCH)?;
    let filled = routes.set(Routes {
        scheduler: sim.scheduler(),
        inputs,
    });
    // The OnceLock was created empty above and is set only here.
    debug_assert!(filled.is_ok());
    Ok(Bench {
        sim,
        start,
        reports,
    })
}

/// Runs PHOLD on nexosim with `workers` executor threads.
pub fn run_nexosim(
    params: &PholdParams,
    workers: usize,
    via: Via,
) -> Result<NexosimRun, NexosimPholdError> {
    let setup_start = Instant::now();
    let bench = SimInit::with_num_threads(workers);
    let Bench {
        mut sim,
        start,
        reports,
    } = match via {
        Via::Ports => build_ports(params, bench)?,
        Via::Scheduler => build_scheduler(params, bench)?,
    };
    let setup = setup_start.elapsed();

    let run_start = Instant::now();
    sim.process_event(&start, ())
        .map_err(exec("making the startup sends"))?;
    let mut steps = 0u64;
    loop {
        let before = sim.time();
        sim.step().map_err(exec("stepping"))?;
        if sim.time() == before {
            break;
        }
        steps += 1;
    }
    let wall = run_start.elapsed();

    let lps = reports
        .iter()
        .map(|query| sim.process_query(query, ()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(exec("reading the final LP states"))?;
    Ok(NexosimRun {
        outcome: PholdOutcome {
            lps,
            epochs: Some(steps),
        },
        setup,
        wall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phold_heap::run_heap;
    use crate::phold_spec::PholdRequest;

    fn params(lps: u64, remote: f64, end_time_ns: f64) -> PholdParams {
        PholdParams::new(&PholdRequest {
            lps,
            events_per_lp: 3,
            remote,
            lookahead_ns: 1.0,
            mean_ns: 1.0,
            end_time_ns,
            seed: 5,
        })
        .expect("valid test parameters")
    }

    fn check_against_heap(p: &PholdParams) {
        let heap = run_heap(p);
        assert!(heap.events() > 0);
        for workers in [1, 2] {
            for via in [Via::Ports, Via::Scheduler] {
                let run = run_nexosim(p, workers, via).expect("nexosim run");
                assert_eq!(run.outcome.lps, heap.lps, "{via} with {workers} workers");
                assert_eq!(run.outcome.digest(), heap.digest());
                // One step per distinct event timestamp.
                assert_eq!(
                    run.outcome.epochs, heap.epochs,
                    "{via} with {workers} workers"
                );
            }
        }
    }

    #[test]
    fn matches_heap_with_remote_traffic() {
        check_against_heap(&params(16, 0.5, 60.0));
    }

    #[test]
    fn matches_heap_all_remote_and_all_local() {
        check_against_heap(&params(5, 1.0, 40.0));
        check_against_heap(&params(7, 0.0, 40.0));
    }

    #[test]
    fn matches_heap_with_a_single_lp() {
        check_against_heap(&params(1, 0.5, 40.0));
    }

    #[test]
    fn time_conversion_round_trips() {
        for t in [0, 1, 999_999_999, 1_000_000_000, 3_000_000_123] {
            assert_eq!(ticks_of(time_of(Ticks(t))), Ticks(t));
        }
    }

    #[test]
    fn zero_end_time_handles_nothing() {
        let run = run_nexosim(&params(4, 0.5, 0.0), 1, Via::Scheduler).expect("run");
        assert_eq!(run.outcome.events(), 0);
        assert_eq!(run.outcome.epochs, Some(0));
    }
}
