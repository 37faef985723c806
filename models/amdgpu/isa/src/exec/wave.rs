//! The state of one wavefront: scalar and vector register files, EXEC, VCC, SCC, M0, PC,
//! the MODE register and the scheduling status.
//!
//! Scalar registers are stored by their 7-bit operand encoding (`s0..s101`, then
//! `flat_scratch`, `xnack_mask`, `vcc`, `ttmp0..15`, `m0`, `exec`), so an SDST/SSRC field
//! indexes [`Wave::sgpr`] directly. VGPRs and AccVGPRs are lane-contiguous `[u32; 64]`
//! arrays so per-lane loops vectorize.

use serde::{Deserialize, Serialize};
use serde_big_array::BigArray;

use super::reg_file::RegFile;
use super::device::{VgprDest, VmemRequest, VmemResponse};
use super::hwreg::Placement;
use super::memory::MemFault;
use super::ExecFault;
use crate::numeric::Mode;

/// Lanes per wavefront (wave64; CDNA has no wave32).
pub const WAVE_LANES: usize = 64;

/// Scalar register file slots (the 7-bit scalar operand space).
pub const SGPR_SLOTS: usize = 128;
/// Number of architected VGPRs (and, separately, AccVGPRs) a wave can name.
pub const VGPR_SLOTS: usize = 256;

/// Operand encoding of `flat_scratch_lo`.
pub const FLAT_SCRATCH_LO: usize = 102;
/// Operand encoding of `vcc_lo`.
pub const VCC_LO: usize = 106;
/// Operand encoding of `ttmp0`.
pub const TTMP0: usize = 108;
/// Operand encoding of `m0`.
pub const M0: usize = 124;
/// Operand encoding of `exec_lo`.
pub const EXEC_LO: usize = 126;

/// MODE.GPR_IDX_EN, the VGPR indexing enable (bit 27 of the MODE register).
pub const MODE_GPR_IDX_EN: u32 = 1 << 27;

/// One lane-contiguous 32-bit vector register.
pub type VReg = [u32; WAVE_LANES];

/// Scheduling status of a wave.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WaveStatus {
    /// Ready to execute.
    Running,
    /// Waiting at `s_barrier` for the rest of its work-group; the scheduler releases it by
    /// setting [`WaveStatus::Running`].
    Barrier,
    /// Finished (`s_endpgm`).
    Ended,
    /// Waiting for a deferred vector memory access ([`Wave::complete`] resumes it).
    WaitMemory,
    /// Executed `s_sleep`; transient: [`step`](super::step::step) turns it back into
    /// [`WaveStatus::Running`] before it reports the sleep.
    Sleep {
        /// Requested sleep in clock cycles (64 per unit of the immediate).
        cycles: u64,
    },
    /// Stopped at a fault; it never runs again.
    Faulted,
}

/// The deferred access a [`WaveStatus::WaitMemory`] wave waits for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAccess {
    /// Address of the memory instruction.
    pub pc: u64,
    /// Lanes the access covers.
    pub mask: u64,
    /// Registers its response writes (`None` for stores and non-returning atomics).
    pub dest: Option<VgprDest>,
}

/// E8M0 block scales armed by `v_mfma_ld_scale_b32` for the scaled f8f6f4 MFMA that must
/// follow it (see the matrix module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MfmaScales {
    /// Address of the MFMA the scales belong to (the `v_mfma_ld_scale_b32` address + 8).
    pub pc: u64,
    /// Per lane, the selected E8M0 scale byte of A.
    #[serde(with = "BigArray")]
    pub a: [u8; WAVE_LANES],
    /// Per lane, the selected E8M0 scale byte of B.
    #[serde(with = "BigArray")]
    pub b: [u8; WAVE_LANES],
}

/// The SGPRs a deferred scalar atomic writes the returned value to when it completes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SgprDest {
    /// First SGPR (operand encoding).
    pub first: u8,
    /// Number of SGPRs (1 or 2).
    pub count: u8,
}

