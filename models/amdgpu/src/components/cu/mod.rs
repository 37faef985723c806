//! `amdgpu.cu`: a compute unit. It holds the waves of the work-groups its command
//! processor placed on it (in the wave slots the CP chose), opens work-group barriers,
//! sleeps waves on `s_sleep`, ships deferred (coherent) memory instructions to its L2 and
//! resumes the wave on the answer, and reports ends and faults.
//!
//! Two modes (parameter `mode`), same results, different time:
//! - `functional`: waves run in quanta (each wave up to `quantum` instructions per
//!   quantum, one instruction per cycle, so spin-waits across work-groups make progress);
//!   line traffic goes to the caches for statistics only.
//! - `timing` ([`timed`]): each SIMD issues at most one instruction per cycle,
//!   round-robin over its ready waves, with per-class issue cycles ([`issue`]); memory
//!   instructions access their data at issue but their wait counters drop only when the
//!   vector L1 / scalar cache (hit latency) or the L2 (a timed `Access`) answers, and
//!   `s_waitcnt` stalls until the counters allow.
//!
//! Memory: plain accesses go straight to GPU memory through the CU's [`MemView`];
//! atomics and coherent accesses whose order matters beyond this XCD are deferred (see
//! [`CuMemory::route`]) and performed by their home in simulated-time order, which keeps
//! results independent of thread count and partitioning.

use std::collections::BTreeMap;
use std::sync::Arc;

use amdgpu_isa::code_object::{KernelDescriptor, KERNEL_DESCRIPTOR_SIZE};
use amdgpu_isa::exec::{
    init_group_waves_from, step, AccessKind, AtomicOp, DeviceMemory, MemFault, Route, StepEnv, StepStop, VmemAccess, Wave, WaveLaunch, WaveStatus,
};
use amdgpu_isa::Target;
use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError, TimerId};
use simdojo::engine::Context;
use simdojo::params::{Bytes, ParamError, ParamSet};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};
use simdojo::time::{ClockDomain, Tick};

use crate::gpu::ids::DispatchSeq;
use crate::gpu::visibility::{AgentId, Visibility, WindowedMemory};
use crate::gpu::messages::{CuCapacity, CuMsg, GroupLaunch, LineAccess, MemMsg};
use crate::gpu::shared::{GpuFault, GpuShared};
use crate::gpu::stats::{class_of, DispatchCounters};
use crate::gpu::params::Policy;
use crate::timing::cache::MAX_WAYS;
use crate::timing::latency::stages;
use crate::timing::{AccessKind as LineKind, CacheConfig, CacheModel, LineAddr, WritePolicy};

use self::mode::Mode;

mod ahead;
pub mod issue;
pub mod lds_banks;
pub mod mode;
mod placement;
pub mod timed;

use self::issue::{IssueParams, IssueTable};
use self::timed::{TimedParams, TimedState, WaveTiming};

/// Finished waves a compute unit keeps for reuse (each holds 128 KiB of registers).
const SPARE_WAVES: usize = 4;

/// Opcode slots of the per-dispatch instruction tallies.
const OPCODES: usize = 4096;

/// A compute unit's memory port: GPU memory plus the routing policy and a log of the
/// cache lines the current quantum touched.
pub struct CuMemory {
    /// GPU memory, windowed ([`crate::gpu::visibility`]).
    win: WindowedMemory,
    target: Target,
    line_bytes: u64,
    lines: Vec<LineAccess>,
    scalar_lines: Vec<u64>,
}

impl CuMemory {
    /// Whether any active lane addresses fine-grained memory (its MTYPE makes every
    /// access coherent, whatever the instruction's cache bits say).
    fn touches_fine(&mut self, addrs: &[u64; 64], mask: u64) -> bool {
        self.win.view().any_fine(addrs, mask)
    }

    /// Logs the lines one wave instruction touches, each once (the texture addresser
    /// coalesces an instruction's lanes into one request per cache line), in the order
    /// of their first lane.
    fn log(&mut self, a: &VmemAccess<'_>, write: bool) {
        let shift = self.line_bytes.trailing_zeros();
        let first = self.lines.len();
        // Lanes whose lines never go down (the usual case: unit or small strides) need
        // no table: a line differs from every earlier one when it is above the last.
        let mut last = None;
        let mut mask = a.mask;
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let line = a.addrs[lane] >> shift;
            match last {
                Some(l) if line == l => {}
                Some(l) if line < l => return self.log_unordered(a, write, first),
                _ => {
                    self.lines.push(LineAccess { line: line << shift, write });
                    last = Some(line);
                }
            }
        }
    }

    /// [`CuMemory::log`] for lanes whose lines are in no order: the lines seen so far sit
    /// in an open-addressing table twice the lane count (a line address is never all
    /// ones: it is line-aligned). Drops what `log` pushed from `first` on and starts over.
    #[cold]
    fn log_unordered(&mut self, a: &VmemAccess<'_>, write: bool, first: usize) {
        self.lines.truncate(first);
        const SLOTS: usize = 128;
        let mut seen = [u64::MAX; SLOTS];
        let shift = self.line_bytes.trailing_zeros();
        let mut last = u64::MAX;
        let mut mask = a.mask;
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let line = a.addrs[lane] & !(self.line_bytes - 1);
            if line == last {
                continue;
            }
            last = line;
            let mut slot = ((line >> shift).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 57) as usize;
            loop {
                if seen[slot] == line {
                    break;
                }
                if seen[slot] == u64::MAX {
                    seen[slot] = line;
                    self.lines.push(LineAccess { line, write });
                    break;
                }
                slot = (slot + 1) % SLOTS;
            }
        }
    }
}

