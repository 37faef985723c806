//! Integration tests of the pure timing models (`amdgpu::timing`): caches, MSHRs,
//! bandwidth ports, HBM and the per-part defaults. One binary; one module per model.

mod cache {
    use amdgpu::timing::cache::{
        AccessKind, AccessOutcome, CacheConfig, CacheModel, LineState, WritePolicy,
    };
    use amdgpu::timing::{ConfigError, LineAddr, ReplacementPolicy};
    use proptest::prelude::*;

    fn config(sets: u64, ways: u32, policy: &str, write_policy: WritePolicy) -> CacheConfig {
        CacheConfig {
            size_bytes: sets * u64::from(ways) * 128,
            line_bytes: 128,
            ways,
            policy: ReplacementPolicy::from_name(policy).expect("test policy names are valid"),
            write_policy,
        }
    }

    fn cache(sets: u64, ways: u32, policy: &str) -> CacheModel {
        CacheModel::new(&config(sets, ways, policy, WritePolicy::WriteBack))
            .expect("test configs are valid")
    }

    /// Runs `ops` ("r5" read line 5, "w5" write, "a5" atomic) and renders each outcome:
    /// `H` hit, `M` miss, `M-7` miss evicting clean line 7, `M-7*` evicting dirty line 7,
    /// `B` miss that did not allocate.
    fn trace(cache: &mut CacheModel, ops: &str) -> String {
        let mut out = Vec::new();
        for op in ops.split_whitespace() {
            let (kind, line) = match op.split_at(1) {
                ("r", n) => (AccessKind::Read, n),
                ("w", n) => (AccessKind::Write, n),
                ("a", n) => (AccessKind::Atomic, n),
                _ => panic!("bad op {op}"),
            };
            let line = LineAddr(line.parse().expect("line number"));
            out.push(match cache.access(line, kind, true) {
                AccessOutcome::Hit { .. } => "H".to_string(),
                AccessOutcome::Miss {
                    allocated: false, ..
                } => "B".to_string(),
                AccessOutcome::Miss { evicted: None, .. } => "M".to_string(),
                AccessOutcome::Miss {
                    evicted: Some(e), ..
                } => {
                    format!("M-{}{}", e.line.get(), if e.dirty { "*" } else { "" })
                }
            });
        }
        out.join(" ")
    }

    #[test]
    fn lru_evicts_least_recently_used() {
        let mut c = cache(1, 2, "lru");
        assert_eq!(trace(&mut c, "r0 r1 r0 r2 r1 r0"), "M M H M-1 M-0 M-2");
    }

    #[test]
    fn lru_sets_are_independent() {
        // Two sets: even lines in set 0, odd lines in set 1.
        let mut c = cache(2, 1, "lru");
        assert_eq!(trace(&mut c, "r0 r1 r0 r1 r2 r1 r0"), "M M H H M-0 H M-2");
    }

    #[test]
    fn srrip_ages_and_evicts_lowest_distant_way() {
        let mut c = cache(1, 2, "srrip");
        assert_eq!(trace(&mut c, "r0 r1 r0 r2 r1 r3"), "M M H M-1 M-2 M-0");
        let mut lru = cache(1, 2, "lru");
        assert_eq!(trace(&mut lru, "r0 r1 r0 r2 r1 r3"), "M M H M-1 M-0 M-2");
    }

    #[test]
    fn srrip_keeps_a_reused_line_through_a_scan_lru_does_not() {
        let ops = "r100 r100 r1 r2 r3 r4 r5 r6 r100";
        let mut srrip = cache(1, 4, "srrip");
        assert_eq!(trace(&mut srrip, ops), "M H M M M M-1 M-2 M-3 H");
        let mut lru = cache(1, 4, "lru");
        assert_eq!(trace(&mut lru, ops), "M H M M M M-100 M-1 M-2 M-3");
    }

    #[test]
    fn random_is_deterministic_per_seed_and_fills_invalid_ways_first() {
        let ops: String = (0..300).map(|i| format!("r{} ", (i * 7919) % 13)).collect();
        let mut a = cache(1, 4, "random:1");
        let mut b = cache(1, 4, "random:1");
        let mut c = cache(1, 4, "random:2");
        let ta = trace(&mut a, &ops);
        assert_eq!(ta, trace(&mut b, &ops));
        assert_ne!(ta, trace(&mut c, &ops));
        assert!(ta.starts_with("M M M M "), "{ta}");
        // Every victim was resident: the cache holds exactly 4 lines at the end.
        assert_eq!(a.resident_lines(), 4);
        assert_eq!(
            cache(1, 4, "random").config().policy,
            ReplacementPolicy::Random { seed: 0 }
        );
    }

    #[test]
    fn ideal_always_hits_and_holds_no_tags() {
        let mut c = CacheModel::new(&config(64, 16, "ideal", WritePolicy::WriteThrough)).unwrap();
        assert_eq!(trace(&mut c, "r1 r2 r3 w4 a5 r1000000"), "H H H H H H");
        assert_eq!(
            c.access(LineAddr(9), AccessKind::Write, true),
            AccessOutcome::Hit {
                write_downstream: true
            }
        );
        assert_eq!(c.probe(LineAddr(12345)), Some(LineState::Clean));
        assert_eq!(c.stats().hits(), 7);
        assert_eq!(c.stats().misses(), 0);
        assert_eq!(c.heap_bytes(), 0);
        assert!(c.writeback_all().is_empty());
    }

    #[test]
    fn write_back_dirties_and_writes_back_victims() {
        let mut c = cache(1, 2, "lru");
        assert_eq!(trace(&mut c, "w0 r1 a2 r3 r4"), "M M M-0* M-1 M-2*");
        let s = c.stats();
        assert_eq!(s.writebacks.eviction, 2);
        assert_eq!(s.evictions, 3);
        assert_eq!(s.write.misses, 1);
        assert_eq!(s.atomic.misses, 1);
        assert_eq!(s.writes_forwarded, 0);
    }

