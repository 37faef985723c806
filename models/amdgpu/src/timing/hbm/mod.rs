//! An HBM controller timing model: stacks, channels, pseudo-channels and banks with an
//! open-row policy, per-pseudo-channel data buses and per-bank busy times.
//!
//! `access(now, addr, bytes, is_write)` answers when the last byte of the access has moved.
//! An access is cut at interleave-granule boundaries (see [`mapping`]); each piece goes to
//! its bank:
//!
//! ```text
//!   row hit:      column cmd at t0                         -> data at +tCL
//!   row closed:   ACT at t0, column at +tRCD               -> data at +tCL
//!   row conflict: PRE at max(t0, ACT + tRAS), ACT at +tRP, column at +tRCD -> data at +tCL
//!   data then occupies the pseudo-channel bus for bursts x tBURST, after earlier data
//! ```
//!
//! where `t0` is the later of `now` and the bank's next free column slot. Rows stay open
//! after an access (open-page policy).
//!
//! Time is kept internally in units fine enough for both clocks (one caller cycle =
//! `memory_clock_mhz` units, one memory clock = `caller_clock_mhz` units), so conversion
//! never loses bandwidth; completion cycles are rounded up to the caller's clock.

pub mod config;
pub mod mapping;

use serde::{Deserialize, Serialize};

pub use self::config::{ns_to_clocks, DramTiming, HbmConfig, HbmGeometry};
pub use self::mapping::{AddressMapping, DramLocation, MapField};

use self::mapping::{Decoder, FieldCounts};
use crate::timing::error::{ConfigError, HbmError};
use crate::timing::units::{ByteAddr, Cycle};

/// The largest access one [`HbmModel::access`] call takes: 1 MiB.
pub const MAX_ACCESS_BYTES: u64 = 1 << 20;

/// Byte counts of one channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelStats {
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// Counters of an HBM model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HbmStats {
    /// Calls to [`HbmModel::access`].
    pub accesses: u64,
    /// Pieces (one per interleave granule touched) that found their row open.
    pub row_hits: u64,
    /// Pieces that found their bank precharged (no open row).
    pub row_misses: u64,
    /// Pieces that found another row open.
    pub row_conflicts: u64,
    /// Per channel, indexed `stack * channels_per_stack + channel`.
    pub channels: Vec<ChannelStats>,
}

impl HbmStats {
    /// Bytes read over all channels.
    pub fn bytes_read(&self) -> u64 {
        self.channels.iter().map(|c| c.bytes_read).sum()
    }

    /// Bytes written over all channels.
    pub fn bytes_written(&self) -> u64 {
        self.channels.iter().map(|c| c.bytes_written).sum()
    }
}

/// Open row and readiness of one bank, in internal units.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct BankState {
    open_row: Option<u64>,
    /// Last activate.
    activated_at: u64,
    /// Earliest next column command.
    ready_at: u64,
}

/// An HBM timing model. See the module documentation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HbmModel {
    config: HbmConfig,
    decoder: Decoder,
    /// Indexed by [`HbmModel::bank_index`].
    banks: Vec<BankState>,
    /// Data bus free time per pseudo-channel, internal units.
    bus_free_at: Vec<u64>,
    stats: HbmStats,
}

impl HbmModel {
    /// Builds an idle model (all banks precharged).
    pub fn new(config: &HbmConfig) -> Result<HbmModel, ConfigError> {
        let decoder = decoder(config)?;
        let g = &config.geometry;
        let pcs = g.total_pseudo_channels() as usize;
        Ok(HbmModel {
            config: config.clone(),
            decoder,
            banks: vec![BankState::default(); pcs * g.banks_per_pseudo_channel() as usize],
            bus_free_at: vec![0; pcs],
            stats: HbmStats {
                channels: vec![ChannelStats::default(); g.total_channels() as usize],
                ..HbmStats::default()
            },
        })
    }

    /// The configuration.
    pub fn config(&self) -> &HbmConfig {
        &self.config
    }

    /// Counters since creation.
    pub fn stats(&self) -> &HbmStats {
        &self.stats
    }

