//! The flat GPU memory model: a sparse, paged 64-bit address space.
//!
//! Pages of [`PAGE_SIZE`] bytes live in a hash map and are allocated on first write.
//! Reads of never-written addresses either return zero or fault, as
//! [`UnmappedReads`] says; writes always succeed unless the address range wraps.
//!
//! **Architecture Invariant:** no access panics; a bad access is a [`MemFault`] value.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::device::DeviceMemory;

/// Bytes per page.
pub const PAGE_SIZE: u64 = 64 * 1024;
const PAGE_SHIFT: u32 = 16;
const PAGE_MASK: u64 = PAGE_SIZE - 1;

/// Hasher for page numbers: one multiply (Fibonacci hashing); page numbers are not
/// adversarial, and SipHash would dominate every access.
#[derive(Default, Clone, Copy)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type PageMap = HashMap<u64, Box<[u8]>, BuildHasherDefault<PageHasher>>;

/// Why an access failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum MemFaultKind {
    /// A read of a page that was never mapped or written.
    Unmapped,
    /// The access runs past the end of the 64-bit address space.
    Wraps,
    /// An atomic whose address is not aligned to its size.
    Misaligned,
    /// A global wave sync (`ds_gws_*`) request reached a memory instead of the device's
    /// GWS unit (the address is the GWS resource id): the scheduler cannot perform it.
    GwsRequest,
}

/// A failed memory access (a value the executor turns into a wave fault).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("memory fault at {addr:#x}: {kind:?}")]
pub struct MemFault {
    /// First byte of the access that failed.
    pub addr: u64,
    /// What went wrong.
    pub kind: MemFaultKind,
}

/// What a read of an unmapped page does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum UnmappedReads {
    /// Fault with [`MemFaultKind::Unmapped`] (the default: catches wild pointers).
    #[default]
    Fault,
    /// Read as zero.
    Zero,
}

/// A sparse 64-bit byte-addressed memory. See the [module docs](self).
#[derive(Debug, Default, Clone)]
pub struct Memory {
    pages: PageMap,
    unmapped: UnmappedReads,
}

/// The page number shared by all 64 addresses when each 4-byte access at them lies inside
/// that one page; `None` otherwise. Written branch-free over the lanes so it vectorizes.
#[inline]
fn one_page_u32(addrs: &[u64; 64]) -> Option<u64> {
    let page_no = addrs[0] >> PAGE_SHIFT;
    let mut differ = 0u64;
    let mut straddle = false;
    for &addr in addrs {
        differ |= (addr >> PAGE_SHIFT) ^ page_no;
        straddle |= (addr & PAGE_MASK) > PAGE_SIZE - 4;
    }
    (differ == 0 && !straddle).then_some(page_no)
}

/// True when lane `i` addresses `addrs[0] + 4 * i` (a unit-stride dword access).
#[inline]
fn contiguous_u32(addrs: &[u64; 64]) -> bool {
    let base = addrs[0];
    let mut differ = 0u64;
    for (i, &addr) in addrs.iter().enumerate() {
        differ |= addr ^ base.wrapping_add(4 * i as u64);
    }
    differ == 0
}

