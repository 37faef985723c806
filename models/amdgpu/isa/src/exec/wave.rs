//! The state of one wavefront: scalar and vector register files, EXEC, VCC, SCC, M0, PC,
//! the MODE register and the scheduling status.
//!
//! Scalar registers are stored by their 7-bit operand encoding (`s0..s101`, then
//! `flat_scratch`, `xnack_mask`, `vcc`, `ttmp0..15`, `m0`, `exec`), so an SDST/SSRC field
//! indexes [`Wave::sgpr`] directly. VGPRs and AccVGPRs are lane-contiguous `[u32; 64]`
//! arrays so per-lane loops vectorize.

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

/// One lane-contiguous 32-bit vector register.
pub type VReg = [u32; WAVE_LANES];

/// Scheduling status of a wave.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WaveStatus {
    /// Ready to execute.
    Running,
    /// Waiting at `s_barrier` for the rest of its work-group.
    Barrier,
    /// Finished (`s_endpgm`).
    Ended,
}

/// A wavefront's architectural state. See the [module docs](self).
#[derive(Clone)]
pub struct Wave {
    /// Scalar registers indexed by operand encoding (VCC at 106/107, M0 at 124, EXEC at 126/127).
    pub sgpr: [u32; SGPR_SLOTS],
    /// Scalar condition code.
    pub scc: bool,
    /// Architected VGPRs `v0..v255`.
    pub vgpr: Vec<VReg>,
    /// Accumulation VGPRs `a0..a255`.
    pub agpr: Vec<VReg>,
    /// Address of the next instruction.
    pub pc: u64,
    /// The MODE hardware register, raw.
    pub mode_bits: u32,
    /// The decoded MODE register.
    pub mode: Mode,
    /// Scheduling status.
    pub status: WaveStatus,
    /// This wave's index inside its work-group.
    pub wave_in_group: u32,
    /// Base of this wave's private (scratch) memory for lane 0; lane `l` adds `l * lane_stride`.
    pub scratch_base: u64,
    /// Bytes of scratch per lane.
    pub scratch_lane_bytes: u32,
}

impl std::fmt::Debug for Wave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wave").field("pc", &format_args!("{:#x}", self.pc)).field("exec", &format_args!("{:#x}", self.exec())).field("status", &self.status).finish()
    }
}

impl Wave {
    /// A wave with all registers zero, EXEC all ones, at `pc`, with MODE `mode_bits`.
    pub fn new(pc: u64, mode_bits: u32) -> Wave {
        let mut wave = Wave {
            sgpr: [0; SGPR_SLOTS],
            scc: false,
            vgpr: vec![[0; WAVE_LANES]; VGPR_SLOTS],
            agpr: vec![[0; WAVE_LANES]; VGPR_SLOTS],
            pc,
            mode_bits,
            mode: Mode::decode(mode_bits),
            status: WaveStatus::Running,
            wave_in_group: 0,
            scratch_base: 0,
            scratch_lane_bytes: 0,
        };
        wave.set_exec(u64::MAX);
        wave
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

    /// True once the wave executed `s_endpgm`.
    pub fn ended(&self) -> bool {
        self.status == WaveStatus::Ended
    }
}
