//! `dojo run`: runs an unmodified ROCm program on the simulated GPU.
//!
//! The program runs in a child process with the interposer (`libdojo_interposer.so`,
//! package `dojo-interposer`) preloaded. The interposer serves `/dev/kfd`, the render
//! node and the KFD sysfs files from the simulated driver of `kmd_linux`, which starts
//! inside the child on its first device call and reads its configuration from the
//! `DOJO_*` variables of `kmd_linux::config`.
//!
//! What `dojo run` itself does, in order:
//! 1. checks the machine before anything starts: the topology (the embedded MI210 or
//!    `--topology`), the mode, the partition plan and the GPU identity, so that a bad
//!    file is reported as `file:line:col` here rather than inside the program;
//! 2. writes the sysfs and procfs tree once into a temporary directory (`DOJO_FAKE_ROOT`,
//!    in `/dev/shm` unless `TMPDIR` is set), so the program and its children
//!    (rocminfo's `lsmod`) all see the same machine;
//! 3. runs the program with `LD_PRELOAD` and the variables set, forwarding SIGTERM and
//!    SIGHUP to it and ignoring SIGINT and SIGQUIT (the terminal sends those to the
//!    program too), like a shell waiting for a job;
//! 4. removes the directory and exits with the program's status, `128 + N` when signal
//!    N killed it, 127 when it does not exist and 126 when it cannot be executed.
//!
//! `--stats FILE` and `--trace FILE` are written by the simulation itself, in the
//! program's process, when it exits (`kmd_linux::local`); `dojo run` then prints the
//! kernel table from the statistics file, and with `--stats-format rocprof` rewrites it
//! as rocprof's per-dispatch CSV (`crate::rocprof_csv`).
//!
//! **Architecture Invariant:** the command line alone describes the run. The variables
//! `dojo run` owns (`OWNED_VARS`: `DOJO_MACHINE`, `DOJO_TOPOLOGY`, `DOJO_WORKERS`,
//! `DOJO_PARTITIONER`, `DOJO_MODE`, `DOJO_STATS`, `DOJO_FAKE_ROOT`, `DOJO_LOG_IOCTLS`,
//! `DOJO_TRACE_FILE`, `DOJO_DAEMON`, `DOJO_SET`) are set from the flags or removed from
//! the program's environment, never inherited from the caller's.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

use amdgpu::gpu::stats::StatsFile;
use anyhow::{anyhow, bail, Context as _};
use clap::Args;
use kmd_linux::config::{self, ResolvedMachine, DEFAULT_TOPOLOGY};
use kmd_linux::identity::{IdentityError, SystemIdentity};
use simdojo::topology::Topology;

/// File name of the interposer library, as cargo builds package `dojo-interposer`.
pub const INTERPOSER_FILE: &str = "libdojo_interposer.so";

/// Variable naming the interposer library explicitly (else it is looked for next to
/// the `dojo` executable).
pub const ENV_INTERPOSER: &str = "DOJO_INTERPOSER";

/// The variables of `kmd_linux::config` that a run sets or clears.
const OWNED_VARS: [&str; 11] = [
    config::ENV_MACHINE,
    config::ENV_TOPOLOGY,
    config::ENV_WORKERS,
    config::ENV_PARTITIONER,
    config::ENV_MODE,
    config::ENV_STATS,
    config::ENV_FAKE_ROOT,
    config::ENV_LOG_IOCTLS,
    config::ENV_TRACE_FILE,
    config::ENV_DAEMON,
    config::ENV_SET,
];

