//! gfx950 conversions run as real instructions (assembled by llvm-mc-22) against a
//! reference written here from the OCP 8-bit FP and OCP MX specifications and the CDNA4 ISA
//! guide: `v_cvt_scalef32_*` (every family: packed, single, pk32, 2xpk16, stochastic, op_sel
//! steering), `v_cvt_sr_*`, `v_cvt_pk_{f16,bf16}_f32`, `v_cvt_pk_f32_{fp8,bf8}`,
//! `v_cvt_f32_bf16` and `v_prng_b32`. Every lane gets its own random operands, drawn with a
//! bias towards NaN, ±Inf, ±0, denormals, the formats' saturation edges and the NaN scale.
//!
//! The reference rounds with plain f64 arithmetic: a value's binade gives its spacing `ulp`
//! in the target format, `|x| / ulp` is exact, and nearest-even or stochastic rounding
//! (`floor(|x| / ulp + R / 2^32)`) acts on that quotient. Specials follow the module docs of
//! `numeric::scaled` (the choices the documents leave open are listed there).


// Lane loops index several lane arrays in lockstep on purpose.
#![allow(clippy::needless_range_loop)]
mod common;

use amdgpu_isa::exec::{run_single_wave, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const BASE: u64 = 0x10_0000;
const LANES: usize = 64;
type Lanes = [u32; LANES];

/// MODE values the properties run under: IEEE denormals; plus FP16_OVFL; f32 flushing.
const MODES: [u32; 3] = [0x3f0, 0x3f0 | 1 << 23, 0x3c0];

// ---------------------------------------------------------------- reference formats

#[derive(Clone, Copy, Debug, PartialEq)]
enum Specials {
    /// Exponent all ones is Inf (mantissa 0) or NaN: E5M2, f16, bf16.
    Ieee,
    /// Only S.1111.111 is NaN; no Inf (OCP E4M3FN).
    E4m3,
    /// No Inf or NaN (MX fp6/fp4).
    Finite,
    /// gfx942 FNUZ: 0x80 is the only NaN, no Inf, no negative zero.
    Fnuz,
}

#[derive(Clone, Copy, Debug)]
struct Fmt {
    ebits: i32,
    mbits: i32,
    bias: i32,
    max: f64,
    specials: Specials,
}

const E4M3: Fmt = Fmt { ebits: 4, mbits: 3, bias: 7, max: 448.0, specials: Specials::E4m3 };
const E5M2: Fmt = Fmt { ebits: 5, mbits: 2, bias: 15, max: 57344.0, specials: Specials::Ieee };
const E2M3: Fmt = Fmt { ebits: 2, mbits: 3, bias: 1, max: 7.5, specials: Specials::Finite };
const E3M2: Fmt = Fmt { ebits: 3, mbits: 2, bias: 3, max: 28.0, specials: Specials::Finite };
const E2M1: Fmt = Fmt { ebits: 2, mbits: 1, bias: 1, max: 6.0, specials: Specials::Finite };
const E4M3_FNUZ: Fmt = Fmt { ebits: 4, mbits: 3, bias: 8, max: 240.0, specials: Specials::Fnuz };
const E5M2_FNUZ: Fmt = Fmt { ebits: 5, mbits: 2, bias: 16, max: 57344.0, specials: Specials::Fnuz };
const F16: Fmt = Fmt { ebits: 5, mbits: 10, bias: 15, max: 65504.0, specials: Specials::Ieee };
// (2 - 2^-7) * 2^127, written as the exact product.
const BF16: Fmt = Fmt { ebits: 8, mbits: 7, bias: 127, max: 3.3895313892515355e38, specials: Specials::Ieee };

fn pow2(k: i32) -> f64 {
    let mut v = 1.0f64;
    if k >= 0 {
        for _ in 0..k {
            v *= 2.0;
        }
    } else {
        for _ in 0..-k {
            v /= 2.0;
        }
    }
    v
}

/// floor(log2(a)) for a finite a > 0, exactly.
fn ilog2(a: f64) -> i32 {
    let mut e = a.log2().floor() as i32;
    while pow2(e) > a {
        e -= 1;
    }
    while pow2(e + 1) <= a {
        e += 1;
    }
    e
}

impl Fmt {
    fn sign_bit(self) -> u32 {
        1 << (self.ebits + self.mbits)
    }
    fn max_code(self) -> u32 {
        self.encode(self.max)
    }
    fn inf_code(self) -> u32 {
        ((1 << self.ebits) - 1) << self.mbits
    }

    /// The value of a code (`NaN` and `±Inf` where the format has them).
    fn decode(self, code: u32) -> f64 {
        let negative = code & self.sign_bit() != 0;
        let e = (code >> self.mbits) as i32 & ((1 << self.ebits) - 1);
        let m = code & ((1 << self.mbits) - 1);
        let all_ones = e == (1 << self.ebits) - 1;
        let mag = match self.specials {
            Specials::Ieee if all_ones && m == 0 => f64::INFINITY,
            Specials::Ieee if all_ones => f64::NAN,
            Specials::E4m3 if all_ones && m == 7 => f64::NAN,
            Specials::Fnuz if code == 0x80 => f64::NAN,
            _ if e == 0 => m as f64 * pow2(1 - self.bias - self.mbits),
            _ => (1.0 + m as f64 / pow2(self.mbits)) * pow2(e - self.bias),
        };
        if negative {
            -mag
        } else {
            mag
        }
    }

    /// Rounds a finite magnitude onto this format's grid (unbounded above), to nearest
    /// even or stochastically with `random`.
    fn round(self, a: f64, random: Option<u32>) -> f64 {
        if a == 0.0 {
            return 0.0;
        }
        let e = ilog2(a).max(1 - self.bias);
        let ulp = pow2(e - self.mbits);
        let q = a / ulp;
        let n = match random {
            None => q.round_ties_even(),
            Some(r) => {
                let k = q.floor();
                if q - k >= (4294967296.0 - r as f64) / 4294967296.0 {
                    k + 1.0
                } else {
                    k
                }
            }
        };
        n * ulp
    }

    /// The magnitude code of a representable value.
    fn encode(self, v: f64) -> u32 {
        if v < pow2(1 - self.bias) {
            (v / pow2(1 - self.bias - self.mbits)) as u32
        } else {
            let e = ilog2(v);
            (((e + self.bias) as u32) << self.mbits) | ((v / pow2(e) - 1.0) * pow2(self.mbits)) as u32
        }
    }

    /// The NaN this model writes for a NaN of sign `s` (the signed max in a format without).
    fn nan(self, s: u32) -> u32 {
        match self.specials {
            Specials::E4m3 => s | 0x7f,
            Specials::Ieee => s | self.inf_code() | 1 << (self.mbits - 1),
            Specials::Finite => s | self.max_code(),
            Specials::Fnuz => 0x80,
        }
    }

    /// Overflow (finite or infinite input) of sign `s`.
    fn overflow(self, s: u32, saturate: bool) -> u32 {
        match self.specials {
            Specials::Finite => s | self.max_code(),
            _ if saturate => s | self.max_code(),
            Specials::Fnuz => 0x80,
            Specials::E4m3 => s | 0x7f,
            Specials::Ieee => s | self.inf_code(),
        }
    }

    /// `x / 2^(scale - 127)` into this format (scale 255 is NaN).
    fn down(self, x: f64, scale: u32, random: Option<u32>, saturate: bool) -> u32 {
        let s = if x.is_sign_negative() { self.sign_bit() } else { 0 };
        if x.is_nan() || scale == 255 {
            return self.nan(s);
        }
        if x.is_infinite() {
            // FNUZ keeps Inf -> NaN whatever FP16_OVFL says (numeric::fp8 module docs).
            return if self.specials == Specials::Fnuz { 0x80 } else { self.overflow(s, saturate) };
        }
        let v = self.round(x.abs() / pow2(scale as i32 - 127), random);
        if v > self.max {
            return self.overflow(s, saturate);
        }
        if v == 0.0 && self.specials == Specials::Fnuz {
            return 0;
        }
        s | self.encode(v)
    }
}

/// The output side of an up-conversion.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    F32,
    F16,
    Bf16,
}

