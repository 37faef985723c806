//! The `dojo` command as a user runs it: real processes, real files.

use std::path::PathBuf;
use std::process::{Command, Output};

fn dojo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dojo")).args(args).output().expect("dojo runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dojo-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn repo(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn malformed_topologies_exit_2_with_file_line_and_column() {
    let dir = scratch("bad");
    let cases = [
        ("syntax.toml", "[[component]]\npath = \"a\"\ntype = \n", ":3:"),
        ("unknown_type.toml", "[[component]]\npath = \"a\"\ntype = \"phold.lpp\"\n", ":3:8"),
        ("bad_param.toml", "[[component]]\npath = \"a\"\ntype = \"phold.lp\"\nparams = { remote = \"often\" }\n", ":4:"),
        ("absurd.toml", "[[component]]\npath = \"a[0..100000000000]\"\ntype = \"phold.lp\"\n", ":2:"),
        (
            "zero_latency.toml",
            "[[component]]\npath = \"lp[0..2]\"\ntype = \"phold.lp\"\n[[fabric]]\nports = \"lp[0..2].net\"\nlatency = 0\n",
            ":6:",
        ),
    ];
    for (name, text, position) in cases {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        for cmd in ["topology", "sim"] {
            let out = dojo(&[cmd, file.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{cmd} {name}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains(&format!("{name}{position}")), "{cmd} {name}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn topology_summarizes_plans_and_exports_dot() {
    let ring = repo("topologies/examples/ring.toml");
    let out = dojo(&["topology", &ring, "--workers", "2", "--partitioner", "round-robin"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("phold.lp") && text.contains("lookahead: 1.000ns"), "{text}");
    let dot = dojo(&["topology", &ring, "--dot"]);
    assert!(stdout(&dot).starts_with("digraph") || stdout(&dot).starts_with("graph"), "{}", stdout(&dot));
    let bad = dojo(&["topology", &ring, "--partitioner", "magic"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("magic"), "{}", stderr(&bad));
}

#[test]
fn sim_checkpoint_and_restore_match_the_uninterrupted_run_at_other_worker_counts() {
    let ring = repo("topologies/examples/ring.toml");
    let dir = scratch("ckpt");
    let (whole, part, ckpt) = (dir.join("whole.json"), dir.join("part.json"), dir.join("ring.ckpt"));
    let out = dojo(&["sim", &ring, "--workers", "1", "--stats", whole.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = dojo(&[
        "sim", &ring, "--workers", "2", "--checkpoint-at", "400ns", "--checkpoint-out", ckpt.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = dojo(&[
        "sim", &ring, "--workers", "3", "--partitioner", "round-robin", "--restore", ckpt.to_str().unwrap(),
        "--stats", part.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let a: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&whole).unwrap()).unwrap();
    let b: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&part).unwrap()).unwrap();
    assert_eq!(a, b);
    assert!(a["by_type"]["phold.lp"]["events"].as_u64().unwrap() > 10_000);
}

#[test]
fn phold_bench_digest_is_the_same_for_every_worker_count_and_partitioner() {
    let mut digests = Vec::new();
    // The last case runs two independent copies at once (the host's parallel ceiling).
    for (workers, partitioner, copies) in
        [("1", "linear", "1"), ("2", "linear", "1"), ("2", "mincut", "1"), ("4", "round-robin", "1"), ("1", "linear", "2")]
    {
        let out = dojo(&[
            "bench", "phold", "--lps", "64", "--end-time", "400", "--workers", workers, "--partitioner", partitioner,
            "--copies", copies, "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        for key in ["events", "events_per_sec", "epochs", "digest"] {
            assert!(v.get(key).is_some(), "missing {key}: {v}");
        }
        assert_eq!(v["copy_events_per_sec"].as_array().map(Vec::len), Some(copies.parse().unwrap()), "{v}");
        digests.push((v["events"].as_u64().unwrap(), v["digest"].as_str().unwrap().to_string()));
    }
    assert!(digests.windows(2).all(|w| w[0] == w[1]), "{digests:?}");
}

#[test]
fn plugins_lists_registered_types_and_rejects_unknown_ones() {
    let out = dojo(&["plugins", "phold.lp"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("lookahead") && stdout(&out).contains("net"));
    let out = dojo(&["plugins", "nope.nothing"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Collapses runs of white space, as the comparison allows.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn disasm_prints_what_llvm_objdump_prints() {
    let dir = scratch("disasm");
    let src = dir.join("k.c");
    std::fs::write(
        &src,
        "void __attribute__((amdgpu_kernel)) k(float *p, const float *q, int n) {\n\
           int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();\n\
           if (i < n) p[i] = p[i] * 2.0f + q[i];\n\
           for (int j = 0; j < n; j++) if (q[j] > 1.0f) p[j] -= 1.0f;\n\
         }\n",
    )
    .unwrap();
    for (target, llvm) in [("gfx90a", 19), ("gfx942", 19), ("gfx950", 22)] {
        let obj = dir.join(format!("k-{target}.o"));
        let co = dir.join(format!("k-{target}.co"));
        let status = Command::new(format!("clang-{llvm}"))
            .args(["--target=amdgcn-amd-amdhsa", &format!("-mcpu={target}"), "-nogpulib", "-O2", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&obj)
            .status()
            .unwrap_or_else(|e| panic!("clang-{llvm} (apt package clang-{llvm}) must be installed: {e}"));
        assert!(status.success());
        let status = Command::new(format!("ld.lld-{llvm}")).arg("-shared").arg(&obj).arg("-o").arg(&co).status().unwrap();
        assert!(status.success());
        let ours = dojo(&["disasm", "--mcpu", target, co.to_str().unwrap()]);
        assert!(ours.status.success(), "{}", stderr(&ours));
        let theirs = Command::new(format!("llvm-objdump-{llvm}"))
            .args(["-d", &format!("--mcpu={target}")])
            .arg(&co)
            .output()
            .unwrap();
        assert_eq!(normalize(&stdout(&ours)), normalize(&String::from_utf8_lossy(&theirs.stdout)), "{target}");
        assert!(stdout(&ours).contains("s_endpgm"));
    }
    let garbage = dir.join("garbage.co");
    std::fs::write(&garbage, b"\x7fELF not really").unwrap();
    let out = dojo(&["disasm", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

/// A reader that goes away (`dojo topology ... --dot | head -1`) ends the command
/// quietly with the status of a process a SIGPIPE ended; it once panicked on the broken
/// pipe. The graph (~100 KB) is larger than a pipe's buffer, so dojo is still writing
/// when the reader leaves.
#[test]
fn a_closed_output_pipe_stops_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dojo"))
        .args(["topology", &repo("topologies/mi300x.toml"), "--dot"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dojo runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("piped")).read_line(&mut first).expect("one line");
    // The pipe's read end is dropped here, before dojo has written everything.
    let out = child.wait_with_output().expect("dojo ends");
    assert!(!first.is_empty());
    assert_eq!(out.status.code(), Some(141), "stderr: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "no message, no panic");
}

/// Output to a full disk is an error naming what failed, with status 2; it once panicked.
#[test]
fn output_to_a_full_disk_is_reported_not_a_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full exists on Linux");
    let out = Command::new(env!("CARGO_BIN_EXE_dojo")).arg("plugins").stdout(full).output().expect("dojo runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("writing to standard output") && err.contains("No space left on device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `--checkpoint-every` writes a checkpoint every period and keeps the last `--keep`;
/// restoring the last one on another worker count finishes with the uninterrupted
/// run's statistics, and counts only the events it ran itself.
#[test]
fn periodic_checkpoints_keep_the_last_ones_and_restore_identically() {
    let ring = repo("topologies/examples/ring.toml");
    let dir = scratch("every");
    let (whole, part) = (dir.join("whole.json"), dir.join("part.json"));
    let prefix = dir.join("ring");
    let out = dojo(&["sim", &ring, "--workers", "1", "--stats", whole.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let total: u64 = stdout(&out).lines().find_map(|l| l.split(" events in ").next()?.parse().ok()).expect("event count");
    let out = dojo(&["sim", &ring, "--workers", "2", "--checkpoint-every", "150ns", "--keep", "2", "--checkpoint-out", prefix.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut kept: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".ckpt"))
        .collect();
    kept.sort_by_key(|n| n.split('.').nth(1).and_then(|t| t.parse::<u64>().ok()));
    assert_eq!(kept.len(), 2, "{kept:?}");
    let last = dir.join(kept.last().unwrap());
    let out = dojo(&["sim", &ring, "--workers", "3", "--restore", last.to_str().unwrap(), "--stats", part.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let resumed: u64 = stdout(&out).lines().find_map(|l| l.split(" events in ").next()?.parse().ok()).expect("event count");
    assert!(resumed > 0 && resumed < total, "the restored run counts only its own events: {resumed} of {total}");
    let a: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&whole).unwrap()).unwrap();
    let b: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&part).unwrap()).unwrap();
    assert_eq!(a, b);
    let err = dojo(&["sim", &ring, "--restore", "/dev/zero"]);
    assert_eq!(err.status.code(), Some(2));
    assert!(stderr(&err).contains("not a simdojo checkpoint"), "{}", stderr(&err));
}

/// `--set` changes a parameter like the file would, and refuses a key it cannot apply
/// with the key, the component and what it has.
#[test]
fn set_overrides_parameters_and_names_what_is_wrong() {
    let ring = repo("topologies/examples/ring.toml");
    let events = |args: &[&str]| -> u64 {
        let out = dojo(args);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).lines().find_map(|l| l.split(" events in ").next()?.parse().ok()).expect("event count")
    };
    let base = events(&["sim", &ring]);
    let slower = events(&["sim", &ring, "--set", "lp.mean=4ns"]);
    assert!(slower < base, "a longer mean delay gives fewer events in the same time: {slower} vs {base}");
    for (set, says) in [
        ("lp.meen=4ns", "has no parameter `meen`"),
        ("lp.mean=soon", "lp.mean=soon"),
        ("nowhere.mean=1ns", "matches no component"),
        ("mean=1ns", "is not SELECTOR.PARAM=VALUE"),
    ] {
        let out = dojo(&["sim", &ring, "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}");
        assert!(stderr(&out).contains(says), "{set}: {}", stderr(&out));
    }
}

/// `dojo sweep` runs the grid, writes one row per point with its statistics, and a plot.
#[test]
fn sweep_writes_a_row_per_point_and_a_plot() {
    let ring = repo("topologies/examples/ring.toml");
    let dir = scratch("sweep");
    let out = dojo(&["sweep", "--out", dir.to_str().unwrap(), "--set", "lp.mean=1ns,2ns,4ns", "--set", "lp.seed=1,2", "--", "sim", &ring]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 6, "{csv}");
    assert!(lines[0].starts_with("lp.mean,lp.seed,status,"), "{}", lines[0]);
    let events_col = lines[0].split(',').position(|c| c == "by_type.phold.lp.events").expect("an events column");
    let events: Vec<f64> = lines[1..].iter().map(|l| l.split(',').nth(events_col).unwrap().parse().unwrap()).collect();
    assert!(events[0] > events[4], "mean 1ns runs more events than 4ns: {events:?}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 6);
    let svg = std::fs::read_to_string(dir.join("plot.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("lp.seed=2"), "the plot has a line per seed");
    let bad = dojo(&["sweep", "--out", dir.to_str().unwrap(), "--set", "lp.mean=1ns", "--", "topology", &ring]);
    assert_eq!(bad.status.code(), Some(2));
    // A metric nobody reported is an error naming close ones; a failed point says why.
    let typo = dojo(&["sweep", "--out", dir.to_str().unwrap(), "--set", "lp.mean=1ns", "--plot", "lp.evnts", "--", "sim", &ring]);
    assert_eq!(typo.status.code(), Some(2), "{}", stderr(&typo));
    assert!(stderr(&typo).contains("--plot lp.evnts") && stderr(&typo).contains("by_type.phold.lp.events"), "{}", stderr(&typo));
    let failing = dojo(&["sweep", "--out", dir.to_str().unwrap(), "--set", "lp.mean=1ns,1parsec", "--", "sim", &ring]);
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    let err = stderr(&failing);
    assert!(err.contains("point 1 (lp.mean=1parsec) failed with status 2") && err.contains("1parsec"), "{err}");
}

/// A cache's replacement policy is a parameter: `--set l2.policy=srrip` changes it and
/// keeps every other value; a type swap to a type lacking some of them is refused,
/// naming them.
#[test]
fn set_swaps_a_caches_policy_and_never_drops_parameters() {
    let out = dojo(&["bench", "gpu", "--iterations", "2", "--blocks", "8", "--set", "l2.policy=srrip", "--set", "l2.size=1MiB", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = dojo(&["bench", "gpu", "--iterations", "2", "--set", "gpu.xcd[0].l2.type=amdgpu.hbm"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("amdgpu.hbm has no parameters") && err.contains("mshrs") && err.contains("drops none"), "{err}");
}

#[test]
fn phold_bench_ceiling_measures_copies_and_workers_in_one_invocation() {
    let out = dojo(&["bench", "phold", "--lps", "64", "--end-time", "400", "--workers", "2", "--ceiling", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["workers"], 2, "{v}");
    assert_eq!(v["ceiling"]["copies"], 2, "{v}");
    assert_eq!(v["ceiling"]["copy_events_per_sec"].as_array().map(Vec::len), Some(2), "{v}");
    let ratio = v["ceiling"]["ratio"].as_f64().unwrap();
    let want = v["events_per_sec"].as_f64().unwrap() / v["ceiling"]["events_per_sec"].as_f64().unwrap();
    assert!(ratio > 0.0 && (ratio - want).abs() < 1e-9, "{v}");
    let out = dojo(&["bench", "phold", "--lps", "64", "--ceiling"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--ceiling"), "{}", stderr(&out));
}

#[test]
fn phold_bench_trace_is_chrome_json_with_a_track_per_worker_and_a_profile() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("phold.json");
    let out = dojo(&[
        "bench", "phold", "--lps", "64", "--end-time", "200", "--workers", "2", "--partitions", "4", "--fixed-partitions",
        "--profile", "--trace", trace.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for want in ["profile:", "worker 0:", "worker 1:", "phold.lp", "critical path", "predicted speedup on 2 workers"] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let tracks: Vec<&str> = events.iter().filter(|e| e["name"] == "thread_name").filter_map(|e| e["args"]["name"].as_str()).collect();
    assert!(tracks.contains(&"worker 0") && tracks.contains(&"worker 1"), "{tracks:?}");
    // Windows and events always; idle waits only when a worker had to wait, which
    // depends on thread scheduling (issue 33), so only their kind is checked.
    for cat in ["window", "event"] {
        let n = events.iter().filter(|e| e["cat"] == cat && e["ph"] == "X").count();
        assert!(n > 0, "no {cat} spans");
    }
    assert!(events.iter().filter(|e| e["ph"] == "X").all(|e| ["window", "wait", "event"].contains(&e["cat"].as_str().unwrap_or(""))));
    assert!(events.iter().filter(|e| e["ph"] == "X").all(|e| e["ts"].as_f64().is_some() && e["dur"].as_f64().is_some()));
    assert!(events.iter().any(|e| e["cat"] == "event" && e["name"].as_str().is_some_and(|n| n.starts_with("lp["))));
}

#[test]
fn an_observed_sim_prints_a_profile_writes_a_trace_and_keeps_its_results() {
    let ring = repo("topologies/examples/ring.toml");
    let dir = scratch("observe");
    let (plain, observed, trace) = (dir.join("plain.json"), dir.join("observed.json"), dir.join("trace.json"));
    let out = dojo(&["sim", &ring, "--workers", "1", "--stats", plain.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = dojo(&[
        "sim", &ring, "--workers", "2", "--fixed-partitions", "--profile", "--trace", trace.to_str().unwrap(),
        "--stats", observed.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("profile:") && stdout(&out).contains("critical path"), "{}", stdout(&out));
    let a: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plain).unwrap()).unwrap();
    let b: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&observed).unwrap()).unwrap();
    assert_eq!(a, b, "observing changed the results");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["cat"] == "window"), "no windows in the trace");
    assert!(events.iter().any(|e| e["name"] == "thread_name" && e["args"]["name"] == "worker 1"), "no worker 1 track");
}

/// A message to a full (or closed) standard error is lost, never a panic: `dojo` still
/// exits with its error status, not Rust's panic status 101.
#[test]
fn a_full_standard_error_is_not_a_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dojo"))
        .args(["topology", "/nonexistent/topology.toml"])
        .stderr(std::process::Stdio::from(full))
        .output()
        .expect("dojo runs");
    let code = out.status.code();
    assert!(code.is_some_and(|c| c != 0 && c != 101), "exit status {code:?}");
}
