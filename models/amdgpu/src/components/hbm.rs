//! `amdgpu.hbm`: the GPU's HBM controllers (all stacks, channels, pseudo-channels and
//! banks of one part, [`crate::timing::HbmModel`]). In functional mode it receives the
//! line traffic that left the last cache level and keeps byte, row-hit and
//! per-dispatch counts. In timing mode it receives `Access` messages and answers each
//! with `Done` at the model's completion cycle of its last line (bandwidth per
//! pseudo-channel, banks, open rows), and answers a dispatch's statistics flush only when
//! the dispatch's last transfer (write-backs included) has moved. Either way it reports
//! the bytes it moves, and its peak bandwidth, to the GPU's clock
//! ([`crate::gpu::clock::GpuClock::memory_moved`]) for the driver's memory-activity figures. The part's geometry can be shrunk per topology
//! (`stacks`, `channels_per_stack`, `memory_clock`) for small test systems.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::{ParamError, ParamSet};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::time::ClockDomain;
use simdojo::stats::{Counter, StatsSink};

use crate::gpu::ids::DispatchSeq;
use crate::gpu::messages::MemMsg;
use crate::gpu::shared::GpuShared;
use crate::gpu::stats::CacheCounts;
use crate::timing::latency::stages;
use crate::timing::{hbm, ByteAddr, ConfigError, Cycle, HbmConfig, HbmModel, Part};

#[derive(Serialize, Deserialize)]
struct HbmState {
    model: HbmModel,
    per_dispatch: BTreeMap<DispatchSeq, (u64, u64)>,
    /// Timing mode: the cycle the last timed transfer of each dispatch completes.
    #[serde(default)]
    last_done: BTreeMap<DispatchSeq, Cycle>,
}

/// See the [module docs](self).
pub struct Hbm {
    shared: Arc<GpuShared>,
    up: Vec<Port<MemMsg>>,
    soc: Option<Port<MemMsg>>,
    line_bytes: u64,
    clock: simdojo::time::ClockDomain,
    /// Cycles of the controller's queues, scheduler and PHY, added to every timed access.
    controller_latency: u64,
    state: HbmState,
}

/// The parameters of `amdgpu.hbm`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
#[params(check = HbmParams::check, estimate = HbmParams::estimate)]
pub struct HbmParams {
    /// The part whose HBM this is: mi210 (HBM2E), mi300x (HBM3) or mi355x (HBM3E).
    #[param(default = Part::Mi300x)]
    pub part: Part,
    /// Name of the GPU (the SoC's `name`).
    #[param(default = "gpu")]
    pub gpu: String,
    /// Bytes per line transfer.
    #[param(default = 128, unit = "bytes", range = 1..=4096, power_of_two)]
    pub line_bytes: u64,
    /// Engine clock (the model's caller clock).
    #[param(default = ClockDomain::mhz(2100))]
    pub clock: ClockDomain,
    /// HBM stacks (0: the part's, 4 on MI210, 8 on MI300X/MI355X; a power of two).
    #[param(default = 0)]
    pub stacks: u32,
    /// Channels per stack (0: the part's, 8 on HBM2E, 16 on HBM3/3E; a power of two).
    #[param(default = 0)]
    pub channels_per_stack: u32,
    /// Timing mode: cycles (of `clock`) of the controller's queues, scheduler and PHY,
    /// both ways, on top of the DRAM timings (timing::latency::stages::MEMORY_CONTROLLER).
    #[param(default = stages::MEMORY_CONTROLLER as u64, unit = "cycles")]
    pub controller_latency: u64,
    /// Memory clock = data rate / 2 (0: the part's, 1600/2600/4000).
    #[param(default = 0, unit = "MHz")]
    pub memory_clock_mhz: u32,
}

impl HbmParams {
    /// The HBM configuration of the part with these parameters' overrides (`stacks`,
    /// `channels_per_stack`, `memory_clock_mhz`; zero keeps the part's value) and the
    /// caller clock set to `clock`.
    fn config(&self) -> HbmConfig {
        let mut config = HbmConfig::for_part(self.part);
        if self.stacks != 0 {
            config.geometry.stacks = self.stacks;
        }
        if self.channels_per_stack != 0 {
            config.geometry.channels_per_stack = self.channels_per_stack;
        }
        if self.memory_clock_mhz != 0 {
            config.memory_clock_mhz = self.memory_clock_mhz;
        }
        config.caller_clock_mhz = (self.clock.hz() / 1e6).round() as u32;
        config
    }

    /// The model's own checks, without building it; the error names the parameter.
    fn check(&self) -> Result<(), ParamError> {
        hbm::validate(&self.config()).map_err(|e| {
            let field = match &e {
                ConfigError::Zero { field, .. } | ConfigError::NotPowerOfTwo { field, .. } | ConfigError::TooLarge { field, .. } => *field,
                _ => "",
            };
            let name = match field {
                "geometry.stacks" => "stacks",
                "geometry.channels_per_stack" => "channels_per_stack",
                "memory_clock_mhz" => "memory_clock_mhz",
                "caller_clock_mhz" => "clock",
                _ => "part",
            };
            ParamError::new(name, format!("gives no valid HBM configuration: {e}"))
        })
    }

    fn estimate(&self) -> u64 {
        hbm::model_bytes(&self.config())
    }
}

