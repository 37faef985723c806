//! What `dojo bench apps` measured and how it is shown: one [`Record`] per program and
//! mode, totals per mode, the table, the JSON document (which `--compare` reads back)
//! and the ratios against an earlier document.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::output::outln;

/// One program in one mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    /// The program's name in the suite.
    pub program: String,
    /// `functional` or `timing`.
    pub mode: String,
    /// The program's arguments (its problem size).
    pub args: Vec<String>,
    /// Whether it exited 0 with `PASS` as its last line and a digest.
    pub passed: bool,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Wall time of the whole `dojo run` (sysfs tree, process, simulator), seconds.
    pub wall_seconds: f64,
    /// CPU time (user and system) of the program's process, seconds: the simulator
    /// runs inside it, so this is what the run cost, less sensitive than the wall time
    /// to other load on the machine.
    pub cpu_seconds: f64,
    /// Kernel dispatches, ROCR's copy and fill kernels included.
    pub kernels: u64,
    /// Simulated wave-instructions, all dispatches.
    pub wave_instructions: u64,
    /// Engine-clock cycles, summed over dispatches.
    pub kernel_cycles: u64,
    /// Simulated time with at least one kernel in flight, picoseconds.
    pub kernel_time_ps: u64,
    /// The digest the program printed of its output.
    pub digest: Option<String>,
}

impl Record {
    /// Simulated wave-instructions per second of wall time.
    pub fn rate(&self) -> f64 {
        self.wave_instructions as f64 / self.wall_seconds
    }

    /// Whether `other` ran the same program in the same mode at the same size.
    fn same_run(&self, other: &Record) -> bool {
        self.program == other.program && self.mode == other.mode && self.args == other.args
    }
}

/// Sums over some records.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Records summed.
    pub runs: u64,
    /// Records that failed.
    pub failed: u64,
    /// Wall time, seconds.
    pub wall_seconds: f64,
    /// CPU time, seconds.
    pub cpu_seconds: f64,
    /// Wave-instructions.
    pub wave_instructions: u64,
    /// Wave-instructions per second of the summed wall time.
    pub wave_instructions_per_second: f64,
    /// Kernel time, picoseconds.
    pub kernel_time_ps: u64,
}

impl Totals {
    /// The totals of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Record>) -> Totals {
        let mut t = Totals::default();
        for r in records {
            t.runs += 1;
            t.failed += u64::from(!r.passed);
            t.wall_seconds += r.wall_seconds;
            t.cpu_seconds += r.cpu_seconds;
            t.wave_instructions += r.wave_instructions;
            t.kernel_time_ps += r.kernel_time_ps;
        }
        t.wave_instructions_per_second = t.wave_instructions as f64 / t.wall_seconds;
        t
    }
}

/// The machine and the moment a run started.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Host {
    /// Seconds since the Unix epoch at the start.
    pub started_unix: u64,
    /// Online CPUs.
    pub nproc: usize,
    /// The 1, 5 and 15 minute load averages at the start.
    pub load_average: Option<[f64; 3]>,
    /// Simulation worker threads of every run.
    pub workers: u32,
}

/// The whole run, as `--json` prints it and `--compare` reads it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Where and when.
    pub host: Host,
    /// Every program and mode, in the order they ran.
    pub runs: Vec<Record>,
    /// Totals per mode and over all (`all`).
    pub totals: BTreeMap<String, Totals>,
}

impl Report {
    /// A report of `runs`, with totals.
    pub fn new(host: Host, runs: Vec<Record>) -> Report {
        let mut totals = BTreeMap::new();
        for r in &runs {
            totals.entry(r.mode.clone()).or_insert(Totals::default());
        }
        for (mode, t) in totals.iter_mut() {
            *t = Totals::of(runs.iter().filter(|r| &r.mode == mode));
        }
        totals.insert("all".into(), Totals::of(&runs));
        Report { host, runs, totals }
    }

    /// Whether every program passed.
    pub fn passed(&self) -> bool {
        self.runs.iter().all(|r| r.passed)
    }
}

