//! DPP (data-parallel primitives): the lane permutation a VOP1/VOP2/VOPC DPP control word
//! applies to source 0, and the lanes it lets the instruction write.
//!
//! The controls follow the CDNA3 ISA's `DPP_CTRL` enumeration (section 13.3.9), which
//! gfx90a, gfx942 and gfx950 share:
//!
//! | `dpp_ctrl`  | LLVM syntax        | lane `n` reads                                       |
//! |-------------|--------------------|------------------------------------------------------|
//! | 0x000-0x0ff | `quad_perm`        | lane `(n & ~3) + ctrl[2*(n%4)+1 : 2*(n%4)]`          |
//! | 0x101-0x10f | `row_shl:1..15`    | `n + k` if it stays in the row, else out of range    |
//! | 0x111-0x11f | `row_shr:1..15`    | `n - k` if it stays in the row, else out of range    |
//! | 0x121-0x12f | `row_ror:1..15`    | the row rotated right by `k`                         |
//! | 0x130       | `wave_shl:1`       | `n + 1` (lane 63 out of range)                       |
//! | 0x134       | `wave_rol:1`       | `(n + 1) % 64`                                       |
//! | 0x138       | `wave_shr:1`       | `n - 1` (lane 0 out of range)                        |
//! | 0x13c       | `wave_ror:1`       | `(n - 1) % 64`                                       |
//! | 0x140       | `row_mirror`       | `15 - (n & 15)` in the row                           |
//! | 0x141       | `row_half_mirror`  | `7 - (n & 7)` in the half row                        |
//! | 0x142       | `row_bcast:15`     | the last lane of the previous row (row 0 out of range)|
//! | 0x143       | `row_bcast:31`     | lane 31 for lanes 32..63 (others out of range)       |
//! | 0x150-0x15f | `row_newbcast:k`   | lane `k` of its own row                              |
//!
//! Every other value (0x100, 0x110, 0x120, 0x131-0x133, ...) is reserved: the ISA calls it
//! undefined, LLVM rejects it, and the executor stops with `ExecFault::Illegal`.
//!
//! A source lane that is out of range or disabled in EXEC supplies nothing: with
//! `bound_ctrl` (bit 19) set the lane writes zero, otherwise it keeps its destination.
//! `row_mask` and `bank_mask` only restrict which lanes are written.
//!
//! **64-bit operands** (the `DP ALU` forms: `v_mov_b64`, f64 operations, `v_fmac_f64`, any
//! 64-bit destination such as `v_cvt_pk_f32_fp8`) permute whole 64-bit values. The ISA
//! says "for 64-bit input data the only legal DPP type is DPP_ROW" (row_newbcast) and LLVM
//! accepts nothing else for them ("DP ALU dpp only supports row_newbcast"); every other
//! control on such a form is illegal ([`legal`]).

/// Where a lane's DPP source comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Source {
    /// This lane of the source register.
    Lane(usize),
    /// Out of range: `bound_ctrl` decides.
    OutOfRange,
}

/// True when `ctrl` (the 9-bit `dpp_ctrl` field) names a defined control.
#[inline]
fn defined(ctrl: u32) -> bool {
    matches!(
        ctrl,
        0x000..=0x0ff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f | 0x130 | 0x134 | 0x138 | 0x13c | 0x140..=0x143 | 0x150..=0x15f
    )
}

/// True when the DPP control word `word` may be executed: its control is defined, and a
/// form with 64-bit operands (`dp_alu`) uses `row_newbcast`.
pub(crate) fn legal(word: u32, dp_alu: bool) -> bool {
    let ctrl = (word >> 8) & 0x1ff;
    defined(ctrl) && (!dp_alu || (0x150..=0x15f).contains(&ctrl))
}

/// The source of `lane` under the defined control `ctrl`.
#[inline]
fn source(ctrl: u32, lane: usize) -> Source {
    use Source::{Lane, OutOfRange};
    let row = lane & !15;
    let col = lane & 15;
    let k = (ctrl & 0xf) as usize;
    match ctrl {
        0x000..=0x0ff => Lane((lane & !3) + ((ctrl >> (2 * (lane & 3))) & 3) as usize),
        0x101..=0x10f if col + k < 16 => Lane(lane + k),
        0x111..=0x11f if col >= k => Lane(lane - k),
        0x121..=0x12f => Lane(row + ((col + 16 - k) & 15)),
        0x130 if lane < 63 => Lane(lane + 1),
        0x134 => Lane((lane + 1) & 63),
        0x138 if lane > 0 => Lane(lane - 1),
        0x13c => Lane((lane + 63) & 63),
        0x140 => Lane(row + 15 - col),
        0x141 => Lane((lane & !7) + 7 - (lane & 7)),
        0x142 if row > 0 => Lane(row - 1),
        0x143 if lane >= 32 => Lane(31),
        0x150..=0x15f => Lane(row + k),
        _ => OutOfRange,
    }
}

/// Applies the DPP control word `word` to `src` (64 lanes of any width): the permuted
/// values and the lanes the instruction may write (a subset of `exec`). The control must
/// be [`legal`]; a reserved one reads as out of range everywhere.
pub(crate) fn permute<T: Copy + Default>(word: u32, src: &[T; 64], exec: u64) -> ([T; 64], u64) {
    let ctrl = (word >> 8) & 0x1ff;
    let bound_zero = (word >> 19) & 1 != 0;
    let bank_mask = (word >> 24) & 0xf;
    let row_mask = (word >> 28) & 0xf;
    let defined = defined(ctrl);
    let mut out = [T::default(); 64];
    let mut mask = 0u64;
    for (lane, slot) in out.iter_mut().enumerate() {
        if (row_mask >> (lane / 16)) & 1 == 0 || (bank_mask >> ((lane >> 2) & 3)) & 1 == 0 {
            continue;
        }
        let from = if defined { source(ctrl, lane) } else { Source::OutOfRange };
        match from {
            Source::Lane(s) if (exec >> s) & 1 != 0 => {
                *slot = src[s];
                mask |= 1 << lane;
            }
            _ if bound_zero => mask |= 1 << lane,
            _ => {}
        }
    }
    (out, mask & exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes() -> [u64; 64] {
        std::array::from_fn(|i| i as u64 | (0x100 + i as u64) << 32)
    }

    #[test]
    fn row_newbcast_broadcasts_one_lane_per_row() {
        let (out, mask) = permute(0xff00_0000 | 0x153 << 8, &lanes(), u64::MAX);
        assert_eq!(mask, u64::MAX);
        for (lane, &v) in out.iter().enumerate() {
            assert_eq!(v, lanes()[(lane & !15) + 3]);
        }
    }

    #[test]
    fn reserved_controls_are_not_legal() {
        for ctrl in [0x100, 0x110, 0x120, 0x131, 0x13f, 0x144, 0x14f, 0x160, 0x1ff] {
            assert!(!legal(ctrl << 8, false), "{ctrl:#x}");
        }
        assert!(legal(0x15f << 8, true));
        assert!(!legal(0xe4 << 8, true));
        assert!(legal(0xe4 << 8, false));
    }

    #[test]
    fn disabled_source_lanes_write_zero_only_with_bound_ctrl() {
        let src = lanes();
        let exec = !1u64;
        // row_shr:1: lane 1 reads lane 0, which is disabled.
        let (_, mask) = permute(0xff00_0000 | 0x111 << 8, &src, exec);
        assert_eq!(mask & 2, 0);
        let (out, mask) = permute(0xff00_0000 | 0x111 << 8 | 1 << 19, &src, exec);
        assert_eq!((mask & 2, out[1]), (2, 0));
    }
}
