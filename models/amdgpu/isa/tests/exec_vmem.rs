//! Vector memory forms against references written here from the CDNA3/CDNA4 ISA guides:
//! typed buffer loads (MTBUF DATA_FORMAT/NUM_FORMAT conversions, `_d16`; every format
//! pair, stores and MUBUF descriptor formats in `exec_buffer_format.rs`), MUBUF 32-bit
//! offset wrap, loads into LDS (MUBUF `lds`, GLOBAL/SCRATCH `*_load_lds_*`),
//! `buffer_store_lds_dword`, the DS forms without a plain memory meaning (`ds_append`,
//! `ds_consume`, `ds_wrap_rtn_b32`, `ds_condxchg32_rtn_b64`, `ds_rsub*`, `addtid`, `_d16`,
//! `ds_bpermute_b32`, `ds_permute_b32`) and the GWS requests. Each program is assembled
//! once with llvm-mc and run on random register and memory contents.

mod common;

use amdgpu_isa::exec::{run_single_wave, ExecFault, GwsOp, GwsUnit, Memory, Program, VmemRequest, Wave, WaveStatus};
use amdgpu_isa::Target;
use proptest::prelude::*;

const BASE: u64 = 0x10_0000;
const DATA: u64 = 0x20_0000;
const LDS: usize = 64 * 1024;

/// A wave with EXEC all ones, `s[0:3]` a raw buffer resource over DATA (`num_records`
/// bytes, DATA_FORMAT 32 and NUM_FORMAT uint so it is bound, dst_sel X/Y/Z/W).
fn wave(num_records: u32) -> Wave {
    let mut w = Wave::new(BASE, 0x3f0);
    w.set_exec(u64::MAX);
    w.sgpr[0] = DATA as u32;
    w.sgpr[1] = (DATA >> 32) as u32;
    w.sgpr[2] = num_records;
    w.sgpr[3] = 4 | 5 << 3 | 6 << 6 | 7 << 9 | 4 << 12 | 4 << 15;
    w
}

fn program(target: Target, text: &str) -> Program {
    Program::from_words(target, BASE, &common::assemble(target, text))
}

fn run(program: &Program, w: &mut Wave, mem: &mut Memory, lds: &mut [u8]) -> Result<u64, ExecFault> {
    w.pc = BASE;
    w.status = WaveStatus::Running;
    run_single_wave(program, w, mem, lds, 10_000)
}

// ---------------------------------------------------------------- format conversions

/// Reference: an unsigned n-bit normalized value as f32 (`v / (2^n - 1)`, correctly
/// rounded: the quotient is computed in f64, exact enough for n <= 16 that the one
/// rounding to f32 is the correct one).
fn unorm(v: u32, n: u32) -> f32 {
    (v as f64 / ((1u64 << n) - 1) as f64) as f32
}

/// Reference: a signed n-bit normalized value (`max(v / (2^(n-1) - 1), -1)`).
fn snorm(v: u32, n: u32) -> f32 {
    let s = ((v << (32 - n)) as i32 >> (32 - n)) as f64;
    (s / ((1u64 << (n - 1)) - 1) as f64).max(-1.0) as f32
}

