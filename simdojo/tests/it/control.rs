//! Run control: exit requests, primary components, stepping, pausing, external
//! input, timers, and component faults. Each scenario runs under every partitioning
//! and must give the same results.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use simdojo::component::{BuildContext, BuildError, Component, Event, Port};
use simdojo::engine::{Context, ExitReason, SimConfig, Simulation};
use simdojo::ids::PartitionId;
use simdojo::params::{NoParams, ParamSet, ParamValue, Params};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec};
use simdojo::stats::{Counter, StatsSink};
use simdojo::time::Tick;
use simdojo::topology::{LinkKind, Topology};

use crate::support::{assignments, fixed};

/// A token passed around a ring.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Token(u64);

/// Forwards every token it gets, counting them; the first `seed` relays start one
/// token each. Optionally requests exit at `exit_at`, holds as primary until
/// `release_at`, or panics on its `panic_on`-th token.
#[derive(Debug)]
struct Relay {
    input: Port<Token>,
    output: Port<Token>,
    seeds: bool,
    exit_at: Option<Tick>,
    release_at: Option<Tick>,
    panic_on: u64,
    seen: Counter,
    sum: u64,
    /// What `link_latency` said of the output (sending) and input (receiving) ports, in ps
    /// (`u64::MAX`: none).
    latencies: (u64, u64),
}

/// The parameters of a relay.
#[derive(simdojo::Params)]
struct RelayParams {
    /// Start a token.
    #[param(default = false)]
    seed: bool,
    /// Request exit then (0: never).
    #[param(default = Tick::ZERO)]
    exit_at: Tick,
    /// Hold as primary until then (0: never).
    #[param(default = Tick::ZERO)]
    release_at: Tick,
    /// Panic on this token (0: never).
    #[param(default = 0)]
    panic_on: u64,
}

fn opt_tick(t: Tick) -> Option<Tick> {
    (t != Tick::ZERO).then_some(t)
}

fn build_relay(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    let p: RelayParams = ctx.typed()?;
    if opt_tick(p.exit_at).is_some() || opt_tick(p.release_at).is_some() {
        ctx.may_end_run();
    }
    Ok(Box::new(Relay {
        input: ctx.port("in")?,
        output: ctx.port("out")?,
        seeds: p.seed,
        exit_at: opt_tick(p.exit_at),
        release_at: opt_tick(p.release_at),
        panic_on: p.panic_on,
        seen: Counter::default(),
        sum: 0,
        latencies: (0, 0),
    }))
}

const TIMER_EXIT: u64 = 1;
const TIMER_RELEASE: u64 = 2;

impl Component for Relay {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        let ps = |t: Option<Tick>| t.map_or(u64::MAX, |t| t.0);
        self.latencies = (ps(ctx.link_latency(&self.output)), ps(ctx.link_latency(&self.input)));
        if self.seeds {
            ctx.send(&self.output, Token(ctx.id().0 as u64));
        }
        if let Some(t) = self.exit_at {
            ctx.schedule(t, TIMER_EXIT);
        }
        if let Some(t) = self.release_at {
            ctx.primary_hold();
            ctx.schedule(t, TIMER_RELEASE);
        }
    }

    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        match event.take(&self.input) {
            Ok(Token(v)) => {
                self.seen.inc();
                self.sum = self.sum.wrapping_mul(31).wrapping_add(v ^ ctx.now().0);
                if self.panic_on != 0 && self.seen.get() == self.panic_on {
                    panic!("relay fault injected");
                }
                ctx.send(&self.output, Token(v + 1));
            }
            Err(Event::Timer { token: TIMER_EXIT, .. }) => ctx.request_exit("exit_at reached", 3),
            Err(Event::Timer { token: TIMER_RELEASE, .. }) => ctx.primary_release(),
            Err(other) => panic!("unexpected event {other:?}"),
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("seen", &self.seen);
        out.counter("sum", &Counter::from_count(self.sum % 1_000_000_007));
        out.counter("out_latency", &Counter::from_count(self.latencies.0));
        out.counter("in_latency", &Counter::from_count(self.latencies.1));
    }
}

