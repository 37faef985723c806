//! Timing mode of the compute unit: the per-cycle issue model.
//!
//! Every event schedules one window of up to `issue_window` cycles. In each cycle each
//! SIMD issues at most one instruction, taking its ready waves round-robin (wave slot `k`
//! is on SIMD `k % simds`). A wave is ready when it is running, the issue cycles of its
//! previous instruction ([`IssueTable`]) and any `s_sleep` have passed, and, when the
//! instruction at its pc is `s_waitcnt`, its outstanding memory instructions are few
//! enough. Memory, LDS and other instructions that anything outside their wave can see
//! execute one at a time at issue (`step` with a budget of 1), so data is read and written
//! at issue, exactly as in functional mode; a wave's straight-line stretch of register-only
//! instructions executes ahead in one go and issues later from a queue
//! ([`super::ahead`]), which changes nothing another wave, the memory or a statistic can
//! see. Only the wait counters are timed:
//!
//! - a vector memory instruction whose lines all hit the vector L1 completes after
//!   `l1_hit_latency`; otherwise its missing lines (and every line of a store: the L1
//!   is write-through) go to the L2 in one `Access` message and it completes
//!   `l1_hit_latency` after the L2's `Done` arrives (the data passes the L1 pipeline
//!   on its way back); scalar loads likewise with the scalar cache;
//! - an LDS instruction completes after `lds_latency`;
//! - deferred accesses (atomics, system-coherent) keep the functional path: the wave
//!   waits (status `WaitMemory`) for the L2's or home's `Response`.
//!
//! Counters drop in issue order (gfx9 returns vector memory results in order), so
//! `s_waitcnt vmcnt(n)` waits until all but the `n` youngest have completed.
//!
//! **Windows and answers:** an answer to a message sent on the L2 link at cycle `s` cannot
//! arrive before `s` plus twice the link's latency (the link is the lookahead of this
//! component). A window therefore ends before the earliest cycle any outstanding answer
//! could arrive, so answers are seen on time, except an overdue one (waited for longer
//! than the round trip: a miss below the L2, or queued behind others): the window then
//! lasts `max(answer_slack, age / 16)` cycles, `age` being the cycles since it was sent,
//! so such an answer is seen late by less than that (under 1/16 of its latency once that
//! exceeds `16 * answer_slack`). Long windows over pure-ALU stretches cost one event per
//! `issue_window` cycles instead of one per few instructions.
//!
//! **Approximation:** a work-group that arrives while the window it falls into was already
//! scheduled starts at the end of that window (at most `issue_window - 1` cycles late). A
//! finished work-group reports at the cycle its last wave ended and its last access
//! completed, whatever the window.
//! **Determinism:** the schedule depends only on simulated time and the order of events
//! at equal times, which the engine fixes; no container is iterated in hash order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use amdgpu_isa::exec::{step, Program, StepEnv, StepStop, WaveStatus};
use serde::{Deserialize, Serialize};
use simdojo::component::Port;
use simdojo::engine::Context;
use simdojo::stats::{Counter, StatsSink};
use simdojo::time::{ClockDomain, Tick};

use super::ahead::{run_ahead, runs_ahead, Ahead};
use super::issue::{waitcnt_limits, IssueInfo, IssueTable, IssueUnit, MemClass};
use super::lds_banks::lds_cycles;
use super::{goes_to_home, ComputeUnit, CuMemory, CuState, Slot, OPCODES, SCALAR_LINE};
use crate::gpu::ids::DispatchSeq;
use crate::gpu::messages::{CuMsg, LineAccess, MemMsg};
use crate::gpu::stats::DispatchCounters;
use crate::timing::{AccessKind as LineKind, CacheModel, LineAddr};

/// Latencies of timing mode (component parameters of `amdgpu.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedParams {
    /// Load-to-use cycles of a vector L1 hit.
    pub l1_hit_latency: u64,
    /// Load-to-use cycles of a scalar cache hit.
    pub scalar_hit_latency: u64,
    /// Cycles until an LDS instruction's `lgkmcnt` drops.
    pub lds_latency: u64,
    /// Most cycles scheduled per event.
    pub window: u64,
    /// Least cycles scheduled per event while an overdue answer is outstanding (such an
    /// answer is seen late by less than `max(answer_slack, its age / 16)`).
    pub answer_slack: u64,
    /// Cycles between two issue opportunities of one SIMD (the SIMDs take turns).
    pub issue_period: u64,
    /// Lines the vector L1 can have outstanding at the L2 (its miss-status holding
    /// registers); a vector memory instruction does not issue while they are all busy.
    pub l1_mshrs: u64,
    /// LDS banks (dword-wide).
    pub lds_banks: u32,
    /// Cycles of work the vector memory pipeline's instruction queue holds.
    pub vmem_queue: u64,
}

/// One memory instruction counted in a wait counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Outstanding {
    /// Tag of its L2 access (0 for ones completed inside the compute unit).
    tag: u64,
    /// Cycle it completes, once known.
    done: Option<u64>,
}

