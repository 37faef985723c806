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
//! Loads ("Read Data Format" in the ISA guide): normalized and scaled data return floats,
//! integer data returns integers of the storage signedness, 32-bit channels are not
//! converted. Conversions are exact or correctly rounded (round to nearest even): unorm is
//! `v / (2^n - 1)`, snorm `max(v / (2^(n-1) - 1), -1)`.
//!
//! Decisions the documents leave open (each refused with `None`, so the caller reports the
//! instruction as unsupported, rather than guessed):
//! - combinations the format table does not pair: float with 8-bit or 2-bit channels,
//!   normalized or scaled 32-bit channels, non-float `10_11_11`/`11_11_10`;
//! - `_d16` loads whose value is not exactly representable by the 16-bit result without a
//!   rule (32-bit integer channels, scaled channels wider than 11 bits);
//! - stores other than to 32-bit channels (uint, sint, float) and 16-bit float channels
//!   (f32 to f16, round to nearest even) and, from `_d16` data, 16-bit uint/sint/float
//!   channels: the ISA guides do not say how stores clamp or round into narrow integer or
//!   normalized channels;
//! - stores of fewer components than a packed (10/11-bit) format holds.
//!
//! A store of fewer components than a byte-aligned format holds writes only the bytes of
//! the components it has; a store of more components ignores the extra ones.

#![allow(clippy::needless_range_loop)] // channel loops index channel arrays in lockstep

use crate::numeric::convert::{f16_to_f32, f16_to_f64, f64_to_f16};
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
    /// The 4-bit DATA_FORMAT code; `None` for 0 (INVALID, an unbound resource: the caller
    /// handles it) and the reserved 15.
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

    /// Bit position of channel `c`.
    fn shift(self, c: usize) -> u32 {
        self.widths[..c].iter().map(|&w| w as u32).sum()
    }

    /// Whether the format table pairs this data format with `nfmt`.
    fn pairs_with(self, nfmt: NumFormat) -> bool {
        let small_float = matches!(self.code, 6 | 7);
        let widest = self.widths.iter().copied().max().unwrap_or(0);
        match nfmt {
            NumFormat::Float => small_float || matches!(widest, 16 | 32) && !self.packed(),
            NumFormat::Uint | NumFormat::Sint => !small_float,
            _ => !small_float && widest != 32,
        }
    }
}

/// Raw channel `c` (zero-extended) of an element stored little-endian in `bytes`.
fn raw_channel(fmt: DataFormat, bytes: &[u8; 16], c: usize) -> u32 {
    let width = fmt.widths[c] as u32;
    let shift = fmt.shift(c);
    let mut v = 0u128;
    for (i, b) in bytes.iter().enumerate() {
        v |= (*b as u128) << (8 * i);
    }
    let mask = if width == 32 { u32::MAX as u128 } else { (1u128 << width) - 1 };
    ((v >> shift) & mask) as u32
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
    (f16_to_f64(half as u16) as f32).to_bits()
}

/// The exact value of a loaded channel, for the float-returning number formats.
fn channel_value(fmt: DataFormat, nfmt: NumFormat, c: usize, raw: u32) -> f64 {
    let width = fmt.widths[c] as u32;
    let signed = || ((raw << (32 - width)) as i32 >> (32 - width)) as f64;
    match nfmt {
        NumFormat::Unorm => raw as f64 / ((1u64 << width) - 1) as f64,
        NumFormat::Snorm => (signed() / ((1u64 << (width - 1)) - 1) as f64).max(-1.0),
        NumFormat::Uscaled => raw as f64,
        NumFormat::Sscaled => signed(),
        NumFormat::Float => f32::from_bits(raw) as f64,
        NumFormat::Uint | NumFormat::Sint => raw as f64,
    }
}

