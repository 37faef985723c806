//! The scalar ALU and control handlers (SOP2, SOPK, SOP1, SOPC, SOPP); scalar memory is
//! [`super::smem`].
//!
//! **GPR indexing mode** (MODE bit 27, GPR_IDX_EN): `s_set_gpr_idx_on S0, imask` sets M0
//! bits 7:0 to `S0[7:0]`, M0 bits 15:12 to the 4-bit mask and GPR_IDX_EN, leaving the
//! other M0 bits; `s_set_gpr_idx_idx` and `s_set_gpr_idx_mode` replace only the index or
//! only the mask; `s_set_gpr_idx_off` clears GPR_IDX_EN. Those four are exact (what the
//! mode does to vector instructions: see [`super::interp`]). An `s_set_gpr_idx_on` mask
//! field above 15 (the ISA defines four bits) is refused.
//!
//! **Halting and killing**: `s_sethalt 1` and `s_sendmsghalt` halt the wave, which only a
//! debugger or the host resumes; here that ends the dispatch with [`ExecFault::Halted`]
//! (the program can never finish). `s_setkill 1` kills the wave, which ends it like
//! `s_endpgm`. `s_sendmsg` sends nothing the wave can observe for `MSG_INTERRUPT` (1) and
//! for the illegal message 0; every other message (GS, save-wave, stall or halt of waves,
//! doorbell id into EXEC, system messages) stops the wave with `Unsupported`.
//!
//! Notes on the ISA pseudo-code: `s_max_i32` and `s_max_u32` set SCC when the first
//! operand is selected, that is when `S0 >= S1` (the CDNA3/CDNA4 pseudo-code; equal
//! operands select S0). `s_rfe_b64` returns to `S0` and clears PRIV (always clear here);
//! `s_rfe_restore_b64` also sets the gfx8 STATUS.INST_ATC bit from `S1[0]`, which the
//! gfx9-family STATUS lacks, so a set `S1[0]` stops the wave with `Unsupported`.

use crate::decode::{Inst, Opcode};
use crate::Target;

use super::hwreg::{self, MODE_GPR_IDX_EN, MODE_VSKIP};
use super::operands::{scalar_src, scalar_src64, scalar_src64_signed, unsupported};
use super::scalar_flow::{self, Relative};
use super::wave::{Wave, WaveStatus, M0};
use super::ExecFault;

/// M0 bits 7:0: the VGPR index of GPR indexing mode.
const GPR_IDX_INDEX: u32 = 0xff;
/// M0 bits 15:12: the operands GPR indexing mode applies to (SRC0, SRC1, SRC2, DST).
const GPR_IDX_MODE: u32 = 0xf << 12;

fn lit(inst: &Inst) -> u32 {
    inst.literal().unwrap_or(0)
}

