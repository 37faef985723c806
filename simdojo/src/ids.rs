//! Typed indices shared across the engine's API.
//!
//! Every id is a dense index fixed when a topology is built: component ids follow the
//! order of the flattened topology, link ids the order of its links. Because they are
//! fixed by the topology and not by partitioning, they are also the tie-breaking keys
//! of the deterministic event order (see `engine::order`).

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into dense tables.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
            /// The id of the element at `index` of a dense table.
            ///
            /// # Panics
            /// If `index` does not fit in 32 bits; topologies are limited far below that.
            pub fn from_index(index: usize) -> Self {
                Self(u32::try_from(index).expect("id index exceeds u32"))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

typed_id!(
    /// A component instance of a topology.
    ComponentId
);
typed_id!(
    /// A link between two ports of a topology.
    LinkId
);
typed_id!(
    /// A partition: a set of components run by one worker thread.
    PartitionId
);
typed_id!(
    /// A port of one component instance, local to that component.
    PortIdx
);
typed_id!(
    /// A fabric (a many-port network) of a topology.
    FabricId
);
typed_id!(
    /// A member of a fabric: the position of its port in the fabric's member list.
    FabricMember
);
