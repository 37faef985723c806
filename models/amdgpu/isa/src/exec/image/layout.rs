//! Where a texel lives: the byte address of element (level, x, y, z/slice) of an image,
//! for the linear layout and the gfx9 tiled ("swizzle") modes.
//!
//! The hardware and ROCr's image code (through AMD's addrlib, `Gfx9Lib`) must agree on
//! the layout, so this follows addrlib's gfx9 rules, restated here:
//!
//! - **Linear** (`SW_LINEAR`): rows of PITCH + 1 elements; a slice (array layer, 3D
//!   depth slice) holds every mip level stacked vertically (level `l` starts after the
//!   rows of levels `0..l`, a level's row count being the previous one's halved and
//!   rounded up), all with level 0's pitch; slices follow each other.
//! - **Tiled**: the image is cut into blocks of 256 B, 4 KiB or 64 KiB (from the mode);
//!   blocks are laid out row by row over a "mip chain" area whose pitch and height are
//!   level 0's, rounded up to whole blocks (plus one column or row of blocks for levels
//!   1 and up when the image has mip levels). Inside a block an *equation* maps each
//!   address bit to one bit of x, y or z:
//!   - the first 256 B (thin modes) or 1 KiB (thick modes: 3D images in a `_S` or `_Z`
//!     mode) follow a fixed pattern per swizzle kind and element size (the `MICRO_*`
//!     tables below; a 3D image in a `_D` mode is thin, each slice in the standard
//!     pattern);
//!   - the bits above alternate y, x (thin: even bits y, odd bits x) or x, z, y (thick:
//!     bit `i` takes x, z, y for `i % 3` = 0, 1, 2), each coordinate continuing where
//!     the micro pattern left it; `_Z` thin modes instead interleave x and y from the
//!     element bits up to bit 6 and continue alternately from there.
//!   - Mip levels of a mip-mapped image are placed in the chain area at block positions
//!     walked from level 0 (right of, or below, the previous ones, by the image's major
//!     axis), until a level is small enough for the "mip tail": the last block, where
//!     the remaining levels sit at fixed offsets (2048, 1024, ... 256-byte units).
//!
//! **Decision (documented in the module docs of `image`):** the simulated GPU reports
//! `GB_ADDR_CONFIG` [`GB_ADDR_CONFIG`] = 0 to the runtime (one pipe, one bank, one shader
//! engine, one render backend per engine, 256-byte pipe interleave). With one pipe and
//! one bank the `_X` and `_T` modes' pipe/bank XOR terms are empty, so they address
//! exactly as their plain counterparts, and so does ROCr's addrlib, which reads the same
//! value. Multisampled images and the variable-block modes are not laid out
//! (`LayoutError`).

use super::descriptor::{ImageResource, ImageType, SwizzleKind};

/// The `GB_ADDR_CONFIG` value the simulated gfx9 GPU reports (KFD `GET_TILE_CONFIG`):
/// every field 0, that is one pipe, one bank, one shader engine, one render backend per
/// engine, 256-byte pipe interleave, one compressed fragment. The tiled layouts here
/// assume it.
pub const GB_ADDR_CONFIG: u32 = 0;

/// Why an image cannot be addressed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum LayoutError {
    /// A layout the model does not implement (the text names it).
    Unsupported(&'static str),
}

/// One source bit of a block equation: coordinate (0 x, 1 y, 2 z) and bit index.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Src {
    coord: u8,
    bit: u8,
}

const fn x(bit: u8) -> Src {
    Src { coord: 0, bit }
}
const fn y(bit: u8) -> Src {
    Src { coord: 1, bit }
}
const fn z(bit: u8) -> Src {
    Src { coord: 2, bit }
}

