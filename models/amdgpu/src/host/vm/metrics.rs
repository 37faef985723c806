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

/// The columns of a GPU program's per-kernel statistics (a JSON list of
/// `KernelStats`): each counter summed over the kernels, and `kernels`, their number.
pub fn kernel_columns(kernels: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    flatten("", kernels, &mut out);
    // `dojo exec --stats` writes {"kernels": [...], "components": ...}; `dojo run` the
    // bare list.
    let list = kernels.get("kernels").unwrap_or(kernels);
    out.insert("kernels".into(), list.as_array().map_or(0, Vec::len) as f64);
    out
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
}
