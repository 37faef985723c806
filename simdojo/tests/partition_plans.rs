//! Partitioning: every strategy on small hand-built topologies, the min-cut quality
//! properties, reports and lookahead, errors, and determinism on random graphs.

use proptest::prelude::*;
use simdojo::ids::{ComponentId, PartitionId};
use simdojo::params::Params;
use simdojo::partition::{self, lookahead_matrix, PartitionError, Plan, Strategy};
use simdojo::time::Tick;
use simdojo::topology::{LinkKind, Topology};

/// A topology of components at `paths`, no links.
fn components(paths: &[&str]) -> Topology {
    let mut t = Topology::new();
    for path in paths {
        t.add_component(*path, "node", Params::new());
    }
    t
}

/// `n` components `c[i]`, no links.
fn numbered(n: usize) -> Topology {
    let mut t = Topology::new();
    for idx in 0..n {
        t.add_component(format!("c[{idx}]"), "node", Params::new());
    }
    t
}

fn link(t: &mut Topology, a: usize, b: usize, latency: Tick) {
    t.add_link((ComponentId::from_index(a), "out"), (ComponentId::from_index(b), "in"), latency, LinkKind::Paired);
}

fn raw(plan: &Plan) -> Vec<u32> {
    plan.assignment.iter().map(|p| p.0).collect()
}

/// Plans `t` and checks the plan is the exact `expected` assignment.
fn check(t: &Topology, strategy: &str, n: u32, expected: &[u32]) {
    let strategy: Strategy = strategy.parse().unwrap();
    let plan = partition::plan(t, &strategy, n).unwrap();
    assert_eq!(raw(&plan), expected, "{strategy} into {n}");
    let n_used = expected.iter().max().map_or(0, |m| m + 1);
    assert_eq!(plan.n_partitions, n_used, "{strategy} into {n}");
}

/// Checks the invariants every plan must hold.
fn assert_valid(t: &Topology, plan: &Plan, n: u32) {
    assert_eq!(plan.assignment.len(), t.components.len());
    assert!(plan.n_partitions >= 1 && plan.n_partitions <= n);
    let mut used = vec![false; plan.n_partitions as usize];
    for p in &plan.assignment {
        used[p.index()] = true;
    }
    assert!(used.iter().all(|&u| u), "an empty partition in {plan:?}");
}

#[test]
fn strategy_names_round_trip() {
    for name in Strategy::NAMES.iter().copied().chain(["subtree:gpu.xcd"]) {
        let strategy: Strategy = name.parse().unwrap();
        assert_eq!(strategy.to_string(), name);
    }
    assert_eq!("subtree".parse::<Strategy>().unwrap(), Strategy::Subtree { prefix: String::new() });
    assert_eq!("subtree:gpu".parse::<Strategy>().unwrap(), Strategy::Subtree { prefix: "gpu".into() });
    let err = "metis".parse::<Strategy>().unwrap_err();
    assert!(matches!(err, PartitionError::UnknownStrategy { .. }));
    assert!(err.to_string().contains("round-robin"), "{err}");
    assert_eq!("subtree:".parse::<Strategy>().unwrap_err(), PartitionError::EmptySubtreePrefix);
}

#[test]
fn single_puts_everything_in_partition_zero() {
    check(&numbered(4), "single", 3, &[0, 0, 0, 0]);
}

#[test]
fn round_robin_deals_ids_and_clamps() {
    check(&numbered(5), "round-robin", 2, &[0, 1, 0, 1, 0]);
    check(&numbered(3), "round-robin", 8, &[0, 1, 2]);
}

#[test]
fn linear_cuts_contiguous_blocks_of_equal_weight() {
    check(&numbered(6), "linear", 3, &[0, 0, 1, 1, 2, 2]);
    check(&numbered(3), "linear", 5, &[0, 1, 2]);
    let mut t = numbered(4);
    t.components[0].weight = 3.0;
    check(&t, "linear", 2, &[0, 1, 1, 1]);
    // A dominant first component still leaves every partition a component.
    t.components[0].weight = 10.0;
    for c in &mut t.components[1..] {
        c.weight = 0.0;
    }
    check(&t, "linear", 3, &[0, 1, 2, 2]);
}

