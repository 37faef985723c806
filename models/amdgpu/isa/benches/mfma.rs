//! Matrix instruction throughput: a single wave running a loop of four MFMAs per
//! iteration (accumulating in AccVGPRs), for the shapes GEMM kernels use most:
//! gfx950 `v_mfma_scale_f32_16x16x128_f8f6f4` (fp8 x fp8 with E8M0 scales), gfx942
//! `v_mfma_f32_16x16x32_fp8_fp8`, `v_mfma_f32_32x32x8_f16` and `v_mfma_f32_16x16x16_bf16`.
//!
//! `MFMA_BENCH_REPS=n` skips criterion and runs each loop `n` times, printing the MFMA
//! wave-instructions executed per second (a fixed amount of work for `perf stat`);
//! `MFMA_BENCH_CASE=name` runs one case only.

use amdgpu_isa::census::forms;
use amdgpu_isa::exec::{run_single_wave, Memory, Program, Wave};
use amdgpu_isa::Target;
use criterion::{criterion_group, Criterion, Throughput};
use std::hint::black_box;

const BASE: u64 = 0x10_0000;
/// Loop iterations per run (four MFMAs each).
const ITERATIONS: u32 = 1000;
const PER_ITERATION: u64 = 4;

/// One benchmarked instruction.
struct Case {
    name: &'static str,
    target: Target,
    mnemonic: &'static str,
    /// Prefix the MFMA with `v_mfma_ld_scale_b32 v20, v21` (the scaled form).
    scaled: bool,
}

const CASES: [Case; 4] = [
    Case { name: "16x16x128_f8f6f4_scaled", target: Target::Gfx950, mnemonic: "v_mfma_f32_16x16x128_f8f6f4", scaled: true },
    Case { name: "16x16x32_fp8_gfx942", target: Target::Gfx942, mnemonic: "v_mfma_f32_16x16x32_fp8_fp8", scaled: false },
    Case { name: "32x32x8_f16", target: Target::Gfx942, mnemonic: "v_mfma_f32_32x32x8_f16", scaled: false },
    Case { name: "16x16x16_bf16", target: Target::Gfx942, mnemonic: "v_mfma_f32_16x16x16_bf16", scaled: false },
];

/// `s_mov_b32 s0, ITERATIONS`; loop: 4 x MFMA a[0:15] += v[0:7] * v[8:15];
/// `s_sub_u32 s0, s0, 1`, `s_cmp_lg_u32 s0, 0`, `s_cbranch_scc1 loop`; `s_endpgm`.
fn program(case: &Case) -> Program {
    let opcode = forms(case.target)
        .into_iter()
        .find(|f| f.opcode.mnemonic() == case.mnemonic)
        .map(|f| f.opcode_field)
        .expect("the benchmarked MFMA exists on its target");
    let mut body = Vec::new();
    for _ in 0..PER_ITERATION {
        if case.scaled {
            body.extend([0xd3ac_0000, (256 + 21) << 9 | (256 + 20)]);
        }
        // acc_cd (a[0:15] is C and D), A = v0, B = v8, scale bit for the scaled pair.
        let w0 = 0xd380_0000 | opcode << 16 | 1 << 15 | (case.scaled as u32) << 11;
        body.extend([w0, 256 << 18 | (256 + 8) << 9 | 256]);
    }
    let mut words = vec![0xbe80_00ff, ITERATIONS];
    words.extend(&body);
    let back = -(body.len() as i32 + 3) as i16 as u16 as u32;
    words.extend([0x8080_8100, 0xbf07_8000, 0xbf85_0000 | back, 0xbf81_0000]);
    Program::from_words(case.target, BASE, &words)
}

/// A wave with moderate random inputs in v[0:15] (valid for every benchmarked type) and
/// scales near 1.0 in v20/v21.
fn wave() -> Wave {
    let mut w = Wave::new(BASE, 0);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for reg in 0..16 {
        for lane in 0..64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Bytes 0x30..0x3f / halves around 1.0: finite in fp8, bf8, f16 and bf16.
            w.vgpr[reg][lane] = (x as u32 & 0x0f0f_0f0f) | 0x3030_3030;
        }
    }
    w.vgpr[20] = [0x7f7f_7f7f; 64];
    w.vgpr[21] = [0x7e80_7f81; 64];
    w
}

fn run(program: &Program) -> u64 {
    let mut w = wave();
    let mut mem = Memory::new();
    run_single_wave(program, &mut w, &mut mem, &mut [], u64::MAX).expect("the loop runs");
    black_box(w.agpr[0][0]) as u64
}

fn bench_mfma(c: &mut Criterion) {
    let mut group = c.benchmark_group("mfma");
    group.throughput(Throughput::Elements(ITERATIONS as u64 * PER_ITERATION));
    for case in &CASES {
        let program = program(case);
        group.bench_function(case.name, |b| b.iter(|| run(&program)));
    }
    group.finish();
}

/// Runs every loop (or only the one `MFMA_BENCH_CASE` names) `reps` times and prints MFMA
/// wave-instructions per second.
fn fixed_reps(reps: u64) {
    let only = std::env::var("MFMA_BENCH_CASE").ok();
    for case in CASES.iter().filter(|c| only.as_deref().is_none_or(|o| o == c.name)) {
        let program = program(case);
        let start = std::time::Instant::now();
        for _ in 0..reps {
            run(&program);
        }
        let secs = start.elapsed().as_secs_f64();
        let mfmas = reps * ITERATIONS as u64 * PER_ITERATION;
        println!("{:26} {mfmas} MFMA in {secs:.3} s: {:.3} M MFMA/s ({:.2} us each)", case.name, mfmas as f64 / secs / 1e6, secs / mfmas as f64 * 1e6);
    }
}

criterion_group!(benches, bench_mfma);

fn main() {
    if let Some(reps) = std::env::var("MFMA_BENCH_REPS").ok().and_then(|v| v.parse::<u64>().ok()) {
        fixed_reps(reps);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
