//! The daemon wire: protocol round trips and validation, inlined ioctl memory against
//! the real driver, the Unix transport with descriptor passing, and the socket's
//! private directory.

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kmd_linux::backend::{DeviceNode, Errno};
use kmd_linux::config::{load_topology, DriverConfig};
use kmd_linux::daemon::inline::{array_specs, embedded_arrays, Direction, InlinedMemory};
use kmd_linux::daemon::protocol::*;
use kmd_linux::daemon::socket_path::{
    check_private_dir, ensure_private_dir, LocationSource, SocketLocation, SocketPathError,
};
use kmd_linux::daemon::transport::{
    check_peer_uid, peer_credentials, Transport, TransportError, UnixTransport,
};
use kmd_linux::identity::SystemIdentity;
use kmd_linux::kfd::abi::{self, drm, request};
use kmd_linux::kfd::user::{OwnMemory, UserMemory};
use kmd_linux::kfd::Kfd;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------
// Protocol: round trips.

fn round_trip_request(req: &Request) {
    let bytes = req.encode(RequestId(42)).unwrap();
    let (id, back) = Request::decode_frame(&bytes).unwrap();
    assert_eq!(id, RequestId(42));
    assert_eq!(&back, req);
}

fn round_trip_reply(op: Op, reply: &Reply) {
    let bytes = reply.encode(op, RequestId(9)).unwrap();
    let (header, back) = Reply::decode_frame(&bytes).unwrap();
    assert_eq!(
        (header.op, header.kind, header.request_id),
        (op, FrameKind::Reply, RequestId(9))
    );
    assert_eq!(&back, reply);
}

fn wait_events_call(n: u32, addr: u64) -> IoctlCall {
    let arg = abi::WaitEvents {
        events_ptr: addr,
        num_events: n,
        wait_for_all: 1,
        timeout: 5,
        wait_result: 0,
    };
    let data: Vec<u8> = (0..n as usize * size_of::<abi::EventData>())
        .map(|i| i as u8)
        .collect();
    IoctlCall {
        node: DeviceNode::Kfd,
        request: request::WAIT_EVENTS,
        arg_addr: 0x7000_0000,
        arg: bytemuck::bytes_of(&arg).to_vec(),
        // An empty array is not inlined.
        arrays: if n == 0 {
            vec![]
        } else {
            vec![InlinedArray {
                addr,
                direction: Direction::InOut,
                data,
            }]
        },
    }
}

fn drm_version_request() -> u64 {
    // DRM_IOWR(0x00, struct drm_version)
    (3 << 30) | ((size_of::<drm::Version>() as u64) << 16) | ((abi::DRM_TYPE as u64) << 8)
}

fn amdgpu_info_request() -> u64 {
    // DRM_IOW(DRM_COMMAND_BASE + DRM_AMDGPU_INFO, struct drm_amdgpu_info)
    (1 << 30)
        | ((size_of::<drm::AmdgpuInfo>() as u64) << 16)
        | ((abi::DRM_TYPE as u64) << 8)
        | u64::from(drm::COMMAND_BASE + drm::AMDGPU_INFO)
}

#[test]
fn every_request_round_trips() {
    let map = abi::MapMemory {
        handle: 5,
        device_ids_array_ptr: 0x5000,
        n_devices: 2,
        n_success: 0,
    };
    let version = drm::Version {
        name_len: 3,
        name: 0x100,
        date_len: 0,
        date: 0,
        desc_len: 64,
        desc: 0x200,
        ..Default::default()
    };
    let requests = [
        Request::Handshake(Hello {
            protocol_version: PROTOCOL_VERSION,
            pid: 1234,
            page_size: 4096,
        }),
        Request::Close(CloseCall {
            node: DeviceNode::Kfd,
        }),
        Request::Close(CloseCall {
            node: DeviceNode::Render { minor: 128 },
        }),
        Request::Mmap(MmapCall {
            node: DeviceNode::Render { minor: 129 },
            addr: 0x10_0000_0000,
            len: 1 << 21,
            prot: libc::PROT_READ | libc::PROT_WRITE,
            flags: libc::MAP_SHARED | libc::MAP_FIXED,
            offset: (abi::mmap::TYPE_DOORBELL | 0x1234) as i64,
        }),
        Request::Munmap(MunmapCall {
            addr: 0x10_0000_0000,
            len: 4096,
        }),
        Request::Ioctl(IoctlCall {
            node: DeviceNode::Kfd,
            request: request::GET_VERSION,
            arg_addr: 0x1000,
            arg: vec![0; 8],
            arrays: vec![],
        }),
        Request::Ioctl(wait_events_call(3, 0x9000)),
        Request::Ioctl(IoctlCall {
            node: DeviceNode::Kfd,
            request: request::MAP_MEMORY_TO_GPU,
            arg_addr: 0x2000,
            arg: bytemuck::bytes_of(&map).to_vec(),
            arrays: vec![InlinedArray {
                addr: 0x5000,
                direction: Direction::In,
                data: vec![1, 0, 0, 0, 2, 0, 0, 0],
            }],
        }),
        Request::Ioctl(IoctlCall {
            node: DeviceNode::Render { minor: 128 },
            request: drm_version_request(),
            arg_addr: 0x3000,
            arg: bytemuck::bytes_of(&version).to_vec(),
            arrays: vec![
                InlinedArray {
                    addr: 0x100,
                    direction: Direction::Out,
                    data: vec![0; 3],
                },
                InlinedArray {
                    addr: 0x200,
                    direction: Direction::Out,
                    data: vec![0; 64],
                },
            ],
        }),
        Request::Status(StatusQuery {
            format: StatusFormat::Text,
        }),
        Request::Status(StatusQuery {
            format: StatusFormat::Json,
        }),
        Request::Doorbell(DoorbellCall { gpu_id: 0x1234 }),
    ];
    for r in &requests {
        round_trip_request(r);
    }
}

