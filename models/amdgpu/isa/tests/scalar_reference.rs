//! Scalar ALU and control instructions against reference implementations written here
//! from the CDNA3/CDNA4 ISA pseudo-code (plain loops over bits, not the executor's
//! helpers): bit operations, bit-field extracts, `s_max`/`s_min` SCC, M0-relative SGPR
//! moves, the fork/join stack, VSKIP, GPR indexing mode, halting, killing, messages and
//! returns from traps.
//! Every case runs real instructions assembled by llvm-mc on all three targets, with
//! random register values (proptest) including the edge values.

mod common;

use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const BASE: u64 = 0x10_0000;

fn program(target: Target, text: &str) -> Program {
    Program::from_words(target, BASE, &common::assemble(target, text))
}

fn run(p: &Program, w: &mut Wave) -> Result<u64, ExecFault> {
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let mut mem = Memory::new();
    let mut lds = vec![0u8; 4096];
    run_single_wave(p, w, &mut mem, &mut lds, 10_000)
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(Config { cases, failure_persistence: None, ..Config::default() }, proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha))
}

/// A u32 that is often an edge value.
fn edgy32() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(1), Just(u32::MAX), Just(0x8000_0000), Just(0x7fff_ffff), Just(0xf0f0_0f0f), any::<u32>(), any::<u32>()]
}

/// A u64 that is often an edge value.
fn edgy64() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(1), Just(u64::MAX), Just(1 << 63), Just((1 << 63) - 1), Just(0xffff_ffff), any::<u64>(), any::<u64>()]
}

fn bit32(v: u32, i: u32) -> bool {
    (v >> i) & 1 == 1
}

fn bit64(v: u64, i: u32) -> bool {
    (v >> i) & 1 == 1
}

/// S_QUADMASK_B32: bit i set iff any bit of nibble i is set.
fn ref_quadmask32(s: u32) -> u32 {
    let mut r = 0;
    for i in 0..8 {
        let mut any = false;
        for j in 0..4 {
            any |= bit32(s, 4 * i + j);
        }
        if any {
            r |= 1 << i;
        }
    }
    r
}

/// S_WQM_B32: bit i set iff any bit of the nibble holding bit i is set.
fn ref_wqm32(s: u32) -> u32 {
    let mut r = 0;
    for i in 0..32 {
        let q = i & !3;
        if (0..4).any(|j| bit32(s, q + j)) {
            r |= 1 << i;
        }
    }
    r
}

/// S_BITREPLICATE_B64_B32: D[2i] = D[2i+1] = S[i].
fn ref_bitreplicate(s: u32) -> u64 {
    let mut r = 0u64;
    for i in 0..32 {
        if bit32(s, i) {
            r |= 1 << (2 * i);
            r |= 1 << (2 * i + 1);
        }
    }
    r
}

/// S_FLBIT_I32_I64: the first i in 1..63 (from the MSB) whose bit differs from the sign
/// bit, or -1.
fn ref_flbit_i64(s: u64) -> u32 {
    for i in 1..64 {
        if bit64(s, 63 - i) != bit64(s, 63) {
            return i;
        }
    }
    u32::MAX
}

/// S_FLBIT_I32: the same on 32 bits.
fn ref_flbit_i32(s: u32) -> u32 {
    for i in 1..32 {
        if bit32(s, 31 - i) != bit32(s, 31) {
            return i;
        }
    }
    u32::MAX
}

const BIT_OPS: &str = "s_bitset0_b64 s[10:11], s20
s_bitset1_b64 s[12:13], s21
s_bitreplicate_b64_b32 s[14:15], s22
s_quadmask_b32 s16, s22
s_cselect_b32 s17, 1, 0
s_wqm_b32 s18, s22
s_cselect_b32 s19, 1, 0
s_flbit_i32_i64 s24, s[26:27]
s_flbit_i32 s25, s22
s_max_i32 s30, s22, s23
s_cselect_b32 s31, 1, 0
s_max_u32 s32, s22, s23
s_cselect_b32 s33, 1, 0
s_min_i32 s34, s22, s23
s_cselect_b32 s35, 1, 0
s_min_u32 s36, s22, s23
s_cselect_b32 s37, 1, 0";

