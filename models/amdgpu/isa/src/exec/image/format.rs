//! Image texel formats: the T# DATA_FORMAT (6 bits) / NUM_FORMAT (4 bits) pairs and
//! their conversions between memory and register values.
//!
//! The image data formats 1..=14 and number formats 0..=7 have the buffer formats' codes
//! and conversions (`buffer_format`, whose rules and decisions apply unchanged: the fill
//! rule, unpaired formats behaving as unbound, d16 and store conversions). Images add:
//! - the packed 16-bit formats `5_6_5` (16), `1_5_5_5` (17), `5_5_5_1` (18) and `4_4_4_4`
//!   (19), UNORM only (channels named most-significant first, X at the least-significant
//!   bits, as the buffer formats);
//! - NUM_FORMAT SRGB (9) with `8_8_8_8`: X, Y, Z are sRGB-encoded unorm, W is linear
//!   unorm. Loads decode with the sRGB transfer function (`c <= 0.04045 ? c / 12.92 :
//!   ((c + 0.055) / 1.055)^2.4`, computed in f64, rounded once to f32); stores encode
//!   with its inverse (`l <= 0.0031308 ? 12.92 l : 1.055 l^(1/2.4) - 0.055`) before the
//!   unorm store rule.
//!
//! Every other pair (block-compressed, depth-stencil, the 24-bit and shared-exponent
//! formats, the reserved codes) is not modelled and behaves as an unbound resource, as
//! unpaired buffer formats do.

use super::super::buffer_format::{one, BufferFormat};

/// NUM_FORMAT SRGB.
const NUM_SRGB: u32 = 9;
/// NUM_FORMAT UNORM.
const NUM_UNORM: u32 = 0;
/// DATA_FORMAT `8_8_8_8`.
const FMT_8_8_8_8: u32 = 10;

/// A texel format the model converts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct TexelFormat {
    kind: Kind,
    num: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// A format shared with the buffer formats.
    Buffer(BufferFormat),
    /// A packed 16-bit unorm format: channel widths X first.
    Packed16([u8; 4]),
    /// `8_8_8_8` SRGB: the unorm format plus the transfer function.
    Srgb(BufferFormat),
}

impl TexelFormat {
    /// The format of a DATA_FORMAT / NUM_FORMAT pair; `None` for the pairs that are not
    /// modelled (an unbound resource).
    pub(crate) fn new(data: u32, num: u32) -> Option<TexelFormat> {
        let kind = match (data, num) {
            (FMT_8_8_8_8, NUM_SRGB) => Kind::Srgb(BufferFormat::new(FMT_8_8_8_8, NUM_UNORM)?),
            (16, NUM_UNORM) => Kind::Packed16([5, 6, 5, 0]),
            (17, NUM_UNORM) => Kind::Packed16([5, 5, 5, 1]),
            (18, NUM_UNORM) => Kind::Packed16([1, 5, 5, 5]),
            (19, NUM_UNORM) => Kind::Packed16([4, 4, 4, 4]),
            (1..=14, 0..=7) => Kind::Buffer(BufferFormat::new(data, num)?),
            _ => return None,
        };
        Some(TexelFormat { kind, num })
    }

    /// Bytes per texel.
    pub(crate) fn bytes(self) -> u32 {
        match self.kind {
            Kind::Buffer(f) | Kind::Srgb(f) => f.bytes() as u32,
            Kind::Packed16(_) => 2,
        }
    }

    /// True for the integer number formats (UINT, SINT): loads return integers and the
    /// sampler does not filter them.
    pub(crate) fn is_integer(self) -> bool {
        match self.kind {
            Kind::Buffer(f) => f.is_integer(),
            _ => false,
        }
    }

    /// True for NUM_FORMAT SINT.
    pub(crate) fn is_signed_integer(self) -> bool {
        self.is_integer() && self.num == 5
    }

    /// The "one" a SEL_1 channel and the W fill read, in this format's register encoding.
    pub(crate) fn one(self, d16: bool) -> u32 {
        one(self.num, d16)
    }

