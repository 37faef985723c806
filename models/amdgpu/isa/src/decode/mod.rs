//! Table-driven decoder: 32-bit words in, a compact [`Inst`] out.
//!
//! The first word's top nine bits pick a route (family slice offset, opcode field) that
//! turns the word into a key of one flat per-target index without branching on the
//! family; the index names a compact hot entry (must-be bits, literal rules, family),
//! built at compile time from the tables generated from `data/isa.txt` (see `lookup`).
//! The must-be mask rejects words LLVM does not accept.
//!
//! **Hot-path rule:** the size of the result is decided by branches (on the first word
//! and on the entry's rules), never computed from a loaded table value, so that a caller
//! walking a stream starts on the next word without waiting for this word's table
//! loads. Invalid words recompute their family off the hot path.
//!
//! **Architecture Invariant:** [`decode`] never panics and never allocates: unknown or
//! truncated words come back as [`Decoded::Invalid`] / [`Decoded::Truncated`] values.
//!
//! ```
//! use amdgpu_isa::decode::{decode, Decoded, Encoding, Opcode, Operand, RegRange};
//! use amdgpu_isa::{disasm::inst_text, Target};
//!
//! // global_load_dwordx2 v[4:5], v[2:3], off
//! let Decoded::Inst(inst) = decode(Target::Gfx942, &[0xDC548000, 0x047F0002]) else { unreachable!() };
//! assert_eq!(inst.encoding(), Encoding::Global);
//! assert_eq!(inst.opcode(), Opcode::GlobalLoadDwordx2);
//! assert_eq!(inst.size_bytes(), 8);
//! assert_eq!(inst.operands().as_slice()[0], Operand::Vgpr(RegRange { first: 4, count: 2 }));
//! assert_eq!(inst_text(&inst), "global_load_dwordx2 v[4:5], v[2:3], off");
//! ```

mod fields;
mod lookup;
mod operand;

pub use operand::{InlineFloat, Modifiers, Operand, RegRange, SpecialReg};

use crate::tables::{Entry, ENTRIES};
use crate::Target;
pub use crate::tables::{Field, Opcode};

/// `(word index, low bit, width)` of `field` in `encoding`'s layout (word 2 is the
/// trailing literal); `None` when the family has no such field.
pub(crate) const fn field_position(encoding: Encoding, field: Field) -> Option<(u8, u8, u8)> {
    fields::position(encoding, field)
}

/// Encoding family of an instruction (how its bits are laid out).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Encoding {
    /// Scalar ALU, two sources.
    Sop2,
    /// Scalar ALU with a 16-bit immediate.
    Sopk,
    /// Scalar ALU, one source.
    Sop1,
    /// Scalar compare.
    Sopc,
    /// Scalar program control (branches, waits, ...).
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU, two sources (32-bit form).
    Vop2,
    /// Vector ALU, one source (32-bit form).
    Vop1,
    /// Vector compare (32-bit form).
    Vopc,
    /// Vector ALU, 64-bit form (VOP3A/VOP3B).
    Vop3,
    /// Packed vector ALU and matrix (MAI/MFMA, SMFMAC) instructions.
    Vop3p,
    /// Local/global data share.
    Ds,
    /// Flat memory.
    Flat,
    /// Scratch (private) memory.
    Scratch,
    /// Global memory.
    Global,
    /// Untyped buffer memory.
    Mubuf,
    /// Typed buffer memory.
    Mtbuf,
    /// VOP1 with a DPP control word (src0 = 0xfa).
    Vop1Dpp,
    /// VOP2 with a DPP control word.
    Vop2Dpp,
    /// VOPC with a DPP control word.
    VopcDpp,
    /// VOP1 with an SDWA control word (src0 = 0xf9).
    Vop1Sdwa,
    /// VOP2 with an SDWA control word.
    Vop2Sdwa,
    /// VOPC with an SDWA control word.
    VopcSdwa,
    /// Image memory (gfx90a only: gfx942 and gfx950 have no image instructions).
    Mimg,
    /// No encoding family of these targets starts with these bits.
    Unknown,
}

