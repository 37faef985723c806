//! The executor's view of device memory ([`DeviceMemory`]) and the vector-memory requests
//! a timed model can take over ([`VmemAccess`], [`Route`], [`VmemRequest`]).
//!
//! The executor is generic over [`DeviceMemory`] (monomorphized: no `dyn` on the hot path).
//! [`Memory`](super::Memory) is the standalone implementation; a GPU model implements it
//! over host memory shared by worker threads and overrides the atomics with real host
//! atomics.
//!
//! **Routing.** Before a vector memory instruction (FLAT/GLOBAL/SCRATCH/MUBUF load, store
//! or atomic) or a scalar store or atomic touches memory, and for every cache-maintenance
//! instruction and scalar load, the executor calls [`DeviceMemory::route`] once with a
//! [`VmemAccess`]. [`Route::Now`] performs the access at once. [`Route::Defer`] (honoured
//! only for vector loads, stores and atomics and scalar stores and atomics) leaves memory
//! untouched: the wave stores an owned [`VmemRequest`], its status
//! becomes [`WaveStatus::WaitMemory`](super::WaveStatus::WaitMemory) and it stops. The
//! caller takes the request ([`Wave::take_request`](super::Wave::take_request)), performs it
//! later with [`VmemRequest::perform`] and hands the [`VmemResponse`] back with
//! [`Wave::complete`](super::Wave::complete).
//!
//! **Cache policy bits.** [`CachePolicy`] names the three cache-policy bits by their
//! gfx940 names; on gfx90a the same encoding bits are called glc, slc and scc. The mapping
//! is the encoding identity: `sc0` = glc (FLAT bit 16, MUBUF bit 14, SMEM bit 16),
//! `nt` = slc (FLAT bit 17, MUBUF bit 54), `sc1` = scc (FLAT bit 25, MUBUF bit 15).
//!
//! **Lane addresses.** [`VmemAccess::addrs`] holds device addresses after every
//! translation: scratch and private-aperture lanes carry their backing address
//! (`scratch_base + lane * lane_bytes + offset`). FLAT lanes that fall in the LDS aperture
//! are not device accesses: they are left out of the mask, and an instruction with such
//! lanes is always performed at once whatever `route` answers.

use serde::{Deserialize, Serialize};
use serde_big_array::BigArray;

use super::memory::MemFault;
use super::wave::WAVE_LANES;
use crate::numeric::convert::{bf16_to_f32, f16_to_f64, f64_to_bf16, f64_to_f16};
use crate::numeric::{Mode, RoundMode};

const N: usize = WAVE_LANES;

/// The memory a wave's vector and scalar memory instructions access. See the
/// [module docs](self).
///
/// Only `read` and `write` are required; everything else has a correct default built on
/// them. Accesses never panic: bad addresses are [`MemFault`] values.
pub trait DeviceMemory {
    /// Copies `buf.len()` bytes from `addr`.
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault>;

    /// Copies `data` to `addr` (the executor's store path).
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault>;

    /// Makes `[addr, addr + len)` writable for the dispatch set-up of
    /// [`run_program`](super::run_program) (kernarg segment, AQL packet, scratch). Memories
    /// that are always backed need nothing; the default does nothing.
    fn reserve(&mut self, addr: u64, len: u64) -> Result<(), MemFault> {
        let _ = (addr, len);
        Ok(())
    }

    /// Reads a little-endian u8.
    fn read_u8(&mut self, addr: u64) -> Result<u8, MemFault> {
        let mut b = [0u8; 1];
        self.read(addr, &mut b)?;
        Ok(b[0])
    }