impl Out {
    fn fmt(self) -> Fmt {
        match self {
            Out::F16 => F16,
            _ => BF16,
        }
    }
}

/// `value(code) * 2^(scale - 127)` rounded to nearest even into `out` (as bits).
fn up(fmt: Fmt, code: u32, scale: u32, out: Out) -> u32 {
    let v = fmt.decode(code);
    let negative = code & fmt.sign_bit() != 0;
    if v.is_nan() || scale == 255 {
        return match out {
            Out::F32 => (negative as u32) << 31 | 0x7fc0_0000,
            Out::F16 => (negative as u32) << 15 | 0x7e00,
            Out::Bf16 => (negative as u32) << 15 | 0x7fc0,
        };
    }
    let y = v * pow2(scale as i32 - 127);
    if out == Out::F32 {
        return (y as f32).to_bits();
    }
    let f = out.fmt();
    let s = (negative as u32) << 15;
    if y.is_infinite() {
        return s | f.inf_code();
    }
    let r = f.round(y.abs(), None);
    if r > f.max {
        s | f.inf_code()
    } else {
        s | f.encode(r)
    }
}

/// `v_prng_b32`, from the guide's pseudocode.
fn prng(x: u32) -> u32 {
    (x << 1) ^ if x & 0x8000_0000 != 0 { 197 } else { 0 }
}

