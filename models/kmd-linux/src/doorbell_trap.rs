//! Learning of every store to a doorbell page without polling.
//!
//! ROCm rings an AQL queue's doorbell with a plain store to a page it mapped from the
//! KFD. To see those stores, a watched range is kept read-only:
//!
//! ```text
//!  app thread                      SIGSEGV handler            SIGTRAP handler        notifier thread
//!  store to doorbell ──fault──▶ range in a watch? ──no──▶ previous handler / default
//!                                  │yes: mprotect RW, set TF
//!  store executes ◀────return──────┘
//!  (single step) ──trap──────────────────────────────▶ mprotect RO, mark dirty,
//!                                                       write(eventfd) ──────▶ on_write()
//! ```
//!
//! - Several threads may write at once: each counts itself into the range's writers and
//!   the last one out re-protects the range; every write is followed by a callback
//!   (calls coalesce: a call means "some doorbell in this range changed", and the
//!   consumer re-reads the values).
//! - The notifier calls back `notifier::DELIVERY_DELAY` (10 ms) after its wake, as a
//!   packet processor sees a doorbell a while after the store.
//! - The handlers allocate nothing and lock nothing; per-thread state lives in a fixed
//!   table keyed by thread id (`table`).
//! - Faults outside watched ranges, and traps that are not single steps after a watched
//!   write, go to the handler installed before ours, or get the default action (the
//!   process dies of the signal as it would have).
//!
//! Limits: x86_64 Linux only. An application that later installs its own SIGSEGV or
//! SIGTRAP handler without chaining breaks the trap (ROCm does not); under a debugger
//! the single steps show up as SIGTRAP stops. Stores made by the kernel (a `read(2)` into
//! a watched page) fail with `EFAULT` instead of trapping. In a child after `fork` the
//! ranges stay trapped but no callback runs (the notifier thread is not forked).

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod handlers;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod notifier;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod table;

use std::ops::Range;
use std::sync::Arc;

pub use rustix::io::Errno;

/// Why a trap could not be installed or a range watched. All are recoverable: the
/// caller can fall back to polling.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrapError {
    /// The range is empty or not page-aligned.
    #[error("range {start:#x}..{end:#x} is empty or not page-aligned")]
    BadRange {
        /// First byte.
        start: usize,
        /// One past the last byte.
        end: usize,
    },
    /// The range overlaps one already watched.
    #[error("range {start:#x}..{end:#x} overlaps a watched range")]
    Overlap {
        /// First byte.
        start: usize,
        /// One past the last byte.
        end: usize,
    },
    /// Every watch slot is in use.
    #[error("too many watched ranges")]
    Full,
    /// A system call failed.
    #[error("{what}: {errno}")]
    Sys {
        /// The call.
        what: &'static str,
        /// Its error.
        errno: Errno,
    },
    /// The notifier thread could not start.
    #[error("starting the doorbell notifier thread: {0}")]
    Thread(String),
    /// Not x86_64 Linux.
    #[error("doorbell traps need x86_64 Linux")]
    Unsupported,
}

/// A watched range, as returned by [`watch`]. Stale ids (already unwatched) are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WatchId {
    slot: u32,
    generation: u32,
}

/// Counters of the whole process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrapStats {
    /// Stores that faulted in a watched range and were single-stepped.
    pub trapped_writes: u64,
    /// Callbacks called.
    pub notifications: u64,
}

/// Installs the SIGSEGV and SIGTRAP handlers and starts the notifier thread. Idempotent
/// (later calls return the first call's result).
pub fn install() -> Result<(), TrapError> {
    imp::install()
}

/// Watches `range`: makes it read-only and calls `on_write` (on the notifier thread)
/// after writes to it. Installs the trap first if needed.
///
/// # Safety
/// `range` must be page-aligned memory mapped readable and writable by the caller, which
/// no one else changes the protection of while it is watched; stores to it from the
/// kernel (system calls writing into it) fail with `EFAULT` while it is watched.
pub unsafe fn watch(
    range: Range<usize>,
    on_write: Arc<dyn Fn() + Send + Sync>,
) -> Result<WatchId, TrapError> {
    imp::watch(range, on_write)
}

/// Stops watching: waits for writes in flight, makes the range readable and writable
/// again, and waits for a running callback of the range (unless called from a callback).
/// The callback is not called after this returns.
pub fn unwatch(id: WatchId) {
    imp::unwatch(id)
}

