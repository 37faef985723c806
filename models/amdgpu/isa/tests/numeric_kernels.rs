//! Packed VOP3P selection and ops, `v_dot*`, MFMA element kernels, and the slice loops'
//! equality with their scalar counterparts.

use amdgpu_isa::numeric::convert::{f16_to_f32, f32_to_bf16, f32_to_f16};
use amdgpu_isa::numeric::dot::*;
use amdgpu_isa::numeric::fp8::Fp8Format;
use amdgpu_isa::numeric::packed::*;
use amdgpu_isa::numeric::transcendental::TransOp;
use amdgpu_isa::numeric::{slices, valu, DenormMode, Mode, RoundMode};
use proptest::prelude::*;

fn h(x: f32) -> u16 {
    f32_to_f16(x, RoundMode::NearestEven)
}

#[test]
fn vop3p_half_selection_and_negation() {
    let src = pack(h(1.0), h(2.0));
    let default = PackedSel::default();
    assert_eq!(default.halves(src, 0), (h(1.0), h(2.0)));
    // op_sel[0] = 1: low lane reads the high half; op_sel_hi[0] = 0: high lane reads low.
    let swapped = PackedSel { op_sel: 0b001, op_sel_hi: 0b110, ..default };
    assert_eq!(swapped.halves(src, 0), (h(2.0), h(1.0)));
    // Broadcast the low half to both lanes.
    let broadcast = PackedSel { op_sel: 0, op_sel_hi: 0, ..default };
    assert_eq!(broadcast.halves(src, 0), (h(1.0), h(1.0)));
    // neg_lo / neg_hi act on the lane, after selection.
    let neg = PackedSel { neg_lo: 0b010, neg_hi: 0b000, ..default };
    assert_eq!(neg.halves_f16(src, 1), (h(-1.0), h(2.0)));
    assert_eq!(neg.halves_f16(src, 0), (h(1.0), h(2.0)));
    // Packed f32 pairs.
    let pair = (2.0f32.to_bits() as u64) << 32 | 1.0f32.to_bits() as u64;
    let sel = PackedSel { op_sel: 0b1, op_sel_hi: 0b0, neg_lo: 0, neg_hi: 0b1 };
    assert_eq!(sel.dwords_f32(pair, 0), (2.0, -1.0));
    // op_sel[0] = 1 takes S0's high dword (2.0); op_sel[1] = 0 takes S1's low dword.
    let other = (4.0f32.to_bits() as u64) << 32 | 3.0f32.to_bits() as u64;
    let two = 2.0f32.to_bits() as u64;
    let three = 3.0f32.to_bits() as u64;
    let four = 4.0f32.to_bits() as u64;
    assert_eq!(pk_mov_b32(pair, other, 0b01), three << 32 | two);
    assert_eq!(pk_mov_b32(pair, other, 0b10), four << 32 | 1.0f32.to_bits() as u64);
}

