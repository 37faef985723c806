//! File status and existence: the `stat` families (glibc 2.33+ names and the older
//! `__xstat` ones), `statx`, `access`, `faccessat`, `readlink`.
//!
//! Faked paths are answered from the fake tree. A simulated device (by path or by
//! descriptor) looks like a character device readable and writable by everyone, with
//! the DRM major (226) and its minor for a render node and [`KFD_MAJOR`] for the KFD;
//! the other fields are those of the placeholder.

use std::ffi::{c_char, c_int, c_uint, CStr};

use kmd_linux::DeviceNode;

use super::{with_path, PLACEHOLDER};
use crate::{guard, real, state};

/// Major number of DRM devices on Linux.
pub const DRM_MAJOR: u32 = 226;

/// Major number shown for `/dev/kfd` (dynamic on Linux; a common value).
pub const KFD_MAJOR: u32 = 235;

fn device_numbers(node: DeviceNode) -> (u32, u32) {
    match node {
        DeviceNode::Kfd => (KFD_MAJOR, 0),
        DeviceNode::Render { minor } => (DRM_MAJOR, minor),
    }
}

const DEVICE_MODE: u32 = libc::S_IFCHR | 0o666;

/// Makes `buf` describe `node`.
///
/// # Safety
/// `buf` points to a `struct stat` the C library just filled.
unsafe fn patch_stat(buf: *mut libc::stat, node: DeviceNode) {
    let (major, minor) = device_numbers(node);
    (*buf).st_mode = DEVICE_MODE;
    (*buf).st_rdev = libc::makedev(major, minor);
}

/// Makes `buf` describe `node`.
///
/// # Safety
/// `buf` points to a `struct statx` the C library just filled.
unsafe fn patch_statx(buf: *mut libc::statx, node: DeviceNode) {
    let (major, minor) = device_numbers(node);
    (*buf).stx_mode = DEVICE_MODE as u16;
    (*buf).stx_rdev_major = major;
    (*buf).stx_rdev_minor = minor;
}

/// A path `stat`: `real` on the right path, then the device fields.
unsafe fn stat_path(
    path: *const c_char,
    buf: *mut libc::stat,
    real: impl Fn(*const c_char) -> c_int + Copy,
) -> c_int {
    with_path("stat", path, -1, libc::ENOENT, real, |_, node| {
        let r = real(PLACEHOLDER.as_ptr());
        if r == 0 {
            patch_stat(buf, node);
        }
        r
    })
}

/// A descriptor `stat`: the C library's answer, then the device fields if `fd` is one.
unsafe fn stat_fd(
    fd: c_int,
    patch: impl FnOnce(DeviceNode),
    real: impl FnOnce() -> c_int,
) -> c_int {
    let r = real();
    if r == 0 && state::owned().is_some() {
        if let Some(node) = state::node_of(fd) {
            patch(node);
        }
    }
    r
}

/// Whether an `*at` call with these arguments stats the descriptor itself.
unsafe fn is_empty_path(path: *const c_char, flags: c_int) -> bool {
    flags & libc::AT_EMPTY_PATH != 0 && (path.is_null() || CStr::from_ptr(path).is_empty())
}

macro_rules! path_stat {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As the C function.
        #[no_mangle]
        pub unsafe extern "C" fn $name(path: *const c_char, buf: *mut libc::stat) -> c_int {
            stat_path(path, buf, |p| real::$name(p, buf))
        }
    };
}

path_stat!(
    /// `stat(2)`.
    stat
);
path_stat!(
    /// `stat64(2)`.
    stat64
);
path_stat!(
    /// `lstat(2)`.
    lstat
);
path_stat!(
    /// `lstat64(2)`.
    lstat64
);

macro_rules! versioned_path_stat {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As the C function.
        #[no_mangle]
        pub unsafe extern "C" fn $name(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
            stat_path(path, buf, |p| real::$name(ver, p, buf))
        }
    };
}

