//! The executor's coverage, counted from the decoder's own tables.
//!
//! Every instruction form of a target is an entry of the generated opcode tables (the
//! same tables [`crate::decode`] runs on): an encoding family and an opcode, and for the
//! VOP1/VOP2/VOPC families also their DPP and SDWA forms. For each form the census
//! builds instruction words from the table entry (the family's fixed bits, the opcode
//! and the entry's must-be bits), checks that the decoder reads them back as that form,
//! and executes them on a wave whose registers and memory make every access succeed.
//! It does so for several operand variants: every field zero, VGPR sources (all and each
//! alone), each printed modifier set on its own, and for DPP and SDWA a set of control
//! words. A form
//! *executes* when no variant stops with [`ExecFault::Unsupported`] and at least one
//! variant is accepted: any outcome but [`ExecFault::Illegal`] (a result, a branch, a
//! trap, a memory fault) is the instruction's semantics. A form whose every variant is
//! illegal counts as a gap: refusing an instruction is not executing it.
//!
//! Nothing here is a list of implemented opcodes: the count comes from running the
//! executor, so it cannot claim what the executor does not do.
//!
//! **Architecture Invariant:** the census only reads the tables and runs the public
//! executor; it never changes what either does.

use std::collections::BTreeMap;

use crate::decode::{decode, Decoded, Encoding, Opcode};
use crate::exec::{step, DeviceMemory, ExecFault, MemFault, Program, StepEnv, Wave, WaveStatus};
use crate::tables::{Field, Kind, ENTRIES, FAMILY_TABLES};
use crate::Target;

/// Where the census places its one-instruction programs.
const CODE_BASE: u64 = 0x10_0000;

/// LDS given to each probe (the largest any target has: 160 KiB on gfx950).
const LDS_BYTES: usize = 160 * 1024;

/// One instruction form of a target.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// The target the form belongs to.
    pub target: Target,
    /// Its encoding family (DPP and SDWA forms are families of their own).
    pub encoding: Encoding,
    /// Its opcode field value within the family.
    pub opcode_field: u32,
    /// The instruction.
    pub opcode: Opcode,
    /// What the form is counted under in the per-category figures.
    pub category: Category,
    entry: u16,
}

/// The groups the census reports figures for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// SOP1, SOP2, SOPK, SOPC, SOPP.
    Scalar,
    /// Scalar memory (SMEM).
    ScalarMemory,
    /// VOP1, VOP2, VOPC and VOP3 (32- and 64-bit vector ALU, compares).
    Valu,
    /// Packed math and dot products (VOP3P that is not a matrix instruction).
    Packed,
    /// Matrix instructions (MFMA, SMFMAC, AccVGPR moves, `v_mfma_ld_scale_b32`).
    Matrix,
    /// DPP forms of VOP1/VOP2/VOPC.
    Dpp,
    /// SDWA forms of VOP1/VOP2/VOPC.
    Sdwa,
    /// LDS and GDS (DS).
    Lds,
    /// FLAT, GLOBAL and SCRATCH.
    Flat,
    /// MUBUF and MTBUF.
    Buffer,
    /// Image memory (MIMG): loads, stores, atomics, sampling, resource queries.
    Image,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 11] = [
        Category::Scalar,
        Category::ScalarMemory,
        Category::Valu,
        Category::Packed,
        Category::Matrix,
        Category::Dpp,
        Category::Sdwa,
        Category::Lds,
        Category::Flat,
        Category::Buffer,
        Category::Image,
    ];

    /// A short lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Category::Scalar => "scalar",
            Category::ScalarMemory => "scalar-memory",
            Category::Valu => "valu",
            Category::Packed => "packed",
            Category::Matrix => "matrix",
            Category::Dpp => "dpp",
            Category::Sdwa => "sdwa",
            Category::Lds => "lds",
            Category::Flat => "flat",
            Category::Buffer => "buffer",
            Category::Image => "image",
        }
    }

    fn of(encoding: Encoding, opcode: Opcode, kind: Kind) -> Category {
        use Encoding as E;
        match encoding {
            E::Sop1 | E::Sop2 | E::Sopk | E::Sopc | E::Sopp => Category::Scalar,
            E::Smem => Category::ScalarMemory,
            E::Vop1Dpp | E::Vop2Dpp | E::VopcDpp => Category::Dpp,
            E::Vop1Sdwa | E::Vop2Sdwa | E::VopcSdwa => Category::Sdwa,
            E::Ds => Category::Lds,
            E::Flat | E::Global | E::Scratch => Category::Flat,
            E::Mubuf | E::Mtbuf => Category::Buffer,
            E::Mimg => Category::Image,
            _ if opcode.mnemonic().starts_with("v_accvgpr") => Category::Matrix,
            E::Vop3p if kind == Kind::Mai || kind == Kind::MaiNeg || opcode.mnemonic().contains("mfma") => Category::Matrix,
            E::Vop3p => Category::Packed,
            _ => Category::Valu,
        }
    }
}

