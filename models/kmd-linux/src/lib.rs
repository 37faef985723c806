//! The simulated Linux kernel-mode driver (KFD and DRM) through which unmodified ROCm
//! programs reach the simulated GPU.
//!
//! - [`identity`] and [`sysfs`]: what the machine looks like to libhsakmt (the KFD
//!   topology tree and `/proc/modules`), derived from a topology file.
//! - [`backend`]: the contract between the interposer (the `dojo-interposer` cdylib,
//!   which owns the process's system calls) and a driver.
//! - [`local`]: the driver of local mode, running the simulator inside the process.
//! - [`config`]: the environment variables that describe the machine.

pub mod backend;
pub mod config;
pub mod daemon;
pub mod doorbell_trap;
pub mod identity;
pub mod kfd;
pub mod local;
pub mod sysfs;

pub use backend::{DeviceNode, Errno, KfdBackend};

/// The backend the environment asks for (today: local mode, the simulator in this
/// process). Called once by the interposer, on the first call that touches a
/// simulated device or file.
pub fn backend_from_env() -> Result<std::sync::Arc<dyn KfdBackend>, local::DriverError> {
    Ok(std::sync::Arc::new(local::LocalDriver::from_env()?))
}