/// How to simulate the machine: the options shared by `dojo run` and `dojo bench run`.
#[derive(Args, Debug, Clone, Default)]
pub struct RunOptions {
    /// Topology file of the simulated machine (default: the embedded MI210, gfx90a).
    #[arg(long, alias = "config", value_name = "FILE")]
    pub topology: Option<PathBuf>,
    /// Worker threads of the simulation (default: the topology's, else 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// Partitioner: single, round-robin, linear, subtree[:PREFIX], manual, mincut.
    #[arg(long)]
    pub partitioner: Option<String>,
    /// Simulation mode of the compute units: functional or timing (default: the
    /// topology's).
    #[arg(long)]
    pub mode: Option<String>,
    /// Write statistics as JSON to FILE when the program exits, as `dojo exec --stats`
    /// does (`{"kernels": [per kernel], "components": {...}}`), and print the kernel
    /// table on stderr.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Observe the simulation and write a Chrome trace (JSON, which Perfetto loads) to
    /// FILE when the program exits, as `dojo exec --trace FILE` does.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub trace: Option<Option<PathBuf>>,
    /// Log every device call (ioctl, mapping) of the program on stderr.
    #[arg(long)]
    pub log_ioctls: bool,
    #[command(flatten)]
    pub set: crate::set_args::SetArgs,
}

/// Arguments of `dojo run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    options: RunOptions,
    /// Start a daemon (`dojo daemon`) for this run and run APP against it; the daemon
    /// stops, and its socket goes, when APP exits. The daemon's simulation writes no
    /// statistics or trace of one program's (`--stats`, `--trace` are refused).
    #[arg(long, conflicts_with_all = ["attach", "stats", "trace"])]
    daemon: bool,
    /// Run APP against the daemon already running at the usual socket.
    #[arg(long, conflicts_with_all = ["stats", "trace"])]
    attach: bool,
    /// After the run, run the same command again as N one-worker copies at once (N =
    /// `--workers`, at least 2; their output discarded) and print the parallel run's
    /// share of that ceiling: copies' wall / (N x this run's wall).
    #[arg(long, conflicts_with_all = ["daemon", "attach"])]
    ceiling: bool,
    /// The format of the `--stats FILE`: `json` (as the driver writes it) or `rocprof`,
    /// which `dojo run` turns the file into after the program exits: a CSV with one row
    /// per kernel dispatch in rocprof's `results.csv` column names (as `dojo exec
    /// --stats-format rocprof`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "json", requires = "stats")]
    stats_format: crate::rocprof_csv::StatsFormat,
    /// The program and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "APP"
    )]
    command: Vec<OsString>,
}

/// A checked configuration and its generated sysfs tree, ready to run programs in.
/// Dropping it removes the tree.
pub struct Session {
    /// The machine as the driver will present it.
    system: SystemIdentity,
    /// Variables to set in the program's environment.
    vars: Vec<(&'static str, OsString)>,
    /// The directory holding `sys/` and `proc/` (`DOJO_FAKE_ROOT`).
    root: tempfile::TempDir,
}

impl Session {
    /// Checks `options`, finds the interposer and writes the sysfs tree.
    pub fn new(options: &RunOptions) -> anyhow::Result<Session> {
        Session::build(options, false)
    }

    /// [`Session::new`] for `dojo daemon`: its GPUs offer no SVM (shared virtual memory
    /// needs the application's address space, which the daemon does not share), so
    /// ROCm's managed memory falls back to pinned host memory.
    pub fn for_daemon(options: &RunOptions) -> anyhow::Result<Session> {
        Session::build(options, true)
    }

