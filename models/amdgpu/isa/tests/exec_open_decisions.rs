//! The executor's answers where the ISA guides are silent but LLVM accepts the word
//! (ARCHITECTURE.md, "the line between `Illegal` and a semantics"): each case is
//! assembled by llvm-mc, run on one wave, and compared with values worked out by hand from
//! the rule written in the decision, and words LLVM refuses are `ExecFault::Illegal`.

mod common;

use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;

const BASE: u64 = 0x10_0000;
/// Round to nearest even, denormals kept, IEEE, DX10 clamp.
const MODE: u32 = 0x3f0;
type Lanes = [u32; 64];

fn run_words(target: Target, words: &[u32], regs: &[(usize, Lanes)], exec: u64) -> Result<Wave, ExecFault> {
    run_in_mode(target, words, regs, exec, MODE)
}

fn run_in_mode(target: Target, words: &[u32], regs: &[(usize, Lanes)], exec: u64, mode: u32) -> Result<Wave, ExecFault> {
    let program = Program::from_words(target, BASE, words);
    let mut w = Wave::new(BASE, mode);
    for (r, lanes) in regs {
        w.vgpr[*r] = *lanes;
    }
    w.set_exec(exec);
    w.status = WaveStatus::Running;
    run_single_wave(&program, &mut w, &mut Memory::new(), &mut [], 100)?;
    Ok(w)
}

fn run(target: Target, text: &str, regs: &[(usize, Lanes)], exec: u64) -> Wave {
    run_words(target, &common::assemble(target, text), regs, exec).unwrap_or_else(|e| panic!("{target}: {text}: {e}"))
}

fn same(v: u32) -> Lanes {
    [v; 64]
}

#[test]
fn clamp_saturates_sad_sums() {
    for target in Target::ALL {
        let regs = [(1, same(0)), (2, same(u32::MAX)), (3, same(5))];
        let w = run(target, "v_sad_u32 v4, v1, v2, v3\n v_sad_u32 v5, v1, v2, v3 clamp", &regs, u64::MAX);
        assert_eq!(w.vgpr[4][0], 4, "{target}: wraps without clamp");
        assert_eq!(w.vgpr[5][0], u32::MAX, "{target}: saturates with clamp");
        // Bytes 0x00 vs 0xff four times: 1020, plus 0xffff_fff0.
        let regs = [(1, same(0)), (2, same(u32::MAX)), (3, same(0xffff_fff0))];
        let w = run(target, "v_sad_u8 v4, v1, v2, v3\n v_sad_u8 v5, v1, v2, v3 clamp\n v_msad_u8 v6, v1, v2, v3 clamp", &regs, u64::MAX);
        assert_eq!(w.vgpr[4][0], 1020u32.wrapping_add(0xffff_fff0), "{target}");
        assert_eq!(w.vgpr[5][0], u32::MAX, "{target}");
        assert_eq!(w.vgpr[6][0], u32::MAX, "{target}");
        // qsad: each 16-bit field saturates at 0xffff; the window of zero bytes against
        // 0xff bytes sums to 1020 in every field, the accumulators are 0xff00 and 3.
        let regs = [(30, same(0)), (31, same(0)), (3, same(u32::MAX)), (20, same(0x0003_ff00)), (21, same(0x0003_ff00))];
        let w = run(target, "v_qsad_pk_u16_u8 v[18:19], v[30:31], v3, v[20:21] clamp", &regs, u64::MAX);
        let field = |x: u32| [x & 0xffff, x >> 16];
        assert_eq!(field(w.vgpr[18][0]), [0xffff, 1023], "{target}");
        assert_eq!(field(w.vgpr[19][0]), [0xffff, 1023], "{target}");
    }
}

#[test]
fn dot_products_apply_the_vop3p_half_selection() {
    // op_sel:[1,0,0] op_sel_hi:[0,1,0]: src0's halves swap, src1 reads as it is.
    let target = Target::Gfx90a;
    let (a, b, c) = (0x0003_fffe_u32, 0x0007_0005_u32, 100u32);
    let regs = [(1, same(a)), (2, same(b)), (3, same(c))];
    let w = run(target, "v_dot2_i32_i16 v4, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[0,1,0]\n v_dot2_i32_i16 v5, v1, v2, v3", &regs, u64::MAX);
    // Swapped: 3 * 5 + (-2) * 7 + 100; as read: (-2) * 5 + 3 * 7 + 100.
    assert_eq!(w.vgpr[4][0] as i32, 3 * 5 - 2 * 7 + 100);
    assert_eq!(w.vgpr[5][0] as i32, -2 * 5 + 3 * 7 + 100);
    // op_sel_hi:[0,0,0]: both elements of each source are its low half.
    let w = run(target, "v_dot2_i32_i16 v4, v1, v2, v3 op_sel_hi:[0,0,0]", &regs, u64::MAX);
    assert_eq!(w.vgpr[4][0] as i32, 2 * (-2 * 5) + 100);
}

