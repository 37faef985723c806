//! Unit tests of tricky executor semantics on hand-written instruction sequences,
//! assembled with the system's `llvm-mc` (llvm-19 for gfx90a/gfx942, llvm-22 for gfx950)
//! and run as a single wave: SCC and carries, EXEC masking under divergence, DPP, SDWA,
//! ds_bpermute, buffer bounds checking, memory and unsupported-instruction faults, MFMA
//! lane layouts against a CPU matmul.

mod common;

use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;

const BASE: u64 = 0x10_0000;
const DATA: u64 = 0x20_0000;

fn assemble(target: Target, text: &str) -> Vec<u32> {
    common::assemble(target, text)
}

/// A wave with v0 = lane id and EXEC all ones.
fn wave() -> Wave {
    let mut w = Wave::new(BASE, 0x3f0);
    w.vgpr[0] = std::array::from_fn(|i| i as u32);
    w
}

fn run(target: Target, text: &str, w: &mut Wave, mem: &mut Memory) -> Result<u64, ExecFault> {
    let program = Program::from_words(target, BASE, &assemble(target, text));
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let mut lds = vec![0u8; 64 * 1024];
    run_single_wave(&program, w, mem, &mut lds, 100_000)
}

fn run_ok(target: Target, text: &str, w: &mut Wave) {
    let mut mem = Memory::new();
    run(target, text, w, &mut mem).unwrap_or_else(|e| panic!("{text}: {e}"));
}

#[test]
fn scc_and_64_bit_scalar_carries() {
    for target in Target::ALL {
        let mut w = wave();
        run_ok(
            target,
            "s_mov_b32 s0, -1\n s_mov_b32 s1, 0\n s_add_u32 s0, s0, 1\n s_addc_u32 s1, s1, 0\n\
             s_cselect_b32 s4, 11, 22\n s_sub_u32 s2, 0, 1\n s_subb_u32 s3, 0, 0\n\
             s_cmp_lt_i32 -1, 0\n s_cselect_b64 s[6:7], -1, 0\n s_cmp_lt_u32 -1, 0\n s_cselect_b32 s8, 1, 2",
            &mut w,
        );
        assert_eq!((w.sgpr[0], w.sgpr[1]), (0, 1), "{target}: 64-bit add via carry");
        assert_eq!(w.sgpr[4], 22, "{target}: s_addc_u32 0+0+carry did not carry out");
        assert_eq!((w.sgpr[2], w.sgpr[3]), (u32::MAX, u32::MAX), "{target}: borrow chain");
        assert_eq!(w.sgpr_pair(6), u64::MAX, "{target}: signed compare");
        assert_eq!(w.sgpr[8], 2, "{target}: unsigned compare");
    }
}

#[test]
fn vector_carries_write_vcc_per_lane() {
    let mut w = wave();
    // v1 = lane odd ? 0xffffffff : 5; v2 = 1. 64-bit add {v1, 0} + {1, 0}.
    w.vgpr[1] = std::array::from_fn(|i| if i % 2 == 1 { u32::MAX } else { 5 });
    w.vgpr[2] = [1; 64];
    run_ok(Target::Gfx942, "v_add_co_u32_e32 v3, vcc, v1, v2\n v_mov_b32 v5, 0\n v_addc_co_u32_e32 v4, vcc, 0, v5, vcc", &mut w);
    for lane in 0..64 {
        let odd = lane % 2 == 1;
        assert_eq!(w.vgpr[3][lane], if odd { 0 } else { 6 });
        assert_eq!(w.vgpr[4][lane], odd as u32, "lane {lane} high word");
    }
    assert_eq!(w.vcc(), 0, "the second add carries nowhere");
}

#[test]
fn divergent_exec_masking_and_restore() {
    for target in Target::ALL {
        let mut w = wave();
        w.vgpr[1] = [100; 64];
        run_ok(
            target,
            "v_cmp_gt_u32_e32 vcc, 20, v0\n s_and_saveexec_b64 s[2:3], vcc\n v_mov_b32 v1, 7\n\
             s_andn2_b64 exec, s[2:3], exec\n v_mov_b32 v1, 9\n s_or_b64 exec, exec, s[2:3]\n v_add_u32_e32 v1, 1, v1",
            &mut w,
        );
        for lane in 0..64 {
            assert_eq!(w.vgpr[1][lane], if lane < 20 { 8 } else { 10 }, "{target} lane {lane}");
        }
        assert_eq!(w.exec(), u64::MAX);
    }
}

#[test]
fn v_cmpx_writes_exec_and_scalar_branches_follow_it() {
    let mut w = wave();
    w.vgpr[1] = [0; 64];
    run_ok(Target::Gfx90a, "v_cmpx_gt_u32_e32 vcc, 3, v0\n s_cbranch_execz 1\n v_mov_b32 v1, 1\n s_mov_b64 exec, -1", &mut w);
    assert_eq!(w.vgpr[1][..4], [1, 1, 1, 0]);
    let mut w = wave();
    w.vgpr[1] = [0; 64];
    run_ok(Target::Gfx90a, "v_cmpx_lt_u32_e32 vcc, 100, v0\n s_cbranch_execz 1\n v_mov_b32 v1, 1\n s_mov_b64 exec, -1", &mut w);
    assert!(w.vgpr[1].iter().all(|&x| x == 0), "execz branch skipped the move");
}

