//! Host side of LLVM libc's GPU RPC protocol: the server that answers a GPU
//! program's `printf`, `malloc`, `exit`, ... requests.
//!
//! A GPU program built by [`crate::host::cc`] carries a device runtime whose RPC
//! client is wire-compatible with LLVM libc's (`libc/shared/rpc.h`): a global
//! `__llvm_rpc_client` holds an `rpc::Client` (port count, pointers into one
//! shared buffer, lock bits). The loader allocates that buffer in GPU memory
//! ([`RpcLayout::allocation_size`] bytes, zero-filled), writes
//! [`RpcServer::client_image`] into the device symbol, and calls
//! [`RpcServer::poll`] while kernels run.
//!
//! ```text
//!  GPU memory (shared buffer, RpcLayout)          host
//!  +--------------------------------+
//!  | client inbox  = server outbox  | <-- store_u32_release --+
//!  | client outbox = server inbox   | --- load_u32_acquire -->|  RpcServer::poll
//!  | header[port] {mask, opcode}    | --- read ------------->|    per port: a resumable
//!  | packet[port][lane] 64 bytes    | <-- read / write ----->|    state machine per opcode
//!  +--------------------------------+                         +--> HostServices (stdout,
//!                                                                  stderr, exit, malloc ...)
//! ```
//!
//! Serving a program, with the shared buffer in host memory here (the GPU
//! model implements [`RpcMemory`] over its own memory instead):
//!
//! ```
//! use amdgpu::host::rpc::{GpuAddr, HostBuffer, HostError, HostServices, OutputStream, RpcLayout, RpcServer};
//!
//! struct Console;
//! impl HostServices for Console {
//!     fn write(&mut self, _: OutputStream, bytes: &[u8]) -> std::io::Result<()> {
//!         print!("{}", String::from_utf8_lossy(bytes));
//!         Ok(())
//!     }
//!     fn exit(&mut self, status: i32) { println!("exit {status}"); }
//!     fn abort(&mut self) { println!("abort"); }
//!     fn malloc(&mut self, _: u64) -> Result<GpuAddr, HostError> { Err(HostError("no heap".into())) }
//!     fn free(&mut self, _: GpuAddr) -> Result<(), HostError> { Ok(()) }
//! }
//!
//! let layout = RpcLayout::new(64, 16)?;
//! let buffer = HostBuffer::new(layout.allocation_size())?;
//! let mut server = RpcServer::new(layout, buffer.base());
//! let image = server.client_image(); // copy into `__llvm_rpc_client`
//! assert_eq!(image.len(), amdgpu::host::rpc::CLIENT_IMAGE_SIZE);
//! // While kernels run:
//! let served = server.poll(&buffer, &mut Console)?;
//! assert_eq!(served, 0); // no client has sent anything
//! # Ok::<(), amdgpu::host::rpc::RpcError>(())
//! ```
//!
//! **Architecture Invariant:** `poll` never blocks and never waits for the
//! GPU. Every multi-packet exchange (`recv_n`, printf's format / arguments /
//! strings rounds) is a per-port state machine that stops where the client has
//! not answered yet and resumes on the next poll, so the simulator can run the
//! GPU between polls on the same thread.
//!
//! **API Boundary:** the server touches GPU memory only through [`RpcMemory`]
//! and the outside world only through [`HostServices`]; it never reads memory
//! outside the shared buffer (strings and arguments travel inside packets).
//! Bad input from the GPU program (a bad pointer to `free`, an unknown stream,
//! a huge transfer, an unknown opcode) is an [`RpcError`], never a panic.

mod error;
mod host_buffer;
pub mod launch;
mod layout;
mod link;
mod opcode;
mod printf;
mod server;
mod services;
mod task;

pub use error::{RpcError, RpcStatus};
pub use host_buffer::HostBuffer;
pub use layout::{PortIndex, RpcLayout, CLIENT_IMAGE_SIZE, MAX_PORT_COUNT};
pub use opcode::Opcode;
pub use printf::format_packed as format_printf_packed;
pub use printf::{PrintfError, MAX_FIELD as PRINTF_MAX_FIELD, MAX_OUTPUT as PRINTF_MAX_OUTPUT};
pub use server::RpcServer;
pub use services::{GpuAddr, HostError, HostServices, OutputStream, RpcMemory};
