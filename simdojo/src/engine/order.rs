//! The deterministic total order of events.
//!
//! Every event carries an [`EventKey`]: `(time, source, sequence)`.
//! - `time`: the tick at which it is delivered.
//! - `source`: the [`ComponentId`] of the component that created it (the sender of a
//!   message, the owner of a timer). External inputs use [`EXTERNAL_SOURCE`] and so
//!   come after every component's events of the same tick.
//! - `sequence`: the source component's own count of events it has created so far.
//!
//! Events are handled in increasing key order within each partition. Component ids
//! are fixed by the topology and a component creates its events in the order it
//! handles its own events, so the key of every event, and with it the order in which
//! each component sees its events, is the same for any partitioning and any number of
//! worker threads.
//!
//! **Architecture Invariant:** the key never contains anything that depends on the
//! partition, the thread or wall-clock time.
//!
//! Limits: 2^24 - 1 components and 2^40 events created per component; the engine
//! reports [`EngineError::SequenceOverflow`](crate::engine::EngineError) beyond that.

use serde::{Deserialize, Serialize};

use crate::ids::ComponentId;
use crate::time::Tick;

/// Bits of the low key word holding the per-source sequence number.
pub const SEQ_BITS: u32 = 40;
/// The largest sequence number a source may use.
pub const MAX_SEQ: u64 = (1 << SEQ_BITS) - 1;
/// The largest component id that fits in a key.
pub const MAX_COMPONENTS: u32 = (1 << (64 - SEQ_BITS)) - 1;
/// The source id of external inputs.
pub const EXTERNAL_SOURCE: u32 = MAX_COMPONENTS;

/// The sort key of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EventKey {
    /// Delivery time.
    pub time: Tick,
    /// `source << SEQ_BITS | sequence`.
    pub lo: u64,
}

impl EventKey {
    /// The key of the `seq`-th event created by `source` for delivery at `time`.
    #[inline]
    pub fn new(time: Tick, source: u32, seq: u64) -> EventKey {
        debug_assert!(source <= MAX_COMPONENTS && seq <= MAX_SEQ);
        EventKey { time, lo: (u64::from(source) << SEQ_BITS) | seq }
    }
    /// The creating component, or [`EXTERNAL_SOURCE`].
    pub fn source(&self) -> u32 {
        (self.lo >> SEQ_BITS) as u32
    }
    /// The creator's sequence number.
    pub fn seq(&self) -> u64 {
        self.lo & MAX_SEQ
    }
    /// The source as a component id, if it is one.
    pub fn source_component(&self) -> Option<ComponentId> {
        let s = self.source();
        (s != EXTERNAL_SOURCE).then_some(ComponentId(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The packed key orders exactly like the tuple (time, source, seq).
        #[test]
        fn key_order_is_tuple_order(a in (0u64..1000, 0u32..MAX_COMPONENTS, 0u64..MAX_SEQ),
                                    b in (0u64..1000, 0u32..MAX_COMPONENTS, 0u64..MAX_SEQ)) {
            let ka = EventKey::new(Tick(a.0), a.1, a.2);
            let kb = EventKey::new(Tick(b.0), b.1, b.2);
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!((ka.source(), ka.seq()), (a.1, a.2));
        }
    }
}
