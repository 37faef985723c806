//! Typed buffer loads and stores against references written here: every MTBUF form
//! (`tbuffer_{load,store}_format_{x,xy,xyz,xyzw}` and their `_d16` forms) with every one
//! of the 16 x 8 DFMT/NFMT encodings, and the MUBUF `buffer_{load,store}_format_*` forms
//! (`_d16`, `_d16_hi` included) with every descriptor DATA_FORMAT/NUM_FORMAT and random
//! `dst_sel` selects, on all three targets.
//!
//! The references follow the CDNA3/CDNA4 ISA guides ("Buffer Instructions": the data and
//! number formats, the format table, the read conversions) and, where the guides are
//! silent, the decisions recorded in `src/exec/buffer_format.rs` (the unbound rule for
//! pairs the table does not define, the fill rule, `_d16` rounding and saturation, the
//! store conversions, the D3D11 rules for the unsigned 10/11-bit floats). They share no
//! code with the executor: every conversion is done here on exact rationals
//! (`num / den * 2^scale` in integers) and rounded once, to nearest even.
//!
//! Memory and register contents are random words mixed with edge values: zeros, all
//! ones, sign bits, f32/f16/small-float NaN (quiet and signalling), infinities,
//! denormals, rounding ties, saturation bounds. Each case runs with a random EXEC and a
//! resource whose last lanes are partly or wholly out of range.

mod common;

use amdgpu_isa::exec::{run_single_wave, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const BASE: u64 = 0x10_0000;
const DATA: u64 = 0x20_0000;
/// Bytes between two lanes' elements (lane l's element is at `DATA + 16 l`).
const STRIDE: u32 = 16;
/// NUM_RECORDS of the raw buffer: lanes 0..=61 are in range for every format, lane 62
/// only for formats of at most 4 bytes, lane 63 never.
const NUM_RECORDS: u32 = 62 * STRIDE + 4;
/// Proptest cases per target (each case runs every form with every format pair).
const CASES: u32 = 6;
/// What the test fills destination registers with, to see which halves a load keeps.
const SENTINEL: u32 = 0xdead_beef;

// ---------------------------------------------------------------- formats (ISA guide)

const UNORM: u32 = 0;
const SNORM: u32 = 1;
const USCALED: u32 = 2;
const SSCALED: u32 = 3;
const UINT: u32 = 4;
const SINT: u32 = 5;
const FLOAT: u32 = 7;

/// The channel widths of a DATA_FORMAT code, X (the least-significant bits) first; the
/// guide names formats most-significant channel first (`10_11_11`: Z is 10 bits).
/// `None` for INVALID (0) and the reserved 15.
fn widths(dfmt: u32) -> Option<&'static [u32]> {
    Some(match dfmt {
        1 => &[8],
        2 => &[16],
        3 => &[8, 8],
        4 => &[32],
        5 => &[16, 16],
        6 => &[11, 11, 10],   // 10_11_11
        7 => &[10, 11, 11],   // 11_11_10
        8 => &[2, 10, 10, 10], // 10_10_10_2
        9 => &[10, 10, 10, 2], // 2_10_10_10
        10 => &[8, 8, 8, 8],
        11 => &[32, 32],
        12 => &[16, 16, 16, 16],
        13 => &[32, 32, 32],
        14 => &[32, 32, 32, 32],
        _ => return None,
    })
}

/// The guide's buffer format table: the number formats each data format pairs with.
fn paired(dfmt: u32, nfmt: u32) -> bool {
    let norm_scaled_int = [UNORM, SNORM, USCALED, SSCALED, UINT, SINT];
    let allowed: &[u32] = match dfmt {
        1 | 3 | 8 | 9 | 10 => &norm_scaled_int,
        2 | 5 | 12 => &[UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT],
        4 | 11 | 13 | 14 => &[UINT, SINT, FLOAT],
        6 | 7 => &[FLOAT],
        _ => &[],
    };
    allowed.contains(&nfmt)
}

/// Packed formats: channels that are not whole bytes, stored as one dword.
fn is_packed(dfmt: u32) -> bool {
    matches!(dfmt, 6..=9)
}

/// Bytes of one element.
fn element_bytes(dfmt: u32) -> u32 {
    widths(dfmt).map_or(0, |w| w.iter().sum::<u32>() / 8)
}

// ---------------------------------------------------------------- exact arithmetic

/// A binary floating-point format: exponent bits, stored mantissa bits, bias.
#[derive(Copy, Clone, Debug)]
struct Fp {
    exp_bits: u32,
    man: u32,
    bias: i32,
}

const F32: Fp = Fp { exp_bits: 8, man: 23, bias: 127 };
const F16: Fp = Fp { exp_bits: 5, man: 10, bias: 15 };

/// The unsigned 10- and 11-bit floats: 5 exponent bits, bias 15, `bits - 5` mantissa bits.
fn small_fp(bits: u32) -> Fp {
    Fp { exp_bits: 5, man: bits - 5, bias: 15 }
}

