//! Choosing a partition plan from the command line and the topology's settings.

use anyhow::{anyhow, Context as _};
use simdojo::partition::{self, Plan, Strategy};
use simdojo::topology::Topology;

/// The plan for `--workers` / `--partitioner` (falling back to the topology's
/// `[engine]` settings, then to one worker and `mincut`).
pub fn choose(t: &Topology, workers: Option<u32>, partitioner: Option<&str>) -> anyhow::Result<Plan> {
    let n = workers.or(t.engine.workers).unwrap_or(1);
    let name = partitioner.or(t.engine.partitioner.as_deref()).unwrap_or("mincut");
    let strategy: Strategy = name.parse().map_err(|e| {
        anyhow!("{e}; partitioners: {}", Strategy::HELP.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "))
    })?;
    partition::plan(t, &strategy, n).with_context(|| format!("partitioning with `{name}` into {n}"))
}

/// Partitions and worker threads for a GPU run (`dojo exec`, `dojo bench gpu`): see
/// `amdgpu::vm::gpu_partitions`, which the embedding APIs share.
pub fn gpu_partitions(t: &Topology, workers: Option<u32>, partitions: Option<u32>) -> (u32, u32) {
    amdgpu::vm::gpu_partitions(t, workers, partitions)
}
