//! Opcodes of LLVM libc's RPC protocol (`libc/shared/rpc_opcodes.h`).

use std::fmt;

/// An RPC opcode: `('c' << 24) | n` for the libc opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Opcode(pub u32);

const fn libc(n: u32) -> Opcode {
    Opcode(((b'c' as u32) << 24) | n)
}

impl Opcode {
    /// Does nothing (one packet).
    pub const NOOP: Opcode = libc(0);
    /// Ends the program with a status.
    pub const EXIT: Opcode = libc(1);
    /// Writes bytes to stdout.
    pub const WRITE_TO_STDOUT: Opcode = libc(2);
    /// Writes bytes to stderr.
    pub const WRITE_TO_STDERR: Opcode = libc(3);
    /// Writes bytes to a stream named by the client.
    pub const WRITE_TO_STREAM: Opcode = libc(4);
    /// Writes bytes and a newline to stdout (`puts`).
    pub const WRITE_TO_STDOUT_NEWLINE: Opcode = libc(5);
    /// Allocates device memory.
    pub const MALLOC: Opcode = libc(10);
    /// Frees device memory.
    pub const FREE: Opcode = libc(11);
    /// Aborts the program.
    pub const ABORT: Opcode = libc(13);
    /// printf to stdout, naturally aligned arguments.
    pub const PRINTF_TO_STDOUT: Opcode = libc(21);
    /// printf to stderr, naturally aligned arguments.
    pub const PRINTF_TO_STDERR: Opcode = libc(22);
    /// printf to a stream, naturally aligned arguments.
    pub const PRINTF_TO_STREAM: Opcode = libc(23);
    /// printf to stdout, packed arguments (AMDGPU).
    pub const PRINTF_TO_STDOUT_PACKED: Opcode = libc(24);
    /// printf to stderr, packed arguments (AMDGPU).
    pub const PRINTF_TO_STDERR_PACKED: Opcode = libc(25);
    /// printf to a stream, packed arguments (AMDGPU).
    pub const PRINTF_TO_STREAM_PACKED: Opcode = libc(26);

    /// The libc opcode name without its prefix, if this is one this server knows.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Opcode::NOOP => "NOOP",
            Opcode::EXIT => "EXIT",
            Opcode::WRITE_TO_STDOUT => "WRITE_TO_STDOUT",
            Opcode::WRITE_TO_STDERR => "WRITE_TO_STDERR",
            Opcode::WRITE_TO_STREAM => "WRITE_TO_STREAM",
            Opcode::WRITE_TO_STDOUT_NEWLINE => "WRITE_TO_STDOUT_NEWLINE",
            Opcode::MALLOC => "MALLOC",
            Opcode::FREE => "FREE",
            Opcode::ABORT => "ABORT",
            Opcode::PRINTF_TO_STDOUT => "PRINTF_TO_STDOUT",
            Opcode::PRINTF_TO_STDERR => "PRINTF_TO_STDERR",
            Opcode::PRINTF_TO_STREAM => "PRINTF_TO_STREAM",
            Opcode::PRINTF_TO_STDOUT_PACKED => "PRINTF_TO_STDOUT_PACKED",
            Opcode::PRINTF_TO_STDERR_PACKED => "PRINTF_TO_STDERR_PACKED",
            Opcode::PRINTF_TO_STREAM_PACKED => "PRINTF_TO_STREAM_PACKED",
            _ => return None,
        })
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({:#010x})", self.0),
            None => write!(f, "{:#010x}", self.0),
        }
    }
}
