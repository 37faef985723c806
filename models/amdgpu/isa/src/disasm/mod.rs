//! Disassembler: instruction text exactly as LLVM's AMDGPU printer writes it, and an
//! `llvm-objdump -d` style listing of a code section.
//!
//! The printer is driven by the same generated table as the decoder: each entry lists its
//! operands in printed order and the modifier fields LLVM prints for it; family-specific
//! code here knows only the syntax of each modifier (`offset:`, `op_sel:[...]`, cache
//! policy names per target, DPP/SDWA controls, `s_waitcnt`/`hwreg`/`sendmsg` immediates).
//!
//! ```
//! use amdgpu_isa::{disasm::text, Target};
//! assert_eq!(text(Target::Gfx90a, &[0xBF8CC07F]).as_deref(), Some("s_waitcnt lgkmcnt(0)"));
//! assert_eq!(text(Target::Gfx942, &[0xD3B24004, 0x0801E504]).as_deref(),
//!            Some("v_pk_add_f32 v[4:5], v[4:5], 1.0 op_sel_hi:[1,0]"));
//! ```

mod listing;
mod operand;

pub use listing::{disassemble_section, listing, Listing, ListingItem, Symbol};

use std::fmt;

use crate::code_object::{CodeObject, SymbolKind};

use crate::decode::{decode, Decoded, Encoding, Inst, Operand, SpecialReg};
use crate::tables::{Annot, Field, Kind, OpSpec, HWREG_NAMES, SENDMSG_NAMES};
use crate::Target;
use operand::{write_operand, Note, SrcMods};

/// The labels `llvm-objdump -d` prints in a code object's `.text`, for
/// [`disassemble_section`]: every named symbol inside the section (not section or file
/// symbols), and, as llvm-objdump does, the section's name at its start when no symbol
/// is there (clang-15 code objects such as Debian's ROCm libraries begin `.text` with
/// padding before their first function). Ordered by address (stably: symbols at one
/// address keep the symbol table's order).
pub fn text_symbols(co: &CodeObject) -> Vec<Symbol> {
    let text = co.text();
    let start = text.address.0;
    let end = start + text.bytes.len() as u64;
    let mut out: Vec<Symbol> = co
        .symbols()
        .iter()
        .filter(|s| !matches!(s.kind, SymbolKind::Section | SymbolKind::File) && !s.name.is_empty())
        .filter(|s| (start..end).contains(&s.value.0))
        .map(|s| Symbol { name: s.name.clone(), address: s.value.0 })
        .collect();
    out.sort_by_key(|s| s.address);
    if out.first().is_none_or(|s| s.address != start) {
        out.insert(0, Symbol { name: ".text".to_string(), address: start });
    }
    out
}

/// Text of one decoded instruction (no leading tab, no trailing comment).
pub fn inst_text(inst: &Inst) -> String {
    let mut s = String::with_capacity(48);
    // Writing into a String cannot fail.
    let _ = write_inst(&mut s, inst);
    s
}

/// Text of the instruction at the start of `words`, or `None` if it does not decode.
pub fn text(target: Target, words: &[u32]) -> Option<String> {
    match decode(target, words) {
        Decoded::Inst(i) => Some(inst_text(&i)),
        _ => None,
    }
}

fn target_bit(t: Target) -> u8 {
    match t {
        Target::Gfx90a => 1,
        Target::Gfx942 => 2,
        Target::Gfx950 => 4,
    }
}

