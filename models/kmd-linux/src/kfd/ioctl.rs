//! The handler of each KFD command. Arguments are copied in (as many bytes as the
//! request encodes, zero-extended to the driver's struct, as the kernel does), handled,
//! and copied back for `_IOR` commands. Pointers inside arguments go through
//! [`UserMemory`]; nothing the application passes is trusted.

use amdgpu::gpu::aql::PACKET_BYTES;
use amdgpu::gpu::ids::GpuAddr;
use amdgpu::gpu::memory::MemKind;
use amdgpu::gpu::shared::QueueDesc;
use bytemuck::Pod;

use crate::backend::Errno;
use crate::kfd::abi::{self, alloc_flags, dir, nr, Request};
use crate::kfd::backing::PAGE;
use crate::kfd::events::EventId;
use crate::kfd::user::UserMemory;
use crate::kfd::{lock, Bo, BoMemory, Kfd, Queue, RENDER_MMAP_BASE};

/// Most array entries an ioctl may pass (device ids, events, CU mask words).
const MAX_ARRAY: usize = 4096;

/// Apertures of gfx9 and later in 64-bit processes: LDS and scratch in their
/// conventional high ranges (the ISA's `src_shared_base` / `src_private_base`), GPUVM
/// the whole canonical user range above 16 MiB, so libhsakmt uses the CPU address of
/// every allocation as its GPU address.
const LDS_BASE: u64 = 0x1_0000_0000_0000;
const SCRATCH_BASE: u64 = 0x2_0000_0000_0000;
const APERTURE_LIMIT: u64 = 0xffff_ffff;
const GPUVM_BASE: u64 = 0x100_0000;
const GPUVM_LIMIT: u64 = (1 << 47) - 1;

/// Copies a struct argument in, runs `f` on it, copies it back.
fn with<T: Pod>(
    buf: &mut [u8],
    f: impl FnOnce(&mut T) -> Result<i32, Errno>,
) -> Result<i32, Errno> {
    let mut v = T::zeroed();
    let n = buf.len().min(size_of::<T>());
    bytemuck::bytes_of_mut(&mut v)[..n].copy_from_slice(&buf[..n]);
    let r = f(&mut v)?;
    buf[..n].copy_from_slice(&bytemuck::bytes_of(&v)[..n]);
    Ok(r)
}

impl Kfd {
    /// Handles ioctl `request` on the KFD file with its argument at `arg`.
    pub fn kfd_ioctl(&self, request: u64, arg: u64, user: &impl UserMemory) -> Result<i32, Errno> {
        let r = Request::decode(request);
        if r.ty != abi::KFD_TYPE {
            self.warn_once(format!(
                "ioctl {request:#x} on /dev/kfd is not a KFD command"
            ));
            return Err(Errno::NOTTY);
        }
        let mut buf = vec![0u8; r.size];
        if r.size > 0 && r.dir & dir::WRITE != 0 {
            user.read(arg, &mut buf)?;
        }
        let result = self.dispatch(r, &mut buf, user);
        if self.tracing() {
            eprintln!(
                "dojo: KFD {} ({request:#x}) -> {result:?}",
                abi::kfd_name(r.nr)
            );
        }
        let v = result?;
        if matches!(r.nr, nr::ALLOC_MEMORY_OF_GPU | nr::FREE_MEMORY_OF_GPU) {
            // Memory use in the device files is current when the call returns.
            self.device().refresh_sysfs();
        }
        if r.size > 0 && r.dir & dir::READ != 0 {
            user.write(arg, &buf)?;
        }
        Ok(v)
    }