/// Reference: f16 bits to f32 (exact), written from the IEEE binary16 layout.
fn half_to_f32(h: u16) -> f32 {
    let sign = if h >> 15 != 0 { -1.0f64 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    let v = match exp {
        0 => man * 2f64.powi(-24),
        31 if man == 0.0 => f64::INFINITY,
        31 => return f32::from_bits(((h as u32 & 0x8000) << 16) | 0x7f80_0000 | ((h as u32 & 0x3ff) << 13)),
        e => (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    };
    (sign * v) as f32
}

/// The reference XYZW of one element of `data` in (dfmt, nfmt), 32-bit results.
fn reference_format(dfmt: u32, nfmt: u32, bytes: [u8; 16]) -> [u32; 4] {
    let word = |i: usize| u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    let (widths, packed): (&[u32], u32) = match dfmt {
        1 => (&[8], bytes[0] as u32),
        2 => (&[16], word(0) & 0xffff),
        3 => (&[8, 8], word(0) & 0xffff),
        5 => (&[16, 16], word(0)),
        10 => (&[8, 8, 8, 8], word(0)),
        _ => unreachable!("the test draws only these formats"),
    };
    let mut out = [0u32; 4];
    let mut shift = 0;
    for (c, &n) in widths.iter().enumerate() {
        let raw = (packed >> shift) & ((1u64 << n) - 1) as u32;
        shift += n;
        out[c] = match nfmt {
            0 => unorm(raw, n).to_bits(),
            1 => snorm(raw, n).to_bits(),
            2 => (raw as f32).to_bits(),
            3 => (((raw << (32 - n)) as i32 >> (32 - n)) as f32).to_bits(),
            4 => raw,
            5 => ((raw << (32 - n)) as i32 >> (32 - n)) as u32,
            7 => half_to_f32(raw as u16).to_bits(),
            _ => unreachable!(),
        };
    }
    out
}

/// The number formats the format table pairs with `dfmt` (float only with 16-bit channels).
fn nfmts(dfmt: u32) -> Vec<u32> {
    if matches!(dfmt, 2 | 5) {
        vec![0, 1, 2, 3, 4, 5, 7]
    } else {
        vec![0, 1, 2, 3, 4, 5]
    }
}

#[test]
fn tbuffer_loads_convert_every_paired_format_like_the_reference() {
    let target = Target::Gfx942;
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases: 16, ..ProptestConfig::default() });
    for dfmt in [1u32, 2, 3, 5, 10] {
        for nfmt in nfmts(dfmt) {
            // As many components as the format has channels.
            let comps = match dfmt {
                1 | 2 => "x v4",
                3 | 5 => "xy v[4:5]",
                _ => "xyzw v[4:7]",
            };
            let text = format!("tbuffer_load_format_{comps}, v0, s[0:3], dfmt:{dfmt}, nfmt:{nfmt}, 0 offen");
            let prog = program(target, &text);
            runner
                .run(&prop::collection::vec(any::<u32>(), 64), |words| {
                    let mut mem = Memory::new();
                    let mut w = wave(4096);
                    // Edge patterns in the first lanes: zero, all ones, sign bit only.
                    let mut words = words;
                    words[0] = 0;
                    words[1] = u32::MAX;
                    words[2] = 0x8080_8080;
                    words[3] = 0x7c00_fc00; // f16 +-Inf
                    words[4] = 0x7e01_0001; // f16 NaN, denormal
                    for (i, v) in words.iter().enumerate() {
                        mem.write_u32(DATA + 8 * i as u64, *v).expect("fill");
                        w.vgpr[0][i] = 8 * i as u32;
                    }
                    run(&prog, &mut w, &mut mem, &mut vec![0; LDS]).expect("runs");
                    let n = [1, 2, 3, 5, 10].iter().position(|&d| d == dfmt).map_or(4, |i| [1, 1, 2, 2, 4][i]);
                    for (lane, v) in words.iter().enumerate() {
                        let mut bytes = [0u8; 16];
                        bytes[..4].copy_from_slice(&v.to_le_bytes());
                        let want = reference_format(dfmt, nfmt, bytes);
                        let got = [w.vgpr[4][lane], w.vgpr[5][lane], w.vgpr[6][lane], w.vgpr[7][lane]];
                        prop_assert_eq!(&got[..n], &want[..n], "dfmt {} nfmt {} data {:#010x}", dfmt, nfmt, v);
                    }
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{text}: {e}"));
        }
    }
}

/// `_d16` format loads of 16-bit integer and float channels return the channel's 16 bits
/// packed two per register; `_d16_hi` fills the high half and keeps the low one.
#[test]
fn d16_format_loads_pack_halves() {
    for target in Target::ALL {
        let prog = program(
            target,
            "tbuffer_load_format_d16_xy v4, v0, s[0:3], dfmt:5, nfmt:4, 0 offen\n\
             tbuffer_load_format_d16_x v5, v0, s[0:3], dfmt:5, nfmt:7, 0 offen",
        );
        let mut mem = Memory::new();
        let mut w = wave(4096);
        for lane in 0..64u32 {
            mem.write_u32(DATA + 4 * lane as u64, 0x1234_0000 | lane).expect("fill");
            w.vgpr[0][lane as usize] = 4 * lane;
            w.vgpr[5][lane as usize] = 0xdead_beef;
        }
        run(&prog, &mut w, &mut mem, &mut vec![0; LDS]).unwrap_or_else(|e| panic!("{target}: {e}"));
        for lane in 0..64u32 {
            assert_eq!(w.vgpr[4][lane as usize], 0x1234_0000 | lane, "{target} lane {lane}");
            assert_eq!(w.vgpr[5][lane as usize], 0xdead_0000 | lane, "{target} lane {lane}: d16 keeps the high half");
        }
        let hi = program(target, "buffer_load_format_d16_hi_x v5, v0, s[0:3], 0 offen");
        // The resource's format: 16 uint.
        w.sgpr[3] = 4 | 5 << 3 | 6 << 6 | 7 << 9 | 4 << 12 | 2 << 15;
        run(&hi, &mut w, &mut mem, &mut vec![0; LDS]).unwrap_or_else(|e| panic!("{target}: {e}"));
        for lane in 0..64u32 {
            assert_eq!(w.vgpr[5][lane as usize], lane << 16 | lane, "{target} lane {lane}: d16_hi keeps the low half");
        }
    }
}

/// Reference: f32 to f16 bits, round to nearest even, from the binary16 layout (exponent
/// bias 15, 10 mantissa bits, denormals below 2^-14, overflow to infinity from 65520).
fn f32_to_half(x: f32) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs() as f64;
    if x.is_nan() {
        return 0x7e00;
    }
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 2f64.powi(-14) {
        // Denormal (or the smallest normal when it rounds up to 1024 units).
        return sign | (a / 2f64.powi(-24)).round_ties_even() as u16;
    }
    let mut e = a.log2().floor() as i32;
    // Guard against log2 rounding at exact powers of two.
    if 2f64.powi(e) > a {
        e -= 1;
    } else if 2f64.powi(e + 1) <= a {
        e += 1;
    }
    let mut m = ((a / 2f64.powi(e) - 1.0) * 1024.0).round_ties_even() as u32;
    if m == 1024 {
        m = 0;
        e += 1;
    }
    if e + 15 >= 31 {
        return sign | 0x7c00;
    }
    sign | ((e + 15) as u16) << 10 | m as u16
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A typed store to 16_16 FLOAT rounds each f32 component to f16 (nearest even);
    /// to 32_32 UINT it stores the registers as they are.
    #[test]
    fn tbuffer_float_stores_round_to_half(
        bits in prop::collection::vec(prop_oneof![
            any::<u32>(),
            Just(0x3380_0000u32), // 2^-24: the smallest f16 denormal
            Just(0x3300_0000),    // 2^-25: a tie that rounds to zero
            Just(0x477f_f000),    // 65520: rounds to infinity
            Just(0x477f_e000),    // 65504: f16 max
            Just(0x8000_0000),
            Just(0x7f80_0000),
            Just(0x3f80_1000),    // 1 + 2^-11: a tie that rounds to even
        ], 128),
    ) {
        let prog = tbuffer_store_program();
        let mut mem = Memory::new();
        mem.map(DATA, 4096).expect("map");
        let mut w = wave(4096);
        for lane in 0..64 {
            w.vgpr[0][lane] = 4 * lane as u32;
            w.vgpr[1][lane] = 0x800 + 8 * lane as u32;
            w.vgpr[2][lane] = bits[2 * lane];
            w.vgpr[3][lane] = bits[2 * lane + 1];
        }
        run(&prog, &mut w, &mut mem, &mut vec![0; LDS]).expect("runs");
        for lane in 0..64 {
            let got = mem.read_u32(DATA + 4 * lane as u64).expect("read");
            for k in 0..2 {
                let x = f32::from_bits(bits[2 * lane + k]);
                let h = (got >> (16 * k)) as u16;
                if x.is_nan() {
                    prop_assert!(h & 0x7c00 == 0x7c00 && h & 0x3ff != 0, "NaN stays NaN: {:#x}", h);
                } else {
                    prop_assert_eq!(h, f32_to_half(x), "lane {} comp {} x {:e}", lane, k, x);
                }
            }
            prop_assert_eq!(mem.read_u32(DATA + 0x800 + 8 * lane as u64).expect("read"), bits[2 * lane]);
            prop_assert_eq!(mem.read_u32(DATA + 0x804 + 8 * lane as u64).expect("read"), bits[2 * lane + 1]);
        }
    }
}

/// The program of `tbuffer_float_stores_round_to_half`, assembled once.
fn tbuffer_store_program() -> Program {
    use std::sync::OnceLock;
    static WORDS: OnceLock<Vec<u32>> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        common::assemble(
            Target::Gfx942,
            "tbuffer_store_format_xy v[2:3], v0, s[0:3], dfmt:5, nfmt:7, 0 offen\n\
             tbuffer_store_format_xy v[2:3], v1, s[0:3], dfmt:11, nfmt:4, 0 offen",
        )
    });
    Program::from_words(Target::Gfx942, BASE, words)
}

