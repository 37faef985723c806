//! VALU floating-point operation semantics: modifiers, min/max rules, arithmetic in every
//! rounding mode, the division helpers, frexp/ldexp/fract/rounding and float<->int
//! conversions. f16 operands and results are raw `u16` bits.
//!
//! Order of evaluation of a VOP3 float op, as modelled here:
//! 1. source modifiers: `abs` clears the sign, then `neg` flips it ([`src_f32`]);
//! 2. input denormal flush per MODE ([`Mode::flush_in_f32`]);
//! 3. the operation, rounded once in MODE's rounding direction;
//! 4. output modifiers ([`output_f32`]): `omod` scales (ignored when MODE.IEEE is set, as
//!    LLVM documents; a nonzero result it scales into the denormal range flushes to a zero of
//!    its sign, and a zero result comes out as +0, since omod does not preserve signed
//!    zeros), then `clamp`
//!    limits to [0, 1] (negative values and -0 become +0; NaN becomes +0 with DX10_CLAMP,
//!    passes through otherwise), then output denormal flush per MODE.
//!
//! The min/max functions follow the CDNA3/CDNA4 ISA pseudocode literally, including its
//! asymmetry: with IEEE set a signalling NaN operand is quieted and *returned*; a quiet NaN
//! operand is ignored (the other operand is returned); `-0 < +0`; and `v_max` in IEEE mode
//! picks `S0` on equality (`>=`) where non-IEEE mode uses `>`.

use super::convert::{f16_is_nan, f16_is_snan, f16_to_f32, round_to_odd};
use super::mode::Mode;
use super::round::{round_to_format, split_f64, Format, RoundMode, Rounded};

/// f32 quiet-NaN bit.
const F32_QUIET: u32 = 0x0040_0000;
/// f64 quiet-NaN bit.
const F64_QUIET: u64 = 0x0008_0000_0000_0000;

// ---------------------------------------------------------------------------------------
// Modifiers
// ---------------------------------------------------------------------------------------

/// Applies VOP3 source modifiers to an f32: `abs` first, then `neg` (pure sign-bit ops).
#[inline]
pub fn src_f32(x: f32, abs: bool, neg: bool) -> f32 {
    let bits = x.to_bits() & !((abs as u32) << 31);
    f32::from_bits(bits ^ ((neg as u32) << 31))
}

/// Applies VOP3 source modifiers to an f64.
#[inline]
pub fn src_f64(x: f64, abs: bool, neg: bool) -> f64 {
    let bits = x.to_bits() & !((abs as u64) << 63);
    f64::from_bits(bits ^ ((neg as u64) << 63))
}

/// Applies VOP3 source modifiers to f16 bits.
#[inline]
pub const fn src_f16(h: u16, abs: bool, neg: bool) -> u16 {
    (h & !((abs as u16) << 15)) ^ ((neg as u16) << 15)
}

/// The VOP3 OMOD output multiplier (2-bit field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OutputModifier {
    /// 0: no scaling.
    #[default]
    None = 0,
    /// 1: multiply by 2.
    Mul2 = 1,
    /// 2: multiply by 4.
    Mul4 = 2,
    /// 3: divide by 2.
    Div2 = 3,
}

impl OutputModifier {
    /// Decodes the 2-bit OMOD field (higher bits ignored).
    #[inline]
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::None,
            1 => Self::Mul2,
            2 => Self::Mul4,
            _ => Self::Div2,
        }
    }

    /// The scale factor.
    #[inline]
    pub const fn factor(self) -> f32 {
        match self {
            Self::None => 1.0,
            Self::Mul2 => 2.0,
            Self::Mul4 => 4.0,
            Self::Div2 => 0.5,
        }
    }
}

/// The clamp modifier on a float result: NaN -> +0 with DX10_CLAMP (else NaN passes),
/// values below zero (and -0) -> +0, values above one -> 1.
#[inline]
#[allow(clippy::manual_clamp)] // f32::clamp would keep -0; the hardware returns +0
pub fn clamp_f32(x: f32, dx10_clamp: bool) -> f32 {
    if x.is_nan() {
        return if dx10_clamp { 0.0 } else { x };
    }
    if x <= 0.0 {
        0.0
    } else if x > 1.0 {
        1.0
    } else {
        x
    }
}

/// The clamp modifier on an f64 result (same rules as [`clamp_f32`]).
#[inline]
#[allow(clippy::manual_clamp)] // f64::clamp would keep -0; the hardware returns +0
pub fn clamp_f64(x: f64, dx10_clamp: bool) -> f64 {
    if x.is_nan() {
        return if dx10_clamp { 0.0 } else { x };
    }
    if x <= 0.0 {
        0.0
    } else if x > 1.0 {
        1.0
    } else {
        x
    }
}

/// The clamp modifier on an f16 result (same rules as [`clamp_f32`]).
#[inline]
pub fn clamp_f16(h: u16, dx10_clamp: bool) -> u16 {
    if f16_is_nan(h) {
        return if dx10_clamp { 0 } else { h };
    }
    if h & 0x8000 != 0 {
        0
    } else if h > 0x3c00 {
        0x3c00
    } else {
        h
    }
}

/// Output stage of an f32 VOP3 op: omod (skipped when MODE.IEEE), clamp, output denormal
/// flush. With omod applied, a nonzero result scaled into the denormal range flushes to a
/// signed zero and zero results are +0.
#[inline]
pub fn output_f32(x: f32, omod: OutputModifier, clamp: bool, mode: Mode) -> f32 {
    let mut y = x;
    if omod != OutputModifier::None && !mode.ieee {
        // A zero result comes out +0; a nonzero one scaled below the normal range
        // flushes to a zero of its sign.
        y = if y == 0.0 { 0.0 } else { super::mode::flush_f32(y * omod.factor(), true) };
    }
    if clamp {
        y = clamp_f32(y, mode.dx10_clamp);
    }
    mode.flush_out_f32(y)
}

/// Output stage of an f64 VOP3 op (see [`output_f32`]).
#[inline]
pub fn output_f64(x: f64, omod: OutputModifier, clamp: bool, mode: Mode) -> f64 {
    let mut y = x;
    if omod != OutputModifier::None && !mode.ieee {
        y = if y == 0.0 { 0.0 } else { super::mode::flush_f64(y * omod.factor() as f64, true) };
    }
    if clamp {
        y = clamp_f64(y, mode.dx10_clamp);
    }
    mode.flush_out_f64(y)
}

/// Output stage of an f16 VOP3 op (see [`output_f32`]); scaling is exact before rounding
/// back to f16 in MODE's f16 rounding direction, with FP16_OVFL saturation.
#[inline]
pub fn output_f16(h: u16, omod: OutputModifier, clamp: bool, mode: Mode) -> u16 {
    let mut y = h;
    if omod != OutputModifier::None && !mode.ieee && !f16_is_nan(h) {
        if h & 0x7fff == 0 {
            y = 0;
        } else {
            let scaled = f16_to_f32(h) * omod.factor();
            y = super::convert::f32_to_f16_sat(scaled, mode.round_f16_f64, mode.fp16_ovfl);
            y = super::mode::flush_f16_bits(y, true);
        }
    }
    if clamp {
        y = clamp_f16(y, mode.dx10_clamp);
    }
    mode.flush_out_f16(y)
}

// ---------------------------------------------------------------------------------------
// min / max
// ---------------------------------------------------------------------------------------

/// True for a signalling f32 NaN.
#[inline]
pub fn f32_is_snan(x: f32) -> bool {
    x.is_nan() && x.to_bits() & F32_QUIET == 0
}

