//! The contract between the interposer (which owns the process's system calls) and a
//! KFD implementation: the in-process driver of local mode, or a daemon client.
//!
//! The interposer decides *which* calls concern the simulated devices (by path at open
//! time, then by file descriptor) and hands them here; the backend decides *what* they
//! do. A backend never sees calls on ordinary files.

use std::ffi::c_void;
use std::os::fd::RawFd;
use std::path::Path;

pub use rustix::io::Errno;

/// A simulated device file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceNode {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>`.
    Render {
        /// The render minor (the `drm_render_minor` of a GPU node in sysfs).
        minor: u32,
    },
}

/// What the interposer needs from a KFD implementation. All methods may be called from
/// any application thread, concurrently.
pub trait KfdBackend: Send + Sync + 'static {
    /// The directory standing for `/` for the faked sysfs and procfs files: the
    /// interposer rewrites `/sys/devices/virtual/kfd/...`, `/sys/class/kfd/...`,
    /// `/sys/module/amdgpu/...` and `/proc/modules` to the same path under this root.
    fn fake_root(&self) -> &Path;

    /// The render minors of the simulated GPUs (`/dev/dri/renderD<minor>` opens as
    /// [`DeviceNode::Render`]).
    fn render_minors(&self) -> &[u32];

    /// `fd`, a real descriptor the interposer opened as a placeholder (it stays open, so
    /// the number cannot be reused), now stands for `node`. Also called for each
    /// duplicate made by dup/dup2/dup3/fcntl(F_DUPFD).
    fn opened(&self, fd: RawFd, node: DeviceNode);

    /// `fd` was closed by the application. The backend forgets the descriptor; as in
    /// the kernel, the process's GPU context (buffers, queues, events) lives on until
    /// the process ends, whatever its descriptors.
    fn closed(&self, fd: RawFd, node: DeviceNode);

    /// An ioctl on a device descriptor. `arg` is the application's pointer, unchecked:
    /// the backend validates every access through it.
    ///
    /// # Safety
    /// `arg` comes from the application; the backend must only access it through
    /// checked copies (a bad pointer is `EFAULT`, never a crash).
    unsafe fn ioctl(
        &self,
        fd: RawFd,
        node: DeviceNode,
        request: u64,
        arg: *mut c_void,
    ) -> Result<i32, Errno>;

    /// An mmap of a device descriptor. The backend performs the mapping (at `addr` when
    /// `flags` has `MAP_FIXED`) and returns its address.
    ///
    /// # Safety
    /// With `MAP_FIXED` the mapping replaces whatever the application had at `addr`,
    /// exactly as the real mmap would.
    #[allow(clippy::too_many_arguments)] // mmap's own six plus the descriptor and its node
    unsafe fn mmap(
        &self,
        fd: RawFd,
        node: DeviceNode,
        addr: *mut c_void,
        len: usize,
        prot: i32,
        flags: i32,
        offset: i64,
    ) -> Result<*mut c_void, Errno>;

    /// The application unmaps `[addr, addr + len)`. Called before the real munmap (which
    /// the interposer then performs), for every munmap: the backend forgets the device
    /// mappings in that range.
    fn unmapping(&self, addr: usize, len: usize);

    /// The application changes the protection of `[addr, addr + len)` (mprotect):
    /// called with `done` false before the real call, then with `done` true after it
    /// succeeded. The GPU's mappings of that memory follow (the driver's MMU notifier);
    /// nothing to do for a backend without them.
    fn protecting(&self, addr: usize, len: usize, done: bool) {
        let _ = (addr, len, done);
    }

    /// Whether `fd` is one of the backend's own descriptors (memfds, eventfds,
    /// sockets), which the application must not close or replace: the interposer fails
    /// such a close, and a dup2/dup3 onto it, with `EBADF`.
    fn is_internal_fd(&self, fd: RawFd) -> bool;

    /// In a child process right after fork: the device state belongs to the parent.
    /// The child's descriptors of the devices stay open but every call on them fails
    /// (`EBADF` for ioctl, `ENODEV` for mmap), as with a real KFD after fork.
    fn after_fork_in_child(&self);

    /// The process is exiting (an atexit handler): write statistics, stop threads.
    fn shutdown(&self);
}
