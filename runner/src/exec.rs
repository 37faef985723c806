//! `dojo exec`: run a `main()` GPU program on a simulated GPU (see `amdgpu::host::loader`),
//! and `dojo cc`: build one with the device runtime (see `amdgpu::host::cc`).

use std::path::PathBuf;
use std::process::ExitCode;

use amdgpu::host::cc::{CcOptions, OptLevel};
use amdgpu::isa::code_object::CodeObject;
use amdgpu::isa::Target;
use amdgpu::host::loader::ExecOptions;
use anyhow::{anyhow, bail, Context as _};
use clap::Args;

use amdgpu::host::spec::MachineSpec;

use crate::machine_spec;
use crate::plan;
use crate::rocprof_csv::StatsFormat;

/// The embedded default topology of each ISA.
pub fn default_topology(target: Target) -> (&'static str, &'static str) {
    match target {
        Target::Gfx90a => kmd_linux::config::DEFAULT_TOPOLOGY,
        Target::Gfx942 => ("mi300x.toml", include_str!("../../topologies/mi300x.toml")),
        Target::Gfx950 => ("mi355x.toml", include_str!("../../topologies/mi355x.toml")),
    }
}

/// Arguments of `dojo exec`.
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// Topology file (default: the embedded MI210, MI300X or MI355X matching the image's ISA).
    #[arg(long, alias = "config")]
    topology: Option<PathBuf>,
    /// Worker threads (1 to 1024).
    #[arg(long, value_parser = crate::plan::workers_arg)]
    workers: Option<u32>,
    /// Partitioner (default: the topology's, `subtree`: one XCD per partition).
    #[arg(long)]
    partitioner: Option<String>,
    /// Partitions (default with several workers: one per XCD, which the workers claim
    /// anew every epoch, evening out unequal cores; with one worker: one).
    #[arg(long, value_parser = crate::plan::workers_arg)]
    partitions: Option<u32>,
    /// Work-items per work-group of `_start`: N or X,Y,Z, at most 1024 in all (the
    /// hardware's work-group limit).
    #[arg(long, default_value = "1", value_parser = threads_arg)]
    threads: [u32; 3],
    /// Work-groups of `_start`: N or X,Y,Z; work-items times work-groups must stay below
    /// 2^32 in each dimension (the dispatch packet's grid size).
    #[arg(long, default_value = "1", value_parser = blocks_arg)]
    blocks: [u32; 3],
    /// Run on GPU N of a multi-GPU node topology (the N-th amdgpu.soc, as `rocminfo`
    /// numbers them from its first GPU agent).
    #[arg(long)]
    gpu: Option<usize>,
    /// Simulation mode of the compute units.
    #[arg(long, default_value = "functional")]
    mode: String,
    /// Write statistics as JSON to FILE, `{"kernels": [per kernel], "components":
    /// {"by_type": .., "components": ..}}` (every cache level's hits, misses, MSHR
    /// merges and stalls, HBM row hits and bytes, compute units' busy and stall cycles),
    /// and print both as tables on stderr.
    #[arg(long)]
    stats: Option<PathBuf>,
    /// The format of the `--stats FILE`: `json` (above) or `rocprof`, a CSV with one row
    /// per kernel dispatch in rocprof's `results.csv` column names (those the simulator
    /// counts; README, "rocprof-style counters").
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "json", requires = "stats")]
    stats_format: crate::rocprof_csv::StatsFormat,
    /// With `--stats FILE`: also sample the component statistics every T of simulated
    /// time (e.g. `10us`) into CSV time series (one row per sample: `time_ps` and every
    /// counter, per component type): FILE with the extension `.series.csv` holds the
    /// cumulative values (since the run began), `.interval.csv` the per-interval ones.
    #[arg(long, value_name = "T", requires = "stats")]
    stats_interval: Option<String>,
    /// Stop after this much simulated time (e.g. `10ms`). A work-group still running
    /// after the compute unit's `watchdog` (default 100ms of simulated time; `--set
    /// cu.watchdog=1s`) faults, naming its waves and their program counters.
    #[arg(long)]
    max_ticks: Option<String>,
    /// Most bytes the program may write to stdout and stderr together (e.g. `10MiB`);
    /// more stops it with an error. Each printf call is also limited to 16 MiB and each
    /// field width or precision to 65535.
    #[arg(long, default_value = "1GiB", value_parser = bytes_arg)]
    max_output: u64,
    /// Observe the run and print on stderr where the host time went: epochs, each
    /// worker's busy and idle-wait time, events and host time by component type and the
    /// busiest components, the parallelism available and the predicted speedup (as
    /// `dojo sim --profile`). Changes no simulated result.
    #[arg(long)]
    profile: bool,
    /// Observe the run and write a Chrome trace (JSON, which Perfetto loads) to FILE:
    /// one track per worker with its partitions' windows, idle waits and sampled
    /// events named by component path.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// After the run, run the same command again as N one-worker copies at once (N =
    /// `--workers`, at least 2; their output discarded) and print the parallel run's
    /// share of that ceiling: copies' wall / (N x this run's wall).
    #[arg(long)]
    ceiling: bool,
    #[command(flatten)]
    set: crate::set_args::SetArgs,
    /// The GPU program (a code object built by `dojo cc`).
    image: PathBuf,
    /// Its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// N or X,Y,Z, each a positive integer.
