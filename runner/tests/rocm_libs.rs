//! Debian's ROCm libraries through their public APIs under `dojo run`: the programs of
//! `examples/rocm-libs` (rocPRIM, rocRAND, hipRAND, rocSPARSE, hipSPARSE), built by
//! Debian's hipcc for gfx90a, each checking its library's results against a host
//! computation and ending with PASS (exit status 0) or FAIL. `scripts/rocm-libs` runs
//! the same programs with the same arguments by hand.
//!
//! A program that needs a missing tool or library (hipcc, a header, a shared object;
//! `scripts/deps` installs them) prints why and is skipped. A program that dies on an
//! instruction the simulated GPU does not execute yet is listed in [`KNOWN_ISA_GAPS`]
//! with that instruction: its test still runs it, expects the failure to be that
//! instruction, and fails once the program passes, so that the list only shrinks.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;

/// Time limit of one program (start-up included).
const PROGRAM_LIMIT: Duration = Duration::from_secs(1200);

/// Programs that stop on an unsupported instruction, with the instruction's mnemonic
/// as the simulator's fault message names it.
const KNOWN_ISA_GAPS: &[(&str, &str)] = &[];

/// A program of `examples/rocm-libs`: its name, the header (under /usr/include) that
/// tells its library is installed, the libraries it links, and its arguments (small sizes).
struct Program {
    name: &'static str,
    header: &'static str,
    link: &'static [&'static str],
    args: &'static [&'static str],
}

/// A [`Program`] (a const fn, so that each program is one line).
const fn program(
    name: &'static str,
    header: &'static str,
    link: &'static [&'static str],
    args: &'static [&'static str],
) -> Program {
    Program {
        name,
        header,
        link,
        args,
    }
}

const ROCPRIM: Program = program("rocprim", "rocprim/rocprim.hpp", &[], &["5000"]);
const ROCRAND: Program = program("rocrand", "rocrand/rocrand.h", &["-lrocrand"], &["1024"]);
const HIPRAND: Program = program("hiprand", "hiprand/hiprand.h", &["-lhiprand"], &["1024"]);
const ROCSPARSE: Program = program(
    "rocsparse",
    "rocsparse/rocsparse.h",
    &["-lrocsparse"],
    &["300"],
);
const HIPSPARSE: Program = program(
    "hipsparse",
    "hipsparse/hipsparse.h",
    &["-lhipsparse"],
    &["300"],
);

/// Builds and runs `program`; it must pass, or fail on its listed ISA gap.
fn check(program: Program) {
    check_with(&[], program);
}

/// [`check`] with `dojo run FLAGS`.
fn check_with(flags: &[&str], program: Program) {
    let name = program.name;
    if !have("hipcc", name) {
        return;
    }
    let header = Path::new("/usr/include").join(program.header);
    if !header.is_file() {
        eprintln!(
            "skipped {name}: {} not found (install Debian's ROCm libraries: bash scripts/deps)",
            header.display()
        );
        return;
    }
    let source = repo(&format!("examples/rocm-libs/{name}.hip"));
    let inputs = [
        repo("examples/rocm/check.h"),
        repo("examples/rocm-libs/sparse.h"),
        repo("examples/rocm-libs/random.h"),
    ];
    let inputs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let exe = build_and_link(
        "hipcc",
        &["--offload-arch=gfx90a", "-O2", "-std=c++17"],
        &source,
        &inputs,
        program.link,
    );
    let out = dojo_run(flags, &exe, program.args, &[], PROGRAM_LIMIT);
    let gap = KNOWN_ISA_GAPS
        .iter()
        .find(|(p, _)| *p == name)
        .map(|(_, m)| *m);
    match gap {
        None => out.expect_pass(name),
        Some(mnemonic) => {
            assert!(
                out.code() != Some(0),
                "{name} passes now: remove it from KNOWN_ISA_GAPS\n{}",
                out.stdout
            );
            let expected = format!("unsupported instruction {mnemonic}");
            assert!(
                out.stderr.contains(&expected),
                "{name} failed, but not on its known gap `{mnemonic}`\n--- stdout\n{}\n--- stderr\n{}",
                out.stdout,
                out.stderr
            );
            eprintln!("{name}: known ISA gap {mnemonic}, as listed");
        }
    }
    // Every check that ran before the end reported `ok`.
    let failed: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.ends_with(" FAIL"))
        .collect();
    assert!(failed.is_empty(), "{name}: {failed:?}\n{}", out.stdout);
}

#[test]
fn rocprim_device_algorithms_match_the_host() {
    check(ROCPRIM);
}

#[test]
fn rocrand_generators_match_the_device_api_on_the_host() {
    check(ROCRAND);
}

#[test]
fn hiprand_generators_match_the_device_api_on_the_host() {
    check(HIPRAND);
}

#[test]
fn rocsparse_routines_match_the_host() {
    check(ROCSPARSE);
}

/// The results do not depend on the worker count: the same checks on two workers.
#[test]
fn rocsparse_routines_match_the_host_on_two_workers() {
    check_with(&["--workers", "2"], ROCSPARSE);
}

#[test]
fn hipsparse_routines_match_the_host() {
    check(HIPSPARSE);
}
