//! Per-kernel statistics: what one dispatch did, gathered from the compute units, caches
//! and memory, as a readable table and as JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Wave-instruction classes, by mnemonic family.
pub const CLASSES: [&str; 9] = ["salu", "branch", "smem", "valu", "mfma", "lds", "vmem_load", "vmem_store", "vmem_atomic"];

/// The class of a mnemonic (an index into [`CLASSES`]).
pub fn class_of(mnemonic: &str) -> usize {
    let m = mnemonic;
    if m.starts_with("s_load") || m.starts_with("s_buffer_") || m.starts_with("s_store") || m.starts_with("s_scratch") || m.starts_with("s_dcache") || m.starts_with("s_atomic") {
        2
    } else if m.starts_with("s_branch") || m.starts_with("s_cbranch") || m.starts_with("s_setpc") || m.starts_with("s_swappc") || m.starts_with("s_getpc") {
        1
    } else if m.starts_with("s_") {
        0
    } else if m.starts_with("v_mfma") || m.starts_with("v_smfmac") {
        4
    } else if m.starts_with("v_") {
        3
    } else if m.starts_with("ds_") {
        5
    } else if m.contains("_atomic") {
        8
    } else if m.contains("_store") {
        7
    } else {
        6
    }
}

/// Hits and misses of one cache level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheCounts {
    /// Accesses that hit.
    pub hits: u64,
    /// Accesses that missed.
    pub misses: u64,
}

impl CacheCounts {
    /// Adds another count.
    pub fn add(&mut self, o: &CacheCounts) {
        self.hits += o.hits;
        self.misses += o.misses;
    }
    /// Hit rate in [0, 1], or 0 with no accesses.
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// Counters a compute unit (and the caches in front of it) gathers for one dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatchCounters {
    /// Wave-instructions per class ([`CLASSES`] order).
    pub classes: [u64; 9],
    /// Work-groups run.
    pub groups: u64,
    /// Waves run.
    pub waves: u64,
    /// Sum over quanta of resident waves (occupancy numerator).
    pub resident_wave_quanta: u64,
    /// Quanta run (occupancy denominator).
    pub quanta: u64,
    /// Vector L1 accesses.
    pub l1: CacheCounts,
    /// Scalar cache accesses.
    pub scalar: CacheCounts,
    /// Timing-mode stalls and memory latency (zero in functional mode).
    #[serde(default)]
    pub timing: TimingCounters,
}

/// What timing mode adds to a dispatch's counters (summed over compute units).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimingCounters {
    /// Wave-cycles spent in `s_waitcnt` after the issue latency had passed.
    pub stall_waitcnt: u64,
    /// Wave-cycles a ready wave lost to another wave of its SIMD.
    pub stall_issue: u64,
    /// Wave-cycles waiting at `s_barrier`.
    pub stall_barrier: u64,
    /// Wave-cycles waiting for deferred (atomic, coherent) accesses.
    pub stall_deferred: u64,
    /// Memory instructions answered by the L2.
    pub mem_requests: u64,
    /// Sum of their latencies, issue to data, cycles.
    pub mem_latency_cycles: u64,
}

impl TimingCounters {
    /// Adds another count.
    pub fn add(&mut self, o: &TimingCounters) {
        self.stall_waitcnt += o.stall_waitcnt;
        self.stall_issue += o.stall_issue;
        self.stall_barrier += o.stall_barrier;
        self.stall_deferred += o.stall_deferred;
        self.mem_requests += o.mem_requests;
        self.mem_latency_cycles += o.mem_latency_cycles;
    }

    /// Mean latency of the memory instructions the L2 answered, cycles (0 with none).
    pub fn mean_memory_latency(&self) -> f64 {
        if self.mem_requests == 0 {
            0.0
        } else {
            self.mem_latency_cycles as f64 / self.mem_requests as f64
        }
    }
}

impl DispatchCounters {
    /// Adds another compute unit's counters.
    pub fn add(&mut self, o: &DispatchCounters) {
        for (a, b) in self.classes.iter_mut().zip(o.classes) {
            *a += b;
        }
        self.groups += o.groups;
        self.waves += o.waves;
        self.resident_wave_quanta += o.resident_wave_quanta;
        self.quanta += o.quanta;
        self.l1.add(&o.l1);
        self.scalar.add(&o.scalar);
        self.timing.add(&o.timing);
    }
}

/// What one kernel dispatch did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    /// Kernel name (or descriptor address).
    pub kernel: String,
    /// Dispatch number on its GPU.
    pub dispatch: u64,
    /// Grid size in work-items.
    pub grid: [u32; 3],
    /// Work-group size.
    pub block: [u32; 3],
    /// Simulated time the packet processor launched it, in picoseconds.
    pub start_ps: u64,
    /// Simulated time it completed, in picoseconds.
    pub end_ps: u64,
    /// Engine-clock cycles from launch to completion.
    pub cycles: u64,
    /// Counters summed over compute units.
    pub counters: DispatchCounters,
    /// L2 accesses (all XCDs) during the dispatch.
    pub l2: CacheCounts,
    /// Memory-side cache accesses during the dispatch.
    pub mall: CacheCounts,
    /// Bytes read from HBM.
    pub hbm_read_bytes: u64,
    /// Bytes written to HBM.
    pub hbm_write_bytes: u64,
}

impl KernelStats {
    /// Total wave-instructions.
    pub fn wave_instructions(&self) -> u64 {
        self.counters.classes.iter().sum()
    }

    /// Mean resident waves per compute unit while it had work.
    pub fn occupancy(&self) -> f64 {
        if self.counters.quanta == 0 {
            0.0
        } else {
            self.counters.resident_wave_quanta as f64 / self.counters.quanta as f64
        }
    }

