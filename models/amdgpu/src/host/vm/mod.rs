//! A simulated machine as one object, for embedding (the C API crate `simdojo-capi` and
//! the Python module build on it; they must not depend on the `dojo` binary's crate).
//!
//! A [`Vm`] is made from a topology (a file or a string, with `--set` style overrides);
//! [`Vm::load_program`] loads a `main()` GPU program as `dojo exec` does (its output goes
//! to this process's stdout and stderr); [`Vm::step`] and [`Vm::run`] advance it;
//! [`Vm::save_checkpoint`] and [`Vm::restore`] keep and rebuild the whole machine in one
//! file ([`file`]). A topology with no program loaded runs as `dojo sim` runs it: the
//! simulation is built at the first step, run or checkpoint.
//!
//! Errors are [`VmError`]s whose texts are the `dojo` command's for the same mistake.

pub mod file;
pub mod metrics;

use std::path::Path;

use serde::{Deserialize, Serialize};
use simdojo::engine::{Checkpoint, ExitReason, ExitStatus, SimConfig, Simulation};
use simdojo::ids::PartitionId;
use simdojo::partition::{self, Strategy};
use simdojo::time::Tick;
use simdojo::topology::overrides::Override;
use simdojo::topology::{Format, Topology};

use crate::isa::code_object::CodeObject;
use crate::host::loader::{prepare, ExecOptions, ExecOutcome, Prepared};
use crate::host::spec::{apply_mode, apply_overrides, MachineSpec, TopologySource};

/// Why a VM call failed; each kind is one error code of the C API and one exception
/// class of the Python module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VmError {
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The topology (or an override of it) is malformed.
    #[error("{0}")]
    Topology(String),
    /// A value given to the call is out of range.
    #[error("{0}")]
    Argument(String),
    /// The program is not a usable GPU program, or could not be loaded.
    #[error("{0}")]
    Program(String),
    /// The call does not fit the VM's state (a second program, an exit code before the
    /// end, ...).
    #[error("{0}")]
    State(String),
    /// A checkpoint is corrupted or does not fit.
    #[error("{0}")]
    Checkpoint(String),
    /// The simulation failed (a component error).
    #[error("{0}")]
    Simulation(String),
}

/// How a loaded program was launched (kept in checkpoints).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProgramLaunch {
    /// argv (argv[0] is the image's path as given).
    pub args: Vec<String>,
    /// Work-items per work-group of `_start`.
    pub threads: [u32; 3],
    /// Work-groups of `_start`.
    pub blocks: [u32; 3],
}

/// How far `Vm::advance` goes.
#[derive(Clone, Copy)]
enum Go {
    Step,
    Run,
    Until(Tick),
}

enum State {
    /// Nothing built yet.
    Fresh,
    /// A topology without a program.
    Plain {
        sim: Simulation,
        last: Option<ExitStatus>,
    },
    /// A loaded GPU program; `outcome` once it ended.
    Program {
        prepared: Box<Prepared>,
        launch: ProgramLaunch,
        outcome: Option<ExecOutcome>,
    },
}

/// A simulated machine. See the [module docs](self).
pub struct Vm {
    topology: Topology,
    workers: u32,
    state: State,
}

/// Reads a topology file, as `dojo` does.
pub fn load_topology(path: &Path) -> Result<Topology, VmError> {
    MachineSpec::new(TopologySource::File(path.to_path_buf())).resolve().map_err(|e| VmError::Topology(e.to_string()))
}

/// Parses a topology given as text: JSON when it starts with `{`, TOML otherwise;
/// includes are relative to the working directory.
pub fn parse_topology(text: &str) -> Result<Topology, VmError> {
    let format = if text.trim_start().starts_with('{') {
        Format::Json
    } else {
        Format::Toml
    };
    let source = TopologySource::Text { name: "<string>".into(), text: text.to_string(), format };
    MachineSpec::new(source).resolve().map_err(|e| VmError::Topology(e.to_string()))
}

/// Partitions and worker threads for a GPU run (`dojo exec`, `dojo bench gpu`):
/// `partitions` if given; else, with several workers, one partition per XCD (or one
/// per worker if there are more workers), which the workers claim anew every epoch
/// so that a worker on a slower core handles fewer; else one. Returns the
/// partition count to plan and the worker count.
pub fn gpu_partitions(t: &Topology, workers: Option<u32>, partitions: Option<u32>) -> (u32, u32) {
    let workers = workers.or(t.engine.workers).unwrap_or(1).max(1);
    // Every XCD has one command processor.
    let xcds = t
        .components
        .iter()
        .filter(|c| c.type_name == "amdgpu.cp")
        .count() as u32;
    let partitions = partitions.unwrap_or(if workers > 1 { workers.max(xcds) } else { 1 });
    (partitions, workers)
}

