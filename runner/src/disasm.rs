//! `dojo disasm [--mcpu gfxNNN] FILE`: a code object's `.text`, listed like
//! `llvm-objdump -d --mcpu=gfxNNN FILE`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, Context as _};
use amdgpu::isa::code_object::CodeObject;
use amdgpu::isa::disasm::{disassemble_section, text_symbols};
use amdgpu::isa::Target;
use crate::output::{out, outln};

pub fn run(file: &Path, mcpu: Option<&str>) -> anyhow::Result<ExitCode> {
    let bytes = amdgpu::host::loader::read_image(file).with_context(|| format!("reading {}", file.display()))?;
    let co = CodeObject::parse(&bytes).with_context(|| format!("{}", file.display()))?;
    let target: Target = match mcpu {
        Some(m) => m.parse()?,
        None => co
            .target()
            .name()
            .ok_or_else(|| anyhow!("{}: {} is not a supported target; pass --mcpu", file.display(), co.target().mach()))?
            .parse()?,
    };
    let text = co.text();
    let start = text.address.0;
    let symbols = text_symbols(&co);
    outln!()?;
    outln!("{}:\tfile format elf64-amdgpu", file.display())?;
    outln!()?;
    outln!("Disassembly of section .text:")?;
    out!("{}", disassemble_section(target, &text.bytes, start, &symbols))?;
    Ok(ExitCode::SUCCESS)
}