/// A duration in picoseconds, readable (`12.3 us`, `4.56 ms`).
fn sim_time(ps: u64) -> String {
    let s = ps as f64 * 1e-12;
    if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

/// Prints the table of `report`.
pub fn print_table(report: &Report) -> anyhow::Result<()> {
    outln!(
        "{:<13} {:<10} {:<16} {:>9} {:>9} {:>15} {:>10} {:>12}  result",
        "program", "mode", "size", "wall s", "cpu s", "wave-instr", "M wi/s", "kernel time"
    )?;
    for r in &report.runs {
        let result = match (&r.failure, &r.digest) {
            (Some(reason), _) => format!("FAILED: {reason}"),
            (None, Some(d)) => format!("PASS {d}"),
            (None, None) => "PASS".to_string(),
        };
        outln!(
            "{:<13} {:<10} {:<16} {:>9.3} {:>9.3} {:>15} {:>10.3} {:>12}  {result}",
            r.program,
            r.mode,
            r.args.join(" "),
            r.wall_seconds,
            r.cpu_seconds,
            r.wave_instructions,
            r.rate() / 1e6,
            sim_time(r.kernel_time_ps)
        )?;
    }
    // Per mode first, then over all.
    let totals = report.totals.iter().filter(|(name, _)| *name != "all").chain(report.totals.get_key_value("all"));
    for (name, t) in totals {
        let failed = if t.failed > 0 { format!("  {} FAILED", t.failed) } else { String::new() };
        outln!(
            "{:<13} {:<10} {:<16} {:>9.3} {:>9.3} {:>15} {:>10.3} {:>12}  {} runs{failed}",
            "total",
            name,
            "",
            t.wall_seconds,
            t.cpu_seconds,
            t.wave_instructions,
            t.wave_instructions_per_second / 1e6,
            sim_time(t.kernel_time_ps),
            t.runs
        )?;
    }
    let h = &report.host;
    let load = h.load_average.map_or("unknown".into(), |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]));
    outln!("workers {}, nproc {}, load average at the start {load}", h.workers, h.nproc)?;
    Ok(())
}

/// One run's figures against the same run in an earlier report: this / earlier.
#[derive(Clone, Debug, Serialize)]
pub struct Ratio {
    /// Program name.
    pub program: String,
    /// Mode name.
    pub mode: String,
    /// Wall time ratio (below 1: faster now).
    pub wall_seconds: f64,
    /// CPU time ratio.
    pub cpu_seconds: f64,
    /// Wave-instructions per wall second ratio (above 1: faster now).
    pub wave_instructions_per_second: f64,
    /// Wave-instruction count ratio (1 unless the simulated work changed).
    pub wave_instructions: f64,
    /// Simulated kernel time ratio.
    pub kernel_time: f64,
    /// Whether both printed the same digest.
    pub same_digest: bool,
}

/// This report against an earlier one.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Runs present in both, at the same size, both passing.
    pub runs: Vec<Ratio>,
    /// Runs of this report the earlier one lacks at the same size (or where either
    /// failed), not compared.
    pub unmatched: Vec<String>,
    /// Totals over the compared runs: this / earlier.
    pub wall_seconds: f64,
    /// CPU time of the compared runs: this / earlier.
    pub cpu_seconds: f64,
    /// Wave-instructions per second over the compared runs: this / earlier.
    pub wave_instructions_per_second: f64,
}

impl Comparison {
    /// Whether a compared run's digest changed: the simulated program computed
    /// something else.
    pub fn digest_changed(&self) -> bool {
        self.runs.iter().any(|r| !r.same_digest)
    }
}

/// Compares `now` with `earlier`, run by run.
pub fn compare(now: &Report, earlier: &Report) -> Comparison {
    let (mut runs, mut unmatched) = (Vec::new(), Vec::new());
    let (mut this, mut then) = (Vec::new(), Vec::new());
    for r in &now.runs {
        let Some(e) = earlier.runs.iter().find(|e| e.same_run(r) && e.passed && r.passed) else {
            unmatched.push(format!("{} {}", r.program, r.mode));
            continue;
        };
        let ratio = |a: f64, b: f64| a / b;
        runs.push(Ratio {
            program: r.program.clone(),
            mode: r.mode.clone(),
            wall_seconds: ratio(r.wall_seconds, e.wall_seconds),
            cpu_seconds: ratio(r.cpu_seconds, e.cpu_seconds),
            wave_instructions_per_second: ratio(r.rate(), e.rate()),
            wave_instructions: ratio(r.wave_instructions as f64, e.wave_instructions as f64),
            kernel_time: ratio(r.kernel_time_ps as f64, e.kernel_time_ps as f64),
            same_digest: r.digest == e.digest,
        });
        this.push(r.clone());
        then.push(e.clone());
    }
    let (a, b) = (Totals::of(&this), Totals::of(&then));
    Comparison {
        runs,
        unmatched,
        wall_seconds: a.wall_seconds / b.wall_seconds,
        cpu_seconds: a.cpu_seconds / b.cpu_seconds,
        wave_instructions_per_second: a.wave_instructions_per_second / b.wave_instructions_per_second,
    }
}