// ---------------------------------------------------------------- MUBUF addressing

/// The buffer offset `vgpr_offset + inst_offset` is a 32-bit sum: it wraps (v1 = -4 plus
/// offset:4 addresses byte 0 of the buffer), and is range-checked after the wrap.
#[test]
fn mubuf_offset_wraps_in_32_bits() {
    for target in Target::ALL {
        let prog = program(target, "buffer_load_dword v2, v1, s[0:3], 0 offen offset:4\n buffer_load_ubyte v3, v1, s[0:3], 0 offen offset:5");
        let mut mem = Memory::new();
        mem.write_u32(DATA, 0x4433_2211).expect("fill");
        let mut w = wave(16);
        w.vgpr[1] = [0xffff_fffc; 64];
        run(&prog, &mut w, &mut mem, &mut vec![0; LDS]).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(w.vgpr[2], [0x4433_2211; 64], "{target}: -4 + 4 wraps to 0");
        assert_eq!(w.vgpr[3], [0x22; 64], "{target}: -4 + 5 wraps to 1");
    }
}

// ---------------------------------------------------------------- loads into / stores from LDS

/// Reference for a load into LDS: lane l's dword lands at `M0 + inst_offset + 4 l`.
#[test]
fn loads_into_lds_write_m0_plus_offset_plus_lane() {
    for target in [Target::Gfx942, Target::Gfx950] {
        let prog = program(
            target,
            "s_mov_b32 m0, 0x100\n global_load_lds_dword v[2:3], off offset:8\n s_mov_b32 m0, 0x400\n global_load_lds_ubyte v[2:3], off",
        );
        let mut mem = Memory::new();
        let mut w = wave(0);
        for lane in 0..64u64 {
            mem.write_u32(DATA + 4 * lane, 0x8000_0080 + lane as u32).expect("fill");
        }
        mem.write_u32(DATA + 256, 0xaaaa_aaaa).expect("fill");
        mem.write_u32(DATA + 260, 0xbbbb_bbbb).expect("fill");
        for lane in 0..64 {
            let a = DATA + 4 * lane as u64;
            w.vgpr[2][lane] = a as u32;
            w.vgpr[3][lane] = (a >> 32) as u32;
        }
        let mut lds = vec![0u8; LDS];
        run(&prog, &mut w, &mut mem, &mut lds).unwrap_or_else(|e| panic!("{target}: {e}"));
        let at = |a: usize| u32::from_le_bytes([lds[a], lds[a + 1], lds[a + 2], lds[a + 3]]);
        for lane in 0..64 {
            let want = mem.read_u32(DATA + 4 * lane as u64 + 8).expect("read");
            assert_eq!(at(0x100 + 8 + 4 * lane), want, "{target} dword lane {lane}");
            assert_eq!(at(0x400 + 4 * lane), 0x80 + lane as u32, "{target} ubyte lane {lane} zero-extends");
        }
    }
}

