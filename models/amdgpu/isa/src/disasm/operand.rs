//! Printing of single operands: registers, inline constants and literals.

use std::fmt;

use crate::decode::{InlineFloat, Operand, RegRange};

/// LLVM's comment after an operand whose value is outside the operand's class.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) enum Note {
    /// No comment.
    #[default]
    None,
    /// `/*Invalid register, operand has 'NAME' register class*/`; `swap` exchanges an
    /// `AReg`/`VReg` prefix (MFMA destinations follow the acc_cd bit).
    Reg(&'static str, bool),
    /// `/*Invalid immediate*/`.
    Imm,
}

fn write_note(out: &mut impl fmt::Write, note: Note) -> fmt::Result {
    match note {
        Note::None => Ok(()),
        Note::Imm => out.write_str("/*Invalid immediate*/"),
        Note::Reg(name, swap) => {
            out.write_str("/*Invalid register, operand has '")?;
            match (swap, name.strip_prefix("AReg"), name.strip_prefix("VReg")) {
                (true, Some(rest), _) => write!(out, "VReg{rest}")?,
                (true, _, Some(rest)) => write!(out, "AReg{rest}")?,
                _ => out.write_str(name)?,
            }
            out.write_str("' register class*/")
        }
    }
}

/// Source modifiers applied around an operand.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct SrcMods {
    /// Class annotation printed after the operand.
    pub(crate) note: Note,
    /// LLVM 22 (gfx950) marks literals that could have been inline constants: `lit(0x5)`.
    pub(crate) lit_marker: bool,
    pub(crate) neg: bool,
    pub(crate) abs: bool,
    pub(crate) sext: bool,
}

fn write_range(out: &mut impl fmt::Write, prefix: &str, r: RegRange) -> fmt::Result {
    if r.count <= 1 {
        write!(out, "{prefix}{}", r.first)
    } else {
        write!(out, "{prefix}[{}:{}]", r.first, r.first as u32 + r.count as u32 - 1)
    }
}

fn inline_float_text(f: InlineFloat, width: u8) -> &'static str {
    match f {
        InlineFloat::Half => "0.5",
        InlineFloat::NegHalf => "-0.5",
        InlineFloat::One => "1.0",
        InlineFloat::NegOne => "-1.0",
        InlineFloat::Two => "2.0",
        InlineFloat::NegTwo => "-2.0",
        InlineFloat::Four => "4.0",
        InlineFloat::NegFour => "-4.0",
        InlineFloat::InvTwoPi => {
            if width >= 2 {
                "0.15915494309189532"
            } else {
                "0.15915494"
            }
        }
    }
}

/// Bit patterns of the inline float constants: f16, f32, high half of f64.
const FLOAT_PATTERNS: [(u16, u32, u32, InlineFloat); 9] = [
    (0x3800, 0x3f00_0000, 0x3fe0_0000, InlineFloat::Half),
    (0xb800, 0xbf00_0000, 0xbfe0_0000, InlineFloat::NegHalf),
    (0x3c00, 0x3f80_0000, 0x3ff0_0000, InlineFloat::One),
    (0xbc00, 0xbf80_0000, 0xbff0_0000, InlineFloat::NegOne),
    (0x4000, 0x4000_0000, 0x4000_0000, InlineFloat::Two),
    (0xc000, 0xc000_0000, 0xc000_0000, InlineFloat::NegTwo),
    (0x4400, 0x4080_0000, 0x4010_0000, InlineFloat::Four),
    (0xc400, 0xc080_0000, 0xc010_0000, InlineFloat::NegFour),
    (0x3118, 0x3e22_f983, 0xffff_ffff, InlineFloat::InvTwoPi),
];

fn write_literal(out: &mut impl fmt::Write, lit: u32, width: u8, lit16: bool, marker: bool) -> fmt::Result {
    if marker {
        let v = if lit16 { lit & 0xffff } else { lit };
        let inline = if lit16 {
            (-16..=64).contains(&(v as u16 as i16)) || FLOAT_PATTERNS.iter().any(|p| p.0 as u32 == v)
        } else {
            (-16..=64).contains(&(v as i32))
                || FLOAT_PATTERNS.iter().any(|p| if width >= 2 { p.2 == v } else { p.1 == v })
        };
        if inline {
            return write!(out, "lit(0x{v:x})");
        }
    }
    if lit16 {
        let v = lit & 0xffff;
        let s = v as u16 as i16;
        if (-16..=64).contains(&s) {
            return write!(out, "{s}");
        }
        if let Some(p) = FLOAT_PATTERNS.iter().find(|p| p.0 as u32 == v) {
            return out.write_str(inline_float_text(p.3, 1));
        }
        return write!(out, "0x{v:x}");
    }
    let s = lit as i32;
    if (-16..=64).contains(&s) {
        return write!(out, "{s}");
    }
    let hit = if width >= 2 {
        FLOAT_PATTERNS.iter().find(|p| p.2 == lit)
    } else {
        FLOAT_PATTERNS.iter().find(|p| p.1 == lit)
    };
    match hit {
        Some(p) => out.write_str(inline_float_text(p.3, width)),
        None => write!(out, "0x{lit:x}"),
    }
}

/// Writes `op` (of `width` dwords) with source modifiers.
pub(crate) fn write_operand(out: &mut impl fmt::Write, op: Operand, width: u8, lit16: bool, m: SrcMods) -> fmt::Result {
    let is_imm = matches!(op, Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_));
    let neg_mnemo = m.neg && !m.abs && is_imm;
    if m.neg {
        out.write_str(if neg_mnemo { "neg(" } else { "-" })?;
    }
    if m.abs {
        out.write_char('|')?;
    }
    if m.sext {
        out.write_str("sext(")?;
    }
    match op {
        Operand::Sgpr(r) => write_range(out, "s", r)?,
        Operand::Vgpr(r) => write_range(out, "v", r)?,
        Operand::Agpr(r) => write_range(out, "a", r)?,
        Operand::Ttmp(r) => write_range(out, "ttmp", r)?,
        Operand::Special(s) => out.write_str(s.name())?,
        Operand::InlineInt(i) => write!(out, "{i}")?,
        // A constant where a register belongs (annotated as an invalid immediate) prints
        // 1/(2*pi) in its 32-bit form whatever the operand width.
        Operand::InlineFloat(f) => out.write_str(inline_float_text(f, if matches!(m.note, Note::Imm) { 1 } else { width }))?,
        Operand::Literal(l) => write_literal(out, l, width, lit16, m.lit_marker)?,
        Operand::Imm(v) => write!(out, "{v}")?,
        Operand::Off => out.write_str("off")?,
        Operand::Fixed(t) => out.write_str(t)?,
        Operand::Reserved(v) => write!(out, "/*invalid src {v}*/")?,
    }
    write_note(out, m.note)?;
    if m.sext {
        out.write_char(')')?;
    }
    if m.abs {
        out.write_char('|')?;
    }
    if neg_mnemo {
        out.write_char(')')?;
    }
    Ok(())
}
