//! Compile corpus sources into code objects, cached under `target/tmp/amdgpu-corpus/`.
//!
//! gfx90a and gfx942 use clang-19/ld.lld-19, gfx950 uses clang-22/ld.lld-22; sources that
//! include ROCm headers (the rocPRIM corpus) use Debian's hipcc. The cache key
//! is a SHA-256 of the source bytes and the full command lines, so editing a source or a
//! flag rebuilds. A missing compiler is a test *failure* naming the apt packages, never a
//! silent pass.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The language of a corpus source, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Freestanding C (`.c`).
    C,
    /// OpenCL C 2.0 (`.cl`).
    OpenCl,
    /// HIP device code with the project's own macros (`.hip`).
    Hip,
    /// AMDGPU assembly with `.amdhsa_kernel` directives (`.s`).
    Asm,
}

impl Language {
    pub fn of(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "c" => Some(Language::C),
            "cl" => Some(Language::OpenCl),
            "hip" => Some(Language::Hip),
            "s" => Some(Language::Asm),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::C => "C",
            Language::OpenCl => "OpenCL C",
            Language::Hip => "HIP",
            Language::Asm => "assembly",
        }
    }
}

/// The LLVM tools used for one processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toolchain {
    pub clang: &'static str,
    pub lld: &'static str,
    pub readelf: &'static str,
    pub apt_packages: &'static str,
}

const LLVM19: Toolchain = Toolchain {
    clang: "clang-19",
    lld: "ld.lld-19",
    readelf: "llvm-readelf-19",
    apt_packages: "clang-19 lld-19 llvm-19",
};
const LLVM22: Toolchain = Toolchain {
    clang: "clang-22",
    lld: "ld.lld-22",
    readelf: "llvm-readelf-22",
    apt_packages: "clang-22 lld-22 llvm-22",
};

/// The toolchain for a processor string such as `gfx942` or `gfx90a:xnack+`.
pub fn toolchain_for(processor: &str) -> Toolchain {
    if processor.starts_with("gfx950") {
        LLVM22
    } else {
        LLVM19
    }
}

/// What to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRequest {
    pub source: PathBuf,
    /// `-mcpu`/`--offload-arch` value, target features included (`gfx942:sramecc+`).
    pub processor: String,
    /// `-mcode-object-version=N`, or the compiler's default.
    pub code_object_version: Option<u8>,
}

impl BuildRequest {
    pub fn new(source: impl Into<PathBuf>, processor: &str) -> BuildRequest {
        BuildRequest { source: source.into(), processor: processor.to_string(), code_object_version: None }
    }

    pub fn with_version(mut self, version: u8) -> BuildRequest {
        self.code_object_version = Some(version);
        self
    }
}

#[derive(Debug)]
pub enum BuildError {
    MissingTool { tool: &'static str, apt_packages: &'static str },
    UnknownLanguage(PathBuf),
    Io(String),
    ToolFailed { command: String, stderr: String },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::MissingTool { tool, apt_packages } => write!(
                f,
                "{tool} is not installed: the corpus tests need it (apt-get install -y --no-install-recommends {apt_packages})"
            ),
            BuildError::UnknownLanguage(path) => write!(f, "{}: unknown source language", path.display()),
            BuildError::Io(message) => write!(f, "I/O error: {message}"),
            BuildError::ToolFailed { command, stderr } => write!(f, "`{command}` failed:\n{stderr}"),
        }
    }
}

/// Root of the build cache.
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("amdgpu-corpus")
}

fn compile_args(language: Language, request: &BuildRequest, object: &Path) -> Vec<String> {
    let processor = &request.processor;
    let mut args: Vec<String> = match language {
        Language::C => vec![
            "--target=amdgcn-amd-amdhsa".into(),
            format!("-mcpu={processor}"),
            "-nogpulib".into(),
            "-ffreestanding".into(),
            "-O2".into(),
        ],
        Language::OpenCl => vec![
            "--target=amdgcn-amd-amdhsa".into(),
            format!("-mcpu={processor}"),
            "-nogpulib".into(),
            "-x".into(),
            "cl".into(),
            "-cl-std=CL2.0".into(),
            "-O2".into(),
        ],
        Language::Hip => vec![
            "-x".into(),
            "hip".into(),
            format!("--offload-arch={processor}"),
            "-nogpulib".into(),
            "-nogpuinc".into(),
            "--cuda-device-only".into(),
            "--no-gpu-bundle-output".into(),
            "-O2".into(),
        ],
        Language::Asm => vec![
            "-x".into(),
            "assembler".into(),
            "--target=amdgcn-amd-amdhsa".into(),
            format!("-mcpu={processor}"),
        ],
    };
    if let Some(version) = request.code_object_version {
        args.push(format!("-mcode-object-version={version}"));
    }
    args.push("-c".into());
    args.push(request.source.display().to_string());
    args.push("-o".into());
    args.push(object.display().to_string());
    args
}

