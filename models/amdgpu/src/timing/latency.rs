//! Default sizes, shapes, hit latencies and bandwidths of each cache level of the three
//! parts, as a table of plain structs.
//!
//! # Sources
//!
//! Sizes, line sizes, channel counts, associativity where given, and link bandwidths come
//! from the public parts table (`shared/reference/cdna-parts.md`, drawn from AMD's CDNA 3 /
//! CDNA 4 white papers and the ROCm GPU specification tables). Where a field is not public
//! the doc of the constant says "assumed" and why.
//!
//! Hit latencies are **first-principles estimates**, not measurements: each is the sum of
//! pipeline stages listed in [`stages`], in engine clocks, so a later calibration can
//! change one stage and every level that passes through it moves consistently. They are
//! the same for the three parts because the structure of the path is the same; only the
//! memory-side cache levels differ (MI210 has none).

use serde::{Deserialize, Serialize};

use super::cache::{CacheConfig, ReplacementPolicy, WritePolicy};
use super::hbm::HbmConfig;
use super::part::Part;

/// Pipeline stages (engine clocks) every latency of the model is built from: the
/// components' latency parameters and the topology files' link latencies (a test checks
/// that the shipped topologies use these values at their part's clock).
///
/// Calibrated on MI210 (1.7 GHz) against published pointer-chase figures (vector L1 hit
/// ~124 cycles, scalar L1 ~48, LDS ~50, L2 hit ~290, HBM ~650) measured by
/// `dojo bench micro`, whose chase costs a load's load-to-use latency plus one issue
/// turn (4 cycles) for its `s_waitcnt`. MI300X and MI355X use the same stages (no
/// separate tuning): their paths differ only in structure (a memory-side cache on the
/// IOD between the L2 and the HBM).
pub mod stages {
    /// Address processing of a 64-lane vector memory instruction: 64 addresses at 16 per
    /// clock (the vector memory pipeline's minimum occupancy).
    pub const VECTOR_ADDRESS: u32 = 4;
    /// Vector L1 tag lookup, data-array read, data return and write-back into registers
    /// (calibrated: load-to-use of a hit is VECTOR_ADDRESS + this).
    pub const VECTOR_L1_PIPE: u32 = 116;
    /// One scalar-cache lookup to the register write (calibrated).
    pub const SCALAR_L1_PIPE: u32 = 44;
    /// LDS load-to-use beyond its bank cycles (calibrated).
    pub const LDS_PIPE: u32 = 43;
    /// One instruction-cache lookup feeding the instruction buffer.
    pub const INSTRUCTION_PIPE: u32 = 16;
    /// One crossing of the CU-to-L2 crossbar (the `cu.l2` links).
    pub const L2_CROSSBAR_ONE_WAY: u32 = 57;
    /// L2 channel tag compare and data-array read (the L2's `hit_latency`).
    pub const L2_PIPE: u32 = 48;
    /// One crossing of the data fabric from an L2 channel to a memory controller or, on
    /// CDNA 3/4, to a memory-side cache channel on an IOD (the `l2.down` links).
    pub const FABRIC_ONE_WAY: u32 = 100;
    /// Memory-side cache channel tag compare and data-array read (its `hit_latency`).
    pub const MEMORY_SIDE_PIPE: u32 = 48;
    /// From a memory-side cache channel to its stack's memory controller on the same IOD
    /// (the `mall.down` links).
    pub const IOD_LOCAL_ONE_WAY: u32 = 16;
    /// Memory controller queues, command scheduling and PHY, both ways (the HBM's
    /// `controller_latency`; the DRAM core timings come on top).
    pub const MEMORY_CONTROLLER: u32 = 128;

    /// `cycles` of a `clock_mhz` clock in picoseconds, rounded to the nearest.
    pub const fn picoseconds(cycles: u32, clock_mhz: u32) -> u64 {
        (cycles as u64 * 1_000_000 + clock_mhz as u64 / 2) / clock_mhz as u64
    }
}

/// One level of the cache hierarchy: the shape of one instance and how many there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevelSpec {
    /// Capacity of one instance (one channel for channelled caches), bytes.
    pub size_bytes: u64,
    /// Line size, bytes.
    pub line_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Write policy.
    pub write_policy: WritePolicy,
    /// Instances in the whole GPU (per CU, per CU pair, per channel...).
    pub instances: u32,
    /// Load-to-use latency of a hit, engine clocks, from the requesting wave's view.
    pub hit_latency: u32,
    /// Peak read bandwidth of one instance, bytes per engine clock.
    pub read_bytes_per_clock: u32,
}