/// MUBUF `lds` loads: lane l's element lands at `M0 + inst_offset + 4 l`; out-of-range
/// lanes write zero; bytes are sign- or zero-extended to a dword.
#[test]
fn mubuf_lds_loads_write_m0_plus_offset_plus_lane() {
    for target in Target::ALL {
        let prog = program(target, "s_mov_b32 m0, 0x300\n buffer_load_dword v1, s[0:3], 0 offen offset:4 lds\n s_mov_b32 m0, 0x600\n buffer_load_sbyte v1, s[0:3], 0 offen lds");
        let mut mem = Memory::new();
        let mut w = wave(4 * 40);
        for lane in 0..64u64 {
            mem.write_u32(DATA + 4 * lane, 0xc0 + lane as u32).expect("fill");
            w.vgpr[1][lane as usize] = 4 * lane as u32;
        }
        let mut lds = vec![0xffu8; LDS];
        run(&prog, &mut w, &mut mem, &mut lds).unwrap_or_else(|e| panic!("{target}: {e}"));
        for lane in 0..64usize {
            // Dword: buffer offset 4 l + 4 is in range while 4 l + 8 <= 160.
            let want = if 4 * lane + 8 <= 160 { 0xc1 + lane as u32 } else { 0 };
            assert_eq!(lds_u32(&lds, 0x304 + 4 * lane), want, "{target} dword lane {lane}");
            let byte = if 4 * lane < 160 { (0xc0 + lane as u32) as u8 as i8 as i32 as u32 } else { 0 };
            assert_eq!(lds_u32(&lds, 0x600 + 4 * lane), byte, "{target} sbyte lane {lane}");
        }
    }
}

