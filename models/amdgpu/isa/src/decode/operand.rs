//! Operands and modifiers of a decoded instruction, read from its raw words.

use super::fields::position;
use super::{Encoding, Inst};
use crate::tables::{Class, Entry, Field, Kind, OpSpec};
use crate::Target;

/// A contiguous register range (`first`, `count` registers).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegRange {
    /// First register number.
    pub first: u16,
    /// Number of 32-bit registers.
    pub count: u8,
}

/// Named scalar registers and hardware-value sources.
#[allow(missing_docs)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SpecialReg {
    FlatScratch,
    FlatScratchLo,
    FlatScratchHi,
    XnackMask,
    XnackMaskLo,
    XnackMaskHi,
    Vcc,
    VccLo,
    VccHi,
    M0,
    Exec,
    ExecLo,
    ExecHi,
    SrcSharedBase,
    SrcSharedLimit,
    SrcPrivateBase,
    SrcPrivateLimit,
    SrcPopsExitingWaveId,
    SrcVccz,
    SrcExecz,
    SrcScc,
    SrcLdsDirect,
    Null,
    SrcFlatScratchBaseLo,
    SrcFlatScratchBaseHi,
}

impl SpecialReg {
    /// The register's assembler name.
    pub const fn name(self) -> &'static str {
        use SpecialReg as S;
        match self {
            S::FlatScratch => "flat_scratch",
            S::FlatScratchLo => "flat_scratch_lo",
            S::FlatScratchHi => "flat_scratch_hi",
            S::XnackMask => "xnack_mask",
            S::XnackMaskLo => "xnack_mask_lo",
            S::XnackMaskHi => "xnack_mask_hi",
            S::Vcc => "vcc",
            S::VccLo => "vcc_lo",
            S::VccHi => "vcc_hi",
            S::M0 => "m0",
            S::Exec => "exec",
            S::ExecLo => "exec_lo",
            S::ExecHi => "exec_hi",
            S::SrcSharedBase => "src_shared_base",
            S::SrcSharedLimit => "src_shared_limit",
            S::SrcPrivateBase => "src_private_base",
            S::SrcPrivateLimit => "src_private_limit",
            S::SrcPopsExitingWaveId => "src_pops_exiting_wave_id",
            S::SrcVccz => "src_vccz",
            S::SrcExecz => "src_execz",
            S::SrcScc => "src_scc",
            S::SrcLdsDirect => "src_lds_direct",
            S::Null => "null",
            S::SrcFlatScratchBaseLo => "src_flat_scratch_base_lo",
            S::SrcFlatScratchBaseHi => "src_flat_scratch_base_hi",
        }
    }
}

/// The inline floating-point constants.
#[allow(missing_docs)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InlineFloat {
    Half,
    NegHalf,
    One,
    NegOne,
    Two,
    NegTwo,
    Four,
    NegFour,
    InvTwoPi,
}

impl InlineFloat {
    /// IEEE half-precision bit pattern of the constant.
    pub const fn f16_bits(self) -> u16 {
        match self {
            InlineFloat::Half => 0x3800,
            InlineFloat::NegHalf => 0xb800,
            InlineFloat::One => 0x3c00,
            InlineFloat::NegOne => 0xbc00,
            InlineFloat::Two => 0x4000,
            InlineFloat::NegTwo => 0xc000,
            InlineFloat::Four => 0x4400,
            InlineFloat::NegFour => 0xc400,
            InlineFloat::InvTwoPi => 0x3118,
        }
    }

    /// Value as f64.
    pub fn value(self) -> f64 {
        match self {
            InlineFloat::Half => 0.5,
            InlineFloat::NegHalf => -0.5,
            InlineFloat::One => 1.0,
            InlineFloat::NegOne => -1.0,
            InlineFloat::Two => 2.0,
            InlineFloat::NegTwo => -2.0,
            InlineFloat::Four => 4.0,
            InlineFloat::NegFour => -4.0,
            InlineFloat::InvTwoPi => 0.159_154_943_091_895_35,
        }
    }
}