#[test]
fn packed_f16_and_integer_ops() {
    let mode = Mode::IEEE_DENORMALS;
    let sel = PackedSel::default();
    let a = pack(h(1.5), h(-2.0));
    let b = pack(h(2.0), h(0.25));
    let c = pack(h(0.5), h(1.0));
    assert_eq!(pk_fma_f16(a, b, c, sel, false, mode), pack(h(3.5), h(0.5)));
    assert_eq!(pk_add_f16(a, b, sel, false, mode), pack(h(3.5), h(-1.75)));
    assert_eq!(pk_mul_f16(a, b, sel, false, mode), pack(h(3.0), h(-0.5)));
    assert_eq!(pk_mul_f16(a, b, sel, true, mode), pack(h(1.0), 0));
    assert_eq!(pk_min_f16(a, b, sel, false, mode), pack(h(1.5), h(-2.0)));
    assert_eq!(pk_max_f16(a, b, sel, false, mode), pack(h(2.0), h(0.25)));
    // f16 overflow: Inf, or the max finite value with FP16_OVFL.
    let big = pack(h(60000.0), h(60000.0));
    assert_eq!(pk_add_f16(big, big, sel, false, mode), pack(0x7c00, 0x7c00));
    let sat = Mode { fp16_ovfl: true, ..mode };
    assert_eq!(pk_add_f16(big, big, sel, false, sat), pack(0x7bff, 0x7bff));
    // NaN-propagating gfx950 minimum3/maximum3.
    let n = pack(0x7e00, h(3.0));
    assert_eq!(pk_minimum3_f16(n, a, b, sel) & 0xffff, 0x7e00);
    assert_eq!(pk_maximum3_f16(n, a, b, sel) >> 16, h(3.0) as u32);
    // Integers: wrap vs clamp, per-lane shifts taken from the selected S0 halves.
    let x = pack(0xfff0, 0x7ff0);
    let y = pack(0x0020, 0x0020);
    assert_eq!(PkIntOp::AddU16.eval(x, y, sel, false), pack(0x0010, 0x8010));
    assert_eq!(PkIntOp::AddU16.eval(x, y, sel, true), pack(0xffff, 0x8010));
    assert_eq!(PkIntOp::AddI16.eval(x, y, sel, true), pack(0x0010, 0x7fff));
    assert_eq!(PkIntOp::SubU16.eval(y, x, sel, true), pack(0, 0));
    assert_eq!(PkIntOp::LshlRevB16.eval(pack(4, 17), pack(1, 1), sel, false), pack(16, 2));
    assert_eq!(PkIntOp::AshrRevI16.eval(pack(1, 1), pack(0x8000, 4), sel, false), pack(0xc000, 2));
    assert_eq!(PkIntOp::MaxI16.eval(x, y, sel, false), pack(0x0020, 0x7ff0));
    assert_eq!(PkIntOp::MinU16.eval(x, y, sel, false), pack(0x0020, 0x0020));
    assert_eq!(pk_mad_16(pack(300, 2), pack(300, 3), pack(0, 0xffff), sel, false, true), pack(0xffff, 0xffff));
    assert_eq!(pk_mad_16(pack(300, 2), pack(300, 3), pack(0, 1), sel, false, false), pack((90000u32 & 0xffff) as u16, 7));
    assert_eq!(pk_mad_16(pack(0x8000, 2), pack(2, 3), pack(0, 4), sel, true, true), pack(0x8000, 10));
    // Packed f32 (gfx90a+).
    let p = |lo: f32, hi: f32| (hi.to_bits() as u64) << 32 | lo.to_bits() as u64;
    let r = pk_f32(PkF32Op::Fma, p(2.0, 3.0), p(4.0, 5.0), p(1.0, 1.0), sel, false, mode);
    assert_eq!(r, p(9.0, 16.0));
    let r = pk_f32(PkF32Op::Mul, p(2.0, 3.0), p(4.0, 5.0), 0, sel, true, mode);
    assert_eq!(r, p(1.0, 1.0));
    let r = pk_f32(PkF32Op::Add, p(2.0, 3.0), p(4.0, 5.0), 0, PackedSel { neg_hi: 0b10, ..sel }, false, mode);
    assert_eq!(r, p(6.0, -2.0));
    // Mixed-precision fma sources.
    let mix = PackedSel { op_sel: 0b010, op_sel_hi: 0b011, ..sel };
    let s1 = pack(h(7.0), h(0.5));
    assert_eq!(fma_mix_f32(pack(h(3.0), 0), s1, 1.0f32.to_bits(), mix, RoundMode::NearestEven), 2.5);
}

#[test]
fn dot_instructions() {
    let rm = RoundMode::NearestEven;
    let a = pack(h(1.5), h(2.0));
    let b = pack(h(4.0), h(-0.5));
    assert_eq!(dot2_f32_f16(a, b, 10.0, rm), 15.0);
    let ab = f32_to_bf16(3.0, rm) as u32 | (f32_to_bf16(-1.0, rm) as u32) << 16;
    let bb = f32_to_bf16(2.0, rm) as u32 | (f32_to_bf16(2.0, rm) as u32) << 16;
    assert_eq!(dot2_f32_bf16(ab, bb, 0.5, rm), 4.5);
    assert_eq!(dot2c_f32_bf16(ab, bb, 0.5, rm), 4.5);
    // Order matters: C first (f16) vs C last (bf16).
    let big = 1.0e8f32;
    let one = pack(h(1.0), h(1.0));
    assert_eq!(dot2_f32_f16(one, one, big, rm), big); // (1e8 + 1) + 1 rounds back each time
    let bone = f32_to_bf16(1.0, rm) as u32 * 0x1_0001;
    assert_eq!(dot2_f32_bf16(bone, bone, big, rm), big + 2.0);
    // Integer dots, wrap vs clamp.
    assert_eq!(dot2_i32_i16(0x7fff_7fff, 0x7fff_7fff, i32::MAX as u32, true), i32::MAX as u32);
    assert_eq!(dot2_i32_i16(0xffff_0002, 0x0003_0004, 0, false), (8 - 3) as u32);
    assert_eq!(dot2_u32_u16(0xffff_ffff, 0xffff_ffff, u32::MAX, true), u32::MAX);
    assert_eq!(dot4_i32_i8(0x80ff_0102, 0x8001_0304, 1, false), (1 + 8 + 3 - 1 + 16384) as u32);
    assert_eq!(dot4_u32_u8(0xff00_0102, 0x0200_0304, 0, false), 11 + 510);
    assert_eq!(dot8_i32_i4(0x0000_00f7, 0x0000_0022, 0, false), (14 - 2) as u32);
    assert_eq!(dot8_u32_u4(0xffff_ffff, 0xffff_ffff, 0, false), 8 * 225);
    assert_eq!(dot4_i32_i8(0x8080_8080, 0x8080_8080, i32::MAX as u32, true), i32::MAX as u32);
    assert_eq!(dot4_i32_i8(0x8080_8080, 0x8080_8080, i32::MAX as u32, false), (i32::MAX as u32).wrapping_add(65536));
}

