//! The four 8-bit float formats: exhaustive decode tables, special values, round-to-nearest
//! -even against a brute-force nearest search, overflow policies, stochastic rounding and
//! the gfx950 scaled conversions.

use amdgpu_isa::numeric::fp8::{self, Fp8Format};
use amdgpu_isa::numeric::RoundMode;
use proptest::prelude::*;

const ALL: [Fp8Format; 4] = Fp8Format::ALL;

#[test]
fn decode_tables_match_generic_decoder_for_all_256_codes() {
    for fmt in ALL {
        for code in 0..=255u8 {
            let table = fmt.to_f32(code);
            let generic = fp8::decode_generic(fmt, code);
            if fmt.is_nan(code) {
                assert!(table.is_nan() && generic.is_nan(), "{fmt:?} {code:#04x}");
            } else {
                assert_eq!(table.to_bits(), generic.to_bits(), "{fmt:?} {code:#04x}");
            }
        }
    }
}

#[test]
fn special_values_table() {
    use Fp8Format::*;
    // (format, code, expected value; NaN written as f32::NAN)
    let cases: &[(Fp8Format, u8, f32)] = &[
        (E4M3Fnuz, 0x00, 0.0),
        (E4M3Fnuz, 0x80, f32::NAN),
        (E4M3Fnuz, 0x7f, 240.0),
        (E4M3Fnuz, 0xff, -240.0),
        (E4M3Fnuz, 0x08, 2f32.powi(-7)), // min normal
        (E4M3Fnuz, 0x01, 2f32.powi(-10)), // min subnormal
        (E4M3Fnuz, 0x40, 1.0),
        (E5M2Fnuz, 0x80, f32::NAN),
        (E5M2Fnuz, 0x7f, 57344.0),
        (E5M2Fnuz, 0x7c, 32768.0), // no Inf in FNUZ: all-ones exponent is finite
        (E5M2Fnuz, 0x01, 2f32.powi(-17)),
        (E5M2Fnuz, 0x40, 1.0),
        (E4M3Fn, 0x7e, 448.0),
        (E4M3Fn, 0x7f, f32::NAN),
        (E4M3Fn, 0xff, f32::NAN),
        (E4M3Fn, 0x78, 256.0), // top exponent code still finite
        (E4M3Fn, 0x80, -0.0),
        (E4M3Fn, 0x01, 2f32.powi(-9)),
        (E4M3Fn, 0x38, 1.0),
        (E5M2, 0x7b, 57344.0),
        (E5M2, 0x7c, f32::INFINITY),
        (E5M2, 0xfc, f32::NEG_INFINITY),
        (E5M2, 0x7d, f32::NAN),
        (E5M2, 0x7e, f32::NAN),
        (E5M2, 0x7f, f32::NAN),
        (E5M2, 0x01, 2f32.powi(-16)),
        (E5M2, 0x3c, 1.0),
    ];
    for &(fmt, code, expected) in cases {
        let got = fmt.to_f32(code);
        if expected.is_nan() {
            assert!(got.is_nan(), "{fmt:?} {code:#04x} -> {got}");
        } else {
            assert_eq!(got.to_bits(), expected.to_bits(), "{fmt:?} {code:#04x}");
        }
    }
    assert_eq!(E4M3Fnuz.max_finite(), 240.0);
    assert_eq!(E5M2Fnuz.max_finite(), 57344.0);
    assert_eq!(E4M3Fn.max_finite(), 448.0);
    assert_eq!(E5M2.max_finite(), 57344.0);
    // Exactly one NaN code in FNUZ, two (+-) in E4M3FN, six in E5M2.
    let nan_count = |fmt: Fp8Format| (0..=255u8).filter(|&c| fmt.is_nan(c)).count();
    assert_eq!(nan_count(E4M3Fnuz), 1);
    assert_eq!(nan_count(E5M2Fnuz), 1);
    assert_eq!(nan_count(E4M3Fn), 2);
    assert_eq!(nan_count(E5M2), 6);
}

#[test]
fn every_finite_code_round_trips_in_every_policy() {
    for fmt in ALL {
        for code in 0..=255u8 {
            let v = fmt.to_f32(code);
            if v.is_nan() || v.is_infinite() {
                continue;
            }
            for saturate in [false, true] {
                assert_eq!(fmt.from_f32(v, saturate), code, "{fmt:?} {code:#04x}");
                assert_eq!(fmt.from_f32_sr(v, 0xdead_beef, saturate), code);
                for rm in RoundMode::ALL {
                    assert_eq!(fmt.from_f64(v as f64, rm, saturate), code);
                }
            }
        }
    }
}

