//! Synchronisation hooks: a shared resource's periodic work runs at the same
//! boundaries of simulated time, with every event before the boundary handled and none
//! after it, for any worker count and partitioning.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use simdojo::component::{BuildContext, BuildError, Component, Event, Port};
use simdojo::engine::{Context, ExitReason, SimConfig, Simulation, SyncHook, SyncPoint, SyncShare};
use simdojo::ids::PartitionId;
use simdojo::params::{NoParams, Params};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec};
use simdojo::stats::StatsSink;
use simdojo::time::Tick;
use simdojo::topology::{LinkKind, Topology};

use crate::support::fixed;

/// The hook's period.
const PERIOD: Tick = Tick(3000);

/// One call of the hook, as the ledger saw it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    at: u64,
    point: &'static str,
    index: usize,
    count: usize,
    /// Events handled before the call.
    handled: usize,
    /// Of them, those at or after `at` (must be none at a boundary).
    late: usize,
    /// The times of the stores this share folded.
    folded: Vec<u64>,
}

/// The calls of one synchronisation, put together.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Synced {
    at: u64,
    point: &'static str,
    handled: usize,
    late: usize,
    /// The times of every store folded, in order.
    folded: Vec<u64>,
}

/// Puts the calls of each synchronisation together, checking that each ran every share
/// `0..workers` once and that the shares saw the same handled events.
fn syncs(calls: &[Call], workers: usize) -> Vec<Synced> {
    let mut out: Vec<Synced> = Vec::new();
    for group in calls.chunk_by(|a, b| (a.at, a.point) == (b.at, b.point)) {
        let indices: Vec<usize> = group.iter().map(|c| c.index).collect();
        assert_eq!(indices, (0..workers).collect::<Vec<_>>(), "shares of {:?}", group[0]);
        assert!(group.iter().all(|c| c.count == workers && c.handled == group[0].handled && c.late == group[0].late));
        let mut folded: Vec<u64> = group.iter().flat_map(|c| c.folded.iter().copied()).collect();
        folded.sort_unstable();
        out.push(Synced { at: group[0].at, point: group[0].point, handled: group[0].handled, late: group[0].late, folded });
    }
    out
}

/// A stand-in for a memory whose stores become visible at window boundaries: the
/// components log "stores"; each share of a synchronisation folds (removes) the
/// pending stores whose sequence number falls in its share.
#[derive(Default)]
struct Ledger {
    /// Pending stores: (time, sequence number).
    pending: Mutex<Vec<(u64, u64)>>,
    /// Every store ever made, and the time of every event handled.
    stores: Mutex<Vec<u64>>,
    handled: Mutex<Vec<u64>>,
    seq: AtomicU64,
    calls: Mutex<Vec<Call>>,
}

impl Ledger {
    fn store(&self, at: Tick) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        self.pending.lock().unwrap().push((at.0, seq));
        self.stores.lock().unwrap().push(at.0);
    }
}

impl SyncHook for Ledger {
    fn period(&self) -> Tick {
        PERIOD
    }

    fn pending(&self) -> bool {
        !self.pending.lock().unwrap().is_empty()
    }

    fn sync(&self, at: Tick, point: SyncPoint, share: SyncShare) {
        let handled = self.handled.lock().unwrap();
        let late = handled.iter().filter(|&&t| t >= at.0).count();
        let mut pending = self.pending.lock().unwrap();
        let mine = |seq: u64| seq % share.count as u64 == share.index as u64;
        let folded: Vec<u64> = pending.iter().filter(|p| mine(p.1)).map(|p| p.0).collect();
        pending.retain(|p| !mine(p.1));
        let point = match point {
            SyncPoint::Boundary => "boundary",
            SyncPoint::Pause => "pause",
            SyncPoint::End => "end",
            SyncPoint::Checkpoint => "checkpoint",
        };
        let call = Call { at: at.0, point, index: share.index, count: share.count, handled: handled.len(), late, folded };
        self.calls.lock().unwrap().push(call);
    }
}

/// A token passed around the ring.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Token(u64);

/// The ports of the test components: tokens in, tokens out.
const TOKEN_PORTS: &[PortSpec] = &[
    PortSpec { name: "in", doc: "tokens in", dir: PortDir::In, array: false, message: MessageKind::of::<Token> },
    PortSpec { name: "out", doc: "tokens out", dir: PortDir::Out, array: false, message: MessageKind::of::<Token> },
];

/// Forwards tokens; stores now and then (a pattern of the token and the time, so some
/// windows have no store).
struct Storer {
    input: Port<Token>,
    output: Port<Token>,
    seeds: bool,
    ledger: Arc<Ledger>,
}

