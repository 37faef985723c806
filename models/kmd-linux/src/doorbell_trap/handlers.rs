//! The SIGSEGV and SIGTRAP handlers: a write to a watched (read-only) range faults, the
//! SIGSEGV handler makes the range writable and sets the trap flag, the store executes,
//! the single-step SIGTRAP re-protects the range and wakes the notifier.
//!
//! **Architecture Invariant:** the handlers allocate nothing, take no lock and call only
//! async-signal-safe system calls (`mprotect`, `gettid`, `write`, `sigaction`, `raise`,
//! `sched_yield`). They save and restore `errno`.
//!
//! Signals that are not ours go to the handler that was installed before ours; when
//! that was the default action, the default is restored and the signal happens again.

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::io::Errno;
use rustix::mm::MprotectFlags;

use super::notifier;
use super::table::{self, WatchSlot, ACTIVE, WATCHES};

/// x86 EFLAGS trap flag: single-step one instruction.
const EFLAGS_TF: i64 = 0x100;

/// `si_code` of a write to a page without write permission.
const SEGV_ACCERR: c_int = 2;

/// Synchronous signals, never blocked while our handlers run (a fault with its signal
/// blocked kills the process).
const SYNCHRONOUS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
];

/// Writes that faulted in a watched range (each is one fault and one trap).
pub(super) static TRAPPED_WRITES: AtomicU64 = AtomicU64::new(0);

/// The action a signal had before ours, for chaining.
struct PreviousAction {
    ready: AtomicBool,
    action: UnsafeCell<MaybeUninit<libc::sigaction>>,
}

// SAFETY: `action` is written once, before `ready` is released; afterwards only read.
unsafe impl Sync for PreviousAction {}

