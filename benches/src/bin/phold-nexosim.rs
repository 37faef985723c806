//! PHOLD on the nexosim 1.0 crate, as a side-by-side peer of simdojo's.
//!
//! `phold-nexosim --lps N --events-per-lp K --remote P --lookahead L --mean M
//! --end-time T --workers W [--seed S] [--via ports|scheduler] [--json]`;
//! `--workers` is the number of nexosim executor threads.

use anyhow::Context as _;
use benches::phold_cli::{EngineRun, PholdArgs, RunReport};
use benches::phold_nexosim::{run_nexosim, Via};
use clap::Parser;

/// PHOLD on nexosim.
#[derive(Parser, Debug)]
#[command(about)]
struct Cli {
    #[command(flatten)]
    phold: PholdArgs,
    /// How events travel between LPs.
    #[arg(long, value_enum, default_value_t = Via::Scheduler)]
    via: Via,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let params = cli.phold.params().context("invalid PHOLD parameters")?;
    if cli.phold.workers == 0 {
        anyhow::bail!("--workers must be at least 1");
    }
    let run = run_nexosim(&params, cli.phold.workers, cli.via).context("nexosim PHOLD run")?;
    let engine = EngineRun {
        engine: "nexosim",
        via: Some(cli.via.name()),
        epochs_meaning: "Simulation::step calls that handled events (one per distinct timestamp)",
        workers: cli.phold.workers,
        setup: run.setup,
        wall: run.wall,
    };
    RunReport::new(&params, engine, &run.outcome).print(&cli.phold);
    Ok(())
}