/// True for a signalling f64 NaN.
#[inline]
pub fn f64_is_snan(x: f64) -> bool {
    x.is_nan() && x.to_bits() & F64_QUIET == 0
}

/// Sets the quiet bit of an f32 NaN (identity on other values).
#[inline]
pub fn quiet_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(x.to_bits() | F32_QUIET)
    } else {
        x
    }
}

/// Sets the quiet bit of an f64 NaN.
#[inline]
pub fn quiet_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(x.to_bits() | F64_QUIET)
    } else {
        x
    }
}

/// Sets the quiet bit of an f16 NaN.
#[inline]
pub const fn quiet_f16(h: u16) -> u16 {
    if f16_is_nan(h) {
        h | 0x0200
    } else {
        h
    }
}

macro_rules! minmax_float {
    ($min:ident, $max:ident, $ty:ty, $snan:ident, $quiet:ident) => {
        /// `v_min_*`: IEEE-mode sNaN quieting, quiet-NaN operands ignored, -0 < +0,
        /// otherwise `S0 < S1 ? S0 : S1`.
        #[inline]
        pub fn $min(s0: $ty, s1: $ty, ieee: bool) -> $ty {
            if ieee && $snan(s0) {
                return $quiet(s0);
            }
            if ieee && $snan(s1) {
                return $quiet(s1);
            }
            if s0.is_nan() {
                return s1;
            }
            if s1.is_nan() {
                return s0;
            }
            if s0 == 0.0 && s1 == 0.0 {
                return if s0.is_sign_negative() { s0 } else { s1 };
            }
            if s0 < s1 {
                s0
            } else {
                s1
            }
        }

        /// `v_max_*`: IEEE-mode sNaN quieting, quiet-NaN operands ignored, +0 > -0,
        /// otherwise `S0 >= S1 ? S0 : S1` (IEEE mode) or `S0 > S1 ? S0 : S1`.
        #[inline]
        pub fn $max(s0: $ty, s1: $ty, ieee: bool) -> $ty {
            if ieee && $snan(s0) {
                return $quiet(s0);
            }
            if ieee && $snan(s1) {
                return $quiet(s1);
            }
            if s0.is_nan() {
                return s1;
            }
            if s1.is_nan() {
                return s0;
            }
            if s0 == 0.0 && s1 == 0.0 {
                return if s0.is_sign_negative() { s1 } else { s0 };
            }
            let pick_s0 = if ieee { s0 >= s1 } else { s0 > s1 };
            if pick_s0 {
                s0
            } else {
                s1
            }
        }
    };
}

minmax_float!(min_f32, max_f32, f32, f32_is_snan, quiet_f32);
minmax_float!(min_f64, max_f64, f64, f64_is_snan, quiet_f64);

/// `v_min_f16` on raw bits (same rules as [`min_f32`]).
#[inline]
pub fn min_f16(s0: u16, s1: u16, ieee: bool) -> u16 {
    if ieee && f16_is_snan(s0) {
        return quiet_f16(s0);
    }
    if ieee && f16_is_snan(s1) {
        return quiet_f16(s1);
    }
    if f16_is_nan(s0) {
        return s1;
    }
    if f16_is_nan(s1) {
        return s0;
    }
    let (a, b) = (f16_to_f32(s0), f16_to_f32(s1));
    if a == 0.0 && b == 0.0 {
        return if s0 & 0x8000 != 0 { s0 } else { s1 };
    }
    if a < b {
        s0
    } else {
        s1
    }
}

/// `v_max_f16` on raw bits (same rules as [`max_f32`]).
#[inline]
pub fn max_f16(s0: u16, s1: u16, ieee: bool) -> u16 {
    if ieee && f16_is_snan(s0) {
        return quiet_f16(s0);
    }
    if ieee && f16_is_snan(s1) {
        return quiet_f16(s1);
    }
    if f16_is_nan(s0) {
        return s1;
    }
    if f16_is_nan(s1) {
        return s0;
    }
    let (a, b) = (f16_to_f32(s0), f16_to_f32(s1));
    if a == 0.0 && b == 0.0 {
        return if s0 & 0x8000 != 0 { s1 } else { s0 };
    }
    let pick_s0 = if ieee { a >= b } else { a > b };
    if pick_s0 {
        s0
    } else {
        s1
    }
}

/// `v_min3_f32`: `min(min(S0, S1), S2)`.
#[inline]
pub fn min3_f32(s0: f32, s1: f32, s2: f32, ieee: bool) -> f32 {
    min_f32(min_f32(s0, s1, ieee), s2, ieee)
}

/// `v_max3_f32`: `max(max(S0, S1), S2)`.
#[inline]
pub fn max3_f32(s0: f32, s1: f32, s2: f32, ieee: bool) -> f32 {
    max_f32(max_f32(s0, s1, ieee), s2, ieee)
}

/// `v_med3_f32`: with any NaN operand, `min3`; otherwise the max of the two operands that
/// are not the max3 (S0 is tested first, then S1).
#[inline]
pub fn med3_f32(s0: f32, s1: f32, s2: f32, ieee: bool) -> f32 {
    if s0.is_nan() || s1.is_nan() || s2.is_nan() {
        return min3_f32(s0, s1, s2, ieee);
    }
    let m = max3_f32(s0, s1, s2, ieee);
    if m == s0 {
        max_f32(s1, s2, ieee)
    } else if m == s1 {
        max_f32(s0, s2, ieee)
    } else {
        max_f32(s0, s1, ieee)
    }
}

/// `v_min3_f16` on raw bits.
#[inline]
pub fn min3_f16(s0: u16, s1: u16, s2: u16, ieee: bool) -> u16 {
    min_f16(min_f16(s0, s1, ieee), s2, ieee)
}

/// `v_max3_f16` on raw bits.
#[inline]
pub fn max3_f16(s0: u16, s1: u16, s2: u16, ieee: bool) -> u16 {
    max_f16(max_f16(s0, s1, ieee), s2, ieee)
}

/// `v_med3_f16` on raw bits (see [`med3_f32`]).
#[inline]
pub fn med3_f16(s0: u16, s1: u16, s2: u16, ieee: bool) -> u16 {
    if f16_is_nan(s0) || f16_is_nan(s1) || f16_is_nan(s2) {
        return min3_f16(s0, s1, s2, ieee);
    }
    let m = f16_to_f32(max3_f16(s0, s1, s2, ieee));
    if m == f16_to_f32(s0) {
        max_f16(s1, s2, ieee)
    } else if m == f16_to_f32(s1) {
        max_f16(s0, s2, ieee)
    } else {
        max_f16(s0, s1, ieee)
    }
}

/// IEEE 754-2019 `minimum` (gfx950 `v_minimum3_f32` building block): any NaN operand gives
/// that NaN quieted (S0 first); `-0 < +0`.
#[inline]
pub fn minimum_f32(s0: f32, s1: f32) -> f32 {
    if s0.is_nan() {
        return quiet_f32(s0);
    }
    if s1.is_nan() {
        return quiet_f32(s1);
    }
    if s0 == 0.0 && s1 == 0.0 {
        return if s0.is_sign_negative() { s0 } else { s1 };
    }
    if s0 < s1 {
        s0
    } else {
        s1
    }
}

/// IEEE 754-2019 `maximum`: any NaN operand gives that NaN quieted; `+0 > -0`.
#[inline]
pub fn maximum_f32(s0: f32, s1: f32) -> f32 {
    if s0.is_nan() {
        return quiet_f32(s0);
    }
    if s1.is_nan() {
        return quiet_f32(s1);
    }
    if s0 == 0.0 && s1 == 0.0 {
        return if s0.is_sign_negative() { s1 } else { s0 };
    }
    if s0 > s1 {
        s0
    } else {
        s1
    }
}

