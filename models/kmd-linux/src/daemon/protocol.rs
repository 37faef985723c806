//! The daemon protocol: versioned binary frames between an interposed client process
//! and the daemon that runs the simulated GPUs.
//!
//! # Frames
//!
//! Every frame is a fixed 16-byte header followed by `payload_len` bytes, all
//! little-endian:
//!
//! ```text
//! 0      4        6     8            12             16
//! | DOJO | version | op | request id | payload_len | payload ...
//! ```
//!
//! `op` has [`REPLY_BIT`] set on replies; a reply carries the request id of the request
//! it answers, so one connection can have many requests in flight (ROCR calls the
//! driver from many threads). A reply payload starts with `status: i32` (0 or
//! `-errno`), `value: i64` (the system call's return value) and a body flag, then the
//! op's body.
//!
//! **Compatibility invariant:** the header layout, and the handshake messages
//! ([`Hello`] and the start of [`HandshakeReply`]) never change across protocol
//! versions, so a daemon can always read a client's handshake and refuse it with a
//! reason. Every other op is only accepted in frames of [`PROTOCOL_VERSION`].
//!
//! # Validation
//!
//! Decoding never trusts the peer: every length, count and offset is checked against
//! the bytes present and against the limits below before anything is allocated, and a
//! malformed message is a [`ProtocolError`] naming the field, never a panic. An ioctl's
//! inlined arrays must be exactly ones its request embeds (see [`super::inline`]).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::inline::{embedded_arrays, Direction};
use super::wire::{Reader, Writer};
use crate::backend::{DeviceNode, Errno};
use crate::kfd::abi;

/// `"DOJO"` read as a little-endian `u32`: the first four bytes of every frame.
pub const MAGIC: u32 = u32::from_le_bytes(*b"DOJO");

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u16 = 1;

/// Bytes of a frame header.
pub const HEADER_BYTES: usize = 16;

/// Most payload bytes of one frame (1 MiB).
pub const MAX_PAYLOAD: usize = 1 << 20;

/// Most arrays inlined in one ioctl.
pub const MAX_ARRAYS: usize = 8;

/// Most file descriptors attached to one frame.
pub const MAX_FDS: usize = 8;

/// Most bytes of a text field (a path, a refusal reason).
pub const MAX_TEXT: usize = 4096;

/// Most render minors a handshake reply lists.
pub const MAX_MINORS: usize = 256;

/// Most separate ranges an ioctl reply writes back.
pub const MAX_WRITES: usize = 64;

/// Set in the op field of a reply frame.
pub const REPLY_BIT: u16 = 0x8000;

/// Bytes of a reply payload before the body: status, value and the body flag.
pub const REPLY_PREFIX_BYTES: usize = 13;

/// Largest magnitude of an errno in a reply status (Linux's `MAX_ERRNO`).
const MAX_ERRNO: i32 = 4095;

