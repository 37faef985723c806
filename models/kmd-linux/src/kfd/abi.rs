//! The KFD ioctl ABI (`linux/kfd_ioctl.h`, interface version 1.11 plus the later
//! numbers ROCm uses) and the amdgpu DRM ioctls libdrm needs: request numbers, argument
//! structs and flags. Every struct is plain data (`bytemuck::Pod`); its size is checked
//! against the size encoded in its request number.

use bytemuck::{Pod, Zeroable};

/// The interface version this driver implements.
pub const VERSION: (u32, u32) = (1, 11);

/// `_IOC` direction bits.
pub mod dir {
    /// The kernel writes the argument back (`_IOR`).
    pub const READ: u64 = 2;
    /// The kernel reads the argument (`_IOW`).
    pub const WRITE: u64 = 1;
}

/// A decoded ioctl request number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Direction bits ([`dir`]).
    pub dir: u64,
    /// The type character (`'K'` for KFD, `'d'` for DRM).
    pub ty: u8,
    /// The command number.
    pub nr: u8,
    /// Argument bytes.
    pub size: usize,
}

impl Request {
    /// Splits a request number into its fields.
    pub fn decode(request: u64) -> Request {
        Request {
            dir: (request >> 30) & 3,
            ty: ((request >> 8) & 0xff) as u8,
            nr: (request & 0xff) as u8,
            size: ((request >> 16) & 0x3fff) as usize,
        }
    }
}

const fn ioc(dir: u64, ty: u8, nr: u8, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | ((ty as u64) << 8) | nr as u64
}
const fn iowr<T>(ty: u8, nr: u8) -> u64 {
    ioc(dir::READ | dir::WRITE, ty, nr, size_of::<T>())
}
const fn iow<T>(ty: u8, nr: u8) -> u64 {
    ioc(dir::WRITE, ty, nr, size_of::<T>())
}
const fn ior<T>(ty: u8, nr: u8) -> u64 {
    ioc(dir::READ, ty, nr, size_of::<T>())
}

/// KFD command numbers (`AMDKFD_IOC_*`, the low byte of the request).
pub mod nr {
    #![allow(missing_docs)]
    pub const GET_VERSION: u8 = 0x01;
    pub const CREATE_QUEUE: u8 = 0x02;
    pub const DESTROY_QUEUE: u8 = 0x03;
    pub const SET_MEMORY_POLICY: u8 = 0x04;
    pub const GET_CLOCK_COUNTERS: u8 = 0x05;
    pub const GET_PROCESS_APERTURES: u8 = 0x06;
    pub const UPDATE_QUEUE: u8 = 0x07;
    pub const CREATE_EVENT: u8 = 0x08;
    pub const DESTROY_EVENT: u8 = 0x09;
    pub const SET_EVENT: u8 = 0x0a;
    pub const RESET_EVENT: u8 = 0x0b;
    pub const WAIT_EVENTS: u8 = 0x0c;
    pub const SET_SCRATCH_BACKING_VA: u8 = 0x11;
    pub const GET_TILE_CONFIG: u8 = 0x12;
    pub const SET_TRAP_HANDLER: u8 = 0x13;
    pub const GET_PROCESS_APERTURES_NEW: u8 = 0x14;
    pub const ACQUIRE_VM: u8 = 0x15;
    pub const ALLOC_MEMORY_OF_GPU: u8 = 0x16;
    pub const FREE_MEMORY_OF_GPU: u8 = 0x17;
    pub const MAP_MEMORY_TO_GPU: u8 = 0x18;
    pub const UNMAP_MEMORY_FROM_GPU: u8 = 0x19;
    pub const SET_CU_MASK: u8 = 0x1a;
    pub const GET_QUEUE_WAVE_STATE: u8 = 0x1b;
    pub const GET_DMABUF_INFO: u8 = 0x1c;
    pub const IMPORT_DMABUF: u8 = 0x1d;
    pub const ALLOC_QUEUE_GWS: u8 = 0x1e;
    pub const SMI_EVENTS: u8 = 0x1f;
    pub const SVM: u8 = 0x20;
    pub const SET_XNACK_MODE: u8 = 0x21;
    pub const CRIU_OP: u8 = 0x22;
    pub const AVAILABLE_MEMORY: u8 = 0x23;
    pub const EXPORT_DMABUF: u8 = 0x24;
    pub const RUNTIME_ENABLE: u8 = 0x25;
    pub const DBG_TRAP: u8 = 0x26;
    /// The debugger ioctl of ROCm's own kernel driver before it went upstream.
    pub const DBG_TRAP_ROCM: u8 = 0x82;
}

