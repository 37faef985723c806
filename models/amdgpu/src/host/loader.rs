//! The GPU program loader behind `dojo exec`: runs a `main()`-style GPU program (built
//! with the device runtime, see [`crate::host::cc`]) on a simulated GPU, the way LLVM's GPU
//! loader runs one on hardware.
//!
//! 1. Load the code object into GPU memory (relocated) and register its decoded program.
//! 2. Allocate the RPC buffer and write the host-built client into `__llvm_rpc_client`.
//! 3. Copy argv and envp (pointer arrays followed by the strings) into GPU memory.
//! 4. Write three kernel-dispatch packets with the barrier bit to a queue: `_begin` on
//!    one work-item, `_start` on the user's grid, `_end` on one work-item; the SoC
//!    reads the queue when its XCDs first report.
//! 5. Run the simulation; the SoC polls the RPC server at its `host_poll` interval, so
//!    host services happen at deterministic simulated times.
//! 6. The exit status is the one the program passed to `exit` (the EXIT opcode), else
//!    `_start`'s OR of every `main` return value.

use std::io::Write;
use std::sync::{Arc, Mutex};

use simdojo::engine::{Checkpoint, ExitStatus};

use amdgpu_isa::code_object::{CodeObject, Kernel};
use amdgpu_isa::exec::{kernarg_segment, DispatchConfig, Program};
use simdojo::engine::{ExitReason, SimConfig, Simulation};
use simdojo::ids::PartitionId;
use simdojo::resources::Resources;
use simdojo::time::Tick;
use simdojo::topology::Topology;

use crate::gpu::aql::{FenceScope, Header, KernelDispatch, PacketType, PACKET_BYTES};
use crate::gpu::ids::GpuAddr;
use crate::gpu::memory::GpuMemory;
use crate::host::rpc::{HostError, HostServices, OutputStream, RpcError, RpcLayout, RpcMemory, RpcServer};
use crate::gpu::shared::{GpuFault, GpuShared, QueueDesc};
use crate::gpu::shared::HostPoller;
use crate::gpu::stats::KernelStats;

/// What to run and how.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// The GPU.
    pub topology: Topology,
    /// Partition of each component (from the partitioner); `None`: one partition.
    pub assignment: Option<Vec<PartitionId>>,
    /// Worker threads (see `SimConfig::workers`); `None`: one per partition.
    pub workers: Option<usize>,
    /// Work-items per work-group of `_start`.
    pub threads: [u32; 3],
    /// Work-groups of `_start`.
    pub blocks: [u32; 3],
    /// argv (argv[0] is the image name).
    pub args: Vec<String>,
    /// envp entries `NAME=value`.
    pub env: Vec<String>,
    /// Simulated-time limit.
    pub max_ticks: Option<Tick>,
    /// Keep the program's output in [`ExecOutcome`] instead of writing it to this
    /// process's stdout and stderr.
    pub capture: bool,
    /// Most bytes the program may write to stdout and stderr together
    /// ([`DEFAULT_MAX_OUTPUT`] by default); more stops the run (see
    /// [`ExecOutcome::output_error`]).
    pub max_output: u64,
    /// Record what the engine did (`SimConfig::observe`: epochs, each worker's windows
    /// and barrier waits, per-component host time) into [`ExecOutcome::observation`].
    /// Changes no simulated result.
    pub observe: bool,
    /// A live progress line (simulated time, events/s) on standard error when it is a
    /// terminal (`SimConfig::progress`); nothing otherwise.
    pub progress: bool,
}

/// The default of [`ExecOptions::max_output`]: 1 GiB.
pub const DEFAULT_MAX_OUTPUT: u64 = 1 << 30;

