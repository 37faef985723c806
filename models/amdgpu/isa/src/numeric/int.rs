//! Integer and bit-manipulation semantics of the VALU and SALU, following the CDNA3/CDNA4
//! ISA pseudocode: 24-bit multiplies, bit-field extract/insert, funnel shifts, byte
//! permutes, sums of absolute differences, carries, counts and bit scans.
//!
//! Shift and field-width operands use only the low bits the hardware reads (5 bits for
//! 32-bit operations, 6 for 64-bit), so no input can panic or overflow.

/// Sign-extends the low 24 bits.
#[inline]
pub const fn i24(x: u32) -> i32 {
    ((x << 8) as i32) >> 8
}

/// `v_mul_i32_i24`: low 32 bits of the product of the signed low 24 bits.
#[inline]
pub const fn mul_i32_i24(a: u32, b: u32) -> u32 {
    (i24(a) as i64 * i24(b) as i64) as u32
}

/// `v_mul_hi_i32_i24`: bits 63:32 of the signed 24x24 product.
#[inline]
pub const fn mul_hi_i32_i24(a: u32, b: u32) -> u32 {
    ((i24(a) as i64 * i24(b) as i64) >> 32) as u32
}

/// `v_mul_u32_u24`: low 32 bits of the product of the unsigned low 24 bits.
#[inline]
pub const fn mul_u32_u24(a: u32, b: u32) -> u32 {
    ((a & 0xff_ffff) as u64 * (b & 0xff_ffff) as u64) as u32
}

/// `v_mul_hi_u32_u24`: bits 63:32 of the unsigned 24x24 product.
#[inline]
pub const fn mul_hi_u32_u24(a: u32, b: u32) -> u32 {
    (((a & 0xff_ffff) as u64 * (b & 0xff_ffff) as u64) >> 32) as u32
}

/// `v_mad_u32_u24`: `u24(a) * u24(b) + c` (wrapping).
#[inline]
pub const fn mad_u32_u24(a: u32, b: u32, c: u32) -> u32 {
    mul_u32_u24(a, b).wrapping_add(c)
}

/// `v_mad_i32_i24`: `i24(a) * i24(b) + c` (wrapping).
#[inline]
pub const fn mad_i32_i24(a: u32, b: u32, c: u32) -> u32 {
    mul_i32_i24(a, b).wrapping_add(c)
}

/// `v_mul_hi_u32`.
#[inline]
pub const fn mul_hi_u32(a: u32, b: u32) -> u32 {
    ((a as u64 * b as u64) >> 32) as u32
}

/// `v_mul_hi_i32`.
#[inline]
pub const fn mul_hi_i32(a: u32, b: u32) -> u32 {
    ((a as i32 as i64 * b as i32 as i64) >> 32) as u32
}

/// `v_mad_u64_u32 {D1 carry, D0} = S0 * S1 + S2` over 65 bits: (low 64 bits, carry out).
#[inline]
pub const fn mad_u64_u32(a: u32, b: u32, c: u64) -> (u64, bool) {
    let wide = a as u128 * b as u128 + c as u128;
    (wide as u64, (wide >> 64) & 1 != 0)
}

/// `v_mad_i64_i32 {D1, D0} = S0 * S1 + S2` over 65 signed bits: (low 64 bits, bit 64).
#[inline]
pub const fn mad_i64_i32(a: u32, b: u32, c: u64) -> (u64, bool) {
    let wide = a as i32 as i128 * b as i32 as i128 + c as i64 as i128;
    (wide as u64, (wide >> 64) & 1 != 0)
}

/// `v_bfe_u32 D = (S0 >> S1[4:0]) & ((1 << S2[4:0]) - 1)`.
#[inline]
pub const fn bfe_u32(s0: u32, offset: u32, width: u32) -> u32 {
    let mask = (1u32 << (width & 31)).wrapping_sub(1);
    (s0 >> (offset & 31)) & mask
}

