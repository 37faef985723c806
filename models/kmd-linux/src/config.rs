//! How a process finds its simulated machine: environment variables that `dojo run`
//! sets (and a user may set by hand with a plain `LD_PRELOAD`).

use std::path::{Path, PathBuf};

use simdojo::ids::PartitionId;
use simdojo::partition::{self, Strategy};
use amdgpu::host::spec::{MachineSpec, SpecError, TopologySource};
use simdojo::topology::Topology;

/// Topology file of the simulated machine (default: the embedded MI210).
pub const ENV_TOPOLOGY: &str = "DOJO_TOPOLOGY";
/// Worker threads of the simulation (default: the topology's `[engine] workers`, else 1).
pub const ENV_WORKERS: &str = "DOJO_WORKERS";
/// Partitioner name (default: the topology's, else `mincut`).
pub const ENV_PARTITIONER: &str = "DOJO_PARTITIONER";
/// `functional` or `timing` (default: the topology's per-CU `mode`).
pub const ENV_MODE: &str = "DOJO_MODE";
/// Where to write per-kernel statistics (JSON) when the process exits.
pub const ENV_STATS: &str = "DOJO_STATS";
/// A directory already holding the generated `sys/` and `proc/` trees (set by `dojo
/// run` so child processes share one tree); else each process writes its own.
pub const ENV_FAKE_ROOT: &str = "DOJO_FAKE_ROOT";
/// The socket of a running daemon (`dojo run --daemon` / `--attach`): device calls go
/// there instead of to a simulator in the process.
pub const ENV_DAEMON: &str = "DOJO_DAEMON";
/// `1`: log every device call (ioctl, mapping) on stderr (`dojo run --log-ioctls`).
pub const ENV_LOG_IOCTLS: &str = "DOJO_LOG_IOCTLS";
/// Observe the simulation and write its Chrome trace (JSON, which Perfetto loads) to
/// this file when the process exits (`dojo run --trace FILE`, as `dojo exec --trace`).
pub const ENV_TRACE_FILE: &str = "DOJO_TRACE_FILE";
/// Topology parameter overrides, one `SELECTOR.PARAM=VALUE` per line (`dojo run --set`,
/// see `simdojo::topology::overrides`), applied after the topology loads.
pub const ENV_SET: &str = "DOJO_SET";

/// The default machine: an MI210 (gfx90a), the newest part Debian's ROCm 5.2.3 knows.
pub const DEFAULT_TOPOLOGY: (&str, &str) =
    ("mi210.toml", include_str!("../../../topologies/mi210.toml"));

/// A resolved machine (see [`ResolvedMachine`]) in a JSON file: what `dojo run` hands
/// the program's simulator instead of the pieces above, which it would resolve again.
pub const ENV_MACHINE: &str = "DOJO_MACHINE";

/// A machine resolved once (`amdgpu::host::spec::MachineSpec::resolve`, then the
/// partition plan) and handed to another process as it is: the topology with every
/// override applied, and the plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResolvedMachine {
    /// The resolved topology.
    pub topology: Topology,
    /// Each component's partition, in component order.
    pub assignment: Vec<PartitionId>,
    /// Worker threads.
    pub workers: u32,
}

impl ResolvedMachine {
    /// Writes it to `path` as JSON.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text)
    }

    /// Reads one [`ResolvedMachine::write`] wrote; a file that is not one, or whose plan
    /// does not fit its topology, is an error naming the file.
    pub fn read(path: &Path) -> Result<ResolvedMachine, ConfigError> {
        let bad = |why: String| ConfigError::Machine { path: path.to_path_buf(), why };
        let text = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        let m: ResolvedMachine = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        if m.assignment.len() != m.topology.components.len() {
            return Err(bad(format!("{} partition assignments for {} components", m.assignment.len(), m.topology.components.len())));
        }
        if m.workers == 0 {
            return Err(bad("no worker threads".into()));
        }
        Ok(m)
    }
}

