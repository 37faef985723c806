//! Components: the simulated parts, their lifecycle, ports and events.
//!
//! A component is a `Box<dyn Component>` built by its registered type's `build`
//! function from a [`BuildContext`]. During `build` it opens its ports, getting typed
//! [`Port`] handles. The engine then calls, in order: [`Component::init`] once all
//! components exist; [`Component::startup`] at time zero, where it may send and
//! schedule; [`Component::handle`] for each event addressed to it, in the
//! deterministic order of `engine::order`; and [`Component::shutdown`] at the end.

use crate::resources::Resources;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

use crate::engine::Context;
use crate::ids::{ComponentId, PortIdx};
use crate::params::{ParamError, ParamSet, Params};
use crate::registry::{Message, MessageKind, Payload, PortSpec};
use crate::stats::StatsSink;

/// A simulated part.
pub trait Component: std::any::Any + Send {
    /// Called once after every component is built and linked, before time starts,
    /// and again after a restore: derive what the wiring tells (fabric sizes). It must
    /// not send or schedule; the engine reports an error if it does.
    fn init(&mut self, _ctx: &mut Context<'_>) {}
    /// Called at time zero to create the first events; not called after a restore.
    fn startup(&mut self, _ctx: &mut Context<'_>) {}
    /// Handles one event addressed to this component.
    fn handle(&mut self, event: Event, ctx: &mut Context<'_>);
    /// Called once when the run ends.
    fn shutdown(&mut self, _ctx: &mut Context<'_>) {}
    /// Reports the component's statistics.
    fn stats(&self, _out: &mut StatsSink<'_>) {}
    /// Serializes the component's state for a checkpoint.
    fn save(&self) -> Result<Vec<u8>, StateError> {
        Err(StateError::Unsupported)
    }
    /// Restores the state written by [`Component::save`].
    fn restore(&mut self, _state: &[u8]) -> Result<(), StateError> {
        Err(StateError::Unsupported)
    }
}

/// A component's state could not be saved or restored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The component type does not support checkpoints.
    #[error("this component type does not support checkpoints")]
    Unsupported,
    /// Serialization failed or the saved bytes do not match the component.
    #[error("state codec: {0}")]
    Codec(String),
}

/// Serializes a serde value with the checkpoint codec; components call this in `save`.
pub fn save_state<T: Serialize>(state: &T) -> Result<Vec<u8>, StateError> {
    postcard::to_allocvec(state).map_err(|e| StateError::Codec(e.to_string()))
}

/// Deserializes a value written by [`save_state`]; components call this in `restore`.
pub fn load_state<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, StateError> {
    postcard::from_bytes(bytes).map_err(|e| StateError::Codec(e.to_string()))
}

/// A typed handle to one of a component's ports.
pub struct Port<M> {
    idx: PortIdx,
    _msg: PhantomData<fn(M) -> M>,
}

impl<M> Port<M> {
    /// The port's index within its component.
    pub fn idx(&self) -> PortIdx {
        self.idx
    }
}

impl<M> Clone for Port<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for Port<M> {}

impl<M> std::fmt::Debug for Port<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Port({})", self.idx.0)
    }
}

impl<M> Serialize for Port<M> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.idx.serialize(s)
    }
}

impl<'de, M> Deserialize<'de> for Port<M> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Port { idx: PortIdx::deserialize(d)?, _msg: PhantomData })
    }
}

/// A timer a component scheduled for itself; cancel it with `Context::cancel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimerId(pub(crate) u64);

/// An event delivered to a component.
#[derive(Debug)]
pub enum Event {
    /// A message arrived on a port.
    Message {
        /// The receiving port.
        port: PortIdx,
        /// The message.
        payload: Payload,
    },
    /// A timer fired.
    Timer {
        /// The id `Context::schedule` returned.
        id: TimerId,
        /// The token given to `Context::schedule`.
        token: u64,
    },
    /// Input from outside the simulation (another OS thread) arrived.
    External {
        /// The input.
        payload: Payload,
    },
}

impl Event {
    /// Takes the message if this event is a message on `port`; otherwise gives the event back.
    pub fn take<M: Message>(self, port: &Port<M>) -> Result<M, Event> {
        match self {
            Event::Message { port: p, payload } if p == port.idx => match payload.downcast::<M>() {
                Ok(m) => Ok(*m),
                Err(payload) => Err(Event::Message { port: p, payload }),
            },
            other => Err(other),
        }
    }
    /// Takes an external input of type `T`; otherwise gives the event back.
    pub fn take_external<T: 'static>(self) -> Result<T, Event> {
        match self {
            Event::External { payload } => match payload.downcast::<T>() {
                Ok(m) => Ok(*m),
                Err(payload) => Err(Event::External { payload }),
            },
            other => Err(other),
        }
    }
}

/// A component could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A parameter is missing or invalid.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The component asked for a port its type does not declare.
    #[error("port `{0}` is not declared by the component type")]
    UndeclaredPort(String),
    /// The component opened a port with another message type than declared.
    #[error("port `{port}` carries {declared}, not {requested}")]
    PortType {
        /// The port.
        port: String,
        /// Declared message type.
        declared: &'static str,
        /// Requested message type.
        requested: &'static str,
    },
    /// Any other reason, in words.
    #[error("{0}")]
    Invalid(String),
}

