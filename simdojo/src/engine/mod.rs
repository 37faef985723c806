//! The engine: builds a [`Topology`] into components on partitions and runs them.
//!
//! ```text
//!  Topology ──build──▶ Simulation ──run / run_until / step──▶ ExitStatus
//!     │                   │  partitions: components + event queue, one worker each
//!     │                   │  wiring: port -> (component, port, latency), shared
//!     └─ assignment ──────┘  checkpoint() / restore() at any stop
//! ```
//!
//! See `order` for the deterministic event order and `exec` for the epoch loop.

mod board;
mod checkpoint;
mod context;
mod control;
mod exec;
mod external;
mod hooks;
mod horizon;
mod mailbox;
mod observe;
pub mod order;
mod partition_state;
mod pass;
mod progress;
mod queue;
mod wait;
mod wiring;

use crate::resources::Resources;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use checkpoint::Checkpoint;
pub use context::Context;
pub use control::{ExitReason, ExitStatus};
pub use exec::SyncStats;
pub use observe::{ComponentCost, EventSpan, Observation, Parallelism, WaitSpan, WindowSpan, WorkerLoad};
pub use external::{ExternalSender, StopHandle};
pub use hooks::{SyncHook, SyncPoint, SyncShare, MAX_SYNC_HOOKS};

use crate::component::{BuildContext, BuildError, Component, Event};
use crate::engine::context::Emitter;
use crate::engine::exec::{Limits, SegmentSetup, Shared, Stop};
use crate::engine::external::ExternalInbox;
use crate::engine::partition_state::{PartitionState, Slot};
use crate::engine::wiring::{Binding, FabricWiring, PortWiring, Wiring};
use crate::ids::{ComponentId, FabricId, FabricMember, PartitionId, PortIdx};
use crate::registry;
use crate::stats::StatsReport;
use crate::topology::SourceLoc;
use crate::time::Tick;
use crate::topology::{LinkKind, Topology};

/// An engine error. Build errors are fatal for the build; run-time errors end the
/// run with `ExitReason::Error` and leave the simulation inspectable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A component's type is not registered.
    #[error("component `{component}`: unknown type `{type_name}`")]
    UnknownType {
        /// Component path.
        component: String,
        /// The type name.
        type_name: String,
    },
    /// A parameter is unknown or has the wrong kind.
    #[error("{}component `{component}`: {problem}", at(origin))]
    Param {
        /// Component path.
        component: String,
        /// Where the component was declared, if it came from a file.
        origin: Option<SourceLoc>,
        /// What is wrong.
        problem: String,
    },
    /// A component's `build` failed (the reason is part of the message, not a separate
    /// error source, so a chain of causes does not print it twice).
    #[error("{}component `{component}`: {reason}", at(origin))]
    Build {
        /// Component path.
        component: String,
        /// Where the component was declared, if it came from a file.
        origin: Option<SourceLoc>,
        /// Why.
        reason: BuildError,
    },
    /// A link or fabric is invalid (unopened port, type mismatch, zero latency...).
    #[error("{0}")]
    Wiring(String),
    /// The partition assignment does not fit the topology.
    #[error("partition assignment: {0}")]
    Assignment(String),
    /// More components than event keys can name.
    #[error("topology has {0} components; the engine supports at most {max}", max = order::MAX_COMPONENTS - 1)]
    TooManyComponents(usize),
    /// A component created more events than its sequence numbers allow.
    #[error("component `{component}` exhausted its 2^40 event sequence numbers")]
    SequenceOverflow {
        /// Component path.
        component: String,
    },
    /// A component sent on a port that cannot send.
    #[error("component `{component}` sent on port `{port}`, which {problem}")]
    BadSend {
        /// Component path.
        component: String,
        /// Port name.
        port: String,
        /// Why it cannot send.
        problem: String,
    },
    /// A component panicked while handling an event.
    #[error("component `{component}` panicked: {message}")]
    Panic {
        /// Component path.
        component: String,
        /// The panic message.
        message: String,
    },
    /// A component broke the lifecycle contract.
    #[error("component `{component}` {problem}")]
    Lifecycle {
        /// Component path.
        component: String,
        /// What it did.
        problem: String,
    },
    /// A checkpoint could not be written or restored.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// An event arrived in a partition's past: the synchronization let a partition run
    /// ahead of what another could still send it. An engine bug, reported rather than
    /// silently reordered.
    #[error("causality violated: {0}")]
    Causality(String),
}

