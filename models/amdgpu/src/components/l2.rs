//! `amdgpu.l2`: an XCD's L2 (its replacement `policy` a parameter). It performs the deferred memory
//! instructions of its compute units in arrival order (atomics are performed at the L2
//! on CDNA), forwards system-coherent and device-scope ones to the SoC's coherent home
//! when one is linked, and keeps hit/miss statistics of the lines its compute units
//! touched, per dispatch.
//!
//! Functional mode sends it `Lines` (no time). Timing mode sends it one `Access` per
//! memory instruction: hits are answered after the channel's bandwidth slot and
//! `hit_latency`; misses take an MSHR and go to the level below (memory-side cache slice
//! or HBM, address-interleaved over `down`) as one `Access` per port, and the answer
//! leaves when the last fill is back ([`TimedLevel`]). Both kinds share one tag model,
//! so statistics mean the same in both modes. Lines of a peer GPU's memory
//! ([`crate::gpu::remote`]) go to the `xgmi` port instead of `down`, when it is linked.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::{Bytes, ParamChoice, ParamError, ParamSet};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};

use crate::gpu::ids::DispatchSeq;
use crate::gpu::visibility::{AgentId, Visibility, WindowedMemory};
use crate::gpu::messages::MemMsg;
use crate::gpu::shared::GpuShared;
use crate::components::line_cache::{LevelOutput, LevelTiming, LineCache, Requester, TimedLevel};
use crate::gpu::messages::LineAccess;
use crate::gpu::params::Policy;
use crate::timing::cache::{CacheConfig, WritePolicy, MAX_WAYS};
use crate::timing::latency::stages;
use crate::timing::{ConfigError, Cycle};
use simdojo::time::{ClockDomain, Tick};

#[derive(Serialize, Deserialize)]
struct L2State {
    level: TimedLevel,
    /// Timed fetches below.
    fetches: Fetches,
    /// Forwarded requests: home tag -> (CU port index, CU tag).
    forwarded: BTreeMap<u64, (usize, u64)>,
    next_tag: u64,
    performed: Counter,
    forwards: Counter,
}

/// See the [module docs](self).
pub struct L2 {
    cu: Vec<Port<MemMsg>>,
    home: Option<Port<MemMsg>>,
    down: Vec<Port<MemMsg>>,
    /// To the GPU's XGMI block: lines of peer GPUs' memory (optional).
    xgmi: Option<Port<MemMsg>>,
    interleave: u64,
    clock: ClockDomain,
    shared: Arc<GpuShared>,
    /// GPU memory, windowed: the L2 is the home of gfx90a's deferred accesses.
    view: Option<WindowedMemory>,
    visibility: Arc<Visibility>,
    agent: AgentId,
    state: L2State,
}

/// The parameters of `amdgpu.l2`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
#[params(check = L2Params::check, estimate = L2Params::estimate)]
pub struct L2Params {
    /// Name of the GPU (the SoC's `name`).
    #[param(default = "gpu")]
    pub gpu: String,
    /// Replacement policy.
    #[param(default = Policy::Lru)]
    pub policy: Policy,
    /// Capacity.
    #[param(default = Bytes::mib(4), unit = "bytes", range = 1..)]
    pub size: Bytes,
    /// Associativity.
    #[param(default = 16, unit = "ways", range = 1..=MAX_WAYS)]
    pub ways: u32,
    /// Line size.
    #[param(default = 128, unit = "bytes", power_of_two)]
    pub line_bytes: u64,
    /// Address interleave over the `down` ports.
    #[param(default = Bytes::kib(4), unit = "bytes", power_of_two)]
    pub interleave: Bytes,
    /// Clock the timing parameters count (timing mode).
    #[param(default = ClockDomain::mhz(2100))]
    pub clock: ClockDomain,
    /// Timing mode: cycles of the L2 pipeline for a hit (timing::latency::stages::L2_PIPE;
    /// the crossbar is the link latency).
    #[param(default = stages::L2_PIPE as u64, unit = "cycles")]
    pub hit_latency: u64,
    /// Timing mode: channels (16 per XCD on CDNA 3/4, 32 on MI210).
    #[param(default = 16, range = 1..)]
    pub channels: u32,
    /// Timing mode: bytes per clock of one channel (timing::PartTiming
    /// l2.read_bytes_per_clock).
    #[param(default = 128, unit = "bytes per clock", range = 1..)]
    pub channel_bytes_per_clock: u64,
    /// Timing mode: distinct lines outstanding below (assumed: 16 per channel).
    #[param(default = 256, unit = "lines", range = 1..)]
    pub mshrs: u32,
    /// Timing mode: requests merged into one outstanding line (assumed).
    #[param(default = 16, unit = "requests", range = 1..)]
    pub mshr_targets: u32,
}

