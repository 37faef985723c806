//! The strategies that ignore links: round-robin, linear blocks and manual placement.

use super::validate::balance_weights;
use super::PartitionError;
use crate::topology::Topology;

/// Component `i` in partition `i % k`.
pub(super) fn round_robin(n_components: usize, k: usize) -> Vec<u32> {
    // `k` is at most the requested `u32` count, so the remainder fits.
    (0..n_components).map(|idx| (idx % k) as u32).collect()
}

/// `k` contiguous blocks of component ids, each holding about `1/k` of the weight.
///
/// Component `i` goes to the block its weight midpoint falls in, clamped so that the
/// blocks stay contiguous (never skip a partition) and every block gets a component
/// (`k` is at most the number of components).
pub(super) fn linear(t: &Topology, k: usize) -> Vec<u32> {
    let weights = balance_weights(t);
    let n_components = weights.len();
    let total: f64 = weights.iter().sum();
    let mut res = Vec::with_capacity(n_components);
    let mut before = 0.0;
    let mut prev = 0usize;
    for (idx, &w) in weights.iter().enumerate() {
        let ideal = ((before + w / 2.0) * k as f64 / total).floor();
        // The float is finite and >= 0 (weights are validated); `as` saturates.
        let ideal = ideal as usize;
        let hi = if idx == 0 { 0 } else { (prev + 1).min(k - 1) };
        // Enough components must remain for the partitions not yet started.
        let lo = prev.max((k + idx).saturating_sub(n_components));
        let p = ideal.clamp(lo, hi);
        res.push(p as u32);
        prev = p;
        before += w;
    }
    res
}

/// The `partition` each component declares; all must have one, below `n`.
pub(super) fn manual(t: &Topology, n: u32) -> Result<Vec<u32>, PartitionError> {
    t.components
        .iter()
        .map(|c| match c.partition {
            None => Err(PartitionError::MissingManualPartition { path: c.path.clone() }),
            Some(p) if p >= n => {
                Err(PartitionError::ManualPartitionOutOfRange { path: c.path.clone(), partition: p, n_partitions: n })
            }
            Some(p) => Ok(p),
        })
        .collect()
}
