//! Conversions between f64, f32, f16 and bf16 with every IEEE rounding mode.
//!
//! 16-bit values travel as raw `u16` register bits. Widening conversions are exact.
//! Narrowing conversions round once, correctly, in the requested [`RoundMode`]; overflow
//! follows IEEE 754 (Inf or the largest finite value depending on the direction) unless the
//! caller asks for FP16_OVFL saturation. NaN inputs produce a quiet NaN that keeps the sign
//! and the top payload bits. Denormal flushing is applied only through the `*_mode`
//! variants, which read the [`Mode`] register model.

use super::mode::{flush_f16_bits, Mode};
use super::round::{
    round_stochastic, round_to_format, split_f32, split_f64, Format, RoundMode, Rounded,
};

/// Canonical quiet NaN of f16.
pub const F16_QNAN: u16 = 0x7e00;
/// f16 positive infinity.
pub const F16_INF: u16 = 0x7c00;
/// Largest finite f16 (65504).
pub const F16_MAX: u16 = 0x7bff;
/// bf16 positive infinity.
pub const BF16_INF: u16 = 0x7f80;

/// Returns true when the f16 bits encode a NaN.
#[inline]
pub const fn f16_is_nan(h: u16) -> bool {
    (h & 0x7fff) > 0x7c00
}

/// Returns true when the f16 bits encode a signalling NaN.
#[inline]
pub const fn f16_is_snan(h: u16) -> bool {
    f16_is_nan(h) && (h & 0x0200) == 0
}

/// Returns true when the bf16 bits encode a NaN.
#[inline]
pub const fn bf16_is_nan(h: u16) -> bool {
    (h & 0x7fff) > 0x7f80
}

/// Exact f16 -> f32 widening. Signalling NaNs come out quiet (IEEE conversion semantics).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let field = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    if field == 0x1f {
        let quiet = if frac != 0 { 0x0040_0000 } else { 0 };
        return f32::from_bits(sign | 0x7f80_0000 | (frac << 13) | quiet);
    }
    if field == 0 {
        // Zero or subnormal: frac * 2^-24, exact in f32.
        let magnitude = frac as f32 * f32::from_bits(0x3380_0000);
        return f32::from_bits(sign | magnitude.to_bits());
    }
    f32::from_bits(sign | ((field + 112) << 23) | (frac << 13))
}

/// Exact f16 -> f64 widening (signalling NaNs quieted).
#[inline]
pub fn f16_to_f64(h: u16) -> f64 {
    f16_to_f32(h) as f64
}

/// Exact bf16 -> f32 widening: the bits move to the top half (`{S0.b16, 16'0}`), so NaN
/// payloads, including signalling ones, pass unchanged.
#[inline]
pub const fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// Quiet NaN in `fmt` (a 16-bit IEEE format) carrying the sign and top payload of an f32 NaN.
#[inline]
fn nan_from_f32_bits(bits: u32, fmt: Format) -> u16 {
    let sign = ((bits >> 31) as u16) << 15;
    let drop = 23 - fmt.man_bits;
    let payload = ((bits & 0x7f_ffff) >> drop) as u16;
    let quiet = 1u16 << (fmt.man_bits - 1);
    sign | fmt.inf_bits() as u16 | payload | quiet
}

/// Rounds a finite f64 to a 16-bit IEEE format, applying IEEE overflow for `rm`
/// (or saturation when `saturate`).
#[inline]
fn finite_f64_to_16(x: f64, fmt: Format, rm: RoundMode, saturate: bool) -> u16 {
    let (negative, sig, exp) = split_f64(x);
    let sign = (negative as u16) << 15;
    let magnitude = match round_to_format(negative, sig, exp, false, fmt, rm) {
        Rounded::Finite(enc) => enc as u16,
        Rounded::Overflow => {
            if !saturate && rm.overflows_to_infinity(negative) {
                fmt.inf_bits() as u16
            } else {
                fmt.max_finite_bits() as u16
            }
        }
    };
    sign | magnitude
}

/// f32 -> f16 with rounding `rm`; denormals are produced (no flushing); IEEE overflow.
#[inline]
pub fn f32_to_f16(x: f32, rm: RoundMode) -> u16 {
    f32_to_f16_sat(x, rm, false)
}

