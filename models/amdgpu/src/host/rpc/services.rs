//! The two traits through which the server reaches the world: GPU memory
//! ([`RpcMemory`], implemented by the GPU model) and host side effects
//! ([`HostServices`], implemented by the loader).


use super::error::RpcError;

pub use crate::gpu::ids::GpuAddr;

/// GPU memory as the server sees it. The shared buffer must be coherent
/// with what the GPU's waves see at the system scope.
pub trait RpcMemory {
    /// Reads `buf.len()` bytes at `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), RpcError>;
    /// Writes `data` at `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), RpcError>;
    /// Loads a mailbox word with acquire ordering: later reads see what the
    /// GPU wrote before it released that value.
    fn load_u32_acquire(&self, addr: u64) -> Result<u32, RpcError>;
    /// Stores a mailbox word with release ordering: the GPU sees every
    /// earlier write once it sees this value.
    fn store_u32_release(&self, addr: u64, v: u32) -> Result<(), RpcError>;
}

/// A host output stream a GPU program can write to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl OutputStream {
    /// Decodes a device `FILE *` the way LLVM's server does (`to_stream`):
    /// 2 is stdout, 3 is stderr. The device runtime has no other streams.
    pub fn from_device(value: u64) -> Option<OutputStream> {
        match value {
            2 => Some(OutputStream::Stdout),
            3 => Some(OutputStream::Stderr),
            _ => None,
        }
    }
}

/// Why the host refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HostError(pub String);

/// Host side effects of the RPC opcodes.
pub trait HostServices {
    /// Writes bytes to a stream (WRITE_*, PRINTF_*). An error makes the
    /// device call report zero bytes written, as a failed `fwrite` would.
    fn write(&mut self, stream: OutputStream, bytes: &[u8]) -> std::io::Result<()>;
    /// The program called `exit(status)` (EXIT). The device side of the
    /// calling wave has ended; the loader should stop the program.
    fn exit(&mut self, status: i32);
    /// The program called `abort()` (ABORT).
    fn abort(&mut self);
    /// Allocates `size` bytes of device memory (MALLOC). An error makes the
    /// device `malloc` return NULL.
    fn malloc(&mut self, size: u64) -> Result<GpuAddr, HostError>;
    /// Frees what [`HostServices::malloc`] returned (FREE); never called with
    /// 0. An error is reported as [`RpcError::BadPointer`].
    fn free(&mut self, addr: GpuAddr) -> Result<(), HostError>;
}
