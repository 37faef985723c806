//! The state a whole simulated GPU shares across its components and with the embedder
//! (the `dojo exec` loader, the KFD emulation): memory, loaded programs, hardware
//! queues, fault log and per-kernel statistics. It is a simdojo shared resource (see
//! `simdojo::resources` for the sharing rules) named after the SoC's `name` parameter.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use amdgpu_isa::exec::Program;
use amdgpu_isa::Target;
use serde::{Deserialize, Serialize};

use crate::gpu::ids::{GpuAddr, QueueId};
use crate::gpu::memory::GpuMemory;
use crate::gpu::sdma::SdmaRing;
use crate::gpu::stats::KernelStats;

/// Most bytes of GPU memory decoded at once for code nobody registered.
pub const LAZY_DECODE_MAX: u64 = 4 << 20;

/// A hardware queue: an AQL ring in GPU memory and its read/write indices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueDesc {
    /// First byte of the ring.
    pub ring: GpuAddr,
    /// Packets in the ring (a power of two).
    pub packets: u64,
    /// Address of the 64-bit read index the packet processor advances.
    pub read_index: GpuAddr,
    /// Address of the 64-bit write index the producer advances.
    pub write_index: GpuAddr,
    /// Address of the `amd_queue_t` (the dispatch's queue pointer), or 0.
    pub queue_object: GpuAddr,
}

/// A GPU fault: what the program is told and what `dojo exec` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("GPU fault in kernel {kernel} (dispatch {dispatch}), {place}: {message}")]
pub struct GpuFault {
    /// Kernel name if known, else the descriptor address.
    pub kernel: String,
    /// The dispatch.
    pub dispatch: u64,
    /// Where: `xcd[0].cu[3] wave 5 group (1,0,0) pc 0x...`.
    pub place: String,
    /// The fault itself (executor fault text, naming pc and address).
    pub message: String,
    /// The faulting address, for memory faults.
    pub addr: Option<u64>,
}

/// Callbacks from the GPU to its host: signal interrupts and faults. The KFD emulation
/// and `dojo exec` install one.
pub trait HostHooks: Send + Sync {
    /// A completion signal of a packet of `queue` with an event mailbox was written:
    /// `event_id` fired.
    fn signal_event(&self, _queue: QueueId, _event_id: u32) {}
    /// A dispatch of `queue` (if known) faulted (the fault is also recorded in
    /// [`GpuShared::faults`]).
    fn fault(&self, _queue: Option<QueueId>, _fault: &GpuFault) {}
    /// A dispatch completed.
    fn dispatch_done(&self, _stats: &KernelStats) {}
    /// The value of the GPU's timestamp counter written into completion signals at
    /// simulated time `sim_ps` (default: the 100 MHz reference clock of simulated
    /// time, [`crate::gpu::clock::reference_ticks`], the counter a driver reports in
    /// GET_CLOCK_COUNTERS and `s_memrealtime` reads). A host with another clock
    /// overrides it, and then owes its runtimes a consistent GPU clock reading.
    fn timestamp(&self, sim_ps: u64) -> u64 {
        crate::gpu::clock::reference_ticks(simdojo::time::Tick(sim_ps))
    }
}

