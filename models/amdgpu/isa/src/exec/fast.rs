//! Pre-resolved forms of the hottest instructions, built once per [`Program`] slot.
//!
//! A [`FastOp`] names the operation by a dense [`Kind`] (one jump-table dispatch, instead
//! of matching the full opcode space) and carries its operands already decoded: VGPR and
//! SGPR indices, and inline constants and literals as their 32-bit values. The interpreter
//! loop runs a slot's `FastOp` (through `super::burst`) when it has one and falls back to
//! the general handlers when there is none or when the operation declines (f32 arithmetic
//! under a non-default MODE, or with a NaN result, which the host would encode
//! differently; with no NaN result the host's IEEE arithmetic is exact).
//!
//! Only instructions without modifiers, DPP or SDWA are pre-resolved; their semantics are
//! those of the general handlers, which the exec tests compare against.
//!
//! [`table`] turns the slots into straight-line runs ([`FastSlot`]): from each slot, how
//! many pre-resolved instructions follow one another up to the first branch, and how many
//! VGPRs they name, so that `super::burst` checks the PC, the budget and the register file
//! once per run instead of once per instruction.
//!
//! [`Program`]: super::Program

use crate::decode::{Encoding, Opcode};

use super::operands::{PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use super::program::{CachedInst, Extension, Slot};

/// A pre-decoded 32-bit source operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// `v<n>`.
    Vgpr(u8),
    /// Scalar slot `n` (SGPRs, VCC, M0, EXEC, ...).
    Sgpr(u8),
    /// An inline constant or literal, resolved.
    Const(u32),
    /// A source read at run time through the general operand decoder (`scc`, `vccz`, ...).
    Other(u16),
}

/// The operation of a [`FastOp`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    VMov,
    VNot,
    VAdd,
    VSub,
    VSubrev,
    VAnd,
    VOr,
    VXor,
    VLshlrev,
    VLshrrev,
    VAshrrev,
    VMulLo,
    VMulU24,
    VMinU,
    VMaxU,
    VAddF,
    VSubF,
    VMulF,
    VMaxF,
    VMinF,
    VFma,
    VFmac,
    VMadU24,
    VAdd3,
    VLshlAdd,
    VLshlOr,
    VAndOr,
    VOr3,
    VCndmask,
    /// `s_nop`, `s_waitcnt` and the other functional no-ops.
    SNop,
    SBranch,
    SCbranchScc0,
    SCbranchScc1,
    SCbranchVccz,
    SCbranchVccnz,
    SCbranchExecz,
    SCbranchExecnz,
    SAddU32,
    SSubU32,
    SAddI32,
    SSubI32,
    SAndB32,
    SOrB32,
    SXorB32,
    SLshlB32,
    SLshrB32,
    SMulI32,
    SMovB32,
    SCmpEq,
    SCmpLg,
    SCmpGtI32,
    SCmpGeI32,
    SCmpLtI32,
    SCmpLeI32,
    SCmpGtU32,
    SCmpGeU32,
    SCmpLtU32,
    SCmpLeU32,
}

/// One pre-resolved instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct FastOp {
    pub(crate) kind: Kind,
    /// Destination VGPR or scalar slot.
    pub(crate) dst: u8,
    pub(crate) src: [Src; 3],
    /// Branch displacement in bytes from the next instruction.
    pub(crate) offset: i32,
}

impl Kind {
    /// True for the vector operations (their `dst` is a VGPR).
    fn is_valu(self) -> bool {
        (self as u8) < (Kind::SNop as u8)
    }

    /// True for the branches, which end a straight-line run.
    pub(crate) fn is_branch(self) -> bool {
        matches!(
            self,
            Kind::SBranch
                | Kind::SCbranchScc0
                | Kind::SCbranchScc1
                | Kind::SCbranchVccz
                | Kind::SCbranchVccnz
                | Kind::SCbranchExecz
                | Kind::SCbranchExecnz
        )
    }
}

impl FastOp {
    /// VGPRs the operation needs allocated to name only existing registers (its highest
    /// VGPR index + 1; 0 when it names none).
    fn vgprs_needed(&self) -> u16 {
        let dst = if self.kind.is_valu() {
            self.dst as u16 + 1
        } else {
            0
        };
        self.src.iter().fold(dst, |n, s| match s {
            Src::Vgpr(r) => n.max(*r as u16 + 1),
            _ => n,
        })
    }
}

/// One slot of the straight-line run table built by [`table`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct FastSlot {
    /// The slot's pre-resolved instruction (meaningless when `run` is 0).
    pub(crate) op: FastOp,
    /// Its opcode, for the per-opcode counts.
    pub(crate) opcode: Opcode,
    /// Dword slots the instruction occupies.
    pub(crate) step: u8,
    /// Pre-resolved instructions executed in a row from this slot: up to and including
    /// the first branch, or up to the first slot without one. 0: this slot has none.
    pub(crate) run: u16,
    /// VGPRs the run names (highest index + 1): a wave with fewer allocated runs it
    /// through the general handlers, which implement reads and writes outside the
    /// allocation.
    pub(crate) vgprs: u16,
}

