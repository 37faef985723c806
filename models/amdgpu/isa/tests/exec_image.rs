//! Image instructions (MIMG, gfx90a) against references written here from the ISA
//! guide's definitions of the image resource (T#) and sampler (S#) and from the
//! texture-sampling rules it follows (point and bilinear filtering, address modes,
//! normalized coordinates, mip selection): loads with `dmask`, `dst_sel`, `d16` and the
//! mip forms, stores and their format conversion, atomics, `image_get_resinfo`,
//! `image_sample` (point, bilinear, trilinear, every clamp mode, arrays, level of
//! detail), unbound resources, and the refused features. Tiled layouts are checked
//! against ROCr's addrlib in `exec_image_layout.rs`; here a tiled image is written with
//! `image_store` and its texels found where `texel_address` says.
//!
//! Programs are assembled with llvm-mc-19 and run on one wave.

mod common;

use amdgpu_isa::exec::image::texel_address;
use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;

const BASE: u64 = 0x10_0000;
/// Where the image data lives (256-byte aligned, as the T# requires).
const IMAGE: u64 = 0x100_0000;
const IMAGE_BYTES: u64 = 4 << 20;

// ------------------------------------------------------------------- descriptors

/// IMG_DATA_FORMAT codes.
const FMT_8: u32 = 1;
const FMT_32: u32 = 4;
const FMT_32_32: u32 = 11;
const FMT_8_8_8_8: u32 = 10;
const FMT_16_16_16_16: u32 = 12;
/// IMG_NUM_FORMAT codes.
const NUM_UNORM: u32 = 0;
const NUM_UINT: u32 = 4;
const NUM_FLOAT: u32 = 7;
/// T# TYPE codes.
const TYPE_1D: u32 = 8;
const TYPE_2D: u32 = 9;
const TYPE_3D: u32 = 10;
const TYPE_2D_ARRAY: u32 = 13;
/// dst_sel codes.
const SEL_0: u32 = 0;
const SEL_1: u32 = 1;
const SEL_X: u32 = 4;
const SEL_Y: u32 = 5;
const SEL_Z: u32 = 6;
const SEL_W: u32 = 7;

/// An image resource as the ISA guide lays out its eight dwords.
#[derive(Clone, Copy)]
struct Image {
    base: u64,
    data_format: u32,
    num_format: u32,
    width: u32,
    height: u32,
    /// DEPTH + 1: 3D depth or number of slices.
    depth: u32,
    /// Row pitch in elements (linear).
    pitch: u32,
    dst_sel: [u32; 4],
    base_level: u32,
    last_level: u32,
    sw_mode: u32,
    ty: u32,
}

impl Image {
    fn linear_2d(data_format: u32, num_format: u32, width: u32, height: u32) -> Image {
        Image {
            base: IMAGE,
            data_format,
            num_format,
            width,
            height,
            depth: 1,
            pitch: width,
            dst_sel: [SEL_X, SEL_Y, SEL_Z, SEL_W],
            base_level: 0,
            last_level: 0,
            sw_mode: 0,
            ty: TYPE_2D,
        }
    }

    fn words(&self) -> [u32; 8] {
        let sel = self.dst_sel[0] | self.dst_sel[1] << 3 | self.dst_sel[2] << 6 | self.dst_sel[3] << 9;
        [
            (self.base >> 8) as u32,
            ((self.base >> 40) as u32 & 0xff) | self.data_format << 20 | self.num_format << 26,
            (self.width - 1) | (self.height - 1) << 14,
            sel | self.base_level << 12 | self.last_level << 16 | self.sw_mode << 20 | self.ty << 28,
            (self.depth - 1) | (self.pitch - 1) << 13,
            self.last_level << 28,
            0,
            0,
        ]
    }
}

/// Sampler address modes.
const WRAP: u32 = 0;
const MIRROR: u32 = 1;
const CLAMP_LAST_TEXEL: u32 = 2;
const MIRROR_ONCE_LAST_TEXEL: u32 = 3;
const CLAMP_BORDER: u32 = 6;
/// XY filters.
const POINT: u32 = 0;
const BILINEAR: u32 = 1;

#[derive(Clone, Copy)]
struct Samp {
    clamp: [u32; 3],
    unnormalized: bool,
    mag: u32,
    min: u32,
    /// Z_FILTER: 0 none, 1 point, 2 linear.
    z: u32,
    /// MIP_FILTER: 0 none, 1 point, 2 linear.
    mip: u32,
    /// BORDER_COLOR_TYPE: 0 transparent black, 1 opaque black, 2 opaque white.
    border: u32,
    max_aniso: u32,
}

impl Samp {
    fn new(clamp: u32, filter: u32) -> Samp {
        Samp { clamp: [clamp; 3], unnormalized: false, mag: filter, min: filter, z: 0, mip: 0, border: 0, max_aniso: 0 }
    }

    fn words(&self) -> [u32; 4] {
        [
            self.clamp[0] | self.clamp[1] << 3 | self.clamp[2] << 6 | self.max_aniso << 9 | (self.unnormalized as u32) << 15,
            4095 << 12,
            self.mag << 20 | self.min << 22 | self.z << 24 | self.mip << 26,
            self.border << 30,
        ]
    }
}

// ------------------------------------------------------------------- running

fn program(text: &str) -> Program {
    Program::from_words(Target::Gfx90a, BASE, &common::assemble(Target::Gfx90a, text))
}

/// A wave with EXEC `exec`, the T# in s[8:15] and the S# in s[16:19].
fn wave(image: &Image, sampler: Option<&Samp>, exec: u64) -> Wave {
    let mut w = Wave::new(BASE, 0x3f0);
    w.set_exec(exec);
    for (i, d) in image.words().iter().enumerate() {
        w.sgpr[8 + i] = *d;
    }
    if let Some(s) = sampler {
        for (i, d) in s.words().iter().enumerate() {
            w.sgpr[16 + i] = *d;
        }
    }
    w
}

fn memory() -> Memory {
    let mut mem = Memory::new();
    mem.map(IMAGE, IMAGE_BYTES).expect("map the image");
    mem
}

fn run(text: &str, w: &mut Wave, mem: &mut Memory) -> Result<(), ExecFault> {
    let p = program(text);
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let mut lds = vec![0u8; 64 * 1024];
    run_single_wave(&p, w, mem, &mut lds, 1000).map(|_| ())
}

