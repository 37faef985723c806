//! PHOLD, the standard synthetic benchmark of parallel discrete-event simulators,
//! as a registered model (`phold.lp`).
//!
//! N logical processes (LPs) start with K events each. Handling an event at time t
//! creates one new event at `t + lookahead + Exp(mean)`, sent with probability
//! `remote` to a uniformly chosen other LP (over a fabric whose latency is the
//! lookahead) and otherwise to the LP itself (a timer). Random numbers are
//! counter-based per LP ([`Draws`]): the i-th draw of an LP is a pure function of
//! (seed, LP, i), so results do not depend on scheduling. The model state digest
//! ([`digest`]) is the same for every thread count and partitioning.
//!
//! The exact specification (shared with the peer implementations in `benches/`):
//! - `mix64` is the SplitMix64 finalizer; LP i's key is
//!   `mix64(seed + (i + 1) * 0xD1B54A32D192ED03)`; draw c is
//!   `mix64(key + c * 0x9E3779B97F4A7C15)`; `unit(x) = (x >> 11) * 2^-53`.
//! - Each new event takes three draws x1, x2, x3: remote iff `unit(x1) < remote`
//!   (and N > 1); the remote destination is `(i + 1 + x2 % (N - 1)) % N`; the delay
//!   is `lookahead + trunc(mean * exponential(x3))` in ticks, where [`exponential`] is
//!   the standard exponential variate of one draw (256-layer ziggurat, see
//!   `phold::ziggurat`).
//! - Handling an event at time t: `count += 1; h = mix64(h ^ t ^ count.rotate_left(32))`.
//! - Digest: `d = 0; for i in 0..N: d = mix64(d ^ h_i ^ (count_i << 1) ^ i)`.

use serde::{Deserialize, Serialize};

use crate::component::{load_state, save_state, BuildContext, BuildError, Component, Event, Port};
use crate::engine::{Context, Simulation};
use crate::ids::{ComponentId, FabricMember};
use crate::params::ParamSet;
use crate::registry::{self, ComponentType, MessageKind, PortDir, PortSpec, StatKind, StatSpec};
use crate::stats::{Counter, StatsSink};
use crate::time::Tick;
use crate::topology::Topology;

mod ziggurat;

pub use ziggurat::{exponential, Ziggurat};

/// The SplitMix64 finalizer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in `[0, 1)` from 53 bits of `x`.
#[inline]
pub fn unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The counter-based random stream of one LP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draws {
    key: u64,
    counter: u64,
}

impl Draws {
    /// The stream of LP `lp` under `seed`.
    pub fn new(seed: u64, lp: u64) -> Draws {
        Draws { key: mix64(seed.wrapping_add((lp + 1).wrapping_mul(0xD1B5_4A32_D192_ED03))), counter: 0 }
    }
    /// The next draw.
    #[inline]
    pub fn draw(&mut self) -> u64 {
        let x = mix64(self.key.wrapping_add(self.counter.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        self.counter += 1;
        x
    }
}

/// PHOLD workload parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PholdConfig {
    /// Number of LPs.
    pub lps: u32,
    /// Initial events per LP.
    pub events_per_lp: u32,
    /// Probability that a new event goes to another LP.
    pub remote: f64,
    /// Minimum delay of every event (and the fabric latency), at least one tick.
    pub lookahead: Tick,
    /// Mean of the exponential part of the delay.
    pub mean: Tick,
    /// End time: events at or after it are never handled.
    pub end: Tick,
    /// Random seed.
    pub seed: u64,
}

impl Default for PholdConfig {
    /// 1024 LPs x 4 events, 25% remote, lookahead 1 ns, mean 1 ns, end 3000 ns.
    fn default() -> Self {
        PholdConfig {
            lps: 1024,
            events_per_lp: 4,
            remote: 0.25,
            lookahead: Tick::ns(1),
            mean: Tick::ns(1),
            end: Tick::ns(3000),
            seed: 1,
        }
    }
}

/// The topology of a PHOLD run: `lp[0..N]` on one fabric whose latency is the
/// lookahead, with the end time as `max_ticks`. An LP's number is its member index
/// on the fabric.
pub fn topology(cfg: &PholdConfig) -> Topology {
    let mut t = Topology::new();
    let mut members = Vec::with_capacity(cfg.lps as usize);
    let params = LpParams {
        events: cfg.events_per_lp,
        remote: cfg.remote,
        lookahead: cfg.lookahead,
        mean: cfg.mean,
        seed: cfg.seed,
    }
    .to_params();
    for i in 0..cfg.lps {
        let id = t.add_component(format!("lp[{i}]"), "phold.lp", params.clone());
        members.push((id, "net".to_string()));
    }
    t.add_fabric(members, cfg.lookahead);
    t.engine.max_ticks = Some(cfg.end);
    t
}

/// The 64-bit digest of the final state of every LP of `sim` (components `lp[i]` in
/// id order, as [`topology`] makes them).
pub fn digest(sim: &Simulation, lps: u32) -> u64 {
    (0..lps).fold(0u64, |d, i| {
        let (h, count) = sim.inspect(ComponentId(i), |lp: &PholdLp| (lp.state.h, lp.state.count)).unwrap_or((0, 0));
        mix64(d ^ h ^ (count << 1) ^ u64::from(i))
    })
}

/// A PHOLD event. It carries nothing: its time is all that matters.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct PholdEvent;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[repr(C)]
struct LpState {
    draws: Draws,
    count: u64,
    h: u64,
    remote_sent: Counter,
}

/// One PHOLD logical process.
///
/// Laid out so that what every event touches (the state, the remote test, the
/// delay's scale and tables) fills the first cache line, and the object starts on
/// one: an event then loads one or two lines of its LP, not three.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct PholdLp {
    state: LpState,
    /// `unit(x) < remote` as an integer test: `x >> 11 < remote_below` (0 when there
    /// is no other LP).
    remote_below: u64,
    mean: f64,
    exp: &'static Ziggurat,
    lookahead: Tick,
    net: Port<PholdEvent>,
    /// This LP's member index on the fabric: its number in the PHOLD spec.
    index: u32,
    n: u32,
    events: u32,
    seed: u64,
}

