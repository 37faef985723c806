//! The crate's layers, checked from its source. `src/` holds one folder per layer,
//! lowest first: `timing` (pure timing models), `gpu` (shared state and messages),
//! `components` (the plug-ins), `host` (host side and embedding). A module may use its
//! own layer and the ones below it, never one above; the modules of one layer (the
//! files and folders directly inside its folder) never import each other in a circle;
//! and `timing` does not use the engine.
//!
//! Every `crate::` path counts, in code and in doc links alike (a doc link to a higher
//! layer is a dependency a reader follows), and so does a `super::` path that leads to a
//! sibling module. Inside its own layer a path names the module (`crate::gpu::memory`),
//! not a name the layer's `mod.rs` re-exports, so that the circle check sees the edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first.
const LAYERS: &[&str] = &["timing", "gpu", "components", "host"];

/// Items of the crate root every layer may name.
const ROOT_ITEMS: &[&str] = &["isa", "link_components"];

/// Where a file sits: its layer and its module path inside the layer (empty for the
/// layer's own `mod.rs`).
struct Place {
    layer: String,
    module: Vec<String>,
}

/// Maps `gpu/memory.rs` to (`gpu`, [`memory`]), `components/cu/mod.rs` to
/// (`components`, [`cu`]); `None` for a file outside every layer folder.
fn place_of(rel: &str) -> Option<Place> {
    let stem = rel.strip_suffix(".rs")?;
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() < 2 && !(parts.len() == 1 && rel.contains('/')) {
        return None;
    }
    let layer = parts.remove(0);
    Some(Place { layer, module: parts })
}

/// One path into the crate: the line it is on, its first two segments after `crate`
/// (a `super::` path resolved against the file's module path), and whether it was a
/// `super::` path.
struct Ref {
    line: usize,
    segments: Vec<String>,
    via_super: bool,
}

fn ident_at(bytes: &[u8], mut i: usize) -> (String, usize) {
    let start = i;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    (String::from_utf8_lossy(&bytes[start..i]).into_owned(), i)
}

fn skip_blanks(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Reads a use tree at `i` (after `prefix::`): `a::b`, `a::{b, c::d}`, and pushes
/// every path in it, `prefix` first; returns where the tree ends.
fn use_tree(bytes: &[u8], i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut i = skip_blanks(bytes, i);
    if bytes.get(i) == Some(&b'{') {
        i += 1;
        loop {
            i = skip_blanks(bytes, i);
            match bytes.get(i) {
                None => return i,
                Some(b'}') => return i + 1,
                Some(b',') => i += 1,
                Some(_) => {
                    let next = use_tree(bytes, i, prefix, out);
                    // `self`, `*` or anything else that is not a path: step over it.
                    i = if next == i { i + 1 } else { next };
                }
            }
        }
    }
    let mut path = prefix.to_vec();
    loop {
        let (ident, next) = ident_at(bytes, i);
        if ident.is_empty() {
            break;
        }
        path.push(ident);
        i = next;
        if !bytes[i..].starts_with(b"::") {
            break;
        }
        i += 2;
        if bytes.get(i) == Some(&b'{') {
            return use_tree(bytes, i, &path, out);
        }
    }
    if path.len() > prefix.len() {
        out.push(path);
    }
    i
}

/// Every `crate::` and `super::` path of `text`, for a file whose module path (layer
/// first) is `module_path`. A `super::` inside an inline module (`mod tests`) is
/// resolved as if it were at the file's level, one level too high; the check ignores
/// such a path unless it names a module.
fn refs_of(text: &str, module_path: &[String]) -> Vec<Ref> {
    let bytes = text.as_bytes();
    let line_of = |at: usize| text[..at].bytes().filter(|&b| b == b'\n').count() + 1;
    let mut refs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b'$');
        let (base, start, via_super) = if boundary && bytes[i..].starts_with(b"crate::") {
            (Vec::new(), i + "crate::".len(), false)
        } else if boundary && bytes[i..].starts_with(b"super::") {
            let mut base = module_path.to_vec();
            let mut j = i;
            while bytes[j..].starts_with(b"super::") {
                base.pop();
                j += "super::".len();
            }
            (base, j, true)
        } else {
            i += 1;
            continue;
        };
        let mut paths = Vec::new();
        let end = use_tree(bytes, start, &base, &mut paths);
        for mut segments in paths {
            segments.truncate(2);
            refs.push(Ref { line: line_of(i), segments, via_super });
        }
        i = end.max(i + 1);
    }
    refs
}

/// Whether `line` (of a `timing` file) uses the engine in code.
fn uses_engine(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    code.contains("simdojo")
}

