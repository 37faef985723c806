//! `dojo bench run`: wall time of `dojo run -- APP`, against the simulator's start.
//!
//! Each repetition measures two runs, each end to end (checking the configuration,
//! writing the sysfs tree, the process, removing the tree):
//! - **start**: a shell that opens `/dev/kfd` and exits; it pays for what every run
//!   pays (process start, interposer, the simulated driver and simulator starting and
//!   stopping) and nothing else;
//! - **app**: APP with its arguments.
//!
//! The report gives the minimum and median of both and of their difference, what APP
//! adds over the simulator's start (the targets: `rocminfo` adds <= 1 s; the
//! 1 Mi-element vector add takes <= 5 s end to end).

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail};
use clap::Args;
use serde_json::json;

use crate::run::{shell_status, RunOptions, Session};
use crate::output::outln;

/// The start probe: opens the KFD device (read-only: a shell's read-write redirection
/// would create the file where there is no interposer), then exits.
const START_PROBE: [&str; 3] = ["/bin/sh", "-c", "exec 3</dev/kfd"];

/// Arguments of `dojo bench run`.
#[derive(Args, Debug)]
pub struct BenchRunArgs {
    #[command(flatten)]
    options: RunOptions,
    /// Repetitions (each runs the start probe and APP once).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// The program and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "APP"
    )]
    command: Vec<OsString>,
}

/// Minimum and median of some durations in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Summary {
    min: f64,
    median: f64,
}

fn summarize(values: &[f64]) -> Summary {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    };
    Summary {
        min: sorted.first().copied().unwrap_or(f64::NAN),
        median,
    }
}

/// One end-to-end run: seconds taken and the shell status.
fn timed_run(options: &RunOptions, command: &[OsString]) -> anyhow::Result<(f64, u8)> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| anyhow!("no program given"))?;
    let start = Instant::now();
    let session = Session::new(options)?;
    let status = session.run(program, args)?;
    drop(session);
    Ok((start.elapsed().as_secs_f64(), shell_status(status)))
}

/// Runs `dojo bench run`.
pub fn run(a: BenchRunArgs) -> anyhow::Result<ExitCode> {
    let probe: Vec<OsString> = START_PROBE.iter().map(OsString::from).collect();
    let (mut starts, mut apps, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..a.repeat {
        let (start, status) = timed_run(&a.options, &probe)?;
        if status != 0 {
            bail!(
                "the start probe (`{}`) exited with status {status}: the simulator did not start",
                START_PROBE.join(" ")
            );
        }
        let (app, status) = timed_run(&a.options, &a.command)?;
        if status != 0 {
            eprintln!(
                "dojo bench run: {} exited with status {status}",
                a.command[0].to_string_lossy()
            );
            return Ok(ExitCode::from(status));
        }
        if !a.json {
            eprintln!("run {}: start {start:.3} s, app {app:.3} s", i + 1);
        }
        starts.push(start);
        apps.push(app);
        added.push(app - start);
    }
    let (start, app, add) = (summarize(&starts), summarize(&apps), summarize(&added));
    let name: Vec<String> = a
        .command
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if a.json {
        let pair = |s: Summary| json!({ "min": s.min, "median": s.median });
        outln!(
            "{}",
            json!({
                "command": name,
                "repeat": a.repeat,
                "start_seconds": pair(start),
                "run_seconds": pair(app),
                "added_seconds": pair(add),
            })
        )?;
    } else {
        outln!("command:          {}", name.join(" "))?;
        outln!("repetitions:      {}", a.repeat)?;
        outln!(
            "simulator start:  min {:.3} s, median {:.3} s",
            start.min, start.median
        )?;
        outln!(
            "whole run:        min {:.3} s, median {:.3} s",
            app.min, app.median
        )?;
        outln!(
            "added over start: min {:.3} s, median {:.3} s",
            add.min, add.median
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_and_median() {
        assert_eq!(
            summarize(&[3.0, 1.0, 2.0]),
            Summary {
                min: 1.0,
                median: 2.0
            }
        );
        assert_eq!(
            summarize(&[4.0, 1.0, 2.0, 3.0]),
            Summary {
                min: 1.0,
                median: 2.5
            }
        );
        assert_eq!(
            summarize(&[0.5]),
            Summary {
                min: 0.5,
                median: 0.5
            }
        );
        assert!(summarize(&[]).median.is_nan());
    }
}
