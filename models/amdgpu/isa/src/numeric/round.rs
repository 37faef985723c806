//! IEEE rounding modes and the exact rounding core every narrowing conversion uses.
//!
//! [`round_to_format`] takes an exact value `(-1)^sign * sig * 2^exp` (plus a sticky flag for
//! bits already lost below `sig`) and rounds it once into any binary format described by
//! [`Format`]: f16, bf16, f32, the four fp8 flavours. Because the input is exact, the result
//! is correctly rounded in every [`RoundMode`]; callers never double-round.

/// One of the four IEEE rounding directions, in the MODE.FP_ROUND 2-bit encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundMode {
    /// 0: round to nearest, ties to even.
    #[default]
    NearestEven = 0,
    /// 1: round toward +infinity.
    TowardPositive = 1,
    /// 2: round toward -infinity.
    TowardNegative = 2,
    /// 3: round toward zero (truncate).
    TowardZero = 3,
}

impl RoundMode {
    /// All four modes, in encoding order.
    pub const ALL: [RoundMode; 4] = [
        RoundMode::NearestEven,
        RoundMode::TowardPositive,
        RoundMode::TowardNegative,
        RoundMode::TowardZero,
    ];

    /// Decodes the 2-bit field (higher bits are ignored).
    #[inline]
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::NearestEven,
            1 => Self::TowardPositive,
            2 => Self::TowardNegative,
            _ => Self::TowardZero,
        }
    }

    /// The 2-bit hardware encoding.
    #[inline]
    pub const fn bits(self) -> u32 {
        self as u32
    }

    /// Whether a value of the given sign whose magnitude overflows the format rounds to
    /// infinity (true) or to the largest finite magnitude (false), per IEEE 754.
    #[inline]
    pub const fn overflows_to_infinity(self, negative: bool) -> bool {
        match self {
            RoundMode::NearestEven => true,
            RoundMode::TowardZero => false,
            RoundMode::TowardPositive => !negative,
            RoundMode::TowardNegative => negative,
        }
    }
}

/// How a format spends its top exponent code and its sign bit on special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Specials {
    /// IEEE 754: all-ones exponent is Inf (zero mantissa) or NaN; signed zeros.
    Ieee,
    /// OCP "FN" (E4M3FN): no Inf; only all-ones exponent *and* mantissa is NaN, so the top
    /// exponent code holds finite values too; signed zeros.
    FiniteNanAllOnes,
    /// "FNUZ" (gfx942 fp8): no Inf, no negative zero; the single NaN is sign=1 with all
    /// other bits zero (0x80); every other code is finite.
    Fnuz,
    /// OCP MX FP6/FP4 element formats: no Inf, no NaN; every code is finite; signed zeros.
    Finite,
}

/// A binary floating-point format of at most 64 bits: sign, exponent field, mantissa field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// Width of the exponent field.
    pub exp_bits: u32,
    /// Width of the stored mantissa (fraction) field.
    pub man_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// How special values are encoded.
    pub specials: Specials,
}

impl Format {
    /// IEEE binary16.
    pub const F16: Format = Format { exp_bits: 5, man_bits: 10, bias: 15, specials: Specials::Ieee };
    /// bfloat16.
    pub const BF16: Format = Format { exp_bits: 8, man_bits: 7, bias: 127, specials: Specials::Ieee };
    /// IEEE binary32.
    pub const F32: Format = Format { exp_bits: 8, man_bits: 23, bias: 127, specials: Specials::Ieee };
    /// IEEE binary64.
    pub const F64: Format =
        Format { exp_bits: 11, man_bits: 52, bias: 1023, specials: Specials::Ieee };
    /// OCP E4M3FN (gfx950 "fp8"): bias 7, no Inf, NaN = S.1111.111, max 448.
    pub const E4M3FN: Format =
        Format { exp_bits: 4, man_bits: 3, bias: 7, specials: Specials::FiniteNanAllOnes };
    /// OCP E5M2 (gfx950 "bf8"): bias 15, IEEE-like with Inf, max 57344.
    pub const E5M2: Format = Format { exp_bits: 5, man_bits: 2, bias: 15, specials: Specials::Ieee };
    /// E4M3FNUZ (gfx942 "fp8"): bias 8, NaN = 0x80 only, max 240.
    pub const E4M3FNUZ: Format =
        Format { exp_bits: 4, man_bits: 3, bias: 8, specials: Specials::Fnuz };
    /// E5M2FNUZ (gfx942 "bf8"): bias 16, NaN = 0x80 only, max 57344.
    pub const E5M2FNUZ: Format =
        Format { exp_bits: 5, man_bits: 2, bias: 16, specials: Specials::Fnuz };
    /// OCP MX FP4 E2M1 (gfx950 "fp4"): bias 1, max 6.
    pub const E2M1: Format = Format { exp_bits: 2, man_bits: 1, bias: 1, specials: Specials::Finite };
    /// OCP MX FP6 E2M3 (gfx950 "fp6"): bias 1, max 7.5.
    pub const E2M3: Format = Format { exp_bits: 2, man_bits: 3, bias: 1, specials: Specials::Finite };
    /// OCP MX FP6 E3M2 (gfx950 "bf6"): bias 3, max 28.
    pub const E3M2: Format = Format { exp_bits: 3, man_bits: 2, bias: 3, specials: Specials::Finite };