/// Why the program's output stopped the run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The program wrote more than [`ExecOptions::max_output`] bytes.
    #[error("the GPU program wrote more than {limit} bytes of output (the limit of --max-output)")]
    Limit {
        /// The limit.
        limit: u64,
    },
    /// Writing to the process's stdout or stderr failed (a full disk, a closed pipe).
    #[error("writing the GPU program's output to {stream}: {message}")]
    Write {
        /// `standard output` or `standard error`.
        stream: &'static str,
        /// The kind of failure.
        kind: std::io::ErrorKind,
        /// The operating system's words for it.
        message: String,
    },
}

impl OutputError {
    /// Whether the reader of the output went away (a closed pipe): the caller should
    /// stop quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, OutputError::Write { kind: std::io::ErrorKind::BrokenPipe, .. })
    }
}

/// How the program ended.
#[derive(Clone, Debug)]
pub struct ExecOutcome {
    /// Exit status (the program's, or 1 after a fault or an unfinished run).
    pub status: i32,
    /// GPU faults, in order.
    pub faults: Vec<GpuFault>,
    /// Per-kernel statistics.
    pub kernels: Vec<KernelStats>,
    /// Simulated time at the end.
    pub end: Tick,
    /// Why the simulation stopped.
    pub reason: String,
    /// The status the program passed to `exit` (or `abort`), if it did.
    pub program_exit: Option<i32>,
    /// What the program wrote to stdout, with `capture`.
    pub stdout: Vec<u8>,
    /// What the program wrote to stderr, with `capture`.
    pub stderr: Vec<u8>,
    /// Wall-clock seconds of the simulation run itself (not building or loading).
    pub run_seconds: f64,
    /// Partitions (worker threads) at the end of the run.
    pub partitions: usize,
    /// The program's output stopped the run: too much of it, or it could not be
    /// written. The status is then 1.
    pub output_error: Option<OutputError>,
    /// Synchronization epochs.
    pub epochs: u64,
    /// Every component's statistics at the end (per level: hits, misses, MSHR merges and
    /// stalls, row hits, bytes, busy cycles, ...).
    pub components: simdojo::stats::StatsReport,
    /// What the engine did, with [`ExecOptions::observe`].
    pub observation: Option<simdojo::engine::Observation>,
}

/// The largest code object read from a file (`dojo exec`, `dojo disasm`, the VM): far
/// above any real one (a rocBLAS fat binary is a few hundred MiB), and a bound on what a
/// device such as `/dev/zero` can make the reader take.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

/// Reads a code object from `path`, at most [`MAX_IMAGE_BYTES`]. A file that does not
/// start with the ELF magic is returned as its first 64 bytes only (an ELF header's
/// worth: parsing them gives the usual "no ELF magic" error), so `/dev/zero` or a text
/// file costs nothing.
pub fn read_image(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    const MAGIC: &[u8; 4] = b"\x7fELF";
    const HEADER: u64 = 64;
    let mut head = Vec::with_capacity(HEADER as usize);
    std::fs::File::open(path)?.take(HEADER).read_to_end(&mut head)?;
    if !head.starts_with(MAGIC) {
        return Ok(head);
    }
    simdojo::fs::read_bounded(path, MAX_IMAGE_BYTES)
}

/// Most work-items in a work-group on every CDNA part.
pub const MAX_GROUP_ITEMS: u64 = 1024;

/// Why a launch shape (work-items per group, groups per grid) is out of the hardware's
/// range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchShapeError {
    /// A dimension of zero.
    #[error("sizes must be positive (work-items {threads:?}, work-groups {blocks:?})")]
    Zero {
        /// Work-items per work-group.
        threads: [u32; 3],
        /// Work-groups.
        blocks: [u32; 3],
    },
    /// More work-items in a work-group than the hardware runs.
    #[error("a work-group of {items} work-items; the hardware's limit is {MAX_GROUP_ITEMS}")]
    GroupTooLarge {
        /// Work-items in the group.
        items: u64,
    },
    /// A grid dimension the dispatch packet's 32-bit field cannot hold.
    #[error("{items} work-items in dimension {dim}; the dispatch packet's limit is {}", u32::MAX)]
    GridTooLarge {
        /// The dimension (0, 1 or 2).
        dim: usize,
        /// Work-items in it (work-items per group times groups).
        items: u64,
    },
}

