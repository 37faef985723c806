//! Statistics as flat columns, for parameter studies (`dojo sweep`, the Python module's
//! `sweep`): every numeric leaf of a JSON value under its dotted path.

use std::collections::BTreeMap;

use serde_json::Value;

/// Adds every numeric leaf of `v` under `prefix` to `out`; the elements of a list (of
/// kernels, say) sum under the same names.
pub fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, f64>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                *out.entry(prefix.to_string()).or_insert(0.0) += x;
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                flatten(prefix, item, out);
            }
        }
        _ => {}
    }
}

/// Fields of a kernel's statistics that identify it or place it in time: summing them
/// over kernels means nothing (their span is `span_ps`).
const IDENTITY: [&str; 6] = ["kernel", "dispatch", "grid", "block", "start_ps", "end_ps"];

/// The columns of a GPU program's per-kernel statistics (a JSON list of `KernelStats`,
/// or the `{kernels, components}` file `dojo exec` and `dojo run` write): each counter
/// summed over the kernels, the instruction classes by name
/// (`counters.classes.valu`), and derived columns: `kernels` (their number),
/// `wave_instructions`, `span_ps` (first start to last end, simulated picoseconds) and
/// the hit rates `l2.hit_rate`, `mall.hit_rate`, `counters.l1.hit_rate` (hits over
/// accesses, absent without accesses).
pub fn kernel_columns(kernels: &Value) -> BTreeMap<String, f64> {
    let list = kernels.get("kernels").unwrap_or(kernels);
    let items = list.as_array().map_or(&[][..], Vec::as_slice);
    let mut out = BTreeMap::new();
    let (mut first, mut last) = (u64::MAX, 0u64);
    for k in items {
        let Value::Object(fields) = k else { continue };
        for (name, v) in fields {
            if IDENTITY.contains(&name.as_str()) {
                continue;
            }
            flatten(name, v, &mut out);
        }
        if let Some(classes) = k.pointer("/counters/classes").and_then(Value::as_array) {
            out.remove("counters.classes");
            for (class, n) in crate::gpu::stats::CLASSES.iter().zip(classes) {
                *out.entry(format!("counters.classes.{class}")).or_insert(0.0) += n.as_f64().unwrap_or(0.0);
            }
        }
        if let (Some(s), Some(e)) = (k.get("start_ps").and_then(Value::as_u64), k.get("end_ps").and_then(Value::as_u64)) {
            first = first.min(s);
            last = last.max(e);
        }
    }
    out.insert("kernels".into(), items.len() as f64);
    if last >= first && first != u64::MAX {
        out.insert("span_ps".into(), (last - first) as f64);
    }
    let instructions: f64 = crate::gpu::stats::CLASSES.iter().filter_map(|c| out.get(&format!("counters.classes.{c}"))).sum();
    if items.iter().any(|k| k.pointer("/counters/classes").is_some()) {
        out.insert("wave_instructions".into(), instructions);
    }
    for level in ["l2", "mall", "counters.l1", "counters.scalar"] {
        let (hits, misses) = (out.get(&format!("{level}.hits")).copied(), out.get(&format!("{level}.misses")).copied());
        if let (Some(h), Some(m)) = (hits, misses) {
            if h + m > 0.0 {
                out.insert(format!("{level}.hit_rate"), h / (h + m));
            }
        }
    }
    out
}

/// The unit of a column, from its name, for plot axes and tables (`None`: a count).
pub fn unit_of(column: &str) -> Option<&'static str> {
    let last = column.rsplit('.').next().unwrap_or(column);
    Some(match last {
        l if l.ends_with("_ps") => "ps",
        l if l.ends_with("_ns") => "ns",
        l if l.ends_with("_bytes") || l.ends_with("bytes") => "bytes",
        l if l.ends_with("_seconds") || l == "seconds" => "s",
        l if l.ends_with("_per_sec") => "per second",
        l if l.ends_with("hit_rate") => "fraction of accesses",
        "cycles" => "cycles",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_flattens_and_sums_lists() {
        let mut m = BTreeMap::new();
        flatten(
            "",
            &serde_json::json!([{"cycles": 3, "l1": {"hits": 1}}, {"cycles": 4, "l1": {"hits": 2}, "name": "x"}]),
            &mut m,
        );
        assert_eq!(m.get("cycles"), Some(&7.0));
        assert_eq!(m.get("l1.hits"), Some(&3.0));
        assert_eq!(m.len(), 2);
        let k = kernel_columns(&serde_json::json!([{"cycles": 3}, {"cycles": 4}]));
        assert_eq!((k["cycles"], k["kernels"]), (7.0, 2.0));
    }

    #[test]
    fn kernel_columns_name_classes_leave_out_identities_and_derive_rates() {
        let kernel = |dispatch: u64, start: u64, end: u64, hits: u64, misses: u64| {
            serde_json::json!({
                "kernel": "k", "dispatch": dispatch, "grid": [64, 1, 1], "block": [64, 1, 1],
                "start_ps": start, "end_ps": end, "cycles": 10,
                "counters": {"classes": [1, 2, 3, 4, 0, 0, 5, 6, 0], "waves": 1},
                "l2": {"hits": hits, "misses": misses},
            })
        };
        let file = serde_json::json!({"kernels": [kernel(1, 100, 400, 3, 1), kernel(2, 500, 900, 1, 3)], "components": {}});
        let k = kernel_columns(&file);
        for gone in ["dispatch", "grid", "block", "start_ps", "end_ps", "counters.classes"] {
            assert!(!k.contains_key(gone), "{gone} in {k:?}");
        }
        assert_eq!(k["kernels"], 2.0);
        assert_eq!(k["span_ps"], 800.0);
        assert_eq!(k["cycles"], 20.0);
        assert_eq!(k["counters.classes.valu"], 8.0);
        assert_eq!(k["counters.classes.vmem_load"], 10.0);
        assert_eq!(k["wave_instructions"], 42.0);
        assert_eq!(k["l2.hit_rate"], 0.5);
        assert_eq!(unit_of("l2.hit_rate"), Some("fraction of accesses"));
        assert_eq!(unit_of("span_ps"), Some("ps"));
        assert_eq!(unit_of("counters.classes.valu"), None);
    }
}
