//! Building the suite's programs with Debian's hipcc, once per content: the embedded
//! sources are written into a tree named by their hash, and each executable is kept
//! under a name hashing the sources, the flags and the libraries, so that a second run
//! (or a run after an unrelated change to `dojo`) builds nothing.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};

use super::suite::{Program, SOURCES};

/// hipcc's flags for every program: the simulated MI210's target, optimized.
pub const HIPCC_FLAGS: [&str; 3] = ["--offload-arch=gfx90a", "-O2", "-std=c++17"];

/// Builds the suite's programs into one directory.
pub struct Builder {
    /// hipcc, as found in PATH.
    hipcc: PathBuf,
    /// Where the executables go.
    bin: PathBuf,
    /// The written source tree (the repository's layout).
    tree: PathBuf,
    /// Hash of every source file (path and text).
    sources_hash: u64,
}

/// The default build directory: `$XDG_CACHE_HOME/dojo/bench-apps`, else
/// `$HOME/.cache/dojo/bench-apps`, else one in the system's temporary directory.
pub fn default_dir() -> PathBuf {
    let nonempty = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from);
    let cache = nonempty("XDG_CACHE_HOME")
        .or_else(|| nonempty("HOME").map(|home| home.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("dojo").join("bench-apps")
}

/// The executable `name` in PATH.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

impl Builder {
    /// Finds hipcc and writes the sources under `dir` (unless already there).
    pub fn new(dir: &Path) -> anyhow::Result<Builder> {
        let Some(hipcc) = which("hipcc") else {
            bail!("hipcc not found in PATH: the suite is built with Debian's ROCm (bash scripts/deps installs it)");
        };
        let mut hasher = DefaultHasher::new();
        for file in SOURCES {
            file.path.hash(&mut hasher);
            file.text.hash(&mut hasher);
        }
        let sources_hash = hasher.finish();
        let tree = dir.join(format!("src-{sources_hash:016x}"));
        if !tree.is_dir() {
            write_tree(dir, &tree)?;
        }
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).with_context(|| format!("creating {}", bin.display()))?;
        Ok(Builder { hipcc, bin, tree, sources_hash })
    }

    /// The executable of `program`, built unless a build of the same content exists.
    /// The error is the reason, for the report (hipcc's last lines of output).
    pub fn build(&self, program: &Program) -> Result<PathBuf, String> {
        let mut hasher = DefaultHasher::new();
        self.sources_hash.hash(&mut hasher);
        HIPCC_FLAGS.hash(&mut hasher);
        program.source.hash(&mut hasher);
        program.link.hash(&mut hasher);
        let exe = self.bin.join(format!("{}-{:016x}", program.name, hasher.finish()));
        if exe.is_file() {
            return Ok(exe);
        }
        eprintln!("dojo bench apps: building {} ({} {})", program.name, self.hipcc.display(), program.source);
        let partial = self.bin.join(format!("{}.{}.partial", program.name, std::process::id()));
        let out = Command::new(&self.hipcc)
            .args(HIPCC_FLAGS)
            .arg("-o")
            .arg(&partial)
            .arg(self.tree.join(program.source))
            .args(program.link)
            .output()
            .map_err(|e| format!("running {}: {e}", self.hipcc.display()))?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&partial);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(3).collect::<Vec<_>>().into_iter().rev().collect();
            return Err(format!("hipcc failed ({}): {}", out.status, tail.join(" / ")));
        }
        // A rename is atomic: a concurrent bench sees the whole executable or none.
        std::fs::rename(&partial, &exe).map_err(|e| format!("moving the build to {}: {e}", exe.display()))?;
        Ok(exe)
    }
}

/// Writes every source file into `tree` (through a temporary sibling, renamed into
/// place, so that a concurrent bench never sees half a tree).
fn write_tree(dir: &Path, tree: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating the build directory {}", dir.display()))?;
    let partial = tempfile::Builder::new()
        .prefix("src-partial-")
        .tempdir_in(dir)
        .with_context(|| format!("creating a directory in {}", dir.display()))?;
    for file in SOURCES {
        let path = partial.path().join(file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, file.text).with_context(|| format!("writing {}", path.display()))?;
    }
    let partial = partial.keep();
    if let Err(e) = std::fs::rename(&partial, tree) {
        let _ = std::fs::remove_dir_all(&partial);
        // Another bench wrote the same tree first: the same content, so use it.
        if !tree.is_dir() {
            return Err(e).with_context(|| format!("moving the sources to {}", tree.display()));
        }
    }
    Ok(())
}
