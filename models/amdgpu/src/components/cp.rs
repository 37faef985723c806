//! `amdgpu.cp`: an XCD's command processor (the workgroup dispatcher). It takes the
//! SoC's dispatch orders, runs the XCD's share of each grid (work-group `g` on XCD
//! `g % xcds`, as MI300's SPX mode spreads them), places work-groups on compute units
//! where registers, wave slots and LDS allow (so occupancy limits are real), and reports
//! completion and faults back.
//!
//! The CP keeps the authoritative picture of every CU's free resources: it chooses the
//! wave slots (contiguous per group, slot `k` on SIMD `k % simds`) and the CU just
//! instantiates them, so the two never disagree.
//!
//! It also tells each group where it runs, for the waves' HW_ID and XCC_ID registers:
//! XCC_ID is the XCD's index, and compute unit `c` of the XCD is CU_ID `c / ses` of shader
//! engine `c % ses` (shader array 0), `ses` being the `shader_engines` parameter (by
//! default the target's: 8 per XCD on gfx90a, 4 on gfx942 and gfx950, as the KFD topology
//! reports them); a CU_ID that does not fit its 4 bits is unknown to the waves. The
//! queue's ids come from the GPU queue number ([`GroupPlace::queue_slot`]).

use std::sync::Arc;

use amdgpu_isa::code_object::KernelDescriptor;
use amdgpu_isa::exec::hwreg::{fit, MODEL_VMID};
use amdgpu_isa::exec::{GroupIds, GroupPlace};
use amdgpu_isa::Target;
use serde::{Deserialize, Serialize};
use simdojo::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port, StateError};
use simdojo::engine::Context;
use simdojo::params::ParamSet;
use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use simdojo::stats::{Counter, StatsSink};

use crate::gpu::messages::{CuMsg, DispatchOrder, GroupLaunch, XcdMsg};
use crate::gpu::occupancy::{needs_of_kernel, CuMirror, Needs};
use crate::gpu::shared::{GpuFault, GpuShared};
use crate::gpu::stats::DispatchCounters;

/// One dispatch this XCD is running.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Active {
    order: DispatchOrder,
    needs: Needs,
    /// Work-groups in the whole grid.
    total: u64,
    /// Next linear work-group index (global numbering) to place.
    next: u64,
    running: u32,
    faulted: bool,
    finished: bool,
    /// Counters replies still expected.
    flushes: u32,
    counters: DispatchCounters,
}

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
struct CpState {
    cus: Vec<CuMirror>,
    hellos: u32,
    active: Vec<Active>,
    rr: usize,
    groups_launched: Counter,
    dispatches: Counter,
}

/// See the [module docs](self).
pub struct CommandProcessor {
    soc: Port<XcdMsg>,
    cu: Vec<Port<CuMsg>>,
    /// Shader engines of the XCD (0: the target's).
    shader_engines: u32,
    shared: Arc<GpuShared>,
    state: CpState,
}

fn needs_of(order: &DispatchOrder) -> Result<(Needs, KernelDescriptor), String> {
    needs_of_kernel(&order.descriptor, &order.packet, &order.kernel)
}

/// The parameters of `amdgpu.cp`.
#[derive(Clone, Debug, PartialEq, simdojo::Params)]
pub struct CpParams {
    /// Name of the GPU (the SoC's `name`).
    #[param(default = "gpu")]
    pub gpu: String,
    /// Shader engines of the XCD, for the waves' HW_ID (CU c is CU_ID c / this of SE
    /// c % this); 0: the target's (8 on gfx90a, 4 on gfx942 and gfx950).
    #[param(default = 0)]
    pub shader_engines: u32,
}