/// Writes texel (x, y) of a linear image of `bytes`-byte elements.
fn put(mem: &mut Memory, image: &Image, x: u32, y: u32, z: u32, texel: &[u8]) {
    let rows = image.height as u64 * z as u64 + y as u64;
    let at = image.base + (rows * image.pitch as u64 + x as u64) * texel.len() as u64;
    mem.write(at, texel).expect("write a texel");
}

fn f(v: u32) -> f32 {
    f32::from_bits(v)
}

// ------------------------------------------------------------------- loads

#[test]
fn image_load_returns_the_texel_through_dst_sel_in_dmask_order() {
    // A 4 x 2 RGBA8 unorm image; texel (x, y) = (16x + y, 2x, 255, 100 + y).
    let img = Image::linear_2d(FMT_8_8_8_8, NUM_UNORM, 4, 2);
    let mut mem = memory();
    for y in 0..2 {
        for x in 0..4 {
            put(&mut mem, &img, x, y, 0, &[(16 * x + y) as u8, (2 * x) as u8, 255, (100 + y) as u8]);
        }
    }
    let mut w = wave(&img, None, 0xff);
    for lane in 0..8 {
        w.vgpr[0][lane] = lane as u32 % 4;
        w.vgpr[1][lane] = lane as u32 / 4;
    }
    run("image_load v[4:7], v[0:1], s[8:15] dmask:0xf unorm\nimage_load v[8:9], v[0:1], s[8:15] dmask:0x9 unorm", &mut w, &mut mem).expect("runs");
    for lane in 0..8 {
        let (x, y) = (lane as u32 % 4, lane as u32 / 4);
        let unorm = |v: u32| (v as f64 / 255.0) as f32;
        let want = [unorm(16 * x + y), unorm(2 * x), 1.0, unorm(100 + y)];
        let got = [f(w.vgpr[4][lane]), f(w.vgpr[5][lane]), f(w.vgpr[6][lane]), f(w.vgpr[7][lane])];
        assert_eq!(got, want, "lane {lane}");
        // dmask 0x9: R then A.
        assert_eq!([f(w.vgpr[8][lane]), f(w.vgpr[9][lane])], [want[0], want[3]], "lane {lane}");
    }
}

#[test]
fn dst_sel_reads_zero_one_and_swizzled_channels() {
    // An R32 float image read as (R, 0, 1, R) and a swapped RG pair.
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 2, 1);
    img.dst_sel = [SEL_X, SEL_0, SEL_1, SEL_X];
    let mut mem = memory();
    put(&mut mem, &img, 0, 0, 0, &2.5f32.to_le_bytes());
    put(&mut mem, &img, 1, 0, 0, &(-7.0f32).to_le_bytes());
    let mut w = wave(&img, None, 0b11);
    w.vgpr[0][1] = 1;
    run("image_load v[4:7], v0, s[8:15] dmask:0xf unorm", &mut w, &mut mem).expect("runs");
    assert_eq!([f(w.vgpr[4][0]), f(w.vgpr[5][0]), f(w.vgpr[6][0]), f(w.vgpr[7][0])], [2.5, 0.0, 1.0, 2.5]);
    assert_eq!([f(w.vgpr[4][1]), f(w.vgpr[7][1])], [-7.0, -7.0]);
    // A uint format's "one" is the integer 1.
    let mut img = Image::linear_2d(FMT_32_32, NUM_UINT, 1, 1);
    img.dst_sel = [SEL_Y, SEL_X, SEL_1, SEL_0];
    put(&mut mem, &img, 0, 0, 0, &[7, 0, 0, 0, 9, 0, 0, 0]);
    let mut w = wave(&img, None, 1);
    run("image_load v[4:7], v0, s[8:15] dmask:0xf unorm", &mut w, &mut mem).expect("runs");
    assert_eq!([w.vgpr[4][0], w.vgpr[5][0], w.vgpr[6][0], w.vgpr[7][0]], [9, 7, 1, 0]);
}

#[test]
fn d16_loads_pack_half_floats_two_per_register() {
    let img = Image::linear_2d(FMT_8_8_8_8, NUM_UNORM, 1, 1);
    let mut mem = memory();
    put(&mut mem, &img, 0, 0, 0, &[0, 255, 51, 255]);
    let mut w = wave(&img, None, 1);
    w.vgpr[5][0] = 0xdead_beef;
    run("image_load v[4:5], v[0:1], s[8:15] dmask:0x7 unorm d16", &mut w, &mut mem).expect("runs");
    // R = 0.0, G = 1.0 (0x3c00), B = 51/255 = 0.2 -> f16 0x3266 (nearest even).
    assert_eq!(w.vgpr[4][0], 0x3c00_0000);
    assert_eq!(w.vgpr[5][0] & 0xffff, 0x3266);
    assert_eq!(w.vgpr[5][0] >> 16, 0xdead, "the unused high half is kept");
}

#[test]
fn out_of_range_loads_read_a_zero_texel_and_stores_are_dropped() {
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 4, 4);
    img.dst_sel = [SEL_X, SEL_0, SEL_0, SEL_1];
    let mut mem = memory();
    for x in 0..4 {
        put(&mut mem, &img, x, 3, 0, &1.0f32.to_le_bytes());
    }
    let mut w = wave(&img, None, 0b111);
    // (4, 0) and (0, 4) are outside; (3, 3) inside.
    let coords = [(4, 0), (0, 4), (3, 3)];
    for (lane, (x, y)) in coords.iter().enumerate() {
        w.vgpr[0][lane] = *x;
        w.vgpr[1][lane] = *y;
        w.vgpr[2][lane] = 5.0f32.to_bits();
    }
    run("image_load v[4:7], v[0:1], s[8:15] dmask:0xf unorm\nimage_store v2, v[0:1], s[8:15] dmask:0x1 unorm", &mut w, &mut mem).expect("runs");
    for lane in 0..2 {
        assert_eq!([f(w.vgpr[4][lane]), f(w.vgpr[7][lane])], [0.0, 1.0], "lane {lane}: zero texel, SEL_1 one");
    }
    assert_eq!(f(w.vgpr[4][2]), 1.0);
    // Only (3, 3) was stored; nothing was written past the image.
    let mut b = [0u8; 4];
    mem.read(IMAGE + 4 * 15, &mut b).expect("read");
    assert_eq!(f32::from_le_bytes(b), 5.0);
    mem.read(IMAGE + 4 * 16, &mut b).expect("read");
    assert_eq!(b, [0; 4], "the element after the image is untouched");
}