/// Writes the instruction text of `inst` to `out`.
pub fn write_inst(out: &mut impl fmt::Write, inst: &Inst) -> fmt::Result {
    let e = inst.entry();
    out.write_str(inst.opcode().mnemonic())?;
    let mods = inst.modifiers();
    let enc = inst.encoding();
    let mut first = true;
    let mut n_src = 0usize;
    for spec in e.ops {
        let Some(op) = inst.operand_for(*spec) else { continue };
        if e.kind == Kind::Dec && matches!((spec, op), (OpSpec::Field(Field::Simm16, _, _, _), Operand::Imm(0))) {
            continue;
        }
        out.write_str(if first { " " } else { ", " })?;
        first = false;
        let (field, width) = match *spec {
            OpSpec::Field(f, w, _, _) => (Some(f), inst.matrix_source_width(f).unwrap_or(w)),
            OpSpec::Text(_) => (None, 1),
        };
        let src_index = match field {
            Some(Field::Src0) => Some(0),
            Some(Field::Src1) => Some(1),
            Some(Field::Src2) => Some(2),
            _ => None,
        };
        if src_index.is_some() {
            n_src += 1;
        }
        if let (Some(Field::Literal), Operand::Literal(k), Encoding::Vop2) = (field, op, enc) {
            // The K constant of v_madak/v_madmk/v_fmaak/v_fmamk is always printed in hex.
            write!(out, "0x{k:x}")?;
            continue;
        }
        if let (Some(f), Operand::Imm(v)) = (field, op) {
            if f == Field::Simm16 {
                write_simm16(out, inst, e.kind, v)?;
                continue;
            }
            if f == Field::Ssrc1 {
                // s_set_gpr_idx_on's mode: `gpr_idx(SRC0,...)` or hex.
                write_simm16(out, inst, Kind::GprIdx, v)?;
                continue;
            }
            if enc == Encoding::Smem && f == Field::Sdata {
                // s_atc_probe mode: small values in decimal, others in hex.
                if v <= 64 { write!(out, "{v}")? } else { write!(out, "0x{v:x}")? }
                continue;
            }
            if enc == Encoding::Smem && f == Field::Offset && inst.raw(Field::Imm) != 0 {
                let off = ((v << 11) as i32) >> 11;
                let sign = if off < 0 { "-" } else { "" };
                if inst.raw(Field::Soe) != 0 {
                    let so = crate::decode::src_operand_pub(inst.raw(Field::Soffset), 1, 0);
                    write_operand(out, so, 1, false, SrcMods::default())?;
                    write!(out, " offset:{sign}0x{:x}", off.unsigned_abs())?;
                } else {
                    write!(out, "{sign}0x{:x}", off.unsigned_abs())?;
                }
                continue;
            }
        }
        let sm = match (enc, src_index) {
            (Encoding::Vop3, Some(i)) => SrcMods { note: Note::None, lit_marker: false,
                neg: e.neg_mask >> i & 1 != 0 && mods.neg >> i & 1 != 0 && e.sext >> i & 1 == 0,
                abs: e.abs_mask >> i & 1 != 0 && mods.abs >> i & 1 != 0,
                sext: e.sext >> i & 1 != 0 && mods.neg >> i & 1 != 0,
            },
            (Encoding::Vop1Dpp | Encoding::Vop2Dpp | Encoding::VopcDpp, _) if dpp_src(field).is_some() => {
                let i = dpp_src(field).unwrap_or(0);
                let w1 = inst.words()[1] & e.w1_mods;
                let neg = w1 >> (20 + 2 * i) & 1 != 0;
                let is_sext = e.sext >> i & 1 != 0;
                SrcMods { note: Note::None, lit_marker: false, neg: neg && !is_sext, abs: w1 >> (21 + 2 * i) & 1 != 0, sext: neg && is_sext }
            }
            (Encoding::Vop1Sdwa | Encoding::Vop2Sdwa | Encoding::VopcSdwa, _) if dpp_src(field).is_some() => {
                let i = dpp_src(field).unwrap_or(0);
                let w1 = inst.words()[1] & e.w1_mods;
                SrcMods { note: Note::None, lit_marker: false, sext: w1 >> (19 + 8 * i) & 1 != 0, neg: w1 >> (20 + 8 * i) & 1 != 0, abs: w1 >> (21 + 8 * i) & 1 != 0 }
            }
            (Encoding::Vop3p, Some(i)) if e.kind == Kind::Mix => SrcMods { note: Note::None, lit_marker: false,
                neg: mods.neg >> i & 1 != 0,
                abs: mods.neg_hi >> i & 1 != 0,
                sext: false,
            },
            _ => SrcMods::default(),
        };
        let lit16 = e.flags & crate::tables::Entry::LIT16 != 0 && field == Some(Field::Src0);
        let int16 = e.flags & crate::tables::Entry::INT16 != 0 && src_index.is_some();
        if let (Operand::InlineFloat(f), true) = (op, int16) {
            if sm.sext {
                write!(out, "sext(0x{:x})", f.f16_bits())?;
            } else {
                write!(out, "0x{:x}", f.f16_bits())?;
            }
            continue;
        }
        let note = match *spec {
            OpSpec::Field(Field::Vdst, _, crate::tables::Class::S, _)
                if matches!(op, Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_)) =>
            {
                Note::Imm
            }
            OpSpec::Field(f, _, _, a) => operand_note(inst, f, op, a),
            OpSpec::Text(_) => Note::None,
        };
        let sm = SrcMods { note, lit_marker: inst.target() == Target::Gfx950 && field != Some(Field::Literal), ..sm };
        write_operand(out, op, width, lit16 || int16, sm)?;
    }
    write_modifiers(out, inst, n_src)
}

