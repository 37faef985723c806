//! Tests of the doorbell trap: real pages, real signals, real threads.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

/// An anonymous read-write mapping, unmapped on drop.
struct Pages {
    addr: *mut c_void,
    len: usize,
}

// SAFETY: plain memory; the tests synchronise through the trap and joins.
unsafe impl Send for Pages {}
unsafe impl Sync for Pages {}

impl Pages {
    fn new(n: usize) -> Pages {
        let len = n * 4096;
        // SAFETY: a fresh anonymous mapping.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(addr, libc::MAP_FAILED);
        Pages { addr, len }
    }

    fn range(&self) -> Range<usize> {
        self.addr as usize..self.addr as usize + self.len
    }

    fn word(&self, i: usize) -> *mut u64 {
        assert!(i * 8 < self.len);
        // SAFETY: in bounds (checked above).
        unsafe { self.addr.cast::<u64>().add(i) }
    }

    fn read(&self, i: usize) -> u64 {
        // SAFETY: in bounds; readable while watched.
        unsafe { self.word(i).read_volatile() }
    }

    fn write(&self, i: usize, v: u64) {
        // SAFETY: in bounds; writable (through the trap while watched).
        unsafe { self.word(i).write_volatile(v) }
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > Duration::from_secs(20) {
            let slots: Vec<_> = super::table::WATCHES
                .iter()
                .filter(|s| s.state.load(Ordering::SeqCst) != 0)
                .map(|s| {
                    (
                        s.state.load(Ordering::SeqCst),
                        format!("{:#x}", s.start.load(Ordering::SeqCst)),
                        s.n_writers(),
                        s.dirty.load(Ordering::SeqCst),
                    )
                })
                .collect();
            panic!(
                "timed out waiting for {what}: slots {slots:?}, {:?}",
                stats()
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn four_threads_writing_at_once_are_all_seen() {
    const THREADS: usize = 4;
    const WRITES: u64 = 10_000;
    let pages = Arc::new(Pages::new(1));
    let seen_sum = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let before = stats();
    let id = {
        let range = pages.range();
        let (pages, seen_sum, calls) = (pages.clone(), seen_sum.clone(), calls.clone());
        let on_write = Arc::new(move || {
            let sum = (0..THREADS).map(|i| pages.read(i)).sum();
            seen_sum.store(sum, Ordering::SeqCst);
            calls.fetch_add(1, Ordering::SeqCst);
        });
        // SAFETY: our own mapping.
        unsafe { watch(range, on_write) }.expect("watch")
    };
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let pages = pages.clone();
            std::thread::spawn(move || {
                for v in 1..=WRITES {
                    pages.write(t, v);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread");
    }
    for t in 0..THREADS {
        assert_eq!(pages.read(t), WRITES, "word {t}");
    }
    // A callback ran after the last write: it saw every final value.
    wait_until("a callback after the last write", || {
        seen_sum.load(Ordering::SeqCst) == THREADS as u64 * WRITES
    });
    let after = stats();
    let n_calls = calls.load(Ordering::SeqCst);
    assert!(
        n_calls >= 1 && n_calls <= THREADS as u64 * WRITES,
        "{n_calls} calls"
    );
    assert!(
        after.trapped_writes > before.trapped_writes,
        "no write was trapped"
    );
    assert!(after.notifications >= before.notifications + n_calls);
    eprintln!(
        "{} writes, {} trapped (all tests), {n_calls} callbacks",
        THREADS as u64 * WRITES,
        after.trapped_writes - before.trapped_writes
    );
    unwatch(id);
}

#[test]
fn every_write_is_followed_by_a_callback_that_sees_it() {
    let pages = Arc::new(Pages::new(2));
    let seen = Arc::new(AtomicU64::new(0));
    let id = {
        let range = pages.range();
        let (pages, seen) = (pages.clone(), seen.clone());
        // Word 0 on the first page, word 512 on the second: both pages are watched.
        let on_write =
            Arc::new(move || seen.store(pages.read(0) + pages.read(512), Ordering::SeqCst));
        // SAFETY: our own mapping.
        unsafe { watch(range, on_write) }.expect("watch")
    };
    for k in 1..=200u64 {
        let (a, b) = if k % 2 == 0 { (0, 512) } else { (512, 0) };
        pages.write(a, pages.read(a) + 1);
        wait_until(&format!("callback for write {k}"), || {
            seen.load(Ordering::SeqCst) == k
        });
        assert_eq!(pages.read(a) + pages.read(b), k);
    }
    unwatch(id);
}

#[test]
fn unwatch_makes_the_range_writable_and_stops_callbacks() {
    let pages = Arc::new(Pages::new(1));
    let calls = Arc::new(AtomicU64::new(0));
    let id = {
        let calls = calls.clone();
        // SAFETY: our own mapping.
        unsafe {
            watch(
                pages.range(),
                Arc::new(move || {
                    calls.fetch_add(1, Ordering::SeqCst);
                }),
            )
        }
        .expect("watch")
    };
    pages.write(0, 7);
    wait_until("the first callback", || calls.load(Ordering::SeqCst) >= 1);
    unwatch(id);
    let after_unwatch = calls.load(Ordering::SeqCst);
    pages.write(0, 8);
    pages.write(1, 9);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        after_unwatch,
        "callback after unwatch"
    );
    assert_eq!((pages.read(0), pages.read(1)), (8, 9));
    // A stale id is ignored, and the range can be watched again.
    unwatch(id);
    let calls2 = Arc::new(AtomicU64::new(0));
    let id2 = {
        let calls2 = calls2.clone();
        // SAFETY: our own mapping.
        unsafe {
            watch(
                pages.range(),
                Arc::new(move || {
                    calls2.fetch_add(1, Ordering::SeqCst);
                }),
            )
        }
        .expect("rewatch")
    };
    assert_ne!(id, id2);
    pages.write(0, 10);
    wait_until("a callback of the new watch", || {
        calls2.load(Ordering::SeqCst) >= 1
    });
    assert_eq!(calls.load(Ordering::SeqCst), after_unwatch);
    unwatch(id2);
}

#[test]
fn bad_ranges_are_refused() {
    let pages = Pages::new(2);
    let base = pages.addr as usize;
    let nop: Arc<dyn Fn() + Send + Sync> = Arc::new(|| {});
    // SAFETY (all calls): our own mapping.
    let err = unsafe { watch(base + 8..base + 4096, nop.clone()) }.unwrap_err();
    assert_eq!(
        err,
        TrapError::BadRange {
            start: base + 8,
            end: base + 4096
        }
    );
    let err = unsafe { watch(base..base, nop.clone()) }.unwrap_err();
    assert!(matches!(err, TrapError::BadRange { .. }));
    let id = unsafe { watch(base..base + 8192, nop.clone()) }.expect("watch");
    let err = unsafe { watch(base + 4096..base + 8192, nop.clone()) }.unwrap_err();
    assert_eq!(
        err,
        TrapError::Overlap {
            start: base + 4096,
            end: base + 8192
        }
    );
    unwatch(id);
    // The whole range is writable again.
    pages.write(0, 1);
    pages.write(600, 2);
}

/// Runs `child` in a forked process and returns the signal that killed it (`None`: it
/// exited with status 0).
fn in_child(child: fn()) -> Option<i32> {
    // SAFETY: the child runs only async-signal-safe code (mmap, stores, raise, _exit).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        child();
        // SAFETY: leaving the child without running the parent's atexit handlers.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: our child.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    if libc::WIFSIGNALED(status) {
        Some(libc::WTERMSIG(status))
    } else {
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status:#x}"
        );
        None
    }
}

#[test]
fn signals_that_are_not_ours_keep_their_effect() {
    let watched = Pages::new(1);
    // SAFETY: our own mapping.
    let id = unsafe { watch(watched.range(), Arc::new(|| {})) }.expect("watch");
    // A store to a read-only page nobody watches still kills with SIGSEGV.
    assert_eq!(
        in_child(|| unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            p.cast::<u64>().write_volatile(1);
        }),
        Some(libc::SIGSEGV)
    );
    // So does a store to unmapped memory next to nothing watched.
    assert_eq!(
        in_child(|| unsafe { std::ptr::without_provenance_mut::<u64>(16).write_volatile(1) }),
        Some(libc::SIGSEGV)
    );
    // A SIGTRAP that is not a single step keeps its default action.
    assert_eq!(
        in_child(|| unsafe {
            libc::raise(libc::SIGTRAP);
        }),
        Some(libc::SIGTRAP)
    );
    // Stores to the watched page still work in a forked child.
    let addr = watched.addr as usize;
    CHILD_ADDR.store(addr as u64, Ordering::SeqCst);
    assert_eq!(
        in_child(|| unsafe {
            let p = CHILD_ADDR.load(Ordering::SeqCst) as *mut u64;
            p.write_volatile(5);
            if p.read_volatile() != 5 {
                libc::_exit(3);
            }
        }),
        None
    );
    unwatch(id);
}

static CHILD_ADDR: AtomicU64 = AtomicU64::new(0);