/// A wavefront's architectural state. See the [module docs](self).
///
/// Serializable (with serde) for checkpoints, including a parked [`VmemRequest`].
#[derive(Clone, Serialize, Deserialize)]
pub struct Wave {
    /// Scalar registers indexed by operand encoding (VCC at 106/107, M0 at 124, EXEC at 126/127).
    #[serde(with = "BigArray")]
    pub sgpr: [u32; SGPR_SLOTS],
    /// Scalar condition code.
    pub scc: bool,
    /// Architected VGPRs `v0..`, as many as the kernel allocates (all 256 for [`Wave::new`]).
    pub vgpr: RegFile,
    /// Accumulation VGPRs `a0..`, as many as the kernel allocates.
    pub agpr: RegFile,
    /// Address of the next instruction.
    pub pc: u64,
    /// The MODE hardware register, raw.
    pub mode_bits: u32,
    /// The decoded MODE register.
    #[serde(with = "mode_serde")]
    pub mode: Mode,
    /// Scheduling status.
    pub status: WaveStatus,
    /// This wave's index inside its work-group.
    pub wave_in_group: u32,
    /// Base of this wave's private (scratch) memory for lane 0; lane `l` adds `l * lane_stride`.
    pub scratch_base: u64,
    /// Bytes of scratch per lane.
    pub scratch_lane_bytes: u32,
    /// A deferred access not yet taken by the scheduler ([`Wave::take_request`]).
    pub pending: Option<Box<VmemRequest>>,
    /// The deferred access the wave waits for (set with `pending`, kept until
    /// [`Wave::complete`] or [`Wave::fail_pending`]).
    pub waiting: Option<PendingAccess>,
    /// Scales armed by `v_mfma_ld_scale_b32`, consumed by the scaled MFMA at their `pc`.
    pub mfma_scales: Option<MfmaScales>,
    /// Where the SGPR result of a deferred scalar atomic goes (set with `waiting`; the
    /// response's lane 0 carries it).
    #[serde(default)]
    pub scalar_dest: Option<SgprDest>,
    /// Where the wave runs and what it was allocated (HW_ID, XCC_ID, GPR_ALLOC, LDS_ALLOC).
    #[serde(default)]
    pub place: Placement,
    /// The box of the last deferred access, back from its round trip
    /// ([`Wave::complete_request`]): the next one is parked in it (no allocation per
    /// deferred access). Storage only, not state: not saved.
    #[serde(skip)]
    spare: Option<Box<VmemRequest>>,
}

impl std::fmt::Debug for Wave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wave").field("pc", &format_args!("{:#x}", self.pc)).field("exec", &format_args!("{:#x}", self.exec())).field("status", &self.status).finish()
    }
}

impl Wave {
    /// A wave with all 256 VGPRs and 256 AccVGPRs, all registers zero, EXEC all ones, at
    /// `pc`, with MODE `mode_bits`.
    pub fn new(pc: u64, mode_bits: u32) -> Wave {
        Wave::with_registers(pc, mode_bits, VGPR_SLOTS, VGPR_SLOTS)
    }

    /// [`Wave::new`] with `vgprs` VGPRs and `agprs` AccVGPRs allocated (see [`RegFile`]).
    pub fn with_registers(pc: u64, mode_bits: u32, vgprs: usize, agprs: usize) -> Wave {
        let mut wave = Wave {
            sgpr: [0; SGPR_SLOTS],
            scc: false,
            vgpr: RegFile::zeroed(vgprs),
            agpr: RegFile::zeroed(agprs),
            pc,
            mode_bits,
            mode: Mode::decode(mode_bits),
            status: WaveStatus::Running,
            wave_in_group: 0,
            scratch_base: 0,
            scratch_lane_bytes: 0,
            pending: None,
            waiting: None,
            mfma_scales: None,
            scalar_dest: None,
            place: Placement::unplaced((vgprs + agprs).min(u16::MAX as usize) as u16),
            spare: None,
        };
        wave.set_exec(u64::MAX);
        wave
    }

