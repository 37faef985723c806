//! One test per vector-ALU defect that gave a silently wrong result (or refused a form
//! LLVM accepts), each named after what it checks; every one fails on the code before its
//! fix.

mod common;

use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;

const BASE: u64 = 0x10_0000;

fn run_words(target: Target, words: &[u32], w: &mut Wave) -> Result<u64, ExecFault> {
    let program = Program::from_words(target, BASE, words);
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let mut mem = Memory::new();
    run_single_wave(&program, w, &mut mem, &mut [], 100_000)
}

fn run_ok(target: Target, text: &str, w: &mut Wave) {
    run_words(target, &common::assemble(target, text), w).unwrap_or_else(|e| panic!("{target}: {text}: {e}"));
}

fn pair(w: &Wave, r: usize, lane: usize) -> u64 {
    w.vgpr[r][lane] as u64 | ((w.vgpr[r + 1][lane] as u64) << 32)
}

/// DPP on a 64-bit operand moved each lane's own value (row_newbcast was taken for an
/// out-of-range control): `row_newbcast:n` broadcasts lane n of each row, both dwords.
#[test]
fn dpp_row_newbcast_moves_whole_64_bit_values() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        for lane in 0..64 {
            let v = 1.5f64 + lane as f64;
            w.vgpr[2][lane] = v.to_bits() as u32;
            w.vgpr[3][lane] = (v.to_bits() >> 32) as u32;
            w.vgpr[10][lane] = lane as u32;
        }
        let mut text = String::from("v_ceil_f64_dpp v[4:5], v[2:3] row_newbcast:5 row_mask:0xf bank_mask:0xf\n\
                                     v_mov_b32_dpp v11, v10 row_newbcast:2 row_mask:0xf bank_mask:0xf");
        if target != Target::Gfx90a {
            text += "\n v_mov_b64_dpp v[6:7], v[2:3] row_newbcast:15 row_mask:0xf bank_mask:0xf";
        }
        run_ok(target, &text, &mut w);
        for lane in 0..64 {
            let row = lane / 16 * 16;
            assert_eq!(f64::from_bits(pair(&w, 4, lane)), (1.5 + (row + 5) as f64).ceil(), "{target} v_ceil_f64_dpp lane {lane}");
            assert_eq!(w.vgpr[11][lane], (row + 2) as u32, "{target} v_mov_b32_dpp row_newbcast lane {lane}");
            if target != Target::Gfx90a {
                assert_eq!(f64::from_bits(pair(&w, 6, lane)), 1.5 + (row + 15) as f64, "{target} v_mov_b64_dpp lane {lane}");
            }
        }
    }
}

/// A 64-bit DPP form with a control other than row_newbcast (the ISA: "for 64-bit input
/// data the only legal DPP type is DPP_ROW"; LLVM rejects it) and a reserved DPP control
/// ran as if valid; both are illegal instructions now.
#[test]
fn illegal_dpp_controls_are_refused() {
    for target in [Target::Gfx942, Target::Gfx950] {
        let mut words = common::assemble(target, "v_mov_b64_dpp v[6:7], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf");
        words[1] = (words[1] & !(0x1ff << 8)) | (0xe4 << 8); // quad_perm:[0,1,2,3]
        let err = run_words(target, &words, &mut Wave::new(BASE, 0x3f0)).expect_err("quad_perm on a 64-bit operand");
        assert!(matches!(err, ExecFault::Illegal { .. }), "{target}: {err}");
    }
    for target in Target::ALL {
        let mut words = common::assemble(target, "v_mov_b32_dpp v1, v2 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf");
        words[1] = (words[1] & !(0x1ff << 8)) | (0x131 << 8); // reserved
        let err = run_words(target, &words, &mut Wave::new(BASE, 0x3f0)).expect_err("a reserved DPP control");
        assert!(matches!(err, ExecFault::Illegal { .. }), "{target}: {err}");
    }
}

/// `s_set_gpr_idx_on` was refused; VALU operands are now indexed by M0 while the mode is
/// on, including the pre-resolved (fast path) moves and adds, and not after `_off`.
#[test]
fn gpr_index_mode_offsets_enabled_vgpr_operands() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        for r in 0..16 {
            w.vgpr[r] = [100 + r as u32; 64];
        }
        w.sgpr[2] = 3;
        run_ok(
            target,
            "s_set_gpr_idx_on s2, gpr_idx(SRC0,DST)\n v_mov_b32 v1, v4\n v_add_u32 v2, v5, v6\n\
             s_set_gpr_idx_mode gpr_idx(SRC1)\n v_add_u32 v0, v10, v11\n s_set_gpr_idx_idx 1\n v_mov_b32 v8, v13\n\
             s_set_gpr_idx_off\n v_mov_b32 v12, v4",
            &mut w,
        );
        assert_eq!(w.vgpr[4][0], 107, "{target}: v_mov_b32 v1, v4 indexed by 3 writes v4 = v7");
        assert_eq!(w.vgpr[5][0], 108 + 106, "{target}: v_add_u32 v2, v5, v6 writes v5 = v8 + v6");
        assert_eq!(w.vgpr[0][0], 110 + 114, "{target}: only src1 indexed: v0 = v10 + v14");
        assert_eq!(w.vgpr[8][0], 113, "{target}: mode SRC1 only: v_mov (src0) is not indexed");
        assert_eq!(w.vgpr[12][0], 107, "{target}: indexing off again");
        assert_eq!(w.sgpr[124] & 0xf0ff, 0x2001, "{target}: M0 holds the index and the enables");
        assert!(!w.gpr_idx_enabled());
    }
}

