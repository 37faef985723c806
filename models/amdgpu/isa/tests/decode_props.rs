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
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(20_000)))]

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

/// Tuple operands whose value LLVM rejects make the whole word invalid, as in
/// llvm-objdump: `m0`, the odd half of a named pair and `src_lds_direct` in a 64-bit
/// scalar source, `m0` as an SMEM base or buffer resource, and (LLVM 22, gfx950 only)
/// named registers in a 128-bit SMEM base.
#[test]
fn tuple_operand_values_llvm_rejects() {
    let text = |t: Target, w: &[u32]| amdgpu_isa::disasm::text(t, w);
    // s_and_b64 s[0:1], SSRC0, s[2:3]
    let s_and_b64 = |ssrc0: u32| 0x8680_0200 | ssrc0;
    for t in Target::ALL {
        assert_eq!(text(t, &[s_and_b64(0x7e)]).as_deref(), Some("s_and_b64 s[0:1], exec, s[2:3]"), "{t}");
        assert_eq!(text(t, &[s_and_b64(0x6a)]).as_deref(), Some("s_and_b64 s[0:1], vcc, s[2:3]"), "{t}");
        for bad in [0x7c, 0x7f, 0x6b, 0xfe] {
            assert!(matches!(decode(t, &[s_and_b64(bad)]), Decoded::Invalid { .. }), "{t} ssrc0 {bad:#x}");
        }
        // s_load_dword s5, s[4:5], 0x10 and the same with base 124 (m0).
        assert_eq!(text(t, &[0xc002_0142, 0x10]).as_deref(), Some("s_load_dword s5, s[4:5], 0x10"), "{t}");
        assert!(matches!(decode(t, &[0xc002_017e, 0x10]), Decoded::Invalid { .. }), "{t}");
    }
    // s_buffer_load_dword s5, xnack_mask, 0x10: LLVM 19 annotates, LLVM 22 rejects.
    let w = [0xc022_0174, 0x10];
    for t in [Target::Gfx90a, Target::Gfx942] {
        assert_eq!(
            text(t, &w).as_deref(),
            Some("s_buffer_load_dword s5, xnack_mask/*Invalid register, operand has 'SReg_128' register class*/, 0x10"),
            "{t}"
        );
    }
    assert!(matches!(decode(Target::Gfx950, &w), Decoded::Invalid { .. }));
    // v_cmp_lt_f64_e32 vcc, v[255:256], v[0:1]: LLVM 19 rejects the tuple past v255,
    // LLVM 22 decodes it.
    let w = [0x7cc2_01ff];
    for t in [Target::Gfx90a, Target::Gfx942] {
        assert!(matches!(decode(t, &w), Decoded::Invalid { .. }), "{t}");
    }
    assert!(matches!(decode(Target::Gfx950, &w), Decoded::Inst(_)));
}