    /// Reads a little-endian u16.
    fn read_u16(&mut self, addr: u64) -> Result<u16, MemFault> {
        let mut b = [0u8; 2];
        self.read(addr, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    /// Reads a little-endian u32.
    fn read_u32(&mut self, addr: u64) -> Result<u32, MemFault> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads a little-endian u64.
    fn read_u64(&mut self, addr: u64) -> Result<u64, MemFault> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Reads a little-endian u128.
    fn read_u128(&mut self, addr: u64) -> Result<u128, MemFault> {
        let mut b = [0u8; 16];
        self.read(addr, &mut b)?;
        Ok(u128::from_le_bytes(b))
    }

    /// Writes a little-endian u8.
    fn write_u8(&mut self, addr: u64, v: u8) -> Result<(), MemFault> {
        self.write(addr, &[v])
    }

    /// Writes a little-endian u16.
    fn write_u16(&mut self, addr: u64, v: u16) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Writes a little-endian u32.
    fn write_u32(&mut self, addr: u64, v: u32) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Writes a little-endian u64.
    fn write_u64(&mut self, addr: u64, v: u64) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Writes a little-endian u128.
    fn write_u128(&mut self, addr: u64, v: u128) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Reads one u32 per lane of `mask` from `addrs` into `out`; other lanes keep their
    /// value. Lanes are read in lane order; the first fault stops the gather.
    fn gather_u32(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [u32; 64]) -> Result<(), MemFault> {
        for lane in 0..N {
            if (mask >> lane) & 1 != 0 {
                out[lane] = self.read_u32(addrs[lane])?;
            }
        }
        Ok(())
    }

    /// Stores `vals[lane]` at `addrs[lane]` for the lanes of `mask`, in lane order (a later
    /// lane wins where lanes overlap); the first fault stops the scatter.
    fn scatter_u32(&mut self, addrs: &[u64; 64], mask: u64, vals: &[u32; 64]) -> Result<(), MemFault> {
        for lane in 0..N {
            if (mask >> lane) & 1 != 0 {
                self.write_u32(addrs[lane], vals[lane])?;
            }
        }
        Ok(())
    }

    /// Reads `out.len()` consecutive dwords (1 to 4) per lane of `mask`, lane `l`'s from
    /// `addrs[l]`, into `out[k][l]`; other lanes keep their values. Each lane is one
    /// access of `4 * out.len()` bytes (see [`gather_dwords_by_lane`]); lanes are read in
    /// lane order and the first fault stops the gather. The default takes one
    /// [`DeviceMemory::read`] per lane (or [`DeviceMemory::gather_u32`] for one dword); a
    /// memory that can check all lanes at once overrides it.
    fn gather_dwords(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [[u32; 64]]) -> Result<(), MemFault> {
        match out {
            [one] => self.gather_u32(addrs, mask, one),
            _ => gather_dwords_by_lane(self, addrs, mask, out),
        }
    }

    /// Stores `data.len()` consecutive dwords (1 to 4) per lane of `mask`, `data[k][l]` at
    /// `addrs[l] + 4 * k`, in lane order (a later lane wins where lanes overlap); the
    /// first fault stops the scatter, earlier lanes' stores stay done. The default takes
    /// one [`DeviceMemory::write`] per lane (or [`DeviceMemory::scatter_u32`] for one
    /// dword).
    fn scatter_dwords(&mut self, addrs: &[u64; 64], mask: u64, data: &[[u32; 64]]) -> Result<(), MemFault> {
        match data {
            [one] => self.scatter_u32(addrs, mask, one),
            _ => scatter_dwords_by_lane(self, addrs, mask, data),
        }
    }

    /// One lane's 32-bit read-modify-write at `addr`; returns the old value. The default
    /// reads, applies [`AtomicOp::apply_u32`] and writes back (atomic only because nothing
    /// else runs meanwhile); a memory shared between threads overrides it.
    fn atomic_u32(&mut self, addr: u64, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        let old = self.read_u32(addr)?;
        self.write_u32(addr, op.apply_u32(old, src, cmp))?;
        Ok(old)
    }

    /// One lane's 64-bit read-modify-write at `addr`; returns the old value (see
    /// [`DeviceMemory::atomic_u32`]).
    fn atomic_u64(&mut self, addr: u64, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
        let old = self.read_u64(addr)?;
        self.write_u64(addr, op.apply_u64(old, src, cmp))?;
        Ok(old)
    }

    /// False promises that [`DeviceMemory::route`] always answers [`Route::Now`] and does
    /// nothing else, so the executor may skip calling it (and building the lane addresses
    /// it would see) and take whole-block fast paths. The default (true) calls it for every
    /// access.
    const OBSERVES_ROUTES: bool = true;

    /// Called once per vector memory instruction, cache-maintenance instruction and scalar
    /// load before it touches memory (unless [`DeviceMemory::OBSERVES_ROUTES`] is false).
    /// The default performs everything at once.
    #[inline]
    fn route(&mut self, access: &VmemAccess<'_>) -> Route {
        let _ = access;
        Route::Now
    }
}

/// [`DeviceMemory::gather_dwords`] one lane at a time: one [`DeviceMemory::read`] of
/// `4 * out.len()` bytes (at most 16) per lane of `mask`, in lane order.
pub fn gather_dwords_by_lane<M: DeviceMemory + ?Sized>(mem: &mut M, addrs: &[u64; 64], mask: u64, out: &mut [[u32; 64]]) -> Result<(), MemFault> {
    let dwords = out.len().min(4);
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let mut buf = [0u8; 16];
        mem.read(addrs[lane], &mut buf[..4 * dwords])?;
        for (k, reg) in out.iter_mut().take(dwords).enumerate() {
            reg[lane] = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
        }
    }
    Ok(())
}

/// [`DeviceMemory::scatter_dwords`] one lane at a time: one [`DeviceMemory::write`] of
/// `4 * data.len()` bytes (at most 16) per lane of `mask`, in lane order.
pub fn scatter_dwords_by_lane<M: DeviceMemory + ?Sized>(mem: &mut M, addrs: &[u64; 64], mask: u64, data: &[[u32; 64]]) -> Result<(), MemFault> {
    let dwords = data.len().min(4);
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let mut buf = [0u8; 16];
        for (k, reg) in data.iter().take(dwords).enumerate() {
            buf[4 * k..4 * k + 4].copy_from_slice(&reg[lane].to_le_bytes());
        }
        mem.write(addrs[lane], &buf[..4 * dwords])?;
    }
    Ok(())
}

