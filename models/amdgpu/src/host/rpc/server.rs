//! The RPC server: finds ports with pending requests and drives their tasks.

use super::error::RpcError;
use super::layout::{PortIndex, RpcLayout};
use super::link::{Geometry, Link};
use super::opcode::Opcode;
use super::services::{HostServices, RpcMemory};
use super::task::{Ctx, Progress, Task};

/// Default limit on one lane's byte string (a write, a format, an argument
/// block, a `%s`): 64 MiB.
const DEFAULT_TRANSFER_LIMIT: u64 = 64 << 20;

#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum Slot {
    /// No request in flight; `out` is our outbox value.
    Idle { out: u32 },
    /// A request being served.
    Busy { link: Link, task: Task },
    /// A request failed; the port is never served again.
    Failed,
}

/// Serves the RPC requests of one GPU program (one shared buffer).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct RpcServer {
    g: Geometry,
    slots: Vec<Slot>,
    initialized: bool,
    limit: u64,
    inbox: Vec<u8>,
}

impl RpcServer {
    /// A server over the shared buffer at `buffer_addr` in GPU memory. The
    /// buffer must hold `layout.allocation_size()` zeroed bytes before the
    /// GPU program starts.
    pub fn new(layout: RpcLayout, buffer_addr: u64) -> RpcServer {
        RpcServer {
            g: Geometry { layout, base: buffer_addr },
            slots: (0..layout.ports()).map(|_| Slot::Idle { out: 0 }).collect(),
            initialized: false,
            limit: DEFAULT_TRANSFER_LIMIT,
            inbox: vec![0; layout.ports() as usize * 4],
        }
    }

    /// Sets the largest byte string one lane may send in one transfer.
    pub fn with_transfer_limit(mut self, limit: u64) -> RpcServer {
        self.limit = limit;
        self
    }

    /// The layout this server was built with.
    pub fn layout(&self) -> RpcLayout {
        self.g.layout
    }

    /// The bytes of the `rpc::Client` to write into the device symbol
    /// `__llvm_rpc_client` ([`super::CLIENT_IMAGE_SIZE`] bytes).
    pub fn client_image(&self) -> Vec<u8> {
        self.g.layout.client_image(self.g.base)
    }

    /// Serves every port with a pending request as far as the client's
    /// packets allow, without waiting. Returns the number of ports on which
    /// something happened (0 means the GPU is not waiting on the host).
    ///
    /// An error names the port and opcode; that port is not served again,
    /// the others are served on later calls.
    pub fn poll(&mut self, mem: &dyn RpcMemory, host: &mut dyn HostServices) -> Result<usize, RpcError> {
        if !self.initialized {
            self.load_outboxes(mem)?;
        }
        let inbox_addr = self.g.base + self.g.layout.client_outbox_offset();
        mem.read(inbox_addr, &mut self.inbox)?;
        let mut cx = Ctx { g: self.g, mem, host, limit: self.limit };
        let mut served = 0;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let index = PortIndex(i as u32);
            let seen = word(&self.inbox, i);
            let result = serve(slot, index, seen, &mut cx);
            match result {
                Ok(true) => served += 1,
                Ok(false) => {}
                Err(e) => {
                    if !matches!(e, RpcError::UnhandledOpcode { .. }) {
                        *slot = Slot::Failed;
                    }
                    return Err(e);
                }
            }
        }
        Ok(served)
    }

    fn load_outboxes(&mut self, mem: &dyn RpcMemory) -> Result<(), RpcError> {
        let mut outboxes = vec![0; self.slots.len() * 4];
        mem.read(self.g.base + self.g.layout.client_inbox_offset(), &mut outboxes)?;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            *slot = Slot::Idle { out: word(&outboxes, i) };
        }
        self.initialized = true;
        Ok(())
    }
}

fn word(bytes: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])
}

/// Serves one port; `Ok(true)` if it made progress.
fn serve(slot: &mut Slot, index: PortIndex, seen_inbox: u32, cx: &mut Ctx<'_>) -> Result<bool, RpcError> {
    match slot {
        Slot::Failed => Ok(false),
        Slot::Idle { out } => {
            // The bulk read is only a hint; confirm with an acquire load
            // before touching the header.
            if seen_inbox == *out {
                return Ok(false);
            }
            let inbox = cx.mem.load_u32_acquire(cx.g.server_inbox(index))?;
            if inbox == *out {
                return Ok(false);
            }
            let mut header = [0u8; 16];
            cx.mem.read(cx.g.header(index), &mut header)?;
            let mask = u64::from_le_bytes([
                header[0], header[1], header[2], header[3], header[4], header[5], header[6], header[7],
            ]);
            let opcode = Opcode(u32::from_le_bytes([header[8], header[9], header[10], header[11]]));
            let lane_bits = cx.g.layout.lanes();
            let mask = if lane_bits >= 64 { mask } else { mask & ((1u64 << lane_bits) - 1) };
            let mut link = Link::open(index, opcode, mask, *out);
            let Some(task) = Task::for_opcode(opcode, cx.g.layout.lanes()) else {
                // Like LLVM's server: hand the port back, report the opcode.
                link.close(&cx.g, cx.mem)?;
                *out = link.out;
                return Err(RpcError::UnhandledOpcode { port: index, opcode });
            };
            *slot = Slot::Busy { link, task };
            serve(slot, index, seen_inbox, cx).map(|_| true)
        }
        Slot::Busy { link, task } => {
            link.progressed = false;
            let progress = task.advance(link, cx)?;
            let progressed = link.progressed;
            if progress == Progress::Done {
                link.close(&cx.g, cx.mem)?;
                *slot = Slot::Idle { out: link.out };
            }
            Ok(progressed)
        }
    }
}
