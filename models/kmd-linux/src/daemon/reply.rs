//! Replies of the daemon protocol (daemon to client): their types, encoding and
//! validation. Re-exported by [`super::protocol`].

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::protocol::{
    check_count, check_range, expect_kind, frame, get_string, get_text, put_text, split_frame,
    FrameHeader, FrameKind, Op, ProtocolError, RequestId, SessionId, MAX_ERRNO, MAX_FDS,
    MAX_MINORS, MAX_PAYLOAD, MAX_TEXT, MAX_WRITES, REPLY_PREFIX_BYTES,
};
use super::wire::{Reader, Writer};
use crate::backend::Errno;

/// The daemon refused a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The daemon's protocol version.
    pub protocol_version: u16,
    /// Why, for the client's error message.
    pub reason: String,
}

/// The daemon accepted a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Welcome {
    /// The daemon's protocol version.
    pub protocol_version: u16,
    /// The daemon's number for this connection.
    pub session: SessionId,
    /// The directory standing for `/` for the faked sysfs and procfs files.
    pub fake_root: PathBuf,
    /// The render minors of the simulated GPUs.
    pub render_minors: Vec<u32>,
    /// Whether an eventfd comes with the reply, which the daemon signals when one of
    /// the client's events fires.
    pub wake_fd: bool,
}

/// The daemon's answer to a [`Hello`](super::protocol::Hello). The version and the
/// accepted flag lead, in every protocol version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandshakeReply {
    /// Accepted.
    Accepted(Welcome),
    /// Refused.
    Refused(Refusal),
}

/// Where a client maps a memfd the daemon sent: at `addr` (the address the daemon
/// maps it at too), `len` bytes from `memfd_offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedMapping {
    /// The address in both processes.
    pub addr: u64,
    /// Bytes (not zero; neither range wraps).
    pub len: u64,
    /// The offset in the memfd.
    pub memfd_offset: u64,
}

impl SharedMapping {
    fn put(&self, w: &mut Writer) -> Result<(), ProtocolError> {
        self.check()?;
        w.u64(self.addr);
        w.u64(self.len);
        w.u64(self.memfd_offset);
        Ok(())
    }

    fn get(r: &mut Reader<'_>) -> Result<SharedMapping, ProtocolError> {
        let m = SharedMapping {
            addr: r.u64("shared mapping address")?,
            len: r.u64("shared mapping length")?,
            memfd_offset: r.u64("shared mapping memfd offset")?,
        };
        m.check()?;
        Ok(m)
    }

    fn check(&self) -> Result<(), ProtocolError> {
        check_range("shared mapping", self.addr, self.len)?;
        if self.memfd_offset.checked_add(self.len).is_none() {
            return Err(ProtocolError::RangeOverflow {
                what: "shared mapping memfd range",
                addr: self.memfd_offset,
                len: self.len,
            });
        }
        Ok(())
    }
}

/// The body of a successful mmap reply (the mapped address is the reply's value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmapReply {
    /// A memfd to map at the same address, sent with the reply; `None` when the client
    /// has nothing to map.
    pub share: Option<SharedMapping>,
}

/// Bytes the driver wrote to the client's memory, to copy back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBack {
    /// Where, in the client.
    pub addr: u64,
    /// What.
    pub data: Vec<u8>,
}

/// The body of an ioctl reply.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IoctlReply {
    /// What the driver wrote to the argument and to the inlined arrays, each range
    /// inside one of them.
    pub writes: Vec<WriteBack>,
    /// Memfds sent with the reply (one per entry, in order), to map at the same
    /// address (e.g. the backing of an allocation).
    pub shares: Vec<SharedMapping>,
}

/// The body of a status reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusReport {
    /// The report, in the form asked for.
    pub text: String,
}

/// The op-specific part of a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyBody {
    /// No body (every CLOSE, MUNMAP and DOORBELL reply; failed calls).
    Empty,
    /// To a HANDSHAKE.
    Handshake(HandshakeReply),
    /// To an MMAP.
    Mmap(MmapReply),
    /// To an IOCTL.
    Ioctl(IoctlReply),
    /// To a STATUS.
    Status(StatusReport),
}

