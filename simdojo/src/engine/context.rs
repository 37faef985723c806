//! [`Context`]: what a component can do while it handles an event.

use crate::component::{Event, Port, TimerId};
use crate::engine::control::ExitRequest;
use crate::engine::mailbox::Batch;
use crate::engine::order::{EventKey, MAX_SEQ};
use crate::engine::queue::Pending;
use crate::engine::wiring::{Binding, Wiring};
use crate::engine::EngineError;
use crate::ids::{ComponentId, FabricMember, PartitionId, PortIdx};
use crate::registry::Message;
use crate::time::Tick;

/// The events one partition created for another since it last published.
#[derive(Debug)]
pub(crate) struct Outbox {
    /// The destination partition.
    pub dest: PartitionId,
    /// The events, with their earliest time.
    pub batch: Box<Batch>,
}

/// Entries of the direct-mapped cache of open outboxes (destination modulo this).
const OUTBOX_SLOTS: usize = 32;
/// Open outboxes found by a scan before a map is kept for them.
const OUTBOX_SCAN: usize = 8;

/// Where the events a component creates go: the partition's own queue or the outbox
/// of another partition. Owned by the partition; lent to each [`Context`].
#[derive(Debug)]
pub(crate) struct Emitter {
    pub me: PartitionId,
    pub queue: crate::engine::queue::EventQueue,
    /// The destinations sent to since the last publication, each with its events
    /// (sparse: a partition keeps no per-partition state for the partitions it never
    /// sends to).
    pub outboxes: Vec<Outbox>,
    /// Destination partition -> its index in `outboxes`.
    outbox_of: std::collections::HashMap<u32, u32, foldhash::fast::FixedState>,
    /// A direct-mapped cache of `outbox_of`: (generation, destination, index) by
    /// destination modulo [`OUTBOX_SLOTS`]; entries of older generations are empty.
    outbox_slots: [(u32, u32, u32); OUTBOX_SLOTS],
    /// The generation of the open outboxes (advanced when they are taken).
    outbox_generation: u32,
    /// Emptied batches, reused for new outboxes.
    #[allow(clippy::vec_box)] // batches are nodes of the mailboxes' intrusive lists: they move boxed
    pub spare: Vec<Box<Batch>>,
    /// Whether this is the only partition (it then knows every stop by itself).
    pub alone: bool,
    /// Timers cancelled but not yet popped: (owner, timer sequence).
    pub cancelled: std::collections::HashSet<(ComponentId, u64)>,
    /// The earliest exit request made in this partition, ever.
    pub exit: Option<ExitRequest>,
    /// Primary components: holds minus releases, holds ever, latest release time.
    pub primary_held: i64,
    pub primaries_registered: u64,
    pub last_release: Option<Tick>,
    /// The first engine error a component caused (bad send, overflow).
    pub error: Option<EngineError>,
    /// Set when an error, exit request or primary release happened since the event
    /// loop last looked, so the loop checks one flag per event instead of all three.
    pub attention: bool,
    /// Set when the run control (errors, exit requests, primary holds and releases)
    /// changed since the partition last published it.
    pub control: bool,
    /// Events handled.
    pub handled: u64,
}

impl Emitter {
    pub fn new(me: PartitionId, n_partitions: usize) -> Emitter {
        Emitter {
            me,
            queue: crate::engine::queue::EventQueue::new(),
            outboxes: Vec::new(),
            outbox_of: Default::default(),
            outbox_slots: [(0, 0, 0); OUTBOX_SLOTS],
            outbox_generation: 1,
            spare: Vec::new(),
            alone: n_partitions == 1,
            cancelled: Default::default(),
            exit: None,
            primary_held: 0,
            primaries_registered: 0,
            last_release: None,
            error: None,
            attention: false,
            control: false,
            handled: 0,
        }
    }

