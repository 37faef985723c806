//! KFD events of one process: signal events (raised by completion signals whose event
//! mailbox the packet processor writes, or by SET_EVENT), memory-exception events
//! (raised by GPU faults) and the rest, and WAIT_EVENTS, which blocks on a condition
//! variable (no polling) until the wait is satisfied or times out.
//!
//! Waking follows the kernel driver (`set_event` in `kfd_events.c`): raising an event
//! activates every waiter waiting on it at that moment, and an auto-reset event stays
//! signaled only when nobody was waiting. A waiter that starts on a signaled event is
//! activated at once and, for an auto-reset event, consumes the signal. So two threads
//! waiting on one auto-reset event (an application thread and ROCR's async-handler
//! thread) both wake; the first to run cannot reset it under the other.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::backend::Errno;
use crate::kfd::abi::{
    event_type, wait_result, EventData, MemoryExceptionData, SIGNAL_EVENT_LIMIT,
};

/// A KFD event id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u32);

#[derive(Clone, Debug)]
struct Event {
    ty: u32,
    auto_reset: bool,
    signaled: bool,
    /// What a memory exception reports to the waiter.
    memory: Option<MemoryExceptionData>,
}

/// One WAIT_EVENTS call in progress: per requested event, whether it was raised for
/// this waiter.
struct Waiter {
    ids: Vec<u32>,
    activated: Vec<bool>,
}

#[derive(Default)]
struct Table {
    events: BTreeMap<u32, Event>,
    /// Next id for events other than signal events (ids >= the signal limit).
    next_other: u32,
    /// The waits in progress, by a token unique for the table's life.
    waiters: BTreeMap<u64, Waiter>,
    next_waiter: u64,
    /// The process's context ended: waits fail at once.
    closed: bool,
}

impl Table {
    /// Raises event `id` (known to exist): activates its current waiters; it stays
    /// signaled unless it resets automatically and somebody was waiting.
    fn raise(&mut self, id: u32) {
        let mut woke = false;
        for w in self.waiters.values_mut() {
            for (wid, a) in w.ids.iter().zip(w.activated.iter_mut()) {
                if *wid == id {
                    *a = true;
                    woke = true;
                }
            }
        }
        if let Some(e) = self.events.get_mut(&id) {
            e.signaled = !e.auto_reset || !woke;
        }
    }
}

/// See the [module docs](self).
#[derive(Default)]
pub struct Events {
    table: Mutex<Table>,
    changed: Condvar,
}

/// What WAIT_EVENTS returns for each event, in request order.
pub type WaitOutcome = (u32, Vec<EventData>);

