//! Image instructions (MIMG): loads, stores, atomics, `image_sample` and
//! `image_get_resinfo` through an image resource (T#) and a sampler (S#).
//!
//! Only gfx90a has image instructions (LLVM's assembler and disassembler accept none on
//! gfx942 and gfx950; `data/sweep/sweep_mimg.py` records the evidence). gfx90a lacks
//! LLVM's "extended image instructions": its only sampling instruction is
//! `image_sample` (implicit level of detail); the `_l`, `_b`, `_c`, `_o`, `_d`, `_cd`,
//! `gather4*` and `get_lod` forms exist on no target here.
//!
//! Codemap: `descriptor` decodes the T# and S#, `format` the texel formats, `layout`
//! the linear and tiled layouts (addrlib's gfx9 rules), `sample` the sampler.
//!
//! **Addresses** (VGPRs from `vaddr`, 32-bit, or two 16-bit halves per VGPR low half
//! first with `a16`): x, then y, then the third coordinate (3D depth, array slice, cube
//! face), then for the `_mip` forms the mip level. Which coordinates there are comes
//! from the T#'s TYPE (1D 1, 1D array and 2D 2, 2D array, 3D and cube 3); the
//! instruction's `da` bit is not read. Loads, stores and atomics take unsigned integer
//! texel coordinates, `image_sample` floats (f16 with `a16`), `image_get_resinfo` one
//! unsigned mip level.
//!
//! **Data** (`vdata`, AccVGPRs with `acc`): the components `dmask` enables, in R, G, B,
//! A order, one per VGPR, or two 16-bit halves per VGPR with `d16` (low half first).
//! Loads and samples return the texel channels through the T#'s `dst_sel` (SEL_0 reads
//! 0, SEL_1 one in the number format's encoding, SEL_X..W a channel; the reserved 2 and
//! 3 read 0, as for buffers); stores write the enabled components to the channels in
//! X, Y, Z, W order.
//!
//! Decisions where the ISA guide leaves the behaviour open (also in ARCHITECTURE.md):
//! - **Unbound resources.** A T# whose TYPE is a buffer type (0..=7) or whose format
//!   pair is not modelled (`format`) is unbound: loads and samples return the all-zero
//!   texel through `dst_sel` (a SEL_1 channel reads one), stores and atomics do nothing
//!   (a returning atomic returns 0), `image_get_resinfo` returns 0.
//! - **Out-of-range texels.** A load, store or atomic whose coordinates (or mip level)
//!   fall outside the view (x ≥ the level's width, a slice past the view's last, a level
//!   past LAST_LEVEL) reads the all-zero texel, writes nothing and leaves memory alone
//!   (returning 0). Slices and levels are relative to the view: BASE_ARRAY and
//!   BASE_LEVEL are added.
//! - **Stores ignore `dst_sel`** (the channel order in memory is the format's); channels
//!   a store's `dmask` leaves out are written as 0; `dmask` 0 writes nothing and loads
//!   and samples with `dmask` 0 write no register.
//! - **`_pck` forms** move the stored channel bits without conversion: loads return each
//!   enabled channel zero-extended (`_sgn`: sign-extended) in its own dword, stores
//!   write the low bits of each data dword to its channel.
//! - **Atomics** operate on the texel's raw bits: 32-bit atomics need a 4-byte texel,
//!   64-bit ones an 8-byte texel (other texel sizes are not modelled). The width comes
//!   from `dmask`: `image_atomic_cmpswap` is 32-bit (data, compare) unless 4 components
//!   are enabled (64-bit data and compare); the others are 32-bit with at most one
//!   component, 64-bit with two or more.
//! - **`lwe`** has no effect: no partially resident resource is modelled, so no LOD
//!   warning is ever raised, and no status dword is written (gfx90a has no `tfe`, and
//!   LLVM allots no register for an `lwe` status: its assembler and disassembler count
//!   the data registers without it).
//! - **Level of detail** of `image_sample`: per quad of lanes (0 top-left, 1 top-right,
//!   2 bottom-left; coarse derivatives), whatever EXEC holds; see `sample`.
//! - **Memory order.** Loads, samples and stores access memory at once (a sample reads
//!   up to 16 texels per lane, which no single deferred request carries); they still
//!   report one [`VmemAccess`](super::VmemAccess) to the memory's route, each lane's
//!   first texel address, for timing models. Atomics go through the shared atomic path
//!   and may be deferred like buffer atomics.
//! - **Layout.** The simulated GPU reports `GB_ADDR_CONFIG` 0 (see `layout`), so the
//!   `_X`/`_T` swizzle modes address as their plain counterparts.
//! - Not modelled (the wave stops with `ExecFault::Unsupported` naming it):
//!   multisampled images, the variable-block swizzle modes, anisotropic filtering,
//!   border-color-table borders, seamless cube filtering.

