//! Command-line flags and the report shared by every PHOLD binary.
//!
//! Every PHOLD binary takes the same flags ([`PholdArgs`]) and prints either
//! human-readable lines or one JSON object ([`RunReport`]), so that scripts can
//! run the engines side by side and compare `events` and `digest`.

use std::time::Duration;

use clap::Args;
use serde::Serialize;

use crate::phold_outcome::PholdOutcome;
use crate::phold_spec::{format_digest, ParamsError, PholdParams, PholdRequest};

/// The PHOLD flags common to every engine. Times are in nanoseconds.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct PholdArgs {
    /// Number of logical processes.
    #[arg(long, default_value_t = 1024)]
    pub lps: u64,
    /// Initial events per LP.
    #[arg(long, default_value_t = 4)]
    pub events_per_lp: u64,
    /// Probability that an event is sent to another LP.
    #[arg(long, default_value_t = 0.25)]
    pub remote: f64,
    /// Minimum delay of every event, in ns (rounded to whole ps).
    #[arg(long, default_value_t = 1.0)]
    pub lookahead: f64,
    /// Mean of the exponential part of the delay, in ns.
    #[arg(long, default_value_t = 1.0)]
    pub mean: f64,
    /// Simulated end time, in ns; events at or after it are not handled.
    #[arg(long, default_value_t = 3000.0)]
    pub end_time: f64,
    /// Worker threads of the engine.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Seed of the per-LP random streams.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of text lines.
    #[arg(long)]
    pub json: bool,
}

impl PholdArgs {
    /// Validates the model flags and converts them to ticks.
    pub fn params(&self) -> Result<PholdParams, ParamsError> {
        PholdParams::new(&PholdRequest {
            lps: self.lps,
            events_per_lp: self.events_per_lp,
            remote: self.remote,
            lookahead_ns: self.lookahead,
            mean_ns: self.mean,
            end_time_ns: self.end_time,
            seed: self.seed,
        })
    }
}

/// What a PHOLD binary reports. Serialized as the `--json` object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// Engine name: `"nexosim"`, `"binary-heap"`, ...
    pub engine: &'static str,
    /// How events travel inside the engine (nexosim: `ports` or `scheduler`).
    pub via: Option<&'static str>,
    /// Events handled.
    pub events: u64,
    /// `events / wall_seconds`.
    pub events_per_sec: f64,
    /// Engine steps (see `epochs_meaning`), or null.
    pub epochs: Option<u64>,
    /// What `epochs` counts for this engine.
    pub epochs_meaning: &'static str,
    /// Spec digest of the final state, 16 hex digits.
    pub digest: String,
    /// Wall time of the simulation proper, from scheduling the startup events
    /// to the last event (excludes building the model and the final readout).
    pub wall_seconds: f64,
    /// Wall time spent building the model before `wall_seconds` starts.
    pub setup_seconds: f64,
    /// Peak resident set size of the process (`VmHWM`), if known.
    pub peak_rss_bytes: Option<u64>,
    /// Worker threads used.
    pub workers: usize,
    /// `--lps`.
    pub lps: u32,
    /// `--events-per-lp`.
    pub events_per_lp: u32,
    /// `--remote`.
    pub remote: f64,
    /// Lookahead in ticks (ps).
    pub lookahead_ticks: u64,
    /// Mean in ticks (ps).
    pub mean_ticks: u64,
    /// End time in ticks (ps).
    pub end_time_ticks: u64,
    /// `--seed`.
    pub seed: u64,
}

/// Engine-specific facts that go into a [`RunReport`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineRun {
    /// Engine name.
    pub engine: &'static str,
    /// Event transport, if the engine has several.
    pub via: Option<&'static str>,
    /// What the outcome's `epochs` counts.
    pub epochs_meaning: &'static str,
    /// Worker threads used.
    pub workers: usize,
    /// Model building time.
    pub setup: Duration,
    /// Simulation time.
    pub wall: Duration,
}

impl RunReport {
    /// Assembles the report of one run.
    pub fn new(params: &PholdParams, run: EngineRun, outcome: &PholdOutcome) -> Self {
        let events = outcome.events();
        let wall_seconds = run.wall.as_secs_f64();
        Self {
            engine: run.engine,
            via: run.via,
            events,
            events_per_sec: if wall_seconds > 0.0 {
                events as f64 / wall_seconds
            } else {
                0.0
            },
            epochs: outcome.epochs,
            epochs_meaning: run.epochs_meaning,
            digest: format_digest(outcome.digest()),
            wall_seconds,
            setup_seconds: run.setup.as_secs_f64(),
            peak_rss_bytes: peak_rss_bytes(),
            workers: run.workers,
            lps: params.lps,
            events_per_lp: params.events_per_lp,
            remote: params.remote,
            lookahead_ticks: params.lookahead.0,
            mean_ticks: params.mean.0,
            end_time_ticks: params.end_time.0,
            seed: params.seed,
        }
    }

