//! PHOLD results are the same for every partitioning and thread count, and equal
//! to an independent sequential implementation of the specification.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use simdojo::engine::{ExitReason, SimConfig, Simulation};
use simdojo::phold::{self, exponential, mix64, unit, Draws, PholdConfig};

use crate::support::{assignments, fixed};

/// A plain binary-heap PHOLD, ordered by (time, sender, sender's sequence).
fn reference(cfg: &PholdConfig) -> (u64, u64) {
    let n = cfg.lps as u64;
    let mut draws: Vec<Draws> = (0..n).map(|i| Draws::new(cfg.seed, i)).collect();
    let mut seq = vec![0u64; n as usize];
    let mut count = vec![0u64; n as usize];
    let mut h = vec![0u64; n as usize];
    let mut heap = BinaryHeap::new();
    let generate = |i: usize, now: u64, draws: &mut Vec<Draws>, seq: &mut Vec<u64>, heap: &mut BinaryHeap<_>| {
        let (x1, x2, x3) = (draws[i].draw(), draws[i].draw(), draws[i].draw());
        let dest = if n > 1 && unit(x1) < cfg.remote { (i as u64 + 1 + x2 % (n - 1)) % n } else { i as u64 };
        let delay = cfg.lookahead.0 + (cfg.mean.0 as f64 * exponential(x3)) as u64;
        heap.push(Reverse((now + delay, i as u64, seq[i], dest)));
        seq[i] += 1;
    };
    for i in 0..n as usize {
        for _ in 0..cfg.events_per_lp {
            generate(i, 0, &mut draws, &mut seq, &mut heap);
        }
    }
    let mut events = 0;
    while let Some(Reverse((t, _, _, dest))) = heap.pop() {
        if t >= cfg.end.0 {
            break;
        }
        let d = dest as usize;
        count[d] += 1;
        h[d] = mix64(h[d] ^ t ^ count[d].rotate_left(32));
        events += 1;
        generate(d, t, &mut draws, &mut seq, &mut heap);
    }
    let digest = (0..n as usize).fold(0u64, |acc, i| mix64(acc ^ h[i] ^ (count[i] << 1) ^ i as u64));
    (events, digest)
}

/// Runs `cfg` on `assignment`'s partitions: kept fixed on one thread each, kept
/// fixed on two workers that claim them anew every epoch, and left to the engine's
/// adaptive scheduling (which may merge them); all must agree.
fn run(cfg: &PholdConfig, assignment: Option<Vec<simdojo::ids::PartitionId>>) -> (u64, u64) {
    let topo = phold::topology(cfg);
    let mut results = Vec::new();
    let claimed = SimConfig { workers: Some(2), ..fixed(assignment.clone()) };
    for config in [fixed(assignment.clone()), claimed, SimConfig { assignment: assignment.clone(), ..SimConfig::default() }] {
        let mut sim = Simulation::build(&topo, &config).unwrap();
        let status = sim.run();
        assert_eq!(status.reason, ExitReason::MaxTicks, "{status}");
        assert_eq!(status.tick, cfg.end);
        results.push((sim.summary().events, phold::digest(&sim, cfg.lps)));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "fixed, claimed and adaptive partitions differ: {results:?}");
    results[0]
}

#[test]
fn phold_matches_reference_for_every_partitioning() {
    for cfg in [
        PholdConfig { lps: 64, end: simdojo::time::Tick::ns(300), ..PholdConfig::default() },
        PholdConfig { lps: 17, events_per_lp: 3, remote: 0.9, end: simdojo::time::Tick::ns(500), seed: 7, ..PholdConfig::default() },
        // Integer-tick delays make many simultaneous events: the tie order matters.
        PholdConfig {
            lps: 12,
            remote: 0.5,
            lookahead: simdojo::time::Tick(1),
            mean: simdojo::time::Tick(2),
            end: simdojo::time::Tick(400),
            ..PholdConfig::default()
        },
    ] {
        let expected = reference(&cfg);
        assert!(expected.0 > 1000, "workload too small: {expected:?}");
        for (name, a) in assignments(cfg.lps as usize) {
            assert_eq!(run(&cfg, a), expected, "{name} with {cfg:?}");
        }
    }
}

/// Workers that claim partitions stop together at every pause, however far one of
/// them ran ahead, and the paused-and-continued run ends as the uninterrupted one.
#[test]
fn claiming_workers_pause_together_and_match_one_partition() {
    let cfg = PholdConfig { lps: 48, end: simdojo::time::Tick::ns(400), ..PholdConfig::default() };
    let topo = phold::topology(&cfg);
    let mut whole = Simulation::build(&topo, &SimConfig::default()).unwrap();
    whole.run();
    let expected = (whole.summary().events, phold::digest(&whole, cfg.lps));
    let eight: Vec<_> = (0..48).map(|i| simdojo::ids::PartitionId(i / 6)).collect();
    for workers in [2, 3] {
        let config = SimConfig { workers: Some(workers), ..fixed(Some(eight.clone())) };
        let mut sim = Simulation::build(&topo, &config).unwrap();
        assert_eq!((sim.partitions(), sim.workers()), (8, workers));
        let mut pauses = 0;
        for step in 1.. {
            let status = sim.run_until(simdojo::time::Tick::ps(step * 3_000));
            if status.reason != ExitReason::Paused {
                assert_eq!(status.reason, ExitReason::MaxTicks, "{status}");
                break;
            }
            pauses += 1;
        }
        assert!(pauses > 100, "only {pauses} pauses");
        assert_eq!((sim.summary().events, phold::digest(&sim, cfg.lps)), expected, "{workers} workers");
    }
}

#[test]
fn phold_statistics_do_not_depend_on_partitioning() {
    let cfg = PholdConfig { lps: 32, end: simdojo::time::Tick::ns(200), ..PholdConfig::default() };
    let topo = phold::topology(&cfg);
    let mut reports = Vec::new();
    for (_, assignment) in assignments(32) {
        let mut sim = Simulation::build(&topo, &fixed(assignment)).unwrap();
        sim.run();
        reports.push(sim.stats().to_json());
    }
    assert!(reports.windows(2).all(|w| w[0] == w[1]));
    assert!(reports[0]["by_type"]["phold.lp"]["events"].as_u64().unwrap() > 0);
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use simdojo::ids::PartitionId;
    use simdojo::time::Tick;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        /// Any workload under any assignment of LPs to 1-5 partitions gives the
        /// sequential reference's event count and digest.
        #[test]
        fn any_partitioning_matches_the_reference(
            lps in 2u32..24,
            events in 1u32..4,
            remote in 0.0f64..1.0,
            lookahead in 1u64..2000,
            mean in 0u64..3000,
            seed in any::<u64>(),
            parts in proptest::collection::vec(0u32..5, 24),
        ) {
            let cfg = PholdConfig {
                lps, events_per_lp: events, remote, lookahead: Tick(lookahead), mean: Tick(mean),
                end: Tick(lookahead * 40 + mean * 10), seed,
            };
            // Renumber the used partitions densely so none is empty.
            let mut used: Vec<u32> = parts[..lps as usize].to_vec();
            used.sort();
            used.dedup();
            let assignment: Vec<PartitionId> = parts[..lps as usize]
                .iter()
                .map(|p| PartitionId(used.iter().position(|u| u == p).unwrap() as u32))
                .collect();
            prop_assert_eq!(run(&cfg, Some(assignment)), reference(&cfg));
        }
    }
}
