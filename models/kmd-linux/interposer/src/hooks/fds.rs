//! The descriptor table follows the application's `close`, `dup`, `dup2`, `dup3` and
//! `fcntl(F_DUPFD, F_DUPFD_CLOEXEC)`.
//!
//! - A duplicate of a device descriptor stands for the same device (the backend hears
//!   `opened` for it); closing any of them tells the backend `closed` for that number.
//! - `dup2`/`dup3` onto a device descriptor closes it first, as the kernel would.
//! - The backend's own descriptors cannot be closed (`EBADF`) or replaced by
//!   `dup2`/`dup3` (`EBADF` too: no program targets a descriptor it did not open,
//!   except one closing "all" descriptors, which then keeps working).
//! - `close_range` is not followed (device descriptors closed through it stay known to
//!   the backend until the number is reused by an open of a device).

use std::ffi::{c_int, c_long};
use std::sync::Arc;

use kmd_linux::{DeviceNode, KfdBackend};

use crate::{guard, real, state};

/// Registers `new`, a fresh duplicate of a descriptor of `node`.
fn adopt(b: &Arc<dyn KfdBackend>, old: c_int, new: c_int, node: DeviceNode) -> c_int {
    if !state::set_node(new, node) {
        // SAFETY: the duplicate we just made.
        unsafe { real::close(new) };
        return state::fail(libc::EMFILE);
    }
    b.opened(new, node);
    state::trace(|| format!("dup fd {old} ({}) -> fd {new}", state::node_name(node)));
    new
}

/// `close(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    let Some(_inside) = guard::enter() else {
        return real::close(fd);
    };
    guard::ffi(-1, || {
        if let Some(b) = state::owned() {
            if b.is_internal_fd(fd) {
                state::trace(|| format!("close(fd {fd}) refused: the driver's own descriptor"));
                return state::fail(libc::EBADF);
            }
            if let Some(node) = state::take_node(fd) {
                state::trace(|| format!("close(fd {fd}) ({})", state::node_name(node)));
                b.closed(fd, node);
            }
        }
        real::close(fd)
    })
}

/// A `dup` made by `real`: registers the new descriptor if `fd` is a device.
unsafe fn dup_common(fd: c_int, real: impl FnOnce() -> c_int) -> c_int {
    let Some(_inside) = guard::enter() else {
        return real();
    };
    guard::ffi(-1, || {
        let new = real();
        if new < 0 {
            return new;
        }
        match (state::owned(), state::node_of(fd)) {
            (Some(b), Some(node)) => adopt(b, fd, new, node),
            _ => new,
        }
    })
}

/// A `dup2`/`dup3` made by `real`.
unsafe fn dup_onto(old: c_int, new: c_int, real: impl FnOnce() -> c_int) -> c_int {
    let Some(_inside) = guard::enter() else {
        return real();
    };
    guard::ffi(-1, || {
        let Some(b) = state::owned() else {
            return real();
        };
        if old == new {
            return real();
        }
        if b.is_internal_fd(new) {
            state::trace(|| {
                format!("dup2(fd {old}, fd {new}) refused: the driver's own descriptor")
            });
            return state::fail(libc::EBADF);
        }
        // The kernel closes `new` only if `old` is valid.
        if real::fcntl(old, libc::F_GETFD, 0) < 0 {
            return -1;
        }
        if let Some(prev) = state::take_node(new) {
            state::trace(|| format!("close(fd {new}) ({}) by dup2", state::node_name(prev)));
            b.closed(new, prev);
        }
        let r = real();
        match state::node_of(old) {
            Some(node) if r >= 0 => adopt(b, old, r, node),
            _ => r,
        }
    })
}

/// `dup(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    dup_common(fd, || real::dup(fd))
}

/// `dup2(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    dup_onto(old, new, || real::dup2(old, new))
}

/// `dup3(2)`.
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    dup_onto(old, new, || real::dup3(old, new, flags))
}

fn is_dup(cmd: c_int) -> bool {
    cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC
}

/// `fcntl(2)`. The optional third argument is read as a `long` (an `int` or a pointer
/// in every command; extra argument registers are harmless on x86_64).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    if is_dup(cmd) {
        return dup_common(fd, || real::fcntl(fd, cmd, arg));
    }
    real::fcntl(fd, cmd, arg)
}

/// `fcntl64` (glibc 2.28+ name of `fcntl` with 64-bit locks).
///
/// # Safety
/// As the C function.
#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    if is_dup(cmd) {
        return dup_common(fd, || real::fcntl64(fd, cmd, arg));
    }
    real::fcntl64(fd, cmd, arg)
}
