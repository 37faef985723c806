//! Typed component parameters.
//!
//! A component type declares its parameters as a struct deriving [`ParamSet`]
//! (`#[derive(simdojo::Params)]`): each field is one parameter of a [`ParamType`]
//! (integers, `f64`, `bool`, `String`, [`Tick`] durations, [`ClockDomain`]
//! frequencies, [`Bytes`], and choice enums deriving [`ParamChoice`]), with its doc
//! comment, default, unit and range. The derive gives the type's [`ParamSpec`]s, which
//! the registry, `dojo plugins`, topology loading and `--set` read, and
//! [`ParamSet::from_params`], the one conversion from resolved [`Params`] to the typed
//! struct (range checks, then the struct's cross-field check).
//!
//! Topology files give raw values ([`RawParam`]); [`ParamSpec::convert`] checks and
//! converts them to [`ParamValue`]s. [`Params`] keeps, beside each value, where it was
//! set ([`ValueOrigin`]: a file position, a `--set`, a preset), so that an error about a
//! value names the place to change it.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::time::{ClockDomain, Tick};
use crate::topology::SourceLoc;

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
    /// One of a fixed set of names (the spec's [`ParamRange::Choices`]), held as a
    /// [`ParamValue::String`].
    Choice,
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
            ParamKind::Choice => "one of the names listed",
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
            (ParamKind::Choice, RawParam::Str(s)) => ParamValue::String(s.clone()),
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

/// Where a parameter value was set: what an error about the value points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValueOrigin {
    /// The value's own position in a topology file.
    File(SourceLoc),
    /// A command-line override, as written (`l2.size=8MiB`).
    Set(String),
    /// A named preset of the component's type (`mi210`), applied by a topology.
    Preset(String),
}

impl fmt::Display for ValueOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueOrigin::File(at) => write!(f, "{at}"),
            ValueOrigin::Set(text) => write!(f, "--set {text}"),
            ValueOrigin::Preset(name) => write!(f, "preset `{name}`"),
        }
    }
}

/// A parameter is missing, out of its range, or fails its type's cross-field check.
/// Fatal for the build of the component that has it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}parameter `{name}` {problem}", origin.as_ref().map(|o| format!("{o}: ")).unwrap_or_default())]
pub struct ParamError {
    /// The parameter's name.
    pub name: String,
    /// What is wrong with it, as the end of a sentence that starts with its name
    /// ("is 3, but ...").
    pub problem: String,
    /// Where the value was set, when known.
    pub origin: Option<ValueOrigin>,
}

impl ParamError {
    /// An error about parameter `name`, its origin filled in by [`Params::locate`].
    pub fn new(name: impl Into<String>, problem: impl Into<String>) -> ParamError {
        ParamError { name: name.into(), problem: problem.into(), origin: None }
    }
}

/// The values a parameter accepts, beyond its kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamRange {
    /// Any value of the kind.
    Any,
    /// An integer from `min` to `max`, inclusive: a count, a size in bytes, a
    /// duration in picoseconds.
    Int {
        /// Smallest accepted value.
        min: i128,
        /// Largest accepted value.
        max: i128,
    },
    /// A number from `min` to `max`, inclusive.
    Float {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// One of these names.
    Choices(&'static [&'static str]),
}

impl ParamRange {
    /// Both ranges at once (a field type's own range and the one its attribute gives).
    pub const fn and(self, other: ParamRange) -> ParamRange {
        match (self, other) {
            (ParamRange::Int { min: a, max: b }, ParamRange::Int { min: c, max: d }) => {
                ParamRange::Int { min: if a > c { a } else { c }, max: if b < d { b } else { d } }
            }
            (ParamRange::Float { min: a, max: b }, ParamRange::Float { min: c, max: d }) => {
                ParamRange::Float { min: if a > c { a } else { c }, max: if b < d { b } else { d } }
            }
            (ParamRange::Any, r) => r,
            (r, _) => r,
        }
    }

    /// Whether `value` lies in the range (values of other kinds are not judged here).
    fn admits(&self, value: &ParamValue) -> bool {
        match (self, value) {
            (ParamRange::Int { min, max }, v) => match int_of(v) {
                Some(i) => *min <= i && i <= *max,
                None => true,
            },
            (ParamRange::Float { min, max }, ParamValue::Float(x)) => *min <= *x && *x <= *max,
            (ParamRange::Choices(names), ParamValue::String(s)) => names.contains(&s.as_str()),
            _ => true,
        }
    }