#[test]
fn buffer_store_lds_dword_stores_lds_dwords_through_the_resource() {
    for target in [Target::Gfx90a, Target::Gfx942] {
        let prog = program(target, "s_mov_b32 m0, 0x200\n s_mov_b64 exec, 0x20\n buffer_store_lds_dword s[0:3], 0 offset:16 lds");
        let mut mem = Memory::new();
        mem.map(DATA, 4096).expect("map");
        let mut w = wave(20);
        let mut lds = vec![0u8; LDS];
        for lane in 0..64usize {
            lds[0x210 + 4 * lane..0x214 + 4 * lane].copy_from_slice(&(0x5000 + lane as u32).to_le_bytes());
        }
        run(&prog, &mut w, &mut mem, &mut lds).unwrap_or_else(|e| panic!("{target}: {e}"));
        // Lane 5 reads LDS M0 + 16 + 4 * 5 and stores at buffer offset 16.
        assert_eq!(mem.read_u32(DATA + 16).expect("read"), 0x5005, "{target}");
        // Out of range (16 + 4 > num_records 19): nothing is stored.
        let mut w = wave(19);
        mem.write_u32(DATA + 16, 0).expect("clear");
        run(&prog, &mut w, &mut mem, &mut lds).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(mem.read_u32(DATA + 16).expect("read"), 0, "{target}: out of range");
    }
}

// ---------------------------------------------------------------- DS

