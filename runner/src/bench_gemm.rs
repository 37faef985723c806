//! `dojo bench gemm`: a SIZE x SIZE x SIZE matrix multiply with matrix (MFMA)
//! instructions on a whole simulated GPU (`benches/gpu/gemm.c`), checked against a host
//! reference, reporting wall time and MFMA wave-instructions per second.
//!
//! The host fills A, B (stored transposed) and, for the scaled fp8 form, the E8M0 block
//! scales with seeded random values, writes them into the program's globals before the
//! run, reads C back after it and compares every element with an f64 reference within
//! the bound of fp32 accumulation: each output adds `n = K / E` exact k-block sums (`E`
//! elements per lane of the form) to an f32 accumulator with one rounding each, so its
//! error is at most `γ_n = n·u / (1 - n·u)` (u = 2^-24) times the sum of the products'
//! magnitudes (Higham, recursive summation): 2^-19 for the scaled 16x16x128 form at
//! K = 1024, far below what a wrong layout, scale or conversion gives.

use std::process::ExitCode;

use amdgpu::host::cc::{CcOptions, OptLevel};
use amdgpu::isa::Target;
use amdgpu::host::loader::{prepare, ExecOptions};
use anyhow::{anyhow, bail, Context as _};
use clap::Args;
use rand_core::{Rng as _, SeedableRng};
use rand_xorshift::XorShiftRng as Rng;
use serde_json::json;

use crate::sysinfo::peak_rss_bytes;
use crate::output::outln;

/// Arguments of `dojo bench gemm`.
#[derive(Args, Debug)]
pub struct GemmArgs {
    /// Target: gfx942 (MI300X) or gfx950 (MI355X).
    #[arg(long, default_value = "gfx950")]
    mcpu: Target,
    /// Element type of A and B: fp8, f16 or bf16 (C is fp32).
    #[arg(long, default_value = "fp8")]
    dtype: String,
    /// Use the unscaled 16x16x32 fp8 form on gfx950 instead of the scaled 16x16x128
    /// f8f6f4 form.
    #[arg(long)]
    no_scale: bool,
    /// M = N = K (a multiple of 128).
    #[arg(long, default_value_t = 1024)]
    size: u32,
    /// Topology file (default: the embedded MI300X or MI355X for `--mcpu`).
    #[arg(long)]
    topology: Option<std::path::PathBuf>,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    workers: u32,
    /// Partitions (default with several workers: one per XCD).
    #[arg(long)]
    partitions: Option<u32>,
    /// Seed of the random matrices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    set: crate::set_args::SetArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Element type of the inputs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dtype {
    Fp8,
    F16,
    Bf16,
}

/// One MFMA form of the benchmark program (`FORM` in gemm.c).
struct Form {
    id: u32,
    mnemonic: &'static str,
    kstep: u32,
    dtype: Dtype,
    scaled: bool,
}

fn form(target: Target, dtype: &str, no_scale: bool) -> anyhow::Result<Form> {
    let f = |id, mnemonic, kstep, dtype, scaled| Form { id, mnemonic, kstep, dtype, scaled };
    Ok(match (target, dtype) {
        (Target::Gfx950, "fp8") if !no_scale => f(1, "v_mfma_scale_f32_16x16x128_f8f6f4", 128, Dtype::Fp8, true),
        (Target::Gfx942 | Target::Gfx950, "fp8") => f(2, "v_mfma_f32_16x16x32_fp8_fp8", 32, Dtype::Fp8, false),
        (Target::Gfx942, "f16") => f(3, "v_mfma_f32_16x16x16_f16", 16, Dtype::F16, false),
        (Target::Gfx942, "bf16") => f(4, "v_mfma_f32_16x16x16_bf16", 16, Dtype::Bf16, false),
        (Target::Gfx950, "f16") => f(5, "v_mfma_f32_16x16x32_f16", 32, Dtype::F16, false),
        (Target::Gfx950, "bf16") => f(6, "v_mfma_f32_16x16x32_bf16", 32, Dtype::Bf16, false),
        (Target::Gfx90a, _) => bail!("--mcpu gfx90a: the benchmark's forms are gfx942 and gfx950 ones"),
        (_, other) => bail!("--dtype {other}: expected fp8, f16 or bf16"),
    })
}