/// Below this much work per round (the time all partitions of a segment spent handling
/// events, waits excluded, per smallest lookahead of simulated progress), worker threads
/// cost more than they gain: every round the partitions' progress must cross between
/// cores (about a microsecond on 2 cores), and PHOLD breaks even at about 250 events
/// (~15 us) per round. Measured as time, not events, because a GPU model's events (a
/// compute unit's quantum of hundreds of wave-instructions) are heavy; per round of
/// simulated progress, not per pass, because threads pass more often than one thread
/// does for the same progress.
pub const PARALLEL_MIN_EPOCH_WORK: std::time::Duration = std::time::Duration::from_micros(15);
/// After this many consecutive light segments a run merges its partitions into one
/// for good (one partition needs no synchronization at all).
pub const LIGHT_SEGMENTS_BEFORE_MERGE: u32 = 16;
/// Passes per segment on one thread (short: the first one is the probe).
const SERIAL_SEGMENT_EPOCHS: u64 = 64;
/// Passes per segment on worker threads.
const THREADED_SEGMENT_EPOCHS: u64 = 1 << 16;

/// The ports a component opened while it was built: name -> (index, message type).
type OpenedPorts = BTreeMap<String, (PortIdx, registry::MessageKind)>;

/// How to run a topology.
#[derive(Clone, Debug, Default)]
pub struct SimConfig {
    /// The partition of each component; `None` puts everything in one partition.
    pub assignment: Option<Vec<PartitionId>>,
    /// Worker threads; `None` (or more than there are partitions) runs one per
    /// partition. With fewer workers than partitions the workers claim partitions
    /// anew every epoch, so a worker on a slower core simply handles fewer of them.
    pub workers: Option<usize>,
    /// Overrides the topology's end time.
    pub max_ticks: Option<Tick>,
    /// Show a live progress line when standard error is a terminal.
    pub progress: bool,
    /// Keep the given partitions on their threads for the whole run, even when its
    /// epochs are too small to pay for them (tests of the parallel machinery use it;
    /// otherwise the engine may merge partitions, see `Simulation::run`).
    pub fixed_partitions: bool,
    /// Shared resources given to the components at build time (see [`crate::resources`]);
    /// components may add more, and [`Simulation::resource`] reaches them afterwards.
    pub resources: Resources,
    /// Record where wall time goes ([`Simulation::observation`]): per-component events
    /// and host time, windows per partition and epoch, barrier waits, sampled event
    /// spans. Each event is then timed, which slows the run.
    pub observe: bool,
}

/// Counters of a run that depend on the decomposition (unlike [`StatsReport`]).
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Events handled, all partitions.
    pub events: u64,
    /// Synchronization counters.
    pub sync: SyncStats,
    /// Number of partitions (worker threads).
    pub partitions: usize,
}

/// A built simulation.
pub struct Simulation {
    wiring: Arc<Wiring>,
    parts: Vec<PartitionState>,
    external: Arc<ExternalInbox>,
    max_ticks: Tick,
    now: Tick,
    ext_seq: u64,
    progress: bool,
    summary: RunSummary,
    topology_hash: u64,
    last_status: Option<ExitStatus>,
    /// Whether the last multi-partition segment's epochs were heavy enough for threads.
    heavy: bool,
    /// Consecutive light multi-partition segments.
    light_segments: u32,
    /// `SimConfig::fixed_partitions`.
    fixed: bool,
    /// `SimConfig::workers`: the most worker threads a segment uses.
    workers: usize,
    /// Shared resources (`SimConfig::resources` plus what components added).
    resources: Resources,
    /// The recorder, when `SimConfig::observe`.
    observer: Option<Arc<observe::Observer>>,
    /// The worker threads the run was given: `SimConfig::workers`, at most one per
    /// partition of the plan (what an observation reports, idle workers included).
    requested_workers: usize,
    /// The synchronisation hooks the components registered; their shares are the
    /// requested workers.
    hooks: Arc<hooks::Hooks>,
    /// The smallest cross-partition latency of the partitioning built (kept when the
    /// partitions are merged: an observation's parallelism is judged by it).
    lookahead: Option<Tick>,
}