/// gfx950 `v_minimum3_f32`.
#[inline]
pub fn minimum3_f32(s0: f32, s1: f32, s2: f32) -> f32 {
    minimum_f32(minimum_f32(s0, s1), s2)
}

/// gfx950 `v_maximum3_f32`.
#[inline]
pub fn maximum3_f32(s0: f32, s1: f32, s2: f32) -> f32 {
    maximum_f32(maximum_f32(s0, s1), s2)
}

/// IEEE 754-2019 `minimum` on f16 bits (for `v_pk_minimum3_f16`).
#[inline]
pub fn minimum_f16(s0: u16, s1: u16) -> u16 {
    if f16_is_nan(s0) {
        return quiet_f16(s0);
    }
    if f16_is_nan(s1) {
        return quiet_f16(s1);
    }
    let (a, b) = (f16_to_f32(s0), f16_to_f32(s1));
    if a == 0.0 && b == 0.0 {
        return if s0 & 0x8000 != 0 { s0 } else { s1 };
    }
    if a < b {
        s0
    } else {
        s1
    }
}

/// IEEE 754-2019 `maximum` on f16 bits (for `v_pk_maximum3_f16`).
#[inline]
pub fn maximum_f16(s0: u16, s1: u16) -> u16 {
    if f16_is_nan(s0) {
        return quiet_f16(s0);
    }
    if f16_is_nan(s1) {
        return quiet_f16(s1);
    }
    let (a, b) = (f16_to_f32(s0), f16_to_f32(s1));
    if a == 0.0 && b == 0.0 {
        return if s0 & 0x8000 != 0 { s1 } else { s0 };
    }
    if a > b {
        s0
    } else {
        s1
    }
}

// ---------------------------------------------------------------------------------------
// Arithmetic in every rounding mode
// ---------------------------------------------------------------------------------------

/// Rounds the exact value `hi + lo` (an error-free pair) into f32 with `rm`.
#[inline]
fn pair_to_f32(hi: f64, lo: f64, rm: RoundMode) -> f32 {
    let odd = round_to_odd(hi, lo);
    let (negative, sig, exp) = split_f64(odd);
    let magnitude = match round_to_format(negative, sig, exp, false, Format::F32, rm) {
        Rounded::Finite(enc) => enc as u32,
        Rounded::Overflow => {
            if rm.overflows_to_infinity(negative) {
                0x7f80_0000
            } else {
                0x7f7f_ffff
            }
        }
    };
    f32::from_bits(((negative as u32) << 31) | magnitude)
}

/// Rounds the exact value `hi + lo` into f16 bits with `rm` (IEEE overflow unless
/// `saturate`).
#[inline]
fn pair_to_f16(hi: f64, lo: f64, rm: RoundMode, saturate: bool) -> u16 {
    let odd = round_to_odd(hi, lo);
    let (negative, sig, exp) = split_f64(odd);
    let magnitude = match round_to_format(negative, sig, exp, false, Format::F16, rm) {
        Rounded::Finite(enc) => enc as u16,
        Rounded::Overflow => {
            if !saturate && rm.overflows_to_infinity(negative) {
                0x7c00
            } else {
                0x7bff
            }
        }
    };
    ((negative as u16) << 15) | magnitude
}

