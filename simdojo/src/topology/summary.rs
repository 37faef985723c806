//! A short numeric summary of a topology (`dojo topology --summary`).

use std::collections::BTreeMap;
use std::fmt;

use crate::time::Tick;
use crate::topology::{LinkKind, Topology};

/// Counts and latency bounds of a topology.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Number of components of each type, by type name.
    pub components_by_type: BTreeMap<String, usize>,
    /// Total number of components.
    pub components: usize,
    /// Number of one-way links.
    pub oneway_links: usize,
    /// Number of paired links.
    pub paired_links: usize,
    /// Number of fabrics.
    pub fabrics: usize,
    /// Total number of fabric members.
    pub fabric_members: usize,
    /// Smallest link or fabric latency.
    pub min_latency: Option<Tick>,
    /// Largest link or fabric latency.
    pub max_latency: Option<Tick>,
}

impl Summary {
    /// Number of links of both kinds.
    pub fn links(&self) -> usize {
        self.oneway_links + self.paired_links
    }
}

/// Summarizes `t`.
pub fn summarize(t: &Topology) -> Summary {
    let mut s = Summary { components: t.components.len(), fabrics: t.fabrics.len(), ..Summary::default() };
    for c in &t.components {
        *s.components_by_type.entry(c.type_name.clone()).or_default() += 1;
    }
    for l in &t.links {
        match l.kind {
            LinkKind::OneWay => s.oneway_links += 1,
            LinkKind::Paired => s.paired_links += 1,
        }
    }
    s.fabric_members = t.fabrics.iter().map(|f| f.members.len()).sum();
    s.min_latency = t.min_latency();
    s.max_latency = t.max_latency();
    s
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "components: {}", self.components)?;
        let width = self.components_by_type.keys().map(String::len).max().unwrap_or(0);
        for (ty, n) in &self.components_by_type {
            writeln!(f, "  {ty:<width$}  {n}")?;
        }
        writeln!(f, "links: {} ({} one-way, {} paired)", self.links(), self.oneway_links, self.paired_links)?;
        writeln!(f, "fabrics: {} ({} members)", self.fabrics, self.fabric_members)?;
        match (self.min_latency, self.max_latency) {
            (Some(lo), Some(hi)) => writeln!(f, "latency: min {lo}, max {hi}"),
            _ => writeln!(f, "latency: none (no links or fabrics)"),
        }
    }
}
