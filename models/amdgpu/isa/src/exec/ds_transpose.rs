//! The gfx950 (CDNA4) transposing LDS loads: `ds_read_b64_tr_b4`, `ds_read_b64_tr_b8`,
//! `ds_read_b64_tr_b16` and `ds_read_b96_tr_b6`, called from `ds`.
//!
//! # Layout
//!
//! The wave works in four independent groups of 16 lanes (0-15, 16-31, 32-47, 48-63).
//! Every lane of a group supplies the LDS address (`VGPR[addr] + offset`) of one *block*:
//! 64 bits for the `b64` forms, 96 bits for `ds_read_b96_tr_b6`. A block holds
//! `E = block bits / element bits` elements packed from bit 0 upwards (little-endian, as
//! `ds_read_b64`/`ds_read_b96` would load it; 6-bit elements straddle dword boundaries):
//! E = 16 for b4 and b6, 8 for b8, 4 for b16. The result has the same shape, one block per
//! lane, and with `i` the lane's index within its group:
//!
//! ```text
//! result[i].element[k] = block[(16 / E) * k + i / E].element[i % E]
//! ```
//!
//! Seen as matrices: the group's 16 blocks, in lane order, fill an `E x 16` element matrix
//! row by row (row `k` is made of the `16 / E` blocks of lanes `(16 / E) k` onwards), and
//! lane `i` receives column `i`. For b16 that is a 4 x 16 tile whose rows are four
//! 4-element blocks each; for b8 two interleaved 8 x 8 byte transposes (even source lanes
//! feed result lanes 0-7, odd ones lanes 8-15); for b4 and b6 a plain 16 x 16 transpose
//! (`result[i].element[k] = block[k].element[i]`).
//!
//! # Sources
//!
//! The CDNA4 ISA guide only says "interpret the data as a matrix with N-bit elements and
//! transpose the matrix". The layout above is the one these independent sources agree on:
//! - Triton's AMD backend, `chooseLLDsReadB64TrLayout` in
//!   `lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp` (github.com/triton-lang/triton):
//!   its diagram of the 16-bit case (lane `t` loads 4 consecutive elements of a 16 x 4
//!   tile, lanes 0-3 the first column, 4-7 the second...; afterwards lane `m` holds row
//!   `m`), and its rule for b8/b16 that the load layout is the result layout with the first
//!   `log2 E` register bases and the 4 lane bases rotated, which gives the formula above.
//! - rocRoller's hardware test of all four forms, `TransposeLoadsTest` in
//!   `shared/rocroller/test/unit/TransposeLoadsTest.cpp` (github.com/ROCm/rocm-libraries):
//!   its per-lane addresses, packing (`packFP4x8`/`packF6x16`: element `n` at bit
//!   `width * n`) and expected results were replayed against this formula for every shape it
//!   runs (b16 16x32 and 32x16, b8 16x64 and 32x32, b6 and b4 16x128 and 32x64) and match;
//!   the nearby alternatives (lanes interleaved the other way, rows reversed, no transpose)
//!   do not.
//! - The Mojo standard library docs (docs.modular.com): `ds_read_tr16_b64_row` ("each
//!   16-lane row loads a 4x16 tile ... each lane gets a column") and `ds_read_tr8_b64`
//!   ("two interleaved 8x8 byte transposes").
//! - rocjitsu's CDNA4 fix, github.com/ROCm/rocm-systems pull 10175: destination lane `l`
//!   halfword `n` comes from source lane `(l & ~15) + ((l >> 2) & 3) + 4 n`, halfword
//!   `l & 3`.
//!
//! The tests (`tests/exec_ds_transpose.rs`, and the `ds_transpose` corpus kernel built
//! with clang-22's `__builtin_amdgcn_ds_read_tr*` builtins) check this layout against a
//! reference written as a matrix transpose.
//!
//! # Decisions
//!
//! - EXEC: the guide requires EXEC to be all ones for these loads (CDNA4 ISA section 11.4,
//!   as cited in github.com/triton-lang/triton pull 11434) and defines nothing else. Here an
//!   inactive lane supplies no block (its elements read as zero; its address is not used)
//!   and, as for every DS load, only active lanes' registers are written.
//! - Out-of-range blocks read zero, the DS convention of `ds`: a block not wholly inside the
//!   work-group's LDS reads as zero.
//! - Alignment: the `b64` forms read their block at the exact byte address, as
//!   `ds_read_b64` does here (no source states a requirement). `ds_read_b96_tr_b6` needs
//!   128-bit aligned addresses (rocRoller pads each 96-bit block to 16 bytes for it): the low
//!   four address bits are ignored, so the block is read from the 16-byte boundary at or
//!   below the address.
//! - `acc` selects the AccVGPRs as destination, as for the other DS loads.