/// The name of a KFD command, for messages.
pub fn kfd_name(nr: u8) -> &'static str {
    match nr {
        nr::GET_VERSION => "GET_VERSION",
        nr::CREATE_QUEUE => "CREATE_QUEUE",
        nr::DESTROY_QUEUE => "DESTROY_QUEUE",
        nr::SET_MEMORY_POLICY => "SET_MEMORY_POLICY",
        nr::GET_CLOCK_COUNTERS => "GET_CLOCK_COUNTERS",
        nr::GET_PROCESS_APERTURES => "GET_PROCESS_APERTURES",
        nr::UPDATE_QUEUE => "UPDATE_QUEUE",
        nr::CREATE_EVENT => "CREATE_EVENT",
        nr::DESTROY_EVENT => "DESTROY_EVENT",
        nr::SET_EVENT => "SET_EVENT",
        nr::RESET_EVENT => "RESET_EVENT",
        nr::WAIT_EVENTS => "WAIT_EVENTS",
        0x0d..=0x10 => "DBG_*_DEPRECATED",
        nr::SET_SCRATCH_BACKING_VA => "SET_SCRATCH_BACKING_VA",
        nr::GET_TILE_CONFIG => "GET_TILE_CONFIG",
        nr::SET_TRAP_HANDLER => "SET_TRAP_HANDLER",
        nr::GET_PROCESS_APERTURES_NEW => "GET_PROCESS_APERTURES_NEW",
        nr::ACQUIRE_VM => "ACQUIRE_VM",
        nr::ALLOC_MEMORY_OF_GPU => "ALLOC_MEMORY_OF_GPU",
        nr::FREE_MEMORY_OF_GPU => "FREE_MEMORY_OF_GPU",
        nr::MAP_MEMORY_TO_GPU => "MAP_MEMORY_TO_GPU",
        nr::UNMAP_MEMORY_FROM_GPU => "UNMAP_MEMORY_FROM_GPU",
        nr::SET_CU_MASK => "SET_CU_MASK",
        nr::GET_QUEUE_WAVE_STATE => "GET_QUEUE_WAVE_STATE",
        nr::GET_DMABUF_INFO => "GET_DMABUF_INFO",
        nr::IMPORT_DMABUF => "IMPORT_DMABUF",
        nr::ALLOC_QUEUE_GWS => "ALLOC_QUEUE_GWS",
        nr::SMI_EVENTS => "SMI_EVENTS",
        nr::SVM => "SVM",
        nr::SET_XNACK_MODE => "SET_XNACK_MODE",
        nr::CRIU_OP => "CRIU_OP",
        nr::AVAILABLE_MEMORY => "AVAILABLE_MEMORY",
        nr::EXPORT_DMABUF => "EXPORT_DMABUF",
        nr::RUNTIME_ENABLE => "RUNTIME_ENABLE",
        nr::DBG_TRAP | nr::DBG_TRAP_ROCM => "DBG_TRAP",
        _ => "an unknown command",
    }
}

/// `AMDKFD_IOC_*` type character.
pub const KFD_TYPE: u8 = b'K';
/// DRM type character.
pub const DRM_TYPE: u8 = b'd';

/// `kfd_ioctl_get_version_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct GetVersion {
    pub major_version: u32,
    pub minor_version: u32,
}

/// `KFD_IOC_QUEUE_TYPE_*`.
pub mod queue_type {
    /// PM4 compute queue.
    pub const COMPUTE: u32 = 0;
    /// SDMA queue.
    pub const SDMA: u32 = 1;
    /// AQL compute queue (what ROCR creates).
    pub const COMPUTE_AQL: u32 = 2;
    /// SDMA queue on an XGMI engine.
    pub const SDMA_XGMI: u32 = 3;
}

/// `kfd_ioctl_create_queue_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct CreateQueue {
    pub ring_base_address: u64,
    pub write_pointer_address: u64,
    pub read_pointer_address: u64,
    pub doorbell_offset: u64,
    pub ring_size: u32,
    pub gpu_id: u32,
    pub queue_type: u32,
    pub queue_percentage: u32,
    pub queue_priority: u32,
    pub queue_id: u32,
    pub eop_buffer_address: u64,
    pub eop_buffer_size: u64,
    pub ctx_save_restore_address: u64,
    pub ctx_save_restore_size: u32,
    pub ctl_stack_size: u32,
}