    /// The range in words for `kind` ("from 1 to 64", "one of lru, srrip"), or `None`
    /// when it admits every value of the kind.
    pub fn describe(&self, kind: ParamKind) -> Option<String> {
        let bound = |i: i128| match kind {
            ParamKind::Bytes => ParamValue::Bytes(i as u64).to_string(),
            ParamKind::Duration => Tick(i as u64).to_string(),
            _ => i.to_string(),
        };
        let (lo, hi) = match kind {
            ParamKind::UInt | ParamKind::Bytes | ParamKind::Duration => (0, u64::MAX as i128),
            ParamKind::Int => (i64::MIN as i128, i64::MAX as i128),
            _ => (i128::MIN, i128::MAX),
        };
        // The largest value of a field's integer type is no limit a reader cares about.
        let unbounded = |max: i128| max >= hi || max == i128::from(u32::MAX) || max == i128::from(u16::MAX);
        match *self {
            ParamRange::Any => None,
            ParamRange::Int { min, max } if min <= lo && unbounded(max) => None,
            ParamRange::Int { min, max } if unbounded(max) => Some(format!("at least {}", bound(min))),
            ParamRange::Int { min, max } if min <= lo => Some(format!("at most {}", bound(max))),
            ParamRange::Int { min, max } => Some(format!("from {} to {}", bound(min), bound(max))),
            ParamRange::Float { min, max } if min.is_infinite() && max.is_infinite() => None,
            ParamRange::Float { min, max } if max.is_infinite() => Some(format!("at least {min}")),
            ParamRange::Float { min, max } if min.is_infinite() => Some(format!("at most {max}")),
            ParamRange::Float { min, max } => Some(format!("from {min} to {max}")),
            ParamRange::Choices(names) => Some(format!("one of {}", names.join(", "))),
        }
    }
}

/// The integer in a value of an integer-like kind (a duration in picoseconds).
fn int_of(value: &ParamValue) -> Option<i128> {
    match value {
        ParamValue::Int(i) => Some(i128::from(*i)),
        ParamValue::UInt(u) | ParamValue::Bytes(u) => Some(i128::from(*u)),
        ParamValue::Duration(t) => Some(i128::from(t.0)),
        _ => None,
    }
}

/// A declared parameter of a component type, as the [`ParamSet`] derive writes it.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// Its kind; topology values are converted to it.
    pub kind: ParamKind,
    /// Makes the default value, or `None` when the parameter is required.
    pub default: Option<fn() -> ParamValue>,
    /// What the parameter means (the field's doc comment).
    pub doc: &'static str,
    /// The unit of its values, or empty.
    pub unit: &'static str,
    /// The values it accepts.
    pub range: ParamRange,
    /// Whether the value must be a power of two.
    pub power_of_two: bool,
}

impl ParamSpec {
    /// The default value, if the parameter has one.
    pub fn default_value(&self) -> Option<ParamValue> {
        self.default.map(|make| make())
    }

    /// What the parameter accepts, in words: its kind and range ("a non-negative
    /// integer, a power of two, from 16 to 4096").
    pub fn expected(&self) -> String {
        let mut out = match (self.kind, &self.range) {
            (ParamKind::Choice, ParamRange::Choices(names)) => format!("one of {}", names.join(", ")),
            _ => self.kind.describe().to_string(),
        };
        if self.power_of_two {
            out.push_str(", a power of two");
        }
        if self.kind != ParamKind::Choice {
            if let Some(range) = self.range.describe(self.kind) {
                out.push_str(", ");
                out.push_str(&range);
            }
        }
        out
    }

    /// Converts a raw value from a topology file or `--set` and checks it against the
    /// range. The error says what was found and what is accepted.
    pub fn convert(&self, raw: &RawParam) -> Result<ParamValue, String> {
        let value = self.kind.convert(raw).map_err(|why| {
            if why.starts_with("expected ") {
                format!("expected {}, found {}", self.expected(), raw.describe())
            } else {
                format!("{why}; expected {}", self.expected())
            }
        })?;
        self.check(&value)?;
        Ok(value)
    }