impl Simulation {
    /// Builds every component, wires the links, calls `init` and `startup`.
    pub fn build(topology: &Topology, config: &SimConfig) -> Result<Simulation, EngineError> {
        let mut sim = Simulation::construct(topology, config)?;
        let wiring = sim.wiring.clone();
        for part in &mut sim.parts {
            part.for_each_component(&wiring, Tick::ZERO, |c, ctx| c.startup(ctx))?;
        }
        sim.deliver_outboxes();
        Ok(sim)
    }

    /// Builds the components and wiring and calls `init`.
    fn construct(topology: &Topology, config: &SimConfig) -> Result<Simulation, EngineError> {
        let n = topology.components.len();
        if n >= order::MAX_COMPONENTS as usize {
            return Err(EngineError::TooManyComponents(n));
        }
        let assignment = match &config.assignment {
            Some(a) if a.len() != n => {
                return Err(EngineError::Assignment(format!("{} entries for {n} components", a.len())))
            }
            Some(a) => a.clone(),
            None => vec![PartitionId(0); n],
        };
        let n_parts = assignment.iter().map(|p| p.index() + 1).max().unwrap_or(1);
        let mut counts = vec![0u32; n_parts];
        for p in &assignment {
            counts[p.index()] += 1;
        }
        if let Some(empty) = counts.iter().position(|&c| c == 0) {
            return Err(EngineError::Assignment(format!("partition {empty} has no components")));
        }

        // Port names connected per component.
        let mut connected: Vec<Vec<String>> = vec![Vec::new(); n];
        let mut latencies: Vec<Vec<(String, Tick)>> = vec![Vec::new(); n];
        let check_component = |id: ComponentId, what: &str| {
            if id.index() >= n {
                Err(EngineError::Wiring(format!("{what} names component #{id}, but there are {n}")))
            } else {
                Ok(())
            }
        };
        for (i, l) in topology.links.iter().enumerate() {
            check_component(l.a.component, &format!("link {i}"))?;
            check_component(l.b.component, &format!("link {i}"))?;
            connected[l.a.component.index()].push(l.a.port.clone());
            connected[l.b.component.index()].push(l.b.port.clone());
            latencies[l.a.component.index()].push((l.a.port.clone(), l.latency));
            latencies[l.b.component.index()].push((l.b.port.clone(), l.latency));
        }
        for (i, f) in topology.fabrics.iter().enumerate() {
            for m in &f.members {
                check_component(m.component, &format!("fabric {i}"))?;
                connected[m.component.index()].push(m.port.clone());
                latencies[m.component.index()].push((m.port.clone(), f.latency));
            }
        }

        // Build every component.
        let mut built: Vec<(Box<dyn Component>, OpenedPorts)> = Vec::with_capacity(n);
        let mut ends_run = Vec::with_capacity(n);
        let mut hooks: Vec<Arc<dyn SyncHook>> = Vec::new();
        for (i, decl) in topology.components.iter().enumerate() {
            let ty = registry::lookup(&decl.type_name).ok_or_else(|| EngineError::UnknownType {
                component: decl.path.clone(),
                type_name: decl.type_name.clone(),
            })?;
            let params = ty
                .resolve(&decl.params)
                .map_err(|e| e.to_string())
                .map_err(|problem| EngineError::Param { component: decl.path.clone(), origin: decl.origin.clone(), problem })?;
            let mut ctx = BuildContext::new(ComponentId::from_index(i), &decl.path, &params, ty.ports, &connected[i], config.resources.clone(), &latencies[i]);
            let comp = (ty.build)(&mut ctx)
                .map_err(|reason| EngineError::Build { component: decl.path.clone(), origin: decl.origin.clone(), reason })?;
            ends_run.push(ctx.ends_run);
            for hook in ctx.hooks {
                if !hooks.iter().any(|h| Arc::ptr_eq(h, &hook)) {
                    if hooks.len() == MAX_SYNC_HOOKS {
                        return Err(EngineError::Build {
                            component: decl.path.clone(),
                            origin: decl.origin.clone(),
                            reason: BuildError::Invalid(format!("more than {MAX_SYNC_HOOKS} synchronisation hooks")),
                        });
                    }
                    hooks.push(hook);
                }
            }
            built.push((comp, ctx.opened));
        }

        // Ports by local index.
        let mut ports: Vec<Vec<PortWiring>> = built
            .iter()
            .map(|(_, opened)| {
                let mut v: Vec<(PortIdx, PortWiring)> = opened
                    .iter()
                    .map(|(name, (idx, kind))| {
                        (*idx, PortWiring { name: name.clone(), binding: Binding::Unconnected, message: *kind })
                    })
                    .collect();
                v.sort_by_key(|(idx, _)| *idx);
                v.into_iter().map(|(_, w)| w).collect()
            })
            .collect();
        let path = |id: ComponentId| topology.components[id.index()].path.as_str();
        let resolve = |id: ComponentId, port: &str| -> Result<PortIdx, EngineError> {
            built[id.index()].1.get(port).map(|(idx, _)| *idx).ok_or_else(|| {
                EngineError::Wiring(format!("component `{}` did not open port `{port}` named by a link", path(id)))
            })
        };
        let mut max_latency = Tick(1);
        for l in &topology.links {
            let (a, b) = (l.a.component, l.b.component);
            let (pa, pb) = (resolve(a, &l.a.port)?, resolve(b, &l.b.port)?);
            let what = || format!("link {}.{} -> {}.{}", path(a), l.a.port, path(b), l.b.port);
            if l.latency < Tick(1) {
                return Err(EngineError::Wiring(format!("{}: latency must be at least 1 tick", what())));
            }
            let (ka, kb) = (ports[a.index()][pa.index()].message, ports[b.index()][pb.index()].message);
            if ka.type_id != kb.type_id {
                return Err(EngineError::Wiring(format!("{}: {} cannot carry {}", what(), kb.name, ka.name)));
            }
            for (c, p) in [(a, pa), (b, pb)] {
                if !matches!(ports[c.index()][p.index()].binding, Binding::Unconnected) {
                    return Err(EngineError::Wiring(format!("{}: port already connected", what())));
                }
            }
            max_latency = max_latency.max(l.latency);
            ports[a.index()][pa.index()].binding = Binding::Link { dst: b, dst_port: pb, latency: l.latency };
            ports[b.index()][pb.index()].binding = match l.kind {
                LinkKind::Paired => Binding::Link { dst: a, dst_port: pa, latency: l.latency },
                LinkKind::OneWay => Binding::ReceiveOnly,
            };
        }
        let mut fabrics = Vec::with_capacity(topology.fabrics.len());
        for (i, f) in topology.fabrics.iter().enumerate() {
            if f.latency < Tick(1) {
                return Err(EngineError::Wiring(format!("fabric {i}: latency must be at least 1 tick")));
            }
            max_latency = max_latency.max(f.latency);
            let mut members = Vec::with_capacity(f.members.len());
            let mut kind: Option<registry::MessageKind> = None;
            for m in &f.members {
                let p = resolve(m.component, &m.port)?;
                let pw = &mut ports[m.component.index()][p.index()];
                if !matches!(pw.binding, Binding::Unconnected) {
                    return Err(EngineError::Wiring(format!(
                        "fabric {i}: port {}.{} already connected",
                        path(m.component),
                        m.port
                    )));
                }
                if let Some(k) = kind {
                    if k.type_id != pw.message.type_id {
                        return Err(EngineError::Wiring(format!(
                            "fabric {i}: port {}.{} carries {}, others {}",
                            path(m.component),
                            m.port,
                            pw.message.name,
                            k.name
                        )));
                    }
                }
                kind = Some(pw.message);
                pw.binding = Binding::Fabric {
                    fabric: FabricId::from_index(i),
                    member: FabricMember::from_index(members.len()),
                };
                members.push((m.component, p));
            }
            fabrics.push(FabricWiring { members, latency: f.latency });
        }

        let mut local_index = vec![0u32; n];
        let mut parts: Vec<PartitionState> =
            (0..n_parts).map(|p| PartitionState::new(PartitionId::from_index(p), n_parts)).collect();
        for (i, (comp, _)) in built.into_iter().enumerate() {
            let part = &mut parts[assignment[i].index()];
            local_index[i] = part.slots.len() as u32;
            part.slots.push(Slot { id: ComponentId::from_index(i), comp, seq: 0, cost: Default::default() });
        }
        let graph = horizon::LookaheadGraph::build(topology, &assignment, n_parts, &ends_run);
        let exit_delay = topology.engine.exit_delay.unwrap_or(max_latency).max(Tick(1));
        let wiring = Wiring {
            ports,
            fabrics,
            partition_of: assignment,
            local_index,
            paths: topology.components.iter().map(|c| c.path.clone()).collect(),
            type_names: topology.components.iter().map(|c| c.type_name.clone()).collect(),
            graph,
            ends_run,
            exit_delay,
        };
        let wiring = Arc::new(wiring);
        let lookahead = wiring.graph.min_latency();
        for part in &mut parts {
            part.for_each_component(&wiring, Tick::ZERO, |c, ctx| {
                let before = *ctx.seq;
                c.init(ctx);
                if *ctx.seq != before {
                    ctx.out.fail(EngineError::Lifecycle {
                        component: wiring.paths[ctx.me.index()].clone(),
                        problem: "created events in init; create them in startup".into(),
                    });
                }
            })?;
        }
        Ok(Simulation {
            wiring,
            parts,
            external: Arc::new(ExternalInbox::default()),
            max_ticks: config.max_ticks.or(topology.engine.max_ticks).unwrap_or(Tick::MAX),
            now: Tick::ZERO,
            ext_seq: 0,
            progress: config.progress,
            summary: RunSummary { partitions: n_parts, ..RunSummary::default() },
            topology_hash: checkpoint::topology_hash(topology, exit_delay),
            last_status: None,
            heavy: false,
            light_segments: 0,
            fixed: config.fixed_partitions,
            workers: config.workers.unwrap_or(usize::MAX).max(1),
            resources: config.resources.clone(),
            observer: config.observe.then(|| Arc::new(observe::Observer::new())),
            requested_workers: config.workers.unwrap_or(n_parts).clamp(1, n_parts.max(1)),
            lookahead,
            hooks: Arc::new(hooks::Hooks::new(hooks, config.workers.unwrap_or(n_parts).clamp(1, n_parts.max(1)), Tick::ZERO)),
        })
    }