/// A read-modify-write operation of a memory atomic. `src` is the instruction's data
/// operand, `cmp` the compare operand of `Cmpswap` (and the OR bits of `Mskor`).
///
/// Float operations are IEEE with round-to-nearest-even and keep denormals; packed
/// f16/bf16 adds work on both 16-bit halves independently.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum AtomicOp {
    /// `new = src`.
    Swap,
    /// `new = if old == cmp { src } else { old }`.
    Cmpswap,
    /// Wrapping integer add.
    Add,
    /// Wrapping integer subtract (`old - src`).
    Sub,
    /// Signed minimum.
    Smin,
    /// Unsigned minimum.
    Umin,
    /// Signed maximum.
    Smax,
    /// Unsigned maximum.
    Umax,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// `new = if old >= src { 0 } else { old + 1 }` (unsigned).
    Inc,
    /// `new = if old == 0 || old > src { src } else { old - 1 }` (unsigned).
    Dec,
    /// f32 add.
    AddF32,
    /// f32 minimum.
    MinF32,
    /// f32 maximum.
    MaxF32,
    /// f64 add.
    AddF64,
    /// f64 minimum.
    MinF64,
    /// f64 maximum.
    MaxF64,
    /// Two f16 adds, one per 16-bit half.
    PkAddF16,
    /// Two bf16 adds, one per 16-bit half.
    PkAddBf16,
    /// `new = (old & !src) | cmp` (LDS mask-or).
    Mskor,
}

impl AtomicOp {
    /// Every operation, in declaration order.
    pub const ALL: [AtomicOp; 22] = [
        AtomicOp::Swap,
        AtomicOp::Cmpswap,
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Smin,
        AtomicOp::Umin,
        AtomicOp::Smax,
        AtomicOp::Umax,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::AddF32,
        AtomicOp::MinF32,
        AtomicOp::MaxF32,
        AtomicOp::AddF64,
        AtomicOp::MinF64,
        AtomicOp::MaxF64,
        AtomicOp::PkAddF16,
        AtomicOp::PkAddBf16,
        AtomicOp::Mskor,
    ];