/// Thin 256-byte patterns, per element size (1, 2, 4, 8, 16 bytes): the sources of the
/// address bits above the byte-in-element bits, lowest first.
const MICRO_STANDARD: [&[Src]; 5] = [
    &[x(0), x(1), x(2), x(3), y(0), y(1), y(2), y(3)],
    &[x(0), x(1), x(2), y(0), y(1), y(2), x(3)],
    &[x(0), x(1), y(0), y(1), y(2), x(2)],
    &[x(0), y(0), y(1), x(1), x(2)],
    &[y(0), y(1), x(0), x(1)],
];
const MICRO_DISPLAY: [&[Src]; 5] = [
    &[x(0), x(1), x(2), y(1), y(0), y(2), x(3), y(3)],
    &[x(0), x(1), x(2), y(0), y(1), y(2), x(3)],
    &[x(0), x(1), y(0), x(2), y(1), y(2)],
    &[x(0), y(0), x(1), x(2), y(1)],
    &[x(0), y(0), x(1), y(1)],
];
/// Rotated: 16-byte elements have no rotated mode.
const MICRO_ROTATED: [&[Src]; 4] = [
    &[y(0), y(1), y(2), x(1), x(0), x(2), x(3), y(3)],
    &[y(0), y(1), y(2), x(0), x(1), x(2), x(3)],
    &[y(0), y(1), x(0), y(2), x(1), x(2)],
    &[y(0), x(0), y(1), x(1), x(2)],
];
/// Thick 1 KiB patterns (3D images in `_Z` and `_S` modes).
const MICRO_THICK_Z: [&[Src]; 5] = [
    &[x(0), y(0), x(1), y(1), z(0), z(1), x(2), z(2), y(2), x(3)],
    &[x(0), y(0), x(1), y(1), z(0), z(1), z(2), y(2), x(2)],
    &[x(0), y(0), x(1), z(0), y(1), z(1), y(2), x(2)],
    &[x(0), y(0), z(0), x(1), z(1), y(1), x(2)],
    &[x(0), y(0), z(0), z(1), y(1), x(1)],
];
const MICRO_THICK_STANDARD: [&[Src]; 5] = [
    &[x(0), x(1), x(2), x(3), y(0), y(1), z(0), z(1), z(2), y(2)],
    &[x(0), x(1), x(2), y(0), y(1), z(0), z(1), z(2), y(2)],
    &[x(0), x(1), y(0), y(1), z(0), z(1), y(2), x(2)],
    &[x(0), y(0), y(1), z(0), z(1), x(1), x(2)],
    &[y(0), y(1), z(0), z(1), x(0), x(1)],
];

/// Log2 of the 256-byte thin micro block's width and height per element size.
const MICRO_2D_LOG2: [(u32, u32); 5] = [(4, 4), (4, 3), (3, 3), (3, 2), (2, 2)];
/// Log2 of the 1 KiB thick micro block's width, height and depth per element size.
const MICRO_3D_LOG2: [(u32, u32, u32); 5] = [(4, 3, 3), (3, 3, 3), (3, 3, 2), (3, 2, 2), (2, 2, 2)];
/// Mip-tail level offsets in 256-byte units, indexed by `level in tail + 20 - log2(block)`.
const MIP_TAIL_OFFSET_256B: [u32; 16] = [2048, 1024, 512, 256, 128, 64, 32, 16, 8, 6, 5, 4, 3, 2, 1, 0];

/// A block equation: the source of each address bit from the element bits up to the
/// block size (at most 16 bits: a 64 KiB block of 1-byte elements). Fixed capacity, so
/// that addressing an image allocates nothing.
#[derive(Clone, Copy, Debug)]
struct Equation {
    bits: [Src; 16],
    len: usize,
}

impl Equation {
    fn new() -> Equation {
        Equation { bits: [x(0); 16], len: 0 }
    }

    fn push(&mut self, s: Src) {
        // Block sizes are at most 2^16 bytes: at most 16 equation bits.
        if self.len < self.bits.len() {
            self.bits[self.len] = s;
            self.len += 1;
        }
    }

    /// The byte offset inside a block of element (x, y, z), shifted by the element size.
    fn offset(&self, coords: [u32; 3], log2_bytes: u32) -> u64 {
        let mut out = 0u64;
        for (i, s) in self.bits[..self.len].iter().enumerate() {
            let bit = (coords[s.coord as usize] >> s.bit) & 1;
            out |= (bit as u64) << (log2_bytes as usize + i);
        }
        out
    }
}

/// Tiled-layout parameters of an image.
#[derive(Clone, Debug)]
struct Tiling {
    block_log2: u32,
    /// Block width, height, depth in elements (log2).
    block: [u32; 3],
    thick: bool,
    equation: Equation,
    /// Pitch and height of the mip chain area, in blocks.
    chain_blocks: [u32; 2],
    /// Level 0's padded dimensions (elements; depth in slices), as the mip placement
    /// walk starts from them.
    padded: [u32; 3],
    /// The mip tail's largest level dimensions.
    tail: [u32; 3],
    levels: u32,
}

/// How to find the texels of one image.
#[derive(Clone, Debug)]
pub(crate) struct Surface {
    base: u64,
    log2_bytes: u32,
    bytes: u32,
    layout: Layout,
}