fn lds_u32(lds: &[u8], a: usize) -> u32 {
    u32::from_le_bytes([lds[a], lds[a + 1], lds[a + 2], lds[a + 3]])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// ds_wrap_rtn_b32 (`old >= d0 ? old - d0 : old + d1`), ds_condxchg32_rtn_b64 (each
    /// dword replaced by data with bit 31 cleared when data's bit 31 is set) and
    /// ds_rsub_rtn_u32 (`d0 - old`) against references; lanes use distinct addresses.
    #[test]
    fn ds_atomics_without_memory_counterparts(
        old in prop::collection::vec(any::<u32>(), 64),
        d0 in prop::collection::vec(prop_oneof![any::<u32>(), Just(0u32), Just(u32::MAX), Just(0x8000_0000)], 64),
        d1 in prop::collection::vec(any::<u32>(), 64),
        exec in any::<u64>(),
    ) {
        let target = Target::Gfx942;
        let prog = program_cached(target);
        let mut w = wave(0);
        w.set_exec(exec);
        let mut lds = vec![0u8; LDS];
        for lane in 0..64 {
            w.vgpr[0][lane] = 8 * lane as u32;
            w.vgpr[1][lane] = d0[lane];
            w.vgpr[2][lane] = d1[lane];
            w.vgpr[10][lane] = d0[lane];
            w.vgpr[11][lane] = d1[lane];
            lds[8 * lane..8 * lane + 4].copy_from_slice(&old[lane].to_le_bytes());
            lds[8 * lane + 4..8 * lane + 8].copy_from_slice(&d1[lane].to_le_bytes());
            lds[0x1000 + 8 * lane..0x1004 + 8 * lane].copy_from_slice(&old[lane].to_le_bytes());
            lds[0x2000 + 4 * lane..0x2004 + 4 * lane].copy_from_slice(&old[lane].to_le_bytes());
            w.vgpr[3][lane] = 0x1111;
        }
        run(&prog, &mut w, &mut Memory::new(), &mut lds).expect("runs");
        for lane in 0..64 {
            let active = (exec >> lane) & 1 != 0;
            let (o, a, b) = (old[lane], d0[lane], d1[lane]);
            let wrap = if o >= a { o - a } else { o.wrapping_add(b) };
            prop_assert_eq!(lds_u32(&lds, 8 * lane), if active { wrap } else { o });
            prop_assert_eq!(w.vgpr[3][lane], if active { o } else { 0x1111 });
            // condxchg over [0x1000 + 8 l] = (old, 0) with data (d0, d1).
            let cx = |mem: u32, data: u32| if data >> 31 != 0 { data & 0x7fff_ffff } else { mem };
            if active {
                prop_assert_eq!(lds_u32(&lds, 0x1000 + 8 * lane), cx(o, a));
                prop_assert_eq!(lds_u32(&lds, 0x1004 + 8 * lane), cx(0, b));
                prop_assert_eq!([w.vgpr[4][lane], w.vgpr[5][lane]], [o, 0]);
                prop_assert_eq!(lds_u32(&lds, 0x2000 + 4 * lane), a.wrapping_sub(o));
                prop_assert_eq!(w.vgpr[6][lane], o);
            }
        }
    }

    /// ds_bpermute_b32 (lane l reads lane `addr/4 mod 64`; an inactive source reads 0) and
    /// ds_permute_b32 (lane l writes lane `addr/4 mod 64`; the highest writer wins; active
    /// lanes nobody writes get 0).
    #[test]
    fn ds_permutes_match_the_reference(
        sel in prop::collection::vec(any::<u32>(), 64),
        src in prop::collection::vec(any::<u32>(), 64),
        exec in any::<u64>(),
    ) {
        let target = Target::Gfx90a;
        let prog = program(target, "ds_bpermute_b32 v2, v0, v1 offset:4\n ds_permute_b32 v3, v0, v1");
        let mut w = wave(0);
        w.set_exec(exec);
        for lane in 0..64 {
            w.vgpr[0][lane] = sel[lane];
            w.vgpr[1][lane] = src[lane];
            w.vgpr[2][lane] = 0x2222;
            w.vgpr[3][lane] = 0x3333;
        }
        run(&prog, &mut w, &mut Memory::new(), &mut vec![0; LDS]).expect("runs");
        let active = |l: usize| (exec >> l) & 1 != 0;
        let mut permuted = [None; 64];
        for lane in 0..64 {
            if active(lane) {
                permuted[((sel[lane] >> 2) & 63) as usize] = Some(src[lane]);
            }
        }
        for lane in 0..64 {
            let from = ((sel[lane].wrapping_add(4) >> 2) & 63) as usize;
            let bp = if active(from) { src[from] } else { 0 };
            prop_assert_eq!(w.vgpr[2][lane], if active(lane) { bp } else { 0x2222 });
            prop_assert_eq!(w.vgpr[3][lane], if active(lane) { permuted[lane].unwrap_or(0) } else { 0x3333 });
        }
    }
}

