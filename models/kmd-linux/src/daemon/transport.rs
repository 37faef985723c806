//! Moving frames, with file descriptors, between a client and the daemon.
//!
//! [`Transport`] is the abstraction (send a frame with descriptors, receive one); the
//! only implementation today is [`UnixTransport`], over a connected Unix stream socket,
//! passing descriptors (memfds of shared memory, eventfds) as `SCM_RIGHTS` ancillary
//! data. Another transport (e.g. a named pipe with handle duplication) would implement
//! the same trait.
//!
//! A [`UnixTransport`] can be shared by threads: sends are serialized (a frame is
//! written whole before the next), and so are receives. A send or receive that fails in
//! the middle of a frame leaves the stream unusable; the transport then fails every
//! later call with [`TransportError::Broken`], and the connection should be dropped.
//!
//! Peers are checked with `SO_PEERCRED` ([`check_peer_uid`]): the daemon serves only
//! processes of its own user.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
};

use super::protocol::{FrameHeader, ProtocolError, HEADER_BYTES, MAX_FDS};
use crate::backend::Errno;
use crate::kfd::lock;

/// Why a frame could not be sent or received.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The peer closed the connection between frames (an orderly end).
    #[error("the peer closed the connection")]
    Closed,
    /// The peer closed the connection in the middle of a frame. Fatal for the
    /// connection.
    #[error(
        "the peer closed the connection in the middle of a frame ({received} of {expected} bytes)"
    )]
    ClosedMidFrame {
        /// Bytes of the frame received.
        received: usize,
        /// Bytes the frame needed (the header's 16 while the header is incomplete).
        expected: usize,
    },
    /// No data arrived within the receive timeout. Between frames the connection is
    /// still usable; in the middle of a frame it is not (see [`TransportError::Broken`]).
    #[error("timed out waiting for {}", if *.mid_frame { "the rest of a frame" } else { "a frame" })]
    TimedOut {
        /// Whether part of a frame had arrived.
        mid_frame: bool,
    },
    /// The frame header is invalid (the stream is not ours or desynchronized). Fatal
    /// for the connection.
    #[error("invalid frame: {0}")]
    Protocol(#[from] ProtocolError),
    /// More descriptors than [`MAX_FDS`] were sent or arrived with one frame. Received
    /// ones are closed.
    #[error("{found} file descriptors with one frame exceed the maximum of {max}")]
    TooManyFds {
        /// Descriptors.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// The kernel dropped descriptors that did not fit the receive buffer (`MSG_CTRUNC`).
    /// Fatal for the connection.
    #[error("file descriptors sent with a frame were truncated")]
    FdsTruncated,
    /// An empty frame (nothing to attach descriptors to).
    #[error("cannot send an empty frame")]
    EmptyFrame,
    /// An earlier send or receive failed in the middle of a frame; the stream cannot
    /// be used any more.
    #[error("the connection is unusable after an earlier error in the middle of a frame")]
    Broken,
    /// The peer runs as another user.
    #[error(
        "refusing a peer of uid {peer_uid} (pid {peer_pid}): this process runs as uid {our_uid}"
    )]
    ForeignPeer {
        /// The peer's effective uid when it connected.
        peer_uid: u32,
        /// The peer's pid.
        peer_pid: u32,
        /// Our effective uid.
        our_uid: u32,
    },
    /// A socket system call failed.
    #[error("{call}: {errno}")]
    Os {
        /// The call.
        call: &'static str,
        /// Its error.
        errno: Errno,
    },
}

fn os(call: &'static str) -> impl FnOnce(Errno) -> TransportError {
    move |errno| TransportError::Os { call, errno }
}

fn io(call: &'static str) -> impl FnOnce(std::io::Error) -> TransportError {
    move |e| TransportError::Os {
        call,
        errno: Errno::from_io_error(&e).unwrap_or(Errno::IO),
    }
}

/// A received frame: its checked header, its payload (not yet decoded), and the
/// descriptors that came with it (closed when dropped).
#[derive(Debug)]
pub struct Received {
    /// The checked header.
    pub header: FrameHeader,
    /// `header.payload_len` bytes.
    pub payload: Vec<u8>,
    /// Descriptors sent with the frame, at most [`MAX_FDS`], close-on-exec.
    pub fds: Vec<OwnedFd>,
}

