//! What a loader needs to start a `main()`-style program built by
//! [`crate::host::cc`]: the kernel names, the argv/envp block, and the explicit
//! kernel arguments of each entry kernel.
//!
//! Launch protocol (the same as LLVM's GPU loader):
//! 1. Allocate the shared RPC buffer ([`super::RpcLayout::allocation_size`],
//!    zero-filled) and write [`super::RpcServer::client_image`] into the
//!    symbol [`CLIENT_SYMBOL`].
//! 2. Write an [`ArgBlock`] and a zeroed 4-byte `ret` word to GPU memory.
//! 3. Launch [`BEGIN_KERNEL`]`(argc, argv, envp)` on one thread, wait.
//! 4. Launch [`START_KERNEL`]`(argc, argv, envp, ret)` on the user's grid,
//!    wait. Every thread runs `main`; each ORs its return value into `ret`.
//! 5. Launch [`END_KERNEL`]`(ret)` on one thread: it runs the `atexit`
//!    handlers and sends EXIT with `*ret`.
//!
//! Poll [`super::RpcServer::poll`] while any kernel runs. The program's exit
//! status is the first [`super::HostServices::exit`] call (from `_end`, or
//! from a thread that called `exit()` itself, which ends its wave at once);
//! stop launching kernels after it. `abort()` arrives as
//! [`super::HostServices::abort`].

/// The symbol that receives the client image.
pub const CLIENT_SYMBOL: &str = "__llvm_rpc_client";
/// `_begin(int argc, char **argv, char **envp)`: one thread, before `_start`.
pub const BEGIN_KERNEL: &str = "_begin";
/// `_start(int argc, char **argv, char **envp, int *ret)`: the user's grid.
pub const START_KERNEL: &str = "_start";
/// `_end(int *ret)`: one thread, after `_start`; sends EXIT.
pub const END_KERNEL: &str = "_end";

/// argv and envp laid out for GPU memory at a chosen address: a
/// NULL-terminated `char *argv[]`, a NULL-terminated `char *envp[]`, then the
/// NUL-terminated strings, all in one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgBlock {
    /// The bytes to copy to the block's address.
    pub bytes: Vec<u8>,
    /// `argc`.
    pub argc: u32,
    /// Device address of `argv[0]`'s slot.
    pub argv: u64,
    /// Device address of `envp[0]`'s slot.
    pub envp: u64,
}

impl ArgBlock {
    /// Lays out `args` and `env` (each entry `NAME=value` for env) for a
    /// block at device address `base` (8-byte aligned).
    pub fn new<A: AsRef<[u8]>, E: AsRef<[u8]>>(base: u64, args: &[A], env: &[E]) -> ArgBlock {
        let pointer_bytes = 8 * (args.len() + 1 + env.len() + 1) as u64;
        let mut strings = Vec::new();
        let mut pointers = Vec::with_capacity(args.len() + env.len() + 2);
        for list in [args.iter().map(AsRef::as_ref).collect::<Vec<_>>(), env.iter().map(AsRef::as_ref).collect()] {
            for s in list {
                pointers.push(base + pointer_bytes + strings.len() as u64);
                strings.extend_from_slice(s);
                strings.push(0);
            }
            pointers.push(0);
        }
        let mut bytes: Vec<u8> = pointers.iter().flat_map(|p| p.to_le_bytes()).collect();
        bytes.extend_from_slice(&strings);
        ArgBlock {
            bytes,
            argc: args.len() as u32,
            argv: base,
            envp: base + 8 * (args.len() as u64 + 1),
        }
    }

    /// Explicit kernel arguments of `_begin`: `argc` (4 bytes, padded to 8),
    /// `argv`, `envp`.
    pub fn begin_kernargs(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(24);
        k.extend_from_slice(&self.argc.to_le_bytes());
        k.extend_from_slice(&[0; 4]);
        k.extend_from_slice(&self.argv.to_le_bytes());
        k.extend_from_slice(&self.envp.to_le_bytes());
        k
    }

    /// Explicit kernel arguments of `_start`: those of `_begin`, then the
    /// device address of the 4-byte `ret` word.
    pub fn start_kernargs(&self, ret: u64) -> Vec<u8> {
        let mut k = self.begin_kernargs();
        k.extend_from_slice(&ret.to_le_bytes());
        k
    }
}

/// Explicit kernel arguments of `_end`: the address of `ret`.
pub fn end_kernargs(ret: u64) -> Vec<u8> {
    ret.to_le_bytes().to_vec()
}
