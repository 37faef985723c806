//! Input from outside the simulation: other OS threads (an application writing a
//! doorbell) send payloads to a component through an [`ExternalSender`].
//!
//! Inputs enter at the next epoch boundary, stamped with the time the simulation has
//! reached, and are accounted for in the synchronization like any other event. While
//! any sender is alive, a simulation that runs out of events sleeps until input
//! arrives instead of ending; nobody polls.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crossbeam::queue::SegQueue;

use crate::ids::ComponentId;

/// The shared inbox of external inputs.
#[derive(Debug, Default)]
pub(crate) struct ExternalInbox {
    queue: SegQueue<(ComponentId, Box<dyn Any + Send>)>,
    senders: AtomicUsize,
    stop: AtomicBool,
    lock: Mutex<()>,
    cv: Condvar,
}

impl ExternalInbox {
    pub fn pop(&self) -> Option<(ComponentId, Box<dyn Any + Send>)> {
        self.queue.pop()
    }

    /// Whether input is queued (sent but not yet routed into the simulation).
    pub fn has_pending(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn has_senders(&self) -> bool {
        self.senders.load(Ordering::SeqCst) > 0
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    pub fn clear_stop(&self) {
        self.stop.store(false, Ordering::SeqCst);
    }

    /// Sleeps until input is queued, every sender is gone, or a stop is requested.
    pub fn wait(&self) {
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.queue.is_empty() && self.has_senders() && !self.stop_requested() {
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn notify(&self) {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }
}

/// Sends input into a running simulation from any thread. Cloning makes another
/// sender; the simulation waits for input while any sender is alive.
#[derive(Debug)]
pub struct ExternalSender {
    inbox: Arc<ExternalInbox>,
    target: ComponentId,
}

impl ExternalSender {
    pub(crate) fn new(inbox: Arc<ExternalInbox>, target: ComponentId) -> ExternalSender {
        inbox.senders.fetch_add(1, Ordering::SeqCst);
        ExternalSender { inbox, target }
    }

    /// Queues `payload` for the target component; it arrives as `Event::External`.
    pub fn send<T: Any + Send>(&self, payload: T) {
        self.inbox.queue.push((self.target, Box::new(payload)));
        self.inbox.notify();
    }

    /// The component this sender delivers to.
    pub fn target(&self) -> ComponentId {
        self.target
    }
}

impl Clone for ExternalSender {
    fn clone(&self) -> Self {
        ExternalSender::new(self.inbox.clone(), self.target)
    }
}

impl Drop for ExternalSender {
    fn drop(&mut self) {
        self.inbox.senders.fetch_sub(1, Ordering::SeqCst);
        self.inbox.notify();
    }
}

/// Stops a running simulation from another thread at its next epoch boundary.
#[derive(Clone, Debug)]
pub struct StopHandle {
    pub(crate) inbox: Arc<ExternalInbox>,
}

impl StopHandle {
    /// Requests the stop; the run returns `ExitReason::Interrupted`.
    pub fn stop(&self) {
        self.inbox.stop.store(true, Ordering::SeqCst);
        self.inbox.notify();
    }
}