    /// Moves events sent across partitions outside the epoch loop (during startup or
    /// after a restore) straight into their destination queues.
    fn deliver_outboxes(&mut self) {
        let mut moved = Vec::new();
        for part in &mut self.parts {
            let mut emptied = Vec::new();
            for mut outbox in part.emit.take_outboxes() {
                moved.append(&mut outbox.batch.events);
                emptied.push(outbox.batch);
            }
            part.emit.spare.append(&mut emptied);
        }
        for ev in moved {
            let p = self.wiring.partition_of[ev.target.index()].index();
            self.parts[p].emit.queue.push(ev);
        }
    }

    /// Runs until the run ends (quiescence, end time, exit request, primaries
    /// released, error or interruption).
    pub fn run(&mut self) -> ExitStatus {
        self.drive(Tick::MAX, false)
    }

    /// Runs until every event before `until` is handled, or the run ends first.
    /// Returns `ExitReason::Paused` when it stopped at `until`.
    pub fn run_until(&mut self, until: Tick) -> ExitStatus {
        self.drive(until, false)
    }

    /// Handles every event of the next timestamp, in all partitions.
    pub fn step(&mut self) -> ExitStatus {
        self.drive(Tick::MAX, true)
    }

    /// Runs in segments of epochs. A multi-partition run starts with a short segment on
    /// this thread; after each segment, if its epochs held at least
    /// [`PARALLEL_MIN_EPOCH_WORK`] of work, the next runs on worker threads, else on this
    /// thread; after [`LIGHT_SEGMENTS_BEFORE_MERGE`] light segments in a row the
    /// partitions are merged into one for good. No choice changes results.
    fn drive(&mut self, until: Tick, step: bool) -> ExitStatus {
        if let Some(s) = &self.last_status {
            if !s.can_continue() {
                return s.clone();
            }
        }
        if until < self.now {
            // Time never runs backwards: refuse, leaving the simulation as it is.
            return ExitStatus {
                reason: ExitReason::Refused,
                tick: self.now,
                code: 1,
                message: format!("run_until({until}) is before the simulation's time {}", self.now),
            };
        }
        self.external.clear_stop();
        loop {
            let n = self.parts.len();
            // One worker gains nothing from several partitions but their passes.
            if n > 1 && !self.fixed && (self.workers == 1 || self.light_segments >= LIGHT_SEGMENTS_BEFORE_MERGE) {
                self.collapse();
                continue;
            }
            let threads = n > 1 && self.workers > 1 && (self.heavy || self.fixed);
            // Segments end only to choose the next one's mode: a run whose mode cannot
            // change (one partition, fixed partitions) is one segment.
            let adaptive = n > 1 && !self.fixed && self.workers > 1;
            let max_passes = match (adaptive, threads) {
                (false, _) => u64::MAX,
                (true, true) => THREADED_SEGMENT_EPOCHS,
                (true, false) => SERIAL_SEGMENT_EPOCHS,
            };
            let time_budget = adaptive && !threads;
            let limits = Limits { max_ticks: self.max_ticks, until, step, max_passes, time_budget };
            let (stop, work_ns, progress) = self.segment(limits, threads);
            if n > 1 && !self.fixed {
                // Work, not wall time: wall time also counts the waits, which on a busy
                // machine (a worker preempted, a sleeping worker woken) can make tiny
                // rounds look heavy and keep them on threads.
                let rounds = match self.wiring.graph.min_latency() {
                    Some(l) => (progress / l.0.max(1)).max(1),
                    None => 1,
                };
                let min_work = PARALLEL_MIN_EPOCH_WORK.as_nanos() as u64;
                self.heavy = work_ns >= min_work.saturating_mul(rounds);
                self.light_segments = if self.heavy { 0 } else { self.light_segments + 1 };
            }
            if let Stop::Status(status) = stop {
                let point = if status.can_continue() { SyncPoint::Pause } else { SyncPoint::End };
                self.hooks.flush(status.tick, point);
                self.now = status.tick;
                self.last_status = Some(status.clone());
                return status;
            }
        }
    }

