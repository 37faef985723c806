//! `amdgpu.soc`: the root of one GPU. It owns the GPU's memory (creating the shared
//! [`GpuShared`] resource), processes the AQL queues (kernel dispatch and barrier-AND/OR
//! packets, barrier bits, completion signals with HSA semantics: value decrement, event
//! mailbox and interrupt), hands each dispatch to every XCD's command processor, gathers
//! grid completion across XCDs, is the system-coherent home that performs deferred
//! coherent accesses in simulated-time order, and runs the host service poller (the RPC
//! server of `dojo exec`) at a fixed simulated interval, so host services are
//! deterministic too.
//!
//! Doorbells arrive as external input ([`SocInput::Doorbell`]) from any thread. A
//! doorbell of an SDMA queue wakes the SDMA engines the SoC owns
//! ([`crate::components::sdma`]); they also run after each kernel completes (their polls
//! may wait for its signal) and at the times they ask for (a copy's end, a poll's
//! re-check).
//!
//! Global wave sync (GWS). The SoC holds the GPU's GWS resources: one
//! [`GwsUnit`](amdgpu_isa::exec::GwsUnit) (64 barrier and semaphore resources) per queue
//! that the driver gave GWS ([`GpuShared::set_queue_gws`], the KFD's
//! `ALLOC_QUEUE_GWS`). A wave's `ds_gws_*` request travels like a deferred access (CU ->
//! L2 -> home, through links with latency) and is performed here in simulated-time
//! order, so barrier releases and semaphore orders are the same for any worker count
//! and partitioning; each wave the unit releases gets its answer back along the same
//! path. Whether a dispatch may use GWS is decided when it starts (its queue held GWS
//! then). Two requests fault the dispatch (and stop its queue, as a queue error does on
//! hardware) rather than hang it:
//! - any `ds_gws_*` of a dispatch whose queue holds no GWS (on hardware the wave would
//!   touch resources that are not its process's);
//! - a `ds_gws_barrier` that waits for more waves than the dispatch can have resident at
//!   once on the empty GPU (the command processors' placement of its work-groups on
//!   every compute unit, [`crate::gpu::occupancy`]): waves wait at a barrier in their
//!   slots, so that barrier could never open. This is the guard for a cooperative grid that is too
//!   large; HIP refuses such a launch itself (`hipErrorCooperativeLaunchTooLarge`), from
//!   the same occupancy limits.
//!
//! The other waves of a faulted dispatch that wait in GWS are answered with a fault, so
//! their compute units drop their work-groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use amdgpu_isa::exec::{AccessKind, AtomicOp, GwsOp, GwsUnit, MemFault, MemFaultKind, VmemRequest};
use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::{Bytes, ParamSet};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};
use simdojo::time::{ClockDomain, Tick};

use crate::gpu::aql::{signal, Packet, INVALID_HEADER, PACKET_BYTES};
use crate::gpu::ids::{DispatchSeq, GpuAddr, QueueId};
use crate::gpu::memory::MemorySnapshot;
use crate::gpu::visibility::{AgentId, GpuSync, LoggedStore, Visibility, WindowedMemory};
use crate::gpu::messages::{CuCapacity, DispatchOrder, MemMsg, XcdMsg};
use crate::components::sdma::{SdmaEngines, SdmaState, SdmaTiming};
use crate::gpu::sdma::SdmaRing;
use crate::gpu::params::IsaTarget;
use crate::components::cu::mode::Mode;
use crate::gpu::shared::{GpuFault, GpuShared, QueueDesc};
use crate::gpu::stats::KernelStats;

/// Input from outside the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocInput {
    /// The producer advanced the write index of this queue.
    Doorbell(QueueId),
}

/// Token of the poll timer.
const POLL: u64 = 1;
/// Token of the barrier re-check timer.
const RECHECK: u64 = 2;
/// Token of the SDMA engines' wake-up timer.
const SDMA: u64 = 3;

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
struct QueueState {
    /// Next packet index to read.
    read: u64,
    /// Dispatches of this queue still running.
    running: Vec<DispatchSeq>,
    /// A fault stopped the queue.
    dead: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Running {
    queue: QueueId,
    signal: GpuAddr,
    pending_xcds: u32,
    /// Statistics flush stage: 0 none, 1 L2s, 2 memory-side caches, 3 HBM; replies pending.
    stage: u8,
    pending_l2: u32,
    faulted: bool,
    scratch: Option<GpuAddr>,
    stats: KernelStats,
    /// Its queue held GWS resources when it started.
    #[serde(default)]
    gws: bool,
    /// Most waves of the dispatch resident at once on the empty GPU (`None`: not
    /// computed: a dispatch without GWS, or one the command processors refuse).
    #[serde(default)]
    resident_waves: Option<u64>,
}

/// A GWS request the SoC's unit holds: where its answer goes.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct GwsWaiter {
    /// The L2 port it came from.
    port: usize,
    /// The L2's tag.
    tag: u64,
    /// The dispatch.
    seq: DispatchSeq,
    /// Its lanes (the answer's mask).
    mask: u64,
}

