//! Property tests: decoding and printing never panic on arbitrary words, and sizes are
//! consistent.

use amdgpu_isa::decode::{decode, decode_bytes, Decoded, Field, InlineFloat, Operand, RegRange};
use amdgpu_isa::disasm::inst_text;
use amdgpu_isa::Target;
use proptest::prelude::*;

fn target_strategy() -> impl Strategy<Value = Target> {
    prop_oneof![Just(Target::Gfx90a), Just(Target::Gfx942), Just(Target::Gfx950)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn decode_does_not_panic(target in target_strategy(), words in proptest::collection::vec(any::<u32>(), 0..4)) {
        match decode(target, &words) {
            Decoded::Inst(inst) => {
                prop_assert!(inst.size_bytes() <= words.len() * 4);
                prop_assert_eq!(inst.words(), &words[..inst.size_bytes() / 4]);
                let text = inst_text(&inst);
                prop_assert!(text.starts_with(inst.opcode().mnemonic()));
                let _ = inst.operands();
                let _ = inst.modifiers();
            }
            Decoded::Invalid { word, .. } | Decoded::Truncated { word, .. } => {
                prop_assert_eq!(word, words.first().copied().unwrap_or(0));
            }
        }
    }

    #[test]
    fn decode_bytes_does_not_panic(target in target_strategy(), bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
        let d = decode_bytes(target, &bytes);
        if let Decoded::Inst(inst) = d {
            prop_assert!(inst.size_bytes() <= bytes.len());
        }
    }
}

#[test]
fn target_names_round_trip() {
    for t in Target::ALL {
        assert_eq!(t.name().parse::<Target>(), Ok(t));
    }
    assert!("gfx1100".parse::<Target>().is_err());
}

#[test]
fn known_words_decode() {
    // s_load_dword s3, s[0:1], 0x8 on gfx942
    let d = decode(Target::Gfx942, &[0xC00200C0, 0x00000008]);
    let Decoded::Inst(inst) = d else { panic!("expected an instruction, got {d:?}") };
    assert_eq!(inst.size_bytes(), 8);
    assert_eq!(inst_text(&inst), "s_load_dword s3, s[0:1], 0x8");
    // s_and_b32 s2, s3, 0x7ffffffe has a literal
    let d = decode(Target::Gfx90a, &[0x8602FF03, 0x7FFFFFFE]);
    let Decoded::Inst(inst) = d else { panic!("expected an instruction, got {d:?}") };
    assert_eq!(inst.literal(), Some(0x7FFFFFFE));
    assert_eq!(inst_text(&inst), "s_and_b32 s2, s3, 0x7ffffffe");
    // a literal-taking instruction without its literal is truncated
    assert!(matches!(decode(Target::Gfx90a, &[0x8602FF03]), Decoded::Truncated { .. }));
    // v_pk_add_f32 v[4:5], v[4:5], 1.0 op_sel_hi:[1,0]: operands by role
    let Decoded::Inst(inst) = decode(Target::Gfx942, &[0xD3B24004, 0x0801E504]) else { panic!("v_pk_add_f32") };
    assert_eq!(inst.operand(Field::Vdst), Some(Operand::Vgpr(RegRange { first: 4, count: 2 })));
    assert_eq!(inst.operand(Field::Src1), Some(Operand::InlineFloat(InlineFloat::One)));
    assert_eq!(inst.operand(Field::Src2), None);
    assert_eq!(inst.modifiers().op_sel_hi & 3, 1);
    // 0xffffffff is not an instruction
    assert!(matches!(decode(Target::Gfx942, &[0xffff_ffff]), Decoded::Invalid { .. }));
}