#[test]
fn mfma_element_kernels() {
    // f64 and f32 use fused steps in order.
    assert_eq!(mfma_f64_step(1.0, 2.0, 3.0), 7.0);
    let a = [1.0f32 + f32::EPSILON, 1.0];
    let b = [1.0f32 - f32::EPSILON, 1.0];
    assert_eq!(mfma_f32_dot(-1.0, &a[..1], &b[..1]), -f32::EPSILON * f32::EPSILON);
    assert_eq!(mfma_f32_dot(0.0, &a, &b), valu::fma_f32(1.0, 1.0, a[0] * b[0], RoundMode::NearestEven));
    // xf32 rounds inputs to 10 mantissa bits.
    assert_eq!(round_to_xf32(1.0 + 2f32.powi(-11)), 1.0); // tie -> even
    assert_eq!(round_to_xf32(1.0 + 3.0 * 2f32.powi(-11)), 1.0 + 2f32.powi(-9));
    assert_eq!(mfma_xf32_dot(0.0, &[1.0 + 2f32.powi(-12)], &[3.0]), 3.0);
    // f16 block: exact products, one rounding of (acc + block).
    let x = [h(1.0), h(2.0f32.powi(-14)), h(-1.0), h(0.5)];
    let y = [h(1.0), h(2.0f32.powi(-10)), h(1.0), h(0.5)];
    // 1 + 2^-24 - 1 + 0.25 = 0.25 + 2^-24 exactly; added to 1e-3 and rounded once.
    let expect = (1e-3f64 + 0.25 + 2f64.powi(-24)) as f32;
    assert_eq!(dot_f16_f32(x, y, 1e-3), expect);
    assert_eq!(dot_f16_f32_slice(&x, &y[..2], 0.0), (1.0 + 2f64.powi(-24)) as f32);
    // bf16 block.
    let bx = [f32_to_bf16(3.0, RoundMode::NearestEven), f32_to_bf16(-2.0, RoundMode::NearestEven)];
    let by = [f32_to_bf16(0.5, RoundMode::NearestEven), f32_to_bf16(0.25, RoundMode::NearestEven)];
    assert_eq!(dot_bf16_f32(bx, by, 1.0), 2.0);
    // fp8 blocks with mixed formats; products of max values are exact.
    let fnuz = Fp8Format::E4M3Fnuz;
    let e5 = Fp8Format::E5M2Fnuz;
    assert_eq!(dot_fp8_f32(fnuz, e5, [0x7f, 0x40], [0x7f, 0x40], 0.0), 240.0 * 57344.0 + 1.0);
    let ocp = Fp8Format::E4M3Fn;
    assert_eq!(dot_fp8_f32(ocp, ocp, [0x7e; 4], [0x7e; 4], 1.0), 4.0 * 448.0 * 448.0 + 1.0);
    // NaN inputs propagate.
    assert!(dot_fp8_f32(fnuz, fnuz, [0x80], [0x40], 0.0).is_nan());
    // i8 wraps in i32.
    assert_eq!(dot_i8_i32([-128i8; 4], [-128i8; 4], i32::MAX), i32::MAX.wrapping_add(65536));
    assert_eq!(dot_i8_i32_slice(&[1, 2, 3], &[4, 5], 0), 14);
}