/// Timing-mode state of one wave.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WaveTiming {
    /// First cycle the previous instruction's issue cycles allow the next issue.
    ready_at: u64,
    /// Outstanding instructions counted in `vmcnt`, oldest first.
    vm: VecDeque<Outstanding>,
    /// Outstanding instructions counted in `lgkmcnt`, oldest first.
    lgkm: VecDeque<Outstanding>,
    /// When the wave started waiting at a barrier or for a deferred access.
    waiting_since: u64,
    /// The pc `wait` describes (`None`: not looked up yet).
    #[serde(default)]
    wait_pc: Option<u64>,
    /// The (vmcnt, lgkmcnt) limits of the `s_waitcnt` at `wait_pc`, if it is one.
    #[serde(default)]
    wait: Option<(u32, u32)>,
    /// Instructions executed ahead of their issue, oldest first ([`super::ahead`]).
    #[serde(default)]
    pub(super) ahead: VecDeque<Ahead>,
    /// The fault of the last queued instruction, if it faulted: (message, address).
    #[serde(default)]
    pub(super) fault: Option<(String, Option<u64>)>,
}

impl WaveTiming {
    /// A wave that can first issue at cycle `ready`.
    pub(super) fn starting_at(ready: u64) -> WaveTiming {
        WaveTiming {
            ready_at: ready,
            ..WaveTiming::default()
        }
    }

    /// Drops completed instructions from the fronts of both counters.
    fn retire(&mut self, c: u64) {
        for q in [&mut self.vm, &mut self.lgkm] {
            while q.front().is_some_and(|o| o.done.is_some_and(|d| d <= c)) {
                q.pop_front();
            }
        }
    }

    /// The cycle all outstanding instructions are complete, if known.
    fn drained(&self) -> Option<u64> {
        self.vm
            .iter()
            .chain(&self.lgkm)
            .try_fold(0, |m, o| o.done.map(|d| m.max(d)))
    }
}

/// The cycle at which at most `limit` of `q` are outstanding (in-order completion), or
/// `None` while one of those that must complete has no known time.
fn drain_time(q: &VecDeque<Outstanding>, limit: u32) -> Option<u64> {
    let need = q.len().saturating_sub(limit as usize);
    q.iter()
        .take(need)
        .try_fold(0, |m, o| o.done.map(|d| m.max(d)))
}

/// The first cycle at or after the wave's issue latency at which it may issue, as seen at
/// cycle `c`; `None` when it is not running or waits for an answer.
fn ready_cycle(slot: &mut Slot, program: &Program, table: &IssueTable, c: u64) -> Option<u64> {
    if slot.wave.status != WaveStatus::Running {
        return None;
    }
    let t = &mut slot.timing;
    let mut r = t.ready_at.max(slot.wake);
    if !t.ahead.is_empty() {
        return Some(r); // an instruction that ran ahead is never `s_waitcnt`
    }
    if t.wait_pc != Some(slot.wave.pc) {
        // Looked up once per instruction, not once per cycle.
        t.wait_pc = Some(slot.wave.pc);
        t.wait = program
            .inst_at(slot.wave.pc)
            .filter(|ci| table.get(ci.inst.opcode() as usize).waitcnt)
            .map(|ci| {
                let limits = waitcnt_limits(ci.inst.words()[0] & 0xffff);
                (limits.vm, limits.lgkm)
            });
    }
    if let Some((vm, lgkm)) = t.wait {
        t.retire(c);
        r = r.max(drain_time(&t.vm, vm)?);
        r = r.max(drain_time(&t.lgkm, lgkm)?);
    }
    Some(r)
}

/// The issue entry of the wave's next instruction.
fn next_info(slot: &Slot, program: &Program, table: &IssueTable) -> IssueInfo {
    if let Some(a) = slot.timing.ahead.front() {
        return table.get(a.opcode as usize);
    }
    program
        .inst_at(slot.wave.pc)
        .map_or(IssueInfo::INTERNAL, |ci| {
            table.get(ci.inst.opcode() as usize)
        })
}

/// The earliest ready cycle per issue unit of the waves in wave slots `slots`
/// (`u64::MAX`: no wave of that unit).
fn unit_minima(
    slots: &[usize],
    ready: &[Option<u64>],
    infos: &[Option<IssueInfo>],
) -> [u64; IssueUnit::COUNT] {
    let mut m = [u64::MAX; IssueUnit::COUNT];
    for &k in slots {
        if let (Some(r), Some(info)) = (ready[k], infos[k]) {
            let u = info.unit.index();
            m[u] = m[u].min(r);
        }
    }
    m
}

/// The next cycle after `c` at which a wave of SIMD `simd` may issue (`u64::MAX`: none),
/// from the earliest ready cycle of its waves per issue unit (`minima`) and the units'
/// free cycles. The earliest over its waves of max(ready, unit free) is the earliest over
/// units of max(the unit's earliest ready wave, the unit's free cycle); rounding up to
/// the SIMD's turn keeps the order, so this is the earliest over its waves of their own
/// next turns. While its inputs stay the same it stays the same for any later `c` below
/// it, so it is recomputed only where they change.
fn simd_next(
    simd: usize,
    minima: &[u64; IssueUnit::COUNT],
    timed: &TimedState,
    params: &TimedParams,
    c: u64,
    period: u64,
) -> u64 {
    let mut earliest = u64::MAX;
    for unit in IssueUnit::ALL {
        let r = minima[unit.index()];
        if r == u64::MAX {
            continue;
        }
        let Some(free) = timed.unit_free(simd, unit, params) else {
            continue;
        };
        earliest = earliest.min(r.max(free));
    }
    if earliest == u64::MAX {
        return u64::MAX;
    }
    next_turn(earliest.max(c + 1), simd as u64 % period, period)
}

/// The first cycle at or after `t` that is `turn` modulo `period`.
#[inline]
fn next_turn(t: u64, turn: u64, period: u64) -> u64 {
    let phase = if period.is_power_of_two() {
        t & (period - 1)
    } else {
        t % period
    };
    let wait = if turn >= phase {
        turn - phase
    } else {
        turn + period - phase
    };
    t + wait
}

