//! The four 8-bit float formats of CDNA3/CDNA4 and their conversions.
//!
//! | format      | ISA name (target) | bias | Inf | NaN            | -0 | max    |
//! |-------------|-------------------|------|-----|----------------|----|--------|
//! | E4M3FNUZ    | fp8 (gfx942)      | 8    | no  | 0x80 only      | no | 240    |
//! | E5M2FNUZ    | bf8 (gfx942)      | 16   | no  | 0x80 only      | no | 57344  |
//! | E4M3FN      | fp8 (gfx950, OCP) | 7    | no  | S.1111.111     | yes| 448    |
//! | E5M2        | bf8 (gfx950, OCP) | 15   | yes | S.11111.{01,10,11} | yes | 57344 |
//!
//! Decoding uses 256-entry tables built at compile time. Encoding from f32 rounds once,
//! either to nearest even (`v_cvt_pk_{fp8,bf8}_f32`) or stochastically
//! (`v_cvt_sr_{fp8,bf8}_f32`, see [`round_stochastic`]).
//!
//! Overflow policy (`saturate` = MODE.FP16_OVFL, the bit the compilers set for fp8 clamping):
//! a *finite* input whose rounded magnitude exceeds the format's maximum becomes the signed
//! maximum when saturating; otherwise it becomes Inf (E5M2) or NaN (E4M3FN: S.1111.111;
//! FNUZ: 0x80). NaN inputs give NaN (0x80 for FNUZ; S.1111.111 for E4M3FN and S.11111.10
//! for E5M2, keeping the sign). Zeros and underflows keep their sign except in FNUZ, which
//! has no negative zero and returns 0x00.
//!
//! Infinite inputs: the OCP formats follow the FP16_OVFL table of the CDNA4 ISA guide
//! (section 7.3, "CVT_*FP8_F32 and CVT*_BF8_F32 FP16_OVFL rule", the same table as the OCP
//! 8-bit spec's saturating mode): ±Inf gives the signed maximum when saturating, and NaN
//! (E4M3FN) or ±Inf (E5M2) otherwise. The FNUZ formats of gfx942 keep ±Inf -> NaN (0x80) in
//! both policies: the CDNA3 text available to this model has no such table, so the older
//! behaviour stays.
//!
//! The gfx950 scaled forms (`v_cvt_scalef32_*`) are described in [`super::scaled`]; the
//! `*_scaled` methods here are per-element conveniences on top of it.

use super::round::{
    finite_bits_to_f64, round_stochastic, round_to_format, split_f64, Format, RoundMode,
    Rounded, Specials,
};
use super::scaled::{scale_down, scale_up, Narrow, Rounding, Scale, Wide};

/// One of the four 8-bit float formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    /// gfx942 "fp8": E4M3, bias 8, no Inf, NaN 0x80, no -0.
    E4M3Fnuz,
    /// gfx942 "bf8": E5M2, bias 16, no Inf, NaN 0x80, no -0.
    E5M2Fnuz,
    /// gfx950 OCP "fp8": E4M3FN, bias 7, no Inf, NaN S.1111.111.
    E4M3Fn,
    /// gfx950 OCP "bf8": E5M2, bias 15, IEEE-like with Inf.
    E5M2,
}

impl Fp8Format {
    /// All four formats.
    pub const ALL: [Fp8Format; 4] =
        [Fp8Format::E4M3Fnuz, Fp8Format::E5M2Fnuz, Fp8Format::E4M3Fn, Fp8Format::E5M2];

    /// The bit-level description.
    #[inline]
    pub const fn format(self) -> Format {
        match self {
            Fp8Format::E4M3Fnuz => Format::E4M3FNUZ,
            Fp8Format::E5M2Fnuz => Format::E5M2FNUZ,
            Fp8Format::E4M3Fn => Format::E4M3FN,
            Fp8Format::E5M2 => Format::E5M2,
        }
    }

    /// The format the ISA calls "fp8" (E4M3) on a target: FNUZ on gfx942, OCP on gfx950.
    #[inline]
    pub const fn fp8(ocp: bool) -> Self {
        if ocp {
            Fp8Format::E4M3Fn
        } else {
            Fp8Format::E4M3Fnuz
        }
    }

