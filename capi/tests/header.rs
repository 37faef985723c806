//! `include/simdojo.h` is what cbindgen generates from `src/lib.rs` with `cbindgen.toml`:
//! this test fails when it is stale (`UPDATE_HEADER=1` rewrites it).

use std::path::Path;

#[test]
fn the_header_is_what_cbindgen_generates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("reading cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8");
    let path = dir.join("include/simdojo.h");
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("writing the header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: run UPDATE_HEADER=1 cargo test -p simdojo-capi --test header",
        path.display()
    );
    for f in [
        "dojo_vm_create",
        "dojo_vm_restore_checkpoint",
        "dojo_last_error",
        "const char *dojo_version(void);",
        "DOJO_ERR_HANDLE",
        "typedef struct dojo_vm_t dojo_vm_t;",
    ] {
        assert!(generated.contains(f), "the header lacks {f}");
    }
}
