//! The sampler: from texture coordinates and a level of detail to filtered channel
//! values, as `image_sample` computes them through a T# and an S#.
//!
//! Per lane, with the quad's level of detail λ (see [`level_of_detail`]):
//! 1. λ ≤ 0 magnifies (`XY_MAG_FILTER`), λ > 0 minifies (`XY_MIN_FILTER`);
//! 2. `MIP_FILTER` picks the level(s): NONE the view's base level, POINT the nearest
//!    (base + ⌈λ + ½⌉ − 1 for λ > ½, else base), LINEAR the two around base + λ blended
//!    by its fraction; levels are clamped to [BASE_LEVEL, LAST_LEVEL];
//! 3. normalized coordinates scale by the level's size (unnormalized ones are texels of
//!    the level already: the instruction's `unorm` or S# FORCE_UNNORMALIZED);
//! 4. per axis, POINT takes the texel `floor(c)`, BILINEAR / LINEAR the two texels
//!    around `c - ½` weighted by the fraction (f32 weights, not quantized); `Z_FILTER`
//!    NONE filters a 3D image's depth as the XY filter in use does;
//! 5. each texel index goes through the axis's clamp mode; a texel outside the image
//!    under a border mode reads the border color;
//! 6. texels combine by `FILTER_MODE`: blend (weighted sum), min or max per channel of
//!    the texels with a non-zero weight (the reserved mode 3 blends); FORCE_DEGAMMA
//!    decodes each texel's R, G, B as sRGB first.
//!
//! Cube images: coordinates (s, t, face) with s, t normalized in the face and `face`
//! = 8 × layer + face index (ROCm's device library convention); the texel slice is
//! 6 × layer + face, and filtering stays inside the face (taps past its edge go through
//! the clamp mode as on a 2D image) only when S# DISABLE_CUBE_WRAP is set; seamless
//! cube filtering is not modelled. Arrays: the slice is the coordinate rounded to the
//! nearest integer (ties to even) and clamped to the view's slices.

use super::descriptor::{BorderColor, ClampMode, FilterMode, ImageResource, ImageType, MipFilter, Sampler, XyFilter, ZFilter};
use super::format::TexelFormat;
use super::layout::Surface;
use crate::exec::device::DeviceMemory;
use crate::exec::memory::MemFault;

/// Why a sample did not produce a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SampleError {
    /// A texel read faulted.
    Memory(MemFault),
    /// The descriptors ask for something the model does not implement (the text names it).
    Unsupported(&'static str),
}

impl From<MemFault> for SampleError {
    fn from(f: MemFault) -> SampleError {
        SampleError::Memory(f)
    }
}

/// The resource side of a sample or load: the T#, its format and layout.
pub(crate) struct Image<'a> {
    pub(crate) res: &'a ImageResource,
    pub(crate) fmt: TexelFormat,
    pub(crate) surface: &'a Surface,
    pub(crate) kind: ImageType,
}

impl Image<'_> {
    /// Reads texel (x, y, slice-or-depth `z`) of absolute level `level`.
    pub(crate) fn fetch<M: DeviceMemory>(&self, mem: &mut M, level: u32, x: u32, y: u32, z: u32) -> Result<[u8; 16], MemFault> {
        let mut buf = [0u8; 16];
        let n = self.fmt.bytes() as usize;
        mem.read(self.surface.address(level, x, y, z), &mut buf[..n])?;
        Ok(buf)
    }

    /// The number of slices a sample addresses by its slice coordinate (arrays, cube
    /// faces of all layers).
    fn slices(&self) -> u32 {
        self.res.layers()
    }
}

