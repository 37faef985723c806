//! Buffer data formats: the DATA_FORMAT / NUM_FORMAT pairs of typed buffer loads and
//! stores (`buffer_*_format_*` take them from the resource's dword 3, `tbuffer_*` from the
//! instruction) and their conversions between memory and 32-bit (or, for `_d16`, 16-bit)
//! register values.
//!
//! Data formats name their channels most-significant first, as the CDNA ISA guides list
//! them: channel X is always at the least-significant bits. So `10_11_11` is X = bits
//! 10:0, Y = 21:11, Z = 31:22 (the R11G11B10 layout) and `2_10_10_10` is X = 9:0, Y =
//! 19:10, Z = 29:20, W = 31:30.
//!
//! **Loads** ("Read Data Format" in the ISA guide): normalized and scaled data return
//! floats, integer data returns integers of the storage signedness, 32-bit channels are
//! not converted. Conversions are exact or correctly rounded (round to nearest even):
//! unorm is `v / (2^n - 1)`, snorm `max(v / (2^(n-1) - 1), -1)`; f16 channels widen
//! exactly (a signalling NaN comes out quiet, as every IEEE conversion makes it), the
//! unsigned 10/11-bit floats re-encode bit for bit (same exponent bias as f16).
//!
//! Decisions the documents leave open, taken here (ARCHITECTURE.md, "Decisions"):
//! - **Unpaired formats are unbound.** A pair the guide's buffer format table does not
//!   list (the reserved DATA_FORMAT 15, the reserved NUM_FORMAT 6, float with 8-bit or
//!   2-bit channels, normalized or scaled 32-bit channels, non-float `10_11_11` /
//!   `11_11_10`) behaves as DATA_FORMAT INVALID, an unbound resource: loads return zero
//!   (a `dst_sel` SEL_1 channel one, 1.0 for the reserved NUM_FORMAT), stores are
//!   dropped. [`BufferFormat::new`] answers `None` for them.
//! - **Fill rule.** A load of a channel the format lacks reads 0, except W (alpha),
//!   which reads 1 in the number format's type: 1.0 for float, normalized and scaled, the
//!   integer 1 for uint and sint (f16 1.0 or the 16-bit integer 1 for `_d16`).
//! - **`_d16` loads** of values a 16-bit result cannot hold exactly: float-like formats
//!   round to f16, nearest even, IEEE overflow (a 16-bit uscaled 65535 loads as +Inf);
//!   32-bit uint and sint channels **saturate** to the 16-bit range (0..=65535,
//!   -32768..=32767), they are not truncated.
//! - **Stores into narrow channels** (the register value converted, then packed):
//!   - unorm / snorm: NaN to 0, clamp to [0, 1] / [-1, 1], scale by `2^n - 1` /
//!     `2^(n-1) - 1`, round to nearest even (the D3D rule, with RNE for its
//!     round-half-up);
//!   - uscaled / sscaled: NaN to 0, round to the nearest integer (ties even), saturate to
//!     the channel's range (Inf saturates too);
//!   - uint / sint from 32-bit data: the register read as u32 / i32, saturated to the
//!     channel's unsigned / signed range (32-bit channels store the register as it is);
//!   - float into 16-bit channels: f32 to f16, nearest even, IEEE overflow to Inf, NaN
//!     quiet with the top payload bits;
//!   - float into the unsigned 10/11-bit channels: the D3D11.3 functional spec's rules
//!     for these formats (3.1.6 and 3.2.2) but rounding to nearest even: a negative value
//!     (and -Inf, -0) becomes 0, NaN of either sign stays NaN (quiet, top payload bits),
//!     +Inf stays +Inf, a finite value above the largest finite one (65024 for 11 bits,
//!     64512 for 10) saturates to it (D3D: "the maximum representable value results, NOT
//!     including infinity"), denormals are kept. D3D's own float-to-float rounding is
//!     toward zero, where that overflow rule comes from; the 16-bit float channels here
//!     round to nearest even, and so do these, keeping D3D's overflow rule;
//!   - `_d16` stores read their 16-bit data as f16 for the float-like formats (unorm,
//!     snorm, scaled, float) and as u16 / i16 for uint / sint, then apply the same rules
//!     (a 16-bit channel of the same kind stores the 16 bits as they are).
//! - **Short stores.** A store of fewer components than a byte-aligned format holds
//!   writes only the bytes of the components it has; into a packed format (`10_11_11`,
//!   `11_11_10`, `10_10_10_2`, `2_10_10_10`: one dword) it writes the missing channels as
//!   0. A store of more components ignores the extra ones.
//!
//! Every pair of codes has a defined conversion: nothing here refuses an access.