/// The partition of each component for `workers` threads: the GPU rule of
/// [`gpu_partitions`], with the topology's partitioner (default `mincut`).
fn assignment(t: &Topology, workers: u32) -> Result<Vec<PartitionId>, VmError> {
    let (n, _) = gpu_partitions(t, Some(workers), None);
    let name = t.engine.partitioner.as_deref().unwrap_or("mincut");
    let strategy: Strategy = name
        .parse()
        .map_err(|e| VmError::Topology(format!("{e}")))?;
    let plan = partition::plan(t, &strategy, n)
        .map_err(|e| VmError::Topology(format!("partitioning with `{name}` into {n}: {e}")))?;
    Ok(plan.assignment)
}

fn config(t: &Topology, workers: u32) -> Result<SimConfig, VmError> {
    Ok(SimConfig {
        assignment: Some(assignment(t, workers)?),
        workers: Some(workers as usize),
        ..SimConfig::default()
    })
}

/// Whether a run that stopped with `s` may go on.
fn active(s: &ExitStatus) -> bool {
    matches!(s.reason, ExitReason::Stepped | ExitReason::Paused)
}

/// The error of a run that ended with a component error.
fn failure(s: &ExitStatus) -> Result<(), VmError> {
    match s.reason {
        ExitReason::Error => Err(VmError::Simulation(s.message.clone())),
        _ => Ok(()),
    }
}

impl Vm {
    /// A VM of `topology` (one worker thread).
    pub fn new(topology: Topology) -> Vm {
        crate::link_components();
        Vm {
            topology,
            workers: 1,
            state: State::Fresh,
        }
    }

    /// A VM of the topology file `path`.
    pub fn from_file(path: &Path) -> Result<Vm, VmError> {
        Ok(Vm::new(load_topology(path)?))
    }

    /// A VM of a topology given as text (see [`parse_topology`]).
    pub fn from_text(text: &str) -> Result<Vm, VmError> {
        Ok(Vm::new(parse_topology(text)?))
    }

    fn fresh(&self, what: &str) -> Result<(), VmError> {
        match self.state {
            State::Fresh => Ok(()),
            _ => Err(VmError::State(format!("{what} must come before the simulation starts (before load_program, step, run or save_checkpoint)"))),
        }
    }

    /// Applies `--set` style overrides (`SELECTOR.PARAM=VALUE`), in order; nothing
    /// changes on an error.
    pub fn apply_overrides(&mut self, set: &[String]) -> Result<(), VmError> {
        self.fresh("set")?;
        let parsed: Vec<Override> = set
            .iter()
            .map(|s| {
                s.parse()
                    .map_err(|e| VmError::Topology(format!("--set {e}")))
            })
            .collect::<Result<_, _>>()?;
        apply_overrides(&mut self.topology, &parsed).map_err(|e| VmError::Topology(format!("--set {e}")))
    }

    /// Sets the compute units' (and SoCs') simulation mode, `functional` or `timing`, as
    /// `--mode` does; nothing changes on an error, which names the choices.
    pub fn set_mode(&mut self, mode: &str) -> Result<(), VmError> {
        self.fresh("set_mode")?;
        apply_mode(&mut self.topology, mode).map_err(|e| VmError::Argument(format!("--mode {e}")))
    }

    /// Sets the worker threads (at least 1) the simulation will run on; results do not
    /// depend on it.
    pub fn set_workers(&mut self, workers: u32) -> Result<(), VmError> {
        self.fresh("set_workers")?;
        if workers == 0 {
            return Err(VmError::Argument("workers must be at least 1".into()));
        }
        self.workers = workers;
        Ok(())
    }

    /// The worker threads.
    pub fn workers(&self) -> u32 {
        self.workers
    }