impl DeviceMemory for CuMemory {
    #[inline]
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        self.win.read(addr, buf)
    }

    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        self.win.write(addr, data)
    }

    #[inline]
    fn gather_dwords(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [[u32; 64]]) -> Result<(), MemFault> {
        self.win.gather_dwords(addrs, mask, out)
    }

    #[inline]
    fn scatter_dwords(&mut self, addrs: &[u64; 64], mask: u64, data: &[[u32; 64]]) -> Result<(), MemFault> {
        self.win.scatter_dwords(addrs, mask, data)
    }

    #[inline]
    fn gather_u32(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [u32; 64]) -> Result<(), MemFault> {
        self.win.gather_u32(addrs, mask, out)
    }

    #[inline]
    fn scatter_u32(&mut self, addrs: &[u64; 64], mask: u64, vals: &[u32; 64]) -> Result<(), MemFault> {
        self.win.scatter_u32(addrs, mask, vals)
    }

    fn atomic_u32(&mut self, addr: u64, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        self.win.atomic_u32(addr, op, src, cmp)
    }

    fn atomic_u64(&mut self, addr: u64, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
        self.win.atomic_u64(addr, op, src, cmp)
    }

    /// Atomics and system-coherent loads and stores (`sc0 sc1` on gfx942/gfx950) are
    /// deferred to the place that orders them (see `goes_to_home`); everything else is
    /// performed at once.
    fn route(&mut self, a: &VmemAccess<'_>) -> Route {
        match a.kind {
            AccessKind::Atomic { .. } => {
                self.log(a, true);
                Route::Defer
            }
            AccessKind::Load | AccessKind::Store => {
                let write = matches!(a.kind, AccessKind::Store);
                self.log(a, write);
                if (self.target != Target::Gfx90a && a.policy.sc0 && a.policy.sc1) || self.touches_fine(a.addrs, a.mask) {
                    Route::Defer
                } else {
                    Route::Now
                }
            }
            AccessKind::ScalarLoad => {
                let first = a.addrs[0];
                let last = first.saturating_add(u64::from(a.bytes_per_lane.max(1)) - 1);
                let mut line = first & !(SCALAR_LINE - 1);
                while line <= last {
                    self.scalar_lines.push(line);
                    line += SCALAR_LINE;
                }
                Route::Now
            }
            _ => Route::Now,
        }
    }
}

/// Line size of the scalar cache.
const SCALAR_LINE: u64 = 64;

/// Whether a deferred request goes past the L2 to the coherent home. On gfx942 and
/// gfx950 the XCDs' L2s are not coherent with each other and an atomic's cache bits do
/// not say its scope (sc0 only asks for the old value), so every deferred access goes to
/// the one home where all XCDs' accesses meet; on gfx90a (one L2) the L2 is that place,
/// except for fine-grained memory, which is coherent with the host (the home). Global
/// wave sync requests always go to the home, which performs them for the whole GPU.
fn goes_to_home(target: Target, req: &amdgpu_isa::exec::VmemRequest, mem: &mut CuMemory) -> bool {
    // GWS requests (`ds_gws_*`) go to the device's GWS unit, which the SoC holds.
    matches!(req.kind, AccessKind::Gws { .. }) || target != Target::Gfx90a || mem.touches_fine(&req.addrs, req.mask)
}

/// One wave in a slot.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Slot {
    wave: Wave,
    /// Cycle before which the wave sleeps.
    wake: u64,
    /// Timing-mode scheduling state.
    #[serde(default)]
    timing: WaveTiming,
}

impl Slot {
    /// The pc of the next instruction the wave issues: its pc, or in timing mode that of
    /// the oldest instruction it ran ahead (`ahead`), which is where it is as far as
    /// anything outside the wave can tell.
    fn issue_pc(&self) -> u64 {
        self.timing.ahead.front().map_or(self.wave.pc, |a| a.pc)
    }
}

/// A resident work-group.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Group {
    launch: GroupLaunch,
    waves: Vec<Slot>,
    lds: Vec<u8>,
    /// Its work-group slot on the unit (HW_ID.TG_ID), if one was free.
    #[serde(default)]
    tg: Option<u8>,
    /// Its LDS range (start, bytes) in the unit's LDS, if one was free.
    #[serde(default)]
    lds_range: Option<(u32, u32)>,
    /// When it arrived (the watchdog counts from here).
    #[serde(default)]
    started: Tick,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct CuState {
    /// Vector L1 (write-through, no write-allocate).
    l1: CacheModel,
    /// Scalar cache.
    scalar: CacheModel,
    groups: Vec<Group>,
    /// Per-dispatch counters and per-opcode tallies.
    counters: BTreeMap<DispatchSeq, (DispatchCounters, Vec<u64>)>,
    /// When the pending quantum timer fires, if one is pending.
    timer_at: Option<Tick>,
    timer: Option<TimerId>,
    instructions: Counter,
    quanta: Counter,
    deferred: Counter,
    faults: Counter,
    /// Timing-mode state.
    #[serde(default)]
    timed: TimedState,
}