/// Timing-mode state of a compute unit.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimedState {
    /// First cycle not yet scheduled.
    processed_until: u64,
    /// Last wave slot that issued, per SIMD.
    rr: Vec<u32>,
    /// Next L2 access tag (0 is never used).
    next_tag: u64,
    /// L2 accesses in flight: tag -> (dispatch, wave slot, issue cycle, cycles from the
    /// L2's answer to the data in registers, lines).
    inflight: BTreeMap<u64, (DispatchSeq, u32, u64, u64, u64)>,
    /// Lines outstanding at the L2 (the L1's busy MSHRs).
    #[serde(default)]
    inflight_lines: u64,
    /// Per SIMD: first cycle its VALU is free.
    #[serde(default)]
    valu_free: Vec<u64>,
    /// Per SIMD: first cycle its matrix core is free.
    #[serde(default)]
    mfma_free: Vec<u64>,
    /// First cycle the vector memory pipeline is free.
    #[serde(default)]
    vmem_free: u64,
    /// First cycle the LDS pipeline is free.
    #[serde(default)]
    lds_free: u64,
    /// Busy cycles per unit: VALU (summed over SIMDs), MFMA (summed), vector memory, LDS.
    #[serde(default)]
    busy: [u64; 4],
    /// LDS cycles beyond the conflict-free minimum.
    #[serde(default)]
    lds_conflict_cycles: u64,
    /// Opportunities a vector memory instruction lost because every L1 MSHR was busy.
    #[serde(default)]
    stall_mshr: u64,
    stall_waitcnt: u64,
    stall_issue: u64,
    stall_deferred: u64,
    stall_barrier: u64,
    mem_requests: u64,
    mem_latency_cycles: u64,
}

impl TimedState {
    /// Writes the timing statistics.
    pub(super) fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("stall_waitcnt", &Counter::from_count(self.stall_waitcnt));
        out.counter("stall_issue", &Counter::from_count(self.stall_issue));
        out.counter("stall_deferred", &Counter::from_count(self.stall_deferred));
        out.counter("stall_barrier", &Counter::from_count(self.stall_barrier));
        out.counter("mem_requests", &Counter::from_count(self.mem_requests));
        out.counter(
            "mem_latency_cycles",
            &Counter::from_count(self.mem_latency_cycles),
        );
        out.counter("busy_valu", &Counter::from_count(self.busy[0]));
        out.counter("busy_mfma", &Counter::from_count(self.busy[1]));
        out.counter("busy_vmem", &Counter::from_count(self.busy[2]));
        out.counter("busy_lds", &Counter::from_count(self.busy[3]));
        out.counter(
            "lds_conflict_cycles",
            &Counter::from_count(self.lds_conflict_cycles),
        );
        out.counter("stall_mshr", &Counter::from_count(self.stall_mshr));
    }

    /// Occupies SIMD `simd`'s VALU or matrix core with the instruction (issue entry
    /// `info`, `passes` matrix-core passes if an MFMA) issued at cycle `c`; other units
    /// are left alone.
    fn occupy_alu(&mut self, simd: usize, info: IssueInfo, passes: u16, c: u64) {
        match info.unit {
            IssueUnit::Valu => {
                self.valu_free[simd] = c + u64::from(info.busy);
                self.busy[0] += u64::from(info.busy);
            }
            IssueUnit::Mfma => {
                let passes = u64::from(passes);
                self.mfma_free[simd] = c + passes;
                self.valu_free[simd] = c + u64::from(info.cycles);
                self.busy[1] += passes;
            }
            _ => {}
        }
    }

    /// The first cycle `unit` of SIMD `simd` can take an instruction, `None` while it
    /// waits for an answer (every L1 MSHR busy).
    fn unit_free(&self, simd: usize, unit: IssueUnit, params: &TimedParams) -> Option<u64> {
        Some(match unit {
            IssueUnit::Valu => self.valu_free[simd],
            IssueUnit::Mfma => self.mfma_free[simd].max(self.valu_free[simd]),
            IssueUnit::Vmem if self.inflight_lines >= params.l1_mshrs => return None,
            // Instructions queue in front of the vector memory pipeline (up to
            // `vmem_queue` cycles of work), so one SIMD's access does not hold the
            // others' issue turns.
            IssueUnit::Vmem => self.vmem_free.saturating_sub(params.vmem_queue),
            IssueUnit::Lds => self.lds_free,
            IssueUnit::Scalar | IssueUnit::Branch | IssueUnit::Internal => 0,
        })
    }
}

/// What issuing an instruction needs besides the wave.
struct IssueCtx<'a> {
    params: &'a TimedParams,
    l1: &'a mut CacheModel,
    scalar: &'a mut CacheModel,
    timed: &'a mut TimedState,
    l2: &'a Port<MemMsg>,
    clock: &'a ClockDomain,
    line_bytes: u64,
}

