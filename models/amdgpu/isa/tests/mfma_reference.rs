//! Matrix instructions (MFMA, SMFMAC, the scaled f8f6f4 pair) against an independent CPU
//! reference, bit for bit.
//!
//! The reference is written from the ISA documents, not from the executor: a table of
//! every instruction's M, K, block count and types (AMD's Matrix Instruction Calculator
//! for CDNA2/CDNA3, the gfx950 additions from the CDNA4 instruction list), element
//! decoding from the format definitions (`half` for f16; fp8/bf8 FNUZ and OCP, fp6, fp4
//! and E8M0 decoded here from their bit layouts), the register layouts written as the
//! published per-shape tables (element to register and lane, bit by bit), the modifiers as
//! the ISA describes them, and the numeric model of `exec::mfma` (f32/f64: fused steps in k
//! order; the rest: exact products, f64 block sums in k order, one rounding into f32,
//! here done with exact integer arithmetic). Operands are random register contents with
//! NaN, infinities, denormals, extreme and small values mixed in.

mod common;

use amdgpu_isa::census::{forms, Category};
use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave};
use amdgpu_isa::Target;
use proptest::prelude::*;

const BASE: u64 = 0x10_0000;

/// Element types.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Ty {
    F32,
    Xf32,
    F64,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    /// gfx950 f8f6f4: format from CBSZ (A) / BLGP (B).
    F8f6f4,
}
use Ty::*;

