//! Checkpoints: the whole state of a stopped simulation, restorable into a
//! simulation of the same topology with any partitioning.
//!
//! A checkpoint holds each component's own state (`Component::save`), each
//! component's event sequence counter, every pending event (messages encoded with
//! the receiving port's message codec), cancelled timers and the run-control state.
//! Because the event order does not depend on partitioning, continuing from a
//! checkpoint with another thread count gives the same results as the run that was
//! never interrupted.
//!
//! On disk (and in [`Checkpoint::to_bytes`]) a checkpoint is a 32-byte header and a
//! postcard payload:
//!
//! ```text
//!  0  magic      "SIMDOJO\0"
//!  8  version    u32 LE (FORMAT)
//! 12  reserved   u32, zero
//! 16  length     u64 LE, bytes of the payload
//! 24  checksum   u32 LE, CRC-32C of the header's first 24 bytes and the payload
//! 28  reserved   u32, zero
//! 32  payload
//! ```
//!
//! Reading checks, in this order, the size of the header, the magic, the version, the
//! declared length against the bytes present, and the checksum, before decoding
//! anything, so a truncated, foreign, newer or corrupted file is refused with a
//! sentence saying which; [`Checkpoint::read_file`] reads no more than the header's
//! length (bounded by the file's size), so `/dev/zero` or a huge file is refused after
//! 32 bytes.

use serde::{Deserialize, Serialize};

use crate::component::{Event, TimerId};
use crate::engine::control::{ExitRequest, ExitStatus};
use crate::engine::order::EventKey;
use crate::engine::queue::Pending;
use crate::engine::{EngineError, SimConfig, Simulation};
use crate::ids::{ComponentId, PortIdx};
use crate::time::Tick;
use crate::topology::Topology;

/// The checkpoint format this engine writes and reads.
pub const FORMAT: u32 = 2;

/// The first bytes of every checkpoint.
const MAGIC: [u8; 8] = *b"SIMDOJO\0";

/// Bytes of the header before the payload.
const HEADER: usize = 32;

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
    /// Encodes the checkpoint: header and payload (see the [module docs](self)).
    pub fn to_bytes(&self) -> Result<Vec<u8>, EngineError> {
        let payload = postcard::to_allocvec(self).map_err(|e| EngineError::Checkpoint(e.to_string()))?;
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&out), &payload);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// Decodes a checkpoint written by [`Checkpoint::to_bytes`], refusing a truncated,
    /// foreign-format, other-version or corrupted one with a sentence saying which.
    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, EngineError> {
        let length = check_header(bytes.get(..HEADER).unwrap_or(bytes))?;
        let payload = &bytes[HEADER..];
        if (payload.len() as u64) < length {
            return Err(bad(format!("truncated: the header announces {length} payload bytes, {} are present", payload.len())));
        }
        if payload.len() as u64 > length {
            return Err(bad(format!("{} bytes follow the {length}-byte payload", payload.len() as u64 - length)));
        }
        let stored = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[..24]), payload);
        if crc != stored {
            return Err(bad(format!("corrupted: the checksum is {crc:#010x}, the header says {stored:#010x}")));
        }
        let c: Checkpoint = postcard::from_bytes(payload).map_err(|e| bad(format!("undecodable payload: {e}")))?;
        if c.format != FORMAT {
            return Err(bad(format!("payload format {} inside a version {FORMAT} file", c.format)));
        }
        Ok(c)
    }

    /// Writes the checkpoint to `path` atomically (a temporary file beside it, then a
    /// rename), so a reader never sees half a checkpoint.
    pub fn write_file(&self, path: &std::path::Path) -> Result<(), EngineError> {
        let bytes = self.to_bytes()?;
        crate::fs::write_atomically(path, &bytes).map_err(|e| EngineError::Checkpoint(format!("writing {}: {e}", path.display())))
    }

    /// Reads a checkpoint file, reading no more than its header announces: the header
    /// is checked first, and the announced length must fit the file.
    pub fn read_file(path: &std::path::Path) -> Result<Checkpoint, EngineError> {
        use std::io::Read;
        let io = |e: std::io::Error| EngineError::Checkpoint(format!("reading {}: {e}", path.display()));
        let named = |e: EngineError| match e {
            EngineError::Checkpoint(m) => EngineError::Checkpoint(format!("{}: {m}", path.display())),
            other => other,
        };
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut header = Vec::with_capacity(HEADER);
        (&mut file).take(HEADER as u64).read_to_end(&mut header).map_err(io)?;
        let length = check_header(&header).map_err(named)?;
        let meta = file.metadata().map_err(io)?;
        if meta.is_file() && meta.len() != HEADER as u64 + length {
            return Err(named(bad(format!(
                "the header announces {length} payload bytes, the file holds {}",
                meta.len().saturating_sub(HEADER as u64)
            ))));
        }
        let mut bytes = header;
        // Grows with what is actually read, so a lying header on a pipe costs no more
        // memory than the bytes that arrive.
        (&mut file).take(length.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
        Checkpoint::from_bytes(&bytes).map_err(named)
    }

    /// The time the saved simulation had reached.
    pub fn now(&self) -> Tick {
        self.now
    }
}

fn bad(message: String) -> EngineError {
    EngineError::Checkpoint(message)
}

/// Checks a header (the first [`HEADER`] bytes, or fewer if that is all there is) and
/// returns the payload length it announces.
fn check_header(header: &[u8]) -> Result<u64, EngineError> {
    if header.len() < HEADER {
        return Err(bad(format!("truncated: {} bytes, a checkpoint starts with a {HEADER}-byte header", header.len())));
    }
    if header[..8] != MAGIC {
        return Err(bad("not a simdojo checkpoint (its first bytes are not \"SIMDOJO\")".into()));
    }
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if version != FORMAT {
        return Err(bad(format!("checkpoint format version {version}; this simdojo reads version {FORMAT}")));
    }
    if header[12..16] != [0; 4] || header[28..32] != [0; 4] {
        return Err(bad("corrupted: the header's reserved fields are not zero".into()));
    }
    let mut length = [0u8; 8];
    length.copy_from_slice(&header[16..24]);
    Ok(u64::from_le_bytes(length))
}

/// A stable 64-bit hash of what a checkpoint depends on: component paths, types and
/// parameters, links, fabrics, and the engine settings that change results (the
/// effective exit delay). The end time, partitioner and worker count are left out: a
/// checkpoint may be continued to another end, under any partitioning.
pub(crate) fn topology_hash(t: &Topology, exit_delay: Tick) -> u64 {
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
    feed(b"exit_delay");
    feed(&exit_delay.0.to_le_bytes());
    h
}

impl Simulation {
    /// Saves the simulation. Call it when a run has stopped (after `run_until`,
    /// `step` or the end of `run`). Fails if a component type does not support
    /// checkpoints or external input is pending.
    pub fn checkpoint(&self) -> Result<Checkpoint, EngineError> {
        self.hooks.flush(self.now, crate::engine::SyncPoint::Checkpoint);
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
            return Err(EngineError::Checkpoint(
                "the checkpoint was made from another topology (components, parameters, links or exit delay differ)".into(),
            ));
        }
        if sim.max_ticks <= checkpoint.now && sim.max_ticks != Tick::MAX {
            return Err(EngineError::Checkpoint(format!(
                "the checkpoint is at {}, not before the end time {}: nothing would run",
                checkpoint.now, sim.max_ticks
            )));
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
