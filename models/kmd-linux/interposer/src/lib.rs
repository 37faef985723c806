//! `libdojo_interposer.so`: loaded with `LD_PRELOAD` into an unmodified ROCm program
//! (and, through the inherited environment, into its children), it hands everything
//! that concerns the simulated GPU to a [`kmd_linux::KfdBackend`] and leaves every other
//! call to the C library.
//!
//! What it takes over:
//!
//! | call | when | what happens |
//! |---|---|---|
//! | `open` family | `/dev/kfd`, `/dev/dri/renderD<minor>` of a simulated GPU | a placeholder descriptor (`/dev/null`) reserves the number; the backend learns it ([`hooks::open`]) |
//! | `open`, `fopen`, `opendir`, `stat`, `access`, `readlink` families | `/sys/devices/virtual/kfd/...`, `/sys/class/kfd/...`, `/sys/module/amdgpu/...`, `/proc/modules` | the same path under the backend's fake root ([`paths`]) |
//! | `ioctl`, `mmap` | device descriptors | the backend ([`hooks::device`]) |
//! | `fstat` family | device descriptors | a character device (DRM major 226 for render nodes) ([`hooks::stat`]) |
//! | `close`, `dup*`, `fcntl(F_DUPFD*)` | device or backend-internal descriptors | the descriptor table follows ([`hooks::fds`]) |
//! | `munmap`, `mmap` with `MAP_FIXED`, `mremap` | always, once the backend runs | first, the backend forgets device mappings and SVM ranges where pages go away |
//! | `mprotect` | always, once the backend runs | before and after, the backend's GPU mappings of SVM memory follow the new protection |
//! | `fork` | `pthread_atfork` child handler | `after_fork_in_child` |
//!
//! **Architecture Invariant:** a process that never touches a simulated path or device
//! never creates a backend: the library costs one path comparison per `open`/`stat` and
//! one atomic load per descriptor call ([`state`]).
//!
//! **Architecture Invariant:** calls made while the interposer is already running on the
//! same thread (the backend's own `open`, `mmap`, `close`, made through Rust's standard
//! library) go straight to the C library ([`guard`]); no hook ever holds a lock while
//! calling the backend, and no panic crosses the C boundary.

pub mod guard;
pub mod hooks;
pub mod paths;
pub mod real;
pub mod state;