/// One operand of an instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// Scalar registers.
    Sgpr(RegRange),
    /// Vector registers.
    Vgpr(RegRange),
    /// Accumulation registers.
    Agpr(RegRange),
    /// Trap-handler temporaries.
    Ttmp(RegRange),
    /// A named register or hardware source (`width` 32-bit registers).
    Special(SpecialReg),
    /// Inline integer constant (-16..=64).
    InlineInt(i8),
    /// Inline float constant.
    InlineFloat(InlineFloat),
    /// 32-bit literal following the instruction.
    Literal(u32),
    /// Immediate field (offsets, simm16, ...).
    Imm(u32),
    /// `off`: an absent address register.
    Off,
    /// Fixed operand text such as `vcc` in `v_cndmask_b32_e32`.
    Fixed(&'static str),
    /// A source-field value that names nothing on this target.
    Reserved(u16),
}

/// The operands of an instruction, in printed order (no heap).
#[derive(Copy, Clone, Debug)]
pub struct OperandList {
    items: [Operand; 6],
    len: u8,
}

impl OperandList {
    /// The operands as a slice.
    pub fn as_slice(&self) -> &[Operand] {
        &self.items[..self.len as usize]
    }
}

/// Modifier bits of an instruction (all zero when the encoding has no such field).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Per-source absolute value bits (VOP3).
    pub abs: u8,
    /// Per-source negate bits (VOP3 `neg`, VOP3P `neg_lo`).
    pub neg: u8,
    /// VOP3P `neg_hi` bits.
    pub neg_hi: u8,
    /// Clamp the result.
    pub clamp: bool,
    /// Output modifier: 0 none, 1 `mul:2`, 2 `mul:4`, 3 `div:2`.
    pub omod: u8,
    /// Operand-select bits.
    pub op_sel: u8,
    /// VOP3P operand-select-high bits.
    pub op_sel_hi: u8,
    /// MFMA broadcast control.
    pub cbsz: u8,
    /// MFMA broadcast lane.
    pub abid: u8,
    /// MFMA B-matrix lane group pattern.
    pub blgp: u8,
    /// Memory offset (sign-extended where the encoding's offset is signed).
    pub offset: i32,
    /// DS second offset (two-address forms).
    pub offset1: u8,
    /// glc (gfx90a) / sc0 (gfx940 family).
    pub glc: bool,
    /// slc (gfx90a) / nt (gfx940 family).
    pub slc: bool,
    /// scc (gfx90a) / sc1 (gfx940 family).
    pub scc: bool,
    /// Buffer offset enable.
    pub offen: bool,
    /// Buffer index enable.
    pub idxen: bool,
    /// LDS-direct form.
    pub lds: bool,
    /// GDS instead of LDS.
    pub gds: bool,
    /// MTBUF data format.
    pub dfmt: u8,
    /// MTBUF number format.
    pub nfmt: u8,
    /// MIMG: which components the instruction reads or writes (bit per R, G, B, A).
    pub dmask: u8,
    /// MIMG: unnormalized texel coordinates.
    pub unorm: bool,
    /// MIMG: declared array (`da`).
    pub da: bool,
    /// MIMG: 16-bit address components (`a16`).
    pub a16: bool,
    /// MIMG: LOD warning enable (`lwe`).
    pub lwe: bool,
    /// MIMG: 16-bit data (`d16`).
    pub d16: bool,
}

#[inline]
pub(crate) fn field_raw(encoding: Encoding, f: Field, words: &[u32; 3]) -> u32 {
    if f == Field::Literal {
        return words[encoding.base_words()];
    }
    match position(encoding, f) {
        Some((w, lo, width)) => {
            let v = words[w as usize] >> lo;
            if width >= 32 { v } else { v & ((1u32 << width) - 1) }
        }
        None => 0,
    }
}

fn range(first: u32, count: u8) -> RegRange {
    RegRange { first: first as u16, count }
}

fn align_sgpr(v: u32, width: u8) -> u32 {
    match width {
        0 | 1 => v,
        2 => v & !1,
        _ => v & !3,
    }
}