/// Error-free sum: `(s, e)` with `s = RN(a + b)` and `a + b = s + e` exactly.
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Sign of an exact zero sum `a + b` in `rm` (IEEE: -0 only for -0 + -0, or any exact
/// cancellation under round-toward-negative).
#[inline]
fn zero_sum_negative(a_neg: bool, b_neg: bool, rm: RoundMode) -> bool {
    if rm == RoundMode::TowardNegative {
        a_neg || b_neg
    } else {
        a_neg && b_neg
    }
}

/// `a + b` in f32, rounded with `rm` (correct in all modes; NaN/Inf follow IEEE).
#[inline]
pub fn add_f32(a: f32, b: f32, rm: RoundMode) -> f32 {
    if rm == RoundMode::NearestEven || !a.is_finite() || !b.is_finite() {
        return a + b;
    }
    let (s, e) = two_sum(a as f64, b as f64);
    if s == 0.0 && e == 0.0 {
        let negative = zero_sum_negative(a.is_sign_negative(), b.is_sign_negative(), rm);
        return if negative { -0.0 } else { 0.0 };
    }
    pair_to_f32(s, e, rm)
}

/// `a - b` in f32 with `rm`.
#[inline]
pub fn sub_f32(a: f32, b: f32, rm: RoundMode) -> f32 {
    add_f32(a, -b, rm)
}

/// `a * b` in f32 with `rm` (the f64 product is exact).
#[inline]
pub fn mul_f32(a: f32, b: f32, rm: RoundMode) -> f32 {
    if rm == RoundMode::NearestEven || !a.is_finite() || !b.is_finite() {
        return a * b;
    }
    let p = a as f64 * b as f64;
    if p == 0.0 {
        return p as f32;
    }
    pair_to_f32(p, 0.0, rm)
}

/// Fused `a * b + c` in f32 rounded once to nearest even, without a libm `fmaf` call:
/// the product is exact in f64, the sum is made exact with a two-sum, and the pair is
/// rounded to odd in f64 so the final f64 -> f32 rounding is correct (53 >= 24 + 2).
/// Branch-free, so loops over lanes vectorize; equal to `a.mul_add(b, c)` for all inputs
/// (NaN payloads aside).
#[inline]
pub fn fma_f32_rne(a: f32, b: f32, c: f32) -> f32 {
    let p = a as f64 * b as f64;
    let z = c as f64;
    let s = p + z;
    let bb = s - p;
    let e = (p - (s - bb)) + (z - bb);
    let inexact = (e != 0.0) & s.is_finite();
    let overshoot = inexact & ((e < 0.0) != (s < 0.0));
    let bits = (s.to_bits() - overshoot as u64) | inexact as u64;
    f64::from_bits(bits) as f32
}

/// Fused `a * b + c` in f32 with `rm`, rounded once (`v_fma_f32`, `v_fmac_f32`).
#[inline]
pub fn fma_f32(a: f32, b: f32, c: f32, rm: RoundMode) -> f32 {
    if rm == RoundMode::NearestEven {
        return fma_f32_rne(a, b, c);
    }
    if !a.is_finite() || !b.is_finite() || !c.is_finite() {
        return a.mul_add(b, c);
    }
    let p = a as f64 * b as f64;
    let (s, e) = two_sum(p, c as f64);
    if s == 0.0 && e == 0.0 {
        let negative = zero_sum_negative(p.is_sign_negative(), c.is_sign_negative(), rm);
        return if negative { -0.0 } else { 0.0 };
    }
    pair_to_f32(s, e, rm)
}

/// Unfused `a * b + c` with two roundings (`v_mad_f32`, `v_mac_f32`).
#[inline]
pub fn mad_f32(a: f32, b: f32, c: f32, rm: RoundMode) -> f32 {
    add_f32(mul_f32(a, b, rm), c, rm)
}

/// `v_mad_f32` / `v_mac_f32` as the hardware evaluates them: unfused, two roundings, and
/// f32 denormals flushed on input, after the multiply and on output regardless of
/// MODE.FP_DENORM (LLVM only selects these instructions when f32 denormals are flushed,
/// because the legacy MAD path does not support them).
#[inline]
pub fn mad_f32_legacy(a: f32, b: f32, c: f32, rm: RoundMode) -> f32 {
    use super::mode::flush_f32;
    let (a, b, c) = (flush_f32(a, true), flush_f32(b, true), flush_f32(c, true));
    flush_f32(add_f32(flush_f32(mul_f32(a, b, rm), true), c, rm), true)
}

/// `v_mad_legacy_f32` (gfx90a): [`mad_f32_legacy`] with the DX9 product rule of
/// [`mul_legacy_f32`] (a zero factor makes the product +0 whatever the other factor).
#[inline]
pub fn mad_legacy_f32(a: f32, b: f32, c: f32, rm: RoundMode) -> f32 {
    use super::mode::flush_f32;
    let (a, b, c) = (flush_f32(a, true), flush_f32(b, true), flush_f32(c, true));
    let product = if a == 0.0 || b == 0.0 { 0.0 } else { flush_f32(mul_f32(a, b, rm), true) };
    flush_f32(add_f32(product, c, rm), true)
}

/// `v_mad_f16` / `v_mac_f16` / `v_madak_f16` / `v_madmk_f16` / `v_mad_legacy_f16` on bits:
/// unfused, the product rounded to f16 before the add, f16 denormals flushed on input,
/// after the multiply and on output whatever MODE says (the ISA: "denormals are flushed";
/// the same legacy MAD path as [`mad_f32_legacy`]).
#[inline]
pub fn mad_f16(a: u16, b: u16, c: u16, rm: RoundMode, saturate: bool) -> u16 {
    use super::mode::flush_f16_bits;
    let (a, b, c) = (flush_f16_bits(a, true), flush_f16_bits(b, true), flush_f16_bits(c, true));
    let product = flush_f16_bits(mul_f16(a, b, rm, saturate), true);
    flush_f16_bits(add_f16(product, c, rm, saturate), true)
}

/// `a + b` on f16 bits with `rm`; the f64 sum of two f16 values is exact.
#[inline]
pub fn add_f16(a: u16, b: u16, rm: RoundMode, saturate: bool) -> u16 {
    let (x, y) = (f16_to_f32(a) as f64, f16_to_f32(b) as f64);
    finish_f16(x + y, Some((x, y)), rm, saturate)
}

/// `a * b` on f16 bits with `rm`; the f64 product is exact.
#[inline]
pub fn mul_f16(a: u16, b: u16, rm: RoundMode, saturate: bool) -> u16 {
    let p = f16_to_f32(a) as f64 * f16_to_f32(b) as f64;
    finish_f16(p, None, rm, saturate)
}

/// Fused `a * b + c` on f16 bits with `rm`, rounded once (`v_fma_f16`, `v_pk_fma_f16`).
#[inline]
pub fn fma_f16(a: u16, b: u16, c: u16, rm: RoundMode, saturate: bool) -> u16 {
    let p = f16_to_f32(a) as f64 * f16_to_f32(b) as f64;
    let z = f16_to_f32(c) as f64;
    if !p.is_finite() || !z.is_finite() {
        return finish_f16(p + z, Some((p, z)), rm, saturate);
    }
    let (s, e) = two_sum(p, z);
    if s == 0.0 && e == 0.0 {
        let negative = zero_sum_negative(p.is_sign_negative(), z.is_sign_negative(), rm);
        return (negative as u16) << 15;
    }
    pair_to_f16(s, e, rm, saturate)
}

/// Rounds an exact f64 result of two f16 operands to f16. `addends` is `Some((x, y))` for a
/// sum (an exact zero then takes the IEEE sum sign for `rm`) and `None` for a product (the
/// zero keeps its sign).
#[inline]
fn finish_f16(exact: f64, addends: Option<(f64, f64)>, rm: RoundMode, saturate: bool) -> u16 {
    if exact.is_nan() {
        return 0x7e00 | ((exact.is_sign_negative() as u16) << 15);
    }
    if exact.is_infinite() {
        return if exact < 0.0 { 0xfc00 } else { 0x7c00 };
    }
    if exact == 0.0 {
        let negative = match addends {
            Some((x, y)) => zero_sum_negative(x.is_sign_negative(), y.is_sign_negative(), rm),
            None => exact.is_sign_negative(),
        };
        return (negative as u16) << 15;
    }
    pair_to_f16(exact, 0.0, rm, saturate)
}

/// `a + b` in f64 with `rm` (directed modes from the exact two-sum error).
#[inline]
pub fn add_f64(a: f64, b: f64, rm: RoundMode) -> f64 {
    let s = a + b;
    if rm == RoundMode::NearestEven || !a.is_finite() || !b.is_finite() {
        return s;
    }
    if s.is_infinite() {
        return overflow_f64(s < 0.0, rm);
    }
    let (s, e) = two_sum(a, b);
    if s == 0.0 && e == 0.0 {
        let negative = zero_sum_negative(a.is_sign_negative(), b.is_sign_negative(), rm);
        return if negative { -0.0 } else { 0.0 };
    }
    directed_f64(s, e, rm)
}

/// `a * b` in f64 with `rm` (directed modes from the exact fma residual).
#[inline]
pub fn mul_f64(a: f64, b: f64, rm: RoundMode) -> f64 {
    let p = a * b;
    if rm == RoundMode::NearestEven || !a.is_finite() || !b.is_finite() || p == 0.0 {
        return p;
    }
    if p.is_infinite() {
        return overflow_f64(p < 0.0, rm);
    }
    // The residual is exact unless the product is deep in the denormal range, where the
    // result is then within one denormal ulp; that case is tolerated (see module docs).
    let e = a.mul_add(b, -p);
    directed_f64(p, e, rm)
}

/// Moves the nearest-even result `s` one ulp in the rounding direction when the exact
/// residual `e` says it is on the wrong side.
#[inline]
fn directed_f64(s: f64, e: f64, rm: RoundMode) -> f64 {
    if e == 0.0 {
        return s;
    }
    let step_up = match rm {
        RoundMode::TowardPositive => e > 0.0,
        RoundMode::TowardNegative => false,
        RoundMode::TowardZero => s < 0.0 && e > 0.0,
        RoundMode::NearestEven => false,
    };
    let step_down = match rm {
        RoundMode::TowardNegative => e < 0.0,
        RoundMode::TowardZero => s > 0.0 && e < 0.0,
        _ => false,
    };
    if step_up {
        next_toward_f64(s, true)
    } else if step_down {
        next_toward_f64(s, false)
    } else {
        s
    }
}

/// The neighbouring f64 of a finite, nonzero `s` toward +Inf (`up`) or -Inf.
#[inline]
fn next_toward_f64(s: f64, up: bool) -> f64 {
    let bits = s.to_bits();
    // Moving away from zero increments the magnitude bits, toward zero decrements them.
    let away = up != s.is_sign_negative();
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

/// IEEE overflow result of f64 for `rm`.
#[inline]
fn overflow_f64(negative: bool, rm: RoundMode) -> f64 {
    let magnitude = if rm.overflows_to_infinity(negative) { f64::INFINITY } else { f64::MAX };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `v_mul_legacy_f32`: DX9 rule, `0 * anything` (including Inf and NaN) is +0.
#[inline]
pub fn mul_legacy_f32(a: f32, b: f32, rm: RoundMode) -> f32 {
    if a == 0.0 || b == 0.0 {
        0.0
    } else {
        mul_f32(a, b, rm)
    }
}

// ---------------------------------------------------------------------------------------
// Division helpers
// ---------------------------------------------------------------------------------------

/// Biased exponent field of an f32.
#[inline]
fn exp_f32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

/// Biased exponent field of an f64.
#[inline]
fn exp_f64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// `x * 2^n` in f32, correctly rounded to nearest even (exact scaling in f64).
#[inline]
pub fn ldexp_f32(x: f32, n: i32) -> f32 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let n = n.clamp(-400, 400);
    (x as f64 * f64::from_bits(((n + 1023) as u64) << 52)) as f32
}

/// `x * 2^n` in f64, correctly rounded to nearest even (one rounding, denormals kept).
#[inline]
pub fn ldexp_f64(x: f64, n: i32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let (negative, sig, exp) = split_f64(x);
    let exp = exp.saturating_add(n.clamp(-4000, 4000));
    match round_to_format(negative, sig, exp, false, Format::F64, RoundMode::NearestEven) {
        Rounded::Finite(enc) => f64::from_bits(((negative as u64) << 63) | enc),
        Rounded::Overflow => overflow_f64(negative, RoundMode::NearestEven),
    }
}

/// True when `x` (a finite f64 holding an exact or rounded quotient) is below the f32
/// normal range but not zero.
#[inline]
fn is_f32_denorm_range(x: f64) -> bool {
    x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64
}

/// `v_div_scale_f32 D, VCC = S0, S1 (denominator), S2 (numerator)`: returns the possibly
/// pre-scaled S0 and the VCC bit that `v_div_fmas` consumes. Unscaled cases return S0.
///
/// Known gap: when the true quotient exceeds about 2^192 (or the f64 analogue), the
/// scaled quotient itself overflows inside the LLVM sequence and this model yields NaN
/// where hardware yields Inf; the public pseudocode does not say how that case is caught.
#[inline]
pub fn div_scale_f32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    let (e1, e2) = (exp_f32(s1), exp_f32(s2));
    let recip = 1.0 / s1 as f64;
    let quot = s2 as f64 / s1 as f64;
    if e2 - e1 >= 96 {
        let d = if s0 == s1 { ldexp_f32(s0, 64) } else { s0 };
        return (d, true);
    }
    if e1 == 0 {
        return (ldexp_f32(s0, 64), false);
    }
    if is_f32_denorm_range(recip) && is_f32_denorm_range(quot) {
        // The public text scales by +64 here, which would overflow a denominator above
        // 2^126; scaling it down (and letting v_div_fmas scale the small quotient down
        // again) is the reading that keeps the division sequence exact.
        let d = if s0 == s1 { ldexp_f32(s0, -64) } else { s0 };
        return (d, true);
    }
    if is_f32_denorm_range(recip) {
        return (ldexp_f32(s0, -64), false);
    }
    if is_f32_denorm_range(quot) {
        let d = if s0 == s2 { ldexp_f32(s0, 64) } else { s0 };
        return (d, true);
    }
    if e2 <= 23 {
        return (ldexp_f32(s0, 64), false);
    }
    (s0, false)
}

/// True when the exact quotient `n / d` of finite nonzero f64 values is below the f64
/// normal range.
#[inline]
fn f64_quotient_is_denorm(n: f64, d: f64) -> bool {
    let (mn, en) = frexp_f64(n);
    let (md, ed) = frexp_f64(d);
    let ratio = (mn / md).abs(); // in (0.5, 2)
    let e = en - ed;
    // value = ratio * 2^e < 2^-1022  <=>  ratio < 2^(-1022 - e)
    let bound = -1022 - e;
    if bound > 1 {
        return true;
    }
    if bound < -1 {
        return false;
    }
    ratio < f64::from_bits(((bound + 1023) as u64) << 52)
}

/// `v_div_scale_f64` (see [`div_scale_f32`]; scale 2^128, thresholds 768 and 53).
#[inline]
pub fn div_scale_f64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    let (e1, e2) = (exp_f64(s1), exp_f64(s2));
    let recip_denorm = s1.is_finite() && f64_quotient_is_denorm(1.0, s1);
    let quot_denorm = s1.is_finite() && s2.is_finite() && f64_quotient_is_denorm(s2, s1);
    if e2 - e1 >= 768 {
        let d = if s0 == s1 { ldexp_f64(s0, 128) } else { s0 };
        return (d, true);
    }
    if e1 == 0 {
        return (ldexp_f64(s0, 128), false);
    }
    if recip_denorm && quot_denorm {
        // See div_scale_f32: scale the huge denominator down, not up.
        let d = if s0 == s1 { ldexp_f64(s0, -128) } else { s0 };
        return (d, true);
    }
    if recip_denorm {
        return (ldexp_f64(s0, -128), false);
    }
    if quot_denorm {
        let d = if s0 == s2 { ldexp_f64(s0, 128) } else { s0 };
        return (d, true);
    }
    if e2 <= 53 {
        return (ldexp_f64(s0, 128), false);
    }
    (s0, false)
}