simdojo::register_component!(ComponentType {
    name: "test.relay",
    doc: "Forwards tokens around a ring.",
    params: RelayParams::SPECS,
    validate: registry::validate_with::<RelayParams>,
    estimate: registry::estimate_with::<RelayParams>,
    ports: &[
        PortSpec { name: "in", doc: "tokens in", dir: PortDir::In, array: false, message: MessageKind::of::<Token> },
        PortSpec { name: "out", doc: "tokens out", dir: PortDir::Out, array: false, message: MessageKind::of::<Token> },
    ],
    stats: &[],
    build: build_relay,
});

/// A ring of `n` relays with varied latencies; relay i gets `extra(i)` parameters.
fn ring(n: u32, extra: impl Fn(u32) -> Params) -> Topology {
    let mut t = Topology::new();
    let ids: Vec<_> = (0..n)
        .map(|i| {
            let mut p = extra(i);
            if i % 3 == 0 {
                p.set("seed", ParamValue::Bool(true));
            }
            t.add_component(format!("ring.relay[{i}]"), "test.relay", p)
        })
        .collect();
    for i in 0..n as usize {
        let lat = Tick(1000 + 250 * (i as u64 % 4));
        t.add_link((ids[i], "out"), (ids[(i + 1) % n as usize], "in"), lat, LinkKind::OneWay);
    }
    t
}

fn build(t: &Topology, assignment: Option<Vec<PartitionId>>) -> Simulation {
    Simulation::build(t, &fixed(assignment)).unwrap()
}

#[test]
fn components_learn_the_latency_of_the_links_they_send_on() {
    let t = ring(4, |_| Params::new());
    let mut sim = build(&t, None);
    sim.step();
    let json = sim.stats().to_json();
    for i in 0..4u64 {
        let relay = &json["components"][format!("ring.relay[{i}]")];
        assert_eq!(relay["out_latency"], serde_json::json!(1000 + 250 * i), "{relay}");
        assert_eq!(relay["in_latency"], serde_json::json!(u64::MAX), "the receiving end of a one-way link sends nothing: {relay}");
    }
}

