//! The one error type of partitioning: what is wrong with the request or the topology.

use thiserror::Error;

use crate::ids::{ComponentId, FabricId, LinkId};

/// Why a partition plan could not be made. Every variant is fatal for the plan asked
/// for: the caller has to fix the topology or the request.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// The strategy name is not one of [`Strategy::NAMES`](super::Strategy::NAMES).
    #[error("unknown partitioner `{name}`; expected one of: {expected}")]
    UnknownStrategy {
        /// The name given.
        name: String,
        /// The accepted names, comma separated.
        expected: String,
    },
    /// `subtree:` was given without a path prefix after the colon.
    #[error("partitioner `subtree:` needs a path prefix after the colon (e.g. `subtree:gpu.xcd`)")]
    EmptySubtreePrefix,
    /// Zero partitions were asked for.
    #[error("cannot partition into 0 partitions; ask for at least 1")]
    NoPartitions,
    /// The topology has no components, so there is nothing to place.
    #[error("the topology has no components to partition")]
    EmptyTopology,
    /// A component's weight is negative, infinite or NaN.
    #[error("component `{path}` has weight {weight}; weights must be finite and >= 0")]
    BadComponentWeight {
        /// The component's path.
        path: String,
        /// The weight it has.
        weight: f64,
    },
    /// A link names a component id that the topology does not have.
    #[error("link {link} names component {component}, but the topology has only {n_components} components")]
    LinkEndpointOutOfRange {
        /// The link.
        link: LinkId,
        /// The missing component id.
        component: ComponentId,
        /// How many components there are.
        n_components: usize,
    },
    /// A link's weight is negative, infinite or NaN.
    #[error("link {link} from `{from}` to `{to}` has weight {weight}; weights must be finite and >= 0")]
    BadLinkWeight {
        /// The link.
        link: LinkId,
        /// Path of its first end.
        from: String,
        /// Path of its second end.
        to: String,
        /// The weight it has.
        weight: f64,
    },
    /// A fabric names a component id that the topology does not have.
    #[error("fabric {fabric} names component {component}, but the topology has only {n_components} components")]
    FabricMemberOutOfRange {
        /// The fabric.
        fabric: FabricId,
        /// The missing component id.
        component: ComponentId,
        /// How many components there are.
        n_components: usize,
    },
    /// A fabric's weight is negative, infinite or NaN.
    #[error("fabric {fabric} (first member `{first_member}`) has weight {weight}; weights must be finite and >= 0")]
    BadFabricWeight {
        /// The fabric.
        fabric: FabricId,
        /// Path of its first member, or `<none>` for a fabric without members.
        first_member: String,
        /// The weight it has.
        weight: f64,
    },
    /// The `manual` strategy found a component without a `partition`.
    #[error("component `{path}` has no `partition`; the manual partitioner needs one on every component")]
    MissingManualPartition {
        /// The component's path.
        path: String,
    },
    /// The `manual` strategy found a `partition` that is not below the partition count.
    #[error("component `{path}` asks for partition {partition}, but only {n_partitions} partitions (0..{n_partitions}) were requested")]
    ManualPartitionOutOfRange {
        /// The component's path.
        path: String,
        /// The partition it asks for.
        partition: u32,
        /// The number of partitions requested.
        n_partitions: u32,
    },
    /// `subtree:PREFIX` names a prefix under which no component lies.
    #[error("no component path lies under the subtree prefix `{prefix}`")]
    SubtreePrefixMatchesNothing {
        /// The prefix given.
        prefix: String,
    },
}
