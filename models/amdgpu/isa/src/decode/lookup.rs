//! Compile-time lookup tables for [`super::decode`]'s hot path, built from the generated
//! per-family tables and entries.
//!
//! A first word becomes a table key without a branch on its encoding family:
//!
//! ```text
//!   w0 >> 23 ──> ROUTES[512] ─┐  (family slice offsets, opcode shift and mask)
//!   w0 & 0x1ff ─ DPP/SDWA? ───┘  (selects the VOP family's DPP or SDWA slice)
//!                             v
//!          INDEX[target][key] ──> HOT[slot]: must-be bits, literal rules, family, size,
//!                                     tuple-operand checks (-> REJECTED tables)
//! ```
//!
//! The tuple-operand checks reproduce which operand values make LLVM reject a word (and
//! so print `.long`): named-register halves, `m0` or `src_lds_direct` in scalar tuples,
//! scalar tuples past s105/ttmp15, and on LLVM 19 VGPR tuples past v255. Each check is a
//! field position plus the offset of a 512-entry table, one per LLVM version.
//!
//! FLAT, SCRATCH and GLOBAL share one slice keyed by w0 bits 24:14 (opcode, two bits that
//! do not choose the instruction, segment), so their segment needs no extra term.
//!
//! One array per target holds every family's opcode slice at `OFFSETS[family]`; slot 0 of
//! [`HOT`] is a sentinel that no word matches, so "no instruction" needs no branch of its
//! own and fails the must-be check instead.
//!
//! **Architecture Invariant:** `slot(t, e, op)` equals `FAMILY_TABLES[t][e][op]` for
//! every family and opcode field value, and 0 for `Encoding::Unknown`; [`key`] agrees
//! with [`super::family_of`] on every first word (checked by the unit tests).

use super::fields::position;
use super::Encoding;
use crate::tables::{Class, Entry, Field, OpSpec, Opcode, ENTRIES, FAMILY_TABLES};
use crate::Target;

/// Size of the all-zero slice after the FLAT slice, where `Encoding::Unknown` looks up.
const SEG_SLICE: usize = 128;

/// Size of the slice FLAT, SCRATCH and GLOBAL share: w0 bits 24:14, that is the 7-bit
/// opcode, bits 17:16 (cache bits, which do not choose the instruction) and the 2-bit
/// segment (3 is no instruction).
const FLAT_SLICE: usize = 1 << 11;

/// The position in the FLAT slice of opcode `op` in segment `seg`, with bits 17:16 `mid`.
const fn flat_position(op: usize, mid: usize, seg: usize) -> usize {
    op << 4 | mid << 2 | seg
}

/// Number of encoding families with opcode tables (all but `Encoding::Unknown`).
const N_FAMILIES: usize = 24;

/// Offsets of each family's slice in a target's flat index, the all-zero slice that
/// follows GLOBAL, and the index length.
const fn layout() -> ([usize; 25], usize, usize) {
    // `Encoding::Unknown` (the 25th) points at the all-zero slice.
    let mut offsets = [0usize; 25];
    let mut at = 0;
    let mut pad = 0;
    let mut f = 0;
    while f < N_FAMILIES {
        if f == Encoding::Scratch as usize || f == Encoding::Global as usize {
            // Inside the FLAT slice (see `flat_position`).
            offsets[f] = offsets[Encoding::Flat as usize];
        } else if f == Encoding::Flat as usize {
            offsets[f] = at;
            at += FLAT_SLICE;
        } else {
            offsets[f] = at;
            at += FAMILY_TABLES[0][f].len();
        }
        if f == Encoding::Global as usize {
            pad = at;
            at += SEG_SLICE;
        }
        f += 1;
    }
    offsets[Encoding::Unknown as usize] = pad;
    (offsets, pad, at)
}

const OFFSETS: [usize; 25] = layout().0;
const INDEX_LEN: usize = layout().2;

/// Per target: family slices laid out by [`layout`]; 0 = no instruction, else entry + 1
/// (a [`HOT`] slot).
static INDEX: [[u16; INDEX_LEN]; 3] = build_index();

