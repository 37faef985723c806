//! The `subtree` strategy: whole subtrees of the path hierarchy stay in one partition.
//!
//! A component's subtree key comes from its path:
//! - without a prefix, the path up to and including its first indexed level
//!   (`gpu.xcd[3].se[1].cu[7]` -> `gpu.xcd[3]`); a path without an index is its own key;
//! - with prefix `P`, the prefix plus the next path element: `P[i]` when an index follows
//!   (`gpu.xcd` -> `gpu.xcd[3]`), or `P.name[i]` / `P.name` when a field follows
//!   (`gpu` -> `gpu.xcd[3]`). Paths outside `P` are each their own key.
//!
//! Subtrees are then placed largest weight first, each on the currently lightest
//! partition (ties: the subtree that appears first; the partition with fewest subtrees, then the
//! lowest index).

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};

use super::validate::balance_weights;
use super::PartitionError;
use crate::topology::Topology;

/// The length of the path up to and including its first `[...]`, or the whole path.
fn first_indexed_level(path: &str) -> &str {
    match path.find('[') {
        Some(open) => match path[open..].find(']') {
            Some(close) => &path[..open + close + 1],
            None => path,
        },
        None => path,
    }
}

/// The key of `path` under `prefix`, or `None` if the path is not strictly under it.
fn key_under<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(prefix)?;
    if rest.starts_with('[') {
        let close = rest.find(']')?;
        Some(&path[..prefix.len() + close + 1])
    } else if let Some(after_dot) = rest.strip_prefix('.') {
        // The next element: a field name, with its index if it has one.
        let element_end = after_dot.find('.').unwrap_or(after_dot.len());
        let element = &after_dot[..element_end];
        let element = match element.find('[') {
            Some(open) => match element[open..].find(']') {
                Some(close) => &element[..open + close + 1],
                None => element,
            },
            None => element,
        };
        Some(&path[..prefix.len() + 1 + element.len()])
    } else {
        None
    }
}

/// A partition being filled, ordered by load, then subtree count, then index.
#[derive(Clone, Copy, Debug)]
struct Bin {
    load: f64,
    n_groups: usize,
    index: usize,
}

impl PartialEq for Bin {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Bin {}

impl PartialOrd for Bin {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Bin {
    fn cmp(&self, other: &Self) -> Ordering {
        self.load.total_cmp(&other.load).then(self.n_groups.cmp(&other.n_groups)).then(self.index.cmp(&other.index))
    }
}

/// Assigns whole subtrees to `k` partitions, balancing their weight.
pub(super) fn partition(t: &Topology, prefix: &str, k: usize) -> Result<Vec<u32>, PartitionError> {
    let weights = balance_weights(t);
    // Group index per component; groups are numbered in order of first appearance.
    let mut group_of_key: BTreeMap<&str, usize> = BTreeMap::new();
    let mut group_of_component = Vec::with_capacity(t.components.len());
    let mut group_weight: Vec<f64> = Vec::new();
    let mut any_under_prefix = prefix.is_empty();
    for (c, &w) in t.components.iter().zip(&weights) {
        let key = if prefix.is_empty() {
            first_indexed_level(&c.path)
        } else {
            match key_under(&c.path, prefix) {
                Some(key) => {
                    any_under_prefix = true;
                    key
                }
                None => c.path.as_str(),
            }
        };
        let next = group_of_key.len();
        let group = *group_of_key.entry(key).or_insert(next);
        if group == group_weight.len() {
            group_weight.push(0.0);
        }
        group_weight[group] += w;
        group_of_component.push(group);
    }
    if !any_under_prefix {
        return Err(PartitionError::SubtreePrefixMatchesNothing { prefix: prefix.to_string() });
    }

    let mut order: Vec<usize> = (0..group_weight.len()).collect();
    // Stable sort: equal weights keep their order of first appearance.
    order.sort_by(|&a, &b| group_weight[b].total_cmp(&group_weight[a]));
    // The lightest partition first; among equally light ones (zero-weight subtrees), the
    // one with fewest subtrees, then the lowest index.
    let mut partitions: BinaryHeap<Reverse<Bin>> =
        (0..k).map(|index| Reverse(Bin { load: 0.0, n_groups: 0, index })).collect();
    let mut partition_of_group = vec![0u32; group_weight.len()];
    for group in order {
        // The heap holds exactly `k >= 1` bins: each pop is followed by a push.
        let Reverse(mut bin) = partitions.pop().expect("the heap always holds k >= 1 partitions");
        bin.load += group_weight[group];
        bin.n_groups += 1;
        partition_of_group[group] = bin.index as u32;
        partitions.push(Reverse(bin));
    }
    Ok(group_of_component.iter().map(|&g| partition_of_group[g]).collect())
}

#[cfg(test)]
mod tests {
    use super::{first_indexed_level, key_under};

    #[test]
    fn keys_follow_the_path_hierarchy() {
        assert_eq!(first_indexed_level("gpu.xcd[3].se[1].cu[7]"), "gpu.xcd[3]");
        assert_eq!(first_indexed_level("host.cpu"), "host.cpu");
        assert_eq!(key_under("gpu.xcd[3].se[1].cu[7]", "gpu.xcd"), Some("gpu.xcd[3]"));
        assert_eq!(key_under("gpu.xcd[3].se[1].cu[7]", "gpu.xcd[3].se"), Some("gpu.xcd[3].se[1]"));
        assert_eq!(key_under("gpu.xcd[3].se[1].cu[7]", "gpu"), Some("gpu.xcd[3]"));
        assert_eq!(key_under("gpu.iod.hub", "gpu"), Some("gpu.iod"));
        assert_eq!(key_under("gpu.xcdx[1]", "gpu.xcd"), None);
        assert_eq!(key_under("gpu.xcd", "gpu.xcd"), None);
        assert_eq!(key_under("host", "gpu"), None);
    }
}