#[test]
fn manual_uses_declared_partitions() {
    let mut t = numbered(4);
    for (c, p) in t.components.iter_mut().zip([1, 0, 1, 2]) {
        c.partition = Some(p);
    }
    check(&t, "manual", 3, &[1, 0, 1, 2]);
    // Gaps are closed, keeping the order.
    t.components[3].partition = Some(5);
    check(&t, "manual", 6, &[1, 0, 1, 2]);
    t.components[0].partition = Some(3);
    check(&t, "manual", 6, &[2, 0, 1, 3]);
}

#[test]
fn manual_names_the_component_at_fault() {
    let mut t = numbered(3);
    t.components[0].partition = Some(0);
    t.components[2].partition = Some(1);
    let err = partition::plan(&t, &Strategy::Manual, 2).unwrap_err();
    assert_eq!(err, PartitionError::MissingManualPartition { path: "c[1]".into() });
    assert!(err.to_string().contains("`c[1]`"), "{err}");

    t.components[1].partition = Some(2);
    let err = partition::plan(&t, &Strategy::Manual, 2).unwrap_err();
    assert_eq!(err, PartitionError::ManualPartitionOutOfRange { path: "c[1]".into(), partition: 2, n_partitions: 2 });
    assert!(err.to_string().contains("`c[1]`"), "{err}");
}

#[test]
fn subtree_balances_whole_subtrees() {
    // Subtrees a[0] (weight 2), a[1], b, a[2]: largest first, each to the lightest.
    let t = components(&["a[0].x", "a[0].y", "a[1].x", "b", "a[2].x"]);
    check(&t, "subtree", 2, &[0, 0, 1, 1, 0]);
    // One subtree heavier than a partition's share is split into its children.
    check(&components(&["a[0].x", "a[0].y"]), "subtree", 2, &[0, 1]);
    // One component cannot be split: the other partition stays empty.
    check(&components(&["a[0].x"]), "subtree", 2, &[0]);
}

#[test]
fn subtree_splits_a_single_die_by_its_compute_units() {
    // An MI210-like die: a SoC, one XCD of a command processor, an L2 and 8 CUs, an HBM.
    let mut names = vec!["gpu".to_string(), "gpu.xcd[0].cp".into(), "gpu.xcd[0].l2".into()];
    names.extend((0..8).map(|c| format!("gpu.xcd[0].cu[{c}]")));
    names.push("gpu.hbm".into());
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let t = components(&names);
    let plan = partition::plan(&t, &"subtree".parse().unwrap(), 2).unwrap();
    assert_valid(&t, &plan, 2);
    let cus_of = |p: PartitionId| {
        t.components.iter().zip(&plan.assignment).filter(|(c, &q)| q == p && c.path.contains(".cu[")).count()
    };
    let p0 = plan.assignment[0];
    let p1 = PartitionId::from_index(1 - p0.index());
    assert_eq!((cus_of(p0), cus_of(p1)), (4, 4), "{plan:?}");
    // Deeper levels split only as far as needed: two XCDs on two workers stay whole.
    let t = gpu(2);
    let plan = partition::plan(&t, &"subtree".parse().unwrap(), 2).unwrap();
    assert_ne!(only_partition(&t, &plan, "gpu.xcd[0]."), only_partition(&t, &plan, "gpu.xcd[1]."));
    // One XCD of two shader engines on four workers: split by engine, then by CU.
    let t = gpu(1);
    let plan = partition::plan(&t, &"subtree".parse().unwrap(), 4).unwrap();
    assert_valid(&t, &plan, 4);
    let used: std::collections::BTreeSet<_> = plan.assignment.iter().collect();
    assert_eq!(used.len(), 4, "{plan:?}");
}

/// A GPU-like hierarchy: `gpu.xcd[x].se[s].cu[c]` plus `gpu.iod`, `host`.
fn gpu(n_xcd: usize) -> Topology {
    let mut t = Topology::new();
    t.add_component("host", "cpu", Params::new());
    t.add_component("gpu.iod", "iod", Params::new());
    for s in 0..2 {
        for x in 0..n_xcd {
            for c in 0..3 {
                t.add_component(format!("gpu.xcd[{x}].se[{s}].cu[{c}]"), "cu", Params::new());
            }
            t.add_component(format!("gpu.xcd[{x}].se[{s}].l1"), "cache", Params::new());
        }
    }
    t
}

