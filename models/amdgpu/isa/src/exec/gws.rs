//! Global wave sync (GWS): `ds_gws_init`, `ds_gws_sema_v`, `ds_gws_sema_br`,
//! `ds_gws_sema_p`, `ds_gws_sema_release_all` and `ds_gws_barrier` (DS with `gds` = 1).
//!
//! GWS resources are device-wide state (the queue's 64 barrier/semaphore resources, shared
//! by every compute unit), so a wave never performs a GWS operation itself: it parks a
//! [`VmemRequest`] of kind [`AccessKind::Gws`] (status `WaitMemory`, like a deferred memory
//! access) and the scheduler hands it to the one [`GwsUnit`] of the device, which answers
//! each request when its operation completes ([`GwsUnit::submit`]); the scheduler then
//! resumes the answered waves with an empty [`VmemResponse`] ([`GwsUnit::response`]).
//!
//! Semantics (ISA guides and LLVM's `llvm.amdgcn.ds.gws.*` definitions), with the
//! decisions the documents leave open:
//! - The resource id is `(M0[21:16] + offset) mod 64` (the queue's base is 0 here).
//! - The value an operation takes (`ds_gws_init`, `ds_gws_sema_br`, `ds_gws_barrier`) is
//!   data0 of the first active lane (lane 0 when EXEC is zero).
//! - `ds_gws_init v` sets the resource's semaphore count to `v`; it completes at once.
//! - `ds_gws_barrier v`: the wave waits until `v + 1` waves arrived at the resource (the
//!   count of the instruction that completes it), then all are answered and the barrier
//!   starts over.
//! - `ds_gws_sema_v` adds 1, `ds_gws_sema_br v` adds `v` to the count, and waiting
//!   `ds_gws_sema_p` waves are then released in arrival order while the count is positive;
//!   `ds_gws_sema_p` completes once it can decrement a positive count;
//!   `ds_gws_sema_release_all` answers every waiting `ds_gws_sema_p` without changing the
//!   count. All but `sema_p` and `barrier` complete at once.

use serde::{Deserialize, Serialize};

use super::device::{AccessKind, CachePolicy, Element, GwsOp, LaneRegs, Space, VmemRequest, VmemResponse};
use super::operands::unsupported;
use super::program::CachedInst;
use super::wave::{PendingAccess, Wave, WaveStatus, M0, WAVE_LANES};
use super::ExecFault;
use crate::decode::Opcode;

/// Number of GWS resources of a queue.
pub const GWS_RESOURCES: usize = 64;

/// Parks a GWS request for the `ds_gws_*` instruction `c` (see the [module docs](self)).
pub(super) fn request(w: &mut Wave, c: &CachedInst, pc: u64) -> Result<(), ExecFault> {
    let op = match c.op {
        Opcode::DsGwsInit => GwsOp::Init,
        Opcode::DsGwsSemaV => GwsOp::SemaV,
        Opcode::DsGwsSemaBr => GwsOp::SemaBr,
        Opcode::DsGwsSemaP => GwsOp::SemaP,
        Opcode::DsGwsSemaReleaseAll => GwsOp::SemaReleaseAll,
        Opcode::DsGwsBarrier => GwsOp::Barrier,
        _ => return Err(unsupported(&c.inst, pc)),
    };
    let [w0, w1] = [c.inst.words()[0], c.inst.words()[1]];
    let offset = w0 & 0xffff;
    let resource = ((w.sgpr[M0] >> 16) & 0x3f).wrapping_add(offset) % GWS_RESOURCES as u32;
    let exec = w.exec();
    let lane = if exec == 0 { 0 } else { exec.trailing_zeros() as usize };
    // LLVM encodes the value register in the address field.
    let data0 = (w1 & 0xff) as usize;
    let acc = (w0 >> 25) & 1 != 0;
    let value = if acc { w.agpr[data0][lane] } else { w.vgpr[data0][lane] };
    let mut request = w.request_box();
    request.pc = pc;
    request.kind = AccessKind::Gws { op, resource, value };
    request.space = Space::Global;
    request.op = None;
    request.element = Element::Dwords;
    request.dwords = 0;
    request.mask = exec;
    request.addrs = [0; WAVE_LANES];
    request.data.clear();
    request.cmp.clear();
    request.policy = CachePolicy::default();
    request.dest = None;
    w.waiting = Some(PendingAccess { pc, mask: exec, dest: None });
    w.pending = Some(request);
    w.status = WaveStatus::WaitMemory;
    Ok(())
}

/// One GWS resource: a semaphore count, the waves waiting in `ds_gws_sema_p`, and the
/// waves arrived at its barrier.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Resource {
    count: u32,
    sema_waiters: Vec<u64>,
    barrier_arrived: Vec<u64>,
}

/// The device's GWS resources: takes GWS requests in the order they are performed and
/// says which waiting requests each one completes. Requests are named by a tag the caller
/// chooses (a wave slot, a message tag).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GwsUnit {
    resources: Vec<Resource>,
}

impl Default for GwsUnit {
    fn default() -> Self {
        GwsUnit { resources: vec![Resource::default(); GWS_RESOURCES] }
    }
}

impl GwsUnit {
    /// A unit with every resource zero and nobody waiting.
    pub fn new() -> GwsUnit {
        GwsUnit::default()
    }