/// Every matrix instruction: mnemonic, M (= N), K, blocks, A type, B type, sparse.
const SHAPES: &[(&str, usize, usize, usize, Ty, Ty, bool)] = &[
    // CDNA2 (gfx90a).
    ("v_mfma_f32_32x32x1f32", 32, 1, 2, F32, F32, false),
    ("v_mfma_f32_16x16x1f32", 16, 1, 4, F32, F32, false),
    ("v_mfma_f32_4x4x1f32", 4, 1, 16, F32, F32, false),
    ("v_mfma_f32_32x32x2f32", 32, 2, 1, F32, F32, false),
    ("v_mfma_f32_16x16x4f32", 16, 4, 1, F32, F32, false),
    ("v_mfma_f32_32x32x4f16", 32, 4, 2, F16, F16, false),
    ("v_mfma_f32_16x16x4f16", 16, 4, 4, F16, F16, false),
    ("v_mfma_f32_4x4x4f16", 4, 4, 16, F16, F16, false),
    ("v_mfma_f32_32x32x8f16", 32, 8, 1, F16, F16, false),
    ("v_mfma_f32_16x16x16f16", 16, 16, 1, F16, F16, false),
    ("v_mfma_i32_32x32x4i8", 32, 4, 2, I8, I8, false),
    ("v_mfma_i32_16x16x4i8", 16, 4, 4, I8, I8, false),
    ("v_mfma_i32_4x4x4i8", 4, 4, 16, I8, I8, false),
    ("v_mfma_i32_32x32x8i8", 32, 8, 1, I8, I8, false),
    ("v_mfma_i32_16x16x16i8", 16, 16, 1, I8, I8, false),
    ("v_mfma_f32_32x32x4bf16_1k", 32, 4, 2, Bf16, Bf16, false),
    ("v_mfma_f32_16x16x4bf16_1k", 16, 4, 4, Bf16, Bf16, false),
    ("v_mfma_f32_4x4x4bf16_1k", 4, 4, 16, Bf16, Bf16, false),
    ("v_mfma_f32_32x32x8bf16_1k", 32, 8, 1, Bf16, Bf16, false),
    ("v_mfma_f32_16x16x16bf16_1k", 16, 16, 1, Bf16, Bf16, false),
    ("v_mfma_f32_32x32x2bf16", 32, 2, 2, Bf16, Bf16, false),
    ("v_mfma_f32_16x16x2bf16", 16, 2, 4, Bf16, Bf16, false),
    ("v_mfma_f32_4x4x2bf16", 4, 2, 16, Bf16, Bf16, false),
    ("v_mfma_f32_32x32x4bf16", 32, 4, 1, Bf16, Bf16, false),
    ("v_mfma_f32_16x16x8bf16", 16, 8, 1, Bf16, Bf16, false),
    ("v_mfma_f64_16x16x4f64", 16, 4, 1, F64, F64, false),
    ("v_mfma_f64_4x4x4f64", 4, 4, 4, F64, F64, false),
    // CDNA3 (gfx942), most also gfx950.
    ("v_mfma_f32_16x16x8_xf32", 16, 8, 1, Xf32, Xf32, false),
    ("v_mfma_f32_32x32x4_xf32", 32, 4, 1, Xf32, Xf32, false),
    ("v_mfma_f32_32x32x1_2b_f32", 32, 1, 2, F32, F32, false),
    ("v_mfma_f32_16x16x1_4b_f32", 16, 1, 4, F32, F32, false),
    ("v_mfma_f32_4x4x1_16b_f32", 4, 1, 16, F32, F32, false),
    ("v_mfma_f32_32x32x2_f32", 32, 2, 1, F32, F32, false),
    ("v_mfma_f32_16x16x4_f32", 16, 4, 1, F32, F32, false),
    ("v_mfma_f32_32x32x4_2b_f16", 32, 4, 2, F16, F16, false),
    ("v_mfma_f32_16x16x4_4b_f16", 16, 4, 4, F16, F16, false),
    ("v_mfma_f32_4x4x4_16b_f16", 4, 4, 16, F16, F16, false),
    ("v_mfma_f32_32x32x8_f16", 32, 8, 1, F16, F16, false),
    ("v_mfma_f32_16x16x16_f16", 16, 16, 1, F16, F16, false),
    ("v_mfma_i32_32x32x4_2b_i8", 32, 4, 2, I8, I8, false),
    ("v_mfma_i32_16x16x4_4b_i8", 16, 4, 4, I8, I8, false),
    ("v_mfma_i32_4x4x4_16b_i8", 4, 4, 16, I8, I8, false),
    ("v_mfma_i32_32x32x16_i8", 32, 16, 1, I8, I8, false),
    ("v_mfma_i32_16x16x32_i8", 16, 32, 1, I8, I8, false),
    ("v_mfma_f32_32x32x4_2b_bf16", 32, 4, 2, Bf16, Bf16, false),
    ("v_mfma_f32_16x16x4_4b_bf16", 16, 4, 4, Bf16, Bf16, false),
    ("v_mfma_f32_4x4x4_16b_bf16", 4, 4, 16, Bf16, Bf16, false),
    ("v_mfma_f32_32x32x8_bf16", 32, 8, 1, Bf16, Bf16, false),
    ("v_mfma_f32_16x16x16_bf16", 16, 16, 1, Bf16, Bf16, false),
    ("v_smfmac_f32_16x16x32_f16", 16, 32, 1, F16, F16, true),
    ("v_smfmac_f32_32x32x16_f16", 32, 16, 1, F16, F16, true),
    ("v_smfmac_f32_16x16x32_bf16", 16, 32, 1, Bf16, Bf16, true),
    ("v_smfmac_f32_32x32x16_bf16", 32, 16, 1, Bf16, Bf16, true),
    ("v_smfmac_i32_16x16x64_i8", 16, 64, 1, I8, I8, true),
    ("v_smfmac_i32_32x32x32_i8", 32, 32, 1, I8, I8, true),
    ("v_mfma_f64_16x16x4_f64", 16, 4, 1, F64, F64, false),
    ("v_mfma_f64_4x4x4_4b_f64", 4, 4, 4, F64, F64, false),
    ("v_mfma_f32_16x16x32_bf8_bf8", 16, 32, 1, Bf8, Bf8, false),
    ("v_mfma_f32_16x16x32_bf8_fp8", 16, 32, 1, Bf8, Fp8, false),
    ("v_mfma_f32_16x16x32_fp8_bf8", 16, 32, 1, Fp8, Bf8, false),
    ("v_mfma_f32_16x16x32_fp8_fp8", 16, 32, 1, Fp8, Fp8, false),
    ("v_mfma_f32_32x32x16_bf8_bf8", 32, 16, 1, Bf8, Bf8, false),
    ("v_mfma_f32_32x32x16_bf8_fp8", 32, 16, 1, Bf8, Fp8, false),
    ("v_mfma_f32_32x32x16_fp8_bf8", 32, 16, 1, Fp8, Bf8, false),
    ("v_mfma_f32_32x32x16_fp8_fp8", 32, 16, 1, Fp8, Fp8, false),
    ("v_smfmac_f32_16x16x64_bf8_bf8", 16, 64, 1, Bf8, Bf8, true),
    ("v_smfmac_f32_16x16x64_bf8_fp8", 16, 64, 1, Bf8, Fp8, true),
    ("v_smfmac_f32_16x16x64_fp8_bf8", 16, 64, 1, Fp8, Bf8, true),
    ("v_smfmac_f32_16x16x64_fp8_fp8", 16, 64, 1, Fp8, Fp8, true),
    ("v_smfmac_f32_32x32x32_bf8_bf8", 32, 32, 1, Bf8, Bf8, true),
    ("v_smfmac_f32_32x32x32_bf8_fp8", 32, 32, 1, Bf8, Fp8, true),
    ("v_smfmac_f32_32x32x32_fp8_bf8", 32, 32, 1, Fp8, Bf8, true),
    ("v_smfmac_f32_32x32x32_fp8_fp8", 32, 32, 1, Fp8, Fp8, true),
    // CDNA4 (gfx950) additions.
    ("v_mfma_f32_16x16x32_f16", 16, 32, 1, F16, F16, false),
    ("v_mfma_f32_32x32x16_f16", 32, 16, 1, F16, F16, false),
    ("v_mfma_f32_16x16x32_bf16", 16, 32, 1, Bf16, Bf16, false),
    ("v_mfma_f32_32x32x16_bf16", 32, 16, 1, Bf16, Bf16, false),
    ("v_mfma_i32_16x16x64_i8", 16, 64, 1, I8, I8, false),
    ("v_mfma_i32_32x32x32_i8", 32, 32, 1, I8, I8, false),
    ("v_mfma_f32_16x16x128_f8f6f4", 16, 128, 1, F8f6f4, F8f6f4, false),
    ("v_mfma_f32_32x32x64_f8f6f4", 32, 64, 1, F8f6f4, F8f6f4, false),
    ("v_smfmac_f32_16x16x64_f16", 16, 64, 1, F16, F16, true),
    ("v_smfmac_f32_32x32x32_f16", 32, 32, 1, F16, F16, true),
    ("v_smfmac_f32_16x16x64_bf16", 16, 64, 1, Bf16, Bf16, true),
    ("v_smfmac_f32_32x32x32_bf16", 32, 32, 1, Bf16, Bf16, true),
    ("v_smfmac_i32_16x16x128_i8", 16, 128, 1, I8, I8, true),
    ("v_smfmac_i32_32x32x64_i8", 32, 64, 1, I8, I8, true),
    ("v_smfmac_f32_16x16x128_bf8_bf8", 16, 128, 1, Bf8, Bf8, true),
    ("v_smfmac_f32_16x16x128_bf8_fp8", 16, 128, 1, Bf8, Fp8, true),
    ("v_smfmac_f32_16x16x128_fp8_bf8", 16, 128, 1, Fp8, Bf8, true),
    ("v_smfmac_f32_16x16x128_fp8_fp8", 16, 128, 1, Fp8, Fp8, true),
    ("v_smfmac_f32_32x32x64_bf8_bf8", 32, 64, 1, Bf8, Bf8, true),
    ("v_smfmac_f32_32x32x64_bf8_fp8", 32, 64, 1, Bf8, Fp8, true),
    ("v_smfmac_f32_32x32x64_fp8_bf8", 32, 64, 1, Fp8, Bf8, true),
    ("v_smfmac_f32_32x32x64_fp8_fp8", 32, 64, 1, Fp8, Fp8, true),
];

