//! Numeric building blocks of the matrix (MFMA/SMFMAC) model: element decode tables for
//! the 8-bit and narrower formats, the OCP MX E8M0 block scale, and the single rounding of
//! an exact f64 block sum into an f32 accumulator.
//!
//! The matrix shapes, register layouts and the order of the sums belong to the executor
//! (`exec::mfma`, whose module docs state the whole numeric model); this module holds the
//! pieces that are pure functions of numbers.

use std::sync::OnceLock;

use super::convert::add_round_to_odd;
use super::fp8::Fp8Format;
use super::mx::MxFormat;

/// The quiet NaN every floating-point matrix result that is NaN becomes (f32).
pub const F32_QNAN: u32 = 0x7fc0_0000;
/// The quiet NaN every f64 matrix result that is NaN becomes.
pub const F64_QNAN: u64 = 0x7ff8_0000_0000_0000;

/// An element format of the gfx950 `v_mfma_*_f8f6f4` instructions, as the CBSZ (A) and
/// BLGP (B) fields select it: 0 fp8 (E4M3), 1 bf8 (E5M2), 2 fp6 (E2M3), 3 bf6 (E3M2),
/// 4 fp4 (E2M1). Codes 5 to 7 are reserved.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum F8f6f4 {
    /// OCP E4M3 (fp8).
    Fp8,
    /// OCP E5M2 (bf8).
    Bf8,
    /// MX E2M3 (fp6).
    Fp6,
    /// MX E3M2 (bf6).
    Bf6,
    /// MX E2M1 (fp4).
    Fp4,
}

impl F8f6f4 {
    /// The format selected by a CBSZ/BLGP code, `None` for the reserved codes 5..=7.
    #[inline]
    pub const fn from_code(code: u32) -> Option<F8f6f4> {
        match code {
            0 => Some(F8f6f4::Fp8),
            1 => Some(F8f6f4::Bf8),
            2 => Some(F8f6f4::Fp6),
            3 => Some(F8f6f4::Bf6),
            4 => Some(F8f6f4::Fp4),
            _ => None,
        }
    }

    /// Bits per element (8, 6 or 4).
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            F8f6f4::Fp8 | F8f6f4::Bf8 => 8,
            F8f6f4::Fp6 | F8f6f4::Bf6 => 6,
            F8f6f4::Fp4 => 4,
        }
    }

    /// The decode table of the format (indexed by the element code in the low bits).
    #[inline]
    pub fn table(self) -> &'static [f64; 256] {
        match self {
            F8f6f4::Fp8 => fp8_table(Fp8Format::E4M3Fn),
            F8f6f4::Bf8 => fp8_table(Fp8Format::E5M2),
            F8f6f4::Fp6 => mx_table(MxFormat::E2M3),
            F8f6f4::Bf6 => mx_table(MxFormat::E3M2),
            F8f6f4::Fp4 => mx_table(MxFormat::E2M1),
        }
    }
}

/// A 256-entry table of the exact f64 values of an 8-bit float format (NaN codes decode to
/// NaN, OCP E5M2 infinities to infinities).
pub fn fp8_table(fmt: Fp8Format) -> &'static [f64; 256] {
    static TABLES: [OnceLock<[f64; 256]>; 4] = [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match fmt {
        Fp8Format::E4M3Fnuz => 0,
        Fp8Format::E5M2Fnuz => 1,
        Fp8Format::E4M3Fn => 2,
        Fp8Format::E5M2 => 3,
    };
    TABLES[slot].get_or_init(|| std::array::from_fn(|code| f32::from_bits(fmt.table()[code]) as f64))
}