impl IssueCtx<'_> {
    /// Ticks from now until cycle `c`.
    fn delay(&self, ctx: &Context<'_>, c: u64) -> Tick {
        Tick(self.clock.cycles(c).0.saturating_sub(ctx.now().0))
    }

    /// Times the memory side of the instruction wave slot `slot_no` issued at cycle `c`;
    /// `lds` is the LDS pipeline's cycles for an LDS access. A vector access starts in
    /// the vector memory pipeline when the accesses queued before it are through, and
    /// keeps it busy one cycle per L1 line (tag lookups), at least the address
    /// processing. Returns the cycle the pipeline is free again (0 for other
    /// instructions).
    #[allow(clippy::too_many_arguments)]
    fn memory(
        &mut self,
        ctx: &mut Context<'_>,
        info: IssueInfo,
        mem: &mut CuMemory,
        t: &mut WaveTiming,
        seq: DispatchSeq,
        slot_no: u32,
        c: u64,
        lds: u64,
        counts: &mut DispatchCounters,
    ) -> u64 {
        if info.mem != MemClass::None {
            t.retire(c); // keeps the counters short for waves that never wait
        }
        let mut sent = c;
        let mut pipe_end = 0;
        let (to_l2, hit_latency) = match info.mem {
            MemClass::None => return 0,
            MemClass::Lds => {
                t.lgkm.push_back(Outstanding {
                    tag: 0,
                    done: Some(c + lds + self.params.lds_latency),
                });
                return 0;
            }
            MemClass::Vector | MemClass::Flat => {
                let shift = self.line_bytes.trailing_zeros();
                let start = self.timed.vmem_free.max(c);
                let pipe = (mem.lines.len() as u64).max(u64::from(info.cycles));
                sent = start;
                pipe_end = start + pipe;
                let mut to_l2 = Vec::new();
                for l in mem.lines.drain(..) {
                    // The vector L1 is write-through and does not allocate on a store miss.
                    let (kind, allocate) = if l.write {
                        (LineKind::Write, false)
                    } else {
                        (LineKind::Read, true)
                    };
                    let hit = self
                        .l1
                        .access(LineAddr(l.line >> shift), kind, allocate)
                        .is_hit();
                    if hit {
                        counts.l1.hits += 1;
                    } else {
                        counts.l1.misses += 1;
                    }
                    if l.write || !hit {
                        to_l2.push(l);
                    }
                }
                (to_l2, pipe + self.params.l1_hit_latency)
            }
            MemClass::Scalar => {
                let mut to_l2: Vec<LineAccess> = Vec::new();
                for line in mem.scalar_lines.drain(..) {
                    if self
                        .scalar
                        .access(LineAddr(line / SCALAR_LINE), LineKind::Read, true)
                        .is_hit()
                    {
                        counts.scalar.hits += 1;
                    } else {
                        counts.scalar.misses += 1;
                        let l2_line = line & !(self.line_bytes - 1);
                        if to_l2.last().is_none_or(|l| l.line != l2_line) {
                            to_l2.push(LineAccess {
                                line: l2_line,
                                write: false,
                            });
                        }
                    }
                }
                (to_l2, self.params.scalar_hit_latency)
            }
        };
        let entry = if to_l2.is_empty() {
            Outstanding {
                tag: 0,
                done: Some(sent + hit_latency),
            }
        } else {
            self.timed.next_tag += 1;
            let tag = self.timed.next_tag;
            let lines = to_l2.iter().filter(|l| !l.write).count() as u64;
            self.timed.inflight_lines += lines;
            self.timed
                .inflight
                .insert(tag, (seq, slot_no, sent, hit_latency, lines));
            let extra = self.delay(ctx, sent);
            ctx.send_after(
                self.l2,
                extra,
                MemMsg::Access {
                    tag,
                    seq,
                    lines: to_l2,
                    reply: true,
                },
            );
            Outstanding { tag, done: None }
        };
        match info.mem {
            MemClass::Vector => t.vm.push_back(entry),
            MemClass::Flat => {
                t.vm.push_back(entry);
                t.lgkm.push_back(entry);
            }
            _ => t.lgkm.push_back(entry),
        }
        pipe_end
    }
}

/// The counters of dispatch `seq`, created on first use.
fn counters_of(
    counters: &mut BTreeMap<DispatchSeq, (DispatchCounters, Vec<u64>)>,
    seq: DispatchSeq,
) -> &mut DispatchCounters {
    &mut counters
        .entry(seq)
        .or_insert_with(|| (DispatchCounters::default(), vec![0; OPCODES]))
        .0
}

/// The per-dispatch counters of the resident groups, taken out of the map for one
/// scheduling window (a linear search over one or two dispatches beats a map lookup
/// per instruction).
struct WindowCounters(Vec<(DispatchSeq, (DispatchCounters, Vec<u64>))>);

impl WindowCounters {
    fn take(
        map: &mut BTreeMap<DispatchSeq, (DispatchCounters, Vec<u64>)>,
        groups: &[super::Group],
    ) -> WindowCounters {
        let mut v: Vec<(DispatchSeq, (DispatchCounters, Vec<u64>))> = Vec::new();
        for g in groups {
            let seq = g.launch.seq;
            let i = match v.iter().position(|(s, _)| *s == seq) {
                Some(i) => i,
                None => {
                    let mut entry = map
                        .remove(&seq)
                        .unwrap_or_else(|| (DispatchCounters::default(), vec![0; OPCODES]));
                    // Occupancy: one sample per scheduling window and dispatch.
                    entry.0.quanta += 1;
                    v.push((seq, entry));
                    v.len() - 1
                }
            };
            v[i].1 .0.resident_wave_quanta += g
                .waves
                .iter()
                .filter(|s| s.wave.status != WaveStatus::Ended)
                .count() as u64;
        }
        WindowCounters(v)
    }

