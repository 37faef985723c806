//! Sequential binary-heap PHOLD: the ground-truth event count and digest.
//!
//! `phold-heap --lps N --events-per-lp K --remote P --lookahead L --mean M
//! --end-time T --workers W [--seed S] [--json]`; `--workers` is accepted for
//! flag compatibility with the parallel engines, and the run is always
//! sequential (reported as one worker).

use std::time::{Duration, Instant};

use anyhow::Context as _;
use benches::phold_cli::{EngineRun, PholdArgs, RunReport};
use benches::phold_heap::run_heap;
use clap::Parser;

/// Sequential binary-heap PHOLD reference.
#[derive(Parser, Debug)]
#[command(about)]
struct Cli {
    #[command(flatten)]
    phold: PholdArgs,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let params = cli.phold.params().context("invalid PHOLD parameters")?;
    if cli.phold.workers != 1 {
        eprintln!(
            "phold-heap: sequential engine, ignoring --workers {}",
            cli.phold.workers
        );
    }
    let start = Instant::now();
    let outcome = run_heap(&params);
    let wall = start.elapsed();
    let run = EngineRun {
        engine: "binary-heap",
        via: None,
        epochs_meaning: "distinct event timestamps (the heap has no epochs)",
        workers: 1,
        setup: Duration::ZERO,
        wall,
    };
    RunReport::new(&params, run, &outcome).print(&cli.phold);
    Ok(())
}
