//! Golden decode/disassembly tests: `tests/data/TARGET.txt` holds `HEX_WORDS<TAB>LLVM TEXT`
//! cases generated from llvm-objdump (data/sweep/golden.py); every one must match.
//! `TARGET.pending.txt` holds the oracle cases this disassembler does not match yet; the
//! test prints the per-encoding match rate over both files.
//!
//! `UPDATE_GOLDEN=1` re-splits the union of both files by the current output.

use std::collections::BTreeMap;
use std::path::PathBuf;

use amdgpu_isa::decode::Encoding;
use amdgpu_isa::disasm::text;
use amdgpu_isa::Target;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

struct Case {
    words: Vec<u32>,
    expected: String,
    line: String,
}

fn read_cases(path: &PathBuf) -> Vec<Case> {
    let Ok(data) = std::fs::read_to_string(path) else { return Vec::new() };
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (hex, expected) = l.split_once('\t').unwrap_or_else(|| panic!("{}: no tab in `{l}`", path.display()));
            let words = hex
                .split_whitespace()
                .map(|w| u32::from_str_radix(w, 16).unwrap_or_else(|e| panic!("{}: bad hex `{w}`: {e}", path.display())))
                .collect();
            Case { words, expected: expected.to_string(), line: l.to_string() }
        })
        .collect()
}

fn matches(target: Target, c: &Case) -> bool {
    text(target, &c.words).map(|t| normalize(&t)) == Some(normalize(&c.expected))
}

fn check_target(target: Target) {
    let golden_path = data_dir().join(format!("{target}.txt"));
    let pending_path = data_dir().join(format!("{target}.pending.txt"));
    let golden = read_cases(&golden_path);
    let pending = read_cases(&pending_path);
    assert!(!golden.is_empty(), "{} is missing or empty", golden_path.display());
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let (mut pass, mut fail) = (String::new(), String::new());
        for c in golden.iter().chain(pending.iter()) {
            let dst = if matches(target, c) { &mut pass } else { &mut fail };
            dst.push_str(&c.line);
            dst.push('\n');
        }
        std::fs::write(&golden_path, pass).expect("write golden file");
        std::fs::write(&pending_path, fail).expect("write pending file");
        return;
    }
    let mut per_enc: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for c in &golden {
        let ok = matches(target, c);
        let e = per_enc.entry(Encoding::classify(c.words[0]).0.name()).or_default();
        e.1 += 1;
        if ok {
            e.0 += 1;
        } else {
            failures.push(format!(
                "{}: expected `{}`, got `{}`",
                c.words.iter().map(|w| format!("{w:08x}")).collect::<Vec<_>>().join(" "),
                c.expected,
                text(target, &c.words).unwrap_or_else(|| "<invalid>".into())
            ));
        }
    }
    for c in &pending {
        let ok = matches(target, c);
        let e = per_enc.entry(Encoding::classify(c.words[0]).0.name()).or_default();
        e.1 += 1;
        if ok {
            e.0 += 1;
        }
    }
    let mut report = format!("{target} match rate per encoding (golden + pending):");
    for (enc, (ok, n)) in &per_enc {
        report.push_str(&format!(" {enc} {ok}/{n} ({:.1}%);", 100.0 * *ok as f64 / *n as f64));
    }
    println!("{report}");
    if let Some(dump) = std::env::var_os("GOLDEN_DUMP") {
        std::fs::write(PathBuf::from(dump).join(format!("{target}.mismatch")), failures.join("\n")).expect("write dump");
    }
    assert!(failures.is_empty(), "{} golden mismatches for {target}, first: {:#?}", failures.len(), &failures[..failures.len().min(20)]);
}

#[test]
fn golden_gfx90a() {
    check_target(Target::Gfx90a);
}

#[test]
fn golden_gfx942() {
    check_target(Target::Gfx942);
}

#[test]
fn golden_gfx950() {
    check_target(Target::Gfx950);
}
