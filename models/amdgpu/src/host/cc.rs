//! `cc`: compiles C programs for the simulated GPU into code objects that
//! `dojo exec` can load.
//!
//! The device runtime (`runtime/` in this crate: `_begin`/`_start`/`_end`,
//! the RPC client `__llvm_rpc_client`, `<stdio.h>`, `<stdlib.h>`,
//! `<string.h>`) is embedded in the crate and written to a cache directory
//! keyed by a hash of its contents, so an installed binary works anywhere.
//! The user's files and the runtime are compiled together with `-flto` by
//! the clang of the target's toolchain (clang-19 for gfx90a and gfx942,
//! clang-22 for gfx950), which links a code object with its `ld.lld`.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use amdgpu_isa::Target;
use sha2::{Digest, Sha256};

/// The runtime sources, by path relative to the runtime directory.
const RUNTIME_FILES: &[(&str, &str)] = &[
    ("include/__dojo_config.h", include_str!("../../runtime/include/__dojo_config.h")),
    ("include/stdio.h", include_str!("../../runtime/include/stdio.h")),
    ("include/stdlib.h", include_str!("../../runtime/include/stdlib.h")),
    ("include/string.h", include_str!("../../runtime/include/string.h")),
    ("src/rpc_lane.h", include_str!("../../runtime/src/rpc_lane.h")),
    ("src/rpc_client.h", include_str!("../../runtime/src/rpc_client.h")),
    ("src/rpc_port.h", include_str!("../../runtime/src/rpc_port.h")),
    ("src/rpc_client.c", include_str!("../../runtime/src/rpc_client.c")),
    ("src/start.c", include_str!("../../runtime/src/start.c")),
    ("src/stdio.c", include_str!("../../runtime/src/stdio.c")),
    ("src/stdlib.c", include_str!("../../runtime/src/stdlib.c")),
    ("src/string.c", include_str!("../../runtime/src/string.c")),
];

/// Optimization level passed to clang (and to LTO).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptLevel {
    /// `-O0`.
    O0,
    /// `-O1`.
    O1,
    /// `-O2`.
    #[default]
    O2,
    /// `-O3`.
    O3,
}

impl OptLevel {
    fn flag(self) -> &'static str {
        match self {
            OptLevel::O0 => "-O0",
            OptLevel::O1 => "-O1",
            OptLevel::O2 => "-O2",
            OptLevel::O3 => "-O3",
        }
    }
}

/// What to compile.
#[derive(Clone, Debug)]
pub struct CcOptions {
    /// The GPU to compile for.
    pub mcpu: Target,
    /// Optimization level.
    pub opt: OptLevel,
    /// The code object to write.
    pub output: PathBuf,
    /// The user's C files.
    pub inputs: Vec<PathBuf>,
    /// More clang flags, passed after ours (e.g. `-DN=4`, `-Wall`).
    pub extra_flags: Vec<String>,
}

/// What a successful compile produced.
#[derive(Clone, Debug)]
pub struct CcOutput {
    /// The code object.
    pub path: PathBuf,
    /// The clang that built it.
    pub clang: PathBuf,
    /// The full command line that ran.
    pub command: Vec<String>,
}

/// Why a compile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CcError {
    /// No C file was given.
    #[error("no input files")]
    NoInputs,
    /// A tool of the target's toolchain is not installed.
    #[error("{tool} not found in PATH or {fallback} (install it: {hint})")]
    ToolNotFound {
        /// The tool (`clang-19`, `ld.lld-22`, ...).
        tool: String,
        /// The other place that was searched.
        fallback: String,
        /// The Debian packages that provide it.
        hint: String,
    },
    /// The runtime cache could not be written.
    #[error("device runtime cache {path}: {source}")]
    Cache {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// clang could not be started.
    #[error("could not run `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// clang failed.
    #[error("`{command}` failed ({status}):\n{stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
}

/// LLVM major version of the toolchain used for a target.
pub fn llvm_version(mcpu: Target) -> u32 {
    match mcpu {
        Target::Gfx90a | Target::Gfx942 => 19,
        Target::Gfx950 => 22,
    }
}

/// Finds `name` in PATH, then in LLVM's own bin directory.
fn find_tool(name: &str, plain: &str, version: u32) -> Result<PathBuf, CcError> {
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    let fallback = PathBuf::from(format!("/usr/lib/llvm-{version}/bin/{plain}"));
    if fallback.is_file() {
        return Ok(fallback);
    }
    Err(CcError::ToolNotFound {
        tool: name.to_string(),
        fallback: fallback.display().to_string(),
        hint: format!("apt-get install clang-{version} lld-{version}"),
    })
}

