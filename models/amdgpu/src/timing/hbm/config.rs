//! HBM geometry, DRAM timing and the default parameter sets of the three parts.
//!
//! # Where the defaults come from
//!
//! Peak bandwidth is `stacks x 1024 bits x data rate`: each stack has a 1024-bit
//! interface (JESD235 HBM2/HBM2E: 8 channels x 128 bits, each 2 pseudo-channels x 64 bits;
//! JESD238 HBM3/HBM3E: 16 channels x 64 bits, each 2 pseudo-channels x 32 bits).
//!
//! | part | stacks | data rate | memory clock | peak |
//! |---|---|---|---|---|
//! | MI210 | 4 (4096 bits) | 3.2 Gb/s | 1600 MHz | 1638.4 GB/s ("1.6 TB/s") |
//! | MI300X | 8 | 5.2 Gb/s | 2600 MHz | 5324.8 GB/s ("5.3 TB/s") |
//! | MI355X | 8 | 8.0 Gb/s | 4000 MHz | 8192 GB/s ("8.0 TB/s") |
//!
//! The "memory clock" here is the data rate / 2 (data moves on both edges), and every
//! timing below is counted in it. A burst is 32 bytes on a pseudo-channel: BL4 on 64 bits
//! (HBM2E, 2 clocks) or BL8 on 32 bits (HBM3/3E, 4 clocks).
//!
//! The DRAM core timings hardly change between these generations because the array is
//! the same kind of DRAM; the JEDEC speed bins give them in nanoseconds. The defaults use
//! representative values of those bins, **tRCD = tRP = tCL = 14 ns and tRAS = 33 ns**,
//! converted to memory clocks rounding up ([`ns_to_clocks`]). They are first-principles
//! defaults, not measurements; override them per topology.
//!
//! Rows (pages) are 1 KiB per pseudo-channel in both standards. Banks per pseudo-channel:
//! HBM2E 16 (4 bank groups x 4); HBM3/3E 48 in a 12-high stack (16 per stack-ID), rounded
//! up to 64 (4 groups x 16) so the bank index is a bit field.
//!
//! Modelled subset: tRCD, tCL (used for writes as well, i.e. tCWL = tCL), tRP, tRAS and
//! tBURST (also the column-to-column spacing on one bank, tCCD = tBURST). Not modelled:
//! tRRD/tFAW activation windows, tWR/tWTR turnarounds, refresh, and request reordering
//! (the controller serves requests in call order, FR-FCFS is not modelled).

use serde::{Deserialize, Serialize};

use super::mapping::AddressMapping;
use crate::timing::part::Part;

/// Shape of the HBM system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HbmGeometry {
    /// Stacks (each a power of two count of channels).
    pub stacks: u32,
    /// Channels per stack.
    pub channels_per_stack: u32,
    /// Pseudo-channels per channel (independent data buses and banks).
    pub pseudo_channels_per_channel: u32,
    /// Bank groups per pseudo-channel (1 if the part has none).
    pub bank_groups: u32,
    /// Banks per bank group.
    pub banks_per_group: u32,
    /// Row (page) size per pseudo-channel, bytes.
    pub row_bytes: u64,
    /// Bytes one burst moves on a pseudo-channel.
    pub burst_bytes: u64,
}

impl HbmGeometry {
    /// Pseudo-channels in the whole system (saturating).
    pub fn total_pseudo_channels(&self) -> u64 {
        self.total_channels()
            .saturating_mul(u64::from(self.pseudo_channels_per_channel))
    }

    /// Channels in the whole system.
    pub fn total_channels(&self) -> u64 {
        u64::from(self.stacks) * u64::from(self.channels_per_stack)
    }

    /// Banks per pseudo-channel.
    pub fn banks_per_pseudo_channel(&self) -> u64 {
        u64::from(self.bank_groups) * u64::from(self.banks_per_group)
    }
}

/// DRAM timings in memory-clock cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DramTiming {
    /// Activate to column command.
    pub t_rcd: u32,
    /// Column command to first data (CAS latency; also used as write latency).
    pub t_cl: u32,
    /// Precharge to activate.
    pub t_rp: u32,
    /// Activate to precharge, minimum.
    pub t_ras: u32,
    /// Clocks one burst occupies the pseudo-channel data bus.
    pub t_burst: u32,
}

