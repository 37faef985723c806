//! `dojo bench apps` on a few of its programs at their quick sizes, on one and two
//! simulation workers: every program passes, prints the same digest on both worker
//! counts and in both modes, and the per-kernel statistics agree (wave-instructions in
//! both modes; cycles and simulated times in functional mode). `--compare` of the two
//! reports finds the same digests; a changed digest, or a program that fails, makes the
//! command exit 1.
//!
//! Timing-mode cycles are not compared across worker counts: the timing model's caches
//! index by virtual address, and where the runtime places a program's buffers depends
//! on which threads mapped memory before (the simulator's workers among them), so the
//! same program may get other addresses, and other cycles, on another worker count.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use amdgpu::gpu::stats::KernelStats;
use common::*;
use serde_json::Value;

/// The programs the test runs: LDS tiles and barriers (sgemm), LDS and global atomics
/// (histogram), a multi-kernel scan, and many launches (bitonic_sort).
const PROGRAMS: &str = "sgemm,histogram,scan,bitonic_sort";

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-apps-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `dojo bench apps --quick --json ARGS` with the test's build directory, under the
/// hang guard; `env` is added to the environment.
fn bench_apps(args: &[&str], env: &[(&str, &OsStr)]) -> Outcome {
    interposer();
    let build = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-apps-build");
    let mut all: Vec<&OsStr> = ["bench", "apps", "--quick", "--json", "--build-dir"].iter().map(OsStr::new).collect();
    all.push(build.as_os_str());
    all.extend(args.iter().map(OsStr::new));
    dojo(&all, env, PROGRAM_LIMIT)
}

/// The report `dojo bench apps --json` printed.
fn report(out: &Outcome, what: &str) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{what}: not one JSON object ({e}):\n{}\n{}", out.stdout, out.stderr))
}

/// The per-kernel statistics of one run, kept by `--stats-dir`.
fn kernels(dir: &Path, program: &str, mode: &str) -> Vec<KernelStats> {
    let path = dir.join(format!("{program}.{mode}.json"));
    amdgpu::gpu::stats::StatsFile::read(&path).unwrap_or_else(|e| panic!("{e}")).kernels
}

