//! An [`RpcMemory`] over a host allocation: the shared buffer for a client
//! that runs on the host (the runtime's host build, protocol tests).

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::error::RpcError;
use super::services::RpcMemory;

/// A zero-filled, 64-byte-aligned host allocation addressed by its host
/// virtual addresses, so a host client can use it through plain pointers.
///
/// Accesses outside the allocation are [`RpcError::Memory`] errors.
pub struct HostBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is only reached through raw pointers. Mailbox words are
// accessed atomically; the RPC ownership protocol (acquire/release on the
// mailboxes) gives each side exclusive use of a port's header and packets
// while it touches them.
unsafe impl Send for HostBuffer {}
// SAFETY: as above.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// Allocates `size` zeroed bytes (at least one).
    pub fn new(size: u64) -> Result<HostBuffer, RpcError> {
        let too_big = || RpcError::Memory {
            addr: 0,
            len: size,
            reason: "host allocation failed".to_string(),
        };
        let bytes = usize::try_from(size.max(1)).map_err(|_| too_big())?;
        let layout = Layout::from_size_align(bytes, 64).map_err(|_| too_big())?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(too_big)?;
        Ok(HostBuffer { ptr, layout })
    }

    /// The address of the first byte, as the client sees it.
    pub fn base(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.layout.size() as u64
    }

    /// Always false: a buffer has at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Translates `[addr, addr + len)` to a pointer, or names the bad access.
    fn at(&self, addr: u64, len: u64, align: u64) -> Result<*mut u8, RpcError> {
        let fail = |reason: &str| RpcError::Memory {
            addr,
            len,
            reason: reason.to_string(),
        };
        let offset = addr.checked_sub(self.base()).ok_or_else(|| fail("below the host buffer"))?;
        let end = offset.checked_add(len).ok_or_else(|| fail("address overflow"))?;
        if end > self.len() {
            return Err(fail("beyond the host buffer"));
        }
        if !addr.is_multiple_of(align) {
            return Err(fail("misaligned mailbox access"));
        }
        // SAFETY: offset + len is within the allocation (checked above).
        Ok(unsafe { self.ptr.as_ptr().add(offset as usize) })
    }

    fn mailbox(&self, addr: u64) -> Result<&AtomicU32, RpcError> {
        let p = self.at(addr, 4, 4)?;
        // SAFETY: in bounds and 4-aligned; the allocation outlives &self.
        Ok(unsafe { &*(p as *const AtomicU32) })
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl RpcMemory for HostBuffer {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), RpcError> {
        let p = self.at(addr, buf.len() as u64, 1)?;
        // SAFETY: in bounds; the protocol gives the server exclusive use.
        unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), RpcError> {
        let p = self.at(addr, data.len() as u64, 1)?;
        // SAFETY: in bounds; the protocol gives the server exclusive use.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    fn load_u32_acquire(&self, addr: u64) -> Result<u32, RpcError> {
        Ok(self.mailbox(addr)?.load(Ordering::Acquire))
    }

    fn store_u32_release(&self, addr: u64, v: u32) -> Result<(), RpcError> {
        self.mailbox(addr)?.store(v, Ordering::Release);
        Ok(())
    }
}
