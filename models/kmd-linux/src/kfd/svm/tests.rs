//! The SVM and XNACK ioctls on this process's memory: malformed arguments get the real
//! driver's answers and change nothing; attributes split and aggregate as in the driver;
//! the GPU reaches the ranges (at once with XNACK off, through served faults with it on).

use std::sync::Arc;

use amdgpu::gpu::ids::GpuAddr;
use amdgpu::gpu::memory::GpuMemory;

use crate::kfd::abi::svm::{attr, flag, LOCATION_SYSMEM, LOCATION_UNDEFINED, OP_GET_ATTR, OP_SET_ATTR};
use crate::kfd::abi::{self, alloc_flags, request, SvmArgs, SvmAttribute};
use crate::kfd::tests::{aql_queue, call, open};
use crate::kfd::user::OwnMemory;
use crate::kfd::Kfd;
use crate::Errno;

const P: u64 = 4096;

/// An address where nothing is mapped: below every mapping the kernel places top-down
/// (other tests' GPU arenas fill the high addresses) and above `mmap_min_addr`.
const NOWHERE: u64 = 0x10_0000;

/// A driver, its GPU's id and the GPU's memory.
fn setup() -> (Kfd, u32, Arc<GpuMemory>) {
    let k = open();
    let gpu = k.system().gpus[0].gpu_id;
    let mem = k.machine().gpus[0].memory.clone();
    (k, gpu, mem)
}

/// Anonymous memory of `pages` pages with protection `prot`, unmapped on drop.
struct Area {
    addr: u64,
    len: usize,
}

impl Area {
    fn new(pages: u64, prot: rustix::mm::ProtFlags) -> Area {
        let len = (pages * P) as usize;
        // SAFETY: a fresh private mapping.
        let addr = unsafe { rustix::mm::mmap_anonymous(std::ptr::null_mut(), len, prot, rustix::mm::MapFlags::PRIVATE) }.unwrap() as u64;
        Area { addr, len }
    }

    fn rw(pages: u64) -> Area {
        Area::new(pages, rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE)
    }

    fn word(&self, i: u64) -> *mut u64 {
        (self.addr + 8 * i) as *mut u64
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: our own mapping.
        let _ = unsafe { rustix::mm::munmap(self.addr as *mut _, self.len) };
    }
}

/// One SVM call: the request number libhsakmt builds (the struct's size plus the
/// attributes) and the result; `attrs` is updated from the driver's copy.
fn svm(k: &Kfd, op: u32, start: u64, size: u64, attrs: &mut [SvmAttribute]) -> Result<i32, Errno> {
    svm_counted(k, op, start, size, attrs.len() as u32, attrs)
}

fn svm_counted(k: &Kfd, op: u32, start: u64, size: u64, nattr: u32, attrs: &mut [SvmAttribute]) -> Result<i32, Errno> {
    let head = SvmArgs { start_addr: start, size, op, nattr };
    let mut buf = bytemuck::bytes_of(&head).to_vec();
    buf.extend_from_slice(bytemuck::cast_slice(attrs));
    let req = request::SVM + ((attrs.len() as u64 * 8) << 16);
    let r = k.kfd_ioctl(req, buf.as_mut_ptr() as u64, &OwnMemory);
    attrs.copy_from_slice(bytemuck::cast_slice(&buf[24..]));
    r
}

fn a(ty: u32, value: u32) -> SvmAttribute {
    SvmAttribute { ty, value }
}

/// Every attribute GET_ATTR can report for GPU `gpu_id`.
fn get_all(k: &Kfd, start: u64, size: u64, gpu_id: u32) -> Vec<SvmAttribute> {
    let mut q = [a(attr::PREFERRED_LOC, 0), a(attr::PREFETCH_LOC, 0), a(attr::ACCESS, gpu_id), a(attr::SET_FLAGS, 0), a(attr::CLR_FLAGS, 0), a(attr::GRANULARITY, 0)];
    svm(k, OP_GET_ATTR, start, size, &mut q).unwrap();
    q.to_vec()
}