/// `v_div_fmas_f32`: `fma(S0, S1, S2)`; when VCC is set (a `v_div_scale` pre-scaled an
/// operand) the result is rescaled by 2^64 if `|S2| >= 2` (biased exponent above 127: the
/// denominator was scaled up) and by 2^-64 otherwise (the numerator was scaled up).
///
/// The public CDNA3 text renders the factor as `2.0 ** 32`; that cannot undo the 2^64
/// scaling `v_div_scale_f32` applies, so this model uses the exponent-directed 2^+-64 rule
/// (the one that makes the LLVM division sequence exact; tested end to end).
#[inline]
pub fn div_fmas_f32(s0: f32, s1: f32, s2: f32, vcc: bool, rm: RoundMode) -> f32 {
    if !vcc {
        return fma_f32(s0, s1, s2, rm);
    }
    let scale = if exp_f32(s2) > 127 { 64 } else { -64 };
    // One rounding: the fused result is formed exactly in f64 pairs, then scaled exactly
    // before the single rounding to f32.
    if !s0.is_finite() || !s1.is_finite() || !s2.is_finite() {
        return ldexp_f32(s0.mul_add(s1, s2), scale);
    }
    let p = s0 as f64 * s1 as f64;
    let (hi, lo) = two_sum(p, s2 as f64);
    let k = f64::from_bits(((scale + 1023) as u64) << 52);
    pair_to_f32(hi * k, lo * k, rm)
}

/// `v_div_fmas_f64`: `fma(S0, S1, S2)`, rescaled by 2^128 if `|S2| >= 2` and by 2^-128
/// otherwise when VCC is set (see [`div_fmas_f32`]).
#[inline]
pub fn div_fmas_f64(s0: f64, s1: f64, s2: f64, vcc: bool) -> f64 {
    let r = s0.mul_add(s1, s2);
    if !vcc {
        return r;
    }
    let scale = if exp_f64(s2) > 1023 { 128 } else { -128 };
    ldexp_f64(r, scale)
}