/// The partition of every component whose path starts with `prefix`, checked to be one.
fn only_partition(t: &Topology, plan: &Plan, prefix: &str) -> PartitionId {
    let parts: Vec<PartitionId> = t
        .components
        .iter()
        .zip(&plan.assignment)
        .filter(|(c, _)| c.path.starts_with(prefix))
        .map(|(_, &p)| p)
        .collect();
    assert!(!parts.is_empty(), "nothing under {prefix}");
    assert!(parts.iter().all(|&p| p == parts[0]), "{prefix} is split: {parts:?}");
    parts[0]
}

#[test]
fn subtree_keeps_each_xcd_together() {
    let t = gpu(4);
    for strategy in ["subtree", "subtree:gpu.xcd"] {
        let plan = partition::plan(&t, &strategy.parse().unwrap(), 4).unwrap();
        assert_valid(&t, &plan, 4);
        let mut xcd_parts: Vec<PartitionId> =
            (0..4).map(|x| only_partition(&t, &plan, &format!("gpu.xcd[{x}]."))).collect();
        xcd_parts.sort();
        xcd_parts.dedup();
        assert_eq!(xcd_parts.len(), 4, "{strategy}: the four equal XCDs share partitions");
    }
    // Grouping one level deeper splits an XCD by shader engine.
    let plan = partition::plan(&t, &"subtree:gpu.xcd[0].se".parse().unwrap(), 2).unwrap();
    let se0 = only_partition(&t, &plan, "gpu.xcd[0].se[0].");
    let se1 = only_partition(&t, &plan, "gpu.xcd[0].se[1].");
    assert_ne!(se0, se1);

    let err = partition::plan(&t, &"subtree:gpu.xcdx".parse().unwrap(), 2).unwrap_err();
    assert_eq!(err, PartitionError::SubtreePrefixMatchesNothing { prefix: "gpu.xcdx".into() });
}

/// Two clusters of `size` components (ids interleaved), each a circulant graph of
/// 1 ns links, joined by one 100 ns link.
fn two_clusters(size: usize) -> Topology {
    let mut t = numbered(2 * size);
    let id = |cluster: usize, idx: usize| 2 * (idx % size) + cluster;
    for cluster in 0..2 {
        for idx in 0..size {
            for step in [1, 2, 7] {
                link(&mut t, id(cluster, idx), id(cluster, idx + step), Tick::ns(1));
            }
        }
    }
    link(&mut t, id(0, 5), id(1, size / 2), Tick::ns(100));
    t
}

#[test]
fn mincut_cuts_only_the_high_latency_bridge() {
    for size in [10, 300] {
        let t = two_clusters(size);
        let plan = partition::plan(&t, &Strategy::MinCut, 2).unwrap();
        let report = partition::report(&t, &plan);
        assert_eq!(report.n_cut_links, 1, "size {size}:\n{report}");
        assert_eq!(report.lookahead, Some(Tick::ns(100)));
        assert_eq!(report.imbalance, 0.0);
        for idx in 0..2 * size {
            assert_eq!(plan.assignment[idx], plan.assignment[idx % 2], "component {idx}");
        }
    }
}

fn ring(n: usize) -> Topology {
    let mut t = numbered(n);
    for idx in 0..n {
        link(&mut t, idx, (idx + 1) % n, Tick::ns(1));
    }
    t
}

#[test]
fn mincut_balances_a_ring_within_five_percent() {
    for (n_components, k) in [(120, 4), (2000, 3), (1001, 7)] {
        let t = ring(n_components);
        let plan = partition::plan(&t, &Strategy::MinCut, k).unwrap();
        assert_valid(&t, &plan, k);
        assert_eq!(plan.n_partitions, k);
        let report = partition::report(&t, &plan);
        assert!(report.imbalance <= 0.05, "{n_components} into {k}:\n{report}");
        // A ring cut into k arcs cuts k links; allow the greedy refinement some slack.
        assert!(report.n_cut_links <= 2 * k as usize, "{n_components} into {k}:\n{report}");
    }
}

