//! Turning parsed topology documents into a flat, validated [`Topology`]: defaults,
//! templates, index expansion, endpoint resolution and the registry checks, each
//! problem placed at the file position it comes from.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::ids::ComponentId;
use crate::params::{ParamKind, ParamValue, Params, RawParam, ValueOrigin};
use crate::registry::{ComponentType, MessageKind, PortSpec};
use crate::time::Tick;
use crate::topology::check::{self, PortUse, PortUser};
use crate::topology::components_check::{limit_origin, size, COMPONENT_BYTES, LINK_BYTES, MEMBER_BYTES};
use crate::topology::document::{Entry, Node, Value};
use crate::topology::error::{list_names, nearest, DiagnosticKind, Diags, Problem};
use crate::topology::load::Limits;
use crate::topology::pattern::{self, Env, Group, Pattern, PatternError};
use crate::topology::source::{Sources, Span};
use crate::topology::{ComponentDecl, Endpoint, FabricDecl, LinkDecl, LinkKind, Topology};

const TOP_KEYS: &[&str] = &["include", "engine", "defaults", "templates", "component", "link", "fabric"];
const ENGINE_KEYS: &[&str] = &["max_ticks", "exit_delay", "partitioner", "workers"];
const TEMPLATE_KEYS: &[&str] = &["type", "inherit", "params", "partition", "weight"];
const COMPONENT_KEYS: &[&str] = &["path", "type", "template", "params", "partition", "weight", "for"];
const LINK_KEYS: &[&str] = &["from", "to", "latency", "kind", "weight", "for"];
const FABRIC_KEYS: &[&str] = &["ports", "latency", "weight", "for"];

/// Builds the topology described by `docs` (each document after those it includes).
pub(crate) fn build(sources: &Sources, docs: &[Node], limits: &Limits, diags: &mut Diags) -> Topology {
    // Ids are 32-bit, whatever the caller allows.
    let limits = &Limits { max_instances: limits.max_instances.min(u32::MAX as usize), ..*limits };
    let mut b = Builder {
        sources,
        limits,
        diags,
        topo: Topology::new(),
        defaults: HashMap::new(),
        default_blocks: Vec::new(),
        templates: HashMap::new(),
        template_order: Vec::new(),
        resolved: HashMap::new(),
        paths: foldhash::HashMap::default(),
        types: Vec::new(),
        used: PortUse::default(),
        fabric_members: 0,
        too_large: false,
    };
    let mut components = Vec::new();
    let mut links = Vec::new();
    let mut fabrics = Vec::new();
    for doc in docs {
        b.check_keys(doc, TOP_KEYS, "the top level");
        if let Some(engine) = doc.get("engine") {
            b.engine(engine);
        }
        if let Some(defaults) = doc.get("defaults") {
            b.defaults(defaults);
        }
        if let Some(templates) = doc.get("templates") {
            b.templates(templates);
        }
        for (key, out) in [("component", &mut components), ("link", &mut links), ("fabric", &mut fabrics)] {
            if let Some(node) = doc.get(key) {
                match &node.value {
                    Value::Array(items) => out.extend(items.iter()),
                    _ => b.report(
                        node.span,
                        node.wrong(&format!("`{key}`"), format!("an array of tables (`[[{key}]]`)")),
                    ),
                }
            }
        }
    }
    for name in b.template_order.clone() {
        if let Some(entry) = b.templates.get(name).copied() {
            b.check_template(name, entry.key_span);
        }
    }
    for decl in components {
        b.component(decl);
    }
    if b.too_large {
        return b.topo;
    }
    for decl in links {
        b.link(decl);
    }
    if b.too_large {
        return b.topo;
    }
    for decl in fabrics {
        b.fabric(decl);
    }
    b.check_defaults_used();
    b.topo
}

/// A template with its inheritance chain applied.
struct Resolved<'a> {
    /// The type and where it was given.
    type_name: Option<(&'a str, Span)>,
    /// Parameter entries, base templates first.
    params: Vec<&'a Entry>,
    partition: Option<&'a Node>,
    weight: Option<&'a Node>,
}