/// Gives a cache level's parameter struct (the L2's, a memory-side cache slice's: fields
/// `size`, `line_bytes`, `ways`, `policy`, `hit_latency`, `channels`,
/// `channel_bytes_per_clock`, `mshrs`, `mshr_targets`) its [`Level`] and the `check`
/// and `estimate` its derive names.
macro_rules! cache_level_params {
    ($ty:ty) => {
        impl $ty {
            fn level(&self) -> $crate::components::l2::Level {
                $crate::components::l2::Level {
                    size: self.size.get(),
                    line_bytes: self.line_bytes,
                    ways: self.ways,
                    policy: self.policy,
                    timing: $crate::components::line_cache::LevelTiming {
                        hit_latency: self.hit_latency,
                        channels: self.channels,
                        channel_bytes_per_clock: self.channel_bytes_per_clock,
                        mshrs: self.mshrs,
                        mshr_targets: self.mshr_targets,
                    },
                }
            }
            fn check(&self) -> Result<(), simdojo::params::ParamError> {
                self.level().check()
            }
            fn estimate(&self) -> u64 {
                self.level().host_bytes()
            }
        }
    };
}
pub(crate) use cache_level_params;

cache_level_params!(L2Params);

fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    let p: L2Params = ctx.typed()?;
    let level = p.level().timed(None)?;
    let cu = ctx.port_array::<MemMsg>("cu")?;
    let home = if ctx.is_connected("home") { Some(ctx.port::<MemMsg>("home")?) } else { None };
    let down = ctx.port_array::<MemMsg>("down")?;
    let xgmi = if ctx.is_connected("xgmi") { Some(ctx.port::<MemMsg>("xgmi")?) } else { None };
    let shared = ctx.resource(&p.gpu, GpuShared::default);
    let visibility = ctx.resource(&Visibility::resource_name(&p.gpu), Visibility::default);
    Ok(Box::new(L2 {
        cu,
        home,
        down,
        xgmi,
        interleave: p.interleave.get(),
        clock: p.clock,
        shared,
        view: None,
        visibility,
        agent: AgentId(ctx.id().index() as u32),
        state: L2State { level, fetches: Fetches::default(), forwarded: BTreeMap::new(), next_tag: 0, performed: Counter::default(), forwards: Counter::default() },
    }))
}

/// A cache level's shape, policy and timing, from its component's typed parameters
/// (the L2's or a memory-side cache slice's).
pub(crate) struct Level {
    /// Capacity in bytes.
    pub(crate) size: u64,
    /// Line size in bytes.
    pub(crate) line_bytes: u64,
    /// Associativity.
    pub(crate) ways: u32,
    /// Replacement policy.
    pub(crate) policy: Policy,
    /// Timing-mode parameters.
    pub(crate) timing: LevelTiming,
}

impl Level {
    /// The tag model's configuration.
    fn config(&self) -> CacheConfig {
        CacheConfig {
            size_bytes: self.size,
            line_bytes: self.line_bytes,
            ways: self.ways,
            policy: self.policy.replacement(),
            write_policy: WritePolicy::WriteBack,
        }
    }

    /// The checks the tag model makes when it is built, without building it: the
    /// error names the parameter to change (`size`, `ways` or `line_bytes`).
    pub(crate) fn check(&self) -> Result<(), ParamError> {
        self.config().sets().map(|_| ()).map_err(|e| {
            let name = match e {
                ConfigError::Zero { field: "ways", .. } | ConfigError::TooLarge { field: "ways", .. } => "ways",
                ConfigError::Zero { field: "line_bytes", .. } | ConfigError::NotPowerOfTwo { .. } => "line_bytes",
                _ => "size",
            };
            ParamError::new(name, format!("gives no valid cache shape: {e}"))
        })
    }

