//! The final state of a PHOLD run, whatever engine produced it.

use crate::phold_spec::{digest, total_events, LpState};

/// The LP states at the end of a run plus engine-specific step counts.
#[derive(Clone, Debug, PartialEq)]
pub struct PholdOutcome {
    /// Final state of every LP, in id order.
    pub lps: Vec<LpState>,
    /// Engine steps, when the engine has them: nexosim `step` calls, or the
    /// number of distinct event timestamps for the binary heap.
    pub epochs: Option<u64>,
}

impl PholdOutcome {
    /// Total events handled.
    pub fn events(&self) -> u64 {
        total_events(&self.lps)
    }

    /// The spec digest of the final state.
    pub fn digest(&self) -> u64 {
        digest(&self.lps)
    }
}
