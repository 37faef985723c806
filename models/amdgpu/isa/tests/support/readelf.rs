//! An independent view of a code object's metadata: `llvm-readelf --notes` prints the
//! MessagePack note as YAML; this reads back the kernel-level scalars and the arguments.
//! Only the layout llvm-readelf prints is handled (2-space kernel items, 4-space kernel
//! keys, 6-space argument items, 8-space argument keys).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::build::Toolchain;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReadelfKernel {
    /// Kernel-level `.key: value` scalars.
    pub fields: BTreeMap<String, String>,
    /// One map per argument.
    pub args: Vec<BTreeMap<String, String>>,
}

impl ReadelfKernel {
    pub fn get(&self, key: &str) -> &str {
        self.fields.get(key).map(String::as_str).unwrap_or_else(|| panic!("llvm-readelf printed no {key}"))
    }

    pub fn number(&self, key: &str) -> u64 {
        self.get(key).parse().unwrap_or_else(|_| panic!("{key}: {:?} is not a number", self.get(key)))
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReadelfNotes {
    pub target: Option<String>,
    pub kernels: Vec<ReadelfKernel>,
}

fn split_key(text: &str) -> Option<(String, String)> {
    let (key, value) = text.split_once(':')?;
    Some((key.trim().to_string(), value.trim().trim_matches('\'').to_string()))
}

pub fn parse_notes(text: &str) -> ReadelfNotes {
    let mut notes = ReadelfNotes::default();
    let mut in_kernels = false;
    // The kernel-level key whose nested lines follow (only `.args` items are arguments).
    let mut kernel_key = String::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if indent == 0 {
            in_kernels = body.starts_with("amdhsa.kernels:");
            if let Some(target) = body.strip_prefix("amdhsa.target:") {
                notes.target = Some(target.trim().trim_matches('\'').to_string());
            }
            continue;
        }
        if !in_kernels {
            continue;
        }
        let (depth, entry) = match body.strip_prefix("- ") {
            Some(rest) => {
                // "- " opens a new list item at this indent; its first key follows.
                match indent {
                    2 => notes.kernels.push(ReadelfKernel::default()),
                    6 if kernel_key == ".args" => {
                        if let Some(kernel) = notes.kernels.last_mut() {
                            kernel.args.push(BTreeMap::new());
                        }
                    }
                    _ => {}
                }
                (indent + 2, rest)
            }
            None => (indent, body),
        };
        let Some((key, value)) = split_key(entry) else { continue };
        let Some(kernel) = notes.kernels.last_mut() else { continue };
        match depth {
            4 => {
                kernel_key = key.clone();
                kernel.fields.insert(key, value);
            }
            8 if kernel_key == ".args" => {
                if let Some(arg) = kernel.args.last_mut() {
                    arg.insert(key, value);
                }
            }
            _ => {}
        }
    }
    notes
}

/// Run `llvm-readelf --notes` and parse its output; fails the test if it cannot run.
pub fn notes_or_fail(toolchain: Toolchain, code_object: &Path) -> ReadelfNotes {
    let output = Command::new(toolchain.readelf)
        .arg("--notes")
        .arg(code_object)
        .output()
        .unwrap_or_else(|err| {
            panic!("running {}: {err} (apt-get install -y --no-install-recommends {})", toolchain.readelf, toolchain.apt_packages)
        });
    assert!(output.status.success(), "{} --notes {} failed", toolchain.readelf, code_object.display());
    parse_notes(&String::from_utf8_lossy(&output.stdout))
}

/// `llvm-readelf -h` flags line, e.g. `0x54c, gfx942, xnack, sramecc`.
pub fn header_flags_or_fail(toolchain: Toolchain, code_object: &Path) -> (u32, String) {
    let output = Command::new(toolchain.readelf)
        .arg("-h")
        .arg(code_object)
        .output()
        .unwrap_or_else(|err| panic!("running {}: {err}", toolchain.readelf));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let line = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("Flags:"))
        .unwrap_or_else(|| panic!("no Flags: line in llvm-readelf -h output:\n{text}"))
        .trim()
        .to_string();
    let hex = line.split(',').next().unwrap_or("").trim().trim_start_matches("0x");
    let value = u32::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("bad flags value in {line:?}"));
    (value, line)
}