#[test]
fn dpp_row_shifts_mirror_broadcast_and_bound_ctrl() {
    let mut w = wave();
    w.vgpr[2] = [1000; 64];
    w.vgpr[3] = [1000; 64];
    w.vgpr[4] = [1000; 64];
    w.vgpr[5] = [1000; 64];
    run_ok(
        Target::Gfx942,
        "v_mov_b32_dpp v2, v0 row_shr:1 bound_ctrl:0\n v_mov_b32_dpp v3, v0 row_shr:1\n\
         v_mov_b32_dpp v4, v0 row_mirror\n v_mov_b32_dpp v5, v0 quad_perm:[3,2,1,0]\n\
         v_mov_b32_dpp v6, v0 row_bcast:15 row_mask:0xa\n v_add_u32_dpp v7, v0, v0 row_shl:2 bound_ctrl:0",
        &mut w,
    );
    for lane in 0..64 {
        let col = lane % 16;
        assert_eq!(w.vgpr[2][lane], if col == 0 { 0 } else { lane as u32 - 1 }, "row_shr bound_ctrl lane {lane}");
        assert_eq!(w.vgpr[3][lane], if col == 0 { 1000 } else { lane as u32 - 1 }, "row_shr lane {lane}");
        assert_eq!(w.vgpr[4][lane], (lane - col + 15 - col) as u32, "row_mirror lane {lane}");
        assert_eq!(w.vgpr[5][lane], (lane - lane % 4 + 3 - lane % 4) as u32, "quad_perm lane {lane}");
        let row = lane / 16;
        if row % 2 == 1 {
            assert_eq!(w.vgpr[6][lane], (16 * row - 1) as u32, "row_bcast15 lane {lane}");
        }
        let shl = if col + 2 < 16 { lane as u32 + 2 } else { 0 };
        assert_eq!(w.vgpr[7][lane], shl + lane as u32, "v_add dpp lane {lane}");
    }
}

#[test]
fn sdwa_selects_and_destination_preserve() {
    let mut w = wave();
    w.vgpr[1] = [0x8899_aabb; 64];
    w.vgpr[2] = [0x0000_0003; 64];
    w.vgpr[3] = [0xdead_beef; 64];
    run_ok(
        Target::Gfx90a,
        "v_add_u32_sdwa v3, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2 src1_sel:DWORD\n\
         v_mov_b32_sdwa v4, sext(v1) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1",
        &mut w,
    );
    assert_eq!(w.vgpr[3][0], (0x99 + 3) << 16 | 0xbeef);
    assert_eq!(w.vgpr[4][0], 0xaa_u8 as i8 as i32 as u32);
}

#[test]
fn cross_lane_reads_writes_and_bpermute() {
    let mut w = wave();
    w.vgpr[1] = std::array::from_fn(|i| (((i + 1) % 64) * 4) as u32);
    w.vgpr[2] = std::array::from_fn(|i| 1000 + i as u32);
    run_ok(
        Target::Gfx942,
        "ds_bpermute_b32 v3, v1, v2\n s_waitcnt lgkmcnt(0)\n v_readlane_b32 s4, v2, 17\n\
         v_writelane_b32 v2, s4, 3\n s_mov_b64 exec, 0xf0\n v_readfirstlane_b32 s5, v0\n s_mov_b64 exec, -1\n\
         v_mbcnt_lo_u32_b32 v5, -1, 0\n v_mbcnt_hi_u32_b32 v5, -1, v5",
        &mut w,
    );
    for lane in 0..64 {
        assert_eq!(w.vgpr[3][lane], 1000 + ((lane + 1) % 64) as u32, "bpermute lane {lane}");
        assert_eq!(w.vgpr[5][lane], lane as u32, "mbcnt lane {lane}");
    }
    assert_eq!(w.sgpr[4], 1017);
    assert_eq!(w.vgpr[2][3], 1017);
    assert_eq!(w.sgpr[5], 4, "first active lane of 0xf0");
}

#[test]
fn lds_atomics_return_old_values() {
    let mut w = wave();
    w.vgpr[1] = [0; 64];
    w.vgpr[2] = [1; 64];
    w.vgpr[4] = [5; 64];
    run_ok(
        Target::Gfx90a,
        "ds_add_rtn_u32 v3, v1, v2\n ds_max_rtn_u32 v5, v1, v4 offset:4\n ds_read_b32 v6, v1\n ds_cmpst_rtn_b32 v7, v1, v6, v4\n ds_read_b32 v8, v1",
        &mut w,
    );
    let mut olds: Vec<u32> = w.vgpr[3].to_vec();
    olds.sort_unstable();
    assert_eq!(olds, (0..64).collect::<Vec<_>>(), "each lane saw a distinct old value");
    assert_eq!(w.vgpr[6][0], 64);
    assert_eq!(w.vgpr[8][0], 5, "cmpst: the first lane matched and stored 5");
}