/// Checks a work-group shape against [`MAX_GROUP_ITEMS`].
pub fn check_group(threads: [u32; 3]) -> Result<(), LaunchShapeError> {
    let items: u64 = threads.iter().map(|&d| u64::from(d)).product();
    if items > MAX_GROUP_ITEMS {
        return Err(LaunchShapeError::GroupTooLarge { items });
    }
    Ok(())
}

/// The grid (work-items per dimension) of `blocks` work-groups of `threads` work-items,
/// checked against the hardware's limits.
pub fn launch_grid(threads: [u32; 3], blocks: [u32; 3]) -> Result<[u32; 3], LaunchShapeError> {
    if threads.contains(&0) || blocks.contains(&0) {
        return Err(LaunchShapeError::Zero { threads, blocks });
    }
    check_group(threads)?;
    let mut grid = [0u32; 3];
    for (dim, g) in grid.iter_mut().enumerate() {
        let items = u64::from(threads[dim]) * u64::from(blocks[dim]);
        *g = u32::try_from(items).map_err(|_| LaunchShapeError::GridTooLarge { dim, items })?;
    }
    Ok(grid)
}

/// Why the program could not be run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The image is not a usable code object.
    #[error("{0}")]
    Image(String),
    /// The simulation could not be built.
    #[error("building the GPU: {0}")]
    Build(String),
    /// Loading into GPU memory failed.
    #[error("loading: {0}")]
    Load(String),
    /// A checkpoint could not be taken or restored.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// The launch shape is out of the hardware's range.
    #[error("launch: {0}")]
    Launch(#[from] LaunchShapeError),
}

/// Name of the GPU's shared state in the standard topologies.
pub const GPU: &str = "gpu";

/// RPC ports (LLVM's maximum).
const RPC_PORTS: u32 = 4096;

fn rpc_err(addr: u64, len: usize, e: amdgpu_isa::exec::MemFault) -> RpcError {
    RpcError::Memory { addr, len: len as u64, reason: e.to_string() }
}

impl RpcMemory for GpuMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), RpcError> {
        GpuMemory::read(self, GpuAddr(addr), buf).map_err(|e| rpc_err(addr, buf.len(), e))
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), RpcError> {
        GpuMemory::write(self, GpuAddr(addr), data).map_err(|e| rpc_err(addr, data.len(), e))
    }
    fn load_u32_acquire(&self, addr: u64) -> Result<u32, RpcError> {
        self.atomic_u32(GpuAddr(addr), amdgpu_isa::exec::AtomicOp::Or, 0, 0).map_err(|e| rpc_err(addr, 4, e))
    }
    fn store_u32_release(&self, addr: u64, v: u32) -> Result<(), RpcError> {
        self.atomic_u32(GpuAddr(addr), amdgpu_isa::exec::AtomicOp::Swap, v, 0).map(|_| ()).map_err(|e| rpc_err(addr, 4, e))
    }
}

/// Host side effects of `dojo exec`: the process's stdout/stderr and GPU memory.
struct Services {
    /// Weak: the shared state owns the poller that owns these services.
    shared: std::sync::Weak<GpuShared>,
    exit: Option<i32>,
    /// Where `_start` ORs main's status, and the last packet's completion signal.
    ret: GpuAddr,
    signal: GpuAddr,
    /// Captured (stdout, stderr), when capturing.
    captured: Option<(Vec<u8>, Vec<u8>)>,
    /// Bytes written so far, and the most allowed.
    written: u64,
    max_output: u64,
    /// What stopped the output (and so the run), if anything did.
    output_error: Option<OutputError>,
}

