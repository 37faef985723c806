//! Checks of a topology against the component registry, shared by file loading (which
//! places problems at file positions) and [`validate`] (for topologies built in code,
//! which names the component or link instead).

use std::rc::Rc;

use crate::ids::ComponentId;
use crate::params::{ParamSpec, ParamValue, RawParam};
use crate::registry::{self, ComponentType, PortDir, PortSpec};
use crate::time::Tick;
use crate::topology::error::{list_names, nearest, DiagnosticKind, Diags, Problem, TopologyError};
use crate::topology::{Endpoint, LinkKind, SourceLoc, Topology};

/// The registered type `name`, or a problem suggesting the nearest registered name.
pub(crate) fn lookup_type(name: &str) -> Result<&'static ComponentType, Problem> {
    registry::lookup(name).ok_or_else(|| {
        if let Some(former) = registry::former_type(name) {
            return Problem::new(
                DiagnosticKind::UnknownType,
                format!("component type `{name}` is no longer registered"),
                format!("type `{}` with `{}` in its `params`", former.now, former.with),
            );
        }
        let types = registry::component_types();
        let expected = match nearest(name, types.iter().map(|t| t.name)) {
            Some(n) => format!("a registered component type (did you mean `{n}`?)"),
            None if types.is_empty() => "a registered component type (none are registered)".to_string(),
            None => format!("a registered component type: {}", list_names(types.iter().map(|t| t.name))),
        };
        Problem::new(DiagnosticKind::UnknownType, format!("unknown component type `{name}`"), expected)
    })
}

/// The problem "type `ty` has no parameter `name`".
pub(crate) fn unknown_param(ty: &ComponentType, name: &str) -> Problem {
    let hint =
        nearest(name, ty.params.iter().map(|p| p.name)).map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
    Problem::new(
        DiagnosticKind::UnknownParam,
        format!("component type `{}` has no parameter `{name}`{hint}", ty.name),
        format!("one of its parameters: {}", list_names(ty.params.iter().map(|p| p.name))),
    )
}

/// Converts a raw value of parameter `spec` of type `ty`, checking its range.
pub(crate) fn convert_param(ty: &str, spec: &ParamSpec, raw: &RawParam) -> Result<ParamValue, Problem> {
    let problem = |detail: String| {
        Problem::new(
            DiagnosticKind::ParamValue,
            format!("parameter `{}` of `{ty}` is {}{detail}", spec.name, raw.describe()),
            spec.expected(),
        )
    };
    let value = spec.kind.convert(raw).map_err(|why| {
        problem(if why.starts_with("expected ") { String::new() } else { format!(" ({why})") })
    })?;
    spec.check(&value).map_err(|_| problem(String::new()))?;
    Ok(value)
}

/// The problem "required parameter missing".
pub(crate) fn missing_param(ty: &ComponentType, spec: &ParamSpec) -> Problem {
    Problem::new(
        DiagnosticKind::MissingParam,
        format!("required parameter `{}` of `{}` has no value", spec.name, ty.name),
        format!("`{}` ({}) in `params`, a template or `[defaults.\"{}\"]`", spec.name, spec.expected(), ty.name),
    )
}

/// A port reference split into its name and optional index (`mem[3]` -> `mem`, 3).
pub(crate) fn split_port(port: &str) -> Result<(&str, Option<u64>), Problem> {
    let malformed = || {
        Problem::new(
            DiagnosticKind::BadPath,
            format!("`{port}` is not a port name"),
            "a port `NAME` or array element `NAME[INDEX]`",
        )
    };
    match port.find('[') {
        None => {
            let ok = port.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && port.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if ok {
                Ok((port, None))
            } else {
                Err(malformed())
            }
        }
        Some(open) => {
            let index = port[open + 1..].strip_suffix(']').ok_or_else(malformed)?;
            let n = index.parse::<u64>().map_err(|_| malformed())?;
            Ok((&port[..open], Some(n)))
        }
    }
}