#[test]
fn every_reply_round_trips() {
    let welcome = Reply::ok(
        0,
        ReplyBody::Handshake(HandshakeReply::Accepted(Welcome {
            protocol_version: PROTOCOL_VERSION,
            session: SessionId(77),
            fake_root: PathBuf::from("/run/user/1000/dojo/root"),
            render_minors: vec![128, 129],
            wake_fd: true,
        })),
    );
    assert_eq!(welcome.fds_expected(), 1);
    round_trip_reply(Op::Handshake, &welcome);
    let refusal = Reply {
        status: -libc::EPROTONOSUPPORT,
        value: -1,
        body: ReplyBody::Handshake(HandshakeReply::Refused(Refusal {
            protocol_version: PROTOCOL_VERSION,
            reason: "client speaks version 9".into(),
        })),
    };
    round_trip_reply(Op::Handshake, &refusal);
    assert_eq!(refusal.result(), Err(Errno::PROTONOSUPPORT));
    round_trip_reply(Op::Close, &Reply::ok(0, ReplyBody::Empty));
    round_trip_reply(Op::Munmap, &Reply::error(Errno::INVAL));
    round_trip_reply(
        Op::Mmap,
        &Reply::ok(0x10_0000_0000, ReplyBody::Mmap(MmapReply { share: None })),
    );
    let shared = Reply::ok(
        0x10_0000_0000,
        ReplyBody::Mmap(MmapReply {
            share: Some(SharedMapping {
                addr: 0x10_0000_0000,
                len: 1 << 20,
                memfd_offset: 1 << 30,
            }),
        }),
    );
    assert_eq!(shared.fds_expected(), 1);
    assert_eq!(
        shared.check_fds(0),
        Err(ProtocolError::FdCount {
            expected: 1,
            found: 0
        })
    );
    round_trip_reply(Op::Mmap, &shared);
    let ioctl = Reply::ok(
        0,
        ReplyBody::Ioctl(IoctlReply {
            writes: vec![
                WriteBack {
                    addr: 0x1000,
                    data: vec![1, 2, 3],
                },
                WriteBack {
                    addr: 0x2000,
                    data: vec![9; 48],
                },
            ],
            shares: vec![SharedMapping {
                addr: 0x20_0000_0000,
                len: 4096,
                memfd_offset: 0,
            }],
        }),
    );
    assert_eq!(ioctl.fds_expected(), 1);
    round_trip_reply(Op::Ioctl, &ioctl);
    round_trip_reply(Op::Ioctl, &Reply::error(Errno::FAULT));
    round_trip_reply(
        Op::Status,
        &Reply::ok(
            0,
            ReplyBody::Status(StatusReport {
                text: r#"{"clients":[]}"#.into(),
            }),
        ),
    );
}

// ---------------------------------------------------------------------------------
// Protocol: validation.

fn header_bytes(version: u16, op: u16, len: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(b"DOJO");
    v.extend_from_slice(&version.to_le_bytes());
    v.extend_from_slice(&op.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&len.to_le_bytes());
    v
}

#[test]
fn bad_headers_are_named_errors() {
    let mut garbage = header_bytes(PROTOCOL_VERSION, 5, 0);
    garbage[0] = b'X';
    assert!(matches!(
        split_frame(&garbage),
        Err(ProtocolError::BadMagic { .. })
    ));
    assert_eq!(
        split_frame(&header_bytes(PROTOCOL_VERSION, 0x77, 0)).unwrap_err(),
        ProtocolError::UnknownOp(0x77)
    );
    assert_eq!(
        split_frame(&header_bytes(PROTOCOL_VERSION, 5, (MAX_PAYLOAD + 1) as u32)).unwrap_err(),
        ProtocolError::PayloadTooLarge {
            len: MAX_PAYLOAD + 1,
            max: MAX_PAYLOAD
        }
    );
    assert_eq!(
        split_frame(&header_bytes(PROTOCOL_VERSION + 1, Op::Ioctl as u16, 0)).unwrap_err(),
        ProtocolError::UnsupportedVersion {
            found: PROTOCOL_VERSION + 1,
            supported: PROTOCOL_VERSION
        }
    );
    // A handshake of another version still decodes, so it can be refused politely.
    let mut hello = header_bytes(PROTOCOL_VERSION + 1, Op::Handshake as u16, 10);
    hello.extend_from_slice(&(PROTOCOL_VERSION + 1).to_le_bytes());
    hello.extend_from_slice(&55u32.to_le_bytes());
    hello.extend_from_slice(&4096u32.to_le_bytes());
    let (_, req) = Request::decode_frame(&hello).unwrap();
    assert!(
        matches!(req, Request::Handshake(Hello { protocol_version, .. }) if protocol_version == PROTOCOL_VERSION + 1)
    );
    // A reply where a request is expected.
    let reply = Reply::ok(0, ReplyBody::Empty)
        .encode(Op::Close, RequestId(1))
        .unwrap();
    assert!(matches!(
        Request::decode_frame(&reply),
        Err(ProtocolError::UnexpectedKind { .. })
    ));
    let msg = ProtocolError::BadMagic { found: 0x58 }.to_string();
    assert!(msg.contains("magic"), "{msg}");
}