/// `kfd_ioctl_destroy_queue_args` (also `set_event`, `reset_event`, `destroy_event`:
/// one id and padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct IdArgs {
    pub id: u32,
    pub pad: u32,
}

/// `kfd_ioctl_update_queue_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct UpdateQueue {
    pub ring_base_address: u64,
    pub queue_id: u32,
    pub ring_size: u32,
    pub queue_percentage: u32,
    pub queue_priority: u32,
}

/// `kfd_ioctl_set_cu_mask_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SetCuMask {
    pub queue_id: u32,
    pub num_cu_mask: u32,
    pub cu_mask_ptr: u64,
}

/// `kfd_ioctl_alloc_queue_gws_args`: give queue `queue_id` the device's global wave
/// sync resources (`num_gws` non-zero) or take them back (`num_gws` zero); the driver
/// answers the first resource's index in `first_gws` (always 0: a queue gets them all).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct AllocQueueGws {
    pub queue_id: u32,
    pub num_gws: u32,
    pub first_gws: u32,
    pub pad: u32,
}

/// `kfd_ioctl_get_available_memory_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct AvailableMemory {
    pub available: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

/// `kfd_ioctl_set_memory_policy_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SetMemoryPolicy {
    pub alternate_aperture_base: u64,
    pub alternate_aperture_size: u64,
    pub gpu_id: u32,
    pub default_policy: u32,
    pub alternate_policy: u32,
    pub pad: u32,
}

/// `kfd_ioctl_get_clock_counters_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct ClockCounters {
    pub gpu_clock_counter: u64,
    pub cpu_clock_counter: u64,
    pub system_clock_counter: u64,
    pub system_clock_freq: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

/// `kfd_process_device_apertures`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct DeviceApertures {
    pub lds_base: u64,
    pub lds_limit: u64,
    pub scratch_base: u64,
    pub scratch_limit: u64,
    pub gpuvm_base: u64,
    pub gpuvm_limit: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

/// GPUs in the fixed array of the deprecated `GET_PROCESS_APERTURES`.
pub const NUM_OF_SUPPORTED_GPUS: usize = 7;

/// `kfd_ioctl_get_process_apertures_args` (deprecated, fixed array).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ProcessApertures {
    pub process_apertures: [DeviceApertures; NUM_OF_SUPPORTED_GPUS],
    pub num_of_nodes: u32,
    pub pad: u32,
}

/// `kfd_ioctl_get_process_apertures_new_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct ProcessAperturesNew {
    pub kfd_process_device_apertures_ptr: u64,
    pub num_of_nodes: u32,
    pub pad: u32,
}

/// `KFD_IOC_EVENT_*` types.
pub mod event_type {
    /// A signal event (completion signals, user events).
    pub const SIGNAL: u32 = 0;
    /// Topology change.
    pub const NODECHANGE: u32 = 1;
    /// Device state change.
    pub const DEVICESTATECHANGE: u32 = 2;
    /// Hardware exception (reset, ECC).
    pub const HW_EXCEPTION: u32 = 3;
    /// System event.
    pub const SYSTEM_EVENT: u32 = 4;
    /// Debug event.
    pub const DEBUG_EVENT: u32 = 5;
    /// Profiling event.
    pub const PROFILE_EVENT: u32 = 6;
    /// Queue event.
    pub const QUEUE_EVENT: u32 = 7;
    /// GPU memory exception (VM fault).
    pub const MEMORY: u32 = 8;
}

/// `KFD_IOC_WAIT_RESULT_*`.
pub mod wait_result {
    /// The wait condition was met.
    pub const COMPLETE: u32 = 0;
    /// The timeout expired.
    pub const TIMEOUT: u32 = 1;
    /// The wait failed.
    pub const FAIL: u32 = 2;
}

/// Signal events per process (`KFD_SIGNAL_EVENT_LIMIT`), the slots of the event page.
pub const SIGNAL_EVENT_LIMIT: u32 = 4096;

/// `kfd_ioctl_create_event_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct CreateEvent {
    pub event_page_offset: u64,
    pub event_trigger_data: u32,
    pub event_type: u32,
    pub auto_reset: u32,
    pub node_id: u32,
    pub event_id: u32,
    pub event_slot_index: u32,
}

