//! simdojo: a deterministic, parallel, conservative discrete-event simulation engine.
//!
//! A simulation is a [`topology::Topology`] of components (registered types from the
//! [`registry`]) joined by links with a latency. The [`engine`] splits the components
//! into partitions, runs each on a worker thread, and synchronizes them in epochs
//! whose length the link latencies (the lookahead) allow. Results are bit-identical
//! for any number of threads and any partitioning: see [`engine::order`].
//!
//! ```text
//!   ┌──────────┐  Ball, 3 ns   ┌──────────┐
//!   │ pinger   │──────────────▶│ ponger   │
//!   │ (serve)  │◀──────────────│          │
//!   └──────────┘  paired link  └──────────┘
//! ```
//!
//! A two-component model, built in code, run to quiescence:
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use simdojo::component::{BuildContext, BuildError, Component, Event, Port};
//! use simdojo::engine::{Context, ExitReason, SimConfig, Simulation};
//! use simdojo::params::{ParamSet, Params};
//! use simdojo::registry::{self, ComponentType, MessageKind, PortDir, PortSpec};
//! use simdojo::time::Tick;
//! use simdojo::topology::{LinkKind, Topology};
//!
//! #[derive(Debug, Serialize, Deserialize)]
//! struct Ball(u32);
//!
//! struct Player { port: Port<Ball>, serve: bool, hits: u32 }
//!
//! /// The parameters of a player.
//! #[derive(simdojo::Params)]
//! struct PlayerParams {
//!     /// Whether this player serves first.
//!     #[param(default = false)]
//!     serve: bool,
//! }
//!
//! impl Component for Player {
//!     fn startup(&mut self, ctx: &mut Context<'_>) {
//!         if self.serve {
//!             ctx.send(&self.port, Ball(0));
//!         }
//!     }
//!     fn handle(&mut self, event: Event, ctx: &mut Context<'_>) {
//!         if let Ok(Ball(n)) = event.take(&self.port) {
//!             self.hits += 1;
//!             if n < 9 {
//!                 ctx.send(&self.port, Ball(n + 1));
//!             }
//!         }
//!     }
//! }
//!
//! fn build(ctx: &mut BuildContext<'_>) -> Result<Box<dyn Component>, BuildError> {
//!     let p: PlayerParams = ctx.typed()?;
//!     Ok(Box::new(Player { port: ctx.port("ball")?, serve: p.serve, hits: 0 }))
//! }
//!
//! simdojo::register_component!(ComponentType {
//!     name: "doc.player",
//!     doc: "Returns every ball until the tenth.",
//!     params: PlayerParams::SPECS,
//!     validate: registry::validate_with::<PlayerParams>,
//!     estimate: registry::estimate_with::<PlayerParams>,
//!     ports: &[PortSpec { name: "ball", doc: "the ball", dir: PortDir::InOut, array: false,
//!                         message: MessageKind::of::<Ball> }],
//!     stats: &[],
//!     build,
//! });
//!
//! let mut t = Topology::new();
//! let serve = Params::new().with("serve", simdojo::params::ParamValue::Bool(true));
//! let a = t.add_component("pinger", "doc.player", serve);
//! let b = t.add_component("ponger", "doc.player", Params::new());
//! t.add_link((a, "ball"), (b, "ball"), Tick::ns(3), LinkKind::Paired);
//!
//! let mut sim = Simulation::build(&t, &SimConfig::default()).unwrap();
//! let status = sim.run();
//! assert_eq!(status.reason, ExitReason::Quiescent);
//! assert_eq!(status.tick, Tick::ns(30)); // ten hits, 3 ns apart
//! assert_eq!(sim.inspect(b, |p: &Player| p.hits), Some(5));
//! ```
//!
//! Topology files describe the same thing declaratively (see [`topology::load`]);
//! the `dojo` command runs them.

#![warn(missing_docs)]

// The derives name this crate `::simdojo`, inside it too (PHOLD uses them).
extern crate self as simdojo;

pub mod chrome_trace;
pub mod component;
pub mod engine;
pub mod fs;
pub mod ids;
pub mod params;
pub mod partition;
pub mod phold;
pub mod registry;
pub mod resources;
pub mod stats;
pub mod time;
pub mod topology;

pub use inventory;
pub use simdojo_macros::{ParamChoice, Params};
