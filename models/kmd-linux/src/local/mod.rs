//! Local mode: the simulated KFD and DRM driver inside the application's process. The
//! simulator starts on the first open of `/dev/kfd` and runs on its own threads; the
//! interposer hands it the device calls.

use std::collections::HashMap;
use std::ffi::c_void;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::backend::{DeviceNode, Errno, KfdBackend};
use crate::config::{ConfigError, DriverConfig};
use crate::identity::{IdentityError, SystemIdentity};
use crate::kfd::user::OwnMemory;
use crate::kfd::Kfd;

/// Why the driver could not start.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The environment's configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The topology does not describe a GPU the driver can present.
    #[error("identity: {0}")]
    Identity(#[from] IdentityError),
    /// Writing the sysfs tree.
    #[error("writing the sysfs tree in {path}: {source}")]
    Sysfs {
        /// The root directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The directory standing for `/`: shared (made by `dojo run`) or owned (removed on drop).
enum FakeRoot {
    Shared(PathBuf),
    Owned(tempfile::TempDir),
}

impl FakeRoot {
    fn path(&self) -> &Path {
        match self {
            FakeRoot::Shared(p) => p,
            FakeRoot::Owned(t) => t.path(),
        }
    }
}

/// See the [module docs](self).
pub struct LocalDriver {
    config: DriverConfig,
    system: SystemIdentity,
    root: FakeRoot,
    minors: Vec<u32>,
    fds: Mutex<HashMap<RawFd, DeviceNode>>,
    forked: AtomicBool,
    /// The device, opened (simulation started) on the first open of a device file.
    kfd: OnceLock<Result<Arc<Kfd>, String>>,
}

impl LocalDriver {
    /// The driver for the machine the environment describes (see [`crate::config`]).
    pub fn from_env() -> Result<LocalDriver, DriverError> {
        LocalDriver::new(DriverConfig::from_env()?)
    }

    /// The driver for `config`: writes the sysfs tree unless `config.fake_root` has one.
    pub fn new(config: DriverConfig) -> Result<LocalDriver, DriverError> {
        let system = SystemIdentity::from_topology(&config.topology)?;
        let root = match &config.fake_root {
            Some(p) if p.join(crate::sysfs::TOPOLOGY_DIR).is_dir() => FakeRoot::Shared(p.clone()),
            _ => {
                let dir = tempfile::Builder::new()
                    .prefix("dojo-sysfs-")
                    .tempdir()
                    .map_err(|source| DriverError::Sysfs {
                        path: std::env::temp_dir(),
                        source,
                    })?;
                crate::sysfs::write_tree(dir.path(), &system).map_err(|source| {
                    DriverError::Sysfs {
                        path: dir.path().to_path_buf(),
                        source,
                    }
                })?;
                FakeRoot::Owned(dir)
            }
        };
        let minors = system.gpus.iter().map(|g| g.drm_render_minor).collect();
        if config.log_ioctls {
            let gpus: Vec<String> = system.gpus.iter().map(|g| g.to_string()).collect();
            eprintln!("dojo: trace: driver started: {} (sysfs tree in {})", gpus.join(", "), root.path().display());
        }
        Ok(LocalDriver {
            config,
            system,
            root,
            minors,
            fds: Mutex::new(HashMap::new()),
            forked: AtomicBool::new(false),
            kfd: OnceLock::new(),
        })
    }

    /// The machine as the driver presents it.
    pub fn system(&self) -> &SystemIdentity {
        &self.system
    }

    /// The configuration.
    pub fn config(&self) -> &DriverConfig {
        &self.config
    }

    /// The open device (starting the simulation on first use).
    fn device(&self) -> Result<&Arc<Kfd>, Errno> {
        if self.forked.load(Ordering::Relaxed) {
            return Err(Errno::BADF);
        }
        let r = self.kfd.get_or_init(|| {
            Kfd::open(&self.config, self.system.clone())
                .map(|k| {
                    k.device().publish_sysfs(self.root.path());
                    Arc::new(k)
                })
                .map_err(|e| {
                    let msg = format!("the simulated GPU did not start: {e}");
                    eprintln!("dojo: {msg}");
                    msg
                })
        });
        r.as_ref().map_err(|_| Errno::NODEV)
    }

    fn opened_device(&self) -> Option<&Arc<Kfd>> {
        self.kfd.get().and_then(|r| r.as_ref().ok())
    }
}

impl KfdBackend for LocalDriver {
    fn fake_root(&self) -> &Path {
        self.root.path()
    }

    fn render_minors(&self) -> &[u32] {
        &self.minors
    }

    fn opened(&self, fd: RawFd, node: DeviceNode) {
        // Start the simulation now: the application's next call needs it.
        let _ = self.device();
        self.fds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(fd, node);
    }

    fn closed(&self, fd: RawFd, _node: DeviceNode) {
        self.fds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&fd);
    }

    unsafe fn ioctl(
        &self,
        _fd: RawFd,
        node: DeviceNode,
        request: u64,
        arg: *mut c_void,
    ) -> Result<i32, Errno> {
        let kfd = self.device()?;
        match node {
            DeviceNode::Kfd => kfd.kfd_ioctl(request, arg as u64, &OwnMemory),
            DeviceNode::Render { minor } => kfd.drm_ioctl(request, arg as u64, minor, &OwnMemory),
        }
    }

    unsafe fn mmap(
        &self,
        _fd: RawFd,
        node: DeviceNode,
        addr: *mut c_void,
        len: usize,
        prot: i32,
        flags: i32,
        offset: i64,
    ) -> Result<*mut c_void, Errno> {
        let kfd = self.device().map_err(|_| Errno::NODEV)?;
        // SAFETY: the caller's contract (the application's own mmap request).
        unsafe {
            match node {
                DeviceNode::Kfd => kfd.kfd_mmap(addr, len, prot, flags, offset as u64),
                DeviceNode::Render { .. } => kfd.render_mmap(addr, len, prot, flags, offset as u64),
            }
        }
    }

    fn unmapping(&self, addr: usize, len: usize) {
        if let Some(kfd) = self.opened_device() {
            kfd.unmapping(addr, len);
        }
    }

    fn protecting(&self, addr: usize, len: usize, done: bool) {
        if let Some(kfd) = self.opened_device() {
            kfd.svm_protecting(addr, len, done);
        }
    }

    fn is_internal_fd(&self, fd: RawFd) -> bool {
        self.opened_device().is_some_and(|k| k.backing_fd() == fd)
    }

    fn after_fork_in_child(&self) {
        self.forked.store(true, Ordering::Relaxed);
    }

    fn shutdown(&self) {
        if self.forked.load(Ordering::Relaxed) {
            return;
        }
        // The driver lives in a static that is never dropped: remove an owned tree now.
        if let FakeRoot::Owned(dir) = &self.root {
            let _ = std::fs::remove_dir_all(dir.path());
        }
        let Some(kfd) = self.opened_device() else {
            return;
        };
        // The process is exiting: its buffers go with it; stopping the machine is all
        // (the application's remaining threads may still touch their mappings).
        let kernels = kfd.device().stop();
        if let Some(path) = &self.config.stats {
            // `dojo run` prints the kernel table from the file once the program exited.
            let components = kfd.device().component_stats().unwrap_or_default();
            crate::link_stats::report(&components);
            if let Err(e) = amdgpu::gpu::stats::StatsFile::new(kernels, &components).write(path) {
                eprintln!("dojo: writing the statistics: {e}");
            }
        }
    }
}
