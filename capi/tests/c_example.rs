//! The C API from C: `examples/c/run_program.c` and `tests/misuse.c`, compiled with the
//! system's plain C compiler (`$CC`, else `cc`) against `include/simdojo.h` and the
//! `libsimdojo.so` cargo built beside this test, run on a real `dojo cc`-built program.

use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu::host::cc::{compile, CcOptions, OptLevel};
use amdgpu::isa::Target;

/// A GPU program that prints, allocates, touches memory and exits with status 3.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  unsigned n = 4096;
  unsigned *a = malloc(n * sizeof *a);
  unsigned sum = 0;
  for (int round = 0; round < 4; round++) {
    for (unsigned i = 0; i < n; i++) a[i] = i * (round + 1);
    for (unsigned i = 0; i < n; i++) sum += a[i];
    printf("round %d of %s: %u\n", round, argc > 1 ? argv[1] : "?", sum);
  }
  free(a);
  return 3;
}
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The directory holding `libsimdojo.so`: the profile directory of this test binary.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    assert!(
        dir.join("libsimdojo.so").exists(),
        "no libsimdojo.so in {} (cargo builds it with this test)",
        dir.display()
    );
    dir
}

fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles C `sources` into `out` against the header and the shared library.
fn cc(sources: &[PathBuf], out: &Path) {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let lib = library_dir();
    let status = Command::new(&compiler)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(repo().join("capi/include"))
        .args(sources)
        .arg("-o")
        .arg(out)
        .arg("-L")
        .arg(&lib)
        .arg("-lsimdojo")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(status.success(), "{compiler} failed on {sources:?}");
}

#[test]
fn run_program_checkpoints_half_way_and_both_vms_agree() {
    let dir = work_dir("capi-run-program");
    let src = dir.join("prog.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let image = dir.join("prog.co");
    compile(&CcOptions {
        mcpu: Target::Gfx942,
        opt: OptLevel::O2,
        output: image.clone(),
        inputs: vec![src],
        extra_flags: Vec::new(),
    })
    .unwrap();
    let exe = dir.join("run_program");
    cc(&[repo().join("examples/c/run_program.c")], &exe);
    let ckpt = dir.join("half.ckpt");
    let out = Command::new(&exe)
        .arg(repo().join("topologies/mi300x.toml"))
        .arg(&image)
        .arg(&ckpt)
        .arg("c-api")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "run_program failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("same ticks, exit code and statistics"),
        "{stdout}"
    );
    assert!(stdout.contains("exit code 3"), "{stdout}");
    // The reference printed every round; the two continued VMs printed the second half
    // of them each (the checkpoint is half way in simulated time).
    let rounds = stdout
        .lines()
        .filter(|l| l.starts_with("round ") && l.contains("of c-api"))
        .count();
    assert!(rounds > 4 && rounds < 12, "{rounds} round lines:\n{stdout}");
    assert!(ckpt.exists());
}

#[test]
fn misuse_gives_error_codes_and_messages() {
    let dir = work_dir("capi-misuse");
    let exe = dir.join("misuse");
    cc(
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/misuse.c")],
        &exe,
    );
    let garbage = dir.join("garbage.ckpt");
    std::fs::write(&garbage, b"DOJOVM\0\x01 not a checkpoint at all").unwrap();
    let out = Command::new(&exe)
        .arg(repo().join("topologies/test-gfx942.toml"))
        .arg(&garbage)
        .arg(dir.join("flipped.ckpt"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "misuse failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("all misuse checks passed"), "{stdout}");
    let version = format!("version {}\n", env!("CARGO_PKG_VERSION"));
    assert!(stdout.contains(&version), "dojo_version(): {stdout}");
}