/// `v_div_fixup_f32 D = S0 (quotient), S1 (denominator), S2 (numerator)`: special cases of
/// `S2 / S1`, else `S0` with the quotient's sign. Underflow gives a signed zero and
/// overflow a signed Inf.
#[inline]
pub fn div_fixup_f32(s0: f32, s1: f32, s2: f32) -> f32 {
    let negative = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |m: f32| if negative { -m } else { m };
    if s2.is_nan() {
        return quiet_f32(s2);
    }
    if s1.is_nan() {
        return quiet_f32(s1);
    }
    if s1 == 0.0 && s2 == 0.0 {
        return f32::from_bits(0xffc0_0000);
    }
    if s1.is_infinite() && s2.is_infinite() {
        return f32::from_bits(0xffc0_0000);
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f32::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    if exp_f32(s2) - exp_f32(s1) < -150 {
        return signed(0.0);
    }
    signed(s0.abs())
}

/// `v_div_fixup_f64` (see [`div_fixup_f32`]).
#[inline]
pub fn div_fixup_f64(s0: f64, s1: f64, s2: f64) -> f64 {
    let negative = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |m: f64| if negative { -m } else { m };
    if s2.is_nan() {
        return quiet_f64(s2);
    }
    if s1.is_nan() {
        return quiet_f64(s1);
    }
    if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        return f64::from_bits(0xfff8_0000_0000_0000);
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f64::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    if exp_f64(s2) - exp_f64(s1) < -1075 {
        return signed(0.0);
    }
    signed(s0.abs())
}

/// `v_div_fixup_f16` on raw bits.
#[inline]
pub fn div_fixup_f16(s0: u16, s1: u16, s2: u16) -> u16 {
    let sign = (s1 ^ s2) & 0x8000;
    if f16_is_nan(s2) {
        return quiet_f16(s2);
    }
    if f16_is_nan(s1) {
        return quiet_f16(s1);
    }
    let (z1, z2) = (s1 & 0x7fff == 0, s2 & 0x7fff == 0);
    let (i1, i2) = (s1 & 0x7fff == 0x7c00, s2 & 0x7fff == 0x7c00);
    if (z1 && z2) || (i1 && i2) {
        return 0xfe00;
    }
    if z1 || i2 {
        return sign | 0x7c00;
    }
    if i1 || z2 {
        return sign;
    }
    sign | (s0 & 0x7fff)
}

// ---------------------------------------------------------------------------------------
// frexp, ldexp, fract, rounding to integral values
// ---------------------------------------------------------------------------------------

/// frexp of an f64: (mantissa in [0.5, 1) with the sign of x, exponent). Denormals are
/// normalized. Zero gives (x, 0); Inf and NaN give (x, 0).
#[inline]
pub fn frexp_f64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (negative, sig, exp) = split_f64(x);
    let lead = 63 - sig.leading_zeros() as i32;
    let e = exp + lead + 1;
    let fraction = (sig << (52 - lead)) & ((1u64 << 52) - 1);
    let m = f64::from_bits(((negative as u64) << 63) | (1022u64 << 52) | fraction);
    (m, e)
}

/// `v_frexp_mant_f32`: mantissa in [0.5, 1) with sign; Inf and NaN pass through.
#[inline]
pub fn frexp_mant_f32(x: f32) -> f32 {
    frexp_f64(x as f64).0 as f32
}

/// `v_frexp_exp_i32_f32`: the exponent such that `x = mant * 2^exp`; 0 for Inf/NaN/zero.
#[inline]
pub fn frexp_exp_f32(x: f32) -> i32 {
    frexp_f64(x as f64).1
}

/// `v_frexp_mant_f64`.
#[inline]
pub fn frexp_mant_f64(x: f64) -> f64 {
    frexp_f64(x).0
}

/// `v_frexp_exp_i32_f64`.
#[inline]
pub fn frexp_exp_f64(x: f64) -> i32 {
    frexp_f64(x).1
}

/// `v_frexp_mant_f16` on bits.
#[inline]
pub fn frexp_mant_f16(h: u16) -> u16 {
    if h & 0x7c00 == 0x7c00 {
        return h;
    }
    super::convert::f32_to_f16(frexp_mant_f32(f16_to_f32(h)), RoundMode::NearestEven)
}

/// `v_frexp_exp_i16_f16` on bits.
#[inline]
pub fn frexp_exp_f16(h: u16) -> i16 {
    frexp_exp_f32(f16_to_f32(h)) as i16
}

/// `v_ldexp_f16`: `S0 * 2^S1` rounded once in `rm` (S1 is the signed 16-bit exponent).
#[inline]
pub fn ldexp_f16(h: u16, n: i16, rm: RoundMode, saturate: bool) -> u16 {
    let x = f16_to_f32(h) as f64;
    if !x.is_finite() || x == 0.0 {
        return if f16_is_nan(h) { quiet_f16(h) } else { h };
    }
    let n = (n as i32).clamp(-100, 100);
    pair_to_f16(x * f64::from_bits(((n + 1023) as u64) << 52), 0.0, rm, saturate)
}

/// `v_fract_f32`: `x - floor(x)`, kept strictly below 1 (the largest f32 below 1 replaces a
/// result that rounds up to 1 for tiny negative inputs). Inf gives NaN, NaN passes (quiet).
#[inline]
pub fn fract_f32(x: f32) -> f32 {
    if x.is_infinite() {
        return f32::NAN;
    }
    if x.is_nan() {
        return quiet_f32(x);
    }
    let f = x - x.floor();
    f.min(f32::from_bits(0x3f7f_ffff))
}

