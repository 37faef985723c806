//! `--stats-format rocprof`: the per-dispatch statistics of `dojo exec --stats` and
//! `dojo run --stats` as rocprof's `results.csv` (one row per kernel dispatch, rocprof's
//! column names), limited to the columns the simulator really counts.
//!
//! The mapping (README, "rocprof-style counters", has it as a table):
//! `Index` is the row's position in the statistics file's `kernels` order (completion
//! order on each GPU, one GPU's dispatches after another's on a multi-GPU machine);
//! `grd` and `wgr` are the grid and work-group sizes in work-items (x * y * z);
//! `BeginNs` and `EndNs` are the simulated launch and completion times (picoseconds
//! divided by 1000, rounded down); the `SQ_INSTS_*` counters are wave-instructions of
//! the [`amdgpu::gpu::stats::CLASSES`] classes (`SQ_INSTS_VALU` counts VALU and MFMA,
//! atomics are in neither `SQ_INSTS_VMEM_RD` nor `SQ_INSTS_VMEM_WR`); `TCC_HIT` and
//! `TCC_MISS` are the L2's (all XCDs); `FETCH_SIZE` and `WRITE_SIZE` are the kilobytes
//! (1024 bytes) read from and written to HBM. rocprof's `gpu-id`, `queue-id`, `lds`,
//! `scr`, `arch_vgpr`, `sgpr`, `wave_size`, `DispatchNs` and `CompleteNs` are left
//! out: the statistics do not record them.

use amdgpu::gpu::stats::{KernelStats, CLASSES};

/// The format of the `--stats FILE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsFormat {
    /// `{"kernels": [...], "components": {...}}` (`amdgpu::gpu::stats::StatsFile`).
    #[default]
    Json,
    /// rocprof's per-dispatch `results.csv` columns (see [`to_csv`]).
    Rocprof,
}

/// The columns, in rocprof's names and order.
pub const COLUMNS: [&str; 18] = [
    "Index",
    "KernelName",
    "grd",
    "wgr",
    "BeginNs",
    "EndNs",
    "SQ_WAVES",
    "SQ_INSTS_VALU",
    "SQ_INSTS_SALU",
    "SQ_INSTS_SMEM",
    "SQ_INSTS_VMEM_RD",
    "SQ_INSTS_VMEM_WR",
    "SQ_INSTS_LDS",
    "SQ_INSTS_BRANCH",
    "TCC_HIT",
    "TCC_MISS",
    "FETCH_SIZE",
    "WRITE_SIZE",
];

/// Wave-instructions of the class named `name` (one of [`CLASSES`]).
fn class(k: &KernelStats, name: &str) -> u64 {
    // The names passed below are all in CLASSES; a typo is a bug caught by the tests.
    let i = CLASSES.iter().position(|c| *c == name).expect("a class of amdgpu::gpu::stats::CLASSES");
    k.counters.classes[i]
}

/// One field, quoted as RFC 4180 requires: in double quotes, with inner quotes doubled,
/// when it holds a comma, a quote or a line break; as it is otherwise.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Kilobytes (1024 bytes), as rocprof's `FETCH_SIZE` and `WRITE_SIZE`; exact, since a
/// byte count divided by 1024 is a binary fraction.
fn kilobytes(bytes: u64) -> String {
    format!("{}", bytes as f64 / 1024.0)
}

/// The CSV text: the [`COLUMNS`] header, then one row per dispatch in `kernels` order,
/// lines ended by CRLF as RFC 4180 has them.
pub fn to_csv(kernels: &[KernelStats]) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str("\r\n");
    for (index, k) in kernels.iter().enumerate() {
        let items = |s: [u32; 3]| s.iter().map(|&n| u64::from(n)).product::<u64>();
        let row = [
            index.to_string(),
            csv_field(&k.kernel),
            items(k.grid).to_string(),
            items(k.block).to_string(),
            (k.start_ps / 1000).to_string(),
            (k.end_ps / 1000).to_string(),
            k.counters.waves.to_string(),
            (class(k, "valu") + class(k, "mfma")).to_string(),
            class(k, "salu").to_string(),
            class(k, "smem").to_string(),
            class(k, "vmem_load").to_string(),
            class(k, "vmem_store").to_string(),
            class(k, "lds").to_string(),
            class(k, "branch").to_string(),
            k.l2.hits.to_string(),
            k.l2.misses.to_string(),
            kilobytes(k.hbm_read_bytes),
            kilobytes(k.hbm_write_bytes),
        ];
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

/// Writes [`to_csv`] of `kernels` to `path`.
pub fn write(path: &std::path::Path, kernels: &[KernelStats]) -> std::io::Result<()> {
    std::fs::write(path, to_csv(kernels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use amdgpu::gpu::stats::{CacheCounts, DispatchCounters};

    #[test]
    fn fields_are_quoted_only_when_rfc_4180_requires_it() {
        assert_eq!(csv_field("_start"), "_start");
        assert_eq!(csv_field("add(float*, int)"), "\"add(float*, int)\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("cr\r"), "\"cr\r\"");
    }

    #[test]
    fn one_row_per_dispatch_with_each_counter_in_its_column() {
        let mut classes = [0u64; 9];
        for (i, n) in classes.iter_mut().enumerate() {
            *n = 10u64.pow(i as u32);
        }
        let k = KernelStats {
            kernel: "add(float*, int)".into(),
            dispatch: 4,
            grid: [256, 2, 1],
            block: [64, 2, 1],
            start_ps: 1_500_999,
            end_ps: 9_000_000,
            counters: DispatchCounters { classes, waves: 8, ..DispatchCounters::default() },
            l2: CacheCounts { hits: 11, misses: 12 },
            hbm_read_bytes: 1536,
            hbm_write_bytes: 4096,
            ..KernelStats::default()
        };
        let plain = KernelStats { kernel: "_end".into(), ..KernelStats::default() };
        let csv = to_csv(&[k, plain]);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines.len(), 4, "header, two rows and the final line end: {csv:?}");
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(lines[3], "");
        // salu 1, branch 10, smem 100, valu 1000, mfma 10^4, lds 10^5, loads 10^6,
        // stores 10^7, atomics 10^8 (in no column).
        assert_eq!(lines[1], "0,\"add(float*, int)\",512,128,1500,9000,8,11000,1,100,1000000,10000000,100000,10,11,12,1.5,4");
        assert_eq!(lines[2], "1,_end,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0");
    }
}
