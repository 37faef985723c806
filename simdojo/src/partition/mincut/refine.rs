//! Refinement: greedy k-way boundary moves under a balance constraint.
//!
//! A pass visits the vertices in id order; a vertex on a partition boundary moves to the
//! neighbouring partition it is most connected to when that lowers the cut (positive
//! gain), when it keeps the cut and makes the partitions more even, or, whatever the
//! gain, when its own partition is over the weight limit. A move never pushes the
//! destination over the limit. Passes repeat until nothing moves.
//!
//! [`relieve`] handles the commonest way greedy moves get stuck: a vertex wants to join a
//! partition that is full. It makes the move anyway if another vertex can leave that
//! partition for one with room at a smaller loss than the move gains (a two-move chain,
//! such as a loosely attached vertex making room for a tightly attached one).
//!
//! [`force_balance`] handles what boundary moves cannot: an overweight partition with no
//! boundary left over (a disconnected piece) sends vertices to the lightest partition.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::graph::Graph;

/// Per-vertex scratch for the connectivity of one vertex to each partition.
struct Connectivity {
    weight: Vec<f64>,
    is_touched: Vec<bool>,
    touched: Vec<usize>,
}

impl Connectivity {
    fn new(k: usize) -> Connectivity {
        Connectivity { weight: vec![0.0; k], is_touched: vec![false; k], touched: Vec::new() }
    }

    /// Fills in the connectivity of `v`; `touched` lists the partitions seen, in
    /// neighbour order.
    fn load(&mut self, g: &Graph, part: &[u32], v: usize) {
        for (u, w) in g.neighbors(v) {
            let q = part[u] as usize;
            if !self.is_touched[q] {
                self.is_touched[q] = true;
                self.touched.push(q);
            }
            self.weight[q] += w;
        }
    }

