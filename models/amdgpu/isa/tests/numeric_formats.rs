//! f16/bf16/f32/f64 conversions and the MODE register model.

use amdgpu_isa::numeric::convert::*;
use amdgpu_isa::numeric::mode::{flush_f32, DenormMode, Mode};
use amdgpu_isa::numeric::RoundMode;
use proptest::prelude::*;

/// Successor/predecessor of a finite non-NaN f16 encoding in value order.
fn f16_next_up(h: u16) -> u16 {
    if h == 0x8000 {
        return 0x0001;
    }
    if h & 0x8000 != 0 {
        h - 1
    } else {
        h + 1
    }
}

fn f16_val(h: u16) -> f64 {
    f16_to_f64(h)
}

/// Checks `h` is the correct rounding of `x` in `rm` by bracketing with neighbours.
fn check_f16_rounding(x: f64, h: u16, rm: RoundMode) {
    let v = f16_val(h);
    assert!(!v.is_nan(), "x={x} gave NaN {h:#06x}");
    if x == 0.0 {
        assert_eq!(v, 0.0);
        return;
    }
    match rm {
        RoundMode::TowardPositive => {
            assert!(v >= x, "RU x={x} got {v}");
            if v.is_finite() && v != -65504.0 {
                // the next lower representable must be below x
                let lower = f16_val(if h & 0x8000 != 0 { h + 1 } else if h == 0 { 0x8001 } else { h - 1 });
                assert!(lower < x, "RU x={x} got {v} but {lower} also >= x");
            }
        }
        RoundMode::TowardNegative => {
            assert!(v <= x, "RD x={x} got {v}");
            if v.is_finite() && v != 65504.0 {
                let upper = f16_val(f16_next_up(h));
                assert!(upper > x, "RD x={x} got {v} but {upper} also <= x");
            }
        }
        RoundMode::TowardZero => {
            assert!(v.abs() <= x.abs(), "RZ x={x} got {v}");
            let away = f16_val(if h & 0x7fff == 0x7bff { h } else { h + 1 });
            if h & 0x7fff != 0x7bff {
                assert!(away.abs() > x.abs(), "RZ x={x} got {v} but {away} fits");
            }
        }
        RoundMode::NearestEven => {
            let hm = half::f16::from_f64(x).to_bits();
            assert_eq!(h, hm, "RNE x={x}");
        }
    }
}

#[test]
fn f16_all_values_round_trip_through_f32_and_f64() {
    for h in 0..=u16::MAX {
        let f = f16_to_f32(h);
        let reference = half::f16::from_bits(h).to_f32();
        if f16_is_nan(h) {
            assert!(f.is_nan());
            // quiet NaN with the same sign; re-narrowing keeps it a NaN
            assert_eq!(f.is_sign_negative(), h & 0x8000 != 0);
            assert!(f16_is_nan(f32_to_f16(f, RoundMode::NearestEven)));
            assert_eq!(f.to_bits() & 0x0040_0000, 0x0040_0000);
            continue;
        }
        assert_eq!(f.to_bits(), reference.to_bits(), "f16 {h:#06x}");
        for rm in RoundMode::ALL {
            assert_eq!(f32_to_f16(f, rm), h, "round trip {h:#06x} {rm:?}");
            assert_eq!(f64_to_f16(f as f64, rm), h, "f64 round trip {h:#06x} {rm:?}");
        }
    }
}

#[test]
fn bf16_all_values_round_trip() {
    for h in 0..=u16::MAX {
        let f = bf16_to_f32(h);
        assert_eq!(f.to_bits(), (h as u32) << 16);
        if bf16_is_nan(h) {
            assert!(bf16_is_nan(f32_to_bf16(f, RoundMode::NearestEven)));
            continue;
        }
        for rm in RoundMode::ALL {
            assert_eq!(f32_to_bf16(f, rm), h, "bf16 {h:#06x} {rm:?}");
        }
    }
}

