//! Dot products: the `v_dot*` VALU instructions and the per-element multiply-accumulate
//! kernels of the MFMA (matrix) instructions. The matrix shapes and register layouts belong
//! to the executor; these functions compute one output element's contribution.
//!
//! `v_dot*` follow the ISA pseudocode's evaluation order exactly:
//! - `v_dot2_f32_f16` / `v_dot2c_f32_f16`: `t = C; t += a0*b0; t += a1*b1` in f32 (each
//!   product is exact in f32, each add rounds to nearest even);
//! - `v_dot2_f32_bf16`: `t = a0*b0; t += a1*b1; t += C` (products exact in f32 unless they
//!   leave the f32 range);
//! - integer dots accumulate exactly; with `clamp` the final value saturates to the
//!   destination type, otherwise it wraps.
//!
//! MFMA element kernels, and the precision they model:
//! - f64 (`v_mfma_f64_*`): one fused multiply-add per k step, in order;
//! - f32 (`v_mfma_f32_*_f32`): one fused multiply-add in f32 per k step, in order
//!   ([`valu::fma_f32_rne`]);
//! - xf32 (gfx942 `*_xf32`): each input rounded to nearest even to 10 mantissa bits, then
//!   as f32 (the product of two xf32 values is exact in f32);
//! - f16, bf16 (including the older `*_bf16_1k` and pre-1k bf16 forms, which differ only in
//!   shape), fp8/bf8 (FNUZ on gfx942, OCP on gfx950, any mix of A/B formats), and i8:
//!   every product is exact; the products of one k-block are summed in f64 (exact unless
//!   the block's products span more than 2^53 in magnitude), the block sum is added to the
//!   f32 accumulator and rounded once to nearest even. i8 accumulates in i32, wrapping.
//!
//! The hardware's internal adder-tree width is not public; this model documents one
//! rounding per k-block, which matches the products-then-accumulate reading of the ISA text.
//!
//! The executor's matrix instructions (`exec::mfma`, whose docs state the complete model)
//! refine these kernels: the f64 block sum starts from -0.0, is added to the f32
//! accumulator with a single rounding of the exact sum ([`super::matrix::add_block_f32`];
//! the slice kernels here round the f64 sum, then to f32), NaN results are the default
//! quiet NaN, and the sums run vectorized across output columns in the same k order.

use super::convert::{bf16_to_f32, f16_to_f32};
use super::fp8::Fp8Format;
use super::round::RoundMode;
use super::valu;

/// Saturates an i64 to i32 (clamp) or wraps.
#[inline]
const fn finish_i32(exact: i64, clamp: bool) -> u32 {
    if clamp {
        let c = if exact > i32::MAX as i64 {
            i32::MAX as i64
        } else if exact < i32::MIN as i64 {
            i32::MIN as i64
        } else {
            exact
        };
        c as i32 as u32
    } else {
        exact as u32
    }
}

/// Saturates a u64 to u32 (clamp) or wraps.
#[inline]
const fn finish_u32(exact: u64, clamp: bool) -> u32 {
    if clamp && exact > u32::MAX as u64 {
        u32::MAX
    } else {
        exact as u32
    }
}

/// `v_dot2_f32_f16 D = C + a.lo*b.lo + a.hi*b.hi` (also `v_dot2c_f32_f16` with C = D).
#[inline]
pub fn dot2_f32_f16(a: u32, b: u32, c: f32, rm: RoundMode) -> f32 {
    let p0 = f16_to_f32(a as u16) * f16_to_f32(b as u16);
    let p1 = f16_to_f32((a >> 16) as u16) * f16_to_f32((b >> 16) as u16);
    valu::add_f32(valu::add_f32(c, p0, rm), p1, rm)
}

