//! The hardware registers `s_getreg_b32`, `s_setreg_b32` and `s_setreg_imm32_b32` name, and
//! where a wave runs ([`Placement`]), which HW_ID, XCC_ID, GPR_ALLOC and LDS_ALLOC report.
//!
//! The `simm16` of these instructions selects register `id` (bits 5:0), the first bit
//! `offset` (10:6) and `size - 1` (15:11). `s_getreg` returns `(reg >> offset) & (2^size - 1)`;
//! `s_setreg` replaces the bits `(2^size - 1) << offset` (truncated to 32 bits) that the
//! register lets a non-privileged wave write, and leaves the others.
//!
//! Layouts (bit ranges inclusive). Sources: the CDNA3/CDNA4 ISA reference guides (section
//! 3, "Kernel State": Status, Mode, Trap Status and Hardware ID tables; section 8.2.1 for
//! the scalar apertures), and, for GPR_ALLOC and LDS_ALLOC (which the guides do not
//! tabulate), AMD's gfx9 context-save trap handler in Linux (`cwsr_trap_handler_gfx9.asm`:
//! the field positions, the 11-bit LDS_SIZE of gfx950 and its unchanged 64-dword unit).
//!
//! | id | register      | fields |
//! |----|---------------|--------|
//! | 1  | MODE          | the raw MODE bits the wave holds (FP_ROUND 3:0 ... VSKIP 28, CSP 31:29) |
//! | 2  | STATUS        | SCC 0, SPI_PRIO 2:1, WAVE_PRIO 4:3, PRIV 5, TRAP_EN 6, TTRACE_EN 7, EXECZ 9, VCCZ 10, IN_TG 11, IN_BARRIER 12, HALT 13, TRAP 14, VALID 16, ECC_ERR 17, PERF_EN 19, COND_DBG_USER 20, COND_DBG_SYS 21, ALLOW_REPLAY 22, FATAL_HALT 23, SCRATCH_EN 28 and IDLE 31 (gfx942, gfx950) |
//! | 3  | TRAPSTS       | EXCP 8:0, SAVECTX 10, ILLEGAL_INST 11, ADDR_WATCH 14:12, EXCP_CYCLE 21:16, XNACK_ERROR 28, DP_RATE 31:29 |
//! | 4  | HW_ID         | WAVE_ID 3:0, SIMD_ID 5:4, PIPE_ID 7:6, CU_ID 11:8, SH_ID 12, SE_ID 15:13, TG_ID 19:16, VM_ID 23:20, QUEUE_ID 26:24, STATE_ID 29:27, ME_ID 31:30 |
//! | 5  | GPR_ALLOC     | VGPR_BASE 5:0, VGPR_SIZE 13:8 (8-VGPR granules of the unified file, minus one), SGPR_BASE 21:16, SGPR_SIZE 27:24 (16-SGPR granules, minus one) |
//! | 6  | LDS_ALLOC     | LDS_BASE 7:0, LDS_SIZE 20:12 (22:12 on gfx950), both in 64-dword (256-byte) units |
//! | 7  | IB_STS        | the wave's outstanding-instruction counters |
//! | 15 | SH_MEM_BASES  | PRIVATE_BASE 15:0, SHARED_BASE 31:16: bits 63:48 of the private and LDS apertures |
//! | 16-19 | TBA_LO/HI, TMA_LO/HI | trap handler base and memory addresses |
//! | 20 | XCC_ID        | XCC_ID 3:0 (gfx942, gfx950) |
//! | 21-24 | SQ_PERF_SNAPSHOT_* | the last performance snapshot (gfx942, gfx950) |
//!
//! Every other id is reserved on the target: it reads as zero and ignores writes, as do
//! the reserved bits of the tabulated registers.
//!
//! **What the model does not know is never made up.** A register read yields a value and
//! a mask of bits this model cannot know; an `s_getreg` whose selected field touches such a
//! bit stops the wave with [`ExecFault::Unsupported`](super::ExecFault). Unknown here:
//! TRAPSTS.EXCP (the executor keeps no sticky floating-point exception flags) and
//! TRAPSTS.DP_RATE; STATUS.WAVE_PRIO (`s_setprio` runs in the fast path and is not
//! recorded), EXPORT_RDY 8, TTRACE_CU_EN 15, SKIP_EXPORT 18, MUST_EXPORT 27 and
//! ALLOW_REPLAY 22; TBA and TMA (the addresses of the runtime's trap handler) and the
//! performance snapshot; IB_STS while the scheduler has accesses in flight
//! ([`Placement::counters_idle`] false, timing mode); any [`Placement`] field that is
//! `None`.
//!
//! Modelled facts, chosen to match what the executor does elsewhere: a trap handler is
//! installed (STATUS.TRAP_EN = 1, as under ROCm, and `s_trap` stops the dispatch) and
//! waves are never privileged (PRIV = 0), so STATUS, TBA and TMA are read-only and a
//! write that would enable a trap (MODE.DEBUG_EN, MODE.EXCP_EN, TRAPSTS.SAVECTX and the
//! other non-EXCP TRAPSTS bits set to 1) stops the wave with `Unsupported` instead of
//! being ignored. GPR_ALLOC.SGPR_SIZE counts the 16 SGPRs a wave holds for its trap
//! handler on top of the descriptor's SGPRs. Writes to HW_ID, GPR_ALLOC, LDS_ALLOC,
//! SH_MEM_BASES and XCC_ID are dropped (no field of theirs is shader-writable); writes to
//! IB_STS and the snapshot registers stop the wave (their write masks are not documented).
//!
//! Placement choices of the model (documented in [`Placement`]): the compute micro-engine
//! is ME 1; a queue's pipe and queue ids come from the GPU's queue number; the single
//! process runs in VMID 8, the first VMID the amdgpu driver hands to KFD processes.

