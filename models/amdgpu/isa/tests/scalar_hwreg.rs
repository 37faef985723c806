//! `s_getreg_b32`, `s_setreg_b32` and `s_setreg_imm32_b32` against references written from
//! the ISA's pseudo-code and register tables: bit-field selection of every register with
//! random `hwreg(id, offset, size)` operands (the instruction words come from llvm-mc with
//! their `simm16` replaced), the MODE write rules, STATUS from the wave's state, the
//! registers this model does not know (refused, never made up), and HW_ID, GPR_ALLOC and
//! LDS_ALLOC of every wave a kernel launched by the functional dispatcher.

mod common;
mod support;

use amdgpu_isa::code_object::CodeObject;
use amdgpu_isa::exec::{run_kernel, run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use support::build::{build_or_fail, read_or_fail, BuildRequest};

const BASE: u64 = 0x10_0000;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(Config { cases, failure_persistence: None, ..Config::default() }, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// `s_setreg_b32 <field>, s20` and `s_getreg_b32 s21, <field>` words, whose low 16 bits
/// (the `simm16`) the tests replace.
fn templates(target: Target) -> (u32, u32) {
    let words = common::assemble(target, "s_setreg_b32 hwreg(HW_REG_MODE, 0, 1), s20\ns_getreg_b32 s21, hwreg(HW_REG_MODE, 0, 1)");
    (words[0] & !0xffff, words[1] & !0xffff)
}

fn simm16(id: u32, offset: u32, size: u32) -> u32 {
    id | (offset << 6) | ((size - 1) << 11)
}

/// The bits `hwreg(_, offset, size)` names, as the pseudo-code computes them in 32 bits.
fn ref_mask(offset: u32, size: u32) -> u32 {
    let mut m = 0u32;
    for b in offset..(offset + size).min(32) {
        m |= 1 << b;
    }
    m
}

/// Runs `words` (an `s_endpgm` appended) on `w`.
fn run_words(target: Target, words: &[u32], w: &mut Wave) -> Result<u64, ExecFault> {
    let mut code = words.to_vec();
    code.push(0xbf81_0000);
    let p = Program::from_words(target, BASE, &code);
    w.pc = BASE;
    w.status = WaveStatus::Running;
    run_single_wave(&p, w, &mut Memory::new(), &mut [0u8; 64], 100)
}

/// MODE bits a write may not set here: DEBUG_EN and the exception enables (traps are not
/// modelled). GPR_IDX_EN may change like `s_set_gpr_idx_on`/`off` change it.
const MODE_TRAPS: u32 = 0x3ff << 12 | 1 << 11;

/// `s_setreg` of MODE replaces the selected bits of MODE and `s_getreg` reads any field
/// of the result, for random fields and values; writes that would enable a trap are
/// refused.
#[test]
fn mode_fields_read_and_write_like_the_pseudo_code() {
    for target in Target::ALL {
        let (set, get) = templates(target);
        let inputs = (any::<u32>(), 0u32..32, 1u32..=32, any::<u32>(), 0u32..32, 1u32..=32);
        runner(1500)
            .run(&inputs, |(initial, off, size, value, off2, size2)| {
                let initial = initial & !MODE_TRAPS;
                let mut w = Wave::new(BASE, initial);
                w.sgpr[20] = value;
                let words = [set | simm16(1, off, size), get | simm16(1, off2, size2)];
                let result = run_words(target, &words, &mut w);
                let mask = ref_mask(off, size);
                let new = (initial & !mask) | (value.wrapping_shl(off) & mask);
                if new & MODE_TRAPS != 0 {
                    prop_assert!(matches!(result, Err(ExecFault::Unsupported { .. })), "{}: {:?}", target, result);
                    prop_assert_eq!(w.mode_bits, initial);
                    return Ok(());
                }
                result.map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(w.mode_bits, new, "{}: MODE after the write", target);
                prop_assert_eq!(w.sgpr[21], (new & ref_mask(off2, size2)) >> off2, "{}: field read", target);
                Ok(())
            })
            .unwrap();
    }
}

/// Reads `hwreg(id, offset, size)` of `w`: the value, or `None` when refused.
fn get(target: Target, w: &mut Wave, id: u32, offset: u32, size: u32) -> Option<u32> {
    let (_, get) = templates(target);
    match run_words(target, &[get | simm16(id, offset, size)], w) {
        Ok(_) => Some(w.sgpr[21]),
        Err(ExecFault::Unsupported { .. }) => None,
        Err(e) => panic!("{target}: {e}"),
    }
}

/// STATUS reports SCC, EXECZ and VCCZ of the wave, a present trap handler (TRAP_EN),
/// no privilege and a valid wave; the priority a shader sets is not tracked (refused).
#[test]
fn status_follows_the_wave() {
    for target in Target::ALL {
        let (_, getw) = templates(target);
        runner(200)
            .run(&(any::<bool>(), prop_oneof![Just(0u64), any::<u64>()], prop_oneof![Just(0u64), any::<u64>()]), |(scc, exec, vcc)| {
                let mut w = Wave::new(BASE, 0);
                w.scc = scc;
                w.set_exec(exec);
                w.set_vcc(vcc);
                let fields = [(0, 1), (5, 1), (6, 1), (9, 1), (10, 1), (12, 3), (16, 2), (19, 3)];
                let expected = [scc as u32, 0, 1, (exec == 0) as u32, (vcc == 0) as u32, 0, 1, 0];
                for ((off, size), want) in fields.into_iter().zip(expected) {
                    let mut x = w.clone();
                    run_words(target, &[getw | simm16(2, off, size)], &mut x).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(x.sgpr[21], want, "{}: STATUS bits {}+{}", target, off, size);
                }
                Ok(())
            })
            .unwrap();
        let mut w = Wave::new(BASE, 0);
        assert_eq!(get(target, &mut w, 2, 3, 2), None, "{target}: WAVE_PRIO is not tracked");
        assert_eq!(get(target, &mut w, 2, 15, 1), None, "{target}: TTRACE_CU_EN is the CU's configuration");
        assert_eq!(get(target, &mut w, 2, 0, 32), None, "{target}: the whole STATUS has unknown bits");
    }
}

/// Registers and fields whose values the model does not know are refused; reserved ids
/// read zero; SH_MEM_BASES holds the executor's apertures; IB_STS is zero when every
/// access completes at once; writes without a modelled effect are dropped and writes
/// with an unmodelled one refused.
#[test]
fn other_registers_and_the_unknown() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0);
        // SH_MEM_BASES: private aperture 0x0002_0000_xxxx_xxxx, LDS 0x0001_0000_xxxx_xxxx.
        assert_eq!(get(target, &mut w, 15, 0, 16), Some(0x2), "{target}");
        assert_eq!(get(target, &mut w, 15, 16, 16), Some(0x1), "{target}");
        assert_eq!(get(target, &mut w, 7, 0, 32), Some(0), "{target}: IB_STS");
        assert_eq!(get(target, &mut w, 3, 0, 9), None, "{target}: TRAPSTS.EXCP is not tracked");
        assert_eq!(get(target, &mut w, 3, 10, 19), Some(0), "{target}: TRAPSTS without EXCP and DP_RATE");
        for id in 16..20 {
            assert_eq!(get(target, &mut w, id, 0, 32), None, "{target}: TBA/TMA {id}");
        }
        for id in [0, 8, 9, 10, 11, 12, 13, 14, 25, 40, 63] {
            assert_eq!(get(target, &mut w, id, 0, 32), Some(0), "{target}: reserved {id}");
        }
        // XCC_ID and the snapshot registers exist on gfx942 and gfx950 only.
        let xcc = get(target, &mut w, 20, 0, 4);
        assert_eq!(xcc, if target == Target::Gfx90a { Some(0) } else { None }, "{target}: XCC_ID of an unplaced wave");
        // HW_ID and GPR bases of a wave nobody placed are unknown; its VGPR allocation is not.
        assert_eq!(get(target, &mut w, 4, 0, 32), None, "{target}");
        assert_eq!(get(target, &mut w, 5, 8, 6), Some(512 / 8 - 1), "{target}: VGPR_SIZE of 256 + 256 VGPRs");
        let (set, _) = templates(target);
        for (id, off, size, value, ok) in [
            (4, 0, 32, u32::MAX, true),
            (5, 0, 32, u32::MAX, true),
            (2, 0, 32, u32::MAX, true),
            (16, 0, 32, 7, true),
            (3, 0, 9, 0x1ff, true),
            (3, 10, 1, 1, false),
            (7, 0, 32, 0, false),
            (1, 12, 1, 1, false),
            (1, 11, 1, 1, false),
            (1, 27, 1, 1, true),
        ] {
            let mut x = Wave::new(BASE, 0);
            x.sgpr[20] = value;
            let result = run_words(target, &[set | simm16(id, off, size)], &mut x);
            assert_eq!(result.is_ok(), ok, "{target}: s_setreg hwreg({id}, {off}, {size}) = {value:#x}: {result:?}");
        }
        let mut x = Wave::new(BASE, 0);
        x.sgpr[20] = u32::MAX;
        run_words(target, &[set | simm16(4, 0, 32)], &mut x).unwrap();
        assert_eq!(x.place, Wave::new(BASE, 0).place, "{target}: HW_ID is read-only");
    }
}

