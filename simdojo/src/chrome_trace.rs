//! The Chrome trace of an observed run (`SimConfig::observe`): JSON that Perfetto and
//! chrome://tracing load, written by `dojo exec --trace FILE`, `dojo sim`, `dojo bench`
//! and, from inside the simulated driver, `dojo run --trace FILE`.

use std::path::Path;

use serde_json::{json, Value};

use crate::engine::Observation;

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// The Chrome trace of `obs`: one track per worker with its partitions' windows
/// (`pass E, partition P`), its idle waits and the sampled event spans (named by
/// component path, `paths` indexed by component id) inside the windows.
pub fn to_json(obs: &Observation, paths: &[String]) -> Value {
    let mut events = vec![json!({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "simdojo"}})];
    // One track per worker the run was given, idle ones included.
    for w in 0..obs.worker_loads().len() {
        events.push(json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": w, "args": {"name": format!("worker {w}")}}));
    }
    for w in &obs.windows {
        events.push(json!({
            "ph": "X", "cat": "window", "name": format!("pass {}, partition {}", w.epoch, w.partition.0),
            "pid": 1, "tid": w.worker, "ts": us(w.start_ns), "dur": us(w.end_ns.saturating_sub(w.start_ns)),
            "args": {"pass": w.epoch, "partition": w.partition.0, "events": w.events, "first_ps": w.first.0, "last_ps": w.last.0},
        }));
    }
    for b in &obs.waits {
        events.push(json!({
            "ph": "X", "cat": "wait", "name": "idle wait", "pid": 1, "tid": b.worker,
            "ts": us(b.start_ns), "dur": us(b.end_ns.saturating_sub(b.start_ns)),
        }));
    }
    for s in &obs.spans {
        let name = paths.get(s.component.index()).map_or("?", String::as_str);
        events.push(json!({
            "ph": "X", "cat": "event", "name": name, "pid": 1, "tid": s.worker,
            "ts": us(s.start_ns), "dur": us(s.dur_ns),
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

/// Writes the Chrome trace of `obs` ([`to_json`]) to `path`.
pub fn write(path: &Path, obs: &Observation, paths: &[String]) -> std::io::Result<()> {
    std::fs::write(path, to_json(obs, paths).to_string())
}