    /// Host memory the level's tags take when every line is filled (10 bytes a line
    /// and a pointer per group of 16 sets; none under the ideal policy), its MSHRs and
    /// channels.
    pub(crate) fn host_bytes(&self) -> u64 {
        let lines = self.size / self.line_bytes.max(1);
        let tags = if self.policy == Policy::Ideal { 0 } else { lines.saturating_mul(10) + lines / u64::from(self.ways.max(1)) / 16 * 8 };
        let mshrs = u64::from(self.timing.mshrs) * (64 + 16 * u64::from(self.timing.mshr_targets));
        tags.saturating_add(mshrs).saturating_add(u64::from(self.timing.channels) * 64)
    }

    /// The level (its tags and its timing). `slicing`: (interleave granule, slices)
    /// when the level is one slice of an address-interleaved cache (see
    /// [`crate::components::line_cache::Slicing`]).
    pub(crate) fn timed(&self, slicing: Option<(u64, u64)>) -> Result<TimedLevel, BuildError> {
        let mut cache = LineCache::new(self.size, self.line_bytes, self.ways, self.policy.name())
            .map_err(|e| BuildError::Invalid(e.to_string()))?;
        if let Some((granule, slices)) = slicing {
            cache = cache.sliced(granule, slices);
        }
        TimedLevel::new(cache, &self.timing).map_err(|e| BuildError::Invalid(e.to_string()))
    }
}

/// Ticks from `now` until cycle `at` of `clock` (zero if it has passed).
pub(crate) fn delay_until(clock: &ClockDomain, now: Tick, at: Cycle) -> Tick {
    Tick(clock.cycles(at.get()).0.saturating_sub(now.0))
}

/// The fetches a timed level (the L2 or a memory-side cache slice) has outstanding
/// below: the dispatch and lines of each, by the tag its answer brings back.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Fetches {
    pending: BTreeMap<u64, (DispatchSeq, Vec<u64>)>,
    next: u64,
}

impl Fetches {
    /// Sends one port's share of a timed level's misses and write-backs: write-backs
    /// unanswered, fetches as one answered access.
    pub(crate) fn send(&mut self, ctx: &mut Context<'_>, port: &Port<MemMsg>, seq: DispatchSeq, lines: Vec<LineAccess>) {
        let (reads, writes): (Vec<LineAccess>, Vec<LineAccess>) = lines.into_iter().partition(|l| !l.write);
        if !writes.is_empty() {
            ctx.send(port, MemMsg::Access { tag: 0, seq, lines: writes, reply: false });
        }
        if !reads.is_empty() {
            let tag = self.next;
            self.next += 1;
            self.pending.insert(tag, (seq, reads.iter().map(|l| l.line).collect()));
            ctx.send(port, MemMsg::Access { tag, seq, lines: reads, reply: true });
        }
    }

    /// The dispatch and lines of fetch `tag`, now answered (`None` for a tag it did not
    /// send).
    pub(crate) fn answered(&mut self, tag: u64) -> Option<(DispatchSeq, Vec<u64>)> {
        self.pending.remove(&tag)
    }
}

/// Sends `lines` to the ports below, address-interleaved `interleave` bytes at a time.
pub(crate) fn send_interleaved(ctx: &mut Context<'_>, down: &[Port<MemMsg>], interleave: u64, seq: DispatchSeq, lines: Vec<LineAccess>) {
    if down.is_empty() || lines.is_empty() {
        return;
    }
    let mut per: Vec<Vec<LineAccess>> = vec![Vec::new(); down.len()];
    for l in lines {
        per[((l.line / interleave) % down.len() as u64) as usize].push(l);
    }
    for (port, lines) in down.iter().zip(per) {
        if !lines.is_empty() {
            ctx.send(port, MemMsg::Lines { seq, lines });
        }
    }
}

impl L2 {
    /// Takes the lines of peer GPUs' memory out of `lines` when an XGMI block is linked
    /// (they leave through it, not to this GPU's memory).
    fn take_remote(&self, lines: &mut Vec<LineAccess>) -> Vec<LineAccess> {
        let remote = self.shared.remote();
        if self.xgmi.is_none() || remote.is_empty() {
            return Vec::new();
        }
        let (peer, local): (Vec<LineAccess>, Vec<LineAccess>) = lines.drain(..).partition(|l| remote.home_of(l.line).is_some());
        *lines = local;
        peer
    }