#[test]
fn mincut_keeps_low_latency_fabrics_whole() {
    // Two groups of 40, each joined by a 1 ns fabric; one 50 ns link between them.
    let mut t = numbered(80);
    for group in 0..2 {
        let members = (0..40).map(|idx| (ComponentId::from_index(2 * idx + group), "net".to_string())).collect();
        t.add_fabric(members, Tick::ns(1));
    }
    link(&mut t, 0, 1, Tick::ns(50));
    let plan = partition::plan(&t, &Strategy::MinCut, 2).unwrap();
    let report = partition::report(&t, &plan);
    assert_eq!((report.n_cut_fabrics, report.n_cut_links), (0, 1), "\n{report}");
    assert_eq!(report.lookahead, Some(Tick::ns(50)));
}

#[test]
fn mincut_spreads_an_all_to_all_fabric_evenly() {
    let mut t = numbered(1000);
    let members = (0..1000).map(|idx| (ComponentId::from_index(idx), "net".to_string())).collect();
    t.add_fabric(members, Tick::ns(10));
    let plan = partition::plan(&t, &Strategy::MinCut, 4).unwrap();
    assert_valid(&t, &plan, 4);
    let report = partition::report(&t, &plan);
    assert!(report.imbalance <= 0.05, "\n{report}");
    assert_eq!(report.n_cut_fabrics, 1);
}

/// A GPU-like topology: per XCD an L2 and shader engines of an L1 and CUs, linked at
/// 1-2 ns; the L2s, an IO die and memory share a 20 ns fabric.
fn gpu_with_links(n_xcd: usize, n_se: usize, n_cu: usize) -> Topology {
    let mut t = Topology::new();
    let mut fabric = Vec::new();
    for x in 0..n_xcd {
        let l2 = t.add_component(format!("gpu.xcd[{x}].l2"), "l2", Params::new());
        fabric.push((l2, "net".to_string()));
        for s in 0..n_se {
            let l1 = t.add_component(format!("gpu.xcd[{x}].se[{s}].l1"), "l1", Params::new());
            t.add_link((l1, "mem"), (l2, "cpu"), Tick::ns(2), LinkKind::Paired);
            for c in 0..n_cu {
                let cu = t.add_component(format!("gpu.xcd[{x}].se[{s}].cu[{c}]"), "cu", Params::new());
                t.add_link((cu, "mem"), (l1, "cpu"), Tick::ns(1), LinkKind::Paired);
            }
        }
    }
    for path in ["gpu.iod", "gpu.mem"] {
        let id = t.add_component(path, "misc", Params::new());
        fabric.push((id, "net".to_string()));
    }
    t.add_fabric(fabric, Tick::ns(20));
    t
}

#[test]
fn mincut_finds_the_xcds_of_a_gpu() {
    let t = gpu_with_links(8, 4, 8);
    let plan = partition::plan(&t, &Strategy::MinCut, 8).unwrap();
    assert_valid(&t, &plan, 8);
    let mut xcd_parts: Vec<PartitionId> =
        (0..8).map(|x| only_partition(&t, &plan, &format!("gpu.xcd[{x}]."))).collect();
    xcd_parts.sort();
    xcd_parts.dedup();
    assert_eq!(xcd_parts.len(), 8);
    let report = partition::report(&t, &plan);
    assert_eq!((report.n_cut_links, report.lookahead), (0, Some(Tick::ns(20))), "\n{report}");

    // Fewer partitions: whole XCDs share them.
    let plan = partition::plan(&t, &Strategy::MinCut, 4).unwrap();
    for x in 0..8 {
        only_partition(&t, &plan, &format!("gpu.xcd[{x}]."));
    }
    // More partitions than XCDs: XCDs split between shader engines, never inside one.
    let plan = partition::plan(&t, &Strategy::MinCut, 16).unwrap();
    assert_valid(&t, &plan, 16);
    for x in 0..8 {
        for s in 0..4 {
            only_partition(&t, &plan, &format!("gpu.xcd[{x}].se[{s}]."));
        }
    }
    let report = partition::report(&t, &plan);
    assert_eq!(report.lookahead, Some(Tick::ns(2)), "\n{report}");
    assert!(report.imbalance <= 0.05, "\n{report}");
}

#[test]
fn mincut_survives_a_component_heavier_than_all_others() {
    let mut t = ring(20);
    t.components[7].weight = 100.0;
    let plan = partition::plan(&t, &Strategy::MinCut, 3).unwrap();
    assert_valid(&t, &plan, 3);
    assert_eq!(plan.n_partitions, 3);
    let heavy = plan.assignment[7];
    assert_eq!(plan.members(heavy).count(), 1, "the heavy component needs a partition of its own: {plan:?}");
}

