//! Occupancy: what a kernel's work-group needs on a compute unit ([`Needs`]), the
//! free resources of one unit and how work-groups are placed on it ([`CuMirror`]:
//! contiguous wave slots, slot `k` on SIMD `k % simds`, VGPRs and SGPRs per SIMD, LDS),
//! and how many groups a set of empty units holds at once ([`resident_groups`]).
//!
//! The command processor places work-groups with it, and the SoC sizes a cooperative
//! launch's global wave sync with the same arithmetic, so both agree on what fits.

use amdgpu_isa::code_object::{KernelDescriptor, KERNEL_DESCRIPTOR_SIZE};
use serde::{Deserialize, Serialize};

use crate::gpu::aql::KernelDispatch;
use crate::gpu::ids::DispatchSeq;
use crate::gpu::messages::CuCapacity;

/// Resources of one kernel's work-group: its waves and what each needs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Needs {
    /// Waves of the group.
    pub(crate) waves: u32,
    /// VGPRs (architected and accumulation) per wave.
    pub(crate) vgprs: u32,
    /// SGPRs per wave.
    pub(crate) sgprs: u32,
    /// LDS bytes of the group.
    pub(crate) lds: u32,
}

/// The CP's picture of one compute unit.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
pub(crate) struct CuMirror {
    pub(crate) cap: Option<CuCapacity>,
    free_slots: u64,
    vgprs_free: Vec<u32>,
    sgprs_free: Vec<u32>,
    lds_free: u32,
    /// Groups resident: (dispatch, first slot, needs).
    groups: Vec<(DispatchSeq, u32, Needs)>,
}

impl CuMirror {
    pub(crate) fn set_capacity(&mut self, cap: CuCapacity) {
        self.cap = Some(cap);
        self.free_slots = if cap.slots >= 64 { u64::MAX } else { (1u64 << cap.slots) - 1 };
        self.vgprs_free = vec![cap.vgprs_per_simd; cap.simds as usize];
        self.sgprs_free = vec![cap.sgprs_per_simd; cap.simds as usize];
        self.lds_free = cap.lds_bytes;
    }

    /// The first slot of a contiguous run of `n.waves` free slots whose SIMDs have room.
    pub(crate) fn fit(&self, n: &Needs) -> Option<u32> {
        let cap = self.cap?;
        if n.lds > self.lds_free || n.waves == 0 || n.waves > cap.slots {
            return None;
        }
        let run = if n.waves >= 64 { u64::MAX } else { (1u64 << n.waves) - 1 };
        'start: for s in 0..=(cap.slots - n.waves) {
            if (self.free_slots >> s) & run != run {
                continue;
            }
            let mut vg = self.vgprs_free.clone();
            let mut sg = self.sgprs_free.clone();
            for i in 0..n.waves {
                let simd = ((s + i) % cap.simds) as usize;
                if vg[simd] < n.vgprs || sg[simd] < n.sgprs {
                    continue 'start;
                }
                vg[simd] -= n.vgprs;
                sg[simd] -= n.sgprs;
            }
            return Some(s);
        }
        None
    }

    pub(crate) fn take(&mut self, seq: DispatchSeq, first: u32, n: Needs) {
        let Some(cap) = self.cap else { return };
        for i in 0..n.waves {
            let simd = ((first + i) % cap.simds) as usize;
            self.free_slots &= !(1u64 << (first + i));
            self.vgprs_free[simd] -= n.vgprs;
            self.sgprs_free[simd] -= n.sgprs;
        }
        self.lds_free -= n.lds;
        self.groups.push((seq, first, n));
    }

    pub(crate) fn release(&mut self, seq: DispatchSeq, first: u32) {
        let Some(cap) = self.cap else { return };
        let Some(pos) = self.groups.iter().position(|g| g.0 == seq && g.1 == first) else { return };
        let (_, _, n) = self.groups.remove(pos);
        for i in 0..n.waves {
            let simd = ((first + i) % cap.simds) as usize;
            self.free_slots |= 1u64 << (first + i);
            self.vgprs_free[simd] += n.vgprs;
            self.sgprs_free[simd] += n.sgprs;
        }
        self.lds_free += n.lds;
    }

    /// Whether the group fits an empty unit at all.
    pub(crate) fn could_ever_fit(&self, n: &Needs) -> bool {
        let Some(cap) = self.cap else { return false };
        let mut empty = self.clone();
        empty.set_capacity(cap);
        empty.fit(n).is_some()
    }
}