/// Decodes a scalar/vector source value (9-bit encoding space) of `width` dwords.
pub(crate) fn src_operand(v: u32, width: u8, literal: u32) -> Operand {
    use SpecialReg as S;
    let pair = |lo: S, hi: S, wide: S| -> Operand {
        if width >= 2 { Operand::Special(wide) } else if v & 1 == 0 { Operand::Special(lo) } else { Operand::Special(hi) }
    };
    match v {
        // LLVM aligns scalar tuples down: 64-bit to even, wider to a multiple of 4.
        0..=101 => Operand::Sgpr(range(align_sgpr(v, width), width)),
        102 | 103 => pair(S::FlatScratchLo, S::FlatScratchHi, S::FlatScratch),
        104 | 105 => pair(S::XnackMaskLo, S::XnackMaskHi, S::XnackMask),
        106 | 107 => pair(S::VccLo, S::VccHi, S::Vcc),
        108..=123 => Operand::Ttmp(range(align_sgpr(v - 108, width), width)),
        124 => Operand::Special(S::M0),
        125 => Operand::Special(S::Null),
        126 | 127 => pair(S::ExecLo, S::ExecHi, S::Exec),
        128..=192 => Operand::InlineInt((v - 128) as i8),
        193..=208 => Operand::InlineInt(-((v - 192) as i8)),
        235 => Operand::Special(S::SrcSharedBase),
        236 => Operand::Special(S::SrcSharedLimit),
        237 => Operand::Special(S::SrcPrivateBase),
        238 => Operand::Special(S::SrcPrivateLimit),
        239 => Operand::Special(S::SrcPopsExitingWaveId),
        240 => Operand::InlineFloat(InlineFloat::Half),
        241 => Operand::InlineFloat(InlineFloat::NegHalf),
        242 => Operand::InlineFloat(InlineFloat::One),
        243 => Operand::InlineFloat(InlineFloat::NegOne),
        244 => Operand::InlineFloat(InlineFloat::Two),
        245 => Operand::InlineFloat(InlineFloat::NegTwo),
        246 => Operand::InlineFloat(InlineFloat::Four),
        247 => Operand::InlineFloat(InlineFloat::NegFour),
        248 => Operand::InlineFloat(InlineFloat::InvTwoPi),
        251 => Operand::Special(S::SrcVccz),
        252 => Operand::Special(S::SrcExecz),
        253 => Operand::Special(S::SrcScc),
        254 => Operand::Special(S::SrcLdsDirect),
        255 => Operand::Literal(literal),
        256..=511 => Operand::Vgpr(range(v - 256, width)),
        _ => Operand::Reserved(v as u16),
    }
}

impl Inst {
    /// Raw value of an encoding field by name, for executors: see [`Field`]-named
    /// accessors such as [`Inst::modifiers`].
    pub(crate) fn acc_bits(&self) -> (bool, u8) {
        let e = self.entry();
        match self.encoding {
            Encoding::Vop3p if matches!(e.kind, Kind::Mai | Kind::MaiNeg) => (self.raw(Field::Clamp) != 0, self.raw(Field::OpselHi) as u8),
            Encoding::Ds | Encoding::Flat | Encoding::Scratch | Encoding::Global | Encoding::Mubuf | Encoding::Mtbuf | Encoding::Mimg => {
                let a = self.raw(Field::Acc) != 0;
                (a, 0)
            }
            _ => (false, 0),
        }
    }