/// A SOP2 instruction (two scalar sources).
pub(super) fn sop2(w: &mut Wave, inst: &Inst, pc: u64) -> Result<(), ExecFault> {
    use Opcode as O;
    let word = inst.words()[0];
    let l = lit(inst);
    let (v0, v1) = (word & 0xff, (word >> 8) & 0xff);
    let d = ((word >> 16) & 0x7f) as usize;
    let a = scalar_src(w, v0, l, false);
    let b = scalar_src(w, v1, l, false);
    let op = inst.opcode();
    match op {
        O::SCbranchGFork => {
            // The mask must be a register (a constant "does not work", per the ISA's
            // notes), and the PC arithmetic assumes a 4-byte instruction.
            if v0 > 127 || inst.literal().is_some() {
                return Err(unsupported(inst, pc));
            }
            let (mask, dest) = (scalar_src64(w, v0, l), scalar_src64(w, v1, l));
            scalar_flow::fork(w, mask, dest);
            return Ok(());
        }
        O::SRfeRestoreB64 => {
            if b & 1 != 0 {
                return Err(unsupported(inst, pc));
            }
            w.pc = scalar_src64(w, v0, l);
            return Ok(());
        }
        _ => {}
    }
    // 64-bit forms first.
    let is64 = matches!(
        op,
        O::SAndB64 | O::SOrB64 | O::SXorB64 | O::SAndn2B64 | O::SOrn2B64 | O::SNandB64 | O::SNorB64 | O::SXnorB64
            | O::SCselectB64 | O::SLshlB64 | O::SLshrB64 | O::SAshrI64 | O::SBfmB64 | O::SBfeU64 | O::SBfeI64
    );
    if is64 {
        // s_ashr_i64 and s_bfe_i64 read a signed first operand.
        let a64 = if matches!(op, O::SAshrI64 | O::SBfeI64) { scalar_src64_signed(w, v0, l) } else { scalar_src64(w, v0, l) };
        let b64 = scalar_src64(w, v1, l);
        let (r, scc) = match op {
            O::SAndB64 => nz(a64 & b64),
            O::SOrB64 => nz(a64 | b64),
            O::SXorB64 => nz(a64 ^ b64),
            O::SAndn2B64 => nz(a64 & !b64),
            O::SOrn2B64 => nz(a64 | !b64),
            O::SNandB64 => nz(!(a64 & b64)),
            O::SNorB64 => nz(!(a64 | b64)),
            O::SXnorB64 => nz(!(a64 ^ b64)),
            O::SCselectB64 => (if w.scc { a64 } else { b64 }, w.scc),
            O::SLshlB64 => nz(a64 << (b & 63)),
            O::SLshrB64 => nz(a64 >> (b & 63)),
            O::SAshrI64 => nz(((a64 as i64) >> (b & 63)) as u64),
            O::SBfmB64 => (((1u64 << (a & 63)).wrapping_sub(1)) << (b & 63), w.scc),
            O::SBfeU64 => nz(bfe(a64, b, 64, false)),
            O::SBfeI64 => nz(bfe(a64, b, 64, true)),
            _ => return Err(unsupported(inst, pc)),
        };
        w.set_sgpr_pair(d, r);
        w.scc = scc;
        return Ok(());
    }
    let scc = w.scc;
    let (r, scc) = match op {
        O::SAddU32 => {
            let (r, c) = a.overflowing_add(b);
            (r, c)
        }
        O::SSubU32 => {
            let (r, c) = a.overflowing_sub(b);
            (r, c)
        }
        O::SAddI32 => {
            let (r, o) = (a as i32).overflowing_add(b as i32);
            (r as u32, o)
        }
        O::SSubI32 => {
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            (r as u32, o)
        }
        O::SAddcU32 => {
            let s = a as u64 + b as u64 + scc as u64;
            (s as u32, s >> 32 != 0)
        }
        O::SSubbU32 => {
            let s = (a as u64).wrapping_sub(b as u64).wrapping_sub(scc as u64);
            (s as u32, (b as u64 + scc as u64) > a as u64)
        }
        O::SMinI32 => ((a as i32).min(b as i32) as u32, (a as i32) < (b as i32)),
        O::SMinU32 => (a.min(b), a < b),
        O::SMaxI32 => ((a as i32).max(b as i32) as u32, (a as i32) >= (b as i32)),
        O::SMaxU32 => (a.max(b), a >= b),
        O::SCselectB32 => (if scc { a } else { b }, scc),
        O::SAndB32 => nz32(a & b),
        O::SOrB32 => nz32(a | b),
        O::SXorB32 => nz32(a ^ b),
        O::SAndn2B32 => nz32(a & !b),
        O::SOrn2B32 => nz32(a | !b),
        O::SNandB32 => nz32(!(a & b)),
        O::SNorB32 => nz32(!(a | b)),
        O::SXnorB32 => nz32(!(a ^ b)),
        O::SLshlB32 => nz32(a << (b & 31)),
        O::SLshrB32 => nz32(a >> (b & 31)),
        O::SAshrI32 => nz32(((a as i32) >> (b & 31)) as u32),
        O::SBfmB32 => (((1u32 << (a & 31)).wrapping_sub(1)) << (b & 31), scc),
        O::SMulI32 => ((a as i32).wrapping_mul(b as i32) as u32, scc),
        O::SMulHiU32 => (((a as u64 * b as u64) >> 32) as u32, scc),
        O::SMulHiI32 => (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, scc),
        O::SBfeU32 => nz32(bfe(u64::from(a), b, 32, false) as u32),
        O::SBfeI32 => nz32(bfe(u64::from(a), b, 32, true) as u32),
        O::SAbsdiffI32 => nz32((a as i32).wrapping_sub(b as i32).unsigned_abs()),
        O::SLshl1AddU32 | O::SLshl2AddU32 | O::SLshl3AddU32 | O::SLshl4AddU32 => {
            let sh = match op {
                O::SLshl1AddU32 => 1,
                O::SLshl2AddU32 => 2,
                O::SLshl3AddU32 => 3,
                _ => 4,
            };
            let wide = ((a as u64) << sh) + b as u64;
            (wide as u32, wide >> 32 != 0)
        }
        O::SPackLlB32B16 => ((a & 0xffff) | (b << 16), scc),
        O::SPackLhB32B16 => ((a & 0xffff) | (b & 0xffff_0000), scc),
        O::SPackHhB32B16 => ((a >> 16) | (b & 0xffff_0000), scc),
        _ => return Err(unsupported(inst, pc)),
    };
    w.set_sgpr(d, r);
    w.scc = scc;
    Ok(())
}