    #[inline(always)]
    pub fn emit(&mut self, wiring: &Wiring, ev: Pending) {
        let dest = wiring.partition_of[ev.target.index()];
        if dest == self.me {
            self.queue.push(ev);
        } else {
            let d = dest.0;
            let (generation, cached, index) = self.outbox_slots[d as usize % OUTBOX_SLOTS];
            let i = if generation == self.outbox_generation && cached == d { index } else { self.outbox_index(d) };
            let batch = &mut self.outboxes[i as usize].batch;
            batch.min_time = batch.min_time.min(ev.key.time);
            batch.events.push(ev);
        }
    }

    /// The index of the outbox to partition `d`, opened if none is yet. A few open
    /// outboxes are scanned; beyond [`OUTBOX_SCAN`] a map keeps them.
    #[inline(never)]
    fn outbox_index(&mut self, d: u32) -> u32 {
        let open = self.outboxes.len();
        let found = if open <= OUTBOX_SCAN {
            self.outboxes.iter().position(|o| o.dest.0 == d).map(|i| i as u32)
        } else {
            if self.outbox_of.is_empty() {
                self.outbox_of.extend(self.outboxes.iter().enumerate().map(|(i, o)| (o.dest.0, i as u32)));
            }
            self.outbox_of.get(&d).copied()
        };
        let i = found.unwrap_or_else(|| {
            let mut batch = self.spare.pop().unwrap_or_else(|| Batch::new(self.me.0));
            batch.sender = self.me.0;
            batch.min_time = Tick::MAX;
            self.outboxes.push(Outbox { dest: PartitionId(d), batch });
            if open > OUTBOX_SCAN {
                self.outbox_of.insert(d, open as u32);
            }
            open as u32
        });
        self.outbox_slots[d as usize % OUTBOX_SLOTS] = (self.outbox_generation, d, i);
        i
    }

    /// Takes the open outboxes, leaving none open.
    pub fn take_outboxes(&mut self) -> std::vec::Drain<'_, Outbox> {
        if !self.outboxes.is_empty() {
            if !self.outbox_of.is_empty() {
                self.outbox_of.clear();
            }
            self.outbox_generation = self.outbox_generation.wrapping_add(1);
            if self.outbox_generation == 0 {
                // Generation 0 marks never-used slots; after a wrap, clear them.
                self.outbox_slots = [(0, 0, 0); OUTBOX_SLOTS];
                self.outbox_generation = 1;
            }
        }
        self.outboxes.drain(..)
    }

    pub(crate) fn fail(&mut self, e: EngineError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.attention = true;
        self.control = true;
    }

    pub fn fail_panic(&mut self, component: String, message: String) {
        self.fail(EngineError::Panic { component, message });
    }
}

/// What a component sees while it handles an event: the time, its identity, and the
/// means to send messages, schedule timers and control the run.
pub struct Context<'a> {
    pub(crate) now: Tick,
    pub(crate) me: ComponentId,
    pub(crate) seq: &'a mut u64,
    pub(crate) wiring: &'a Wiring,
    pub(crate) out: &'a mut Emitter,
}

impl<'a> Context<'a> {
    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Tick {
        self.now
    }

    /// This component's id.
    pub fn id(&self) -> ComponentId {
        self.me
    }

    /// This component's path in the topology.
    pub fn path(&self) -> &str {
        &self.wiring.paths[self.me.index()]
    }

    #[inline(always)]
    fn next_key(&mut self, time: Tick) -> Option<EventKey> {
        let seq = *self.seq;
        if seq > MAX_SEQ {
            self.sequence_overflow();
            return None;
        }
        *self.seq = seq + 1;
        Some(EventKey::new(time, self.me.0, seq))
    }

    /// Sends `msg` through `port`; it arrives at the linked port after the link's latency.
    #[inline]
    pub fn send<M: Message>(&mut self, port: &Port<M>, msg: M) {
        self.send_after(port, Tick::ZERO, msg)
    }

