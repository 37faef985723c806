//! Statistics: counters, accumulators and distributions owned by components, merged
//! into one report.
//!
//! Components keep their statistics as plain fields and report them when asked
//! ([`Component::stats`](crate::component::Component::stats)), so recording costs an
//! add. The report is keyed by component path and merged per component type in
//! sorted order, so it is identical for any partitioning and thread count.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hdrhistogram::serialization::{Deserializer as HdrDeserializer, Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A count of events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter(u64);

impl Counter {
    /// Adds one.
    #[inline]
    pub fn inc(&mut self) {
        self.0 += 1;
    }
    /// Adds `n`.
    #[inline]
    pub fn add(&mut self, n: u64) {
        self.0 += n;
    }
    /// A counter holding `n`.
    pub fn from_count(n: u64) -> Counter {
        Counter(n)
    }
    /// The count.
    pub fn get(&self) -> u64 {
        self.0
    }
}

/// Sum, count, minimum and maximum of integer samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accumulator {
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator { count: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

impl Accumulator {
    /// Adds one sample.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Sum of samples.
    pub fn sum(&self) -> u128 {
        self.sum
    }
    fn merge(&mut self, other: &Accumulator) {
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// A distribution of integer samples with 3 significant digits (hdrhistogram).
#[derive(Clone, Debug)]
pub struct Distribution(Histogram<u64>);

impl Default for Distribution {
    fn default() -> Self {
        // 3 significant figures and auto-resize cannot fail to construct.
        let mut h = Histogram::new(3).expect("3 significant figures is valid");
        // Auto-resize only works through `record`, which `Distribution` uses.
        h.auto(true);
        Distribution(h)
    }
}

impl PartialEq for Distribution {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Distribution {
    /// Adds one sample.
    #[inline]
    pub fn record(&mut self, v: u64) {
        // With auto-resize on, recording only fails for values beyond u64 range.
        let _ = self.0.record(v);
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.0.len()
    }
    /// The value at quantile `q` in `0.0..=1.0`.
    pub fn quantile(&self, q: f64) -> u64 {
        self.0.value_at_quantile(q)
    }
    /// Adds all samples of `other`.
    pub fn merge(&mut self, other: &Distribution) {
        // Both histograms auto-resize, so adding cannot run out of range.
        let _ = self.0.add(&other.0);
    }
    /// The underlying histogram.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.0
    }
}

impl Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&self.0, &mut bytes).map_err(serde::ser::Error::custom)?;
        s.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bytes: Vec<u8> = serde_bytes_vec(d)?;
        let mut h: Histogram<u64> =
            HdrDeserializer::new().deserialize(&mut &bytes[..]).map_err(serde::de::Error::custom)?;
        h.auto(true);
        Ok(Distribution(h))
    }
}

fn serde_bytes_vec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("histogram bytes")
        }
        fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut out = Vec::new();
            while let Some(b) = seq.next_element()? {
                out.push(b);
            }
            Ok(out)
        }
    }
    d.deserialize_bytes(V)
}

/// One reported statistic.
#[derive(Clone, Debug, PartialEq)]
pub enum StatValue {
    /// A [`Counter`].
    Counter(u64),
    /// An [`Accumulator`].
    Accumulator(Accumulator),
    /// A [`Distribution`].
    Distribution(Distribution),
}

impl StatValue {
    fn merge(&mut self, other: &StatValue) {
        match (self, other) {
            (StatValue::Counter(a), StatValue::Counter(b)) => *a = a.saturating_add(*b),
            (StatValue::Accumulator(a), StatValue::Accumulator(b)) => a.merge(b),
            (StatValue::Distribution(a), StatValue::Distribution(b)) => a.merge(b),
            // Same name and type with another kind: keep the first; registry specs make
            // this a programming error in the component.
            _ => {}
        }
    }

    fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            StatValue::Counter(n) => json!(n),
            StatValue::Accumulator(a) => json!({
                "count": a.count,
                "sum": a.sum as f64,
                "min": if a.count == 0 { 0 } else { a.min },
                "max": a.max,
                "mean": if a.count == 0 { 0.0 } else { a.sum as f64 / a.count as f64 },
            }),
            StatValue::Distribution(d) => json!({
                "count": d.count(),
                "min": d.0.min(),
                "max": d.0.max(),
                "mean": d.0.mean(),
                "p50": d.quantile(0.5),
                "p90": d.quantile(0.9),
                "p99": d.quantile(0.99),
                "p999": d.quantile(0.999),
            }),
        }
    }

    fn summary(&self) -> String {
        match self {
            StatValue::Counter(n) => n.to_string(),
            StatValue::Accumulator(a) if a.count == 0 => "n=0".to_string(),
            StatValue::Accumulator(a) => format!(
                "n={} sum={} mean={:.3} min={} max={}",
                a.count,
                a.sum,
                a.sum as f64 / a.count as f64,
                a.min,
                a.max
            ),
            StatValue::Distribution(d) => format!(
                "n={} mean={:.3} p50={} p99={} max={}",
                d.count(),
                d.0.mean(),
                d.quantile(0.5),
                d.quantile(0.99),
                d.0.max()
            ),
        }
    }
}

