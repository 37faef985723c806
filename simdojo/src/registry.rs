//! The plug-in registry: every component type a binary links in, with its parameters,
//! ports and statistics.
//!
//! A crate registers a type with [`register_component!`](crate::register_component),
//! which submits a static [`ComponentType`] to `inventory`; nothing has to be called at
//! start-up. Topology validation and `dojo plugins` read the registry.

use std::any::{Any, TypeId};
use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::component::{BuildContext, BuildError, Component};
use crate::params::{ParamError, ParamSet, Params};
pub use crate::params::ParamSpec;

/// A message type that can travel over a link: sendable between worker threads,
/// printable for traces, and serializable so in-flight messages can be checkpointed.
pub trait Message: Any + Send + fmt::Debug + Serialize + DeserializeOwned {}
impl<T: Any + Send + fmt::Debug + Serialize + DeserializeOwned> Message for T {}

/// A message payload in flight, its concrete type erased.
pub type Payload = Box<dyn Any + Send>;

/// Run-time description of a [`Message`] type: its name, id and checkpoint codec.
#[derive(Clone, Copy)]
pub struct MessageKind {
    /// The Rust type name, for error messages and `dojo plugins`.
    pub name: &'static str,
    /// The type's id; two ports can be linked only when these are equal.
    pub type_id: TypeId,
    /// Serializes a payload of this type.
    pub encode: fn(&(dyn Any + Send)) -> Result<Vec<u8>, CodecError>,
    /// Deserializes a payload of this type.
    pub decode: fn(&[u8]) -> Result<Payload, CodecError>,
}

impl MessageKind {
    /// The description of message type `M`.
    pub fn of<M: Message>() -> MessageKind {
        MessageKind {
            name: std::any::type_name::<M>(),
            type_id: TypeId::of::<M>(),
            encode: |any| match any.downcast_ref::<M>() {
                Some(m) => postcard::to_allocvec(m).map_err(|e| CodecError(e.to_string())),
                None => Err(CodecError(format!("payload is not a {}", std::any::type_name::<M>()))),
            },
            decode: |bytes| {
                postcard::from_bytes::<M>(bytes)
                    .map(|m| Box::new(m) as Payload)
                    .map_err(|e| CodecError(e.to_string()))
            },
        }
    }
}

impl fmt::Debug for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A payload could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message codec: {0}")]
pub struct CodecError(pub String);

/// Which way messages flow through a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortDir {
    /// The component only receives on this port.
    In,
    /// The component only sends on this port.
    Out,
    /// The component sends and receives (a paired link).
    InOut,
}

/// A declared port of a component type.
#[derive(Clone, Copy)]
pub struct PortSpec {
    /// The port's name. An array port `mem` is connected as `mem[0]`, `mem[1]`, ...
    pub name: &'static str,
    /// What the port is for.
    pub doc: &'static str,
    /// Direction of message flow.
    pub dir: PortDir,
    /// Whether this is an array of ports indexed `name[i]`.
    pub array: bool,
    /// The message type carried, as a function because `TypeId::of` is not const.
    pub message: fn() -> MessageKind,
}

/// The kind of a statistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatKind {
    /// A monotonically increasing count.
    Counter,
    /// A sum with count, min and max of samples.
    Accumulator,
    /// A distribution of samples (hdrhistogram).
    Distribution,
}

/// A declared statistic of a component type.
#[derive(Clone, Copy, Debug)]
pub struct StatSpec {
    /// The statistic's name within the component.
    pub name: &'static str,
    /// Its kind.
    pub kind: StatKind,
    /// The unit of its samples (`"events"`, `"ps"`, `"bytes"`).
    pub unit: &'static str,
    /// What it measures.
    pub doc: &'static str,
}

