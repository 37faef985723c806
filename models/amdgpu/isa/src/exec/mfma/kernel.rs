//! The arithmetic of one MFMA/SMFMAC over operands already decoded into f64 arrays: the
//! per-k-step fused form (f32, xf32, f64) and the k-block form (everything else), both
//! vectorized across the output columns of one row so each output keeps its own k order.
//!
//! An AVX2+FMA build of the loops is chosen at run time when the host has it (the same
//! pattern as `exec::burst`), with the dense k-block form in [`super::block_avx2`]; every
//! build gives identical bits: the block sums add products
//! that are exact in f64, so a fused multiply-add rounds exactly like a multiply then add.

use crate::numeric::matrix::add_block_f32;
use crate::numeric::valu::fma_f32_rne;

/// Most elements an operand or the output can have (64 lanes x 32 elements; 32 registers).
pub(crate) const MAX: usize = 2048;

/// How outputs accumulate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Accumulate {
    /// One fused multiply-add in f32 per k step, in k order.
    StepF32,
    /// One fused multiply-add in f64 per k step, in k order.
    StepF64,
    /// Exact products summed in f64 per k-block, each block sum (times its scale) added to
    /// the f32 accumulator with one rounding.
    BlockF32,
    /// Integer products summed per k-block, added to the i32 accumulator with wrap-around.
    BlockI32,
}

/// The decoded operands and the accumulators of one instruction.
pub(crate) struct Work {
    /// Block size M (= N).
    pub(crate) m: usize,
    /// Number of blocks.
    pub(crate) blocks: usize,
    /// Dense reduction length K.
    pub(crate) k: usize,
    /// Elements per row of `a` (K, or K/2 for sparse A).
    pub(crate) ka: usize,
    /// A elements each lane holds (the k-block length).
    pub(crate) per_lane: usize,
    /// For each output block, the A block it multiplies (CBSZ/ABID).
    pub(crate) a_block: [u8; 16],
    /// A as `[block][row][ka]`.
    pub(crate) a: [f64; MAX],
    /// B transposed: `[block][k][column]`.
    pub(crate) bt: [f64; MAX],
    /// The B row (k) each stored A element multiplies, `[row][ka]` (sparse A only).
    pub(crate) rows: [u8; MAX],
    /// Per (row, k-group) the A scale and per (column, k-group) the B scale, as
    /// `[group][row]` (only read when `scaled`).
    pub(crate) scale_a: [f64; 64],
    pub(crate) scale_b: [f64; 64],
    pub(crate) scaled: bool,
    /// Accumulators as `[block][row][column]`: f32/i32 bit patterns (low half) or f64 bits.
    pub(crate) acc: [u64; MAX],
    pub(crate) mode: Accumulate,
}

impl Work {
    /// A zeroed work area.
    pub(crate) fn new() -> Work {
        Work {
            m: 0,
            blocks: 0,
            k: 0,
            ka: 0,
            per_lane: 0,
            a_block: [0; 16],
            a: [0.0; MAX],
            bt: [0.0; MAX],
            rows: [0; MAX],
            scale_a: [1.0; 64],
            scale_b: [1.0; 64],
            scaled: false,
            acc: [0; MAX],
            mode: Accumulate::BlockF32,
        }
    }
}

/// Computes every output of `work` into `work.acc`.
pub(crate) fn run(work: &mut Work) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { run_avx2(work) };
            return;
        }
    }
    run_with::<false>(work);
}

/// [`run`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2(work: &mut Work) {
    if work.mode == Accumulate::BlockF32 && work.ka == work.k {
        match work.m {
            4 => return super::block_avx2::run::<1, 4>(work),
            16 => return super::block_avx2::run::<4, 2>(work),
            32 => return super::block_avx2::run::<8, 1>(work),
            _ => {}
        }
    }
    run_with::<true>(work);
}

#[inline(always)]
fn run_with<const FMA: bool>(work: &mut Work) {
    match work.m {
        4 => rows::<4, FMA>(work),
        16 => rows::<16, FMA>(work),
        _ => rows::<32, FMA>(work),
    }
}