impl Encoding {
    /// Family name as in AMD's documentation (`VOP3P`, `SMEM`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Sop2 => "SOP2",
            Encoding::Sopk => "SOPK",
            Encoding::Sop1 => "SOP1",
            Encoding::Sopc => "SOPC",
            Encoding::Sopp => "SOPP",
            Encoding::Smem => "SMEM",
            Encoding::Vop2 => "VOP2",
            Encoding::Vop1 => "VOP1",
            Encoding::Vopc => "VOPC",
            Encoding::Vop3 => "VOP3",
            Encoding::Vop3p => "VOP3P",
            Encoding::Ds => "DS",
            Encoding::Flat => "FLAT",
            Encoding::Scratch => "SCRATCH",
            Encoding::Global => "GLOBAL",
            Encoding::Mubuf => "MUBUF",
            Encoding::Mtbuf => "MTBUF",
            Encoding::Vop1Dpp => "VOP1_DPP",
            Encoding::Vop2Dpp => "VOP2_DPP",
            Encoding::VopcDpp => "VOPC_DPP",
            Encoding::Vop1Sdwa => "VOP1_SDWA",
            Encoding::Vop2Sdwa => "VOP2_SDWA",
            Encoding::VopcSdwa => "VOPC_SDWA",
            Encoding::Mimg => "MIMG",
            Encoding::Unknown => "UNKNOWN",
        }
    }

    /// Size in 32-bit words without a trailing literal.
    pub const fn base_words(self) -> usize {
        match self {
            Encoding::Sop2 | Encoding::Sopk | Encoding::Sop1 | Encoding::Sopc | Encoding::Sopp => 1,
            Encoding::Vop2 | Encoding::Vop1 | Encoding::Vopc | Encoding::Unknown => 1,
            _ => 2,
        }
    }

    /// The family of a first instruction word, and its opcode field.
    #[inline(always)]
    pub const fn classify(w0: u32) -> (Encoding, u32) {
        if w0 >> 31 == 0 {
            let op = (w0 >> 25) & 0x3f;
            return match op {
                0x3f => (Encoding::Vop1, (w0 >> 9) & 0xff),
                0x3e => (Encoding::Vopc, (w0 >> 17) & 0xff),
                _ => (Encoding::Vop2, op),
            };
        }
        if w0 >> 30 == 0b10 {
            if w0 >> 28 != 0b1011 {
                return (Encoding::Sop2, (w0 >> 23) & 0x7f);
            }
            return match w0 >> 23 {
                0x17d => (Encoding::Sop1, (w0 >> 8) & 0xff),
                0x17e => (Encoding::Sopc, (w0 >> 16) & 0x7f),
                0x17f => (Encoding::Sopp, (w0 >> 16) & 0x7f),
                _ => (Encoding::Sopk, (w0 >> 23) & 0x1f),
            };
        }
        match w0 >> 26 {
            0b110000 => (Encoding::Smem, (w0 >> 18) & 0xff),
            0b110100 => {
                if w0 >> 23 == 0x1a7 {
                    (Encoding::Vop3p, (w0 >> 16) & 0x7f)
                } else {
                    (Encoding::Vop3, (w0 >> 16) & 0x3ff)
                }
            }
            0b110110 => (Encoding::Ds, (w0 >> 17) & 0xff),
            0b110111 => match (w0 >> 14) & 3 {
                0 => (Encoding::Flat, (w0 >> 18) & 0x7f),
                1 => (Encoding::Scratch, (w0 >> 18) & 0x7f),
                2 => (Encoding::Global, (w0 >> 18) & 0x7f),
                _ => (Encoding::Unknown, 0),
            },
            0b111000 => (Encoding::Mubuf, (w0 >> 18) & 0x7f),
            0b111010 => (Encoding::Mtbuf, (w0 >> 15) & 0xf),
            // Opcode bits 6:0; bit 7 (w0 bit 0) names no instruction on these targets and
            // is a must-be-zero bit of every entry.
            0b111100 => (Encoding::Mimg, (w0 >> 18) & 0x7f),
            _ => (Encoding::Unknown, 0),
        }
    }
}

/// A decoded instruction: the raw words plus the table entry that interprets them.
///
/// 20 bytes, `Copy`, no heap. Operands and modifiers are read lazily from the words
/// ([`Inst::operands`], [`Inst::field`], [`Inst::modifiers`]) so that an executor pays
/// only for the fields its handler uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    opcode: Opcode,
    entry: u16,
    encoding: Encoding,
    size_words: u8,
    target: Target,
    words: [u32; 3],
}

/// Result of decoding one instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A valid instruction.
    Inst(Inst),
    /// No instruction of `encoding` on this target matches `word` (the first word).
    Invalid {
        /// Encoding family named by the word's top bits.
        encoding: Encoding,
        /// The first word of the rejected instruction.
        word: u32,
    },
    /// The instruction needs more words than were given.
    Truncated {
        /// Encoding family of the first word.
        encoding: Encoding,
        /// The first word.
        word: u32,
    },
}

