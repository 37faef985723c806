//! The daemon's side of connections, driven by clients over socket pairs: handshake,
//! ioctls with inlined arrays, buffers shared through memfds, status, reclaiming a
//! client's context when it goes, garbage and wrong versions refused without
//! disturbing the others, and a blocked wait ended by the client's departure.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use kmd_linux::backend::DeviceNode;
use kmd_linux::config::{load_topology, DriverConfig};
use kmd_linux::daemon::protocol::*;
use kmd_linux::daemon::server::{ConnectionEnd, Daemon};
use kmd_linux::daemon::transport::{Transport, TransportError, UnixTransport};
use kmd_linux::identity::SystemIdentity;
use kmd_linux::kfd::abi::{self, alloc_flags, request};
use kmd_linux::kfd::user::OwnMemory;
use kmd_linux::kfd::Device;

fn daemon() -> (Arc<Device>, Arc<Daemon>) {
    amdgpu::link_components();
    let topology = load_topology(None).unwrap();
    let system = SystemIdentity::with_fixed_host(&topology).unwrap();
    let device = Device::start(&DriverConfig::single_partition(topology), system).unwrap();
    let d = Daemon::new(device.clone(), "/nonexistent-root".into());
    (device, d)
}

/// A client connection served by `d` on a thread; the thread's result is how it ended.
fn connect(d: &Arc<Daemon>) -> (UnixTransport, std::thread::JoinHandle<ConnectionEnd>) {
    let (client, server) = UnixTransport::pair().unwrap();
    let d = d.clone();
    let served = std::thread::spawn(move || d.serve(Arc::new(server), 0));
    client.set_recv_timeout(Some(Duration::from_secs(20))).unwrap();
    (client, served)
}

struct Client {
    link: UnixTransport,
    next: u32,
}

impl Client {
    fn call(&mut self, req: &Request) -> (Reply, Vec<std::os::fd::OwnedFd>) {
        self.next += 1;
        self.link.send(&req.encode(RequestId(self.next)).unwrap(), &[]).unwrap();
        let r = self.link.recv().unwrap();
        assert_eq!(r.header.request_id, RequestId(self.next));
        (Reply::decode(&r.header, &r.payload).unwrap(), r.fds)
    }

    fn hello(&mut self) -> Welcome {
        let (reply, _) = self.call(&Request::Handshake(Hello { protocol_version: PROTOCOL_VERSION, pid: 42, page_size: 4096 }));
        match reply.body {
            ReplyBody::Handshake(HandshakeReply::Accepted(w)) => w,
            other => panic!("not accepted: {other:?}"),
        }
    }

    /// One ioctl on our own memory, as the client backend will make it.
    fn ioctl<T: bytemuck::Pod>(&mut self, node: DeviceNode, req: u64, arg: &mut T) -> Result<i64, kmd_linux::Errno> {
        let call = IoctlCall::gather(node, req, arg as *mut T as u64, &OwnMemory).unwrap();
        let (reply, _) = self.call(&Request::Ioctl(call.clone()));
        let v = reply.result()?;
        if let ReplyBody::Ioctl(r) = &reply.body {
            r.apply(&call, &OwnMemory).unwrap();
        }
        Ok(v)
    }