#[test]
fn exit_request_stops_every_partitioning_at_the_same_state() {
    let t = ring(12, |i| {
        let mut p = Params::new();
        if i == 5 {
            p.set("exit_at", ParamValue::Duration(Tick::ns(777)));
        }
        p
    });
    let mut outcomes = Vec::new();
    for (name, a) in assignments(12) {
        let mut sim = build(&t, a);
        let status = sim.run();
        match &status.reason {
            ExitReason::Requested { component, reason } => {
                assert_eq!(component, "ring.relay[5]", "{name}");
                assert_eq!(reason, "exit_at reached");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(status.code, 3);
        // Exit takes effect after the exit delay: the largest link latency (1750 ps).
        assert_eq!(status.tick, Tick::ns(777) + Tick(1750), "{name}");
        outcomes.push(sim.stats().to_json());
    }
    assert!(outcomes.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn primaries_end_the_run_when_all_release_even_with_events_left() {
    let t = ring(6, |i| {
        let mut p = Params::new();
        if i == 1 || i == 4 {
            p.set("release_at", ParamValue::Duration(Tick::ns(100 + 50 * i as u64)));
        }
        p
    });
    let mut outcomes = Vec::new();
    for (name, a) in assignments(6) {
        let mut sim = build(&t, a);
        let status = sim.run();
        assert_eq!(status.reason, ExitReason::PrimariesReleased, "{name}: {status}");
        assert_eq!(status.tick, Tick::ns(300) + Tick(1750));
        outcomes.push(sim.stats().to_json());
    }
    assert!(outcomes.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn stepping_visits_each_timestamp_in_every_partitioning() {
    let t = ring(9, |_| Params::new());
    let mut reference: Option<(Vec<Tick>, serde_json::Value)> = None;
    for (name, a) in assignments(9) {
        let mut sim = build(&t, a);
        let mut ticks = Vec::new();
        for _ in 0..40 {
            let s = sim.step();
            assert_eq!(s.reason, ExitReason::Stepped, "{name}");
            ticks.push(s.tick);
        }
        assert!(ticks.windows(2).all(|w| w[0] < w[1]), "{name}: {ticks:?}");
        let got = (ticks, sim.stats().to_json());
        match &reference {
            None => reference = Some(got),
            Some(r) => assert_eq!(&got, r, "{name}"),
        }
    }
}

#[test]
fn run_until_pauses_and_continues_like_one_run() {
    let t = ring(8, |_| Params::new());
    let mut whole = Simulation::build(&t, &SimConfig { max_ticks: Some(Tick::ns(500)), ..SimConfig::default() }).unwrap();
    assert_eq!(whole.run().reason, ExitReason::MaxTicks);
    for (name, a) in assignments(8) {
        let mut sim =
            Simulation::build(&t, &SimConfig { max_ticks: Some(Tick::ns(500)), ..fixed(a) })
                .unwrap();
        for stop in [13, 101, 250, 499] {
            let s = sim.run_until(Tick::ns(stop));
            assert_eq!((s.reason, s.tick), (ExitReason::Paused, Tick::ns(stop)), "{name}");
        }
        assert_eq!(sim.run().reason, ExitReason::MaxTicks);
        assert_eq!(sim.stats().to_json(), whole.stats().to_json(), "{name}");
    }
}

#[test]
fn a_panicking_component_ends_the_run_with_an_error_naming_it() {
    let t = ring(6, |i| {
        let mut p = Params::new();
        if i == 2 {
            p.set("panic_on", ParamValue::UInt(3));
        }
        p
    });
    for (name, a) in assignments(6) {
        let mut sim = build(&t, a);
        let s = sim.run();
        assert_eq!(s.reason, ExitReason::Error, "{name}");
        assert!(s.message.contains("ring.relay[2]") && s.message.contains("fault injected"), "{}", s.message);
        // The simulation stays usable: asking again gives the same status.
        assert_eq!(sim.run(), s);
        assert!(sim.stats().components.len() == 6);
    }
}

/// Counts external inputs and timers; cancels every second timer it schedules.
#[derive(Debug, Default)]
struct Listener {
    inputs: Vec<u32>,
    timers_fired: Vec<u64>,
}

impl Component for Listener {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        for k in 0..6u64 {
            let id = ctx.schedule(Tick(10 * (k + 1)), k);
            if k % 2 == 1 {
                ctx.cancel(id);
            }
        }
    }
    fn handle(&mut self, event: Event, _ctx: &mut Context<'_>) {
        match event {
            Event::Timer { token, .. } => self.timers_fired.push(token),
            other => self.inputs.push(other.take_external::<u32>().expect("u32 input")),
        }
    }
}

simdojo::register_component!(ComponentType {
    name: "test.listener",
    doc: "Receives external input.",
    params: NoParams::SPECS,
    validate: registry::validate_with::<NoParams>,
    estimate: registry::estimate_with::<NoParams>,
    ports: &[],
    stats: &[],
    build: |_| Ok(Box::new(Listener::default())),
});

fn cpu_seconds() -> f64 {
    // This thread only: other tests run in parallel in the same process.
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
fn external_input_wakes_an_idle_simulation_without_polling() {
    let mut t = Topology::new();
    let id = t.add_component("host.listener", "test.listener", Params::new());
    let mut sim = Simulation::build(&t, &SimConfig::default()).unwrap();
    let sender = sim.external_sender(id);
    let cpu_before = cpu_seconds();
    let feeder = std::thread::spawn(move || {
        for v in [7u32, 8, 9] {
            std::thread::sleep(Duration::from_millis(150));
            sender.send(v);
        }
        // Dropping the last sender lets the idle simulation end.
    });
    let status = sim.run();
    feeder.join().unwrap();
    assert_eq!(status.reason, ExitReason::Quiescent, "{status}");
    // ~450 ms of waiting must not have been spent spinning.
    assert!(cpu_seconds() - cpu_before < 0.25, "idle wait burned {} s of CPU", cpu_seconds() - cpu_before);
    let (inputs, timers) = sim.inspect(id, |l: &Listener| (l.inputs.clone(), l.timers_fired.clone())).unwrap();
    assert_eq!(inputs, vec![7, 8, 9]);
    assert_eq!(timers, vec![0, 2, 4], "cancelled timers must not fire");
}

#[test]
fn stop_handle_interrupts_a_waiting_run() {
    let mut t = Topology::new();
    let id = t.add_component("host.listener", "test.listener", Params::new());
    let mut sim = Simulation::build(&t, &SimConfig::default()).unwrap();
    let _sender = sim.external_sender(id);
    let stop = sim.stop_handle();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        stop.stop();
    });
    let status = sim.run();
    stopper.join().unwrap();
    assert_eq!(status.reason, ExitReason::Interrupted);
}

#[test]
fn build_errors_name_the_component() {
    let mut t = Topology::new();
    t.add_component("a", "test.nope", Params::new());
    let e = Simulation::build(&t, &SimConfig::default()).err().unwrap();
    assert!(e.to_string().contains("`a`") && e.to_string().contains("test.nope"), "{e}");

    let mut t = Topology::new();
    t.add_component("b", "test.relay", Params::new().with("speed", ParamValue::UInt(1)));
    let e = Simulation::build(&t, &SimConfig::default()).err().unwrap();
    assert!(e.to_string().contains("no parameter `speed`"), "{e}");

    let mut t = Topology::new();
    let a = t.add_component("c", "test.relay", Params::new());
    let b = t.add_component("d", "test.relay", Params::new());
    t.add_link((a, "out"), (b, "in"), Tick(0), LinkKind::OneWay);
    let e = Simulation::build(&t, &SimConfig::default()).err().unwrap();
    assert!(e.to_string().contains("at least 1 tick"), "{e}");
}

#[test]
fn sending_on_an_unconnected_port_is_an_error_not_a_silent_drop() {
    let mut t = Topology::new();
    t.add_component("lonely", "test.relay", Params::new().with("seed", ParamValue::Bool(true)));
    let mut sim = Simulation::build(&t, &SimConfig::default()).err();
    let e = sim.take().unwrap();
    assert!(e.to_string().contains("lonely") && e.to_string().contains("not connected"), "{e}");
}

#[test]
fn external_input_reaches_a_component_in_another_partition() {
    let mut t = Topology::new();
    let ids: Vec<_> = (0..3).map(|i| t.add_component(format!("host.listener[{i}]"), "test.listener", Params::new())).collect();
    // One listener per partition; worker 0 routes the input to the last one.
    let assignment = vec![PartitionId(0), PartitionId(1), PartitionId(2)];
    let mut sim = Simulation::build(&t, &fixed(Some(assignment))).unwrap();
    let sender = sim.external_sender(ids[2]);
    let feeder = std::thread::spawn(move || {
        for v in [1u32, 2, 3, 4] {
            std::thread::sleep(Duration::from_millis(30));
            sender.send(v);
        }
    });
    // With a sender alive the idle run waits; it ends when the sender is dropped.
    let status = sim.run();
    feeder.join().unwrap();
    assert_eq!(status.reason, ExitReason::Quiescent, "{status}");
    let inputs = |id| sim.inspect(id, |l: &Listener| l.inputs.clone()).unwrap();
    assert_eq!(inputs(ids[2]), vec![1, 2, 3, 4]);
    assert!(inputs(ids[0]).is_empty() && inputs(ids[1]).is_empty());
}

#[test]
fn a_quiescent_run_continues_when_input_arrives_later() {
    for assignment in [None, Some(vec![PartitionId(0), PartitionId(1)])] {
        let mut t = Topology::new();
        let ids: Vec<_> = (0..2).map(|i| t.add_component(format!("host.listener[{i}]"), "test.listener", Params::new())).collect();
        let mut sim = Simulation::build(&t, &fixed(assignment.clone())).unwrap();
        let first = sim.run();
        assert_eq!(first.reason, ExitReason::Quiescent, "{first}");
        assert!(first.can_continue());
        // No sender was alive, so the run ended; input sent now must still be delivered.
        sim.external_sender(ids[1]).send(5u32);
        let second = sim.run();
        assert_eq!(second.reason, ExitReason::Quiescent, "{second}");
        assert_eq!(sim.inspect(ids[1], |l: &Listener| l.inputs.clone()).unwrap(), vec![5], "{assignment:?}");
        // Nothing pending: continuing again changes nothing.
        assert_eq!(sim.run().reason, ExitReason::Quiescent);
        assert_eq!(sim.inspect(ids[1], |l: &Listener| l.inputs.len()).unwrap(), 1);
    }
}

/// A client that sends a request, times the replies, and keeps itself busy with timers
/// meanwhile; or (with `requests = 0`) an echo server that answers on the same port.
#[derive(Debug, Default)]
struct Client {
    io: Option<Port<Token>>,
    requests: u64,
    replies: Vec<Tick>,
    timers: u64,
}

impl Component for Client {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        if self.requests > 0 {
            if let Some(io) = &self.io {
                ctx.send(io, Token(0));
            }
            ctx.schedule(Tick::ns(1), 0);
        }
    }
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let Some(io) = self.io else { return };
        match event.take(&io) {
            Ok(Token(n)) if self.requests == 0 => ctx.send(&io, Token(n)),
            Ok(Token(n)) => {
                self.replies.push(ctx.now());
                if n + 1 < self.requests {
                    ctx.send(&io, Token(n + 1));
                }
            }
            Err(Event::Timer { .. }) => {
                self.timers += 1;
                if self.timers < 100 {
                    ctx.schedule(Tick::ns(1), 0);
                }
            }
            Err(_) => {}
        }
    }
}

/// The parameters of a client.
#[derive(simdojo::Params)]
struct ClientParams {
    /// Requests to send.
    #[param(default = 0)]
    requests: u64,
}

simdojo::register_component!(ComponentType {
    name: "test.client",
    doc: "Sends `requests` requests one after another (0: echoes what it gets).",
    params: ClientParams::SPECS,
    validate: registry::validate_with::<ClientParams>,
    estimate: registry::estimate_with::<ClientParams>,
    ports: &[PortSpec { name: "io", doc: "requests and replies", dir: PortDir::InOut, array: false, message: MessageKind::of::<Token> }],
    stats: &[],
    build: |ctx: &mut BuildContext<'_>| {
        let requests = ctx.typed::<ClientParams>()?.requests;
        Ok(Box::new(Client { io: Some(ctx.port("io")?), requests, ..Client::default() }))
    },
});

#[test]
fn a_reply_through_an_idle_partition_never_arrives_in_the_past() {
    // The client's partition has work (timers) while the server's has none: the
    // client may only run ahead until its own request can come back (1 ns each way),
    // even though a 100 ns link elsewhere makes the exit delay large.
    let mut t = Topology::new();
    let client = t.add_component("client", "test.client", Params::new().with("requests", ParamValue::UInt(20)));
    let server = t.add_component("server", "test.client", Params::new());
    let a = t.add_component("far.a", "test.client", Params::new());
    let b = t.add_component("far.b", "test.client", Params::new());
    t.add_link((client, "io"), (server, "io"), Tick::ns(1), LinkKind::Paired);
    t.add_link((a, "io"), (b, "io"), Tick::ns(100), LinkKind::Paired);
    let want: Vec<Tick> = (1..=20).map(|k| Tick::ns(2 * k)).collect();
    for assignment in [None, Some(vec![PartitionId(0), PartitionId(1), PartitionId(0), PartitionId(1)])] {
        let mut sim = Simulation::build(&t, &fixed(assignment.clone())).unwrap();
        let status = sim.run();
        assert_eq!(status.reason, ExitReason::Quiescent, "{assignment:?}: {status}");
        let got = sim.inspect(client, |c: &Client| c.replies.clone()).unwrap();
        assert_eq!(got, want, "{assignment:?}");
    }
}

/// Records external `u32` inputs in arrival order and requests exit once it has
/// `expect` of them. It schedules nothing itself, so its partition's frontier moves
/// only with the traffic around it.
#[derive(Debug, Default)]
struct Sink {
    expect: u64,
    inputs: Vec<u32>,
}

impl Component for Sink {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let v = event.take_external::<u32>().expect("u32 input");
        self.inputs.push(v);
        if self.inputs.len() as u64 == self.expect {
            ctx.request_exit("all input arrived", 0);
        }
    }
}

