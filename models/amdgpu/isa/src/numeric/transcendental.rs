//! Transcendental VALU ops: `v_rcp`, `v_rsq`, `v_sqrt`, `v_exp` (2^x), `v_log` (log2),
//! `v_sin`/`v_cos` (argument in revolutions: `sin(2*pi*x)`), for f32, f16 and, where the
//! ISA has them (`rcp`, `rsq`, `sqrt`), f64.
//!
//! Hardware computes these approximately (about 1 ULP for f32 rcp/rsq/sqrt). This model is
//! deterministic and *more* accurate; its error bounds, asserted by the ULP tests over
//! dense samples, are:
//!
//! | op                       | f32 result            | f16 result   | f64 result       |
//! |--------------------------|-----------------------|--------------|------------------|
//! | rcp, sqrt                | correctly rounded (0.5 ULP) | 0.5 ULP | 0.5 ULP (exact IEEE ops) |
//! | rsq                      | <= 0.5 ULP + 2^-29    | 0.5 ULP + 2^-42 | <= 0.5 ULP + 2^-40 (Newton-corrected) |
//! | exp, log                 | <= 0.5 ULP + 2^-28    | 0.5 ULP + 2^-41 | -          |
//! | sin, cos                 | <= 0.5 ULP + 2^-28 (absolute error <= 2^-52 near zeros) | same | - |
//!
//! f32/f16 results are computed in f64 with the platform's correctly-rounded-to-within-
//! 1-f64-ULP `exp2`/`log2`/`sin`/`cos`, then rounded once to the destination; the f64 error
//! is at most 2^-29 (f32) or 2^-42 (f16) of a destination ULP, hence the bounds above.
//! sin/cos reduce the argument exactly (`x - round(x)` is exact for f32 inputs), so the
//! bound holds for every finite input, whereas the hardware only promises its accuracy in a
//! limited input range.
//!
//! Special values follow IEEE: rcp(+-0) = +-Inf, rsq(+-0) = +-Inf, rsq(x<0) = NaN,
//! sqrt(-0) = -0, log(+-0) = -Inf, log(x<0) = NaN, exp(-Inf) = +0, sin/cos(Inf) = NaN.
//! An invalid operation gives the NaN the ISA's functional examples show, 0xffc00000 (f32)
//! or 0xfe00 (f16), whatever the host produces; a NaN input comes out quieted.
//! The `*_mode` f32 helpers flush input and output denormals per MODE.FP_DENORM.f32.

use super::convert::{f16_is_nan, f16_to_f32, f64_to_f16};
use super::mode::Mode;
use super::round::RoundMode;

/// The transcendentals' NaN rule for f32: a NaN input quieted, the ISA's default NaN
/// (0xffc00000) for an invalid operation, `r` otherwise.
#[inline]
fn nan_rule_f32(x: f32, r: f32) -> f32 {
    if !r.is_nan() {
        r
    } else if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        f32::from_bits(0xffc0_0000)
    }
}

/// `v_rcp_f32`: 1/x, correctly rounded to nearest even.
#[inline]
pub fn rcp_f32(x: f32) -> f32 {
    nan_rule_f32(x, (1.0 / x as f64) as f32)
}

/// `v_rsq_f32`: 1/sqrt(x).
#[inline]
pub fn rsq_f32(x: f32) -> f32 {
    nan_rule_f32(x, (1.0 / (x as f64).sqrt()) as f32)
}

/// `v_sqrt_f32`, correctly rounded.
#[inline]
pub fn sqrt_f32(x: f32) -> f32 {
    nan_rule_f32(x, x.sqrt())
}

/// `v_exp_f32`: 2^x.
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    nan_rule_f32(x, (x as f64).exp2() as f32)
}

/// `v_log_f32`: log2(x).
#[inline]
pub fn log_f32(x: f32) -> f32 {
    nan_rule_f32(x, (x as f64).log2() as f32)
}

/// Exact reduction of a revolution count to [-0.5, 0.5].
#[inline]
fn reduce_revolutions(x: f64) -> f64 {
    x - x.round_ties_even()
}

