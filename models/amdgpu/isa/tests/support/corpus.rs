//! The corpus sidecars (`corpus/*.toml`): which source, which targets, how to launch, with
//! which arguments, and which CPU reference checks the outputs.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// Kernel symbol name (without `.kd`).
    pub kernel: String,
    /// Source file name inside `corpus/`.
    pub source: String,
    /// Processors this kernel builds for.
    pub targets: Vec<String>,
    /// Name of the CPU reference in `reference.rs`.
    pub reference: String,
    /// Largest absolute difference allowed between float outputs and the reference.
    #[serde(default)]
    pub tolerance: f64,
    pub launch: Launch,
    pub args: Vec<ArgSpec>,
    /// The sidecar's own file name, filled in by [`load_all`].
    #[serde(skip)]
    pub file: String,
}

impl Sidecar {
    pub fn source_path(&self) -> PathBuf {
        corpus_dir().join(&self.source)
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// Work-items per dimension.
    pub grid: [u32; 3],
    /// Work-group size per dimension.
    pub block: [u32; 3],
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    pub name: String,
    /// `u32`, `i32`, `f32`, `f64` (scalars) or `buffer`.
    #[serde(rename = "type")]
    pub ty: String,
    /// Scalar value.
    pub value: Option<toml::Value>,
    /// Buffer element type.
    pub elem: Option<String>,
    /// Buffer element count.
    pub len: Option<usize>,
    /// Buffer contents: `zero`, `iota`, `affine A B`, `random SEED LO HI`, `values`.
    pub init: Option<String>,
    /// Buffer contents when `init = "values"`.
    pub values: Option<Vec<f64>>,
    /// Whether the kernel writes the buffer (the reference gives its expected contents).
    #[serde(default)]
    pub output: bool,
}

/// A buffer's contents.
#[derive(Debug, Clone, PartialEq)]
pub enum Buffer {
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Buffer {
    pub fn len(&self) -> usize {
        match self {
            Buffer::U32(v) => v.len(),
            Buffer::I32(v) => v.len(),
            Buffer::F32(v) => v.len(),
            Buffer::F64(v) => v.len(),
        }
    }

    pub fn elem(&self) -> &'static str {
        match self {
            Buffer::U32(_) => "u32",
            Buffer::I32(_) => "i32",
            Buffer::F32(_) => "f32",
            Buffer::F64(_) => "f64",
        }
    }
}

/// One argument's value for a launch.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    U32(u32),
    I32(i32),
    F32(f32),
    F64(f64),
    Buffer(Buffer),
}

impl ArgValue {
    /// Bytes the argument occupies in the kernarg segment (buffers pass a pointer).
    pub fn kernarg_size(&self) -> u32 {
        match self {
            ArgValue::U32(_) | ArgValue::I32(_) | ArgValue::F32(_) => 4,
            ArgValue::F64(_) | ArgValue::Buffer(_) => 8,
        }
    }
}

/// splitmix64: a tiny deterministic generator for reproducible inputs.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn number(word: Option<&str>, what: &str) -> Result<f64, String> {
    word.ok_or_else(|| format!("{what} missing"))?.parse::<f64>().map_err(|_| format!("{what} is not a number"))
}

/// The element values of a buffer, as f64 (exact for all u32/i32 values).
fn element_values(spec: &ArgSpec, len: usize, integer: bool) -> Result<Vec<f64>, String> {
    let init = spec.init.as_deref().unwrap_or("zero");
    let mut words = init.split_whitespace();
    let kind = words.next().unwrap_or("zero");
    let values = match kind {
        "zero" => vec![0.0; len],
        "iota" => (0..len).map(|i| i as f64).collect(),
        "affine" => {
            let scale = number(words.next(), "affine scale")?;
            let offset = number(words.next(), "affine offset")?;
            (0..len).map(|i| scale * i as f64 + offset).collect()
        }
        "random" => {
            let seed = number(words.next(), "random seed")? as u64;
            let lo = number(words.next(), "random low")?;
            let hi = number(words.next(), "random high")?;
            let mut rng = SplitMix64(seed);
            (0..len)
                .map(|_| {
                    if integer {
                        // Inclusive integer range [lo, hi].
                        let span = (hi - lo) as u64 + 1;
                        lo + (rng.next() % span) as f64
                    } else {
                        lo + (hi - lo) * rng.unit()
                    }
                })
                .collect()
        }
        "values" => {
            let values = spec.values.clone().ok_or("init = \"values\" needs values = [...]")?;
            if values.len() != len {
                return Err(format!("{} values for len {len}", values.len()));
            }
            values
        }
        other => return Err(format!("unknown init {other:?}")),
    };
    Ok(values)
}

fn scalar(spec: &ArgSpec) -> Result<f64, String> {
    match &spec.value {
        Some(toml::Value::Integer(n)) => Ok(*n as f64),
        Some(toml::Value::Float(x)) => Ok(*x),
        other => Err(format!("scalar value {other:?} is not a number")),
    }
}

/// Build the launch's argument values from the specs.
pub fn make_args(sidecar: &Sidecar) -> Result<Vec<ArgValue>, String> {
    sidecar
        .args
        .iter()
        .map(|spec| {
            let value = match spec.ty.as_str() {
                "u32" => ArgValue::U32(scalar(spec)? as u32),
                "i32" => ArgValue::I32(scalar(spec)? as i32),
                "f32" => ArgValue::F32(scalar(spec)? as f32),
                "f64" => ArgValue::F64(scalar(spec)?),
                "buffer" => {
                    let len = spec.len.ok_or("buffer without len")?;
                    let elem = spec.elem.as_deref().ok_or("buffer without elem")?;
                    let integer = matches!(elem, "u32" | "i32");
                    let values = element_values(spec, len, integer)?;
                    ArgValue::Buffer(match elem {
                        "u32" => Buffer::U32(values.iter().map(|&v| v as u32).collect()),
                        "i32" => Buffer::I32(values.iter().map(|&v| v as i32).collect()),
                        "f32" => Buffer::F32(values.iter().map(|&v| v as f32).collect()),
                        "f64" => Buffer::F64(values),
                        other => return Err(format!("unknown element type {other:?}")),
                    })
                }
                other => return Err(format!("unknown argument type {other:?}")),
            };
            Ok(value)
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|err| format!("{}: {err}", sidecar.file))
}

/// The files of `dir` (not below it) whose extension is `extension`, sorted.
pub fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    paths.sort();
    paths
}

/// Every sidecar of the corpus, sorted by file name.
pub fn load_all() -> Vec<Sidecar> {
    files_with_extension(&corpus_dir(), "toml")
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            let mut sidecar: Sidecar = toml::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            sidecar.file = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
            sidecar
        })
        .collect()
}
