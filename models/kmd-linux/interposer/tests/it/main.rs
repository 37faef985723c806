//! The interposer, loaded with `LD_PRELOAD` into small C programs (compiled here with
//! `cc`) and into real tools (`sh`, `lsmod`, `rocminfo`), against the real local driver.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use kmd_linux::config::{load_topology, ENV_FAKE_ROOT, ENV_TOPOLOGY, ENV_LOG_IOCTLS};
use kmd_linux::identity::SystemIdentity;

/// `libdojo_interposer.so` of this test's target directory and profile. Cargo does not
/// build a cdylib for integration tests, so the first call builds it (a no-op when it
/// is up to date).
fn library() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // <target>/<profile>/deps/it-<hash>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("<target>/<profile>");
        let target_dir = profile_dir.parent().expect("<target>");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "build",
                "-p",
                "dojo-interposer",
                "--profile",
                profile,
                "--target-dir",
            ])
            .arg(target_dir)
            .status()
            .expect("running cargo build");
        assert!(status.success(), "cargo build -p dojo-interposer failed");
        let lib = profile_dir.join("libdojo_interposer.so");
        assert!(lib.exists(), "{} missing", lib.display());
        lib
    })
}

/// Compiles `tests/it/c/<name>.c` into `dir`.
fn compile(name: &str, dir: &Path) -> PathBuf {
    let src_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/c");
    let exe = dir.join(name);
    let out = Command::new("cc")
        .args(["-std=gnu11", "-O1", "-Wall", "-pthread", "-o"])
        .arg(&exe)
        .arg(src_dir.join(format!("{name}.c")))
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "cc {name}.c:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// A simulated machine's sysfs tree (the default MI210) with a marker file, for
/// `DOJO_FAKE_ROOT`.
fn fake_root(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    let topology = load_topology(None).expect("default topology");
    let system = SystemIdentity::from_topology(&topology).expect("identity");
    kmd_linux::sysfs::write_tree(&root, &system).expect("write_tree");
    std::fs::write(
        root.join(kmd_linux::sysfs::TOPOLOGY_DIR)
            .join("dojo-test-marker"),
        "marker-1234\n",
    )
    .unwrap();
    root
}

/// What a run printed.
struct Run {
    stdout: String,
    stderr: String,
}

/// Runs `cmd` with the interposer preloaded, a private `TMPDIR` and a time limit;
/// asserts it succeeded.
fn run(dir: &Path, program: &[&str], env: &[(&str, &str)]) -> Run {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", "120"]).args(program);
    cmd.env("LD_PRELOAD", library())
        .env("TMPDIR", &tmp)
        .env_remove(ENV_FAKE_ROOT)
        .env_remove(ENV_TOPOLOGY);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("spawning the program");
    let run = Run {
        stdout: String::from_utf8_lossy(&stdout).into(),
        stderr: String::from_utf8_lossy(&stderr).into(),
    };
    assert!(
        status.success(),
        "{program:?}: {status}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    run
}

/// The value of `key=` in `text`.
fn value<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key}= in:\n{text}"))
}

fn fd_of(stdout: &str, name: &str) -> i32 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("fds "))
        .expect("fds line");
    let field = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix(name).and_then(|r| r.strip_prefix('=')));
    field
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

#[test]
fn device_descriptors_reach_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("devices", dir.path());
    let out = run(dir.path(), &[exe.to_str().unwrap()], &[(ENV_LOG_IOCTLS, "1")]);
    assert!(out.stdout.contains("done"), "{}", out.stdout);
    let (kfd, render, d1, d2, d3) = (
        fd_of(&out.stdout, "kfd"),
        fd_of(&out.stdout, "render"),
        fd_of(&out.stdout, "d1"),
        fd_of(&out.stdout, "d2"),
        50,
    );
    let trace = &out.stderr;
    for line in [
        format!("open(/dev/kfd) -> fd {kfd}"),
        format!("open(/dev/dri/renderD128) -> fd {render}"),
        format!("ioctl(fd {kfd} /dev/kfd, 0x80084b01)"),
        format!("dup fd {kfd} (/dev/kfd) -> fd {d1}"),
        format!("dup fd {kfd} (/dev/kfd) -> fd {d2}"),
        format!("dup fd {kfd} (/dev/kfd) -> fd {d3}"),
        format!("ioctl(fd {d2} /dev/kfd, 0x80084b01)"),
        format!("close(fd {kfd}) (/dev/kfd)"),
        format!("ioctl(fd {d3} /dev/kfd, 0x80084b01)"),
        format!("close(fd {d1}) (/dev/kfd) by dup2"),
        format!("mmap(fd {d3} /dev/kfd, len 0x1000, offset 0x7ffff000)"),
        format!("close(fd {d2}) (/dev/kfd)"),
        format!("close(fd {d3}) (/dev/kfd)"),
        format!("close(fd {render}) (/dev/dri/renderD128)"),
    ] {
        assert!(
            trace.contains(&format!("dojo: trace: {line}")),
            "no trace line {line:?} in:\n{trace}"
        );
    }
    // After the dup2 onto it, d1 is /dev/null: its ioctl is not the driver's.
    assert!(!trace.contains(&format!("ioctl(fd {d1} ")), "{trace}");
    // The closed fds are not closed twice.
    assert_eq!(
        trace.matches(&format!("close(fd {d3}) ")).count(),
        1,
        "{trace}"
    );
}

