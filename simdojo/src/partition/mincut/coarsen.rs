//! Coarsening: collapse matched vertex pairs into one until the graph is small.
//!
//! Matching is heavy-edge matching (each vertex, visited by increasing degree, pairs
//! with its unmatched neighbour across the heaviest edge), so the heaviest edges (the
//! lowest-latency links) disappear inside coarse vertices and are never cut later.
//! When that leaves many vertices unmatched (stars such as fabric hubs, isolated
//! components) two more passes pair vertices that share their heaviest neighbour and
//! pair isolated vertices, so coarsening keeps making progress.
//!
//! A vertex whose remaining candidates are all much lighter than its heaviest edge stays
//! unmatched for this level: merging it across a light (high-latency) edge would glue
//! unrelated regions together and spoil every level above.
//!
//! No pair may exceed a maximum vertex weight, so coarse vertices stay small enough to
//! balance.

use super::graph::{Graph, NONE};

/// If heavy-edge matching leaves more than this fraction of vertices, the extra passes
/// run.
const EXTRA_PASS_THRESHOLD: f64 = 0.75;

/// Heavy-edge matching takes an edge only if it weighs at least `1 / LIGHT_EDGE_RATIO`
/// of the vertex's heaviest edge.
const LIGHT_EDGE_RATIO: f64 = 4.0;

/// One coarsening step: the coarse graph and, per fine vertex, its coarse vertex.
pub(super) struct Coarsened {
    pub(super) graph: Graph,
    pub(super) coarse_of: Vec<u32>,
}

/// Pairs `u` and `v` (both unmatched).
fn pair(mate: &mut [u32], u: usize, v: usize) {
    mate[u] = v as u32;
    mate[v] = u as u32;
}

/// Computes a matching of `g`: `mate[v]` is `v`'s partner, or `v` itself.
fn matching(g: &Graph, max_weight: f64) -> Vec<u32> {
    let n = g.n_vertices();
    let vw = &g.vertex_weights;
    let mut mate = vec![NONE; n];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&v| g.degree(v));

    for &v in &order {
        if mate[v] != NONE {
            continue;
        }
        let mut best: Option<(usize, f64)> = None;
        let mut heaviest = 0.0f64;
        for (u, w) in g.neighbors(v) {
            heaviest = heaviest.max(w);
            if mate[u] == NONE && vw[v] + vw[u] <= max_weight && best.is_none_or(|(_, bw)| w > bw) {
                best = Some((u, w));
            }
        }
        match best {
            // A much lighter edge than `v`'s heaviest (a long-latency link where the
            // short ones are taken) would merge unrelated regions; wait a level instead.
            Some((u, w)) if w * LIGHT_EDGE_RATIO >= heaviest => pair(&mut mate, u, v),
            _ => {}
        }
    }

    let unmatched = mate.iter().filter(|&&m| m == NONE).count();
    if unmatched as f64 > EXTRA_PASS_THRESHOLD * n as f64 {
        // Pair unmatched vertices that hang off the same heaviest neighbour.
        let mut waiting = vec![NONE; n];
        for &v in &order {
            if mate[v] != NONE {
                continue;
            }
            let mut hub: Option<(usize, f64)> = None;
            for (u, w) in g.neighbors(v) {
                if hub.is_none_or(|(_, hw)| w > hw) {
                    hub = Some((u, w));
                }
            }
            let Some((hub, _)) = hub else { continue };
            let other = waiting[hub];
            if other != NONE && vw[v] + vw[other as usize] <= max_weight {
                pair(&mut mate, other as usize, v);
                waiting[hub] = NONE;
            } else {
                waiting[hub] = v as u32;
            }
        }
        // Pair isolated vertices with each other; nothing can be cut between them.
        let mut waiting_isolated: Option<usize> = None;
        for v in 0..n {
            if mate[v] != NONE || g.degree(v) != 0 {
                continue;
            }
            match waiting_isolated {
                Some(other) if vw[v] + vw[other] <= max_weight => {
                    pair(&mut mate, other, v);
                    waiting_isolated = None;
                }
                _ => waiting_isolated = Some(v),
            }
        }
    }

    for (v, m) in mate.iter_mut().enumerate() {
        if *m == NONE {
            *m = v as u32;
        }
    }
    mate
}