/// Every instruction form of `target`, in table order (family, then opcode field).
pub fn forms(target: Target) -> Vec<Form> {
    let mut out = Vec::new();
    for (family, table) in FAMILY_TABLES[target_index(target)].iter().enumerate() {
        let encoding = ENCODINGS[family];
        for (op, &slot) in table.iter().enumerate() {
            if slot == 0 {
                continue;
            }
            let entry = &ENTRIES[slot as usize - 1];
            out.push(Form {
                target,
                encoding,
                opcode_field: op as u32,
                opcode: entry.opcode,
                category: Category::of(encoding, entry.opcode, entry.kind),
                entry: slot - 1,
            });
        }
    }
    out
}

/// What the census found for one form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every variant ran (or stopped for a reason other than missing semantics).
    Executes,
    /// A variant stopped with [`ExecFault::Unsupported`]; the variant's words and fault.
    Missing {
        /// The instruction words of the variant.
        words: Vec<u32>,
        /// The fault.
        fault: ExecFault,
    },
    /// Every variant stopped with [`ExecFault::Illegal`]: the executor refuses the form
    /// whatever its operands (the first variant's words and fault).
    OnlyIllegal {
        /// The instruction words of the first variant.
        words: Vec<u32>,
        /// Its fault.
        fault: ExecFault,
    },
    /// No word built from the table entry decodes back to the form (a table or census
    /// defect, reported so it cannot hide a form).
    Unencodable {
        /// The words tried.
        words: Vec<u32>,
    },
}

/// Runs every variant of `form` and reports whether the executor has its semantics.
pub fn probe(form: &Form) -> Verdict {
    let base = base_words(form);
    let decodes = |w: &[u32]| matches!(decode(form.target, w), Decoded::Inst(i) if i.opcode() == form.opcode);
    if !decodes(&base) {
        return Verdict::Unencodable { words: base.to_vec() };
    }
    let mut refused = None;
    let mut accepted = false;
    for words in variants(form, &base) {
        if !decodes(&words) {
            continue;
        }
        match run_once(form.target, &words) {
            Err(fault @ ExecFault::Unsupported { .. }) => return Verdict::Missing { words, fault },
            Err(fault @ ExecFault::Illegal { .. }) => {
                refused.get_or_insert((words, fault));
            }
            _ => accepted = true,
        }
    }
    match refused {
        Some((words, fault)) if !accepted => Verdict::OnlyIllegal { words, fault },
        _ => Verdict::Executes,
    }
}

/// Executes one instruction as found in real code (`words`: its words, literal
/// included) once on the probe wave every form is probed on: [`Verdict::Missing`] when
/// the executor stops with [`ExecFault::Unsupported`], [`Verdict::OnlyIllegal`] when it
/// refuses the words as illegal (real code never should be), [`Verdict::Unencodable`] when
/// `words` do not start with an instruction of `target`, else [`Verdict::Executes`].
/// Words after the decoded instruction are ignored.
pub fn probe_words(target: Target, words: &[u32]) -> Verdict {
    let Decoded::Inst(inst) = decode(target, words) else {
        return Verdict::Unencodable { words: words.to_vec() };
    };
    match run_once(target, inst.words()) {
        Err(fault @ ExecFault::Unsupported { .. }) => Verdict::Missing { words: inst.words().to_vec(), fault },
        Err(fault @ ExecFault::Illegal { .. }) => Verdict::OnlyIllegal { words: inst.words().to_vec(), fault },
        _ => Verdict::Executes,
    }
}

/// Figures of one census.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Forms counted, executed, per category.
    pub per_category: BTreeMap<Category, (usize, usize)>,
    /// The forms that did not execute, with their verdicts.
    pub gaps: Vec<(Form, Verdict)>,
}

impl Report {
    /// Forms counted.
    pub fn total(&self) -> usize {
        self.per_category.values().map(|c| c.0).sum()
    }

    /// Forms that execute.
    pub fn executed(&self) -> usize {
        self.per_category.values().map(|c| c.1).sum()
    }
}

/// Probes every form of `target`.
pub fn census(target: Target) -> Report {
    let mut report = Report::default();
    for form in forms(target) {
        let verdict = probe(&form);
        let counts = report.per_category.entry(form.category).or_insert((0, 0));
        counts.0 += 1;
        if verdict == Verdict::Executes {
            counts.1 += 1;
        } else {
            report.gaps.push((form, verdict));
        }
    }
    report
}

/// The encoding families in the order of `FAMILY_TABLES`' rows.
const ENCODINGS: [Encoding; 24] = [
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
    Encoding::Mimg,
];