/// See the [module docs](self).
pub struct ComputeUnit {
    cp: Port<CuMsg>,
    l2: Port<MemMsg>,
    cap: CuCapacity,
    quantum: u64,
    clock: ClockDomain,
    shared: Arc<GpuShared>,
    visibility: Arc<Visibility>,
    agent: AgentId,
    mem: Option<CuMemory>,
    line_bytes: u64,
    /// Timing mode's parameters and issue table (`None` in functional mode).
    timing: Option<Box<(TimedParams, Arc<IssueTable>)>>,
    state: CuState,
    /// Waves of finished work-groups, reused for new ones (a cache: not checkpointed).
    spare: Vec<Wave>,
    /// Longest a work-group may stay resident (`watchdog`; `None`: unbounded).
    watchdog: Option<Tick>,
}

/// The largest LDS of a CDNA compute unit: gfx950's 160 KiB.
const MAX_LDS: u64 = 160 << 10;

/// The parameters of `amdgpu.cu`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
#[params(check = CuParams::check, estimate = CuParams::estimate)]
pub struct CuParams {
    /// Name of the GPU (the SoC's `name`).
    #[param(default = "gpu")]
    pub gpu: String,
    /// Simulation mode.
    #[param(default = Mode::Functional)]
    pub mode: Mode,
    /// Engine clock.
    #[param(default = ClockDomain::mhz(2100))]
    pub clock: ClockDomain,
    /// SIMD units.
    #[param(default = 4, range = 1..)]
    pub simds: u32,
    /// Wave slots (8 per SIMD on CDNA).
    #[param(default = 32, range = 1..=64)]
    pub wave_slots: u32,
    /// Unified VGPRs (arch + acc) per SIMD lane.
    #[param(default = 512)]
    pub vgprs_per_simd: u32,
    /// SGPRs per SIMD.
    #[param(default = 800)]
    pub sgprs_per_simd: u32,
    /// LDS bytes (160 KiB on gfx950, the largest of a CDNA compute unit).
    #[param(default = Bytes(65536), unit = "bytes", range = 1..=MAX_LDS)]
    pub lds_bytes: Bytes,
    /// Functional mode: instructions per wave per quantum.
    #[param(default = 256, unit = "instructions", range = 1..)]
    pub quantum: u64,
    /// Simulated time after which a still-running work-group faults, naming its waves
    /// and program counters (0: never).
    #[param(default = Tick::ms(100))]
    pub watchdog: Tick,
    /// Vector L1 line bytes (64 on gfx90a).
    #[param(default = 128, unit = "bytes", power_of_two)]
    pub line_bytes: u64,
    /// Vector L1 capacity (16 KiB on gfx90a).
    #[param(default = Bytes::kib(32), unit = "bytes", range = 1..)]
    pub l1_size: Bytes,
    /// Vector L1 associativity.
    #[param(default = 16, unit = "ways", range = 1..=MAX_WAYS)]
    pub l1_ways: u32,
    /// Replacement of the CU's caches.
    #[param(default = Policy::Lru)]
    pub l1_policy: Policy,
    /// Scalar cache capacity.
    #[param(default = Bytes::kib(16), unit = "bytes", range = 1..)]
    pub scalar_size: Bytes,
    /// Scalar cache associativity.
    #[param(default = 8, unit = "ways", range = 1..=MAX_WAYS)]
    pub scalar_ways: u32,
    /// Timing: issue cycles of a wave64 VALU op (64 lanes on a 16-lane SIMD).
    #[param(default = 4, unit = "cycles")]
    pub valu_cycles: u16,
    /// Timing: VALU occupancy of an f64 op (full rate on CDNA 2/3/4: 128 FP64 vector
    /// flops per CU per clock).
    #[param(default = 4, unit = "cycles")]
    pub valu_f64_cycles: u16,
    /// Timing: issue cycles of a transcendental VALU op (quarter rate).
    #[param(default = 16, unit = "cycles")]
    pub trans_cycles: u16,
    /// Timing: issue cycles of a scalar ALU op (and s_waitcnt, scalar memory issue).
    #[param(default = 1, unit = "cycles")]
    pub salu_cycles: u16,
    /// Timing: issue cycles of a branch (fetch redirect, assumed).
    #[param(default = 4, unit = "cycles")]
    pub branch_cycles: u16,
    /// Timing: issue cycles of a vector memory or LDS op
    /// (timing::latency::stages::VECTOR_ADDRESS).
    #[param(default = stages::VECTOR_ADDRESS as u16, unit = "cycles")]
    pub mem_issue_cycles: u16,
    /// Timing: cycles of the vector L1 pipeline after the access's address/tag cycles
    /// (timing::latency::stages::VECTOR_L1_PIPE).
    #[param(default = stages::VECTOR_L1_PIPE as u64, unit = "cycles")]
    pub l1_hit_latency: u64,
    /// Timing: load-to-use cycles of a scalar cache hit
    /// (timing::latency::stages::SCALAR_L1_PIPE).
    #[param(default = stages::SCALAR_L1_PIPE as u64, unit = "cycles")]
    pub scalar_hit_latency: u64,
    /// Timing: cycles after its bank cycles until an LDS op's lgkmcnt drops
    /// (timing::latency::stages::LDS_PIPE).
    #[param(default = stages::LDS_PIPE as u64, unit = "cycles")]
    pub lds_latency: u64,
    /// Timing: cycles between two issue opportunities of one SIMD (the 4 SIMDs take
    /// turns).
    #[param(default = 4, unit = "cycles", range = 1..)]
    pub issue_period: u64,
    /// Timing: cycles of work the vector memory pipeline's instruction queue holds
    /// (assumed).
    #[param(default = 64, unit = "cycles")]
    pub vmem_queue: u64,
    /// Timing: lines the vector L1 can have outstanding at the L2 (assumed: not
    /// public; sized by Little's law so that MI210 reaches its published stream
    /// bandwidth).
    #[param(default = 192, unit = "lines", range = 1..)]
    pub l1_mshrs: u64,
    /// Timing: LDS banks, one dword wide (32 on CDNA 2/3, 64 on CDNA 4).
    #[param(default = 32, power_of_two)]
    pub lds_banks: u32,
    /// Timing: most cycles scheduled per event (a work-group arriving meanwhile starts
    /// at the window's end).
    #[param(default = 64, unit = "cycles", range = 1..)]
    pub issue_window: u64,
    /// Timing: windows end before the earliest cycle an outstanding L2 answer could
    /// arrive (twice the L2 link latency after it was sent); an overdue answer is seen
    /// late by less than max(this, its age / 16) cycles.
    #[param(default = 8, unit = "cycles", range = 1..)]
    pub answer_slack: u64,
}

