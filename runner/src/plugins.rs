//! `dojo plugins`: the registry, listed like `sst-info`.

use std::process::ExitCode;

use anyhow::bail;
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
            let default = p.default.map_or_else(|| "required".to_string(), |d| format!("default {d}"));
            s.push_str(&format!("    {:<16} {} ({default}): {}\n", p.name, p.kind.describe(), p.doc));
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
