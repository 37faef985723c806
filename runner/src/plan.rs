//! Choosing a partition plan from the command line and the topology's settings.

use anyhow::{anyhow, Context as _};
use simdojo::partition::{self, Plan, Strategy};
use simdojo::topology::Topology;

/// Most worker threads (and partitions) a command accepts.
pub const MAX_WORKERS: u32 = 1024;

/// Parses `--workers` / `--partitions`: 1 to [`MAX_WORKERS`].
pub fn workers_arg(text: &str) -> Result<u32, String> {
    let n: u32 = text.parse().map_err(|_| format!("`{text}` is not a positive integer"))?;
    if n == 0 || n > MAX_WORKERS {
        return Err(format!("{n} is out of range; expected 1 to {MAX_WORKERS}"));
    }
    Ok(n)
}

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
/// `amdgpu::host::vm::gpu_partitions`, which the embedding APIs share.
pub fn gpu_partitions(t: &Topology, workers: Option<u32>, partitions: Option<u32>) -> (u32, u32) {
    amdgpu::host::vm::gpu_partitions(t, workers, partitions)
}