#[test]
fn buffer_loads_and_stores_are_bounds_checked() {
    let mut mem = Memory::new();
    for i in 0..64u64 {
        mem.write_u32(DATA + 4 * i, 100 + i as u32).expect("fill");
    }
    let mut w = wave();
    // V#: base DATA, stride 0, num_records 40 bytes (10 dwords).
    w.sgpr[8] = DATA as u32;
    w.sgpr[9] = (DATA >> 32) as u32;
    w.sgpr[10] = 40;
    w.sgpr[11] = 0x0002_7000;
    w.vgpr[1] = std::array::from_fn(|i| 4 * i as u32);
    w.vgpr[2] = [7; 64];
    w.vgpr[3] = [0xffff; 64];
    run(
        Target::Gfx942,
        "buffer_load_dword v3, v1, s[8:11], 0 offen\n buffer_store_dword v2, v1, s[8:11], 0 offen offset:20",
        &mut w,
        &mut mem,
    )
    .expect("runs");
    for lane in 0..64 {
        assert_eq!(w.vgpr[3][lane], if lane < 10 { 100 + lane as u32 } else { 0 }, "load lane {lane}");
    }
    for i in 0..64u64 {
        let expect = if (5..10).contains(&i) { 7 } else { 100 + i as u32 };
        assert_eq!(mem.read_u32(DATA + 4 * i).expect("mapped"), expect, "dword {i}");
    }
}

#[test]
fn out_of_bounds_global_store_faults_with_its_address() {
    let mut mem = Memory::new();
    mem.map(DATA, 256).expect("map");
    let mut w = wave();
    let bad = 0x7777_0000_0000u64;
    w.vgpr[2] = [bad as u32; 64];
    w.vgpr[3] = [(bad >> 32) as u32; 64];
    let program = "v_lshlrev_b32 v1, 2, v0\n v_add_co_u32 v2, vcc, v2, v1\n v_addc_co_u32 v3, vcc, 0, v3, vcc\n global_store_dword v[2:3], v0, off offset:16";
    let fault = run(Target::Gfx942, program, &mut w, &mut mem).expect_err("the store must fault");
    match fault {
        ExecFault::Memory { addr, pc, .. } => {
            assert_eq!(addr, bad + 16, "fault names lane 0's address");
            assert!(pc > BASE, "fault names the store's pc");
        }
        other => panic!("expected a memory fault, got {other}"),
    }
}

#[test]
fn unsupported_and_illegal_instructions_are_faults() {
    let mut mem = Memory::new();
    let mut w = wave();
    // A swizzled buffer resource (SWIZZLE_ENABLE, descriptor bit 63): LLVM assembles the
    // load, but the CDNA descriptor has no element size to swizzle with.
    w.sgpr[5] = 1 << 31;
    let fault = run(Target::Gfx942, "buffer_load_dword v1, off, s[4:7], 0", &mut w, &mut mem).expect_err("a swizzled resource has no semantics");
    assert!(matches!(fault, ExecFault::Unsupported { pc: BASE, mnemonic: "buffer_load_dword", .. }), "{fault}");
    let text = fault.to_string();
    assert!(text.contains("buffer_load_dword") && text.contains(&format!("{BASE:#x}")), "the message names the instruction and its address: {text}");
    let program = Program::from_words(Target::Gfx942, BASE, &[0xffff_ffff]);
    let mut w = wave();
    let fault = run_single_wave(&program, &mut w, &mut mem, &mut [], 10).expect_err("garbage word");
    assert!(matches!(fault, ExecFault::Illegal { pc: BASE, word: 0xffff_ffff, .. }), "{fault}");
    let mut w = wave();
    let fault = run(Target::Gfx942, "s_branch 100", &mut w, &mut mem).expect_err("jump out of text");
    assert!(matches!(fault, ExecFault::PcOutOfRange { .. }), "{fault}");
}

#[test]
fn mode_register_round_trips_through_setreg_and_getreg() {
    let mut w = wave();
    run_ok(Target::Gfx90a, "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0x5\n s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 10)", &mut w);
    assert_eq!(w.sgpr[0], 0x3f5);
    assert_eq!(w.mode_bits & 0xf, 5);
}

/// CPU reference: D = A * B + C for row-major f64 matrices.
fn matmul(m: usize, k: usize, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let mut d = c.to_vec();
    for i in 0..m {
        for j in 0..m {
            for kk in 0..k {
                d[i * m + j] += a[i * k + kk] * b[kk * m + j];
            }
        }
    }
    d
}