impl CuParams {
    /// The configuration of one of the CU's caches.
    fn cache_config(&self, size: Bytes, line_bytes: u64, ways: u32) -> CacheConfig {
        CacheConfig { size_bytes: size.get(), line_bytes, ways, policy: self.l1_policy.replacement(), write_policy: WritePolicy::WriteThrough }
    }

    /// The caches' shapes, checked as the tag models check them when built.
    fn check(&self) -> Result<(), ParamError> {
        let l1 = self.cache_config(self.l1_size, self.line_bytes, self.l1_ways);
        l1.sets().map_err(|e| ParamError::new("l1_size", format!("gives no valid vector L1 shape: {e}")))?;
        let scalar = self.cache_config(self.scalar_size, SCALAR_LINE, self.scalar_ways);
        scalar.sets().map_err(|e| ParamError::new("scalar_size", format!("gives no valid scalar cache shape: {e}")))?;
        Ok(())
    }

    /// The host memory a fully used compute unit holds: its register files (every
    /// VGPR of every SIMD, 64 lanes of 4 bytes, and the SGPRs), its LDS, and its cache
    /// tags when every line is filled (10 bytes a line).
    fn estimate(&self) -> u64 {
        let vgprs = u64::from(self.simds) * u64::from(self.vgprs_per_simd) * 64 * 4;
        let sgprs = u64::from(self.simds) * u64::from(self.sgprs_per_simd) * 4;
        let lines = self.l1_size.get() / self.line_bytes.max(1) + self.scalar_size.get() / SCALAR_LINE;
        vgprs + sgprs + self.lds_bytes.get() + lines * 10
    }
}