/// The class annotation LLVM prints after `op` in slot `field` (see [`Annot`]).
fn operand_note(inst: &Inst, field: Field, op: Operand, a: &Annot) -> Note {
    let e = inst.entry();
    let mai = matches!(e.kind, Kind::Mai | Kind::MaiNeg) && matches!(field, Field::Vdst | Field::Src2);
    // The probes ran with acc_cd = 1: swap AReg/VReg names when the bit is clear.
    let swap = mai && inst.raw(Field::Clamp) == 0;
    let reg = |n: Option<&'static str>| n.map_or(Note::None, |n| Note::Reg(n, swap));
    if let Some(note) = scalar_class_note(inst, field, op) {
        return note;
    }
    if let Some(width) = inst.matrix_source_width(field) {
        // The table's AV_256 class narrows with the operand's format.
        let name = match width {
            4 => "AV_128_Align2",
            6 => "AV_192_Align2",
            _ => "AV_256_Align2",
        };
        let misaligned = matches!(op, Operand::Vgpr(r) | Operand::Agpr(r) if r.first % 2 == 1);
        let scalar = matches!(op, Operand::Sgpr(_) | Operand::Ttmp(_) | Operand::Special(_));
        if misaligned || (scalar && a.sgpr.is_some()) {
            return Note::Reg(name, false);
        }
    }
    if let Some(note) = atomic_data_note(inst, field, op) {
        return note;
    }
    if let Some(note) = address_note(inst, field, op) {
        return note;
    }
    match op {
        Operand::Vgpr(r) if r.count >= 2 && r.first % 2 == 1 && a.misaligned_v.is_some() => {
            a.misaligned_v.map_or(Note::None, |n| Note::Reg(n, false))
        }
        Operand::Agpr(r) if r.count >= 2 && r.first % 2 == 1 => {
            // AV classes name both register files; otherwise only an AGPR probe counts.
            match (a.misaligned_a, a.misaligned_v) {
                (Some(n), _) => Note::Reg(n, false),
                (None, Some(n)) if n.starts_with("AV") => Note::Reg(n, false),
                _ => Note::None,
            }
        }
        Operand::Vgpr(_) => reg(a.vgpr),
        Operand::Sgpr(_) | Operand::Ttmp(_) => reg(a.sgpr),
        Operand::Special(sr) if !sr.name().starts_with("src_") && sr != SpecialReg::Null => reg(a.sgpr),
        Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_) if a.imm => Note::Imm,
        _ => Note::None,
    }
}