/// `sin(2*pi*r)` for r in [-0.5, 0.5], using the symmetric quarter so that exact zeros and
/// ones come out exact.
#[inline]
fn sin_turns(r: f64) -> f64 {
    let a = r.abs();
    let s = if a <= 0.25 {
        (std::f64::consts::TAU * a).sin()
    } else {
        (std::f64::consts::TAU * (0.5 - a)).sin()
    };
    if r < 0.0 {
        -s
    } else {
        s
    }
}

/// `cos(2*pi*r)` for r in [-0.5, 0.5].
#[inline]
fn cos_turns(r: f64) -> f64 {
    let a = r.abs();
    if a <= 0.25 {
        sin_turns(0.25 - a)
    } else {
        -sin_turns(a - 0.25)
    }
}

/// `v_sin_f32`: sin(2*pi*x).
#[inline]
pub fn sin_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return nan_rule_f32(x, f32::NAN);
    }
    if x == 0.0 {
        // sin(+-0) = +-0.
        return x;
    }
    let s = sin_turns(reduce_revolutions(x as f64)) as f32;
    // Any other exact zero (an integral or half-integral revolution count) is +0, as the
    // ISA's example V_SIN_F32(-MaxFloat) = +0 shows.
    if s == 0.0 {
        return 0.0;
    }
    s
}

/// `v_cos_f32`: cos(2*pi*x).
#[inline]
pub fn cos_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return nan_rule_f32(x, f32::NAN);
    }
    cos_turns(reduce_revolutions(x as f64)) as f32
}

/// `v_rcp_f64`, correctly rounded.
#[inline]
pub fn rcp_f64(x: f64) -> f64 {
    1.0 / x
}

/// `v_rsq_f64`: 1/sqrt(x) with one exact Newton correction, within 0.5 ULP + 2^-40.
#[inline]
pub fn rsq_f64(x: f64) -> f64 {
    let naive = 1.0 / x.sqrt();
    if x.is_nan() || x <= 0.0 || !x.is_finite() || !naive.is_finite() {
        return naive;
    }
    // Keep y^2 and x*y^2 in the normal range: scale x by an even power of two.
    let (xs, unscale) = if x > 2f64.powi(512) {
        (x * 2f64.powi(-512), 2f64.powi(-256))
    } else if x < 2f64.powi(-512) {
        (x * 2f64.powi(512), 2f64.powi(256))
    } else {
        (x, 1.0)
    };
    let x = xs;
    let y = 1.0 / x.sqrt();
    // e = 1 - x*y^2 evaluated with the exact square of y: y^2 = p + q.
    let p = y * y;
    let q = y.mul_add(y, -p);
    let e = (-x).mul_add(p, 1.0) - x * q;
    // 1/sqrt(x) = y * (1 - e)^(-1/2) ~= y * (1 + e/2 + 3e^2/8); |e| < 2^-51.
    y.mul_add(0.5 * e, y) * unscale
}

/// `v_sqrt_f64`, correctly rounded.
#[inline]
pub fn sqrt_f64(x: f64) -> f64 {
    x.sqrt()
}

/// Applies an f64 function to an f16 (bits) and rounds once to nearest even; a NaN input
/// comes out quieted and an invalid operation gives the ISA's 0xfe00.
#[inline]
fn via_f64(h: u16, f: impl Fn(f64) -> f64) -> u16 {
    let r = f(f16_to_f32(h) as f64);
    if !r.is_nan() {
        f64_to_f16(r, RoundMode::NearestEven)
    } else if f16_is_nan(h) {
        h | 0x0200
    } else {
        0xfe00
    }
}

/// `v_rcp_f16` on bits.
#[inline]
pub fn rcp_f16(h: u16) -> u16 {
    via_f64(h, |x| 1.0 / x)
}

/// `v_rsq_f16` on bits.
#[inline]
pub fn rsq_f16(h: u16) -> u16 {
    via_f64(h, |x| 1.0 / x.sqrt())
}

/// `v_sqrt_f16` on bits.
#[inline]
pub fn sqrt_f16(h: u16) -> u16 {
    via_f64(h, f64::sqrt)
}

/// `v_exp_f16` on bits: 2^x.
#[inline]
pub fn exp_f16(h: u16) -> u16 {
    via_f64(h, f64::exp2)
}

/// `v_log_f16` on bits: log2(x).
#[inline]
pub fn log_f16(h: u16) -> u16 {
    via_f64(h, f64::log2)
}

