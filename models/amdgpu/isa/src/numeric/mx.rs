//! The gfx950 OCP MX sub-byte element formats FP4 (E2M1) and FP6 (E2M3 "fp6", E3M2 "bf6"),
//! used by `v_cvt_scalef32_*fp4*` / `*fp6*` / `*bf6*` and the `v_mfma_*_f8f6f4` kernels.
//!
//! Codes are passed in the low bits of a `u8` (4 or 6 bits; higher bits are ignored). None
//! of these formats has Inf or NaN, so conversions always saturate (the CDNA4 ISA guide,
//! section 7.3: "the value is clamped/saturated to the maximum FP4/FP6 magnitude, preserving
//! the sign"; conversion to F4/F6 ignores FP16_OVFL): a value beyond the largest finite
//! magnitude, an infinite input included, gives the signed maximum. A NaN input also gives
//! the maximum with the NaN's sign bit: the ISA text does not define it, and this model
//! follows AMD's HIP host emulation of these conversions (`amd_hip_ocp_host.hpp`, whose
//! NaN of a format without NaN is its signed maximum). Zeros keep their sign.
//!
//! Scaled conversions use the E8M0 exponent of an f32 scale (see [`super::scaled`]): decoding
//! multiplies by `2^(e - 127)`, encoding divides by it, with one rounding. Packing follows the
//! ISA: two FP4 values per byte with the first source in bits 3:0; 32 FP6 values per 192
//! bits with element i in bits `6i+5 : 6i`.

use super::round::{
    finite_bits_to_f64, round_stochastic, round_to_format, split_f64, Format, RoundMode, Rounded,
};
use super::scaled::{scale_down, scale_up, Narrow, Rounding, Scale, Wide};

/// One of the MX sub-byte formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxFormat {
    /// FP4 E2M1: values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
    E2M1,
    /// FP6 E2M3 ("fp6"): max 7.5, subnormal step 0.125.
    E2M3,
    /// FP6 E3M2 ("bf6"): max 28, subnormal step 0.0625.
    E3M2,
}

impl MxFormat {
    /// All three formats.
    pub const ALL: [MxFormat; 3] = [MxFormat::E2M1, MxFormat::E2M3, MxFormat::E3M2];

    /// The bit-level description.
    #[inline]
    pub const fn format(self) -> Format {
        match self {
            MxFormat::E2M1 => Format::E2M1,
            MxFormat::E2M3 => Format::E2M3,
            MxFormat::E3M2 => Format::E3M2,
        }
    }

    /// Width of a code in bits (4 or 6).
    #[inline]
    pub const fn width(self) -> u32 {
        self.format().width()
    }

    /// Mask of the code bits.
    #[inline]
    pub const fn mask(self) -> u8 {
        ((1u32 << self.width()) - 1) as u8
    }