/// `kfd_memory_exception_failure`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct MemoryExceptionFailure {
    pub not_present: u32,
    pub read_only: u32,
    pub no_execute: u32,
    pub imprecise: u32,
}

/// `kfd_hsa_memory_exception_data`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct MemoryExceptionData {
    pub failure: MemoryExceptionFailure,
    pub va: u64,
    pub gpu_id: u32,
    pub error_type: u32,
}

/// `kfd_event_data` (the union is the memory-exception variant, the larger one).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct EventData {
    pub memory_exception_data: MemoryExceptionData,
    pub kfd_event_data_ext: u64,
    pub event_id: u32,
    pub pad: u32,
}

/// `kfd_ioctl_wait_events_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct WaitEvents {
    pub events_ptr: u64,
    pub num_events: u32,
    pub wait_for_all: u32,
    pub timeout: u32,
    pub wait_result: u32,
}

/// `kfd_ioctl_set_scratch_backing_va_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SetScratchBackingVa {
    pub va_addr: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

/// `kfd_ioctl_get_tile_config_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct GetTileConfig {
    pub tile_config_ptr: u64,
    pub macro_tile_config_ptr: u64,
    pub num_tile_configs: u32,
    pub num_macro_tile_configs: u32,
    pub gpu_id: u32,
    pub gb_addr_config: u32,
    pub num_banks: u32,
    pub num_ranks: u32,
}

/// `kfd_ioctl_set_trap_handler_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SetTrapHandler {
    pub tba_addr: u64,
    pub tma_addr: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

/// `kfd_ioctl_acquire_vm_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct AcquireVm {
    pub drm_fd: u32,
    pub gpu_id: u32,
}

/// `KFD_IOC_ALLOC_MEM_FLAGS_*`.
pub mod alloc_flags {
    #![allow(missing_docs)]
    pub const VRAM: u32 = 1 << 0;
    pub const GTT: u32 = 1 << 1;
    pub const USERPTR: u32 = 1 << 2;
    pub const DOORBELL: u32 = 1 << 3;
    pub const MMIO_REMAP: u32 = 1 << 4;
    pub const WRITABLE: u32 = 1 << 31;
    pub const EXECUTABLE: u32 = 1 << 30;
    pub const PUBLIC: u32 = 1 << 29;
    pub const NO_SUBSTITUTE: u32 = 1 << 28;
    pub const AQL_QUEUE_MEM: u32 = 1 << 27;
    pub const COHERENT: u32 = 1 << 26;
    pub const UNCACHED: u32 = 1 << 25;
    /// The domain bits: exactly one must be set.
    pub const DOMAINS: u32 = VRAM | GTT | USERPTR | DOORBELL | MMIO_REMAP;
}

/// `kfd_ioctl_alloc_memory_of_gpu_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct AllocMemory {
    pub va_addr: u64,
    pub size: u64,
    pub handle: u64,
    pub mmap_offset: u64,
    pub gpu_id: u32,
    pub flags: u32,
}

/// `kfd_ioctl_free_memory_of_gpu_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct FreeMemory {
    pub handle: u64,
}

/// `kfd_ioctl_map_memory_to_gpu_args` and `kfd_ioctl_unmap_memory_from_gpu_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct MapMemory {
    pub handle: u64,
    pub device_ids_array_ptr: u64,
    pub n_devices: u32,
    pub n_success: u32,
}

/// `kfd_ioctl_set_xnack_mode_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SetXnackMode {
    pub xnack_enabled: i32,
}

/// `kfd_ioctl_svm_args` without its trailing array of [`SvmAttribute`]s (`nattr` of
/// them follow the struct; the request's encoded size covers them).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SvmArgs {
    pub start_addr: u64,
    pub size: u64,
    pub op: u32,
    pub nattr: u32,
}

/// `kfd_ioctl_svm_attribute`: a type (`svm::attr`) and its value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SvmAttribute {
    pub ty: u32,
    pub value: u32,
}

