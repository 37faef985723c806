//! KFD events of one process: signal events (raised by completion signals whose event
//! mailbox the packet processor writes, or by SET_EVENT), memory-exception events
//! (raised by GPU faults) and the rest, and WAIT_EVENTS, which blocks on a condition
//! variable (no polling) until the wait is satisfied or times out. Every waiter wakes
//! on every change, as with the kernel's wake-up of all waiters.

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

#[derive(Default)]
struct Table {
    events: BTreeMap<u32, Event>,
    /// Next id for events other than signal events (ids >= the signal limit).
    next_other: u32,
    /// The process's context ended: waits fail at once.
    closed: bool,
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
            match t.events.get_mut(&id.0) {
                Some(e) => {
                    e.signaled = true;
                    true
                }
                None => false,
            }
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
            let mut n = 0;
            for e in t.events.values_mut().filter(|e| e.ty == event_type::MEMORY) {
                e.signaled = true;
                e.memory = Some(data);
                n += 1;
            }
            n
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
        loop {
            if t.closed {
                return Err(Errno::NODEV);
            }
            let mut ready = Vec::with_capacity(ids.len());
            for id in ids {
                let e = t.events.get(id).ok_or(Errno::INVAL)?;
                ready.push(e.signaled);
            }
            let done = if all {
                ready.iter().all(|&r| r)
            } else {
                ready.iter().any(|&r| r)
            };
            if done {
                let mut out = Vec::with_capacity(ids.len());
                for (id, &r) in ids.iter().zip(&ready) {
                    let mut d = EventData {
                        event_id: *id,
                        ..EventData::default()
                    };
                    if let Some(e) = t.events.get_mut(id) {
                        if r {
                            if let Some(m) = e.memory {
                                d.memory_exception_data = m;
                            }
                            if e.auto_reset {
                                e.signaled = false;
                            }
                        }
                    }
                    out.push(d);
                }
                return Ok((wait_result::COMPLETE, out));
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
                    return Ok((wait_result::TIMEOUT, out));
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
        }
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
