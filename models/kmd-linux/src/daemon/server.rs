//! The daemon's side of a connection: one process context ([`Kfd`]) per client on
//! the shared [`Device`], every request checked and run on its own thread (so a
//! WAIT_EVENTS that blocks does not stop the client's other calls), and the context
//! reclaimed when the client goes away, however it goes.
//!
//! A malformed frame whose boundary is intact gets an error reply; a broken stream
//! (truncated frame, bad header, too many descriptors) ends the connection. Neither
//! touches another client.
//!
//! **Limits** ([`DaemonLimits`]): at most `max_clients` clients at once (one more is
//! refused at the handshake); each client's buffer store reserves the machine's VRAM
//! plus its host memory of address space, not the local driver's 1 TiB, so a full
//! daemon stays within the address space; a connection must send its handshake within
//! `handshake_timeout`, and a client that holds no buffer and no queue and has sent
//! nothing for `idle_timeout` is disconnected (its context reclaimed as usual).

use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::{DeviceNode, Errno};
use crate::daemon::inline::InlinedMemory;
use crate::daemon::protocol::{
    HandshakeReply, MmapReply, Op, Refusal, Reply, ReplyBody, Request, RequestId, SessionId, SharedMapping,
    StatusFormat, StatusReport, Welcome, PROTOCOL_VERSION,
};
use crate::daemon::transport::{Received, Transport, TransportError};
use crate::kfd::{lock, Device, Kfd};

/// One connected client.
struct Client {
    pid: u32,
    uid: u32,
    kfd: Arc<Kfd>,
    /// Milliseconds since the daemon started at its last message.
    last_active: Arc<AtomicU64>,
    /// The connection's socket, to end it when idle (`None` for other transports).
    control: Option<UnixStream>,
}

/// What the daemon allows its clients (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DaemonLimits {
    /// Most clients connected at once.
    pub max_clients: usize,
    /// Longest wait for a new connection's handshake.
    pub handshake_timeout: Duration,
    /// Longest silence of a client that holds nothing before it is disconnected.
    pub idle_timeout: Duration,
}

impl Default for DaemonLimits {
    /// 64 clients, 10 s for the handshake, 10 minutes idle.
    fn default() -> DaemonLimits {
        DaemonLimits {
            max_clients: 64,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(600),
        }
    }
}

