//! Opcode tables generated from `data/isa.txt` (see `tests/codegen.rs`), plus the
//! hand-written types the generated code is made of.
//!
//! **Architecture Invariant:** `generated.rs` is only ever written by the generator; the
//! `codegen` test fails when it is stale.

mod generated;

pub use generated::Opcode;
pub(crate) use generated::{ENTRIES, FAMILY_TABLES, HWREG_NAMES, MNEMONICS, SENDMSG_NAMES};

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

/// An operand slot of an instruction, in printed order.
#[derive(Copy, Clone, Debug)]
pub(crate) enum OpSpec {
    /// A field of the encoding, with its width in dwords.
    Field(Field, u8, Class),
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
}

/// Named bit fields of the encodings (`Nv` and `Soe` are SMEM bits the printer reads
/// only through the must-be masks). Their positions depend on the encoding family
/// (`crate::decode::fields`).
#[allow(missing_docs, dead_code)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Field {
    Sdst, Ssrc0, Ssrc1, Simm16, Sbase, Sdata, Offset, Soffset, Glc, Imm, Nv, Soe,
    Src0, Src1, Src2, Vsrc1, Vdst, Abs, Opsel, Clamp, Omod, Neg, NegHi, OpselHi2, OpselHi, NegLo,
    Offset0, Offset1, Gds, Addr, Data0, Data1, Acc, Lds, Slc, B25, Saddr, Data, Offen, Idxen, B15,
    Vaddr, Vdata, Srsrc, Dfmt, Nfmt, Literal,
}

impl Field {
    /// This field's bit in an [`Entry::mods`] set.
    pub(crate) const fn bit(self) -> u64 {
        1 << (self as u8)
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
    /// DPP: src0's negate bit means `sext` (integer source modifier).
    pub(crate) const DPP_SEXT0: u8 = 32;
    /// DPP: src1's negate bit means `sext`.
    pub(crate) const DPP_SEXT1: u8 = 64;

    pub(crate) fn has(&self, f: Field) -> bool {
        self.mods & f.bit() != 0
    }
}

impl Opcode {
    /// The mnemonic as LLVM prints it (including `_e32`/`_e64` suffixes).
    pub fn mnemonic(self) -> &'static str {
        MNEMONICS[self as usize]
    }
}