    /// The format the ISA calls "bf8" (E5M2) on a target: FNUZ on gfx942, OCP on gfx950.
    #[inline]
    pub const fn bf8(ocp: bool) -> Self {
        if ocp {
            Fp8Format::E5M2
        } else {
            Fp8Format::E5M2Fnuz
        }
    }

    /// "bf8" (`bf8`) or "fp8" on a target (`ocp` for gfx950); see [`Fp8Format::fp8`].
    #[inline]
    pub const fn new(bf8: bool, ocp: bool) -> Self {
        if bf8 {
            Fp8Format::bf8(ocp)
        } else {
            Fp8Format::fp8(ocp)
        }
    }

    /// The largest finite value.
    #[inline]
    pub fn max_finite(self) -> f32 {
        self.to_f32(self.format().max_finite_bits() as u8)
    }

    /// Decodes one value (exact).
    #[inline]
    pub fn to_f32(self, bits: u8) -> f32 {
        f32::from_bits(self.table()[bits as usize])
    }

    /// The 256-entry decode table (f32 bit patterns).
    #[inline]
    pub fn table(self) -> &'static [u32; 256] {
        match self {
            Fp8Format::E4M3Fnuz => &TABLE_E4M3FNUZ,
            Fp8Format::E5M2Fnuz => &TABLE_E5M2FNUZ,
            Fp8Format::E4M3Fn => &TABLE_E4M3FN,
            Fp8Format::E5M2 => &TABLE_E5M2,
        }
    }

    /// True when `bits` is a NaN of this format.
    #[inline]
    pub const fn is_nan(self, bits: u8) -> bool {
        match self {
            Fp8Format::E4M3Fnuz | Fp8Format::E5M2Fnuz => bits == 0x80,
            Fp8Format::E4M3Fn => bits & 0x7f == 0x7f,
            Fp8Format::E5M2 => bits & 0x7f > 0x7c,
        }
    }

    /// The NaN this module produces, with the sign of the input where the format has one.
    #[inline]
    pub const fn nan(self, negative: bool) -> u8 {
        let sign = (negative as u8) << 7;
        match self {
            Fp8Format::E4M3Fnuz | Fp8Format::E5M2Fnuz => 0x80,
            Fp8Format::E4M3Fn => sign | 0x7f,
            Fp8Format::E5M2 => sign | 0x7e,
        }
    }

    /// The result for an infinite input (see the module docs): the signed maximum for the
    /// OCP formats when saturating, else Inf (E5M2) or NaN.
    #[inline]
    const fn inf_result(self, negative: bool, saturate: bool) -> u8 {
        match self {
            Fp8Format::E4M3Fn | Fp8Format::E5M2 if saturate => {
                ((negative as u8) << 7) | self.format().max_finite_bits() as u8
            }
            Fp8Format::E5M2 => ((negative as u8) << 7) | 0x7c,
            _ => self.nan(negative),
        }
    }

    /// The result for a finite input whose rounded magnitude overflows.
    #[inline]
    const fn overflow(self, negative: bool, saturate: bool) -> u8 {
        let sign = (negative as u8) << 7;
        if saturate {
            return sign | self.format().max_finite_bits() as u8;
        }
        match self {
            Fp8Format::E5M2 => sign | 0x7c,
            _ => self.nan(negative),
        }
    }

    /// Attaches the sign to a finite magnitude, dropping it for FNUZ zeros.
    #[inline]
    const fn signed(self, negative: bool, magnitude: u8) -> u8 {
        let fnuz_zero = magnitude == 0 && matches!(self.format().specials, Specials::Fnuz);
        if negative && !fnuz_zero {
            0x80 | magnitude
        } else {
            magnitude
        }
    }

    /// Converts an f64 (exact input) with rounding `rm`; see the module docs for specials.
    #[inline]
    pub fn from_f64(self, x: f64, rm: RoundMode, saturate: bool) -> u8 {
        let negative = x.is_sign_negative();
        if x.is_nan() {
            return self.nan(negative);
        }
        if x.is_infinite() {
            return self.inf_result(negative, saturate);
        }
        let (_, sig, exp) = split_f64(x);
        match round_to_format(negative, sig, exp, false, self.format(), rm) {
            Rounded::Finite(enc) => self.signed(negative, enc as u8),
            Rounded::Overflow => self.overflow(negative, saturate),
        }
    }

    /// Round-to-nearest-even conversion (`v_cvt_pk_{fp8,bf8}_f32` per element): a
    /// branch-light bit-level path, identical to [`Fp8Format::from_f64`] with
    /// [`RoundMode::NearestEven`].
    #[inline]
    pub fn from_f32(self, x: f32, saturate: bool) -> u8 {
        let bits = x.to_bits();
        let negative = bits >> 31 != 0;
        let abs = bits & 0x7fff_ffff;
        if abs >= 0x7f80_0000 {
            return if abs > 0x7f80_0000 { self.nan(negative) } else { self.inf_result(negative, saturate) };
        }
        let fmt = self.format();
        let man = fmt.man_bits;
        let drop = 23 - man;
        // Smallest f32 exponent field that is normal in the target.
        let min_normal_field = (127 + fmt.emin()) as u32;
        let magnitude = if abs >> 23 >= min_normal_field {
            let rebias = abs - ((127 - fmt.bias) as u32) * (1 << 23);
            let round = (1u32 << (drop - 1)) - 1 + ((rebias >> drop) & 1);
            (rebias + round) >> drop
        } else {
            // Subnormal target: adding 2^k, whose f32 ulp is the target's subnormal spacing
            // 2^(emin - man), lets the f32 adder round to nearest even for us.
            let k_field = (127 + fmt.emin() - man as i32 + 23) as u32;
            let k = f32::from_bits(k_field << 23);
            (f32::from_bits(abs) + k).to_bits() - (k_field << 23)
        };
        if magnitude as u64 > fmt.max_finite_bits() {
            return self.overflow(negative, saturate);
        }
        self.signed(negative, magnitude as u8)
    }

    /// The per-element conversion of `v_cvt_pk_{fp8,bf8}_f32` under `mode`: the f32 input
    /// is flushed per MODE.FP_DENORM.f32, and MODE.FP16_OVFL selects saturation. (The VOP3
    /// clamp bit is not modelled for these conversions.)
    #[inline]
    pub fn from_f32_mode(self, x: f32, mode: super::mode::Mode) -> u8 {
        self.from_f32(mode.flush_in_f32(x), mode.fp16_ovfl)
    }

    /// `v_cvt_sr_{fp8,bf8}_f32` under `mode` (see [`Fp8Format::from_f32_mode`]).
    #[inline]
    pub fn from_f32_sr_mode(self, x: f32, random: u32, mode: super::mode::Mode) -> u8 {
        self.from_f32_sr(mode.flush_in_f32(x), random, mode.fp16_ovfl)
    }

    /// Stochastic rounding with 32 random bits (`v_cvt_sr_{fp8,bf8}_f32`).
    #[inline]
    pub fn from_f32_sr(self, x: f32, random: u32, saturate: bool) -> u8 {
        self.from_f64_sr(x as f64, random, saturate)
    }

    /// Stochastic rounding of an exact f64 value.
    #[inline]
    pub fn from_f64_sr(self, x: f64, random: u32, saturate: bool) -> u8 {
        let negative = x.is_sign_negative();
        if x.is_nan() {
            return self.nan(negative);
        }
        if x.is_infinite() {
            return self.inf_result(negative, saturate);
        }
        let (_, sig, exp) = split_f64(x);
        match round_stochastic(sig, exp, random, self.format()) {
            Rounded::Finite(enc) => self.signed(negative, enc as u8),
            Rounded::Overflow => self.overflow(negative, saturate),
        }
    }

    /// gfx950 scaled conversion to this format: `x / 2^(scale_exp - 127)`, rounded to
    /// nearest even (`v_cvt_scalef32_pk_{fp8,bf8}_f32` per element; see [`scale_down`]).
    #[inline]
    pub fn from_f32_scaled(self, x: f32, scale: f32, saturate: bool) -> u8 {
        scale_down(Narrow::Fp8(self), x as f64, Scale::from_f32(scale), Rounding::NearestEven, saturate)
    }

    /// gfx950 scaled stochastic conversion (`v_cvt_scalef32_sr_{fp8,bf8}_f32`).
    #[inline]
    pub fn from_f32_scaled_sr(self, x: f32, random: u32, scale: f32, saturate: bool) -> u8 {
        scale_down(Narrow::Fp8(self), x as f64, Scale::from_f32(scale), Rounding::Stochastic(random), saturate)
    }

    /// gfx950 scaled conversion of an f16 source (`v_cvt_scalef32_pk_{fp8,bf8}_f16`).
    #[inline]
    pub fn from_f16_scaled(self, h: u16, scale: f32, saturate: bool) -> u8 {
        let x = Wide::F16.value(h as u32, false);
        scale_down(Narrow::Fp8(self), x, Scale::from_f32(scale), Rounding::NearestEven, saturate)
    }

    /// gfx950 scaled conversion of a bf16 source (`v_cvt_scalef32_pk_{fp8,bf8}_bf16`).
    #[inline]
    pub fn from_bf16_scaled(self, h: u16, scale: f32, saturate: bool) -> u8 {
        let x = Wide::Bf16.value(h as u32, false);
        scale_down(Narrow::Fp8(self), x, Scale::from_f32(scale), Rounding::NearestEven, saturate)
    }

    /// gfx950 scaled decode to f16 bits, one rounding to nearest even
    /// (`v_cvt_scalef32_{pk_,}f16_{fp8,bf8}`; see [`scale_up`]).
    #[inline]
    pub fn to_f16_scaled(self, bits: u8, scale: f32) -> u16 {
        scale_up(Narrow::Fp8(self), bits, Scale::from_f32(scale), Wide::F16) as u16
    }

    /// gfx950 scaled decode to bf16 bits, one rounding to nearest even
    /// (`v_cvt_scalef32_pk_bf16_{fp8,bf8}`).
    #[inline]
    pub fn to_bf16_scaled(self, bits: u8, scale: f32) -> u16 {
        scale_up(Narrow::Fp8(self), bits, Scale::from_f32(scale), Wide::Bf16) as u16
    }

    /// gfx950 scaled decode: `value * 2^(scale_exp - 127)`, rounded to nearest f32
    /// (`v_cvt_scalef32_{pk_,}f32_{fp8,bf8}`).
    #[inline]
    pub fn to_f32_scaled(self, bits: u8, scale: f32) -> f32 {
        f32::from_bits(scale_up(Narrow::Fp8(self), bits, Scale::from_f32(scale), Wide::F32))
    }
}

