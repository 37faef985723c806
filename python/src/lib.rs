//! The Python module `simdojo` (its Rust part, `simdojo._simdojo`): the embeddable VM of
//! `amdgpu::host::vm` as `simdojo.Vm`, in-process PHOLD benchmarks (`bench_phold`) and
//! parameter studies (`sweep`). Every simulation runs with the GIL released, so other
//! Python threads go on meanwhile. Errors are `simdojo.Error` subclasses carrying the
//! `dojo` command's message for the same mistake.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use amdgpu::host::vm::{metrics, Vm as Machine, VmError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

create_exception!(_simdojo, Error, PyException, "Any simdojo error.");
create_exception!(
    _simdojo,
    IoError,
    Error,
    "A file could not be read or written."
);
create_exception!(
    _simdojo,
    TopologyError,
    Error,
    "The topology, or an override of it, is malformed."
);
create_exception!(_simdojo, ArgumentError, Error, "A value is out of range.");
create_exception!(
    _simdojo,
    ProgramError,
    Error,
    "The program is not a usable GPU program."
);
create_exception!(
    _simdojo,
    StateError,
    Error,
    "The call does not fit the VM's state."
);
create_exception!(
    _simdojo,
    CheckpointError,
    Error,
    "The checkpoint is corrupted or does not fit."
);
create_exception!(_simdojo, SimulationError, Error, "The simulation failed.");

fn py_err(e: VmError) -> PyErr {
    let m = e.to_string();
    match e {
        VmError::Io(_) => IoError::new_err(m),
        VmError::Topology(_) => TopologyError::new_err(m),
        VmError::Argument(_) => ArgumentError::new_err(m),
        VmError::Program(_) => ProgramError::new_err(m),
        VmError::State(_) => StateError::new_err(m),
        VmError::Checkpoint(_) => CheckpointError::new_err(m),
        _ => SimulationError::new_err(m),
    }
}

/// `{key: value}` as `key=value` overrides, in the dict's order.
fn overrides(set: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    if let Some(d) = set {
        for (k, v) in d.iter() {
            out.push(format!("{}={}", k.str()?, v.str()?));
        }
    }
    Ok(out)
}

fn json_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A simulated machine: `Vm(topology_path, set={"l2.size": "4MiB"}, workers=1,
/// mode="timing")` (`mode`: the compute units' `functional` or `timing`, as `--mode`).
#[pyclass(name = "Vm", module = "simdojo", frozen)]
struct Vm {
    inner: Mutex<Machine>,
}

impl Vm {
    /// Runs `f` on the machine with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Machine) -> Result<T, VmError> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut guard = self.inner.lock().map_err(|_| {
                Error::new_err("the VM is unusable: an earlier call on it failed inside simdojo")
            })?;
            f(&mut guard).map_err(py_err)
        })
    }

    fn configured(mut m: Machine, set: Vec<String>, workers: u32, mode: Option<&str>) -> PyResult<Vm> {
        // The mode first: an override is more specific and wins.
        if let Some(mode) = mode {
            m.set_mode(mode).map_err(py_err)?;
        }
        m.apply_overrides(&set).map_err(py_err)?;
        m.set_workers(workers).map_err(py_err)?;
        Ok(Vm {
            inner: Mutex::new(m),
        })
    }
}

#[pymethods]
impl Vm {
    #[new]
    #[pyo3(signature = (topology, set=None, workers=1, mode=None))]
    fn new(
        py: Python<'_>,
        topology: PathBuf,
        set: Option<&Bound<'_, PyDict>>,
        workers: u32,
        mode: Option<&str>,
    ) -> PyResult<Vm> {
        let set = overrides(set)?;
        let m = py
            .detach(|| Machine::from_file(&topology))
            .map_err(py_err)?;
        Vm::configured(m, set, workers, mode)
    }

    /// A VM of a topology given as text (TOML, or JSON starting with `{`).
    #[staticmethod]
    #[pyo3(signature = (text, set=None, workers=1, mode=None))]
    fn from_string(text: &str, set: Option<&Bound<'_, PyDict>>, workers: u32, mode: Option<&str>) -> PyResult<Vm> {
        let m = Machine::from_text(text).map_err(py_err)?;
        Vm::configured(m, overrides(set)?, workers, mode)
    }

    /// Loads a `main()` GPU program built by `dojo cc`, as `dojo exec` runs it; its
    /// output goes to this process's stdout and stderr.
    #[pyo3(signature = (path, args=Vec::new(), threads=1, blocks=1))]
    fn load_program(
        &self,
        py: Python<'_>,
        path: PathBuf,
        args: Vec<String>,
        threads: u32,
        blocks: u32,
    ) -> PyResult<()> {
        self.with(py, |m| {
            m.load_program(&path, &args, [threads, 1, 1], [blocks, 1, 1])
        })
    }