/// Full configuration of an HBM model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HbmConfig {
    /// Shape.
    pub geometry: HbmGeometry,
    /// Timings, memory clocks.
    pub timing: DramTiming,
    /// Memory clock (data rate / 2), MHz.
    pub memory_clock_mhz: u32,
    /// Clock of the caller's [`Cycle`](crate::timing::units::Cycle)s, MHz.
    pub caller_clock_mhz: u32,
    /// Address interleave.
    pub mapping: AddressMapping,
}

/// `ps` picoseconds in clocks of a `mhz` clock, rounded up.
pub const fn ns_to_clocks(ps: u64, mhz: u32) -> u32 {
    (ps * mhz as u64).div_ceil(1_000_000) as u32
}

/// tRCD, tRP and tCL of the defaults, picoseconds.
const CORE_PS: u64 = 14_000;
/// tRAS of the defaults, picoseconds.
const RAS_PS: u64 = 33_000;

const fn core_timing(mhz: u32, t_burst: u32) -> DramTiming {
    DramTiming {
        t_rcd: ns_to_clocks(CORE_PS, mhz),
        t_cl: ns_to_clocks(CORE_PS, mhz),
        t_rp: ns_to_clocks(CORE_PS, mhz),
        t_ras: ns_to_clocks(RAS_PS, mhz),
        t_burst,
    }
}

impl HbmConfig {
    /// MI210: 4 stacks of HBM2E at 3.2 Gb/s, 1638.4 GB/s peak; caller clock = engine clock.
    pub fn hbm2e_mi210() -> HbmConfig {
        let mhz = 1600;
        HbmConfig {
            geometry: HbmGeometry {
                stacks: 4,
                channels_per_stack: 8,
                pseudo_channels_per_channel: 2,
                bank_groups: 4,
                banks_per_group: 4,
                row_bytes: 1024,
                burst_bytes: 32,
            },
            timing: core_timing(mhz, 2),
            memory_clock_mhz: mhz,
            caller_clock_mhz: Part::Mi210.engine_clock_mhz(),
            mapping: AddressMapping::default(),
        }
    }

    /// MI300X: 8 stacks of HBM3 at 5.2 Gb/s, 5324.8 GB/s peak; caller clock = engine clock.
    pub fn hbm3_mi300x() -> HbmConfig {
        let mhz = 2600;
        HbmConfig {
            geometry: hbm3_geometry(),
            timing: core_timing(mhz, 4),
            memory_clock_mhz: mhz,
            caller_clock_mhz: Part::Mi300x.engine_clock_mhz(),
            mapping: AddressMapping::default(),
        }
    }

    /// MI355X: 8 stacks of HBM3E at 8 Gb/s, 8192 GB/s peak; caller clock = engine clock.
    pub fn hbm3e_mi355x() -> HbmConfig {
        let mhz = 4000;
        HbmConfig {
            geometry: hbm3_geometry(),
            timing: core_timing(mhz, 4),
            memory_clock_mhz: mhz,
            caller_clock_mhz: Part::Mi355x.engine_clock_mhz(),
            mapping: AddressMapping::default(),
        }
    }

    /// The default of `part`.
    pub fn for_part(part: Part) -> HbmConfig {
        match part {
            Part::Mi210 => HbmConfig::hbm2e_mi210(),
            Part::Mi300x => HbmConfig::hbm3_mi300x(),
            Part::Mi355x => HbmConfig::hbm3e_mi355x(),
        }
    }

    /// Peak data bandwidth of all pseudo-channels together, bytes per second.
    pub fn peak_bytes_per_second(&self) -> f64 {
        let per_clock = self.geometry.burst_bytes as f64 / f64::from(self.timing.t_burst.max(1));
        per_clock
            * self.geometry.total_pseudo_channels() as f64
            * f64::from(self.memory_clock_mhz)
            * 1e6
    }

    /// Peak data bandwidth in bytes per caller cycle.
    pub fn peak_bytes_per_caller_cycle(&self) -> f64 {
        self.peak_bytes_per_second() / (f64::from(self.caller_clock_mhz.max(1)) * 1e6)
    }
}

/// HBM3 / HBM3E stack shape shared by MI300X and MI355X.
const fn hbm3_geometry() -> HbmGeometry {
    HbmGeometry {
        stacks: 8,
        channels_per_stack: 16,
        pseudo_channels_per_channel: 2,
        bank_groups: 4,
        banks_per_group: 16,
        row_bytes: 1024,
        burst_bytes: 32,
    }
}