/// `v_bfe_i32`: like [`bfe_u32`], then sign-extended from bit `width - 1`; width 0 gives 0.
#[inline]
pub const fn bfe_i32(s0: u32, offset: u32, width: u32) -> u32 {
    let width = width & 31;
    if width == 0 {
        return 0;
    }
    let field = ((s0 as i32) >> (offset & 31)) as u32 & ((1u32 << width) - 1);
    let shift = 32 - width;
    (((field << shift) as i32) >> shift) as u32
}

/// `v_bfi_b32 D = (S0 & S1) | (!S0 & S2)`.
#[inline]
pub const fn bfi_b32(mask: u32, insert: u32, base: u32) -> u32 {
    (mask & insert) | (!mask & base)
}

/// `v_bfm_b32 D = ((1 << S0[4:0]) - 1) << S1[4:0]`.
#[inline]
pub const fn bfm_b32(width: u32, offset: u32) -> u32 {
    ((1u32 << (width & 31)).wrapping_sub(1)) << (offset & 31)
}

/// `s_bfe_u32` with the packed operand `S1 = {width[22:16], offset[4:0]}`; the 7-bit width
/// saturates to a full mask at 32 and above.
#[inline]
pub const fn s_bfe_u32(s0: u32, s1: u32) -> u32 {
    let offset = s1 & 31;
    let width = (s1 >> 16) & 0x7f;
    let mask = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
    (s0 >> offset) & mask
}

/// `s_bfe_i32` (packed operand as [`s_bfe_u32`]), sign-extended from the field's top bit.
#[inline]
pub const fn s_bfe_i32(s0: u32, s1: u32) -> u32 {
    let offset = s1 & 31;
    let width = (s1 >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    if width >= 32 {
        return ((s0 as i32) >> offset) as u32;
    }
    let field = ((s0 as i32) >> offset) as u32 & ((1u32 << width) - 1);
    let shift = 32 - width;
    (((field << shift) as i32) >> shift) as u32
}

/// `v_alignbit_b32 D = ({S0, S1} >> S2[4:0])[31:0]`.
#[inline]
pub const fn alignbit_b32(s0: u32, s1: u32, s2: u32) -> u32 {
    ((((s0 as u64) << 32) | s1 as u64) >> (s2 & 31)) as u32
}

/// `v_alignbyte_b32 D = ({S0, S1} >> (8 * S2[1:0]))[31:0]`.
#[inline]
pub const fn alignbyte_b32(s0: u32, s1: u32, s2: u32) -> u32 {
    ((((s0 as u64) << 32) | s1 as u64) >> ((s2 & 3) * 8)) as u32
}

/// One byte of `v_perm_b32`: selector 0..7 picks byte `sel` of `{S0, S1}` (S1 is bytes
/// 0..3); 8..11 replicate the sign bit of bytes 1, 3, 5, 7; 12 gives 0x00; 13.. give 0xff.
#[inline]
pub const fn perm_byte(data: u64, sel: u8) -> u8 {
    match sel {
        0..=7 => (data >> (sel as u32 * 8)) as u8,
        8..=11 => {
            let byte = (sel - 8) as u32 * 2 + 1;
            if (data >> (byte * 8 + 7)) & 1 != 0 {
                0xff
            } else {
                0
            }
        }
        12 => 0,
        _ => 0xff,
    }
}

/// `v_perm_b32 D.byte[i] = perm_byte({S0, S1}, S2.byte[i])`.
#[inline]
pub const fn perm_b32(s0: u32, s1: u32, selector: u32) -> u32 {
    let data = ((s0 as u64) << 32) | s1 as u64;
    let b0 = perm_byte(data, selector as u8) as u32;
    let b1 = perm_byte(data, (selector >> 8) as u8) as u32;
    let b2 = perm_byte(data, (selector >> 16) as u8) as u32;
    let b3 = perm_byte(data, (selector >> 24) as u8) as u32;
    b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)
}

