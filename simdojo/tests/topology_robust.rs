//! Robustness: no input makes topology loading panic, whatever the bytes, and small
//! edits of valid files give either a topology or positioned errors.

mod topology_support;

use std::path::Path;

use proptest::prelude::*;
use simdojo::topology::{self, Format, Limits};
use topology_support::fixtures;

/// Small limits so that mutated ranges stay quick.
const LIMITS: Limits = Limits { max_instances: 5_000, max_range: 5_000, max_include_depth: 8, max_file_bytes: 1 << 20, max_memory: 1 << 30 };

fn load_both(text: &str) {
    for format in [Format::Toml, Format::Json] {
        let name = fixtures().join("fuzzed");
        if let Err(e) = topology::load_str_with(text, &name, format, &LIMITS) {
            // Every error is printable and names what was expected.
            let shown = e.to_string();
            assert!(!shown.is_empty());
            assert!(e.diagnostics().iter().all(|d| d.to_string().contains("; expected ")), "{shown}");
        }
    }
}

const SEEDS: &[&str] = &[
    include_str!("fixtures/grid.toml"),
    include_str!("fixtures/grid.json"),
    include_str!("fixtures/common.toml"),
    "[[component]]\npath = \"lp[0..4]\"\ntype = \"test.lp\"\nparams = { seed = 1 }\n[[link]]\nfor = { i = \"0..4\" }\nfrom = \"lp[$i].out\"\nto = \"lp[($i+1)%4].in\"\nlatency = \"1ns\"\n[[fabric]]\nports = \"lp[0..4].net\"\nlatency = 3\n",
    "[templates.a]\ninherit = \"b\"\n[templates.b]\ntype = \"test.sink\"\n[[component]]\npath = \"s[0,2,5]\"\ntemplate = \"a\"\n",
];

/// Characters that matter to the formats and the path syntax.
const ALPHABET: &[u8] = b"[]{}()\".,=$%+-*/0123456789 .\n#ailoptu_";

#[derive(Debug, Clone)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Replace { at: usize, byte: u8 },
}

fn edit() -> impl Strategy<Value = Edit> {
    let byte = prop::sample::select(ALPHABET);
    prop_oneof![
        (any::<usize>(), 1usize..8).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), prop::collection::vec(byte.clone(), 1..6)).prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), byte).prop_map(|(at, byte)| Edit::Replace { at, byte }),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for e in edits {
        let n = bytes.len().max(1);
        match e {
            Edit::Delete { at, len } => {
                let at = at % n;
                let end = (at + len).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Edit::Insert { at, bytes: ins } => {
                let at = (at % n).min(bytes.len());
                bytes.splice(at..at, ins.iter().copied());
            }
            Edit::Replace { at, byte } => {
                if !bytes.is_empty() {
                    let at = at % bytes.len();
                    bytes[at] = *byte;
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: ProptestConfig::default().cases.max(400), ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        load_both(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn edited_valid_files_never_panic(seed in 0..SEEDS.len(), edits in prop::collection::vec(edit(), 1..6)) {
        load_both(&apply(SEEDS[seed], &edits));
    }

    #[test]
    fn random_paths_never_panic(path in "[a-z\\[\\]0-9.,$()%+*/ -]{0,40}", from in "[a-z\\[\\]0-9.,$()%+*/ -]{0,40}") {
        let text = format!("[[component]]\npath = {path:?}\ntype = \"test.sink\"\n[[link]]\nfor = {{ i = \"0..3\" }}\nfrom = {from:?}\nto = \"x.mem[$i]\"\nlatency = 1\n");
        load_both(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: ProptestConfig::default().cases.max(300), ..ProptestConfig::default() })]

    #[test]
    fn validating_arbitrary_programmatic_topologies_never_panics(
        comps in prop::collection::vec((".{0,12}", prop::sample::select(vec!["test.lp", "test.sink", "x.y"])), 0..6),
        links in prop::collection::vec((0u32..8, ".{0,8}", 0u32..8, ".{0,8}", 0u64..3), 0..6),
    ) {
        let mut t = simdojo::topology::Topology::new();
        for (path, ty) in &comps {
            t.add_component(path.as_str(), *ty, simdojo::params::Params::new());
        }
        for (a, ap, b, bp, lat) in &links {
            t.add_link(
                (simdojo::ids::ComponentId(*a), ap.as_str()),
                (simdojo::ids::ComponentId(*b), bp.as_str()),
                simdojo::time::Tick(*lat),
                simdojo::topology::LinkKind::OneWay,
            );
        }
        if let Err(e) = simdojo::topology::validate(&t) {
            prop_assert!(e.diagnostics().iter().all(|d| d.to_string().contains("; expected ")));
        }
        let _ = simdojo::topology::to_dot(&t);
        let _ = simdojo::topology::summarize(&t).to_string();
    }
}

#[test]
fn the_seeds_themselves_load() {
    for (i, seed) in SEEDS.iter().enumerate() {
        let format = Format::sniff(seed);
        let r = topology::load_str_with(seed, &fixtures().join("seed"), format, &LIMITS);
        assert!(r.is_ok(), "seed {i}: {}", r.unwrap_err());
    }
    assert!(Path::new(&fixtures()).join("common.toml").exists());
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["[", "{\"a\":", "a = ["] {
        load_both(&open.repeat(20_000));
    }
    let deep =
        format!("[[component]]\npath = \"a[{}0{}]\"\ntype = \"test.sink\"\n", "(".repeat(5_000), ")".repeat(5_000));
    load_both(&deep);
    let negs = format!("[[component]]\npath = \"a[{}1]\"\ntype = \"test.sink\"\n", "-".repeat(5_000));
    load_both(&negs);
}