/// The hand-written kernel: every wave stores HW_ID, GPR_ALLOC, LDS_ALLOC, STATUS.IN_TG
/// and XCC_ID (register 20, reserved on gfx90a) to `out[wave * 8 ..]` with scalar stores.
fn hw_id_kernel(waves_per_group: u32) -> String {
    format!(
        r#"	.text
	.globl	hwid
	.p2align	8
	.type	hwid,@function
hwid:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	v_readfirstlane_b32 s10, v0
	s_lshr_b32 s10, s10, 6
	s_mul_i32 s11, s2, {waves_per_group}
	s_add_u32 s10, s10, s11
	s_lshl_b32 s12, s10, 5
	s_getreg_b32 s16, hwreg(HW_REG_HW_ID)
	s_getreg_b32 s17, hwreg(HW_REG_GPR_ALLOC)
	s_getreg_b32 s18, hwreg(HW_REG_LDS_ALLOC)
	s_getreg_b32 s19, hwreg(HW_REG_STATUS, 11, 1)
	s_getreg_b32 s20, hwreg(20)
	s_waitcnt lgkmcnt(0)
	s_store_dwordx4 s[16:19], s[4:5], s12
	s_add_u32 s12, s12, 16
	s_store_dword s20, s[4:5], s12
	s_dcache_wb
	s_endpgm
.Lhwid_end:
	.size	hwid, .Lhwid_end-hwid

	.rodata
	.p2align	6
	.amdhsa_kernel hwid
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 20
		.amdhsa_next_free_sgpr 24
		.amdhsa_accum_offset 20
		.amdhsa_kernarg_size 8
		.amdhsa_group_segment_fixed_size 1000
		.amdhsa_private_segment_fixed_size 0
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name:                       hwid
    .symbol:                     hwid.kd
    .kernarg_segment_size:       8
    .kernarg_segment_align:      8
    .group_segment_fixed_size:   1000
    .private_segment_fixed_size: 0
    .wavefront_size:             64
    .sgpr_count:                 30
    .vgpr_count:                 20
    .max_flat_workgroup_size:    1024
    .args:
      - {{ .name: out, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }}
...
	.end_amdgpu_metadata
"#
    )
}

