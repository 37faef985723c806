//! A wave's vector register file (VGPRs or AccVGPRs), sized by what the kernel
//! descriptor allocates.
//!
//! Hardware gives a wave only the registers its descriptor asks for, and the ISA manuals
//! define what happens outside them: a source register out of range reads register 0,
//! a destination out of range is not written. [`RegFile`] implements exactly that, so a
//! wave costs what its kernel uses (a 16-VGPR kernel 4 KiB, not the 64 KiB of a full
//! file), and no register index can make the simulator panic.

use std::ops::{Index, IndexMut};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_big_array::BigArray;

use super::wave::{VReg, VGPR_SLOTS, WAVE_LANES};

/// What an empty file reads (a wave allocated no AccVGPRs).
static ZERO: VReg = [0; WAVE_LANES];

/// Lane-contiguous vector registers `0..len`; see the [module docs](self).
#[derive(Clone)]
pub struct RegFile {
    regs: Vec<VReg>,
    /// Where writes beyond the allocation go (and are forgotten).
    sink: VReg,
}

impl RegFile {
    /// `len` zeroed registers (at most [`VGPR_SLOTS`]).
    pub fn zeroed(len: usize) -> RegFile {
        RegFile {
            regs: vec![[0; WAVE_LANES]; len.min(VGPR_SLOTS)],
            sink: [0; WAVE_LANES],
        }
    }

    /// Makes this file `len` zeroed registers, keeping its storage.
    pub fn reset(&mut self, len: usize) {
        let len = len.min(VGPR_SLOTS);
        self.regs.truncate(len);
        for r in &mut self.regs {
            *r = [0; WAVE_LANES];
        }
        self.regs.resize(len, [0; WAVE_LANES]);
    }

    /// Registers allocated.
    pub fn len(&self) -> usize {
        self.regs.len()
    }

    /// True when no register is allocated.
    pub fn is_empty(&self) -> bool {
        self.regs.is_empty()
    }

    /// The allocated registers.
    pub fn as_slice(&self) -> &[VReg] {
        &self.regs
    }

    /// The allocated registers, writable.
    pub fn as_mut_slice(&mut self) -> &mut [VReg] {
        &mut self.regs
    }

    /// Several distinct allocated registers at once; `Err` when an index repeats or lies
    /// outside the allocation (callers then take the general path through indexing).
    #[inline(always)]
    pub fn get_disjoint_mut<const K: usize>(
        &mut self,
        idx: [usize; K],
    ) -> Result<[&mut VReg; K], std::slice::GetDisjointMutError> {
        self.regs.get_disjoint_mut(idx)
    }
}

impl Index<usize> for RegFile {
    type Output = VReg;

    /// Register `i`, or register 0 when `i` is not allocated.
    #[inline(always)]
    fn index(&self, i: usize) -> &VReg {
        match self.regs.get(i) {
            Some(r) => r,
            None => self.regs.first().unwrap_or(&ZERO),
        }
    }
}

impl IndexMut<usize> for RegFile {
    /// Register `i`, or a scratch register whose contents are discarded when `i` is not
    /// allocated.
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut VReg {
        match self.regs.get_mut(i) {
            Some(r) => r,
            None => &mut self.sink,
        }
    }
}

impl std::fmt::Debug for RegFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RegFile({} registers)", self.regs.len())
    }
}

/// One register as a serde value.
struct Reg<'a>(&'a VReg);

impl Serialize for Reg<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        BigArray::serialize(self.0, s)
    }
}

#[derive(Deserialize)]
struct OwnedReg(#[serde(with = "BigArray")] [u32; WAVE_LANES]);

/// A sequence of the allocated registers (the sink is not state).
impl Serialize for RegFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.regs.iter().map(Reg))
    }
}

impl<'de> Deserialize<'de> for RegFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RegFile, D::Error> {
        let regs: Vec<OwnedReg> = Vec::deserialize(d)?;
        if regs.len() > VGPR_SLOTS {
            return Err(D::Error::invalid_length(
                regs.len(),
                &"at most 256 registers",
            ));
        }
        Ok(RegFile {
            regs: regs.into_iter().map(|r| r.0).collect(),
            sink: [0; WAVE_LANES],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_outside_the_allocation_see_register_zero_and_writes_vanish() {
        let mut f = RegFile::zeroed(8);
        f[0] = [7; WAVE_LANES];
        f[3][5] = 9;
        f[200] = [1; WAVE_LANES];
        assert_eq!(f[200], [7; WAVE_LANES]);
        assert_eq!(f[3][5], 9);
        assert_eq!(f.len(), 8);
        assert!(f
            .as_slice()
            .iter()
            .skip(1)
            .all(|r| r.iter().all(|&x| x != 1)));
    }

    #[test]
    fn an_empty_file_reads_zero() {
        let mut f = RegFile::zeroed(0);
        f[4] = [3; WAVE_LANES];
        assert_eq!(f[4], [0; WAVE_LANES]);
        assert!(f.get_disjoint_mut([0, 1]).is_err());
    }

    #[test]
    fn reset_zeroes_and_resizes() {
        let mut f = RegFile::zeroed(4);
        f[2] = [5; WAVE_LANES];
        f.reset(16);
        assert_eq!(f.len(), 16);
        assert!(f.as_slice().iter().all(|r| *r == [0; WAVE_LANES]));
        f.reset(1000);
        assert_eq!(f.len(), VGPR_SLOTS);
    }
}