    #[test]
    fn write_through_forwards_every_write_and_never_dirties() {
        let mut c = CacheModel::new(&config(1, 2, "lru", WritePolicy::WriteThrough)).unwrap();
        assert_eq!(trace(&mut c, "w0 r0 w0 r0"), "B M H H");
        assert_eq!(c.probe(LineAddr(0)), Some(LineState::Clean));
        assert_eq!(
            c.access(LineAddr(0), AccessKind::Write, true),
            AccessOutcome::Hit {
                write_downstream: true
            }
        );
        assert_eq!(
            c.access(LineAddr(5), AccessKind::Write, true),
            AccessOutcome::Miss {
                allocated: false,
                evicted: None,
                write_downstream: true
            }
        );
        assert_eq!(c.stats().writes_forwarded, 4);
        assert!(c.writeback_all().is_empty());
    }

    #[test]
    fn write_no_allocate_dirties_hits_and_bypasses_write_misses() {
        let mut c = CacheModel::new(&config(1, 2, "lru", WritePolicy::WriteNoAllocate)).unwrap();
        assert_eq!(trace(&mut c, "w0 r0 w0 r1 r2"), "B M H M M-0*");
        assert_eq!(c.stats().bypasses, 1);
        assert_eq!(c.stats().writes_forwarded, 1);
    }

    #[test]
    fn no_allocate_request_bypasses() {
        let mut c = cache(4, 2, "lru");
        assert_eq!(
            c.access(LineAddr(3), AccessKind::Read, false),
            AccessOutcome::Miss {
                allocated: false,
                evicted: None,
                write_downstream: false
            }
        );
        assert_eq!(c.probe(LineAddr(3)), None);
        assert_eq!(c.stats().bypasses, 1);
        assert_eq!(
            c.heap_bytes(),
            cache(4, 2, "lru").heap_bytes(),
            "a bypass must not allocate tags"
        );
    }

    #[test]
    fn probe_does_not_touch_replacement_state() {
        let mut c = cache(1, 2, "lru");
        trace(&mut c, "r0 r1");
        assert_eq!(c.probe(LineAddr(0)), Some(LineState::Clean));
        assert_eq!(trace(&mut c, "r2"), "M-0");
        assert_eq!(c.stats().hits() + c.stats().misses(), 3);
    }

    #[test]
    fn invalidate_and_flush_hand_back_every_dirty_line() {
        let mut c = cache(4, 2, "lru");
        trace(&mut c, "w0 r1 w2 w7 r8");
        let mut flushed = c.writeback_all();
        flushed.sort();
        assert_eq!(flushed, vec![LineAddr(0), LineAddr(2), LineAddr(7)]);
        assert!(
            c.writeback_all().is_empty(),
            "lines are clean after a flush"
        );
        assert_eq!(c.resident_lines(), 5);
        trace(&mut c, "w1 w8");
        let idle = cache(4, 2, "lru").heap_bytes();
        assert!(c.heap_bytes() > idle);
        let mut dropped = c.invalidate_all();
        dropped.sort();
        assert_eq!(dropped, vec![LineAddr(1), LineAddr(8)]);
        assert_eq!(c.resident_lines(), 0);
        assert_eq!(c.heap_bytes(), idle, "invalidate_all frees the tag groups");
        let s = c.stats();
        assert_eq!(
            (s.writebacks.flush, s.writebacks.invalidate, s.invalidations),
            (3, 2, 5)
        );
        assert_eq!(trace(&mut c, "r0"), "M");
    }

    #[test]
    fn single_line_invalidate_keeps_lru_order() {
        let mut c = cache(1, 3, "lru");
        trace(&mut c, "r0 r1 w2");
        assert_eq!(c.invalidate(LineAddr(2)).map(|e| e.dirty), Some(true));
        assert_eq!(c.invalidate(LineAddr(2)), None);
        // Way of 2 is free: 3 fills it; then 4 evicts the LRU line, 0.
        assert_eq!(trace(&mut c, "r3 r4 r1 r5"), "M M-0 H M-3");
        assert_eq!(c.stats().writebacks.invalidate, 1);
    }

    #[test]
    fn config_errors_name_the_field() {
        let good = config(4, 2, "lru", WritePolicy::WriteBack);
        let err = |c: CacheConfig| CacheModel::new(&c).unwrap_err();
        let e = err(CacheConfig { ways: 0, ..good });
        assert_eq!(
            e,
            ConfigError::Zero {
                model: "cache",
                field: "ways"
            }
        );
        assert!(e.to_string().contains("`ways`"), "{e}");
        let e = err(CacheConfig {
            size_bytes: 3 * 2 * 128,
            ..good
        });
        assert_eq!(e, ConfigError::SetsNotPowerOfTwo { sets: 3 });
        assert!(e.to_string().contains("size_bytes"), "{e}");
        assert_eq!(
            err(CacheConfig {
                line_bytes: 2048,
                size_bytes: 1024,
                ..good
            }),
            ConfigError::LineLargerThanSize {
                line_bytes: 2048,
                size_bytes: 1024
            }
        );
        assert_eq!(
            err(CacheConfig {
                line_bytes: 96,
                ..good
            }),
            ConfigError::NotPowerOfTwo {
                model: "cache",
                field: "line_bytes",
                value: 96
            }
        );
        assert!(matches!(
            err(CacheConfig {
                size_bytes: 1000,
                ..good
            }),
            ConfigError::SizeNotMultipleOfSet { .. }
        ));
        assert!(matches!(
            err(CacheConfig {
                ways: 256,
                size_bytes: 256 * 128,
                ..good
            }),
            ConfigError::TooLarge { field: "ways", .. }
        ));
        assert_eq!(
            err(CacheConfig {
                size_bytes: 0,
                ..good
            }),
            ConfigError::Zero {
                model: "cache",
                field: "size_bytes"
            }
        );
        assert_eq!(
            err(CacheConfig {
                line_bytes: 0,
                ..good
            }),
            ConfigError::Zero {
                model: "cache",
                field: "line_bytes"
            }
        );
    }

