//! `dojo bench`: the PHOLD benchmark (and `gpu`, in `bench_gpu`).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};
use serde_json::json;
use simdojo::engine::{SimConfig, Simulation};
use simdojo::phold::{self, PholdConfig};
use simdojo::time::Tick;

use crate::sysinfo::peak_rss_bytes;
use crate::output::outln;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// PHOLD: every event creates one at now + lookahead + Exp(mean), `remote` of them
    /// to another LP. Times are in nanoseconds.
    Phold(PholdArgs),
    /// A GPU program (`benches/gpu/*.c`) on a whole simulated GPU: wave-instructions/s.
    Gpu(crate::bench_gpu::GpuArgs),
    /// A matrix multiply with MFMA instructions on a whole simulated GPU, checked against
    /// a host reference: wall time and MFMA/s.
    Gemm(crate::bench_gemm::GemmArgs),
    /// An unmodified ROCm program under `dojo run`: wall time against the simulator's start.
    Run(crate::bench_run::BenchRunArgs),
    /// The timing model's microbenchmarks (latency of each level, stream, L2 and LDS
    /// bandwidth, MFMA and atomic throughput) against the published figures of the part.
    Micro(crate::bench_micro::MicroArgs),
    /// Real applications (HIP programs: SGEMM, convolution, histogram, scan, sorts,
    /// SpMV...) under `dojo run` in functional and timing mode: wall time, simulated
    /// wave-instructions/s and kernel time.
    Apps(crate::bench_apps::AppsArgs),
}

#[derive(Args, Debug)]
pub struct PholdArgs {
    /// Logical processes.
    #[arg(long, default_value_t = 1024)]
    lps: u32,
    /// Initial events per LP.
    #[arg(long, default_value_t = 4)]
    events_per_lp: u32,
    /// Probability that a new event goes to another LP.
    #[arg(long, default_value_t = 0.25)]
    remote: f64,
    /// Minimum delay (ns); also the lookahead between partitions.
    #[arg(long, default_value_t = 1.0)]
    lookahead: f64,
    /// Mean of the exponential delay (ns).
    #[arg(long, default_value_t = 1.0)]
    mean: f64,
    /// End time (ns).
    #[arg(long, default_value_t = 3000.0)]
    end_time: f64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulation worker threads (partitions).
    #[arg(long, default_value_t = 1)]
    workers: u32,
    /// Partitioner: single, round-robin, linear, subtree[:PREFIX], manual, mincut.
    #[arg(long, default_value = "linear")]
    partitioner: String,
    /// Partitions (default: one per worker). More partitions than workers lets the
    /// workers claim them anew every epoch, which evens out unequal cores.
    #[arg(long)]
    partitions: Option<u32>,
    /// Keep every partition on its own thread even when epochs are too small to pay
    /// for it (by default the engine then merges partitions).
    #[arg(long)]
    fixed_partitions: bool,
    /// Independent copies of the whole simulation, run at the same time on their own
    /// threads (each with `--workers` workers); rates are their sum. `--workers 1
    /// --copies 2` measures what this machine gives two fully independent simulations,
    /// the ceiling for `--workers 2`.
    #[arg(long, default_value_t = 1)]
    copies: u32,
    /// Also measure this machine's ceiling for `--workers N` in the same invocation:
    /// N independent one-worker copies at once (as `--workers 1 --copies N`); prints
    /// the parallel run's rate as a fraction of theirs.
    #[arg(long, conflicts_with = "copies")]
    ceiling: bool,
    /// Observe the run (each event is timed, which slows it) and print where the wall
    /// time went: per-component events and host time, per-worker busy and idle-wait time,
    /// epochs, events per window, and the parallelism profile (work, critical path,
    /// predicted speedup on more workers).
    #[arg(long, conflicts_with = "copies")]
    profile: bool,
    /// Observe the run and write a Chrome trace (JSON, which Perfetto loads) to FILE:
    /// one track per worker with its windows, idle waits and sampled event spans.
    #[arg(long, value_name = "FILE", conflicts_with = "copies")]
    trace: Option<std::path::PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn ns_to_ticks(what: &str, ns: f64) -> anyhow::Result<Tick> {
    let t = (ns * 1000.0).round();
    if !(t.is_finite() && t >= 0.0 && t < u64::MAX as f64) {
        bail!("--{what} {ns} is not a time in nanoseconds");
    }
    Ok(Tick(t as u64))
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Phold(a) => phold(a),
        BenchCommand::Gpu(a) => crate::bench_gpu::run(a),
        BenchCommand::Gemm(a) => crate::bench_gemm::run(a),
        BenchCommand::Micro(a) => crate::bench_micro::run(a),
        BenchCommand::Run(a) => crate::bench_run::run(a),
        BenchCommand::Apps(a) => crate::bench_apps::run(a),
    }
}

