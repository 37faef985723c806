//! The simulated KFD of one application process: buffer objects, queues, events and
//! the ioctls and mmaps that reach them, independent of how the calls arrive (in
//! process in local mode, over a socket in daemon mode).
//!
//! - [`abi`]: the ioctl numbers and argument structs.
//! - [`user`]: checked access to the application's memory.
//! - [`machine`]: the simulation running the GPUs.
//! - [`backing`]: the memfd behind VRAM and GTT buffers.
//! - [`events`]: KFD events and WAIT_EVENTS.
//! - [`ioctl`]: the handler of each command.
//! - [`mapping`]: the mmaps of the KFD and render-node files.
//! - [`svm`]: shared virtual memory (managed memory) and the XNACK mode.
//! - [`vma`]: the application's memory areas, which SVM ranges are checked against.

pub mod abi;
pub mod backing;
pub(crate) mod clock;
mod live;
mod doorbells;
pub mod events;
pub mod ioctl;
pub mod machine;
pub mod mapping;
pub mod svm;
pub mod user;
pub mod userptr;
pub mod vma;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use amdgpu::gpu::ids::{GpuAddr, QueueId};
use amdgpu::gpu::memory::GpuMemory;
use amdgpu::gpu::shared::{GpuFault, HostHooks};

use crate::config::DriverConfig;
use crate::identity::SystemIdentity;
use backing::{Backing, BackingError};
use events::{EventId, Events};
use machine::{Machine, MachineError};

/// Bytes of the buffer backing store's address range (sparse; real use is bounded by
/// VRAM sizes and host memory).
pub const BACKING_BYTES: u64 = 1 << 40;

/// Render-node mmap offsets of buffers start here (as DRM's fake offsets do, far from 0).
pub const RENDER_MMAP_BASE: u64 = 1 << 32;

/// Why the driver could not open.
#[derive(Debug, thiserror::Error)]
pub enum KfdError {
    /// The simulation did not start.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// The buffer store could not be created.
    #[error(transparent)]
    Backing(#[from] BackingError),
}

/// Where a buffer's memory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoMemory {
    /// Device memory, at this offset of the backing store.
    Vram(u64),
    /// System memory the driver allocated (GTT), at this offset of the backing store.
    Gtt(u64),
    /// Application memory at this address (USERPTR).
    User(u64),
    /// Application memory a daemon client moved into a memfd, which the driver maps
    /// at `host` (USERPTR in daemon mode).
    Migrated {
        /// The driver's mapping.
        host: u64,
    },
    /// The process's doorbell page.
    Doorbell,
    /// The MMIO remap page (HDP flush).
    Mmio,
}

