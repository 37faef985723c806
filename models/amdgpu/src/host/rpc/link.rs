//! The server's half of one opened port: LLVM's `Port<true>` send / recv
//! rules, made non-blocking. Each operation either completes or reports that
//! the client still owns the packets, and can be retried on the next poll.

use super::error::RpcError;
use super::layout::{PortIndex, RpcLayout, PACKET_BYTES};
use super::opcode::Opcode;
use super::services::RpcMemory;

/// Where the shared buffer is and how it is laid out.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Geometry {
    pub layout: RpcLayout,
    pub base: u64,
}

impl Geometry {
    /// Address of the server's outbox word for a port (the client's inbox).
    pub fn server_outbox(&self, port: PortIndex) -> u64 {
        self.base + self.layout.client_inbox_offset() + 4 * u64::from(port.0)
    }

    /// Address of the server's inbox word for a port (the client's outbox).
    pub fn server_inbox(&self, port: PortIndex) -> u64 {
        self.base + self.layout.client_outbox_offset() + 4 * u64::from(port.0)
    }

    pub fn header(&self, port: PortIndex) -> u64 {
        self.base + self.layout.header_offset() + 16 * u64::from(port.0)
    }

    pub fn packets(&self, port: PortIndex) -> u64 {
        self.base + self.layout.packet_offset() + self.layout.port_packet_bytes() * u64::from(port.0)
    }
}

/// One port's packets, one 64-byte slot per lane.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Packets {
    bytes: Vec<u8>,
}

impl Packets {
    pub fn zeroed(lanes: u32) -> Packets {
        Packets {
            bytes: vec![0; lanes as usize * PACKET_BYTES as usize],
        }
    }

    /// The 64 bytes of a lane.
    pub fn lane(&self, lane: u32) -> &[u8] {
        let start = lane as usize * PACKET_BYTES as usize;
        &self.bytes[start..start + PACKET_BYTES as usize]
    }

    /// Word `i` (0..8) of a lane's packet.
    pub fn word(&self, lane: u32, i: usize) -> u64 {
        let b = &self.lane(lane)[i * 8..i * 8 + 8];
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    pub fn set_word(&mut self, lane: u32, i: usize, value: u64) {
        let start = lane as usize * PACKET_BYTES as usize + i * 8;
        self.bytes[start..start + 8].copy_from_slice(&value.to_le_bytes());
    }
}

/// The state LLVM keeps in a server `Port`: our outbox value, whether we own
/// the packets, whether the last operation was a receive.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Link {
    pub index: PortIndex,
    pub opcode: Opcode,
    /// Lanes of the client that opened the port (header mask, clipped to the
    /// layout's lanes).
    pub mask: u64,
    pub out: u32,
    owns: bool,
    receive: bool,
    /// Set whenever a send or receive completes.
    pub progressed: bool,
}

impl Link {
    /// A freshly opened port: the server owns the packets (the client has
    /// flipped its outbox), nothing was received yet.
    pub fn open(index: PortIndex, opcode: Opcode, mask: u64, out: u32) -> Link {
        Link {
            index,
            opcode,
            mask,
            out,
            owns: true,
            receive: false,
            progressed: false,
        }
    }