fn nz(v: u64) -> (u64, bool) {
    (v, v != 0)
}

fn nz32(v: u32) -> (u32, bool) {
    (v, v != 0)
}

/// `s_bfe_*` of the low `bits` (32 or 64) bits of `a`: the field at offset `S1[4:0]`
/// (`S1[5:0]` for 64 bits) of width `S1[22:16]`, shifted arithmetically when `signed`
/// (the pseudo-code shifts `S0.i32`/`S0.i64`), masked and sign-extended from bit
/// `width - 1`. A field reaching past the top bit is the shifted value itself (sign bits
/// for the signed forms); width 0 gives 0.
fn bfe(a: u64, b: u32, bits: u32, signed: bool) -> u64 {
    let off = b & (bits - 1);
    let width = (b >> 16) & 0x7f;
    let value = if bits == 32 { a & 0xffff_ffff } else { a };
    if width == 0 {
        return 0;
    }
    if off + width >= bits {
        let shifted = if !signed {
            value >> off
        } else if bits == 32 {
            u64::from(((value as u32 as i32) >> off) as u32)
        } else {
            ((value as i64) >> off) as u64
        };
        return shifted;
    }
    let field = (value >> off) & ((1u64 << width) - 1);
    if signed && (field >> (width - 1)) & 1 == 1 {
        let ones = if bits == 32 { 0xffff_ffff } else { u64::MAX };
        return field | (ones & !((1u64 << width) - 1));
    }
    field
}

/// A SOPK instruction (a 16-bit immediate).
pub(super) fn sopk(w: &mut Wave, inst: &Inst, pc: u64, target: Target) -> Result<(), ExecFault> {
    use Opcode as O;
    let word = inst.words()[0];
    let d = ((word >> 16) & 0x7f) as usize;
    let imm = word & 0xffff;
    let simm = imm as i16 as i32;
    let cur = w.sgpr[d];
    match inst.opcode() {
        O::SMovkI32 => w.set_sgpr(d, simm as u32),
        O::SCmovkI32 => {
            if w.scc {
                w.set_sgpr(d, simm as u32)
            }
        }
        O::SAddkI32 => {
            let (r, o) = (cur as i32).overflowing_add(simm);
            w.set_sgpr(d, r as u32);
            w.scc = o;
        }
        O::SMulkI32 => w.set_sgpr(d, (cur as i32).wrapping_mul(simm) as u32),
        O::SCallB64 => {
            // Return address = the next instruction; target relative to it.
            w.set_sgpr_pair(d, w.pc);
            w.pc = w.pc.wrapping_add((simm as i64 * 4) as u64);
        }
        O::SCmpkEqI32 => w.scc = cur as i32 == simm,
        O::SCmpkLgI32 => w.scc = cur as i32 != simm,
        O::SCmpkGtI32 => w.scc = cur as i32 > simm,
        O::SCmpkGeI32 => w.scc = cur as i32 >= simm,
        O::SCmpkLtI32 => w.scc = (cur as i32) < simm,
        O::SCmpkLeI32 => w.scc = cur as i32 <= simm,
        O::SCmpkEqU32 => w.scc = cur == imm,
        O::SCmpkLgU32 => w.scc = cur != imm,
        O::SCmpkGtU32 => w.scc = cur > imm,
        O::SCmpkGeU32 => w.scc = cur >= imm,
        O::SCmpkLtU32 => w.scc = cur < imm,
        O::SCmpkLeU32 => w.scc = cur <= imm,
        O::SCbranchIFork => {
            let dest = w.pc.wrapping_add((simm as i64 * 4) as u64);
            let mask = w.sgpr_pair(d);
            scalar_flow::fork(w, mask, dest);
        }
        O::SGetregB32 => {
            let Some(value) = hwreg::get(w, target, imm) else { return Err(unsupported(inst, pc)) };
            w.set_sgpr(d, value);
        }
        O::SSetregB32 | O::SSetregImm32B32 => {
            let src = if inst.opcode() == O::SSetregImm32B32 { lit(inst) } else { cur };
            hwreg::write(w, target, imm, src).map_err(|_| unsupported(inst, pc))?;
        }
        _ => return Err(unsupported(inst, pc)),
    }
    Ok(())
}