/// The SOP1 bit operations and the SCC of `s_max`/`s_min` (SCC = the first operand was
/// selected: `S0 >= S1` for max, `S0 < S1` for min).
#[test]
fn bit_operations_and_min_max_match_the_reference() {
    for target in Target::ALL {
        let p = program(target, BIT_OPS);
        let inputs = (edgy64(), edgy64(), any::<u32>(), any::<u32>(), edgy32(), edgy32(), any::<bool>(), edgy64());
        runner(400)
            .run(&inputs, |(d0, d1, i0, i1, a, b, equal, wide)| {
                let b = if equal { a } else { b };
                let mut w = Wave::new(BASE, 0);
                w.set_sgpr_pair(10, d0);
                w.set_sgpr_pair(12, d1);
                w.sgpr[20] = i0;
                w.sgpr[21] = i1;
                w.sgpr[22] = a;
                w.sgpr[23] = b;
                w.set_sgpr_pair(26, wide);
                run(&p, &mut w).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(w.sgpr_pair(10), d0 & !(1u64 << (i0 % 64)), "{}: s_bitset0_b64", target);
                prop_assert_eq!(w.sgpr_pair(12), d1 | (1u64 << (i1 % 64)), "{}: s_bitset1_b64", target);
                prop_assert_eq!(w.sgpr_pair(14), ref_bitreplicate(a), "{}: s_bitreplicate_b64_b32", target);
                prop_assert_eq!(w.sgpr[16], ref_quadmask32(a), "{}: s_quadmask_b32", target);
                prop_assert_eq!(w.sgpr[17], (ref_quadmask32(a) != 0) as u32, "{}: s_quadmask_b32 SCC", target);
                prop_assert_eq!(w.sgpr[18], ref_wqm32(a), "{}: s_wqm_b32", target);
                prop_assert_eq!(w.sgpr[19], (ref_wqm32(a) != 0) as u32, "{}: s_wqm_b32 SCC", target);
                prop_assert_eq!(w.sgpr[24], ref_flbit_i64(wide), "{}: s_flbit_i32_i64 {:#x}", target, wide);
                prop_assert_eq!(w.sgpr[25], ref_flbit_i32(a), "{}: s_flbit_i32 {:#x}", target, a);
                let (ai, bi) = (a as i32, b as i32);
                prop_assert_eq!(w.sgpr[30], if ai >= bi { a } else { b }, "{}: s_max_i32", target);
                prop_assert_eq!(w.sgpr[31], (ai >= bi) as u32, "{}: s_max_i32 SCC", target);
                prop_assert_eq!(w.sgpr[32], if a >= b { a } else { b }, "{}: s_max_u32", target);
                prop_assert_eq!(w.sgpr[33], (a >= b) as u32, "{}: s_max_u32 SCC", target);
                prop_assert_eq!(w.sgpr[34], if ai < bi { a } else { b }, "{}: s_min_i32", target);
                prop_assert_eq!(w.sgpr[35], (ai < bi) as u32, "{}: s_min_i32 SCC", target);
                prop_assert_eq!(w.sgpr[36], if a < b { a } else { b }, "{}: s_min_u32", target);
                prop_assert_eq!(w.sgpr[37], (a < b) as u32, "{}: s_min_u32 SCC", target);
                Ok(())
            })
            .unwrap();
    }
}