#[test]
fn mfma_f16_and_f64_layouts_match_a_cpu_matmul() {
    // v_mfma_f32_16x16x16f16: 4 f16 per lane in v[2:3] (A) and v[4:5] (B); D in v[8:11].
    let (m, k, kpl) = (16usize, 16usize, 4usize);
    let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 11) as f64 - 5.0).collect();
    let b: Vec<f64> = (0..k * m).map(|x| ((x * 5) % 9) as f64 - 4.0).collect();
    let c: Vec<f64> = (0..m * m).map(|x| (x % 3) as f64).collect();
    let h = |x: f64| half::f16::from_f64(x).to_bits() as u32;
    let mut w = wave();
    for lane in 0..64 {
        let (row, kg) = (lane % m, lane / m);
        for e in 0..kpl {
            let kk = kg * kpl + e;
            let (reg, shift) = (e / 2, 16 * (e % 2));
            w.vgpr[2 + reg][lane] |= h(a[row * k + kk]) << shift;
            w.vgpr[4 + reg][lane] |= h(b[kk * m + row]) << shift;
        }
        for r in 0..4 {
            let i = 4 * (lane / 16) + r;
            w.vgpr[8 + r][lane] = (c[i * m + lane % 16] as f32).to_bits();
        }
    }
    run_ok(Target::Gfx942, "v_mfma_f32_16x16x16_f16 v[8:11], v[2:3], v[4:5], v[8:11]", &mut w);
    let d = matmul(m, k, &a, &b, &c);
    for lane in 0..64 {
        for r in 0..4 {
            let i = 4 * (lane / 16) + r;
            assert_eq!(f32::from_bits(w.vgpr[8 + r][lane]) as f64, d[i * m + lane % 16], "D[{i}][{}]", lane % 16);
        }
    }

    // v_mfma_f64_16x16x4f64: one f64 per lane; D in 4 register pairs, row i in pair i / 4
    // and lanes 16 * (i % 4) (AMD's Matrix Instruction Calculator, and CK's f64 16x16x4
    // layout with group_size 1).
    let k = 4;
    let a: Vec<f64> = (0..m * k).map(|x| x as f64 * 0.5 - 3.0).collect();
    let b: Vec<f64> = (0..k * m).map(|x| 2.0 - x as f64 * 0.25).collect();
    let mut w = wave();
    for lane in 0..64 {
        let (row, kk) = (lane % m, lane / m);
        let (av, bv) = (a[row * k + kk].to_bits(), b[kk * m + row].to_bits());
        w.vgpr[2][lane] = av as u32;
        w.vgpr[3][lane] = (av >> 32) as u32;
        w.vgpr[4][lane] = bv as u32;
        w.vgpr[5][lane] = (bv >> 32) as u32;
    }
    run_ok(Target::Gfx90a, "v_mfma_f64_16x16x4f64 v[8:15], v[2:3], v[4:5], 0", &mut w);
    let d = matmul(m, k, &a, &b, &vec![0.0; m * m]);
    for lane in 0..64 {
        for r in 0..4 {
            let i = 4 * r + lane / 16;
            let bits = w.vgpr[8 + 2 * r][lane] as u64 | ((w.vgpr[9 + 2 * r][lane] as u64) << 32);
            assert_eq!(f64::from_bits(bits), d[i * m + lane % 16], "f64 D[{i}][{}]", lane % 16);
        }
    }
}

#[test]
fn global_atomics_return_pre_op_values() {
    let mut mem = Memory::new();
    mem.map(DATA, 64).expect("map");
    mem.write_u32(DATA, 10).expect("init");
    mem.write_u32(DATA + 4, 5).expect("init");
    mem.write_u32(DATA + 8, 3).expect("init");
    let mut w = wave();
    w.vgpr[2] = [DATA as u32; 64];
    w.vgpr[3] = [(DATA >> 32) as u32; 64];
    w.vgpr[4] = [1; 64];
    w.vgpr[5] = std::array::from_fn(|i| i as u32);
    // One lane: cmpswap 10 -> 77 succeeds; a second cmpswap expecting 10 fails.
    w.vgpr[6] = [77; 64];
    w.vgpr[7] = [10; 64];
    run(
        Target::Gfx942,
        "global_atomic_add v8, v[2:3], v4, off sc0\n global_atomic_umax v[2:3], v5, off offset:4\n\
         s_mov_b64 exec, 1\n global_atomic_cmpswap v9, v[2:3], v[6:7], off offset:8 sc0\n\
         global_atomic_cmpswap v10, v[2:3], v[6:7], off offset:8 sc0\n s_mov_b64 exec, -1\n\
         global_atomic_inc v11, v[2:3], v4, off offset:12 sc0",
        &mut w,
        &mut mem,
    )
    .expect("runs");
    let mut olds: Vec<u32> = w.vgpr[8].to_vec();
    olds.sort_unstable();
    assert_eq!(olds, (10..74).collect::<Vec<_>>());
    assert_eq!(mem.read_u32(DATA), Ok(74));
    assert_eq!(mem.read_u32(DATA + 4), Ok(63), "umax over lane ids");
    assert_eq!((w.vgpr[9][0], w.vgpr[10][0]), (3, 3), "cmpswap returns the old value both times");
    assert_eq!(mem.read_u32(DATA + 8), Ok(3), "3 != 10: no swap");
    // inc with limit 1 wraps to 0 after reaching it: 0 -> 1 -> 0 -> 1 ...
    assert_eq!(mem.read_u32(DATA + 12), Ok(0));
}

#[test]
fn scratch_is_private_per_lane() {
    let mut mem = Memory::new();
    let mut w = wave();
    w.scratch_base = 0x40_0000;
    w.scratch_lane_bytes = 64;
    mem.map(w.scratch_base, 64 * 64).expect("map scratch");
    w.vgpr[1] = [8; 64];
    run_ok_mem(Target::Gfx942, "scratch_store_dword v1, v0, off\n scratch_load_dword v2, v1, off\n scratch_load_dword v3, off, off offset:8", &mut w, &mut mem);
    for lane in 0..64 {
        assert_eq!(w.vgpr[2][lane], lane as u32);
        assert_eq!(w.vgpr[3][lane], lane as u32);
    }
    let mut w2 = wave();
    w2.scratch_base = 0x40_0000;
    w2.scratch_lane_bytes = 64;
    w2.vgpr[1] = [8; 64];
    run_ok_mem(Target::Gfx90a, "scratch_load_dword v2, v1, off", &mut w2, &mut mem);
    assert_eq!(w2.vgpr[2][5], 5, "gfx90a scratch addressing sees the same lane slots");
}

fn run_ok_mem(target: Target, text: &str, w: &mut Wave, mem: &mut Memory) {
    run(target, text, w, mem).unwrap_or_else(|e| panic!("{text}: {e}"));
}

