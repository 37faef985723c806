//! The k-block form of [`super::kernel`] (dense A, f32 accumulators: f16, bf16, fp8/bf8
//! and the f8f6f4 formats) written with AVX2+FMA intrinsics, used when the host has them.
//!
//! It computes exactly what the portable loops compute, in the same order: per output,
//! the block's products summed from -0.0 in k order (exact in f64, so a fused
//! multiply-add equals a multiply then add), times the block's two scales, added to the
//! f32 accumulator with one rounding (round-to-odd in f64, then to nearest even in f32),
//! NaN made the default quiet NaN. What differs is the shape of the work: `R` rows at
//! once with `V` vectors of four columns each, so `R * V` independent FMA chains hide the
//! FMA latency, and the rounding of four outputs at a time.
//!
//! `mfma_reference` tests the executor (this path on any AVX2 host) bit-exactly against an
//! independent reference.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::kernel::Work;
use crate::numeric::matrix::F32_QNAN;

/// Most columns a block has (32x32 forms).
const MAX_N: usize = 32;

/// Runs `work` (mode `BlockF32`, dense A, `m == 4 * V`) with `R` rows at a time.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn run<const V: usize, const R: usize>(work: &mut Work) {
    let n = 4 * V;
    let (m, k, ka) = (work.m, work.k, work.ka);
    let per_lane = work.per_lane.max(1);
    let groups = ka / per_lane;
    debug_assert!(m == n && m.is_multiple_of(R) && ka == k);
    for block in 0..work.blocks {
        let a_block = work.a_block[block] as usize;
        let bt = &work.bt[block * k * n..(block + 1) * k * n];
        for i0 in (0..m).step_by(R) {
            let out = block * m * n + i0 * n;
            let mut t = [[0f32; MAX_N]; R];
            for (r, row) in t.iter_mut().enumerate() {
                for (slot, &bits) in row.iter_mut().zip(&work.acc[out + r * n..out + (r + 1) * n]) {
                    *slot = f32::from_bits(bits as u32);
                }
            }
            for g in 0..groups {
                let a_rows: [&[f64]; R] = std::array::from_fn(|r| {
                    let start = (a_block * m + i0 + r) * ka + g * per_lane;
                    &work.a[start..start + per_lane]
                });
                let b_rows = &bt[g * per_lane * n..(g + 1) * per_lane * n];
                let sums = block_sums::<V, R>(&a_rows, b_rows);
                for (r, row) in t.iter_mut().enumerate() {
                    for (v, &sum) in sums[r].iter().enumerate() {
                        let s = if work.scaled {
                            let sa = _mm256_set1_pd(work.scale_a[g * m + i0 + r]);
                            let sb = &work.scale_b[g * m + 4 * v..g * m + 4 * v + 4];
                            _mm256_mul_pd(sum, _mm256_mul_pd(sa, _mm256_loadu_pd(sb.as_ptr())))
                        } else {
                            sum
                        };
                        let lanes = &mut row[4 * v..4 * v + 4];
                        let acc = _mm256_cvtps_pd(_mm_loadu_ps(lanes.as_ptr()));
                        let rounded = _mm256_cvtpd_ps(add_round_to_odd(acc, s));
                        let nan = _mm_cmpunord_ps(rounded, rounded);
                        let quiet = _mm_blendv_ps(rounded, _mm_castsi128_ps(_mm_set1_epi32(F32_QNAN as i32)), nan);
                        _mm_storeu_ps(lanes.as_mut_ptr(), quiet);
                    }
                }
            }
            for (r, row) in t.iter().enumerate() {
                for (slot, &x) in work.acc[out + r * n..out + (r + 1) * n].iter_mut().zip(row) {
                    *slot = x.to_bits() as u64;
                }
            }
        }
    }
}

/// For each of `R` rows, `sum_e a[r][e] * b[e][j]` for every column `j` (4 per vector),
/// in `e` order from -0.0. `b` holds `a[r].len()` rows of `4 * V` columns.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn block_sums<const V: usize, const R: usize>(a: &[&[f64]; R], b: &[f64]) -> [[__m256d; V]; R] {
    let mut s = [[_mm256_set1_pd(-0.0); V]; R];
    for (e, b_row) in b.chunks_exact(4 * V).enumerate() {
        // No closure here: it would not inherit the target features.
        let mut cols = [_mm256_setzero_pd(); V];
        for (v, col) in cols.iter_mut().enumerate() {
            // SAFETY: `b_row` has 4 * V elements and `v < V`.
            *col = _mm256_loadu_pd(b_row.as_ptr().add(4 * v));
        }
        for (row, sums) in a.iter().zip(s.iter_mut()) {
            let x = _mm256_set1_pd(row[e]);
            for (sum, &col) in sums.iter_mut().zip(&cols) {
                *sum = _mm256_fmadd_pd(x, col, *sum);
            }
        }
    }
    s
}

/// Four lanes of [`crate::numeric::convert::add_round_to_odd`]: `a + b` rounded to odd
/// (the nearest-even sum nudged to its odd neighbour toward the exact sum when inexact;
/// infinities and NaN pass).
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn add_round_to_odd(a: __m256d, b: __m256d) -> __m256d {
    let s = _mm256_add_pd(a, b);
    let bb = _mm256_sub_pd(s, a);
    let e = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
    let zero = _mm256_setzero_pd();
    let magnitude = _mm256_andnot_pd(_mm256_set1_pd(-0.0), s);
    let finite = _mm256_cmp_pd::<_CMP_LT_OQ>(magnitude, _mm256_set1_pd(f64::INFINITY));
    let inexact = _mm256_and_pd(_mm256_cmp_pd::<_CMP_NEQ_UQ>(e, zero), finite);
    let opposite = _mm256_xor_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(e, zero), _mm256_cmp_pd::<_CMP_LT_OQ>(s, zero));
    let overshoot = _mm256_and_pd(inexact, opposite);
    // A set mask lane is -1: adding it steps the magnitude down by one unit.
    let stepped = _mm256_add_epi64(_mm256_castpd_si256(s), _mm256_castpd_si256(overshoot));
    let odd = _mm256_and_si256(_mm256_castpd_si256(inexact), _mm256_set1_epi64x(1));
    _mm256_castsi256_pd(_mm256_or_si256(stepped, odd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::convert::add_round_to_odd as scalar;

    /// The vector rounding matches the scalar one on the cases that matter: exact,
    /// inexact either side, opposite signs, signed zeros, infinities, NaN, denormals.
    #[test]
    fn vector_round_to_odd_matches_the_scalar_one() {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            return;
        }
        let values = [
            0.0, -0.0, 1.0, -1.0, 1e-300, -3e-310, 5e-324, 1.5, 2f64.powi(60), -2f64.powi(-60), 3.0e38,
            f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0 + f64::EPSILON, 0.1, -0.3, 7.0e-46,
        ];
        for &a in &values {
            for &b in &values {
                // SAFETY: AVX2 and FMA were detected above.
                let got = unsafe {
                    let mut out = [0f64; 4];
                    _mm256_storeu_pd(out.as_mut_ptr(), add_round_to_odd(_mm256_set1_pd(a), _mm256_set1_pd(b)));
                    out[0]
                };
                let want = scalar(a, b);
                assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{a:e} + {b:e}: {got:e} vs {want:e}");
            }
        }
    }
}
