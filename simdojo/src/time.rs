//! Simulated time: integer picosecond ticks and clock domains.
//!
//! All simulated time in simdojo is a [`Tick`], one picosecond. A [`ClockDomain`]
//! converts between cycles of a clock and ticks; its period is rounded to a whole
//! number of picoseconds (a 2.1 GHz clock has a 476 ps period), which is the
//! resolution every model shares.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Serialize};

/// A point in simulated time or a duration, in picoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Tick(pub u64);

impl Tick {
    /// Time zero.
    pub const ZERO: Tick = Tick(0);
    /// The largest representable time; used as "never".
    pub const MAX: Tick = Tick(u64::MAX);
    /// Ticks per nanosecond.
    pub const PER_NS: u64 = 1_000;

    /// `n` picoseconds.
    pub const fn ps(n: u64) -> Tick {
        Tick(n)
    }
    /// `n` nanoseconds.
    pub const fn ns(n: u64) -> Tick {
        Tick(n * 1_000)
    }
    /// `n` microseconds.
    pub const fn us(n: u64) -> Tick {
        Tick(n * 1_000_000)
    }
    /// `n` milliseconds.
    pub const fn ms(n: u64) -> Tick {
        Tick(n * 1_000_000_000)
    }
    /// The raw picosecond count.
    pub const fn get(self) -> u64 {
        self.0
    }
    /// Addition that stays at [`Tick::MAX`] instead of overflowing.
    pub const fn saturating_add(self, d: Tick) -> Tick {
        Tick(self.0.saturating_add(d.0))
    }
    /// [`Tick::parse_duration`] for what a person types on a command line: the unit is
    /// required (`--stats-interval 1` would be one picosecond, a run of millions of
    /// samples), and the error shows the units. A zero needs none.
    pub fn parse_duration_with_unit(text: &str) -> Result<Tick, TimeParseError> {
        let (number, unit) = split_unit(text);
        if unit.is_empty() && number.parse::<f64>().is_ok_and(|v| v != 0.0) {
            return Err(TimeParseError::new(text, "a duration with its unit (such as 10us; units: ps, ns, us, ms, s)"));
        }
        Tick::parse_duration(text)
    }

    /// Parses a duration such as `"10ns"`, `"1.5us"`, `"476ps"`, `"2ms"` or `"0.001s"`.
    /// A bare number is taken as picoseconds.
    pub fn parse_duration(text: &str) -> Result<Tick, TimeParseError> {
        let (number, unit) = split_unit(text);
        let scale: f64 = match unit.to_ascii_lowercase().as_str() {
            "" | "ps" => 1.0,
            "ns" => 1e3,
            "us" => 1e6,
            "ms" => 1e9,
            "s" => 1e12,
            _ => return Err(TimeParseError::new(text, "a duration unit (ps, ns, us, ms, s)")),
        };
        let value: f64 = number
            .parse()
            .map_err(|_| TimeParseError::new(text, "a number followed by a duration unit"))?;
        let ticks = value * scale;
        if !ticks.is_finite() || ticks < 0.0 || ticks > u64::MAX as f64 {
            return Err(TimeParseError::new(text, "a non-negative duration below 2^64 ps"));
        }
        Ok(Tick(ticks.round() as u64))
    }
}

impl fmt::Debug for Tick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ps", self.0)
    }
}

impl fmt::Display for Tick {
    /// Prints the time in the largest unit that keeps it readable (`12.500ns`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if *self == Tick::MAX {
            write!(f, "never")
        } else if ps < 1_000 {
            write!(f, "{ps}ps")
        } else if ps < 1_000_000 {
            write!(f, "{:.3}ns", ps as f64 / 1e3)
        } else if ps < 1_000_000_000 {
            write!(f, "{:.3}us", ps as f64 / 1e6)
        } else {
            write!(f, "{:.6}ms", ps as f64 / 1e9)
        }
    }
}

impl Add for Tick {
    type Output = Tick;
    fn add(self, rhs: Tick) -> Tick {
        Tick(self.0 + rhs.0)
    }
}

impl AddAssign for Tick {
    fn add_assign(&mut self, rhs: Tick) {
        self.0 += rhs.0;
    }
}

impl Sub for Tick {
    type Output = Tick;
    fn sub(self, rhs: Tick) -> Tick {
        Tick(self.0 - rhs.0)
    }
}

/// A clock: a period in ticks, derived from a frequency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockDomain {
    period: Tick,
}