/// The parameters of a sink.
#[derive(simdojo::Params)]
struct SinkParams {
    /// Inputs to wait for.
    #[param(default = 1)]
    expect: u64,
}

simdojo::register_component!(ComponentType {
    name: "test.sink",
    doc: "Records external input; requests exit after `expect` inputs.",
    params: SinkParams::SPECS,
    validate: registry::validate_with::<SinkParams>,
    estimate: registry::estimate_with::<SinkParams>,
    ports: &[],
    stats: &[],
    build: |ctx: &mut BuildContext<'_>| {
        ctx.may_end_run();
        Ok(Box::new(Sink { expect: ctx.typed::<SinkParams>()?.expect, inputs: Vec::new() }))
    },
});

#[test]
fn external_input_into_a_busy_multi_partition_run_is_never_a_causality_error() {
    // A ring of 12 relays split 10 / 2 over two partitions, so the partitions' loads
    // differ and their frontiers drift apart inside an epoch. Worker 0 routes the
    // input; whichever partition holds the sink may already be past the time worker 0
    // stamped it with. Input has no sender time to respect, so it must enter at the
    // receiver's present instead of failing the run.
    const INPUTS: u32 = 40;
    const ROUNDS: usize = 12;
    for round in 0..ROUNDS {
        let mut t = ring(12, |_| Params::new());
        let sink = t.add_component(
            "host.sink",
            "test.sink",
            Params::new().with("expect", ParamValue::UInt(u64::from(INPUTS))),
        );
        // Even rounds: the sink shares the light partition (the one that runs ahead);
        // odd rounds: the heavy one.
        let sink_part = PartitionId((round % 2 == 0) as u32);
        let mut assignment: Vec<PartitionId> =
            (0..12).map(|i| PartitionId(u32::from(i >= 10))).collect();
        assignment.push(sink_part);
        let mut sim = build(&t, Some(assignment));
        let sender = sim.external_sender(sink);
        let stop = sim.stop_handle();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let feeder = std::thread::spawn(move || {
            for v in 0..INPUTS {
                sender.send(v);
                std::thread::sleep(Duration::from_micros(200 + 150 * u64::from(v % 5)));
            }
            // The ring never goes quiet: if input were lost the run would go on, so a
            // watchdog ends it and the assertions below report what arrived.
            if done_rx.recv_timeout(Duration::from_secs(60)).is_err() {
                stop.stop();
            }
        });
        let status = sim.run();
        let _ = done_tx.send(());
        feeder.join().unwrap();
        assert_ne!(status.reason, ExitReason::Error, "round {round}: {status}");
        assert!(
            matches!(status.reason, ExitReason::Requested { .. }),
            "round {round}: {status}"
        );
        let inputs = sim.inspect(sink, |s: &Sink| s.inputs.clone()).unwrap();
        assert_eq!(
            inputs,
            (0..INPUTS).collect::<Vec<_>>(),
            "round {round}: input lost or reordered"
        );
        assert!(
            status.tick > Tick::ZERO,
            "round {round}: the ring must have been running ({status})"
        );
    }
}