    fn build(options: &RunOptions, daemon: bool) -> anyhow::Result<Session> {
        let trace = match &options.trace {
            Some(Some(t)) => Some(t),
            // A bare `--trace` was the device-call log before it took a file.
            Some(None) => bail!("--trace takes a FILE for the simulation's Chrome trace (as `dojo exec --trace FILE`); the log of device calls is --log-ioctls"),
            None => None,
        };
        let spec = crate::machine_spec::spec(options.topology.as_deref(), DEFAULT_TOPOLOGY, options.mode.as_deref(), &options.set);
        let display_name = spec.source.display_name();
        let topology = crate::machine_spec::resolve(&spec)?;
        let plan = crate::plan::choose(&topology, options.workers, options.partitioner.as_deref())?;
        let system = SystemIdentity::from_topology(&topology)
            .map_err(|e| identity_error(&topology, &display_name, e))?;
        if system.gpus.is_empty() {
            bail!("{display_name}: the topology has no GPU for the driver to present");
        }
        let system = if daemon { system.without_svm() } else { system };
        let interposer = find_interposer()?;

        let root = tree_directory()?;
        kmd_linux::sysfs::write_tree(root.path(), &system)
            .with_context(|| format!("writing the sysfs tree in {}", root.path().display()))?;

        let mut vars: Vec<(&'static str, OsString)> = Vec::new();
        vars.push((
            "LD_PRELOAD",
            preload_value(&interposer, std::env::var_os("LD_PRELOAD").as_deref())?,
        ));
        // The program's simulator (or the daemon) builds exactly this machine: resolved
        // once here, handed over whole.
        let machine = root.path().join("dojo-machine.json");
        let workers = plan.n_partitions;
        ResolvedMachine { topology, assignment: plan.assignment, workers }
            .write(&machine)
            .with_context(|| format!("writing {}", machine.display()))?;
        vars.push((config::ENV_MACHINE, machine.into_os_string()));
        if let Some(s) = &options.stats {
            let abs =
                std::path::absolute(s).with_context(|| format!("resolving {}", s.display()))?;
            vars.push((config::ENV_STATS, abs.into_os_string()));
        }
        vars.push((config::ENV_FAKE_ROOT, root.path().as_os_str().to_owned()));
        if let Some(t) = trace {
            let abs = std::path::absolute(t).with_context(|| format!("resolving {}", t.display()))?;
            vars.push((config::ENV_TRACE_FILE, abs.into_os_string()));
        }
        if options.log_ioctls {
            vars.push((config::ENV_LOG_IOCTLS, "1".into()));
        }
        Ok(Session { system, vars, root })
    }

    /// The machine the program will see.
    pub fn system(&self) -> &SystemIdentity {
        &self.system
    }

    /// Sends the program's device calls to the daemon at `socket`.
    pub fn use_daemon(&mut self, socket: &Path) {
        self.vars.push((config::ENV_DAEMON, socket.as_os_str().to_owned()));
    }

    /// The variables the program's environment gets.
    pub fn vars(&self) -> impl Iterator<Item = (&'static str, &OsStr)> {
        self.vars.iter().map(|(k, v)| (*k, v.as_os_str()))
    }

    /// The directory standing for `/` in the faked paths.
    pub fn fake_root(&self) -> &Path {
        self.root.path()
    }

    /// A command running `program` with `args` on the simulated machine.
    pub fn command(&self, program: &OsStr, args: &[OsString]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args);
        for var in OWNED_VARS {
            cmd.env_remove(var);
        }
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `program` with `args` to completion, relaying signals as a shell does.
    pub fn run(&self, program: &OsStr, args: &[OsString]) -> Result<ExitStatus, SpawnError> {
        let child = self
            .command(program, args)
            .spawn()
            .map_err(|source| SpawnError {
                program: program.to_owned(),
                source,
            })?;
        wait_relaying_signals(child).map_err(|source| SpawnError {
            program: program.to_owned(),
            source,
        })
    }
}

/// A program that could not be started or waited for.
#[derive(Debug)]
pub struct SpawnError {
    program: OsString,
    source: io::Error,
}

impl SpawnError {
    /// The status a shell gives for this failure: 127 (not found), 126 (not
    /// executable), else 2.
    pub fn status(&self) -> u8 {
        match self.source.kind() {
            io::ErrorKind::NotFound => 127,
            io::ErrorKind::PermissionDenied => 126,
            _ => 2,
        }
    }
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let program = Path::new(&self.program).display();
        match self.source.kind() {
            io::ErrorKind::NotFound if self.program.as_encoded_bytes().contains(&b'/') => {
                write!(f, "{program}: no such file")
            }
            io::ErrorKind::NotFound => write!(f, "{program}: command not found in PATH"),
            io::ErrorKind::PermissionDenied => {
                write!(f, "{program}: not executable ({})", self.source)
            }
            _ => write!(f, "{program}: {}", self.source),
        }
    }
}

impl std::error::Error for SpawnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Where memory-backed scratch space usually is; the tree's few hundred small files
/// are written there unless `TMPDIR` says otherwise (on a disk-backed `/tmp` writing
/// them can take most of a second).
const MEMORY_TMP: &str = "/dev/shm";

/// A new directory for the sysfs tree: in `$TMPDIR` if set, else in `/dev/shm` if
/// writable, else in the system's temporary directory.
fn tree_directory() -> anyhow::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("dojo-run-");
    if std::env::var_os("TMPDIR").is_none_or(|v| v.is_empty()) {
        if let Ok(dir) = builder.tempdir_in(MEMORY_TMP) {
            return Ok(dir);
        }
    }
    builder.tempdir().with_context(|| {
        format!(
            "creating the sysfs directory in {}",
            std::env::temp_dir().display()
        )
    })
}

