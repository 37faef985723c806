//! Opcode tables generated from `data/isa.txt` (see `tests/codegen.rs`), plus the
//! hand-written types the generated code is made of.
//!
//! **Architecture Invariant:** `generated.rs` is only ever written by the generator; the
//! `codegen` test fails when it is stale.

mod generated;

pub use generated::Opcode;

pub(crate) use generated::{ENTRIES, FAMILY_TABLES, HWREG_NAMES, IMAGE_DATA_SIZES, MNEMONICS, SENDMSG_NAMES};

/// How an instruction field is printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Vector register (VGPR, or AGPR when the instruction's acc bit says so).
    V,
    /// Accumulation register (AGPR) regardless of acc bits.
    A,
    /// Scalar register or scalar source operand.
    S,
    /// Immediate value.
    I,
}

/// LLVM's annotations for operand values outside the operand's register class, learned
/// by probing: `/*Invalid register, operand has 'NAME' register class*/` and
/// `/*Invalid immediate*/`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Annot {
    /// Class named when a VGPR tuple starts at an odd register.
    pub(crate) misaligned_v: Option<&'static str>,
    /// Class named when an AGPR tuple starts at an odd register.
    pub(crate) misaligned_a: Option<&'static str>,
    /// Class named when the value is a scalar register.
    pub(crate) sgpr: Option<&'static str>,
    /// Class named when the value is a vector register.
    pub(crate) vgpr: Option<&'static str>,
    /// Constants are annotated as invalid immediates.
    pub(crate) imm: bool,
}

impl Annot {
    pub(crate) const NONE: Annot = Annot { misaligned_v: None, misaligned_a: None, sgpr: None, vgpr: None, imm: false };
}

/// An operand slot of an instruction, in printed order.
#[derive(Copy, Clone, Debug)]
pub(crate) enum OpSpec {
    /// A field of the encoding, with its width in dwords and its annotations.
    Field(Field, u8, Class, &'static Annot),
    /// Fixed text (an implicit operand such as `vcc` or `off`).
    Text(&'static str),
}

/// Special immediate formats (SOPP/SOPK) and matrix-instruction layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    None,
    Hex,
    Dec,
    Label,
    Waitcnt,
    Hwreg,
    Sendmsg,
    GprIdx,
    Mai,
    MaiNeg,
    Mix,
    DpAlu,
    /// v_bitop3: the abs/neg/omod bits hold the truth table (`bitop3:0x..`).
    Bitop3,
    /// v_permlane*_swap (VOP3): op_sel bits 1/0 print as `bound_ctrl:1` / `fi:1`.
    PermlaneSwap,
}

/// Named bit fields of the encodings; their positions depend on the encoding family.
/// Operand roles for [`crate::decode::Inst::operand`] are the register/immediate fields
/// (`Vdst`, `Sdst`, `Src0`..`Src2`, `Vsrc1`, `Ssrc0`, `Ssrc1`, `Sdata`, `Sbase`, `Addr`,
/// `Data`, `Data0`, `Data1`, `Vaddr`, `Vdata`, `Srsrc`, `Ssamp`, `Saddr`, `Soffset`,
/// `Offset`, `Simm16`, `Literal`); the others are modifier bits.
#[allow(missing_docs)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Field {
    Sdst, Ssrc0, Ssrc1, Simm16, Sbase, Sdata, Offset, Soffset, Glc, Imm, Nv, Soe,
    Src0, Src1, Src2, Vsrc1, Vdst, Abs, Opsel, Clamp, Omod, Neg, NegHi, OpselHi2, OpselHi, NegLo,
    Offset0, Offset1, Gds, Addr, Data0, Data1, Acc, Lds, Slc, B25, Saddr, Data, Offen, Idxen, B15,
    Vaddr, Vdata, Srsrc, Dfmt, Nfmt, Literal, Ssamp, Dmask, Unorm, Da, A16, Lwe, D16, B7,
}

impl Field {
    /// This field's bit in an [`Entry::mods`] set.
    pub(crate) const fn bit(self) -> u64 {
        1 << (self as u8)
    }

    /// The field whose [`Field::bit`] is `1 << bit`.
    pub(crate) const fn from_bit(bit: u32) -> Option<Field> {
        const ALL: [Field; 55] = [
            Field::Sdst, Field::Ssrc0, Field::Ssrc1, Field::Simm16, Field::Sbase, Field::Sdata, Field::Offset, Field::Soffset,
            Field::Glc, Field::Imm, Field::Nv, Field::Soe, Field::Src0, Field::Src1, Field::Src2, Field::Vsrc1, Field::Vdst,
            Field::Abs, Field::Opsel, Field::Clamp, Field::Omod, Field::Neg, Field::NegHi, Field::OpselHi2, Field::OpselHi,
            Field::NegLo, Field::Offset0, Field::Offset1, Field::Gds, Field::Addr, Field::Data0, Field::Data1, Field::Acc,
            Field::Lds, Field::Slc, Field::B25, Field::Saddr, Field::Data, Field::Offen, Field::Idxen, Field::B15,
            Field::Vaddr, Field::Vdata, Field::Srsrc, Field::Dfmt, Field::Nfmt, Field::Literal, Field::Ssamp,
            Field::Dmask, Field::Unorm, Field::Da, Field::A16, Field::Lwe, Field::D16, Field::B7,
        ];
        if (bit as usize) < ALL.len() {
            Some(ALL[bit as usize])
        } else {
            None
        }
    }
}