#[test]
fn scalar_loads_and_buffer_loads_with_bounds() {
    let mut mem = Memory::new();
    for i in 0..16u64 {
        mem.write_u32(DATA + 4 * i, 0x100 + i as u32).expect("fill");
    }
    let mut w = wave();
    w.set_sgpr_pair(4, DATA);
    w.sgpr[8] = DATA as u32;
    w.sgpr[9] = (DATA >> 32) as u32;
    w.sgpr[10] = 8;
    w.sgpr[11] = 0;
    run_ok_mem(Target::Gfx942, "s_load_dwordx4 s[12:15], s[4:5], 0x8\n s_buffer_load_dwordx4 s[16:19], s[8:11], 0x0", &mut w, &mut mem);
    assert_eq!(w.sgpr[12..16], [0x102, 0x103, 0x104, 0x105]);
    assert_eq!(w.sgpr[16..20], [0x100, 0x101, 0, 0], "dwords past num_records read 0");
}

#[test]
fn swizzle_packed_and_64_bit_vector_ops() {
    let mut w = wave();
    w.vgpr[2] = std::array::from_fn(|i| (1.5f32 * i as f32).to_bits());
    w.vgpr[3] = [2.0f32.to_bits(); 64];
    w.vgpr[4] = [0.25f32.to_bits(); 64];
    w.vgpr[5] = [4.0f32.to_bits(); 64];
    run_ok(
        Target::Gfx942,
        "ds_swizzle_b32 v1, v0 offset:swizzle(SWAP,1)\n s_waitcnt lgkmcnt(0)\n\
         v_pk_fma_f32 v[6:7], v[2:3], v[4:5], v[2:3]\n v_mov_b64 v[8:9], v[2:3]\n v_lshl_add_u64 v[10:11], v[8:9], 2, v[8:9]",
        &mut w,
    );
    for lane in 0..64 {
        assert_eq!(w.vgpr[1][lane], (lane ^ 1) as u32, "swizzle swap lane {lane}");
        let x = 1.5f32 * lane as f32;
        assert_eq!(f32::from_bits(w.vgpr[6][lane]), x.mul_add(0.25, x), "pk_fma low lane {lane}");
        assert_eq!(f32::from_bits(w.vgpr[7][lane]), 2.0f32.mul_add(4.0, 2.0), "pk_fma high");
        let v = w.vgpr[2][lane] as u64 | ((w.vgpr[3][lane] as u64) << 32);
        let r = w.vgpr[10][lane] as u64 | ((w.vgpr[11][lane] as u64) << 32);
        assert_eq!(r, (v << 2).wrapping_add(v), "lshl_add_u64 lane {lane}");
    }
}

#[test]
fn float_compares_handle_nan_and_class() {
    let mut w = wave();
    w.vgpr[1] = std::array::from_fn(|i| match i % 4 {
        0 => 1.0f32.to_bits(),
        1 => f32::NAN.to_bits(),
        2 => (-0.0f32).to_bits(),
        _ => f32::INFINITY.to_bits(),
    });
    run_ok(
        Target::Gfx90a,
        "v_cmp_lt_f32_e64 s[2:3], v1, 2.0\n v_cmp_nge_f32_e64 s[4:5], v1, 2.0\n s_movk_i32 s10, 0x260\n v_cmp_class_f32_e64 s[6:7], v1, s10\n v_cmp_u_f32_e64 s[8:9], v1, v1",
        &mut w,
    );
    let pattern = |bits: [bool; 4]| (0..64).fold(0u64, |m, i| m | ((bits[i % 4] as u64) << i));
    assert_eq!(w.sgpr_pair(2), pattern([true, false, true, false]), "lt: NaN and +inf fail");
    assert_eq!(w.sgpr_pair(4), pattern([true, true, true, false]), "nge: NaN passes, +inf >= 2 fails");
    assert_eq!(w.sgpr_pair(6), pattern([false, false, true, true]), "class: -0 (bit 5) | +inf (bit 9)");
    assert_eq!(w.sgpr_pair(8), pattern([false, true, false, false]), "unordered");
}

#[test]
fn f32_arithmetic_follows_mode_rounding_and_denormal_flushing() {
    let tiny = 2f32.powi(-30);
    let denormal = f32::from_bits(0x0000_1234);
    let mut w = wave();
    w.vgpr[1] = [1.0f32.to_bits(); 64];
    w.vgpr[2] = [tiny.to_bits(); 64];
    w.vgpr[3] = [denormal.to_bits(); 64];
    // MODE 0x3f0: nearest even, denormals kept.
    run_ok(Target::Gfx942, "v_add_f32 v4, v1, v2\n v_add_f32 v5, 0, v3\n v_fma_f32 v6, v2, v2, v1", &mut w);
    assert_eq!(f32::from_bits(w.vgpr[4][0]), 1.0);
    assert_eq!(w.vgpr[5][0], denormal.to_bits(), "denormal kept");
    assert_eq!(f32::from_bits(w.vgpr[6][0]), 1.0);
    // Round toward +inf (FP_ROUND f32 = 1) and flush f32 denormals (FP_DENORM f32 = 0).
    run_ok(
        Target::Gfx942,
        "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 6), 0x1\n v_add_f32 v4, v1, v2\n v_add_f32 v5, 0, v3\n v_fma_f32 v6, v2, v2, v1",
        &mut w,
    );
    let up = f32::from_bits(1.0f32.to_bits() + 1);
    assert_eq!(f32::from_bits(w.vgpr[4][0]), up, "1 + 2^-30 rounds up toward +inf");
    assert_eq!(w.vgpr[5][0], 0, "denormal input flushed");
    assert_eq!(f32::from_bits(w.vgpr[6][0]), up, "fma rounds up toward +inf");
}