proptest! {
    #[test]
    fn slice_loops_equal_scalar_helpers(
        a in prop::collection::vec(any::<u32>(), 64),
        b in prop::collection::vec(any::<u32>(), 64),
        c in prop::collection::vec(any::<u32>(), 64),
        mode_bits in any::<u32>(),
    ) {
        let mode = Mode::decode(mode_bits);
        let fa: Vec<f32> = a.iter().map(|&x| f32::from_bits(x)).collect();
        let fb: Vec<f32> = b.iter().map(|&x| f32::from_bits(x)).collect();
        let fc: Vec<f32> = c.iter().map(|&x| f32::from_bits(x)).collect();
        let same = |x: f32, y: f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
        let mut d = [0.0f32; 64];
        let (fi, fo) = (mode.denorm_f32.flushes_input(), mode.denorm_f32.flushes_output());
        use amdgpu_isa::numeric::mode::flush_f32;
        slices::add_f32(&mut d, &fa, &fb, mode);
        for i in 0..64 {
            let s = flush_f32(valu::add_f32(flush_f32(fa[i], fi), flush_f32(fb[i], fi), mode.round_f32), fo);
            prop_assert!(same(d[i], s));
        }
        slices::mul_f32(&mut d, &fa, &fb, mode);
        for i in 0..64 {
            let s = flush_f32(valu::mul_f32(flush_f32(fa[i], fi), flush_f32(fb[i], fi), mode.round_f32), fo);
            prop_assert!(same(d[i], s));
        }
        slices::fma_f32(&mut d, &fa, &fb, &fc, mode);
        for i in 0..64 {
            let s = flush_f32(valu::fma_f32(flush_f32(fa[i], fi), flush_f32(fb[i], fi), flush_f32(fc[i], fi), mode.round_f32), fo);
            prop_assert!(same(d[i], s));
        }
        slices::min_f32(&mut d, &fa, &fb, mode);
        for i in 0..64 {
            prop_assert!(same(d[i], valu::min_f32(fa[i], fb[i], mode.ieee)));
        }
        slices::max_f32(&mut d, &fa, &fb, mode);
        for i in 0..64 {
            prop_assert!(same(d[i], valu::max_f32(fa[i], fb[i], mode.ieee)));
        }
        slices::transcendental_f32(&mut d, &fa, TransOp::Rsq, mode);
        for i in 0..64 {
            prop_assert!(same(d[i], TransOp::Rsq.eval_f32_mode(fa[i], mode)));
        }
        let mut hbuf = [0u16; 64];
        slices::cvt_f16_f32(&mut hbuf, &fa, mode.round_f16_f64);
        for i in 0..64 {
            prop_assert_eq!(hbuf[i], f32_to_f16(fa[i], mode.round_f16_f64));
        }
        slices::cvt_f32_f16(&mut d, &hbuf);
        for i in 0..64 {
            prop_assert!(same(d[i], f16_to_f32(hbuf[i])));
        }
        let bytes: Vec<u8> = a.iter().map(|&x| x as u8).collect();
        for fmt in Fp8Format::ALL {
            slices::cvt_f32_fp8(&mut d, &bytes, fmt);
            for i in 0..64 {
                prop_assert!(same(d[i], fmt.to_f32(bytes[i])));
            }
        }
        let mut ibuf = [0i32; 64];
        slices::cvt_i32_f32(&mut ibuf, &fa);
        for i in 0..64 {
            prop_assert_eq!(ibuf[i], valu::cvt_i32_f32(fa[i]));
        }
        let mut e = d;
        slices::flush_denormals_f32(&mut e, true);
        for i in 0..64 {
            prop_assert!(same(e[i], flush_f32(d[i], true)));
        }
    }
}

#[test]
fn slice_loops_handle_mismatched_lengths() {
    let mut d = [7.0f32; 4];
    slices::add_f32(&mut d, &[1.0, 2.0], &[1.0, 1.0, 1.0], Mode::default());
    assert_eq!(d, [2.0, 3.0, 7.0, 7.0]);
    let flush = Mode { denorm_f32: DenormMode::FlushInFlushOut, ..Mode::default() };
    let mut d = [1.0f32; 2];
    slices::mul_f32(&mut d, &[f32::MIN_POSITIVE, 3.0], &[0.5, 2.0], flush);
    assert_eq!(d, [0.0, 6.0]);
}

