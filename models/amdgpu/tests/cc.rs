//! `amdgpu::host::cc::compile` builds real code objects for every target with the
//! device runtime, and they carry what `dojo exec` needs: the kernels
//! `_begin`, `_start`, `_end` and the 552-byte `__llvm_rpc_client`.

use std::path::{Path, PathBuf};

use amdgpu::host::cc::{compile, CcError, CcOptions, OptLevel};
use amdgpu::isa::code_object::CodeObject;
use amdgpu::isa::Target;
use amdgpu::host::rpc::CLIENT_IMAGE_SIZE;

const HELLO: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("Hello from the simulated GPU!\n", stdout);
  return 0;
}
"#;

/// Every lane of every wave prints, allocates, and returns a status.
const MULTI_WAVE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv, char **envp) {
  (void)envp;
  unsigned tid = __builtin_amdgcn_workitem_id_x();
  unsigned wg = __builtin_amdgcn_workgroup_id_x();
  char *buf = malloc(64);
  if (!buf)
    return 1;
  strcpy(buf, argc > 1 ? argv[1] : "none");
  printf("wave %u lane %u: %s %d %.2f %lx\n", tid / 64, tid % 64, buf, argc, tid * 0.5,
         (unsigned long)wg << 32 | tid);
  free(buf);
  if (tid == 0)
    puts("done");
  return 0;
}
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("simdojo-cc-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir.join(name)
}

fn build(target: Target, name: &str, source: &str, opt: OptLevel) -> CodeObject {
    let src = scratch(&format!("{name}.c"));
    std::fs::write(&src, source).expect("write source");
    let output = scratch(&format!("{name}-{target}.co"));
    let out = compile(&CcOptions {
        mcpu: target,
        opt,
        output: output.clone(),
        inputs: vec![src],
        extra_flags: vec!["-Wall".into(), "-Werror".into()],
    })
    .unwrap_or_else(|e| panic!("compile for {target}: {e}"));
    assert_eq!(out.path, output);
    let clang_name = out.clang.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let version = if target == Target::Gfx950 { "22" } else { "19" };
    assert!(clang_name.ends_with(version) || out.clang.starts_with(format!("/usr/lib/llvm-{version}")), "{clang_name}");
    let bytes = std::fs::read(&output).expect("code object written");
    CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("parse {target} code object: {e}"))
}

fn check_loadable(co: &CodeObject, target: Target) {
    assert_eq!(co.target().to_string(), target.name());
    let mut kernels: Vec<&str> = co.kernels().iter().map(|k| k.name.as_str()).collect();
    kernels.sort();
    assert_eq!(kernels, ["_begin", "_end", "_start"]);
    let client = co.symbol("__llvm_rpc_client").expect("the RPC client symbol is exported");
    assert_eq!(client.size, CLIENT_IMAGE_SIZE as u64);
    for k in co.kernels() {
        assert_eq!(k.descriptor.wavefront_size(), 64, "{}: CDNA runs wave64", k.name);
    }
}

#[test]
fn hello_world_for_every_target() {
    for target in Target::ALL {
        let co = build(target, "hello", HELLO, OptLevel::O2);
        check_loadable(&co, target);
    }
}

#[test]
fn multi_wave_printf_for_every_target() {
    for target in Target::ALL {
        let co = build(target, "multi", MULTI_WAVE, OptLevel::O2);
        check_loadable(&co, target);
        let start = co.kernels().iter().find(|k| k.name == "_start").expect("_start");
        let meta = start.metadata.as_ref().expect("kernel metadata");
        let explicit: Vec<u32> = meta.args.iter().filter(|a| !a.value_kind.is_hidden()).map(|a| a.size).collect();
        assert_eq!(explicit, [4, 8, 8, 8], "_start(int argc, char **argv, char **envp, int *ret)");
    }
}

#[test]
fn errors_name_the_failing_command_and_its_stderr() {
    let src = scratch("broken.c");
    std::fs::write(&src, "int main(void) { return undefined_thing; }\n").expect("write source");
    let err = compile(&CcOptions {
        mcpu: Target::Gfx942,
        opt: OptLevel::O0,
        output: scratch("broken.co"),
        inputs: vec![src],
        extra_flags: vec![],
    })
    .expect_err("an undeclared identifier fails to compile");
    match &err {
        CcError::Failed { command, stderr, .. } => {
            assert!(command.contains("clang-19") && command.contains("broken.c"), "{command}");
            assert!(stderr.contains("undefined_thing"), "{stderr}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    let none = compile(&CcOptions {
        mcpu: Target::Gfx90a,
        opt: OptLevel::O2,
        output: scratch("none.co"),
        inputs: vec![],
        extra_flags: vec![],
    });
    assert!(matches!(none, Err(CcError::NoInputs)));
}

#[test]
fn runtime_cache_holds_every_header() {
    let dir = amdgpu::host::cc::runtime_dir().expect("cache is writable");
    for header in ["stdio.h", "stdlib.h", "string.h", "__dojo_config.h"] {
        assert!(Path::new(&dir).join("include").join(header).is_file(), "{header}");
    }
    assert_eq!(amdgpu::host::cc::runtime_dir().expect("second call"), dir, "keyed by content");
}

#[test]
fn concurrent_first_installs_of_the_runtime_agree() {
    let root = std::env::temp_dir().join(format!("simdojo-cc-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dirs: Vec<PathBuf> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8).map(|_| s.spawn(|| amdgpu::host::cc::runtime_dir_in(&root).expect("install"))).collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    assert!(dirs.windows(2).all(|w| w[0] == w[1]), "{dirs:?}");
    assert!(dirs[0].starts_with(&root));
    assert!(dirs[0].join(".complete").is_file());
    for (rel, _) in [("src/rpc_port.h", ()), ("include/stdio.h", ()), ("src/start.c", ())] {
        assert!(dirs[0].join(rel).is_file(), "{rel}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&root).expect("root").filter_map(Result::ok).map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "staging copies are cleaned up: {leftovers:?}");
    std::fs::remove_dir_all(&root).expect("clean up");
}
