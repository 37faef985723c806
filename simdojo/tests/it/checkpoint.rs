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

fn small_checkpoint() -> (PholdConfig, Checkpoint) {
    let cfg = PholdConfig { lps: 4, end: Tick::ns(40), ..PholdConfig::default() };
    let mut sim = Simulation::build(&phold::topology(&cfg), &SimConfig::default()).unwrap();
    sim.run_until(Tick::ns(10));
    (cfg, sim.checkpoint().unwrap())
}

/// Every single-bit corruption of a checkpoint is refused (a flipped bit was once
/// accepted 27 times in 120), and so is every truncation.
#[test]
fn every_flipped_bit_and_every_truncation_is_refused() {
    let (_, saved) = small_checkpoint();
    let bytes = saved.to_bytes().unwrap();
    assert!(Checkpoint::from_bytes(&bytes).is_ok());
    for bit in 0..bytes.len() * 8 {
        let mut bad = bytes.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let err = Checkpoint::from_bytes(&bad).err().unwrap_or_else(|| panic!("bit {bit} flipped was accepted"));
        assert!(!err.to_string().is_empty());
    }
    for len in 0..bytes.len() {
        let err = Checkpoint::from_bytes(&bytes[..len]).err().unwrap_or_else(|| panic!("{len} bytes were accepted"));
        assert!(err.to_string().contains("truncated"), "{len}: {err}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Checkpoint::from_bytes(&longer).unwrap_err().to_string().contains("follow the"));
}

/// The header says what is wrong: not a checkpoint, another version, corrupted.
#[test]
fn refusals_name_the_problem() {
    let (_, saved) = small_checkpoint();
    let bytes = saved.to_bytes().unwrap();
    let err = Checkpoint::from_bytes(&[b'x'; 64]).unwrap_err().to_string();
    assert!(err.contains("not a simdojo checkpoint"), "{err}");
    let mut newer = bytes.clone();
    newer[8] = 9;
    let err = Checkpoint::from_bytes(&newer).unwrap_err().to_string();
    assert!(err.contains("version 9") && err.contains("reads version 2"), "{err}");
    let mut corrupt = bytes.clone();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0x40;
    assert!(Checkpoint::from_bytes(&corrupt).unwrap_err().to_string().contains("corrupted"));
}

/// Reading a file reads no more than the header announces: `/dev/zero` is refused after
/// its first 32 bytes (it was once read for 3.6 GB), a file whose size disagrees with
/// its header is refused, and a good file round-trips through write_file/read_file.
#[test]
fn files_are_read_within_their_announced_size() {
    let err = Checkpoint::read_file(std::path::Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(err.contains("/dev/zero") && err.contains("not a simdojo checkpoint"), "{err}");
    let (_, saved) = small_checkpoint();
    let dir = std::env::temp_dir().join(format!("simdojo-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.ckpt");
    saved.write_file(&path).unwrap();
    assert_eq!(Checkpoint::read_file(&path).unwrap().now(), Tick::ns(10));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0; 100]);
    std::fs::write(&path, &bytes).unwrap();
    let err = Checkpoint::read_file(&path).unwrap_err().to_string();
    assert!(err.contains("the file holds"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The exit delay is part of what a checkpoint must match; an end time at or before
/// the checkpoint's time is refused instead of mislabeled.
#[test]
fn restore_checks_engine_settings_and_end_time() {
    let (cfg, saved) = small_checkpoint();
    let mut topo = phold::topology(&cfg);
    topo.engine.exit_delay = Some(Tick::ns(3));
    let err = Simulation::restore(&topo, &SimConfig::default(), &saved).err().unwrap().to_string();
    assert!(err.contains("exit delay"), "{err}");
    let early = SimConfig { max_ticks: Some(Tick::ns(5)), ..SimConfig::default() };
    let err = Simulation::restore(&phold::topology(&cfg), &early, &saved).err().unwrap().to_string();
    assert!(err.contains("not before the end time"), "{err}");
}

/// `run_until` a time before the simulation's own is refused and changes nothing (the
/// clock once went backwards).
#[test]
fn run_until_the_past_is_refused() {
    let cfg = PholdConfig { lps: 4, end: Tick::ns(40), ..PholdConfig::default() };
    let mut sim = Simulation::build(&phold::topology(&cfg), &SimConfig::default()).unwrap();
    assert_eq!(sim.run_until(Tick::ns(20)).reason, ExitReason::Paused);
    let events = sim.summary().events;
    let status = sim.run_until(Tick::ns(10));
    assert_eq!(status.reason, ExitReason::Refused, "{status}");
    assert_eq!((sim.now(), sim.summary().events), (Tick::ns(20), events));
    assert_eq!(sim.run().reason, ExitReason::MaxTicks);
}

mod fuzz {
    //! The checkpoint reader under fuzzing: arbitrary bytes, and valid checkpoints whose
    //! payload is mutated and then sealed again with a correct length and checksum (so
    //! the mutation gets past the header into the decoder and the restore), are refused
    //! or restored, never a panic. Cases: proptest's (`PROPTEST_CASES`, 256 by default;
    //! raise it for a long run).
    use proptest::prelude::*;
    use simdojo::engine::{Checkpoint, SimConfig, Simulation};
    use simdojo::phold;

    /// Header layout of format 2: magic (8), version (4), reserved (4), payload length
    /// (8), CRC-32C of the first 24 bytes and the payload (4), reserved (4).
    fn seal(mut bytes: Vec<u8>) -> Vec<u8> {
        let len = (bytes.len() - 32) as u64;
        bytes[16..24].copy_from_slice(&len.to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[..24]), &bytes[32..]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_are_refused_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            prop_assert!(Checkpoint::from_bytes(&bytes).is_err());
        }

        #[test]
        fn sealed_mutations_are_refused_or_restored(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let (cfg, saved) = super::small_checkpoint();
            let mut bytes = saved.to_bytes().unwrap();
            let payload = bytes.len() - 32;
            for (at, byte) in &edits {
                bytes[32 + at.index(payload)] = *byte;
            }
            if truncate {
                bytes.truncate(32 + cut.index(payload));
            }
            if let Ok(ck) = Checkpoint::from_bytes(&seal(bytes)) {
                if let Ok(mut sim) = Simulation::restore(&phold::topology(&cfg), &SimConfig::default(), &ck) {
                    let _ = sim.run();
                }
            }
        }
    }
}
