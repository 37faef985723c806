//! Branch-free first-word dispatch for [`super::decode`], built at compile time from the
//! generated tables.
//!
//! The top 9 bits of the first word and whether src0 is a DPP/SDWA marker select a
//! [`Route`]: where the family's opcode field sits and where the family's slice starts in
//! one flat per-target index. The index names a [`Hot`] record holding everything the
//! decoder checks per instruction (must-be bits, literal rules, family, size), so decoding
//! a word costs a few loads and no family `match`.
//!
//! **Architecture Invariant:** slot 0 of [`HOT`] is a sentinel whose must-be bits never
//! match, so "no instruction" needs no separate test on the hot path; every other slot
//! `i` describes `ENTRIES[i - 1]`, and its family equals what [`super::family_of`] says
//! for any word that reaches it (checked by the unit tests).

use super::Encoding;
use crate::tables::{Entry, Opcode, ENTRIES, FAMILY_TABLES};
use crate::Target;

/// Encoding families in the generated tables' order (`Encoding` declaration order).
const FAMILIES: [Encoding; 23] = [
    Encoding::Sop2,
    Encoding::Sopk,
    Encoding::Sop1,
    Encoding::Sopc,
    Encoding::Sopp,
    Encoding::Smem,
    Encoding::Vop2,
    Encoding::Vop1,
    Encoding::Vopc,
    Encoding::Vop3,
    Encoding::Vop3p,
    Encoding::Ds,
    Encoding::Flat,
    Encoding::Scratch,
    Encoding::Global,
    Encoding::Mubuf,
    Encoding::Mtbuf,
    Encoding::Vop1Dpp,
    Encoding::Vop2Dpp,
    Encoding::VopcDpp,
    Encoding::Vop1Sdwa,
    Encoding::Vop2Sdwa,
    Encoding::VopcSdwa,
];

/// Size of the FLAT/SCRATCH/GLOBAL opcode tables: the `seg` field (bits 15:14) picks one
/// of four consecutive slices of this size, the fourth being all "no instruction".
const SEG_SLICE: usize = 128;

/// Offsets of each family's slice in a target's flat index, the all-zero slice that
/// follows GLOBAL, and the index length.
const fn layout() -> ([usize; 23], usize, usize) {
    let mut offsets = [0usize; 23];
    let mut at = 0;
    let mut pad = 0;
    let mut f = 0;
    while f < 23 {
        offsets[f] = at;
        at += FAMILY_TABLES[0][f].len();
        if f == Encoding::Global as usize {
            pad = at;
            at += SEG_SLICE;
        }
        f += 1;
    }
    (offsets, pad, at)
}

const OFFSETS: [usize; 23] = layout().0;
const PAD: usize = layout().1;
const INDEX_LEN: usize = layout().2;

/// Per target: family slices laid out by [`layout`]; 0 = no instruction, else a
/// [`HOT`] slot.
static INDEX: [[u16; INDEX_LEN]; 3] = build_index();

const fn build_index() -> [[u16; INDEX_LEN]; 3] {
    let mut out = [[0u16; INDEX_LEN]; 3];
    let mut t = 0;
    while t < 3 {
        let mut f = 0;
        while f < 23 {
            let table = FAMILY_TABLES[t][f];
            let mut i = 0;
            while i < table.len() {
                out[t][OFFSETS[f] + i] = table[i];
                i += 1;
            }
            f += 1;
        }
        t += 1;
    }
    out
}

/// How to find a word's slot: `offset + ((w0 >> shift) & mask) + (((w0 >> 14) & seg_mask) << 7)`.
#[derive(Copy, Clone)]
pub(super) struct Route {
    offset: u16,
    mask: u16,
    shift: u8,
    seg_mask: u8,
}

