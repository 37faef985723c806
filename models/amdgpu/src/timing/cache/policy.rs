//! Replacement policies: the run-time choice of which way of a full set to evict.
//!
//! A policy is picked by name ([`ReplacementPolicy::from_name`]) so a topology file can say
//! `policy = "srrip"`. All policies share one per-way metadata byte, whose meaning depends
//! on the policy:
//!
//! * `lru`: the way's recency rank among the valid ways of its set, 0 = most recently used.
//!   **Invariant:** the ranks of the valid ways of a set are exactly `0..n_valid`.
//! * `srrip`: the way's 2-bit re-reference prediction value (RRPV). Fills insert at 2
//!   ("long re-reference"), hits promote to 0 (hit priority), and the victim is the lowest
//!   way at 3, after ageing the whole set until one reaches 3.
//! * `random`: unused; the victim comes from a seeded xorshift generator, so two models with
//!   the same seed and the same access stream evict the same lines.
//! * `ideal`: unused; an ideal cache holds no tags at all and every access hits.
//!
//! An invalid way is always filled before any valid way is evicted, whatever the policy.

use std::fmt;
use std::str::FromStr;

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use serde::{Deserialize, Serialize};

use crate::timing::error::ConfigError;

/// Which replacement policy a cache uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReplacementPolicy {
    /// True least-recently-used.
    Lru,
    /// Static re-reference interval prediction, 2-bit RRPV, hit-priority promotion.
    Srrip,
    /// Uniformly random victim from a deterministic generator with this seed.
    Random {
        /// Seed of the victim generator.
        seed: u64,
    },
    /// Every access hits; no tags are kept (an upper bound for what caching can give).
    Ideal,
}

impl ReplacementPolicy {
    /// Parses a policy name: `lru`, `srrip`, `random` (seed 0), `random:SEED` or `ideal`,
    /// case-insensitively.
    pub fn from_name(name: &str) -> Result<ReplacementPolicy, ConfigError> {
        let lower = name.trim().to_ascii_lowercase();
        let unknown = || ConfigError::UnknownPolicy {
            name: name.to_string(),
        };
        match lower.as_str() {
            "lru" => Ok(ReplacementPolicy::Lru),
            "srrip" => Ok(ReplacementPolicy::Srrip),
            "random" => Ok(ReplacementPolicy::Random { seed: 0 }),
            "ideal" => Ok(ReplacementPolicy::Ideal),
            other => match other.strip_prefix("random:") {
                Some(seed) => seed
                    .parse::<u64>()
                    .map(|seed| ReplacementPolicy::Random { seed })
                    .map_err(|_| unknown()),
                None => Err(unknown()),
            },
        }
    }
}

impl FromStr for ReplacementPolicy {
    type Err = ConfigError;
    fn from_str(name: &str) -> Result<ReplacementPolicy, ConfigError> {
        ReplacementPolicy::from_name(name)
    }
}

impl fmt::Display for ReplacementPolicy {
    /// The name [`ReplacementPolicy::from_name`] parses back to this policy.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplacementPolicy::Lru => f.write_str("lru"),
            ReplacementPolicy::Srrip => f.write_str("srrip"),
            ReplacementPolicy::Random { seed } => write!(f, "random:{seed}"),
            ReplacementPolicy::Ideal => f.write_str("ideal"),
        }
    }
}

/// The largest RRPV of the 2-bit SRRIP counters ("distant re-reference").
const RRPV_MAX: u8 = 3;
/// The RRPV a newly filled line gets ("long re-reference").
const RRPV_INSERT: u8 = 2;

/// A policy together with the state it carries between accesses (the random generator).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum PolicyState {
    Lru,
    Srrip,
    Random(XorShiftRng),
    Ideal,
}

impl PolicyState {
    pub(crate) fn new(policy: ReplacementPolicy) -> PolicyState {
        match policy {
            ReplacementPolicy::Lru => PolicyState::Lru,
            ReplacementPolicy::Srrip => PolicyState::Srrip,
            ReplacementPolicy::Random { seed } => {
                PolicyState::Random(XorShiftRng::seed_from_u64(seed))
            }
            ReplacementPolicy::Ideal => PolicyState::Ideal,
        }
    }

    /// Updates metadata for a hit on `way`. `valid[i]` says whether way `i` holds a line.
    pub(crate) fn on_hit(&self, meta: &mut [u8], valid: impl Fn(usize) -> bool, way: usize) {
        match self {
            PolicyState::Lru => lru_touch(meta, valid, way),
            PolicyState::Srrip => meta[way] = 0,
            PolicyState::Random(_) | PolicyState::Ideal => {}
        }
    }

    /// Updates metadata for a fill of `way`. `was_valid` says whether `way` held a line
    /// (which was just evicted); `valid` describes the other ways.
    pub(crate) fn on_fill(
        &self,
        meta: &mut [u8],
        valid: impl Fn(usize) -> bool,
        way: usize,
        was_valid: bool,
    ) {
        match self {
            PolicyState::Lru => {
                if was_valid {
                    lru_touch(meta, valid, way);
                } else {
                    for (other, rank) in meta.iter_mut().enumerate() {
                        if other != way && valid(other) {
                            *rank += 1;
                        }
                    }
                    meta[way] = 0;
                }
            }
            PolicyState::Srrip => meta[way] = RRPV_INSERT,
            PolicyState::Random(_) | PolicyState::Ideal => {}
        }
    }

    /// Updates metadata after `way` (valid until now) was invalidated.
    pub(crate) fn on_invalidate(&self, meta: &mut [u8], valid: impl Fn(usize) -> bool, way: usize) {
        if let PolicyState::Lru = self {
            let removed = meta[way];
            for (other, rank) in meta.iter_mut().enumerate() {
                if other != way && valid(other) && *rank > removed {
                    *rank -= 1;
                }
            }
            meta[way] = 0;
        }
    }

    /// Picks the way to evict from a set whose ways are all valid.
    pub(crate) fn victim(&mut self, meta: &mut [u8]) -> usize {
        match self {
            PolicyState::Lru => {
                // With every way valid the ranks are 0..ways, so the maximum is unique.
                let mut victim = 0;
                for (way, &rank) in meta.iter().enumerate() {
                    if rank > meta[victim] {
                        victim = way;
                    }
                }
                victim
            }
            PolicyState::Srrip => loop {
                if let Some(way) = meta.iter().position(|&rrpv| rrpv >= RRPV_MAX) {
                    return way;
                }
                for rrpv in meta.iter_mut() {
                    *rrpv += 1;
                }
            },
            PolicyState::Random(rng) => (rng.next_u64() % meta.len() as u64) as usize,
            // An ideal cache never allocates; answer something valid all the same.
            PolicyState::Ideal => 0,
        }
    }
}

/// Makes `way` the most recently used way, ageing the valid ways that were more recent.
fn lru_touch(meta: &mut [u8], valid: impl Fn(usize) -> bool, way: usize) {
    let old = meta[way];
    for (other, rank) in meta.iter_mut().enumerate() {
        if other != way && valid(other) && *rank < old {
            *rank += 1;
        }
    }
    meta[way] = 0;
}
