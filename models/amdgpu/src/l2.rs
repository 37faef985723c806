//! `amdgpu.l2` (and its policy variants): an XCD's L2. In functional mode it performs the
//! deferred memory instructions of its compute units in arrival order (atomics are
//! performed at the L2 on CDNA), forwards system-coherent and device-scope ones to the
//! SoC's coherent home when one is linked, and keeps hit/miss statistics of the lines
//! its compute units touched, per dispatch.

use std::collections::BTreeMap;
use std::sync::Arc;

use amdgpu_isa::exec::MemFault;
use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::ParamKind;
use simdojo::registry::{ComponentType, MessageKind, ParamSpec, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};

use crate::ids::DispatchSeq;
use crate::memory::MemView;
use crate::messages::MemMsg;
use crate::shared::GpuShared;
use crate::line_cache::LineCache;
use crate::messages::LineAccess;

#[derive(Serialize, Deserialize)]
struct L2State {
    cache: LineCache,
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
    interleave: u64,
    shared: Arc<GpuShared>,
    view: Option<MemView>,
    state: L2State,
}

fn build_with(ctx: &mut BuildContext<'_>, policy: &str) -> Result<Box<dyn Component>, BuildError> {
    let p = ctx.params().clone();
    let ways = u32::try_from(p.uint("ways")?).unwrap_or(u32::MAX);
    let cache = LineCache::new(p.bytes("size")?, p.uint("line_bytes")?, ways, policy).map_err(|e| BuildError::Invalid(e.to_string()))?;
    let interleave = p.bytes("interleave")?;
    if !interleave.is_power_of_two() {
        return Err(BuildError::Invalid(format!("interleave = {interleave} is not a power of two")));
    }
    let cu = ctx.port_array::<MemMsg>("cu")?;
    let home = if ctx.is_connected("home") { Some(ctx.port::<MemMsg>("home")?) } else { None };
    let down = ctx.port_array::<MemMsg>("down")?;
    let gpu = p.string("gpu")?;
    let shared = ctx.resource(&gpu, GpuShared::default);
    Ok(Box::new(L2 {
        cu,
        home,
        down,
        interleave,
        shared,
        view: None,
        state: L2State { cache, forwarded: BTreeMap::new(), next_tag: 0, performed: Counter::default(), forwards: Counter::default() },
    }))
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
                let result = match self.view.as_mut() {
                    Some(view) => req.perform(view).map(Box::new),
                    None => Err(MemFault { addr: 0, kind: amdgpu_isa::exec::MemFaultKind::Unmapped }),
                };
                ctx.send(&self.cu[c], MemMsg::Response { tag, result });
            }
            MemMsg::Lines { seq, lines } => {
                let below = self.state.cache.apply(seq, &lines);
                send_interleaved(ctx, &self.down, self.interleave, seq, below);
            }
            _ => {}
        }
    }
}

impl Component for L2 {
    fn init(&mut self, _ctx: &mut Context<'_>) {
        self.view = self.shared.memory().map(|m| m.view());
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
                    let d = self.state.cache.flush(seq);
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
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("performed", &self.state.performed);
        out.counter("forwarded", &self.state.forwards);
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
    ParamSpec { name: "gpu", kind: ParamKind::String, default: Some("\"gpu\""), doc: "name of the GPU (the SoC's `name`)" },
    ParamSpec { name: "size", kind: ParamKind::Bytes, default: Some("\"4MiB\""), doc: "capacity" },
    ParamSpec { name: "ways", kind: ParamKind::UInt, default: Some("16"), doc: "associativity" },
    ParamSpec { name: "line_bytes", kind: ParamKind::UInt, default: Some("128"), doc: "line size" },
    ParamSpec { name: "interleave", kind: ParamKind::Bytes, default: Some("\"4KiB\""), doc: "address interleave over the `down` ports" },
];

const PORTS: &[PortSpec] = &[
    PortSpec { name: "cu", doc: "from each compute unit of the XCD", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "home", doc: "to the SoC's coherent home (optional)", dir: PortDir::InOut, array: false, message: MessageKind::of::<MemMsg> },
    PortSpec { name: "down", doc: "to the memory-side cache slices or HBM, address-interleaved", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
];

const STATS: &[StatSpec] = &[
    StatSpec { name: "performed", kind: StatKind::Counter, unit: "instructions", doc: "deferred memory instructions performed here" },
    StatSpec { name: "forwarded", kind: StatKind::Counter, unit: "instructions", doc: "deferred memory instructions sent to the coherent home" },
    StatSpec { name: "hits", kind: StatKind::Counter, unit: "lines", doc: "line accesses that hit" },
    StatSpec { name: "misses", kind: StatKind::Counter, unit: "lines", doc: "line accesses that missed" },
];

simdojo::register_component!(ComponentType {
    name: "amdgpu.l2.lru",
    doc: "An XCD's L2 with least-recently-used replacement (see the module docs of amdgpu::l2).",
    params: PARAMS,
    ports: PORTS,
    stats: STATS,
    build: |ctx| build_with(ctx, "lru"),
});

simdojo::register_component!(ComponentType {
    name: "amdgpu.l2.srrip",
    doc: "An XCD's L2 with static re-reference interval prediction (2-bit RRPV) replacement.",
    params: PARAMS,
    ports: PORTS,
    stats: STATS,
    build: |ctx| build_with(ctx, "srrip"),
});

simdojo::register_component!(ComponentType {
    name: "amdgpu.l2.ideal",
    doc: "An XCD's L2 where every access hits (an upper bound for studies).",
    params: PARAMS,
    ports: PORTS,
    stats: STATS,
    build: |ctx| build_with(ctx, "ideal"),
});
