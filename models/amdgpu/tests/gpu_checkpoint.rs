//! Whole-GPU checkpoints: stop a running GPU program mid-way, save everything (waves,
//! compute units, caches, queues, memory, the host's RPC state), restore it into a new
//! simulation (under another partitioning) and continue: the results equal those of
//! the uninterrupted run. Its own test binary (process), because a restored GPU needs
//! the original's address range free.

use std::path::Path;

use amdgpu::host::cc::{compile, CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{prepare, ExecOptions, Prepared};
use simdojo::partition::{plan, Strategy};
use simdojo::time::Tick;
use simdojo::topology;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  unsigned id = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x();
  float x = id;
  for (int i = 0; i < 200; i++) x = x * 0.999f + 1.0f;
  unsigned *p = malloc(64);
  p[0] = (unsigned)x;
  printf("item %u: %u\n", id, p[0]);
  free(p);
  return 0;
}
"#;

fn options(workers: u32, strategy: &str) -> ExecOptions {
    let t = topology::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/test-gfx942.toml")).unwrap();
    let strategy: Strategy = strategy.parse().unwrap();
    let assignment = plan(&t, &strategy, workers).unwrap().assignment;
    ExecOptions {
        topology: t,
        assignment: Some(assignment),
        workers: None,
        threads: [64, 1, 1],
        blocks: [6, 1, 1],
        args: vec!["ck".into()],
        env: Vec::new(),
        max_ticks: None,
        capture: true,
        max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
        observe: false,
        progress: false,
    }
}

#[test]
fn stop_save_restore_continue_equals_the_uninterrupted_run() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpu-checkpoint");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("ck.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let out = dir.join("ck.co");
    compile(&CcOptions { mcpu: Target::Gfx942, opt: OptLevel::O2, output: out.clone(), inputs: vec![src], extra_flags: Vec::new() }).unwrap();
    let image = std::fs::read(out).unwrap();

    let reference = prepare(&image, &options(2, "subtree")).unwrap().finish();
    assert!(reference.faults.is_empty(), "{:?}", reference.faults);
    assert_eq!(String::from_utf8_lossy(&reference.stdout).lines().count(), 384);

    // Stop once some of the output is out (checking every twentieth of the run), save,
    // and continue in place.
    let mut first = prepare(&image, &options(2, "subtree")).unwrap();
    let mut before = Vec::new();
    let mut half = Tick(0);
    while before.is_empty() && half < reference.end {
        half = Tick(half.0 + reference.end.0 / 20);
        first.run_until(half);
        before.extend(first.take_output().0);
    }
    let saved = first.checkpoint().unwrap();
    let continued = first.finish();
    assert!([before.clone(), continued.stdout.clone()].concat() == reference.stdout, "stepping changed the output");
    assert_eq!(continued.kernels, reference.kernels);
    assert_eq!(continued.end, reference.end);
    assert!(!before.is_empty() && !continued.stdout.is_empty(), "the checkpoint must fall inside the printing");

    // Restore into a fresh GPU on one thread and continue.
    let restored = Prepared::restore(&options(1, "single"), &saved).unwrap();
    assert_eq!(restored.now(), half);
    let rest = restored.finish();
    assert!(rest.faults.is_empty(), "{:?}", rest.faults);
    assert!([before, rest.stdout.clone()].concat() == reference.stdout, "restored run printed:\n{}", String::from_utf8_lossy(&rest.stdout));
    assert_eq!(rest.kernels, reference.kernels);
    assert_eq!(rest.end, reference.end);
    assert_eq!(rest.status, reference.status);
}