mod descriptor;
mod format;
pub mod layout;
mod sample;

use crate::decode::Opcode;

use super::device::{AtomicOp, CachePolicy, DeviceMemory, Space, VmemAccess};
use super::operands::{unsupported, Ctx};
use super::program::CachedInst;
use super::vmem::{access, file, LaneAddr, MemOp, KIND_ATOMIC};
use super::wave::{Wave, WAVE_LANES};
use super::ExecFault;
use descriptor::{ImageResource, ImageType, Sampler};
use format::TexelFormat;
use layout::{LayoutError, Surface};
use sample::{Image, SampleError};

const N: usize = WAVE_LANES;

/// What an image instruction does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Action {
    /// A load; `mip` adds a mip-level address; `pck` skips the format conversion
    /// (`signed`: sign-extends).
    Load { mip: bool, pck: bool, signed: bool },
    Store { mip: bool, pck: bool },
    Atomic(AtomicOp),
    Sample,
    Resinfo,
}

fn action(op: Opcode) -> Option<Action> {
    use Opcode as O;
    Some(match op {
        O::ImageLoad => Action::Load { mip: false, pck: false, signed: false },
        O::ImageLoadMip => Action::Load { mip: true, pck: false, signed: false },
        O::ImageLoadPck => Action::Load { mip: false, pck: true, signed: false },
        O::ImageLoadPckSgn => Action::Load { mip: false, pck: true, signed: true },
        O::ImageLoadMipPck => Action::Load { mip: true, pck: true, signed: false },
        O::ImageLoadMipPckSgn => Action::Load { mip: true, pck: true, signed: true },
        O::ImageStore => Action::Store { mip: false, pck: false },
        O::ImageStoreMip => Action::Store { mip: true, pck: false },
        O::ImageStorePck => Action::Store { mip: false, pck: true },
        O::ImageStoreMipPck => Action::Store { mip: true, pck: true },
        O::ImageGetResinfo => Action::Resinfo,
        O::ImageSample => Action::Sample,
        O::ImageAtomicSwap => Action::Atomic(AtomicOp::Swap),
        O::ImageAtomicCmpswap => Action::Atomic(AtomicOp::Cmpswap),
        O::ImageAtomicAdd => Action::Atomic(AtomicOp::Add),
        O::ImageAtomicSub => Action::Atomic(AtomicOp::Sub),
        O::ImageAtomicSmin => Action::Atomic(AtomicOp::Smin),
        O::ImageAtomicUmin => Action::Atomic(AtomicOp::Umin),
        O::ImageAtomicSmax => Action::Atomic(AtomicOp::Smax),
        O::ImageAtomicUmax => Action::Atomic(AtomicOp::Umax),
        O::ImageAtomicAnd => Action::Atomic(AtomicOp::And),
        O::ImageAtomicOr => Action::Atomic(AtomicOp::Or),
        O::ImageAtomicXor => Action::Atomic(AtomicOp::Xor),
        O::ImageAtomicInc => Action::Atomic(AtomicOp::Inc),
        O::ImageAtomicDec => Action::Atomic(AtomicOp::Dec),
        _ => return None,
    })
}

