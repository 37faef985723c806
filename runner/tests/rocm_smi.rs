//! Debian's unmodified rocm-smi (Python over librocm_smi64 and sysfs) on the simulated
//! GPU under `dojo run`: the concise table, the device files behind `--show*` options,
//! memory use that follows a HIP program's allocation (the program runs rocm-smi
//! through `system()` while it holds the memory), and activity while a HIP program's
//! waves stream through memory (`gpu_busy_percent`, `mem_busy_percent` and the
//! `gpu_metrics` table).
//!
//! Requirements, checked at run time: rocm-smi and hipcc (`scripts/deps` installs
//! them); a test whose tool is missing prints why and returns.

use std::path::Path;

mod common;
use common::*;

/// `dojo run -- rocm-smi ARGS`; must exit as rocm-smi does on a healthy MI210 (status 0,
/// or 2 when an option asks for a figure the part does not have: the concise table
/// reads the fan, which the passively cooled MI210 lacks).
fn rocm_smi(args: &[&str]) -> Outcome {
    let out = dojo_run(&[], Path::new("rocm-smi"), args, &[], PROGRAM_LIMIT);
    assert!(matches!(out.code(), Some(0 | 2)), "rocm-smi {args:?}: {:?}\n{}\n{}", out.status, out.stdout, out.stderr);
    assert!(!out.stderr.contains("Traceback"), "rocm-smi {args:?} crashed:\n{}", out.stderr);
    out
}

/// The value after `label` on rocm-smi's `GPU[0]` line that has it.
fn field<'a>(out: &'a str, label: &str) -> Option<&'a str> {
    out.lines()
        .filter(|l| l.starts_with("GPU[0]"))
        .find_map(|l| l.split_once(label).map(|(_, v)| v.trim_start_matches(':').trim()))
}

/// The number rocm-smi prints after `label`.
fn number(out: &str, label: &str) -> Option<u64> {
    field(out, label).and_then(|v| v.parse().ok())
}

#[test]
fn rocm_smi_shows_the_simulated_mi210() {
    if !have("rocm-smi", "rocm_smi_shows_the_simulated_mi210") {
        return;
    }
    let g = identity(None);
    let concise = rocm_smi(&[]);
    let row = concise
        .stdout
        .lines()
        .find(|l| l.starts_with("0 "))
        .unwrap_or_else(|| panic!("a row for GPU 0:\n{}", concise.stdout));
    assert!(row.contains(&format!("{}Mhz", g.engine_clock_mhz)), "the engine clock: {row}");
    assert!(row.contains(&format!("{}Mhz", g.memory_clock_mhz)), "the memory clock: {row}");
    assert!(row.contains("0%"), "an idle GPU: {row}");

    let out = rocm_smi(&[
        "--showid", "--showproductname", "--showmeminfo", "vram", "--showuse", "--showbus",
        "--showpower", "--showtemp", "--showclocks",
    ]);
    out.expect_code(0, "rocm-smi --show* of figures the simulated GPU has");
    let s = &out.stdout;
    assert_eq!(field(s, "GPU ID"), Some(format!("{:#x}", g.device_id).as_str()), "{s}");
    assert_eq!(field(s, "Card series"), Some("AMD Instinct MI210"), "{s}");
    assert_eq!(field(s, "VRAM Total Memory (B)"), Some(g.vram_bytes.to_string().as_str()), "{s}");
    assert_eq!(field(s, "VRAM Total Used Memory (B)"), Some("0"), "nothing allocated: {s}");
    assert_eq!(field(s, "GPU use (%)"), Some("0"), "{s}");
    expect_number(s, "GFX Activity");
    assert_eq!(field(s, "PCI Bus"), Some("0000:03:00.0"), "{s}");
    // Not simulated: the documented constants.
    assert_eq!(field(s, "Average Graphics Package Power (W)"), Some("40.0"), "{s}");
    assert_eq!(field(s, "Temperature (Sensor edge) (C)"), Some("35.0"), "{s}");
    assert_eq!(field(s, "sclk clock level"), Some(format!("0: ({}Mhz)", g.engine_clock_mhz).as_str()), "{s}");
}

/// Runs the HIP program `name` of `examples/rocm` under `dojo run FLAGS` with `args` (it runs
/// rocm-smi through `system()` and fails unless rocm-smi exits 0) and returns its
/// output, which includes rocm-smi's; `None` (the test is skipped) without rocm-smi or
/// hipcc.
fn hip_running_rocm_smi(test: &str, flags: &[&str], name: &str, args: &[&str]) -> Option<Outcome> {
    if !have("rocm-smi", test) || !have("hipcc", test) {
        return None;
    }
    let out = dojo_run(flags, &hip(name), args, &[], PROGRAM_LIMIT);
    out.expect_pass(&format!("{name} running rocm-smi (dojo run {flags:?})"));
    Some(out)
}

/// The number after `label` in `out`, or a panic that shows `out`.
fn expect_number(out: &str, label: &str) -> u64 {
    number(out, label).unwrap_or_else(|| panic!("a number after {label:?}:\n{out}"))
}

#[test]
fn rocm_smi_sees_the_memory_a_hip_program_holds() {
    let args = ["1024", "rocm-smi", "--showmeminfo", "vram", "--showuse", "--showmemuse"];
    let Some(out) = hip_running_rocm_smi("rocm_smi_sees_the_memory_a_hip_program_holds", &[], "hold_memory", &args) else {
        return;
    };
    let s = &out.stdout;
    let used = expect_number(s, "VRAM Total Used Memory (B)");
    assert!((1 << 30..2 << 30).contains(&used), "the 1 GiB allocation (and the runtime's own buffers): {used}\n{s}");
    assert_eq!(field(s, "GPU use (%)"), Some("0"), "no kernel runs while rocm-smi looks: {s}");
    assert_eq!(field(s, "GPU memory use (%)"), Some("0"), "no kernel runs while rocm-smi looks: {s}");
    // gpu_metrics: the accumulators (the runtime's own blit kernels may have run).
    expect_number(s, "GFX Activity");
    expect_number(s, "Memory Activity");
}

#[test]
fn rocm_smi_sees_a_busy_gpu_and_memory_while_waves_stream() {
    // The waves spin until rocm-smi has exited, so the dispatch is in flight whenever
    // rocm-smi reads; the 300 ms before it starts are three refreshes of the live files.
    // The percentages are shares of the last simulated millisecond, so they do not
    // depend on how fast the host simulates; the accumulators ("GFX Activity",
    // "Memory Activity") count the simulated time so far, which does, so only their
    // presence is checked. With one worker and with two.
    let test = "rocm_smi_sees_a_busy_gpu_and_memory_while_waves_stream";
    let args = ["300", "rocm-smi", "--showuse", "--showmemuse"];
    for workers in ["1", "2"] {
        let Some(out) = hip_running_rocm_smi(test, &["--workers", workers], "busy_while", &args) else {
            return;
        };
        let s = &out.stdout;
        let busy = expect_number(s, "GPU use (%)");
        assert!((1..=100).contains(&busy), "{workers} workers, a dispatch is in flight: {busy}\n{s}");
        let memory = expect_number(s, "GPU memory use (%)");
        assert!((1..=100).contains(&memory), "{workers} workers, the waves stream through HBM: {memory}\n{s}");
        expect_number(s, "GFX Activity");
        expect_number(s, "Memory Activity");
    }
}
