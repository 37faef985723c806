//! The SDMA engines of one GPU, owned and woken by its SoC (`amdgpu.soc`): they read the
//! packets of the GPU's SDMA queues ([`crate::gpu::sdma`]) and run them in the SoC's
//! events, so in simulated-time order and independent of worker count and partitioning.
//!
//! Each SDMA queue is served by an engine of its own (the KFD spreads queues over the
//! engines round-robin, and ROCr creates one host-to-device and one device-to-host queue,
//! which land on the two PCIe engines of an MI210 or MI300X; a process with more queues
//! than engines gets more bandwidth here than on hardware). An engine runs its queue's
//! packets in order:
//! - copies (linear and rectangle) and constant fills move their bytes through GPU
//!   memory when they start; in timing mode the engine is then busy for
//!   `latency + bytes / bandwidth` (the SoC's `sdma_latency` and `sdma_bandwidth`), so the
//!   packets after a copy (the fence or atomic that completes its signal, a timestamp) run
//!   when the copy has finished; in functional mode a copy takes no simulated time;
//! - fences, 64-bit atomic adds and global timestamps write memory; a trap raises the
//!   interrupt with its context id (ROCr's event id) through
//!   [`HostHooks::signal_event`](crate::gpu::shared::HostHooks::signal_event);
//! - a memory poll that is not met stops the queue until the SoC wakes the engines again
//!   (after a kernel completes, or at the re-check interval the SoC passes, its
//!   `host_poll`); the packet's own interval and retry count are not modelled (ROCr asks
//!   to retry forever).
//!
//! Approximations: copies do not travel through the L2, memory-side cache and HBM models
//! (no contention with kernels' traffic and no cache effects); each engine has one
//! bandwidth whatever the source and destination (host, device or peer memory).
//!
//! An unknown or unsupported packet, a packet running past the published write
//! pointer, or an access to unmapped memory stops the queue with a fault
//! ([`GpuFault`]) naming the packet and its ring offset, as a queue error on hardware.

use std::collections::BTreeMap;

use amdgpu_isa::exec::AtomicOp;
use serde::{Deserialize, Serialize};
use simdojo::stats::{Counter, StatsSink};
use simdojo::time::Tick;

use crate::gpu::ids::{GpuAddr, QueueId};
use crate::gpu::memory::GpuMemory;
use crate::gpu::sdma::{decode, packet_dwords, SdmaPacket, SdmaRing};
use crate::gpu::shared::{GpuFault, GpuShared};

/// Bytes an engine moves per step of a copy (bounds the buffer a copy holds).
const CHUNK: u64 = 1 << 20;

/// Largest packet in dwords (a NOP's 14-bit count plus its header).
const MAX_PACKET_DWORDS: usize = 1 + 0x3fff;

/// How the engines spend simulated time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SdmaTiming {
    /// Timing mode: copies and fills take time.
    pub timed: bool,
    /// Bytes per second of one engine's copies, in GB/s (10^9 bytes per second).
    pub gb_per_s: f64,
    /// Fixed cost of each copy or fill packet (fetch, setup and the first access).
    pub latency: Tick,
}

impl SdmaTiming {
    /// How long a copy or fill of `bytes` keeps an engine busy.
    fn duration(&self, bytes: u64) -> Tick {
        if !self.timed {
            return Tick(0);
        }
        // bytes / (GB/s) is nanoseconds; Tick is picoseconds.
        let transfer = (bytes as f64 * 1000.0 / self.gb_per_s).ceil() as u64;
        Tick(self.latency.0 + transfer)
    }
}

/// One queue's engine.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Engine {
    /// Bytes of the ring consumed (monotonic, the read pointer).
    read: u64,
    /// Simulated time (ps) until which the engine is busy with a copy.
    busy_until: u64,
    /// A queue error stopped it.
    dead: bool,
}

/// The engines' state (saved with the SoC's).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SdmaState {
    engines: BTreeMap<u32, Engine>,
    packets: Counter,
    bytes: Counter,
    busy_ps: Counter,
    faults: Counter,
}

/// See the [module docs](self).
pub struct SdmaEngines {
    timing: SdmaTiming,
    state: SdmaState,
}

/// What stopped an engine's loop.
enum Stop {
    /// Nothing more to run until a doorbell.
    Idle,
    /// Run again at this time (a copy's end, or a poll's re-check).
    At(Tick),
}