const fn build_index() -> [[u16; INDEX_LEN]; 3] {
    let mut out = [[0u16; INDEX_LEN]; 3];
    let mut t = 0;
    while t < 3 {
        let mut f = 0;
        while f < N_FAMILIES {
            let table = FAMILY_TABLES[t][f];
            let flat = f >= Encoding::Flat as usize && f <= Encoding::Global as usize;
            let mut i = 0;
            while i < table.len() {
                if flat {
                    let seg = f - Encoding::Flat as usize;
                    let mut mid = 0;
                    while mid < 4 {
                        out[t][OFFSETS[f] + flat_position(i, mid, seg)] = table[i];
                        mid += 1;
                    }
                } else {
                    out[t][OFFSETS[f] + i] = table[i];
                }
                i += 1;
            }
            f += 1;
        }
        t += 1;
    }
    out
}

/// How the first word's top nine bits turn into a key of [`INDEX`]. Sixteen bytes, so
/// that indexing [`ROUTES`] is one shift.
#[derive(Copy, Clone)]
#[repr(C, align(16))]
struct Route {
    /// Slice offset for the plain form, the DPP form (src0 = 0xfa) and the SDWA form
    /// (src0 = 0xf9); all three equal outside VOP1/VOP2/VOPC. The fourth copies the
    /// plain one, so that any two-bit form indexes the array without a bounds check.
    base: [u16; 4],
    /// Mask of the opcode field after the shift.
    mask: u16,
    /// Low bit of the opcode field.
    shift: u8,
}

const fn opcode_field(encoding: Encoding) -> (u8, u16) {
    use Encoding as E;
    match encoding {
        E::Sop2 => (23, 0x7f),
        E::Sopk => (23, 0x1f),
        E::Sop1 => (8, 0xff),
        E::Sopc | E::Sopp => (16, 0x7f),
        E::Smem => (18, 0xff),
        E::Vop2 => (25, 0x3f),
        E::Vop1 => (9, 0xff),
        E::Vopc => (17, 0xff),
        E::Vop3 => (16, 0x3ff),
        E::Vop3p => (16, 0x7f),
        E::Ds => (17, 0xff),
        E::Flat | E::Scratch | E::Global | E::Mubuf | E::Mimg => (18, 0x7f),
        E::Mtbuf => (15, 0xf),
        _ => (0, 0),
    }
}

static ROUTES: [Route; 512] = build_routes();

const fn build_routes() -> [Route; 512] {
    use Encoding as E;
    let mut out = [Route { base: [0; 4], mask: 0, shift: 0 }; 512];
    let mut hi = 0;
    while hi < 512 {
        // Bits 15:14 = 0 make a FLAT-family word classify as FLAT, whose slice the
        // other segments share.
        let (encoding, _) = Encoding::classify((hi as u32) << 23);
        let (shift, mask) = match encoding {
            E::Flat => (14, (FLAT_SLICE - 1) as u16),
            _ => opcode_field(encoding),
        };
        let plain = OFFSETS[encoding as usize] as u16;
        let (dpp, sdwa) = match encoding {
            E::Vop1 => (E::Vop1Dpp, E::Vop1Sdwa),
            E::Vop2 => (E::Vop2Dpp, E::Vop2Sdwa),
            E::Vopc => (E::VopcDpp, E::VopcSdwa),
            other => (other, other),
        };
        out[hi] = Route {
            base: [plain, OFFSETS[dpp as usize] as u16, OFFSETS[sdwa as usize] as u16, plain],
            mask,
            shift,
        };
        hi += 1;
    }
    out
}

/// [`FORM`] value of src0 = 0xfa (DPP).
pub(super) const FORM_DPP: u8 = 1;
/// [`FORM`] value of src0 = 0xf9 (SDWA).
pub(super) const FORM_SDWA: u8 = 2;

/// Per value of the first word's bits 8:0: which VOP form it marks (0 plain,
/// [`FORM_DPP`], [`FORM_SDWA`]).
static FORM: [u8; 512] = {
    let mut out = [0u8; 512];
    out[0xfa] = FORM_DPP;
    out[0xf9] = FORM_SDWA;
    out
};

/// The VOP form marked by bits 8:0 of `w0` (meaningful in VOP1/VOP2/VOPC only).
#[inline(always)]
pub(super) fn form(w0: u32) -> u8 {
    FORM[(w0 & 0x1ff) as usize]
}