/// Packs two conversions into the low/high bytes of a 16-bit word (`{tmp1, tmp0}`).
#[inline]
pub fn cvt_pk_to_fp8(fmt: Fp8Format, s0: f32, s1: f32, saturate: bool) -> u16 {
    (fmt.from_f32(s0, saturate) as u16) | ((fmt.from_f32(s1, saturate) as u16) << 8)
}

/// Decodes both bytes of a 16-bit word (`v_cvt_pk_f32_{fp8,bf8}`): [low byte, high byte].
#[inline]
pub fn cvt_pk_from_fp8(fmt: Fp8Format, word: u16) -> [f32; 2] {
    [fmt.to_f32(word as u8), fmt.to_f32((word >> 8) as u8)]
}

/// Writes a 16-bit word into the low (`hi == false`) or high half of `dst`, preserving the
/// other half (the `OPSEL[3]` destination select of the packed fp8 conversions).
#[inline]
pub const fn insert_word(dst: u32, word: u16, hi: bool) -> u32 {
    if hi {
        (dst & 0x0000_ffff) | ((word as u32) << 16)
    } else {
        (dst & 0xffff_0000) | word as u32
    }
}

/// Writes `byte` into byte lane `index & 3` of `dst`, preserving the others (the `OPSEL[3:2]`
/// destination select of `v_cvt_sr_*`).
#[inline]
pub const fn insert_byte(dst: u32, byte: u8, index: u32) -> u32 {
    let shift = (index & 3) * 8;
    (dst & !(0xffu32 << shift)) | ((byte as u32) << shift)
}

