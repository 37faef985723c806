//! One test per executor defect that once gave a silently wrong result, each named after
//! what it checks; every one fails on the code before its fix.

mod common;

use amdgpu_isa::exec::{run_single_wave, ExecFault, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;

const BASE: u64 = 0x10_0000;

fn run(target: Target, text: &str, w: &mut Wave, mem: &mut Memory) -> Result<u64, ExecFault> {
    let program = Program::from_words(target, BASE, &common::assemble(target, text));
    w.pc = BASE;
    w.status = WaveStatus::Running;
    let mut lds = vec![0u8; 64 * 1024];
    run_single_wave(&program, w, mem, &mut lds, 100_000)
}

fn run_ok(target: Target, text: &str, w: &mut Wave) {
    let mut mem = Memory::new();
    run(target, text, w, &mut mem).unwrap_or_else(|e| panic!("{target}: {text}: {e}"));
}

/// A 32-bit literal of a 64-bit unsigned or bitwise operand is zero-extended, of a
/// signed one sign-extended (rocRAND's MRG32k3a compares a u64 against m1 = 0xffffff2f
/// and was off by 2^32 - m1 = 209).
#[test]
fn literal_of_a_64_bit_operand_is_extended_by_its_type() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        // v[0:1] = 0xffffff2e in every lane: below m1 as u64, above -209 as i64.
        w.vgpr[0] = [0xffff_ff2e; 64];
        w.vgpr[1] = [0; 64];
        run_ok(
            target,
            "s_mov_b64 s[0:1], 0xffffff2f\n\
             v_cmp_gt_u64_e32 vcc, 0xffffff2f, v[0:1]\n s_mov_b64 s[2:3], vcc\n\
             v_cmp_gt_i64_e32 vcc, 0xffffff2f, v[0:1]\n s_mov_b64 s[4:5], vcc\n\
             s_and_b64 s[6:7], -1, 0xffffff2f\n\
             s_ashr_i64 s[8:9], 0xffffff2f, 4",
            &mut w,
        );
        assert_eq!(w.sgpr_pair(0), 0xffff_ff2f, "{target}: s_mov_b64 zero-extends its literal");
        assert_eq!(w.sgpr_pair(2), u64::MAX, "{target}: u64 compare: 0xffffff2f > 0xffffff2e");
        assert_eq!(w.sgpr_pair(4), 0, "{target}: i64 compare: -209 > 0xffffff2e is false");
        assert_eq!(w.sgpr_pair(6), 0xffff_ff2f, "{target}: b64 operand zero-extends");
        assert_eq!(w.sgpr_pair(8), (-209i64 >> 4) as u64, "{target}: s_ashr_i64 sign-extends");
    }
}

/// `s_max_i32`/`s_max_u32` set SCC when the first operand is selected, `S0 >= S1`: equal
/// operands set it (the CDNA pseudo-code); it was `S0 > S1`.
#[test]
fn s_max_sets_scc_for_equal_operands() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        w.sgpr[0] = 7;
        run_ok(target, "s_max_i32 s1, s0, s0\ns_cselect_b32 s2, 1, 0\ns_max_u32 s3, s0, s0\ns_cselect_b32 s4, 1, 0", &mut w);
        assert_eq!((w.sgpr[2], w.sgpr[4]), (1, 1), "{target}");
    }
}

/// An SMEM load with IMM=0 and SOE=1 adds only `SGPR[SOFFSET]` (the OFFSET field is not
/// an SGPR number then, as LLVM's disassembler also reads it); it added both.
#[test]
fn smem_soffset_without_imm_ignores_the_offset_field() {
    for target in Target::ALL {
        let words = common::assemble(target, "s_load_dword s1, s[2:3], s5");
        // Same instruction with SOE set and SOFFSET = s6; the OFFSET field still says 5.
        let code = [words[0] | 1 << 14, words[1] | 6 << 25, words[2]];
        let program = Program::from_words(target, BASE, &code);
        let mut w = Wave::new(BASE, 0x3f0);
        let mut mem = Memory::new();
        mem.map(0x2000_0000, 0x1000).unwrap();
        mem.write_u32(0x2000_0040, 0xaaaa).unwrap();
        mem.write_u32(0x2000_0140, 0xbbbb).unwrap();
        w.set_sgpr_pair(2, 0x2000_0000);
        w.sgpr[5] = 0x100;
        w.sgpr[6] = 0x40;
        run_single_wave(&program, &mut w, &mut mem, &mut [0u8; 64], 100).unwrap();
        assert_eq!(w.sgpr[1], 0xaaaa, "{target}");
    }
}

/// `s_bfe_i32`/`s_bfe_i64` shift `S0` arithmetically, so a field that reaches past the top
/// bit fills with the sign (it filled with zeros); `s_bfe_u32` takes its offset from
/// `S1[4:0]` only (offset 32 read zero instead of bit 0).
#[test]
fn s_bfe_sign_fills_and_wraps_its_offset() {
    for target in Target::ALL {
        let mut w = Wave::new(BASE, 0x3f0);
        w.sgpr[0] = 0x8000_0000;
        w.sgpr[1] = 20 | 20 << 16;
        w.set_sgpr_pair(2, 1 << 63);
        w.sgpr[4] = 60 | 10 << 16;
        w.sgpr[5] = 0x1234_5679;
        w.sgpr[6] = 32 | 4 << 16;
        run_ok(target, "s_bfe_i32 s10, s0, s1\ns_bfe_i64 s[12:13], s[2:3], s4\ns_bfe_u32 s11, s5, s6", &mut w);
        assert_eq!(w.sgpr[10], 0xffff_f800, "{target}: s_bfe_i32");
        assert_eq!(w.sgpr_pair(12), u64::MAX << 3, "{target}: s_bfe_i64");
        assert_eq!(w.sgpr[11], 9, "{target}: s_bfe_u32");
    }
}