fn build_storer(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    let ledger = ctx.resource("ledger", Ledger::default);
    ctx.sync_hook(ledger.clone())?;
    let seeds = ctx.path().ends_with("[0]") || ctx.path().ends_with("[5]");
    Ok(Box::new(Storer { input: ctx.port("in")?, output: ctx.port("out")?, seeds, ledger }))
}

impl Component for Storer {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        if self.seeds {
            ctx.send(&self.output, Token(ctx.id().0 as u64));
        }
    }

    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let Ok(Token(v)) = event.take(&self.input) else { panic!("unexpected event") };
        let now = ctx.now();
        self.ledger.handled.lock().unwrap().push(now.0);
        if (v.wrapping_mul(0x9e37_79b9) ^ (now.0 / 250)) % 7 == 0 {
            self.ledger.store(now);
        }
        ctx.send(&self.output, Token(v + 1));
    }

    fn stats(&self, _out: &mut StatsSink<'_>) {}
}

simdojo::register_component!(ComponentType {
    name: "test.storer",
    doc: "Forwards tokens around a ring and logs stores for a synchronisation hook.",
    params: &[],
    validate: registry::validate_with::<NoParams>,
    estimate: registry::estimate_with::<NoParams>,
    ports: TOKEN_PORTS,
    stats: &[],
    build: build_storer,
});

/// Eight storers in a ring, ending at 200 ns.
fn topology() -> Topology {
    let mut t = Topology::new();
    let ids: Vec<_> = (0..8).map(|i| t.add_component(format!("ring.storer[{i}]"), "test.storer", Params::new())).collect();
    for i in 0..8 {
        let lat = Tick(1000 + 250 * (i as u64 % 4));
        t.add_link((ids[i], "out"), (ids[(i + 1) % 8], "in"), lat, LinkKind::OneWay);
    }
    t.engine.max_ticks = Some(Tick::ns(200));
    t
}

/// Runs on `workers` workers over `partitions` partitions (kept on their threads) and
/// returns the hook's synchronisations in the order of simulated time, and every store's
/// time.
fn run(workers: usize, partitions: u32) -> (Vec<Synced>, Vec<u64>) {
    let t = topology();
    let assignment = (partitions > 1).then(|| (0..8).map(|i| PartitionId(i * partitions / 8)).collect());
    let config = SimConfig { workers: Some(workers), ..fixed(assignment) };
    let mut sim = Simulation::build(&t, &config).unwrap();
    let status = sim.run();
    assert_eq!(status.reason, ExitReason::MaxTicks, "{status}");
    let ledger = sim.resource::<Ledger>("ledger").unwrap();
    assert!(ledger.pending.lock().unwrap().is_empty(), "the end folds what is left");
    let mut calls = ledger.calls.lock().unwrap().clone();
    calls.sort();
    let mut stores = ledger.stores.lock().unwrap().clone();
    stores.sort_unstable();
    (syncs(&calls, workers), stores)
}

#[test]
fn hooks_run_at_the_same_boundaries_for_one_two_and_four_workers() {
    let (reference, stores) = run(1, 1);
    assert!(stores.len() > 20, "{} stores", stores.len());
    // Every window that had a store is synchronised once, at its end (the last one
    // possibly by the end of the run); windows without one cost no call.
    let mut windows: Vec<u64> = stores.iter().map(|t| (t / PERIOD.0 + 1) * PERIOD.0).collect();
    windows.dedup();
    let boundaries: Vec<u64> = reference.iter().filter(|c| c.point == "boundary").map(|c| c.at).collect();
    let ended = reference.iter().any(|c| c.point == "end");
    assert_eq!(boundaries, windows[..windows.len() - usize::from(ended)], "one call per window with stores");
    let span = stores.last().unwrap() / PERIOD.0 + 1;
    assert!(windows.len() < span as usize, "some windows had no store: {} of {span}", windows.len());
    for c in &reference {
        if c.point == "boundary" {
            assert_eq!(c.late, 0, "an event at or after {} was handled before its boundary", c.at);
            assert!(!c.folded.is_empty() && c.folded.iter().all(|&t| t < c.at && t + PERIOD.0 >= c.at), "{c:?}: the stores of its window");
        }
    }
    let folded: usize = reference.iter().map(|c| c.folded.len()).sum();
    assert_eq!(folded, stores.len(), "every store folded once");
    for (workers, partitions) in [(1, 4), (2, 4), (4, 4), (2, 8)] {
        let (other, other_stores) = run(workers, partitions);
        assert_eq!(other_stores, stores, "{workers} workers, {partitions} partitions");
        assert_eq!(other, reference, "{workers} workers, {partitions} partitions");
    }
}