impl PreviousAction {
    const fn new() -> PreviousAction {
        PreviousAction {
            ready: AtomicBool::new(false),
            action: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    fn get(&self) -> Option<libc::sigaction> {
        if self.ready.load(Ordering::Acquire) {
            // SAFETY: written before `ready` was set, never written again.
            Some(unsafe { (*self.action.get()).assume_init() })
        } else {
            None
        }
    }
}

static PREVIOUS_SEGV: PreviousAction = PreviousAction::new();
static PREVIOUS_TRAP: PreviousAction = PreviousAction::new();

/// Installs both handlers, remembering the previous ones. Called once.
pub(super) fn install() -> Result<(), Errno> {
    let handlers: [(c_int, usize, &PreviousAction); 2] = [
        (libc::SIGSEGV, on_segv as *const () as usize, &PREVIOUS_SEGV),
        (libc::SIGTRAP, on_trap as *const () as usize, &PREVIOUS_TRAP),
    ];
    for (sig, handler, previous) in handlers {
        // SAFETY: plain C structs filled as sigaction(2) documents.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigfillset(&mut new.sa_mask);
            for s in SYNCHRONOUS {
                libc::sigdelset(&mut new.sa_mask, s);
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, &new, &mut old) != 0 {
                return Err(Errno::from_raw_os_error(*libc::__errno_location()));
            }
            (*previous.action.get()).write(old);
            previous.ready.store(true, Ordering::Release);
        }
    }
    Ok(())
}

fn gettid() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

fn protect(slot: &WatchSlot, flags: MprotectFlags) {
    let start = slot.start.load(Ordering::Acquire);
    let end = slot.end.load(Ordering::Acquire);
    // SAFETY: the range was mapped when watched; a failure (the application unmapped it)
    // leaves the store to fault again as an unmapped access, which is not ours.
    let _ = unsafe { rustix::mm::mprotect(start as *mut c_void, end - start, flags) };
}

/// Counts the calling thread out of `slot`'s writers; the last one re-protects the range
/// before leaving, so no writers means the range is read-only again.
fn release_writer(slot: &WatchSlot) {
    loop {
        let v = slot.writers.load(Ordering::SeqCst);
        if v as u32 <= 1 {
            protect(slot, MprotectFlags::READ);
        }
        // Fails when anyone entered since the load (the entry count changed), even if
        // they left again: their make-writable may have come after our re-protect.
        if slot
            .writers
            .compare_exchange(v, v.wrapping_sub(1), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// The fault part: true when the fault was ours (the handler then returns and the store
/// runs again, writable or faulting once more).
///
/// # Safety
/// `info` and `ctx` are the kernel's arguments to an `SA_SIGINFO` handler.
unsafe fn handle_fault(info: *mut libc::siginfo_t, ctx: *mut c_void) -> bool {
    if info.is_null() || ctx.is_null() || (*info).si_code != SEGV_ACCERR {
        return false;
    }
    let addr = (*info).si_addr() as usize;
    let Some(slot_idx) = table::slot_of(addr) else {
        return false;
    };
    let slot = &WATCHES[slot_idx];
    let tid = gettid();
    let pending = loop {
        if let Some(p) = table::pending_of(tid).or_else(|| table::claim_pending(tid)) {
            break p;
        }
        // Every record is taken by threads between a fault and its trap: wait for one.
        libc::sched_yield();
    };
    if !pending.holds(slot_idx) {
        if pending.is_full() {
            // One store touching more watched ranges than any real store can.
            return false;
        }
        slot.writers.fetch_add(table::WRITER_IN, Ordering::SeqCst);
        if slot.state.load(Ordering::SeqCst) != ACTIVE {
            // Being unwatched: fault again until `unwatch` makes the range writable.
            slot.writers.fetch_sub(1, Ordering::SeqCst);
            if pending.n_slots.load(Ordering::Relaxed) == 0 {
                table::release_pending(pending);
            }
            libc::sched_yield();
            return true;
        }
        pending.push(slot_idx);
    }
    protect(slot, MprotectFlags::READ | MprotectFlags::WRITE);
    let uc = ctx.cast::<libc::ucontext_t>();
    (*uc).uc_mcontext.gregs[libc::REG_EFL as usize] |= EFLAGS_TF;
    true
}

/// The single-step part: true when the trap was ours.
///
/// # Safety
/// As [`handle_fault`].
unsafe fn handle_step(info: *mut libc::siginfo_t, ctx: *mut c_void) -> bool {
    if info.is_null() || ctx.is_null() || (*info).si_code != libc::TRAP_TRACE {
        return false;
    }
    let Some(pending) = table::pending_of(gettid()) else {
        return false;
    };
    for slot_idx in pending.slot_indices() {
        let slot = &WATCHES[slot_idx];
        release_writer(slot);
        if !slot.dirty.swap(true, Ordering::SeqCst) {
            notifier::wake();
        }
    }
    TRAPPED_WRITES.fetch_add(1, Ordering::Relaxed);
    table::release_pending(pending);
    let uc = ctx.cast::<libc::ucontext_t>();
    (*uc).uc_mcontext.gregs[libc::REG_EFL as usize] &= !EFLAGS_TF;
    true
}

/// Hands a signal that is not ours to the previous action.
///
/// # Safety
/// As [`handle_fault`].
unsafe fn chain(
    previous: &PreviousAction,
    sig: c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut c_void,
) {
    let old = previous.get();
    let handler = old.map_or(libc::SIG_DFL, |a| a.sa_sigaction);
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        let code = if info.is_null() { 0 } else { (*info).si_code };
        // A kernel-raised fault repeats by itself when the handler returns; anything
        // else (a completed trap, a kill) is raised again, now with the default action.
        let repeats = sig == libc::SIGSEGV && code > 0;
        let ignored = handler == libc::SIG_IGN && code <= 0;
        if !repeats && !ignored {
            libc::raise(sig);
        }
    } else if old.is_some_and(|a| a.sa_flags & libc::SA_SIGINFO != 0) {
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
            std::mem::transmute(handler);
        f(sig, info, ctx);
    } else {
        let f: extern "C" fn(c_int) = std::mem::transmute(handler);
        f(sig);
    }
}

extern "C" fn on_segv(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: called by the kernel with SA_SIGINFO arguments.
    unsafe {
        let errno = *libc::__errno_location();
        if !handle_fault(info, ctx) {
            chain(&PREVIOUS_SEGV, sig, info, ctx);
        }
        *libc::__errno_location() = errno;
    }
}

extern "C" fn on_trap(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: called by the kernel with SA_SIGINFO arguments.
    unsafe {
        let errno = *libc::__errno_location();
        if !handle_step(info, ctx) {
            chain(&PREVIOUS_TRAP, sig, info, ctx);
        }
        *libc::__errno_location() = errno;
    }
}
