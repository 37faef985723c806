//! The image resource (T#, eight dwords) and sampler (S#, four dwords) descriptors of the
//! gfx9 family (gfx90a), decoded into typed fields.
//!
//! Field positions are those of the Vega/CDNA ISA guides' "Image Resource" and "Image
//! Sampler" tables (also ROCr's `SQ_IMG_RSRC_WORD*` / `SQ_IMG_SAMP_WORD*`, which builds
//! them):
//!
//! ```text
//! T# w0 [31:0]  BASE_ADDRESS[39:8]        w4 [12:0] DEPTH-1 (3D) / last array slice
//!    w1 [7:0]   BASE_ADDRESS[47:40]          [28:13] PITCH-1 (elements)
//!       [19:8]  MIN_LOD (4.8)                [31:29] BC_SWIZZLE
//!       [25:20] DATA_FORMAT               w5 [12:0] BASE_ARRAY
//!       [29:26] NUM_FORMAT                   [31:28] MAX_MIP
//!    w2 [13:0]  WIDTH-1, [27:14] HEIGHT-1 w6 [11:0] MIN_LOD_WARN, [21] COMPRESSION_EN
//!    w3 [11:0]  DST_SEL_X..W (3 bits each) w7        META_DATA_ADDRESS[39:8]
//!       [15:12] BASE_LEVEL, [19:16] LAST_LEVEL
//!       [24:20] SW_MODE, [31:28] TYPE
//!
//! S# w0 [2:0] CLAMP_X, [5:3] CLAMP_Y, [8:6] CLAMP_Z, [11:9] MAX_ANISO_RATIO,
//!       [14:12] DEPTH_COMPARE_FUNC, [15] FORCE_UNNORMALIZED, [20] FORCE_DEGAMMA,
//!       [27] TRUNC_COORD, [28] DISABLE_CUBE_WRAP, [30:29] FILTER_MODE
//!    w1 [11:0] MIN_LOD (4.8), [23:12] MAX_LOD (4.8)
//!    w2 [13:0] LOD_BIAS (s5.8), [19:14] LOD_BIAS_SEC (s1.4), [21:20] XY_MAG_FILTER,
//!       [23:22] XY_MIN_FILTER, [25:24] Z_FILTER, [27:26] MIP_FILTER
//!    w3 [11:0] BORDER_COLOR_PTR, [31:30] BORDER_COLOR_TYPE
//! ```

/// The dimensionality of an image resource (T# TYPE; 0..=7 are buffer types).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ImageType {
    /// `SQ_RSRC_IMG_1D` (8).
    D1,
    /// `SQ_RSRC_IMG_2D` (9).
    D2,
    /// `SQ_RSRC_IMG_3D` (10).
    D3,
    /// `SQ_RSRC_IMG_CUBE` (11): six faces, addressed as slices of a 2D array.
    Cube,
    /// `SQ_RSRC_IMG_1D_ARRAY` (12).
    D1Array,
    /// `SQ_RSRC_IMG_2D_ARRAY` (13).
    D2Array,
    /// `SQ_RSRC_IMG_2D_MSAA` (14).
    D2Msaa,
    /// `SQ_RSRC_IMG_2D_MSAA_ARRAY` (15).
    D2MsaaArray,
}

impl ImageType {
    /// The type of T# TYPE code `code`; `None` for the buffer types (0..=7).
    pub(crate) fn from_code(code: u32) -> Option<ImageType> {
        Some(match code & 15 {
            8 => ImageType::D1,
            9 => ImageType::D2,
            10 => ImageType::D3,
            11 => ImageType::Cube,
            12 => ImageType::D1Array,
            13 => ImageType::D2Array,
            14 => ImageType::D2Msaa,
            15 => ImageType::D2MsaaArray,
            _ => return None,
        })
    }

    /// Coordinates that locate a texel in one mip level, before the mip level itself: x,
    /// then y, then z / slice / face, then the MSAA fragment.
    pub(crate) fn coordinates(self) -> usize {
        match self {
            ImageType::D1 => 1,
            ImageType::D1Array | ImageType::D2 => 2,
            ImageType::D2Array | ImageType::D3 | ImageType::Cube | ImageType::D2Msaa => 3,
            ImageType::D2MsaaArray => 4,
        }
    }

