//! The simulated Linux kernel-mode driver (KFD and DRM) through which unmodified ROCm
//! programs reach the simulated GPU.
//!
//! - [`identity`] and [`sysfs`]: what the machine looks like to libhsakmt (the KFD
//!   topology tree and `/proc/modules`), derived from a topology file.
//! - [`backend`]: the contract between the interposer (the `dojo-interposer` cdylib,
//!   which owns the process's system calls) and a driver.
//! - [`local`]: the driver of local mode, running the simulator inside the process.
//! - [`config`]: the environment variables that describe the machine.

pub mod amdgpu_sysfs;
pub mod backend;
pub mod config;
pub mod daemon;
pub mod doorbell_trap;
pub mod gpu_metrics;
pub mod identity;
pub mod kfd;
pub mod link_stats;
pub mod local;
pub mod sysfs;

pub use backend::{DeviceNode, Errno, KfdBackend};

/// Why no backend could be made.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Local mode did not start.
    #[error(transparent)]
    Local(#[from] local::DriverError),
    /// The daemon could not be reached.
    #[error(transparent)]
    Daemon(#[from] daemon::client::ClientError),
}

/// The backend the environment asks for: a daemon's client when
/// [`config::ENV_DAEMON`] names a socket, else local mode (the simulator in this
/// process). Called once by the interposer, on the first call that touches a
/// simulated device or file.
pub fn backend_from_env() -> Result<std::sync::Arc<dyn KfdBackend>, BackendError> {
    if let Some(socket) = std::env::var_os(config::ENV_DAEMON).filter(|s| !s.is_empty()) {
        return Ok(std::sync::Arc::new(daemon::client::DaemonClient::connect(std::path::Path::new(&socket))?));
    }
    Ok(std::sync::Arc::new(local::LocalDriver::from_env()?))
}
