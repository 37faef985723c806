//! LDS bank conflicts: how many cycles the LDS pipeline spends on one wave's access.
//!
//! The LDS is split into `banks` banks of one dword (32 on CDNA 2/3, 64 on CDNA 4: AMD's
//! CDNA white papers); a dword address `d` lives in bank `d % banks`. Each cycle the LDS
//! serves up to `banks` dwords; a wave's access is served in lane order, as many lanes
//! per cycle as their dwords fill the banks (32 lanes of a `b32` access on 32 banks,
//! 16 of a `b64`, 8 of a `b128`). Within such a group, lanes that touch the same dword
//! share one read (a broadcast), and lanes that touch different dwords of one bank
//! conflict: the group takes as many cycles as its busiest bank has distinct dwords.

/// The shape of one DS instruction's access (from its mnemonic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LdsShape {
    /// Bytes each address reads or writes (0: not an LDS data access).
    pub bytes: u8,
    /// Two-address form (`read2`/`write2`): a second element at `offset1`.
    pub pair: bool,
    /// `st64` two-address form: offsets count 64 elements.
    pub st64: bool,
}

impl LdsShape {
    /// The shape of `mnemonic` (a `ds_*` mnemonic), `LdsShape::default()` when it moves
    /// no LDS data (GWS, `ds_nop`, permutes without LDS).
    pub fn of(mnemonic: &str) -> LdsShape {
        let Some(rest) = mnemonic.strip_prefix("ds_") else {
            return LdsShape::default();
        };
        if rest.starts_with("gws")
            || rest == "nop"
            || rest.starts_with("bpermute")
            || rest.starts_with("permute")
            || rest.starts_with("swizzle")
        {
            return LdsShape::default();
        }
        let pair = rest.contains("read2") || rest.contains("write2") || rest.contains("xchg2");
        let st64 = rest.contains("st64");
        let bytes = if rest.contains("b128") {
            16
        } else if rest.contains("b96") {
            12
        } else if rest.contains("b64")
            || rest.contains("_u64")
            || rest.contains("_i64")
            || rest.contains("_f64")
            || rest.contains("_x2")
        {
            8
        } else if rest.contains("u16")
            || rest.contains("i16")
            || rest.contains("b16")
            || rest.contains("d16")
        {
            2
        } else if rest.contains("u8") || rest.contains("i8") || rest.contains("b8") {
            1
        } else {
            4
        };
        LdsShape { bytes, pair, st64 }
    }
}

