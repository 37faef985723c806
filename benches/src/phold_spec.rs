//! The PHOLD model shared by every engine we compare, written down once.
//!
//! PHOLD is the classic synthetic parallel discrete-event benchmark: `N`
//! logical processes (LPs) each start with `K` pending events; handling an
//! event sends exactly one new event, to the same LP or (with probability `P`)
//! to a uniformly chosen other LP, after a delay of `lookahead + Exp(mean)`.
//!
//! This module fixes every bit of that model so that different engines
//! (simdojo, nexosim, the sequential binary-heap reference) handle the very
//! same events and end in the very same state:
//!
//! * random numbers are counter-based ([`mix64`] of a per-LP key and a per-LP
//!   draw counter), so they depend only on the LP and how many draws it made,
//!   never on the engine's scheduling;
//! * [`LpState::generate`] always makes three draws (remote?, destination,
//!   delay), in that order; the exponential part of the delay is
//!   `trunc(mean * simdojo::phold::exponential(x_delay))`, the engine's
//!   ziggurat variate of the one draw (shared, so every engine simulates the
//!   same model);
//! * [`LpState::handle`] folds the event's time and the LP's event count into
//!   a per-LP hash, and [`digest`] folds all LPs into one 64-bit value.
//!
//! **Architecture Invariant:** events carry no payload besides their time, and
//! two events handled by one LP at the same time update the LP identically
//! whichever goes first. So the final state does not depend on how an engine
//! breaks ties between equal-time events.
//!
//! Time is counted in integer [`Ticks`] (picoseconds when the command line
//! speaks nanoseconds; see [`ticks_from_nanos`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Multiplier that spreads LP indices over the key space (`k_i`).
const KEY_STRIDE: u64 = 0xD1B5_4A32_D192_ED03;
/// Multiplier that spreads draw counters over the stream (golden ratio).
const DRAW_STRIDE: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser: a bijective 64-bit mixing function.
///
/// `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) *
/// 0x94D049BB133111EB; z ^ (z >> 31)`, with wrapping multiplications.
pub fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps a 64-bit draw to `[0, 1)` using its top 53 bits.
pub fn unit(x: u64) -> f64 {
    // 2^-53: every 53-bit integer is exactly representable in an f64.
    (x >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// Simulated time in integer ticks (one tick = one picosecond on the CLI).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Ticks(pub u64);

impl fmt::Display for Ticks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ticks", self.0)
    }
}

/// Index of a logical process, `0..N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LpId(pub u32);

impl LpId {
    /// The index as a `usize`, for indexing per-LP tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for LpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lp{}", self.0)
    }
}

/// Why a set of PHOLD parameters was refused. Every variant is fatal for the
/// run that asked for it: nothing is simulated.
#[derive(Clone, Debug, Error, PartialEq)]
#[non_exhaustive]
pub enum ParamsError {
    /// `--lps` was zero or does not fit an [`LpId`].
    #[error("--lps must be between 1 and {max}, got {got}")]
    LpCount {
        /// The value given.
        got: u64,
        /// The largest accepted value.
        max: u64,
    },
    /// `--remote` was not a probability.
    #[error("--remote must be a probability in [0, 1], got {0}")]
    RemoteProbability(f64),
    /// A time given in nanoseconds was negative, not finite, or too large.
    #[error("--{flag} must be a finite number of nanoseconds in [0, {max_ns}], got {got}")]
    Time {
        /// The flag the value came from, without dashes.
        flag: &'static str,
        /// The value given.
        got: f64,
        /// The largest accepted value.
        max_ns: f64,
    },
    /// The lookahead rounds to zero ticks; events must move time forward.
    #[error("--lookahead must be at least 1 tick (0.001 ns), got {got_ns} ns")]
    ZeroLookahead {
        /// The value given, in nanoseconds.
        got_ns: f64,
    },
    /// `N * K` initial events would not fit in memory indices.
    #[error("--lps {lps} times --events-per-lp {events_per_lp} overflows")]
    TooManyEvents {
        /// LP count.
        lps: u64,
        /// Initial events per LP.
        events_per_lp: u64,
    },
}

/// Largest time accepted on the command line: 2^53 ps keeps ticks exact.
const MAX_TICKS: f64 = 9_007_199_254_740_992.0;

