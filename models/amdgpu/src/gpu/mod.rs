//! The GPU's shared state and the protocol between its components: what every
//! component reads or sends, and what the embedder (the loader, the KFD emulation, the
//! VM facade) reaches through [`shared::GpuShared`].
//!
//! **Architecture Invariant:** nothing here names a component or the host side: this
//! layer uses only [`crate::timing`], the ISA crate and the engine's API. What the state
//! needs from above is a trait it owns ([`shared::HostPoller`], [`shared::HostHooks`],
//! [`memory::FaultResolver`]) or arithmetic it owns ([`occupancy`]). The layer test
//! (`tests/layers.rs`) enforces it.

pub mod aql;
pub mod clock;
pub mod ids;
pub mod loaded_image;
pub mod memory;
pub mod messages;
pub mod occupancy;
pub mod params;
pub mod remote;
pub mod sdma;
pub mod shared;
pub mod stats;
pub mod visibility;
