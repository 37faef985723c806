//! The decoded-instruction cache of a loaded code object: every dword offset of `.text`
//! decoded once, so the interpreter maps a PC to an [`Inst`] with one index.
//!
//! DPP and SDWA forms (`src0` = 0xfa / 0xf9 in VOP1/VOP2/VOPC) carry a second control
//! word that the table decoder does not model; the cache attaches it here
//! ([`Extension`]) and sizes the instruction as 8 bytes.

use crate::code_object::CodeObject;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::decode::{decode, Decoded, Encoding, Inst, Opcode};
use crate::Target;

use super::burst::{host_burst_fn, BurstFn};
use super::fast::{FastOp, FastSlot};
use super::ExecFault;

/// The control word of a DPP or SDWA instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Extension {
    /// A plain instruction.
    None,
    /// DPP: the second word (source VGPR in bits 7:0, `dpp_ctrl` in 16:8, ...).
    Dpp(u32),
    /// SDWA: the second word (source VGPR, selects, sign extension, modifiers).
    Sdwa(u32),
}

/// One cached instruction.
#[derive(Copy, Clone, Debug)]
pub struct CachedInst {
    /// The decoded instruction.
    pub inst: Inst,
    /// DPP/SDWA control word.
    pub ext: Extension,
    /// Bytes the instruction occupies (with its DPP/SDWA word).
    pub size: u8,
    /// Per-opcode helper data computed at load time (compare condition and type, memory
    /// access kind).
    pub aux: u16,
    /// The opcode the handlers dispatch on: for DPP/SDWA forms, the plain `_e32` opcode.
    pub op: Opcode,
    /// The encoding the handlers read fields with: for DPP/SDWA forms, the plain family.
    pub enc: Encoding,
    /// VALU operand fields, decoded once at load time.
    pub(crate) fields: super::valu::Fields,
    /// The pre-resolved form of a hot instruction.
    pub(crate) fast: Option<FastOp>,
}

/// A slot of the cache: a decoded instruction or the word that failed to decode.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Slot {
    Inst(CachedInst),
    Invalid { encoding: Encoding, word: u32 },
}

/// A code object placed in device memory at `base`, with its instruction cache.
#[derive(Debug, Clone)]
pub struct Program {
    target: Target,
    base: u64,
    text_start: u64,
    slots: Vec<Slot>,
    /// The slots' straight-line runs of [`FastOp`]s (one entry per slot).
    fast: Vec<FastSlot>,
    /// Runs the slots' [`FastOp`]s with the best code for this host CPU.
    burst_fn: BurstFn,
}

/// The ISA target of a code object, or an error for processors this crate cannot run.
pub fn isa_target(code: &CodeObject) -> Result<Target, ExecFault> {
    match code.target() {
        crate::code_object::Target::Gfx90a => Ok(Target::Gfx90a),
        crate::code_object::Target::Gfx942 => Ok(Target::Gfx942),
        crate::code_object::Target::Gfx950 => Ok(Target::Gfx950),
        crate::code_object::Target::Other(mach) => Err(ExecFault::UnsupportedTarget {
            mach: format!("{mach:?}"),
        }),
    }
}

impl Program {
    /// Pre-decodes the `.text` of `code` for a load at device address `base`.
    pub fn new(code: &CodeObject, base: u64) -> Result<Program, ExecFault> {
        let target = isa_target(code)?;
        let text = code.text();
        let words: Vec<u32> = text
            .bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let slots: Vec<Slot> = (0..words.len())
            .map(|i| decode_at(target, &words[i..]))
            .collect();
        let fast = super::fast::table(&slots);
        Ok(Program {
            target,
            base,
            text_start: base.wrapping_add(text.address.0),
            slots,
            fast,
            burst_fn: host_burst_fn(),
        })
    }

    /// The ISA target.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Device address the code object is loaded at.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Number of cached dword slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True if `.text` is empty.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The instruction at device address `pc`.
    #[inline]
    pub(crate) fn slot(&self, pc: u64) -> Result<&CachedInst, ExecFault> {
        let off = pc.wrapping_sub(self.text_start);
        if !off.is_multiple_of(4) {
            return Err(ExecFault::PcOutOfRange { pc });
        }
        match self.slots.get((off / 4) as usize) {
            Some(Slot::Inst(c)) => Ok(c),
            Some(Slot::Invalid { encoding, word }) => Err(ExecFault::Illegal {
                pc,
                encoding: encoding.name(),
                word: *word,
            }),
            None => Err(ExecFault::PcOutOfRange { pc }),
        }
    }