/// Absolute difference of two unsigned values.
#[inline]
const fn absdiff(a: u32, b: u32) -> u32 {
    a.abs_diff(b)
}

/// `v_sad_u8`: sum over the four bytes of |S0.b - S1.b|, plus S2 (wrapping).
#[inline]
pub const fn sad_u8(s0: u32, s1: u32, s2: u32) -> u32 {
    let mut acc = s2;
    let mut i = 0;
    while i < 4 {
        let shift = i * 8;
        acc = acc.wrapping_add(absdiff((s0 >> shift) & 0xff, (s1 >> shift) & 0xff));
        i += 1;
    }
    acc
}

/// `v_sad_hi_u8 D = (sad_u8(S0, S1, 0) << 16) + S2`.
#[inline]
pub const fn sad_hi_u8(s0: u32, s1: u32, s2: u32) -> u32 {
    (sad_u8(s0, s1, 0) << 16).wrapping_add(s2)
}

/// `v_sad_u16`: sum of |S0.h - S1.h| over both halves, plus S2.
#[inline]
pub const fn sad_u16(s0: u32, s1: u32, s2: u32) -> u32 {
    s2.wrapping_add(absdiff(s0 & 0xffff, s1 & 0xffff))
        .wrapping_add(absdiff(s0 >> 16, s1 >> 16))
}

/// `v_sad_u32 D = |S0 - S1| + S2`.
#[inline]
pub const fn sad_u32(s0: u32, s1: u32, s2: u32) -> u32 {
    absdiff(s0, s1).wrapping_add(s2)
}

/// `a + b` saturated at `max` (the clamp of an unsigned integer result whose range ends
/// at `max`).
#[inline]
pub const fn sat_add_u(a: u32, b: u32, max: u32) -> u32 {
    let sum = a as u64 + b as u64;
    if sum > max as u64 {
        max
    } else {
        sum as u32
    }
}

/// `v_msad_u8`: masked SAD, bytes where the reference `S1` is zero do not count.
#[inline]
pub const fn msad_u8(s0: u32, s1: u32, s2: u32) -> u32 {
    let mut acc = s2;
    let mut i = 0;
    while i < 4 {
        let shift = i * 8;
        let reference = (s1 >> shift) & 0xff;
        if reference != 0 {
            acc = acc.wrapping_add(absdiff((s0 >> shift) & 0xff, reference));
        }
        i += 1;
    }
    acc
}

/// `v_lerp_u8`: per byte `(S0.b + S1.b + S2.bit[8i]) >> 1` (rounding average).
#[inline]
pub const fn lerp_u8(s0: u32, s1: u32, s2: u32) -> u32 {
    let mut out = 0u32;
    let mut i = 0;
    while i < 4 {
        let shift = i * 8;
        let sum = ((s0 >> shift) & 0xff) + ((s1 >> shift) & 0xff) + ((s2 >> shift) & 1);
        out |= (sum >> 1) << shift;
        i += 1;
    }
    out
}

/// `v_cvt_pk_u16_u32`: each u32 saturated to u16, S0 in the low half.
#[inline]
pub const fn cvt_pk_u16_u32(s0: u32, s1: u32) -> u32 {
    let lo = if s0 > 0xffff { 0xffff } else { s0 };
    let hi = if s1 > 0xffff { 0xffff } else { s1 };
    lo | (hi << 16)
}

/// `v_cvt_pk_i16_i32`: each i32 saturated to i16, S0 in the low half.
#[inline]
pub const fn cvt_pk_i16_i32(s0: u32, s1: u32) -> u32 {
    sat_i16(s0 as i32) | (sat_i16(s1 as i32) << 16)
}

/// Saturates an i32 to i16, returned as its 16-bit pattern.
#[inline]
const fn sat_i16(v: i32) -> u32 {
    let c = if v > i16::MAX as i32 {
        i16::MAX as i32
    } else if v < i16::MIN as i32 {
        i16::MIN as i32
    } else {
        v
    };
    c as u32 & 0xffff
}