/// `x as u64` (truncation, saturating), through the one-instruction signed
/// conversion whenever `x` is in range for it (always, for PHOLD delays).
#[inline(always)]
fn trunc_ticks(x: f64) -> u64 {
    /// 2^63: the first value beyond the signed conversion.
    const SIGNED_END: f64 = 9_223_372_036_854_775_808.0;
    if (0.0..SIGNED_END).contains(&x) {
        // SAFETY: `x` is finite and in [0, 2^63), so its truncation fits an i64.
        unsafe { x.to_int_unchecked::<i64>() as u64 }
    } else {
        trunc_ticks_out_of_range(x)
    }
}

/// [`trunc_ticks`] for negative, huge and NaN values: Rust's saturating cast.
#[cold]
#[inline(never)]
fn trunc_ticks_out_of_range(x: f64) -> u64 {
    x as u64
}

/// The smallest 53-bit integer `k` with `unit(k << 11) >= p`, so that for every draw
/// `unit(x) < p` exactly when `x >> 11 < k` (`p * 2^53` is exact, and an integer is
/// below a real exactly when it is below the real's ceiling).
fn unit_threshold(p: f64) -> u64 {
    (p * (1u64 << 53) as f64).ceil().clamp(0.0, (1u64 << 53) as f64) as u64
}

/// The parameters of a PHOLD LP (`phold.lp`).
#[derive(Clone, Debug, PartialEq, crate::Params)]
pub struct LpParams {
    /// Events the LP starts with.
    #[param(default = 4, unit = "events")]
    pub events: u32,
    /// Probability that a new event goes to another LP.
    #[param(default = 0.25, range = 0.0..=1.0)]
    pub remote: f64,
    /// Minimum delay of a new event (the fabric's latency).
    #[param(default = Tick::ns(1))]
    pub lookahead: Tick,
    /// Mean of the exponential delay added to the lookahead.
    #[param(default = Tick::ns(1))]
    pub mean: Tick,
    /// Random seed.
    #[param(default = 1)]
    pub seed: u64,
}

