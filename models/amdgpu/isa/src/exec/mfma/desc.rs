//! What a matrix instruction is, decoded once per program slot from its mnemonic and
//! packed into the slot's 16-bit `aux` word, so executing it parses nothing.

/// Element type of an A/B operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Elem {
    F32,
    Xf32,
    F64,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    /// gfx950 `*_f8f6f4`: the format comes from CBSZ (A) and BLGP (B).
    F8f6f4,
}

impl Elem {
    const ALL: [Elem; 9] = [Elem::F32, Elem::Xf32, Elem::F64, Elem::F16, Elem::Bf16, Elem::I8, Elem::Fp8, Elem::Bf8, Elem::F8f6f4];

    /// Bits per element (f8f6f4: the widest format, 8).
    pub(crate) const fn bits(self) -> u32 {
        match self {
            Elem::F64 => 64,
            Elem::F32 | Elem::Xf32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 | Elem::Fp8 | Elem::Bf8 | Elem::F8f6f4 => 8,
        }
    }
}

/// What a slot's `aux` word says about a matrix-family instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum MatrixOp {
    /// Not a matrix instruction.
    None,
    /// `v_accvgpr_read_b32` (VOP3P).
    AccRead,
    /// `v_accvgpr_write_b32` (VOP3P).
    AccWrite,
    /// `v_mfma_ld_scale_b32` (gfx950).
    LdScale,
    /// An MFMA or SMFMAC.
    Mfma(Desc),
}

/// The shape and types of an MFMA/SMFMAC.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Desc {
    /// Rows of A and D per block (4, 16 or 32); N equals M for every instruction.
    pub(crate) m: usize,
    /// Blocks (1, 2, 4 or 16).
    pub(crate) blocks: usize,
    /// Reduction length K (of the dense product; SMFMAC A holds K/2 values per row).
    pub(crate) k: usize,
    /// A's element type.
    pub(crate) a: Elem,
    /// B's element type (differs from A only in the fp8/bf8 mixes).
    pub(crate) b: Elem,
    /// SMFMAC: A is 2:4 structured-sparse, src2 holds the index data.
    pub(crate) sparse: bool,
    /// gfx950 scaled f8f6f4 form (the MFMA word of `v_mfma_scale_*`, bit 11 set).
    pub(crate) scaled: bool,
}

impl Desc {
    /// A and B elements each lane holds (of the stored, i.e. compressed, A for SMFMAC).
    pub(crate) const fn a_per_lane(&self) -> usize {
        let dense = self.k * self.m * self.blocks / 64;
        if self.sparse {
            dense / 2
        } else {
            dense
        }
    }

    /// B elements each lane holds (the dense K per lane group).
    pub(crate) const fn b_per_lane(&self) -> usize {
        self.k * self.m * self.blocks / 64
    }

    /// Output registers (f64 outputs take two per value).
    #[cfg(test)]
    pub(crate) const fn out_regs(&self) -> usize {
        let values = self.m * self.m * self.blocks / 64;
        if matches!(self.a, Elem::F64) {
            2 * values
        } else {
            values
        }
    }

    /// Source registers of A (`bits` per element; f8f6f4 narrow formats pass fewer).
    pub(crate) const fn regs(per_lane: usize, bits: u32) -> usize {
        (per_lane * bits as usize).div_ceil(32)
    }
}

const TAG_ACC_READ: u16 = 1;
const TAG_ACC_WRITE: u16 = 2;
const TAG_LD_SCALE: u16 = 3;
/// Aux bit of the scaled f8f6f4 MFMA word (set by the program loader, see [`super::scaled_slot`]).
pub(crate) const AUX_SCALED: u16 = 1 << 13;

/// Packs an op into an aux word: bits 3:0 the tag (0 none, 1..=3 the special ops, 4 + A's
/// type for MFMA), 5:4 M (4/16/32), 7:6 blocks (1/2/4/16), 10:8 log2 K, 11 B differs
/// from A (the other 8-bit float), 12 sparse, 13 scaled.
pub(crate) fn pack(op: MatrixOp) -> u16 {
    match op {
        MatrixOp::None => 0,
        MatrixOp::AccRead => TAG_ACC_READ,
        MatrixOp::AccWrite => TAG_ACC_WRITE,
        MatrixOp::LdScale => TAG_LD_SCALE,
        MatrixOp::Mfma(d) => {
            let ty = Elem::ALL.iter().position(|&e| e == d.a).unwrap_or(0) as u16;
            let m = match d.m {
                4 => 0,
                16 => 1,
                _ => 2,
            };
            let blocks = match d.blocks {
                1 => 0,
                2 => 1,
                4 => 2,
                _ => 3,
            };
            let logk = d.k.trailing_zeros() as u16;
            (4 + ty) | m << 4 | blocks << 6 | logk << 8 | ((d.a != d.b) as u16) << 11 | (d.sparse as u16) << 12 | if d.scaled { AUX_SCALED } else { 0 }
        }
    }
}

