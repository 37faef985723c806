//! `--profile` and `--trace FILE` of the engine-facing commands: what an observed run
//! (`SimConfig::observe`) recorded, as a printed profile and as a Chrome trace (JSON,
//! which Perfetto and chrome://tracing load).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde_json::{json, Value};
use simdojo::engine::Observation;
use simdojo::time::Tick;

use std::fmt::Write as _;

/// Components listed by name in the profile (the most host time first).
const TOP_COMPONENTS: usize = 10;

/// Names of the components of an observed run, by id.
pub struct Names<'a> {
    /// Component paths.
    pub paths: &'a [String],
    /// Component type names.
    pub types: &'a [String],
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The profile of an observed run that reached `sim_end`, as printed text.
pub fn render(obs: &Observation, names: &Names<'_>, sim_end: Tick) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = write_profile(&mut s, obs, names, sim_end);
    s
}

fn write_profile(s: &mut String, obs: &Observation, names: &Names<'_>, sim_end: Tick) -> std::fmt::Result {
    let events: u64 = obs.components.iter().map(|c| c.events).sum();
    let host: u64 = obs.components.iter().map(|c| c.host_ns).sum();
    let windows = obs.windows.iter().filter(|w| w.events > 0).count() as u64;
    writeln!(s, "profile:")?;
    writeln!(
        s,
        "  passes:          {} ({} windows with events; {:.1} events per window; {:.3} ns simulated per pass)",
        obs.epochs,
        windows,
        events as f64 / windows.max(1) as f64,
        sim_end.0 as f64 / 1e3 / obs.epochs.max(1) as f64
    )?;
    writeln!(s, "  events:          {events} in {:.3} ms of handling ({:.1} ns each)", ms(host), host as f64 / events.max(1) as f64)?;
    // Every worker the run was given, idle ones included: `--workers 2` never hides
    // that the second one did nothing.
    for (w, l) in obs.worker_loads().iter().enumerate() {
        writeln!(
            s,
            "  worker {w}:        busy {:.3} ms ({} events), idle wait {:.3} ms",
            ms(l.busy_ns),
            l.events,
            ms(l.barrier_ns)
        )?;
    }
    let mut by_type: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for (i, c) in obs.components.iter().enumerate() {
        let e = by_type.entry(names.types[i].as_str()).or_default();
        e.0 += 1;
        e.1 += c.events;
        e.2 += c.host_ns;
    }
    writeln!(s, "  by type:         (components, events, host ms, ns/event)")?;
    for (ty, (n, ev, ns)) in &by_type {
        writeln!(s, "    {ty:<24} {n:>6} {ev:>12} {:>10.3} {:>8.1}", ms(*ns), *ns as f64 / (*ev).max(1) as f64)?;
    }
    let mut order: Vec<usize> = (0..obs.components.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(obs.components[i].host_ns));
    writeln!(s, "  top components:  (events, host ms)")?;
    for &i in order.iter().take(TOP_COMPONENTS).filter(|&&i| obs.components[i].events > 0) {
        let c = obs.components[i];
        writeln!(s, "    {:<40} {:>12} {:>10.3}", names.paths[i], c.events, ms(c.host_ns))?;
    }
    let p = obs.parallelism();
    writeln!(
        s,
        "  parallelism:     work {:.3} ms, critical path {:.3} ms over {} lookahead slices of {}: {:.2} available",
        ms(p.work_ns),
        ms(p.critical_ns),
        p.epochs,
        obs.lookahead.map_or("the whole run".to_string(), |l| l.to_string()),
        p.available()
    )?;
    for n in PREDICTED {
        writeln!(s, "  predicted speedup on {n} workers: {:.2} (synchronisation free)", obs.predicted_speedup(n, 0))?;
    }
    Ok(())
}

/// The worker counts the profile predicts the speedup of.
const PREDICTED: [usize; 5] = [2, 4, 8, 16, 64];

/// The profile's figures as JSON.
pub fn to_json(obs: &Observation) -> Value {
    let p = obs.parallelism();
    json!({
        "epochs": obs.epochs,
        "windows": obs.windows.len(),
        "work_ns": p.work_ns,
        "critical_path_ns": p.critical_ns,
        "available_parallelism": p.available(),
        "predicted_speedup": PREDICTED.iter().map(|&n| (n.to_string(), json!(obs.predicted_speedup(n, 0)))).collect::<serde_json::Map<_, _>>(),
        "predicted_speedup_2": obs.predicted_speedup(2, 0),
        "idle_wait_ns": obs.waits.iter().map(|b| b.end_ns.saturating_sub(b.start_ns)).sum::<u64>(),
    })
}

/// Writes the Chrome trace of an observed run to `path` ([`simdojo::chrome_trace`]).
pub fn write_trace(path: &Path, obs: &Observation, names: &Names<'_>) -> anyhow::Result<()> {
    simdojo::chrome_trace::write(path, obs, names.paths).with_context(|| format!("writing the trace to {}", path.display()))
}