/// The declared port `port` (`name` or `name[i]`) of component `path` of type `ty`.
pub(crate) fn port_spec(ty: &ComponentType, path: &str, port: &str) -> Result<&'static PortSpec, Problem> {
    let (name, index) = split_port(port)?;
    let Some(spec) = ty.port(name) else {
        let hint = nearest(name, ty.ports.iter().map(|p| p.name))
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        return Err(Problem::new(
            DiagnosticKind::UnknownPort,
            format!("component `{path}` (type `{}`) has no port `{name}`{hint}", ty.name),
            format!("one of its ports: {}", list_names(ty.ports.iter().map(|p| p.name))),
        ));
    };
    match (spec.array, index) {
        (true, None) => Err(Problem::new(
            DiagnosticKind::PortIndex,
            format!("port `{name}` of `{path}` is an array port used without an index"),
            format!("`{path}.{name}[INDEX]`"),
        )),
        (false, Some(_)) => Err(Problem::new(
            DiagnosticKind::PortIndex,
            format!("port `{name}` of `{path}` is a single port used with an index"),
            format!("`{path}.{name}` without `[...]`"),
        )),
        _ => Ok(spec),
    }
}

fn dir_name(d: PortDir) -> &'static str {
    match d {
        PortDir::In => "an input (In)",
        PortDir::Out => "an output (Out)",
        PortDir::InOut => "bidirectional (InOut)",
    }
}

/// The kind of a link from port `a` to port `b` (the given one, or the default from
/// the directions), or the reason the two cannot be linked.
pub(crate) fn link_kind(
    (a_name, a): (&str, &PortSpec),
    (b_name, b): (&str, &PortSpec),
    given: Option<LinkKind>,
) -> Result<LinkKind, Problem> {
    let (ma, mb) = ((a.message)(), (b.message)());
    if ma.type_id != mb.type_id {
        return Err(Problem::new(
            DiagnosticKind::MessageType,
            format!("`{a_name}` carries {} but `{b_name}` carries {}", ma.name, mb.name),
            "two ports of the same message type",
        ));
    }
    let kind = given.unwrap_or(if a.dir == PortDir::InOut && b.dir == PortDir::InOut {
        LinkKind::Paired
    } else {
        LinkKind::OneWay
    });
    let ok = match kind {
        LinkKind::Paired => a.dir == PortDir::InOut && b.dir == PortDir::InOut,
        LinkKind::OneWay => a.dir != PortDir::In && b.dir != PortDir::Out,
    };
    if ok {
        Ok(kind)
    } else {
        let expected = match kind {
            LinkKind::Paired => "a paired link between two InOut ports",
            LinkKind::OneWay => "`from` an Out or InOut port `to` an In or InOut port",
        };
        Err(Problem::new(
            DiagnosticKind::Direction,
            format!("`{a_name}` is {} and `{b_name}` is {}", dir_name(a.dir), dir_name(b.dir)),
            expected,
        ))
    }
}

/// Checks that a latency is at least one tick.
pub(crate) fn check_latency(latency: Tick) -> Result<(), Problem> {
    if latency < Tick(1) {
        Err(Problem::new(
            DiagnosticKind::Latency,
            format!("latency {latency} is below one tick"),
            "a latency of at least 1ps",
        ))
    } else {
        Ok(())
    }
}

/// Checks that a weight is positive and finite.
pub(crate) fn check_weight(weight: f64) -> Result<(), Problem> {
    if weight.is_finite() && weight > 0.0 {
        Ok(())
    } else {
        Err(Problem::new(DiagnosticKind::Weight, format!("weight {weight} is not usable"), "a positive finite number"))
    }
}

/// Who took a port first, rendered only when a second user appears.
#[derive(Clone)]
pub(crate) enum PortUser {
    /// Link `i` of a topology (which may carry its origin).
    Link(usize),
    /// Fabric `i` of a topology.
    Fabric(usize),
    /// A description (for declarations read from files).
    Described(Rc<str>),
}

