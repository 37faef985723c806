//! `dojo bench gpu`: GPU programs from `benches/gpu/` run on a whole simulated GPU,
//! reporting simulated wave-instructions per wall-clock second.

use std::process::ExitCode;

use amdgpu::host::cc::{CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{run_image, ExecOptions};
use anyhow::{anyhow, bail, Context as _};
use clap::Args;
use serde_json::json;

use crate::sysinfo::peak_rss_bytes;
use crate::output::outln;

/// Arguments of `dojo bench gpu`.
#[derive(Args, Debug)]
pub struct GpuArgs {
    /// Which program: `valu` (multiply-add chains) or `memory` (streaming loads and stores).
    #[arg(long, default_value = "valu")]
    kernel: String,
    /// Topology file (default: the embedded MI300X).
    #[arg(long)]
    topology: Option<std::path::PathBuf>,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    workers: u32,
    /// Partitioner (default: the topology's, one XCD per partition).
    #[arg(long)]
    partitioner: Option<String>,
    /// Partitions (default with several workers: one per XCD, which the workers claim
    /// anew every epoch, evening out unequal cores; with one worker: one).
    #[arg(long)]
    partitions: Option<u32>,
    /// Work-groups (default: 4 per compute unit, which fills the GPU).
    #[arg(long)]
    blocks: Option<u32>,
    /// Work-items per work-group.
    #[arg(long, default_value_t = 256)]
    threads: u32,
    /// Loop iterations per work-item.
    #[arg(long, default_value_t = 1000)]
    iterations: u32,
    /// Simulation mode of the compute units: functional or timing.
    #[arg(long, default_value = "functional")]
    mode: String,
    /// Independent copies of the whole run at the same time, each on its own threads
    /// (with `--workers` workers); rates are their sum. `--workers 1 --copies 2`
    /// measures what this machine gives two fully independent simulations, the
    /// ceiling for `--workers 2`.
    #[arg(long, default_value_t = 1)]
    copies: u32,
    /// Also measure this machine's ceiling for `--workers N` in the same invocation:
    /// N independent one-worker copies at once (as `--workers 1 --copies N`); prints
    /// the parallel run's rate as a fraction of theirs.
    #[arg(long, conflicts_with = "copies")]
    ceiling: bool,
    #[command(flatten)]
    set: crate::set_args::SetArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs `dojo bench gpu`.
pub fn run(a: GpuArgs) -> anyhow::Result<ExitCode> {
    if a.copies == 0 {
        bail!("--copies must be at least 1");
    }
    let source = match a.kernel.as_str() {
        "valu" => include_str!("../../benches/gpu/valu.c"),
        "memory" => include_str!("../../benches/gpu/memory.c"),
        other => bail!("--kernel {other}: expected valu or memory"),
    };
    let spec = crate::machine_spec::spec(a.topology.as_deref(), crate::exec::default_topology(Target::Gfx942), Some(&a.mode), &a.set);
    let t = crate::machine_spec::resolve(&spec)?;
    // Invariant: Machine::of refuses a topology without a GPU.
    let target = amdgpu::host::machine::Machine::of(&t).map_err(|e| anyhow!("{e}"))?.gpus[0].soc.params.target.isa();
    let cus = t.components.iter().filter(|c| c.type_name == "amdgpu.cu").count() as u32;
    let blocks = a.blocks.unwrap_or(4 * cus.max(1));

    let dir = std::env::temp_dir().join(format!("dojo-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let src = dir.join(format!("{}.c", a.kernel));
    std::fs::write(&src, source)?;
    let image_path = dir.join(format!("{}-{target}.co", a.kernel));
    let cc = CcOptions {
        mcpu: target,
        opt: OptLevel::O2,
        output: image_path.clone(),
        inputs: vec![src],
        // WAVES: the memory kernel's static buffers, one per wave of the grid.
        extra_flags: vec![format!("-DITERATIONS={}", a.iterations), format!("-DWAVES={}", u64::from(blocks) * u64::from(a.threads.div_ceil(64)))],
    };
    amdgpu::host::cc::compile(&cc).map_err(|e| anyhow!("{e}"))?;
    let image = std::fs::read(&image_path)?;
    let _ = std::fs::remove_dir_all(&dir);

    let options = |workers: u32, partitions: Option<u32>| -> anyhow::Result<ExecOptions> {
        let (partitions, workers) = crate::plan::gpu_partitions(&t, Some(workers), partitions);
        let plan = crate::plan::choose(&t, Some(partitions), a.partitioner.as_deref())?;
        Ok(ExecOptions {
            topology: t.clone(),
            assignment: Some(plan.assignment),
            workers: Some(workers as usize),
            threads: [a.threads, 1, 1],
            blocks: [blocks, 1, 1],
            args: vec![a.kernel.clone()],
            env: Vec::new(),
            max_ticks: None,
            capture: true,
            max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
            observe: false,
            progress: false,
        })
    };
    let m = measure(&image, &options(a.workers, a.partitions)?, a.copies)?;
    let ceiling = if a.ceiling {
        if a.workers < 2 {
            bail!("--ceiling compares --workers N (N at least 2) with N one-worker copies");
        }
        let c = measure(&image, &options(1, None)?, a.workers)?;
        if c.digest != m.digest {
            bail!("the ceiling's copies and the parallel run differ: digest {:016x} against {:016x}", c.digest, m.digest);
        }
        Some(c)
    } else {
        None
    };
    let (out, digest, instructions, seconds, rate, per_copy) = (&m.out, m.digest, m.instructions, m.seconds, m.rate, &m.per_copy);
    let output = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if a.json {
        outln!(
            "{}",
            json!({
                "kernel": a.kernel, "mode": a.mode, "target": target.name(), "blocks": blocks, "threads": a.threads,
                "iterations": a.iterations, "wave_instructions": instructions, "run_seconds": seconds,
                "wave_instructions_per_sec": rate, "copies": a.copies, "copy_wave_instructions_per_sec": per_copy,
                "ceiling": ceiling.as_ref().map(|c| json!({
                    "copies": a.workers, "wave_instructions_per_sec": c.rate,
                    "copy_wave_instructions_per_sec": c.per_copy, "ratio": rate / c.rate,
                })),
                "workers": a.workers, "partitions_at_end": out.partitions,
                "epochs": out.epochs, "simulated_ps": out.end.0, "peak_rss_bytes": peak_rss_bytes(),
                "digest": format!("{digest:016x}"), "output": output, "status": out.status,
            })
        )?;
    } else {
        outln!("program:             {} on {} ({blocks} x {} work-items, {} iterations, {} mode)", a.kernel, target, a.threads, a.iterations, a.mode)?;
        outln!("output:              {output}")?;
        outln!("wave-instructions:   {instructions}")?;
        outln!("run:                 {seconds:.3} s")?;
        outln!("wave-instructions/s: {:.2} M", rate / 1e6)?;
        if a.copies > 1 {
            outln!("copies:              {} running at once ({} each)", a.copies, crate::copies::rates_line(per_copy, 2))?;
        }
        if let Some(c) = &ceiling {
            let c = crate::copies::Ceiling { rate: c.rate, per_copy: &c.per_copy, workers: a.workers };
            c.print(21, "", rate, 2)?;
        }
        outln!("workers:             {}", a.workers)?;
        outln!("partitions:          {} at the end ({} epochs)", out.partitions, out.epochs)?;
        outln!("simulated time:      {:.3} us", out.end.0 as f64 / 1e6)?;
        if let Some(rss) = peak_rss_bytes() {
            outln!("peak RSS:            {:.1} MiB", rss as f64 / (1024.0 * 1024.0))?;
        }
        outln!("digest:              {digest:016x}")?;
    }
    Ok(if out.status == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// What one measurement (all its copies) gave.
struct Measured {
    /// The first copy's outcome (all copies agree).
    out: amdgpu::host::loader::ExecOutcome,
    digest: u64,
    instructions: u64,
    /// The longest copy's run time.
    seconds: f64,
    /// Wave-instructions per second, all copies.
    rate: f64,
    per_copy: Vec<f64>,
}

/// Runs `copies` copies of the program at once and checks that they agree.
fn measure(image: &[u8], opts: &ExecOptions, copies: u32) -> anyhow::Result<Measured> {
    // Each copy starts once every copy has its options; the loader's own clock
    // (`run_seconds`) leaves out loading.
    let outs = crate::copies::run_copies(copies, |start| {
        let opts = opts.clone();
        start.wait();
        run_image(image, &opts)
    });
    let mut runs = Vec::new();
    for out in outs {
        let out = out.map_err(|e| anyhow!("{e}"))?;
        if let Some(f) = out.faults.first() {
            bail!("{f}");
        }
        let digest = {
            // FNV-1a over the statistics and output: equal digests mean identical results.
            let text = serde_json::to_string(&out.kernels)? + &String::from_utf8_lossy(&out.stdout);
            text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
        };
        runs.push((out, digest));
    }
    let digest = runs[0].1;
    if let Some((_, other)) = runs.iter().find(|(_, d)| *d != digest) {
        bail!("copies of the same run differ: digest {digest:016x} against {other:016x}");
    }
    let instructions: u64 = runs[0].0.kernels.iter().map(|k| k.wave_instructions()).sum();
    // With copies, the rate is their sum: all instructions over the longest copy's time.
    let seconds = runs.iter().map(|(o, _)| o.run_seconds).fold(0.0, f64::max);
    let rate = (instructions * u64::from(copies)) as f64 / seconds;
    let per_copy = runs.iter().map(|(o, _)| instructions as f64 / o.run_seconds).collect();
    let out = runs.swap_remove(0).0;
    Ok(Measured { out, digest, instructions, seconds, rate, per_copy })
}