/// The SVM ioctl's operations, locations, attribute types and range flags
/// (`KFD_IOCTL_SVM_*`).
pub mod svm {
    /// `KFD_IOCTL_SVM_OP_SET_ATTR`.
    pub const OP_SET_ATTR: u32 = 0;
    /// `KFD_IOCTL_SVM_OP_GET_ATTR`.
    pub const OP_GET_ATTR: u32 = 1;
    /// `KFD_IOCTL_SVM_LOCATION_SYSMEM`: system memory.
    pub const LOCATION_SYSMEM: u32 = 0;
    /// `KFD_IOCTL_SVM_LOCATION_UNDEFINED`: no location.
    pub const LOCATION_UNDEFINED: u32 = 0xffff_ffff;

    /// `KFD_IOCTL_SVM_ATTR_*`.
    pub mod attr {
        #![allow(missing_docs)]
        pub const PREFERRED_LOC: u32 = 0;
        pub const PREFETCH_LOC: u32 = 1;
        pub const ACCESS: u32 = 2;
        pub const ACCESS_IN_PLACE: u32 = 3;
        pub const NO_ACCESS: u32 = 4;
        pub const SET_FLAGS: u32 = 5;
        pub const CLR_FLAGS: u32 = 6;
        pub const GRANULARITY: u32 = 7;
    }

    /// `KFD_IOCTL_SVM_FLAG_*`.
    pub mod flag {
        /// The host may access the range.
        pub const HOST_ACCESS: u32 = 0x01;
        /// Fine-grained coherence between every device with access.
        pub const COHERENT: u32 = 0x02;
        /// Any GPU of the hive is as good as the preferred one.
        pub const HIVE_LOCAL: u32 = 0x04;
        /// GPUs only read (their mappings are read-only).
        pub const GPU_RO: u32 = 0x08;
        /// GPUs may execute it.
        pub const GPU_EXEC: u32 = 0x10;
        /// GPUs mostly read.
        pub const GPU_READ_MOSTLY: u32 = 0x20;
        /// Keep GPU mappings even with XNACK on (newer drivers).
        pub const GPU_ALWAYS_MAPPED: u32 = 0x40;
        /// Extended-scope coherence (newer drivers).
        pub const EXT_COHERENT: u32 = 0x80;
    }
}

/// `kfd_ioctl_runtime_enable_args`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct RuntimeEnable {
    pub r_debug: u64,
    pub mode_mask: u32,
    pub capabilities_mask: u32,
}

/// `KFD_MMAP_*`: the type and GPU encoded in a device mmap offset.
pub mod mmap {
    /// Shift of the type bits.
    pub const TYPE_SHIFT: u64 = 62;
    /// Mask of the type bits.
    pub const TYPE_MASK: u64 = 3 << TYPE_SHIFT;
    /// Doorbell pages.
    pub const TYPE_DOORBELL: u64 = 3 << TYPE_SHIFT;
    /// The event page.
    pub const TYPE_EVENTS: u64 = 2 << TYPE_SHIFT;
    /// Reserved memory.
    pub const TYPE_RESERVED_MEM: u64 = 1 << TYPE_SHIFT;
    /// MMIO (the HDP flush page).
    pub const TYPE_MMIO: u64 = 0;
    /// Shift of the gpu id.
    pub const GPU_ID_SHIFT: u64 = 46;
    /// Mask of the gpu id.
    pub const GPU_ID_MASK: u64 = ((1 << 16) - 1) << GPU_ID_SHIFT;
}

/// Bytes of one process's doorbell page on gfx9 and later (1024 doorbells of 8 bytes).
pub const DOORBELL_PAGE_BYTES: u64 = 8192;

