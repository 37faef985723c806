//! `dojo plugins`: the registry, listed like `sst-info`.

use std::process::ExitCode;

use anyhow::bail;
use simdojo::params::ParamValue;
use simdojo::registry::{self, ComponentType, PortDir};
use crate::output::out;

pub fn run(name: Option<&str>) -> anyhow::Result<ExitCode> {
    let types: Vec<&ComponentType> = match name {
        Some(n) => match registry::lookup(n) {
            Some(t) => vec![t],
            None => {
                let known: Vec<&str> = registry::component_types().iter().map(|t| t.name).collect();
                bail!("no component type `{n}`; registered: {}", known.join(", "))
            }
        },
        None => registry::component_types(),
    };
    for t in types {
        out!("{}", describe(t))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(t: &ComponentType) -> String {
    let mut s = format!("{}\n  {}\n", t.name, t.doc);
    if !t.params.is_empty() {
        s.push_str("  parameters:\n");
        for p in t.params {
            let default = p.default_value().map_or_else(|| "required".to_string(), |d| format!("default {}", shown(&d)));
            let unit = if p.unit.is_empty() { String::new() } else { format!(", in {}", p.unit) };
            s.push_str(&format!("    {:<16} {}{unit} ({default}): {}\n", p.name, p.expected(), p.doc));
        }
    }
    if !t.ports.is_empty() {
        s.push_str("  ports:\n");
        for p in t.ports {
            let dir = match p.dir {
                PortDir::In => "in",
                PortDir::Out => "out",
                PortDir::InOut => "in/out",
            };
            let name = if p.array { format!("{}[]", p.name) } else { p.name.to_string() };
            s.push_str(&format!("    {:<16} {dir}, carries {}: {}\n", name, (p.message)().name, p.doc));
        }
    }
    if !t.stats.is_empty() {
        s.push_str("  statistics:\n");
        for st in t.stats {
            s.push_str(&format!("    {:<16} {:?} in {}: {}\n", st.name, st.kind, st.unit, st.doc));
        }
    }
    s
}

/// A value as a topology file would write it (`"4MiB"`, `"2100MHz"`, `"lru"`).
fn shown(v: &ParamValue) -> String {
    match v {
        ParamValue::Bytes(b) => {
            let units = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
            match units.iter().find(|(shift, _)| *b >= 1 << shift && b % (1 << shift) == 0) {
                Some((shift, unit)) => format!("\"{}{unit}\"", b >> shift),
                None => b.to_string(),
            }
        }
        ParamValue::Frequency(c) => {
            // A clock is kept as a whole-picosecond period: name the round frequency that
            // gives it (2100 MHz, not 2100.84).
            let mhz = c.hz() / 1e6;
            let round = [(mhz / 100.0).round() * 100.0, (mhz / 5.0).round() * 5.0, mhz.round()];
            let pick = round.into_iter().find(|m| simdojo::time::ClockDomain::mhz(*m as u32) == *c).unwrap_or(mhz.round());
            format!("\"{pick}MHz\"")
        }
        ParamValue::Duration(t) => format!("\"{t}\""),
        other => other.to_string(),
    }
}
