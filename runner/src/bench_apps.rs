//! `dojo bench apps`: a real-application benchmark. Runs the HIP programs of the suite
//! ([`suite::PROGRAMS`]: vector add, reduction, transpose, tiled SGEMM, 2D convolution,
//! histogram, scan, bitonic sort, SpMV through rocSPARSE, a rocPRIM sort) under
//! `dojo run`, in functional and in timing mode, and reports per program and mode the
//! wall time, the simulated wave-instructions (from the driver's per-kernel statistics)
//! and their rate, and the simulated kernel time; `--compare` gives each figure's ratio
//! against an earlier `--json` report.
//!
//! The programs are built first (hipcc, cached by content; see [`build`]), so builds
//! are never timed; then each run is one `dojo run` session, timed end to end, one at a
//! time. Every program checks its result against the host, prints a digest of its
//! output and ends with PASS: a run without them, or with a non-zero status, is
//! reported as failed and makes the command exit 1.

mod build;
mod report;
mod suite;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Instant;

use amdgpu::gpu::stats::KernelStats;
use anyhow::Context as _;
use clap::Args;

use crate::output::outln;
use crate::run::{RunOptions, Session};
use report::{Host, Record, Report};
use suite::{Mode, Program, Sizes};

/// Arguments of `dojo bench apps`.
#[derive(Args, Debug)]
pub struct AppsArgs {
    /// Run only these programs (comma-separated suite names).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Run only this mode (default: both, functional first).
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Small problem sizes (about a second each) instead of the benchmark's: a quick
    /// check that the suite passes.
    #[arg(long)]
    quick: bool,
    /// Simulation worker threads of every run.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    workers: u32,
    /// Where the built programs are kept (default: $XDG_CACHE_HOME/dojo/bench-apps).
    #[arg(long, value_name = "DIR")]
    build_dir: Option<PathBuf>,
    /// Keep each run's per-kernel statistics (as `dojo run --stats` writes them) in DIR
    /// as PROGRAM.MODE.json.
    #[arg(long, value_name = "DIR")]
    stats_dir: Option<PathBuf>,
    /// Print each figure's ratio to the same run in FILE (an earlier `--json` report).
    #[arg(long, value_name = "FILE")]
    compare: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs `dojo bench apps`.
pub fn run(a: AppsArgs) -> anyhow::Result<ExitCode> {
    let programs = suite::select(&a.only)?;
    let modes: Vec<Mode> = match a.mode {
        Some(m) => vec![m],
        None => vec![Mode::Functional, Mode::Timing],
    };
    let sizes = if a.quick { Sizes::Quick } else { Sizes::Full };
    let earlier = match &a.compare {
        Some(path) => {
            let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let report: Report = serde_json::from_slice(&text)
                .with_context(|| format!("{}: not a `dojo bench apps --json` report", path.display()))?;
            Some(report)
        }
        None => None,
    };
    let stats_dir = match &a.stats_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            None
        }
        None => Some(tempfile::Builder::new().prefix("dojo-bench-apps-").tempdir().context("creating a directory for the statistics")?),
    };
    let stats_dir: &Path = a.stats_dir.as_deref().or(stats_dir.as_ref().map(|d| d.path())).expect("one of the two is set");

    let builder = build::Builder::new(&a.build_dir.clone().unwrap_or_else(build::default_dir))?;
    let built: Vec<(&Program, Result<PathBuf, String>)> = programs.iter().map(|p| (*p, builder.build(p))).collect();

    let host = Host { started_unix: unix_now(), nproc: nproc(), load_average: load_average(), workers: a.workers };
    let mut runs = Vec::new();
    for &mode in &modes {
        for (program, exe) in &built {
            let args = program.args(mode, sizes);
            let record = match exe {
                Ok(exe) => {
                    let stats = stats_dir.join(format!("{}.{}.json", program.name, mode.as_str()));
                    run_program(program, exe, mode, args, a.workers, &stats)?
                }
                Err(reason) => failed_build(program, mode, args, reason),
            };
            eprintln!(
                "dojo bench apps: {} {}: {:.3} s{}",
                record.program,
                record.mode,
                record.wall_seconds,
                record.failure.as_ref().map_or(String::new(), |f| format!(", FAILED: {f}"))
            );
            runs.push(record);
        }
    }
    let report = Report::new(host, runs);
    let comparison = earlier.as_ref().map(|e| report::compare(&report, e));
    if a.json {
        let mut value = serde_json::to_value(&report)?;
        if let Some(c) = &comparison {
            value["compare"] = serde_json::to_value(c)?;
        }
        outln!("{value}")?;
    } else {
        report::print_table(&report)?;
        if let (Some(c), Some(path)) = (&comparison, &a.compare) {
            report::print_comparison(c, &path.display().to_string())?;
        }
    }
    let digest_changed = comparison.as_ref().is_some_and(|c| c.digest_changed());
    if digest_changed {
        eprintln!("dojo bench apps: a digest differs from the earlier run's: the simulated programs computed something else");
    }
    Ok(if report.passed() && !digest_changed { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The record of a program that could not be built.
fn failed_build(program: &Program, mode: Mode, args: &[&str], reason: &str) -> Record {
    Record {
        program: program.name.into(),
        mode: mode.as_str().into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        passed: false,
        failure: Some(format!("build: {reason}")),
        wall_seconds: 0.0,
        cpu_seconds: 0.0,
        kernels: 0,
        wave_instructions: 0,
        kernel_cycles: 0,
        kernel_time_ps: 0,
        digest: None,
    }
}

/// Runs `exe` once under `dojo run --mode MODE --workers N --stats STATS` and reads
/// what it printed and what the driver wrote. An error is one every run would hit
/// (the interposer is missing, a pipe cannot be made); a failing program is a record.
fn run_program(program: &Program, exe: &Path, mode: Mode, args: &[&str], workers: u32, stats: &Path) -> anyhow::Result<Record> {
    // A stale file must not pass for this run's statistics.
    match std::fs::remove_file(stats) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing {}", stats.display()));
        }
        _ => {}
    }
    let options = RunOptions {
        workers: Some(workers),
        mode: Some(mode.as_str().into()),
        stats: Some(stats.to_path_buf()),
        ..RunOptions::default()
    };
    let cpu_before = children_cpu_seconds();
    let start = Instant::now();
    let session = Session::new(&options)?;
    let os_args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    let mut command = session.command(exe.as_os_str(), &os_args);
    without_address_randomization(&mut command);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let stdout = drain(child.stdout.take().context("the program's stdout")?);
    let stderr = drain(child.stderr.take().context("the program's stderr")?);
    let status = child.wait().with_context(|| format!("waiting for {}", exe.display()))?;
    drop(session);
    let wall_seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = children_cpu_seconds() - cpu_before;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();

    let digest = stdout.lines().find_map(|l| l.strip_prefix("digest ")).map(|d| d.trim().to_string());
    let kernels = amdgpu::gpu::stats::StatsFile::read(stats).map(|f| f.kernels).map_err(|e| e.to_string());
    let failure = if !status.success() {
        match stderr.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(last) => Some(format!("{status}: {last}")),
            None => Some(status.to_string()),
        }
    } else if stdout.lines().last() != Some("PASS") {
        Some(format!("no PASS line (last line: {:?})", stdout.lines().last().unwrap_or("")))
    } else if digest.is_none() {
        Some("no digest line".into())
    } else if let Err(e) = &kernels {
        Some(format!("no statistics in {}: {e}", stats.display()))
    } else {
        None
    };
    let kernels = kernels.unwrap_or_default();
    Ok(Record {
        program: program.name.into(),
        mode: mode.as_str().into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        passed: failure.is_none(),
        failure,
        wall_seconds,
        cpu_seconds,
        kernels: kernels.len() as u64,
        wave_instructions: kernels.iter().map(KernelStats::wave_instructions).sum(),
        kernel_cycles: kernels.iter().map(|k| k.cycles).sum(),
        kernel_time_ps: busy_time(&kernels),
        digest,
    })
}