    fn status(&mut self) -> String {
        match self.call(&Request::Status(StatusQuery { format: StatusFormat::Text })).0.body {
            ReplyBody::Status(s) => s.text,
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_client_shares_buffers_with_the_gpu_and_is_reclaimed_when_it_goes() {
    let (device, d) = daemon();
    let (link, served) = connect(&d);
    let mut c = Client { link, next: 0 };
    let w = c.hello();
    assert_eq!(w.render_minors, vec![device.system().gpus[0].drm_render_minor]);
    let mut v = abi::GetVersion::default();
    c.ioctl(DeviceNode::Kfd, request::GET_VERSION, &mut v).unwrap();
    assert_eq!((v.major_version, v.minor_version), abi::VERSION);

    // A VRAM buffer at an address we reserved, mapped from the memfd the daemon sends.
    let gpu_id = device.system().gpus[0].gpu_id;
    let size = 1usize << 16;
    // SAFETY: a fresh reservation.
    let va = unsafe {
        rustix::mm::mmap_anonymous(std::ptr::null_mut(), size, rustix::mm::ProtFlags::empty(), rustix::mm::MapFlags::PRIVATE)
    }
    .unwrap() as u64;
    let mut a = abi::AllocMemory { va_addr: va, size: size as u64, gpu_id, flags: alloc_flags::VRAM, ..Default::default() };
    c.ioctl(DeviceNode::Kfd, request::ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    let ids = [gpu_id];
    let mut m = abi::MapMemory { handle: a.handle, device_ids_array_ptr: ids.as_ptr() as u64, n_devices: 1, n_success: 0 };
    c.ioctl(DeviceNode::Kfd, request::MAP_MEMORY_TO_GPU, &mut m).unwrap();
    assert_eq!(m.n_success, 1, "the inlined device-id array reached the driver");
    let minor = w.render_minors[0];
    let mmap = MmapCall {
        node: DeviceNode::Render { minor },
        addr: va,
        len: size as u64,
        prot: libc::PROT_READ | libc::PROT_WRITE,
        flags: libc::MAP_SHARED | libc::MAP_FIXED,
        offset: a.mmap_offset as i64,
    };
    let (reply, fds) = c.call(&Request::Mmap(mmap.clone()));
    let share = match reply.body {
        ReplyBody::Mmap(MmapReply { share: Some(s) }) => s,
        other => panic!("{other:?}"),
    };
    assert_eq!((share.addr, share.len, fds.len()), (va, size as u64, 1));
    // SAFETY: replaces our own reservation with the shared buffer.
    let p = unsafe {
        rustix::mm::mmap(
            va as *mut _,
            size,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
            rustix::mm::MapFlags::SHARED | rustix::mm::MapFlags::FIXED,
            fds[0].as_fd(),
            share.memfd_offset,
        )
    }
    .unwrap();
    // SAFETY: inside the mapping.
    unsafe { *(p as *mut u64).add(2) = 0x5eed };
    let mem = device.machine().gpus[0].memory.clone();
    assert_eq!(mem.read_u64(amdgpu::gpu::ids::GpuAddr(va + 16)).unwrap(), 0x5eed, "the GPU sees the client's store");
    // An mmap of a range no buffer holds is refused.
    let bad = MmapCall { offset: mmap.offset + (1 << 30), ..mmap };
    assert!(c.call(&Request::Mmap(bad)).0.result().is_err());
    assert!(c.status().contains("1 buffers"), "{}", c.status());

    // The client goes: its context is reclaimed.
    drop(c);
    assert!(matches!(served.join().unwrap(), ConnectionEnd::Closed));
    assert!(d.status().starts_with("0 client(s)"), "{}", d.status());
    assert!(d.log().iter().any(|l| l.contains("reclaimed") && l.contains("(1 buffers")), "{:?}", d.log());
    assert!(mem.read_u64(amdgpu::gpu::ids::GpuAddr(va + 16)).is_err(), "the buffer is gone from the GPU");
    device.stop();
}

#[test]
fn garbage_and_wrong_versions_are_turned_away_and_others_keep_working() {
    let (device, d) = daemon();
    let (good_link, good_served) = connect(&d);
    let mut good = Client { link: good_link, next: 0 };
    good.hello();

    // Garbage bytes: the connection is dropped.
    let (bad, bad_served) = connect(&d);
    std::io::Write::write_all(&mut bad.stream(), b"this is not a frame at all, not even close....").unwrap();
    assert!(matches!(bad_served.join().unwrap(), ConnectionEnd::Broken(_) | ConnectionEnd::Refused(_)));

    // Another protocol version: refused with a reason.
    let (old_link, old_served) = connect(&d);
    let mut old = Client { link: old_link, next: 0 };
    let (reply, _) = old.call(&Request::Handshake(Hello { protocol_version: PROTOCOL_VERSION + 1, pid: 7, page_size: 4096 }));
    assert!(matches!(reply.body, ReplyBody::Handshake(HandshakeReply::Refused(_))), "{reply:?}");
    assert!(matches!(old_served.join().unwrap(), ConnectionEnd::Refused(_)));

    // A well-framed request with a bad body gets an error reply, and the client
    // carries on.
    let call = IoctlCall { node: DeviceNode::Kfd, request: request::GET_VERSION, arg_addr: 0x1000, arg: vec![0; 3], arrays: vec![] };
    good.next += 1;
    let frame = Request::Ioctl(IoctlCall { arg: vec![0; 8], ..call }).encode(RequestId(good.next));
    let mut frame = frame.unwrap();
    let n = frame.len();
    frame[n - 1] ^= 0xff; // still a frame; its payload no longer decodes or runs
    good.link.send(&frame, &[]).unwrap();
    let r = good.link.recv().unwrap();
    let _ = Reply::decode(&r.header, &r.payload).unwrap();
    let mut v = abi::GetVersion::default();
    good.ioctl(DeviceNode::Kfd, request::GET_VERSION, &mut v).unwrap();
    assert_eq!(v.major_version, 1);
    assert!(d.status().starts_with("1 client(s)"), "{}", d.status());
    drop(good);
    assert!(matches!(good_served.join().unwrap(), ConnectionEnd::Closed));
    device.stop();
}

#[test]
fn a_blocked_wait_ends_when_its_client_goes() {
    let (device, d) = daemon();
    let (link, served) = connect(&d);
    let mut c = Client { link, next: 0 };
    c.hello();
    let mut e = abi::CreateEvent { event_type: abi::event_type::SIGNAL, ..Default::default() };
    c.ioctl(DeviceNode::Kfd, request::CREATE_EVENT, &mut e).unwrap();
    // WAIT_EVENTS forever, sent without waiting for the answer.
    let mut data = [abi::EventData { event_id: e.event_id, ..Default::default() }];
    let mut w = abi::WaitEvents { events_ptr: data.as_mut_ptr() as u64, num_events: 1, wait_for_all: 0, timeout: u32::MAX, wait_result: 0 };
    let call = IoctlCall::gather(DeviceNode::Kfd, request::WAIT_EVENTS, &mut w as *mut _ as u64, &OwnMemory).unwrap();
    c.link.send(&Request::Ioctl(call).encode(RequestId(99)).unwrap(), &[]).unwrap();
    // Other calls of the same client are still answered meanwhile.
    let mut v = abi::GetVersion::default();
    c.ioctl(DeviceNode::Kfd, request::GET_VERSION, &mut v).unwrap();
    // The connection ends with the client, its wait included (a wait that kept it
    // open would hang here; the suite's time limit catches that).
    drop(c);
    assert!(matches!(served.join().unwrap(), ConnectionEnd::Closed), "the connection ended with its wait");
    device.stop();
}

fn limited(limits: kmd_linux::daemon::server::DaemonLimits) -> Arc<Daemon> {
    amdgpu::link_components();
    let topology = load_topology(None).unwrap();
    let system = SystemIdentity::with_fixed_host(&topology).unwrap();
    let device = Device::start(&DriverConfig::single_partition(topology), system).unwrap();
    Daemon::with_limits(device, "/nonexistent-root".into(), limits)
}

fn handshake(link: &UnixTransport) -> HandshakeReply {
    let hello = Request::Handshake(Hello { protocol_version: PROTOCOL_VERSION, pid: 7, page_size: 4096 });
    link.send(&hello.encode(RequestId(1)).unwrap(), &[]).unwrap();
    let r = link.recv().unwrap();
    match Reply::decode(&r.header, &r.payload).unwrap().body {
        ReplyBody::Handshake(h) => h,
        other => panic!("{other:?}"),
    }
}

/// Idle clients once exhausted the daemon's address space: each reserved 1 TiB, with
/// no cap on clients. Now a client reserves what the machine can give it, and one client
/// more than the cap is refused with the cap in the reason.
#[test]
fn clients_are_capped_and_reserve_only_what_the_machine_has() {
    use kmd_linux::daemon::server::DaemonLimits;
    let d = limited(DaemonLimits { max_clients: 2, ..DaemonLimits::default() });
    // The MI210's 64 GiB of VRAM plus the fixed host's memory, in whole GiB.
    let reservation = d.client_reservation();
    assert!((64 << 30..kmd_linux::kfd::BACKING_BYTES).contains(&reservation), "{reservation}");
    assert!((128u64 << 40) / reservation > 1000, "a thousand clients fit in the 47-bit address space");
    let (a, _sa) = connect(&d);
    let (b, _sb) = connect(&d);
    assert!(matches!(handshake(&a), HandshakeReply::Accepted(_)));
    assert!(matches!(handshake(&b), HandshakeReply::Accepted(_)));
    let (c, served) = connect(&d);
    match handshake(&c) {
        HandshakeReply::Refused(r) => {
            assert!(r.reason.contains("at most 2 clients"), "{}", r.reason)
        }
        other => panic!("a third client was let in: {other:?}"),
    }
    assert!(matches!(served.join().unwrap(), ConnectionEnd::Refused(_)));
}

/// A connection that never says hello, and a client that holds nothing and says nothing,
/// are disconnected after their timeouts; a busy daemon is not held by them.
#[test]
fn silent_connections_and_idle_clients_are_disconnected() {
    use kmd_linux::daemon::server::DaemonLimits;
    let limits = DaemonLimits {
        max_clients: 4,
        handshake_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(500),
    };
    let d = limited(limits);
    let dir = std::env::temp_dir().join(format!("dojo-daemon-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("dojo.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let serving = d.clone();
    std::thread::spawn(move || serving.accept_loop(&listener));

    // The daemon closes the connection (an orderly end, not our receive timeout,
    // which is far longer than the daemon's, however slow the machine).
    let silent = UnixTransport::new(std::os::unix::net::UnixStream::connect(&socket).unwrap());
    silent.set_recv_timeout(Some(Duration::from_secs(300))).unwrap();
    let end = silent.recv().map(|_| ()).unwrap_err();
    assert!(matches!(end, TransportError::Closed), "the daemon hung up on a connection without a handshake: {end}");

    let idle = UnixTransport::new(std::os::unix::net::UnixStream::connect(&socket).unwrap());
    idle.set_recv_timeout(Some(Duration::from_secs(300))).unwrap();
    assert!(matches!(handshake(&idle), HandshakeReply::Accepted(_)));
    let end = idle.recv().map(|_| ()).unwrap_err();
    assert!(matches!(end, TransportError::Closed), "the daemon hung up on an idle client: {end}");
    assert!(d.log().iter().any(|l| l.contains("sent nothing for") && l.contains("disconnected")), "{:?}", d.log());
    let _ = std::fs::remove_dir_all(&dir);
}