impl Events {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates an event; signal events get the lowest free slot (id = slot, as the
    /// driver's event page has one slot per signal event).
    pub fn create(&self, ty: u32, auto_reset: bool) -> Result<EventId, Errno> {
        if ty > event_type::MEMORY {
            return Err(Errno::INVAL);
        }
        let mut t = self.lock();
        let id = if ty == event_type::SIGNAL {
            (1..SIGNAL_EVENT_LIMIT)
                .find(|i| !t.events.contains_key(i))
                .ok_or(Errno::NOSPC)?
        } else {
            let id = SIGNAL_EVENT_LIMIT + t.next_other;
            t.next_other = t.next_other.checked_add(1).ok_or(Errno::NOSPC)?;
            id
        };
        t.events.insert(
            id,
            Event {
                ty,
                auto_reset,
                signaled: false,
                memory: None,
            },
        );
        Ok(EventId(id))
    }

    /// Destroys an event (waiters on it see it gone).
    pub fn destroy(&self, id: EventId) -> Result<(), Errno> {
        self.lock()
            .events
            .remove(&id.0)
            .map(|_| ())
            .ok_or(Errno::INVAL)?;
        self.changed.notify_all();
        Ok(())
    }

    /// Signals an event (SET_EVENT, or an interrupt with this id). Unknown ids are
    /// ignored, as the kernel ignores interrupts for events already destroyed.
    pub fn signal(&self, id: EventId) -> bool {
        let found = {
            let mut t = self.lock();
            let found = t.events.contains_key(&id.0);
            if found {
                t.raise(id.0);
            }
            found
        };
        if found {
            self.changed.notify_all();
        }
        found
    }

    /// Resets an event.
    pub fn reset(&self, id: EventId) -> Result<(), Errno> {
        let mut t = self.lock();
        let e = t.events.get_mut(&id.0).ok_or(Errno::INVAL)?;
        e.signaled = false;
        Ok(())
    }

    /// Ends every wait (they fail with `ENODEV`), now and later: the process's GPU
    /// context is gone.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// A GPU memory fault: signals every memory-exception event with its data.
    pub fn memory_exception(&self, data: MemoryExceptionData) -> usize {
        let n = {
            let mut t = self.lock();
            let ids: Vec<u32> = t
                .events
                .iter()
                .filter(|(_, e)| e.ty == event_type::MEMORY)
                .map(|(&id, _)| id)
                .collect();
            for &id in &ids {
                if let Some(e) = t.events.get_mut(&id) {
                    e.memory = Some(data);
                }
                t.raise(id);
            }
            ids.len()
        };
        self.changed.notify_all();
        n
    }

    /// Waits for any (or all) of `ids`; `timeout_ms` of `u32::MAX` waits forever.
    /// Returns the wait result and the event data to copy back.
    pub fn wait(&self, ids: &[u32], all: bool, timeout_ms: u32) -> Result<WaitOutcome, Errno> {
        let deadline = (timeout_ms != u32::MAX)
            .then(|| Instant::now() + Duration::from_millis(u64::from(timeout_ms)));
        let mut t = self.lock();
        if t.closed {
            return Err(Errno::NODEV);
        }
        // Starting on a signaled event activates the waiter and consumes an
        // auto-reset signal.
        if ids.iter().any(|id| !t.events.contains_key(id)) {
            return Err(Errno::INVAL);
        }
        let mut activated = Vec::with_capacity(ids.len());
        for id in ids {
            let e = t.events.get_mut(id).ok_or(Errno::INVAL)?;
            activated.push(e.signaled);
            if e.signaled && e.auto_reset {
                e.signaled = false;
            }
        }
        let token = t.next_waiter;
        t.next_waiter += 1;
        t.waiters.insert(
            token,
            Waiter {
                ids: ids.to_vec(),
                activated,
            },
        );
        let result = loop {
            if t.closed {
                break Err(Errno::NODEV);
            }
            if ids.iter().any(|id| !t.events.contains_key(id)) {
                break Err(Errno::INVAL);
            }
            let w = &t.waiters[&token];
            let done = if all {
                w.activated.iter().all(|&a| a)
            } else {
                w.activated.iter().any(|&a| a)
            };
            if done {
                let out = ids
                    .iter()
                    .zip(&w.activated)
                    .map(|(id, &a)| {
                        let mut d = EventData {
                            event_id: *id,
                            ..EventData::default()
                        };
                        if let Some(m) = t.events.get(id).and_then(|e| e.memory).filter(|_| a) {
                            d.memory_exception_data = m;
                        }
                        d
                    })
                    .collect();
                break Ok((wait_result::COMPLETE, out));
            }
            let now = Instant::now();
            match deadline {
                Some(d) if now >= d => {
                    let out = ids
                        .iter()
                        .map(|&id| EventData {
                            event_id: id,
                            ..EventData::default()
                        })
                        .collect();
                    break Ok((wait_result::TIMEOUT, out));
                }
                Some(d) => {
                    t = self
                        .changed
                        .wait_timeout(t, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => t = self.changed.wait(t).unwrap_or_else(|e| e.into_inner()),
            }
        };
        t.waiters.remove(&token);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn auto_reset_events_wake_every_waiter_and_reset() {
        let ev = Arc::new(Events::default());
        let id = ev.create(event_type::SIGNAL, false).unwrap();
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let ev = ev.clone();
                std::thread::spawn(move || ev.wait(&[id.0], false, 10_000).unwrap().0)
            })
            .collect();
        std::thread::sleep(Duration::from_millis(20));
        assert!(ev.signal(id));
        for w in waiters {
            assert_eq!(w.join().unwrap(), wait_result::COMPLETE);
        }
        let auto = ev.create(event_type::SIGNAL, true).unwrap();
        ev.signal(auto);
        assert_eq!(
            ev.wait(&[auto.0], false, 0).unwrap().0,
            wait_result::COMPLETE
        );
        assert_eq!(
            ev.wait(&[auto.0], false, 1).unwrap().0,
            wait_result::TIMEOUT
        );
        assert_eq!(
            ev.wait(&[id.0, auto.0], true, 1).unwrap().0,
            wait_result::TIMEOUT
        );
        assert_eq!(ev.wait(&[999], false, 0).err(), Some(Errno::INVAL));
    }

    /// Two threads waiting on one auto-reset event (ROCR's main and async-handler
    /// threads) both wake when it is raised; the first to run must not reset it under
    /// the other. The signal is consumed by the waiters: a later wait times out.
    #[test]
    fn an_auto_reset_event_wakes_every_thread_waiting_when_it_is_raised() {
        let ev = Arc::new(Events::default());
        let id = ev.create(event_type::SIGNAL, true).unwrap();
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let ev = ev.clone();
                std::thread::spawn(move || ev.wait(&[id.0], false, 10_000).unwrap().0)
            })
            .collect();
        while ev.lock().waiters.len() < 2 {
            std::thread::yield_now();
        }
        assert!(ev.signal(id));
        for w in waiters {
            assert_eq!(w.join().unwrap(), wait_result::COMPLETE);
        }
        assert_eq!(ev.wait(&[id.0], false, 0).unwrap().0, wait_result::TIMEOUT);
        // Raised with nobody waiting, it stays signaled for exactly one waiter.
        ev.signal(id);
        assert_eq!(ev.wait(&[id.0], false, 0).unwrap().0, wait_result::COMPLETE);
        assert_eq!(ev.wait(&[id.0], false, 0).unwrap().0, wait_result::TIMEOUT);
        // A wait naming a missing event consumes nothing.
        ev.signal(id);
        assert_eq!(ev.wait(&[id.0, 999], false, 0).err(), Some(Errno::INVAL));
        assert_eq!(ev.wait(&[id.0], false, 0).unwrap().0, wait_result::COMPLETE);
    }

    #[test]
    fn memory_exceptions_carry_the_address() {
        let ev = Events::default();
        let id = ev.create(event_type::MEMORY, true).unwrap();
        assert!(id.0 >= SIGNAL_EVENT_LIMIT);
        let data = MemoryExceptionData {
            va: 0x7000_0000_0000,
            gpu_id: 5,
            ..Default::default()
        };
        assert_eq!(ev.memory_exception(data), 1);
        let (r, out) = ev.wait(&[id.0], false, 0).unwrap();
        assert_eq!(
            (
                r,
                out[0].memory_exception_data.va,
                out[0].memory_exception_data.gpu_id
            ),
            (wait_result::COMPLETE, 0x7000_0000_0000, 5)
        );
    }
}
