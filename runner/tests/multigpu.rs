//! Multi-GPU nodes (`topologies/mi210x4.toml`, `topologies/mi300x-node.toml`): Debian's
//! rocminfo sees every GPU, a HIP peer-to-peer program passes with its traffic on the
//! XGMI links, identically on 1 and 2 workers, and `dojo exec --gpu N` runs a program
//! on one GPU of a node. Requirements as in `rocm.rs` (missing tools skip with a note).

use std::collections::BTreeMap;
use std::process::Command;

mod common;
use common::*;

const MI210X4: &str = "topologies/mi210x4.toml";

#[test]
fn rocminfo_lists_the_four_gpus_of_the_mi210_node() {
    let Some(rocminfo) = which("rocminfo") else {
        have("rocminfo", "rocminfo_lists_the_four_gpus_of_the_mi210_node");
        return;
    };
    let topology = repo(MI210X4);
    let out = dojo_run(&["--topology", topology.to_str().unwrap()], &rocminfo, &[], &[], PROGRAM_LIMIT);
    out.expect_code(0, "rocminfo on the MI210 node");
    let gpus = out.stdout.lines().filter(|l| l.trim_start().strip_prefix("Name:").is_some_and(|v| v.trim() == "gfx90a")).count();
    assert_eq!(gpus, 4, "GPU agents named gfx90a:\n{}", out.stdout);
    let marketing = out.stdout.matches("AMD Instinct MI210").count();
    assert_eq!(marketing, 4, "{}", out.stdout);
}

/// The `amdgpu.xgmi` counters of a run, by component path.
fn link_counters(stats_file: &std::path::Path) -> BTreeMap<String, serde_json::Value> {
    components(stats_file).into_iter().filter(|(_, v)| v["type"] == "amdgpu.xgmi").collect()
}

/// Every component's statistics of a run, by path.
fn components(stats_file: &std::path::Path) -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read(stats_file).unwrap_or_else(|e| panic!("{}: {e}", stats_file.display()));
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
    json["components"]["components"].as_object().expect("components").clone()
}

/// The `--stats` file of the run on `workers` workers.
fn stats_file(dir: &std::path::Path, workers: &str) -> std::path::PathBuf {
    dir.join(format!("stats-{workers}.json"))
}

/// Bytes the SDMA engines of every GPU copied, from the component statistics.
fn sdma_bytes(stats_file: &std::path::Path) -> u64 {
    components(stats_file).values().filter(|v| v["type"] == "amdgpu.soc").map(|v| v["sdma_bytes"].as_u64().unwrap_or(0)).sum()
}

#[test]
fn peer_to_peer_passes_over_the_xgmi_links_on_one_and_two_workers() {
    if !have("hipcc", "peer_to_peer_passes_over_the_xgmi_links_on_one_and_two_workers") {
        return;
    }
    let program = hip("peer");
    let topology = repo(MI210X4);
    let dir = std::env::temp_dir().join(format!("dojo-multigpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut runs = Vec::new();
    for workers in ["1", "2"] {
        let stats = stats_file(&dir, workers);
        let flags = ["--workers", workers, "--topology", topology.to_str().unwrap(), "--stats", stats.to_str().unwrap()];
        let out = dojo_run(&flags, &program, &[], &[], PROGRAM_LIMIT);
        out.expect_pass(&format!("peer on {workers} worker(s)"));
        assert!(out.stdout.contains("devices: 4"), "{}", out.stdout);
        assert!(out.stderr.contains("XGMI links:"), "{}", out.stderr);
        runs.push((out.stdout, link_counters(&stats)));
    }
    let (one, two) = (&runs[0], &runs[1]);
    assert_eq!(one.0, two.0, "peer: 1 and 2 workers print differently");
    assert_eq!(one.1, two.1, "peer: the links' statistics differ between 1 and 2 workers");
    let links = &one.1;
    let get = |gpu: &str, stat: &str| -> u64 { links[&format!("gpu[{gpu}].xgmi")][stat].as_u64().unwrap_or_else(|| panic!("{gpu} {stat} in {links:?}")) };
    // GPU 0's kernel reads GPU 1's buffer and writes GPU 2's (a write miss fills its
    // line first): 64 Ki ints = 256 KiB = 2048 of the MI210 L2's 128-byte lines each.
    const BUFFER_LINES: u64 = 64 * 1024 * 4 / 128;
    assert!(get("0", "lines_out") >= 2 * BUFFER_LINES, "{links:?}");
    assert!(get("1", "lines_served") >= BUFFER_LINES, "{links:?}");
    assert!(get("1", "tx_bytes") >= BUFFER_LINES * 128, "{links:?}");
    assert!(get("2", "lines_served") >= BUFFER_LINES, "{links:?}");
    // hipMemcpyPeer (GPU 2's buffer to GPU 3's) and the copy of GPU 3's buffer to the
    // host run on SDMA engines, as ROCr sends them on hardware: 256 KiB each. (The
    // engines' copies do not load the XGMI link model.)
    assert_eq!(sdma_bytes(&stats_file(&dir, "1")), 2 * BUFFER_LINES * 128);
    for g in 0..4 {
        assert_eq!(get(&g.to_string(), "peers"), 3, "every MI210 of the bridge has three peers: {links:?}");
        assert_eq!(get(&g.to_string(), "unrouted_lines"), 0, "{links:?}");
    }
}

fn dojo_cmd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dojo")).args(args).output().expect("dojo runs")
}

#[test]
fn dojo_exec_runs_a_program_on_gpu_five_of_the_mi300x_node() {
    let dir = std::env::temp_dir().join(format!("dojo-multigpu-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let image = dir.join("hello.co");
    let image = image.to_str().unwrap();
    let hello = repo("examples/gpu/hello.c");
    let built = dojo_cmd(&["cc", "--mcpu", "gfx942", "-O2", "-o", image, hello.to_str().unwrap()]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let node = repo("topologies/mi300x-node.toml");
    let node = node.to_str().unwrap();
    let mut outputs = Vec::new();
    for workers in ["1", "2"] {
        let run = dojo_cmd(&["exec", "--workers", workers, "--gpu", "5", "--topology", node, "--threads", "64", image, "node"]);
        assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
        let out = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!(out.contains("hello node from work-item 0 of work-group 0"), "{out}");
        outputs.push(out);
    }
    assert_eq!(outputs[0], outputs[1], "1 and 2 workers differ");
    // Without --gpu the node has no GPU by the standard name; past the last GPU is an error.
    let past = dojo_cmd(&["exec", "--gpu", "8", "--topology", node, image]);
    assert_ne!(past.status.code(), Some(0));
    let err = String::from_utf8_lossy(&past.stderr);
    assert!(err.contains("--gpu 8") && err.contains("8 GPU(s)"), "{err}");
}