/// Brute-force round-to-nearest-even: the finite code nearest to `x`, ties to the code with
/// an even mantissa LSB; None when `x` lies beyond max + half an ulp.
fn brute_rne(fmt: Fp8Format, x: f64) -> Option<u8> {
    let mut best: Option<(f64, u8)> = None;
    for code in 0..=255u8 {
        let v = fmt.to_f32(code) as f64;
        if !v.is_finite() || (v == 0.0 && code == 0x80) {
            continue;
        }
        if v.is_sign_negative() != x.is_sign_negative() && v != 0.0 {
            continue;
        }
        let d = (v - x).abs();
        best = match best {
            None => Some((d, code)),
            Some((bd, bc)) => {
                if d < bd || (d == bd && code & 1 == 0 && bc & 1 == 1) {
                    Some((d, code))
                } else {
                    Some((bd, bc))
                }
            }
        };
    }
    let (d, code) = best.expect("at least zero is representable");
    let max = fmt.max_finite() as f64;
    // Beyond the largest finite value by half an ulp or more (ties at the boundary go away
    // from the odd max code) the IEEE rule overflows.
    let ulp_at_max = max - fmt.to_f32(fmt.format().max_finite_bits() as u8 - 1) as f64;
    if x.abs() > max + ulp_at_max / 2.0 || (x.abs() == max + ulp_at_max / 2.0 && code & 1 == 1) {
        return None;
    }
    let _ = d;
    Some(code)
}

fn sign_fixup(fmt: Fp8Format, x: f64, code: u8) -> u8 {
    // Zero results keep the sign except in FNUZ.
    let fnuz = matches!(fmt, Fp8Format::E4M3Fnuz | Fp8Format::E5M2Fnuz);
    if code & 0x7f == 0 {
        if x.is_sign_negative() && !fnuz {
            0x80
        } else {
            0
        }
    } else {
        code
    }
}

#[test]
fn overflow_and_special_input_policies() {
    use Fp8Format::*;
    for saturate in [false, true] {
        // NaN inputs
        assert_eq!(E4M3Fnuz.from_f32(f32::NAN, saturate), 0x80);
        assert_eq!(E5M2Fnuz.from_f32(-f32::NAN, saturate), 0x80);
        assert_eq!(E4M3Fn.from_f32(f32::NAN, saturate), 0x7f);
        assert_eq!(E4M3Fn.from_f32(-f32::NAN, saturate), 0xff);
        assert!(E5M2.is_nan(E5M2.from_f32(f32::NAN, saturate)));
        // Infinite inputs: FNUZ gives NaN in both policies; the OCP formats follow the
        // CDNA4 FP16_OVFL table (section 7.3): the signed maximum when saturating, else NaN
        // (E4M3FN) or Inf (E5M2).
        assert_eq!(E4M3Fnuz.from_f32(f32::INFINITY, saturate), 0x80);
        assert_eq!(E4M3Fn.from_f32(f32::NEG_INFINITY, saturate), if saturate { 0xfe } else { 0xff });
        assert_eq!(E5M2.from_f32(f32::INFINITY, saturate), if saturate { 0x7b } else { 0x7c });
        assert_eq!(E5M2.from_f32(f32::NEG_INFINITY, saturate), if saturate { 0xfb } else { 0xfc });
        // Negative zero
        assert_eq!(E4M3Fnuz.from_f32(-0.0, saturate), 0x00);
        assert_eq!(E4M3Fn.from_f32(-0.0, saturate), 0x80);
        assert_eq!(E5M2Fnuz.from_f32(-1e-30, saturate), 0x00);
        assert_eq!(E5M2.from_f32(-1e-30, saturate), 0x80);
    }
    // Finite overflow
    assert_eq!(E4M3Fnuz.from_f32(1000.0, false), 0x80);
    assert_eq!(E4M3Fnuz.from_f32(1000.0, true), 0x7f);
    assert_eq!(E4M3Fnuz.from_f32(-1000.0, true), 0xff);
    assert_eq!(E4M3Fn.from_f32(1000.0, false), 0x7f);
    assert_eq!(E4M3Fn.from_f32(1000.0, true), 0x7e);
    assert_eq!(E5M2.from_f32(1e6, false), 0x7c);
    assert_eq!(E5M2.from_f32(-1e6, true), 0xfb);
    assert_eq!(E5M2Fnuz.from_f32(1e6, false), 0x80);
    assert_eq!(E5M2Fnuz.from_f32(1e6, true), 0x7f);
    // Boundary: 464 is the midpoint between 448 (0x7e) and the NaN code; ties to even (0x7e).
    assert_eq!(E4M3Fn.from_f32(464.0, false), 0x7e);
    assert_eq!(E4M3Fn.from_f32(464.01, false), 0x7f);
    // 240 + 8 = 248 is the FNUZ midpoint above max: ties to even would pick 256 -> overflow.
    assert_eq!(E4M3Fnuz.from_f32(247.9, false), 0x7f);
    assert_eq!(E4M3Fnuz.from_f32(248.0, false), 0x80);
    assert_eq!(E4M3Fnuz.from_f32(248.0, true), 0x7f);
    // Mode-aware forms: input denormals flushed per MODE, FP16_OVFL selects saturation.
    use amdgpu_isa::numeric::{DenormMode, Mode};
    let sat_flush = Mode { fp16_ovfl: true, denorm_f32: DenormMode::FlushInFlushOut, ..Mode::default() };
    assert_eq!(E4M3Fn.from_f32_mode(1000.0, sat_flush), 0x7e);
    assert_eq!(E4M3Fn.from_f32_mode(1000.0, Mode::default()), 0x7f);
    assert_eq!(E5M2.from_f32_mode(-f32::from_bits(1), sat_flush), 0x80);
    assert_eq!(E5M2Fnuz.from_f32_sr_mode(1e6, 0, sat_flush), 0x7f);
    // Whole-lane instruction helpers.
    let m = Mode::default();
    assert_eq!(fp8::v_cvt_pk_f8_f32(E4M3Fn, 0xdead_beef, 1.0, -2.0, false, m), 0xdead_c038);
    assert_eq!(fp8::v_cvt_pk_f8_f32(E4M3Fn, 0xdead_beef, 1.0, -2.0, true, m), 0xc038_beef);
    assert_eq!(fp8::v_cvt_sr_f8_f32(E4M3Fnuz, 0x1111_1111, 1.0, 0, 3, m), 0x4011_1111);
    assert_eq!(fp8::v_cvt_pk_f32_f8(E5M2, 0x3c00_c000, true), [0.0, 1.0]);
    assert_eq!(fp8::v_cvt_pk_f32_f8(E5M2, 0x3c00_c03c, false), [1.0, -2.0]);
    // Packing helpers and destination selects.
    let word = fp8::cvt_pk_to_fp8(E4M3Fn, 1.0, -2.0, false);
    assert_eq!(word, 0x38 | (0xc0 << 8));
    assert_eq!(fp8::cvt_pk_from_fp8(E4M3Fn, word), [1.0, -2.0]);
    assert_eq!(fp8::insert_word(0xaaaa_bbbb, 0x1234, true), 0x1234_bbbb);
    assert_eq!(fp8::insert_word(0xaaaa_bbbb, 0x1234, false), 0xaaaa_1234);
    assert_eq!(fp8::insert_byte(0x1122_3344, 0xee, 2), 0x11ee_3344);
}