    /// Handles the events of the next simulated time; False once the simulation ended.
    fn step(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |m| m.step())
    }

    /// Runs to the end; returns the simulated time then (picoseconds).
    fn run(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |m| m.run())
    }

    /// Runs until simulated time `ticks` (picoseconds) or the end; False once it ended.
    fn run_until(&self, py: Python<'_>, ticks: u64) -> PyResult<bool> {
        self.with(py, |m| m.run_until(ticks))
    }

    /// Simulated time now (picoseconds).
    #[getter]
    fn now(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |m| Ok(m.now()))
    }

    /// Whether the simulation ended.
    #[getter]
    fn finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |m| Ok(m.finished()))
    }

    /// The program's exit status (as `dojo exec` exits), None before the end.
    #[getter]
    fn exit_code(&self, py: Python<'_>) -> PyResult<Option<i32>> {
        self.with(py, |m| Ok(m.exit_code().ok()))
    }

    /// The statistics: ticks, finished, exit_code, kernels (per-kernel statistics of a
    /// GPU program) and components (every component's statistics).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.with(py, |m| m.stats_json())?;
        json_value(py, &text)
    }

    /// Writes the whole machine to `path`; `Vm.restore(path)` continues from it.
    fn save_checkpoint(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.with(py, |m| m.save_checkpoint(&path))
    }

    /// A VM continuing from a checkpoint (on `workers` threads, default the saved VM's).
    #[staticmethod]
    #[pyo3(signature = (path, workers=None))]
    fn restore(py: Python<'_>, path: PathBuf, workers: Option<u32>) -> PyResult<Vm> {
        let m = py
            .detach(|| Machine::restore(&path, workers))
            .map_err(py_err)?;
        Ok(Vm {
            inner: Mutex::new(m),
        })
    }
}

fn ns_to_ticks(what: &str, ns: f64) -> PyResult<simdojo::time::Tick> {
    let t = (ns * 1000.0).round();
    if !(t.is_finite() && t >= 0.0 && t < u64::MAX as f64) {
        return Err(ArgumentError::new_err(format!(
            "--{what} {ns} is not a time in nanoseconds"
        )));
    }
    Ok(simdojo::time::Tick(t as u64))
}

/// PHOLD in this process, as `dojo bench phold --json` runs it (times in nanoseconds):
/// returns events, events_per_sec, epochs, wall_seconds, workers, partitions, digest
/// and exit. The digest is the same for any worker count.
#[pyfunction]
#[pyo3(signature = (*, lps=1024, events_per_lp=4, remote=0.25, lookahead=1.0, mean=1.0, end_time=3000.0, seed=1, workers=1, partitioner="linear", partitions=None))]
#[allow(clippy::too_many_arguments)]
fn bench_phold<'py>(
    py: Python<'py>,
    lps: u32,
    events_per_lp: u32,
    remote: f64,
    lookahead: f64,
    mean: f64,
    end_time: f64,
    seed: u64,
    workers: u32,
    partitioner: &str,
    partitions: Option<u32>,
) -> PyResult<Bound<'py, PyAny>> {
    use simdojo::engine::{SimConfig, Simulation};
    use simdojo::phold::{self, PholdConfig};
    let cfg = PholdConfig {
        lps,
        events_per_lp,
        remote,
        lookahead: ns_to_ticks("lookahead", lookahead)?,
        mean: ns_to_ticks("mean", mean)?,
        end: ns_to_ticks("end-time", end_time)?,
        seed,
    };
    if cfg.lookahead < simdojo::time::Tick(1) {
        return Err(ArgumentError::new_err(
            "--lookahead must be at least 1 ps: conservative synchronization needs it",
        ));
    }
    if lps == 0 || workers == 0 || partitions == Some(0) {
        return Err(ArgumentError::new_err(
            "--lps, --workers and --partitions must be at least 1",
        ));
    }
    let strategy: simdojo::partition::Strategy = partitioner
        .parse()
        .map_err(|e| ArgumentError::new_err(format!("{e}")))?;
    let text = py.detach(|| -> Result<String, String> {
        let topo = phold::topology(&cfg);
        let n = partitions.unwrap_or(workers);
        let plan = simdojo::partition::plan(&topo, &strategy, n)
            .map_err(|e| format!("partitioning with `{partitioner}` into {n}: {e}"))?;
        let config = SimConfig {
            assignment: Some(plan.assignment),
            workers: Some(workers as usize),
            ..SimConfig::default()
        };
        let mut sim = Simulation::build(&topo, &config)
            .map_err(|e| format!("building the PHOLD topology: {e}"))?;
        let begun = std::time::Instant::now();
        let status = sim.run();
        let wall = begun.elapsed().as_secs_f64();
        let events = sim.summary().events;
        let json = serde_json::json!({
            "engine": "simdojo",
            "events": events,
            "events_per_sec": events as f64 / wall.max(1e-9),
            "epochs": sim.summary().sync.epochs,
            "wall_seconds": wall,
            "workers": sim.workers(),
            "partitions": sim.partitions(),
            "digest": format!("{:016x}", phold::digest(&sim, cfg.lps)),
            "exit": status.to_string(),
        });
        Ok(json.to_string())
    });
    json_value(py, &text.map_err(SimulationError::new_err)?)
}

/// What one point of a sweep gave: (exit status, ticks, columns) or an error message.
type PointResult = Result<(i32, u64, BTreeMap<String, f64>), String>;

