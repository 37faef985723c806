//! `llvm-objdump -d` style listing of a code section.
//!
//! **API Boundary:** the caller owns ELF parsing and passes the section bytes, its load
//! address and the function symbols; this module only formats.

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

fn symbolize(symbols: &[Symbol], target: u64) -> Option<String> {
    let sym = symbols.iter().filter(|s| s.address <= target).max_by_key(|s| s.address)?;
    let off = target - sym.address;
    Some(if off == 0 { format!("<{}>", sym.name) } else { format!("<{}+0x{off:x}>", sym.name) })
}

/// Formats `bytes` (loaded at `address`) like `llvm-objdump -d --mcpu=TARGET`: a blank
/// line and `ADDRESS <name>:` before each symbol, then one line per instruction,
/// `\tTEXT // ADDRESS: WORDS`, with branch targets as `<name+0xOFF>`.
pub fn disassemble_section(target: Target, bytes: &[u8], address: u64, symbols: &[Symbol]) -> String {
    let mut syms: Vec<&Symbol> = symbols.iter().collect();
    syms.sort_by_key(|s| s.address);
    let mut out = String::new();
    let mut pos = 0usize;
    let mut text = String::with_capacity(64);
    while pos + 4 <= bytes.len() {
        let pc = address + pos as u64;
        for s in syms.iter().filter(|s| s.address == pc) {
            let _ = write!(out, "\n{:016x} <{}>:\n", s.address, s.name);
        }
        let d = decode_bytes(target, &bytes[pos..bytes.len().min(pos + 12)]);
        text.clear();
        let mut branch = None;
        let size = match d {
            Decoded::Inst(inst) => {
                let _ = write_inst(&mut text, &inst);
                let e = inst.entry();
                if e.kind == Kind::Label && matches!(inst.encoding(), Encoding::Sopp | Encoding::Sopk) && e.ops.iter().any(|o| matches!(o, OpSpec::Field(crate::tables::Field::Simm16, _, _, _))) {
                    let simm = (inst.words()[0] & 0xffff) as u16 as i16 as i64;
                    let dest = pc as i64 + 4 + simm * 4;
                    if dest >= 0 {
                        branch = symbolize(symbols, dest as u64);
                    }
                }
                inst.size_bytes()
            }
            _ => {
                let w = u32::from_le_bytes([bytes[pos], bytes[pos + 1], bytes[pos + 2], bytes[pos + 3]]);
                let _ = write!(text, ".long 0x{w:08x}");
                4
            }
        };
        let size = size.min(bytes.len() - pos);
        let _ = write!(out, "\t{text:<59}// {pc:012X}:");
        for chunk in bytes[pos..pos + size].chunks_exact(4) {
            let w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            let _ = write!(out, " {w:08X}");
        }
        if let Some(b) = branch {
            let _ = write!(out, " {b}");
        }
        out.push('\n');
        pos += size;
    }
    out
}