    /// The function that runs pre-resolved instructions on this host.
    #[inline]
    pub(crate) fn burst_fn(&self) -> BurstFn {
        self.burst_fn
    }

    /// The straight-line run table of the slots.
    #[inline(always)]
    pub(crate) fn fast_table(&self) -> &[FastSlot] {
        &self.fast
    }

    /// The cached instruction at `pc`, if `pc` is inside `.text` and decodes.
    pub fn inst_at(&self, pc: u64) -> Option<&CachedInst> {
        self.slot(pc).ok()
    }
}

fn decode_at(target: Target, words: &[u32]) -> Slot {
    match decode(target, words) {
        Decoded::Inst(inst) => cached(inst, 0),
        Decoded::Invalid { encoding, word } | Decoded::Truncated { encoding, word } => {
            // The MFMA word of a gfx950 `v_mfma_scale_*` pair decodes only as part of it.
            match super::mfma::scaled_mfma_words(target, words).map(|plain| decode(target, &plain)) {
                Some(Decoded::Inst(inst)) => cached(inst, super::mfma::AUX_SCALED),
                _ => Slot::Invalid { encoding, word },
            }
        }
    }
}

/// The cache entry of a decoded instruction (`extra_aux` is or-ed into its aux word).
fn cached(inst: Inst, extra_aux: u16) -> Slot {
    let (enc, ext) = match inst.encoding() {
        Encoding::Vop1Dpp => (Encoding::Vop1, Extension::Dpp(inst.words()[1])),
        Encoding::Vop2Dpp => (Encoding::Vop2, Extension::Dpp(inst.words()[1])),
        Encoding::VopcDpp => (Encoding::Vopc, Extension::Dpp(inst.words()[1])),
        Encoding::Vop1Sdwa => (Encoding::Vop1, Extension::Sdwa(inst.words()[1])),
        Encoding::Vop2Sdwa => (Encoding::Vop2, Extension::Sdwa(inst.words()[1])),
        Encoding::VopcSdwa => (Encoding::Vopc, Extension::Sdwa(inst.words()[1])),
        e => (e, Extension::None),
    };
    let op = if ext == Extension::None {
        inst.opcode()
    } else {
        plain_opcode(inst.opcode())
    };
    let mnemonic = inst.opcode().mnemonic();
    let aux = super::valu::compare_aux(mnemonic) | super::vmem::mem_aux(mnemonic) | super::mfma::aux(mnemonic) | extra_aux;
    let mut cached = CachedInst {
        inst,
        ext,
        size: inst.size_bytes() as u8,
        aux,
        op,
        enc,
        fields: Default::default(),
        fast: None,
    };
    if matches!(
        enc,
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p
    ) {
        cached.fields = super::valu::fields(&cached);
    }
    cached.fast = super::fast::resolve(&cached);
    Slot::Inst(cached)
}

impl Program {
    /// Device address of the first byte of `.text`.
    pub fn text_start(&self) -> u64 {
        self.text_start
    }
}

impl Program {
    /// A program from raw instruction words placed at device address `base` (for tests and
    /// tools that assemble code without a code object).
    pub fn from_words(target: Target, base: u64, words: &[u32]) -> Program {
        let slots: Vec<Slot> = (0..words.len())
            .map(|i| decode_at(target, &words[i..]))
            .collect();
        let fast = super::fast::table(&slots);
        Program {
            target,
            base,
            text_start: base,
            slots,
            fast,
            burst_fn: host_burst_fn(),
        }
    }
}

/// The `_e32` (or suffix-less) opcode of a DPP/SDWA opcode, found by mnemonic; the opcode
/// itself when there is none.
fn plain_opcode(op: Opcode) -> Opcode {
    static BY_NAME: OnceLock<HashMap<&'static str, Opcode>> = OnceLock::new();
    let map = BY_NAME.get_or_init(|| {
        crate::tables::ENTRIES
            .iter()
            .map(|e| (e.opcode.mnemonic(), e.opcode))
            .collect()
    });
    let m = op.mnemonic();
    let stem = m
        .strip_suffix("_dpp")
        .or_else(|| m.strip_suffix("_sdwa"))
        .unwrap_or(m);
    map.get(format!("{stem}_e32").as_str())
        .or_else(|| map.get(stem))
        .copied()
        .unwrap_or(op)
}
