//! The driver through its ioctl interface, on this process's memory.

use super::abi::{self, alloc_flags, request};
use amdgpu::gpu::shared::{GpuFault, HostHooks};
use super::user::OwnMemory;
use super::*;
use crate::config::{load_topology, DriverConfig};
use crate::identity::SystemIdentity;
use amdgpu::gpu::ids::GpuAddr;

pub(crate) fn open() -> Kfd {
    amdgpu::link_components();
    let topology = load_topology(None).unwrap();
    let system = SystemIdentity::with_fixed_host(&topology).unwrap();
    Kfd::open(&DriverConfig::single_partition(topology), system).unwrap()
}

pub(crate) fn call<T: bytemuck::Pod>(k: &Kfd, req: u64, a: &mut T) -> Result<i32, crate::Errno> {
    k.kfd_ioctl(req, a as *mut T as u64, &OwnMemory)
}

/// CREATE_QUEUE arguments of an AQL queue on `gpu_id` (addresses the driver only records).
pub(crate) fn aql_queue(gpu_id: u32) -> abi::CreateQueue {
    abi::CreateQueue {
        gpu_id,
        queue_type: abi::queue_type::COMPUTE_AQL,
        ring_size: 4096,
        ring_base_address: 0x1000,
        read_pointer_address: 0x2080,
        write_pointer_address: 0x2038,
        ..Default::default()
    }
}

#[test]
fn version_apertures_and_bad_pointers() {
    let k = open();
    let mut v = abi::GetVersion::default();
    call(&k, request::GET_VERSION, &mut v).unwrap();
    assert_eq!((v.major_version, v.minor_version), abi::VERSION);
    let mut q = abi::ProcessAperturesNew::default();
    call(&k, request::GET_PROCESS_APERTURES_NEW, &mut q).unwrap();
    assert_eq!(q.num_of_nodes, 1);
    let mut ap = [abi::DeviceApertures::default(); 1];
    q.kfd_process_device_apertures_ptr = ap.as_mut_ptr() as u64;
    call(&k, request::GET_PROCESS_APERTURES_NEW, &mut q).unwrap();
    assert_eq!(ap[0].gpu_id, k.system().gpus[0].gpu_id);
    assert!(ap[0].gpuvm_limit >= (1 << 47) - 1);
    // A pointer to nowhere is EFAULT, not a crash.
    q.kfd_process_device_apertures_ptr = 16;
    assert_eq!(
        call(&k, request::GET_PROCESS_APERTURES_NEW, &mut q),
        Err(crate::Errno::FAULT)
    );
    assert_eq!(
        k.kfd_ioctl(request::GET_VERSION, 8, &OwnMemory),
        Err(crate::Errno::FAULT)
    );
    // Unknown commands fail.
    assert_eq!(
        k.kfd_ioctl(0xc008_4b7f, &mut v as *mut _ as u64, &OwnMemory),
        Err(crate::Errno::INVAL)
    );
    k.close();
    k.device().stop();
}

#[test]
fn buffers_are_shared_between_application_and_gpu() {
    let k = open();
    let gpu_id = k.system().gpus[0].gpu_id;
    // Reserve an address like libhsakmt does, then allocate VRAM there.
    let size = 1 << 16;
    // SAFETY: a fresh reservation.
    let va = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            size,
            rustix::mm::ProtFlags::empty(),
            rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::NORESERVE,
        )
    }
    .unwrap() as u64;
    let mut a = abi::AllocMemory {
        va_addr: va,
        size: size as u64,
        gpu_id,
        flags: alloc_flags::VRAM | alloc_flags::WRITABLE,
        ..Default::default()
    };
    call(&k, request::ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    // Overlapping allocations are refused.
    let mut b = a;
    assert_eq!(
        call(&k, request::ALLOC_MEMORY_OF_GPU, &mut b),
        Err(crate::Errno::INVAL)
    );
    // SAFETY: maps the buffer over our reservation.
    let p = unsafe {
        k.render_mmap(
            va as *mut _,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            a.mmap_offset,
        )
    }
    .unwrap();
    assert_eq!(p as u64, va);
    let ids = [gpu_id];
    let mut m = abi::MapMemory {
        handle: a.handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: 1,
        n_success: 0,
    };
    call(&k, request::MAP_MEMORY_TO_GPU, &mut m).unwrap();
    assert_eq!(m.n_success, 1);
    // The application writes, the GPU reads; and back.
    // SAFETY: inside the mapping.
    unsafe { *(va as *mut u64).add(3) = 0xfeed };
    let mem = &k.machine().gpus[0].memory;
    assert_eq!(mem.read_u64(GpuAddr(va + 24)).unwrap(), 0xfeed);
    mem.write_u64(GpuAddr(va + 32), 0xbeef).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { *(va as *const u64).add(4) }, 0xbeef);
    // Unmapped from the GPU: its accesses fault.
    m.n_success = 0;
    call(&k, request::UNMAP_MEMORY_FROM_GPU, &mut m).unwrap();
    assert!(mem.read_u64(GpuAddr(va + 24)).is_err());
    let mut f = abi::FreeMemory { handle: a.handle };
    call(&k, request::FREE_MEMORY_OF_GPU, &mut f).unwrap();
    assert_eq!(
        call(&k, request::FREE_MEMORY_OF_GPU, &mut f),
        Err(crate::Errno::INVAL)
    );
    k.close();
    k.device().stop();
}

