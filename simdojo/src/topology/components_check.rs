//! The checks every component's build makes of its parameters, run on a whole topology
//! without building anything: each component's typed conversion and cross-field check
//! ([`ComponentType::validate`]) and the host memory its parameters make it allocate
//! ([`ComponentType::estimate`]), summed with the per-instance cost of components, links
//! and fabric members and held against [`Limits::max_memory`].
//!
//! So a topology `dojo topology` accepts is one the engine can build: a value refused
//! here is refused with the place it was set (its own `FILE:LINE:COL`, or the `--set`
//! that set it), before any model memory exists.

use crate::params::{ParamError, ValueOrigin};
use crate::registry::ComponentType;
use crate::topology::check::lookup_type;
use crate::topology::error::{DiagnosticKind, Diags, Problem, TopologyError};
use crate::topology::host_memory::{host_memory, HostMemory};
use crate::topology::load::{Limits, MAX_MEMORY_VAR};
use crate::topology::{ComponentDecl, Topology};

/// Host memory a simulation takes per component, link and fabric member beyond what
/// their parameters ask for, roughly (a PHOLD process with its fabric port measured
/// 1 KiB after loading and 3.4 KiB built).
pub(crate) const COMPONENT_BYTES: u64 = 2048;
/// See [`COMPONENT_BYTES`].
pub(crate) const LINK_BYTES: u64 = 512;
/// See [`COMPONENT_BYTES`].
pub(crate) const MEMBER_BYTES: u64 = 512;

/// The host memory a topology's simulation is estimated to take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Bytes in all.
    pub bytes: u64,
    /// The component that takes the most (its index in the topology) and its bytes.
    pub largest: Option<(usize, u64)>,
}

/// Runs every component's parameter checks and the memory estimate of `t` against
/// `limits`; the estimate, or every problem found.
pub fn check_components(t: &Topology, limits: &Limits) -> Result<MemoryEstimate, TopologyError> {
    let mut diags = Diags::default();
    let estimate = check_into(t, limits, &mut diags);
    diags.into_result().map(|()| estimate)
}

/// [`check_components`] collecting into `diags`.
pub(crate) fn check_into(t: &Topology, limits: &Limits, diags: &mut Diags) -> MemoryEstimate {
    let fixed = (t.components.len() as u64)
        .saturating_mul(COMPONENT_BYTES)
        .saturating_add((t.links.len() as u64).saturating_mul(LINK_BYTES))
        .saturating_add(t.fabrics.iter().map(|f| f.members.len() as u64).sum::<u64>().saturating_mul(MEMBER_BYTES));
    let mut estimate = MemoryEstimate { bytes: fixed, largest: None };
    for (i, c) in t.components.iter().enumerate() {
        // An unknown type is reported by the topology's own checks.
        let Ok(ty) = lookup_type(&c.type_name) else { continue };
        let bytes = match component_bytes(ty, c) {
            Ok(bytes) => bytes,
            Err(e) => {
                diags.push(param_problem(ty, c, e));
                continue;
            }
        };
        estimate.bytes = estimate.bytes.saturating_add(bytes);
        if estimate.largest.is_none_or(|(_, most)| bytes > most) {
            estimate.largest = Some((i, bytes));
        }
    }
    if diags.is_empty() && estimate.bytes > limits.max_memory {
        diags.push(too_much(t, &estimate, limits.max_memory));
    }
    estimate
}

/// The host memory component `c` of type `ty` will allocate, after its parameters pass
/// the type's checks.
fn component_bytes(ty: &ComponentType, c: &ComponentDecl) -> Result<u64, ParamError> {
    let params = ty.resolve(&c.params)?;
    (ty.validate)(&params).map_err(|e| params.locate(e))?;
    (ty.estimate)(&params).map_err(|e| params.locate(e))
}

