//! Timing mode end to end: main() programs built by the real clang (`amdgpu::host::cc`) run on a
//! small gfx942 GPU with small caches (`topologies/test-timing.toml`): latency steps at
//! each cache capacity, the HBM bandwidth bound, determinism across workers, and the
//! same output as functional mode.

use std::path::{Path, PathBuf};

use amdgpu::host::cc::{compile, CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{run_image, ExecOptions, ExecOutcome};
use amdgpu::timing::{HbmConfig, Part};
use simdojo::params::ParamValue;
use simdojo::partition::{plan, Strategy};
use simdojo::topology::{self, Topology};

fn topology(mode: &str) -> Topology {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/test-timing.toml");
    let mut t = topology::load(&path).unwrap();
    for c in t.components.iter_mut().filter(|c| c.type_name == "amdgpu.cu") {
        c.params.set("mode", ParamValue::String(mode.to_string()));
    }
    t
}

fn build(name: &str, source: &str) -> Vec<u8> {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpu-timing");
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run in parallel and build the same programs: one file set per call.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!("{name}-{call}.c"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join(format!("{name}-{call}.co"));
    let opts = CcOptions { mcpu: Target::Gfx942, opt: OptLevel::O2, output: out.clone(), inputs: vec![src], extra_flags: Vec::new() };
    compile(&opts).unwrap_or_else(|e| panic!("compiling {name}: {e}"));
    std::fs::read(out).unwrap()
}

fn run(image: &[u8], t: Topology, workers: u32, threads: u32, blocks: u32) -> ExecOutcome {
    // One XCD per partition (the topology's own partitioner).
    run_with(image, t, workers, "subtree", threads, blocks)
}

fn run_with(image: &[u8], t: Topology, workers: u32, strategy: &str, threads: u32, blocks: u32) -> ExecOutcome {
    let strategy: Strategy = strategy.parse().unwrap();
    let assignment = plan(&t, &strategy, workers).unwrap().assignment;
    let opts = ExecOptions {
        topology: t,
        assignment: Some(assignment),
        workers: None,
        threads: [threads, 1, 1],
        blocks: [blocks, 1, 1],
        args: vec!["prog".into()],
        env: Vec::new(),
        max_ticks: None,
        capture: true,
        max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
        observe: false,
        progress: false,
    };
    let out = run_image(image, &opts).unwrap();
    assert!(out.faults.is_empty(), "{:?}", out.faults);
    assert_eq!(out.status, 0, "stdout: {}", String::from_utf8_lossy(&out.stdout));
    out
}

/// One work-item chases a random cyclic permutation of `n` 128-byte lines (Sattolo's
/// shuffle), one full pass to warm the caches, then times `LOADS` dependent loads with
/// s_memtime. Working sets: 32 lines (4 KiB, inside the 8 KiB L1), 256 (32 KiB, inside
/// the 64 KiB L2), 2048 (256 KiB, inside the 512 KiB memory-side cache), 16384 (2 MiB,
/// beyond every cache).
const CHASE: &str = include_str!("programs/chase.c");

/// (working-set lines, cycles per load) from the chase's output.
fn chase_results(out: &ExecOutcome) -> Vec<(u64, u64)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (f[0], f[1])
        })
        .collect()
}

#[test]
fn pointer_chase_steps_at_each_cache_capacity() {
    let image = build("chase", CHASE);
    let out = run(&image, topology("timing"), 1, 1, 1);
    let r = chase_results(&out);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), vec![32, 256, 2048, 16384], "{r:?}");
    let [l1, l2, mall, hbm] = [r[0].1, r[1].1, r[2].1, r[3].1];
    eprintln!("cycles per load: L1 {l1}, L2 {l2}, memory-side cache {mall}, HBM {hbm}");
    assert!(l1 >= 64, "an L1 hit takes at least l1_hit_latency: {r:?}");
    assert!(l1 < l2 && l2 < mall && mall < hbm, "latency must step up at each level: {r:?}");
    // Each step is a real level, not noise: at least the level's own pipeline apart.
    assert!(l2 - l1 >= 48 && mall - l2 >= 48 && hbm - mall >= 20, "{r:?}");
}

