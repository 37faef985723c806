//! The initial partition of the coarsest graph: greedy graph growing.
//!
//! Partitions are grown one after another. Each starts at a pseudo-peripheral vertex of
//! what is still unassigned (the last vertex a breadth-first search reaches), then
//! repeatedly takes the frontier vertex most strongly connected to it until it holds its
//! share of the remaining weight; the last partition takes the rest. Growing from the
//! periphery keeps partitions compact and their shared boundary short.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::graph::{Graph, NONE};

/// The search for a peripheral seed visits this many partitions' worth of vertices...
const PERIPHERAL_SEARCH_PARTITIONS: usize = 4;
/// ...but at least this many.
const PERIPHERAL_SEARCH_MIN: usize = 16;

/// A frontier entry: a vertex and its connectivity to the growing partition when it was
/// pushed. Ordered by connectivity, then by lower vertex id.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    connectivity: f64,
    vertex: usize,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.connectivity.total_cmp(&other.connectivity).then_with(|| other.vertex.cmp(&self.vertex))
    }
}

/// The last vertex a breadth-first search from `start` reaches among unassigned ones,
/// visiting at most `limit` vertices (a few partitions' worth is far enough).
fn peripheral(g: &Graph, part: &[u32], start: usize, limit: usize, seen: &mut [bool]) -> usize {
    let mut queue = VecDeque::from([start]);
    let mut visited = vec![start];
    seen[start] = true;
    let mut last = start;
    while let Some(v) = queue.pop_front() {
        last = v;
        for (u, _) in g.neighbors(v) {
            if !seen[u] && part[u] == NONE && visited.len() < limit {
                seen[u] = true;
                visited.push(u);
                queue.push_back(u);
            }
        }
    }
    for v in visited {
        seen[v] = false;
    }
    last
}

/// Grows `k` partitions of `g`; the first starts from the periphery as seen from
/// vertex `start`.
pub(super) fn grow(g: &Graph, k: usize, start: usize) -> Vec<u32> {
    let n = g.n_vertices();
    let mut part = vec![NONE; n];
    let mut seen = vec![false; n];
    let mut connectivity = vec![0.0f64; n];
    let mut remaining: f64 = g.total_weight();
    let search_limit = (PERIPHERAL_SEARCH_PARTITIONS * n / k).max(PERIPHERAL_SEARCH_MIN);
    // Lowest vertex id that may still be unassigned.
    let mut cursor = 0;
    for p in 0..k.saturating_sub(1) {
        let target = remaining / (k - p) as f64;
        let mut weight = 0.0;
        let mut frontier = BinaryHeap::new();
        let mut touched = Vec::new();
        while cursor < n && part[cursor] != NONE {
            cursor += 1;
        }
        if cursor == n {
            break;
        }
        let origin = if p == 0 && part[start] == NONE { start } else { cursor };
        let seed = peripheral(g, &part, origin, search_limit, &mut seen);
        frontier.push(Candidate { connectivity: 0.0, vertex: seed });
        while weight < target {
            let popped = frontier.pop();
            let (v, from_frontier) = match popped {
                Some(c) if part[c.vertex] != NONE || c.connectivity != connectivity[c.vertex] => continue,
                Some(c) => (c.vertex, true),
                None => {
                    while cursor < n && part[cursor] != NONE {
                        cursor += 1;
                    }
                    if cursor == n {
                        break;
                    }
                    (cursor, false)
                }
            };
            let w_v = g.vertex_weights[v];
            // Take `v` only if that brings the partition closer to its target.
            if weight > 0.0 && weight + w_v / 2.0 > target {
                if from_frontier {
                    continue;
                }
                break;
            }
            part[v] = p as u32;
            weight += w_v;
            remaining -= w_v;
            for (u, w) in g.neighbors(v) {
                if part[u] == NONE {
                    if connectivity[u] == 0.0 {
                        touched.push(u);
                    }
                    connectivity[u] += w;
                    frontier.push(Candidate { connectivity: connectivity[u], vertex: u });
                }
            }
        }
        for u in touched {
            connectivity[u] = 0.0;
        }
    }
    let last = (k - 1) as u32;
    for p in &mut part {
        if *p == NONE {
            *p = last;
        }
    }
    part
}

#[cfg(test)]
mod tests {
    use super::grow;
    use crate::partition::mincut::graph::Graph;

    #[test]
    fn a_path_splits_into_contiguous_halves() {
        let edges: Vec<(u32, u32, f64)> = (0..9).map(|v| (v, v + 1, 1.0)).collect();
        let g = Graph::from_edges(vec![1.0; 10], &edges);
        let part = grow(&g, 2, 0);
        assert_eq!(g.cut(&part), 1.0);
        assert_eq!(g.part_weights(&part, 2), vec![5.0, 5.0]);
    }
}