    #[test]
    fn policy_names_parse_and_print_back() {
        for name in ["lru", "srrip", "random:42", "ideal"] {
            let policy = ReplacementPolicy::from_name(name).unwrap();
            assert_eq!(policy.to_string(), name);
        }
        assert_eq!(
            "LRU".parse::<ReplacementPolicy>().unwrap(),
            ReplacementPolicy::Lru
        );
        for bad in ["plru", "random:x", ""] {
            let e = ReplacementPolicy::from_name(bad).unwrap_err();
            assert_eq!(
                e,
                ConfigError::UnknownPolicy {
                    name: bad.to_string()
                }
            );
            assert!(e.to_string().contains("policy"));
        }
    }

    /// Shuffled single-cycle pointer chase over `lines` consecutive lines: the order every
    /// pass follows.
    fn chase_order(lines: u64, seed: u64) -> Vec<LineAddr> {
        use rand_core::{Rng, SeedableRng};
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
        let mut order: Vec<LineAddr> = (0..lines).map(LineAddr).collect();
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        order
    }

    /// Miss rates (L1, L2 local) of a pointer chase over `ws_bytes` after one warm-up pass.
    fn chase(ws_bytes: u64, l1: &mut CacheModel, l2: &mut CacheModel) -> (f64, f64) {
        let order = chase_order(ws_bytes / 128, ws_bytes);
        for &line in &order {
            if !l1.access(line, AccessKind::Read, true).is_hit() {
                l2.access(line, AccessKind::Read, true);
            }
        }
        l1.reset_stats();
        l2.reset_stats();
        for _ in 0..2 {
            for &line in &order {
                if !l1.access(line, AccessKind::Read, true).is_hit() {
                    l2.access(line, AccessKind::Read, true);
                }
            }
        }
        (l1.stats().miss_rate(), l2.stats().miss_rate())
    }

    #[test]
    fn pointer_chase_miss_rate_steps_at_each_capacity() {
        let l1_config = CacheConfig {
            size_bytes: 32 * 1024,
            line_bytes: 128,
            ways: 4,
            policy: ReplacementPolicy::Lru,
            write_policy: WritePolicy::WriteThrough,
        };
        let l2_config = CacheConfig {
            size_bytes: 4 << 20,
            ways: 16,
            write_policy: WritePolicy::WriteBack,
            ..l1_config
        };
        let mut ws = 8 * 1024;
        while ws <= 8 << 20 {
            let mut l1 = CacheModel::new(&l1_config).unwrap();
            let mut l2 = CacheModel::new(&l2_config).unwrap();
            let (l1_miss, l2_miss) = chase(ws, &mut l1, &mut l2);
            println!(
                "working set {:>5} KiB: L1 miss rate {l1_miss:.3}, L2 local miss rate {l2_miss:.3}",
                ws / 1024
            );
            let want_l1 = if ws <= 32 * 1024 { 0.0 } else { 1.0 };
            assert_eq!(l1_miss, want_l1, "L1 at working set {ws}");
            if ws > 32 * 1024 {
                let want_l2 = if ws <= 4 << 20 { 0.0 } else { 1.0 };
                assert_eq!(l2_miss, want_l2, "L2 at working set {ws}");
            }
            ws *= 2;
        }
    }

    #[test]
    fn random_degrades_gracefully_past_capacity_where_lru_and_srrip_thrash() {
        // A cyclic chase over twice the capacity: LRU and SRRIP (whose fills all enter at
        // the same RRPV, so it degenerates to FIFO here) evict every line before its
        // reuse; random replacement keeps part of the working set.
        for (policy, low, high) in [
            ("lru", 1.0, 1.0),
            ("srrip", 1.0, 1.0),
            ("random:7", 0.5, 0.95),
        ] {
            let mut l1 = CacheModel::new(&config(64, 4, policy, WritePolicy::WriteBack)).unwrap();
            let mut l2 = CacheModel::new(&config(64, 4, "ideal", WritePolicy::WriteBack)).unwrap();
            let (miss, _) = chase(64 * 1024, &mut l1, &mut l2);
            println!("{policy}: miss rate at 2x capacity {miss:.3}");
            assert!(miss >= low && miss <= high, "{policy}: {miss}");
        }
    }

    #[test]
    fn tags_of_a_256_mib_cache_are_allocated_lazily() {
        let big = CacheConfig {
            size_bytes: 256 << 20,
            line_bytes: 128,
            ways: 16,
            policy: ReplacementPolicy::Srrip,
            write_policy: WritePolicy::WriteBack,
        };
        let mut c = CacheModel::new(&big).unwrap();
        let idle = c.heap_bytes();
        println!("idle 256 MiB cache: {idle} heap bytes");
        assert!(idle < 128 * 1024, "idle heap {idle}");
        c.access(LineAddr(0), AccessKind::Read, true);
        let one_group = c.heap_bytes() - idle;
        assert!(
            one_group > 0 && one_group < 8 * 1024,
            "one group costs {one_group}"
        );
        // Lines in four far-apart sets allocate four groups; a second line in the same set
        // group allocates nothing.
        for line in [1u64 << 12, 1 << 13, 1 << 14, 1 << 14 | 1] {
            c.access(LineAddr(line), AccessKind::Read, true);
        }
        assert_eq!(c.heap_bytes(), idle + 4 * one_group);
        // 1 MiB of consecutive lines touches 8192 consecutive sets: 512 groups of 16 sets
        // (the group of line 1 << 12 among them), plus the groups of 1 << 13 and 1 << 14.
        for line in 0..8192 {
            c.access(LineAddr(line), AccessKind::Write, true);
        }
        assert_eq!(c.heap_bytes(), idle + 514 * one_group);
        println!("after touching 1 MiB: {} heap bytes", c.heap_bytes());
        assert!(c.heap_bytes() < 2 << 20);
    }