#[test]
fn compiler_f32_division_sequence_is_correctly_rounded() {
    // The sequence clang emits for `a / b` in f32 with denormals enabled.
    let div = "v_div_scale_f32 v3, s[0:1], v2, v2, v1\n v_div_scale_f32 v4, vcc, v1, v2, v1\n v_rcp_f32 v5, v3\n\
               v_fma_f32 v6, -v3, v5, 1.0\n v_fma_f32 v5, v6, v5, v5\n v_mul_f32 v6, v4, v5\n v_fma_f32 v7, -v3, v6, v4\n\
               v_fma_f32 v6, v7, v5, v6\n v_fma_f32 v3, -v3, v6, v4\n v_div_fmas_f32 v3, v3, v5, v6\n v_div_fixup_f32 v0, v3, v2, v1";
    let nums: [f32; 8] = [1.0, 22.0, -7.5, 1e30, 3.0e-39, 0.0, 5.0, f32::INFINITY];
    let dens: [f32; 8] = [3.0, 7.0, 0.1, 1e-8, 3.0, 2.0, 0.0, 4.0];
    for target in Target::ALL {
        let mut w = wave();
        w.vgpr[1] = std::array::from_fn(|i| nums[i % 8].to_bits());
        w.vgpr[2] = std::array::from_fn(|i| dens[i % 8].to_bits());
        run_ok(target, div, &mut w);
        for i in 0..8 {
            let want = nums[i] / dens[i];
            assert_eq!(w.vgpr[0][i], want.to_bits(), "{target}: {} / {} = {want}, got {}", nums[i], dens[i], f32::from_bits(w.vgpr[0][i]));
        }
    }
}

/// Packs A (`m x k`) and B (`k x m`) element bit patterns into v[2..] and v[2+regs..] per
/// the single-block layout (lane `i + m * (kk / kpl)`, element `kk % kpl`).
fn pack_ab(w: &mut Wave, m: usize, k: usize, bits: usize, a: &[u32], b: &[u32]) -> usize {
    let kpl = k * m / 64;
    let regs = kpl * bits / 32;
    for lane in 0..64 {
        let (idx, kg) = (lane % m, lane / m);
        for e in 0..kpl {
            let kk = kg * kpl + e;
            let (reg, shift) = ((e * bits) / 32, (e * bits) % 32);
            w.vgpr[2 + reg][lane] |= a[idx * k + kk] << shift;
            w.vgpr[2 + regs + reg][lane] |= b[kk * m + idx] << shift;
        }
    }
    regs
}