#[derive(Clone, Debug)]
enum Layout {
    /// Row pitch in elements, rows before each level (at most 16 levels: the T# level
    /// fields have 4 bits), bytes per slice.
    Linear { pitch: u64, level_rows: [u64; 16], slice_bytes: u64 },
    Tiled(Tiling),
}

impl Surface {
    /// The layout of `res`, whose elements are `bytes` bytes.
    pub(crate) fn new(res: &ImageResource, bytes: u32) -> Result<Surface, LayoutError> {
        let kind = res.kind.unwrap_or(ImageType::D2);
        if kind.msaa() {
            return Err(LayoutError::Unsupported("multisampled image (T# TYPE 2D_MSAA / 2D_MSAA_ARRAY)"));
        }
        let levels = res.max_mip.max(res.last_level) + 1;
        let [w0, h0, _] = res.level_dims(0);
        let slices = if kind == ImageType::D3 || kind.layered() { res.depth } else { 1 };
        if res.swizzle == super::descriptor::SwizzleMode::LINEAR {
            // Each level's rows follow the previous level's; the level heights of the
            // chain halve rounding up (addrlib's RoundHalf), unlike the level sizes.
            let mut level_rows = [0u64; 16];
            let (mut rows, mut height) = (0u64, h0 as u64);
            for at in level_rows.iter_mut().take(levels as usize) {
                *at = rows;
                rows += height;
                height = height.div_ceil(2).max(1);
            }
            let pitch = res.pitch as u64;
            return Ok(Surface {
                base: res.base,
                log2_bytes: bytes.trailing_zeros(),
                bytes,
                layout: Layout::Linear { pitch, level_rows, slice_bytes: pitch * rows * bytes as u64 },
            });
        }
        if !bytes.is_power_of_two() || bytes > 16 {
            return Err(LayoutError::Unsupported("tiled image with a 12-byte element (32_32_32 is linear only)"));
        }
        let Some(block_log2) = res.swizzle.block_bytes_log2() else {
            return Err(LayoutError::Unsupported("variable-block swizzle mode (T# SW_MODE 12..=15, 28..=31)"));
        };
        let Some(sw) = res.swizzle.kind() else {
            return Err(LayoutError::Unsupported("reserved swizzle mode"));
        };
        let log2_bytes = bytes.trailing_zeros();
        let e = log2_bytes as usize;
        let three_d = kind == ImageType::D3;
        let thick = three_d && matches!(sw, SwizzleKind::Z | SwizzleKind::Standard);
        if three_d && (sw == SwizzleKind::Rotated || block_log2 == 8) {
            return Err(LayoutError::Unsupported("3D image in a rotated or 256-byte swizzle mode"));
        }
        if !three_d && e == 4 && matches!(sw, SwizzleKind::Rotated | SwizzleKind::Z) {
            return Err(LayoutError::Unsupported("16-byte elements in a rotated or Z swizzle mode"));
        }
        // A 3D image in a display mode is thin and addresses each slice with the standard
        // pattern (addrlib: "3D display is standard").
        let thin_kind = if three_d && sw == SwizzleKind::Display { SwizzleKind::Standard } else { sw };
        let (equation, block) = if thick { thick_equation(sw, e, block_log2) } else { thin_equation(thin_kind, e, block_log2) };
        let dim = |log2: u32| 1u32 << log2;
        let align = |v: u32, log2: u32| v.div_ceil(dim(log2)) * dim(log2);
        let mut pitch = align(w0, block[0]);
        let mut height = align(h0, block[1]);
        let mut depth = align(slices, block[2]);
        let tail = tail_dims(thick, block_log2, [dim(block[0]), dim(block[1]), dim(block[2])]);
        let mut chain = [pitch, height];
        if levels > 1 {
            let first_in_tail = first_level_in_tail(thick, three_d, [w0, h0, if three_d { slices } else { 1 }], block, tail, levels);
            let ending = first_in_tail.min(levels - 1);
            if ending == 0 {
                // The whole chain is in the tail: mip placement starts from the tail's
                // dimensions; the chain area keeps level 0's padded size.
                pitch = tail[0];
                height = tail[1];
                if thick {
                    depth = tail[2];
                }
            } else {
                let [wb, hb, db] = [pitch >> block[0], height >> block[1], depth >> block[2]];
                if major_axis(thick, wb, hb, db) == Major::Y {
                    let mut mip1 = wb.div_ceil(2);
                    if mip1 == 1 && ending > 2 {
                        mip1 += 1;
                    }
                    chain[0] += mip1 << block[0];
                } else {
                    let mut mip1 = hb.div_ceil(2);
                    if mip1 == 1 && ending > 2 {
                        mip1 += 1;
                    }
                    chain[1] += mip1 << block[1];
                }
            }
        }
        Ok(Surface {
            base: res.base,
            log2_bytes,
            bytes,
            layout: Layout::Tiled(Tiling {
                block_log2,
                block,
                thick,
                equation,
                chain_blocks: [chain[0] >> block[0], chain[1] >> block[1]],
                padded: [pitch, height, depth],
                tail,
                levels,
            }),
        })
    }