    #[test]
    fn serde_round_trip_preserves_behaviour() {
        let ops_before = "w1 r2 r3 w9 r17 a33 r1 r65 w2";
        let ops_after: String = (0..200)
            .map(|i| format!("{}{} ", ["r", "w", "a"][i % 3], (i * 37) % 40))
            .collect();
        for policy in ["lru", "srrip", "random:3", "ideal"] {
            let mut original =
                CacheModel::new(&config(8, 2, policy, WritePolicy::WriteBack)).unwrap();
            trace(&mut original, ops_before);
            let json = serde_json::to_string(&original).unwrap();
            let mut from_json: CacheModel = serde_json::from_str(&json).unwrap();
            let bytes = postcard::to_stdvec(&original).unwrap();
            let mut from_postcard: CacheModel = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(from_json.stats(), original.stats());
            let want = trace(&mut original, &ops_after);
            assert_eq!(trace(&mut from_json, &ops_after), want, "{policy} via json");
            assert_eq!(
                trace(&mut from_postcard, &ops_after),
                want,
                "{policy} via postcard"
            );
            assert_eq!(from_json.writeback_all(), original.writeback_all());
        }
    }

    /// A straightforward LRU reference: per set, a list of (line, dirty), most recent first.
    struct ReferenceLru {
        sets: Vec<Vec<(u64, bool)>>,
        ways: usize,
    }

    impl ReferenceLru {
        fn access(&mut self, line: u64, write: bool) -> (bool, Option<(u64, bool)>) {
            let n_sets = self.sets.len() as u64;
            let set = &mut self.sets[(line % n_sets) as usize];
            if let Some(pos) = set.iter().position(|&(l, _)| l == line) {
                let (l, dirty) = set.remove(pos);
                set.insert(0, (l, dirty || write));
                return (true, None);
            }
            let evicted = if set.len() == self.ways {
                set.pop()
            } else {
                None
            };
            set.insert(0, (line, write));
            (false, evicted)
        }
    }

    proptest! {
        #[test]
        fn lru_matches_a_reference_model(ops in proptest::collection::vec((0u64..40, any::<bool>(), 0u8..10), 1..300)) {
            let mut model = cache(4, 4, "lru");
            let mut reference = ReferenceLru { sets: vec![Vec::new(); 4], ways: 4 };
            for (line, write, inval) in ops {
                if inval == 0 {
                    let got = model.invalidate(LineAddr(line)).map(|e| (e.line.get(), e.dirty));
                    let set = &mut reference.sets[(line % 4) as usize];
                    let want = set.iter().position(|&(l, _)| l == line).map(|pos| set.remove(pos));
                    prop_assert_eq!(got, want);
                    continue;
                }
                let kind = if write { AccessKind::Write } else { AccessKind::Read };
                let outcome = model.access(LineAddr(line), kind, true);
                let (hit, evicted) = reference.access(line, write);
                prop_assert_eq!(outcome.is_hit(), hit);
                let got = match outcome {
                    AccessOutcome::Miss { evicted, .. } => evicted.map(|e| (e.line.get(), e.dirty)),
                    AccessOutcome::Hit { .. } => None,
                };
                prop_assert_eq!(got, evicted);
            }
        }

        #[test]
        fn every_policy_keeps_at_most_ways_lines_per_set(
            policy in prop_oneof![Just("lru"), Just("srrip"), Just("random:5")],
            lines in proptest::collection::vec(0u64..200, 1..400),
        ) {
            let mut model = cache(4, 3, policy);
            let mut resident = std::collections::BTreeSet::new();
            for line in lines {
                match model.access(LineAddr(line), AccessKind::Read, true) {
                    AccessOutcome::Hit { .. } => prop_assert!(resident.contains(&line)),
                    AccessOutcome::Miss { evicted, .. } => {
                        prop_assert!(!resident.contains(&line));
                        if let Some(e) = evicted {
                            prop_assert!(resident.remove(&e.line.get()));
                            prop_assert_eq!(e.line.get() % 4, line % 4, "victim from another set");
                        }
                        resident.insert(line);
                    }
                }
                prop_assert_eq!(model.resident_lines(), resident.len() as u64);
            }
        }
    }
}

mod mshr {
    use amdgpu::timing::{ConfigError, LineAddr, MshrAllocation, MshrConfig, MshrError, MshrFile};

    #[test]
    fn allocate_merge_full_and_complete() {
        let mut m: MshrFile<u32> = MshrFile::new(&MshrConfig {
            entries: 2,
            targets_per_entry: 3,
        })
        .unwrap();
        assert_eq!(m.allocate(LineAddr(1), 10), MshrAllocation::New);
        assert_eq!(m.allocate(LineAddr(1), 11), MshrAllocation::Merged);
        assert_eq!(m.allocate(LineAddr(2), 20), MshrAllocation::New);
        assert!(m.is_full());
        assert_eq!(m.allocate(LineAddr(3), 30), MshrAllocation::Full(30));
        assert_eq!(m.allocate(LineAddr(1), 12), MshrAllocation::Merged);
        assert_eq!(
            m.allocate(LineAddr(1), 13),
            MshrAllocation::Full(13),
            "target list full"
        );
        assert_eq!(m.complete(LineAddr(1)), Ok(vec![10, 11, 12]));
        assert!(!m.is_pending(LineAddr(1)));
        assert_eq!(
            m.complete(LineAddr(1)),
            Err(MshrError::NotPending { line: LineAddr(1) })
        );
        assert_eq!(m.allocate(LineAddr(3), 30), MshrAllocation::New);
        assert_eq!(m.occupancy(), 2);
        let s = m.stats();
        assert_eq!(
            (
                s.allocations,
                s.merges,
                s.full_entries,
                s.full_targets,
                s.peak_occupancy
            ),
            (3, 2, 1, 1, 2)
        );
    }

