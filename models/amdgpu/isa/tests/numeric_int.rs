//! Integer and bit-manipulation helpers: tables of hand-checked cases plus property tests
//! against straightforward reference formulas.

use amdgpu_isa::numeric::int::*;
use proptest::prelude::*;

#[test]
fn multiplies_24_bit_and_64_bit() {
    assert_eq!(mul_u32_u24(0xff00_0003, 5), 15); // high byte ignored
    assert_eq!(mul_u32_u24(0x00ff_ffff, 0x00ff_ffff), 0xfe00_0001);
    assert_eq!(mul_hi_u32_u24(0x00ff_ffff, 0x00ff_ffff), 0x0000_ffff);
    assert_eq!(mul_i32_i24(0x0080_0000, 2), (-0x0100_0000i32) as u32); // -2^23 * 2
    assert_eq!(mul_hi_i32_i24(0x0080_0000, 0x0080_0000), 0x0000_4000); // 2^46 >> 32
    assert_eq!(mul_hi_i32_i24(0x00ff_ffff, 1), u32::MAX); // -1 * 1 -> high word all ones
    assert_eq!(mad_u32_u24(3, 4, u32::MAX), 11);
    assert_eq!(mad_i32_i24(0x00ff_ffff, 3, 10), 7);
    assert_eq!(mul_hi_u32(u32::MAX, u32::MAX), 0xffff_fffe);
    assert_eq!(mul_hi_i32(u32::MAX, u32::MAX), 0); // (-1)*(-1) = 1
    assert_eq!(mad_u64_u32(u32::MAX, u32::MAX, u64::MAX), (0xffff_fffe_0000_0000, true));
    assert_eq!(mad_u64_u32(2, 3, 4), (10, false));
    assert_eq!(mad_i64_i32(u32::MAX, 5, 0), ((-5i64) as u64, true)); // bit 64 of -5 is set
    assert_eq!(mad_i64_i32(7, 6, 0), (42, false));
}

#[test]
fn bit_fields_and_funnel_shifts() {
    assert_eq!(bfe_u32(0xdead_beef, 8, 8), 0xbe);
    assert_eq!(bfe_u32(0xdead_beef, 8, 0), 0);
    assert_eq!(bfe_u32(0xdead_beef, 40, 4), 0xe); // offset uses bits 4:0 -> 8
    assert_eq!(bfe_i32(0x0000_0f00, 8, 4), u32::MAX); // 0xf sign-extended from 4 bits
    assert_eq!(bfe_i32(0x0000_0700, 8, 4), 7);
    assert_eq!(bfe_i32(0x8000_0000, 31, 1), u32::MAX);
    assert_eq!(s_bfe_u32(0xdead_beef, (8 << 16) | 16), 0xad);
    assert_eq!(s_bfe_u32(0xdead_beef, (40 << 16) | 4), 0x0dea_dbee);
    assert_eq!(s_bfe_i32(0x0080_0000, (8 << 16) | 16), 0xffff_ff80);
    assert_eq!(bfi_b32(0xff00_ff00, 0x1234_5678, 0xaabb_ccdd), 0x12bb_56dd);
    assert_eq!(bfm_b32(4, 8), 0x0f00);
    assert_eq!(bfm_b32(0, 8), 0);
    assert_eq!(alignbit_b32(0x1234_5678, 0x9abc_def0, 8), 0x789a_bcde);
    assert_eq!(alignbit_b32(0x1234_5678, 0x9abc_def0, 32), 0x9abc_def0); // only bits 4:0
    assert_eq!(alignbyte_b32(0x1234_5678, 0x9abc_def0, 3), 0x3456_789a);
    assert_eq!(brev_b32(1), 0x8000_0000);
    assert_eq!(brev_b64(1), 1 << 63);
    assert!(s_bitcmp1_b32(0b100, 2) && s_bitcmp0_b32(0b100, 34 + 1));
    assert!(s_bitcmp1_b64(1 << 40, 40) && s_bitcmp0_b64(1 << 40, 41));
    assert_eq!(bitop3_b32(0xf0f0, 0xcccc, 0xaaaa, 0x80), 0xf0f0 & 0xcccc & 0xaaaa);
    assert_eq!(bitop3_b32(0xf0f0, 0xcccc, 0xaaaa, 0xfe), 0xf0f0 | 0xcccc | 0xaaaa);
    assert_eq!(bitop3_b32(0xf0f0, 0xcccc, 0xaaaa, 0x96), 0xf0f0 ^ 0xcccc ^ 0xaaaa);
}