/// A SOP1 instruction (one scalar source).
pub(super) fn sop1(w: &mut Wave, inst: &Inst, pc: u64) -> Result<(), ExecFault> {
    use Opcode as O;
    let word = inst.words()[0];
    let l = lit(inst);
    let v0 = word & 0xff;
    let d = ((word >> 16) & 0x7f) as usize;
    let op = inst.opcode();
    let exec = w.exec();
    // saveexec family: d = exec; exec = f(src, exec); scc = exec != 0.
    let saveexec = |f: fn(u64, u64) -> u64, w: &mut Wave| {
        let s = scalar_src64(w, v0, l);
        let old = w.exec();
        let new = f(s, old);
        w.set_sgpr_pair(d, old);
        w.set_exec(new);
        w.scc = new != 0;
    };
    match op {
        O::SMovB32 => {
            let v = scalar_src(w, v0, l, false);
            w.set_sgpr(d, v)
        }
        O::SSetGprIdxIdx => {
            let m0 = (w.m0() & !GPR_IDX_INDEX) | (scalar_src(w, v0, l, false) & GPR_IDX_INDEX);
            w.set_sgpr(M0, m0)
        }
        O::SMovB64 => {
            let v = scalar_src64(w, v0, l);
            w.set_sgpr_pair(d, v)
        }
        O::SCmovB32 => {
            if w.scc {
                let v = scalar_src(w, v0, l, false);
                w.set_sgpr(d, v)
            }
        }
        O::SCmovB64 => {
            if w.scc {
                let v = scalar_src64(w, v0, l);
                w.set_sgpr_pair(d, v)
            }
        }
        O::SNotB32 => {
            let v = !scalar_src(w, v0, l, false);
            w.set_sgpr(d, v);
            w.scc = v != 0;
        }
        O::SNotB64 => {
            let v = !scalar_src64(w, v0, l);
            w.set_sgpr_pair(d, v);
            w.scc = v != 0;
        }
        O::SBrevB32 => {
            let v = scalar_src(w, v0, l, false).reverse_bits();
            w.set_sgpr(d, v)
        }
        O::SBrevB64 => {
            let v = scalar_src64(w, v0, l).reverse_bits();
            w.set_sgpr_pair(d, v)
        }
        O::SBcnt0I32B32 | O::SBcnt1I32B32 => {
            let s = scalar_src(w, v0, l, false);
            let v = if op == O::SBcnt1I32B32 { s.count_ones() } else { s.count_zeros() };
            w.set_sgpr(d, v);
            w.scc = v != 0;
        }
        O::SBcnt0I32B64 | O::SBcnt1I32B64 => {
            let s = scalar_src64(w, v0, l);
            let v = if op == O::SBcnt1I32B64 { s.count_ones() } else { s.count_zeros() };
            w.set_sgpr(d, v);
            w.scc = v != 0;
        }
        O::SFf1I32B32 | O::SFf0I32B32 => {
            let mut s = scalar_src(w, v0, l, false);
            if op == O::SFf0I32B32 {
                s = !s;
            }
            w.set_sgpr(d, if s == 0 { u32::MAX } else { s.trailing_zeros() })
        }
        O::SFf1I32B64 | O::SFf0I32B64 => {
            let mut s = scalar_src64(w, v0, l);
            if op == O::SFf0I32B64 {
                s = !s;
            }
            w.set_sgpr(d, if s == 0 { u32::MAX } else { s.trailing_zeros() })
        }
        O::SFlbitI32B32 => {
            let s = scalar_src(w, v0, l, false);
            w.set_sgpr(d, if s == 0 { u32::MAX } else { s.leading_zeros() })
        }
        O::SFlbitI32B64 => {
            let s = scalar_src64(w, v0, l);
            w.set_sgpr(d, if s == 0 { u32::MAX } else { s.leading_zeros() })
        }
        O::SFlbitI32 => {
            let s = scalar_src(w, v0, l, false);
            let t = if (s as i32) < 0 { !s } else { s };
            w.set_sgpr(d, if s == 0 || s == u32::MAX { u32::MAX } else { t.leading_zeros() })
        }
        O::SSextI32I8 => {
            let v = scalar_src(w, v0, l, false) as u8 as i8 as i32 as u32;
            w.set_sgpr(d, v)
        }
        O::SSextI32I16 => {
            let v = scalar_src(w, v0, l, false) as u16 as i16 as i32 as u32;
            w.set_sgpr(d, v)
        }
        O::SBitset0B32 => {
            let b = scalar_src(w, v0, l, false) & 31;
            let v = w.sgpr[d] & !(1 << b);
            w.set_sgpr(d, v)
        }
        O::SBitset1B32 => {
            let b = scalar_src(w, v0, l, false) & 31;
            let v = w.sgpr[d] | (1 << b);
            w.set_sgpr(d, v)
        }
        O::SBitset0B64 | O::SBitset1B64 => {
            let bit = 1u64 << (scalar_src(w, v0, l, false) & 63);
            let cur = w.sgpr_pair(d);
            let v = if op == O::SBitset1B64 { cur | bit } else { cur & !bit };
            w.set_sgpr_pair(d, v)
        }
        O::SBitreplicateB64B32 => {
            let s = scalar_src(w, v0, l, false);
            let mut v = 0u64;
            for i in 0..32 {
                v |= u64::from((s >> i) & 1) * (3 << (2 * i));
            }
            w.set_sgpr_pair(d, v)
        }
        O::SFlbitI32I64 => {
            let s = scalar_src64_signed(w, v0, l);
            let t = if (s as i64) < 0 { !s } else { s };
            w.set_sgpr(d, if t == 0 { u32::MAX } else { t.leading_zeros() })
        }
        O::SMovrelsB32 | O::SMovrelsB64 => {
            let wide = op == O::SMovrelsB64;
            match scalar_flow::relative(w, v0, if wide { 2 } else { 1 }) {
                Relative::Slot(s) if wide => w.set_sgpr_pair(d, w.sgpr_pair(s)),
                Relative::Slot(s) => w.set_sgpr(d, w.sgpr[s]),
                // A source past the allocation reads from register number 0.
                Relative::OutOfRange if wide => w.set_sgpr_pair(d, w.sgpr_pair(0)),
                Relative::OutOfRange => w.set_sgpr(d, w.sgpr[0]),
                Relative::Illegal => return Err(unsupported(inst, pc)),
            }
        }
        O::SMovreldB32 | O::SMovreldB64 => {
            let wide = op == O::SMovreldB64;
            match scalar_flow::relative(w, d as u32, if wide { 2 } else { 1 }) {
                Relative::Slot(s) if wide => {
                    let v = scalar_src64(w, v0, l);
                    w.set_sgpr_pair(s, v)
                }
                Relative::Slot(s) => {
                    let v = scalar_src(w, v0, l, false);
                    w.set_sgpr(s, v)
                }
                // A destination past the allocation is not written.
                Relative::OutOfRange => {}
                Relative::Illegal => return Err(unsupported(inst, pc)),
            }
        }
        O::SCbranchJoin => {
            let saved = scalar_src(w, v0, l, false);
            scalar_flow::join(w, saved);
        }
        O::SRfeB64 => w.pc = scalar_src64(w, v0, l),
        O::SAbsI32 => {
            let v = (scalar_src(w, v0, l, false) as i32).wrapping_abs() as u32;
            w.set_sgpr(d, v);
            w.scc = v != 0;
        }
        O::SGetpcB64 => w.set_sgpr_pair(d, w.pc),
        O::SSetpcB64 => w.pc = scalar_src64(w, v0, l),
        O::SSwappcB64 => {
            let target = scalar_src64(w, v0, l);
            w.set_sgpr_pair(d, w.pc);
            w.pc = target;
        }
        O::SAndSaveexecB64 => saveexec(|s, e| s & e, w),
        O::SOrSaveexecB64 => saveexec(|s, e| s | e, w),
        O::SXorSaveexecB64 => saveexec(|s, e| s ^ e, w),
        O::SAndn2SaveexecB64 => saveexec(|s, e| s & !e, w),
        O::SOrn2SaveexecB64 => saveexec(|s, e| s | !e, w),
        O::SNandSaveexecB64 => saveexec(|s, e| !(s & e), w),
        O::SNorSaveexecB64 => saveexec(|s, e| !(s | e), w),
        O::SXnorSaveexecB64 => saveexec(|s, e| !(s ^ e), w),
        O::SAndn1SaveexecB64 => saveexec(|s, e| !s & e, w),
        O::SOrn1SaveexecB64 => saveexec(|s, e| !s | e, w),
        O::SAndn1WrexecB64 | O::SAndn2WrexecB64 => {
            let s = scalar_src64(w, v0, l);
            let new = if op == O::SAndn1WrexecB64 { !s & exec } else { s & !exec };
            w.set_exec(new);
            w.set_sgpr_pair(d, new);
            w.scc = new != 0;
        }
        O::SWqmB32 | O::SQuadmaskB32 => {
            let r = quads(u64::from(scalar_src(w, v0, l, false)), 8, op == O::SWqmB32) as u32;
            w.set_sgpr(d, r);
            w.scc = r != 0;
        }
        O::SWqmB64 | O::SQuadmaskB64 => {
            let r = quads(scalar_src64(w, v0, l), 16, op == O::SWqmB64);
            w.set_sgpr_pair(d, r);
            w.scc = r != 0;
        }
        _ => return Err(unsupported(inst, pc)),
    }
    Ok(())
}