/// An identity problem, placed at the declaration of the component it names.
fn identity_error(t: &Topology, file: &str, e: IdentityError) -> anyhow::Error {
    let component = match &e {
        IdentityError::NoComputeUnits { soc } | IdentityError::NoCommandProcessors { soc } => {
            Some(soc)
        }
        IdentityError::Param { component, .. } | IdentityError::Target { component, .. } => {
            Some(component)
        }
        _ => None,
    };
    let place = component
        .and_then(|path| t.components.iter().find(|c| &c.path == path))
        .and_then(|c| c.origin.as_ref())
        .map(|loc| loc.to_string())
        .unwrap_or_else(|| file.to_string());
    anyhow!("{place}: not a GPU the driver can present: {e}")
}

/// The interposer: `$DOJO_INTERPOSER`, else `libdojo_interposer.so` next to `dojo`.
fn find_interposer() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os(ENV_INTERPOSER).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!("{ENV_INTERPOSER}={}: no such file", path.display());
        }
        return std::path::absolute(&path).with_context(|| format!("resolving {}", path.display()));
    }
    let exe = std::env::current_exe().context("locating the dojo executable")?;
    let dir = exe
        .parent()
        .ok_or_else(|| anyhow!("{}: no parent directory", exe.display()))?;
    let path = dir.join(INTERPOSER_FILE);
    if !path.is_file() {
        bail!(
            "the interposer {} is missing: build it with `cargo build -p dojo-interposer` (the same profile as dojo), \
             or name it in {ENV_INTERPOSER}",
            path.display()
        );
    }
    Ok(path)
}

/// `LD_PRELOAD` with the interposer first, then what the caller preloads.
fn preload_value(interposer: &Path, existing: Option<&OsStr>) -> anyhow::Result<OsString> {
    let text = interposer.as_os_str();
    // ld.so splits LD_PRELOAD at spaces and colons.
    if text
        .as_encoded_bytes()
        .iter()
        .any(|b| matches!(b, b' ' | b':'))
    {
        bail!(
            "{}: the interposer's path must not contain spaces or colons (LD_PRELOAD splits at them)",
            interposer.display()
        );
    }
    let mut value = text.to_owned();
    if let Some(rest) = existing.filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(rest);
    }
    Ok(value)
}

/// The child being waited for; signal handlers forward to it.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(signal: libc::c_int) {
    let pid = CHILD.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe; a stale pid is at worst our own finished child.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Signal dispositions while a child runs, restored on drop.
struct SignalRelay {
    saved: Vec<(libc::c_int, libc::sighandler_t)>,
}

impl SignalRelay {
    fn install(pid: u32) -> SignalRelay {
        CHILD.store(pid as i32, Ordering::Relaxed);
        let handler = forward_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        let mut saved = Vec::new();
        for (signal, action) in [
            (libc::SIGINT, libc::SIG_IGN),
            (libc::SIGQUIT, libc::SIG_IGN),
            (libc::SIGTERM, handler),
            (libc::SIGHUP, handler),
        ] {
            // SAFETY: both dispositions are valid: SIG_IGN, or a handler that only
            // loads an atomic and calls kill.
            let old = unsafe { libc::signal(signal, action) };
            if old != libc::SIG_ERR {
                saved.push((signal, old));
            }
        }
        SignalRelay { saved }
    }
}

