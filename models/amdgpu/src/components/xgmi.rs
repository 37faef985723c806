//! `amdgpu.xgmi`: a GPU's XGMI (Infinity Fabric) block, the end of its links to peer
//! GPUs. The GPU's L2s send it the line traffic of peer memory (addresses the driver
//! recorded in [`crate::gpu::remote`]); it carries each line to the GPU that owns it over
//! the engine link to that GPU's XGMI block (the link's latency is the wire's), and
//! that block serves it as the line's home.
//!
//! Which port leads where is learnt at startup: every block says `Hello` with its GPU's
//! name on each of its `link` ports, so a topology wires peers in any order.
//!
//! Functional mode (`MemMsg::Lines` from the L2s) only counts: data is already read and
//! written in the shared host pages. Timing mode (`MemMsg::Access`): each direction of
//! each link is a [`BandwidthPort`] of `bytes_per_clock` at `clock`; write data is
//! serialized on the way out, read data on the way back after the home's
//! `memory_latency`, and the L2 gets its `Done` when every line of the access is back.
//! The home does not pass peer lines to its own caches and HBM (their per-dispatch
//! statistics belong to its own kernels), so peer reads cost a fixed memory latency at
//! the home plus the link, not a contended HBM access.
//!
//! **Determinism:** a block's state changes only in its own events, in event order;
//! the route of a line depends on the driver's mappings, which the program sets up
//! before its kernels touch the memory (see [`crate::gpu::remote`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use simdojo::component::{
    load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError,
};
use simdojo::engine::Context;
use simdojo::params::ParamSet;
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};
use simdojo::time::{ClockDomain, Tick};

use crate::gpu::messages::{LineAccess, MemMsg};
use crate::gpu::shared::GpuShared;
use crate::timing::{Bandwidth, BandwidthPort, Cycle};

/// XGMI block <-> XGMI block, over one link.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum XgmiMsg {
    /// At startup: the sender's GPU name.
    Hello {
        /// The SoC `name` of the sending block's GPU.
        gpu: String,
    },
    /// Functional mode: lines of the receiver's memory that the sender's kernels touched.
    Lines {
        /// The lines.
        lines: Vec<LineAccess>,
    },
    /// Timing mode: lines to serve; answered with `Done` if `reply`.
    Access {
        /// Sender's tag.
        tag: u64,
        /// The lines (write data travels with them).
        lines: Vec<LineAccess>,
        /// Whether the sender waits for the answer.
        reply: bool,
    },
    /// Timing mode: every line of the `Access` with this tag is served; `bytes` of
    /// read data came back with it.
    Done {
        /// The access's tag.
        tag: u64,
        /// Read data bytes carried.
        bytes: u64,
    },
}

/// An L2 access waiting for its lines from one or more peers.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Waiting {
    l2: usize,
    tag: u64,
    left: usize,
}

#[derive(Serialize, Deserialize)]
struct XgmiState {
    /// Peer GPU name -> link port index (from the peers' `Hello`).
    peers: BTreeMap<String, usize>,
    /// Outgoing direction of each link.
    tx: Vec<BandwidthPort>,
    waiting: BTreeMap<u64, Waiting>,
    next_tag: u64,
    tx_bytes: Counter,
    rx_bytes: Counter,
    lines_out: Counter,
    lines_served: Counter,
    unrouted: Counter,
}

/// See the [module docs](self).
pub struct Xgmi {
    gpu: String,
    shared: Arc<GpuShared>,
    l2: Vec<Port<MemMsg>>,
    links: Vec<Port<XgmiMsg>>,
    clock: ClockDomain,
    line_bytes: u64,
    memory_latency: Tick,
    state: XgmiState,
}

/// The parameters of `amdgpu.xgmi`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
pub struct XgmiParams {
    /// Name of the GPU (the SoC's `name`).
    #[param(default = "gpu")]
    pub gpu: String,
    /// Line size of the L2s above (bytes per line moved).
    #[param(default = 128, unit = "bytes", range = 1..=4096, power_of_two)]
    pub line_bytes: u64,
    /// Clock of `bytes_per_clock`.
    #[param(default = ClockDomain::mhz(1000))]
    pub clock: ClockDomain,
    /// Timing mode: bandwidth of each link, each direction, in bytes per `clock` (64 at
    /// 1 GHz = 64 GB/s, an MI300X link).
    #[param(default = 64, unit = "bytes per clock", range = 1..)]
    pub bytes_per_clock: u64,
    /// Timing mode: time the home GPU takes to read peer lines before they go back (a
    /// fixed memory access).
    #[param(default = Tick::ns(300))]
    pub memory_latency: Tick,
}