#[test]
fn truncated_and_padded_frames_are_errors() {
    let frames = [
        Request::Ioctl(wait_events_call(2, 0x9000))
            .encode(RequestId(1))
            .unwrap(),
        Reply::ok(3, ReplyBody::Status(StatusReport { text: "hi".into() }))
            .encode(Op::Status, RequestId(2))
            .unwrap(),
    ];
    for bytes in &frames {
        for cut in 0..bytes.len() {
            assert!(split_frame(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(matches!(
            split_frame(&long),
            Err(ProtocolError::TrailingBytes { .. })
        ));
    }
    // A payload whose declared length is right but whose message ends early.
    let mut short = Request::Munmap(MunmapCall { addr: 1, len: 2 })
        .encode(RequestId(1))
        .unwrap();
    short.truncate(short.len() - 1);
    short[12..16].copy_from_slice(&15u32.to_le_bytes());
    assert!(matches!(
        Request::decode_frame(&short),
        Err(ProtocolError::Truncated {
            what: "munmap length",
            ..
        })
    ));
}

#[test]
fn ioctl_calls_are_checked_against_their_request() {
    // The argument must be as long as the request number says.
    let mut call = wait_events_call(1, 0x9000);
    call.arg.pop();
    assert!(matches!(
        Request::Ioctl(call).encode(RequestId(1)),
        Err(ProtocolError::ArgumentSize {
            expected: 24,
            found: 23,
            ..
        })
    ));
    // An array at another address than the argument's pointer.
    let mut call = wait_events_call(1, 0x9000);
    call.arrays[0].addr = 0x9008;
    assert!(matches!(
        Request::Ioctl(call).encode(RequestId(1)),
        Err(ProtocolError::UnexpectedArray { index: 0, .. })
    ));
    // The right address but a longer array than the count says.
    let mut call = wait_events_call(1, 0x9000);
    call.arrays[0].data.extend_from_slice(&[0; 48]);
    assert!(matches!(
        Request::Ioctl(call).encode(RequestId(1)),
        Err(ProtocolError::UnexpectedArray { .. })
    ));
    // The same array twice.
    let mut call = wait_events_call(1, 0x9000);
    call.arrays.push(call.arrays[0].clone());
    assert!(matches!(
        Request::Ioctl(call).encode(RequestId(1)),
        Err(ProtocolError::UnexpectedArray { index: 1, .. })
    ));
    // A request without arrays carries none.
    let call = IoctlCall {
        node: DeviceNode::Kfd,
        request: request::GET_VERSION,
        arg_addr: 0x1000,
        arg: vec![0; 8],
        arrays: vec![InlinedArray {
            addr: 0x1000,
            direction: Direction::In,
            data: vec![0; 8],
        }],
    };
    assert!(matches!(
        Request::Ioctl(call).encode(RequestId(1)),
        Err(ProtocolError::UnexpectedArray { .. })
    ));
    // The same checks on the receiving side: patch a valid frame's inlined address.
    let mut bytes = Request::Ioctl(wait_events_call(1, 0x9000))
        .encode(RequestId(1))
        .unwrap();
    // header 16, node 5, request 8, arg addr 8, arg len 2, arg 24, count 1 -> address.
    let at = 16 + 5 + 8 + 8 + 2 + 24 + 1;
    assert_eq!(&bytes[at..at + 8], &0x9000u64.to_le_bytes());
    bytes[at..at + 8].copy_from_slice(&0xa000u64.to_le_bytes());
    assert!(matches!(
        Request::decode_frame(&bytes),
        Err(ProtocolError::UnexpectedArray { addr: 0xa000, .. })
    ));
}

#[test]
fn array_specs_cover_the_drivers_pointer_arguments() {
    for req in [
        request::GET_PROCESS_APERTURES_NEW,
        request::WAIT_EVENTS,
        request::MAP_MEMORY_TO_GPU,
        request::UNMAP_MEMORY_FROM_GPU,
        request::SET_CU_MASK,
        request::GET_TILE_CONFIG,
        drm_version_request(),
        amdgpu_info_request(),
    ] {
        assert!(!array_specs(req).is_empty(), "{req:#x}");
    }
    for req in [
        request::GET_VERSION,
        request::CREATE_QUEUE,
        request::ALLOC_MEMORY_OF_GPU,
    ] {
        assert!(array_specs(req).is_empty(), "{req:#x}");
    }
    // SET_CU_MASK counts bits: 64 bits are two words.
    let a = abi::SetCuMask {
        queue_id: 1,
        num_cu_mask: 64,
        cu_mask_ptr: 0x4000,
    };
    let e = embedded_arrays(request::SET_CU_MASK, bytemuck::bytes_of(&a));
    assert_eq!((e.len(), e[0].addr, e[0].len), (1, 0x4000, 8));
    // An input array over the driver's limit is not inlined (the driver says EINVAL
    // before reading); an output array over it is cut.
    let w = abi::WaitEvents {
        events_ptr: 0x4000,
        num_events: u32::MAX,
        ..Default::default()
    };
    assert!(embedded_arrays(request::WAIT_EVENTS, bytemuck::bytes_of(&w)).is_empty());
    let v = drm::Version {
        name: 0x100,
        name_len: u64::MAX,
        ..Default::default()
    };
    let e = embedded_arrays(drm_version_request(), bytemuck::bytes_of(&v));
    assert_eq!((e.len(), e[0].len), (1, 4096));
    // Wrapping ranges and empty arrays are left out; a short argument reads as zeros.
    let w = abi::WaitEvents {
        events_ptr: u64::MAX - 8,
        num_events: 1,
        ..Default::default()
    };
    assert!(embedded_arrays(request::WAIT_EVENTS, bytemuck::bytes_of(&w)).is_empty());
    assert!(embedded_arrays(request::WAIT_EVENTS, &[1, 2, 3]).is_empty());
}

// ---------------------------------------------------------------------------------
// Protocol: decoding arbitrary bytes.

fn decode_anything(bytes: &[u8]) {
    if let Ok((header, payload)) = split_frame(bytes) {
        let _ = Request::decode(&header, payload);
        let _ = Reply::decode(&header, payload);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.max(2000),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        decode_anything(&bytes);
    }

    #[test]
    fn decoding_arbitrary_payloads_never_panics(
        op in 1u16..=8,
        reply in any::<bool>(),
        payload in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let op = if reply { op | REPLY_BIT } else { op };
        let mut bytes = header_bytes(PROTOCOL_VERSION, op, payload.len() as u32);
        bytes.extend_from_slice(&payload);
        decode_anything(&bytes);
    }

    #[test]
    fn corrupted_frames_never_panic(n in 0u32..40, at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = Request::Ioctl(wait_events_call(n, 0x9000)).encode(RequestId(3)).unwrap();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        decode_anything(&bytes);
    }

    #[test]
    fn requests_round_trip_and_every_truncation_fails(
        addr in 1u64..(1 << 47),
        len in 1u64..(1 << 30),
        prot in any::<i32>(),
        flags in any::<i32>(),
        offset in any::<i64>(),
        minor in any::<u32>(),
        n in 0u32..20,
    ) {
        let reqs = [
            Request::Mmap(MmapCall { node: DeviceNode::Render { minor }, addr, len, prot, flags, offset }),
            Request::Munmap(MunmapCall { addr, len }),
            Request::Ioctl(wait_events_call(n, addr)),
        ];
        for r in &reqs {
            let bytes = r.encode(RequestId(n)).unwrap();
            let (_, back) = Request::decode_frame(&bytes).unwrap();
            prop_assert_eq!(&back, r);
            let cut = (addr as usize) % bytes.len();
            prop_assert!(Request::decode_frame(&bytes[..cut]).is_err());
        }
    }
}

// ---------------------------------------------------------------------------------
// InlinedMemory.

#[test]
fn inlined_memory_serves_exactly_its_ranges() {
    let mem = InlinedMemory::new([(0x1000, vec![1, 2, 3, 4]), (0x2000, vec![0; 16])]);
    let mut b = [0u8; 2];
    mem.read(0x1001, &mut b).unwrap();
    assert_eq!(b, [2, 3]);
    // Past the end, before the start, between ranges, across two ranges, wrapping.
    assert_eq!(mem.read(0x1003, &mut b), Err(Errno::FAULT));
    assert_eq!(mem.read(0xfff, &mut b), Err(Errno::FAULT));
    assert_eq!(mem.read(0x1800, &mut b), Err(Errno::FAULT));
    assert_eq!(mem.read(u64::MAX, &mut b), Err(Errno::FAULT));
    assert_eq!(mem.write(0x200f, &[1, 1]), Err(Errno::FAULT));
    // Nothing to read is never a fault (as for the process's own memory).
    mem.read(0xdead, &mut []).unwrap();
    // Writes are recorded and merged into intervals.
    mem.write(0x2004, &[7, 7]).unwrap();
    mem.write(0x2006, &[8]).unwrap();
    mem.write(0x200c, &[9]).unwrap();
    mem.write(0x1000, &[5]).unwrap();
    let v: u32 = mem.read_value(0x1000).unwrap();
    assert_eq!(v, u32::from_le_bytes([5, 2, 3, 4]));
    let reply = mem.into_reply();
    assert_eq!(
        reply.writes,
        vec![
            WriteBack {
                addr: 0x1000,
                data: vec![5]
            },
            WriteBack {
                addr: 0x2004,
                data: vec![7, 7, 8]
            },
            WriteBack {
                addr: 0x200c,
                data: vec![9]
            },
        ]
    );
}

#[test]
fn write_backs_outside_the_call_are_refused() {
    let mut target = [0u8; 8];
    let call = IoctlCall {
        node: DeviceNode::Kfd,
        request: request::GET_VERSION,
        arg_addr: target.as_mut_ptr() as u64,
        arg: vec![0; 8],
        arrays: vec![],
    };
    let evil = IoctlReply {
        writes: vec![WriteBack {
            addr: target.as_mut_ptr() as u64 + 4,
            data: vec![1; 8],
        }],
        shares: vec![],
    };
    assert_eq!(evil.apply(&call, &OwnMemory), Err(Errno::IO));
    assert_eq!(target, [0; 8]);
}

// ---------------------------------------------------------------------------------
// The real driver behind the wire.

fn open_driver() -> Kfd {
    amdgpu::link_components();
    let topology = load_topology(None).unwrap();
    let system = SystemIdentity::with_fixed_host(&topology).unwrap();
    Kfd::open(&DriverConfig::single_partition(topology), system).unwrap()
}

/// One ioctl of this process, carried as the daemon would carry it: gathered from our
/// memory, framed, decoded, run by the driver on [`InlinedMemory`], answered, and
/// copied back.
fn over_the_wire<T: bytemuck::Pod>(
    k: &Kfd,
    node: DeviceNode,
    req: u64,
    arg: &mut T,
) -> Result<i32, Errno> {
    let arg_addr = arg as *mut T as u64;
    over_the_wire_at(k, node, req, arg_addr)
}

fn over_the_wire_at(k: &Kfd, node: DeviceNode, req: u64, arg_addr: u64) -> Result<i32, Errno> {
    let call = IoctlCall::gather(node, req, arg_addr, &OwnMemory)?;
    let frame = Request::Ioctl(call.clone()).encode(RequestId(11)).unwrap();
    let (id, Request::Ioctl(received)) = Request::decode_frame(&frame).unwrap() else {
        unreachable!("an ioctl frame decodes as an ioctl");
    };
    assert_eq!(received, call);
    let mem = InlinedMemory::from_call(received);
    let res = match node {
        DeviceNode::Kfd => k.kfd_ioctl(req, arg_addr, &mem),
        DeviceNode::Render { minor } => k.drm_ioctl(req, arg_addr, minor, &mem),
    };
    let reply = match res {
        Ok(v) => Reply::ok(i64::from(v), ReplyBody::Ioctl(mem.into_reply())),
        Err(e) => Reply::error(e),
    };
    let frame = reply.encode(Op::Ioctl, id).unwrap();
    let (_, reply) = Reply::decode_frame(&frame).unwrap();
    reply.check_fds(0).unwrap();
    if let ReplyBody::Ioctl(body) = &reply.body {
        body.apply(&call, &OwnMemory)?;
    }
    reply.result().map(|v| v as i32)
}

#[test]
fn the_driver_runs_unchanged_on_inlined_memory() {
    let k = open_driver();
    let kfd = DeviceNode::Kfd;
    let gpu_id = k.system().gpus[0].gpu_id;

    // An _IOR argument.
    let mut v = abi::GetVersion::default();
    over_the_wire(&k, kfd, request::GET_VERSION, &mut v).unwrap();
    assert_eq!((v.major_version, v.minor_version), abi::VERSION);
    assert_eq!(
        over_the_wire_at(&k, kfd, request::GET_VERSION, 8),
        Err(Errno::FAULT)
    );

    // An output array.
    let mut q = abi::ProcessAperturesNew::default();
    over_the_wire(&k, kfd, request::GET_PROCESS_APERTURES_NEW, &mut q).unwrap();
    assert_eq!(q.num_of_nodes, 1);
    let mut ap = [abi::DeviceApertures::default(); 2];
    q.kfd_process_device_apertures_ptr = ap.as_mut_ptr() as u64;
    q.num_of_nodes = 2;
    over_the_wire(&k, kfd, request::GET_PROCESS_APERTURES_NEW, &mut q).unwrap();
    assert_eq!((q.num_of_nodes, ap[0].gpu_id, ap[1].gpu_id), (1, gpu_id, 0));
    q.kfd_process_device_apertures_ptr = 16;
    assert_eq!(
        over_the_wire(&k, kfd, request::GET_PROCESS_APERTURES_NEW, &mut q),
        Err(Errno::FAULT)
    );

    // An input array: map a buffer on the GPU named in it.
    let size = 1 << 16;
    // SAFETY: a fresh reservation, as libhsakmt makes.
    let va = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            size,
            rustix::mm::ProtFlags::empty(),
            rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::NORESERVE,
        )
    }
    .unwrap() as u64;
    let mut a = abi::AllocMemory {
        va_addr: va,
        size: size as u64,
        gpu_id,
        flags: abi::alloc_flags::GTT | abi::alloc_flags::WRITABLE,
        ..Default::default()
    };
    over_the_wire(&k, kfd, request::ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    assert_ne!(a.handle, 0);
    let ids = [gpu_id];
    let mut m = abi::MapMemory {
        handle: a.handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: 1,
        n_success: 0,
    };
    over_the_wire(&k, kfd, request::MAP_MEMORY_TO_GPU, &mut m).unwrap();
    assert_eq!(m.n_success, 1);
    // An unreadable input array is not inlined: the driver's read faults.
    m.device_ids_array_ptr = 24;
    m.n_success = 0;
    assert_eq!(
        over_the_wire(&k, kfd, request::UNMAP_MEMORY_FROM_GPU, &mut m),
        Err(Errno::FAULT)
    );

    // An in-out array: wait on an event that is set.
    let mut e = abi::CreateEvent {
        event_type: abi::event_type::SIGNAL,
        auto_reset: 1,
        ..Default::default()
    };
    over_the_wire(&k, kfd, request::CREATE_EVENT, &mut e).unwrap();
    let mut set = abi::IdArgs {
        id: e.event_id,
        pad: 0,
    };
    over_the_wire(&k, kfd, request::SET_EVENT, &mut set).unwrap();
    let mut events = [abi::EventData {
        event_id: e.event_id,
        ..Default::default()
    }];
    let mut w = abi::WaitEvents {
        events_ptr: events.as_mut_ptr() as u64,
        num_events: 1,
        wait_for_all: 1,
        timeout: 1000,
        wait_result: 77,
    };
    over_the_wire(&k, kfd, request::WAIT_EVENTS, &mut w).unwrap();
    assert_eq!(w.wait_result, abi::wait_result::COMPLETE);
    assert_eq!(events[0].event_id, e.event_id);
    k.close();
}

#[test]
fn drm_queries_write_back_exactly_what_the_driver_wrote() {
    let k = open_driver();
    let node = DeviceNode::Render {
        minor: k.system().gpus[0].drm_render_minor,
    };
    // A 3-byte name buffer followed by a sentinel the driver must not touch.
    let mut name = [0xeeu8; 8];
    let mut desc = [0u8; 64];
    let mut v = drm::Version {
        name_len: 3,
        name: name.as_mut_ptr() as u64,
        desc_len: 64,
        desc: desc.as_mut_ptr() as u64,
        ..Default::default()
    };
    over_the_wire(&k, node, drm_version_request(), &mut v).unwrap();
    assert_eq!(&name[..4], b"amd\xee");
    assert_eq!(v.name_len, 6);
    assert!(v.version_major >= 3);
    assert!(std::str::from_utf8(&desc[..v.desc_len as usize])
        .unwrap()
        .contains("dojo"));

    let mut out = [0xeeu8; 8];
    let mut info = drm::AmdgpuInfo {
        return_pointer: out.as_mut_ptr() as u64,
        return_size: 8,
        query: drm::query::ACCEL_WORKING,
        ..Default::default()
    };
    over_the_wire(&k, node, amdgpu_info_request(), &mut info).unwrap();
    assert_eq!(out, [1, 0, 0, 0, 0xee, 0xee, 0xee, 0xee]);
    k.close();
}

// ---------------------------------------------------------------------------------
// Transport.

fn memfd_with(bytes: &[u8]) -> OwnedFd {
    let fd = rustix::fs::memfd_create("dojo-wire-test", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
    rustix::fs::ftruncate(&fd, 4096).unwrap();
    rustix::io::pwrite(&fd, bytes, 0).unwrap();
    fd
}

fn mapped_bytes(fd: &OwnedFd, len: usize) -> Vec<u8> {
    // SAFETY: a fresh shared read-only mapping of a memfd at least `len` long, unmapped
    // below before the slice is dropped.
    unsafe {
        let p = rustix::mm::mmap(
            std::ptr::null_mut(),
            4096,
            rustix::mm::ProtFlags::READ,
            rustix::mm::MapFlags::SHARED,
            fd,
            0,
        )
        .unwrap();
        let out = std::slice::from_raw_parts(p as *const u8, len).to_vec();
        rustix::mm::munmap(p, 4096).unwrap();
        out
    }
}

#[test]
fn frames_cross_with_and_without_memfds() {
    let (client, daemon) = UnixTransport::pair().unwrap();
    let hello = Request::Handshake(Hello {
        protocol_version: PROTOCOL_VERSION,
        pid: std::process::id(),
        page_size: 4096,
    });
    client
        .send(&hello.encode(RequestId(1)).unwrap(), &[])
        .unwrap();
    let got = daemon.recv().unwrap();
    assert!(got.fds.is_empty());
    assert_eq!(Request::decode(&got.header, &got.payload).unwrap(), hello);

    let reply = Reply::ok(
        0x10_0000_0000,
        ReplyBody::Mmap(MmapReply {
            share: Some(SharedMapping {
                addr: 0x10_0000_0000,
                len: 4096,
                memfd_offset: 0,
            }),
        }),
    );
    let memfd = memfd_with(b"bytes of the daemon");
    daemon
        .send(
            &reply.encode(Op::Mmap, RequestId(2)).unwrap(),
            &[memfd.as_fd()],
        )
        .unwrap();
    // The daemon writes after sending: the mapping is shared, not copied.
    rustix::io::pwrite(&memfd, b"BYTES", 0).unwrap();
    let got = client.recv().unwrap();
    let back = Reply::decode(&got.header, &got.payload).unwrap();
    back.check_fds(got.fds.len()).unwrap();
    assert_eq!(back, reply);
    assert_ne!(got.fds[0].as_raw_fd(), memfd.as_raw_fd());
    assert_eq!(mapped_bytes(&got.fds[0], 19), b"BYTES of the daemon");
    // Received descriptors are close-on-exec.
    let flags = rustix::io::fcntl_getfd(&got.fds[0]).unwrap();
    assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
}

#[test]
fn large_frames_cross_in_pieces_and_concurrent_senders_do_not_interleave() {
    let (client, daemon) = UnixTransport::pair().unwrap();
    let client = Arc::new(client);
    let text = "x".repeat(MAX_PAYLOAD - REPLY_PREFIX_BYTES - 4);
    let big = Reply::ok(0, ReplyBody::Status(StatusReport { text }));
    let frame = big.encode(Op::Status, RequestId(5)).unwrap();
    assert!(frame.len() > 1 << 19, "bigger than a socket buffer");
    let memfd = memfd_with(b"with a big frame");
    let sender = std::thread::spawn(move || {
        daemon.send(&frame, &[memfd.as_fd()]).unwrap();
        daemon
    });
    let got = client.recv().unwrap();
    assert_eq!(Reply::decode(&got.header, &got.payload).unwrap(), big);
    assert_eq!(mapped_bytes(&got.fds[0], 16), b"with a big frame");
    let daemon = sender.join().unwrap();

    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..50u32 {
                    let req =
                        Request::Ioctl(wait_events_call(1 + (i % 30), 0x1000 * u64::from(t + 1)));
                    client
                        .send(&req.encode(RequestId(t * 1000 + i)).unwrap(), &[])
                        .unwrap();
                }
            })
        })
        .collect();
    for _ in 0..400 {
        let got = daemon.recv().unwrap();
        let Request::Ioctl(call) = Request::decode(&got.header, &got.payload).unwrap() else {
            unreachable!("only ioctls were sent");
        };
        let (t, i) = (
            got.header.request_id.0 / 1000,
            got.header.request_id.0 % 1000,
        );
        assert_eq!(
            call,
            wait_events_call(1 + (i % 30), 0x1000 * u64::from(t + 1))
        );
    }
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_peer_closing_mid_frame_is_a_clean_error() {
    let (client, daemon) = UnixTransport::pair().unwrap();
    let frame = Request::Ioctl(wait_events_call(2, 0x9000))
        .encode(RequestId(1))
        .unwrap();
    client.send(&frame[..30], &[]).unwrap();
    drop(client);
    match daemon.recv() {
        Err(TransportError::ClosedMidFrame { received, expected }) => {
            assert_eq!((received, expected), (30, frame.len()));
        }
        other => panic!("expected a mid-frame close, got {other:?}"),
    }
    assert!(matches!(daemon.recv(), Err(TransportError::Broken)));

    // Closing between frames is an orderly end; inside a header, mid-frame.
    let (client, daemon) = UnixTransport::pair().unwrap();
    client.send(&frame, &[]).unwrap();
    drop(client);
    daemon.recv().unwrap();
    assert!(matches!(daemon.recv(), Err(TransportError::Closed)));
    let (client, daemon) = UnixTransport::pair().unwrap();
    client.send(b"DOJ", &[]).unwrap();
    drop(client);
    assert!(matches!(
        daemon.recv(),
        Err(TransportError::ClosedMidFrame {
            received: 3,
            expected: 16
        })
    ));
}

