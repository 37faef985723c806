//! Matrix fused multiply-add (`v_mfma_*`) for the single-block shapes 16x16xK and 32x32xK.
//!
//! Lane layouts (one block, `M = N = 16 or 32`, `kpl = K * M / 64` elements per lane):
//! - A (`M x K`): lane `i + M * (k / kpl)`, element `k % kpl` of the lane's source registers.
//! - B (`K x N`): lane `j + N * (k / kpl)`, element `k % kpl`.
//! - C/D (`M x N`): with `G = 64 / N` lane groups, lane `j + N * g`, register `r` holds
//!   row `i = (r / 4) * 4 * G + 4 * g + r % 4` (f64: register pairs, `i = 4 * g + r`).
//!
//! Multi-block forms (`4x4`, `_2b`/`_4b`/`_16b`, and the gfx90a `16x16x1f32`-style
//! shapes), broadcast controls (CBSZ/ABID/BLGP != 0), xf32 and the gfx950 scaled f8f6f4
//! forms stop the wave with [`ExecFault::Unsupported`].

use crate::numeric::{dot, Fp8Format};
use crate::Target;

use super::interp::unsupported;
use super::program::CachedInst;
use super::valu::fetch;
use super::wave::Wave;
use super::ExecFault;

/// Element type of an MFMA input.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Elem {
    F32,
    F64,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
}

impl Elem {
    fn bits(self) -> u32 {
        match self {
            Elem::F64 => 64,
            Elem::F32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 | Elem::Fp8 | Elem::Bf8 => 8,
        }
    }
}

/// A single-block MFMA shape parsed from its mnemonic.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Shape {
    m: usize,
    k: usize,
    a: Elem,
    b: Elem,
    /// Output: 0 f32, 1 i32, 2 f64.
    out: u8,
}

const MULTI_BLOCK: [&str; 11] = [
    "16x16x1f32", "32x32x1f32", "16x16x4f16", "32x32x4f16", "16x16x2bf16", "32x32x2bf16", "16x16x4bf16_1k",
    "32x32x4bf16_1k", "16x16x4i8", "32x32x4i8", "x1_",
];

fn parse(mnemonic: &str) -> Option<Shape> {
    let rest = mnemonic.strip_prefix("v_mfma_")?;
    let (out, rest) = rest.split_at_checked(4)?;
    let out = match out {
        "f32_" => 0,
        "i32_" => 1,
        "f64_" => 2,
        _ => return None,
    };
    if rest.starts_with("4x4x") || rest.contains("b_") || MULTI_BLOCK.contains(&rest) || rest.contains("xf32") || rest.contains("f8f6f4") {
        return None;
    }
    let mut parts = rest.splitn(3, 'x');
    let m: usize = parts.next()?.parse().ok()?;
    let n: usize = parts.next()?.parse().ok()?;
    let tail = parts.next()?;
    let digits = tail.chars().take_while(|c| c.is_ascii_digit()).count();
    let k: usize = tail[..digits].parse().ok()?;
    let ty = tail[digits..].trim_start_matches('_').trim_end_matches("_1k");
    if m != n || !(m == 16 || m == 32) || !(k * m).is_multiple_of(64) {
        return None;
    }
    let (a, b) = match ty {
        "f32" => (Elem::F32, Elem::F32),
        "f64" => (Elem::F64, Elem::F64),
        "f16" => (Elem::F16, Elem::F16),
        "bf16" => (Elem::Bf16, Elem::Bf16),
        "i8" => (Elem::I8, Elem::I8),
        "fp8_fp8" => (Elem::Fp8, Elem::Fp8),
        "fp8_bf8" => (Elem::Fp8, Elem::Bf8),
        "bf8_fp8" => (Elem::Bf8, Elem::Fp8),
        "bf8_bf8" => (Elem::Bf8, Elem::Bf8),
        _ => return None,
    };
    let kpl = k * m / 64;
    if !matches!(kpl as u32 * a.bits(), 32 | 64 | 128) {
        return None;
    }
    Some(Shape { m, k, a, b, out })
}

/// Reads `regs` consecutive 32-bit registers per lane starting at source code `src`
/// (with `agpr` selecting the AccVGPR file for register sources).
fn gather(w: &Wave, src: u32, agpr: bool, regs: usize) -> Vec<[u32; 64]> {
    (0..regs)
        .map(|r| {
            if src >= 256 {
                let idx = ((src - 256) as usize + r) & 255;
                if agpr {
                    w.agpr[idx]
                } else {
                    w.vgpr[idx]
                }
            } else if r == 0 {
                fetch(w, src, 0, false)
            } else {
                [0; 64]
            }
        })
        .collect()
}

/// Element `e` (of `bits` bits) of a lane's packed registers.
fn element(regs: &[[u32; 64]], lane: usize, e: usize, bits: u32) -> u64 {
    let bit = e as u32 * bits;
    let word = (bit / 32) as usize;
    match bits {
        64 => regs[word][lane] as u64 | ((regs[word + 1][lane] as u64) << 32),
        32 => regs[word][lane] as u64,
        _ => ((regs[word][lane] >> (bit % 32)) & ((1u32 << bits) - 1)) as u64,
    }
}

