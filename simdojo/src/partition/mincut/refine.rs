//! Refinement: greedy k-way boundary moves under a balance constraint.
//!
//! A pass visits the vertices in id order; a vertex on a partition boundary moves to the
//! neighbouring partition it is most connected to when that lowers the cut (positive
//! gain), when it keeps the cut and makes the partitions more even, or, whatever the
//! gain, when its own partition is over the weight limit. A move never pushes the
//! destination over the limit. Passes repeat until nothing moves.
//!
//! [`force_balance`] handles what boundary moves cannot: an overweight partition with no
//! boundary left over (a disconnected piece) sends vertices to the lightest partition.

use super::graph::Graph;

/// Per-vertex scratch for the connectivity of one vertex to each partition.
struct Connectivity {
    weight: Vec<f64>,
    touched: Vec<usize>,
}

impl Connectivity {
    fn new(k: usize) -> Connectivity {
        Connectivity { weight: vec![0.0; k], touched: Vec::new() }
    }

    /// Fills in the connectivity of `v`; `touched` lists the partitions seen, in
    /// neighbour order.
    fn load(&mut self, g: &Graph, part: &[u32], v: usize) {
        for (u, w) in g.neighbors(v) {
            let q = part[u] as usize;
            if self.weight[q] == 0.0 && !self.touched.contains(&q) {
                self.touched.push(q);
            }
            self.weight[q] += w;
        }
    }

    fn clear(&mut self) {
        for &q in &self.touched {
            self.weight[q] = 0.0;
        }
        self.touched.clear();
    }
}

/// Partition weights and the limit they must respect.
pub(super) struct Balance {
    /// Current weight of each partition.
    pub(super) weights: Vec<f64>,
    /// No partition may weigh more than this after a move.
    pub(super) max_weight: f64,
}

impl Balance {
    pub(super) fn new(g: &Graph, part: &[u32], k: usize, max_weight: f64) -> Balance {
        Balance { weights: g.part_weights(part, k), max_weight }
    }

    pub(super) fn is_balanced(&self) -> bool {
        self.weights.iter().all(|&w| w <= self.max_weight)
    }

    fn apply(&mut self, from: usize, to: usize, w: f64) {
        self.weights[from] -= w;
        self.weights[to] += w;
    }
}

/// Runs at most `max_passes` greedy passes over `g`; returns the number of moves.
pub(super) fn refine(g: &Graph, part: &mut [u32], balance: &mut Balance, max_passes: usize) -> usize {
    let k = balance.weights.len();
    let mut conn = Connectivity::new(k);
    let mut total_moves = 0;
    for _ in 0..max_passes {
        let mut moves = 0;
        for v in 0..g.n_vertices() {
            let p = part[v] as usize;
            if !g.neighbors(v).any(|(u, _)| part[u] as usize != p) {
                continue;
            }
            conn.load(g, part, v);
            let w_v = g.vertex_weights[v];
            let internal = conn.weight[p];
            let mut best: Option<(usize, f64)> = None;
            for &q in &conn.touched {
                if q == p || balance.weights[q] + w_v > balance.max_weight {
                    continue;
                }
                let gain = conn.weight[q] - internal;
                let better = match best {
                    None => true,
                    Some((b, b_gain)) => gain > b_gain || (gain == b_gain && balance.weights[q] < balance.weights[b]),
                };
                if better {
                    best = Some((q, gain));
                }
            }
            conn.clear();
            let Some((q, gain)) = best else { continue };
            let overweight = balance.weights[p] > balance.max_weight;
            let evens_out = balance.weights[q] + w_v < balance.weights[p];
            if gain > 0.0 || (gain == 0.0 && evens_out) || overweight {
                part[v] = q as u32;
                balance.apply(p, q, w_v);
                moves += 1;
            }
        }
        total_moves += moves;
        if moves == 0 {
            break;
        }
    }
    total_moves
}

/// Moves vertices out of overweight partitions: each to the neighbouring partition with
/// the best gain that has room, else to the lightest partition if it has room.
pub(super) fn force_balance(g: &Graph, part: &mut [u32], balance: &mut Balance) {
    let k = balance.weights.len();
    let mut conn = Connectivity::new(k);
    for v in 0..g.n_vertices() {
        let p = part[v] as usize;
        if balance.weights[p] <= balance.max_weight {
            continue;
        }
        let w_v = g.vertex_weights[v];
        conn.load(g, part, v);
        let mut best: Option<(usize, f64)> = None;
        for &q in &conn.touched {
            if q != p && balance.weights[q] + w_v <= balance.max_weight && best.is_none_or(|(_, bg)| conn.weight[q] > bg) {
                best = Some((q, conn.weight[q]));
            }
        }
        conn.clear();
        let target = best.map(|(q, _)| q).or_else(|| {
            let mut lightest = 0;
            for q in 1..k {
                if balance.weights[q] < balance.weights[lightest] {
                    lightest = q;
                }
            }
            (lightest != p && balance.weights[lightest] + w_v <= balance.max_weight).then_some(lightest)
        });
        if let Some(q) = target {
            part[v] = q as u32;
            balance.apply(p, q, w_v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{force_balance, refine, Balance};
    use crate::partition::mincut::graph::Graph;

    #[test]
    fn a_misplaced_vertex_moves_to_its_cluster() {
        // Triangles {0,1,2} and {3,4,5} joined by 2-3; vertex 2 starts on the wrong side.
        let edges = [(0, 1, 5.0), (1, 2, 5.0), (0, 2, 5.0), (3, 4, 5.0), (4, 5, 5.0), (3, 5, 5.0), (2, 3, 1.0)];
        let g = Graph::from_edges(vec![1.0; 6], &edges);
        let mut part = vec![0, 0, 1, 1, 1, 0];
        // The limit allows one vertex of slack over the average, as the partitioner does.
        let mut balance = Balance::new(&g, &part, 2, 4.0);
        refine(&g, &mut part, &mut balance, 8);
        assert_eq!(g.cut(&part), 1.0);
        assert_eq!(balance.weights, vec![3.0, 3.0]);
    }

    #[test]
    fn an_overweight_disconnected_partition_sheds_vertices() {
        let g = Graph::from_edges(vec![1.0; 4], &[]);
        let mut part = vec![0, 0, 0, 1];
        let mut balance = Balance::new(&g, &part, 2, 2.0);
        force_balance(&g, &mut part, &mut balance);
        assert_eq!(part, vec![1, 0, 0, 1]);
        assert!(balance.is_balanced());
    }
}