    fn dispatch(&self, r: Request, buf: &mut [u8], user: &impl UserMemory) -> Result<i32, Errno> {
        match r.nr {
            nr::GET_VERSION => with(buf, |a: &mut abi::GetVersion| {
                (a.major_version, a.minor_version) = abi::VERSION;
                Ok(0)
            }),
            nr::GET_PROCESS_APERTURES => with(buf, |a: &mut abi::ProcessApertures| {
                let n = self.machine().gpus.len().min(abi::NUM_OF_SUPPORTED_GPUS);
                for i in 0..n {
                    a.process_apertures[i] = self.apertures(i);
                }
                a.num_of_nodes = n as u32;
                Ok(0)
            }),
            nr::GET_PROCESS_APERTURES_NEW => with(buf, |a: &mut abi::ProcessAperturesNew| {
                let total = self.machine().gpus.len();
                if a.num_of_nodes == 0 {
                    a.num_of_nodes = total as u32;
                    return Ok(0);
                }
                let n = (a.num_of_nodes as usize).min(total);
                let all: Vec<abi::DeviceApertures> = (0..n).map(|i| self.apertures(i)).collect();
                user.write(
                    a.kfd_process_device_apertures_ptr,
                    bytemuck::cast_slice(&all),
                )?;
                a.num_of_nodes = n as u32;
                Ok(0)
            }),
            nr::ACQUIRE_VM => with(buf, |a: &mut abi::AcquireVm| {
                let g = self.gpu_index(a.gpu_id)?;
                lock(&self.settings).acquired.insert(g);
                Ok(0)
            }),
            nr::SET_MEMORY_POLICY => with(buf, |a: &mut abi::SetMemoryPolicy| {
                self.gpu_index(a.gpu_id)?;
                if a.default_policy > 1 || a.alternate_policy > 1 {
                    return Err(Errno::INVAL);
                }
                // One coherence domain: the simulated memory is coherent with the host
                // for every policy.
                Ok(0)
            }),
            nr::SET_XNACK_MODE => with(buf, |a: &mut abi::SetXnackMode| self.set_xnack_mode(a)),
            nr::SVM => self.svm_ioctl(buf, user),
            nr::GET_CLOCK_COUNTERS => with(buf, |a: &mut abi::ClockCounters| self.clock_counters(a)),
            nr::AVAILABLE_MEMORY => with(buf, |a: &mut abi::AvailableMemory| {
                let g = self.gpu_index(a.gpu_id)?;
                let total = self.machine().gpus[g].identity.vram_bytes;
                a.available = total.saturating_sub(lock(&self.device().vram_used)[g]);
                Ok(0)
            }),
            nr::SET_SCRATCH_BACKING_VA => with(buf, |a: &mut abi::SetScratchBackingVa| {
                let g = self.gpu_index(a.gpu_id)?;
                // The compute units allocate scratch per dispatch from the packet's
                // private segment size; the backing address is recorded.
                lock(&self.settings).scratch_va.insert(g, a.va_addr);
                Ok(0)
            }),
            nr::SET_TRAP_HANDLER => with(buf, |a: &mut abi::SetTrapHandler| {
                let g = self.gpu_index(a.gpu_id)?;
                // Traps stop the wave with a fault instead of entering a handler.
                lock(&self.settings)
                    .trap_handler
                    .insert(g, (a.tba_addr, a.tma_addr));
                Ok(0)
            }),
            nr::GET_TILE_CONFIG => with(buf, |a: &mut abi::GetTileConfig| {
                self.gpu_index(a.gpu_id)?;
                // gfx9 and later have no tiling tables: an empty table, as the driver's.
                // GB_ADDR_CONFIG is the one the image instructions' tiled layouts assume
                // (ROCr's addrlib lays images out with it).
                a.num_tile_configs = 0;
                a.num_macro_tile_configs = 0;
                a.gb_addr_config = amdgpu::isa::exec::image::layout::GB_ADDR_CONFIG;
                a.num_banks = 0;
                a.num_ranks = 0;
                Ok(0)
            }),
            nr::RUNTIME_ENABLE => with(buf, |_a: &mut abi::RuntimeEnable| Ok(0)),
            nr::CREATE_EVENT => with(buf, |a: &mut abi::CreateEvent| self.create_event(a)),
            nr::DESTROY_EVENT => with(buf, |a: &mut abi::IdArgs| {
                self.events.destroy(EventId(a.id)).map(|_| 0)
            }),
            nr::SET_EVENT => with(buf, |a: &mut abi::IdArgs| {
                if self.events.signal(EventId(a.id)) {
                    Ok(0)
                } else {
                    Err(Errno::INVAL)
                }
            }),
            nr::RESET_EVENT => with(buf, |a: &mut abi::IdArgs| {
                self.events.reset(EventId(a.id)).map(|_| 0)
            }),
            nr::WAIT_EVENTS => with(buf, |a: &mut abi::WaitEvents| {
                let data: Vec<abi::EventData> =
                    user.read_array(a.events_ptr, a.num_events as usize, MAX_ARRAY)?;
                let ids: Vec<u32> = data.iter().map(|d| d.event_id).collect();
                let (result, out) = self.events.wait(&ids, a.wait_for_all != 0, a.timeout)?;
                user.write(a.events_ptr, bytemuck::cast_slice(&out))?;
                a.wait_result = result;
                Ok(0)
            }),
            nr::ALLOC_MEMORY_OF_GPU => {
                with(buf, |a: &mut abi::AllocMemory| self.alloc_memory(a, user))
            }
            nr::FREE_MEMORY_OF_GPU => with(buf, |a: &mut abi::FreeMemory| {
                self.free_memory(a.handle).map(|_| 0)
            }),
            nr::MAP_MEMORY_TO_GPU => {
                with(buf, |a: &mut abi::MapMemory| self.map_memory(a, user, true))
            }
            nr::UNMAP_MEMORY_FROM_GPU => with(buf, |a: &mut abi::MapMemory| {
                self.map_memory(a, user, false)
            }),
            nr::CREATE_QUEUE => with(buf, |a: &mut abi::CreateQueue| self.create_queue(a)),
            nr::DESTROY_QUEUE => with(buf, |a: &mut abi::IdArgs| {
                let q = lock(&self.queues).remove(&a.id).ok_or(Errno::INVAL)?;
                self.retire_queue(q.gpu, q.hw);
                Ok(0)
            }),
            nr::ALLOC_QUEUE_GWS => with(buf, |a: &mut abi::AllocQueueGws| self.alloc_queue_gws(a)),
            nr::UPDATE_QUEUE => with(buf, |a: &mut abi::UpdateQueue| {
                let queues = lock(&self.queues);
                let q = queues.get(&a.queue_id).ok_or(Errno::INVAL)?;
                let desc = self.machine().gpus[q.gpu]
                    .shared
                    .queue(q.hw)
                    .ok_or(Errno::INVAL)?;
                if a.ring_base_address != desc.ring.0
                    || u64::from(a.ring_size) != desc.packets * PACKET_BYTES
                {
                    self.warn_once(
                        "UPDATE_QUEUE: moving or resizing a queue's ring is not supported".into(),
                    );
                    return Err(Errno::INVAL);
                }
                // Percentage and priority: one queue runs at a time per dispatch order.
                Ok(0)
            }),
            nr::SET_CU_MASK => with(buf, |a: &mut abi::SetCuMask| {
                let gpu = lock(&self.queues).get(&a.queue_id).ok_or(Errno::INVAL)?.gpu;
                if a.num_cu_mask == 0 || !a.num_cu_mask.is_multiple_of(32) {
                    return Err(Errno::INVAL);
                }
                let words: Vec<u32> =
                    user.read_array(a.cu_mask_ptr, a.num_cu_mask as usize / 32, MAX_ARRAY)?;
                let cus = self.machine().gpus[gpu].identity.cu_count;
                let enabled: u32 = words.iter().map(|w| w.count_ones()).sum();
                if enabled == 0 {
                    return Err(Errno::INVAL);
                }
                if enabled < cus {
                    self.warn_once(format!(
                        "SET_CU_MASK: queue {} asked for {enabled} of {cus} CUs; the simulated command processor spreads work over all of them",
                        a.queue_id
                    ));
                }
                Ok(0)
            }),
            nr::DBG_TRAP | nr::DBG_TRAP_ROCM => {
                // No debugger: the answer of a kernel built without debug support.
                if self.tracing() {
                    eprintln!("dojo: DBG_TRAP: no debugger support");
                }
                Err(Errno::INVAL)
            }
            other => {
                self.warn_once(format!(
                    "KFD ioctl {} ({other:#04x}) is not supported by the simulated driver",
                    abi::kfd_name(other)
                ));
                Err(Errno::INVAL)
            }
        }
    }