/// The fields of one MIMG instruction.
#[derive(Copy, Clone, Debug)]
struct Fields {
    dmask: u32,
    unorm: bool,
    glc: bool,
    a16: bool,
    acc: bool,
    d16: bool,
    vaddr: usize,
    vdata: usize,
    srsrc: usize,
    ssamp: usize,
    policy: CachePolicy,
}

impl Fields {
    fn of(w0: u32, w1: u32) -> Fields {
        Fields {
            dmask: (w0 >> 8) & 15,
            unorm: (w0 >> 12) & 1 != 0,
            glc: (w0 >> 13) & 1 != 0,
            a16: (w0 >> 15) & 1 != 0,
            acc: (w0 >> 16) & 1 != 0,
            d16: w1 >> 31 != 0,
            vaddr: (w1 & 0xff) as usize,
            vdata: ((w1 >> 8) & 0xff) as usize,
            srsrc: (((w1 >> 16) & 31) * 4) as usize,
            ssamp: (((w1 >> 21) & 31) * 4) as usize,
            policy: CachePolicy { sc0: (w0 >> 13) & 1 != 0, nt: (w0 >> 25) & 1 != 0, sc1: (w0 >> 7) & 1 != 0 },
        }
    }

    /// Address component `k` of `lane` as a 32-bit value (a16: its 16-bit half).
    fn address(&self, w: &Wave, lane: usize, k: usize) -> u32 {
        if self.a16 {
            let reg = w.vgpr[(self.vaddr + k / 2) & 255][lane];
            if k.is_multiple_of(2) { reg & 0xffff } else { reg >> 16 }
        } else {
            w.vgpr[(self.vaddr + k) & 255][lane]
        }
    }

    /// Address component `k` of `lane` as a float (a16: an f16).
    fn address_f32(&self, w: &Wave, lane: usize, k: usize) -> f32 {
        let v = self.address(w, lane, k);
        if self.a16 {
            crate::numeric::convert::f16_to_f32(v as u16)
        } else {
            f32::from_bits(v)
        }
    }
}

/// The T# at `srsrc`, from eight consecutive SGPRs.
fn read_resource(w: &Wave, srsrc: usize) -> ImageResource {
    ImageResource::decode(std::array::from_fn(|i| w.sgpr[(srsrc + i) & 127]))
}

/// Executes one MIMG instruction.
pub(crate) fn execute<M: DeviceMemory>(w: &mut Wave, c: &CachedInst, pc: u64, ctx: &mut Ctx<M>) -> Result<(), ExecFault> {
    let Some(act) = action(c.op) else { return Err(unsupported(&c.inst, pc)) };
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let f = Fields::of(w0, w1);
    let res = read_resource(w, f.srsrc);
    let refuse = |what: &'static str| ExecFault::Unsupported { pc, mnemonic: what, encoding: "MIMG", word: w0 };
    // A bound resource: an image type and a modelled format.
    let bound = match (res.kind, TexelFormat::new(res.data_format, res.num_format)) {
        (Some(kind), Some(fmt)) => Some((kind, fmt)),
        _ => None,
    };
    let Some((kind, fmt)) = bound else {
        unbound(w, &f, act, &res);
        return Ok(());
    };
    if act == Action::Resinfo {
        resinfo(w, &f, &res, kind);
        return Ok(());
    }
    let surface = match Surface::new(&res, fmt.bytes()) {
        Ok(s) => s,
        Err(LayoutError::Unsupported(what)) => return Err(refuse(what)),
    };
    let img = Image { res: &res, fmt, surface: &surface, kind };
    match act {
        Action::Load { mip, pck, signed } => load(w, &f, &img, ctx, pc, mip, pck.then_some(signed)),
        Action::Store { mip, pck } => store(w, &f, &img, ctx, pc, mip, pck),
        Action::Atomic(op) => atomic(w, &f, &img, ctx, pc, op).map_err(|e| e.unwrap_or_else(|| refuse("image atomic on a texel of another size than the atomic (format)"))),
        Action::Sample => {
            let samp = Sampler::decode(std::array::from_fn(|i| w.sgpr[(f.ssamp + i) & 127]));
            sample_all(w, &f, &img, &samp, ctx, pc).map_err(|e| match e {
                SampleError::Memory(m) => ExecFault::mem(pc, m),
                SampleError::Unsupported(what) => refuse(what),
            })
        }
        Action::Resinfo => Ok(()),
    }
}