    /// True when the last coordinate selects a slice (arrays, cube faces).
    pub(crate) fn layered(self) -> bool {
        matches!(self, ImageType::D1Array | ImageType::D2Array | ImageType::Cube | ImageType::D2MsaaArray)
    }

    /// True for the one-dimensional types (their height is 1).
    pub(crate) fn one_dimensional(self) -> bool {
        matches!(self, ImageType::D1 | ImageType::D1Array)
    }

    /// True for the multisampled types.
    pub(crate) fn msaa(self) -> bool {
        matches!(self, ImageType::D2Msaa | ImageType::D2MsaaArray)
    }
}

/// A gfx9 swizzle (tiling) mode (T# SW_MODE; addrlib's `AddrSwizzleMode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct SwizzleMode(pub(crate) u32);

/// The shape of a swizzle mode's addressing inside a block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SwizzleKind {
    /// `_Z`: Morton (Z) order.
    Z,
    /// `_S`: standard.
    Standard,
    /// `_D`: display.
    Display,
    /// `_R`: rotated.
    Rotated,
}

impl SwizzleMode {
    /// `SW_LINEAR`.
    pub(crate) const LINEAR: SwizzleMode = SwizzleMode(0);

    /// Log2 of the block size in bytes (8 for 256 B, 12 for 4 KiB, 16 for 64 KiB); `None`
    /// for the linear and the variable-block modes.
    pub(crate) fn block_bytes_log2(self) -> Option<u32> {
        match self.0 {
            1..=3 => Some(8),
            4..=7 | 20..=23 => Some(12),
            8..=11 | 16..=19 | 24..=27 => Some(16),
            _ => None,
        }
    }

    /// The addressing kind inside a block (`None` for linear and variable-block modes).
    pub(crate) fn kind(self) -> Option<SwizzleKind> {
        self.block_bytes_log2()?;
        // Within each group of four the order is Z, S, D, R; the 256 B group has no Z.
        Some(match self.0 % 4 {
            0 => SwizzleKind::Z,
            1 => SwizzleKind::Standard,
            2 => SwizzleKind::Display,
            _ => SwizzleKind::Rotated,
        })
    }
}

/// The decoded fields of an image resource (T#) the executor uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImageResource {
    /// Byte address of the image (256-byte aligned).
    pub(crate) base: u64,
    /// MIN_LOD in 1/256 units.
    pub(crate) min_lod: u32,
    pub(crate) data_format: u32,
    pub(crate) num_format: u32,
    /// Width of mip level 0.
    pub(crate) width: u32,
    /// Height of mip level 0.
    pub(crate) height: u32,
    /// DEPTH + 1: the depth of a 3D image's level 0, else the number of slices.
    pub(crate) depth: u32,
    /// Row pitch of level 0 in elements (PITCH + 1).
    pub(crate) pitch: u32,
    pub(crate) dst_sel: [u32; 4],
    pub(crate) base_level: u32,
    pub(crate) last_level: u32,
    pub(crate) swizzle: SwizzleMode,
    /// TYPE; `None` for a buffer type.
    pub(crate) kind: Option<ImageType>,
    pub(crate) bc_swizzle: u32,
    pub(crate) base_array: u32,
    /// MAX_MIP: the resource's last mip level (its layout holds levels 0..=MAX_MIP).
    pub(crate) max_mip: u32,
    /// COMPRESSION_EN (delta color compression with metadata).
    pub(crate) compressed: bool,
}

impl ImageResource {
    /// Decodes the eight dwords of a T#.
    pub(crate) fn decode(w: [u32; 8]) -> ImageResource {
        ImageResource {
            base: ((w[0] as u64) << 8) | (((w[1] & 0xff) as u64) << 40),
            min_lod: (w[1] >> 8) & 0xfff,
            data_format: (w[1] >> 20) & 0x3f,
            num_format: (w[1] >> 26) & 0xf,
            width: (w[2] & 0x3fff) + 1,
            height: ((w[2] >> 14) & 0x3fff) + 1,
            dst_sel: [w[3] & 7, (w[3] >> 3) & 7, (w[3] >> 6) & 7, (w[3] >> 9) & 7],
            base_level: (w[3] >> 12) & 15,
            last_level: (w[3] >> 16) & 15,
            swizzle: SwizzleMode((w[3] >> 20) & 31),
            kind: ImageType::from_code(w[3] >> 28),
            depth: (w[4] & 0x1fff) + 1,
            pitch: ((w[4] >> 13) & 0xffff) + 1,
            bc_swizzle: (w[4] >> 29) & 7,
            base_array: w[5] & 0x1fff,
            max_mip: w[5] >> 28,
            compressed: (w[6] >> 21) & 1 != 0,
        }
    }