    /// Checks a converted value (one set in code, too) against the kind and range.
    pub fn check(&self, value: &ParamValue) -> Result<(), String> {
        let kind_ok = matches!(
            (self.kind, value),
            (ParamKind::Bool, ParamValue::Bool(_))
                | (ParamKind::Int, ParamValue::Int(_))
                | (ParamKind::UInt, ParamValue::UInt(_))
                | (ParamKind::Float, ParamValue::Float(_))
                | (ParamKind::String | ParamKind::Choice, ParamValue::String(_))
                | (ParamKind::Duration, ParamValue::Duration(_))
                | (ParamKind::Frequency, ParamValue::Frequency(_))
                | (ParamKind::Bytes, ParamValue::Bytes(_))
        );
        let pow2_ok = !self.power_of_two || int_of(value).is_some_and(|i| i > 0 && (i & (i - 1)) == 0);
        if kind_ok && pow2_ok && self.range.admits(value) {
            Ok(())
        } else {
            Err(format!("is {value}; expected {}", self.expected()))
        }
    }
}

/// A Rust type a parameter can have: its kind, its own range, and the conversion from
/// and to a checked [`ParamValue`].
pub trait ParamType: Sized {
    /// The kind of its values.
    const KIND: ParamKind;
    /// The values the type can hold (`u32`: up to 2^32 - 1).
    const RANGE: ParamRange = ParamRange::Any;
    /// The typed value of a value of [`Self::KIND`] within [`Self::RANGE`]; `None` for
    /// any other value.
    fn from_value(value: &ParamValue) -> Option<Self>;
    /// The value as a [`ParamValue`].
    fn to_value(&self) -> ParamValue;
}

macro_rules! unsigned_param {
    ($($ty:ty),*) => {$(
        impl ParamType for $ty {
            const KIND: ParamKind = ParamKind::UInt;
            const RANGE: ParamRange = ParamRange::Int { min: 0, max: <$ty>::MAX as i128 };
            fn from_value(value: &ParamValue) -> Option<Self> {
                match value {
                    ParamValue::UInt(u) => <$ty>::try_from(*u).ok(),
                    _ => None,
                }
            }
            fn to_value(&self) -> ParamValue {
                ParamValue::UInt(u64::from(*self))
            }
        }
    )*};
}
unsigned_param!(u16, u32, u64);

impl ParamType for i64 {
    const KIND: ParamKind = ParamKind::Int;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Int(i) => Some(*i),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Int(*self)
    }
}

impl ParamType for f64 {
    const KIND: ParamKind = ParamKind::Float;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Float(x) => Some(*x),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Float(*self)
    }
}

impl ParamType for bool {
    const KIND: ParamKind = ParamKind::Bool;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Bool(*self)
    }
}

impl ParamType for String {
    const KIND: ParamKind = ParamKind::String;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::String(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::String(self.clone())
    }
}

impl ParamType for Tick {
    const KIND: ParamKind = ParamKind::Duration;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Duration(t) => Some(*t),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Duration(*self)
    }
}

impl ParamType for ClockDomain {
    const KIND: ParamKind = ParamKind::Frequency;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Frequency(c) => Some(*c),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Frequency(*self)
    }
}

/// A size in bytes (a parameter of kind [`ParamKind::Bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Bytes(pub u64);

impl Bytes {
    /// `n` KiB.
    pub const fn kib(n: u64) -> Bytes {
        Bytes(n << 10)
    }
    /// `n` MiB.
    pub const fn mib(n: u64) -> Bytes {
        Bytes(n << 20)
    }
    /// `n` GiB.
    pub const fn gib(n: u64) -> Bytes {
        Bytes(n << 30)
    }
    /// The count of bytes.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

impl ParamType for Bytes {
    const KIND: ParamKind = ParamKind::Bytes;
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Bytes(b) => Some(Bytes(*b)),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Bytes(self.0)
    }
}

/// A parameter that takes one of a fixed set of names: an enum deriving
/// `simdojo::ParamChoice` (the names are its variants in lowercase).
pub trait ParamChoice: Sized + 'static {
    /// Every name, in declaration order.
    const CHOICES: &'static [&'static str];
    /// This value's name.
    fn name(&self) -> &'static str;
    /// The value called `name`.
    fn from_name(name: &str) -> Option<Self>;
}