#[test]
fn functional_and_timing_mode_print_the_same() {
    let image = build("chase", CHASE);
    let timed = run(&image, topology("timing"), 1, 1, 1);
    let functional = run(&image, topology("functional"), 1, 1, 1);
    let strip = |o: &ExecOutcome| chase_results(o).iter().map(|x| x.0).collect::<Vec<_>>();
    // The final index of each chase (the program's data) is identical; only the cycle
    // counts differ.
    let idx = |o: &ExecOutcome| String::from_utf8_lossy(&o.stdout).lines().map(|l| l.split_whitespace().nth(2).unwrap_or("").to_string()).collect::<Vec<_>>();
    assert_eq!(strip(&timed), strip(&functional));
    assert_eq!(idx(&timed), idx(&functional));
    assert!(timed.end > functional.end, "timing mode takes longer in simulated time");
    // Timing statistics exist only in timing mode.
    let start = |o: &ExecOutcome| o.kernels.iter().find(|k| k.kernel == "_start").expect("_start stats").counters.timing;
    let (t, f) = (start(&timed), start(&functional));
    assert_eq!(f, Default::default(), "functional mode has no timing counters");
    assert!(t.mem_requests > 1000 && t.stall_waitcnt > 0, "{t:?}");
    assert!(t.mean_memory_latency() > 64.0, "an L2 answer is slower than an L1 hit: {t:?}");
}

/// Every work-item copies a strided share of a 4 MiB buffer into another (the grid size
/// is a power of two: the program avoids a division, which the executor lacks).
const STREAM: &str = include_str!("programs/stream.c");

#[test]
fn streaming_never_exceeds_hbm_bandwidth() {
    let image = build("stream", STREAM);
    let out = run(&image, topology("timing"), 1, 256, 16);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "copied 1\n");
    let k = out.kernels.iter().find(|k| k.kernel == "_start").expect("_start stats");
    let bytes = k.hbm_read_bytes + k.hbm_write_bytes;
    let seconds = (k.end_ps - k.start_ps) as f64 * 1e-12;
    let mut hbm = HbmConfig::for_part(Part::Mi300x);
    hbm.geometry.stacks = 1;
    hbm.geometry.channels_per_stack = 2;
    let peak = hbm.peak_bytes_per_second();
    let achieved = bytes as f64 / seconds;
    eprintln!("HBM: {bytes} bytes in {:.1} us = {:.1} GB/s of {:.1} GB/s peak ({:.0}%)", seconds * 1e6, achieved / 1e9, peak / 1e9, 100.0 * achieved / peak);
    assert!(k.hbm_read_bytes >= 4 << 20, "the source is read from HBM: {k:?}");
    assert!(achieved <= peak, "{achieved} B/s exceeds the HBM peak {peak} B/s");
    assert!(achieved >= 0.3 * peak, "a stream of 64 waves should keep the HBM busy: {achieved} of {peak} B/s");
}

#[test]
fn timing_results_do_not_depend_on_workers() {
    // The chase: one wave, host services (malloc, printf), every cache level and the HBM.
    let image = build("chase", CHASE);
    let one = run(&image, topology("timing"), 1, 1, 1);
    let two = run(&image, topology("timing"), 2, 1, 1);
    assert_eq!(one.stdout, two.stdout, "output, cycle counts included");
    assert_eq!(one.kernels, two.kernels, "per-kernel statistics");
    assert_eq!(one.end, two.end, "end time");

    // Many waves on both XCDs, with barriers and atomics, and a partitioning that cuts
    // between compute units and their command processor and L2 (request/reply pairs
    // across partitions: what once let a partition run ahead of a reply).
    let groups = build("groups", GROUPS);
    let one = run_with(&groups, topology("timing"), 1, "single", 256, 8);
    for (workers, strategy) in [(2, "round-robin"), (3, "round-robin"), (2, "subtree")] {
        let other = run_with(&groups, topology("timing"), workers, strategy, 256, 8);
        assert!(other.stdout == one.stdout, "{workers} x {strategy}: output");
        assert_eq!(other.kernels, one.kernels, "{workers} x {strategy}: statistics");
        assert_eq!(other.end, one.end, "{workers} x {strategy}: end time");
    }
}