/// The GWS resources of one queue and the requests waiting in them.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
struct QueueGws {
    unit: GwsUnit,
    /// Requests the unit holds, by the unit's tag.
    waiting: BTreeMap<u64, GwsWaiter>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
struct SocState {
    xcds: Vec<Option<(u32, u32)>>,
    /// Each XCD's compute units' capacities (from its Hello).
    #[serde(default)]
    xcd_caps: Vec<Vec<CuCapacity>>,
    /// GWS resources per queue (created at a queue's first GWS request).
    #[serde(default)]
    gws: BTreeMap<u32, QueueGws>,
    /// Next tag of a GWS request in a unit.
    #[serde(default)]
    next_gws_tag: u64,
    #[serde(default)]
    gws_ops: Counter,
    queues: Vec<QueueState>,
    running: BTreeMap<DispatchSeq, Running>,
    next_seq: u64,
    /// The pending poll/heartbeat timer.
    poll_timer: Option<simdojo::component::TimerId>,
    recheck_armed: bool,
    dispatches: Counter,
    coherent: Counter,
    faults: Counter,
    /// The SDMA engines' pending wake-up: its timer and time (ps).
    #[serde(default)]
    sdma_timer: Option<(simdojo::component::TimerId, u64)>,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    state: SocState,
    memory: MemorySnapshot,
    queues: Vec<QueueDesc>,
    /// Text ranges of the loaded programs (re-decoded from memory on restore).
    programs: Vec<(u64, u64)>,
    /// The host poller's state.
    poller: Option<Vec<u8>>,
    /// Completed dispatches and faults so far.
    kernels: Vec<KernelStats>,
    faults: Vec<GpuFault>,
    /// Queues holding GWS resources.
    gws_queues: Vec<u32>,
    /// The SDMA queues and their engines' state.
    #[serde(default)]
    sdma_queues: Vec<(u32, SdmaRing)>,
    #[serde(default)]
    sdma: SdmaState,
    /// Plain stores of the current visibility window, not yet in memory.
    #[serde(default)]
    stores: Vec<LoggedStore>,
}

/// See the [module docs](self).
pub struct Soc {
    xcd: Vec<Port<XcdMsg>>,
    l2: Vec<Port<MemMsg>>,
    mall: Vec<Port<MemMsg>>,
    hbm: Vec<Port<MemMsg>>,
    shared: Arc<GpuShared>,
    /// GPU memory, windowed: the SoC is the coherent home of deferred accesses.
    view: Option<WindowedMemory>,
    visibility: Arc<Visibility>,
    agent: AgentId,
    poll_every: Tick,
    period: Tick,
    state: SocState,
    sdma: SdmaEngines,
}

/// The parameters of `amdgpu.soc`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
pub struct SocParams {
    /// Name of the GPU's shared state (components refer to it by `gpu`).
    #[param(default = "gpu")]
    pub name: String,
    /// The ISA the GPU runs.
    #[param(default = IsaTarget::Gfx942)]
    pub target: IsaTarget,
    /// Device memory (address space reserved, touched lazily).
    #[param(default = Bytes::gib(64), unit = "bytes", range = 1..)]
    pub memory: Bytes,
    /// Engine clock (for kernel cycle counts).
    #[param(default = ClockDomain::mhz(2100))]
    pub clock: ClockDomain,
    /// Interval of the host-service poll while dispatches run; also the heartbeat of
    /// the host-visible clock.
    #[param(default = Tick::us(1), range = 1..)]
    pub host_poll: Tick,
    /// Simulation mode (set with the compute units'): in functional mode SDMA copies
    /// take no simulated time.
    #[param(default = Mode::Functional)]
    pub mode: Mode,
    /// GB/s of one SDMA engine's copies and fills in timing mode (estimate: PCIe 4.0
    /// x16's 31.5 GB/s per direction less protocol overhead).
    #[param(default = 25.0, unit = "GB/s", range = 0.001..=1.0e6)]
    pub sdma_bandwidth: f64,
    /// Fixed cost of each SDMA copy or fill packet in timing mode (estimate, untuned).
    #[param(default = Tick::us(1))]
    pub sdma_latency: Tick,
    /// Plain stores become visible to other compute units and homes at the next
    /// multiple of this (0: the shortest compute unit <-> L2 link latency); at most
    /// that latency and the SoC <-> CP latency.
    #[param(default = Tick(0))]
    pub visibility_window: Tick,
}

impl Soc {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        // A GPU program's `exit` and a host service fault end the run.
        ctx.may_end_run();
        let p: SocParams = ctx.typed()?;
        let shared = ctx.resource(&p.name, GpuShared::default);
        shared.init_memory(p.memory.get()).map_err(|e| BuildError::Invalid(e.to_string()))?;
        shared.set_target(p.target.isa());
        let xcd = ctx.port_array::<XcdMsg>("xcd")?;
        if xcd.is_empty() {
            return Err(BuildError::Invalid("a SoC needs at least one `xcd[i]` link".into()));
        }
        let l2 = ctx.port_array::<MemMsg>("l2")?;
        let mall = ctx.port_array::<MemMsg>("mall")?;
        let hbm = ctx.port_array::<MemMsg>("hbm")?;
        let timed = p.mode == Mode::Timing;
        let sdma = SdmaEngines::new(SdmaTiming { timed, gb_per_s: p.sdma_bandwidth, latency: p.sdma_latency });
        // Plain stores become visible at the multiples of the window (see
        // `gpu::visibility`); a dispatch's completion crosses a SoC <-> CP link, which
        // must be at least a window long.
        let visibility = ctx.resource(&Visibility::resource_name(&p.name), Visibility::default);
        for i in 0..xcd.len() {
            if let Some(latency) = ctx.link_latency(&format!("xcd[{i}]")) {
                visibility.note_completion_link(latency);
            }
        }
        visibility.configure(p.visibility_window);
        if let Some(memory) = shared.memory() {
            ctx.sync_hook(Arc::new(GpuSync::new(visibility.clone(), memory.clone())))?;
        }
        let state = SocState { xcds: vec![None; xcd.len()], xcd_caps: vec![Vec::new(); xcd.len()], ..SocState::default() };
        Ok(Box::new(Soc {
            xcd,
            l2,
            mall,
            hbm,
            shared,
            view: None,
            visibility,
            agent: AgentId(ctx.id().index() as u32),
            poll_every: p.host_poll,
            period: p.clock.period(),
            state,
            sdma,
        }))
    }