impl HostServices for Services {
    fn write(&mut self, stream: OutputStream, bytes: &[u8]) -> std::io::Result<()> {
        if self.output_error.is_some() {
            return Err(std::io::Error::other("the GPU program's output was stopped"));
        }
        let written = self.written.saturating_add(bytes.len() as u64);
        if written > self.max_output {
            self.output_error = Some(OutputError::Limit { limit: self.max_output });
            return Err(std::io::Error::other("output limit reached"));
        }
        self.written = written;
        let result = self.emit(stream, bytes);
        if let Err(e) = &result {
            let name = match stream {
                OutputStream::Stdout => "standard output",
                OutputStream::Stderr => "standard error",
            };
            self.output_error = Some(OutputError::Write { stream: name, kind: e.kind(), message: e.to_string() });
        }
        result
    }
    fn exit(&mut self, status: i32) {
        self.exit.get_or_insert(status);
    }
    fn abort(&mut self) {
        self.exit.get_or_insert(134);
    }
    fn malloc(&mut self, size: u64) -> Result<GpuAddr, HostError> {
        let shared = self.shared.upgrade().ok_or_else(|| HostError("the GPU is gone".into()))?;
        let mem = shared.memory().ok_or_else(|| HostError("the GPU has no memory".into()))?;
        mem.alloc(size.max(1), 256).map_err(|e| HostError(e.to_string()))
    }
    fn free(&mut self, addr: GpuAddr) -> Result<(), HostError> {
        let shared = self.shared.upgrade().ok_or_else(|| HostError("the GPU is gone".into()))?;
        let mem = shared.memory().ok_or_else(|| HostError("the GPU has no memory".into()))?;
        mem.free(addr).map_err(|e| HostError(e.to_string()))
    }
}

impl Services {
    /// Writes to the captured buffers or this process's stream.
    fn emit(&mut self, stream: OutputStream, bytes: &[u8]) -> std::io::Result<()> {
        if let Some((out, err)) = &mut self.captured {
            match stream {
                OutputStream::Stdout => out.extend_from_slice(bytes),
                OutputStream::Stderr => err.extend_from_slice(bytes),
            }
            return Ok(());
        }
        match stream {
            OutputStream::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            OutputStream::Stderr => std::io::stderr().lock().write_all(bytes),
        }
    }
}

/// What a checkpoint keeps of the host side: the server's per-port state, the program's
/// exit status and the loader's `ret` and completion-signal addresses.
type PollerSnapshot = (RpcServer, Option<i32>, GpuAddr, GpuAddr);

/// The RPC server as the SoC's host poller.
struct RpcPoller {
    inner: Mutex<(RpcServer, Services)>,
}


impl HostPoller for RpcPoller {
    fn poll(&self) -> Result<(), String> {
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (server, services) = &mut *guard;
        let Some(memory) = services.shared.upgrade().and_then(|s| s.memory().cloned()) else { return Ok(()) };
        server.poll(&*memory, services).map(|_| ()).map_err(|e| e.to_string())
    }
    fn exit_requested(&self) -> Option<i32> {
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Output that cannot go anywhere stops the program as `exit(1)` would.
        guard.1.exit.or(guard.1.output_error.as_ref().map(|_| 1))
    }
    fn save(&self) -> Option<Vec<u8>> {
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // The host side a checkpoint keeps: the server's per-port state, the program's
        // exit status and the loader's addresses (output already written stays written).
        postcard::to_allocvec(&(&guard.0, guard.1.exit, guard.1.ret, guard.1.signal)).ok()
    }
    fn restore(&self, bytes: &[u8]) -> Result<(), String> {
        let (server, exit, ret, signal): PollerSnapshot =
            postcard::from_bytes(bytes).map_err(|e| format!("RPC server state: {e}"))?;
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        guard.0 = server;
        guard.1.exit = exit;
        guard.1.ret = ret;
        guard.1.signal = signal;
        Ok(())
    }
}