/// A reply: the call's status and return value, and its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// 0, or `-errno` (down to `-4095`).
    pub status: i32,
    /// The system call's return value when `status` is 0.
    pub value: i64,
    /// The op-specific part.
    pub body: ReplyBody,
}

impl Reply {
    /// A success.
    pub fn ok(value: i64, body: ReplyBody) -> Reply {
        Reply {
            status: 0,
            value,
            body,
        }
    }

    /// A failure with `errno`.
    pub fn error(errno: Errno) -> Reply {
        Reply {
            status: -errno.raw_os_error(),
            value: -1,
            body: ReplyBody::Empty,
        }
    }

    /// The value, or the errno.
    pub fn result(&self) -> Result<i64, Errno> {
        if self.status == 0 {
            Ok(self.value)
        } else {
            Err(Errno::from_raw_os_error(-self.status))
        }
    }

    /// File descriptors that must come with this reply.
    pub fn fds_expected(&self) -> usize {
        match &self.body {
            ReplyBody::Handshake(HandshakeReply::Accepted(w)) => usize::from(w.wake_fd),
            ReplyBody::Mmap(m) => usize::from(m.share.is_some()),
            ReplyBody::Ioctl(i) => i.shares.len(),
            _ => 0,
        }
    }

    /// Checks that `found` descriptors arrived with this reply.
    pub fn check_fds(&self, found: usize) -> Result<(), ProtocolError> {
        let expected = self.fds_expected();
        if expected != found {
            return Err(ProtocolError::FdCount { expected, found });
        }
        Ok(())
    }

    /// The complete frame answering request `id` of `op`.
    pub fn encode(&self, op: Op, id: RequestId) -> Result<Vec<u8>, ProtocolError> {
        check_status(self.status)?;
        let mut w = Writer::new();
        w.i32(self.status);
        w.i64(self.value);
        w.bool(!matches!(self.body, ReplyBody::Empty));
        match (&self.body, op) {
            (ReplyBody::Empty, _) => {}
            (ReplyBody::Handshake(h), Op::Handshake) => put_handshake(&mut w, h)?,
            (ReplyBody::Mmap(m), Op::Mmap) => match &m.share {
                None => w.bool(false),
                Some(s) => {
                    w.bool(true);
                    s.put(&mut w)?;
                }
            },
            (ReplyBody::Ioctl(i), Op::Ioctl) => {
                check_count("ioctl write-backs", i.writes.len(), MAX_WRITES)?;
                check_count("ioctl shared mappings", i.shares.len(), MAX_FDS)?;
                // Both bounded just above.
                w.u16(i.writes.len() as u16);
                for wb in &i.writes {
                    check_count("write-back length", wb.data.len(), MAX_PAYLOAD)?;
                    if !wb.data.is_empty() {
                        check_range("write-back", wb.addr, wb.data.len() as u64)?;
                    }
                    w.u64(wb.addr);
                    w.u32(wb.data.len() as u32);
                    w.bytes(&wb.data);
                }
                w.u8(i.shares.len() as u8);
                for s in &i.shares {
                    s.put(&mut w)?;
                }
            }
            (ReplyBody::Status(s), Op::Status) => put_text(
                &mut w,
                "status text",
                s.text.as_bytes(),
                MAX_PAYLOAD - REPLY_PREFIX_BYTES - 4,
            )?,
            _ => return Err(ProtocolError::BodyMismatch { op }),
        }
        frame(op, FrameKind::Reply, id, w.into_bytes())
    }