    fn memory(&self) -> &crate::gpu::memory::GpuMemory {
        // Built in `build`; the SoC cannot exist without it.
        self.shared.memory().expect("the SoC creates the memory at build")
    }

    /// Arms the poll timer: the host services' poll and the heartbeat that keeps the
    /// host-visible clock ([`crate::gpu::clock::GpuClock`]) moving during a dispatch.
    fn arm_poll(&mut self, ctx: &mut Context<'_>) {
        if self.state.poll_timer.is_none() {
            self.state.poll_timer = Some(ctx.schedule(self.poll_every, POLL));
        }
    }

    /// Wakes the SDMA engines at `wake` (if earlier than their pending wake-up).
    fn arm_sdma(&mut self, wake: Option<Tick>, ctx: &mut Context<'_>) {
        let Some(at) = wake else { return };
        if let Some((timer, pending)) = self.state.sdma_timer {
            if pending <= at.0 {
                return;
            }
            ctx.cancel(timer);
        }
        let delay = Tick(at.0.saturating_sub(ctx.now().0));
        self.state.sdma_timer = Some((ctx.schedule(delay, SDMA), at.0));
    }

    /// Runs every SDMA queue (a copy ended, a poll's re-check, a kernel completed).
    fn wake_sdma(&mut self, ctx: &mut Context<'_>) {
        let wake = self.sdma.run_all(&self.shared, ctx.now(), self.poll_every);
        self.arm_sdma(wake, ctx);
    }

    fn fault(&mut self, queue: QueueId, f: GpuFault) {
        self.state.faults.inc();
        if let Some(q) = self.state.queues.get_mut(queue.index()) {
            q.dead = true;
        }
        self.shared.record_fault(Some(queue), f);
    }

    /// Reads and runs packets of queue `q` until one must wait.
    fn process(&mut self, qid: QueueId, ctx: &mut Context<'_>) {
        if self.state.xcds.iter().any(|x| x.is_none()) {
            return; // the XCDs have not reported their capacity yet; Hello re-runs this
        }
        if self.shared.sdma_queue(qid).is_some() {
            let wake = self.sdma.run(&self.shared, qid, ctx.now(), self.poll_every);
            return self.arm_sdma(wake, ctx);
        }
        let Some(desc) = self.shared.queue(qid) else { return };
        while self.state.queues.len() <= qid.index() {
            self.state.queues.push(QueueState::default());
        }
        loop {
            let q = &self.state.queues[qid.index()];
            if q.dead {
                return;
            }
            let write = self.memory().read_u64(desc.write_index).unwrap_or(0);
            let read = q.read;
            if read >= write {
                return;
            }
            let slot = read % desc.packets.max(1);
            let at = GpuAddr(desc.ring.0 + slot * PACKET_BYTES);
            let mut bytes = [0u8; 64];
            if let Err(e) = self.memory().read(at, &mut bytes) {
                let f = GpuFault { kernel: "-".into(), dispatch: 0, place: format!("queue {qid} ring"), message: e.to_string(), addr: Some(e.addr) };
                return self.fault(qid, f);
            }
            let packet = match Packet::decode(&bytes, slot) {
                Ok(p) => p,
                Err(e) => {
                    let f = GpuFault { kernel: "-".into(), dispatch: 0, place: format!("queue {qid}"), message: e.to_string(), addr: Some(at.0) };
                    return self.fault(qid, f);
                }
            };
            let busy = !self.state.queues[qid.index()].running.is_empty();
            match packet {
                Packet::Invalid => return,
                Packet::Dispatch(d) => {
                    if d.header.barrier && busy {
                        return;
                    }
                    self.launch(qid, &desc, at, d, ctx);
                }
                Packet::Barrier(b) => {
                    if b.header.barrier && busy {
                        return;
                    }
                    let values: Vec<i64> = b.deps.iter().filter(|a| a.0 != 0).map(|a| self.memory().read_u64(GpuAddr(a.0 + signal::VALUE)).map_or(0, |v| v as i64)).collect();
                    let and = matches!(b.header.kind, crate::gpu::aql::PacketType::BarrierAnd);
                    let met = if and { values.iter().all(|&v| v == 0) } else { values.is_empty() || values.contains(&0) };
                    if !self.complete_barrier(qid, met, b.completion_signal, ctx) {
                        return;
                    }
                }
                Packet::BarrierValue(b) => {
                    if b.header.barrier && busy {
                        return;
                    }
                    let v = self.memory().read_u64(GpuAddr(b.signal.0 + signal::VALUE)).map_or(0, |v| v as i64);
                    if !self.complete_barrier(qid, b.met(v), b.completion_signal, ctx) {
                        return;
                    }
                }
                Packet::Pm4Ib(p) => {
                    if p.header.barrier && busy {
                        return;
                    }
                    if let Err(message) = self.run_pm4(&p) {
                        let f = GpuFault { kernel: "-".into(), dispatch: 0, place: format!("queue {qid} PM4 buffer {}", p.ib), message, addr: Some(p.ib.0) };
                        return self.fault(qid, f);
                    }
                    self.stamp_start(p.completion_signal, ctx.now());
                    self.complete_signal(qid, p.completion_signal, ctx.now());
                }
            }
            let _ = self.memory().write(at, &INVALID_HEADER.to_le_bytes());
            self.state.queues[qid.index()].read += 1;
            let read = self.state.queues[qid.index()].read;
            let _ = self.memory().write_u64(desc.read_index, read);
        }
    }