    /// Bytes of heap the model holds (bank and bus state; fixed at creation).
    pub fn heap_bytes(&self) -> usize {
        self.banks.capacity() * std::mem::size_of::<BankState>()
            + self.bus_free_at.capacity() * std::mem::size_of::<u64>()
            + self.stats.channels.capacity() * std::mem::size_of::<ChannelStats>()
    }

    /// Where `addr` lives.
    pub fn locate(&self, addr: ByteAddr) -> DramLocation {
        self.decoder.decode(addr.get())
    }

    /// The address bit layout, lowest field first: (name, lowest bit, width), ending with
    /// `("row", first row bit, 0)` for all remaining bits.
    pub fn bit_layout(&self) -> Vec<(&'static str, u32, u32)> {
        self.decoder.layout()
    }

    /// Performs an access of `bytes` bytes at `addr` arriving at `now` and returns the
    /// caller cycle at which its last byte has moved. A zero-byte access completes at `now`.
    /// At most [`MAX_ACCESS_BYTES`] per call (the work is proportional to the size).
    pub fn access(
        &mut self,
        now: Cycle,
        addr: ByteAddr,
        bytes: u64,
        is_write: bool,
    ) -> Result<Cycle, HbmError> {
        if bytes > MAX_ACCESS_BYTES {
            return Err(HbmError::AccessTooLarge {
                bytes,
                max: MAX_ACCESS_BYTES,
            });
        }
        self.stats.accesses += 1;
        let now_units = now
            .get()
            .saturating_mul(u64::from(self.config.memory_clock_mhz));
        let granule = self.decoder.granule_bytes();
        let mut done = now_units;
        let mut addr = addr.get();
        let mut left = bytes;
        while left > 0 {
            let in_granule = (granule - (addr & (granule - 1))).min(left);
            done = done.max(self.access_piece(now_units, addr, in_granule, is_write));
            addr = addr.wrapping_add(in_granule);
            left -= in_granule;
        }
        Ok(Cycle(
            done.div_ceil(u64::from(self.config.memory_clock_mhz)),
        ))
    }

    /// One piece inside one granule; returns its completion in internal units.
    fn access_piece(&mut self, now: u64, addr: u64, bytes: u64, is_write: bool) -> u64 {
        let g = self.config.geometry;
        let clock = u64::from(self.config.caller_clock_mhz);
        let t = self.config.timing;
        let (t_rcd, t_cl, t_rp, t_ras) = (
            u64::from(t.t_rcd) * clock,
            u64::from(t.t_cl) * clock,
            u64::from(t.t_rp) * clock,
            u64::from(t.t_ras) * clock,
        );
        let bursts = bytes.div_ceil(g.burst_bytes);
        let data_time = bursts
            .saturating_mul(u64::from(t.t_burst))
            .saturating_mul(clock);

        let loc = self.decoder.decode(addr);
        // Field values are below their counts and `check` bounded the product of the
        // counts by 2^24, so these indices are in range and cannot overflow.
        let channel = (loc.stack * g.channels_per_stack + loc.channel) as usize;
        let pc = channel * g.pseudo_channels_per_channel as usize + loc.pseudo_channel as usize;
        let bank_idx = pc * g.banks_per_pseudo_channel() as usize
            + (loc.bank_group * g.banks_per_group + loc.bank) as usize;

        let bank = &mut self.banks[bank_idx];
        let t0 = now.max(bank.ready_at);
        let column_at = match bank.open_row {
            Some(row) if row == loc.row => {
                self.stats.row_hits += 1;
                t0
            }
            None => {
                self.stats.row_misses += 1;
                bank.activated_at = t0;
                t0.saturating_add(t_rcd)
            }
            Some(_) => {
                self.stats.row_conflicts += 1;
                let precharge_at = t0.max(bank.activated_at.saturating_add(t_ras));
                let activate_at = precharge_at.saturating_add(t_rp);
                bank.activated_at = activate_at;
                activate_at.saturating_add(t_rcd)
            }
        };
        bank.open_row = Some(loc.row);
        bank.ready_at = column_at.saturating_add(data_time);

        let data_start = column_at.saturating_add(t_cl).max(self.bus_free_at[pc]);
        let data_end = data_start.saturating_add(data_time);
        self.bus_free_at[pc] = data_end;

        let counters = &mut self.stats.channels[channel];
        if is_write {
            counters.bytes_written += bytes;
        } else {
            counters.bytes_read += bytes;
        }
        data_end
    }
}

