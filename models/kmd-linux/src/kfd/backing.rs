//! Backing store of VRAM and GTT buffer objects: one sparse memfd per driver, which
//! the driver maps once for the simulator and the application maps piecewise (through
//! the render node, at each buffer's GPU address), so both see the same pages. A
//! buffer is a page-aligned range of the file; freeing one punches a hole, returning
//! its pages to the system and making them read as zeros when reused.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Mutex;

use rustix::fs::{FallocateFlags, MemfdFlags};
use rustix::mm::{MapFlags, ProtFlags};

use crate::backend::Errno;

/// Page size of buffer objects.
pub const PAGE: u64 = 4096;

/// Why the backing store could not be created.
#[derive(Debug, thiserror::Error)]
#[error("creating the {bytes}-byte buffer backing store: {errno}")]
pub struct BackingError {
    /// The requested capacity.
    pub bytes: u64,
    /// The failure.
    pub errno: Errno,
}

/// See the [module docs](self).
pub struct Backing {
    fd: OwnedFd,
    base: usize,
    capacity: u64,
    /// Free ranges: start offset -> end offset.
    free: Mutex<BTreeMap<u64, u64>>,
}

// SAFETY: `base` is the address of a shared mapping owned by this value for its whole
// life; the mapping itself is accessed through raw pointers by design (the simulator
// and the application share it).
unsafe impl Send for Backing {}
// SAFETY: see above; the free list is behind a mutex.
unsafe impl Sync for Backing {}

/// The name of the store's memfd (`/memfd:NAME` in `/proc/<pid>/maps`).
pub const MEMFD_NAME: &str = "dojo-gpu-buffers";

impl Backing {
    /// A store of `capacity` bytes (sparse: only touched pages use memory).
    pub fn new(capacity: u64) -> Result<Backing, BackingError> {
        let capacity = capacity.next_multiple_of(PAGE);
        let err = |errno| BackingError {
            bytes: capacity,
            errno,
        };
        let fd = rustix::fs::memfd_create(MEMFD_NAME, MemfdFlags::CLOEXEC).map_err(err)?;
        rustix::fs::ftruncate(&fd, capacity).map_err(err)?;
        let len = usize::try_from(capacity).map_err(|_| err(Errno::NOMEM))?;
        // SAFETY: a new shared mapping of our own file at an address the kernel picks.
        let base = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::NORESERVE,
                &fd,
                0,
            )
        }
        .map_err(err)? as usize;
        let mut free = BTreeMap::new();
        free.insert(0, capacity);
        Ok(Backing {
            fd,
            base,
            capacity,
            free: Mutex::new(free),
        })
    }

    /// The memfd (what the application's render-node mmaps map).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The memfd's number (an internal descriptor the application must not close).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Where the driver sees offset `offset`.
    pub fn host_address(&self, offset: u64) -> u64 {
        self.base as u64 + offset
    }

    /// Bytes in the store.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Reserves `bytes` (rounded up to pages); returns the offset. `ENOMEM` when full.
    pub fn alloc(&self, bytes: u64) -> Result<u64, Errno> {
        let bytes = bytes
            .max(1)
            .checked_next_multiple_of(PAGE)
            .ok_or(Errno::NOMEM)?;
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let (&start, &end) = free
            .iter()
            .find(|(&s, &e)| e - s >= bytes)
            .ok_or(Errno::NOMEM)?;
        free.remove(&start);
        if end - start > bytes {
            free.insert(start + bytes, end);
        }
        Ok(start)
    }

    /// Returns `[offset, offset + bytes)` to the store, dropping its pages.
    pub fn free(&self, offset: u64, bytes: u64) {
        let bytes = bytes.max(1).next_multiple_of(PAGE);
        let _ = rustix::fs::fallocate(
            &self.fd,
            FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
            offset,
            bytes,
        );
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let mut start = offset;
        let mut end = offset + bytes;
        if let Some((&s, &e)) = free.range(..start).next_back() {
            if e == start {
                free.remove(&s);
                start = s;
            }
        }
        if let Some(&e) = free.get(&end) {
            free.remove(&end);
            end = e;
        }
        free.insert(start, end);
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `new` with this length and nobody else owns it.
        let _ = unsafe { rustix::mm::munmap(self.base as *mut _, self.capacity as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_reused_and_coalesced() {
        let b = Backing::new(64 * PAGE).unwrap();
        let a = b.alloc(10).unwrap();
        let c = b.alloc(3 * PAGE).unwrap();
        assert_eq!((a, c), (0, PAGE));
        // SAFETY: inside the store's mapping.
        unsafe { *(b.host_address(c) as *mut u8) = 7 };
        b.free(c, 3 * PAGE);
        b.free(a, 10);
        let big = b.alloc(64 * PAGE).unwrap();
        assert_eq!(big, 0);
        // SAFETY: as above.
        assert_eq!(unsafe { *(b.host_address(PAGE) as *const u8) }, 0);
        assert_eq!(b.alloc(1), Err(Errno::NOMEM));
    }
}