#[inline(always)]
fn rows<const N: usize, const FMA: bool>(work: &mut Work) {
    let (m, k, ka, per_lane) = (work.m, work.k, work.ka, work.per_lane.max(1));
    let groups = ka / per_lane;
    let dense = ka == k;
    for block in 0..work.blocks {
        let a_block = work.a_block[block] as usize;
        let bt = &work.bt[block * k * N..(block + 1) * k * N];
        for i in 0..m {
            let a_row = &work.a[(a_block * m + i) * ka..(a_block * m + i + 1) * ka];
            let b_rows = &work.rows[i * ka..(i + 1) * ka];
            let out = block * m * N + i * N;
            let acc: &mut [u64; N] = (&mut work.acc[out..out + N]).try_into().expect("N accumulators");
            match work.mode {
                Accumulate::StepF32 => step_f32::<N>(a_row, bt, acc),
                Accumulate::StepF64 => step_f64::<N>(a_row, bt, acc),
                Accumulate::BlockF32 | Accumulate::BlockI32 => {
                    for g in 0..groups {
                        let span = g * per_lane..(g + 1) * per_lane;
                        let sums = if dense {
                            // Dense A: the block's B rows are consecutive.
                            let rows = &bt[g * per_lane * N..(g + 1) * per_lane * N];
                            dense_block_sum::<N, FMA>(&a_row[span], rows)
                        } else {
                            block_sum::<N, FMA>(&a_row[span.clone()], &b_rows[span], bt)
                        };
                        if work.mode == Accumulate::BlockI32 {
                            for j in 0..N {
                                acc[j] = (acc[j] as u32).wrapping_add(sums[j] as i64 as u32) as u64;
                            }
                        } else {
                            let sa = work.scale_a[g * m + i];
                            for j in 0..N {
                                let s = if work.scaled { sums[j] * (sa * work.scale_b[g * m + j]) } else { sums[j] };
                                acc[j] = add_block_f32(f32::from_bits(acc[j] as u32), s).to_bits() as u64;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `sum_e a[e] * bt[rows[e]][j]` for every column `j`, in `e` order, starting from -0.0
/// (so the sum of a single product is that product, signed zeros included).
#[inline(always)]
fn block_sum<const N: usize, const FMA: bool>(a: &[f64], rows: &[u8], bt: &[f64]) -> [f64; N] {
    let mut s = [-0.0f64; N];
    for (&x, &r) in a.iter().zip(rows) {
        let r = r as usize;
        let Some(b) = bt.get(r * N..r * N + N) else { continue };
        for j in 0..N {
            s[j] = if FMA { x.mul_add(b[j], s[j]) } else { s[j] + x * b[j] };
        }
    }
    s
}

/// [`block_sum`] for consecutive B rows (`bt` holds exactly the block's rows).
#[inline(always)]
fn dense_block_sum<const N: usize, const FMA: bool>(a: &[f64], bt: &[f64]) -> [f64; N] {
    // Two independent accumulator sets (even and odd k) would change the order; keep one
    // chain per column but let the compiler see fixed-size rows.
    let mut s = [-0.0f64; N];
    for (&x, b) in a.iter().zip(bt.chunks_exact(N)) {
        let b: &[f64; N] = b.try_into().expect("rows of N");
        for j in 0..N {
            s[j] = if FMA { x.mul_add(b[j], s[j]) } else { s[j] + x * b[j] };
        }
    }
    s
}

/// f32 accumulation, one fused multiply-add per k step (dense A: B rows in k order).
#[inline(always)]
fn step_f32<const N: usize>(a: &[f64], bt: &[f64], acc: &mut [u64; N]) {
    let mut t: [f32; N] = std::array::from_fn(|j| f32::from_bits(acc[j] as u32));
    for (&x, b) in a.iter().zip(bt.chunks_exact(N)) {
        for j in 0..N {
            t[j] = fma_f32_rne(x as f32, b[j] as f32, t[j]);
        }
    }
    for j in 0..N {
        acc[j] = t[j].to_bits() as u64;
    }
}

/// f64 accumulation, one fused multiply-add per k step (dense A: B rows in k order).
#[inline(always)]
fn step_f64<const N: usize>(a: &[f64], bt: &[f64], acc: &mut [u64; N]) {
    let mut t: [f64; N] = std::array::from_fn(|j| f64::from_bits(acc[j]));
    for (&x, b) in a.iter().zip(bt.chunks_exact(N)) {
        for j in 0..N {
            t[j] = x.mul_add(b[j], t[j]);
        }
    }
    for j in 0..N {
        acc[j] = t[j].to_bits();
    }
}
