//! The process-wide state: the backend (created on first need), the table of device
//! descriptors, and which process owns them.
//!
//! The backend is made by [`kmd_linux::backend_from_env`] on the first call that
//! touches a faked path or a device, never in a constructor. If that fails, one line
//! goes to stderr and the process continues without a GPU (device opens fail with
//! `ENODEV`, faked paths are the real ones).

use std::ffi::c_int;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use kmd_linux::{DeviceNode, KfdBackend};

/// Device descriptors must be below this number (a placeholder above it is closed and
/// the open fails with `EMFILE`).
pub const MAX_FDS: usize = 1 << 16;

static BACKEND: OnceLock<Option<Arc<dyn KfdBackend>>> = OnceLock::new();

/// The process the device descriptors belong to (a `vfork` child shares our memory but
/// must not change it).
static OWNER: AtomicI32 = AtomicI32::new(0);

static TRACE: AtomicBool = AtomicBool::new(false);

/// Device node of each descriptor: 0 none, 1 KFD, 2 + minor a render node.
static FDS: [AtomicU32; MAX_FDS] = [const { AtomicU32::new(0) }; MAX_FDS];

/// The backend, created now if this is the first need. `None` if it failed to start.
/// The caller must be inside the interposer ([`crate::guard::enter`]).
pub fn backend() -> Option<&'static Arc<dyn KfdBackend>> {
    BACKEND.get_or_init(start).as_ref()
}

/// The backend if it already runs (never creates it).
pub fn running() -> Option<&'static Arc<dyn KfdBackend>> {
    BACKEND.get().and_then(|b| b.as_ref())
}

/// The running backend, if the caller is the process that owns the device descriptors
/// (not a `vfork` child borrowing our memory).
pub fn owned() -> Option<&'static Arc<dyn KfdBackend>> {
    let backend = running()?;
    // SAFETY: getpid has no preconditions.
    (unsafe { libc::getpid() } == OWNER.load(Ordering::Acquire)).then_some(backend)
}

/// Whether `DOJO_LOG_IOCTLS` asks for a line per device call.
pub fn tracing() -> bool {
    TRACE.load(Ordering::Relaxed)
}

fn start() -> Option<Arc<dyn KfdBackend>> {
    TRACE.store(
        std::env::var(kmd_linux::config::ENV_LOG_IOCTLS).is_ok_and(|v| !v.is_empty() && v != "0"),
        Ordering::Relaxed,
    );
    let created = std::panic::catch_unwind(kmd_linux::backend_from_env);
    let backend = match created {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => {
            eprintln!("dojo: the simulated GPU driver did not start: {e}");
            return None;
        }
        Err(_) => {
            eprintln!("dojo: the simulated GPU driver panicked while starting");
            return None;
        }
    };
    // SAFETY: getpid has no preconditions; the handlers are plain extern "C" functions.
    unsafe {
        OWNER.store(libc::getpid(), Ordering::Release);
        libc::pthread_atfork(None, None, Some(child_after_fork));
        libc::atexit(at_exit);
    }
    Some(backend)
}

extern "C" fn child_after_fork() {
    // SAFETY: getpid has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, Ordering::Release);
    let _inside = crate::guard::enter();
    if let Some(b) = running() {
        crate::guard::ffi((), || b.after_fork_in_child());
    }
}

extern "C" fn at_exit() {
    let _inside = crate::guard::enter();
    if let Some(b) = running() {
        crate::guard::ffi((), || b.shutdown());
    }
}

fn encode(node: DeviceNode) -> u32 {
    match node {
        DeviceNode::Kfd => 1,
        DeviceNode::Render { minor } => minor.saturating_add(2),
    }
}

fn decode(v: u32) -> Option<DeviceNode> {
    match v {
        0 => None,
        1 => Some(DeviceNode::Kfd),
        n => Some(DeviceNode::Render { minor: n - 2 }),
    }
}

fn slot(fd: RawFd) -> Option<&'static AtomicU32> {
    usize::try_from(fd).ok().and_then(|i| FDS.get(i))
}

/// The device `fd` stands for.
pub fn node_of(fd: RawFd) -> Option<DeviceNode> {
    slot(fd).and_then(|s| decode(s.load(Ordering::Acquire)))
}

/// Records that `fd` stands for `node`; false if `fd` is too large for the table.
pub fn set_node(fd: RawFd, node: DeviceNode) -> bool {
    slot(fd)
        .map(|s| s.store(encode(node), Ordering::Release))
        .is_some()
}

/// Forgets `fd`, returning the device it stood for.
pub fn take_node(fd: RawFd) -> Option<DeviceNode> {
    slot(fd).and_then(|s| decode(s.swap(0, Ordering::AcqRel)))
}

/// The name of a device for trace lines.
pub fn node_name(node: DeviceNode) -> String {
    match node {
        DeviceNode::Kfd => "/dev/kfd".into(),
        DeviceNode::Render { minor } => format!("/dev/dri/renderD{minor}"),
    }
}

/// Prints a trace line if tracing.
pub fn trace(line: impl FnOnce() -> String) {
    if tracing() {
        eprintln!("dojo: trace: {}", line());
    }
}

/// A backend result for trace lines.
pub fn outcome<T: std::fmt::Debug>(res: &Result<T, kmd_linux::Errno>) -> String {
    match res {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error {} ({e})", e.raw_os_error()),
    }
}

/// `-1` with `errno` set, for hooks.
pub fn fail(errno: c_int) -> c_int {
    crate::guard::set_errno(errno);
    -1
}