    /// Runs the PM4 commands of an indirect buffer: the cache operations runtimes
    /// send (the caches are coherent with the packet processor's view, so an
    /// instruction-cache invalidate drops the decoded programs: new code may have been
    /// loaded where old code was). Other commands are reported, not ignored.
    fn run_pm4(&self, p: &crate::gpu::aql::Pm4Ib) -> Result<(), String> {
        const MAX_DWORDS: u32 = 1 << 14;
        if p.dwords > MAX_DWORDS {
            return Err(format!("a PM4 buffer of {} dwords (most {MAX_DWORDS})", p.dwords));
        }
        let mut bytes = vec![0u8; p.dwords as usize * 4];
        self.memory().read(p.ib, &mut bytes).map_err(|e| e.to_string())?;
        let dw: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let mut i = 0;
        while i < dw.len() {
            let h = dw[i];
            match h >> 30 {
                2 => i += 1,
                3 => {
                    let op = (h >> 8) & 0xff;
                    let count = ((h >> 16) & 0x3fff) as usize + 1;
                    if i + 1 + count > dw.len() {
                        return Err(format!("the PM4 command at dword {i} ({h:#010x}) runs past the end of its {}-dword buffer", dw.len()));
                    }
                    match op {
                        // NOP, EVENT_WRITE
                        0x10 | 0x46 => {}
                        // ACQUIRE_MEM: cache invalidation.
                        0x58 => self.shared.invalidate_code_caches(),
                        other => return Err(format!("PM4 opcode {other:#04x} is not supported")),
                    }
                    i += 1 + count;
                }
                t => return Err(format!("PM4 type-{t} packet {h:#010x} is not supported")),
            }
        }
        Ok(())
    }

    fn launch(&mut self, qid: QueueId, desc: &QueueDesc, at: GpuAddr, d: crate::gpu::aql::KernelDispatch, ctx: &mut Context<'_>) {
        self.state.next_seq += 1;
        let seq = DispatchSeq(self.state.next_seq);
        self.state.dispatches.inc();
        let kernel = self.shared.kernel_name(d.kernel_object);
        let mut descriptor = vec![0u8; 64];
        if let Err(e) = self.memory().read(d.kernel_object, &mut descriptor) {
            let f = GpuFault { kernel, dispatch: seq.0, place: format!("queue {qid}"), message: format!("kernel object unreadable: {e}"), addr: Some(e.addr) };
            return self.fault(qid, f);
        }
        let fixed = u32::from_le_bytes([descriptor[4], descriptor[5], descriptor[6], descriptor[7]]);
        let dynamic_stack = descriptor[56] & (1 << 3) != 0 || u16::from_le_bytes([descriptor[56], descriptor[57]]) & (1 << 11) != 0;
        let lane = d.private_segment_size.max(fixed).max(if dynamic_stack { 16 * 1024 } else { 0 }).next_multiple_of(16);
        let total_slots: u64 = self.state.xcds.iter().flatten().map(|&(cus, slots)| u64::from(cus) * u64::from(slots)).sum();
        let mut scratch = None;
        if lane > 0 {
            match self.memory().alloc(total_slots * 64 * u64::from(lane), 1 << 16) {
                Ok(a) => scratch = Some(a),
                Err(e) => {
                    let f = GpuFault { kernel, dispatch: seq.0, place: format!("queue {qid}"), message: format!("scratch: {e}"), addr: None };
                    return self.fault(qid, f);
                }
            }
        }
        if d.completion_signal.0 != 0 {
            let _ = self.memory().write_u64(GpuAddr(d.completion_signal.0 + signal::START_TS), self.shared.timestamp(ctx.now().0));
        }
        let n = self.xcd.len() as u32;
        let mut first_slot = 0u64;
        for (i, port) in self.xcd.iter().enumerate() {
            let order = DispatchOrder {
                seq,
                kernel: kernel.clone(),
                packet: d.clone(),
                packet_addr: at,
                queue_ptr: desc.queue_object,
                descriptor: descriptor.clone(),
                xcd: i as u32,
                xcds: n,
                scratch_base: scratch.unwrap_or_default(),
                lane_scratch: lane,
                first_slot,
                queue: qid.0,
            };
            if let Some((cus, slots)) = self.state.xcds[i] {
                first_slot += u64::from(cus) * u64::from(slots);
            }
            ctx.send(port, XcdMsg::Dispatch(Box::new(order)));
        }
        self.state.queues[qid.index()].running.push(seq);
        let gws = self.shared.queue_has_gws(qid);
        let resident_waves = if gws { self.resident_waves(&descriptor, &d, &kernel) } else { None };
        let stats = KernelStats { kernel, dispatch: seq.0, grid: d.grid, block: d.block, start_ps: ctx.now().0, ..KernelStats::default() };
        let signal = d.completion_signal;
        self.state.running.insert(seq, Running { queue: qid, signal, pending_xcds: n, stage: 0, pending_l2: 0, faulted: false, scratch, stats, gws, resident_waves });
        self.shared.clock().dispatch_started(ctx.now());
        self.arm_poll(ctx);
    }