/// The [`INDEX`] key of first word `w0`, computed without branching on its family.
#[inline(always)]
pub(super) fn key(w0: u32) -> usize {
    let r = &ROUTES[(w0 >> 23) as usize];
    let form = form(w0) as usize & 3;
    r.base[form] as usize + ((w0 >> r.shift) & r.mask as u32) as usize
}

/// [`key`] for a first word that is not a VOP1/VOP2/VOPC DPP or SDWA form (see
/// [`is_vop_dpp_or_sdwa`]): the plain slice, without looking up the form.
#[inline(always)]
pub(super) fn key_plain(w0: u32) -> usize {
    let r = &ROUTES[(w0 >> 23) as usize];
    r.base[0] as usize + ((w0 >> r.shift) & r.mask as u32) as usize
}

/// True if `w0` is a VOP1/VOP2/VOPC word whose src0 marks the DPP (0xfa) or SDWA
/// (0xf9) form: the words whose [`key`] is not [`key_plain`].
#[inline(always)]
pub(super) fn is_vop_dpp_or_sdwa(w0: u32) -> bool {
    w0 >> 31 == 0 && (w0 & 0x1ff).wrapping_sub(0xf9) < 2
}

/// [`SRC_CLASS`] bit: a source value that names nothing (209..=234 minus the target's
/// named sources, the DPP/SDWA markers 0xf9/0xfa); LLVM rejects the word.
pub(super) const SRC_RESERVED: u8 = 1;
/// [`SRC_CLASS`] bit: the literal-constant marker 0xff.
pub(super) const SRC_LITERAL: u8 = 2;

/// Per target and 9-bit source value: [`SRC_RESERVED`], [`SRC_LITERAL`] or 0. gfx950
/// names 230 and 231 (`src_flat_scratch_base_lo`/`_hi`).
pub(super) static SRC_CLASS: [[u8; 512]; 3] = {
    let mut out = [[0u8; 512]; 3];
    let mut t = 0;
    while t < 3 {
        let mut v = 0;
        while v < 512 {
            let named = t == Target::Gfx950 as usize && (v == 230 || v == 231);
            out[t][v] = if ((v >= 209 && v <= 234) && !named) || v == 0xf9 || v == 0xfa {
                SRC_RESERVED
            } else if v == 0xff {
                SRC_LITERAL
            } else {
                0
            };
            v += 1;
        }
        t += 1;
    }
    out
};

/// The [`SRC_CLASS`] bits on `target` of the 9-bit source value at bit `shift` of `word`.
#[inline(always)]
pub(super) fn src_class(target: Target, word: u32, shift: u32) -> u8 {
    SRC_CLASS[target as usize][((word >> shift) & 0x1ff) as usize]
}

/// What the hot path needs of an entry: must-be bits, literal rules, family, size and
/// operand-value checks. One 64-byte cache line.
#[derive(Copy, Clone)]
#[repr(C, align(64))]
pub(super) struct Hot {
    /// `[mask0, value0, mask1, value1]`: valid only if `w & mask == value` per word.
    pub(super) must: [u32; 4],
    /// The instruction's opcode.
    pub(super) opcode: Opcode,
    /// `Entry::literal` rules.
    pub(super) literal: u8,
    /// Encoding family of the entry.
    pub(super) encoding: Encoding,
    /// `encoding.base_words()`.
    pub(super) base_words: u8,
    /// Number of used [`Hot::wide`] checks.
    pub(super) n_wide: u8,
    /// `Entry::flags`.
    pub(super) flags: u8,
    /// One-word entries: masks of the source fields at w0 bit 0 and bit 8 whose value
    /// 0xff takes a literal and whose reserved values reject the word (a VOP src0 is 9
    /// bits, an SOP ssrc0/ssrc1 8 bits); 0 for none. A masked-out field reads as value
    /// 0 (`s0`), which is neither reserved nor a literal, so the check needs no branch
    /// on the entry's rules.
    pub(super) lit_src: [u16; 2],
    /// Checks of the entry's tuple operands whose values LLVM may reject (kept in the
    /// entry so that they share its cache line).
    pub(super) wide: [WideCheck; 4],
}

