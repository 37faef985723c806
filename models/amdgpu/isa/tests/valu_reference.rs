//! Reference semantics of the vector ALU, written independently of the executor from the
//! CDNA3/CDNA4 ISA pseudocode, and property tests that run real instructions (assembled by
//! llvm-mc) on random operands of all three targets and compare bit-exactly (the
//! transcendentals within the ISA's 1 ULP).
//!
//! Each run fills 64 lanes with operands drawn with a bias toward the edge cases
//! (±0, ±Inf, quiet and signalling NaNs, denormals, the largest finite values, integer
//! limits), so one proptest case checks 64 operand sets per instruction.

// The reference loops index lanes and accumulators by number, as the ISA pseudocode
// does, to stay comparable with it line by line.
#![allow(clippy::needless_range_loop, clippy::type_complexity)]

mod common;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use half::f16;
use proptest::prelude::*;

const BASE: u64 = 0x10_0000;
/// MODE as HIP kernels start: round to nearest even, all denormals kept, IEEE, DX10 clamp.
const MODE: u32 = 0x3f0;
const N: usize = 64;
type Lanes = [u32; N];

// -------------------------------------------------------------------------------------
// Harness
// -------------------------------------------------------------------------------------

/// Assembled words, cached per target and text (llvm-mc runs once per instruction).
fn words(target: Target, text: &str) -> Vec<u32> {
    static CACHE: OnceLock<Mutex<HashMap<(Target, String), Vec<u32>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(w) = cache.lock().unwrap().get(&(target, text.to_string())) {
        return w.clone();
    }
    let w = common::assemble(target, text);
    cache.lock().unwrap().insert((target, text.to_string()), w.clone());
    w
}

/// Runs `text` on a wave whose VGPR `r` holds `lanes` for every `(r, lanes)` of `regs`.
fn try_run(target: Target, text: &str, regs: &[(usize, Lanes)], mode: u32, exec: u64) -> Result<Wave, ExecFault> {
    let program = Program::from_words(target, BASE, &words(target, text));
    let mut w = Wave::new(BASE, mode);
    for (r, lanes) in regs {
        w.vgpr[*r] = *lanes;
    }
    w.set_exec(exec);
    w.status = WaveStatus::Running;
    let mut mem = Memory::new();
    run_single_wave(&program, &mut w, &mut mem, &mut [], 1000)?;
    Ok(w)
}

fn run(target: Target, text: &str, regs: &[(usize, Lanes)]) -> Wave {
    try_run(target, text, regs, MODE, u64::MAX).unwrap_or_else(|e| panic!("{target}: {text}: {e}"))
}

fn lanes(v: Vec<u32>) -> Lanes {
    v.try_into().expect("64 lanes")
}

/// Asserts `got == want` lane by lane, naming the instruction and the inputs.
fn check(target: Target, text: &str, got: &Lanes, want: impl Fn(usize) -> u32, inputs: &[&Lanes]) {
    for l in 0..N {
        let w = want(l);
        let ins: Vec<String> = inputs.iter().map(|i| format!("{:#010x}", i[l])).collect();
        assert_eq!(got[l], w, "{target} `{text}` lane {l}: inputs {ins:?}: got {:#010x}, want {w:#010x}", got[l]);
    }
}

// -------------------------------------------------------------------------------------
// Operand strategies
// -------------------------------------------------------------------------------------

fn f32_edges() -> Vec<u32> {
    vec![
        0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0xff80_1234, 0x0000_0001,
        0x807f_ffff, 0x0080_0000, 0x7f7f_ffff, 0xff7f_ffff, 0x3f80_0000, 0xbf80_0000, 0x3f00_0000, 0xbf00_0000,
        0x4b80_0000, 0x3eff_ffff, 0x4f00_0000, 0xcf00_0000, 0x4f80_0000, 0x3e80_0000, 0x3f40_0000,
    ]
}

fn f32_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => any::<u32>(),
        2 => prop::sample::select(f32_edges()),
        2 => (-300i32..300).prop_map(|i| (i as f32 * 0.25).to_bits()),
        1 => any::<u32>().prop_map(|x| x & 0x807f_ffff),
    ]
}

fn f16_edges() -> Vec<u32> {
    vec![
        0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd23, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00,
        0x3800, 0xb800, 0x3400, 0x37ff, 0x6400, 0xe400, 0x5bf8,
    ]
}

/// An f16 in the low half; the high half random (it must not matter).
fn f16_bits() -> impl Strategy<Value = u32> {
    let low = prop_oneof![
        3 => any::<u16>().prop_map(u32::from),
        2 => prop::sample::select(f16_edges()),
        2 => (-200i32..200).prop_map(|i| u32::from(f16::from_f32(i as f32 * 0.25).to_bits())),
        1 => any::<u16>().prop_map(|x| u32::from(x & 0x83ff)),
    ];
    (low, any::<u16>()).prop_map(|(l, h)| l | (u32::from(h) << 16))
}

/// Two f16s, each drawn like [`f16_bits`]'s low half.
fn pk_f16_bits() -> impl Strategy<Value = u32> {
    (f16_bits(), f16_bits()).prop_map(|(a, b)| (a & 0xffff) | (b << 16))
}

fn int_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => any::<u32>(),
        1 => prop::sample::select(vec![0u32, 1, 0x7fff_ffff, 0x8000_0000, u32::MAX, 0xffff, 0x8000, 0x7fff, 0xff, 0x80, 0x00ff_ffff, 0x0080_0000]),
        1 => 0u32..512,
        1 => any::<u32>().prop_map(|x| x & 0x8080_8080 | 0x7f7f),
    ]
}

fn lane_vec<S: Strategy<Value = u32>>(s: S) -> impl Strategy<Value = Lanes> {
    prop::collection::vec(s, N).prop_map(lanes)
}

// -------------------------------------------------------------------------------------
// Reference helpers (plain f64 arithmetic and bit manipulation)
// -------------------------------------------------------------------------------------

fn h(x: u32) -> f64 {
    f16::from_bits(x as u16).to_f64()
}

fn is_nan16(x: u32) -> bool {
    x & 0x7c00 == 0x7c00 && x & 0x3ff != 0
}

/// f64 -> f16 bits, round to nearest even (the `half` crate's conversion).
fn to_h(x: f64) -> u32 {
    u32::from(f16::from_f64(x).to_bits())
}

fn quiet16(x: u32) -> u32 {
    x | 0x200
}

/// Both NaN, or the same bits.
fn same16(got: u32, want: u32) -> bool {
    (is_nan16(got) && is_nan16(want)) || got == want
}

