//! Decoder throughput on a mix of instructions typical of compiled kernels.
//!
//! `DECODE_BENCH_REPS=n` skips criterion and decodes the stream `n` times, printing the
//! instructions decoded and the rate: a fixed amount of work for `perf stat` or
//! `valgrind --tool=callgrind`, whose counts stay meaningful on a shared machine.

use amdgpu_isa::decode::{decode, Decoded};
use amdgpu_isa::Target;
use criterion::{criterion_group, Criterion, Throughput};
use std::hint::black_box;

/// A gfx942 kernel body (SALU, SMEM, VALU, VOP3, VOP3P, FLAT/GLOBAL, branches).
const KERNEL: &[u32] = &[
    0xC00200C0, 0x00000008, 0xBF8CC07F, 0xBF048103, 0xBF850032, 0xC0060000, 0x00000000, 0xBF078103,
    0xBF840019, 0x8602FF03, 0x7FFFFFFE, 0x24040082, 0x7E060280, 0xBF8CC07F, 0xD2080002, 0x04090000,
    0xBE840002, 0xDC548000, 0x047F0002, 0x8104C204, 0xBF078004, 0xBF8C0F70, 0xD3B24004, 0x0801E504,
    0xDC748000, 0x007F0402, 0xD2080002, 0x02210102, 0xBF85FFF4, 0xBF070302, 0x858480C1, 0x86EA047E,
    0xBF870003, 0xBF820015, 0xBE820080, 0xBF880013, 0x81840203, 0xBE830080, 0x7E020280, 0xD2080000,
    0x00090100, 0xBF8CC07F, 0xD2080000, 0x00010500, 0xBF810000,
];

/// The kernel body 64 times over, and the number of instructions in it.
fn stream() -> (Vec<u32>, u64) {
    let mut stream = Vec::new();
    for _ in 0..64 {
        stream.extend_from_slice(KERNEL);
    }
    let mut n_inst = 0u64;
    let mut pos = 0;
    while pos < stream.len() {
        n_inst += 1;
        pos += decode(Target::Gfx942, &stream[pos..]).size_bytes() / 4;
    }
    (stream, n_inst)
}

/// Decodes the whole stream once; returns how many instructions were valid.
fn decode_all(words: &[u32]) -> u32 {
    let mut pos = 0;
    let mut valid = 0u32;
    while pos < words.len() {
        let d = decode(Target::Gfx942, &words[pos..]);
        if let Decoded::Inst(_) = d {
            valid += 1;
        }
        pos += d.size_bytes() / 4;
    }
    valid
}

fn bench_decode(c: &mut Criterion) {
    let (stream, n_inst) = stream();
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(n_inst));
    group.bench_function("gfx942_kernel_mix", |b| b.iter(|| decode_all(black_box(&stream[..]))));
    group.finish();
}

/// Decodes the stream `reps` times outside criterion and prints the rate.
fn fixed_reps(reps: u64) {
    let (stream, n_inst) = stream();
    let start = std::time::Instant::now();
    let mut valid = 0u64;
    for _ in 0..reps {
        valid += u64::from(decode_all(black_box(&stream[..])));
    }
    let secs = start.elapsed().as_secs_f64();
    let total = n_inst * reps;
    assert_eq!(valid, total, "every instruction of the mix decodes");
    println!("decode: {total} instructions in {secs:.3} s = {:.1} M/s", total as f64 / secs / 1e6);
}

criterion_group!(benches, bench_decode);

fn main() {
    if let Some(reps) = std::env::var("DECODE_BENCH_REPS").ok().and_then(|v| v.parse::<u64>().ok()) {
        fixed_reps(reps);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