#[test]
fn mfma_i8_and_bf16_layouts_match_a_cpu_matmul() {
    let m = 16;
    // v_mfma_i32_16x16x32_i8 (gfx942): 8 i8 per lane in two VGPRs.
    let k = 32;
    let a: Vec<i32> = (0..m * k).map(|x| ((x * 37) % 255) as i32 - 127).collect();
    let b: Vec<i32> = (0..k * m).map(|x| ((x * 91) % 251) as i32 - 125).collect();
    let mut w = wave();
    let regs = pack_ab(&mut w, m, k, 8, &a.iter().map(|&x| x as u8 as u32).collect::<Vec<_>>(), &b.iter().map(|&x| x as u8 as u32).collect::<Vec<_>>());
    assert_eq!(regs, 2);
    run_ok(Target::Gfx942, "v_mfma_i32_16x16x32_i8 v[8:11], v[2:3], v[4:5], 0", &mut w);
    for lane in 0..64 {
        for r in 0..4 {
            let (i, j) = (4 * (lane / 16) + r, lane % 16);
            let want: i32 = (0..k).map(|kk| a[i * k + kk] * b[kk * m + j]).sum();
            assert_eq!(w.vgpr[8 + r][lane] as i32, want, "i8 D[{i}][{j}]");
        }
    }
    // v_mfma_f32_16x16x16bf16_1k (gfx90a): 4 bf16 per lane; small integers are exact.
    let k = 16;
    let a: Vec<f32> = (0..m * k).map(|x| ((x * 3) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * m).map(|x| ((x * 5) % 9) as f32 - 4.0).collect();
    let bf = |x: &f32| x.to_bits() >> 16;
    let mut w = wave();
    pack_ab(&mut w, m, k, 16, &a.iter().map(bf).collect::<Vec<_>>(), &b.iter().map(bf).collect::<Vec<_>>());
    run_ok(Target::Gfx90a, "v_mfma_f32_16x16x16bf16_1k a[0:3], v[2:3], v[4:5], 0", &mut w);
    for lane in 0..64 {
        for r in 0..4 {
            let (i, j) = (4 * (lane / 16) + r, lane % 16);
            let want: f32 = (0..k).map(|kk| a[i * k + kk] * b[kk * m + j]).sum();
            assert_eq!(f32::from_bits(w.agpr[r][lane]), want, "bf16 D[{i}][{j}] (AGPR destination)");
        }
    }
}

#[test]
fn lds_exchange_pairs_mask_or_and_float_atomics() {
    let mut w = wave();
    w.vgpr[1] = std::array::from_fn(|i| 8 * i as u32);
    w.vgpr[2] = std::array::from_fn(|i| 100 + i as u32);
    w.vgpr[3] = std::array::from_fn(|i| 200 + i as u32);
    w.vgpr[4] = [0xff00; 64];
    w.vgpr[5] = [0x0012; 64];
    w.vgpr[6] = [2.5f32.to_bits(); 64];
    w.vgpr[9] = [0; 64];
    run_ok(
        Target::Gfx942,
        "ds_write2_b32 v1, v4, v4 offset1:1\n ds_wrxchg2_rtn_b32 v[10:11], v1, v2, v3 offset1:1\n\
         ds_read2_b32 v[12:13], v1 offset1:1\n ds_mskor_rtn_b32 v14, v1, v4, v5\n ds_read_b32 v15, v1\n\
         ds_max_rtn_f32 v16, v9, v6 offset:4096\n ds_read_b32 v17, v9 offset:4096",
        &mut w,
    );
    for lane in 0..64 {
        assert_eq!((w.vgpr[10][lane], w.vgpr[11][lane]), (0xff00, 0xff00), "old pair lane {lane}");
        assert_eq!((w.vgpr[12][lane], w.vgpr[13][lane]), (100 + lane as u32, 200 + lane as u32), "new pair lane {lane}");
        assert_eq!(w.vgpr[14][lane], 100 + lane as u32, "mskor returns the old value");
        assert_eq!(w.vgpr[15][lane], ((100 + lane as u32) & !0xff00) | 0x12, "mskor result lane {lane}");
    }
    assert_eq!(f32::from_bits(w.vgpr[17][0]), 2.5, "max(0.0, 2.5)");
}

#[test]
fn half_precision_math_and_calls() {
    let h = |x: f32| half::f16::from_f32(x).to_bits() as u32;
    let mut w = wave();
    w.vgpr[1] = [h(1.0); 64];
    w.vgpr[2] = [h(2f32.powi(-11)); 64];
    w.vgpr[3] = [h(3.0); 64];
    w.vgpr[4] = [1.0f32.to_bits() + 1; 64];
    run_ok(
        Target::Gfx90a,
        "s_call_b64 s[4:5], 1\n s_branch 2\n v_mov_b32 v9, 5\n s_setpc_b64 s[4:5]\n\
         v_add_f16 v5, v1, v2\n v_mul_f16 v6, v3, v3\n v_fma_f16 v7, v3, v3, v1\n v_cvt_pkrtz_f16_f32 v8, v4, -v4",
        &mut w,
    );
    assert_eq!(w.vgpr[9][0], 5, "the called block ran and returned");
    assert_eq!(w.vgpr[5][0], h(1.0), "1 + 2^-11 ties to even");
    assert_eq!(w.vgpr[6][0], h(9.0));
    assert_eq!(w.vgpr[7][0], h(10.0));
    assert_eq!(w.vgpr[8][0], h(1.0) | (h(-1.0) << 16), "round toward zero drops the f32 ulp");
}

#[test]
fn dot_products() {
    let h = |x: f32| half::f16::from_f32(x).to_bits() as u32;
    let mut w = wave();
    w.vgpr[1] = [h(1.5) | (h(-2.0) << 16); 64];
    w.vgpr[2] = [h(4.0) | (h(0.25) << 16); 64];
    w.vgpr[3] = [10.0f32.to_bits(); 64];
    w.vgpr[4] = [0x80ff_7f02; 64]; // bytes 2, 127, -1, -128
    w.vgpr[5] = [0x0302_01ff; 64]; // bytes -1, 1, 2, 3
    w.vgpr[6] = [100; 64];
    w.vgpr[7] = [10.0f32.to_bits(); 64];
    run_ok(
        Target::Gfx90a,
        "v_dot2_f32_f16 v8, v1, v2, v3\n v_dot4_i32_i8 v9, v4, v5, v6\n v_dot4_u32_u8 v10, v4, v5, v6\n v_dot2c_f32_f16 v7, v1, v2",
        &mut w,
    );
    assert_eq!(f32::from_bits(w.vgpr[8][0]), 10.0 + 6.0 - 0.5);
    let (a, b) = ([2i32, 127, -1, -128], [-1i32, 1, 2, 3]);
    assert_eq!(w.vgpr[9][0] as i32, 100 + (0..4).map(|k| a[k] * b[k]).sum::<i32>());
    let (ua, ub) = ([2u32, 127, 255, 128], [255u32, 1, 2, 3]);
    assert_eq!(w.vgpr[10][0], 100 + (0..4).map(|k| ua[k] * ub[k]).sum::<u32>());
    assert_eq!(f32::from_bits(w.vgpr[7][0]), 15.5, "dot2c accumulates into its destination");
}

#[test]
fn endless_loops_hit_the_instruction_budget() {
    let mut mem = Memory::new();
    let mut w = wave();
    let program = Program::from_words(Target::Gfx942, BASE, &assemble(Target::Gfx942, "s_branch -1"));
    let fault = run_single_wave(&program, &mut w, &mut mem, &mut [], 1000).expect_err("never ends");
    assert!(matches!(fault, ExecFault::Hang { .. }), "{fault}");
}

fn f64_pair(w: &Wave, v: usize, lane: usize) -> f64 {
    f64::from_bits(w.vgpr[v][lane] as u64 | ((w.vgpr[v + 1][lane] as u64) << 32))
}

/// Bit-exact, except that any NaN matches any NaN.
fn same_f64(got: f64, want: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else {
        got.to_bits() == want.to_bits()
    }
}

/// `fract` as OpenCL and LLVM's constant folder define it: `min(x - floor(x), 0x1.fffffffffffffp-1)`,
/// NaN for NaNs and infinities.
fn fract_reference(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

#[test]
fn f64_rounding_ops_round_ties_to_even_and_keep_signs() {
    let inputs = [
        0.5,
        1.5,
        2.5,
        -2.5,
        3.5,
        -0.5,
        0.0,
        -0.0,
        0.499_999_999_999_999_94,
        1.000_000_000_000_000_2,
        -1.000_000_000_000_000_2,
        -1e-20,
        4_503_599_627_370_495.5, // 2^52 - 0.5: the largest f64 with a fraction
        1e300,
        -7.75,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE / 4.0, // a denormal
    ];
    for target in Target::ALL {
        let mut w = wave();
        for lane in 0..64 {
            let bits = inputs[lane % inputs.len()].to_bits();
            w.vgpr[2][lane] = bits as u32;
            w.vgpr[3][lane] = (bits >> 32) as u32;
        }
        run_ok(
            target,
            "v_rndne_f64 v[4:5], v[2:3]\n v_ceil_f64 v[6:7], v[2:3]\n v_fract_f64 v[8:9], v[2:3]\n\
             v_rndne_f64_e64 v[10:11], -v[2:3]\n v_ceil_f64_e64 v[12:13], |v[2:3]|\n v_fract_f64_e64 v[14:15], -v[2:3]",
            &mut w,
        );
        for lane in 0..64 {
            let x = inputs[lane % inputs.len()];
            let checks = [
                ("v_rndne_f64", 4, x.round_ties_even()),
                ("v_ceil_f64", 6, x.ceil()),
                ("v_fract_f64", 8, fract_reference(x)),
                ("v_rndne_f64 -x", 10, (-x).round_ties_even()),
                ("v_ceil_f64 |x|", 12, x.abs().ceil()),
                ("v_fract_f64 -x", 14, fract_reference(-x)),
            ];
            for (what, v, want) in checks {
                let got = f64_pair(&w, v, lane);
                assert!(same_f64(got, want), "{target} {what}({x:e}) = {got:e} ({:#018x}), want {want:e} ({:#018x})", got.to_bits(), want.to_bits());
            }
        }
        // The cases the helpers above are easiest to get wrong, spelled out.
        let lane_of = |x: f64| inputs.iter().position(|i| i.to_bits() == x.to_bits()).unwrap();
        assert_eq!(f64_pair(&w, 4, lane_of(2.5)), 2.0, "{target}: rndne(2.5) ties to even");
        assert_eq!(f64_pair(&w, 4, lane_of(3.5)), 4.0, "{target}: rndne(3.5) ties to even");
        assert_eq!(f64_pair(&w, 4, lane_of(-0.5)).to_bits(), (-0.0f64).to_bits(), "{target}: rndne(-0.5) = -0");
        assert_eq!(f64_pair(&w, 6, lane_of(-0.5)).to_bits(), (-0.0f64).to_bits(), "{target}: ceil(-0.5) = -0");
        assert_eq!(f64_pair(&w, 8, lane_of(-1e-20)), f64::from_bits(0x3fef_ffff_ffff_ffff), "{target}: fract(-tiny) stays below 1");
        assert_eq!(f64_pair(&w, 8, lane_of(-7.75)), 0.25, "{target}: fract(-7.75)");
        assert!(f64_pair(&w, 8, lane_of(f64::INFINITY)).is_nan(), "{target}: fract(inf) is NaN");
    }
}

#[test]
fn v_rcp_iflag_f32_is_a_reciprocal_like_v_rcp_f32() {
    let inputs = [2.0f32, 4.0, -0.5, 1.0, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1024.0, 3.0, -7.0];
    for target in Target::ALL {
        let mut w = wave();
        w.vgpr[1] = std::array::from_fn(|lane| inputs[lane % inputs.len()].to_bits());
        run_ok(target, "v_rcp_iflag_f32 v2, v1\n v_rcp_iflag_f32_e64 v3, -v1\n v_rcp_f32 v4, v1", &mut w);
        for lane in 0..64 {
            let x = inputs[lane % inputs.len()];
            let (got, neg, rcp) = (f32::from_bits(w.vgpr[2][lane]), f32::from_bits(w.vgpr[3][lane]), w.vgpr[4][lane]);
            if x.is_nan() {
                assert!(got.is_nan() && neg.is_nan(), "{target}: rcp_iflag(NaN) = {got}, {neg}");
                continue;
            }
            assert_eq!(w.vgpr[2][lane], rcp, "{target}: rcp_iflag({x}) must equal rcp({x})");
            // Powers of two, zeros and infinities are exact; 1/3 and 1/7 within 1 ulp.
            let want = 1.0 / x;
            let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
            assert!(ulps <= 1, "{target}: rcp_iflag({x}) = {got:e}, want {want:e}");
            if x.abs().log2().fract() == 0.0 || x == 0.0 || x.is_infinite() {
                assert_eq!(got.to_bits(), want.to_bits(), "{target}: rcp_iflag({x}) exact");
                assert_eq!(neg.to_bits(), (1.0 / -x).to_bits(), "{target}: rcp_iflag(-{x}) exact");
            }
        }
    }
}
