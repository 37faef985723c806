//! `dojo bench micro`: the timing-model microbenchmark suite. Runs the GPU programs of
//! `benches/micro/` in timing mode on a topology (pointer chases into each level,
//! stream read/copy/triad, L2 and LDS bandwidth, MFMA throughput, atomic throughput),
//! and prints each measured figure beside the repository's reference for that part
//! (`benches/micro/reference.toml`, published hardware figures) and the error.
//!
//! Every kernel measures itself with the shader clock (`s_memtime`) and prints one
//! `RESULT name value` line; the chase lengths and strides come from the topology's own
//! cache parameters, so each latency lands in the level it names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use amdgpu::host::cc::{CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{run_image, ExecOptions};
use anyhow::{anyhow, bail, Context as _};
use clap::Args;
use serde::Deserialize;
use serde_json::json;
use simdojo::topology::Topology;

use crate::output::outln;

/// Arguments of `dojo bench micro`.
#[derive(Args, Debug)]
pub struct MicroArgs {
    /// Topology file (default: the embedded MI210).
    #[arg(long)]
    topology: Option<PathBuf>,
    /// Run only these benchmarks (comma-separated names, as the table lists them).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    workers: u32,
    #[command(flatten)]
    set: crate::set_args::SetArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// The published figures the repository keeps, per part.
const REFERENCE: &str = include_str!("../../benches/micro/reference.toml");

/// One reference figure.
#[derive(Debug, Deserialize)]
struct Reference {
    value: f64,
    source: String,
}

/// One benchmark: which program, its arguments, the grid, and how its result becomes
/// the reported figure.
struct Bench {
    name: &'static str,
    unit: &'static str,
    program: &'static str,
    defines: Vec<String>,
    args: Vec<String>,
    blocks: u32,
    threads: u32,
    /// Multiplies the program's figure (bytes per cycle -> TB/s at the clock).
    scale: f64,
}

/// What the suite needs to know about the machine.
struct Machine {
    target: Target,
    part: &'static str,
    clock_mhz: f64,
    cus: u32,
    l1_bytes: u64,
    l1_ways: u64,
    l1_line: u64,
    l2_bytes: u64,
    l2_ways: u64,
    /// Memory-side cache: (bytes per slice, ways, slices).
    mall: Option<(u64, u64, u64)>,
}

impl Machine {
    /// What the suite needs of the first GPU of `t`, from the typed view of the topology.
    fn of(t: &Topology) -> anyhow::Result<Machine> {
        let view = amdgpu::host::machine::Machine::of(t).map_err(|e| anyhow!("{e}"))?;
        // Invariant: Machine::of refuses a topology without a GPU.
        let gpu = &view.gpus[0];
        let target = gpu.soc.params.target.isa();
        let part = match target {
            Target::Gfx90a => "mi210",
            Target::Gfx942 => "mi300x",
            _ => "mi355x",
        };
        let cu = gpu.cus().next().ok_or_else(|| anyhow!("the topology's GPU has no compute units"))?;
        let l2 = gpu.l2s().next().ok_or_else(|| anyhow!("the topology's GPU has no L2"))?;
        let mall = gpu.malls.first().map(|m| (m.params.size.get(), u64::from(m.params.ways), gpu.malls.len() as u64));
        Ok(Machine {
            target,
            part,
            clock_mhz: cu.params.clock.hz() / 1e6,
            cus: gpu.cus().count() as u32,
            l1_bytes: cu.params.l1_size.get(),
            l1_ways: u64::from(cu.params.l1_ways),
            l1_line: cu.params.line_bytes,
            l2_bytes: l2.params.size.get(),
            l2_ways: u64::from(l2.params.ways),
            mall,
        })
    }