/// Why a frame or message is malformed. Every variant is fatal for the message; a
/// daemon answers it with an error or closes the connection, and keeps serving others.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The frame does not start with `"DOJO"`: not our protocol, or a desynchronized
    /// stream.
    #[error("bad frame magic {found:#010x} (expected \"DOJO\")")]
    BadMagic {
        /// The first four bytes, little-endian.
        found: u32,
    },
    /// The frame is of another protocol version (only a handshake may be).
    #[error("protocol version {found} is not supported (this side speaks version {supported})")]
    UnsupportedVersion {
        /// The peer's version.
        found: u16,
        /// Ours.
        supported: u16,
    },
    /// The op field names no operation.
    #[error("unknown operation {0:#06x}")]
    UnknownOp(u16),
    /// A request arrived where a reply was expected, or the reverse.
    #[error("expected a {expected}, got a {found}")]
    UnexpectedKind {
        /// What the reader wanted.
        expected: FrameKind,
        /// What came.
        found: FrameKind,
    },
    /// A payload longer than [`MAX_PAYLOAD`].
    #[error("payload of {len} bytes exceeds the maximum of {max}")]
    PayloadTooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The bytes end before a field does.
    #[error("truncated: {what} needs {needed} bytes, {available} left")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// Bytes left over after a complete message.
    #[error("{extra} unexpected bytes after the {what}")]
    TrailingBytes {
        /// The message.
        what: &'static str,
        /// Left-over bytes.
        extra: usize,
    },
    /// A count or length over its limit.
    #[error("{what}: {count} exceeds the maximum of {max}")]
    TooMany {
        /// The field.
        what: &'static str,
        /// Its value.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A field with a value outside its domain (an unknown enum tag, a flag other than
    /// 0 or 1, a status that is not 0 or `-errno`, a zero length).
    #[error("{what}: invalid value {value:#x}")]
    InvalidValue {
        /// The field.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// An address range that wraps around the 64-bit address space.
    #[error("{what}: range at {addr:#x} of {len:#x} bytes wraps around")]
    RangeOverflow {
        /// The field.
        what: &'static str,
        /// Start.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// An ioctl whose argument is not as long as its request number says.
    #[error("ioctl {request:#x}: the argument has {found} bytes, the request encodes {expected}")]
    ArgumentSize {
        /// The request number.
        request: u64,
        /// Bytes encoded in the request number.
        expected: usize,
        /// Bytes sent.
        found: usize,
    },
    /// An inlined array that the request's argument does not point to (wrong address,
    /// length or direction, a repeat, or out of order).
    #[error(
        "ioctl {request:#x}: inlined array {index} ({direction:?}, {len} bytes at {addr:#x}) \
         is not one the argument points to"
    )]
    UnexpectedArray {
        /// The request number.
        request: u64,
        /// Position among the inlined arrays.
        index: usize,
        /// Its address.
        addr: u64,
        /// Its length.
        len: u64,
        /// Its direction.
        direction: Direction,
    },
    /// A text field that is not UTF-8.
    #[error("{what} is not UTF-8")]
    NotUtf8 {
        /// The field.
        what: &'static str,
    },
    /// A path with a NUL byte (unusable as a C string).
    #[error("{what} contains a NUL byte")]
    ContainsNul {
        /// The field.
        what: &'static str,
    },
    /// A reply body that does not belong to the reply's op.
    #[error("a {op} reply cannot carry this body")]
    BodyMismatch {
        /// The op of the reply.
        op: Op,
    },
    /// A message came with another number of file descriptors than it declares.
    #[error("the message declares {expected} file descriptors, {found} arrived")]
    FdCount {
        /// Descriptors the message declares.
        expected: usize,
        /// Descriptors received.
        found: usize,
    },
}

/// An operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Op {
    /// Version check and session set-up; the first request of every connection.
    Handshake = 1,
    /// The client closed its last descriptor of a device.
    Close = 2,
    /// An mmap of a device file.
    Mmap = 3,
    /// The client unmaps a range.
    Munmap = 4,
    /// An ioctl on a device file, with the arrays its argument points to inlined.
    Ioctl = 5,
    /// A query of the daemon's clients, memory and queues, for tests and operators.
    Status = 6,
}

impl Op {
    /// Every op, in wire order.
    pub const ALL: [Op; 6] = [
        Op::Handshake,
        Op::Close,
        Op::Mmap,
        Op::Munmap,
        Op::Ioctl,
        Op::Status,
    ];

    /// The op of a wire value (without [`REPLY_BIT`]).
    pub fn from_wire(v: u16) -> Option<Op> {
        Op::ALL.into_iter().find(|op| *op as u16 == v)
    }

    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Op::Handshake => "HANDSHAKE",
            Op::Close => "CLOSE",
            Op::Mmap => "MMAP",
            Op::Munmap => "MUNMAP",
            Op::Ioctl => "IOCTL",
            Op::Status => "STATUS",
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a frame is a request or a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// Client to daemon.
    Request,
    /// Daemon to client.
    Reply,
}

impl std::fmt::Display for FrameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FrameKind::Request => "request",
            FrameKind::Reply => "reply",
        })
    }
}

/// The client's number for a request, echoed in the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u32);

/// The daemon's number for a client connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// The sender's protocol version.
    pub version: u16,
    /// The operation.
    pub op: Op,
    /// Request or reply.
    pub kind: FrameKind,
    /// The request this frame is or answers.
    pub request_id: RequestId,
    /// Bytes of payload that follow (at most [`MAX_PAYLOAD`]).
    pub payload_len: u32,
}