/// A buffer object.
#[derive(Clone, Debug)]
pub struct Bo {
    /// Index of its GPU in the machine.
    pub gpu: usize,
    /// GPU virtual address.
    pub va: u64,
    /// Bytes.
    pub size: u64,
    /// Its memory.
    pub memory: BoMemory,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*`.
    pub flags: u32,
    /// GPUs (indices) it is mapped on.
    pub mapped_on: BTreeSet<usize>,
}

/// A KFD queue of this process.
#[derive(Clone, Debug)]
pub struct Queue {
    /// Index of its GPU.
    pub gpu: usize,
    /// The packet processor's queue.
    pub hw: QueueId,
    /// It holds the GPU's global wave sync resources (`ALLOC_QUEUE_GWS`).
    pub gws: bool,
}

/// Buffer handles: gpu_id in the high half, a per-process counter in the low half.
#[derive(Default)]
pub(crate) struct Bos {
    by_handle: BTreeMap<u64, Bo>,
    next: u32,
}

/// State a ROCm runtime configures once (recorded; see the ioctl docs).
#[derive(Default, Debug)]
pub(crate) struct Settings {
    acquired: BTreeSet<usize>,
    scratch_va: BTreeMap<usize, u64>,
    trap_handler: BTreeMap<usize, (u64, u64)>,
    event_page: Option<u64>,
    /// This process's latest GET_CLOCK_COUNTERS reading of each GPU (see `clock`).
    clock_reads: BTreeMap<usize, u64>,
}

/// The simulated GPUs every process shares: the machine, the owners of its hardware
/// queues (so an interrupt or a fault reaches the process whose queue raised it, and
/// no other), device-memory accounting and the driver's warnings.
pub struct Device {
    system: SystemIdentity,
    machine: Arc<Machine>,
    router: Arc<Router>,
    vram_used: Mutex<Vec<u64>>,
    warned: Mutex<BTreeSet<String>>,
    trace: bool,
    /// The live device files, once published.
    live: std::sync::OnceLock<live::LiveSysfs>,
}

/// Which process owns each hardware queue: (GPU index, queue) -> its events; and each
/// GPU's memory (set once the machine runs), which tells a fault's kind.
#[derive(Default)]
struct Router {
    owners: Mutex<BTreeMap<(usize, QueueId), Weak<Events>>>,
    memories: OnceLock<Vec<Arc<GpuMemory>>>,
}

impl Router {
    fn owner(&self, gpu: usize, queue: QueueId) -> Option<Arc<Events>> {
        lock(&self.owners).get(&(gpu, queue)).and_then(Weak::upgrade)
    }
}

/// The GPU's callbacks into the driver.
struct Hooks {
    router: Arc<Router>,
    gpu: usize,
    gpu_id: u32,
}

impl HostHooks for Hooks {
    fn signal_event(&self, queue: QueueId, event_id: u32) {
        if let Some(events) = self.router.owner(self.gpu, queue) {
            events.signal(EventId(event_id));
        }
    }

    fn fault(&self, queue: Option<QueueId>, fault: &GpuFault) {
        eprintln!("dojo: {fault}");
        // A faulting access to a mapped page was a store to a read-only one (the GPU's
        // protection fault); anything else found no page.
        let memory = self.router.memories.get().and_then(|m| m.get(self.gpu));
        let read_only = fault.addr.zip(memory).is_some_and(|(a, m)| m.is_read_only(GpuAddr(a)));
        let failure = if read_only {
            abi::MemoryExceptionFailure { read_only: 1, ..Default::default() }
        } else {
            abi::MemoryExceptionFailure { not_present: 1, ..Default::default() }
        };
        let data = abi::MemoryExceptionData {
            failure,
            va: fault.addr.unwrap_or(0),
            gpu_id: self.gpu_id,
            error_type: 0,
        };
        // The process whose queue faulted is told, no other: a queue nobody owns any
        // more belonged to a process that is gone (its dispatches fault on its freed
        // buffers). A fault of no queue (host services) goes to every process.
        match queue {
            Some(q) => {
                if let Some(events) = self.router.owner(self.gpu, q) {
                    events.memory_exception(data);
                }
            }
            None => {
                let all: Vec<Arc<Events>> = lock(&self.router.owners)
                    .iter()
                    .filter(|((g, _), _)| *g == self.gpu)
                    .filter_map(|(_, w)| w.upgrade())
                    .collect();
                for events in all {
                    events.memory_exception(data);
                }
            }
        }
    }
}

impl Device {
    /// Starts the simulation of `system`'s GPUs.
    pub fn start(config: &DriverConfig, system: SystemIdentity) -> Result<Arc<Device>, KfdError> {
        let router = Arc::new(Router::default());
        let ids: Vec<u32> = system.gpus.iter().map(|g| g.gpu_id).collect();
        let machine = Machine::start(config, &system.gpus, |i| {
            Arc::new(Hooks { router: router.clone(), gpu: i, gpu_id: ids[i] }) as Arc<dyn HostHooks>
        })?;
        let n = machine.gpus.len();
        // Set once, here: the router was made empty above.
        let _ = router.memories.set(machine.gpus.iter().map(|g| g.memory.clone()).collect());
        Ok(Arc::new(Device {
            system,
            machine: Arc::new(machine),
            router,
            vram_used: Mutex::new(vec![0; n]),
            warned: Mutex::new(BTreeSet::new()),
            trace: config.log_ioctls,
            live: std::sync::OnceLock::new(),
        }))
    }

    /// The machine as the driver presents it.
    pub fn system(&self) -> &SystemIdentity {
        &self.system
    }

    /// The simulation.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Stops the simulation; returns every GPU's per-kernel statistics.
    pub fn stop(&self) -> Vec<amdgpu::gpu::stats::KernelStats> {
        if let Some(l) = self.live.get() {
            l.stop();
        }
        self.machine.stop();
        self.machine.gpus.iter().flat_map(|g| g.shared.kernels()).collect()
    }

    /// Every component's statistics, once [`Device::stop`] ended the simulation.
    pub fn component_stats(&self) -> Option<simdojo::stats::StatsReport> {
        self.machine.component_stats()
    }
}

/// The KFD of one process (what an open of `/dev/kfd` gives it): its buffers, queues,
/// events and doorbells on the shared [`Device`]. See the [module docs](self).
pub struct Kfd {
    device: Arc<Device>,
    backing: Backing,
    events: Arc<Events>,
    pub(crate) bos: Arc<Mutex<Bos>>,
    /// Shared virtual memory and the XNACK mode.
    pub(crate) svm: Arc<svm::SvmShared>,
    pub(crate) queues: Arc<Mutex<BTreeMap<u32, Queue>>>,
    pub(crate) settings: Mutex<Settings>,
    /// Doorbell page of each GPU, once mapped: (address, bytes, trap).
    pub(crate) doorbells: Mutex<BTreeMap<usize, (usize, usize, crate::doorbell_trap::WatchId)>>,
    closed: AtomicBool,
}

/// Rings every queue of GPU `gpu` in `queues`.
pub(crate) fn ring_queues(machine: &Machine, queues: &Mutex<BTreeMap<u32, Queue>>, gpu: usize) {
    let hw: Vec<QueueId> = lock(queues).values().filter(|q| q.gpu == gpu).map(|q| q.hw).collect();
    if let Some(g) = machine.gpus.get(gpu) {
        for q in hw {
            g.ring(q);
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its table consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Kfd {
    /// Opens the device for one process: starts the simulation of `system`'s GPUs
    /// (local mode: the process owns the machine).
    pub fn open(config: &DriverConfig, system: SystemIdentity) -> Result<Kfd, KfdError> {
        Kfd::attach(Device::start(config, system)?)
    }

    /// A new process context on a running device.
    pub fn attach(device: Arc<Device>) -> Result<Kfd, KfdError> {
        Kfd::attach_reserving(device, BACKING_BYTES)
    }

    /// [`Kfd::attach`] with a buffer store of `reservation` bytes of address space (the
    /// most this process's VRAM and GTT buffers can hold together): a daemon serving
    /// many processes reserves less than [`BACKING_BYTES`] for each.
    pub fn attach_reserving(device: Arc<Device>, reservation: u64) -> Result<Kfd, KfdError> {
        let bos = Arc::new(Mutex::new(Bos::default()));
        let gpus: Vec<_> = device
            .machine
            .gpus
            .iter()
            .map(|g| (g.memory.clone(), g.identity.gpu_id, g.identity.hive_id, g.identity.capability))
            .collect();
        let svm = svm::SvmShared::new(&gpus, bos.clone());
        Ok(Kfd {
            device,
            backing: Backing::new(reservation)?,
            events: Arc::new(Events::default()),
            bos,
            svm,
            queues: Arc::new(Mutex::new(BTreeMap::new())),
            settings: Mutex::new(Settings::default()),
            doorbells: Mutex::new(BTreeMap::new()),
            closed: AtomicBool::new(false),
        })
    }

    /// The shared device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The machine as the driver presents it.
    pub fn system(&self) -> &SystemIdentity {
        &self.device.system
    }

    /// The simulation.
    pub fn machine(&self) -> &Machine {
        &self.device.machine
    }

    /// The descriptor of the buffer store (internal: the application must not close it).
    pub fn backing_fd(&self) -> std::os::fd::RawFd {
        self.backing.raw_fd()
    }

    /// Whether device calls are logged.
    pub fn tracing(&self) -> bool {
        self.device.trace
    }

    /// Prints `what` once per distinct text.
    pub(crate) fn warn_once(&self, what: String) {
        if lock(&self.device.warned).insert(what.clone()) {
            eprintln!("dojo: {what}");
        }
    }

    /// The GPU index of a KFD gpu id (`EINVAL` for an unknown one).
    pub(crate) fn gpu_index(&self, gpu_id: u32) -> Result<usize, crate::Errno> {
        self.machine().gpu_by_id(gpu_id).map(|(i, _)| i).ok_or(crate::Errno::INVAL)
    }

    /// Rings every queue of GPU `gpu` (a doorbell write on its page: the packet
    /// processor re-reads each queue's write index).
    pub fn ring_gpu(&self, gpu: usize) {
        ring_queues(&self.device.machine, &self.queues, gpu);
    }

    /// Ends every wait of this process, now and later (its client is gone).
    pub fn end_waits(&self) {
        self.events.close();
    }

    /// Buffers, their bytes and queues of this process (for status reports).
    pub fn usage(&self) -> (usize, u64, usize) {
        let bos = lock(&self.bos);
        let bytes = bos.by_handle.values().map(|b| b.size).sum();
        (bos.by_handle.len(), bytes, lock(&self.queues).len())
    }

    /// Records that this process owns hardware queue `hw` of GPU `gpu`.
    pub(crate) fn own_queue(&self, gpu: usize, hw: QueueId) {
        lock(&self.device.router.owners).insert((gpu, hw), Arc::downgrade(&self.events));
    }

    /// Retires hardware queue `hw` of GPU `gpu`.
    pub(crate) fn retire_queue(&self, gpu: usize, hw: QueueId) {
        if let Some(g) = self.machine().gpus.get(gpu) {
            // A destroyed queue gives its GWS resources back (`pqm_destroy_queue`).
            g.shared.set_queue_gws(hw, false);
            g.shared.retire_queue(hw);
        }
        lock(&self.device.router.owners).remove(&(gpu, hw));
    }

    /// Ends the process's GPU context (the last close of its KFD file, or its death):
    /// retires its queues, stops watching its doorbells and frees its buffers. Other
    /// processes on the device are not affected.
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.events.close();
        let queues = std::mem::take(&mut *lock(&self.queues));
        for q in queues.values() {
            self.retire_queue(q.gpu, q.hw);
        }
        for (_, (_, _, watch)) in std::mem::take(&mut *lock(&self.doorbells)) {
            crate::doorbell_trap::unwatch(watch);
        }
        let handles: Vec<u64> = lock(&self.bos).by_handle.keys().copied().collect();
        for h in handles {
            let _ = self.free_memory(h);
        }
        self.device.refresh_sysfs();
        self.svm_close();
    }
}

#[cfg(test)]
mod tests;
