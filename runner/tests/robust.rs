//! Issue 20 as a user meets it: hostile or careless command lines, files and GPU programs
//! give a clear error (with the limit or the path) and a non-zero status, never a panic,
//! a hang or unbounded memory. Real processes, real clang, the embedded topologies.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn dojo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dojo"))
        .args(args)
        .output()
        .expect("dojo runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dojo-robust-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn repo(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Builds the C program `source` for gfx90a into `dir` and returns the image's path.
fn build(dir: &std::path::Path, name: &str, source: &str) -> String {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let image = dir.join(format!("{name}.co"));
    let out = dojo(&[
        "cc",
        "--mcpu",
        "gfx90a",
        "-O1",
        "-o",
        image.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    image.to_str().unwrap().to_string()
}

/// A failure with status 2 whose message contains every one of `needles`.
fn assert_refused(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

const HELLO: &str = "#include <stdio.h>\nint main(void) { printf(\"hello from %u\\n\", __builtin_amdgcn_workitem_id_x()); return 0; }\n";

#[test]
fn command_line_values_are_checked_against_the_hardware_limits() {
    let dir = scratch("limits");
    let image = build(&dir, "hello", HELLO);
    // 70000 work-items were once truncated to 16 bits (4464) without a word.
    assert_refused(
        &dojo(&["exec", "--threads", "70000", &image]),
        &["--threads", "70000", "1024"],
    );
    assert_refused(
        &dojo(&["exec", "--threads", "64,64", &image]),
        &["4096 work-items", "1024"],
    );
    assert_refused(
        &dojo(&["exec", "--threads", "1024", "--blocks", "5000000", &image]),
        &["dimension 0", "4294967295"],
    );
    for workers in ["0", "5000"] {
        assert_refused(
            &dojo(&["exec", "--workers", workers, &image]),
            &["--workers", "1 to 1024"],
        );
        assert_refused(
            &dojo(&[
                "sim",
                "--workers",
                workers,
                &repo("topologies/examples/ring.toml"),
            ]),
            &["--workers", "1 to 1024"],
        );
    }
    assert_refused(
        &dojo(&["exec", "--max-output", "lots", &image]),
        &["--max-output"],
    );
    // A duration without its unit would be picoseconds: `--stats-interval 1` once meant
    // a sample every picosecond and a ten-minute run. The message shows the units.
    let stats = dir.join("s.json");
    let stats = stats.to_str().expect("a UTF-8 path");
    for flags in [["--stats", stats, "--stats-interval", "1"], ["--workers", "1", "--max-ticks", "5000"]] {
        let mut args = vec!["exec"];
        args.extend(flags);
        args.push(&image);
        assert_refused(&dojo(&args), &[flags[2], "with its unit", "10us", "ps, ns, us, ms, s"]);
    }
    assert_refused(
        &dojo(&["sim", &repo("topologies/examples/ring.toml"), "--max-ticks", "200"]),
        &["--max-ticks", "with its unit"],
    );
    assert_refused(
        &dojo(&["exec", "--set", "cu.lds_bytes=1MiB", &image]),
        &["`cu.lds_bytes=1MiB`", "1048576B", "163840B", "`lds_bytes` of amdgpu.cu"],
    );
    // The limits are in the help.
    let help = dojo(&["exec", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    for needle in ["1024", "watchdog", "--max-output", "65535"] {
        assert!(
            text.contains(needle),
            "`dojo exec --help` lacks {needle:?}:\n{text}"
        );
    }
}

/// A GPU program that loops forever stops at the compute unit's watchdog with the stuck
/// waves and their program counters; one that recurses without bound faults at its
/// private segment's end instead of overwriting its neighbours' stacks.
#[test]
fn endless_loops_and_stack_overflows_fault_with_a_clear_message() {
    let dir = scratch("gpu");
    let spin = build(
        &dir,
        "spin",
        "int main(void) { volatile int x = 0; for (;;) x++; return 0; }\n",
    );
    let out = dojo(&[
        "exec",
        "--threads",
        "128",
        "--set",
        "cu.watchdog=20us",
        &spin,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("watchdog") && err.contains("20.000us"),
        "{err}"
    );
    assert!(
        err.contains("slot 0 at pc 0x") && err.contains("slot 1 at pc 0x"),
        "both waves with their PCs: {err}"
    );

    let deep = build(
        &dir,
        "deep",
        "#include <stdlib.h>\n__attribute__((noinline)) int f(volatile int *p, int n) { volatile int buf[64]; buf[n & 63] = n; if (n == 0) return p ? p[1] : 0; return f(buf, n - 1) + buf[(n * 7) & 63]; }\nint main(int argc, char **argv) { volatile int r = f(0, atoi(argv[1])); (void)r; return 0; }\n",
    );
    assert_eq!(
        dojo(&["exec", &deep, "10"]).status.code(),
        Some(0),
        "a shallow recursion runs"
    );
    let out = dojo(&["exec", &deep, "100"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("private segment (stack overflow?)"), "{err}");
}

/// A memory fault in one work-group ends the run at once, while the others spin forever:
/// the fault is acted on as it happens, not read after a run that never ends (the
/// watchdog is set low so that a regression ends too, naming the watchdog).
#[test]
fn a_fault_ends_the_run_while_other_groups_spin() {
    let dir = scratch("fault");
    let fault = build(
        &dir,
        "fault",
        "#include <stdint.h>\nint main(void) { if (__builtin_amdgcn_workgroup_id_x() == 0) { *(volatile int *)(uintptr_t)0x10 = 1; } else { volatile int x = 0; for (;;) x++; } return 0; }\n",
    );
    let out = dojo(&["exec", "--threads", "64", "--blocks", "8", "--set", "cu.watchdog=5ms", &fault]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("GPU fault in kernel _start") && err.contains("memory fault at 0x10"), "{err}");
    assert!(!err.contains("watchdog"), "the run went on until the watchdog: {err}");
}

/// A device or a file too large for a code object is refused at once, before it is
/// read whole (`dojo exec /dev/zero` once read until the machine ran out of memory).
#[test]
fn endless_or_huge_images_are_refused_without_reading_them() {
    // Reading /dev/zero whole never ends (nor fits in memory): a refusal at all shows
    // that nothing past the ELF header's worth was read.
    for args in [&["exec", "/dev/zero"][..], &["disasm", "/dev/zero"][..]] {
        assert_refused(&dojo(args), &["/dev/zero", "no ELF magic"]);
    }
    // A sparse file past the limit that starts like an ELF file: refused by its size.
    let dir = scratch("huge");
    let huge = dir.join("huge.co");
    let f = std::fs::File::create(&huge).unwrap();
    std::io::Write::write_all(&mut &f, b"\x7fELF").unwrap();
    f.set_len((1 << 30) + 1).unwrap();
    assert_refused(&dojo(&["exec", huge.to_str().unwrap()]), &["huge.co", "larger than 1073741824 bytes"]);
    let _ = std::fs::remove_file(&huge);
}

/// `--max-topology-memory` sets the bound a topology's estimated memory is checked
/// against (a global option, so it precedes or follows the subcommand).
#[test]
fn the_topology_memory_bound_is_a_flag() {
    let dir = scratch("topomem");
    let file = dir.join("lps.toml");
    let ring = std::fs::read_to_string(repo("topologies/examples/ring.toml")).unwrap();
    std::fs::write(&file, ring.replace("lp[0..16]", "lp[0..1000]")).unwrap();
    let file = file.to_str().unwrap();
    assert!(dojo(&["sim", file]).status.success(), "1000 processes fit the default bound");
    for args in [&["--max-topology-memory", "1MiB", "sim", file][..], &["topology", file, "--max-topology-memory", "1MiB"][..]] {
        assert_refused(&dojo(args), &["lps.toml:25:8", "about 2.0 MiB", "more than the 1.0 MiB allowed", "--max-topology-memory"]);
    }
    assert!(!dojo(&["--max-topology-memory", "lots", "sim", file]).status.success());
}

/// GPU output is bounded per run (`--max-output`) and every failure to write it is
/// reported with what was written to; a closed pipe stops quietly.
#[test]
fn gpu_output_is_bounded_and_its_write_errors_are_reported() {
    let dir = scratch("output");
    let image = build(&dir, "hello", HELLO);
    assert_refused(
        &dojo(&["exec", "--threads", "64", "--max-output", "100", &image]),
        &["more than 100 bytes", "--max-output"],
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let out = Command::new(env!("CARGO_BIN_EXE_dojo"))
        .args(["exec", &image])
        .stdout(full)
        .output()
        .expect("dojo runs");
    assert_refused(&out, &["standard output", "No space left on device"]);

    // A reader that leaves early: the program prints far more than a pipe holds.
    let flood = build(&dir, "flood", "#include <stdio.h>\nint main(void) { for (int i = 0; i < 2000; i++) printf(\"%1000d\\n\", i); return 0; }\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_dojo"))
        .args(["exec", &flood])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dojo runs");
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut child.stdout.take().expect("piped"), &mut first)
        .expect("some output");
    let out = child.wait_with_output().expect("dojo ends");
    assert_eq!(out.status.code(), Some(141), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no message");
}

/// A parameter value no compute unit can have is refused before anything is built,
/// naming the file, line and column of the value (the defaults entry every compute unit
/// takes), the parameter and its type, once.
#[test]
fn build_errors_name_the_declaration_once() {
    let dir = scratch("build");
    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(repo("topologies/test-gfx942.toml")).unwrap();
    std::fs::write(
        &bad,
        text.replace(
            "[defaults.\"amdgpu.cu\"]\n",
            "[defaults.\"amdgpu.cu\"]\nwave_slots = 100\n",
        ),
    )
    .unwrap();
    let out = dojo(&["sim", bad.to_str().unwrap()]);
    // The line the test inserted after the `[defaults."amdgpu.cu"]` header, column 14:
    // the value.
    let header = text.lines().position(|l| l == "[defaults.\"amdgpu.cu\"]").expect("the defaults header") + 1;
    let at = format!("bad.toml:{}:14: ", header + 1);
    assert_refused(&out, &[&at, "`wave_slots` of `amdgpu.cu` is integer 100", "from 1 to 64"]);
    assert_eq!(
        stderr(&out).matches("wave_slots").count(),
        1,
        "{}",
        stderr(&out)
    );
}

/// Restoring never runs time backwards: a checkpoint time before the restored one, or an
/// end before it, is refused with both times.
#[test]
fn restoring_into_the_past_is_refused() {
    let ring = repo("topologies/examples/ring.toml");
    let dir = scratch("past");
    let ckpt = dir.join("ring.ckpt");
    let out = dojo(&[
        "sim",
        &ring,
        "--checkpoint-at",
        "500ns",
        "--checkpoint-out",
        ckpt.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = dir.join("again.ckpt");
    let ckpt = ckpt.to_str().unwrap();
    assert_refused(
        &dojo(&[
            "sim",
            &ring,
            "--restore",
            ckpt,
            "--checkpoint-at",
            "300ns",
            "--checkpoint-out",
            again.to_str().unwrap(),
        ]),
        &[
            "--checkpoint-at 300.000ns",
            "500.000ns",
            "never runs backwards",
        ],
    );
    assert!(!again.exists());
    assert_refused(
        &dojo(&["sim", &ring, "--restore", ckpt, "--max-ticks", "200ns"]),
        &["500.000ns", "200.000ns"],
    );
}