/// Saturates an i16 to u8.
#[inline]
const fn sat_u8(v: i16) -> u32 {
    if v <= 0 {
        0
    } else if v >= 255 {
        255
    } else {
        v as u32
    }
}

/// `v_sat_pk_u8_i16`: both signed 16-bit halves saturated to u8, packed in the low 16 bits.
#[inline]
pub const fn sat_pk_u8_i16(s0: u32) -> u32 {
    sat_u8(s0 as u16 as i16) | (sat_u8((s0 >> 16) as u16 as i16) << 8)
}

/// `v_bcnt_u32_b32 D = popcount(S0) + S1`.
#[inline]
pub const fn bcnt_u32_b32(s0: u32, s1: u32) -> u32 {
    s0.count_ones().wrapping_add(s1)
}

/// `v_mbcnt_lo_u32_b32`: popcount of `mask` bits below `lane` within lanes 0..31, plus S1.
#[inline]
pub const fn mbcnt_lo_u32_b32(mask: u32, s1: u32, lane: u32) -> u32 {
    let lane = lane & 63;
    let below = if lane >= 32 { u32::MAX } else { (1u32 << lane) - 1 };
    (mask & below).count_ones().wrapping_add(s1)
}

/// `v_mbcnt_hi_u32_b32`: popcount of `mask` bits below `lane` within lanes 32..63, plus S1.
#[inline]
pub const fn mbcnt_hi_u32_b32(mask: u32, s1: u32, lane: u32) -> u32 {
    let lane = lane & 63;
    let below = if lane <= 32 { 0 } else { (1u32 << (lane - 32)) - 1 };
    (mask & below).count_ones().wrapping_add(s1)
}

/// `v_ffbh_u32`: number of leading zeros before the first set bit; 0xffffffff when zero.
#[inline]
pub const fn ffbh_u32(x: u32) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        x.leading_zeros()
    }
}

/// `v_ffbl_b32`: index of the lowest set bit; 0xffffffff when zero.
#[inline]
pub const fn ffbl_b32(x: u32) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        x.trailing_zeros()
    }
}

/// `v_ffbh_i32`: number of leading bits equal to the sign bit (after the sign) before the
/// first differing one; 0xffffffff when all bits are equal (0 or -1).
#[inline]
pub const fn ffbh_i32(x: u32) -> u32 {
    let flipped = if (x as i32) < 0 { !x } else { x };
    if flipped == 0 {
        u32::MAX
    } else {
        flipped.leading_zeros()
    }
}

/// `v_bfrev_b32` / `s_brev_b32`.
#[inline]
pub const fn brev_b32(x: u32) -> u32 {
    x.reverse_bits()
}

/// `s_brev_b64`.
#[inline]
pub const fn brev_b64(x: u64) -> u64 {
    x.reverse_bits()
}

/// `s_bitcmp0_b32`: SCC = bit `S1[4:0]` of S0 is 0.
#[inline]
pub const fn s_bitcmp0_b32(s0: u32, s1: u32) -> bool {
    (s0 >> (s1 & 31)) & 1 == 0
}

/// `s_bitcmp1_b32`: SCC = bit `S1[4:0]` of S0 is 1.
#[inline]
pub const fn s_bitcmp1_b32(s0: u32, s1: u32) -> bool {
    (s0 >> (s1 & 31)) & 1 == 1
}

/// `s_bitcmp0_b64`: SCC = bit `S1[5:0]` of S0 is 0.
#[inline]
pub const fn s_bitcmp0_b64(s0: u64, s1: u32) -> bool {
    (s0 >> (s1 & 63)) & 1 == 0
}

/// `s_bitcmp1_b64`: SCC = bit `S1[5:0]` of S0 is 1.
#[inline]
pub const fn s_bitcmp1_b64(s0: u64, s1: u32) -> bool {
    (s0 >> (s1 & 63)) & 1 == 1
}

