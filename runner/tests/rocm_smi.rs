//! Debian's unmodified rocm-smi (Python over librocm_smi64 and sysfs) on the simulated
//! GPU under `dojo run`: the concise table, the device files behind `--show*` options,
//! and memory use that follows a HIP program's allocation (the program runs rocm-smi
//! through `system()` while it holds the memory).
//!
//! Requirements, checked at run time: rocm-smi and hipcc (`scripts/deps` installs
//! them); a test whose tool is missing prints why and returns.

use std::path::Path;

mod common;
use common::*;

/// `dojo run -- rocm-smi ARGS`; must exit as rocm-smi does on a healthy GPU (status 0,
/// or 2 when an option asks for a figure the simulator does not provide).
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
    let s = &out.stdout;
    assert_eq!(field(s, "GPU ID"), Some(format!("{:#x}", g.device_id).as_str()), "{s}");
    assert_eq!(field(s, "Card series"), Some("AMD Instinct MI210"), "{s}");
    assert_eq!(field(s, "VRAM Total Memory (B)"), Some(g.vram_bytes.to_string().as_str()), "{s}");
    assert_eq!(field(s, "VRAM Total Used Memory (B)"), Some("0"), "nothing allocated: {s}");
    assert_eq!(field(s, "GPU use (%)"), Some("0"), "{s}");
    assert_eq!(field(s, "PCI Bus"), Some("0000:03:00.0"), "{s}");
    // Not simulated: the documented constants.
    assert_eq!(field(s, "Average Graphics Package Power (W)"), Some("40.0"), "{s}");
    assert_eq!(field(s, "Temperature (Sensor edge) (C)"), Some("35.0"), "{s}");
    assert_eq!(field(s, "sclk clock level"), Some(format!("0: ({}Mhz)", g.engine_clock_mhz).as_str()), "{s}");
}

#[test]
fn rocm_smi_sees_the_memory_a_hip_program_holds() {
    if !have("rocm-smi", "rocm_smi_sees_the_memory_a_hip_program_holds")
        || !have("hipcc", "rocm_smi_sees_the_memory_a_hip_program_holds")
    {
        return;
    }
    let program = hip("hold_memory");
    let out = dojo_run(&[], &program, &["1024", "rocm-smi", "--showmeminfo", "vram", "--showuse"], &[], PROGRAM_LIMIT);
    out.expect_pass("hold_memory running rocm-smi");
    let used: u64 = field(&out.stdout, "VRAM Total Used Memory (B)")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a used-memory line:\n{}", out.stdout));
    assert!((1 << 30..2 << 30).contains(&used), "the 1 GiB allocation (and the runtime's own buffers): {used}\n{}", out.stdout);
    assert_eq!(field(&out.stdout, "GPU use (%)"), Some("0"), "no kernel runs while rocm-smi looks");
}