/// A 256-entry table of the exact f64 values of an MX sub-byte format, indexed by a code
/// whose bits above the format's width are ignored (so every byte value is a valid index).
pub fn mx_table(fmt: MxFormat) -> &'static [f64; 256] {
    static TABLES: [OnceLock<[f64; 256]>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match fmt {
        MxFormat::E2M1 => 0,
        MxFormat::E2M3 => 1,
        MxFormat::E3M2 => 2,
    };
    TABLES[slot].get_or_init(|| std::array::from_fn(|code| fmt.to_f32(code as u8) as f64))
}

/// The value of an OCP MX E8M0 scale: `2^(e - 127)`, and NaN for `0xff`.
#[inline]
pub fn e8m0_to_f64(e: u8) -> f64 {
    if e == 0xff {
        f64::NAN
    } else {
        // 2^(e-127) is a normal f64 for every e in 0..=254: build it from its exponent field.
        f64::from_bits(((e as u64) + 1023 - 127) << 52)
    }
}

/// `acc + block` rounded once to nearest even in f32, where `block` is an f64 value (the
/// exact-or-f64-rounded sum of one k-block's products): the f64 sum is made round-to-odd
/// with an error-free transformation, so the final conversion rounds the exact sum once.
/// A NaN result is [`F32_QNAN`].
#[inline(always)]
pub fn add_block_f32(acc: f32, block: f64) -> f32 {
    quiet_f32(add_round_to_odd(acc as f64, block) as f32)
}

/// `x` with any NaN replaced by [`F32_QNAN`].
#[inline(always)]
pub fn quiet_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(F32_QNAN)
    } else {
        x
    }
}

/// `x` with any NaN replaced by [`F64_QNAN`].
#[inline(always)]
pub fn quiet_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(F64_QNAN)
    } else {
        x
    }
}

/// Rounds an f32 to xf32 precision (10 explicit mantissa bits, f32 exponent range) to
/// nearest even; NaN and Inf pass (the gfx942 `*_xf32` MFMA input conversion).
#[inline]
pub fn round_to_xf32(x: f32) -> f32 {
    super::dot::round_to_xf32(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e8m0_values() {
        assert_eq!(e8m0_to_f64(127), 1.0);
        assert_eq!(e8m0_to_f64(128), 2.0);
        assert_eq!(e8m0_to_f64(0), 2f64.powi(-127));
        assert_eq!(e8m0_to_f64(254), 2f64.powi(127));
        assert!(e8m0_to_f64(255).is_nan());
    }

    #[test]
    fn block_accumulation_rounds_once() {
        // The exact sum 1 + 2^-24 + 2^-60 needs 61 bits: a plain f64 add rounds it to the f32
        // tie 1 + 2^-24, which then rounds to 1.0; the exact sum is above the tie.
        let block = 2f64.powi(-24) + 2f64.powi(-60);
        assert_eq!(add_block_f32(1.0, block), 1.0 + 2f32.powi(-23));
        assert_eq!(((1.0f32 as f64) + block) as f32, 1.0, "the double rounding this avoids");
        assert_eq!(add_block_f32(-0.0, -0.0).to_bits(), 0x8000_0000);
        assert_eq!(add_block_f32(0.0, -0.0).to_bits(), 0);
        assert_eq!(add_block_f32(f32::MAX, 1e300), f32::INFINITY);
        assert_eq!(add_block_f32(1.0, f64::NAN).to_bits(), F32_QNAN);
    }

    #[test]
    fn tables_decode_every_format() {
        assert_eq!(F8f6f4::Fp4.table()[0x7], 6.0);
        assert_eq!(F8f6f4::Fp4.table()[0xf], -6.0);
        assert_eq!(F8f6f4::Fp6.table()[0x1f], 7.5);
        assert_eq!(F8f6f4::Bf6.table()[0x1f], 28.0);
        assert_eq!(F8f6f4::Fp8.table()[0x7e], 448.0);
        assert!(F8f6f4::Fp8.table()[0x7f].is_nan());
        assert_eq!(F8f6f4::Bf8.table()[0x7c], f64::INFINITY);
        assert_eq!(F8f6f4::from_code(5), None);
    }
}