/// Where a component writes its statistics when asked.
pub struct StatsSink<'a> {
    out: &'a mut BTreeMap<String, StatValue>,
}

impl StatsSink<'_> {
    /// Reports a counter.
    pub fn counter(&mut self, name: &str, c: &Counter) {
        self.out.insert(name.to_string(), StatValue::Counter(c.0));
    }
    /// Reports an accumulator.
    pub fn accumulator(&mut self, name: &str, a: &Accumulator) {
        self.out.insert(name.to_string(), StatValue::Accumulator(*a));
    }
    /// Reports a distribution.
    pub fn distribution(&mut self, name: &str, d: &Distribution) {
        self.out.insert(name.to_string(), StatValue::Distribution(d.clone()));
    }
}

/// The statistics of a whole run, per component and merged per component type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsReport {
    /// Component path -> (type name, statistic name -> value).
    pub components: BTreeMap<String, (String, BTreeMap<String, StatValue>)>,
}

impl StatsReport {
    /// An empty report.
    pub fn new() -> StatsReport {
        StatsReport::default()
    }

    /// A sink for the statistics of the component at `path` of type `type_name`.
    pub fn sink(&mut self, path: &str, type_name: &str) -> StatsSink<'_> {
        let entry = self
            .components
            .entry(path.to_string())
            .or_insert_with(|| (type_name.to_string(), BTreeMap::new()));
        StatsSink { out: &mut entry.1 }
    }

    /// Statistics summed over all instances of each component type.
    pub fn by_type(&self) -> BTreeMap<String, BTreeMap<String, StatValue>> {
        let mut out: BTreeMap<String, BTreeMap<String, StatValue>> = BTreeMap::new();
        for (ty, stats) in self.components.values() {
            let merged = out.entry(ty.clone()).or_default();
            for (name, v) in stats {
                match merged.get_mut(name) {
                    Some(m) => m.merge(v),
                    None => {
                        merged.insert(name.clone(), v.clone());
                    }
                }
            }
        }
        out
    }

    /// The report as JSON: `{"by_type": {...}, "components": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let by_type: serde_json::Map<String, serde_json::Value> = self
            .by_type()
            .into_iter()
            .map(|(ty, stats)| (ty, stats.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()))
            .collect();
        let components: serde_json::Map<String, serde_json::Value> = self
            .components
            .iter()
            .map(|(path, (ty, stats))| {
                let mut m: serde_json::Map<String, serde_json::Value> =
                    stats.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
                m.insert("type".into(), serde_json::Value::String(ty.clone()));
                (path.clone(), serde_json::Value::Object(m))
            })
            .collect();
        serde_json::json!({ "by_type": by_type, "components": components })
    }

    /// A readable table of the per-type totals.
    pub fn to_table(&self) -> String {
        let by_type = self.by_type();
        let mut rows: Vec<(String, String)> = Vec::new();
        for (ty, stats) in &by_type {
            for (name, v) in stats {
                rows.push((format!("{ty}.{name}"), v.summary()));
            }
        }
        let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        let mut s = String::new();
        for (k, v) in rows {
            let _ = writeln!(s, "{k:<width$}  {v}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_merges_by_type_in_any_insertion_order() {
        let mut c1 = Counter::default();
        c1.add(3);
        let mut d1 = Distribution::default();
        d1.record(10);
        let mut c2 = Counter::default();
        c2.inc();
        let mut d2 = Distribution::default();
        d2.record(1000);

        let mut a = StatsReport::new();
        a.sink("x[0]", "t").counter("n", &c1);
        a.sink("x[0]", "t").distribution("lat", &d1);
        a.sink("x[1]", "t").counter("n", &c2);
        a.sink("x[1]", "t").distribution("lat", &d2);
        let mut b = StatsReport::new();
        b.sink("x[1]", "t").distribution("lat", &d2);
        b.sink("x[1]", "t").counter("n", &c2);
        b.sink("x[0]", "t").counter("n", &c1);
        b.sink("x[0]", "t").distribution("lat", &d1);
        assert_eq!(a.to_json(), b.to_json());
        let json = a.to_json();
        assert_eq!(json["by_type"]["t"]["n"], 4);
        assert_eq!(json["by_type"]["t"]["lat"]["count"], 2);
        assert!(a.to_table().contains("t.n"));
    }

    #[test]
    fn distribution_round_trips_through_checkpoint_codec() {
        let mut d = Distribution::default();
        for v in [1, 5, 5, 70_000, 3] {
            d.record(v);
        }
        let bytes = postcard::to_allocvec(&d).unwrap();
        let back: Distribution = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, d);
        let mut acc = Accumulator::default();
        acc.record(4);
        let back: Accumulator = postcard::from_bytes(&postcard::to_allocvec(&acc).unwrap()).unwrap();
        assert_eq!(back, acc);
    }
}
