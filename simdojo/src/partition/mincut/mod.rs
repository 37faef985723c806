//! The `mincut` strategy: multilevel graph partitioning that keeps low-latency links
//! inside partitions.
//!
//! The topology becomes a weighted graph (`graph`): components are vertices weighed by
//! their `weight`; a link is an edge of weight `link.weight * max_latency / latency`, so
//! the lowest-latency links are the heaviest and the last to be cut, while cutting the
//! highest-latency links (which set the lookahead) is cheap. A fabric is a hyperedge:
//! with few members it becomes a clique whose edges share the fabric's scaled weight
//! (each member is tied to the others by that weight in total); with many it becomes a
//! star through a virtual hub vertex of weight 0, which is not a component and is
//! dropped from the result.
//!
//! Then the usual multilevel scheme:
//! 1. `coarsen`: heavy-edge matching, level after level, down to a few dozen vertices
//!    per partition;
//! 2. `initial`: greedy graph growing on the coarsest graph, a few tries from
//!    different starts, each refined, the smallest cut kept;
//! 3. uncoarsening: project the partition level by level back to the full graph,
//!    `refine` at every level with greedy boundary moves under the balance limit, then
//!    two-move chains where a full partition blocks a good move.
//!
//! Balance: no partition may weigh more than `(1 + max_imbalance)` times the average,
//! relaxed where whole vertices make that impossible: to the average plus the heaviest
//! vertex that fits in an average partition (moves come in whole vertices; this is what
//! lets coarse levels and small graphs balance at all), and to the heaviest vertex of
//! all when a single vertex outweighs the average (it gets a partition of its own).

mod coarsen;
mod graph;
mod initial;
mod refine;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use graph::{Graph, NONE};
use refine::Balance;

use super::validate::balance_weights;
use crate::topology::Topology;

/// Fabrics with at most this many distinct member components become cliques; larger
/// ones become stars through a virtual hub.
const MAX_CLIQUE_FABRIC: usize = 8;
/// Coarsening stops at about this many vertices per partition...
const COARSEST_PER_PARTITION: usize = 30;
/// ...and at no fewer than this many vertices in all.
const COARSEST_MIN: usize = 120;
/// Coarsening also stops when a level removes less than this fraction of vertices.
const MIN_SHRINK: f64 = 0.05;
/// How many differently started initial partitions are tried...
const INITIAL_TRIES: usize = 4;
/// ...when the coarsest graph has at most this many vertices (else one).
const MAX_VERTICES_FOR_TRIES: usize = 8192;
/// With many partitions, coarsening still goes down to at most `1 / COARSEST_FRACTION` of
/// the graph.
const COARSEST_FRACTION: usize = 4;
/// Refinement passes per level.
const REFINE_PASSES: usize = 10;
/// Rounds of two-move chains (each followed by greedy passes) per level.
const RELIEVE_ROUNDS: usize = 2;

/// Settings of the `mincut` partitioner.
#[derive(Clone, Debug, PartialEq)]
pub struct MinCutConfig {
    /// How much heavier than the average a partition may be: 0.05 allows 5%. Negative
    /// or NaN counts as 0. Whole components can force more (see the module docs).
    pub max_imbalance: f64,
}

impl Default for MinCutConfig {
    fn default() -> MinCutConfig {
        MinCutConfig { max_imbalance: 0.05 }
    }
}

/// The graph of `t`: one vertex per component, then one virtual hub per large fabric.
fn topology_graph(t: &Topology) -> Graph {
    let n_components = t.components.len();
    let mut vertex_weights = balance_weights(t);
    let max_latency = t.max_latency().map_or(1, |l| l.get().max(1)) as f64;
    let scaled = |weight: f64, latency: u64| weight * max_latency / latency.max(1) as f64;

    let mut edges: Vec<(u32, u32, f64)> = Vec::with_capacity(t.links.len());
    for link in &t.links {
        // Ids were validated against the component count, which fits in u32.
        edges.push((link.a.component.0, link.b.component.0, scaled(link.weight, link.latency.get())));
    }
    let mut members: Vec<u32> = Vec::new();
    for fabric in &t.fabrics {
        members.clear();
        members.extend(fabric.members.iter().map(|m| m.component.0));
        members.sort_unstable();
        members.dedup();
        if members.len() < 2 {
            continue;
        }
        let weight = scaled(fabric.weight, fabric.latency.get());
        if members.len() <= MAX_CLIQUE_FABRIC {
            let per_edge = weight / (members.len() - 1) as f64;
            for (i, &a) in members.iter().enumerate() {
                for &b in &members[i + 1..] {
                    edges.push((a, b, per_edge));
                }
            }
        } else {
            let hub = vertex_weights.len() as u32;
            vertex_weights.push(0.0);
            edges.extend(members.iter().map(|&m| (hub, m, weight)));
        }
    }
    debug_assert!(vertex_weights.len() >= n_components);
    Graph::from_edges(vertex_weights, &edges)
}

/// The weight limit of one partition of `g` among `k`.
fn max_part_weight(g: &Graph, k: usize, config: &MinCutConfig) -> f64 {
    let average = g.total_weight() / k as f64;
    // The heaviest vertex that fits in an average partition: the granularity of moves.
    let movable = g.vertex_weights.iter().copied().filter(|&w| w <= average).fold(0.0, f64::max);
    (average * (1.0 + config.max_imbalance.max(0.0))).max(average + movable).max(g.max_vertex_weight())
}