/// Checks an S# for what the model does not implement.
pub(crate) fn check_sampler(s: &Sampler, kind: ImageType) -> Result<(), SampleError> {
    if s.max_aniso_ratio != 0 || matches!(s.mag_filter, XyFilter::AnisoPoint | XyFilter::AnisoBilinear) || matches!(s.min_filter, XyFilter::AnisoPoint | XyFilter::AnisoBilinear) {
        return Err(SampleError::Unsupported("image_sample (anisotropic filtering: S# MAX_ANISO_RATIO or an ANISO XY filter)"));
    }
    if s.mip_filter == MipFilter::PointAnisoAdj {
        return Err(SampleError::Unsupported("image_sample (S# MIP_FILTER POINT_ANISO_ADJ)"));
    }
    let borders = s.clamp.iter().any(|c| matches!(c, ClampMode::ClampHalfBorder | ClampMode::MirrorOnceHalfBorder | ClampMode::ClampBorder | ClampMode::MirrorOnceBorder));
    if borders && s.border == BorderColor::Register {
        return Err(SampleError::Unsupported("image_sample (S# BORDER_COLOR_TYPE REGISTER: the border color table)"));
    }
    let linear = matches!(s.mag_filter, XyFilter::Bilinear) || matches!(s.min_filter, XyFilter::Bilinear);
    if kind == ImageType::Cube && linear && !s.disable_cube_wrap {
        return Err(SampleError::Unsupported("image_sample (seamless cube filtering: S# DISABLE_CUBE_WRAP = 0 with a bilinear filter)"));
    }
    Ok(())
}

/// The level of detail of a quad (relative to the view's base level, before the
/// sampler's bias and clamps): log2 of the larger of the screen-x and screen-y
/// derivative lengths in texels of the base level. `coords[k]` are the coordinates of
/// quad lane `k` (0 top-left, 1 top-right, 2 bottom-left); derivatives are the quad's
/// (coarse): ddx = lane 1 − lane 0, ddy = lane 2 − lane 0.
pub(crate) fn level_of_detail(img: &Image<'_>, coords: [[f32; 3]; 3], unnormalized: bool) -> f32 {
    let dims = img.res.level_dims(img.res.base_level);
    let axes = match img.kind {
        ImageType::D1 | ImageType::D1Array => 1,
        ImageType::D3 => 3,
        _ => 2,
    };
    let scale = |a: usize| if unnormalized { 1.0 } else { dims[a] as f32 };
    let (mut dx, mut dy) = (0.0f32, 0.0f32);
    for (a, c0) in coords[0].iter().enumerate().take(axes) {
        let ddx = (coords[1][a] - c0) * scale(a);
        let ddy = (coords[2][a] - c0) * scale(a);
        dx += ddx * ddx;
        dy += ddy * ddy;
    }
    let rho = dx.max(dy).sqrt();
    if rho == 0.0 {
        f32::NEG_INFINITY
    } else {
        rho.log2()
    }
}

/// λ after the sampler's bias and the sampler's and resource's LOD clamps.
pub(crate) fn biased_lod(lod: f32, s: &Sampler, res: &ImageResource) -> f32 {
    let bias = s.lod_bias as f32 / 256.0 + s.lod_bias_sec as f32 / 16.0;
    let min = (s.min_lod.max(res.min_lod)) as f32 / 256.0;
    let max = s.max_lod as f32 / 256.0;
    let l = lod + bias;
    if l.is_nan() {
        return min;
    }
    l.max(min).min(max.max(min))
}

/// One filter tap: a texel index per axis, or the border.
#[derive(Copy, Clone, Debug)]
enum Tap {
    Texel(u32),
    Border,
}

/// The texel index `i` (which may lie outside `0..n`) through clamp mode `mode`.
fn clamp_index(mode: ClampMode, i: i64, n: u32) -> Tap {
    let n = n as i64;
    let mirror_once = |i: i64| if i < 0 { -1 - i } else { i };
    let t = match mode {
        ClampMode::Wrap => i.rem_euclid(n),
        ClampMode::Mirror => {
            let m = i.rem_euclid(2 * n);
            if m >= n {
                2 * n - 1 - m
            } else {
                m
            }
        }
        ClampMode::ClampLastTexel => i.clamp(0, n - 1),
        ClampMode::MirrorOnceLastTexel => mirror_once(i).clamp(0, n - 1),
        ClampMode::ClampHalfBorder | ClampMode::ClampBorder => {
            if i < 0 || i >= n {
                return Tap::Border;
            }
            i
        }
        ClampMode::MirrorOnceHalfBorder | ClampMode::MirrorOnceBorder => {
            let m = mirror_once(i);
            if m >= n {
                return Tap::Border;
            }
            m
        }
    };
    Tap::Texel(t as u32)
}