proptest! {
    /// Every helper accepts every bit pattern and mode without panicking (overflow checks
    /// are on in the test profile); results are only checked for basic invariants.
    #[test]
    fn helpers_accept_any_bits(a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), m in any::<u32>(), r in any::<u32>()) {
        use amdgpu_isa::numeric::{convert, fp8, int, mx, transcendental as t};
        let mode = Mode::decode(m);
        let (fa, fb, fc) = (f32::from_bits(a as u32), f32::from_bits(b as u32), f32::from_bits(c as u32));
        let (da, db, dc) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
        let (ha, hb, hc) = (a as u16, b as u16, c as u16);
        let rm = mode.round_f32;
        let mods = valu::Vop3Mods { abs: a as u8, neg: b as u8, omod: valu::OutputModifier::from_bits(m), clamp: m & 1 != 0 };
        let _ = valu::v_fma_f32(fa, fb, fc, mods, mode);
        let _ = (valu::add_f32(fa, fb, rm), valu::mul_f32(fa, fb, rm), valu::mad_f32_legacy(fa, fb, fc, rm));
        let _ = (valu::add_f64(da, db, rm), valu::mul_f64(da, db, rm), valu::ldexp_f64(da, b as i32), valu::ldexp_f32(fa, b as i32));
        let _ = (valu::add_f16(ha, hb, rm, mode.fp16_ovfl), valu::fma_f16(ha, hb, hc, rm, true), valu::ldexp_f16(ha, hb as i16, rm, false));
        let _ = (valu::div_scale_f32(fa, fb, fc), valu::div_scale_f64(da, db, dc), valu::div_fmas_f32(fa, fb, fc, m & 2 != 0, rm));
        let _ = (valu::div_fmas_f64(da, db, dc, m & 2 != 0), valu::div_fixup_f32(fa, fb, fc), valu::div_fixup_f64(da, db, dc), valu::div_fixup_f16(ha, hb, hc));
        let _ = (valu::frexp_f64(da), valu::fract_f32(fa), valu::fract_f16(ha), valu::rndne_f16(ha), valu::med3_f16(ha, hb, hc, mode.ieee));
        let _ = (valu::class_f32(fa, m), valu::class_f64(da, m), valu::class_f16(ha, m), valu::cvt_pk_u8_f32(fa, b as u32, c as u32));
        let _ = (valu::output_f16(ha, mods.omod, mods.clamp, mode), valu::output_f64(da, mods.omod, mods.clamp, mode));
        let _ = (convert::f32_to_f16_mode(fa, mode), convert::f64_to_f16(da, rm), convert::f64_to_bf16(da, rm), convert::f32_to_f16_sr(fa, r, true), convert::f32_to_bf16_sr(fa, r));
        for fmt in Fp8Format::ALL {
            let _ = (fmt.from_f32(fa, true), fmt.from_f32_sr(fa, r, false), fmt.from_f32_scaled(fa, fb, true), fmt.to_f32_scaled(a as u8, fb));
            let _ = (fmt.from_f64(da, rm, false), fmt.to_f16_scaled(a as u8, fb), fmt.to_bf16_scaled(a as u8, fb), fmt.from_f32_scaled_sr(fa, r, fb, false));
        }
        let _ = fp8::insert_byte(a as u32, b as u8, c as u32);
        for fmt in mx::MxFormat::ALL {
            let _ = (fmt.from_f32_scaled(fa, fb), fmt.from_f32_scaled_sr(fa, r, fb), fmt.to_f32_scaled(a as u8, fb), fmt.from_f64(da, rm));
        }
        let _ = mx::fp6_element(&[a as u32, b as u32, c as u32, m, r, 0], r);
        let _ = (t::rsq_f64(da), t::rcp_f16(ha), t::sin_f16(ha), t::cos_f32(fa), t::trig_preop_f64(da, r));
        let _ = (int::bfe_i32(a as u32, b as u32, c as u32), int::s_bfe_i32(a as u32, b as u32), int::perm_b32(a as u32, b as u32, c as u32));
        let _ = (int::mbcnt_hi_u32_b32(a as u32, b as u32, c as u32), int::mad_i64_i32(a as u32, b as u32, c), int::bitop3_b32(a as u32, b as u32, c as u32, m as u8));
        let _ = (dot8_i32_i4(a as u32, b as u32, c as u32, m & 1 != 0), dot4_u32_u8(a as u32, b as u32, c as u32, true), dot2_f32_bf16(a as u32, b as u32, fc, rm));
        let sel = PackedSel { op_sel: a as u8, op_sel_hi: b as u8, neg_lo: c as u8, neg_hi: m as u8 };
        let _ = (pk_fma_f16(a as u32, b as u32, c as u32, sel, true, mode), pk_f32(PkF32Op::Fma, a, b, c, sel, true, mode), pk_mad_16(a as u32, b as u32, c as u32, sel, m & 1 != 0, true));
        let _ = (PkIntOp::AshrRevI16.eval(a as u32, b as u32, sel, true), mix_source(a as u32, r, sel));
        prop_assert!(mode.encode_into(m) == m);
    }
}