    fn get(&mut self, seq: DispatchSeq) -> &mut (DispatchCounters, Vec<u64>) {
        let i = match self.0.iter().position(|(s, _)| *s == seq) {
            Some(i) => i,
            None => {
                self.0
                    .push((seq, (DispatchCounters::default(), vec![0; OPCODES])));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }

    fn put_back(self, map: &mut BTreeMap<DispatchSeq, (DispatchCounters, Vec<u64>)>) {
        map.extend(self.0);
    }
}

/// A fault met while scheduling: (group, wave index, message, address).
type Fault = (usize, usize, String, Option<u64>);

impl ComputeUnit {
    /// The program of each resident group (by its first wave's pc, like functional mode).
    fn group_programs(&self) -> Vec<Option<Arc<Program>>> {
        self.state
            .groups
            .iter()
            .map(|g| {
                g.waves
                    .first()
                    .and_then(|s| self.shared.program_at(s.issue_pc()))
                    .or_else(|| {
                        g.waves
                            .iter()
                            .find_map(|s| self.shared.program_at(s.issue_pc()))
                    })
            })
            .collect()
    }

    /// Wave slot -> (group, wave index) of the resident waves.
    fn slot_map(&self) -> Vec<Option<(usize, usize)>> {
        let mut map = vec![None; self.cap.slots as usize];
        for (g, group) in self.state.groups.iter().enumerate() {
            for wi in 0..group.waves.len() {
                if let Some(m) = map.get_mut(group.launch.first_slot as usize + wi) {
                    *m = Some((g, wi));
                }
            }
        }
        map
    }

    /// Schedules one window of cycles (see the [module docs](self)).
    pub(super) fn timed_run(&mut self, ctx: &mut Context<'_>) {
        self.state.timer = None;
        self.state.timer_at = None;
        let (Some(timing), Some(mut mem)) = (self.timing.take(), self.mem.take()) else {
            return;
        };
        let (params, table) = (&timing.0, &timing.1);
        let start = self.cycle(ctx.now()).max(self.state.timed.processed_until);
        let end = self.window_end(ctx, start, params);
        let simds = self.cap.simds as usize;
        let slots = self.cap.slots as usize;
        if self.state.timed.rr.len() != simds {
            self.state.timed.rr = (0..simds as u32).collect();
        }
        let programs = self.group_programs();
        let by_slot = self.slot_map();
        let mut fault: Option<Fault> = None;
        let mut c = start;
        let CuState {
            l1,
            scalar,
            groups,
            counters: counter_map,
            timed,
            instructions,
            deferred,
            ..
        } = &mut self.state;
        let mut counters = WindowCounters::take(counter_map, groups);
        let mut issue = IssueCtx {
            params,
            l1,
            scalar,
            timed,
            l2: &self.l2,
            clock: &self.clock,
            line_bytes: self.line_bytes,
        };
        // Each slot's ready cycle and next instruction's issue entry. Within a window they
        // change only when its wave issues or leaves a barrier (answers arrive in other
        // events), so they are computed once here and again after those, not per cycle.
        let mut ready: Vec<Option<u64>> = Vec::with_capacity(slots);
        let mut infos: Vec<Option<IssueInfo>> = Vec::with_capacity(slots);
        for at in &by_slot {
            let entry = at.and_then(|(g, wi)| {
                let program = programs[g].as_deref()?;
                let slot = &mut groups[g].waves[wi];
                let info = next_info(slot, program, table);
                Some((ready_cycle(slot, program, table, start), info))
            });
            ready.push(entry.and_then(|e| e.0));
            infos.push(entry.map(|e| e.1));
        }
        let period = params.issue_period.max(1);
        let timed_state = &mut *issue.timed;
        if timed_state.valu_free.len() != simds {
            timed_state.valu_free = vec![0; simds];
            timed_state.mfma_free = vec![0; simds];
        }
        // Each SIMD's occupied wave slots (slot `k` is on SIMD `k % simds`), ascending.
        let occupied: Vec<Vec<usize>> = (0..simds)
            .map(|simd| {
                (simd..slots)
                    .step_by(simds)
                    .filter(|&k| matches!(by_slot.get(k), Some(Some(_))))
                    .collect()
            })
            .collect();
        // Per SIMD, the earliest ready cycle of its waves per issue unit: the next cycle
        // at which some wave may issue follows from these and the units' free cycles
        // (see `next_turn` below), refreshed only where a wave issued or left a barrier.
        let mut minima: Vec<[u64; IssueUnit::COUNT]> = occupied
            .iter()
            .map(|slots| unit_minima(slots, &ready, &infos))
            .collect();
        // Per SIMD, the next cycle at which one of its waves may issue, as seen after the
        // cycle processed last (`u64::MAX`: none). Its inputs are the SIMD's `minima` and
        // its units' free cycles; it is recomputed where those change (the SIMD's turn,
        // an access of the shared vector memory or LDS pipeline, a barrier release), and
        // otherwise stays what recomputing it would give (see `simd_next`).
        let mut nexts: Vec<u64> = (0..simds)
            .map(|simd| simd_next(simd, &minima[simd], issue.timed, params, start, period))
            .collect();
        // Whether a wave reached a barrier or ended since the last check (the first check
        // of the window looks at every group, whatever happened between windows).
        let mut barrier_check = true;
        'cycles: while c < end {
            let mut issued = false;
            // Whether a shared pipeline (vector memory, LDS, the L1 MSHRs) changed.
            let mut shared = false;
            // The SIMDs whose turn this cycle is.
            let mut turn = (c % period) as usize;
            while turn < simds {
                let simd = turn;
                turn += period as usize;
                let occupied = &occupied[simd];
                if occupied.is_empty() {
                    continue;
                }
                // One instruction per category per opportunity, each from its own wave.
                let mut used = [false; IssueUnit::COUNT];
                let mut simd_issued = false;
                // The SIMD's occupied slots in round-robin order after the last one that issued.
                let first = occupied.partition_point(|&k| k <= issue.timed.rr[simd] as usize);
                for j in 0..occupied.len() {
                    let i = if first + j >= occupied.len() {
                        first + j - occupied.len()
                    } else {
                        first + j
                    };
                    let k = occupied[i];
                    let (Some(Some((g, wi))), Some(r), Some(Some(info))) =
                        (by_slot.get(k).copied(), ready[k], infos.get(k).copied())
                    else {
                        continue;
                    };
                    if r > c {
                        continue;
                    }
                    let free = issue.timed.unit_free(simd, info.unit, params);
                    if used[info.unit.index()] || free.is_none_or(|f| f > c) {
                        if info.unit == IssueUnit::Vmem && free.is_none() {
                            issue.timed.stall_mshr += 1;
                        }
                        // The wave waits for the next turn: a whole issue period.
                        issue.timed.stall_issue += period;
                        counters.get(groups[g].launch.seq).0.timing.stall_issue += period;
                        continue;
                    }
                    used[info.unit.index()] = true;
                    issue.timed.rr[simd] = k as u32;
                    issued = true;
                    simd_issued = true;
                    let Some(program) = programs[g].as_deref() else {
                        continue;
                    };
                    let super::Group {
                        launch, waves, lds: group_lds, ..
                    } = &mut groups[g];
                    let seq = launch.seq;
                    let slot = &mut waves[wi];
                    if slot.timing.ahead.is_empty()
                        && program.inst_at(slot.wave.pc).is_some_and(runs_ahead)
                    {
                        run_ahead(slot, program, table, &mut mem, group_lds);
                    }
                    if let Some(a) = slot.timing.ahead.pop_front() {
                        // An instruction that ran ahead: the bookkeeping of its issue
                        // (what `step` and the code below did for it at this cycle).
                        let counts = counters.get(seq);
                        if let Some(n) = counts.1.get_mut(a.opcode as usize) {
                            *n += 1;
                        }
                        if a.faulted {
                            let (message, addr) = slot.timing.fault.take().unwrap_or_default();
                            fault = Some((g, wi, message, addr));
                            break 'cycles;
                        }
                        instructions.add(1);
                        slot.timing.ready_at = c + u64::from(a.own);
                        issue.timed.occupy_alu(simd, info, a.passes, c);
                    } else {
                        // It may use a shared pipeline, or reach a barrier.
                        shared = true;
                        let words: [u32; 2] = program.inst_at(slot.wave.pc).map_or([0, 0], |ci| {
                            let w = ci.inst.words();
                            [
                                w.first().copied().unwrap_or(0),
                                w.get(1).copied().unwrap_or(0),
                            ]
                        });
                        // The LDS pipeline's cycles, from the lanes' addresses before they change.
                        let lds = if info.unit == IssueUnit::Lds && (words[0] >> 16) & 1 == 0 {
                            let addr = &slot.wave.vgpr[(words[1] & 0xff) as usize];
                            let cycles = lds_cycles(
                                info.lds,
                                addr,
                                slot.wave.exec(),
                                (words[0] & 0xff, (words[0] >> 8) & 0xff),
                                params.lds_banks,
                            );
                            let ideal = (u64::from(info.lds.bytes)
                                * u64::from(slot.wave.exec().count_ones())
                                * if info.lds.pair { 2 } else { 1 })
                            .div_ceil(4 * u64::from(params.lds_banks.max(1)))
                            .max(1);
                            issue.timed.lds_conflict_cycles += cycles.saturating_sub(ideal);
                            cycles
                        } else {
                            0
                        };
                        let counts = counters.get(seq);
                        if info.waitcnt {
                            let waited = c - slot.timing.ready_at.max(slot.wake).min(c);
                            issue.timed.stall_waitcnt += waited;
                            counts.0.timing.stall_waitcnt += waited;
                        }
                        let realtime = crate::gpu::clock::reference_ticks(self.clock.cycles(c));
                        let mut env = StepEnv {
                            mem: &mut mem,
                            lds: group_lds,
                            clock: c,
                            realtime,
                            counts: Some(&mut counts.1),
                        };
                        match step(&mut slot.wave, program, &mut env, 1) {
                            Ok(out) => {
                                instructions.add(out.executed);
                                let own = if info.nop {
                                    u64::from(words[0] & 0xf) + 1
                                } else {
                                    u64::from(info.cycles)
                                };
                                slot.timing.ready_at = c + own;
                                let t = &mut *issue.timed;
                                match info.unit {
                                    IssueUnit::Valu => t.occupy_alu(simd, info, 0, c),
                                    IssueUnit::Mfma => t.occupy_alu(
                                        simd,
                                        info,
                                        info.mfma_busy(program.target(), &words),
                                        c,
                                    ),
                                    IssueUnit::Lds => {
                                        t.lds_free = c + lds;
                                        t.busy[3] += lds;
                                    }
                                    _ => {}
                                }
                                if matches!(
                                    slot.wave.status,
                                    WaveStatus::Barrier | WaveStatus::Ended
                                ) {
                                    barrier_check = true;
                                }
                                match out.stop {
                                    StepStop::Sleep { cycles } => slot.wake = c + cycles,
                                    StepStop::Barrier => slot.timing.waiting_since = c,
                                    StepStop::WaitMemory => {
                                        slot.timing.waiting_since = c;
                                        mem.lines.clear();
                                        if let Some(req) = slot.wave.take_request() {
                                            deferred.inc();
                                            let system = goes_to_home(mem.target, &req, &mut mem);
                                            let tag = (u64::from(launch.first_slot) + wi as u64)
                                                | (seq.0 << 8);
                                            let extra = issue.delay(ctx, c);
                                            ctx.send_after(
                                                &self.l2,
                                                extra,
                                                MemMsg::Request {
                                                    tag,
                                                    seq,
                                                    req,
                                                    system,
                                                },
                                            );
                                        }
                                    }
                                    StepStop::Budget | StepStop::Ended => {}
                                }
                                if out.stop != StepStop::WaitMemory {
                                    let free = issue.memory(
                                        ctx,
                                        info,
                                        &mut mem,
                                        &mut slot.timing,
                                        seq,
                                        k as u32,
                                        c,
                                        lds,
                                        &mut counts.0,
                                    );
                                    if free > 0 {
                                        let start = issue.timed.vmem_free.max(c);
                                        issue.timed.busy[2] += free - start;
                                        issue.timed.vmem_free = free;
                                    }
                                }
                            }
                            Err(e) => {
                                let addr = match &e {
                                    amdgpu_isa::exec::ExecFault::Memory { addr, .. } => Some(*addr),
                                    _ => None,
                                };
                                fault = Some((g, wi, e.to_string(), addr));
                                break 'cycles;
                            }
                        }
                        mem.lines.clear();
                        mem.scalar_lines.clear();
                    }
                    infos[k] = Some(next_info(&groups[g].waves[wi], program, table));
                    ready[k] = ready_cycle(&mut groups[g].waves[wi], program, table, c);
                }
                if simd_issued {
                    minima[simd] = unit_minima(occupied, &ready, &infos);
                }
                nexts[simd] = simd_next(simd, &minima[simd], issue.timed, params, c, period);
            }
            if issued && barrier_check {
                barrier_check = false;
                // Barriers: release a group whose live waves all arrived.
                let mut released = false;
                for (group, program) in groups.iter_mut().zip(&programs) {
                    let live = group
                        .waves
                        .iter()
                        .filter(|s| s.wave.status != WaveStatus::Ended)
                        .count();
                    let at_barrier = group
                        .waves
                        .iter()
                        .filter(|s| s.wave.status == WaveStatus::Barrier)
                        .count();
                    if live > 0 && at_barrier == live {
                        released = true;
                        let first = group.launch.first_slot as usize;
                        for (wi, s) in group
                            .waves
                            .iter_mut()
                            .enumerate()
                            .filter(|(_, s)| s.wave.status == WaveStatus::Barrier)
                        {
                            issue.timed.stall_barrier += c - s.timing.waiting_since;
                            counters.get(group.launch.seq).0.timing.stall_barrier +=
                                c - s.timing.waiting_since;
                            s.wave.status = WaveStatus::Running;
                            s.timing.ready_at = s.timing.ready_at.max(c + 1);
                            if let (Some(r), Some(program)) =
                                (ready.get_mut(first + wi), program.as_deref())
                            {
                                *r = ready_cycle(s, program, table, c);
                            }
                        }
                    }
                }
                if released {
                    for (m, slots) in minima.iter_mut().zip(&occupied) {
                        *m = unit_minima(slots, &ready, &infos);
                    }
                    shared = true;
                }
            }
            if shared {
                for (simd, n) in nexts.iter_mut().enumerate() {
                    *n = simd_next(simd, &minima[simd], issue.timed, params, c, period);
                }
            }
            // The next cycle at which some wave may issue: the earliest SIMD's.
            let next = nexts.iter().copied().min().unwrap_or(u64::MAX);
            if next == u64::MAX || next >= end {
                break;
            }
            c = next;
        }
        counters.put_back(counter_map);
        let scheduled_to = if fault.is_some() { c + 1 } else { end };
        self.state.timed.processed_until = scheduled_to;
        self.mem = Some(mem);
        self.timing = Some(timing);
        self.state.quanta.inc();
        if let Some((g, wi, message, addr)) = fault {
            self.fault_group(ctx, g, wi, message, addr);
        }
        self.retire_groups(ctx, scheduled_to);
        self.arm_next(ctx, scheduled_to);
    }

    /// The end of the window that starts at `start` (see the [module docs](self)).
    fn window_end(&self, ctx: &Context<'_>, start: u64, params: &TimedParams) -> u64 {
        let longest = start + params.window;
        // Cycles from sending on the L2 link to the earliest answer, less one so that the
        // answer arrives strictly after the window's end.
        let Some(round_trip) = ctx.link_latency(&self.l2).map(|l| {
            self.clock
                .to_cycles(Tick(l.0.saturating_mul(2)))
                .saturating_sub(1)
                .max(1)
        }) else {
            return longest;
        };
        // The earliest arrival of an answer sent at `sent`; an overdue one may be seen
        // late by a sixteenth of its age (at least `answer_slack` cycles).
        let allowed = |sent: u64| {
            (sent + round_trip).max(start + params.answer_slack.max((start - sent.min(start)) / 16))
        };
        let mut end = longest.min(start + round_trip);
        for &(_, _, issued, _, _) in self.state.timed.inflight.values() {
            end = end.min(allowed(issued));
        }
        for slot in self.state.groups.iter().flat_map(|g| &g.waves) {
            if slot.wave.status == WaveStatus::WaitMemory {
                end = end.min(allowed(slot.timing.waiting_since));
            }
        }
        end
    }

    /// Ends every group whose waves all ended and whose memory instructions are all
    /// answered; its `GroupDone` leaves when the last one completes.
    fn retire_groups(&mut self, ctx: &mut Context<'_>, c: u64) {
        let mut g = 0;
        while g < self.state.groups.len() {
            let group = &self.state.groups[g];
            let ended = group
                .waves
                .iter()
                .all(|s| s.wave.status == WaveStatus::Ended);
            if !ended {
                g += 1;
                continue;
            }
            let drained = group
                .waves
                .iter()
                .try_fold(0u64, |m, s| s.timing.drained().map(|d| m.max(d)));
            // An ended wave's `ready_at` is the cycle after its `s_endpgm` issued.
            let last_end = group
                .waves
                .iter()
                .map(|s| s.timing.ready_at)
                .max()
                .unwrap_or(c);
            match (ended, drained) {
                (true, Some(done)) => {
                    let done_group = self.state.groups.remove(g);
                    let at = self.clock.cycles(done.max(last_end));
                    let extra = Tick(at.0.saturating_sub(ctx.now().0));
                    ctx.send_after(
                        &self.cp,
                        extra,
                        CuMsg::GroupDone {
                            seq: done_group.launch.seq,
                            first_slot: done_group.launch.first_slot,
                        },
                    );
                }
                _ => g += 1,
            }
        }
    }

    /// Arms the timer for the first cycle at or after `from` at which a wave may issue.
    fn arm_next(&mut self, ctx: &mut Context<'_>, from: u64) {
        let Some(timing) = self.timing.take() else {
            return;
        };
        let programs = self.group_programs();
        let mut next = u64::MAX;
        for (g, group) in self.state.groups.iter_mut().enumerate() {
            let Some(program) = programs[g].as_deref() else {
                continue;
            };
            for (wi, slot) in group.waves.iter_mut().enumerate() {
                // A vector memory instruction waiting for a free L1 MSHR is woken by the
                // answer that frees one.
                let info = next_info(slot, program, &timing.1);
                let simd = (group.launch.first_slot as usize + wi) % self.cap.simds.max(1) as usize;
                if !self.state.timed.valu_free.is_empty()
                    && self
                        .state
                        .timed
                        .unit_free(simd, info.unit, &timing.0)
                        .is_none()
                {
                    continue;
                }
                if let Some(r) = ready_cycle(slot, program, &timing.1, from) {
                    next = next.min(r.max(from));
                }
            }
        }
        self.timing = Some(timing);
        if next != u64::MAX {
            let at = self.clock.cycles(next);
            self.arm(ctx, at);
        }
    }

    /// The L2 answered timed access `tag`.
    pub(super) fn on_access_done(&mut self, tag: u64, ctx: &mut Context<'_>) {
        let Some((seq, slot_no, issued, back, lines)) = self.state.timed.inflight.remove(&tag)
        else {
            return;
        };
        self.state.timed.inflight_lines = self.state.timed.inflight_lines.saturating_sub(lines);
        let now = self.cycle(ctx.now());
        // The data passes the L1 (or scalar cache) pipeline on its way back.
        let c = now + back;
        self.state.timed.mem_requests += 1;
        self.state.timed.mem_latency_cycles += c.saturating_sub(issued);
        let t = &mut counters_of(&mut self.state.counters, seq).timing;
        t.mem_requests += 1;
        t.mem_latency_cycles += c.saturating_sub(issued);
        let found = self.state.groups.iter_mut().find(|g| {
            g.launch.seq == seq
                && slot_no >= g.launch.first_slot
                && slot_no < g.launch.first_slot + g.launch.waves
        });
        let Some(group) = found else { return }; // the group faulted meanwhile
        if let Some(slot) = group
            .waves
            .get_mut((slot_no - group.launch.first_slot) as usize)
        {
            for o in slot
                .timing
                .vm
                .iter_mut()
                .chain(slot.timing.lgkm.iter_mut())
                .filter(|o| o.tag == tag)
            {
                o.done = Some(c);
            }
        }
        let from = now.max(self.state.timed.processed_until);
        self.retire_groups(ctx, from);
        self.arm_next(ctx, from);
    }

    /// A deferred access of wave `wi` of group `g` was answered (the wave runs again).
    pub(super) fn on_deferred_done(&mut self, g: usize, wi: usize, ctx: &mut Context<'_>) {
        let c = self.cycle(ctx.now());
        let from = c.max(self.state.timed.processed_until);
        if let Some(group) = self.state.groups.get_mut(g) {
            let seq = group.launch.seq;
            if let Some(slot) = group.waves.get_mut(wi) {
                let waited = c.saturating_sub(slot.timing.waiting_since);
                self.state.timed.stall_deferred += waited;
                counters_of(&mut self.state.counters, seq)
                    .timing
                    .stall_deferred += waited;
                slot.timing.ready_at = slot.timing.ready_at.max(c + 1);
            }
        }
        self.arm_next(ctx, from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_drain_in_order() {
        let o = |done| Outstanding { tag: 1, done };
        let q: VecDeque<Outstanding> = [o(Some(50)), o(None), o(Some(10))].into_iter().collect();
        // vmcnt(2): only the oldest must complete.
        assert_eq!(drain_time(&q, 2), Some(50));
        // vmcnt(1): the second has no time yet, so the wave waits for an answer.
        assert_eq!(drain_time(&q, 1), None);
        assert_eq!(drain_time(&q, 3), Some(0));
        let mut t = WaveTiming {
            vm: q,
            ..WaveTiming::default()
        };
        t.retire(60);
        assert_eq!(
            t.vm.len(),
            2,
            "the unanswered second keeps the third counted"
        );
        assert_eq!(t.drained(), None);
    }
}