/// An f32 operand's value as the instruction reads it under MODE `mode_bits`.
fn f32_in(bits: u32, mode_bits: u32) -> f64 {
    let x = f32::from_bits(bits);
    let flush = (mode_bits >> 4) & 1 == 0;
    if flush && x.is_subnormal() {
        if x.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        x as f64
    }
}

fn f16_in(bits: u32) -> f64 {
    F16.decode(bits & 0xffff)
}

fn bf16_in(bits: u32) -> f64 {
    f32::from_bits((bits & 0xffff) << 16) as f64
}

fn insert(old: u32, value: u32, shift: u32, width: u32) -> u32 {
    let mask = ((1u64 << width) - 1) as u32;
    (old & !(mask << shift)) | ((value & mask) << shift)
}

/// 32 six-bit codes into six dwords, element i at bits 6i+5:6i.
fn pack6(codes: &[u32; 32]) -> [u32; 6] {
    let mut bits = [false; 192];
    for (i, c) in codes.iter().enumerate() {
        for b in 0..6 {
            bits[6 * i + b] = (c >> b) & 1 != 0;
        }
    }
    std::array::from_fn(|k| (0..32).fold(0, |acc, b| acc | (bits[32 * k + b] as u32) << b))
}

fn unpack6(regs: &[u32; 6], i: usize) -> u32 {
    (0..6).fold(0, |acc, b| {
        let bit = 6 * i + b;
        acc | ((regs[bit / 32] >> (bit % 32)) & 1) << b
    })
}

// ---------------------------------------------------------------- operand strategies

/// f32 bit patterns: any, specials, denormals, and values near the narrow formats' range.
fn f32_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => any::<u32>(),
        2 => prop::sample::select(vec![
            0x7fc0_0000u32, 0xffc0_0000, 0x7f80_0001, 0x7f80_0000, 0xff80_0000, 0, 0x8000_0000,
            0x0000_0001, 0x807f_ffff, 0x43e0_0000, 0x43e8_0000, 0x4760_0000, 0x4770_0000,
            0x40c0_0000, 0x40d0_0000, 0x40f0_0000, 0x40f8_0000, 0x41e0_0000, 0x41e8_0000,
            0x7f7f_ffff,
        ]),
        1 => (any::<u32>(), 0u32..0x80_0000).prop_map(|(s, m)| (s & 0x8000_0000) | m),
        6 => (any::<bool>(), 100u32..150, any::<u32>()).prop_map(|(s, e, m)| (s as u32) << 31 | e << 23 | (m & 0x7f_ffff)),
    ]
}

/// One 16-bit value (f16 or bf16 bits) biased like [`f32_bits`].
fn half_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => any::<u16>().prop_map(u32::from),
        1 => prop::sample::select(vec![0x7e00u32, 0xfc00, 0x7c00, 0x7c01, 0x0001, 0x8000, 0x7fc0, 0xff80, 0x7f80, 0x0040, 0x7bff]),
        4 => (any::<bool>(), 0x3000u32..0x5000, any::<u8>()).prop_map(|(s, h, m)| (s as u32) << 15 | (h & 0x7f00) | m as u32),
    ]
}

/// Two packed 16-bit values.
fn pair_bits() -> impl Strategy<Value = u32> {
    (half_bits(), half_bits()).prop_map(|(a, b)| a | b << 16)
}

/// Scale operands: their exponent fields near 127, at the ends, and 255 (NaN).
fn scale_bits() -> impl Strategy<Value = u32> {
    (
        prop_oneof![8 => 117u32..137, 1 => Just(0u32), 1 => Just(1u32), 1 => Just(254u32), 1 => Just(255u32), 1 => any::<u8>().prop_map(u32::from)],
        any::<u32>(),
    )
        .prop_map(|(e, noise)| (noise & 0x807f_ffff) | e << 23)
}

fn lanes<S: Strategy<Value = u32>>(s: S) -> impl Strategy<Value = Lanes> {
    prop::collection::vec(s, LANES).prop_map(|v| v.try_into().expect("64 lanes"))
}

// ---------------------------------------------------------------- running