/// Converts nanoseconds to ticks: `round(ns * 1000)`.
///
/// `flag` names the option the value came from, for the error message.
pub fn ticks_from_nanos(flag: &'static str, ns: f64) -> Result<Ticks, ParamsError> {
    let ticks = (ns * 1000.0).round();
    if !ns.is_finite() || ns < 0.0 || ticks > MAX_TICKS {
        return Err(ParamsError::Time {
            flag,
            got: ns,
            max_ns: MAX_TICKS / 1000.0,
        });
    }
    Ok(Ticks(ticks as u64))
}

/// A validated PHOLD configuration, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PholdParams {
    /// Number of LPs (`N`).
    pub lps: u32,
    /// Initial events per LP (`K`).
    pub events_per_lp: u32,
    /// Probability that an event goes to another LP (`P`).
    pub remote: f64,
    /// Minimum delay of every event (`L`), at least one tick.
    pub lookahead: Ticks,
    /// Mean of the exponential part of the delay (`M`).
    pub mean: Ticks,
    /// Events at or after this time are never handled (`T`).
    pub end_time: Ticks,
    /// Seed of the per-LP keys.
    pub seed: u64,
}

/// The raw command-line values of a PHOLD run, times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PholdRequest {
    /// Number of LPs.
    pub lps: u64,
    /// Initial events per LP.
    pub events_per_lp: u64,
    /// Remote probability.
    pub remote: f64,
    /// Lookahead in ns.
    pub lookahead_ns: f64,
    /// Mean exponential delay in ns.
    pub mean_ns: f64,
    /// End time in ns.
    pub end_time_ns: f64,
    /// Seed.
    pub seed: u64,
}

impl PholdParams {
    /// Validates a request and converts its times to ticks.
    pub fn new(req: &PholdRequest) -> Result<Self, ParamsError> {
        if req.lps == 0 || req.lps > u64::from(u32::MAX) {
            return Err(ParamsError::LpCount {
                got: req.lps,
                max: u64::from(u32::MAX),
            });
        }
        let too_many = ParamsError::TooManyEvents {
            lps: req.lps,
            events_per_lp: req.events_per_lp,
        };
        let events_per_lp = u32::try_from(req.events_per_lp).map_err(|_| too_many.clone())?;
        if req
            .lps
            .checked_mul(req.events_per_lp)
            .is_none_or(|n| n > u64::from(u32::MAX))
        {
            return Err(too_many);
        }
        if !(0.0..=1.0).contains(&req.remote) {
            return Err(ParamsError::RemoteProbability(req.remote));
        }
        let lookahead = ticks_from_nanos("lookahead", req.lookahead_ns)?;
        if lookahead.0 == 0 {
            return Err(ParamsError::ZeroLookahead {
                got_ns: req.lookahead_ns,
            });
        }
        Ok(Self {
            // Checked above: 1 <= lps <= u32::MAX.
            lps: req.lps as u32,
            events_per_lp,
            remote: req.remote,
            lookahead,
            mean: ticks_from_nanos("mean", req.mean_ns)?,
            end_time: ticks_from_nanos("end-time", req.end_time_ns)?,
            seed: req.seed,
        })
    }

    /// The LP ids `0..N`, in order.
    pub fn lp_ids(&self) -> impl Iterator<Item = LpId> + use<> {
        (0..self.lps).map(LpId)
    }
}

/// One new event an LP wants sent: where to, and after how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Send {
    /// The LP that will handle the event.
    pub dest: LpId,
    /// Delay from the sending time; always at least the lookahead.
    pub delay: Ticks,
}

/// The complete state of one PHOLD LP: its random stream and its tally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LpState {
    /// This LP's index (`i`).
    id: u32,
    /// Random key `k_i`.
    key: u64,
    /// Draws made so far (`c_i`).
    draws: u64,
    /// Events handled so far (`count_i`).
    count: u64,
    /// Running hash of handled events (`h_i`).
    hash: u64,
}

impl LpState {
    /// The initial state of LP `id` under `seed`.
    pub fn new(id: LpId, seed: u64) -> Self {
        let key = mix64(seed.wrapping_add((u64::from(id.0) + 1).wrapping_mul(KEY_STRIDE)));
        Self {
            id: id.0,
            key,
            draws: 0,
            count: 0,
            hash: 0,
        }
    }

    /// This LP's id.
    pub fn id(&self) -> LpId {
        LpId(self.id)
    }

    /// Events handled so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The running hash of handled events.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Draws made so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// The next number of this LP's stream.
    pub fn draw(&mut self) -> u64 {
        let x = mix64(self.key.wrapping_add(self.draws.wrapping_mul(DRAW_STRIDE)));
        self.draws += 1;
        x
    }

