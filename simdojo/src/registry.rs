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
use crate::params::ParamKind;

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

/// A declared parameter of a component type.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// Its kind; topology values are converted to it.
    pub kind: ParamKind,
    /// The default in topology-file syntax, or `None` when the parameter is required.
    pub default: Option<&'static str>,
    /// What the parameter means, with its unit.
    pub doc: &'static str,
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
    /// Declared parameters.
    pub params: &'static [ParamSpec],
    /// Declared ports.
    pub ports: &'static [PortSpec],
    /// Declared statistics.
    pub stats: &'static [StatSpec],
    /// Constructor.
    pub build: BuildFn,
}

impl ComponentType {
    /// The declared parameter `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
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
