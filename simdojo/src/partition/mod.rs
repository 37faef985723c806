//! Partitioning: which worker thread runs which component.
//!
//! The engine runs each partition on one worker thread and synchronizes partitions
//! conservatively. The lookahead between two partitions is the smallest latency of any
//! link or fabric crossing them, so a good plan keeps low-latency links inside
//! partitions and balances component weight across them.
//!
//! [`plan`] turns a [`Topology`], a [`Strategy`] and a partition count into a [`Plan`];
//! [`report`] describes a plan (balance, cut, lookahead) and [`lookahead_matrix`] gives
//! the engine the per-pair lookahead.
//!
//! ```
//! use simdojo::params::Params;
//! use simdojo::partition::{self, Strategy};
//! use simdojo::time::Tick;
//! use simdojo::topology::{LinkKind, Topology};
//!
//! // a[0] -1ns- a[1] ==100ns== b[0] -1ns- b[1]
//! let mut t = Topology::new();
//! let ids: Vec<_> = ["a[0]", "b[0]", "a[1]", "b[1]"].iter().map(|p| t.add_component(*p, "node", Params::new())).collect();
//! t.add_link((ids[0], "out"), (ids[2], "in"), Tick::ns(1), LinkKind::Paired);
//! t.add_link((ids[2], "out"), (ids[1], "in"), Tick::ns(100), LinkKind::Paired);
//! t.add_link((ids[1], "out"), (ids[3], "in"), Tick::ns(1), LinkKind::Paired);
//!
//! let strategy: Strategy = "mincut".parse()?;
//! let plan = partition::plan(&t, &strategy, 2)?;
//! assert_eq!(plan.partition_of(ids[0]), plan.partition_of(ids[2]));
//! assert_ne!(plan.partition_of(ids[0]), plan.partition_of(ids[1]));
//! let report = partition::report(&t, &plan);
//! assert_eq!(report.lookahead, Some(Tick::ns(100)));
//! # Ok::<(), partition::PartitionError>(())
//! ```
//!
//! **Architecture Invariant:** planning is deterministic. The same topology, strategy
//! and count always give the same plan: no hash-map iteration order and no unseeded
//! randomness is involved anywhere in this module.
//!
//! **Architecture Invariant:** a plan has no empty partition. When fewer partitions can
//! be filled than were asked for (more partitions than components, fewer subtrees than
//! partitions, gaps in manual ids), partition ids are renumbered densely, keeping their
//! order, and [`Plan::n_partitions`] is the count actually used.

mod error;
pub mod mincut;
mod report;
mod simple;
mod strategy;
mod subtree;
mod validate;

use serde::{Deserialize, Serialize};

pub use error::PartitionError;
pub use report::{lookahead_matrix, PartitionLoad, PlanReport};
pub use strategy::Strategy;

use crate::ids::{ComponentId, PartitionId};
use crate::topology::Topology;

/// The result of partitioning: the partition of every component.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The partition of each component, indexed by [`ComponentId`].
    pub assignment: Vec<PartitionId>,
    /// The number of partitions; every one in `0..n_partitions` holds a component.
    pub n_partitions: u32,
}

impl Plan {
    /// The partition of component `id`, or `None` if the plan has no such component.
    pub fn partition_of(&self, id: ComponentId) -> Option<PartitionId> {
        self.assignment.get(id.index()).copied()
    }

    /// The components of partition `p`, in id order.
    pub fn members(&self, p: PartitionId) -> impl Iterator<Item = ComponentId> + '_ {
        self.assignment.iter().enumerate().filter(move |&(_, &q)| q == p).map(|(idx, _)| ComponentId::from_index(idx))
    }

    /// Makes a plan from raw partition numbers, renumbering them densely (in their
    /// order) so that no partition is empty.
    fn from_raw(raw: &[u32]) -> Plan {
        let max = raw.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut used = vec![false; max];
        for &p in raw {
            used[p as usize] = true;
        }
        let mut renumber = vec![0u32; max];
        let mut n_partitions = 0u32;
        for (old, &is_used) in used.iter().enumerate() {
            if is_used {
                renumber[old] = n_partitions;
                n_partitions += 1;
            }
        }
        let assignment = raw.iter().map(|&p| PartitionId(renumber[p as usize])).collect();
        Plan { assignment, n_partitions }
    }
}

/// Partitions `t` into at most `n` partitions with `strategy`.
///
/// `n` larger than the number of components is clamped to it (except for
/// [`Strategy::Manual`], where `n` bounds the declared ids). Fails when `n` is 0, the
/// topology has no components, a weight is negative or not finite, a link or fabric
/// names a missing component, or the strategy's own needs are not met (see
/// [`PartitionError`]).
pub fn plan(t: &Topology, strategy: &Strategy, n: u32) -> Result<Plan, PartitionError> {
    let k = checked_count(t, n)?;
    let n_components = t.components.len();
    let raw = match strategy {
        Strategy::Single => vec![0; n_components],
        Strategy::RoundRobin => simple::round_robin(n_components, k),
        Strategy::Linear => simple::linear(t, k),
        Strategy::Subtree { prefix } => subtree::partition(t, prefix, k)?,
        Strategy::Manual => simple::manual(t, n)?,
        Strategy::MinCut => mincut::partition(t, k, &mincut::MinCutConfig::default()),
    };
    Ok(Plan::from_raw(&raw))
}

/// Validates `t` and `n`; returns `n` clamped to the component count (at least 1).
fn checked_count(t: &Topology, n: u32) -> Result<usize, PartitionError> {
    if n == 0 {
        return Err(PartitionError::NoPartitions);
    }
    validate::check_topology(t)?;
    let n_components = t.components.len();
    Ok(usize::try_from(n).map_or(n_components, |n| n.min(n_components)))
}

/// Describes `plan` for `t`: load per partition, cut links and fabrics, lookahead.
///
/// Meant for a plan made by [`plan`] for the same topology. Components beyond the
/// plan's assignment, and partition ids not below [`Plan::n_partitions`], are left out
/// rather than trusted.
pub fn report(t: &Topology, plan: &Plan) -> PlanReport {
    report::build(t, plan)
}
