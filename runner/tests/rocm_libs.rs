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

mod support;

use std::path::Path;
use std::time::Duration;

use support::*;

/// Time limit of one program (start-up included).
const PROGRAM_LIMIT: Duration = Duration::from_secs(300);

/// Programs that stop on an unsupported instruction, with the instruction's mnemonic
/// as the simulator's fault message names it.
const KNOWN_ISA_GAPS: &[(&str, &str)] = &[
    // rocprim::inclusive_scan's lookback_scan_kernel.
    ("rocprim", "v_xad_u32"),
    // Box-Muller in the normal distributions (rocrand_generate_normal).
    ("rocrand", "v_sin_f32"),
    ("hiprand", "v_sin_f32"),
];

/// A program of `examples/rocm-libs`: its name, the header that tells its library is
/// installed, the libraries it links, and its arguments (small sizes).
struct Program {
    name: &'static str,
    header: &'static str,
    link: &'static [&'static str],
    args: &'static [&'static str],
}

/// Builds and runs `program`; it must pass, or fail on its listed ISA gap.
fn check(program: Program) {
    let name = program.name;
    if !have("hipcc", name) {
        return;
    }
    if !Path::new(program.header).is_file() {
        eprintln!(
            "skipped {name}: {} not found (install Debian's ROCm libraries: bash scripts/deps)",
            program.header
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
    let out = dojo_run(&[], &exe, program.args, &[], PROGRAM_LIMIT);
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
    check(Program {
        name: "rocprim",
        header: "/usr/include/rocprim/rocprim.hpp",
        link: &[],
        args: &["5000"],
    });
}

#[test]
fn rocrand_generators_match_the_device_api_on_the_host() {
    check(Program {
        name: "rocrand",
        header: "/usr/include/rocrand/rocrand.h",
        link: &["-lrocrand"],
        args: &["1024"],
    });
}

#[test]
fn hiprand_generators_match_the_device_api_on_the_host() {
    check(Program {
        name: "hiprand",
        header: "/usr/include/hiprand/hiprand.h",
        link: &["-lhiprand"],
        args: &["1024"],
    });
}

#[test]
fn rocsparse_routines_match_the_host() {
    check(Program {
        name: "rocsparse",
        header: "/usr/include/rocsparse/rocsparse.h",
        link: &["-lrocsparse"],
        args: &["300"],
    });
}

#[test]
fn hipsparse_routines_match_the_host() {
    check(Program {
        name: "hipsparse",
        header: "/usr/include/hipsparse/hipsparse.h",
        link: &["-lhipsparse"],
        args: &["300"],
    });
}