impl Decoded {
    /// Size in bytes this result covers: the instruction's size, or 4 for invalid and
    /// truncated words (what llvm-objdump skips).
    pub fn size_bytes(&self) -> usize {
        match self {
            Decoded::Inst(i) => i.size_bytes(),
            _ => 4,
        }
    }
}

/// Decodes a value of the 9-bit source-operand space (SGPRs, specials, inline
/// constants, `0xff` literal, VGPRs) as an operand of `width` dwords.
pub fn src_operand_pub(value: u32, width: u8, literal: u32) -> Operand {
    operand::src_operand(value, width, literal)
}

/// The family of first word `w0` (DPP/SDWA forms included) and its opcode field.
#[inline(always)]
pub(crate) fn family_of(w0: u32) -> (Encoding, u32) {
    let (mut encoding, op) = Encoding::classify(w0);
    if matches!(encoding, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc) {
        let src0 = w0 & 0x1ff;
        if src0 == 0xfa || src0 == 0xf9 {
            encoding = match (encoding, src0 == 0xfa) {
                (Encoding::Vop1, true) => Encoding::Vop1Dpp,
                (Encoding::Vop2, true) => Encoding::Vop2Dpp,
                (Encoding::Vopc, true) => Encoding::VopcDpp,
                (Encoding::Vop1, false) => Encoding::Vop1Sdwa,
                (Encoding::Vop2, false) => Encoding::Vop2Sdwa,
                _ => Encoding::VopcSdwa,
            };
        }
    }
    (encoding, op)
}

/// The family of a rejected first word (off the hot path: valid words take their
/// family from the table entry).
#[cold]
#[inline(never)]
fn rejected_family(w0: u32) -> Encoding {
    family_of(w0).0
}

/// The `Invalid` result for first word `w0`. Built inline so that callers see which
/// variant they got without reading it back from memory.
#[inline(always)]
fn invalid(w0: u32) -> Decoded {
    Decoded::Invalid { encoding: rejected_family(w0), word: w0 }
}

/// The `Truncated` result for first word `w0`.
#[inline(always)]
fn truncated(w0: u32) -> Decoded {
    Decoded::Truncated { encoding: rejected_family(w0), word: w0 }
}

/// Decodes the instruction at the start of `words` for `target`.
///
/// The size of the result is decided by branches on the first word and on the entry's
/// rules, never computed from a loaded table value: a caller walking a stream then
/// starts on the next word without waiting for this word's table loads.
#[inline(always)]
pub fn decode(target: Target, words: &[u32]) -> Decoded {
    let Some(&w0) = words.first() else {
        return Decoded::Truncated { encoding: Encoding::Unknown, word: 0 };
    };
    // Two base words: the 64-bit families (top bits `11`) and the VOP DPP/SDWA forms,
    // whose key depends on the form. One-word instructions have the plain key.
    let plain = lookup::key_plain(w0);
    if w0 >= 0xc000_0000 || lookup::is_vop_dpp_or_sdwa(w0) {
        let key = if w0 >> 31 == 0 { lookup::key(w0) } else { plain };
        decode_sized::<2>(target, words, w0, lookup::hot_slot(target, key))
    } else {
        decode_sized::<1>(target, words, w0, lookup::hot_slot(target, plain))
    }
}

