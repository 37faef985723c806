//! Calls on device descriptors: `ioctl` and `mmap` go to the backend. Every call that
//! takes memory away from the application tells the backend first, which forgets device
//! mappings and SVM ranges there (as the kernel's MMU notifiers tell the real driver):
//! `munmap`, an `mmap` with `MAP_FIXED` over whatever was there, and the pages a `mremap`
//! leaves behind; `mprotect` tells it before and after, so GPU mappings follow the new
//! protection.

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
    if flags & libc::MAP_FIXED != 0 {
        // The new mapping (of a device or not) replaces the old pages at `addr`.
        unmapping(addr, len);
    }
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

/// Tells the running backend that `[addr, addr + len)` is about to lose its pages.
fn unmapping(addr: *mut c_void, len: usize) {
    let Some(_inside) = guard::enter() else {
        return;
    };
    guard::ffi((), || {
        if let Some(b) = state::owned() {
            b.unmapping(addr as usize, len);
        }
    });
}

/// Tells the running backend that `[addr, addr + len)` changes protection: before the
/// call (`done` false) and after it succeeded.
fn protecting(addr: *mut c_void, len: usize, done: bool) {
    let Some(_inside) = guard::enter() else {
        return;
    };
    guard::ffi((), || {
        if let Some(b) = state::owned() {
            b.protecting(addr as usize, len, done);
        }
    });
}

/// `mprotect(2)`: the GPU's mappings of the pages follow their new protection.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int {
    protecting(addr, len, false);
    let r = real::mprotect(addr, len, prot);
    if r == 0 {
        protecting(addr, len, true);
    }
    r
}

/// `munmap(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    unmapping(addr, len);
    real::munmap(addr, len)
}

/// `mremap(2)`. Declared with the optional new address, which is how callers pass it on
/// x86_64 (read only with `MREMAP_FIXED`).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn mremap(old: *mut c_void, old_len: usize, new_len: usize, flags: c_int, new_addr: *mut c_void) -> *mut c_void {
    if flags & libc::MREMAP_FIXED != 0 {
        unmapping(new_addr, new_len);
    }
    let moved = real::mremap(old, old_len, new_len, flags, new_addr);
    if moved == libc::MAP_FAILED {
        return moved;
    }
    if moved != old {
        unmapping(old, old_len);
    } else if new_len < old_len {
        unmapping(old.cast::<u8>().wrapping_add(new_len).cast(), old_len - new_len);
    }
    moved
}
