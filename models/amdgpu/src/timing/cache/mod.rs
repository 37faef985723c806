//! A set-associative cache tag model: hit or miss, victims, dirty state and statistics,
//! with the replacement policy chosen at run time.
//!
//! The model holds tags only, never data: the functional memory image lives elsewhere.
//! It answers what a cache level would do with an access; the component that owns it
//! turns the answer into messages and latencies.
//!
//! ```
//! use amdgpu::timing::cache::{AccessKind, AccessOutcome, CacheConfig, CacheModel, WritePolicy};
//! use amdgpu::timing::{LineAddr, ReplacementPolicy};
//!
//! let config = CacheConfig {
//!     size_bytes: 4 * 128,
//!     line_bytes: 128,
//!     ways: 2,
//!     policy: ReplacementPolicy::from_name("lru").unwrap(),
//!     write_policy: WritePolicy::WriteBack,
//! };
//! let mut cache = CacheModel::new(&config).unwrap();
//! assert!(matches!(cache.access(LineAddr(7), AccessKind::Read, true), AccessOutcome::Miss { .. }));
//! assert!(matches!(cache.access(LineAddr(7), AccessKind::Read, true), AccessOutcome::Hit { .. }));
//! ```
//!
//! **Architecture Invariant:** nothing here knows about simulated time, messages or the
//! engine; a model is a plain value that serializes into a checkpoint.

mod policy;
mod stats;
mod storage;

use serde::{Deserialize, Serialize};

pub use self::policy::ReplacementPolicy;
pub use self::stats::{CacheStats, HitMiss, Writebacks};

use self::policy::PolicyState;
use self::storage::{TagStore, DIRTY, VALID};
use crate::timing::error::ConfigError;
use crate::timing::units::LineAddr;

/// The most ways a cache may have (the per-way LRU rank is one byte).
pub const MAX_WAYS: u32 = 255;

/// What a cache does with writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WritePolicy {
    /// Write-back, write-allocate: a write hit or a write miss that allocates leaves the
    /// line dirty here; dirty lines go downstream when evicted or flushed.
    WriteBack,
    /// Write-through, no write-allocate: every write is forwarded downstream, a write hit
    /// updates the line (which stays clean), a write miss does not allocate. Lines are
    /// never dirty.
    WriteThrough,
    /// Write-back without write-allocate: a write hit dirties the line, a write miss goes
    /// downstream without allocating.
    WriteNoAllocate,
}

/// The kind of an access. Atomics behave like writes: they modify the line here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
    /// A read-modify-write performed at this cache.
    Atomic,
}

impl AccessKind {
    /// Whether the access modifies the line.
    pub fn modifies(self) -> bool {
        !matches!(self, AccessKind::Read)
    }
}

/// The configuration of one cache (one tag array; a banked or channelled cache is one
/// model per bank or channel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheConfig {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Line size in bytes, a power of two.
    pub line_bytes: u64,
    /// Associativity, 1..=[`MAX_WAYS`]. `size_bytes / (line_bytes * ways)` (the set
    /// count) must be a power of two.
    pub ways: u32,
    /// Replacement policy.
    pub policy: ReplacementPolicy,
    /// Write policy.
    pub write_policy: WritePolicy,
}

impl CacheConfig {
    /// Checks the configuration and returns its number of sets.
    pub fn sets(&self) -> Result<u64, ConfigError> {
        const MODEL: &str = "cache";
        if self.size_bytes == 0 {
            return Err(ConfigError::Zero {
                model: MODEL,
                field: "size_bytes",
            });
        }
        if self.line_bytes == 0 {
            return Err(ConfigError::Zero {
                model: MODEL,
                field: "line_bytes",
            });
        }
        if self.ways == 0 {
            return Err(ConfigError::Zero {
                model: MODEL,
                field: "ways",
            });
        }
        if !self.line_bytes.is_power_of_two() {
            return Err(ConfigError::NotPowerOfTwo {
                model: MODEL,
                field: "line_bytes",
                value: self.line_bytes,
            });
        }
        if self.ways > MAX_WAYS {
            return Err(ConfigError::TooLarge {
                model: MODEL,
                field: "ways",
                value: u64::from(self.ways),
                max: u64::from(MAX_WAYS),
            });
        }
        if self.line_bytes > self.size_bytes {
            return Err(ConfigError::LineLargerThanSize {
                line_bytes: self.line_bytes,
                size_bytes: self.size_bytes,
            });
        }
        let set_bytes = self.line_bytes * u64::from(self.ways);
        if !self.size_bytes.is_multiple_of(set_bytes) {
            return Err(ConfigError::SizeNotMultipleOfSet {
                size_bytes: self.size_bytes,
                line_bytes: self.line_bytes,
                ways: self.ways,
            });
        }
        let sets = self.size_bytes / set_bytes;
        if !sets.is_power_of_two() {
            return Err(ConfigError::SetsNotPowerOfTwo { sets });
        }
        Ok(sets)
    }
}