/// S_BFE_{U,I}{32,64} from the pseudo-code, bit by bit: `tmp = (S0 >> S1[4:0] (5:0 for
/// 64 bits)) & ((1 << S1[22:16]) - 1)`, the shift arithmetic for the signed forms (it
/// shifts `S0.i32`/`S0.i64`), then the signed forms sign-extend `tmp` from bit
/// `width - 1`.
fn ref_bfe(a: u64, s1: u32, bits: u32, signed: bool) -> u64 {
    let off = s1 & (bits - 1);
    let width = (s1 >> 16) & 0x7f;
    let sign = bit64(a, bits - 1);
    let mut tmp = 0u64;
    for i in 0..bits.min(width) {
        let src = i + off;
        let b = if src < bits { bit64(a, src) } else { signed && sign };
        if b {
            tmp |= 1 << i;
        }
    }
    if signed && width > 0 && width < bits && bit64(tmp, width - 1) {
        for i in width..bits {
            tmp |= 1 << i;
        }
    }
    tmp
}

/// The bit-field extracts against [`ref_bfe`], with offsets and widths past the top bit,
/// offset bits the 32-bit forms ignore and junk in the unused bits of S1; SCC is
/// `result != 0`.
#[test]
fn bit_field_extracts_match_the_reference() {
    let text = "s_bfe_u32 s30, s20, s21
s_cselect_b32 s31, 1, 0
s_bfe_i32 s32, s20, s21
s_cselect_b32 s33, 1, 0
s_bfe_u64 s[34:35], s[22:23], s21
s_cselect_b32 s36, 1, 0
s_bfe_i64 s[38:39], s[22:23], s21
s_cselect_b32 s40, 1, 0";
    for target in Target::ALL {
        let p = program(target, text);
        let inputs = (edgy32(), edgy64(), 0u32..64, 0u32..128, any::<u32>());
        runner(1000)
            .run(&inputs, |(a, wide, off, width, junk)| {
                let s1 = off | width << 16 | (junk & 0xff80_ff80);
                let mut w = Wave::new(BASE, 0);
                w.sgpr[20] = a;
                w.sgpr[21] = s1;
                w.set_sgpr_pair(22, wide);
                run(&p, &mut w).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let cases = [
                    (u64::from(w.sgpr[30]), w.sgpr[31], ref_bfe(u64::from(a), s1, 32, false), "s_bfe_u32"),
                    (u64::from(w.sgpr[32]), w.sgpr[33], ref_bfe(u64::from(a), s1, 32, true), "s_bfe_i32"),
                    (w.sgpr_pair(34), w.sgpr[36], ref_bfe(wide, s1, 64, false), "s_bfe_u64"),
                    (w.sgpr_pair(38), w.sgpr[40], ref_bfe(wide, s1, 64, true), "s_bfe_i64"),
                ];
                for (got, scc, want, name) in cases {
                    prop_assert_eq!(got, want, "{} {}: S0 {:#x}/{:#x} S1 {:#x}", target, name, a, wide, s1);
                    prop_assert_eq!(scc, (want != 0) as u32, "{} {} SCC", target, name);
                }
                Ok(())
            })
            .unwrap();
    }
}

/// Where physical SGPR `p` of an allocation of `n` SGPRs lies in the operand space (ISA
/// Table 2 and section 3.6.2: FLAT_SCRATCH, XNACK_MASK and VCC are the top six registers
/// of the allocation): `Ok(Some(slot))`, `Ok(None)` past the allocation, `Err(())` for the
/// allocated registers between s101 and the top six, which the operand space cannot name.
fn ref_physical(n: u64, p: u64) -> Result<Option<usize>, ()> {
    if p >= n {
        return Ok(None);
    }
    let top = n - 6;
    if p >= top {
        let names = [102, 103, 104, 105, 106, 107];
        return Ok(Some(names[(p - top) as usize]));
    }
    if p > 101 {
        return Err(());
    }
    Ok(Some(p as usize))
}