/// `(shift, mask)` of the opcode field of `encoding` in the first word.
const fn opcode_field(encoding: Encoding) -> (u8, u16) {
    match encoding {
        Encoding::Sop2 => (23, 0x7f),
        Encoding::Sopk => (23, 0x1f),
        Encoding::Sop1 => (8, 0xff),
        Encoding::Sopc | Encoding::Sopp | Encoding::Vop3p => (16, 0x7f),
        Encoding::Smem => (18, 0xff),
        Encoding::Vop2 | Encoding::Vop2Dpp | Encoding::Vop2Sdwa => (25, 0x3f),
        Encoding::Vop1 | Encoding::Vop1Dpp | Encoding::Vop1Sdwa => (9, 0xff),
        Encoding::Vopc | Encoding::VopcDpp | Encoding::VopcSdwa => (17, 0xff),
        Encoding::Vop3 => (16, 0x3ff),
        Encoding::Ds => (17, 0xff),
        Encoding::Flat | Encoding::Scratch | Encoding::Global | Encoding::Mubuf => (18, 0x7f),
        Encoding::Mtbuf => (15, 0xf),
        Encoding::Unknown => (0, 0),
    }
}

/// `encoding` when src0 is the DPP (`variant` 1) or SDWA (`variant` 2) marker.
const fn with_variant(encoding: Encoding, variant: usize) -> Encoding {
    match (encoding, variant) {
        (Encoding::Vop1, 1) => Encoding::Vop1Dpp,
        (Encoding::Vop2, 1) => Encoding::Vop2Dpp,
        (Encoding::Vopc, 1) => Encoding::VopcDpp,
        (Encoding::Vop1, 2) => Encoding::Vop1Sdwa,
        (Encoding::Vop2, 2) => Encoding::Vop2Sdwa,
        (Encoding::Vopc, 2) => Encoding::VopcSdwa,
        (e, _) => e,
    }
}

/// Routes by `[w0 >> 23][variant]`, variant 0 plain, 1 DPP, 2 SDWA (3 unused).
static ROUTES: [[Route; 4]; 512] = build_routes();

const fn build_routes() -> [[Route; 4]; 512] {
    let none = Route { offset: PAD as u16, mask: 0, shift: 0, seg_mask: 0 };
    let mut out = [[none; 4]; 512];
    let mut top = 0;
    while top < 512 {
        // Bits below 23 do not change the family except FLAT's seg (bits 15:14), which
        // the route adds itself, and src0 (bits 8:0), which `variant` stands for.
        let (base, _) = Encoding::classify((top as u32) << 23);
        let mut v = 0;
        while v < 3 {
            let enc = with_variant(base, v);
            if !matches!(enc, Encoding::Unknown) {
                let (shift, mask) = opcode_field(enc);
                let seg_mask = if matches!(enc, Encoding::Flat) { 3 } else { 0 };
                out[top][v] = Route { offset: OFFSETS[enc as usize] as u16, mask, shift, seg_mask };
            }
            v += 1;
        }
        top += 1;
    }
    out
}

/// What the decoder checks for one table entry, packed for the hot path.
#[derive(Copy, Clone)]
pub(super) struct Hot {
    /// Per word `(mask, value)`, as [`Entry::must`].
    pub(super) must: [(u32, u32); 2],
    /// The entry's opcode.
    pub(super) opcode: Opcode,
    /// Index into `ENTRIES`.
    pub(super) entry: u16,
    /// The entry's encoding family.
    pub(super) encoding: Encoding,
    /// Size of the family in words, without a literal.
    pub(super) base_words: u8,
    /// As [`Entry::literal`].
    pub(super) literal: u8,
}

const HOT_LEN: usize = ENTRIES.len() + 1;

/// Slot 0: the never-matching sentinel; slot `i`: `ENTRIES[i - 1]`.
static HOT: [Hot; HOT_LEN] = build_hot();