#[test]
fn all_zero_weights_balance_by_count() {
    let mut t = numbered(6);
    for c in &mut t.components {
        c.weight = 0.0;
    }
    check(&t, "linear", 2, &[0, 0, 0, 1, 1, 1]);
    check(&t, "subtree", 3, &[0, 1, 2, 0, 1, 2]);
}

#[test]
fn mincut_with_more_partitions_than_components_uses_each_once() {
    let t = two_clusters(3);
    let plan = partition::plan(&t, &Strategy::MinCut, 10).unwrap();
    assert_valid(&t, &plan, 10);
    assert_eq!(plan.n_partitions, 6);
}

#[test]
fn report_counts_cuts_and_directional_lookahead() {
    let mut t = numbered(4);
    t.components[3].weight = 3.0;
    // 0 -> 1 one way at 5 ns; 1 <-> 2 paired at 7 ns; 2 <-> 3 paired at 1 ns (internal).
    t.add_link((ComponentId(0), "o"), (ComponentId(1), "i"), Tick::ns(5), LinkKind::OneWay);
    link(&mut t, 1, 2, Tick::ns(7));
    link(&mut t, 2, 3, Tick::ns(1));
    t.add_fabric(vec![(ComponentId(0), "f".into()), (ComponentId(2), "f".into())], Tick::ns(9));
    let plan =
        Plan { assignment: vec![PartitionId(0), PartitionId(1), PartitionId(2), PartitionId(2)], n_partitions: 3 };
    let report = partition::report(&t, &plan);
    let loads: Vec<(usize, f64)> = report.partitions.iter().map(|l| (l.n_components, l.weight)).collect();
    assert_eq!(loads, vec![(1, 1.0), (1, 1.0), (2, 4.0)]);
    assert_eq!(report.imbalance, 4.0 / 2.0 - 1.0);
    assert_eq!((report.n_cut_links, report.cut_link_weight), (2, 2.0));
    assert_eq!((report.n_cut_fabrics, report.cut_fabric_weight), (1, 1.0));
    assert_eq!(report.lookahead, Some(Tick::ns(5)));
    let la = |p: u32, q: u32| report.lookahead(PartitionId(p), PartitionId(q));
    assert_eq!(la(0, 1), Some(Tick::ns(5)));
    assert_eq!(la(1, 0), None, "a one-way link gives no lookahead backwards");
    assert_eq!((la(1, 2), la(2, 1)), (Some(Tick::ns(7)), Some(Tick::ns(7))));
    assert_eq!((la(0, 2), la(2, 0)), (Some(Tick::ns(9)), Some(Tick::ns(9))));
    assert_eq!(la(2, 2), None);
    assert_eq!(la(0, 7), None);
    assert_eq!(lookahead_matrix(&t, &plan), report.matrix);
    let text = report.to_string();
    assert!(text.contains("lookahead: 5.000ns"), "{text}");
    assert!(text.contains("cut links: 2"), "{text}");

    let single = partition::plan(&t, &Strategy::Single, 1).unwrap();
    let report = partition::report(&t, &single);
    assert_eq!((report.lookahead, report.n_cut_links, report.n_cut_fabrics), (None, 0, 0));
}

#[test]
fn bad_requests_and_topologies_are_errors() {
    let t = numbered(2);
    assert_eq!(partition::plan(&t, &Strategy::Single, 0).unwrap_err(), PartitionError::NoPartitions);
    assert_eq!(partition::plan(&Topology::new(), &Strategy::MinCut, 2).unwrap_err(), PartitionError::EmptyTopology);

    let mut bad_weight = numbered(2);
    bad_weight.components[1].weight = f64::NAN;
    let err = partition::plan(&bad_weight, &Strategy::Linear, 2).unwrap_err();
    assert!(matches!(&err, PartitionError::BadComponentWeight { path, .. } if path == "c[1]"), "{err}");

    let mut bad_link = numbered(2);
    link(&mut bad_link, 0, 1, Tick::ns(1));
    bad_link.links[0].weight = -1.0;
    let err = partition::plan(&bad_link, &Strategy::MinCut, 2).unwrap_err();
    assert!(err.to_string().contains("`c[0]`") && err.to_string().contains("`c[1]`"), "{err}");

    let mut dangling = numbered(2);
    link(&mut dangling, 0, 5, Tick::ns(1));
    let err = partition::plan(&dangling, &Strategy::MinCut, 2).unwrap_err();
    assert!(matches!(err, PartitionError::LinkEndpointOutOfRange { component: ComponentId(5), .. }), "{err}");
}