impl Fp {
    fn inf(self) -> u32 {
        ((1 << self.exp_bits) - 1) << self.man
    }
    fn max_finite(self) -> u32 {
        self.inf() - 1
    }
}

/// The exact non-negative value `num / den * 2^scale` (num and den below 2^40).
#[derive(Copy, Clone, Debug)]
struct Exact {
    num: u128,
    den: u128,
    scale: i32,
}

impl Exact {
    fn int(v: u64) -> Exact {
        Exact { num: v as u128, den: 1, scale: 0 }
    }
    fn ratio(num: u64, den: u64) -> Exact {
        Exact { num: num as u128, den: den as u128, scale: 0 }
    }
    fn times(self, k: u64) -> Exact {
        Exact { num: self.num * k as u128, ..self }
    }
    /// `self >= 1`.
    fn at_least_one(self) -> bool {
        if self.scale >= 0 {
            self.scale > 80 || self.num << self.scale >= self.den
        } else {
            -self.scale < 80 && self.num >= self.den << -self.scale
        }
    }
    fn is_zero(self) -> bool {
        self.num == 0
    }
}

/// `(num << k, den)` or `(num, den >> k)` with `num / den` scaled by `2^k`; `None` when
/// the value is far below 1/4 (|k| beyond the headroom).
fn scaled(x: Exact, k: i32) -> Option<(u128, u128)> {
    assert!(x.num < 1 << 40 && x.den < 1 << 40 && x.den > 0, "{x:?}");
    if k >= 0 {
        assert!(k <= 64, "{x:?} scaled by 2^{k}");
        Some((x.num << k, x.den))
    } else if -k > 80 {
        None
    } else {
        Some((x.num, x.den << -k))
    }
}

/// Rounds `n / d` to the nearest integer, ties to even.
fn rne(n: u128, d: u128) -> u128 {
    let (q, r) = (n / d, n % d);
    if 2 * r > d || 2 * r == d && q & 1 == 1 {
        q + 1
    } else {
        q
    }
}

/// `x` rounded to nearest even in `fp`: the magnitude encoding, or `None` when it rounds
/// above the largest finite value.
fn round_fp(x: Exact, fp: Fp) -> Option<u32> {
    if x.is_zero() {
        return Some(0);
    }
    let bits = |v: u128| 128 - v.leading_zeros() as i32;
    // e = floor(log2(num / den)).
    let mut e = bits(x.num) - bits(x.den);
    let at_least = |e: i32| if e >= 0 { x.num >= x.den << e } else { x.num << -e >= x.den };
    if !at_least(e) {
        e -= 1;
    }
    let e = e + x.scale;
    let mut te = e.max(1 - fp.bias);
    // The value in units of the result's last place, 2^(te - man).
    let Some((n, d)) = scaled(x, x.scale - te + fp.man as i32) else { return Some(0) };
    let mut q = rne(n, d);
    let one = 1u128 << fp.man;
    if q == 2 * one {
        q = one;
        te += 1;
    }
    if q < one {
        return Some(q as u32); // denormal (or zero)
    }
    let field = te + fp.bias;
    if field >= (1 << fp.exp_bits) - 1 {
        return None;
    }
    Some((field as u32) << fp.man | (q - one) as u32)
}

/// `x` rounded to the nearest integer, ties to even (at least 2^60 when huge).
fn round_int(x: Exact) -> u128 {
    if x.scale > 60 {
        return 1 << 60;
    }
    match scaled(x, x.scale) {
        Some((n, d)) => rne(n, d),
        None => 0,
    }
}

/// A float register value, classified.
#[derive(Copy, Clone, Debug)]
enum Val {
    /// NaN with its fraction field, left-aligned to 23 bits.
    Nan { negative: bool, frac23: u32 },
    Inf { negative: bool },
    Finite { negative: bool, x: Exact },
}

/// Classifies `bits` of the IEEE format `fp` (f32 or f16).
fn classify(bits: u32, fp: Fp) -> Val {
    let negative = bits >> (fp.exp_bits + fp.man) & 1 != 0;
    let field = (bits >> fp.man) & ((1 << fp.exp_bits) - 1);
    let frac = bits & ((1 << fp.man) - 1);
    if field == (1 << fp.exp_bits) - 1 {
        return if frac == 0 { Val::Inf { negative } } else { Val::Nan { negative, frac23: frac << (23 - fp.man) } };
    }
    let x = if field == 0 {
        Exact { num: frac as u128, den: 1, scale: 1 - fp.bias - fp.man as i32 }
    } else {
        Exact { num: (frac | 1 << fp.man) as u128, den: 1, scale: field as i32 - fp.bias - fp.man as i32 }
    };
    Val::Finite { negative, x }
}

/// A signed value encoded in the IEEE format `fp`, nearest even, IEEE overflow to Inf.
fn encode(negative: bool, x: Exact, fp: Fp) -> u32 {
    let sign = (negative as u32) << (fp.exp_bits + fp.man);
    sign | round_fp(x, fp).unwrap_or(fp.inf())
}