/// Scalar operands whose register class excludes some named registers, which LLVM
/// decodes anyway and then annotates: `src_lds_direct` in a 32-bit SOP source or
/// buffer soffset (`SReg_32`), named registers in a 128-bit resource/base (`SReg_128`),
/// and `m0`/`exec` as an SMEM data register (`SReg_32_XM0_XEXEC`, `SReg_64_XEXEC`).
fn scalar_class_note(inst: &Inst, field: Field, op: Operand) -> Option<Note> {
    let Operand::Special(sr) = op else { return None };
    let width = inst.entry().ops.iter().find_map(|s| match s {
        OpSpec::Field(f, w, _, _) if *f == field => Some(*w),
        _ => None,
    })?;
    let name = match (inst.encoding(), field, width) {
        (Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc, Field::Ssrc0 | Field::Ssrc1, 1)
        | (Encoding::Mubuf | Encoding::Mtbuf, Field::Soffset, 1)
            if sr == SpecialReg::SrcLdsDirect =>
        {
            "SReg_32"
        }
        (Encoding::Smem, Field::Sbase, 4) | (Encoding::Mubuf | Encoding::Mtbuf, Field::Srsrc, 4) | (Encoding::Mimg, Field::Ssamp, 4)
            if !sr.name().starts_with("src_") && sr != SpecialReg::Null =>
        {
            "SReg_128"
        }
        (Encoding::Mimg, Field::Srsrc, 8) if !sr.name().starts_with("src_") && sr != SpecialReg::Null => "SReg_256",
        (Encoding::Smem, Field::Sdata, 4)
            if inst.target() != Target::Gfx950 && !sr.name().starts_with("src_") && sr != SpecialReg::Null =>
        {
            "SReg_128"
        }
        (Encoding::Smem, Field::Sdata, 1) if matches!(sr, SpecialReg::M0 | SpecialReg::ExecLo | SpecialReg::ExecHi) => {
            "SReg_32_XM0_XEXEC"
        }
        (Encoding::Smem, Field::Sdata, 2) if sr == SpecialReg::Exec => "SReg_64_XEXEC",
        _ => return None,
    };
    Some(Note::Reg(name, false))
}

/// gfx950 (LLVM 22) FLAT/GLOBAL/SCRATCH atomics with a misaligned register tuple: the
/// data operand is `AV_*_Align2` in the non-returning form and `VReg_*_Align2` in the
/// returning one (glc/sc0 set), as is the returned value; AGPR tuples of the returning
/// form carry no note.
fn atomic_data_note(inst: &Inst, field: Field, op: Operand) -> Option<Note> {
    let e = inst.entry();
    if inst.target() != Target::Gfx950
        || e.flags & crate::tables::Entry::GLC_RETURNS == 0
        || !matches!(inst.encoding(), Encoding::Flat | Encoding::Global | Encoding::Scratch)
        || !matches!(field, Field::Data | Field::Vdst)
    {
        return None;
    }
    let (r, agpr) = match op {
        Operand::Vgpr(r) => (r, false),
        Operand::Agpr(r) => (r, true),
        _ => return None,
    };
    if r.count < 2 || r.first % 2 == 0 {
        return None;
    }
    let returning = inst.raw(Field::Glc) != 0;
    let name = match (r.count, returning, agpr) {
        (2, false, _) => "AV_64_Align2",
        (4, false, _) => "AV_128_Align2",
        (2, true, false) => "VReg_64_Align2",
        (4, true, false) => "VReg_128_Align2",
        // AGPR tuples of the returning form decode without a note.
        _ => return None,
    };
    Some(Note::Reg(name, false))
}

/// gfx950 (LLVM 22) alignment and address classes: a misaligned 64-bit VGPR operand of
/// a DP ALU DPP instruction, or address of GLOBAL (no saddr) or of MUBUF (idxen and
/// offen; not MTBUF), is `VReg_64_Align2`, and `exec` as a GLOBAL saddr is outside
/// `SReg_64_XEXEC_XNULL`.
fn address_note(inst: &Inst, field: Field, op: Operand) -> Option<Note> {
    if inst.target() != Target::Gfx950 {
        return None;
    }
    if inst.entry().kind == Kind::DpAlu {
        // 64-bit DPP operands (LLVM 22 checks their alignment too).
        return match op {
            Operand::Vgpr(r) if r.count == 2 && r.first % 2 == 1 => Some(Note::Reg("VReg_64_Align2", false)),
            _ => None,
        };
    }
    match (inst.encoding(), field, op) {
        (Encoding::Global, Field::Addr, Operand::Vgpr(r)) | (Encoding::Mubuf, Field::Vaddr, Operand::Vgpr(r))
            if r.count == 2 && r.first % 2 == 1 =>
        {
            Some(Note::Reg("VReg_64_Align2", false))
        }
        (Encoding::Global, Field::Saddr, Operand::Special(SpecialReg::Exec)) => Some(Note::Reg("SReg_64_XEXEC_XNULL", false)),
        _ => None,
    }
}