#[test]
fn queues_need_aql_and_sane_rings() {
    let k = open();
    let gpu_id = k.system().gpus[0].gpu_id;
    let mut q = abi::CreateQueue { queue_type: abi::queue_type::COMPUTE, ..aql_queue(gpu_id) };
    assert_eq!(
        call(&k, request::CREATE_QUEUE, &mut q),
        Err(crate::Errno::INVAL)
    );
    q.queue_type = abi::queue_type::COMPUTE_AQL;
    q.ring_size = 1000;
    assert_eq!(
        call(&k, request::CREATE_QUEUE, &mut q),
        Err(crate::Errno::INVAL)
    );
    q.ring_size = 4096;
    call(&k, request::CREATE_QUEUE, &mut q).unwrap();
    assert_eq!(
        q.doorbell_offset & abi::mmap::TYPE_MASK,
        abi::mmap::TYPE_DOORBELL
    );
    let mut d = abi::IdArgs {
        id: q.queue_id,
        pad: 0,
    };
    call(&k, request::DESTROY_QUEUE, &mut d).unwrap();
    assert_eq!(
        call(&k, request::DESTROY_QUEUE, &mut d),
        Err(crate::Errno::INVAL)
    );
    k.close();
    k.device().stop();
}

#[test]
fn gws_goes_to_one_queue_of_the_process_and_comes_back() {
    let k = open();
    let gpu_id = k.system().gpus[0].gpu_id;
    let shared = &k.machine().gpus[0].shared;
    let gws = |queue_id: u32, num_gws: u32| {
        let mut a = abi::AllocQueueGws { queue_id, num_gws, first_gws: 7, pad: 0 };
        call(&k, request::ALLOC_QUEUE_GWS, &mut a).map(|_| a.first_gws)
    };
    // No such queue.
    assert_eq!(gws(5, 1), Err(crate::Errno::INVAL));
    let mut q1 = aql_queue(gpu_id);
    call(&k, request::CREATE_QUEUE, &mut q1).unwrap();
    let mut q2 = aql_queue(gpu_id);
    call(&k, request::CREATE_QUEUE, &mut q2).unwrap();
    let hw = |id: u32| lock(&k.queues)[&id].hw;
    // Releasing what the queue does not hold.
    assert_eq!(gws(q1.queue_id, 0), Err(crate::Errno::INVAL));
    // ROCR asks for one resource; the queue gets them all, starting at 0.
    assert_eq!(gws(q1.queue_id, 1), Ok(0));
    assert!(shared.queue_has_gws(hw(q1.queue_id)));
    assert!(!shared.queue_has_gws(hw(q2.queue_id)));
    // One queue per process and GPU.
    assert_eq!(gws(q2.queue_id, 64), Err(crate::Errno::BUSY));
    assert_eq!(gws(q1.queue_id, 1), Err(crate::Errno::BUSY));
    assert_eq!(gws(q1.queue_id, 0), Ok(0));
    assert!(!shared.queue_has_gws(hw(q1.queue_id)));
    assert_eq!(gws(q2.queue_id, 64), Ok(0));
    // Destroying the queue gives them back.
    let q2_hw = hw(q2.queue_id);
    let mut d = abi::IdArgs { id: q2.queue_id, pad: 0 };
    call(&k, request::DESTROY_QUEUE, &mut d).unwrap();
    assert!(!shared.queue_has_gws(q2_hw));
    assert_eq!(gws(q1.queue_id, 1), Ok(0));
    // A short argument is zero-extended (num_gws 0: a release).
    let mut short = [q1.queue_id, 0];
    let req = (request::ALLOC_QUEUE_GWS & !(0x3fff << 16)) | (8 << 16);
    k.kfd_ioctl(req, short.as_mut_ptr() as u64, &OwnMemory).unwrap();
    assert!(!shared.queue_has_gws(hw(q1.queue_id)));
    // A bad pointer is EFAULT.
    assert_eq!(k.kfd_ioctl(request::ALLOC_QUEUE_GWS, 16, &OwnMemory), Err(crate::Errno::FAULT));
    k.close();
    k.device().stop();
}