impl SdmaEngines {
    /// Engines timed as `timing` says.
    pub fn new(timing: SdmaTiming) -> SdmaEngines {
        SdmaEngines { timing, state: SdmaState::default() }
    }

    /// The state for a checkpoint.
    pub fn state(&self) -> &SdmaState {
        &self.state
    }

    /// Restores a checkpoint's state.
    pub fn restore(&mut self, state: SdmaState) {
        self.state = state;
    }

    /// Runs every SDMA queue of `shared` as far as it can at `now`; returns the earliest
    /// time at which one must run again (`recheck` after `now` for an unmet poll).
    pub fn run_all(&mut self, shared: &GpuShared, now: Tick, recheck: Tick) -> Option<Tick> {
        let ids: Vec<u32> = shared.sdma_queues().iter().map(|(id, _)| *id).collect();
        ids.into_iter().filter_map(|id| self.run(shared, QueueId(id), now, recheck)).min()
    }

    /// Runs SDMA queue `q` as far as it can at `now` (see [`SdmaEngines::run_all`]).
    pub fn run(&mut self, shared: &GpuShared, q: QueueId, now: Tick, recheck: Tick) -> Option<Tick> {
        let ring = shared.sdma_queue(q)?;
        let mem = shared.memory()?.clone();
        match self.advance(shared, &mem, q, &ring, now, recheck) {
            Ok(Stop::Idle) => None,
            Ok(Stop::At(t)) => Some(t),
            Err((offset, message, addr)) => {
                self.state.faults.inc();
                if let Some(e) = self.state.engines.get_mut(&q.0) {
                    e.dead = true;
                }
                let place = format!("SDMA queue {q} ring offset {offset:#x}");
                shared.record_fault(Some(q), GpuFault { kernel: "-".into(), dispatch: 0, place, message, addr });
                None
            }
        }
    }

    /// The loop of [`SdmaEngines::run`]; an error is (ring offset, message, address).
    fn advance(&mut self, shared: &GpuShared, mem: &GpuMemory, q: QueueId, ring: &SdmaRing, now: Tick, recheck: Tick) -> Result<Stop, (u64, String, Option<u64>)> {
        let timing = self.timing;
        let e = self.state.engines.entry(q.0).or_default();
        loop {
            if e.dead {
                return Ok(Stop::Idle);
            }
            if now.0 < e.busy_until {
                return Ok(Stop::At(Tick(e.busy_until)));
            }
            let offset = e.read & (ring.bytes - 1);
            let write = mem.read_u64(ring.write_pointer).map_err(|f| (offset, format!("write pointer unreadable: {f}"), Some(f.addr)))?;
            if write <= e.read {
                return Ok(Stop::Idle);
            }
            let published = write - e.read;
            if published > ring.bytes || !published.is_multiple_of(4) {
                return Err((offset, format!("write pointer {write:#x} is not a whole number of dwords within one ring ({:#x} bytes) of the read pointer {:#x}", ring.bytes, e.read), None));
            }
            let available = ((published / 4) as usize).min(MAX_PACKET_DWORDS);
            let header = read_dwords(mem, ring, e.read, 1).map_err(|(m, a)| (offset, m, a))?[0];
            let n = packet_dwords(header).map_err(|err| (offset, err.to_string(), None))?;
            let dw = read_dwords(mem, ring, e.read, n.min(available)).map_err(|(m, a)| (offset, m, a))?;
            let (packet, n) = decode(&dw).map_err(|err| (offset, err.to_string(), None))?;
            let fail = |what: &str, f: amdgpu_isa::exec::MemFault| (offset, format!("{} {what}: {f}", packet.name()), Some(f.addr));
            let mut busy = 0u64;
            match &packet {
                SdmaPacket::Nop => {}
                SdmaPacket::CopyLinear { src, dst, bytes } => {
                    copy(mem, *src, *dst, *bytes).map_err(|f| fail("copy", f))?;
                    busy = timing.duration(*bytes).0;
                    self.state.bytes.add(*bytes);
                }
                SdmaPacket::CopyRect { element_bytes, src, dst, extent } => {
                    let row = u64::from(extent[0]) * element_bytes;
                    for z in 0..extent[2] {
                        for y in 0..extent[1] {
                            let s = GpuAddr(src.address(0, y, z, *element_bytes));
                            let d = GpuAddr(dst.address(0, y, z, *element_bytes));
                            copy(mem, s, d, row).map_err(|f| fail("copy", f))?;
                        }
                    }
                    let bytes = row * u64::from(extent[1]) * u64::from(extent[2]);
                    busy = timing.duration(bytes).0;
                    self.state.bytes.add(bytes);
                }
                SdmaPacket::ConstantFill { dst, data, unit_bytes, bytes } => {
                    let pattern: Vec<u8> = data.to_le_bytes()[..*unit_bytes as usize].to_vec();
                    let chunk: Vec<u8> = pattern.iter().copied().cycle().take(CHUNK.min(*bytes) as usize).collect();
                    let mut done = 0;
                    while done < *bytes {
                        let len = CHUNK.min(bytes - done);
                        mem.write(GpuAddr(dst.0 + done), &chunk[..len as usize]).map_err(|f| fail("write", f))?;
                        done += len;
                    }
                    busy = timing.duration(*bytes).0;
                    self.state.bytes.add(*bytes);
                }
                SdmaPacket::Fence { addr, data } => {
                    mem.write(*addr, &data.to_le_bytes()).map_err(|f| fail("write", f))?;
                }
                SdmaPacket::Trap { context } => {
                    if let Some(h) = shared.hooks() {
                        h.signal_event(q, *context);
                    }
                }
                SdmaPacket::Poll { memory, func, addr, reference, mask } => {
                    if *memory {
                        let mut v = [0u8; 4];
                        mem.read(*addr, &mut v).map_err(|f| fail("read", f))?;
                        if !func.met(u32::from_le_bytes(v) & mask, *reference) {
                            return Ok(Stop::At(Tick(now.0 + recheck.0.max(1))));
                        }
                    }
                }
                SdmaPacket::AtomicAdd64 { addr, value } => {
                    mem.atomic_u64(*addr, AtomicOp::Add, *value, 0).map_err(|f| fail("atomic", f))?;
                }
                SdmaPacket::Timestamp { addr } => {
                    mem.write_u64(*addr, shared.timestamp(now.0)).map_err(|f| fail("write", f))?;
                }
            }
            self.state.packets.inc();
            self.state.busy_ps.add(busy);
            e.busy_until = now.0 + busy;
            e.read += 4 * n as u64;
            mem.write_u64(ring.read_pointer, e.read).map_err(|f| (offset, format!("read pointer unwritable: {f}"), Some(f.addr)))?;
        }
    }