/// The whole-quad mask (`wqm`: every lane of a quad with an active lane) or the quad mask
/// (one bit per quad with an active lane) of the first `n` quads of `s`.
fn quads(s: u64, n: u32, wqm: bool) -> u64 {
    let mut r = 0u64;
    for q in 0..n {
        if (s >> (4 * q)) & 0xf != 0 {
            r |= if wqm { 0xf << (4 * q) } else { 1 << q };
        }
    }
    r
}

/// A SOPC instruction (a scalar compare).
pub(super) fn sopc(w: &mut Wave, inst: &Inst, pc: u64) -> Result<(), ExecFault> {
    use Opcode as O;
    let word = inst.words()[0];
    let l = lit(inst);
    let (v0, v1) = (word & 0xff, (word >> 8) & 0xff);
    let a = scalar_src(w, v0, l, false);
    let b = scalar_src(w, v1, l, false);
    let (ai, bi) = (a as i32, b as i32);
    w.scc = match inst.opcode() {
        O::SCmpEqI32 | O::SCmpEqU32 => a == b,
        O::SCmpLgI32 | O::SCmpLgU32 => a != b,
        O::SCmpGtI32 => ai > bi,
        O::SCmpGeI32 => ai >= bi,
        O::SCmpLtI32 => ai < bi,
        O::SCmpLeI32 => ai <= bi,
        O::SCmpGtU32 => a > b,
        O::SCmpGeU32 => a >= b,
        O::SCmpLtU32 => a < b,
        O::SCmpLeU32 => a <= b,
        O::SCmpEqU64 => scalar_src64(w, v0, l) == scalar_src64(w, v1, l),
        O::SCmpLgU64 => scalar_src64(w, v0, l) != scalar_src64(w, v1, l),
        O::SBitcmp0B32 => (a >> (b & 31)) & 1 == 0,
        O::SBitcmp1B32 => (a >> (b & 31)) & 1 == 1,
        O::SBitcmp0B64 => (scalar_src64(w, v0, l) >> (b & 63)) & 1 == 0,
        O::SBitcmp1B64 => (scalar_src64(w, v0, l) >> (b & 63)) & 1 == 1,
        O::SSetvskip => {
            let on = (a >> (b & 31)) & 1 != 0;
            let bits = if on { w.mode_bits | MODE_VSKIP } else { w.mode_bits & !MODE_VSKIP };
            w.set_mode(bits);
            return Ok(());
        }
        O::SSetGprIdxOn => {
            // The SSRC1 field is the 4-bit index mode itself, not an operand; the ISA
            // defines only its low four bits.
            if v1 > 0xf {
                return Err(unsupported(inst, pc));
            }
            let m0 = (w.m0() & !(GPR_IDX_INDEX | GPR_IDX_MODE)) | (a & GPR_IDX_INDEX) | ((v1 & 0xf) << 12);
            w.set_sgpr(M0, m0);
            w.set_mode(w.mode_bits | MODE_GPR_IDX_EN);
            return Ok(());
        }
        _ => return Err(unsupported(inst, pc)),
    };
    Ok(())
}

