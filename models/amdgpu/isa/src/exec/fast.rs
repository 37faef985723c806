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
    /// `v_cndmask_b32_e64`: the select mask is the 64-bit scalar `src[2]`.
    VCndmask64,
    /// `v_writelane_b32`: lane `src[1] & 63` of `dst` is `src[0]`, whatever EXEC says.
    VWritelane,
    VMbcntLo,
    VMbcntHi,
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
    SAndn2B32,
    SNotB32,
    SAddcU32,
    SCselectB32,
    SFf1B32,
    SFf1B64,
    SMovB64,
    SAndB64,
    SOrB64,
    SXorB64,
    SAndn2B64,
    SLshlB64,
    SLshrB64,
    SCselectB64,
    SCmpEqU64,
    SCmpLgU64,
    SAndSaveexecB64,
    SOrSaveexecB64,
    /// VALU operations with a scalar destination (not a VGPR).
    VReadfirstlane,
    VReadlane,
    /// `v_cmp_<cond>_{i32,u32}` (VOPC or VOP3): the mask of lanes where the condition
    /// holds (under EXEC) into the SGPR pair `dst`; `offset` holds the condition (the
    /// compare descriptor's bits 7:0: type and condition).
    VCmp32,
    /// `v_cmp_<cond>_u64`: as [`Kind::VCmp32`], VGPR pair sources.
    VCmpU64,
}

