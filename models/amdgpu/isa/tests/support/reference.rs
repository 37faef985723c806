//! CPU references of the corpus kernels: given a sidecar's launch and input arguments,
//! the expected contents of every output buffer. A future executor test runs the code
//! object on the simulated GPU and compares against these.

use super::corpus::{ArgValue, Buffer, Sidecar};

/// Named access to a launch's arguments.
pub struct Args<'a> {
    sidecar: &'a Sidecar,
    values: &'a [ArgValue],
}

impl<'a> Args<'a> {
    fn index(&self, name: &str) -> Result<usize, String> {
        self.sidecar.args.iter().position(|arg| arg.name == name).ok_or_else(|| format!("no argument {name:?}"))
    }

    fn value(&self, name: &str) -> Result<&'a ArgValue, String> {
        let index = self.index(name)?;
        self.values.get(index).ok_or_else(|| format!("argument {name:?} has no value"))
    }

    fn u32(&self, name: &str) -> Result<u32, String> {
        match self.value(name)? {
            ArgValue::U32(v) => Ok(*v),
            other => Err(format!("{name}: expected u32, found {other:?}")),
        }
    }

    fn f32(&self, name: &str) -> Result<f32, String> {
        match self.value(name)? {
            ArgValue::F32(v) => Ok(*v),
            other => Err(format!("{name}: expected f32, found {other:?}")),
        }
    }

    fn buf_u32(&self, name: &str) -> Result<&'a [u32], String> {
        match self.value(name)? {
            ArgValue::Buffer(Buffer::U32(v)) => Ok(v),
            other => Err(format!("{name}: expected a u32 buffer, found {other:?}")),
        }
    }

    fn buf_i32(&self, name: &str) -> Result<&'a [i32], String> {
        match self.value(name)? {
            ArgValue::Buffer(Buffer::I32(v)) => Ok(v),
            other => Err(format!("{name}: expected an i32 buffer, found {other:?}")),
        }
    }

    fn buf_f32(&self, name: &str) -> Result<&'a [f32], String> {
        match self.value(name)? {
            ArgValue::Buffer(Buffer::F32(v)) => Ok(v),
            other => Err(format!("{name}: expected an f32 buffer, found {other:?}")),
        }
    }

    fn buf_f64(&self, name: &str) -> Result<&'a [f64], String> {
        match self.value(name)? {
            ArgValue::Buffer(Buffer::F64(v)) => Ok(v),
            other => Err(format!("{name}: expected an f64 buffer, found {other:?}")),
        }
    }

    fn out(&self, name: &str, buffer: Buffer) -> Result<(usize, Buffer), String> {
        Ok((self.index(name)?, buffer))
    }

    /// Total work-items of the launch in X.
    fn grid_x(&self) -> usize {
        self.sidecar.launch.grid[0] as usize
    }
}

/// Expected output buffers as (argument index, contents), for `target` (e.g. "gfx942").
pub fn expected_outputs(sidecar: &Sidecar, values: &[ArgValue], target: &str) -> Result<Vec<(usize, Buffer)>, String> {
    let args = Args { sidecar, values };
    match sidecar.reference.as_str() {
        "saxpy" => saxpy(&args),
        "int_arith" => int_arith(&args),
        "reduce_sum" => reduce_sum(&args),
        "histogram" => histogram(&args),
        "transpose" => transpose(&args),
        "wave_shuffle" => wave_shuffle(&args),
        "collatz" => collatz(&args),
        "horner_f64" => horner_f64(&args),
        "gemm16" => gemm16(&args),
        "fp8_convert" => fp8_convert(&args, target),
        "vector_add_u32" => vector_add_u32(&args),
        "reverse64" => reverse64(&args),
        "global_tables" => global_tables(&args),
        "scale_u32" => scale_u32(&args),
        "offset_u32" => offset_u32(&args),
        "ds_transpose" => ds_transpose(&args),
        other => Err(format!("no CPU reference named {other:?}")),
    }
}

fn saxpy(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (n, a) = (args.u32("n")? as usize, args.f32("a")?);
    let (x, y) = (args.buf_f32("x")?, args.buf_f32("y")?);
    let mut out = y.to_vec();
    for i in 0..n.min(args.grid_x()) {
        out[i] = a.mul_add(x[i], y[i]);
    }
    Ok(vec![args.out("y", Buffer::F32(out))?])
}

pub fn int_arith_one(x: u32, y: u32) -> u32 {
    let mut r = x.wrapping_mul(2_654_435_761) ^ (y << 5) ^ (x >> 3);
    r = r.wrapping_add(y / 7);
    r = r.wrapping_add(x % 13);
    r.wrapping_sub(x.abs_diff(y))
}

fn int_arith(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (a, b) = (args.buf_u32("a")?, args.buf_u32("b")?);
    let out = (0..args.grid_x()).map(|i| int_arith_one(a[i], b[i])).collect();
    Ok(vec![args.out("out", Buffer::U32(out))?])
}