/// Simulated time with at least one of `kernels` in flight, picoseconds (kernels on
/// several queues may overlap; the union counts once).
fn busy_time(kernels: &[KernelStats]) -> u64 {
    let mut spans: Vec<(u64, u64)> = kernels.iter().map(|k| (k.start_ps, k.end_ps.max(k.start_ps))).collect();
    spans.sort_unstable();
    let (mut total, mut open) = (0, None::<(u64, u64)>);
    for (start, end) in spans {
        open = match open {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + open.map_or(0, |(s, e)| e - s)
}

/// Runs `command` with address-space randomization off (as `setarch -R` does), so that
/// the program's buffers mostly get the same virtual addresses from run to run: the
/// timing model's caches index by address, so a timing-mode run's cycles depend on
/// where the buffers are. Threads (the runtime's, the simulator's workers) map memory
/// too, at moments that vary, so the addresses can still differ between runs, and more
/// often between worker counts; functional-mode figures do not depend on them. Where
/// the kernel refuses, the program runs randomized.
fn without_address_randomization(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the closure only calls personality(2), which is async-signal-safe, and
    // allocates nothing between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let current = libc::personality(0xffff_ffff);
            if current != -1 {
                libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong);
            }
            Ok(())
        });
    }
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// User and system CPU seconds of the waited-for children so far.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage into the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Online CPUs.
fn nproc() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`).
fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<f64>().ok());
    Some([fields.next()??, fields.next()??, fields.next()??])
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(start_ps: u64, end_ps: u64) -> KernelStats {
        KernelStats { start_ps, end_ps, ..KernelStats::default() }
    }

    #[test]
    fn busy_time_counts_overlapping_kernels_once() {
        assert_eq!(busy_time(&[]), 0);
        assert_eq!(busy_time(&[kernel(10, 20), kernel(30, 35)]), 15);
        assert_eq!(busy_time(&[kernel(30, 50), kernel(10, 40), kernel(60, 61)]), 41);
        assert_eq!(busy_time(&[kernel(10, 20), kernel(20, 25)]), 15);
    }
}
