//! Scalar control state beyond the PC: the fork/join stack of `s_cbranch_g_fork`,
//! `s_cbranch_i_fork` and `s_cbranch_join`, and M0-relative SGPR indexing
//! (`s_movrels_b32/b64`, `s_movreld_b32/b64`).
//!
//! **Fork/join** (CDNA3/CDNA4 ISA, "Arbitrary Divergent Control Flow" and the instruction
//! pseudo-code): a fork splits EXEC into the lanes whose mask bit is set (pass) and the
//! others (fail). If one side holds every active lane the fork is a plain branch (an empty
//! EXEC counts as "all pass"). Otherwise the wave continues with the fail side when it has
//! strictly fewer lanes, else with the pass side, and pushes the other side's EXEC and PC
//! as 128 bits at `SGPR[CSP * 4]`, then CSP (MODE bits
//! 31:29, three bits, wrapping) increments. `s_cbranch_join S0` continues when CSP equals
//! S0 (the CSP saved before the fork) and otherwise pops: CSP decrements and EXEC and PC
//! come back from `SGPR[CSP * 4]`. The 128-bit entry is `{ PC, EXEC }` in the pseudo-code's
//! concatenation order, so EXEC is in `SGPR[CSP*4 .. CSP*4+1]` and the PC (a byte address)
//! in `SGPR[CSP*4+2 .. CSP*4+3]`.
//!
//! **Relative indexing** (ISA section 3.6, "Out-of-Range behavior"): the operand's raw SGPR
//! number plus M0 names a physical SGPR of the wave's allocation of N SGPRs
//! ([`Placement::sgprs`](super::hwreg::Placement)). The top six of those hold FLAT_SCRATCH,
//! XNACK_MASK and VCC (ISA Table 2: FLAT_SCRATCH "in NumSGPRs-5 and -6", VCC in the highest
//! two), so physical `N-6 ..= N-1` are the registers the operand space calls 102..=107.
//! A source index at or past N reads SGPR0 (the ISA replaces the register number by 0, so a
//! 64-bit source reads `s[0:1]`); a destination index at or past N writes nothing.
//! Indexing that starts from a non-SGPR operand (VCC, TTMP, M0, EXEC, constants) is
//! illegal, and so is a 64-bit index from an odd SGPR or with an odd M0 unless the pair
//! lies past N whichever way the odd index is aligned; such instructions stop the wave
//! with `Unsupported`, as does an index that lands on the allocated but unnamed SGPRs
//! between 101 and N-6 (allocations above 108).
//!
//! **The trap handler's SGPRs.** A wave of a dispatch also holds 16 SGPRs for its trap
//! handler (GPR_ALLOC counts them, see [`super::hwreg`]); the documents do not say where
//! they sit, so whether the out-of-range limit is N or N+16, and whether the top six
//! registers are at N-6 or N+10, is open. For such a wave (its `Placement::sgprs` known)
//! an index touching `N-6 .. N+16` stops the wave with `Unsupported`; an index at or past
//! N+16 is out of range under both readings. A wave without a known allocation
//! ([`Wave::new`]) has exactly the 108 named registers.

use super::wave::Wave;
use super::hwreg::MODE_CSP_SHIFT;

/// Logical SGPRs a wave without a known allocation has (s0..s101, FLAT_SCRATCH,
/// XNACK_MASK, VCC).
const FULL_SGPRS: u64 = 108;
/// The first operand number past the user SGPRs (`flat_scratch_lo`).
const USER_SGPRS: u64 = 102;
/// SGPRs a dispatched wave holds for its trap handler on top of its allocation.
const TRAP_SGPRS: u64 = 16;

/// The fork/join stack pointer (MODE.CSP).
fn csp(w: &Wave) -> u32 {
    (w.mode_bits >> MODE_CSP_SHIFT) & 7
}

fn set_csp(w: &mut Wave, csp: u32) {
    let bits = (w.mode_bits & !(7 << MODE_CSP_SHIFT)) | ((csp & 7) << MODE_CSP_SHIFT);
    w.set_mode(bits);
}

/// `s_cbranch_g_fork` / `s_cbranch_i_fork` with compare mask `mask` and branch target
/// `target`; `w.pc` already holds the next instruction.
pub(crate) fn fork(w: &mut Wave, mask: u64, target: u64) {
    let exec = w.exec();
    let pass = mask & exec;
    let fail = !mask & exec;
    let next = w.pc;
    if pass == exec {
        w.pc = target;
        return;
    }
    if fail == exec {
        return;
    }
    // Run the side with fewer lanes first; push the other.
    let (run, run_pc, push, push_pc) = if fail.count_ones() < pass.count_ones() { (fail, next, pass, target) } else { (pass, target, fail, next) };
    let entry = (csp(w) * 4) as usize;
    w.set_exec(run);
    w.set_sgpr_pair(entry, push);
    w.set_sgpr_pair(entry + 2, push_pc);
    set_csp(w, csp(w) + 1);
    w.pc = run_pc;
}

/// `s_cbranch_join` with `saved`, the CSP value the matching fork started from.
pub(crate) fn join(w: &mut Wave, saved: u32) {
    if csp(w) == saved {
        return;
    }
    let csp = csp(w).wrapping_sub(1) & 7;
    set_csp(w, csp);
    let entry = (csp * 4) as usize;
    let exec = w.sgpr_pair(entry);
    let pc = w.sgpr_pair(entry + 2);
    w.set_exec(exec);
    w.pc = pc;
}

/// Where an M0-relative SGPR index lands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Relative {
    /// The operand-space slots of the `width` registers (consecutive).
    Slot(usize),
    /// At least one register is past the allocation.
    OutOfRange,
    /// Illegal or not modelled (see the module docs).
    Illegal,
}

/// The registers `base + M0 ..` (`width` 1 or 2) of `w`; `base` is the raw operand number.
pub(crate) fn relative(w: &Wave, base: u32, width: u32) -> Relative {
    let m0 = u64::from(w.m0());
    let base = u64::from(base);
    if base >= USER_SGPRS {
        return Relative::Illegal;
    }
    let n = w.place.sgprs.map_or(FULL_SGPRS, u64::from);
    let trap = if w.place.sgprs.is_some() { TRAP_SGPRS } else { 0 };
    let first = base + m0;
    let end = first + u64::from(width);
    if width == 2 && (base % 2 != 0 || m0 % 2 != 0) {
        // Past the allocation however the odd parts are aligned (separately, after the
        // sum, or not) and wherever the trap handler's SGPRs are.
        let lowest = (base & !1) + (m0 & !1);
        return if lowest >= n + trap { Relative::OutOfRange } else { Relative::Illegal };
    }
    if first >= n + trap {
        return Relative::OutOfRange;
    }
    if trap > 0 && end > n.saturating_sub(6) {
        // The top of the allocation, whose layout depends on the trap handler's SGPRs.
        return Relative::Illegal;
    }
    if end > n {
        return Relative::OutOfRange;
    }
    let specials = n.saturating_sub(6);
    if first >= specials {
        // FLAT_SCRATCH, XNACK_MASK and VCC at the top of the allocation.
        return Relative::Slot((USER_SGPRS + (first - specials)) as usize);
    }
    if first + u64::from(width) > USER_SGPRS {
        return Relative::Illegal;
    }
    Relative::Slot(first as usize)
}
