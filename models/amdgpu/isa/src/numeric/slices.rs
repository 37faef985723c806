//! Wave-wide loops over the hottest per-lane helpers, written as straight `zip` loops over
//! slices (typically `[f32; 64]`) so the compiler can vectorize them. Each function equals
//! applying its scalar counterpart lane by lane; the tests check that equivalence.
//!
//! Length rule: every function processes `min` of its slices' lengths and leaves any
//! remaining destination elements untouched (no panics on mismatched lengths).

use super::convert::{f16_to_f32, f32_to_f16};
use super::fp8::Fp8Format;
use super::mode::{flush_f32, Mode};
use super::round::RoundMode;
use super::transcendental::TransOp;
use super::valu;

/// `d[i] = a[i] + b[i]` rounded per `mode.round_f32`, f32 denormals per `mode`.
#[inline]
pub fn add_f32(d: &mut [f32], a: &[f32], b: &[f32], mode: Mode) {
    let (fi, fo) = (mode.denorm_f32.flushes_input(), mode.denorm_f32.flushes_output());
    if mode.round_f32 == RoundMode::NearestEven {
        for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
            *d = flush_f32(flush_f32(a, fi) + flush_f32(b, fi), fo);
        }
    } else {
        for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
            *d = flush_f32(valu::add_f32(flush_f32(a, fi), flush_f32(b, fi), mode.round_f32), fo);
        }
    }
}

/// `d[i] = a[i] * b[i]` under `mode`.
#[inline]
pub fn mul_f32(d: &mut [f32], a: &[f32], b: &[f32], mode: Mode) {
    let (fi, fo) = (mode.denorm_f32.flushes_input(), mode.denorm_f32.flushes_output());
    if mode.round_f32 == RoundMode::NearestEven {
        for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
            *d = flush_f32(flush_f32(a, fi) * flush_f32(b, fi), fo);
        }
    } else {
        for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
            *d = flush_f32(valu::mul_f32(flush_f32(a, fi), flush_f32(b, fi), mode.round_f32), fo);
        }
    }
}

/// `d[i] = fma(a[i], b[i], c[i])` under `mode`.
#[inline]
pub fn fma_f32(d: &mut [f32], a: &[f32], b: &[f32], c: &[f32], mode: Mode) {
    let (fi, fo) = (mode.denorm_f32.flushes_input(), mode.denorm_f32.flushes_output());
    let rm = mode.round_f32;
    for (((d, &a), &b), &c) in d.iter_mut().zip(a).zip(b).zip(c) {
        let (a, b, c) = (flush_f32(a, fi), flush_f32(b, fi), flush_f32(c, fi));
        let r = if rm == RoundMode::NearestEven { valu::fma_f32_rne(a, b, c) } else { valu::fma_f32(a, b, c, rm) };
        *d = flush_f32(r, fo);
    }
}

/// `d[i] = v_min_f32(a[i], b[i])` per MODE.IEEE.
#[inline]
pub fn min_f32(d: &mut [f32], a: &[f32], b: &[f32], mode: Mode) {
    for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
        *d = valu::min_f32(a, b, mode.ieee);
    }
}

/// `d[i] = v_max_f32(a[i], b[i])` per MODE.IEEE.
#[inline]
pub fn max_f32(d: &mut [f32], a: &[f32], b: &[f32], mode: Mode) {
    for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
        *d = valu::max_f32(a, b, mode.ieee);
    }
}

/// `d[i] = f32 -> f16` bits with `rm` (no flushing; see [`f32_to_f16`]).
#[inline]
pub fn cvt_f16_f32(d: &mut [u16], a: &[f32], rm: RoundMode) {
    for (d, &a) in d.iter_mut().zip(a) {
        *d = f32_to_f16(a, rm);
    }
}

/// `d[i] = f16 -> f32` (exact).
#[inline]
pub fn cvt_f32_f16(d: &mut [f32], a: &[u16]) {
    for (d, &a) in d.iter_mut().zip(a) {
        *d = f16_to_f32(a);
    }
}

/// `d[i] = decode(a[i])` for an 8-bit format (table lookups).
#[inline]
pub fn cvt_f32_fp8(d: &mut [f32], a: &[u8], fmt: Fp8Format) {
    let table = fmt.table();
    for (d, &a) in d.iter_mut().zip(a) {
        *d = f32::from_bits(table[a as usize]);
    }
}

/// `d[i] = v_cvt_i32_f32(a[i])` (truncating, saturating, NaN -> 0).
#[inline]
pub fn cvt_i32_f32(d: &mut [i32], a: &[f32]) {
    for (d, &a) in d.iter_mut().zip(a) {
        *d = a as i32;
    }
}

/// Flushes every f32 denormal of `d` to a signed zero when `flush`.
#[inline]
pub fn flush_denormals_f32(d: &mut [f32], flush: bool) {
    for d in d.iter_mut() {
        *d = flush_f32(*d, flush);
    }
}

/// `d[i] = op(a[i])` for a transcendental under `mode`.
#[inline]
pub fn transcendental_f32(d: &mut [f32], a: &[f32], op: TransOp, mode: Mode) {
    for (d, &a) in d.iter_mut().zip(a) {
        *d = op.eval_f32_mode(a, mode);
    }
}
