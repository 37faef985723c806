//! The exported C functions, grouped by what they act on. Each one enters the
//! interposer ([`crate::guard::enter`]) or, if the thread is already inside, calls the C
//! library's function directly.

pub mod device;
pub mod fds;
pub mod open;
pub mod stat;

use std::ffi::{c_char, c_int, CStr, CString};
use std::os::unix::ffi::OsStringExt;
use std::sync::Arc;

use kmd_linux::{DeviceNode, KfdBackend};

use crate::guard;
use crate::paths::{self, Class};
use crate::state;

/// What a path names.
pub(crate) enum Target {
    /// Not ours: the C library's function on the same path.
    Pass,
    /// A faked file: the C library's function on this path instead.
    Faked(CString),
    /// A simulated device.
    Device(&'static Arc<dyn KfdBackend>, DeviceNode),
    /// The KFD, but the backend did not start (or the caller is a `vfork` child).
    NoDevice,
}

/// Classifies `path`, starting the backend if it names something simulated. The caller
/// is inside the interposer.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
pub(crate) unsafe fn resolve(path: *const c_char) -> Target {
    if path.is_null() {
        return Target::Pass;
    }
    let bytes = CStr::from_ptr(path).to_bytes();
    match paths::classify(bytes) {
        Class::Other => Target::Pass,
        Class::Faked(rel) => match state::backend() {
            Some(b) => {
                let full = b.fake_root().join(&*rel);
                match CString::new(full.into_os_string().into_vec()) {
                    Ok(p) => Target::Faked(p),
                    Err(_) => Target::Pass,
                }
            }
            None => Target::Pass,
        },
        Class::Kfd => match state::backend() {
            Some(_) => {
                state::owned().map_or(Target::NoDevice, |b| Target::Device(b, DeviceNode::Kfd))
            }
            None => Target::NoDevice,
        },
        Class::Render(minor) => match state::backend() {
            Some(b) if b.render_minors().contains(&minor) => state::owned()
                .map_or(Target::NoDevice, |b| {
                    Target::Device(b, DeviceNode::Render { minor })
                }),
            _ => Target::Pass,
        },
    }
}

/// The path of the placeholder behind every device descriptor.
pub(crate) const PLACEHOLDER: &CStr = c"/dev/null";

/// Runs a path-taking call: `real` with the right path, `device` for a simulated
/// device, `failed` with `errno = no_device` when the KFD is unavailable.
///
/// # Safety
/// `path` is null or a NUL-terminated string; `real` and `device` are sound for it.
pub(crate) unsafe fn with_path<R: Copy>(
    what: &str,
    path: *const c_char,
    failed: R,
    no_device: c_int,
    real: impl Fn(*const c_char) -> R,
    device: impl FnOnce(&'static Arc<dyn KfdBackend>, DeviceNode) -> R,
) -> R {
    let Some(_inside) = guard::enter() else {
        return real(path);
    };
    guard::ffi(failed, || match resolve(path) {
        Target::Pass => real(path),
        Target::Faked(faked) => {
            state::trace(|| format!("{what}({:?}) -> {:?}", CStr::from_ptr(path), faked));
            real(faked.as_ptr())
        }
        Target::Device(b, node) => device(b, node),
        Target::NoDevice => {
            guard::set_errno(no_device);
            failed
        }
    })
}