/// Converts one loaded element into its four channel values (X, Y, Z, W; channels the
/// format lacks are 0) as 32-bit register values, or as 16-bit values when `d16`.
/// `None` when the pair has no defined conversion (see the module docs).
pub(crate) fn unpack(fmt: DataFormat, nfmt: NumFormat, bytes: &[u8; 16], d16: bool) -> Option<[u32; 4]> {
    if !fmt.pairs_with(nfmt) {
        return None;
    }
    let mut out = [0u32; 4];
    for c in 0..fmt.channels() {
        let raw = raw_channel(fmt, bytes, c);
        let width = fmt.widths[c] as u32;
        out[c] = match nfmt {
            NumFormat::Uint if !d16 || width <= 16 => raw & if d16 { 0xffff } else { u32::MAX },
            NumFormat::Sint if !d16 || width <= 16 => {
                let v = if width == 32 { raw } else { ((raw << (32 - width)) as i32 >> (32 - width)) as u32 };
                if d16 {
                    v & 0xffff
                } else {
                    v
                }
            }
            NumFormat::Uint | NumFormat::Sint => return None,
            NumFormat::Float if width == 32 && !d16 => raw,
            NumFormat::Float if width == 11 || width == 10 => small_float_bits(raw, width - 5, d16),
            NumFormat::Float if width == 16 && d16 => raw,
            NumFormat::Float if width == 16 => f16_to_f32(raw as u16).to_bits(),
            NumFormat::Uscaled | NumFormat::Sscaled if d16 && width > 11 => return None,
            _ => {
                let v = channel_value(fmt, nfmt, c, raw);
                if d16 {
                    f64_to_f16(v, RoundMode::NearestEven) as u32
                } else {
                    (v as f32).to_bits()
                }
            }
        };
    }
    Some(out)
}

/// The value of a "one" channel (`dst_sel` = SEL_1) in the register encoding `nfmt` loads
/// return: 1 for integers, 1.0 otherwise (f16 1.0 for `_d16`).
pub(crate) fn one(nfmt: NumFormat, d16: bool) -> u32 {
    match (nfmt.is_integer(), d16) {
        (true, _) => 1,
        (false, true) => 0x3c00,
        (false, false) => 1.0f32.to_bits(),
    }
}

/// Packs the first `count` register values of `comps` (32-bit, or 16-bit when `d16`) into
/// one element: its bytes and the mask of bytes to write. `None` when the conversion is not
/// defined (see the module docs).
pub(crate) fn pack(fmt: DataFormat, nfmt: NumFormat, comps: &[u32; 4], count: usize, d16: bool) -> Option<([u8; 16], u16)> {
    if !fmt.pairs_with(nfmt) {
        return None;
    }
    let written = count.min(fmt.channels());
    if written < fmt.channels() && fmt.packed() {
        return None;
    }
    let mut bytes = [0u8; 16];
    let mut mask = 0u16;
    for c in 0..written {
        let width = fmt.widths[c] as u32;
        let v = comps[c];
        let raw: u32 = match (nfmt, width, d16) {
            (NumFormat::Uint | NumFormat::Sint | NumFormat::Float, 32, false) => v,
            (NumFormat::Float, 16, false) => f64_to_f16(f32::from_bits(v) as f64, RoundMode::NearestEven) as u32,
            (NumFormat::Uint | NumFormat::Sint | NumFormat::Float, 16, true) => v & 0xffff,
            (NumFormat::Float, 32, true) => (f16_to_f64(v as u16) as f32).to_bits(),
            (NumFormat::Uint, 32, true) => v & 0xffff,
            (NumFormat::Sint, 32, true) => v as u16 as i16 as i32 as u32,
            _ => return None,
        };
        let first = (fmt.shift(c) / 8) as usize;
        let n = (width / 8) as usize;
        bytes[first..first + n].copy_from_slice(&raw.to_le_bytes()[..n]);
        mask |= (((1u32 << n) - 1) << first) as u16;
    }
    Some((bytes, mask))
}
