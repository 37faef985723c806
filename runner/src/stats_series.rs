//! `--stats-interval`: a time series of the component statistics, sampled while the
//! simulation pauses at fixed simulated times, as two CSV files with the same columns
//! (one row per sample: `time_ps` and every numeric statistic of every component type,
//! named `TYPE.STAT`): the cumulative values, and the per-interval ones.

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

    /// The CSV text of the cumulative values: a header and one line per sample, each
    /// statistic as it stood at `time_ps` since the run began (a statistic a sample
    /// lacks is empty).
    pub fn to_csv(&self) -> String {
        Self::csv(&self.rows)
    }

    /// The CSV text of the per-interval values: each row what happened between the
    /// previous sample (or the start) and `time_ps`: counters, counts and sums as
    /// differences, a mean as the interval's difference of sum over difference of
    /// count (empty when nothing was counted).
    pub fn to_interval_csv(&self) -> String {
        let mut rows = Vec::with_capacity(self.rows.len());
        let mut previous: BTreeMap<String, f64> = BTreeMap::new();
        for (at, row) in &self.rows {
            let mut delta = BTreeMap::new();
            for (name, &value) in row {
                if let Some(stem) = name.strip_suffix(".mean") {
                    let d = |key: &str| row.get(key).map(|v| v - previous.get(key).copied().unwrap_or(0.0));
                    if let (Some(sum), Some(count)) = (d(&format!("{stem}.sum")), d(&format!("{stem}.count"))) {
                        if count > 0.0 {
                            delta.insert(name.clone(), sum / count);
                        }
                    }
                    continue;
                }
                delta.insert(name.clone(), value - previous.get(name).copied().unwrap_or(0.0));
            }
            rows.push((*at, delta));
            previous = row.clone();
        }
        Self::csv(&rows)
    }

    fn csv(rows: &[(Tick, BTreeMap<String, f64>)]) -> String {
        let mut columns: Vec<&String> = rows.iter().flat_map(|(_, r)| r.keys()).collect();
        columns.sort();
        columns.dedup();
        let mut out = String::from("time_ps");
        for c in &columns {
            out.push(',');
            out.push_str(c);
        }
        out.push('\n');
        for (at, row) in rows {
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
        assert_eq!(Series::default().to_interval_csv(), "time_ps\n");
    }

    #[test]
    fn intervals_are_differences_and_their_means_are_their_own() {
        let row = |hits: f64, count: f64, sum: f64| {
            BTreeMap::from([
                ("l2.hits".to_string(), hits),
                ("l2.latency.count".to_string(), count),
                ("l2.latency.sum".to_string(), sum),
                ("l2.latency.mean".to_string(), if count > 0.0 { sum / count } else { 0.0 }),
            ])
        };
        let series = Series { rows: vec![(Tick(10), row(4.0, 2.0, 20.0)), (Tick(20), row(10.0, 6.0, 100.0)), (Tick(30), row(10.0, 6.0, 100.0))] };
        assert_eq!(
            series.to_csv(),
            "time_ps,l2.hits,l2.latency.count,l2.latency.mean,l2.latency.sum\n10,4,2,10,20\n20,10,6,16.666666666666668,100\n30,10,6,16.666666666666668,100\n"
        );
        assert_eq!(
            series.to_interval_csv(),
            "time_ps,l2.hits,l2.latency.count,l2.latency.mean,l2.latency.sum\n10,4,2,10,20\n20,6,4,20,80\n30,0,0,,0\n"
        );
    }
}
