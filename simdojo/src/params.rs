//! Typed component parameters.
//!
//! A component type declares its parameters as [`ParamSpec`]s (name, [`ParamKind`],
//! default, doc). Topology files give raw values ([`RawParam`]); [`ParamKind::convert`]
//! checks and converts them, so a component's `build` function only sees values of the
//! declared kinds through the typed getters of [`Params`].

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::time::{ClockDomain, Tick};

/// The kind of a parameter value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamKind {
    /// `true` or `false`.
    Bool,
    /// A signed integer.
    Int,
    /// A non-negative integer.
    UInt,
    /// A floating-point number (integers are accepted).
    Float,
    /// Any string.
    String,
    /// A duration: `"10ns"`, `"476ps"`, or an integer number of picoseconds.
    Duration,
    /// A frequency: `"2.1GHz"`.
    Frequency,
    /// A size in bytes: `"4MiB"`, `"64KiB"`, `"256MB"` or an integer.
    Bytes,
}

impl ParamKind {
    /// A short human name of the kind, used in error messages and `dojo plugins`.
    pub fn describe(self) -> &'static str {
        match self {
            ParamKind::Bool => "a boolean",
            ParamKind::Int => "an integer",
            ParamKind::UInt => "a non-negative integer",
            ParamKind::Float => "a number",
            ParamKind::String => "a string",
            ParamKind::Duration => "a duration such as \"10ns\"",
            ParamKind::Frequency => "a frequency such as \"2.1GHz\"",
            ParamKind::Bytes => "a size such as \"4MiB\"",
        }
    }

    /// Converts a raw value from a topology file into a value of this kind.
    /// The error says what was expected.
    pub fn convert(self, raw: &RawParam) -> Result<ParamValue, String> {
        let expected = || format!("expected {}, found {}", self.describe(), raw.describe());
        Ok(match (self, raw) {
            (ParamKind::Bool, RawParam::Bool(b)) => ParamValue::Bool(*b),
            (ParamKind::Int, RawParam::Int(i)) => ParamValue::Int(*i),
            (ParamKind::UInt, RawParam::Int(i)) if *i >= 0 => ParamValue::UInt(*i as u64),
            (ParamKind::Float, RawParam::Int(i)) => ParamValue::Float(*i as f64),
            (ParamKind::Float, RawParam::Float(x)) => ParamValue::Float(*x),
            (ParamKind::String, RawParam::Str(s)) => ParamValue::String(s.clone()),
            (ParamKind::Duration, RawParam::Int(i)) if *i >= 0 => ParamValue::Duration(Tick(*i as u64)),
            (ParamKind::Duration, RawParam::Str(s)) => {
                ParamValue::Duration(Tick::parse_duration(s).map_err(|e| e.to_string())?)
            }
            (ParamKind::Frequency, RawParam::Str(s)) => {
                ParamValue::Frequency(ClockDomain::parse(s).map_err(|e| e.to_string())?)
            }
            (ParamKind::Bytes, RawParam::Int(i)) if *i >= 0 => ParamValue::Bytes(*i as u64),
            (ParamKind::Bytes, RawParam::Str(s)) => ParamValue::Bytes(parse_bytes(s)?),
            _ => return Err(expected()),
        })
    }
}

/// Parses a byte size: an integer with an optional `B`, `KiB`, `MiB`, `GiB`, `TiB`,
/// `KB`, `MB`, `GB` or `TB` suffix.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let at = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = (t[..at].trim(), t[at..].trim());
    let scale: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        "tib" | "t" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(format!("`{text}` is not a size (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")),
    };
    let n: u64 = num.parse().map_err(|_| format!("`{text}` is not a whole number of bytes"))?;
    n.checked_mul(scale).ok_or_else(|| format!("`{text}` is larger than 2^64 bytes"))
}

/// A parameter value as written in a topology file, before conversion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RawParam {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A string.
    Str(String),
}

impl RawParam {
    /// Reads a registry default written in topology-file (TOML value) syntax:
    /// `4`, `0.25`, `true`, `"10ns"`; an unquoted word is taken as a string (`10ns`).
    /// The topology loader and the engine both read defaults through this.
    pub fn from_text(text: &str) -> RawParam {
        use toml::de::DeValue;
        match DeValue::parse(text).map(|v| v.into_inner()) {
            Ok(DeValue::Boolean(b)) => RawParam::Bool(b),
            Ok(DeValue::Integer(i)) => match i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()) {
                Ok(n) => RawParam::Int(n),
                Err(_) => RawParam::Str(text.to_string()),
            },
            Ok(DeValue::Float(x)) => {
                x.as_str().replace('_', "").parse().map_or(RawParam::Str(text.to_string()), RawParam::Float)
            }
            Ok(DeValue::String(s)) => RawParam::Str(s.to_string()),
            _ => RawParam::Str(text.to_string()),
        }
    }

    /// A short description of the value's kind for error messages.
    pub fn describe(&self) -> String {
        match self {
            RawParam::Bool(b) => format!("boolean {b}"),
            RawParam::Int(i) => format!("integer {i}"),
            RawParam::Float(x) => format!("number {x}"),
            RawParam::Str(s) => format!("string {s:?}"),
        }
    }
}