/// An IEEE conversion of a classified value into f32 or f16 (NaN: quiet, sign and top
/// payload kept).
fn convert(v: Val, fp: Fp) -> u32 {
    let sign_at = fp.exp_bits + fp.man;
    match v {
        Val::Nan { negative, frac23 } => (negative as u32) << sign_at | fp.inf() | 1 << (fp.man - 1) | frac23 >> (23 - fp.man),
        Val::Inf { negative } => (negative as u32) << sign_at | fp.inf(),
        Val::Finite { negative, x } => encode(negative, x, fp),
    }
}

fn sign_extend(raw: u32, width: u32) -> i64 {
    let v = raw as i64;
    if v >> (width - 1) & 1 != 0 {
        v - (1i64 << width)
    } else {
        v
    }
}

// ---------------------------------------------------------------- load reference

/// The register value (16-bit when `d16`) a load of channel `raw` (`width` bits) returns.
fn load_channel(nfmt: u32, width: u32, raw: u32, d16: bool) -> u32 {
    let fp = if d16 { F16 } else { F32 };
    match nfmt {
        UNORM => encode(false, Exact::ratio(raw as u64, (1 << width) - 1), fp),
        SNORM => {
            let max = (1i64 << (width - 1)) - 1;
            let s = sign_extend(raw, width).max(-max);
            encode(s < 0, Exact::ratio(s.unsigned_abs(), max as u64), fp)
        }
        USCALED => encode(false, Exact::int(raw as u64), fp),
        SSCALED => {
            let s = sign_extend(raw, width);
            encode(s < 0, Exact::int(s.unsigned_abs()), fp)
        }
        UINT if d16 => raw.min(0xffff),
        UINT => raw,
        SINT if d16 => sign_extend(raw, width).clamp(-32768, 32767) as u32 & 0xffff,
        SINT => sign_extend(raw, width) as u32,
        FLOAT => match width {
            32 if d16 => convert(classify(raw, F32), F16),
            32 => raw,
            16 if d16 => raw,
            16 => {
                // f16 widens exactly; a signalling NaN comes out quiet.
                convert(classify(raw, F16), F32)
            }
            _ => {
                let small = small_fp(width);
                let field = raw >> small.man;
                let frac = raw & ((1 << small.man) - 1);
                if field == 31 {
                    // Infinity and NaN re-encode bit for bit.
                    fp.inf() | frac << (fp.man - small.man)
                } else {
                    match classify(raw, small) {
                        Val::Finite { x, .. } => encode(false, x, fp),
                        other => unreachable!("{other:?}"),
                    }
                }
            }
        },
        _ => unreachable!("nfmt {nfmt} is not paired"),
    }
}

/// One: the SEL_1 value and the W fill, in the number format's register encoding.
fn one(nfmt: u32, d16: bool) -> u32 {
    match nfmt {
        UINT | SINT => 1,
        _ if d16 => 0x3c00,
        _ => 0x3f80_0000,
    }
}

/// The four channels (X, Y, Z, W) a load of the element `bytes` returns: the format's
/// channels, then the fill (0, 0, 0, one). `None` for an unbound (unpaired) format.
fn reference_unpack(dfmt: u32, nfmt: u32, bytes: [u8; 16], d16: bool) -> Option<[u32; 4]> {
    if !paired(dfmt, nfmt) {
        return None;
    }
    let element = u128::from_le_bytes(bytes);
    let mut out = [0, 0, 0, one(nfmt, d16)];
    let mut at = 0;
    for (c, &w) in widths(dfmt)?.iter().enumerate() {
        let raw = ((element >> at) & ((1u128 << w) - 1)) as u32;
        out[c] = load_channel(nfmt, w, raw, d16);
        at += w;
    }
    Some(out)
}

/// What one lane's load returns through `dst_sel` (MTBUF: X, Y, Z, W): zero in every
/// component when out of range or unbound, except SEL_1 (one).
fn reference_load(dfmt: u32, nfmt: u32, bytes: [u8; 16], d16: bool, sel: [u32; 4], inside: bool) -> [u32; 4] {
    let fetched = if inside { reference_unpack(dfmt, nfmt, bytes, d16) } else { None };
    sel.map(|s| match s {
        1 => {
            let code = if nfmt == 6 { FLOAT } else { nfmt };
            one(code, d16)
        }
        4..=7 => fetched.map_or(0, |f| f[(s - 4) as usize]),
        _ => 0, // SEL_0 and the reserved 2, 3
    })
}

// ---------------------------------------------------------------- store reference