/// Remembers which ports are taken, to report a port used twice.
#[derive(Default)]
pub(crate) struct PortUse {
    taken: foldhash::HashMap<(ComponentId, &'static str, Option<u64>), PortUser>,
}

impl PortUse {
    /// Marks `port` (declared as `spec`) of `component` as used by `by`; a problem
    /// naming the first user if it was already used. `t` describes `Link`/`Fabric`
    /// users.
    pub(crate) fn take(
        &mut self,
        (component, path, port): (ComponentId, &str, &str),
        spec: &'static PortSpec,
        by: PortUser,
        t: Option<&Topology>,
    ) -> Result<(), Problem> {
        let index = split_port(port).ok().and_then(|(_, i)| i);
        match self.taken.entry((component, spec.name, index)) {
            std::collections::hash_map::Entry::Occupied(first) => {
                let first = match (first.get(), t) {
                    (PortUser::Link(i), Some(t)) => {
                        describe_use(&format!("link {i}"), t.links.get(*i).and_then(|l| l.origin.as_ref()))
                    }
                    (PortUser::Fabric(i), Some(t)) => {
                        describe_use(&format!("fabric {i}"), t.fabrics.get(*i).and_then(|f| f.origin.as_ref()))
                    }
                    (PortUser::Link(i), None) => format!("link {i}"),
                    (PortUser::Fabric(i), None) => format!("fabric {i}"),
                    (PortUser::Described(d), _) => d.to_string(),
                };
                Err(Problem::new(
                    DiagnosticKind::PortReused,
                    format!("port `{path}.{port}` is already connected by {first}"),
                    "each port in at most one link or fabric (use an array port for several)",
                ))
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(by);
                Ok(())
            }
        }
    }
}

/// Checks a topology built in code against the registry: the same checks as after
/// loading a file, each component's parameter checks and the memory estimate
/// included. Problems name the component path or link.
pub fn validate(t: &Topology) -> Result<(), TopologyError> {
    let mut diags = Diags::default();
    let mut types: Vec<Option<&'static ComponentType>> = Vec::with_capacity(t.components.len());
    let mut paths: foldhash::HashMap<&str, usize> = foldhash::HashMap::default();
    for (i, c) in t.components.iter().enumerate() {
        let subject = || Some(format!("component `{}`", c.path));
        let mut place = |p: Problem| diags.push(p.place(c.origin.clone(), subject()));
        if let Err(p) = crate::topology::pattern::check_path(&c.path) {
            place(p);
        }
        if let Some(&first) = paths.get(c.path.as_str()) {
            place(duplicate_path(&c.path, first, t.components[first].origin.as_ref()));
        } else {
            paths.insert(&c.path, i);
        }
        if let Err(p) = check_weight(c.weight) {
            place(p);
        }
        let ty = match lookup_type(&c.type_name) {
            Ok(ty) => ty,
            Err(p) => {
                place(p);
                types.push(None);
                continue;
            }
        };
        types.push(Some(ty));
        for (name, value) in c.params.iter() {
            match ty.param(name) {
                None => place(unknown_param(ty, name)),
                Some(spec) => {
                    if spec.check(value).is_err() {
                        place(Problem::new(
                            DiagnosticKind::ParamValue,
                            format!("parameter `{name}` of `{}` is {value}", ty.name),
                            spec.expected(),
                        ))
                    }
                }
            }
        }
        for spec in ty.params {
            if spec.default.is_none() && c.params.get(spec.name).is_none() {
                place(missing_param(ty, spec));
            }
        }
    }

    let mut used = PortUse::default();
    let endpoint = |e: &Endpoint| -> Result<Option<(&str, &'static PortSpec)>, Problem> {
        let Some(c) = t.components.get(e.component.index()) else {
            return Err(Problem::new(
                DiagnosticKind::UnknownComponent,
                format!("component id {} does not exist", e.component),
                format!("an id below {}", t.components.len()),
            ));
        };
        match types[e.component.index()] {
            // An unknown type was reported with its component.
            None => Ok(None),
            Some(ty) => port_spec(ty, &c.path, &e.port).map(|s| Some((c.path.as_str(), s))),
        }
    };
    for (i, l) in t.links.iter().enumerate() {
        let name_of = |e: &Endpoint| match t.components.get(e.component.index()) {
            Some(c) => format!("{}.{}", c.path, e.port),
            None => format!("#{}.{}", e.component, e.port),
        };
        let subject = || Some(format!("link {i} (`{}` -> `{}`)", name_of(&l.a), name_of(&l.b)));
        let mut place = |p: Problem| diags.push(p.place(l.origin.clone(), subject()));
        if let Err(p) = check_latency(l.latency) {
            place(p);
        }
        if let Err(p) = check_weight(l.weight) {
            place(p);
        }
        let (a, b) = (endpoint(&l.a), endpoint(&l.b));
        for (e, r) in [(&l.a, &a), (&l.b, &b)] {
            match r {
                Err(p) => place(p.clone()),
                Ok(Some((path, spec))) => {
                    if let Err(p) = used.take((e.component, path, &e.port), spec, PortUser::Link(i), Some(t)) {
                        place(p);
                    }
                }
                Ok(None) => {}
            }
        }
        if let (Ok(Some((_, sa))), Ok(Some((_, sb)))) = (&a, &b) {
            if let Err(p) = link_kind((&name_of(&l.a), sa), (&name_of(&l.b), sb), Some(l.kind)) {
                place(p);
            }
        }
    }
    for (i, f) in t.fabrics.iter().enumerate() {
        let subject = Some(format!("fabric {i}"));
        let mut place = |p: Problem| diags.push(p.place(f.origin.clone(), subject.clone()));
        if let Err(p) = check_latency(f.latency) {
            place(p);
        }
        if let Err(p) = check_weight(f.weight) {
            place(p);
        }
        let mut first: Option<(String, crate::registry::MessageKind)> = None;
        for m in &f.members {
            match endpoint(m) {
                Err(p) => place(p),
                Ok(None) => {}
                Ok(Some((path, spec))) => {
                    if let Err(p) = used.take((m.component, path, &m.port), spec, PortUser::Fabric(i), Some(t)) {
                        place(p);
                    }
                    if let Err(p) = fabric_member_type(&mut first, || format!("{path}.{}", m.port), spec) {
                        place(p);
                    }
                }
            }
        }
    }
    if diags.is_empty() {
        crate::topology::components_check::check_into(t, &crate::topology::Limits::default(), &mut diags);
    }
    diags.into_result()
}

/// "link 3 (at f.toml:4:1)" or "link 3".
pub(crate) fn describe_use(what: &str, at: Option<&SourceLoc>) -> String {
    match at {
        Some(at) => format!("{what} at {at}"),
        None => what.to_string(),
    }
}

/// The problem "path declared twice".
pub(crate) fn duplicate_path(path: &str, first: usize, first_at: Option<&SourceLoc>) -> Problem {
    let where_ = match first_at {
        Some(at) => format!("at {at}"),
        None => format!("as component {first}"),
    };
    Problem::new(
        DiagnosticKind::DuplicatePath,
        format!("component path `{path}` is already declared {where_}"),
        "unique component paths",
    )
}

/// Checks that a fabric member carries the same message type as the first member.
pub(crate) fn fabric_member_type(
    first: &mut Option<(String, crate::registry::MessageKind)>,
    name: impl Fn() -> String,
    spec: &PortSpec,
) -> Result<(), Problem> {
    let kind = (spec.message)();
    match first {
        None => {
            *first = Some((name(), kind));
            Ok(())
        }
        Some((first_name, first_kind)) if first_kind.type_id != kind.type_id => Err(Problem::new(
            DiagnosticKind::MessageType,
            format!("fabric member `{}` carries {} but `{first_name}` carries {}", name(), kind.name, first_kind.name),
            "all members of a fabric carrying the same message type",
        )),
        Some(_) => Ok(()),
    }
}
