//! Fuzz target: loading any text as a TOML or JSON topology never panics.
//!
//! Run with `cargo fuzz run topology_parse` from `simdojo/`. The first byte picks the
//! format; the rest is the file text. No component types are registered here, so
//! inputs exercise parsing, includes, templates, pattern expansion and the unknown-type
//! paths; the integration tests cover the registry checks.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simdojo::topology::{load_str_with, Format, Limits};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let format = if selector & 1 == 0 { Format::Toml } else { Format::Json };
    let text = String::from_utf8_lossy(rest);
    // Small limits keep each input fast; includes resolve against a directory that
    // holds no topology files.
    let limits = Limits { max_instances: 10_000, max_range: 10_000, max_include_depth: 4, max_file_bytes: 1 << 16 };
    if let Err(e) = load_str_with(&text, Path::new("/nonexistent/fuzz.toml"), format, &limits) {
        // Rendering every error must not panic either.
        let _ = e.to_string();
    }
});