/// The program of `ds_atomics_without_memory_counterparts`, assembled once.
fn program_cached(target: Target) -> Program {
    use std::sync::OnceLock;
    static WORDS: OnceLock<Vec<u32>> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        common::assemble(
            target,
            "ds_wrap_rtn_b32 v3, v0, v1, v2\n\
             v_add_u32 v7, 0x1000, v0\n ds_condxchg32_rtn_b64 v[4:5], v7, v[10:11]\n\
             v_lshrrev_b32 v8, 1, v0\n v_add_u32 v8, 0x2000, v8\n ds_rsub_rtn_u32 v6, v8, v1",
        )
    });
    Program::from_words(target, BASE, words)
}

/// ds_append/ds_consume add (subtract) the number of active lanes to the dword at
/// `M0 + offset` and return the old value to every active lane; ds_read/write_addtid_b32
/// address `M0 + offset + 4 lane`; the d16 forms fill one half and keep the other.
#[test]
fn ds_counters_addtid_and_d16() {
    for target in Target::ALL {
        let prog = program(
            target,
            "s_mov_b32 m0, 0x100\n ds_append v1 offset:4\n s_mov_b64 exec, 0xff\n ds_consume v2 offset:4\n s_mov_b64 exec, -1\n\
             s_mov_b32 m0, 0x200\n ds_write_addtid_b32 v0 offset:8\n s_mov_b32 m0, 0x204\n ds_read_addtid_b32 v3 offset:4\n\
             v_mov_b32 v4, 0x11112222\n ds_read_u8_d16_hi v4, v5\n ds_read_i8_d16 v6, v5\n ds_write_b16_d16_hi v5, v4 offset:2",
        );
        let mut w = wave(0);
        let mut lds = vec![0u8; LDS];
        lds[0x104..0x108].copy_from_slice(&10u32.to_le_bytes());
        lds[0x800] = 0x85;
        for lane in 0..64 {
            w.vgpr[0][lane] = 0x9000 + lane as u32;
            w.vgpr[5][lane] = 0x800;
            w.vgpr[6][lane] = 0xabcd_0000;
        }
        run(&prog, &mut w, &mut Memory::new(), &mut lds).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(w.vgpr[1], [10; 64], "{target} append returns the old counter");
        assert_eq!(&w.vgpr[2][..8], &[74; 8], "{target} consume returns 10 + 64");
        assert_eq!(lds_u32(&lds, 0x104), 74 - 8, "{target} counter");
        for lane in 0..64 {
            assert_eq!(lds_u32(&lds, 0x208 + 4 * lane), 0x9000 + lane as u32, "{target} addtid write");
            assert_eq!(w.vgpr[3][lane], 0x9000 + lane as u32, "{target} addtid read");
            assert_eq!(w.vgpr[4][lane], 0x0085_2222, "{target} u8_d16_hi");
            assert_eq!(w.vgpr[6][lane], 0xabcd_ff85, "{target} i8_d16 sign-extends to 16 bits");
        }
        assert_eq!([lds[0x802], lds[0x803]], [0x85, 0x00], "{target} b16_d16_hi stores the high half");
    }
}

// ---------------------------------------------------------------- GWS

#[test]
fn gws_semaphores_and_barrier_on_a_lone_wave() {
    for target in Target::ALL {
        let prog = program(
            target,
            "v_mov_b32 v0, 1\n s_mov_b32 m0, 0\n ds_gws_init v0 offset:3 gds\n ds_gws_sema_p offset:3 gds\n\
             ds_gws_sema_v offset:3 gds\n ds_gws_sema_p offset:3 gds\n v_mov_b32 v2, 0\n ds_gws_barrier v2 gds",
        );
        let mut w = wave(0);
        run(&prog, &mut w, &mut Memory::new(), &mut vec![0; LDS]).unwrap_or_else(|e| panic!("{target}: {e}"));
        // A third sema_p finds the count at zero: nothing can release it.
        let stuck = program(target, "v_mov_b32 v0, 0\n ds_gws_init v0 gds\n ds_gws_sema_p gds");
        let mut w = wave(0);
        let fault = run(&stuck, &mut w, &mut Memory::new(), &mut vec![0; LDS]).expect_err("waits forever");
        assert!(matches!(&fault, ExecFault::Hang { reason, .. } if reason.contains("ds_gws_sema_p")), "{target}: {fault}");
    }
}

