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