/// A configuration problem, naming the variable or file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The topology file does not load.
    #[error("{ENV_TOPOLOGY}: {0}")]
    Topology(String),
    /// A variable has a bad value.
    #[error("{var}={value}: {expected}")]
    Value {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// Partitioning failed.
    #[error("partitioning: {0}")]
    Partition(String),
    /// An override does not apply.
    #[error("{ENV_SET}: {0}")]
    Override(String),
    /// The resolved machine file is unreadable or inconsistent.
    #[error("{ENV_MACHINE}={}: {why}", path.display())]
    Machine {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// The machine and how to simulate it.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// The machine (with `mode` applied to every compute unit).
    pub topology: Topology,
    /// Partition of each component.
    pub assignment: Vec<simdojo::ids::PartitionId>,
    /// Worker threads.
    pub workers: u32,
    /// Statistics output.
    pub stats: Option<PathBuf>,
    /// A shared generated tree, if `dojo run` made one.
    pub fake_root: Option<PathBuf>,
    /// Log device calls.
    pub log_ioctls: bool,
    /// Where to write the simulation's Chrome trace (the run is observed).
    pub trace: Option<PathBuf>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The source of the default or the named topology.
fn source(path: Option<&Path>) -> TopologySource {
    match path {
        Some(p) => TopologySource::File(p.to_path_buf()),
        None => TopologySource::embedded(DEFAULT_TOPOLOGY),
    }
}

/// Loads the default or the named topology.
pub fn load_topology(path: Option<&Path>) -> Result<Topology, ConfigError> {
    MachineSpec::new(source(path)).resolve().map_err(|e| ConfigError::Topology(e.to_string()))
}

impl DriverConfig {
    /// `topology` on one worker and one partition, no statistics, no shared tree.
    pub fn single_partition(topology: Topology) -> DriverConfig {
        let n = topology.components.len();
        DriverConfig {
            topology,
            assignment: vec![simdojo::ids::PartitionId(0); n],
            workers: 1,
            stats: None,
            fake_root: None,
            log_ioctls: false,
            trace: None,
        }
    }

    /// The configuration the environment describes.
    pub fn from_env() -> Result<DriverConfig, ConfigError> {
        amdgpu::link_components();
        let m = match var(ENV_MACHINE) {
            Some(path) => ResolvedMachine::read(Path::new(&path))?,
            None => Self::resolve_from_env()?,
        };
        Ok(DriverConfig {
            topology: m.topology,
            assignment: m.assignment,
            workers: m.workers,
            stats: var(ENV_STATS).map(PathBuf::from),
            fake_root: var(ENV_FAKE_ROOT).map(PathBuf::from),
            log_ioctls: var(ENV_LOG_IOCTLS).is_some_and(|v| v != "0"),
            trace: var(ENV_TRACE_FILE).map(PathBuf::from),
        })
    }

    /// The machine the separate variables describe (a hand-made `LD_PRELOAD` run):
    /// resolved through the same spec as `dojo run` resolves it.
    fn resolve_from_env() -> Result<ResolvedMachine, ConfigError> {
        // Overrides come last: the most specific setting wins.
        let overrides = var(ENV_SET)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.parse::<simdojo::topology::overrides::Override>().map_err(|e| ConfigError::Override(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        let spec = MachineSpec {
            mode: var(ENV_MODE),
            overrides,
            ..MachineSpec::new(source(var(ENV_TOPOLOGY).as_deref().map(Path::new)))
        };
        let t = spec.resolve().map_err(|e| match e {
            SpecError::Topology(m) => ConfigError::Topology(m),
            SpecError::Mode { mode, .. } => ConfigError::Value { var: ENV_MODE, value: mode, expected: "functional or timing".into() },
            SpecError::Override(m) => ConfigError::Override(m),
            SpecError::Gpu { message, .. } => ConfigError::Topology(message),
        })?;
        let workers = match var(ENV_WORKERS) {
            Some(w) => w
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or(ConfigError::Value {
                    var: ENV_WORKERS,
                    value: w,
                    expected: "a positive integer".into(),
                })?,
            None => t.engine.workers.unwrap_or(1),
        };
        let name = var(ENV_PARTITIONER)
            .or_else(|| t.engine.partitioner.clone())
            .unwrap_or_else(|| "mincut".into());
        let strategy: Strategy = name.parse().map_err(|e| ConfigError::Value {
            var: ENV_PARTITIONER,
            value: name.clone(),
            expected: format!("{e}"),
        })?;
        let plan = partition::plan(&t, &strategy, workers)
            .map_err(|e| ConfigError::Partition(e.to_string()))?;
        Ok(ResolvedMachine { topology: t, assignment: plan.assignment, workers })
    }
}
