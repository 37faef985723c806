//! `llvm-objdump -d` style listing of a code section.
//!
//! **API Boundary:** the caller owns ELF parsing and passes the section bytes, its load
//! address and the function symbols; this module only walks ([`listing`]) and formats
//! ([`disassemble_section`]).

use std::fmt::Write as _;

use super::write_inst;
use crate::decode::{decode_bytes, Decoded, Encoding};
use crate::tables::{Kind, OpSpec};
use crate::Target;

/// A symbol that starts a function in the section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Symbol name.
    pub name: String,
    /// Absolute address.
    pub address: u64,
}

/// `<name+0xOFF>` for `target`: the nearest symbol at or before it, the last given of
/// several at one address. `sorted` is ordered by address, stably.
fn symbolize(sorted: &[&Symbol], target: u64) -> Option<String> {
    let at_or_before = sorted.partition_point(|s| s.address <= target);
    let sym = sorted.get(at_or_before.checked_sub(1)?)?;
    let off = target - sym.address;
    Some(if off == 0 { format!("<{}>", sym.name) } else { format!("<{}+0x{off:x}>", sym.name) })
}

/// Fewest zero bytes llvm-objdump collapses into one `...` line.
const MIN_SKIPPED_ZEROS: usize = 8;

/// One entry of a section's listing, in address order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListingItem<'a> {
    /// A symbol starts here.
    Label(&'a Symbol),
    /// A run of zero bytes llvm-objdump prints as `...` instead of instructions.
    Zeros {
        /// Address of the first byte.
        address: u64,
        /// How many bytes are skipped (a multiple of 4).
        len: usize,
    },
    /// An instruction, or a word that is none (`.long`).
    Code {
        /// Its address.
        address: u64,
        /// What the decoder made of it.
        decoded: Decoded,
        /// Its bytes (4 for a word that is no instruction; fewer than the instruction
        /// needs when the section ends inside it).
        bytes: &'a [u8],
    },
}

/// Walks a section the way `llvm-objdump -d` lists it: labels where symbols start, zero
/// runs, instructions. Made by [`listing`].
pub struct Listing<'a> {
    target: Target,
    bytes: &'a [u8],
    address: u64,
    /// The symbols, sorted by address (stably).
    syms: Vec<&'a Symbol>,
    /// The next symbol to label: symbols are walked with the section, not searched.
    next_sym: usize,
    pos: usize,
}

/// The listing of `bytes` (loaded at `address`, with `symbols`) as [`ListingItem`]s:
/// what [`disassemble_section`] prints, for callers that count instead of print. As
/// llvm-objdump does (without `-z`), a run of 8 or more zero bytes at an instruction
/// boundary, up to the next symbol, is skipped in whole words as one
/// [`ListingItem::Zeros`], not read as `v_cndmask_b32` instructions.
pub fn listing<'a>(target: Target, bytes: &'a [u8], address: u64, symbols: &'a [Symbol]) -> Listing<'a> {
    let mut syms: Vec<&Symbol> = symbols.iter().collect();
    syms.sort_by_key(|s| s.address);
    Listing { target, bytes, address, syms, next_sym: 0, pos: 0 }
}

impl<'a> Iterator for Listing<'a> {
    type Item = ListingItem<'a>;

    fn next(&mut self) -> Option<ListingItem<'a>> {
        let bytes = self.bytes;
        if self.pos + 4 > bytes.len() {
            return None;
        }
        let pc = self.address + self.pos as u64;
        while self.syms.get(self.next_sym).is_some_and(|s| s.address < pc) {
            self.next_sym += 1;
        }
        if let Some(&s) = self.syms.get(self.next_sym).filter(|s| s.address == pc) {
            self.next_sym += 1;
            return Some(ListingItem::Label(s));
        }
        let end = self.syms.get(self.next_sym).map_or(bytes.len(), |s| usize::try_from(s.address - self.address).unwrap_or(usize::MAX));
        let zeros = bytes[self.pos..end.min(bytes.len())].iter().take_while(|&&b| b == 0).count();
        if zeros >= MIN_SKIPPED_ZEROS {
            self.pos += zeros & !3;
            return Some(ListingItem::Zeros { address: pc, len: zeros & !3 });
        }
        let decoded = decode_bytes(self.target, &bytes[self.pos..bytes.len().min(self.pos + 12)]);
        let size = decoded.size_bytes().min(bytes.len() - self.pos);
        let code = &bytes[self.pos..self.pos + size];
        self.pos += size;
        Some(ListingItem::Code { address: pc, decoded, bytes: code })
    }
}

/// Formats `bytes` (loaded at `address`) like `llvm-objdump -d --mcpu=TARGET`: a blank
/// line and `ADDRESS <name>:` before each symbol, then one line per instruction,
/// `\tTEXT // ADDRESS: WORDS`, with branch targets as `<name+0xOFF>`, and `\t\t...` for
/// a skipped run of zeros (see [`listing`]).
pub fn disassemble_section(target: Target, bytes: &[u8], address: u64, symbols: &[Symbol]) -> String {
    let items = listing(target, bytes, address, symbols);
    let syms = items.syms.clone();
    let mut out = String::new();
    let mut text = String::with_capacity(64);
    for item in items {
        let (pc, decoded, code) = match item {
            ListingItem::Label(s) => {
                let _ = write!(out, "\n{:016x} <{}>:\n", s.address, s.name);
                continue;
            }
            ListingItem::Zeros { .. } => {
                out.push_str("\t\t...\n");
                continue;
            }
            ListingItem::Code { address, decoded, bytes } => (address, decoded, bytes),
        };
        text.clear();
        let mut branch = None;
        match decoded {
            Decoded::Inst(inst) => {
                let _ = write_inst(&mut text, &inst);
                let e = inst.entry();
                if e.kind == Kind::Label && matches!(inst.encoding(), Encoding::Sopp | Encoding::Sopk) && e.ops.iter().any(|o| matches!(o, OpSpec::Field(crate::tables::Field::Simm16, _, _, _))) {
                    let simm = (inst.words()[0] & 0xffff) as u16 as i16 as i64;
                    let dest = pc as i64 + 4 + simm * 4;
                    if dest >= 0 {
                        branch = symbolize(&syms, dest as u64);
                    }
                }
            }
            _ => {
                let w = u32::from_le_bytes([code[0], code[1], code[2], code[3]]);
                let _ = write!(text, ".long 0x{w:08x}");
            }
        }
        let _ = write!(out, "\t{text:<59}// {pc:012X}:");
        for chunk in code.chunks_exact(4) {
            let w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            let _ = write!(out, " {w:08X}");
        }
        if let Some(b) = branch {
            let _ = write!(out, " {b}");
        }
        out.push('\n');
    }
    out
}
