//! Requests of the daemon protocol (client to daemon): their types, encoding and
//! validation. Re-exported by [`super::protocol`].

use super::inline::{embedded_arrays, Direction};
use super::protocol::{
    check_count, check_range, expect_kind, frame, get_node, put_node, split_frame, FrameHeader,
    FrameKind, Op, ProtocolError, RequestId, MAX_ARRAYS,
};
use super::wire::{Reader, Writer};
use crate::backend::DeviceNode;
use crate::kfd::abi;

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

/// The client wrote its doorbell page of a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoorbellCall {
    /// The KFD gpu id whose doorbell page was written.
    pub gpu_id: u32,
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
    /// [`Op::Doorbell`].
    Doorbell(DoorbellCall),
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
            Request::Doorbell(_) => Op::Doorbell,
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
            Request::Doorbell(d) => w.u32(d.gpu_id),
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
            Op::Doorbell => Request::Doorbell(DoorbellCall {
                gpu_id: r.u32("doorbell gpu id")?,
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