/// The straight-line run table of a program's slots (one entry per slot).
pub(crate) fn table(slots: &[Slot]) -> Vec<FastSlot> {
    let none = FastOp {
        kind: Kind::SNop,
        dst: 0,
        src: [Src::Const(0); 3],
        offset: 0,
    };
    let mut out: Vec<FastSlot> = vec![
        FastSlot {
            op: none,
            opcode: Opcode::SNop,
            step: 1,
            run: 0,
            vgprs: 0
        };
        slots.len()
    ];
    for i in (0..slots.len()).rev() {
        let Slot::Inst(c) = &slots[i] else { continue };
        let Some(op) = c.fast else { continue };
        let step = (c.size / 4).max(1);
        let next = i + step as usize;
        let (run, vgprs) = match out.get(next) {
            Some(n) if !op.kind.is_branch() && n.run != 0 => {
                (n.run.saturating_add(1), n.vgprs.max(op.vgprs_needed()))
            }
            _ => (1, op.vgprs_needed()),
        };
        out[i] = FastSlot {
            op,
            opcode: c.inst.opcode(),
            step,
            run,
            vgprs,
        };
    }
    out
}

/// A source of the 9-bit VALU / 8-bit scalar operand space, resolved as far as it is
/// static. `literal` is the instruction's literal dword.
fn resolve_src(code: u32, literal: u32) -> Src {
    match code {
        0..=127 => Src::Sgpr(code as u8),
        128..=208 | 240..=248 => Src::Const(scalar_src_static(code)),
        235 | 236 => Src::Const(SHARED_APERTURE_HI),
        237 | 238 => Src::Const(PRIVATE_APERTURE_HI),
        255 => Src::Const(literal),
        256..=511 => Src::Vgpr((code - 256) as u8),
        _ => Src::Other(code as u16),
    }
}

/// The value of an inline integer or f32 constant code.
fn scalar_src_static(code: u32) -> u32 {
    match code {
        128..=192 => code - 128,
        193..=208 => (192i32 - code as i32) as u32,
        _ => super::operands::inline_f32(code),
    }
}

/// The pre-resolved form of `c`, if it has one.
pub(crate) fn resolve(c: &CachedInst) -> Option<FastOp> {
    if c.ext != Extension::None {
        return None;
    }
    match c.enc {
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vop3 => resolve_valu(c),
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc | Encoding::Sopp => resolve_scalar(c),
        _ => None,
    }
}

fn resolve_valu(c: &CachedInst) -> Option<FastOp> {
    use Opcode as O;
    let fl = &c.fields;
    if !fl.plain {
        return None;
    }
    let kind = match c.op {
        O::VMovB32E32 | O::VMovB32E64 => Kind::VMov,
        O::VNotB32E32 => Kind::VNot,
        O::VAddU32E32 | O::VAddU32E64 => Kind::VAdd,
        O::VSubU32E32 | O::VSubU32E64 => Kind::VSub,
        O::VSubrevU32E32 | O::VSubrevU32E64 => Kind::VSubrev,
        O::VAndB32E32 | O::VAndB32E64 => Kind::VAnd,
        O::VOrB32E32 | O::VOrB32E64 => Kind::VOr,
        O::VXorB32E32 | O::VXorB32E64 => Kind::VXor,
        O::VLshlrevB32E32 | O::VLshlrevB32E64 => Kind::VLshlrev,
        O::VLshrrevB32E32 | O::VLshrrevB32E64 => Kind::VLshrrev,
        O::VAshrrevI32E32 | O::VAshrrevI32E64 => Kind::VAshrrev,
        O::VMulLoU32 => Kind::VMulLo,
        O::VMulU32U24E32 => Kind::VMulU24,
        O::VMinU32E32 => Kind::VMinU,
        O::VMaxU32E32 => Kind::VMaxU,
        O::VAddF32E32 | O::VAddF32E64 => Kind::VAddF,
        O::VSubF32E32 | O::VSubF32E64 => Kind::VSubF,
        O::VMulF32E32 | O::VMulF32E64 => Kind::VMulF,
        O::VMaxF32E32 | O::VMaxF32E64 => Kind::VMaxF,
        O::VMinF32E32 | O::VMinF32E64 => Kind::VMinF,
        O::VFmaF32 => Kind::VFma,
        O::VFmacF32E32 => Kind::VFmac,
        O::VMadU32U24 => Kind::VMadU24,
        O::VAdd3U32 => Kind::VAdd3,
        O::VLshlAddU32 => Kind::VLshlAdd,
        O::VLshlOrB32 => Kind::VLshlOr,
        O::VAndOrB32 => Kind::VAndOr,
        O::VOr3B32 => Kind::VOr3,
        O::VCndmaskB32E32 => Kind::VCndmask,
        // D = S0 * K + S1 and D = S0 * S1 + K: an fma with the literal K as an operand.
        O::VFmamkF32 => {
            let src = [
                resolve_src(fl.src[0], fl.literal),
                Src::Const(fl.literal),
                resolve_src(fl.src[1], fl.literal),
            ];
            return Some(FastOp {
                kind: Kind::VFma,
                dst: (fl.vdst & 255) as u8,
                src,
                offset: 0,
            });
        }
        O::VFmaakF32 => {
            let src = [
                resolve_src(fl.src[0], fl.literal),
                resolve_src(fl.src[1], fl.literal),
                Src::Const(fl.literal),
            ];
            return Some(FastOp {
                kind: Kind::VFma,
                dst: (fl.vdst & 255) as u8,
                src,
                offset: 0,
            });
        }
        _ => return None,
    };
    let src = fl.src.map(|s| resolve_src(s, fl.literal));
    Some(FastOp {
        kind,
        dst: (fl.vdst & 255) as u8,
        src,
        offset: 0,
    })
}