/// The enabled channels of `dmask`, R first.
fn channels(dmask: u32) -> impl Iterator<Item = usize> {
    (0..4).filter(move |c| (dmask >> c) & 1 != 0)
}

/// Writes one lane's result: the `dmask` components of `values` (32-bit register values,
/// or 16-bit when `d16`), packed two per register with `d16`.
fn write_result(w: &mut Wave, f: &Fields, lane: usize, values: [u32; 4]) {
    let regs = file(w, f.acc);
    for (n, c) in channels(f.dmask).enumerate() {
        let v = values[c];
        if f.d16 {
            let r = &mut regs[(f.vdata + n / 2) & 255][lane];
            *r = if n.is_multiple_of(2) { (*r & 0xffff_0000) | (v & 0xffff) } else { (*r & 0xffff) | (v << 16) };
        } else {
            regs[(f.vdata + n) & 255][lane] = v;
        }
    }
}

/// The texel channels through `dst_sel`: SEL_0 (and the reserved 2, 3) 0, SEL_1 one,
/// SEL_X..W a channel.
fn apply_dst_sel(res: &ImageResource, fmt_one: u32, texel: [u32; 4]) -> [u32; 4] {
    res.dst_sel.map(|s| match s {
        1 => fmt_one,
        4..=7 => texel[(s - 4) as usize],
        _ => 0,
    })
}

/// Converts 32-bit register values to `d16` ones: f32 to f16 (nearest even) for float
/// formats, integers saturated to 16 bits for integer ones.
fn to_d16(values: [u32; 4], fmt: TexelFormat) -> [u32; 4] {
    values.map(|v| {
        if !fmt.is_integer() {
            crate::numeric::convert::f32_to_f16(f32::from_bits(v), crate::numeric::RoundMode::NearestEven) as u32
        } else if fmt.is_signed_integer() {
            (v as i32).clamp(i16::MIN as i32, i16::MAX as i32) as u32 & 0xffff
        } else {
            v.min(0xffff)
        }
    })
}

/// What an instruction does through an unbound resource.
fn unbound(w: &mut Wave, f: &Fields, act: Action, res: &ImageResource) {
    let exec = w.exec();
    let one = super::buffer_format::one(res.num_format, f.d16);
    let values = match act {
        Action::Load { pck: false, .. } | Action::Sample => apply_dst_sel(res, one, [0; 4]),
        // `_pck` loads return raw channels, without dst_sel.
        Action::Load { pck: true, .. } | Action::Resinfo => [0; 4],
        Action::Atomic(_) => {
            if f.glc {
                let dwords = atomic_dwords(f, act);
                let regs = file(w, f.acc);
                for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
                    for k in 0..dwords {
                        regs[(f.vdata + k) & 255][lane] = 0;
                    }
                }
            }
            return;
        }
        Action::Store { .. } => return,
    };
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        write_result(w, f, lane, values);
    }
}

/// The texel coordinates of a load, store or atomic: (x, y, z or slice, absolute level),
/// or `None` when they fall outside the view.
fn texel_coords(w: &Wave, f: &Fields, res: &ImageResource, kind: ImageType, lane: usize, mip: bool) -> Option<[u32; 4]> {
    let n = kind.coordinates();
    let comp = |k: usize| f.address(w, lane, k);
    let level = res.base_level.checked_add(if mip { comp(n) } else { 0 })?;
    if level > res.last_level.max(res.base_level) {
        return None;
    }
    let [width, height, depth] = res.level_dims(level);
    let x = comp(0);
    let (y, z) = match kind {
        ImageType::D1 => (0, 0),
        ImageType::D1Array => (0, comp(1)),
        ImageType::D2 => (comp(1), 0),
        _ => (comp(1), comp(2)),
    };
    if x >= width || y >= height {
        return None;
    }
    let z = if kind == ImageType::D3 {
        if z >= depth {
            return None;
        }
        z
    } else if kind.layered() {
        if z >= res.layers() {
            return None;
        }
        z + res.base_array
    } else {
        0
    };
    Some([x, y, z, level])
}