    /// Reports the engines' statistics (`sdma_*`) once the GPU has had an SDMA queue
    /// (a GPU that never had one reports none, so its statistics are those of a GPU
    /// without engines).
    pub fn stats(&self, out: &mut StatsSink<'_>) {
        if self.state.engines.is_empty() {
            return;
        }
        out.counter("sdma_packets", &self.state.packets);
        out.counter("sdma_bytes", &self.state.bytes);
        out.counter("sdma_busy_ps", &self.state.busy_ps);
        out.counter("sdma_faults", &self.state.faults);
    }
}

/// Reads `n` dwords of `ring` from byte `at` on (monotonic; wrapping at the ring's end).
fn read_dwords(mem: &GpuMemory, ring: &SdmaRing, at: u64, n: usize) -> Result<Vec<u32>, (String, Option<u64>)> {
    let start = at & (ring.bytes - 1);
    let mut bytes = vec![0u8; n * 4];
    let first = ((ring.bytes - start) as usize).min(bytes.len());
    let (head, tail) = bytes.split_at_mut(first);
    let read = |off: u64, buf: &mut [u8]| mem.read(GpuAddr(ring.base.0 + off), buf).map_err(|f| (format!("ring unreadable: {f}"), Some(f.addr)));
    read(start, head)?;
    if !tail.is_empty() {
        read(0, tail)?;
    }
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Copies `bytes` bytes from `src` to `dst` in chunks of at most [`CHUNK`].
fn copy(mem: &GpuMemory, src: GpuAddr, dst: GpuAddr, bytes: u64) -> Result<(), amdgpu_isa::exec::MemFault> {
    let mut buf = vec![0u8; CHUNK.min(bytes) as usize];
    let mut done = 0;
    while done < bytes {
        let len = CHUNK.min(bytes - done) as usize;
        mem.read(GpuAddr(src.0 + done), &mut buf[..len])?;
        mem.write(GpuAddr(dst.0 + done), &buf[..len])?;
        done += len as u64;
    }
    Ok(())
}
