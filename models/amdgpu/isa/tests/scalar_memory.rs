//! Scalar memory stores, scratch accesses and atomics against a reference memory model
//! written here from the ISA (addressing table of "Scalar Memory Addressing", the atomic
//! operations' pseudo-code, buffer bounds), with random addresses, offsets and data on
//! all three targets. Each case runs twice: performed at once, and deferred through
//! `DeviceMemory::route` (what the GPU model does with atomics and fine-grained stores),
//! with the same results.

mod common;

use amdgpu_isa::exec::{
    run_single_wave, AccessKind, DeviceMemory, ExecFault, MemFault, Memory, Program, Route, Space, VmemAccess, Wave, WaveStatus,
};
use amdgpu_isa::Target;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const BASE: u64 = 0x10_0000;
/// Start of the memory the tests map.
const MEM: u64 = 0x2000_0000;
const MEM_BYTES: u64 = 0x1_0000;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(Config { cases, failure_persistence: None, ..Config::default() }, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// What `route` saw of one access: kind, space, bytes and lane 0's address.
type Seen = (AccessKind, Space, u32, u64);

/// A memory that defers (or not) every scalar store and atomic and records what `route`
/// saw.
struct Routed {
    inner: Memory,
    defer: bool,
    seen: Vec<Seen>,
}

impl DeviceMemory for Routed {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        DeviceMemory::read(&mut self.inner, addr, buf)
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        DeviceMemory::write(&mut self.inner, addr, data)
    }

    fn route(&mut self, a: &VmemAccess<'_>) -> Route {
        self.seen.push((a.kind, a.space, a.bytes_per_lane, a.addrs[0]));
        if self.defer && matches!(a.kind, AccessKind::Store | AccessKind::Atomic { .. }) {
            Route::Defer
        } else {
            Route::Now
        }
    }
}

/// Runs `p` on `w` over a copy of `image` (at [`MEM`]); returns the memory afterwards and
/// what the route saw.
fn run(p: &Program, w: &mut Wave, image: &[u8], defer: bool) -> Result<(Vec<u8>, Vec<Seen>), ExecFault> {
    let mut inner = Memory::new();
    inner.map(MEM, MEM_BYTES).unwrap();
    DeviceMemory::write(&mut inner, MEM, image).unwrap();
    let mut mem = Routed { inner, defer, seen: Vec::new() };
    w.pc = BASE;
    w.status = WaveStatus::Running;
    run_single_wave(p, w, &mut mem, &mut [0u8; 64], 1000)?;
    let mut out = vec![0u8; image.len()];
    DeviceMemory::read(&mut mem.inner, MEM, &mut out).unwrap();
    Ok((out, mem.seen))
}

/// A byte-addressed reference memory.
#[derive(Clone)]
struct RefMem(Vec<u8>);

impl RefMem {
    fn get(&self, addr: u64) -> u32 {
        let i = (addr - MEM) as usize;
        u32::from_le_bytes(self.0[i..i + 4].try_into().unwrap())
    }