#[test]
fn image_load_mip_addresses_the_level_of_a_linear_mip_chain() {
    // A 4 x 4 R8 unorm image with three levels: level rows follow each other with level
    // 0's pitch (rows 0..4 level 0, 4..6 level 1, 6..7 level 2).
    let mut img = Image::linear_2d(FMT_8, NUM_UNORM, 4, 4);
    img.last_level = 2;
    img.pitch = 256;
    let mut mem = memory();
    for (level, rows_before, side) in [(0u32, 0u64, 4u32), (1, 4, 2), (2, 6, 1)] {
        for y in 0..side {
            for x in 0..side {
                let v = (64 * level + 8 * y + x) as u8;
                mem.write(IMAGE + (rows_before + y as u64) * 256 + x as u64, &[v]).expect("write");
            }
        }
    }
    let mut w = wave(&img, None, 0b111);
    for (lane, (x, y, level)) in [(3u32, 3u32, 0u32), (1, 1, 1), (0, 0, 2)].iter().enumerate() {
        w.vgpr[0][lane] = *x;
        w.vgpr[1][lane] = *y;
        w.vgpr[2][lane] = *level;
    }
    run("image_load_mip v4, v[0:2], s[8:15] dmask:0x1 unorm", &mut w, &mut mem).expect("runs");
    let unorm = |v: u32| (v as f64 / 255.0) as f32;
    assert_eq!(f(w.vgpr[4][0]), unorm(8 * 3 + 3));
    assert_eq!(f(w.vgpr[4][1]), unorm(64 + 9));
    assert_eq!(f(w.vgpr[4][2]), unorm(128));
}

#[test]
fn pck_loads_return_raw_channels_zero_or_sign_extended() {
    let img = Image::linear_2d(FMT_8_8_8_8, NUM_UNORM, 1, 1);
    let mut mem = memory();
    put(&mut mem, &img, 0, 0, 0, &[0x80, 0x7f, 0xff, 0x01]);
    let mut w = wave(&img, None, 1);
    run("image_load_pck v[4:7], v0, s[8:15] dmask:0xf unorm\nimage_load_pck_sgn v[8:11], v0, s[8:15] dmask:0xf unorm", &mut w, &mut mem).expect("runs");
    assert_eq!([w.vgpr[4][0], w.vgpr[5][0], w.vgpr[6][0], w.vgpr[7][0]], [0x80, 0x7f, 0xff, 0x01]);
    assert_eq!([w.vgpr[8][0], w.vgpr[9][0], w.vgpr[10][0], w.vgpr[11][0]], [0xffff_ff80, 0x7f, u32::MAX, 1]);
}

// ------------------------------------------------------------------- stores

#[test]
fn image_store_converts_to_the_format_and_zeroes_channels_dmask_leaves_out() {
    let img = Image::linear_2d(FMT_8_8_8_8, NUM_UNORM, 2, 1);
    let mut mem = memory();
    let mut w = wave(&img, None, 0b11);
    w.vgpr[0][1] = 1;
    for (lane, rgba) in [[0.0f32, 1.0, 0.5, 2.0], [-1.0, 0.2, 0.25, 0.75]].iter().enumerate() {
        for (c, v) in rgba.iter().enumerate() {
            w.vgpr[4 + c][lane] = v.to_bits();
        }
    }
    run("image_store v[4:7], v0, s[8:15] dmask:0xf unorm", &mut w, &mut mem).expect("runs");
    let mut b = [0u8; 8];
    mem.read(IMAGE, &mut b).expect("read");
    // unorm stores clamp to [0, 1], scale by 255 and round to nearest even: 0.5 * 255 =
    // 127.5 -> 128, 0.2 * 255 = 51, 0.25 * 255 = 63.75 -> 64, 0.75 * 255 = 191.25 -> 191.
    assert_eq!(b, [0, 255, 128, 255, 0, 51, 64, 191]);
    // dmask 0x5 stores R and B from two registers and zeroes G and A.
    let mut w = wave(&img, None, 1);
    w.vgpr[4][0] = 1.0f32.to_bits();
    w.vgpr[5][0] = 1.0f32.to_bits();
    run("image_store v[4:5], v0, s[8:15] dmask:0x5 unorm", &mut w, &mut mem).expect("runs");
    mem.read(IMAGE, &mut b[..4]).expect("read");
    assert_eq!(&b[..4], &[255, 0, 255, 0]);
}

#[test]
fn a_tiled_image_round_trips_and_lies_where_the_layout_says() {
    // 37 x 23 R32 uint in SW_64KB_D_X (26), as ROCr creates a 2D hipArray.
    let mut img = Image::linear_2d(FMT_32, NUM_UINT, 37, 23);
    img.sw_mode = 26;
    img.pitch = 64;
    let mut mem = memory();
    let (w_, h_) = (37u32, 23u32);
    let mut lanes = Vec::new();
    for y in 0..h_ {
        for x in 0..w_ {
            lanes.push((x, y));
        }
    }
    for chunk in lanes.chunks(64) {
        let mut w = wave(&img, None, if chunk.len() == 64 { u64::MAX } else { (1 << chunk.len()) - 1 });
        for (lane, (x, y)) in chunk.iter().enumerate() {
            w.vgpr[0][lane] = *x;
            w.vgpr[1][lane] = *y;
            w.vgpr[2][lane] = 1000 * y + x;
        }
        run("image_store v2, v[0:1], s[8:15] dmask:0x1 unorm", &mut w, &mut mem).expect("runs");
    }
    for &(x, y) in &lanes {
        let at = texel_address(img.words(), 0, x, y, 0).expect("a bound tiled image");
        let mut b = [0u8; 4];
        mem.read(at, &mut b).expect("read");
        assert_eq!(u32::from_le_bytes(b), 1000 * y + x, "({x}, {y}) at {at:#x}");
    }
    // The swizzle is not linear: (1, 0) is not the element after (0, 0).
    let a0 = texel_address(img.words(), 0, 0, 0, 0).unwrap_or(0);
    let a1 = texel_address(img.words(), 0, 0, 1, 0).unwrap_or(0);
    assert_ne!(a1 - a0, 4 * 64, "row 1 does not start a pitch after row 0");
    let mut w = wave(&img, None, 0b11);
    w.vgpr[0][0] = 36;
    w.vgpr[1][0] = 22;
    w.vgpr[0][1] = 5;
    w.vgpr[1][1] = 17;
    run("image_load v4, v[0:1], s[8:15] dmask:0x1 unorm", &mut w, &mut mem).expect("runs");
    assert_eq!([w.vgpr[4][0], w.vgpr[4][1]], [22036, 17005]);
}

// ------------------------------------------------------------------- atomics