#[test]
fn garbage_timeouts_and_descriptor_limits() {
    let (client, daemon) = UnixTransport::pair().unwrap();
    client
        .send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", &[])
        .unwrap();
    assert!(matches!(
        daemon.recv(),
        Err(TransportError::Protocol(ProtocolError::BadMagic { .. }))
    ));
    assert!(matches!(daemon.recv(), Err(TransportError::Broken)));

    let (client, daemon) = UnixTransport::pair().unwrap();
    daemon
        .set_recv_timeout(Some(Duration::from_millis(30)))
        .unwrap();
    assert!(matches!(
        daemon.recv(),
        Err(TransportError::TimedOut { mid_frame: false })
    ));
    // Still usable after a timeout between frames.
    let frame = Request::Munmap(MunmapCall {
        addr: 4096,
        len: 4096,
    })
    .encode(RequestId(1))
    .unwrap();
    client.send(&frame, &[]).unwrap();
    daemon.recv().unwrap();
    // A timeout in the middle of a frame breaks the stream.
    client.send(&frame[..20], &[]).unwrap();
    assert!(matches!(
        daemon.recv(),
        Err(TransportError::TimedOut { mid_frame: true })
    ));
    assert!(matches!(daemon.recv(), Err(TransportError::Broken)));

    let fds: Vec<OwnedFd> = (0..MAX_FDS + 1).map(|_| memfd_with(b"")).collect();
    let borrowed: Vec<_> = fds.iter().map(|f| f.as_fd()).collect();
    assert!(matches!(
        client.send(&frame, &borrowed),
        Err(TransportError::TooManyFds { found: 9, max: 8 })
    ));
    assert!(matches!(
        client.send(&[], &[]),
        Err(TransportError::EmptyFrame)
    ));
}