/// `s_movrels`/`s_movreld` move through SGPR `operand + M0` of the wave's allocation: a
/// source past it reads register 0, a destination past it is not written, the top six
/// allocated registers are FLAT_SCRATCH, XNACK_MASK and VCC (for a wave without the
/// trap handler's 16 SGPRs, whose place is not documented).
#[test]
fn relative_sgpr_moves_follow_the_allocation() {
    let forms = ["s_movrels_b32 s40, s10", "s_movrels_b64 s[40:41], s[10:11]", "s_movreld_b32 s10, s44", "s_movreld_b64 s[10:11], s[44:45]"];
    for target in Target::ALL {
        let programs: Vec<Program> = forms.iter().map(|f| program(target, f)).collect();
        let inputs = (0usize..4, 0u32..140, prop_oneof![Just(None), (1u16..=7).prop_map(|g| Some(g * 16))], prop::collection::vec(any::<u32>(), 128));
        runner(600)
            .run(&inputs, |(form, m0, sgprs, regs)| {
                let mut w = Wave::new(BASE, 0);
                w.sgpr.copy_from_slice(&regs);
                w.sgpr[125] = 0;
                w.sgpr[124] = m0;
                w.place.sgprs = sgprs;
                let before = w.sgpr;
                let result = run(&programs[form], &mut w);
                let n = u64::from(sgprs.unwrap_or(108));
                let wide = form % 2 == 1;
                let width = if wide { 2 } else { 1 };
                let (operand, index) = (10u64, 10 + u64::from(m0));
                // Each register of the access on its own.
                let regs: Vec<Result<Option<usize>, ()>> = (0..width).map(|k| ref_physical(n, index + k)).collect();
                let past = regs.iter().any(|r| matches!(r, Ok(None)));
                let odd = wide && m0 % 2 == 1;
                let lowest = operand + u64::from(m0 & !1);
                // A dispatched wave (known allocation) also holds 16 trap-handler SGPRs at an
                // undocumented place: the top six of the allocation and the 16 above it are
                // refused, and only registers past both count as out of range.
                let trap = if sgprs.is_some() { 16 } else { 0 };
                let all_past = (0..width).all(|k| index + k >= n + trap);
                let uncertain = trap > 0 && !all_past && (0..width).any(|k| index + k + 6 >= n);
                let expect_unsupported = if odd {
                    lowest < n + trap
                } else {
                    !all_past && (uncertain || (!past && regs.iter().any(|r| r.is_err())))
                };
                if expect_unsupported {
                    prop_assert!(matches!(result, Err(ExecFault::Unsupported { .. })), "{} {}: m0 {} n {}: {:?}", target, forms[form], m0, n, result);
                    return Ok(());
                }
                result.map_err(|e| TestCaseError::fail(format!("{target} {}: m0 {m0} n {n}: {e}", forms[form])))?;
                let mut expected = before;
                match form {
                    0 | 1 => {
                        for k in 0..width as usize {
                            let from = if past { k } else { regs[k].unwrap().unwrap() };
                            expected[40 + k] = before[from];
                        }
                    }
                    _ => {
                        if !past {
                            for k in 0..width as usize {
                                expected[regs[k].unwrap().unwrap()] = before[44 + k];
                            }
                        }
                    }
                }
                prop_assert_eq!(&w.sgpr[..], &expected[..], "{} {}: m0 {} n {}", target, forms[form], m0, n);
                Ok(())
            })
            .unwrap();
    }
}