/// Refines `part` on `g`, first forcing balance if boundary moves alone cannot.
fn refine_level(g: &Graph, part: &mut [u32], k: usize, config: &MinCutConfig) {
    let mut balance = Balance::new(g, part, k, max_part_weight(g, k, config));
    refine::refine(g, part, &mut balance, REFINE_PASSES);
    if !balance.is_balanced() {
        refine::force_balance(g, part, &mut balance);
        refine::refine(g, part, &mut balance, REFINE_PASSES);
    }
    for _ in 0..RELIEVE_ROUNDS {
        if refine::relieve(g, part, &mut balance) == 0 {
            break;
        }
        refine::refine(g, part, &mut balance, REFINE_PASSES);
    }
}

/// Partitions `g` into `k` parts (multilevel); returns the part of every vertex.
fn partition_graph(g: Graph, k: usize, config: &MinCutConfig) -> Vec<u32> {
    if k <= 1 {
        return vec![0; g.n_vertices()];
    }
    // Enough coarse vertices per partition for growing, at least two each, but coarsen
    // at least somewhat when there are many partitions.
    let coarsest_size =
        (COARSEST_PER_PARTITION * k).min(g.n_vertices() / COARSEST_FRACTION).max(COARSEST_MIN).max(2 * k);
    let max_vertex = 1.5 * g.total_weight() / coarsest_size as f64;
    let mut levels: Vec<Graph> = vec![g];
    let mut maps: Vec<Vec<u32>> = Vec::new();
    loop {
        // `levels` starts non-empty and only grows.
        let current = levels.last().expect("the finest level is always present");
        let n = current.n_vertices();
        if n <= coarsest_size {
            break;
        }
        let next = coarsen::coarsen(current, max_vertex);
        if next.graph.n_vertices() as f64 > (1.0 - MIN_SHRINK) * n as f64 {
            break;
        }
        maps.push(next.coarse_of);
        levels.push(next.graph);
    }

    let coarsest = levels.last().expect("the finest level is always present");
    let n = coarsest.n_vertices();
    let mut best: Option<(bool, f64, Vec<u32>)> = None;
    let tries = if n <= MAX_VERTICES_FOR_TRIES { INITIAL_TRIES } else { 1 };
    let limit = max_part_weight(coarsest, k, config);
    for attempt in 0..tries {
        let mut part = initial::grow(coarsest, k, attempt * n / tries);
        refine_level(coarsest, &mut part, k, config);
        let balanced = coarsest.part_weights(&part, k).iter().all(|&w| w <= limit);
        let cut = coarsest.cut(&part);
        let better = match &best {
            None => true,
            Some((b_balanced, b_cut, _)) => (balanced && !b_balanced) || (balanced == *b_balanced && cut < *b_cut),
        };
        if better {
            best = Some((balanced, cut, part));
        }
    }
    let mut part = best.map(|(_, _, part)| part).expect("at least one initial try is made");

    for level in (0..maps.len()).rev() {
        let fine = &levels[level];
        let map = &maps[level];
        part = map.iter().map(|&c| part[c as usize]).collect();
        refine_level(fine, &mut part, k, config);
    }
    part
}

/// Gives every empty partition a component: the highest-id component of the partition
/// with the most components (lowest index among equals). Needs `k <= part.len()`.
fn fill_empty(part: &mut [u32], k: usize) {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (v, &p) in part.iter().enumerate() {
        members[p as usize].push(v);
    }
    // Max-heap of (member count, lowest index first among equals).
    let mut donors: BinaryHeap<(usize, Reverse<usize>)> =
        members.iter().enumerate().filter(|(_, m)| m.len() >= 2).map(|(p, m)| (m.len(), Reverse(p))).collect();
    for empty in 0..k {
        if !members[empty].is_empty() {
            continue;
        }
        let Some((count, Reverse(donor))) = donors.pop() else { return };
        // Donors hold at least two members, so the pop leaves one behind.
        let Some(v) = members[donor].pop() else { return };
        part[v] = empty as u32;
        members[empty].push(v);
        if count > 2 {
            donors.push((count - 1, Reverse(donor)));
        }
    }
}

/// Partitions the components of `t` into `k` parts (`1 <= k <= components`).
pub(super) fn partition(t: &Topology, k: usize, config: &MinCutConfig) -> Vec<u32> {
    let n_components = t.components.len();
    if k == n_components {
        // The only plan without an empty partition: every component on its own.
        return (0..n_components as u32).collect();
    }
    let g = topology_graph(t);
    let mut part = partition_graph(g, k, config);
    part.truncate(n_components);
    debug_assert!(part.iter().all(|&p| p != NONE));
    fill_empty(&mut part, k);
    part
}

/// Partitions the components of `t` into at most `n` parts with explicit settings;
/// [`plan`](super::plan) with [`Strategy::MinCut`](super::Strategy::MinCut) uses
/// [`MinCutConfig::default`].
pub fn plan(t: &Topology, n: u32, config: &MinCutConfig) -> Result<super::Plan, super::PartitionError> {
    let k = super::checked_count(t, n)?;
    Ok(super::Plan::from_raw(&partition(t, k, config)))
}