use serde::{Deserialize, Serialize};

use crate::Target;

use super::operands::{PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use super::wave::Wave;

/// Register id of MODE.
pub const HW_REG_MODE: u32 = 1;
/// Register id of STATUS.
pub const HW_REG_STATUS: u32 = 2;
/// Register id of TRAPSTS.
pub const HW_REG_TRAPSTS: u32 = 3;
/// Register id of HW_ID.
pub const HW_REG_HW_ID: u32 = 4;
/// Register id of GPR_ALLOC.
pub const HW_REG_GPR_ALLOC: u32 = 5;
/// Register id of LDS_ALLOC.
pub const HW_REG_LDS_ALLOC: u32 = 6;
/// Register id of IB_STS.
pub const HW_REG_IB_STS: u32 = 7;
/// Register id of SH_MEM_BASES.
pub const HW_REG_SH_MEM_BASES: u32 = 15;
/// Register id of TBA_LO (TBA_HI, TMA_LO and TMA_HI follow).
pub const HW_REG_TBA_LO: u32 = 16;
/// Register id of TMA_HI.
pub const HW_REG_TMA_HI: u32 = 19;
/// Register id of XCC_ID (gfx942, gfx950).
pub const HW_REG_XCC_ID: u32 = 20;
/// Register id of SQ_PERF_SNAPSHOT_DATA (DATA1, PC_LO and PC_HI follow; gfx942, gfx950).
pub const HW_REG_PERF_SNAPSHOT_DATA: u32 = 21;
/// Register id of SQ_PERF_SNAPSHOT_PC_HI.
pub const HW_REG_PERF_SNAPSHOT_PC_HI: u32 = 24;

/// MODE.DEBUG_EN (single-step trap).
const MODE_DEBUG_EN: u32 = 1 << 11;
/// MODE bits 21:12: exception enables (float exceptions, address watch, memory violation,
/// trap on wave end).
const MODE_EXCP_EN: u32 = 0x3ff << 12;
/// MODE.GPR_IDX_EN: GPR indexing mode (`s_set_gpr_idx_on`/`off`).
pub const MODE_GPR_IDX_EN: u32 = 1 << 27;
/// MODE.VSKIP: vector instructions are skipped.
pub const MODE_VSKIP: u32 = 1 << 28;
/// Bit position of MODE.CSP, the fork/join stack pointer (3 bits).
pub const MODE_CSP_SHIFT: u32 = 29;

/// The VMID the model's process runs in (the first VMID amdgpu gives KFD processes).
pub const MODEL_VMID: u8 = 8;
/// The micro-engine that runs compute queues (MEC1).
pub const COMPUTE_ME: u8 = 1;

/// The fields of a `hwreg(id, offset, size)` operand (the `simm16` of the getreg/setreg
/// instructions): `(id, offset, size)` with `size` in 1..=32.
pub fn hwreg_fields(simm16: u32) -> (u32, u32, u32) {
    (simm16 & 0x3f, (simm16 >> 6) & 0x1f, ((simm16 >> 11) & 0x1f) + 1)
}

/// The bits `hwreg(_, offset, size)` selects in a register.
fn field_mask(offset: u32, size: u32) -> u32 {
    ((((1u64 << size) - 1) << offset) & 0xffff_ffff) as u32
}

/// Where a wave runs and what it was allocated. `None` marks what the scheduler that built
/// the wave does not know; reading such a field with `s_getreg` stops the wave.
///
/// A wave made with [`Wave::new`] knows only its register allocation; the functional
/// dispatcher ([`super::init_group_waves`]) and the GPU model's compute unit fill in the
/// rest ([`GroupPlace`]). The default knows nothing, not even that the IB_STS counters are
/// idle.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// HW_ID.WAVE_ID: the wave's slot within its SIMD.
    pub wave_id: Option<u8>,
    /// HW_ID.SIMD_ID: the SIMD of the compute unit the wave runs on.
    pub simd_id: Option<u8>,
    /// The fields its work-group shares.
    pub ids: GroupIds,
    /// GPR_ALLOC.VGPR_BASE: the first 8-VGPR granule of the wave in its SIMD's file.
    pub vgpr_base: Option<u8>,
    /// GPR_ALLOC.SGPR_BASE: the first 16-SGPR granule of the wave in its SIMD's file.
    pub sgpr_base: Option<u8>,
    /// LDS_ALLOC.LDS_BASE: the work-group's LDS start in 256-byte units.
    pub lds_base: Option<u16>,
    /// VGPRs (architected and accumulation, unified) allocated per work-item.
    pub vgprs: u16,
    /// SGPRs the kernel descriptor allocates (VCC, FLAT_SCRATCH and XNACK_MASK included,
    /// the trap handler's 16 not). `None`: the whole logical SGPR space (`Wave::new`).
    pub sgprs: Option<u16>,
    /// Bytes of LDS allocated to the work-group, before rounding to the allocation unit.
    pub lds_bytes: Option<u32>,
    /// STATUS.IN_TG: the work-group has more than one wave.
    pub in_group: Option<bool>,
    /// Every memory access of the wave completes before its next instruction (functional
    /// scheduling), so the IB_STS counters read zero and STATUS.IDLE one; false in timing
    /// mode, where the counters are the scheduler's.
    pub counters_idle: bool,
}

