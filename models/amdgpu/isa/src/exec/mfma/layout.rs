//! Register layouts of the matrix operands: where element (block, row, k) of A, B and the
//! index data, and element (block, i, j) of C/D live in a wave's registers, and the
//! BLGP lane patterns. Everything here follows the CDNA3 ISA guide's MFMA layout section
//! (and AMD's Matrix Instruction Calculator, which implements it), restated in the module
//! docs of [`super`].

/// `BLGP`: the lane of B's registers that feeds lane `lane` of the matrix core.
/// 0 normal, 1 broadcast lanes 0-31 to both halves, 2 broadcast lanes 32-63, 3 rotate down
/// by 16 (lane l reads l+16 mod 64), 4..=7 broadcast the group of 16 lanes `blgp - 4`.
#[inline]
pub(crate) const fn blgp_lane(lane: usize, blgp: u32) -> usize {
    match blgp {
        1 => lane % 32,
        2 => 32 + lane % 32,
        3 => (lane + 16) % 64,
        4..=7 => 16 * (blgp as usize - 4) + lane % 16,
        _ => lane,
    }
}

/// `CBSZ`/`ABID`: the A block that output block `block` multiplies (one block in each group
/// of `2^cbsz` is broadcast to the whole group).
#[inline]
pub(crate) const fn broadcast_block(block: usize, cbsz: u32, abid: u32) -> usize {
    ((block >> cbsz) << cbsz) + abid as usize
}

/// Where C/D element row `i` of block `block` starts: `(register, first lane)`; columns
/// `j` follow in lanes `first + j`. `m` is the block size (M = N), `blocks` the block
/// count, `wide` true for f64 outputs (whose register index counts register pairs).
///
/// 32-bit outputs are stored in groups of four rows per register set: with `G = 64 / N`
/// row groups per register, row `i` of block `b` is register
/// `b * M*N/64 + (i / (4G)) * 4 + i % 4`, lanes `(b % BPR) * N + ((i / 4) % G) * BPR * N`,
/// where `BPR = max(1, 64 / (M*N/4))` blocks share a register. 64-bit outputs use groups
/// of one row: register pair `b * M*N/64 + i / G`, lanes
/// `(b % BPR) * N + (i % G) * BPR * N` with `BPR = max(1, 64 / (M*N))`.
#[inline]
pub(crate) const fn d_row(m: usize, block: usize, i: usize, wide: bool) -> (usize, usize) {
    // Constant block sizes turn the divisions into shifts.
    match m {
        4 => d_row_of::<4>(block, i, wide),
        16 => d_row_of::<16>(block, i, wide),
        _ => d_row_of::<32>(block, i, wide),
    }
}

#[inline(always)]
const fn d_row_of<const M: usize>(block: usize, i: usize, wide: bool) -> (usize, usize) {
    let n = M;
    let groups = 64 / n;
    let height: usize = if wide { 1 } else { 4 };
    let per_reg = (64 * height).div_ceil(M * n);
    let reg = block * (M * n / 64) + (i / (height * groups)) * height + i % height;
    let lane = (block % per_reg) * n + ((i / height) % groups) * per_reg * n;
    (reg, lane)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_layouts_match_the_published_tables() {
        // f32 16x16 single block: row 4g + r in register r, lanes 16g.
        assert_eq!(d_row(16, 0, 5, false), (1, 16));
        // f32 32x32: row 8 is register 4, lanes 0; row 4 register 0, lanes 32.
        assert_eq!(d_row(32, 0, 8, false), (4, 0));
        assert_eq!(d_row(32, 0, 4, false), (0, 32));
        assert_eq!(d_row(32, 1, 31, false), (16 + 15, 32));
        // f32 4x4, 16 blocks: block b row i in register i, lanes 4b.
        assert_eq!(d_row(4, 7, 2, false), (2, 28));
        // f32 16x16, 4 blocks: block b owns registers 4b..4b+3.
        assert_eq!(d_row(16, 3, 13, false), (13, 48));
        // f64 16x16: row i in pair i/4, lanes 16*(i%4).
        assert_eq!(d_row(16, 0, 6, true), (1, 32));
        // f64 4x4, 4 blocks: one pair, lanes 16i + 4b.
        assert_eq!(d_row(4, 2, 3, true), (0, 56));
    }

    #[test]
    fn lane_patterns() {
        assert_eq!(blgp_lane(40, 1), 8);
        assert_eq!(blgp_lane(8, 2), 40);
        assert_eq!(blgp_lane(60, 3), 12);
        assert_eq!(blgp_lane(33, 6), 33);
        assert_eq!(blgp_lane(1, 7), 49);
        assert_eq!(broadcast_block(13, 2, 1), 13);
        assert_eq!(broadcast_block(2, 1, 1), 3);
        assert_eq!(broadcast_block(15, 4, 13), 13);
    }
}
