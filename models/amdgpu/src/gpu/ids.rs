//! Typed indices of the GPU model, so an XCD number is never mistaken for a CU number.

use serde::{Deserialize, Serialize};

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as a `usize`, for indexing vectors.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

index_type!(
    /// An XCD (accelerator complex die) of a GPU.
    XcdIdx
);
index_type!(
    /// A compute unit within its XCD.
    CuIdx
);
index_type!(
    /// A wave slot within a compute unit.
    SlotIdx
);
index_type!(
    /// A hardware queue of a GPU.
    QueueId
);

/// A kernel dispatch, numbered per GPU in the order the packet processor took them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct DispatchSeq(pub u64);

/// A GPU virtual address.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct GpuAddr(pub u64);

impl std::fmt::Display for GpuAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