/// `v_dot2_f32_bf16 D = (a.lo*b.lo + a.hi*b.hi) + C` in that order.
#[inline]
pub fn dot2_f32_bf16(a: u32, b: u32, c: f32, rm: RoundMode) -> f32 {
    let p0 = valu::mul_f32(bf16_to_f32(a as u16), bf16_to_f32(b as u16), rm);
    let p1 = valu::mul_f32(bf16_to_f32((a >> 16) as u16), bf16_to_f32((b >> 16) as u16), rm);
    valu::add_f32(valu::add_f32(p0, p1, rm), c, rm)
}

/// `v_dot2c_f32_bf16 D = D + a.lo*b.lo + a.hi*b.hi` (accumulator first).
#[inline]
pub fn dot2c_f32_bf16(a: u32, b: u32, d: f32, rm: RoundMode) -> f32 {
    let p0 = valu::mul_f32(bf16_to_f32(a as u16), bf16_to_f32(b as u16), rm);
    let p1 = valu::mul_f32(bf16_to_f32((a >> 16) as u16), bf16_to_f32((b >> 16) as u16), rm);
    valu::add_f32(valu::add_f32(d, p0, rm), p1, rm)
}

/// `v_dot2_i32_i16` (and `v_dot2c_i32_i16`).
#[inline]
pub const fn dot2_i32_i16(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let p0 = a as u16 as i16 as i64 * b as u16 as i16 as i64;
    let p1 = (a >> 16) as u16 as i16 as i64 * (b >> 16) as u16 as i16 as i64;
    finish_i32(c as i32 as i64 + p0 + p1, clamp)
}

/// `v_dot2_u32_u16`.
#[inline]
pub const fn dot2_u32_u16(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let p0 = (a & 0xffff) as u64 * (b & 0xffff) as u64;
    let p1 = (a >> 16) as u64 * (b >> 16) as u64;
    finish_u32(c as u64 + p0 + p1, clamp)
}

/// `v_dot4_i32_i8` (and `v_dot4c_i32_i8`).
#[inline]
pub const fn dot4_i32_i8(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let mut acc = c as i32 as i64;
    let mut i = 0;
    while i < 4 {
        let x = (a >> (8 * i)) as u8 as i8 as i64;
        let y = (b >> (8 * i)) as u8 as i8 as i64;
        acc += x * y;
        i += 1;
    }
    finish_i32(acc, clamp)
}

/// `v_dot4_u32_u8`.
#[inline]
pub const fn dot4_u32_u8(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let mut acc = c as u64;
    let mut i = 0;
    while i < 4 {
        acc += ((a >> (8 * i)) & 0xff) as u64 * ((b >> (8 * i)) & 0xff) as u64;
        i += 1;
    }
    finish_u32(acc, clamp)
}

/// `v_dot8_i32_i4` (and `v_dot8c_i32_i4`).
#[inline]
pub const fn dot8_i32_i4(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let mut acc = c as i32 as i64;
    let mut i = 0;
    while i < 8 {
        let x = (((a >> (4 * i)) << 28) as i32 >> 28) as i64;
        let y = (((b >> (4 * i)) << 28) as i32 >> 28) as i64;
        acc += x * y;
        i += 1;
    }
    finish_i32(acc, clamp)
}

/// `v_dot8_u32_u4`.
#[inline]
pub const fn dot8_u32_u4(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let mut acc = c as u64;
    let mut i = 0;
    while i < 8 {
        acc += ((a >> (4 * i)) & 0xf) as u64 * ((b >> (4 * i)) & 0xf) as u64;
        i += 1;
    }
    finish_u32(acc, clamp)
}

// ---------------------------------------------------------------------------------------
// MFMA element kernels
// ---------------------------------------------------------------------------------------

/// f64 MFMA step: `acc + a*b`, fused.
#[inline]
pub fn mfma_f64_step(acc: f64, a: f64, b: f64) -> f64 {
    a.mul_add(b, acc)
}

/// f32 MFMA over k steps: one fused multiply-add per step, in order. Uses the shorter of
/// the two slices.
#[inline]
pub fn mfma_f32_dot(acc: f32, a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(acc, |t, (&x, &y)| valu::fma_f32_rne(x, y, t))
}

