//! Where everything lives in the shared RPC buffer, and the bytes of the
//! device's `rpc::Client`.

use std::fmt;

use super::error::RpcError;

/// Most ports LLVM's protocol supports (`rpc::MAX_PORT_COUNT`); the client's
/// lock bits are sized for it.
pub const MAX_PORT_COUNT: u32 = 4096;

/// `sizeof(rpc::Client)` on a 64-bit device: port count (padded to 8),
/// four pointers, 128 lock words.
pub const CLIENT_IMAGE_SIZE: usize = 8 + 4 * 8 + (MAX_PORT_COUNT as usize / 32) * 4;

/// Bytes of one lane's packet (`rpc::Buffer`, eight u64).
pub(crate) const PACKET_BYTES: u64 = 64;
/// Bytes of one port's header (`rpc::Header`: u64 mask, u32 opcode, padding).
pub(crate) const HEADER_BYTES: u64 = 16;

/// Index of a port in the shared buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct PortIndex(pub u32);

impl fmt::Display for PortIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Geometry of a shared buffer: lanes per port and number of ports.
///
/// Layout, in order (offsets from the buffer start, as in LLVM's
/// `Process::allocation_size`): client inbox `u32[ports]` (the server's
/// outbox), client outbox `u32[ports]` (the server's inbox), `Header[ports]`
/// aligned to 8, then `Buffer[ports][lanes]` aligned to 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RpcLayout {
    lanes: u32,
    ports: u32,
}

fn align8(x: u64) -> u64 {
    x.next_multiple_of(8)
}

impl RpcLayout {
    /// A layout for `lanes` lanes per port (1 for a host client, 32 or 64 for
    /// a wavefront) and `ports` ports (1..=4096).
    pub fn new(lanes: u32, ports: u32) -> Result<RpcLayout, RpcError> {
        if !matches!(lanes, 1 | 32 | 64) || ports == 0 || ports > MAX_PORT_COUNT {
            return Err(RpcError::InvalidLayout { lanes, ports });
        }
        Ok(RpcLayout { lanes, ports })
    }

    /// Lanes per port.
    pub fn lanes(&self) -> u32 {
        self.lanes
    }

    /// Number of ports.
    pub fn ports(&self) -> u32 {
        self.ports
    }

    fn mailbox_bytes(&self) -> u64 {
        u64::from(self.ports) * 4
    }

    /// Offset of the client's inbox (the mailbox the server writes).
    pub fn client_inbox_offset(&self) -> u64 {
        0
    }

    /// Offset of the client's outbox (the mailbox the server reads).
    pub fn client_outbox_offset(&self) -> u64 {
        self.mailbox_bytes()
    }

    /// Offset of the port headers.
    pub fn header_offset(&self) -> u64 {
        align8(2 * self.mailbox_bytes())
    }

    /// Offset of the packets.
    pub fn packet_offset(&self) -> u64 {
        align8(self.header_offset() + u64::from(self.ports) * HEADER_BYTES)
    }

    /// Bytes of one port's packets (one per lane).
    pub fn port_packet_bytes(&self) -> u64 {
        u64::from(self.lanes) * PACKET_BYTES
    }

    /// Total bytes of the shared buffer (LLVM's `Server::allocation_size`).
    pub fn allocation_size(&self) -> u64 {
        self.packet_offset() + u64::from(self.ports) * self.port_packet_bytes()
    }

    /// The bytes of an `rpc::Client` over a buffer at `buffer_addr`, ready to
    /// copy into the device symbol `__llvm_rpc_client` (little-endian, 64-bit
    /// pointers, all lock bits clear).
    pub fn client_image(&self, buffer_addr: u64) -> Vec<u8> {
        let mut image = Vec::with_capacity(CLIENT_IMAGE_SIZE);
        image.extend_from_slice(&self.ports.to_le_bytes());
        image.extend_from_slice(&[0; 4]);
        for offset in [
            self.client_inbox_offset(),
            self.client_outbox_offset(),
            self.header_offset(),
            self.packet_offset(),
        ] {
            image.extend_from_slice(&(buffer_addr + offset).to_le_bytes());
        }
        image.resize(CLIENT_IMAGE_SIZE, 0);
        image
    }
}
