//! Calls on device descriptors: `ioctl` and `mmap` go to the backend; every `munmap`
//! tells the backend first (it forgets device mappings in the range), then unmaps.

use std::ffi::{c_int, c_ulong, c_void};

use crate::{guard, real, state};

/// `ioctl(2)`. Declared with the request and one pointer argument, which is how every
/// caller passes it on x86_64.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    let Some(node) = state::node_of(fd) else {
        return real::ioctl(fd, request, arg);
    };
    let Some(_inside) = guard::enter() else {
        return real::ioctl(fd, request, arg);
    };
    guard::ffi(-1, || {
        let Some(b) = state::owned() else {
            return real::ioctl(fd, request, arg);
        };
        #[allow(clippy::useless_conversion)] // c_ulong is u32 on 32-bit targets
        let res = b.ioctl(fd, node, u64::from(request), arg);
        state::trace(|| {
            format!(
                "ioctl(fd {fd} {}, {request:#x}) -> {}",
                state::node_name(node),
                state::outcome(&res)
            )
        });
        match res {
            Ok(v) => v,
            Err(e) => state::fail(e.raw_os_error()),
        }
    })
}

unsafe fn mmap_common(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: i64,
    real: impl FnOnce() -> *mut c_void,
) -> *mut c_void {
    let Some(node) = state::node_of(fd) else {
        return real();
    };
    let Some(_inside) = guard::enter() else {
        return real();
    };
    guard::ffi(libc::MAP_FAILED, || {
        let Some(b) = state::owned() else {
            return real();
        };
        let res = b.mmap(fd, node, addr, len, prot, flags, offset);
        state::trace(|| {
            format!(
                "mmap(fd {fd} {}, len {len:#x}, offset {offset:#x}) -> {}",
                state::node_name(node),
                state::outcome(&res)
            )
        });
        match res {
            Ok(p) => p,
            Err(e) => {
                guard::set_errno(e.raw_os_error());
                libc::MAP_FAILED
            }
        }
    })
}

/// `mmap(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: i64,
) -> *mut c_void {
    mmap_common(addr, len, prot, flags, fd, offset, || {
        real::mmap(addr, len, prot, flags, fd, offset)
    })
}

/// `mmap64(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: i64,
) -> *mut c_void {
    mmap_common(addr, len, prot, flags, fd, offset, || {
        real::mmap64(addr, len, prot, flags, fd, offset)
    })
}

/// `munmap(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    let Some(_inside) = guard::enter() else {
        return real::munmap(addr, len);
    };
    guard::ffi(-1, || {
        if let Some(b) = state::owned() {
            b.unmapping(addr as usize, len);
        }
        real::munmap(addr, len)
    })
}