/// The taps along one axis: (tap, weight), one for point filtering, two for linear.
/// `c` is the coordinate in texels of the level.
fn axis_taps(mode: ClampMode, c: f32, n: u32, linear: bool) -> [(Tap, f32); 2] {
    let c = match mode {
        // Half-border modes clamp the coordinate to half a texel past the edge, so a
        // filter blends at most half border.
        ClampMode::ClampHalfBorder => c.clamp(-0.5, n as f32 + 0.5),
        ClampMode::MirrorOnceHalfBorder => c.abs().min(n as f32 + 0.5),
        _ => c,
    };
    if !linear {
        let i = c.floor() as i64;
        return [(clamp_index(mode, i, n), 1.0), (Tap::Border, 0.0)];
    }
    let shifted = c - 0.5;
    let i0 = shifted.floor();
    let a = shifted - i0;
    let i0 = i0 as i64;
    [(clamp_index(mode, i0, n), 1.0 - a), (clamp_index(mode, i0 + 1, n), a)]
}

/// The border color in texel channel order (before `dst_sel`), as register values of
/// the format: BC_SWIZZLE places the border's R, G, B, A on the texel channels whose
/// `dst_sel` reads them.
fn border_texel(s: &Sampler, res: &ImageResource, fmt: TexelFormat) -> [u32; 4] {
    let (zero, one) = (0, fmt.one(false));
    let rgba = match s.border {
        BorderColor::TransparentBlack => [zero; 4],
        BorderColor::OpaqueBlack => [zero, zero, zero, one],
        // Register was refused by check_sampler.
        BorderColor::OpaqueWhite | BorderColor::Register => [one; 4],
    };
    // For each texel channel, the border channel it holds (TEX_BC_Swizzle_*).
    let order: [usize; 4] = match res.bc_swizzle {
        1 => [0, 3, 1, 2], // XWYZ
        2 => [3, 2, 1, 0], // WZYX
        3 => [3, 0, 1, 2], // WXYZ
        4 => [2, 1, 0, 3], // ZYXW
        5 => [1, 0, 3, 2], // YXWZ
        _ => [0, 1, 2, 3], // XYZW (and the reserved 6, 7)
    };
    order.map(|k| rgba[k])
}

