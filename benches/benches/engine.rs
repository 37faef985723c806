//! Criterion benches of the simdojo engine: the event queue (through the classic
//! "hold" model: one component keeping K timers pending and rescheduling each as it
//! fires) and PHOLD on one and two workers.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use simdojo::component::{BuildContext, BuildError, Component, Event};
use simdojo::engine::{Context, SimConfig, Simulation};
use simdojo::ids::PartitionId;
use simdojo::params::ParamSet;
use simdojo::phold::{self, mix64, PholdConfig};
use simdojo::registry::{self, ComponentType};
use simdojo::time::Tick;
use simdojo::topology::Topology;

/// Keeps `pending` timers; each firing reschedules itself at a pseudo-random delay.
struct Hold {
    pending: u64,
    state: u64,
}

impl Component for Hold {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        for k in 0..self.pending {
            ctx.schedule(Tick(1 + mix64(k) % 10_000), k);
        }
    }
    fn handle(&mut self, _event: Event, ctx: &mut Context<'_>) {
        self.state = mix64(self.state);
        ctx.schedule(Tick(1 + self.state % 10_000), 0);
    }
}

/// The parameters of the hold model.
#[derive(simdojo::Params)]
struct HoldParams {
    /// Pending timers.
    #[param(default = 1024)]
    pending: u64,
}

fn build_hold(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    Ok(Box::new(Hold { pending: ctx.typed::<HoldParams>()?.pending, state: 1 }))
}

simdojo::register_component!(ComponentType {
    name: "bench.hold",
    doc: "The hold model: K pending timers, each rescheduled when it fires.",
    params: HoldParams::SPECS,
    validate: registry::validate_with::<HoldParams>,
    estimate: registry::estimate_with::<HoldParams>,
    ports: &[],
    stats: &[],
    build: build_hold,
});

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    let events = 200_000u64;
    g.throughput(Throughput::Elements(events));
    for pending in [64u64, 1024, 16384] {
        g.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, &pending| {
            b.iter(|| {
                let mut t = Topology::new();
                t.add_component("hold", "bench.hold", HoldParams { pending }.to_params());
                let mut sim = Simulation::build(&t, &SimConfig::default()).expect("hold builds");
                // Mean delay 5000 ticks: run long enough for about `events` events.
                let until = Tick(events * 5_000 / pending);
                sim.run_until(until);
                sim.summary().events
            })
        });
    }
    g.finish();
}

fn phold_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("phold");
    g.sample_size(10);
    let cfg = PholdConfig { end: Tick::ns(300), ..PholdConfig::default() };
    let topo = phold::topology(&cfg);
    for workers in [1u32, 2] {
        let assignment: Vec<PartitionId> =
            (0..cfg.lps).map(|i| PartitionId(i * workers / cfg.lps)).collect();
        let mut probe = Simulation::build(&topo, &SimConfig { assignment: Some(assignment.clone()), ..SimConfig::default() })
            .expect("phold builds");
        probe.run();
        g.throughput(Throughput::Elements(probe.summary().events));
        g.bench_with_input(BenchmarkId::new("workers", workers), &assignment, |b, assignment| {
            b.iter(|| {
                let config = SimConfig { assignment: Some(assignment.clone()), ..SimConfig::default() };
                let mut sim = Simulation::build(&topo, &config).expect("phold builds");
                sim.run();
                sim.summary().events
            })
        });
    }
    g.finish();
}

criterion_group!(benches, hold, phold_bench);
criterion_main!(benches);