#[test]
fn image_atomics_read_modify_write_the_texel_and_return_the_old_value() {
    let img = Image::linear_2d(FMT_32, NUM_UINT, 4, 1);
    let mut mem = memory();
    for x in 0..4u32 {
        put(&mut mem, &img, x, 0, 0, &(10 * x + 5).to_le_bytes());
    }
    let mut w = wave(&img, None, 0b1111);
    for lane in 0..4 {
        w.vgpr[0][lane] = lane as u32;
        w.vgpr[2][lane] = 3;
    }
    run("image_atomic_add v2, v0, s[8:15] dmask:0x1 unorm glc", &mut w, &mut mem).expect("runs");
    assert_eq!((0..4).map(|l| w.vgpr[2][l]).collect::<Vec<_>>(), [5, 15, 25, 35], "old values");
    // cmpswap: data 99, compare 18: the texels are now 8, 18, 28, 38, so only texel 1
    // is replaced.
    for lane in 0..4 {
        w.vgpr[2][lane] = 99;
        w.vgpr[3][lane] = 18;
    }
    run("image_atomic_cmpswap v[2:3], v0, s[8:15] dmask:0x3 unorm glc", &mut w, &mut mem).expect("runs");
    assert_eq!((0..4).map(|l| w.vgpr[2][l]).collect::<Vec<_>>(), [8, 18, 28, 38]);
    let mut texels = [0u32; 4];
    for (x, t) in texels.iter_mut().enumerate() {
        let mut b = [0u8; 4];
        mem.read(IMAGE + 4 * x as u64, &mut b).expect("read");
        *t = u32::from_le_bytes(b);
    }
    assert_eq!(texels, [8, 99, 28, 38]);
    // 64-bit: umax on a 32_32 texel.
    let img64 = Image::linear_2d(FMT_32_32, NUM_UINT, 1, 1);
    put(&mut mem, &img64, 0, 0, 0, &0x1_0000_0005u64.to_le_bytes());
    let mut w = wave(&img64, None, 1);
    w.vgpr[2][0] = 7;
    w.vgpr[3][0] = 1;
    run("image_atomic_umax v[2:3], v0, s[8:15] dmask:0x3 unorm glc", &mut w, &mut mem).expect("runs");
    assert_eq!((w.vgpr[2][0], w.vgpr[3][0]), (5, 1));
    let mut b = [0u8; 8];
    mem.read(IMAGE, &mut b).expect("read");
    assert_eq!(u64::from_le_bytes(b), 0x1_0000_0007);
}

// ------------------------------------------------------------------- resinfo

#[test]
fn get_resinfo_reports_the_level_size_slices_and_levels() {
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 100, 37);
    img.ty = TYPE_2D_ARRAY;
    img.depth = 6;
    img.last_level = 3;
    let mut w = wave(&img, None, 0b111);
    w.vgpr[0][1] = 2;
    w.vgpr[0][2] = 4;
    let mut mem = memory();
    run("image_get_resinfo v[4:7], v0, s[8:15] dmask:0xf", &mut w, &mut mem).expect("runs");
    let lane = |l: usize| [w.vgpr[4][l], w.vgpr[5][l], w.vgpr[6][l], w.vgpr[7][l]];
    assert_eq!(lane(0), [100, 37, 6, 4]);
    assert_eq!(lane(1), [25, 9, 6, 4]);
    assert_eq!(lane(2), [0, 0, 0, 0], "a level past the view");
    let mut img3 = Image::linear_2d(FMT_32, NUM_FLOAT, 8, 4);
    img3.ty = TYPE_3D;
    img3.depth = 16;
    img3.last_level = 1;
    let mut w = wave(&img3, None, 0b11);
    w.vgpr[0][1] = 1;
    run("image_get_resinfo v[4:7], v0, s[8:15] dmask:0xf", &mut w, &mut mem).expect("runs");
    assert_eq!([w.vgpr[4][1], w.vgpr[5][1], w.vgpr[6][1], w.vgpr[7][1]], [4, 2, 8, 2]);
}

// ------------------------------------------------------------------- sampling

/// The reference of an address mode for texel index `i` of an axis of `n` texels:
/// `None` is the border.
fn address(mode: u32, i: i64, n: i64) -> Option<i64> {
    match mode {
        WRAP => Some(i.rem_euclid(n)),
        MIRROR => {
            let m = i.rem_euclid(2 * n);
            Some(if m < n { m } else { 2 * n - 1 - m })
        }
        CLAMP_LAST_TEXEL => Some(i.clamp(0, n - 1)),
        MIRROR_ONCE_LAST_TEXEL => Some((if i < 0 { -1 - i } else { i }).clamp(0, n - 1)),
        CLAMP_BORDER => (0..n).contains(&i).then_some(i),
        _ => unreachable!("the tests use these modes"),
    }
}

/// A 2D single-channel float texture, row major.
struct Texture<'a> {
    texels: &'a [f32],
    w: i64,
    h: i64,
}

/// The reference sample of `tex` at normalized (u, v): point takes texel floor(u w),
/// bilinear the four texels around (u w - 1/2, v h - 1/2) weighted by the fractions.
fn reference_sample(tex: &Texture<'_>, (u, v): (f32, f32), mode: u32, bilinear: bool, border: f32) -> f32 {
    let (w, h) = (tex.w, tex.h);
    let at = |x: i64, y: i64| match (address(mode, x, w), address(mode, y, h)) {
        (Some(x), Some(y)) => tex.texels[(y * w + x) as usize],
        _ => border,
    };
    let (x, y) = (u * w as f32, v * h as f32);
    if !bilinear {
        return at(x.floor() as i64, y.floor() as i64);
    }
    let (xs, ys) = (x - 0.5, y - 0.5);
    let (x0, y0) = (xs.floor(), ys.floor());
    let (a, b) = (xs - x0, ys - y0);
    let (x0, y0) = (x0 as i64, y0 as i64);
    (1.0 - a) * (1.0 - b) * at(x0, y0) + a * (1.0 - b) * at(x0 + 1, y0) + (1.0 - a) * b * at(x0, y0 + 1) + a * b * at(x0 + 1, y0 + 1)
}