/// Hex digest of every runtime file's path and contents.
fn runtime_hash() -> String {
    let mut hasher = Sha256::new();
    for (path, text) in RUNTIME_FILES {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SIMDOJO_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("simdojo");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache").join("simdojo");
    }
    std::env::temp_dir().join("simdojo-cache")
}

/// Writes the embedded runtime to the user's cache directory
/// (`$SIMDOJO_CACHE_DIR`, else `$XDG_CACHE_HOME/simdojo`, else
/// `~/.cache/simdojo`) once per content hash and returns its directory.
pub fn runtime_dir() -> Result<PathBuf, CcError> {
    runtime_dir_in(&cache_root())
}

/// Like [`runtime_dir`] under an explicit cache root. Concurrent writers each
/// build a private copy and rename it into place; the first rename wins.
pub fn runtime_dir_in(root: &Path) -> Result<PathBuf, CcError> {
    let dir = root.join(format!("amdgpu-runtime-{}", runtime_hash()));
    let marker = dir.join(".complete");
    if marker.is_file() {
        return Ok(dir);
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CcError::Cache { path, source }
    };
    let parent = root.to_path_buf();
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    // Unique per call: threads of one process may install at the same time.
    static STAGING: AtomicU64 = AtomicU64::new(0);
    let n = STAGING.fetch_add(1, Ordering::Relaxed);
    let staging = parent.join(format!(".staging-{}-{n}-{}", std::process::id(), runtime_hash()));
    for (rel, text) in RUNTIME_FILES {
        let path = staging.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io(p))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    let staged_marker = staging.join(".complete");
    std::fs::write(&staged_marker, b"").map_err(io(&staged_marker))?;
    if std::fs::rename(&staging, &dir).is_err() {
        // Someone else installed it first (or a stale partial copy is in
        // the way): keep theirs if complete, else replace it.
        if !marker.is_file() {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::rename(&staging, &dir).map_err(io(&dir))?;
        }
        let _ = std::fs::remove_dir_all(&staging);
    }
    Ok(dir)
}

/// The runtime's C sources inside a runtime directory.
fn runtime_sources(dir: &Path) -> Vec<PathBuf> {
    RUNTIME_FILES
        .iter()
        .filter(|(rel, _)| rel.ends_with(".c"))
        .map(|(rel, _)| dir.join(rel))
        .collect()
}

struct Shown<'a>(&'a [OsString]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", arg.to_string_lossy())?;
        }
        Ok(())
    }
}

/// Compiles and links the user's C files with the device runtime into one
/// code object with kernels `_begin`, `_start`, `_end` and the symbol
/// `__llvm_rpc_client`.
pub fn compile(opts: &CcOptions) -> Result<CcOutput, CcError> {
    if opts.inputs.is_empty() {
        return Err(CcError::NoInputs);
    }
    let version = llvm_version(opts.mcpu);
    let clang = find_tool(&format!("clang-{version}"), "clang", version)?;
    let lld = find_tool(&format!("ld.lld-{version}"), "ld.lld", version)?;
    let runtime = runtime_dir()?;

    let mut args: Vec<OsString> = vec![clang.clone().into()];
    for flag in [
        "--target=amdgcn-amd-amdhsa",
        &format!("-mcpu={}", opts.mcpu.name()),
        "-nogpulib",
        "-ffreestanding",
        "-nostdlibinc",
        "-fconvergent-functions",
        "-flto",
        opts.opt.flag(),
    ] {
        args.push(flag.into());
    }
    args.push("-isystem".into());
    args.push(runtime.join("include").into());
    let mut ld = OsString::from("--ld-path=");
    ld.push(&lld);
    args.push(ld);
    args.extend(opts.extra_flags.iter().map(OsString::from));
    args.extend(opts.inputs.iter().map(OsString::from));
    args.extend(runtime_sources(&runtime).into_iter().map(OsString::from));
    args.push("-o".into());
    args.push(opts.output.clone().into());

    let command = Shown(&args).to_string();
    let out = Command::new(&args[0])
        .args(&args[1..])
        .output()
        .map_err(|source| CcError::Spawn { command: command.clone(), source })?;
    if !out.status.success() {
        return Err(CcError::Failed {
            command,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(CcOutput {
        path: opts.output.clone(),
        clang,
        command: args.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
    })
}