/// A SOPP instruction (program control: branches, end, barrier, sleep, messages).
pub(super) fn sopp(w: &mut Wave, inst: &Inst, pc: u64) -> Result<(), ExecFault> {
    use Opcode as O;
    let imm = inst.words()[0] & 0xffff;
    let target = w.pc.wrapping_add(((imm as i16 as i64) * 4) as u64);
    let take = match inst.opcode() {
        O::SEndpgm | O::SEndpgmSaved | O::SEndpgmOrderedPsDone => {
            w.status = WaveStatus::Ended;
            return Ok(());
        }
        O::SBarrier => {
            w.status = WaveStatus::Barrier;
            return Ok(());
        }
        O::SBranch => true,
        O::SCbranchScc0 => !w.scc,
        O::SCbranchScc1 => w.scc,
        O::SCbranchVccz => w.vcc() == 0,
        O::SCbranchVccnz => w.vcc() != 0,
        O::SCbranchExecz => w.exec() == 0,
        O::SCbranchExecnz => w.exec() != 0,
        O::STrap => return Err(ExecFault::Trap { pc, code: imm & 0xff }),
        O::SSleep => {
            w.status = WaveStatus::Sleep { cycles: 64 * (imm & 0x7f) as u64 };
            return Ok(());
        }
        O::SSetkill => {
            if imm & 1 != 0 {
                w.status = WaveStatus::Ended;
            }
            return Ok(());
        }
        O::SSetGprIdxOff => {
            w.set_mode(w.mode_bits & !MODE_GPR_IDX_EN);
            return Ok(());
        }
        O::SSetGprIdxMode => {
            let m0 = (w.m0() & !GPR_IDX_MODE) | ((imm & 0xf) << 12);
            w.set_sgpr(M0, m0);
            return Ok(());
        }
        O::SSethalt if imm & 1 == 0 => false,
        O::SSethalt => return Err(ExecFault::Halted { pc, mnemonic: inst.opcode().mnemonic() }),
        O::SSendmsg | O::SSendmsghalt => {
            // Message id in bits 3:0: 0 is illegal (nothing is sent), 1 interrupts the
            // host, which the wave cannot observe.
            if imm & 0xf > 1 {
                return Err(unsupported(inst, pc));
            }
            if inst.opcode() == O::SSendmsghalt {
                return Err(ExecFault::Halted { pc, mnemonic: inst.opcode().mnemonic() });
            }
            false
        }
        O::SNop | O::SWaitcnt | O::SSetprio | O::SIcacheInv | O::SIncperflevel | O::SDecperflevel | O::STtracedata
        | O::SWakeup | O::SCbranchCdbgsys | O::SCbranchCdbguser | O::SCbranchCdbgsysOrUser | O::SCbranchCdbgsysAndUser => false,
        _ => return Err(unsupported(inst, pc)),
    };
    if take {
        w.pc = target;
    }
    Ok(())
}
