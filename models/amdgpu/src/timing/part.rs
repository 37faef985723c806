//! The GPU parts the timing defaults describe.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::ConfigError;

/// An AMD Instinct part with default timing parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Part {
    /// MI210: CDNA 2, gfx90a, one GCD, HBM2e.
    Mi210,
    /// MI300X: CDNA 3, gfx942, 8 XCDs + 4 IODs, HBM3.
    Mi300x,
    /// MI355X: CDNA 4, gfx950, 8 XCDs + 2 IODs, HBM3E.
    Mi355x,
}

impl Part {
    /// Every part, oldest first.
    pub const ALL: [Part; 3] = [Part::Mi210, Part::Mi300x, Part::Mi355x];

    /// Parses `mi210`, `mi300x` or `mi355x` (case-insensitive).
    pub fn from_name(name: &str) -> Result<Part, ConfigError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "mi210" => Ok(Part::Mi210),
            "mi300x" => Ok(Part::Mi300x),
            "mi355x" => Ok(Part::Mi355x),
            _ => Err(ConfigError::UnknownPart {
                name: name.to_string(),
            }),
        }
    }

    /// Engine (shader) clock in MHz, from the parts table (cdna-parts.md).
    pub const fn engine_clock_mhz(self) -> u32 {
        match self {
            Part::Mi210 => 1700,
            Part::Mi300x => 2100,
            Part::Mi355x => 2400,
        }
    }
}

impl FromStr for Part {
    type Err = ConfigError;
    fn from_str(name: &str) -> Result<Part, ConfigError> {
        Part::from_name(name)
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Mi210 => "mi210",
            Part::Mi300x => "mi300x",
            Part::Mi355x => "mi355x",
        })
    }
}
