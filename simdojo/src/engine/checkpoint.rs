//! Checkpoints: the whole state of a stopped simulation, restorable into a
//! simulation of the same topology with any partitioning.
//!
//! A checkpoint holds each component's own state (`Component::save`), each
//! component's event sequence counter, every pending event (messages encoded with
//! the receiving port's message codec), cancelled timers and the run-control state.
//! Because the event order does not depend on partitioning, continuing from a
//! checkpoint with another thread count gives the same results as the run that was
//! never interrupted.

use serde::{Deserialize, Serialize};

use crate::component::{Event, TimerId};
use crate::engine::control::{ExitRequest, ExitStatus};
use crate::engine::order::EventKey;
use crate::engine::queue::Pending;
use crate::engine::{EngineError, SimConfig, Simulation};
use crate::ids::{ComponentId, PortIdx};
use crate::time::Tick;
use crate::topology::Topology;

const FORMAT: u32 = 1;

/// A saved simulation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    format: u32,
    topology_hash: u64,
    now: Tick,
    ext_seq: u64,
    events_handled: u64,
    components: Vec<SavedComponent>,
    events: Vec<SavedEvent>,
    cancelled: Vec<(ComponentId, u64)>,
    exit: Option<ExitRequest>,
    held: i64,
    registered: u64,
    last_release: Option<Tick>,
    frontier: Tick,
    last_status: Option<ExitStatus>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct SavedComponent {
    id: ComponentId,
    seq: u64,
    state: Vec<u8>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct SavedEvent {
    key: EventKey,
    target: ComponentId,
    body: SavedBody,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum SavedBody {
    Message { port: PortIdx, bytes: Vec<u8> },
    Timer { token: u64 },
}

impl Checkpoint {
    /// Encodes the checkpoint as bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EngineError> {
        postcard::to_allocvec(self).map_err(|e| EngineError::Checkpoint(e.to_string()))
    }
    /// Decodes a checkpoint written by [`Checkpoint::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, EngineError> {
        let c: Checkpoint = postcard::from_bytes(bytes).map_err(|e| EngineError::Checkpoint(e.to_string()))?;
        if c.format != FORMAT {
            return Err(EngineError::Checkpoint(format!("format {} is not the supported {FORMAT}", c.format)));
        }
        Ok(c)
    }
    /// The time the saved simulation had reached.
    pub fn now(&self) -> Tick {
        self.now
    }
}

/// A stable 64-bit hash of what a checkpoint depends on: component paths, types and
/// parameters, and links.
pub(crate) fn topology_hash(t: &Topology) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for c in &t.components {
        feed(c.path.as_bytes());
        feed(c.type_name.as_bytes());
        for (k, v) in c.params.iter() {
            feed(k.as_bytes());
            feed(v.to_string().as_bytes());
        }
    }
    for l in &t.links {
        feed(&l.a.component.0.to_le_bytes());
        feed(l.a.port.as_bytes());
        feed(&l.b.component.0.to_le_bytes());
        feed(l.b.port.as_bytes());
        feed(&l.latency.0.to_le_bytes());
    }
    for f in &t.fabrics {
        for m in &f.members {
            feed(&m.component.0.to_le_bytes());
            feed(m.port.as_bytes());
        }
        feed(&f.latency.0.to_le_bytes());
    }
    h
}