/// One tuple operand (two or more dwords) whose value LLVM may reject: where its field
/// is, and which [`REJECTED`] table judges the raw field value on LLVM 19 (gfx90a,
/// gfx942) and LLVM 22 (gfx950). An unused check has mask 0 and the never-rejecting
/// table.
#[derive(Copy, Clone)]
pub(super) struct WideCheck {
    /// Field mask after the shift.
    mask: u16,
    /// Low bit of the field in the 64-bit `w1:w0`.
    lo: u8,
    /// Offset in [`REJECTED`] of the judging table of LLVM 19 (gfx90a and gfx942) and
    /// of LLVM 22 (gfx950), see [`table_id`] and [`llvm_of`].
    table: [u16; 2],
}

/// Which judging table of a [`WideCheck`] applies to `target`: 0 for LLVM 19 (gfx90a,
/// gfx942), 1 for LLVM 22 (gfx950).
#[inline(always)]
const fn llvm_of(target: Target) -> usize {
    target as usize >> 1
}

const _: () = assert!(llvm_of(Target::Gfx90a) == 0 && llvm_of(Target::Gfx942) == 0 && llvm_of(Target::Gfx950) == 1);

impl WideCheck {
    const NONE: WideCheck = WideCheck { mask: 0, lo: 0, table: [(TABLE_NEVER * 512) as u16; 2] };

    /// True if LLVM rejects the word (`w1:w0`) on `target` because of this operand's
    /// value.
    #[inline(always)]
    pub(super) fn rejects(&self, target: Target, w: u64) -> bool {
        let raw = (w >> self.lo) as usize & self.mask as usize;
        let at = self.table[llvm_of(target)] as usize + raw;
        REJECTED[at & (REJECTED.len() - 1)]
    }
}

/// Tuple widths (dwords) with [`REJECTED`] tables; other widths are not checked.
const WIDTHS: [u8; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 16, 32];

/// Kinds of [`REJECTED`] tables, each in every width of [`WIDTHS`].
const KIND_SCALAR: usize = 0;
const KIND_VALU19: usize = 3;
const KIND_VGPR19: usize = 4;
/// LLVM 22: a 128-bit SMEM base (scale 1) or buffer resource (scale 2) also rejects the
/// named registers (flat_scratch, xnack_mask, vcc, exec).
const TABLE_NAMED128_SCALE1: usize = 5 * WIDTHS.len();
const TABLE_NAMED128_SCALE2: usize = TABLE_NAMED128_SCALE1 + 1;
/// A GLOBAL saddr: as a 64-bit scalar tuple, except that 0x7f means `off`.
const TABLE_SADDR: usize = TABLE_NAMED128_SCALE2 + 1;
/// A table that rejects nothing.
const TABLE_NEVER: usize = TABLE_SADDR + 1;