/// Request numbers.
pub mod request {
    use super::*;
    /// `AMDKFD_IOC_GET_VERSION`.
    pub const GET_VERSION: u64 = ior::<GetVersion>(KFD_TYPE, nr::GET_VERSION);
    /// `AMDKFD_IOC_CREATE_QUEUE`.
    pub const CREATE_QUEUE: u64 = iowr::<CreateQueue>(KFD_TYPE, nr::CREATE_QUEUE);
    /// `AMDKFD_IOC_DESTROY_QUEUE`.
    pub const DESTROY_QUEUE: u64 = iowr::<IdArgs>(KFD_TYPE, nr::DESTROY_QUEUE);
    /// `AMDKFD_IOC_SET_MEMORY_POLICY`.
    pub const SET_MEMORY_POLICY: u64 = iow::<SetMemoryPolicy>(KFD_TYPE, nr::SET_MEMORY_POLICY);
    /// `AMDKFD_IOC_GET_CLOCK_COUNTERS`.
    pub const GET_CLOCK_COUNTERS: u64 = iowr::<ClockCounters>(KFD_TYPE, nr::GET_CLOCK_COUNTERS);
    /// `AMDKFD_IOC_GET_PROCESS_APERTURES`.
    pub const GET_PROCESS_APERTURES: u64 =
        ior::<ProcessApertures>(KFD_TYPE, nr::GET_PROCESS_APERTURES);
    /// `AMDKFD_IOC_UPDATE_QUEUE`.
    pub const UPDATE_QUEUE: u64 = iow::<UpdateQueue>(KFD_TYPE, nr::UPDATE_QUEUE);
    /// `AMDKFD_IOC_CREATE_EVENT`.
    pub const CREATE_EVENT: u64 = iowr::<CreateEvent>(KFD_TYPE, nr::CREATE_EVENT);
    /// `AMDKFD_IOC_DESTROY_EVENT`.
    pub const DESTROY_EVENT: u64 = iow::<IdArgs>(KFD_TYPE, nr::DESTROY_EVENT);
    /// `AMDKFD_IOC_SET_EVENT`.
    pub const SET_EVENT: u64 = iow::<IdArgs>(KFD_TYPE, nr::SET_EVENT);
    /// `AMDKFD_IOC_RESET_EVENT`.
    pub const RESET_EVENT: u64 = iow::<IdArgs>(KFD_TYPE, nr::RESET_EVENT);
    /// `AMDKFD_IOC_WAIT_EVENTS`.
    pub const WAIT_EVENTS: u64 = iowr::<WaitEvents>(KFD_TYPE, nr::WAIT_EVENTS);
    /// `AMDKFD_IOC_SET_SCRATCH_BACKING_VA`.
    pub const SET_SCRATCH_BACKING_VA: u64 =
        iowr::<SetScratchBackingVa>(KFD_TYPE, nr::SET_SCRATCH_BACKING_VA);
    /// `AMDKFD_IOC_GET_TILE_CONFIG`.
    pub const GET_TILE_CONFIG: u64 = iowr::<GetTileConfig>(KFD_TYPE, nr::GET_TILE_CONFIG);
    /// `AMDKFD_IOC_SET_TRAP_HANDLER`.
    pub const SET_TRAP_HANDLER: u64 = iow::<SetTrapHandler>(KFD_TYPE, nr::SET_TRAP_HANDLER);
    /// `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`.
    pub const GET_PROCESS_APERTURES_NEW: u64 =
        iowr::<ProcessAperturesNew>(KFD_TYPE, nr::GET_PROCESS_APERTURES_NEW);
    /// `AMDKFD_IOC_ACQUIRE_VM`.
    pub const ACQUIRE_VM: u64 = iow::<AcquireVm>(KFD_TYPE, nr::ACQUIRE_VM);
    /// `AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`.
    pub const ALLOC_MEMORY_OF_GPU: u64 = iowr::<AllocMemory>(KFD_TYPE, nr::ALLOC_MEMORY_OF_GPU);
    /// `AMDKFD_IOC_FREE_MEMORY_OF_GPU`.
    pub const FREE_MEMORY_OF_GPU: u64 = iow::<FreeMemory>(KFD_TYPE, nr::FREE_MEMORY_OF_GPU);
    /// `AMDKFD_IOC_MAP_MEMORY_TO_GPU`.
    pub const MAP_MEMORY_TO_GPU: u64 = iowr::<MapMemory>(KFD_TYPE, nr::MAP_MEMORY_TO_GPU);
    /// `AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU`.
    pub const UNMAP_MEMORY_FROM_GPU: u64 = iowr::<MapMemory>(KFD_TYPE, nr::UNMAP_MEMORY_FROM_GPU);
    /// `AMDKFD_IOC_SET_CU_MASK`.
    pub const SET_CU_MASK: u64 = iow::<SetCuMask>(KFD_TYPE, nr::SET_CU_MASK);
    /// `AMDKFD_IOC_ALLOC_QUEUE_GWS`.
    pub const ALLOC_QUEUE_GWS: u64 = iowr::<AllocQueueGws>(KFD_TYPE, nr::ALLOC_QUEUE_GWS);
    /// `AMDKFD_IOC_SVM` with no attributes (libhsakmt adds `8 * nattr` to the size).
    pub const SVM: u64 = iowr::<SvmArgs>(KFD_TYPE, nr::SVM);
    /// `AMDKFD_IOC_SET_XNACK_MODE`.
    pub const SET_XNACK_MODE: u64 = iowr::<SetXnackMode>(KFD_TYPE, nr::SET_XNACK_MODE);
    /// `AMDKFD_IOC_AVAILABLE_MEMORY`.
    pub const AVAILABLE_MEMORY: u64 = iowr::<AvailableMemory>(KFD_TYPE, nr::AVAILABLE_MEMORY);
    /// `AMDKFD_IOC_RUNTIME_ENABLE`.
    pub const RUNTIME_ENABLE: u64 = iowr::<RuntimeEnable>(KFD_TYPE, nr::RUNTIME_ENABLE);
}