/// Coarsens `g` one level; no coarse vertex weighs more than `max_weight` unless a
/// single fine vertex already does.
pub(super) fn coarsen(g: &Graph, max_weight: f64) -> Coarsened {
    let n = g.n_vertices();
    let mate = matching(g, max_weight);

    // Coarse vertices are numbered in order of their lowest fine vertex.
    let mut coarse_of = vec![NONE; n];
    let mut members: Vec<(u32, u32)> = Vec::new();
    for v in 0..n {
        if coarse_of[v] != NONE {
            continue;
        }
        let c = members.len() as u32;
        let m = mate[v] as usize;
        coarse_of[v] = c;
        coarse_of[m] = c;
        members.push((v as u32, m as u32));
    }

    let n_coarse = members.len();
    let mut offsets = Vec::with_capacity(n_coarse + 1);
    let mut targets: Vec<u32> = Vec::with_capacity(g.targets.len() / 2);
    let mut edge_weights: Vec<f64> = Vec::with_capacity(g.targets.len() / 2);
    let mut vertex_weights = Vec::with_capacity(n_coarse);
    // Position in `targets` of coarse neighbour `c` of the vertex being built, or NONE.
    let mut slot = vec![NONE as usize; n_coarse];
    for (c, &(a, b)) in members.iter().enumerate() {
        let start = targets.len();
        offsets.push(start);
        let (a, b) = (a as usize, b as usize);
        let mut weight = g.vertex_weights[a];
        let fine: &[usize] = if a == b {
            &[a]
        } else {
            weight += g.vertex_weights[b];
            &[a, b]
        };
        vertex_weights.push(weight);
        for &v in fine {
            for (u, w) in g.neighbors(v) {
                let cu = coarse_of[u] as usize;
                if cu == c {
                    continue;
                }
                if slot[cu] == NONE as usize {
                    slot[cu] = targets.len();
                    targets.push(cu as u32);
                    edge_weights.push(w);
                } else {
                    edge_weights[slot[cu]] += w;
                }
            }
        }
        for &cu in &targets[start..] {
            slot[cu as usize] = NONE as usize;
        }
    }
    offsets.push(targets.len());
    Coarsened { graph: Graph { offsets, targets, edge_weights, vertex_weights }, coarse_of }
}

#[cfg(test)]
mod tests {
    use super::coarsen;
    use crate::partition::mincut::graph::Graph;

    #[test]
    fn heavy_edges_collapse_first() {
        // A path 0 -10- 1 -1- 2 -10- 3: the two heavy edges are matched.
        let g = Graph::from_edges(vec![1.0; 4], &[(0, 1, 10.0), (1, 2, 1.0), (2, 3, 10.0)]);
        let res = coarsen(&g, 10.0);
        assert_eq!(res.coarse_of, vec![0, 0, 1, 1]);
        assert_eq!(res.graph.vertex_weights, vec![2.0, 2.0]);
        assert_eq!(res.graph.neighbors(0).collect::<Vec<_>>(), vec![(1, 1.0)]);
    }

    #[test]
    fn light_edges_do_not_merge_regions() {
        // 0 -100- 1 -100- 2 -1- 3 -100- 4 -100- 5: after 0-1 and 4-5 pair up, 2 and 3
        // could only pair across the light edge, which would glue the two sides.
        let edges = [(0, 1, 100.0), (1, 2, 100.0), (2, 3, 1.0), (3, 4, 100.0), (4, 5, 100.0)];
        let g = Graph::from_edges(vec![1.0; 6], &edges);
        let res = coarsen(&g, 10.0);
        assert_eq!(res.coarse_of, vec![0, 0, 1, 2, 3, 3]);
    }

    #[test]
    fn stars_and_isolated_vertices_still_shrink() {
        // A hub (0, weight 0) with 8 leaves, plus 4 isolated vertices.
        let edges: Vec<(u32, u32, f64)> = (1..=8).map(|leaf| (0, leaf, 1.0)).collect();
        let mut weights = vec![1.0; 13];
        weights[0] = 0.0;
        let g = Graph::from_edges(weights, &edges);
        let res = coarsen(&g, 4.0);
        assert!(res.graph.n_vertices() <= 7, "{} coarse vertices", res.graph.n_vertices());
        assert_eq!(res.graph.total_weight(), 12.0);
    }

    #[test]
    fn pairs_respect_the_weight_limit() {
        let g = Graph::from_edges(vec![3.0, 3.0], &[(0, 1, 1.0)]);
        assert_eq!(coarsen(&g, 5.0).graph.n_vertices(), 2);
        assert_eq!(coarsen(&g, 6.0).graph.n_vertices(), 1);
    }
}