    /// The suite for this machine.
    fn benches(&self) -> Vec<Bench> {
        let s = |v: &[String]| v.to_vec();
        let latency = |name, kind: &str, count: u64, stride: u64| Bench {
            name,
            unit: "cycles",
            program: "latency",
            defines: Vec::new(),
            args: s(&[kind.into(), count.to_string(), stride.to_string()]),
            blocks: 1,
            threads: 64,
            scale: 1.0,
        };
        let waves = self.cus * 16;
        let tbps = self.clock_mhz * 1e6 / 1e12;
        let stream = |name, kind: &str, bytes: u64, passes: u32| Bench {
            name,
            unit: "TB/s",
            program: "stream",
            defines: vec![format!("-DKIND_{kind}")],
            args: s(&[bytes.to_string(), passes.to_string(), waves.to_string()]),
            blocks: self.cus * 4,
            threads: 256,
            scale: tbps,
        };
        // A chase maps to one set of a level when its stride is a multiple of the level's
        // set span (capacity / ways); 64 slots exceed every associativity here.
        let l1_span = self.l1_bytes / self.l1_ways.max(1);
        let l2_span = self.l2_bytes / self.l2_ways.max(1);
        let mut v = vec![
            latency("l1_latency", "vector", 64, self.l1_line),
            latency("scalar_latency", "scalar", 64, 64),
            latency("lds_latency", "lds", 64, 64),
            latency("l2_latency", "vector", 64, l1_span.max(self.l1_line)),
        ];
        // The last level before the HBM: every slot in one set of it too. A memory-side
        // slice sees the addresses interleaved to it (4 KiB granules over the slices) and
        // indexes the rest, so its span in the whole address space is `slices` times its
        // own.
        let last_span = match self.mall {
            Some((size, ways, slices)) => {
                v.push(latency("mall_latency", "vector", 64, l2_span));
                (size / ways.max(1)) * slices
            }
            None => l2_span,
        };
        v.push(latency("hbm_latency", "vector", 32, last_span.max(l2_span)));
        // Stream arrays: 64 MiB, or twice a memory-side cache (at most 256 MiB, the
        // program's limit), so that written lines leave the caches during the run.
        let stream_bytes = self.mall.map_or(64 << 20, |(size, _, slices)| (2 * size * slices).clamp(64 << 20, 256 << 20));
        v.push(stream("hbm_read", "READ", stream_bytes, 1));
        v.push(stream("hbm_copy", "COPY", stream_bytes, 1));
        v.push(stream("hbm_triad", "TRIAD", stream_bytes, 1));
        v.push(stream("l2_read", "READ", self.l2_bytes / 2, 5));
        v.push(Bench {
            name: "lds_bandwidth",
            unit: "B/clk/CU",
            program: "lds",
            defines: Vec::new(),
            args: Vec::new(),
            blocks: 1,
            threads: 256,
            scale: 1.0,
        });
        let mfma = |name, kind: &str| Bench {
            name,
            unit: "cycles",
            program: "mfma",
            defines: Vec::new(),
            args: s(&[kind.into()]),
            blocks: 1,
            threads: 256,
            scale: 1.0,
        };
        v.push(mfma("mfma_f32_32x32x2", "f32_32x32x2"));
        v.push(mfma("mfma_f16_16x16x16", "f16_16x16x16"));
        if self.target != Target::Gfx90a {
            v.push(mfma("mfma_fp8_16x16x32", "fp8_16x16x32"));
        }
        v.push(Bench {
            name: "atomic_throughput",
            unit: "atomics/clk",
            program: "atomic",
            defines: Vec::new(),
            args: s(&["16".into(), waves.to_string()]),
            blocks: self.cus * 4,
            threads: 256,
            scale: 1.0,
        });
        v
    }
}

/// The source of a program of `benches/micro`, with the shared header.
fn source(program: &str) -> anyhow::Result<&'static str> {
    Ok(match program {
        "latency" => include_str!("../../benches/micro/latency.c"),
        "stream" => include_str!("../../benches/micro/stream.c"),
        "lds" => include_str!("../../benches/micro/lds.c"),
        "mfma" => include_str!("../../benches/micro/mfma.c"),
        "atomic" => include_str!("../../benches/micro/atomic.c"),
        other => bail!("no micro program {other}"),
    })
}

/// Compiles `program` with `defines` for `target` into `dir` (once per combination).
fn build(
    dir: &Path,
    target: Target,
    program: &str,
    defines: &[String],
    cache: &mut BTreeMap<String, Vec<u8>>,
) -> anyhow::Result<Vec<u8>> {
    let key = format!("{program}{}", defines.join(""));
    if let Some(image) = cache.get(&key) {
        return Ok(image.clone());
    }
    std::fs::write(
        dir.join("common.h"),
        include_str!("../../benches/micro/common.h"),
    )
    .with_context(|| format!("writing {}", dir.display()))?;
    let src = dir.join(format!("{program}.c"));
    std::fs::write(&src, source(program)?).with_context(|| format!("writing {}", src.display()))?;
    let output = dir.join(format!("{key}-{target}.co"));
    let cc = CcOptions {
        mcpu: target,
        opt: OptLevel::O2,
        output: output.clone(),
        inputs: vec![src],
        extra_flags: defines.to_vec(),
    };
    amdgpu::host::cc::compile(&cc).map_err(|e| anyhow!("compiling {program}: {e}"))?;
    let image = std::fs::read(&output).with_context(|| format!("reading {}", output.display()))?;
    cache.insert(key, image.clone());
    Ok(image)
}

/// The figure a program printed: the first number after `RESULT <name>`.
fn result_of(stdout: &[u8]) -> Option<f64> {
    String::from_utf8_lossy(stdout).lines().find_map(|l| {
        l.strip_prefix("RESULT ")?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    })
}