    /// Total width in bits (sign included).
    #[inline]
    pub const fn width(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    /// Position of the sign bit.
    #[inline]
    pub const fn sign_bit(self) -> u64 {
        1u64 << (self.exp_bits + self.man_bits)
    }

    /// Encoding (without sign) of the largest finite magnitude.
    #[inline]
    pub const fn max_finite_bits(self) -> u64 {
        let all = (1u64 << (self.exp_bits + self.man_bits)) - 1;
        match self.specials {
            Specials::Ieee => self.inf_bits() - 1,
            Specials::FiniteNanAllOnes => all - 1,
            Specials::Fnuz | Specials::Finite => all,
        }
    }

    /// Encoding (without sign) of infinity, for IEEE formats.
    #[inline]
    pub const fn inf_bits(self) -> u64 {
        ((1u64 << self.exp_bits) - 1) << self.man_bits
    }

    /// Minimum normal unbiased exponent.
    #[inline]
    pub const fn emin(self) -> i32 {
        1 - self.bias
    }
}

/// Outcome of rounding a finite nonzero magnitude into a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounded {
    /// A finite encoding (magnitude bits only; the caller adds the sign). May be zero.
    Finite(u64),
    /// The rounded magnitude exceeds the largest finite value of the format.
    Overflow,
}

/// Rounds the exact magnitude `sig * 2^exp` (with `sticky` meaning "plus a nonzero amount
/// smaller than one unit of `sig`") into `fmt` with rounding direction `rm` applied to a
/// value of sign `negative`. `sig == 0 && !sticky` yields `Finite(0)`.
///
/// The result is the correctly rounded magnitude encoding or [`Rounded::Overflow`];
/// overflow policy (Inf, NaN, saturation) is the caller's.
///
/// Precondition for `sticky`: the lost amount must be below half an ulp of the target,
/// which holds whenever `sig` carries at least two bits below the target precision (all
/// callers in this module pass `sticky = false` or a `sig` of 53+ bits).
#[inline]
pub fn round_to_format(
    negative: bool,
    sig: u64,
    exp: i32,
    sticky: bool,
    fmt: Format,
    rm: RoundMode,
) -> Rounded {
    if sig == 0 {
        // Only a sticky remainder below 2^exp: it is < 1 unit at 2^exp; treat as a tiny
        // positive amount. It rounds to zero or to the smallest subnormal.
        if !sticky {
            return Rounded::Finite(0);
        }
        let up = match rm {
            RoundMode::TowardPositive => !negative,
            RoundMode::TowardNegative => negative,
            _ => false,
        };
        return Rounded::Finite(up as u64);
    }
    let msb = 63 - sig.leading_zeros() as i32;
    let lead_exp = exp + msb;
    let emin = fmt.emin();
    let man = fmt.man_bits as i32;
    let ulp_exp = if lead_exp >= emin { lead_exp } else { emin } - man;
    let shift = ulp_exp - exp;
    let (mut q, guard, rest) = if shift <= 0 {
        // Exact: fewer significant bits than the target keeps. `q` stays below 2^(man+1).
        (sig << ((-shift) as u32), false, sticky)
    } else if shift > 64 {
        (0u64, false, true)
    } else {
        let wide = sig as u128;
        let q = (wide >> shift) as u64;
        let rem = wide & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        (q, rem & half != 0, sticky || (rem & (half - 1)) != 0)
    };
    let inexact = guard || rest;
    let increment = match rm {
        RoundMode::NearestEven => guard && (rest || (q & 1) == 1),
        RoundMode::TowardZero => false,
        RoundMode::TowardPositive => !negative && inexact,
        RoundMode::TowardNegative => negative && inexact,
    };
    q += increment as u64;
    compose(q, ulp_exp, fmt)
}

