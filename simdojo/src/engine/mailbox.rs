//! Cross-partition message batches: every partition's inbox, and the return of emptied
//! batches to their senders.
//!
//! A partition collects the events it creates for another partition in one [`Batch`]
//! per destination (an outbox of the [`Emitter`](crate::engine::context::Emitter)).
//! When it publishes its progress (every few hundred events, and when an activation
//! ends) it posts each batch to its destination's inbox and lowers the destination's
//! `inbox_min` on the board. The destination takes all its batches at once, moves the
//! events into its queue and gives every emptied batch back to its sender, which
//! reuses it (vector capacity included) for a later outbox: once the pools hold what is
//! in flight, no batch allocates.
//!
//! Both lists are lock-free stacks of boxed batches: posting is one compare-and-swap,
//! taking everything one swap. Nothing is ever popped singly, so a node cannot be
//! reused while a poster still reads it (no ABA).

use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::engine::queue::Pending;
use crate::time::Tick;

/// The sender of batches that come from outside the simulation (external input): they
/// are dropped rather than given back.
pub(crate) const OUTSIDE: u32 = u32::MAX;

/// Events one partition sent another.
#[derive(Debug)]
pub(crate) struct Batch {
    /// The next batch of the list it is on.
    next: *mut Batch,
    /// The sending partition, or [`OUTSIDE`].
    pub sender: u32,
    /// The earliest time among `events`.
    pub min_time: Tick,
    pub events: Vec<Pending>,
}

// SAFETY: `next` is only followed by the thread that took the whole list holding the
// batch (see `Stack`); the rest of a batch is owned data of `Send` types.
unsafe impl Send for Batch {}

impl Batch {
    /// An empty batch from `sender`.
    pub fn new(sender: u32) -> Box<Batch> {
        Box::new(Batch { next: ptr::null_mut(), sender, min_time: Tick::MAX, events: Vec::new() })
    }
}

/// A lock-free stack of batches that is only ever emptied whole.
#[derive(Debug, Default)]
struct Stack {
    head: AtomicPtr<Batch>,
}

impl Stack {
    /// Pushes `batch`; `solo` when the segment has one thread (no other can touch the
    /// stack, so no read-modify-write is needed).
    fn push(&self, batch: Box<Batch>, solo: bool) {
        let node = Box::into_raw(batch);
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `node` came from `Box::into_raw` above and is not yet shared.
            unsafe { (*node).next = head };
            if solo {
                self.head.store(node, Ordering::Relaxed);
                return;
            }
            match self.head.compare_exchange_weak(head, node, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed).is_null()
    }

    /// Everything pushed so far.
    fn take(&self, solo: bool) -> Taken {
        if solo {
            let head = self.head.load(Ordering::Relaxed);
            self.head.store(ptr::null_mut(), Ordering::Relaxed);
            return Taken(head);
        }
        Taken(self.head.swap(ptr::null_mut(), Ordering::Acquire))
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        drop(self.take(true));
    }
}

/// The batches taken from a stack; dropping it frees those not iterated.
pub(crate) struct Taken(*mut Batch);

impl Iterator for Taken {
    type Item = Box<Batch>;

    fn next(&mut self) -> Option<Box<Batch>> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: every node of a taken list came from `Box::into_raw` in `Stack::push`,
        // and the swap in `Stack::take` made this iterator its only owner.
        let mut batch = unsafe { Box::from_raw(self.0) };
        self.0 = std::mem::replace(&mut batch.next, ptr::null_mut());
        Some(batch)
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        for _ in self.by_ref() {}
    }
}

/// One partition's inbox and the batches its receivers gave back.
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    inbox: Stack,
    returned: Stack,
}

impl Mailbox {
    /// Posts `batch` and lowers `inbox_min` (the destination's entry on the board) to its
    /// earliest time. The minimum is lowered after the push: whoever sees it low finds
    /// the batch (a reader that sees it before may miss the batch, see `engine::pass`).
    /// `solo`: the segment has one thread.
    pub fn post(&self, batch: Box<Batch>, inbox_min: &AtomicU64, solo: bool) {
        let min = batch.min_time.0;
        self.inbox.push(batch, solo);
        if solo {
            if min < inbox_min.load(Ordering::Relaxed) {
                inbox_min.store(min, Ordering::Relaxed);
            }
        } else {
            inbox_min.fetch_min(min, Ordering::AcqRel);
        }
    }

    /// Takes every batch posted so far, resetting `inbox_min` first (a batch posted
    /// meanwhile lowers it again and stays for the next take).
    pub fn take(&self, inbox_min: &AtomicU64, solo: bool) -> Taken {
        inbox_min.store(u64::MAX, Ordering::Relaxed);
        self.inbox.take(solo)
    }

    /// Gives an emptied batch back to this (its sender's) mailbox.
    pub fn give_back(&self, batch: Box<Batch>, solo: bool) {
        debug_assert!(batch.events.is_empty());
        self.returned.push(batch, solo);
    }

    /// Moves the batches given back so far into `spare`.
    #[allow(clippy::vec_box)] // batches are nodes of intrusive lists: they move boxed
    pub fn reclaim(&self, spare: &mut Vec<Box<Batch>>, solo: bool) {
        if !self.returned.is_empty() {
            spare.extend(self.returned.take(solo));
        }
    }

    /// Every batch still posted, for the end of a segment (no worker runs).
    pub fn drain_all(&mut self) -> Taken {
        self.inbox.take(true)
    }

    /// Every batch given back and not yet reclaimed, for the end of a segment.
    pub fn returned_all(&mut self) -> Taken {
        self.returned.take(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::{Event, TimerId};
    use crate::engine::order::EventKey;
    use crate::ids::ComponentId;

    fn batch(sender: u32, times: &[u64]) -> Box<Batch> {
        let mut b = Batch::new(sender);
        for &t in times {
            let key = EventKey::new(Tick(t), sender, t);
            b.events.push(Pending { key, target: ComponentId(0), body: Event::Timer { id: TimerId(t), token: t } });
            b.min_time = b.min_time.min(Tick(t));
        }
        b
    }

    #[test]
    fn posts_from_many_threads_are_all_taken_once() {
        let mailbox = Mailbox::default();
        let min = AtomicU64::new(u64::MAX);
        std::thread::scope(|s| {
            for sender in 0..4u32 {
                let (mailbox, min) = (&mailbox, &min);
                s.spawn(move || {
                    for i in 0..500u64 {
                        mailbox.post(batch(sender, &[1000 + i, 2000 + i]), min, false);
                    }
                });
            }
        });
        assert_eq!(min.load(Ordering::Relaxed), 1000);
        let mut seen = vec![0u32; 4];
        let mut events = 0;
        for b in mailbox.take(&min, false) {
            seen[b.sender as usize] += 1;
            events += b.events.len();
        }
        assert_eq!(seen, vec![500; 4]);
        assert_eq!(events, 4000);
        assert_eq!(min.load(Ordering::Relaxed), u64::MAX);
        assert_eq!(mailbox.take(&min, false).count(), 0);
    }

    #[test]
    fn given_back_batches_are_reclaimed_with_their_capacity() {
        let mailbox = Mailbox::default();
        let mut b = batch(1, &[5, 6, 7]);
        b.events.clear();
        let capacity = b.events.capacity();
        mailbox.give_back(b, false);
        let mut spare = Vec::new();
        mailbox.reclaim(&mut spare, false);
        assert_eq!(spare.len(), 1);
        assert_eq!(spare[0].events.capacity(), capacity);
        mailbox.reclaim(&mut spare, false);
        assert_eq!(spare.len(), 1);
    }
}
