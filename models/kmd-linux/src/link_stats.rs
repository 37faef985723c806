//! The XGMI links' statistics of a `dojo run` with `--stats FILE`: one line per GPU's
//! `amdgpu.xgmi` block on standard error, and every component's statistics (the SoCs'
//! SDMA engines' among them) as JSON in
//! `FILE.components.json` (the per-kernel statistics in `FILE` know nothing of links,
//! whose traffic belongs to no single kernel).

use std::path::{Path, PathBuf};

use simdojo::stats::{StatValue, StatsReport};

/// Where the component statistics of a run whose kernel statistics go to `stats` are
/// written.
pub fn components_path(stats: &Path) -> PathBuf {
    let mut name = stats.as_os_str().to_owned();
    name.push(".components.json");
    PathBuf::from(name)
}

fn counter(stats: &std::collections::BTreeMap<String, StatValue>, name: &str) -> u64 {
    match stats.get(name) {
        Some(StatValue::Counter(n)) => *n,
        _ => 0,
    }
}

/// Prints the XGMI blocks' traffic (if the machine has any) and writes `report` next
/// to `stats` (for any machine: the SoC's SDMA engines report there too); failures are
/// reported on standard error, as the kernel statistics' are.
pub fn report(report: &StatsReport, stats: &Path) {
    let links: Vec<_> = report
        .components
        .iter()
        .filter(|(_, (ty, _))| ty == "amdgpu.xgmi")
        .collect();
    if !links.is_empty() {
        eprintln!("XGMI links:");
    }
    for (path, (_, s)) in links {
        eprintln!(
            "  {path}: tx {} B, rx {} B, lines out {}, lines served {}",
            counter(s, "tx_bytes"),
            counter(s, "rx_bytes"),
            counter(s, "lines_out"),
            counter(s, "lines_served")
        );
    }
    let path = components_path(stats);
    match serde_json::to_string_pretty(&report.to_json()) {
        Ok(json) => {
            if let Err(e) = std::fs::write(&path, json) {
                eprintln!("dojo: writing {}: {e}", path.display());
            }
        }
        Err(e) => eprintln!("dojo: statistics: {e}"),
    }
}