    /// The operation's mnemonic stem in `global_atomic_<stem>` (`Mskor`: the DS name).
    pub fn stem(self) -> &'static str {
        match self {
            AtomicOp::Swap => "swap",
            AtomicOp::Cmpswap => "cmpswap",
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::Smin => "smin",
            AtomicOp::Umin => "umin",
            AtomicOp::Smax => "smax",
            AtomicOp::Umax => "umax",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
            AtomicOp::Inc => "inc",
            AtomicOp::Dec => "dec",
            AtomicOp::AddF32 => "add_f32",
            AtomicOp::MinF32 => "min_f32",
            AtomicOp::MaxF32 => "max_f32",
            AtomicOp::AddF64 => "add_f64",
            AtomicOp::MinF64 => "min_f64",
            AtomicOp::MaxF64 => "max_f64",
            AtomicOp::PkAddF16 => "pk_add_f16",
            AtomicOp::PkAddBf16 => "pk_add_bf16",
            AtomicOp::Mskor => "mskor",
        }
    }

    /// True for the operations that always work on 64 bits (the f64 ones); the integer
    /// operations are 64-bit only in their `_x2` forms.
    pub fn is_f64(self) -> bool {
        matches!(self, AtomicOp::AddF64 | AtomicOp::MinF64 | AtomicOp::MaxF64)
    }

    /// The new 32-bit memory value for `old`. 64-bit-only operations (f64) apply to the
    /// zero-extended values and truncate.
    pub fn apply_u32(self, old: u32, src: u32, cmp: u32) -> u32 {
        let (o, s) = (old, src);
        match self {
            AtomicOp::Swap => s,
            AtomicOp::Cmpswap => {
                if o == cmp {
                    s
                } else {
                    o
                }
            }
            AtomicOp::Add => o.wrapping_add(s),
            AtomicOp::Sub => o.wrapping_sub(s),
            AtomicOp::Smin => (o as i32).min(s as i32) as u32,
            AtomicOp::Smax => (o as i32).max(s as i32) as u32,
            AtomicOp::Umin => o.min(s),
            AtomicOp::Umax => o.max(s),
            AtomicOp::And => o & s,
            AtomicOp::Or => o | s,
            AtomicOp::Xor => o ^ s,
            AtomicOp::Inc => {
                if o >= s {
                    0
                } else {
                    o + 1
                }
            }
            AtomicOp::Dec => {
                if o == 0 || o > s {
                    s
                } else {
                    o - 1
                }
            }
            AtomicOp::AddF32 => (f32::from_bits(o) + f32::from_bits(s)).to_bits(),
            AtomicOp::MinF32 => f32::from_bits(o).min(f32::from_bits(s)).to_bits(),
            AtomicOp::MaxF32 => f32::from_bits(o).max(f32::from_bits(s)).to_bits(),
            AtomicOp::PkAddF16 | AtomicOp::PkAddBf16 => self.pk_add(o, s, Mode::IEEE_DENORMALS),
            AtomicOp::Mskor => (o & !s) | cmp,
            AtomicOp::AddF64 | AtomicOp::MinF64 | AtomicOp::MaxF64 => self.apply_u64(o as u64, s as u64, cmp as u64) as u32,
        }
    }

    /// `pk_add_f16` / `pk_add_bf16` on one dword: each half is `old + src`, rounded to
    /// nearest even, with denormals flushed as `mode` says: f16 per FP_DENORM.f16_64, bf16
    /// (f32's exponent range) per FP_DENORM.f32. Memory-side atomics keep every denormal
    /// ([`Mode::IEEE_DENORMALS`]); LDS ones follow the wave's MODE.
    pub(crate) fn pk_add(self, old: u32, src: u32, mode: Mode) -> u32 {
        let half = |a: u16, b: u16| -> u16 {
            if self == AtomicOp::PkAddF16 {
                let (a, b) = (mode.flush_in_f16(a), mode.flush_in_f16(b));
                mode.flush_out_f16(f64_to_f16(f16_to_f64(a) + f16_to_f64(b), RoundMode::NearestEven))
            } else {
                let (a, b) = (mode.flush_in_f32(bf16_to_f32(a)), mode.flush_in_f32(bf16_to_f32(b)));
                let r = f64_to_bf16(a as f64 + b as f64, RoundMode::NearestEven);
                (mode.flush_out_f32(bf16_to_f32(r)).to_bits() >> 16) as u16
            }
        };
        half(old as u16, src as u16) as u32 | (half((old >> 16) as u16, (src >> 16) as u16) as u32) << 16
    }

    /// The new 64-bit memory value for `old`. The 32-bit-only float operations (f32,
    /// packed 16-bit) apply to the low halves and zero the high half.
    pub fn apply_u64(self, old: u64, src: u64, cmp: u64) -> u64 {
        let (o, s) = (old, src);
        match self {
            AtomicOp::Swap => s,
            AtomicOp::Cmpswap => {
                if o == cmp {
                    s
                } else {
                    o
                }
            }
            AtomicOp::Add => o.wrapping_add(s),
            AtomicOp::Sub => o.wrapping_sub(s),
            AtomicOp::Smin => (o as i64).min(s as i64) as u64,
            AtomicOp::Smax => (o as i64).max(s as i64) as u64,
            AtomicOp::Umin => o.min(s),
            AtomicOp::Umax => o.max(s),
            AtomicOp::And => o & s,
            AtomicOp::Or => o | s,
            AtomicOp::Xor => o ^ s,
            AtomicOp::Inc => {
                if o >= s {
                    0
                } else {
                    o + 1
                }
            }
            AtomicOp::Dec => {
                if o == 0 || o > s {
                    s
                } else {
                    o - 1
                }
            }
            AtomicOp::AddF64 => (f64::from_bits(o) + f64::from_bits(s)).to_bits(),
            AtomicOp::MinF64 => f64::from_bits(o).min(f64::from_bits(s)).to_bits(),
            AtomicOp::MaxF64 => f64::from_bits(o).max(f64::from_bits(s)).to_bits(),
            AtomicOp::Mskor => (o & !s) | cmp,
            AtomicOp::AddF32 | AtomicOp::MinF32 | AtomicOp::MaxF32 | AtomicOp::PkAddF16 | AtomicOp::PkAddBf16 => {
                self.apply_u32(o as u32, s as u32, cmp as u32) as u64
            }
        }
    }
}


