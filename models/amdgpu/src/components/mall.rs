//! `amdgpu.mall`: a slice of the memory-side cache (AMD Infinity Cache) on an IOD. In
//! functional mode it takes the L2s' line traffic (fills and write-backs) for the
//! addresses interleaved to it, keeps per-dispatch hit/miss counts, and passes its own
//! misses and dirty evictions to the HBM controller below. The replacement policy is
//! its `policy` parameter (lru, srrip, random, ideal).
//!
//! In timing mode the L2s send it `Access` messages (fetches, answered with `Done`, and
//! write-backs, not answered); it is a [`TimedLevel`]: hits leave after the channel's
//! bandwidth slot and `hit_latency`, misses take an MSHR and are fetched from the HBM,
//! whose `Done` arrives at the HBM model's completion time.


use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::{Bytes, ParamSet};
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::time::ClockDomain;
use simdojo::stats::{Counter, StatsSink};

use crate::gpu::ids::DispatchSeq;
use crate::components::l2::{delay_until, Fetches};
use crate::components::line_cache::{LevelOutput, Requester, TimedLevel};
use crate::gpu::params::Policy;
use crate::timing::cache::MAX_WAYS;
use crate::timing::latency::stages;
use crate::gpu::messages::MemMsg;
use crate::timing::Cycle;

#[derive(Serialize, Deserialize)]
struct MallState {
    level: TimedLevel,
    /// Timed fetches from the HBM.
    fetches: Fetches,
}

/// See the [module docs](self).
pub struct MemorySideCache {
    up: Vec<Port<MemMsg>>,
    down: Option<Port<MemMsg>>,
    soc: Option<Port<MemMsg>>,
    clock: simdojo::time::ClockDomain,
    state: MallState,
}

/// The parameters of `amdgpu.mall`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
#[params(check = MallParams::check, estimate = MallParams::estimate)]
pub struct MallParams {
    /// Replacement policy.
    #[param(default = Policy::Lru)]
    pub policy: Policy,
    /// Capacity of this slice.
    #[param(default = Bytes::mib(32), unit = "bytes", range = 1..)]
    pub size: Bytes,
    /// Slices the L2s interleave addresses over (8 on MI300X/MI355X); the tags index
    /// the slice-local address, so every set is used.
    #[param(default = 1, range = 1..)]
    pub slices: u64,
    /// The L2s' interleave granule over the slices (their `interleave`).
    #[param(default = Bytes::kib(4), unit = "bytes", power_of_two)]
    pub interleave: Bytes,
    /// Associativity.
    #[param(default = 16, unit = "ways", range = 1..=MAX_WAYS)]
    pub ways: u32,
    /// Line size.
    #[param(default = 128, unit = "bytes", power_of_two)]
    pub line_bytes: u64,
    /// Clock the timing parameters count (timing mode).
    #[param(default = ClockDomain::mhz(2100))]
    pub clock: ClockDomain,
    /// Timing mode: cycles of the slice pipeline for a hit
    /// (timing::latency::stages::MEMORY_SIDE_PIPE; the IOD crossing is the link latency).
    #[param(default = stages::MEMORY_SIDE_PIPE as u64, unit = "cycles")]
    pub hit_latency: u64,
    /// Timing mode: channels of this slice (MI300X: 128 channels over 8 slices).
    #[param(default = 16, range = 1..)]
    pub channels: u32,
    /// Timing mode: bytes per clock of one channel (timing::PartTiming
    /// memory_side.read_bytes_per_clock).
    #[param(default = 64, unit = "bytes per clock", range = 1..)]
    pub channel_bytes_per_clock: u64,
    /// Timing mode: distinct lines outstanding at the HBM (assumed).
    #[param(default = 256, unit = "lines", range = 1..)]
    pub mshrs: u32,
    /// Timing mode: requests merged into one outstanding line (assumed).
    #[param(default = 16, unit = "requests", range = 1..)]
    pub mshr_targets: u32,
}

crate::components::l2::cache_level_params!(MallParams);

fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
    let p: MallParams = ctx.typed()?;
    let level = p.level().timed(Some((p.interleave.get(), p.slices)))?;
    let up = ctx.port_array::<MemMsg>("up")?;
    let down = if ctx.is_connected("down") { Some(ctx.port::<MemMsg>("down")?) } else { None };
    let soc = if ctx.is_connected("soc") { Some(ctx.port::<MemMsg>("soc")?) } else { None };
    let state = MallState { level, fetches: Fetches::default() };
    Ok(Box::new(MemorySideCache { up, down, soc, clock: p.clock, state }))
}

impl MemorySideCache {
    fn now(&self, ctx: &Context<'_>) -> Cycle {
        Cycle(self.clock.to_cycles(ctx.now()))
    }