/// A topology described by proptest: weights, links `(a, b, latency ns, one-way)` and
/// fabrics (member lists, latency ns).
type Shape = (Vec<f64>, Vec<(usize, usize, u64, bool)>, Vec<(Vec<usize>, u64)>);

fn build(shape: &Shape) -> Topology {
    let (weights, links, fabrics) = shape;
    let n = weights.len();
    let mut t = Topology::new();
    for (idx, &w) in weights.iter().enumerate() {
        // Manual partitions from the id keep every manual plan valid.
        let id = t.add_component(format!("g[{}].c[{idx}]", idx % 3), "node", Params::new());
        t.components[id.index()].weight = w;
        t.components[id.index()].partition = Some((idx % 4) as u32);
    }
    for &(a, b, latency, one_way) in links {
        let kind = if one_way { LinkKind::OneWay } else { LinkKind::Paired };
        t.add_link(
            (ComponentId::from_index(a % n), "o"),
            (ComponentId::from_index(b % n), "i"),
            Tick::ns(latency),
            kind,
        );
    }
    for (members, latency) in fabrics {
        let members = members.iter().map(|&m| (ComponentId::from_index(m % n), "f".to_string())).collect();
        t.add_fabric(members, Tick::ns(*latency));
    }
    t
}

fn shape() -> impl proptest::strategy::Strategy<Value = Shape> {
    (
        prop::collection::vec(prop_oneof![Just(1.0), Just(0.0), 0.0..10.0f64], 1..60),
        prop::collection::vec((0..60usize, 0..60usize, 1..100u64, any::<bool>()), 0..150),
        prop::collection::vec((prop::collection::vec(0..60usize, 0..20), 1..100u64), 0..3),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_plan_is_complete_and_deterministic(shape in shape(), n in 1..9u32) {
        let t = build(&shape);
        for name in ["single", "round-robin", "linear", "subtree", "subtree:g", "manual", "mincut"] {
            let strategy: Strategy = name.parse().unwrap();
            let n = if name == "manual" { n.max(4) } else { n };
            let first = partition::plan(&t, &strategy, n).unwrap();
            assert_valid(&t, &first, n);
            let second = partition::plan(&t, &strategy, n).unwrap();
            prop_assert_eq!(&first, &second, "{} is not deterministic", name);
            let report = partition::report(&t, &first);
            prop_assert_eq!(report.partitions.iter().map(|l| l.n_components).sum::<usize>(), t.components.len());
            prop_assert!(report.partitions.iter().all(|l| l.n_components > 0));
        }
    }
}

/// Random links `(a, b, latency ns)` over `n` unit-weight components.
fn random_links(n: usize, links: &[(usize, usize, u64)]) -> Topology {
    let mut t = numbered(n);
    for &(a, b, latency) in links {
        link(&mut t, a % n, b % n, Tick::ns(latency));
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Graphs large enough to be coarsened: mincut stays complete, deterministic and
    /// within its balance limit (5%, or one component over the average when that is
    /// more).
    #[test]
    fn mincut_on_coarsened_graphs_is_balanced_and_deterministic(
        n in 150..600usize,
        links in prop::collection::vec((0..600usize, 0..600usize, 1..50u64), 0..1500),
        k in 2..9u32,
    ) {
        let t = random_links(n, &links);
        let first = partition::plan(&t, &Strategy::MinCut, k).unwrap();
        assert_valid(&t, &first, k);
        prop_assert_eq!(first.n_partitions, k);
        prop_assert_eq!(&first, &partition::plan(&t, &Strategy::MinCut, k).unwrap());
        let report = partition::report(&t, &first);
        let average = n as f64 / k as f64;
        prop_assert!(report.imbalance <= 0.05f64.max(1.0 / average) + 1e-9, "{}", report);
    }
}
