//! Per-partition horizons from a sparse graph of the lookaheads between partitions.
//!
//! The horizon of partition q is the earliest time anything can still arrive in q:
//! `min over partitions s (q included) of next(s) + reach(s, q)`, where `reach(s, q)`
//! is the smallest total latency of a chain of one or more cross-partition links or
//! fabrics from s to q. That is a multi-source shortest-path problem, solved once per
//! epoch by Dijkstra's algorithm over a graph with one node per partition and one
//! *hub* per fabric that spans many partitions (so a fabric over P partitions costs P
//! edges, not P^2): O((P + E) log P) per epoch and O(P + E) memory, where E counts
//! the distinct cross-partition links and fabric memberships.
//!
//! A hub stands for "any member's partition to any other member's partition" with the
//! fabric's latency. A chain that enters a hub from partition u may leave it to any
//! member partition except u (u to u is no crossing); so each hub keeps its two best
//! arrivals from distinct partitions, and relays the second only to the first one's
//! partition.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::ids::PartitionId;
use crate::time::Tick;
use crate::topology::{LinkKind, Topology};

/// Fabrics spanning more partitions than this get a hub; smaller ones direct edges.
const HUB_MIN_PARTITIONS: usize = 8;

/// No partition (a hub's empty label).
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Edge {
    to: u32,
    latency: Tick,
}

/// The lookahead graph of one partitioning: read-only while running.
#[derive(Clone, Debug)]
pub(crate) struct LookaheadGraph {
    partitions: usize,
    /// Edges of node v (partitions `0..partitions`, then hubs) are
    /// `edges[first[v]..first[v + 1]]`.
    first: Vec<u32>,
    edges: Vec<Edge>,
    /// Partitions holding a component that may end the run (see
    /// `BuildContext::may_end_run`), sorted.
    exit_sources: Vec<u32>,
    /// The smallest latency between two partitions (`None`: none are linked).
    min_latency: Option<Tick>,
}

/// Reusable buffers of [`LookaheadGraph::arrivals`].
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    done: Vec<bool>,
    tentative: Vec<Tick>,
    /// Per hub, its best arrival and the best from another partition: (time, from).
    labels: Vec<[(Tick, u32); 2]>,
    /// Per hub, the two best arrivals from distinct partitions offered so far (labels
    /// included): an offer that changes neither cannot become a label and is not queued.
    offered: Vec<[(Tick, u32); 2]>,
    heap: BinaryHeap<Reverse<(Tick, u32, u32)>>,
}

/// Offers arrival `t` from partition `from` to a hub's two best distinct arrivals;
/// returns whether they changed.
fn offer(best: &mut [(Tick, u32); 2], t: Tick, from: u32) -> bool {
    if from == best[0].1 {
        let better = t < best[0].0;
        if better {
            best[0].0 = t;
        }
        return better;
    }
    if t < best[0].0 {
        best[1] = best[0];
        best[0] = (t, from);
        return true;
    }
    if from == best[1].1 {
        let better = t < best[1].0;
        if better {
            best[1].0 = t;
        }
        return better;
    }
    let better = t < best[1].0;
    if better {
        best[1] = (t, from);
    }
    better
}

impl LookaheadGraph {
    /// The graph of `topology` under `assignment` (the partition of each component,
    /// every index in range); `ends_run` marks the components that may end the run.
    pub fn build(
        topology: &Topology,
        assignment: &[PartitionId],
        partitions: usize,
        ends_run: &[bool],
    ) -> LookaheadGraph {
        let part = |c: crate::ids::ComponentId| assignment[c.index()].index() as u32;
        let mut raw: Vec<(u32, u32, Tick)> = Vec::new();
        for link in &topology.links {
            let (a, b) = (part(link.a.component), part(link.b.component));
            if a != b {
                raw.push((a, b, link.latency));
                if link.kind == LinkKind::Paired {
                    raw.push((b, a, link.latency));
                }
            }
        }
        let mut hubs = 0u32;
        for fabric in &topology.fabrics {
            let mut parts: Vec<u32> = fabric.members.iter().map(|m| part(m.component)).collect();
            parts.sort_unstable();
            parts.dedup();
            if parts.len() < 2 {
                continue;
            }
            if parts.len() <= HUB_MIN_PARTITIONS {
                for &p in &parts {
                    raw.extend(parts.iter().filter(|&&q| q != p).map(|&q| (p, q, fabric.latency)));
                }
            } else {
                let hub = (partitions as u32) + hubs;
                hubs += 1;
                for &p in &parts {
                    raw.push((p, hub, fabric.latency));
                    raw.push((hub, p, Tick::ZERO));
                }
            }
        }
        // One edge per pair, the smallest latency (sorted by pair, then latency).
        raw.sort_unstable();
        raw.dedup_by_key(|e| (e.0, e.1));
        let nodes = partitions + hubs as usize;
        let mut first = vec![0u32; nodes + 1];
        for &(from, _, _) in &raw {
            first[from as usize + 1] += 1;
        }
        for v in 0..nodes {
            first[v + 1] += first[v];
        }
        let edges = raw.iter().map(|&(_, to, latency)| Edge { to, latency }).collect();
        let mut exit_sources: Vec<u32> =
            ends_run.iter().enumerate().filter(|(_, &e)| e).map(|(c, _)| assignment[c].index() as u32).collect();
        exit_sources.sort_unstable();
        exit_sources.dedup();
        // Edges out of hubs have no latency of their own: the way in carries it.
        let min_latency = raw.iter().filter(|e| (e.0 as usize) < partitions).map(|e| e.2).min();
        LookaheadGraph { partitions, first, edges, exit_sources, min_latency }
    }