/// What a work-group of the dispatch `packet` of kernel `kernel` (its descriptor bytes
/// `descriptor`) needs on a compute unit.
pub(crate) fn needs_of_kernel(descriptor: &[u8], packet: &KernelDispatch, kernel: &str) -> Result<(Needs, KernelDescriptor), String> {
    let bytes: &[u8; KERNEL_DESCRIPTOR_SIZE] = descriptor.try_into().map_err(|_| "descriptor is not 64 bytes".to_string())?;
    let kd = KernelDescriptor::decode(bytes).map_err(|e| format!("kernel descriptor at {}: {e:?}", packet.kernel_object))?;
    if kd.wavefront_size() != 64 {
        return Err(format!("kernel {kernel} is wave32; CDNA runs wave64 only"));
    }
    let items: u64 = packet.block.iter().map(|&b| u64::from(b)).product();
    Ok((
        Needs {
            waves: items.div_ceil(64) as u32,
            vgprs: kd.vgpr_count(),
            sgprs: kd.sgpr_count(),
            lds: kd.group_segment_fixed_size.max(packet.group_segment_size),
        },
        kd,
    ))
}

/// How many work-groups that need `needs` the empty compute units `caps` hold at once,
/// placed as the command processor places them (at most `limit`). Placement on one unit
/// does not depend on the others, so this is the sum of each unit's first-fit count.
pub(crate) fn resident_groups(caps: &[CuCapacity], needs: &Needs, limit: u64) -> u64 {
    let mut known: Vec<(CuCapacity, u64)> = Vec::new();
    let mut total = 0u64;
    for cap in caps {
        let n = match known.iter().find(|(c, _)| c == cap) {
            Some(&(_, n)) => n,
            None => {
                let mut m = CuMirror::default();
                m.set_capacity(*cap);
                let mut n = 0;
                while let Some(s) = m.fit(needs) {
                    m.take(DispatchSeq(0), s, *needs);
                    n += 1;
                }
                known.push((*cap, n));
                n
            }
        };
        total = total.saturating_add(n);
        if total >= limit {
            return limit;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_respects_every_resource() {
        let mut m = CuMirror::default();
        m.set_capacity(CuCapacity { simds: 4, slots: 32, vgprs_per_simd: 512, sgprs_per_simd: 800, lds_bytes: 65536 });
        // 4 waves of 128 VGPRs: each SIMD holds 4 such waves, so 4 groups fit, the fifth not.
        let n = Needs { waves: 4, vgprs: 128, sgprs: 32, lds: 1024 };
        for g in 0..4 {
            let s = m.fit(&n).expect("fits");
            assert_eq!(s, 4 * g);
            m.take(DispatchSeq(1), s, n);
        }
        assert_eq!(m.fit(&n), None, "VGPRs are exhausted");
        m.release(DispatchSeq(1), 4);
        assert_eq!(m.fit(&n), Some(4));
        // LDS limits too.
        let big = Needs { waves: 1, vgprs: 8, sgprs: 16, lds: 65536 };
        assert_eq!(m.fit(&big), None);
        assert!(m.could_ever_fit(&big));
        let huge = Needs { waves: 1, vgprs: 1024, sgprs: 16, lds: 0 };
        assert!(!m.could_ever_fit(&huge));
    }

    #[test]
    fn resident_groups_counts_what_placement_holds_at_once() {
        let cap = CuCapacity { simds: 4, slots: 32, vgprs_per_simd: 512, sgprs_per_simd: 800, lds_bytes: 65536 };
        // 4 waves of 128 VGPRs: 4 groups per unit (VGPRs); 3 units hold 12.
        let n = Needs { waves: 4, vgprs: 128, sgprs: 32, lds: 1024 };
        assert_eq!(resident_groups(&[cap; 3], &n, u64::MAX), 12);
        assert_eq!(resident_groups(&[cap; 3], &n, 5), 5);
        // 3 waves of 96 VGPRs (5 per SIMD, 20 per unit): 6 groups, as HIP's occupancy.
        let odd = Needs { waves: 3, vgprs: 96, sgprs: 16, lds: 0 };
        assert_eq!(resident_groups(&[cap], &odd, u64::MAX), 6);
        // LDS: 40 KiB groups, one per unit.
        let lds = Needs { waves: 1, vgprs: 8, sgprs: 16, lds: 40 << 10 };
        assert_eq!(resident_groups(&[cap; 2], &lds, u64::MAX), 2);
        // Nothing fits.
        let huge = Needs { waves: 1, vgprs: 1024, sgprs: 16, lds: 0 };
        assert_eq!(resident_groups(&[cap; 2], &huge, u64::MAX), 0);
    }
}