/// What a memory instruction does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    /// A vector load.
    Load,
    /// A vector store, or a scalar one ([`Space::Scalar`], lane 0).
    Store,
    /// A vector atomic, or a scalar one ([`Space::Scalar`], lane 0); `returns` when it
    /// writes the old value back to VGPRs (SGPRs for a scalar one) (glc/sc0).
    Atomic {
        /// The instruction returns the pre-op value.
        returns: bool,
    },
    /// A scalar load (`s_load*`, `s_buffer_load*`): one access of `bytes_per_lane` bytes.
    ScalarLoad,
    /// A cache write-back (`buffer_wbl2`, `s_dcache_wb*`).
    Writeback,
    /// A cache invalidation (`buffer_inv*`, `buffer_wbinvl1*`, `s_dcache_inv*`).
    Invalidate,
    /// A global wave sync operation (`ds_gws_*`): not a memory access; always deferred,
    /// performed by the device's [`GwsUnit`](super::gws::GwsUnit), never by
    /// [`VmemRequest::perform`].
    Gws {
        /// The operation.
        op: GwsOp,
        /// The GWS resource id (0..64).
        resource: u32,
        /// The operation's value (data0 of the first active lane).
        value: u32,
    },
}

/// A global wave sync operation (see [`super::gws`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GwsOp {
    /// `ds_gws_init`.
    Init,
    /// `ds_gws_sema_v`.
    SemaV,
    /// `ds_gws_sema_br`.
    SemaBr,
    /// `ds_gws_sema_p`.
    SemaP,
    /// `ds_gws_sema_release_all`.
    SemaReleaseAll,
    /// `ds_gws_barrier`.
    Barrier,
}

/// Which address space an instruction names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Space {
    /// FLAT and GLOBAL instructions.
    Global,
    /// SCRATCH instructions (addresses are the lanes' backing device addresses).
    Scratch,
    /// MUBUF instructions and the `buffer_*` cache operations.
    Buffer,
    /// Scalar memory: loads, stores, atomics and `s_dcache_*`.
    Scalar,
    /// MIMG (image) instructions: addresses are texel addresses.
    Image,
}

/// The instruction's cache-policy bits (named as on gfx940; see the [module docs](self)
/// for the gfx90a glc/slc/scc mapping).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CachePolicy {
    /// sc0 (gfx90a: glc).
    pub sc0: bool,
    /// sc1 (gfx90a: scc).
    pub sc1: bool,
    /// nt (gfx90a: slc).
    pub nt: bool,
}

/// One memory instruction as [`DeviceMemory::route`] sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VmemAccess<'a> {
    /// Address of the instruction.
    pub pc: u64,
    /// Load, store, atomic, scalar load or cache operation.
    pub kind: AccessKind,
    /// The instruction's address space.
    pub space: Space,
    /// Cache-policy bits.
    pub policy: CachePolicy,
    /// Bytes each lane accesses (scalar loads: the whole load; cache operations: 0).
    pub bytes_per_lane: u32,
    /// Lanes that access device memory (scalar loads and cache operations: 1).
    pub mask: u64,
    /// Per-lane device addresses (scalar loads: `addrs[0]`; cache operations: 0).
    pub addrs: &'a [u64; 64],
}

/// [`DeviceMemory::route`]'s answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Route {
    /// Perform the access now, as the standalone executor does.
    Now,
    /// Do not touch memory: the wave parks a [`VmemRequest`] and stops with
    /// [`WaveStatus::WaitMemory`](super::WaveStatus::WaitMemory). Honoured only for vector
    /// loads, stores and atomics and scalar stores and atomics; anything else is performed
    /// at once.
    Defer,
}

/// One dword of every lane.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneDwords(#[serde(with = "BigArray")] pub [u32; 64]);

impl Default for LaneDwords {
    fn default() -> Self {
        LaneDwords([0; 64])
    }
}

/// Up to `CAP` dwords of every lane, inline (no heap): a deferred access's store data or
/// atomic operands, or its answer. Dereferences to the `len` dwords it holds; serialized as
/// a sequence of [`LaneDwords`], as a `Vec` would be.
#[derive(Clone)]
pub struct LaneRegs<const CAP: usize> {
    len: u8,
    regs: [LaneDwords; CAP],
}