    /// Sends `msg` through `port` with `extra` delay on top of the link's latency.
    #[inline(always)]
    pub fn send_after<M: Message>(&mut self, port: &Port<M>, extra: Tick, msg: M) {
        let wiring = self.wiring;
        let Some(pw) = wiring.ports[self.me.index()].get(port.idx().index()) else {
            return self.bad_port(port.idx(), "is not a port of this component");
        };
        match &pw.binding {
            Binding::Link { dst, dst_port, latency } => {
                let time = self.now.saturating_add(*latency).saturating_add(extra);
                if let Some(key) = self.next_key(time) {
                    let body = Event::Message { port: *dst_port, payload: Box::new(msg) };
                    self.out.emit(wiring, Pending { key, target: *dst, body });
                }
            }
            Binding::Fabric { .. } => self.bad_port(port.idx(), "is a fabric port: use send_to"),
            Binding::ReceiveOnly => self.bad_port(port.idx(), "is the receiving end of a one-way link"),
            Binding::Unconnected => self.bad_port(port.idx(), "is not connected"),
        }
    }

    /// Sends `msg` through the fabric port `port` to fabric member `to`.
    #[inline]
    pub fn send_to<M: Message>(&mut self, port: &Port<M>, to: FabricMember, msg: M) {
        self.send_to_after(port, to, Tick::ZERO, msg)
    }

    /// Sends `msg` through the fabric port `port` to member `to`, with `extra` delay
    /// on top of the fabric's latency.
    #[inline(always)]
    pub fn send_to_after<M: Message>(&mut self, port: &Port<M>, to: FabricMember, extra: Tick, msg: M) {
        let wiring = self.wiring;
        let Some(pw) = wiring.ports[self.me.index()].get(port.idx().index()) else {
            return self.bad_port(port.idx(), "is not a port of this component");
        };
        let Binding::Fabric { fabric, .. } = pw.binding else {
            return self.bad_port(port.idx(), "is not a fabric port");
        };
        let f = &wiring.fabrics[fabric.index()];
        let Some((dst, dst_port)) = f.member(to) else {
            return self.bad_port(port.idx(), "has no such fabric member");
        };
        let time = self.now.saturating_add(f.latency).saturating_add(extra);
        if let Some(key) = self.next_key(time) {
            let body = Event::Message { port: dst_port, payload: Box::new(msg) };
            self.out.emit(wiring, Pending { key, target: dst, body });
        }
    }

    /// The latency of what `port` sends through: its link's, or its fabric's; `None` when
    /// the port cannot send (unconnected, or the receiving end of a one-way link). A paired
    /// link has one latency for both directions, so an answer to a message sent now
    /// arrives no earlier than twice this: components use that as lookahead of their own.
    pub fn link_latency<M>(&self, port: &Port<M>) -> Option<Tick> {
        match self.wiring.ports[self.me.index()].get(port.idx().index()).map(|p| &p.binding) {
            Some(Binding::Link { latency, .. }) => Some(*latency),
            Some(Binding::Fabric { fabric, .. }) => Some(self.wiring.fabrics[fabric.index()].latency),
            _ => None,
        }
    }

    /// The number of members of the fabric `port` belongs to (0 if it is not a fabric port).
    pub fn fabric_size<M>(&self, port: &Port<M>) -> u32 {
        match self.wiring.ports[self.me.index()].get(port.idx().index()).map(|p| &p.binding) {
            Some(Binding::Fabric { fabric, .. }) => self.wiring.fabrics[fabric.index()].members.len() as u32,
            _ => 0,
        }
    }

    /// This component's member index on the fabric of `port` (`None` if it is not
    /// a fabric port).
    pub fn fabric_member<M>(&self, port: &Port<M>) -> Option<FabricMember> {
        match self.wiring.ports[self.me.index()].get(port.idx().index()).map(|p| &p.binding) {
            Some(Binding::Fabric { member, .. }) => Some(*member),
            _ => None,
        }
    }