/// The `width`-bit channel a store writes for register value `v` (16-bit when `d16`).
fn store_channel(nfmt: u32, width: u32, v: u32, d16: bool) -> u32 {
    let val = if d16 { classify(v & 0xffff, F16) } else { classify(v, F32) };
    let max_u = if width == 32 { u32::MAX as u128 } else { (1u128 << width) - 1 };
    let max_s = (1u128 << (width - 1)) - 1;
    // A signed integer result, saturated to [-(max_s + 1), max_s], as width bits.
    let signed = |negative: bool, magnitude: u128| -> u32 {
        let v = if negative { -(magnitude.min(max_s + 1) as i64) } else { magnitude.min(max_s) as i64 };
        v as u32
    };
    let raw = match (nfmt, val) {
        (UNORM | SNORM | USCALED | SSCALED, Val::Nan { .. }) => 0,
        (UNORM, Val::Inf { negative }) | (USCALED, Val::Inf { negative }) => {
            if negative {
                0
            } else {
                max_u as u32
            }
        }
        (SNORM, Val::Inf { negative }) => signed(negative, max_s),
        (SSCALED, Val::Inf { negative }) => signed(negative, max_s + 1),
        (UNORM, Val::Finite { negative, x }) => {
            if negative || x.is_zero() {
                0
            } else if x.at_least_one() {
                max_u as u32
            } else {
                round_int(x.times(max_u as u64)) as u32
            }
        }
        (SNORM, Val::Finite { negative, x }) => {
            let magnitude = if x.at_least_one() { max_s } else { round_int(x.times(max_s as u64)) };
            signed(negative, magnitude)
        }
        (USCALED, Val::Finite { negative, x }) => {
            if negative {
                0
            } else {
                round_int(x).min(max_u) as u32
            }
        }
        (SSCALED, Val::Finite { negative, x }) => signed(negative, round_int(x)),
        (UINT, _) => {
            let x = if d16 { v & 0xffff } else { v };
            (x as u128).min(max_u) as u32
        }
        (SINT, _) => {
            let x = if d16 { v as u16 as i16 as i64 } else { v as i32 as i64 };
            x.clamp(-(max_s as i64) - 1, max_s as i64) as u32
        }
        (FLOAT, _) if width == 32 => {
            if d16 {
                convert(val, F32)
            } else {
                v
            }
        }
        (FLOAT, _) if width == 16 => {
            if d16 {
                v & 0xffff
            } else {
                convert(val, F16)
            }
        }
        (FLOAT, val) => {
            // D3D11: NaN stays NaN, negatives clamp to 0, +Inf stays, finite overflow
            // gives the largest finite value; nearest even.
            let small = small_fp(width);
            match val {
                Val::Nan { frac23, .. } => small.inf() | 1 << (small.man - 1) | frac23 >> (23 - small.man),
                Val::Inf { negative: false } => small.inf(),
                Val::Inf { negative: true } | Val::Finite { negative: true, .. } => 0,
                Val::Finite { negative: false, x } => round_fp(x, small).unwrap_or(small.max_finite()),
            }
        }
        _ => unreachable!("nfmt {nfmt} is not paired"),
    };
    if width == 32 {
        raw
    } else {
        raw & ((1 << width) - 1)
    }
}

/// Memory after one lane's store of the first `count` components of `comps` over the
/// element `old`: unchanged for an unbound (unpaired) format; a packed format is written
/// whole (missing channels 0); a byte-aligned one only in the bytes of the components
/// stored.
fn reference_store(dfmt: u32, nfmt: u32, comps: [u32; 4], count: usize, d16: bool, old: [u8; 16]) -> [u8; 16] {
    if !paired(dfmt, nfmt) {
        return old;
    }
    let ws = widths(dfmt).expect("paired formats have widths");
    let mut out = old;
    if is_packed(dfmt) {
        let mut word = 0u32;
        let mut at = 0;
        for (c, &w) in ws.iter().enumerate() {
            if c < count {
                word |= store_channel(nfmt, w, comps[c], d16) << at;
            }
            at += w;
        }
        out[..4].copy_from_slice(&word.to_le_bytes());
        return out;
    }
    let mut at = 0usize;
    for (c, &w) in ws.iter().enumerate() {
        let n = (w / 8) as usize;
        if c < count {
            let raw = store_channel(nfmt, w, comps[c], d16);
            out[at..at + n].copy_from_slice(&raw.to_le_bytes()[..n]);
        }
        at += n;
    }
    out
}

// ---------------------------------------------------------------- the forms

/// One instruction form under test.
#[derive(Clone, Debug)]
struct Form {
    text: String,
    store: bool,
    count: usize,
    d16: bool,
    d16_hi: bool,
}