    /// The graph of one partition (no edges).
    pub fn single(any_ends_run: bool) -> LookaheadGraph {
        LookaheadGraph {
            partitions: 1,
            first: vec![0, 0],
            edges: Vec::new(),
            exit_sources: if any_ends_run { vec![0] } else { Vec::new() },
            min_latency: None,
        }
    }

    /// The smallest latency between two partitions, `None` when no two are linked.
    pub fn min_latency(&self) -> Option<Tick> {
        self.min_latency
    }

    /// The partitions that may end the run.
    pub fn exit_sources(&self) -> &[u32] {
        &self.exit_sources
    }

    fn out(&self, v: u32) -> &[Edge] {
        &self.edges[self.first[v as usize] as usize..self.first[v as usize + 1] as usize]
    }

    /// Fills `out[q]` with `min over s of next[s] + reach(s, q)` (`Tick::MAX` where
    /// nothing can arrive) for every partition q.
    ///
    /// Dijkstra's algorithm from every partition at once, with hubs relaxed in bulk: a
    /// hub queues only the arrivals that can become one of its two labels, and when a
    /// label is final every member it reaches is final with it (its time is the
    /// smallest still queued), without a queue entry each. A fabric over P partitions
    /// thus costs O(P), not O(P log P).
    pub fn arrivals(&self, next: &[Tick], s: &mut Scratch, out: &mut Vec<Tick>) {
        let n = self.partitions;
        let hubs = self.first.len() - 1 - n;
        s.done.clear();
        s.done.resize(n, false);
        s.tentative.clear();
        s.tentative.resize(n, Tick::MAX);
        s.labels.clear();
        s.labels.resize(hubs, [(Tick::MAX, NONE); 2]);
        s.offered.clear();
        s.offered.resize(hubs, [(Tick::MAX, NONE); 2]);
        s.heap.clear();
        out.clear();
        out.resize(n, Tick::MAX);
        for (u, &t) in next.iter().enumerate() {
            if t == Tick::MAX {
                continue;
            }
            for e in self.out(u as u32) {
                let at = t.saturating_add(e.latency);
                if (e.to as usize) < n {
                    push(s, at, e.to, u as u32);
                } else {
                    offer(&mut s.offered[e.to as usize - n], at, u as u32);
                }
            }
        }
        for (h, offered) in s.offered.iter().enumerate() {
            for &(t, from) in offered.iter().filter(|o| o.1 != NONE) {
                s.heap.push(Reverse((t, (n + h) as u32, from)));
            }
        }
        while let Some(Reverse((t, v, from))) = s.heap.pop() {
            let v_ = v as usize;
            if v_ < n {
                if !s.done[v_] {
                    self.settle(v, t, s, out);
                }
                continue;
            }
            let hub = v_ - n;
            let [best, second] = s.labels[hub];
            if best.1 == NONE {
                s.labels[hub][0] = (t, from);
                for i in self.first[v_] as usize..self.first[v_ + 1] as usize {
                    let to = self.edges[i].to;
                    if to != from && !s.done[to as usize] {
                        self.settle(to, t, s, out);
                    }
                }
            } else if second.1 == NONE && from != best.1 {
                s.labels[hub][1] = (t, from);
                if !s.done[best.1 as usize] && self.out(v).iter().any(|e| e.to == best.1) {
                    self.settle(best.1, t, s, out);
                }
            }
        }
    }