impl RpcPoller {
    fn new(shared: Arc<GpuShared>, opts: &ExecOptions) -> Result<RpcPoller, ExecError> {
        let layout = RpcLayout::new(64, RPC_PORTS).map_err(|e| ExecError::Load(e.to_string()))?;
        let services = Services {
            shared: Arc::downgrade(&shared),
            exit: None,
            ret: GpuAddr(0),
            signal: GpuAddr(0),
            captured: opts.capture.then(Default::default),
            written: 0,
            max_output: opts.max_output,
            output_error: None,
        };
        Ok(RpcPoller { inner: Mutex::new((RpcServer::new(layout, 0), services)) })
    }
}

impl RpcPoller {
    fn take_output(&self) -> (Vec<u8>, Vec<u8>) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).1.captured.take().unwrap_or_default()
    }
}

fn load_err(e: impl std::fmt::Display) -> ExecError {
    ExecError::Load(e.to_string())
}

/// Writes `strings` as a NULL-terminated pointer array followed by the packed strings;
/// returns the array's address.
fn write_strings(mem: &GpuMemory, strings: &[String]) -> Result<GpuAddr, ExecError> {
    let table = 8 * (strings.len() as u64 + 1);
    let total = table + strings.iter().map(|s| s.len() as u64 + 1).sum::<u64>();
    let base = mem.alloc(total, 0).map_err(load_err)?;
    let mut at = base.0 + table;
    for (i, s) in strings.iter().enumerate() {
        mem.write_u64(GpuAddr(base.0 + 8 * i as u64), at).map_err(load_err)?;
        let mut bytes = s.as_bytes().to_vec();
        bytes.push(0);
        mem.write(GpuAddr(at), &bytes).map_err(load_err)?;
        at += bytes.len() as u64;
    }
    Ok(base)
}

fn kernel<'a>(code: &'a CodeObject, name: &str) -> Result<&'a Kernel, ExecError> {
    code.kernel(name).ok_or_else(|| ExecError::Image(format!("the image has no `{name}` kernel: build it with `dojo cc`")))
}

/// A GPU program loaded on a built simulation, ready to run, step or checkpoint.
pub struct Prepared {
    sim: Simulation,
    shared: Arc<GpuShared>,
    poller: Arc<RpcPoller>,
    /// GPU address of each named symbol of the loaded image (empty after a restore).
    symbols: std::collections::HashMap<String, GpuAddr>,
}

fn shared_and_poller(opts: &ExecOptions) -> Result<(Resources, Arc<GpuShared>, Arc<RpcPoller>), ExecError> {
    let resources = Resources::new();
    let shared = resources.get_or_insert_with(GPU, GpuShared::default);
    let poller = Arc::new(RpcPoller::new(shared.clone(), opts)?);
    shared.set_poller(poller.clone());
    Ok((resources, shared, poller))
}