/// `v_sin_f16` on bits: sin(2*pi*x).
#[inline]
pub fn sin_f16(h: u16) -> u16 {
    via_f64(h, |x| {
        if x == 0.0 {
            x
        } else if x.is_finite() {
            // An exact zero is +0 (see `sin_f32`).
            sin_turns(reduce_revolutions(x)) + 0.0
        } else {
            f64::NAN
        }
    })
}

/// `v_cos_f16` on bits: cos(2*pi*x).
#[inline]
pub fn cos_f16(h: u16) -> u16 {
    via_f64(h, |x| if x.is_finite() { cos_turns(reduce_revolutions(x)) } else { f64::NAN })
}

/// `v_exp_legacy_f32`: 2^x. The ISA only says "power with legacy semantics" and names no
/// difference from `v_exp_f32` for any input, so this is [`exp_f32`].
#[inline]
pub fn exp_legacy_f32(x: f32) -> f32 {
    exp_f32(x)
}

/// `v_log_legacy_f32`: log2(x) for inputs whose result the ISA defines: `x >= 0`, +Inf and
/// NaN give [`log_f32`]. For negative inputs the ISA's "legacy semantics" are not spelled
/// out (DX9's log took `|x|`), so those give `None` and the executor refuses them.
#[inline]
pub fn log_legacy_f32(x: f32) -> Option<f32> {
    if x < 0.0 {
        None
    } else {
        Some(log_f32(x))
    }
}

/// Which f32 transcendental to evaluate (for the mode-aware and slice helpers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransOp {
    /// `v_rcp_f32`.
    Rcp,
    /// `v_rsq_f32`.
    Rsq,
    /// `v_sqrt_f32`.
    Sqrt,
    /// `v_exp_f32`.
    Exp,
    /// `v_log_f32`.
    Log,
    /// `v_sin_f32`.
    Sin,
    /// `v_cos_f32`.
    Cos,
}

impl TransOp {
    /// Evaluates the op on one f32 (no flushing).
    #[inline]
    pub fn eval_f32(self, x: f32) -> f32 {
        match self {
            TransOp::Rcp => rcp_f32(x),
            TransOp::Rsq => rsq_f32(x),
            TransOp::Sqrt => sqrt_f32(x),
            TransOp::Exp => exp_f32(x),
            TransOp::Log => log_f32(x),
            TransOp::Sin => sin_f32(x),
            TransOp::Cos => cos_f32(x),
        }
    }

    /// Evaluates the op under `mode`: input and output f32 denormals flushed per
    /// MODE.FP_DENORM.f32.
    #[inline]
    pub fn eval_f32_mode(self, x: f32, mode: Mode) -> f32 {
        mode.flush_out_f32(self.eval_f32(mode.flush_in_f32(x)))
    }
}

// ---------------------------------------------------------------------------------------
// v_trig_preop_f64
// ---------------------------------------------------------------------------------------

/// Number of fraction bits of 2/pi the instruction can reach (`1201'B(2.0 / PI)`).
const TWO_OVER_PI_BITS: u32 = 1201;

/// The first 1216 fraction bits of 2/pi, most significant first, computed once from a
/// Machin-formula value of pi in fixed point (1344 fraction bits, error below 2^-1330).
fn two_over_pi_words() -> &'static [u64; 19] {
    static WORDS: std::sync::OnceLock<[u64; 19]> = std::sync::OnceLock::new();
    WORDS.get_or_init(compute_two_over_pi)
}

/// Fixed-point helpers over little-endian u32 limbs; the top limb holds the integer part.
const FRACTION_LIMBS: usize = 42; // 1344 fraction bits
const LIMBS: usize = FRACTION_LIMBS + 1;

fn div_small(x: &mut [u32; LIMBS], d: u32) {
    let mut rem = 0u64;
    for limb in x.iter_mut().rev() {
        let cur = (rem << 32) | *limb as u64;
        *limb = (cur / d as u64) as u32;
        rem = cur % d as u64;
    }
}

fn add_assign(x: &mut [u32; LIMBS], y: &[u32; LIMBS]) {
    let mut carry = 0u64;
    for (a, &b) in x.iter_mut().zip(y) {
        let s = *a as u64 + b as u64 + carry;
        *a = s as u32;
        carry = s >> 32;
    }
}