    #[test]
    fn zero_capacity_is_a_config_error() {
        let e = MshrFile::<u8>::new(&MshrConfig {
            entries: 0,
            targets_per_entry: 1,
        })
        .unwrap_err();
        assert_eq!(
            e,
            ConfigError::Zero {
                model: "mshr",
                field: "entries"
            }
        );
        let e = MshrFile::<u8>::new(&MshrConfig {
            entries: 1,
            targets_per_entry: 0,
        })
        .unwrap_err();
        assert!(e.to_string().contains("targets_per_entry"));
    }

    #[test]
    fn serde_round_trip_keeps_waiters() {
        let mut m: MshrFile<String> = MshrFile::new(&MshrConfig {
            entries: 4,
            targets_per_entry: 4,
        })
        .unwrap();
        m.allocate(LineAddr(5), "a".into());
        m.allocate(LineAddr(5), "b".into());
        let mut back: MshrFile<String> =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(
            back.allocate(LineAddr(5), "c".into()),
            MshrAllocation::Merged
        );
        assert_eq!(back.complete(LineAddr(5)).unwrap(), vec!["a", "b", "c"]);
    }
}

mod bandwidth {
    use amdgpu::timing::{Bandwidth, BandwidthPort, ConfigError, Cycle};
    use proptest::prelude::*;

    #[test]
    fn transfers_serialize_at_the_configured_rate() {
        let mut p = BandwidthPort::new(Bandwidth::per_cycle(64)).unwrap();
        assert_eq!(p.reserve(Cycle(0), 128), Cycle(2));
        assert_eq!(p.reserve(Cycle(0), 64), Cycle(3));
        assert_eq!(p.reserve(Cycle(10), 64), Cycle(11));
        assert_eq!(p.reserve(Cycle(10), 0), Cycle(11));
        assert_eq!(p.busy_until(), Cycle(11));
        assert_eq!(
            (p.stats().transfers, p.stats().bytes, p.stats().queued),
            (4, 256, 2)
        );
    }

    #[test]
    fn fractional_rates_are_exact() {
        // 3 bytes every 2 cycles.
        let mut p = BandwidthPort::new(Bandwidth {
            bytes: 3,
            per_cycles: 2,
        })
        .unwrap();
        assert_eq!(p.reserve(Cycle(0), 3), Cycle(2));
        assert_eq!(p.reserve(Cycle(0), 1), Cycle(3)); // 8/3 cycles, rounded up
        assert_eq!(p.reserve(Cycle(0), 2), Cycle(4)); // exactly 12/3
        let mut sum = 0;
        let mut last = Cycle(0);
        for _ in 0..300 {
            last = p.reserve(Cycle(0), 1);
            sum += 1;
        }
        assert_eq!(last, Cycle(4 + (2 * sum as u64).div_ceil(3)));
    }

    #[test]
    fn zero_bandwidth_is_a_config_error() {
        assert_eq!(
            BandwidthPort::new(Bandwidth {
                bytes: 0,
                per_cycles: 1
            })
            .unwrap_err(),
            ConfigError::Zero {
                model: "bandwidth",
                field: "bytes"
            }
        );
        assert!(BandwidthPort::new(Bandwidth {
            bytes: 1,
            per_cycles: 0
        })
        .is_err());
    }

    proptest! {
        #[test]
        fn a_stream_never_exceeds_the_bandwidth(
            bytes in 1u64..512,
            per_cycles in 1u64..16,
            requests in proptest::collection::vec((0u64..64, 0u64..4096), 1..64),
        ) {
            let mut port = BandwidthPort::new(Bandwidth { bytes, per_cycles }).unwrap();
            let mut now = 0;
            let mut done = Vec::new();
            for (gap, size) in requests {
                now += gap;
                let finish = port.reserve(Cycle(now), size);
                prop_assert!(finish >= Cycle(now));
                done.push((now, size, finish.get()));
            }
            // For every window of consecutive reservations i..=k: the bytes moved fit in
            // (finish_k - arrival_i) cycles of bandwidth.
            for i in 0..done.len() {
                let mut window_bytes = 0u128;
                for k in i..done.len() {
                    window_bytes += u128::from(done[k].1);
                    let cycles = u128::from(done[k].2 - done[i].0);
                    prop_assert!(
                        window_bytes * u128::from(per_cycles) <= cycles * u128::from(bytes),
                        "reservations {}..={} moved {} bytes in {} cycles", i, k, window_bytes, cycles
                    );
                }
            }
            let back: BandwidthPort = serde_json::from_str(&serde_json::to_string(&port).unwrap()).unwrap();
            prop_assert_eq!(back.busy_until(), port.busy_until());
        }
    }
}

mod hbm {
    use amdgpu::timing::hbm::{AddressMapping, DramTiming, HbmConfig, HbmModel, MapField};
    use amdgpu::timing::{ByteAddr, ConfigError, Cycle, HbmError, Part};
    use proptest::prelude::*;

    /// MI300X HBM3 seen from its own memory clock (1 caller cycle = 1 memory clock).
    fn same_clock() -> HbmConfig {
        let mut config = HbmConfig::hbm3_mi300x();
        config.caller_clock_mhz = config.memory_clock_mhz;
        config
    }

    #[test]
    fn default_parameter_sets_reach_the_published_peaks() {
        let gbs = |c: HbmConfig| c.peak_bytes_per_second() / 1e9;
        assert_eq!(gbs(HbmConfig::hbm2e_mi210()), 1638.4);
        assert_eq!(gbs(HbmConfig::hbm3_mi300x()), 5324.8);
        assert_eq!(gbs(HbmConfig::hbm3e_mi355x()), 8192.0);
        let t = HbmConfig::hbm3_mi300x().timing;
        assert_eq!(
            t,
            DramTiming {
                t_rcd: 37,
                t_cl: 37,
                t_rp: 37,
                t_ras: 86,
                t_burst: 4
            }
        );
        assert_eq!(HbmConfig::hbm2e_mi210().timing.t_rcd, 23);
        assert_eq!(HbmConfig::hbm3e_mi355x().timing.t_ras, 132);
        for part in Part::ALL {
            assert!(HbmModel::new(&HbmConfig::for_part(part)).is_ok(), "{part}");
        }
    }

