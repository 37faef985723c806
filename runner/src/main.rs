//! `dojo`: the simdojo command line.
//!
//! The only crate that parses command lines and uses `anyhow`; everything it does is
//! a thin layer over the library crates.

mod bench;
mod plugins;
mod sysinfo;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Simulate AMD Instinct GPUs and other systems on the simdojo engine.
#[derive(Parser, Debug)]
#[command(name = "dojo", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List registered component types with their parameters, ports and statistics.
    Plugins {
        /// Show only this type.
        name: Option<String>,
    },
    /// Run benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Plugins { name } => plugins::run(name.as_deref()),
        Command::Bench(b) => bench::run(b),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dojo: {e:#}");
            ExitCode::from(2)
        }
    }
}