#![allow(clippy::needless_range_loop)] // channel loops index channel arrays in lockstep

use crate::numeric::convert::{f16_to_f32, f32_to_f16, f64_to_f16};
use crate::numeric::round::{round_to_format, split_f32, Format, Rounded, Specials};
use crate::numeric::RoundMode;

/// A buffer NUM_FORMAT.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum NumFormat {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Float,
}

impl NumFormat {
    /// The 3-bit NUM_FORMAT code; `None` for the reserved code 6.
    pub(crate) fn from_code(code: u32) -> Option<NumFormat> {
        Some(match code & 7 {
            0 => NumFormat::Unorm,
            1 => NumFormat::Snorm,
            2 => NumFormat::Uscaled,
            3 => NumFormat::Sscaled,
            4 => NumFormat::Uint,
            5 => NumFormat::Sint,
            7 => NumFormat::Float,
            _ => return None,
        })
    }

    /// True when loads return integers (not floats).
    fn is_integer(self) -> bool {
        matches!(self, NumFormat::Uint | NumFormat::Sint)
    }
}

/// A buffer DATA_FORMAT: the width of each channel, X first.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct DataFormat {
    code: u32,
    widths: [u8; 4],
}

impl DataFormat {
    /// The 4-bit DATA_FORMAT code; `None` for 0 (INVALID) and the reserved 15.
    pub(crate) fn from_code(code: u32) -> Option<DataFormat> {
        let widths = match code & 15 {
            1 => [8, 0, 0, 0],
            2 => [16, 0, 0, 0],
            3 => [8, 8, 0, 0],
            4 => [32, 0, 0, 0],
            5 => [16, 16, 0, 0],
            6 => [11, 11, 10, 0],
            7 => [10, 11, 11, 0],
            8 => [2, 10, 10, 10],
            9 => [10, 10, 10, 2],
            10 => [8, 8, 8, 8],
            11 => [32, 32, 0, 0],
            12 => [16, 16, 16, 16],
            13 => [32, 32, 32, 0],
            14 => [32, 32, 32, 32],
            _ => return None,
        };
        Some(DataFormat { code: code & 15, widths })
    }

    /// Number of channels.
    pub(crate) fn channels(self) -> usize {
        self.widths.iter().filter(|&&w| w != 0).count()
    }

    /// Bytes one element occupies in memory.
    pub(crate) fn bytes(self) -> usize {
        self.widths.iter().map(|&w| w as usize).sum::<usize>() / 8
    }

    /// True for the packed 10/11-bit formats whose channels are not whole bytes.
    fn packed(self) -> bool {
        matches!(self.code, 6..=9)
    }

    /// True for the unsigned small-float formats `10_11_11` and `11_11_10`.
    fn small_float(self) -> bool {
        matches!(self.code, 6 | 7)
    }

    /// Bit position of channel `c`.
    fn shift(self, c: usize) -> u32 {
        self.widths[..c].iter().map(|&w| w as u32).sum()
    }

    /// Whether the format table pairs this data format with `nfmt`.
    fn pairs_with(self, nfmt: NumFormat) -> bool {
        let widest = self.widths.iter().copied().max().unwrap_or(0);
        match nfmt {
            NumFormat::Float => self.small_float() || matches!(widest, 16 | 32) && !self.packed(),
            NumFormat::Uint | NumFormat::Sint => !self.small_float(),
            _ => !self.small_float() && widest != 32,
        }
    }
}

/// A typed buffer format the format table defines: a DATA_FORMAT with a NUM_FORMAT it
/// pairs with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct BufferFormat {
    data: DataFormat,
    num: NumFormat,
}

impl BufferFormat {
    /// The format of the DATA_FORMAT and NUM_FORMAT codes; `None` when they name no
    /// format (INVALID, a reserved code, an unpaired combination): the access then behaves
    /// as through an unbound resource (see the module docs).
    pub(crate) fn new(dfmt: u32, nfmt: u32) -> Option<BufferFormat> {
        let data = DataFormat::from_code(dfmt)?;
        let num = NumFormat::from_code(nfmt)?;
        data.pairs_with(num).then_some(BufferFormat { data, num })
    }

    /// Bytes one element occupies in memory.
    pub(crate) fn bytes(self) -> usize {
        self.data.bytes()
    }

    /// True when loads return integers (UINT, SINT), not floats.
    pub(crate) fn is_integer(self) -> bool {
        self.num.is_integer()
    }