/// `s_cbranch_i_fork` (`I`) or `s_cbranch_g_fork` (`G`) splitting EXEC by the mask in
/// s[60:61], a fail block writing v1 = 11 and counting its runs in s68, a pass block
/// writing v1 = 22 and counting in s69, both meeting at `s_cbranch_join s64` (the CSP
/// saved before the fork); EXEC is restored afterwards. Branch offsets are in words.
fn fork_program(g: bool) -> String {
    let head = "s_setreg_b32 hwreg(HW_REG_MODE, 29, 3), s70\ns_getreg_b32 s64, hwreg(HW_REG_MODE, 29, 3)\ns_mov_b64 s[66:67], exec\n";
    let fork = if g {
        // s[62:63] = address of the add + 24 = the pass block.
        "s_getpc_b64 s[62:63]\ns_add_u32 s62, s62, 24\ns_addc_u32 s63, s63, 0\ns_cbranch_g_fork s[60:61], s[62:63]\n"
    } else {
        "s_cbranch_i_fork s[60:61], 3\n"
    };
    let tail = "v_mov_b32 v1, 11\ns_add_u32 s68, s68, 1\ns_branch 2\nv_mov_b32 v1, 22\ns_add_u32 s69, s69, 1\ns_cbranch_join s64\ns_mov_b64 exec, s[66:67]\ns_getreg_b32 s65, hwreg(HW_REG_MODE, 29, 3)";
    format!("{head}{fork}{tail}")
}

/// The fork/join stack: the side with fewer lanes runs first, the other is pushed as
/// `{PC, EXEC}` at `SGPR[CSP*4]` (EXEC low), CSP counts the entries, and the join runs
/// the pushed side before it lets the program continue.
#[test]
fn fork_and_join_run_both_sides_with_the_right_lanes() {
    for target in Target::ALL {
        for g in [false, true] {
            let text = fork_program(g);
            let p = program(target, &text);
            assert_eq!(p.len(), text.lines().count() + 1, "{target}: every instruction is one word");
            let inputs = (edgy64(), edgy64(), 0u32..7);
            runner(300)
                .run(&inputs, |(exec, mask, csp)| {
                    let mut w = Wave::new(BASE, 0);
                    w.set_exec(exec);
                    w.set_sgpr_pair(60, mask);
                    w.sgpr[70] = csp;
                    run(&p, &mut w).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let (pass, fail) = (exec & mask, exec & !mask);
                    for lane in 0..64 {
                        let want = if (pass >> lane) & 1 == 1 {
                            22
                        } else if (fail >> lane) & 1 == 1 {
                            11
                        } else {
                            0
                        };
                        prop_assert_eq!(w.vgpr[1][lane], want, "{} lane {}: exec {:#x} mask {:#x}", target, lane, exec, mask);
                    }
                    let split = pass != exec && fail != exec;
                    let pass_runs = pass == exec || split;
                    prop_assert_eq!(w.sgpr[69], pass_runs as u32, "{}: pass block runs", target);
                    prop_assert_eq!(w.sgpr[68], (fail != 0 && (fail == exec || split)) as u32, "{}: fail block runs", target);
                    prop_assert_eq!(w.sgpr[64], csp);
                    prop_assert_eq!(w.sgpr[65], csp, "{}: CSP is back after the join", target);
                    prop_assert_eq!(w.exec(), exec);
                    if split {
                        // The side that ran second was pushed: the larger one (pass on a tie).
                        let pushed = if fail.count_ones() < pass.count_ones() { pass } else { fail };
                        prop_assert_eq!(w.sgpr_pair(csp as usize * 4), pushed, "{}: pushed EXEC", target);
                    }
                    Ok(())
                })
                .unwrap();
        }
    }
}