    /// Puts every component into one partition for the rest of the run: its epochs
    /// were too small for threads to pay, and one partition needs no epochs at all.
    /// Results do not change (they never depend on partitioning).
    fn collapse(&mut self) {
        let parts = std::mem::take(&mut self.parts);
        self.parts = vec![PartitionState::merge_all(parts)];
        self.wiring = Arc::new(self.wiring.single_partition());
        self.summary.partitions = 1;
    }

    /// Runs one segment of the epoch loop, on worker threads or on this thread.
    /// Returns why it stopped, the nanoseconds all partitions spent handling events
    /// (when measured) and the simulated progress (see `pass::PassState::progress`).
    fn segment(&mut self, limits: Limits, threads: bool) -> (Stop, u64, u64) {
        let n = self.parts.len();
        let workers = if threads { self.workers.min(n) } else { 1 };
        let wiring = self.wiring.clone();
        let setup = SegmentSetup {
            wiring: &wiring,
            limits,
            external: &self.external,
            progress: if self.progress { progress::Progress::on_terminal() } else { None },
            observer: self.observer.as_deref(),
            epoch_base: self.summary.sync.epochs,
            ext_seq: self.ext_seq,
            workers,
            measure_work: n > 1 && !self.fixed,
            hooks: &self.hooks,
        };
        let shared = Shared::new(&mut self.parts, setup);
        let stop = exec::run(&mut self.parts, &shared, workers);
        let mut sync = SyncStats::default();
        let (work_ns, progress) = shared.close(&mut self.parts, &mut sync);
        self.ext_seq = self.ext_seq.max(sync.ext_seq);
        self.summary.events = self.parts.iter().map(|p| p.emit.handled).sum();
        self.summary.sync.epochs += sync.epochs;
        self.summary.sync.windows += sync.windows;
        self.summary.sync.epoch_ns.merge(&sync.epoch_ns);
        (stop, work_ns, progress)
    }

