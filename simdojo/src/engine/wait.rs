//! Where a worker waits when no partition is ready and a pass found nothing to do: it
//! spins (the next publication of a running partition usually comes within
//! microseconds), then sleeps until a publication, a release or a pass, or a short
//! timeout, so an idle run does not burn cores.
//!
//! Activity is counted per worker (each bumps its own cache line when it publishes,
//! releases or passes), so publishing costs no shared write.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam::utils::CachePadded;

use crate::engine::observe::{self, Observer};

/// How long a waiting worker spins before it sleeps. A running partition publishes
/// every few microseconds, and each publication ends the wait: a worker sleeps only
/// when nothing was published for this long (the other workers wait too, or the host
/// preempted them: then sleeping, not spinning, gives the core back, and the next
/// publication wakes the sleeper).
const SPIN: Duration = Duration::from_micros(50);
/// The longest sleep before a waiting worker looks again by itself.
const NAP: Duration = Duration::from_micros(500);

/// The waiting place of a segment's workers.
#[derive(Debug)]
pub(crate) struct Idle {
    activity: Box<[CachePadded<AtomicU64>]>,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Idle {
    pub fn new(workers: usize) -> Idle {
        Idle {
            activity: (0..workers.max(1)).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Counts activity of the calling worker (a publication, a release, a pass).
    #[inline]
    pub fn bump(&self) {
        let w = observe::worker() as usize % self.activity.len();
        let a = &self.activity[w];
        a.store(a.load(Ordering::Relaxed).wrapping_add(1), Ordering::Release);
    }

    /// The activity count of worker `w`.
    pub fn of(&self, w: usize) -> u64 {
        self.activity[w].load(Ordering::Relaxed)
    }

    fn total(&self) -> u64 {
        self.activity.iter().fold(0u64, |s, a| s.wrapping_add(a.load(Ordering::Acquire)))
    }

    /// Wakes sleeping workers (after a bump that may let them run).
    pub fn wake(&self) {
        if self.activity.len() == 1 {
            return;
        }
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            self.notify();
        }
    }

    /// Wakes sleeping workers if there are any to be seen without a fence (after a
    /// publication: cheap enough for every one; a sleeper it misses wakes by itself).
    #[inline]
    pub fn nudge(&self) {
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            self.notify();
        }
    }

    #[cold]
    fn notify(&self) {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }

    /// Waits until some worker shows activity, `stopped` is set, or a nap passes.
    pub fn wait(&self, stopped: &AtomicBool, observer: Option<&Observer>) {
        let started = Instant::now();
        self.wait_inner(stopped);
        if let Some(o) = observer {
            o.wait(started, Instant::now());
        }
    }

    fn wait_inner(&self, stopped: &AtomicBool) {
        let seen = self.total();
        let changed = || self.total() != seen || stopped.load(Ordering::Acquire);
        let started = Instant::now();
        let mut spins = 0u32;
        loop {
            if changed() {
                return;
            }
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) && started.elapsed() >= SPIN {
                break;
            }
        }
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if !changed() {
            let _ = self.cv.wait_timeout(guard, NAP);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}