struct Builder<'a, 'd> {
    sources: &'a Sources,
    limits: &'a Limits,
    diags: &'d mut Diags,
    topo: Topology,
    /// Converted `[defaults."TYPE"]` values per type with their positions, later files
    /// overriding earlier.
    defaults: HashMap<String, BTreeMap<String, (ParamValue, ValueOrigin)>>,
    /// Every `[defaults."TYPE"]` block: its type and where its key is.
    default_blocks: Vec<(&'static str, Span)>,
    templates: HashMap<&'a str, &'a Entry>,
    /// Template names in the order defined, for a deterministic order of errors.
    template_order: Vec<&'a str>,
    /// Resolved templates (`None` after an error).
    resolved: HashMap<&'a str, Option<Rc<Resolved<'a>>>>,
    paths: foldhash::HashMap<String, ComponentId>,
    /// The registered type of each component, `None` when unknown (already reported).
    types: Vec<Option<&'static ComponentType>>,
    used: PortUse,
    fabric_members: usize,
    /// A declaration was refused as too large (instances, host memory): the
    /// declarations that would refer to its instances are not checked (each of
    /// millions of them would report the missing component again).
    too_large: bool,
}

/// A resolved link or fabric end.
struct End {
    component: ComponentId,
    path: String,
    port: String,
    /// `None` when the component's type is unknown (reported with the component).
    spec: Option<&'static PortSpec>,
}

impl<'a> Builder<'a, '_> {
    /// Defaults for a type no component has are an error: after a component's type
    /// changes, its old type's defaults would otherwise stop applying without a word.
    fn check_defaults_used(&mut self) {
        for (ty, span) in std::mem::take(&mut self.default_blocks) {
            if !self.topo.components.iter().any(|c| c.type_name == ty) {
                let types: std::collections::BTreeSet<&str> = self.topo.components.iter().map(|c| c.type_name.as_str()).collect();
                let problem = format!("`[defaults.\"{ty}\"]` applies to no component: none has type `{ty}`");
                let expected = format!("defaults for a type the topology uses ({})", types.into_iter().collect::<Vec<_>>().join(", "));
                self.report(span, Problem::new(DiagnosticKind::UnusedDefaults, problem, expected));
            }
        }
    }

    fn report(&mut self, span: Span, p: Problem) {
        self.too_large |= p.kind == DiagnosticKind::TooLarge;
        self.diags.push(p.place(Some(self.sources.loc(span)), None));
    }

    fn report_about(&mut self, span: Span, subject: String, p: Problem) {
        self.too_large |= p.kind == DiagnosticKind::TooLarge;
        self.diags.push(p.place(Some(self.sources.loc(span)), Some(subject)));
    }

    fn report_pattern(&mut self, node: &Node, text: &str, e: PatternError) {
        let span = self.sources.inside_string(node.span, text, e.offset);
        self.report(span, e.problem);
    }

    fn check_keys(&mut self, node: &Node, valid: &[&str], section: &str) {
        let Some(entries) = node.as_table() else { return };
        for e in entries {
            if !valid.contains(&e.key.as_str()) {
                let hint = nearest(&e.key, valid.iter().copied())
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                self.report(
                    e.key_span,
                    Problem::new(
                        DiagnosticKind::UnknownKey,
                        format!("unknown key `{}` in {section}{hint}", e.key),
                        format!("one of {}", list_names(valid.iter().copied())),
                    ),
                );
            }
        }
    }