#[test]
fn f32_to_f16_special_values() {
    let cases: [(f32, u16); 10] = [
        (65504.0, 0x7bff),
        (65519.99, 0x7bff),
        (65520.0, 0x7c00),
        (1e10, 0x7c00),
        (-1e10, 0xfc00),
        (f32::from_bits(0x3380_0000), 0x0001), // 2^-24: smallest subnormal
        (f32::from_bits(0x3300_0000), 0x0000), // 2^-25: tie to even -> 0
        (f32::from_bits(0x3300_0001), 0x0001), // just above the tie
        (-0.0, 0x8000),
        (1.0 + 1.0 / 2048.0, 0x3c00), // tie between 1 and next: even is 1
    ];
    for (x, expected) in cases {
        assert_eq!(f32_to_f16(x, RoundMode::NearestEven), expected, "{x}");
    }
    // Directed overflow: RZ and the opposite direction give the largest finite value.
    assert_eq!(f32_to_f16(1e10, RoundMode::TowardZero), 0x7bff);
    assert_eq!(f32_to_f16(1e10, RoundMode::TowardNegative), 0x7bff);
    assert_eq!(f32_to_f16(1e10, RoundMode::TowardPositive), 0x7c00);
    assert_eq!(f32_to_f16(-1e10, RoundMode::TowardPositive), 0xfbff);
    assert_eq!(f32_to_f16(-1e10, RoundMode::TowardNegative), 0xfc00);
    // Tiny values round away from zero in the matching direction only.
    assert_eq!(f32_to_f16(1e-30, RoundMode::TowardPositive), 0x0001);
    assert_eq!(f32_to_f16(1e-30, RoundMode::TowardNegative), 0x0000);
    assert_eq!(f32_to_f16(-1e-30, RoundMode::TowardNegative), 0x8001);
    // FP16_OVFL saturation applies to finite overflow only.
    assert_eq!(f32_to_f16_sat(1e10, RoundMode::NearestEven, true), 0x7bff);
    assert_eq!(f32_to_f16_sat(-1e10, RoundMode::NearestEven, true), 0xfbff);
    assert_eq!(f32_to_f16_sat(f32::INFINITY, RoundMode::NearestEven, true), 0x7c00);
    // v_cvt_pkrtz semantics: truncation toward zero.
    assert_eq!(f32_to_f16(1.0 + 1.0 / 1024.0 - 1e-7, RoundMode::TowardZero), 0x3c00);
}

#[test]
fn f64_to_f32_directed_rounding() {
    let x = 1.0f64 + f64::EPSILON; // between 1.0f32 and its successor
    assert_eq!(f64_to_f32(x, RoundMode::NearestEven), 1.0);
    assert_eq!(f64_to_f32(x, RoundMode::TowardZero), 1.0);
    assert_eq!(f64_to_f32(x, RoundMode::TowardPositive), f32::from_bits(0x3f80_0001));
    assert_eq!(f64_to_f32(-x, RoundMode::TowardNegative), -f32::from_bits(0x3f80_0001));
    assert_eq!(f64_to_f32(1e300, RoundMode::TowardZero), f32::MAX);
    assert_eq!(f64_to_f32(1e300, RoundMode::NearestEven), f32::INFINITY);
    assert_eq!(f64_to_f32(1e-300, RoundMode::TowardPositive), f32::from_bits(1));
    assert_eq!(f64_to_f32(1e-300, RoundMode::NearestEven), 0.0);
}