pub(crate) fn execute(w: &mut Wave, c: &CachedInst, pc: u64, target: Target) -> Result<(), ExecFault> {
    let Some(shape) = parse(c.op.mnemonic()) else { return Err(unsupported(&c.inst, pc)) };
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let vdst = (w0 & 0xff) as usize;
    let cbsz = (w0 >> 8) & 7;
    let abid = (w0 >> 11) & 0xf;
    let acc_cd = (w0 >> 15) & 1 != 0;
    let (src0, src1, src2) = (w1 & 0x1ff, (w1 >> 9) & 0x1ff, (w1 >> 18) & 0x1ff);
    let acc_ab = (w1 >> 27) & 3;
    let blgp = w1 >> 29;
    if cbsz != 0 || abid != 0 || blgp != 0 {
        return Err(unsupported(&c.inst, pc));
    }
    let (m, k) = (shape.m, shape.k);
    let n = m;
    let kpl = k * m / 64;
    let in_regs = (kpl as u32 * shape.a.bits() / 32) as usize;
    let a_regs = gather(w, src0, acc_ab & 1 != 0, in_regs);
    let b_regs = gather(w, src1, acc_ab & 2 != 0, in_regs);
    let wide = shape.out == 2;
    let out_regs = m * n / 64 * if wide { 2 } else { 1 };
    let c_regs = gather(w, src2, acc_cd, out_regs);
    let groups = 64 / n;
    // D element (i, j) -> (lane, register index of its low dword).
    let place = |i: usize, j: usize| -> (usize, usize) {
        if wide {
            let g = i / 4;
            (j + n * g, 2 * (i % 4))
        } else {
            let r = (i % 4) + 4 * (i / (4 * groups));
            let g = (i / 4) % groups;
            (j + n * g, r)
        }
    };
    let a_at = |i: usize, kk: usize| element(&a_regs, i + m * (kk / kpl), kk % kpl, shape.a.bits());
    let b_at = |kk: usize, j: usize| element(&b_regs, j + n * (kk / kpl), kk % kpl, shape.b.bits());
    let ocp = target == Target::Gfx950;
    let fp8_fmt = |e: Elem| if e == Elem::Fp8 { Fp8Format::fp8(ocp) } else { Fp8Format::bf8(ocp) };
    let exec_all = true;
    let mut out = vec![[0u32; 64]; out_regs];
    for i in 0..m {
        for j in 0..n {
            let (lane, r) = place(i, j);
            let cval = if src2 >= 256 || c_regs.is_empty() {
                if wide {
                    c_regs[r][lane] as u64 | ((c_regs[r + 1][lane] as u64) << 32)
                } else {
                    c_regs[r][lane] as u64
                }
            } else if wide {
                super::interp::inline_f64(src2)
            } else {
                c_regs[0][0] as u64
            };
            match shape.out {
                2 => {
                    let mut acc = f64::from_bits(cval);
                    for kk in 0..k {
                        acc = dot::mfma_f64_step(acc, f64::from_bits(a_at(i, kk)), f64::from_bits(b_at(kk, j)));
                    }
                    out[r][lane] = acc.to_bits() as u32;
                    out[r + 1][lane] = (acc.to_bits() >> 32) as u32;
                }
                1 => {
                    let a: Vec<i8> = (0..k).map(|kk| a_at(i, kk) as u8 as i8).collect();
                    let b: Vec<i8> = (0..k).map(|kk| b_at(kk, j) as u8 as i8).collect();
                    out[r][lane] = dot::dot_i8_i32_slice(&a, &b, cval as u32 as i32) as u32;
                }
                _ => {
                    let acc = f32::from_bits(cval as u32);
                    let res = match shape.a {
                        Elem::F32 => {
                            let a: Vec<f32> = (0..k).map(|kk| f32::from_bits(a_at(i, kk) as u32)).collect();
                            let b: Vec<f32> = (0..k).map(|kk| f32::from_bits(b_at(kk, j) as u32)).collect();
                            dot::mfma_f32_dot(acc, &a, &b)
                        }
                        Elem::F16 | Elem::Bf16 => {
                            let a: Vec<u16> = (0..k).map(|kk| a_at(i, kk) as u16).collect();
                            let b: Vec<u16> = (0..k).map(|kk| b_at(kk, j) as u16).collect();
                            if shape.a == Elem::F16 {
                                dot::dot_f16_f32_slice(&a, &b, acc)
                            } else {
                                dot::dot_bf16_f32_slice(&a, &b, acc)
                            }
                        }
                        _ => {
                            let a: Vec<u8> = (0..k).map(|kk| a_at(i, kk) as u8).collect();
                            let b: Vec<u8> = (0..k).map(|kk| b_at(kk, j) as u8).collect();
                            dot::dot_fp8_f32_slice(fp8_fmt(shape.a), fp8_fmt(shape.b), &a, &b, acc)
                        }
                    };
                    out[r][lane] = res.to_bits();
                }
            }
        }
    }
    let _ = exec_all;
    // MFMA ignores EXEC: every lane of D is written.
    let file = if acc_cd { &mut w.agpr } else { &mut w.vgpr };
    for (r, vals) in out.iter().enumerate() {
        file[(vdst + r) & 255] = *vals;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_multi_block_forms_are_refused() {
        let s = parse("v_mfma_f32_16x16x4f32").expect("single block");
        assert_eq!((s.m, s.k, s.a, s.out), (16, 4, Elem::F32, 0));
        assert_eq!(parse("v_mfma_f32_16x16x4_f32"), Some(s));
        let h = parse("v_mfma_f32_32x32x8f16").expect("f16");
        assert_eq!((h.m, h.k, h.a), (32, 8, Elem::F16));
        assert_eq!(parse("v_mfma_f32_16x16x32_fp8_bf8").map(|s| (s.a, s.b)), Some((Elem::Fp8, Elem::Bf8)));
        assert_eq!(parse("v_mfma_f64_16x16x4f64").map(|s| s.out), Some(2));
        for multi in ["v_mfma_f32_16x16x1f32", "v_mfma_f32_32x32x4f16", "v_mfma_f32_4x4x1f32", "v_mfma_f32_16x16x4_4b_f16", "v_mfma_f32_32x32x4bf16_1k"] {
            assert_eq!(parse(multi), None, "{multi}");
        }
    }
}
