//! Compiles small C kernels (tests/data/kernels/kernels.c) with clang for every target,
//! disassembles the code section with `disassemble_section` and compares every line with
//! `llvm-objdump -d`. Needs clang/lld/llvm 19 and 22 (fails naming the package otherwise).

mod common;

use std::process::Command;

use amdgpu_isa::disasm::{disassemble_section, Symbol};
use amdgpu_isa::Target;
use common::{llvm_version, run, scratch_dir, tool};

struct Section {
    bytes: Vec<u8>,
    address: u64,
    symbols: Vec<Symbol>,
}

/// Reads `.text` with LLVM tools (this crate takes the section as input on purpose).
fn text_section(co: &std::path::Path, v: u32, dir: &std::path::Path) -> Section {
    let bin = dir.join("text.bin");
    run(Command::new(tool("llvm-objcopy", v)).arg("-O").arg("binary").arg("--only-section=.text").arg(co).arg(&bin));
    let bytes = std::fs::read(&bin).expect("read text.bin");
    let headers = run(Command::new(tool("llvm-readelf", v)).arg("-S").arg("-W").arg(co));
    let line = headers.lines().find(|l| l.contains(" .text ")).expect(".text section header");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let pos = fields.iter().position(|f| *f == ".text").expect(".text name");
    let address = u64::from_str_radix(fields[pos + 2], 16).expect("section address");
    let nm = run(Command::new(tool("llvm-nm", v)).arg(co));
    let symbols = nm
        .lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            (p.len() == 3 && matches!(p[1], "t" | "T")).then(|| Symbol {
                name: p[2].to_string(),
                address: u64::from_str_radix(p[0], 16).expect("symbol address"),
            })
        })
        .collect();
    Section { bytes, address, symbols }
}

fn check(target: Target) {
    let v = llvm_version(target);
    let dir = scratch_dir(&format!("kernels-{target}"));
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kernels/kernels.c");
    let obj = dir.join("k.o");
    let co = dir.join("k.co");
    run(Command::new(tool("clang", v))
        .arg("--target=amdgcn-amd-amdhsa")
        .arg(format!("-mcpu={target}"))
        .args(["-nogpulib", "-O2", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj));
    run(Command::new(tool("ld.lld", v)).arg("-shared").arg(&obj).arg("-o").arg(&co));
    let llvm = run(Command::new(tool("llvm-objdump", v)).arg("-d").arg(format!("--mcpu={target}")).arg(&co));
    let llvm_body = llvm.split_once("Disassembly of section .text:\n").expect("objdump text section").1;
    let section = text_section(&co, v, &dir);
    let ours = disassemble_section(target, &section.bytes, section.address, &section.symbols);
    let expected: Vec<&str> = llvm_body.lines().filter(|l| !l.is_empty()).collect();
    let got: Vec<&str> = ours.lines().filter(|l| !l.is_empty()).collect();
    let mismatches: Vec<String> = expected
        .iter()
        .zip(got.iter())
        .filter(|(e, g)| e != g)
        .map(|(e, g)| format!("llvm: {e}\nours: {g}"))
        .collect();
    let n_inst = expected.iter().filter(|l| l.starts_with('\t')).count();
    println!("{target}: {} listing lines ({n_inst} instructions), {} mismatches", expected.len(), mismatches.len());
    assert_eq!(expected.len(), got.len(), "line count differs for {target}");
    assert!(mismatches.is_empty(), "{target}: {} mismatching lines:\n{}", mismatches.len(), mismatches[..mismatches.len().min(15)].join("\n"));
}

#[test]
fn kernels_gfx90a() {
    check(Target::Gfx90a);
}

#[test]
fn kernels_gfx942() {
    check(Target::Gfx942);
}

#[test]
fn kernels_gfx950() {
    check(Target::Gfx950);
}