/// Source index of a DPP/SDWA source field (src0 or vsrc1).
fn dpp_src(field: Option<Field>) -> Option<u32> {
    match field {
        Some(Field::Src0) => Some(0),
        Some(Field::Vsrc1) => Some(1),
        _ => None,
    }
}

const SDWA_SEL: [&str; 8] = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "SEL_7"];
const SDWA_UNUSED: [&str; 4] = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_3"];

fn write_dpp_ctrl(out: &mut impl fmt::Write, ctrl: u32) -> fmt::Result {
    match ctrl {
        0x000..=0x0ff => write!(out, " quad_perm:[{},{},{},{}]", ctrl & 3, ctrl >> 2 & 3, ctrl >> 4 & 3, ctrl >> 6 & 3),
        0x101..=0x10f => write!(out, " row_shl:{}", ctrl & 0xf),
        0x111..=0x11f => write!(out, " row_shr:{}", ctrl & 0xf),
        0x121..=0x12f => write!(out, " row_ror:{}", ctrl & 0xf),
        0x130 => out.write_str(" wave_shl:1"),
        0x134 => out.write_str(" wave_rol:1"),
        0x138 => out.write_str(" wave_shr:1"),
        0x13c => out.write_str(" wave_ror:1"),
        0x140 => out.write_str(" row_mirror"),
        0x141 => out.write_str(" row_half_mirror"),
        0x142 => out.write_str(" row_bcast:15"),
        0x143 => out.write_str(" row_bcast:31"),
        _ => out.write_str(" /* Invalid dpp_ctrl value */"),
    }
}

fn write_bits(out: &mut impl fmt::Write, name: &str, bits: u8, n: usize) -> fmt::Result {
    write!(out, " {name}:[")?;
    for i in 0..n {
        if i > 0 {
            out.write_char(',')?;
        }
        write!(out, "{}", bits >> i & 1)?;
    }
    out.write_char(']')
}

