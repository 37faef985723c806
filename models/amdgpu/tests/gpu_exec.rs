//! End-to-end: main() GPU programs built by the real clang with the device runtime
//! (`amdgpu::host::cc`) run on whole simulated GPUs (`amdgpu::host::loader`), through the SoC's AQL
//! queue, the command processors, compute units, caches and the RPC server.

use std::path::{Path, PathBuf};

use amdgpu::host::cc::{compile, CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{run_image, ExecOptions, ExecOutcome};
use simdojo::partition::{plan, Strategy};
use simdojo::topology::{self, Topology};

fn topologies() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies")
}

fn build(name: &str, target: Target, source: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpu-exec");
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run in parallel and build the same programs: one file set per call.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!("{name}-{call}.c"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join(format!("{name}-{target}-{call}.co"));
    let opts = CcOptions { mcpu: target, opt: OptLevel::O2, output: out.clone(), inputs: vec![src], extra_flags: Vec::new() };
    compile(&opts).unwrap_or_else(|e| panic!("compiling {name} for {target}: {e}"));
    std::fs::read(out).unwrap()
}

fn small(target: Target) -> Topology {
    topology::load(&topologies().join(format!("test-{target}.toml"))).unwrap()
}

fn run(image: &[u8], t: Topology, workers: u32, strategy: &str, threads: u32, blocks: u32, args: &[&str]) -> ExecOutcome {
    let strategy: Strategy = strategy.parse().unwrap();
    let assignment = plan(&t, &strategy, workers).unwrap().assignment;
    let opts = ExecOptions {
        topology: t,
        assignment: Some(assignment),
        workers: None,
        threads: [threads, 1, 1],
        blocks: [blocks, 1, 1],
        args: std::iter::once("prog").chain(args.iter().copied()).map(String::from).collect(),
        env: vec!["DOJO_TEST=1".into()],
        max_ticks: None,
        capture: true,
        max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
        observe: false,
        progress: false,
    };
    run_image(image, &opts).unwrap()
}

/// Runs `source` as `blocks` groups of 64 work-items on the small GPU of `target` and
/// returns the numbers of each line it prints (no fault allowed).
fn number_rows(name: &str, target: Target, source: &str, blocks: u32) -> Vec<Vec<u32>> {
    let image = build(name, target, source);
    let out = run(&image, small(target), 1, "single", 64, blocks, &[]);
    assert!(out.faults.is_empty(), "{target}: {:?}", out.faults);
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().map(|l| l.split(' ').map(|f| f.parse().unwrap_or_else(|_| panic!("{target}: {l:?}"))).collect()).collect()
}

const HELLO: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv, char **envp) {
  printf("hello %d %s %s\n", argc, argv[1], envp[0]);
  return 5;
}
"#;

#[test]
fn hello_on_every_target_returns_mains_status() {
    for target in Target::ALL {
        let image = build("hello", target, HELLO);
        let out = run(&image, small(target), 1, "single", 1, 1, &["world"]);
        assert!(out.faults.is_empty(), "{target}: {:?}", out.faults);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hello 2 world DOJO_TEST=1\n", "{target}");
        assert_eq!(out.status, 5, "{target}");
    }
}

const MANY: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv, char **envp) {
  unsigned id = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x();
  unsigned *p = malloc(16 * sizeof(unsigned));
  for (int i = 0; i < 16; i++) p[i] = id * i;
  unsigned s = 0;
  for (int i = 0; i < 16; i++) s += p[i];
  free(p);
  printf("thread %u sum %u\n", id, s);
  if (id == 0) {
    char msg[200];
    memset(msg, 'x', sizeof msg - 2);
    msg[sizeof msg - 2] = '\n';
    msg[sizeof msg - 1] = 0;
    fputs(msg, stderr);
  }
  return 0;
}
"#;

