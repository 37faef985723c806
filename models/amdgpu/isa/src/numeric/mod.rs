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
//! - [`valu`]: float op semantics: source/output modifiers, min/max rules, rounding-mode
//!   arithmetic, division helpers, frexp/ldexp/fract/rounding, float<->int conversions.
//! - [`transcendental`]: rcp/rsq/sqrt/exp/log/sin/cos with documented ULP bounds.
//! - [`int`]: integer helpers (24-bit multiplies, bit fields, permutes, SAD, carries, ...).
//! - [`packed`]: VOP3P selection (op_sel, op_sel_hi, neg_lo, neg_hi) and `v_pk_*` ops.
//! - [`dot`]: `v_dot*` instructions and the MFMA per-element multiply-accumulate kernels.
//! - [`slices`]: wave-wide (`[f32; 64]`-style) loops over the hot scalar helpers.
//!
//! **Architecture Invariant:** everything here is a pure function of its arguments: no
//! wave state, no allocation, no panics on any bit pattern. 16-bit and 8-bit floats are
//! passed as raw register bits (`u16`, `u8`).

pub mod convert;
pub mod dot;
pub mod fp8;
pub mod int;
pub mod mode;
pub mod mx;
pub mod packed;
pub mod round;
pub mod slices;
pub mod transcendental;
pub mod valu;

pub use fp8::Fp8Format;
pub use mx::MxFormat;
pub use mode::{DenormMode, Mode};
pub use round::{Format, RoundMode};
