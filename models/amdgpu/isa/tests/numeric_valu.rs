//! VALU float semantics: min/max rule tables, modifiers, rounding-mode arithmetic checked
//! exactly in integer arithmetic, the division helpers end to end, and conversions.

use amdgpu_isa::numeric::convert::f32_to_f16;
use amdgpu_isa::numeric::transcendental::rcp_f32;
use amdgpu_isa::numeric::valu::*;
use amdgpu_isa::numeric::{Mode, RoundMode};
use proptest::prelude::*;

const SNAN: f32 = f32::from_bits(0x7f80_0001);
const SNAN_NEG: f32 = f32::from_bits(0xff80_0042);
const QNAN: f32 = f32::from_bits(0x7fc0_1234);

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
}

/// Widens an f32 to f64 keeping signalling NaNs signalling (plain `as` quiets them).
fn widen(x: f32) -> f64 {
    if x.is_nan() {
        let b = x.to_bits() as u64;
        f64::from_bits(((b >> 31) << 63) | (0x7ffu64 << 52) | ((b & 0x7f_ffff) << 29))
    } else {
        x as f64
    }
}

#[test]
fn min_max_f32_rule_table() {
    // (s0, s1, ieee, expected min, expected max)
    let cases: &[(f32, f32, bool, f32, f32)] = &[
        // IEEE: a signalling NaN is quieted and returned (S0 checked first).
        (SNAN, 1.0, true, f32::from_bits(0x7fc0_0001), f32::from_bits(0x7fc0_0001)),
        (1.0, SNAN, true, f32::from_bits(0x7fc0_0001), f32::from_bits(0x7fc0_0001)),
        (SNAN_NEG, SNAN, true, f32::from_bits(0xffc0_0042), f32::from_bits(0xffc0_0042)),
        // Non-IEEE: a signalling NaN behaves like any NaN: the other operand wins.
        (SNAN, 1.0, false, 1.0, 1.0),
        (1.0, SNAN, false, 1.0, 1.0),
        // Quiet NaNs are ignored in both modes.
        (QNAN, -3.0, true, -3.0, -3.0),
        (-3.0, QNAN, false, -3.0, -3.0),
        (QNAN, QNAN, true, QNAN, QNAN),
        // Signed zeros: -0 < +0 in either operand order.
        (0.0, -0.0, true, -0.0, 0.0),
        (-0.0, 0.0, true, -0.0, 0.0),
        (0.0, -0.0, false, -0.0, 0.0),
        // Ordinary values.
        (1.0, 2.0, true, 1.0, 2.0),
        (f32::NEG_INFINITY, f32::INFINITY, false, f32::NEG_INFINITY, f32::INFINITY),
    ];
    for &(s0, s1, ieee, emin, emax) in cases {
        assert!(same(min_f32(s0, s1, ieee), emin), "min({s0:?},{s1:?},{ieee})");
        assert!(same(max_f32(s0, s1, ieee), emax), "max({s0:?},{s1:?},{ieee})");
        // f64 follows the same rules (NaNs widened keeping the quiet bit and payload).
        let m64 = min_f64(widen(s0), widen(s1), ieee);
        if emin.is_nan() {
            assert!(m64.is_nan());
            assert_eq!(m64.to_bits() >> 51 & 1, 1, "f64 NaN result is quiet");
        } else {
            assert_eq!(m64.to_bits(), (emin as f64).to_bits());
        }
    }
    // f16: sNaN 0x7c01 quiets to 0x7e01 in IEEE mode, ignored otherwise.
    assert_eq!(min_f16(0x7c01, 0x3c00, true), 0x7e01);
    assert_eq!(min_f16(0x7c01, 0x3c00, false), 0x3c00);
    assert_eq!(max_f16(0x7e00, 0xbc00, true), 0xbc00);
    assert_eq!(min_f16(0x0000, 0x8000, true), 0x8000);
    assert_eq!(max_f16(0x8000, 0x0000, false), 0x0000);
    assert_eq!(max_f16(0x4000, 0x3c00, true), 0x4000);
}