fn xnack(k: &Kfd, value: i32) -> Result<i32, Errno> {
    let mut x = abi::SetXnackMode { xnack_enabled: value };
    call(k, request::SET_XNACK_MODE, &mut x)?;
    Ok(x.xnack_enabled)
}

fn finish(k: Kfd) {
    k.close();
    k.device().stop();
}

#[test]
fn malformed_svm_calls_get_the_drivers_errno_and_change_nothing() {
    let (k, gpu, mem) = setup();
    let area = Area::rw(4);
    let before = mem.allocations();
    let defaults = get_all(&k, area.addr, 4 * P, gpu);
    let access = |g| [a(attr::ACCESS, g)];
    /// What is wrong, the operation, start, size, attributes and the driver's answer.
    type Case = (&'static str, u32, u64, u64, Vec<SvmAttribute>, Errno);
    let cases: Vec<Case> = vec![
        ("no size", OP_SET_ATTR, area.addr, 0, access(gpu).to_vec(), Errno::INVAL),
        ("address 0", OP_SET_ATTR, 0, P, access(gpu).to_vec(), Errno::INVAL),
        ("unaligned start", OP_SET_ATTR, area.addr + 8, P, access(gpu).to_vec(), Errno::INVAL),
        ("unaligned size", OP_SET_ATTR, area.addr, P + 1, access(gpu).to_vec(), Errno::INVAL),
        ("unknown attribute", OP_SET_ATTR, area.addr, P, vec![a(attr::ACCESS, gpu), a(99, 0)], Errno::INVAL),
        ("unknown gpu", OP_SET_ATTR, area.addr, P, access(gpu ^ 1).to_vec(), Errno::INVAL),
        ("prefetch nowhere", OP_SET_ATTR, area.addr, P, vec![a(attr::PREFETCH_LOC, LOCATION_UNDEFINED)], Errno::INVAL),
        ("unmapped memory", OP_SET_ATTR, NOWHERE, P, access(gpu).to_vec(), Errno::FAULT),
        ("past the address space", OP_SET_ATTR, area.addr, u64::MAX - 4095, access(gpu).to_vec(), Errno::FAULT),
        ("get in-place", OP_GET_ATTR, area.addr, P, vec![a(attr::ACCESS_IN_PLACE, gpu)], Errno::INVAL),
        ("get of an unknown gpu", OP_GET_ATTR, area.addr, P, access(7).to_vec(), Errno::INVAL),
        ("get of unmapped memory", OP_GET_ATTR, NOWHERE, P, access(gpu).to_vec(), Errno::FAULT),
    ];
    for (what, op, start, size, mut attrs, want) in cases {
        assert_eq!(svm(&k, op, start, size, &mut attrs), Err(want), "{what}");
    }
    // More attributes counted than the request carries: EINVAL, nothing read past it.
    for count in [2, 2044, u32::MAX] {
        assert_eq!(svm_counted(&k, OP_SET_ATTR, area.addr, P, count, &mut access(gpu)), Err(Errno::INVAL), "nattr {count}");
    }
    // An unknown operation: the driver's positive EINVAL, as the ioctl's return value.
    assert_eq!(svm(&k, 7, area.addr, P, &mut access(gpu)), Ok(libc::EINVAL));
    assert_eq!(get_all(&k, area.addr, 4 * P, gpu), defaults);
    assert_eq!(mem.allocations(), before, "no GPU mapping appeared");
    assert!(mem.read_u64(GpuAddr(area.addr)).is_err());
    finish(k);
}

#[test]
fn ranges_split_aggregate_and_map_at_once_with_xnack_off() {
    let (k, gpu, mem) = setup();
    assert_eq!(xnack(&k, -1), Ok(0), "an MI210 starts with XNACK off");
    let area = Area::rw(8);
    // Defaults of memory no range covers.
    let d = get_all(&k, area.addr, 8 * P, gpu);
    assert_eq!((d[0].value, d[1].value, d[2].ty), (LOCATION_UNDEFINED, LOCATION_UNDEFINED, attr::NO_ACCESS));
    assert_eq!((d[3].value, d[4].value, d[5].value), (flag::HOST_ACCESS | flag::COHERENT, !(flag::HOST_ACCESS | flag::COHERENT), 9));
    // What hipMallocManaged does: ACCESS for the GPU. The whole range is mapped now.
    svm(&k, OP_SET_ATTR, area.addr, 8 * P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    // SAFETY: inside the area.
    unsafe { *area.word(5) = 0x1234 };
    assert_eq!(mem.read_u64(GpuAddr(area.addr + 40)).unwrap(), 0x1234);
    mem.write_u64(GpuAddr(area.addr + 7 * P), 77).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { *area.word(7 * P / 8) }, 77);
    // Advice on the middle pages splits the range; the GPU still sees one mapping, so
    // an access across the boundary of two ranges works.
    let mid = area.addr + 2 * P;
    let mut set = [a(attr::SET_FLAGS, flag::GPU_READ_MOSTLY), a(attr::PREFERRED_LOC, gpu), a(attr::GRANULARITY, 200)];
    svm(&k, OP_SET_ATTR, mid, 2 * P, &mut set).unwrap();
    mem.write(GpuAddr(mid - 4), &[9; 8]).unwrap();
    svm(&k, OP_SET_ATTR, mid, 2 * P, &mut [a(attr::CLR_FLAGS, flag::COHERENT)]).unwrap();
    let m = get_all(&k, mid, 2 * P, gpu);
    assert_eq!((m[0].value, m[2].ty, m[5].value), (gpu, attr::ACCESS, 0x3f));
    assert_eq!(m[3].value, flag::HOST_ACCESS | flag::GPU_READ_MOSTLY);
    let all = get_all(&k, area.addr, 8 * P, gpu);
    assert_eq!(all[0].value, LOCATION_UNDEFINED, "mixed preferred locations");
    assert_eq!(all[3].value, flag::HOST_ACCESS, "set in every page");
    assert_eq!(all[4].value, !(flag::HOST_ACCESS | flag::COHERENT | flag::GPU_READ_MOSTLY), "clear in every page");
    assert_eq!(all[5].value, 9, "the smallest granularity");
    // GPU_RO: the GPU may read the pages, not write them.
    svm(&k, OP_SET_ATTR, mid, P, &mut [a(attr::SET_FLAGS, flag::GPU_RO)]).unwrap();
    assert!(mem.write_u64(GpuAddr(mid), 1).is_err());
    assert_eq!(mem.read(GpuAddr(mid), &mut [0u8; 8]), Ok(()));
    // Prefetch to the GPU and back: recorded, the data stays where it is.
    svm(&k, OP_SET_ATTR, area.addr, 8 * P, &mut [a(attr::PREFETCH_LOC, gpu)]).unwrap();
    assert_eq!(get_all(&k, area.addr, 8 * P, gpu)[1].value, gpu);
    svm(&k, OP_SET_ATTR, area.addr, 8 * P, &mut [a(attr::PREFETCH_LOC, LOCATION_SYSMEM)]).unwrap();
    assert_eq!(get_all(&k, area.addr, 8 * P, gpu)[1].value, LOCATION_SYSMEM);
    assert_eq!(mem.read_u64(GpuAddr(area.addr + 40)).unwrap(), 0x1234);
    // A buffer may not be allocated over SVM memory.
    let mut b = abi::AllocMemory { va_addr: area.addr, size: P, gpu_id: gpu, flags: alloc_flags::GTT, ..Default::default() };
    assert_eq!(call(&k, request::ALLOC_MEMORY_OF_GPU, &mut b), Err(Errno::ADDRINUSE));
    // The application unmaps part of it: those pages leave the range and the GPU.
    k.unmapping(area.addr as usize, 2 * P as usize);
    assert!(mem.read_u64(GpuAddr(area.addr)).is_err());
    assert_eq!(get_all(&k, area.addr, 2 * P, gpu)[2].ty, attr::NO_ACCESS);
    assert_eq!(mem.read_u64(GpuAddr(area.addr + 7 * P)).unwrap(), 77);
    finish(k);
}

#[test]
fn read_only_and_inaccessible_memory() {
    let (k, gpu, mem) = setup();
    let ro = Area::new(2, rustix::mm::ProtFlags::READ);
    svm(&k, OP_SET_ATTR, ro.addr, 2 * P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    assert_eq!(mem.read_u64(GpuAddr(ro.addr)), Ok(0));
    assert!(mem.write_u64(GpuAddr(ro.addr), 1).is_err(), "a read-only mapping refuses GPU stores");
    // Memory the GPU cannot read (here the second half of a mapping): the mapping
    // fails, and the call changes nothing.
    let half = Area::rw(4);
    // SAFETY: our own mapping.
    unsafe { rustix::mm::mprotect((half.addr + 2 * P) as *mut _, 2 * P as usize, rustix::mm::MprotectFlags::empty()) }.unwrap();
    assert_eq!(svm(&k, OP_SET_ATTR, half.addr, 4 * P, &mut [a(attr::ACCESS, gpu)]), Err(Errno::FAULT));
    assert_eq!(get_all(&k, half.addr, 4 * P, gpu)[2].ty, attr::NO_ACCESS);
    assert!(mem.read_u64(GpuAddr(half.addr)).is_err());
    finish(k);
}

#[test]
fn with_xnack_on_gpu_faults_are_served_by_the_driver() {
    let (k, gpu, mem) = setup();
    assert_eq!(xnack(&k, 1), Ok(1));
    assert_eq!(xnack(&k, -1), Ok(1));
    // A managed range: registered, not mapped until the GPU touches it.
    let area = Area::rw(1024);
    svm(&k, OP_SET_ATTR, area.addr, 1024 * P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    assert!(mem.allocations().iter().all(|r| r.end <= area.addr || r.start >= area.addr + 1024 * P));
    // SAFETY: inside the area.
    unsafe { *area.word(3) = 5 };
    assert_eq!(mem.read_u64(GpuAddr(area.addr + 24)), Ok(5), "the fault maps the page");
    assert!(mem.allocations().iter().any(|r| r.contains(&(area.addr + 24))));
    // The largest granularity: one fault maps the whole range.
    let whole = Area::rw(16);
    svm(&k, OP_SET_ATTR, whole.addr, 16 * P, &mut [a(attr::ACCESS, gpu), a(attr::GRANULARITY, 0x3f)]).unwrap();
    assert_eq!(mem.read_u64(GpuAddr(whole.addr + 9 * P)), Ok(0));
    assert!(mem.allocations().iter().any(|r| r.start <= whole.addr && whole.addr + 16 * P <= r.end));
    // Plain memory the application never registered: a range is made for it.
    let mut heap = vec![0u64; 4096];
    heap[100] = 42;
    let at = heap.as_ptr() as u64 + 800;
    assert_eq!(mem.read_u64(GpuAddr(at)), Ok(42));
    mem.write_u64(GpuAddr(at + 8), 43).unwrap();
    assert_eq!(heap[101], 43);
    assert_eq!(get_all(&k, at & !(P - 1), P, gpu)[2].ty, attr::ACCESS);
    // No memory there, a GPU without access, a store to read-only memory: faults.
    assert!(mem.read_u64(GpuAddr(NOWHERE)).is_err());
    let denied = Area::rw(4);
    svm(&k, OP_SET_ATTR, denied.addr, 4 * P, &mut [a(attr::NO_ACCESS, gpu)]).unwrap();
    assert!(mem.read_u64(GpuAddr(denied.addr)).is_err());
    let ro = Area::new(1, rustix::mm::ProtFlags::READ);
    assert_eq!(mem.read_u64(GpuAddr(ro.addr)), Ok(0));
    assert!(mem.write_u64(GpuAddr(ro.addr), 1).is_err());
    // Back to XNACK off: GPU faults are fatal again.
    assert_eq!(xnack(&k, 0), Ok(0));
    let late = Area::rw(1);
    assert!(mem.read_u64(GpuAddr(late.addr)).is_err());
    drop(heap);
    finish(k);
}

#[test]
fn xnack_changes_only_without_queues() {
    let (k, gpu, _) = setup();
    call(&k, request::CREATE_QUEUE, &mut aql_queue(gpu)).unwrap();
    assert_eq!(xnack(&k, 1), Err(Errno::BUSY));
    assert_eq!(xnack(&k, 0), Err(Errno::BUSY), "the driver refuses any change request with queues");
    assert_eq!(xnack(&k, -1), Ok(0));
    finish(k);
}

#[test]
fn buffer_objects_are_not_svm_memory() {
    let (k, gpu, _) = setup();
    let alloc = |va: u64, flags: u32| {
        let mut b = abi::AllocMemory { va_addr: va, size: 4 * P, gpu_id: gpu, flags: flags | alloc_flags::WRITABLE, ..Default::default() };
        call(&k, request::ALLOC_MEMORY_OF_GPU, &mut b).unwrap();
        b
    };
    let map_on_gpu = |handle: u64| {
        let ids = [gpu];
        let mut m = abi::MapMemory { handle, device_ids_array_ptr: ids.as_ptr() as u64, n_devices: 1, n_success: 0 };
        call(&k, request::MAP_MEMORY_TO_GPU, &mut m).unwrap();
    };
    // The application's mapping of a VRAM buffer is a device mapping: EFAULT.
    let vram_va = Area::new(4, rustix::mm::ProtFlags::empty());
    let vram = alloc(vram_va.addr, alloc_flags::VRAM);
    // SAFETY: maps the buffer over our reservation.
    let p = unsafe {
        k.render_mmap(vram_va.addr as *mut _, 4 * P as usize, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_FIXED, vram.mmap_offset)
    }
    .unwrap();
    assert_eq!(p as u64, vram_va.addr);
    assert_eq!(svm(&k, OP_SET_ATTR, vram_va.addr, P, &mut [a(attr::ACCESS, gpu)]), Err(Errno::FAULT));
    // A span holding a buffer mapped on the GPU (at the application's own memory):
    // EADDRINUSE.
    let plain = Area::rw(8);
    let gtt = alloc(plain.addr + 4 * P, alloc_flags::GTT);
    map_on_gpu(gtt.handle);
    assert_eq!(svm(&k, OP_SET_ATTR, plain.addr, 8 * P, &mut [a(attr::ACCESS, gpu)]), Err(Errno::ADDRINUSE));
    // Beside it is fine.
    svm(&k, OP_SET_ATTR, plain.addr, 4 * P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    finish(k);
}

#[test]
fn a_store_to_read_only_memory_is_reported_as_one() {
    use amdgpu::gpu::shared::{GpuFault, HostHooks};
    let (k, gpu, mem) = setup();
    let ro = Area::new(1, rustix::mm::ProtFlags::READ);
    svm(&k, OP_SET_ATTR, ro.addr, P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    let mut q = aql_queue(gpu);
    call(&k, request::CREATE_QUEUE, &mut q).unwrap();
    let hw = crate::kfd::lock(&k.queues)[&q.queue_id].hw;
    let mut e = abi::CreateEvent { event_type: abi::event_type::MEMORY, ..Default::default() };
    call(&k, request::CREATE_EVENT, &mut e).unwrap();
    let hooks = crate::kfd::Hooks { router: k.device().router.clone(), gpu: 0, gpu_id: gpu };
    let failure_of = |addr: u64| {
        let fault = GpuFault { kernel: "k".into(), dispatch: 1, place: "test".into(), message: "fault".into(), addr: Some(addr) };
        hooks.fault(Some(hw), &fault);
        let (_, data) = k.events.wait(&[e.event_id], false, 0).unwrap();
        let f = data[0].memory_exception_data.failure;
        (f.not_present, f.read_only)
    };
    let store = mem.write_u64(GpuAddr(ro.addr + 8), 1).unwrap_err();
    assert_eq!(failure_of(store.addr), (0, 1), "ROCR: Write access to a read-only page");
    let wild = mem.read_u64(GpuAddr(NOWHERE)).unwrap_err();
    assert_eq!(failure_of(wild.addr), (1, 0), "ROCR: Page not present");
    finish(k);
}

#[test]
fn gpu_mappings_follow_mprotect() {
    let (k, gpu, mem) = setup();
    let area = Area::rw(4);
    svm(&k, OP_SET_ATTR, area.addr, 4 * P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    mem.write_u64(GpuAddr(area.addr + P), 5).unwrap();
    let protect = |page: u64, prot: rustix::mm::MprotectFlags| {
        let (addr, len) = ((area.addr + page * P) as usize, P as usize);
        k.svm_protecting(addr, len, false);
        // SAFETY: our own mapping.
        unsafe { rustix::mm::mprotect(addr as *mut _, len, prot) }.unwrap();
        k.svm_protecting(addr, len, true);
    };
    // XNACK off: the page is mapped again at once, read-only now.
    protect(1, rustix::mm::MprotectFlags::READ);
    assert_eq!(mem.read_u64(GpuAddr(area.addr + P)), Ok(5));
    assert!(mem.write_u64(GpuAddr(area.addr + P), 6).is_err());
    mem.write_u64(GpuAddr(area.addr), 7).unwrap();
    // No access at all: the GPU loses the page (it would fault, not crash the simulator).
    protect(2, rustix::mm::MprotectFlags::empty());
    assert!(mem.read_u64(GpuAddr(area.addr + 2 * P)).is_err());
    // Writable again.
    protect(1, rustix::mm::MprotectFlags::READ | rustix::mm::MprotectFlags::WRITE);
    protect(2, rustix::mm::MprotectFlags::READ | rustix::mm::MprotectFlags::WRITE);
    mem.write_u64(GpuAddr(area.addr + P), 6).unwrap();
    mem.write_u64(GpuAddr(area.addr + 2 * P), 8).unwrap();
    // SAFETY: inside the area.
    assert_eq!(unsafe { (*area.word(P / 8), *area.word(2 * P / 8)) }, (6, 8));
    finish(k);
}

#[test]
fn a_doorbell_drops_mappings_of_memory_changed_behind_the_drivers_back() {
    let (k, gpu, mem) = setup();
    let area = Area::rw(4);
    svm(&k, OP_SET_ATTR, area.addr, 4 * P, &mut [a(attr::ACCESS, gpu)]).unwrap();
    // Changed without telling the driver (as the C library's own calls do): page 1
    // inaccessible, page 2 read-only.
    // SAFETY: our own mapping.
    unsafe {
        rustix::mm::mprotect((area.addr + P) as *mut _, P as usize, rustix::mm::MprotectFlags::empty()).unwrap();
        rustix::mm::mprotect((area.addr + 2 * P) as *mut _, P as usize, rustix::mm::MprotectFlags::READ).unwrap();
    }
    k.svm.revalidate();
    assert!(mem.read_u64(GpuAddr(area.addr + P)).is_err(), "no mapping of the inaccessible page");
    assert!(mem.write_u64(GpuAddr(area.addr + 2 * P), 1).is_err(), "no writable mapping of the read-only page");
    mem.write_u64(GpuAddr(area.addr + 3 * P), 1).unwrap();
    mem.write_u64(GpuAddr(area.addr), 1).unwrap();
    for page in [1, 2] {
        assert_eq!(get_all(&k, area.addr + page * P, P, gpu)[2].ty, attr::ACCESS, "page {page} keeps its range");
    }
    finish(k);
}