    /// Most waves of the dispatch `packet` resident at once on the empty GPU: each XCD's
    /// share of the grid (group `g` on XCD `g % xcds`) placed on its compute units as
    /// its command processor places work-groups. `None` when the kernel cannot be placed
    /// at all (the command processors fault it themselves).
    fn resident_waves(&self, descriptor: &[u8], packet: &crate::gpu::aql::KernelDispatch, kernel: &str) -> Option<u64> {
        let (needs, _) = crate::gpu::occupancy::needs_of_kernel(descriptor, packet, kernel).ok()?;
        let total: u64 = (0..3).map(|d| u64::from(packet.grid[d].div_ceil(packet.block[d].max(1)))).product();
        let n = self.state.xcd_caps.len().max(1) as u64;
        let groups: u64 = self
            .state
            .xcd_caps
            .iter()
            .enumerate()
            .map(|(i, caps)| {
                let share = total / n + u64::from((i as u64) < total % n);
                crate::gpu::occupancy::resident_groups(caps, &needs, share)
            })
            .sum();
        Some(groups * u64::from(needs.waves))
    }

    /// Performs the GWS request `req` that arrived from L2 port `port` with tag `tag`
    /// (see the [module docs](self)).
    fn on_gws(&mut self, port: usize, tag: u64, seq: DispatchSeq, req: VmemRequest, ctx: &mut Context<'_>) {
        let AccessKind::Gws { op, resource, value } = req.kind else { return };
        let pc = req.pc;
        let Some(r) = self.state.running.get(&seq).filter(|r| !r.faulted) else {
            // The dispatch ended with a fault: the wave stops too.
            return self.answer_gws_fault(port, tag, resource, ctx);
        };
        let (queue, gws, resident) = (r.queue, r.gws, r.resident_waves);
        let name = gws_name(op);
        if !gws {
            let message = format!(
                "{name} (GWS resource {resource}) in a dispatch of queue {queue}, which holds no global wave sync resources (a driver gives them to a queue with ALLOC_QUEUE_GWS; HIP runs cooperative launches on such a queue)"
            );
            self.fault_dispatch(seq, pc, message, ctx);
            return self.answer_gws_fault(port, tag, resource, ctx);
        }
        if let (GwsOp::Barrier, Some(most)) = (op, resident) {
            let needed = u64::from(value) + 1;
            if needed > most {
                let message = format!(
                    "ds_gws_barrier (GWS resource {resource}) waits for {needed} waves, but at most {most} waves of this dispatch fit the GPU at once: the barrier could never open (a cooperative grid must be resident as a whole)"
                );
                self.fault_dispatch(seq, pc, message, ctx);
                return self.answer_gws_fault(port, tag, resource, ctx);
            }
        }
        self.state.gws_ops.inc();
        let unit_tag = self.state.next_gws_tag;
        self.state.next_gws_tag += 1;
        let q = self.state.gws.entry(queue.0).or_default();
        q.waiting.insert(unit_tag, GwsWaiter { port, tag, seq, mask: req.mask });
        for done in q.unit.submit(unit_tag, &req) {
            if let Some(w) = q.waiting.remove(&done) {
                // A GWS answer carries no data: a fresh box with the lanes' mask.
                let mut answer = Box::new(VmemRequest::blank());
                answer.answer.mask = w.mask;
                ctx.send(&self.l2[w.port], MemMsg::Response { tag: w.tag, result: Ok(answer) });
            }
        }
    }

    /// Answers a GWS request with a fault: its wave stops and its compute unit drops the
    /// work-group (the dispatch has already faulted, so nothing more is reported).
    fn answer_gws_fault(&self, port: usize, tag: u64, resource: u32, ctx: &mut Context<'_>) {
        let fault = MemFault { addr: u64::from(resource), kind: MemFaultKind::GwsRequest };
        ctx.send(&self.l2[port], MemMsg::Response { tag, result: Err(fault) });
    }

