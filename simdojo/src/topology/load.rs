//! Reading topology files: formats, includes, and the public `load` entry points.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::topology::build;
use crate::topology::components_check;
use crate::topology::host_memory::host_memory;
use crate::topology::document::Node;
use crate::topology::error::{DiagnosticKind, Diags, Problem, TopologyError};
use crate::topology::source::{Sources, Span};
use crate::topology::{json_doc, toml_doc, Topology};

/// The syntax of a topology file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TOML (`.toml`).
    Toml,
    /// JSON (`.json`); comments and trailing commas are accepted.
    Json,
}

impl Format {
    /// The format named by the file's extension, if it names one.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "toml" => Some(Format::Toml),
            "json" | "jsonc" => Some(Format::Json),
            _ => None,
        }
    }

    /// Guesses the format from the text: JSON when it starts with `{` or a `//` or
    /// `/*` comment, else TOML.
    pub fn sniff(text: &str) -> Format {
        let body = text.trim_start_matches('\u{feff}').trim_start();
        if body.starts_with('{') || body.starts_with("//") || body.starts_with("/*") {
            Format::Json
        } else {
            Format::Toml
        }
    }
}

/// Bounds on what a topology file may expand to, so that a mistyped range fails
/// quickly instead of exhausting memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most components, links, or fabric members in total (each counted separately).
    pub max_instances: usize,
    /// Most indices a single range or pattern may expand to.
    pub max_range: usize,
    /// Deepest chain of includes.
    pub max_include_depth: usize,
    /// Largest file read, in bytes.
    pub max_file_bytes: u64,
    /// Most host memory, in bytes, the simulation of the topology may take, estimated
    /// from its counts (about 2 KiB per component, 512 bytes per link and fabric member)
    /// as they are declared, then with what each component's parameters make it
    /// allocate ([`check_components`](crate::topology::check_components)), before
    /// anything is built.
    pub max_memory: u64,
}

/// The environment variable that sets [`Limits::max_memory`] of [`Limits::default`] in
/// bytes (a plain decimal count), so that one setting reaches every process that loads
/// the topology (`dojo --max-topology-memory` sets it for itself and its children: the
/// interposed program, the daemon). A value that is not a count is ignored.
pub const MAX_MEMORY_VAR: &str = "DOJO_MAX_TOPOLOGY_MEMORY";

impl Default for Limits {
    /// 16 Mi instances and indices, 32 nested includes, 64 MiB files, and half of the
    /// memory the process can get ([`host_memory`]: the least of MemAvailable,
    /// RLIMIT_AS and the cgroup's limit; unbounded where none is known) unless
    /// [`MAX_MEMORY_VAR`] says otherwise.
    fn default() -> Limits {
        let set = std::env::var(MAX_MEMORY_VAR).ok().and_then(|v| v.trim().parse::<u64>().ok());
        Limits {
            max_instances: 16 << 20,
            max_range: 16 << 20,
            max_include_depth: 32,
            max_file_bytes: 64 << 20,
            max_memory: set.unwrap_or_else(|| host_memory().map_or(u64::MAX, |m| m.bytes / 2)),
        }
    }
}

