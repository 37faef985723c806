//! Project hygiene checked as a test: every Rust file starts with a `//!` doc, and
//! no test is ignored or expected to panic, and no code is left unfinished.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if p.is_dir() {
            if !matches!(name.as_ref(), "target" | ".git" | "fuzz" | "corpus") {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn workspace_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("runner is inside the workspace");
    let mut files = Vec::new();
    for dir in ["simdojo", "models", "runner", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} files", files.len());
    files
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let missing: Vec<_> = workspace_files()
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !(first.starts_with("//!") || first.starts_with("// Generated") || first.starts_with("// @generated"))
        })
        .collect();
    assert!(missing.is_empty(), "files without a //! doc: {missing:#?}");
}

#[test]
fn no_ignored_or_should_panic_tests_and_no_unfinished_code() {
    let banned = [
        concat!("#[", "ignore"),
        concat!("#[", "should_panic"),
        concat!("to", "do!("),
        concat!("unimple", "mented!("),
    ];
    let mut hits = Vec::new();
    for p in workspace_files() {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for b in banned {
                if line.contains(b) {
                    hits.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(hits.is_empty(), "banned constructs:\n{}", hits.join("\n"));
}