    /// Stops dispatch `seq` with a fault raised here (a GWS request it may not make).
    fn fault_dispatch(&mut self, seq: DispatchSeq, pc: u64, message: String, ctx: &mut Context<'_>) {
        let Some(r) = self.state.running.get_mut(&seq) else { return };
        if r.faulted {
            return;
        }
        r.faulted = true;
        r.pending_xcds = 0;
        r.pending_l2 = 0;
        let (queue, kernel) = (r.queue, r.stats.kernel.clone());
        let place = format!("{} GWS unit, request of the instruction at {pc:#x}", ctx.path());
        self.fault(queue, GpuFault { kernel, dispatch: seq.0, place, message, addr: None });
        self.drop_gws_waiters(queue, seq, ctx);
        self.maybe_finish(seq, ctx);
    }

    /// Withdraws the GWS requests of dispatch `seq` (of `queue`) that wait in the unit and
    /// answers them with a fault (the dispatch faulted; its waves stop).
    fn drop_gws_waiters(&mut self, queue: QueueId, seq: DispatchSeq, ctx: &mut Context<'_>) {
        let Some(q) = self.state.gws.get_mut(&queue.0) else { return };
        let waiting = &q.waiting;
        let gone = q.unit.cancel(|t| waiting.get(&t).is_some_and(|w| w.seq == seq));
        for t in gone {
            if let Some(w) = q.waiting.remove(&t) {
                let fault = MemFault { addr: 0, kind: MemFaultKind::GwsRequest };
                ctx.send(&self.l2[w.port], MemMsg::Response { tag: w.tag, result: Err(fault) });
            }
        }
    }

    /// A barrier whose condition is `met` completes its signal now (`true`); otherwise
    /// the queue waits for the re-check timer (`false`).
    fn complete_barrier(&mut self, queue: QueueId, met: bool, completion: GpuAddr, ctx: &mut Context<'_>) -> bool {
        if !met {
            if !self.state.recheck_armed {
                self.state.recheck_armed = true;
                ctx.schedule(self.poll_every, RECHECK);
            }
            return false;
        }
        self.stamp_start(completion, ctx.now());
        self.complete_signal(queue, completion, ctx.now());
        true
    }

    /// Stamps the start time of a packet that completes at once (barriers).
    fn stamp_start(&self, sig: GpuAddr, now: Tick) {
        if sig.0 != 0 {
            let _ = self.memory().write_u64(GpuAddr(sig.0 + signal::START_TS), self.shared.timestamp(now.0));
        }
    }

    /// HSA completion: decrement the signal's value, stamp the end time, raise its event.
    fn complete_signal(&self, queue: QueueId, sig: GpuAddr, now: Tick) {
        if sig.0 == 0 {
            return;
        }
        let mem = self.memory();
        let _ = mem.write_u64(GpuAddr(sig.0 + signal::END_TS), self.shared.timestamp(now.0));
        let _ = mem.atomic_u64(GpuAddr(sig.0 + signal::VALUE), AtomicOp::Sub, 1, 0);
        let mailbox = mem.read_u64(GpuAddr(sig.0 + signal::EVENT_MAILBOX)).unwrap_or(0);
        if mailbox != 0 {
            let mut id = [0u8; 4];
            if mem.read(GpuAddr(sig.0 + signal::EVENT_ID), &mut id).is_ok() {
                let id = u32::from_le_bytes(id);
                let _ = mem.write_u64(GpuAddr(mailbox), u64::from(id));
                if let Some(h) = self.shared.hooks() {
                    h.signal_event(queue, id);
                }
            }
        }
    }

    /// Moves a dispatch whose XCDs are done through the statistics flush stages (L2s,
    /// then memory-side caches, then HBM: each level has sent its traffic below before
    /// it answers), then finishes it.
    fn advance_flush(&mut self, seq: DispatchSeq, ctx: &mut Context<'_>) {
        loop {
            let Some(r) = self.state.running.get_mut(&seq) else { return };
            if r.faulted || r.pending_xcds > 0 || r.pending_l2 > 0 || r.stage >= 3 {
                break;
            }
            r.stage += 1;
            let ports = match r.stage {
                1 => &self.l2,
                2 => &self.mall,
                _ => &self.hbm,
            };
            r.pending_l2 = ports.len() as u32;
            for p in ports {
                ctx.send(p, MemMsg::Flush { seq });
            }
        }
        self.maybe_finish(seq, ctx);
    }

    fn maybe_finish(&mut self, seq: DispatchSeq, ctx: &mut Context<'_>) {
        let Some(r) = self.state.running.get(&seq) else { return };
        if r.pending_xcds > 0 || r.pending_l2 > 0 || (!r.faulted && r.stage < 3) {
            return;
        }
        let Some(mut r) = self.state.running.remove(&seq) else { return };
        if let Some(q) = self.state.queues.get_mut(r.queue.index()) {
            q.running.retain(|s| *s != seq);
        }
        self.shared.clock().dispatch_ended(ctx.now());
        // Without host services to poll, the heartbeat stops with the last dispatch and
        // leaves no event behind: a doorbell rung after a completion then finds the
        // simulation at the completion's time, whenever it rings.
        if self.state.running.is_empty() && self.shared.poller().is_none() {
            if let Some(t) = self.state.poll_timer.take() {
                ctx.cancel(t);
            }
        }
        if let Some(s) = r.scratch {
            let _ = self.memory().free(s);
        }
        if !r.faulted {
            r.stats.end_ps = ctx.now().0;
            r.stats.cycles = (r.stats.end_ps - r.stats.start_ps) / self.period.0.max(1);
            self.complete_signal(r.queue, r.signal, ctx.now());
            self.shared.record_kernel(r.stats);
            // SDMA packets may poll this dispatch's signal.
            self.wake_sdma(ctx);
        }
        let q = r.queue;
        self.process(q, ctx);
    }

