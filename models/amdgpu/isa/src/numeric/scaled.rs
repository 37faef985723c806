//! The gfx950 block-scaled conversions (`v_cvt_scalef32_*`) between f32/f16/bf16 and the
//! OCP fp8/bf8 and MX fp6/bf6/fp4 element formats: one element, the packed pairs, the
//! 32-element fp6 groups, and the pseudo-random sequence their stochastic forms use.
//!
//! What the CDNA4 ISA guide (sections 7.3 and 12.11) defines, and what this model chose
//! where it is silent (*model*):
//!
//! - **Scale.** The scale operand is an f32 whose biased exponent field (bits 30:23) is an
//!   E8M0 exponent `e` with bias 127 ("The scale can come from a VGPR or an inline-constant
//!   (float exponent portion is used)"); its sign and mantissa are ignored, so abs/neg on
//!   the scale operand change nothing. Converting *to* a narrow format divides by
//!   `2^(e - 127)`, converting *from* one multiplies by it. `e = 255` is the E8M0 NaN of the
//!   OCP MX specification, which makes every element of its block NaN: the fp8 NaN code,
//!   a quiet NaN with the element's sign for f32/f16/bf16, and (*model*, as AMD's HIP host
//!   emulation `amd_hip_ocp_host.hpp` does) the signed maximum for fp4/fp6, which have no
//!   NaN.
//! - **Down-conversion** (`f32`/`f16`/`bf16` -> narrow): the exact quotient is rounded once,
//!   to nearest even or stochastically ([`Rounding`]). fp8/bf8 results follow MODE.FP16_OVFL
//!   per the guide's table (see [`super::fp8`]); fp4/fp6 results always saturate ("Conversion
//!   to F4/F6 does not support FP16_OVFL"; "the value is clamped/saturated to the maximum
//!   FP4/FP6 magnitude, preserving the sign"), NaN included (see [`super::mx`]). f32 sources
//!   are flushed per MODE.FP_DENORM ("Conversion from F32 supports MODE-based denormal
//!   control"); f16 and bf16 sources are never flushed (*model*, as section 7.4 says of
//!   every sub-32-bit float input). Narrow subnormal results are kept.
//! - **Up-conversion** (narrow -> `f32`/`f16`/`bf16`): the product of the element and the
//!   scale is exact and rounded once to nearest even; nothing is flushed ("F4/F6/F8 allows
//!   denorms regardless of MODE"); a product beyond the destination's range is ±Inf (*model*:
//!   AMD's host emulation, which marks it "gfx950 HW behavior"; FP16_OVFL is not applied).
//!   NaN results are the destination's canonical quiet NaN with the element's sign.
//! - **Stochastic rounding.** `v_cvt_sr_fp8_f32` is the one instruction with pseudocode: the
//!   top bits of the 32-bit random operand (`S1[31:12]` for fp8, `S1[31:11]` for bf8) are
//!   added to the f32 mantissa bits below the fp8 precision, then the result is truncated
//!   ("These ops add a random value from the specified VGPR and then truncate to the smaller
//!   result data type"). This model rounds every stochastic conversion the same way, on the
//!   exact value: `floor(|x| / ulp + R / 2^32) * ulp` with the sign of `x`, `ulp` being the
//!   target's spacing at `|x|` ([`super::round::round_stochastic`]). For a normal result this
//!   is exactly the pseudocode whatever the source format (the random's top bits meet the
//!   discarded bits, lower random bits only meet zeros). Two cases differ from a literal
//!   reading of that pseudocode, deliberately: a carry out of the mantissa increments the
//!   exponent (the pseudocode wraps the 23-bit sum around, which would round 1.97 to 1.0; the
//!   guide's prose, RDNA4's "adds bits ... to the input data value and then truncates" and
//!   AMD's host emulation all carry), and results in the target's subnormal range take the
//!   random value at the subnormal spacing (as AMD's host emulation does).
//! - **Several random values.** The multi-element stochastic forms (`sr_pk_fp4`,
//!   `sr_pk32_*`) round element `k` with `prng^k(S1)`, where [`prng`] is `v_prng_b32`'s
//!   LFSR step ("an updated random number is generated every pass ... via V_PRNG_B32 but not
//!   written").
//!
//! Everything here is a pure function of its arguments (no MODE access: callers pass the
//! flush and saturation flags), allocation-free, and total over every bit pattern.