/// HW_ID, GPR_ALLOC and LDS_ALLOC describe where each wave of a dispatch runs (the
/// functional dispatcher puts a group alone on CU 0 of SE 0: wave `i` on SIMD `i % 4` as
/// its wave `i / 4`, registers packed per SIMD, LDS from 0, ME 1, VMID 8). Before, every
/// field read zero.
#[test]
fn hw_id_and_allocation_registers_describe_each_wave() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("scalar-hwreg");
    std::fs::create_dir_all(&dir).unwrap();
    let waves = 8;
    let src = dir.join("hwid.s");
    std::fs::write(&src, hw_id_kernel(waves)).unwrap();
    for target in Target::ALL {
        let code = CodeObject::parse(&read_or_fail(&build_or_fail(&BuildRequest::new(&src, target.name())))).expect("parses");
        let kd = &code.kernel("hwid").expect("kernel").descriptor;
        let (vg, sg) = (kd.vgpr_count() / 8, kd.sgpr_count() / 16 + 1);
        let out = 0x1_0000_0000u64;
        let groups = 3;
        let mut mem = Memory::new();
        mem.map(out, 4096).unwrap();
        run_kernel(&code, "hwid", [64 * waves * groups, 1, 1], [64 * waves, 1, 1], &out.to_le_bytes(), &mut mem).expect("runs");
        let lds_units = if target == Target::Gfx950 { 1280 / 256 } else { 1024 / 256 };
        for i in 0..waves * groups {
            let word = |k: u64| mem.read_u32(out + u64::from(i) * 32 + 4 * k).unwrap();
            let (slot, simd) = ((i % waves) / 4, (i % waves) % 4);
            let hw_id = slot | (simd << 4) | (8 << 20) | (1 << 30);
            assert_eq!(word(0), hw_id, "{target} wave {i}: HW_ID");
            let gpr = (slot * vg) | ((vg - 1) << 8) | ((slot * sg) << 16) | ((sg - 1) << 24);
            assert_eq!(word(1), gpr, "{target} wave {i}: GPR_ALLOC ({vg} VGPR and {sg} SGPR granules)");
            assert_eq!(word(2), lds_units << 12, "{target} wave {i}: LDS_ALLOC of 1000 bytes");
            assert_eq!(word(3), 1, "{target} wave {i}: IN_TG");
            assert_eq!(word(4), 0, "{target} wave {i}: XCC_ID");
        }
    }
}