impl PholdLp {
    fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
        let p: LpParams = ctx.typed()?;
        let net = ctx.port::<PholdEvent>("net")?;
        Ok(Box::new(PholdLp {
            net,
            index: 0,
            n: 0,
            seed: p.seed,
            events: p.events,
            remote_below: unit_threshold(p.remote),
            lookahead: p.lookahead,
            mean: p.mean.0 as f64,
            exp: Ziggurat::exponential(),
            state: LpState {
                draws: Draws::new(p.seed, 0),
                count: 0,
                h: 0,
                remote_sent: Counter::default(),
            },
        }))
    }

    /// Creates one new event, `now` being the current time.
    #[inline(always)]
    fn generate(&mut self, ctx: &mut Context<'_>) {
        let (x1, x2, x3) = (self.state.draws.draw(), self.state.draws.draw(), self.state.draws.draw());
        let extra = Tick(trunc_ticks(self.mean * self.exp.sample(x3)));
        if x1 >> 11 < self.remote_below {
            // (i + 1 + x2 % (n - 1)) % n, with the outer modulo as one subtraction:
            // the sum is below 2n.
            let n = u64::from(self.n);
            let sum = u64::from(self.index) + 1 + x2 % (n - 1);
            let dest = if sum >= n { sum - n } else { sum };
            self.state.remote_sent.inc();
            ctx.send_to_after(&self.net, FabricMember(dest as u32), extra, PholdEvent);
        } else {
            ctx.schedule(self.lookahead + extra, 0);
        }
    }
}

impl Component for PholdLp {
    fn init(&mut self, ctx: &mut Context<'_>) {
        self.n = ctx.fabric_size(&self.net).max(1);
        if self.n == 1 {
            // Remote means "to another LP": a lone LP keeps every event.
            self.remote_below = 0;
        }
        self.index = ctx.fabric_member(&self.net).map_or(0, |m| m.0);
    }

    fn startup(&mut self, ctx: &mut Context<'_>) {
        self.state.draws = Draws::new(self.seed, u64::from(self.index));
        for _ in 0..self.events {
            self.generate(ctx);
        }
    }

    #[inline]
    fn handle(&mut self, _event: Event, ctx: &mut Context<'_>) {
        let t = ctx.now().0;
        self.state.count += 1;
        self.state.h = mix64(self.state.h ^ t ^ self.state.count.rotate_left(32));
        self.generate(ctx);
    }

    fn stats(&self, out: &mut StatsSink<'_>) {
        out.counter("events", &Counter::from_count(self.state.count));
        out.counter("remote_sent", &self.state.remote_sent);
    }

    fn save(&self) -> Result<Vec<u8>, crate::component::StateError> {
        save_state(&self.state)
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), crate::component::StateError> {
        self.state = load_state(state)?;
        Ok(())
    }
}

crate::register_component!(ComponentType {
    name: "phold.lp",
    doc: "A PHOLD logical process: each event it handles creates one event at now + lookahead + Exp(mean), \
          sent to a random other LP with probability `remote`, else to itself.",
    params: LpParams::SPECS,
    validate: registry::validate_with::<LpParams>,
    estimate: registry::estimate_with::<LpParams>,
    ports: &[PortSpec {
        name: "net",
        doc: "fabric port to every LP",
        dir: PortDir::InOut,
        array: false,
        message: MessageKind::of::<PholdEvent>,
    }],
    stats: &[
        StatSpec { name: "events", kind: StatKind::Counter, unit: "events", doc: "events handled" },
        StatSpec { name: "remote_sent", kind: StatKind::Counter, unit: "events", doc: "events sent to other LPs" },
    ],
    build: PholdLp::build,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trunc_ticks_truncates_like_as() {
        let two_63 = 9_223_372_036_854_775_808.0;
        let edges = [two_63, 9.2e18, 9.3e18, 1e19, 2e19, f64::MAX, f64::INFINITY, f64::NAN, -1.0];
        for x in [0.0, -0.0, 0.4, 1.9, 1e3, 4.5e15].into_iter().chain(edges) {
            assert_eq!(trunc_ticks(x), x as u64, "{x}");
        }
    }

    #[test]
    fn unit_threshold_is_the_exact_integer_form_of_unit_below() {
        let ps = [0.0, 1e-300, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.9, 1.0 - f64::EPSILON, 1.0];
        for p in ps {
            let k = unit_threshold(p);
            // The boundary itself and its neighbours, and a stream of draws.
            let edges = [k.saturating_sub(1), k, k + 1].map(|j| j.min((1 << 53) - 1) << 11);
            let stream = (0..2000u64).map(|c| mix64(c.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            for x in edges.into_iter().chain(stream) {
                assert_eq!(unit(x) < p, x >> 11 < k, "p = {p}, x = {x:#x}");
            }
        }
    }
}