fn target_index(target: Target) -> usize {
    match target {
        Target::Gfx90a => 0,
        Target::Gfx942 => 1,
        Target::Gfx950 => 2,
    }
}

/// The first word's fixed family bits with opcode field `op`.
fn family_word(encoding: Encoding, op: u32) -> u32 {
    use Encoding as E;
    match encoding {
        E::Sop2 => 0x8000_0000 | op << 23,
        E::Sopk => 0xb000_0000 | op << 23,
        E::Sop1 => 0xbe80_0000 | op << 8,
        E::Sopc => 0xbf00_0000 | op << 16,
        E::Sopp => 0xbf80_0000 | op << 16,
        E::Smem => 0xc000_0000 | op << 18,
        E::Vop2 => op << 25,
        E::Vop1 => 0x7e00_0000 | op << 9,
        E::Vopc => 0x7c00_0000 | op << 17,
        E::Vop2Dpp => op << 25 | 0xfa,
        E::Vop1Dpp => 0x7e00_0000 | op << 9 | 0xfa,
        E::VopcDpp => 0x7c00_0000 | op << 17 | 0xfa,
        E::Vop2Sdwa => op << 25 | 0xf9,
        E::Vop1Sdwa => 0x7e00_0000 | op << 9 | 0xf9,
        E::VopcSdwa => 0x7c00_0000 | op << 17 | 0xf9,
        E::Vop3 => 0xd000_0000 | op << 16,
        E::Vop3p => 0xd380_0000 | op << 16,
        E::Ds => 0xd800_0000 | op << 17,
        E::Flat => 0xdc00_0000 | op << 18,
        E::Scratch => 0xdc00_0000 | 1 << 14 | op << 18,
        E::Global => 0xdc00_0000 | 2 << 14 | op << 18,
        E::Mubuf => 0xe000_0000 | op << 18,
        E::Mtbuf => 0xe800_0000 | op << 15,
        E::Mimg => 0xf000_0000 | op << 18,
        E::Unknown => 0,
    }
}

/// The form's words with every operand field zero: family bits, opcode, must-be bits, a
/// DPP/SDWA control word with all rows and banks enabled, and a zero literal slot.
fn base_words(form: &Form) -> [u32; 3] {
    let entry = &ENTRIES[form.entry as usize];
    let mut words = [family_word(form.encoding, form.opcode_field), 0, 0];
    if matches!(form.encoding, Encoding::Vop1Dpp | Encoding::Vop2Dpp | Encoding::VopcDpp) {
        // row_mask and bank_mask 0xf, dpp_ctrl quad_perm:[0,1,2,3] (the identity).
        words[1] = 0xff00_0000 | 0xe4 << 8;
    }
    if matches!(form.encoding, Encoding::Vop1Sdwa | Encoding::Vop2Sdwa | Encoding::VopcSdwa) {
        // dst_sel, src0_sel and src1_sel DWORD (6), dst_unused preserve... only where the
        // form has the field; the must bits below win.
        words[1] = if form.encoding == Encoding::VopcSdwa { 0x0606_0000 } else { 0x0606_0600 };
    }
    for (w, &(mask, value)) in entry.must.iter().enumerate() {
        words[w] = (words[w] & !mask) | value;
    }
    words
}

/// The operand fields that name a source register or constant in the 9-bit space.
const SOURCES: [Field; 3] = [Field::Src0, Field::Src1, Field::Src2];

/// DPP controls every DPP form is tried with (quad_perm, row shifts and rotates, wave
/// shifts and rotates, mirrors, broadcasts, row_newbcast).
const DPP_CONTROLS: [u32; 13] = [0x1b, 0x101, 0x10f, 0x111, 0x121, 0x130, 0x134, 0x138, 0x13c, 0x140, 0x141, 0x142, 0x143];

