//! Where a compute unit puts a work-group: its work-group slot (HW_ID.TG_ID), its LDS range
//! (LDS_ALLOC.LDS_BASE) and each wave's VGPR and SGPR ranges in its SIMD's register files
//! (GPR_ALLOC.VGPR_BASE, SGPR_BASE).
//!
//! The command processor only counts free registers and LDS; the bases here come from a
//! first-fit over the ranges the unit's live waves and resident groups hold, in the units
//! the registers report (8 VGPRs, 16 SGPRs with the trap handler's 16 included, 256 LDS
//! bytes from allocations rounded to 512 bytes, 1280 on gfx950). When fragmentation leaves
//! no range the counts allowed, or a base does not fit its field, the base is unknown to
//! the wave (reading it stops the wave) rather than made up.

use amdgpu_isa::exec::hwreg::{fit, lds_allocation};
use amdgpu_isa::exec::{Wave, WaveStatus};
use amdgpu_isa::Target;

/// Work-group slots a compute unit numbers (HW_ID.TG_ID is 4 bits).
const TG_SLOTS: u8 = 16;

/// The lowest start of `size` units inside `[0, capacity)` that overlaps none of `used`.
pub(crate) fn first_fit(used: &[(u32, u32)], size: u32, capacity: u32) -> Option<u32> {
    let mut ranges: Vec<(u32, u32)> = used.iter().copied().filter(|&(_, len)| len > 0).collect();
    ranges.sort_unstable();
    let mut start = 0u32;
    for (base, len) in ranges {
        if base.saturating_sub(start) >= size {
            break;
        }
        start = start.max(base.saturating_add(len));
    }
    (start.checked_add(size)? <= capacity).then_some(start)
}

/// The lowest work-group slot no resident group holds.
pub(crate) fn tg_slot(taken: impl Iterator<Item = Option<u8>>) -> Option<u8> {
    let mut used = 0u32;
    for t in taken.flatten() {
        used |= 1u32.checked_shl(u32::from(t)).unwrap_or(0);
    }
    (0..TG_SLOTS).find(|t| used & (1 << t) == 0)
}

/// The LDS range (start and length in bytes) for `bytes` of group LDS next to the resident
/// groups' `used` ranges, in an LDS of `capacity` bytes, and LDS_BASE for it.
pub(crate) fn lds_range(target: Target, used: &[(u32, u32)], bytes: u32, capacity: u32) -> (Option<(u32, u32)>, Option<u16>) {
    let size = lds_allocation(target, bytes);
    let unit = lds_allocation(target, 1);
    let units: Vec<(u32, u32)> = used.iter().map(|&(b, l)| (b / unit, l.div_ceil(unit))).collect();
    match first_fit(&units, size / unit, capacity / unit) {
        Some(start) => {
            let base = start * unit;
            (Some((base, size)), fit(base / 256, 8).map(u16::from))
        }
        None => (None, None),
    }
}

/// Sets the VGPR and SGPR bases of `new` waves, placed on SIMDs by their `simd_id`, next to
/// the `live` waves already on the unit, in register files of `vgprs` and `sgprs` per SIMD.
pub(crate) fn gpr_bases<'a>(live: impl Iterator<Item = &'a Wave>, new: &mut [Wave], vgprs: u32, sgprs: u32) {
    let mut used_v: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut used_s: Vec<Vec<(u32, u32)>> = Vec::new();
    for w in live.filter(|w| w.status != WaveStatus::Ended) {
        let Some(simd) = w.place.simd_id else { continue };
        if let Some(base) = w.place.vgpr_base {
            hold(&mut used_v, simd as usize, (u32::from(base), w.place.vgpr_granules()));
        }
        if let (Some(base), Some(g)) = (w.place.sgpr_base, w.place.sgpr_granules()) {
            hold(&mut used_s, simd as usize, (u32::from(base), g));
        }
    }
    for w in new.iter_mut() {
        let Some(simd) = w.place.simd_id.map(usize::from) else { continue };
        let vg = w.place.vgpr_granules();
        let vb = first_fit(used_v.get(simd).map_or(&[][..], |v| v), vg, vgprs / 8);
        if let Some(b) = vb {
            hold(&mut used_v, simd, (b, vg));
        }
        w.place.vgpr_base = vb.and_then(|b| fit(b, 6));
        w.place.sgpr_base = None;
        if let Some(sg) = w.place.sgpr_granules() {
            let sb = first_fit(used_s.get(simd).map_or(&[][..], |v| v), sg, sgprs / 16);
            if let Some(b) = sb {
                hold(&mut used_s, simd, (b, sg));
            }
            w.place.sgpr_base = sb.and_then(|b| fit(b, 6));
        }
    }
}

/// Records that SIMD `simd` holds `range`.
fn hold(v: &mut Vec<Vec<(u32, u32)>>, simd: usize, range: (u32, u32)) {
    if v.len() <= simd {
        v.resize(simd + 1, Vec::new());
    }
    v[simd].push(range);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_takes_the_lowest_gap() {
        assert_eq!(first_fit(&[], 4, 64), Some(0));
        assert_eq!(first_fit(&[(0, 4)], 4, 64), Some(4));
        assert_eq!(first_fit(&[(4, 4), (0, 2)], 2, 64), Some(2));
        assert_eq!(first_fit(&[(4, 4), (0, 2)], 3, 64), Some(8));
        assert_eq!(first_fit(&[(0, 60)], 8, 64), None);
    }

    #[test]
    fn work_group_slots_are_reused() {
        assert_eq!(tg_slot([Some(0), Some(2), None].into_iter()), Some(1));
        assert_eq!(tg_slot((0..16).map(Some)), None);
    }

    #[test]
    fn lds_ranges_round_to_the_allocation_unit() {
        // 100 bytes take one 512-byte block on gfx942; the next group starts at 512.
        let (r, base) = lds_range(Target::Gfx942, &[(0, 512)], 100, 65536);
        assert_eq!(r, Some((512, 512)));
        assert_eq!(base, Some(2));
        let (r, _) = lds_range(Target::Gfx950, &[], 100, 160 * 1024);
        assert_eq!(r, Some((0, 1280)));
    }
}