versioned_path_stat!(
    /// glibc's old `stat` entry point.
    __xstat
);
versioned_path_stat!(
    /// glibc's old `stat64` entry point.
    __xstat64
);
versioned_path_stat!(
    /// glibc's old `lstat` entry point.
    __lxstat
);
versioned_path_stat!(
    /// glibc's old `lstat64` entry point.
    __lxstat64
);

macro_rules! at_stat {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As the C function.
        #[no_mangle]
        pub unsafe extern "C" fn $name(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int {
            if is_empty_path(path, flags) {
                return stat_fd(dirfd, |node| patch_stat(buf, node), || real::$name(dirfd, path, buf, flags));
            }
            stat_path(path, buf, |p| real::$name(dirfd, p, buf, flags))
        }
    };
}

at_stat!(
    /// `fstatat(2)`.
    fstatat
);
at_stat!(
    /// `fstatat64(2)`.
    fstatat64
);

/// glibc's old `fstatat` entry point.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __fxstatat(
    ver: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    if is_empty_path(path, flags) {
        return stat_fd(
            dirfd,
            |node| patch_stat(buf, node),
            || real::__fxstatat(ver, dirfd, path, buf, flags),
        );
    }
    stat_path(path, buf, |p| real::__fxstatat(ver, dirfd, p, buf, flags))
}

/// glibc's old `fstatat64` entry point.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __fxstatat64(
    ver: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    if is_empty_path(path, flags) {
        return stat_fd(
            dirfd,
            |node| patch_stat(buf, node),
            || real::__fxstatat64(ver, dirfd, path, buf, flags),
        );
    }
    stat_path(path, buf, |p| real::__fxstatat64(ver, dirfd, p, buf, flags))
}

/// `fstat(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn fstat(fd: c_int, buf: *mut libc::stat) -> c_int {
    stat_fd(fd, |node| patch_stat(buf, node), || real::fstat(fd, buf))
}

/// `fstat64(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn fstat64(fd: c_int, buf: *mut libc::stat) -> c_int {
    stat_fd(fd, |node| patch_stat(buf, node), || real::fstat64(fd, buf))
}

/// glibc's old `fstat` entry point.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __fxstat(ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int {
    stat_fd(
        fd,
        |node| patch_stat(buf, node),
        || real::__fxstat(ver, fd, buf),
    )
}

/// glibc's old `fstat64` entry point.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn __fxstat64(ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int {
    stat_fd(
        fd,
        |node| patch_stat(buf, node),
        || real::__fxstat64(ver, fd, buf),
    )
}

/// `statx(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    if is_empty_path(path, flags) {
        return stat_fd(
            dirfd,
            |node| patch_statx(buf, node),
            || real::statx(dirfd, path, flags, mask, buf),
        );
    }
    let real = |p| real::statx(dirfd, p, flags, mask, buf);
    with_path("statx", path, -1, libc::ENOENT, real, |_, node| {
        let r = real(PLACEHOLDER.as_ptr());
        if r == 0 {
            patch_statx(buf, node);
        }
        r
    })
}

/// `access(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    let real = |p| real::access(p, mode);
    with_path("access", path, -1, libc::ENOENT, real, |_, _| {
        real(PLACEHOLDER.as_ptr())
    })
}

/// `faccessat(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    let real = |p| real::faccessat(dirfd, p, mode, flags);
    with_path("faccessat", path, -1, libc::ENOENT, real, |_, _| {
        real(PLACEHOLDER.as_ptr())
    })
}

/// `readlink(2)` (the fake tree's `sys/class/kfd/kfd` is a symbolic link, as on Linux).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn readlink(path: *const c_char, buf: *mut c_char, size: usize) -> isize {
    let real = |p| real::readlink(p, buf, size);
    with_path("readlink", path, -1, libc::ENOENT, real, |_, _| {
        guard::set_errno(libc::EINVAL);
        -1
    })
}

/// `readlinkat(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn readlinkat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut c_char,
    size: usize,
) -> isize {
    let real = |p| real::readlinkat(dirfd, p, buf, size);
    with_path("readlinkat", path, -1, libc::ENOENT, real, |_, _| {
        guard::set_errno(libc::EINVAL);
        -1
    })
}