/// Samples one lane: `coords` are (s, t, r or slice or face, unused) as the resource
/// type reads them; `lod` is the quad's λ after bias and clamps. Returns the four
/// texel channels (before `dst_sel`) as 32-bit register values: f32 bits, or integers
/// for the integer formats (which are never blended: every filter takes the nearest
/// texel of the nearest level).
pub(crate) fn sample<M: DeviceMemory>(mem: &mut M, img: &Image<'_>, s: &Sampler, coords: [f32; 3], lod: f32, unnormalized: bool) -> Result<[u32; 4], SampleError> {
    let res = img.res;
    let integer = img.fmt.is_integer();
    // λ ≤ 0 (and a NaN λ) magnifies.
    let magnify = lod.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater);
    let xy = if magnify { s.mag_filter } else { s.min_filter };
    let linear_xy = xy == XyFilter::Bilinear && !integer;
    let linear_z = match s.z_filter {
        ZFilter::None => linear_xy,
        ZFilter::Point => false,
        ZFilter::Linear => !integer,
    };
    let (base, last) = (res.base_level, res.last_level.max(res.base_level));
    // Integer texels are never blended: a linear mip filter takes the nearest level.
    let mip_filter = if integer && s.mip_filter == MipFilter::Linear { MipFilter::Point } else { s.mip_filter };
    let levels: [(u32, f32); 2] = match mip_filter {
        MipFilter::Point if lod > 0.5 => [((base as f32 + (lod + 0.5).ceil() - 1.0).min(last as f32) as u32, 1.0), (base, 0.0)],
        MipFilter::Linear if lod > 0.0 => {
            let d = lod.floor();
            let lo = (base as f32 + d).min(last as f32) as u32;
            let hi = (lo + 1).min(last);
            let f = lod - d;
            [(lo, 1.0 - f), (hi, f)]
        }
        _ => [(base, 1.0), (base, 0.0)],
    };
    let border = border_texel(s, res, img.fmt);
    let mut acc = [0.0f32; 4];
    let mut min_max: Option<[f32; 4]> = None;
    let mut nearest: Option<[u32; 4]> = None;
    for &(level, level_weight) in &levels {
        if level_weight == 0.0 {
            continue;
        }
        let [w, h, d] = res.level_dims(level);
        let scale = |c: f32, n: u32| if unnormalized { c } else { c * n as f32 };
        let xs = axis_taps(s.clamp[0], scale(coords[0], w), w, linear_xy);
        let ys = if img.kind.one_dimensional() { [(Tap::Texel(0), 1.0), (Tap::Border, 0.0)] } else { axis_taps(s.clamp[1], scale(coords[1], h), h, linear_xy) };
        let zs = match img.kind {
            ImageType::D3 => axis_taps(s.clamp[2], scale(coords[2], d), d, linear_z),
            ImageType::D1Array => [(Tap::Texel(layer(coords[1], img.slices())), 1.0), (Tap::Border, 0.0)],
            ImageType::D2Array => [(Tap::Texel(layer(coords[2], img.slices())), 1.0), (Tap::Border, 0.0)],
            ImageType::Cube => [(Tap::Texel(cube_slice(coords[2], img.slices())), 1.0), (Tap::Border, 0.0)],
            _ => [(Tap::Texel(0), 1.0), (Tap::Border, 0.0)],
        };
        let ys = if img.kind == ImageType::D1Array { [(Tap::Texel(0), 1.0), (Tap::Border, 0.0)] } else { ys };
        for &(tz, wz) in &zs {
            for &(ty, wy) in &ys {
                for &(tx, wx) in &xs {
                    let weight = wx * wy * wz * level_weight;
                    if weight == 0.0 {
                        continue;
                    }
                    let texel = match (tx, ty, tz) {
                        (Tap::Texel(x), Tap::Texel(y), Tap::Texel(z)) => {
                            let z = if img.kind.layered() { z + res.base_array } else { z };
                            img.fmt.unpack(&img.fetch(mem, level, x, y, z)?, false)
                        }
                        _ => border,
                    };
                    if integer {
                        nearest.get_or_insert(texel);
                        continue;
                    }
                    let mut v = texel.map(f32::from_bits);
                    if s.force_degamma {
                        // FORCE_DEGAMMA decodes R, G, B of every texel as sRGB before
                        // filtering.
                        for c in v.iter_mut().take(3) {
                            *c = super::format::srgb_to_linear(*c as f64) as f32;
                        }
                    }
                    for c in 0..4 {
                        acc[c] += weight * v[c];
                    }
                    min_max = Some(match min_max {
                        None => v,
                        Some(m) => std::array::from_fn(|c| match s.filter_mode {
                            FilterMode::Min => m[c].min(v[c]),
                            _ => m[c].max(v[c]),
                        }),
                    });
                }
            }
        }
    }
    if let Some(n) = nearest {
        return Ok(n);
    }
    let out = match (s.filter_mode, min_max) {
        (FilterMode::Min | FilterMode::Max, Some(m)) => m,
        _ => acc,
    };
    Ok(out.map(f32::to_bits))
}

/// An array slice coordinate: rounded to the nearest integer (ties to even) and clamped
/// to the view's `n` slices.
fn layer(c: f32, n: u32) -> u32 {
    let r = c.round_ties_even();
    if r.is_nan() || r < 0.0 {
        0
    } else {
        (r as u32).min(n.saturating_sub(1))
    }
}

/// A cube face coordinate `8 × layer + face` as a slice `6 × layer + face`, clamped to
/// the view's `n` slices.
fn cube_slice(c: f32, n: u32) -> u32 {
    let f = c.round_ties_even();
    let f = if f.is_nan() || f < 0.0 { 0 } else { f as u32 };
    let slice = (f / 8) * 6 + (f % 8).min(5);
    slice.min(n.saturating_sub(1))
}