impl CacheLevelSpec {
    /// The tag-model configuration of one instance with replacement `policy`.
    pub fn cache_config(&self, policy: ReplacementPolicy) -> CacheConfig {
        CacheConfig {
            size_bytes: self.size_bytes,
            line_bytes: self.line_bytes,
            ways: self.ways,
            policy,
            write_policy: self.write_policy,
        }
    }
}

/// Default timing parameters of a whole part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartTiming {
    /// Which part.
    pub part: Part,
    /// Engine clock, MHz (all latencies below count this clock).
    pub engine_clock_mhz: u32,
    /// Vector L1, one per CU.
    pub vector_l1: CacheLevelSpec,
    /// Scalar L1, one per CU pair.
    pub scalar_l1: CacheLevelSpec,
    /// Instruction cache, one per CU pair.
    pub instruction: CacheLevelSpec,
    /// L2, one instance per channel.
    pub l2: CacheLevelSpec,
    /// Memory-side cache (Infinity Cache), one instance per channel; none on MI210.
    pub memory_side: Option<CacheLevelSpec>,
    /// HBM.
    pub hbm: HbmConfig,
}

/// Vector L1 hit, load to use: address processing and the L1 pipeline.
pub const VECTOR_L1_HIT: u32 = stages::VECTOR_ADDRESS + stages::VECTOR_L1_PIPE;
/// Scalar L1 hit, load to use.
pub const SCALAR_L1_HIT: u32 = stages::SCALAR_L1_PIPE;
/// Instruction cache hit: one lookup.
pub const INSTRUCTION_HIT: u32 = stages::INSTRUCTION_PIPE;
/// L2 hit: a vector L1 miss (the full L1 path) plus crossbar both ways and the L2 pipeline.
pub const L2_HIT: u32 = VECTOR_L1_HIT + 2 * stages::L2_CROSSBAR_ONE_WAY + stages::L2_PIPE;
/// Memory-side cache hit: an L2 miss plus the fabric crossing both ways and its pipeline.
pub const MEMORY_SIDE_HIT: u32 = L2_HIT + 2 * stages::FABRIC_ONE_WAY + stages::MEMORY_SIDE_PIPE;

/// L2 channel of every part: 256 KiB (8 MB / 32 channels on MI210, 4 MB / 16 on CDNA 3/4),
/// 128 B lines, 16-way (given for MI300X; assumed for the others), write-back +
/// write-allocate (given for MI300X), 128 B/clk read per channel (given for MI300X, assumed
/// for the others).
const fn l2_channel(instances: u32) -> CacheLevelSpec {
    CacheLevelSpec {
        size_bytes: 256 * 1024,
        line_bytes: 128,
        ways: 16,
        write_policy: WritePolicy::WriteBack,
        instances,
        hit_latency: L2_HIT,
        read_bytes_per_clock: 128,
    }
}

/// Memory-side cache channel (CDNA 3/4): 256 MB over 128 channels = 2 MiB each, 16-way
/// (given), 64 B/clk per channel (17.2 TB/s / 128 channels at the fabric clock; given).
/// Line size assumed equal to the L2's (128 B); write-back assumed (a memory-side cache
/// absorbs the L2's write-backs).
const MEMORY_SIDE_CHANNEL: CacheLevelSpec = CacheLevelSpec {
    size_bytes: 2 * 1024 * 1024,
    line_bytes: 128,
    ways: 16,
    write_policy: WritePolicy::WriteBack,
    instances: 128,
    hit_latency: MEMORY_SIDE_HIT,
    read_bytes_per_clock: 64,
};

/// The write-through vector L1 of CDNA 3/4: 32 KiB, 128 B lines (given). Ways are not
/// public; 4 assumed (the GCN vector L1 is 4-way and 32 KiB / 128 B / 4 = 64 sets keeps
/// its set count). Write-through per the memory-type table of the VM design. 64 B/clk read
/// assumed (one 64 B half-line per clock).
const fn cdna3_vector_l1(instances: u32) -> CacheLevelSpec {
    CacheLevelSpec {
        size_bytes: 32 * 1024,
        line_bytes: 128,
        ways: 4,
        write_policy: WritePolicy::WriteThrough,
        instances,
        hit_latency: VECTOR_L1_HIT,
        read_bytes_per_clock: 64,
    }
}

/// CDNA 3/4 scalar L1: 16 KiB per CU pair, 8-way (given in the parts table), 64 B lines
/// assumed (GCN scalar cache line), 16 B/clk assumed (one dword quad per clock).
const fn cdna3_scalar_l1(instances: u32) -> CacheLevelSpec {
    CacheLevelSpec {
        size_bytes: 16 * 1024,
        line_bytes: 64,
        ways: 8,
        write_policy: WritePolicy::WriteThrough,
        instances,
        hit_latency: SCALAR_L1_HIT,
        read_bytes_per_clock: 16,
    }
}