/// Builds the GPU and loads `image` on it: code object, RPC buffer and client, argv and
/// envp, the three dispatch packets and the doorbell. See the [module docs](self).
pub fn prepare(image: &[u8], opts: &ExecOptions) -> Result<Prepared, ExecError> {
    launch_grid(opts.threads, opts.blocks)?;
    let code = CodeObject::parse(image).map_err(|e| ExecError::Image(e.to_string()))?;
    let (resources, shared, poller) = shared_and_poller(opts)?;
    let config = sim_config(opts, resources);
    let sim = Simulation::build(&opts.topology, &config).map_err(|e| ExecError::Build(e.to_string()))?;
    let mem = shared.memory().cloned().ok_or_else(|| ExecError::Build(format!("the topology has no `amdgpu.soc` named `{GPU}`")))?;
    let image_target = amdgpu_isa::exec::program::isa_target(&code).map_err(|e| ExecError::Image(e.to_string()))?;
    if let Some(t) = shared.target() {
        if t != image_target {
            return Err(ExecError::Image(format!("the image is for {image_target}, the GPU is {t}")));
        }
    }

    // 1. The code object.
    let size = code.flat_image().map_err(|e| ExecError::Image(e.to_string()))?.len() as u64;
    let base = mem.alloc(size, 1 << 16).map_err(load_err)?;
    let bytes = code.load_image(base.0).map_err(|e| ExecError::Image(e.to_string()))?;
    mem.write(base, &bytes).map_err(load_err)?;
    let program = Program::new(&code, base.0).map_err(|e| ExecError::Image(e.to_string()))?;
    let text = program.text_start();
    shared.add_program(text, text + 4 * program.len() as u64, Arc::new(program));
    for k in code.kernels() {
        shared.name_kernel(GpuAddr(base.0 + k.descriptor_address.0), &k.name);
    }

    // 2. RPC.
    let layout = RpcLayout::new(64, RPC_PORTS).map_err(|e| ExecError::Load(e.to_string()))?;
    let buffer = mem.alloc_kind(layout.allocation_size(), 0, crate::gpu::memory::MemKind::Fine).map_err(load_err)?;
    let server = RpcServer::new(layout, buffer.0);
    if let Some(sym) = code.symbol("__llvm_rpc_client") {
        let client = server.client_image();
        mem.write(GpuAddr(base.0 + sym.value.0), &client).map_err(load_err)?;
    }
    let signal = mem.alloc(crate::gpu::aql::signal::BYTES, 0).map_err(load_err)?;
    mem.write_u64(GpuAddr(signal.0 + crate::gpu::aql::signal::VALUE), 1).map_err(load_err)?;
    let ret = mem.alloc(8, 0).map_err(load_err)?;
    {
        let mut guard = poller.inner.lock().unwrap_or_else(|e| e.into_inner());
        guard.0 = server;
        guard.1.ret = ret;
        guard.1.signal = signal;
    }

    // 3. Arguments.
    let argv = write_strings(&mem, &opts.args)?;
    let envp = write_strings(&mem, &opts.env)?;
    let argc = opts.args.len() as u32;

    // 4. Queue and packets.
    let packets = 16u64;
    let ring = mem.alloc(packets * PACKET_BYTES, 0).map_err(load_err)?;
    let indices = mem.alloc(256 + 16, 0).map_err(load_err)?;
    shared.add_queue(QueueDesc {
        ring,
        packets,
        read_index: GpuAddr(indices.0 + 256),
        write_index: GpuAddr(indices.0 + 264),
        queue_object: indices,
    });
    let mut args_start = Vec::new();
    args_start.extend_from_slice(&argc.to_le_bytes());
    args_start.extend_from_slice(&[0; 4]);
    args_start.extend_from_slice(&argv.0.to_le_bytes());
    args_start.extend_from_slice(&envp.0.to_le_bytes());
    args_start.extend_from_slice(&ret.0.to_le_bytes());
    // (kernel, work-group size, work-groups, explicit arguments).
    type Launch<'a> = (&'a str, [u32; 3], [u32; 3], Vec<u8>);
    let launches: [Launch<'_>; 3] = [
        ("_begin", [1, 1, 1], [1, 1, 1], args_start[..24].to_vec()),
        ("_start", opts.threads, opts.blocks, args_start.clone()),
        ("_end", [1, 1, 1], [1, 1, 1], ret.0.to_le_bytes().to_vec()),
    ];
    for (i, (name, threads, blocks, explicit)) in launches.iter().enumerate() {
        let k = kernel(&code, name)?;
        let grid = launch_grid(*threads, *blocks)?;
        let config = DispatchConfig::new(grid, *threads);
        let seg = kernarg_segment(k, &config, explicit);
        let kernarg = mem.alloc(seg.len() as u64, 0).map_err(load_err)?;
        mem.write(kernarg, &seg).map_err(load_err)?;
        let dims = if grid[2] > 1 { 3 } else if grid[1] > 1 { 2 } else { 1 };
        let d = KernelDispatch {
            header: Header { kind: PacketType::KernelDispatch, barrier: true, acquire: FenceScope::System, release: FenceScope::System },
            dimensions: dims,
            block: *threads,
            grid,
            private_segment_size: k.descriptor.private_segment_fixed_size,
            group_segment_size: k.descriptor.group_segment_fixed_size,
            kernel_object: GpuAddr(base.0 + k.descriptor_address.0),
            kernarg_address: kernarg,
            completion_signal: if i == 2 { signal } else { GpuAddr(0) },
        };
        mem.write(GpuAddr(ring.0 + i as u64 * PACKET_BYTES), &d.encode()).map_err(load_err)?;
    }
    mem.write_u64(GpuAddr(indices.0 + 264), launches.len() as u64).map_err(load_err)?;

    // No doorbell: the SoC processes every queue when its XCDs first report (a
    // simulated-time event), while an external doorbell would enter at whatever epoch
    // the worker threads had reached, and results would depend on their timing.
    let symbols = code
        .symbols()
        .iter()
        .filter(|s| !s.name.is_empty())
        .map(|s| (s.name.clone(), GpuAddr(base.0 + s.value.0)))
        .collect();
    Ok(Prepared { sim, shared, poller, symbols })
}