#[test]
fn stochastic_rounding_brackets_and_is_unbiased() {
    for fmt in ALL {
        // 1 + a quarter of an ulp.
        let one = fmt.to_f32(fmt.from_f32(1.0, false));
        let next = fmt.to_f32(fmt.from_f32(1.0, false) + 1);
        let ulp = (next - one) as f64;
        let x = 1.0 + ulp * 0.25;
        assert_eq!(fmt.from_f64_sr(x, 0, false), fmt.from_f32(1.0, false));
        assert_eq!(fmt.from_f64_sr(x, u32::MAX, false), fmt.from_f32(1.0, false) + 1);
        // Threshold: rounds up exactly when random/2^32 >= 0.75.
        assert_eq!(fmt.from_f64_sr(x, 0xbfff_ffff, false), fmt.from_f32(1.0, false));
        assert_eq!(fmt.from_f64_sr(x, 0xc000_0000, false), fmt.from_f32(1.0, false) + 1);
        // Mean over a uniform sweep of random values equals x.
        let n = 4096u32;
        let mean: f64 = (0..n)
            .map(|i| fmt.to_f32(fmt.from_f64_sr(x, (i << 20) | (i.wrapping_mul(7919) & 0xf_ffff), false)) as f64)
            .sum::<f64>()
            / n as f64;
        assert!((mean - x).abs() < ulp * 0.02, "{fmt:?} mean {mean} x {x}");
        // Negative values round in magnitude.
        assert_eq!(fmt.from_f64_sr(-x, u32::MAX, false), fmt.from_f32(-1.0, false) + 1);
    }
    // Overflow through stochastic rounding follows the saturation policy.
    assert_eq!(Fp8Format::E4M3Fnuz.from_f32_sr(245.0, u32::MAX, false), 0x80);
    assert_eq!(Fp8Format::E4M3Fnuz.from_f32_sr(245.0, u32::MAX, true), 0x7f);
    assert_eq!(Fp8Format::E4M3Fnuz.from_f32_sr(245.0, 0, false), 0x7f);
}