/// The diagnostic of parameter error `e` of component `c`: at the value's own place
/// when it came from a file, else at the component's.
fn param_problem(ty: &ComponentType, c: &ComponentDecl, e: ParamError) -> crate::topology::Diagnostic {
    let (problem, expected) = match e.problem.split_once("; expected ") {
        Some((problem, expected)) => (problem.to_string(), expected.to_string()),
        None => (e.problem.clone(), format!("values `{}` can be built with (`dojo plugins {}`)", ty.name, ty.name)),
    };
    let (at, set_by) = match &e.origin {
        Some(ValueOrigin::File(at)) => (Some(at.clone()), String::new()),
        Some(other) => (c.origin.clone(), format!(" (set by {other})")),
        None => (c.origin.clone(), String::new()),
    };
    Problem::new(DiagnosticKind::ParamValue, format!("parameter `{}` of `{}`{set_by} {problem}", e.name, ty.name), expected)
        .place(at, Some(format!("component `{}`", c.path)))
}

/// The problem "the estimate exceeds the limit", placed at the value that makes the
/// largest component large: the one of its parameters that, set back to its default,
/// lowers its estimate the most (else at the component).
fn too_much(t: &Topology, estimate: &MemoryEstimate, limit: u64) -> crate::topology::Diagnostic {
    let mut at = None;
    let mut detail = String::new();
    if let Some((i, bytes)) = estimate.largest {
        let c = &t.components[i];
        at = c.origin.clone();
        detail = format!("; the largest component, `{}`, would take about {}", c.path, size(bytes));
        if let Some((name, origin)) = lookup_type(&c.type_name).ok().and_then(|ty| culprit(ty, c, bytes)) {
            detail.push_str(&format!(", most of it for its `{name}`"));
            match origin {
                Some(ValueOrigin::File(loc)) => at = Some(loc),
                Some(other) => detail.push_str(&format!(" (set by {other})")),
                None => {}
            }
        }
    }
    Problem::new(
        DiagnosticKind::TooLarge,
        format!(
            "the topology would take about {} of host memory to simulate (estimated from its components' \
             parameters and its counts of components, links and fabric members), more than the {} allowed{detail}",
            size(estimate.bytes),
            size(limit)
        ),
        format!("smaller or fewer components ({})", limit_origin(limit)),
    )
    .place(at, None)
}

/// The parameter of `c` (with where it was set) whose default instead of its value
/// lowers the component's estimate of `bytes` the most.
fn culprit(ty: &ComponentType, c: &ComponentDecl, bytes: u64) -> Option<(String, Option<ValueOrigin>)> {
    let mut best: Option<(u64, &str)> = None;
    for (name, _) in c.params.iter() {
        let Some(default) = ty.param(name).and_then(|s| s.default_value()) else { continue };
        let mut changed = c.params.clone();
        changed.set(name, default);
        let Ok(less) = ty.resolve(&changed).and_then(|p| (ty.estimate)(&p)) else { continue };
        if less < bytes && best.is_none_or(|(most, _)| bytes - less > most) {
            best = Some((bytes - less, name));
        }
    }
    best.map(|(_, name)| (name.to_string(), c.params.origin(name).cloned()))
}

/// Where the memory limit comes from, in words.
pub(crate) fn limit_origin(limit: u64) -> String {
    if std::env::var(MAX_MEMORY_VAR).ok().and_then(|v| v.trim().parse::<u64>().ok()) == Some(limit) {
        return "the limit is `dojo --max-topology-memory`".to_string();
    }
    match host_memory() {
        Some(HostMemory { bytes, source }) if bytes / 2 == limit => {
            format!("the limit is half of {source}, {}; `dojo --max-topology-memory SIZE` sets another", size(bytes))
        }
        _ => "the limit is half of the host's available memory unless `dojo --max-topology-memory SIZE` sets it"
            .to_string(),
    }
}

/// A byte count for people: MiB below a GiB, GiB below a TiB, else TiB.
pub(crate) fn size(bytes: u64) -> String {
    let b = bytes as f64;
    let (value, unit) = if b >= (1u64 << 40) as f64 {
        (b / (1u64 << 40) as f64, "TiB")
    } else if b >= (1u64 << 30) as f64 {
        (b / (1u64 << 30) as f64, "GiB")
    } else {
        (b / f64::from(1 << 20), "MiB")
    };
    if value >= 100.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.1} {unit}")
    }
}