/// Checks `files` (path relative to `src/`, text) and returns every violation as
/// `src/FILE:LINE: problem`.
fn check(files: &[(String, String)]) -> Vec<String> {
    let rank = |layer: &str| LAYERS.iter().position(|l| *l == layer);
    let mut problems = Vec::new();
    // The modules of each layer: the files and folders directly inside its folder.
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, _) in files {
        if let Some(p) = place_of(rel) {
            if let Some(m) = p.module.first() {
                modules.entry(p.layer.clone()).or_default().insert(m.clone());
            }
        }
    }
    // edges[layer][from][to] = the first place that made the edge.
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for (rel, text) in files {
        if rel == "lib.rs" {
            continue;
        }
        let Some(place) = place_of(rel) else {
            problems.push(format!("src/{rel}: outside every layer folder ({})", LAYERS.join(", ")));
            continue;
        };
        let Some(own_rank) = rank(&place.layer) else {
            problems.push(format!("src/{rel}: `{}` is not a layer ({})", place.layer, LAYERS.join(", ")));
            continue;
        };
        if place.layer == "timing" {
            for (n, line) in text.lines().enumerate() {
                if uses_engine(line) {
                    problems.push(format!("src/{rel}:{}: `timing` uses the engine: {}", n + 1, line.trim()));
                }
            }
        }
        let mut module_path = vec![place.layer.clone()];
        module_path.extend(place.module.iter().cloned());
        for r in refs_of(text, &module_path) {
            let at = format!("src/{rel}:{}", r.line);
            let Some(first) = r.segments.first() else { continue };
            let Some(target_rank) = rank(first) else {
                if !ROOT_ITEMS.contains(&first.as_str()) {
                    problems.push(format!("{at}: `crate::{first}` is neither a layer ({}) nor a root item ({})", LAYERS.join(", "), ROOT_ITEMS.join(", ")));
                }
                continue;
            };
            if target_rank > own_rank {
                problems.push(format!(
                    "{at}: `{}` in layer `{}` points up to layer `{}` (layers, lowest first: {})",
                    r.segments.join("::"),
                    place.layer,
                    first,
                    LAYERS.join(", ")
                ));
                continue;
            }
            if target_rank < own_rank {
                continue;
            }
            let (Some(from), Some(to)) = (place.module.first(), r.segments.get(1)) else { continue };
            let layer_modules = modules.get(first).cloned().unwrap_or_default();
            if !layer_modules.contains(to) {
                if !r.via_super {
                    problems.push(format!("{at}: `crate::{first}::{to}` is not a module of layer `{first}` (a re-export?); name the module"));
                }
                continue;
            }
            if from != to {
                edges.entry(first.clone()).or_default().entry(from.clone()).or_default().entry(to.clone()).or_insert(at);
            }
        }
    }
    for (layer, graph) in &edges {
        for circle in circles(graph) {
            let mut sites = Vec::new();
            for from in &circle {
                for (to, at) in &graph[from] {
                    if circle.contains(to) {
                        sites.push(format!("{from} -> {to} at {at}"));
                    }
                }
            }
            problems.push(format!("circle between modules of layer `{layer}`: {}", sites.join("; ")));
        }
    }
    problems
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        let graph = w.graph;
        for to in graph.get(v).into_iter().flat_map(|m| m.keys()) {
            let to = to.as_str();
            if !w.index.contains_key(to) {
                visit(w, to);
                let low = w.low[v].min(w.low[to]);
                w.low.insert(v, low);
            } else if w.stack.contains(&to) {
                let low = w.low[v].min(w.index[to]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            while let Some(top) = w.stack.pop() {
                component.push(top.to_string());
                if top == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut w = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in graph.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.found
}

fn source_files(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("src is readable").flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            source_files(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).expect("under src").to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&p).expect("source is UTF-8")));
        }
    }
}

#[test]
fn every_module_uses_only_its_layer_and_the_ones_below_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &src, &mut files);
    assert!(files.len() > 40, "found only {} source files under {}", files.len(), src.display());
    let problems = check(&files);
    assert!(problems.is_empty(), "layering violations:\n{}", problems.join("\n"));
}

#[test]
fn the_check_finds_an_upward_path_a_circle_and_the_engine_in_timing() {
    let file = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let files = vec![
        file("lib.rs", "pub mod gpu;"),
        file("timing/mod.rs", "//! Timing.\npub mod a;"),
        file("timing/a.rs", "//! A.\nuse simdojo::time::Tick;\n"),
        file("gpu/mod.rs", "//! Gpu.\npub mod x;\npub mod y;"),
        file("gpu/x.rs", "//! X.\nuse crate::gpu::y::Y;\n"),
        file("gpu/y.rs", "//! Y.\n\nuse crate::{timing::a::A, gpu::{x::X}};\nuse crate::host::vm::Vm;\n"),
        file("gpu/z/mod.rs", "//! Z, fine: it uses x, nothing uses it.\nuse super::x::X;\nmod inner;"),
        file("gpu/z/inner.rs", "//! Inner: `super::super::y` is the sibling y.\nuse super::super::y::Y;\n"),
        file("host/mod.rs", "//! Host.\npub mod vm;"),
        file("host/vm.rs", "//! Vm.\nuse crate::gpu::x::X;\nuse crate::timing::Cycle;\n"),
        file("stray.rs", "//! Outside every layer."),
    ];
    let problems = check(&files);
    let expect = [
        "src/timing/a.rs:2: `timing` uses the engine",
        "src/gpu/y.rs:4: `host::vm` in layer `gpu` points up to layer `host`",
        "src/stray.rs: outside every layer folder",
        "circle between modules of layer `gpu`: x -> y at src/gpu/x.rs:2; y -> x at src/gpu/y.rs:3",
    ];
    for e in expect {
        assert!(problems.iter().any(|p| p.contains(e)), "missing `{e}` in:\n{}", problems.join("\n"));
    }
    assert_eq!(problems.len(), expect.len(), "unexpected problems:\n{}", problems.join("\n"));
}
