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
//! The `*_mode` f32 helpers flush input and output denormals per MODE.FP_DENORM.f32.

use super::convert::{f16_to_f32, f64_to_f16};
use super::mode::Mode;
use super::round::RoundMode;

/// `v_rcp_f32`: 1/x, correctly rounded to nearest even.
#[inline]
pub fn rcp_f32(x: f32) -> f32 {
    (1.0 / x as f64) as f32
}

/// `v_rsq_f32`: 1/sqrt(x).
#[inline]
pub fn rsq_f32(x: f32) -> f32 {
    (1.0 / (x as f64).sqrt()) as f32
}

/// `v_sqrt_f32`, correctly rounded.
#[inline]
pub fn sqrt_f32(x: f32) -> f32 {
    x.sqrt()
}

/// `v_exp_f32`: 2^x.
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    (x as f64).exp2() as f32
}

/// `v_log_f32`: log2(x).
#[inline]
pub fn log_f32(x: f32) -> f32 {
    (x as f64).log2() as f32
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
        return f32::NAN;
    }
    let s = sin_turns(reduce_revolutions(x as f64)) as f32;
    // sin of an integral revolution count is an exact zero; keep the input's sign as IEEE
    // sin(+-0) does.
    if s == 0.0 {
        return 0.0f32.copysign(x);
    }
    s
}

/// `v_cos_f32`: cos(2*pi*x).
#[inline]
pub fn cos_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
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

/// Applies an f64 function to an f16 (bits) and rounds once to nearest even.
#[inline]
fn via_f64(h: u16, f: impl Fn(f64) -> f64) -> u16 {
    f64_to_f16(f(f16_to_f32(h) as f64), RoundMode::NearestEven)
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
        if x.is_finite() {
            let s = sin_turns(reduce_revolutions(x));
            if s == 0.0 {
                0.0f64.copysign(x)
            } else {
                s
            }
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