    fn table<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Entry]> {
        let t = node.as_table();
        if t.is_none() {
            self.report(node.span, node.wrong(what, "a table"));
        }
        t
    }

    fn string<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n str> {
        let s = node.as_str();
        if s.is_none() {
            self.report(node.span, node.wrong(what, "a string"));
        }
        s
    }

    fn raw(&mut self, node: &Node, what: &str) -> Option<RawParam> {
        match &node.value {
            Value::Str(s) => Some(RawParam::Str(s.clone())),
            Value::Int(i) => Some(RawParam::Int(*i)),
            Value::Float(x) => Some(RawParam::Float(*x)),
            Value::Bool(b) => Some(RawParam::Bool(*b)),
            _ => {
                self.report(node.span, node.wrong(what, "a string, number or boolean"));
                None
            }
        }
    }

    fn duration(&mut self, node: &Node, what: &str) -> Option<Tick> {
        let raw = self.raw(node, what)?;
        match ParamKind::Duration.convert(&raw) {
            Ok(ParamValue::Duration(t)) => Some(t),
            _ => {
                self.report(
                    node.span,
                    Problem::new(
                        DiagnosticKind::WrongValue,
                        format!("{what} is {}", raw.describe()),
                        "a duration such as \"10ns\" or an integer number of picoseconds",
                    ),
                );
                None
            }
        }
    }

    fn latency(&mut self, node: &Node) -> Option<Tick> {
        let t = self.duration(node, "`latency`")?;
        match check::check_latency(t) {
            Ok(()) => Some(t),
            Err(p) => {
                self.report(node.span, p);
                None
            }
        }
    }

    fn weight(&mut self, node: &Node) -> Option<f64> {
        let w = match node.value {
            Value::Int(i) => i as f64,
            Value::Float(x) => x,
            _ => {
                self.report(node.span, node.wrong("`weight`", "a positive number"));
                return None;
            }
        };
        match check::check_weight(w) {
            Ok(()) => Some(w),
            Err(p) => {
                self.report(node.span, p);
                None
            }
        }
    }

    fn partition(&mut self, node: &Node) -> Option<u32> {
        match node.value {
            Value::Int(i) => match u32::try_from(i) {
                Ok(p) => Some(p),
                Err(_) => {
                    let why = if i < 0 { "negative" } else { "too large" };
                    self.report(
                        node.span,
                        Problem::new(
                            DiagnosticKind::Partition,
                            format!("partition {i} is {why}"),
                            "a partition number from 0 to 2^32-1",
                        ),
                    );
                    None
                }
            },
            _ => {
                self.report(node.span, node.wrong("`partition`", "a partition number (a non-negative integer)"));
                None
            }
        }
    }

    fn engine(&mut self, node: &Node) {
        if self.table(node, "`[engine]`").is_none() {
            return;
        }
        self.check_keys(node, ENGINE_KEYS, "[engine]");
        let mut e = std::mem::take(&mut self.topo.engine);
        if let Some(n) = node.get("max_ticks") {
            e.max_ticks = self.duration(n, "`max_ticks`").or(e.max_ticks);
        }
        if let Some(n) = node.get("exit_delay") {
            e.exit_delay = self.duration(n, "`exit_delay`").or(e.exit_delay);
        }
        if let Some(n) = node.get("partitioner") {
            if let Some(s) = self.string(n, "`partitioner`") {
                e.partitioner = Some(s.to_string());
            }
        }
        if let Some(n) = node.get("workers") {
            match n.value {
                Value::Int(i) if i >= 1 && i <= i64::from(u32::MAX) => e.workers = u32::try_from(i).ok(),
                _ => self.report(n.span, n.wrong("`workers`", "a positive number of worker threads")),
            }
        }
        self.topo.engine = e;
    }

    fn defaults(&mut self, node: &'a Node) {
        let Some(entries) = self.table(node, "`[defaults]`") else { return };
        for entry in entries {
            let ty = match check::lookup_type(&entry.key) {
                Ok(ty) => ty,
                Err(p) => {
                    self.report(entry.key_span, p);
                    continue;
                }
            };
            self.default_blocks.push((ty.name, entry.key_span));
            let Some(params) = self.table(&entry.node, &format!("`[defaults.\"{}\"]`", entry.key)) else { continue };
            for p in params {
                if let Some(v) = self.param(ty, p) {
                    self.defaults.entry(ty.name.to_string()).or_default().insert(p.key.clone(), v);
                }
            }
        }
    }

    /// Converts one `name = value` parameter entry of type `ty`; the value with its
    /// own position.
    fn param(&mut self, ty: &ComponentType, entry: &Entry) -> Option<(ParamValue, ValueOrigin)> {
        let Some(spec) = ty.param(&entry.key) else {
            self.report(entry.key_span, check::unknown_param(ty, &entry.key));
            return None;
        };
        let raw = self.raw(&entry.node, &format!("parameter `{}`", entry.key))?;
        match check::convert_param(ty.name, spec, &raw) {
            Ok(v) => Some((v, ValueOrigin::File(self.sources.loc(entry.node.span)))),
            Err(p) => {
                self.report(entry.node.span, p);
                None
            }
        }
    }

    fn templates(&mut self, node: &'a Node) {
        let Some(entries) = self.table(node, "`[templates]`") else { return };
        for entry in entries {
            if self.table(&entry.node, &format!("template `{}`", entry.key)).is_none() {
                continue;
            }
            self.check_keys(&entry.node, TEMPLATE_KEYS, &format!("template `{}`", entry.key));
            if let Some(first) = self.templates.get(entry.key.as_str()) {
                let at = self.sources.loc(first.key_span);
                self.report(
                    entry.key_span,
                    Problem::new(
                        DiagnosticKind::Template,
                        format!("template `{}` is already defined at {at}", entry.key),
                        "unique template names across a file and its includes",
                    ),
                );
                continue;
            }
            self.templates.insert(&entry.key, entry);
            self.template_order.push(&entry.key);
        }
    }

    /// The template `name` with its chain applied; reports unknown names and cycles
    /// at `used_at`.
    fn template(&mut self, name: &'a str, used_at: Span) -> Option<Rc<Resolved<'a>>> {
        if let Some(r) = self.resolved.get(name) {
            return r.clone();
        }
        // Walk up the chain, most derived first.
        let mut chain: Vec<&'a Entry> = Vec::new();
        let (mut current, mut at) = (name, used_at);
        let result = loop {
            let Some(&entry) = self.templates.get(current) else {
                let mut names: Vec<&str> = self.templates.keys().copied().collect();
                names.sort_unstable();
                let hint = nearest(current, names.iter().copied())
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                self.report(
                    at,
                    Problem::new(
                        DiagnosticKind::Template,
                        format!("unknown template `{current}`{hint}"),
                        format!("a template defined under [templates]: {}", list_names(names.iter().copied())),
                    ),
                );
                break None;
            };
            if chain.iter().any(|e| std::ptr::eq(*e, entry)) {
                let mut names: Vec<&str> = chain.iter().map(|e| e.key.as_str()).collect();
                names.push(current);
                self.report(
                    at,
                    Problem::new(
                        DiagnosticKind::Template,
                        format!("template inheritance cycle: {}", names.join(" -> ")),
                        "`inherit` chains that end",
                    ),
                );
                break None;
            }
            chain.push(entry);
            match entry.node.get("inherit") {
                None => break Some(()),
                Some(parent) => match self.string(parent, "`inherit`") {
                    Some(p) => {
                        current = p;
                        at = parent.span;
                    }
                    None => break None,
                },
            }
        };
        let resolved = result.and_then(|()| self.merge_chain(&chain)).map(Rc::new);
        self.resolved.insert(name, resolved.clone());
        resolved
    }

    /// Resolves template `name` and, when its type is known, checks its parameters, so
    /// that a template no component uses is checked too.
    fn check_template(&mut self, name: &'a str, at: Span) {
        let Some(r) = self.template(name, at) else { return };
        let Some((type_name, _)) = r.type_name else { return };
        // An unknown type is reported where a component uses the template.
        let Ok(ty) = check::lookup_type(type_name) else { return };
        for entry in &r.params {
            let _ = self.param(ty, entry);
        }
    }

    /// Merges a chain of templates (most derived first) into one.
    fn merge_chain(&mut self, chain: &[&'a Entry]) -> Option<Resolved<'a>> {
        let mut r = Resolved { type_name: None, params: Vec::new(), partition: None, weight: None };
        let mut ok = true;
        for entry in chain.iter().rev() {
            let t = &entry.node;
            if let Some(n) = t.get("type") {
                let s = self.string(n, "`type`")?;
                if let Some((base, base_at)) = r.type_name {
                    if base != s {
                        let at = self.sources.loc(base_at);
                        self.report(
                            n.span,
                            Problem::new(
                                DiagnosticKind::Template,
                                format!(
                                    "template `{}` has type `{s}` but inherits type `{base}` (set at {at})",
                                    entry.key
                                ),
                                format!("type `{base}` or no `type`"),
                            ),
                        );
                        ok = false;
                    }
                }
                r.type_name = Some((s, n.span));
            }
            if let Some(p) = t.get("params") {
                match p.as_table() {
                    Some(entries) => r.params.extend(entries.iter()),
                    None => {
                        self.report(p.span, p.wrong("`params`", "a table of parameter values"));
                        ok = false;
                    }
                }
            }
            r.partition = t.get("partition").or(r.partition);
            r.weight = t.get("weight").or(r.weight);
        }
        ok.then_some(r)
    }

    /// The `for` variables of a declaration: names with their values, outermost first.
    fn bindings(&mut self, node: Option<&Node>) -> Option<Vec<(Rc<str>, Group, Span)>> {
        let Some(node) = node else { return Some(Vec::new()) };
        let entries = self.table(node, "`for`")?;
        let mut out = Vec::new();
        for e in entries {
            if e.key.is_empty() || !e.key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                self.report(
                    e.key_span,
                    Problem::new(
                        DiagnosticKind::BadPath,
                        format!("`{}` is not a variable name", e.key),
                        "letters, digits and `_`",
                    ),
                );
                return None;
            }
            let group = match &e.node.value {
                Value::Str(s) => match pattern::parse_values(s) {
                    Ok(g) => g,
                    Err(err) => {
                        self.report_pattern(&e.node, s, err);
                        return None;
                    }
                },
                Value::Int(i) => pattern::literal_group(&[*i]),
                Value::Array(items) => {
                    let mut values = Vec::new();
                    for item in items {
                        match item.value {
                            Value::Int(i) => values.push(i),
                            _ => {
                                self.report(item.span, item.wrong("a `for` value", "an integer"));
                                return None;
                            }
                        }
                    }
                    pattern::literal_group(&values)
                }
                _ => {
                    self.report(
                        e.node.span,
                        e.node.wrong("a `for` variable", "a range string like \"0..16\" or an array of integers"),
                    );
                    return None;
                }
            };
            out.push((e.key.as_str().into(), group, e.node.span));
        }
        Some(out)
    }

    /// Every assignment of the `for` variables, row-major; `None` after an error.
    fn environments(&mut self, bindings: &[(Rc<str>, Group, Span)]) -> Option<Vec<Env>> {
        let mut out = vec![Vec::new()];
        for (name, group, span) in bindings {
            let mut next = Vec::new();
            for env in &out {
                let values = match group.values(env, self.limits.max_range) {
                    Ok(v) => v,
                    Err(e) => {
                        self.report(*span, e.problem);
                        return None;
                    }
                };
                if next.len() + values.len() > self.limits.max_instances {
                    self.report(
                        *span,
                        Problem::new(
                            DiagnosticKind::TooLarge,
                            format!("the `for` variables take more than {} values together", self.limits.max_instances),
                            format!("at most {} iterations", self.limits.max_instances),
                        ),
                    );
                    return None;
                }
                for v in values {
                    let mut e = env.clone();
                    e.push((name.clone(), v));
                    next.push(e);
                }
            }
            out = next;
        }
        Some(out)
    }

    fn pattern(&mut self, node: &Node, what: &str) -> Option<(Pattern, String)> {
        let text = self.string(node, what)?.to_string();
        match Pattern::parse(&text) {
            Ok(p) => Some((p, text)),
            Err(e) => {
                self.report_pattern(node, &text, e);
                None
            }
        }
    }

    /// How many names `pattern` expands to under `env` (reported when it cannot).
    fn count(&mut self, node: &Node, pattern: &(Pattern, String), env: &Env) -> Option<u64> {
        match pattern.0.count(env, self.limits.max_range) {
            Ok(n) => Some(n),
            Err(e) => {
                self.report_pattern(node, &pattern.1, e);
                None
            }
        }
    }

    fn expand(&mut self, node: &Node, pattern: &(Pattern, String), env: &Env) -> Option<Vec<String>> {
        match pattern.0.expand(env, self.limits.max_range) {
            Ok(names) => Some(names),
            Err(e) => {
                self.report_pattern(node, &pattern.1, e);
                None
            }
        }
    }

    fn required<'n>(&mut self, decl: &'n Node, key: &str, section: &str, example: &str) -> Option<&'n Node> {
        let n = decl.get(key);
        if n.is_none() {
            self.report(
                decl.span,
                Problem::new(
                    DiagnosticKind::WrongValue,
                    format!("{section} has no `{key}`"),
                    format!("`{key} = {example}`"),
                ),
            );
        }
        n
    }

    fn component(&mut self, decl: &'a Node) {
        if self.table(decl, "a `[[component]]` entry").is_none() {
            return;
        }
        self.check_keys(decl, COMPONENT_KEYS, "[[component]]");
        let Some(path_node) = self.required(decl, "path", "[[component]]", "\"NAME\"") else { return };
        let template = match decl.get("template") {
            None => None,
            Some(t) => {
                let Some(name) = self.string(t, "`template`") else { return };
                match self.template(name, t.span) {
                    Some(r) => Some(r),
                    None => return,
                }
            }
        };
        let explicit = decl.get("type").map(|n| (self.string(n, "`type`").map(str::to_string), n.span));
        let (type_name, type_span) = match (&explicit, template.as_ref().and_then(|t| t.type_name)) {
            (Some((None, _)), _) => return,
            (Some((Some(e), span)), Some((t, t_at))) if e != t => {
                let at = self.sources.loc(t_at);
                self.report(
                    *span,
                    Problem::new(
                        DiagnosticKind::Template,
                        format!("type `{e}` disagrees with the template's type `{t}` (set at {at})"),
                        format!("type `{t}` or no `type`"),
                    ),
                );
                return;
            }
            (Some((Some(e), span)), _) => (e.clone(), *span),
            (None, Some((t, span))) => (t.to_string(), span),
            (None, None) => {
                self.report(
                    decl.span,
                    Problem::new(
                        DiagnosticKind::WrongValue,
                        "[[component]] has no type",
                        "`type = \"LIBRARY.NAME\"` or a `template` that sets one",
                    ),
                );
                return;
            }
        };
        let ty = match check::lookup_type(&type_name) {
            Ok(ty) => Some(ty),
            Err(p) => {
                self.report(type_span, p);
                None
            }
        };
        let params = match ty {
            Some(ty) => self.component_params(ty, decl, path_node, template.as_deref()),
            None => Some(Params::new()),
        };
        let partition =
            decl.get("partition").or(template.as_ref().and_then(|t| t.partition)).map(|n| self.partition(n));
        let weight = match decl.get("weight").or(template.as_ref().and_then(|t| t.weight)) {
            Some(n) => self.weight(n),
            None => Some(1.0),
        };
        let bindings = self.bindings(decl.get("for"));
        let pattern = self.pattern(path_node, "`path`");
        // A declaration with bad parameters, weight or partition still declares its
        // components (the load fails anyway), so links to them do not add noise.
        let (Some(bindings), Some(pattern)) = (bindings, pattern) else { return };
        let params = params.unwrap_or_default();
        let weight = weight.unwrap_or(1.0);
        let partition = partition.flatten();
        let Some(envs) = self.environments(&bindings) else { return };
        let origin = Some(self.sources.loc(path_node.span));
        for env in &envs {
            // Counted before the names are made: a refused pattern takes no memory.
            let Some(n) = self.count(path_node, &pattern, env) else { return };
            if self.topo.components.len() as u64 + n > self.limits.max_instances as u64 {
                self.report(path_node.span, too_many("components", self.limits.max_instances));
                return;
            }
            if !self.memory_allows(path_node.span, n.saturating_mul(COMPONENT_BYTES)) {
                return;
            }
            let Some(paths) = self.expand(path_node, &pattern, env) else { return };
            for path in paths {
                if let Err(p) = pattern::check_path(&path) {
                    self.report(path_node.span, p);
                    return;
                }
                let id = ComponentId::from_index(self.topo.components.len());
                if let Some(&first) = self.paths.get(&path) {
                    let first_at = self.topo.components[first.index()].origin.clone();
                    self.report(path_node.span, check::duplicate_path(&path, first.index(), first_at.as_ref()));
                    continue;
                }
                self.paths.insert(path.clone(), id);
                self.types.push(ty);
                self.topo.components.push(ComponentDecl {
                    path,
                    type_name: type_name.clone(),
                    params: params.clone(),
                    partition,
                    weight,
                    origin: origin.clone(),
                });
            }
        }
    }

    /// The parameters of a component declaration: registry defaults, then
    /// `[defaults]`, then the template chain, then the declaration's own `params`.
    fn component_params(
        &mut self,
        ty: &'static ComponentType,
        decl: &Node,
        path: &Node,
        template: Option<&Resolved<'a>>,
    ) -> Option<Params> {
        let mut values: BTreeMap<String, (ParamValue, Option<ValueOrigin>)> = BTreeMap::new();
        let mut ok = true;
        for spec in ty.params {
            if let Some(v) = spec.default_value() {
                values.insert(spec.name.to_string(), (v, None));
            }
        }
        if let Some(d) = self.defaults.get(ty.name) {
            values.extend(d.iter().map(|(k, (v, at))| (k.clone(), (v.clone(), Some(at.clone())))));
        }
        let own: Vec<&Entry> = match decl.get("params") {
            None => Vec::new(),
            Some(p) => match p.as_table() {
                Some(entries) => entries.iter().collect(),
                None => {
                    self.report(p.span, p.wrong("`params`", "a table of parameter values"));
                    return None;
                }
            },
        };
        let inherited: Vec<&Entry> = template.map(|t| t.params.clone()).unwrap_or_default();
        // Parameters with a bad value were reported; they are not "missing" too.
        let mut bad: Vec<&str> = Vec::new();
        for entry in inherited.into_iter().chain(own) {
            match self.param(ty, entry) {
                Some((v, at)) => {
                    values.insert(entry.key.clone(), (v, Some(at)));
                }
                None => {
                    bad.push(&entry.key);
                    ok = false;
                }
            }
        }
        for spec in ty.params {
            if !values.contains_key(spec.name) && !bad.contains(&spec.name) {
                self.report(path.span, check::missing_param(ty, spec));
                ok = false;
            }
        }
        let mut params = Params::new();
        for (k, (v, at)) in values {
            params.set_from(k, v, at);
        }
        ok.then_some(params)
    }

    /// Resolves an expanded endpoint `COMPONENT.PORT` written at `node`.
    fn end(&mut self, node: &Node, name: &str) -> Option<End> {
        let segs = pattern::split_segments(name);
        if segs.len() < 2 {
            self.report(
                node.span,
                Problem::new(
                    DiagnosticKind::BadPath,
                    format!("`{name}` does not name a port"),
                    "`COMPONENT.PORT`, like `gpu.cp.out`",
                ),
            );
            return None;
        }
        let port = segs[segs.len() - 1];
        let path = &name[..name.len() - port.len() - 1];
        let Some(&component) = self.paths.get(path) else {
            let hint = if self.paths.len() <= 4096 {
                nearest(path, self.paths.keys().map(String::as_str))
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default()
            } else {
                String::new()
            };
            self.report(
                node.span,
                Problem::new(
                    DiagnosticKind::UnknownComponent,
                    format!("no component `{path}` for endpoint `{name}`{hint}"),
                    "a component path declared by a [[component]]",
                ),
            );
            return None;
        };
        let spec = match self.types[component.index()] {
            None => None,
            Some(ty) => match check::port_spec(ty, path, port) {
                Ok(spec) => Some(spec),
                Err(p) => {
                    self.report(node.span, p);
                    return None;
                }
            },
        };
        Some(End { component, path: path.to_string(), port: port.to_string(), spec })
    }

    /// Marks the port of `end` as used by `by`; false (after reporting) if it was taken.
    fn take_port(&mut self, node: &Node, end: &End, by: &Rc<str>) -> bool {
        let Some(spec) = end.spec else { return true };
        match self.used.take((end.component, &end.path, &end.port), spec, PortUser::Described(by.clone()), None) {
            Ok(()) => true,
            Err(p) => {
                self.report(node.span, p);
                false
            }
        }
    }

    fn link(&mut self, decl: &'a Node) {
        if self.table(decl, "a `[[link]]` entry").is_none() {
            return;
        }
        self.check_keys(decl, LINK_KEYS, "[[link]]");
        let from = self.required(decl, "from", "[[link]]", "\"COMPONENT.PORT\"");
        let to = self.required(decl, "to", "[[link]]", "\"COMPONENT.PORT\"");
        let latency_node = self.required(decl, "latency", "[[link]]", "\"1ns\"");
        let (Some(from), Some(to), Some(latency_node)) = (from, to, latency_node) else { return };
        let latency = self.latency(latency_node);
        let kind = match decl.get("kind") {
            None => Some(None),
            Some(n) => match n.as_str() {
                Some("oneway") => Some(Some(LinkKind::OneWay)),
                Some("paired") => Some(Some(LinkKind::Paired)),
                _ => {
                    self.report(n.span, n.wrong("`kind`", "\"oneway\" or \"paired\""));
                    None
                }
            },
        };
        let weight = decl.get("weight").map_or(Some(1.0), |n| self.weight(n));
        let bindings = self.bindings(decl.get("for"));
        let from_p = self.pattern(from, "`from`");
        let to_p = self.pattern(to, "`to`");
        // A bad latency, kind or weight was reported; the endpoints are still checked
        // (the load fails anyway).
        let (Some(bindings), Some(from_p), Some(to_p)) = (bindings, from_p, to_p) else { return };
        let (latency, kind, weight) = (latency.unwrap_or(Tick(1)), kind.flatten(), weight.unwrap_or(1.0));
        let Some(envs) = self.environments(&bindings) else { return };
        let origin = Some(self.sources.loc(from.span));
        let by_from: Rc<str> = format!("the link at {}", self.sources.loc(from.span)).into();
        let by_to: Rc<str> = format!("the link at {}", self.sources.loc(to.span)).into();
        for env in &envs {
            let (Some(a_names), Some(b_names)) = (self.expand(from, &from_p, env), self.expand(to, &to_p, env)) else {
                return;
            };
            if a_names.len() != b_names.len() {
                self.report(
                    to.span,
                    Problem::new(
                        DiagnosticKind::ZipMismatch,
                        format!("`from` expands to {} ports but `to` expands to {}", a_names.len(), b_names.len()),
                        "the same number of ports at both ends (they are paired in order)",
                    ),
                );
                return;
            }
            if self.topo.links.len() + a_names.len() > self.limits.max_instances {
                self.report(from.span, too_many("links", self.limits.max_instances));
                return;
            }
            if !self.memory_allows(from.span, a_names.len() as u64 * LINK_BYTES) {
                return;
            }
            for (a_name, b_name) in a_names.iter().zip(&b_names) {
                let (Some(a), Some(b)) = (self.end(from, a_name), self.end(to, b_name)) else { continue };
                let mut ok = self.take_port(from, &a, &by_from);
                ok &= self.take_port(to, &b, &by_to);
                let kind = match (a.spec, b.spec) {
                    (Some(sa), Some(sb)) => match check::link_kind((a_name, sa), (b_name, sb), kind) {
                        Ok(k) => k,
                        Err(p) => {
                            self.report_about(from.span, format!("link `{a_name}` -> `{b_name}`"), p);
                            continue;
                        }
                    },
                    _ => kind.unwrap_or(LinkKind::OneWay),
                };
                if !ok {
                    continue;
                }
                self.topo.links.push(LinkDecl {
                    a: Endpoint { component: a.component, port: a.port },
                    b: Endpoint { component: b.component, port: b.port },
                    latency,
                    weight,
                    kind,
                    origin: origin.clone(),
                });
            }
        }
    }

    fn fabric(&mut self, decl: &'a Node) {
        if self.table(decl, "a `[[fabric]]` entry").is_none() {
            return;
        }
        self.check_keys(decl, FABRIC_KEYS, "[[fabric]]");
        let ports = self.required(decl, "ports", "[[fabric]]", "\"COMPONENT[0..N].PORT\"");
        let latency_node = self.required(decl, "latency", "[[fabric]]", "\"1ns\"");
        let (Some(ports), Some(latency_node)) = (ports, latency_node) else { return };
        let latency = self.latency(latency_node);
        let weight = decl.get("weight").map_or(Some(1.0), |n| self.weight(n));
        let bindings = self.bindings(decl.get("for"));
        let pattern = self.pattern(ports, "`ports`");
        let (Some(bindings), Some(pattern)) = (bindings, pattern) else { return };
        let (latency, weight) = (latency.unwrap_or(Tick(1)), weight.unwrap_or(1.0));
        let Some(envs) = self.environments(&bindings) else { return };
        let mut members = Vec::new();
        let mut first: Option<(String, MessageKind)> = None;
        let mut ok = true;
        let by: Rc<str> = format!("the fabric at {}", self.sources.loc(ports.span)).into();
        for env in &envs {
            let Some(n) = self.count(ports, &pattern, env) else { return };
            if (self.fabric_members + members.len()) as u64 + n > self.limits.max_instances as u64 {
                self.report(ports.span, too_many("fabric members", self.limits.max_instances));
                return;
            }
            if !self.memory_allows(ports.span, (members.len() as u64 + n).saturating_mul(MEMBER_BYTES)) {
                return;
            }
            let Some(names) = self.expand(ports, &pattern, env) else { return };
            for name in names {
                let Some(end) = self.end(ports, &name) else {
                    ok = false;
                    continue;
                };
                ok &= self.take_port(ports, &end, &by);
                if let Some(spec) = end.spec {
                    if let Err(p) = check::fabric_member_type(&mut first, || name.clone(), spec) {
                        self.report(ports.span, p);
                        ok = false;
                    }
                }
                members.push(Endpoint { component: end.component, port: end.port });
            }
        }
        if ok {
            self.fabric_members += members.len();
            self.topo.fabrics.push(FabricDecl { members, latency, weight, origin: Some(self.sources.loc(ports.span)) });
        }
    }
}

impl Builder<'_, '_> {
    /// The estimated host memory of what is declared so far, plus `more` bytes, within
    /// [`Limits::max_memory`]? Reports the problem at `span` when not.
    fn memory_allows(&mut self, span: Span, more: u64) -> bool {
        let declared = self.topo.components.len() as u64 * COMPONENT_BYTES
            + self.topo.links.len() as u64 * LINK_BYTES
            + self.fabric_members as u64 * MEMBER_BYTES;
        let need = declared.saturating_add(more);
        if need <= self.limits.max_memory {
            return true;
        }
        let problem = format!(
            "the topology would take about {} of host memory to simulate (estimated from its counts of \
             components, links and fabric members), more than the {} allowed",
            size(need),
            size(self.limits.max_memory)
        );
        let expected = format!("fewer instances ({})", limit_origin(self.limits.max_memory));
        self.report(span, Problem::new(DiagnosticKind::TooLarge, problem, expected));
        false
    }
}

/// The problem "more than `limit` things".
fn too_many(what: &str, limit: usize) -> Problem {
    Problem::new(
        DiagnosticKind::TooLarge,
        format!("the topology has more than {limit} {what}"),
        format!("at most {limit} {what}"),
    )
}
