//! The client side of daemon mode: a [`KfdBackend`] that forwards the application's
//! device calls to the daemon. Requests carry ids and a reader thread hands each reply
//! to its caller, so a blocking WAIT_EVENTS does not hold up the process's other
//! threads. Buffers arrive as memfds mapped where the application asked; doorbell pages
//! are the client's own memory, whose trapped writes become DOORBELL messages.

use std::collections::HashMap;
use std::ffi::c_void;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use rustix::mm::{MapFlags, ProtFlags};

use crate::backend::{DeviceNode, Errno, KfdBackend};
use crate::daemon::protocol::{
    DoorbellCall, HandshakeReply, Hello, IoctlCall, MmapCall, MmapReply, MunmapCall, Reply, ReplyBody, Request, RequestId,
    PROTOCOL_VERSION,
};
use crate::daemon::transport::{Transport, UnixTransport};
use crate::kfd::abi::mmap;
use crate::kfd::lock;
use crate::kfd::mapping::{placement, prot_of};
use crate::kfd::user::OwnMemory;

/// Why the client could not attach.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Connecting or talking failed.
    #[error("daemon at {path}: {reason}")]
    Connect {
        /// The socket.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

type Pending = Mutex<HashMap<u32, mpsc::Sender<(Reply, Vec<OwnedFd>)>>>;

/// See the [module docs](self).
pub struct DaemonClient {
    link: Arc<UnixTransport>,
    pending: Arc<Pending>,
    next: AtomicU32,
    fake_root: PathBuf,
    minors: Vec<u32>,
    /// Watched doorbell pages: (address, bytes, trap).
    doorbells: Mutex<Vec<(usize, usize, crate::doorbell_trap::WatchId)>>,
    forked: AtomicBool,
}

fn connect_err(path: &Path, reason: impl ToString) -> ClientError {
    ClientError::Connect { path: path.to_path_buf(), reason: reason.to_string() }
}

impl DaemonClient {
    /// Connects to the daemon at `socket` and shakes hands.
    pub fn connect(socket: &Path) -> Result<DaemonClient, ClientError> {
        let link = Arc::new(UnixTransport::connect(socket).map_err(|e| connect_err(socket, e))?);
        let hello = Request::Handshake(Hello { protocol_version: PROTOCOL_VERSION, pid: std::process::id(), page_size: 4096 });
        link.send(&hello.encode(RequestId(0)).map_err(|e| connect_err(socket, e))?, &[]).map_err(|e| connect_err(socket, e))?;
        let r = link.recv().map_err(|e| connect_err(socket, e))?;
        let reply = Reply::decode(&r.header, &r.payload).map_err(|e| connect_err(socket, e))?;
        let welcome = match reply.body {
            ReplyBody::Handshake(HandshakeReply::Accepted(w)) => w,
            ReplyBody::Handshake(HandshakeReply::Refused(r)) => return Err(connect_err(socket, format!("refused: {}", r.reason))),
            _ => return Err(connect_err(socket, format!("handshake failed: {:?}", reply.result()))),
        };
        let pending: Arc<Pending> = Arc::new(Mutex::new(HashMap::new()));
        let (reader_link, reader_pending) = (link.clone(), pending.clone());
        std::thread::Builder::new()
            .name("dojo-daemon-replies".into())
            .spawn(move || loop {
                let Ok(r) = reader_link.recv() else {
                    // The daemon is gone: every waiting call fails.
                    lock(&reader_pending).clear();
                    return;
                };
                let Ok(reply) = Reply::decode(&r.header, &r.payload) else { continue };
                if let Some(tx) = lock(&reader_pending).remove(&r.header.request_id.0) {
                    let _ = tx.send((reply, r.fds));
                }
            })
            .map_err(|e| connect_err(socket, e))?;
        Ok(DaemonClient {
            link,
            pending,
            next: AtomicU32::new(1),
            fake_root: welcome.fake_root,
            minors: welcome.render_minors,
            doorbells: Mutex::new(Vec::new()),
            forked: AtomicBool::new(false),
        })
    }

    fn call(&self, req: &Request) -> Result<(Reply, Vec<OwnedFd>), Errno> {
        self.call_with(req, None)
    }

    fn call_with(&self, req: &Request, fd: Option<&OwnedFd>) -> Result<(Reply, Vec<OwnedFd>), Errno> {
        if self.forked.load(Ordering::Relaxed) {
            return Err(Errno::BADF);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        lock(&self.pending).insert(id, tx);
        let frame = req.encode(RequestId(id)).map_err(|_| Errno::INVAL)?;
        let fds: Vec<std::os::fd::BorrowedFd<'_>> = fd.iter().map(|f| f.as_fd()).collect();
        if self.link.send(&frame, &fds).is_err() {
            lock(&self.pending).remove(&id);
            return Err(Errno::IO);
        }
        rx.recv().map_err(|_| Errno::IO)
    }

    /// Sends without waiting for the answer (doorbells, unmaps).
    fn post(link: &UnixTransport, next: &AtomicU32, req: &Request) {
        let id = next.fetch_add(1, Ordering::Relaxed);
        if let Ok(frame) = req.encode(RequestId(id)) {
            let _ = link.send(&frame, &[]);
        }
    }
}

/// For a USERPTR allocation, moves the application's pages into a memfd mapped at the
/// same address with the same contents, and returns it for the daemon. (Stores another
/// thread makes to those pages during the move may be lost: the runtime registers
/// memory before using it with the GPU.)
fn migrate_userptr(arg: &[u8]) -> Result<Option<OwnedFd>, Errno> {
    use crate::kfd::abi::{alloc_flags, AllocMemory};
    let mut a = AllocMemory::default();
    let n = arg.len().min(size_of::<AllocMemory>());
    bytemuck::bytes_of_mut(&mut a)[..n].copy_from_slice(&arg[..n]);
    if a.flags & alloc_flags::USERPTR == 0 {
        return Ok(None);
    }
    let (addr, size) = (a.mmap_offset, a.size);
    if addr == 0 || !addr.is_multiple_of(4096) || size == 0 || !size.is_multiple_of(4096) || addr.checked_add(size).is_none() {
        return Err(Errno::INVAL);
    }
    let len = usize::try_from(size).map_err(|_| Errno::INVAL)?;
    let fd = rustix::fs::memfd_create("dojo-userptr", rustix::fs::MemfdFlags::CLOEXEC)?;
    rustix::fs::ftruncate(&fd, size)?;
    // The current contents (EFAULT if the range is not all mapped).
    let mut bytes = vec![0u8; len];
    crate::kfd::user::UserMemory::read(&OwnMemory, addr, &mut bytes)?;
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::pwrite(&fd, &bytes[done..], done as u64) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    // SAFETY: replaces the application's own pages with a shared mapping holding the
    // same bytes, at the same address (what the runtime registered for the GPU).
    unsafe { rustix::mm::mmap(addr as *mut c_void, len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::SHARED | MapFlags::FIXED, &fd, 0) }?;
    Ok(Some(fd))
}

impl KfdBackend for DaemonClient {
    fn fake_root(&self) -> &Path {
        &self.fake_root
    }

    fn render_minors(&self) -> &[u32] {
        &self.minors
    }

    fn opened(&self, _fd: RawFd, _node: DeviceNode) {}

    fn closed(&self, _fd: RawFd, _node: DeviceNode) {}

    unsafe fn ioctl(&self, _fd: RawFd, node: DeviceNode, request: u64, arg: *mut c_void) -> Result<i32, Errno> {
        let call = IoctlCall::gather(node, request, arg as u64, &OwnMemory)?;
        let migrated = match node {
            DeviceNode::Kfd if request == crate::kfd::abi::request::ALLOC_MEMORY_OF_GPU => migrate_userptr(&call.arg)?,
            _ => None,
        };
        let (reply, _) = self.call_with(&Request::Ioctl(call.clone()), migrated.as_ref())?;
        let v = reply.result()?;
        if let ReplyBody::Ioctl(r) = &reply.body {
            r.apply(&call, &OwnMemory)?;
        }
        Ok(v as i32)
    }

    unsafe fn mmap(
        &self,
        _fd: RawFd,
        node: DeviceNode,
        addr: *mut c_void,
        len: usize,
        prot: i32,
        flags: i32,
        offset: i64,
    ) -> Result<*mut c_void, Errno> {
        let call = MmapCall { node, addr: addr as u64, len: len as u64, prot, flags, offset };
        let (reply, fds) = self.call(&Request::Mmap(call))?;
        reply.result()?;
        match (node, &reply.body) {
            (DeviceNode::Render { .. }, ReplyBody::Mmap(MmapReply { share: Some(s) })) => {
                let fd = fds.first().ok_or(Errno::IO)?;
                // SAFETY: maps the buffer's pages from the memfd the daemon sent, where
                // the application asked (its own placement request).
                unsafe { rustix::mm::mmap(addr, len, prot_of(prot), placement(flags), fd.as_fd(), s.memfd_offset) }
            }
            (DeviceNode::Kfd, ReplyBody::Mmap(MmapReply { share: None })) => {
                // SAFETY: a fresh anonymous page at the application's placement.
                let p = unsafe { rustix::mm::mmap_anonymous(addr, len, prot_of(prot), placement(flags)) }?;
                let offset = offset as u64;
                if offset & mmap::TYPE_MASK == mmap::TYPE_DOORBELL {
                    let gpu_id = ((offset & mmap::GPU_ID_MASK) >> mmap::GPU_ID_SHIFT) as u32;
                    let (link, next) = (self.link.clone(), Arc::new(AtomicU32::new(1 << 31)));
                    let ring = Arc::new(move || DaemonClient::post(&link, &next, &Request::Doorbell(DoorbellCall { gpu_id })));
                    // SAFETY: the page just mapped read-write.
                    let watch = unsafe { crate::doorbell_trap::watch(p as usize..p as usize + len, ring) }.map_err(|_| Errno::NOMEM)?;
                    lock(&self.doorbells).push((p as usize, len, watch));
                }
                Ok(p)
            }
            _ => Err(Errno::IO),
        }
    }

    fn unmapping(&self, addr: usize, len: usize) {
        if self.forked.load(Ordering::Relaxed) {
            return;
        }
        let end = addr.saturating_add(len);
        lock(&self.doorbells).retain(|&(a, l, w)| {
            let hit = a < end && addr < a + l;
            if hit {
                crate::doorbell_trap::unwatch(w);
            }
            !hit
        });
        DaemonClient::post(&self.link, &self.next, &Request::Munmap(MunmapCall { addr: addr as u64, len: len.max(1) as u64 }));
    }

    fn is_internal_fd(&self, fd: RawFd) -> bool {
        self.link.stream().as_raw_fd() == fd
    }

    fn after_fork_in_child(&self) {
        self.forked.store(true, Ordering::Relaxed);
    }

    fn shutdown(&self) {
        // Nothing to do: the runtime's own exit handlers may still free buffers after
        // this one runs; the connection closes with the process, and the daemon then
        // reclaims what is left.
    }
}
