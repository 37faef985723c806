//! Miss-status holding registers: the outstanding misses of a cache, each with the
//! requests waiting for its fill.
//!
//! A second miss to a line already outstanding merges into its entry instead of sending
//! another request downstream. When every entry is busy (or the entry's target list is
//! full) the request is handed back and the caller stalls or retries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::{ConfigError, MshrError};
use super::units::LineAddr;

/// Capacity of an MSHR file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MshrConfig {
    /// Distinct lines that can be outstanding at once.
    pub entries: u32,
    /// Requests one entry can hold, the first (allocating) one included.
    pub targets_per_entry: u32,
}

/// The answer to [`MshrFile::allocate`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MshrAllocation<R> {
    /// A new entry was allocated: the caller sends the miss downstream.
    New,
    /// The line was already outstanding: the request waits for that fill.
    Merged,
    /// No room (no free entry, or the line's entry has no free target); the request is
    /// handed back.
    Full(R),
}

/// Counters of an MSHR file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MshrStats {
    /// Entries allocated.
    pub allocations: u64,
    /// Requests merged into an outstanding entry.
    pub merges: u64,
    /// Requests refused because no entry was free.
    pub full_entries: u64,
    /// Requests refused because their entry's target list was full.
    pub full_targets: u64,
    /// The most entries outstanding at once.
    pub peak_occupancy: u32,
}

/// An MSHR file whose waiting requests are of the caller's type `R` (a request id or a
/// whole message).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MshrFile<R> {
    config: MshrConfig,
    /// Outstanding lines and their waiters in arrival order. A BTreeMap keeps iteration
    /// and serialization order deterministic.
    pending: BTreeMap<LineAddr, Vec<R>>,
    stats: MshrStats,
}

impl<R> MshrFile<R> {
    /// An empty file.
    pub fn new(config: &MshrConfig) -> Result<MshrFile<R>, ConfigError> {
        if config.entries == 0 {
            return Err(ConfigError::Zero {
                model: "mshr",
                field: "entries",
            });
        }
        if config.targets_per_entry == 0 {
            return Err(ConfigError::Zero {
                model: "mshr",
                field: "targets_per_entry",
            });
        }
        Ok(MshrFile {
            config: *config,
            pending: BTreeMap::new(),
            stats: MshrStats::default(),
        })
    }

    /// Records a miss of `request` to `line`.
    pub fn allocate(&mut self, line: LineAddr, request: R) -> MshrAllocation<R> {
        if let Some(waiters) = self.pending.get_mut(&line) {
            if waiters.len() >= self.config.targets_per_entry as usize {
                self.stats.full_targets += 1;
                return MshrAllocation::Full(request);
            }
            waiters.push(request);
            self.stats.merges += 1;
            return MshrAllocation::Merged;
        }
        if self.pending.len() >= self.config.entries as usize {
            self.stats.full_entries += 1;
            return MshrAllocation::Full(request);
        }
        self.pending.insert(line, vec![request]);
        self.stats.allocations += 1;
        self.stats.peak_occupancy = self.stats.peak_occupancy.max(self.pending.len() as u32);
        MshrAllocation::New
    }

    /// The fill of `line` arrived: frees its entry and returns its requests in arrival
    /// order.
    pub fn complete(&mut self, line: LineAddr) -> Result<Vec<R>, MshrError> {
        self.pending
            .remove(&line)
            .ok_or(MshrError::NotPending { line })
    }

    /// Whether `line` has an outstanding miss.
    pub fn is_pending(&self, line: LineAddr) -> bool {
        self.pending.contains_key(&line)
    }

    /// Entries in use.
    pub fn occupancy(&self) -> u32 {
        self.pending.len() as u32
    }

    /// Whether no entry is free.
    pub fn is_full(&self) -> bool {
        self.pending.len() >= self.config.entries as usize
    }

    /// The configuration.
    pub fn config(&self) -> &MshrConfig {
        &self.config
    }

    /// Counters since creation.
    pub fn stats(&self) -> &MshrStats {
        &self.stats
    }
}