/// `v_fract_f64` (see [`fract_f32`]).
#[inline]
pub fn fract_f64(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    if x.is_nan() {
        return quiet_f64(x);
    }
    let f = x - x.floor();
    f.min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// `v_trunc_f32`.
#[inline]
pub fn trunc_f32(x: f32) -> f32 {
    x.trunc()
}

/// `v_ceil_f32`.
#[inline]
pub fn ceil_f32(x: f32) -> f32 {
    x.ceil()
}

/// `v_floor_f32`.
#[inline]
pub fn floor_f32(x: f32) -> f32 {
    x.floor()
}

/// `v_rndne_f32`: round to nearest integral value, ties to even (IEEE roundToIntegral;
/// the sign of a zero result follows the input).
#[inline]
pub fn rndne_f32(x: f32) -> f32 {
    x.round_ties_even()
}

/// `v_rndne_f64`.
#[inline]
pub fn rndne_f64(x: f64) -> f64 {
    x.round_ties_even()
}

// ---------------------------------------------------------------------------------------
// Conversions between floats and integers
// ---------------------------------------------------------------------------------------

/// `v_cvt_i32_f32`: truncation toward zero, saturating to the i32 range; NaN -> 0.
#[inline]
pub fn cvt_i32_f32(x: f32) -> i32 {
    x as i32
}

/// `v_cvt_u32_f32`: truncation, saturating to [0, 2^32-1]; NaN -> 0.
#[inline]
pub fn cvt_u32_f32(x: f32) -> u32 {
    x as u32
}

/// `v_cvt_i32_f64`.
#[inline]
pub fn cvt_i32_f64(x: f64) -> i32 {
    x as i32
}

/// `v_cvt_u32_f64`.
#[inline]
pub fn cvt_u32_f64(x: f64) -> u32 {
    x as u32
}

/// `v_cvt_rpi_i32_f32`: `floor(x + 0.5)` then saturating conversion.
#[inline]
pub fn cvt_rpi_i32_f32(x: f32) -> i32 {
    (x + 0.5).floor() as i32
}

/// `v_cvt_flr_i32_f32`: `floor(x)` then saturating conversion.
#[inline]
pub fn cvt_flr_i32_f32(x: f32) -> i32 {
    x.floor() as i32
}

/// `v_cvt_i16_f16` (bits in, i16 out): truncation, saturating, NaN -> 0.
#[inline]
pub fn cvt_i16_f16(h: u16) -> i16 {
    f16_to_f32(h) as i16
}

/// `v_cvt_u16_f16`.
#[inline]
pub fn cvt_u16_f16(h: u16) -> u16 {
    f16_to_f32(h) as u16
}

/// `v_cvt_f32_i32` rounded with `rm`.
#[inline]
pub fn cvt_f32_i32(v: i32, rm: RoundMode) -> f32 {
    super::convert::f64_to_f32(v as f64, rm)
}

/// `v_cvt_f32_u32` rounded with `rm`.
#[inline]
pub fn cvt_f32_u32(v: u32, rm: RoundMode) -> f32 {
    super::convert::f64_to_f32(v as f64, rm)
}

/// `v_cvt_f16_u16` rounded with `rm`: 65505..=65535 may round past f16's largest finite
/// value, to infinity, or to that value when `saturate` (MODE.FP16_OVFL).
#[inline]
pub fn cvt_f16_u16(v: u16, rm: RoundMode, saturate: bool) -> u16 {
    super::convert::f32_to_f16_sat(v as f32, rm, saturate)
}

/// `v_cvt_f16_i16` rounded with `rm` (magnitudes above 65504 overflow per IEEE).
#[inline]
pub fn cvt_f16_i16(v: i16, rm: RoundMode) -> u16 {
    super::convert::f64_to_f16(v as f64, rm)
}

/// `v_cvt_f32_ubyteN`: byte `n & 3` of `v` as an f32.
#[inline]
pub fn cvt_f32_ubyte(v: u32, n: u32) -> f32 {
    ((v >> ((n & 3) * 8)) & 0xff) as f32
}

/// `v_cvt_pkrtz_f16_f32`: two f32 -> f16 conversions rounding toward zero regardless of
/// MODE, S0 in the low half.
#[inline]
pub fn cvt_pkrtz_f16_f32(s0: f32, s1: f32) -> u32 {
    let lo = super::convert::f32_to_f16(s0, RoundMode::TowardZero) as u32;
    let hi = super::convert::f32_to_f16(s1, RoundMode::TowardZero) as u32;
    lo | (hi << 16)
}

/// `v_cvt_pk_f16_f32` (gfx950): round-to-nearest-even pair, S0 in the low half.
#[inline]
pub fn cvt_pk_f16_f32(s0: f32, s1: f32) -> u32 {
    let lo = super::convert::f32_to_f16(s0, RoundMode::NearestEven) as u32;
    let hi = super::convert::f32_to_f16(s1, RoundMode::NearestEven) as u32;
    lo | (hi << 16)
}

/// `v_cvt_pk_bf16_f32` (gfx950): round-to-nearest-even pair, S0 in the low half.
#[inline]
pub fn cvt_pk_bf16_f32(s0: f32, s1: f32) -> u32 {
    let lo = super::convert::f32_to_bf16(s0, RoundMode::NearestEven) as u32;
    let hi = super::convert::f32_to_bf16(s1, RoundMode::NearestEven) as u32;
    lo | (hi << 16)
}

/// `f32_to_snorm`: clamp to [-1, 1], scale by 32767, round to nearest even; NaN -> 0.
#[inline]
pub fn f32_to_snorm(x: f32) -> i16 {
    if x.is_nan() {
        return 0;
    }
    // The product is exact in f64: one rounding, to the nearest integer.
    (f64::from(x.clamp(-1.0, 1.0)) * 32767.0).round_ties_even() as i16
}

/// `f32_to_unorm`: clamp to [0, 1], scale by 65535, round to nearest even; NaN -> 0.
#[inline]
pub fn f32_to_unorm(x: f32) -> u16 {
    if x.is_nan() {
        return 0;
    }
    // The product is exact in f64: one rounding, to the nearest integer.
    (f64::from(x.clamp(0.0, 1.0)) * 65535.0).round_ties_even() as u16
}

/// `v_cvt_pknorm_i16_f32`.
#[inline]
pub fn cvt_pknorm_i16_f32(s0: f32, s1: f32) -> u32 {
    (f32_to_snorm(s0) as u16 as u32) | ((f32_to_snorm(s1) as u16 as u32) << 16)
}

/// `v_cvt_pknorm_u16_f32`.
#[inline]
pub fn cvt_pknorm_u16_f32(s0: f32, s1: f32) -> u32 {
    (f32_to_unorm(s0) as u32) | ((f32_to_unorm(s1) as u32) << 16)
}

/// `v_cvt_off_f32_i4`: the signed 4-bit value in `S0[3:0]` divided by 16 (-0.5 ..= 0.4375).
#[inline]
pub fn cvt_off_f32_i4(s0: u32) -> f32 {
    ((((s0 & 0xf) << 28) as i32) >> 28) as f32 / 16.0
}

/// `v_cvt_norm_i16_f16` (`f16_to_snorm`): clamp to [-1, 1], scale by 32767, round to
/// nearest even; NaN -> 0.
#[inline]
pub fn cvt_norm_i16_f16(h: u16) -> i16 {
    f32_to_snorm(f16_to_f32(h))
}

/// `v_cvt_norm_u16_f16` (`f16_to_unorm`): clamp to [0, 1], scale by 65535, round to nearest
/// even; NaN -> 0.
#[inline]
pub fn cvt_norm_u16_f16(h: u16) -> u16 {
    f32_to_unorm(f16_to_f32(h))
}

/// `f32_to_u8`: round to nearest even, saturate to [0, 255]; NaN -> 0.
#[inline]
pub fn f32_to_u8(x: f32) -> u8 {
    x.round_ties_even() as u8
}

/// `v_cvt_pk_u8_f32 D = S0 (value), S1 (byte index), S2 (merge source)`.
#[inline]
pub fn cvt_pk_u8_f32(s0: f32, s1: u32, s2: u32) -> u32 {
    let shift = (s1 & 3) * 8;
    (s2 & !(0xffu32 << shift)) | ((f32_to_u8(s0) as u32) << shift)
}

// ---------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------

/// `v_cmp_class_f32`: bit `k` of `mask` selects class k: 0 sNaN, 1 qNaN, 2 -Inf,
/// 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +Inf.
#[inline]
pub fn class_f32(x: f32, mask: u32) -> bool {
    let bits = x.to_bits();
    let negative = bits >> 31 != 0;
    let field = (bits >> 23) & 0xff;
    let frac = bits & 0x7f_ffff;
    class_bit(negative, field == 0xff, field == 0, frac, F32_QUIET, mask)
}

/// `v_cmp_class_f64` (see [`class_f32`]).
#[inline]
pub fn class_f64(x: f64, mask: u32) -> bool {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let field = (bits >> 52) & 0x7ff;
    let frac = bits & ((1u64 << 52) - 1);
    let idx = class_index(negative, field == 0x7ff, field == 0, frac != 0, frac & F64_QUIET != 0);
    (mask >> idx) & 1 != 0
}

/// `v_cmp_class_f16` on bits (see [`class_f32`]).
#[inline]
pub fn class_f16(h: u16, mask: u32) -> bool {
    let negative = h & 0x8000 != 0;
    let field = (h >> 10) & 0x1f;
    let frac = (h & 0x3ff) as u32;
    class_bit(negative, field == 0x1f, field == 0, frac, 0x200, mask)
}

#[inline]
fn class_bit(negative: bool, top: bool, bottom: bool, frac: u32, quiet: u32, mask: u32) -> bool {
    let idx = class_index(negative, top, bottom, frac != 0, frac & quiet != 0);
    (mask >> idx) & 1 != 0
}

#[inline]
fn class_index(negative: bool, top: bool, bottom: bool, frac_nonzero: bool, quiet: bool) -> u32 {
    match (top, bottom, frac_nonzero) {
        (true, _, true) => quiet as u32,
        (true, _, false) => if negative { 2 } else { 9 },
        (false, false, _) => if negative { 3 } else { 8 },
        (false, true, true) => if negative { 4 } else { 7 },
        (false, true, false) => if negative { 5 } else { 6 },
    }
}

/// `v_fract_f16` on bits (kept strictly below 1, like [`fract_f32`]).
#[inline]
pub fn fract_f16(h: u16) -> u16 {
    if h & 0x7fff == 0x7c00 {
        return 0x7e00;
    }
    if f16_is_nan(h) {
        return quiet_f16(h);
    }
    let x = f16_to_f32(h);
    let f = super::convert::f32_to_f16(x - x.floor(), RoundMode::NearestEven);
    f.min(0x3bff)
}

/// `v_trunc_f16` on bits (exact).
#[inline]
pub fn trunc_f16(h: u16) -> u16 {
    round_f16_with(h, f32::trunc)
}

/// `v_ceil_f16` on bits (exact).
#[inline]
pub fn ceil_f16(h: u16) -> u16 {
    round_f16_with(h, f32::ceil)
}

/// `v_floor_f16` on bits (exact).
#[inline]
pub fn floor_f16(h: u16) -> u16 {
    round_f16_with(h, f32::floor)
}

/// `v_rndne_f16` on bits (exact, ties to even).
#[inline]
pub fn rndne_f16(h: u16) -> u16 {
    round_f16_with(h, f32::round_ties_even)
}

/// Applies an integral rounding in f32 (exact for f16 values) and narrows back exactly.
#[inline]
fn round_f16_with(h: u16, f: fn(f32) -> f32) -> u16 {
    if f16_is_nan(h) {
        return quiet_f16(h);
    }
    super::convert::f32_to_f16(f(f16_to_f32(h)), RoundMode::NearestEven)
}

// ---------------------------------------------------------------------------------------
// Cube map coordinates
// ---------------------------------------------------------------------------------------

/// Which axis of `(x, y, z)` the cube map instructions treat as the major one: 2 (z) when
/// `|z| >= |x|` and `|z| >= |y|`, else 1 (y) when `|y| >= |x|`, else 0 (x). A NaN compares
/// false, so it never wins a comparison.
#[inline]
fn cube_major(x: f32, y: f32, z: f32) -> u8 {
    if z.abs() >= x.abs() && z.abs() >= y.abs() {
        2
    } else if y.abs() >= x.abs() {
        1
    } else {
        0
    }
}

/// `v_cubeid_f32`: the face index 0..5 (`+x, -x, +y, -y, +z, -z`) of the direction.
#[inline]
pub fn cube_id(x: f32, y: f32, z: f32) -> f32 {
    match cube_major(x, y, z) {
        2 => if z < 0.0 { 5.0 } else { 4.0 },
        1 => if y < 0.0 { 3.0 } else { 2.0 },
        _ => if x < 0.0 { 1.0 } else { 0.0 },
    }
}

/// `v_cubesc_f32`: the face's S coordinate (a sign flip of one input, exact).
#[inline]
pub fn cube_sc(x: f32, y: f32, z: f32) -> f32 {
    match cube_major(x, y, z) {
        2 => if z < 0.0 { -x } else { x },
        1 => x,
        _ => if x < 0.0 { z } else { -z },
    }
}

/// `v_cubetc_f32`: the face's T coordinate.
#[inline]
pub fn cube_tc(x: f32, y: f32, z: f32) -> f32 {
    match cube_major(x, y, z) {
        1 => if y < 0.0 { -z } else { z },
        _ => -y,
    }
}

/// `v_cubema_f32`: twice the major axis coordinate, rounded with `rm`.
#[inline]
pub fn cube_ma(x: f32, y: f32, z: f32, rm: RoundMode) -> f32 {
    let major = match cube_major(x, y, z) {
        2 => z,
        1 => y,
        _ => x,
    };
    if major.is_nan() {
        return quiet_f32(major);
    }
    mul_f32(major, 2.0, rm)
}

/// The VOP3 float modifiers of one instruction: per-source `abs`/`neg` bits (bit i = source
/// i), the 2-bit OMOD field and the clamp bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Vop3Mods {
    /// ABS bits, one per source.
    pub abs: u8,
    /// NEG bits, one per source.
    pub neg: u8,
    /// Output multiplier.
    pub omod: OutputModifier,
    /// Clamp bit.
    pub clamp: bool,
}