#[test]
fn image_sample_filters_and_addresses_as_the_sampler_says() {
    let (tw, th) = (5i64, 3i64);
    let tex: Vec<f32> = (0..tw * th).map(|i| (i * i % 17) as f32 - 4.0).collect();
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, tw as u32, th as u32);
    img.dst_sel = [SEL_X, SEL_0, SEL_0, SEL_1];
    let mut mem = memory();
    for y in 0..th {
        for x in 0..tw {
            put(&mut mem, &img, x as u32, y as u32, 0, &tex[(y * tw + x) as usize].to_le_bytes());
        }
    }
    // Coordinates inside, on texel centres and edges, and outside on both sides.
    let coords: Vec<(f32, f32)> = (0..64).map(|i| (-1.3 + 0.071 * i as f32, 1.7 - 0.053 * i as f32)).collect();
    for mode in [WRAP, MIRROR, CLAMP_LAST_TEXEL, MIRROR_ONCE_LAST_TEXEL, CLAMP_BORDER] {
        for filter in [POINT, BILINEAR] {
            for border in [0u32, 2] {
                let mut s = Samp::new(mode, filter);
                s.border = border;
                let mut w = wave(&img, Some(&s), u64::MAX);
                for (lane, (u, v)) in coords.iter().enumerate() {
                    w.vgpr[0][lane] = u.to_bits();
                    w.vgpr[1][lane] = v.to_bits();
                }
                run("image_sample v[4:7], v[0:1], s[8:15], s[16:19] dmask:0xf", &mut w, &mut mem).expect("runs");
                for (lane, (u, v)) in coords.iter().enumerate() {
                    let texture = Texture { texels: &tex, w: tw, h: th };
                    let want = reference_sample(&texture, (*u, *v), mode, filter == BILINEAR, if border == 2 { 1.0 } else { 0.0 });
                    let got = f(w.vgpr[4][lane]);
                    assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "mode {mode} filter {filter} border {border} ({u}, {v}): got {got}, want {want}");
                    // G and B are SEL_0, A is SEL_1 (the border's alpha does not show through).
                    assert_eq!([f(w.vgpr[5][lane]), f(w.vgpr[6][lane]), f(w.vgpr[7][lane])], [0.0, 0.0, 1.0]);
                }
            }
        }
    }
}

#[test]
fn unnormalized_coordinates_and_d16_results() {
    let img = Image::linear_2d(FMT_16_16_16_16, NUM_FLOAT, 2, 1);
    let mut mem = memory();
    let h = |v: f32| half::f16::from_f32(v).to_bits().to_le_bytes();
    let mut texel0 = Vec::new();
    let mut texel1 = Vec::new();
    for c in [1.0f32, 2.0, 3.0, 4.0] {
        texel0.extend_from_slice(&h(c));
        texel1.extend_from_slice(&h(c * 10.0));
    }
    put(&mut mem, &img, 0, 0, 0, &texel0);
    put(&mut mem, &img, 1, 0, 0, &texel1);
    let mut s = Samp::new(CLAMP_LAST_TEXEL, BILINEAR);
    s.unnormalized = true;
    let mut w = wave(&img, Some(&s), 0b11);
    // x = 1.0 in texels: halfway between the two texel centres.
    for lane in 0..2 {
        w.vgpr[0][lane] = 1.0f32.to_bits();
        w.vgpr[1][lane] = 0.5f32.to_bits();
    }
    run("image_sample v[4:5], v[0:1], s[8:15], s[16:19] dmask:0xf d16", &mut w, &mut mem).expect("runs");
    let half = |bits: u32| half::f16::from_bits(bits as u16).to_f32();
    assert_eq!([half(w.vgpr[4][0]), half(w.vgpr[4][0] >> 16), half(w.vgpr[5][0]), half(w.vgpr[5][0] >> 16)], [5.5, 11.0, 16.5, 22.0]);
}

#[test]
fn trilinear_3d_sampling_and_array_slices() {
    // A 2 x 2 x 2 R32 float volume: texel (x, y, z) = x + 2y + 4z.
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 2, 2);
    img.ty = TYPE_3D;
    img.depth = 2;
    let mut mem = memory();
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..2 {
                put(&mut mem, &img, x, y, z, &((x + 2 * y + 4 * z) as f32).to_le_bytes());
            }
        }
    }
    let mut s = Samp::new(CLAMP_LAST_TEXEL, BILINEAR);
    s.z = 0; // Z_FILTER NONE filters depth as the XY filter does.
    let mut w = wave(&img, Some(&s), 1);
    // The centre of the volume: the average of all eight texels.
    for r in 0..3 {
        w.vgpr[r][0] = 0.5f32.to_bits();
    }
    run("image_sample v4, v[0:2], s[8:15], s[16:19] dmask:0x1", &mut w, &mut mem).expect("runs");
    assert_eq!(f(w.vgpr[4][0]), 3.5);
    // Z_FILTER POINT: the nearest slice only (z = 0.5 * 2 = 1.0 -> slice 1).
    s.z = 1;
    let mut w = wave(&img, Some(&s), 1);
    for r in 0..3 {
        w.vgpr[r][0] = 0.5f32.to_bits();
    }
    run("image_sample v4, v[0:2], s[8:15], s[16:19] dmask:0x1", &mut w, &mut mem).expect("runs");
    assert_eq!(f(w.vgpr[4][0]), 5.5);
    // A 1 x 1 array of three slices: the slice coordinate rounds to nearest even and
    // clamps to the slices.
    let mut arr = Image::linear_2d(FMT_32, NUM_FLOAT, 1, 1);
    arr.ty = TYPE_2D_ARRAY;
    arr.depth = 3;
    for z in 0..3 {
        put(&mut mem, &arr, 0, 0, z, &(10.0 * (z + 1) as f32).to_le_bytes());
    }
    let mut w = wave(&arr, Some(&Samp::new(CLAMP_LAST_TEXEL, POINT)), 0b1111);
    for (lane, slice) in [0.5f32, 1.5, 7.0, -2.0].iter().enumerate() {
        w.vgpr[0][lane] = 0.5f32.to_bits();
        w.vgpr[1][lane] = 0.5f32.to_bits();
        w.vgpr[2][lane] = slice.to_bits();
    }
    run("image_sample v4, v[0:2], s[8:15], s[16:19] dmask:0x1 da", &mut w, &mut mem).expect("runs");
    assert_eq!((0..4).map(|l| f(w.vgpr[4][l])).collect::<Vec<_>>(), [10.0, 30.0, 30.0, 10.0]);
}

