//! Helpers shared by the test binaries that run ROCm programs under `dojo run`
//! (`rocm.rs`, `rocm_smi.rs`, `rocm_time.rs`): finding tools, building the interposer
//! and the HIP programs of `examples/rocm`, running `dojo` under a time limit.
#![allow(dead_code)] // each test binary uses its own subset

use std::collections::hash_map::DefaultHasher;
use std::ffi::OsStr;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use kmd_linux::identity::GpuIdentity;
// The time limits are hang guards, not speed requirements: no assertion depends on how
// fast the machine is, so they are several times what the slowest case takes on one
// CPU shared with a busy loop (`scripts/test-stress`). A test asserts what happened
// (output, status, the fault's or the watchdog's message), never how long it took.
/// Time limit of one ROCm program (start-up included).
pub const PROGRAM_LIMIT: Duration = Duration::from_secs(600);
/// Time limit of a faulting program (the fault's message, not the time, shows that the
/// fault ended it rather than the watchdog).
pub const FAULT_LIMIT: Duration = Duration::from_secs(300);
/// Time limit of a run that does not start the simulator.
pub const PLAIN_LIMIT: Duration = Duration::from_secs(180);

pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

// ---------------------------------------------------------------------------------
// Tools and the interposer

/// The executable `name` in PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Whether `tool` is installed; if not, says that the calling test is skipped.
pub fn have(tool: &str, test: &str) -> bool {
    let found = which(tool).is_some();
    if !found {
        eprintln!("skipped {test}: `{tool}` not found (install Debian's ROCm: bash scripts/deps)");
    }
    found
}

/// Cargo's `--target-dir`, `--profile` and `--target` that built `dojo`. `cargo test`
/// builds it with the `test` profile into `debug/` (the interposer carries the whole
/// simulator, so its optimization level matters), `cargo test --release` with
/// `release`; a custom profile has a directory of its own name.
pub fn dojo_build() -> (PathBuf, String, Option<String>) {
    let exe = Path::new(env!("CARGO_BIN_EXE_dojo"));
    let profile_dir = exe.parent().expect("dojo is in a profile directory");
    let name = profile_dir
        .file_name()
        .expect("a profile directory")
        .to_string_lossy()
        .into_owned();
    let profile = if name == "debug" {
        "test".to_string()
    } else {
        name
    };
    let above = profile_dir
        .parent()
        .expect("the profile directory is in a target directory");
    // target/<triple>/<profile> when cargo built for an explicit --target.
    let triple = above.file_name().map(|n| n.to_string_lossy().into_owned());
    match triple {
        Some(t) if t.matches('-').count() >= 2 && above.join("../CACHEDIR.TAG").is_file() => (
            above.parent().expect("a target directory").to_path_buf(),
            profile,
            Some(t),
        ),
        _ => (above.to_path_buf(), profile, None),
    }
}