use super::convert::{bf16_to_f32, f16_to_f32, f64_to_bf16, f64_to_f16};
use super::fp8::Fp8Format;
use super::mode::flush_f32;
use super::mx::{self, MxFormat};
use super::round::RoundMode;

/// An E8M0 block scale: a biased power of two, or NaN (255).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scale(u8);

impl Scale {
    /// The scale 1.0 (E8M0 127).
    pub const ONE: Scale = Scale(127);

    /// The scale an f32 scale operand carries: its biased exponent field (bits 30:23).
    #[inline]
    pub const fn from_f32_bits(bits: u32) -> Scale {
        Scale((bits >> 23) as u8)
    }

    /// [`Scale::from_f32_bits`] of an f32 value.
    #[inline]
    pub fn from_f32(x: f32) -> Scale {
        Scale::from_f32_bits(x.to_bits())
    }

    /// The scale of an E8M0 code.
    #[inline]
    pub const fn from_e8m0(code: u8) -> Scale {
        Scale(code)
    }

    /// The E8M0 code.
    #[inline]
    pub const fn e8m0(self) -> u8 {
        self.0
    }

    /// True for the E8M0 NaN (255).
    #[inline]
    pub const fn is_nan(self) -> bool {
        self.0 == 0xff
    }

    /// `2^(sign * (e - 127))` as an f64 (exact; meaningless for the NaN code).
    #[inline]
    fn power(self, sign: i32) -> f64 {
        let e = sign * (self.0 as i32 - 127);
        f64::from_bits(((e + 1023) as u64) << 52)
    }
}

/// How a down-conversion rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Round to nearest, ties to even.
    NearestEven,
    /// Stochastic rounding with this 32-bit random value (see the module docs).
    Stochastic(u32),
}

/// The wide side of a conversion: what a source element is read as, or a result written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wide {
    /// IEEE binary32.
    F32,
    /// IEEE binary16 (in the low 16 bits).
    F16,
    /// bfloat16 (in the low 16 bits).
    Bf16,
}

impl Wide {
    /// The exact value of an element held in the low bits of `bits`; an f32 denormal is
    /// flushed to a zero of its sign when `flush_denormal` (MODE.FP_DENORM input flushing).
    #[inline]
    pub fn value(self, bits: u32, flush_denormal: bool) -> f64 {
        match self {
            Wide::F32 => flush_f32(f32::from_bits(bits), flush_denormal) as f64,
            Wide::F16 => f16_to_f32(bits as u16) as f64,
            Wide::Bf16 => bf16_to_f32(bits as u16) as f64,
        }
    }

    /// The canonical quiet NaN of this format with the given sign.
    #[inline]
    pub const fn nan(self, negative: bool) -> u32 {
        match self {
            Wide::F32 => ((negative as u32) << 31) | 0x7fc0_0000,
            Wide::F16 => ((negative as u32) << 15) | 0x7e00,
            Wide::Bf16 => ((negative as u32) << 15) | 0x7fc0,
        }
    }

    /// Rounds an exact value to nearest even in this format (overflow gives ±Inf, subnormal
    /// results are kept); a NaN gives [`Wide::nan`] with its sign.
    #[inline]
    pub fn round(self, x: f64) -> u32 {
        if x.is_nan() {
            return self.nan(x.is_sign_negative());
        }
        match self {
            // The f64 -> f32 cast rounds to nearest even, subnormals and overflow included.
            Wide::F32 => (x as f32).to_bits(),
            Wide::F16 => f64_to_f16(x, RoundMode::NearestEven) as u32,
            Wide::Bf16 => f64_to_bf16(x, RoundMode::NearestEven) as u32,
        }
    }
}