    /// Lanes the client opened the port with.
    pub fn lanes(&self, layout: &RpcLayout) -> impl Iterator<Item = u32> + '_ {
        let mask = self.mask;
        (0..layout.lanes()).filter(move |lane| (mask >> lane) & 1 == 1)
    }

    /// Adds the port and opcode to a memory error.
    pub fn mem_err(&self, source: RpcError) -> RpcError {
        RpcError::PortMemory {
            port: self.index,
            opcode: self.opcode,
            source: Box::new(source),
        }
    }

    fn flip(&mut self, g: &Geometry, mem: &dyn RpcMemory) -> Result<(), RpcError> {
        let flipped = u32::from(self.out == 0);
        mem.store_u32_release(g.server_outbox(self.index), flipped)
            .map_err(|e| self.mem_err(e))?;
        self.out = flipped;
        self.owns = false;
        Ok(())
    }

    /// Whether the server owns the packets now (the client's outbox differs
    /// from ours), loading the mailbox with acquire ordering if needed.
    fn owned(&mut self, g: &Geometry, mem: &dyn RpcMemory) -> Result<bool, RpcError> {
        if !self.owns {
            let inbox = mem
                .load_u32_acquire(g.server_inbox(self.index))
                .map_err(|e| self.mem_err(e))?;
            self.owns = inbox != self.out;
        }
        Ok(self.owns)
    }

    /// Receives the client's packets, acknowledging a previous receive first.
    /// `None` while the client has not sent yet.
    pub fn try_recv(&mut self, g: &Geometry, mem: &dyn RpcMemory) -> Result<Option<Packets>, RpcError> {
        if self.receive {
            self.flip(g, mem)?;
            self.receive = false;
        }
        if !self.owned(g, mem)? {
            return Ok(None);
        }
        let mut packets = Packets::zeroed(g.layout.lanes());
        mem.read(g.packets(self.index), &mut packets.bytes)
            .map_err(|e| self.mem_err(e))?;
        self.receive = true;
        self.progressed = true;
        Ok(Some(packets))
    }

    /// Sends packets to the client. `false` while the client still owns them.
    pub fn try_send(&mut self, g: &Geometry, mem: &dyn RpcMemory, packets: &Packets) -> Result<bool, RpcError> {
        if !self.owned(g, mem)? {
            return Ok(false);
        }
        mem.write(g.packets(self.index), &packets.bytes)
            .map_err(|e| self.mem_err(e))?;
        self.flip(g, mem)?;
        self.receive = false;
        self.progressed = true;
        Ok(true)
    }

    /// Gives the packets back to the client if the server still holds them.
    pub fn close(&mut self, g: &Geometry, mem: &dyn RpcMemory) -> Result<(), RpcError> {
        if self.owns {
            self.flip(g, mem)?;
        }
        Ok(())
    }
}

/// A resumable `recv_n`: each lane streams a byte string whose size rides in
/// the first packet (8-byte size, 56 bytes of data; then 64 bytes a packet).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct RecvN {
    started: bool,
    idx: u64,
    pub sizes: Vec<u64>,
    pub data: Vec<Vec<u8>>,
}

const FIRST_CHUNK: u64 = PACKET_BYTES - 8;

impl RecvN {
    pub fn new(lanes: u32) -> RecvN {
        RecvN {
            started: false,
            idx: 0,
            sizes: vec![0; lanes as usize],
            data: vec![Vec::new(); lanes as usize],
        }
    }

    /// Receives as many packets as the client has sent; `true` when every
    /// lane's string is complete. Sizes above `limit` are rejected before
    /// anything is allocated.
    pub fn advance(&mut self, link: &mut Link, g: &Geometry, mem: &dyn RpcMemory, limit: u64) -> Result<bool, RpcError> {
        loop {
            if !self.started {
                let Some(packets) = link.try_recv(g, mem)? else {
                    return Ok(false);
                };
                for lane in link.lanes(&g.layout) {
                    let size = packets.word(lane, 0);
                    if size > limit {
                        return Err(RpcError::TransferTooLarge {
                            port: link.index,
                            opcode: link.opcode,
                            lane,
                            size,
                            limit,
                        });
                    }
                    let n = size.min(FIRST_CHUNK) as usize;
                    let slot = &mut self.data[lane as usize];
                    slot.reserve_exact(size as usize);
                    slot.extend_from_slice(&packets.lane(lane)[8..8 + n]);
                    self.sizes[lane as usize] = size;
                }
                self.started = true;
                self.idx = FIRST_CHUNK;
            } else if link.lanes(&g.layout).any(|lane| self.idx < self.sizes[lane as usize]) {
                let Some(packets) = link.try_recv(g, mem)? else {
                    return Ok(false);
                };
                for lane in link.lanes(&g.layout) {
                    let size = self.sizes[lane as usize];
                    if self.idx < size {
                        let n = (size - self.idx).min(PACKET_BYTES) as usize;
                        self.data[lane as usize].extend_from_slice(&packets.lane(lane)[..n]);
                    }
                }
                self.idx += PACKET_BYTES;
            } else {
                return Ok(true);
            }
        }
    }
}
