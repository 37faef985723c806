//! [`Graph`]: an undirected graph with vertex and edge weights in compressed sparse row
//! form, the working representation of the multilevel partitioner.
//!
//! Plain arrays rather than a `petgraph` graph: every level of the multilevel scheme
//! rebuilds the whole graph, and the passes over it are tight loops over neighbour
//! slices; contiguous `u32`/`f64` arrays keep a million-edge graph small and fast.

/// Marks "no vertex" in `u32` vertex tables.
pub(super) const NONE: u32 = u32::MAX;

/// An undirected weighted graph; every edge is stored once in each direction and there
/// are no self-loops.
#[derive(Clone, Debug, Default)]
pub(super) struct Graph {
    /// `offsets[v]..offsets[v + 1]` is the range of `v`'s neighbours in `targets`.
    pub(super) offsets: Vec<usize>,
    /// Neighbour vertex of each adjacency entry.
    pub(super) targets: Vec<u32>,
    /// Edge weight of each adjacency entry.
    pub(super) edge_weights: Vec<f64>,
    /// Weight of each vertex (what partitions balance).
    pub(super) vertex_weights: Vec<f64>,
}

impl Graph {
    /// Builds a graph of `vertex_weights.len()` vertices from undirected `edges`
    /// `(u, v, weight)`; self-loops are dropped and parallel edges merged (weights summed
    /// in an order fixed by the input, so the result is deterministic). Every `u`, `v` must be a vertex.
    pub(super) fn from_edges(vertex_weights: Vec<f64>, edges: &[(u32, u32, f64)]) -> Graph {
        let n = vertex_weights.len();
        let mut degree = vec![0usize; n + 1];
        for &(u, v, _) in edges {
            if u != v {
                degree[u as usize] += 1;
                degree[v as usize] += 1;
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut sum = 0;
        for d in &degree[..n] {
            offsets.push(sum);
            sum += d;
        }
        offsets.push(sum);
        let mut fill = offsets.clone();
        let mut entries = vec![(0u32, 0.0f64); sum];
        for &(u, v, w) in edges {
            if u != v {
                entries[fill[u as usize]] = (v, w);
                fill[u as usize] += 1;
                entries[fill[v as usize]] = (u, w);
                fill[v as usize] += 1;
            }
        }
        // Sort each neighbour list and merge parallel edges. The sort is not stable, but
        // it is deterministic: the same list always comes out in the same order.
        let mut targets = Vec::with_capacity(sum);
        let mut edge_weights = Vec::with_capacity(sum);
        let mut new_offsets = Vec::with_capacity(n + 1);
        for v in 0..n {
            new_offsets.push(targets.len());
            let list = &mut entries[offsets[v]..offsets[v + 1]];
            list.sort_unstable_by_key(|&(u, _)| u);
            let mut last = NONE;
            for &(u, w) in list.iter() {
                if u == last {
                    // `last` was pushed on the previous step, so there is a last weight.
                    *edge_weights.last_mut().expect("a merged edge follows a pushed one") += w;
                } else {
                    targets.push(u);
                    edge_weights.push(w);
                    last = u;
                }
            }
        }
        new_offsets.push(targets.len());
        Graph { offsets: new_offsets, targets, edge_weights, vertex_weights }
    }

    /// The number of vertices.
    pub(super) fn n_vertices(&self) -> usize {
        self.vertex_weights.len()
    }

    /// The neighbours of `v` with the edge weights, in adjacency order.
    pub(super) fn neighbors(&self, v: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let range = self.offsets[v]..self.offsets[v + 1];
        self.targets[range.clone()].iter().map(|&u| u as usize).zip(self.edge_weights[range].iter().copied())
    }

    /// The number of neighbours of `v`.
    pub(super) fn degree(&self, v: usize) -> usize {
        self.offsets[v + 1] - self.offsets[v]
    }

    /// The summed vertex weight.
    pub(super) fn total_weight(&self) -> f64 {
        self.vertex_weights.iter().sum()
    }

    /// The heaviest vertex weight (0 for an empty graph).
    pub(super) fn max_vertex_weight(&self) -> f64 {
        self.vertex_weights.iter().copied().fold(0.0, f64::max)
    }

    /// The summed weight of edges whose ends are in different parts of `part`.
    pub(super) fn cut(&self, part: &[u32]) -> f64 {
        let mut cut = 0.0;
        for v in 0..self.n_vertices() {
            for (u, w) in self.neighbors(v) {
                if u > v && part[u] != part[v] {
                    cut += w;
                }
            }
        }
        cut
    }

    /// The summed vertex weight of each of the `k` parts of `part`.
    pub(super) fn part_weights(&self, part: &[u32], k: usize) -> Vec<f64> {
        let mut res = vec![0.0; k];
        for (v, &p) in part.iter().enumerate() {
            res[p as usize] += self.vertex_weights[v];
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::Graph;

    #[test]
    fn parallel_edges_merge_and_self_loops_vanish() {
        let g = Graph::from_edges(vec![1.0; 3], &[(0, 1, 2.0), (1, 0, 3.0), (2, 2, 9.0), (1, 2, 1.0)]);
        assert_eq!(g.neighbors(0).collect::<Vec<_>>(), vec![(1, 5.0)]);
        assert_eq!(g.neighbors(1).collect::<Vec<_>>(), vec![(0, 5.0), (2, 1.0)]);
        assert_eq!(g.neighbors(2).collect::<Vec<_>>(), vec![(1, 1.0)]);
        assert_eq!(g.cut(&[0, 1, 1]), 5.0);
        assert_eq!(g.part_weights(&[0, 1, 1], 2), vec![1.0, 2.0]);
    }
}
