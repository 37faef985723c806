//! `--ceiling` of `dojo exec` and `dojo run`: after the N-worker run, the same command
//! again as N one-worker copies of this binary at once (child processes, output
//! discarded), so the parallel run's wall time is compared with what this machine gives
//! N independent simulations in the same invocation.
//!
//! The figure is `ceiling wall / (N x parallel wall)`: 1.0 when N workers finish one
//! program as fast as N independent copies finish N programs each on one worker.

use std::ffi::{OsStr, OsString};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use crate::output::outln;

/// The arguments of one copy: this invocation's own arguments (after the program
/// name) up to `stop` (the program the command runs, or `--`), without `--ceiling`,
/// with `--workers 1` (replacing any `--workers N`/`--workers=N`); the rest unchanged.
pub fn copy_args(args: &[OsString], stop: &OsStr) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut i = 0;
    let mut workers_set = false;
    while i < args.len() {
        let a = &args[i];
        if a == "--" || a == stop {
            break;
        }
        if a == "--ceiling" {
            i += 1;
            continue;
        }
        if a == "--workers" {
            out.push(OsString::from("--workers"));
            out.push(OsString::from("1"));
            workers_set = true;
            i += 2;
            continue;
        }
        if a.to_str().is_some_and(|s| s.starts_with("--workers=")) {
            out.push(OsString::from("--workers=1"));
            workers_set = true;
            i += 1;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    if !workers_set {
        out.push(OsString::from("--workers"));
        out.push(OsString::from("1"));
    }
    out.extend(args[i.min(args.len())..].iter().cloned());
    out
}

/// What the copies measured.
pub struct CopiesRun {
    /// Wall time from the start of the first copy to the end of the last.
    pub wall: Duration,
    /// Each copy's own wall time, in start order.
    pub per_copy: Vec<Duration>,
}

/// Runs `n` copies of this binary with `args` at once, output discarded; fails if a
/// copy fails (naming its status).
pub fn run_copies(n: u32, args: &[OsString]) -> anyhow::Result<CopiesRun> {
    let exe = std::env::current_exe().context("locating the dojo binary for --ceiling")?;
    let start = Instant::now();
    let mut children = Vec::with_capacity(n as usize);
    for copy in 0..n {
        let child = Command::new(&exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting --ceiling copy {copy}"))?;
        children.push(child);
    }
    let mut per_copy = Vec::with_capacity(children.len());
    let mut failed = None;
    for (copy, mut child) in children.into_iter().enumerate() {
        let status = child.wait().with_context(|| format!("waiting for --ceiling copy {copy}"))?;
        per_copy.push(start.elapsed());
        if !status.success() && failed.is_none() {
            failed = Some((copy, status));
        }
    }
    let wall = start.elapsed();
    if let Some((copy, status)) = failed {
        bail!("--ceiling copy {copy} failed ({status}); it ran: dojo {}", shown(args));
    }
    Ok(CopiesRun { wall, per_copy })
}

fn shown(args: &[OsString]) -> String {
    args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

/// Measures the ceiling for an N-worker run that took `parallel` and prints the two
/// lines (`ceiling:` and `of ceiling:`) on standard output.
pub fn report(workers: u32, parallel: Duration, args: &[OsString], stop: &OsStr) -> anyhow::Result<()> {
    if workers < 2 {
        bail!("--ceiling compares --workers N (N at least 2) with N one-worker copies");
    }
    let copies = run_copies(workers, &copy_args(args, stop))?;
    let each: Vec<String> = copies.per_copy.iter().map(|d| format!("{:.3} s", d.as_secs_f64())).collect();
    outln!(
        "ceiling:     {workers} one-worker copies at once in {:.3} s ({}); {workers} workers: {:.3} s",
        copies.wall.as_secs_f64(),
        each.join(", "),
        parallel.as_secs_f64()
    )?;
    outln!(
        "of ceiling:  {:.3} ({workers} workers against {workers} copies)",
        copies.wall.as_secs_f64() / (f64::from(workers) * parallel.as_secs_f64())
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::copy_args;
    use std::ffi::OsString;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn copies_run_one_worker_without_ceiling_and_keep_the_program_arguments() {
        let args = os(&["exec", "--workers", "2", "--ceiling", "p.co", "--workers", "7"]);
        assert_eq!(copy_args(&args, "p.co".as_ref()), os(&["exec", "--workers", "1", "p.co", "--workers", "7"]));
        let args = os(&["run", "--ceiling", "--workers=4", "--", "./a", "--ceiling"]);
        assert_eq!(copy_args(&args, "./a".as_ref()), os(&["run", "--workers=1", "--", "./a", "--ceiling"]));
        let args = os(&["run", "--ceiling", "--", "./a"]);
        assert_eq!(copy_args(&args, "./a".as_ref()), os(&["run", "--workers", "1", "--", "./a"]));
    }
}
