//! `dojo topology` refuses every file the build would refuse, before allocating the
//! model, naming the file, line and column of the offending value: a component's
//! cross-field check (an HBM geometry the decoder cannot map), a choice that does not
//! exist, a cache whose tag store would not fit in memory, and more components than the
//! process's address-space limit (`ulimit -v`) allows.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dojo-validation-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The shipped test topology with `from` replaced by `to`, written to `name` in a
/// scratch directory; the file and the `LINE:COL` where `to` starts plus `col`.
fn variant(name: &str, from: &str, to: &str, col: usize) -> (PathBuf, String) {
    let base = std::fs::read_to_string(format!("{}/../topologies/test-gfx942.toml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert_eq!(base.matches(from).count(), 1, "`{from}` occurs once in test-gfx942.toml");
    let text = base.replace(from, to);
    let at = text.find(to).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1 + col;
    let file = scratch(name).join(name);
    std::fs::write(&file, text).unwrap();
    (file, format!("{name}:{line}:{column}"))
}

/// Runs `dojo ARGS` with the address-space limit `kib` (as `ulimit -v` sets it) when given.
fn dojo(args: &[&str], limit_kib: Option<u64>) -> Output {
    let exe = env!("CARGO_BIN_EXE_dojo");
    match limit_kib {
        None => Command::new(exe).args(args).output().expect("dojo runs"),
        Some(kib) => Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
            .arg(exe)
            .args(args)
            .output()
            .expect("sh runs"),
    }
}

/// Expects `dojo topology FILE` (and `dojo sim FILE`, which would build it) to exit 2
/// naming `position` and every text of `says`.
fn refused(file: &Path, position: &str, says: &[&str], limit_kib: Option<u64>) {
    let file = file.to_str().unwrap();
    for args in [vec!["topology", file], vec!["sim", file]] {
        let out = dojo(&args, limit_kib);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(position), "{args:?} names {position}: {err}");
        for text in says {
            assert!(err.contains(text), "{args:?} says {text:?}: {err}");
        }
        assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
    }
}

#[test]
fn an_hbm_geometry_the_decoder_cannot_map_is_refused_at_its_value() {
    let (file, at) = variant("channels.toml", "part = \"mi300x\",", "part = \"mi300x\", channels_per_stack = 3,", 38);
    refused(&file, &at, &["channels_per_stack", "power of two"], None);
}

#[test]
fn an_unknown_target_is_refused_with_the_choices() {
    let (file, at) = variant("target.toml", "target = \"gfx942\"", "target = \"gfx943\"", 9);
    refused(&file, &at, &["gfx943", "one of gfx90a, gfx942, gfx950"], None);
}

#[test]
fn an_l2_too_large_for_the_host_is_refused_before_allocation() {
    let (file, at) = variant("l2.toml", "size = \"256KiB\"", "size = \"512TiB\"", 7);
    refused(&file, &at, &["TiB of host memory", "more than the", "allowed", "`size`"], None);
}

#[test]
fn a_million_compute_units_are_refused_under_a_small_address_space_limit() {
    let (file, at) = variant("cus.toml", "path = \"gpu.xcd[0..2].cu[0..2]\"", "path = \"gpu.xcd[0..2].cu[0..500000]\"", 7);
    refused(&file, &at, &["of host memory", "RLIMIT_AS"], Some(2_500_000));
}