    /// Decodes a code (exact).
    #[inline]
    pub fn to_f32(self, code: u8) -> f32 {
        let code = code & self.mask();
        let sign_bit = 1u8 << (self.width() - 1);
        let magnitude = finite_bits_to_f64(self.format(), (code & !sign_bit) as u64) as f32;
        if code & sign_bit != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The largest finite value.
    #[inline]
    pub fn max_finite(self) -> f32 {
        self.to_f32(self.format().max_finite_bits() as u8)
    }

    /// The sign bit of `x` in this format and the largest finite code.
    #[inline]
    fn sign_and_max(self, x: f64) -> (u8, u8) {
        ((x.is_sign_negative() as u8) << (self.width() - 1), self.format().max_finite_bits() as u8)
    }

    /// The saturated code of a NaN or an infinity (the maximum with the input's sign);
    /// `None` when finite.
    #[inline]
    fn non_finite(self, x: f64) -> Option<u8> {
        let (sign, max) = self.sign_and_max(x);
        (!x.is_finite()).then_some(sign | max)
    }

    /// The code this model gives a NaN (input or scale) of sign `negative`: the signed
    /// maximum (see the module docs).
    #[inline]
    pub fn nan_code(self, negative: bool) -> u8 {
        ((negative as u8) << (self.width() - 1)) | self.format().max_finite_bits() as u8
    }

    /// Converts an exact f64 with rounding `rm`, saturating.
    #[inline]
    pub fn from_f64(self, x: f64, rm: RoundMode) -> u8 {
        let (sign, max) = self.sign_and_max(x);
        if let Some(code) = self.non_finite(x) {
            return code;
        }
        let (negative, sig, exp) = split_f64(x);
        match round_to_format(negative, sig, exp, false, self.format(), rm) {
            Rounded::Finite(enc) => sign | enc as u8,
            Rounded::Overflow => sign | max,
        }
    }

    /// Round-to-nearest-even conversion of an f32.
    #[inline]
    pub fn from_f32(self, x: f32) -> u8 {
        self.from_f64(x as f64, RoundMode::NearestEven)
    }

    /// Stochastic conversion of an exact f64 with 32 random bits (see
    /// [`round_stochastic`]), saturating.
    #[inline]
    pub fn from_f64_sr(self, x: f64, random: u32) -> u8 {
        let (sign, max) = self.sign_and_max(x);
        if let Some(code) = self.non_finite(x) {
            return code;
        }
        let (_, sig, exp) = split_f64(x);
        match round_stochastic(sig, exp, random, self.format()) {
            Rounded::Finite(enc) => sign | enc as u8,
            Rounded::Overflow => sign | max,
        }
    }

    /// gfx950 scaled conversion: `x / 2^(scale_exp - 127)` rounded to nearest even (see
    /// [`scale_down`]).
    #[inline]
    pub fn from_f32_scaled(self, x: f32, scale: f32) -> u8 {
        scale_down(Narrow::Mx(self), x as f64, Scale::from_f32(scale), Rounding::NearestEven, true)
    }

    /// gfx950 scaled stochastic conversion (see [`scale_down`]).
    #[inline]
    pub fn from_f32_scaled_sr(self, x: f32, random: u32, scale: f32) -> u8 {
        scale_down(Narrow::Mx(self), x as f64, Scale::from_f32(scale), Rounding::Stochastic(random), true)
    }

    /// gfx950 scaled decode: `value * 2^(scale_exp - 127)` rounded to nearest f32; a NaN
    /// scale (exponent field 255) gives NaN (see [`scale_up`]).
    #[inline]
    pub fn to_f32_scaled(self, code: u8, scale: f32) -> f32 {
        f32::from_bits(scale_up(Narrow::Mx(self), code, Scale::from_f32(scale), Wide::F32))
    }
}

/// `v_cvt_scalef32_pk_fp4_f32` byte: `{fp4(s1), fp4(s0)}` (S0 in bits 3:0).
#[inline]
pub fn cvt_scalef32_pk_fp4_f32(s0: f32, s1: f32, scale: f32) -> u8 {
    let lo = MxFormat::E2M1.from_f32_scaled(s0, scale);
    let hi = MxFormat::E2M1.from_f32_scaled(s1, scale);
    lo | (hi << 4)
}

/// `v_cvt_scalef32_pk_f32_fp4`: both nibbles of a byte decoded and scaled: [bits 3:0, 7:4].
#[inline]
pub fn cvt_scalef32_pk_f32_fp4(byte: u8, scale: f32) -> [f32; 2] {
    [MxFormat::E2M1.to_f32_scaled(byte & 0xf, scale), MxFormat::E2M1.to_f32_scaled(byte >> 4, scale)]
}

/// Reads FP6 element `index` (0..32) of a 192-bit packed vector given as six dwords.
#[inline]
pub fn fp6_element(packed: &[u32; 6], index: u32) -> u8 {
    let bit = (index % 32) * 6;
    let word = (bit / 32) as usize;
    let shift = bit % 32;
    let low = packed[word] >> shift;
    let high = if shift > 26 && word + 1 < 6 { packed[word + 1] << (32 - shift) } else { 0 };
    ((low | high) & 0x3f) as u8
}

/// Packs 32 FP6 codes into 192 bits (element i in bits `6i+5 : 6i`).
#[inline]
pub fn pack_fp6(codes: &[u8; 32]) -> [u32; 6] {
    let mut out = [0u32; 6];
    for (i, &code) in codes.iter().enumerate() {
        let bit = i as u32 * 6;
        let word = (bit / 32) as usize;
        let shift = bit % 32;
        let code = (code & 0x3f) as u32;
        out[word] |= code << shift;
        if shift > 26 && word + 1 < 6 {
            out[word + 1] |= code >> (32 - shift);
        }
    }
    out
}

/// MX MFMA k-block (`v_mfma_*_f8f6f4` with FP4/FP6 operands): exact products, summed in f64,
/// one rounding into the f32 accumulator (see [`super::dot`]). Uses the shorter slice.
#[inline]
pub fn dot_mx_f32_slice(fmt_a: MxFormat, fmt_b: MxFormat, a: &[u8], b: &[u8], acc: f32) -> f32 {
    let block: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| fmt_a.to_f32(x) as f64 * fmt_b.to_f32(y) as f64)
        .sum();
    (acc as f64 + block) as f32
}