impl Hbm {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        let p: HbmParams = ctx.typed()?;
        let clock = p.clock;
        let config = p.config();
        let model = HbmModel::new(&config).map_err(|e| BuildError::Invalid(e.to_string()))?;
        let line_bytes = p.line_bytes;
        let shared = ctx.resource(&p.gpu, GpuShared::default);
        shared.clock().set_memory_peak(config.peak_bytes_per_second() as u64);
        let up = ctx.port_array::<MemMsg>("up")?;
        let soc = if ctx.is_connected("soc") { Some(ctx.port::<MemMsg>("soc")?) } else { None };
        let controller_latency = p.controller_latency;
        Ok(Box::new(Hbm { shared, up, soc, line_bytes, clock, controller_latency, state: HbmState { model, per_dispatch: BTreeMap::new(), last_done: BTreeMap::new() } }))
    }

    /// A timed access: every line goes through the model; the answer leaves when the
    /// last one has moved.
    fn access(&mut self, port: usize, tag: u64, seq: DispatchSeq, lines: &[crate::gpu::messages::LineAccess], reply: bool, ctx: &mut Context<'_>) {
        let now = Cycle(self.clock.to_cycles(ctx.now()));
        let d = self.state.per_dispatch.entry(seq).or_default();
        let mut done = now;
        for l in lines {
            // A line is far below the model's size limit (1 MiB), so this cannot fail.
            if let Ok(at) = self.state.model.access(now, ByteAddr(l.line), self.line_bytes, l.write) {
                done = done.max(at);
            }
            if l.write {
                d.1 += self.line_bytes;
            } else {
                d.0 += self.line_bytes;
            }
        }
        self.shared.clock().memory_moved(ctx.now(), lines.len() as u64 * self.line_bytes);
        let done = Cycle(done.get() + self.controller_latency);
        let last = self.state.last_done.entry(seq).or_insert(done);
        *last = (*last).max(done);
        if reply {
            let extra = crate::components::l2::delay_until(&self.clock, ctx.now(), done);
            ctx.send_after(&self.up[port], extra, MemMsg::Done { tag });
        }
    }
}

impl Component for Hbm {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match &self.soc {
            Some(soc) => match event.take(soc) {
                Ok(MemMsg::Flush { seq }) => {
                    // A dispatch's counters leave once its last timed transfer (write-backs
                    // included) has moved, so a kernel's time covers its memory traffic.
                    let (r, w) = self.state.per_dispatch.remove(&seq).unwrap_or_default();
                    let extra = match self.state.last_done.remove(&seq) {
                        Some(done) => crate::components::l2::delay_until(&self.clock, ctx.now(), done),
                        None => simdojo::time::Tick(0),
                    };
                    ctx.send_after(soc, extra, MemMsg::Counters { seq, l2: CacheCounts::default(), read_bytes: r, write_bytes: w });
                    return;
                }
                Ok(_) => return,
                Err(e) => e,
            },
            None => event,
        };
        if let Event::Message { port, .. } = &event {
            if let Some(i) = self.up.iter().position(|p| p.idx() == *port) {
                let msg = event.take(&self.up[i]);
                if let Ok(MemMsg::Access { tag, seq, lines, reply }) = msg {
                    self.access(i, tag, seq, &lines, reply, ctx);
                } else if let Ok(MemMsg::Lines { seq, lines }) = msg {
                    self.shared.clock().memory_moved(ctx.now(), lines.len() as u64 * self.line_bytes);
                    let now = Cycle(self.clock.to_cycles(ctx.now()));
                    let d = self.state.per_dispatch.entry(seq).or_default();
                    for l in lines {
                        // A line-sized access is far below the model's size limit (1 MiB):
                        // it cannot fail, and functional mode does not use its time.
                        let _ = self.state.model.access(now, ByteAddr(l.line), self.line_bytes, l.write);
                        if l.write {
                            d.1 += self.line_bytes;
                        } else {
                            d.0 += self.line_bytes;
                        }
                    }
                }
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        let s = self.state.model.stats();
        out.counter("bytes_read", &Counter::from_count(s.bytes_read()));
        out.counter("bytes_written", &Counter::from_count(s.bytes_written()));
        out.counter("row_hits", &Counter::from_count(s.row_hits));
        out.counter("row_misses", &Counter::from_count(s.row_misses));
        out.counter("row_conflicts", &Counter::from_count(s.row_conflicts));
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
    name: "amdgpu.hbm",
    doc: "The HBM controllers of one GPU (stacks, channels, pseudo-channels, banks; open-row model) with the part's defaults.",
    params: HbmParams::SPECS,
    validate: registry::validate_with::<HbmParams>,
    estimate: registry::estimate_with::<HbmParams>,
    ports: &[
        PortSpec { name: "up", doc: "from the memory-side cache slices or L2s", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
        PortSpec { name: "soc", doc: "from the SoC (per-dispatch statistics)", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
    ],
    stats: &[
        StatSpec { name: "bytes_read", kind: StatKind::Counter, unit: "bytes", doc: "bytes read" },
        StatSpec { name: "bytes_written", kind: StatKind::Counter, unit: "bytes", doc: "bytes written" },
        StatSpec { name: "row_hits", kind: StatKind::Counter, unit: "accesses", doc: "accesses that found their row open" },
        StatSpec { name: "row_misses", kind: StatKind::Counter, unit: "accesses", doc: "accesses to a precharged bank" },
        StatSpec { name: "row_conflicts", kind: StatKind::Counter, unit: "accesses", doc: "accesses that found another row open" },
    ],
    build: Hbm::build,
});