fn reduce_sum(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let input = args.buf_u32("in")?;
    let initial = args.buf_u32("out")?;
    let sum = input[..args.grid_x()].iter().fold(initial[0], |acc, v| acc.wrapping_add(*v));
    Ok(vec![args.out("out", Buffer::U32(vec![sum]))?])
}

fn histogram(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (input, n) = (args.buf_u32("in")?, args.u32("n")? as usize);
    let mut bins = args.buf_u32("bins")?.to_vec();
    for value in &input[..n.min(args.grid_x())] {
        bins[(*value % 16) as usize] += 1;
    }
    Ok(vec![args.out("bins", Buffer::U32(bins))?])
}

fn transpose(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (width, height) = (args.u32("width")? as usize, args.u32("height")? as usize);
    let input = args.buf_u32("in")?;
    let mut out = vec![0; width * height];
    for row in 0..height {
        for col in 0..width {
            out[col * height + row] = input[row * width + col];
        }
    }
    Ok(vec![args.out("out", Buffer::U32(out))?])
}

fn wave_shuffle(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let input = args.buf_i32("in")?;
    let n = args.grid_x();
    let rotated = (0..n).map(|i| input[(i & !63) + ((i + 1) & 63)]).collect();
    let shifted = (0..n).map(|i| if i % 16 == 0 { 0 } else { input[i - 1] }).collect();
    Ok(vec![args.out("rotated", Buffer::I32(rotated))?, args.out("shifted", Buffer::I32(shifted))?])
}

pub fn collatz_steps(start: u32) -> u32 {
    let (mut x, mut count) = (start, 0u32);
    while x > 1 && count < 1000 {
        x = if x & 1 == 1 { x.wrapping_mul(3).wrapping_add(1) } else { x >> 1 };
        count += 1;
    }
    count
}

fn collatz(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (start, n) = (args.buf_u32("start")?, args.u32("n")? as usize);
    let mut steps = args.buf_u32("steps")?.to_vec();
    let mut parity = args.buf_u32("parity")?.to_vec();
    for i in 0..n.min(args.grid_x()) {
        let count = collatz_steps(start[i]);
        steps[i] = count;
        parity[i] = if i & 1 == 1 { count.wrapping_mul(3) } else { count ^ 0x55 };
    }
    Ok(vec![args.out("steps", Buffer::U32(steps))?, args.out("parity", Buffer::U32(parity))?])
}

fn horner_f64(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (x, coeff) = (args.buf_f64("x")?, args.buf_f64("coeff")?);
    let out = x[..args.grid_x()]
        .iter()
        .map(|&v| {
            let v = v.clamp(-4.0, 4.0);
            let mut acc = coeff[4];
            for c in coeff[..4].iter().rev() {
                acc = acc.mul_add(v, *c);
            }
            acc
        })
        .collect();
    Ok(vec![args.out("out", Buffer::F64(out))?])
}

fn gemm16(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (a, b) = (args.buf_f32("a")?, args.buf_f32("b")?);
    let mut c = vec![0.0f32; 256];
    for row in 0..16 {
        for col in 0..16 {
            let sum: f64 = (0..16).map(|k| f64::from(a[row * 16 + k]) * f64::from(b[k * 16 + col])).sum();
            c[row * 16 + col] = sum as f32;
        }
    }
    Ok(vec![args.out("c", Buffer::F32(c))?])
}

/// An 8-bit float format: mantissa bits, exponent bias, and whether it is an FNUZ format
/// (no negative zero: 0x80 is NaN).
#[derive(Debug, Clone, Copy)]
pub struct Minifloat {
    pub mantissa_bits: u32,
    pub bias: i32,
    pub fnuz: bool,
}

/// E4M3 as converted by gfx942 (FNUZ, bias 8) and gfx950 (OCP, bias 7).
pub fn fp8_format(target: &str) -> Minifloat {
    if target.starts_with("gfx942") {
        Minifloat { mantissa_bits: 3, bias: 8, fnuz: true }
    } else {
        Minifloat { mantissa_bits: 3, bias: 7, fnuz: false }
    }
}

/// E5M2 as converted by gfx942 (FNUZ, bias 16) and gfx950 (OCP, bias 15).
pub fn bf8_format(target: &str) -> Minifloat {
    if target.starts_with("gfx942") {
        Minifloat { mantissa_bits: 2, bias: 16, fnuz: true }
    } else {
        Minifloat { mantissa_bits: 2, bias: 15, fnuz: false }
    }
}

/// Round a finite, in-range value to the format (round to nearest, ties to even) and
/// return its encoding and its value.
pub fn quantize(x: f32, format: Minifloat) -> (u8, f32) {
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    let magnitude = f64::from(x.abs());
    let one = 1u64 << format.mantissa_bits;
    let min_exponent = 1 - format.bias;
    let exponent = if magnitude == 0.0 {
        min_exponent
    } else {
        (magnitude.log2().floor() as i32).max(min_exponent)
    };
    let ulp = 2f64.powi(exponent - format.mantissa_bits as i32);
    let mut steps = (magnitude / ulp).round_ties_even() as u64;
    let mut exponent = exponent;
    if steps == 2 * one {
        steps = one;
        exponent += 1;
    }
    let value = steps as f64 * 2f64.powi(exponent - format.mantissa_bits as i32);
    let code = if steps < one {
        steps as u8 // subnormal or zero: exponent field 0
    } else {
        (((exponent + format.bias) as u8) << format.mantissa_bits) | (steps - one) as u8
    };
    let sign = if code == 0 && format.fnuz { 0 } else { sign };
    let value = if sign != 0 { -value } else { value };
    (code | sign, value as f32)
}