#[test]
fn peer_credentials_are_ours() {
    let dir = tempfile::tempdir().unwrap();
    let loc =
        SocketLocation::in_dir(dir.path().join("rt"), LocationSource::DojoRuntimeDir).unwrap();
    let listener = loc.listen().unwrap();
    let client = loc.connect().unwrap();
    let (server, _) = listener.accept().unwrap();
    let me = check_peer_uid(&server).unwrap();
    assert_eq!(me.uid, rustix::process::geteuid().as_raw());
    assert_eq!(me.gid, rustix::process::getegid().as_raw());
    assert_eq!(me.pid, std::process::id());
    assert_eq!(peer_credentials(&client).unwrap(), me);
}

/// As root, a child that drops to another uid and connects is refused by the peer
/// check. (Without root there is no second uid to test with; the directory tests below
/// cover that case.)
#[test]
fn a_peer_of_another_uid_is_refused() {
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("open.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Everything the child needs is prepared before fork.
    // SAFETY: sockaddr_un is plain data.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let raw = path.as_os_str().as_encoded_bytes();
    for (d, s) in addr.sun_path.iter_mut().zip(raw) {
        *d = *s as libc::c_char;
    }
    // SAFETY: the child only makes async-signal-safe system calls and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: raw system calls on prepared data; the child never returns.
        unsafe {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                libc::_exit(2);
            }
            let s = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            let len = size_of::<libc::sockaddr_un>() as libc::socklen_t;
            if libc::connect(s, &addr as *const _ as *const libc::sockaddr, len) != 0 {
                libc::_exit(3);
            }
            let mut b = 0u8;
            libc::read(s, &mut b as *mut u8 as *mut libc::c_void, 1);
            libc::_exit(0);
        }
    }
    assert!(pid > 0);
    let (server, _) = listener.accept().unwrap();
    let err = check_peer_uid(&server).unwrap_err();
    match &err {
        TransportError::ForeignPeer {
            peer_uid,
            peer_pid,
            our_uid,
        } => {
            assert_eq!((*peer_uid, *peer_pid as i32, *our_uid), (65534, pid, 0));
        }
        other => panic!("expected a foreign peer, got {other:?}"),
    }
    assert!(err.to_string().contains("uid 65534"), "{err}");
    drop(server);
    let mut status = 0;
    // SAFETY: waits for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(libc::WEXITSTATUS(status), 0);
}