/// The forms of one encoding (`tbuffer` or `buffer`), data in v4 (loads) or v2 (stores),
/// the offset in v0.
fn forms(tbuffer: bool) -> Vec<Form> {
    let prefix = if tbuffer { "tbuffer" } else { "buffer" };
    let format = if tbuffer { ", dfmt:1, nfmt:0" } else { "" };
    let mut out = Vec::new();
    for store in [false, true] {
        let (verb, base) = if store { ("store", 2) } else { ("load", 4) };
        for (d16, d16_hi) in [(false, false), (true, false), (true, true)] {
            for count in 1..=4usize {
                if d16_hi && (tbuffer || count > 1) {
                    continue;
                }
                let regs = if d16 { count.div_ceil(2) } else { count };
                let vdata = if regs == 1 { format!("v{base}") } else { format!("v[{base}:{}]", base + regs - 1) };
                let comps = &"xyzw"[..count];
                let d16_text = if d16_hi { "d16_hi_" } else if d16 { "d16_" } else { "" };
                out.push(Form {
                    text: format!("{prefix}_{verb}_format_{d16_text}{comps} {vdata}, v0, s[0:3]{format}, 0 offen"),
                    store,
                    count,
                    d16,
                    d16_hi,
                });
            }
        }
    }
    out
}

/// The forms with their words, assembled once for `target`.
fn assembled(target: Target, forms: &[Form]) -> Vec<(Form, [u32; 2])> {
    let text: Vec<&str> = forms.iter().map(|f| f.text.as_str()).collect();
    let words = common::assemble(target, &text.join("\n"));
    assert_eq!(words.len(), 2 * forms.len() + 1, "{target}: every form is two words, then s_endpgm");
    forms.iter().cloned().zip(words.chunks_exact(2).map(|w| [w[0], w[1]])).collect()
}

/// MTBUF words with DFMT (bits 22:19) and NFMT (bits 25:23) replaced.
fn with_format(words: [u32; 2], dfmt: u32, nfmt: u32) -> [u32; 2] {
    [(words[0] & !(0x7f << 19)) | dfmt << 19 | nfmt << 23, words[1]]
}

fn program(target: Target, words: [u32; 2]) -> Program {
    Program::from_words(target, BASE, &[words[0], words[1], 0xbf81_0000])
}

/// A wave with `s[0:3]` a raw buffer over DATA (NUM_RECORDS bytes, stride 0) whose dword
/// 3 is `word3`, v0 = 16 * lane, EXEC `exec`.
fn wave(word3: u32, exec: u64) -> Wave {
    let mut w = Wave::new(BASE, 0x3f0);
    w.set_exec(exec);
    w.sgpr[0] = DATA as u32;
    w.sgpr[1] = (DATA >> 32) as u32;
    w.sgpr[2] = NUM_RECORDS;
    w.sgpr[3] = word3;
    w.vgpr[0] = std::array::from_fn(|lane| STRIDE * lane as u32);
    w
}

/// Descriptor dword 3: dst_sel, NUM_FORMAT, DATA_FORMAT.
fn word3(sel: [u32; 4], dfmt: u32, nfmt: u32) -> u32 {
    sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9 | nfmt << 12 | dfmt << 15
}

/// Whether a lane's element of `dfmt` is in range. An unbound format reads nothing
/// either way.
fn in_range(lane: usize, dfmt: u32) -> bool {
    STRIDE * lane as u32 + element_bytes(dfmt) <= NUM_RECORDS
}

/// One case's random inputs.
#[derive(Clone, Debug)]
struct Inputs {
    /// Memory: four words per lane.
    memory: Vec<u32>,
    /// Store data: four words per lane (v2..v5).
    data: Vec<u32>,
    exec: u64,
    /// MUBUF dst_sel (every 3-bit value, reserved ones included).
    sel: [u32; 4],
}

/// Words mixing random bits with edge values of every channel kind.
fn word() -> impl Strategy<Value = u32> {
    let edges = prop::sample::select(vec![
        0u32,
        u32::MAX,
        0x8000_0000,
        0x7fff_ffff,
        0x8080_8080,
        0x7f7f_7f7f,
        0x0000_00ff,
        0x0000_0100,
        0xffff_ff80,
        0xffff_ff7f,
        0x0000_ffff,
        0x0001_0000,
        0xffff_8000,
        0xffff_7fff,
        0x0000_03ff,
        0x0000_0400,
        0xffff_fe00,
        0xffff_fdff,
        0x7f80_0000, // f32 +Inf
        0xff80_0000, // f32 -Inf
        0x7fc0_0001, // f32 quiet NaN
        0x7f80_0001, // f32 signalling NaN
        0xffa0_0000, // f32 negative signalling NaN
        0x0000_0001, // f32 smallest denormal
        0x807f_ffff, // f32 negative denormal
        0x3f80_0000, // 1.0
        0xbf80_0000, // -1.0
        0x3f00_0000, // 0.5
        0xbf00_0000, // -0.5
        0x3fc0_0000, // 1.5
        0x4020_0000, // 2.5: a tie that rounds to even
        0xc020_0000, // -2.5
        0x3f80_0001, // just above 1.0
        0x3f7f_ffff, // just below 1.0
        0x477f_e000, // 65504: f16 max
        0x477f_f000, // 65520: rounds to f16 Inf
        0x477e_0000, // 65024: 11-bit float max
        0x477f_0000, // 65280: rounds above the 11-bit max
        0x477c_0000, // 64512: 10-bit float max
        0x4f80_0000, // 2^32
        0x4f00_0000, // 2^31
        0xcf00_0000, // -2^31
        0x437f_0000, // 255.0
        0x437f_8000, // 255.5
        0x3380_0000, // 2^-24: f16 smallest denormal
        0x3300_0000, // 2^-25: a tie to zero in f16
        0x3500_0000, // 2^-21: half the smallest 11-bit float denormal, a tie to zero
        0x3580_0000, // 2^-20: the smallest 11-bit float denormal
        0x7c00_fc00, // f16 +Inf, -Inf
        0x7e00_7d00, // f16 quiet NaN, signalling NaN
        0x0001_8001, // f16 denormals
        0x3c00_bc00, // f16 1.0, -1.0
        0x4100_3800, // f16 2.5, 0.5
        0x7bff_fbff, // f16 max, -max
        0x07c0_07e0, // 11-bit float Inf / NaN in X
        0xffc0_0000, // 10-bit float NaN in Z (10_11_11)
        0x003f_f800, // 11-bit float Inf in Y
        0x0000_07bf, // 11-bit float max in X
    ]);
    let small_float = (-4.0f32..4.0).prop_map(f32::to_bits);
    let halves = (any::<u16>(), prop::sample::select(vec![0x3c00u16, 0x3800, 0x7c00, 0xfc00, 0x7e01, 0x7c01, 0x0001, 0x7bff, 0xff80, 0x00ff, 0x0100, 0x8000, 0x7fff, 0x03ff, 0xfe00]))
        .prop_map(|(a, b)| (a as u32) << 16 | b as u32);
    prop_oneof![3 => any::<u32>(), 3 => edges, 2 => small_float, 2 => halves]
}