    /// Sends a timed level's answers up and its misses and write-backs to the HBM.
    fn timed_output(&mut self, seq: DispatchSeq, mut out: LevelOutput, ctx: &mut Context<'_>) {
        loop {
            for (who, at) in out.answers.drain(..) {
                if who.reply {
                    let extra = delay_until(&self.clock, ctx.now(), at);
                    ctx.send_after(&self.up[who.port], extra, MemMsg::Done { tag: who.tag });
                }
            }
            if out.below.is_empty() {
                return;
            }
            let Some(down) = &self.down else {
                // No HBM linked: an ideal backing store answers at once.
                let reads: Vec<u64> = out.below.iter().filter(|l| !l.write).map(|l| l.line).collect();
                let now = self.now(ctx);
                out = self.state.level.filled(now, &reads);
                continue;
            };
            self.state.fetches.send(ctx, down, seq, std::mem::take(&mut out.below));
            return;
        }
    }
}

impl Component for MemorySideCache {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match &self.soc {
            Some(soc) => match event.take(soc) {
                Ok(MemMsg::Flush { seq }) => {
                    let d = self.state.level.cache().flush(seq);
                    ctx.send(soc, MemMsg::Counters { seq, l2: d.counts, read_bytes: d.read_bytes, write_bytes: d.write_bytes });
                    return;
                }
                Ok(_) => return,
                Err(e) => e,
            },
            None => event,
        };
        if let Event::Message { port, .. } = &event {
            if let Some(i) = self.up.iter().position(|p| p.idx() == *port) {
                match event.take(&self.up[i]) {
                    Ok(MemMsg::Lines { seq, lines }) => {
                        let below = self.state.level.cache().apply(seq, &lines);
                        if let (Some(down), false) = (&self.down, below.is_empty()) {
                            ctx.send(down, MemMsg::Lines { seq, lines: below });
                        }
                    }
                    Ok(MemMsg::Access { tag, seq, lines, reply }) => {
                        let now = self.now(ctx);
                        let out = self.state.level.request(now, Requester { port: i, tag, reply }, seq, &lines);
                        self.timed_output(seq, out, ctx);
                    }
                    _ => {}
                }
            } else if let Some(down) = &self.down {
                if let Ok(MemMsg::Done { tag }) = event.take(down) {
                    if let Some((seq, lines)) = self.state.fetches.answered(tag) {
                        let now = self.now(ctx);
                        let out = self.state.level.filled(now, &lines);
                        self.timed_output(seq, out, ctx);
                    }
                }
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        let (hits, misses) = self.state.level.tags().totals();
        out.counter("hits", &Counter::from_count(hits));
        out.counter("misses", &Counter::from_count(misses));
        let t = self.state.level.stats();
        out.counter("timed_requests", &Counter::from_count(t.answered));
        out.counter("timed_latency_cycles", &Counter::from_count(t.latency_cycles));
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
    PortSpec { name: "up", doc: "from each XCD's L2", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "down", doc: "to the HBM controller", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "soc", doc: "from the SoC (per-dispatch statistics)", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
];

const STATS: &[StatSpec] = &[
    StatSpec { name: "hits", kind: StatKind::Counter, unit: "lines", doc: "line accesses that hit" },
    StatSpec { name: "misses", kind: StatKind::Counter, unit: "lines", doc: "line accesses that missed" },
    StatSpec { name: "timed_requests", kind: StatKind::Counter, unit: "requests", doc: "timing mode: requests answered" },
    StatSpec { name: "timed_latency_cycles", kind: StatKind::Counter, unit: "cycles", doc: "timing mode: sum of request latencies (arrival to answer)" },
];

simdojo::register_component!(ComponentType {
    name: "amdgpu.mall",
    doc: "A memory-side cache slice with the replacement `policy` (lru, srrip, random, ideal; see \
          amdgpu::components::mall).",
    params: MallParams::SPECS,
    validate: registry::validate_with::<MallParams>,
    estimate: registry::estimate_with::<MallParams>,
    ports: PORTS,
    stats: STATS,
    build,
});

// The policy was part of the type name before it became a parameter.
simdojo::register_former_type!("amdgpu.mall.lru", "amdgpu.mall", "policy = \"lru\"");
simdojo::register_former_type!("amdgpu.mall.srrip", "amdgpu.mall", "policy = \"srrip\"");
simdojo::register_former_type!("amdgpu.mall.ideal", "amdgpu.mall", "policy = \"ideal\"");

#[cfg(test)]
mod tests {
    use super::MallParams;
    use simdojo::params::{ParamSet, Params};

    #[test]
    fn timing_defaults_come_from_the_latency_table() {
        let p = MallParams::from_params(&Params::new()).unwrap();
        assert_eq!(p.hit_latency, u64::from(crate::timing::latency::stages::MEMORY_SIDE_PIPE));
        let slice = crate::timing::PartTiming::mi300x().memory_side.expect("MI300X has a memory-side cache");
        assert_eq!(p.channel_bytes_per_clock, u64::from(slice.read_bytes_per_clock));
    }
}