    /// Performs the GWS request `req` of the wave `tag`; returns the tags whose requests
    /// complete now (possibly `tag` itself, possibly none), in the order they waited.
    /// A request that is not a GWS one completes at once.
    pub fn submit(&mut self, tag: u64, req: &VmemRequest) -> Vec<u64> {
        let AccessKind::Gws { op, resource, value } = req.kind else { return vec![tag] };
        let r = &mut self.resources[resource as usize % GWS_RESOURCES];
        let mut done = Vec::new();
        match op {
            GwsOp::Init => {
                r.count = value;
                done.push(tag);
            }
            GwsOp::SemaV | GwsOp::SemaBr => {
                r.count = r.count.wrapping_add(if op == GwsOp::SemaV { 1 } else { value });
                done.push(tag);
                while r.count > 0 && !r.sema_waiters.is_empty() {
                    r.count -= 1;
                    done.push(r.sema_waiters.remove(0));
                }
            }
            GwsOp::SemaP => {
                if r.count > 0 && r.sema_waiters.is_empty() {
                    r.count -= 1;
                    done.push(tag);
                } else {
                    r.sema_waiters.push(tag);
                }
            }
            GwsOp::SemaReleaseAll => {
                done.append(&mut r.sema_waiters);
                done.push(tag);
            }
            GwsOp::Barrier => {
                r.barrier_arrived.push(tag);
                if r.barrier_arrived.len() as u64 > value as u64 {
                    done.append(&mut r.barrier_arrived);
                }
            }
        }
        done
    }

    /// Withdraws every waiting request whose tag `doomed` names (their waves were
    /// stopped: a fault ended their dispatch); returns the withdrawn tags, in resource
    /// and arrival order. Counts are unchanged.
    pub fn cancel(&mut self, mut doomed: impl FnMut(u64) -> bool) -> Vec<u64> {
        let mut gone = Vec::new();
        for r in &mut self.resources {
            for list in [&mut r.sema_waiters, &mut r.barrier_arrived] {
                list.retain(|&t| {
                    let drop = doomed(t);
                    if drop {
                        gone.push(t);
                    }
                    !drop
                });
            }
        }
        gone
    }

    /// Requests waiting for another wave's GWS operation.
    pub fn waiting(&self) -> usize {
        self.resources.iter().map(|r| r.sema_waiters.len() + r.barrier_arrived.len()).sum()
    }

    /// What a completed GWS request returns to its wave (nothing: the wave just resumes).
    pub fn response(req: &VmemRequest) -> VmemResponse {
        VmemResponse { mask: req.mask, data: LaneRegs::new() }
    }
}

/// The GWS side of the functional runners ([`run_program`](super::run_program),
/// [`run_single_wave`](super::run_single_wave)): the device's [`GwsUnit`] and the requests
/// of the waves that wait in it, tagged by the wave's index in its work-group. The unit
/// lives as long as the dispatch (GWS state is device-wide); work-groups run one after the
/// other, so a wave waiting for a wave of another work-group is reported as a hang.
#[derive(Default)]
pub(super) struct FunctionalGws {
    unit: GwsUnit,
    /// Requests of waves the unit has not answered yet, by tag.
    parked: Vec<(u64, VmemRequest)>,
    /// Tags the unit answered whose waves have not resumed yet.
    answered: Vec<u64>,
}

impl FunctionalGws {
    /// Whether `req` is a GWS request (to hand to [`FunctionalGws::submit`]).
    pub(super) fn is_gws(req: &VmemRequest) -> bool {
        matches!(req.kind, AccessKind::Gws { .. })
    }

    /// Performs the GWS request `req` of the wave `tag` and resumes that wave when the unit
    /// answers it at once.
    pub(super) fn submit(&mut self, tag: u64, w: &mut Wave, req: VmemRequest) -> Result<(), ExecFault> {
        let done = self.unit.submit(tag, &req);
        self.parked.push((tag, req));
        self.answered.extend(done);
        self.resume(tag, w)
    }

    /// Resumes the wave `tag` if the unit answered its request.
    pub(super) fn resume(&mut self, tag: u64, w: &mut Wave) -> Result<(), ExecFault> {
        let Some(i) = self.answered.iter().position(|&t| t == tag) else { return Ok(()) };
        self.answered.swap_remove(i);
        if let Some(p) = self.parked.iter().position(|(t, _)| *t == tag) {
            let (_, req) = self.parked.swap_remove(p);
            w.complete(&GwsUnit::response(&req))?;
        }
        Ok(())
    }

    /// Whether some answered wave has not resumed yet.
    pub(super) fn has_answers(&self) -> bool {
        !self.answered.is_empty()
    }

    /// The hang reported when waves wait in the unit and nothing can answer them.
    pub(super) fn stuck(&self, group: [u32; 3]) -> ExecFault {
        let (pc, kind) = self.parked.first().map_or((0, "GWS"), |(_, r)| (r.pc, gws_name(r)));
        ExecFault::Hang { group, reason: format!("{} wave(s) wait in GWS (first: {kind} at {pc:#x}) for waves that cannot arrive", self.parked.len()) }
    }

    /// Forgets the waves of a finished work-group (their tags are reused by the next one).
    pub(super) fn next_group(&mut self) {
        self.parked.clear();
        self.answered.clear();
    }
}

/// The mnemonic of a GWS request's operation.
fn gws_name(req: &VmemRequest) -> &'static str {
    match req.kind {
        AccessKind::Gws { op: GwsOp::Init, .. } => "ds_gws_init",
        AccessKind::Gws { op: GwsOp::SemaV, .. } => "ds_gws_sema_v",
        AccessKind::Gws { op: GwsOp::SemaBr, .. } => "ds_gws_sema_br",
        AccessKind::Gws { op: GwsOp::SemaP, .. } => "ds_gws_sema_p",
        AccessKind::Gws { op: GwsOp::SemaReleaseAll, .. } => "ds_gws_sema_release_all",
        AccessKind::Gws { op: GwsOp::Barrier, .. } => "ds_gws_barrier",
        _ => "GWS",
    }
}