    fn on_cu(&mut self, c: usize, msg: MemMsg, ctx: &mut Context<'_>) {
        match msg {
            MemMsg::Request { tag, seq, req, system } => {
                if system {
                    if let Some(home) = &self.home {
                        let t = self.state.next_tag;
                        self.state.next_tag += 1;
                        self.state.forwarded.insert(t, (c, tag));
                        self.state.forwards.inc();
                        ctx.send(home, MemMsg::Request { tag: t, seq, req, system });
                        return;
                    }
                }
                self.state.performed.inc();
                if let Some(v) = self.view.as_mut() {
                    v.set_now(ctx.now());
                }
                let result = crate::gpu::memory::perform(self.view.as_mut(), req);
                ctx.send(&self.cu[c], MemMsg::Response { tag, result });
            }
            MemMsg::Lines { seq, lines } => {
                let mut below = self.state.level.cache().apply(seq, &lines);
                let peer = self.take_remote(&mut below);
                if let (Some(xgmi), false) = (&self.xgmi, peer.is_empty()) {
                    ctx.send(xgmi, MemMsg::Lines { seq, lines: peer });
                }
                send_interleaved(ctx, &self.down, self.interleave, seq, below);
            }
            MemMsg::Access { tag, seq, lines, reply } => {
                let now = Cycle(self.clock.to_cycles(ctx.now()));
                let out = self.state.level.request(now, Requester { port: c, tag, reply }, seq, &lines);
                self.timed_output(seq, out, ctx);
            }
            _ => {}
        }
    }

    /// Sends a timed level's answers up and its misses and write-backs down.
    fn timed_output(&mut self, seq: DispatchSeq, mut out: LevelOutput, ctx: &mut Context<'_>) {
        loop {
            for (who, at) in out.answers.drain(..) {
                if who.reply {
                    let extra = delay_until(&self.clock, ctx.now(), at);
                    ctx.send_after(&self.cu[who.port], extra, MemMsg::Done { tag: who.tag });
                }
            }
            let peer = self.take_remote(&mut out.below);
            if let (Some(xgmi), false) = (self.xgmi, peer.is_empty()) {
                self.state.fetches.send(ctx, &xgmi, seq, peer);
            }
            if out.below.is_empty() {
                return;
            }
            if self.down.is_empty() {
                // Nothing below: memory answers at once (an ideal backing store).
                let reads: Vec<u64> = out.below.iter().filter(|l| !l.write).map(|l| l.line).collect();
                let now = Cycle(self.clock.to_cycles(ctx.now()));
                out = self.state.level.filled(now, &reads);
                continue;
            }
            let n = self.down.len() as u64;
            let mut per: Vec<Vec<LineAccess>> = vec![Vec::new(); self.down.len()];
            for l in out.below.drain(..) {
                per[((l.line / self.interleave) % n) as usize].push(l);
            }
            let down = self.down.clone();
            for (port, lines) in down.iter().zip(per) {
                self.state.fetches.send(ctx, port, seq, lines);
            }
            return;
        }
    }

    /// A fetch below was answered.
    fn on_fetched(&mut self, tag: u64, ctx: &mut Context<'_>) {
        let Some((seq, lines)) = self.state.fetches.answered(tag) else { return };
        let now = Cycle(self.clock.to_cycles(ctx.now()));
        let out = self.state.level.filled(now, &lines);
        // Misses a freed MSHR lets go are counted below under the fill's dispatch (they
        // almost always belong to the same one).
        self.timed_output(seq, out, ctx);
    }
}

