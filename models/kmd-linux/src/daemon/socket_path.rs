//! Where the daemon's socket lives, and the private directory around it.
//!
//! The socket is `daemon.sock` in the first of:
//!
//! 1. `$DOJO_RUNTIME_DIR` (must be absolute),
//! 2. `$XDG_RUNTIME_DIR/dojo` (ignored unless absolute, as the XDG spec says),
//! 3. `/tmp/dojo-<uid>`.
//!
//! **Invariant:** the directory is owned by our effective uid and has no group or
//! other permissions (0700 when we create it). An existing directory that is not
//! (another user's, group-writable, a symlink) is refused with an error naming it and
//! its mode, never used or repaired: in a shared `/tmp`, another user could have made
//! it to intercept clients. The daemon also checks each peer's uid
//! ([`super::transport::check_peer_uid`]); the directory keeps other users from even
//! reaching the socket.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::backend::Errno;

/// The environment variable naming the runtime directory explicitly.
pub const RUNTIME_DIR_ENV: &str = "DOJO_RUNTIME_DIR";

/// The socket's file name in the runtime directory.
pub const SOCKET_NAME: &str = "daemon.sock";

/// Most bytes of a socket path (`sun_path` holds 108 with the terminating NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// Why the socket's location cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SocketPathError {
    /// `$DOJO_RUNTIME_DIR` is a relative path (client and daemon may run in different
    /// directories).
    #[error("{RUNTIME_DIR_ENV}={} is not an absolute path", .0.display())]
    RelativeRuntimeDir(PathBuf),
    /// The socket path is too long for a Unix socket address.
    #[error("socket path {} has {len} bytes; a Unix socket path holds at most {max}", .path.display())]
    PathTooLong {
        /// The path.
        path: PathBuf,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The directory could not be created or opened.
    #[error("runtime directory {}: {source}", .path.display())]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The path is a symlink or not a directory.
    #[error("runtime directory {} is not a directory (or is a symbolic link)", .path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// The directory belongs to another user.
    #[error("runtime directory {} is owned by uid {owner}, not by this user (uid {uid})", .path.display())]
    WrongOwner {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// Our effective uid.
        uid: u32,
    },
    /// The directory grants permissions to group or others.
    #[error("runtime directory {} has mode {mode:04o}; it must not grant group or other permissions (use 0700)", .path.display())]
    InsecureMode {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Something other than a socket is where the socket should be.
    #[error("{} exists and is not a socket", .path.display())]
    NotASocket {
        /// The path.
        path: PathBuf,
    },
    /// A daemon already answers on the socket.
    #[error("a daemon is already listening on {}", .path.display())]
    DaemonRunning {
        /// The socket.
        path: PathBuf,
    },
    /// Binding, connecting or removing the socket failed.
    #[error("{what} {}: {source}", .path.display())]
    Socket {
        /// The operation.
        what: &'static str,
        /// The socket.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// Which rule chose the directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocationSource {
    /// `$DOJO_RUNTIME_DIR`.
    DojoRuntimeDir,
    /// `$XDG_RUNTIME_DIR/dojo`.
    XdgRuntimeDir,
    /// `/tmp/dojo-<uid>`.
    Tmp,
}

/// The daemon's socket and its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketLocation {
    /// The private directory.
    pub dir: PathBuf,
    /// `dir/daemon.sock`.
    pub socket: PathBuf,
    /// Which rule chose it.
    pub source: LocationSource,
}

impl SocketLocation {
    /// The location this process's environment names.
    pub fn from_env() -> Result<SocketLocation, SocketPathError> {
        SocketLocation::resolve(
            |name| std::env::var_os(name),
            rustix::process::getuid().as_raw(),
        )
    }

    /// The location for the environment `lookup` (empty values count as unset) and
    /// user `uid`.
    pub fn resolve(
        lookup: impl Fn(&str) -> Option<OsString>,
        uid: u32,
    ) -> Result<SocketLocation, SocketPathError> {
        let get = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let (dir, source) = if let Some(dir) = get(RUNTIME_DIR_ENV) {
            if !dir.is_absolute() {
                return Err(SocketPathError::RelativeRuntimeDir(dir));
            }
            (dir, LocationSource::DojoRuntimeDir)
        } else if let Some(xdg) = get("XDG_RUNTIME_DIR").filter(|p| p.is_absolute()) {
            (xdg.join("dojo"), LocationSource::XdgRuntimeDir)
        } else {
            (
                PathBuf::from(format!("/tmp/dojo-{uid}")),
                LocationSource::Tmp,
            )
        };
        SocketLocation::in_dir(dir, source)
    }

    /// The socket in `dir`.
    pub fn in_dir(dir: PathBuf, source: LocationSource) -> Result<SocketLocation, SocketPathError> {
        let socket = dir.join(SOCKET_NAME);
        let len = socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(SocketPathError::PathTooLong {
                path: socket,
                len,
                max: MAX_SOCKET_PATH,
            });
        }
        Ok(SocketLocation {
            dir,
            socket,
            source,
        })
    }

    /// Creates the directory (0700, with any missing parents) or checks the existing
    /// one ([`check_private_dir`]).
    pub fn prepare(&self) -> Result<(), SocketPathError> {
        ensure_private_dir(&self.dir)
    }

    /// The daemon's side: prepares the directory, replaces a stale socket (one no
    /// daemon answers on), binds and listens, and makes the socket 0600.
    pub fn listen(&self) -> Result<UnixListener, SocketPathError> {
        self.prepare()?;
        let path = &self.socket;
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_socket() => {
                return Err(SocketPathError::NotASocket { path: path.clone() })
            }
            Ok(_) => match UnixStream::connect(path) {
                Ok(_) => return Err(SocketPathError::DaemonRunning { path: path.clone() }),
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    std::fs::remove_file(path).map_err(|source| SocketPathError::Socket {
                        what: "removing the stale socket",
                        path: path.clone(),
                        source,
                    })?
                }
                Err(source) => {
                    return Err(SocketPathError::Socket {
                        what: "probing",
                        path: path.clone(),
                        source,
                    })
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(SocketPathError::Socket {
                    what: "inspecting",
                    path: path.clone(),
                    source,
                })
            }
        }
        let listener = UnixListener::bind(path).map_err(|source| SocketPathError::Socket {
            what: "binding",
            path: path.clone(),
            source,
        })?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| SocketPathError::Socket {
                what: "restricting",
                path: path.clone(),
                source,
            },
        )?;
        Ok(listener)
    }

    /// The client's side: checks the directory (without creating it) and connects.
    pub fn connect(&self) -> Result<UnixStream, SocketPathError> {
        check_private_dir(&self.dir)?;
        UnixStream::connect(&self.socket).map_err(|source| SocketPathError::Socket {
            what: "connecting to",
            path: self.socket.clone(),
            source,
        })
    }
}