/// DRM: `drm_version` and the amdgpu `DRM_AMDGPU_INFO` query.
pub mod drm {
    use bytemuck::{Pod, Zeroable};

    /// `DRM_IOCTL_VERSION` command number.
    pub const NR_VERSION: u8 = 0x00;
    /// `DRM_IOCTL_GET_UNIQUE` command number.
    pub const NR_GET_UNIQUE: u8 = 0x01;
    /// `DRM_IOCTL_GET_CLIENT` command number.
    pub const NR_GET_CLIENT: u8 = 0x05;
    /// `DRM_IOCTL_GET_CAP` command number.
    pub const NR_GET_CAP: u8 = 0x0c;
    /// `DRM_IOCTL_GEM_CLOSE` command number.
    pub const NR_GEM_CLOSE: u8 = 0x09;
    /// `DRM_IOCTL_PRIME_HANDLE_TO_FD` command number.
    pub const NR_PRIME_HANDLE_TO_FD: u8 = 0x2d;
    /// Driver-private commands start here.
    pub const COMMAND_BASE: u8 = 0x40;
    /// `DRM_AMDGPU_INFO` (relative to [`COMMAND_BASE`]).
    pub const AMDGPU_INFO: u8 = 0x05;

    /// `struct drm_version` (pointers are user addresses).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
    pub struct Version {
        pub version_major: i32,
        pub version_minor: i32,
        pub version_patchlevel: i32,
        pub pad0: u32,
        pub name_len: u64,
        pub name: u64,
        pub date_len: u64,
        pub date: u64,
        pub desc_len: u64,
        pub desc: u64,
    }

    /// `struct drm_client` (DRM_IOCTL_GET_CLIENT).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
    pub struct Client {
        pub idx: i32,
        pub auth: i32,
        pub pid: u64,
        pub uid: u64,
        pub magic: u64,
        pub iocs: u64,
    }

    /// `struct drm_amdgpu_info` (the query; 32 bytes; the union's largest member is
    /// three u32 words plus one, read per query).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
    pub struct AmdgpuInfo {
        pub return_pointer: u64,
        pub return_size: u32,
        pub query: u32,
        pub words: [u32; 4],
    }

    /// `AMDGPU_INFO_*` queries.
    pub mod query {
        #![allow(missing_docs)]
        pub const ACCEL_WORKING: u32 = 0x00;
        pub const FW_VERSION: u32 = 0x0e;
        pub const VRAM_GTT: u32 = 0x14;
        pub const READ_MMR_REG: u32 = 0x15;
        pub const DEV_INFO: u32 = 0x16;
        pub const MEMORY: u32 = 0x19;
        pub const VIDEO_CAPS: u32 = 0x21;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_match_the_kernel_header() {
        // Values computed from linux/kfd_ioctl.h with the C preprocessor.
        assert_eq!(request::GET_VERSION, 0x8008_4b01);
        assert_eq!(request::CREATE_QUEUE, 0xc058_4b02);
        assert_eq!(request::ALLOC_MEMORY_OF_GPU, 0xc028_4b16);
        assert_eq!(request::WAIT_EVENTS, 0xc018_4b0c);
        assert_eq!(request::GET_PROCESS_APERTURES, 0x8190_4b06);
        assert_eq!(size_of::<EventData>(), 48);
        assert_eq!(request::SVM, 0xc018_4b20);
        assert_eq!(request::SET_XNACK_MODE, 0xc004_4b21);
        assert_eq!(request::ALLOC_QUEUE_GWS, 0xc010_4b1e);
        let r = Request::decode(request::MAP_MEMORY_TO_GPU);
        assert_eq!((r.ty, r.nr, r.size, r.dir), (b'K', 0x18, 24, 3));
    }
}