#[test]
fn perm_selector_semantics() {
    let s0 = 0x8716_2534u32; // bytes 4..7 of {S0, S1}
    let s1 = 0x0a9b_0c8d; // bytes 0..3
    // Identity selections.
    assert_eq!(perm_b32(s0, s1, 0x0302_0100), s1);
    assert_eq!(perm_b32(s0, s1, 0x0706_0504), s0);
    // 8..11 replicate the sign of bytes 1, 3, 5, 7: 0x0c (+), 0x0a (+), 0x25 (+), 0x87 (-).
    assert_eq!(perm_b32(s0, s1, 0x0b0a_0908), 0xff00_0000);
    // 12 -> 0x00, 13.. -> 0xff.
    assert_eq!(perm_b32(s0, s1, 0x0c0d_ff0c), 0x00ff_ff00);
    // Byte 0 of S1 is 0x8d: selector 0 copies it; its sign is not one of the replicated ones.
    assert_eq!(perm_b32(s0, s1, 0x0c0c_0c00), 0x0000_008d);
    assert_eq!(perm_byte(0x8000_0000_0000_0000, 11), 0xff);
}

#[test]
fn sad_lerp_and_packing() {
    assert_eq!(sad_u8(0x0102_0304, 0x0403_0201, 10), 10 + 3 + 1 + 1 + 3);
    assert_eq!(sad_hi_u8(0x0000_00ff, 0, 1), (255 << 16) + 1);
    assert_eq!(sad_u16(0x0001_ffff, 0x0003_0000, 0), 0xffff + 2);
    assert_eq!(sad_u32(5, 9, 1), 5);
    assert_eq!(sad_u32(0, u32::MAX, 1), 0); // wrapping add
    // msad skips bytes whose reference (S1) is zero.
    assert_eq!(msad_u8(0x0505_0505, 0x0000_0100, 0), 4);
    assert_eq!(lerp_u8(0x0000_00ff, 0x0000_00ff, 0), 0xff);
    assert_eq!(lerp_u8(0x0000_0001, 0x0000_0002, 1), 2); // (1 + 2 + 1) >> 1
    assert_eq!(lerp_u8(0x0100_0000, 0x0200_0000, 0), 0x0100_0000); // (1 + 2 + 0) >> 1
    assert_eq!(cvt_pk_u16_u32(70000, 5), 0x0005_ffff);
    assert_eq!(cvt_pk_i16_i32((-70000i32) as u32, 40000), 0x7fff_8000);
    assert_eq!(sat_pk_u8_i16(0xff00_0123), 0x00ff);
    assert_eq!(sat_pk_u8_i16(0x0080_0123), 0x80ff);
}