#[test]
fn permlane_swaps_under_a_partial_exec_follow_dpp() {
    let target = Target::Gfx950;
    let d: Lanes = std::array::from_fn(|l| 1000 + l as u32);
    let s: Lanes = std::array::from_fn(|l| 2000 + l as u32);
    let regs = [(1, d), (2, s)];
    // Lanes 0..8, 20, 24 and 32..48 on: most enabled lanes have a disabled partner, lane
    // 20's partner (4) is on.
    let exec = 0x0000_ffff_0110_00ff;
    for (suffix, fi, bound_ctrl) in [("", false, false), (" fi:1", true, false), (" bound_ctrl:1", false, true)] {
        let text = format!("v_permlane16_swap_b32_e64 v1, v2{suffix}");
        let w = run(target, &text, &regs, exec);
        for lane in 0..64 {
            let partner = lane ^ 16;
            let on = |l: usize| (exec >> l) & 1 != 0;
            let moved = |value: u32, keep: u32| {
                if on(partner) || fi {
                    value
                } else if bound_ctrl {
                    0
                } else {
                    keep
                }
            };
            // Odd rows of v1 take v2's even rows; even rows of v2 take v1's odd rows.
            let (want_d, want_s) = match (on(lane), lane & 16 != 0) {
                (false, _) => (d[lane], s[lane]),
                (true, true) => (moved(s[partner], d[lane]), s[lane]),
                (true, false) => (d[lane], moved(d[partner], s[lane])),
            };
            assert_eq!((w.vgpr[1][lane], w.vgpr[2][lane]), (want_d, want_s), "{text}: lane {lane}");
        }
    }
    // permlane32 with lanes 0..16 and 48..64 on: lane 48 takes v2's lane 16 (off) only
    // under fi.
    let exec = 0xffff_0000_0000_ffff;
    let w = run(target, "v_permlane32_swap_b32_e64 v1, v2 fi:1", &regs, exec);
    assert_eq!(w.vgpr[1][48], s[16]);
    assert_eq!(w.vgpr[2][0], d[32]);
    let w = run(target, "v_permlane32_swap_b32 v1, v2", &regs, exec);
    assert_eq!(w.vgpr[1][48], d[48], "disabled partner, no fi/bound_ctrl: the lane keeps its value");
    assert_eq!(w.vgpr[2][16], s[16], "a disabled lane is not written");
}

#[test]
fn words_llvm_refuses_are_illegal() {
    let target = Target::Gfx950;
    // v_swap_b32 v0, s0 (SRC0 an SGPR) and v_permlane16_swap_b32_e64 with op_sel bits 2
    // and 3 (beyond fi and bound_ctrl).
    for words in [&[0x7e00_a200u32, 0xbf81_0000][..], &[0xd199_7801, 0x0000_0102, 0xbf81_0000]] {
        let got = run_words(target, words, &[], u64::MAX);
        assert!(matches!(got, Err(ExecFault::Illegal { .. })), "{words:08x?}: {:?}", got.err());
    }
}

#[test]
fn packed_fmac_modifiers_act_on_both_halves() {
    let target = Target::Gfx950;
    // a = (1.5, -2.0), b = (-3.0, 0.5), c = (0.25, 4.0) as f16 pairs (low, high).
    let (a, b, c) = (0xc000_3e00_u32, 0x3800_c200_u32, 0x4400_3400_u32);
    let regs = [(1, same(a)), (2, same(b)), (3, same(c))];
    let w = run(target, "v_mov_b32 v7, v3\n v_pk_fmac_f16_e64 v7, -v1, |v2|", &regs, u64::MAX);
    // low: -1.5 * 3.0 + 0.25 = -4.25 (0xc440); high: 2.0 * 0.5 + 4.0 = 5.0 (0x4500).
    assert_eq!(w.vgpr[7][0], 0x4500_c440);
    // omod acts outside IEEE mode (MODE.IEEE clear), as for every VALU result.
    let words = common::assemble(target, "v_mov_b32 v7, v3\n v_pk_fmac_f16_e64 v7, v1, v2 mul:2");
    let w = run_in_mode(target, &words, &regs, u64::MAX, MODE & !(1 << 9)).unwrap();
    // low: 1.5 * -3.0 + 0.25 = -4.25, times 2 = -8.5 (0xc840); high: -2.0 * 0.5 + 4.0 = 3.0,
    // times 2 = 6.0 (0x4600).
    assert_eq!(w.vgpr[7][0], 0x4600_c840);
}