/// CDNA 3/4 instruction cache: 64 KiB per CU pair, 8-way (given), 64 B lines assumed,
/// 32 B/clk assumed (one fetch of 8 dwords per clock). Read-only, so the write policy is
/// write-through (nothing is ever dirty).
const fn cdna3_instruction(instances: u32) -> CacheLevelSpec {
    CacheLevelSpec {
        size_bytes: 64 * 1024,
        line_bytes: 64,
        ways: 8,
        write_policy: WritePolicy::WriteThrough,
        instances,
        hit_latency: INSTRUCTION_HIT,
        read_bytes_per_clock: 32,
    }
}

impl PartTiming {
    /// MI210: 104 CUs; 16 KiB / 64 B-line vector L1 (given; 4-way from the GCN white
    /// paper); 16 KiB scalar L1 and 32 KiB instruction cache per CU pair (given; 4-way and
    /// 64 B lines assumed from GCN); 32 L2 channels; no memory-side cache; HBM2E.
    pub fn mi210() -> PartTiming {
        PartTiming {
            part: Part::Mi210,
            engine_clock_mhz: Part::Mi210.engine_clock_mhz(),
            vector_l1: CacheLevelSpec {
                size_bytes: 16 * 1024,
                line_bytes: 64,
                ways: 4,
                write_policy: WritePolicy::WriteThrough,
                instances: 104,
                hit_latency: VECTOR_L1_HIT,
                read_bytes_per_clock: 64,
            },
            scalar_l1: CacheLevelSpec {
                size_bytes: 16 * 1024,
                line_bytes: 64,
                ways: 4,
                write_policy: WritePolicy::WriteThrough,
                instances: 52,
                hit_latency: SCALAR_L1_HIT,
                read_bytes_per_clock: 16,
            },
            instruction: CacheLevelSpec {
                size_bytes: 32 * 1024,
                line_bytes: 64,
                ways: 4,
                write_policy: WritePolicy::WriteThrough,
                instances: 52,
                hit_latency: INSTRUCTION_HIT,
                read_bytes_per_clock: 32,
            },
            l2: l2_channel(32),
            memory_side: None,
            hbm: HbmConfig::hbm2e_mi210(),
        }
    }

    /// MI300X: 304 CUs (8 XCDs x 38), 152 CU pairs, 8 x 16 L2 channels, 128 memory-side
    /// cache channels, HBM3.
    pub fn mi300x() -> PartTiming {
        PartTiming {
            part: Part::Mi300x,
            engine_clock_mhz: Part::Mi300x.engine_clock_mhz(),
            vector_l1: cdna3_vector_l1(304),
            scalar_l1: cdna3_scalar_l1(152),
            instruction: cdna3_instruction(152),
            l2: l2_channel(8 * 16),
            memory_side: Some(MEMORY_SIDE_CHANNEL),
            hbm: HbmConfig::hbm3_mi300x(),
        }
    }

    /// MI355X: 256 CUs (8 XCDs x 32), 128 CU pairs, 8 x 16 L2 channels, 256 MB memory-side
    /// cache (channel count not given; MI300X's 128 x 2 MiB assumed), HBM3E.
    pub fn mi355x() -> PartTiming {
        PartTiming {
            part: Part::Mi355x,
            engine_clock_mhz: Part::Mi355x.engine_clock_mhz(),
            vector_l1: cdna3_vector_l1(256),
            scalar_l1: cdna3_scalar_l1(128),
            instruction: cdna3_instruction(128),
            l2: l2_channel(8 * 16),
            memory_side: Some(MEMORY_SIDE_CHANNEL),
            hbm: HbmConfig::hbm3e_mi355x(),
        }
    }

    /// The defaults of `part`.
    pub fn for_part(part: Part) -> PartTiming {
        match part {
            Part::Mi210 => PartTiming::mi210(),
            Part::Mi300x => PartTiming::mi300x(),
            Part::Mi355x => PartTiming::mi355x(),
        }
    }

    /// Every cache level, innermost first, with its name.
    pub fn levels(&self) -> Vec<(&'static str, CacheLevelSpec)> {
        let mut levels = vec![
            ("vector_l1", self.vector_l1),
            ("scalar_l1", self.scalar_l1),
            ("instruction", self.instruction),
            ("l2", self.l2),
        ];
        if let Some(memory_side) = self.memory_side {
            levels.push(("memory_side", memory_side));
        }
        levels
    }
}
