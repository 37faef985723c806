//! Re-entrancy and panic safety at the C boundary.
//!
//! Every hook first calls [`enter`]: inside the interposer (the backend opening its own
//! files, Rust's standard library calling `open64` or `statx`), hooks go straight to the
//! C library. [`ffi`] turns a panic into an error return with `errno = EIO`.

use std::cell::Cell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Proof that the calling thread is inside the interposer; leaving on drop.
pub struct Inside(());

impl Drop for Inside {
    fn drop(&mut self) {
        let _ = INSIDE.try_with(|c| c.set(false));
    }
}

/// Enters the interposer, or `None` when the thread is already inside (or its
/// thread-locals are gone, at thread exit): the caller must then use the real function.
pub fn enter() -> Option<Inside> {
    INSIDE
        .try_with(|c| {
            if c.replace(true) {
                None
            } else {
                Some(Inside(()))
            }
        })
        .ok()
        .flatten()
}

/// Sets the calling thread's `errno`.
pub fn set_errno(errno: c_int) {
    // SAFETY: __errno_location always returns the calling thread's errno.
    unsafe { *libc::__errno_location() = errno };
}

/// The calling thread's `errno`.
pub fn errno() -> c_int {
    // SAFETY: as in `set_errno`.
    unsafe { *libc::__errno_location() }
}

/// Runs a hook body; a panic becomes `on_panic` with `errno = EIO`.
pub fn ffi<R>(on_panic: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(_) => {
            set_errno(libc::EIO);
            on_panic
        }
    }
}