/// One pre-resolved instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct FastOp {
    pub(crate) kind: Kind,
    /// Destination VGPR or scalar slot.
    pub(crate) dst: u8,
    pub(crate) src: [Src; 3],
    /// Branch displacement in bytes from the next instruction (a compare's condition:
    /// see [`Kind::VCmp32`]).
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
        // A 64-bit compare reads VGPR pairs.
        let width = if self.kind == Kind::VCmpU64 { 2 } else { 1 };
        self.src.iter().fold(dst, |n, s| match s {
            Src::Vgpr(r) => n.max(*r as u16 + width),
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

/// A source of a 64-bit scalar operand (`b64`/`u64` semantics) when it is static enough:
/// an SGPR pair (or VCC, EXEC, ...) or an inline integer (sign-extended at run time from
/// its `Src::Const`). Literals and f64 inline constants are left to the general handlers.
fn resolve_src64(code: u32) -> Option<Src> {
    match code {
        0..=127 => Some(Src::Sgpr(code as u8)),
        128..=208 => Some(Src::Const(scalar_src_static(code))),
        _ => None,
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
        Encoding::Vopc | Encoding::Vop3 if c.aux & 0x8000 != 0 => resolve_compare(c),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vop3 => resolve_valu(c),
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc | Encoding::Sopp | Encoding::Sopk => resolve_scalar(c),
        _ => None,
    }
}

/// The integer `v_cmp_*` forms without modifiers (not `v_cmpx`, which writes EXEC).
fn resolve_compare(c: &CachedInst) -> Option<FastOp> {
    let fl = &c.fields;
    let (ty, cond) = ((c.aux >> 4) & 0xf, c.aux & 0xf);
    let always = c.aux & (1 << 13) != 0;
    let cmpx = c.aux & (1 << 14) != 0;
    let modifiers = fl.abs != 0 || fl.neg != 0 || fl.clamp || fl.omod != 0 || fl.opsel != 0;
    if cmpx || always || modifiers || !(1..=6).contains(&cond) {
        return None;
    }
    let dst = if c.enc == Encoding::Vop3 { fl.vdst } else { fl.sdst };
    if dst > 127 {
        return None; // not an SGPR: the general handler drops the write
    }
    let (kind, src) = match ty {
        // i32, u32.
        4 | 7 => (Kind::VCmp32, [resolve_src(fl.src[0], fl.literal), resolve_src(fl.src[1], fl.literal), Src::Const(0)]),
        // u64: VGPR pairs, SGPR pairs or inline integers.
        8 => {
            let wide = |code: u32| if code >= 256 { Some(Src::Vgpr((code - 256) as u8)) } else { resolve_src64(code) };
            (Kind::VCmpU64, [wide(fl.src[0])?, wide(fl.src[1])?, Src::Const(0)])
        }
        _ => return None,
    };
    Some(FastOp { kind, dst: dst as u8, src, offset: i32::from(c.aux & 0xff) })
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
        O::VCndmaskB32E64 => {
            let src = [resolve_src(fl.src[0], fl.literal), resolve_src(fl.src[1], fl.literal), resolve_src64(fl.src[2])?];
            return Some(FastOp { kind: Kind::VCndmask64, dst: (fl.vdst & 255) as u8, src, offset: 0 });
        }
        // Scalar sources only (a VGPR code reads 0 there).
        O::VWritelaneB32 if fl.src[0] < 256 && fl.src[1] < 256 => Kind::VWritelane,
        O::VMbcntLoU32B32 => Kind::VMbcntLo,
        O::VMbcntHiU32B32 => Kind::VMbcntHi,
        // A scalar destination: `dst` is the SGPR.
        O::VReadfirstlaneB32 | O::VReadlaneB32 if fl.vdst < 128 && (c.op == O::VReadfirstlaneB32 || fl.src[1] < 256) => {
            let kind = if c.op == O::VReadlaneB32 { Kind::VReadlane } else { Kind::VReadfirstlane };
            return Some(FastOp { kind, dst: fl.vdst as u8, src: fl.src.map(|s| resolve_src(s, fl.literal)), offset: 0 });
        }
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
                O::SAndn2B32 => Kind::SAndn2B32,
                O::SNotB32 => Kind::SNotB32,
                O::SAddcU32 => Kind::SAddcU32,
                O::SCselectB32 => Kind::SCselectB32,
                O::SFf1I32B32 => Kind::SFf1B32,
                O::SMovkI32 => return Some(FastOp { kind: Kind::SMovB32, dst: sdst, src: [Src::Const(simm as u32); 3], offset: 0 }),
                op => return resolve_scalar64(op, word, sdst),
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

/// The 64-bit scalar operations (sources as [`resolve_src64`] allows; the shift amount of
/// `s_lshl_b64`/`s_lshr_b64` is a 32-bit source).
fn resolve_scalar64(op: Opcode, word: u32, sdst: u8) -> Option<FastOp> {
    use Opcode as O;
    let (v0, v1) = (word & 0xff, (word >> 8) & 0xff);
    let kind = match op {
        O::SMovB64 => Kind::SMovB64,
        O::SAndB64 => Kind::SAndB64,
        O::SOrB64 => Kind::SOrB64,
        O::SXorB64 => Kind::SXorB64,
        O::SAndn2B64 => Kind::SAndn2B64,
        O::SLshlB64 => Kind::SLshlB64,
        O::SLshrB64 => Kind::SLshrB64,
        O::SCselectB64 => Kind::SCselectB64,
        O::SCmpEqU64 => Kind::SCmpEqU64,
        O::SCmpLgU64 => Kind::SCmpLgU64,
        O::SFf1I32B64 => Kind::SFf1B64,
        O::SAndSaveexecB64 => Kind::SAndSaveexecB64,
        O::SOrSaveexecB64 => Kind::SOrSaveexecB64,
        _ => return None,
    };
    let one = matches!(kind, Kind::SMovB64 | Kind::SFf1B64 | Kind::SAndSaveexecB64 | Kind::SOrSaveexecB64);
    let s0 = resolve_src64(v0)?;
    let s1 = match kind {
        _ if one => Src::Const(0),
        // A 32-bit shift amount (literals are left to the general handler).
        Kind::SLshlB64 | Kind::SLshrB64 => match resolve_src(v1, 0) {
            Src::Const(_) if v1 == 255 => return None,
            s => s,
        },
        _ => resolve_src64(v1)?,
    };
    Some(FastOp { kind, dst: sdst, src: [s0, s1, Src::Const(0)], offset: 0 })
}

#[cfg(test)]
mod tests {
    use crate::exec::hwreg::MODE_GPR_IDX_EN;
    use crate::exec::{step, Memory, Program, StepEnv, StepStop, Wave};
    use crate::Target;

    /// Scalar, lane and compare instructions the fast path pre-resolves (assembled with
    /// llvm-mc-19 -mcpu=gfx942), as they appear in compiled code (the host-call loops).
    const SCALAR_AND_LANE_OPS: &[(&str, &[u32])] = &[
        ("s_ff1_i32_b64 s22, s[20:21]", &[0xbe96_1114]),
        ("s_ff1_i32_b32 s22, s20", &[0xbe96_1014]),
        ("s_mov_b64 s[22:23], -1", &[0xbe96_01c1]),
        ("s_mov_b64 s[22:23], s[4:5]", &[0xbe96_0104]),
        ("s_mov_b64 exec, s[4:5]", &[0xbefe_0104]),
        ("s_and_b64 s[22:23], s[4:5], s[6:7]", &[0x8696_0604]),
        ("s_and_b64 vcc, exec, s[6:7]", &[0x86ea_067e]),
        ("s_or_b64 exec, exec, s[8:9]", &[0x87fe_087e]),
        ("s_xor_b64 s[22:23], exec, s[22:23]", &[0x8896_167e]),
        ("s_andn2_b64 s[20:21], s[20:21], s[22:23]", &[0x8994_1614]),
        ("s_lshl_b64 s[22:23], 1, s22", &[0x8e96_1681]),
        ("s_lshl_b64 s[22:23], s[4:5], 2", &[0x8e96_8204]),
        ("s_lshr_b64 s[22:23], s[4:5], s9", &[0x8f96_0904]),
        ("s_cselect_b64 s[20:21], -1, 0", &[0x8594_80c1]),
        ("s_cselect_b32 s16, s16, 0", &[0x8510_8010]),
        ("s_cmp_lg_u64 s[20:21], 0", &[0xbf13_8014]),
        ("s_cmp_eq_u64 s[4:5], s[6:7]", &[0xbf12_0604]),
        ("s_and_saveexec_b64 s[4:5], vcc", &[0xbe84_206a]),
        ("s_or_saveexec_b64 s[4:5], s[6:7]", &[0xbe84_2106]),
        ("s_andn2_b32 s4, s5, s6", &[0x8904_0605]),
        ("s_not_b32 s25, s26", &[0xbe99_041a]),
        ("s_addc_u32 s21, s21, 0", &[0x8215_8015]),
        ("s_movk_i32 s8, 0x4c0", &[0xb008_04c0]),
        ("s_movk_i32 s8, 0xfc40", &[0xb008_fc40]),
        ("v_readfirstlane_b32 s20, v3", &[0x7e28_0503]),
        ("v_readlane_b32 s25, v3, s22", &[0xd289_0019, 0x0000_2d03]),
        ("v_readlane_b32 s25, v3, 5", &[0xd289_0019, 0x0001_0b03]),
        ("v_writelane_b32 v2, s24, m0", &[0xd28a_0002, 0x0000_f818]),
        ("v_writelane_b32 v2, 7, s5", &[0xd28a_0002, 0x0000_0a87]),
        ("v_mbcnt_lo_u32_b32 v2, -1, 0", &[0xd28c_0002, 0x0001_00c1]),
        ("v_mbcnt_hi_u32_b32 v6, -1, v2", &[0xd28d_0006, 0x0002_04c1]),
        ("v_mbcnt_lo_u32_b32 v3, s18, 0", &[0xd28c_0003, 0x0001_0012]),
        ("v_mbcnt_hi_u32_b32 v3, s19, v3", &[0xd28d_0003, 0x0002_0613]),
        ("v_cmp_eq_u32_e32 vcc, 0, v5", &[0x7d94_0a80]),
        ("v_cmp_ne_u32_e32 vcc, s9, v4", &[0x7d9a_0809]),
        ("v_cmp_lt_i32_e32 vcc, v1, v2", &[0x7d82_0501]),
        ("v_cmp_ge_u32_e64 s[4:5], v1, v2", &[0xd0ce_0004, 0x0002_0501]),
        ("v_cmp_gt_i32_e64 s[4:5], v1, s6", &[0xd0c4_0004, 0x0000_0d01]),
        ("v_cmp_le_u32_e64 vcc, 3, v1", &[0xd0cb_006a, 0x0002_0283]),
        ("v_cmp_ne_u64_e32 vcc, 0, v[10:11]", &[0x7dda_1480]),
        ("v_cmp_lt_u64_e32 vcc, -1, v[2:3]", &[0x7dd2_04c1]),
        ("v_cndmask_b32_e64 v4, 0, 1, s[20:21]", &[0xd100_0004, 0x0051_0280]),
        ("v_cndmask_b32_e64 v4, v1, v2, vcc", &[0xd100_0004, 0x01aa_0501]),
    ];

    /// Each of those is pre-resolved, and gives the same wave (every SGPR, VGPR, SCC) as
    /// the general handlers, which run it when GPR indexing mode is on (its index mask
    /// zero: no operand changes), over states with zero, full and mixed masks.
    #[test]
    fn scalar_and_lane_ops_match_the_general_handlers() {
        const BASE: u64 = 0x1000;
        const S_ENDPGM: u32 = 0xbf81_0000;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for &(name, words) in SCALAR_AND_LANE_OPS {
            let mut all = words.to_vec();
            all.push(S_ENDPGM);
            let program = Program::from_words(Target::Gfx942, BASE, &all);
            assert!(program.fast_table()[0].run != 0, "{name} is pre-resolved");
            for trial in 0..24 {
                let mut wave = Wave::new(BASE, 0x3f0);
                for r in 0..106 {
                    wave.sgpr[r] = match next() % 4 {
                        0 => 0,
                        1 => u32::MAX,
                        2 => (next() % 70) as u32,
                        _ => next() as u32,
                    };
                }
                for r in 0..12 {
                    for lane in 0..64 {
                        wave.vgpr[r][lane] = if next() % 3 == 0 { (next() % 4) as u32 } else { next() as u32 };
                    }
                }
                let mask = |v: u64| match trial % 4 {
                    0 => 0,
                    1 => u64::MAX,
                    _ => v,
                };
                wave.set_exec(mask(next()));
                wave.set_vcc(mask(next()));
                // M0: a lane number, with the GPR index mask (bits 15:12) clear.
                wave.set_sgpr(super::super::wave::M0, (next() % 64) as u32);
                wave.scc = trial % 2 == 0;
                let run = |mut w: Wave, indexed: bool| {
                    if indexed {
                        w.set_mode(w.mode_bits | MODE_GPR_IDX_EN);
                    }
                    let (mut mem, mut lds) = (Memory::new(), vec![0u8; 64]);
                    let mut env = StepEnv { mem: &mut mem, lds: &mut lds, clock: 0, realtime: 0, counts: None };
                    let out = step(&mut w, &program, &mut env, 4).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(out.stop, StepStop::Ended, "{name}");
                    (w.sgpr, w.scc, w.vgpr.as_slice()[..12].to_vec())
                };
                let (fast, general) = (run(wave.clone(), false), run(wave, true));
                assert_eq!(fast, general, "{name}, trial {trial}");
            }
        }
    }

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
