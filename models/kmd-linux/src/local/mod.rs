//! Local mode: the simulated KFD and DRM driver inside the application's process. The
//! simulator starts on the first open of `/dev/kfd` and runs on its own threads; the
//! interposer hands it the device calls.

use std::collections::{BTreeSet, HashMap};
use std::ffi::c_void;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::backend::{DeviceNode, Errno, KfdBackend};
use crate::config::{ConfigError, DriverConfig};
use crate::identity::{IdentityError, SystemIdentity};

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
    warned: Mutex<BTreeSet<u64>>,
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
                let dir = tempfile::Builder::new().prefix("dojo-sysfs-").tempdir().map_err(|source| DriverError::Sysfs {
                    path: std::env::temp_dir(),
                    source,
                })?;
                crate::sysfs::write_tree(dir.path(), &system)
                    .map_err(|source| DriverError::Sysfs { path: dir.path().to_path_buf(), source })?;
                FakeRoot::Owned(dir)
            }
        };
        let minors = system.gpus.iter().map(|g| g.drm_render_minor).collect();
        Ok(LocalDriver {
            config,
            system,
            root,
            minors,
            fds: Mutex::new(HashMap::new()),
            forked: AtomicBool::new(false),
            warned: Mutex::new(BTreeSet::new()),
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

    fn warn_once(&self, request: u64, what: &str) {
        let mut w = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        if w.insert(request) {
            eprintln!("dojo: {what}");
        }
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
        self.fds.lock().unwrap_or_else(|e| e.into_inner()).insert(fd, node);
    }

    fn closed(&self, fd: RawFd, _node: DeviceNode) {
        self.fds.lock().unwrap_or_else(|e| e.into_inner()).remove(&fd);
    }

    unsafe fn ioctl(&self, _fd: RawFd, node: DeviceNode, request: u64, _arg: *mut c_void) -> Result<i32, Errno> {
        if self.forked.load(Ordering::Relaxed) {
            return Err(Errno::BADF);
        }
        self.warn_once(request, &format!("unsupported ioctl {request:#x} on {node:?}"));
        Err(Errno::NOTTY)
    }

    unsafe fn mmap(
        &self,
        _fd: RawFd,
        _node: DeviceNode,
        _addr: *mut c_void,
        _len: usize,
        _prot: i32,
        _flags: i32,
        _offset: i64,
    ) -> Result<*mut c_void, Errno> {
        Err(Errno::NODEV)
    }

    fn unmapping(&self, _addr: usize, _len: usize) {}

    fn is_internal_fd(&self, _fd: RawFd) -> bool {
        false
    }

    fn after_fork_in_child(&self) {
        self.forked.store(true, Ordering::Relaxed);
    }

    fn shutdown(&self) {}
}