impl FrameHeader {
    /// The header of a frame of this build's version.
    pub fn new(
        op: Op,
        kind: FrameKind,
        request_id: RequestId,
        payload_len: usize,
    ) -> Result<FrameHeader, ProtocolError> {
        if payload_len > MAX_PAYLOAD {
            return Err(ProtocolError::PayloadTooLarge {
                len: payload_len,
                max: MAX_PAYLOAD,
            });
        }
        Ok(FrameHeader {
            version: PROTOCOL_VERSION,
            op,
            kind,
            request_id,
            // Bounded by MAX_PAYLOAD just above.
            payload_len: payload_len as u32,
        })
    }

    /// The 16 header bytes.
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut w = Writer::new();
        w.u32(MAGIC);
        w.u16(self.version);
        let kind_bit = match self.kind {
            FrameKind::Request => 0,
            FrameKind::Reply => REPLY_BIT,
        };
        w.u16(self.op as u16 | kind_bit);
        w.u32(self.request_id.0);
        w.u32(self.payload_len);
        let mut out = [0u8; HEADER_BYTES];
        out.copy_from_slice(&w.into_bytes());
        out
    }

    /// Decodes and checks a header: the magic, the op, the payload limit, and the
    /// version (any version is accepted for [`Op::Handshake`], so the daemon can refuse
    /// it with a reason).
    pub fn decode(bytes: &[u8; HEADER_BYTES]) -> Result<FrameHeader, ProtocolError> {
        let mut r = Reader::new(bytes);
        let magic = r.u32("frame magic")?;
        if magic != MAGIC {
            return Err(ProtocolError::BadMagic { found: magic });
        }
        let version = r.u16("frame version")?;
        let raw_op = r.u16("frame op")?;
        let request_id = RequestId(r.u32("frame request id")?);
        let payload_len = r.u32("frame payload length")?;
        let op = Op::from_wire(raw_op & !REPLY_BIT).ok_or(ProtocolError::UnknownOp(raw_op))?;
        let kind = if raw_op & REPLY_BIT != 0 {
            FrameKind::Reply
        } else {
            FrameKind::Request
        };
        if version != PROTOCOL_VERSION && op != Op::Handshake {
            return Err(ProtocolError::UnsupportedVersion {
                found: version,
                supported: PROTOCOL_VERSION,
            });
        }
        if payload_len as usize > MAX_PAYLOAD {
            return Err(ProtocolError::PayloadTooLarge {
                len: payload_len as usize,
                max: MAX_PAYLOAD,
            });
        }
        Ok(FrameHeader {
            version,
            op,
            kind,
            request_id,
            payload_len,
        })
    }
}

/// Splits a complete frame into its checked header and payload; the slice must hold
/// exactly one frame.
pub fn split_frame(bytes: &[u8]) -> Result<(FrameHeader, &[u8]), ProtocolError> {
    let mut r = Reader::new(bytes);
    let head: [u8; HEADER_BYTES] =
        r.take(HEADER_BYTES, "frame header")?
            .try_into()
            .map_err(|_| ProtocolError::Truncated {
                what: "frame header",
                needed: HEADER_BYTES,
                available: bytes.len(),
            })?;
    let header = FrameHeader::decode(&head)?;
    let payload = r.take(header.payload_len as usize, "frame payload")?;
    r.finish("frame")?;
    Ok((header, payload))
}

fn frame(
    op: Op,
    kind: FrameKind,
    id: RequestId,
    payload: Vec<u8>,
) -> Result<Vec<u8>, ProtocolError> {
    let header = FrameHeader::new(op, kind, id, payload.len())?;
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&payload);
    Ok(out)
}

fn expect_kind(header: &FrameHeader, expected: FrameKind) -> Result<(), ProtocolError> {
    if header.kind != expected {
        return Err(ProtocolError::UnexpectedKind {
            expected,
            found: header.kind,
        });
    }
    Ok(())
}

fn check_range(what: &'static str, addr: u64, len: u64) -> Result<(), ProtocolError> {
    if len == 0 {
        return Err(ProtocolError::InvalidValue { what, value: 0 });
    }
    if addr.checked_add(len).is_none() {
        return Err(ProtocolError::RangeOverflow { what, addr, len });
    }
    Ok(())
}

