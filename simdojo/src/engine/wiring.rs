//! The wiring of a built simulation: where each port's messages go, with what
//! latency, and which partition owns each component. Read-only while running and
//! shared by all workers.

use crate::engine::horizon::LookaheadGraph;
use crate::ids::{ComponentId, FabricId, FabricMember, PartitionId, PortIdx};
use crate::registry::MessageKind;
use crate::time::Tick;

/// Where a port's messages go.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// The port is opened but not linked; sending on it is an error.
    Unconnected,
    /// A link end that may send to `dst`.
    Link { dst: ComponentId, dst_port: PortIdx, latency: Tick },
    /// The receiving end of a one-way link; sending on it is an error.
    ReceiveOnly,
    /// Member `member` of a fabric.
    Fabric { fabric: FabricId, member: FabricMember },
}

/// One port of one component.
#[derive(Clone, Debug)]
pub(crate) struct PortWiring {
    pub name: String,
    pub binding: Binding,
    pub message: MessageKind,
}

/// A fabric's members and latency.
#[derive(Clone, Debug)]
pub(crate) struct FabricWiring {
    pub members: Vec<(ComponentId, PortIdx)>,
    pub latency: Tick,
}

impl FabricWiring {
    pub fn member(&self, m: FabricMember) -> Option<(ComponentId, PortIdx)> {
        self.members.get(m.index()).copied()
    }
}

/// Everything the workers share.
#[derive(Debug)]
pub(crate) struct Wiring {
    /// Per component, its ports by local index.
    pub ports: Vec<Vec<PortWiring>>,
    pub fabrics: Vec<FabricWiring>,
    /// Per component, its partition.
    pub partition_of: Vec<PartitionId>,
    /// Per component, its index within its partition's component list.
    pub local_index: Vec<u32>,
    /// Per component, its path.
    pub paths: Vec<String>,
    /// Per component, its type name.
    pub type_names: Vec<String>,
    /// The lookaheads between partitions, from which each epoch's horizons come.
    pub graph: LookaheadGraph,
    /// Per component, whether it declared that it may end the run.
    pub ends_run: Vec<bool>,
    /// Delay between an exit request and the tick at which the run stops.
    pub exit_delay: Tick,
}

impl Wiring {
    /// The same wiring with every component in one partition, in id order.
    pub fn single_partition(&self) -> Wiring {
        let n = self.paths.len();
        Wiring {
            ports: self.ports.clone(),
            fabrics: self.fabrics.clone(),
            partition_of: vec![PartitionId(0); n],
            local_index: (0..n as u32).collect(),
            paths: self.paths.clone(),
            type_names: self.type_names.clone(),
            graph: LookaheadGraph::single(self.ends_run.iter().any(|&e| e)),
            ends_run: self.ends_run.clone(),
            exit_delay: self.exit_delay,
        }
    }
}