// ---------------------------------------------------------------------------------
// Socket path.

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let pairs: Vec<(String, OsString)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

#[test]
fn the_socket_path_follows_the_environment() {
    let loc = SocketLocation::resolve(
        env(&[
            ("DOJO_RUNTIME_DIR", "/a/b"),
            ("XDG_RUNTIME_DIR", "/run/user/7"),
        ]),
        7,
    )
    .unwrap();
    assert_eq!(loc.socket, PathBuf::from("/a/b/daemon.sock"));
    assert_eq!(loc.source, LocationSource::DojoRuntimeDir);
    let loc = SocketLocation::resolve(
        env(&[("DOJO_RUNTIME_DIR", ""), ("XDG_RUNTIME_DIR", "/run/user/7")]),
        7,
    )
    .unwrap();
    assert_eq!(loc.socket, PathBuf::from("/run/user/7/dojo/daemon.sock"));
    assert_eq!(loc.dir, PathBuf::from("/run/user/7/dojo"));
    let loc = SocketLocation::resolve(env(&[("XDG_RUNTIME_DIR", "relative")]), 1000).unwrap();
    assert_eq!(loc.socket, PathBuf::from("/tmp/dojo-1000/daemon.sock"));
    assert_eq!(loc.source, LocationSource::Tmp);
    assert!(matches!(
        SocketLocation::resolve(env(&[("DOJO_RUNTIME_DIR", "rel/dir")]), 1),
        Err(SocketPathError::RelativeRuntimeDir(_))
    ));
    let long = format!("/{}", "d".repeat(100));
    assert!(matches!(
        SocketLocation::resolve(env(&[("DOJO_RUNTIME_DIR", &long)]), 1),
        Err(SocketPathError::PathTooLong { max: 107, .. })
    ));
}