#[test]
fn scaled_conversions_apply_the_e8m0_exponent() {
    let fmt = Fp8Format::E4M3Fn;
    let scale_4 = 4.0f32; // exponent field 129 -> 2^2
    assert_eq!(fmt.from_f32_scaled(8.0, scale_4, false), fmt.from_f32(2.0, false));
    assert_eq!(fmt.to_f32_scaled(fmt.from_f32(2.0, false), scale_4), 8.0);
    // The scale's mantissa is ignored: only the exponent field counts.
    assert_eq!(fmt.to_f32_scaled(0x38, 7.5), 4.0);
    // Scale values below 1 and the E8M0 NaN code.
    assert_eq!(fmt.to_f32_scaled(0x38, 0.125), 0.125);
    assert!(fmt.to_f32_scaled(0x38, f32::INFINITY).is_nan());
    assert!(fmt.is_nan(fmt.from_f32_scaled(1.0, f32::NAN, true)));
    // Large values that overflow unscaled fit after scaling down.
    assert_eq!(fmt.from_f32_scaled(448.0 * 1024.0, 1024.0, false), 0x7e);
    // f16/bf16 sources and destinations.
    assert_eq!(fmt.from_f16_scaled(0x4800, scale_4, false), fmt.from_f32(2.0, false)); // 8.0
    assert_eq!(fmt.from_bf16_scaled(0x4100, scale_4, false), fmt.from_f32(2.0, false)); // 8.0
    assert_eq!(fmt.to_f16_scaled(0x7e, 1024.0), 0x7c00); // 448 * 1024 overflows f16
    assert_eq!(fmt.to_f16_scaled(0x38, 0.5), 0x3800);
    assert_eq!(fmt.to_bf16_scaled(0x7e, 1024.0), 0x48e0); // 458752 in bf16
    assert_eq!(fmt.to_f16_scaled(0x38, f32::NAN), 0x7e00);
    assert_eq!(
        Fp8Format::E5M2.from_f32_scaled_sr(3.0 * 65536.0, 0, 65536.0, false),
        Fp8Format::E5M2.from_f32(3.0, false)
    );
}

#[test]
fn fast_f32_path_equals_generic_rounding_over_a_dense_sweep() {
    for fmt in ALL {
        for saturate in [false, true] {
            // Every 1031st f32 bit pattern: ~4.2M values covering all exponents and signs.
            for i in 0..=(u32::MAX / 1031) {
                let x = f32::from_bits(i.wrapping_mul(1031));
                let fast = fmt.from_f32(x, saturate);
                let generic = fmt.from_f64(x as f64, RoundMode::NearestEven, saturate);
                if fast != generic {
                    panic!("{fmt:?} sat={saturate} x={x:e} ({:#010x}): {fast:#04x} vs {generic:#04x}", x.to_bits());
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn fast_f32_path_equals_generic_rounding(bits in any::<u32>(), which in 0usize..4, saturate in any::<bool>()) {
        let fmt = ALL[which];
        let x = f32::from_bits(bits);
        prop_assert_eq!(fmt.from_f32(x, saturate), fmt.from_f64(x as f64, RoundMode::NearestEven, saturate));
    }

    #[test]
    fn rne_matches_brute_force_nearest(bits in any::<u32>(), which in 0usize..4) {
        let fmt = ALL[which];
        // Map the random bits into the interesting range of the format.
        let x = f32::from_bits((bits & 0x807f_ffff) | ((100 + (bits >> 23) % 50) << 23));
        let x = x as f64;
        let got = fmt.from_f64(x, RoundMode::NearestEven, false);
        match brute_rne(fmt, x) {
            Some(code) => prop_assert_eq!(got, sign_fixup(fmt, x, code), "{:?} x={}", fmt, x),
            None => prop_assert!(fmt.is_nan(got) || fmt.to_f32(got).is_infinite(), "{:?} x={} got {:#04x}", fmt, x, got),
        }
        // The saturating policy agrees except that overflow gives the signed max.
        let sat = fmt.from_f64(x, RoundMode::NearestEven, true);
        if brute_rne(fmt, x).is_some() {
            prop_assert_eq!(sat, got);
        } else {
            prop_assert_eq!(fmt.to_f32(sat).abs(), fmt.max_finite());
        }
    }

    #[test]
    fn stochastic_result_is_one_of_the_two_neighbours(bits in any::<u32>(), random in any::<u32>(), which in 0usize..4) {
        let fmt = ALL[which];
        let x = f32::from_bits((bits & 0x807f_ffff) | ((110 + (bits >> 23) % 30) << 23));
        let down = fmt.from_f64(x as f64, RoundMode::TowardZero, true);
        let got = fmt.from_f32_sr(x, random, true);
        let lo = fmt.to_f32(down).abs();
        let v = fmt.to_f32(got).abs();
        prop_assert!(v == lo || (v > lo && v >= x.abs().min(fmt.max_finite())), "x={} down={} got={}", x, lo, v);
        if fmt.to_f32(down) as f64 == x as f64 {
            prop_assert_eq!(got, down);
        }
    }
}