/// The narrow side of a scaled conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Narrow {
    /// An 8-bit float (gfx950: OCP E4M3FN "fp8" or E5M2 "bf8").
    Fp8(Fp8Format),
    /// An MX sub-byte format (fp6 E2M3, bf6 E3M2, fp4 E2M1).
    Mx(MxFormat),
}

impl Narrow {
    /// gfx950 "fp8" (OCP E4M3FN).
    pub const FP8: Narrow = Narrow::Fp8(Fp8Format::E4M3Fn);
    /// gfx950 "bf8" (OCP E5M2).
    pub const BF8: Narrow = Narrow::Fp8(Fp8Format::E5M2);
    /// "fp6" (E2M3).
    pub const FP6: Narrow = Narrow::Mx(MxFormat::E2M3);
    /// "bf6" (E3M2).
    pub const BF6: Narrow = Narrow::Mx(MxFormat::E3M2);
    /// "fp4" (E2M1).
    pub const FP4: Narrow = Narrow::Mx(MxFormat::E2M1);

    /// Width of a code in bits.
    #[inline]
    pub const fn width(self) -> u32 {
        match self {
            Narrow::Fp8(_) => 8,
            Narrow::Mx(m) => m.width(),
        }
    }

    /// The exact value of a code (NaN and ±Inf for the fp8 codes that encode them).
    #[inline]
    pub fn value(self, code: u8) -> f64 {
        match self {
            Narrow::Fp8(f) => f.to_f32(code) as f64,
            Narrow::Mx(m) => m.to_f32(code) as f64,
        }
    }

    /// The code of a NaN of the given sign: the fp8 NaN, or the signed maximum of an MX
    /// format (see the module docs).
    #[inline]
    pub fn nan_code(self, negative: bool) -> u8 {
        match self {
            Narrow::Fp8(f) => f.nan(negative),
            Narrow::Mx(m) => m.nan_code(negative),
        }
    }

    /// Rounds an exact value into this format once. `saturate` (MODE.FP16_OVFL) matters for
    /// fp8 only: the MX formats always saturate.
    #[inline]
    pub fn encode(self, x: f64, rounding: Rounding, saturate: bool) -> u8 {
        match (self, rounding) {
            (Narrow::Fp8(f), Rounding::NearestEven) => f.from_f64(x, RoundMode::NearestEven, saturate),
            (Narrow::Fp8(f), Rounding::Stochastic(r)) => f.from_f64_sr(x, r, saturate),
            (Narrow::Mx(m), Rounding::NearestEven) => m.from_f64(x, RoundMode::NearestEven),
            (Narrow::Mx(m), Rounding::Stochastic(r)) => m.from_f64_sr(x, r),
        }
    }
}

/// One down-converted element: `x / 2^(scale - 127)` rounded once into `narrow` (see the
/// module docs for NaN, Inf, overflow and the NaN scale).
#[inline]
pub fn scale_down(narrow: Narrow, x: f64, scale: Scale, rounding: Rounding, saturate: bool) -> u8 {
    if x.is_nan() || scale.is_nan() {
        return narrow.nan_code(x.is_sign_negative());
    }
    narrow.encode(x * scale.power(-1), rounding, saturate)
}

/// One up-converted element: `value(code) * 2^(scale - 127)` rounded once into `wide`,
/// returned as its bit pattern (16-bit formats in the low half).
#[inline]
pub fn scale_up(narrow: Narrow, code: u8, scale: Scale, wide: Wide) -> u32 {
    let v = narrow.value(code);
    if v.is_nan() || scale.is_nan() {
        return wide.nan(v.is_sign_negative());
    }
    wide.round(v * scale.power(1))
}

