//! The wave's floating-point MODE register: rounding, denormal handling, DX10 clamp, IEEE
//! mode and FP16/FP8 overflow saturation, decoded from and encoded to the hardware bits.
//!
//! Layout of `hwreg(HW_REG_MODE)` on gfx90a/gfx942/gfx950 (the fields this module owns):
//!
//! | bits  | field          | meaning                                                    |
//! |-------|----------------|------------------------------------------------------------|
//! | 1:0   | FP_ROUND.f32   | round mode of f32 ops ([`RoundMode`] encoding)             |
//! | 3:2   | FP_ROUND.f16_64| round mode of f16 and f64 ops                              |
//! | 5:4   | FP_DENORM.f32  | f32 denormals ([`DenormMode`] encoding)                    |
//! | 7:6   | FP_DENORM.f16_64| f16 and f64 denormals                                     |
//! | 8     | DX10_CLAMP     | the clamp modifier turns NaN into 0                        |
//! | 9     | IEEE           | min/max quiet signalling NaNs (IEEE 754-2008 minNum)      |
//! | 23    | FP16_OVFL      | f16/fp8 results of finite inputs saturate instead of Inf/NaN|
//!
//! The other bits (LOD_CLAMPED, DEBUG, EXCP_EN, GPR_IDX_EN, VSKIP, CSP, ...) belong to
//! other parts of the wave state; [`Mode::encode_into`] keeps them unchanged.

use super::round::RoundMode;

/// How one precision class treats denormal (subnormal) values: the 2-bit FP_DENORM field.
///
/// Bit 0 set means input denormals are kept (not flushed); bit 1 set means output
/// denormals are kept. Flushing replaces a denormal with a zero of the same sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DenormMode {
    /// 0: flush both input and output denormals to zero.
    FlushInFlushOut = 0,
    /// 1: keep input denormals, flush output denormals.
    FlushOut = 1,
    /// 2: flush input denormals, keep output denormals.
    FlushIn = 2,
    /// 3: keep all denormals (IEEE gradual underflow).
    FlushNone = 3,
}

impl DenormMode {
    /// Decodes the 2-bit field (higher bits are ignored).
    #[inline]
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::FlushInFlushOut,
            1 => Self::FlushOut,
            2 => Self::FlushIn,
            _ => Self::FlushNone,
        }
    }

    /// The 2-bit hardware encoding.
    #[inline]
    pub const fn bits(self) -> u32 {
        self as u32
    }

    /// True when input denormals are replaced by signed zeros before the operation.
    #[inline]
    pub const fn flushes_input(self) -> bool {
        (self as u32) & 1 == 0
    }

    /// True when denormal results are replaced by signed zeros.
    #[inline]
    pub const fn flushes_output(self) -> bool {
        (self as u32) & 2 == 0
    }
}

/// The floating-point part of the MODE register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mode {
    /// Rounding of f32 results (FP_ROUND bits 1:0).
    pub round_f32: RoundMode,
    /// Rounding of f16 and f64 results (FP_ROUND bits 3:2).
    pub round_f16_f64: RoundMode,
    /// f32 denormal handling (FP_DENORM bits 5:4).
    pub denorm_f32: DenormMode,
    /// f16 and f64 denormal handling (FP_DENORM bits 7:6).
    pub denorm_f16_f64: DenormMode,
    /// DX10_CLAMP (bit 8): with the clamp modifier, NaN becomes +0 instead of passing through.
    pub dx10_clamp: bool,
    /// IEEE (bit 9): min/max quiet and return signalling NaN inputs.
    pub ieee: bool,
    /// FP16_OVFL (bit 23): f16 and fp8 conversions of finite inputs saturate to the largest
    /// finite value instead of producing Inf (or NaN in formats without Inf).
    pub fp16_ovfl: bool,
}

/// Bit position of DX10_CLAMP in the MODE register.
pub const MODE_DX10_CLAMP_BIT: u32 = 8;
/// Bit position of IEEE in the MODE register.
pub const MODE_IEEE_BIT: u32 = 9;
/// Bit position of FP16_OVFL in the MODE register.
pub const MODE_FP16_OVFL_BIT: u32 = 23;
/// Mask of every MODE bit this model owns.
pub const MODE_FP_MASK: u32 =
    0xff | (1 << MODE_DX10_CLAMP_BIT) | (1 << MODE_IEEE_BIT) | (1 << MODE_FP16_OVFL_BIT);

impl Default for Mode {
    /// All denormals kept, round to nearest even, DX10_CLAMP and IEEE on, no saturation:
    /// MODE = 0x3f0, what a HIP kernel compiled without denormal flushing starts with
    /// (FLOAT_DENORM_MODE_32 = FLOAT_DENORM_MODE_16_64 = 3). The executor should take the real
    /// initial value from the kernel descriptor with [`Mode::from_pgm_rsrc1`].
    fn default() -> Self {
        Self::IEEE_DENORMALS
    }
}

impl Mode {
    /// A fully IEEE mode: nearest even, all denormals kept, IEEE on, no saturation.
    pub const IEEE_DENORMALS: Mode = Mode {
        round_f32: RoundMode::NearestEven,
        round_f16_f64: RoundMode::NearestEven,
        denorm_f32: DenormMode::FlushNone,
        denorm_f16_f64: DenormMode::FlushNone,
        dx10_clamp: true,
        ieee: true,
        fp16_ovfl: false,
    };