    /// The topology, overrides applied.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Loads the `main()` GPU program `image` (built by `dojo cc`) with arguments `args`
    /// (argv[0] is `image`), launching `_start` on `blocks` work-groups of `threads`
    /// work-items, as `dojo exec` does; the GPU is built here.
    pub fn load_program(
        &mut self,
        image: &Path,
        args: &[String],
        threads: [u32; 3],
        blocks: [u32; 3],
    ) -> Result<(), VmError> {
        self.fresh("load_program")?;
        crate::host::loader::launch_grid(threads, blocks).map_err(|e| VmError::Argument(e.to_string()))?;
        let bytes = crate::host::loader::read_image(image)
            .map_err(|e| VmError::Io(format!("reading {}: {e}", image.display())))?;
        let code = CodeObject::parse(&bytes).map_err(|e| {
            VmError::Program(format!(
                "{} is not an AMDGPU code object: {e}",
                image.display()
            ))
        })?;
        crate::isa::exec::program::isa_target(&code)
            .map_err(|e| VmError::Program(format!("{}: {e}", image.display())))?;
        let launch = ProgramLaunch {
            args: std::iter::once(image.display().to_string())
                .chain(args.iter().cloned())
                .collect(),
            threads,
            blocks,
        };
        let opts = self.exec_options(&self.topology, &launch)?;
        let prepared = prepare(&bytes, &opts)
            .map_err(|e| VmError::Program(format!("{}: {e}", image.display())))?;
        self.state = State::Program {
            prepared: Box::new(prepared),
            launch,
            outcome: None,
        };
        Ok(())
    }

    fn exec_options(&self, t: &Topology, launch: &ProgramLaunch) -> Result<ExecOptions, VmError> {
        let (_, workers) = gpu_partitions(t, Some(self.workers), None);
        Ok(ExecOptions {
            topology: t.clone(),
            assignment: Some(assignment(t, self.workers)?),
            workers: Some(workers as usize),
            threads: launch.threads,
            blocks: launch.blocks,
            args: launch.args.clone(),
            env: std::env::vars()
                .filter(|(k, _)| k.starts_with("DOJO_") || k == "HOME" || k == "PATH")
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            max_ticks: None,
            capture: false,
            max_output: crate::host::loader::DEFAULT_MAX_OUTPUT,
            observe: false,
            progress: false,
        })
    }

    /// Builds the plain simulation of a VM with no program.
    fn build(&mut self) -> Result<(), VmError> {
        if let State::Fresh = self.state {
            let sim = Simulation::build(&self.topology, &config(&self.topology, self.workers)?)
                .map_err(|e| VmError::Topology(e.to_string()))?;
            self.state = State::Plain { sim, last: None };
        }
        Ok(())
    }

    /// Handles every event of the next simulated time; returns whether the simulation
    /// can go on (false once it ended; stepping an ended VM changes nothing).
    pub fn step(&mut self) -> Result<bool, VmError> {
        self.advance(Go::Step)
    }

    /// Runs to the end; returns the simulated time (ticks, picoseconds) at the end.
    pub fn run(&mut self) -> Result<u64, VmError> {
        self.advance(Go::Run)?;
        Ok(self.now())
    }

    /// Runs until simulated time `ticks` (or the end); returns whether it can go on.
    pub fn run_until(&mut self, ticks: u64) -> Result<bool, VmError> {
        self.advance(Go::Until(Tick(ticks)))
    }

    fn advance(&mut self, go: Go) -> Result<bool, VmError> {
        self.build()?;
        let started = std::time::Instant::now();
        let s = match &mut self.state {
            State::Fresh => unreachable!("built above"),
            State::Plain { last: Some(s), .. } if !active(s) => return Ok(false),
            State::Program { outcome: Some(_), .. } => return Ok(false),
            State::Plain { sim, .. } => match go {
                Go::Step => sim.step(),
                Go::Run => sim.run(),
                Go::Until(t) => sim.run_until(t),
            },
            State::Program { prepared, .. } => match go {
                Go::Step => prepared.step(),
                Go::Run => prepared.run(),
                Go::Until(t) => prepared.run_until(t),
            },
        };
        // A refused `run_until` (a time already past) changes nothing.
        if active(&s) || s.reason == ExitReason::Refused {
            return Ok(true);
        }
        match &mut self.state {
            State::Plain { last, .. } => *last = Some(s.clone()),
            State::Program { prepared, outcome, .. } => *outcome = Some(prepared.conclude(&s, started.elapsed().as_secs_f64())),
            State::Fresh => {}
        }
        failure(&s)?;
        Ok(false)
    }

    /// Simulated time now (picoseconds).
    pub fn now(&self) -> u64 {
        match &self.state {
            State::Fresh => 0,
            State::Plain { sim, .. } => sim.now().0,
            State::Program {
                prepared,
                outcome: Some(o),
                ..
            } => o.end.0.max(prepared.now().0),
            State::Program { prepared, .. } => prepared.now().0,
        }
    }

    /// Whether the simulation ended.
    pub fn finished(&self) -> bool {
        match &self.state {
            State::Fresh => false,
            State::Plain { last, .. } => last.as_ref().is_some_and(|s| !active(s)),
            State::Program { outcome, .. } => outcome.is_some(),
        }
    }

