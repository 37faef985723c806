//! Exact floating-point and integer semantics of the CDNA2/3/4 (gfx90a, gfx942, gfx950)
//! vector and scalar ALUs, as pure lane-level functions for the functional executor.
//!
//! Codemap:
//! - [`round`]: [`RoundMode`], the [`Format`] descriptions and the single correct-rounding
//!   core every narrowing conversion goes through.
//! - [`mode`]: the MODE register model ([`Mode`]) and denormal flushing helpers.
//! - [`convert`]: f64/f32/f16/bf16 conversions in all rounding modes.
//! - [`fp8`]: the FNUZ (gfx942) and OCP (gfx950) 8-bit formats, RNE/stochastic/scaled.
//! - [`mx`]: the gfx950 OCP MX sub-byte formats FP4 (E2M1) and FP6 (E2M3, E3M2).
//! - [`scaled`]: the gfx950 E8M0-scaled conversions (`v_cvt_scalef32_*`) per element and
//!   packed group, and the stochastic-rounding random sequence.
//! - [`valu`]: float op semantics: source/output modifiers, min/max rules, rounding-mode
//!   arithmetic, division helpers, frexp/ldexp/fract/rounding, float<->int conversions.
//! - [`transcendental`]: rcp/rsq/sqrt/exp/log/sin/cos with documented ULP bounds.
//! - [`int`]: integer helpers (24-bit multiplies, bit fields, permutes, SAD, carries, ...).
//! - [`packed`]: VOP3P selection (op_sel, op_sel_hi, neg_lo, neg_hi) and `v_pk_*` ops.
//! - [`dot`]: `v_dot*` instructions and the MFMA per-element multiply-accumulate kernels.
//! - [`matrix`]: MFMA element tables (fp8/bf8/fp6/bf6/fp4), E8M0 scales, block rounding.
//! - [`slices`]: wave-wide (`[f32; 64]`-style) loops over the hot scalar helpers.
//!
//! **Architecture Invariant:** everything here is a pure function of its arguments: no
//! wave state, no allocation, no panics on any bit pattern. 16-bit and 8-bit floats are
//! passed as raw register bits (`u16`, `u8`).
//!
//! ```
//! use amdgpu_isa::numeric::{valu, Fp8Format, Mode, RoundMode};
//!
//! // MODE as a kernel descriptor sets it: f32 denormals flushed, IEEE and DX10 clamp on.
//! let mode = Mode::decode(0x0000_03c0);
//! assert!(mode.ieee && mode.denorm_f32.flushes_input());
//!
//! // v_max_f32 in IEEE mode quiets and returns a signalling NaN; a quiet NaN is ignored.
//! let snan = f32::from_bits(0x7f80_0001);
//! assert_eq!(valu::max_f32(snan, 1.0, true).to_bits(), 0x7fc0_0001);
//! assert_eq!(valu::max_f32(f32::NAN, 1.0, true), 1.0);
//!
//! // The same byte is a different number on gfx942 (FNUZ) and gfx950 (OCP).
//! assert_eq!(Fp8Format::fp8(false).to_f32(0x7f), 240.0);
//! assert!(Fp8Format::fp8(true).to_f32(0x7f).is_nan());
//! // Overflow saturates only with MODE.FP16_OVFL.
//! assert_eq!(Fp8Format::E4M3Fn.from_f32(1000.0, true), 0x7e); // 448
//!
//! // Directed rounding is exact: 1 + 2^-30 rounds up only toward +inf.
//! let x = 1.0 + 2f32.powi(-23);
//! assert_eq!(valu::add_f32(1.0, 2f32.powi(-30), RoundMode::TowardPositive), x);
//! assert_eq!(valu::add_f32(1.0, 2f32.powi(-30), RoundMode::NearestEven), 1.0);
//! ```
//!
//! Known gaps (documented where they matter): the division helpers yield NaN instead of
//! Inf when the true quotient exceeds about 2^191 (f32) because the public pseudocode does
//! not say how the hardware catches that case; the hardware's own approximation error of
//! the transcendentals is not modelled (results here are more accurate, see
//! [`transcendental`]); f64 FMA and f64 division helpers round to nearest even only; the
//! MFMA adder-tree precision is modelled as one rounding per k-block; the VOP3 clamp bit of
//! the fp8 conversions and the NaN encoding produced from MX formats are this model's
//! choices; SDWA/DPP operand selection belongs to the executor.

pub mod convert;
pub mod dot;
pub mod fp8;
pub mod int;
pub mod mode;
pub mod matrix;
pub mod mx;
pub mod packed;
pub mod round;
pub mod scaled;
pub mod slices;
pub mod transcendental;
pub mod valu;

pub use fp8::Fp8Format;
pub use mx::MxFormat;
pub use mode::{DenormMode, Mode};
pub use round::{Format, RoundMode};