fn fp8_convert(args: &Args, target: &str) -> Result<Vec<(usize, Buffer)>, String> {
    let input = args.buf_f32("in")?;
    let (fp8, bf8) = (fp8_format(target), bf8_format(target));
    let n = args.grid_x();
    let mut packed = Vec::with_capacity(n);
    let (mut fp8_out, mut bf8_out) = (Vec::with_capacity(2 * n), Vec::with_capacity(2 * n));
    for i in 0..n {
        let (lo, hi) = (input[2 * i], input[2 * i + 1]);
        let (f_lo, f_hi) = (quantize(lo, fp8), quantize(hi, fp8));
        let (b_lo, b_hi) = (quantize(lo, bf8), quantize(hi, bf8));
        packed.push(u32::from_le_bytes([f_lo.0, f_hi.0, b_lo.0, b_hi.0]));
        fp8_out.extend([f_lo.1, f_hi.1]);
        bf8_out.extend([b_lo.1, b_hi.1]);
    }
    Ok(vec![
        args.out("packed", Buffer::U32(packed))?,
        args.out("fp8_out", Buffer::F32(fp8_out))?,
        args.out("bf8_out", Buffer::F32(bf8_out))?,
    ])
}

fn vector_add_u32(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (a, b) = (args.buf_u32("a")?, args.buf_u32("b")?);
    let out = (0..args.grid_x()).map(|i| a[i].wrapping_add(b[i])).collect();
    Ok(vec![args.out("out", Buffer::U32(out))?])
}

fn reverse64(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let input = args.buf_u32("in")?;
    let out = (0..args.grid_x()).map(|i| input[(i & !63) + 63 - (i & 63)]).collect();
    Ok(vec![args.out("out", Buffer::U32(out))?])
}

fn global_tables(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    const TABLES: [[i32; 4]; 2] = [[1, 2, 3, 4], [10, 20, 30, 40]];
    let which = (args.u32("which")? & 1) as usize;
    let out = (0..args.grid_x()).map(|i| TABLES[which][i & 3] + i as i32).collect();
    Ok(vec![args.out("out", Buffer::I32(out))?])
}

fn scale_u32(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (data, factor) = (args.buf_u32("data")?, args.u32("factor")?);
    let out = data[..args.grid_x()].iter().map(|v| v.wrapping_mul(factor)).collect();
    Ok(vec![args.out("data", Buffer::U32(out))?])
}

fn offset_u32(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let (data, offset) = (args.buf_u32("data")?, args.u32("offset")?);
    let out = data[..args.grid_x()].iter().map(|v| v.wrapping_add(offset)).collect();
    Ok(vec![args.out("data", Buffer::U32(out))?])
}

/// ds_transpose.hip: LDS holds `in`; lane l's block is the 8 bytes at `8 p` (b4, b8, b16)
/// or the 12 bytes at `16 p` (b6), `p = (13 l + 5) mod 64`. Within each group of 16 lanes
/// the blocks' elements, in lane order, fill an `E x 16` matrix row by row (E elements per
/// block) and lane `i` receives column `i`, element `n` of a block being its bits
/// `width n ..`.
fn ds_transpose(args: &Args) -> Result<Vec<(usize, Buffer)>, String> {
    let lds: Vec<u8> = args.buf_u32("in")?.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut out = vec![0u32; 9 * 64];
    // (first output dword, element bits, bytes between blocks, block bytes)
    for (slot, width, stride, bytes) in [(0usize, 4usize, 8usize, 8usize), (2, 8, 8, 8), (4, 16, 8, 8), (6, 6, 16, 12)] {
        let per_block = 8 * bytes / width;
        let elements = |lane: usize| -> Vec<u128> {
            let at = stride * ((13 * lane + 5) % 64);
            let mut block = [0u8; 16];
            block[..bytes].copy_from_slice(&lds[at..at + bytes]);
            let v = u128::from_le_bytes(block);
            (0..per_block).map(|n| (v >> (width * n)) & ((1 << width) - 1)).collect()
        };
        for group in 0..4 {
            let matrix: Vec<u128> = (16 * group..16 * group + 16).flat_map(elements).collect();
            for column in 0..16 {
                let value = (0..per_block).fold(0u128, |acc, row| acc | matrix[16 * row + column] << (width * row));
                for d in 0..bytes / 4 {
                    out[9 * (16 * group + column) + slot + d] = (value >> (32 * d)) as u32;
                }
            }
        }
    }
    Ok(vec![args.out("out", Buffer::U32(out))?])
}
