//! gfx950 MX sub-byte formats: every code's value, saturation, RNE against a brute-force
//! nearest search, stochastic rounding, scaling, packing and the MX dot kernel.

use amdgpu_isa::numeric::mx::{self, MxFormat};
use amdgpu_isa::numeric::RoundMode;
use proptest::prelude::*;

#[test]
fn all_codes_decode_to_known_values() {
    let fp4: Vec<f32> = (0..16).map(|c| MxFormat::E2M1.to_f32(c)).collect();
    assert_eq!(
        fp4,
        [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
    );
    assert!(MxFormat::E2M1.to_f32(8).is_sign_negative());
    assert_eq!(MxFormat::E2M3.max_finite(), 7.5);
    assert_eq!(MxFormat::E3M2.max_finite(), 28.0);
    assert_eq!(MxFormat::E2M3.to_f32(0x01), 0.125); // subnormal step
    assert_eq!(MxFormat::E2M3.to_f32(0x08), 1.0); // min normal
    assert_eq!(MxFormat::E3M2.to_f32(0x01), 0.0625);
    assert_eq!(MxFormat::E3M2.to_f32(0x04), 0.25); // min normal 2^-2
    assert_eq!(MxFormat::E3M2.to_f32(0x3f), -28.0);
    // Upper bits of the byte are ignored.
    assert_eq!(MxFormat::E2M1.to_f32(0xf7), 6.0);
    // Every code is finite and round-trips in every rounding mode.
    for fmt in MxFormat::ALL {
        for code in 0..(1u8 << fmt.width()) {
            let v = fmt.to_f32(code);
            assert!(v.is_finite());
            for rm in RoundMode::ALL {
                assert_eq!(fmt.from_f64(v as f64, rm), code, "{fmt:?} {code:#x} {rm:?}");
            }
            assert_eq!(fmt.from_f64_sr(v as f64, 0x1234_5678), code);
        }
    }
}

#[test]
fn saturation_and_specials() {
    assert_eq!(MxFormat::E2M1.from_f32(100.0), 0x7);
    assert_eq!(MxFormat::E2M1.from_f32(-100.0), 0xf);
    assert_eq!(MxFormat::E2M1.from_f32(f32::INFINITY), 0x7);
    assert_eq!(MxFormat::E2M1.from_f32(f32::NAN), 0x7);
    assert_eq!(MxFormat::E2M1.from_f32(-0.0), 0x8);
    assert_eq!(MxFormat::E2M1.from_f32(5.0), 0x6); // tie 4 | 6 -> even mantissa (4)
    assert_eq!(MxFormat::E2M1.from_f32(5.01), 0x7);
    assert_eq!(MxFormat::E2M1.from_f32(0.25), 0x0); // tie 0 | 0.5 -> 0
    assert_eq!(MxFormat::E2M3.from_f32(7.75), 0x1f); // beyond max saturates
    assert_eq!(MxFormat::E3M2.from_f64_sr(27.9, u32::MAX), 0x1f);
    assert_eq!(MxFormat::E3M2.from_f64_sr(100.0, 0), 0x1f);
}

#[test]
fn scaling_packing_and_dot() {
    assert_eq!(MxFormat::E2M1.from_f32_scaled(24.0, 8.0), 0x5); // 24 / 8 = 3
    assert_eq!(MxFormat::E2M1.to_f32_scaled(0x5, 8.0), 24.0);
    assert!(MxFormat::E2M1.to_f32_scaled(0x5, f32::NAN).is_nan());
    assert_eq!(MxFormat::E2M3.from_f32_scaled_sr(0.5 * 0.125 * 1.25, 0, 0.5), 0x01);
    assert_eq!(mx::cvt_scalef32_pk_fp4_f32(1.0, -6.0, 1.0), 0xf2);
    assert_eq!(mx::cvt_scalef32_pk_f32_fp4(0xf2, 2.0), [2.0, -12.0]);
    let codes: [u8; 32] = core::array::from_fn(|i| (i as u8 * 7) & 0x3f);
    let packed = mx::pack_fp6(&codes);
    for (i, &c) in codes.iter().enumerate() {
        assert_eq!(mx::fp6_element(&packed, i as u32), c, "element {i}");
    }
    // Element 5 straddles dwords 0 and 1 (bits 35:30).
    assert_eq!(packed[0] >> 30, (codes[5] & 0x3) as u32);
    let a = [MxFormat::E2M1.from_f32(6.0), MxFormat::E2M1.from_f32(-0.5)];
    let b = [MxFormat::E3M2.from_f32(28.0), MxFormat::E3M2.from_f32(0.0625)];
    assert_eq!(mx::dot_mx_f32_slice(MxFormat::E2M1, MxFormat::E3M2, &a, &b, 1.0), 1.0 + 168.0 - 0.03125);
}

proptest! {
    #[test]
    fn rne_picks_the_nearest_code(x in -40.0f64..40.0, which in 0usize..3) {
        let fmt = MxFormat::ALL[which];
        let got = fmt.to_f32(fmt.from_f64(x, RoundMode::NearestEven)) as f64;
        let clamped = x.clamp(-(fmt.max_finite() as f64), fmt.max_finite() as f64);
        for code in 0..(1u8 << fmt.width()) {
            let v = fmt.to_f32(code) as f64;
            prop_assert!((got - clamped).abs() <= (v - clamped).abs(), "{:?} x={} got={} closer={}", fmt, x, got, v);
        }
    }
}
