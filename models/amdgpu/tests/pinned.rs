//! Pinned results: the exact simulated end time, every kernel's statistics (cycles, cache
//! hits and misses, instruction classes, timing stalls), every component's statistics
//! and the output of several programs, in functional and timing mode, on gfx942 and
//! gfx90a. The values are those of the simulator before its memory path and timing
//! scheduler were made faster (issue 27); a speed change must leave every one of them
//! as it is. A mismatch prints the whole table as it now is.

use std::path::{Path, PathBuf};

use amdgpu::host::cc::{compile, CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{run_image, ExecOptions, ExecOutcome};
use simdojo::params::ParamValue;
use simdojo::partition::{plan, Strategy};
use simdojo::topology::{self, Topology};

/// One pinned run.
struct Case {
    /// Program name (and the row's name, with the topology and mode).
    program: &'static str,
    source: &'static str,
    /// Extra clang flags.
    flags: &'static [&'static str],
    /// Topology file under `topologies/`.
    topology: &'static str,
    target: Target,
    mode: &'static str,
    threads: u32,
    blocks: u32,
}

const CHASE: &str = include_str!("programs/chase.c");
const STREAM: &str = include_str!("programs/stream.c");
const CHAINS: &str = include_str!("programs/chains.c");
const GROUPS: &str = include_str!("programs/groups.c");
const MIXED: &str = include_str!("programs/mixed.c");
const VALU: &str = include_str!("../../../benches/gpu/valu.c");
/// The memory benchmark's first form (a device malloc per wave), whose host-call traffic
/// these rows pin; `benches/gpu/memory.c` now streams over static buffers.
const MEMORY: &str = include_str!("programs/memory_malloc.c");

const SHORT: &[&str] = &["-DITERATIONS=64"];

/// The programs of a mode on the small gfx942 GPU (and gfx90a for functional mode).
fn cases(mode: &'static str) -> Vec<Case> {
    let on = |program, source, flags, threads, blocks| Case {
        program,
        source,
        flags,
        topology: "test-timing.toml",
        target: Target::Gfx942,
        mode,
        threads,
        blocks,
    };
    let mut v = vec![
        on("chase", CHASE, &[], 1, 1),
        on("stream", STREAM, &[], 256, 16),
        on("chains", CHAINS, &[], 1, 1),
        on("groups", GROUPS, &[], 256, 8),
        on("mixed", MIXED, &[], 256, 12),
        on("valu", VALU, SHORT, 256, 16),
        on("memory", MEMORY, SHORT, 256, 16),
    ];
    if mode == "functional" {
        for (program, source, flags) in [("mixed", MIXED, &[][..]), ("memory", MEMORY, SHORT), ("groups", GROUPS, &[][..])] {
            v.push(Case { program, source, flags, topology: "test-gfx90a.toml", target: Target::Gfx90a, mode, threads: 256, blocks: 12 });
        }
    }
    v
}

fn build(case: &Case) -> Vec<u8> {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pinned");
    std::fs::create_dir_all(&dir).unwrap();
    // Both tests build programs at once: one file set per case and mode.
    let stem = format!("{}-{}-{}", case.program, case.target.name(), case.mode);
    let src = dir.join(format!("{stem}.c"));
    std::fs::write(&src, case.source).unwrap();
    let out = dir.join(format!("{stem}.co"));
    let opts = CcOptions {
        mcpu: case.target,
        opt: OptLevel::O2,
        output: out.clone(),
        inputs: vec![src],
        extra_flags: case.flags.iter().map(|f| f.to_string()).collect(),
    };
    compile(&opts).unwrap_or_else(|e| panic!("compiling {}: {e}", case.program));
    std::fs::read(out).unwrap()
}

fn topology(case: &Case) -> Topology {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies").join(case.topology);
    let mut t = topology::load(&path).unwrap();
    for c in t.components.iter_mut().filter(|c| c.type_name == "amdgpu.cu") {
        c.params.set("mode", ParamValue::String(case.mode.to_string()));
    }
    t
}

fn run(case: &Case) -> ExecOutcome {
    let t = topology(case);
    let assignment = plan(&t, &Strategy::Single, 1).unwrap().assignment;
    let opts = ExecOptions {
        topology: t,
        assignment: Some(assignment),
        workers: Some(1),
        threads: [case.threads, 1, 1],
        blocks: [case.blocks, 1, 1],
        args: vec![case.program.into()],
        env: Vec::new(),
        max_ticks: None,
        capture: true,
        max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
        observe: false,
        progress: false,
    };
    let out = run_image(&build(case), &opts).unwrap();
    assert!(out.faults.is_empty(), "{}: {:?}", case.program, out.faults);
    assert_eq!(out.status, 0, "{}: {}", case.program, String::from_utf8_lossy(&out.stdout));
    out
}

/// FNV-1a over everything a run reports.
fn digest(out: &ExecOutcome) -> u64 {
    let text = format!(
        "{}\n{}\n{}\n{}\n{}",
        out.end.0,
        serde_json::to_string(&out.kernels).unwrap(),
        out.components.to_json(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Runs every case of `mode` and compares (name, end time in ps, digest) with `pinned`.
fn check(mode: &'static str, pinned: &[(&str, u64, u64)]) {
    let got: Vec<(String, u64, u64)> = cases(mode)
        .iter()
        .map(|case| {
            let out = run(case);
            (format!("{} {}", case.program, case.target.name()), out.end.0, digest(&out))
        })
        .collect();
    let want: Vec<(String, u64, u64)> = pinned.iter().map(|&(n, e, d)| (n.to_string(), e, d)).collect();
    if got != want {
        let table: String = got.iter().map(|(n, e, d)| format!("        (\"{n}\", {e}, {d:#018x}),\n")).collect();
        panic!("{mode} mode: the results moved; they are now:\n{table}");
    }
}

#[test]
fn functional_results_are_pinned() {
    check(
        "functional",
        &[
            ("chase gfx942", 329310000, 0xa0a5165c5e59238b),
            ("stream gfx942", 22310000, 0x36e918c00ec0f19c),
            ("chains gfx942", 32310000, 0x2db8b3701c957b3d),
            ("groups gfx942", 29310000, 0x2361a8ef8d4be7b8),
            ("mixed gfx942", 52310000, 0xe0fb8acdd7129403),
            ("valu gfx942", 22310000, 0xce4b52288a4ed585),
            ("memory gfx942", 40310000, 0xfbd50fe8b92b7378),
            ("mixed gfx90a", 34310000, 0x9f76899668f665b0),
            ("memory gfx90a", 27310000, 0xa0a1ebdfdfd0733a),
            ("groups gfx90a", 27310000, 0x4860f37cfe7c0cbd),
        ],
    );
}

#[test]
fn timing_results_are_pinned() {
    check(
        "timing",
        &[
            ("chase gfx942", 9154310000, 0x79ef1cfe7282327c),
            ("stream gfx942", 122310000, 0xefe7612300770976),
            ("chains gfx942", 55310000, 0x607fc348de33ca3e),
            ("groups gfx942", 33310000, 0xc3ad7ed622218ba8),
            ("mixed gfx942", 80310000, 0x5999b87dada51112),
            ("valu gfx942", 24310000, 0x457ff2b79830f1be),
            ("memory gfx942", 63310000, 0xb0b6d26d4608e3fc),
        ],
    );
}