/// What one copy of the PHOLD run measured.
struct PholdRun {
    status: String,
    events: u64,
    epochs: u64,
    wall: f64,
    hist: simdojo::stats::Distribution,
    digest: String,
    partitions: usize,
    workers: usize,
    /// What an observed run recorded.
    observation: Option<simdojo::engine::Observation>,
    /// Component paths and types, when observed.
    names: (Vec<String>, Vec<String>),
    sim_end: Tick,
}

/// How one measurement runs: copies at once, each with its workers and partitions.
#[derive(Clone, Copy, Debug)]
struct Shape {
    copies: u32,
    workers: u32,
    partitions: u32,
    observe: bool,
}

/// Builds and runs one copy of PHOLD, starting the clock once every copy is built.
fn phold_copy(cfg: &PholdConfig, a: &PholdArgs, shape: Shape, start: &std::sync::Barrier) -> anyhow::Result<PholdRun> {
    let topo = phold::topology(cfg);
    let plan = crate::plan::choose(&topo, Some(shape.partitions), Some(&a.partitioner))?;
    let config = SimConfig {
        assignment: Some(plan.assignment),
        workers: Some(shape.workers as usize),
        progress: !a.json && shape.copies == 1 && !a.ceiling,
        fixed_partitions: a.fixed_partitions,
        observe: shape.observe,
        ..SimConfig::default()
    };
    let built = Simulation::build(&topo, &config).context("building the PHOLD topology");
    let names = if shape.observe {
        (topo.components.iter().map(|c| c.path.clone()).collect(), topo.components.iter().map(|c| c.type_name.clone()).collect())
    } else {
        Default::default()
    };
    start.wait();
    let mut sim = built?;
    let begun = Instant::now();
    let status = sim.run();
    let wall = begun.elapsed().as_secs_f64();
    let summary = sim.summary();
    Ok(PholdRun {
        status: status.to_string(),
        events: summary.events,
        epochs: summary.sync.epochs,
        wall,
        hist: summary.sync.epoch_ns.clone(),
        digest: format!("{:016x}", phold::digest(&sim, cfg.lps)),
        partitions: sim.partitions(),
        workers: sim.workers(),
        observation: sim.observation(),
        names,
        sim_end: sim.now(),
    })
}