fn check_count(what: &'static str, count: usize, max: usize) -> Result<(), ProtocolError> {
    if count > max {
        return Err(ProtocolError::TooMany { what, count, max });
    }
    Ok(())
}

fn put_node(w: &mut Writer, node: DeviceNode) {
    match node {
        DeviceNode::Kfd => {
            w.u8(0);
            w.u32(0);
        }
        DeviceNode::Render { minor } => {
            w.u8(1);
            w.u32(minor);
        }
    }
}

fn get_node(r: &mut Reader<'_>) -> Result<DeviceNode, ProtocolError> {
    let kind = r.u8("device node kind")?;
    let minor = r.u32("device node minor")?;
    match (kind, minor) {
        (0, 0) => Ok(DeviceNode::Kfd),
        (0, other) => Err(ProtocolError::InvalidValue {
            what: "KFD node minor",
            value: u64::from(other),
        }),
        (1, minor) => Ok(DeviceNode::Render { minor }),
        (other, _) => Err(ProtocolError::InvalidValue {
            what: "device node kind",
            value: u64::from(other),
        }),
    }
}

fn put_text(
    w: &mut Writer,
    what: &'static str,
    text: &[u8],
    max: usize,
) -> Result<(), ProtocolError> {
    check_count(what, text.len(), max)?;
    // Bounded by `max`, at most MAX_PAYLOAD.
    w.u32(text.len() as u32);
    w.bytes(text);
    Ok(())
}

fn get_text<'a>(
    r: &mut Reader<'a>,
    what: &'static str,
    max: usize,
) -> Result<&'a [u8], ProtocolError> {
    let len = r.u32(what)? as usize;
    check_count(what, len, max)?;
    r.take(len, what)
}

fn get_string(r: &mut Reader<'_>, what: &'static str, max: usize) -> Result<String, ProtocolError> {
    let bytes = get_text(r, what, max)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::NotUtf8 { what })
}

/// The client's handshake. Its layout is frozen across protocol versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The protocol version the client speaks.
    pub protocol_version: u16,
    /// The client's process id (for logs and status; the daemon trusts SO_PEERCRED,
    /// not this).
    pub pid: u32,
    /// The client's page size (client and daemon map the same memfds at the same
    /// addresses, so they must agree).
    pub page_size: u32,
}

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

/// The daemon's answer to a [`Hello`]. The version and accepted flag lead, in every
/// protocol version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandshakeReply {
    /// Accepted.
    Accepted(Welcome),
    /// Refused.
    Refused(Refusal),
}

/// The client closed its last descriptor of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseCall {
    /// Which device.
    pub node: DeviceNode,
}

/// An mmap of a device file (the six arguments of mmap; the descriptor as its node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmapCall {
    /// Which device.
    pub node: DeviceNode,
    /// The address asked for (required with `MAP_FIXED`).
    pub addr: u64,
    /// Bytes (not zero; `addr + len` does not wrap).
    pub len: u64,
    /// `PROT_*`.
    pub prot: i32,
    /// `MAP_*`.
    pub flags: i32,
    /// The file offset (KFD offsets use the high bits, so it is often negative).
    pub offset: i64,
}

/// The client unmaps a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MunmapCall {
    /// Start.
    pub addr: u64,
    /// Bytes (not zero; `addr + len` does not wrap).
    pub len: u64,
}

/// One array an ioctl argument points to, inlined after the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlinedArray {
    /// The array's address in the client.
    pub addr: u64,
    /// Whether the driver reads it, writes it, or both.
    pub direction: Direction,
    /// Its bytes: the client's contents for [`Direction::In`] and
    /// [`Direction::InOut`], zeros for [`Direction::Out`] (only the length crosses
    /// the wire).
    pub data: Vec<u8>,
}

/// An ioctl on a device file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoctlCall {
    /// Which device.
    pub node: DeviceNode,
    /// The request number.
    pub request: u64,
    /// The argument's address in the client (the driver sees this address).
    pub arg_addr: u64,
    /// The argument: exactly as many bytes as the request number encodes.
    pub arg: Vec<u8>,
    /// The arrays the argument points to that the client could read, in the order of
    /// [`embedded_arrays`]. An array the client could not read is left out; the
    /// driver's access to it then fails with `EFAULT`, as it would in the kernel.
    pub arrays: Vec<InlinedArray>,
}