fn run(tool: &'static str, apt_packages: &'static str, args: &[String]) -> Result<(), BuildError> {
    let output = match Command::new(tool).args(args).output() {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(BuildError::MissingTool { tool, apt_packages })
        }
        Err(err) => return Err(BuildError::Io(format!("running {tool}: {err}"))),
    };
    if !output.status.success() {
        return Err(BuildError::ToolFailed {
            command: format!("{tool} {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(())
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

fn unique_suffix() -> String {
    format!("{}-{}", std::process::id(), UNIQUE.fetch_add(1, Ordering::Relaxed))
}

/// Build (or fetch from the cache) the code object for `request`.
pub fn build(request: &BuildRequest) -> Result<PathBuf, BuildError> {
    let language = Language::of(&request.source).ok_or_else(|| BuildError::UnknownLanguage(request.source.clone()))?;
    let toolchain = toolchain_for(&request.processor);
    let source =
        std::fs::read(&request.source).map_err(|err| BuildError::Io(format!("{}: {err}", request.source.display())))?;

    let mut hasher = Sha256::new();
    hasher.update(&source);
    hasher.update(toolchain.clang.as_bytes());
    // The object path is not part of the key: hash the arguments with a placeholder.
    for arg in compile_args(language, request, Path::new("OUT")) {
        hasher.update(arg.as_bytes());
        hasher.update([0]);
    }
    let key = short_key(hasher);
    let stem = request.source.file_stem().and_then(|stem| stem.to_str()).unwrap_or("source");
    let version = request.code_object_version.map_or("default".to_string(), |v| format!("v{v}"));
    let name = format!("{stem}-{}-{version}-{key}", request.processor.replace([':', '+'], "_").replace('-', "m"));

    cached(&format!("{name}.co"), |out| {
        let suffix = unique_suffix();
        let object = cache_dir().join(format!("{name}.{suffix}.o"));
        run(toolchain.clang, toolchain.apt_packages, &compile_args(language, request, &object))?;
        if language == Language::Hip {
            // HIP device-only compilation already links a shared object.
            std::fs::rename(&object, out).map_err(|err| BuildError::Io(err.to_string()))
        } else {
            let args = vec!["-shared".to_string(), object.display().to_string(), "-o".into(), out.display().to_string()];
            run(toolchain.lld, toolchain.apt_packages, &args)?;
            // The intermediate object is only a build product; failing to remove it is harmless.
            let _ = std::fs::remove_file(&object);
            Ok(())
        }
    })
}

/// The first 10 bytes of a digest in hex: the cache key in file names.
fn short_key(hasher: Sha256) -> String {
    hasher.finalize().iter().take(10).map(|byte| format!("{byte:02x}")).collect()
}

/// `cache_dir()/file_name`, produced by `produce(partial)` unless it exists: `produce`
/// writes a unique partial path that is then renamed into place (atomic, so concurrent
/// tests building the same key see the whole file or none; the last one wins).
fn cached(file_name: &str, produce: impl FnOnce(&Path) -> Result<(), BuildError>) -> Result<PathBuf, BuildError> {
    let dir = cache_dir();
    let product = dir.join(file_name);
    if product.is_file() {
        return Ok(product);
    }
    std::fs::create_dir_all(&dir).map_err(|err| BuildError::Io(format!("{}: {err}", dir.display())))?;
    let partial = dir.join(format!("{file_name}.{}.partial", unique_suffix()));
    produce(&partial)?;
    std::fs::rename(&partial, &product).map_err(|err| BuildError::Io(err.to_string()))?;
    Ok(product)
}

/// The flags Debian's hipcc compiles the rocPRIM corpus with: device code only (the
/// output is a clang offload bundle), gfx90a, C++17 (rocPRIM 5.3 needs C++14; hipcc
/// defaults to C++11).
pub const HIPCC_FLAGS: [&str; 6] = ["--offload-arch=gfx90a", "-O2", "-std=c++17", "--cuda-device-only", "-Wno-unused-result", "-c"];

/// Compiles a HIP source that uses ROCm headers with Debian's `hipcc` ([`HIPCC_FLAGS`])
/// into an offload bundle, cached under a hash of the source, the flags and every
/// file of `extra_inputs` (headers the source depends on).
pub fn build_with_hipcc(source: &Path, extra_inputs: &[&Path]) -> Result<PathBuf, BuildError> {
    let mut hasher = Sha256::new();
    for input in std::iter::once(&source).chain(extra_inputs) {
        let bytes = std::fs::read(input).map_err(|err| BuildError::Io(format!("{}: {err}", input.display())))?;
        hasher.update(&bytes);
        hasher.update([0]);
    }
    for flag in HIPCC_FLAGS {
        hasher.update(flag.as_bytes());
        hasher.update([0]);
    }
    let key = short_key(hasher);
    let stem = source.file_stem().and_then(|stem| stem.to_str()).unwrap_or("source");
    cached(&format!("{stem}-hipcc-{key}.bundle"), |out| {
        let mut args: Vec<String> = HIPCC_FLAGS.iter().map(|flag| flag.to_string()).collect();
        args.extend([source.display().to_string(), "-o".into(), out.display().to_string()]);
        run("hipcc", "hipcc", &args)
    })
}

/// [`build`], failing the calling test with a clear message when it cannot.
pub fn build_or_fail(request: &BuildRequest) -> PathBuf {
    match build(request) {
        Ok(path) => path,
        Err(err) => panic!("building {} for {}: {err}", request.source.display(), request.processor),
    }
}

/// Read a built code object.
pub fn read_or_fail(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|err| panic!("reading {}: {err}", path.display()))
}