    /// `ALLOC_QUEUE_GWS`, as `kfd_ioctl_alloc_queue_gws` and `pqm_set_gws` answer it: the
    /// queue must be one of the process's (`EINVAL`) on a GPU with GWS (`ENODEV`); a
    /// non-zero `num_gws` gives the queue all of the GPU's resources, whatever the count
    /// (`EBUSY` when a queue of the process on that GPU already holds them); zero takes
    /// them back (`EINVAL` when the queue holds none). `first_gws` is 0.
    fn alloc_queue_gws(&self, a: &mut abi::AllocQueueGws) -> Result<i32, Errno> {
        let mut queues = lock(&self.queues);
        let q = queues.get(&a.queue_id).cloned().ok_or(Errno::INVAL)?;
        let gpu = &self.machine().gpus[q.gpu];
        if gpu.identity.num_gws == 0 {
            return Err(Errno::NODEV);
        }
        if a.num_gws != 0 {
            if queues.values().any(|o| o.gpu == q.gpu && o.gws) {
                return Err(Errno::BUSY);
            }
        } else if !q.gws {
            return Err(Errno::INVAL);
        }
        let on = a.num_gws != 0;
        if let Some(entry) = queues.get_mut(&a.queue_id) {
            entry.gws = on;
        }
        gpu.shared.set_queue_gws(q.hw, on);
        a.first_gws = 0;
        Ok(0)
    }

