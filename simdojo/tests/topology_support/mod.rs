//! Component types registered for the topology tests, and helpers to print a topology
//! compactly and to load topology text.

#![allow(dead_code)]

use std::fmt::Write;
use std::path::{Path, PathBuf};

use simdojo::component::{BuildContext, BuildError, Component, Event};
use simdojo::engine::Context;
use simdojo::params::{Bytes, ParamError, ParamSet, ParamValue};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec};
use simdojo::time::Tick;
use simdojo::topology::{self, Diagnostic, DiagnosticKind, Format, LinkKind, Topology, TopologyError};

/// A component that ignores every event; validation never builds it, but a type needs
/// a constructor.
struct Idle;

impl Component for Idle {
    fn handle(&mut self, _: Event, _: &mut Context<'_>) {}
}

fn build_idle(_: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    Ok(Box::new(Idle))
}

const fn port(name: &'static str, dir: PortDir, array: bool, message: fn() -> MessageKind) -> PortSpec {
    PortSpec { name, doc: "test port", dir, array, message }
}

/// The parameters of `test.lp`.
#[derive(simdojo::Params)]
struct LpParams {
    /// Test parameter.
    #[param(default = 4)]
    events: u64,
    /// Test parameter.
    #[param(default = 0.5)]
    remote: f64,
    /// Test parameter.
    #[param(default = Tick::ns(1))]
    mean: Tick,
    /// Test parameter (required).
    seed: u64,
}

/// The parameters of `test.sink`.
#[derive(simdojo::Params)]
struct SinkParams {
    /// Test parameter.
    #[param(default = "sink")]
    label: String,
    /// Test parameter.
    #[param(default = Bytes::kib(4))]
    size: Bytes,
}

/// The parameters of `test.cache`: a cross-field check and a memory estimate.
#[derive(simdojo::Params)]
#[params(check = CacheParams::check, estimate = CacheParams::estimate)]
struct CacheParams {
    /// Test parameter: capacity.
    #[param(default = Bytes::kib(64), range = 1..)]
    size: Bytes,
    /// Test parameter: ways, which must divide the lines.
    #[param(default = 4, range = 1..)]
    ways: u64,
}

impl CacheParams {
    fn check(&self) -> Result<(), ParamError> {
        if !(self.size.get() / 64).is_multiple_of(self.ways) {
            return Err(ParamError::new("ways", format!("is {}, which does not divide the {} lines", self.ways, self.size.get() / 64)));
        }
        Ok(())
    }
    /// Its tags: 8 bytes per 64-byte line.
    fn estimate(&self) -> u64 {
        self.size.get() / 8
    }
}

simdojo::register_component!(ComponentType {
    name: "test.cache",
    doc: "A cache-like type with a cross-field check and a memory estimate.",
    params: CacheParams::SPECS,
    validate: registry::validate_with::<CacheParams>,
    estimate: registry::estimate_with::<CacheParams>,
    ports: &[],
    stats: &[],
    build: build_idle,
});

simdojo::register_component!(ComponentType {
    name: "test.lp",
    doc: "A logical process for topology tests.",
    params: LpParams::SPECS,
    validate: registry::validate_with::<LpParams>,
    estimate: registry::estimate_with::<LpParams>,
    ports: &[
        port("out", PortDir::Out, false, MessageKind::of::<u64>),
        port("in", PortDir::In, false, MessageKind::of::<u64>),
        port("net", PortDir::InOut, false, MessageKind::of::<u64>),
        port("ctl", PortDir::In, false, MessageKind::of::<String>),
    ],
    stats: &[],
    build: build_idle,
});

simdojo::register_component!(ComponentType {
    name: "test.sink",
    doc: "A many-input sink for topology tests.",
    params: SinkParams::SPECS,
    validate: registry::validate_with::<SinkParams>,
    estimate: registry::estimate_with::<SinkParams>,
    ports: &[
        port("mem", PortDir::In, true, MessageKind::of::<u64>),
        port("bus", PortDir::InOut, false, MessageKind::of::<u64>),
        port("log", PortDir::Out, false, MessageKind::of::<String>),
        port("net", PortDir::InOut, false, MessageKind::of::<String>),
    ],
    stats: &[],
    build: build_idle,
});

/// The directory of the test fixtures.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Loads TOML text named `t.toml`.
pub fn toml(text: &str) -> Result<Topology, TopologyError> {
    topology::load_str(text, Path::new("t.toml"), Format::Toml)
}

/// Loads JSON text named `t.json`.
pub fn json(text: &str) -> Result<Topology, TopologyError> {
    topology::load_str(text, Path::new("t.json"), Format::Json)
}

/// The first diagnostic of a load that must fail.
pub fn first_error(r: Result<Topology, TopologyError>) -> Diagnostic {
    match r {
        Ok(t) => panic!("expected an error, loaded {} components", t.components.len()),
        Err(e) => e.first().clone(),
    }
}

/// Asserts the diagnostic's class, `file:line:col` and that its text contains `fragment`.
pub fn assert_diag(d: &Diagnostic, kind: DiagnosticKind, at: &str, fragment: &str) {
    let text = d.to_string();
    assert_eq!(d.kind, kind, "{text}");
    let loc = d.at.as_ref().map(|l| l.to_string()).unwrap_or_default();
    assert_eq!(loc, at, "{text}");
    assert!(text.starts_with(&format!("{at}: ")), "{text}");
    assert!(text.contains(fragment), "`{fragment}` not in: {text}");
    assert!(text.contains("; expected "), "{text}");
    assert!(!text.contains('\n'), "{text}");
}

/// A compact, origin-free listing of a topology, for golden comparisons.
pub fn render(t: &Topology) -> String {
    let mut out = String::new();
    let e = &t.engine;
    writeln!(
        out,
        "engine max_ticks={:?} exit_delay={:?} partitioner={:?} workers={:?}",
        e.max_ticks, e.exit_delay, e.partitioner, e.workers
    )
    .unwrap();
    for (i, c) in t.components.iter().enumerate() {
        let params: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}={}", show(v))).collect();
        writeln!(out, "c{i} {} {} w={} p={:?} {}", c.path, c.type_name, c.weight, c.partition, params.join(" "))
            .unwrap();
    }
    for l in &t.links {
        let kind = match l.kind {
            LinkKind::OneWay => "->",
            LinkKind::Paired => "<->",
        };
        writeln!(
            out,
            "{}.{} {kind} {}.{} {:?} w={}",
            t.component(l.a.component).path,
            l.a.port,
            t.component(l.b.component).path,
            l.b.port,
            l.latency,
            l.weight
        )
        .unwrap();
    }
    for f in &t.fabrics {
        let members: Vec<String> =
            f.members.iter().map(|m| format!("{}.{}", t.component(m.component).path, m.port)).collect();
        writeln!(out, "fabric {:?} w={} [{}]", f.latency, f.weight, members.join(" ")).unwrap();
    }
    out
}

fn show(v: &ParamValue) -> String {
    match v {
        ParamValue::Duration(t) => format!("{t:?}"),
        other => other.to_string(),
    }
}