/// `v_add_co_u32`: (sum, carry out).
#[inline]
pub const fn add_co_u32(a: u32, b: u32) -> (u32, bool) {
    a.overflowing_add(b)
}

/// `v_addc_co_u32`: (a + b + carry_in, carry out).
#[inline]
pub const fn addc_co_u32(a: u32, b: u32, carry_in: bool) -> (u32, bool) {
    let wide = a as u64 + b as u64 + carry_in as u64;
    (wide as u32, wide >> 32 != 0)
}

/// `v_sub_co_u32`: (a - b, borrow) with borrow = b > a.
#[inline]
pub const fn sub_co_u32(a: u32, b: u32) -> (u32, bool) {
    (a.wrapping_sub(b), b > a)
}

/// `v_subrev_co_u32`: (b - a, borrow) with borrow = a > b.
#[inline]
pub const fn subrev_co_u32(a: u32, b: u32) -> (u32, bool) {
    sub_co_u32(b, a)
}

/// `v_subb_co_u32`: (a - b - borrow_in, borrow out) with borrow out = b + borrow_in > a.
#[inline]
pub const fn subb_co_u32(a: u32, b: u32, borrow_in: bool) -> (u32, bool) {
    let result = a.wrapping_sub(b).wrapping_sub(borrow_in as u32);
    (result, b as u64 + borrow_in as u64 > a as u64)
}

/// `v_subbrev_co_u32`: (b - a - borrow_in, borrow out).
#[inline]
pub const fn subbrev_co_u32(a: u32, b: u32, borrow_in: bool) -> (u32, bool) {
    subb_co_u32(b, a, borrow_in)
}

/// `v_add_i32` / `v_add_u32` with the VOP3 clamp bit: clamp saturates to the type range.
#[inline]
pub const fn add_u32_clamp(a: u32, b: u32, clamp: bool) -> u32 {
    if clamp {
        a.saturating_add(b)
    } else {
        a.wrapping_add(b)
    }
}

/// `v_sub_u32` with the clamp bit (saturating at 0).
#[inline]
pub const fn sub_u32_clamp(a: u32, b: u32, clamp: bool) -> u32 {
    if clamp {
        a.saturating_sub(b)
    } else {
        a.wrapping_sub(b)
    }
}

/// `v_add_i32` with the clamp bit (saturating to the i32 range).
#[inline]
pub const fn add_i32_clamp(a: u32, b: u32, clamp: bool) -> u32 {
    if clamp {
        (a as i32).saturating_add(b as i32) as u32
    } else {
        a.wrapping_add(b)
    }
}

/// `v_sub_i32` with the clamp bit.
#[inline]
pub const fn sub_i32_clamp(a: u32, b: u32, clamp: bool) -> u32 {
    if clamp {
        (a as i32).saturating_sub(b as i32) as u32
    } else {
        a.wrapping_sub(b)
    }
}

/// `v_med3_i32`.
#[inline]
pub fn med3_i32(a: i32, b: i32, c: i32) -> i32 {
    a.max(b).min(a.min(b).max(c))
}

/// `v_med3_u32`.
#[inline]
pub fn med3_u32(a: u32, b: u32, c: u32) -> u32 {
    a.max(b).min(a.min(b).max(c))
}

/// `v_prng_b32` (gfx950): one LFSR step, `(x << 1) ^ (x[31] ? 197 : 0)`.
#[inline]
pub const fn prng_b32(x: u32) -> u32 {
    (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 }
}

