//! `amdgpu.mall.*`: a slice of the memory-side cache (AMD Infinity Cache) on an IOD. In
//! functional mode it takes the L2s' line traffic (fills and write-backs) for the
//! addresses interleaved to it, keeps per-dispatch hit/miss counts, and passes its own
//! misses and dirty evictions to the HBM controller below. The replacement policy is
//! the type's: `amdgpu.mall.lru`, `amdgpu.mall.srrip`, `amdgpu.mall.ideal`.
//!
//! In timing mode the L2s send it `Access` messages (fetches, answered with `Done`, and
//! write-backs, not answered); it is a [`TimedLevel`]: hits leave after the channel's
//! bandwidth slot and `hit_latency`, misses take an MSHR and are fetched from the HBM,
//! whose `Done` arrives at the HBM model's completion time.


use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::ParamKind;
use simdojo::registry::{ComponentType, MessageKind, ParamSpec, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};

use crate::gpu::ids::DispatchSeq;
use crate::components::l2::{delay_until, timed_level, Fetches};
use crate::components::line_cache::{LevelOutput, Requester, TimedLevel};
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

fn build_with(ctx: &mut BuildContext<'_>, policy: &str) -> Result<Box<dyn Component>, BuildError> {
    let p = ctx.params().clone();
    let level = timed_level(&p, policy, Some((p.bytes("interleave")?, p.uint("slices")?)))?;
    let up = ctx.port_array::<MemMsg>("up")?;
    let down = if ctx.is_connected("down") { Some(ctx.port::<MemMsg>("down")?) } else { None };
    let soc = if ctx.is_connected("soc") { Some(ctx.port::<MemMsg>("soc")?) } else { None };
    let state = MallState { level, fetches: Fetches::default() };
    Ok(Box::new(MemorySideCache { up, down, soc, clock: p.clock("clock")?, state }))
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

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "size", kind: ParamKind::Bytes, default: Some("\"32MiB\""), doc: "capacity of this slice" },
    ParamSpec {
        name: "slices",
        kind: ParamKind::UInt,
        default: Some("1"),
        doc: "slices the L2s interleave addresses over (8 on MI300X/MI355X); the tags index the slice-local address, so every set is used",
    },
    ParamSpec { name: "interleave", kind: ParamKind::Bytes, default: Some("\"4KiB\""), doc: "the L2s' interleave granule over the slices (their `interleave`)" },
    ParamSpec { name: "ways", kind: ParamKind::UInt, default: Some("16"), doc: "associativity" },
    ParamSpec { name: "line_bytes", kind: ParamKind::UInt, default: Some("128"), doc: "line size" },
    ParamSpec { name: "clock", kind: ParamKind::Frequency, default: Some("\"2100MHz\""), doc: "clock the timing parameters count (timing mode)" },
    ParamSpec {
        name: "hit_latency",
        kind: ParamKind::UInt,
        default: Some("48"),
        doc: "timing mode: cycles of the slice pipeline for a hit (timing::latency::stages::MEMORY_SIDE_PIPE; the IOD crossing is the link latency)",
    },
    ParamSpec { name: "channels", kind: ParamKind::UInt, default: Some("16"), doc: "timing mode: channels of this slice (MI300X: 128 channels over 8 slices)" },
    ParamSpec {
        name: "channel_bytes_per_clock",
        kind: ParamKind::UInt,
        default: Some("64"),
        doc: "timing mode: bytes per clock of one channel (timing::PartTiming memory_side.read_bytes_per_clock)",
    },
    ParamSpec { name: "mshrs", kind: ParamKind::UInt, default: Some("256"), doc: "timing mode: distinct lines outstanding at the HBM (assumed)" },
    ParamSpec { name: "mshr_targets", kind: ParamKind::UInt, default: Some("16"), doc: "timing mode: requests merged into one outstanding line (assumed)" },
];

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
    name: "amdgpu.mall.lru",
    doc: "A memory-side cache slice with LRU replacement (see amdgpu::components::mall).",
    params: PARAMS,
    ports: PORTS,
    stats: STATS,
    build: |ctx| build_with(ctx, "lru"),
});

simdojo::register_component!(ComponentType {
    name: "amdgpu.mall.srrip",
    doc: "A memory-side cache slice with SRRIP (2-bit RRPV) replacement.",
    params: PARAMS,
    ports: PORTS,
    stats: STATS,
    build: |ctx| build_with(ctx, "srrip"),
});

simdojo::register_component!(ComponentType {
    name: "amdgpu.mall.ideal",
    doc: "A memory-side cache slice where every access hits.",
    params: PARAMS,
    ports: PORTS,
    stats: STATS,
    build: |ctx| build_with(ctx, "ideal"),
});

#[cfg(test)]
mod tests {
    use super::PARAMS;
    use crate::timing::latency::stages;

    fn default_of(name: &str) -> Option<&'static str> {
        PARAMS.iter().find(|p| p.name == name).and_then(|p| p.default)
    }

    #[test]
    fn timing_defaults_come_from_the_latency_table() {
        assert_eq!(default_of("hit_latency"), Some(stages::MEMORY_SIDE_PIPE.to_string().as_str()));
        let slice = crate::timing::PartTiming::mi300x().memory_side.expect("MI300X has a memory-side cache");
        assert_eq!(default_of("channel_bytes_per_clock"), Some(slice.read_bytes_per_clock.to_string().as_str()));
    }
}