/// Value of an 8-bit float: E4M3 as OCP defines it (gfx950: bias 7, `S.1111.111` is
/// NaN) or the FNUZ variant (gfx942: bias 8, `0x80` is NaN, no negative zero).
fn fp8_value(byte: u8, fnuz: bool) -> f64 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((byte >> 3) & 0xf);
    let man = f64::from(byte & 7);
    let bias = if fnuz { 8 } else { 7 };
    let mag = if exp == 0 { man / 8.0 * 2f64.powi(1 - bias) } else { (1.0 + man / 8.0) * 2f64.powi(exp - bias) };
    sign * mag
}

/// Value of an IEEE binary16.
fn f16_value(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let man = f64::from(bits & 0x3ff);
    let mag = if exp == 0 { man / 1024.0 * 2f64.powi(-14) } else { (1.0 + man / 1024.0) * 2f64.powi(exp - 15) };
    sign * mag
}

/// A random finite input element (its bytes) and its value. Magnitudes stay within
/// 2^-6..2^6 for the 16-bit types so that sums of SIZE products keep their precision.
fn element(rng: &mut Rng, dtype: Dtype, fnuz: bool) -> (Vec<u8>, f64) {
    loop {
        let r = rng.next_u64();
        match dtype {
            Dtype::Fp8 => {
                let b = r as u8;
                // NaN encodings: OCP 0x7f / 0xff, FNUZ 0x80.
                if (fnuz && b == 0x80) || (!fnuz && b & 0x7f == 0x7f) {
                    continue;
                }
                return (vec![b], fp8_value(b, fnuz));
            }
            Dtype::F16 => {
                let exp = 9 + (r >> 16) % 13; // 2^-6 .. 2^6
                let bits = ((r as u16) & 0x83ff) | ((exp as u16) << 10);
                return (bits.to_le_bytes().to_vec(), f16_value(bits));
            }
            Dtype::Bf16 => {
                let exp = 121 + (r >> 16) % 13;
                let bits = ((r as u16) & 0x807f) | ((exp as u16) << 7);
                return (bits.to_le_bytes().to_vec(), f64::from(f32::from_bits(u32::from(bits) << 16)));
            }
        }
    }
}

/// The inputs of one run and their values.
struct Inputs {
    a: Vec<u8>,
    bt: Vec<u8>,
    scale_a: Vec<u8>,
    scale_b: Vec<u8>,
    /// Values of A (row-major) and B transposed, with the block scales applied.
    a_val: Vec<f64>,
    bt_val: Vec<f64>,
}

fn inputs(size: usize, f: &Form, fnuz: bool, seed: u64) -> Inputs {
    let mut rng = Rng::seed_from_u64(seed);
    let blocks = size / 32;
    let scale = |rng: &mut Rng| -> u8 { if f.scaled { 123 + (rng.next_u64() % 9) as u8 } else { 127 } };
    let scale_a: Vec<u8> = (0..size * blocks).map(|_| scale(&mut rng)).collect();
    let scale_b: Vec<u8> = (0..size * blocks).map(|_| scale(&mut rng)).collect();
    let mut matrix = |scales: &[u8]| {
        let mut bytes = Vec::with_capacity(size * size * 2);
        let mut vals = Vec::with_capacity(size * size);
        for r in 0..size {
            for k in 0..size {
                let (b, v) = element(&mut rng, f.dtype, fnuz);
                bytes.extend_from_slice(&b);
                vals.push(v * 2f64.powi(i32::from(scales[r * blocks + k / 32]) - 127));
            }
        }
        (bytes, vals)
    };
    let (a, a_val) = matrix(&scale_a);
    let (bt, bt_val) = matrix(&scale_b);
    Inputs { a, bt, scale_a, scale_b, a_val, bt_val }
}

