//! Unmodified ROCm programs under `dojo run`, as a user runs them: Debian's rocminfo,
//! the HIP programs of `examples/rocm` built by Debian's hipcc, the OpenMP offload
//! program built by clang-19; and `dojo run`'s own contract (environment, status,
//! errors, the shared sysfs tree).
//!
//! Requirements, checked at run time:
//! - the interposer `libdojo_interposer.so` next to `dojo`: built here (cargo, the
//!   profile `dojo` was built with) unless `DOJO_INTERPOSER` names one;
//! - hipcc and rocminfo (`scripts/deps` installs them): a test that needs a missing
//!   tool prints why and returns; clang-19 with libomp-19-dev for the OpenMP test.
//!
//! Programs are built once per source and flags into `CARGO_TARGET_TMPDIR/rocm`, and
//! every `dojo run` is killed (with its program) when it exceeds its time limit.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kmd_linux::sysfs::parse_properties;

mod common;
use common::*;

// ---------------------------------------------------------------------------------
// rocminfo and the HIP programs

#[test]
fn rocminfo_lists_the_simulated_gfx90a_agent_and_its_compute_units() {
    let Some(rocminfo) = which("rocminfo") else {
        have(
            "rocminfo",
            "rocminfo_lists_the_simulated_gfx90a_agent_and_its_compute_units",
        );
        return;
    };
    let out = dojo_run(&[], &rocminfo, &[], &[], PROGRAM_LIMIT);
    out.expect_code(0, "rocminfo");
    assert!(
        out.stdout.contains("ROCk module is loaded"),
        "{}",
        out.stdout
    );
    let value_of = |label: &str| -> Vec<String> {
        out.stdout
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(label))
            .map(|rest| rest.trim().to_string())
            .collect()
    };
    assert!(
        value_of("Name:").iter().any(|v| v == "gfx90a"),
        "no agent named gfx90a:\n{}",
        out.stdout
    );
    let cus = identity(None).cu_count.to_string();
    assert!(
        value_of("Compute Unit:").contains(&cus),
        "no `Compute Unit: {cus}` line:\n{}",
        out.stdout
    );
}