/// The index of `width` in [`WIDTHS`].
const fn width_class(width: u8) -> Option<usize> {
    let mut i = 0;
    while i < WIDTHS.len() {
        if WIDTHS[i] == width {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The table judging a tuple of `width` dwords: a scalar-only field whose raw value is
/// the register number divided by `1 << scale`, a 9-bit VALU source on LLVM 19 (VGPR
/// tuples must end at or before v255), or an 8-bit VGPR-only field on LLVM 19.
const fn table_id(kind: usize, scale: usize, width_class: usize) -> usize {
    (kind + scale) * WIDTHS.len() + width_class
}

/// Rejected scalar values in a tuple: the odd half of a named register pair (103, 105,
/// 107, 127), `m0` (124), `src_lds_direct` (254).
const fn rejected_scalar(v: usize) -> bool {
    matches!(v, 103 | 105 | 107 | 124 | 127 | 254)
}

// Table offsets are stored as u16.
const _: () = assert!(TABLE_NEVER * 512 + 511 <= u16::MAX as usize);

/// Per table and raw field value (512 per table): LLVM rejects the word.
static REJECTED: [bool; 64 * 512] = {
    let mut out = [false; 64 * 512];
    let mut table = 0;
    while table < TABLE_NEVER {
        let kind = table / WIDTHS.len();
        let width = WIDTHS[table % WIDTHS.len()] as usize;
        let mut raw = 0;
        while raw < 512 {
            let rejected = if table == TABLE_SADDR {
                rejected_scalar(raw) && raw != 0x7f
            } else if table >= TABLE_NAMED128_SCALE1 {
                let v = raw << (1 + table - TABLE_NAMED128_SCALE1);
                rejected_scalar(v) || matches!(v, 102..=107 | 126 | 127) || (v < 102 && (v & !3) + 4 > 106)
            } else if kind == KIND_VGPR19 {
                raw < 256 && raw + width > 256
            } else if kind < KIND_VALU19 {
                // Scalar tuples, aligned down as LLVM prints them, must end inside
                // LLVM's SGPR file (s105) or the trap temporaries (ttmp15).
                let v = raw << kind;
                let aligned = match width {
                    0 | 1 => v,
                    2 => v & !1,
                    _ => v & !3,
                };
                rejected_scalar(v)
                    || (v < 102 && aligned + width > 106)
                    || (v >= 108 && v < 124 && aligned + width > 124)
            } else {
                rejected_scalar(raw) || (raw >= 256 && raw + width > 512)
            };
            out[table * 512 + raw] = rejected;
            raw += 1;
        }
        table += 1;
    }
    out
};


/// The checks of every entry, and their numbers.
const fn build_wide() -> ([[WideCheck; 4]; N_ENTRIES + 1], [u8; N_ENTRIES + 1]) {
    let mut out = [[WideCheck::NONE; 4]; N_ENTRIES + 1];
    let mut counts = [0u8; N_ENTRIES + 1];
    let hot = build_hot_families();
    let mut i = 0;
    while i < N_ENTRIES {
        let encoding = hot[i + 1];
        let ops = ENTRIES[i].ops;
        let mut k = 0;
        let mut n = 0;
        while k < ops.len() && n < 4 {
            if let OpSpec::Field(field, width, class, _) = ops[k] {
                let tables = wide_tables(encoding, field, width, class);
                if let (Some((word, lo, bits)), Some(table)) = (position(encoding, field), tables) {
                    out[i + 1][n] = WideCheck {
                        mask: ((1u32 << bits) - 1) as u16,
                        lo: lo + 32 * word,
                        table: [(table.0 * 512) as u16, (table.1 * 512) as u16],
                    };
                    n += 1;
                }
            }
            k += 1;
        }
        counts[i + 1] = n as u8;
        i += 1;
    }
    (out, counts)
}

/// The judging tables (LLVM 19, LLVM 22) of an operand, or `None` if it needs no check.
const fn wide_tables(encoding: Encoding, field: Field, width: u8, class: Class) -> Option<(usize, usize)> {
    use Encoding as E;
    let Some(wc) = width_class(width) else { return None };
    if width < 2 {
        return None;
    }
    let scalar_field = matches!(class, Class::S)
        && matches!(field, Field::Sdst | Field::Ssrc0 | Field::Ssrc1 | Field::Sdata | Field::Sbase | Field::Srsrc | Field::Ssamp | Field::Saddr | Field::Vdst);
    if scalar_field {
        let scale = match (encoding, field) {
            (E::Smem, Field::Sbase) => 1,
            (E::Mubuf | E::Mtbuf | E::Mimg, Field::Srsrc) | (E::Mimg, Field::Ssamp) => 2,
            _ => 0,
        };
        let t = table_id(KIND_SCALAR, scale, if width <= 16 { wc } else { 0 });
        if matches!(field, Field::Saddr) {
            return Some((TABLE_SADDR, TABLE_SADDR));
        }
        let t22 = match (scale, width) {
            (1, 4) => TABLE_NAMED128_SCALE1,
            (2, 4) => TABLE_NAMED128_SCALE2,
            _ => t,
        };
        return Some((t, t22));
    }
    match (encoding, field) {
        (E::Vop1 | E::Vop2 | E::Vopc | E::Vop3, Field::Src0 | Field::Src1 | Field::Src2) => {
            // No scalar overflow check: LLVM narrows some scalar tuple widths.
            Some((table_id(KIND_VALU19, 0, wc), table_id(KIND_SCALAR, 0, 0)))
        }
        // LLVM 22 reads a 1024-bit scalar tuple as 512 bits.
        (E::Vop3p, Field::Src0 | Field::Src1 | Field::Src2) => {
            let wc22 = if width > 16 { width_class(16) } else { Some(wc) };
            match wc22 {
                Some(wc22) => Some((table_id(KIND_VALU19, 0, wc), table_id(KIND_SCALAR, 0, wc22))),
                None => None,
            }
        }
        // VGPR/AGPR-only fields.
        (E::Vop3p, Field::Vdst) | (E::Mubuf | E::Mtbuf, Field::Vdata) => Some((table_id(KIND_VGPR19, 0, wc), TABLE_NEVER)),
        // MIMG data: its base width (LLVM prints the base form when the dmask's register
        // count would run past v255, and rejects the word when the base form does too).
        (E::Mimg, Field::Vdata) => Some((table_id(KIND_VGPR19, 0, wc), TABLE_NEVER)),
        _ => None,
    }
}

const N_ENTRIES: usize = ENTRIES.len();

const _: () = assert!(std::mem::size_of::<Hot>() == 64);

/// Slot 0: the sentinel no word matches (mask 0, value 1); slot `i + 1`: `ENTRIES[i]`.
pub(super) static HOT: [Hot; N_ENTRIES + 1] = build_hot();

const fn build_hot() -> [Hot; N_ENTRIES + 1] {
    let sentinel = Hot {
        must: [0, 1, 0, 1],
        opcode: Opcode::SNop,
        literal: 0,
        encoding: Encoding::Unknown,
        base_words: 1,
        n_wide: 0,
        flags: 0,
        lit_src: [0; 2],
        wide: [WideCheck::NONE; 4],
    };
    let mut out = [sentinel; N_ENTRIES + 1];
    let families = build_hot_families();
    let (wide, n_wide) = build_wide();
    let mut i = 0;
    while i < N_ENTRIES {
        let e = &ENTRIES[i];
        let encoding = families[i + 1];
        let l = e.literal;
        // The decoder reads the literal rules of one-word entries from `lit_src` and
        // `LIT_FIXED`, and those of two-word entries from the `BAD_W1_*` and
        // `SOFFSET_W1` bits only.
        let one_word_rules = Entry::LIT_FIXED | Entry::LIT_SSRC0 | Entry::LIT_SSRC1 | Entry::LIT_SRC0;
        assert!(
            l & if encoding.base_words() == 1 { !one_word_rules } else { one_word_rules } == 0,
            "an entry's literal rules do not fit its size"
        );
        assert!(!(l & Entry::LIT_SRC0 != 0 && l & Entry::LIT_SSRC0 != 0), "src0 is either 9 or 8 bits wide");
        // One-word entries are checked on their first word alone.
        assert!(encoding.base_words() == 2 || (e.must[1].0 == 0 && e.must[1].1 == 0), "a one-word entry checks w1");
        out[i + 1] = Hot {
            must: [e.must[0].0, e.must[0].1, e.must[1].0, e.must[1].1],
            opcode: e.opcode,
            literal: e.literal,
            encoding,
            base_words: encoding.base_words() as u8,
            n_wide: n_wide[i + 1],
            flags: e.flags,
            lit_src: [lit_mask(l, Entry::LIT_SRC0, 0x1ff) | lit_mask(l, Entry::LIT_SSRC0, 0xff), lit_mask(l, Entry::LIT_SSRC1, 0xff)],
            wide: wide[i + 1],
        };
        i += 1;
    }
    out
}

/// [`Hot::lit_src`] mask for literal rules `l`: `field` if `l` has `rule`.
const fn lit_mask(l: u8, rule: u8, field: u16) -> u16 {
    if l & rule != 0 {
        field
    } else {
        0
    }
}

/// The family of every [`HOT`] slot (`Unknown` for the sentinel).
const fn build_hot_families() -> [Encoding; N_ENTRIES + 1] {
    let mut out = [Encoding::Unknown; N_ENTRIES + 1];
    // Each entry belongs to exactly one family (the generator keys entries by family).
    let mut t = 0;
    while t < 3 {
        let mut f = 0;
        while f < N_FAMILIES {
            let table = FAMILY_TABLES[t][f];
            let mut op = 0;
            while op < table.len() {
                let s = table[op] as usize;
                if s != 0 {
                    out[s] = ENCODINGS[f];
                }
                op += 1;
            }
            f += 1;
        }
        t += 1;
    }
    out
}

/// Encodings in `Encoding` declaration order, as the generated tables are.
pub(super) const ENCODINGS: [Encoding; N_FAMILIES] = {
    use Encoding as E;
    [
        E::Sop2, E::Sopk, E::Sop1, E::Sopc, E::Sopp, E::Smem, E::Vop2, E::Vop1, E::Vopc,
        E::Vop3, E::Vop3p, E::Ds, E::Flat, E::Scratch, E::Global, E::Mubuf, E::Mtbuf,
        E::Vop1Dpp, E::Vop2Dpp, E::VopcDpp, E::Vop1Sdwa, E::Vop2Sdwa, E::VopcSdwa, E::Mimg,
    ]
};

/// The [`HOT`] slot of [`INDEX`] key `key` on `target`: 0 (the sentinel) if none.
#[inline(always)]
pub(super) fn hot_slot(target: Target, key: usize) -> usize {
    INDEX[target as usize].get(key).copied().unwrap_or(0) as usize
}

/// The index slot of opcode field `op` of `encoding` on `target`: 0 if none, else
/// entry + 1.
#[cfg(test)]
fn slot(target: Target, encoding: Encoding, op: u32) -> u16 {
    let key = match encoding {
        Encoding::Flat | Encoding::Scratch | Encoding::Global => {
            let seg = encoding as usize - Encoding::Flat as usize;
            OFFSETS[encoding as usize] + flat_position(op as usize, 0, seg)
        }
        _ => OFFSETS[encoding as usize] + op as usize,
    };
    INDEX[target as usize].get(key).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, family_of, Decoded};

    #[test]
    fn layout_leaves_a_zero_slice_after_global() {
        let pad = layout().1;
        assert_eq!(pad, OFFSETS[Encoding::Flat as usize] + FLAT_SLICE);
        assert_eq!(OFFSETS[Encoding::Unknown as usize], pad);
        assert_eq!(OFFSETS[Encoding::Mubuf as usize], pad + SEG_SLICE);
        for index in &INDEX {
            assert!(index[pad..pad + SEG_SLICE].iter().all(|&s| s == 0));
        }
    }

    #[test]
    fn slots_agree_with_family_tables() {
        for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
            let tables = &FAMILY_TABLES[target as usize];
            for (f, table) in tables.iter().enumerate() {
                for (op, &want) in table.iter().enumerate() {
                    let enc = ENCODINGS[f];
                    assert_eq!(slot(target, enc, op as u32), want, "{target:?} {enc:?} op {op:#x}");
                }
            }
            for op in 0..SEG_SLICE as u32 {
                assert_eq!(slot(target, Encoding::Unknown, op), 0);
            }
        }
    }

    #[test]
    fn key_agrees_with_family_of() {
        // Every top-nine-bit prefix, with every src0 form and FLAT segment, and
        // random low bits.
        let mut x = 0x9e37_79b9u32;
        for hi in 0..512u32 {
            for low in [0u32, 0xf9, 0xfa, 0xff, 0x4000, 0x8000, 0xc000, 0x1ff] {
                for _ in 0..16 {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    let w0 = (hi << 23) | (x & 0x007f_0000) | (x & 0x3e00) | low;
                    let (enc, op) = family_of(w0);
                    let got = key(w0);
                    for t in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
                        let found = INDEX[t as usize].get(got).copied().unwrap_or(0);
                        let want = if enc == Encoding::Unknown { 0 } else { slot(t, enc, op) };
                        assert_eq!(found, want, "{t:?} {w0:#010x} {enc:?} op {op:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn hot_entries_carry_their_family() {
        for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
            for (f, table) in FAMILY_TABLES[target as usize].iter().enumerate() {
                for &s in table.iter().filter(|&&s| s != 0) {
                    let h = &HOT[s as usize];
                    assert_eq!(h.encoding, ENCODINGS[f]);
                    assert_eq!(h.base_words as usize, ENCODINGS[f].base_words());
                    assert_eq!(h.opcode, ENTRIES[s as usize - 1].opcode);
                }
            }
        }
        // The sentinel's mask clears every bit and its value keeps one: no word matches.
        let sentinel = &HOT[0];
        assert_eq!((sentinel.must[0], sentinel.must[1]), (0, 1));
    }

    #[test]
    fn decode_agrees_with_family_of_on_random_words() {
        // Whatever family_of says, a valid decode carries that family.
        let mut x = 0x1234_5678u32;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let words = [x, x.rotate_left(7), x.rotate_left(13)];
            for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
                let (enc, _) = family_of(x);
                match decode(target, &words) {
                    Decoded::Inst(i) => assert_eq!(i.encoding(), enc),
                    Decoded::Invalid { encoding, word } | Decoded::Truncated { encoding, word } => {
                        assert_eq!((encoding, word), (enc, x));
                    }
                }
            }
        }
    }
}