/// Prints `c`, the comparison with the report in `file`.
pub fn print_comparison(c: &Comparison, file: &str) -> anyhow::Result<()> {
    outln!()?;
    outln!("against {file} (this run / that run):")?;
    outln!(
        "{:<13} {:<10} {:>9} {:>9} {:>10} {:>11} {:>12}  digest",
        "program", "mode", "wall", "cpu", "wi/s", "wave-instr", "kernel time"
    )?;
    for r in &c.runs {
        outln!(
            "{:<13} {:<10} {:>9.3} {:>9.3} {:>10.3} {:>11.3} {:>12.3}  {}",
            r.program,
            r.mode,
            r.wall_seconds,
            r.cpu_seconds,
            r.wave_instructions_per_second,
            r.wave_instructions,
            r.kernel_time,
            if r.same_digest { "same" } else { "DIFFERS" }
        )?;
    }
    outln!(
        "{:<13} {:<10} {:>9.3} {:>9.3} {:>10.3}",
        "total", "", c.wall_seconds, c.cpu_seconds, c.wave_instructions_per_second
    )?;
    if !c.unmatched.is_empty() {
        outln!("not compared (absent there, another size, or failed): {}", c.unmatched.join(", "))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(program: &str, mode: &str, wall: f64, instructions: u64, digest: &str) -> Record {
        Record {
            program: program.into(),
            mode: mode.into(),
            args: vec!["8".into()],
            passed: true,
            failure: None,
            wall_seconds: wall,
            cpu_seconds: wall,
            kernels: 1,
            wave_instructions: instructions,
            kernel_cycles: 10,
            kernel_time_ps: 1000,
            digest: Some(digest.into()),
        }
    }

    fn host() -> Host {
        Host { started_unix: 0, nproc: 2, load_average: None, workers: 1 }
    }

    #[test]
    fn totals_per_mode_and_over_all() {
        let report = Report::new(
            host(),
            vec![record("a", "functional", 1.0, 100, "x"), record("a", "timing", 3.0, 100, "x")],
        );
        assert_eq!(report.totals["functional"].wall_seconds, 1.0);
        assert_eq!(report.totals["all"].wall_seconds, 4.0);
        assert_eq!(report.totals["all"].wave_instructions_per_second, 50.0);
        assert!(report.passed());
    }

    #[test]
    fn comparison_gives_ratios_and_flags_changed_digests() {
        let earlier = Report::new(
            host(),
            vec![record("a", "functional", 4.0, 100, "x"), record("b", "functional", 4.0, 100, "y")],
        );
        let mut b = record("b", "functional", 1.0, 100, "z");
        b.args = vec!["16".into()];
        let now = Report::new(host(), vec![record("a", "functional", 1.0, 100, "x"), b]);
        let c = compare(&now, &earlier);
        assert_eq!(c.runs.len(), 1, "b ran at another size");
        assert_eq!(c.unmatched, ["b functional"]);
        assert_eq!(c.wall_seconds, 0.25);
        assert_eq!(c.runs[0].wave_instructions_per_second, 4.0);
        assert!(!c.digest_changed());
        let changed = Report::new(host(), vec![record("a", "functional", 1.0, 100, "other")]);
        assert!(compare(&changed, &earlier).digest_changed());
    }

    #[test]
    fn a_report_reads_back_from_its_json() {
        let report = Report::new(host(), vec![record("a", "timing", 2.0, 7, "d")]);
        let text = serde_json::to_string(&report).unwrap();
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back.runs[0].wave_instructions, 7);
        assert_eq!(back.totals["timing"].wall_seconds, 2.0);
    }
}
