//! Shared helpers of the code object and corpus tests: building corpus sources with the
//! system's clang/lld (or hipcc), reading clang offload bundles, `llvm-readelf --notes`
//! and `.amdhsa_*` directives independently of the library, the corpus sidecars and
//! their CPU references.
//!
//! Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod asm_directives;
pub mod build;
pub mod corpus;
pub mod offload_bundle;
pub mod readelf;
pub mod reference;