    /// Reports that this component ran out of sequence numbers (off the hot path).
    #[cold]
    #[inline(never)]
    fn sequence_overflow(&mut self) {
        self.out.fail(EngineError::SequenceOverflow { component: self.path().to_string() });
    }

    /// Reports a send on a port that cannot carry it (off the hot path).
    #[cold]
    #[inline(never)]
    fn bad_port(&mut self, port: PortIdx, problem: &str) {
        let name = self.wiring.ports[self.me.index()]
            .get(port.index())
            .map(|p| p.name.clone())
            .unwrap_or_else(|| format!("#{}", port.0));
        self.out.fail(EngineError::BadSend {
            component: self.path().to_string(),
            port: name,
            problem: problem.to_string(),
        });
    }

    /// Schedules a timer for this component `delay` from now, carrying `token`.
    #[inline(always)]
    pub fn schedule(&mut self, delay: Tick, token: u64) -> TimerId {
        let time = self.now.saturating_add(delay);
        match self.next_key(time) {
            Some(key) => {
                let wiring = self.wiring;
                let id = TimerId(key.seq());
                self.out.emit(wiring, Pending { key, target: self.me, body: Event::Timer { id, token } });
                id
            }
            None => TimerId(u64::MAX),
        }
    }

    /// Cancels a timer that has not fired yet; cancelling a fired timer does nothing.
    pub fn cancel(&mut self, timer: TimerId) {
        self.out.cancelled.insert((self.me, timer.0));
    }

    /// Asks the run to end. It stops at `now + exit_delay` (the topology's
    /// `exit_delay`, by default its largest link latency): every event before that tick
    /// is still handled, in every partition, so the final state does not depend on
    /// partitioning. The earliest request wins.
    ///
    /// Only a component that declared at build time that it may end the run
    /// ([`BuildContext::may_end_run`](crate::component::BuildContext::may_end_run)) may
    /// call it; from any other it is an error naming the component.
    pub fn request_exit(&mut self, reason: impl Into<String>, code: i32) {
        if !self.may_end_run("requested an exit") {
            return;
        }
        let at = self.now.saturating_add(self.wiring.exit_delay);
        let req = ExitRequest { at, component: self.me, reason: reason.into(), code };
        self.out.exit = ExitRequest::earliest(self.out.exit.take(), &req);
        self.out.attention = true;
        self.out.control = true;
    }

    /// Registers this component as primary. A run with primary components ends when
    /// all have released (at the last release plus `exit_delay`), even if events
    /// remain (free-running clocks); if events run out first, it ends as quiescent and
    /// the exit status says how many primaries still hold.
    /// Like [`Context::request_exit`], only for a component that declared it may end
    /// the run.
    pub fn primary_hold(&mut self) {
        if !self.may_end_run("held the run as primary") {
            return;
        }
        self.out.primary_held += 1;
        self.out.primaries_registered += 1;
        self.out.control = true;
    }

    /// Releases a [`Context::primary_hold`].
    pub fn primary_release(&mut self) {
        if !self.may_end_run("released the run as primary") {
            return;
        }
        self.out.primary_held -= 1;
        self.out.attention = true;
        self.out.control = true;
        let now = self.now;
        self.out.last_release = Some(self.out.last_release.map_or(now, |t| t.max(now)));
    }

    /// Whether this component declared that it may end the run; if not, fails the run
    /// naming it: every partition's horizon counts on the declared ones alone.
    fn may_end_run(&mut self, what: &str) -> bool {
        if self.wiring.ends_run[self.me.index()] {
            return true;
        }
        self.out.fail(EngineError::Lifecycle {
            component: self.wiring.paths[self.me.index()].clone(),
            problem: format!("{what} without declaring at build that it may end the run (BuildContext::may_end_run)"),
        });
        false
    }
}