/// Packs a rounded significand `q` (units of `2^ulp_exp`, below `2^(man+2)`) into `fmt`.
#[inline]
fn compose(mut q: u64, mut ulp_exp: i32, fmt: Format) -> Rounded {
    let man = fmt.man_bits as i32;
    if q >> (man + 1) != 0 {
        // Carry out of the significand: q is exactly 2^(man+1).
        q >>= 1;
        ulp_exp += 1;
    }
    // Biased exponent field if the value is normal; in the subnormal range this is 1 and
    // the encoding below reduces to `q` itself.
    let field = ulp_exp + man + fmt.bias;
    let max_field = (1i64 << fmt.exp_bits) - 1;
    if field as i64 > max_field {
        return Rounded::Overflow;
    }
    let enc = (((field - 1) as u64) << man) + q;
    if enc > fmt.max_finite_bits() {
        return Rounded::Overflow;
    }
    Rounded::Finite(enc)
}

/// Stochastically rounds the exact magnitude `sig * 2^exp` into `fmt`: the result is
/// `floor(|x| / ulp + random / 2^32) * ulp`, where `ulp` is the spacing of `fmt` at `|x|`
/// (the subnormal spacing below the normal range). So `x` rounds away from zero with
/// probability equal to its distance from the truncated value, in units of `ulp`, when
/// `random` is uniform. Values below 2^-32 ulp contribute nothing (they are truncated).
///
/// This is the carry-propagating form of the `v_cvt_sr_*` instructions. The ISA text adds
/// the top bits of the random operand (`S1[31:12]` for fp8, `S1[31:11]` for bf8) to the
/// discarded f32 mantissa bits and truncates; for normal results of an f32 input that is
/// exactly this function (the lower random bits only meet zeros and cannot carry). Two
/// deliberate differences: a carry out of the mantissa increments the exponent (the text
/// says the sum wraps), and results in the target's subnormal range use the random value
/// at the subnormal spacing.
#[inline]
pub fn round_stochastic(sig: u64, exp: i32, random: u32, fmt: Format) -> Rounded {
    if sig == 0 {
        return Rounded::Finite(0);
    }
    let msb = 63 - sig.leading_zeros() as i32;
    let lead_exp = exp + msb;
    let emin = fmt.emin();
    let man = fmt.man_bits as i32;
    let ulp_exp = if lead_exp >= emin { lead_exp } else { emin } - man;
    let shift = ulp_exp - exp;
    let q = if shift <= 0 {
        sig << ((-shift) as u32)
    } else if shift >= 96 {
        0
    } else {
        let num = ((sig as u128) << 32) + ((random as u128) << shift);
        (num >> (shift + 32)) as u64
    };
    compose(q, ulp_exp, fmt)
}

/// Splits a finite f64 into (negative, sig, exp) with value = sig * 2^exp exactly.
#[inline]
pub fn split_f64(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if field == 0 {
        (negative, frac, -1074)
    } else {
        (negative, frac | (1u64 << 52), field - 1075)
    }
}

/// Splits a finite f32 into (negative, sig, exp) with value = sig * 2^exp exactly.
#[inline]
pub fn split_f32(x: f32) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let negative = bits >> 31 != 0;
    let field = ((bits >> 23) & 0xff) as i32;
    let frac = (bits & 0x7f_ffff) as u64;
    if field == 0 {
        (negative, frac, -149)
    } else {
        (negative, frac | (1u64 << 23), field - 150)
    }
}

/// Decodes any magnitude encoding of a finite value of `fmt` into f64 (exact for every
/// format here). The caller handles specials.
#[inline]
pub fn finite_bits_to_f64(fmt: Format, magnitude: u64) -> f64 {
    let field = (magnitude >> fmt.man_bits) as i32;
    let frac = magnitude & ((1u64 << fmt.man_bits) - 1);
    let (sig, exp) = if field == 0 {
        (frac, fmt.emin() - fmt.man_bits as i32)
    } else {
        (frac | (1u64 << fmt.man_bits), field - fmt.bias - fmt.man_bits as i32)
    };
    ldexp_exact(sig as f64, exp)
}

/// `x * 2^e` for values whose result is representable (used for exact decoding); scales
/// in steps so intermediate powers never overflow or underflow.
#[inline]
pub fn ldexp_exact(x: f64, e: i32) -> f64 {
    let mut x = x;
    let mut e = e;
    while e > 1000 {
        x *= f64::from_bits(((1000 + 1023) as u64) << 52);
        e -= 1000;
    }
    while e < -1000 {
        x *= f64::from_bits(((-1000 + 1023) as u64) << 52);
        e += 1000;
    }
    x * f64::from_bits(((e + 1023) as u64) << 52)
}