#[test]
fn the_quad_level_of_detail_picks_the_filter_and_the_mip_level() {
    // A 4 x 1 1D R32 float image with 3 levels (4, 2, 1 texels): level l's texels hold
    // 100 l + x.
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 4, 1);
    img.ty = TYPE_1D;
    img.last_level = 2;
    img.pitch = 64;
    let mut mem = memory();
    for (level, n) in [(0u32, 4u32), (1, 2), (2, 1)] {
        for x in 0..n {
            mem.write(IMAGE + (level as u64 * 64 + x as u64) * 4, &((100 * level + x) as f32).to_le_bytes()).expect("write");
        }
    }
    let mut s = Samp::new(CLAMP_LAST_TEXEL, POINT);
    s.mip = 1; // MIP_FILTER POINT
    let mut w = wave(&img, Some(&s), 0xff);
    // Quad 0 steps a quarter texel of level 0 per lane (ddx 1/4, ddy 1/2 texel: λ = -1,
    // level 0); quad 1 steps one texel (ddx 1, ddy 2: λ = 1, level 1).
    for lane in 0..4 {
        w.vgpr[0][lane] = (0.125 + lane as f32 / 16.0).to_bits();
        w.vgpr[0][4 + lane] = (0.125 + lane as f32 / 4.0).to_bits();
    }
    run("image_sample v4, v0, s[8:15], s[16:19] dmask:0x1", &mut w, &mut mem).expect("runs");
    let got: Vec<f32> = (0..8).map(|l| f(w.vgpr[4][l])).collect();
    // Level 0: u = 0.125, 0.1875, 0.25, 0.3125 -> texels floor(4u) = 0, 0, 1, 1.
    assert_eq!(&got[..4], &[0.0, 0.0, 1.0, 1.0]);
    // Level 1 (2 texels): u = 0.125, 0.375, 0.625, 0.875 -> texels floor(2u) = 0, 0, 1, 1.
    assert_eq!(&got[4..], &[100.0, 100.0, 101.0, 101.0]);
}

// ------------------------------------------------------------------- edges

#[test]
fn an_unbound_resource_reads_zero_and_writes_nothing() {
    // TYPE 0 is a buffer type: not an image.
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 4, 4);
    img.ty = 0;
    img.dst_sel = [SEL_X, SEL_1, SEL_0, SEL_W];
    let mut mem = memory();
    let mut w = wave(&img, Some(&Samp::new(WRAP, POINT)), 1);
    w.vgpr[8][0] = 1.0f32.to_bits();
    run(
        "image_load v[4:7], v[0:1], s[8:15] dmask:0xf unorm\nimage_store v8, v[0:1], s[8:15] dmask:0x1 unorm\nimage_sample v[10:13], v[0:1], s[8:15], s[16:19] dmask:0xf\nimage_get_resinfo v[14:17], v0, s[8:15] dmask:0xf",
        &mut w,
        &mut mem,
    )
    .expect("runs");
    assert_eq!([w.vgpr[4][0], w.vgpr[5][0], w.vgpr[6][0], w.vgpr[7][0]], [0, 1.0f32.to_bits(), 0, 0]);
    assert_eq!([w.vgpr[10][0], w.vgpr[11][0]], [0, 1.0f32.to_bits()]);
    assert_eq!([w.vgpr[14][0], w.vgpr[15][0], w.vgpr[16][0], w.vgpr[17][0]], [0; 4]);
    let mut b = [0u8; 4];
    mem.read(IMAGE, &mut b).expect("read");
    assert_eq!(b, [0; 4]);
}