/// f32 -> f16 with rounding `rm`; when `saturate` (MODE.FP16_OVFL), a finite input that
/// overflows gives the signed largest finite value instead of Inf. Infinite inputs stay Inf.
#[inline]
pub fn f32_to_f16_sat(x: f32, rm: RoundMode, saturate: bool) -> u16 {
    let bits = x.to_bits();
    if (bits & 0x7f80_0000) == 0x7f80_0000 {
        if bits & 0x7f_ffff != 0 {
            return nan_from_f32_bits(bits, Format::F16);
        }
        return (((bits >> 31) as u16) << 15) | F16_INF;
    }
    if rm == RoundMode::NearestEven {
        return f32_to_f16_rne_finite(bits, saturate);
    }
    finite_f64_to_16(x as f64, Format::F16, rm, saturate)
}

/// Branch-light f32 -> f16 round-to-nearest-even for finite inputs.
#[inline]
fn f32_to_f16_rne_finite(bits: u32, saturate: bool) -> u16 {
    let sign = ((bits >> 16) & 0x8000) as u16;
    let abs = bits & 0x7fff_ffff;
    // 65520 = 0x477ff000 is the first magnitude that rounds to Inf.
    if abs >= 0x477f_f000 {
        return sign | if saturate { F16_MAX } else { F16_INF };
    }
    if abs >= 0x3880_0000 {
        // Normal f16 range: rebias and round the 13 dropped bits to nearest even.
        let rebias = abs - (112 << 23);
        let round = 0x0fff + ((rebias >> 13) & 1);
        return sign | ((rebias + round) >> 13) as u16;
    }
    // Subnormal or zero: adding 0.5 (2^-1) aligns the f16 subnormal unit (2^-24) with the
    // f32 ulp of the sum (2^-24), so the hardware's own RNE does the rounding.
    let magnitude = f32::from_bits(abs) + 0.5;
    sign | (magnitude.to_bits() - 0x3f00_0000) as u16
}

/// f32 -> bf16 with rounding `rm`; denormals are produced; IEEE overflow.
#[inline]
pub fn f32_to_bf16(x: f32, rm: RoundMode) -> u16 {
    let bits = x.to_bits();
    if (bits & 0x7fff_ffff) > 0x7f80_0000 {
        return nan_from_f32_bits(bits, Format::BF16);
    }
    if (bits & 0x7f80_0000) == 0x7f80_0000 {
        return (bits >> 16) as u16;
    }
    if rm == RoundMode::NearestEven {
        let round = 0x7fff + ((bits >> 16) & 1);
        // A carry into the exponent is the correct result, including overflow to Inf.
        return (bits.wrapping_add(round) >> 16) as u16;
    }
    finite_f64_to_16(x as f64, Format::BF16, rm, false)
}

/// f64 -> f32 with rounding `rm` (IEEE overflow, denormals produced, NaN quieted).
#[inline]
pub fn f64_to_f32(x: f64, rm: RoundMode) -> f32 {
    if rm == RoundMode::NearestEven || !x.is_finite() {
        return x as f32;
    }
    let (negative, sig, exp) = split_f64(x);
    let sign = (negative as u32) << 31;
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
    f32::from_bits(sign | magnitude)
}

/// f64 -> f16 with rounding `rm`, single rounding (IEEE overflow, denormals produced).
#[inline]
pub fn f64_to_f16(x: f64, rm: RoundMode) -> u16 {
    if x.is_nan() {
        let bits = x.to_bits();
        let sign = ((bits >> 63) as u16) << 15;
        return sign | F16_QNAN | (((bits >> 42) & 0x1ff) as u16);
    }
    if x.is_infinite() {
        return if x < 0.0 { 0x8000 | F16_INF } else { F16_INF };
    }
    finite_f64_to_16(x, Format::F16, rm, false)
}

/// f64 -> bf16 with rounding `rm`, single rounding.
#[inline]
pub fn f64_to_bf16(x: f64, rm: RoundMode) -> u16 {
    if !x.is_finite() {
        return f32_to_bf16(x as f32, rm);
    }
    finite_f64_to_16(x, Format::BF16, rm, false)
}

/// Rounds an exact sum `hi + lo` (as produced by an error-free transformation, `hi` the
/// nearest-even f64 of the sum) to round-to-odd f64. Rounding that value again to any format
/// with at most 51 mantissa bits gives the correctly rounded exact sum in every mode.
#[inline]
pub fn round_to_odd(hi: f64, lo: f64) -> f64 {
    if lo == 0.0 || !hi.is_finite() {
        return hi;
    }
    let mut bits = hi.to_bits();
    // If hi overshoots the exact value in magnitude, truncate it by one ulp first.
    if (lo < 0.0) != (hi < 0.0) {
        bits -= 1;
    }
    f64::from_bits(bits | 1)
}