impl Prepared {
    /// Runs until simulated time `t` (or the program's end, whichever comes first).
    pub fn run_until(&mut self, t: Tick) -> ExitStatus {
        self.sim.run_until(t)
    }

    /// Takes what the program wrote so far (with `capture`): (stdout, stderr).
    pub fn take_output(&self) -> (Vec<u8>, Vec<u8>) {
        let (out, err) = self.poller.take_output();
        let mut guard = self.poller.inner.lock().unwrap_or_else(|e| e.into_inner());
        if guard.1.captured.is_none() {
            // `take_output` stopped capturing; keep capturing what follows.
            guard.1.captured = Some(Default::default());
        }
        (out, err)
    }

    /// The GPU address of the loaded image's symbol `name` (a global variable a host
    /// tool fills before the run or reads after it); `None` for an unknown name or after
    /// a restore.
    pub fn symbol(&self, name: &str) -> Option<GpuAddr> {
        self.symbols.get(name).copied()
    }

    /// The GPU's memory; it stays readable after [`Prepared::finish`].
    pub fn memory(&self) -> Option<Arc<GpuMemory>> {
        self.shared.memory().cloned()
    }

    /// Simulated time now.
    pub fn now(&self) -> Tick {
        self.sim.now()
    }

    /// The whole GPU's state (components, memory, queues, host RPC state) as bytes.
    pub fn checkpoint(&self) -> Result<Vec<u8>, ExecError> {
        self.sim.checkpoint().and_then(|c| c.to_bytes()).map_err(|e| ExecError::Checkpoint(e.to_string()))
    }

    /// Builds the GPU of `opts` again and restores `checkpoint` into it (taken by
    /// [`Prepared::checkpoint`] of the same image and options); run it with
    /// [`Prepared::finish`]. The original may still exist: the restored GPU keeps the
    /// saved GPU addresses in memory of its own (see `GpuMemory::restore`).
    pub fn restore(opts: &ExecOptions, checkpoint: &[u8]) -> Result<Prepared, ExecError> {
        let ck = Checkpoint::from_bytes(checkpoint).map_err(|e| ExecError::Checkpoint(e.to_string()))?;
        let (resources, shared, poller) = shared_and_poller(opts)?;
        let config = sim_config(opts, resources);
        let sim = Simulation::restore(&opts.topology, &config, &ck).map_err(|e| ExecError::Checkpoint(e.to_string()))?;
        Ok(Prepared { sim, shared, poller, symbols: Default::default() })
    }

    /// Runs to the end and reports.
    pub fn finish(self) -> ExecOutcome {
        self.finish_sampled(None, |_, _| {})
    }