/// The whole `v_cvt_pk_{fp8,bf8}_f32 vdst, s0, s1` lane: both sources converted under
/// `mode` (input flush, FP16_OVFL saturation, nearest even), packed `{s1, s0}` into the half
/// of `dst` selected by OPSEL[3] (`hi`); the other half is preserved.
#[inline]
pub fn v_cvt_pk_f8_f32(fmt: Fp8Format, dst: u32, s0: f32, s1: f32, hi: bool, mode: super::mode::Mode) -> u32 {
    let word = (fmt.from_f32_mode(s0, mode) as u16) | ((fmt.from_f32_mode(s1, mode) as u16) << 8);
    insert_word(dst, word, hi)
}

/// The whole `v_cvt_sr_{fp8,bf8}_f32 vdst, s0, s1` lane: `s0` stochastically rounded with
/// the random bits `s1` under `mode`, written to byte OPSEL[3:2] (`byte`) of `dst`.
#[inline]
pub fn v_cvt_sr_f8_f32(fmt: Fp8Format, dst: u32, s0: f32, random: u32, byte: u32, mode: super::mode::Mode) -> u32 {
    insert_byte(dst, fmt.from_f32_sr_mode(s0, random, mode), byte)
}

/// The whole `v_cvt_pk_f32_{fp8,bf8} vdst[0:1], s0` lane: the 16-bit word selected by the
/// SDWA WORD1 select (`hi`) decoded into two f32 results.
#[inline]
pub fn v_cvt_pk_f32_f8(fmt: Fp8Format, s0: u32, hi: bool) -> [f32; 2] {
    cvt_pk_from_fp8(fmt, if hi { (s0 >> 16) as u16 } else { s0 as u16 })
}