    #[test]
    fn default_address_layout_is_documented_bit_fields() {
        let m = HbmModel::new(&HbmConfig::hbm3_mi300x()).unwrap();
        assert_eq!(
            m.bit_layout(),
            vec![
                ("offset", 0, 8),
                ("channel", 8, 4),
                ("stack", 12, 3),
                ("pseudo_channel", 15, 1),
                ("column", 16, 2),
                ("bank_group", 18, 2),
                ("bank", 20, 4),
                ("row", 24, 0),
            ]
        );
        let loc = m.locate(ByteAddr(0x1_23_45_67));
        assert_eq!(
            (loc.channel, loc.stack, loc.pseudo_channel, loc.column),
            (5, 4, 0, 3)
        );
        assert_eq!(loc.row, 1);
        // Bank XOR: row 1 flips the lowest bank bit of bank 2 / group 0.
        assert_eq!((loc.bank_group, loc.bank), (0, 2 ^ 1));
    }

    /// An address in the same bank as `addr` but another row.
    fn same_bank_other_row(m: &HbmModel, addr: u64) -> u64 {
        let want = m.locate(ByteAddr(addr));
        (1..1u64 << 20)
            .map(|i| addr + (i << 24))
            .find(|&a| {
                let l = m.locate(ByteAddr(a));
                (l.stack, l.channel, l.pseudo_channel, l.bank_group, l.bank)
                    == (
                        want.stack,
                        want.channel,
                        want.pseudo_channel,
                        want.bank_group,
                        want.bank,
                    )
                    && l.row != want.row
            })
            .expect("some row of the same bank exists")
    }

    #[test]
    fn row_hit_is_faster_than_row_miss_is_faster_than_conflict() {
        let config = same_clock();
        let t = config.timing;
        let (rcd, cl, rp, burst) = (
            u64::from(t.t_rcd),
            u64::from(t.t_cl),
            u64::from(t.t_rp),
            u64::from(t.t_burst),
        );
        let mut m = HbmModel::new(&config).unwrap();
        let data = 2 * burst; // 64 bytes = 2 bursts
        let miss = m.access(Cycle(0), ByteAddr(0), 64, false).unwrap() - Cycle(0);
        let hit = m.access(Cycle(1000), ByteAddr(64), 64, false).unwrap() - Cycle(1000);
        let other = same_bank_other_row(&m, 0);
        let conflict = m.access(Cycle(2000), ByteAddr(other), 64, true).unwrap() - Cycle(2000);
        assert_eq!(miss, rcd + cl + data);
        assert_eq!(hit, cl + data);
        assert_eq!(conflict, rp + rcd + cl + data);
        assert!(hit < miss && miss < conflict);
        let s = m.stats();
        assert_eq!((s.row_hits, s.row_misses, s.row_conflicts), (1, 1, 1));
        assert_eq!((s.bytes_read(), s.bytes_written()), (128, 64));
    }

    #[test]
    fn conflict_waits_for_tras() {
        let config = same_clock();
        let t = config.timing;
        let mut m = HbmModel::new(&config).unwrap();
        m.access(Cycle(0), ByteAddr(0), 32, false).unwrap();
        let other = same_bank_other_row(&m, 0);
        let done = m.access(Cycle(1), ByteAddr(other), 32, false).unwrap();
        assert_eq!(
            done.get(),
            u64::from(t.t_ras + t.t_rp + t.t_rcd + t.t_cl + t.t_burst)
        );
    }

    #[test]
    fn latencies_convert_to_the_callers_clock() {
        let config = HbmConfig::hbm3_mi300x();
        let t = config.timing;
        let mut m = HbmModel::new(&config).unwrap();
        let miss = m.access(Cycle(0), ByteAddr(0), 32, false).unwrap().get();
        let memory_clocks = u64::from(t.t_rcd + t.t_cl + t.t_burst);
        assert_eq!(miss, (memory_clocks * 2100).div_ceil(2600));
    }

    fn stream(config: &HbmConfig, total: u64, chunk: u64) -> f64 {
        let mut m = HbmModel::new(config).unwrap();
        let mut last = Cycle(0);
        for addr in (0..total).step_by(chunk as usize) {
            last = last.max(m.access(Cycle(0), ByteAddr(addr), chunk, false).unwrap());
        }
        assert_eq!(m.stats().bytes_read(), total);
        total as f64 / last.get() as f64
    }

    #[test]
    fn channel_parallel_streams_approach_but_never_exceed_peak() {
        for part in Part::ALL {
            let config = HbmConfig::for_part(part);
            let peak = config.peak_bytes_per_caller_cycle();
            let achieved = stream(&config, 16 << 20, 128);
            println!(
                "{part}: stream {achieved:.1} B/cycle of peak {peak:.1} ({:.1}%)",
                100.0 * achieved / peak
            );
            assert!(achieved <= peak, "{part}: {achieved} > {peak}");
            assert!(achieved >= 0.9 * peak, "{part}: {achieved} < 90% of {peak}");
        }
    }

