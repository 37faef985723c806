//! The executor never panics: random instruction words of every encoding family, run as
//! one wave with random registers over a memory whose unmapped reads return zero, end in
//! `Ok` or in an `ExecFault` value.

use amdgpu_isa::exec::{run_single_wave, Memory, Program, UnmappedReads, Wave};
use amdgpu_isa::decode::{decode, Decoded};
use amdgpu_isa::Target;
use proptest::prelude::*;

/// Top bits of each encoding family (value, number of fixed bits).
const FAMILIES: [(u32, u32); 12] = [
    (0b10, 2),         // SOP2/SOPK/SOP1/SOPC/SOPP
    (0b1_0111_1101, 9), // SOP1
    (0b1_0111_1111, 9), // SOPP
    (0b0, 1),          // VOP2/VOP1/VOPC
    (0b011_1111, 7), // VOP1
    (0b110000, 6),     // SMEM
    (0b110100, 6),     // VOP3
    (0b1_1010_0111, 9), // VOP3P
    (0b110110, 6),     // DS
    (0b110111, 6),     // FLAT/GLOBAL/SCRATCH
    (0b111000, 6),     // MUBUF
    (0b111010, 6),     // MTBUF
];

fn word(family: usize, low: u32) -> u32 {
    let (bits, n) = FAMILIES[family];
    (bits << (32 - n)) | (low >> n)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_instructions_never_panic(
        target in 0usize..3,
        insts in prop::collection::vec((0usize..FAMILIES.len(), any::<u32>(), any::<u32>()), 1..6),
        sgprs in prop::collection::vec(any::<u32>(), 128),
        vgpr_seed in any::<u32>(),
        exec in any::<u64>(),
    ) {
        let target = Target::ALL[target];
        // Rejection-sample each instruction until the decoder accepts it, so the handlers
        // (not just the illegal-word path) see random operands.
        let mut words = Vec::new();
        for (family, low, second) in insts {
            let mut state = (low as u64) << 32 | second as u64 | 1;
            for _ in 0..256 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let cand = [word(family, state as u32), (state >> 32) as u32, 0x3f80_0000];
                if let Decoded::Inst(inst) = decode(target, &cand) {
                    words.extend_from_slice(inst.words());
                    break;
                }
            }
        }
        words.push(0xbf81_0000); // s_endpgm
        let program = Program::from_words(target, 0x1000, &words);
        let mut wave = Wave::new(0x1000, 0x3f0);
        wave.sgpr.copy_from_slice(&sgprs);
        for (r, reg) in wave.vgpr.as_mut_slice().iter_mut().enumerate().take(16) {
            for (lane, v) in reg.iter_mut().enumerate() {
                *v = vgpr_seed.wrapping_mul(r as u32 * 64 + lane as u32 + 1).rotate_left(lane as u32);
            }
        }
        wave.set_exec(exec);
        let mut mem = Memory::with_unmapped_reads(UnmappedReads::Zero);
        let mut lds = vec![0u8; 4096];
        // Ok or a fault value: either is fine, a panic fails the test.
        let _ = run_single_wave(&program, &mut wave, &mut mem, &mut lds, 64);
    }
}