/// `s_setvskip S0, S1` sets VSKIP to bit `S1[4:0]` of S0; while set, VALU and memory
/// instructions do nothing, and MODE bit 28 shows the state. `s_setreg` of that bit
/// does the same.
#[test]
fn vskip_skips_vector_instructions() {
    let text = "s_setvskip s20, s21
v_mov_b32 v1, 7
v_add_u32 v2, v2, v2
ds_write_b32 v3, v4
s_getreg_b32 s30, hwreg(HW_REG_MODE, 28, 1)
s_setvskip 0, 0
v_mov_b32 v5, 9
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 28, 1), 1
v_mov_b32 v6, 3
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 28, 1), 0
v_mov_b32 v7, 4";
    for target in Target::ALL {
        let p = program(target, text);
        runner(64)
            .run(&(any::<u32>(), any::<u32>()), |(a, b)| {
                let on = (a >> (b & 31)) & 1 == 1;
                let mut w = Wave::new(BASE, 0);
                w.sgpr[20] = a;
                w.sgpr[21] = b;
                w.vgpr[2] = [5; 64];
                w.vgpr[3] = [0; 64];
                w.vgpr[4] = [0x1234; 64];
                w.sgpr[124] = u32::MAX;
                let mut mem = Memory::new();
                let mut lds = vec![0u8; 4096];
                w.pc = BASE;
                run_single_wave(&p, &mut w, &mut mem, &mut lds, 1000).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(w.vgpr[1][0], if on { 0 } else { 7 });
                prop_assert_eq!(w.vgpr[2][63], if on { 5 } else { 10 });
                prop_assert_eq!(lds[0], if on { 0 } else { 0x34 });
                prop_assert_eq!(w.sgpr[30], on as u32);
                prop_assert_eq!(w.vgpr[5][0], 9);
                prop_assert_eq!(w.vgpr[6][0], 0, "MODE.VSKIP set by s_setreg skips too");
                prop_assert_eq!(w.vgpr[7][0], 4);
                Ok(())
            })
            .unwrap();
    }
}

/// Halting stops the dispatch (nothing resumes a halted wave), killing ends the wave,
/// `MSG_INTERRUPT` has no effect on the wave and messages that would change its state
/// are refused; `s_rfe_b64` jumps, `s_rfe_restore_b64` refuses the gfx8 INST_ATC bit.
#[test]
fn halt_kill_messages_and_returns_from_traps() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0);
        let halted = run(&program(target, "s_mov_b32 s0, 1\ns_sethalt 1\ns_mov_b32 s0, 2"), &mut w);
        assert!(matches!(halted, Err(ExecFault::Halted { pc, .. }) if pc == BASE + 4), "{target}: {halted:?}");
        assert_eq!(w.sgpr[0], 1);
        let mut w = Wave::new(BASE, 0);
        run(&program(target, "s_sethalt 0\ns_setkill 0\ns_sendmsg sendmsg(MSG_INTERRUPT)\ns_mov_b32 s0, 3\ns_setkill 1\ns_mov_b32 s0, 4"), &mut w).unwrap();
        assert_eq!(w.sgpr[0], 3, "{target}: the killed wave runs nothing more");
        assert!(w.ended());
        let mut w = Wave::new(BASE, 0);
        assert!(matches!(run(&program(target, "s_sendmsghalt sendmsg(MSG_INTERRUPT)"), &mut w), Err(ExecFault::Halted { .. })));
        let mut w = Wave::new(BASE, 0);
        let doorbell = run(&program(target, "s_sendmsg sendmsg(MSG_GET_DOORBELL)"), &mut w);
        assert!(matches!(doorbell, Err(ExecFault::Unsupported { .. })), "{target}: the doorbell id would land in EXEC");
        // s_rfe_b64 to the s_mov after the skipped one (BASE + 8).
        let mut w = Wave::new(BASE, 0);
        w.set_sgpr_pair(2, BASE + 8);
        run(&program(target, "s_rfe_b64 s[2:3]\ns_mov_b32 s0, 5\ns_mov_b32 s1, 6"), &mut w).unwrap();
        assert_eq!((w.sgpr[0], w.sgpr[1]), (0, 6), "{target}");
        let mut w = Wave::new(BASE, 0);
        w.set_sgpr_pair(2, BASE + 8);
        run(&program(target, "s_rfe_restore_b64 s[2:3], s4\ns_mov_b32 s0, 5\ns_mov_b32 s1, 6"), &mut w).unwrap();
        assert_eq!((w.sgpr[0], w.sgpr[1]), (0, 6), "{target}");
        let mut w = Wave::new(BASE, 0);
        w.sgpr[4] = 1;
        assert!(matches!(run(&program(target, "s_rfe_restore_b64 s[2:3], s4"), &mut w), Err(ExecFault::Unsupported { .. })));
    }
}