/// Assembles `text` once and runs the property over `cases` random lane sets.
fn property<S: Strategy>(target: Target, text: &str, strategy: S, body: impl Fn(&Program, S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let program = Program::from_words(target, BASE, &common::assemble(target, text));
    let mut runner = TestRunner::new(Config { cases: 48, failure_persistence: None, ..Config::default() });
    runner.run(&strategy, |v| body(&program, v)).unwrap_or_else(|e| panic!("{text}\n{e}"));
}

/// Runs `program` under `mode` with the given source registers and every register of
/// `dsts` preset to `old` (the bits a narrow result must keep).
fn run_lanes(program: &Program, mode: u32, sources: &[(usize, Lanes)], dsts: std::ops::RangeInclusive<usize>, old: Lanes) -> Wave {
    let mut w = Wave::new(BASE, mode);
    for r in dsts {
        w.vgpr[r] = old;
    }
    for &(r, v) in sources {
        w.vgpr[r] = v;
    }
    execute(program, &mut w);
    w
}

/// One lane of the two-f32, seed and old-destination properties: the operands as read
/// (`x`, `y` after MODE flushing), the seed, the old destination, FP16_OVFL, and the raw
/// inputs for messages.
#[derive(Clone, Copy)]
struct F32Lane {
    x: f64,
    y: f64,
    r: u32,
    o: u32,
    sat: bool,
    inputs: [u32; 4],
}

/// Runs `text` on `target` with f32 operands in v1 and v2, a seed in v4 and `dsts` preset
/// to an old value, and checks every lane with `lane_check`.
fn f32_seed_property(target: Target, text: &str, dsts: std::ops::RangeInclusive<usize>, lane_check: impl Fn(&Wave, usize, &F32Lane) -> Result<(), TestCaseError>) {
    let strategy = (prop::sample::select(MODES.to_vec()), lanes(f32_bits()), lanes(f32_bits()), lanes(any::<u32>()), lanes(any::<u32>()));
    property(target, text, strategy, |program, (mode, a, b, seed, old)| {
        let w = run_lanes(program, mode, &[(1, a), (2, b), (4, seed)], dsts.clone(), old);
        for i in 0..LANES {
            let lane = F32Lane {
                x: f32_in(a[i], mode),
                y: f32_in(b[i], mode),
                r: seed[i],
                o: old[i],
                sat: mode & 1 << 23 != 0,
                inputs: [a[i], b[i], seed[i], old[i]],
            };
            lane_check(&w, i, &lane)?;
        }
        Ok(())
    });
}

fn execute(program: &Program, w: &mut Wave) {
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let mut mem = Memory::new();
    let mut lds = vec![0u8; 1024];
    run_single_wave(program, w, &mut mem, &mut lds, 1000).unwrap_or_else(|e| panic!("{e}"));
}

fn check(what: &str, lane: usize, got: u32, want: u32, inputs: &[u32]) -> Result<(), TestCaseError> {
    prop_assert_eq!(got, want, "{} lane {}: got {:#x} want {:#x}; inputs {:x?}", what, lane, got, want, inputs);
    Ok(())
}

// ---------------------------------------------------------------- properties

/// Down-conversions of f32/f16/bf16 pairs and singles to fp8/bf8/fp4, nearest even and
/// stochastic, with every op_sel destination steering.
#[test]
fn scaled_down_conversions_match_the_reference() {
    let text = "v_cvt_scalef32_pk_fp8_f32 v10, v1, -v2, v3\n\
                v_cvt_scalef32_pk_bf8_f32 v11, |v1|, v2, v3 op_sel:[0,0,0,1]\n\
                v_cvt_scalef32_pk_fp4_f32 v12, v1, v2, v3 op_sel:[0,0,1,0]\n\
                v_cvt_scalef32_sr_fp8_f32 v13, v1, v4, v3 op_sel:[0,0,1,1]\n\
                v_cvt_scalef32_sr_bf8_f32 v14, v2, v4, v3 op_sel:[0,0,0,1]\n\
                v_cvt_scalef32_sr_pk_fp4_f32 v15, v[8:9], v4, v3 op_sel:[0,0,1,1]\n\
                v_cvt_scalef32_pk_fp8_f16 v16, v5, v3\n\
                v_cvt_scalef32_pk_bf8_bf16 v17, v5, v3 op_sel:[0,0,1]\n\
                v_cvt_scalef32_pk_fp4_f16 v18, v5, v3 op_sel:[0,0,0,1]\n\
                v_cvt_scalef32_sr_fp8_f16 v19, v5, v4, v3 op_sel:[1,0,1,0]\n\
                v_cvt_scalef32_sr_pk_fp4_bf16 v20, v5, v4, v3 op_sel:[0,0,1,1]\n\
                v_cvt_scalef32_sr_bf8_bf16 v21, v5, v4, v3";
    let strategy = (prop::sample::select(MODES.to_vec()), lanes(f32_bits()), lanes(f32_bits()), lanes(scale_bits()), lanes(any::<u32>()), lanes(pair_bits()), lanes(any::<u32>()));
    property(Target::Gfx950, text, strategy, |program, (mode, a, b, scale, seed, pair, old)| {
        let sources = [(1, a), (2, b), (3, scale), (4, seed), (5, pair), (8, a), (9, b)];
        let w = run_lanes(program, mode, &sources, 10..=21, old);
        let sat = mode & 1 << 23 != 0;
        for i in 0..LANES {
            let (x, y) = (f32_in(a[i], mode), f32_in(b[i], mode));
            let e = scale[i] >> 23 & 0xff;
            let (r, o) = (seed[i], old[i]);
            let (h0, h1) = (f16_in(pair[i]), f16_in(pair[i] >> 16));
            let (g0, g1) = (bf16_in(pair[i]), bf16_in(pair[i] >> 16));
            let inputs = [a[i], b[i], scale[i], seed[i], pair[i], old[i]];
            let fp8_pair = |f: Fmt, p: f64, q: f64| f.down(p, e, None, sat) | f.down(q, e, None, sat) << 8;
            let fp4_pair = |p: f64, q: f64, r: Option<u32>| E2M1.down(p, e, r, true) | E2M1.down(q, e, r.map(prng), true) << 4;
            check("pk_fp8_f32", i, w.vgpr[10][i], insert(o, fp8_pair(E4M3, x, -y), 0, 16), &inputs)?;
            check("pk_bf8_f32", i, w.vgpr[11][i], insert(o, fp8_pair(E5M2, x.abs(), y), 16, 16), &inputs)?;
            check("pk_fp4_f32", i, w.vgpr[12][i], insert(o, fp4_pair(x, y, None), 8, 8), &inputs)?;
            check("sr_fp8_f32", i, w.vgpr[13][i], insert(o, E4M3.down(x, e, Some(r), sat), 24, 8), &inputs)?;
            check("sr_bf8_f32", i, w.vgpr[14][i], insert(o, E5M2.down(y, e, Some(r), sat), 16, 8), &inputs)?;
            check("sr_pk_fp4_f32", i, w.vgpr[15][i], insert(o, fp4_pair(x, y, Some(r)), 24, 8), &inputs)?;
            check("pk_fp8_f16", i, w.vgpr[16][i], insert(o, fp8_pair(E4M3, h0, h1), 0, 16), &inputs)?;
            check("pk_bf8_bf16", i, w.vgpr[17][i], insert(o, fp8_pair(E5M2, g0, g1), 16, 16), &inputs)?;
            check("pk_fp4_f16", i, w.vgpr[18][i], insert(o, fp4_pair(h0, h1, None), 16, 8), &inputs)?;
            check("sr_fp8_f16", i, w.vgpr[19][i], insert(o, E4M3.down(h1, e, Some(r), sat), 8, 8), &inputs)?;
            check("sr_pk_fp4_bf16", i, w.vgpr[20][i], insert(o, fp4_pair(g0, g1, Some(r)), 24, 8), &inputs)?;
            check("sr_bf8_bf16", i, w.vgpr[21][i], insert(o, E5M2.down(g0, e, Some(r), sat), 0, 8), &inputs)?;
        }
        Ok(())
    });
}

/// Up-conversions of fp8/bf8/fp4 bytes, words and nibbles to f32/f16/bf16 with op_sel source
/// and destination selection.
#[test]
fn scaled_up_conversions_match_the_reference() {
    let text = "v_cvt_scalef32_f32_fp8 v10, v1, v3 op_sel:[1,1]\n\
                v_cvt_scalef32_f32_bf8 v11, v1, v3 op_sel:[0,1]\n\
                v_cvt_scalef32_f16_fp8 v12, v1, v3 op_sel:[0,1,1]\n\
                v_cvt_scalef32_f16_bf8 v13, v1, v3 op_sel:[1,0,0]\n\
                v_cvt_scalef32_pk_f32_fp8 v[14:15], v1, v3 op_sel:[1,0]\n\
                v_cvt_scalef32_pk_f16_bf8 v16, v1, v3\n\
                v_cvt_scalef32_pk_bf16_fp8 v17, v1, v3 op_sel:[1,0]\n\
                v_cvt_scalef32_pk_f32_fp4 v[18:19], v1, v3 op_sel:[1,1]\n\
                v_cvt_scalef32_pk_f16_fp4 v20, v1, v3 op_sel:[0,1]\n\
                v_cvt_scalef32_pk_bf16_fp4 v21, v1, v3 op_sel:[1,0]\n\
                v_cvt_scalef32_pk_bf16_bf8 v22, v1, -v3";
    let strategy = (lanes(any::<u32>()), lanes(scale_bits()), lanes(any::<u32>()));
    property(Target::Gfx950, text, strategy, |program, (src, scale, old)| {
        let w = run_lanes(program, 0x3c0, &[(1, src), (3, scale)], 10..=22, old);
        for i in 0..LANES {
            let e = scale[i] >> 23 & 0xff;
            let byte = |k: u32| (src[i] >> (8 * k)) & 0xff;
            let nib = |k: u32| (src[i] >> (4 * k)) & 0xf;
            let inputs = [src[i], scale[i], old[i]];
            check("f32_fp8", i, w.vgpr[10][i], up(E4M3, byte(3), e, Out::F32), &inputs)?;
            check("f32_bf8", i, w.vgpr[11][i], up(E5M2, byte(2), e, Out::F32), &inputs)?;
            check("f16_fp8", i, w.vgpr[12][i], insert(old[i], up(E4M3, byte(2), e, Out::F16), 16, 16), &inputs)?;
            check("f16_bf8", i, w.vgpr[13][i], insert(old[i], up(E5M2, byte(1), e, Out::F16), 0, 16), &inputs)?;
            check("pk_f32_fp8.x", i, w.vgpr[14][i], up(E4M3, byte(2), e, Out::F32), &inputs)?;
            check("pk_f32_fp8.y", i, w.vgpr[15][i], up(E4M3, byte(3), e, Out::F32), &inputs)?;
            check("pk_f16_bf8", i, w.vgpr[16][i], up(E5M2, byte(0), e, Out::F16) | up(E5M2, byte(1), e, Out::F16) << 16, &inputs)?;
            check("pk_bf16_fp8", i, w.vgpr[17][i], up(E4M3, byte(2), e, Out::Bf16) | up(E4M3, byte(3), e, Out::Bf16) << 16, &inputs)?;
            check("pk_f32_fp4.x", i, w.vgpr[18][i], up(E2M1, nib(6), e, Out::F32), &inputs)?;
            check("pk_f32_fp4.y", i, w.vgpr[19][i], up(E2M1, nib(7), e, Out::F32), &inputs)?;
            check("pk_f16_fp4", i, w.vgpr[20][i], up(E2M1, nib(4), e, Out::F16) | up(E2M1, nib(5), e, Out::F16) << 16, &inputs)?;
            check("pk_bf16_fp4", i, w.vgpr[21][i], up(E2M1, nib(2), e, Out::Bf16) | up(E2M1, nib(3), e, Out::Bf16) << 16, &inputs)?;
            check("pk_bf16_bf8", i, w.vgpr[22][i], up(E5M2, byte(0), e, Out::Bf16) | up(E5M2, byte(1), e, Out::Bf16) << 16, &inputs)?;
        }
        Ok(())
    });
}

/// The 32-element fp6/bf6 forms: decode to f32/bf16, encode from f16/bf16/f32 with nearest
/// even and stochastic rounding (element k rounded with prng^k(seed)), and 2xpk16's
/// interleaving.
#[test]
fn scaled_pk32_conversions_match_the_reference() {
    let text = "v_cvt_scalef32_pk32_f32_fp6 v[32:63], v[0:5], v6\n\
                v_cvt_scalef32_pk32_bf16_bf6 v[64:79], v[0:5], v6\n\
                v_cvt_scalef32_pk32_fp6_f16 v[80:85], v[8:23], v6\n\
                v_cvt_scalef32_sr_pk32_bf6_f32 v[86:91], v[96:127], v7, v6\n\
                v_cvt_scalef32_2xpk16_fp6_f32 v[128:133], v[96:111], v[112:127], v6\n\
                v_cvt_scalef32_sr_pk32_fp6_bf16 v[134:139], v[8:23], v7, v6";
    let strategy = (
        prop::sample::select(MODES.to_vec()),
        prop::collection::vec(lanes(any::<u32>()), 6),
        prop::collection::vec(lanes(pair_bits()), 16),
        prop::collection::vec(lanes(f32_bits()), 32),
        lanes(scale_bits()),
        lanes(any::<u32>()),
    );
    property(Target::Gfx950, text, strategy, |program, (mode, packed, halves, singles, scale, seed)| {
        let mut w = Wave::new(BASE, mode);
        for k in 0..6 {
            w.vgpr[k] = packed[k];
        }
        for k in 0..16 {
            w.vgpr[8 + k] = halves[k];
        }
        for k in 0..32 {
            w.vgpr[96 + k] = singles[k];
        }
        w.vgpr[6] = scale;
        w.vgpr[7] = seed;
        execute(program, &mut w);
        for i in 0..LANES {
            let e = scale[i] >> 23 & 0xff;
            let src6: [u32; 6] = std::array::from_fn(|k| packed[k][i]);
            let inputs = [scale[i], seed[i]];
            for el in 0..32 {
                check("pk32_f32_fp6", i, w.vgpr[32 + el][i], up(E2M3, unpack6(&src6, el), e, Out::F32), &inputs)?;
            }
            for k in 0..16 {
                let want = up(E3M2, unpack6(&src6, 2 * k), e, Out::Bf16) | up(E3M2, unpack6(&src6, 2 * k + 1), e, Out::Bf16) << 16;
                check("pk32_bf16_bf6", i, w.vgpr[64 + k][i], want, &inputs)?;
            }
            let half = |el: usize| halves[el / 2][i] >> (16 * (el % 2) as u32);
            let mut random = [0u32; 32];
            random[0] = seed[i];
            for k in 1..32 {
                random[k] = prng(random[k - 1]);
            }
            let sets: [(&str, usize, [u32; 32]); 4] = [
                ("pk32_fp6_f16", 80, std::array::from_fn(|el| E2M3.down(f16_in(half(el)), e, None, true))),
                ("sr_pk32_bf6_f32", 86, std::array::from_fn(|el| E3M2.down(f32_in(singles[el][i], mode), e, Some(random[el]), true))),
                ("2xpk16_fp6_f32", 128, std::array::from_fn(|el| E2M3.down(f32_in(singles[16 * (el % 2) + el / 2][i], mode), e, None, true))),
                ("sr_pk32_fp6_bf16", 134, std::array::from_fn(|el| E2M3.down(bf16_in(half(el)), e, Some(random[el]), true))),
            ];
            for (what, dst, codes) in sets {
                let want = pack6(&codes);
                for k in 0..6 {
                    check(what, i, w.vgpr[dst + k][i], want[k], &inputs)?;
                }
            }
        }
        Ok(())
    });
}

/// The unscaled gfx950 conversions: stochastic f16/bf16/fp8, packed f16/bf16 from f32,
/// fp8 pair decode (VOP1 and SDWA word select), bf16 to f32, and the PRNG step.
#[test]
fn unscaled_conversions_match_the_reference() {
    let text = "v_cvt_sr_f16_f32 v10, v1, v4 op_sel:[0,0,1]\n\
                v_cvt_sr_bf16_f32 v11, -v1, v4\n\
                v_cvt_pk_f16_f32 v12, v1, v2\n\
                v_cvt_pk_bf16_f32 v13, v1, |v2|\n\
                v_prng_b32 v14, v4\n\
                v_cvt_sr_fp8_f32 v15, v1, v4 op_sel:[0,0,1,0]\n\
                v_cvt_pk_f32_fp8 v[16:17], v4\n\
                v_cvt_pk_f32_bf8_sdwa v[18:19], v4 src0_sel:WORD_1\n\
                v_cvt_f32_bf16 v20, v4\n\
                v_cvt_sr_bf8_f32 v21, v2, v4 op_sel:[0,0,0,1]";
    f32_seed_property(Target::Gfx950, text, 10..=21, |w, i, lane| {
        let F32Lane { x, y, r, o, sat, inputs } = *lane;
        // 16-bit results of f32 inputs; NaNs only need to be NaNs of the right sign.
        let half = |f: Fmt, v: f64, random: Option<u32>, saturate: bool| -> u32 {
            let s = if v.is_sign_negative() { 0x8000 } else { 0 };
            if v.is_nan() {
                return s | f.inf_code() | 1 << (f.mbits - 1);
            }
            if v.is_infinite() {
                return s | f.inf_code();
            }
            let m = f.round(v.abs(), random);
            if m > f.max {
                s | if saturate { f.max_code() } else { f.inf_code() }
            } else {
                s | f.encode(m)
            }
        };
        let same_nan = |got: u32, want: u32, f: Fmt| {
            let is_nan = |h: u32| (h & 0x7fff) > f.inf_code();
            if is_nan(want) {
                is_nan(got) && (got ^ want) & 0x8000 == 0
            } else {
                got == want
            }
        };
        let sr16 = w.vgpr[10][i] >> 16;
        prop_assert!(w.vgpr[10][i] & 0xffff == o & 0xffff && same_nan(sr16, half(F16, x, Some(r), sat), F16), "sr_f16 lane {i}: {:#x} {inputs:x?}", w.vgpr[10][i]);
        let srb = w.vgpr[11][i] & 0xffff;
        prop_assert!(w.vgpr[11][i] >> 16 == o >> 16 && same_nan(srb, half(BF16, -x, Some(r), false), BF16), "sr_bf16 lane {i}: {:#x} {inputs:x?}", w.vgpr[11][i]);
        let pk = w.vgpr[12][i];
        prop_assert!(same_nan(pk & 0xffff, half(F16, x, None, false), F16) && same_nan(pk >> 16, half(F16, y, None, false), F16), "pk_f16 lane {i}: {pk:#x} {inputs:x?}");
        let pkb = w.vgpr[13][i];
        prop_assert!(same_nan(pkb & 0xffff, half(BF16, x, None, false), BF16) && same_nan(pkb >> 16, half(BF16, y.abs(), None, false), BF16), "pk_bf16 lane {i}: {pkb:#x} {inputs:x?}");
        check("prng", i, w.vgpr[14][i], prng(r), &inputs)?;
        check("sr_fp8_f32", i, w.vgpr[15][i], insert(o, E4M3.down(x, 127, Some(r), sat), 8, 8), &inputs)?;
        // The unscaled decode keeps its NaN payload (numeric::fp8); only NaN-ness and
        // sign are checked for NaN codes.
        let decoded = [(16, E4M3, r & 0xff), (17, E4M3, r >> 8 & 0xff), (18, E5M2, r >> 16 & 0xff), (19, E5M2, r >> 24)];
        for (reg, f, code) in decoded {
            let (got, want) = (w.vgpr[reg][i], up(f, code, 127, Out::F32));
            if f32::from_bits(want).is_nan() {
                prop_assert!(f32::from_bits(got).is_nan() && (got ^ want) >> 31 == 0, "pk_f32_f8 v{reg} lane {i}: {got:#x} {inputs:x?}");
            } else {
                check("pk_f32_f8", i, got, want, &inputs)?;
            }
        }
        check("f32_bf16", i, w.vgpr[20][i], r << 16, &inputs)?;
        check("sr_bf8_f32", i, w.vgpr[21][i], insert(o, E5M2.down(y, 127, Some(r), sat), 16, 8), &inputs)?;
        Ok(())
    });
}

/// gfx942's FNUZ fp8/bf8: stochastic rounding into a destination byte and the pair decode
/// (VOP1 and SDWA word select).
#[test]
fn gfx942_fnuz_conversions_match_the_reference() {
    let text = "v_cvt_sr_fp8_f32 v10, v1, v4 op_sel:[0,0,1,1]\n\
                v_cvt_sr_bf8_f32 v11, -v2, v4\n\
                v_cvt_pk_f32_fp8 v[12:13], v4\n\
                v_cvt_pk_f32_bf8_sdwa v[14:15], v4 src0_sel:WORD_1";
    f32_seed_property(Target::Gfx942, text, 10..=15, |w, i, lane| {
        let F32Lane { x, y, r, o, sat, inputs } = *lane;
        check("sr_fp8_f32", i, w.vgpr[10][i], insert(o, E4M3_FNUZ.down(x, 127, Some(r), sat), 24, 8), &inputs)?;
        check("sr_bf8_f32", i, w.vgpr[11][i], insert(o, E5M2_FNUZ.down(-y, 127, Some(r), sat), 0, 8), &inputs)?;
        let decoded = [(12, E4M3_FNUZ, r & 0xff), (13, E4M3_FNUZ, r >> 8 & 0xff), (14, E5M2_FNUZ, r >> 16 & 0xff), (15, E5M2_FNUZ, r >> 24)];
        for (reg, f, code) in decoded {
            let (got, want) = (w.vgpr[reg][i], up(f, code, 127, Out::F32));
            if f32::from_bits(want).is_nan() {
                prop_assert!(f32::from_bits(got).is_nan(), "pk_f32_f8 v{reg} lane {i}: {got:#x} {inputs:x?}");
            } else {
                check("pk_f32_f8", i, got, want, &inputs)?;
            }
        }
        Ok(())
    });
}

/// Spot values from the specifications: the OCP saturation edges and the E8M0 NaN scale.
#[test]
fn reference_spot_values() {
    assert_eq!(E4M3.max_code(), 0x7e);
    assert_eq!(E5M2.max_code(), 0x7b);
    assert_eq!(E2M3.max_code(), 0x1f);
    assert_eq!(E3M2.max_code(), 0x1f);
    assert_eq!(E2M1.max_code(), 0x7);
    assert_eq!(F16.max_code(), 0x7bff);
    assert_eq!(BF16.max_code(), 0x7f7f);
    // 464 is the midpoint between 448 and the missing 480: ties to the even 448.
    assert_eq!(E4M3.down(464.0, 127, None, false), 0x7e);
    assert_eq!(E4M3.down(465.0, 127, None, false), 0x7f);
    assert_eq!(E5M2.down(61440.0, 127, None, false), 0x7c);
    assert_eq!(E2M1.down(-100.0, 127, None, false), 0xf);
    assert_eq!(E2M1.down(0.25, 127, None, false), 0x0);
    assert_eq!(E2M1.down(0.26, 127, None, false), 0x1);
    assert_eq!(E2M1.down(12.0, 128, None, false), 0x7);
    assert_eq!(up(E2M1, 0x7, 255, Out::F32), 0x7fc0_0000);
    assert_eq!(up(E4M3, 0x08, 127 - 6, Out::F32), (2f32).powi(-12).to_bits());
}
