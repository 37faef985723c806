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