/// Dependent chains of f32 and f64 multiply-adds in one wave, timed with s_memtime.
const CHAINS: &str = include_str!("programs/chains.c");

#[test]
fn valu_chains_issue_at_their_class_rate() {
    let image = build("chains", CHAINS);
    let out = run(&image, topology("timing"), 1, 1, 1);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let f: Vec<u64> = text.split_whitespace().take(2).map(|x| x.parse().unwrap()).collect();
    // Cycles per 64 operations: a dependent f32 FMA issues every valu_cycles (4), an f64
    // one every valu_f64_cycles (8); loop overhead (SALU, branch) adds a little.
    let (f32_per_64, f64_per_64) = (f[0], f[1]);
    eprintln!("cycles per 64 FMAs: f32 {f32_per_64}, f64 {f64_per_64}");
    assert!((4 * 64..=8 * 64).contains(&f32_per_64), "{text}");
    assert!((8 * 64..=12 * 64).contains(&f64_per_64), "{text}");
    let functional = run(&image, topology("functional"), 1, 1, 1);
    let last = |s: &[u8]| String::from_utf8_lossy(s).split_whitespace().nth(2).map(String::from);
    assert_eq!(last(&out.stdout), last(&functional.stdout), "same arithmetic in both modes");
}

/// Work-groups reduce through LDS with barriers and count into a global atomic; every
/// group's leader prints its sum.
const GROUPS: &str = include_str!("programs/groups.c");

#[test]
fn lds_barriers_and_atomics_give_functional_results() {
    let image = build("groups", GROUPS);
    let sorted = |o: &ExecOutcome| {
        let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout).lines().map(String::from).collect();
        v.sort();
        v
    };
    let timed = run(&image, topology("timing"), 1, 256, 8);
    let functional = run(&image, topology("functional"), 1, 256, 8);
    let mut want: Vec<String> = (0..8u32).map(|g| format!("group {g} sum {}", (0..256u32).map(|l| g * 1000 + l).sum::<u32>())).collect();
    want.sort();
    assert_eq!(sorted(&timed), want);
    assert_eq!(sorted(&functional), want);
    let k = timed.kernels.iter().find(|k| k.kernel == "_start").expect("_start stats");
    assert!(k.counters.timing.stall_barrier > 0, "waves waited at barriers: {:?}", k.counters.timing);
}

const BARRIER_AFTER_OTHERS_ENDED: &str = r#"
int main(void) {
  unsigned tid = __builtin_amdgcn_workitem_id_x();
  if (tid >= 64) {
    // Waves 1..3 end here, long before wave 0 reaches its barrier.
    __builtin_amdgcn_endpgm();
  }
  for (volatile int i = 0; i < 200; i++) ;
  __builtin_amdgcn_s_barrier();
  return 0;
}
"#;

/// A barrier releases only the waves waiting at it. Functional mode once set every wave
/// of the group running, so waves that had ended ran again from past their s_endpgm; the
/// two modes must execute exactly the same wave-instructions.
#[test]
fn a_barrier_after_other_waves_ended_releases_only_the_waiting_wave() {
    let image = build("barrier_ended", BARRIER_AFTER_OTHERS_ENDED);
    let timed = run(&image, topology("timing"), 1, 256, 1);
    let functional = run(&image, topology("functional"), 1, 256, 1);
    // No host calls: their polling loops would differ between the modes.
    let count = |o: &ExecOutcome| o.kernels.iter().find(|k| k.kernel == "_start").expect("_start stats").wave_instructions();
    assert_eq!(count(&functional), count(&timed), "functional and timing mode execute the same instructions");
}
