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

pub use super::reply::*;
pub use super::request::*;

use super::inline::Direction;
use super::wire::{Reader, Writer};
use crate::backend::DeviceNode;

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
pub(super) const MAX_ERRNO: i32 = 4095;

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
    /// The client wrote its doorbell page of a GPU (trapped in the client): the daemon
    /// rings that client's queues on the GPU.
    Doorbell = 7,
}

impl Op {
    /// Every op, in wire order.
    pub const ALL: [Op; 7] = [
        Op::Handshake,
        Op::Close,
        Op::Mmap,
        Op::Munmap,
        Op::Ioctl,
        Op::Status,
        Op::Doorbell,
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
            Op::Doorbell => "DOORBELL",
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

pub(super) fn frame(
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

pub(super) fn expect_kind(header: &FrameHeader, expected: FrameKind) -> Result<(), ProtocolError> {
    if header.kind != expected {
        return Err(ProtocolError::UnexpectedKind {
            expected,
            found: header.kind,
        });
    }
    Ok(())
}

pub(super) fn check_range(what: &'static str, addr: u64, len: u64) -> Result<(), ProtocolError> {
    if len == 0 {
        return Err(ProtocolError::InvalidValue { what, value: 0 });
    }
    if addr.checked_add(len).is_none() {
        return Err(ProtocolError::RangeOverflow { what, addr, len });
    }
    Ok(())
}

pub(super) fn check_count(
    what: &'static str,
    count: usize,
    max: usize,
) -> Result<(), ProtocolError> {
    if count > max {
        return Err(ProtocolError::TooMany { what, count, max });
    }
    Ok(())
}

pub(super) fn put_node(w: &mut Writer, node: DeviceNode) {
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

pub(super) fn get_node(r: &mut Reader<'_>) -> Result<DeviceNode, ProtocolError> {
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

pub(super) fn put_text(
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

pub(super) fn get_text<'a>(
    r: &mut Reader<'a>,
    what: &'static str,
    max: usize,
) -> Result<&'a [u8], ProtocolError> {
    let len = r.u32(what)? as usize;
    check_count(what, len, max)?;
    r.take(len, what)
}

pub(super) fn get_string(
    r: &mut Reader<'_>,
    what: &'static str,
    max: usize,
) -> Result<String, ProtocolError> {
    let bytes = get_text(r, what, max)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::NotUtf8 { what })
}