fn write_modifiers(out: &mut impl fmt::Write, inst: &Inst, n_src: usize) -> fmt::Result {
    let e = inst.entry();
    let m = inst.modifiers();
    let g940 = inst.gfx940();
    match inst.encoding() {
        Encoding::Vop3 if e.kind == Kind::PermlaneSwap => {
            if m.op_sel & 2 != 0 {
                out.write_str(" bound_ctrl:1")?;
            }
            if m.op_sel & 1 != 0 {
                out.write_str(" fi:1")?;
            }
        }
        Encoding::Vop3 => {
            if e.kind == Kind::Bitop3 {
                // Truth table: neg (w1 31:29) is bits 2:0, abs (w0 10:8) bits 5:3,
                // omod (w1 28:27) bits 7:6.
                let table = (m.neg & 7) | (m.abs & 7) << 3 | (m.omod & 3) << 6;
                if table != 0 {
                    write!(out, " bitop3:0x{table:x}")?;
                }
            }
            if e.has(Field::Opsel) && m.op_sel & e.opsel_mask != 0 {
                if e.opsel_mask == 0xf && n_src == 2 {
                    // Two printed sources plus a tied `vdst_in` (v_cvt_sr_*, the packed
                    // fp4 conversions): LLVM prints all four bits, src2's included.
                    write_bits(out, "op_sel", m.op_sel, 4)?;
                } else {
                    let bits = (m.op_sel & ((1 << n_src) - 1)) | ((m.op_sel >> 3 & 1) << n_src);
                    write_bits(out, "op_sel", bits, n_src + 1)?;
                }
            }
            if e.has(Field::Clamp) && m.clamp {
                out.write_str(" clamp")?;
            }
            if e.has(Field::Omod) && e.kind != Kind::Bitop3 {
                match m.omod {
                    1 => out.write_str(" mul:2")?,
                    2 => out.write_str(" mul:4")?,
                    3 => out.write_str(" div:2")?,
                    _ => {}
                }
            }
        }
        Encoding::Vop3p if matches!(e.kind, Kind::Mai | Kind::MaiNeg) => {
            if m.cbsz != 0 {
                write!(out, " cbsz:{}", m.cbsz)?;
            }
            if m.abid != 0 {
                write!(out, " abid:{}", m.abid)?;
            }
            if e.kind == Kind::MaiNeg {
                if m.neg != 0 {
                    write_bits(out, "neg", m.neg, 3)?;
                }
            } else if m.blgp != 0 {
                write!(out, " blgp:{}", m.blgp)?;
            }
        }
        Encoding::Vop3p => {
            let all = (1u8 << n_src) - 1;
            if e.has(Field::Opsel) && m.op_sel & all != 0 {
                write_bits(out, "op_sel", m.op_sel, n_src)?;
            }
            let hi = m.op_sel_hi & all;
            let default_hi = if e.flags & crate::tables::Entry::PACKED_HI != 0 { all } else { 0 };
            if (e.has(Field::OpselHi) || e.has(Field::OpselHi2)) && hi != default_hi {
                write_bits(out, "op_sel_hi", hi, n_src)?;
            }
            if e.kind != Kind::Mix {
                if e.has(Field::NegLo) && m.neg & all != 0 {
                    write_bits(out, "neg_lo", m.neg, n_src)?;
                }
                if e.has(Field::NegHi) && m.neg_hi & all != 0 {
                    write_bits(out, "neg_hi", m.neg_hi, n_src)?;
                }
            }
            if e.has(Field::Clamp) && m.clamp {
                out.write_str(" clamp")?;
            }
        }
        Encoding::Ds => {
            if e.has(Field::Offset1) && !e.has(Field::Offset0) || is_ds2(inst) {
                if m.offset != 0 {
                    write!(out, " offset0:{}", m.offset)?;
                }
                if m.offset1 != 0 {
                    write!(out, " offset1:{}", m.offset1)?;
                }
            } else {
                let off = m.offset as u32 | (m.offset1 as u32) << 8;
                if off != 0 && inst.opcode().mnemonic() == "ds_swizzle_b32" {
                    write_swizzle(out, off)?;
                } else if off != 0 {
                    write!(out, " offset:{off}")?;
                }
            }
            if e.has(Field::Gds) && m.gds {
                out.write_str(" gds")?;
            }
        }
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            if e.has(Field::Offset) && m.offset != 0 {
                write!(out, " offset:{}", m.offset)?;
            }
            write_cpol(out, e.has(Field::Glc) && m.glc, e.has(Field::Slc) && m.slc, e.has(Field::B25) && m.scc, g940)?;
        }
        Encoding::Mubuf | Encoding::Mtbuf => {
            if inst.encoding() == Encoding::Mtbuf {
                write_format(out, m.dfmt, m.nfmt)?;
            }
            if e.has(Field::Idxen) && m.idxen {
                out.write_str(" idxen")?;
            }
            if e.has(Field::Offen) && m.offen {
                out.write_str(" offen")?;
            }
            if e.has(Field::Offset) && m.offset != 0 {
                write!(out, " offset:{}", m.offset)?;
            }
            let mtbuf = inst.encoding() == Encoding::Mtbuf;
            let lds = inst.encoding() == Encoding::Mubuf && m.lds && e.flags & crate::tables::Entry::LDS_FORM != 0;
            // `buffer_store_lds_dword` prints its (always set) lds bit before the cache
            // policy, as LLVM's syntax for it has `lds` fixed in the operand string.
            let lds_first = lds && e.opcode == crate::decode::Opcode::BufferStoreLdsDword;
            if lds_first {
                out.write_str(" lds")?;
            }
            write_cpol(out, e.has(Field::Glc) && m.glc, e.has(Field::Slc) && m.slc, (mtbuf || e.has(Field::B15)) && m.scc, g940)?;
            if lds && !lds_first {
                out.write_str(" lds")?;
            }
        }
        Encoding::Mimg => {
            if m.dmask != 0 {
                write!(out, " dmask:0x{:x}", m.dmask)?;
            }
            if m.unorm {
                out.write_str(" unorm")?;
            }
            write_cpol(out, m.glc, m.slc, m.scc, g940)?;
            for (on, name) in [(m.a16, " a16"), (m.lwe, " lwe"), (m.da, " da"), (m.d16 && e.has(Field::D16), " d16")] {
                if on {
                    out.write_str(name)?;
                }
            }
        }
        Encoding::Smem if e.has(Field::Glc) && m.glc => out.write_str(" glc")?,
        Encoding::Vop1Dpp | Encoding::Vop2Dpp | Encoding::VopcDpp => {
            let w1 = inst.words()[1];
            let ctrl = w1 >> 8 & 0x1ff;
            if e.kind == Kind::DpAlu {
                if (0x150..=0x15f).contains(&ctrl) {
                    write!(out, " row_newbcast:{}", ctrl & 0xf)?;
                } else {
                    out.write_str("  /* DP ALU dpp only supports row_newbcast */")?;
                }
            } else {
                write_dpp_ctrl(out, ctrl)?;
            }
            write!(out, " row_mask:0x{:x} bank_mask:0x{:x}", w1 >> 28, w1 >> 24 & 0xf)?;
            if e.w1_mods >> 19 & 1 != 0 && w1 >> 19 & 1 != 0 {
                out.write_str(" bound_ctrl:1")?;
            }
            if e.w1_mods >> 18 & 1 != 0 && w1 >> 18 & 1 != 0 {
                out.write_str(" fi:1")?;
            }
        }
        Encoding::Vop1Sdwa | Encoding::Vop2Sdwa | Encoding::VopcSdwa => {
            let w1 = inst.words()[1];
            let pm = e.w1_mods;
            if pm >> 13 & 1 != 0 && w1 >> 13 & 1 != 0 {
                out.write_str(" clamp")?;
            }
            if inst.encoding() != Encoding::VopcSdwa && pm >> 14 & 3 != 0 {
                match w1 >> 14 & 3 {
                    1 => out.write_str(" mul:2")?,
                    2 => out.write_str(" mul:4")?,
                    3 => out.write_str(" div:2")?,
                    _ => {}
                }
            }
            if inst.encoding() != Encoding::VopcSdwa && pm >> 8 & 0x1f != 0 {
                write!(out, " dst_sel:{} dst_unused:{}", SDWA_SEL[(w1 >> 8 & 7) as usize], SDWA_UNUSED[(w1 >> 11 & 3) as usize])?;
            }
            if pm >> 16 & 7 != 0 {
                write!(out, " src0_sel:{}", SDWA_SEL[(w1 >> 16 & 7) as usize])?;
            }
            if pm >> 24 & 7 != 0 {
                write!(out, " src1_sel:{}", SDWA_SEL[(w1 >> 24 & 7) as usize])?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `offset:swizzle(...)` of `ds_swizzle_b32` (quad-permute or bit-mask mode).
fn write_swizzle(out: &mut impl fmt::Write, off: u32) -> fmt::Result {
    if off & 0x8000 != 0 {
        if off & 0x7f00 != 0 {
            return write!(out, " offset:{off}");
        }
        return write!(out, " offset:swizzle(QUAD_PERM,{},{},{},{})", off & 3, off >> 2 & 3, off >> 4 & 3, off >> 6 & 3);
    }
    let and = off & 0x1f;
    let or = off >> 5 & 0x1f;
    let xor = off >> 10 & 0x1f;
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        return write!(out, " offset:swizzle(SWAP,{xor})");
    }
    if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        return write!(out, " offset:swizzle(REVERSE,{})", xor + 1);
    }
    let group = 0x1f - and + 1;
    if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
        return write!(out, " offset:swizzle(BROADCAST,{group},{or})");
    }
    out.write_str(" offset:swizzle(BITMASK_PERM,\"")?;
    for i in (0..5).rev() {
        let (a, o, x) = (and >> i & 1, or >> i & 1, xor >> i & 1);
        let c = match (a, o, x) {
            (1, 0, 0) => 'p',
            (1, 0, 1) => 'i',
            (_, o, x) => if o ^ x == 1 { '1' } else { '0' },
        };
        out.write_char(c)?;
    }
    out.write_str("\")")
}