fn run_point(
    topology: &std::path::Path,
    program: &std::path::Path,
    args: &[String],
    set: &[String],
    workers: u32,
    mode: Option<&str>,
    grid: [u32; 2],
) -> PointResult {
    let run = || -> Result<(i32, u64, BTreeMap<String, f64>), VmError> {
        let mut m = Machine::from_file(topology)?;
        if let Some(mode) = mode {
            m.set_mode(mode)?;
        }
        m.apply_overrides(set)?;
        m.set_workers(workers)?;
        m.load_program(program, args, [grid[0], 1, 1], [grid[1], 1, 1])?;
        let ticks = m.run()?;
        let stats: serde_json::Value = serde_json::from_str(&m.stats_json()?)
            .map_err(|e| VmError::Simulation(e.to_string()))?;
        Ok((
            m.exit_code()?,
            ticks,
            metrics::kernel_columns(&stats["kernels"]),
        ))
    };
    run().map_err(|e| e.to_string())
}

/// A parameter study in this process: runs `program` on `topology` at every point of
/// `grid` ({key: [values]}, the Cartesian product, first key slowest), `jobs` points at
/// a time on threads (each point on `workers` simulation threads), with the GIL
/// released. Returns one dict per point: the point's values under their keys, `status`
/// (exit status, None if the point failed), `error` (None or the message), `ticks`, and
/// the per-kernel statistics summed over kernels (`cycles`, `l2.hits`, `l2.misses`, ...,
/// `kernels`, `l2.hit_rate`, `span_ps`), the columns of `dojo sweep -- exec`. `mode`:
/// the compute units' `functional` or `timing` at every point.
#[pyfunction]
#[pyo3(signature = (topology, program, grid, args=Vec::new(), set=None, workers=1, threads=1, blocks=1, jobs=1, mode=None))]
#[allow(clippy::too_many_arguments)]
fn sweep<'py>(
    py: Python<'py>,
    topology: PathBuf,
    program: PathBuf,
    grid: &Bound<'py, PyDict>,
    args: Vec<String>,
    set: Option<&Bound<'py, PyDict>>,
    workers: u32,
    threads: u32,
    blocks: u32,
    jobs: usize,
    mode: Option<String>,
) -> PyResult<Bound<'py, PyList>> {
    let base = overrides(set)?;
    let mut axes: Vec<(Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>)> = Vec::new();
    for (k, v) in grid.iter() {
        let values: Vec<Bound<'py, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        if values.is_empty() {
            return Err(ArgumentError::new_err(format!(
                "sweep: no values for `{}`",
                k.str()?
            )));
        }
        axes.push((k, values));
    }
    let mut points: Vec<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> = vec![Vec::new()];
    for (k, values) in &axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                values
                    .iter()
                    .map(move |v| p.iter().cloned().chain([(k.clone(), v.clone())]).collect())
            })
            .collect();
    }
    let sets: Vec<Vec<String>> = points
        .iter()
        .map(|p| -> PyResult<Vec<String>> {
            let mut s = base.clone();
            for (k, v) in p {
                s.push(format!("{}={}", k.str()?, v.str()?));
            }
            Ok(s)
        })
        .collect::<PyResult<_>>()?;
    let jobs = jobs.clamp(1, sets.len().max(1));
    let results: Vec<PointResult> = py.detach(|| {
        let slots: Vec<Mutex<Option<PointResult>>> =
            sets.iter().map(|_| Mutex::new(None)).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(set) = sets.get(i) else { break };
                    let r = run_point(&topology, &program, &args, set, workers, mode.as_deref(), [threads, blocks]);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                });
            }
        });
        slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_else(|| Err("not run".into()))
            })
            .collect()
    });
    let rows = PyList::empty(py);
    for (point, result) in points.iter().zip(results) {
        let row = PyDict::new(py);
        for (k, v) in point {
            row.set_item(k, v)?;
        }
        match result {
            Ok((status, ticks, columns)) => {
                row.set_item("status", status)?;
                row.set_item("error", py.None())?;
                row.set_item("ticks", ticks)?;
                for (k, v) in columns {
                    row.set_item(k, v)?;
                }
            }
            Err(message) => {
                row.set_item("status", py.None())?;
                row.set_item("error", message)?;
            }
        }
        rows.append(row)?;
    }
    Ok(rows)
}

/// The extension module.
#[pymodule]
fn _simdojo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    amdgpu::link_components();
    let py = m.py();
    m.add_class::<Vm>()?;
    m.add_function(wrap_pyfunction!(bench_phold, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    for (name, ty) in [
        ("Error", py.get_type::<Error>()),
        ("IoError", py.get_type::<IoError>()),
        ("TopologyError", py.get_type::<TopologyError>()),
        ("ArgumentError", py.get_type::<ArgumentError>()),
        ("ProgramError", py.get_type::<ProgramError>()),
        ("StateError", py.get_type::<StateError>()),
        ("CheckpointError", py.get_type::<CheckpointError>()),
        ("SimulationError", py.get_type::<SimulationError>()),
    ] {
        m.add(name, ty)?;
    }
    Ok(())
}
