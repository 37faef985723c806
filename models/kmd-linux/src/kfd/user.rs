//! Access to the application's memory through pointers it passed in ioctl arguments.
//! Every access is checked: a bad pointer is `EFAULT`, never a crash of the driver.

use bytemuck::Pod;

use crate::backend::Errno;
use crate::kfd::vma::{self, Vma};

/// The address space of the application a request came from.
pub trait UserMemory {
    /// Copies `buf.len()` bytes from the application's `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Errno>;
    /// Copies `data` to the application's `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), Errno>;

    /// The application's memory areas overlapping `[start, end)`, in address order
    /// (what SVM ranges are checked against). `ENOSYS` where they cannot be seen.
    fn mappings(&self, start: u64, end: u64) -> Result<Vec<Vma>, Errno> {
        let _ = (start, end);
        Err(Errno::NOSYS)
    }

    /// Reads one plain value.
    fn read_value<T: Pod>(&self, addr: u64) -> Result<T, Errno>
    where
        Self: Sized,
    {
        let mut v = T::zeroed();
        self.read(addr, bytemuck::bytes_of_mut(&mut v))?;
        Ok(v)
    }

    /// Reads `n` plain values (at most `limit`: larger counts are `EINVAL`).
    fn read_array<T: Pod>(&self, addr: u64, n: usize, limit: usize) -> Result<Vec<T>, Errno>
    where
        Self: Sized,
    {
        if n > limit {
            return Err(Errno::INVAL);
        }
        let mut v = vec![T::zeroed(); n];
        self.read(addr, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }
}

/// The memory of this very process (local mode), read and written with
/// `process_vm_readv`/`process_vm_writev` on ourselves, which fail with `EFAULT` on an
/// unmapped or protected address instead of faulting.
#[derive(Clone, Copy, Debug, Default)]
pub struct OwnMemory;

impl OwnMemory {
    fn transfer(addr: u64, local: *mut u8, len: usize, write: bool) -> Result<(), Errno> {
        if len == 0 {
            return Ok(());
        }
        if addr == 0 || addr.checked_add(len as u64).is_none() {
            return Err(Errno::FAULT);
        }
        let local_iov = libc::iovec {
            iov_base: local.cast(),
            iov_len: len,
        };
        let remote_iov = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: the local iovec describes a live buffer of `len` bytes owned by the
        // caller; the remote one is checked by the kernel.
        let n = unsafe {
            if write {
                libc::process_vm_writev(libc::getpid(), &local_iov, 1, &remote_iov, 1, 0)
            } else {
                libc::process_vm_readv(libc::getpid(), &local_iov, 1, &remote_iov, 1, 0)
            }
        };
        if n < 0 {
            let e = Errno::from_raw_os_error(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EFAULT),
            );
            return Err(if e == Errno::PERM || e == Errno::NOSYS {
                Errno::FAULT
            } else {
                e
            });
        }
        if n as usize != len {
            return Err(Errno::FAULT);
        }
        Ok(())
    }
}

impl UserMemory for OwnMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Errno> {
        OwnMemory::transfer(addr, buf.as_mut_ptr(), buf.len(), false)
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), Errno> {
        // process_vm_writev only reads the local buffer.
        OwnMemory::transfer(addr, data.as_ptr().cast_mut(), data.len(), true)
    }

    fn mappings(&self, start: u64, end: u64) -> Result<Vec<Vma>, Errno> {
        vma::own_mappings(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_memory_reads_writes_and_refuses_bad_pointers() {
        let mut target = [0u32; 4];
        let addr = target.as_mut_ptr() as u64;
        OwnMemory.write(addr + 4, &7u32.to_le_bytes()).unwrap();
        let v: u32 = OwnMemory.read_value(addr + 4).unwrap();
        assert_eq!(v, 7);
        assert_eq!(OwnMemory.read_value::<u64>(8), Err(Errno::FAULT));
        assert_eq!(OwnMemory.write(0, &[1]), Err(Errno::FAULT));
        assert_eq!(
            OwnMemory.read_array::<u64>(addr, 1 << 20, 1024),
            Err(Errno::INVAL)
        );
        assert_eq!(target[1], 7);
    }
}