/// What a component's `build` function gets: its identity, parameters and ports.
pub struct BuildContext<'a> {
    pub(crate) id: ComponentId,
    pub(crate) path: &'a str,
    pub(crate) params: &'a Params,
    pub(crate) specs: &'static [PortSpec],
    /// Connected port names (`mem`, `mem[3]`) of this instance.
    pub(crate) connected: &'a [String],
    /// Ports opened so far: name -> (local index, message type).
    pub(crate) opened: BTreeMap<String, (PortIdx, MessageKind)>,
    /// The simulation's shared resources.
    pub(crate) resources: Resources,
    /// Whether the component declared that it may end the run.
    pub(crate) ends_run: bool,
    /// The synchronisation hooks the component registered.
    pub(crate) hooks: Vec<std::sync::Arc<dyn crate::engine::SyncHook>>,
    /// The latency of the link or fabric on each connected port of this instance.
    pub(crate) latencies: &'a [(String, crate::time::Tick)],
}

impl<'a> BuildContext<'a> {
    /// A context for building component `id` at `path`.
    pub(crate) fn new(
        id: ComponentId,
        path: &'a str,
        params: &'a Params,
        specs: &'static [PortSpec],
        connected: &'a [String],
        resources: Resources,
        latencies: &'a [(String, crate::time::Tick)],
    ) -> BuildContext<'a> {
        BuildContext { id, path, params, specs, connected, opened: BTreeMap::new(), resources, ends_run: false, hooks: Vec::new(), latencies }
    }
    /// The component's id.
    pub fn id(&self) -> ComponentId {
        self.id
    }
    /// The component's path.
    pub fn path(&self) -> &str {
        self.path
    }
    /// The component's resolved parameters.
    pub fn params(&self) -> &Params {
        self.params
    }
    /// The component's parameters as its type's typed struct, converted and checked
    /// ([`ParamSet::from_params`]).
    pub fn typed<P: ParamSet>(&self) -> Result<P, BuildError> {
        P::from_params(self.params).map_err(BuildError::Param)
    }
    /// The shared resource of type `T` named `name`, created with `make` if this is
    /// the first request (see [`crate::resources`] for the rules of sharing).
    pub fn resource<T: std::any::Any + Send + Sync>(&mut self, name: &str, make: impl FnOnce() -> T) -> std::sync::Arc<T> {
        self.resources.get_or_insert_with(name, make)
    }
    /// Registers a periodic synchronisation hook of a shared resource (see
    /// [`crate::engine::SyncHook`]). Several components may register the same hook
    /// (the same `Arc`): it runs once per boundary. Fails if its period is zero.
    pub fn sync_hook(&mut self, hook: std::sync::Arc<dyn crate::engine::SyncHook>) -> Result<(), BuildError> {
        if hook.period() == crate::time::Tick::ZERO {
            return Err(BuildError::Invalid("a synchronisation hook's period must be at least one tick".into()));
        }
        self.hooks.push(hook);
        Ok(())
    }
    /// Declares that this component may end the run: call `Context::request_exit`,
    /// `Context::primary_hold` or `Context::primary_release`. The engine lets every
    /// other partition run ahead no further than `exit_delay` past the next event of a
    /// partition holding such a component (so an exit stops every partition at the
    /// same tick), and lets partitions without one run as far as their inputs allow.
    /// A component that did not declare it and calls one of those fails the run.
    pub fn may_end_run(&mut self) {
        self.ends_run = true;
    }
    /// The latency of the link or fabric connected to port `name` (`mem`, `mem[3]`), if
    /// one is: what a component's build checks its own timing parameters against.
    pub fn link_latency(&self, name: &str) -> Option<crate::time::Tick> {
        self.latencies.iter().find(|(p, _)| p == name).map(|(_, t)| *t)
    }
    /// Opens the scalar port `name`.
    pub fn port<M: Message>(&mut self, name: &str) -> Result<Port<M>, BuildError> {
        self.open::<M>(name, name)
    }
    /// Opens every connected element of the array port `name`, indexed `0..len` where
    /// `len` is one past the highest connected index (unconnected elements in between
    /// are opened too and may not be sent on).
    pub fn port_array<M: Message>(&mut self, name: &str) -> Result<Vec<Port<M>>, BuildError> {
        let prefix = format!("{name}[");
        let len = self
            .connected
            .iter()
            .filter_map(|p| p.strip_prefix(&prefix)?.strip_suffix(']')?.parse::<usize>().ok())
            .map(|i| i + 1)
            .max()
            .unwrap_or(0);
        (0..len).map(|i| self.open::<M>(name, &format!("{name}[{i}]"))).collect()
    }
    /// Whether the port (or array element) `name` is connected by a link.
    pub fn is_connected(&self, name: &str) -> bool {
        self.connected.iter().any(|p| p == name)
    }

    fn open<M: Message>(&mut self, spec_name: &str, full: &str) -> Result<Port<M>, BuildError> {
        let spec = self
            .specs
            .iter()
            .find(|s| s.name == spec_name)
            .ok_or_else(|| BuildError::UndeclaredPort(spec_name.to_string()))?;
        let declared = (spec.message)();
        let requested = MessageKind::of::<M>();
        if declared.type_id != requested.type_id {
            return Err(BuildError::PortType {
                port: full.to_string(),
                declared: declared.name,
                requested: requested.name,
            });
        }
        let next = PortIdx::from_index(self.opened.len());
        let idx = self.opened.entry(full.to_string()).or_insert((next, declared)).0;
        Ok(Port { idx, _msg: PhantomData })
    }
}
