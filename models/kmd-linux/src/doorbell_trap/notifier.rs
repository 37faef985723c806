//! The notifier thread: the SIGTRAP handler marks a range dirty and writes to an
//! eventfd; this thread wakes, takes each dirty mark and calls the range's callback.
//!
//! A callback runs after the write that marked it (the mark is set after the store
//! completed), so a callback that reads the range sees every write made before it was
//! called. Marks coalesce: one call may stand for many writes.
//!
//! Calls are made [`DELIVERY_DELAY`] after the wake, as a packet processor sees a
//! doorbell some time after the store: a runtime may still do its own bookkeeping for a
//! packet after ringing for it. HIP 5.2.3 (ROCclr, direct dispatch) attaches a marker's
//! timestamp object to its command only after ringing the doorbell; a completion
//! handled before that gives the marker a host `CLOCK_MONOTONIC` time, which
//! `hipEventElapsedTime` then subtracts from a GPU (simulated) time. Writes made during
//! the delay join the same call.

use std::os::fd::{AsFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::Duration;

use rustix::event::{EventfdFlags, PollFd, PollFlags};
use rustix::io::Errno;

use super::table::{ACTIVE, MAX_WATCHES, WATCHES};

/// Wall time from a wake of the notifier to its calls.
pub const DELIVERY_DELAY: Duration = Duration::from_millis(10);

/// What a watch calls after writes to its range.
pub(super) type Callback = Arc<dyn Fn() + Send + Sync>;

/// The eventfd the handlers write to (-1 before [`start`]).
static EVENT_FD: AtomicI32 = AtomicI32::new(-1);

/// Callbacks that ran.
pub(super) static NOTIFICATIONS: AtomicU64 = AtomicU64::new(0);

/// Callback of each slot of [`WATCHES`]. Also the lock under which `watch` and `unwatch`
/// change slots.
pub(super) static REGISTRY: Mutex<Vec<Option<Callback>>> = Mutex::new(Vec::new());

/// Held by the notifier while a callback runs, so `unwatch` can wait for it.
static CALLING: Mutex<()> = Mutex::new(());

static NOTIFIER: OnceLock<ThreadId> = OnceLock::new();

/// Creates the eventfd and starts the thread. Called once.
pub(super) fn start() -> Result<(), super::TrapError> {
    let fd = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK).map_err(
        |errno| super::TrapError::Sys {
            what: "eventfd",
            errno,
        },
    )?;
    let read_end = fd.try_clone().map_err(|e| super::TrapError::Sys {
        what: "dup of the eventfd",
        errno: Errno::from_io_error(&e).unwrap_or(Errno::IO),
    })?;
    let handle = std::thread::Builder::new()
        .name("dojo-doorbells".into())
        .spawn(move || run(read_end))
        .map_err(|e| super::TrapError::Thread(e.to_string()))?;
    let _ = NOTIFIER.set(handle.thread().id());
    // The handlers' end stays open for the life of the process.
    EVENT_FD.store(fd.into_raw_fd(), Ordering::Release);
    Ok(())
}

/// Wakes the notifier. Async-signal-safe.
pub(super) fn wake() {
    let fd = EVENT_FD.load(Ordering::Acquire);
    if fd >= 0 {
        // SAFETY: the descriptor is never closed once stored.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        // EAGAIN (the counter is saturated) still leaves the notifier awake.
        let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
    }
}

/// Whether the caller is the notifier thread (a callback calling `unwatch`).
pub(super) fn on_notifier_thread() -> bool {
    NOTIFIER.get() == Some(&std::thread::current().id())
}

/// Waits until no callback is running. Callbacks removed from [`REGISTRY`] before this
/// call are never called after it returns.
pub(super) fn wait_for_callbacks() {
    drop(CALLING.lock().unwrap_or_else(|e| e.into_inner()));
}

fn run(fd: OwnedFd) {
    let mut buf = [0u8; 8];
    loop {
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return,
        }
        std::thread::sleep(DELIVERY_DELAY);
        // Resets the counter; EAGAIN when another wake already consumed it.
        let _ = rustix::io::read(fd.as_fd(), &mut buf);
        for (idx, slot) in WATCHES.iter().enumerate().take(MAX_WATCHES) {
            if slot.state.load(Ordering::SeqCst) != ACTIVE
                || !slot.dirty.swap(false, Ordering::SeqCst)
            {
                continue;
            }
            let _calling = CALLING.lock().unwrap_or_else(|e| e.into_inner());
            let callback = REGISTRY
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(idx)
                .cloned()
                .flatten();
            if let Some(callback) = callback {
                // A panicking callback must not stop the thread for the others.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback()));
                NOTIFICATIONS.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