    /// Partition `v`'s earliest arrival is `t` (the smallest still queued): records it
    /// and relaxes `v`'s edges.
    fn settle(&self, v: u32, t: Tick, s: &mut Scratch, out: &mut [Tick]) {
        s.done[v as usize] = true;
        out[v as usize] = t;
        let n = self.partitions as u32;
        for e in self.out(v) {
            let at = t.saturating_add(e.latency);
            if e.to >= n {
                let hub = (e.to - n) as usize;
                // A hub with both labels never relays again; an arrival that changes
                // neither of its two best offers cannot become a label.
                if s.labels[hub][1].1 == NONE && offer(&mut s.offered[hub], at, v) {
                    s.heap.push(Reverse((at, e.to, v)));
                }
            } else {
                push(s, at, e.to, v);
            }
        }
    }
}

/// Pushes an arrival at partition `to` if it beats what is known.
fn push(s: &mut Scratch, at: Tick, to: u32, from: u32) {
    let t = &mut s.tentative[to as usize];
    if at < *t && !s.done[to as usize] {
        *t = at;
        s.heap.push(Reverse((at, to, from)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ComponentId;
    use crate::params::Params;
    use crate::topology::{Endpoint, FabricDecl, LinkDecl};
    use proptest::prelude::*;

    /// Shortest chains of at least one hop (Floyd-Warshall without zero self-distances).
    #[allow(clippy::needless_range_loop)]
    fn reach_matrix(direct: &[Vec<Option<Tick>>]) -> Vec<Vec<Option<Tick>>> {
        let k = direct.len();
        let mut d = direct.to_vec();
        for m in 0..k {
            for i in 0..k {
                let Some(im) = d[i][m] else { continue };
                for j in 0..k {
                    if let Some(mj) = d[m][j] {
                        let via = im.saturating_add(mj);
                        if d[i][j].is_none_or(|cur| via < cur) {
                            d[i][j] = Some(via);
                        }
                    }
                }
            }
        }
        d
    }

    fn endpoint(c: usize, port: String) -> Endpoint {
        Endpoint { component: ComponentId::from_index(c), port }
    }

    /// A topology of `components` components with the given links (a, b, latency,
    /// paired) and fabrics (members, latency).
    fn topology(components: usize, links: &[(usize, usize, u64, bool)], fabrics: &[(Vec<usize>, u64)]) -> Topology {
        let mut t = Topology::new();
        for i in 0..components {
            t.add_component(format!("c{i}"), "test", Params::new());
        }
        for (i, &(a, b, lat, paired)) in links.iter().enumerate() {
            t.links.push(LinkDecl {
                a: endpoint(a, format!("l{i}")),
                b: endpoint(b, format!("l{i}")),
                latency: Tick(lat),
                kind: if paired { LinkKind::Paired } else { LinkKind::OneWay },
                weight: 1.0,
                origin: None,
            });
        }
        for (i, (members, lat)) in fabrics.iter().enumerate() {
            t.fabrics.push(FabricDecl {
                members: members.iter().map(|&m| endpoint(m, format!("f{i}"))).collect(),
                latency: Tick(*lat),
                weight: 1.0,
                origin: None,
            });
        }
        t
    }

    proptest! {
        /// The sparse Dijkstra with hubs gives exactly the dense reach matrix's horizons.
        #[test]
        fn arrivals_equal_the_dense_reach_matrix(
            parts in 2usize..24,
            assign in prop::collection::vec(0usize..1000, 40),
            links in prop::collection::vec((0usize..40, 0usize..40, 1u64..50, any::<bool>()), 0..30),
            fabrics in prop::collection::vec((prop::collection::vec(0usize..40, 2..30), 1u64..50), 0..4),
            next in prop::collection::vec(prop::option::of(0u64..200), 24),
        ) {
            let assignment: Vec<PartitionId> = (0..40).map(|c| PartitionId::from_index(if c < parts { c } else { assign[c] % parts })).collect();
            let fabrics: Vec<(Vec<usize>, u64)> = fabrics.into_iter().map(|(mut m, l)| { m.sort_unstable(); m.dedup(); (m, l) }).filter(|(m, _)| m.len() >= 2).collect();
            let t = topology(40, &links, &fabrics);
            let plan = crate::partition::Plan { assignment: assignment.clone(), n_partitions: parts as u32 };
            let reach = reach_matrix(&crate::partition::lookahead_matrix(&t, &plan));
            let next: Vec<Tick> = next[..parts].iter().map(|t| t.map_or(Tick::MAX, Tick)).collect();
            let graph = LookaheadGraph::build(&t, &assignment, parts, &[false; 40]);
            let mut got = Vec::new();
            graph.arrivals(&next, &mut Scratch::default(), &mut got);
            for q in 0..parts {
                let want = (0..parts)
                    .filter_map(|s| Some(next[s]).filter(|t| *t != Tick::MAX).zip(reach[s][q]))
                    .map(|(t, l)| t.saturating_add(l))
                    .min()
                    .unwrap_or(Tick::MAX);
                prop_assert_eq!(got[q], want, "partition {}", q);
            }
        }
    }
}