    fn apertures(&self, gpu: usize) -> abi::DeviceApertures {
        abi::DeviceApertures {
            lds_base: LDS_BASE,
            lds_limit: LDS_BASE + APERTURE_LIMIT,
            scratch_base: SCRATCH_BASE,
            scratch_limit: SCRATCH_BASE + APERTURE_LIMIT,
            gpuvm_base: GPUVM_BASE,
            gpuvm_limit: GPUVM_LIMIT,
            gpu_id: self.machine().gpus[gpu].identity.gpu_id,
            pad: 0,
        }
    }

    fn create_event(&self, a: &mut abi::CreateEvent) -> Result<i32, Errno> {
        if a.event_page_offset != 0 {
            // libhsakmt on a discrete GPU allocates the event page itself and names its
            // buffer here (first signal event).
            let bos = lock(&self.bos);
            let bo = bos
                .by_handle
                .get(&a.event_page_offset)
                .ok_or(Errno::INVAL)?;
            if bo.size < u64::from(abi::SIGNAL_EVENT_LIMIT) * 8 {
                return Err(Errno::INVAL);
            }
            let mut s = lock(&self.settings);
            if s.event_page.is_some_and(|h| h != a.event_page_offset) {
                return Err(Errno::INVAL);
            }
            s.event_page = Some(a.event_page_offset);
        }
        let id = self.events.create(a.event_type, a.auto_reset != 0)?;
        a.event_id = id.0;
        a.event_trigger_data = id.0;
        a.event_slot_index = if a.event_type == abi::event_type::SIGNAL {
            id.0
        } else {
            0
        };
        a.event_page_offset = abi::mmap::TYPE_EVENTS;
        Ok(0)
    }