    /// This wave's storage made into [`Wave::with_registers`]`(pc, mode_bits, vgprs, agprs)`:
    /// every register zero, mostly without allocating (a compute unit recycles the waves of
    /// finished work-groups).
    pub fn recycle(mut self, pc: u64, mode_bits: u32, vgprs: usize, agprs: usize) -> Wave {
        self.vgpr.reset(vgprs);
        self.agpr.reset(agprs);
        self.sgpr = [0; SGPR_SLOTS];
        self.scc = false;
        self.pc = pc;
        self.mode_bits = mode_bits;
        self.mode = Mode::decode(mode_bits);
        self.status = WaveStatus::Running;
        self.wave_in_group = 0;
        self.scratch_base = 0;
        self.scratch_lane_bytes = 0;
        self.pending = None;
        self.waiting = None;
        self.mfma_scales = None;
        self.scalar_dest = None;
        self.place = Placement::unplaced((vgprs + agprs).min(u16::MAX as usize) as u16);
        self.set_exec(u64::MAX);
        self
    }

    /// The EXEC mask.
    #[inline]
    pub fn exec(&self) -> u64 {
        self.sgpr_pair(EXEC_LO)
    }

    /// Sets the EXEC mask.
    #[inline]
    pub fn set_exec(&mut self, v: u64) {
        self.set_sgpr_pair(EXEC_LO, v);
    }

    /// The VCC mask.
    #[inline]
    pub fn vcc(&self) -> u64 {
        self.sgpr_pair(VCC_LO)
    }

    /// Sets VCC.
    #[inline]
    pub fn set_vcc(&mut self, v: u64) {
        self.set_sgpr_pair(VCC_LO, v);
    }

    /// M0.
    #[inline]
    pub fn m0(&self) -> u32 {
        self.sgpr[M0]
    }

    /// Two consecutive scalar slots as a 64-bit value (`idx` low).
    #[inline]
    pub fn sgpr_pair(&self, idx: usize) -> u64 {
        let lo = self.sgpr[idx & (SGPR_SLOTS - 1)] as u64;
        let hi = self.sgpr[(idx + 1) & (SGPR_SLOTS - 1)] as u64;
        lo | (hi << 32)
    }

    /// Writes two consecutive scalar slots.
    #[inline]
    pub fn set_sgpr_pair(&mut self, idx: usize, v: u64) {
        self.set_sgpr(idx, v as u32);
        self.set_sgpr(idx + 1, (v >> 32) as u32);
    }

    /// Writes one scalar slot; writes to read-only or out-of-range slots are dropped.
    #[inline]
    pub fn set_sgpr(&mut self, idx: usize, v: u32) {
        if idx < SGPR_SLOTS && idx != 125 {
            self.sgpr[idx] = v;
        }
    }

    /// Sets MODE from raw bits.
    pub fn set_mode(&mut self, bits: u32) {
        self.mode_bits = bits;
        self.mode = Mode::decode(bits);
    }

    /// MODE.GPR_IDX_EN (bit 27): VALU instructions index their VGPR operands with M0 (set by
    /// `s_set_gpr_idx_on`, cleared by `s_set_gpr_idx_off`; the pre-resolved fast path
    /// declines while it is set).
    #[inline]
    pub fn gpr_idx_enabled(&self) -> bool {
        self.mode_bits & MODE_GPR_IDX_EN != 0
    }

    /// Sets or clears MODE.GPR_IDX_EN.
    #[inline]
    pub fn set_gpr_idx_enabled(&mut self, on: bool) {
        let bits = if on { self.mode_bits | MODE_GPR_IDX_EN } else { self.mode_bits & !MODE_GPR_IDX_EN };
        self.set_mode(bits);
    }

    /// True once the wave executed `s_endpgm`.
    pub fn ended(&self) -> bool {
        self.status == WaveStatus::Ended
    }
}

impl Wave {
    /// Takes the parked deferred request, if any, for the scheduler to perform. The wave
    /// stays in [`WaveStatus::WaitMemory`] until [`Wave::complete`]. The request stays
    /// in the box it was parked in (a scheduler ships it in a message as it is).
    pub fn take_request(&mut self) -> Option<Box<VmemRequest>> {
        self.pending.take()
    }