    /// The exit status: the program's (as `dojo exec` exits), or the simulation's code
    /// for a topology without a program; an error before the end.
    pub fn exit_code(&self) -> Result<i32, VmError> {
        match &self.state {
            State::Program {
                outcome: Some(o), ..
            } => Ok(o.status),
            State::Plain { last: Some(s), .. } if !active(s) => Ok(s.code),
            _ => Err(VmError::State(
                "the simulation has not ended: step or run it to the end first".into(),
            )),
        }
    }

    /// Why the simulation stopped, once it ended (the faults of a GPU program first).
    pub fn end_reason(&self) -> Option<String> {
        match &self.state {
            State::Program {
                outcome: Some(o), ..
            } => Some(
                o.faults
                    .iter()
                    .map(|f| f.to_string())
                    .chain([o.reason.clone()])
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            State::Plain { last: Some(s), .. } if !active(s) => Some(s.message.clone()),
            _ => None,
        }
    }

    /// The statistics as JSON: `ticks`, `finished`, `exit_code` (null before the end),
    /// `kernels` (per-kernel statistics of a GPU program, as `dojo exec --stats`
    /// writes them) and `components` (every component's statistics, as `dojo sim
    /// --stats` writes them). Identical for any worker count, and after a restore.
    pub fn stats_json(&self) -> Result<String, VmError> {
        let (kernels, components) = match &self.state {
            State::Fresh => (
                serde_json::Value::Array(Vec::new()),
                serde_json::Value::Null,
            ),
            State::Plain { sim, .. } => {
                (serde_json::Value::Array(Vec::new()), sim.stats().to_json())
            }
            State::Program {
                prepared, outcome, ..
            } => {
                let kernels = outcome
                    .as_ref()
                    .map_or_else(|| prepared.kernels(), |o| o.kernels.clone());
                (
                    serde_json::to_value(kernels)
                        .map_err(|e| VmError::Simulation(e.to_string()))?,
                    prepared.simulation().stats().to_json(),
                )
            }
        };
        let json = serde_json::json!({
            "ticks": self.now(),
            "finished": self.finished(),
            "exit_code": self.exit_code().ok(),
            "kernels": kernels,
            "components": components,
        });
        serde_json::to_string(&json).map_err(|e| VmError::Simulation(e.to_string()))
    }

    /// Writes the whole machine to `path` (see [`file`]): restore it with
    /// [`Vm::restore`], in this process (while this VM lives) or another.
    pub fn save_checkpoint(&mut self, path: &Path) -> Result<(), VmError> {
        if self.finished() {
            return Err(VmError::State(
                "the simulation has ended: there is nothing to checkpoint".into(),
            ));
        }
        self.build()?;
        let ck = |e: simdojo::engine::EngineError| VmError::Checkpoint(e.to_string());
        let (engine, program) = match &self.state {
            State::Fresh => unreachable!("built above"),
            State::Plain { sim, .. } => (
                sim.checkpoint().and_then(|c| c.to_bytes()).map_err(ck)?,
                None,
            ),
            State::Program {
                prepared, launch, ..
            } => (
                prepared
                    .checkpoint()
                    .map_err(|e| VmError::Checkpoint(e.to_string()))?,
                Some(launch.clone()),
            ),
        };
        file::write(
            path,
            &file::Saved {
                topology: self.topology.clone(),
                workers: self.workers,
                program,
                engine,
            },
        )
    }

    /// Rebuilds the machine saved in `path`, on `workers` threads (default: the saved
    /// VM's), ready to continue where it stopped.
    pub fn restore(path: &Path, workers: Option<u32>) -> Result<Vm, VmError> {
        crate::link_components();
        let saved = file::read(path)?;
        let workers = workers.unwrap_or(saved.workers);
        if workers == 0 {
            return Err(VmError::Argument("workers must be at least 1".into()));
        }
        let mut vm = Vm {
            topology: saved.topology,
            workers,
            state: State::Fresh,
        };
        let named = |e: String| VmError::Checkpoint(format!("{}: {e}", path.display()));
        vm.state = match saved.program {
            Some(launch) => {
                let opts = vm.exec_options(&vm.topology, &launch)?;
                let prepared =
                    Prepared::restore(&opts, &saved.engine).map_err(|e| named(e.to_string()))?;
                State::Program {
                    prepared: Box::new(prepared),
                    launch,
                    outcome: None,
                }
            }
            None => {
                let ck = Checkpoint::from_bytes(&saved.engine).map_err(|e| named(e.to_string()))?;
                let sim = Simulation::restore(&vm.topology, &config(&vm.topology, workers)?, &ck)
                    .map_err(|e| named(e.to_string()))?;
                State::Plain { sim, last: None }
            }
        };
        Ok(vm)
    }
}
