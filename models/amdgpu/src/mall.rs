//! `amdgpu.mall.*`: a slice of the memory-side cache (AMD Infinity Cache) on an IOD. In
//! functional mode it takes the L2s' line traffic (fills and write-backs) for the
//! addresses interleaved to it, keeps per-dispatch hit/miss counts, and passes its own
//! misses and dirty evictions to the HBM controller below. The replacement policy is
//! the type's: `amdgpu.mall.lru`, `amdgpu.mall.srrip`, `amdgpu.mall.ideal`.

use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::ParamKind;
use simdojo::registry::{ComponentType, MessageKind, ParamSpec, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};

use crate::line_cache::LineCache;
use crate::messages::MemMsg;

#[derive(Serialize, Deserialize)]
struct MallState {
    cache: LineCache,
}

/// See the [module docs](self).
pub struct MemorySideCache {
    up: Vec<Port<MemMsg>>,
    down: Option<Port<MemMsg>>,
    soc: Option<Port<MemMsg>>,
    state: MallState,
}

fn build_with(ctx: &mut BuildContext<'_>, policy: &str) -> Result<Box<dyn Component>, BuildError> {
    let p = ctx.params().clone();
    let ways = u32::try_from(p.uint("ways")?).unwrap_or(u32::MAX);
    let cache = LineCache::new(p.bytes("size")?, p.uint("line_bytes")?, ways, policy).map_err(|e| BuildError::Invalid(e.to_string()))?;
    let up = ctx.port_array::<MemMsg>("up")?;
    let down = if ctx.is_connected("down") { Some(ctx.port::<MemMsg>("down")?) } else { None };
    let soc = if ctx.is_connected("soc") { Some(ctx.port::<MemMsg>("soc")?) } else { None };
    Ok(Box::new(MemorySideCache { up, down, soc, state: MallState { cache } }))
}

impl Component for MemorySideCache {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match &self.soc {
            Some(soc) => match event.take(soc) {
                Ok(MemMsg::Flush { seq }) => {
                    let d = self.state.cache.flush(seq);
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
                if let Ok(MemMsg::Lines { seq, lines }) = event.take(&self.up[i]) {
                    let below = self.state.cache.apply(seq, &lines);
                    if let (Some(down), false) = (&self.down, below.is_empty()) {
                        ctx.send(down, MemMsg::Lines { seq, lines: below });
                    }
                }
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        let (hits, misses) = self.state.cache.totals();
        out.counter("hits", &Counter::from_count(hits));
        out.counter("misses", &Counter::from_count(misses));
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
    ParamSpec { name: "ways", kind: ParamKind::UInt, default: Some("16"), doc: "associativity" },
    ParamSpec { name: "line_bytes", kind: ParamKind::UInt, default: Some("128"), doc: "line size" },
];

const PORTS: &[PortSpec] = &[
    PortSpec { name: "up", doc: "from each XCD's L2", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "down", doc: "to the HBM controller", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "soc", doc: "from the SoC (per-dispatch statistics)", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
];

const STATS: &[StatSpec] = &[
    StatSpec { name: "hits", kind: StatKind::Counter, unit: "lines", doc: "line accesses that hit" },
    StatSpec { name: "misses", kind: StatKind::Counter, unit: "lines", doc: "line accesses that missed" },
];

simdojo::register_component!(ComponentType {
    name: "amdgpu.mall.lru",
    doc: "A memory-side cache slice with LRU replacement (see amdgpu::mall).",
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