/// Loads and validates the topology file at `path` (TOML or JSON by extension, else
/// guessed from the text), with its includes.
///
/// # File format
///
/// TOML and JSON files have the same tree; JSON may have comments and trailing commas.
/// Top-level keys: `include`, `engine`, `defaults`, `templates`, `component`, `link`,
/// `fabric`; any other key is an error.
///
/// - `include = ["common.toml"]` (or one string): files read first, relative to the
///   including file, each at most once; a cycle or a missing file is an error. The
///   includer's `[engine]` keys and `[defaults]` override the included ones; a template
///   name may be defined only once; components, links and fabrics are concatenated,
///   included files first.
/// - `[engine]`: `max_ticks`, `exit_delay` (durations), `partitioner` (string),
///   `workers` (positive integer) -> [`EngineSettings`](crate::topology::EngineSettings).
/// - `[defaults."TYPE"]`: parameter values for every instance of a registered type.
/// - `[templates.NAME]`: `type`, `inherit` (another template; chains must end and agree
///   on the type), `params`, `partition`, `weight`.
/// - `[[component]]`: `path` (a pattern, below), `type` and/or `template` (an explicit
///   type must equal the template's), `params`, `partition` (0..2^32), `weight`
///   (positive, default 1), `for`. Parameters resolve as registry default <
///   `[defaults]` < template chain (base first) < `params`; every parameter must be
///   declared by the type and convert to its kind, and required ones must be set.
/// - `[[link]]`: `from`, `to` (endpoint patterns `COMPONENT.PORT` or
///   `COMPONENT.PORT[i]` for array ports), `latency` (duration string or integer ps, at
///   least 1ps), `kind` (`"oneway"` or `"paired"`; default paired between two InOut
///   ports, else one-way), `weight`, `for`. Both ends expand row-major and are paired in
///   order (zip); the counts must match. One-way links go from an Out/InOut port to an
///   In/InOut port, paired links join two InOut ports, both ends carry the same message
///   type, and each port (array element) is in at most one link or fabric.
/// - `[[fabric]]`: `ports` (an endpoint pattern; members in expansion order),
///   `latency`, `weight`, `for`; all members carry the same message type.
///
/// Patterns: literal names (`a-z A-Z 0-9 _ -`, dot-separated) with bracket groups of
/// comma-separated items, each an index expression or a half-open range `START..END`
/// (`[0..8]`, `[0,2,5]`, `[0..4, 8]`). Groups expand row-major (the first group varies
/// slowest). Index expressions are integers, `$var`, `+ - * / %`, unary minus and
/// parentheses; `/` and `%` are Euclidean, so `($i-1)%16` wraps to 15. `for = { i =
/// "0..16", j = [0, 2] }` binds variables (outermost first, later ones may use earlier
/// ones) and repeats the declaration for every assignment, row-major. Ranges must not be
/// empty or reversed, and [`Limits`] bound ranges, patterns and totals (16 Mi each by
/// default).
pub fn load(path: &Path) -> Result<Topology, TopologyError> {
    let mut diags = Diags::default();
    let limits = Limits::default();
    let text = match read_limited(path, limits.max_file_bytes) {
        Ok(text) => text,
        Err(why) => {
            diags.push(
                Problem::new(
                    DiagnosticKind::Io,
                    format!("cannot read `{}`: {why}", path.display()),
                    "a readable UTF-8 topology file",
                )
                .place(None, None),
            );
            return diags.into_result().map(|()| Topology::new());
        }
    };
    let format = Format::from_path(path).unwrap_or_else(|| Format::sniff(&text));
    load_str_with(&text, path, format, &limits)
}

/// Loads and validates a topology from `text`, named `name` in messages; includes are
/// resolved relative to `name`'s directory.
pub fn load_str(text: &str, name: &Path, format: Format) -> Result<Topology, TopologyError> {
    load_str_with(text, name, format, &Limits::default())
}

/// [`load_str`] with explicit [`Limits`].
pub fn load_str_with(text: &str, name: &Path, format: Format, limits: &Limits) -> Result<Topology, TopologyError> {
    let mut diags = Diags::default();
    let mut loader =
        Loader { sources: Sources::default(), docs: Vec::new(), stack: Vec::new(), done: HashSet::new(), limits };
    let identity = std::fs::canonicalize(name).unwrap_or_else(|_| name.to_path_buf());
    loader.file(name.to_path_buf(), identity, text.to_string(), format, &mut diags);
    if !diags.is_empty() {
        return diags.into_result().map(|()| Topology::new());
    }
    let topology = build::build(&loader.sources, &loader.docs, limits, &mut diags);
    if diags.is_empty() {
        components_check::check_into(&topology, limits, &mut diags);
    }
    diags.into_result()?;
    Ok(topology)
}