/// One instruction shape: mnemonic, operands, printed modifiers and must-be bits.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) opcode: Opcode,
    pub(crate) ops: &'static [OpSpec],
    /// Set of modifier fields ([`Field::bit`]) the instruction prints.
    pub(crate) mods: u64,
    /// Per word `(mask, value)`: the word is valid only if `word & mask == value`.
    pub(crate) must: [(u32, u32); 2],
    pub(crate) kind: Kind,
    pub(crate) flags: u8,
    /// VOP3: which sources print `|abs|` (bit per source); 0xff elsewhere.
    pub(crate) abs_mask: u8,
    /// VOP3: which sources print negation.
    pub(crate) neg_mask: u8,
    /// VOP3: which op_sel bits are printed.
    pub(crate) opsel_mask: u8,
    /// Where a literal may follow (`LIT_*`) or which w1 sources must not be 0xff (`BAD_W1_*`).
    pub(crate) literal: u8,
    /// DPP/SDWA: bits of the control word that LLVM prints for this opcode.
    pub(crate) w1_mods: u32,
    /// VOP3/DPP: per source, the negate bit means `sext(...)` (integer input modifier).
    pub(crate) sext: u8,
}

impl Entry {
    /// Always followed by a literal (`v_madak_f32`, `s_setreg_imm32_b32`).
    pub(crate) const LIT_FIXED: u8 = 1;
    /// SOP ssrc0 (w0 bits 7:0) = 0xff takes a literal.
    pub(crate) const LIT_SSRC0: u8 = 2;
    /// SOP ssrc1 (w0 bits 15:8) = 0xff takes a literal.
    pub(crate) const LIT_SSRC1: u8 = 4;
    /// VOP1/VOP2/VOPC src0 (w0 bits 8:0) = 0xff takes a literal.
    pub(crate) const LIT_SRC0: u8 = 8;
    /// VOP3/VOP3P src0 (w1 bits 8:0) = 0xff is invalid (no literals in 64-bit VALU).
    pub(crate) const BAD_W1_SRC0: u8 = 16;
    /// As `BAD_W1_SRC0` for src1 (w1 bits 17:9).
    pub(crate) const BAD_W1_SRC1: u8 = 32;
    /// As `BAD_W1_SRC0` for src2 (w1 bits 26:18).
    pub(crate) const BAD_W1_SRC2: u8 = 64;
    /// MUBUF/MTBUF soffset (w1 bits 31:24), checked for reserved source values.
    pub(crate) const SOFFSET_W1: u8 = 128;

    /// A literal constant in src0 is printed as 16 bits.
    pub(crate) const LIT16: u8 = 1;
    /// Atomic that returns the old value (and prints vdst) when glc/sc0 is set.
    pub(crate) const GLC_RETURNS: u8 = 2;
    /// Buffer load that has an LDS-direct form (lds bit).
    pub(crate) const LDS_FORM: u8 = 4;
    /// Packed VOP3P op whose `op_sel_hi` defaults to all ones (printed only otherwise).
    pub(crate) const PACKED_HI: u8 = 8;
    /// 16-bit integer operands: inline float constants print as f16 bit patterns.
    pub(crate) const INT16: u8 = 16;


    pub(crate) fn has(&self, f: Field) -> bool {
        self.mods & f.bit() != 0
    }
}

/// The data registers LLVM prints for MIMG entry `entry` (an index of `ENTRIES`) with
/// `dmask` and `d16`, from the table learned by the sweep; `None` for entries that are
/// not MIMG or reject d16.
pub(crate) fn image_data_registers(entry: u16, dmask: u32, d16: bool) -> Option<u8> {
    let i = IMAGE_DATA_SIZES.binary_search_by_key(&entry, |row| row.0).ok()?;
    let (_, plain, with_d16) = IMAGE_DATA_SIZES[i];
    let nibbles = if d16 { with_d16 } else { plain };
    let n = (nibbles >> (4 * (dmask & 15))) & 15;
    (n != 0).then_some(n as u8)
}

impl Opcode {
    /// The mnemonic as LLVM prints it (including `_e32`/`_e64` suffixes).
    pub fn mnemonic(self) -> &'static str {
        MNEMONICS[self as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::Field;

    #[test]
    fn field_bits_round_trip() {
        for bit in 0..64 {
            if let Some(f) = Field::from_bit(bit) {
                assert_eq!(f.bit(), 1 << bit);
            }
        }
        assert_eq!(Field::from_bit(Field::Literal as u32), Some(Field::Literal));
    }
}
