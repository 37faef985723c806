//! Opening files: the `open` family (with glibc's `_FORTIFY_SOURCE` variants), `fopen`
//! and `opendir`.
//!
//! A device open makes a placeholder descriptor on `/dev/null` (keeping the
//! application's `O_CLOEXEC`), so the number is real and reserved until the application
//! closes it, and tells the backend.

use std::ffi::{c_char, c_int, c_uint};
use std::sync::Arc;

use kmd_linux::{DeviceNode, KfdBackend};

use super::{with_path, PLACEHOLDER};
use crate::{real, state};

/// Opens the placeholder for `node` and registers it.
fn open_device(b: &Arc<dyn KfdBackend>, node: DeviceNode, flags: c_int) -> c_int {
    // SAFETY: a constant path.
    let fd = unsafe {
        real::open(
            PLACEHOLDER.as_ptr(),
            libc::O_RDWR | (flags & libc::O_CLOEXEC),
            0,
        )
    };
    if fd < 0 {
        return fd;
    }
    if !state::set_node(fd, node) {
        // SAFETY: our own descriptor.
        unsafe { real::close(fd) };
        return state::fail(libc::EMFILE);
    }
    b.opened(fd, node);
    state::trace(|| format!("open({}) -> fd {fd}", state::node_name(node)));
    fd
}

unsafe fn open_common(
    path: *const c_char,
    flags: c_int,
    real: impl Fn(*const c_char) -> c_int,
) -> c_int {
    with_path("open", path, -1, libc::ENODEV, real, |b, node| {
        open_device(b, node, flags)
    })
}

/// `open(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    open_common(path, flags, |p| real::open(p, flags, mode))
}

/// `open64(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    open_common(path, flags, |p| real::open64(p, flags, mode))
}

/// `openat(2)` (absolute paths only are ours).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    open_common(path, flags, |p| real::openat(dirfd, p, flags, mode))
}

/// `openat64(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    open_common(path, flags, |p| real::openat64(dirfd, p, flags, mode))
}

/// glibc's checked `open` (`_FORTIFY_SOURCE`).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    open_common(path, flags, |p| real::__open_2(p, flags))
}

/// glibc's checked `open64`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    open_common(path, flags, |p| real::__open64_2(p, flags))
}

/// glibc's checked `openat`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    open_common(path, flags, |p| real::__openat_2(dirfd, p, flags))
}

/// glibc's checked `openat64`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    open_common(path, flags, |p| real::__openat64_2(dirfd, p, flags))
}

/// `fopen(3)`: faked paths only (a device through stdio is not supported).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    let real = |p| real::fopen(p, mode);
    with_path(
        "fopen",
        path,
        std::ptr::null_mut(),
        libc::ENODEV,
        real,
        |_, _| real(path),
    )
}

/// `fopen64(3)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    let real = |p| real::fopen64(p, mode);
    with_path(
        "fopen64",
        path,
        std::ptr::null_mut(),
        libc::ENODEV,
        real,
        |_, _| real(path),
    )
}

/// `opendir(3)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut libc::DIR {
    let real = |p| real::opendir(p);
    with_path(
        "opendir",
        path,
        std::ptr::null_mut(),
        libc::ENOTDIR,
        real,
        |_, _| real(path),
    )
}
