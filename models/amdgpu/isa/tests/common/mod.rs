//! Helpers shared by the tests that run LLVM tools (llvm-mc, llvm-objdump, clang).

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu_isa::Target;

/// LLVM major version whose tools handle `target` here.
pub fn llvm_version(target: Target) -> u32 {
    match target {
        Target::Gfx950 => 22,
        _ => 19,
    }
}

/// Path of an LLVM tool (`llvm-mc-19`, ...); panics naming the apt package if absent,
/// so a machine without the oracle fails instead of silently passing.
pub fn tool(name: &str, version: u32) -> String {
    let exe = format!("{name}-{version}");
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(&exe).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{exe}` not found: install it with `apt-get install -y --no-install-recommends llvm-{version} clang-{version} lld-{version}`"
    );
    exe
}

/// A fresh scratch directory under the target dir.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs a command, panicking with its stderr on failure.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Filler word placed after every case: `s_nop 0x1234`, also a harmless literal.
pub const FILL: u32 = 0xbf80_1234;

/// What llvm-objdump said about one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Oracle {
    /// The printed instruction text.
    Text(String),
    /// LLVM rejects the word (`.long`).
    Invalid,
    /// llvm-objdump crashes on this word (a tool bug); the case is skipped.
    Crash,
}

fn oracle_batch(target: Target, cases: &[Vec<u32>], dir: &Path) -> Option<Vec<Oracle>> {
    let v = llvm_version(target);
    let mut src = String::from(".text\n");
    let mut starts = Vec::with_capacity(cases.len());
    let mut addr = 0u64;
    for c in cases {
        starts.push(addr);
        for w in c.iter().chain([FILL, FILL].iter()) {
            src.push_str(&format!(".long 0x{w:08x}\n"));
            addr += 4;
        }
    }
    let s = dir.join("cases.s");
    let o = dir.join("cases.o");
    std::fs::write(&s, src).expect("write cases.s");
    run(Command::new(tool("llvm-mc", v))
        .arg("-triple=amdgcn-amd-amdhsa")
        .arg(format!("-mcpu={target}"))
        .arg("-filetype=obj")
        .arg(&s)
        .arg("-o")
        .arg(&o));
    let out = Command::new(tool("llvm-objdump", v))
        .arg("-d")
        .arg(format!("--mcpu={target}"))
        .arg(&o)
        .output()
        .unwrap_or_else(|e| panic!("cannot run llvm-objdump: {e}"));
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut by_addr = HashMap::new();
    for line in text.lines() {
        let Some(body) = line.strip_prefix('\t') else { continue };
        let Some((inst, rest)) = body.rsplit_once("// ") else { continue };
        let Some((a, _)) = rest.split_once(':') else { continue };
        if let Ok(a) = u64::from_str_radix(a.trim(), 16) {
            by_addr.insert(a, inst.trim().to_string());
        }
    }
    Some(
        starts
            .iter()
            .map(|a| match by_addr.get(a) {
                Some(t) if !t.starts_with(".long") => Oracle::Text(t.clone()),
                _ => Oracle::Invalid,
            })
            .collect(),
    )
}

/// Disassembles each case with llvm-objdump; each case is followed by two [`FILL`] words.
/// Batches that crash the tool are bisected; single crashing cases come back as
/// [`Oracle::Crash`].
pub fn oracle(target: Target, cases: &[Vec<u32>], dir: &Path) -> Vec<Oracle> {
    if cases.is_empty() {
        return Vec::new();
    }
    if let Some(r) = oracle_batch(target, cases, dir) {
        return r;
    }
    if cases.len() == 1 {
        return vec![Oracle::Crash];
    }
    let (a, b) = cases.split_at(cases.len() / 2);
    let mut r = oracle(target, a, dir);
    r.extend(oracle(target, b, dir));
    r
}

/// Whitespace-normalised text.
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Assembles `text` for `target` with the system's `llvm-mc` (19 for gfx90a/gfx942, 22
/// for gfx950) into instruction words, with an `s_endpgm` appended.
pub fn assemble(target: Target, text: &str) -> Vec<u32> {
    use std::io::Write;
    let mc = tool("llvm-mc", llvm_version(target));
    let source = format!("{text}\ns_endpgm\n");
    let mut child = Command::new(&mc)
        .args(["-arch=amdgcn", &format!("-mcpu={}", target.name()), "-show-encoding"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{mc}: {e}"));
    child.stdin.take().expect("piped stdin").write_all(source.as_bytes()).expect("write to llvm-mc");
    let output = child.wait_with_output().expect("llvm-mc runs");
    assert!(output.status.success(), "{mc} failed on:\n{text}\n{}", String::from_utf8_lossy(&output.stderr));
    let mut bytes = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((_, enc)) = line.split_once("encoding: [") else { continue };
        for b in enc.trim_end_matches(']').split(',') {
            bytes.push(u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("hex byte"));
        }
    }
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The `.text` part of an `llvm-objdump -d` listing: everything after its
/// `Disassembly of section .text:` header (the layout `disassemble_section` prints).
pub fn objdump_text_body(listing: &str) -> &str {
    listing.split_once("Disassembly of section .text:\n").expect("objdump printed a .text section").1
}

/// How two listings in `llvm-objdump -d` layout compare, line by line with empty lines
/// skipped.
#[derive(Clone, Debug, Default)]
pub struct ListingComparison {
    /// Non-empty lines of the expected (llvm-objdump) listing.
    pub expected_lines: usize,
    /// Non-empty lines of ours.
    pub got_lines: usize,
    /// Instruction lines (tab-indented) of the expected listing.
    pub instructions: usize,
    /// Lines that differ.
    pub mismatches: usize,
    /// The first few differing pairs, as `llvm: ...\nours: ...`.
    pub examples: Vec<String>,
}

impl ListingComparison {
    /// Whether the listings are identical line for line.
    pub fn matches(&self) -> bool {
        self.mismatches == 0 && self.expected_lines == self.got_lines
    }
}

/// Compares `got` with `expected` line by line (both in `llvm-objdump -d` layout),
/// keeping up to `max_examples` differing pairs.
pub fn compare_listings(expected: &str, got: &str, max_examples: usize) -> ListingComparison {
    let mut cmp = ListingComparison::default();
    let mut expected_lines = expected.lines().filter(|l| !l.is_empty());
    let mut got_lines = got.lines().filter(|l| !l.is_empty());
    loop {
        let (e, g) = (expected_lines.next(), got_lines.next());
        if e.is_none() && g.is_none() {
            return cmp;
        }
        cmp.expected_lines += usize::from(e.is_some());
        cmp.got_lines += usize::from(g.is_some());
        cmp.instructions += usize::from(e.is_some_and(|l| l.starts_with('\t')));
        if let (Some(e), Some(g)) = (e, g) {
            if e != g {
                cmp.mismatches += 1;
                if cmp.examples.len() < max_examples {
                    cmp.examples.push(format!("llvm: {e}\nours: {g}"));
                }
            }
        }
    }
}

/// The census's list of forms that do not execute yet (see tests/census.rs).
pub const CENSUS_GAPS_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/census-gaps.txt");

/// The `TARGET ENCODING MNEMONIC` lines of [`CENSUS_GAPS_FILE`] (empty when it is absent).
pub fn census_gaps() -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(CENSUS_GAPS_FILE).unwrap_or_default();
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string).collect()
}

/// The key of a form in [`CENSUS_GAPS_FILE`].
pub fn census_gap_key(target: Target, encoding: &str, mnemonic: &str) -> String {
    format!("{target} {encoding} {mnemonic}")
}