/// One instruction form of a target.
#[derive(Copy, Clone, Debug)]
struct Shape {
    target: Target,
    name: &'static str,
    opcode: u32,
    m: usize,
    k: usize,
    blocks: usize,
    a: Ty,
    b: Ty,
    sparse: bool,
}

/// Every matrix form of every target, with its opcode from the decoder's tables (the only
/// thing taken from the crate), matched against [`SHAPES`].
fn all_shapes() -> Vec<Shape> {
    let mut out = Vec::new();
    for target in Target::ALL {
        for form in forms(target) {
            let name = form.opcode.mnemonic();
            if form.category != Category::Matrix || !(name.starts_with("v_mfma_") || name.starts_with("v_smfmac_")) || name == "v_mfma_ld_scale_b32" {
                continue;
            }
            let &(_, m, k, blocks, a, b, sparse) = SHAPES.iter().find(|s| s.0 == name).unwrap_or_else(|| panic!("{name} missing from SHAPES"));
            out.push(Shape { target, name, opcode: form.opcode_field, m, k, blocks, a, b, sparse });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Element formats (decoded from their definitions)
// ---------------------------------------------------------------------------------------

/// A small float format: exponent bits, mantissa bits, bias, and how it spends its top
/// codes. `ieee`: all-ones exponent is Inf/NaN; `fnuz`: 0x80 is the only NaN, no -0 and no
/// Inf; otherwise (OCP E4M3) only S.1111.111 is NaN; MX fp6/fp4 have no special codes.
fn small_float(bits: u64, e_bits: u32, m_bits: u32, bias: i32, kind: &str) -> f64 {
    let width = 1 + e_bits + m_bits;
    let sign = (bits >> (width - 1)) & 1 == 1;
    let exp = ((bits >> m_bits) & ((1 << e_bits) - 1)) as i32;
    let man = bits & ((1 << m_bits) - 1);
    let all_ones = exp == (1 << e_bits) - 1;
    match kind {
        "fnuz" if bits == 1 << (width - 1) => return f64::NAN,
        "ieee" if all_ones && man == 0 => return if sign { f64::NEG_INFINITY } else { f64::INFINITY },
        "ieee" if all_ones => return f64::NAN,
        "ocp_e4m3" if all_ones && man == (1 << m_bits) - 1 => return f64::NAN,
        _ => {}
    }
    let magnitude = if exp == 0 {
        man as f64 * 2f64.powi(1 - bias - m_bits as i32)
    } else {
        (1.0 + man as f64 / (1u64 << m_bits) as f64) * 2f64.powi(exp - bias)
    };
    if sign {
        -magnitude
    } else {
        magnitude
    }
}

/// Decodes a raw element of type `ty` (`fmt`: the f8f6f4 format code) on `target`.
fn value(ty: Ty, fmt: u32, target: Target, raw: u64) -> f64 {
    let ocp = target == Target::Gfx950;
    match (ty, fmt) {
        (F32, _) => f32::from_bits(raw as u32) as f64,
        (Xf32, _) => {
            // Round the f32 to 10 mantissa bits, nearest even (Inf/NaN pass).
            let x = f32::from_bits(raw as u32);
            if !x.is_finite() {
                return x as f64;
            }
            let ulp = (raw as u32) & 0x7f80_0000;
            let unit = if ulp == 0 { 2f64.powi(-136) } else { f32::from_bits(ulp) as f64 * 2f64.powi(-10) };
            let q = x as f64 / unit;
            let r = q.round();
            let r = if (q - q.trunc()).abs() == 0.5 && r % 2.0 != 0.0 { r - q.signum() } else { r };
            r * unit
        }
        (F64, _) => f64::from_bits(raw),
        (F16, _) => half::f16::from_bits(raw as u16).to_f64(),
        (Bf16, _) => f32::from_bits((raw as u32) << 16) as f64,
        (I8, _) => raw as u8 as i8 as f64,
        (Fp8, _) | (F8f6f4, 0) if ocp => small_float(raw & 0xff, 4, 3, 7, "ocp_e4m3"),
        (Fp8, _) => small_float(raw & 0xff, 4, 3, 8, "fnuz"),
        (Bf8, _) | (F8f6f4, 1) if ocp => small_float(raw & 0xff, 5, 2, 15, "ieee"),
        (Bf8, _) => small_float(raw & 0xff, 5, 2, 16, "fnuz"),
        (F8f6f4, 2) => small_float(raw & 0x3f, 2, 3, 1, "mx"),
        (F8f6f4, 3) => small_float(raw & 0x3f, 3, 2, 3, "mx"),
        (F8f6f4, _) => small_float(raw & 0xf, 2, 1, 1, "mx"),
    }
}

/// Element width in bits.
fn width(ty: Ty, fmt: u32) -> usize {
    match (ty, fmt) {
        (F64, _) => 64,
        (F32 | Xf32, _) => 32,
        (F16 | Bf16, _) => 16,
        (F8f6f4, 2 | 3) => 6,
        (F8f6f4, 4) => 4,
        _ => 8,
    }
}

/// OCP MX E8M0: 2^(e-127), 0xff NaN.
fn e8m0(e: u8) -> f64 {
    if e == 0xff {
        f64::NAN
    } else {
        2f64.powi(e as i32 - 127)
    }
}

// ---------------------------------------------------------------------------------------
// Register layouts (the ISA's tables)
// ---------------------------------------------------------------------------------------

/// Bits `[pos, pos + n)` of a lane's registers `regs` (concatenated little-endian).
fn bits_at(regs: &[[u32; 64]], lane: usize, pos: usize, n: usize) -> u64 {
    (0..n).fold(0u64, |acc, b| acc | ((((regs[(pos + b) / 32][lane] >> ((pos + b) % 32)) & 1) as u64) << b))
}

/// Element `(block, row, k)` of an input (A rows or B columns) with `per_lane` elements per
/// lane: lane `row + M*block + M*blocks*(k / per_lane)`, element `k % per_lane`.
fn input(regs: &[[u32; 64]], s: &Shape, (per_lane, w): (usize, usize), (block, row, k): (usize, usize, usize), lane_map: impl Fn(usize) -> usize) -> u64 {
    let lane = row + s.m * block + s.m * s.blocks * (k / per_lane);
    bits_at(regs, lane_map(lane), (k % per_lane) * w, w)
}

/// Register (pair index for f64) and lane of output `(block, i, j)`, per shape family.
fn output_at(s: &Shape, block: usize, i: usize, j: usize) -> (usize, usize) {
    match (s.a == F64, s.m) {
        (false, 32) => (16 * block + 4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j),
        (false, 16) => (4 * block + i % 4, 16 * (i / 4) + j),
        (false, _) => (i, 4 * block + j),
        (true, 16) => (i / 4, 16 * (i % 4) + j),
        (true, _) => (0, 16 * i + 4 * block + j),
    }
}

/// The lane B is read from under BLGP (the ISA's table of patterns).
fn blgp_source(lane: usize, blgp: u32) -> usize {
    match blgp {
        0 => lane,
        1 => lane % 32,                           // lanes 0-31 to both halves
        2 => lane % 32 + 32,                      // lanes 32-63 to both halves
        3 => (lane + 16) % 64,                    // rotate down by 16
        g => 16 * (g as usize - 4) + lane % 16,   // group g-4 of 16 lanes to all four
    }
}

// ---------------------------------------------------------------------------------------
// Exact rounding of f32 + f64 into f32
// ---------------------------------------------------------------------------------------

/// `(negative, mantissa in [2^52, 2^53), exponent)` of a finite nonzero f64.
fn parts(x: f64) -> (bool, i128, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let e = ((bits >> 52) & 0x7ff) as i32;
    let f = (bits & ((1 << 52) - 1)) as i128;
    let (mut m, mut e) = if e == 0 { (f, -1074) } else { (f | (1 << 52), e - 1075) };
    while m < (1 << 52) {
        m <<= 1;
        e -= 1;
    }
    (neg, m, e)
}

/// `a + b` computed exactly and rounded once to nearest even f32 (NaN canonical).
fn exact_sum_to_f32(a: f32, b: f64) -> u32 {
    let a = a as f64;
    if a.is_nan() || b.is_nan() || (a.is_infinite() && b.is_infinite() && a != b) {
        return 0x7fc0_0000;
    }
    if a.is_infinite() || b.is_infinite() {
        return (if a.is_infinite() { a } else { b } as f32).to_bits();
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() && b.is_sign_negative() { 0x8000_0000 } else { 0 };
    }
    if a == 0.0 || b == 0.0 {
        return ((a + b) as f32).to_bits(); // one operand exact zero: a single rounding
    }
    let (pa, pb) = (parts(a), parts(b));
    let (big, small) = if pa.2 >= pb.2 { (pa, pb) } else { (pb, pa) };
    let signed = |p: (bool, i128, i32), m: i128| if p.0 { -m } else { m };
    let (x, e) = if big.2 - small.2 > 70 {
        // The small term only decides ties: stand in half a unit below the big one's lsb.
        (signed(big, big.1 << 1) + signed(small, 1), big.2 - 1)
    } else {
        (signed(big, big.1 << (big.2 - small.2)) + signed(small, small.1), small.2)
    };
    if x == 0 {
        return 0;
    }
    let neg = x < 0;
    let mag = x.unsigned_abs();
    let top = 127 - mag.leading_zeros() as i32 + e; // exponent of the leading bit
    let ulp = (top - 23).max(-149);
    let shift = ulp - e;
    let q = if shift <= 0 {
        mag << (-shift)
    } else {
        let q = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    let v = (q as f64) * 2f64.powi(ulp);
    let r = if v >= 2f64.powi(128) { f32::INFINITY } else { v as f32 };
    (if neg { -r } else { r }).to_bits()
}

// ---------------------------------------------------------------------------------------
// The reference instruction
// ---------------------------------------------------------------------------------------

/// Modifier fields of one case.
#[derive(Copy, Clone, Debug)]
struct Mods {
    cbsz: u32,
    abid: u32,
    blgp: u32,
    acc_a: bool,
    acc_b: bool,
    acc_cd: bool,
    /// Scaled f8f6f4: the op_sel byte selects of scale A and B (`None`: unscaled).
    scale: Option<(u32, u32)>,
}

/// The ISA's legality rules for the modifier fields (see `exec::mfma`'s docs).
fn legal(s: &Shape, m: &Mods) -> bool {
    let gfx90a = s.target == Target::Gfx90a;
    if s.a == F8f6f4 {
        return m.cbsz <= 4 && m.blgp <= 4 && m.abid == 0;
    }
    if s.sparse {
        let stored = s.k / 2 * s.m / 64;
        return m.blgp == 0 && (m.cbsz != 0 || (m.abid as usize) < 32 / (2 * stored));
    }
    let cbsz_ok = if s.blocks > 1 && s.a != F64 { (1usize << m.cbsz) <= s.blocks && m.abid < (1 << m.cbsz) } else { m.cbsz == 0 && m.abid == 0 };
    let blgp_ok = m.blgp == 0 || if s.a == F64 { !gfx90a } else { gfx90a || s.blocks > 1 || s.a == F32 };
    cbsz_ok && blgp_ok
}

/// The registers a case starts with.
struct Regs {
    a: Vec<[u32; 64]>,
    b: Vec<[u32; 64]>,
    c: Vec<[u32; 64]>,
    index: [u32; 64],
    scale_a: [u32; 64],
    scale_b: [u32; 64],
}

/// Reference D registers of one legal case.
fn reference(s: &Shape, m: &Mods, r: &Regs) -> Vec<[u32; 64]> {
    let (fa, fb) = if s.a == F8f6f4 { (m.cbsz, m.blgp) } else { (0, 0) };
    let neg = if s.a == F64 && s.target != Target::Gfx90a { m.blgp } else { 0 };
    let blgp = if s.a == F64 || s.a == F8f6f4 { 0 } else { m.blgp };
    let ka = if s.sparse { s.k / 2 } else { s.k };
    let per_lane_a = ka * s.m * s.blocks / 64;
    let per_lane_b = s.k * s.m * s.blocks / 64;
    let (wa, wb) = (width(s.a, fa), width(s.b, fb));
    let sign = |x: f64, flip: bool| if flip { -x } else { x };
    let mut d = r.c.clone();
    for block in 0..s.blocks {
        let a_block = if s.sparse { block } else { (block >> m.cbsz << m.cbsz) + m.abid as usize };
        for i in 0..s.m {
            for j in 0..s.m {
                // The row of A as (B row k, value) pairs in k order, and its k-blocks.
                let mut terms = Vec::new();
                for kk in 0..ka {
                    let raw = input(&r.a, s, (per_lane_a, wa), (a_block, i, kk), |l| l);
                    let x = sign(value(s.a, fa, s.target, raw), neg & 1 != 0);
                    let k = if s.sparse {
                        let lane = i + s.m * (kk / per_lane_a);
                        let set = if m.cbsz == 0 { m.abid as usize } else { 0 };
                        let e = kk % per_lane_a + per_lane_a * set;
                        let pos = (r.index[lane] >> (2 * e)) & 3;
                        4 * (kk / 2) + pos as usize
                    } else {
                        kk
                    };
                    let yraw = input(&r.b, s, (per_lane_b, wb), (block, j, k), |l| blgp_source(l, blgp));
                    let y = sign(value(s.b, fb, s.target, yraw), neg & 2 != 0);
                    terms.push((x, y, kk / per_lane_a, k));
                }
                let (reg, lane) = output_at(s, block, i, j);
                match s.a {
                    F64 => {
                        let c = (d[2 * reg][lane] as u64) | (d[2 * reg + 1][lane] as u64) << 32;
                        let mut t = sign(f64::from_bits(c), neg & 4 != 0);
                        for &(x, y, ..) in &terms {
                            t = x.mul_add(y, t);
                        }
                        let bits = if t.is_nan() { 0x7ff8_0000_0000_0000 } else { t.to_bits() };
                        d[2 * reg][lane] = bits as u32;
                        d[2 * reg + 1][lane] = (bits >> 32) as u32;
                    }
                    F32 | Xf32 => {
                        let mut t = f32::from_bits(d[reg][lane]);
                        for &(x, y, ..) in &terms {
                            t = (x as f32).mul_add(y as f32, t);
                        }
                        d[reg][lane] = if t.is_nan() { 0x7fc0_0000 } else { t.to_bits() };
                    }
                    I8 => {
                        let sum: i64 = terms.iter().map(|&(x, y, ..)| x as i64 * y as i64).sum();
                        d[reg][lane] = (d[reg][lane] as i64).wrapping_add(sum) as u32;
                    }
                    _ => {
                        let mut acc = f32::from_bits(d[reg][lane]);
                        for g in 0..ka / per_lane_a {
                            let mut sum = -0.0f64;
                            for &(x, y, ..) in terms.iter().filter(|t| t.2 == g) {
                                sum += x * y;
                            }
                            if let Some((sel_a, sel_b)) = m.scale {
                                let ea = (r.scale_a[i + s.m * g] >> (8 * sel_a)) as u8;
                                let eb = (r.scale_b[j + s.m * g] >> (8 * sel_b)) as u8;
                                sum *= e8m0(ea) * e8m0(eb);
                            }
                            acc = f32::from_bits(exact_sum_to_f32(acc, sum));
                        }
                        d[reg][lane] = acc.to_bits();
                    }
                }
            }
        }
    }
    d
}

// ---------------------------------------------------------------------------------------
// Random operands and the executor run
// ---------------------------------------------------------------------------------------

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A raw element: mostly moderate values (so sums round in interesting ways), some fully
/// random bit patterns (NaN, Inf, denormals, extremes), some chosen specials.
fn element(rng: &mut Rng, ty: Ty) -> u64 {
    let pick = rng.next();
    let small = ((pick >> 8) % 2001) as f64 / 64.0 - 15.6;
    match (ty, pick % 8) {
        (F32 | Xf32, 0) => [0x7f80_0000, 0xff80_0000, 0x7fc0_0001, 0x0000_0001, 0x8000_0000, 0x7f7f_ffff, 0x0080_0000][(pick >> 3) as usize % 7],
        (F32 | Xf32, 1..=4) => (small as f32 * (1.0 + (pick >> 40) as f32 / 2f32.powi(24))).to_bits() as u64,
        (F64, 0) => [0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000, 0x7ff8_0000_0000_0001, 1, 0x8000_0000_0000_0000, 0x7fef_ffff_ffff_ffff][(pick >> 3) as usize % 6],
        (F64, 1..=4) => (small * (1.0 + (pick >> 20) as f64 / 2f64.powi(44))).to_bits(),
        (F16, 0) => [0x7c00, 0xfc00, 0x7e01, 0x0001, 0x8000, 0x7bff, 0x0400][(pick >> 3) as usize % 7],
        (F16, 1..=4) => half::f16::from_f64(small).to_bits() as u64,
        (Bf16, 0) => [0x7f80, 0xff80, 0x7fc1, 0x0001, 0x8000, 0x7f7f][(pick >> 3) as usize % 6],
        (Bf16, 1..=4) => ((small as f32).to_bits() >> 16) as u64,
        _ => rng.next(),
    }
}

/// Four E8M0 scale bytes: mostly near 2^0, sometimes NaN (0xff), 2^-127 or 2^127.
fn scale_word(rng: &mut Rng) -> u32 {
    (0..4).fold(0, |acc, byte| {
        let r = rng.next();
        let e = match r % 16 {
            0 => 0xff,
            1 => 0,
            2 => 254,
            _ => 120 + (r >> 8) % 15,
        };
        acc | (e as u32) << (8 * byte)
    })
}

/// Fills `regs` registers with `per_lane` random `ty` elements of width `w` per lane.
fn fill(rng: &mut Rng, ty: Ty, w: usize, per_lane: usize, regs: usize) -> Vec<[u32; 64]> {
    let mut out = vec![[0u32; 64]; regs];
    for lane in 0..64 {
        for e in 0..per_lane {
            let v = element(rng, ty);
            for b in 0..w {
                let pos = e * w + b;
                let reg = &mut out[pos / 32];
                reg[lane] |= (((v >> b) & 1) as u32) << (pos % 32);
            }
        }
    }
    out
}

/// Runs one case on the executor and on the reference and compares every D register.
fn check(s: &Shape, m: Mods, seed: u64, d_on_c: bool) {
    let mut rng = Rng(seed | 1);
    let (fa, fb) = if s.a == F8f6f4 { (m.cbsz.min(4), m.blgp.min(4)) } else { (0, 0) };
    let ka = if s.sparse { s.k / 2 } else { s.k };
    let (per_a, per_b) = (ka * s.m * s.blocks / 64, s.k * s.m * s.blocks / 64);
    let (wa, wb) = (width(s.a, fa), width(s.b, fb));
    let out_regs = s.m * s.m * s.blocks / 64 * if s.a == F64 { 2 } else { 1 };
    let out_ty = if s.a == F64 { F64 } else if s.a == I8 { I8 } else { F32 };
    let c_width = if out_ty == F64 { 64 } else { 32 };
    let regs = Regs {
        a: fill(&mut rng, s.a, wa, per_a, (per_a * wa).div_ceil(32)),
        b: fill(&mut rng, s.b, wb, per_b, (per_b * wb).div_ceil(32)),
        c: fill(&mut rng, if out_ty == I8 { F32 } else { out_ty }, c_width, out_regs * 32 / c_width, out_regs),
        index: std::array::from_fn(|_| rng.next() as u32),
        scale_a: std::array::from_fn(|_| scale_word(&mut rng)),
        scale_b: std::array::from_fn(|_| scale_word(&mut rng)),
    };
    // Register placement: A at 0, B at 8, C at 16 (D at 64, or on C), index 48, scales 49/50.
    let mut w = Wave::new(BASE, 0);
    let (c_at, d_at) = if s.sparse || d_on_c { (64, 64) } else { (16, 64) };
    for (n, reg) in regs.a.iter().enumerate() {
        if m.acc_a { w.agpr[n] = *reg } else { w.vgpr[n] = *reg }
    }
    for (n, reg) in regs.b.iter().enumerate() {
        if m.acc_b { w.agpr[8 + n] = *reg } else { w.vgpr[8 + n] = *reg }
    }
    for (n, reg) in regs.c.iter().enumerate() {
        if m.acc_cd { w.agpr[c_at + n] = *reg } else { w.vgpr[c_at + n] = *reg }
    }
    w.vgpr[48] = regs.index;
    w.vgpr[49] = regs.scale_a;
    w.vgpr[50] = regs.scale_b;
    let src2 = if s.sparse { 256 + 48 } else { 256 + c_at as u32 };
    let mut words = Vec::new();
    let mut w0 = 0xd380_0000 | s.opcode << 16 | (m.acc_cd as u32) << 15 | m.abid << 11 | m.cbsz << 8 | d_at as u32;
    if let Some((sa, sb)) = m.scale {
        words.push(0xd3ac_0000 | (sa & 1) << 11 | (sb & 1) << 12);
        words.push((sa >> 1) << 27 | (sb >> 1) << 28 | (256 + 50) << 9 | (256 + 49));
        w0 |= 1 << 11;
    }
    words.push(w0);
    words.push(m.blgp << 29 | (m.acc_b as u32) << 28 | (m.acc_a as u32) << 27 | src2 << 18 | (256 + 8) << 9 | 256);
    words.push(0xbf81_0000);
    let program = Program::from_words(s.target, BASE, &words);
    let mut mem = Memory::new();
    let result = run_single_wave(&program, &mut w, &mut mem, &mut [], 10);
    let ctx = format!("{} {} {m:?} seed {seed:#x} d_on_c {d_on_c}", s.target, s.name);
    if !legal(s, &m) {
        assert!(matches!(result, Err(ExecFault::Illegal { .. })), "{ctx}: illegal modifiers must fault, got {result:?}");
        return;
    }
    result.unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let want = reference(s, &m, &regs);
    for (n, expect) in want.iter().enumerate() {
        let got = if m.acc_cd { w.agpr[d_at + n] } else { w.vgpr[d_at + n] };
        for lane in 0..64 {
            assert_eq!(got[lane], expect[lane], "{ctx}: D register {n} lane {lane}: got {:#010x} want {:#010x}", got[lane], expect[lane]);
        }
    }
}

/// Modifiers for a case: half the time a legal CBSZ/ABID, the rest anything the fields hold.
fn mods_strategy() -> impl Strategy<Value = (u32, u32, u32, u8, bool, u8)> {
    (0u32..8, 0u32..16, 0u32..8, 0u8..8, any::<bool>(), 0u8..16)
}

fn make_mods(s: &Shape, (cbsz, abid, blgp, acc, legal_bias, sel): (u32, u32, u32, u8, bool, u8), scaled: bool) -> Mods {
    let (mut cbsz, mut abid, mut blgp, raw_abid) = (cbsz, abid, blgp, abid);
    if legal_bias {
        let max_log = if s.sparse { 1 } else { s.blocks.trailing_zeros() };
        cbsz %= max_log + 1;
        abid %= 1 << cbsz;
        if s.sparse {
            let stored = s.k / 2 * s.m / 64;
            abid = if cbsz == 0 { raw_abid % (32 / (2 * stored)) as u32 } else { raw_abid };
            blgp = 0;
        }
        if s.a == F8f6f4 {
            cbsz %= 5;
            blgp %= 5;
            abid = 0;
        }
    }
    if scaled {
        // ABID bit 0 is the scale flag of the scaled pair's MFMA word.
        abid &= !1;
    }
    Mods {
        cbsz,
        abid,
        blgp,
        acc_a: acc & 1 != 0,
        acc_b: acc & 2 != 0,
        acc_cd: acc & 4 != 0,
        scale: scaled.then_some(((sel & 3) as u32, (sel >> 2) as u32)),
    }
}

/// Runs `cases` random cases of the forms `filter` selects.
fn family(filter: impl Fn(&Shape) -> bool, cases: u32, scaled: bool) {
    let shapes: Vec<Shape> = all_shapes().into_iter().filter(|s| filter(s)).collect();
    assert!(!shapes.is_empty());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases, ..ProptestConfig::default() });
    runner
        .run(&(0..shapes.len(), mods_strategy(), any::<u64>(), any::<bool>()), |(n, mods, seed, d_on_c)| {
            let s = &shapes[n];
            check(s, make_mods(s, mods, scaled && s.a == F8f6f4), seed, d_on_c);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn f32_xf32_and_f64_forms_match_the_reference() {
    family(|s| matches!(s.a, F32 | Xf32 | F64), 160, false);
}

#[test]
fn f16_and_bf16_forms_match_the_reference() {
    family(|s| matches!(s.a, F16 | Bf16) && !s.sparse, 160, false);
}

#[test]
fn i8_forms_match_the_reference() {
    family(|s| s.a == I8 && !s.sparse, 96, false);
}

#[test]
fn fp8_and_bf8_forms_match_the_reference() {
    family(|s| matches!(s.a, Fp8 | Bf8) && !s.sparse, 96, false);
}

#[test]
fn f8f6f4_forms_match_the_reference_with_every_format() {
    family(|s| s.a == F8f6f4, 96, false);
}

#[test]
fn scaled_f8f6f4_forms_match_the_reference() {
    family(|s| s.a == F8f6f4, 96, true);
}

#[test]
fn smfmac_forms_match_the_reference() {
    family(|s| s.sparse, 160, false);
}

/// Every form, every target, legal default modifiers: at least one case each.
#[test]
fn every_form_runs_once() {
    for (n, s) in all_shapes().iter().enumerate() {
        let m = Mods { cbsz: 0, abid: 0, blgp: 0, acc_a: n % 2 == 0, acc_b: n % 3 == 0, acc_cd: n % 5 == 0, scale: None };
        check(s, m, 0x9e37_79b9_7f4a_7c15 ^ n as u64, n % 2 == 1);
    }
}

/// Runs assembled text on a wave and returns it.
fn run_text(target: Target, text: &str, mut w: Wave) -> Wave {
    let program = Program::from_words(target, BASE, &common::assemble(target, text));
    let mut mem = Memory::new();
    run_single_wave(&program, &mut w, &mut mem, &mut [], 100).unwrap_or_else(|e| panic!("{target}: {text}: {e}"));
    w
}

/// llvm-mc-22's encoding of the scaled f8f6f4 MFMA (the ld_scale + MFMA pair) runs with
/// the op_sel/op_sel_hi byte selects: A byte 1 (2^1), B byte 2 (2^-1), so each of the four
/// 32-element blocks of ones contributes 32.
#[test]
fn assembled_scaled_f8f6f4_applies_the_selected_scale_bytes() {
    let mut w = Wave::new(BASE, 0);
    for r in 4..20 {
        w.vgpr[r] = [0x3838_3838; 64]; // OCP E4M3 1.0 in every byte
    }
    for r in 20..24 {
        w.vgpr[r] = [1.0f32.to_bits(); 64];
    }
    w.vgpr[24] = [0x0000_8000 | 0x7f; 64]; // byte 1 = 128 (2.0)
    w.vgpr[25] = [0x007e_0000 | 0x7f; 64]; // byte 2 = 126 (0.5)
    let w = run_text(Target::Gfx950, "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 op_sel:[1,0,0] op_sel_hi:[0,1,0]", w);
    for r in 0..4 {
        assert_eq!(w.vgpr[r], [129.0f32.to_bits(); 64], "D register {r}");
    }
    // The same MFMA unscaled: unit scales.
    let mut w2 = Wave::new(BASE, 0);
    for r in 4..20 {
        w2.vgpr[r] = [0x3838_3838; 64];
    }
    let w2 = run_text(Target::Gfx950, "v_mfma_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[12:19], 0", w2);
    assert_eq!(w2.agpr[0], [128.0f32.to_bits(); 64]);
}

/// llvm-mc-19's SMFMAC with index set 2 (CBSZ 0, ABID 2) and an AccVGPR accumulator: every
/// stored pair picks k = 4g and 4g + 3 of B, whose rows hold k.
#[test]
fn assembled_smfmac_reads_the_abid_index_set() {
    let mut w = Wave::new(BASE, 0);
    w.vgpr[4] = [0x3c00_3c00; 64]; // A: four f16 ones per lane
    w.vgpr[5] = [0x3c00_3c00; 64];
    for lane in 0..64 {
        for e in 0..8 {
            let k = 8 * (lane / 16) + e;
            let h = half::f16::from_f64(k as f64).to_bits() as u32;
            w.vgpr[6 + e / 2][lane] |= h << (16 * (e % 2));
        }
    }
    w.vgpr[10] = [0b1100_1100 << 16; 64]; // set 2: positions 0 and 3 for both pairs
    let w = run_text(Target::Gfx942, "v_smfmac_f32_16x16x32_f16 a[0:3], v[4:5], v[6:9], v10 abid:2", w);
    let want: f32 = (0..8).map(|g| (8 * g + 3) as f32).sum();
    for r in 0..4 {
        assert_eq!(w.agpr[r], [want.to_bits(); 64], "D register {r}");
    }
}

/// `v_accvgpr_write_b32` / `v_accvgpr_read_b32` (VOP3P) move through the AccVGPRs under EXEC.
#[test]
fn assembled_accvgpr_moves() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0);
        w.vgpr[1] = std::array::from_fn(|l| l as u32 * 3);
        w.set_exec(0xffff_0000_ffff_ffff);
        let w = run_text(target, "v_accvgpr_write_b32 a7, v1\n v_accvgpr_read_b32 v2, a7\n v_accvgpr_write_b32 a8, -2", w);
        for lane in 0..64 {
            let on = (0xffff_0000_ffff_ffffu64 >> lane) & 1 == 1;
            assert_eq!(w.vgpr[2][lane], if on { lane as u32 * 3 } else { 0 }, "{target} lane {lane}");
            assert_eq!(w.agpr[8][lane], if on { (-2i32) as u32 } else { 0 }, "{target} lane {lane}");
        }
    }
}