impl CommandProcessor {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        let soc = ctx.port::<XcdMsg>("soc")?;
        let cu = ctx.port_array::<CuMsg>("cu")?;
        if cu.is_empty() {
            return Err(BuildError::Invalid("a command processor needs at least one `cu[i]` link".into()));
        }
        let p: CpParams = ctx.typed()?;
        let shared = ctx.resource(&p.gpu, GpuShared::default);
        let state = CpState { cus: vec![CuMirror::default(); cu.len()], ..CpState::default() };
        Ok(Box::new(CommandProcessor { soc, cu, shader_engines: p.shader_engines, shared, state }))
    }

    /// Where compute unit `c` of this XCD is, for a group of `order` placed at slot `first`.
    fn place(&self, order: &DispatchOrder, c: usize, first: u32) -> GroupPlace {
        let ses = match (self.shader_engines, self.shared.target()) {
            (0, Some(Target::Gfx90a)) => 8,
            (0, Some(_)) => 4,
            (0, None) => 0,
            (n, _) => n,
        };
        let c = c as u32;
        let (me, pipe, queue) = GroupPlace::queue_slot(order.queue);
        let ids = GroupIds {
            pipe_id: Some(pipe),
            cu_id: c.checked_div(ses).and_then(|v| fit(v, 4)),
            sh_id: (ses != 0).then_some(0),
            se_id: c.checked_rem(ses).and_then(|v| fit(v, 3)),
            tg_id: None,
            vm_id: Some(MODEL_VMID),
            queue_id: Some(queue),
            me_id: Some(me),
            xcc_id: fit(order.xcd, 4),
        };
        GroupPlace {
            ids,
            lds_base: None,
            first_slot: first,
            simds: self.state.cus[c as usize].cap.map_or(0, |cap| cap.simds),
            packed_bases: false,
            counters_idle: true,
        }
    }

    fn fault(&mut self, ctx: &mut Context<'_>, i: usize, fault: GpuFault) {
        let a = &mut self.state.active[i];
        if !a.faulted {
            a.faulted = true;
            ctx.send(&self.soc, XcdMsg::Fault { seq: a.order.seq, fault: Box::new(fault) });
        }
    }

    /// Places every work-group that fits, oldest dispatch first.
    fn pump(&mut self, ctx: &mut Context<'_>) {
        let n_cus = self.cu.len();
        for i in 0..self.state.active.len() {
            loop {
                let a = &self.state.active[i];
                if a.faulted || a.next >= a.total {
                    break;
                }
                let needs = a.needs;
                let placed = (0..n_cus).map(|k| (self.state.rr + k) % n_cus).find_map(|c| self.state.cus[c].fit(&needs).map(|s| (c, s)));
                let Some((c, first)) = placed else {
                    if !self.state.cus.iter().any(|m| m.could_ever_fit(&needs)) {
                        let a = &self.state.active[i];
                        let f = GpuFault {
                            kernel: a.order.kernel.clone(),
                            dispatch: a.order.seq.0,
                            place: ctx.path().to_string(),
                            message: format!(
                                "a work-group of {} waves ({} VGPRs, {} SGPRs per wave, {} LDS bytes) does not fit an empty compute unit",
                                needs.waves, needs.vgprs, needs.sgprs, needs.lds
                            ),
                            addr: None,
                        };
                        self.fault(ctx, i, f);
                    }
                    break;
                };
                self.state.rr = (c + 1) % n_cus;
                let a = &mut self.state.active[i];
                let g = a.next;
                a.next += u64::from(a.order.xcds);
                a.running += 1;
                let p = &a.order.packet;
                let groups = [0, 1, 2].map(|d| u64::from(p.grid[d].div_ceil(p.block[d])));
                let group = [(g % groups[0]) as u32, ((g / groups[0]) % groups[1]) as u32, (g / (groups[0] * groups[1])) as u32];
                let slots = u64::from(self.state.cus[c].cap.map_or(0, |cap| cap.slots));
                let wave_bytes = 64 * u64::from(a.order.lane_scratch);
                let scratch = a.order.scratch_base.0 + (a.order.first_slot + c as u64 * slots) * wave_bytes;
                let mut launch = GroupLaunch {
                    seq: a.order.seq,
                    kernel: a.order.kernel.clone(),
                    group,
                    packet: a.order.packet.clone(),
                    packet_addr: a.order.packet_addr,
                    queue_ptr: a.order.queue_ptr,
                    descriptor: a.order.descriptor.clone(),
                    first_slot: first,
                    waves: needs.waves,
                    lds_bytes: needs.lds,
                    scratch_base: crate::gpu::ids::GpuAddr(scratch),
                    lane_scratch: a.order.lane_scratch,
                    place: GroupPlace::unknown(),
                };
                launch.place = self.place(&self.state.active[i].order, c, first);
                let seq = launch.seq;
                self.state.cus[c].take(seq, first, needs);
                self.state.groups_launched.inc();
                ctx.send(&self.cu[c], CuMsg::Launch(Box::new(launch)));
            }
        }
        self.finish(ctx);
    }

    /// Flushes dispatches whose groups all ended, reports those whose flushes are in.
    fn finish(&mut self, ctx: &mut Context<'_>) {
        for a in &mut self.state.active {
            if !a.finished && a.next >= a.total && a.running == 0 && !a.faulted {
                a.finished = true;
                a.flushes = self.cu.len() as u32;
                for p in &self.cu {
                    ctx.send(p, CuMsg::Flush { seq: a.order.seq });
                }
            }
        }
        let soc = &self.soc;
        self.state.active.retain(|a| {
            if a.finished && a.flushes == 0 {
                ctx.send(soc, XcdMsg::Done { seq: a.order.seq, counters: Box::new(a.counters.clone()) });
                false
            } else {
                // A faulted dispatch leaves once its running groups are gone.
                !(a.faulted && a.running == 0)
            }
        });
    }

    fn on_cu(&mut self, c: usize, msg: CuMsg, ctx: &mut Context<'_>) {
        match msg {
            CuMsg::Hello(cap) => {
                self.state.cus[c].set_capacity(cap);
                self.state.hellos += 1;
                if self.state.hellos as usize == self.cu.len() {
                    let slots = self.state.cus.iter().filter_map(|m| m.cap).map(|c| c.slots).max().unwrap_or(0);
                    let caps = self.state.cus.iter().filter_map(|m| m.cap).collect();
                    ctx.send(&self.soc, XcdMsg::Hello { cus: self.cu.len() as u32, slots_per_cu: slots, caps });
                }
            }
            CuMsg::GroupDone { seq, first_slot } => {
                self.state.cus[c].release(seq, first_slot);
                if let Some(a) = self.state.active.iter_mut().find(|a| a.order.seq == seq) {
                    a.running = a.running.saturating_sub(1);
                }
                self.pump(ctx);
            }
            CuMsg::Fault { seq, first_slot, fault } => {
                self.state.cus[c].release(seq, first_slot);
                if let Some(i) = self.state.active.iter().position(|a| a.order.seq == seq) {
                    self.state.active[i].running = self.state.active[i].running.saturating_sub(1);
                    self.fault(ctx, i, *fault);
                }
                self.pump(ctx);
            }
            CuMsg::Counters { seq, counters } => {
                if let Some(a) = self.state.active.iter_mut().find(|a| a.order.seq == seq) {
                    a.counters.add(&counters);
                    a.flushes = a.flushes.saturating_sub(1);
                }
                self.finish(ctx);
            }
            CuMsg::Launch(_) | CuMsg::Flush { .. } => {}
        }
    }
}