    fn alloc_memory(&self, a: &mut abi::AllocMemory, user: &impl UserMemory) -> Result<i32, Errno> {
        let g = self.gpu_index(a.gpu_id)?;
        let domain = a.flags & alloc_flags::DOMAINS;
        if domain.count_ones() != 1
            || a.size == 0
            || !a.va_addr.is_multiple_of(PAGE)
            || a.va_addr.checked_add(a.size).is_none()
        {
            return Err(Errno::INVAL);
        }
        let size = a.size.checked_next_multiple_of(PAGE).ok_or(Errno::INVAL)?;
        let end = a.va_addr.checked_add(size).ok_or(Errno::INVAL)?;
        if self.svm_overlaps(a.va_addr, end)
            || (domain == alloc_flags::USERPTR && self.svm_overlaps(a.mmap_offset, a.mmap_offset.saturating_add(size)))
        {
            return Err(Errno::ADDRINUSE);
        }
        let mut bos = lock(&self.bos);
        if bos
            .by_handle
            .values()
            .any(|b| b.gpu == g && b.va < end && a.va_addr < b.va + b.size)
        {
            return Err(Errno::INVAL);
        }
        let gpu_id = u64::from(a.gpu_id);
        let (memory, mmap_offset) = match domain {
            alloc_flags::VRAM => {
                let total = self.machine().gpus[g].identity.vram_bytes;
                let mut used = lock(&self.device().vram_used);
                if used[g] + size > total {
                    return Err(Errno::NOMEM);
                }
                let off = self.backing.alloc(size)?;
                used[g] += size;
                (BoMemory::Vram(off), RENDER_MMAP_BASE + off)
            }
            alloc_flags::GTT => {
                let off = self.backing.alloc(size)?;
                (BoMemory::Gtt(off), RENDER_MMAP_BASE + off)
            }
            alloc_flags::USERPTR => {
                let addr = a.mmap_offset;
                if !addr.is_multiple_of(PAGE) {
                    return Err(Errno::INVAL);
                }
                match crate::kfd::userptr::take_migrated() {
                    // Daemon mode: the client moved the pages into a memfd it sent
                    // along; the driver reads them through its own mapping of it.
                    Some(fd) => {
                        let len = usize::try_from(size).map_err(|_| Errno::INVAL)?;
                        // SAFETY: a new shared mapping of the client's memfd at an
                        // address the kernel picks.
                        let host = unsafe {
                            rustix::mm::mmap(std::ptr::null_mut(), len, rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE, rustix::mm::MapFlags::SHARED, &fd, 0)
                        }? as u64;
                        (BoMemory::Migrated { host }, addr)
                    }
                    None => {
                        // The pages must exist (the kernel pins them).
                        let mut probe = [0u8; 1];
                        user.read(addr, &mut probe)?;
                        user.read(addr.checked_add(size - 1).ok_or(Errno::FAULT)?, &mut probe)?;
                        (BoMemory::User(addr), addr)
                    }
                }
            }
            alloc_flags::DOORBELL => (
                BoMemory::Doorbell,
                abi::mmap::TYPE_DOORBELL | (gpu_id << abi::mmap::GPU_ID_SHIFT),
            ),
            _ => (
                BoMemory::Mmio,
                abi::mmap::TYPE_MMIO | (gpu_id << abi::mmap::GPU_ID_SHIFT),
            ),
        };
        bos.next = bos.next.checked_add(1).ok_or(Errno::NOSPC)?;
        let handle = (gpu_id << 32) | u64::from(bos.next);
        bos.by_handle.insert(
            handle,
            Bo {
                gpu: g,
                va: a.va_addr,
                size,
                memory,
                flags: a.flags,
                mapped_on: Default::default(),
            },
        );
        a.handle = handle;
        a.mmap_offset = mmap_offset;
        Ok(0)
    }

    pub(crate) fn free_memory(&self, handle: u64) -> Result<(), Errno> {
        let bo = lock(&self.bos)
            .by_handle
            .remove(&handle)
            .ok_or(Errno::INVAL)?;
        for &g in &bo.mapped_on {
            self.unmap_from(g, &bo);
        }
        match bo.memory {
            BoMemory::Vram(off) => {
                self.backing.free(off, bo.size);
                let mut used = lock(&self.device().vram_used);
                used[bo.gpu] = used[bo.gpu].saturating_sub(bo.size);
            }
            BoMemory::Gtt(off) => self.backing.free(off, bo.size),
            BoMemory::Migrated { host } => {
                // SAFETY: the mapping made at allocation, which nothing uses any more
                // (the buffer was unmapped from every GPU above).
                let _ = unsafe { rustix::mm::munmap(host as *mut _, bo.size as usize) };
            }
            _ => {}
        }
        let mut settings = lock(&self.settings);
        if settings.event_page == Some(handle) {
            settings.event_page = None;
        }
        Ok(())
    }

    /// The host address the simulator reads a buffer at, if it has memory.
    fn host_of(&self, bo: &Bo) -> Option<u64> {
        match bo.memory {
            BoMemory::Vram(off) | BoMemory::Gtt(off) => Some(self.backing.host_address(off)),
            BoMemory::User(addr) | BoMemory::Migrated { host: addr } => Some(addr),
            BoMemory::Doorbell | BoMemory::Mmio => None,
        }
    }

    fn unmap_from(&self, g: usize, bo: &Bo) {
        let gpu = &self.machine().gpus[g];
        if self.host_of(bo).is_some() {
            let _ = gpu.memory.unmap_host(GpuAddr(bo.va));
        }
        gpu.shared.remote().remove(bo.va);
        gpu.shared.forget_programs(bo.va, bo.va + bo.size);
    }

