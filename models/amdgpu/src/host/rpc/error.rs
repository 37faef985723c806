//! Errors of the RPC server and the status codes of the protocol.

use super::layout::PortIndex;
use super::opcode::Opcode;

/// The generic status codes of LLVM's RPC server (`rpc::Status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum RpcStatus {
    /// The request was served.
    Success = 0,
    /// The request could not be served.
    Error = 0x1000,
    /// No handler knows the request's opcode.
    UnhandledOpcode = 0x1001,
}

/// What went wrong while serving RPC requests.
///
/// Every variant that comes from a request names the port and opcode. All of
/// them are fatal for the request's port: the server stops serving that port
/// (the GPU lanes using it would wait forever), so the loader should end the
/// run and report the error. Other ports keep being served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RpcError {
    /// The requested lane count or port count is not supported.
    #[error("invalid RPC layout: {lanes} lanes (1, 32 or 64) and {ports} ports (1..=4096)")]
    InvalidLayout {
        /// Requested lanes per port.
        lanes: u32,
        /// Requested port count.
        ports: u32,
    },
    /// GPU memory could not be read or written (reported by an [`RpcMemory`](super::RpcMemory)).
    #[error("GPU memory access of {len} bytes at {addr:#x} failed: {reason}")]
    Memory {
        /// First address of the access.
        addr: u64,
        /// Length of the access in bytes.
        len: u64,
        /// Why it failed.
        reason: String,
    },
    /// A memory access failed while serving a port.
    #[error("port {port}, opcode {opcode}: {source}")]
    PortMemory {
        /// The port being served.
        port: PortIndex,
        /// Its opcode.
        opcode: Opcode,
        /// The failed access ([`RpcError::Memory`]).
        source: Box<RpcError>,
    },
    /// The opcode has no handler; the port was handed back to the client.
    #[error("port {port}: unhandled RPC opcode {opcode} (status RPC_UNHANDLED_OPCODE)")]
    UnhandledOpcode {
        /// The port the request came on.
        port: PortIndex,
        /// The unknown opcode.
        opcode: Opcode,
    },
    /// A lane announced a transfer larger than the server accepts.
    #[error("port {port}, opcode {opcode}, lane {lane}: transfer of {size} bytes exceeds the limit of {limit}")]
    TransferTooLarge {
        /// The port.
        port: PortIndex,
        /// Its opcode.
        opcode: Opcode,
        /// The lane that sent the size.
        lane: u32,
        /// The announced size.
        size: u64,
        /// The server's limit.
        limit: u64,
    },
    /// A lane named a stream the server does not have.
    #[error("port {port}, opcode {opcode}, lane {lane}: unknown output stream {stream:#x}")]
    BadStream {
        /// The port.
        port: PortIndex,
        /// Its opcode.
        opcode: Opcode,
        /// The lane.
        lane: u32,
        /// The FILE pointer value the lane sent.
        stream: u64,
    },
    /// A lane passed a pointer the host rejected (e.g. `free` of an address
    /// that `malloc` never returned).
    #[error("port {port}, opcode {opcode}, lane {lane}: bad pointer {addr:#x}: {reason}")]
    BadPointer {
        /// The port.
        port: PortIndex,
        /// Its opcode.
        opcode: Opcode,
        /// The lane.
        lane: u32,
        /// The pointer.
        addr: u64,
        /// The host's reason.
        reason: String,
    },
    /// A lane's printf argument block did not have the size the server asked for.
    #[error("port {port}, opcode {opcode}, lane {lane}: printf arguments of {got} bytes, expected {expected}")]
    ArgumentSize {
        /// The port.
        port: PortIndex,
        /// Its opcode.
        opcode: Opcode,
        /// The lane.
        lane: u32,
        /// Bytes the server asked for.
        expected: u64,
        /// Bytes the lane sent.
        got: u64,
    },
}

impl RpcError {
    /// The protocol status this error corresponds to.
    pub fn status(&self) -> RpcStatus {
        match self {
            RpcError::UnhandledOpcode { .. } => RpcStatus::UnhandledOpcode,
            _ => RpcStatus::Error,
        }
    }
}
