//! Pure timing models of the GPU memory system: cache tags with swappable replacement,
//! miss-status holding registers, bandwidth-limited ports, an HBM controller, and the
//! per-part default parameters that feed them.
//!
//! ```text
//!   CU ── vector L1 / scalar L1 / I$ ── L2 channel ── memory-side cache ── HBM
//!          cache::CacheModel            CacheModel     CacheModel          hbm::HbmModel
//!          + mshr::MshrFile             + MshrFile     + MshrFile
//!                   links between them: bandwidth::BandwidthPort
//!   channel selection of channelled caches: interleave::ChannelInterleave
//!   defaults for each part: latency::PartTiming
//! ```
//!
//! **Architecture Invariant:** nothing in this module depends on the simdojo engine,
//! threads or wall-clock time. The components that own these models call them with the
//! current cycle of the model's clock ([`Cycle`]) and turn the answers into events. Every
//! model state is `Serialize + Deserialize` so whole-GPU checkpoints can store it, and
//! every model is deterministic: the same calls give the same answers.
//!
//! **API Boundary:** configuration mistakes are [`ConfigError`]s naming the field; no
//! model panics on caller input.

#![warn(missing_docs)]

pub mod bandwidth;
pub mod cache;
pub mod error;
pub mod hbm;
pub mod interleave;
pub mod latency;
pub mod mshr;
pub mod part;
pub mod units;

pub use self::bandwidth::{Bandwidth, BandwidthPort};
pub use self::cache::{
    AccessKind, AccessOutcome, CacheConfig, CacheModel, ReplacementPolicy, WritePolicy,
};
pub use self::error::{ConfigError, HbmError, MshrError};
pub use self::hbm::{HbmConfig, HbmModel};
pub use self::interleave::{ChannelId, ChannelInterleave};
pub use self::latency::PartTiming;
pub use self::mshr::{MshrAllocation, MshrConfig, MshrFile};
pub use self::part::Part;
pub use self::units::{ByteAddr, Cycle, LineAddr};