#[test]
fn counts_scans_and_carries() {
    assert_eq!(bcnt_u32_b32(0xf0f0, 2), 10);
    assert_eq!(mbcnt_lo_u32_b32(u32::MAX, 0, 5), 5);
    assert_eq!(mbcnt_lo_u32_b32(u32::MAX, 0, 40), 32);
    assert_eq!(mbcnt_hi_u32_b32(u32::MAX, 0, 40), 8);
    assert_eq!(mbcnt_hi_u32_b32(u32::MAX, 3, 20), 3);
    assert_eq!(ffbh_u32(0), u32::MAX);
    assert_eq!(ffbh_u32(1), 31);
    assert_eq!(ffbh_u32(0x8000_0000), 0);
    assert_eq!(ffbl_b32(0), u32::MAX);
    assert_eq!(ffbl_b32(0x100), 8);
    assert_eq!(ffbh_i32(0), u32::MAX);
    assert_eq!(ffbh_i32(u32::MAX), u32::MAX);
    assert_eq!(ffbh_i32(0xffff_fffe), 31);
    assert_eq!(ffbh_i32(0x4000_0000), 1);
    assert_eq!(ffbh_i32(0x8000_0000), 1);
    assert_eq!(add_co_u32(u32::MAX, 1), (0, true));
    assert_eq!(addc_co_u32(u32::MAX, 0, true), (0, true));
    assert_eq!(addc_co_u32(1, 2, true), (4, false));
    assert_eq!(sub_co_u32(1, 2), (u32::MAX, true));
    assert_eq!(subrev_co_u32(1, 2), (1, false));
    assert_eq!(subb_co_u32(5, 5, true), (u32::MAX, true));
    assert_eq!(subb_co_u32(5, 4, true), (0, false));
    assert_eq!(subbrev_co_u32(4, 5, true), (0, false));
    assert_eq!(add_u32_clamp(u32::MAX, 5, true), u32::MAX);
    assert_eq!(add_u32_clamp(u32::MAX, 5, false), 4);
    assert_eq!(sub_u32_clamp(3, 5, true), 0);
    assert_eq!(add_i32_clamp(i32::MAX as u32, 1, true), i32::MAX as u32);
    assert_eq!(sub_i32_clamp(i32::MIN as u32, 1, true), i32::MIN as u32);
    assert_eq!(med3_i32(5, -1, 3), 3);
    assert_eq!(med3_u32(1, 9, 4), 4);
    assert_eq!(prng_b32(0x8000_0001), 2 ^ 197);
}

proptest! {
    #[test]
    fn properties_against_reference_formulas(a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
        prop_assert_eq!(mul_u32_u24(a, b) as u64, ((a & 0xff_ffff) as u64 * (b & 0xff_ffff) as u64) & 0xffff_ffff);
        let sa = ((a & 0xff_ffff) as i64) - if a & 0x80_0000 != 0 { 1 << 24 } else { 0 };
        let sb = ((b & 0xff_ffff) as i64) - if b & 0x80_0000 != 0 { 1 << 24 } else { 0 };
        prop_assert_eq!(mul_hi_i32_i24(a, b), ((sa * sb) >> 32) as u32);
        prop_assert_eq!(bfi_b32(a, b, c), (a & b) | (!a & c));
        let (w, o) = (c & 31, b & 31);
        let expect = if w == 0 { 0 } else { (a >> o) & (((1u64 << w) - 1) as u32) };
        prop_assert_eq!(bfe_u32(a, o, w), expect);
        prop_assert_eq!(alignbit_b32(a, b, c), ((((a as u64) << 32) | b as u64) >> (c & 31)) as u32);
        // perm with selectors 0..7 is a pure byte gather.
        let sel = c & 0x0707_0707;
        let data = ((a as u64) << 32) | b as u64;
        let mut expect = 0u32;
        for i in 0..4 {
            let s = (sel >> (8 * i)) & 0xff;
            expect |= (((data >> (8 * s)) & 0xff) as u32) << (8 * i);
        }
        prop_assert_eq!(perm_b32(a, b, sel), expect);
        let (sum, carry) = add_co_u32(a, b);
        prop_assert_eq!((sum as u64) | ((carry as u64) << 32), a as u64 + b as u64);
        let (diff, borrow) = subb_co_u32(a, b, c & 1 != 0);
        prop_assert_eq!(diff, a.wrapping_sub(b).wrapping_sub(c & 1));
        prop_assert_eq!(borrow, (b as u64 + (c & 1) as u64) > a as u64);
        let (lo, hi) = mad_u64_u32(a, b, ((c as u64) << 32) | a as u64);
        let wide = a as u128 * b as u128 + (((c as u64) << 32) | a as u64) as u128;
        prop_assert_eq!((lo, hi), (wide as u64, wide >> 64 != 0));
        prop_assert_eq!(ffbh_u32(a), if a == 0 { u32::MAX } else { a.leading_zeros() });
        prop_assert_eq!(sad_u8(a, b, c), (0..4).fold(c, |t, i| {
            let x = (a >> (8 * i)) & 0xff;
            let y = (b >> (8 * i)) & 0xff;
            t.wrapping_add(x.abs_diff(y))
        }));
    }
}