impl Placement {
    /// A wave that knows only its `vgprs` VGPRs (and that its accesses complete at once).
    pub fn unplaced(vgprs: u16) -> Placement {
        Placement { vgprs, counters_idle: true, ..Placement::default() }
    }

    /// 8-VGPR granules allocated.
    pub fn vgpr_granules(&self) -> u32 {
        u32::from(self.vgprs).div_ceil(8)
    }

    /// 16-SGPR granules allocated, the trap handler's 16 SGPRs included.
    pub fn sgpr_granules(&self) -> Option<u32> {
        self.sgprs.map(|s| u32::from(s).div_ceil(16) + 1)
    }
}

/// The HW_ID and XCC_ID fields the waves of a work-group share.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupIds {
    /// HW_ID.PIPE_ID: the pipe of the micro-engine whose queue dispatched the wave.
    pub pipe_id: Option<u8>,
    /// HW_ID.CU_ID: the compute unit within its shader array.
    pub cu_id: Option<u8>,
    /// HW_ID.SH_ID: the shader array within its shader engine.
    pub sh_id: Option<u8>,
    /// HW_ID.SE_ID: the shader engine within its XCC.
    pub se_id: Option<u8>,
    /// HW_ID.TG_ID: the work-group's slot on its compute unit.
    pub tg_id: Option<u8>,
    /// HW_ID.VM_ID: the virtual memory context.
    pub vm_id: Option<u8>,
    /// HW_ID.QUEUE_ID: the queue within its pipe.
    pub queue_id: Option<u8>,
    /// HW_ID.ME_ID: the micro-engine.
    pub me_id: Option<u8>,
    /// XCC_ID: the XCC (accelerator complex die) the wave runs on.
    pub xcc_id: Option<u8>,
}