    /// The shared resource of type `T` named `name` (see [`crate::resources`]).
    pub fn resource<T: std::any::Any + Send + Sync>(&self, name: &str) -> Option<Arc<T>> {
        self.resources.get(name)
    }

    /// The time the last run stopped at.
    pub fn now(&self) -> Tick {
        self.now
    }

    /// The number of partitions.
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// The most worker threads a segment of this run uses: one per partition, or
    /// [`SimConfig::workers`] if that is fewer.
    pub fn workers(&self) -> usize {
        self.workers.min(self.parts.len())
    }

    /// What an observed run ([`SimConfig::observe`]) recorded so far; `None` when the
    /// run is not observed.
    pub fn observation(&self) -> Option<Observation> {
        let o = self.observer.as_ref()?;
        let (windows, waits) = o.snapshot();
        let mut components = vec![ComponentCost::default(); self.wiring.paths.len()];
        let mut spans = Vec::new();
        for part in &self.parts {
            for slot in &part.slots {
                components[slot.id.index()] = slot.cost;
            }
            spans.extend_from_slice(&part.log.spans);
        }
        spans.sort_by_key(|s| (s.worker, s.start_ns));
        let workers = u32::try_from(self.requested_workers).unwrap_or(u32::MAX);
        Some(Observation { components, windows, waits, spans, epochs: self.summary.sync.epochs, lookahead: self.lookahead, workers })
    }