    fn set(&mut self, addr: u64, v: u32) {
        let i = (addr - MEM) as usize;
        self.0[i..i + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// Stores, scratch stores and loads, and a buffer store clipped at `num_records`:
/// - `s_store_dword` at s[2:3] + 0x10 (immediate),
/// - `s_store_dwordx2` at s[2:3] + s30 (SGPR offset, IMM=0 SOE=0),
/// - `s_store_dwordx4` at s[2:3] + 0x20 + s31 (IMM=1 SOE=1),
/// - `s_buffer_store_dwordx4` at V# s[4:7] + 0x40,
/// - `s_scratch_store_dwordx2` at FLAT_SCRATCH + 8 + s32 * 64, read back with
///   `s_scratch_load_dwordx4`, and `s_load_dwordx4` of the x4 store's address.
const STORES: &str = "s_store_dword s20, s[2:3], 0x10
s_store_dwordx2 s[22:23], s[2:3], s30
s_store_dwordx4 s[24:27], s[2:3], s31 offset:0x20
s_buffer_store_dwordx4 s[24:27], s[4:7], 0x40
s_scratch_store_dwordx2 s[22:23], s[2:3], s32 offset:0x8
s_dcache_wb
s_scratch_load_dwordx4 s[40:43], s[2:3], s32 offset:0x8
s_load_dwordx4 s[44:47], s[2:3], s31 offset:0x20
s_dcache_discard s[2:3], s30
s_atc_probe 7, s[2:3], 0x0";

#[test]
fn stores_and_scratch_follow_the_addressing_table() {
    for target in Target::ALL {
        let p = Program::from_words(target, BASE, &common::assemble(target, STORES));
        let inputs = (0u64..0x100, prop::collection::vec(any::<u32>(), 8), 0u32..0x400, 0u32..0x400, (0u32..10).prop_map(|k| 4 * k), 0u32..0x60, any::<bool>());
        runner(300)
            .run(&inputs, |(base_off, data, s30, s31, s32, records, defer)| {
                let base = MEM + base_off * 4 + 1; // the two low bits of the base are ignored
                let vbase = MEM + 0x800;
                let scratch = MEM + 0x4000;
                let image: Vec<u8> = (0..0x8000u32).map(|i| (i * 7 + 3) as u8).collect();
                let mut w = Wave::new(BASE, 0);
                w.set_sgpr_pair(2, base);
                w.sgpr[4] = vbase as u32;
                w.sgpr[5] = (vbase >> 32) as u32; // stride 0
                w.sgpr[6] = records;
                w.sgpr[7] = 0;
                w.sgpr[20..28].copy_from_slice(&data);
                w.sgpr[30] = s30;
                w.sgpr[31] = s31;
                w.sgpr[32] = s32;
                w.set_sgpr_pair(102, scratch);
                let (mem, seen) = run(&p, &mut w, &image, defer).map_err(|e| TestCaseError::fail(e.to_string()))?;
                // Reference: every address component with its two low bits cleared.
                let mut r = RefMem(image.clone());
                let b = base & !3;
                r.set(b + 0x10, data[0]);
                let a2 = b + u64::from(s30 & !3);
                r.set(a2, data[2]);
                r.set(a2 + 4, data[3]);
                let a4 = b + 0x20 + u64::from(s31 & !3);
                for k in 0..4 {
                    r.set(a4 + 4 * k, data[4 + k as usize]);
                }
                for k in 0..4u64 {
                    if 0x40 + 4 * k + 4 <= u64::from(records) {
                        r.set(vbase + 0x40 + 4 * k, data[4 + k as usize]);
                    }
                }
                let s_addr = scratch + 8 + u64::from(s32) * 64;
                r.set(s_addr, data[2]);
                r.set(s_addr + 4, data[3]);
                prop_assert!(mem == r.0, "{}: memory differs from the reference", target);
                for k in 0..4 {
                    prop_assert_eq!(w.sgpr[40 + k], r.get(s_addr + 4 * k as u64), "{}: scratch load", target);
                    prop_assert_eq!(w.sgpr[44 + k], r.get(a4 + 4 * k as u64), "{}: load", target);
                }
                // Stores reach `route` as scalar stores of their whole size.
                let stores: Vec<_> = seen.iter().filter(|s| s.0 == AccessKind::Store).collect();
                prop_assert_eq!(stores.len(), if records >= 0x44 { 5 } else { 4 });
                prop_assert!(stores.iter().all(|s| s.1 == Space::Scalar));
                prop_assert_eq!(stores[0].3, b + 0x10);
                prop_assert_eq!(stores[2].2, 16);
                Ok(())
            })
            .unwrap();
    }
}

/// The result of an integer atomic of `bits` (32 or 64) on `old` with `src` and `cmp`
/// (the ISA and CLRX pseudo-code; signed operations compare the values as `bits`-bit
/// two's complement).
fn ref_atomic(op: &str, bits: u32, old: u64, src: u64, cmp: u64) -> u64 {
    let mask = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
    let signed = |v: u64| ((v << (64 - bits)) as i64) >> (64 - bits);
    let r = match op {
        "swap" => src,
        "cmpswap" => {
            if old == cmp {
                src
            } else {
                old
            }
        }
        "add" => old.wrapping_add(src),
        "sub" => old.wrapping_sub(src),
        "smin" => {
            if signed(src) < signed(old) {
                src
            } else {
                old
            }
        }
        "umin" => old.min(src),
        "smax" => {
            if signed(src) > signed(old) {
                src
            } else {
                old
            }
        }
        "umax" => old.max(src),
        "and" => old & src,
        "or" => old | src,
        "xor" => old ^ src,
        "inc" => {
            if old < src {
                old + 1
            } else {
                0
            }
        }
        "dec" => {
            if old <= src && old != 0 {
                old - 1
            } else {
                src
            }
        }
        _ => unreachable!(),
    };
    r & mask
}

const OPS: [&str; 13] = ["swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec"];

/// Every scalar atomic, 32 and 64 bits, plain and buffer, returning (glc) or not:
/// - `s_atomic_<op>` at s[2:3] + 0 with glc, data s20 (cmpswap: s[20:21]),
/// - `s_atomic_<op>` at s[2:3] + 8 without, data s24 (cmpswap: s[24:25]),
/// - `s_atomic_<op>_x2` at s[2:3] + 0x10 with glc, data s[28:29] (cmpswap: s[28:31]),
/// - `s_buffer_atomic_<op>` at V# s[4:7] + 0x20 with glc, data s32 (cmpswap: s[32:33]),
/// - `s_buffer_atomic_<op>_x2` at V# + 0x28 without, data s[36:37] (cmpswap: s[36:39]).
fn atomics(op: &str) -> String {
    let (d32, d32b, d64, d32c, d64b) = if op == "cmpswap" {
        ("s[20:21]", "s[24:25]", "s[28:31]", "s[32:33]", "s[36:39]")
    } else {
        ("s20", "s24", "s[28:29]", "s32", "s[36:37]")
    };
    format!(
        "s_atomic_{op} {d32}, s[2:3], 0x0 glc\ns_atomic_{op} {d32b}, s[2:3], 0x8\ns_atomic_{op}_x2 {d64}, s[2:3], 0x10 glc\n\
         s_buffer_atomic_{op} {d32c}, s[4:7], 0x20 glc\ns_buffer_atomic_{op}_x2 {d64b}, s[4:7], 0x28"
    )
}

#[test]
fn atomics_match_the_reference_performed_or_deferred() {
    for target in Target::ALL {
        for op in OPS {
            let p = Program::from_words(target, BASE, &common::assemble(target, &atomics(op)));
            let word = prop_oneof![Just(0u32), Just(1), Just(u32::MAX), Just(0x8000_0000), 0u32..4, any::<u32>()];
            let inputs = (prop::collection::vec(word.clone(), 20), prop::collection::vec(word, 12), any::<bool>(), any::<bool>());
            runner(60)
                .run(&inputs, |(regs, olds, defer, equal)| {
                    let base = MEM + 0x100;
                    let vbase = MEM + 0x200;
                    let mut image = vec![0u8; 0x400];
                    for (k, v) in olds.iter().enumerate() {
                        let at = if k < 6 { 0x100 + 4 * k } else { 0x200 + 0x20 + 4 * (k - 6) };
                        image[at..at + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    let mut w = Wave::new(BASE, 0);
                    w.set_sgpr_pair(2, base);
                    w.sgpr[4] = vbase as u32;
                    w.sgpr[5] = 0;
                    w.sgpr[6] = 0x40;
                    w.sgpr[7] = 0;
                    w.sgpr[20..40].copy_from_slice(&regs);
                    if equal {
                        // Compare values that match memory, so cmpswap swaps.
                        w.sgpr[21] = olds[0];
                        w.sgpr[30] = olds[4];
                        w.sgpr[31] = olds[5];
                    }
                    let before = w.sgpr;
                    let (mem, seen) = run(&p, &mut w, &image, defer).map_err(|e| TestCaseError::fail(format!("{target} {op}: {e}")))?;
                    let mut r = RefMem(image.clone());
                    let mut expect = before;
                    let pair = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
                    let cas = op == "cmpswap";
                    // (address, first data register, returns, 64-bit)
                    for (addr, reg, returns, wide) in [(base, 20, true, false), (base + 8, 24, false, false), (base + 0x10, 28, true, true), (vbase + 0x20, 32, true, false), (vbase + 0x28, 36, false, true)] {
                        if wide {
                            let old = pair(r.get(addr), r.get(addr + 4));
                            let src = pair(before[reg], before[reg + 1]);
                            let cmp = pair(before[reg + 2], before[reg + 3]);
                            let new = ref_atomic(op, 64, old, src, if cas { cmp } else { 0 });
                            r.set(addr, new as u32);
                            r.set(addr + 4, (new >> 32) as u32);
                            if returns {
                                expect[reg] = old as u32;
                                expect[reg + 1] = (old >> 32) as u32;
                            }
                        } else {
                            let old = r.get(addr);
                            let new = ref_atomic(op, 32, u64::from(old), u64::from(before[reg]), if cas { u64::from(before[reg + 1]) } else { 0 }) as u32;
                            r.set(addr, new);
                            if returns {
                                expect[reg] = old;
                            }
                        }
                    }
                    prop_assert!(mem == r.0, "{} {}: memory", target, op);
                    prop_assert_eq!(&w.sgpr[..], &expect[..], "{} {}: SGPRs (defer {})", target, op, defer);
                    let kinds: Vec<AccessKind> = seen.iter().map(|s| s.0).collect();
                    let r = |returns| AccessKind::Atomic { returns };
                    prop_assert_eq!(kinds, vec![r(true), r(false), r(true), r(true), r(false)]);
                    prop_assert!(seen.iter().all(|s| s.1 == Space::Scalar));
                    Ok(())
                })
                .unwrap();
        }
    }
}

/// Buffer bounds: an atomic past `num_records` is not performed (a returning one is
/// refused: its result is undefined); a V# with a stride is refused (its bounds rule is
/// not documented); a misaligned 64-bit atomic is refused, and so is a scratch SGPR
/// offset with its low two bits set.
#[test]
fn out_of_range_strided_and_misaligned_are_not_guessed() {
    for target in Target::ALL {
        let p = |text: &str| Program::from_words(target, BASE, &common::assemble(target, text));
        let image = vec![0x11u8; 0x100];
        let wave = |records: u32, stride: u32| {
            let mut w = Wave::new(BASE, 0);
            w.sgpr[4] = MEM as u32;
            w.sgpr[5] = stride << 16;
            w.sgpr[6] = records;
            w.sgpr[8] = 5;
            w
        };
        let (mem, _) = run(&p("s_buffer_atomic_add s8, s[4:7], 0x10"), &mut wave(0x10, 0), &image, false).unwrap();
        assert_eq!(mem, image, "{target}: out of range, not performed");
        let refused = run(&p("s_buffer_atomic_add s8, s[4:7], 0x10 glc"), &mut wave(0x10, 0), &image, false);
        assert!(matches!(refused, Err(ExecFault::Unsupported { .. })), "{target}");
        let strided = run(&p("s_buffer_load_dword s8, s[4:7], 0x0"), &mut wave(0x40, 4), &image, false);
        assert!(matches!(strided, Err(ExecFault::Unsupported { .. })), "{target}");
        let mut w = wave(0, 0);
        w.set_sgpr_pair(2, MEM + 4);
        let misaligned = run(&p("s_atomic_add_x2 s[8:9], s[2:3], 0x0"), &mut w, &image, false);
        assert!(matches!(misaligned, Err(ExecFault::Unsupported { .. })), "{target}");
        // A scratch SGPR offset of 1..=3 is 0 or 64..=192 bytes depending on whether the
        // ignored low bits are cleared before or after the scaling: refused.
        for soffset in [1u32, 2, 3, 5] {
            let mut w = wave(0, 0);
            w.set_sgpr_pair(102, MEM);
            w.sgpr[9] = soffset;
            let ambiguous = run(&p("s_scratch_load_dword s8, s[2:3], s9"), &mut w, &image, false);
            assert!(matches!(ambiguous, Err(ExecFault::Unsupported { .. })), "{target}: scratch offset {soffset}");
        }
    }
}
