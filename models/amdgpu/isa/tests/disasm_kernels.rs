//! Compiles small C kernels (tests/data/kernels/kernels.c) with clang for every target,
//! disassembles the code section with `disassemble_section` and compares every line with
//! `llvm-objdump -d`; the same for hand-placed zero runs, which llvm-objdump lists as
//! `...`. Needs clang/lld/llvm 19 and 22 (fails naming the package otherwise).

mod common;

use std::process::Command;

use amdgpu_isa::disasm::{disassemble_section, Symbol};
use amdgpu_isa::Target;
use common::{compare_listings, llvm_version, objdump_text_body, run, scratch_dir, tool};

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

/// Links `obj` into a shared object and compares our listing of its `.text` with
/// llvm-objdump's.
fn compare_with_llvm_objdump(target: Target, obj: &std::path::Path, dir: &std::path::Path) {
    let v = llvm_version(target);
    let co = dir.join("k.co");
    run(Command::new(tool("ld.lld", v)).arg("-shared").arg(obj).arg("-o").arg(&co));
    let llvm = run(Command::new(tool("llvm-objdump", v)).arg("-d").arg(format!("--mcpu={target}")).arg(&co));
    let section = text_section(&co, v, dir);
    let ours = disassemble_section(target, &section.bytes, section.address, &section.symbols);
    let cmp = compare_listings(objdump_text_body(&llvm), &ours, 15);
    println!("{target}: {} listing lines ({} instructions), {} mismatches", cmp.expected_lines, cmp.instructions, cmp.mismatches);
    assert_eq!(cmp.expected_lines, cmp.got_lines, "line count differs for {target}:\n{ours}");
    assert!(cmp.mismatches == 0, "{target}: {} mismatching lines:\n{}", cmp.mismatches, cmp.examples.join("\n"));
}

fn check(target: Target) {
    let v = llvm_version(target);
    let dir = scratch_dir(&format!("kernels-{target}"));
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kernels/kernels.c");
    let obj = dir.join("k.o");
    run(Command::new(tool("clang", v))
        .arg("--target=amdgcn-amd-amdhsa")
        .arg(format!("-mcpu={target}"))
        .args(["-nogpulib", "-O2", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj));
    compare_with_llvm_objdump(target, &obj, &dir);
}

/// Zero words between instructions: one is `v_cndmask_b32`, two or more (8 bytes) are one
/// `...` line; a run stops at the next symbol, which may itself start with zeros.
const ZERO_RUNS: &str = "
.text
.globl f
.type f,@function
f:
  s_nop 0
  .long 0
  s_nop 1
  .long 0, 0
  s_nop 2
  .long 0, 0, 0
  s_nop 3
  .byte 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7e
  s_endpgm
  .long 0, 0
.globl g
.type g,@function
g:
  .long 0, 0, 0
  s_endpgm
  .long 0
";

#[test]
fn zero_runs_list_as_llvm_objdump_lists_them() {
    let target = Target::Gfx90a;
    let v = llvm_version(target);
    let dir = scratch_dir("zero-runs");
    let src = dir.join("zeros.s");
    let obj = dir.join("zeros.o");
    std::fs::write(&src, ZERO_RUNS).expect("write zeros.s");
    run(Command::new(tool("llvm-mc", v))
        .args(["-triple=amdgcn-amd-amdhsa", &format!("-mcpu={target}"), "-filetype=obj"])
        .arg(&src)
        .arg("-o")
        .arg(&obj));
    compare_with_llvm_objdump(target, &obj, &dir);
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