    fn on_xcd(&mut self, i: usize, msg: XcdMsg, ctx: &mut Context<'_>) {
        match msg {
            XcdMsg::Hello { cus, slots_per_cu, caps } => {
                self.state.xcds[i] = Some((cus, slots_per_cu));
                if let Some(c) = self.state.xcd_caps.get_mut(i) {
                    *c = caps;
                }
                if self.state.xcds.iter().all(|x| x.is_some()) {
                    for q in 0..self.shared.queues().len() {
                        self.process(QueueId(q as u32), ctx);
                    }
                }
            }
            XcdMsg::Done { seq, counters } => {
                if let Some(r) = self.state.running.get_mut(&seq) {
                    r.stats.counters.add(&counters);
                    r.pending_xcds = r.pending_xcds.saturating_sub(1);
                }
                self.advance_flush(seq, ctx);
            }
            XcdMsg::Fault { seq, fault } => {
                if let Some(r) = self.state.running.get_mut(&seq) {
                    // The dispatch will never complete: the queue stops, like hardware
                    // raising a queue error; its signal is not decremented.
                    if !r.faulted {
                        r.faulted = true;
                        r.pending_xcds = 0;
                        r.pending_l2 = 0;
                        let q = r.queue;
                        self.fault(q, *fault);
                        self.drop_gws_waiters(q, seq, ctx);
                    }
                }
                self.maybe_finish(seq, ctx);
            }
            XcdMsg::Dispatch(_) => {}
        }
    }

    fn on_l2(&mut self, i: usize, msg: MemMsg, ctx: &mut Context<'_>) {
        match msg {
            MemMsg::Request { tag, seq, req, .. } => {
                if matches!(req.kind, AccessKind::Gws { .. }) {
                    return self.on_gws(i, tag, seq, *req, ctx);
                }
                self.state.coherent.inc();
                if let Some(v) = self.view.as_mut() {
                    v.set_now(ctx.now());
                }
                let result = crate::gpu::memory::perform(self.view.as_mut(), req);
                ctx.send(&self.l2[i], MemMsg::Response { tag, result });
            }
            MemMsg::Counters { seq, l2, read_bytes, write_bytes } => self.on_counters(seq, &l2, read_bytes, write_bytes, ctx),
            _ => {}
        }
    }

    /// A level's per-dispatch counters. HBM bytes are the HBM's own counts when an HBM
    /// is linked, else the last cache level's traffic below it.
    fn on_counters(&mut self, seq: DispatchSeq, counts: &crate::gpu::stats::CacheCounts, read: u64, write: u64, ctx: &mut Context<'_>) {
        let (has_mall, has_hbm) = (!self.mall.is_empty(), !self.hbm.is_empty());
        if let Some(r) = self.state.running.get_mut(&seq) {
            let last_cache = (r.stage == 1 && !has_mall) || r.stage == 2;
            match r.stage {
                1 => r.stats.l2.add(counts),
                2 => r.stats.mall.add(counts),
                _ => {}
            }
            if (r.stage == 3) || (last_cache && !has_hbm) {
                r.stats.hbm_read_bytes += read;
                r.stats.hbm_write_bytes += write;
            }
            r.pending_l2 = r.pending_l2.saturating_sub(1);
        }
        self.advance_flush(seq, ctx);
    }

    fn poll_host(&mut self, ctx: &mut Context<'_>) {
        self.state.poll_timer = None;
        if let Some(p) = self.shared.poller() {
            if let Err(message) = p.poll() {
                let f = GpuFault { kernel: "-".into(), dispatch: 0, place: "host services".into(), message, addr: None };
                self.shared.record_fault(None, f);
                ctx.request_exit("host service fault", 1);
                return;
            }
            if let Some(code) = p.exit_requested() {
                ctx.request_exit("the GPU program called exit", code);
                return;
            }
        }
        if !self.state.running.is_empty() {
            self.arm_poll(ctx);
        }
    }
}

impl Component for Soc {
    fn init(&mut self, _ctx: &mut Context<'_>) {
        self.view = self.shared.memory().map(|m| WindowedMemory::new(m.view(), self.visibility.active_log(self.agent), true));
    }

    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        self.shared.clock().packet_processor_at(ctx.now());
        let event = match event.take_external::<SocInput>() {
            Ok(SocInput::Doorbell(q)) => return self.process(q, ctx),
            Err(e) => e,
        };
        match event {
            Event::Timer { token: POLL, .. } => self.poll_host(ctx),
            Event::Timer { token: SDMA, .. } => {
                self.state.sdma_timer = None;
                self.wake_sdma(ctx);
            }
            Event::Timer { token: RECHECK, .. } => {
                self.state.recheck_armed = false;
                for q in 0..self.shared.queues().len() {
                    self.process(QueueId(q as u32), ctx);
                }
            }
            Event::Message { port, .. } => {
                if let Some(i) = self.xcd.iter().position(|p| p.idx() == port) {
                    if let Ok(m) = event.take(&self.xcd[i]) {
                        self.on_xcd(i, m, ctx);
                    }
                } else if let Some(i) = self.l2.iter().position(|p| p.idx() == port) {
                    if let Ok(m) = event.take(&self.l2[i]) {
                        self.on_l2(i, m, ctx);
                    }
                } else if let Some(i) = self.mall.iter().chain(&self.hbm).position(|p| p.idx() == port) {
                    let p = if i < self.mall.len() { &self.mall[i] } else { &self.hbm[i - self.mall.len()] };
                    if let Ok(MemMsg::Counters { seq, l2, read_bytes, write_bytes }) = event.take(p) {
                        self.on_counters(seq, &l2, read_bytes, write_bytes, ctx);
                    }
                }
            }
            _ => {}
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("dispatches", &self.state.dispatches);
        out.counter("coherent", &self.state.coherent);
        out.counter("faults", &self.state.faults);
        out.counter("gws", &self.state.gws_ops);
        self.sdma.stats(out);
    }