/// Requests exit at its first timer without having declared that it may end the run.
#[derive(Debug, Default)]
struct Rogue;

impl Component for Rogue {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        ctx.schedule(Tick::ns(5), 0);
    }
    fn handle(&mut self, _event: Event, ctx: &mut Context<'_>) {
        ctx.request_exit("undeclared", 0);
    }
}

simdojo::register_component!(ComponentType {
    name: "test.rogue",
    doc: "Requests exit without declaring that it may end the run.",
    params: NoParams::SPECS,
    validate: registry::validate_with::<NoParams>,
    estimate: registry::estimate_with::<NoParams>,
    ports: &[],
    stats: &[],
    build: |_| Ok(Box::new(Rogue)),
});

#[test]
fn an_exit_from_a_component_that_did_not_declare_it_is_an_error_naming_it() {
    let mut t = Topology::new();
    t.add_component("rogue", "test.rogue", Params::new());
    let mut sim = build(&t, None);
    let status = sim.run();
    assert_eq!(status.reason, ExitReason::Error, "{status}");
    assert!(status.message.contains("`rogue`"), "{status}");
    assert!(status.message.contains("may_end_run"), "{status}");
}

#[test]
fn unconnected_partitions_never_wait_on_each_other() {
    // Two rings with no link between them, one per partition, and nothing that may
    // end the run: each partition's horizon is the end time, so the whole run takes a
    // handful of passes, where a global window (next event + exit delay) took one per
    // 1.75 ns of simulated time. Counted on one worker with fixed partitions, where
    // the count depends on nothing but the events (issue 33): no segment has a wall-time
    // budget (fixed partitions), and a partition's activation ends only at its horizon
    // or after a fixed number of events; on threads a worker with nothing to do also
    // passes while it waits, so there only the result is compared.
    let mut t = ring(4, |_| Params::new());
    let other = ring(4, |_| Params::new());
    let base = t.components.len();
    for c in &other.components {
        t.add_component(format!("other.{}", c.path), c.type_name.clone(), c.params.clone());
    }
    for l in &other.links {
        let a = simdojo::ids::ComponentId::from_index(base + l.a.component.index());
        let b = simdojo::ids::ComponentId::from_index(base + l.b.component.index());
        t.add_link((a, l.a.port.as_str()), (b, l.b.port.as_str()), l.latency, l.kind);
    }
    t.engine.max_ticks = Some(Tick::ns(2000));
    let split: Vec<PartitionId> = (0..8).map(|i| PartitionId(i / 4)).collect();
    let mut whole = build(&t, None);
    whole.run();
    let mut threads = build(&t, Some(split.clone()));
    assert_eq!(threads.run().reason, ExitReason::MaxTicks);
    assert_eq!(threads.stats().to_json(), whole.stats().to_json());
    let config = SimConfig { workers: Some(1), ..fixed(Some(split)) };
    let mut sim = Simulation::build(&t, &config).unwrap();
    let status = sim.run();
    assert_eq!(status.reason, ExitReason::MaxTicks, "{status}");
    assert_eq!(sim.stats().to_json(), whole.stats().to_json());
    assert!(sim.summary().events > 4000, "{} events", sim.summary().events);
    let passes = sim.summary().sync.epochs;
    assert!(passes <= 4, "{passes} passes");
    let mut again = Simulation::build(&t, &config).unwrap();
    again.run();
    assert_eq!(again.summary().sync.epochs, passes, "the count is deterministic");
    assert_eq!(again.summary().sync.windows, sim.summary().sync.windows);
}
