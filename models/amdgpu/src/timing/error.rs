//! Typed errors of the timing models.
//!
//! Every error here is a configuration or protocol mistake by the caller; none is a
//! simulated-hardware fault. Each names the field or value at fault.

use thiserror::Error;

use super::units::LineAddr;

/// A timing-model configuration that cannot be built.
///
/// All variants are recoverable: the model was not created and the caller may fix the
/// configuration and try again.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A field that must be non-zero was zero.
    #[error("{model}: `{field}` must not be zero")]
    Zero {
        /// Which model's configuration (`"cache"`, `"hbm"`, ...).
        model: &'static str,
        /// The field at fault.
        field: &'static str,
    },
    /// A field that must be a power of two was not.
    #[error("{model}: `{field}` must be a power of two, got {value}")]
    NotPowerOfTwo {
        /// Which model's configuration.
        model: &'static str,
        /// The field at fault.
        field: &'static str,
        /// The value given.
        value: u64,
    },
    /// A field was above the largest value the model supports.
    #[error("{model}: `{field}` is {value}, above the supported maximum {max}")]
    TooLarge {
        /// Which model's configuration.
        model: &'static str,
        /// The field at fault.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest accepted value.
        max: u64,
    },
    /// The cache line is larger than the whole cache.
    #[error("cache: `line_bytes` ({line_bytes}) is larger than `size_bytes` ({size_bytes})")]
    LineLargerThanSize {
        /// The configured line size.
        line_bytes: u64,
        /// The configured cache size.
        size_bytes: u64,
    },
    /// The cache size is not a whole number of sets (`line_bytes * ways`).
    #[error(
        "cache: `size_bytes` ({size_bytes}) is not a multiple of `line_bytes` x `ways` \
         ({line_bytes} x {ways})"
    )]
    SizeNotMultipleOfSet {
        /// The configured cache size.
        size_bytes: u64,
        /// The configured line size.
        line_bytes: u64,
        /// The configured associativity.
        ways: u32,
    },
    /// `size_bytes / (line_bytes * ways)` is not a power of two.
    #[error("cache: number of sets ({sets}, from `size_bytes` / (`line_bytes` x `ways`)) must be a power of two")]
    SetsNotPowerOfTwo {
        /// The number of sets the configuration implies.
        sets: u64,
    },
    /// A replacement-policy name that is not one of the known names.
    #[error("cache: unknown replacement `policy` {name:?} (expected lru, srrip, random, random:SEED or ideal)")]
    UnknownPolicy {
        /// The name given.
        name: String,
    },
    /// A part name that has no default parameter set.
    #[error("unknown part {name:?} (expected mi210, mi300x or mi355x)")]
    UnknownPart {
        /// The name given.
        name: String,
    },
    /// An HBM address-map field order that does not list each field exactly once.
    #[error("hbm: `mapping.order` must list each of channel, pseudo_channel, stack, bank_group, bank and column exactly once; {problem}")]
    BadFieldOrder {
        /// What is wrong with it.
        problem: String,
    },
}

/// A miss-status holding register file used out of protocol.
///
/// Recoverable: the register file is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MshrError {
    /// `complete` was called for a line that has no outstanding miss.
    #[error("mshr: no outstanding miss for {line:?}")]
    NotPending {
        /// The line given.
        line: LineAddr,
    },
}

/// An HBM access the model refuses.
///
/// Recoverable: the model is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HbmError {
    /// One call may move at most `max` bytes; split larger transfers.
    #[error("hbm: access of {bytes} bytes is larger than the {max}-byte maximum of one call")]
    AccessTooLarge {
        /// The size asked for.
        bytes: u64,
        /// The largest accepted size.
        max: u64,
    },
}