fn inputs() -> impl Strategy<Value = Inputs> {
    (
        prop::collection::vec(word(), 256),
        prop::collection::vec(word(), 256),
        any::<u64>(),
        [0u32..8, 0u32..8, 0u32..8, 0u32..8],
    )
        .prop_map(|(memory, data, exec, sel)| Inputs { memory, data, exec: exec | 1 << 62 | 1, sel })
}

/// Lane `lane`'s 16 bytes of `words` (four words per lane).
fn lane_bytes(words: &[u32], lane: usize) -> [u8; 16] {
    let mut b = [0u8; 16];
    for k in 0..4 {
        b[4 * k..4 * k + 4].copy_from_slice(&words[4 * lane + k].to_le_bytes());
    }
    b
}

/// Runs `form` (its words in `words`) with the format (`dfmt`, `nfmt`) and compares
/// registers or memory with the references. `mubuf_sel`: the descriptor's dst_sel for a
/// MUBUF form (`None` for MTBUF, whose format is in the words).
fn check(target: Target, form: &Form, words: [u32; 2], dfmt: u32, nfmt: u32, mubuf_sel: Option<[u32; 4]>, inp: &Inputs) -> Result<(), TestCaseError> {
    let (words, word3) = match mubuf_sel {
        None => (with_format(words, dfmt, nfmt), word3([4, 5, 6, 7], 4, UINT)),
        Some(sel) => (words, word3(sel, dfmt, nfmt)),
    };
    let sel = mubuf_sel.unwrap_or([4, 5, 6, 7]);
    let prog = program(target, words);
    let mut w = wave(word3, inp.exec);
    let mut mem = Memory::new();
    for lane in 0..64 {
        mem.write(DATA + (STRIDE as usize * lane) as u64, &lane_bytes(&inp.memory, lane)).expect("fill");
        for k in 0..4 {
            w.vgpr[2 + k][lane] = inp.data[4 * lane + k];
            w.vgpr[6 + k][lane] = SENTINEL;
        }
    }
    if !form.store {
        for k in 4..10 {
            w.vgpr[k] = [SENTINEL; 64];
        }
    }
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let what = format!("{target} `{}` dfmt {dfmt} nfmt {nfmt} dst_sel {sel:?}", form.text);
    run_single_wave(&prog, &mut w, &mut mem, &mut [], 10).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
    for lane in 0..64 {
        let active = (inp.exec >> lane) & 1 != 0;
        let old = lane_bytes(&inp.memory, lane);
        let mut got = [0u8; 16];
        mem.read(DATA + (STRIDE as usize * lane) as u64, &mut got).expect("read back");
        if form.store {
            let comps: [u32; 4] = std::array::from_fn(|k| {
                let reg = inp.data[4 * lane + if form.d16 { k / 2 } else { k }];
                if !form.d16 {
                    reg
                } else if form.d16_hi || k % 2 == 1 {
                    reg >> 16
                } else {
                    reg & 0xffff
                }
            });
            let want = if active && in_range(lane, dfmt) { reference_store(dfmt, nfmt, comps, form.count, form.d16, old) } else { old };
            prop_assert_eq!(got, want, "{} lane {} data {:08x?} old {:02x?}", what, lane, &comps[..form.count], old);
            continue;
        }
        prop_assert_eq!(got, old, "{}: a load wrote memory", what);
        let regs: Vec<u32> = (4..10).map(|r| w.vgpr[r][lane]).collect();
        let mut want = vec![SENTINEL; 6];
        if active {
            let v = reference_load(dfmt, nfmt, old, form.d16, sel, in_range(lane, dfmt));
            for k in 0..form.count {
                if !form.d16 {
                    want[k] = v[k];
                } else if form.d16_hi {
                    want[0] = (want[0] & 0xffff) | v[0] << 16;
                } else if k % 2 == 0 {
                    want[k / 2] = (want[k / 2] & 0xffff_0000) | v[k];
                } else {
                    want[k / 2] = (want[k / 2] & 0xffff) | v[k] << 16;
                }
            }
        }
        prop_assert_eq!(&regs, &want, "{} lane {} memory {:02x?}", what, lane, old);
    }
    Ok(())
}