#[test]
fn programs_pass_with_the_same_digests_and_statistics_on_one_and_two_workers() {
    if !have("hipcc", "programs_pass_with_the_same_digests_and_statistics_on_one_and_two_workers") {
        return;
    }
    let (dir1, dir2) = (scratch("one"), scratch("two"));
    let one = bench_apps(&["--only", PROGRAMS, "--workers", "1", "--stats-dir", dir1.to_str().unwrap()], &[]);
    one.expect_code(0, "dojo bench apps on 1 worker");
    let first = dir1.join("one.json");
    std::fs::write(&first, &one.stdout).expect("writing the first report");
    let two = bench_apps(
        &["--only", PROGRAMS, "--workers", "2", "--stats-dir", dir2.to_str().unwrap(), "--compare", first.to_str().unwrap()],
        &[],
    );
    two.expect_code(0, "dojo bench apps on 2 workers, compared with 1");
    let (one, two) = (report(&one, "1 worker"), report(&two, "2 workers"));

    let runs = one["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 8, "four programs in two modes: {one}");
    assert_eq!(one["host"]["workers"], 1);
    assert_eq!(two["host"]["workers"], 2);
    for (a, b) in runs.iter().zip(two["runs"].as_array().expect("runs")) {
        let (program, mode) = (a["program"].as_str().unwrap(), a["mode"].as_str().unwrap());
        let what = format!("{program} {mode}");
        assert_eq!((&b["program"], &b["mode"]), (&a["program"], &a["mode"]), "the same order");
        assert_eq!(a["passed"], true, "{what} on 1 worker: {a}");
        assert_eq!(b["passed"], true, "{what} on 2 workers: {b}");
        let digest = a["digest"].as_str().expect("a digest");
        assert_eq!(digest.len(), 16, "{what}: {digest}");
        assert_eq!(b["digest"], a["digest"], "{what}: the output differs between 1 and 2 workers");
        // The same program at the same size computes the same output in either mode.
        let other_mode = runs.iter().find(|r| r["program"] == a["program"] && r["mode"] != a["mode"]).expect("both modes");
        assert_eq!(other_mode["digest"], a["digest"], "{program}: functional and timing outputs differ");
        assert!(a["wave_instructions"].as_u64().is_some_and(|n| n > 0), "{what}: {a}");

        let (k1, k2) = (kernels(&dir1, program, mode), kernels(&dir2, program, mode));
        assert!(!k1.is_empty(), "{what}: no kernels");
        assert_eq!(k1.len(), k2.len(), "{what}: kernel counts differ");
        for (x, y) in k1.iter().zip(&k2) {
            // ROCR's copy kernels are named by their descriptor's address, which is where
            // the runtime loaded them; the program's own kernels carry their names.
            if !x.kernel.starts_with("0x") {
                assert_eq!(x.kernel, y.kernel, "{what}: dispatch {}", x.dispatch);
            }
            assert_eq!(x.wave_instructions(), y.wave_instructions(), "{what}: {} (dispatch {})", x.kernel, x.dispatch);
            assert_eq!(x.counters.classes, y.counters.classes, "{what}: {} (dispatch {})", x.kernel, x.dispatch);
            if mode == "functional" {
                assert_eq!(
                    (x.cycles, x.start_ps, x.end_ps),
                    (y.cycles, y.start_ps, y.end_ps),
                    "{what}: {} (dispatch {})",
                    x.kernel,
                    x.dispatch
                );
            }
        }
    }
    let compared = two["compare"]["runs"].as_array().expect("the comparison with the first report");
    assert_eq!(compared.len(), 8, "{}", two["compare"]);
    assert!(compared.iter().all(|r| r["same_digest"] == true && r["wave_instructions"] == 1.0), "{}", two["compare"]);

    // An earlier report with another digest: the command says so and exits 1.
    let mut changed = one.clone();
    changed["runs"][0]["digest"] = "0000000000000000".into();
    let earlier = dir1.join("changed.json");
    std::fs::write(&earlier, changed.to_string()).expect("writing the changed report");
    let program = one["runs"][0]["program"].as_str().unwrap();
    let out = bench_apps(&["--only", program, "--mode", "functional", "--compare", earlier.to_str().unwrap()], &[]);
    out.expect_code(1, "a digest that differs from the earlier run's");
    assert_eq!(report(&out, "changed digest")["compare"]["runs"][0]["same_digest"], false);
    assert!(out.stderr.contains("a digest differs"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir1);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn a_failing_program_is_reported_with_its_reason_and_the_command_fails() {
    if !have("hipcc", "a_failing_program_is_reported_with_its_reason_and_the_command_fails") {
        return;
    }
    // HIP may use no device (there is one), so the program cannot run.
    let out = bench_apps(&["--only", "histogram", "--mode", "functional"], &[("HIP_VISIBLE_DEVICES", OsStr::new("7"))]);
    out.expect_code(1, "a failing program");
    let json = report(&out, "a failing program");
    let run = &json["runs"][0];
    assert_eq!(run["passed"], false, "{run}");
    let reason = run["failure"].as_str().expect("a reason");
    assert!(reason.contains("status") || reason.contains("signal"), "{reason}");
    assert!(out.stderr.contains("histogram functional") && out.stderr.contains("FAILED"), "{}", out.stderr);
    assert_eq!(json["totals"]["all"]["failed"], 1, "{json}");
}

#[test]
fn an_unknown_program_is_refused_naming_the_suite() {
    let out = dojo(&[OsStr::new("bench"), OsStr::new("apps"), OsStr::new("--only"), OsStr::new("gemm")], &[], PLAIN_LIMIT);
    out.expect_code(2, "an unknown program");
    assert!(out.stderr.contains("--only gemm") && out.stderr.contains("sgemm"), "{}", out.stderr);
}