/// The variants of a form: the base words, VGPR sources, each modifier on its own, and
/// extra DPP/SDWA controls. Variants that do not decode back to the form are skipped by
/// the caller.
fn variants(form: &Form, base: &[u32; 3]) -> Vec<Vec<u32>> {
    let entry = &ENTRIES[form.entry as usize];
    let size = entry_words(form.encoding);
    let mut out = vec![base[..size].to_vec(), with_literal(base, size)];
    // Every 9-bit source a VGPR (v0), and each one alone (a form whose unused source
    // fields must stay zero decodes only so).
    let mut vgprs = *base;
    for field in SOURCES {
        if let Some((word, lo, 9)) = crate::decode::field_position(form.encoding, field) {
            vgprs[word as usize] |= 0x100 << lo;
            let mut one = *base;
            one[word as usize] |= 0x100 << lo;
            out.push(one[..size].to_vec());
        }
    }
    out.push(vgprs[..size].to_vec());
    // Each modifier field on its own, at its lowest and at its highest value.
    for bit in 0..64u32 {
        if entry.mods & (1 << bit) == 0 {
            continue;
        }
        let Some(field) = Field::from_bit(bit) else { continue };
        let Some((word, lo, width)) = crate::decode::field_position(form.encoding, field) else { continue };
        if word > 1 {
            continue;
        }
        let all = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
        for value in [1, all] {
            for words in [*base, vgprs] {
                let mut w = words;
                w[word as usize] = (w[word as usize] & !(all << lo)) | (value << lo);
                out.push(w[..size].to_vec());
            }
        }
    }
    match form.encoding {
        Encoding::Vop1Dpp | Encoding::Vop2Dpp | Encoding::VopcDpp => {
            for ctrl in DPP_CONTROLS.into_iter().chain(0x150..0x160) {
                for extra in [0, 1 << 19, 1 << 20 | 1 << 21 | 1 << 22 | 1 << 23] {
                    let mut w = *base;
                    w[1] = (w[1] & !(0x1ff << 8 | 0xf << 19)) | ctrl << 8 | extra;
                    out.push(w[..2].to_vec());
                }
            }
        }
        Encoding::Vop1Sdwa | Encoding::Vop2Sdwa | Encoding::VopcSdwa => {
            for sel in 0..7u32 {
                for extra in [0, 1 << 19 | 1 << 27, 1 << 20 | 1 << 21 | 1 << 28 | 1 << 29, 1 << 23 | 1 << 31] {
                    let mut w = *base;
                    w[1] = (w[1] & !(7 << 16 | 7 << 24 | 7 << 8)) | sel << 16 | sel << 24 | extra;
                    if form.encoding != Encoding::VopcSdwa {
                        w[1] |= sel << 8 | (sel % 3) << 11;
                    }
                    out.push(w[..2].to_vec());
                }
            }
        }
        _ => {}
    }
    out
}

/// The base words plus a literal slot for forms that may carry one (decoding decides
/// whether it belongs to the instruction).
fn with_literal(base: &[u32; 3], size: usize) -> Vec<u32> {
    let mut w = base[..size].to_vec();
    w.push(0x3f80_0000);
    w
}

fn entry_words(encoding: Encoding) -> usize {
    encoding.base_words()
}

/// A memory that is backed everywhere: reads give zeros, writes are dropped.
struct Backed;

impl DeviceMemory for Backed {
    fn read(&mut self, _addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        buf.fill(0);
        Ok(())
    }

    fn write(&mut self, _addr: u64, _data: &[u8]) -> Result<(), MemFault> {
        Ok(())
    }
}

/// Executes `words` once on a fresh wave whose registers make every access succeed.
fn run_once(target: Target, words: &[u32]) -> Result<(), ExecFault> {
    let mut code = words.to_vec();
    code.push(0xbf81_0000); // s_endpgm
    let program = Program::from_words(target, CODE_BASE, &code);
    let mut wave = probe_wave();
    let mut lds = vec![0u8; LDS_BYTES];
    let mut env = StepEnv { mem: &mut Backed, lds: &mut lds, clock: 0, realtime: 0, counts: None };
    let result = step(&mut wave, &program, &mut env, 1);
    if wave.status == WaveStatus::WaitMemory {
        // A deferred access: the executor accepted the instruction.
        return Ok(());
    }
    result.map(|_| ())
}

/// A wave with all registers allocated, EXEC all ones, M0 all ones (no LDS clamp) and
/// every aligned group of four SGPRs a buffer descriptor covering all of memory.
fn probe_wave() -> Wave {
    let mut wave = Wave::new(CODE_BASE, 0);
    for group in 0..25 {
        let s = 4 * group;
        wave.sgpr[s] = 0x1000;
        wave.sgpr[s + 1] = 0;
        wave.sgpr[s + 2] = u32::MAX;
        // dst_sel x/y/z/w, NUM_FORMAT float (7), DATA_FORMAT 32_32_32_32 (14).
        wave.sgpr[s + 3] = 0b111_110_101_100 | 7 << 12 | 14 << 15;
    }
    wave.sgpr[crate::exec::wave::M0] = u32::MAX;
    wave.set_exec(u64::MAX);
    wave
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_every_target_is_encodable() {
        for target in Target::ALL {
            let bad: Vec<_> = forms(target)
                .into_iter()
                .filter(|f| matches!(decode(target, &base_words(f)), Decoded::Inst(i) if i.opcode() != f.opcode) || !matches!(decode(target, &base_words(f)), Decoded::Inst(_)))
                .map(|f| format!("{} {:?} {:#x}", f.opcode.mnemonic(), f.encoding, f.opcode_field))
                .collect();
            assert!(bad.is_empty(), "{target}: forms whose table words do not decode back: {bad:#?}");
        }
    }
}
