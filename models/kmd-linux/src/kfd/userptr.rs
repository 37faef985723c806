//! USERPTR memory in daemon mode: the client cannot share its anonymous pages, so it
//! moves them into a memfd (same contents, same address in the client) and sends the
//! memfd with the ALLOC_MEMORY_OF_GPU call; the daemon's request thread hands it to the
//! driver through [`with_migrated`], and the allocation maps it.

use std::cell::RefCell;
use std::os::fd::OwnedFd;

thread_local! {
    static MIGRATED: RefCell<Option<OwnedFd>> = const { RefCell::new(None) };
}

/// Runs `f` with `fd` as the memfd of the USERPTR allocation it makes (on this thread).
pub fn with_migrated<R>(fd: Option<OwnedFd>, f: impl FnOnce() -> R) -> R {
    MIGRATED.with(|m| *m.borrow_mut() = fd);
    let r = f();
    MIGRATED.with(|m| m.borrow_mut().take());
    r
}

/// The memfd given to this thread's current call, if any (taken).
pub(crate) fn take_migrated() -> Option<OwnedFd> {
    MIGRATED.with(|m| m.borrow_mut().take())
}