impl<const CAP: usize> LaneRegs<CAP> {
    /// No dwords.
    pub fn new() -> Self {
        LaneRegs { len: 0, regs: [LaneDwords::default(); CAP] }
    }

    /// Forgets every dword (keeps the storage).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends one dword of every lane.
    ///
    /// Panics past `CAP` dwords: every access moves at most four dwords per lane (two
    /// for an atomic's compare operand), so only a bug in the executor can get there.
    #[inline]
    pub fn push(&mut self, d: [u32; 64]) {
        assert!((self.len as usize) < CAP, "at most {CAP} dwords per lane");
        self.regs[self.len as usize] = LaneDwords(d);
        self.len += 1;
    }

    /// Makes it hold `n` (at most `CAP`) dwords, the added ones zero.
    #[inline]
    pub fn resize_zeroed(&mut self, n: usize) {
        let n = n.min(CAP);
        for r in self.regs.iter_mut().take(n).skip(self.len as usize) {
            r.0 = [0; 64];
        }
        self.len = n as u8;
    }
}

impl<const CAP: usize> Default for LaneRegs<CAP> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const CAP: usize> std::ops::Deref for LaneRegs<CAP> {
    type Target = [LaneDwords];

    #[inline]
    fn deref(&self) -> &[LaneDwords] {
        &self.regs[..self.len as usize]
    }
}

impl<const CAP: usize> std::ops::DerefMut for LaneRegs<CAP> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [LaneDwords] {
        &mut self.regs[..self.len as usize]
    }
}

impl<const CAP: usize> PartialEq for LaneRegs<CAP> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<const CAP: usize> Eq for LaneRegs<CAP> {}

impl<const CAP: usize> std::fmt::Debug for LaneRegs<CAP> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<const CAP: usize> FromIterator<LaneDwords> for LaneRegs<CAP> {
    /// Panics past `CAP` items, as [`LaneRegs::push`].
    fn from_iter<I: IntoIterator<Item = LaneDwords>>(iter: I) -> Self {
        let mut r = Self::new();
        for d in iter {
            r.push(d.0);
        }
        r
    }
}

impl<const CAP: usize> Serialize for LaneRegs<CAP> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, const CAP: usize> Deserialize<'de> for LaneRegs<CAP> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Vec::<LaneDwords>::deserialize(d)?;
        if v.len() > CAP {
            return Err(serde::de::Error::invalid_length(v.len(), &"at most the capacity's dwords per lane"));
        }
        Ok(v.into_iter().collect())
    }
}

/// The element a load or store moves per lane.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Element {
    /// `dwords` whole dwords.
    Dwords,
    /// One byte, zero-extended on load.
    U8,
    /// One byte, sign-extended on load.
    I8,
    /// Two bytes, zero-extended on load.
    U16,
    /// Two bytes, sign-extended on load.
    I16,
}

impl Element {
    /// Bytes per lane of an access of `dwords` dwords of this element.
    pub fn bytes(self, dwords: u32) -> u32 {
        match self {
            Element::Dwords => 4 * dwords,
            Element::U8 | Element::I8 => 1,
            Element::U16 | Element::I16 => 2,
        }
    }
}

/// The VGPRs a deferred load or returning atomic writes when it completes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VgprDest {
    /// First register (`v<first>` or `a<first>`); consecutive registers wrap at 256.
    pub first: u8,
    /// Number of registers (dwords per lane).
    pub count: u8,
    /// AccVGPRs instead of VGPRs.
    pub acc: bool,
}

/// A deferred vector memory access, owned and self-contained: it can be shipped to
/// another component, stored with a checkpoint and performed later with
/// [`VmemRequest::perform`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VmemRequest {
    /// Address of the instruction.
    pub pc: u64,
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// The instruction's address space.
    pub space: Space,
    /// The read-modify-write of an atomic.
    pub op: Option<AtomicOp>,
    /// What each lane moves (atomics: [`Element::Dwords`]).
    pub element: Element,
    /// Dwords per lane: loads and stores of whole dwords 1..=4, sub-dword accesses 1,
    /// atomics 1 (32-bit) or 2 (64-bit).
    pub dwords: u32,
    /// Lanes that access memory.
    pub mask: u64,
    /// Per-lane device addresses.
    #[serde(with = "BigArray")]
    pub addrs: [u64; 64],
    /// Store data, or the atomic's source operand: `data[k]` is dword `k` of every lane.
    pub data: LaneRegs<4>,
    /// The compare operand of an atomic cmpswap (`dwords` entries), otherwise empty.
    pub cmp: LaneRegs<2>,
    /// Cache-policy bits.
    pub policy: CachePolicy,
    /// Where the returned dwords go (loads and returning atomics).
    pub dest: Option<VgprDest>,
    /// The answer, once [`VmemRequest::perform_in_place`] performed it: the request's box
    /// travels to where the access is ordered and back to its wave with the answer in it
    /// (no allocation per access).
    #[serde(default)]
    pub answer: VmemResponse,
}

