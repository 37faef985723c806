//! Checkpoint and restore give exactly the uninterrupted run's results, also at a
//! different partitioning.

use simdojo::engine::{Checkpoint, ExitReason, SimConfig, Simulation};
use simdojo::phold::{self, PholdConfig};
use simdojo::time::Tick;

use crate::support::{assignments, fixed};

#[test]
fn restore_continues_identically_at_any_partitioning() {
    let cfg = PholdConfig { lps: 40, end: Tick::ns(400), ..PholdConfig::default() };
    let topo = phold::topology(&cfg);
    let mut whole = Simulation::build(&topo, &SimConfig::default()).unwrap();
    whole.run();
    let expected = (whole.summary().events, phold::digest(&whole, cfg.lps));

    for (name, first) in assignments(40) {
        let mut sim = Simulation::build(&topo, &fixed(first)).unwrap();
        let paused = sim.run_until(Tick::ns(137));
        assert_eq!(paused.reason, ExitReason::Paused, "{name}: {paused}");
        let bytes = sim.checkpoint().unwrap().to_bytes().unwrap();
        let saved = Checkpoint::from_bytes(&bytes).unwrap();
        assert_eq!(saved.now(), Tick::ns(137));
        for (name2, second) in assignments(40) {
            let mut restored =
                Simulation::restore(&topo, &fixed(second), &saved).unwrap();
            let status = restored.run();
            assert_eq!(status.reason, ExitReason::MaxTicks);
            assert_eq!(
                (restored.summary().events, phold::digest(&restored, cfg.lps)),
                expected,
                "{name} -> {name2}"
            );
        }
    }
}

#[test]
fn restore_rejects_another_topology_and_garbage() {
    let cfg = PholdConfig { lps: 8, end: Tick::ns(50), ..PholdConfig::default() };
    let mut sim = Simulation::build(&phold::topology(&cfg), &SimConfig::default()).unwrap();
    sim.run_until(Tick::ns(10));
    let saved = sim.checkpoint().unwrap();
    let other = phold::topology(&PholdConfig { lps: 9, ..cfg.clone() });
    let err = Simulation::restore(&other, &SimConfig::default(), &saved).err().unwrap();
    assert!(err.to_string().contains("another topology"), "{err}");
    assert!(Checkpoint::from_bytes(&[1, 2, 3]).is_err());
    let mut bytes = saved.to_bytes().unwrap();
    bytes.truncate(bytes.len() / 2);
    assert!(Checkpoint::from_bytes(&bytes).is_err());
}
