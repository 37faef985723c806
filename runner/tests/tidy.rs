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

/// Parameters are read through the typed structs their types derive
/// (`#[derive(simdojo::Params)]`, `ParamSet::from_params`) or the typed view of a GPU
/// topology (`amdgpu::host::machine::Machine`), never looked up by name: a name typed
/// twice is a default or a conversion written twice. Only the parameter layer itself
/// (`simdojo::params`), the topology layer that loads and checks values
/// (`simdojo::topology`) and their tests read values by name.
#[test]
fn no_string_keyed_parameter_reads_outside_the_parameter_and_topology_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("runner is inside the workspace");
    let allowed = |p: &Path| {
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
        rel == "simdojo/src/params.rs"
            || rel.starts_with("simdojo/src/topology/")
            || rel.starts_with("simdojo/tests/")
            // Issue 26, not yet done: the KFD identity and its node list still read the
            // SoC's and the XGMI blocks' parameters by name (to move onto the Machine view).
            || rel == "models/kmd-linux/src/identity.rs"
            || rel == "models/kmd-linux/src/kfd/machine.rs"
    };
    let getters = ["uint", "int", "bytes", "string", "float", "bool", "duration", "clock", "get"];
    let mut hits = Vec::new();
    for p in workspace_files().into_iter().filter(|p| !allowed(p)) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for g in getters {
                if line.contains(&format!("params.{g}(")) || line.contains(&format!("params().{g}(")) {
                    hits.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(hits.is_empty(), "parameters read by name (use the type's parameter struct):\n{}", hits.join("\n"));
}

/// One build path: outside the modules that define them and the one that uses them
/// (`amdgpu::host::spec`), nothing loads a topology, applies overrides or expands a
/// mode itself (every front end resolves a `MachineSpec`). Tests and test modules may.
#[test]
fn machines_are_resolved_only_through_the_machine_spec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("runner is inside the workspace");
    let allowed = |p: &Path| {
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
        rel == "models/amdgpu/src/host/spec.rs"
            || rel.starts_with("simdojo/src/topology/")
            || rel == "models/amdgpu/src/components/cu/mode.rs"
            || rel.contains("/tests/")
            || rel.ends_with("/tests.rs")
            || rel.starts_with("runner/tests/")
    };
    let calls = ["topology::load(", "topology::load_str(", "overrides::apply(", "mode_overrides("];
    let mut hits = Vec::new();
    for p in workspace_files().into_iter().filter(|p| !allowed(p)) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        // A file's test module comes last: what follows `#[cfg(test)]` is test code.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if calls.iter().any(|c| line.contains(c)) && !line.trim_start().starts_with("//") {
                hits.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(hits.is_empty(), "a machine set up outside amdgpu::host::spec (resolve a MachineSpec):\n{}", hits.join("\n"));
}