/// The part of a wave's [`Placement`] its work-group shares, as a scheduler hands it to
/// [`super::init_group_waves`] (per-wave: the SIMD and slot from `first_slot`; the GPR
/// bases as `packed_bases` says).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupPlace {
    /// HW_ID and XCC_ID fields.
    pub ids: GroupIds,
    /// LDS_ALLOC.LDS_BASE (256-byte units).
    pub lds_base: Option<u16>,
    /// Wave slot of the group's first wave; wave `i` takes slot `first_slot + i`.
    pub first_slot: u32,
    /// SIMDs of the compute unit: slot `k` is wave `k / simds` of SIMD `k % simds`.
    pub simds: u32,
    /// Whether GPR bases are packed from zero on each SIMD (a group alone on its compute
    /// unit) or unknown (the scheduler sets them on the waves itself).
    pub packed_bases: bool,
    /// See [`Placement::counters_idle`].
    pub counters_idle: bool,
}

impl GroupPlace {
    /// A work-group alone on compute unit 0 of shader engine 0 of XCC 0, dispatched from
    /// queue 0 of pipe 0 (the functional dispatcher, which runs one group at a time).
    pub fn alone() -> GroupPlace {
        let ids = GroupIds {
            pipe_id: Some(0),
            cu_id: Some(0),
            sh_id: Some(0),
            se_id: Some(0),
            tg_id: Some(0),
            vm_id: Some(MODEL_VMID),
            queue_id: Some(0),
            me_id: Some(COMPUTE_ME),
            xcc_id: Some(0),
        };
        GroupPlace {
            ids,
            lds_base: Some(0),
            first_slot: 0,
            simds: 4,
            packed_bases: true,
            counters_idle: true,
        }
    }

    /// Nothing known (the placement of [`Wave::new`]).
    pub fn unknown() -> GroupPlace {
        GroupPlace { counters_idle: true, ..GroupPlace::default() }
    }

    /// The hardware queue slot of GPU queue `queue`: ME 1, pipe `(queue / 8) % 4`, queue
    /// `queue % 8` (the model's fixed mapping of its queues onto MEC1's 4 pipes of 8 queues).
    pub fn queue_slot(queue: u32) -> (u8, u8, u8) {
        (COMPUTE_ME, ((queue / 8) % 4) as u8, (queue % 8) as u8)
    }

    /// The placement of wave `i` of a group of `waves` waves allocated `vgprs` VGPRs,
    /// `sgprs` SGPRs (descriptor count) and `lds_bytes` of LDS.
    pub fn wave(&self, i: u32, waves: u32, vgprs: u16, sgprs: u16, lds_bytes: u32) -> Placement {
        let slot = self.first_slot.wrapping_add(i);
        let (simd, index) = if self.simds == 0 { (None, None) } else { (Some(slot % self.simds), Some(slot / self.simds)) };
        let mut p = Placement::unplaced(vgprs);
        p.wave_id = index.and_then(|v| fit(v, 4));
        p.simd_id = simd.and_then(|v| fit(v, 2));
        p.ids = self.ids;
        p.lds_base = self.lds_base;
        p.sgprs = Some(sgprs);
        p.lds_bytes = Some(lds_bytes);
        p.in_group = Some(waves > 1);
        p.counters_idle = self.counters_idle;
        if self.packed_bases {
            if let Some(index) = index {
                p.vgpr_base = fit(index * p.vgpr_granules(), 6);
                p.sgpr_base = p.sgpr_granules().and_then(|g| fit(index * g, 6));
            }
        }
        p
    }
}

/// `v` as a field of `bits` bits, `None` when it does not fit.
pub fn fit(v: u32, bits: u32) -> Option<u8> {
    (v < (1 << bits)).then_some(v as u8)
}

