//! `amdgpu.hbm`: the GPU's HBM controllers (all stacks, channels, pseudo-channels and
//! banks of one part, [`crate::timing::HbmModel`]). In functional mode it receives the
//! line traffic that left the last cache level and keeps byte, row-hit and
//! per-dispatch counts; the timing answers of the model are not used yet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::ParamKind;
use simdojo::registry::{ComponentType, MessageKind, ParamSpec, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};

use crate::ids::DispatchSeq;
use crate::messages::MemMsg;
use crate::stats::CacheCounts;
use crate::timing::{ByteAddr, Cycle, HbmConfig, HbmModel, Part};

#[derive(Serialize, Deserialize)]
struct HbmState {
    model: HbmModel,
    per_dispatch: BTreeMap<DispatchSeq, (u64, u64)>,
}

/// See the [module docs](self).
pub struct Hbm {
    up: Vec<Port<MemMsg>>,
    soc: Option<Port<MemMsg>>,
    line_bytes: u64,
    clock: simdojo::time::ClockDomain,
    state: HbmState,
}

impl Hbm {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        let p = ctx.params().clone();
        let part = match p.string("part")?.as_str() {
            "mi210" => Part::Mi210,
            "mi300x" => Part::Mi300x,
            "mi355x" => Part::Mi355x,
            other => return Err(BuildError::Invalid(format!("part = {other:?}: expected mi210, mi300x or mi355x"))),
        };
        let model = HbmModel::new(&HbmConfig::for_part(part)).map_err(|e| BuildError::Invalid(e.to_string()))?;
        let line_bytes = p.uint("line_bytes")?;
        if !line_bytes.is_power_of_two() || line_bytes > 4096 {
            return Err(BuildError::Invalid(format!("line_bytes = {line_bytes}: expected a power of two up to 4096")));
        }
        let up = ctx.port_array::<MemMsg>("up")?;
        let soc = if ctx.is_connected("soc") { Some(ctx.port::<MemMsg>("soc")?) } else { None };
        Ok(Box::new(Hbm { up, soc, line_bytes, clock: p.clock("clock")?, state: HbmState { model, per_dispatch: BTreeMap::new() } }))
    }
}

impl Component for Hbm {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match &self.soc {
            Some(soc) => match event.take(soc) {
                Ok(MemMsg::Flush { seq }) => {
                    let (r, w) = self.state.per_dispatch.remove(&seq).unwrap_or_default();
                    ctx.send(soc, MemMsg::Counters { seq, l2: CacheCounts::default(), read_bytes: r, write_bytes: w });
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
    params: &[
        ParamSpec { name: "part", kind: ParamKind::String, default: Some("\"mi300x\""), doc: "mi210 (HBM2e), mi300x (HBM3) or mi355x (HBM3E)" },
        ParamSpec { name: "line_bytes", kind: ParamKind::UInt, default: Some("128"), doc: "bytes per line transfer" },
        ParamSpec { name: "clock", kind: ParamKind::Frequency, default: Some("\"2100MHz\""), doc: "engine clock (the model's caller clock)" },
    ],
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
