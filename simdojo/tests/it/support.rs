//! Helpers shared by the integration tests.

use simdojo::engine::SimConfig;
use simdojo::ids::PartitionId;

/// A configuration that keeps `assignment`'s partitions on their threads for the
/// whole run, so the parallel machinery is what the test exercises.
pub fn fixed(assignment: Option<Vec<PartitionId>>) -> SimConfig {
    SimConfig { assignment, fixed_partitions: true, ..SimConfig::default() }
}

/// Assignments of `n` components to partitions, named, covering the shapes the
/// engine must be indifferent to.
pub fn assignments(n: usize) -> Vec<(&'static str, Option<Vec<PartitionId>>)> {
    let mut v: Vec<(&'static str, Option<Vec<PartitionId>>)> = vec![("single", None)];
    let linear = |k: usize| (0..n).map(|i| PartitionId((i * k / n) as u32)).collect::<Vec<_>>();
    v.push(("linear-2", Some(linear(2))));
    v.push(("round-robin-3", Some((0..n).map(|i| PartitionId((i % 3) as u32)).collect())));
    // A scrambled 4-way assignment.
    v.push((
        "scrambled-4",
        Some((0..n).map(|i| PartitionId(((i as u64).wrapping_mul(2654435761) >> 7) as u32 % 4)).collect()),
    ));
    v
}
