//! Newtypes shared by the timing models: a cycle count of the model's own clock, a cache
//! line address and a byte address.
//!
//! **API Boundary:** every timing model takes and returns these types, never bare
//! integers, so a caller cannot hand a byte address where a line address is expected or
//! mix up cycles of two clocks without a visible conversion.

use std::fmt;
use std::ops::{Add, Sub};

use serde::{Deserialize, Serialize};

/// A point in time or a duration, in cycles of the clock the model was configured with.
///
/// Which clock that is is part of each model's configuration (the HBM model, for example,
/// converts its memory-clock timings into the caller's clock).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Cycle(pub u64);

impl Cycle {
    /// Cycle zero.
    pub const ZERO: Cycle = Cycle(0);

    /// The raw cycle count.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Cycles elapsed from `earlier` to `self`, or zero if `earlier` is later.
    pub const fn since(self, earlier: Cycle) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<u64> for Cycle {
    type Output = Cycle;
    fn add(self, cycles: u64) -> Cycle {
        Cycle(self.0.saturating_add(cycles))
    }
}

impl Sub<Cycle> for Cycle {
    type Output = u64;
    /// Saturating difference in cycles.
    fn sub(self, earlier: Cycle) -> u64 {
        self.since(earlier)
    }
}

impl fmt::Debug for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cycle {}", self.0)
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A byte address in the address space a model sees (physical for HBM, whatever the
/// caller uses for caches).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct ByteAddr(pub u64);

impl ByteAddr {
    /// The raw address.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The line containing this byte for lines of `line_bytes` bytes (a power of two; any
    /// other size is rounded up to the next power of two, and 0 is taken as 1).
    pub const fn line(self, line_bytes: u64) -> LineAddr {
        LineAddr(self.0 >> line_shift(line_bytes))
    }
}

impl fmt::Debug for ByteAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A cache line address: the byte address divided by the line size (the line's index,
/// not its first byte).
///
/// The set a line maps to is its low bits; the rest is its tag.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct LineAddr(pub u64);

impl LineAddr {
    /// The raw line index.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The first byte of this line for lines of `line_bytes` bytes (rounded up to a power
    /// of two as in [`ByteAddr::line`]).
    pub const fn first_byte(self, line_bytes: u64) -> ByteAddr {
        ByteAddr(self.0 << line_shift(line_bytes))
    }
}

impl fmt::Debug for LineAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {:#x}", self.0)
    }
}

/// log2 of `line_bytes` rounded up to a power of two, capped at 63.
const fn line_shift(line_bytes: u64) -> u32 {
    if line_bytes <= 1 {
        0
    } else {
        let bits = 64 - (line_bytes - 1).leading_zeros();
        if bits > 63 {
            63
        } else {
            bits
        }
    }
}
