//! How a run ends: exit requests, the exit status.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::ComponentId;
use crate::time::Tick;

/// A component's request to end the run (see `Context::request_exit`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ExitRequest {
    /// The tick at which the run stops (request time plus exit delay).
    pub at: Tick,
    pub component: ComponentId,
    pub reason: String,
    pub code: i32,
}

impl ExitRequest {
    /// The earlier of two requests; ties go to the smaller component id, so the
    /// winner does not depend on which partition saw its request first.
    pub fn earliest(a: Option<ExitRequest>, b: &ExitRequest) -> Option<ExitRequest> {
        match a {
            Some(a) if (a.at, a.component) <= (b.at, b.component) => Some(a),
            _ => Some(b.clone()),
        }
    }
}

/// Why a run (or a call to `run_until` / `step`) stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ExitReason {
    /// No events remain and no external input can arrive from a live sender. The run
    /// may be continued: input sent later (through a new `ExternalSender`) starts it again.
    Quiescent,
    /// The topology's or caller's end time was reached.
    MaxTicks,
    /// A component called `request_exit`.
    Requested {
        /// The requesting component's path.
        component: String,
        /// Its reason.
        reason: String,
    },
    /// Every primary component released.
    PrimariesReleased,
    /// `run_until` reached its time limit; the run can continue.
    Paused,
    /// `step` handled one timestamp; the run can continue.
    Stepped,
    /// `StopHandle::stop` was called from another thread.
    Interrupted,
    /// A component misbehaved (bad send, panic); the message says which.
    Error,
    /// The call asked for something the simulation cannot do (`run_until` a time
    /// before the simulation's own); nothing ran, and the run can continue.
    Refused,
}

/// The outcome of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    /// Why it stopped.
    pub reason: ExitReason,
    /// The simulated time it stopped at: every event before it was handled.
    pub tick: Tick,
    /// The exit code: the requester's, 0 for a normal end, 1 for an error.
    pub code: i32,
    /// A sentence for people.
    pub message: String,
}

impl ExitStatus {
    /// Whether the run may be continued (`Paused`, `Stepped`, `Quiescent` (new
    /// external input restarts it), `Interrupted` or `Refused`).
    pub fn can_continue(&self) -> bool {
        matches!(
            self.reason,
            ExitReason::Paused | ExitReason::Stepped | ExitReason::Quiescent | ExitReason::Interrupted | ExitReason::Refused
        )
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {} (code {})", self.message, self.tick, self.code)
    }
}