/// Builds the decode table of a format with integer arithmetic at compile time.
const fn build_table(fmt: Format) -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut code = 0usize;
    while code < 256 {
        table[code] = decode_bits(fmt, code as u8);
        code += 1;
    }
    table
}

/// f32 bit pattern of one 8-bit code.
const fn decode_bits(fmt: Format, code: u8) -> u32 {
    let negative = code & 0x80 != 0;
    let sign = if negative { 0x8000_0000u32 } else { 0 };
    let magnitude = (code & 0x7f) as u32;
    let man = fmt.man_bits;
    let field = magnitude >> man;
    let frac = magnitude & ((1 << man) - 1);
    let all_ones_exp = (1u32 << fmt.exp_bits) - 1;
    match fmt.specials {
        Specials::Fnuz => {
            if code == 0x80 {
                return 0x7fc0_0000;
            }
        }
        Specials::FiniteNanAllOnes => {
            if magnitude == 0x7f {
                return sign | 0x7fc0_0000;
            }
        }
        Specials::Finite => {}
        Specials::Ieee => {
            if field == all_ones_exp {
                return if frac == 0 {
                    sign | 0x7f80_0000
                } else {
                    sign | 0x7f80_0000 | 0x0040_0000 | (frac << (23 - man))
                };
            }
        }
    }
    if magnitude == 0 {
        return sign;
    }
    // value = sig * 2^(e) with sig having its leading one at bit `lead`.
    let (sig, e) = if field == 0 {
        (frac, 1 - fmt.bias - man as i32)
    } else {
        (frac | (1 << man), field as i32 - fmt.bias - man as i32)
    };
    let lead = 31 - sig.leading_zeros();
    let exponent = e + lead as i32; // unbiased exponent of the value
    let fraction = (sig << (23 - lead)) & 0x7f_ffff;
    sign | (((exponent + 127) as u32) << 23) | fraction
}

static TABLE_E4M3FNUZ: [u32; 256] = build_table(Format::E4M3FNUZ);
static TABLE_E5M2FNUZ: [u32; 256] = build_table(Format::E5M2FNUZ);
static TABLE_E4M3FN: [u32; 256] = build_table(Format::E4M3FN);
static TABLE_E5M2: [u32; 256] = build_table(Format::E5M2);

/// Exact decode through the generic path (used by tests to cross-check the tables).
#[inline]
pub fn decode_generic(fmt: Fp8Format, bits: u8) -> f32 {
    if fmt.is_nan(bits) {
        return f32::NAN;
    }
    let f = fmt.format();
    if matches!(f.specials, Specials::Ieee) && (bits & 0x7f) == 0x7c {
        return if bits & 0x80 != 0 { f32::NEG_INFINITY } else { f32::INFINITY };
    }
    let magnitude = finite_bits_to_f64(f, (bits & 0x7f) as u64) as f32;
    if bits & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    }
}