impl ClockDomain {
    /// A clock of `hz` hertz; the period is rounded to the nearest picosecond.
    pub fn from_hz(hz: f64) -> Result<ClockDomain, TimeParseError> {
        if !(hz.is_finite() && hz > 0.0 && hz <= 1e12) {
            return Err(TimeParseError::new(&hz.to_string(), "a frequency between 1 Hz and 1 THz"));
        }
        Ok(ClockDomain { period: Tick(((1e12 / hz).round() as u64).max(1)) })
    }
    /// A clock of `mhz` megahertz (at least 1 MHz), the same as parsing `"{mhz}MHz"`.
    pub fn mhz(mhz: u32) -> ClockDomain {
        ClockDomain { period: Tick(((1e12 / (f64::from(mhz.max(1)) * 1e6)).round() as u64).max(1)) }
    }
    /// A clock with the given period (at least one tick).
    pub fn from_period(period: Tick) -> ClockDomain {
        ClockDomain { period: Tick(period.0.max(1)) }
    }
    /// Parses a frequency such as `"2.1GHz"`, `"1700MHz"` or `"100kHz"`.
    pub fn parse(text: &str) -> Result<ClockDomain, TimeParseError> {
        let (number, unit) = split_unit(text);
        let scale = match unit.to_ascii_lowercase().as_str() {
            "hz" => 1.0,
            "khz" => 1e3,
            "mhz" => 1e6,
            "ghz" => 1e9,
            _ => return Err(TimeParseError::new(text, "a frequency unit (Hz, kHz, MHz, GHz)")),
        };
        let value: f64 = number
            .parse()
            .map_err(|_| TimeParseError::new(text, "a number followed by a frequency unit"))?;
        ClockDomain::from_hz(value * scale).map_err(|_| TimeParseError::new(text, "a frequency between 1 Hz and 1 THz"))
    }
    /// The clock period.
    pub fn period(&self) -> Tick {
        self.period
    }
    /// The frequency in hertz implied by the rounded period.
    pub fn hz(&self) -> f64 {
        1e12 / self.period.0 as f64
    }
    /// The duration of `n` cycles.
    pub fn cycles(&self, n: u64) -> Tick {
        Tick(self.period.0.saturating_mul(n))
    }
    /// Whole cycles elapsed at time `t` (rounded down).
    pub fn to_cycles(&self, t: Tick) -> u64 {
        t.0 / self.period.0
    }
    /// The first clock edge at or after `t`.
    pub fn next_edge(&self, t: Tick) -> Tick {
        let p = self.period.0;
        Tick(t.0.div_ceil(p).saturating_mul(p))
    }
}

fn split_unit(text: &str) -> (&str, &str) {
    let text = text.trim();
    let at = text
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(text.len());
    (text[..at].trim(), text[at..].trim())
}

/// A duration or frequency string that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not {expected}")]
pub struct TimeParseError {
    /// The text that was given.
    pub text: String,
    /// What was expected instead.
    pub expected: &'static str,
}

impl TimeParseError {
    fn new(text: &str, expected: &'static str) -> TimeParseError {
        TimeParseError { text: text.to_string(), expected }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_line_durations_need_their_unit() {
        use super::Tick;
        assert_eq!(Tick::parse_duration_with_unit("10us"), Ok(Tick(10_000_000)));
        assert_eq!(Tick::parse_duration_with_unit("0"), Ok(Tick(0)));
        let e = Tick::parse_duration_with_unit("1").unwrap_err().to_string();
        assert!(e.contains("`1`") && e.contains("10us") && e.contains("ps, ns, us, ms, s"), "{e}");
        assert!(Tick::parse_duration_with_unit("1.5").is_err());
        assert!(Tick::parse_duration_with_unit("5 parsecs").is_err());
        assert_eq!(Tick::parse_duration("1"), Ok(Tick(1)), "topology values keep bare picoseconds");
    }

    use super::*;

    #[test]
    fn durations_parse_in_every_unit() {
        assert_eq!(Tick::parse_duration("476ps").unwrap(), Tick(476));
        assert_eq!(Tick::parse_duration("10ns").unwrap(), Tick(10_000));
        assert_eq!(Tick::parse_duration("1.5us").unwrap(), Tick(1_500_000));
        assert_eq!(Tick::parse_duration("2ms").unwrap(), Tick(2_000_000_000));
        assert_eq!(Tick::parse_duration("1e3ps").unwrap(), Tick(1000));
        assert_eq!(Tick::parse_duration("7").unwrap(), Tick(7));
        assert!(Tick::parse_duration("10parsecs").is_err());
        assert!(Tick::parse_duration("-1ns").is_err());
        assert!(Tick::parse_duration("ns").is_err());
    }

    #[test]
    fn clocks_convert_cycles_and_edges() {
        let c = ClockDomain::parse("2.1GHz").unwrap();
        assert_eq!(c.period(), Tick(476));
        assert_eq!(c.cycles(10), Tick(4760));
        assert_eq!(c.to_cycles(Tick(4761)), 10);
        assert_eq!(c.next_edge(Tick(477)), Tick(952));
        assert_eq!(c.next_edge(Tick(952)), Tick(952));
        assert!(ClockDomain::parse("0GHz").is_err());
        assert!(ClockDomain::parse("fast").is_err());
        assert_eq!(ClockDomain::parse("1700MHz").unwrap().period(), Tick(588));
    }
}