/// Builds a component instance from its resolved parameters and ports.
pub type BuildFn = fn(&mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError>;

/// A registered component type.
pub struct ComponentType {
    /// The type name used in topology files, `library.name` (`phold.lp`, `amdgpu.cu`).
    pub name: &'static str,
    /// A one-paragraph description.
    pub doc: &'static str,
    /// Declared parameters: the [`ParamSet::SPECS`] of the type's parameter struct.
    pub params: &'static [ParamSpec],
    /// Converts resolved parameters to the type's parameter struct and runs its checks,
    /// without building anything: [`validate_with`] of the struct.
    pub validate: fn(&Params) -> Result<(), ParamError>,
    /// The host memory, in bytes, a component with these parameters will allocate
    /// beyond its fixed size: [`estimate_with`] of the struct.
    pub estimate: fn(&Params) -> Result<u64, ParamError>,
    /// Declared ports.
    pub ports: &'static [PortSpec],
    /// Declared statistics.
    pub stats: &'static [StatSpec],
    /// Constructor.
    pub build: BuildFn,
}

/// [`ComponentType::validate`] of a type whose parameters are `P`.
pub fn validate_with<P: ParamSet>(params: &Params) -> Result<(), ParamError> {
    P::from_params(params).map(|_| ())
}

/// [`ComponentType::estimate`] of a type whose parameters are `P`.
pub fn estimate_with<P: ParamSet>(params: &Params) -> Result<u64, ParamError> {
    P::from_params(params).map(|p| p.estimate())
}

impl ComponentType {
    /// The declared parameter `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// `given` with every declared parameter it lacks set to its default; an error
    /// names a parameter the type does not declare or a value its spec refuses.
    pub fn resolve(&self, given: &Params) -> Result<Params, ParamError> {
        let mut out = given.clone();
        for (name, value) in given.iter() {
            let Some(spec) = self.param(name) else {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(given.locate(ParamError::new(
                    name,
                    format!("is not declared: type `{}` has no parameter `{name}` (it has: {})", self.name, known.join(", ")),
                )));
            };
            spec.check(value).map_err(|problem| given.locate(ParamError::new(name, problem)))?;
        }
        for spec in self.params {
            if given.get(spec.name).is_none() {
                if let Some(value) = spec.default_value() {
                    out.set(spec.name, value);
                }
            }
        }
        Ok(out)
    }
    /// The declared port `name` (without an array index).
    pub fn port(&self, name: &str) -> Option<&'static PortSpec> {
        self.ports.iter().find(|p| p.name == name)
    }
}

impl fmt::Debug for ComponentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentType").field("name", &self.name).finish_non_exhaustive()
    }
}

inventory::collect!(ComponentType);

/// A component type name that is no longer registered and the registered type with the
/// parameter setting that does what it did (`amdgpu.l2.srrip` is `amdgpu.l2` with
/// `policy = "srrip"`). A topology naming it gets an error that says so. Submitted with
/// [`register_former_type!`](crate::register_former_type).
#[derive(Debug)]
pub struct FormerType {
    /// The old type name.
    pub name: &'static str,
    /// The type to use instead.
    pub now: &'static str,
    /// The parameter setting that gives the old behaviour (`policy = "srrip"`).
    pub with: &'static str,
}

inventory::collect!(FormerType);

/// The former type called `name`, if a crate registered one.
pub fn former_type(name: &str) -> Option<&'static FormerType> {
    inventory::iter::<FormerType>.into_iter().find(|t| t.name == name)
}

/// Registers a former type name: `register_former_type!("old.name", "new.name", "param = value");`.
#[macro_export]
macro_rules! register_former_type {
    ($old:expr, $now:expr, $with:expr) => {
        $crate::inventory::submit! { $crate::registry::FormerType { name: $old, now: $now, with: $with } }
    };
}

/// All registered component types, sorted by name.
pub fn component_types() -> Vec<&'static ComponentType> {
    let mut all: Vec<_> = inventory::iter::<ComponentType>.into_iter().collect();
    all.sort_by_key(|t| t.name);
    all
}

/// The registered component type called `name`.
pub fn lookup(name: &str) -> Option<&'static ComponentType> {
    inventory::iter::<ComponentType>.into_iter().find(|t| t.name == name)
}

/// Registers a component type: `register_component!(ComponentType { ... });`.
#[macro_export]
macro_rules! register_component {
    ($ty:expr) => {
        $crate::inventory::submit! { $ty }
    };
}
