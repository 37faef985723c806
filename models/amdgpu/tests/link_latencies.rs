//! The shipped topologies take their memory-path link latencies from the one latency
//! table (`timing::latency::stages`), converted at each part's engine clock, so the
//! topology files and the model's own latency table cannot disagree.

use amdgpu::timing::latency::stages;
use simdojo::topology;

fn repo(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// The latency (ps) of every link whose source path contains `from_part` and whose
/// destination contains `to_part`.
fn latencies(t: &topology::Topology, from_part: &str, to_part: &str) -> Vec<u64> {
    t.links
        .iter()
        .filter(|l| {
            let (a, b) = (
                t.components[l.a.component.0 as usize].path.as_str(),
                t.components[l.b.component.0 as usize].path.as_str(),
            );
            a.contains(from_part) && b.contains(to_part)
        })
        .map(|l| l.latency.0)
        .collect()
}

#[test]
fn topology_links_follow_the_latency_table() {
    for (file, mhz, mall) in [
        ("topologies/mi210.toml", 1700, false),
        ("topologies/mi300x.toml", 2100, true),
        ("topologies/mi355x.toml", 2400, true),
        ("topologies/mi210x4.toml", 1700, false),
        ("topologies/mi300x-node.toml", 2100, true),
    ] {
        let t = topology::load(&repo(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let crossbar = latencies(&t, ".cu[", ".l2");
        assert!(!crossbar.is_empty(), "{file}: CU <-> L2 links");
        assert!(
            crossbar
                .iter()
                .all(|&ps| ps == stages::picoseconds(stages::L2_CROSSBAR_ONE_WAY, mhz)),
            "{file}: CU <-> L2 links {crossbar:?}"
        );
        let below = if mall { ".mall[" } else { ".hbm" };
        let fabric = latencies(&t, ".l2", below);
        assert!(!fabric.is_empty(), "{file}: L2 -> {below} links");
        assert!(
            fabric
                .iter()
                .all(|&ps| ps == stages::picoseconds(stages::FABRIC_ONE_WAY, mhz)),
            "{file}: L2 -> {below} links {fabric:?}"
        );
        if mall {
            let local = latencies(&t, ".mall[", ".hbm");
            assert!(!local.is_empty(), "{file}: memory-side cache -> HBM links");
            assert!(
                local
                    .iter()
                    .all(|&ps| ps == stages::picoseconds(stages::IOD_LOCAL_ONE_WAY, mhz)),
                "{file}: {local:?}"
            );
        }
    }
}