#[test]
fn anisotropic_filtering_is_refused_by_name() {
    let img = Image::linear_2d(FMT_32, NUM_FLOAT, 4, 4);
    let mut s = Samp::new(WRAP, BILINEAR);
    s.max_aniso = 2;
    let mut w = wave(&img, Some(&s), 1);
    let mut mem = memory();
    let err = run("image_sample v4, v[0:1], s[8:15], s[16:19] dmask:0x1", &mut w, &mut mem).expect_err("refused");
    match err {
        ExecFault::Unsupported { mnemonic, .. } => assert!(mnemonic.contains("anisotropic"), "{mnemonic}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

// ------------------------------------------------------------------- more modes

const FMT_8_8: u32 = 3;
const FMT_5_6_5: u32 = 16;
const NUM_SRGB: u32 = 9;
const TYPE_CUBE: u32 = 11;
const CLAMP_HALF_BORDER: u32 = 4;
const MIRROR_ONCE_HALF_BORDER: u32 = 5;
const MIRROR_ONCE_BORDER: u32 = 7;

/// Runs `text` on a wave over `img` (and sampler `s`) with `setup` filling its VGPRs.
fn run_with(img: &Image, s: Option<&Samp>, exec: u64, mem: &mut Memory, text: &str, setup: impl Fn(&mut Wave)) -> Wave {
    let mut w = wave(img, s, exec);
    setup(&mut w);
    run(text, &mut w, mem).expect("runs");
    w
}

#[test]
fn a16_packs_two_coordinates_per_register_and_lwe_writes_no_status() {
    let img = Image::linear_2d(FMT_32, NUM_UINT, 8, 8);
    let mut mem = memory();
    for y in 0..8 {
        for x in 0..8 {
            put(&mut mem, &img, x, y, 0, &(10 * y + x).to_le_bytes());
        }
    }
    let w = run_with(&img, None, 0b11, &mut mem, "image_load v4, v0, s[8:15] dmask:0x1 unorm a16 lwe", |w| {
        w.vgpr[0][0] = 3 | 5 << 16;
        w.vgpr[0][1] = 7 | 1 << 16;
        w.vgpr[5][0] = 0xdead;
        w.vgpr[5][1] = 0xdead;
    });
    assert_eq!([w.vgpr[4][0], w.vgpr[4][1]], [53, 17]);
    assert_eq!([w.vgpr[5][0], w.vgpr[5][1]], [0xdead, 0xdead], "no status dword after the data");
    // a16 sample coordinates are f16: (0.5, 0.25) -> texel (4, 2) of the float view.
    let mut fimg = img;
    fimg.num_format = NUM_FLOAT;
    for y in 0..8 {
        for x in 0..8 {
            put(&mut mem, &fimg, x, y, 0, &((10 * y + x) as f32).to_le_bytes());
        }
    }
    let w = run_with(&fimg, Some(&Samp::new(CLAMP_LAST_TEXEL, POINT)), 1, &mut mem, "image_sample v4, v0, s[8:15], s[16:19] dmask:0x1 a16", |w| {
        w.vgpr[0][0] = 0x3800 | 0x3400 << 16;
    });
    assert_eq!(f(w.vgpr[4][0]), 24.0);
}

/// The reference of the border-limited modes on one axis: the texel of index `i`, or
/// `None` for the border; half-border modes first clamp the coordinate `c` to half a
/// texel past the edge (mirror-once modes mirror it about 0 first).
fn mirror_once_or_border(mode: u32, c: f32, n: i64, bilinear: bool) -> Vec<(Option<i64>, f32)> {
    let c = match mode {
        CLAMP_HALF_BORDER => c.clamp(-0.5, n as f32 + 0.5),
        MIRROR_ONCE_HALF_BORDER => c.abs().min(n as f32 + 0.5),
        _ => c,
    };
    let texel = |i: i64| -> Option<i64> {
        let m = if matches!(mode, MIRROR_ONCE_LAST_TEXEL | MIRROR_ONCE_HALF_BORDER | MIRROR_ONCE_BORDER) && i < 0 { -1 - i } else { i };
        match mode {
            MIRROR_ONCE_LAST_TEXEL => Some(m.clamp(0, n - 1)),
            _ => (0..n).contains(&m).then_some(m),
        }
    };
    if !bilinear {
        return vec![(texel(c.floor() as i64), 1.0)];
    }
    let s = c - 0.5;
    let i0 = s.floor();
    let a = s - i0;
    vec![(texel(i0 as i64), 1.0 - a), (texel(i0 as i64 + 1), a)]
}

#[test]
fn mirror_once_and_half_border_address_modes() {
    // A 1D image of 4 floats: 1, 2, 4, 8; border opaque white (1.0).
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 4, 1);
    img.ty = TYPE_1D;
    let texels = [1.0f32, 2.0, 4.0, 8.0];
    let mut mem = memory();
    for (x, v) in texels.iter().enumerate() {
        put(&mut mem, &img, x as u32, 0, 0, &v.to_le_bytes());
    }
    let coords: Vec<f32> = (0..64).map(|i| -1.6 + 0.05 * i as f32).collect();
    for mode in [MIRROR_ONCE_LAST_TEXEL, CLAMP_HALF_BORDER, MIRROR_ONCE_HALF_BORDER, MIRROR_ONCE_BORDER] {
        for filter in [POINT, BILINEAR] {
            let mut s = Samp::new(mode, filter);
            s.border = 2;
            let w = run_with(&img, Some(&s), u64::MAX, &mut mem, "image_sample v4, v0, s[8:15], s[16:19] dmask:0x1", |w| {
                for (lane, u) in coords.iter().enumerate() {
                    w.vgpr[0][lane] = u.to_bits();
                }
            });
            for (lane, u) in coords.iter().enumerate() {
                let want: f32 = mirror_once_or_border(mode, u * 4.0, 4, filter == BILINEAR)
                    .iter()
                    .map(|(t, weight)| weight * t.map_or(1.0, |i| texels[i as usize]))
                    .sum();
                let got = f(w.vgpr[4][lane]);
                assert!((got - want).abs() <= 1e-5, "mode {mode} filter {filter} u {u}: got {got}, want {want}");
            }
        }
    }
}

#[test]
fn min_and_max_filter_modes_take_the_extreme_of_the_footprint() {
    let img = Image::linear_2d(FMT_32, NUM_FLOAT, 2, 2);
    let mut mem = memory();
    for (i, v) in [3.0f32, -1.0, 7.0, 2.0].iter().enumerate() {
        put(&mut mem, &img, i as u32 % 2, i as u32 / 2, 0, &v.to_le_bytes());
    }
    let mut out = Vec::new();
    for mode in [1u32, 2, 0] {
        let mut words = Samp::new(CLAMP_LAST_TEXEL, BILINEAR).words();
        words[0] |= mode << 29; // FILTER_MODE
        let mut w = wave(&img, None, 1);
        for (i, d) in words.iter().enumerate() {
            w.sgpr[16 + i] = *d;
        }
        w.vgpr[0][0] = 0.5f32.to_bits();
        w.vgpr[1][0] = 0.5f32.to_bits();
        run("image_sample v4, v[0:1], s[8:15], s[16:19] dmask:0x1", &mut w, &mut mem).expect("runs");
        out.push(f(w.vgpr[4][0]));
    }
    assert_eq!(out, [-1.0, 7.0, 2.75], "min, max, blend");
}

#[test]
fn the_border_color_follows_bc_swizzle_into_the_texel_channels() {
    // An RA8 image read as (R, 0, 0, A) from channels (X, Y): BC_SWIZZLE XWYZ puts the
    // border's alpha in channel Y, so opaque black reads alpha 1.
    let mut img = Image::linear_2d(FMT_8_8, NUM_UNORM, 2, 2);
    img.dst_sel = [SEL_X, SEL_0, SEL_0, SEL_Y];
    let mut s = Samp::new(CLAMP_BORDER, POINT);
    s.border = 1;
    let mut mem = memory();
    let sample = |bc: u32, mem: &mut Memory| -> [f32; 4] {
        let mut words = img.words();
        words[4] |= bc << 29;
        let mut w = wave(&img, Some(&s), 1);
        for (i, d) in words.iter().enumerate() {
            w.sgpr[8 + i] = *d;
        }
        w.vgpr[0][0] = (-0.5f32).to_bits();
        w.vgpr[1][0] = 0.5f32.to_bits();
        run("image_sample v[4:7], v[0:1], s[8:15], s[16:19] dmask:0xf", &mut w, mem).expect("runs");
        [f(w.vgpr[4][0]), f(w.vgpr[5][0]), f(w.vgpr[6][0]), f(w.vgpr[7][0])]
    };
    assert_eq!(sample(1, &mut mem), [0.0, 0.0, 0.0, 1.0], "BC_SWIZZLE XWYZ");
    assert_eq!(sample(0, &mut mem), [0.0, 0.0, 0.0, 0.0], "BC_SWIZZLE XYZW leaves alpha in channel W, which dst_sel does not read");
}

#[test]
fn srgb_and_packed_16_bit_formats() {
    // sRGB: R, G, B decode with the sRGB curve, A is linear; stores encode.
    let srgb = |c: f64| if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
    let img = Image::linear_2d(FMT_8_8_8_8, NUM_SRGB, 2, 1);
    let mut mem = memory();
    put(&mut mem, &img, 0, 0, 0, &[188, 10, 255, 128]);
    let w = run_with(&img, None, 0b11, &mut mem, "image_load v[4:7], v0, s[8:15] dmask:0xf unorm\nimage_store v[8:11], v0, s[8:15] dmask:0xf unorm", |w| {
        w.vgpr[0][1] = 1;
        for (c, v) in [0.5f32, 0.0, 1.0, 0.5].iter().enumerate() {
            w.vgpr[8 + c][1] = v.to_bits();
        }
    });
    let want = [srgb(188.0 / 255.0) as f32, srgb(10.0 / 255.0) as f32, 1.0, (128.0f64 / 255.0) as f32];
    assert_eq!([f(w.vgpr[4][0]), f(w.vgpr[5][0]), f(w.vgpr[6][0]), f(w.vgpr[7][0])], want);
    let mut b = [0u8; 4];
    mem.read(IMAGE + 4, &mut b).expect("read");
    // 0.5 linear is 0.7354 in sRGB: 187.5 -> 188; alpha 0.5 -> 127.5 -> 128.
    assert_eq!(b, [188, 0, 255, 128]);
    // 5_6_5 unorm: X is the low 5 bits, Y the middle 6, Z the top 5.
    let img = Image::linear_2d(FMT_5_6_5, NUM_UNORM, 1, 1);
    put(&mut mem, &img, 0, 0, 0, &(31u16 | 21 << 5 | 1 << 11).to_le_bytes());
    let w = run_with(&img, None, 1, &mut mem, "image_load v[4:7], v0, s[8:15] dmask:0xf unorm", |_| {});
    assert_eq!(
        [f(w.vgpr[4][0]), f(w.vgpr[5][0]), f(w.vgpr[6][0]), f(w.vgpr[7][0])],
        [1.0, (21.0f64 / 63.0) as f32, (1.0f64 / 31.0) as f32, 1.0]
    );
}

#[test]
fn integer_formats_sample_the_nearest_texel() {
    let img = Image::linear_2d(FMT_32, NUM_UINT, 2, 1);
    let mut mem = memory();
    put(&mut mem, &img, 0, 0, 0, &10u32.to_le_bytes());
    put(&mut mem, &img, 1, 0, 0, &20u32.to_le_bytes());
    let mut s = Samp::new(CLAMP_LAST_TEXEL, BILINEAR);
    s.unnormalized = true;
    let w = run_with(&img, Some(&s), 0b11, &mut mem, "image_sample v4, v[0:1], s[8:15], s[16:19] dmask:0x1", |w| {
        w.vgpr[0][0] = 0.9f32.to_bits();
        w.vgpr[0][1] = 1.2f32.to_bits();
    });
    assert_eq!([w.vgpr[4][0], w.vgpr[4][1]], [10, 20]);
}

#[test]
fn views_start_at_base_level_and_base_array() {
    // A 2D array of 4 slices of 4 x 4 with 2 levels, linear; the view starts at level 1
    // and slice 2.
    let mut img = Image::linear_2d(FMT_32, NUM_UINT, 4, 4);
    img.ty = TYPE_2D_ARRAY;
    img.depth = 4;
    img.pitch = 64;
    img.last_level = 1;
    img.base_level = 1;
    let mut words = img.words();
    words[5] |= 2; // BASE_ARRAY
    // Slice stride: pitch * (4 + 2 rows of the two levels) elements.
    let slice = 64 * 6 * 4u64;
    let mut mem = memory();
    for z in 0..4u64 {
        for y in 0..2u64 {
            for x in 0..2u64 {
                mem.write(IMAGE + z * slice + ((4 + y) * 64 + x) * 4, &(1000 * z + 10 * y + x).to_le_bytes()[..4]).expect("write");
            }
        }
    }
    let mut w = wave(&img, None, 0b111);
    for (i, d) in words.iter().enumerate() {
        w.sgpr[8 + i] = *d;
    }
    for (lane, (x, y, z)) in [(1u32, 1u32, 0u32), (0, 1, 1), (0, 0, 2)].iter().enumerate() {
        w.vgpr[0][lane] = *x;
        w.vgpr[1][lane] = *y;
        w.vgpr[2][lane] = *z;
    }
    run("image_load v4, v[0:2], s[8:15] dmask:0x1 unorm da", &mut w, &mut mem).expect("runs");
    // Slice 2 is out of the view's two slices (2, 3).
    assert_eq!([w.vgpr[4][0], w.vgpr[4][1], w.vgpr[4][2]], [2011, 3010, 0]);
}

#[test]
fn cube_faces_and_layers_select_their_slice() {
    // A cube array of two cubes of 1 x 1 faces: slice 6 l + f holds 10 l + f.
    let mut img = Image::linear_2d(FMT_32, NUM_FLOAT, 1, 1);
    img.ty = TYPE_CUBE;
    img.depth = 12;
    let mut mem = memory();
    for z in 0..12u32 {
        put(&mut mem, &img, 0, 0, z, &((10 * (z / 6) + z % 6) as f32).to_le_bytes());
    }
    let w = run_with(&img, Some(&Samp::new(CLAMP_LAST_TEXEL, POINT)), 0xfff, &mut mem, "image_sample v4, v[0:2], s[8:15], s[16:19] dmask:0x1 da", |w| {
        for lane in 0..12 {
            w.vgpr[0][lane] = 0.5f32.to_bits();
            w.vgpr[1][lane] = 0.5f32.to_bits();
            // The face coordinate is 8 * layer + face.
            w.vgpr[2][lane] = ((8 * (lane / 6) + lane % 6) as f32).to_bits();
        }
    });
    let got: Vec<f32> = (0..12).map(|l| f(w.vgpr[4][l])).collect();
    assert_eq!(got, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
}

#[test]
fn d16_stores_and_atomics_outside_the_image() {
    let img = Image::linear_2d(FMT_16_16_16_16, NUM_FLOAT, 1, 1);
    let mut mem = memory();
    run_with(&img, None, 1, &mut mem, "image_store v[4:5], v0, s[8:15] dmask:0xf unorm d16", |w| {
        w.vgpr[4][0] = 0x4000_3c00; // 2.0, 1.0
        w.vgpr[5][0] = 0xc000_3800; // -2.0, 0.5
    });
    let mut b = [0u8; 8];
    mem.read(IMAGE, &mut b).expect("read");
    assert_eq!(u64::from_le_bytes(b), 0xc000_3800_4000_3c00);
    let img = Image::linear_2d(FMT_32, NUM_UINT, 2, 1);
    put(&mut mem, &img, 0, 0, 0, &5u32.to_le_bytes());
    let w = run_with(&img, None, 0b11, &mut mem, "image_atomic_add v2, v0, s[8:15] dmask:0x1 unorm glc", |w| {
        w.vgpr[0][1] = 9; // outside
        w.vgpr[2][0] = 1;
        w.vgpr[2][1] = 1;
    });
    assert_eq!([w.vgpr[2][0], w.vgpr[2][1]], [5, 0], "an out-of-range lane returns 0");
}
