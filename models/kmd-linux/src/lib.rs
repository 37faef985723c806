//! The simulated Linux kernel-mode driver (KFD and DRM) through which unmodified ROCm
//! programs reach the simulated GPU. Empty until the local-mode issue lands.

pub mod identity;
pub mod sysfs;