/// M0 after replacing its bits `lo..lo + n` with the low `n` bits of `value`, bit by bit.
fn ref_m0_field(m0: u32, lo: u32, n: u32, value: u32) -> u32 {
    let mut r = m0;
    for i in 0..n {
        r &= !(1 << (lo + i));
        if bit32(value, i) {
            r |= 1 << (lo + i);
        }
    }
    r
}

/// GPR indexing mode: `s_set_gpr_idx_on S0, imask` puts `S0[7:0]` in M0[7:0], the mask in
/// M0[15:12] and sets MODE.GPR_IDX_EN (bit 27); `s_set_gpr_idx_idx` and
/// `s_set_gpr_idx_mode` replace one of the two M0 fields; `s_set_gpr_idx_off` clears the
/// enable. Scalar instructions run normally in the mode; a vector one is refused.
#[test]
fn gpr_index_mode_sets_m0_and_mode() {
    for target in Target::ALL {
        for (on_mask, mode_mask) in [(0u32, 15u32), (9, 3), (15, 0), (5, 10)] {
            let text = format!(
                "s_set_gpr_idx_on s20, {on_mask}
s_mov_b32 s30, m0
s_getreg_b32 s31, hwreg(HW_REG_MODE, 27, 1)
s_set_gpr_idx_idx s21
s_mov_b32 s32, m0
s_set_gpr_idx_mode {mode_mask}
s_mov_b32 s33, m0
s_set_gpr_idx_off
s_getreg_b32 s34, hwreg(HW_REG_MODE, 27, 1)
v_mov_b32 v1, 7"
            );
            let p = program(target, &text);
            runner(64)
                .run(&(edgy32(), edgy32(), edgy32()), |(m0, s20, s21)| {
                    let mut w = Wave::new(BASE, 0);
                    w.sgpr[124] = m0;
                    w.sgpr[20] = s20;
                    w.sgpr[21] = s21;
                    run(&p, &mut w).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let after_on = ref_m0_field(ref_m0_field(m0, 0, 8, s20), 12, 4, on_mask);
                    prop_assert_eq!(w.sgpr[30], after_on, "{}: s_set_gpr_idx_on", target);
                    prop_assert_eq!(w.sgpr[31], 1, "{}: GPR_IDX_EN on", target);
                    let after_idx = ref_m0_field(after_on, 0, 8, s21);
                    prop_assert_eq!(w.sgpr[32], after_idx, "{}: s_set_gpr_idx_idx", target);
                    prop_assert_eq!(w.sgpr[33], ref_m0_field(after_idx, 12, 4, mode_mask), "{}: s_set_gpr_idx_mode", target);
                    prop_assert_eq!(w.sgpr[34], 0, "{}: GPR_IDX_EN off", target);
                    prop_assert_eq!(w.vgpr[1][0], 7, "{}: vector instructions run again", target);
                    Ok(())
                })
                .unwrap();
        }
        // The VALU applies the index to the operands the mask names (SRC0: v2 + 3 = v5).
        let mut w = Wave::new(BASE, 0);
        w.sgpr[0] = 3;
        w.vgpr[5][0] = 42;
        w.vgpr[2][0] = 9;
        run(&program(target, "s_set_gpr_idx_on s0, gpr_idx(SRC0)\nv_mov_b32 v1, v2"), &mut w).expect("an indexed VALU move");
        assert_eq!(w.vgpr[1][0], 42, "{target}: v_mov_b32 v1, v2 with SRC0 indexed by 3 reads v5");
        let mut w = Wave::new(BASE, 0);
        // Vector memory operands in GPR indexing mode are not modelled: refused.
        let refused = run(&program(target, "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 27, 1), 1\nglobal_load_dword v1, v[2:3], off"), &mut w);
        assert!(matches!(refused, Err(ExecFault::Unsupported { .. })), "{target}: {refused:?}");
    }
}
