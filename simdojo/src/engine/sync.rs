//! Periodic synchronisation hooks: a shared resource (a GPU's windowed memory) that
//! needs every partition to stop at the multiples of a period Q and something done
//! between them.
//!
//! A component registers a [`SyncHook`] at build ([`crate::component::BuildContext::sync_hook`]).
//! The engine then caps every epoch's horizons at the next multiple of Q after the
//! earliest pending event, so every partition reaches a boundary in the same epoch, and
//! at the start of the first epoch whose earliest event is at or past a boundary (all
//! events before it handled, none at or after it) it runs [`SyncHook::boundary`] before
//! any partition handles an event. Empty time is still skipped: the cap follows the
//! next event, not a fixed step. With one partition the same boundaries happen on the
//! one thread, so results do not depend on the partitioning.

use crate::time::Tick;

/// A resource synchronised at the multiples of a period (see the [module docs](self)).
pub trait SyncHook: Send + Sync {
    /// The period Q, asked once after every component is built: `None` takes no part;
    /// an error fails the build (naming why the period does not fit the topology).
    fn period(&self) -> Result<Option<Tick>, String>;

    /// Whether a boundary has anything to do (when false, the engine may skip
    /// [`SyncHook::boundary`]).
    fn pending(&self) -> bool;

    /// The work of a boundary, share `share` of `shares` (the engine runs every share,
    /// share 0 last, before any event at or after the boundary is handled). Also run
    /// at the end of a run that is not a pause, so its effects are visible to the
    /// caller.
    fn boundary(&self, share: usize, shares: usize);
}

/// The hooks of one simulation and their periods.
#[derive(Clone, Default)]
pub(crate) struct SyncHooks {
    hooks: Vec<(Tick, std::sync::Arc<dyn SyncHook>)>,
}

impl std::fmt::Debug for SyncHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.hooks.iter().map(|(q, _)| q)).finish()
    }
}

impl SyncHooks {
    /// Asks each hook (with the index of the component that registered it) for its
    /// period; `Err((component, reason))` names the first whose period does not fit.
    pub fn new(registered: Vec<(usize, std::sync::Arc<dyn SyncHook>)>) -> Result<SyncHooks, (usize, String)> {
        let mut hooks = Vec::new();
        for (c, h) in registered {
            match h.period() {
                Ok(Some(q)) if q > Tick::ZERO => hooks.push((q, h)),
                Ok(_) => {}
                Err(e) => return Err((c, e)),
            }
        }
        Ok(SyncHooks { hooks })
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// The cap on horizons when the earliest pending event is at `next`: the next
    /// multiple of any hook's period strictly after it (`Tick::MAX` without hooks).
    pub fn cap(&self, next: Tick) -> Tick {
        self.hooks.iter().map(|(q, _)| Tick((next.0 / q.0).saturating_add(1).saturating_mul(q.0))).min().unwrap_or(Tick::MAX)
    }

    /// Runs the boundaries passed between `from` (the earliest event of the epoch that
    /// ran last) and `to` (the earliest event now): every hook one of whose multiples
    /// lies in `(from, to]`, all shares on this thread.
    pub fn cross(&self, from: Tick, to: Tick) {
        for (q, h) in &self.hooks {
            if to.0 / q.0 > from.0 / q.0 && h.pending() {
                h.boundary(0, 1);
            }
        }
    }

    /// Runs every hook's boundary work (the end of a run).
    pub fn finish(&self) {
        for (_, h) in &self.hooks {
            if h.pending() {
                h.boundary(0, 1);
            }
        }
    }
}