    /// Decodes the floating-point fields of a MODE register value. Every bit pattern is valid.
    #[inline]
    pub const fn decode(bits: u32) -> Self {
        Self {
            round_f32: RoundMode::from_bits(bits),
            round_f16_f64: RoundMode::from_bits(bits >> 2),
            denorm_f32: DenormMode::from_bits(bits >> 4),
            denorm_f16_f64: DenormMode::from_bits(bits >> 6),
            dx10_clamp: (bits >> MODE_DX10_CLAMP_BIT) & 1 != 0,
            ieee: (bits >> MODE_IEEE_BIT) & 1 != 0,
            fp16_ovfl: (bits >> MODE_FP16_OVFL_BIT) & 1 != 0,
        }
    }

    /// The initial MODE of a wave from the kernel descriptor's COMPUTE_PGM_RSRC1 word:
    /// FLOAT_ROUND_MODE_32 [13:12], FLOAT_ROUND_MODE_16_64 [15:14], FLOAT_DENORM_MODE_32
    /// [17:16], FLOAT_DENORM_MODE_16_64 [19:18], ENABLE_DX10_CLAMP [21], ENABLE_IEEE_MODE
    /// [23], FP16_OVFL [26] (the gfx9 layout, shared by gfx90a, gfx942 and gfx950).
    #[inline]
    pub const fn from_pgm_rsrc1(rsrc1: u32) -> Self {
        Self {
            round_f32: RoundMode::from_bits(rsrc1 >> 12),
            round_f16_f64: RoundMode::from_bits(rsrc1 >> 14),
            denorm_f32: DenormMode::from_bits(rsrc1 >> 16),
            denorm_f16_f64: DenormMode::from_bits(rsrc1 >> 18),
            dx10_clamp: (rsrc1 >> 21) & 1 != 0,
            ieee: (rsrc1 >> 23) & 1 != 0,
            fp16_ovfl: (rsrc1 >> 26) & 1 != 0,
        }
    }

    /// Encodes the fields this model owns; all other bits are zero.
    #[inline]
    pub const fn encode(self) -> u32 {
        self.round_f32.bits()
            | (self.round_f16_f64.bits() << 2)
            | (self.denorm_f32.bits() << 4)
            | (self.denorm_f16_f64.bits() << 6)
            | ((self.dx10_clamp as u32) << MODE_DX10_CLAMP_BIT)
            | ((self.ieee as u32) << MODE_IEEE_BIT)
            | ((self.fp16_ovfl as u32) << MODE_FP16_OVFL_BIT)
    }

    /// Writes the fields this model owns into `register`, keeping every other bit.
    #[inline]
    pub const fn encode_into(self, register: u32) -> u32 {
        (register & !MODE_FP_MASK) | self.encode()
    }

    /// Flushes an f32 input denormal to a signed zero when FP_DENORM.f32 says so.
    #[inline]
    pub fn flush_in_f32(self, x: f32) -> f32 {
        flush_f32(x, self.denorm_f32.flushes_input())
    }

    /// Flushes an f32 denormal result to a signed zero when FP_DENORM.f32 says so.
    #[inline]
    pub fn flush_out_f32(self, x: f32) -> f32 {
        flush_f32(x, self.denorm_f32.flushes_output())
    }

    /// Flushes an f64 input denormal when FP_DENORM.f16_64 says so.
    #[inline]
    pub fn flush_in_f64(self, x: f64) -> f64 {
        flush_f64(x, self.denorm_f16_f64.flushes_input())
    }

    /// Flushes an f64 denormal result when FP_DENORM.f16_64 says so.
    #[inline]
    pub fn flush_out_f64(self, x: f64) -> f64 {
        flush_f64(x, self.denorm_f16_f64.flushes_output())
    }

    /// Flushes an f16 input denormal (raw bits) when FP_DENORM.f16_64 says so.
    #[inline]
    pub fn flush_in_f16(self, h: u16) -> u16 {
        flush_f16_bits(h, self.denorm_f16_f64.flushes_input())
    }

    /// Flushes an f16 denormal result (raw bits) when FP_DENORM.f16_64 says so.
    #[inline]
    pub fn flush_out_f16(self, h: u16) -> u16 {
        flush_f16_bits(h, self.denorm_f16_f64.flushes_output())
    }
}

/// Replaces an f32 denormal by a zero of the same sign when `flush` is set (branch-free).
#[inline]
pub fn flush_f32(x: f32, flush: bool) -> f32 {
    let bits = x.to_bits();
    let is_denorm = (bits & 0x7f80_0000) == 0;
    let keep_mask = if flush && is_denorm { 0x8000_0000 } else { u32::MAX };
    f32::from_bits(bits & keep_mask)
}

/// Replaces an f64 denormal by a zero of the same sign when `flush` is set.
#[inline]
pub fn flush_f64(x: f64, flush: bool) -> f64 {
    let bits = x.to_bits();
    let is_denorm = (bits & 0x7ff0_0000_0000_0000) == 0;
    let keep_mask = if flush && is_denorm { 1u64 << 63 } else { u64::MAX };
    f64::from_bits(bits & keep_mask)
}

/// Replaces an f16 denormal (raw bits) by a zero of the same sign when `flush` is set.
#[inline]
pub fn flush_f16_bits(h: u16, flush: bool) -> u16 {
    let is_denorm = (h & 0x7c00) == 0;
    let keep_mask = if flush && is_denorm { 0x8000 } else { u16::MAX };
    h & keep_mask
}

/// Replaces a bf16 denormal (raw bits) by a zero of the same sign when `flush` is set.
#[inline]
pub fn flush_bf16_bits(h: u16, flush: bool) -> u16 {
    let is_denorm = (h & 0x7f80) == 0;
    let keep_mask = if flush && is_denorm { 0x8000 } else { u16::MAX };
    h & keep_mask
}