#[test]
fn many_waves_print_malloc_and_stream_long_messages() {
    let image = build("many", Target::Gfx942, MANY);
    let out = run(&image, small(Target::Gfx942), 1, "single", 64, 5, &[]);
    assert!(out.faults.is_empty(), "{:?}", out.faults);
    assert_eq!(out.status, 0);
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    let mut want: Vec<String> = (0..320u32).map(|id| format!("thread {id} sum {}", id * 120)).collect();
    want.sort();
    assert_eq!(lines, want);
    assert!(out.stderr == [vec![b'x'; 198], vec![b'\n']].concat(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn results_do_not_depend_on_workers_or_partitioning() {
    let image = build("many", Target::Gfx942, MANY);
    let reference = run(&image, small(Target::Gfx942), 1, "single", 64, 6, &[]);
    assert!(reference.faults.is_empty(), "{:?}", reference.faults);
    for (workers, strategy) in [(2, "subtree"), (3, "round-robin"), (2, "mincut")] {
        let out = run(&image, small(Target::Gfx942), workers, strategy, 64, 6, &[]);
        assert!(out.stdout == reference.stdout, "{workers} x {strategy}: output differs:\n{}", String::from_utf8_lossy(&out.stdout));
        assert_eq!(out.kernels, reference.kernels, "{workers} x {strategy}: statistics");
        assert_eq!(out.end, reference.end, "{workers} x {strategy}: end time");
    }
}

#[test]
fn exit_status_and_faults_reach_the_host() {
    let exit = build("exit7", Target::Gfx942, "#include <stdlib.h>\nint main(void) { exit(7); }\n");
    let out = run(&exit, small(Target::Gfx942), 1, "single", 1, 1, &[]);
    assert_eq!((out.status, out.program_exit), (7, Some(7)));

    let wild = build(
        "wild",
        Target::Gfx942,
        "int main(int argc, char **argv) { volatile int *p = (volatile int *)0x1000; *p = argc; return 0; }\n",
    );
    let out = run(&wild, small(Target::Gfx942), 1, "single", 1, 1, &[]);
    assert_ne!(out.status, 0);
    let f = out.faults.first().expect("a fault");
    assert_eq!(f.kernel, "_start");
    assert_eq!(f.addr, Some(0x1000), "{f}");
    assert!(f.to_string().contains("0x1000"), "{f}");
}

#[test]
fn cache_models_swap_by_policy() {
    let image = build("many", Target::Gfx942, MANY);
    let mut outputs = Vec::new();
    for l2 in ["lru", "srrip", "random", "ideal"] {
        let mut t = small(Target::Gfx942);
        let policy: simdojo::topology::overrides::Override = format!("amdgpu.l2.policy={l2}").parse().unwrap();
        simdojo::topology::overrides::apply(&mut t, &[policy]).unwrap();
        let out = run(&image, t, 1, "single", 64, 2, &[]);
        assert!(out.faults.is_empty(), "{l2}: {:?}", out.faults);
        let start = out.kernels.iter().find(|k| k.kernel == "_start").expect("_start stats");
        assert!(start.l2.hits + start.l2.misses > 0, "{l2}: no L2 traffic");
        if l2 == "ideal" {
            assert_eq!(start.l2.misses, 0, "an ideal L2 never misses");
        } else {
            assert!(start.l2.misses > 0, "{l2}: cold misses expected");
        }
        outputs.push(out.stdout);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "the cache model changed the program's output");
}

const LDS_AND_SCRATCH: &str = r#"
#include <stdio.h>
static __attribute__((address_space(3), loader_uninitialized)) unsigned shared[256];
static void put(unsigned *p, unsigned v) { *p = v; }   /* a generic pointer into LDS */
int main(int argc, char **argv) {
  unsigned id = __builtin_amdgcn_workitem_id_x();
  unsigned n = __builtin_amdgcn_workgroup_size_x();
  volatile unsigned local[64];                          /* private memory (scratch) */
  for (int i = 0; i < 64; i++) local[i] = id * 1000 + i;
  unsigned k = (id * 7 + argc) % 64;
  if (local[k] != id * 1000 + k) printf("lane %u: scratch %u\n", id, local[k]);
  put((unsigned *)&shared[id], id + 1);
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  for (unsigned s = n / 2; s > 0; s /= 2) {
    if (id < s) shared[id] += shared[id + s];
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  }
  if (id == 0) printf("group %u sum %u\n", __builtin_amdgcn_workgroup_id_x(), shared[0]);
  return 0;
}
"#;

#[test]
fn lds_barriers_flat_apertures_and_scratch_on_every_target() {
    for target in Target::ALL {
        let image = build("lds", target, LDS_AND_SCRATCH);
        let out = run(&image, small(target), 1, "single", 256, 2, &[]);
        assert!(out.faults.is_empty(), "{target}: {:?}", out.faults);
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
        lines.sort();
        assert_eq!(lines, ["group 0 sum 32896", "group 1 sum 32896"], "{target}");
    }
}

const SPIN: &str = r#"
#include <stdio.h>
static int flag;
static int data;
int main(void) {
  unsigned group = __builtin_amdgcn_workgroup_id_x();
  if (__builtin_amdgcn_workitem_id_x() != 0) return 0;
  if (group == 1) {
    while (__scoped_atomic_load_n(&flag, __ATOMIC_ACQUIRE, __MEMORY_SCOPE_DEVICE) == 0)
      __builtin_amdgcn_s_sleep(1);
    printf("consumer saw %d\n", data);
  } else {
    for (volatile int i = 0; i < 2000; i++) ;
    data = 42;
    __scoped_atomic_store_n(&flag, 1, __ATOMIC_RELEASE, __MEMORY_SCOPE_DEVICE);
    printf("producer done\n");
  }
  return 0;
}
"#;

#[test]
fn a_work_group_spinning_on_another_xcd_sees_its_release() {
    // Groups 0 and 1 run on different XCDs (different partitions with 2 workers); the
    // consumer spins until the producer's release store: quanta interleave, the flag's
    // accesses meet at the coherent home, and the result is the same on any thread count.
    for target in [Target::Gfx90a, Target::Gfx942] {
        let image = build("spin", target, SPIN);
        let one = run(&image, small(target), 1, "single", 64, 2, &[]);
        assert!(one.faults.is_empty(), "{target}: {:?}", one.faults);
        assert_eq!(String::from_utf8_lossy(&one.stdout), "producer done\nconsumer saw 42\n", "{target}");
        for (workers, strategy) in [(2, "subtree"), (2, "round-robin"), (4, "round-robin")] {
            let other = run(&image, small(target), workers, strategy, 64, 2, &[]);
            let same = other.stdout == one.stdout && other.kernels == one.kernels && other.end == one.end;
            assert!(same, "{target}: {workers} workers ({strategy}) differ");
        }
    }
}

const RACY: &str = r#"
#include <stdio.h>
#define GROUPS 4
#define ROUNDS 3
static int data[GROUPS];
static int flag[GROUPS];
static int racy;
/* Relaxed device-scope accesses: plain global loads and stores (no sc0 sc1), which the
   compute unit performs itself, not the coherent home. */
static int load(int *p) { return __scoped_atomic_load_n(p, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); }
static void store(int *p, int v) { __scoped_atomic_store_n(p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE); }
int main(void) {
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  if (__builtin_amdgcn_workitem_id_x() != 0) return 0;
  unsigned prev = (g + GROUPS - 1) % GROUPS;
  int token = 1;
  unsigned spins = 0;
  for (int r = 0; r < ROUNDS; r++) {
    int need = g == 0 ? r : r + 1;
    while (load(&flag[prev]) < need) {
      spins++;
      __builtin_amdgcn_s_sleep(1);
    }
    if (need > 0) token = load(&data[prev]) * 3 + (int)g;
    store(&racy, load(&racy) + 1); /* a read-modify-write race between the groups */
    store(&data[g], token);
    store(&flag[g], r + 1);
  }
  printf("group %u token %d spins %u racy %d\n", g, token, spins, load(&racy));
  return 0;
}
"#;

#[test]
fn a_racy_program_passing_data_through_plain_stores_is_deterministic_for_any_workers_and_partitioner() {
    // Work-groups on different XCDs (gfx942: group g on XCD g % 2) and compute units
    // (gfx90a) pass a token around a ring through plain stores and spin on plain loads;
    // they also race on a plain read-modify-write. How often each spins and what the
    // race leaves depend on when each store becomes visible: the same simulated time for
    // any worker count and partitioning.
    for target in [Target::Gfx942, Target::Gfx90a] {
        let image = build("racy", target, RACY);
        let one = run(&image, small(target), 1, "single", 64, 4, &[]);
        assert!(one.faults.is_empty(), "{target}: {:?}", one.faults);
        let text = String::from_utf8_lossy(&one.stdout).to_string();
        let mut tokens: Vec<&str> = text.lines().map(|l| l.split(' ').nth(3).unwrap_or("?")).collect();
        tokens.sort();
        // The ring's arithmetic: each group's last token is the previous group's times
        // three plus its number, three rounds round the ring of four.
        assert_eq!(tokens, ["10989", "296721", "32968", "98906"], "{target}: {text}");
        for strategy in ["single", "round-robin", "linear", "subtree", "mincut"] {
            for workers in [1, 2, 4] {
                let out = run(&image, small(target), workers, strategy, 64, 4, &[]);
                let what = format!("{target}, {workers} workers, {strategy}");
                assert!(out.stdout == one.stdout, "{what}: output differs:\n{}\nvs\n{text}", String::from_utf8_lossy(&out.stdout));
                assert_eq!(out.kernels, one.kernels, "{what}: statistics");
                assert_eq!(out.end, one.end, "{what}: end time");
            }
        }
    }
}

const SHORTS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  unsigned id = __builtin_amdgcn_workitem_id_x();
  volatile unsigned short a = (unsigned short)(id * 977 + 13), b = (unsigned short)(id * 31 + 7);
  volatile short c = (short)(id * -301), d = (short)(id * 17 - 500);
  unsigned short s1 = a + b, s2 = a - b, s3 = a * b, s4 = (unsigned short)(a << (id & 7)), s5 = (unsigned short)(a >> (id & 7));
  short t1 = c + d, t2 = c - d, t3 = (short)(c >> (id & 3)), t4 = c < d ? c : d, t5 = c > d ? c : d;
  unsigned short m1 = a < b ? a : b, m2 = a > b ? a : b;
  int n = argc > 1 ? atoi(argv[1]) : 0;
  printf("%u %u %u %u %u %u %d %d %d %d %d %u %u %d\n", id, s1, s2, s3, s4, s5, t1, t2, t3, t4, t5, m1, m2, n + (int)id);
  return 0;
}
"#;

/// What SHORTS prints for work-item `id` with argument 123, computed with C's promotions.
fn shorts_line(id: u32) -> String {
    let (a, b) = ((id * 977 + 13) as u16, (id * 31 + 7) as u16);
    let (c, d) = ((id as i32 * -301) as i16, (id as i32 * 17 - 500) as i16);
    let (ai, bi, ci, di) = (i32::from(a), i32::from(b), i32::from(c), i32::from(d));
    let sh = id & 7;
    format!(
        "{id} {} {} {} {} {} {} {} {} {} {} {} {} {}",
        (ai + bi) as u16,
        (ai - bi) as u16,
        (ai * bi) as u16,
        (ai << sh) as u16,
        (ai >> sh) as u16,
        (ci + di) as i16,
        (ci - di) as i16,
        (ci >> (id & 3)) as i16,
        c.min(d),
        c.max(d),
        a.min(b),
        a.max(b),
        123 + id as i32
    )
}

#[test]
fn sixteen_bit_integers_d16_memory_and_varargs_on_the_stack_on_every_target() {
    let mut want: Vec<String> = (0..64).map(shorts_line).collect();
    want.sort();
    for target in Target::ALL {
        let image = build("shorts", target, SHORTS);
        let out = run(&image, small(target), 1, "single", 64, 1, &["123"]);
        assert!(out.faults.is_empty(), "{target}: {:?}", out.faults);
        let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
        got.sort();
        assert_eq!(got, want, "{target}");
    }
}

const WHERE: &str = r#"
#include <stdio.h>
int main(void) {
  // HW_ID bits 15:0 (WAVE_ID, SIMD_ID, PIPE_ID, CU_ID, SH_ID, SE_ID) and XCC_ID bits 3:0
  // (register 20, reserved and zero on gfx90a).
  unsigned hw = __builtin_amdgcn_s_getreg((15 << 11) | 4);
  unsigned xcc = __builtin_amdgcn_s_getreg((3 << 11) | 20);
  if (__builtin_amdgcn_workitem_id_x() == 0)
    printf("%u %u %u %u\n", __builtin_amdgcn_workgroup_id_x(), xcc, (hw >> 13) & 7, (hw >> 8) & 15);
  return 0;
}
"#;

#[test]
fn waves_on_different_compute_units_read_different_hw_ids() {
    // The test GPUs have 2 CUs per XCD (2 XCDs on gfx942 and gfx950): group g runs on XCD
    // g % xcds, and the CP spreads groups over its CUs; CU c is CU_ID c / ses of SE
    // c % ses (ses = 8 on gfx90a, 4 otherwise).
    for target in Target::ALL {
        let mut places = std::collections::BTreeMap::new();
        for v in number_rows("where", target, WHERE, 4) {
            places.insert(v[0], (v[1], v[2], v[3]));
        }
        assert_eq!(places.len(), 4, "{target}: {places:?}");
        let distinct: std::collections::BTreeSet<_> = places.values().collect();
        assert!(distinct.len() >= 2, "{target}: every group reads the same place {places:?}");
        for (g, &(xcc, se, cu)) in &places {
            let xcds = if target == Target::Gfx90a { 1 } else { 2 };
            assert_eq!(xcc, if target == Target::Gfx90a { 0 } else { g % xcds }, "{target} group {g}");
            assert!(se < 2 && cu == 0, "{target} group {g}: SE {se} CU {cu} of a 2-CU XCD");
        }
    }
}

const SCALAR_ATOMICS: &str = r#"
#include <stdio.h>
unsigned counter;
int main(void) {
  unsigned *p = &counter;
  unsigned v = 1;
  // A returning scalar atomic add per wave: each wave gets a distinct pre-op value.
  __asm__ volatile("s_atomic_add %0, %1, 0x0 glc\n\ts_waitcnt lgkmcnt(0)" : "+s"(v) : "s"(p) : "memory");
  if (__builtin_amdgcn_workitem_id_x() == 0)
    printf("%u %u\n", __builtin_amdgcn_workgroup_id_x(), v);
  return 0;
}
"#;

#[test]
fn scalar_atomics_of_waves_on_different_compute_units_are_performed_once_each() {
    // The compute units defer scalar atomics like vector ones; the returned value reaches
    // the wave's SGPRs when the access completes.
    for target in Target::ALL {
        let mut olds: Vec<u32> = number_rows("satomic", target, SCALAR_ATOMICS, 6).iter().map(|r| r[1]).collect();
        olds.sort_unstable();
        assert_eq!(olds, (0..6).collect::<Vec<u32>>(), "{target}");
    }
}

const RESIDENT: &str = r#"
#include <stdio.h>
static __attribute__((address_space(3), loader_uninitialized)) unsigned shared[250];
unsigned arrived;
int main(void) {
  unsigned id = __builtin_amdgcn_workitem_id_x();
  shared[id] = id;
  // Every group waits until all have arrived, so all are resident at once.
  if (id == 0) __atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
  unsigned spins = 0;
  while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < __builtin_amdgcn_grid_size_x() / 64 && spins < 200000) {
    __builtin_amdgcn_s_sleep(2);
    spins++;
  }
  unsigned hw = __builtin_amdgcn_s_getreg((31 << 11) | 4);
  unsigned xcc = __builtin_amdgcn_s_getreg((3 << 11) | 20);
  unsigned lds = __builtin_amdgcn_s_getreg((7 << 11) | 6);
  if (id == 0)
    printf("%u %u %u %u %u %u %u %u %u\n", __builtin_amdgcn_workgroup_id_x(), xcc, (hw >> 13) & 7, (hw >> 8) & 15,
           (hw >> 16) & 15, lds, (hw >> 4) & 3, hw & 15, spins >= 200000 ? 1u : 0u + shared[63] - 63);
  return 0;
}
"#;

#[test]
fn groups_resident_on_one_compute_unit_get_distinct_slots_and_lds() {
    // Eight one-wave groups wait for each other, so each compute unit holds several at
    // once: on one unit their work-group slots (HW_ID.TG_ID), LDS bases (LDS_ALLOC) and
    // wave slots (SIMD_ID, WAVE_ID) must all differ.
    for target in Target::ALL {
        let rows = number_rows("resident", target, RESIDENT, 8);
        assert_eq!(rows.len(), 8, "{target}: {rows:?}");
        assert!(rows.iter().all(|r| r[8] == 0), "{target}: a group timed out waiting or read bad LDS: {rows:?}");
        let mut per_unit: std::collections::BTreeMap<(u32, u32, u32), Vec<&Vec<u32>>> = Default::default();
        for r in &rows {
            per_unit.entry((r[1], r[2], r[3])).or_default().push(r);
        }
        assert!(per_unit.values().any(|g| g.len() > 1), "{target}: no unit held two groups: {rows:?}");
        for (unit, groups) in &per_unit {
            let distinct = |f: &dyn Fn(&Vec<u32>) -> (u32, u32)| groups.iter().map(|r| f(r)).collect::<std::collections::BTreeSet<_>>().len();
            assert_eq!(distinct(&|r| (r[4], 0)), groups.len(), "{target} {unit:?}: TG_ID {groups:?}");
            assert_eq!(distinct(&|r| (r[5], 0)), groups.len(), "{target} {unit:?}: LDS_BASE {groups:?}");
            assert_eq!(distinct(&|r| (r[6], r[7])), groups.len(), "{target} {unit:?}: SIMD/WAVE {groups:?}");
        }
    }
}