#[test]
fn mode_register_round_trips_and_decodes_fields() {
    for bits in [0u32, 0xff, 0x3f0, 0x0080_03c0, 0xffff_ffff, 0x1234_5678] {
        let mode = Mode::decode(bits);
        assert_eq!(Mode::decode(mode.encode()), mode);
        assert_eq!(mode.encode_into(bits), bits, "{bits:#x}");
    }
    // FP_ROUND.f32 = +inf (1), f16_64 = zero (3), FP_DENORM f32 = 2, f16_64 = 1,
    // DX10_CLAMP off, IEEE on, FP16_OVFL on.
    let bits = 1 | (3 << 2) | (2 << 4) | (1 << 6) | (1 << 9) | (1 << 23);
    let mode = Mode::decode(bits);
    assert_eq!(mode.round_f32, RoundMode::TowardPositive);
    assert_eq!(mode.round_f16_f64, RoundMode::TowardZero);
    assert_eq!(mode.denorm_f32, DenormMode::FlushIn);
    assert_eq!(mode.denorm_f16_f64, DenormMode::FlushOut);
    assert!(!mode.dx10_clamp && mode.ieee && mode.fp16_ovfl);
    assert_eq!(mode.encode(), bits);
    // Default: all denormals kept, DX10_CLAMP | IEEE.
    assert_eq!(Mode::default().encode(), 0x3f0);
    // From a kernel descriptor's COMPUTE_PGM_RSRC1: VGPR/SGPR block counts in the low bits
    // are ignored; FLOAT_DENORM_MODE_16_64 = 3, DX10_CLAMP, IEEE, FP16_OVFL.
    let rsrc1 = 0x0000_0042 | (3 << 18) | (1 << 21) | (1 << 23) | (1 << 26);
    let from_kd = Mode::from_pgm_rsrc1(rsrc1);
    assert_eq!(from_kd.denorm_f32, DenormMode::FlushInFlushOut);
    assert_eq!(from_kd.denorm_f16_f64, DenormMode::FlushNone);
    assert!(from_kd.dx10_clamp && from_kd.ieee && from_kd.fp16_ovfl);
    assert_eq!(from_kd.encode(), 0xc0 | (1 << 8) | (1 << 9) | (1 << 23));
    let rounding = Mode::from_pgm_rsrc1((2 << 12) | (1 << 14) | (1 << 16) | (2 << 18));
    assert_eq!(rounding.round_f32, RoundMode::TowardNegative);
    assert_eq!(rounding.round_f16_f64, RoundMode::TowardPositive);
    assert_eq!(rounding.denorm_f32, DenormMode::FlushOut);
    assert_eq!(rounding.denorm_f16_f64, DenormMode::FlushIn);
    assert!(!rounding.ieee && !rounding.dx10_clamp && !rounding.fp16_ovfl);
}

#[test]
fn denormal_flush_helpers_follow_the_mode() {
    let tiny = f32::from_bits(0x8000_0005);
    assert_eq!(Mode::default().flush_in_f32(tiny).to_bits(), tiny.to_bits());
    let mode = Mode { denorm_f32: DenormMode::FlushIn, ..Mode::default() };
    assert_eq!(mode.flush_in_f32(tiny).to_bits(), 0x8000_0000);
    assert_eq!(mode.flush_out_f32(tiny).to_bits(), tiny.to_bits());
    let mode = Mode { denorm_f32: DenormMode::FlushOut, ..Mode::default() };
    assert_eq!(mode.flush_in_f32(tiny).to_bits(), tiny.to_bits());
    assert_eq!(mode.flush_out_f32(tiny).to_bits(), 0x8000_0000);
    assert_eq!(flush_f32(1.5, true), 1.5);
    assert_eq!(Mode::default().flush_in_f16(0x8123), 0x8123);
    let flush_all = Mode { denorm_f16_f64: DenormMode::FlushInFlushOut, ..Mode::default() };
    assert_eq!(flush_all.flush_in_f16(0x8123), 0x8000);
    assert_eq!(flush_all.flush_out_f64(-1e-310).to_bits(), (-0.0f64).to_bits());
    // v_cvt_f16_f32 under a flushing mode: an f16-subnormal result becomes zero.
    assert_eq!(f32_to_f16_mode(1e-6, flush_all), 0x0000);
    assert_eq!(f32_to_f16_mode(1e-6, Mode::IEEE_DENORMALS), f32_to_f16(1e-6, RoundMode::NearestEven));
}