fn shape(text: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > 3 {
        return Err("expected N or X,Y,Z".into());
    }
    let mut v = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        v[i] = p.trim().parse().map_err(|_| format!("`{p}` is not a positive integer below 2^32"))?;
        if v[i] == 0 {
            return Err("sizes must be positive".into());
        }
    }
    Ok(v)
}

/// `--threads`: a shape of at most [`amdgpu::host::loader::MAX_GROUP_ITEMS`] work-items.
fn threads_arg(text: &str) -> Result<[u32; 3], String> {
    let v = shape(text)?;
    amdgpu::host::loader::check_group(v).map_err(|e| e.to_string())?;
    Ok(v)
}

/// `--blocks`: a shape (the grid's size is checked against `--threads` in [`run`]).
fn blocks_arg(text: &str) -> Result<[u32; 3], String> {
    shape(text)
}

/// A byte count such as `4096`, `10MiB` or `1GiB`.
fn bytes_arg(text: &str) -> Result<u64, String> {
    simdojo::params::parse_bytes(text)
}

/// Work-items per dimension of the grid: the dispatch packet holds 32 bits each.
fn grid(threads: [u32; 3], blocks: [u32; 3]) -> anyhow::Result<[u32; 3]> {
    amdgpu::host::loader::launch_grid(threads, blocks).map_err(|e| anyhow!("--threads x --blocks: {e}"))
}

