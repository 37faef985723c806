//! The `subtree` strategy: whole subtrees of the path hierarchy stay in one partition.
//!
//! A component's subtree key comes from its path:
//! - without a prefix, the path up to and including its first indexed level
//!   (`gpu.xcd[3].se[1].cu[7]` -> `gpu.xcd[3]`); a path without an index is its own key;
//! - with prefix `P`, the prefix plus the next path element: `P[i]` when an index follows
//!   (`gpu.xcd` -> `gpu.xcd[3]`), or `P.name[i]` / `P.name` when a field follows
//!   (`gpu` -> `gpu.xcd[3]`). Paths outside `P` are each their own key.
//!
//! A subtree heavier than one partition's share of the total weight (total / k) and made
//! of more than one component is split into its children (the key one path element
//! deeper: `gpu.xcd[0]` -> `gpu.xcd[0].l2`, `gpu.xcd[0].cu[7]`), again until no subtree
//! both can be split and is heavier than the share. So a GPU of one die (the MI210's one
//! GCD) is split across workers by its compute units, while eight XCDs on two workers
//! stay whole. A split's children keep the order of their first component.
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

/// A subtree of the path hierarchy: its key, its components (ascending ids) and their
/// total weight.
struct Group<'a> {
    key: &'a str,
    members: Vec<usize>,
    weight: f64,
}

/// Groups `members` (ascending) by `key_of`, each group in the order of its first member.
fn group_by<'a>(members: impl Iterator<Item = usize>, weights: &[f64], key_of: impl Fn(usize) -> &'a str) -> Vec<Group<'a>> {
    let mut index_of_key: BTreeMap<&str, usize> = BTreeMap::new();
    let mut groups: Vec<Group<'a>> = Vec::new();
    for c in members {
        let key = key_of(c);
        let next = groups.len();
        let g = *index_of_key.entry(key).or_insert(next);
        if g == groups.len() {
            groups.push(Group { key, members: Vec::new(), weight: 0.0 });
        }
        groups[g].members.push(c);
        groups[g].weight += weights[c];
    }
    groups
}

/// Splits every group heavier than `share` into its children, until none that can be
/// split is heavier; the result is ordered by each group's first component.
fn split_heavy<'a>(t: &'a Topology, mut groups: Vec<Group<'a>>, weights: &[f64], share: f64) -> Vec<Group<'a>> {
    loop {
        let mut changed = false;
        let mut next = Vec::with_capacity(groups.len());
        for g in groups {
            if g.weight <= share || g.members.len() < 2 {
                next.push(g);
                continue;
            }
            let key = g.key;
            let children = group_by(g.members.iter().copied(), weights, |c| {
                let path = t.components[c].path.as_str();
                key_under(path, key).unwrap_or(path)
            });
            if children.len() < 2 {
                next.push(g);
                continue;
            }
            changed = true;
            next.extend(children);
        }
        next.sort_by_key(|g| g.members[0]);
        groups = next;
        if !changed {
            return groups;
        }
    }
}

/// Assigns whole subtrees to `k` partitions, balancing their weight; subtrees heavier
/// than a partition's share are split into their children first.
pub(super) fn partition(t: &Topology, prefix: &str, k: usize) -> Result<Vec<u32>, PartitionError> {
    let weights = balance_weights(t);
    let mut any_under_prefix = prefix.is_empty();
    let key_of = |c: usize| {
        let path = t.components[c].path.as_str();
        if prefix.is_empty() {
            first_indexed_level(path)
        } else {
            key_under(path, prefix).unwrap_or(path)
        }
    };
    if !prefix.is_empty() {
        any_under_prefix = t.components.iter().any(|c| key_under(&c.path, prefix).is_some());
    }
    if !any_under_prefix {
        return Err(PartitionError::SubtreePrefixMatchesNothing { prefix: prefix.to_string() });
    }
    let groups = group_by(0..t.components.len(), &weights, key_of);
    let total: f64 = weights.iter().sum();
    let groups = split_heavy(t, groups, &weights, total / k as f64);

    let mut order: Vec<usize> = (0..groups.len()).collect();
    // Stable sort: equal weights keep their order of first appearance.
    order.sort_by(|&a, &b| groups[b].weight.total_cmp(&groups[a].weight));
    // The lightest partition first; among equally light ones (zero-weight subtrees), the
    // one with fewest subtrees, then the lowest index.
    let mut partitions: BinaryHeap<Reverse<Bin>> =
        (0..k).map(|index| Reverse(Bin { load: 0.0, n_groups: 0, index })).collect();
    let mut assignment = vec![0u32; t.components.len()];
    for g in order {
        // The heap holds exactly `k >= 1` bins: each pop is followed by a push.
        let Reverse(mut bin) = partitions.pop().expect("the heap always holds k >= 1 partitions");
        bin.load += groups[g].weight;
        bin.n_groups += 1;
        for &c in &groups[g].members {
            assignment[c] = bin.index as u32;
        }
        partitions.push(Reverse(bin));
    }
    Ok(assignment)
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