/// Sends and receives whole frames with descriptors. Implementations may be used from
/// several threads at once; each frame goes out whole.
pub trait Transport: Send + Sync {
    /// Sends one complete frame (header and payload) with `fds` (at most
    /// [`MAX_FDS`]) attached.
    fn send(&self, frame: &[u8], fds: &[BorrowedFd<'_>]) -> Result<(), TransportError>;

    /// Receives the next frame: blocks until a whole frame arrived, the timeout (if
    /// any) expired, or the peer closed.
    fn recv(&self) -> Result<Received, TransportError>;
}

/// A [`Transport`] over a connected Unix stream socket.
#[derive(Debug)]
pub struct UnixTransport {
    stream: UnixStream,
    send_lock: Mutex<()>,
    recv_lock: Mutex<()>,
    broken: AtomicBool,
}

/// Space for the control message of [`MAX_FDS`] descriptors.
const CMSG_SPACE: usize = rustix::cmsg_space!(ScmRights(MAX_FDS));

impl UnixTransport {
    /// A transport over `stream`.
    pub fn new(stream: UnixStream) -> UnixTransport {
        UnixTransport {
            stream,
            send_lock: Mutex::new(()),
            recv_lock: Mutex::new(()),
            broken: AtomicBool::new(false),
        }
    }

    /// Connects to the socket at `path`.
    pub fn connect(path: &Path) -> Result<UnixTransport, TransportError> {
        UnixStream::connect(path)
            .map(UnixTransport::new)
            .map_err(io("connect"))
    }

    /// Two connected transports (a socketpair), e.g. for a daemon started as a child.
    pub fn pair() -> Result<(UnixTransport, UnixTransport), TransportError> {
        let (a, b) = UnixStream::pair().map_err(io("socketpair"))?;
        Ok((UnixTransport::new(a), UnixTransport::new(b)))
    }

    /// The socket.
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    /// Limits how long a receive waits for data (`None`: forever).
    pub fn set_recv_timeout(&self, timeout: Option<Duration>) -> Result<(), TransportError> {
        self.stream
            .set_read_timeout(timeout)
            .map_err(io("setsockopt(SO_RCVTIMEO)"))
    }

    /// The credentials of the process at the other end.
    pub fn peer_credentials(&self) -> Result<PeerCredentials, TransportError> {
        peer_credentials(&self.stream)
    }

    /// Reads exactly `buf.len()` bytes, collecting descriptors into `fds`. `done` bytes
    /// of the frame came before `buf`; `expected` is the frame's length so far known.
    fn read_exact(
        &self,
        buf: &mut [u8],
        done: usize,
        expected: usize,
        fds: &mut Vec<OwnedFd>,
    ) -> Result<(), TransportError> {
        let mut got = 0;
        while got < buf.len() {
            let mut space = [MaybeUninit::<u8>::uninit(); CMSG_SPACE];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let mut iov = [IoSliceMut::new(&mut buf[got..])];
            let res = recvmsg(
                &self.stream,
                &mut iov,
                &mut control,
                RecvFlags::CMSG_CLOEXEC,
            );
            for message in control.drain() {
                if let RecvAncillaryMessage::ScmRights(received) = message {
                    fds.extend(received);
                }
            }
            match res {
                Ok(msg) => {
                    if msg.flags.contains(ReturnFlags::CTRUNC) {
                        return Err(TransportError::FdsTruncated);
                    }
                    if msg.bytes == 0 {
                        let received = done + got;
                        return Err(if received == 0 {
                            TransportError::Closed
                        } else {
                            TransportError::ClosedMidFrame { received, expected }
                        });
                    }
                    got += msg.bytes;
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => {
                    return Err(TransportError::TimedOut {
                        mid_frame: done + got > 0,
                    })
                }
                Err(Errno::CONNRESET) => {
                    return Err(TransportError::ClosedMidFrame {
                        received: done + got,
                        expected,
                    })
                }
                Err(e) => return Err(os("recvmsg")(e)),
            }
        }
        Ok(())
    }

    fn recv_frame(&self) -> Result<Received, TransportError> {
        let mut fds = Vec::new();
        let mut head = [0u8; HEADER_BYTES];
        self.read_exact(&mut head, 0, HEADER_BYTES, &mut fds)?;
        let header = FrameHeader::decode(&head)?;
        let len = header.payload_len as usize;
        let mut payload = vec![0u8; len];
        self.read_exact(&mut payload, HEADER_BYTES, HEADER_BYTES + len, &mut fds)?;
        if fds.len() > MAX_FDS {
            return Err(TransportError::TooManyFds {
                found: fds.len(),
                max: MAX_FDS,
            });
        }
        Ok(Received {
            header,
            payload,
            fds,
        })
    }

    /// Writes `frame` whole, the descriptors with its first bytes.
    fn send_frame(&self, frame: &[u8], fds: &[BorrowedFd<'_>]) -> Result<(), TransportError> {
        let mut sent = 0;
        while sent < frame.len() {
            let mut space = [MaybeUninit::<u8>::uninit(); CMSG_SPACE];
            let mut control = SendAncillaryBuffer::new(&mut space);
            // The descriptors go with the first bytes that leave.
            if sent == 0 && !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
                return Err(TransportError::TooManyFds {
                    found: fds.len(),
                    max: MAX_FDS,
                });
            }
            let iov = [IoSlice::new(&frame[sent..])];
            match sendmsg(&self.stream, &iov, &mut control, SendFlags::NOSIGNAL) {
                Ok(n) if n > 0 => sent += n,
                Err(Errno::INTR) => {}
                other => {
                    if sent > 0 {
                        // A frame partly sent leaves the peer's stream mid-frame.
                        self.broken.store(true, Ordering::Release);
                    }
                    return Err(match other {
                        Ok(_) | Err(Errno::PIPE | Errno::CONNRESET) => TransportError::Closed,
                        Err(Errno::AGAIN) => TransportError::TimedOut {
                            mid_frame: sent > 0,
                        },
                        Err(e) => os("sendmsg")(e),
                    });
                }
            }
        }
        Ok(())
    }
}

impl Transport for UnixTransport {
    fn send(&self, frame: &[u8], fds: &[BorrowedFd<'_>]) -> Result<(), TransportError> {
        if frame.is_empty() {
            return Err(TransportError::EmptyFrame);
        }
        if fds.len() > MAX_FDS {
            return Err(TransportError::TooManyFds {
                found: fds.len(),
                max: MAX_FDS,
            });
        }
        let _sending = lock(&self.send_lock);
        if self.broken.load(Ordering::Acquire) {
            return Err(TransportError::Broken);
        }
        self.send_frame(frame, fds)
    }

    fn recv(&self) -> Result<Received, TransportError> {
        let _receiving = lock(&self.recv_lock);
        if self.broken.load(Ordering::Acquire) {
            return Err(TransportError::Broken);
        }
        let res = self.recv_frame();
        if let Err(e) = &res {
            // Only a timeout between frames and an orderly close leave the stream at a
            // frame boundary; every other failure leaves it mid-frame.
            let at_boundary = matches!(
                e,
                TransportError::Closed | TransportError::TimedOut { mid_frame: false }
            ) || matches!(e, TransportError::TooManyFds { .. });
            if !at_boundary {
                self.broken.store(true, Ordering::Release);
            }
        }
        res
    }
}

/// The identity of the process at the other end of a Unix socket, as the kernel
/// recorded it when the connection was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCredentials {
    /// Process id.
    pub pid: u32,
    /// Effective user id.
    pub uid: u32,
    /// Effective group id.
    pub gid: u32,
}

/// The peer's credentials (`SO_PEERCRED`).
pub fn peer_credentials(stream: &UnixStream) -> Result<PeerCredentials, TransportError> {
    let cred = rustix::net::sockopt::socket_peercred(stream.as_fd())
        .map_err(os("getsockopt(SO_PEERCRED)"))?;
    Ok(PeerCredentials {
        pid: cred.pid.as_raw_nonzero().get() as u32,
        uid: cred.uid.as_raw(),
        gid: cred.gid.as_raw(),
    })
}

/// The peer's credentials if it runs as our effective user; otherwise
/// [`TransportError::ForeignPeer`].
pub fn check_peer_uid(stream: &UnixStream) -> Result<PeerCredentials, TransportError> {
    let peer = peer_credentials(stream)?;
    let ours = rustix::process::geteuid().as_raw();
    if peer.uid != ours {
        return Err(TransportError::ForeignPeer {
            peer_uid: peer.uid,
            peer_pid: peer.pid,
            our_uid: ours,
        });
    }
    Ok(peer)
}
