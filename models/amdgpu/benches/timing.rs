//! Throughput of the timing models' hot calls: cache accesses per policy on a working set
//! four times an L2 channel, and HBM accesses of a line-sized stream.

use std::hint::black_box;

use amdgpu::timing::cache::{AccessKind, CacheConfig, CacheModel, WritePolicy};
use amdgpu::timing::{ByteAddr, Cycle, HbmConfig, HbmModel, LineAddr, ReplacementPolicy};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Accesses per benchmark iteration.
const N: u64 = 16 * 1024;

fn bench_cache(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache_access");
    group.throughput(Throughput::Elements(N));
    for policy in ["lru", "srrip", "random", "ideal"] {
        let config = CacheConfig {
            size_bytes: 256 * 1024,
            line_bytes: 128,
            ways: 16,
            policy: ReplacementPolicy::from_name(policy).expect("known policy name"),
            write_policy: WritePolicy::WriteBack,
        };
        let mut cache = CacheModel::new(&config).expect("valid config");
        let mut line = 0u64;
        group.bench_function(policy, |b| {
            b.iter(|| {
                for _ in 0..N {
                    // A strided walk over 8192 lines (4x the cache): mixes hits and misses.
                    line = (line + 2_654_435_761) % 8192;
                    black_box(cache.access(LineAddr(line), AccessKind::Read, true));
                }
            })
        });
    }
    group.finish();
}

fn bench_hbm(c: &mut Criterion) {
    let mut group = c.benchmark_group("hbm_access");
    group.throughput(Throughput::Elements(N));
    let mut hbm = HbmModel::new(&HbmConfig::hbm3_mi300x()).expect("valid default");
    let mut addr = 0u64;
    let mut now = 0u64;
    group.bench_function("mi300x_stream_128B", |b| {
        b.iter(|| {
            for _ in 0..N {
                addr = addr.wrapping_add(128);
                now += 1;
                black_box(
                    hbm.access(Cycle(now), ByteAddr(addr), 128, false)
                        .expect("small access"),
                );
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_cache, bench_hbm);
criterion_main!(benches);