/// See the [module docs](self).
pub struct Daemon {
    device: Arc<Device>,
    fake_root: PathBuf,
    minors: Vec<u32>,
    clients: Mutex<BTreeMap<SessionId, Client>>,
    next_session: AtomicU64,
    log: Mutex<Vec<String>>,
    limits: DaemonLimits,
    /// Address space reserved for each client's buffers.
    reservation: u64,
    started: Instant,
}

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionEnd {
    /// The client closed the connection (or died).
    #[error("the client closed the connection")]
    Closed,
    /// The client spoke another protocol version.
    #[error("refused: {0}")]
    Refused(String),
    /// The stream broke or carried garbage.
    #[error("disconnected: {0}")]
    Broken(#[from] TransportError),
}

impl Daemon {
    /// A daemon serving `device`, whose clients read the sysfs tree at `fake_root`, with
    /// the default [`DaemonLimits`].
    pub fn new(device: Arc<Device>, fake_root: PathBuf) -> Arc<Daemon> {
        Daemon::with_limits(device, fake_root, DaemonLimits::default())
    }

    /// [`Daemon::new`] with explicit limits.
    pub fn with_limits(device: Arc<Device>, fake_root: PathBuf, limits: DaemonLimits) -> Arc<Daemon> {
        let system = device.system();
        let minors = system.gpus.iter().map(|g| g.drm_render_minor).collect();
        // A client's buffers are VRAM (at most the GPUs' memory) and GTT (at most the
        // host's memory): that much address space, in whole GiB, at least 1 GiB.
        let vram: u64 = system.gpus.iter().map(|g| g.vram_bytes).sum();
        let reservation = vram
            .saturating_add(system.cpu.mem_bytes)
            .next_multiple_of(1 << 30)
            .clamp(1 << 30, crate::kfd::BACKING_BYTES);
        Arc::new(Daemon {
            device,
            fake_root,
            minors,
            clients: Mutex::new(BTreeMap::new()),
            next_session: AtomicU64::new(1),
            log: Mutex::new(Vec::new()),
            limits,
            reservation,
            started: Instant::now(),
        })
    }

    /// Address space reserved for each client's buffers, in bytes.
    pub fn client_reservation(&self) -> u64 {
        self.reservation
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Disconnects every client idle for longer than the idle timeout that holds no
    /// buffer and no queue; returns how many. [`Daemon::accept_loop`] calls it every
    /// second.
    pub fn reap_idle(&self) -> usize {
        let limit = self.limits.idle_timeout.as_millis() as u64;
        let now = self.now_ms();
        let mut reaped = 0;
        for (session, c) in lock(&self.clients).iter() {
            let idle = now.saturating_sub(c.last_active.load(Ordering::Relaxed));
            let (buffers, _, queues) = c.kfd.usage();
            if idle > limit && buffers == 0 && queues == 0 {
                if let Some(control) = &c.control {
                    // Logged before the hang-up, so whoever sees the connection end finds
                    // the reason in the log (only the log's own lock is taken).
                    let seconds = idle as f64 / 1000.0;
                    self.note(format!("session {} sent nothing for {seconds:.1} s and holds nothing: disconnected", session.0));
                    let _ = control.shutdown(std::net::Shutdown::Both);
                    // Counted once: the session goes as soon as its reader sees the end.
                    c.last_active.store(u64::MAX, Ordering::Relaxed);
                    reaped += 1;
                }
            }
        }
        reaped
    }

    fn note(&self, line: String) {
        eprintln!("dojo daemon: {line}");
        lock(&self.log).push(line);
    }

    /// What happened so far: connections, refusals, reclaimed contexts.
    pub fn log(&self) -> Vec<String> {
        lock(&self.log).clone()
    }

    /// The connected clients and what they hold, one line each.
    pub fn status(&self) -> String {
        let clients = lock(&self.clients);
        let mut out = format!("{} client(s)\n", clients.len());
        for (session, c) in clients.iter() {
            let (buffers, bytes, queues) = c.kfd.usage();
            out.push_str(&format!(
                "session {} pid {} uid {}: {buffers} buffers ({bytes} bytes), {queues} queues\n",
                session.0, c.pid, c.uid
            ));
        }
        out
    }

    /// Accepts connections on `listener` until it fails (the daemon's main loop):
    /// peers of another user are refused (`SO_PEERCRED`), every other connection is
    /// served on its own thread.
    pub fn accept_loop(self: &Arc<Self>, listener: &std::os::unix::net::UnixListener) -> std::io::Error {
        let weak = Arc::downgrade(self);
        let _ = std::thread::Builder::new().name("dojo-idle".into()).spawn(move || {
            while let Some(daemon) = weak.upgrade() {
                daemon.reap_idle();
                drop(daemon);
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        loop {
            let stream = match listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // Out of descriptors or memory for a moment: clients leave, retry.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)) => {
                    self.note(format!("accepting a connection: {e}; retrying"));
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    continue;
                }
                Err(e) => return e,
            };
            let uid = match crate::daemon::transport::check_peer_uid(&stream) {
                Ok(c) => c.uid,
                Err(e) => {
                    self.note(format!("refused a connection: {e}"));
                    continue;
                }
            };
            let daemon = self.clone();
            let _ = std::thread::Builder::new().name("dojo-client".into()).spawn(move || {
                // A clone of the socket sets the handshake's deadline and ends an idle
                // client.
                let control = stream.try_clone().ok();
                if let Some(c) = &control {
                    let _ = c.set_read_timeout(Some(daemon.limits.handshake_timeout));
                }
                let end =
                    daemon.serve_with(Arc::new(crate::daemon::transport::UnixTransport::new(stream)), uid, control);
                if let ConnectionEnd::Broken(e) = &end {
                    eprintln!("dojo daemon: a client was disconnected: {e}");
                }
            });
        }
    }

    /// Serves one connection until it ends, then reclaims the client's context.
    /// `uid` is the peer's user id (checked by the caller with `SO_PEERCRED`).
    pub fn serve<T: Transport + 'static>(self: &Arc<Self>, transport: Arc<T>, uid: u32) -> ConnectionEnd {
        self.serve_with(transport, uid, None)
    }

    /// [`Daemon::serve`]; `control` is the connection's socket, whose read timeout
    /// (the handshake's deadline) is lifted after the handshake and which ends the
    /// connection when the client idles.
    fn serve_with<T: Transport + 'static>(
        self: &Arc<Self>,
        transport: Arc<T>,
        uid: u32,
        control: Option<UnixStream>,
    ) -> ConnectionEnd {
        let first = match transport.recv() {
            Ok(r) => r,
            Err(TransportError::Closed) => return ConnectionEnd::Closed,
            Err(e) => return ConnectionEnd::Broken(e),
        };
        let id = first.header.request_id;
        let hello = match Request::decode(&first.header, &first.payload) {
            Ok(Request::Handshake(h)) => h,
            Ok(_) | Err(_) => {
                let why = "the first message must be a handshake".to_string();
                let _ = send(&*transport, Op::Handshake, id, &Reply::error(Errno::PROTO), &[]);
                self.note(format!("refused a connection: {why}"));
                return ConnectionEnd::Refused(why);
            }
        };
        if hello.protocol_version != PROTOCOL_VERSION {
            let reason = format!("protocol version {} (the daemon speaks {PROTOCOL_VERSION})", hello.protocol_version);
            let body = ReplyBody::Handshake(HandshakeReply::Refused(Refusal { protocol_version: PROTOCOL_VERSION, reason: reason.clone() }));
            let _ = send(&*transport, Op::Handshake, id, &Reply::ok(0, body), &[]);
            self.note(format!("refused pid {}: {reason}", hello.pid));
            return ConnectionEnd::Refused(reason);
        }
        if lock(&self.clients).len() >= self.limits.max_clients {
            let reason = format!("the daemon serves at most {} clients at once", self.limits.max_clients);
            let body = ReplyBody::Handshake(HandshakeReply::Refused(Refusal {
                protocol_version: PROTOCOL_VERSION,
                reason: reason.clone(),
            }));
            let _ = send(&*transport, Op::Handshake, id, &Reply::ok(0, body), &[]);
            self.note(format!("refused pid {}: {reason}", hello.pid));
            return ConnectionEnd::Refused(reason);
        }
        if let Some(c) = &control {
            let _ = c.set_read_timeout(None);
        }
        let kfd = match Kfd::attach_reserving(self.device.clone(), self.reservation) {
            Ok(k) => Arc::new(k),
            Err(e) => {
                let reason = format!("cannot open a GPU context: {e}");
                let body = ReplyBody::Handshake(HandshakeReply::Refused(Refusal { protocol_version: PROTOCOL_VERSION, reason: reason.clone() }));
                let _ = send(&*transport, Op::Handshake, id, &Reply::ok(0, body), &[]);
                return ConnectionEnd::Refused(reason);
            }
        };
        let session = SessionId(self.next_session.fetch_add(1, Ordering::Relaxed));
        let last_active = Arc::new(AtomicU64::new(self.now_ms()));
        lock(&self.clients).insert(
            session,
            Client { pid: hello.pid, uid, kfd: kfd.clone(), last_active: last_active.clone(), control },
        );
        self.note(format!("session {} connected: pid {} uid {uid}", session.0, hello.pid));
        let welcome = Welcome {
            protocol_version: PROTOCOL_VERSION,
            session,
            fake_root: self.fake_root.clone(),
            render_minors: self.minors.clone(),
            wake_fd: false,
        };
        let end = match send(&*transport, Op::Handshake, id, &Reply::ok(0, ReplyBody::Handshake(HandshakeReply::Accepted(welcome))), &[]) {
            Ok(()) => self.requests(&transport, &kfd, &last_active),
            Err(e) => ConnectionEnd::Broken(e),
        };
        // However the client went, its context goes: queues retired, buffers freed,
        // blocked waits ended.
        let (buffers, bytes, queues) = kfd.usage();
        kfd.close();
        lock(&self.clients).remove(&session);
        self.note(format!(
            "session {} ended ({end}); reclaimed its context ({buffers} buffers, {bytes} bytes, {queues} queues)",
            session.0
        ));
        end
    }

    fn requests<T: Transport + 'static>(
        self: &Arc<Self>,
        transport: &Arc<T>,
        kfd: &Arc<Kfd>,
        last_active: &AtomicU64,
    ) -> ConnectionEnd {
        let mut workers = Vec::new();
        let end = loop {
            let received: Received = match transport.recv() {
                Ok(r) => r,
                Err(TransportError::Closed) => break ConnectionEnd::Closed,
                Err(e) => break ConnectionEnd::Broken(e),
            };
            last_active.store(self.now_ms(), Ordering::Relaxed);
            let (op, id) = (received.header.op, received.header.request_id);
            let request = match Request::decode(&received.header, &received.payload) {
                Ok(r) => r,
                Err(_) => {
                    // The frame boundary is intact: answer, keep serving.
                    if let Err(e) = send(&**transport, op, id, &Reply::error(Errno::INVAL), &[]) {
                        break ConnectionEnd::Broken(e);
                    }
                    continue;
                }
            };
            let fds = received.fds;
            let (daemon, link, context) = (self.clone(), transport.clone(), kfd.clone());
            workers.retain(|w: &std::thread::JoinHandle<()>| !w.is_finished());
            let spawned = std::thread::Builder::new().name("dojo-request".into()).spawn(move || {
                daemon.answer(&*link, &context, op, id, request, fds);
            });
            match spawned {
                Ok(w) => workers.push(w),
                Err(_) => {
                    let _ = send(&**transport, op, id, &Reply::error(Errno::AGAIN), &[]);
                }
            }
        };
        // End blocked waits, then let the request threads finish.
        kfd.end_waits();
        for w in workers {
            let _ = w.join();
        }
        end
    }

    fn answer<T: Transport>(&self, transport: &T, kfd: &Kfd, op: Op, id: RequestId, request: Request, fds: Vec<std::os::fd::OwnedFd>) {
        let result = match request {
            Request::Handshake(_) => Err(Errno::PROTO),
            Request::Ioctl(call) => {
                let (node, request, arg_addr) = (call.node, call.request, call.arg_addr);
                let memory = InlinedMemory::from_call(call);
                // A memfd with an ioctl is the USERPTR memory the client moved.
                let migrated = fds.into_iter().next();
                let r = match node {
                    DeviceNode::Kfd => crate::kfd::userptr::with_migrated(migrated, || kfd.kfd_ioctl(request, arg_addr, &memory)),
                    DeviceNode::Render { minor } => kfd.drm_ioctl(request, arg_addr, minor, &memory),
                };
                r.map(|v| (i64::from(v), ReplyBody::Ioctl(memory.into_reply()), None))
            }
            Request::Mmap(m) => {
                let len = usize::try_from(m.len).map_err(|_| Errno::INVAL);
                match (m.node, len) {
                    (_, Err(e)) => Err(e),
                    (DeviceNode::Render { .. }, Ok(len)) => kfd.render_share(len, m.offset as u64).map(|(fd, memfd_offset)| {
                        let share = SharedMapping { addr: m.addr, len: m.len, memfd_offset };
                        (m.addr as i64, ReplyBody::Mmap(MmapReply { share: Some(share) }), Some(fd))
                    }),
                    // Doorbell and MMIO pages are the client's own memory; its trapped
                    // doorbell writes arrive as DOORBELL messages.
                    (DeviceNode::Kfd, Ok(len)) => kfd
                        .kfd_mapping_check(len, m.offset as u64)
                        .map(|_| (m.addr as i64, ReplyBody::Mmap(MmapReply { share: None }), None)),
                }
            }
            Request::Munmap(u) => {
                kfd.unmapping(u.addr as usize, u.len as usize);
                Ok((0, ReplyBody::Empty, None))
            }
            Request::Close(_) => Ok((0, ReplyBody::Empty, None)),
            Request::Doorbell(d) => kfd.gpu_index(d.gpu_id).map(|g| {
                kfd.ring_gpu(g);
                (0, ReplyBody::Empty, None)
            }),
            Request::Status(q) => {
                let text = match q.format {
                    StatusFormat::Text => self.status(),
                    StatusFormat::Json => serde_json::to_string(&self.status().lines().collect::<Vec<_>>()).unwrap_or_default(),
                };
                Ok((0, ReplyBody::Status(StatusReport { text }), None))
            }
        };
        let (reply, fd) = match result {
            Ok((v, body, fd)) => (Reply::ok(v, body), fd),
            Err(e) => (Reply::error(e), None),
        };
        let fds: Vec<BorrowedFd<'_>> = fd.into_iter().collect();
        let _ = send(transport, op, id, &reply, &fds);
    }
}

fn send<T: Transport + ?Sized>(transport: &T, op: Op, id: RequestId, reply: &Reply, fds: &[BorrowedFd<'_>]) -> Result<(), TransportError> {
    let frame = reply.encode(op, id)?;
    transport.send(&frame, fds)
}
