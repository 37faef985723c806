//! Topologies: which components exist, with which parameters, linked how.
//!
//! [`Topology`] is the flattened, validated form the engine builds from: every index
//! range expanded, every template and default applied, every parameter converted to its
//! declared kind. It is made either in code ([`Topology::add_component`],
//! [`Topology::add_link`]) or from a topology file by [`load`](crate::topology::load).
//!
//! **Architecture Invariant:** component and link ids are positions in this flat list,
//! so they do not depend on partitioning; the engine's deterministic event order uses
//! them as keys.

mod build;
mod check;
mod components_check;
mod document;
mod dot;
mod error;
pub mod host_memory;
mod json_doc;
mod load;
pub mod overrides;
mod pattern;
mod source;
mod summary;
mod toml_doc;

pub use check::validate;
pub use components_check::{check_components, MemoryEstimate};
pub use dot::to_dot;
pub use error::{Diagnostic, DiagnosticKind, TopologyError};
pub use host_memory::available_host_memory;
pub use load::{load, MAX_MEMORY_VAR, load_str, load_str_with, Format, Limits};
pub use summary::{summarize, Summary};

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ids::{ComponentId, FabricId, LinkId};
use crate::params::Params;
use crate::time::Tick;

/// Where something was declared in a topology file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLoc {
    /// The file.
    pub file: Arc<PathBuf>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)
    }
}

/// Engine settings a topology may carry (`[engine]` in a topology file).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineSettings {
    /// Stop the run at this time.
    pub max_ticks: Option<Tick>,
    /// Delay between `request_exit` and the tick at which the run stops; defaults to the
    /// largest link latency of the topology (see `engine::control`).
    pub exit_delay: Option<Tick>,
    /// Partitioner name (`dojo topology --partitioner` overrides it).
    pub partitioner: Option<String>,
    /// Worker threads (`--workers` overrides it).
    pub workers: Option<u32>,
}

/// One component instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComponentDecl {
    /// Hierarchical path, unique in the topology: `gpu.xcd[3].se[1].cu[7]`.
    pub path: String,
    /// Registered type name.
    pub type_name: String,
    /// Resolved parameters.
    pub params: Params,
    /// Partition requested by the topology file (used by the `manual` partitioner).
    pub partition: Option<u32>,
    /// Relative cost of the component's events, for load balancing (default 1).
    pub weight: f64,
    /// Where it was declared, if it came from a file.
    pub origin: Option<SourceLoc>,
}

/// One end of a link: a component and one of its ports (`mem` or `mem[3]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The component.
    pub component: ComponentId,
    /// The port name, with `[i]` for an element of an array port.
    pub port: String,
}

/// Whether messages flow one way or both ways over a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkKind {
    /// From endpoint `a` to endpoint `b` only.
    OneWay,
    /// Both ways, with the same latency.
    Paired,
}

/// One link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkDecl {
    /// First end (the sender of a one-way link).
    pub a: Endpoint,
    /// Second end (the receiver of a one-way link).
    pub b: Endpoint,
    /// Delivery delay, at least one tick; the lookahead the link gives the engine.
    pub latency: Tick,
    /// Relative traffic, for partitioning (default 1).
    pub weight: f64,
    /// Direction.
    pub kind: LinkKind,
    /// Where it was declared, if it came from a file.
    pub origin: Option<SourceLoc>,
}

/// A fabric: a fixed-latency network joining many ports, where any member can send to
/// any other by member index (`Context::send_to`). It stands for an all-to-all set of
/// links without materializing them (PHOLD's LPs, a crossbar).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FabricDecl {
    /// The member ports; a member's index is its position here.
    pub members: Vec<Endpoint>,
    /// Delivery delay between any two members, at least one tick.
    pub latency: Tick,
    /// Relative traffic, for partitioning (default 1).
    pub weight: f64,
    /// Where it was declared, if it came from a file.
    pub origin: Option<SourceLoc>,
}

/// A flattened topology.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Engine settings.
    pub engine: EngineSettings,
    /// Components; a [`ComponentId`] indexes this list.
    pub components: Vec<ComponentDecl>,
    /// Links; a [`LinkId`] indexes this list.
    pub links: Vec<LinkDecl>,
    /// Fabrics; a [`FabricId`] indexes this list.
    pub fabrics: Vec<FabricDecl>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Adds a component and returns its id.
    pub fn add_component(&mut self, path: impl Into<String>, type_name: impl Into<String>, params: Params) -> ComponentId {
        let id = ComponentId::from_index(self.components.len());
        self.components.push(ComponentDecl {
            path: path.into(),
            type_name: type_name.into(),
            params,
            partition: None,
            weight: 1.0,
            origin: None,
        });
        id
    }

    /// Adds a link from `a.a_port` to `b.b_port` and returns its id.
    pub fn add_link(
        &mut self,
        (a, a_port): (ComponentId, &str),
        (b, b_port): (ComponentId, &str),
        latency: Tick,
        kind: LinkKind,
    ) -> LinkId {
        let id = LinkId::from_index(self.links.len());
        self.links.push(LinkDecl {
            a: Endpoint { component: a, port: a_port.to_string() },
            b: Endpoint { component: b, port: b_port.to_string() },
            latency,
            weight: 1.0,
            kind,
            origin: None,
        });
        id
    }

    /// Adds a fabric joining `members` and returns its id.
    pub fn add_fabric(&mut self, members: Vec<(ComponentId, String)>, latency: Tick) -> FabricId {
        let id = FabricId::from_index(self.fabrics.len());
        self.fabrics.push(FabricDecl {
            members: members.into_iter().map(|(component, port)| Endpoint { component, port }).collect(),
            latency,
            weight: 1.0,
            origin: None,
        });
        id
    }

    /// The component `id`.
    pub fn component(&self, id: ComponentId) -> &ComponentDecl {
        &self.components[id.index()]
    }

    /// The id of the component at `path`.
    pub fn find(&self, path: &str) -> Option<ComponentId> {
        self.components.iter().position(|c| c.path == path).map(ComponentId::from_index)
    }

    /// The smallest latency of any link or fabric, or `None` without either.
    pub fn min_latency(&self) -> Option<Tick> {
        self.latencies().min()
    }

    /// The largest latency of any link or fabric, or `None` without either.
    pub fn max_latency(&self) -> Option<Tick> {
        self.latencies().max()
    }

    fn latencies(&self) -> impl Iterator<Item = Tick> + '_ {
        self.links.iter().map(|l| l.latency).chain(self.fabrics.iter().map(|f| f.latency))
    }
}