    #[test]
    fn one_pseudo_channel_limits_a_stream_to_its_share() {
        let config = HbmConfig::hbm3_mi300x();
        let pcs = config.geometry.total_pseudo_channels();
        let share = config.peak_bytes_per_caller_cycle() / pcs as f64;
        let mut m = HbmModel::new(&config).unwrap();
        // Granules 256 B apart land on different pseudo-channels; 256 B x pcs apart on the
        // same one.
        let stride = 256 * pcs;
        let mut last = Cycle(0);
        let n = 4096u64;
        for i in 0..n {
            last = last.max(
                m.access(Cycle(0), ByteAddr(i * stride), 256, false)
                    .unwrap(),
            );
        }
        let first = m.locate(ByteAddr(0));
        let other = m.locate(ByteAddr((n - 1) * stride));
        assert_eq!(
            (first.stack, first.channel, first.pseudo_channel),
            (other.stack, other.channel, other.pseudo_channel)
        );
        let achieved = (n * 256) as f64 / last.get() as f64;
        assert!(
            achieved <= share && achieved >= 0.9 * share,
            "{achieved} vs share {share}"
        );
        let busy: Vec<_> = m
            .stats()
            .channels
            .iter()
            .filter(|c| c.bytes_read > 0)
            .collect();
        assert_eq!(busy.len(), 1);
    }

    #[test]
    fn config_errors_name_the_field() {
        let mut c = HbmConfig::hbm3_mi300x();
        c.geometry.channels_per_stack = 12;
        let e = HbmModel::new(&c).unwrap_err();
        assert_eq!(
            e,
            ConfigError::NotPowerOfTwo {
                model: "hbm",
                field: "geometry.channels_per_stack",
                value: 12
            }
        );
        assert!(e.to_string().contains("channels_per_stack"));
        let mut c = HbmConfig::hbm3_mi300x();
        c.mapping = AddressMapping {
            order: vec![MapField::Channel, MapField::Channel],
            ..AddressMapping::default()
        };
        assert!(matches!(
            HbmModel::new(&c).unwrap_err(),
            ConfigError::BadFieldOrder { .. }
        ));
        let mut c = HbmConfig::hbm3_mi300x();
        c.mapping.interleave_bytes = 4096;
        assert!(matches!(
            HbmModel::new(&c).unwrap_err(),
            ConfigError::TooLarge {
                field: "mapping.interleave_bytes",
                ..
            }
        ));
        let mut c = HbmConfig::hbm3_mi300x();
        c.caller_clock_mhz = 0;
        assert_eq!(
            HbmModel::new(&c).unwrap_err(),
            ConfigError::Zero {
                model: "hbm",
                field: "caller_clock_mhz"
            }
        );
        assert_eq!(
            Part::from_name("mi250").unwrap_err(),
            ConfigError::UnknownPart {
                name: "mi250".into()
            }
        );
        assert_eq!("MI300X".parse::<Part>().unwrap(), Part::Mi300x);
    }

    #[test]
    fn oversized_access_is_an_error_not_a_hang() {
        let mut m = HbmModel::new(&HbmConfig::hbm3_mi300x()).unwrap();
        let max = amdgpu::timing::hbm::MAX_ACCESS_BYTES;
        assert!(m.access(Cycle(0), ByteAddr(0), max, false).is_ok());
        assert_eq!(
            m.access(Cycle(0), ByteAddr(0), u64::MAX, false),
            Err(HbmError::AccessTooLarge {
                bytes: u64::MAX,
                max
            })
        );
        assert_eq!(m.access(Cycle(5), ByteAddr(0), 0, true), Ok(Cycle(5)));
        assert_eq!(m.stats().bytes_read(), max);
    }

    #[test]
    fn serde_round_trip_preserves_open_rows_and_busy_times() {
        let mut a = HbmModel::new(&HbmConfig::hbm2e_mi210()).unwrap();
        for i in 0..100u64 {
            a.access(Cycle(i), ByteAddr(i * 4160), 128, i % 3 == 0)
                .unwrap();
        }
        let mut b: HbmModel = postcard::from_bytes(&postcard::to_stdvec(&a).unwrap()).unwrap();
        for i in 0..100u64 {
            let (now, addr) = (Cycle(100 + i), ByteAddr(i * 7744));
            assert_eq!(
                a.access(now, addr, 64, false).unwrap(),
                b.access(now, addr, 64, false).unwrap()
            );
        }
        assert_eq!(a.stats(), b.stats());
    }

    proptest! {
        #[test]
        fn random_traffic_never_exceeds_peak(
            requests in proptest::collection::vec((0u64..8, 0u64..(1 << 30), 1u64..1024, any::<bool>()), 1..200),
        ) {
            let config = HbmConfig::hbm3_mi300x();
            let mut m = HbmModel::new(&config).unwrap();
            let mut now = 0;
            let mut last = 0;
            let mut bytes = 0;
            for (gap, addr, size, write) in requests {
                now += gap;
                let done = m.access(Cycle(now), ByteAddr(addr), size, write).unwrap();
                prop_assert!(done > Cycle(now));
                last = last.max(done.get());
                bytes += size;
            }
            prop_assert_eq!(m.stats().bytes_read() + m.stats().bytes_written(), bytes);
            prop_assert!(bytes as f64 <= config.peak_bytes_per_caller_cycle() * last as f64);
        }
    }
}

mod latency {
    use amdgpu::timing::{CacheModel, Part, PartTiming, ReplacementPolicy};

    #[test]
    fn every_level_builds_and_totals_match_the_parts_table() {
        const MIB: u64 = 1 << 20;
        for part in Part::ALL {
            let t = PartTiming::for_part(part);
            assert_eq!(t.part, part);
            for (name, level) in t.levels() {
                CacheModel::new(&level.cache_config(ReplacementPolicy::Lru))
                    .unwrap_or_else(|e| panic!("{part} {name}: {e}"));
            }
            let total =
                |l: amdgpu::timing::latency::CacheLevelSpec| l.size_bytes * u64::from(l.instances);
            match part {
                Part::Mi210 => {
                    assert_eq!(total(t.l2), 8 * MIB);
                    assert_eq!(t.vector_l1.size_bytes, 16 * 1024);
                    assert!(t.memory_side.is_none());
                }
                Part::Mi300x => {
                    assert_eq!(total(t.l2), 8 * 4 * MIB);
                    assert_eq!(t.memory_side.map(total), Some(256 * MIB));
                    assert_eq!(t.vector_l1.instances, 304);
                }
                Part::Mi355x => {
                    assert_eq!(total(t.l2), 8 * 4 * MIB);
                    assert_eq!(t.memory_side.map(total), Some(256 * MIB));
                    assert_eq!(t.vector_l1.instances, 256);
                }
            }
        }
    }