/// Runs `dojo exec`.
pub fn run(a: ExecArgs) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    if a.ceiling && a.workers.is_none_or(|w| w < 2) {
        bail!("--ceiling compares --workers N (N at least 2) with N one-worker copies");
    }
    grid(a.threads, a.blocks)?;
    let bytes = amdgpu::host::loader::read_image(&a.image).with_context(|| format!("reading {}", a.image.display()))?;
    let code = CodeObject::parse(&bytes).with_context(|| format!("{} is not an AMDGPU code object", a.image.display()))?;
    let target = amdgpu::isa::exec::program::isa_target(&code).map_err(|e| anyhow!("{}: {e}", a.image.display()))?;
    let spec = MachineSpec {
        gpu: a.gpu,
        ..machine_spec::spec(a.topology.as_deref(), default_topology(target), Some(&a.mode), &a.set)
    };
    let t = machine_spec::resolve(&spec)?;
    let (partitions, workers) = plan::gpu_partitions(&t, a.workers, a.partitions);
    let plan = plan::choose(&t, Some(partitions), a.partitioner.as_deref())?;
    let max_ticks = match &a.max_ticks {
        Some(text) => Some(simdojo::time::Tick::parse_duration_with_unit(text).map_err(|e| anyhow!("--max-ticks {text}: {e}"))?),
        None => None,
    };
    let mut args = vec![a.image.display().to_string()];
    args.extend(a.args.iter().cloned());
    let env: Vec<String> = std::env::vars().filter(|(k, _)| k.starts_with("DOJO_") || k == "HOME" || k == "PATH").map(|(k, v)| format!("{k}={v}")).collect();
    let opts = ExecOptions {
        topology: t,
        assignment: Some(plan.assignment),
        workers: Some(workers as usize),
        threads: a.threads,
        blocks: a.blocks,
        args,
        env,
        max_ticks,
        capture: false,
        max_output: a.max_output,
        observe: a.profile || a.trace.is_some(),
        progress: true,
    };
    let interval = match &a.stats_interval {
        Some(text) => Some(
            simdojo::time::Tick::parse_duration_with_unit(text)
                .map_err(|e| anyhow!("--stats-interval {text}: {e}"))
                .and_then(|t| if t.0 > 0 { Ok(t) } else { Err(anyhow!("--stats-interval {text}: expected a positive duration such as 10us")) })?,
        ),
        None => None,
    };
    let mut series = crate::stats_series::Series::default();
    let out = amdgpu::host::loader::prepare(&bytes, &opts)
        .map_err(|e| anyhow!("{}: {e}", a.image.display()))?
        .finish_sampled(interval, |at, report| series.sample(at, report));
    if let Some(e) = &out.output_error {
        // The reader went away (`dojo exec ... | head -1`): stop quietly.
        if e.is_broken_pipe() {
            return Err(crate::output::BrokenPipe.into());
        }
        bail!("{}: {e}", a.image.display());
    }
    for f in &out.faults {
        eprintln!("dojo exec: {f}");
    }
    if out.faults.is_empty() && out.program_exit.is_none() && out.status != 0 {
        eprintln!("dojo exec: {}", out.reason);
    }
    if let Some(path) = &a.stats {
        eprint!("{}", amdgpu::gpu::stats::table(&out.kernels));
        eprint!("{}", out.components.to_table());
        match a.stats_format {
            StatsFormat::Json => amdgpu::gpu::stats::StatsFile::new(out.kernels.clone(), &out.components).write(path).context("writing the statistics")?,
            StatsFormat::Rocprof => crate::rocprof_csv::write(path, &out.kernels).with_context(|| format!("writing the statistics to {}", path.display()))?,
        }
        if interval.is_some() {
            let csv = path.with_extension("series.csv");
            std::fs::write(&csv, series.to_csv()).with_context(|| format!("writing {}", csv.display()))?;
            let per_interval = path.with_extension("interval.csv");
            std::fs::write(&per_interval, series.to_interval_csv()).with_context(|| format!("writing {}", per_interval.display()))?;
        }
    }
    if let Some(obs) = &out.observation {
        let paths: Vec<String> = opts.topology.components.iter().map(|c| c.path.clone()).collect();
        let types: Vec<String> = opts.topology.components.iter().map(|c| c.type_name.clone()).collect();
        let names = crate::profile::Names { paths: &paths, types: &types };
        if let Some(path) = &a.trace {
            crate::profile::write_trace(path, obs, &names)?;
        }
        if a.profile {
            eprint!("{}", crate::profile::render(obs, &names, out.end));
        }
    }
    if a.ceiling {
        let own: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        crate::ceiling_run::report(workers, started.elapsed(), &own, a.image.as_os_str())?;
    }
    Ok(ExitCode::from((out.status & 0xff) as u8))
}

/// Arguments of `dojo cc`.
#[derive(Args, Debug)]
pub struct CcArgs {
    /// Target processor: gfx90a, gfx942 or gfx950.
    #[arg(long)]
    mcpu: String,
    /// Optimization level (0-3).
    #[arg(short = 'O', default_value = "2")]
    opt: String,
    /// Output code object.
    #[arg(short = 'o')]
    output: PathBuf,
    /// Extra flag for clang (repeatable), e.g. `-X=-DN=4`.
    #[arg(short = 'X', allow_hyphen_values = true)]
    extra: Vec<String>,
    /// C source files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

/// Runs `dojo cc`.
pub fn cc(a: CcArgs) -> anyhow::Result<ExitCode> {
    let mcpu: Target = a.mcpu.parse().map_err(|e| anyhow!("--mcpu: {e}"))?;
    let opt = match a.opt.as_str() {
        "0" => OptLevel::O0,
        "1" => OptLevel::O1,
        "2" => OptLevel::O2,
        "3" => OptLevel::O3,
        other => bail!("-O{other}: expected -O0, -O1, -O2 or -O3"),
    };
    let opts = CcOptions { mcpu, opt, output: a.output, inputs: a.inputs, extra_flags: a.extra };
    amdgpu::host::cc::compile(&opts).map_err(|e| anyhow!("{e}"))?;
    Ok(ExitCode::SUCCESS)
}
