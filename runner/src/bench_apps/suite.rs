//! The programs of `dojo bench apps` and their problem sizes. The sources (programs and
//! headers) are embedded in `dojo`, so the benchmark builds the same code wherever it
//! runs; [`SOURCES`] lists every file a build may read.
//!
//! From `examples/rocm/` the suite takes the three programs that are workloads rather
//! than feature checks: `vector_add` (streaming loads and stores), `reduction` (LDS tree
//! and global atomics) and `transpose` (LDS tiles, strided stores). The others there
//! check one feature each (printf, streams, events, managed memory, faults, cooperative
//! launch, warp operations, math functions) or do little work (`launches`, 200 tiny
//! kernels; `saxpy_omp`, 4096 elements through OpenMP, built by clang-19 rather than
//! hipcc). `examples/rocm/apps/` holds the applications written for the suite, in the
//! style of AMD's public rocm-examples.

/// One file of the suite: its path in the repository and its text.
#[derive(Debug)]
pub struct SourceFile {
    /// Path relative to the repository root, also its place in the build tree.
    pub path: &'static str,
    /// The file's contents, as `dojo` was built with them.
    pub text: &'static str,
}

/// A [`SourceFile`] from its path relative to the repository root.
macro_rules! source {
    ($path:literal) => {
        SourceFile { path: $path, text: include_str!(concat!("../../../", $path)) }
    };
}

/// Every file the programs' builds read: the programs and the headers they include.
pub const SOURCES: &[SourceFile] = &[
    source!("examples/rocm/check.h"),
    source!("examples/rocm/apps/apps.h"),
    source!("examples/rocm-libs/sparse.h"),
    source!("examples/rocm/vector_add.hip"),
    source!("examples/rocm/reduction.hip"),
    source!("examples/rocm/transpose.hip"),
    source!("examples/rocm/apps/sgemm.hip"),
    source!("examples/rocm/apps/conv2d.hip"),
    source!("examples/rocm/apps/histogram.hip"),
    source!("examples/rocm/apps/scan.hip"),
    source!("examples/rocm/apps/bitonic_sort.hip"),
    source!("examples/rocm/apps/spmv.hip"),
    source!("examples/rocm/apps/rocprim_sort.hip"),
];

/// How a compute unit is simulated during a run (`dojo run --mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Mode {
    /// Instructions execute one per wave quantum; time is not calibrated.
    Functional,
    /// The timing model: issue, latencies, caches and memory in cycles.
    Timing,
}

impl Mode {
    /// The name `dojo run --mode` takes, also the name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Functional => "functional",
            Mode::Timing => "timing",
        }
    }
}

/// Which problem sizes a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizes {
    /// The benchmark's sizes, per mode.
    Full,
    /// Small sizes (a second or so each): a quick check of the suite, as its test runs.
    Quick,
}

/// A program of the suite.
#[derive(Debug)]
pub struct Program {
    /// The name reports and `--only` use.
    pub name: &'static str,
    /// Its source in [`SOURCES`].
    pub source: &'static str,
    /// Libraries to link (after the source on hipcc's command line).
    pub link: &'static [&'static str],
    /// Arguments in functional mode.
    pub functional: &'static [&'static str],
    /// Arguments in timing mode (smaller: the timing model is several times slower).
    pub timing: &'static [&'static str],
    /// Arguments of [`Sizes::Quick`], both modes.
    pub quick: &'static [&'static str],
}

impl Program {
    /// The arguments for `mode` at `sizes`.
    pub fn args(&self, mode: Mode, sizes: Sizes) -> &'static [&'static str] {
        match (sizes, mode) {
            (Sizes::Quick, _) => self.quick,
            (Sizes::Full, Mode::Functional) => self.functional,
            (Sizes::Full, Mode::Timing) => self.timing,
        }
    }
}

/// The suite, in the order it runs.
pub const PROGRAMS: &[Program] = &[
    Program {
        name: "vector_add",
        source: "examples/rocm/vector_add.hip",
        link: &[],
        functional: &["4194304"],
        timing: &["1048576"],
        quick: &["65536"],
    },
    Program {
        name: "reduction",
        source: "examples/rocm/reduction.hip",
        link: &[],
        functional: &["4194304"],
        timing: &["1048576"],
        quick: &["65536"],
    },
    Program {
        name: "transpose",
        source: "examples/rocm/transpose.hip",
        link: &[],
        functional: &["2000", "1000"],
        timing: &["1000", "600"],
        quick: &["300", "200"],
    },
    Program {
        name: "sgemm",
        source: "examples/rocm/apps/sgemm.hip",
        link: &[],
        // The case: 2048 x 1024 times 1024 x 1024.
        functional: &["2048", "1024", "1024"],
        timing: &["512", "256", "256"],
        quick: &["128", "128", "64"],
    },
    Program {
        name: "conv2d",
        source: "examples/rocm/apps/conv2d.hip",
        link: &[],
        functional: &["2048", "2048"],
        timing: &["1024", "512"],
        quick: &["200", "120"],
    },
    Program {
        name: "histogram",
        source: "examples/rocm/apps/histogram.hip",
        link: &[],
        functional: &["16777216"],
        timing: &["4194304"],
        quick: &["262144"],
    },
    Program {
        name: "scan",
        source: "examples/rocm/apps/scan.hip",
        link: &[],
        functional: &["16777216"],
        timing: &["2097152"],
        quick: &["300000"],
    },
    Program {
        name: "bitonic_sort",
        source: "examples/rocm/apps/bitonic_sort.hip",
        link: &[],
        functional: &["20"],
        timing: &["17"],
        quick: &["13"],
    },
    Program {
        name: "spmv",
        source: "examples/rocm/apps/spmv.hip",
        link: &["-lrocsparse"],
        functional: &["200000", "10"],
        timing: &["50000", "5"],
        quick: &["5000", "3"],
    },
    Program {
        name: "rocprim_sort",
        source: "examples/rocm/apps/rocprim_sort.hip",
        link: &[],
        functional: &["4194304"],
        timing: &["65536"],
        quick: &["50000"],
    },
];

/// The programs named in `only` (all when empty), in suite order; an unknown name is
/// an error listing the known ones.
pub fn select(only: &[String]) -> anyhow::Result<Vec<&'static Program>> {
    if let Some(unknown) = only.iter().find(|n| !PROGRAMS.iter().any(|p| p.name == n.as_str())) {
        let known: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
        anyhow::bail!("--only {unknown}: no such program (the suite has {})", known.join(", "));
    }
    Ok(PROGRAMS.iter().filter(|p| only.is_empty() || only.iter().any(|n| n == p.name)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_is_among_the_sources() {
        for p in PROGRAMS {
            assert!(SOURCES.iter().any(|s| s.path == p.source), "{} is not in SOURCES", p.source);
        }
    }

    #[test]
    fn only_selects_in_suite_order_and_rejects_unknown_names() {
        let names: Vec<&str> = select(&["scan".into(), "sgemm".into()]).unwrap().iter().map(|p| p.name).collect();
        assert_eq!(names, ["sgemm", "scan"]);
        assert_eq!(select(&[]).unwrap().len(), PROGRAMS.len());
        let err = select(&["gemm".into()]).unwrap_err().to_string();
        assert!(err.contains("--only gemm") && err.contains("sgemm"), "{err}");
    }
}