fn read_limited(path: &Path, max: u64) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if text.len() as u64 > max {
        return Err(format!("the file is larger than {max} bytes"));
    }
    Ok(text)
}

/// Reads a file and, depth first, the files it includes.
struct Loader<'l> {
    sources: Sources,
    /// Parsed documents, each after the files it includes.
    docs: Vec<Node>,
    /// Canonical paths of the files being read, outermost first.
    stack: Vec<PathBuf>,
    /// Canonical paths of the files read completely (each file is read once).
    done: HashSet<PathBuf>,
    limits: &'l Limits,
}

impl Loader<'_> {
    fn file(&mut self, path: PathBuf, identity: PathBuf, text: String, format: Format, diags: &mut Diags) {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let file = self.sources.add(path, text);
        let text = &self.sources.file(file).text;
        let parsed = match format {
            Format::Toml => toml_doc::parse(text, file),
            Format::Json => json_doc::parse(text, file),
        };
        let root = match parsed {
            Ok(root) => root,
            Err((offset, problem)) => {
                diags.push(problem.place(Some(self.sources.loc(Span::at(file, offset))), None));
                return;
            }
        };
        if root.as_table().is_none() {
            let p = root.wrong("the document", "a table (TOML) or object (JSON) at the top level");
            diags.push(p.place(Some(self.sources.loc(root.span)), None));
            return;
        }
        self.stack.push(identity.clone());
        if let Some(include) = root.get("include") {
            let items: Vec<&Node> = match &include.value {
                crate::topology::document::Value::Array(items) => items.iter().collect(),
                _ => vec![include],
            };
            for item in items {
                let Some(rel) = item.as_str() else {
                    let p = item.wrong("an include", "a file name string or an array of them");
                    diags.push(p.place(Some(self.sources.loc(item.span)), None));
                    continue;
                };
                self.include(&dir, rel, item.span, diags);
            }
        }
        self.stack.pop();
        self.done.insert(identity);
        self.docs.push(root);
    }

    fn include(&mut self, dir: &Path, rel: &str, span: Span, diags: &mut Diags) {
        let at = Some(self.sources.loc(span));
        let target = dir.join(rel);
        let identity = match std::fs::canonicalize(&target) {
            Ok(id) => id,
            Err(e) => {
                let p = Problem::new(
                    DiagnosticKind::Include,
                    format!("include file `{}` cannot be opened: {e}", target.display()),
                    format!("an existing file, relative to `{}`", dir.display()),
                );
                diags.push(p.place(at, None));
                return;
            }
        };
        if let Some(pos) = self.stack.iter().position(|p| *p == identity) {
            let chain: Vec<String> =
                self.stack[pos..].iter().chain([&identity]).map(|p| p.display().to_string()).collect();
            let p = Problem::new(
                DiagnosticKind::Include,
                format!("include cycle: {}", chain.join(" -> ")),
                "includes that form no cycle",
            );
            diags.push(p.place(at, None));
            return;
        }
        if self.done.contains(&identity) {
            return;
        }
        if self.stack.len() >= self.limits.max_include_depth {
            let p = Problem::new(
                DiagnosticKind::Include,
                format!("includes are nested more than {} deep", self.limits.max_include_depth),
                "a shallower chain of includes",
            );
            diags.push(p.place(at, None));
            return;
        }
        match read_limited(&target, self.limits.max_file_bytes) {
            Ok(text) => {
                let format = Format::from_path(&target).unwrap_or_else(|| Format::sniff(&text));
                self.file(target, identity, text, format, diags);
            }
            Err(why) => {
                let p = Problem::new(
                    DiagnosticKind::Include,
                    format!("include file `{}` cannot be read: {why}", target.display()),
                    "a readable UTF-8 topology file",
                );
                diags.push(p.place(at, None));
            }
        }
    }
}
