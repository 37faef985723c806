//! A port or link of fixed bandwidth: transfers are serialized, each occupying the port
//! for `bytes / bandwidth` cycles after the previous one ends.
//!
//! Bandwidth is a ratio (`bytes` per `per_cycles` cycles) so rates that are not a whole
//! number of bytes per cycle (an HBM pseudo-channel seen from the engine clock) are exact.
//! Internally time is kept in units of `1 / bytes` cycle, so rounding never lets a stream
//! run faster than configured; only the finish cycle reported to the caller is rounded
//! (up).
//!
//! **Invariant:** for any sequence of reservations, the bytes of reservations `i..=k`
//! never exceed `(finish_k - now_i) * bandwidth`.

use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::units::Cycle;

/// A bandwidth of `bytes` bytes every `per_cycles` cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bandwidth {
    /// Bytes moved...
    pub bytes: u64,
    /// ...every this many cycles.
    pub per_cycles: u64,
}

impl Bandwidth {
    /// `bytes` bytes every cycle.
    pub const fn per_cycle(bytes: u64) -> Bandwidth {
        Bandwidth {
            bytes,
            per_cycles: 1,
        }
    }

    /// The rate as a float, bytes per cycle.
    pub fn bytes_per_cycle(&self) -> f64 {
        self.bytes as f64 / self.per_cycles as f64
    }

    fn check(&self) -> Result<(), ConfigError> {
        if self.bytes == 0 {
            return Err(ConfigError::Zero {
                model: "bandwidth",
                field: "bytes",
            });
        }
        if self.per_cycles == 0 {
            return Err(ConfigError::Zero {
                model: "bandwidth",
                field: "per_cycles",
            });
        }
        Ok(())
    }
}

/// Counters of a port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortStats {
    /// Reservations made.
    pub transfers: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Reservations that had to wait for an earlier transfer.
    pub queued: u64,
}

/// A serializing port of fixed bandwidth.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BandwidthPort {
    bandwidth: Bandwidth,
    /// When the port is next free, in units of `1 / bandwidth.bytes` cycle.
    busy_until_units: u128,
    stats: PortStats,
}

impl BandwidthPort {
    /// An idle port.
    pub fn new(bandwidth: Bandwidth) -> Result<BandwidthPort, ConfigError> {
        bandwidth.check()?;
        Ok(BandwidthPort {
            bandwidth,
            busy_until_units: 0,
            stats: PortStats::default(),
        })
    }

    /// Reserves the port for `bytes` bytes arriving at `now`; the transfer starts when the
    /// port is free and the returned cycle is when its last byte has left. A zero-byte
    /// transfer finishes when the port is free.
    pub fn reserve(&mut self, now: Cycle, bytes: u64) -> Cycle {
        let units_per_cycle = u128::from(self.bandwidth.bytes);
        let now_units = u128::from(now.get()) * units_per_cycle;
        if self.busy_until_units > now_units {
            self.stats.queued += 1;
        }
        let start = now_units.max(self.busy_until_units);
        let end = start + u128::from(bytes) * u128::from(self.bandwidth.per_cycles);
        self.busy_until_units = end;
        self.stats.transfers += 1;
        self.stats.bytes += bytes;
        units_to_cycle(end, units_per_cycle)
    }

    /// The first cycle at which the port is free (rounded up).
    pub fn busy_until(&self) -> Cycle {
        units_to_cycle(self.busy_until_units, u128::from(self.bandwidth.bytes))
    }

    /// The configured bandwidth.
    pub fn bandwidth(&self) -> Bandwidth {
        self.bandwidth
    }

    /// Counters since creation.
    pub fn stats(&self) -> &PortStats {
        &self.stats
    }
}

/// Rounds a time in sub-cycle units up to a whole cycle, saturating at `u64::MAX`.
fn units_to_cycle(units: u128, units_per_cycle: u128) -> Cycle {
    let cycles = units.div_ceil(units_per_cycle);
    Cycle(u64::try_from(cycles).unwrap_or(u64::MAX))
}