fn sub_assign(x: &mut [u32; LIMBS], y: &[u32; LIMBS]) {
    let mut borrow = 0i64;
    for (a, &b) in x.iter_mut().zip(y) {
        let d = *a as i64 - b as i64 - borrow;
        *a = d as u32;
        borrow = (d < 0) as i64;
    }
}

fn mul_small(x: &mut [u32; LIMBS], m: u32) {
    let mut carry = 0u64;
    for limb in x.iter_mut() {
        let p = *limb as u64 * m as u64 + carry;
        *limb = p as u32;
        carry = p >> 32;
    }
}

fn is_zero(x: &[u32; LIMBS]) -> bool {
    x.iter().all(|&l| l == 0)
}

/// arctan(1/k) in fixed point by its Taylor series.
fn arctan_inverse(k: u32) -> [u32; LIMBS] {
    let mut sum = [0u32; LIMBS];
    let mut power = [0u32; LIMBS];
    power[LIMBS - 1] = 1; // 1.0
    div_small(&mut power, k); // 1/k
    let mut n = 0u32;
    loop {
        let mut term = power;
        div_small(&mut term, 2 * n + 1);
        if is_zero(&term) {
            break;
        }
        if n.is_multiple_of(2) {
            add_assign(&mut sum, &term);
        } else {
            sub_assign(&mut sum, &term);
        }
        div_small(&mut power, k * k);
        n += 1;
    }
    sum
}

fn compute_two_over_pi() -> [u64; 19] {
    // pi = 16 atan(1/5) - 4 atan(1/239)
    let mut pi = arctan_inverse(5);
    mul_small(&mut pi, 16);
    let mut second = arctan_inverse(239);
    mul_small(&mut second, 4);
    sub_assign(&mut pi, &second);
    // Long division: the bits of 2/pi = 0.b1 b2 ..., with numerator 2.0.
    let mut num = [0u32; LIMBS];
    num[LIMBS - 1] = 2;
    let mut words = [0u64; 19];
    for i in 0..(19 * 64) {
        mul_small(&mut num, 2);
        let ge = num.iter().rev().zip(pi.iter().rev()).find(|(a, b)| a != b).is_none_or(|(a, b)| a > b);
        if ge {
            sub_assign(&mut num, &pi);
            words[i / 64] |= 1u64 << (63 - i % 64);
        }
    }
    words
}

/// Fraction bits `start+1 ..= start+53` of 2/pi as an integer below 2^53 (zeros beyond the
/// 1201 bits the instruction holds).
fn two_over_pi_chunk(start: u32) -> u64 {
    let words = two_over_pi_words();
    let mut chunk = 0u64;
    for k in 0..53u32 {
        let bit = start + k; // 0-based index of b_(bit+1)
        let value = if bit < TWO_OVER_PI_BITS {
            (words[(bit / 64) as usize] >> (63 - bit % 64)) & 1
        } else {
            0
        };
        chunk = (chunk << 1) | value;
    }
    chunk
}

/// `v_trig_preop_f64 D = S0, S1`: the 53-bit segment of 2/pi used for Payne-Hanek argument
/// reduction of `S0`. Segment `S1[4:0]` starts `53 * S1[4:0]` bits into the fraction, plus
/// `exponent(S0) - 1077` more when S0's biased exponent exceeds 1077; the result is that
/// segment scaled to its true weight, times 2^128 when the exponent is at least 1968.
///
/// Reading of the pseudocode: `(1201'B(2/PI) << shift) & mask` is taken as "the 53 bits
/// that the shift brings to the top", i.e. fraction bits `shift+1 ..= shift+53`, which is
/// the segment whose weight `2^(-53-shift)` the pseudocode's `scale` assigns.
pub fn trig_preop_f64(s0: f64, s1: u32) -> f64 {
    let exponent = ((s0.to_bits() >> 52) & 0x7ff) as i32;
    let mut shift = (s1 & 31) as i32 * 53;
    if exponent > 1077 {
        shift += exponent - 1077;
    }
    let chunk = two_over_pi_chunk(shift as u32);
    let mut scale = -53 - shift;
    if exponent >= 1968 {
        scale += 128;
    }
    super::valu::ldexp_f64(chunk as f64, scale)
}

/// The first 64 fraction bits of 2/pi (for tests and diagnostics).
pub fn two_over_pi_prefix() -> u64 {
    two_over_pi_words()[0]
}