/// A component type's parameters as one typed struct (`#[derive(simdojo::Params)]`).
pub trait ParamSet: Sized {
    /// One spec per field, in declaration order.
    const SPECS: &'static [ParamSpec];
    /// The typed struct of resolved parameters: each value checked against its spec
    /// (a missing one takes its default), then the type's cross-field check. Errors
    /// name the parameter and where its value was set.
    fn from_params(params: &Params) -> Result<Self, ParamError>;
    /// The host memory, in bytes, the component will allocate with these parameters
    /// beyond its fixed size (tag stores, register files, queues); 0 unless the type
    /// declares an estimate.
    fn estimate(&self) -> u64;
    /// Every field as a parameter value: the parameters of a component built in code.
    fn to_params(&self) -> Params;
}

/// The parameters of a component type that has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoParams;

impl ParamSet for NoParams {
    const SPECS: &'static [ParamSpec] = &[];
    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(NoParams)
    }
    fn estimate(&self) -> u64 {
        0
    }
    fn to_params(&self) -> Params {
        Params::new()
    }
}

/// The resolved parameters of one component instance: every declared parameter with
/// its value from the topology or its default, and where each value was set.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Params {
    values: BTreeMap<String, ParamValue>,
    origins: BTreeMap<String, ValueOrigin>,
}

/// Two parameter sets are equal when their values are: where they were set is not part
/// of what they are.
impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        self.values == other.values
    }
}

macro_rules! getter {
    ($(#[$doc:meta])* $fn:ident, $variant:ident, $ty:ty) => {
        $(#[$doc])*
        pub fn $fn(&self, name: &str) -> Result<$ty, ParamError> {
            match self.values.get(name) {
                Some(ParamValue::$variant(v)) => Ok(v.clone()),
                Some(other) => Err(ParamError::new(name, format!("is {other}, not a {}", stringify!($variant)))),
                None => Err(ParamError::new(name, "is not set and has no default")),
            }
        }
    };
}

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params::default()
    }
    /// Sets `name` to `value`, replacing any earlier value (and forgetting where that
    /// one was set).
    pub fn set(&mut self, name: impl Into<String>, value: ParamValue) -> &mut Params {
        let name = name.into();
        self.origins.remove(&name);
        self.values.insert(name, value);
        self
    }
    /// Sets `name` to `value`, set at `origin`.
    pub fn set_from(&mut self, name: impl Into<String>, value: ParamValue, origin: Option<ValueOrigin>) -> &mut Params {
        let name = name.into();
        match origin {
            Some(o) => self.origins.insert(name.clone(), o),
            None => self.origins.remove(&name),
        };
        self.values.insert(name, value);
        self
    }
    /// Where the value of `name` was set, when known.
    pub fn origin(&self, name: &str) -> Option<&ValueOrigin> {
        self.origins.get(name)
    }
    /// `error` with the origin of the parameter it names filled in (unless it has one).
    pub fn locate(&self, mut error: ParamError) -> ParamError {
        if error.origin.is_none() {
            error.origin = self.origins.get(&error.name).cloned();
        }
        error
    }
    /// The value of the parameter `spec` describes as a `T`: the set value or the
    /// default, checked against the spec. This is what the [`ParamSet`] derive calls.
    pub fn typed<T: ParamType>(&self, spec: &ParamSpec) -> Result<T, ParamError> {
        let origin = || self.origins.get(spec.name).cloned();
        let value = match self.values.get(spec.name) {
            Some(v) => std::borrow::Cow::Borrowed(v),
            None => match spec.default_value() {
                Some(v) => std::borrow::Cow::Owned(v),
                None => {
                    return Err(ParamError::new(spec.name, format!("is not set and has no default; expected {}", spec.expected())))
                }
            },
        };
        spec.check(&value).map_err(|problem| ParamError { name: spec.name.to_string(), problem, origin: origin() })?;
        T::from_value(&value).ok_or_else(|| ParamError {
            name: spec.name.to_string(),
            problem: format!("is {value}; expected {}", spec.expected()),
            origin: origin(),
        })
    }
    /// Builder form of [`Params::set`].
    pub fn with(mut self, name: impl Into<String>, value: ParamValue) -> Params {
        self.set(name, value);
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