/// A GWS request's resource is `(M0[21:16] + offset) mod 64` and its value data0 of the
/// first active lane.
#[test]
fn gws_request_names_resource_and_value() {
    let prog = program(Target::Gfx942, "s_mov_b32 m0, 0x3e0000\n s_mov_b64 exec, 0xf0\n ds_gws_barrier v0 offset:5 gds");
    let mut w = wave(0);
    w.vgpr[0] = std::array::from_fn(|l| 100 + l as u32);
    w.pc = BASE;
    let mut mem = Memory::new();
    let mut lds = vec![0u8; LDS];
    let mut env = amdgpu_isa::exec::StepEnv { mem: &mut mem, lds: &mut lds, clock: 0, realtime: 0, counts: None };
    amdgpu_isa::exec::step(&mut w, &prog, &mut env, 100).expect("steps");
    assert_eq!(w.status, WaveStatus::WaitMemory);
    let req: VmemRequest = *w.take_request().expect("a request");
    assert_eq!(req.kind, amdgpu_isa::exec::AccessKind::Gws { op: GwsOp::Barrier, resource: 3, value: 104 });
    // Memory cannot perform it: a clear fault for devices without a GWS unit.
    let err = req.perform(&mut Memory::new()).expect_err("not a memory access");
    assert_eq!(err.kind, amdgpu_isa::exec::MemFaultKind::GwsRequest);
}

/// The unit: a barrier of value 2 releases the third arrival's group; sema_p waits for
/// sema_v / sema_br; release_all frees every waiter.
#[test]
fn gws_unit_orders_barriers_and_semaphores() {
    let req = |op, resource, value| {
        let kind = amdgpu_isa::exec::AccessKind::Gws { op, resource, value };
        VmemRequest { kind, ..template_request() }
    };
    let mut unit = GwsUnit::new();
    assert!(unit.submit(1, &req(GwsOp::Barrier, 7, 2)).is_empty());
    assert!(unit.submit(2, &req(GwsOp::Barrier, 7, 2)).is_empty());
    assert_eq!(unit.submit(3, &req(GwsOp::Barrier, 7, 2)), vec![1, 2, 3]);
    assert_eq!(unit.submit(4, &req(GwsOp::Init, 0, 0)), vec![4]);
    assert!(unit.submit(5, &req(GwsOp::SemaP, 0, 0)).is_empty());
    assert!(unit.submit(6, &req(GwsOp::SemaP, 0, 0)).is_empty());
    assert_eq!(unit.submit(7, &req(GwsOp::SemaV, 0, 0)), vec![7, 5]);
    assert_eq!(unit.submit(8, &req(GwsOp::SemaReleaseAll, 0, 0)), vec![6, 8]);
    assert_eq!(unit.submit(9, &req(GwsOp::SemaBr, 0, 2)), vec![9]);
    assert_eq!(unit.submit(10, &req(GwsOp::SemaP, 0, 0)), vec![10]);
    assert_eq!(unit.waiting(), 0);
    // Withdrawn waves no longer count towards a barrier.
    assert!(unit.submit(11, &req(GwsOp::Barrier, 3, 1)).is_empty());
    assert!(unit.submit(12, &req(GwsOp::SemaP, 4, 0)).is_empty());
    assert_eq!(unit.cancel(|t| t >= 11), vec![11, 12]);
    assert_eq!(unit.waiting(), 0);
    assert!(unit.submit(13, &req(GwsOp::Barrier, 3, 1)).is_empty());
    assert_eq!(unit.submit(14, &req(GwsOp::Barrier, 3, 1)), vec![13, 14]);
}

/// A GWS request as the executor parks it, for the unit tests to fill in.
fn template_request() -> VmemRequest {
    let prog = program(Target::Gfx90a, "ds_gws_sema_v gds");
    let mut w = wave(0);
    let mut mem = Memory::new();
    let mut lds = vec![0u8; LDS];
    let mut env = amdgpu_isa::exec::StepEnv { mem: &mut mem, lds: &mut lds, clock: 0, realtime: 0, counts: None };
    amdgpu_isa::exec::step(&mut w, &prog, &mut env, 100).expect("steps");
    *w.take_request().expect("a request")
}