#[test]
fn faked_files_come_from_the_fake_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = fake_root(dir.path());
    let exe = compile("sysfs", dir.path());
    let out = run(
        dir.path(),
        &[exe.to_str().unwrap()],
        &[(ENV_FAKE_ROOT, root.to_str().unwrap())],
    );
    let topo = root.join(kmd_linux::sysfs::TOPOLOGY_DIR);
    let expected_generation = std::fs::read_to_string(topo.join("generation_id")).unwrap();
    let s = &out.stdout;
    assert_eq!(value(s, "generation_id"), expected_generation.trim());
    assert_eq!(value(s, "marker_messy_path"), "marker-1234");
    assert_eq!(value(s, "marker_relative"), "marker-1234");
    assert_eq!(value(s, "gfx_target_version"), "90010");
    assert_eq!(
        value(s, "nodes"),
        std::fs::read_dir(topo.join("nodes"))
            .unwrap()
            .count()
            .to_string()
    );
    assert_eq!(value(s, "link"), "../../devices/virtual/kfd/kfd");
    assert_eq!(value(s, "proc_modules_amdgpu"), "1");
    assert_eq!(
        value(s, "lsmod"),
        "amdgpu",
        "lsmod in a shell child sees the simulated module"
    );
}

#[test]
fn a_forked_child_loses_the_device_but_keeps_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("fork", dir.path());
    let out = run(dir.path(), &[exe.to_str().unwrap()], &[]);
    assert!(out.stdout.contains("done"), "{}", out.stdout);
}

#[test]
fn concurrent_first_calls_start_one_driver_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("threads", dir.path());
    let out = run(dir.path(), &[exe.to_str().unwrap()], &[("DOJO_LOG_IOCTLS", "1")]);
    assert!(out.stdout.contains("done"), "{}", out.stdout);
    // One driver started (it says so once when tracing), and its tree is gone at exit.
    let started = out.stderr.matches("dojo: trace: driver started").count();
    assert_eq!(started, 1, "drivers started:\n{}", out.stderr);
    let trees = std::fs::read_dir(dir.path().join("tmp")).unwrap().count();
    assert_eq!(trees, 0, "generated trees left behind");
}

#[test]
fn a_driver_that_cannot_start_leaves_no_device_and_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("nodriver", dir.path());
    let missing = dir.path().join("no-such-topology.toml");
    let out = run(
        dir.path(),
        &[exe.to_str().unwrap()],
        &[(ENV_TOPOLOGY, missing.to_str().unwrap())],
    );
    assert!(out.stdout.contains("done"), "{}", out.stdout);
    let messages: Vec<_> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("dojo:"))
        .collect();
    assert_eq!(messages.len(), 1, "{}", out.stderr);
    assert!(messages[0].contains("did not start"), "{}", messages[0]);
}

#[test]
fn programs_that_never_touch_the_gpu_never_start_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let script = "ls / >/dev/null && cat /etc/hostname /proc/self/status >/dev/null && stat /dev/null >/dev/null && echo ok";
    let out = run(dir.path(), &["/bin/sh", "-c", script], &[(ENV_LOG_IOCTLS, "1")]);
    assert_eq!(out.stdout.trim(), "ok");
    assert_eq!(out.stderr, "");
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
        0,
        "a sysfs tree was generated"
    );
}

/// rocminfo (Debian's ROCm 5.2.3) gets past its module check and asks the driver for
/// its version. Needs the `rocminfo` package; without it the test says so and passes.
#[test]
fn rocminfo_reaches_the_driver() {
    let rocminfo = Path::new("/usr/bin/rocminfo");
    if !rocminfo.exists() {
        eprintln!("rocminfo not installed: not checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // rocminfo fails further on (until the driver implements the KFD), so no `run`.
    let out = Command::new("timeout")
        .args(["-k", "5", "120", "/usr/bin/rocminfo"])
        .env("LD_PRELOAD", library())
        .env("TMPDIR", &tmp)
        .env(ENV_LOG_IOCTLS, "1")
        .env_remove(ENV_FAKE_ROOT)
        .env_remove(ENV_TOPOLOGY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("ROCk module is loaded"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains("/dev/kfd, 0x80084b01)"),
        "no GET_VERSION ioctl in:\n{stderr}"
    );
}

#[test]
fn an_unsupported_ioctl_fails_with_one_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("unsupported", dir.path());
    let out = run(dir.path(), &[exe.to_str().unwrap()], &[]);
    assert!(out.stdout.contains("done"), "{}\n{}", out.stdout, out.stderr);
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("not supported")).collect();
    assert_eq!(warnings.len(), 1, "one warning for three calls:\n{}", out.stderr);
    assert!(warnings[0].starts_with("dojo: ") && warnings[0].contains("0x7f"), "{}", warnings[0]);
}

#[test]
fn memory_the_program_unmaps_leaves_its_svm_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("svm", dir.path());
    let root = fake_root(dir.path());
    let out = run(dir.path(), &[exe.to_str().unwrap()], &[(ENV_FAKE_ROOT, root.to_str().unwrap())]);
    assert!(out.stdout.contains("done"), "{}\n{}", out.stdout, out.stderr);
}