    #[test]
    fn latencies_grow_outward() {
        for part in Part::ALL {
            let t = PartTiming::for_part(part);
            assert!(t.instruction.hit_latency < t.vector_l1.hit_latency);
            assert!(t.scalar_l1.hit_latency < t.vector_l1.hit_latency);
            assert!(t.vector_l1.hit_latency < t.l2.hit_latency);
            if let Some(msc) = t.memory_side {
                assert!(t.l2.hit_latency < msc.hit_latency);
            }
        }
        // The calibrated MI210 chase: a vector L1 hit is 120 cycles load to use (124 with
        // the waitcnt's turn), an L2 hit adds the crossbar both ways and the L2 pipeline.
        assert_eq!(amdgpu::timing::latency::VECTOR_L1_HIT, 120);
        assert_eq!(amdgpu::timing::latency::L2_HIT, 120 + 2 * 57 + 48);
    }

    #[test]
    fn an_idle_mi300x_cache_hierarchy_costs_little_heap() {
        let t = PartTiming::mi300x();
        let mut heap = 0usize;
        let mut models = 0;
        for (_, level) in t.levels() {
            for _ in 0..level.instances {
                let model = CacheModel::new(&level.cache_config(ReplacementPolicy::Srrip)).unwrap();
                heap += model.heap_bytes() + std::mem::size_of::<CacheModel>();
                models += 1;
            }
        }
        println!("idle MI300X: {models} cache models, {heap} bytes");
        assert!(heap < 2 << 20, "{heap} bytes");
        let hbm = amdgpu::timing::HbmModel::new(&t.hbm).unwrap().heap_bytes();
        println!("MI300X HBM model: {hbm} bytes");
        assert!(
            hbm > 16384 * 16 && hbm < 2 << 20,
            "{hbm} bytes for 16384 banks"
        );
    }
}

mod interleave {
    use amdgpu::timing::cache::{AccessKind, CacheConfig, CacheModel, WritePolicy};
    use amdgpu::timing::{
        ByteAddr, ChannelId, ChannelInterleave, ConfigError, LineAddr, ReplacementPolicy,
    };
    use proptest::prelude::*;

    #[test]
    fn mi300x_l2_routing_strips_channel_bits() {
        // 16 channels, 256 B interleave, 128 B lines.
        let il = ChannelInterleave::new(16, 256, 128).unwrap();
        assert_eq!(il.route(ByteAddr(0)), (ChannelId(0), LineAddr(0)));
        assert_eq!(il.route(ByteAddr(128)), (ChannelId(0), LineAddr(1)));
        assert_eq!(il.route(ByteAddr(256)), (ChannelId(1), LineAddr(0)));
        assert_eq!(il.route(ByteAddr(16 * 256)), (ChannelId(0), LineAddr(2)));
        assert_eq!(
            il.to_global(ChannelId(1), LineAddr(3)),
            ByteAddr(16 * 256 + 256 + 128)
        );
    }

    #[test]
    fn a_channelled_l2_holds_its_full_capacity() {
        // 16 x 256 KiB channels hold a 4 MiB working set when routed; fed global line
        // addresses instead, each channel would only use 1/16 of its sets.
        let il = ChannelInterleave::new(16, 256, 128).unwrap();
        let config = CacheConfig {
            size_bytes: 256 * 1024,
            line_bytes: 128,
            ways: 16,
            policy: ReplacementPolicy::Lru,
            write_policy: WritePolicy::WriteBack,
        };
        let mut routed: Vec<CacheModel> =
            (0..16).map(|_| CacheModel::new(&config).unwrap()).collect();
        let mut naive: Vec<CacheModel> =
            (0..16).map(|_| CacheModel::new(&config).unwrap()).collect();
        for pass in 0..2 {
            for addr in (0..4u64 << 20).step_by(128) {
                let (channel, local) = il.route(ByteAddr(addr));
                routed[channel.0 as usize].access(local, AccessKind::Read, true);
                naive[channel.0 as usize].access(ByteAddr(addr).line(128), AccessKind::Read, true);
            }
            if pass == 0 {
                routed
                    .iter_mut()
                    .chain(naive.iter_mut())
                    .for_each(CacheModel::reset_stats);
            }
        }
        let misses = |caches: &[CacheModel]| caches.iter().map(|c| c.stats().misses()).sum::<u64>();
        assert_eq!(misses(&routed), 0);
        assert_eq!(misses(&naive), 32768, "the naive mapping thrashes");
    }

    #[test]
    fn bad_interleave_is_a_config_error() {
        assert_eq!(
            ChannelInterleave::new(12, 256, 128).unwrap_err(),
            ConfigError::NotPowerOfTwo {
                model: "interleave",
                field: "channels",
                value: 12
            }
        );
        assert!(matches!(
            ChannelInterleave::new(16, 64, 128).unwrap_err(),
            ConfigError::TooLarge {
                field: "line_bytes",
                ..
            }
        ));
        assert_eq!(
            ChannelInterleave::new(16, 0, 128).unwrap_err(),
            ConfigError::Zero {
                model: "interleave",
                field: "granule_bytes"
            }
        );
    }

    proptest! {
        #[test]
        fn route_and_to_global_are_inverse(addr in 0u64..(1 << 48), channels_log in 0u32..8, granule_log in 7u32..13) {
            let il = ChannelInterleave::new(1 << channels_log, 1 << granule_log, 128).unwrap();
            let (channel, local) = il.route(ByteAddr(addr));
            prop_assert!(channel.0 < il.channels());
            prop_assert_eq!(il.to_global(channel, local), ByteAddr(addr & !127));
        }
    }
}