impl Component for CommandProcessor {
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
        let event = match event.take(&self.soc) {
            Ok(XcdMsg::Dispatch(order)) => {
                self.state.dispatches.inc();
                let p = &order.packet;
                let total: u64 = (0..3).map(|d| u64::from(p.grid[d].div_ceil(p.block[d]))).product();
                match needs_of(&order) {
                    Ok((needs, _)) => {
                        let next = u64::from(order.xcd);
                        self.state.active.push(Active { order: *order, needs, total, next, running: 0, faulted: false, finished: false, flushes: 0, counters: DispatchCounters::default() });
                        self.pump(ctx);
                    }
                    Err(message) => {
                        let f = GpuFault { kernel: order.kernel.clone(), dispatch: order.seq.0, place: ctx.path().to_string(), message, addr: None };
                        ctx.send(&self.soc, XcdMsg::Fault { seq: order.seq, fault: Box::new(f) });
                    }
                }
                return;
            }
            Ok(_) => return,
            Err(e) => e,
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
        out.counter("dispatches", &self.state.dispatches);
        out.counter("groups_launched", &self.state.groups_launched);
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
    name: "amdgpu.cp",
    doc: "An XCD's command processor: runs the XCD's share of each dispatch (work-group g on XCD g % xcds), \
          placing work-groups on compute units by free wave slots, VGPRs, SGPRs and LDS.",
    params: CpParams::SPECS,
    validate: registry::validate_with::<CpParams>,
    estimate: registry::estimate_with::<CpParams>,
    ports: &[
        PortSpec { name: "soc", doc: "to the SoC's packet processor", dir: PortDir::InOut, array: false, message: MessageKind::of::<XcdMsg> },
        PortSpec { name: "cu", doc: "to each compute unit of the XCD", dir: PortDir::InOut, array: true, message: MessageKind::of::<CuMsg> },
    ],
    stats: &[
        StatSpec { name: "dispatches", kind: StatKind::Counter, unit: "dispatches", doc: "dispatch orders received" },
        StatSpec { name: "groups_launched", kind: StatKind::Counter, unit: "groups", doc: "work-groups placed on compute units" },
    ],
    build: CommandProcessor::build,
});