    fn clear(&mut self) {
        for &q in &self.touched {
            self.weight[q] = 0.0;
            self.is_touched[q] = false;
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

/// How many candidates of a full partition [`relieve`] tries for one blocked move.
const RELIEVE_TRIES: usize = 8;

/// The two lightest partitions (lowest index first among equals), so that "the lightest
/// partition other than `p`" takes constant time.
struct TwoLightest {
    first: usize,
    second: Option<usize>,
}

impl TwoLightest {
    fn of(weights: &[f64]) -> TwoLightest {
        let mut first = 0;
        let mut second: Option<usize> = None;
        for q in 1..weights.len() {
            if weights[q] < weights[first] {
                second = Some(first);
                first = q;
            } else if second.is_none_or(|s| weights[q] < weights[s]) {
                second = Some(q);
            }
        }
        TwoLightest { first, second }
    }

    fn other_than(&self, p: usize) -> Option<usize> {
        if self.first == p {
            self.second
        } else {
            Some(self.first)
        }
    }
}

/// The best move of `v` out of its partition into one with room under `max_weight`: the
/// neighbouring partition with the best gain, or `fallback` (which need not be a
/// neighbour) when that is better. Returns `(target, gain)`.
fn best_move_with_room(
    g: &Graph,
    part: &[u32],
    balance: &Balance,
    max_weight: f64,
    fallback: Option<usize>,
    conn: &mut Connectivity,
    v: usize,
) -> Option<(usize, f64)> {
    let p = part[v] as usize;
    let w_v = g.vertex_weights[v];
    conn.load(g, part, v);
    let internal = conn.weight[p];
    let mut best: Option<(usize, f64)> = None;
    for &q in &conn.touched {
        if q != p && balance.weights[q] + w_v <= max_weight {
            let gain = conn.weight[q] - internal;
            if best.is_none_or(|(_, b_gain)| gain > b_gain) {
                best = Some((q, gain));
            }
        }
    }
    if let Some(other) = fallback.filter(|&r| r != p && balance.weights[r] + w_v <= max_weight) {
        let gain = conn.weight[other] - internal;
        if best.is_none_or(|(_, b_gain)| gain > b_gain) {
            best = Some((other, gain));
        }
    }
    conn.clear();
    best
}

/// One pass of two-move chains: a vertex with a positive-gain move into a full partition
/// moves when a vertex of that partition can leave for one with room and the two moves
/// together lower the cut. Every vertex moves at most once. Returns the number of moves.
pub(super) fn relieve(g: &Graph, part: &mut [u32], balance: &mut Balance) -> usize {
    let n = g.n_vertices();
    let k = balance.weights.len();
    let mut conn = Connectivity::new(k);
    // Per partition, its vertices by the gain of their best move out, best first. The
    // gains ignore the limit: room appears where a blocked move comes from.
    let mut candidates: Vec<Vec<(f64, usize)>> = vec![Vec::new(); k];
    let lightest = TwoLightest::of(&balance.weights);
    for v in 0..n {
        let fallback = lightest.other_than(part[v] as usize);
        if let Some((_, gain)) = best_move_with_room(g, part, balance, f64::INFINITY, fallback, &mut conn, v) {
            candidates[part[v] as usize].push((gain, v));
        }
    }
    for list in &mut candidates {
        list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    let mut cursor = vec![0usize; k];
    let mut locked = vec![false; n];
    let mut moves = 0;
    for v in 0..n {
        if locked[v] {
            continue;
        }
        let p = part[v] as usize;
        let w_v = g.vertex_weights[v];
        // The best positive-gain move of `v` that only the balance limit blocks.
        conn.load(g, part, v);
        let internal = conn.weight[p];
        let mut blocked: Option<(usize, f64)> = None;
        for &q in &conn.touched {
            let gain = conn.weight[q] - internal;
            if q != p
                && gain > 0.0
                && balance.weights[q] + w_v > balance.max_weight
                && blocked.is_none_or(|(_, b)| gain > b)
            {
                blocked = Some((q, gain));
            }
        }
        conn.clear();
        let Some((q, gain_v)) = blocked else { continue };

        part[v] = q as u32;
        balance.apply(p, q, w_v);
        let list = &candidates[q];
        while cursor[q] < list.len() && (locked[list[cursor[q]].1] || part[list[cursor[q]].1] as usize != q) {
            cursor[q] += 1;
        }
        let mut done = false;
        let mut tries = 0;
        for &(_, u) in &list[cursor[q]..] {
            if tries == RELIEVE_TRIES {
                break;
            }
            if u == v || locked[u] || part[u] as usize != q {
                continue;
            }
            tries += 1;
            let w_u = g.vertex_weights[u];
            if balance.weights[q] - w_u > balance.max_weight {
                continue;
            }
            // `u` may go to a neighbouring partition or to the one `v` just left.
            let Some((r, gain_u)) = best_move_with_room(g, part, balance, balance.max_weight, Some(p), &mut conn, u)
            else {
                continue;
            };
            if gain_v + gain_u > 0.0 {
                part[u] = r as u32;
                balance.apply(q, r, w_u);
                locked[u] = true;
                locked[v] = true;
                moves += 2;
                done = true;
                break;
            }
        }
        if !done {
            part[v] = p as u32;
            balance.apply(q, p, w_v);
        }
    }
    moves
}

/// Moves vertices out of overweight partitions: each to the neighbouring partition with
/// the best gain that has room, else to the lightest partition if it has room.
pub(super) fn force_balance(g: &Graph, part: &mut [u32], balance: &mut Balance) {
    let k = balance.weights.len();
    let mut conn = Connectivity::new(k);
    let mut lightest = LightestQueue::new(&balance.weights);
    for v in 0..g.n_vertices() {
        let p = part[v] as usize;
        if balance.weights[p] <= balance.max_weight {
            continue;
        }
        let w_v = g.vertex_weights[v];
        conn.load(g, part, v);
        let mut best: Option<(usize, f64)> = None;
        for &q in &conn.touched {
            if q != p
                && balance.weights[q] + w_v <= balance.max_weight
                && best.is_none_or(|(_, bg)| conn.weight[q] > bg)
            {
                best = Some((q, conn.weight[q]));
            }
        }
        conn.clear();
        let target = best.map(|(q, _)| q).or_else(|| {
            let q = lightest.peek(&balance.weights);
            (q != p && balance.weights[q] + w_v <= balance.max_weight).then_some(q)
        });
        if let Some(q) = target {
            part[v] = q as u32;
            balance.apply(p, q, w_v);
            lightest.update(p, balance.weights[p]);
            lightest.update(q, balance.weights[q]);
        }
    }
}

/// A partition load ordered for a min-heap: lighter first, then lower index.
#[derive(Clone, Copy, Debug)]
struct Load {
    weight: f64,
    partition: usize,
}

impl PartialEq for Load {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Load {}

impl PartialOrd for Load {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Load {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed, so that `BinaryHeap` (a max-heap) yields the lightest.
        other.weight.total_cmp(&self.weight).then_with(|| other.partition.cmp(&self.partition))
    }
}

/// The lightest partition under changing weights, in logarithmic time: a heap whose
/// stale entries (weights that have changed since) are dropped when they surface.
struct LightestQueue {
    heap: BinaryHeap<Load>,
}

impl LightestQueue {
    fn new(weights: &[f64]) -> LightestQueue {
        LightestQueue {
            heap: weights.iter().enumerate().map(|(partition, &weight)| Load { weight, partition }).collect(),
        }
    }

    fn update(&mut self, partition: usize, weight: f64) {
        self.heap.push(Load { weight, partition });
    }

    /// The lightest partition; `weights` are the current weights.
    fn peek(&mut self, weights: &[f64]) -> usize {
        while let Some(top) = self.heap.peek() {
            if top.weight == weights[top.partition] {
                return top.partition;
            }
            self.heap.pop();
        }
        // Every partition's current weight was pushed when it last changed, so the heap
        // never runs dry; fall back to partition 0 rather than fail.
        0
    }
}

#[cfg(test)]
mod tests {
    use super::{force_balance, refine, relieve, Balance};
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
    fn a_loose_vertex_makes_room_for_a_tight_one() {
        // Partition 0 = {0, 1, 2} is full; 3 (in partition 1) is tied to 0 by 10, and 2
        // hangs off 1 by 1. Moving 3 in and 2 out gains 10 - 1.
        let edges = [(0, 1, 5.0), (1, 2, 1.0), (0, 3, 10.0), (3, 4, 2.0), (4, 5, 5.0)];
        let g = Graph::from_edges(vec![1.0; 6], &edges);
        let mut part = vec![0, 0, 0, 1, 1, 1];
        let mut balance = Balance::new(&g, &part, 2, 3.0);
        assert_eq!(refine(&g, &mut part, &mut balance, 8), 0);
        assert_eq!(relieve(&g, &mut part, &mut balance), 2);
        assert_eq!(part, vec![0, 0, 1, 0, 1, 1]);
        assert_eq!(g.cut(&part), 3.0);
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