    /// The dimensions (width, height, depth) of mip level `level` (absolute, counted from
    /// the resource's level 0): each halves per level down to 1; only a 3D image's depth
    /// shrinks, a 1D image's height is 1.
    pub(crate) fn level_dims(&self, level: u32) -> [u32; 3] {
        let shrink = |v: u32| (v >> level.min(31)).max(1);
        let kind = self.kind.unwrap_or(ImageType::D2);
        let height = if kind.one_dimensional() { 1 } else { shrink(self.height) };
        let depth = if kind == ImageType::D3 { shrink(self.depth) } else { 1 };
        [shrink(self.width), height, depth]
    }

    /// The number of slices of an array or cube view (DEPTH + 1 - BASE_ARRAY, at least 1).
    pub(crate) fn layers(&self) -> u32 {
        self.depth.saturating_sub(self.base_array).max(1)
    }
}

/// An S# address (clamp) mode, per coordinate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ClampMode {
    /// `SQ_TEX_WRAP` (0): repeat.
    Wrap,
    /// `SQ_TEX_MIRROR` (1): mirrored repeat.
    Mirror,
    /// `SQ_TEX_CLAMP_LAST_TEXEL` (2): clamp to edge.
    ClampLastTexel,
    /// `SQ_TEX_MIRROR_ONCE_LAST_TEXEL` (3).
    MirrorOnceLastTexel,
    /// `SQ_TEX_CLAMP_HALF_BORDER` (4).
    ClampHalfBorder,
    /// `SQ_TEX_MIRROR_ONCE_HALF_BORDER` (5).
    MirrorOnceHalfBorder,
    /// `SQ_TEX_CLAMP_BORDER` (6): clamp to the border color.
    ClampBorder,
    /// `SQ_TEX_MIRROR_ONCE_BORDER` (7).
    MirrorOnceBorder,
}

impl ClampMode {
    fn from_code(code: u32) -> ClampMode {
        match code & 7 {
            0 => ClampMode::Wrap,
            1 => ClampMode::Mirror,
            2 => ClampMode::ClampLastTexel,
            3 => ClampMode::MirrorOnceLastTexel,
            4 => ClampMode::ClampHalfBorder,
            5 => ClampMode::MirrorOnceHalfBorder,
            6 => ClampMode::ClampBorder,
            _ => ClampMode::MirrorOnceBorder,
        }
    }
}

/// An S# XY filter (`XY_MAG_FILTER`, `XY_MIN_FILTER`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum XyFilter {
    /// `SQ_TEX_XY_FILTER_POINT` (0).
    Point,
    /// `SQ_TEX_XY_FILTER_BILINEAR` (1).
    Bilinear,
    /// `SQ_TEX_XY_FILTER_ANISO_POINT` (2).
    AnisoPoint,
    /// `SQ_TEX_XY_FILTER_ANISO_BILINEAR` (3).
    AnisoBilinear,
}

impl XyFilter {
    fn from_code(code: u32) -> XyFilter {
        match code & 3 {
            0 => XyFilter::Point,
            1 => XyFilter::Bilinear,
            2 => XyFilter::AnisoPoint,
            _ => XyFilter::AnisoBilinear,
        }
    }
}

/// An S# `Z_FILTER` (3D images).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ZFilter {
    /// `SQ_TEX_Z_FILTER_NONE` (0).
    None,
    /// `SQ_TEX_Z_FILTER_POINT` (1).
    Point,
    /// `SQ_TEX_Z_FILTER_LINEAR` (2); the reserved 3 is taken as linear too.
    Linear,
}