    /// The channels of one element as stored, without conversion: zero-extended, or
    /// sign-extended when `signed`; channels the format lacks read 0.
    pub(crate) fn raw_channels(self, bytes: &[u8; 16], signed: bool) -> [u32; 4] {
        let mut out = [0u32; 4];
        for c in 0..self.data.channels() {
            let raw = raw_channel(self.data, bytes, c);
            out[c] = if signed { sign_extend(raw, self.data.widths[c] as u32) as u32 } else { raw };
        }
        out
    }

    /// Converts one loaded element into its four channel values (X, Y, Z, W) as 32-bit
    /// register values, or as 16-bit values when `d16`. Channels the format lacks follow
    /// the fill rule: 0, and 1 for W.
    pub(crate) fn unpack(self, bytes: &[u8; 16], d16: bool) -> [u32; 4] {
        let (fmt, nfmt) = (self.data, self.num);
        let mut out = [0, 0, 0, one_of(nfmt, d16)];
        for c in 0..fmt.channels() {
            let raw = raw_channel(fmt, bytes, c);
            let width = fmt.widths[c] as u32;
            out[c] = match nfmt {
                NumFormat::Uint if d16 && width == 32 => raw.min(0xffff),
                NumFormat::Uint => raw,
                NumFormat::Sint => {
                    let v = sign_extend(raw, width);
                    if d16 {
                        v.clamp(i16::MIN as i32, i16::MAX as i32) as u32 & 0xffff
                    } else {
                        v as u32
                    }
                }
                NumFormat::Float if width == 32 && !d16 => raw,
                NumFormat::Float if width == 32 => f32_to_f16(f32::from_bits(raw), RoundMode::NearestEven) as u32,
                NumFormat::Float if width == 16 && d16 => raw,
                NumFormat::Float if width == 16 => f16_to_f32(raw as u16).to_bits(),
                NumFormat::Float => small_float_bits(raw, width - 5, d16),
                _ => {
                    let v = channel_value(width, nfmt, raw);
                    if d16 {
                        f64_to_f16(v, RoundMode::NearestEven) as u32
                    } else {
                        // Exact in f64 (at most 16 significant bits over at most 16 bits
                        // of divisor), so this is the one rounding.
                        (v as f32).to_bits()
                    }
                }
            };
        }
        out
    }

    /// Packs the first `count` register values of `comps` (32-bit, or 16-bit when `d16`)
    /// into one element: its bytes and the mask of bytes to write (see the module docs for
    /// the conversions and for stores of fewer components than the format holds).
    pub(crate) fn pack(self, comps: &[u32; 4], count: usize, d16: bool) -> ([u8; 16], u16) {
        let fmt = self.data;
        let written = if fmt.packed() { fmt.channels() } else { count.min(fmt.channels()) };
        let mut element = 0u128;
        let mut bits = 0u128;
        for c in 0..written {
            let width = fmt.widths[c] as u32;
            let raw = if c < count { store_channel(self.num, width, comps[c], d16) } else { 0 };
            let mask = if width == 32 { u32::MAX as u128 } else { (1u128 << width) - 1 };
            element |= (raw as u128 & mask) << fmt.shift(c);
            bits |= mask << fmt.shift(c);
        }
        let mut mask = 0u16;
        for i in 0..16 {
            if (bits >> (8 * i)) & 0xff != 0 {
                mask |= 1 << i;
            }
        }
        (element.to_le_bytes(), mask)
    }
}

/// The value of a "one" channel (`dst_sel` SEL_1, and the W fill) in the register
/// encoding loads of NUM_FORMAT `nfmt` return: 1 for integers, 1.0 otherwise (f16 1.0 for
/// `_d16`); the reserved code 6 counts as non-integer.
pub(crate) fn one(nfmt: u32, d16: bool) -> u32 {
    match NumFormat::from_code(nfmt) {
        Some(num) => one_of(num, d16),
        None => one_of(NumFormat::Float, d16),
    }
}

/// [`one`] of a decoded number format.
fn one_of(nfmt: NumFormat, d16: bool) -> u32 {
    match (nfmt.is_integer(), d16) {
        (true, _) => 1,
        (false, true) => 0x3c00,
        (false, false) => 1.0f32.to_bits(),
    }
}

/// Raw channel `c` (zero-extended) of an element stored little-endian in `bytes`.
fn raw_channel(fmt: DataFormat, bytes: &[u8; 16], c: usize) -> u32 {
    let width = fmt.widths[c] as u32;
    let v = u128::from_le_bytes(*bytes);
    let mask = if width == 32 { u32::MAX as u128 } else { (1u128 << width) - 1 };
    ((v >> fmt.shift(c)) & mask) as u32
}