/// Distance in f16 units in the last place between two finite values of the same sign
/// (or 0 and the smallest value).
fn ulps16(a: u32, b: u32) -> u32 {
    let key = |x: u32| -> i32 {
        let m = (x & 0x7fff) as i32;
        if x & 0x8000 != 0 {
            -m
        } else {
            m
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn ulps32(a: u32, b: u32) -> u32 {
    let key = |x: u32| -> i64 {
        let m = (x & 0x7fff_ffff) as i64;
        if x >> 31 != 0 {
            -m
        } else {
            m
        }
    };
    (key(a) - key(b)).unsigned_abs() as u32
}

/// `v_min_f32`/`v_max_f32` of the CDNA3 pseudocode (IEEE mode on), as bits.
fn min_max_f32(a: u32, b: u32, max: bool, ieee: bool) -> u32 {
    let snan = |x: u32| x & 0x7f80_0000 == 0x7f80_0000 && x & 0x7f_ffff != 0 && x & 0x40_0000 == 0;
    let nan = |x: u32| x & 0x7f80_0000 == 0x7f80_0000 && x & 0x7f_ffff != 0;
    if ieee && snan(a) {
        return a | 0x40_0000;
    }
    if ieee && snan(b) {
        return b | 0x40_0000;
    }
    if nan(a) {
        return b;
    }
    if nan(b) {
        return a;
    }
    if a == 0 && b == 0x8000_0000 {
        return if max { a } else { b };
    }
    if a == 0x8000_0000 && b == 0 {
        return if max { b } else { a };
    }
    let (x, y) = (f(a), f(b));
    if max {
        if (ieee && x >= y) || (!ieee && x > y) {
            a
        } else {
            b
        }
    } else if x < y {
        a
    } else {
        b
    }
}

/// `v_min_f16`/`v_max_f16` of the pseudocode, as bits.
fn min_max_f16(a: u32, b: u32, max: bool) -> u32 {
    let (a, b) = (a & 0xffff, b & 0xffff);
    let snan = |x: u32| is_nan16(x) && x & 0x200 == 0;
    if snan(a) {
        return quiet16(a);
    }
    if snan(b) {
        return quiet16(b);
    }
    if is_nan16(a) {
        return b;
    }
    if is_nan16(b) {
        return a;
    }
    if a == 0 && b == 0x8000 {
        return if max { a } else { b };
    }
    if a == 0x8000 && b == 0 {
        return if max { b } else { a };
    }
    let (x, y) = (h(a), h(b));
    if max {
        if x >= y {
            a
        } else {
            b
        }
    } else if x < y {
        a
    } else {
        b
    }
}

// -------------------------------------------------------------------------------------
// f16 unary operations
// -------------------------------------------------------------------------------------

/// Exact f16 unary references: `None` for the transcendentals (checked by [`approx16`]).
fn f16_unary_exact(op: &str, x: u32) -> Option<u32> {
    let x = x & 0xffff;
    let v = h(x);
    let keep_nan = |r: f64| if is_nan16(x) { quiet16(x) } else { to_h(r) };
    Some(match op {
        "v_floor_f16" => keep_nan(v.floor()),
        "v_ceil_f16" => keep_nan(v.ceil()),
        "v_trunc_f16" => keep_nan(v.trunc()),
        "v_rndne_f16" => keep_nan(v.round_ties_even()),
        "v_fract_f16" => {
            if v.is_infinite() {
                0x7e00
            } else if is_nan16(x) {
                quiet16(x)
            } else {
                // x - floor(x) is exact in f64; the result is capped below 1.
                to_h(v - v.floor()).min(0x3bff)
            }
        }
        "v_frexp_mant_f16" => {
            if !v.is_finite() || v == 0.0 {
                x
            } else {
                let e = v.abs().log2().floor() as i32 + 1;
                to_h(v / 2f64.powi(e))
            }
        }
        "v_frexp_exp_i16_f16" => {
            if !v.is_finite() || v == 0.0 {
                0
            } else {
                ((v.abs().log2().floor() as i32 + 1) as i16 as u16) as u32
            }
        }
        "v_cvt_u16_f16" => {
            if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 65535.0) as u32
            }
        }
        "v_cvt_i16_f16" => {
            if v.is_nan() {
                0
            } else {
                (v.trunc().clamp(-32768.0, 32767.0) as i32 as i16 as u16) as u32
            }
        }
        "v_cvt_norm_i16_f16" => {
            if v.is_nan() {
                0
            } else {
                ((v.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i32 as i16 as u16) as u32
            }
        }
        "v_cvt_norm_u16_f16" => {
            if v.is_nan() {
                0
            } else {
                (v.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u32
            }
        }
        _ => return None,
    })
}

/// The mathematically exact result of an f16 transcendental, in f64.
fn f16_transcendental(op: &str, v: f64) -> f64 {
    let turns = |t: f64| t - t.round();
    match op {
        "v_rcp_f16" => 1.0 / v,
        "v_rsq_f16" => 1.0 / v.sqrt(),
        "v_sqrt_f16" => v.sqrt(),
        "v_exp_f16" => v.exp2(),
        "v_log_f16" => v.log2(),
        "v_sin_f16" => (std::f64::consts::TAU * turns(v)).sin(),
        "v_cos_f16" => (std::f64::consts::TAU * turns(v)).cos(),
        _ => unreachable!("{op}"),
    }
}

/// The result is within 1 f16 ULP of the exact value (the ISA: "1ULP accuracy"); NaN and
/// infinite exact values must match in kind; an exact zero may come out as a zero of
/// either sign only for sin/cos of integral and half-integral revolution counts.
fn approx16(op: &str, x: u32, got: u32) -> bool {
    let v = h(x & 0xffff);
    let exact = f16_transcendental(op, v);
    if exact.is_nan() {
        return is_nan16(got);
    }
    let want = to_h(exact);
    if exact.is_infinite() || want & 0x7fff == 0x7c00 {
        return got == want || ulps16(got, want) <= 1;
    }
    if (op == "v_sin_f16" || op == "v_cos_f16") && exact.abs() < 1e-9 {
        return got & 0x7fff == 0 || ulps16(got, want) <= 1;
    }
    ulps16(got, want) <= 1
}

const F16_UNARY: [&str; 19] = [
    "v_floor_f16", "v_ceil_f16", "v_trunc_f16", "v_rndne_f16", "v_fract_f16", "v_frexp_mant_f16", "v_frexp_exp_i16_f16",
    "v_cvt_u16_f16", "v_cvt_i16_f16", "v_cvt_norm_i16_f16", "v_cvt_norm_u16_f16", "v_rcp_f16", "v_rsq_f16", "v_sqrt_f16",
    "v_exp_f16", "v_log_f16", "v_sin_f16", "v_cos_f16", "v_rcp_f16",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Every f16 unary op, e32 (the high half of the result is zero on gfx9) and e64.
    #[test]
    fn f16_unary_ops(a in lane_vec(f16_bits())) {
        for target in Target::ALL {
            for op in F16_UNARY {
                for form in ["", "_e64"] {
                    let text = format!("{op}{form} v2, v1");
                    let w = run(target, &text, &[(1, a)]);
                    for l in 0..N {
                        let got = w.vgpr[2][l];
                        prop_assert_eq!(got >> 16, 0, "{} `{}` lane {}: high half", target, text, l);
                        match f16_unary_exact(op, a[l]) {
                            Some(want) => prop_assert!(same16(got, want) && (!is_nan16(want) || got == want || op.starts_with("v_fract")),
                                "{} `{}` lane {} input {:#06x}: got {:#06x}, want {:#06x}", target, text, l, a[l] & 0xffff, got, want),
                            None => prop_assert!(approx16(op, a[l], got),
                                "{} `{}` lane {} input {:#06x}: got {:#06x}", target, text, l, a[l] & 0xffff, got),
                        }
                    }
                }
            }
        }
    }

    /// Integer to f16 conversions, exact in round-to-nearest-even.
    #[test]
    fn int16_to_f16(a in lane_vec(int_bits())) {
        for target in Target::ALL {
            let w = run(target, "v_cvt_f16_u16 v2, v1\n v_cvt_f16_i16 v3, v1", &[(1, a)]);
            check(target, "v_cvt_f16_u16", &w.vgpr[2], |l| to_h((a[l] & 0xffff) as f64), &[&a]);
            check(target, "v_cvt_f16_i16", &w.vgpr[3], |l| to_h(a[l] as u16 as i16 as f64), &[&a]);
        }
    }
}

// -------------------------------------------------------------------------------------
// f16 binary and ternary operations
// -------------------------------------------------------------------------------------

/// An finite f16 magnitude (bits 14:0) in units of 2^-48 (every f16 and every product of
/// two is an integer there).
fn units16(bits: u32) -> u128 {
    let (e, m) = ((bits >> 10) & 31, (bits & 0x3ff) as u128);
    if e == 0 {
        m << 24
    } else {
        (1024 + m) << (e + 23)
    }
}

/// Rounds the exact value `num * 2^-48` to f16 bits, to nearest even, overflowing to Inf.
/// A zero gives +0 (callers decide the sign of exact zeros).
fn round16(num: i128) -> u32 {
    if num == 0 {
        return 0;
    }
    let sign = if num < 0 { 0x8000 } else { 0 };
    let mag = num.unsigned_abs();
    if mag >= 1u128 << 64 {
        return sign | 0x7c00;
    }
    // The largest finite f16 at or below `mag`, by binary search over the bit patterns.
    let (mut lo, mut hi) = (0u32, 0x7bff);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if units16(mid) <= mag { lo = mid } else { hi = mid - 1 }
    }
    let below = lo;
    let above = below + 1; // 0x7c00 stands for the overflow threshold 2^16.
    let above_units = if above == 0x7c00 { 1u128 << 64 } else { units16(above) };
    let (d_lo, d_hi) = (mag - units16(below), above_units - mag);
    let bits = if d_lo < d_hi || (d_lo == d_hi && below & 1 == 0) { below } else { above };
    sign | bits
}

/// An f16 (finite) in units of 2^-48, signed.
fn exact16(x: u32) -> i128 {
    let m = units16(x & 0x7fff) as i128;
    if x & 0x8000 != 0 { -m } else { m }
}

/// `a * b + c` of f16 values rounded once (`fused`) or with the product rounded first,
/// IEEE signed zeros, NaN for any NaN or invalid operation.
fn muladd16(a: u32, b: u32, c: u32, fused: bool) -> u32 {
    let (a, b, c) = (a & 0xffff, b & 0xffff, c & 0xffff);
    let inf = |x: u32| x & 0x7fff == 0x7c00;
    if is_nan16(a) || is_nan16(b) || is_nan16(c) {
        return 0x7e00;
    }
    let psign = (a ^ b) & 0x8000;
    if inf(a) || inf(b) {
        if a & 0x7fff == 0 || b & 0x7fff == 0 || (inf(c) && c & 0x8000 != psign) {
            return 0x7e00;
        }
        return psign | 0x7c00;
    }
    if inf(c) {
        return c;
    }
    // The exact product in units of 2^-48 (an f16 product is a multiple of 2^-48); one that
    // does not fit is far beyond the f16 range.
    let Some(product) = exact16(a).checked_mul(exact16(b)).map(|p| p >> 48) else { return psign | 0x7c00 };
    let p_bits = if fused { None } else { Some(if product == 0 { psign } else { round16(product) }) };
    let p_exact = match p_bits {
        Some(bits) if inf(bits) => return if inf(c) && c & 0x8000 != bits & 0x8000 { 0x7e00 } else { bits },
        Some(bits) => exact16(bits),
        None => product,
    };
    let p_sign = p_bits.map_or(psign, |b| b & 0x8000);
    let sum = p_exact + exact16(c);
    if sum == 0 {
        // +0 unless both addends are -0-signed zeros (or exactly cancel: +0).
        return if p_exact == 0 && exact16(c) == 0 && p_sign != 0 && c & 0x8000 != 0 { 0x8000 } else { 0 };
    }
    round16(sum)
}

/// The gfx9 MAD: f16 denormals flushed on input, after the multiply and on output; two
/// roundings to nearest even.
fn mad16(a: u32, b: u32, c: u32) -> u32 {
    let flush = |x: u32| if x & 0x7c00 == 0 { x & 0x8000 } else { x & 0xffff };
    let (a, b, c) = (flush(a), flush(b), flush(c));
    let p = muladd16(a, b, 0x8000, false);
    flush(muladd16(flush(p), 0x3c00, c, false))
}

fn fma16(a: u32, b: u32, c: u32) -> u32 {
    muladd16(a, b, c, true)
}

fn div_fixup16(q: u32, d: u32, n: u32) -> u32 {
    let (q, d, n) = (q & 0xffff, d & 0xffff, n & 0xffff);
    let sign = (d ^ n) & 0x8000;
    let (dv, nv) = (h(d), h(n));
    if is_nan16(n) {
        quiet16(n)
    } else if is_nan16(d) {
        quiet16(d)
    } else if (dv == 0.0 && nv == 0.0) || (dv.is_infinite() && nv.is_infinite()) {
        0xfe00
    } else if dv == 0.0 || nv.is_infinite() {
        sign | 0x7c00
    } else if dv.is_infinite() || nv == 0.0 {
        sign
    } else {
        sign | (q & 0x7fff)
    }
}

fn med3_16(a: u32, b: u32, c: u32) -> u32 {
    let (a, b, c) = (a & 0xffff, b & 0xffff, c & 0xffff);
    if is_nan16(a) || is_nan16(b) || is_nan16(c) {
        return min_max_f16(min_max_f16(a, b, false), c, false);
    }
    let m = min_max_f16(min_max_f16(a, b, true), c, true);
    if h(m) == h(a) {
        min_max_f16(b, c, true)
    } else if h(m) == h(b) {
        min_max_f16(a, c, true)
    } else {
        min_max_f16(a, b, true)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn f16_two_and_three_operand_ops(a in lane_vec(f16_bits()), b in lane_vec(f16_bits()), c in lane_vec(f16_bits()), d in lane_vec(int_bits())) {
        for target in Target::ALL {
            let regs = [(1, a), (2, b), (3, c), (9, d)];
            let text = "v_subrev_f16 v4, v1, v2\n v_ldexp_f16 v5, v1, v9\n v_mad_f16 v6, v1, v2, v3\n\
                        v_mad_legacy_f16 v7, v1, v2, v3\n v_fma_legacy_f16 v8, v1, v2, v3\n\
                        v_div_fixup_f16 v10, v1, v2, v3\n v_div_fixup_legacy_f16 v11, v1, v2, v3\n\
                        v_min3_f16 v12, v1, v2, v3\n v_max3_f16 v13, v1, v2, v3\n v_med3_f16 v14, v1, v2, v3\n\
                        v_pack_b32_f16 v15, v1, v2\n v_mov_b32 v16, v9\n v_mac_f16 v16, v1, v2\n\
                        v_mov_b32 v17, v9\n v_mad_f16 v17, v1, v2, v3 op_sel:[0,0,0,1]\n\
                        v_madak_f16 v18, v1, v2, 0x3c00\n v_madmk_f16 v19, v1, 0x4000, v2";
            let w = run(target, text, &regs);
            for l in 0..N {
                let (x, y, z, e) = (a[l] & 0xffff, b[l] & 0xffff, c[l] & 0xffff, d[l]);
                let lo = |got: u32| got & 0xffff;
                let exact = |got: u32, want: u32, what: &str| {
                    assert!(same16(got, want), "{target} {what} lane {l}: {x:#06x} {y:#06x} {z:#06x}: got {got:#06x}, want {want:#06x}");
                };
                let sub = if is_nan16(x) || is_nan16(y) { 0x7e00 } else if h(y) - h(x) == 0.0 { if h(y).is_sign_negative() && !h(x).is_sign_negative() { 0x8000 } else { 0 } } else { to_h(h(y) - h(x)) };
                exact(w.vgpr[4][l], sub, "v_subrev_f16");
                let n = (e as u16 as i16) as i32;
                let ld = if is_nan16(x) { quiet16(x) } else { to_h(h(x) * 2f64.powi(n.clamp(-100, 100))) };
                exact(w.vgpr[5][l], ld, "v_ldexp_f16");
                // v_mad_f16 keeps the high half of the destination (zero here: v6 was 0).
                exact(w.vgpr[6][l], mad16(x, y, z), "v_mad_f16");
                exact(w.vgpr[7][l], mad16(x, y, z), "v_mad_legacy_f16");
                exact(w.vgpr[8][l], fma16(x, y, z), "v_fma_legacy_f16");
                exact(w.vgpr[10][l], div_fixup16(x, y, z), "v_div_fixup_f16");
                exact(w.vgpr[11][l], div_fixup16(x, y, z), "v_div_fixup_legacy_f16");
                assert_eq!(w.vgpr[12][l], min_max_f16(min_max_f16(x, y, false), z, false), "{target} v_min3_f16 lane {l}");
                assert_eq!(w.vgpr[13][l], min_max_f16(min_max_f16(x, y, true), z, true), "{target} v_max3_f16 lane {l}");
                assert_eq!(w.vgpr[14][l], med3_16(x, y, z), "{target} v_med3_f16 lane {l}");
                assert_eq!(w.vgpr[15][l], x | (y << 16), "{target} v_pack_b32_f16 lane {l}");
                // v_mac_f16 accumulates the low half of its destination and zeroes the high.
                exact(w.vgpr[16][l], mad16(x, y, e & 0xffff), "v_mac_f16");
                // op_sel[3]: the result goes to the high half, the low half is kept.
                assert_eq!(lo(w.vgpr[17][l]), e & 0xffff, "{target} v_mad_f16 op_sel dst keeps the low half, lane {l}");
                exact(w.vgpr[17][l] >> 16, mad16(x, y, z), "v_mad_f16 op_sel:[0,0,0,1]");
                exact(w.vgpr[18][l], mad16(x, y, 0x3c00), "v_madak_f16");
                exact(w.vgpr[19][l], mad16(x, 0x4000, y), "v_madmk_f16");
            }
        }
    }
}

// -------------------------------------------------------------------------------------
// f32 operations
// -------------------------------------------------------------------------------------

fn med3_32(a: u32, b: u32, c: u32, ieee: bool) -> u32 {
    let nan = |x: u32| f(x).is_nan();
    let mm = |x, y, m| min_max_f32(x, y, m, ieee);
    if nan(a) || nan(b) || nan(c) {
        return mm(mm(a, b, false), c, false);
    }
    let m = mm(mm(a, b, true), c, true);
    if f(m) == f(a) {
        mm(b, c, true)
    } else if f(m) == f(b) {
        mm(a, c, true)
    } else {
        mm(a, b, true)
    }
}

/// Cube map references from the pseudocode of V_CUBEID/SC/TC/MA_F32.
fn cube(op: &str, x: f32, y: f32, z: f32) -> f32 {
    let zmaj = z.abs() >= x.abs() && z.abs() >= y.abs();
    let ymaj = !zmaj && y.abs() >= x.abs();
    match op {
        "id" => {
            if zmaj {
                if z < 0.0 { 5.0 } else { 4.0 }
            } else if ymaj {
                if y < 0.0 { 3.0 } else { 2.0 }
            } else if x < 0.0 {
                1.0
            } else {
                0.0
            }
        }
        "sc" => {
            if zmaj {
                if z < 0.0 { -x } else { x }
            } else if ymaj {
                x
            } else if x < 0.0 {
                z
            } else {
                -z
            }
        }
        "tc" => {
            if zmaj {
                -y
            } else if ymaj {
                if y < 0.0 { -z } else { z }
            } else {
                -y
            }
        }
        _ => 2.0 * if zmaj { z } else if ymaj { y } else { x },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn f32_three_operand_and_legacy_ops(a in lane_vec(f32_bits()), b in lane_vec(f32_bits()), c in lane_vec(f32_bits())) {
        for target in Target::ALL {
            let regs = [(1, a), (2, b), (3, c)];
            let text = "v_min3_f32 v4, v1, v2, v3\n v_max3_f32 v5, v1, v2, v3\n v_med3_f32 v6, v1, v2, v3\n\
                        v_mul_legacy_f32 v7, v1, v2\n v_cubeid_f32 v8, v1, v2, v3\n v_cubesc_f32 v9, v1, v2, v3\n\
                        v_cubetc_f32 v10, v1, v2, v3\n v_cubema_f32 v11, v1, v2, v3";
            let w = run(target, text, &regs);
            for l in 0..N {
                let (x, y, z) = (a[l], b[l], c[l]);
                let mm = |p, q, m| min_max_f32(p, q, m, true);
                assert_eq!(w.vgpr[4][l], mm(mm(x, y, false), z, false), "{target} v_min3_f32 lane {l}: {x:#x} {y:#x} {z:#x}");
                assert_eq!(w.vgpr[5][l], mm(mm(x, y, true), z, true), "{target} v_max3_f32 lane {l}: {x:#x} {y:#x} {z:#x}");
                assert_eq!(w.vgpr[6][l], med3_32(x, y, z, true), "{target} v_med3_f32 lane {l}: {x:#x} {y:#x} {z:#x}");
                let ml = if f(x) == 0.0 || f(y) == 0.0 { 0 } else { (f(x) * f(y)).to_bits() };
                let got = w.vgpr[7][l];
                assert!(got == ml || (f(got).is_nan() && f(ml).is_nan()), "{target} v_mul_legacy_f32 lane {l}: {x:#x} {y:#x}: {got:#x} vs {ml:#x}");
                for (k, op) in ["id", "sc", "tc", "ma"].into_iter().enumerate() {
                    let want = cube(op, f(x), f(y), f(z));
                    let got = f(w.vgpr[8 + k][l]);
                    assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{target} v_cube{op}_f32 lane {l}: {x:#x} {y:#x} {z:#x}: {got:?} vs {want:?}");
                }
            }
            // Non-IEEE mode: signalling NaNs are ignored like quiet ones.
            let w = try_run(target, "v_min3_f32 v4, v1, v2, v3\n v_med3_f32 v6, v1, v2, v3", &regs, MODE & !(1 << 9), u64::MAX).unwrap();
            check(target, "v_min3_f32 (non-IEEE)", &w.vgpr[4], |l| min_max_f32(min_max_f32(a[l], b[l], false, false), c[l], false, false), &[&a, &b, &c]);
            check(target, "v_med3_f32 (non-IEEE)", &w.vgpr[6], |l| med3_32(a[l], b[l], c[l], false), &[&a, &b, &c]);
        }
    }

    /// gfx90a's MAD family: unfused, two roundings, denormals flushed; v_mad_legacy_f32 adds
    /// the DX9 rule that a zero factor gives a +0 product.
    #[test]
    fn gfx90a_mad_f32(a in lane_vec(f32_bits()), b in lane_vec(f32_bits()), c in lane_vec(f32_bits())) {
        let flush = |x: u32| if x & 0x7f80_0000 == 0 { x & 0x8000_0000 } else { x };
        let mad = |x: u32, y: u32, z: u32, legacy: bool| -> u32 {
            let (x, y, z) = (f(flush(x)), f(flush(y)), f(flush(z)));
            let p = if legacy && (x == 0.0 || y == 0.0) { 0.0 } else { f(flush((x * y).to_bits())) };
            flush((p + z).to_bits())
        };
        let target = Target::Gfx90a;
        let text = "v_mad_f32 v4, v1, v2, v3\n v_mad_legacy_f32 v5, v1, v2, v3\n v_mov_b32 v6, v3\n v_mac_f32 v6, v1, v2";
        let w = run(target, text, &[(1, a), (2, b), (3, c)]);
        for (r, legacy) in [(4, false), (5, true), (6, false)] {
            for l in 0..N {
                let want = mad(a[l], b[l], c[l], legacy);
                let got = w.vgpr[r][l];
                prop_assert!(got == want || (f(got).is_nan() && f(want).is_nan()), "v{} lane {}: {:#x} {:#x} {:#x}: {:#x} vs {:#x}", r, l, a[l], b[l], c[l], got, want);
            }
        }
    }

    /// sin/cos (argument in revolutions) within 1 ULP; exact zeros, ones and specials.
    #[test]
    fn f32_sin_cos(a in lane_vec(f32_bits())) {
        for target in Target::ALL {
            let w = run(target, "v_sin_f32 v2, v1\n v_cos_f32 v3, v1", &[(1, a)]);
            for l in 0..N {
                let x = f(a[l]);
                for (r, cosine) in [(2, false), (3, true)] {
                    let got = w.vgpr[r][l];
                    if !x.is_finite() {
                        prop_assert!(f(got).is_nan());
                        continue;
                    }
                    let t = x as f64 - (x as f64).round();
                    let exact = if cosine { (std::f64::consts::TAU * t).cos() } else { (std::f64::consts::TAU * t).sin() };
                    let want = (exact as f32).to_bits();
                    let tiny = exact.abs() < 1e-12;
                    prop_assert!(ulps32(got, want) <= 1 || (tiny && f(got) == 0.0), "{} {} lane {}: {:#x}: {:#x} vs {:#x}", target, r, l, a[l], got, want);
                }
            }
        }
    }
}

/// The ISA's functional examples of the transcendentals.
#[test]
fn transcendental_examples_of_the_isa() {
    let cases: &[(&str, u32, u32)] = &[
        ("v_sin_f32", 0xff80_0000, 0xffc0_0000),
        ("v_sin_f32", 0xff7f_ffff, 0x0000_0000),
        ("v_sin_f32", 0x8000_0000, 0x8000_0000),
        ("v_sin_f32", 0x3e80_0000, 0x3f80_0000),
        ("v_cos_f32", 0xff7f_ffff, 0x3f80_0000),
        ("v_cos_f32", 0x8000_0000, 0x3f80_0000),
        ("v_cos_f32", 0x3e80_0000, 0x0000_0000),
        ("v_sin_f16", 0xfbff, 0x0000),
        ("v_sin_f16", 0x8000, 0x8000),
        ("v_sin_f16", 0x3400, 0x3c00),
        ("v_cos_f16", 0xfbff, 0x3c00),
        ("v_cos_f16", 0x3400, 0x0000),
        ("v_exp_f16", 0xfc00, 0x0000),
        ("v_exp_f16", 0x8000, 0x3c00),
        ("v_log_f16", 0xbc00, 0xfe00),
        ("v_log_f16", 0x8000, 0xfc00),
        ("v_rcp_f16", 0xc000, 0xb800),
        ("v_rsq_f16", 0x4400, 0x3800),
        ("v_sqrt_f16", 0x8000, 0x8000),
        ("v_ffbh_i32", 0x0fff_ffff, 4),
        ("v_ffbh_i32", 0xffff_0000, 16),
        ("v_ffbh_i32", 0xffff_ffff, u32::MAX),
    ];
    for target in Target::ALL {
        for &(op, x, want) in cases {
            let w = run(target, &format!("{op} v2, v1"), &[(1, [x; N])]);
            assert_eq!(w.vgpr[2][0], want, "{target} {op}({x:#x})");
        }
    }
}

// -------------------------------------------------------------------------------------
// Conversions
// -------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn f32_conversions(a in lane_vec(f32_bits()), b in lane_vec(int_bits()), c in lane_vec(int_bits())) {
        let sat = |v: f64| -> u32 {
            if v.is_nan() { 0 } else { v.clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32 }
        };
        for target in Target::ALL {
            let text = "v_cvt_rpi_i32_f32 v4, v1\n v_cvt_flr_i32_f32 v5, v1\n v_cvt_off_f32_i4 v6, v2\n\
                        v_cvt_f32_ubyte1 v7, v2\n v_cvt_f32_ubyte2 v8, v2\n v_cvt_f32_ubyte3 v9, v2\n\
                        v_cvt_pk_u8_f32 v10, v1, v2, v3\n v_mov_b32 v11, v3\n v_cvt_pkaccum_u8_f32 v11, v1, v2\n\
                        v_cvt_pknorm_i16_f32 v12, v1, v1\n v_cvt_pknorm_u16_f32 v13, v1, v1";
            let w = run(target, text, &[(1, a), (2, b), (3, c)]);
            for l in 0..N {
                let x = f(a[l]);
                // floor(x + 0.5) with the add rounded in f32, as the pseudocode writes it.
                prop_assert_eq!(w.vgpr[4][l], sat(((x + 0.5f32) as f64).floor()), "rpi lane {} {:#x}", l, a[l]);
                prop_assert_eq!(w.vgpr[5][l], sat((x as f64).floor()), "flr lane {} {:#x}", l, a[l]);
                let nib = b[l] & 0xf;
                let off = (if nib >= 8 { nib as i32 - 16 } else { nib as i32 }) as f32 * 0.0625;
                prop_assert_eq!(w.vgpr[6][l], off.to_bits());
                for k in 1..4 {
                    prop_assert_eq!(w.vgpr[6 + k][l], (((b[l] >> (8 * k)) & 0xff) as f32).to_bits());
                }
                let u8v = if x.is_nan() { 0 } else { x.round_ties_even().clamp(0.0, 255.0) as u32 };
                let shift = 8 * (b[l] & 3);
                let packed = (c[l] & !(0xff << shift)) | (u8v << shift);
                prop_assert_eq!(w.vgpr[10][l], packed, "cvt_pk_u8 lane {}", l);
                prop_assert_eq!(w.vgpr[11][l], packed, "cvt_pkaccum lane {}", l);
                // Scaled exactly, then rounded once (the f16 forms' reference does the same).
                let sn = if x.is_nan() { 0 } else { (f64::from(x.clamp(-1.0, 1.0)) * 32767.0).round_ties_even() as i32 as u16 as u32 };
                prop_assert_eq!(w.vgpr[12][l], sn | (sn << 16));
                let un = if x.is_nan() { 0 } else { (f64::from(x.clamp(0.0, 1.0)) * 65535.0).round_ties_even() as u32 };
                prop_assert_eq!(w.vgpr[13][l], un | (un << 16));
            }
        }
    }

    #[test]
    fn packed_integer_conversions(a in lane_vec(int_bits()), b in lane_vec(int_bits()), h1 in lane_vec(f16_bits()), h2 in lane_vec(f16_bits())) {
        for target in Target::ALL {
            let text = "v_cvt_pk_u16_u32 v4, v1, v2\n v_cvt_pk_i16_i32 v5, v1, v2\n v_sat_pk_u8_i16 v6, v1\n\
                        v_cvt_pknorm_i16_f16 v7, v8, v9\n v_cvt_pknorm_u16_f16 v10, v8, v9";
            let w = run(target, text, &[(1, a), (2, b), (8, h1), (9, h2)]);
            for l in 0..N {
                let u = |v: u32| v.min(0xffff);
                let i = |v: u32| (v as i32).clamp(-32768, 32767) as u16 as u32;
                prop_assert_eq!(w.vgpr[4][l], u(a[l]) | (u(b[l]) << 16));
                prop_assert_eq!(w.vgpr[5][l], i(a[l]) | (i(b[l]) << 16));
                let s8 = |v: u32| (v as u16 as i16).clamp(0, 255) as u32;
                prop_assert_eq!(w.vgpr[6][l], s8(a[l]) | (s8(a[l] >> 16) << 8));
                let sn = |x: u32| f16_unary_exact("v_cvt_norm_i16_f16", x).unwrap();
                let un = |x: u32| f16_unary_exact("v_cvt_norm_u16_f16", x).unwrap();
                prop_assert_eq!(w.vgpr[7][l], sn(h1[l]) | (sn(h2[l]) << 16));
                prop_assert_eq!(w.vgpr[10][l], un(h1[l]) | (un(h2[l]) << 16));
            }
        }
    }
}

/// `v_cvt_f32_bf16` (gfx950) widens exactly; `v_cvt_pk_f32_fp8/bf8` decode two bytes of
/// the selected word (FNUZ on gfx942, OCP on gfx950), checked against a decoder written
/// from the format definitions.
#[test]
fn bf16_and_fp8_widening() {
    let w = run(Target::Gfx950, "v_cvt_f32_bf16 v2, v1\n v_cvt_f32_bf16_sdwa v3, v1 dst_sel:DWORD src0_sel:WORD_1", &[(1, std::array::from_fn(|l| 0x3f80_0000u32.wrapping_add(l as u32 * 0x0101_0101)))]);
    for l in 0..N {
        let x = 0x3f80_0000u32.wrapping_add(l as u32 * 0x0101_0101);
        assert_eq!(w.vgpr[2][l], x << 16);
        assert_eq!(w.vgpr[3][l], x & 0xffff_0000);
    }
    // fp8 byte -> value, from E4M3 / E5M2 and their FNUZ variants (bias +1, 0x80 is NaN).
    let decode = |b: u8, e5: bool, fnuz: bool| -> f32 {
        let (mbits, bias) = if e5 { (2, if fnuz { 16 } else { 15 }) } else { (3, if fnuz { 8 } else { 7 }) };
        let sign = if b & 0x80 != 0 { -1.0f64 } else { 1.0 };
        let e = ((b & 0x7f) >> mbits) as i32;
        let m = (b & ((1 << mbits) - 1)) as f64;
        if fnuz && b == 0x80 {
            return f32::NAN;
        }
        if !fnuz {
            if e5 && e == 31 {
                return if m == 0.0 { (sign * f64::INFINITY) as f32 } else { f32::NAN };
            }
            if !e5 && b & 0x7f == 0x7f {
                return f32::NAN;
            }
        }
        let v = if e == 0 { m / (1 << mbits) as f64 * 2f64.powi(1 - bias) } else { (1.0 + m / (1 << mbits) as f64) * 2f64.powi(e - bias) };
        (sign * v) as f32
    };
    for target in [Target::Gfx942, Target::Gfx950] {
        let fnuz = target == Target::Gfx942;
        for base in (0..65536u32).step_by(64) {
            let src: Lanes = std::array::from_fn(|l| (base + l as u32) | (((base + l as u32) ^ 0x5a5a) << 16));
            let text = "v_cvt_pk_f32_fp8 v[2:3], v1\n v_cvt_pk_f32_bf8 v[4:5], v1\n v_cvt_pk_f32_fp8_sdwa v[6:7], v1 src0_sel:WORD_1";
            let w = run(target, text, &[(1, src)]);
            for l in 0..N {
                for (r, e5) in [(2, false), (4, true), (6, false)] {
                    let word = if r == 6 { src[l] >> 16 } else { src[l] & 0xffff };
                    for k in 0..2 {
                        let want = decode((word >> (8 * k)) as u8, e5, fnuz);
                        let got = f(w.vgpr[r + k][l]);
                        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{target} v{} byte {k} of {word:#06x}: {got} vs {want}", r + k);
                    }
                }
            }
        }
    }
}

// -------------------------------------------------------------------------------------
// Integer operations
// -------------------------------------------------------------------------------------

fn absdiff(a: u32, b: u32) -> u32 {
    a.abs_diff(b)
}

fn sad8(a: u32, b: u32, c: u32, masked: bool) -> u32 {
    (0..4).fold(c, |acc, k| {
        let (x, y) = ((a >> (8 * k)) & 0xff, (b >> (8 * k)) & 0xff);
        if masked && y == 0 { acc } else { acc.wrapping_add(absdiff(x, y)) }
    })
}

/// The shader engine mask of `v_screen_partition_4se_b32` derived from the ISA's
/// description (not its table): the SE of the 32-pixel tile (x, y) is
/// `{x[5] ^ y[6], y[5] ^ x[6]}`; the select holds bits 6:5 of x_min, y_min, x_max, y_max;
/// a range whose end is below its start wraps (and so spans at least three tiles).
fn screen_partition(sel: u32) -> u32 {
    let (x0, y0, x1, y1) = ((sel >> 6) & 3, (sel >> 4) & 3, (sel >> 2) & 3, sel & 3);
    let span = |a: u32, b: u32| -> Vec<u32> {
        let mut v = vec![a];
        let mut t = a;
        while t != b {
            t = (t + 1) & 3;
            v.push(t);
        }
        v
    };
    let mut mask = 0;
    for x in span(x0, x1) {
        for y in span(y0, y1) {
            let se = (((x & 1) ^ (y >> 1)) << 1) | ((y & 1) ^ (x >> 1));
            mask |= 1 << se;
        }
    }
    mask
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn integer_ops(a in lane_vec(int_bits()), b in lane_vec(int_bits()), c in lane_vec(int_bits()), d in lane_vec(int_bits())) {
        for target in Target::ALL {
            let text = "v_sad_u8 v4, v1, v2, v3\n v_sad_hi_u8 v5, v1, v2, v3\n v_sad_u16 v6, v1, v2, v3\n\
                        v_sad_u32 v7, v1, v2, v3\n v_msad_u8 v8, v1, v2, v3\n v_lerp_u8 v9, v1, v2, v3\n\
                        v_xad_u32 v10, v1, v2, v3\n v_mul_hi_i32_i24 v11, v1, v2\n v_ffbh_i32 v12, v1\n\
                        v_add_i32 v13, v1, v2 clamp\n v_sub_i32 v14, v1, v2 clamp\n v_add_i32 v15, v1, v2\n\
                        v_screen_partition_4se_b32 v16, v1\n\
                        v_qsad_pk_u16_u8 v[18:19], v[30:31], v3, v[20:21]\n v_mqsad_pk_u16_u8 v[28:29], v[30:31], v3, v[20:21]\n\
                        v_mqsad_u32_u8 v[24:27], v[30:31], v3, v[20:23]";
            let w = run(target, text, &[(1, a), (2, b), (3, c), (20, d), (21, c), (22, a), (23, b), (30, a), (31, b)]);
            for l in 0..N {
                let (x, y, z) = (a[l], b[l], c[l]);
                prop_assert_eq!(w.vgpr[4][l], sad8(x, y, z, false));
                prop_assert_eq!(w.vgpr[5][l], (sad8(x, y, 0, false) << 16).wrapping_add(z));
                prop_assert_eq!(w.vgpr[6][l], z.wrapping_add(absdiff(x & 0xffff, y & 0xffff)).wrapping_add(absdiff(x >> 16, y >> 16)));
                prop_assert_eq!(w.vgpr[7][l], absdiff(x, y).wrapping_add(z));
                prop_assert_eq!(w.vgpr[8][l], sad8(x, y, z, true));
                let lerp = (0..4).fold(0, |acc, k| acc | ((((x >> (8 * k)) & 0xff) + ((y >> (8 * k)) & 0xff) + ((z >> (8 * k)) & 1)) >> 1) << (8 * k));
                prop_assert_eq!(w.vgpr[9][l], lerp);
                prop_assert_eq!(w.vgpr[10][l], (x ^ y).wrapping_add(z));
                let s24 = |v: u32| (((v << 8) as i32) >> 8) as i64;
                prop_assert_eq!(w.vgpr[11][l], ((s24(x) * s24(y)) >> 32) as u32);
                let ffbh = (1..32).find(|&i| (x >> (31 - i)) & 1 != x >> 31).unwrap_or(u32::MAX);
                prop_assert_eq!(w.vgpr[12][l], ffbh);
                let sum = x as i32 as i64 + y as i32 as i64;
                prop_assert_eq!(w.vgpr[13][l], sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32);
                let diff = x as i32 as i64 - y as i32 as i64;
                prop_assert_eq!(w.vgpr[14][l], diff.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32);
                prop_assert_eq!(w.vgpr[15][l], x.wrapping_add(y));
                prop_assert_eq!(w.vgpr[16][l], screen_partition(x & 0xff), "screen partition {:#x}", x & 0xff);
                // Quad SADs over the byte windows of the 64-bit S0 = {b, a}.
                let s0 = x as u64 | ((y as u64) << 32);
                let acc16 = d[l] as u64 | ((z as u64) << 32);
                for (r, masked) in [(18, false), (28, true)] {
                    let mut want = 0u64;
                    for k in 0..4 {
                        let win = (s0 >> (8 * k)) as u32;
                        want |= ((sad8(win, z, ((acc16 >> (16 * k)) & 0xffff) as u32, masked) & 0xffff) as u64) << (16 * k);
                    }
                    let got = w.vgpr[r][l] as u64 | ((w.vgpr[r + 1][l] as u64) << 32);
                    prop_assert_eq!(got, want, "{} qsad masked={} lane {}", target, masked, l);
                }
                let acc32 = [d[l], z, x, y];
                for k in 0..4 {
                    prop_assert_eq!(w.vgpr[24 + k][l], sad8((s0 >> (8 * k)) as u32, z, acc32[k], true), "mqsad_u32 dword {}", k);
                }
            }
        }
    }

    /// gfx950: v_prng_b32, v_bitop3_b16, v_ashr_pk_{i8,u8}_i32, v_minimum3/maximum3_f32.
    #[test]
    fn gfx950_ops(a in lane_vec(int_bits()), b in lane_vec(int_bits()), c in lane_vec(int_bits()), t in 0u32..256, fa in lane_vec(f32_bits()), fb in lane_vec(f32_bits()), fc in lane_vec(f32_bits())) {
        let target = Target::Gfx950;
        let text = format!("v_prng_b32 v4, v1\n v_mov_b32 v5, v3\n v_bitop3_b16 v5, v1, v2, v3 bitop3:{t:#x}\n\
                            v_mov_b32 v6, v3\n v_ashr_pk_i8_i32 v6, v1, v2, v3\n v_mov_b32 v7, v3\n v_ashr_pk_u8_i32 v7, v1, v2, v3\n\
                            v_minimum3_f32 v11, v8, v9, v10\n v_maximum3_f32 v12, v8, v9, v10");
        let w = run(target, &text, &[(1, a), (2, b), (3, c), (8, fa), (9, fb), (10, fc)]);
        let nan = |x: u32| f(x).is_nan();
        let minimum = |p: u32, q: u32, max: bool| -> u32 {
            if nan(p) { return p | 0x40_0000; }
            if nan(q) { return q | 0x40_0000; }
            if f(p) == 0.0 && f(q) == 0.0 {
                let neg = |v: u32| v >> 31 != 0;
                return if max { if neg(p) { q } else { p } } else if neg(p) { p } else { q };
            }
            if (f(p) < f(q)) != max { p } else { q }
        };
        for l in 0..N {
            let (x, y, z) = (a[l], b[l], c[l]);
            prop_assert_eq!(w.vgpr[4][l], (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 });
            let mut bits = 0u32;
            for i in 0..16 {
                let idx = ((x >> i) & 1) << 2 | ((y >> i) & 1) << 1 | ((z >> i) & 1);
                bits |= ((t >> idx) & 1) << i;
            }
            prop_assert_eq!(w.vgpr[5][l], (z & 0xffff_0000) | bits, "bitop3_b16 {:#x}", t);
            let sh = z & 31;
            let si = |v: u32| ((v as i32) >> sh).clamp(-128, 127) as u32 & 0xff;
            let su = |v: u32| ((v as i32) >> sh).clamp(0, 255) as u32;
            prop_assert_eq!(w.vgpr[6][l], (z & 0xffff_0000) | si(x) | (si(y) << 8));
            prop_assert_eq!(w.vgpr[7][l], (z & 0xffff_0000) | su(x) | (su(y) << 8));
            prop_assert_eq!(w.vgpr[11][l], minimum(minimum(fa[l], fb[l], false), fc[l], false));
            prop_assert_eq!(w.vgpr[12][l], minimum(minimum(fa[l], fb[l], true), fc[l], true));
        }
    }
}

// -------------------------------------------------------------------------------------
// VOP3P: packed 16-bit integer and f16 math, dot products, fma_mix
// -------------------------------------------------------------------------------------

fn half_of(v: u32, hi: bool) -> u32 {
    if hi { v >> 16 } else { v & 0xffff }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn packed_integer_ops(a in lane_vec(int_bits()), b in lane_vec(int_bits()), c in lane_vec(int_bits()), sel in 0u32..4, sel_hi in 0u32..4, clamp in any::<bool>()) {
        let ops = ["v_pk_add_i16", "v_pk_sub_i16", "v_pk_max_i16", "v_pk_min_i16", "v_pk_max_u16", "v_pk_min_u16", "v_pk_ashrrev_i16", "v_pk_mad_i16", "v_pk_mad_u16"];
        for target in Target::ALL {
            for op in ops {
                let three = op.contains("mad");
                let srcs = if three { "v1, v2, v3" } else { "v1, v2" };
                let cl = if clamp && !op.contains("ashr") && !op.contains("max") && !op.contains("min") { " clamp" } else { "" };
                let sel_list = |s: u32| if three { format!("[{},{},0]", s & 1, s >> 1) } else { format!("[{},{}]", s & 1, s >> 1) };
                let hi_list = |s: u32| if three { format!("[{},{},1]", s & 1, s >> 1) } else { format!("[{},{}]", s & 1, s >> 1) };
                let text = format!("{op} v4, {srcs} op_sel:{} op_sel_hi:{}{cl}", sel_list(sel), hi_list(sel_hi));
                let w = run(target, &text, &[(1, a), (2, b), (3, c)]);
                for l in 0..N {
                    let lane = |hi: bool| -> u32 {
                        let s = if hi { sel_hi } else { sel };
                        let x = half_of(a[l], s & 1 != 0);
                        let y = half_of(b[l], s & 2 != 0);
                        let z = half_of(c[l], hi);
                        let (xi, yi, zi) = (x as u16 as i16 as i64, y as u16 as i16 as i64, z as u16 as i16 as i64);
                        let sat_i = |v: i64| if cl.is_empty() { v as u16 as u32 } else { v.clamp(-32768, 32767) as u16 as u32 };
                        let sat_u = |v: i64| if cl.is_empty() { v as u16 as u32 } else { v.clamp(0, 65535) as u32 };
                        match op {
                            "v_pk_add_i16" => sat_i(xi + yi),
                            "v_pk_sub_i16" => sat_i(xi - yi),
                            "v_pk_max_i16" => xi.max(yi) as u16 as u32,
                            "v_pk_min_i16" => xi.min(yi) as u16 as u32,
                            "v_pk_max_u16" => x.max(y),
                            "v_pk_min_u16" => x.min(y),
                            "v_pk_ashrrev_i16" => ((yi as i16) >> (x & 15)) as u16 as u32,
                            "v_pk_mad_i16" => sat_i(xi * yi + zi),
                            _ => sat_u(x as i64 * y as i64 + z as i64),
                        }
                    };
                    prop_assert_eq!(w.vgpr[4][l], lane(false) | (lane(true) << 16), "{} `{}` lane {}: {:#x} {:#x} {:#x}", target, text, l, a[l], b[l], c[l]);
                }
            }
        }
    }

    #[test]
    fn packed_f16_min_max_and_fmac(a in lane_vec(pk_f16_bits()), b in lane_vec(pk_f16_bits()), c in lane_vec(pk_f16_bits())) {
        for target in Target::ALL {
            let text = "v_pk_min_f16 v4, v1, v2\n v_pk_max_f16 v5, v1, v2\n v_pk_max_f16 v6, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]\n\
                        v_mov_b32 v7, v3\n v_pk_fmac_f16 v7, v1, v2";
            let w = run(target, text, &[(1, a), (2, b), (3, c)]);
            for l in 0..N {
                let (x, y, z) = (a[l], b[l], c[l]);
                let pk = |lo: u32, hi: u32| lo | (hi << 16);
                prop_assert_eq!(w.vgpr[4][l], pk(min_max_f16(x, y, false), min_max_f16(x >> 16, y >> 16, false)));
                prop_assert_eq!(w.vgpr[5][l], pk(min_max_f16(x, y, true), min_max_f16(x >> 16, y >> 16, true)));
                prop_assert_eq!(w.vgpr[6][l], pk(min_max_f16(x >> 16, y, true), min_max_f16(x, y >> 16, true)));
                let got = w.vgpr[7][l];
                let (lo, hi) = (fma16(x & 0xffff, y & 0xffff, z & 0xffff), fma16(x >> 16, y >> 16, z >> 16));
                prop_assert!(same16(got & 0xffff, lo) && same16(got >> 16, hi), "{} pk_fmac lane {}: {:#x} {:#x} {:#x}: {:#x}", target, l, x, y, z, got);
            }
        }
    }

    #[test]
    fn dot_products(a in lane_vec(int_bits()), b in lane_vec(int_bits()), c in lane_vec(int_bits()), clamp in any::<bool>()) {
        let cl = if clamp { " clamp" } else { "" };
        for target in Target::ALL {
            let mut text = format!("v_dot2_i32_i16 v4, v1, v2, v3{cl}\n v_dot2_u32_u16 v5, v1, v2, v3{cl}\n v_mov_b32 v6, v3\n v_dot8c_i32_i4 v6, v1, v2");
            if target != Target::Gfx950 {
                text += &format!("\n v_dot4_i32_i8 v7, v1, v2, v3{cl}\n v_dot4_u32_u8 v8, v1, v2, v3{cl}\n v_dot8_i32_i4 v9, v1, v2, v3{cl}\n v_dot8_u32_u4 v10, v1, v2, v3{cl}");
            }
            let w = run(target, &text, &[(1, a), (2, b), (3, c)]);
            for l in 0..N {
                let (x, y, z) = (a[l], b[l], c[l]);
                let fin_i = |v: i64| if clamp { v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 } else { v as u32 };
                let fin_u = |v: i64| if clamp { v.min(u32::MAX as i64) as u32 } else { v as u32 };
                let dot = |bits: u32, signed: bool| -> i64 {
                    let n = 32 / bits;
                    (0..n).map(|k| {
                        let field = |v: u32| -> i64 {
                            let raw = (v >> (k * bits)) & ((1u64 << bits) - 1) as u32;
                            if signed { ((raw << (32 - bits)) as i32 >> (32 - bits)) as i64 } else { raw as i64 }
                        };
                        field(x) * field(y)
                    }).sum()
                };
                prop_assert_eq!(w.vgpr[4][l], fin_i(z as i32 as i64 + dot(16, true)));
                prop_assert_eq!(w.vgpr[5][l], fin_u(z as i64 + dot(16, false)));
                prop_assert_eq!(w.vgpr[6][l], (z as i32 as i64 + dot(4, true)) as u32);
                if target != Target::Gfx950 {
                    prop_assert_eq!(w.vgpr[7][l], fin_i(z as i32 as i64 + dot(8, true)));
                    prop_assert_eq!(w.vgpr[8][l], fin_u(z as i64 + dot(8, false)));
                    prop_assert_eq!(w.vgpr[9][l], fin_i(z as i32 as i64 + dot(4, true)));
                    prop_assert_eq!(w.vgpr[10][l], fin_u(z as i64 + dot(4, false)));
                }
            }
        }
    }

    /// v_fma_mix_f32 / mixlo / mixhi: sources selected per op_sel_hi/op_sel, neg_hi as abs,
    /// one fused rounding to f32, then f16 for mixlo/mixhi (which keep the other half).
    #[test]
    fn fma_mix(a in lane_vec(f32_bits()), b in lane_vec(pk_f16_bits()), c in lane_vec(f32_bits()), d in lane_vec(int_bits())) {
        for target in Target::ALL {
            let text = "v_fma_mix_f32 v4, v1, v2, v3 op_sel:[0,1,0] op_sel_hi:[0,1,0]\n\
                        v_fma_mix_f32 v5, -v1, |v2|, v3 op_sel_hi:[0,1,0]\n\
                        v_mov_b32 v6, v9\n v_fma_mixlo_f16 v6, v1, v2, v3 op_sel_hi:[0,1,0]\n\
                        v_mov_b32 v7, v9\n v_fma_mixhi_f16 v7, v1, v2, v3 op_sel_hi:[0,1,0]";
            let w = run(target, text, &[(1, a), (2, b), (3, c), (9, d)]);
            for l in 0..N {
                let exact_fma = |x: f32, y: f32, z: f32| -> f32 { x.mul_add(y, z) };
                let y_hi = h(b[l] >> 16) as f32;
                let y_lo = h(b[l] & 0xffff) as f32;
                let r4 = exact_fma(f(a[l]), y_hi, f(c[l]));
                let r5 = exact_fma(-f(a[l]), y_lo.abs(), f(c[l]));
                let same = |got: u32, want: f32| got == want.to_bits() || (f(got).is_nan() && want.is_nan());
                prop_assert!(same(w.vgpr[4][l], r4), "{} mix_f32 lane {}", target, l);
                prop_assert!(same(w.vgpr[5][l], r5), "{} mix_f32 neg/abs lane {}", target, l);
                let r6 = exact_fma(f(a[l]), y_lo, f(c[l]));
                let h6 = u32::from(f16::from_f32(r6).to_bits());
                prop_assert!(same16(w.vgpr[6][l] & 0xffff, h6) && w.vgpr[6][l] >> 16 == d[l] >> 16, "{} mixlo lane {}", target, l);
                prop_assert!(same16(w.vgpr[7][l] >> 16, h6) && w.vgpr[7][l] & 0xffff == d[l] & 0xffff, "{} mixhi lane {}", target, l);
            }
        }
    }
}

// -------------------------------------------------------------------------------------
// DPP, SDWA, swaps
// -------------------------------------------------------------------------------------

/// The DPP source lane of `lane` (CDNA3 ISA table "DPP_CTRL Enumeration"), `None` when
/// out of range.
fn dpp_ref(ctrl: u32, lane: usize) -> Option<usize> {
    let (row, col, k) = (lane / 16 * 16, lane % 16, (ctrl & 15) as usize);
    match ctrl {
        0..=0xff => Some(lane / 4 * 4 + ((ctrl >> (2 * (lane % 4))) & 3) as usize),
        0x101..=0x10f => (col + k < 16).then(|| lane + k),
        0x111..=0x11f => (col >= k).then(|| lane - k),
        0x121..=0x12f => Some(if col >= k { lane - k } else { lane + 16 - k }),
        0x130 => (lane < 63).then(|| lane + 1),
        0x134 => Some(if lane < 63 { lane + 1 } else { 0 }),
        0x138 => (lane > 0).then(|| lane - 1),
        0x13c => Some(if lane > 0 { lane - 1 } else { 63 }),
        0x140 => Some(row + 15 - col),
        0x141 => Some(lane / 8 * 8 + 7 - lane % 8),
        0x142 => (lane > 15).then(|| (lane & 0x30) - 1),
        0x143 => (lane > 31).then(|| (lane & 0x20) - 1),
        0x150..=0x15f => Some(row + k),
        _ => None,
    }
}

fn dpp_syntax(ctrl: u32) -> String {
    let k = ctrl & 15;
    match ctrl {
        0..=0xff => format!("quad_perm:[{},{},{},{}]", ctrl & 3, (ctrl >> 2) & 3, (ctrl >> 4) & 3, ctrl >> 6),
        0x101..=0x10f => format!("row_shl:{k}"),
        0x111..=0x11f => format!("row_shr:{k}"),
        0x121..=0x12f => format!("row_ror:{k}"),
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13c => "wave_ror:1".into(),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x142 => "row_bcast:15".into(),
        0x143 => "row_bcast:31".into(),
        _ => format!("row_newbcast:{k}"),
    }
}

fn dpp_control() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..256,
        0x101u32..0x110,
        0x111u32..0x120,
        0x121u32..0x130,
        prop::sample::select(vec![0x130u32, 0x134, 0x138, 0x13c, 0x140, 0x141, 0x142, 0x143]),
        0x150u32..0x160,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every DPP control LLVM accepts, with random row/bank masks, bound_ctrl and EXEC, on a
    /// 32-bit move and a two-source add, and row_newbcast on 64-bit moves and f64 ops.
    #[test]
    fn dpp_controls(ctrl in dpp_control(), row_mask in 0u32..16, bank_mask in 0u32..16, bound in any::<bool>(), exec in any::<u64>(),
                    a in lane_vec(int_bits()), b in lane_vec(int_bits()), old in lane_vec(int_bits()), target_idx in 0usize..3) {
        let target = Target::ALL[target_idx];
        let bc = if bound { " bound_ctrl:0" } else { "" };
        let tail = format!("{} row_mask:{row_mask:#x} bank_mask:{bank_mask:#x}{bc}", dpp_syntax(ctrl));
        let text = format!("v_mov_b32_dpp v4, v1 {tail}\n v_add_u32_dpp v5, v1, v2 {tail}");
        let w = try_run(target, &text, &[(1, a), (2, b), (4, old), (5, old)], MODE, exec).unwrap();
        for l in 0..N {
            let written = (exec >> l) & 1 != 0 && (row_mask >> (l / 16)) & 1 != 0 && (bank_mask >> ((l / 4) % 4)) & 1 != 0;
            let src = dpp_ref(ctrl, l).filter(|&s| (exec >> s) & 1 != 0);
            let (mov, add) = match (written, src) {
                (true, Some(s)) => (a[s], a[s].wrapping_add(b[l])),
                (true, None) if bound => (0, b[l]),
                _ => (old[l], old[l]),
            };
            prop_assert_eq!(w.vgpr[4][l], mov, "{} `{}` lane {}", target, text, l);
            prop_assert_eq!(w.vgpr[5][l], add, "{} `{}` lane {}", target, text, l);
        }
        if (0x150..0x160).contains(&ctrl) {
            // 64-bit operands move as a whole.
            let mut text = format!("v_ceil_f64_dpp v[8:9], v[2:3] {tail}");
            if target != Target::Gfx90a {
                text = format!("v_mov_b64_dpp v[6:7], v[2:3] {tail}\n{text}");
            }
            let hi: Lanes = std::array::from_fn(|l| 0x4000_0000 | (a[l] & 0x000f_ffff));
            let w = try_run(target, &text, &[(2, b), (3, hi), (6, old), (7, old), (8, old), (9, old)], MODE, exec).unwrap();
            for l in 0..N {
                let written = (exec >> l) & 1 != 0 && (row_mask >> (l / 16)) & 1 != 0 && (bank_mask >> ((l / 4) % 4)) & 1 != 0;
                let s = dpp_ref(ctrl, l).filter(|&s| (exec >> s) & 1 != 0);
                let value = |s: usize| b[s] as u64 | ((hi[s] as u64) << 32);
                let (mv, ceil) = match (written, s) {
                    (true, Some(s)) => (value(s), f64::from_bits(value(s)).ceil().to_bits()),
                    (true, None) if bound => (0, 0),
                    _ => (old[l] as u64 | ((old[l] as u64) << 32), old[l] as u64 | ((old[l] as u64) << 32)),
                };
                if target != Target::Gfx90a {
                    prop_assert_eq!(w.vgpr[6][l] as u64 | ((w.vgpr[7][l] as u64) << 32), mv, "{} v_mov_b64_dpp lane {}", target, l);
                }
                prop_assert_eq!(w.vgpr[8][l] as u64 | ((w.vgpr[9][l] as u64) << 32), ceil, "{} v_ceil_f64_dpp lane {}", target, l);
            }
        }
    }

    /// SDWA operand and destination selects on a 16-bit float op and an integer op.
    #[test]
    fn sdwa_selects(a in lane_vec(pk_f16_bits()), b in lane_vec(pk_f16_bits()), old in lane_vec(int_bits()), s0 in 4u32..6, s1 in 4u32..6, d in 4u32..7, keep in any::<bool>(), target_idx in 0usize..3) {
        let target = Target::ALL[target_idx];
        let name = |s: u32| ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"][s as usize];
        let unused = if keep && d != 6 { "UNUSED_PRESERVE" } else { "UNUSED_PAD" };
        let text = format!("v_subrev_f16_sdwa v4, v1, v2 dst_sel:{} dst_unused:{unused} src0_sel:{} src1_sel:{}", name(d), name(s0), name(s1));
        let w = try_run(target, &text, &[(1, a), (2, b), (4, old)], MODE, u64::MAX).unwrap();
        for l in 0..N {
            let x = half_of(a[l], s0 == 5);
            let y = half_of(b[l], s1 == 5);
            let r = if is_nan16(x) || is_nan16(y) { 0x7e00 } else if h(y) - h(x) == 0.0 { if h(y).is_sign_negative() && !h(x).is_sign_negative() { 0x8000 } else { 0 } } else { to_h(h(y) - h(x)) };
            let got = w.vgpr[4][l];
            let (field, rest) = match d {
                4 => (got & 0xffff, got >> 16),
                5 => (got >> 16, got & 0xffff),
                _ => (got & 0xffff, got >> 16),
            };
            prop_assert!(same16(field, r), "{} `{}` lane {}: {:#x}", target, text, l, got);
            let want_rest = match (d, keep) {
                (4, true) => old[l] >> 16,
                (5, true) => old[l] & 0xffff,
                _ => 0,
            };
            prop_assert_eq!(rest, want_rest, "{} `{}` lane {}", target, text, l);
        }
    }

    #[test]
    fn swaps(a in lane_vec(int_bits()), b in lane_vec(int_bits()), exec in any::<u64>()) {
        for target in Target::ALL {
            let w = try_run(target, "v_swap_b32 v1, v2", &[(1, a), (2, b)], MODE, exec).unwrap();
            for l in 0..N {
                let on = (exec >> l) & 1 != 0;
                prop_assert_eq!((w.vgpr[1][l], w.vgpr[2][l]), if on { (b[l], a[l]) } else { (a[l], b[l]) });
            }
        }
        for (op, rows) in [("v_permlane16_swap_b32", [(1usize, 0usize), (3, 2)]), ("v_permlane32_swap_b32", [(2, 0), (3, 1)])] {
            for mods in ["", " bound_ctrl:1 fi:1"] {
                let text = format!("{op}_e64 v1, v2{mods}");
                let w = run(Target::Gfx950, &text, &[(1, a), (2, b)]);
                let (mut first, mut second) = (a, b);
                for (fr, sr) in rows {
                    for k in 0..16 {
                        first[fr * 16 + k] = b[sr * 16 + k];
                        second[sr * 16 + k] = a[fr * 16 + k];
                    }
                }
                prop_assert_eq!(w.vgpr[1], first, "{}", text);
                prop_assert_eq!(w.vgpr[2], second, "{}", text);
            }
        }
    }
}
