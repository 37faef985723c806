//! [`PlanReport`]: what a plan costs (balance, cut) and what it allows (lookahead).

use std::fmt;

use super::Plan;
use crate::ids::PartitionId;
use crate::time::Tick;
use crate::topology::{LinkKind, Topology};

/// The load of one partition.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionLoad {
    /// How many components it runs.
    pub n_components: usize,
    /// The sum of their weights.
    pub weight: f64,
}

/// A description of a [`Plan`] for a topology; `Display` prints it as a table.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanReport {
    /// Load per partition, indexed by [`PartitionId`].
    pub partitions: Vec<PartitionLoad>,
    /// The heaviest partition's weight over the average, minus one (0 is perfect).
    pub imbalance: f64,
    /// Links whose two ends are in different partitions.
    pub n_cut_links: usize,
    /// The summed weight of those links.
    pub cut_link_weight: f64,
    /// Fabrics whose members are in more than one partition.
    pub n_cut_fabrics: usize,
    /// The summed weight of those fabrics.
    pub cut_fabric_weight: f64,
    /// The smallest latency of anything crossing partitions; `None` when nothing is cut.
    pub lookahead: Option<Tick>,
    /// `matrix[p][q]`: see [`PlanReport::lookahead`].
    pub matrix: Vec<Vec<Option<Tick>>>,
}

impl PlanReport {
    /// The smallest latency of a link or fabric carrying messages from partition `p` to
    /// partition `q` (a one-way link counts only from its `a` to its `b`); `None` when
    /// nothing goes from `p` to `q`, when `p == q`, or when either id is out of range.
    pub fn lookahead(&self, p: PartitionId, q: PartitionId) -> Option<Tick> {
        self.matrix.get(p.index()).and_then(|row| row.get(q.index())).copied().flatten()
    }
}

/// The partition of the component at `index`, if the plan knows it and it is in range.
fn partition_at(plan: &Plan, index: usize) -> Option<usize> {
    plan.assignment.get(index).map(|p| p.index()).filter(|&p| p < plan.n_partitions as usize)
}

fn lower(cell: &mut Option<Tick>, latency: Tick) {
    *cell = Some(cell.map_or(latency, |old| old.min(latency)));
}

/// The per-pair lookahead of `plan`: `matrix[p][q]` is the smallest latency of a link or
/// fabric carrying messages from partition `p` to partition `q` (one-way links count
/// only from `a` to `b`), `None` on the diagonal and where nothing crosses.
///
/// Components without a valid partition in `plan` are left out. The matrix is dense,
/// `n_partitions` squared, sized for partitions as worker threads (tens to hundreds).
pub fn lookahead_matrix(t: &Topology, plan: &Plan) -> Vec<Vec<Option<Tick>>> {
    let k = plan.n_partitions as usize;
    let mut matrix = vec![vec![None; k]; k];
    for link in &t.links {
        let (Some(pa), Some(pb)) =
            (partition_at(plan, link.a.component.index()), partition_at(plan, link.b.component.index()))
        else {
            continue;
        };
        if pa == pb {
            continue;
        }
        lower(&mut matrix[pa][pb], link.latency);
        if link.kind == LinkKind::Paired {
            lower(&mut matrix[pb][pa], link.latency);
        }
    }
    for fabric in &t.fabrics {
        let parts = fabric_partitions(plan, fabric.members.iter().map(|m| m.component.index()));
        for &p in &parts {
            for &q in &parts {
                if p != q {
                    lower(&mut matrix[p][q], fabric.latency);
                }
            }
        }
    }
    matrix
}

/// The distinct partitions of the given components, sorted.
fn fabric_partitions(plan: &Plan, members: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut parts: Vec<usize> = members.filter_map(|idx| partition_at(plan, idx)).collect();
    parts.sort_unstable();
    parts.dedup();
    parts
}

pub(super) fn build(t: &Topology, plan: &Plan) -> PlanReport {
    let k = plan.n_partitions as usize;
    let mut partitions = vec![PartitionLoad { n_components: 0, weight: 0.0 }; k];
    for (idx, c) in t.components.iter().enumerate() {
        if let Some(p) = partition_at(plan, idx) {
            partitions[p].n_components += 1;
            partitions[p].weight += c.weight;
        }
    }
    let total: f64 = partitions.iter().map(|l| l.weight).sum();
    let heaviest = partitions.iter().map(|l| l.weight).fold(0.0, f64::max);
    let imbalance = if total > 0.0 && k > 0 { heaviest / (total / k as f64) - 1.0 } else { 0.0 };

    let mut n_cut_links = 0;
    let mut cut_link_weight = 0.0;
    for link in &t.links {
        let pa = partition_at(plan, link.a.component.index());
        let pb = partition_at(plan, link.b.component.index());
        if pa.is_some() && pb.is_some() && pa != pb {
            n_cut_links += 1;
            cut_link_weight += link.weight;
        }
    }
    let mut n_cut_fabrics = 0;
    let mut cut_fabric_weight = 0.0;
    for fabric in &t.fabrics {
        if fabric_partitions(plan, fabric.members.iter().map(|m| m.component.index())).len() > 1 {
            n_cut_fabrics += 1;
            cut_fabric_weight += fabric.weight;
        }
    }
    let matrix = lookahead_matrix(t, plan);
    let lookahead = matrix.iter().flatten().flatten().copied().min();
    PlanReport {
        partitions,
        imbalance,
        n_cut_links,
        cut_link_weight,
        n_cut_fabrics,
        cut_fabric_weight,
        lookahead,
        matrix,
    }
}

/// Above this many partitions the lookahead matrix is left out of the printed report.
const MAX_PRINTED_MATRIX: usize = 16;

impl fmt::Display for PlanReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:>9}  {:>10}  {:>12}", "partition", "components", "weight")?;
        for (p, load) in self.partitions.iter().enumerate() {
            writeln!(f, "{p:>9}  {:>10}  {:>12.3}", load.n_components, load.weight)?;
        }
        writeln!(f, "imbalance: {:.2}%", self.imbalance * 100.0)?;
        writeln!(f, "cut links: {} (weight {:.3})", self.n_cut_links, self.cut_link_weight)?;
        writeln!(f, "cut fabrics: {} (weight {:.3})", self.n_cut_fabrics, self.cut_fabric_weight)?;
        match self.lookahead {
            Some(tick) => writeln!(f, "lookahead: {tick}")?,
            None => writeln!(f, "lookahead: none (nothing crosses partitions)")?,
        }
        let k = self.matrix.len();
        if k > MAX_PRINTED_MATRIX {
            return writeln!(f, "lookahead matrix: omitted for {k} partitions");
        }
        if k > 1 {
            writeln!(f, "lookahead matrix (row: from, column: to):")?;
            write!(f, "{:>6}", "")?;
            for q in 0..k {
                write!(f, "  {q:>12}")?;
            }
            writeln!(f)?;
            for (p, row) in self.matrix.iter().enumerate() {
                write!(f, "{p:>6}")?;
                for cell in row {
                    match cell {
                        Some(tick) => write!(f, "  {:>12}", tick.to_string())?,
                        None => write!(f, "  {:>12}", "-")?,
                    }
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