/// Unpacks an aux word written by [`pack`].
#[inline]
pub(crate) fn unpack(aux: u16) -> MatrixOp {
    match aux & 0xf {
        0 => MatrixOp::None,
        TAG_ACC_READ => MatrixOp::AccRead,
        TAG_ACC_WRITE => MatrixOp::AccWrite,
        TAG_LD_SCALE => MatrixOp::LdScale,
        tag => {
            let a = Elem::ALL[((tag - 4) as usize).min(Elem::ALL.len() - 1)];
            let b = if aux & (1 << 11) != 0 {
                match a {
                    Elem::Fp8 => Elem::Bf8,
                    _ => Elem::Fp8,
                }
            } else {
                a
            };
            MatrixOp::Mfma(Desc {
                m: [4, 16, 32, 32][((aux >> 4) & 3) as usize],
                blocks: [1, 2, 4, 16][((aux >> 6) & 3) as usize],
                k: 1 << ((aux >> 8) & 7),
                a,
                b,
                sparse: aux & (1 << 12) != 0,
                scaled: aux & AUX_SCALED != 0,
            })
        }
    }
}

/// The gfx90a names of multi-block shapes (no `_Nb` in the mnemonic).
const GFX90A_MULTI_BLOCK: [&str; 16] = [
    "32x32x1f32",
    "16x16x1f32",
    "4x4x1f32",
    "32x32x4f16",
    "16x16x4f16",
    "4x4x4f16",
    "32x32x4i8",
    "16x16x4i8",
    "4x4x4i8",
    "32x32x4bf16_1k",
    "16x16x4bf16_1k",
    "4x4x4bf16_1k",
    "32x32x2bf16",
    "16x16x2bf16",
    "4x4x2bf16",
    "4x4x4f64",
];

/// The matrix op a mnemonic names (load time only).
pub(crate) fn from_mnemonic(mnemonic: &str) -> MatrixOp {
    match mnemonic {
        "v_accvgpr_read_b32" => return MatrixOp::AccRead,
        "v_accvgpr_write_b32" => return MatrixOp::AccWrite,
        "v_mfma_ld_scale_b32" => return MatrixOp::LdScale,
        _ => {}
    }
    parse_mfma(mnemonic).map_or(MatrixOp::None, MatrixOp::Mfma)
}

/// The input class of a matrix instruction, as far as its throughput is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MfmaClass {
    /// f64 inputs.
    F64,
    /// f32 inputs.
    F32,
    /// xf32 inputs (gfx942).
    Xf32,
    /// f16 inputs.
    F16,
    /// bf16 inputs (the `_1k` forms of gfx90a and every bf16 form later).
    Bf16,
    /// gfx90a's original bf16 forms (without `_1k`): half the `_1k` rate.
    Bf16Legacy,
    /// i8 inputs.
    I8,
    /// fp8/bf8 inputs (any mix).
    Fp8,
    /// gfx950 `*_f8f6f4`: the formats come from CBSZ/BLGP at run time.
    F8f6f4,
}

/// The arithmetic of one matrix instruction: what a timing model needs to derive its
/// pipeline occupancy from a part's peak rate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MfmaWork {
    /// Rows (= columns) of each output block.
    pub m: u32,
    /// Reduction length of the dense product.
    pub k: u32,
    /// Output blocks.
    pub blocks: u32,
    /// Input class.
    pub class: MfmaClass,
    /// SMFMAC (2:4 structured-sparse A: half the multiplies of the dense product).
    pub sparse: bool,
}

impl MfmaWork {
    /// Multiply-adds of the dense product counted as two operations each, as peak rates
    /// count them; an SMFMAC does half (the zeros of A are skipped).
    pub fn ops(&self) -> u64 {
        let dense = 2 * u64::from(self.m) * u64::from(self.m) * u64::from(self.k) * u64::from(self.blocks);
        if self.sparse {
            dense / 2
        } else {
            dense
        }
    }
}

/// The [`MfmaWork`] of an MFMA/SMFMAC mnemonic (LLVM's spelling), `None` for any other.
pub fn mfma_work(mnemonic: &str) -> Option<MfmaWork> {
    let d = parse_mfma(mnemonic)?;
    // gfx90a's original bf16 forms spell the type right after K (`32x32x2bf16`); the
    // `_1k` forms and every later target's forms do not.
    let legacy_bf16 = mnemonic.strip_suffix("bf16").is_some_and(|head| head.ends_with(|c: char| c.is_ascii_digit()));
    let class = match d.a {
        Elem::F64 => MfmaClass::F64,
        Elem::F32 => MfmaClass::F32,
        Elem::Xf32 => MfmaClass::Xf32,
        Elem::F16 => MfmaClass::F16,
        Elem::Bf16 if legacy_bf16 => MfmaClass::Bf16Legacy,
        Elem::Bf16 => MfmaClass::Bf16,
        Elem::I8 => MfmaClass::I8,
        Elem::Fp8 | Elem::Bf8 => MfmaClass::Fp8,
        Elem::F8f6f4 => MfmaClass::F8f6f4,
    };
    Some(MfmaWork { m: d.m as u32, k: d.k as u32, blocks: d.blocks as u32, class, sparse: d.sparse })
}

