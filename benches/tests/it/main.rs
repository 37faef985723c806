//! End-to-end checks of the PHOLD binaries: flags in, one JSON object out.

use std::process::Command;

use serde_json::Value;

const SMALL: [&str; 12] = [
    "--lps",
    "24",
    "--events-per-lp",
    "2",
    "--remote",
    "0.4",
    "--lookahead",
    "0.5",
    "--mean",
    "1.5",
    "--end-time",
    "80",
];

fn run_json(exe: &str, extra: &[&str]) -> Value {
    let out = Command::new(exe)
        .args(SMALL)
        .args(extra)
        .arg("--json")
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "{exe}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    assert_eq!(text.lines().count(), 1, "one JSON line: {text}");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn nexosim_and_heap_binaries_agree() {
    let heap = run_json(env!("CARGO_BIN_EXE_phold-heap"), &[]);
    assert_eq!(heap["engine"], "binary-heap");
    assert!(heap["events"].as_u64().is_some_and(|e| e > 0));
    for via in ["ports", "scheduler"] {
        let nexo = run_json(
            env!("CARGO_BIN_EXE_phold-nexosim"),
            &["--via", via, "--workers", "1"],
        );
        assert_eq!(nexo["engine"], "nexosim");
        assert_eq!(nexo["via"], via);
        assert_eq!(nexo["events"], heap["events"], "{via}");
        assert_eq!(nexo["digest"], heap["digest"], "{via}");
        assert_eq!(nexo["epochs"], heap["epochs"], "{via}");
        assert!(nexo["peak_rss_bytes"].as_u64().is_some_and(|b| b > 0));
        assert!(nexo["events_per_sec"].as_f64().is_some_and(|r| r > 0.0));
    }
}

#[test]
fn bad_flags_fail_without_panicking() {
    for (exe, args) in [
        (env!("CARGO_BIN_EXE_phold-heap"), vec!["--lps", "0"]),
        (env!("CARGO_BIN_EXE_phold-nexosim"), vec!["--remote", "2"]),
        (
            env!("CARGO_BIN_EXE_phold-nexosim"),
            vec!["--lookahead", "0"],
        ),
        (
            env!("CARGO_BIN_EXE_phold-nexosim"),
            vec!["--via", "carrier-pigeon"],
        ),
        (env!("CARGO_BIN_EXE_phold-nexosim"), vec!["--workers", "0"]),
    ] {
        let out = Command::new(exe).args(&args).output().expect("binary runs");
        assert!(!out.status.success(), "{exe} {args:?} should fail");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked"),
            "{exe} {args:?} panicked: {stderr}"
        );
        assert!(!stderr.is_empty(), "{exe} {args:?} gave no reason");
    }
}

/// simdojo's PHOLD (any worker count) and the independent binary-heap reference
/// agree exactly: same events, same digest.
#[test]
fn simdojo_matches_the_binary_heap_reference() {
    use benches::phold_heap::run_heap;
    use benches::phold_spec::{PholdParams, PholdRequest};
    use simdojo::engine::{SimConfig, Simulation};
    use simdojo::ids::PartitionId;
    use simdojo::phold::{self, PholdConfig};
    use simdojo::time::Tick;

    for (lps, remote, lookahead, mean, end) in [(64u32, 0.25, 1.0, 1.0, 300.0), (10, 0.9, 0.25, 3.0, 200.0)] {
        let req = PholdRequest {
            lps: u64::from(lps),
            events_per_lp: 3,
            remote,
            lookahead_ns: lookahead,
            mean_ns: mean,
            end_time_ns: end,
            seed: 5,
        };
        let heap = run_heap(&PholdParams::new(&req).expect("valid request"));
        let ticks = |ns: f64| Tick((ns * 1000.0).round() as u64);
        let cfg = PholdConfig {
            lps,
            events_per_lp: 3,
            remote,
            lookahead: ticks(lookahead),
            mean: ticks(mean),
            end: ticks(end),
            seed: 5,
        };
        for workers in [1u32, 2, 3] {
            let assignment = (0..lps).map(|i| PartitionId(i % workers)).collect();
            let config = SimConfig { assignment: Some(assignment), ..SimConfig::default() };
            let mut sim = Simulation::build(&phold::topology(&cfg), &config).expect("PHOLD builds");
            sim.run();
            assert_eq!(sim.summary().events, heap.events(), "{workers} workers, {lps} LPs");
            assert_eq!(phold::digest(&sim, lps), heap.digest(), "{workers} workers, {lps} LPs");
        }
    }
}
