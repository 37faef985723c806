//! A reusable spin-then-park barrier for the epoch loop.
//!
//! Workers spin briefly (an epoch on a loaded core usually ends within microseconds),
//! then yield, then sleep on a condition variable, so an idle or oversubscribed run
//! does not burn cores.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Spin iterations before yielding.
const SPINS: u32 = 1 << 10;
/// Yields before parking.
const YIELDS: u32 = 64;

/// A barrier for `n` threads that can be used again and again.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl SpinBarrier {
    /// A barrier for `n` threads (at least one).
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Waits until all `n` threads have called `wait`. Returns `true` in exactly one
    /// of them (the last to arrive).
    pub fn wait(&self) -> bool {
        let gen = self.generation.load(Ordering::SeqCst);
        if self.arrived.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            self.arrived.store(0, Ordering::SeqCst);
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.cv.notify_all();
            }
            return true;
        }
        for _ in 0..SPINS {
            if self.generation.load(Ordering::Acquire) != gen {
                return false;
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS {
            if self.generation.load(Ordering::Acquire) != gen {
                return false;
            }
            std::thread::yield_now();
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == gen {
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn no_thread_passes_before_all_arrive() {
        let n = 4;
        let rounds = 200;
        let barrier = SpinBarrier::new(n);
        let counter = AtomicU64::new(0);
        let leaders = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..n {
                s.spawn(|| {
                    for r in 0..rounds {
                        counter.fetch_add(1, Ordering::SeqCst);
                        if barrier.wait() {
                            leaders.fetch_add(1, Ordering::SeqCst);
                        }
                        // After the barrier every thread of this round has counted.
                        assert!(counter.load(Ordering::SeqCst) >= (r + 1) * n as u64);
                        barrier.wait();
                    }
                });
            }
        });
        assert_eq!(leaders.load(Ordering::SeqCst), rounds);
    }
}