/// Rounds an f32 to xf32 precision (10 explicit mantissa bits, f32 exponent range) to
/// nearest even; NaN and Inf pass.
#[inline]
pub fn round_to_xf32(x: f32) -> f32 {
    let bits = x.to_bits();
    if (bits & 0x7f80_0000) == 0x7f80_0000 {
        return x;
    }
    let round = 0x0fff + ((bits >> 13) & 1);
    f32::from_bits(bits.wrapping_add(round) & 0xffff_e000)
}

/// gfx942 xf32 MFMA over k steps: inputs rounded to xf32, exact products, f32 fused steps.
#[inline]
pub fn mfma_xf32_dot(acc: f32, a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .fold(acc, |t, (&x, &y)| valu::fma_f32_rne(round_to_xf32(x), round_to_xf32(y), t))
}

/// Adds an f64 block sum of exact products to an f32 accumulator, rounding once.
#[inline]
fn accumulate(acc: f32, block: f64) -> f32 {
    (acc as f64 + block) as f32
}

/// f16 MFMA k-block: `acc + sum(a[i]*b[i])` with exact products and one rounding.
#[inline]
pub fn dot_f16_f32<const N: usize>(a: [u16; N], b: [u16; N], acc: f32) -> f32 {
    dot_f16_f32_slice(&a, &b, acc)
}

/// Slice form of [`dot_f16_f32`] (uses the shorter slice).
#[inline]
pub fn dot_f16_f32_slice(a: &[u16], b: &[u16], acc: f32) -> f32 {
    let block: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f16_to_f32(x) as f64 * f16_to_f32(y) as f64)
        .sum();
    accumulate(acc, block)
}

/// bf16 MFMA k-block (all bf16 MFMA generations): exact products, one rounding.
#[inline]
pub fn dot_bf16_f32<const N: usize>(a: [u16; N], b: [u16; N], acc: f32) -> f32 {
    dot_bf16_f32_slice(&a, &b, acc)
}

/// Slice form of [`dot_bf16_f32`].
#[inline]
pub fn dot_bf16_f32_slice(a: &[u16], b: &[u16], acc: f32) -> f32 {
    let block: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| bf16_to_f32(x) as f64 * bf16_to_f32(y) as f64)
        .sum();
    accumulate(acc, block)
}

/// fp8/bf8 MFMA k-block with independent A and B formats (FNUZ on gfx942, OCP on gfx950):
/// exact products through the decode tables, one rounding.
#[inline]
pub fn dot_fp8_f32<const N: usize>(
    fmt_a: Fp8Format,
    fmt_b: Fp8Format,
    a: [u8; N],
    b: [u8; N],
    acc: f32,
) -> f32 {
    dot_fp8_f32_slice(fmt_a, fmt_b, &a, &b, acc)
}

/// Slice form of [`dot_fp8_f32`].
#[inline]
pub fn dot_fp8_f32_slice(fmt_a: Fp8Format, fmt_b: Fp8Format, a: &[u8], b: &[u8], acc: f32) -> f32 {
    let (ta, tb) = (fmt_a.table(), fmt_b.table());
    let block: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| {
            f32::from_bits(ta[x as usize]) as f64 * f32::from_bits(tb[y as usize]) as f64
        })
        .sum();
    accumulate(acc, block)
}

/// i8 MFMA k-block: exact products accumulated into i32 with wrapping.
#[inline]
pub fn dot_i8_i32<const N: usize>(a: [i8; N], b: [i8; N], acc: i32) -> i32 {
    dot_i8_i32_slice(&a, &b, acc)
}

/// Slice form of [`dot_i8_i32`].
#[inline]
pub fn dot_i8_i32_slice(a: &[i8], b: &[i8], acc: i32) -> i32 {
    a.iter()
        .zip(b)
        .fold(acc, |t, (&x, &y)| t.wrapping_add(x as i32 * y as i32))
}
