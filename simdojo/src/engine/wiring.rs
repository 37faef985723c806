//! The wiring of a built simulation: where each port's messages go, with what
//! latency, and which partition owns each component. Read-only while running and
//! shared by all workers.

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
    /// `reach[p][q]`: the smallest total latency of a chain of one or more links or
    /// fabrics leading from partition p to q, through any partitions (so `reach[p][p]`
    /// is p's shortest round trip). An event p handles at time t can cause an event in
    /// q no earlier than t + `reach[p][q]`; `None` when it never can.
    pub reach: Vec<Vec<Option<Tick>>>,
    /// Delay between an exit request and the tick at which the run stops.
    pub exit_delay: Tick,
}

/// `reach` from a matrix of direct lookaheads: shortest paths of at least one hop
/// (Floyd-Warshall without zero self-distances, so cycles count).
// Rows m and i of the same matrix are read and written together: indices are clearer.
#[allow(clippy::needless_range_loop)]
pub fn reach_matrix(direct: &[Vec<Option<Tick>>]) -> Vec<Vec<Option<Tick>>> {
    let k = direct.len();
    let mut d = direct.to_vec();
    for m in 0..k {
        for i in 0..k {
            let Some(im) = d[i][m] else { continue };
            for j in 0..k {
                if let Some(mj) = d[m][j] {
                    let via = im.saturating_add(mj);
                    if d[i][j].is_none_or(|cur| via < cur) {
                        d[i][j] = Some(via);
                    }
                }
            }
        }
    }
    d
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
            reach: vec![vec![None]],
            exit_delay: self.exit_delay,
        }
    }
}