/// An S# `MIP_FILTER`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum MipFilter {
    /// `SQ_TEX_MIP_FILTER_NONE` (0): the base level only.
    None,
    /// `SQ_TEX_MIP_FILTER_POINT` (1): the nearest level.
    Point,
    /// `SQ_TEX_MIP_FILTER_LINEAR` (2): a blend of the two nearest levels.
    Linear,
    /// `SQ_TEX_MIP_FILTER_POINT_ANISO_ADJ` (3).
    PointAnisoAdj,
}

/// An S# `FILTER_MODE`: how the texels a filter covers combine.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum FilterMode {
    /// 0: the weighted blend.
    Blend,
    /// 1: the per-channel minimum of the texels with a non-zero weight.
    Min,
    /// 2: the per-channel maximum of those texels.
    Max,
    /// 3: reserved.
    Reserved,
}

/// An S# `BORDER_COLOR_TYPE`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum BorderColor {
    /// (0, 0, 0, 0).
    TransparentBlack,
    /// (0, 0, 0, 1).
    OpaqueBlack,
    /// (1, 1, 1, 1).
    OpaqueWhite,
    /// An entry of the border color table (`BORDER_COLOR_PTR`).
    Register,
}

/// The decoded fields of a sampler (S#).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sampler {
    pub(crate) clamp: [ClampMode; 3],
    pub(crate) max_aniso_ratio: u32,
    pub(crate) force_unnormalized: bool,
    pub(crate) force_degamma: bool,
    pub(crate) disable_cube_wrap: bool,
    pub(crate) filter_mode: FilterMode,
    /// MIN_LOD and MAX_LOD in 1/256 units.
    pub(crate) min_lod: u32,
    pub(crate) max_lod: u32,
    /// LOD_BIAS in 1/256 units (signed).
    pub(crate) lod_bias: i32,
    /// LOD_BIAS_SEC in 1/16 units (signed).
    pub(crate) lod_bias_sec: i32,
    pub(crate) mag_filter: XyFilter,
    pub(crate) min_filter: XyFilter,
    pub(crate) z_filter: ZFilter,
    pub(crate) mip_filter: MipFilter,
    pub(crate) border: BorderColor,
}

impl Sampler {
    /// Decodes the four dwords of an S#.
    pub(crate) fn decode(w: [u32; 4]) -> Sampler {
        let sign_extend = |v: u32, bits: u32| ((v << (32 - bits)) as i32) >> (32 - bits);
        Sampler {
            clamp: [ClampMode::from_code(w[0]), ClampMode::from_code(w[0] >> 3), ClampMode::from_code(w[0] >> 6)],
            max_aniso_ratio: (w[0] >> 9) & 7,
            force_unnormalized: (w[0] >> 15) & 1 != 0,
            force_degamma: (w[0] >> 20) & 1 != 0,
            disable_cube_wrap: (w[0] >> 28) & 1 != 0,
            filter_mode: match (w[0] >> 29) & 3 {
                0 => FilterMode::Blend,
                1 => FilterMode::Min,
                2 => FilterMode::Max,
                _ => FilterMode::Reserved,
            },
            min_lod: w[1] & 0xfff,
            max_lod: (w[1] >> 12) & 0xfff,
            lod_bias: sign_extend(w[2] & 0x3fff, 14),
            lod_bias_sec: sign_extend((w[2] >> 14) & 0x3f, 6),
            mag_filter: XyFilter::from_code(w[2] >> 20),
            min_filter: XyFilter::from_code(w[2] >> 22),
            z_filter: match (w[2] >> 24) & 3 {
                0 => ZFilter::None,
                1 => ZFilter::Point,
                _ => ZFilter::Linear,
            },
            mip_filter: match (w[2] >> 26) & 3 {
                0 => MipFilter::None,
                1 => MipFilter::Point,
                2 => MipFilter::Linear,
                _ => MipFilter::PointAnisoAdj,
            },
            border: match w[3] >> 30 {
                0 => BorderColor::TransparentBlack,
                1 => BorderColor::OpaqueBlack,
                2 => BorderColor::OpaqueWhite,
                _ => BorderColor::Register,
            },
        }
    }
}
