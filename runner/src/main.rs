//! `dojo`: the simdojo command line.
//!
//! The only crate that parses command lines and uses `anyhow`; everything it does is
//! a thin layer over the library crates.

/// `eprintln!` that never panics: a message to a closed or full standard error is lost,
/// not a crash (std's panics when the write fails). Defined before the modules, so
/// every module's `eprintln!` is this one.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics (see `eprintln!`).
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod bench;
mod bench_apps;
mod bench_gemm;
mod bench_gpu;
mod bench_micro;
mod bench_run;
mod ceiling_run;
mod copies;
mod daemon_cmd;
mod disasm;
mod exec;
mod isa_cmd;
mod output;
mod plan;
mod plugins;
mod profile;
mod rocprof_csv;
mod run;
mod machine_spec;
mod set_args;
mod sim;
mod stats_series;
mod sweep;
mod sysinfo;
mod topology_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Simulate AMD Instinct GPUs and other systems on the simdojo engine.
#[derive(Parser, Debug)]
#[command(name = "dojo", version, about)]
struct Cli {
    /// Most host memory a topology may take to simulate, estimated from its counts of
    /// components, links and fabric members before anything is built (e.g. `64GiB`;
    /// default: half of the host's available memory). Reaches the programs `dojo run`
    /// starts and the daemon through DOJO_MAX_TOPOLOGY_MEMORY.
    #[arg(long, global = true, value_name = "SIZE", value_parser = simdojo::params::parse_bytes)]
    max_topology_memory: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List registered component types with their parameters, ports and statistics.
    Plugins {
        /// Show only this type.
        name: Option<String>,
    },
    /// Validate a topology file and print its summary and partition plan (or Graphviz).
    Topology {
        /// The topology file (TOML or JSON).
        file: std::path::PathBuf,
        /// Worker threads to plan for.
        #[arg(long, value_parser = crate::plan::workers_arg)]
        workers: Option<u32>,
        /// Partitioner: single, round-robin, linear, subtree[:PREFIX], manual, mincut.
        #[arg(long)]
        partitioner: Option<String>,
        /// Print the topology as a Graphviz graph instead.
        #[arg(long)]
        dot: bool,
    },
    /// Run a topology file.
    Sim(sim::SimArgs),
    /// Disassemble an AMDGPU code object like `llvm-objdump -d --mcpu=gfxNNN`.
    Disasm {
        /// Target processor (default: the code object's).
        #[arg(long)]
        mcpu: Option<String>,
        /// The code object (ELF).
        file: std::path::PathBuf,
    },
    /// Run a main() GPU program on a simulated GPU, serving its host calls.
    Exec(exec::ExecArgs),
    /// Compile C files into a GPU program with the device runtime (real clang).
    Cc(exec::CcArgs),
    /// Run an unmodified ROCm program on the simulated GPU: dojo run [OPTIONS] -- APP [ARGS...]
    Run(run::RunArgs),
    /// Serve one simulated machine to many processes over a Unix socket until SIGTERM.
    Daemon(daemon_cmd::DaemonArgs),
    /// Run benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// A parameter study: run a command at every point of a `--set` grid, collect the
    /// statistics in CSV and JSON, and plot one of them.
    Sweep(sweep::SweepArgs),
    /// Facts about the simulated instruction sets (`dojo isa coverage`).
    #[command(subcommand)]
    Isa(isa_cmd::IsaCommand),
}

fn main() -> ExitCode {
    amdgpu::link_components();
    let cli = Cli::parse();
    if let Some(bytes) = cli.max_topology_memory {
        // Before any thread starts: every later load (here and in children) reads it.
        std::env::set_var(simdojo::topology::MAX_MEMORY_VAR, bytes.to_string());
    }
    let result = match cli.command {
        Command::Plugins { name } => plugins::run(name.as_deref()),
        Command::Topology { file, workers, partitioner, dot } => {
            topology_cmd::run(&file, workers, partitioner.as_deref(), dot)
        }
        Command::Sim(a) => sim::run(a),
        Command::Disasm { mcpu, file } => disasm::run(&file, mcpu.as_deref()),
        Command::Exec(a) => exec::run(a),
        Command::Cc(a) => exec::cc(a),
        Command::Run(a) => run::run(a),
        Command::Daemon(a) => daemon_cmd::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Isa(c) => isa_cmd::run(c),
        Command::Sweep(a) => sweep::run(a),
    };
    match result {
        Ok(code) => code,
        // The reader of the output went away (`dojo plugins | head -1`): stop quietly,
        // with the status of a process a SIGPIPE ended.
        Err(e) if e.is::<output::BrokenPipe>() => ExitCode::from(141),
        Err(e) => {
            eprintln!("dojo: {e:#}");
            ExitCode::from(2)
        }
    }
}