    /// Human-readable lines, one fact per line.
    pub fn to_text(&self) -> String {
        let via = self.via.map(|v| format!(" via {v}")).unwrap_or_default();
        let epochs = self
            .epochs
            .map_or_else(|| "n/a".to_string(), |e| e.to_string());
        let rss = self.peak_rss_bytes.map_or_else(
            || "unknown".to_string(),
            |b| format!("{:.1} MiB", b as f64 / 1048576.0),
        );
        format!(
            "engine:        {}{via} ({} workers)\n\
             events:        {}\n\
             events/s:      {:.0}\n\
             wall seconds:  {:.3} (setup {:.3})\n\
             epochs:        {epochs} ({})\n\
             digest:        {}\n\
             peak RSS:      {rss}\n",
            self.engine,
            self.workers,
            self.events,
            self.events_per_sec,
            self.wall_seconds,
            self.setup_seconds,
            self.epochs_meaning,
            self.digest,
        )
    }

    /// The `--json` form: one line, one object.
    pub fn to_json(&self) -> String {
        // A struct of plain numbers and strings always serializes.
        serde_json::to_string(self).expect("RunReport serializes")
    }

    /// Prints the report in the form `args` asked for.
    pub fn print(&self, args: &PholdArgs) {
        if args.json {
            println!("{}", self.to_json());
        } else {
            print!("{}", self.to_text());
        }
    }
}

/// Peak resident set size from `/proc/self/status` (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

/// Extracts `VmHWM` (kB) from the text of `/proc/<pid>/status`, in bytes.
pub fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut fields = line["VmHWM:".len()..].split_whitespace();
    let kib: u64 = fields.next()?.parse().ok()?;
    (fields.next() == Some("kB")).then_some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        phold: PholdArgs,
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let cli = Cli::try_parse_from(["phold"]).expect("defaults parse");
        let p = cli.phold.params().expect("defaults are valid");
        assert_eq!((p.lps, p.events_per_lp, p.remote), (1024, 4, 0.25));
        assert_eq!(
            (p.lookahead.0, p.mean.0, p.end_time.0),
            (1000, 1000, 3_000_000)
        );
        assert_eq!((cli.phold.workers, p.seed, cli.phold.json), (1, 1, false));
    }

    #[test]
    fn flags_parse_and_bad_values_are_errors() {
        let cli = Cli::try_parse_from([
            "phold",
            "--lps",
            "8",
            "--events-per-lp",
            "2",
            "--remote",
            "0.5",
            "--lookahead",
            "0.5",
            "--mean",
            "2.25",
            "--end-time",
            "10",
            "--workers",
            "2",
            "--seed",
            "7",
            "--json",
        ])
        .expect("flags parse");
        let p = cli.phold.params().expect("valid");
        assert_eq!(
            (p.lookahead.0, p.mean.0, p.end_time.0, p.seed),
            (500, 2250, 10_000, 7)
        );
        assert!(cli.phold.json);
        assert!(Cli::try_parse_from(["phold", "--lps", "many"]).is_err());
        let zero = Cli::try_parse_from(["phold", "--lps", "0"]).expect("parses");
        assert!(zero.phold.params().is_err());
    }

    #[test]
    fn vm_hwm_is_parsed_in_bytes() {
        let status = "Name:\tx\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(2048 * 1024));
        assert_eq!(parse_vm_hwm("VmHWM: lots\n"), None);
        assert_eq!(parse_vm_hwm("VmRSS: 5 kB\n"), None);
        assert!(peak_rss_bytes().is_some_and(|b| b > 0));
    }

    #[test]
    fn json_report_has_the_agreed_keys() {
        let p = Cli::try_parse_from(["phold"])
            .expect("parse")
            .phold
            .params()
            .expect("valid");
        let outcome = PholdOutcome {
            lps: Vec::new(),
            epochs: None,
        };
        let run = EngineRun {
            engine: "binary-heap",
            via: None,
            epochs_meaning: "none",
            workers: 1,
            setup: Duration::ZERO,
            wall: Duration::from_millis(500),
        };
        let json: serde_json::Value =
            serde_json::from_str(&RunReport::new(&p, run, &outcome).to_json()).expect("json");
        for key in [
            "events",
            "events_per_sec",
            "epochs",
            "digest",
            "wall_seconds",
            "peak_rss_bytes",
            "workers",
            "engine",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        assert_eq!(json["engine"], "binary-heap");
        assert_eq!(json["epochs"], serde_json::Value::Null);
        assert_eq!(json["digest"], "0000000000000000");
    }
}