/// Host work polled by the SoC while dispatches run (the RPC server of `dojo exec`).
pub trait HostPoller: Send + Sync {
    /// Serves whatever is pending; returns a fault message to stop the GPU.
    fn poll(&self) -> Result<(), String>;
    /// Whether the host asked the simulation to stop (the program called `exit`).
    fn exit_requested(&self) -> Option<i32> {
        None
    }
    /// The poller's state for a checkpoint (`None`: it has none worth keeping).
    fn save(&self) -> Option<Vec<u8>> {
        None
    }
    /// Restores what [`HostPoller::save`] returned.
    fn restore(&self, _state: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

/// See the [module docs](self).
#[derive(Default)]
pub struct GpuShared {
    memory: OnceLock<Arc<GpuMemory>>,
    target: OnceLock<Target>,
    programs: RwLock<BTreeMap<u64, (u64, Arc<Program>)>>,
    queues: Mutex<Vec<QueueDesc>>,
    retired: Mutex<std::collections::BTreeSet<u32>>,
    /// The SDMA queues among `queues`, by id (see [`GpuShared::add_sdma_queue`]).
    sdma: Mutex<BTreeMap<u32, SdmaRing>>,
    /// Queues holding the GPU's global wave sync resources (see [`GpuShared::set_queue_gws`]).
    gws: Mutex<std::collections::BTreeSet<u32>>,
    faults: Mutex<Vec<GpuFault>>,
    kernels: Mutex<Vec<KernelStats>>,
    names: Mutex<BTreeMap<u64, String>>,
    hooks: RwLock<Option<Arc<dyn HostHooks>>>,
    poller: RwLock<Option<Arc<dyn HostPoller>>>,
    clock: crate::gpu::clock::GpuClock,
    remote: crate::gpu::remote::RemoteRanges,
}

impl std::fmt::Debug for GpuShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuShared").field("memory", &self.memory.get()).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section is a single push/insert: a poisoned lock is consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl GpuShared {
    /// Creates the memory on first call (the SoC does at build); later calls return it.
    pub fn init_memory(&self, bytes: u64) -> Result<Arc<GpuMemory>, crate::gpu::memory::AllocError> {
        if let Some(m) = self.memory.get() {
            return Ok(m.clone());
        }
        let m = Arc::new(GpuMemory::new(bytes)?);
        Ok(self.memory.get_or_init(|| m).clone())
    }

    /// The GPU's memory, once the SoC is built.
    pub fn memory(&self) -> Option<&Arc<GpuMemory>> {
        self.memory.get()
    }

    /// The ranges of this GPU's address space that are peer GPUs' memory (the driver
    /// fills it when it maps a peer's buffer; the L2s and the XGMI block read it).
    pub fn remote(&self) -> &crate::gpu::remote::RemoteRanges {
        &self.remote
    }

    /// Records the ISA target (the SoC does at build).
    pub fn set_target(&self, t: Target) {
        let _ = self.target.set(t);
    }

    /// The ISA target.
    pub fn target(&self) -> Option<Target> {
        self.target.get().copied()
    }

    /// Registers the pre-decoded program whose text is `[start, end)`.
    pub fn add_program(&self, start: u64, end: u64, program: Arc<Program>) {
        self.programs.write().unwrap_or_else(|e| e.into_inner()).insert(start, (end, program));
    }

    /// The program whose text holds `pc`. Code nobody registered (a runtime that copied
    /// a code object into GPU memory and only hands the packet processor a kernel
    /// descriptor) is decoded from memory on first use: the whole allocation holding
    /// `pc` (up to [`LAZY_DECODE_MAX`] bytes around it), once.
    pub fn program_at(&self, pc: u64) -> Option<Arc<Program>> {
        {
            let map = self.programs.read().unwrap_or_else(|e| e.into_inner());
            if let Some((_, (end, p))) = map.range(..=pc).next_back() {
                if pc < *end {
                    return Some(p.clone());
                }
            }
        }
        self.decode_from_memory(pc)
    }

    fn decode_from_memory(&self, pc: u64) -> Option<Arc<Program>> {
        let memory = self.memory.get()?;
        let target = self.target()?;
        let region = memory.region_of(GpuAddr(pc))?;
        let half = LAZY_DECODE_MAX / 2;
        let start = region.start.max(pc.saturating_sub(half) & !3);
        let end = region.end.min(start.saturating_add(LAZY_DECODE_MAX));
        let mut bytes = vec![0u8; (end - start) as usize];
        memory.read(GpuAddr(start), &mut bytes).ok()?;
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let program = Arc::new(Program::from_words(target, start, &words));
        let mut map = self.programs.write().unwrap_or_else(|e| e.into_inner());
        // Another thread may have decoded an overlapping range meanwhile: keep the first.
        if let Some((_, (e, p))) = map.range(..=pc).next_back() {
            if pc < *e {
                return Some(p.clone());
            }
        }
        map.insert(start, (start + 4 * words.len() as u64, program.clone()));
        Some(program)
    }

    /// Forgets the decoded programs overlapping `[start, end)`: the memory holding them
    /// was freed or unmapped, and new code may be loaded there.
    pub fn forget_programs(&self, start: u64, end: u64) {
        lock(&self.names).retain(|&d, _| d < start || d >= end);
        let mut map = self.programs.write().unwrap_or_else(|e| e.into_inner());
        let doomed: Vec<u64> = map.range(..end).filter(|(_, (e, _))| *e > start).map(|(&s, _)| s).collect();
        for s in doomed {
            map.remove(&s);
        }
    }

    /// Drops every decoded program (an instruction-cache invalidate: code may have
    /// been loaded where other code was), keeping kernel names: nothing was unloaded.
    pub fn invalidate_code_caches(&self) {
        self.programs.write().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Every registered program's text range.
    pub fn program_ranges(&self) -> Vec<(u64, u64)> {
        self.programs.read().unwrap_or_else(|e| e.into_inner()).iter().map(|(&s, (e, _))| (s, *e)).collect()
    }

    /// Names a kernel by its descriptor address, for statistics and fault messages.
    pub fn name_kernel(&self, descriptor: GpuAddr, name: &str) {
        lock(&self.names).insert(descriptor.0, name.to_string());
    }

    /// The kernel name at a descriptor address: registered by the loader, else read
    /// from the code object a runtime loaded there (see [`crate::gpu::loaded_image`]), else
    /// the address in hex. Remembered per descriptor.
    pub fn kernel_name(&self, descriptor: GpuAddr) -> String {
        if let Some(n) = lock(&self.names).get(&descriptor.0) {
            return n.clone();
        }
        let name = self
            .memory()
            .and_then(|m| crate::gpu::loaded_image::kernel_name(m, descriptor))
            .unwrap_or_else(|| format!("{descriptor}"));
        lock(&self.names).insert(descriptor.0, name.clone());
        name
    }

    /// Adds a hardware queue; its doorbell is `QueueId` (the index).
    pub fn add_queue(&self, q: QueueDesc) -> QueueId {
        let mut queues = lock(&self.queues);
        queues.push(q);
        QueueId(queues.len() as u32 - 1)
    }

    /// Adds an SDMA queue: it takes the next queue id (doorbells name queues of either
    /// kind); the AQL packet processor skips it and the SDMA engines serve it.
    pub fn add_sdma_queue(&self, ring: SdmaRing) -> QueueId {
        let mut queues = lock(&self.queues);
        // The id's slot in the AQL table holds the ring's addresses with no packets.
        queues.push(QueueDesc { ring: ring.base, packets: 0, read_index: ring.read_pointer, write_index: ring.write_pointer, queue_object: GpuAddr(0) });
        let id = QueueId(queues.len() as u32 - 1);
        lock(&self.sdma).insert(id.0, ring);
        id
    }

    /// The SDMA queue `id` (`None` if it is not one, or once retired).
    pub fn sdma_queue(&self, id: QueueId) -> Option<SdmaRing> {
        if lock(&self.retired).contains(&id.0) {
            return None;
        }
        lock(&self.sdma).get(&id.0).copied()
    }

    /// Every SDMA queue, retired ones included (for checkpoints).
    pub fn sdma_queues(&self) -> Vec<(u32, SdmaRing)> {
        lock(&self.sdma).iter().map(|(&k, &v)| (k, v)).collect()
    }

    /// Replaces the SDMA queue table (restoring a checkpoint).
    pub fn set_sdma_queues(&self, q: &[(u32, SdmaRing)]) {
        *lock(&self.sdma) = q.iter().copied().collect();
    }

    /// The queue `id` (`None` once retired).
    pub fn queue(&self, id: QueueId) -> Option<QueueDesc> {
        if lock(&self.retired).contains(&id.0) {
            return None;
        }
        lock(&self.queues).get(id.index()).cloned()
    }

    /// Retires queue `id` (the driver destroyed it): the packet processor ignores its
    /// doorbell from now on. Ids are never reused.
    pub fn retire_queue(&self, id: QueueId) {
        lock(&self.retired).insert(id.0);
    }

    /// Gives queue `id` the GPU's global wave sync resources (`on`) or takes them back:
    /// the driver's `ALLOC_QUEUE_GWS`. Dispatches the packet processor starts from the
    /// queue afterwards may run `ds_gws_*`; those of a queue without GWS fault (the
    /// SoC, `amdgpu.soc`, checks it).
    pub fn set_queue_gws(&self, id: QueueId, on: bool) {
        let mut gws = lock(&self.gws);
        if on {
            gws.insert(id.0);
        } else {
            gws.remove(&id.0);
        }
    }

    /// Whether queue `id` holds GWS resources.
    pub fn queue_has_gws(&self, id: QueueId) -> bool {
        lock(&self.gws).contains(&id.0)
    }

    /// The queues holding GWS resources (for checkpoints).
    pub fn gws_queues(&self) -> Vec<u32> {
        lock(&self.gws).iter().copied().collect()
    }

    /// Replaces the set of queues holding GWS resources (restoring a checkpoint).
    pub(crate) fn set_gws_queues(&self, queues: &[u32]) {
        *lock(&self.gws) = queues.iter().copied().collect();
    }

    /// Every queue (for checkpoints).
    pub fn queues(&self) -> Vec<QueueDesc> {
        lock(&self.queues).clone()
    }

    /// Replaces the queue table (restoring a checkpoint).
    pub fn set_queues(&self, q: Vec<QueueDesc>) {
        *lock(&self.queues) = q;
    }

    /// Installs the host callbacks.
    pub fn set_hooks(&self, hooks: Arc<dyn HostHooks>) {
        *self.hooks.write().unwrap_or_else(|e| e.into_inner()) = Some(hooks);
    }

    /// Installs the host-service poller the SoC runs while dispatches are in flight.
    pub fn set_poller(&self, p: Arc<dyn HostPoller>) {
        *self.poller.write().unwrap_or_else(|e| e.into_inner()) = Some(p);
    }

    pub(crate) fn poller(&self) -> Option<Arc<dyn HostPoller>> {
        self.poller.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The GPU's time as the host sees it: the packet processor's clock and recent
    /// activity.
    pub fn clock(&self) -> &crate::gpu::clock::GpuClock {
        &self.clock
    }

    /// The timestamp counter at simulated time `sim_ps` (see [`HostHooks::timestamp`]).
    pub fn timestamp(&self, sim_ps: u64) -> u64 {
        match self.hooks() {
            Some(h) => h.timestamp(sim_ps),
            None => crate::gpu::clock::reference_ticks(simdojo::time::Tick(sim_ps)),
        }
    }

    pub(crate) fn hooks(&self) -> Option<Arc<dyn HostHooks>> {
        self.hooks.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn record_fault(&self, queue: Option<QueueId>, f: GpuFault) {
        if let Some(h) = self.hooks() {
            h.fault(queue, &f);
        }
        lock(&self.faults).push(f);
    }

    /// Faults so far, in the order they were reported.
    pub fn faults(&self) -> Vec<GpuFault> {
        lock(&self.faults).clone()
    }

    pub(crate) fn record_kernel(&self, k: KernelStats) {
        if let Some(h) = self.hooks() {
            h.dispatch_done(&k);
        }
        lock(&self.kernels).push(k);
    }

    /// Statistics of every completed dispatch, in completion order.
    pub fn kernels(&self) -> Vec<KernelStats> {
        lock(&self.kernels).clone()
    }

    /// Replaces the records of completed dispatches and faults (restoring a checkpoint).
    pub(crate) fn set_history(&self, kernels: Vec<KernelStats>, faults: Vec<GpuFault>) {
        *lock(&self.kernels) = kernels;
        *lock(&self.faults) = faults;
    }
}