    fn save(&self) -> Result<Vec<u8>, StateError> {
        save_state(&Saved {
            state: self.state.clone(),
            memory: self.memory().snapshot(),
            queues: self.shared.queues(),
            programs: self.shared.program_ranges(),
            poller: self.shared.poller().and_then(|p| p.save()),
            kernels: self.shared.kernels(),
            faults: self.shared.faults(),
            gws_queues: self.shared.gws_queues(),
            sdma_queues: self.shared.sdma_queues(),
            sdma: self.sdma.state().clone(),
            stores: self.visibility.save(),
        })
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let saved: Saved = load_state(bytes)?;
        self.memory().restore(&saved.memory).map_err(|e| StateError::Codec(e.to_string()))?;
        self.shared.set_queues(saved.queues);
        self.shared.set_history(saved.kernels, saved.faults);
        self.shared.set_gws_queues(&saved.gws_queues);
        self.shared.set_sdma_queues(&saved.sdma_queues);
        self.sdma.restore(saved.sdma);
        self.visibility.restore(&saved.stores);
        let target = self.shared.target().ok_or_else(|| StateError::Codec("the GPU has no target".into()))?;
        for (start, end) in saved.programs {
            let mut bytes = vec![0u8; end.saturating_sub(start) as usize];
            self.memory().read(GpuAddr(start), &mut bytes).map_err(|e| StateError::Codec(format!("program text: {e}")))?;
            let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            let program = amdgpu_isa::exec::Program::from_words(target, start, &words);
            self.shared.add_program(start, end, Arc::new(program));
        }
        if let (Some(p), Some(bytes)) = (self.shared.poller(), saved.poller) {
            p.restore(&bytes).map_err(StateError::Codec)?;
        }
        self.state = saved.state;
        Ok(())
    }
}

/// The mnemonic of a GWS operation.
fn gws_name(op: GwsOp) -> &'static str {
    match op {
        GwsOp::Init => "ds_gws_init",
        GwsOp::SemaV => "ds_gws_sema_v",
        GwsOp::SemaBr => "ds_gws_sema_br",
        GwsOp::SemaP => "ds_gws_sema_p",
        GwsOp::SemaReleaseAll => "ds_gws_sema_release_all",
        GwsOp::Barrier => "ds_gws_barrier",
    }
}

simdojo::register_component!(ComponentType {
    name: "amdgpu.soc",
    doc: "The root of one GPU: its memory, AQL queue processing (dispatch, barrier-AND/OR, completion signals), \
          grid completion across XCDs, the system-coherent home, and host services polled at `host_poll`.",
    params: SocParams::SPECS,
    validate: registry::validate_with::<SocParams>,
    estimate: registry::estimate_with::<SocParams>,
    ports: &[
        PortSpec { name: "xcd", doc: "to each XCD's command processor", dir: PortDir::InOut, array: true, message: MessageKind::of::<XcdMsg> },
        PortSpec { name: "l2", doc: "from each XCD's L2 (coherent home, statistics)", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
        PortSpec { name: "mall", doc: "to each memory-side cache slice (statistics)", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
        PortSpec { name: "hbm", doc: "to the HBM controllers (statistics)", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
    ],
    stats: &[
        StatSpec { name: "dispatches", kind: StatKind::Counter, unit: "dispatches", doc: "kernel dispatches launched" },
        StatSpec { name: "coherent", kind: StatKind::Counter, unit: "instructions", doc: "coherent memory instructions performed at the home" },
        StatSpec { name: "faults", kind: StatKind::Counter, unit: "faults", doc: "faults that stopped a queue" },
        StatSpec { name: "gws", kind: StatKind::Counter, unit: "instructions", doc: "global wave sync (ds_gws_*) requests performed" },
        StatSpec { name: "sdma_packets", kind: StatKind::Counter, unit: "packets", doc: "SDMA packets run" },
        StatSpec { name: "sdma_bytes", kind: StatKind::Counter, unit: "bytes", doc: "bytes SDMA copies and fills wrote" },
        StatSpec { name: "sdma_busy_ps", kind: StatKind::Counter, unit: "ps", doc: "simulated time SDMA engines spent on copies and fills (timing mode)" },
        StatSpec { name: "sdma_faults", kind: StatKind::Counter, unit: "faults", doc: "SDMA queue errors (a packet that cannot run stops its queue)" },
    ],
    build: Soc::build,
});