    /// Picks the destination and delay of one new event (three draws).
    pub fn generate(&mut self, params: &PholdParams) -> Send {
        let x_remote = self.draw();
        let x_dest = self.draw();
        let x_delay = self.draw();
        let n = u64::from(params.lps);
        let remote = unit(x_remote) < params.remote && n > 1;
        let dest = if remote {
            (u64::from(self.id) + 1 + x_dest % (n - 1)) % n
        } else {
            u64::from(self.id)
        };
        // The engine's exponential variate (a ziggurat over the one draw): finite
        // and non-negative, so the product truncates to a valid tick count.
        let exponential = (params.mean.0 as f64 * simdojo::phold::exponential(x_delay)) as u64;
        Send {
            // dest < n <= u32::MAX.
            dest: LpId(dest as u32),
            delay: Ticks(params.lookahead.0.saturating_add(exponential)),
        }
    }

    /// Handles one event at time `now` and returns the event it sends.
    ///
    /// The caller must only call this for `now < end_time`, and must drop the
    /// returned event if [`arrival`] says it lands at or after `end_time`.
    pub fn handle(&mut self, now: Ticks, params: &PholdParams) -> Send {
        self.count += 1;
        self.hash = mix64(self.hash ^ now.0 ^ self.count.rotate_left(32));
        self.generate(params)
    }
}

/// When an event sent at `now` with `send` arrives, or `None` when it would
/// arrive at or after `end_time` (such events are never handled).
pub fn arrival(now: Ticks, send: Send, end_time: Ticks) -> Option<Ticks> {
    let at = now.0.checked_add(send.delay.0)?;
    (at < end_time.0).then_some(Ticks(at))
}

/// The digest of a final state: `d = mix64(d ^ h_i ^ (count_i << 1) ^ i)`
/// over the LPs in id order.
pub fn digest<'a>(lps: impl IntoIterator<Item = &'a LpState>) -> u64 {
    lps.into_iter().fold(0, |d, lp| {
        mix64(d ^ lp.hash ^ (lp.count << 1) ^ u64::from(lp.id))
    })
}

/// Total events handled by all LPs.
pub fn total_events<'a>(lps: impl IntoIterator<Item = &'a LpState>) -> u64 {
    lps.into_iter().map(LpState::count).sum()
}