fn is_ds2(inst: &Inst) -> bool {
    let mn = inst.opcode().mnemonic();
    mn.starts_with("ds_read2") || mn.starts_with("ds_write2") || mn.starts_with("ds_wrxchg2")
}

fn write_cpol(out: &mut impl fmt::Write, glc: bool, slc: bool, scc: bool, g940: bool) -> fmt::Result {
    let names = if g940 { ["sc0", "nt", "sc1"] } else { ["glc", "slc", "scc"] };
    for (on, name) in [(glc, names[0]), (slc, names[1]), (scc, names[2])] {
        if on {
            out.write_char(' ')?;
            out.write_str(name)?;
        }
    }
    Ok(())
}

const DATA_FORMATS: [&str; 16] = [
    "INVALID", "8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10", "10_10_10_2", "2_10_10_10",
    "8_8_8_8", "32_32", "16_16_16_16", "32_32_32", "32_32_32_32", "RESERVED_15",
];
const NUM_FORMATS: [&str; 8] = ["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT"];

fn write_format(out: &mut impl fmt::Write, dfmt: u8, nfmt: u8) -> fmt::Result {
    // dfmt 1 (BUF_DATA_FORMAT_8) and nfmt 0 (UNORM) are the defaults and are not printed.
    match (dfmt, nfmt) {
        (1, 0) => Ok(()),
        (1, n) => write!(out, " format:[BUF_NUM_FORMAT_{}]", NUM_FORMATS[n as usize & 7]),
        (d, 0) => write!(out, " format:[BUF_DATA_FORMAT_{}]", DATA_FORMATS[d as usize & 15]),
        (d, n) => write!(
            out,
            " format:[BUF_DATA_FORMAT_{},BUF_NUM_FORMAT_{}]",
            DATA_FORMATS[d as usize & 15],
            NUM_FORMATS[n as usize & 7]
        ),
    }
}