/// A line that left the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Eviction {
    /// The line.
    pub line: LineAddr,
    /// Whether it was dirty (the caller must write it downstream).
    pub dirty: bool,
}

/// What happened to an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessOutcome {
    /// The line was present.
    Hit {
        /// The write must also be sent downstream (write-through).
        write_downstream: bool,
    },
    /// The line was absent: the caller fetches it (for a read, an atomic, or a write that
    /// allocated) or forwards the write.
    Miss {
        /// The line was allocated here (the fill is assumed; the tag is present from now
        /// on).
        allocated: bool,
        /// The valid line displaced by the allocation, if any.
        evicted: Option<Eviction>,
        /// The write must be sent downstream because it was not absorbed here.
        write_downstream: bool,
    },
}

impl AccessOutcome {
    /// Whether the access hit.
    pub fn is_hit(&self) -> bool {
        matches!(self, AccessOutcome::Hit { .. })
    }

    /// The dirty line the caller must write back, if any.
    pub fn dirty_victim(&self) -> Option<LineAddr> {
        match self {
            AccessOutcome::Miss {
                evicted: Some(Eviction { line, dirty: true }),
                ..
            } => Some(*line),
            _ => None,
        }
    }
}

/// The state of a present line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LineState {
    /// Same as the next level.
    Clean,
    /// Modified here.
    Dirty,
}

/// A cache tag model. See the module documentation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CacheModel {
    config: CacheConfig,
    set_mask: u64,
    policy: PolicyState,
    tags: TagStore,
    stats: CacheStats,
}

impl CacheModel {
    /// Builds an empty cache; no tag storage is allocated until lines are filled.
    pub fn new(config: &CacheConfig) -> Result<CacheModel, ConfigError> {
        let sets = config.sets()?;
        let tags = match config.policy {
            ReplacementPolicy::Ideal => TagStore::empty(config.ways),
            _ => TagStore::new(sets, config.ways),
        };
        Ok(CacheModel {
            config: *config,
            set_mask: sets - 1,
            policy: PolicyState::new(config.policy),
            tags,
            stats: CacheStats::default(),
        })
    }

    /// The configuration this cache was built from.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Number of sets.
    pub fn sets(&self) -> u64 {
        self.set_mask + 1
    }

    /// The set `line` maps to.
    pub fn set_of(&self, line: LineAddr) -> u64 {
        line.get() & self.set_mask
    }

    /// Statistics since creation or the last [`CacheModel::reset_stats`].
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Zeroes the statistics (the tags are kept).
    pub fn reset_stats(&mut self) {
        self.stats = CacheStats::default();
    }

    /// Bytes of heap the tag arrays hold now (grows as sets are first touched).
    pub fn heap_bytes(&self) -> usize {
        self.tags.heap_bytes()
    }

