//! `dojo sim FILE`: run a topology file to its end, with statistics and checkpoints.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _};
use clap::Args;
use simdojo::engine::{Checkpoint, ExitReason, SimConfig, Simulation};
use simdojo::time::Tick;
use crate::output::{out, outln};

#[derive(Args, Debug)]
pub struct SimArgs {
    /// The topology file (TOML or JSON).
    file: PathBuf,
    /// Simulation worker threads (partitions).
    #[arg(long, value_parser = crate::plan::workers_arg)]
    workers: Option<u32>,
    /// Partitioner: single, round-robin, linear, subtree[:PREFIX], manual, mincut.
    #[arg(long)]
    partitioner: Option<String>,
    /// Keep every partition on its own thread even when epochs are too small to pay
    /// for it (by default the engine then merges partitions).
    #[arg(long)]
    fixed_partitions: bool,
    /// End time, such as `10us` (overrides the topology's `max_ticks`).
    #[arg(long)]
    max_ticks: Option<String>,
    /// Write the statistics as JSON to this file.
    #[arg(long)]
    stats: Option<PathBuf>,
    /// Pause at this time and write a checkpoint to `--checkpoint-out`.
    #[arg(long, requires = "checkpoint_out")]
    checkpoint_at: Option<String>,
    /// Where `--checkpoint-at` writes the checkpoint; with `--checkpoint-every`, the
    /// prefix of the periodic checkpoints (`PREFIX.<picoseconds>.ckpt`).
    #[arg(long)]
    checkpoint_out: Option<PathBuf>,
    /// Write a checkpoint every this much simulated time (such as `10us`), to
    /// `--checkpoint-out` with the time in the name, keeping the last `--keep`.
    #[arg(long, requires = "checkpoint_out", conflicts_with = "checkpoint_at")]
    checkpoint_every: Option<String>,
    /// Periodic checkpoints to keep (the oldest are deleted).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    keep: u32,
    /// Start from this checkpoint instead of time zero.
    #[arg(long)]
    restore: Option<PathBuf>,
    /// Observe the run (each event is timed, which slows it) and print where the wall
    /// time went, with the parallelism profile (as `dojo bench phold --profile`).
    #[arg(long)]
    profile: bool,
    /// Observe the run and write a Chrome trace (JSON, which Perfetto loads) to FILE.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    #[command(flatten)]
    set: crate::set_args::SetArgs,
}

fn duration(flag: &str, text: &str) -> anyhow::Result<Tick> {
    Tick::parse_duration_with_unit(text).with_context(|| format!("--{flag}"))
}

pub fn run(a: SimArgs) -> anyhow::Result<ExitCode> {
    let spec = amdgpu::host::spec::MachineSpec {
        overrides: a.set.set.clone(),
        ..amdgpu::host::spec::MachineSpec::new(amdgpu::host::spec::TopologySource::File(a.file.clone()))
    };
    let t = match crate::machine_spec::resolve_file(&spec)? {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    let plan = crate::plan::choose(&t, a.workers, a.partitioner.as_deref())?;
    let workers = plan.n_partitions;
    let max_ticks = a.max_ticks.as_deref().map(|m| duration("max-ticks", m)).transpose()?;
    let config = SimConfig {
        assignment: Some(plan.assignment),
        max_ticks,
        progress: true,
        fixed_partitions: a.fixed_partitions,
        observe: a.profile || a.trace.is_some(),
        ..SimConfig::default()
    };
    let mut sim = match &a.restore {
        Some(path) => Simulation::restore(&t, &config, &Checkpoint::read_file(path)?)?,
        None => Simulation::build(&t, &config)?,
    };
    let events_before = sim.summary().events;
    let start = Instant::now();
    if let (Some(at), Some(out)) = (&a.checkpoint_at, &a.checkpoint_out) {
        let at = duration("checkpoint-at", at)?;
        if at <= sim.now() {
            bail!("--checkpoint-at {at} is not after the simulation's time {} (the restored checkpoint's): time never runs backwards", sim.now());
        }
        let status = sim.run_until(at);
        if status.reason != ExitReason::Paused {
            bail!("the run ended before --checkpoint-at: {status}");
        }
        sim.checkpoint()?.write_file(out)?;
        eprintln!("checkpoint at {at} written to {}", out.display());
    }
    if let (Some(every), Some(prefix)) = (&a.checkpoint_every, &a.checkpoint_out) {
        periodic_checkpoints(&mut sim, duration("checkpoint-every", every)?, prefix, a.keep as usize)?;
    }
    let status = sim.run();
    let wall = start.elapsed().as_secs_f64();
    sim.shutdown()?;
    let report = sim.stats();
    if let Some(path) = &a.stats {
        let json = serde_json::to_string_pretty(&report.to_json())?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    out!("{}", report.to_table())?;
    // Only the events this invocation ran (a restored run starts with the saved count).
    let events = sim.summary().events - events_before;
    outln!("{status}")?;
    outln!(
        "{events} events in {wall:.3} s ({:.2} M events/s) on {} worker(s), {} partition(s) at the end, {} epochs",
        events as f64 / wall.max(1e-9) / 1e6,
        workers,
        sim.partitions(),
        sim.summary().sync.epochs
    )?;
    if let Some(obs) = sim.observation() {
        let paths: Vec<String> = t.components.iter().map(|c| c.path.clone()).collect();
        let types: Vec<String> = t.components.iter().map(|c| c.type_name.clone()).collect();
        let names = crate::profile::Names { paths: &paths, types: &types };
        if let Some(path) = &a.trace {
            crate::profile::write_trace(path, &obs, &names)?;
        }
        if a.profile {
            out!("{}", crate::profile::render(&obs, &names, sim.now()))?;
        }
    }
    Ok(match status.reason {
        ExitReason::Error => ExitCode::from(1),
        _ => ExitCode::from(status.code.clamp(0, 255) as u8),
    })
}

/// Runs in steps of `every`, writing `PREFIX.<picoseconds>.ckpt` at each and keeping the
/// last `keep`; returns when the run ends (the caller reports how).
fn periodic_checkpoints(sim: &mut Simulation, every: Tick, prefix: &std::path::Path, keep: usize) -> anyhow::Result<()> {
    if every == Tick::ZERO {
        bail!("--checkpoint-every must be more than zero");
    }
    let mut written: std::collections::VecDeque<PathBuf> = std::collections::VecDeque::new();
    let mut next = sim.now().saturating_add(every);
    loop {
        let status = sim.run_until(next);
        if status.reason != ExitReason::Paused {
            return Ok(());
        }
        let mut name = prefix.as_os_str().to_owned();
        name.push(format!(".{}.ckpt", next.0));
        let path = PathBuf::from(name);
        sim.checkpoint()?.write_file(&path)?;
        written.push_back(path);
        while written.len() > keep {
            if let Some(old) = written.pop_front() {
                std::fs::remove_file(&old).with_context(|| format!("removing {}", old.display()))?;
            }
        }
        next = next.saturating_add(every);
    }
}
