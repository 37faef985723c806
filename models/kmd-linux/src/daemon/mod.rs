//! Daemon mode's wire: how an interposed client process and the daemon that runs the
//! simulated GPUs talk.
//!
//! - [`protocol`]: the versioned binary frames and messages (handshake, close, mmap,
//!   munmap, ioctl, status), validated field by field (the request and reply
//!   messages live in private modules and are re-exported there).
//! - [`inline`]: which ioctl arguments point to arrays, how the client inlines them,
//!   and [`inline::InlinedMemory`], the client memory a daemon-side driver call sees.
//! - [`transport`]: the [`transport::Transport`] abstraction and its Unix-socket
//!   implementation, which passes memfds with `SCM_RIGHTS` and checks peer
//!   credentials.
//! - [`socket_path`]: where the socket lives and the private directory around it.
//! - [`server`]: the daemon's side of a connection (a process context per client).
//! - [`client`]: the interposer's backend in daemon mode.
//!
//! **API Boundary:** nothing here knows the driver's state; the daemon and the client
//! backend build on these types.

pub mod client;
pub mod inline;
pub mod protocol;
mod reply;
mod request;
pub mod server;
pub mod socket_path;
pub mod transport;
mod wire;