/// v_cvt_f16_f32 under `mode`: f32 input denormals flushed per FP_DENORM.f32, rounding per
/// FP_ROUND.f16_64, f16 output denormals flushed per FP_DENORM.f16_64, FP16_OVFL saturation.
#[inline]
pub fn f32_to_f16_mode(x: f32, mode: Mode) -> u16 {
    let x = mode.flush_in_f32(x);
    let h = f32_to_f16_sat(x, mode.round_f16_f64, mode.fp16_ovfl);
    flush_f16_bits(h, mode.denorm_f16_f64.flushes_output())
}

/// v_cvt_f32_f16 under `mode`: f16 input denormals flushed per FP_DENORM.f16_64; the exact
/// f32 result is never denormal.
#[inline]
pub fn f16_to_f32_mode(h: u16, mode: Mode) -> f32 {
    f16_to_f32(mode.flush_in_f16(h))
}

/// v_cvt_f32_f64 under `mode`: rounding per FP_ROUND.f32, f64 input flush, f32 output flush.
#[inline]
pub fn f64_to_f32_mode(x: f64, mode: Mode) -> f32 {
    mode.flush_out_f32(f64_to_f32(mode.flush_in_f64(x), mode.round_f32))
}

/// v_cvt_f64_f32 under `mode`: f32 input flush; exact widening.
#[inline]
pub fn f32_to_f64_mode(x: f32, mode: Mode) -> f64 {
    mode.flush_in_f32(x) as f64
}

/// The exact value of a finite f32 as (negative, sig, exp); re-exported for callers that
/// build their own rounding.
#[inline]
pub fn split_f32_exact(x: f32) -> (bool, u64, i32) {
    split_f32(x)
}

/// Stochastic f32 -> 16-bit rounding (gfx950 `v_cvt_sr_f16_f32` / `v_cvt_sr_bf16_f32`):
/// `floor(|x| / ulp + random / 2^32) * ulp` with the sign of `x`. Overflow gives Inf, or the
/// largest finite value when `saturate`; NaN and Inf inputs convert as in RNE.
#[inline]
fn f32_to_16_sr(x: f32, random: u32, fmt: Format, saturate: bool) -> u16 {
    let bits = x.to_bits();
    if (bits & 0x7f80_0000) == 0x7f80_0000 {
        if bits & 0x7f_ffff != 0 {
            return nan_from_f32_bits(bits, fmt);
        }
        return (((bits >> 31) as u16) << 15) | fmt.inf_bits() as u16;
    }
    let (negative, sig, exp) = split_f32(x);
    let sign = (negative as u16) << 15;
    let magnitude = match round_stochastic(sig, exp, random, fmt) {
        Rounded::Finite(enc) => enc as u16,
        Rounded::Overflow => {
            if saturate {
                fmt.max_finite_bits() as u16
            } else {
                fmt.inf_bits() as u16
            }
        }
    };
    sign | magnitude
}

/// gfx950 `v_cvt_sr_f16_f32`: stochastic rounding of `x` to f16 with 32 random bits.
#[inline]
pub fn f32_to_f16_sr(x: f32, random: u32, saturate: bool) -> u16 {
    f32_to_16_sr(x, random, Format::F16, saturate)
}

/// gfx950 `v_cvt_sr_bf16_f32`: stochastic rounding of `x` to bf16 with 32 random bits.
#[inline]
pub fn f32_to_bf16_sr(x: f32, random: u32) -> u16 {
    f32_to_16_sr(x, random, Format::BF16, false)
}

/// `a + b` rounded to odd f64, without branches (an error-free two-sum whose nearest-even
/// result is nudged to the odd neighbour toward the exact sum when inexact). Rounding the
/// result again to f32 gives the correctly rounded exact sum; infinities and NaN pass.
#[inline(always)]
pub fn add_round_to_odd(a: f64, b: f64) -> f64 {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    let inexact = (e != 0.0) & s.is_finite();
    let overshoot = inexact & ((e < 0.0) != (s < 0.0));
    f64::from_bits((s.to_bits() - overshoot as u64) | inexact as u64)
}