/// `v_bitop3_b32` (gfx950): the 8-entry truth table `ttbl` indexed by `(S0, S1, S2)` bits.
#[inline]
pub const fn bitop3_b32(s0: u32, s1: u32, s2: u32, ttbl: u8) -> u32 {
    let mut out = 0u32;
    let mut idx = 0u32;
    while idx < 8 {
        if (ttbl >> idx) & 1 != 0 {
            let a = if idx & 4 != 0 { s0 } else { !s0 };
            let b = if idx & 2 != 0 { s1 } else { !s1 };
            let c = if idx & 1 != 0 { s2 } else { !s2 };
            out |= a & b & c;
        }
        idx += 1;
    }
    out
}

/// `v_xad_u32 D = (S0 ^ S1) + S2` (wrapping).
#[inline]
pub const fn xad_u32(s0: u32, s1: u32, s2: u32) -> u32 {
    (s0 ^ s1).wrapping_add(s2)
}

/// `v_qsad_pk_u16_u8`: four [`sad_u8`]s of the byte windows `S0[31:0]`, `S0[39:8]`,
/// `S0[47:16]`, `S0[55:24]` against `S1`, each accumulated onto one 16-bit lane of `S2` and
/// truncated to 16 bits.
#[inline]
pub const fn qsad_pk_u16_u8(s0: u64, s1: u32, s2: u64) -> u64 {
    let mut out = 0u64;
    let mut k = 0;
    while k < 4 {
        let window = (s0 >> (8 * k)) as u32;
        let acc = ((s2 >> (16 * k)) & 0xffff) as u32;
        out |= ((sad_u8(window, s1, acc) & 0xffff) as u64) << (16 * k);
        k += 1;
    }
    out
}

/// `v_mqsad_pk_u16_u8`: [`qsad_pk_u16_u8`] with the masked [`msad_u8`].
#[inline]
pub const fn mqsad_pk_u16_u8(s0: u64, s1: u32, s2: u64) -> u64 {
    let mut out = 0u64;
    let mut k = 0;
    while k < 4 {
        let window = (s0 >> (8 * k)) as u32;
        let acc = ((s2 >> (16 * k)) & 0xffff) as u32;
        out |= ((msad_u8(window, s1, acc) & 0xffff) as u64) << (16 * k);
        k += 1;
    }
    out
}

/// `v_mqsad_u32_u8`: four [`msad_u8`]s of the byte windows of `S0` (as in
/// [`qsad_pk_u16_u8`]) against `S1`, each accumulated onto one dword of the 128-bit `S2`.
#[inline]
pub const fn mqsad_u32_u8(s0: u64, s1: u32, s2: [u32; 4]) -> [u32; 4] {
    let mut out = [0u32; 4];
    let mut k = 0;
    while k < 4 {
        out[k] = msad_u8((s0 >> (8 * k)) as u32, s1, s2[k]);
        k += 1;
    }
    out
}

/// `v_ashr_pk_i8_i32` (gfx950): `S0 >> S2[4:0]` and `S1 >> S2[4:0]` (arithmetic), each
/// saturated to [-128, 127], packed into 16 bits (S0 in the low byte).
#[inline]
pub const fn ashr_pk_i8_i32(s0: u32, s1: u32, s2: u32) -> u32 {
    let shift = s2 & 31;
    sat_i8((s0 as i32) >> shift) | (sat_i8((s1 as i32) >> shift) << 8)
}

/// Saturates an i32 to i8, as its byte pattern.
#[inline]
const fn sat_i8(v: i32) -> u32 {
    if v <= -128 {
        0x80
    } else if v >= 127 {
        0x7f
    } else {
        v as u32 & 0xff
    }
}

/// Saturates an i32 to u8.
#[inline]
const fn sat_u8_i32(v: i32) -> u32 {
    if v <= 0 {
        0
    } else if v >= 255 {
        0xff
    } else {
        v as u32
    }
}

/// `v_ashr_pk_u8_i32` (gfx950): as [`ashr_pk_i8_i32`], saturating to [0, 255].
#[inline]
pub const fn ashr_pk_u8_i32(s0: u32, s1: u32, s2: u32) -> u32 {
    let shift = s2 & 31;
    sat_u8_i32((s0 as i32) >> shift) | (sat_u8_i32((s1 as i32) >> shift) << 8)
}

