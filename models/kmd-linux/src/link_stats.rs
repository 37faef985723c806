//! The XGMI links' statistics of a `dojo run` with `--stats FILE`: one line per GPU's
//! `amdgpu.xgmi` block on standard error (every component's statistics, the links'
//! among them, go to `FILE`'s `components`; the per-kernel statistics know nothing of
//! links, whose traffic belongs to no single kernel).

use simdojo::stats::{StatValue, StatsReport};

fn counter(stats: &std::collections::BTreeMap<String, StatValue>, name: &str) -> u64 {
    match stats.get(name) {
        Some(StatValue::Counter(n)) => *n,
        _ => 0,
    }
}

/// Prints the XGMI blocks' traffic of `report` on standard error, if the machine has
/// any.
pub fn report(report: &StatsReport) {
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
}