/// Validates what [`Decoder::new`] and the model rely on.
/// The checks of [`HbmModel::new`] and its address decoder, without the model's
/// allocations (what validating a topology runs).
pub fn validate(config: &HbmConfig) -> Result<(), ConfigError> {
    decoder(config).map(|_| ())
}

/// Host memory, in bytes, the model of `config` allocates (bank and bus state, per
/// channel counters).
pub fn model_bytes(config: &HbmConfig) -> u64 {
    let g = &config.geometry;
    let pcs = g.total_pseudo_channels();
    pcs.saturating_mul(g.banks_per_pseudo_channel()).saturating_mul(std::mem::size_of::<BankState>() as u64)
        .saturating_add(pcs.saturating_mul(8))
        .saturating_add(g.total_channels().saturating_mul(std::mem::size_of::<ChannelStats>() as u64))
}

/// The address decoder of `config`, after checking the configuration.
fn decoder(config: &HbmConfig) -> Result<Decoder, ConfigError> {
    check(config)?;
    let g = &config.geometry;
    let counts = FieldCounts {
        stacks: g.stacks,
        channels: g.channels_per_stack,
        pseudo_channels: g.pseudo_channels_per_channel,
        bank_groups: g.bank_groups,
        banks: g.banks_per_group,
        columns: g.row_bytes / config.mapping.interleave_bytes,
    };
    Decoder::new(&config.mapping, &counts)
}

fn check(config: &HbmConfig) -> Result<(), ConfigError> {
    const MODEL: &str = "hbm";
    let g = &config.geometry;
    let pow2 = [
        ("geometry.stacks", u64::from(g.stacks)),
        (
            "geometry.channels_per_stack",
            u64::from(g.channels_per_stack),
        ),
        (
            "geometry.pseudo_channels_per_channel",
            u64::from(g.pseudo_channels_per_channel),
        ),
        ("geometry.bank_groups", u64::from(g.bank_groups)),
        ("geometry.banks_per_group", u64::from(g.banks_per_group)),
        ("geometry.row_bytes", g.row_bytes),
        ("geometry.burst_bytes", g.burst_bytes),
        ("mapping.interleave_bytes", config.mapping.interleave_bytes),
    ];
    for (field, value) in pow2 {
        if value == 0 {
            return Err(ConfigError::Zero {
                model: MODEL,
                field,
            });
        }
        if !value.is_power_of_two() {
            return Err(ConfigError::NotPowerOfTwo {
                model: MODEL,
                field,
                value,
            });
        }
    }
    let nonzero = [
        ("timing.t_burst", config.timing.t_burst),
        ("memory_clock_mhz", config.memory_clock_mhz),
        ("caller_clock_mhz", config.caller_clock_mhz),
    ];
    for (field, value) in nonzero {
        if value == 0 {
            return Err(ConfigError::Zero {
                model: MODEL,
                field,
            });
        }
    }
    if config.mapping.interleave_bytes > g.row_bytes {
        return Err(ConfigError::TooLarge {
            model: MODEL,
            field: "mapping.interleave_bytes",
            value: config.mapping.interleave_bytes,
            max: g.row_bytes,
        });
    }
    // Limits that keep every product of counts in range (a 2^24 bank system is far beyond
    // any HBM part).
    let banks = [
        g.stacks,
        g.channels_per_stack,
        g.pseudo_channels_per_channel,
        g.bank_groups,
        g.banks_per_group,
    ]
    .iter()
    .fold(1u64, |product, &count| {
        product.saturating_mul(u64::from(count))
    });
    if banks > 1 << 24 {
        return Err(ConfigError::TooLarge {
            model: MODEL,
            field: "geometry (total banks)",
            value: banks,
            max: 1 << 24,
        });
    }
    Ok(())
}