use crate::decode::Opcode;

use super::vmem::{file, lds_read};
use super::wave::{Wave, WAVE_LANES};

/// Lanes that exchange data in one transposing load.
const GROUP: usize = 16;

/// One of the four transposing loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TrLoad {
    /// `ds_read_b64_tr_b4`.
    B4,
    /// `ds_read_b96_tr_b6`.
    B6,
    /// `ds_read_b64_tr_b8`.
    B8,
    /// `ds_read_b64_tr_b16`.
    B16,
}

impl TrLoad {
    /// The transposing load of `op`, if it is one.
    pub(super) fn of(op: Opcode) -> Option<TrLoad> {
        Some(match op {
            Opcode::DsReadB64TrB4 => TrLoad::B4,
            Opcode::DsReadB96TrB6 => TrLoad::B6,
            Opcode::DsReadB64TrB8 => TrLoad::B8,
            Opcode::DsReadB64TrB16 => TrLoad::B16,
            _ => return None,
        })
    }

    /// Bits of one element.
    fn element_bits(self) -> u32 {
        match self {
            TrLoad::B4 => 4,
            TrLoad::B6 => 6,
            TrLoad::B8 => 8,
            TrLoad::B16 => 16,
        }
    }

    /// Bytes of one lane's block (and of its result).
    fn block_bytes(self) -> usize {
        if self == TrLoad::B6 {
            12
        } else {
            8
        }
    }

    /// The address bits the load ignores (see the module docs: b6 reads 16-byte aligned).
    fn align_mask(self) -> u32 {
        if self == TrLoad::B6 {
            !15
        } else {
            !0
        }
    }
}

/// Runs one transposing load: `addr` is the address VGPR of every lane, `offset` the
/// instruction's byte offset, `vdst` the first destination register (AccVGPR when `acc`).
pub(super) fn read(w: &mut Wave, form: TrLoad, acc: bool, addr: &[u32; WAVE_LANES], offset: u32, vdst: usize, lds: &[u8]) {
    let exec = w.exec();
    let bytes = form.block_bytes();
    // Each lane's block, zero for inactive lanes.
    let mut blocks = [0u128; WAVE_LANES];
    for (lane, block) in blocks.iter_mut().enumerate() {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        lds_read(lds, addr[lane].wrapping_add(offset) & form.align_mask(), &mut buf[..bytes]);
        *block = u128::from_le_bytes(buf);
    }
    let width = form.element_bits();
    let per_lane = (8 * bytes as u32 / width) as usize;
    let rows = GROUP / per_lane;
    let mask = (1u128 << width) - 1;
    let dwords = bytes / 4;
    for lane in 0..WAVE_LANES {
        if (exec >> lane) & 1 == 0 {
            continue;
        }
        let (base, i) = (lane - lane % GROUP, lane % GROUP);
        let mut out = 0u128;
        for k in 0..per_lane {
            let source = blocks[base + rows * k + i / per_lane];
            let element = (source >> (width as usize * (i % per_lane))) & mask;
            out |= element << (width as usize * k);
        }
        let regs = file(w, acc);
        for d in 0..dwords {
            regs[(vdst + d) & 255][lane] = (out >> (32 * d)) as u32;
        }
    }
}