/// Reports an image instruction's texel addresses to the memory's route (the access is
/// performed at once whatever it answers, see the module docs).
fn report<M: DeviceMemory>(ctx: &mut Ctx<M>, pc: u64, kind: super::device::AccessKind, policy: CachePolicy, bytes: u32, mask: u64, addrs: &[u64; N]) {
    if M::OBSERVES_ROUTES && mask != 0 {
        let access = VmemAccess { pc, kind, space: Space::Image, policy, bytes_per_lane: bytes, mask, addrs };
        ctx.mem.route(&access);
    }
}

fn load<M: DeviceMemory>(w: &mut Wave, f: &Fields, img: &Image<'_>, ctx: &mut Ctx<M>, pc: u64, mip: bool, pck: Option<bool>) -> Result<(), ExecFault> {
    let exec = w.exec();
    let mut coords = [None; N];
    let mut addrs = [0u64; N];
    let mut mask = 0u64;
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        coords[lane] = texel_coords(w, f, img.res, img.kind, lane, mip);
        if let Some([x, y, z, level]) = coords[lane] {
            addrs[lane] = img.surface.address(level, x, y, z);
            mask |= 1 << lane;
        }
    }
    report(ctx, pc, super::device::AccessKind::Load, f.policy, img.surface.element_bytes(), mask, &addrs);
    let one = img.fmt.one(f.d16);
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        let bytes = match coords[lane] {
            Some([x, y, z, level]) => img.fetch(ctx.mem, level, x, y, z).map_err(|m| ExecFault::mem(pc, m))?,
            None => [0u8; 16],
        };
        let values = match pck {
            Some(signed) => {
                let raw = img.fmt.raw_channels(&bytes, signed);
                if f.d16 { raw.map(|v| v & 0xffff) } else { raw }
            }
            None => apply_dst_sel(img.res, one, img.fmt.unpack(&bytes, f.d16)),
        };
        write_result(w, f, lane, values);
    }
    Ok(())
}

fn store<M: DeviceMemory>(w: &mut Wave, f: &Fields, img: &Image<'_>, ctx: &mut Ctx<M>, pc: u64, mip: bool, pck: bool) -> Result<(), ExecFault> {
    let exec = w.exec();
    if f.dmask == 0 {
        return Ok(());
    }
    let mut texels = Vec::new();
    let mut addrs = [0u64; N];
    let mut mask = 0u64;
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        let Some([x, y, z, level]) = texel_coords(w, f, img.res, img.kind, lane, mip) else { continue };
        // The data components, placed on the channels dmask enables.
        let regs = if f.acc { &w.agpr } else { &w.vgpr };
        let mut comps = [0u32; 4];
        for (n, c) in channels(f.dmask).enumerate() {
            comps[c] = if f.d16 {
                let r = regs[(f.vdata + n / 2) & 255][lane];
                if n.is_multiple_of(2) { r & 0xffff } else { r >> 16 }
            } else {
                regs[(f.vdata + n) & 255][lane]
            };
        }
        let addr = img.surface.address(level, x, y, z);
        addrs[lane] = addr;
        mask |= 1 << lane;
        let (bytes, byte_mask) = if pck { pack_raw(img, comps) } else { img.fmt.pack(&comps, f.d16) };
        texels.push((addr, bytes, byte_mask));
    }
    report(ctx, pc, super::device::AccessKind::Store, f.policy, img.surface.element_bytes(), mask, &addrs);
    for (addr, bytes, byte_mask) in texels {
        write_masked(ctx.mem, addr, &bytes, byte_mask).map_err(|m| ExecFault::mem(pc, m))?;
    }
    Ok(())
}