/// Answers external input with a short exchange with its peer, storing at every step;
/// the ledger checks that no store lands in a window already synchronised.
struct Answerer {
    input: Port<Token>,
    output: Port<Token>,
    ledger: Arc<Ledger>,
    /// The times this one handled external input.
    inputs: Vec<u64>,
    /// A heartbeat armed by each input and cancelled before the burst ends (it must
    /// neither fire nor keep the run busy up to its time).
    heartbeat: Option<simdojo::component::TimerId>,
}

impl Answerer {
    fn store(&self, now: Tick) {
        let closed = self
            .ledger
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.point == "boundary")
            .map(|c| c.at)
            .max()
            .unwrap_or(0);
        assert!(now.0 >= closed, "a store at {now} in a window already synchronised at {closed}");
        self.ledger.store(now);
    }
}

fn build_answerer(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    let ledger = ctx.resource("ledger", Ledger::default);
    ctx.sync_hook(ledger.clone())?;
    Ok(Box::new(Answerer { input: ctx.port("in")?, output: ctx.port("out")?, ledger, inputs: Vec::new(), heartbeat: None }))
}

impl Component for Answerer {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let now = ctx.now();
        self.ledger.handled.lock().unwrap().push(now.0);
        let hops = match event.take_external::<u32>() {
            Ok(hops) => {
                self.inputs.push(now.0);
                self.heartbeat = Some(ctx.schedule(Tick::us(1), 7));
                u64::from(hops)
            }
            Err(event) => {
                let Ok(Token(hops)) = event.take(&self.input) else { panic!("unexpected event") };
                hops
            }
        };
        if hops == 1 {
            if let Some(timer) = self.heartbeat.take() {
                ctx.cancel(timer);
            }
        }
        self.store(now);
        if hops > 0 {
            ctx.send(&self.output, Token(hops - 1));
        }
    }

    fn stats(&self, _out: &mut StatsSink<'_>) {}
}

simdojo::register_component!(ComponentType {
    name: "test.answerer",
    doc: "Answers external input with an exchange with its peer, logging stores for a synchronisation hook.",
    params: &[],
    validate: registry::validate_with::<NoParams>,
    estimate: registry::estimate_with::<NoParams>,
    ports: TOKEN_PORTS,
    stats: &[],
    build: build_answerer,
});

/// A run that waits for input between bursts of work (a simulated device driven by a
/// real host): simulated time must not run on while it waits, input must never enter a
/// window a hook has already synchronised (its stores would miss that fold, and a host
/// could read memory without them), and input enters where the last burst left the
/// simulation, however long the host took: the same times on one partition and on
/// two, each on its own worker.
#[test]
fn input_after_an_idle_wait_enters_no_synchronised_window_and_time_stays_put() {
    let mut seen: Option<Vec<u64>> = None;
    for (workers, partitions) in [(1, 1), (2, 2)] {
        let mut t = Topology::new();
        let a = t.add_component("host.answerer[0]", "test.answerer", Params::new());
        let b = t.add_component("host.answerer[1]", "test.answerer", Params::new());
        t.add_link((a, "out"), (b, "in"), Tick(1000), LinkKind::OneWay);
        t.add_link((b, "out"), (a, "in"), Tick(1300), LinkKind::OneWay);
        let assignment = (partitions > 1).then(|| vec![PartitionId(0), PartitionId(1)]);
        let config = SimConfig { workers: Some(workers), ..fixed(assignment) };
        let mut sim = Simulation::build(&t, &config).unwrap();
        let sender = sim.external_sender(a);
        let ledger = sim.resource::<Ledger>("ledger").unwrap();
        // Each input waits until the previous burst made its six stores (and then some
        // more wall-clock time), so the run is idle when it arrives.
        let feeder = std::thread::spawn(move || {
            for burst in 0..4 {
                while ledger.stores.lock().unwrap().len() < 6 * burst {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
                sender.send(5u32);
            }
        });
        let status = sim.run();
        feeder.join().unwrap();
        assert_eq!(status.reason, ExitReason::Quiescent, "{status}");
        let inputs = sim.inspect(a, |x: &Answerer| x.inputs.clone()).unwrap();
        // Each burst is five hops, 5.6 ns: the next input enters where it ended.
        assert_eq!(inputs, [0, 5600, 11200, 16800], "{workers} workers: input times");
        assert!(status.tick.0 <= 16800 + 5600, "{workers} workers: simulated time ran on to {} while waiting", status.tick);
        if let Some(first) = &seen {
            assert_eq!(&inputs, first, "{workers} workers");
        }
        seen = Some(inputs);
        let ledger = sim.resource::<Ledger>("ledger").unwrap();
        assert_eq!(ledger.stores.lock().unwrap().len(), 4 * 6, "{workers} workers");
        assert!(ledger.pending.lock().unwrap().is_empty(), "the end folds what is left");
    }
}