#[test]
fn vector_add_of_one_mebi_elements() {
    if let Some(out) = hip_passes("vector_add", &[]) {
        assert!(
            out.stdout.contains("vector_add: 1048576 elements"),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn reduction_with_shared_memory_and_atomics() {
    hip_passes("reduction", &[]);
}

#[test]
fn lds_tiled_transpose() {
    hip_passes("transpose", &[]);
}

#[test]
fn wave64_shuffles_and_ballots() {
    if let Some(out) = hip_passes("warp_ops", &[]) {
        assert!(out.stdout.contains("of 64 lanes"), "{}", out.stdout);
    }
}

#[test]
fn streams_with_async_copies_and_events() {
    hip_passes("streams", &[]);
}

/// The sum of every `name` counter in a component statistics file.
fn counter_sum(json: &serde_json::Value, name: &str) -> u64 {
    match json {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| if k == name { v.as_u64().unwrap_or(0) } else { counter_sum(v, name) })
            .sum(),
        serde_json::Value::Array(a) => a.iter().map(|v| counter_sum(v, name)).sum(),
        _ => 0,
    }
}

#[test]
fn copies_through_the_sdma_engines_give_the_blit_kernels_results() {
    if !have("hipcc", "copies_through_the_sdma_engines_give_the_blit_kernels_results") {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rocm-sdma-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    for (name, args) in [("vector_add", &["65536"][..]), ("streams", &[])] {
        let program = hip(name);
        let mut outputs = Vec::new();
        for (sdma, mode) in [("1", "functional"), ("0", "functional"), ("1", "timing")] {
            let stats = dir.join(format!("{name}-{sdma}-{mode}.json"));
            let flags = ["--mode", mode, "--stats", stats.to_str().expect("a UTF-8 path")];
            let env = [("HSA_ENABLE_SDMA", OsStr::new(sdma))];
            let out = dojo_run(&flags, &program, args, &env, PROGRAM_LIMIT);
            let what = format!("{name} with HSA_ENABLE_SDMA={sdma} in {mode} mode");
            out.expect_pass(&what);
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&stats).expect("the statistics")).expect("JSON");
            let json = &json["components"];
            let (packets, bytes) = (counter_sum(json, "sdma_packets"), counter_sum(json, "sdma_bytes"));
            if sdma == "1" {
                // hipMemcpy between host and device goes through the SDMA engines.
                assert!(packets > 0 && bytes > 0, "{what}: {packets} SDMA packets, {bytes} bytes");
            } else {
                assert_eq!(packets, 0, "{what}: blit kernels only");
            }
            assert_eq!(counter_sum(json, "sdma_faults"), 0, "{what}");
            outputs.push(out.stdout);
        }
        // vector_add prints a digest of its result.
        assert!(outputs.iter().all(|o| *o == outputs[0]), "{name}: outputs differ: {outputs:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_hundred_back_to_back_launches() {
    hip_passes("launches", &[]);
}

#[test]
fn float_and_double_math() {
    hip_passes("math", &[]);
}

#[test]
fn device_printf_reaches_stdout() {
    let Some(out) = hip_passes("printf", &[]) else {
        return;
    };
    for (block, thread) in [(0, 0), (0, 32), (1, 0), (1, 32)] {
        let line = format!(
            "block {block} thread {thread} tag 7 value {:.2} text 0x{:x}",
            thread as f64 * 0.25,
            0xabcdef12345u64 + thread
        );
        assert!(
            out.stdout.lines().any(|l| l == line),
            "missing {line:?} in\n{}",
            out.stdout
        );
    }
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| l.starts_with("block "))
            .count(),
        4,
        "{}",
        out.stdout
    );
}

#[test]
fn a_wild_store_is_a_memory_access_fault_within_seconds() {
    if !have(
        "hipcc",
        "a_wild_store_is_a_memory_access_fault_within_seconds",
    ) {
        return;
    }
    let out = dojo_run(&[], &hip("out_of_bounds"), &[], &[], FAULT_LIMIT);
    out.expect_gpu_fault("a wild store", "Page not present");
}

/// The environment of a run with XNACK on or off, whatever the test's environment says.
fn xnack(on: bool) -> [(&'static str, &'static OsStr); 1] {
    [("HSA_XNACK", OsStr::new(if on { "1" } else { "0" }))]
}

/// What `managed` prints on the simulated MI210 with SVM; `pageable` is the end of its
/// output, which depends on the XNACK mode.
fn managed_output(pageable: &str) -> String {
    format!(
        "managed memory: yes\n\
         host -> kernel -> host: 100000 ints, sum 58048758\n\
         prefetch to device and back: last prefetch location cpu\n\
         advice: read-mostly 1, preferred location device 0, accessed by device 0 yes\n\
         after partial advice: read-mostly over all 0, preferred over all mixed\n\
         large: 1280 MiB, one int per MiB\n\
         alternating host and kernel: 6 rounds, sum 957152563\n\
         {pageable}PASS\n"
    )
}

#[test]
fn managed_memory_on_one_and_two_workers_with_xnack_off_and_on() {
    if !have("hipcc", "managed_memory_on_one_and_two_workers_with_xnack_off_and_on") {
        return;
    }
    let program = hip("managed");
    // Both modes are set explicitly, so an HSA_XNACK in the test's environment does not
    // change them.
    let modes = [
        ("XNACK off", xnack(false), managed_output("pageable memory access: no\n")),
        ("XNACK on", xnack(true), managed_output(
            "pageable memory access: yes\n\
             kernel on malloc memory: 70000 ints\n\
             kernel on a small malloc: 1000 ints, sum 1502500\n",
        )),
    ];
    for (mode, env, want) in modes {
        for workers in ["1", "2"] {
            let out = dojo_run(&["--workers", workers], &program, &[], &env, PROGRAM_LIMIT);
            let what = format!("managed, {mode}, {workers} worker(s)");
            out.expect_pass(&what);
            assert_eq!(out.stdout, want, "{what}");
        }
    }
}

#[test]
fn a_kernel_on_malloc_memory_faults_without_xnack() {
    if !have("hipcc", "a_kernel_on_malloc_memory_faults_without_xnack") {
        return;
    }
    let out = dojo_run(&[], &hip("managed"), &["malloc"], &xnack(false), FAULT_LIMIT);
    out.expect_gpu_fault("a kernel on malloc memory without XNACK", "Page not present");
}

#[test]
fn a_kernel_storing_to_read_only_memory_faults_with_xnack() {
    if !have("hipcc", "a_kernel_storing_to_read_only_memory_faults_with_xnack") {
        return;
    }
    let out = dojo_run(&[], &hip("managed"), &["readonly"], &xnack(true), FAULT_LIMIT);
    out.expect_gpu_fault("a store to read-only memory with XNACK", "Write access to a read-only page");
}

#[test]
fn a_kernel_on_freed_malloc_memory_faults_with_xnack() {
    if !have("hipcc", "a_kernel_on_freed_malloc_memory_faults_with_xnack") {
        return;
    }
    let out = dojo_run(&[], &hip("managed"), &["freed"], &xnack(true), FAULT_LIMIT);
    assert!(out.stdout.contains("kernel on the block: a[7] = 8"), "the first kernel ran:\n{}\n{}", out.stdout, out.stderr);
    out.expect_gpu_fault("a kernel on freed malloc memory with XNACK", "Page not present");
}

#[test]
fn managed_memory_under_the_daemon_is_pinned_host_memory() {
    if !have("hipcc", "managed_memory_under_the_daemon_is_pinned_host_memory") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = dojo_run(&["--daemon"], &hip("managed"), &[], &[("TMPDIR", tmp.path().as_os_str())], PROGRAM_LIMIT);
    out.expect_pass("managed under dojo run --daemon");
    assert_eq!(
        out.stdout,
        "managed memory: no\n\
         host -> kernel -> host: 100000 ints, sum 58048758\n\
         prefetch to device and back: last prefetch location not recorded\n\
         advice: skipped (no SVM)\n\
         alternating host and kernel: 6 rounds, sum 957152563\n\
         pageable memory access: no\n\
         PASS\n"
    );
}

#[test]
fn results_do_not_depend_on_the_worker_count() {
    if !have("hipcc", "results_do_not_depend_on_the_worker_count") {
        return;
    }
    for (name, args) in [
        ("vector_add", &["65536"][..]),
        ("reduction", &[]),
        ("warp_ops", &[]),
    ] {
        let program = hip(name);
        let one = dojo_run(&["--workers", "1"], &program, args, &[], PROGRAM_LIMIT);
        let two = dojo_run(&["--workers", "2"], &program, args, &[], PROGRAM_LIMIT);
        one.expect_pass(&format!("{name} on 1 worker"));
        two.expect_pass(&format!("{name} on 2 workers"));
        assert_eq!(one.stdout, two.stdout, "{name}: 1 and 2 workers differ");
    }
}

#[test]
fn cooperative_launch_with_grid_syncs_on_one_and_two_workers_and_the_daemon() {
    if !have("hipcc", "cooperative_launch_with_grid_syncs_on_one_and_two_workers_and_the_daemon") {
        return;
    }
    let program = hip("cooperative");
    let one = dojo_run(&["--workers", "1"], &program, &[], &[], PROGRAM_LIMIT);
    let two = dojo_run(&["--workers", "2"], &program, &[], &[], PROGRAM_LIMIT);
    one.expect_pass("cooperative on 1 worker");
    two.expect_pass("cooperative on 2 workers");
    assert_eq!(one.stdout, two.stdout, "cooperative: 1 and 2 workers differ");
    for line in [
        "cooperative launch: 1, multi-device: 1",
        // The largest grid HIP allows from the sysfs limits and the kernel's occupancy:
        // 8 blocks of 4 waves on each of the MI210's 104 compute units, all co-resident.
        "grid: 832 blocks of 256 threads (8 per compute unit)",
        "833 blocks: hipErrorCooperativeLaunchTooLarge",
        "multi-device launch on 2 GPUs: hipErrorInvalidValue",
    ] {
        assert!(one.stdout.contains(line), "no line {line:?} in\n{}", one.stdout);
    }
    // The daemon forwards ALLOC_QUEUE_GWS like any self-contained ioctl.
    let tmp = tempfile::tempdir().unwrap();
    let daemon = dojo_run(&["--daemon"], &program, &[], &[("TMPDIR", tmp.path().as_os_str())], PROGRAM_LIMIT);
    daemon.expect_pass("cooperative under the daemon");
    assert_eq!(one.stdout, daemon.stdout, "cooperative: local and daemon runs differ");
}

#[test]
fn a_grid_sync_in_an_ordinary_launch_faults_naming_gws() {
    if !have("hipcc", "a_grid_sync_in_an_ordinary_launch_faults_naming_gws") {
        return;
    }
    let out = dojo_run(&[], &hip("cooperative"), &["plain"], &[], FAULT_LIMIT);
    out.expect_gpu_fault("a grid sync in an ordinary launch", "Page not present");
    assert!(
        out.stderr.contains("ds_gws_barrier") && out.stderr.contains("holds no global wave sync resources"),
        "the simulator must say why:\n{}",
        out.stderr
    );
}

#[test]
fn openmp_target_region_runs_on_the_gpu() {
    let test = "openmp_target_region_runs_on_the_gpu";
    let runtime = Path::new("/usr/lib/llvm-19/lib");
    if !have("clang-19", test) {
        return;
    }
    if !runtime.join("libomptarget.so").exists() {
        eprintln!(
            "skipped {test}: {} has no libomptarget (install libomp-19-dev)",
            runtime.display()
        );
        return;
    }
    let device_libs = "--rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
    let flags = [
        "-fopenmp",
        "--offload-arch=gfx90a",
        "-mcode-object-version=4",
        "-O2",
        device_libs,
    ];
    let program = build("clang-19", &flags, &repo("examples/rocm/saxpy_omp.c"), &[]);
    let env = [("LD_LIBRARY_PATH", runtime.as_os_str())];
    let out = dojo_run(&[], &program, &[], &env, PROGRAM_LIMIT);
    out.expect_pass("saxpy_omp");
    assert!(
        out.stdout
            .contains("initial device in the target region: 0"),
        "{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------------
// What the machine looks like: the generated sysfs, through the interposer

/// The GPU node's properties as `cat` reads them at the path rocm_agent_enumerator uses.
fn gpu_properties(flags: &[&str]) -> std::collections::BTreeMap<String, u64> {
    let cat = which("cat").expect("cat");
    let out = dojo_run(
        flags,
        &cat,
        &["/sys/class/kfd/kfd/topology/nodes/1/properties"],
        &[],
        PLAIN_LIMIT,
    );
    out.expect_code(0, "cat");
    parse_properties(&out.stdout)
}

#[test]
fn the_default_machine_is_an_mi210_and_gfx942_presents_its_own_identity() {
    let mi210 = gpu_properties(&[]);
    assert_eq!(mi210.get("gfx_target_version"), Some(&90010), "{mi210:?}");
    assert_eq!(
        mi210.get("simd_count"),
        Some(&u64::from(identity(None).simd_count()))
    );

    let file = repo("topologies/mi300x.toml");
    let mi300x = gpu_properties(&["--topology", file.to_str().expect("a UTF-8 path")]);
    let want = identity(Some("topologies/mi300x.toml"));
    assert_eq!(mi300x.get("gfx_target_version"), Some(&90402), "{mi300x:?}");
    assert_eq!(
        mi300x.get("simd_count"),
        Some(&u64::from(want.simd_count()))
    );
    assert_eq!(mi300x.get("num_xcc"), Some(&8));
    assert_eq!(mi300x.get("device_id"), Some(&u64::from(want.device_id)));
}

// ---------------------------------------------------------------------------------
// `dojo run` itself

#[test]
fn the_program_gets_the_machine_in_its_environment_and_its_status_is_forwarded() {
    let shell = which("sh").expect("sh");
    // The machine comes resolved, whole, in the file DOJO_MACHINE names (the script
    // copies it out: the fake root goes with the program); the pieces a hand-made
    // LD_PRELOAD run would set stay empty.
    let script = sh("echo \"T=$DOJO_TOPOLOGY W=$DOJO_WORKERS P=$DOJO_PARTITIONER M=$DOJO_MODE X=$DOJO_LOG_IOCTLS\"; \
         echo \"S=$DOJO_STATS\"; echo \"C=$DOJO_TRACE_FILE\"; echo \"R=$DOJO_FAKE_ROOT\"; echo \"L=$LD_PRELOAD\"; \
         cp \"$DOJO_MACHINE\" \"$MACHINE_COPY\"; \
         cat \"$DOJO_FAKE_ROOT/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties\"; exit 7");
    let script: Vec<&str> = script.iter().map(String::as_str).collect();
    let copies = tempfile::tempdir().expect("a scratch directory");
    let (plain_copy, set_copy) = (copies.path().join("plain.json"), copies.path().join("set.json"));
    let machine = |copy: &Path| {
        let m = kmd_linux::config::ResolvedMachine::read(copy).expect("the resolved machine");
        let view = amdgpu::host::machine::Machine::of(&m.topology).expect("a GPU machine");
        (m, view)
    };
    // Inherited values of the variables dojo run owns do not leak into the program.
    let stale = [
        ("DOJO_WORKERS", OsStr::new("9")),
        ("DOJO_TOPOLOGY", OsStr::new("/nowhere.toml")),
        ("DOJO_MACHINE", OsStr::new("/nowhere.json")),
        ("MACHINE_COPY", plain_copy.as_os_str()),
    ];
    let plain = dojo_run(&[], &shell, &script, &stale, PLAIN_LIMIT);
    plain.expect_code(7, "sh");
    assert!(
        plain.stdout.contains("T= W= P= M= X=\n"),
        "{}",
        plain.stdout
    );
    let (m, view) = machine(&plain_copy);
    assert_eq!(m.workers, 1);
    assert_eq!(view.gpus[0].soc.params.target.isa(), amdgpu::isa::Target::Gfx90a, "the embedded MI210");
    assert!(plain.stdout.contains("S=\n") && plain.stdout.contains("C=\n"), "{}", plain.stdout);
    assert!(
        parse_properties(&plain.stdout).get("gfx_target_version") == Some(&90010),
        "{}",
        plain.stdout
    );
    let preload = plain
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("L="))
        .expect("an L= line");
    let first = preload.split([':', ' ']).next().unwrap_or("");
    let want = match std::env::var_os("DOJO_INTERPOSER").filter(|v| !v.is_empty()) {
        Some(v) => std::path::absolute(v).expect("an absolute path"),
        None => Path::new(env!("CARGO_BIN_EXE_dojo")).with_file_name("libdojo_interposer.so"),
    };
    assert_eq!(Path::new(first), want, "LD_PRELOAD={preload}");
    // The tree is removed once the program has exited.
    let root = plain
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("R="))
        .expect("an R= line");
    assert!(
        !root.is_empty() && !Path::new(root).exists(),
        "{root} is left behind"
    );

    let topology = repo("topologies/mi300x.toml")
        .canonicalize()
        .expect("mi300x.toml");
    let flags = [
        "--config",
        topology.to_str().expect("a UTF-8 path"),
        "--workers",
        "2",
        "--partitioner",
        "round-robin",
        "--mode",
        "timing",
        "--log-ioctls",
        "--stats",
        "stats.json",
        "--trace",
        "trace.json",
    ];
    let set = dojo_run(&flags, &shell, &script, &[("MACHINE_COPY", set_copy.as_os_str())], PLAIN_LIMIT);
    set.expect_code(7, "sh");
    assert!(set.stdout.contains("T= W= P= M= X=1\n"), "{}", set.stdout);
    let (m, view) = machine(&set_copy);
    assert_eq!(m.workers, 2);
    let round_robin: Vec<u32> = (0..m.topology.components.len() as u32).map(|i| i % 2).collect();
    assert_eq!(m.assignment.iter().map(|p| p.0).collect::<Vec<_>>(), round_robin, "--partitioner round-robin");
    assert_eq!(view.gpus[0].soc.params.target.isa(), amdgpu::isa::Target::Gfx942, "--config mi300x.toml");
    assert!(
        view.gpus[0].xcds.iter().flat_map(|x| &x.cus).all(|cu| cu.params.mode == amdgpu::components::cu::mode::Mode::Timing),
        "--mode timing"
    );
    let stats = std::env::current_dir()
        .expect("a working directory")
        .join("stats.json");
    assert!(
        set.stdout.contains(&format!("S={}\n", stats.display())),
        "{}",
        set.stdout
    );
    let trace = stats.with_file_name("trace.json");
    assert!(set.stdout.contains(&format!("C={}\n", trace.display())), "{}", set.stdout);
    // The shell never opened the GPU: no simulation, no trace, and dojo run says so.
    assert!(
        set.stderr.contains("no trace was written to trace.json"),
        "{}",
        set.stderr
    );
    assert!(
        parse_properties(&set.stdout).get("gfx_target_version") == Some(&90402),
        "{}",
        set.stdout
    );
    assert!(
        set.stderr.contains("gfx942 (304 CUs"),
        "--log-ioctls names the machine:\n{}",
        set.stderr
    );
}

#[test]
fn signals_and_missing_programs_give_shell_statuses() {
    let shell = which("sh").expect("sh");
    let killed = dojo_run(&[], &shell, &["-c", "kill -TERM $$"], &[], PLAIN_LIMIT);
    killed.expect_code(128 + libc::SIGTERM, "sh killed by SIGTERM");
    assert!(
        killed.stderr.contains("killed by SIGTERM"),
        "{}",
        killed.stderr
    );

    let missing = dojo_run(
        &[],
        Path::new("/nonexistent/program"),
        &[],
        &[],
        PLAIN_LIMIT,
    );
    missing.expect_code(127, "a missing program");
    assert!(
        missing
            .stderr
            .contains("/nonexistent/program: no such file"),
        "{}",
        missing.stderr
    );
    let unknown = dojo_run(
        &[],
        Path::new("dojo-no-such-command"),
        &[],
        &[],
        PLAIN_LIMIT,
    );
    unknown.expect_code(127, "an unknown command");
    assert!(
        unknown.stderr.contains("command not found"),
        "{}",
        unknown.stderr
    );
    let data = repo("examples/rocm/README.md");
    let denied = dojo_run(&[], &data, &[], &[], PLAIN_LIMIT);
    denied.expect_code(126, "a file that is not executable");
}

#[test]
fn bad_configurations_are_refused_before_the_program_starts() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rocm-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let marker = dir.join("started");
    let touch = format!("touch {}", marker.display());
    let shell = which("sh").expect("sh");

    let broken = dir.join("broken.toml");
    std::fs::write(
        &broken,
        "[engine]\nworkers = 1\n[[component]\nname = \"x\"\n",
    )
    .expect("writing");
    let gpu_less = repo("topologies/examples/ring.toml");
    let unknown_isa = dir.join("gfx1234.toml");
    let text =
        std::fs::read_to_string(repo("topologies/test-gfx90a.toml")).expect("test-gfx90a.toml");
    assert!(
        text.contains("target = \"gfx90a\""),
        "test-gfx90a.toml names its target"
    );
    std::fs::write(
        &unknown_isa,
        text.replace("target = \"gfx90a\"", "target = \"gfx1234\""),
    )
    .expect("writing");

    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--topology".into(), broken.display().to_string()],
            format!("{}:3:", broken.display()),
        ),
        (
            vec!["--topology".into(), gpu_less.display().to_string()],
            "no amdgpu.soc".into(),
        ),
        (
            vec!["--topology".into(), unknown_isa.display().to_string()],
            format!("{}:", unknown_isa.display()),
        ),
        (
            vec!["--mode".into(), "fast".into()],
            "--mode fast: `amdgpu.cu.mode=fast`: is \"fast\"; expected one of functional, timing".into(),
        ),
        (vec!["--partitioner".into(), "bogus".into()], "bogus".into()),
        (vec!["--workers".into(), "0".into()], "--workers".into()),
        // `--trace` takes the Chrome trace's file; the device-call log is a flag of its own.
        (vec!["--trace".into()], "the log of device calls is --log-ioctls".into()),
        // A daemon's simulation serves many programs: no one program's statistics.
        (vec!["--daemon".into(), "--stats".into(), "s.json".into()], "cannot be used with".into()),
        (vec!["--attach".into(), "--trace".into(), "t.json".into()], "cannot be used with".into()),
    ];
    for (flags, message) in cases {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        // Checked before the interposer is looked for: no build needed.
        let out = dojo(&run_args(&flags, &shell, &["-c", &touch]), &[], PLAIN_LIMIT);
        out.expect_code(2, &format!("{flags:?}"));
        assert!(
            out.stderr.contains(&message),
            "{flags:?}: want {message:?} in\n{}",
            out.stderr
        );
        assert!(!marker.exists(), "{flags:?}: the program ran");
    }

    let gone = dojo(
        &[OsStr::new("run"), OsStr::new("--"), OsStr::new("true")],
        &[(
            "DOJO_INTERPOSER",
            OsStr::new("/nonexistent/libdojo_interposer.so"),
        )],
        PLAIN_LIMIT,
    );
    gone.expect_code(2, "a missing interposer");
    assert!(
        gone.stderr
            .contains("DOJO_INTERPOSER=/nonexistent/libdojo_interposer.so"),
        "{}",
        gone.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_run_times_the_simulators_start_and_the_program() {
    interposer();
    let args = [
        "bench", "run", "--repeat", "2", "--json", "--", "sh", "-c", "exit 0",
    ];
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = dojo(&args, &[], PROGRAM_LIMIT);
    out.expect_code(0, "dojo bench run");
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON object");
    assert_eq!(json["repeat"], 2);
    assert_eq!(json["command"], serde_json::json!(["sh", "-c", "exit 0"]));
    for key in ["start_seconds", "run_seconds"] {
        let (min, median) = (json[key]["min"].as_f64(), json[key]["median"].as_f64());
        assert!(min.is_some_and(|m| m > 0.0), "{key}: {json}");
        assert!(median >= min, "{key}: {json}");
    }
    assert!(json["added_seconds"]["median"].is_f64(), "{json}");

    let failing = ["bench", "run", "--repeat", "1", "--", "sh", "-c", "exit 3"];
    let failing: Vec<&OsStr> = failing.iter().map(OsStr::new).collect();
    let out = dojo(&failing, &[], PROGRAM_LIMIT);
    out.expect_code(3, "a failing program's status");
}

#[test]
fn statistics_cover_every_kernel_the_program_launched() {
    if !have(
        "hipcc",
        "statistics_cover_every_kernel_the_program_launched",
    ) {
        return;
    }
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rocm-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let stats = dir.join("stats.json");
    let trace = dir.join("trace.json");
    // On two workers, observed for the trace, with the device calls logged.
    let flags = [
        "--workers",
        "2",
        "--stats",
        stats.to_str().expect("a UTF-8 path"),
        "--trace",
        trace.to_str().expect("a UTF-8 path"),
        "--log-ioctls",
    ];
    let out = dojo_run(&flags, &hip("launches"), &[], &[], PROGRAM_LIMIT);
    out.expect_pass("launches with --stats, --trace and --log-ioctls");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&stats).expect("the statistics file")).expect("JSON");
    // The shape `dojo exec --stats` writes: every kernel and every component.
    let object = json.as_object().expect("a JSON object");
    assert_eq!(object.keys().collect::<Vec<_>>(), ["components", "kernels"], "the statistics' keys");
    assert!(
        json["components"]["by_type"]["amdgpu.soc"].is_object(),
        "the SoC's statistics among the components: {}",
        json["components"]
    );
    let kernels = json["kernels"].as_array().expect("one entry per kernel");
    // One table on stderr, a header line per dispatch in the file's order.
    let headers: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("kernel ")).collect();
    assert_eq!(headers.len(), kernels.len(), "one table:\n{}", out.stderr);
    for (line, k) in headers.iter().zip(kernels) {
        let name = k["kernel"].as_str().expect("a kernel name");
        assert!(line.starts_with(&format!("kernel {name} (dispatch ")), "{line:?} for {name}");
    }
    // Every kernel of the program's and HIP's code objects is named by its symbol; only
    // ROCr's own blit kernels, which it assembles without an ELF image, keep their
    // descriptor's address.
    assert!(
        kernels.iter().any(|k| k["kernel"].as_str().is_some_and(|n| n.starts_with("__amd_rocclr_"))),
        "HIP's blit kernels named: {kernels:?}"
    );
    // ROCr's (`GpuAgent::AssembleShader`) start a buffer of their own with their
    // `amd_kernel_code_t`: a descriptor at a page's start, where no code object's can be
    // (its ELF header is there).
    for k in kernels {
        let name = k["kernel"].as_str().expect("a kernel name");
        if let Some(hex) = name.strip_prefix("0x") {
            let addr = u64::from_str_radix(hex, 16).expect("a hex address");
            assert_eq!(addr % 4096, 0, "{name}: a kernel of a code object is not named by its symbol");
        }
    }
    // The device calls were logged.
    assert!(out.stderr.contains("dojo: trace: open(/dev/kfd)"), "the device-call log:\n{}", out.stderr);
    // The Chrome trace of the run: metadata, windows and sampled events.
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).expect("the trace file")).expect("JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    for cat in ["window", "event"] {
        assert!(events.iter().any(|e| e["cat"] == cat && e["ph"] == "X" && e["dur"].is_number()), "{cat} events in the trace");
    }
    assert!(
        events.iter().any(|e| e["name"] == "thread_name" && e["args"]["name"] == "worker 1"),
        "a track per worker"
    );
    // HIP kernels carry their mangled names (`_Z10accumulatePii`).
    let ours: Vec<&serde_json::Value> = kernels
        .iter()
        .filter(|k| {
            k["kernel"]
                .as_str()
                .is_some_and(|n| n.contains("accumulate"))
        })
        .collect();
    assert_eq!(ours.len(), 200, "one entry per launch of accumulate");
    assert!(
        ours.iter()
            .all(|k| k["grid"] == serde_json::json!([1024, 1, 1])),
        "{:?}",
        ours[0]
    );
    assert!(
        out.stderr.contains("accumulate"),
        "a table on stderr:\n{}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_format_rocprof_rewrites_the_statistics_as_one_csv_row_per_dispatch() {
    if !have("hipcc", "stats_format_rocprof_rewrites_the_statistics_as_one_csv_row_per_dispatch") {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rocm-rocprof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let csv = dir.join("results.csv");
    let flags = ["--stats", csv.to_str().expect("a UTF-8 path"), "--stats-format", "rocprof"];
    let out = dojo_run(&flags, &hip("vector_add"), &["65536"], &[], PROGRAM_LIMIT);
    out.expect_pass("vector_add with --stats-format rocprof");
    let text = String::from_utf8(std::fs::read(&csv).expect("the statistics file")).expect("UTF-8");
    // Symbol names hold no comma or quote, so no field is quoted here (the writer's unit
    // test and exec_cli cover quoting).
    let lines: Vec<Vec<&str>> = text.strip_suffix("\r\n").expect("CRLF line ends").split("\r\n").map(|l| l.split(',').collect()).collect();
    let header = &lines[0];
    assert_eq!(header[..6], ["Index", "KernelName", "grd", "wgr", "BeginNs", "EndNs"], "{text}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} column: {header:?}"));
    // One row per dispatch, in the order of the kernel table `dojo run` printed from the
    // same statistics: names, grid and work-group sizes and waves agree.
    let tables: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("kernel ")).collect();
    let waves: Vec<u64> = out
        .stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("cycles "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "waves").expect("a waves figure");
            words[at + 1].parse().expect("a wave count")
        })
        .collect();
    let rows = &lines[1..];
    assert_eq!(rows.len(), tables.len(), "one row per dispatch:\n{text}\n{}", out.stderr);
    assert_eq!(waves.len(), rows.len());
    let items = |shape: &str| -> u64 { shape.split(", ").map(|n| n.parse::<u64>().expect("a size")).product() };
    for (i, ((row, table), waves)) in rows.iter().zip(&tables).zip(&waves).enumerate() {
        assert_eq!(row.len(), header.len(), "row {i}: {row:?}");
        assert_eq!(row[col("Index")], i.to_string());
        let name = row[col("KernelName")];
        assert!(table.starts_with(&format!("kernel {name} (dispatch ")), "row {i}: {name} for {table:?}");
        let grid = table.split("grid [").nth(1).and_then(|t| t.split(']').next()).expect("a grid");
        let block = table.split("block [").nth(1).and_then(|t| t.split(']').next()).expect("a block");
        assert_eq!(row[col("grd")].parse::<u64>().expect("grd"), items(grid), "row {i}");
        assert_eq!(row[col("wgr")].parse::<u64>().expect("wgr"), items(block), "row {i}");
        assert_eq!(row[col("SQ_WAVES")].parse::<u64>().expect("SQ_WAVES"), *waves, "row {i}");
        let ns = |c: &str| row[col(c)].parse::<u64>().expect("nanoseconds");
        assert!(ns("BeginNs") < ns("EndNs"), "row {i}: {row:?}");
    }
    // The program's kernel: 65536 work-items in waves of 64, each adding with the VALU.
    let ours = rows.iter().find(|r| r[col("KernelName")].contains("vector_add")).expect("vector_add's row");
    assert_eq!(ours[col("grd")], "65536");
    assert_eq!(ours[col("SQ_WAVES")], "1024");
    assert!(ours[col("SQ_INSTS_VALU")].parse::<u64>().expect("a count") > 0, "{ours:?}");
    assert!(ours[col("SQ_INSTS_VMEM_RD")].parse::<u64>().expect("a count") >= 2 * 1024, "two loads per wave: {ours:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------
// Daemon mode: one simulated GPU shared by several processes.

/// A `dojo daemon` serving from `dir`, its stderr collected; SIGTERMed on drop.
struct RunningDaemon {
    child: std::process::Child,
    dir: PathBuf,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl RunningDaemon {
    fn start(dir: &Path) -> RunningDaemon {
        interposer();
        let mut child = Command::new(env!("CARGO_BIN_EXE_dojo"))
            .arg("daemon")
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dojo daemon starts");
        let stderr = drain(child.stderr.take().expect("piped stderr"));
        let socket = dir.join("daemon.sock");
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(child.try_wait().unwrap().is_none(), "the daemon exited before listening");
            assert!(start.elapsed() < PLAIN_LIMIT, "the daemon did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        RunningDaemon { child, dir: dir.to_path_buf(), stderr: Some(stderr) }
    }

    fn attach(&self, program: &Path, args: &[&str]) -> Outcome {
        let mut argv: Vec<&OsStr> = vec![OsStr::new("run"), OsStr::new("--attach"), OsStr::new("--"), program.as_os_str()];
        argv.extend(args.iter().map(OsStr::new));
        dojo(&argv, &[("DOJO_RUNTIME_DIR", self.dir.as_os_str())], PROGRAM_LIMIT)
    }

    /// Stops the daemon; returns its log.
    fn stop(mut self) -> String {
        // SAFETY: signals our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the daemon ends cleanly on SIGTERM: {status}");
        self.stderr.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default()
    }
}

impl Drop for RunningDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_daemon_serves_two_programs_at_once_survives_a_killed_client_and_garbage() {
    if !have("hipcc", "daemon") {
        return;
    }
    let (add, reduce) = (hip("vector_add"), hip("reduction"));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rt");
    let daemon = RunningDaemon::start(&dir);
    {
        use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "a private directory");
        assert!(std::fs::metadata(dir.join("daemon.sock")).unwrap().file_type().is_socket());
    }

    // Two programs at the same time on the one GPU.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| daemon.attach(&add, &["65536"]));
        let b = s.spawn(|| daemon.attach(&reduce, &[]));
        (a.join().unwrap(), b.join().unwrap())
    });
    a.expect_pass("vector_add through the daemon");
    b.expect_pass("reduction through the daemon");

    // A client killed in the middle of its work: the others are not disturbed. Nothing
    // here depends on how fast the host simulates: the victim holds 64 MiB of device
    // memory and then waits in a command that never ends by itself; the bystander holds
    // 16 MiB (written by a GPU memset) until the test says the victim is dead, then frees
    // it and ends. The test kills the victim only after both have said (through files)
    // that they hold their memory.
    let (victim_ready, bystander_ready, victim_dead) =
        (tmp.path().join("victim-ready"), tmp.path().join("bystander-ready"), tmp.path().join("victim-dead"));
    let hold = hip("hold_memory");
    let mut victim = Command::new(env!("CARGO_BIN_EXE_dojo"));
    victim
        .args([OsStr::new("run"), OsStr::new("--attach"), OsStr::new("--"), hold.as_os_str(), OsStr::new("64")])
        // hold_memory hands its remaining arguments, joined, to system().
        .arg(format!("touch '{}'; exec sleep 100000", victim_ready.display()))
        .env("DOJO_RUNTIME_DIR", &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut victim = victim.spawn().unwrap();
    let wait_for = |file: &Path, who: &str, alive: &mut dyn FnMut() -> bool| {
        let start = Instant::now();
        while !file.exists() {
            assert!(alive(), "{who} ended before it said it was ready");
            assert!(start.elapsed() < PROGRAM_LIMIT, "{who} never said it was ready (hang guard)");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let bystander_command =
        format!("touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done", bystander_ready.display(), victim_dead.display());
    // Releases the bystander however this scope ends, so a failure here never leaves
    // it waiting until its hang guard.
    struct Release<'a>(&'a Path);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            let _ = std::fs::write(self.0, b"");
        }
    }
    let bystander = std::thread::scope(|s| {
        let release = Release(&victim_dead);
        let bystander = s.spawn(|| daemon.attach(&hold, &["16", &bystander_command]));
        wait_for(&victim_ready, "the victim", &mut || victim.try_wait().unwrap().is_none());
        wait_for(&bystander_ready, "the bystander", &mut || !bystander.is_finished());
        // SAFETY: kill(2) on the group the victim leads.
        unsafe { libc::kill(-(victim.id() as i32), libc::SIGKILL) };
        let status = victim.wait().unwrap();
        assert!(!status.success(), "the victim was killed, it cannot have finished");
        drop(release);
        bystander.join().unwrap()
    });
    bystander.expect_pass("a client running while another is killed");

    // Garbage on the socket: that connection is dropped, nothing else.
    {
        use std::io::{Read as _, Write as _};
        let mut s = std::os::unix::net::UnixStream::connect(dir.join("daemon.sock")).unwrap();
        s.write_all(&[0xab; 64]).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).unwrap_or(0);
        assert!(n < 64, "the daemon does not answer garbage with more garbage");
    }

    // A new client runs fine afterwards.
    daemon.attach(&add, &["4096"]).expect_pass("vector_add after a killed client and garbage");
    let log = daemon.stop();
    assert!(
        log.lines().any(|l| l.contains("reclaimed its context") && !l.contains("(0 buffers")),
        "the daemon reclaims a dead client's buffers:\n{log}"
    );
    assert!(log.matches("connected").count() >= 4, "{log}");
    assert!(!dir.join("daemon.sock").exists(), "the socket is removed at shutdown");
}

