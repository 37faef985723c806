//! The C library's own functions, found with `dlsym(RTLD_NEXT, name)` on first use and
//! cached. A function the C library lacks makes its hook fail with `ENOSYS`.

use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Resolves `name` (NUL-terminated) in the objects after this one.
fn lookup(cache: &AtomicUsize, name: &'static [u8]) -> usize {
    let cached = cache.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    // SAFETY: `name` is NUL-terminated; RTLD_NEXT is valid from a shared object.
    let addr = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    cache.store(addr, Ordering::Relaxed);
    addr
}

macro_rules! real_functions {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty = $fail:expr; )*) => {
        $(
            #[doc = concat!("Calls the C library's `", stringify!($name), "` (`ENOSYS` if it has none).")]
            ///
            /// # Safety
            /// As the C function.
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $name($($arg: $ty),*) -> $ret {
                static CACHE: AtomicUsize = AtomicUsize::new(0);
                let addr = lookup(&CACHE, concat!(stringify!($name), "\0").as_bytes());
                if addr == 0 {
                    crate::guard::set_errno(libc::ENOSYS);
                    return $fail;
                }
                // SAFETY: the symbol has this C signature (glibc's declaration).
                let f: unsafe extern "C" fn($($ty),*) -> $ret = std::mem::transmute(addr);
                f($($arg),*)
            }
        )*
    };
}

real_functions! {
    open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int = -1;
    open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int = -1;
    openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int = -1;
    openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int = -1;
    __open_2(path: *const c_char, flags: c_int) -> c_int = -1;
    __open64_2(path: *const c_char, flags: c_int) -> c_int = -1;
    __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int = -1;
    __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int = -1;
    fopen(path: *const c_char, mode: *const c_char) -> *mut libc::FILE = std::ptr::null_mut();
    fopen64(path: *const c_char, mode: *const c_char) -> *mut libc::FILE = std::ptr::null_mut();
    opendir(path: *const c_char) -> *mut libc::DIR = std::ptr::null_mut();
    close(fd: c_int) -> c_int = -1;
    dup(fd: c_int) -> c_int = -1;
    dup2(old: c_int, new: c_int) -> c_int = -1;
    dup3(old: c_int, new: c_int, flags: c_int) -> c_int = -1;
    fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int = -1;
    fcntl64(fd: c_int, cmd: c_int, arg: c_long) -> c_int = -1;
    ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int = -1;
    mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, offset: i64) -> *mut c_void = libc::MAP_FAILED;
    mmap64(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, offset: i64) -> *mut c_void = libc::MAP_FAILED;
    munmap(addr: *mut c_void, len: usize) -> c_int = -1;
    mremap(old: *mut c_void, old_len: usize, new_len: usize, flags: c_int, new_addr: *mut c_void) -> *mut c_void = libc::MAP_FAILED;
    mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int = -1;
    stat(path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    stat64(path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    lstat(path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    lstat64(path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    fstatat(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int = -1;
    fstatat64(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int = -1;
    fstat(fd: c_int, buf: *mut libc::stat) -> c_int = -1;
    fstat64(fd: c_int, buf: *mut libc::stat) -> c_int = -1;
    __xstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    __xstat64(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    __lxstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    __lxstat64(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int = -1;
    __fxstat(ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int = -1;
    __fxstat64(ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int = -1;
    __fxstatat(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int = -1;
    __fxstatat64(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int = -1;
    statx(dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut libc::statx) -> c_int = -1;
    access(path: *const c_char, mode: c_int) -> c_int = -1;
    faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int = -1;
    readlink(path: *const c_char, buf: *mut c_char, size: usize) -> isize = -1;
    readlinkat(dirfd: c_int, path: *const c_char, buf: *mut c_char, size: usize) -> isize = -1;
}