/// Every MTBUF form with every DFMT (0..=15) and NFMT (0..=7) encoding, against the
/// references: paired formats convert, unpaired ones (and INVALID) behave as unbound.
#[test]
fn tbuffer_forms_match_the_reference_for_every_dfmt_and_nfmt() {
    for target in Target::ALL {
        let forms = assembled(target, &forms(true));
        // The DFMT/NFMT fields sit where this test patches them: a form assembled with
        // another format differs from the patched words only there.
        let other = common::assemble(target, "tbuffer_load_format_x v4, v0, s[0:3], dfmt:14, nfmt:7, 0 offen");
        let x = forms.iter().find(|(f, _)| f.text.starts_with("tbuffer_load_format_x ")).expect("form");
        assert_eq!(with_format(x.1, 14, 7), [other[0], other[1]], "{target}: DFMT/NFMT field positions");
        let mut runner = TestRunner::new(Config { cases: CASES, ..Config::default() });
        runner
            .run(&inputs(), |inp| {
                for (form, words) in &forms {
                    for dfmt in 0..16 {
                        for nfmt in 0..8 {
                            check(target, form, *words, dfmt, nfmt, None, &inp)?;
                        }
                    }
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{target}: {e}"));
    }
}

/// Every MUBUF format form (`_d16` and `_d16_hi` included) with every descriptor
/// DATA_FORMAT and NUM_FORMAT and random dst_sel selects (SEL_0, SEL_1, the reserved 2
/// and 3, channels the format lacks), against the references.
#[test]
fn buffer_format_forms_match_the_reference_for_every_descriptor_format() {
    for target in Target::ALL {
        let forms = assembled(target, &forms(false));
        let mut runner = TestRunner::new(Config { cases: CASES, ..Config::default() });
        runner
            .run(&inputs(), |inp| {
                for (form, words) in &forms {
                    for dfmt in 0..16 {
                        for nfmt in 0..8 {
                            check(target, form, *words, dfmt, nfmt, Some(inp.sel), &inp)?;
                        }
                    }
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{target}: {e}"));
    }
}

// ---------------------------------------------------------------- fixed edges

/// Runs one MTBUF form on lane 0 only with `data` in v[2:5] over an element of 0xaa
/// bytes; returns the element's first eight bytes.
fn store_one(text: &str, data: [u32; 4]) -> u64 {
    let target = Target::Gfx942;
    let prog = Program::from_words(target, BASE, &common::assemble(target, text));
    let mut w = wave(word3([4, 5, 6, 7], 4, UINT), 1);
    for (k, &v) in data.iter().enumerate() {
        w.vgpr[2 + k][0] = v;
    }
    let mut mem = Memory::new();
    mem.write(DATA, &[0xaa; 16]).expect("fill");
    run_single_wave(&prog, &mut w, &mut mem, &mut [], 10).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut b = [0u8; 8];
    mem.read(DATA, &mut b).expect("read");
    u64::from_le_bytes(b)
}

/// Runs one MTBUF load on lane 0 over `element`; returns v[4:7].
fn load_one(text: &str, element: [u8; 16]) -> [u32; 4] {
    let target = Target::Gfx942;
    let prog = Program::from_words(target, BASE, &common::assemble(target, text));
    let mut w = wave(word3([4, 5, 6, 7], 4, UINT), 1);
    let mut mem = Memory::new();
    mem.write(DATA, &element).expect("fill");
    run_single_wave(&prog, &mut w, &mut mem, &mut [], 10).unwrap_or_else(|e| panic!("{text}: {e}"));
    [w.vgpr[4][0], w.vgpr[5][0], w.vgpr[6][0], w.vgpr[7][0]]
}

/// Hand-checked values of the decisions, independent of the reference functions above.
#[test]
fn format_decisions_hold_on_hand_checked_values() {
    let f = |x: f32| x.to_bits();
    // UNORM 8_8_8_8: clamp, scale by 255, nearest even (0.5 * 255 = 127.5 -> 128), NaN 0.
    let got = store_one("tbuffer_store_format_xyzw v[2:5], v0, s[0:3], dfmt:10, nfmt:0, 0 offen", [f(0.5), f(-3.0), f(2.0), f(f32::NAN)]);
    assert_eq!(got, 0xaaaa_aaaa_00ff_0080);
    // SNORM 16_16: -1 -> -32767 (never -32768), 1e9 -> 32767.
    let got = store_one("tbuffer_store_format_xy v[2:3], v0, s[0:3], dfmt:5, nfmt:1, 0 offen", [f(-1.0), f(1e9), 0, 0]);
    assert_eq!(got, 0xaaaa_aaaa_7fff_8001);
    // SSCALED 8_8: 2.5 -> 2 (ties to even), -1000 -> -128.
    let got = store_one("tbuffer_store_format_xy v[2:3], v0, s[0:3], dfmt:3, nfmt:3, 0 offen", [f(2.5), f(-1000.0), 0, 0]);
    assert_eq!(got, 0xaaaa_aaaa_aaaa_8002);
    // UINT 8 saturates 300 to 255; SINT 16 saturates -40000 to -32768.
    assert_eq!(store_one("tbuffer_store_format_x v2, v0, s[0:3], dfmt:1, nfmt:4, 0 offen", [300, 0, 0, 0]), 0xaaaa_aaaa_aaaa_aaff);
    assert_eq!(store_one("tbuffer_store_format_x v2, v0, s[0:3], dfmt:2, nfmt:5, 0 offen", [(-40000i32) as u32, 0, 0, 0]), 0xaaaa_aaaa_aaaa_8000);
    // 10_11_11 FLOAT (X and Y 11 bits, Z 10 bits): 1.0 -> 0x3c0, -2.0 -> 0, 1e6 -> the
    // 10-bit max (0x3df).
    let got = store_one("tbuffer_store_format_xyz v[2:4], v0, s[0:3], dfmt:6, nfmt:7, 0 offen", [f(1.0), f(-2.0), f(1e6), 0]);
    assert_eq!(got, 0xaaaa_aaaa_0000_0000 | 0x3df << 22 | 0x3c0);
    let got = store_one("tbuffer_store_format_x v2, v0, s[0:3], dfmt:6, nfmt:7, 0 offen", [f(f32::INFINITY), 0, 0, 0]);
    assert_eq!(got, 0xaaaa_aaaa_0000_07c0, "+Inf stays Inf; Y and Z are written as 0");
    // A byte-aligned format keeps the bytes of the components not stored.
    let got = store_one("tbuffer_store_format_x v2, v0, s[0:3], dfmt:12, nfmt:7, 0 offen", [f(1.0), 0, 0, 0]);
    assert_eq!(got, 0xaaaa_aaaa_aaaa_3c00);
    // A 2-bit W of 2_10_10_10 UINT saturates 7 to 3.
    let got = store_one("tbuffer_store_format_xyzw v[2:5], v0, s[0:3], dfmt:9, nfmt:4, 0 offen", [5, 2000, 0, 7]);
    assert_eq!(got, 0xaaaa_aaaa_0000_0000 | 3 << 30 | 1023 << 10 | 5);
    // Unpaired: float 8_8_8_8 is dropped.
    assert_eq!(store_one("tbuffer_store_format_x v2, v0, s[0:3], dfmt:10, nfmt:7, 0 offen", [f(1.0), 0, 0, 0]), 0xaaaa_aaaa_aaaa_aaaa);

    // Loads: the fill rule (x, 0, 0, 1) in the number format's type.
    let mut e = [0u8; 16];
    e[0] = 0xff;
    assert_eq!(load_one("tbuffer_load_format_xyzw v[4:7], v0, s[0:3], dfmt:1, nfmt:0, 0 offen", e), [f(1.0), 0, 0, f(1.0)]);
    assert_eq!(load_one("tbuffer_load_format_xyzw v[4:7], v0, s[0:3], dfmt:1, nfmt:5, 0 offen", e), [u32::MAX, 0, 0, 1]);
    // Unpaired (UNORM 32): zero everywhere, no fill.
    assert_eq!(load_one("tbuffer_load_format_xyzw v[4:7], v0, s[0:3], dfmt:4, nfmt:0, 0 offen", e), [0; 4]);
    // d16 of a 32-bit UINT saturates; of a 16-bit USCALED 65535 rounds to f16 +Inf.
    let e = [0x78, 0x56, 0x34, 0x12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(load_one("tbuffer_load_format_d16_xy v4, v0, s[0:3], dfmt:11, nfmt:4, 0 offen", e)[0], 0x0005_ffff);
    assert_eq!(load_one("tbuffer_load_format_d16_x v4, v0, s[0:3], dfmt:4, nfmt:5, 0 offen", e)[0] & 0xffff, 0x7fff);
    let e = [0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(load_one("tbuffer_load_format_d16_x v4, v0, s[0:3], dfmt:2, nfmt:2, 0 offen", e)[0] & 0xffff, 0x7c00);
}