/// `v_bitop3_b16` (gfx950): [`bitop3_b32`] on 16-bit operands.
#[inline]
pub const fn bitop3_b16(s0: u32, s1: u32, s2: u32, ttbl: u8) -> u32 {
    bitop3_b32(s0, s1, s2, ttbl) & 0xffff
}

/// The `v_screen_partition_4se_b32` lookup table, as the CDNA2 ISA lists it: for the
/// select `{x_min[6:5], y_min[6:5], x_max[6:5], y_max[6:5]}` of a rectangle of 32-pixel
/// tiles, the 4-bit mask of the shader engines it covers.
const SCREEN_PARTITION_4SE: [u8; 256] = [
    0x1, 0x3, 0x7, 0xf, 0x5, 0xf, 0xf, 0xf, 0x7, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf,
    0xf, 0x2, 0x6, 0xe, 0xf, 0xa, 0xf, 0xf, 0xf, 0xb, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf,
    0xd, 0xf, 0x4, 0xc, 0xf, 0xf, 0x5, 0xf, 0xf, 0xf, 0xd, 0xf, 0xf, 0xf, 0xf, 0xf,
    0x9, 0xb, 0xf, 0x8, 0xf, 0xf, 0xf, 0xa, 0xf, 0xf, 0xf, 0xe, 0xf, 0xf, 0xf, 0xf,
    0xf, 0xf, 0xf, 0xf, 0x4, 0xc, 0xd, 0xf, 0x6, 0xf, 0xf, 0xf, 0xe, 0xf, 0xf, 0xf,
    0xf, 0xf, 0xf, 0xf, 0xf, 0x8, 0x9, 0xb, 0xf, 0x9, 0x9, 0xf, 0xf, 0xd, 0xf, 0xf,
    0xf, 0xf, 0xf, 0xf, 0x7, 0xf, 0x1, 0x3, 0xf, 0xf, 0x9, 0xf, 0xf, 0xf, 0xb, 0xf,
    0xf, 0xf, 0xf, 0xf, 0x6, 0xe, 0xf, 0x2, 0x6, 0xf, 0xf, 0x6, 0xf, 0xf, 0xf, 0x7,
    0xb, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0x2, 0x3, 0xb, 0xf, 0xa, 0xf, 0xf, 0xf,
    0xf, 0x7, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0x1, 0x9, 0xd, 0xf, 0x5, 0xf, 0xf,
    0xf, 0xf, 0xe, 0xf, 0xf, 0xf, 0xf, 0xf, 0xe, 0xf, 0x8, 0xc, 0xf, 0xf, 0xa, 0xf,
    0xf, 0xf, 0xf, 0xd, 0xf, 0xf, 0xf, 0xf, 0x6, 0x7, 0xf, 0x4, 0xf, 0xf, 0xf, 0x5,
    0x9, 0xf, 0xf, 0xf, 0xd, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0x8, 0xc, 0xe, 0xf,
    0xf, 0x6, 0x6, 0xf, 0xf, 0xe, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0xf, 0x4, 0x6, 0x7,
    0xf, 0xf, 0x6, 0xf, 0xf, 0xf, 0x7, 0xf, 0xf, 0xf, 0xf, 0xf, 0xb, 0xf, 0x2, 0x3,
    0x9, 0xf, 0xf, 0x9, 0xf, 0xf, 0xf, 0xb, 0xf, 0xf, 0xf, 0xf, 0x9, 0xd, 0xf, 0x1,
];

/// `v_screen_partition_4se_b32 D = TABLE[S0[7:0]]` (see [`SCREEN_PARTITION_4SE`]).
#[inline]
pub const fn screen_partition_4se_b32(s0: u32) -> u32 {
    SCREEN_PARTITION_4SE[(s0 & 0xff) as usize] as u32
}