    /// A box to park the next deferred access in: the one a completed access gave back,
    /// or a new one. The caller fills in every field.
    pub(crate) fn request_box(&mut self) -> Box<VmemRequest> {
        self.spare.take().unwrap_or_else(|| Box::new(VmemRequest::blank()))
    }

    /// Gives back a box [`Wave::request_box`] handed out that was not parked.
    pub(crate) fn keep_request_box(&mut self, req: Box<VmemRequest>) {
        self.spare = Some(req);
    }

    /// [`Wave::complete`] with the answer the request carries back
    /// ([`VmemRequest::perform_in_place`]); the wave keeps the box for its next deferred
    /// access.
    pub fn complete_request(&mut self, req: Box<VmemRequest>) -> Result<(), ExecFault> {
        let done = self.complete(&req.answer);
        self.spare = Some(req);
        done
    }

    /// Finishes the deferred access: writes the returned dwords of the lanes of both the
    /// request and `resp` to the destination registers (if any) and makes the wave
    /// [`WaveStatus::Running`].
    ///
    /// Errors (recoverable: the wave is unchanged) when the wave waits for nothing or
    /// `resp` carries fewer dwords than the destination needs.
    pub fn complete(&mut self, resp: &VmemResponse) -> Result<(), ExecFault> {
        let Some(waiting) = self.waiting else {
            return Err(ExecFault::BadCompletion { pc: self.pc, reason: "the wave waits for no memory access".into() });
        };
        if self.status != WaveStatus::WaitMemory {
            return Err(ExecFault::BadCompletion { pc: waiting.pc, reason: format!("the wave is {:?}, not waiting for memory", self.status) });
        }
        if let Some(sd) = self.scalar_dest {
            if resp.data.len() < sd.count as usize || resp.mask & 1 == 0 {
                return Err(ExecFault::BadCompletion {
                    pc: waiting.pc,
                    reason: format!("the response has {} dwords for lane 0 (mask {:#x}), the scalar destination needs {}", resp.data.len(), resp.mask, sd.count),
                });
            }
            for (k, dwords) in resp.data.iter().take(sd.count as usize).enumerate() {
                self.set_sgpr(sd.first as usize + k, dwords.0[0]);
            }
        }
        if let Some(dest) = waiting.dest {
            if resp.data.len() < dest.count as usize {
                return Err(ExecFault::BadCompletion {
                    pc: waiting.pc,
                    reason: format!("the response has {} dwords per lane, the destination needs {}", resp.data.len(), dest.count),
                });
            }
            let lanes = waiting.mask & resp.mask;
            let file = if dest.acc { &mut self.agpr } else { &mut self.vgpr };
            for (k, dwords) in resp.data.iter().take(dest.count as usize).enumerate() {
                let reg = &mut file[(dest.first as usize + k) & (VGPR_SLOTS - 1)];
                if lanes == u64::MAX {
                    *reg = dwords.0;
                    continue;
                }
                let mut m = lanes;
                while m != 0 {
                    let lane = m.trailing_zeros() as usize;
                    m &= m - 1;
                    reg[lane] = dwords.0[lane];
                }
            }
        }
        self.pending = None;
        self.waiting = None;
        self.scalar_dest = None;
        self.status = WaveStatus::Running;
        Ok(())
    }

    /// Ends the deferred access with a memory fault: the wave stops for good
    /// ([`WaveStatus::Faulted`]) and the returned [`ExecFault::Memory`] names the memory
    /// instruction.
    pub fn fail_pending(&mut self, fault: MemFault) -> ExecFault {
        let pc = self.waiting.take().map_or(self.pc, |w| w.pc);
        self.pending = None;
        self.scalar_dest = None;
        self.status = WaveStatus::Faulted;
        ExecFault::mem(pc, fault)
    }
}

/// Serde form of the decoded MODE register: its encoded bits.
mod mode_serde {
    use crate::numeric::Mode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(mode: &Mode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(mode.encode())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mode, D::Error> {
        Ok(Mode::decode(u32::deserialize(d)?))
    }
}