/// One step of `v_prng_b32`'s LFSR: `(x << 1) ^ (x[31] ? 197 : 0)`.
#[inline]
pub const fn prng(x: u32) -> u32 {
    (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 }
}

/// The rounding of element `k` of a multi-element conversion: stochastic rounding uses
/// `prng^k(seed)` (element 0 the seed itself).
#[inline]
fn advance(rounding: Rounding) -> Rounding {
    match rounding {
        Rounding::Stochastic(r) => Rounding::Stochastic(prng(r)),
        Rounding::NearestEven => Rounding::NearestEven,
    }
}

/// Two elements into one fp8 word `{tmp1, tmp0}` (`v_cvt_scalef32_pk_{fp8,bf8}_*`, nearest
/// even; `a` in bits 7:0).
#[inline]
pub fn pack2_fp8(fmt: Fp8Format, a: f64, b: f64, scale: Scale, saturate: bool) -> u16 {
    let lo = scale_down(Narrow::Fp8(fmt), a, scale, Rounding::NearestEven, saturate);
    let hi = scale_down(Narrow::Fp8(fmt), b, scale, Rounding::NearestEven, saturate);
    lo as u16 | (hi as u16) << 8
}

/// Both elements of an fp8 word (`v_cvt_scalef32_pk_{f32,f16,bf16}_{fp8,bf8}`): bits 7:0
/// then 15:8.
#[inline]
pub fn unpack2_fp8(fmt: Fp8Format, word: u16, scale: Scale, wide: Wide) -> [u32; 2] {
    [scale_up(Narrow::Fp8(fmt), word as u8, scale, wide), scale_up(Narrow::Fp8(fmt), (word >> 8) as u8, scale, wide)]
}

/// Two elements into one fp4 byte `{tmp1, tmp0}` (`a` in bits 3:0). Stochastic rounding
/// rounds `b` with `prng(seed)` (`v_cvt_scalef32_sr_pk_fp4_*`).
#[inline]
pub fn pack2_fp4(a: f64, b: f64, scale: Scale, rounding: Rounding) -> u8 {
    let lo = scale_down(Narrow::FP4, a, scale, rounding, true);
    let hi = scale_down(Narrow::FP4, b, scale, advance(rounding), true);
    lo | hi << 4
}

/// Both elements of an fp4 byte (`v_cvt_scalef32_pk_{f32,f16,bf16}_fp4`): bits 3:0, 7:4.
#[inline]
pub fn unpack2_fp4(byte: u8, scale: Scale, wide: Wide) -> [u32; 2] {
    [scale_up(Narrow::FP4, byte & 0xf, scale, wide), scale_up(Narrow::FP4, byte >> 4, scale, wide)]
}

/// 32 elements into 192 packed fp6/bf6 bits (element `i` in bits `6i+5 : 6i`); stochastic
/// rounding rounds element `i` with `prng^i(seed)` (`v_cvt_scalef32_{sr_,}pk32_*`,
/// `v_cvt_scalef32_2xpk16_*` with the caller's element order).
#[inline]
pub fn pack32_fp6(fmt: MxFormat, values: &[f64; 32], scale: Scale, rounding: Rounding) -> [u32; 6] {
    let mut codes = [0u8; 32];
    let mut r = rounding;
    for (code, &x) in codes.iter_mut().zip(values) {
        *code = scale_down(Narrow::Mx(fmt), x, scale, r, true);
        r = advance(r);
    }
    mx::pack_fp6(&codes)
}

/// The 32 elements of 192 packed fp6/bf6 bits, up-converted (`v_cvt_scalef32_pk32_*_{fp6,bf6}`).
#[inline]
pub fn unpack32_fp6(fmt: MxFormat, packed: &[u32; 6], scale: Scale, wide: Wide) -> [u32; 32] {
    let mut out = [0u32; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = scale_up(Narrow::Mx(fmt), mx::fp6_element(packed, i as u32), scale, wide);
    }
    out
}