    /// Decodes and validates the payload of a reply frame.
    pub fn decode(header: &FrameHeader, payload: &[u8]) -> Result<Reply, ProtocolError> {
        expect_kind(header, FrameKind::Reply)?;
        let mut r = Reader::new(payload);
        let status = r.i32("reply status")?;
        check_status(status)?;
        let value = r.i64("reply value")?;
        let has_body = r.bool("reply body flag")?;
        let body = if !has_body {
            ReplyBody::Empty
        } else {
            match header.op {
                Op::Close | Op::Munmap | Op::Doorbell => {
                    return Err(ProtocolError::BodyMismatch { op: header.op })
                }
                Op::Handshake => ReplyBody::Handshake(get_handshake(&mut r)?),
                Op::Mmap => ReplyBody::Mmap(MmapReply {
                    share: if r.bool("mmap share flag")? {
                        Some(SharedMapping::get(&mut r)?)
                    } else {
                        None
                    },
                }),
                Op::Ioctl => {
                    let n = r.u16("ioctl write-back count")? as usize;
                    check_count("ioctl write-backs", n, MAX_WRITES)?;
                    let mut writes = Vec::with_capacity(n);
                    for _ in 0..n {
                        let addr = r.u64("write-back address")?;
                        let len = r.u32("write-back length")? as usize;
                        let data = r.take(len, "write-back bytes")?.to_vec();
                        if len > 0 {
                            check_range("write-back", addr, len as u64)?;
                        }
                        writes.push(WriteBack { addr, data });
                    }
                    let n = r.u8("ioctl shared mapping count")? as usize;
                    check_count("ioctl shared mappings", n, MAX_FDS)?;
                    let shares = (0..n)
                        .map(|_| SharedMapping::get(&mut r))
                        .collect::<Result<_, _>>()?;
                    ReplyBody::Ioctl(IoctlReply { writes, shares })
                }
                Op::Status => ReplyBody::Status(StatusReport {
                    text: get_string(&mut r, "status text", MAX_PAYLOAD)?,
                }),
            }
        };
        r.finish(header.op.name())?;
        Ok(Reply {
            status,
            value,
            body,
        })
    }

    /// Decodes one complete reply frame.
    pub fn decode_frame(bytes: &[u8]) -> Result<(FrameHeader, Reply), ProtocolError> {
        let (header, payload) = split_frame(bytes)?;
        Ok((header, Reply::decode(&header, payload)?))
    }
}

fn check_status(status: i32) -> Result<(), ProtocolError> {
    if !(-MAX_ERRNO..=0).contains(&status) {
        return Err(ProtocolError::InvalidValue {
            what: "reply status",
            value: status as u32 as u64,
        });
    }
    Ok(())
}

fn put_handshake(w: &mut Writer, h: &HandshakeReply) -> Result<(), ProtocolError> {
    match h {
        HandshakeReply::Accepted(welcome) => {
            w.u16(welcome.protocol_version);
            w.bool(true);
            w.u64(welcome.session.0);
            w.bool(welcome.wake_fd);
            let root = welcome.fake_root.as_os_str().as_bytes();
            if root.contains(&0) {
                return Err(ProtocolError::ContainsNul { what: "fake root" });
            }
            put_text(w, "fake root", root, MAX_TEXT)?;
            check_count("render minors", welcome.render_minors.len(), MAX_MINORS)?;
            // Bounded by MAX_MINORS just above.
            w.u16(welcome.render_minors.len() as u16);
            for &m in &welcome.render_minors {
                w.u32(m);
            }
        }
        HandshakeReply::Refused(refusal) => {
            w.u16(refusal.protocol_version);
            w.bool(false);
            put_text(w, "refusal reason", refusal.reason.as_bytes(), MAX_TEXT)?;
        }
    }
    Ok(())
}

fn get_handshake(r: &mut Reader<'_>) -> Result<HandshakeReply, ProtocolError> {
    let protocol_version = r.u16("handshake version")?;
    if !r.bool("handshake accepted flag")? {
        return Ok(HandshakeReply::Refused(Refusal {
            protocol_version,
            reason: get_string(r, "refusal reason", MAX_TEXT)?,
        }));
    }
    let session = SessionId(r.u64("session id")?);
    let wake_fd = r.bool("wake fd flag")?;
    let root = get_text(r, "fake root", MAX_TEXT)?;
    if root.contains(&0) {
        return Err(ProtocolError::ContainsNul { what: "fake root" });
    }
    let fake_root = PathBuf::from(OsStr::from_bytes(root));
    let n = r.u16("render minor count")? as usize;
    check_count("render minors", n, MAX_MINORS)?;
    let render_minors = (0..n)
        .map(|_| r.u32("render minor"))
        .collect::<Result<_, _>>()?;
    Ok(HandshakeReply::Accepted(Welcome {
        protocol_version,
        session,
        fake_root,
        render_minors,
        wake_fd,
    }))
}