/// A `_pck` store's texel: each channel's raw bits from the low bits of its component.
fn pack_raw(img: &Image<'_>, comps: [u32; 4]) -> ([u8; 16], u16) {
    // Reuse the format's packing with integer conversion: the raw bits of every channel
    // are the component's low bits. The uint store rule saturates, so mask first.
    let bytes = img.fmt.bytes() as usize;
    let mut out = [0u8; 16];
    // Channel widths: read back which bits each channel occupies by packing all-ones.
    let mut offset = 0u32;
    let mut acc = 0u128;
    for (c, &v) in comps.iter().enumerate() {
        let width = channel_width(img.fmt, c);
        if width == 0 {
            continue;
        }
        let mask = if width >= 32 { u32::MAX as u128 } else { (1u128 << width) - 1 };
        acc |= (v as u128 & mask) << offset;
        offset += width;
    }
    out[..bytes].copy_from_slice(&acc.to_le_bytes()[..bytes]);
    (out, ((1u32 << bytes) - 1) as u16)
}

/// The bit width of channel `c` of a format (0 when it has none), found from the raw
/// channel decoding of an all-ones texel.
fn channel_width(fmt: TexelFormat, c: usize) -> u32 {
    let ones = [0xffu8; 16];
    let raw = fmt.raw_channels(&ones, false)[c];
    32 - raw.leading_zeros()
}

/// Writes the bytes of `data` that `mask` selects.
fn write_masked<M: DeviceMemory>(mem: &mut M, addr: u64, data: &[u8; 16], mask: u16) -> Result<(), super::memory::MemFault> {
    if mask == 0 {
        return Ok(());
    }
    let (lo, hi) = (mask.trailing_zeros() as usize, 16 - mask.leading_zeros() as usize);
    if mask >> lo == (1 << (hi - lo)) - 1 {
        return mem.write(addr.wrapping_add(lo as u64), &data[lo..hi]);
    }
    for i in lo..hi {
        if (mask >> i) & 1 != 0 {
            mem.write(addr.wrapping_add(i as u64), &data[i..i + 1])?;
        }
    }
    Ok(())
}

/// Dwords of an atomic's data (and of its compare operand) per lane.
fn atomic_dwords(f: &Fields, act: Action) -> usize {
    let enabled = f.dmask.count_ones();
    match act {
        Action::Atomic(AtomicOp::Cmpswap) => {
            if enabled >= 4 {
                2
            } else {
                1
            }
        }
        _ => {
            if enabled >= 2 {
                2
            } else {
                1
            }
        }
    }
}

/// `Err(None)`: the texel size does not fit the atomic (the caller names it).
fn atomic<M: DeviceMemory>(w: &mut Wave, f: &Fields, img: &Image<'_>, ctx: &mut Ctx<M>, pc: u64, op: AtomicOp) -> Result<(), Option<ExecFault>> {
    let dwords = atomic_dwords(f, Action::Atomic(op));
    if img.fmt.bytes() as usize != 4 * dwords {
        return Err(None);
    }
    let exec = w.exec();
    let mut lanes: [LaneAddr; N] = std::array::from_fn(|_| LaneAddr::Global(0));
    let mut mask = 0u64;
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        match texel_coords(w, f, img.res, img.kind, lane, false) {
            Some([x, y, z, level]) => {
                lanes[lane] = LaneAddr::Global(img.surface.address(level, x, y, z));
                mask |= 1 << lane;
            }
            None if f.glc => {
                let regs = file(w, f.acc);
                for k in 0..dwords {
                    regs[(f.vdata + k) & 255][lane] = 0;
                }
            }
            None => {}
        }
    }
    let index = AtomicOp::ALL.iter().position(|&o| o == op).unwrap_or(0) as u16;
    let memop = MemOp {
        pc,
        aux: KIND_ATOMIC | (index << 8) | (u16::from(dwords == 2) << 13),
        data: f.vdata,
        vdst: f.vdata,
        acc: f.acc,
        glc: f.glc,
        policy: f.policy,
        space: Space::Image,
    };
    access(w, ctx, &memop, mask, &lanes).map_err(Some)
}

