//! `--set` overrides on a loaded topology: selection, conversion, and every refusal.

use simdojo::params::ParamValue;
use simdojo::phold::{self, PholdConfig};
use simdojo::time::Tick;
use simdojo::topology::overrides::{apply, Override, OverrideError};

fn set(text: &[&str]) -> Vec<Override> {
    text.iter().map(|t| t.parse().unwrap()).collect()
}

#[test]
fn overrides_select_by_path_end_pattern_and_type() {
    let mut t = phold::topology(&PholdConfig { lps: 6, ..PholdConfig::default() });
    apply(&mut t, &set(&["lp.mean=3ns", "lp[4].mean=5ns", "phold.lp.seed=9"])).unwrap();
    for (i, c) in t.components.iter().enumerate() {
        let want = if i == 4 { Tick::ns(5) } else { Tick::ns(3) };
        assert_eq!(c.params.get("mean"), Some(&ParamValue::Duration(want)), "{}", c.path);
        assert_eq!(c.params.get("seed"), Some(&ParamValue::UInt(9)));
    }
}

#[test]
fn refusals_name_the_key_and_leave_the_topology_unchanged() {
    let t0 = phold::topology(&PholdConfig { lps: 3, ..PholdConfig::default() });
    type Case = (&'static str, fn(&OverrideError) -> bool, &'static str);
    let cases: [Case; 5] = [
        ("lp.nosuch=1", |e| matches!(e, OverrideError::UnknownParam { .. }), "has no parameter `nosuch`"),
        ("lp.mean=fast", |e| matches!(e, OverrideError::BadValue { .. }), "lp.mean=fast"),
        ("zz.mean=1ns", |e| matches!(e, OverrideError::NoMatch { .. }), "matches no component"),
        ("lp.type=phold.nope", |e| matches!(e, OverrideError::UnknownType { .. }), "no component type `phold.nope`"),
        ("lp.events=-1", |e| matches!(e, OverrideError::BadValue { .. }), "non-negative"),
    ];
    for (text, is, says) in cases {
        let mut t = t0.clone();
        // A good override first: the failure must undo it too.
        let err = apply(&mut t, &set(&["lp.mean=7ns", text])).unwrap_err();
        assert!(is(&err), "{text}: {err:?}");
        assert!(err.to_string().contains(says), "{text}: {err}");
        assert_eq!(t, t0, "{text}: the topology is unchanged");
    }
    assert!("l2size=1".parse::<Override>().is_err());
}