    /// Instructions by class name, zero classes left out.
    pub fn by_class(&self) -> BTreeMap<&'static str, u64> {
        CLASSES.iter().zip(self.counters.classes).filter(|(_, n)| *n > 0).map(|(c, n)| (*c, n)).collect()
    }
}

/// A readable table of kernel statistics.
pub fn table(kernels: &[KernelStats]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for k in kernels {
        let _ = writeln!(s, "kernel {} (dispatch {}) grid {:?} block {:?}", k.kernel, k.dispatch, k.grid, k.block);
        let _ = writeln!(s, "  cycles {:>14}   wave-instructions {:>14}   waves {}   groups {}   occupancy {:.2} waves/CU", k.cycles, k.wave_instructions(), k.counters.waves, k.counters.groups, k.occupancy());
        let classes: Vec<String> = k.by_class().iter().map(|(c, n)| format!("{c} {n}")).collect();
        let _ = writeln!(s, "  by class: {}", classes.join(", "));
        let _ = writeln!(
            s,
            "  hit rates: L1 {:.1}% ({} acc)  scalar {:.1}%  L2 {:.1}% ({} acc)  MALL {:.1}%   HBM read {} B  write {} B",
            100.0 * k.counters.l1.hit_rate(),
            k.counters.l1.hits + k.counters.l1.misses,
            100.0 * k.counters.scalar.hit_rate(),
            100.0 * k.l2.hit_rate(),
            k.l2.hits + k.l2.misses,
            100.0 * k.mall.hit_rate(),
            k.hbm_read_bytes,
            k.hbm_write_bytes
        );
        let t = &k.counters.timing;
        if *t != TimingCounters::default() {
            let _ = writeln!(
                s,
                "  timing: stalls (wave-cycles) waitcnt {}  issue {}  barrier {}  deferred {}   L2 requests {}  mean latency {:.1} cycles",
                t.stall_waitcnt,
                t.stall_issue,
                t.stall_barrier,
                t.stall_deferred,
                t.mem_requests,
                t.mean_memory_latency()
            );
        }
    }
    s
}

/// The statistics file of `dojo exec --stats FILE` and `dojo run --stats FILE`: every
/// kernel dispatch's statistics and every component's, as `{"kernels": [...],
/// "components": {"by_type": ..., "components": ...}}`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StatsFile {
    /// One entry per kernel dispatch, in completion order.
    pub kernels: Vec<KernelStats>,
    /// Every component's statistics ([`simdojo::stats::StatsReport::to_json`]).
    pub components: serde_json::Value,
}

/// A statistics file that cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum StatsFileError {
    /// The file system refused.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a statistics file.
    #[error("{}: not a statistics file of {{\"kernels\", \"components\"}}: {source}", path.display())]
    Json {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: serde_json::Error,
    },
}

impl StatsFile {
    /// The statistics of a run that dispatched `kernels` and whose components reported
    /// `components`.
    pub fn new(kernels: Vec<KernelStats>, components: &simdojo::stats::StatsReport) -> StatsFile {
        StatsFile { kernels, components: components.to_json() }
    }

    /// Writes the file (pretty-printed JSON) to `path`.
    pub fn write(&self, path: &std::path::Path) -> Result<(), StatsFileError> {
        let json = serde_json::to_string_pretty(self).map_err(|source| StatsFileError::Json { path: path.to_path_buf(), source })?;
        std::fs::write(path, json).map_err(|source| StatsFileError::Io { path: path.to_path_buf(), source })
    }

    /// Reads the file at `path`.
    pub fn read(path: &std::path::Path) -> Result<StatsFile, StatsFileError> {
        let bytes = std::fs::read(path).map_err(|source| StatsFileError::Io { path: path.to_path_buf(), source })?;
        serde_json::from_slice(&bytes).map_err(|source| StatsFileError::Json { path: path.to_path_buf(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(CLASSES[class_of("s_load_dwordx2")], "smem");
        assert_eq!(CLASSES[class_of("s_cbranch_scc1")], "branch");
        assert_eq!(CLASSES[class_of("s_add_u32")], "salu");
        assert_eq!(CLASSES[class_of("v_mfma_f32_32x32x8_f16")], "mfma");
        assert_eq!(CLASSES[class_of("v_add_f32_e32")], "valu");
        assert_eq!(CLASSES[class_of("ds_read_b32")], "lds");
        assert_eq!(CLASSES[class_of("global_load_dword")], "vmem_load");
        assert_eq!(CLASSES[class_of("buffer_store_dword")], "vmem_store");
        assert_eq!(CLASSES[class_of("global_atomic_add_f32")], "vmem_atomic");
    }

    #[test]
    fn a_statistics_file_reads_back_and_a_bare_kernel_list_is_refused_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("amdgpu-stats-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stats.json");
        let kernel = KernelStats { kernel: "k".into(), dispatch: 3, cycles: 7, ..KernelStats::default() };
        let mut report = simdojo::stats::StatsReport::default();
        report.components.insert("gpu0.soc".into(), ("amdgpu.soc".into(), BTreeMap::from([("dispatches".to_string(), simdojo::stats::StatValue::Counter(1))])));
        StatsFile::new(vec![kernel.clone()], &report).write(&path).unwrap();
        let back = StatsFile::read(&path).unwrap();
        assert_eq!(back.kernels, std::slice::from_ref(&kernel));
        assert_eq!(back.components, report.to_json());
        // The shape `dojo run --stats` wrote before it matched `dojo exec --stats`.
        std::fs::write(&path, serde_json::to_string(&[kernel]).unwrap()).unwrap();
        let e = StatsFile::read(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: not a statistics file", path.display())), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