/// [`decode`] for an instruction of `BASE` base words whose first word `w0` has HOT
/// slot `slot`.
#[inline(always)]
fn decode_sized<const BASE: usize>(target: Target, words: &[u32], w0: u32, slot: usize) -> Decoded {
    // Invariant: `hot_slot` returns 0 or an INDEX value, and INDEX values are entry
    // indices + 1 < HOT.len().
    let h = &lookup::HOT[slot];
    debug_assert!(slot == 0 || BASE == h.base_words as usize);
    let w1 = if BASE == 2 {
        match words.get(1) {
            Some(&w1) => w1,
            None if slot == 0 => return invalid(w0),
            None => return truncated(w0),
        }
    } else {
        0
    };
    // One-word entries check the first word alone (asserted where HOT is built).
    if w0 & h.must[0] != h.must[1] || (BASE == 2 && w1 & h.must[2] != h.must[3]) {
        return invalid(w0);
    }
    if h.n_wide != 0 {
        let w = (w1 as u64) << 32 | w0 as u64;
        let [a, b, c, d] = &h.wide;
        let t = target;
        // Unused checks never reject: fewer operands skip the rest.
        let rejected = match h.n_wide {
            1 => a.rejects(t, w),
            2 => a.rejects(t, w) | b.rejects(t, w),
            3 => a.rejects(t, w) | b.rejects(t, w) | c.rejects(t, w),
            _ => a.rejects(t, w) | b.rejects(t, w) | c.rejects(t, w) | d.rejects(t, w),
        };
        if rejected {
            return invalid(w0);
        }
    }
    use lookup::{src_class, SRC_LITERAL, SRC_RESERVED};
    let l = h.literal;
    if BASE == 1 && l != 0 {
        // SOP ssrc0/ssrc1 and VOP src0: a reserved value rejects the word, 0xff takes a
        // literal (masks of 0 read `s0`, which is neither).
        let [a, b] = h.lit_src;
        let class = src_class(target, w0 & a as u32, 0) | src_class(target, (w0 >> 8) & b as u32, 0);
        if class & SRC_RESERVED != 0 {
            return invalid(w0);
        }
        if class & SRC_LITERAL != 0 || l & Entry::LIT_FIXED != 0 {
            let Some(&literal) = words.get(1) else { return truncated(w0) };
            return Decoded::Inst(Inst::new(target, h, slot, 2, [w0, literal, 0]));
        }
    } else if BASE == 2 && l != 0 {
        // A literal in a 64-bit VALU encoding is rejected, as is a reserved soffset.
        let bad = (l & Entry::BAD_W1_SRC0 != 0 && src_class(target, w1, 0) != 0)
            || (l & Entry::BAD_W1_SRC1 != 0 && src_class(target, w1, 9) != 0)
            || (l & Entry::BAD_W1_SRC2 != 0 && src_class(target, w1, 18) != 0)
            || (l & Entry::SOFFSET_W1 != 0 && src_class(target, w1, 24) & SRC_RESERVED != 0)
            // A buffer load in its LDS-direct form (lds bit) has no AGPR data (acc bit).
            || (l & Entry::SOFFSET_W1 != 0 && h.flags & Entry::LDS_FORM != 0 && (w0 >> 16) & (w1 >> 23) & 1 != 0);
        if bad {
            return invalid(w0);
        }
    }
    let words = if BASE == 1 { [w0, 0, 0] } else { [w0, w1, 0] };
    Decoded::Inst(Inst::new(target, h, slot, BASE, words))
}

impl Inst {
    /// An instruction of entry `slot - 1` (never the sentinel slot 0).
    #[inline(always)]
    fn new(target: Target, h: &lookup::Hot, slot: usize, size_words: usize, words: [u32; 3]) -> Inst {
        Inst {
            opcode: h.opcode,
            entry: slot.wrapping_sub(1) as u16,
            encoding: h.encoding,
            size_words: size_words as u8,
            target,
            words,
        }
    }
}

/// Decodes from little-endian bytes (as stored in a code object).
pub fn decode_bytes(target: Target, bytes: &[u8]) -> Decoded {
    let mut words = [0u32; 3];
    let n = (bytes.len() / 4).min(3);
    for (i, w) in words.iter_mut().enumerate().take(n) {
        *w = u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    }
    decode(target, &words[..n])
}

impl Inst {
    /// The instruction's opcode.
    pub fn opcode(&self) -> Opcode {
        self.opcode
    }
    /// The encoding family.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
    /// Target this instruction was decoded for.
    pub fn target(&self) -> Target {
        self.target
    }
    /// Size in bytes (4, 8 or 12 with a literal).
    pub fn size_bytes(&self) -> usize {
        self.size_words as usize * 4
    }
    /// The instruction words (without unused trailing words).
    pub fn words(&self) -> &[u32] {
        &self.words[..self.size_words as usize]
    }
    /// The trailing 32-bit literal constant, if the instruction has one.
    pub fn literal(&self) -> Option<u32> {
        let base = self.encoding.base_words();
        (self.size_words as usize > base).then_some(self.words[base])
    }
    pub(crate) fn entry(&self) -> &'static Entry {
        // Invariant: `entry` is a HOT slot - 1 of a matched entry, so it indexes ENTRIES.
        &ENTRIES[self.entry as usize]
    }
    pub(crate) fn raw(&self, f: Field) -> u32 {
        operand::field_raw(self.encoding, f, &self.words)
    }
}
