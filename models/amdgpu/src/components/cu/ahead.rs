//! Run-ahead of timing mode: a wave executes its straight-line stretch of register-only
//! instructions in one go, and the scheduler issues them later, one per issue turn, from
//! the queue this leaves ([`Ahead`]).
//!
//! An instruction runs ahead only when nothing it does can be seen by anything but its
//! own wave, and nothing it reads depends on when it runs: scalar and vector ALU and matrix
//! instructions (their registers, EXEC, VCC, SCC, M0, MODE), `s_nop` and the branches
//! (which change only the wave's pc). Memory, LDS, scalar memory (`s_memtime` reads the
//! clock), `s_waitcnt`, barriers, `s_sleep`, `s_endpgm`, `s_setkill`, traps, halts and
//! messages execute at their issue cycle, as before. So the architectural state every
//! other wave, the memory and the caches see at each cycle is unchanged; the wave's own
//! registers are ahead of its issue point, which nothing observes (a fault is held back
//! until the faulting instruction's turn: [`WaveTiming`](super::timed::WaveTiming) keeps
//! it, and the wave reports the pc of the instruction it issues next).
//!
//! The scheduler's view of a queued instruction is exactly what it computed at issue
//! before: its opcode's [`IssueInfo`](super::issue::IssueInfo), its own issue cycles (an
//! `s_nop`'s count + 1) and an MFMA's pass count, all known before it runs. Its per-opcode
//! tally and the instruction count are added at issue, as `step` added them.

use amdgpu_isa::decode::{Encoding, Opcode};
use amdgpu_isa::exec::{step, CachedInst, ExecFault, Program, StepEnv, StepStop, WaveStatus};
use serde::{Deserialize, Serialize};

use super::issue::{IssueTable, IssueUnit};
use super::{CuMemory, Slot};

/// Most instructions a wave runs ahead of its issue.
pub(super) const AHEAD_MAX: usize = 64;

/// One instruction a wave executed ahead of its issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Ahead {
    /// Its address (the wave's pc while it waits to issue).
    pub pc: u64,
    /// Its opcode number (`Inst::opcode() as usize`).
    pub opcode: u16,
    /// Cycles before the wave's next issue.
    pub own: u16,
    /// Cycles it occupies the SIMD's matrix core (an MFMA), else 0.
    pub passes: u16,
    /// Its execution faulted: the group faults when it issues.
    pub faulted: bool,
}

/// Whether `ci` may run ahead of its issue (see the [module docs](self)).
pub(super) fn runs_ahead(ci: &CachedInst) -> bool {
    use Opcode as O;
    match ci.enc {
        Encoding::Sop2
        | Encoding::Sopk
        | Encoding::Sop1
        | Encoding::Sopc
        | Encoding::Vop1
        | Encoding::Vop2
        | Encoding::Vopc
        | Encoding::Vop3
        | Encoding::Vop3p => true,
        Encoding::Sopp => matches!(
            ci.inst.opcode(),
            O::SNop
                | O::SBranch
                | O::SCbranchScc0
                | O::SCbranchScc1
                | O::SCbranchVccz
                | O::SCbranchVccnz
                | O::SCbranchExecz
                | O::SCbranchExecnz
        ),
        _ => false,
    }
}

/// Runs `slot`'s wave ahead from its pc while its instructions may (see [`runs_ahead`]),
/// up to [`AHEAD_MAX`] queued, and queues them. A faulting instruction is queued as
/// `faulted` (its fault kept in the wave's timing state) and ends the run; the wave stays
/// `Running` until the fault's turn.
pub(super) fn run_ahead(slot: &mut Slot, program: &Program, table: &IssueTable, mem: &mut CuMemory, lds: &mut [u8]) {
    let target = program.target();
    while slot.timing.ahead.len() < AHEAD_MAX && slot.wave.status == WaveStatus::Running {
        let pc = slot.wave.pc;
        let Some(ci) = program.inst_at(pc).filter(|ci| runs_ahead(ci)) else {
            break;
        };
        let opcode = ci.inst.opcode() as usize;
        let info = table.get(opcode);
        let words = ci.inst.words();
        let own = if info.nop { (words[0] & 0xf) as u16 + 1 } else { info.cycles };
        let passes = if info.unit == IssueUnit::Mfma { info.mfma_busy(target, words) } else { 0 };
        let mut entry = Ahead { pc, opcode: opcode as u16, own, passes, faulted: false };
        // Register-only instructions read neither the clock nor memory nor the LDS.
        let mut env = StepEnv { mem: &mut *mem, lds: &mut *lds, clock: 0, realtime: 0, counts: None };
        match step(&mut slot.wave, program, &mut env, 1) {
            Ok(out) => {
                // A register-only instruction leaves the wave running; anything else
                // would be a misclassification, which must not be hidden.
                debug_assert_eq!((out.executed, out.stop), (1, StepStop::Budget), "run-ahead of {:?} at {pc:#x}", ci.inst.opcode());
                slot.timing.ahead.push_back(entry);
            }
            Err(e) => {
                let addr = match &e {
                    ExecFault::Memory { addr, .. } => Some(*addr),
                    _ => None,
                };
                entry.faulted = true;
                slot.timing.ahead.push_back(entry);
                slot.timing.fault = Some((e.to_string(), addr));
                slot.wave.status = WaveStatus::Running;
                break;
            }
        }
    }
}