/// The form of a status report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusFormat {
    /// Lines for people.
    Text,
    /// One JSON document for tests and tools.
    Json,
}

/// A query of the daemon's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusQuery {
    /// The form of the answer.
    pub format: StatusFormat,
}

/// A request from a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// [`Op::Handshake`].
    Handshake(Hello),
    /// [`Op::Close`].
    Close(CloseCall),
    /// [`Op::Mmap`].
    Mmap(MmapCall),
    /// [`Op::Munmap`].
    Munmap(MunmapCall),
    /// [`Op::Ioctl`].
    Ioctl(IoctlCall),
    /// [`Op::Status`].
    Status(StatusQuery),
}

impl Request {
    /// Its op.
    pub fn op(&self) -> Op {
        match self {
            Request::Handshake(_) => Op::Handshake,
            Request::Close(_) => Op::Close,
            Request::Mmap(_) => Op::Mmap,
            Request::Munmap(_) => Op::Munmap,
            Request::Ioctl(_) => Op::Ioctl,
            Request::Status(_) => Op::Status,
        }
    }

    /// The complete frame (header and payload). Fails on a message the receiver
    /// would refuse (over a limit, an array its request does not embed).
    pub fn encode(&self, id: RequestId) -> Result<Vec<u8>, ProtocolError> {
        let mut w = Writer::new();
        match self {
            Request::Handshake(h) => {
                w.u16(h.protocol_version);
                w.u32(h.pid);
                w.u32(h.page_size);
            }
            Request::Close(c) => put_node(&mut w, c.node),
            Request::Mmap(m) => {
                check_range("mmap range", m.addr, m.len)?;
                put_node(&mut w, m.node);
                w.u64(m.addr);
                w.u64(m.len);
                w.i32(m.prot);
                w.i32(m.flags);
                w.i64(m.offset);
            }
            Request::Munmap(m) => {
                check_range("munmap range", m.addr, m.len)?;
                w.u64(m.addr);
                w.u64(m.len);
            }
            Request::Ioctl(call) => {
                validate_ioctl(call)?;
                put_node(&mut w, call.node);
                w.u64(call.request);
                w.u64(call.arg_addr);
                // At most 0x3fff bytes (the size field of a request number).
                w.u16(call.arg.len() as u16);
                w.bytes(&call.arg);
                // At most MAX_ARRAYS (validated).
                w.u8(call.arrays.len() as u8);
                for a in &call.arrays {
                    w.u64(a.addr);
                    // Bounded by the request's array limits (validated).
                    w.u32(a.data.len() as u32);
                    w.u8(a.direction.to_wire());
                    if a.direction != Direction::Out {
                        w.bytes(&a.data);
                    }
                }
            }
            Request::Status(s) => w.u8(match s.format {
                StatusFormat::Text => 0,
                StatusFormat::Json => 1,
            }),
        }
        frame(self.op(), FrameKind::Request, id, w.into_bytes())
    }

    /// Decodes and validates the payload of a request frame.
    pub fn decode(header: &FrameHeader, payload: &[u8]) -> Result<Request, ProtocolError> {
        expect_kind(header, FrameKind::Request)?;
        let mut r = Reader::new(payload);
        let request = match header.op {
            Op::Handshake => Request::Handshake(Hello {
                protocol_version: r.u16("hello version")?,
                pid: r.u32("hello pid")?,
                page_size: {
                    let page = r.u32("hello page size")?;
                    if !page.is_power_of_two() {
                        return Err(ProtocolError::InvalidValue {
                            what: "hello page size",
                            value: u64::from(page),
                        });
                    }
                    page
                },
            }),
            Op::Close => Request::Close(CloseCall {
                node: get_node(&mut r)?,
            }),
            Op::Mmap => {
                let m = MmapCall {
                    node: get_node(&mut r)?,
                    addr: r.u64("mmap address")?,
                    len: r.u64("mmap length")?,
                    prot: r.i32("mmap prot")?,
                    flags: r.i32("mmap flags")?,
                    offset: r.i64("mmap offset")?,
                };
                check_range("mmap range", m.addr, m.len)?;
                Request::Mmap(m)
            }
            Op::Munmap => {
                let m = MunmapCall {
                    addr: r.u64("munmap address")?,
                    len: r.u64("munmap length")?,
                };
                check_range("munmap range", m.addr, m.len)?;
                Request::Munmap(m)
            }
            Op::Ioctl => Request::Ioctl(decode_ioctl(&mut r)?),
            Op::Status => Request::Status(StatusQuery {
                format: match r.u8("status format")? {
                    0 => StatusFormat::Text,
                    1 => StatusFormat::Json,
                    other => {
                        return Err(ProtocolError::InvalidValue {
                            what: "status format",
                            value: u64::from(other),
                        })
                    }
                },
            }),
        };
        r.finish(header.op.name())?;
        Ok(request)
    }