    /// Bytes per element.
    pub(crate) fn element_bytes(&self) -> u32 {
        self.bytes
    }

    /// The address of element (x, y) of slice (or 3D depth) `z` of mip level `level`
    /// (absolute). The caller has checked the coordinates against the level's size.
    pub(crate) fn address(&self, level: u32, x: u32, y: u32, z: u32) -> u64 {
        let offset = match &self.layout {
            Layout::Linear { pitch, level_rows, slice_bytes } => {
                let rows = level_rows.get(level as usize).copied().unwrap_or(0);
                z as u64 * slice_bytes + ((rows + y as u64) * pitch + x as u64) * self.bytes as u64
            }
            Layout::Tiled(t) => t.offset(level, [x, y, z], self.log2_bytes),
        };
        self.base.wrapping_add(offset)
    }
}

impl Tiling {
    fn offset(&self, level: u32, c: [u32; 3], log2_bytes: u32) -> u64 {
        let (start, tail_offset) = if self.levels > 1 { self.mip_start(level) } else { ([0; 3], 0) };
        let in_block = self.equation.offset(c, log2_bytes) & ((1u64 << self.block_log2) - 1);
        let [pitch_b, height_b] = self.chain_blocks;
        let slice_blocks = pitch_b as u64 * height_b as u64;
        let zb = if self.thick { c[2] >> self.block[2] } else { c[2] } as u64 + start[2] as u64;
        let yb = (c[1] >> self.block[1]) as u64 + start[1] as u64;
        let xb = (c[0] >> self.block[0]) as u64 + start[0] as u64;
        let block_index = zb * slice_blocks + yb * pitch_b as u64 + xb;
        (block_index << self.block_log2) | in_block | tail_offset
    }