impl Component for L2 {
    fn init(&mut self, _ctx: &mut Context<'_>) {
        self.view = self.shared.memory().map(|m| WindowedMemory::new(m.view(), self.visibility.active_log(self.agent), true));
    }

    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match &self.home {
            Some(home) => match event.take(home) {
                Ok(MemMsg::Response { tag, result }) => {
                    if let Some((c, cu_tag)) = self.state.forwarded.remove(&tag) {
                        ctx.send(&self.cu[c], MemMsg::Response { tag: cu_tag, result });
                    }
                    return;
                }
                Ok(MemMsg::Flush { seq }) => {
                    let d = self.state.level.cache().flush(seq);
                    ctx.send(home, MemMsg::Counters { seq, l2: d.counts, read_bytes: d.read_bytes, write_bytes: d.write_bytes });
                    return;
                }
                Ok(_) => return,
                Err(e) => e,
            },
            None => event,
        };
        if let Event::Message { port, .. } = &event {
            if let Some(c) = self.cu.iter().position(|p| p.idx() == *port) {
                if let Ok(msg) = event.take(&self.cu[c]) {
                    self.on_cu(c, msg, ctx);
                }
            } else if let Some(d) = self.down.iter().position(|p| p.idx() == *port) {
                if let Ok(MemMsg::Done { tag }) = event.take(&self.down[d]) {
                    self.on_fetched(tag, ctx);
                }
            } else if let Some(xgmi) = self.xgmi.as_ref().filter(|p| p.idx() == *port) {
                if let Ok(MemMsg::Done { tag }) = event.take(xgmi) {
                    self.on_fetched(tag, ctx);
                }
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("performed", &self.state.performed);
        out.counter("forwarded", &self.state.forwards);
        let (hits, misses) = self.state.level.tags().totals();
        out.counter("hits", &Counter::from_count(hits));
        out.counter("misses", &Counter::from_count(misses));
        let t = self.state.level.stats();
        out.counter("timed_requests", &Counter::from_count(t.answered));
        out.counter("timed_latency_cycles", &Counter::from_count(t.latency_cycles));
        out.counter("mshr_merges", &Counter::from_count(t.merged));
        out.counter("mshr_stalls", &Counter::from_count(t.mshr_stalls));
    }

    fn save(&self) -> Result<Vec<u8>, StateError> {
        save_state(&self.state)
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), StateError> {
        self.state = load_state(state)?;
        Ok(())
    }
}

const PORTS: &[PortSpec] = &[
    PortSpec { name: "cu", doc: "from each compute unit of the XCD", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "home", doc: "to the SoC's coherent home (optional)", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "down", doc: "to the memory-side cache slices or HBM, address-interleaved", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "xgmi", doc: "to the GPU's XGMI block: lines of peer GPUs' memory (optional)", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
];

const STATS: &[StatSpec] = &[
    StatSpec { name: "performed", kind: StatKind::Counter, unit: "instructions", doc: "deferred memory instructions performed here" },
    StatSpec { name: "forwarded", kind: StatKind::Counter, unit: "instructions", doc: "deferred memory instructions sent to the coherent home" },
    StatSpec { name: "hits", kind: StatKind::Counter, unit: "lines", doc: "line accesses that hit" },
    StatSpec { name: "misses", kind: StatKind::Counter, unit: "lines", doc: "line accesses that missed" },
    StatSpec { name: "timed_requests", kind: StatKind::Counter, unit: "requests", doc: "timing mode: requests answered" },
    StatSpec { name: "timed_latency_cycles", kind: StatKind::Counter, unit: "cycles", doc: "timing mode: sum of request latencies (arrival to answer)" },
    StatSpec { name: "mshr_merges", kind: StatKind::Counter, unit: "lines", doc: "timing mode: misses merged into an outstanding fill" },
    StatSpec { name: "mshr_stalls", kind: StatKind::Counter, unit: "lines", doc: "timing mode: misses held back while every MSHR was busy" },
];

simdojo::register_component!(ComponentType {
    name: "amdgpu.l2",
    doc: "An XCD's L2 with the replacement `policy` (lru, srrip, random, ideal; see the module docs of \
          amdgpu::components::l2).",
    params: L2Params::SPECS,
    validate: registry::validate_with::<L2Params>,
    estimate: registry::estimate_with::<L2Params>,
    ports: PORTS,
    stats: STATS,
    build,
});

// The policy was part of the type name before it became a parameter.
simdojo::register_former_type!("amdgpu.l2.lru", "amdgpu.l2", "policy = \"lru\"");
simdojo::register_former_type!("amdgpu.l2.srrip", "amdgpu.l2", "policy = \"srrip\"");
simdojo::register_former_type!("amdgpu.l2.ideal", "amdgpu.l2", "policy = \"ideal\"");

#[cfg(test)]
mod tests {
    use super::L2Params;
    use simdojo::params::{ParamSet, Params};

    #[test]
    fn timing_defaults_come_from_the_latency_table() {
        let p = L2Params::from_params(&Params::new()).unwrap();
        assert_eq!(p.hit_latency, u64::from(crate::timing::latency::stages::L2_PIPE));
        let l2 = crate::timing::PartTiming::mi300x().l2;
        assert_eq!(p.channel_bytes_per_clock, u64::from(l2.read_bytes_per_clock));
    }
}