/// Runs `dojo bench gemm`.
pub fn run(a: GemmArgs) -> anyhow::Result<ExitCode> {
    let f = form(a.mcpu, &a.dtype, a.no_scale)?;
    if a.size == 0 || !a.size.is_multiple_of(128) || a.size > 8192 {
        bail!("--size {}: expected a multiple of 128 up to 8192", a.size);
    }
    let size = a.size as usize;
    let spec = crate::machine_spec::spec(a.topology.as_deref(), crate::exec::default_topology(a.mcpu), None, &a.set);
    let t = crate::machine_spec::resolve(&spec)?;

    let dir = tempfile::tempdir().context("creating a build directory")?;
    let src = dir.path().join("gemm.c");
    std::fs::write(&src, include_str!("../../benches/gpu/gemm.c"))?;
    let image_path = dir.path().join("gemm.co");
    let cc = CcOptions {
        mcpu: a.mcpu,
        opt: OptLevel::O2,
        output: image_path.clone(),
        inputs: vec![src],
        extra_flags: vec![format!("-DSIZE={}", a.size), format!("-DFORM={}", f.id)],
    };
    amdgpu::host::cc::compile(&cc).map_err(|e| anyhow!("{e}"))?;
    let image = std::fs::read(&image_path)?;

    let fnuz = a.mcpu == Target::Gfx942;
    let data = inputs(size, &f, fnuz, a.seed);
    let (partitions, workers) = crate::plan::gpu_partitions(&t, Some(a.workers), a.partitions);
    let plan = crate::plan::choose(&t, Some(partitions), None)?;
    let groups = (a.size / 64) * (a.size / 64);
    let opts = ExecOptions {
        topology: t,
        assignment: Some(plan.assignment),
        workers: Some(workers as usize),
        threads: [256, 1, 1],
        blocks: [groups, 1, 1],
        args: vec!["gemm".into()],
        env: Vec::new(),
        max_ticks: None,
        capture: true,
        max_output: amdgpu::host::loader::DEFAULT_MAX_OUTPUT,
        observe: false,
        progress: false,
    };
    let prepared = prepare(&image, &opts).map_err(|e| anyhow!("{e}"))?;
    let mem = prepared.memory().ok_or_else(|| anyhow!("the topology's GPU has no memory"))?;
    let symbol = |name: &str| prepared.symbol(name).ok_or_else(|| anyhow!("the benchmark program has no `{name}`"));
    let c_addr = symbol("dojo_gemm_c")?;
    for (name, bytes) in [("dojo_gemm_a", &data.a), ("dojo_gemm_bt", &data.bt), ("dojo_gemm_scale_a", &data.scale_a), ("dojo_gemm_scale_b", &data.scale_b)] {
        mem.write(symbol(name)?, bytes).map_err(|e| anyhow!("writing {name}: {e}"))?;
    }
    let out = prepared.finish();
    if let Some(fault) = out.faults.first() {
        bail!("{fault}");
    }
    if out.status != 0 {
        bail!("the benchmark program exited with status {}: {}", out.status, out.reason);
    }
    let mut c_bytes = vec![0u8; size * size * 4];
    mem.read(c_addr, &mut c_bytes).map_err(|e| anyhow!("reading C: {e}"))?;
    let c: Vec<f32> = c_bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let roundings = size as u32 / (f.kstep / 4);
    let (wrong, first_wrong, max_rel) = check(size, &data, &c, roundings);
    let digest = c_bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));

    let mfma = (size / 16) * (size / 16) * (size / f.kstep as usize);
    let instructions: u64 = out.kernels.iter().map(|k| k.wave_instructions()).sum();
    let seconds = out.run_seconds;
    if a.json {
        outln!(
            "{}",
            json!({
                "target": a.mcpu.name(), "dtype": a.dtype, "instruction": f.mnemonic, "size": a.size,
                "work_groups": groups, "mfma_wave_instructions": mfma, "wave_instructions": instructions,
                "run_seconds": seconds, "mfma_per_sec": mfma as f64 / seconds,
                "flops_per_sec": 2.0 * (size as f64).powi(3) / seconds, "workers": a.workers,
                "simulated_ps": out.end.0, "peak_rss_bytes": peak_rss_bytes(), "wrong_elements": wrong,
                "max_relative_error": max_rel, "digest": format!("{digest:016x}"),
            })
        )?;
    } else {
        outln!("gemm:                {0}x{0}x{0} {1} on {2} with {3} ({groups} work-groups of 256)", a.size, a.dtype, a.mcpu, f.mnemonic)?;
        outln!("check:               {} of {} elements outside the fp32 bound of {roundings} roundings (largest relative error {max_rel:.2e})", wrong, size * size)?;
        outln!("run:                 {seconds:.3} s")?;
        outln!("MFMA:                {mfma} wave-instructions, {:.1} k/s", mfma as f64 / seconds / 1e3)?;
        outln!("wave-instructions:   {instructions} ({:.2} M/s)", instructions as f64 / seconds / 1e6)?;
        outln!("workers:             {} ({} partitions at the end)", a.workers, out.partitions)?;
        outln!("simulated time:      {:.3} us", out.end.0 as f64 / 1e6)?;
        if let Some(rss) = peak_rss_bytes() {
            outln!("peak RSS:            {:.1} MiB", rss as f64 / (1024.0 * 1024.0))?;
        }
        outln!("digest:              {digest:016x}")?;
    }
    if let Some((i, j, got, want)) = first_wrong {
        eprintln!("dojo: C[{i}][{j}] = {got} but the host reference gives {want}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Compares C with the f64 reference: the count of elements outside the bound, the
/// first of them (row-major order), and the largest error relative to the sum of
/// magnitudes. Rows are split over the host's cores.
#[allow(clippy::type_complexity)]
fn check(size: usize, d: &Inputs, c: &[f32], roundings: u32) -> (usize, Option<(usize, usize, f32, f64)>, f64) {
    let nu = f64::from(roundings) * 2f64.powi(-24);
    let gamma = nu / (1.0 - nu);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(size);
    let rows_per = size.div_ceil(threads);
    let parts: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || check_rows(size, d, c, gamma, t * rows_per..((t + 1) * rows_per).min(size))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let wrong = parts.iter().map(|p| p.0).sum();
    let first = parts.iter().find_map(|p| p.1);
    let max_rel = parts.iter().map(|p| p.2).fold(0.0, f64::max);
    (wrong, first, max_rel)
}

#[allow(clippy::type_complexity)]
fn check_rows(size: usize, d: &Inputs, c: &[f32], gamma: f64, rows: std::ops::Range<usize>) -> (usize, Option<(usize, usize, f32, f64)>, f64) {
    let mut wrong = 0;
    let mut first = None;
    let mut max_rel = 0f64;
    for i in rows {
        let arow = &d.a_val[i * size..(i + 1) * size];
        for j in 0..size {
            let bcol = &d.bt_val[j * size..(j + 1) * size];
            let (mut sum, mut mag) = (0f64, 0f64);
            for (x, y) in arow.iter().zip(bcol) {
                sum += x * y;
                mag += (x * y).abs();
            }
            let got = c[i * size + j];
            let err = (f64::from(got) - sum).abs();
            let bound = mag * gamma + f64::MIN_POSITIVE;
            max_rel = max_rel.max(err / mag.max(f64::MIN_POSITIVE));
            if err.is_nan() || err > bound {
                wrong += 1;
                first.get_or_insert((i, j, got, sum));
            }
        }
    }
    (wrong, first, max_rel)
}