#[test]
fn garbage_ioctls_fail_cleanly_and_leave_the_driver_usable() {
    // Random commands with random argument bytes (pointers inside them are almost
    // surely unmapped: EFAULT); nothing may panic, and the driver still works after.
    let k = open();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut failures = 0;
    for _ in 0..20_000 {
        let nr = (next() % 0x30) as u8;
        if nr == abi::nr::WAIT_EVENTS {
            continue; // may legitimately block until its timeout
        }
        let size = (next() % 128) as usize;
        let dir = next() % 4;
        let request = (dir << 30) | ((size as u64) << 16) | (u64::from(abi::KFD_TYPE) << 8) | u64::from(nr);
        let mut buf: Vec<u64> = (0..size.div_ceil(8).max(1)).map(|_| next()).collect();
        if next() % 2 == 0 {
            // A valid gpu id where structs usually have one, to reach deeper code.
            let id = k.system().gpus[0].gpu_id as u64;
            for w in buf.iter_mut().skip(2).step_by(3) {
                *w = (*w & !0xffff_ffff) | id;
            }
        }
        if k.kfd_ioctl(request, buf.as_mut_ptr() as u64, &OwnMemory).is_err() {
            failures += 1;
        }
    }
    assert!(failures > 10_000, "garbage mostly fails ({failures} failures)");
    let mut v = abi::GetVersion::default();
    call(&k, request::GET_VERSION, &mut v).unwrap();
    assert_eq!(v.major_version, abi::VERSION.0);
    k.close();
    k.device().stop();
}

#[test]
fn interrupts_and_faults_reach_only_the_process_that_owns_the_queue() {
    let first = open();
    let second = Kfd::attach(first.device().clone()).unwrap();
    let gpu_id = first.system().gpus[0].gpu_id;
    let queue_of = |k: &Kfd| {
        let mut q = aql_queue(gpu_id);
        call(k, request::CREATE_QUEUE, &mut q).unwrap();
        lock(&k.queues)[&q.queue_id].hw
    };
    let (hw1, hw2) = (queue_of(&first), queue_of(&second));
    assert_ne!(hw1, hw2);
    let memory_event = |k: &Kfd| {
        let mut e = abi::CreateEvent { event_type: abi::event_type::MEMORY, ..Default::default() };
        call(k, request::CREATE_EVENT, &mut e).unwrap();
        e.event_id
    };
    let (e1, e2) = (memory_event(&first), memory_event(&second));
    let hooks = Hooks { router: first.device().router.clone(), gpu: 0, gpu_id };
    let fault = GpuFault { kernel: "k".into(), dispatch: 1, place: "test".into(), message: "unmapped".into(), addr: Some(0xdead_0000) };
    hooks.fault(Some(hw2), &fault);
    let (r, data) = second.events.wait(&[e2], false, 0).unwrap();
    assert_eq!((r, data[0].memory_exception_data.va), (abi::wait_result::COMPLETE, 0xdead_0000));
    let failure = data[0].memory_exception_data.failure;
    assert_eq!((failure.not_present, failure.read_only), (1, 0), "nothing is mapped there");
    assert_eq!(first.events.wait(&[e1], false, 0).unwrap().0, abi::wait_result::TIMEOUT);
    // Signal events the same way: the owner of the queue only.
    let signal = |k: &Kfd| {
        let mut e = abi::CreateEvent { event_type: abi::event_type::SIGNAL, ..Default::default() };
        call(k, request::CREATE_EVENT, &mut e).unwrap();
        e.event_id
    };
    let (s1, s2) = (signal(&first), signal(&second));
    assert_eq!(s1, s2, "event ids are per process");
    hooks.signal_event(hw1, s1);
    assert_eq!(first.events.wait(&[s1], false, 0).unwrap().0, abi::wait_result::COMPLETE);
    assert_eq!(second.events.wait(&[s2], false, 0).unwrap().0, abi::wait_result::TIMEOUT);
    // A closed process's queues are retired and no longer routed.
    second.close();
    assert!(first.device().router.owner(0, hw2).is_none());
    // A fault of the gone process's queue (its dispatch ran on into freed memory) is
    // nobody else's business.
    hooks.fault(Some(hw2), &fault);
    assert_eq!(first.events.wait(&[e1], false, 0).unwrap().0, abi::wait_result::TIMEOUT);
    assert!(first.machine().gpus[0].shared.queue(hw2).is_none());
    first.close();
    first.device().stop();
}