    fn map_memory(
        &self,
        a: &mut abi::MapMemory,
        user: &impl UserMemory,
        map: bool,
    ) -> Result<i32, Errno> {
        let ids: Vec<u32> =
            user.read_array(a.device_ids_array_ptr, a.n_devices as usize, MAX_ARRAY)?;
        if a.n_devices == 0 || a.n_success > a.n_devices {
            return Err(Errno::INVAL);
        }
        let gpus = ids
            .iter()
            .map(|&id| self.gpu_index(id))
            .collect::<Result<Vec<_>, _>>()?;
        let mut bos = lock(&self.bos);
        let bo = bos.by_handle.get(&a.handle).cloned().ok_or(Errno::INVAL)?;
        let mut mapped_on = bo.mapped_on.clone();
        for &g in &gpus[a.n_success as usize..] {
            if map {
                if mapped_on.contains(&g) {
                    a.n_success += 1;
                    continue;
                }
                if let Some(host) = self.host_of(&bo) {
                    let fine = matches!(bo.memory, BoMemory::Gtt(_) | BoMemory::User(_) | BoMemory::Migrated { .. })
                        || bo.flags & (alloc_flags::COHERENT | alloc_flags::UNCACHED) != 0;
                    let kind = if fine { MemKind::Fine } else { MemKind::Coarse };
                    // SAFETY: `host` is the driver's mapping of the buffer's backing
                    // pages (live until the buffer is freed, which unmaps it here first)
                    // or application memory the application registered for the GPU,
                    // whose pages the driver checked at registration.
                    unsafe {
                        self.machine().gpus[g]
                            .memory
                            .map_host(GpuAddr(bo.va), bo.size, host, kind)
                    }
                    .map_err(|_| Errno::INVAL)?;
                }
                if matches!(bo.memory, BoMemory::Vram(_)) && bo.gpu != g {
                    // A peer's VRAM: its lines travel over the XGMI links.
                    let gpus = &self.machine().gpus;
                    gpus[g].shared.remote().add(bo.va..bo.va + bo.size, &gpus[bo.gpu].name);
                }
                mapped_on.insert(g);
            } else if mapped_on.remove(&g) {
                self.unmap_from(g, &bo);
            }
            a.n_success += 1;
        }
        if let Some(b) = bos.by_handle.get_mut(&a.handle) {
            b.mapped_on = mapped_on;
        }
        Ok(0)
    }

    fn create_queue(&self, a: &mut abi::CreateQueue) -> Result<i32, Errno> {
        let g = self.gpu_index(a.gpu_id)?;
        if a.queue_type != abi::queue_type::COMPUTE_AQL {
            let what = match a.queue_type {
                abi::queue_type::COMPUTE => "PM4 compute",
                abi::queue_type::SDMA | abi::queue_type::SDMA_XGMI => "SDMA",
                _ => "unknown-type",
            };
            self.warn_once(format!(
                "CREATE_QUEUE: {what} queues are not simulated (only AQL compute queues)"
            ));
            return Err(Errno::INVAL);
        }
        let ring = u64::from(a.ring_size);
        if !ring.is_power_of_two() || ring < PACKET_BYTES * 4 || a.ring_base_address == 0 {
            return Err(Errno::INVAL);
        }
        if a.read_pointer_address < 128 || a.write_pointer_address == 0 {
            return Err(Errno::INVAL);
        }
        let gpu = &self.machine().gpus[g];
        let desc = QueueDesc {
            ring: GpuAddr(a.ring_base_address),
            packets: ring / PACKET_BYTES,
            read_index: GpuAddr(a.read_pointer_address),
            write_index: GpuAddr(a.write_pointer_address),
            // ROCR's amd_queue_t: read_dispatch_id is at byte 128.
            queue_object: GpuAddr(a.read_pointer_address - 128),
        };
        let mut queues = lock(&self.queues);
        let slots = (abi::DOORBELL_PAGE_BYTES / 8) as u32;
        let id = (0..slots)
            .find(|i| !queues.contains_key(i))
            .ok_or(Errno::NOSPC)?;
        let hw = gpu.shared.add_queue(desc);
        self.own_queue(g, hw);
        queues.insert(id, Queue { gpu: g, hw, gws: false });
        drop(queues);
        a.queue_id = id;
        a.doorbell_offset = abi::mmap::TYPE_DOORBELL
            | (u64::from(a.gpu_id) << abi::mmap::GPU_ID_SHIFT)
            | (u64::from(id) * 8);
        gpu.ring(hw);
        Ok(0)
    }
}