/// Creates `dir` with mode 0700 (and missing parents, also 0700) unless it exists, then
/// checks it with [`check_private_dir`].
pub fn ensure_private_dir(dir: &Path) -> Result<(), SocketPathError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| SocketPathError::Directory {
            path: dir.to_path_buf(),
            source,
        })?;
    check_private_dir(dir)
}

/// Checks that `dir` is a directory (not a symlink), owned by our effective uid, with
/// no group or other permissions. An owner missing its own bits (a strict umask at
/// creation) gets them back.
pub fn check_private_dir(dir: &Path) -> Result<(), SocketPathError> {
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::LOOP | Errno::NOTDIR => SocketPathError::NotADirectory {
            path: dir.to_path_buf(),
        },
        other => SocketPathError::Directory {
            path: dir.to_path_buf(),
            source: other.into(),
        },
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| SocketPathError::Directory {
        path: dir.to_path_buf(),
        source: errno.into(),
    })?;
    let uid = rustix::process::geteuid().as_raw();
    if stat.st_uid != uid {
        return Err(SocketPathError::WrongOwner {
            path: dir.to_path_buf(),
            owner: stat.st_uid,
            uid,
        });
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o077 != 0 {
        return Err(SocketPathError::InsecureMode {
            path: dir.to_path_buf(),
            mode,
        });
    }
    if mode & 0o700 != 0o700 {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700)).map_err(|errno| {
            SocketPathError::Directory {
                path: dir.to_path_buf(),
                source: errno.into(),
            }
        })?;
    }
    Ok(())
}