#[test]
fn min3_max3_med3_and_ieee_2019_minimum_maximum() {
    assert_eq!(min3_f32(3.0, 1.0, 2.0, true), 1.0);
    assert_eq!(max3_f32(3.0, 1.0, 2.0, true), 3.0);
    assert_eq!(med3_f32(3.0, 1.0, 2.0, true), 2.0);
    assert_eq!(med3_f32(1.0, 3.0, 2.0, true), 2.0);
    assert_eq!(med3_f32(2.0, 1.0, 3.0, false), 2.0);
    // A NaN operand makes med3 a min3, which ignores quiet NaNs.
    assert_eq!(med3_f32(QNAN, 5.0, 4.0, true), 4.0);
    // The clamp idiom med3(x, 0, 1).
    assert_eq!(med3_f32(1.5, 0.0, 1.0, true), 1.0);
    assert_eq!(med3_f32(-1.5, 0.0, 1.0, true), 0.0);
    assert_eq!(med3_f16(0x4000, 0x0000, 0x3c00, true), 0x3c00);
    // IEEE 754-2019 minimum/maximum propagate NaN (quieted) and order zeros.
    assert!(same(minimum_f32(1.0, SNAN), f32::from_bits(0x7fc0_0001)));
    assert!(same(maximum_f32(QNAN, 1.0), QNAN));
    assert!(same(minimum_f32(0.0, -0.0), -0.0));
    assert!(same(maximum_f32(-0.0, 0.0), 0.0));
    assert!(minimum3_f32(1.0, 2.0, f32::NAN).is_nan());
    assert_eq!(maximum3_f32(1.0, 7.0, 2.0), 7.0);
    assert_eq!(minimum_f16(0x3c00, 0x7c01), 0x7e01);
    assert_eq!(maximum_f16(0x8000, 0x0000), 0x0000);
}

#[test]
fn source_and_output_modifiers() {
    assert!(same(src_f32(-2.0, true, false), 2.0));
    assert!(same(src_f32(2.0, true, true), -2.0));
    assert!(same(src_f32(0.0, false, true), -0.0));
    assert_eq!(src_f16(0xbc00, true, false), 0x3c00);
    assert!(same(src_f64(-1.0, false, true) as f32, 1.0));
    let non_ieee = Mode { ieee: false, ..Mode::IEEE_DENORMALS };
    let dx10 = Mode::IEEE_DENORMALS;
    let no_dx10 = Mode { dx10_clamp: false, ..Mode::IEEE_DENORMALS };
    // clamp
    assert!(same(output_f32(-0.0, OutputModifier::None, true, dx10), 0.0));
    assert_eq!(output_f32(1.5, OutputModifier::None, true, dx10), 1.0);
    assert_eq!(output_f32(0.25, OutputModifier::None, true, dx10), 0.25);
    assert!(same(output_f32(f32::NAN, OutputModifier::None, true, dx10), 0.0));
    assert!(output_f32(f32::NAN, OutputModifier::None, true, no_dx10).is_nan());
    assert!(output_f32(f32::NAN, OutputModifier::None, false, dx10).is_nan());
    // omod is ignored in IEEE mode, applied (before clamp) otherwise.
    assert_eq!(output_f32(3.0, OutputModifier::Mul2, false, dx10), 3.0);
    assert_eq!(output_f32(3.0, OutputModifier::Mul2, false, non_ieee), 6.0);
    assert_eq!(output_f32(3.0, OutputModifier::Mul4, false, non_ieee), 12.0);
    assert_eq!(output_f32(3.0, OutputModifier::Div2, false, non_ieee), 1.5);
    assert_eq!(output_f32(0.75, OutputModifier::Mul2, true, non_ieee), 1.0);
    // omod results in the denormal range flush to a signed zero.
    let small = f32::MIN_POSITIVE;
    assert!(same(output_f32(-small, OutputModifier::Div2, false, non_ieee), -0.0));
    assert_eq!(OutputModifier::from_bits(7), OutputModifier::Div2);
    // omod does not preserve signed zeros: -0 * 2 comes out +0; without omod -0 stays.
    assert!(same(output_f32(-0.0, OutputModifier::Mul2, false, non_ieee), 0.0));
    assert!(same(output_f32(-0.0, OutputModifier::None, false, non_ieee), -0.0));
    assert_eq!(output_f16(0x8000, OutputModifier::Div2, false, non_ieee), 0x0000);
    // The bundled VOP3 path: |s0| * -s1 + s2, then omod *2 and clamp.
    let mods = Vop3Mods { abs: 0b001, neg: 0b010, omod: OutputModifier::Mul2, clamp: true };
    assert_eq!(v_fma_f32(-0.25, 1.0, 0.5, mods, non_ieee), 0.5);
    assert_eq!(v_fma_f32(-0.25, 1.0, 0.5, mods, dx10), 0.25); // omod ignored with IEEE
    assert_eq!(v_add_f32(1.0, 2.0, Vop3Mods { neg: 0b11, ..Vop3Mods::default() }, dx10), -3.0);
    assert_eq!(v_mul_f32(3.0, 2.0, Vop3Mods { omod: OutputModifier::Div2, ..Vop3Mods::default() }, non_ieee), 3.0);
    assert!(same(v_max_f32(SNAN, 1.0, Vop3Mods { clamp: true, ..Vop3Mods::default() }, dx10), 0.0));
    assert_eq!(v_min_f32(-5.0, 2.0, Vop3Mods { abs: 0b01, ..Vop3Mods::default() }, dx10), 2.0);
    let flush = Mode { denorm_f32: amdgpu_isa::numeric::DenormMode::FlushInFlushOut, ..dx10 };
    let tiny = f32::from_bits(0x0000_0100);
    assert!(same(Vop3Mods::default().src_f32(-tiny, 0, flush), -0.0));
    assert_eq!(Vop3Mods::default().src_f32(tiny, 0, dx10), tiny);
    // f16 clamp/omod
    assert_eq!(output_f16(0x4000, OutputModifier::None, true, dx10), 0x3c00);
    assert_eq!(output_f16(0x3800, OutputModifier::Mul2, false, non_ieee), 0x3c00);
    assert_eq!(output_f16(0x7e00, OutputModifier::None, true, dx10), 0x0000);
    assert_eq!(output_f64(2.0, OutputModifier::None, true, dx10), 1.0);
}