fn parse_mfma(mnemonic: &str) -> Option<Desc> {
    let (rest, sparse) = if let Some(r) = mnemonic.strip_prefix("v_mfma_") {
        (r, false)
    } else {
        (mnemonic.strip_prefix("v_smfmac_")?, true)
    };
    let rest = rest.strip_prefix("f32_").or_else(|| rest.strip_prefix("i32_")).or_else(|| rest.strip_prefix("f64_"))?;
    let mut parts = rest.splitn(3, 'x');
    let m: usize = parts.next()?.parse().ok()?;
    let n: usize = parts.next()?.parse().ok()?;
    let tail = parts.next()?;
    let digits = tail.chars().take_while(|c| c.is_ascii_digit()).count();
    let k: usize = tail[..digits].parse().ok()?;
    let mut ty = tail[digits..].trim_start_matches('_');
    let mut blocks = 1;
    for (suffix, b) in [("2b_", 2), ("4b_", 4), ("16b_", 16)] {
        if let Some(t) = ty.strip_prefix(suffix) {
            ty = t;
            blocks = b;
        }
    }
    if GFX90A_MULTI_BLOCK.contains(&rest) {
        blocks = match (m, ty) {
            (4, "f64") => 4,
            (4, _) => 16,
            (16, _) => 4,
            _ => 2,
        };
    }
    let (a, b) = match ty.trim_end_matches("_1k") {
        "f32" => (Elem::F32, Elem::F32),
        "xf32" => (Elem::Xf32, Elem::Xf32),
        "f64" => (Elem::F64, Elem::F64),
        "f16" => (Elem::F16, Elem::F16),
        "bf16" => (Elem::Bf16, Elem::Bf16),
        "i8" => (Elem::I8, Elem::I8),
        "fp8_fp8" => (Elem::Fp8, Elem::Fp8),
        "fp8_bf8" => (Elem::Fp8, Elem::Bf8),
        "bf8_fp8" => (Elem::Bf8, Elem::Fp8),
        "bf8_bf8" => (Elem::Bf8, Elem::Bf8),
        "f8f6f4" => (Elem::F8f6f4, Elem::F8f6f4),
        _ => return None,
    };
    let valid = m == n && matches!(m, 4 | 16 | 32) && k.is_power_of_two() && k <= 128 && (k * m * blocks).is_multiple_of(64);
    valid.then_some(Desc { m, blocks, k, a, b, sparse, scaled: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::{Field, OpSpec, ENTRIES};

    /// Every matrix instruction of the decoder's tables parses, round-trips through its aux
    /// word, and names the register counts the tables (learned from LLVM) give its operands.
    #[test]
    fn every_table_form_parses_with_the_tables_register_counts() {
        let mut seen = 0;
        for entry in ENTRIES.iter() {
            let mnemonic = entry.opcode.mnemonic();
            if !(mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac")) || mnemonic == "v_mfma_ld_scale_b32" {
                continue;
            }
            let MatrixOp::Mfma(d) = from_mnemonic(mnemonic) else { panic!("{mnemonic} does not parse") };
            assert_eq!(unpack(pack(MatrixOp::Mfma(d))), MatrixOp::Mfma(d), "{mnemonic}");
            let width = |f: Field| {
                entry.ops.iter().find_map(|op| match op {
                    OpSpec::Field(g, w, ..) if *g == f => Some(*w as usize),
                    _ => None,
                })
            };
            let a_regs = Desc::regs(d.a_per_lane(), d.a.bits());
            let b_regs = Desc::regs(d.b_per_lane(), d.b.bits());
            assert_eq!(width(Field::Src0), Some(a_regs), "{mnemonic} A");
            assert_eq!(width(Field::Src1), Some(b_regs), "{mnemonic} B");
            assert_eq!(width(Field::Vdst), Some(d.out_regs()), "{mnemonic} D");
            if !d.sparse {
                assert_eq!(width(Field::Src2), Some(d.out_regs()), "{mnemonic} C");
            }
            seen += 1;
        }
        assert!(seen > 100, "{seen} forms");
        assert_eq!(from_mnemonic("v_accvgpr_read_b32"), MatrixOp::AccRead);
        assert_eq!(unpack(pack(MatrixOp::LdScale)), MatrixOp::LdScale);
        assert_eq!(from_mnemonic("v_pk_fma_f32"), MatrixOp::None);
    }
}