/// The little-endian u32 at `off` of a page; `off <= PAGE_SIZE - 4` is the caller's
/// invariant (zero when it does not hold, never a panic).
#[inline(always)]
fn read_le_u32(page: &[u8], off: usize) -> u32 {
    match page.get(off..off + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

impl Memory {
    /// An empty memory whose unmapped reads fault.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// An empty memory with the given unmapped-read policy.
    pub fn with_unmapped_reads(unmapped: UnmappedReads) -> Memory {
        Memory { unmapped, ..Memory::default() }
    }

    /// Number of allocated pages.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Maps (allocates, zero-filled) every page touching `[addr, addr + len)`.
    pub fn map(&mut self, addr: u64, len: u64) -> Result<(), MemFault> {
        if len == 0 {
            return Ok(());
        }
        let end = addr.checked_add(len - 1).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        for page in (addr >> PAGE_SHIFT)..=(end >> PAGE_SHIFT) {
            self.pages.entry(page).or_insert_with(|| vec![0u8; PAGE_SIZE as usize].into_boxed_slice());
        }
        Ok(())
    }

    /// True if the page holding `addr` is mapped.
    pub fn is_mapped(&self, addr: u64) -> bool {
        self.pages.contains_key(&(addr >> PAGE_SHIFT))
    }

    /// Copies `buf.len()` bytes from `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let mut done = 0usize;
        if buf.is_empty() {
            return Ok(());
        }
        addr.checked_add(buf.len() as u64 - 1).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        while done < buf.len() {
            let a = addr + done as u64;
            let off = (a & PAGE_MASK) as usize;
            let n = (PAGE_SIZE as usize - off).min(buf.len() - done);
            match self.pages.get(&(a >> PAGE_SHIFT)) {
                Some(page) => buf[done..done + n].copy_from_slice(&page[off..off + n]),
                None => match self.unmapped {
                    UnmappedReads::Fault => return Err(MemFault { addr: a, kind: MemFaultKind::Unmapped }),
                    UnmappedReads::Zero => buf[done..done + n].fill(0),
                },
            }
            done += n;
        }
        Ok(())
    }

    /// Copies `data` to `addr`, allocating pages as needed.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        if data.is_empty() {
            return Ok(());
        }
        addr.checked_add(data.len() as u64 - 1).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
        let mut done = 0usize;
        while done < data.len() {
            let a = addr + done as u64;
            let off = (a & PAGE_MASK) as usize;
            let n = (PAGE_SIZE as usize - off).min(data.len() - done);
            let page = self.pages.entry(a >> PAGE_SHIFT).or_insert_with(|| vec![0u8; PAGE_SIZE as usize].into_boxed_slice());
            page[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// Like [`Memory::write`] but faults on a write to an unmapped page when unmapped
    /// reads fault: the executor's store path, so wild stores are caught.
    pub fn store(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        if self.unmapped == UnmappedReads::Fault && !data.is_empty() {
            let last = addr.checked_add(data.len() as u64 - 1).ok_or(MemFault { addr, kind: MemFaultKind::Wraps })?;
            for a in [addr, last] {
                if !self.is_mapped(a) {
                    return Err(MemFault { addr: a, kind: MemFaultKind::Unmapped });
                }
            }
        }
        self.write(addr, data)
    }

    /// Reads a little-endian u8.
    pub fn read_u8(&self, addr: u64) -> Result<u8, MemFault> {
        let mut b = [0u8; 1];
        self.read(addr, &mut b)?;
        Ok(b[0])
    }

    /// Reads a little-endian u16.
    pub fn read_u16(&self, addr: u64) -> Result<u16, MemFault> {
        let mut b = [0u8; 2];
        self.read(addr, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    /// Reads a little-endian u32 (fast path inside one page).
    #[inline]
    pub fn read_u32(&self, addr: u64) -> Result<u32, MemFault> {
        let off = (addr & PAGE_MASK) as usize;
        if off <= PAGE_SIZE as usize - 4 {
            if let Some(page) = self.pages.get(&(addr >> PAGE_SHIFT)) {
                let mut b = [0u8; 4];
                b.copy_from_slice(&page[off..off + 4]);
                return Ok(u32::from_le_bytes(b));
            }
        }
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes a little-endian u32 to a mapped page (fast path of the executor's stores);
    /// like [`Memory::store`] it faults on unmapped pages when unmapped reads fault.
    #[inline]
    pub fn store_u32(&mut self, addr: u64, v: u32) -> Result<(), MemFault> {
        let off = (addr & PAGE_MASK) as usize;
        if off <= PAGE_SIZE as usize - 4 {
            if let Some(page) = self.pages.get_mut(&(addr >> PAGE_SHIFT)) {
                page[off..off + 4].copy_from_slice(&v.to_le_bytes());
                return Ok(());
            }
        }
        self.store(addr, &v.to_le_bytes())
    }

    /// Reads one u32 per lane of `mask` from `addrs` into `out` (other lanes untouched),
    /// looking each page up once per run of lanes that stay inside it.
    #[inline]
    pub fn gather_u32(&self, addrs: &[u64; 64], mask: u64, out: &mut [u32; 64]) -> Result<(), MemFault> {
        if mask == u64::MAX {
            if let Some(page_no) = one_page_u32(addrs) {
                if let Some(page) = self.pages.get(&page_no) {
                    let start = (addrs[0] & PAGE_MASK) as usize;
                    if let (true, Some(bytes)) = (contiguous_u32(addrs), page.get(start..start + 256)) {
                        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                            *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        }
                        return Ok(());
                    }
                    for (o, &addr) in out.iter_mut().zip(addrs) {
                        *o = read_le_u32(page, (addr & PAGE_MASK) as usize);
                    }
                    return Ok(());
                }
            }
        }
        let mut cached: Option<(u64, &[u8])> = None;
        for lane in 0..64 {
            if (mask >> lane) & 1 == 0 {
                continue;
            }
            let addr = addrs[lane];
            let page_no = addr >> PAGE_SHIFT;
            let off = (addr & PAGE_MASK) as usize;
            if off > PAGE_SIZE as usize - 4 {
                out[lane] = self.read_u32(addr)?;
                continue;
            }
            let page = match cached {
                Some((no, page)) if no == page_no => page,
                _ => match self.pages.get(&page_no) {
                    Some(page) => {
                        cached = Some((page_no, page));
                        page
                    }
                    None => {
                        out[lane] = self.read_u32(addr)?;
                        continue;
                    }
                },
            };
            out[lane] = u32::from_le_bytes([page[off], page[off + 1], page[off + 2], page[off + 3]]);
        }
        Ok(())
    }

    /// Stores `vals[lane]` at `addrs[lane]` for the lanes of `mask`, in lane order, with
    /// [`Memory::store_u32`] semantics (unmapped pages fault when unmapped reads fault).
    #[inline]
    pub fn scatter_u32(&mut self, addrs: &[u64; 64], mask: u64, vals: &[u32; 64]) -> Result<(), MemFault> {
        if mask == u64::MAX {
            if let Some(page_no) = one_page_u32(addrs) {
                if let Some(page) = self.pages.get_mut(&page_no) {
                    let start = (addrs[0] & PAGE_MASK) as usize;
                    if contiguous_u32(addrs) {
                        if let Some(bytes) = page.get_mut(start..start + 256) {
                            for (b, &v) in bytes.chunks_exact_mut(4).zip(vals) {
                                b.copy_from_slice(&v.to_le_bytes());
                            }
                            return Ok(());
                        }
                    }
                    for (&v, &addr) in vals.iter().zip(addrs) {
                        let off = (addr & PAGE_MASK) as usize;
                        if let Some(dst) = page.get_mut(off..off + 4) {
                            dst.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    return Ok(());
                }
            }
        }
        let mut lane = 0usize;
        while lane < 64 {
            if (mask >> lane) & 1 == 0 {
                lane += 1;
                continue;
            }
            let page_no = addrs[lane] >> PAGE_SHIFT;
            match self.pages.get_mut(&page_no) {
                Some(page) => {
                    // Every following lane of the mask inside this page, while it fits.
                    while lane < 64 {
                        if (mask >> lane) & 1 != 0 {
                            let addr = addrs[lane];
                            let off = (addr & PAGE_MASK) as usize;
                            if addr >> PAGE_SHIFT != page_no || off > PAGE_SIZE as usize - 4 {
                                break;
                            }
                            page[off..off + 4].copy_from_slice(&vals[lane].to_le_bytes());
                        }
                        lane += 1;
                    }
                }
                None => {
                    self.store_u32(addrs[lane], vals[lane])?;
                    lane += 1;
                }
            }
            // A lane that broke out of the page loop (crossing) is retried from the top;
            // a straddling store goes through the byte path.
            if lane < 64 && (mask >> lane) & 1 != 0 {
                let addr = addrs[lane];
                if (addr & PAGE_MASK) as usize > PAGE_SIZE as usize - 4 {
                    self.store_u32(addr, vals[lane])?;
                    lane += 1;
                }
            }
        }
        Ok(())
    }

    /// Reads a little-endian u64.
    pub fn read_u64(&self, addr: u64) -> Result<u64, MemFault> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Reads 16 bytes as a little-endian u128.
    pub fn read_u128(&self, addr: u64) -> Result<u128, MemFault> {
        let mut b = [0u8; 16];
        self.read(addr, &mut b)?;
        Ok(u128::from_le_bytes(b))
    }

    /// Writes a little-endian u8.
    pub fn write_u8(&mut self, addr: u64, v: u8) -> Result<(), MemFault> {
        self.write(addr, &[v])
    }

    /// Writes a little-endian u16.
    pub fn write_u16(&mut self, addr: u64, v: u16) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Writes a little-endian u32.
    pub fn write_u32(&mut self, addr: u64, v: u32) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Writes a little-endian u64.
    pub fn write_u64(&mut self, addr: u64, v: u64) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Writes a little-endian u128 (16 bytes).
    pub fn write_u128(&mut self, addr: u64, v: u128) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// Reads `n` u32 words from `addr` into `out[..n]` (n <= out.len()).
    pub fn read_dwords(&self, addr: u64, out: &mut [u32]) -> Result<(), MemFault> {
        for (i, w) in out.iter_mut().enumerate() {
            *w = self.read_u32(addr.wrapping_add(4 * i as u64))?;
        }
        Ok(())
    }
}

/// The standalone executor's memory. Its [`DeviceMemory::write`] has the executor's store
/// semantics ([`Memory::store`]: a write to an unmapped page faults when unmapped reads
/// fault), and [`DeviceMemory::reserve`] maps pages; the inherent [`Memory::write`] keeps
/// allocating pages on demand.
impl DeviceMemory for Memory {
    const OBSERVES_ROUTES: bool = false;

    #[inline]
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        Memory::read(self, addr, buf)
    }

    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        self.store(addr, data)
    }

    fn reserve(&mut self, addr: u64, len: u64) -> Result<(), MemFault> {
        self.map(addr, len)
    }

    #[inline]
    fn read_u32(&mut self, addr: u64) -> Result<u32, MemFault> {
        Memory::read_u32(self, addr)
    }

    #[inline]
    fn write_u32(&mut self, addr: u64, v: u32) -> Result<(), MemFault> {
        self.store_u32(addr, v)
    }

    #[inline]
    fn gather_u32(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [u32; 64]) -> Result<(), MemFault> {
        Memory::gather_u32(self, addrs, mask, out)
    }

    #[inline]
    fn scatter_u32(&mut self, addrs: &[u64; 64], mask: u64, vals: &[u32; 64]) -> Result<(), MemFault> {
        Memory::scatter_u32(self, addrs, mask, vals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmapped_reads_fault_or_read_zero_by_policy() {
        let mut mem = Memory::new();
        assert_eq!(mem.read_u32(0x1234), Err(MemFault { addr: 0x1234, kind: MemFaultKind::Unmapped }));
        mem.write_u32(0x1234, 7).expect("write allocates");
        assert_eq!(mem.read_u32(0x1234), Ok(7));
        assert_eq!(mem.read_u32(0x1230), Ok(0), "the rest of the page is zero");
        let zero = Memory::with_unmapped_reads(UnmappedReads::Zero);
        assert_eq!(zero.read_u64(0xdead_0000), Ok(0));
    }

    #[test]
    fn accesses_straddle_pages_little_endian() {
        let mut mem = Memory::new();
        let addr = PAGE_SIZE - 3;
        mem.write_u128(addr, 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100).expect("write");
        assert_eq!(mem.page_count(), 2);
        assert_eq!(mem.read_u8(addr), Ok(0x00));
        assert_eq!(mem.read_u16(addr + 1), Ok(0x0201));
        assert_eq!(mem.read_u32(addr + 2), Ok(0x0504_0302), "u32 across the page boundary");
        assert_eq!(mem.read_u64(addr + 8), Ok(0x0f0e_0d0c_0b0a_0908));
        assert_eq!(mem.read_u128(addr), Ok(0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100));
    }

    #[test]
    fn stores_fault_on_unmapped_pages_and_wrapping_accesses_fault() {
        let mut mem = Memory::new();
        assert_eq!(mem.store_u32(0x5000, 1), Err(MemFault { addr: 0x5000, kind: MemFaultKind::Unmapped }));
        mem.map(0x5000, 4).expect("map");
        assert_eq!(mem.store_u32(0x5000, 1), Ok(()));
        assert_eq!(mem.read_u32(0x5000), Ok(1));
        assert_eq!(mem.write_u32(u64::MAX - 1, 0), Err(MemFault { addr: u64::MAX - 1, kind: MemFaultKind::Wraps }));
        let mut buf = [0u8; 4];
        assert_eq!(mem.read(u64::MAX, &mut buf).map_err(|f| f.kind), Err(MemFaultKind::Wraps));
    }

    #[test]
    fn gather_and_scatter_cross_pages_and_fault_on_unmapped_lanes() {
        let mut mem = Memory::new();
        mem.map(0, 2 * PAGE_SIZE).expect("map two pages");
        // Lanes walk across the page boundary, one of them straddles it.
        let addrs: [u64; 64] = std::array::from_fn(|i| PAGE_SIZE - 128 + 4 * i as u64 - if i == 32 { 2 } else { 0 });
        let vals: [u32; 64] = std::array::from_fn(|i| 1000 + i as u32);
        let mask = !(1u64 << 7);
        mem.scatter_u32(&addrs, mask, &vals).expect("mapped");
        let mut out = [7u32; 64];
        mem.gather_u32(&addrs, u64::MAX, &mut out).expect("mapped");
        for i in 0..64 {
            if i == 7 {
                assert_eq!(out[i], 0, "masked-off lane stored nothing");
            } else if i == 31 || i == 32 {
                // Lane 32 overlaps lane 31 by two bytes and was stored later.
                assert_eq!(mem.read_u32(addrs[32]), Ok(1032));
            } else {
                assert_eq!(out[i], vals[i], "lane {i}");
            }
        }
        let mut bad = addrs;
        bad[40] = 0x9_0000_0000;
        assert_eq!(mem.gather_u32(&bad, u64::MAX, &mut out), Err(MemFault { addr: 0x9_0000_0000, kind: MemFaultKind::Unmapped }));
        assert_eq!(mem.scatter_u32(&bad, u64::MAX, &vals), Err(MemFault { addr: 0x9_0000_0000, kind: MemFaultKind::Unmapped }));
    }

    #[test]
    fn one_page_and_unit_stride_accesses_match_per_lane_accesses() {
        let mut mem = Memory::new();
        let base = 3 * PAGE_SIZE;
        mem.map(base, PAGE_SIZE).expect("map one page");
        let vals: [u32; 64] = std::array::from_fn(|i| 0xa000_0000 + i as u32);
        // Unit stride, unaligned start, ending on the page's last byte.
        let unit: [u64; 64] = std::array::from_fn(|i| base + PAGE_SIZE - 256 + 4 * i as u64);
        mem.scatter_u32(&unit, u64::MAX, &vals).expect("mapped");
        let mut out = [0u32; 64];
        mem.gather_u32(&unit, u64::MAX, &mut out).expect("mapped");
        for i in 0..64 {
            assert_eq!(mem.read_u32(unit[i]), Ok(vals[i]), "lane {i}");
            assert_eq!(out[i], vals[i], "lane {i}");
        }
        // One page, scattered and overlapping lanes: later lanes win, gathers see them.
        let odd: [u64; 64] = std::array::from_fn(|i| base + 1 + ((i as u64 * 37) % 50) * 3);
        mem.scatter_u32(&odd, u64::MAX, &vals).expect("mapped");
        let mut reference = Memory::new();
        reference.map(base, PAGE_SIZE).expect("map one page");
        for i in 0..64 {
            reference.store_u32(odd[i], vals[i]).expect("mapped");
        }
        mem.gather_u32(&odd, u64::MAX, &mut out).expect("mapped");
        for i in 0..64 {
            assert_eq!(Ok(out[i]), reference.read_u32(odd[i]), "lane {i}");
        }
        // A unit-stride run past the page's end goes to the next, unmapped, page: fault.
        let past: [u64; 64] = std::array::from_fn(|i| base + PAGE_SIZE - 252 + 4 * i as u64);
        let end = base + PAGE_SIZE;
        assert_eq!(mem.gather_u32(&past, u64::MAX, &mut out), Err(MemFault { addr: end, kind: MemFaultKind::Unmapped }));
        assert_eq!(mem.scatter_u32(&past, u64::MAX, &vals), Err(MemFault { addr: end, kind: MemFaultKind::Unmapped }));
    }
}