/// Makes sure `dojo run` finds an up-to-date interposer: with `DOJO_INTERPOSER` set
/// there is nothing to do; otherwise cargo builds `dojo-interposer` next to `dojo`
/// (once per test process). Panics with cargo's output when the build fails.
pub fn interposer() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let result = BUILT.get_or_init(|| {
        if std::env::var_os("DOJO_INTERPOSER").is_some_and(|v| !v.is_empty()) {
            return Ok(());
        }
        let (target_dir, profile, triple) = dojo_build();
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args(["build", "-p", "dojo-interposer", "--profile", &profile])
            .arg("--target-dir")
            .arg(&target_dir);
        if let Some(t) = &triple {
            cargo.args(["--target", t]);
        }
        let out = cargo
            .current_dir(repo(""))
            .output()
            .map_err(|e| format!("running cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`cargo build -p dojo-interposer --profile {profile}` failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let so = Path::new(env!("CARGO_BIN_EXE_dojo")).with_file_name("libdojo_interposer.so");
        if !so.is_file() {
            return Err(format!(
                "cargo built dojo-interposer but {} is missing",
                so.display()
            ));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("the interposer is not available: {e}");
    }
}

// ---------------------------------------------------------------------------------
// Building the programs

/// Serializes compiler runs (two cores; hipcc takes seconds each).
pub static BUILDING: Mutex<()> = Mutex::new(());

/// Builds `source` with `compiler` and `flags` (the output path is appended after
/// `-o`), once per content: the result is kept under a name hashing the sources and
/// the command.
pub fn build(compiler: &str, flags: &[&str], source: &Path, extra_inputs: &[&Path]) -> PathBuf {
    build_and_link(compiler, flags, source, extra_inputs, &[])
}

/// [`build`], with `link` (libraries) after the source on the command line.
pub fn build_and_link(
    compiler: &str,
    flags: &[&str],
    source: &Path,
    extra_inputs: &[&Path],
    link: &[&str],
) -> PathBuf {
    let mut hasher = DefaultHasher::new();
    compiler.hash(&mut hasher);
    flags.hash(&mut hasher);
    link.hash(&mut hasher);
    for input in std::iter::once(&source).chain(extra_inputs) {
        let text = std::fs::read(input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        text.hash(&mut hasher);
    }
    let stem = source
        .file_stem()
        .expect("a source file")
        .to_string_lossy()
        .into_owned();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocm");
    std::fs::create_dir_all(&dir).expect("creating the program directory");
    let program = dir.join(format!("{stem}-{:016x}", hasher.finish()));
    let _lock = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    if program.is_file() {
        return program;
    }
    let partial = dir.join(format!("{stem}.{}.partial", std::process::id()));
    let out = Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&partial)
        .arg(source)
        .args(link)
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // A rename is atomic: a concurrent test process sees the whole program or none.
    std::fs::rename(&partial, &program).expect("moving the program into place");
    program
}

/// The HIP program `examples/rocm/NAME.hip`, built by Debian's hipcc for gfx90a.
pub fn hip(name: &str) -> PathBuf {
    let source = repo(&format!("examples/rocm/{name}.hip"));
    build(
        "hipcc",
        &["--offload-arch=gfx90a", "-O2"],
        &source,
        &[&repo("examples/rocm/check.h")],
    )
}

// ---------------------------------------------------------------------------------
// Running `dojo`

/// How a `dojo` process ended.
pub struct Outcome {
    /// How it exited.
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Outcome {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Panics with the whole output unless the status is `code`.
    pub fn expect_code(&self, code: i32, what: &str) {
        assert_eq!(
            self.code(),
            Some(code),
            "{what}: status {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
    }

    /// Panics unless the program exited 0 with `PASS` as its last line.
    pub fn expect_pass(&self, what: &str) {
        self.expect_code(0, what);
        assert_eq!(
            self.stdout.lines().last(),
            Some("PASS"),
            "{what}: stdout\n{}",
            self.stdout
        );
    }

    /// Panics unless the program died of a GPU memory fault that the runtime reported
    /// (ROCR's "Memory access fault by GPU ... Reason: `reason`"), the simulator intact.
    pub fn expect_gpu_fault(&self, what: &str, reason: &str) {
        assert_ne!(self.code(), Some(0), "{what}: the program must fail\n{}\n{}", self.stdout, self.stderr);
        assert!(
            !self.stdout.contains("PASS") && !self.stdout.contains("did not fault"),
            "{what}: the runtime did not report the fault:\n{}\n{}",
            self.stdout,
            self.stderr
        );
        assert!(
            self.stderr.contains("Memory access fault") && self.stderr.contains(&format!("Reason: {reason}")),
            "{what}: no fault with the reason {reason:?} in stderr:\n{}",
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{what}: the simulator crashed:\n{}", self.stderr);
    }
}

/// Reads a pipe to its end on a thread.
pub fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `dojo ARGS` with `env` added, in its own process group; kills the group and
/// panics with the output so far if it takes longer than `limit`.
pub fn dojo(args: &[&OsStr], env: &[(&str, &OsStr)], limit: Duration) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dojo"));
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.process_group(0);
    let mut child = cmd.spawn().expect("dojo starts");
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for dojo") {
            break status;
        }
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the process group that dojo leads (pgid = its pid).
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            panic!(
                "dojo {:?} did not finish within {} s\n--- stdout\n{}\n--- stderr\n{}",
                args,
                limit.as_secs(),
                stdout.join().unwrap_or_default(),
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Outcome {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// The arguments of `dojo run [FLAGS] -- PROGRAM ARGS`.
pub fn run_args<'a>(flags: &[&'a str], program: &'a Path, args: &[&'a str]) -> Vec<&'a OsStr> {
    let mut all: Vec<&OsStr> = vec![OsStr::new("run")];
    all.extend(flags.iter().map(|f| OsStr::new(*f)));
    all.push(OsStr::new("--"));
    all.push(program.as_os_str());
    all.extend(args.iter().map(|a| OsStr::new(*a)));
    all
}

/// `dojo run [FLAGS] -- PROGRAM ARGS` under `limit`, with the interposer built.
pub fn dojo_run(
    flags: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
    limit: Duration,
) -> Outcome {
    interposer();
    dojo(&run_args(flags, program, args), env, limit)
}

/// Builds and runs the HIP program NAME; it must print PASS.
pub fn hip_passes(name: &str, args: &[&str]) -> Option<Outcome> {
    if !have("hipcc", name) {
        return None;
    }
    let out = dojo_run(&[], &hip(name), args, &[], PROGRAM_LIMIT);
    out.expect_pass(name);
    Some(out)
}

pub fn sh(script: &str) -> Vec<String> {
    vec!["-c".to_string(), script.to_string()]
}

/// The identity of the only GPU of a topology file (the embedded default when None).
pub fn identity(file: Option<&str>) -> GpuIdentity {
    amdgpu::link_components();
    let t =
        kmd_linux::config::load_topology(file.map(repo).as_deref()).expect("the topology loads");
    GpuIdentity::from_topology(&t).expect("one GPU")
}