/// The process's counters.
pub fn stats() -> TrapStats {
    imp::stats()
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    use std::ffi::c_void;
    use std::ops::Range;
    use std::sync::atomic::Ordering;
    use std::sync::OnceLock;

    use rustix::mm::MprotectFlags;

    use super::table::{ACTIVE, FILLING, FREE, MAX_WATCHES, UNWATCHING, WATCHES};
    use super::{handlers, notifier, TrapError, TrapStats, WatchId};

    static INSTALLED: OnceLock<Result<(), TrapError>> = OnceLock::new();

    pub(super) fn install() -> Result<(), TrapError> {
        INSTALLED
            .get_or_init(|| {
                notifier::start()?;
                handlers::install().map_err(|errno| TrapError::Sys {
                    what: "sigaction",
                    errno,
                })
            })
            .clone()
    }

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
    }

    pub(super) fn watch(
        range: Range<usize>,
        on_write: notifier::Callback,
    ) -> Result<WatchId, TrapError> {
        let page = page_size();
        if range.start >= range.end
            || !range.start.is_multiple_of(page)
            || !range.end.is_multiple_of(page)
        {
            return Err(TrapError::BadRange {
                start: range.start,
                end: range.end,
            });
        }
        install()?;
        let mut registry = notifier::REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let overlaps = WATCHES.iter().any(|s| {
            s.state.load(Ordering::SeqCst) != FREE
                && s.start.load(Ordering::Acquire) < range.end
                && range.start < s.end.load(Ordering::Acquire)
        });
        if overlaps {
            return Err(TrapError::Overlap {
                start: range.start,
                end: range.end,
            });
        }
        let idx = WATCHES
            .iter()
            .position(|s| s.state.load(Ordering::SeqCst) == FREE)
            .ok_or(TrapError::Full)?;
        let slot = &WATCHES[idx];
        slot.state.store(FILLING, Ordering::SeqCst);
        slot.start.store(range.start, Ordering::Release);
        slot.end.store(range.end, Ordering::Release);
        slot.writers.store(0, Ordering::SeqCst);
        slot.dirty.store(false, Ordering::SeqCst);
        let generation = slot
            .generation
            .fetch_add(1, Ordering::SeqCst)
            .wrapping_add(1);
        if registry.len() < MAX_WATCHES {
            registry.resize(MAX_WATCHES, None);
        }
        registry[idx] = Some(on_write);
        // Active before read-only: a fault must never find the range unknown.
        slot.state.store(ACTIVE, Ordering::SeqCst);
        // SAFETY: the caller guarantees the range is mapped and ours to protect.
        let res = unsafe {
            rustix::mm::mprotect(
                range.start as *mut c_void,
                range.end - range.start,
                MprotectFlags::READ,
            )
        };
        if let Err(errno) = res {
            registry[idx] = None;
            slot.state.store(FREE, Ordering::SeqCst);
            return Err(TrapError::Sys {
                what: "mprotect",
                errno,
            });
        }
        Ok(WatchId {
            slot: idx as u32,
            generation,
        })
    }

    pub(super) fn unwatch(id: WatchId) {
        let idx = id.slot as usize;
        let Some(slot) = WATCHES.get(idx) else { return };
        {
            let mut registry = notifier::REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
            if slot.state.load(Ordering::SeqCst) != ACTIVE
                || slot.generation.load(Ordering::SeqCst) != id.generation
            {
                return;
            }
            slot.state.store(UNWATCHING, Ordering::SeqCst);
            // Writers in flight are between a fault and its single step: a few
            // instructions, never blocked, so this wait is short.
            while slot.n_writers() != 0 {
                std::thread::yield_now();
            }
            let start = slot.start.load(Ordering::Acquire);
            let end = slot.end.load(Ordering::Acquire);
            // SAFETY: restores the protection the range had before `watch`; a failure
            // means the caller already unmapped it.
            let _ = unsafe {
                rustix::mm::mprotect(
                    start as *mut c_void,
                    end - start,
                    MprotectFlags::READ | MprotectFlags::WRITE,
                )
            };
            if let Some(entry) = registry.get_mut(idx) {
                *entry = None;
            }
            slot.state.store(FREE, Ordering::SeqCst);
        }
        if !notifier::on_notifier_thread() {
            notifier::wait_for_callbacks();
        }
    }

    pub(super) fn stats() -> TrapStats {
        TrapStats {
            trapped_writes: handlers::TRAPPED_WRITES.load(Ordering::Relaxed),
            notifications: notifier::NOTIFICATIONS.load(Ordering::Relaxed),
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
mod imp {
    use std::ops::Range;
    use std::sync::Arc;

    use super::{TrapError, TrapStats, WatchId};

    pub(super) fn install() -> Result<(), TrapError> {
        Err(TrapError::Unsupported)
    }

    pub(super) fn watch(
        _range: Range<usize>,
        _on_write: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<WatchId, TrapError> {
        Err(TrapError::Unsupported)
    }

    pub(super) fn unwatch(_id: WatchId) {}

    pub(super) fn stats() -> TrapStats {
        TrapStats::default()
    }
}

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests;