impl Xgmi {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        let p: XgmiParams = ctx.typed()?;
        let (gpu, line_bytes, bytes_per_clock) = (p.gpu, p.line_bytes, p.bytes_per_clock);
        let shared = ctx.resource(&gpu, GpuShared::default);
        let l2 = ctx.port_array::<MemMsg>("l2")?;
        let links = ctx.port_array::<XgmiMsg>("link")?;
        let tx = (0..links.len())
            .map(|_| {
                BandwidthPort::new(Bandwidth::per_cycle(bytes_per_clock))
                    .map_err(|e| BuildError::Invalid(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(Xgmi {
            gpu,
            shared,
            l2,
            links,
            clock: p.clock,
            line_bytes,
            memory_latency: p.memory_latency,
            state: XgmiState {
                peers: BTreeMap::new(),
                tx,
                waiting: BTreeMap::new(),
                next_tag: 0,
                tx_bytes: Counter::default(),
                rx_bytes: Counter::default(),
                lines_out: Counter::default(),
                lines_served: Counter::default(),
                unrouted: Counter::default(),
            },
        }))
    }

    fn bytes(&self, lines: &[LineAccess], write: bool) -> u64 {
        lines.iter().filter(|l| l.write == write).count() as u64 * self.line_bytes
    }

    /// `lines` grouped by the link that leads to their home, in link order; lines whose
    /// home no link reaches are counted as unrouted and dropped.
    fn routes(&mut self, lines: Vec<LineAccess>) -> BTreeMap<usize, Vec<LineAccess>> {
        let remote = self.shared.remote();
        let mut out: BTreeMap<usize, Vec<LineAccess>> = BTreeMap::new();
        for l in lines {
            match remote
                .home_of(l.line)
                .and_then(|home| self.state.peers.get(&*home).copied())
            {
                Some(k) => out.entry(k).or_default().push(l),
                None => self.state.unrouted.inc(),
            }
        }
        out
    }

    /// Reserves `bytes` on link `k`'s outgoing direction from `now`; the time from `now`
    /// until they have left.
    fn transmit(&mut self, k: usize, now: Tick, bytes: u64) -> Tick {
        let at = self.state.tx[k].reserve(Cycle(self.clock.to_cycles(now)), bytes);
        self.state.tx_bytes.add(bytes);
        crate::components::l2::delay_until(&self.clock, now, at)
    }

    fn on_l2(&mut self, l2: usize, msg: MemMsg, ctx: &mut Context<'_>) {
        match msg {
            MemMsg::Lines { lines, .. } => {
                for (k, lines) in self.routes(lines) {
                    self.state.lines_out.add(lines.len() as u64);
                    self.state.tx_bytes.add(self.bytes(&lines, true));
                    self.state.rx_bytes.add(self.bytes(&lines, false));
                    ctx.send(&self.links[k], XgmiMsg::Lines { lines });
                }
            }
            MemMsg::Access {
                tag, lines, reply, ..
            } => {
                let routes = self.routes(lines);
                let own = self.state.next_tag;
                self.state.next_tag += 1;
                if reply && routes.is_empty() {
                    ctx.send(&self.l2[l2], MemMsg::Done { tag });
                    return;
                }
                if reply {
                    self.state.waiting.insert(
                        own,
                        Waiting {
                            l2,
                            tag,
                            left: routes.len(),
                        },
                    );
                }
                for (k, lines) in routes {
                    self.state.lines_out.add(lines.len() as u64);
                    let extra = self.transmit(k, ctx.now(), self.bytes(&lines, true));
                    ctx.send_after(
                        &self.links[k],
                        extra,
                        XgmiMsg::Access {
                            tag: own,
                            lines,
                            reply,
                        },
                    );
                }
            }
            _ => {}
        }
    }

    fn on_link(&mut self, k: usize, msg: XgmiMsg, ctx: &mut Context<'_>) {
        match msg {
            XgmiMsg::Hello { gpu } => {
                self.state.peers.insert(gpu, k);
            }
            XgmiMsg::Lines { lines } => {
                self.state.lines_served.add(lines.len() as u64);
                self.state.rx_bytes.add(self.bytes(&lines, true));
                self.state.tx_bytes.add(self.bytes(&lines, false));
            }
            XgmiMsg::Access { tag, lines, reply } => {
                self.state.lines_served.add(lines.len() as u64);
                self.state.rx_bytes.add(self.bytes(&lines, true));
                if reply {
                    let bytes = self.bytes(&lines, false);
                    let ready = ctx.now() + self.memory_latency;
                    let extra = self.transmit(k, ready, bytes) + self.memory_latency;
                    ctx.send_after(&self.links[k], extra, XgmiMsg::Done { tag, bytes });
                }
            }
            XgmiMsg::Done { tag, bytes } => {
                self.state.rx_bytes.add(bytes);
                let Some(w) = self.state.waiting.get_mut(&tag) else {
                    return;
                };
                w.left -= 1;
                if w.left == 0 {
                    let w = self
                        .state
                        .waiting
                        .remove(&tag)
                        .expect("present: just looked up");
                    ctx.send(&self.l2[w.l2], MemMsg::Done { tag: w.tag });
                }
            }
        }
    }
}

impl Component for Xgmi {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        for link in &self.links {
            ctx.send(
                link,
                XgmiMsg::Hello {
                    gpu: self.gpu.clone(),
                },
            );
        }
    }

    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let Event::Message { port, .. } = &event else {
            return;
        };
        let port = *port;
        if let Some(i) = self.l2.iter().position(|p| p.idx() == port) {
            if let Ok(msg) = event.take(&self.l2[i]) {
                self.on_l2(i, msg, ctx);
            }
        } else if let Some(k) = self.links.iter().position(|p| p.idx() == port) {
            if let Ok(msg) = event.take(&self.links[k]) {
                self.on_link(k, msg, ctx);
            }
        }
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        let s = &self.state;
        out.counter("tx_bytes", &s.tx_bytes);
        out.counter("rx_bytes", &s.rx_bytes);
        out.counter("lines_out", &s.lines_out);
        out.counter("lines_served", &s.lines_served);
        out.counter("unrouted_lines", &s.unrouted);
        out.counter("peers", &Counter::from_count(s.peers.len() as u64));
        let queued: u64 = s.tx.iter().map(|p| p.stats().queued).sum();
        out.counter("link_queued", &Counter::from_count(queued));
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
    name: "amdgpu.xgmi",
    doc: "A GPU's XGMI / Infinity Fabric block: carries peer-memory lines of its L2s to the GPUs that own them (see the module docs of amdgpu::components::xgmi).",
    params: XgmiParams::SPECS,
    validate: registry::validate_with::<XgmiParams>,
    estimate: registry::estimate_with::<XgmiParams>,
    ports: &[
        PortSpec { name: "l2", doc: "from each XCD's L2 (its peer-memory lines)", dir: PortDir::InOut, array: true, message: MessageKind::of::<MemMsg> },
        PortSpec { name: "link", doc: "XGMI links to peer GPUs' blocks, one per peer", dir: PortDir::InOut, array: true, message: MessageKind::of::<XgmiMsg> },
    ],
    stats: &[
        StatSpec { name: "tx_bytes", kind: StatKind::Counter, unit: "bytes", doc: "data this GPU put on its links (write data out, read data served)" },
        StatSpec { name: "rx_bytes", kind: StatKind::Counter, unit: "bytes", doc: "data that came in over its links (read data back, peers' write data)" },
        StatSpec { name: "lines_out", kind: StatKind::Counter, unit: "lines", doc: "lines of peer memory this GPU's kernels sent to their homes" },
        StatSpec { name: "lines_served", kind: StatKind::Counter, unit: "lines", doc: "lines of this GPU's memory that peers accessed" },
        StatSpec { name: "unrouted_lines", kind: StatKind::Counter, unit: "lines", doc: "peer lines whose home no link of this block reaches (dropped from the statistics)" },
        StatSpec { name: "peers", kind: StatKind::Counter, unit: "GPUs", doc: "peers that answered on a link" },
        StatSpec { name: "link_queued", kind: StatKind::Counter, unit: "transfers", doc: "timing mode: transfers that waited for a busy link" },
    ],
    build: Xgmi::build,
});