    /// Returns the operand for one table slot, applying the family's printing rules.
    pub(crate) fn operand_for(&self, spec: OpSpec) -> Option<Operand> {
        let (f, width, class) = match spec {
            OpSpec::Text("vcc") if self.encoding == Encoding::VopcSdwa && self.words[1] >> 15 & 1 != 0 => {
                return Some(src_operand(self.raw(Field::Sdst), 2, 0));
            }
            OpSpec::Text(t) => return Some(Operand::Fixed(t)),
            OpSpec::Field(f, w, c, _) => (f, self.matrix_source_width(f).unwrap_or(w), c),
        };
        let v = self.raw(f);
        let lit = self.words[self.encoding.base_words()];
        let enc = self.encoding;
        let (acc, acc_ab) = self.acc_bits();
        let vreg = |v: u32, a: bool| if a { Operand::Agpr(range(v, width)) } else { Operand::Vgpr(range(v, width)) };
        let op = match (enc, f) {
            (_, Field::Literal) => Operand::Literal(lit),
            (Encoding::Vop1Dpp | Encoding::Vop2Dpp | Encoding::VopcDpp, Field::Src0 | Field::Vsrc1) => {
                Operand::Vgpr(range(v, width))
            }
            (Encoding::Vop1Sdwa | Encoding::Vop2Sdwa | Encoding::VopcSdwa, Field::Src0) => {
                if self.words[1] >> 23 & 1 != 0 { src_operand(v, width, lit) } else { Operand::Vgpr(range(v, width)) }
            }
            (Encoding::Vop2Sdwa | Encoding::VopcSdwa, Field::Vsrc1) => {
                if self.words[1] >> 31 != 0 { src_operand(v, width, lit) } else { Operand::Vgpr(range(v, width)) }
            }
            (_, Field::Simm16) => Operand::Imm(v),
            // s_set_gpr_idx_on: the ssrc1 field is the index-mode immediate.
            (_, Field::Ssrc1) if class == Class::I => Operand::Imm(v),
            (Encoding::Smem, Field::Sbase) => src_operand(v * 2, width, lit),
            // s_atc_probe: the sdata field is an immediate (probe mode).
            (Encoding::Smem, Field::Sdata) if class == Class::I => Operand::Imm(v),
            (Encoding::Smem, Field::Offset) => {
                if self.raw(Field::Imm) != 0 {
                    Operand::Imm(v)
                } else if self.raw(Field::Soe) != 0 {
                    src_operand(self.raw(Field::Soffset), 1, lit)
                } else {
                    src_operand(v & 0x7f, 1, lit)
                }
            }
            (Encoding::Mubuf | Encoding::Mtbuf, Field::Srsrc) => src_operand(v * 4, width, lit),
            (Encoding::Mubuf | Encoding::Mtbuf, Field::Vaddr) => {
                let offen = self.raw(Field::Offen) != 0;
                let idxen = self.raw(Field::Idxen) != 0;
                match (offen, idxen) {
                    (false, false) => Operand::Off,
                    (true, true) => Operand::Vgpr(range(v, 2)),
                    _ => Operand::Vgpr(range(v, 1)),
                }
            }
            (Encoding::Mubuf | Encoding::Mtbuf, Field::Vdata) => {
                if self.raw(Field::Lds) != 0 && enc == Encoding::Mubuf && self.entry().flags & Entry::LDS_FORM != 0 {
                    return None;
                }
                vreg(v, acc)
            }
            (Encoding::Mimg, Field::Srsrc | Field::Ssamp) => src_operand(v * 4, width, lit),
            (Encoding::Mimg, Field::Vdata) => {
                let count = self.image_data_printed(width);
                if acc { Operand::Agpr(range(v, count)) } else { Operand::Vgpr(range(v, count)) }
            }
            (Encoding::Global, Field::Addr) => {
                let w = if self.raw(Field::Saddr) == 0x7f { 2 } else { 1 };
                Operand::Vgpr(range(v, w))
            }
            (Encoding::Global, Field::Saddr) => {
                if v == 0x7f { Operand::Off } else { src_operand(v, 2, lit) }
            }
            (Encoding::Scratch, Field::Addr) => {
                let used = if self.target.is_gfx940_family() { self.raw(Field::Lds) != 0 } else { self.raw(Field::Saddr) == 0x7f };
                if used { Operand::Vgpr(range(v, 1)) } else { Operand::Off }
            }
            (Encoding::Scratch, Field::Saddr) => {
                if v == 0x7f { Operand::Off } else { src_operand(v, 1, lit) }
            }
            (Encoding::Flat, Field::Addr) => Operand::Vgpr(range(v, 2)),
            (Encoding::Flat | Encoding::Global | Encoding::Scratch, Field::Vdst) => {
                if self.entry().flags & Entry::GLC_RETURNS != 0 && self.raw(Field::Glc) == 0 {
                    return None;
                }
                vreg(v, acc)
            }
            (Encoding::Mubuf, Field::Soffset) | (Encoding::Mtbuf, Field::Soffset) => src_operand(v, 1, lit),
            // The GWS forms (the only DS entries with a gds field) name their data register
            // in the address field, and it may be an AGPR: llvm-mc prints `ds_gws_init a2 gds`.
            (Encoding::Ds, Field::Addr) if self.entry().has(Field::Gds) => vreg(v, acc),
            (Encoding::Ds, Field::Addr) => Operand::Vgpr(range(v, width)),
            (Encoding::Ds | Encoding::Flat | Encoding::Scratch | Encoding::Global, _) if class == Class::V => vreg(v, acc),
            (Encoding::Vop3p, Field::Vdst) => vreg(v, acc),
            (Encoding::Vop3p, Field::Src0 | Field::Src1 | Field::Src2) => {
                // LLVM has no 1024-bit scalar operand decoding: a scalar value in a
                // 32-register matrix source is decoded (and printed) as one register.
                let o = src_operand(v, width, lit);
                let a = match f {
                    Field::Src0 => acc_ab & 1 != 0,
                    Field::Src1 => acc_ab & 2 != 0,
                    _ => acc && !(self.entry().kind == Kind::Mai && width == 1),
                };
                match o {
                    Operand::Vgpr(r) if a => Operand::Agpr(r),
                    o => o,
                }
            }
            (_, Field::Src0 | Field::Src1 | Field::Src2 | Field::Ssrc0 | Field::Ssrc1 | Field::Sdst | Field::Sdata) => {
                src_operand(v, width, lit)
            }
            (_, Field::Vdst | Field::Vsrc1) if class == Class::S => src_operand(v, width, lit),
            _ if class == Class::V => Operand::Vgpr(range(v, width)),
            _ if class == Class::A => Operand::Agpr(range(v, width)),
            _ if class == Class::S => src_operand(v, width, lit),
            _ => Operand::Imm(v),
        };
        let op = match (op, class) {
            (Operand::Vgpr(r), Class::A) => Operand::Agpr(r),
            (o, _) => o,
        };
        Some(self.target_source_quirks(op, v, lit))
    }