const fn build_hot() -> [Hot; HOT_LEN] {
    let sentinel = Hot {
        // `w0 & 0 == 1` never holds.
        must: [(0, 1), (0, 0)],
        opcode: Opcode::BufferAtomicAdd,
        entry: 0,
        encoding: Encoding::Unknown,
        base_words: 1,
        literal: 0,
    };
    let mut out = [sentinel; HOT_LEN];
    // Every entry sits in exactly one family table (of one or more targets).
    let mut t = 0;
    while t < 3 {
        let mut f = 0;
        while f < 23 {
            let table = FAMILY_TABLES[t][f];
            let mut i = 0;
            while i < table.len() {
                let slot = table[i] as usize;
                if slot != 0 {
                    let e: &Entry = &ENTRIES[slot - 1];
                    let enc = FAMILIES[f];
                    out[slot] = Hot {
                        must: e.must,
                        opcode: e.opcode,
                        entry: (slot - 1) as u16,
                        encoding: enc,
                        base_words: enc.base_words() as u8,
                        literal: e.literal,
                    };
                }
                i += 1;
            }
            f += 1;
        }
        t += 1;
    }
    out
}

/// The hot record for first word `w0` on `target` (the sentinel if none).
#[inline(always)]
pub(super) fn hot(target: Target, w0: u32) -> &'static Hot {
    let src0 = w0 & 0x1ff;
    let variant = (src0 == 0xfa) as usize | (((src0 == 0xf9) as usize) << 1);
    // Only words with bit 31 clear (VOP1/VOP2/VOPC) have DPP/SDWA routes; the others
    // repeat the plain route in every variant.
    let r = ROUTES[(w0 >> 23) as usize][variant];
    let key = r.offset as usize
        + ((w0 >> r.shift) & r.mask as u32) as usize
        + ((((w0 >> 14) & r.seg_mask as u32) as usize) << 7);
    let slot = INDEX[target as usize].get(key).copied().unwrap_or(0);
    HOT.get(slot as usize).unwrap_or(&HOT[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::family_of;

    #[test]
    fn layout_leaves_a_zero_slice_after_global() {
        assert_eq!(PAD, OFFSETS[Encoding::Global as usize] + SEG_SLICE);
        assert_eq!(OFFSETS[Encoding::Mubuf as usize], PAD + SEG_SLICE);
        for t in 0..3 {
            assert!(INDEX[t][PAD..PAD + SEG_SLICE].iter().all(|&s| s == 0));
        }
    }

    #[test]
    fn hot_records_agree_with_entries_and_family_of() {
        // A spread of words over every top-9-bit pattern, src0 marker and seg value.
        let mut x = 0x1234_5678u32;
        for top in 0..512u32 {
            for low in [0u32, 0xf9, 0xfa, 0xff, 0x4000, 0x8000, 0xc000, 0x1ff] {
                for _ in 0..64 {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    let mut w0 = (top << 23) | (x & 0x007f_ffff);
                    if low <= 0x1ff {
                        w0 = (w0 & !0x1ff) | low;
                    } else {
                        w0 = (w0 & !0xc000) | low;
                    }
                    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
                        let h = hot(target, w0);
                        let (enc, op) = family_of(w0);
                        let expected = FAMILY_TABLES[target as usize]
                            .get(enc as usize)
                            .and_then(|t| t.get(op as usize))
                            .copied()
                            .unwrap_or(0);
                        if expected == 0 {
                            assert_eq!(h.must[0], (0, 1), "word {w0:#010x} {target:?} should have no entry");
                        } else {
                            let e = &ENTRIES[expected as usize - 1];
                            assert_eq!(h.entry as usize, expected as usize - 1, "word {w0:#010x}");
                            assert_eq!(h.encoding, enc, "word {w0:#010x}");
                            assert_eq!(h.opcode, e.opcode);
                            assert_eq!(h.must, e.must);
                            assert_eq!(h.literal, e.literal);
                            assert_eq!(h.base_words as usize, enc.base_words());
                        }
                    }
                }
            }
        }
    }
}