    /// Decodes one complete request frame.
    pub fn decode_frame(bytes: &[u8]) -> Result<(RequestId, Request), ProtocolError> {
        let (header, payload) = split_frame(bytes)?;
        Ok((header.request_id, Request::decode(&header, payload)?))
    }
}

/// Checks an ioctl call: argument size, array count, and that each array is one the
/// argument embeds (same address, length and direction), in order, without repeats.
fn validate_ioctl(call: &IoctlCall) -> Result<(), ProtocolError> {
    let expected = abi::Request::decode(call.request).size;
    if call.arg.len() != expected {
        return Err(ProtocolError::ArgumentSize {
            request: call.request,
            expected,
            found: call.arg.len(),
        });
    }
    check_count("inlined arrays", call.arrays.len(), MAX_ARRAYS)?;
    let allowed = embedded_arrays(call.request, &call.arg);
    let mut next = 0;
    for (index, a) in call.arrays.iter().enumerate() {
        let found = allowed[next..].iter().position(|e| {
            e.addr == a.addr && e.len == a.data.len() && e.spec.direction == a.direction
        });
        match found {
            Some(p) => next += p + 1,
            None => {
                return Err(ProtocolError::UnexpectedArray {
                    request: call.request,
                    index,
                    addr: a.addr,
                    len: a.data.len() as u64,
                    direction: a.direction,
                })
            }
        }
        if a.direction == Direction::Out && a.data.iter().any(|&b| b != 0) {
            // Output arrays cross as a length only; their local bytes are zeros.
            return Err(ProtocolError::InvalidValue {
                what: "output array contents",
                value: 1,
            });
        }
    }
    Ok(())
}

fn decode_ioctl(r: &mut Reader<'_>) -> Result<IoctlCall, ProtocolError> {
    let node = get_node(r)?;
    let request = r.u64("ioctl request")?;
    let arg_addr = r.u64("ioctl argument address")?;
    let arg_len = r.u16("ioctl argument length")? as usize;
    let expected = abi::Request::decode(request).size;
    if arg_len != expected {
        return Err(ProtocolError::ArgumentSize {
            request,
            expected,
            found: arg_len,
        });
    }
    let arg = r.take(arg_len, "ioctl argument")?.to_vec();
    let n_arrays = r.u8("ioctl array count")? as usize;
    check_count("inlined arrays", n_arrays, MAX_ARRAYS)?;
    let allowed = embedded_arrays(request, &arg);
    let mut next = 0;
    let mut arrays = Vec::with_capacity(n_arrays);
    for index in 0..n_arrays {
        let addr = r.u64("inlined array address")?;
        let len = r.u32("inlined array length")? as usize;
        let direction = Direction::from_wire(r.u8("inlined array direction")?)?;
        // The array must be one the argument embeds before its length is trusted.
        let found = allowed[next..]
            .iter()
            .position(|e| e.addr == addr && e.len == len && e.spec.direction == direction);
        let Some(p) = found else {
            return Err(ProtocolError::UnexpectedArray {
                request,
                index,
                addr,
                len: len as u64,
                direction,
            });
        };
        next += p + 1;
        let data = match direction {
            Direction::Out => vec![0u8; len],
            Direction::In | Direction::InOut => r.take(len, "inlined array bytes")?.to_vec(),
        };
        arrays.push(InlinedArray {
            addr,
            direction,
            data,
        });
    }
    Ok(IoctlCall {
        node,
        request,
        arg_addr,
        arg,
        arrays,
    })
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
    /// No body (every CLOSE and MUNMAP reply; failed calls).
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
                Op::Close | Op::Munmap => {
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