impl Drop for SignalRelay {
    fn drop(&mut self) {
        for &(signal, old) in &self.saved {
            // SAFETY: restores the disposition signal() returned for this signal.
            unsafe {
                libc::signal(signal, old);
            }
        }
        CHILD.store(0, Ordering::Relaxed);
    }
}

fn wait_relaying_signals(mut child: Child) -> io::Result<ExitStatus> {
    let _relay = SignalRelay::install(child.id());
    child.wait()
}

/// The status a shell reports for `status`: the exit code, or 128 + the signal.
pub fn shell_status(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => (code & 0xff) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 255,
    }
}

/// The name of a signal, for the message after a program was killed.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    format!("{name} (signal {signal})")
}

/// What identifies one version of a file: inode, size and modification time.
type FileVersion = Option<(u64, u64, i64, i64)>;

fn file_version(path: &Path) -> FileVersion {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::metadata(path).ok()?;
    Some((m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

/// Prints the statistics the driver wrote to `path` (JSON, one entry per kernel, as
/// `dojo exec --stats` writes) as a table on stderr, or says why there are none, and
/// rewrites the file in `format`. `before` is the file as it was before the program ran.
fn report_stats(path: &Path, before: FileVersion, format: crate::rocprof_csv::StatsFormat) {
    let after = file_version(path);
    if after.is_none() || after == before {
        eprintln!(
            "dojo run: no statistics were written to {} (the program launched no kernel?)",
            path.display()
        );
        return;
    }
    match StatsFile::read(path) {
        Ok(file) => {
            eprint!("{}", amdgpu::gpu::stats::table(&file.kernels));
            if format == crate::rocprof_csv::StatsFormat::Rocprof {
                if let Err(e) = crate::rocprof_csv::write(path, &file.kernels) {
                    eprintln!("dojo run: writing the statistics as rocprof CSV to {}: {e}", path.display());
                }
            }
        }
        Err(e) => eprintln!("dojo run: reading the statistics: {e}"),
    }
}

/// Runs `dojo run`.
pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let (program, args) = a
        .command
        .split_first()
        .ok_or_else(|| anyhow!("no program given: dojo run -- APP [ARGS...]"))?;
    let workers = a.options.workers.unwrap_or(1);
    if a.ceiling && workers < 2 {
        bail!("--ceiling compares --workers N (N at least 2) with N one-worker copies");
    }
    let started = std::time::Instant::now();
    let mut session = Session::new(&a.options)?;
    let mut daemon = None;
    if a.daemon {
        let (child, dir) = start_daemon(&a.options)?;
        session.use_daemon(&dir.path().join("daemon.sock"));
        daemon = Some((child, dir));
    } else if a.attach {
        let location = crate::daemon_cmd::location(None)?;
        session.use_daemon(&location.socket);
    }
    let status = run_in_session(&a, &session, program, args);
    if let Some((mut child, dir)) = daemon {
        // SAFETY: signals our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
        drop(dir);
    }
    if a.ceiling {
        let own: Vec<OsString> = std::env::args_os().skip(1).collect();
        crate::ceiling_run::report(workers, started.elapsed(), &own, program)?;
    }
    status
}

/// Starts `dojo daemon` in a new private directory; returns once it listens.
fn start_daemon(options: &RunOptions) -> anyhow::Result<(Child, tempfile::TempDir)> {
    let dir = tempfile::Builder::new().prefix("dojo-daemon-").tempdir().context("creating the daemon's directory")?;
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    }
    let exe = std::env::current_exe().context("finding dojo")?;
    let mut cmd = Command::new(exe);
    cmd.arg("daemon").arg("--dir").arg(dir.path());
    if let Some(t) = &options.topology {
        cmd.arg("--topology").arg(t);
    }
    if let Some(w) = options.workers {
        cmd.arg("--workers").arg(w.to_string());
    }
    if let Some(p) = &options.partitioner {
        cmd.arg("--partitioner").arg(p);
    }
    if let Some(m) = &options.mode {
        cmd.arg("--mode").arg(m);
    }
    let mut child = cmd.spawn().context("starting dojo daemon")?;
    let socket = dir.path().join("daemon.sock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
            return Ok((child, dir));
        }
        if let Some(status) = child.try_wait()? {
            bail!("dojo daemon exited before listening ({status})");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            bail!("dojo daemon did not listen within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn run_in_session(a: &RunArgs, session: &Session, program: &OsStr, args: &[OsString]) -> anyhow::Result<ExitCode> {
    if a.options.log_ioctls {
        for gpu in &session.system().gpus {
            eprintln!("dojo run: {gpu}");
        }
        eprintln!("dojo run: sysfs tree in {}", session.fake_root().display());
    }
    let stats_before = a.options.stats.as_deref().and_then(file_version);
    let trace = a.options.trace.as_ref().and_then(|t| t.as_deref());
    let trace_before = trace.and_then(file_version);
    let status = match session.run(program, args) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("dojo run: {e}");
            return Ok(ExitCode::from(e.status()));
        }
    };
    if let Some(path) = &a.options.stats {
        report_stats(path, stats_before, a.stats_format);
    }
    if let Some(path) = trace {
        let after = file_version(path);
        if after.is_none() || after == trace_before {
            eprintln!("dojo run: no trace was written to {} (the program never used the GPU?)", path.display());
        }
    }
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            let core = if status.core_dumped() {
                ", core dumped"
            } else {
                ""
            };
            eprintln!(
                "dojo run: {} killed by {}{core}",
                Path::new(program).display(),
                signal_name(signal)
            );
        }
    }
    Ok(ExitCode::from(shell_status(status)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt as _;

    #[test]
    fn the_interposer_comes_first_in_ld_preload() {
        let so = Path::new("/opt/dojo/libdojo_interposer.so");
        assert_eq!(
            preload_value(so, None).unwrap(),
            "/opt/dojo/libdojo_interposer.so"
        );
        assert_eq!(
            preload_value(so, Some(OsStr::new(""))).unwrap(),
            "/opt/dojo/libdojo_interposer.so"
        );
        assert_eq!(
            preload_value(so, Some(OsStr::new("/usr/lib/libfoo.so /x/libbar.so"))).unwrap(),
            "/opt/dojo/libdojo_interposer.so:/usr/lib/libfoo.so /x/libbar.so"
        );
        let spaced = preload_value(Path::new("/my dir/libdojo_interposer.so"), None).unwrap_err();
        assert!(spaced.to_string().contains("spaces or colons"), "{spaced}");
        assert!(preload_value(Path::new("/a:b/libdojo_interposer.so"), None).is_err());
    }

    #[test]
    fn statuses_are_reported_as_a_shell_does() {
        // Raw wait statuses: exit code in bits 8..16, signal in the low 7 bits.
        assert_eq!(shell_status(ExitStatus::from_raw(0)), 0);
        assert_eq!(shell_status(ExitStatus::from_raw(7 << 8)), 7);
        assert_eq!(shell_status(ExitStatus::from_raw(255 << 8)), 255);
        assert_eq!(shell_status(ExitStatus::from_raw(libc::SIGABRT)), 134);
        assert_eq!(shell_status(ExitStatus::from_raw(libc::SIGKILL)), 137);
        assert_eq!(
            shell_status(ExitStatus::from_raw(libc::SIGSEGV | 0x80)),
            139,
            "core dumped"
        );
        assert_eq!(signal_name(libc::SIGABRT), "SIGABRT (signal 6)");
        assert_eq!(signal_name(40), "signal 40");
    }

    #[test]
    fn spawn_failures_map_to_shell_statuses() {
        let missing = SpawnError {
            program: "nope".into(),
            source: io::Error::from(io::ErrorKind::NotFound),
        };
        assert_eq!(missing.status(), 127);
        assert_eq!(missing.to_string(), "nope: command not found in PATH");
        let gone = SpawnError {
            program: "./gone".into(),
            source: io::Error::from(io::ErrorKind::NotFound),
        };
        assert_eq!(gone.to_string(), "./gone: no such file");
        let denied = SpawnError {
            program: "/etc/passwd".into(),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert_eq!(denied.status(), 126);
        assert!(denied.to_string().contains("not executable"), "{denied}");
    }
}