/// A converted, typed parameter value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ParamValue {
    /// See [`ParamKind::Bool`].
    Bool(bool),
    /// See [`ParamKind::Int`].
    Int(i64),
    /// See [`ParamKind::UInt`].
    UInt(u64),
    /// See [`ParamKind::Float`].
    Float(f64),
    /// See [`ParamKind::String`].
    String(String),
    /// See [`ParamKind::Duration`].
    Duration(Tick),
    /// See [`ParamKind::Frequency`].
    Frequency(ClockDomain),
    /// See [`ParamKind::Bytes`].
    Bytes(u64),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::UInt(u) => write!(f, "{u}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::String(s) => write!(f, "{s:?}"),
            ParamValue::Duration(t) => write!(f, "{t}"),
            ParamValue::Frequency(c) => write!(f, "{:.3}MHz", c.hz() / 1e6),
            ParamValue::Bytes(b) => write!(f, "{b}B"),
        }
    }
}

/// A parameter that a component asked for was missing or of another kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parameter `{name}`: {problem}")]
pub struct ParamError {
    /// The parameter's name.
    pub name: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The resolved parameters of one component instance: every declared parameter with
/// its value from the topology or its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {
    values: BTreeMap<String, ParamValue>,
}

macro_rules! getter {
    ($(#[$doc:meta])* $fn:ident, $variant:ident, $ty:ty) => {
        $(#[$doc])*
        pub fn $fn(&self, name: &str) -> Result<$ty, ParamError> {
            match self.values.get(name) {
                Some(ParamValue::$variant(v)) => Ok(v.clone()),
                Some(other) => Err(ParamError {
                    name: name.to_string(),
                    problem: format!("is {other}, not a {}", stringify!($variant)),
                }),
                None => Err(ParamError { name: name.to_string(), problem: "is not set and has no default".into() }),
            }
        }
    };
}

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params::default()
    }
    /// Sets `name` to `value`, replacing any earlier value.
    pub fn set(&mut self, name: impl Into<String>, value: ParamValue) -> &mut Params {
        self.values.insert(name.into(), value);
        self
    }
    /// Builder form of [`Params::set`].
    pub fn with(mut self, name: impl Into<String>, value: ParamValue) -> Params {
        self.values.insert(name.into(), value);
        self
    }
    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.values.get(name)
    }
    /// All parameters in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }
    getter!(
        /// A [`ParamKind::Bool`] parameter.
        bool, Bool, bool
    );
    getter!(
        /// A [`ParamKind::Int`] parameter.
        int, Int, i64
    );
    getter!(
        /// A [`ParamKind::UInt`] parameter.
        uint, UInt, u64
    );
    getter!(
        /// A [`ParamKind::Float`] parameter.
        float, Float, f64
    );
    getter!(
        /// A [`ParamKind::String`] parameter.
        string, String, String
    );
    getter!(
        /// A [`ParamKind::Duration`] parameter.
        duration, Duration, Tick
    );
    getter!(
        /// A [`ParamKind::Frequency`] parameter.
        clock, Frequency, ClockDomain
    );
    getter!(
        /// A [`ParamKind::Bytes`] parameter.
        bytes, Bytes, u64
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_checks_kinds() {
        assert_eq!(ParamKind::UInt.convert(&RawParam::Int(3)), Ok(ParamValue::UInt(3)));
        assert!(ParamKind::UInt.convert(&RawParam::Int(-3)).is_err());
        assert_eq!(
            ParamKind::Duration.convert(&RawParam::Str("2ns".into())),
            Ok(ParamValue::Duration(Tick(2000)))
        );
        assert_eq!(ParamKind::Bytes.convert(&RawParam::Str("4MiB".into())), Ok(ParamValue::Bytes(4 << 20)));
        let err = ParamKind::Bool.convert(&RawParam::Str("yes".into())).unwrap_err();
        assert!(err.contains("expected a boolean"), "{err}");
    }

    #[test]
    fn registry_defaults_read_as_toml_values() {
        assert_eq!(RawParam::from_text("4"), RawParam::Int(4));
        assert_eq!(RawParam::from_text("0x10"), RawParam::Int(16));
        assert_eq!(RawParam::from_text("0.25"), RawParam::Float(0.25));
        assert_eq!(RawParam::from_text("true"), RawParam::Bool(true));
        assert_eq!(RawParam::from_text("\"10ns\""), RawParam::Str("10ns".into()));
        assert_eq!(RawParam::from_text("10ns"), RawParam::Str("10ns".into()));
    }

    #[test]
    fn getters_name_the_parameter() {
        let p = Params::new().with("n", ParamValue::UInt(4));
        assert_eq!(p.uint("n"), Ok(4));
        assert!(p.bool("n").unwrap_err().to_string().contains("`n`"));
        assert!(p.uint("m").unwrap_err().to_string().contains("not set"));
    }
}