/// Formats a digest the way every PHOLD binary prints it: 16 hex digits.
pub fn format_digest(digest: u64) -> String {
    format!("{digest:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(lps: u64, remote: f64) -> PholdParams {
        PholdParams::new(&PholdRequest {
            lps,
            events_per_lp: 4,
            remote,
            lookahead_ns: 1.0,
            mean_ns: 1.0,
            end_time_ns: 3000.0,
            seed: 1,
        })
        .expect("valid test parameters")
    }

    #[test]
    fn mix64_known_values() {
        // SplitMix64 finaliser reference values.
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161D_100B_05E5);
        // The first SplitMix64 output for seed 0 is mix64(golden ratio).
        assert_eq!(mix64(DRAW_STRIDE), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn unit_stays_in_half_open_interval() {
        assert_eq!(unit(0), 0.0);
        let top = unit(u64::MAX);
        assert!(top < 1.0 && top > 0.999_999_999);
        let mut lp = LpState::new(LpId(3), 7);
        for _ in 0..10_000 {
            let u = unit(lp.draw());
            assert!((0.0..1.0).contains(&u), "{u}");
        }
    }

    #[test]
    fn remote_destination_is_never_self() {
        let p = params(7, 1.0);
        for id in p.lp_ids() {
            let mut lp = LpState::new(id, p.seed);
            for _ in 0..2_000 {
                let send = lp.generate(&p);
                assert_ne!(send.dest, id);
                assert!(send.dest.0 < p.lps);
                assert!(send.delay >= p.lookahead);
            }
        }
    }

    #[test]
    fn local_only_and_single_lp_stay_home() {
        let p = params(5, 0.0);
        let mut lp = LpState::new(LpId(2), p.seed);
        assert!((0..500).all(|_| lp.generate(&p).dest == LpId(2)));
        let single = params(1, 1.0);
        let mut lp = LpState::new(LpId(0), single.seed);
        assert!((0..500).all(|_| lp.generate(&single).dest == LpId(0)));
    }

    #[test]
    fn generate_always_draws_three_times() {
        let p = params(4, 0.5);
        let mut lp = LpState::new(LpId(1), 9);
        lp.generate(&p);
        lp.generate(&p);
        assert_eq!(lp.draws(), 6);
    }

    #[test]
    fn draws_are_deterministic_and_per_lp() {
        let mut a = LpState::new(LpId(0), 1);
        let mut b = LpState::new(LpId(0), 1);
        let mut other = LpState::new(LpId(1), 1);
        let xs: Vec<u64> = (0..8).map(|_| a.draw()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.draw()).collect();
        let zs: Vec<u64> = (0..8).map(|_| other.draw()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        // The first draw is mix64(k_0), with k_0 = mix64(1 + KEY_STRIDE).
        assert_eq!(xs[0], mix64(mix64(1u64.wrapping_add(KEY_STRIDE))));
    }

    #[test]
    fn remote_fraction_and_mean_delay_follow_parameters() {
        let p = params(64, 0.25);
        let mut lp = LpState::new(LpId(10), p.seed);
        let n = 40_000;
        let sends: Vec<Send> = (0..n).map(|_| lp.generate(&p)).collect();
        let remote = sends.iter().filter(|s| s.dest != LpId(10)).count() as f64 / n as f64;
        assert!((remote - 0.25).abs() < 0.01, "remote fraction {remote}");
        let mean = sends.iter().map(|s| s.delay.0 as f64).sum::<f64>() / n as f64;
        // lookahead 1000 + Exp(1000), truncated: mean close to 1999.5.
        assert!((mean - 2000.0).abs() < 30.0, "mean delay {mean}");
    }

    #[test]
    fn handle_counts_and_hashes_independently_of_tie_order() {
        let p = params(4, 0.5);
        let mut lp = LpState::new(LpId(0), 1);
        lp.handle(Ticks(5), &p);
        lp.handle(Ticks(5), &p);
        assert_eq!(lp.count(), 2);
        let expect = mix64(mix64(5 ^ 1u64.rotate_left(32)) ^ 5 ^ 2u64.rotate_left(32));
        assert_eq!(lp.hash(), expect);
    }

    #[test]
    fn digest_folds_in_lp_order() {
        let p = params(3, 0.5);
        let mut lps: Vec<LpState> = p.lp_ids().map(|id| LpState::new(id, 1)).collect();
        assert_eq!(digest(&lps), mix64(mix64(mix64(0) ^ 1) ^ 2));
        lps[1].handle(Ticks(10), &p);
        let before = digest(&lps);
        lps.swap(0, 2);
        assert_ne!(digest(&lps), before);
        assert_eq!(total_events(&lps), 1);
        assert_eq!(format_digest(0xab), "00000000000000ab");
    }

    #[test]
    fn arrival_drops_events_at_or_after_end() {
        let send = Send {
            dest: LpId(0),
            delay: Ticks(10),
        };
        assert_eq!(arrival(Ticks(5), send, Ticks(16)), Some(Ticks(15)));
        assert_eq!(arrival(Ticks(5), send, Ticks(15)), None);
        assert_eq!(arrival(Ticks(u64::MAX), send, Ticks(u64::MAX)), None);
    }

    #[test]
    fn params_reject_bad_input() {
        let ok = PholdRequest {
            lps: 4,
            events_per_lp: 2,
            remote: 0.5,
            lookahead_ns: 1.0,
            mean_ns: 1.0,
            end_time_ns: 10.0,
            seed: 1,
        };
        let p = PholdParams::new(&ok).expect("valid");
        assert_eq!(p.lookahead, Ticks(1000));
        assert_eq!(p.end_time, Ticks(10_000));
        let check = |req: PholdRequest| PholdParams::new(&req).unwrap_err();
        assert!(matches!(
            check(PholdRequest { lps: 0, ..ok }),
            ParamsError::LpCount { .. }
        ));
        assert!(matches!(
            check(PholdRequest { remote: 1.5, ..ok }),
            ParamsError::RemoteProbability(_)
        ));
        assert!(matches!(
            check(PholdRequest {
                mean_ns: -1.0,
                ..ok
            }),
            ParamsError::Time { flag: "mean", .. }
        ));
        assert!(matches!(
            check(PholdRequest {
                end_time_ns: f64::NAN,
                ..ok
            }),
            ParamsError::Time {
                flag: "end-time",
                ..
            }
        ));
        assert!(matches!(
            check(PholdRequest {
                lookahead_ns: 0.0004,
                ..ok
            }),
            ParamsError::ZeroLookahead { .. }
        ));
        assert!(matches!(
            check(PholdRequest {
                events_per_lp: u64::MAX,
                ..ok
            }),
            ParamsError::TooManyEvents { .. }
        ));
        // Fractional nanoseconds round to the nearest picosecond.
        assert_eq!(ticks_from_nanos("mean", 0.0015), Ok(Ticks(2)));
    }
}