/// One row of the table.
#[derive(Debug, serde::Serialize)]
struct Row {
    name: String,
    unit: String,
    measured: f64,
    reference: Option<f64>,
    error: Option<f64>,
    source: Option<String>,
    run_seconds: f64,
}

/// Runs `dojo bench micro`.
pub fn run(a: MicroArgs) -> anyhow::Result<ExitCode> {
    let spec = crate::machine_spec::spec(a.topology.as_deref(), crate::exec::default_topology(Target::Gfx90a), Some("timing"), &a.set);
    let t = crate::machine_spec::resolve(&spec)?;
    let machine = Machine::of(&t)?;
    let references: BTreeMap<String, BTreeMap<String, Reference>> =
        toml::from_str(REFERENCE).context("benches/micro/reference.toml")?;
    let part_refs = references.get(machine.part);
    let benches: Vec<Bench> = machine
        .benches()
        .into_iter()
        .filter(|b| a.only.is_empty() || a.only.iter().any(|o| o == b.name))
        .collect();
    if let Some(unknown) = a
        .only
        .iter()
        .find(|o| !machine.benches().iter().any(|b| b.name == o.as_str()))
    {
        bail!("--only {unknown}: no such benchmark on this topology (see `dojo bench micro` without --only)");
    }
    let dir = std::env::temp_dir().join(format!("dojo-micro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let (partitions, workers) = crate::plan::gpu_partitions(&t, Some(a.workers), None);
    let plan = crate::plan::choose(&t, Some(partitions), None)?;
    let mut cache = BTreeMap::new();
    let mut rows = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        for b in &benches {
            let image = build(&dir, machine.target, b.program, &b.defines, &mut cache)?;
            let mut args = vec![b.program.to_string()];
            args.extend(b.args.iter().cloned());
            let opts = ExecOptions {
                topology: t.clone(),
                assignment: Some(plan.assignment.clone()),
                workers: Some(workers as usize),
                threads: [b.threads, 1, 1],
                blocks: [b.blocks, 1, 1],
                args,
                env: Vec::new(),
                max_ticks: None,
                capture: true,
                max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
                observe: false,
                progress: false,
            };
            let out = run_image(&image, &opts).map_err(|e| anyhow!("{}: {e}", b.name))?;
            if let Some(f) = out.faults.first() {
                bail!("{}: {f}", b.name);
            }
            let value = result_of(&out.stdout).ok_or_else(|| {
                anyhow!(
                    "{}: the program printed no RESULT (status {}, {})",
                    b.name,
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            })?;
            let measured = value * b.scale;
            let reference = part_refs.and_then(|r| r.get(b.name));
            rows.push(Row {
                name: b.name.to_string(),
                unit: b.unit.to_string(),
                measured,
                reference: reference.map(|r| r.value),
                error: reference.map(|r| (measured - r.value) / r.value),
                source: reference.map(|r| r.source.clone()),
                run_seconds: out.run_seconds,
            });
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result?;
    if a.json {
        outln!(
            "{}",
            json!({ "part": machine.part, "target": machine.target.name(), "clock_mhz": machine.clock_mhz, "rows": rows })
        )?;
    } else {
        outln!(
            "{} ({}, {} CUs at {:.0} MHz), timing mode",
            machine.part,
            machine.target,
            machine.cus,
            machine.clock_mhz
        )?;
        outln!(
            "{:<20} {:>12} {:>12} {:>8}  {:<12} {:>7}",
            "benchmark",
            "measured",
            "reference",
            "error",
            "unit",
            "wall s"
        )?;
        for r in &rows {
            let reference = r.reference.map_or("-".to_string(), |v| format!("{v:.2}"));
            let error = r
                .error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0));
            outln!(
                "{:<20} {:>12.2} {:>12} {:>8}  {:<12} {:>7.2}",
                r.name,
                r.measured,
                reference,
                error,
                r.unit,
                r.run_seconds
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_name_known_benchmarks() {
        let refs: BTreeMap<String, BTreeMap<String, Reference>> =
            toml::from_str(REFERENCE).expect("reference.toml parses");
        let mi210 = refs.get("mi210").expect("MI210 references");
        for name in [
            "l1_latency",
            "scalar_latency",
            "lds_latency",
            "l2_latency",
            "hbm_latency",
            "hbm_read",
            "hbm_triad",
            "l2_read",
        ] {
            assert!(mi210.contains_key(name), "{name}");
        }
    }

    #[test]
    fn results_are_read_from_the_result_line() {
        assert_eq!(result_of(b"hello\nRESULT latency 124.06 0\n"), Some(124.06));
        assert_eq!(result_of(b"no result"), None);
    }
}