    /// Performs an access to `line`. `allocate = false` forbids allocating on a miss
    /// (streaming / non-temporal accesses); the write policy may forbid it too (see
    /// [`WritePolicy`]). A miss that allocates installs the tag at once: the caller models
    /// the fill's latency.
    pub fn access(&mut self, line: LineAddr, kind: AccessKind, allocate: bool) -> AccessOutcome {
        let write_policy = self.config.write_policy;
        let modifies = kind.modifies();
        let write_through = modifies && write_policy == WritePolicy::WriteThrough;
        if let PolicyState::Ideal = self.policy {
            self.stats.of_mut(kind).hits += 1;
            self.stats.writes_forwarded += u64::from(write_through);
            return AccessOutcome::Hit {
                write_downstream: write_through,
            };
        }
        let set = self.set_of(line);
        if let Some(view) = self.tags.get(set) {
            if let Some(way) = find_way(view.lines, view.flags, line) {
                {
                    let flags: &[u8] = view.flags;
                    self.policy
                        .on_hit(view.meta, |w| flags[w] & VALID != 0, way);
                }
                if modifies && write_policy != WritePolicy::WriteThrough {
                    view.flags[way] |= DIRTY;
                }
                self.stats.of_mut(kind).hits += 1;
                self.stats.writes_forwarded += u64::from(write_through);
                return AccessOutcome::Hit {
                    write_downstream: write_through,
                };
            }
        }
        self.stats.of_mut(kind).misses += 1;
        let fill = allocate && (!modifies || write_policy == WritePolicy::WriteBack);
        let write_downstream = modifies && (!fill || write_through);
        self.stats.writes_forwarded += u64::from(write_downstream);
        if !fill {
            self.stats.bypasses += 1;
            return AccessOutcome::Miss {
                allocated: false,
                evicted: None,
                write_downstream,
            };
        }
        self.stats.fills += 1;
        let view = self.tags.get_or_alloc(set);
        let (way, evicted) = match view.flags.iter().position(|&f| f & VALID == 0) {
            Some(way) => (way, None),
            None => {
                let way = self.policy.victim(view.meta);
                let dirty = view.flags[way] & DIRTY != 0;
                (
                    way,
                    Some(Eviction {
                        line: LineAddr(view.lines[way]),
                        dirty,
                    }),
                )
            }
        };
        if let Some(eviction) = evicted {
            self.stats.evictions += 1;
            self.stats.writebacks.eviction += u64::from(eviction.dirty);
        }
        view.lines[way] = line.get();
        view.flags[way] = VALID | if modifies { DIRTY } else { 0 };
        {
            let flags: &[u8] = view.flags;
            self.policy
                .on_fill(view.meta, |w| flags[w] & VALID != 0, way, evicted.is_some());
        }
        AccessOutcome::Miss {
            allocated: true,
            evicted,
            write_downstream,
        }
    }

    /// The state of `line` if present, without touching replacement state or statistics.
    /// An ideal cache reports every line present and clean.
    pub fn probe(&self, line: LineAddr) -> Option<LineState> {
        if let PolicyState::Ideal = self.policy {
            return Some(LineState::Clean);
        }
        let (lines, flags) = self.tags.peek(self.set_of(line))?;
        let way = find_way(lines, flags, line)?;
        Some(if flags[way] & DIRTY != 0 {
            LineState::Dirty
        } else {
            LineState::Clean
        })
    }

    /// Drops `line` if present and returns it (dirty means the caller must write it back;
    /// the write-back is counted).
    pub fn invalidate(&mut self, line: LineAddr) -> Option<Eviction> {
        let set = self.set_of(line);
        let view = self.tags.get(set)?;
        let way = find_way(view.lines, view.flags, line)?;
        let dirty = view.flags[way] & DIRTY != 0;
        {
            let flags: &[u8] = view.flags;
            self.policy
                .on_invalidate(view.meta, |w| flags[w] & VALID != 0, way);
        }
        view.flags[way] = 0;
        self.stats.invalidations += 1;
        self.stats.writebacks.invalidate += u64::from(dirty);
        Some(Eviction { line, dirty })
    }

    /// Drops every line and frees the tag arrays. Returns the dirty lines, in set order,
    /// for the caller to write back: no modified data is lost silently.
    pub fn invalidate_all(&mut self) -> Vec<LineAddr> {
        let mut dirty = Vec::new();
        let mut dropped = 0;
        for group in self.tags.groups() {
            for (way, &flags) in group.flags.iter().enumerate() {
                if flags & VALID != 0 {
                    dropped += 1;
                    if flags & DIRTY != 0 {
                        dirty.push(LineAddr(group.lines[way]));
                    }
                }
            }
        }
        self.tags.clear();
        self.stats.invalidations += dropped;
        self.stats.writebacks.invalidate += dirty.len() as u64;
        dirty
    }

    /// Cleans every dirty line (they stay valid) and returns them, in set order, for the
    /// caller to write back.
    pub fn writeback_all(&mut self) -> Vec<LineAddr> {
        let mut dirty = Vec::new();
        for group in self.tags.groups_mut() {
            for (way, flags) in group.flags.iter_mut().enumerate() {
                if *flags & (VALID | DIRTY) == VALID | DIRTY {
                    *flags &= !DIRTY;
                    dirty.push(LineAddr(group.lines[way]));
                }
            }
        }
        self.stats.writebacks.flush += dirty.len() as u64;
        dirty
    }

    /// Number of valid lines.
    pub fn resident_lines(&self) -> u64 {
        self.tags
            .groups()
            .map(|group| group.flags.iter().filter(|&&f| f & VALID != 0).count() as u64)
            .sum()
    }
}

/// The way of a set holding `line`, if any.
fn find_way(lines: &[u64], flags: &[u8], line: LineAddr) -> Option<usize> {
    (0..flags.len()).find(|&way| flags[way] & VALID != 0 && lines[way] == line.get())
}