    /// The block position of mip level `level` in the chain area and its byte offset in
    /// the mip tail (0 outside the tail).
    fn mip_start(&self, level: u32) -> ([u32; 3], u64) {
        let [w, h, d] = self.padded;
        let mut start = [0u32; 3];
        let mut in_tail = in_mip_tail(self.thick, self.tail, w, h, d);
        let mut index_in_tail = level;
        if !in_tail {
            let mut wb = w >> self.block[0];
            let mut hb = h >> self.block[1];
            let mut db = d >> self.block[2];
            let major = major_axis(self.thick, wb, hb, db);
            let mut ending = level + 1;
            for i in 1..=level {
                if i == 1 || i == 3 {
                    if major == Major::Y {
                        start[0] += wb;
                    } else {
                        start[1] += hb;
                    }
                } else {
                    match major {
                        Major::X => start[0] += wb,
                        Major::Y => start[1] += hb,
                        Major::Z => start[2] += db,
                    }
                }
                let tail_now = if self.thick {
                    match self.block_log2 % 3 {
                        0 => wb <= 2 && hb == 1 && db <= 2,
                        1 => wb == 1 && hb <= 2 && db <= 2,
                        _ => wb <= 2 && hb <= 2 && db == 1,
                    }
                } else if self.block_log2 & 1 != 0 {
                    wb <= 2 && hb == 1
                } else {
                    wb == 1 && hb <= 2
                };
                if tail_now {
                    ending = i;
                    break;
                }
                wb = wb.div_ceil(2);
                hb = hb.div_ceil(2);
                db = db.div_ceil(2);
            }
            if level >= ending {
                in_tail = true;
                index_in_tail = level - ending;
            }
        }
        let tail_offset = if in_tail {
            let index = (index_in_tail + 20).saturating_sub(self.block_log2) as usize;
            (MIP_TAIL_OFFSET_256B.get(index).copied().unwrap_or(0) as u64) << 8
        } else {
            0
        };
        (start, tail_offset)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Major {
    X,
    Y,
    Z,
}

/// The axis levels 1 and up are laid out along (addrlib's `GetMajorMode`).
fn major_axis(thick: bool, wb: u32, hb: u32, db: u32) -> Major {
    let mut y_major = wb < hb;
    let mut x_major = !y_major;
    if thick {
        y_major = y_major && hb >= db;
        x_major = x_major && wb >= db;
    }
    if x_major {
        Major::X
    } else if y_major {
        Major::Y
    } else {
        Major::Z
    }
}

/// The largest level dimensions that fit the mip tail: a block halved along x (thin), or
/// along the axis the block size picks (thick).
fn tail_dims(thick: bool, block_log2: u32, block: [u32; 3]) -> [u32; 3] {
    let [mut w, mut h, mut d] = block;
    if thick {
        match block_log2 % 3 {
            0 => h >>= 1,
            1 => w >>= 1,
            _ => d >>= 1,
        }
    } else {
        w >>= 1;
    }
    [w, h, d]
}

fn in_mip_tail(thick: bool, tail: [u32; 3], w: u32, h: u32, d: u32) -> bool {
    w <= tail[0] && h <= tail[1] && (!thick || d <= tail[2])
}

/// The first level that goes in the mip tail (`levels` if none), walking level
/// dimensions from level 0's as addrlib's `GetMipChainInfo` does.
fn first_level_in_tail(thick: bool, three_d: bool, dims0: [u32; 3], block: [u32; 3], tail: [u32; 3], levels: u32) -> u32 {
    let [mut w, mut h, mut d] = dims0;
    let align = |v: u32, log2: u32| v.div_ceil(1 << log2) << log2;
    for level in 0..levels {
        if in_mip_tail(thick, tail, w, h, d) {
            return level;
        }
        w = align(w, block[0]);
        h = align(h, block[1]);
        if thick {
            d = align(d, block[2]);
        }
        w = (w >> 1).max(1);
        h = (h >> 1).max(1);
        if three_d {
            d = (d >> 1).max(1);
        }
    }
    levels
}

/// The equation and block dimensions (log2) of a thin mode.
fn thin_equation(kind: SwizzleKind, e: usize, block_log2: u32) -> (Equation, [u32; 3]) {
    let mut bits = Equation::new();
    let (mut xi, mut yi, low) = if kind == SwizzleKind::Z {
        // x and y alternate from the element bits up to bit 6.
        let (mut xi, mut yi) = (0u8, 0u8);
        for i in e..6 {
            if (i - e).is_multiple_of(2) {
                bits.push(x(xi));
                xi += 1;
            } else {
                bits.push(y(yi));
                yi += 1;
            }
        }
        (xi, yi, 6u32)
    } else {
        let micro = match kind {
            SwizzleKind::Standard => MICRO_STANDARD[e],
            SwizzleKind::Display => MICRO_DISPLAY[e],
            _ => MICRO_ROTATED[e.min(3)],
        };
        for &s in micro {
            bits.push(s);
        }
        let (mw, mh) = MICRO_2D_LOG2[e];
        (mw as u8, mh as u8, 8u32)
    };
    for i in low..block_log2 {
        if i % 2 == 0 {
            bits.push(y(yi));
            yi += 1;
        } else {
            bits.push(x(xi));
            xi += 1;
        }
    }
    // Block dimensions: the 256-byte micro block grown by the block size, height first.
    let (mw, mh) = MICRO_2D_LOG2[e];
    let amp = block_log2 - 8;
    let width_amp = amp / 2;
    (bits, [mw + width_amp, mh + (amp - width_amp), 0])
}

/// The equation and block dimensions (log2) of a thick mode (3D, `_Z` or `_S`).
fn thick_equation(kind: SwizzleKind, e: usize, block_log2: u32) -> (Equation, [u32; 3]) {
    let micro = if kind == SwizzleKind::Z { MICRO_THICK_Z[e] } else { MICRO_THICK_STANDARD[e] };
    let mut bits = Equation::new();
    for &s in micro {
        bits.push(s);
    }
    let (mw, mh, md) = MICRO_3D_LOG2[e];
    let (mut xi, mut yi, mut zi) = (mw as u8, mh as u8, md as u8);
    for i in 10..block_log2 {
        match i % 3 {
            0 => {
                bits.push(x(xi));
                xi += 1;
            }
            1 => {
                bits.push(z(zi));
                zi += 1;
            }
            _ => {
                bits.push(y(yi));
                yi += 1;
            }
        }
    }
    let amp = block_log2 - 10;
    let (avg, rest) = (amp / 3, amp % 3);
    (bits, [mw + avg, mh + avg + rest / 2, md + avg + u32::from(rest != 0)])
}