#[test]
fn dojo_run_daemon_leaves_no_daemon_or_socket_behind() {
    if !have("hipcc", "daemon run") {
        return;
    }
    interposer();
    let program = hip("vector_add");
    let tmp = tempfile::tempdir().unwrap();
    let out = dojo(
        &[OsStr::new("run"), OsStr::new("--daemon"), OsStr::new("--"), program.as_os_str(), OsStr::new("16384")],
        &[("TMPDIR", tmp.path().as_os_str())],
        PROGRAM_LIMIT,
    );
    out.expect_pass("vector_add under dojo run --daemon");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "nothing left in TMPDIR: {left:?}");
    // No daemon of this run is alive (its directory was under TMPDIR).
    let needle = tmp.path().to_string_lossy().into_owned();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline);
            assert!(!(cmdline.contains("daemon") && cmdline.contains(&needle)), "a daemon is still running: {cmdline}");
        }
    }
}

// ---------------------------------------------------------------------------------
// Images: textures, surfaces and arrays (MIMG instructions, ROCclr's image blits)

/// Builds the HIP program NAME and runs it on one and two workers: both must pass with
/// the same output, which must contain every line of `lines`.
fn image_program_passes_on_one_and_two_workers(name: &str, lines: &[&str]) {
    if !have("hipcc", name) {
        return;
    }
    let program = hip(name);
    let one = dojo_run(&["--workers", "1"], &program, &[], &[], PROGRAM_LIMIT);
    let two = dojo_run(&["--workers", "2"], &program, &[], &[], PROGRAM_LIMIT);
    one.expect_pass(&format!("{name} on 1 worker"));
    two.expect_pass(&format!("{name} on 2 workers"));
    assert_eq!(one.stdout, two.stdout, "{name}: 1 and 2 workers differ");
    for line in lines {
        assert!(one.stdout.lines().any(|l| l == *line), "{name}: no line {line:?} in\n{}", one.stdout);
    }
}

#[test]
fn texture_objects_filter_and_address_as_the_host_computes() {
    image_program_passes_on_one_and_two_workers(
        "texture",
        &[
            "texture: 16 x 8 float array, 12 sampler configurations x 256 points",
            "texture: 16 x 8 uchar4 array read as normalized floats",
            "texture: tex1Dfetch of 1000 floats",
        ],
    );
}

#[test]
fn surface_objects_and_2d_array_copies() {
    image_program_passes_on_one_and_two_workers(
        "surface",
        &[
            "surface: 40 x 24 float written and read by kernels, copied out",
            "surface: a 17 x 9 rectangle at (5, 3) copied in",
            "surface: 40 x 24 int2 written and read by kernels",
        ],
    );
}

#[test]
fn three_dimensional_and_layered_arrays() {
    image_program_passes_on_one_and_two_workers(
        "arrays",
        &[
            "arrays: 12 x 10 x 6 float volume, tex3D point and trilinear at 320 points",
            "arrays: surf3Dread/surf3Dwrite over the volume, hipMemcpy3D back",
            "arrays: 4-layer 12 x 10 array read with tex2DLayered",
        ],
    );
}