fn write_simm16(out: &mut impl fmt::Write, inst: &Inst, kind: Kind, v: u32) -> fmt::Result {
    let t = target_bit(inst.target());
    match kind {
        Kind::Label => write!(out, "{v}"),
        Kind::Dec => write!(out, "{v}"),
        Kind::Waitcnt => {
            let vm = (v & 0xf) | ((v >> 14) & 3) << 4;
            let exp = (v >> 4) & 7;
            let lgkm = (v >> 8) & 0xf;
            let all_max = vm == 63 && exp == 7 && lgkm == 15;
            let mut sep = "";
            if vm != 63 || all_max {
                write!(out, "vmcnt({vm})")?;
                sep = " ";
            }
            if exp != 7 || all_max {
                write!(out, "{sep}expcnt({exp})")?;
                sep = " ";
            }
            if lgkm != 15 || all_max {
                write!(out, "{sep}lgkmcnt({lgkm})")?;
            }
            Ok(())
        }
        Kind::Hwreg => {
            let id = v & 0x3f;
            let offset = (v >> 6) & 0x1f;
            let size = ((v >> 11) & 0x1f) + 1;
            out.write_str("hwreg(")?;
            match HWREG_NAMES.iter().find(|(m, i, _)| m & t != 0 && *i == id) {
                Some((_, _, name)) => out.write_str(name)?,
                None => write!(out, "{id}")?,
            }
            if offset != 0 || size != 32 {
                write!(out, ", {offset}, {size}")?;
            }
            out.write_char(')')
        }
        Kind::Sendmsg => {
            if let Some((_, _, text)) = SENDMSG_NAMES.iter().find(|(m, i, _)| m & t != 0 && *i == v) {
                out.write_str("sendmsg(")?;
                for (i, part) in text.split(',').enumerate() {
                    if i > 0 {
                        out.write_str(", ")?;
                    }
                    out.write_str(part)?;
                }
                return out.write_char(')');
            }
            if v < 1024 {
                write!(out, "sendmsg({}, {}, {})", v & 0xf, (v >> 4) & 7, (v >> 8) & 3)
            } else {
                write!(out, "{v}")
            }
        }
        Kind::GprIdx => {
            if v > 15 {
                return write!(out, "0x{v:x}");
            }
            out.write_str("gpr_idx(")?;
            let mut sep = "";
            for (i, name) in ["SRC0", "SRC1", "SRC2", "DST"].iter().enumerate() {
                if v >> i & 1 != 0 {
                    write!(out, "{sep}{name}")?;
                    sep = ",";
                }
            }
            out.write_char(')')
        }
        _ => {
            if inst.encoding() == Encoding::Sopp && v <= 64 {
                write!(out, "{v}")
            } else {
                write!(out, "0x{v:x}")
            }
        }
    }
}