impl ComputeUnit {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        let p: CuParams = ctx.typed()?;
        let cap = CuCapacity {
            simds: p.simds,
            slots: p.wave_slots,
            vgprs_per_simd: p.vgprs_per_simd,
            sgprs_per_simd: p.sgprs_per_simd,
            // At most MAX_LDS (the parameter's range), so it fits.
            lds_bytes: p.lds_bytes.get() as u32,
        };
        let timing = match p.mode {
            Mode::Functional => None,
            Mode::Timing => {
                let issue = IssueParams {
                    valu: p.valu_cycles,
                    valu_f64: p.valu_f64_cycles,
                    trans: p.trans_cycles,
                    salu: p.salu_cycles,
                    branch: p.branch_cycles,
                    mem_issue: p.mem_issue_cycles,
                };
                let params = TimedParams {
                    l1_hit_latency: p.l1_hit_latency,
                    scalar_hit_latency: p.scalar_hit_latency,
                    lds_latency: p.lds_latency,
                    window: p.issue_window,
                    answer_slack: p.answer_slack,
                    issue_period: p.issue_period,
                    vmem_queue: p.vmem_queue,
                    l1_mshrs: p.l1_mshrs,
                    lds_banks: p.lds_banks,
                };
                // One table per distinct set of issue parameters, shared by every
                // compute unit of the run (building it classifies every opcode).
                let table = ctx.resource(&format!("amdgpu.cu.issue_table {issue:?}"), || IssueTable::new(&issue));
                Some(Box::new((params, table)))
            }
        };
        let shared = ctx.resource(&p.gpu, GpuShared::default);
        // The window of plain stores' visibility is at most the link to the L2 (the home
        // of this unit's deferred accesses, or the way to it).
        let visibility = ctx.resource(&Visibility::resource_name(&p.gpu), Visibility::default);
        if let Some(latency) = ctx.link_latency("l2") {
            visibility.note_agent_link(latency).map_err(BuildError::Invalid)?;
        }
        let cache = |config: CacheConfig, what: &str| -> Result<CacheModel, BuildError> {
            CacheModel::new(&config).map_err(|e| BuildError::Invalid(format!("{what}: {e}")))
        };
        let l1 = cache(p.cache_config(p.l1_size, p.line_bytes, p.l1_ways), "l1_size")?;
        let scalar = cache(p.cache_config(p.scalar_size, SCALAR_LINE, p.scalar_ways), "scalar_size")?;
        Ok(Box::new(ComputeUnit {
            cp: ctx.port("cp")?,
            l2: ctx.port("l2")?,
            cap,
            quantum: p.quantum,
            clock: p.clock,
            shared,
            visibility,
            agent: AgentId(ctx.id().index() as u32),
            mem: None,
            line_bytes: p.line_bytes,
            timing,
            state: CuState {
                l1,
                scalar,
                groups: Vec::new(),
                counters: BTreeMap::new(),
                timer_at: None,
                timer: None,
                instructions: Counter::default(),
                quanta: Counter::default(),
                deferred: Counter::default(),
                faults: Counter::default(),
                timed: TimedState::default(),
            },
            spare: Vec::new(),
            watchdog: Some(p.watchdog).filter(|t| *t > Tick::ZERO),
        }))
    }

    fn cycle(&self, t: Tick) -> u64 {
        self.clock.to_cycles(t)
    }

    fn arm(&mut self, ctx: &mut Context<'_>, at: Tick) {
        if let Some(t) = self.state.timer_at {
            if t <= at {
                return;
            }
            if let Some(id) = self.state.timer.take() {
                ctx.cancel(id);
            }
        }
        let delay = Tick(at.0.saturating_sub(ctx.now().0).max(1));
        self.state.timer = Some(ctx.schedule(delay, 0));
        self.state.timer_at = Some(ctx.now() + delay);
    }

    fn fault_group(&mut self, ctx: &mut Context<'_>, g: usize, wave_index: usize, message: String, addr: Option<u64>) {
        let group = self.state.groups.remove(g);
        self.state.faults.inc();
        let l = &group.launch;
        let pc = group.waves.get(wave_index).map_or(0, Slot::issue_pc);
        let fault = GpuFault {
            kernel: l.kernel.clone(),
            dispatch: l.seq.0,
            place: format!("{} wave slot {} group {:?} pc {pc:#x}", ctx.path(), l.first_slot as usize + wave_index, l.group),
            message,
            addr,
        };
        ctx.send(&self.cp, CuMsg::Fault { seq: l.seq, first_slot: l.first_slot, fault: Box::new(fault) });
    }

    fn launch(&mut self, l: GroupLaunch, ctx: &mut Context<'_>) {
        let seq = l.seq;
        let bytes: Option<&[u8; KERNEL_DESCRIPTOR_SIZE]> = l.descriptor.as_slice().try_into().ok();
        let kd = match bytes.map(KernelDescriptor::decode) {
            Some(Ok(kd)) => kd,
            _ => {
                let g = Group { launch: l, waves: Vec::new(), lds: Vec::new(), tg: None, lds_range: None, started: ctx.now() };
                self.state.groups.push(g);
                let n = self.state.groups.len() - 1;
                self.fault_group(ctx, n, 0, "malformed kernel descriptor".into(), None);
                return;
            }
        };
        let entry = l.packet.kernel_object.0.wrapping_add_signed(kd.kernel_code_entry_byte_offset);
        let mode_bits = amdgpu_isa::numeric::Mode::from_pgm_rsrc1(kd.rsrc1.raw).encode();
        // Where the group runs on this unit: the CP's part plus slots and bases.
        let tg = placement::tg_slot(self.state.groups.iter().map(|g| g.tg));
        let used_lds: Vec<(u32, u32)> = self.state.groups.iter().filter_map(|g| g.lds_range).collect();
        let (lds_range, lds_base) = match self.shared.target() {
            Some(target) => placement::lds_range(target, &used_lds, l.lds_bytes, self.cap.lds_bytes),
            None => (None, None),
        };
        let mut place = l.place;
        place.ids.tg_id = tg;
        place.lds_base = lds_base;
        place.first_slot = l.first_slot;
        place.simds = self.cap.simds;
        place.packed_bases = false;
        place.counters_idle = self.timing.is_none();
        let mut waves = init_group_waves_from(&WaveLaunch {
            descriptor: &kd,
            entry_pc: entry,
            grid: l.packet.grid,
            block: l.packet.block,
            group_id: l.group,
            dispatch_ptr: l.packet_addr.0,
            queue_ptr: l.queue_ptr.0,
            kernarg_ptr: l.packet.kernarg_address.0,
            dispatch_id: seq.0,
            kernarg: &[],
            scratch_base: l.scratch_base.0 + u64::from(l.first_slot) * 64 * u64::from(l.lane_scratch),
            scratch_lane_bytes: l.lane_scratch,
            mode_bits,
            lds_bytes: l.lds_bytes,
            place,
        }, &mut self.spare);
        let live = self.state.groups.iter().flat_map(|g| g.waves.iter().map(|s| &s.wave));
        placement::gpr_bases(live, &mut waves, self.cap.vgprs_per_simd, self.cap.sgprs_per_simd);
        let c = self.state.counters.entry(seq).or_insert_with(|| (DispatchCounters::default(), vec![0; OPCODES]));
        c.0.groups += 1;
        c.0.waves += waves.len() as u64;
        let lds = vec![0u8; l.lds_bytes as usize];
        let known = self.shared.program_at(entry).is_some();
        let ready = self.cycle(ctx.now()) + 1;
        let slots = waves.into_iter().map(|wave| Slot { wave, wake: 0, timing: WaveTiming::starting_at(ready) }).collect();
        self.state.groups.push(Group { launch: l, waves: slots, lds, tg, lds_range, started: ctx.now() });
        if !known {
            let n = self.state.groups.len() - 1;
            self.fault_group(ctx, n, 0, format!("no code object is loaded at the kernel entry {entry:#x}"), Some(entry));
            return;
        }
        let now = ctx.now();
        self.arm(ctx, now + self.clock.period());
    }

    /// Faults every work-group resident for longer than the watchdog, naming its
    /// unfinished waves and their program counters: a GPU program that never ends stops
    /// with a message instead of running forever.
    fn check_watchdog(&mut self, ctx: &mut Context<'_>) {
        let Some(limit) = self.watchdog else { return };
        let now = ctx.now();
        let mut g = 0;
        while g < self.state.groups.len() {
            let group = &self.state.groups[g];
            if now.0.saturating_sub(group.started.0) <= limit.0 {
                g += 1;
                continue;
            }
            let first_slot = group.launch.first_slot as usize;
            let live: Vec<(usize, u64)> = group
                .waves
                .iter()
                .enumerate()
                .filter(|(_, s)| s.wave.status != WaveStatus::Ended)
                .map(|(i, s)| (i, s.issue_pc()))
                .collect();
            const SHOWN: usize = 8;
            let mut waves: Vec<String> =
                live.iter().take(SHOWN).map(|(i, pc)| format!("slot {} at pc {pc:#x}", first_slot + i)).collect();
            if live.len() > SHOWN {
                waves.push(format!("and {} more", live.len() - SHOWN));
            }
            let message = format!(
                "watchdog: the work-group is still running after {limit} of simulated time (the compute unit's \
                 `watchdog`; raise it with --set cu.watchdog=DURATION, 0 disables); unfinished waves: {}",
                waves.join(", ")
            );
            let first_live = live.first().map_or(0, |(i, _)| *i);
            self.fault_group(ctx, g, first_live, message, None);
        }
    }

    /// Runs one quantum of every ready wave.
    fn quantum(&mut self, ctx: &mut Context<'_>) {
        self.state.timer = None;
        self.state.timer_at = None;
        let now = ctx.now();
        let cycle = self.cycle(now);
        let Some(mut mem) = self.mem.take() else { return };
        mem.win.set_now(now);
        let mut g = 0;
        let mut next_wake = u64::MAX;
        let mut any_ready = false;
        while g < self.state.groups.len() {
            let seq = self.state.groups[g].launch.seq;
            let Some(program) = self.shared.program_at(self.state.groups[g].waves.first().map_or(0, |s| s.wave.pc)).or_else(|| {
                self.state.groups[g].waves.iter().find_map(|s| self.shared.program_at(s.wave.pc))
            }) else {
                self.fault_group(ctx, g, 0, "the program counter left every loaded code object".into(), None);
                continue;
            };
            let counts = &mut self.state.counters.entry(seq).or_insert_with(|| (DispatchCounters::default(), vec![0; OPCODES]));
            counts.0.quanta += 1;
            counts.0.resident_wave_quanta += self.state.groups[g].waves.iter().filter(|s| s.wave.status != WaveStatus::Ended).count() as u64;
            let mut fault = None;
            let mut requests = Vec::new();
            {
                let group = &mut self.state.groups[g];
                for (wi, slot) in group.waves.iter_mut().enumerate() {
                    if slot.wave.status != WaveStatus::Running {
                        continue;
                    }
                    if slot.wake > cycle {
                        next_wake = next_wake.min(slot.wake);
                        continue;
                    }
                    let mut env = StepEnv { mem: &mut mem, lds: &mut group.lds, clock: cycle, realtime: crate::gpu::clock::reference_ticks(now), counts: Some(&mut counts.1) };
                    match step(&mut slot.wave, &program, &mut env, self.quantum) {
                        Ok(out) => {
                            self.state.instructions.add(out.executed);
                            match out.stop {
                                StepStop::Budget => any_ready = true,
                                StepStop::Sleep { cycles } => {
                                    slot.wake = cycle + cycles;
                                    next_wake = next_wake.min(slot.wake);
                                }
                                StepStop::WaitMemory => {
                                    if let Some(req) = slot.wave.take_request() {
                                        requests.push((wi, req));
                                    }
                                }
                                _ => {}
                            }
                        }
                        Err(e) => {
                            let addr = match &e {
                                amdgpu_isa::exec::ExecFault::Memory { addr, .. } => Some(*addr),
                                _ => None,
                            };
                            fault = Some((wi, e.to_string(), addr));
                            break;
                        }
                    }
                }
            }
            if let Some((wi, message, addr)) = fault {
                self.fault_group(ctx, g, wi, message, addr);
                continue;
            }
            for (wi, req) in requests {
                self.state.deferred.inc();
                let system = goes_to_home(mem.target, &req, &mut mem);
                let tag = (u64::from(self.state.groups[g].launch.first_slot) + wi as u64) | (seq.0 << 8);
                ctx.send(&self.l2, MemMsg::Request { tag, seq, req, system });
            }
            let c = &mut self.state.counters.entry(seq).or_insert_with(|| (DispatchCounters::default(), vec![0; OPCODES])).0;
            let shift = self.line_bytes.trailing_zeros();
            let mut to_l2 = Vec::new();
            for l in mem.lines.drain(..) {
                let kind = if l.write { LineKind::Write } else { LineKind::Read };
                let out = self.state.l1.access(LineAddr(l.line >> shift), kind, true);
                if out.is_hit() {
                    c.l1.hits += 1;
                } else {
                    c.l1.misses += 1;
                }
                if l.write || !out.is_hit() {
                    to_l2.push(l);
                }
            }
            for line in mem.scalar_lines.drain(..) {
                if self.state.scalar.access(LineAddr(line / SCALAR_LINE), LineKind::Read, true).is_hit() {
                    c.scalar.hits += 1;
                } else {
                    c.scalar.misses += 1;
                    to_l2.push(LineAccess { line: line & !(self.line_bytes - 1), write: false });
                }
            }
            if !to_l2.is_empty() {
                ctx.send(&self.l2, MemMsg::Lines { seq, lines: to_l2 });
            }
            // Barrier: every unfinished wave waits at it -> release them all.
            let group = &mut self.state.groups[g];
            let live = group.waves.iter().filter(|s| s.wave.status != WaveStatus::Ended).count();
            let at_barrier = group.waves.iter().filter(|s| s.wave.status == WaveStatus::Barrier).count();
            if live > 0 && at_barrier == live {
                // Only the waiting waves: the group's ended waves stay ended.
                for s in group.waves.iter_mut().filter(|s| s.wave.status == WaveStatus::Barrier) {
                    s.wave.status = WaveStatus::Running;
                }
                any_ready = true;
            }
            if live == 0 {
                let done = self.state.groups.remove(g);
                ctx.send(&self.cp, CuMsg::GroupDone { seq: done.launch.seq, first_slot: done.launch.first_slot });
                let room = SPARE_WAVES.saturating_sub(self.spare.len());
                self.spare.extend(done.waves.into_iter().take(room).map(|s| s.wave));
                continue;
            }
            g += 1;
        }
        self.mem = Some(mem);
        self.state.quanta.inc();
        if any_ready {
            let at = now + self.clock.cycles(self.quantum);
            self.arm(ctx, at);
        } else if next_wake != u64::MAX {
            let at = self.clock.cycles(next_wake);
            self.arm(ctx, at);
        }
    }

    fn on_response(&mut self, tag: u64, result: Result<Box<amdgpu_isa::exec::VmemRequest>, MemFault>, ctx: &mut Context<'_>) {
        let slot = (tag & 0xff) as u32;
        let seq = DispatchSeq(tag >> 8);
        let Some(g) = self.state.groups.iter().position(|g| g.launch.seq == seq && slot >= g.launch.first_slot && slot < g.launch.first_slot + g.launch.waves)
        else {
            return; // the group faulted meanwhile
        };
        let wi = (slot - self.state.groups[g].launch.first_slot) as usize;
        match result {
            Ok(req) => {
                let done = match self.state.groups[g].waves.get_mut(wi) {
                    Some(s) => s.wave.complete_request(req),
                    None => Ok(()),
                };
                if let Err(e) = done {
                    // A response that does not fit the waiting instruction is a model bug
                    // surfaced as a fault of this group, not a crash.
                    return self.fault_group(ctx, g, wi, e.to_string(), None);
                }
                if self.timing.is_some() {
                    return self.on_deferred_done(g, wi, ctx);
                }
                let now = ctx.now();
                self.arm(ctx, now + self.clock.period());
            }
            Err(f) => {
                let pc = self.state.groups[g].waves.get(wi).map_or(0, |s| s.wave.pc);
                let e = amdgpu_isa::exec::ExecFault::Memory { pc, addr: f.addr, kind: f.kind };
                self.fault_group(ctx, g, wi, e.to_string(), Some(f.addr));
            }
        }
    }

    fn flush(&mut self, seq: DispatchSeq, ctx: &mut Context<'_>) {
        let mut counters = DispatchCounters::default();
        if let Some((mut c, counts)) = self.state.counters.remove(&seq) {
            for (op, &n) in counts.iter().enumerate() {
                if n > 0 {
                    let class = amdgpu_isa::opcode_mnemonic(op).map_or(3, class_of);
                    c.classes[class] += n;
                }
            }
            counters = c;
        }
        ctx.send(&self.cp, CuMsg::Counters { seq, counters: Box::new(counters) });
    }
}

