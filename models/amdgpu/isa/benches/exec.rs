//! Executor throughput in wave-instructions per second on one thread: a VALU-bound loop
//! and a memory-bound loop (global loads/stores and LDS traffic), each a single gfx942
//! wave of 64 active lanes.
//!
//! `EXEC_BENCH_REPS=n` skips criterion and runs each loop `n` times, printing the
//! wave-instructions executed and the rate: a fixed amount of work for `perf stat`, whose
//! cycle counts stay meaningful on a machine shared with other jobs.

use amdgpu_isa::exec::{run_single_wave, Memory, Program, Wave};
use amdgpu_isa::Target;
use criterion::{criterion_group, Criterion, Throughput};
use std::hint::black_box;

const BASE: u64 = 0x10_0000;
const DATA: u64 = 0x20_0000;

/// `s_mov_b32 s0, 10000`; loop: v_fma_f32, v_add_u32, v_mul_f32, v_xor_b32, v_fmac_f32,
/// v_lshlrev_b32, v_max_f32, v_and_b32, v_cndmask_b32, v_mad_u32_u24, s_sub_u32,
/// s_cmp_lg_u32, s_cbranch_scc1; s_endpgm (assembled with llvm-mc-19 -mcpu=gfx942).
const VALU_LOOP: &[u32] = &[
    0xbe8000ff, 0x00002710, 0xd1cb0001, 0x04060702, 0x68080b04, 0x0a0c0f06, 0x2a100908, 0x76120d01, 0x24141081,
    0x16160309, 0x2618090a, 0x001a090c, 0xd1c3000e, 0x043a0b04, 0x80808100, 0xbf078000, 0xbf85fff1, 0xbf810000,
];

/// `s_mov_b32 s0, 2000`; loop: 2x global_load_dword, s_waitcnt, v_add_u32,
/// global_store_dword, ds_write_b32, ds_read_b32, s_waitcnt, v_add_u32,
/// global_store_dword, s_sub_u32, s_cmp_lg_u32, s_cbranch_scc1; s_endpgm.
const MEMORY_LOOP: &[u32] = &[
    0xbe8000ff, 0x000007d0, 0xdc508000, 0x047f0002, 0xdc508100, 0x057f0002, 0xbf8c0f70, 0x68080b04, 0xdc708200,
    0x007f0402, 0xd81a0000, 0x00000406, 0xd86c0100, 0x07000006, 0xbf8cc07f, 0x680a0907, 0xdc708300, 0x007f0502,
    0x80808100, 0xbf078000, 0xbf85ffed, 0xbf810000,
];

fn fresh_wave() -> Wave {
    let mut w = Wave::new(BASE, 0x3f0);
    for lane in 0..64 {
        let addr = DATA + 4 * lane as u64;
        w.vgpr[2][lane] = addr as u32;
        w.vgpr[3][lane] = (addr >> 32) as u32;
        w.vgpr[1][lane] = (lane as f32).to_bits();
        w.vgpr[2 + 1][lane] = (addr >> 32) as u32;
        w.vgpr[5][lane] = lane as u32;
        w.vgpr[6][lane] = 4 * lane as u32;
        w.vgpr[7][lane] = 1.0001f32.to_bits();
    }
    w
}

fn bench_loop(c: &mut Criterion, name: &str, words: &[u32]) {
    let program = Program::from_words(Target::Gfx942, BASE, words);
    let mut mem = Memory::new();
    mem.map(DATA, 4096).expect("map data");
    let mut lds = vec![0u8; 64 * 1024];
    let mut probe = fresh_wave();
    let n = run_single_wave(&program, &mut probe, &mut mem, &mut lds, u64::MAX).expect("benchmark loop runs");
    let mut group = c.benchmark_group("exec");
    group.throughput(Throughput::Elements(n));
    group.bench_function(name, |b| {
        b.iter_batched(
            fresh_wave,
            |mut w| black_box(run_single_wave(&program, &mut w, &mut mem, &mut lds, u64::MAX)),
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn bench_exec(c: &mut Criterion) {
    bench_loop(c, "valu_loop_wave_instructions", VALU_LOOP);
    bench_loop(c, "memory_loop_wave_instructions", MEMORY_LOOP);
}

/// Runs each loop `reps` times without criterion.
fn fixed_reps(reps: u64) {
    for (name, words) in [("valu_loop", VALU_LOOP), ("memory_loop", MEMORY_LOOP)] {
        if std::env::var("EXEC_BENCH_ONLY").is_ok_and(|only| only != name) {
            continue;
        }
        let program = Program::from_words(Target::Gfx942, BASE, words);
        let mut mem = Memory::new();
        mem.map(DATA, 4096).expect("map data");
        let mut lds = vec![0u8; 64 * 1024];
        let start = std::time::Instant::now();
        let mut executed = 0u64;
        for _ in 0..reps {
            let mut w = fresh_wave();
            executed += run_single_wave(&program, &mut w, &mut mem, &mut lds, u64::MAX).expect("benchmark loop runs");
        }
        let secs = start.elapsed().as_secs_f64();
        println!("{name}: {executed} wave-instructions in {secs:.3} s = {:.1} M/s", executed as f64 / secs / 1e6);
    }
}

criterion_group!(benches, bench_exec);

fn main() {
    if let Some(reps) = std::env::var("EXEC_BENCH_REPS").ok().and_then(|v| v.parse::<u64>().ok()) {
        fixed_reps(reps);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