    /// Decomposition-dependent counters of all runs so far.
    pub fn summary(&self) -> &RunSummary {
        &self.summary
    }

    /// Statistics of every component, identical for any decomposition.
    pub fn stats(&self) -> StatsReport {
        let mut report = StatsReport::new();
        for part in &self.parts {
            for slot in &part.slots {
                let i = slot.id.index();
                let mut sink = report.sink(&self.wiring.paths[i], &self.wiring.type_names[i]);
                slot.comp.stats(&mut sink);
            }
        }
        report
    }

    /// A sender of external input to `component`, usable from any thread.
    pub fn external_sender(&self, component: ComponentId) -> ExternalSender {
        ExternalSender::new(self.external.clone(), component)
    }

    /// A handle that stops a running simulation from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle { inbox: self.external.clone() }
    }

    /// Calls every component's `shutdown` (in component id order).
    pub fn shutdown(&mut self) -> Result<(), EngineError> {
        let wiring = self.wiring.clone();
        let now = self.now;
        for part in &mut self.parts {
            part.for_each_component(&wiring, now, |c, ctx| c.shutdown(ctx))?;
        }
        Ok(())
    }

    /// Calls `f` with the component `id` if it is of type `T`.
    pub fn inspect<T: Component, R>(&self, id: ComponentId, f: impl FnOnce(&T) -> R) -> Option<R> {
        let part = &self.parts[self.wiring.partition_of.get(id.index())?.index()];
        let slot = &part.slots[self.wiring.local_index[id.index()] as usize];
        let any: &dyn std::any::Any = slot.comp.as_ref();
        any.downcast_ref::<T>().map(f)
    }
}

impl Emitter {
    /// Whether a checkpoint can capture this partition (no external inputs pending).
    pub(crate) fn has_external(&self) -> bool {
        let mut found = false;
        self.queue.for_each(|_, _, b| found |= matches!(b, Event::External { .. }));
        found
    }
}

/// `FILE:LINE:COL: ` of a declaration that came from a file, else nothing: the prefix of
/// an error about a component.
fn at(origin: &Option<SourceLoc>) -> String {
    origin.as_ref().map(|o| format!("{o}: ")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::partition_state::{WindowEnd, DEADLINE_STRIDE};
    use crate::phold::{digest, topology, PholdConfig};
    use std::time::Instant;

    /// A window cut short by its deadline leaves the rest for the next window, which
    /// handles it in the same order: the final state is the uncut run's.
    #[test]
    fn a_window_past_its_deadline_stops_and_the_next_continues_in_order() {
        let cfg = PholdConfig { lps: 16, end: Tick::ns(40), ..PholdConfig::default() };
        let t = topology(&cfg);
        let mut whole = Simulation::build(&t, &SimConfig::default()).unwrap();
        whole.run();

        let mut cut = Simulation::build(&t, &SimConfig::default()).unwrap();
        let wiring = cut.wiring.clone();
        let part = &mut cut.parts[0];
        let end = Tick::ns(40);
        let mut windows = 0;
        loop {
            let before = part.emit.handled;
            let how = part.run_window(&wiring, end, u64::MAX, Some(Instant::now()), None);
            windows += 1;
            if how == WindowEnd::Horizon {
                break;
            }
            assert_eq!(how, WindowEnd::Budget);
            assert_eq!(part.emit.handled - before, DEADLINE_STRIDE - 1, "a past deadline is seen after one stride");
        }
        assert!(windows > 10, "the run was cut into many windows ({windows})");
        assert_eq!(part.emit.handled, whole.summary().events);
        assert_eq!(digest(&cut, cfg.lps), digest(&whole, cfg.lps));
    }
}