fn resinfo(w: &mut Wave, f: &Fields, res: &ImageResource, kind: ImageType) {
    let exec = w.exec();
    let levels = res.last_level.max(res.base_level) - res.base_level + 1;
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        let mip = f.address(w, lane, 0);
        let values = if mip < levels {
            let [width, height, depth] = res.level_dims(res.base_level + mip);
            let third = if kind == ImageType::D3 {
                depth
            } else if kind.layered() {
                res.layers()
            } else {
                1
            };
            [width, height, third, levels]
        } else {
            [0; 4]
        };
        let values = if f.d16 { values.map(|v| v.min(0xffff)) } else { values };
        write_result(w, f, lane, values);
    }
}

fn sample_all<M: DeviceMemory>(w: &mut Wave, f: &Fields, img: &Image<'_>, samp: &Sampler, ctx: &mut Ctx<M>, pc: u64) -> Result<(), SampleError> {
    sample::check_sampler(samp, img.kind)?;
    let exec = w.exec();
    let unnormalized = f.unorm || samp.force_unnormalized;
    let n = match img.kind {
        ImageType::D1 => 1,
        ImageType::D1Array | ImageType::D2 => 2,
        _ => 3,
    };
    let coords: [[f32; 3]; N] = std::array::from_fn(|lane| std::array::from_fn(|k| if k < n { f.address_f32(w, lane, k) } else { 0.0 }));
    // Each lane's first texel (nearest level 0 texel) for the route.
    let mut addrs = [0u64; N];
    for lane in (0..N).filter(|l| (exec >> l) & 1 != 0) {
        let [wd, ht, _] = img.res.level_dims(img.res.base_level);
        let scale = |c: f32, size: u32| if unnormalized { c } else { c * size as f32 };
        let clampi = |c: f32, size: u32| (scale(c, size).floor().max(0.0) as u32).min(size - 1);
        let x = clampi(coords[lane][0], wd);
        let y = if n >= 2 && !img.kind.one_dimensional() { clampi(coords[lane][1], ht) } else { 0 };
        addrs[lane] = img.surface.address(img.res.base_level, x, y, 0);
    }
    report(ctx, pc, super::device::AccessKind::Load, f.policy, img.surface.element_bytes(), exec, &addrs);
    let one = img.fmt.one(false);
    for quad in 0..N / 4 {
        let q = 4 * quad;
        if (exec >> q) & 0xf == 0 {
            continue;
        }
        let lod = sample::level_of_detail(img, [coords[q], coords[q + 1], coords[q + 2]], unnormalized);
        let lod = sample::biased_lod(lod, samp, img.res);
        for lane in (q..q + 4).filter(|l| (exec >> l) & 1 != 0) {
            let texel = sample::sample(ctx.mem, img, samp, coords[lane], lod, unnormalized)?;
            let values = apply_dst_sel(img.res, one, texel);
            let values = if f.d16 { to_d16(values, img.fmt) } else { values };
            write_result(w, f, lane, values);
        }
    }
    Ok(())
}

/// The byte address of texel (x, y, slice-or-depth `z`) of absolute mip level `level`
/// of the image a T# (`t_sharp`, its eight dwords) describes, as the image instructions
/// compute it; `None` when the T# is unbound or its layout is not modelled. For tests
/// and tools (the layout oracle test compares it with ROCr's addrlib).
pub fn texel_address(t_sharp: [u32; 8], level: u32, x: u32, y: u32, z: u32) -> Option<u64> {
    let res = ImageResource::decode(t_sharp);
    res.kind?;
    let fmt = TexelFormat::new(res.data_format, res.num_format)?;
    let surface = Surface::new(&res, fmt.bytes()).ok()?;
    Some(surface.address(level, x, y, z))
}