impl Vop3Mods {
    /// Source `i` as the operation sees it: modifiers, then MODE input-denormal flush.
    #[inline]
    pub fn src_f32(self, x: f32, i: u32, mode: Mode) -> f32 {
        let i = i & 7;
        mode.flush_in_f32(src_f32(x, (self.abs >> i) & 1 != 0, (self.neg >> i) & 1 != 0))
    }

    /// f64 source `i` with modifiers and input flush.
    #[inline]
    pub fn src_f64(self, x: f64, i: u32, mode: Mode) -> f64 {
        let i = i & 7;
        mode.flush_in_f64(src_f64(x, (self.abs >> i) & 1 != 0, (self.neg >> i) & 1 != 0))
    }

    /// f16 source `i` (bits) with modifiers and input flush.
    #[inline]
    pub fn src_f16(self, h: u16, i: u32, mode: Mode) -> u16 {
        let i = i & 7;
        mode.flush_in_f16(src_f16(h, (self.abs >> i) & 1 != 0, (self.neg >> i) & 1 != 0))
    }

    /// The output stage for an f32 result ([`output_f32`]).
    #[inline]
    pub fn out_f32(self, x: f32, mode: Mode) -> f32 {
        output_f32(x, self.omod, self.clamp, mode)
    }

    /// The output stage for an f64 result ([`output_f64`]).
    #[inline]
    pub fn out_f64(self, x: f64, mode: Mode) -> f64 {
        output_f64(x, self.omod, self.clamp, mode)
    }

    /// The output stage for an f16 result ([`output_f16`]).
    #[inline]
    pub fn out_f16(self, h: u16, mode: Mode) -> u16 {
        output_f16(h, self.omod, self.clamp, mode)
    }
}

/// A complete `v_fma_f32` under `mods` and `mode`: source modifiers, input flush, one
/// rounding per FP_ROUND.f32, omod/clamp, output flush.
#[inline]
pub fn v_fma_f32(s0: f32, s1: f32, s2: f32, mods: Vop3Mods, mode: Mode) -> f32 {
    let (a, b, c) = (mods.src_f32(s0, 0, mode), mods.src_f32(s1, 1, mode), mods.src_f32(s2, 2, mode));
    mods.out_f32(fma_f32(a, b, c, mode.round_f32), mode)
}

/// A complete `v_add_f32` under `mods` and `mode`.
#[inline]
pub fn v_add_f32(s0: f32, s1: f32, mods: Vop3Mods, mode: Mode) -> f32 {
    let (a, b) = (mods.src_f32(s0, 0, mode), mods.src_f32(s1, 1, mode));
    mods.out_f32(add_f32(a, b, mode.round_f32), mode)
}

/// A complete `v_mul_f32` under `mods` and `mode`.
#[inline]
pub fn v_mul_f32(s0: f32, s1: f32, mods: Vop3Mods, mode: Mode) -> f32 {
    let (a, b) = (mods.src_f32(s0, 0, mode), mods.src_f32(s1, 1, mode));
    mods.out_f32(mul_f32(a, b, mode.round_f32), mode)
}

/// A complete `v_max_f32` under `mods` and `mode` (min/max are exact; MODE.IEEE selects the
/// NaN rules).
#[inline]
pub fn v_max_f32(s0: f32, s1: f32, mods: Vop3Mods, mode: Mode) -> f32 {
    let (a, b) = (mods.src_f32(s0, 0, mode), mods.src_f32(s1, 1, mode));
    mods.out_f32(max_f32(a, b, mode.ieee), mode)
}

/// A complete `v_min_f32` under `mods` and `mode`.
#[inline]
pub fn v_min_f32(s0: f32, s1: f32, mods: Vop3Mods, mode: Mode) -> f32 {
    let (a, b) = (mods.src_f32(s0, 0, mode), mods.src_f32(s1, 1, mode));
    mods.out_f32(min_f32(a, b, mode.ieee), mode)
}