    /// [`finish`](Self::finish), pausing every `interval` of simulated time (if given) to
    /// hand `sample` the time and every component's statistics so far (a time series;
    /// pausing changes no result).
    pub fn finish_sampled(mut self, interval: Option<Tick>, mut sample: impl FnMut(Tick, &simdojo::stats::StatsReport)) -> ExecOutcome {
        let started = std::time::Instant::now();
        let status = match interval.filter(|i| i.0 > 0) {
            None => self.sim.run(),
            Some(interval) => {
                let mut at = interval;
                loop {
                    let status = self.sim.run_until(at);
                    if status.reason != ExitReason::Paused {
                        break status;
                    }
                    sample(at, &self.sim.stats());
                    at = Tick(at.0.saturating_add(interval.0));
                }
            }
        };
        let run_seconds = started.elapsed().as_secs_f64();
        self.conclude(&status, run_seconds)
    }

    /// Handles every event of the next timestamp (see `Simulation::step`).
    pub fn step(&mut self) -> ExitStatus {
        self.sim.step()
    }

    /// Runs until the simulation ends; report with [`Prepared::conclude`].
    pub fn run(&mut self) -> ExitStatus {
        self.sim.run()
    }

    /// The simulation (statistics, time, partitions).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The statistics of the kernels that completed so far.
    pub fn kernels(&self) -> Vec<KernelStats> {
        self.shared.kernels()
    }

    /// Shuts the simulation down after it ended with `status` and reports how the
    /// program ended; call it once, `run_seconds` being the wall time the caller measured.
    pub fn conclude(&mut self, status: &ExitStatus, run_seconds: f64) -> ExecOutcome {
        let components = self.sim.stats();
        let observation = self.sim.observation();
        let (partitions, epochs) = (self.sim.partitions(), self.sim.summary().sync.epochs);
        let _ = self.sim.shutdown();
        let faults = self.shared.faults();
        let (exit, output_error) = {
            let mut guard = self.poller.inner.lock().unwrap_or_else(|e| e.into_inner());
            (guard.1.exit, guard.1.output_error.take())
        };
        let (stdout, stderr) = self.poller.take_output();
        let (ret, signal) = {
            let guard = self.poller.inner.lock().unwrap_or_else(|e| e.into_inner());
            (guard.1.ret, guard.1.signal)
        };
        let mem = self.shared.memory();
        let code_ret = mem.and_then(|m| m.read_u64(ret).ok()).map_or(1, |v| v as i32);
        let finished = mem.and_then(|m| m.read_u64(GpuAddr(signal.0 + crate::gpu::aql::signal::VALUE)).ok()) == Some(0);
        let status_code = match exit {
            Some(c) => c,
            None if output_error.is_some() => 1,
            None if !faults.is_empty() => 1,
            None if finished => code_ret,
            None => 1,
        };
        let reason = match status.reason {
            _ if output_error.is_some() => output_error.as_ref().map(ToString::to_string).unwrap_or_default(),
            ExitReason::Quiescent if !finished && faults.is_empty() && exit.is_none() => "the GPU went idle before the program finished".to_string(),
            _ => status.message.clone(),
        };
        ExecOutcome {
            status: status_code,
            faults,
            kernels: self.shared.kernels(),
            end: status.tick,
            reason,
            program_exit: exit,
            stdout,
            stderr,
            run_seconds,
            partitions,
            epochs,
            components,
            output_error,
            observation,
        }
    }
}

/// Runs `image` on the GPU `opts.topology` describes. See the [module docs](self).
pub fn run_image(image: &[u8], opts: &ExecOptions) -> Result<ExecOutcome, ExecError> {
    Ok(prepare(image, opts)?.finish())
}

/// The engine configuration of a run with `opts` and the shared `resources`.
fn sim_config(opts: &ExecOptions, resources: Resources) -> SimConfig {
    SimConfig {
        assignment: opts.assignment.clone(),
        workers: opts.workers,
        max_ticks: opts.max_ticks,
        resources,
        observe: opts.observe,
        progress: opts.progress,
        ..SimConfig::default()
    }
}