fn phold(a: PholdArgs) -> anyhow::Result<ExitCode> {
    let cfg = PholdConfig {
        lps: a.lps,
        events_per_lp: a.events_per_lp,
        remote: a.remote,
        lookahead: ns_to_ticks("lookahead", a.lookahead)?,
        mean: ns_to_ticks("mean", a.mean)?,
        end: ns_to_ticks("end-time", a.end_time)?,
        seed: a.seed,
    };
    if cfg.lookahead < Tick(1) {
        bail!("--lookahead must be at least 1 ps: conservative synchronization needs it");
    }
    if a.lps == 0 || a.workers == 0 || a.copies == 0 {
        bail!("--lps, --workers and --copies must be at least 1");
    }
    let observe = a.profile || a.trace.is_some();
    let shape = Shape { copies: a.copies, workers: a.workers, partitions: a.partitions.unwrap_or(a.workers), observe };
    let m = measure(&cfg, &a, shape)?;
    let ceiling = if a.ceiling {
        if a.workers < 2 {
            bail!("--ceiling compares --workers N (N at least 2) with N one-worker copies");
        }
        let c = measure(&cfg, &a, Shape { copies: a.workers, workers: 1, partitions: 1, observe: false })?;
        if c.runs[0].digest != m.runs[0].digest {
            bail!("the ceiling's copies and the parallel run differ: digest {} against {}", c.runs[0].digest, m.runs[0].digest);
        }
        Some(c)
    } else {
        None
    };
    let (runs, rate, wall, per_copy) = (&m.runs, m.rate, m.wall, &m.per_copy);
    let first = &runs[0];
    let (events, epochs, digest, status) = (first.events, first.epochs, &first.digest, &first.status);
    let hist = first.hist.histogram();
    let rss = peak_rss_bytes();
    let names = crate::profile::Names { paths: &first.names.0, types: &first.names.1 };
    if let (Some(path), Some(obs)) = (&a.trace, &first.observation) {
        crate::profile::write_trace(path, obs, &names)?;
    }
    if a.json {
        outln!(
            "{}",
            json!({
                "engine": "simdojo",
                "events": events,
                "events_per_sec": rate,
                "epochs": epochs,
                "events_per_epoch": events as f64 / epochs.max(1) as f64,
                "epoch_ns": { "p50": hist.value_at_quantile(0.5), "p90": hist.value_at_quantile(0.9),
                              "p99": hist.value_at_quantile(0.99), "max": hist.max() },
                "wall_seconds": wall,
                "peak_rss_bytes": rss,
                "workers": first.workers,
                "partitions": first.partitions,
                "copies": a.copies,
                "copy_events_per_sec": per_copy,
                "ceiling": ceiling.as_ref().map(|c| json!({
                    "copies": a.workers, "events_per_sec": c.rate, "copy_events_per_sec": c.per_copy,
                    "ratio": rate / c.rate,
                })),
                "profile": first.observation.as_ref().filter(|_| a.profile).map(crate::profile::to_json),
                "digest": digest,
                "exit": status,
            })
        )?;
    } else {
        outln!("exit:            {status}")?;
        outln!("events:          {events}")?;
        outln!("wall:            {wall:.3} s")?;
        outln!("events/s:        {:.3} M", rate / 1e6)?;
        if a.copies > 1 {
            outln!("copies:          {} running at once ({} each)", a.copies, crate::copies::rates_line(per_copy, 3))?;
        }
        outln!("workers:         {}", first.workers)?;
        outln!("partitions:      {}", first.partitions)?;
        if let Some(c) = &ceiling {
            let c = crate::copies::Ceiling { rate: c.rate, per_copy: &c.per_copy, workers: a.workers };
            c.print(17, " events/s", rate, 3)?;
        }
        outln!("epochs:          {epochs}")?;
        outln!("events/epoch:    {:.1}", events as f64 / epochs.max(1) as f64)?;
        outln!(
            "epoch duration:  p50 {} ns, p90 {} ns, p99 {} ns, max {} ns",
            hist.value_at_quantile(0.5),
            hist.value_at_quantile(0.9),
            hist.value_at_quantile(0.99),
            hist.max()
        )?;
        outln!("peak RSS:        {}", rss.map_or("unknown".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0)))?;
        outln!("digest:          {digest}")?;
        if let (true, Some(obs)) = (a.profile, &first.observation) {
            crate::output::out!("{}", crate::profile::render(obs, &names, first.sim_end))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What one measurement (all its copies) gave.
struct Measured {
    runs: Vec<PholdRun>,
    /// Events per second, all copies: every copy's events over the longest copy's time.
    rate: f64,
    wall: f64,
    per_copy: Vec<f64>,
}

/// Runs `shape.copies` copies of PHOLD at once and checks that they agree.
fn measure(cfg: &PholdConfig, a: &PholdArgs, shape: Shape) -> anyhow::Result<Measured> {
    let runs: Vec<PholdRun> = crate::copies::run_copies(shape.copies, |start| phold_copy(cfg, a, shape, start))
        .into_iter()
        .collect::<anyhow::Result<_>>()?;
    let first = &runs[0];
    if let Some(other) = runs.iter().find(|r| r.digest != first.digest || r.events != first.events) {
        bail!("copies of the same run differ: digest {} ({} events) against {} ({} events)", first.digest, first.events, other.digest, other.events);
    }
    let wall = runs.iter().map(|r| r.wall).fold(0.0, f64::max);
    let rate = (first.events * u64::from(shape.copies)) as f64 / wall;
    let per_copy = runs.iter().map(|r| r.events as f64 / r.wall).collect();
    Ok(Measured { runs, rate, wall, per_copy })
}