    /// The register count of a scaled-format matrix source (`*_f8f6f4` MFMA): src0's
    /// format is cbsz, src1's is blgp (fp8/bf8 take 8 registers, fp6/bf6 6, fp4 4).
    pub(crate) fn matrix_source_width(&self, f: Field) -> Option<u8> {
        if self.encoding != Encoding::Vop3p || !self.opcode.mnemonic().ends_with("_f8f6f4") {
            return None;
        }
        let format = match f {
            Field::Src0 => self.raw(Field::NegHi),
            Field::Src1 => self.raw(Field::NegLo),
            _ => return None,
        };
        Some(match format {
            2 | 3 => 6,
            4 => 4,
            _ => 8,
        })
    }

    /// Target-specific source names, and LLVM's fallback for scalar VALU tuple widths it
    /// has no decoding for:
    /// LLVM 19 (gfx90a, gfx942) decodes a 32-register scalar tuple as one register,
    /// LLVM 22 (gfx950) as 16 registers, and a 6-register one as 5.
    /// `op` is the operand decoded from field value `v` (literal `lit`).
    fn target_source_quirks(&self, op: Operand, v: u32, lit: u32) -> Operand {
        // gfx950 names two source values that are reserved on the older targets.
        match (op, self.target) {
            (Operand::Reserved(230), Target::Gfx950) => return Operand::Special(SpecialReg::SrcFlatScratchBaseLo),
            (Operand::Reserved(231), Target::Gfx950) => return Operand::Special(SpecialReg::SrcFlatScratchBaseHi),
            _ => {}
        }
        if !matches!(self.encoding, Encoding::Vop3 | Encoding::Vop3p) {
            return op;
        }
        let count = match op {
            Operand::Sgpr(r) | Operand::Ttmp(r) => r.count,
            _ => return op,
        };
        let width = match (count, self.target == Target::Gfx950) {
            (32, false) => 1,
            (32, true) => 16,
            (6, true) => 5,
            _ => return op,
        };
        src_operand(v, width, lit)
    }

    /// The operand in role `field` (e.g. [`Field::Src0`], [`Field::Vdst`]), resolved with
    /// the family's rules (AGPR vs VGPR by acc bits, `off`, tuple widths), or `None` if
    /// the instruction has no such operand.
    pub fn operand(&self, field: Field) -> Option<Operand> {
        let spec = self.entry().ops.iter().find(|s| matches!(s, OpSpec::Field(f, _, _, _) if *f == field))?;
        self.operand_for(*spec)
    }

    /// The instruction's operands in printed order (implicit ones such as `vcc` included).
    pub fn operands(&self) -> OperandList {
        let mut list = OperandList { items: [Operand::Off; 6], len: 0 };
        for spec in self.entry().ops {
            if let Some(op) = self.operand_for(*spec) {
                if (list.len as usize) < list.items.len() {
                    list.items[list.len as usize] = op;
                    list.len += 1;
                }
            }
        }
        list
    }