fn mode_of(p: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn the_directory_is_created_private() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x/y/dojo");
    ensure_private_dir(&dir).unwrap();
    assert_eq!(mode_of(&dir), 0o700);
    // Existing and private: fine, and unchanged.
    ensure_private_dir(&dir).unwrap();
    assert_eq!(mode_of(&dir), 0o700);
    // The socket is private too.
    let loc = SocketLocation::in_dir(dir.clone(), LocationSource::DojoRuntimeDir).unwrap();
    let listener = loc.listen().unwrap();
    assert_eq!(mode_of(&loc.socket), 0o600);
    // A second daemon is refused while the first listens; a stale socket is replaced.
    assert!(matches!(
        loc.listen(),
        Err(SocketPathError::DaemonRunning { .. })
    ));
    drop(listener);
    let _again = loc.listen().unwrap();
}

#[test]
fn unsafe_directories_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = ensure_private_dir(&open).unwrap_err();
    assert!(
        matches!(err, SocketPathError::InsecureMode { mode: 0o755, .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains(&open.display().to_string()) && msg.contains("0755"),
        "{msg}"
    );
    assert_eq!(mode_of(&open), 0o755, "an unsafe directory is not repaired");

    let link = tmp.path().join("link");
    let private = tmp.path().join("private");
    ensure_private_dir(&private).unwrap();
    std::os::unix::fs::symlink(&private, &link).unwrap();
    assert!(matches!(
        check_private_dir(&link),
        Err(SocketPathError::NotADirectory { .. })
    ));

    let file = tmp.path().join("file");
    std::fs::write(&file, b"").unwrap();
    assert!(ensure_private_dir(&file).is_err());

    // Something that is not a socket where the socket goes.
    let loc = SocketLocation::in_dir(private.clone(), LocationSource::DojoRuntimeDir).unwrap();
    std::fs::write(&loc.socket, b"").unwrap();
    assert!(matches!(
        loc.listen(),
        Err(SocketPathError::NotASocket { .. })
    ));

    if rustix::process::geteuid().is_root() {
        let theirs = tmp.path().join("theirs");
        ensure_private_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let err = check_private_dir(&theirs).unwrap_err();
        assert!(
            matches!(
                err,
                SocketPathError::WrongOwner {
                    owner: 65534,
                    uid: 0,
                    ..
                }
            ),
            "{err}"
        );
    }
}
