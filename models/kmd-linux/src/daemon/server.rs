//! The daemon's side of a connection: one process context ([`Kfd`]) per client on
//! the shared [`Device`], every request checked and run on its own thread (so a
//! WAIT_EVENTS that blocks does not stop the client's other calls), and the context
//! reclaimed when the client goes away, however it goes.
//!
//! A malformed frame whose boundary is intact gets an error reply; a broken stream
//! (truncated frame, bad header, too many descriptors) ends the connection. Neither
//! touches another client.

use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
}

/// See the [module docs](self).
pub struct Daemon {
    device: Arc<Device>,
    fake_root: PathBuf,
    minors: Vec<u32>,
    clients: Mutex<BTreeMap<SessionId, Client>>,
    next_session: AtomicU64,
    log: Mutex<Vec<String>>,
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
    /// A daemon serving `device`, whose clients read the sysfs tree at `fake_root`.
    pub fn new(device: Arc<Device>, fake_root: PathBuf) -> Arc<Daemon> {
        let minors = device.system().gpus.iter().map(|g| g.drm_render_minor).collect();
        Arc::new(Daemon {
            device,
            fake_root,
            minors,
            clients: Mutex::new(BTreeMap::new()),
            next_session: AtomicU64::new(1),
            log: Mutex::new(Vec::new()),
        })
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
                let end = daemon.serve(Arc::new(crate::daemon::transport::UnixTransport::new(stream)), uid);
                if let ConnectionEnd::Broken(e) = &end {
                    eprintln!("dojo daemon: a client was disconnected: {e}");
                }
            });
        }
    }

    /// Serves one connection until it ends, then reclaims the client's context.
    /// `uid` is the peer's user id (checked by the caller with `SO_PEERCRED`).
    pub fn serve<T: Transport + 'static>(self: &Arc<Self>, transport: Arc<T>, uid: u32) -> ConnectionEnd {
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
        let kfd = match Kfd::attach(self.device.clone()) {
            Ok(k) => Arc::new(k),
            Err(e) => {
                let reason = format!("cannot open a GPU context: {e}");
                let body = ReplyBody::Handshake(HandshakeReply::Refused(Refusal { protocol_version: PROTOCOL_VERSION, reason: reason.clone() }));
                let _ = send(&*transport, Op::Handshake, id, &Reply::ok(0, body), &[]);
                return ConnectionEnd::Refused(reason);
            }
        };
        let session = SessionId(self.next_session.fetch_add(1, Ordering::Relaxed));
        lock(&self.clients).insert(session, Client { pid: hello.pid, uid, kfd: kfd.clone() });
        self.note(format!("session {} connected: pid {} uid {uid}", session.0, hello.pid));
        let welcome = Welcome {
            protocol_version: PROTOCOL_VERSION,
            session,
            fake_root: self.fake_root.clone(),
            render_minors: self.minors.clone(),
            wake_fd: false,
        };
        let end = match send(&*transport, Op::Handshake, id, &Reply::ok(0, ReplyBody::Handshake(HandshakeReply::Accepted(welcome))), &[]) {
            Ok(()) => self.requests(&transport, &kfd),
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

    fn requests<T: Transport + 'static>(self: &Arc<Self>, transport: &Arc<T>, kfd: &Arc<Kfd>) -> ConnectionEnd {
        let mut workers = Vec::new();
        let end = loop {
            let received: Received = match transport.recv() {
                Ok(r) => r,
                Err(TransportError::Closed) => break ConnectionEnd::Closed,
                Err(e) => break ConnectionEnd::Broken(e),
            };
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