/// gfx90a's v_mad_f32 / v_mac_f32 / v_madak_f32 ran as fused multiply-adds; the MAD rounds
/// the product first (and flushes denormals).
#[test]
fn v_mad_f32_rounds_the_product() {
    let mut w = Wave::new(BASE, 0x3f0);
    let a = 1.0f32 + f32::EPSILON;
    w.vgpr[1] = [a.to_bits(); 64];
    w.vgpr[2] = [(-(1.0f32 + 2.0 * f32::EPSILON)).to_bits(); 64];
    w.vgpr[3] = [(-(1.0f32 + 2.0 * f32::EPSILON)).to_bits(); 64];
    run_ok(Target::Gfx90a, "v_mad_f32 v4, v1, v1, v2\n v_mac_f32 v3, v1, v1\n v_madak_f32 v5, v1, v1, 0xbf800002", &mut w);
    // a*a = 1 + 2eps + eps^2: the fused result is eps^2, the unfused one 0.
    for r in [4, 3, 5] {
        assert_eq!(f32::from_bits(w.vgpr[r][0]), 0.0, "v{r}");
    }
}

/// The clamp and omod modifiers of f16 arithmetic were ignored.
#[test]
fn f16_arithmetic_takes_output_modifiers() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x0f0); // IEEE off: omod applies
        w.vgpr[1] = [0x4000; 64]; // 2.0
        w.vgpr[2] = [0x3c00; 64]; // 1.0
        run_ok(target, "v_add_f16_e64 v3, v1, v2 clamp\n v_mul_f16_e64 v4, v1, v2 mul:2\n v_sub_f16_e64 v5, v2, v1 clamp", &mut w);
        assert_eq!(w.vgpr[3][0], 0x3c00, "{target}: clamp(3.0) = 1.0");
        assert_eq!(w.vgpr[4][0], 0x4400, "{target}: 2.0 * 1.0 * 2 = 4.0");
        assert_eq!(w.vgpr[5][0], 0, "{target}: clamp(-1.0) = +0");
    }
}

/// `v_fma_f16` with op_sel[3] wrote the low half and zeroed the high one; the gfx9 op_sel
/// forms write the half op_sel[3] names and keep the other (CDNA3 ISA, V_MAD_F16 notes).
#[test]
fn f16_op_sel_destination_keeps_the_other_half() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        w.vgpr[1] = [0x4000; 64];
        w.vgpr[4] = [0xabcd_1234; 64];
        w.vgpr[5] = [0xabcd_1234; 64];
        w.vgpr[6] = [0xabcd_1234; 64];
        run_ok(target, "v_fma_f16 v4, v1, v1, v1 op_sel:[0,0,0,1]\n v_fma_f16 v5, v1, v1, v1\n v_add_i16 v6, v1, v1 op_sel:[0,0,1]", &mut w);
        assert_eq!(w.vgpr[4][0], 0x4600_1234, "{target}: 2*2+2 = 6.0 in the high half");
        assert_eq!(w.vgpr[5][0], 0xabcd_4600, "{target}: low half written, high kept");
        assert_eq!(w.vgpr[6][0], 0x8000_1234, "{target}: v_add_i16 op_sel dst");
    }
}

/// `v_sin_f32` of a negative integral revolution count gave -0; the ISA's example is
/// V_SIN_F32(-MaxFloat) = +0 (sin(-0) stays -0).
#[test]
fn sin_of_negative_whole_turns_is_plus_zero() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        w.vgpr[1] = [f32::MIN.to_bits(); 64];
        w.vgpr[2] = [0x8000_0000; 64];
        w.vgpr[3] = [0xfbff; 64];
        run_ok(target, "v_sin_f32 v4, v1\n v_sin_f32 v5, v2\n v_sin_f16 v6, v3", &mut w);
        assert_eq!((w.vgpr[4][0], w.vgpr[5][0], w.vgpr[6][0]), (0, 0x8000_0000, 0), "{target}");
    }
}