    /// The instruction's modifier bits.
    pub fn modifiers(&self) -> Modifiers {
        let e = self.entry();
        let r = |f: Field| self.raw(f);
        let mut m = Modifiers::default();
        match self.encoding {
            Encoding::Vop3 => {
                if r(Field::Sdst) == 0 || !e.ops.iter().any(|s| matches!(s, OpSpec::Field(Field::Sdst, _, _, _))) {
                    m.abs = r(Field::Abs) as u8;
                    m.op_sel = r(Field::Opsel) as u8;
                }
                m.neg = r(Field::Neg) as u8;
                m.clamp = r(Field::Clamp) != 0;
                m.omod = r(Field::Omod) as u8;
            }
            Encoding::Vop3p if matches!(e.kind, Kind::Mai | Kind::MaiNeg) => {
                m.neg = if e.kind == Kind::MaiNeg { r(Field::NegLo) as u8 } else { 0 };
                m.cbsz = r(Field::NegHi) as u8;
                m.abid = (r(Field::Opsel) | (r(Field::OpselHi2) << 3)) as u8;
                m.blgp = r(Field::NegLo) as u8;
            }
            Encoding::Vop3p => {
                m.neg = r(Field::NegLo) as u8;
                m.neg_hi = r(Field::NegHi) as u8;
                m.op_sel = r(Field::Opsel) as u8;
                m.op_sel_hi = (r(Field::OpselHi) | (r(Field::OpselHi2) << 2)) as u8;
                m.clamp = r(Field::Clamp) != 0;
            }
            Encoding::Ds => {
                m.offset = r(Field::Offset0) as i32;
                m.offset1 = r(Field::Offset1) as u8;
                m.gds = r(Field::Gds) != 0;
            }
            Encoding::Flat | Encoding::Scratch | Encoding::Global => {
                let raw = r(Field::Offset);
                m.offset = if self.encoding == Encoding::Flat {
                    (raw & 0x1fff) as i32
                } else {
                    ((raw << 19) as i32) >> 19
                };
                m.glc = r(Field::Glc) != 0;
                m.slc = r(Field::Slc) != 0;
                m.scc = r(Field::B25) != 0;
                m.lds = r(Field::Lds) != 0;
            }
            Encoding::Mubuf | Encoding::Mtbuf => {
                m.offset = r(Field::Offset) as i32;
                m.offen = r(Field::Offen) != 0;
                m.idxen = r(Field::Idxen) != 0;
                m.glc = r(Field::Glc) != 0;
                m.slc = r(Field::Slc) != 0;
                m.scc = r(Field::B15) != 0;
                m.lds = r(Field::Lds) != 0;
                m.dfmt = r(Field::Dfmt) as u8;
                m.nfmt = r(Field::Nfmt) as u8;
            }
            Encoding::Smem => {
                m.glc = r(Field::Glc) != 0;
                m.offset = r(Field::Offset) as i32;
            }
            Encoding::Mimg => {
                m.dmask = r(Field::Dmask) as u8;
                m.unorm = r(Field::Unorm) != 0;
                m.glc = r(Field::Glc) != 0;
                m.slc = r(Field::Slc) != 0;
                m.scc = r(Field::B7) != 0;
                m.da = r(Field::Da) != 0;
                m.a16 = r(Field::A16) != 0;
                m.lwe = r(Field::Lwe) != 0;
                m.d16 = r(Field::D16) != 0;
            }
            _ => {}
        }
        m
    }

    /// The number of data registers LLVM prints for a MIMG instruction whose data
    /// operand has base width `base`: the count of its dmask (and d16) from the table, or
    /// the base width when that count would run past v255 (LLVM then decodes the base
    /// form; the decoder has rejected words whose base form runs past v255).
    fn image_data_printed(&self, base: u8) -> u8 {
        let first = self.raw(Field::Vdata);
        let count = crate::tables::image_data_registers(self.entry, self.raw(Field::Dmask), self.raw(Field::D16) != 0).unwrap_or(base);
        if first + u32::from(count) > 256 { base } else { count }
    }

    /// True on the gfx940 family (sc0/sc1/nt cache-policy names).
    pub(crate) fn gfx940(&self) -> bool {
        matches!(self.target, Target::Gfx942 | Target::Gfx950)
    }
}