/// What a performed [`VmemRequest`] returns to its wave.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmemResponse {
    /// Lanes whose `data` is valid.
    pub mask: u64,
    /// Returned dword `k` of every lane (loads: the loaded value, extended; atomics: the
    /// old value); empty for stores and non-returning atomics.
    pub data: LaneRegs<4>,
}

impl VmemRequest {
    /// Bytes each lane accesses.
    pub fn bytes_per_lane(&self) -> u32 {
        self.element.bytes(self.dwords)
    }

    /// The [`VmemAccess`] describing this request (what `route` saw).
    pub fn access(&self) -> VmemAccess<'_> {
        VmemAccess {
            pc: self.pc,
            kind: self.kind,
            space: self.space,
            policy: self.policy,
            bytes_per_lane: self.bytes_per_lane(),
            mask: self.mask,
            addrs: &self.addrs,
        }
    }

    /// Performs the access on `mem` in lane order: loads read, stores write, atomics go
    /// through [`DeviceMemory::atomic_u32`] / [`DeviceMemory::atomic_u64`]. The first
    /// faulting lane stops it (earlier lanes' stores and atomics stay done).
    pub fn perform<M: DeviceMemory + ?Sized>(&self, mem: &mut M) -> Result<VmemResponse, MemFault> {
        let mut out = VmemResponse::default();
        self.perform_to(mem, &mut out)?;
        Ok(out)
    }

    /// [`VmemRequest::perform`] with the answer left in [`VmemRequest::answer`] (a fault
    /// leaves it empty).
    pub fn perform_in_place<M: DeviceMemory + ?Sized>(&mut self, mem: &mut M) -> Result<(), MemFault> {
        let mut out = std::mem::take(&mut self.answer);
        let done = self.perform_to(mem, &mut out);
        if done.is_err() {
            out.mask = 0;
            out.data.clear();
        }
        self.answer = out;
        done
    }

    /// A request of nothing (no lanes), for a scheduler to fill in: the storage a wave
    /// reuses for its deferred accesses.
    pub fn blank() -> VmemRequest {
        VmemRequest {
            pc: 0,
            kind: AccessKind::Load,
            space: Space::Global,
            op: None,
            element: Element::Dwords,
            dwords: 0,
            mask: 0,
            addrs: [0; N],
            data: LaneRegs::new(),
            cmp: LaneRegs::new(),
            policy: CachePolicy::default(),
            dest: None,
            answer: VmemResponse::default(),
        }
    }

    /// Performs the access, writing the answer to `out`.
    fn perform_to<M: DeviceMemory + ?Sized>(&self, mem: &mut M, out: &mut VmemResponse) -> Result<(), MemFault> {
        let mask = self.mask;
        let dwords = (self.dwords as usize).min(4);
        out.mask = mask;
        out.data.clear();
        match self.kind {
            AccessKind::Load => {
                out.data.resize_zeroed(dwords);
                let data = &mut *out.data;
                if self.element == Element::Dwords && dwords == 1 {
                    mem.gather_u32(&self.addrs, mask, &mut data[0].0)?;
                } else {
                    for lane in 0..N {
                        if (mask >> lane) & 1 == 0 {
                            continue;
                        }
                        let addr = self.addrs[lane];
                        match self.element {
                            Element::Dwords => {
                                let mut buf = [0u8; 16];
                                mem.read(addr, &mut buf[..4 * dwords])?;
                                for (k, d) in data.iter_mut().enumerate() {
                                    d.0[lane] = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
                                }
                            }
                            Element::U8 => data[0].0[lane] = mem.read_u8(addr)? as u32,
                            Element::I8 => data[0].0[lane] = mem.read_u8(addr)? as i8 as i32 as u32,
                            Element::U16 => data[0].0[lane] = mem.read_u16(addr)? as u32,
                            Element::I16 => data[0].0[lane] = mem.read_u16(addr)? as i16 as i32 as u32,
                        }
                    }
                }
                Ok(())
            }
            AccessKind::Store => {
                if self.element == Element::Dwords && dwords == 1 {
                    if let Some(d) = self.data.first() {
                        mem.scatter_u32(&self.addrs, mask, &d.0)?;
                    }
                } else {
                    let size = self.bytes_per_lane() as usize;
                    for lane in 0..N {
                        if (mask >> lane) & 1 == 0 {
                            continue;
                        }
                        let mut buf = [0u8; 16];
                        for (k, d) in self.data.iter().take(4).enumerate() {
                            buf[4 * k..4 * k + 4].copy_from_slice(&d.0[lane].to_le_bytes());
                        }
                        mem.write(self.addrs[lane], &buf[..size.min(16)])?;
                    }
                }
                Ok(())
            }
            AccessKind::Atomic { returns } => {
                let op = self.op.unwrap_or(AtomicOp::Swap);
                let word = |v: &[LaneDwords], k: usize, lane: usize| v.get(k).map_or(0, |d| d.0[lane]);
                out.data.resize_zeroed(if returns { dwords } else { 0 });
                let data = &mut *out.data;
                for lane in 0..N {
                    if (mask >> lane) & 1 == 0 {
                        continue;
                    }
                    let addr = self.addrs[lane];
                    if dwords >= 2 {
                        let src = word(&self.data, 0, lane) as u64 | (word(&self.data, 1, lane) as u64) << 32;
                        let cmp = word(&self.cmp, 0, lane) as u64 | (word(&self.cmp, 1, lane) as u64) << 32;
                        let old = mem.atomic_u64(addr, op, src, cmp)?;
                        if returns {
                            data[0].0[lane] = old as u32;
                            data[1].0[lane] = (old >> 32) as u32;
                        }
                    } else {
                        let old = mem.atomic_u32(addr, op, word(&self.data, 0, lane), word(&self.cmp, 0, lane))?;
                        if returns {
                            data[0].0[lane] = old;
                        }
                    }
                }
                Ok(())
            }
            // A GWS operation is not a memory access: the device's GWS unit performs it.
            AccessKind::Gws { resource, .. } => Err(MemFault { addr: resource as u64, kind: super::memory::MemFaultKind::GwsRequest }),
            // Only loads, stores and atomics are ever deferred; a hand-built request of
            // another kind has nothing to do.
            AccessKind::ScalarLoad | AccessKind::Writeback | AccessKind::Invalidate => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_ops_apply_in_both_widths() {
        assert_eq!(AtomicOp::Add.apply_u32(u32::MAX, 2, 0), 1);
        assert_eq!(AtomicOp::Smin.apply_u32(5, (-3i32) as u32, 0), (-3i32) as u32);
        assert_eq!(AtomicOp::Umin.apply_u32(5, (-3i32) as u32, 0), 5);
        assert_eq!(AtomicOp::Cmpswap.apply_u32(7, 9, 7), 9);
        assert_eq!(AtomicOp::Cmpswap.apply_u32(7, 9, 8), 7);
        assert_eq!(AtomicOp::Inc.apply_u32(4, 4, 0), 0);
        assert_eq!(AtomicOp::Dec.apply_u32(0, 9, 0), 9);
        assert_eq!(AtomicOp::Smax.apply_u64(u64::MAX, 1, 0), 1);
        assert_eq!(AtomicOp::AddF64.apply_u64(1.5f64.to_bits(), 2.25f64.to_bits(), 0), 3.75f64.to_bits());
        assert_eq!(AtomicOp::AddF32.apply_u32(1.5f32.to_bits(), 2.0f32.to_bits(), 0), 3.5f32.to_bits());
        // f16: 1.0 + 2.0 = 3.0 (0x4200) in the low half, 0.5 + 0.5 = 1.0 (0x3c00) in the high.
        assert_eq!(AtomicOp::PkAddF16.apply_u32(0x3800_3c00, 0x3800_4000, 0), 0x3c00_4200);
        // bf16: 1.0 (0x3f80) + 1.0 = 2.0 (0x4000).
        assert_eq!(AtomicOp::PkAddBf16.apply_u32(0x3f80_3f80, 0x3f80_3f80, 0), 0x4000_4000);
        assert_eq!(AtomicOp::Mskor.apply_u32(0xff, 0x0f, 0x100), 0x1f0);
    }

    #[test]
    fn stems_are_unique() {
        for (i, a) in AtomicOp::ALL.iter().enumerate() {
            for b in &AtomicOp::ALL[i + 1..] {
                assert_ne!(a.stem(), b.stem());
            }
        }
    }
}