impl Simulation {
    /// Saves the simulation. Call it when a run has stopped (after `run_until`,
    /// `step` or the end of `run`). Fails if a component type does not support
    /// checkpoints or external input is pending.
    pub fn checkpoint(&self) -> Result<Checkpoint, EngineError> {
        let wiring = &self.wiring;
        let mut components = Vec::new();
        let mut events = Vec::new();
        let mut cancelled = Vec::new();
        let mut error = None;
        for part in &self.parts {
            if part.emit.has_external() {
                return Err(EngineError::Checkpoint("external input is pending".into()));
            }
            for slot in &part.slots {
                let state = slot.comp.save().map_err(|e| {
                    EngineError::Checkpoint(format!("component `{}`: {e}", wiring.paths[slot.id.index()]))
                })?;
                components.push(SavedComponent { id: slot.id, seq: slot.seq, state });
            }
            part.emit.queue.for_each(|key, target, body| {
                let body = match body {
                    Event::Message { port, payload } => {
                        let kind = wiring.ports[target.index()][port.index()].message;
                        match (kind.encode)(payload.as_ref()) {
                            Ok(bytes) => SavedBody::Message { port: *port, bytes },
                            Err(e) => {
                                error.get_or_insert(EngineError::Checkpoint(format!(
                                    "message to `{}`: {e}",
                                    wiring.paths[target.index()]
                                )));
                                return;
                            }
                        }
                    }
                    Event::Timer { token, .. } => SavedBody::Timer { token: *token },
                    Event::External { .. } => return,
                };
                events.push(SavedEvent { key, target, body });
            });
            cancelled.extend(part.emit.cancelled.iter().copied());
        }
        if let Some(e) = error {
            return Err(e);
        }
        components.sort_by_key(|c| c.id);
        events.sort_by_key(|e| e.key);
        cancelled.sort();
        let exit = self
            .parts
            .iter()
            .filter_map(|p| p.emit.exit.as_ref())
            .fold(None, ExitRequest::earliest);
        Ok(Checkpoint {
            format: FORMAT,
            topology_hash: self.topology_hash,
            now: self.now,
            ext_seq: self.ext_seq,
            events_handled: self.summary.events,
            components,
            events,
            cancelled,
            exit,
            held: self.parts.iter().map(|p| p.emit.primary_held).sum(),
            registered: self.parts.iter().map(|p| p.emit.primaries_registered).sum(),
            last_release: self.parts.iter().filter_map(|p| p.emit.last_release).max(),
            frontier: self.parts.iter().map(|p| p.frontier).max().unwrap_or(Tick::ZERO),
            last_status: self.last_status.clone(),
        })
    }

    /// Rebuilds `topology` with `config` (any partitioning) and restores `checkpoint`
    /// into it; `init` is called, `startup` is not.
    pub fn restore(topology: &Topology, config: &SimConfig, checkpoint: &Checkpoint) -> Result<Simulation, EngineError> {
        let mut sim = Simulation::construct(topology, config)?;
        if checkpoint.topology_hash != sim.topology_hash {
            return Err(EngineError::Checkpoint("the checkpoint was made from another topology".into()));
        }
        let n = topology.components.len();
        if checkpoint.components.len() != n {
            return Err(EngineError::Checkpoint(format!(
                "{} saved components for {n} in the topology",
                checkpoint.components.len()
            )));
        }
        let wiring = sim.wiring.clone();
        for saved in &checkpoint.components {
            let Some(p) = wiring.partition_of.get(saved.id.index()) else {
                return Err(EngineError::Checkpoint(format!("saved component #{} does not exist", saved.id)));
            };
            let slot = &mut sim.parts[p.index()].slots[wiring.local_index[saved.id.index()] as usize];
            slot.seq = saved.seq;
            slot.comp.restore(&saved.state).map_err(|e| {
                EngineError::Checkpoint(format!("component `{}`: {e}", wiring.paths[saved.id.index()]))
            })?;
        }
        for ev in &checkpoint.events {
            let t = ev.target.index();
            let Some(p) = wiring.partition_of.get(t) else {
                return Err(EngineError::Checkpoint(format!("event for missing component #{}", ev.target)));
            };
            let body = match &ev.body {
                SavedBody::Message { port, bytes } => {
                    let Some(pw) = wiring.ports[t].get(port.index()) else {
                        return Err(EngineError::Checkpoint(format!("event for missing port #{} of `{}`", port.0, wiring.paths[t])));
                    };
                    let payload = (pw.message.decode)(bytes).map_err(|e| {
                        EngineError::Checkpoint(format!("message to `{}`.{}: {e}", wiring.paths[t], pw.name))
                    })?;
                    Event::Message { port: *port, payload }
                }
                SavedBody::Timer { token } => Event::Timer { id: TimerId(ev.key.seq()), token: *token },
            };
            sim.parts[p.index()].emit.queue.push(Pending { key: ev.key, target: ev.target, body });
        }
        for &(c, seq) in &checkpoint.cancelled {
            if let Some(p) = wiring.partition_of.get(c.index()) {
                sim.parts[p.index()].emit.cancelled.insert((c, seq));
            }
        }
        // Run-control state lives in partition 0; records sum and fold over partitions.
        let first = &mut sim.parts[0];
        first.emit.exit = checkpoint.exit.clone();
        first.emit.primary_held = checkpoint.held;
        first.emit.primaries_registered = checkpoint.registered;
        first.emit.last_release = checkpoint.last_release;
        first.emit.handled = checkpoint.events_handled;
        for part in &mut sim.parts {
            part.frontier = checkpoint.frontier;
        }
        sim.now = checkpoint.now;
        sim.ext_seq = checkpoint.ext_seq;
        sim.summary.events = checkpoint.events_handled;
        sim.last_status = checkpoint.last_status.clone();
        Ok(sim)
    }
}