#[test]
fn stochastic_f16_and_bf16_conversions() {
    let one_and_quarter_ulp = 1.0 + 0.25 / 1024.0;
    assert_eq!(f32_to_f16_sr(one_and_quarter_ulp, 0, false), 0x3c00);
    assert_eq!(f32_to_f16_sr(one_and_quarter_ulp, 0xc000_0000, false), 0x3c01);
    assert_eq!(f32_to_f16_sr(one_and_quarter_ulp, 0xbfff_ffff, false), 0x3c00);
    assert_eq!(f32_to_f16_sr(-one_and_quarter_ulp, u32::MAX, false), 0xbc01);
    assert_eq!(f32_to_f16_sr(65504.0 + 16.0, u32::MAX, false), 0x7c00);
    assert_eq!(f32_to_f16_sr(65504.0 + 16.0, u32::MAX, true), 0x7bff);
    assert_eq!(f32_to_f16_sr(f32::NEG_INFINITY, 0, false), 0xfc00);
    assert!(f16_is_nan(f32_to_f16_sr(f32::NAN, 0, false)));
    // Exact values never move; the f16 subnormal range uses the subnormal spacing.
    assert_eq!(f32_to_f16_sr(2f32.powi(-24), u32::MAX, false), 0x0001);
    assert_eq!(f32_to_f16_sr(2f32.powi(-26), 0xc000_0000, false), 0x0001);
    assert_eq!(f32_to_f16_sr(2f32.powi(-26), 0xbfff_ffff, false), 0x0000);
    let x = f32::from_bits(0x3f80_8000); // 1 + 2^-8 = bf16 1.0 plus half an ulp
    assert_eq!(f32_to_bf16_sr(x, 0x7fff_ffff), 0x3f80);
    assert_eq!(f32_to_bf16_sr(x, 0x8000_0000), 0x3f81);
    // Mean of a uniform sweep equals the input.
    let y = 1.0 + 0.3 / 1024.0;
    let mean: f64 = (0..4096u32).map(|i| f16_to_f64(f32_to_f16_sr(y, i << 20, false))).sum::<f64>() / 4096.0;
    assert!((mean - y as f64).abs() < 1e-6, "{mean}");
}

proptest! {
    #[test]
    fn f32_to_f16_rne_matches_half_crate(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assume!(!x.is_nan());
        prop_assert_eq!(f32_to_f16(x, RoundMode::NearestEven), half::f16::from_f32(x).to_bits());
    }

    #[test]
    fn f32_to_bf16_rne_matches_half_crate(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assume!(!x.is_nan());
        prop_assert_eq!(f32_to_bf16(x, RoundMode::NearestEven), half::bf16::from_f32(x).to_bits());
    }

    #[test]
    fn f32_to_f16_directed_modes_bracket_the_value(x in -70000.0f32..70000.0f32, scale in 0i32..30) {
        let x = x * 2f32.powi(-scale);
        for rm in RoundMode::ALL {
            check_f16_rounding(x as f64, f32_to_f16(x, rm), rm);
        }
    }

    #[test]
    fn f64_to_f32_directed_matches_bracketing(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        let rn = f64_to_f32(x, RoundMode::NearestEven);
        prop_assert_eq!(rn.to_bits(), (x as f32).to_bits());
        let up = f64_to_f32(x, RoundMode::TowardPositive) as f64;
        let down = f64_to_f32(x, RoundMode::TowardNegative) as f64;
        prop_assert!(up >= x || (up == f32::MAX as f64));
        prop_assert!(down <= x || (down == f32::MIN as f64));
        let z = f64_to_f32(x, RoundMode::TowardZero) as f64;
        prop_assert!(z.abs() <= x.abs());
    }
}