/// Exact value of `x` times 2^scale as an integer (the test ranges keep this exact).
fn fixed(x: f32, scale: i32) -> i128 {
    let (neg, sig, exp) = amdgpu_isa::numeric::convert::split_f32_exact(x);
    if sig == 0 {
        return 0;
    }
    let shift = exp + scale;
    assert!(shift >= 0, "value {x} not representable at scale {scale}");
    let v = (sig as i128) << shift;
    if neg {
        -v
    } else {
        v
    }
}

fn next_up(x: f32) -> f32 {
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    f32::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// Asserts `r` is `exact / 2^scale` rounded in `rm`, by integer bracketing.
fn check_rounded(r: f32, exact: i128, scale: i32, rm: RoundMode) {
    if exact == 0 {
        assert_eq!(r, 0.0, "exact zero");
        return;
    }
    let rv = fixed(r, scale);
    let up = fixed(next_up(r), scale);
    let down = fixed(next_down(r), scale);
    match rm {
        RoundMode::TowardPositive => assert!(rv >= exact && down < exact, "RU r={r}"),
        RoundMode::TowardNegative => assert!(rv <= exact && up > exact, "RD r={r}"),
        RoundMode::TowardZero => {
            assert!(rv.abs() <= exact.abs(), "RZ r={r}");
            let away = if exact >= 0 { up } else { down };
            assert!(away.abs() > exact.abs(), "RZ r={r} not the largest");
        }
        RoundMode::NearestEven => {
            let err = (rv - exact).abs();
            assert!(err * 2 <= (up - rv).abs().max((rv - down).abs()), "RNE r={r}");
            assert!((up - exact).abs() >= err && (down - exact).abs() >= err, "RNE r={r} not nearest");
            if (up - exact).abs() == err || (down - exact).abs() == err {
                assert_eq!(r.to_bits() & 1, 0, "RNE tie not even r={r}");
            }
        }
    }
}

fn f32_in(exp_range: i32) -> impl Strategy<Value = f32> {
    (any::<u32>(), -exp_range..exp_range).prop_map(|(m, e)| {
        let sign = m & 0x8000_0000;
        f32::from_bits(sign | (((127 + e) as u32) << 23) | (m & 0x7f_ffff))
    })
}

proptest! {
    #[test]
    fn add_and_mul_are_correctly_rounded_in_every_mode(a in f32_in(30), b in f32_in(30), which in 0usize..4) {
        let rm = RoundMode::ALL[which];
        // a, b are multiples of 2^-53 below 2^31; a nonzero sum is at least 2^-53, so it and
        // its f32 neighbours (spacing >= 2^-76) are exact at scale 80.
        let r = add_f32(a, b, rm);
        check_rounded(r, fixed(a, 80) + fixed(b, 80), 80, rm);
        let r = sub_f32(a, b, rm);
        check_rounded(r, fixed(a, 80) - fixed(b, 80), 80, rm);
    }

    #[test]
    fn mul_is_correctly_rounded_in_every_mode(a in f32_in(10), b in f32_in(10), which in 0usize..4) {
        let rm = RoundMode::ALL[which];
        // a, b are multiples of 2^-33 below 2^11: the product is exact at scale 66.
        let r = mul_f32(a, b, rm);
        check_rounded(r, fixed(a, 33) * fixed(b, 33), 66, rm);
    }

    #[test]
    fn fma_is_correctly_rounded_once_in_every_mode(a in f32_in(12), b in f32_in(12), c in f32_in(24), which in 0usize..4) {
        let rm = RoundMode::ALL[which];
        // Multiples of 2^-70; a nonzero result's neighbours have spacing >= 2^-93, so scale
        // 100 keeps everything exact (magnitudes stay below 2^127).
        let r = fma_f32(a, b, c, rm);
        let exact = fixed(a, 50) * fixed(b, 50) + fixed(c, 100);
        prop_assume!(exact != 0);
        check_rounded(r, exact, 100, rm);
        if rm == RoundMode::NearestEven {
            prop_assert_eq!(r.to_bits(), a.mul_add(b, c).to_bits());
        }
    }

    #[test]
    fn branch_free_fma_equals_libm_fma(a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
        let (a, b, c) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
        let fast = fma_f32_rne(a, b, c);
        let libm = a.mul_add(b, c);
        prop_assert!(fast.to_bits() == libm.to_bits() || (fast.is_nan() && libm.is_nan()), "{:e} {:e} {:e}: {:e} vs {:e}", a, b, c, fast, libm);
    }

    #[test]
    fn branch_free_fma_equals_libm_fma_near_cancellation(a in f32_in(60), b in f32_in(60), t in any::<u32>()) {
        // c close to -a*b so the result is tiny and rounding-sensitive.
        let c = -((a as f64 * b as f64) as f32);
        let c = f32::from_bits(c.to_bits() ^ (t & 0xf));
        prop_assert_eq!(fma_f32_rne(a, b, c).to_bits(), a.mul_add(b, c).to_bits());
    }

    #[test]
    fn f16_arithmetic_is_correctly_rounded(a in any::<u16>(), b in any::<u16>(), which in 0usize..4) {
        let rm = RoundMode::ALL[which];
        use amdgpu_isa::numeric::convert::{f16_is_nan, f16_to_f32, f64_to_f16};
        prop_assume!(!f16_is_nan(a) && !f16_is_nan(b));
        let (x, y) = (f16_to_f32(a) as f64, f16_to_f32(b) as f64);
        prop_assume!(x.is_finite() && y.is_finite());
        // The f64 sum/product of two f16 values is exact, so single rounding is the reference.
        if x + y != 0.0 {
            prop_assert_eq!(add_f16(a, b, rm, false), f64_to_f16(x + y, rm));
        }
        if x * y != 0.0 {
            prop_assert_eq!(mul_f16(a, b, rm, false), f64_to_f16(x * y, rm));
        }
        // fma: exact when the product and addend overlap within 53 bits (true here).
        let c = a ^ 0x8000;
        let exact = x * y + f16_to_f32(c) as f64;
        let bits_ok = (x * y).abs() < 2f64.powi(20) && (x * y).abs() > 2f64.powi(-20);
        if bits_ok && exact != 0.0 && (x * y).mul_add(1.0, f16_to_f32(c) as f64) == exact {
            prop_assert_eq!(fma_f16(a, b, c, rm, false), f64_to_f16(exact, rm));
        }
    }

    #[test]
    fn llvm_division_sequence_gives_correctly_rounded_quotients(a in f32_in(63), b in f32_in(63)) {
        prop_assert_eq!(divide(a, b).to_bits(), (a / b).to_bits(), "{} / {}", a, b);
    }

    #[test]
    fn division_sequence_over_the_full_exponent_range(a in f32_in(127), b in f32_in(127)) {
        // Outside the documented gap (true quotients beyond ~2^191).
        prop_assume!(((a as f64) / (b as f64)).abs() < 2f64.powi(190));
        prop_assert_eq!(divide(a, b).to_bits(), (a / b).to_bits(), "{} / {}", a, b);
    }

    #[test]
    fn ldexp_and_frexp_are_inverse(x in f32_in(120), n in -30i32..30) {
        let (m, e) = (frexp_mant_f32(x), frexp_exp_f32(x));
        prop_assert!(m.abs() >= 0.5 && m.abs() < 1.0);
        prop_assert_eq!(ldexp_f32(m, e), x);
        let expected = x as f64 * 2f64.powi(n);
        if expected.abs() < f32::MAX as f64 && expected.abs() >= f32::MIN_POSITIVE as f64 {
            prop_assert_eq!(ldexp_f32(x, n) as f64, expected);
        }
        prop_assert_eq!(ldexp_f64(x as f64, n * 30), x as f64 * 2f64.powi(n * 30));
    }
}

/// The f32 division sequence LLVM emits for IEEE-correct `fdiv` on AMDGPU.
fn divide(a: f32, b: f32) -> f32 {
    let rm = RoundMode::NearestEven;
    let (den, _) = div_scale_f32(b, b, a);
    let (num, vcc) = div_scale_f32(a, b, a);
    let rcp = rcp_f32(den);
    let e0 = fma_f32(-den, rcp, 1.0, rm);
    let rcp1 = fma_f32(e0, rcp, rcp, rm);
    let mul = num * rcp1;
    let e1 = fma_f32(-den, mul, num, rm);
    let mul1 = fma_f32(e1, rcp1, mul, rm);
    let e2 = fma_f32(-den, mul1, num, rm);
    let fmas = div_fmas_f32(e2, rcp1, mul1, vcc, rm);
    div_fixup_f32(fmas, b, a)
}

#[test]
fn division_helpers_special_cases() {
    assert!(divide(0.0, 0.0).is_nan());
    assert_eq!(divide(1.0, 0.0), f32::INFINITY);
    assert_eq!(divide(-1.0, 0.0), f32::NEG_INFINITY);
    assert!(same(divide(0.0, -5.0), -0.0));
    assert!(divide(f32::INFINITY, f32::INFINITY).is_nan());
    assert_eq!(divide(f32::INFINITY, 2.0), f32::INFINITY);
    assert!(same(divide(3.0, f32::NEG_INFINITY), -0.0));
    assert!(divide(f32::NAN, 1.0).is_nan());
    // Extreme exponent gaps that need the pre-scaling.
    for (a, b) in [
        (1.0e38f32, 3.0e-5f32),
        (1.5e-38, 3.0e38),
        (f32::MIN_POSITIVE, 7.0),
        (1.0, 3.0e38),
        (f32::from_bits(0x0000_1234), 3.0),
        (5.0, f32::from_bits(0x0001_0000)),
        (1.0, 3.0e38),
        (-7.0e-30, 2.0e30),
        (3.0e30, 7.0e-9),
    ] {
        assert_eq!(divide(a, b).to_bits(), (a / b).to_bits(), "{a:e} / {b:e}");
    }
    // div_fixup sign and NaN rules
    assert!(same(div_fixup_f32(2.0, -1.0, 4.0), -2.0));
    assert_eq!(div_fixup_f32(5.0, 0.0, 1.0), f32::INFINITY);
    assert_eq!(div_fixup_f32(5.0, 0.0, 0.0).to_bits(), 0xffc0_0000);
    assert_eq!(div_fixup_f16(0x4000, 0xbc00, 0x3c00), 0xc000);
    assert_eq!(div_fixup_f16(0x4000, 0x0000, 0x0000), 0xfe00);
    assert_eq!(div_fixup_f64(2.0, 4.0, 8.0), 2.0);
    assert!(div_scale_f32(1.0, 0.0, 1.0).0.is_nan());
}

#[test]
fn f64_division_sequence() {
    fn divide64(a: f64, b: f64) -> f64 {
        let (den, _) = div_scale_f64(b, b, a);
        let (num, vcc) = div_scale_f64(a, b, a);
        let rcp = 1.0 / den;
        let e0 = (-den).mul_add(rcp, 1.0);
        let rcp1 = e0.mul_add(rcp, rcp);
        let e1 = (-den).mul_add(rcp1, 1.0);
        let rcp2 = e1.mul_add(rcp1, rcp1);
        let mul = num * rcp2;
        let e2 = (-den).mul_add(mul, num);
        let fmas = div_fmas_f64(e2, rcp2, mul, vcc);
        div_fixup_f64(fmas, b, a)
    }
    for (a, b) in [(1.0f64, 3.0f64), (1e300, 1e-5), (1e-300, 1e300), (7.0, -2.5), (5e-320, 3.0)] {
        assert_eq!(divide64(a, b).to_bits(), (a / b).to_bits(), "{a:e} / {b:e}");
    }
}

#[test]
fn rounding_mode_arithmetic_edge_cases() {
    // Exact cancellation: +0 except toward negative.
    assert!(same(add_f32(1.0, -1.0, RoundMode::TowardPositive), 0.0));
    assert!(same(add_f32(1.0, -1.0, RoundMode::TowardNegative), -0.0));
    assert!(same(add_f32(-0.0, -0.0, RoundMode::TowardZero), -0.0));
    assert!(same(add_f32(-0.0, 0.0, RoundMode::TowardNegative), -0.0));
    assert!(same(add_f32(-0.0, 0.0, RoundMode::NearestEven), 0.0));
    assert_eq!(add_f16(0x8000, 0x0000, RoundMode::TowardNegative, false), 0x8000);
    assert_eq!(add_f16(0x8000, 0x0000, RoundMode::TowardPositive, false), 0x0000);
    assert_eq!(add_f16(0x3c00, 0xbc00, RoundMode::TowardNegative, false), 0x8000);
    assert_eq!(add_f16(0x3c00, 0xbc00, RoundMode::NearestEven, false), 0x0000);
    assert_eq!(mul_f16(0x8000, 0x3c00, RoundMode::TowardPositive, false), 0x8000);
    assert_eq!(fma_f16(0x3c00, 0x3c00, 0xbc00, RoundMode::TowardNegative, false), 0x8000);
    // Overflow depends on direction.
    assert_eq!(add_f32(f32::MAX, f32::MAX, RoundMode::TowardZero), f32::MAX);
    assert_eq!(add_f32(f32::MAX, f32::MAX, RoundMode::TowardPositive), f32::INFINITY);
    assert_eq!(mul_f32(-f32::MAX, 2.0, RoundMode::TowardPositive), -f32::MAX);
    assert_eq!(mul_f64(f64::MAX, 2.0, RoundMode::TowardZero), f64::MAX);
    assert_eq!(add_f64(1.0, 1e-30, RoundMode::TowardPositive), 1.0 + f64::EPSILON);
    assert_eq!(add_f64(-1.0, -1e-30, RoundMode::TowardZero), -1.0);
    assert_eq!(add_f64(-1.0, -1e-30, RoundMode::TowardNegative), -1.0 - f64::EPSILON);
    assert_eq!(mul_f64(1.0 + f64::EPSILON, 1.0 + f64::EPSILON, RoundMode::TowardPositive), 1.0 + 3.0 * f64::EPSILON);
    // Denormal results are produced (no implicit flushing here).
    assert_eq!(mul_f32(f32::MIN_POSITIVE, 0.5, RoundMode::TowardZero).to_bits(), 0x0040_0000);
    // Legacy multiply: 0 * Inf = 0.
    assert_eq!(mul_legacy_f32(0.0, f32::INFINITY, RoundMode::NearestEven), 0.0);
    assert!(mul_legacy_f32(f32::NAN, 1.0, RoundMode::NearestEven).is_nan());
    // mad rounds twice, fma once.
    let (a, b, c) = (1.0 + f32::EPSILON, 1.0 - f32::EPSILON, -1.0);
    assert_eq!(fma_f32(a, b, c, RoundMode::NearestEven), -f32::EPSILON * f32::EPSILON);
    assert_eq!(mad_f32(a, b, c, RoundMode::NearestEven), 0.0);
    // The legacy MAD flushes denormals whatever MODE says.
    let tiny = f32::MIN_POSITIVE;
    assert_eq!(mad_f32(tiny, 0.5, 0.0, RoundMode::NearestEven), tiny * 0.5);
    assert_eq!(mad_f32_legacy(tiny, 0.5, 0.0, RoundMode::NearestEven), 0.0);
    assert_eq!(mad_f32_legacy(f32::from_bits(5), 1e30, 1.0, RoundMode::NearestEven), 1.0);
    assert_eq!(mad_f32_legacy(2.0, 3.0, 1.0, RoundMode::NearestEven), 7.0);
}

#[test]
fn fract_rounding_and_int_conversions() {
    assert_eq!(fract_f32(2.75), 0.75);
    assert_eq!(fract_f32(-0.25), 0.75);
    assert_eq!(fract_f32(-1e-10), f32::from_bits(0x3f7f_ffff));
    assert!(fract_f32(f32::INFINITY).is_nan());
    assert_eq!(fract_f64(-1e-300), f64::from_bits(0x3fef_ffff_ffff_ffff));
    assert_eq!(rndne_f32(2.5), 2.0);
    assert_eq!(rndne_f32(3.5), 4.0);
    assert!(same(rndne_f32(-0.5), -0.0));
    assert_eq!(floor_f32(-1.5), -2.0);
    assert_eq!(ceil_f32(-1.5), -1.0);
    assert_eq!(trunc_f32(-1.5), -1.0);
    assert_eq!(cvt_i32_f32(f32::NAN), 0);
    assert_eq!(cvt_i32_f32(3e9), i32::MAX);
    assert_eq!(cvt_i32_f32(-3e9), i32::MIN);
    assert_eq!(cvt_i32_f32(-2.9), -2);
    assert_eq!(cvt_u32_f32(-5.0), 0);
    assert_eq!(cvt_u32_f32(5e9), u32::MAX);
    assert_eq!(cvt_u32_f64(f64::NAN), 0);
    assert_eq!(cvt_i32_f64(-1e20), i32::MIN);
    assert_eq!(cvt_rpi_i32_f32(-2.5), -2);
    assert_eq!(cvt_flr_i32_f32(-2.5), -3);
    assert_eq!(cvt_i16_f16(0x7c00), i16::MAX);
    assert_eq!(cvt_u16_f16(0xbc00), 0);
    assert_eq!(cvt_f32_i32(16_777_217, RoundMode::NearestEven), 16_777_216.0);
    assert_eq!(cvt_f32_i32(16_777_217, RoundMode::TowardPositive), 16_777_218.0);
    assert_eq!(cvt_f32_u32(u32::MAX, RoundMode::TowardZero), 4_294_967_040.0);
    assert_eq!(cvt_f16_u16(65535, RoundMode::NearestEven, false), 0x7c00);
    assert_eq!(cvt_f16_u16(65535, RoundMode::NearestEven, true), 0x7bff);
    assert_eq!(cvt_f16_u16(65535, RoundMode::TowardZero, false), 0x7bff);
    assert_eq!(cvt_f32_ubyte(0x1234_5678, 2), 0x34 as f32);
    // v_cvt_pkrtz truncates; v_cvt_pk_f16_f32 rounds to nearest even.
    let x = 1.0 + 3.0 / 4096.0;
    assert_eq!(cvt_pkrtz_f16_f32(x, -x), 0xbc00_3c00);
    assert_eq!(cvt_pk_f16_f32(x, 1e6), 0x7c00_3c01);
    assert_eq!(cvt_pk_f16_f32(x, 0.0) & 0xffff, f32_to_f16(x, RoundMode::NearestEven) as u32);
    assert_eq!(cvt_pk_bf16_f32(1.0, -2.0), 0xc000_3f80);
    assert_eq!(cvt_pknorm_i16_f32(1.0, -2.0), 0x8001_7fff);
    assert_eq!(cvt_pknorm_u16_f32(0.5, f32::NAN), 0x0000_8000);
    assert_eq!(cvt_pk_u8_f32(300.0, 1, 0xaabb_ccdd), 0xaabb_ffdd);
    assert_eq!(cvt_pk_u8_f32(2.5, 3, 0), 0x0200_0000);
    // Small table conversions and norms from f16.
    assert_eq!(cvt_off_f32_i4(0x7), 0.4375);
    assert_eq!(cvt_off_f32_i4(0x8), -0.5);
    assert_eq!(cvt_off_f32_i4(0xffff_fff9), -0.4375);
    assert_eq!(cvt_norm_i16_f16(0xbc00), -32767);
    assert_eq!(cvt_norm_i16_f16(0x7e00), 0);
    assert_eq!(cvt_norm_u16_f16(0x3800), 32768); // 0.5 * 65535 = 32767.5 -> even
    assert_eq!(cvt_norm_u16_f16(0x4000), 65535);
    // f16 rounding ops
    assert_eq!(fract_f16(0x3e00), 0x3800); // 1.5 -> 0.5
    assert_eq!(fract_f16(0x8001), 0x3bff); // tiny negative -> largest below 1
    assert_eq!(fract_f16(0x7c00), 0x7e00);
    assert_eq!(trunc_f16(0xbe00), 0xbc00); // -1.5 -> -1
    assert_eq!(ceil_f16(0x3e00), 0x4000); // 1.5 -> 2
    assert_eq!(floor_f16(0xbe00), 0xc000); // -1.5 -> -2
    assert_eq!(rndne_f16(0x4100), 0x4000); // 2.5 -> 2
    assert_eq!(rndne_f16(0x7c01), 0x7e01);
    // frexp specials and f16 forms
    assert_eq!(frexp_exp_f32(f32::INFINITY), 0);
    assert!(frexp_mant_f32(f32::NAN).is_nan());
    assert_eq!(frexp_exp_f32(f32::from_bits(1)), -148);
    assert_eq!(frexp_mant_f16(0x4200), 0x3a00); // 3.0 = 0.75 * 2^2
    assert_eq!(frexp_exp_f16(0x4200), 2);
    assert_eq!(ldexp_f16(0x3c00, 16, RoundMode::NearestEven, false), 0x7c00);
    assert_eq!(ldexp_f16(0x3c00, 16, RoundMode::NearestEven, true), 0x7bff);
    assert_eq!(ldexp_f16(0x3c00, -24, RoundMode::NearestEven, false), 0x0001);
    assert_eq!(ldexp_f32(1.0, -149), f32::from_bits(1));
    assert_eq!(ldexp_f32(1.5, -149), f32::from_bits(2));
    assert_eq!(ldexp_f64(1.0, -1074), f64::from_bits(1));
    assert_eq!(ldexp_f64(1.0, 1024), f64::INFINITY);
}

#[test]
fn class_masks() {
    let values: [(f32, u32); 10] = [
        (SNAN, 0),
        (QNAN, 1),
        (f32::NEG_INFINITY, 2),
        (-1.0, 3),
        (-f32::from_bits(1), 4),
        (-0.0, 5),
        (0.0, 6),
        (f32::from_bits(1), 7),
        (1.0, 8),
        (f32::INFINITY, 9),
    ];
    for (x, idx) in values {
        for bit in 0..10 {
            assert_eq!(class_f32(x, 1 << bit), bit == idx, "{x:?} bit {bit}");
            // f32 denormals are normal f64 values.
            let idx64 = match idx { 4 => 3, 7 => 8, other => other };
            assert_eq!(class_f64(widen(x), 1 << bit), bit == idx64, "f64 {x:?} bit {bit}");
        }
    }
    assert!(class_f16(0x7c01, 1));
    assert!(class_f16(0x7e00, 2));
    assert!(class_f16(0x8001, 1 << 4));
    assert!(class_f16(0xfc00, 1 << 2));
}