/// The `width`-bit two's complement value `raw`, sign-extended.
fn sign_extend(raw: u32, width: u32) -> i32 {
    ((raw << (32 - width)) as i32) >> (32 - width)
}

/// An unsigned small float channel (`10_11_11` / `11_11_10`: 5 exponent bits, bias 15,
/// `man_bits` mantissa bits) re-encoded exactly as an f16 (`d16`) or an f32: the same
/// exponent bias as f16, so denormals, infinities and NaN payloads carry over bit for bit.
fn small_float_bits(raw: u32, man_bits: u32, d16: bool) -> u32 {
    let exp = (raw >> man_bits) & 0x1f;
    let man = raw & ((1 << man_bits) - 1);
    let half = (exp << 10) | (man << (10 - man_bits));
    if d16 {
        return half;
    }
    if exp == 31 {
        return 0x7f80_0000 | (man << (23 - man_bits));
    }
    f16_to_f32(half as u16).to_bits()
}

/// The exact value of a loaded normalized or scaled channel.
fn channel_value(width: u32, nfmt: NumFormat, raw: u32) -> f64 {
    let signed = || sign_extend(raw, width) as f64;
    match nfmt {
        NumFormat::Unorm => raw as f64 / ((1u64 << width) - 1) as f64,
        NumFormat::Snorm => (signed() / ((1u64 << (width - 1)) - 1) as f64).max(-1.0),
        NumFormat::Sscaled => signed(),
        _ => raw as f64,
    }
}

/// The raw `width`-bit channel a store writes for the register value `v` (16-bit when
/// `d16`), per the rules of the module docs.
fn store_channel(nfmt: NumFormat, width: u32, v: u32, d16: bool) -> u32 {
    let max_u = if width == 32 { u32::MAX as i64 } else { (1i64 << width) - 1 };
    let (min_s, max_s) = (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1);
    // The register's value as a float, for the float-like formats.
    let float = || if d16 { f16_to_f32(v as u16) } else { f32::from_bits(v) };
    let raw = match nfmt {
        NumFormat::Uint => {
            let x = if d16 { v & 0xffff } else { v };
            (x as i64).min(max_u) as u32
        }
        NumFormat::Sint => {
            let x = if d16 { v as u16 as i16 as i64 } else { v as i32 as i64 };
            x.clamp(min_s, max_s) as u32
        }
        NumFormat::Float if width == 32 => float().to_bits(),
        NumFormat::Float if width == 16 && d16 => v & 0xffff,
        NumFormat::Float if width == 16 => f32_to_f16(float(), RoundMode::NearestEven) as u32,
        NumFormat::Float => f32_to_small_float(float(), width - 5),
        NumFormat::Unorm => to_integer(float().clamp(0.0, 1.0) as f64 * max_u as f64, 0, max_u),
        NumFormat::Snorm => to_integer(float().clamp(-1.0, 1.0) as f64 * max_s as f64, min_s, max_s),
        NumFormat::Uscaled => to_integer(float() as f64, 0, max_u),
        NumFormat::Sscaled => to_integer(float() as f64, min_s, max_s),
    };
    if width == 32 {
        raw
    } else {
        raw & ((1 << width) - 1)
    }
}

/// `x` rounded to the nearest integer (ties to even) and saturated to `[lo, hi]`; NaN is
/// 0. Returned as the two's complement bits of the result.
fn to_integer(x: f64, lo: i64, hi: i64) -> u32 {
    if x.is_nan() {
        return 0;
    }
    x.round_ties_even().clamp(lo as f64, hi as f64) as i64 as u32
}

/// f32 to an unsigned small float (5 exponent bits, bias 15, `man_bits` mantissa bits):
/// nearest even, negatives (and -0, -Inf) to 0, NaN to a quiet NaN with the top payload
/// bits, +Inf to +Inf, finite overflow to the largest finite value.
fn f32_to_small_float(x: f32, man_bits: u32) -> u32 {
    let fmt = Format { exp_bits: 5, man_bits, bias: 15, specials: Specials::Ieee };
    let inf = fmt.inf_bits() as u32;
    let bits = x.to_bits();
    if x.is_nan() {
        let payload = (bits & 0x7f_ffff) >> (23 - man_bits);
        return inf | payload | 1 << (man_bits - 1);
    }
    if x.is_sign_negative() {
        return 0;
    }
    if x.is_infinite() {
        return inf;
    }
    let (_, sig, exp) = split_f32(x);
    match round_to_format(false, sig, exp, false, fmt, RoundMode::NearestEven) {
        Rounded::Finite(enc) => enc as u32,
        Rounded::Overflow => fmt.max_finite_bits() as u32,
    }
}