#[test]
fn allocations_at_the_end_of_the_address_space_are_refused_not_overflowed() {
    let k = open();
    let gpu_id = k.system().gpus[0].gpu_id;
    for (va, size, flags) in [
        (0u64, u64::MAX - 10, alloc_flags::VRAM),
        (!0xfff, 0x2000, alloc_flags::GTT),
        (0x1000, !0xfff, alloc_flags::USERPTR),
    ] {
        let mut a = abi::AllocMemory { va_addr: va, size, gpu_id, flags, mmap_offset: 0x1000, ..Default::default() };
        assert!(call(&k, request::ALLOC_MEMORY_OF_GPU, &mut a).is_err(), "{va:#x} + {size:#x}");
    }
    k.close();
    k.device().stop();
}

#[test]
fn sdma_queues_take_checked_rings() {
    let k = open();
    let gpu_id = k.system().gpus[0].gpu_id;
    // As libhsakmt creates ROCr's SDMA queues: a 1 MiB ring, the read and write
    // pointers in its own queue object.
    let sdma = abi::CreateQueue {
        gpu_id,
        queue_type: abi::queue_type::SDMA,
        ring_size: 1 << 20,
        ring_base_address: 0x10_0000,
        read_pointer_address: 0x2000,
        write_pointer_address: 0x2008,
        ..Default::default()
    };
    for bad in [
        abi::CreateQueue { ring_size: 3000, ..sdma },
        abi::CreateQueue { ring_base_address: 0, ..sdma },
        abi::CreateQueue { read_pointer_address: 0x2004, ..sdma },
        abi::CreateQueue { write_pointer_address: 0, ..sdma },
    ] {
        let mut q = bad;
        assert_eq!(call(&k, request::CREATE_QUEUE, &mut q), Err(crate::Errno::INVAL), "{bad:?}");
    }
    let mut ids = Vec::new();
    for queue_type in [abi::queue_type::SDMA, abi::queue_type::SDMA_XGMI] {
        let mut q = abi::CreateQueue { queue_type, ..sdma };
        call(&k, request::CREATE_QUEUE, &mut q).unwrap();
        assert_eq!(q.doorbell_offset & abi::mmap::TYPE_MASK, abi::mmap::TYPE_DOORBELL);
        let hw = lock(&k.queues)[&q.queue_id].hw;
        let ring = k.machine().gpus[0].shared.sdma_queue(hw).unwrap();
        assert_eq!((ring.base.0, ring.bytes, ring.read_pointer.0, ring.write_pointer.0), (0x10_0000, 1 << 20, 0x2000, 0x2008));
        ids.push((q.queue_id, hw));
    }
    for (id, hw) in ids {
        call(&k, request::DESTROY_QUEUE, &mut abi::IdArgs { id, pad: 0 }).unwrap();
        assert!(k.machine().gpus[0].shared.sdma_queue(hw).is_none());
    }
    k.close();
    k.device().stop();
}
