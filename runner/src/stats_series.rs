//! `--stats-interval`: a time series of the component statistics, sampled while the
//! simulation pauses at fixed simulated times, as CSV (one row per sample: `time_ps` and
//! every numeric statistic of every component type, columns named `TYPE.STAT`).

use std::collections::BTreeMap;

use simdojo::stats::StatsReport;
use simdojo::time::Tick;

/// The samples so far.
#[derive(Debug, Default)]
pub struct Series {
    rows: Vec<(Tick, BTreeMap<String, f64>)>,
}

impl Series {
    /// Adds the statistics at `at`.
    pub fn sample(&mut self, at: Tick, report: &StatsReport) {
        let mut row = BTreeMap::new();
        if let Some(by_type) = report.to_json().get("by_type").and_then(|v| v.as_object()) {
            for (ty, stats) in by_type {
                for (name, value) in stats.as_object().into_iter().flatten() {
                    // Counters are numbers; distributions and accumulators are objects
                    // whose count and mean are their numeric summary.
                    match value {
                        serde_json::Value::Number(n) => {
                            row.insert(format!("{ty}.{name}"), n.as_f64().unwrap_or(0.0));
                        }
                        serde_json::Value::Object(o) => {
                            for key in ["count", "mean", "sum"] {
                                if let Some(n) = o.get(key).and_then(|v| v.as_f64()) {
                                    row.insert(format!("{ty}.{name}.{key}"), n);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        self.rows.push((at, row));
    }

    /// The CSV text: a header and one line per sample (a statistic a sample lacks is
    /// empty).
    pub fn to_csv(&self) -> String {
        let mut columns: Vec<&String> = self.rows.iter().flat_map(|(_, r)| r.keys()).collect();
        columns.sort();
        columns.dedup();
        let mut out = String::from("time_ps");
        for c in &columns {
            out.push(',');
            out.push_str(c);
        }
        out.push('\n');
        for (at, row) in &self.rows {
            out.push_str(&at.0.to_string());
            for c in &columns {
                out.push(',');
                if let Some(v) = row.get(*c) {
                    out.push_str(&v.to_string());
                }
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_series_is_a_header() {
        assert_eq!(Series::default().to_csv(), "time_ps\n");
    }
}
