//! Flat per-target opcode index for [`super::decode`], built at compile time from the
//! generated per-family tables.
//!
//! One array per target holds every family's opcode slice at `OFFSETS[family]`, so a
//! lookup is one load, with no per-family slice pointer and length to load and check.
//!
//! **Architecture Invariant:** `slot(t, e, op)` equals `FAMILY_TABLES[t][e][op]` for
//! every family and opcode field value, and 0 for `Encoding::Unknown` (checked by the
//! unit tests).

use super::Encoding;
use crate::tables::FAMILY_TABLES;
use crate::Target;

/// Size of the all-zero slice after GLOBAL, where `Encoding::Unknown` looks up.
const SEG_SLICE: usize = 128;

/// Offsets of each family's slice in a target's flat index, the all-zero slice that
/// follows GLOBAL, and the index length.
const fn layout() -> ([usize; 24], usize, usize) {
    // `Encoding::Unknown` (the 24th) points at the all-zero slice.
    let mut offsets = [0usize; 24];
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
    offsets[Encoding::Unknown as usize] = pad;
    (offsets, pad, at)
}

const OFFSETS: [usize; 24] = layout().0;
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

/// The index slot of opcode field `op` of `encoding` on `target`: 0 if none, else
/// entry + 1.
#[inline(always)]
pub(super) fn slot(target: Target, encoding: Encoding, op: u32) -> u16 {
    let key = OFFSETS[encoding as usize] + op as usize;
    INDEX[target as usize].get(key).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, family_of, Decoded};

    #[test]
    fn layout_leaves_a_zero_slice_after_global() {
        let pad = layout().1;
        assert_eq!(pad, OFFSETS[Encoding::Global as usize] + SEG_SLICE);
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
                // Every family's slice, via words that classify into it.
                for (op, &want) in table.iter().enumerate() {
                    let enc = all_families()[f];
                    assert_eq!(slot(target, enc, op as u32), want, "{target:?} {enc:?} op {op:#x}");
                }
            }
            for op in 0..SEG_SLICE as u32 {
                assert_eq!(slot(target, Encoding::Unknown, op), 0);
            }
        }
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

    /// Encodings in `Encoding` declaration order, as the generated tables are.
    fn all_families() -> [Encoding; 23] {
        use Encoding as E;
        [
            E::Sop2, E::Sopk, E::Sop1, E::Sopc, E::Sopp, E::Smem, E::Vop2, E::Vop1, E::Vopc,
            E::Vop3, E::Vop3p, E::Ds, E::Flat, E::Scratch, E::Global, E::Mubuf, E::Mtbuf,
            E::Vop1Dpp, E::Vop2Dpp, E::VopcDpp, E::Vop1Sdwa, E::Vop2Sdwa, E::VopcSdwa,
        ]
    }
}