fn resolve_scalar(c: &CachedInst) -> Option<FastOp> {
    use Opcode as O;
    let word = c.inst.words()[0];
    let literal = c.inst.literal().unwrap_or(0);
    let s0 = resolve_src(word & 0xff, literal);
    let s1 = resolve_src((word >> 8) & 0xff, literal);
    let sdst = ((word >> 16) & 0x7f) as u8;
    let simm = (word & 0xffff) as i16 as i32;
    let (kind, dst, src, offset) = match c.op {
        O::SNop
        | O::SWaitcnt
        | O::SSetprio
        | O::SIncperflevel
        | O::SDecperflevel
        | O::STtracedata => (Kind::SNop, 0, [s0; 3], 0),
        O::SBranch => (Kind::SBranch, 0, [s0; 3], simm * 4),
        O::SCbranchScc0 => (Kind::SCbranchScc0, 0, [s0; 3], simm * 4),
        O::SCbranchScc1 => (Kind::SCbranchScc1, 0, [s0; 3], simm * 4),
        O::SCbranchVccz => (Kind::SCbranchVccz, 0, [s0; 3], simm * 4),
        O::SCbranchVccnz => (Kind::SCbranchVccnz, 0, [s0; 3], simm * 4),
        O::SCbranchExecz => (Kind::SCbranchExecz, 0, [s0; 3], simm * 4),
        O::SCbranchExecnz => (Kind::SCbranchExecnz, 0, [s0; 3], simm * 4),
        op => {
            let kind = match op {
                O::SAddU32 => Kind::SAddU32,
                O::SSubU32 => Kind::SSubU32,
                O::SAddI32 => Kind::SAddI32,
                O::SSubI32 => Kind::SSubI32,
                O::SAndB32 => Kind::SAndB32,
                O::SOrB32 => Kind::SOrB32,
                O::SXorB32 => Kind::SXorB32,
                O::SLshlB32 => Kind::SLshlB32,
                O::SLshrB32 => Kind::SLshrB32,
                O::SMulI32 => Kind::SMulI32,
                O::SMovB32 => Kind::SMovB32,
                O::SCmpEqI32 | O::SCmpEqU32 => Kind::SCmpEq,
                O::SCmpLgI32 | O::SCmpLgU32 => Kind::SCmpLg,
                O::SCmpGtI32 => Kind::SCmpGtI32,
                O::SCmpGeI32 => Kind::SCmpGeI32,
                O::SCmpLtI32 => Kind::SCmpLtI32,
                O::SCmpLeI32 => Kind::SCmpLeI32,
                O::SCmpGtU32 => Kind::SCmpGtU32,
                O::SCmpGeU32 => Kind::SCmpGeU32,
                O::SCmpLtU32 => Kind::SCmpLtU32,
                O::SCmpLeU32 => Kind::SCmpLeU32,
                _ => return None,
            };
            (kind, sdst, [s0, s1, s0], 0)
        }
    };
    Some(FastOp {
        kind,
        dst,
        src,
        offset,
    })
}

#[cfg(test)]
mod tests {
    use crate::exec::Program;
    use crate::Target;

    /// Runs end at the first branch (included) and before the first slot without a
    /// pre-resolved form; each names the VGPRs of its own operations and those after them.
    #[test]
    fn runs_end_at_branches_and_general_instructions() {
        // v_add_u32 v3, v1, v2; v_add_u32 v9, v3, v3; s_cbranch_scc1 -3;
        // v_add_u32 v5, v4, v4; s_endpgm.
        let v_add = |d: u32, a: u32, b: u32| (0x34 << 25) | (d << 17) | (b << 9) | (256 + a);
        let words = [
            v_add(3, 1, 2),
            v_add(9, 3, 3),
            0xbf85_fffd,
            v_add(5, 4, 4),
            0xbf81_0000,
        ];
        let program = Program::from_words(Target::Gfx942, 0x1000, &words);
        let runs: Vec<(u16, u16)> = program
            .fast_table()
            .iter()
            .map(|e| (e.run, e.vgprs))
            .collect();
        assert_eq!(runs, [(3, 10), (2, 10), (1, 0), (1, 6), (0, 0)]);
        assert!(program.fast_table()[2].op.kind.is_branch());
    }
}