/// Bytes of LDS the hardware allocates for `bytes`: whole blocks of 512 bytes (gfx90a,
/// gfx942) or 1280 bytes (gfx950).
pub fn lds_allocation(target: Target, bytes: u32) -> u32 {
    let unit = if target == Target::Gfx950 { 1280 } else { 512 };
    bytes.div_ceil(unit).saturating_mul(unit)
}

/// A register's value and the bits of it this model does not know.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegValue {
    /// The value (unknown bits read as zero here).
    pub value: u32,
    /// Bits whose value is unknown.
    pub unknown: u32,
}

impl RegValue {
    fn known(value: u32) -> RegValue {
        RegValue { value, unknown: 0 }
    }

    /// Puts `field` (or marks its bits unknown when `None`) at bit `lo`, `bits` wide.
    /// A value too wide for the field is unknown too (it cannot be represented).
    fn set<T: Into<u32>>(&mut self, lo: u32, bits: u32, field: Option<T>) {
        let mask = ((1u32 << bits) - 1) << lo;
        match field.map(Into::into) {
            Some(v) if v >> bits == 0 => self.value |= v << lo,
            _ => self.unknown |= mask,
        }
    }
}

/// Whether register `id` exists on `target`.
fn defined(target: Target, id: u32) -> bool {
    match id {
        1..=7 | 15..=19 => true,
        20..=24 => target != Target::Gfx90a,
        _ => false,
    }
}

/// Reads hardware register `id` of `w`.
pub fn read(w: &Wave, target: Target, id: u32) -> RegValue {
    if !defined(target, id) {
        return RegValue::known(0);
    }
    let p = &w.place;
    match id {
        HW_REG_MODE => RegValue::known(w.mode_bits),
        HW_REG_STATUS => status(w, target),
        HW_REG_TRAPSTS => RegValue { value: 0, unknown: 0x1ff | (7 << 29) },
        HW_REG_HW_ID => {
            let mut r = RegValue::known(0);
            r.set(0, 4, p.wave_id);
            r.set(4, 2, p.simd_id);
            r.set(6, 2, p.ids.pipe_id);
            r.set(8, 4, p.ids.cu_id);
            r.set(12, 1, p.ids.sh_id);
            r.set(13, 3, p.ids.se_id);
            r.set(16, 4, p.ids.tg_id);
            r.set(20, 4, p.ids.vm_id);
            r.set(24, 3, p.ids.queue_id);
            // STATE_ID is graphics state; compute waves have none.
            r.set(27, 3, Some(0u8));
            r.set(30, 2, p.ids.me_id);
            r
        }
        HW_REG_GPR_ALLOC => {
            let mut r = RegValue::known(0);
            r.set(0, 6, p.vgpr_base);
            r.set(8, 6, p.vgpr_granules().checked_sub(1));
            r.set(16, 6, p.sgpr_base);
            r.set(24, 4, p.sgpr_granules().map(|g| g - 1));
            r
        }
        HW_REG_LDS_ALLOC => {
            let mut r = RegValue::known(0);
            r.set(0, 8, p.lds_base);
            let bits = if target == Target::Gfx950 { 11 } else { 9 };
            r.set(12, bits, p.lds_bytes.map(|b| lds_allocation(target, b) / 256));
            r
        }
        HW_REG_IB_STS => {
            if p.counters_idle {
                RegValue::known(0)
            } else {
                RegValue { value: 0, unknown: u32::MAX }
            }
        }
        HW_REG_SH_MEM_BASES => RegValue::known((PRIVATE_APERTURE_HI >> 16) | ((SHARED_APERTURE_HI >> 16) << 16)),
        HW_REG_XCC_ID => {
            let mut r = RegValue::known(0);
            r.set(0, 4, p.ids.xcc_id);
            r
        }
        // TBA/TMA: the runtime's trap handler; the performance snapshot: never taken here.
        _ => RegValue { value: 0, unknown: u32::MAX },
    }
}