impl Component for ComputeUnit {
    fn init(&mut self, _ctx: &mut Context<'_>) {
        if let (Some(memory), Some(target)) = (self.shared.memory(), self.shared.target()) {
            let win = WindowedMemory::new(memory.view(), self.visibility.active_log(self.agent), false);
            self.mem = Some(CuMemory { win, target, line_bytes: self.line_bytes, lines: Vec::new(), scalar_lines: Vec::new() });
        }
    }

    fn startup(&mut self, ctx: &mut Context<'_>) {
        ctx.send(&self.cp, CuMsg::Hello(self.cap));
    }

    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match event.take(&self.cp) {
            Ok(CuMsg::Launch(l)) => return self.launch(*l, ctx),
            Ok(CuMsg::Flush { seq }) => return self.flush(seq, ctx),
            Ok(_) => return,
            Err(e) => e,
        };
        let event = match event.take(&self.l2) {
            Ok(MemMsg::Response { tag, result }) => return self.on_response(tag, result, ctx),
            Ok(MemMsg::Done { tag }) => return self.on_access_done(tag, ctx),
            Ok(_) => return,
            Err(e) => e,
        };
        if let Event::Timer { .. } = event {
            self.check_watchdog(ctx);
            if self.timing.is_some() {
                self.timed_run(ctx);
            } else {
                self.quantum(ctx);
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("instructions", &self.state.instructions);
        out.counter("quanta", &self.state.quanta);
        out.counter("deferred", &self.state.deferred);
        out.counter("faults", &self.state.faults);
        self.state.timed.stats(out);
    }

    fn save(&self) -> Result<Vec<u8>, StateError> {
        save_state(&self.state)
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), StateError> {
        self.state = load_state(state)?;
        Ok(())
    }
}

simdojo::register_component!(ComponentType {
    name: "amdgpu.cu",
    doc: "A compute unit: SIMDs with wave slots, registers and LDS allocated per the kernel descriptor by the \
          command processor, barriers, s_sleep, coherent accesses deferred to their home. Functional mode runs \
          waves in quanta of `quantum` instructions; timing mode issues one instruction per SIMD per cycle with \
          per-class issue cycles and timed memory (see amdgpu::components::cu).",
    params: CuParams::SPECS,
    validate: registry::validate_with::<CuParams>,
    estimate: registry::estimate_with::<CuParams>,
    ports: &[
        PortSpec { name: "cp", doc: "to the XCD's command processor", dir: PortDir::InOut, array: false, message: MessageKind::of::<CuMsg> },
        PortSpec { name: "l2", doc: "to the XCD's L2", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
    ],
    stats: &[
        StatSpec { name: "instructions", kind: StatKind::Counter, unit: "wave-instructions", doc: "wave-instructions executed" },
        StatSpec { name: "quanta", kind: StatKind::Counter, unit: "quanta", doc: "scheduling quanta run" },
        StatSpec { name: "deferred", kind: StatKind::Counter, unit: "instructions", doc: "memory instructions sent to the L2 or the coherent home" },
        StatSpec { name: "faults", kind: StatKind::Counter, unit: "groups", doc: "work-groups stopped by a fault" },
        StatSpec { name: "stall_waitcnt", kind: StatKind::Counter, unit: "wave-cycles", doc: "timing: cycles ready waves waited in s_waitcnt" },
        StatSpec { name: "stall_issue", kind: StatKind::Counter, unit: "wave-cycles", doc: "timing: cycles ready waves waited for their SIMD (another wave issued)" },
        StatSpec { name: "stall_deferred", kind: StatKind::Counter, unit: "wave-cycles", doc: "timing: cycles waves waited for a deferred (atomic, coherent) access" },
        StatSpec { name: "stall_barrier", kind: StatKind::Counter, unit: "wave-cycles", doc: "timing: cycles waves waited at s_barrier" },
        StatSpec { name: "mem_requests", kind: StatKind::Counter, unit: "instructions", doc: "timing: memory instructions answered by the L2" },
        StatSpec { name: "mem_latency_cycles", kind: StatKind::Counter, unit: "cycles", doc: "timing: sum of their latencies (average = this / mem_requests)" },
        StatSpec { name: "busy_valu", kind: StatKind::Counter, unit: "cycles", doc: "timing: cycles the SIMDs' vector ALUs were busy (summed over SIMDs)" },
        StatSpec { name: "busy_mfma", kind: StatKind::Counter, unit: "cycles", doc: "timing: cycles the SIMDs' matrix cores were busy (summed over SIMDs)" },
        StatSpec { name: "busy_vmem", kind: StatKind::Counter, unit: "cycles", doc: "timing: cycles the vector memory pipeline was busy" },
        StatSpec { name: "busy_lds", kind: StatKind::Counter, unit: "cycles", doc: "timing: cycles the LDS was busy" },
        StatSpec { name: "lds_conflict_cycles", kind: StatKind::Counter, unit: "cycles", doc: "timing: LDS cycles beyond the conflict-free minimum (bank conflicts)" },
        StatSpec { name: "stall_mshr", kind: StatKind::Counter, unit: "opportunities", doc: "timing: issue turns a vector memory instruction lost because every L1 MSHR was busy" },
    ],
    build: ComputeUnit::build,
});