    /// Converts one texel (little-endian `bytes`) to its four channel register values
    /// (32-bit, or 16-bit when `d16`), with the fill rule for channels it lacks.
    pub(crate) fn unpack(self, bytes: &[u8; 16], d16: bool) -> [u32; 4] {
        match self.kind {
            Kind::Buffer(f) => f.unpack(bytes, d16),
            Kind::Packed16(widths) => {
                let raw = packed16_channels(bytes, widths, false);
                let mut out = [0, 0, 0, self.one(d16)];
                for (c, &w) in widths.iter().enumerate().filter(|(_, &w)| w != 0) {
                    out[c] = float_register(raw[c] as f64 / ((1u32 << w) - 1) as f64, d16);
                }
                out
            }
            Kind::Srgb(f) => {
                let mut out = f.unpack(bytes, false);
                for c in &mut out[..3] {
                    *c = (srgb_to_linear(f32::from_bits(*c) as f64) as f32).to_bits();
                }
                if d16 {
                    out = out.map(|c| float_register(f32::from_bits(c) as f64, true));
                }
                out
            }
        }
    }

    /// The stored channel bits, zero- or sign-extended, without conversion (the `_pck`
    /// loads); channels the format lacks read 0.
    pub(crate) fn raw_channels(self, bytes: &[u8; 16], signed: bool) -> [u32; 4] {
        match self.kind {
            Kind::Buffer(f) | Kind::Srgb(f) => f.raw_channels(bytes, signed),
            Kind::Packed16(widths) => packed16_channels(bytes, widths, signed),
        }
    }

    /// Packs the four channel register values (32-bit, or 16-bit when `d16`) into one
    /// texel: its bytes and the mask of bytes to write.
    pub(crate) fn pack(self, comps: &[u32; 4], d16: bool) -> ([u8; 16], u16) {
        match self.kind {
            Kind::Buffer(f) => f.pack(comps, 4, d16),
            Kind::Packed16(widths) => {
                let mut v = 0u32;
                let mut shift = 0;
                for (c, &w) in widths.iter().enumerate() {
                    if w == 0 {
                        continue;
                    }
                    let value = register_float(comps[c], d16);
                    let scale = ((1u32 << w) - 1) as f64;
                    let q = if value.is_nan() { 0.0 } else { (value.clamp(0.0, 1.0) * scale).round_ties_even() };
                    v |= (q as u32) << shift;
                    shift += w as u32;
                }
                let mut bytes = [0u8; 16];
                bytes[..2].copy_from_slice(&(v as u16).to_le_bytes());
                (bytes, 0b11)
            }
            Kind::Srgb(f) => {
                let mut linear = [0u32; 4];
                for c in 0..4 {
                    let value = register_float(comps[c], d16);
                    let encoded = if c < 3 { linear_to_srgb(value) } else { value };
                    linear[c] = (encoded as f32).to_bits();
                }
                f.pack(&linear, 4, false)
            }
        }
    }
}

/// The channels of a packed 16-bit texel (channel widths X first, X at the low bits),
/// zero-extended or, when `signed`, sign-extended; absent channels read 0.
fn packed16_channels(bytes: &[u8; 16], widths: [u8; 4], signed: bool) -> [u32; 4] {
    let v = u16::from_le_bytes([bytes[0], bytes[1]]) as u32;
    let mut out = [0u32; 4];
    let mut shift = 0;
    for (c, &w) in widths.iter().enumerate().filter(|(_, &w)| w != 0) {
        let w = w as u32;
        let raw = (v >> shift) & ((1 << w) - 1);
        shift += w;
        out[c] = if signed { (((raw << (32 - w)) as i32) >> (32 - w)) as u32 } else { raw };
    }
    out
}

/// A float value as a register: f32 bits, or f16 bits (nearest even) when `d16`.
fn float_register(v: f64, d16: bool) -> u32 {
    if d16 {
        crate::numeric::convert::f64_to_f16(v, crate::numeric::RoundMode::NearestEven) as u32
    } else {
        (v as f32).to_bits()
    }
}

/// A register read as a float: f32 bits, or f16 bits when `d16`.
fn register_float(r: u32, d16: bool) -> f64 {
    if d16 {
        crate::numeric::convert::f16_to_f64(r as u16)
    } else {
        f32::from_bits(r) as f64
    }
}

/// The sRGB decode of an encoded value in [0, 1].
pub(crate) fn srgb_to_linear(c: f64) -> f64 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// The sRGB encode of a linear value (NaN stays NaN for the unorm rule to zero).
fn linear_to_srgb(l: f64) -> f64 {
    if l.is_nan() {
        l
    } else if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    }
}