/// STATUS of `w` (see the module docs for the bits).
fn status(w: &Wave, target: Target) -> RegValue {
    let p = &w.place;
    let mut r = RegValue::known(0);
    r.set(0, 1, Some(w.scc as u32));
    // SPI_PRIO: the dispatch priority (COMPUTE_PGM_RSRC1.PRIORITY, always 0 for HSA).
    r.set(1, 2, Some(0u32));
    r.set(3, 2, None::<u32>);
    // PRIV 0; TRAP_EN 1: a trap handler is installed; TTRACE_EN 0: no thread trace.
    r.set(5, 1, Some(0u32));
    r.set(6, 1, Some(1u32));
    r.set(7, 1, Some(0u32));
    r.set(8, 1, None::<u32>);
    r.set(9, 1, Some((w.exec() == 0) as u32));
    r.set(10, 1, Some((w.vcc() == 0) as u32));
    r.set(11, 1, p.in_group.map(u32::from));
    // IN_BARRIER, HALT and TRAP are 0 while the wave executes. TTRACE_CU_EN (15) is set
    // by the thread-trace configuration of the CU, whose default the guides do not give.
    r.set(15, 1, None::<u32>);
    // VALID 1.
    r.set(16, 1, Some(1u32));
    r.set(18, 1, None::<u32>);
    r.set(22, 1, None::<u32>);
    r.set(27, 1, None::<u32>);
    if target == Target::Gfx90a {
        // Bits 28 and 31 are not documented for gfx90a.
        r.set(28, 1, None::<u32>);
        r.set(31, 1, None::<u32>);
    } else {
        r.set(28, 1, Some((w.scratch_lane_bytes > 0) as u32));
        r.set(31, 1, p.counters_idle.then_some(1u32));
    }
    r
}

/// Why a register write was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WriteRefused {
    /// The write has an effect this executor does not model (a trap, an undocumented
    /// write mask).
    Unmodelled,
}

/// `s_setreg` of `value` into the `hwreg(id, offset, size)` field of `w`.
pub fn write(w: &mut Wave, target: Target, simm16: u32, value: u32) -> Result<(), WriteRefused> {
    let (id, offset, size) = hwreg_fields(simm16);
    if !defined(target, id) {
        return Ok(());
    }
    let mask = field_mask(offset, size);
    let bits = value.wrapping_shl(offset) & mask;
    match id {
        HW_REG_MODE => {
            let new = (w.mode_bits & !mask) | bits;
            if new & (MODE_DEBUG_EN | MODE_EXCP_EN) != 0 {
                return Err(WriteRefused::Unmodelled);
            }
            w.set_mode(new);
            Ok(())
        }
        HW_REG_TRAPSTS => {
            // EXCP (8:0) is writable but not tracked; setting any other bit would raise a
            // trap or change trap state this model does not have.
            if bits & !0x1ff != 0 {
                return Err(WriteRefused::Unmodelled);
            }
            Ok(())
        }
        HW_REG_IB_STS | HW_REG_PERF_SNAPSHOT_DATA..=HW_REG_PERF_SNAPSHOT_PC_HI => Err(WriteRefused::Unmodelled),
        // STATUS, TBA and TMA need privilege; HW_ID, GPR_ALLOC, LDS_ALLOC, SH_MEM_BASES
        // and XCC_ID have no writable field.
        _ => Ok(()),
    }
}

/// `s_getreg` of the `hwreg(id, offset, size)` field of `w`; `None` when the field has a
/// bit this model does not know.
pub fn get(w: &Wave, target: Target, simm16: u32) -> Option<u32> {
    let (id, offset, size) = hwreg_fields(simm16);
    let reg = read(w, target, id);
    let mask = field_mask(offset, size);
    if reg.unknown & mask != 0 {
        return None;
    }
    Some((reg.value & mask) >> offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_masks_truncate_to_32_bits() {
        assert_eq!(field_mask(0, 32), u32::MAX);
        assert_eq!(field_mask(4, 32), 0xffff_fff0);
        assert_eq!(field_mask(31, 1), 0x8000_0000);
        assert_eq!(field_mask(8, 4), 0xf00);
    }

    #[test]
    fn reserved_registers_read_zero() {
        let w = Wave::new(0, 0);
        for target in Target::ALL {
            assert_eq!(get(&w, target, 0), Some(0));
            assert_eq!(get(&w, target, 8 | (31 << 11)), Some(0));
        }
        assert_eq!(get(&w, Target::Gfx90a, HW_REG_XCC_ID | (31 << 11)), Some(0));
        assert_eq!(get(&w, Target::Gfx942, HW_REG_XCC_ID | (3 << 11)), None);
    }
}
