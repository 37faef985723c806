//! The integer and byte conversions of every target (`v_cvt_f32_ubyte{1,2,3}`,
//! `v_cvt_off_f32_i4`, `v_cvt_{flr,rpi}_i32_f32`, `v_cvt_f16_{u16,i16}`,
//! `v_cvt_{u16,i16}_f16`) run as llvm-mc-assembled instructions against a reference written
//! here from the CDNA3/CDNA4 pseudocode: integer results truncate and saturate with NaN -> 0,
//! f16 results round to nearest even (the `half` crate) and FP16_OVFL turns a finite
//! overflow into the largest finite f16.


// Lane loops index several lane arrays in lockstep on purpose.
#![allow(clippy::needless_range_loop)]
mod common;

use amdgpu_isa::exec::{run_single_wave, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use half::f16;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const BASE: u64 = 0x10_0000;
const LANES: usize = 64;

/// f32 bit patterns biased to specials, halves, and the i32 range's ends.
fn f32_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => any::<u32>(),
        1 => prop::sample::select(vec![0x7fc0_0000u32, 0x7f80_0000, 0xff80_0000, 0x8000_0000, 0x0000_0001, 0x8000_0001, 0x4f00_0000, 0xcf00_0000, 0xcf00_0001, 0x3f00_0000, 0xbf00_0000, 0x3eff_ffff, 0x4b00_0001]),
        3 => (any::<bool>(), 120u32..160, any::<u32>()).prop_map(|(s, e, m)| (s as u32) << 31 | e << 23 | (m & 0x7f_ffff)),
    ]
}

/// Two 16-bit halves: f16 specials and values near the 16-bit integer ranges, or any bits.
fn pair_bits() -> impl Strategy<Value = u32> {
    let half = prop_oneof![
        2 => any::<u16>(),
        1 => prop::sample::select(vec![0x7e00u16, 0x7c00, 0xfc00, 0x8001, 0x7bff, 0xfbff, 0x7800, 0xf800, 0x77ff, 0xffff, 0x8000]),
    ];
    (half.clone(), half).prop_map(|(a, b)| a as u32 | (b as u32) << 16)
}

/// Truncation toward zero, saturating to [lo, hi]; NaN -> 0.
fn to_int(x: f64, lo: f64, hi: f64) -> i64 {
    if x.is_nan() {
        0
    } else {
        x.trunc().clamp(lo, hi) as i64
    }
}

fn f16_from(x: f32, saturate: bool) -> u32 {
    let h = f16::from_f32(x);
    if saturate && h.is_infinite() && x.is_finite() {
        (h.to_bits() & 0x8000 | 0x7bff) as u32
    } else {
        h.to_bits() as u32
    }
}

#[test]
fn integer_and_byte_conversions_match_the_reference() {
    let text = "v_cvt_f32_ubyte1 v10, v1\n\
                v_cvt_f32_ubyte2_e64 v11, v1\n\
                v_cvt_f32_ubyte3 v12, v1\n\
                v_cvt_off_f32_i4 v13, v1\n\
                v_cvt_flr_i32_f32 v14, v2\n\
                v_cvt_rpi_i32_f32_e64 v15, -v2\n\
                v_cvt_f16_u16 v16, v1\n\
                v_cvt_f16_i16_sdwa v17, v1 src0_sel:WORD_1\n\
                v_cvt_u16_f16 v18, v3\n\
                v_cvt_i16_f16_sdwa v19, v3 src0_sel:WORD_1\n\
                v_cvt_i16_f16_e64 v20, -|v3|";
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let program = Program::from_words(target, BASE, &common::assemble(target, text));
        let lanes = |s: BoxedStrategy<u32>| prop::collection::vec(s, LANES);
        let strategy = (prop::sample::select(vec![0x3f0u32, 0x3f0 | 1 << 23]), lanes(any::<u32>().boxed()), lanes(f32_bits().boxed()), lanes(pair_bits().boxed()));
        let mut runner = TestRunner::new(Config { cases: 48, failure_persistence: None, ..Config::default() });
        runner
            .run(&strategy, |(mode, ints, floats, halves)| {
                let mut w = Wave::new(BASE, mode);
                w.vgpr[1].copy_from_slice(&ints);
                w.vgpr[2].copy_from_slice(&floats);
                w.vgpr[3].copy_from_slice(&halves);
                w.pc = BASE;
                w.status = WaveStatus::Running;
                run_single_wave(&program, &mut w, &mut Memory::new(), &mut [0u8; 256], 100).unwrap_or_else(|e| panic!("{target}: {e}"));
                let sat = mode & 1 << 23 != 0;
                const OFFSETS: [f32; 16] = [0.0, 0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375, -0.5, -0.4375, -0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625];
                for i in 0..LANES {
                    let (n, x, h) = (ints[i], f32::from_bits(floats[i]), halves[i]);
                    let lo16 = f16::from_bits(h as u16).to_f64();
                    let hi16 = f16::from_bits((h >> 16) as u16).to_f64();
                    let want = [
                        (10, (((n >> 8) & 0xff) as f32).to_bits()),
                        (11, (((n >> 16) & 0xff) as f32).to_bits()),
                        (12, ((n >> 24) as f32).to_bits()),
                        (13, OFFSETS[(n & 15) as usize].to_bits()),
                        (14, to_int((x as f64).floor(), i32::MIN as f64, i32::MAX as f64) as u32),
                        (15, to_int(((-x) + 0.5f32).floor() as f64, i32::MIN as f64, i32::MAX as f64) as u32),
                        (16, f16_from((n & 0xffff) as f32, sat)),
                        (17, f16_from((n >> 16) as u16 as i16 as f32, sat)),
                        (18, to_int(lo16, 0.0, 65535.0) as u32),
                        (19, to_int(hi16, -32768.0, 32767.0) as u16 as u32),
                        (20, to_int(-lo16.abs(), -32768.0, 32767.0) as u16 as u32),
                    ];
                    for (reg, v) in want {
                        prop_assert_eq!(w.vgpr[reg][i], v, "{} v{} lane {}: inputs {:#x} {:#x} {:#x} mode {:#x}", target, reg, i, n, floats[i], h, mode);
                    }
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{target}: {e}"));
    }
}