/// Cycles the LDS takes for one wave's access: `addrs` are the lanes' byte addresses
/// (the ADDR VGPR), `exec` the active lanes, `offsets` the instruction's two offset
/// fields, `banks` the bank count. At least one cycle.
pub fn lds_cycles(
    shape: LdsShape,
    addrs: &[u32; 64],
    exec: u64,
    offsets: (u32, u32),
    banks: u32,
) -> u64 {
    if shape.bytes == 0 || exec == 0 || banks == 0 {
        return 1;
    }
    let size = u32::from(shape.bytes);
    // Dwords each lane touches, in lane order.
    let mut dwords: Vec<u32> = Vec::with_capacity(128);
    let mut per_lane = Vec::with_capacity(64);
    let mut mask = exec;
    while mask != 0 {
        let lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let start = dwords.len();
        let elements: &[u32] = if shape.pair {
            let scale = if shape.st64 { 64 * size } else { size };
            &[offsets.0 * scale, offsets.1 * scale]
        } else {
            &[offsets.0 | offsets.1 << 8]
        };
        for &off in elements {
            let a = addrs[lane].wrapping_add(off);
            let first = a / 4;
            let last = a.wrapping_add(size - 1) / 4;
            let mut d = first;
            loop {
                dwords.push(d);
                if d == last {
                    break;
                }
                d = d.wrapping_add(1);
            }
        }
        per_lane.push(dwords.len() - start);
    }
    // Groups of lanes whose dwords fill at most one row of banks.
    let mut cycles = 0u64;
    let mut at = 0;
    let mut lane = 0;
    let mut counts = vec![0u32; banks as usize];
    let mut seen: Vec<u32> = Vec::with_capacity(banks as usize);
    while lane < per_lane.len() {
        let mut end = at;
        let mut n = 0;
        while lane < per_lane.len() && (n == 0 || n + per_lane[lane] <= banks as usize) {
            n += per_lane[lane];
            end += per_lane[lane];
            lane += 1;
        }
        seen.clear();
        counts.iter_mut().for_each(|c| *c = 0);
        for &d in &dwords[at..end] {
            if !seen.contains(&d) {
                seen.push(d);
                counts[(d % banks) as usize] += 1;
            }
        }
        cycles += u64::from(counts.iter().copied().max().unwrap_or(1).max(1));
        at = end;
    }
    cycles.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(u32) -> u32) -> [u32; 64] {
        std::array::from_fn(|l| f(l as u32))
    }

    const B32: LdsShape = LdsShape {
        bytes: 4,
        pair: false,
        st64: false,
    };

    #[test]
    fn unit_stride_dwords_take_two_cycles_on_32_banks() {
        assert_eq!(lds_cycles(B32, &lanes(|l| 4 * l), u64::MAX, (0, 0), 32), 2);
        assert_eq!(
            lds_cycles(B32, &lanes(|l| 4 * l), u64::MAX, (0, 0), 64),
            1,
            "64 banks serve the whole wave"
        );
    }

    #[test]
    fn a_stride_of_the_bank_count_serialises() {
        // Every lane in bank 0, each a different dword: 32 conflicts per half-wave.
        assert_eq!(
            lds_cycles(B32, &lanes(|l| 128 * l), u64::MAX, (0, 0), 32),
            64
        );
        // Stride 2 dwords: two lanes per bank within a half-wave.
        assert_eq!(lds_cycles(B32, &lanes(|l| 8 * l), u64::MAX, (0, 0), 32), 4);
    }

    #[test]
    fn one_address_is_a_broadcast() {
        assert_eq!(lds_cycles(B32, &lanes(|_| 64), u64::MAX, (0, 0), 32), 2);
    }

    #[test]
    fn wide_accesses_take_more_groups() {
        let b128 = LdsShape {
            bytes: 16,
            pair: false,
            st64: false,
        };
        // 64 lanes x 4 dwords = 256 dwords over 32 banks: 8 cycles, no conflict.
        assert_eq!(
            lds_cycles(b128, &lanes(|l| 16 * l), u64::MAX, (0, 0), 32),
            8
        );
        let pair = LdsShape {
            bytes: 4,
            pair: true,
            st64: false,
        };
        assert_eq!(
            lds_cycles(pair, &lanes(|l| 4 * l), u64::MAX, (0, 16), 32),
            4
        );
        // Offsets 32 dwords apart put both elements of a lane in one bank: twice that.
        assert_eq!(
            lds_cycles(pair, &lanes(|l| 4 * l), u64::MAX, (0, 32), 32),
            8
        );
    }

    #[test]
    fn shapes_come_from_mnemonics() {
        assert_eq!(LdsShape::of("ds_read_b32"), B32);
        assert_eq!(LdsShape::of("ds_read_b128").bytes, 16);
        assert_eq!(
            LdsShape::of("ds_read2st64_b64"),
            LdsShape {
                bytes: 8,
                pair: true,
                st64: true
            }
        );
        assert_eq!(LdsShape::of("ds_write_b8").bytes, 1);
        assert_eq!(LdsShape::of("ds_add_u32").bytes, 4);
        assert_eq!(LdsShape::of("ds_gws_init").bytes, 0);
        assert_eq!(lds_cycles(B32, &lanes(|l| 4 * l), 0, (0, 0), 32), 1);
    }
}
