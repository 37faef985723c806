//! The SoC's packet processor as a runtime drives it: kernel-dispatch and barrier
//! packets written into an AQL ring in GPU memory, doorbells from another thread,
//! completion signals with HSA semantics, and malformed packets; AMD vendor packets
//! (PM4 indirect buffers, barrier-value) and kernel names read from code objects a
//! runtime loaded into GPU memory by itself; SDMA queues with the packets ROCr writes
//! (copies, fills, fences, polls, atomics, timestamps, traps), an SDMA copy overlapping a
//! kernel in timing mode, and a packet the engine does not know.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use amdgpu::gpu::aql::{amd_format, encode_header, signal, Barrier, FenceScope, Header, KernelDispatch, PacketType, PACKET_BYTES, PM4_INDIRECT_BUFFER};
use amdgpu::gpu::ids::{GpuAddr, QueueId};
use amdgpu::isa::code_object::CodeObject;
use amdgpu::isa::exec::{kernarg_segment, DispatchConfig, Program};
use amdgpu::gpu::memory::GpuMemory;
use amdgpu::gpu::sdma::SdmaRing;
use amdgpu::gpu::shared::{GpuShared, HostHooks, QueueDesc};
use amdgpu::components::soc::SocInput;
use simdojo::engine::{SimConfig, Simulation};
use simdojo::ids::ComponentId;
use simdojo::time::Tick;
use simdojo::topology;

const KERNEL: &str = r#"
void __attribute__((amdgpu_kernel)) fill(unsigned *out, unsigned value) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  out[i] = value + i;
}
"#;

/// Compiles the kernel with the real clang-19 and lld-19, once per test process (the
/// tests run in parallel and would otherwise overwrite each other's files).
fn code_object() -> Vec<u8> {
    static IMAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    IMAGE.get_or_init(|| compile_kernel("gpu-aql", KERNEL, &[])).clone()
}

/// Two kernels exported as dynamic symbols (protected visibility, as HIP kernels are):
/// what a runtime's loader leaves in GPU memory for [`amdgpu::gpu::loaded_image`] to read.
const NAMED_KERNELS: &str = r#"
void __attribute__((amdgpu_kernel)) fill(unsigned *out, unsigned value) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  out[i] = value + i;
}
void __attribute__((amdgpu_kernel)) second_kernel_with_a_longer_name(unsigned *out) {
  out[__builtin_amdgcn_workitem_id_x()] = 3;
}
"#;

fn named_code_object() -> Vec<u8> {
    static IMAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    IMAGE.get_or_init(|| compile_kernel("gpu-aql-named", NAMED_KERNELS, &["-fvisibility=protected"])).clone()
}

fn compile_kernel(tag: &str, source: &str, flags: &[&str]) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(tag);
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj, co) = (dir.join("fill.c"), dir.join("fill.o"), dir.join("fill.co"));
    std::fs::write(&src, source).unwrap();
    let ok = Command::new("clang-19")
        .args(["--target=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-nogpulib", "-O2", "-c"])
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap()
        .success();
    assert!(ok, "clang-19 failed");
    assert!(Command::new("ld.lld-19").arg("-shared").arg(&obj).arg("-o").arg(&co).status().unwrap().success());
    std::fs::read(co).unwrap()
}

/// Event ids raised, with the queue that raised each.
#[derive(Default)]
struct Events(Mutex<Vec<u32>>, Mutex<Vec<QueueId>>);

impl HostHooks for Events {
    fn signal_event(&self, queue: QueueId, event_id: u32) {
        self.0.lock().unwrap().push(event_id);
        self.1.lock().unwrap().push(queue);
    }
}

struct Gpu {
    sim: Simulation,
    shared: Arc<GpuShared>,
    mem: Arc<GpuMemory>,
    queue: QueueId,
    ring: GpuAddr,
    write_index: GpuAddr,
    kernel: GpuAddr,
    code: CodeObject,
    events: Arc<Events>,
    next: u64,
}

impl Gpu {
    fn new() -> Gpu {
        Gpu::with_registration(true)
    }

    /// `register`: whether the test tells the GPU where the code is (a runtime that only
    /// writes the code object into memory does not).
    fn with_registration(register: bool) -> Gpu {
        Gpu::with_code(&code_object(), register, true)
    }

    /// A GPU holding code object `bytes`; `name`: whether the test names the kernel
    /// (a runtime that only writes the code object into memory does not).
    fn with_code(bytes: &[u8], register: bool, name: bool) -> Gpu {
        Gpu::with_code_in(bytes, register, name, "functional")
    }

    /// [`Gpu::with_code`] with the compute units and the SoC in `mode`.
    fn with_code_in(bytes: &[u8], register: bool, name: bool, mode: &str) -> Gpu {
        let mut t = topology::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/test-gfx942.toml")).unwrap();
        let overrides = amdgpu::components::cu::mode::mode_overrides(&t, mode);
        simdojo::topology::overrides::apply(&mut t, &overrides).unwrap();
        let sim = Simulation::build(&t, &SimConfig::default()).unwrap();
        let shared: Arc<GpuShared> = sim.resource("gpu").unwrap();
        let events = Arc::new(Events::default());
        shared.set_hooks(events.clone());
        let mem = shared.memory().unwrap().clone();
        let code = CodeObject::parse(bytes).unwrap();
        let size = code.flat_image().unwrap().len() as u64;
        let base = mem.alloc(size, 1 << 16).unwrap();
        mem.write(base, &code.load_image(base.0).unwrap()).unwrap();
        if register {
            let program = Program::new(&code, base.0).unwrap();
            let text = program.text_start();
            shared.add_program(text, text + 4 * program.len() as u64, Arc::new(program));
        }
        let kernel = GpuAddr(base.0 + code.kernel("fill").unwrap().descriptor_address.0);
        if name {
            shared.name_kernel(kernel, "fill");
        }
        let ring = mem.alloc(64 * PACKET_BYTES, 0).unwrap();
        let indices = mem.alloc(4096, 0).unwrap();
        let write_index = GpuAddr(indices.0 + 8);
        let queue = shared.add_queue(QueueDesc { ring, packets: 64, read_index: indices, write_index, queue_object: GpuAddr(0) });
        Gpu { sim, shared, mem, queue, ring, write_index, kernel, code, events, next: 0 }
    }

    fn signal(&self, value: u64, event: Option<u32>) -> GpuAddr {
        let s = self.mem.alloc(signal::BYTES, 0).unwrap();
        self.mem.write_u64(GpuAddr(s.0 + signal::VALUE), value).unwrap();
        if let Some(id) = event {
            let mailbox = self.mem.alloc(8, 0).unwrap();
            self.mem.write_u64(GpuAddr(s.0 + signal::EVENT_MAILBOX), mailbox.0).unwrap();
            self.mem.write(GpuAddr(s.0 + signal::EVENT_ID), &id.to_le_bytes()).unwrap();
        }
        s
    }

    fn push(&mut self, packet: [u8; 64]) {
        self.mem.write(GpuAddr(self.ring.0 + (self.next % 64) * PACKET_BYTES), &packet).unwrap();
        self.next += 1;
        self.mem.write_u64(self.write_index, self.next).unwrap();
    }

    fn dispatch(&mut self, out: GpuAddr, value: u32, items: u32, barrier: bool, completion: GpuAddr) {
        let k = self.code.kernel("fill").unwrap();
        let mut explicit = out.0.to_le_bytes().to_vec();
        explicit.extend_from_slice(&value.to_le_bytes());
        let seg = kernarg_segment(k, &DispatchConfig::new([items, 1, 1], [64, 1, 1]), &explicit);
        let kernarg = self.mem.alloc(seg.len() as u64, 0).unwrap();
        self.mem.write(kernarg, &seg).unwrap();
        let d = KernelDispatch {
            header: Header { kind: PacketType::KernelDispatch, barrier, acquire: FenceScope::System, release: FenceScope::System },
            dimensions: 1,
            block: [64, 1, 1],
            grid: [items, 1, 1],
            private_segment_size: 0,
            group_segment_size: 0,
            kernel_object: self.kernel,
            kernarg_address: kernarg,
            completion_signal: completion,
        };
        self.push(d.encode());
    }

    fn barrier(&mut self, kind: PacketType, deps: &[GpuAddr], completion: GpuAddr) {
        let mut all = [GpuAddr(0); 5];
        all[..deps.len()].copy_from_slice(deps);
        let header = Header { kind, barrier: true, acquire: FenceScope::System, release: FenceScope::System };
        self.push(Barrier { header, deps: all, completion_signal: completion }.encode());
    }

    fn doorbell(&self) {
        let soc = ComponentId::from_index(0);
        self.sim.external_sender(soc).send(SocInput::Doorbell(self.queue));
    }

    fn value(&self, s: GpuAddr) -> u64 {
        self.mem.read_u64(GpuAddr(s.0 + signal::VALUE)).unwrap()
    }

    fn words(&self, at: GpuAddr, n: usize) -> Vec<u32> {
        let mut b = vec![0u8; 4 * n];
        self.mem.read(at, &mut b).unwrap();
        b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
}

#[test]
fn dispatches_complete_their_signals_and_raise_events() {
    let mut g = Gpu::new();
    let out = g.mem.alloc(4 * 256, 0).unwrap();
    let (s1, s2) = (g.signal(1, None), g.signal(2, Some(77)));
    g.dispatch(out, 100, 128, false, s1);
    g.dispatch(GpuAddr(out.0 + 512), 1000, 128, true, s2);
    g.doorbell();
    g.sim.run();
    assert_eq!(g.words(out, 2), [100, 101]);
    assert_eq!(g.words(GpuAddr(out.0 + 512), 128)[127], 1127);
    assert_eq!((g.value(s1), g.value(s2)), (0, 1), "HSA completion decrements by one");
    assert_eq!(*g.events.0.lock().unwrap(), [77], "the mailboxed signal raised its event");
    assert_eq!(*g.events.1.lock().unwrap(), [g.queue], "naming the queue whose packet completed");
    let mut mailbox = [0u8; 8];
    let mb = g.mem.read_u64(GpuAddr(s2.0 + signal::EVENT_MAILBOX)).unwrap();
    g.mem.read(GpuAddr(mb), &mut mailbox).unwrap();
    assert_eq!(u64::from_le_bytes(mailbox), 77);
    let (start, end) = (g.mem.read_u64(GpuAddr(s1.0 + signal::START_TS)).unwrap(), g.mem.read_u64(GpuAddr(s1.0 + signal::END_TS)).unwrap());
    assert!(end > start, "timestamps {start}..{end}");
    let kernels = g.shared.kernels();
    assert_eq!(kernels.len(), 2);
    assert!(kernels.iter().all(|k| k.kernel == "fill" && k.counters.waves == 2));
}

#[test]
fn code_that_nobody_registered_is_decoded_from_memory() {
    let mut g = Gpu::with_registration(false);
    let out = g.mem.alloc(4 * 128, 0).unwrap();
    let done = g.signal(1, None);
    g.dispatch(out, 40, 128, false, done);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.words(out, 128)[127], 167);
    assert_eq!(g.value(done), 0);
}

#[test]
fn barrier_packets_wait_for_their_dependencies() {
    let mut g = Gpu::new();
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let (dep_a, dep_b, done) = (g.signal(1, None), g.signal(1, None), g.signal(1, None));
    g.barrier(PacketType::BarrierAnd, &[dep_a, dep_b], GpuAddr(0));
    g.dispatch(out, 5, 64, true, done);
    g.doorbell();
    g.sim.run_until(Tick::us(20));
    assert_eq!(g.words(out, 4), [0; 4], "the dispatch must wait behind the barrier-AND (faults {:?})", g.shared.faults());
    // One dependency is not enough for AND.
    g.mem.write_u64(GpuAddr(dep_a.0 + signal::VALUE), 0).unwrap();
    g.sim.run_until(Tick::us(40));
    assert_eq!(g.words(out, 1), [0]);
    g.mem.write_u64(GpuAddr(dep_b.0 + signal::VALUE), 0).unwrap();
    g.sim.run_until(Tick::us(80));
    assert_eq!(g.words(out, 1), [5]);
    assert_eq!(g.value(done), 0);

    // Barrier-OR: one zero dependency opens it.
    let (x, y, done2) = (g.signal(1, None), g.signal(1, None), g.signal(1, None));
    let out2 = g.mem.alloc(4 * 64, 0).unwrap();
    g.barrier(PacketType::BarrierOr, &[x, y], done2);
    g.dispatch(out2, 9, 64, true, GpuAddr(0));
    g.doorbell();
    let st = g.sim.run_until(Tick::us(120));
    eprintln!("status {st:?} now {:?} read index {}", g.sim.now(), g.mem.read_u64(GpuAddr(g.write_index.0 - 8)).unwrap());
    assert_eq!(g.words(out2, 1), [0]);
    g.mem.write_u64(GpuAddr(y.0 + signal::VALUE), 0).unwrap();
    let st = g.sim.run_until(Tick::us(200));
    eprintln!("status {st:?} now {:?} read index {}", g.sim.now(), g.mem.read_u64(GpuAddr(g.write_index.0 - 8)).unwrap());
    assert_eq!(g.words(out2, 1), [9]);
    assert_eq!(g.value(done2), 0, "the barrier's own completion signal");
}

#[test]
fn a_malformed_packet_stops_the_queue_with_a_fault() {
    let mut g = Gpu::new();
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let mut junk = [0u8; 64];
    junk[0] = 0x42; // not an HSA packet type
    g.push(junk);
    g.dispatch(out, 1, 64, false, GpuAddr(0));
    g.doorbell();
    g.sim.run();
    let faults = g.shared.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(faults[0].message.contains("packet type 66"), "{}", faults[0]);
    assert_eq!(g.words(out, 1), [0], "nothing after the bad packet runs");
}

/// PM4 type-3 packet header: `opcode`, followed by `body` dwords.
fn pm4(opcode: u32, body: u32) -> u32 {
    (3 << 30) | ((body - 1) << 16) | (opcode << 8)
}

const PM4_NOP: u32 = 0x10;
const PM4_EVENT_WRITE: u32 = 0x46;
const PM4_ACQUIRE_MEM: u32 = 0x58;
const PM4_WRITE_DATA: u32 = 0x37;

/// What ROCR's code-cache invalidation hands the packet processor on gfx9: a 7-dword
/// ACQUIRE_MEM (shader instruction and constant caches, whole address range), here
/// between a NOP with a body, a type-2 filler and an EVENT_WRITE.
fn cache_invalidation() -> Vec<u32> {
    let mut ib = vec![pm4(PM4_NOP, 2), 0xdead_beef, 0xdead_beef, 2 << 30];
    ib.extend([pm4(PM4_ACQUIRE_MEM, 6), 0x2880_0000, 0xffff_ffff, 0, 0, 0, 0xa]);
    ib.extend([pm4(PM4_EVENT_WRITE, 1), 0x16]);
    ib
}

impl Gpu {
    fn vendor_slot(format: u8) -> [u8; 64] {
        let mut p = [0u8; 64];
        let h = encode_header(PacketType::Vendor, true, FenceScope::System, FenceScope::System);
        p[0..2].copy_from_slice(&h.to_le_bytes());
        p[2] = format;
        p
    }

    /// Copies `dwords` into GPU memory and queues an AMD PM4-IB packet running them.
    fn pm4_ib(&mut self, dwords: &[u32], completion: GpuAddr) -> GpuAddr {
        let ib = self.mem.alloc(4 * dwords.len() as u64, 0).unwrap();
        let bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
        self.mem.write(ib, &bytes).unwrap();
        let mut p = Gpu::vendor_slot(amd_format::PM4_IB);
        let jump = [pm4(PM4_INDIRECT_BUFFER, 3), ib.0 as u32, (ib.0 >> 32) as u32, dwords.len() as u32 | (1 << 23)];
        for (i, d) in jump.iter().enumerate() {
            p[4 + 4 * i..8 + 4 * i].copy_from_slice(&d.to_le_bytes());
        }
        p[20..24].copy_from_slice(&10u32.to_le_bytes());
        p[56..64].copy_from_slice(&completion.0.to_le_bytes());
        self.push(p);
        ib
    }

    /// Queues an AMD barrier-value packet: wait until `(value(watch) & mask) cond value`.
    fn barrier_value(&mut self, watch: GpuAddr, cond: u32, value: i64, mask: i64, completion: GpuAddr) {
        let mut p = Gpu::vendor_slot(amd_format::BARRIER_VALUE);
        p[8..16].copy_from_slice(&watch.0.to_le_bytes());
        p[16..24].copy_from_slice(&value.to_le_bytes());
        p[24..32].copy_from_slice(&mask.to_le_bytes());
        p[32..36].copy_from_slice(&cond.to_le_bytes());
        p[56..64].copy_from_slice(&completion.0.to_le_bytes());
        self.push(p);
    }

    fn read_index(&self) -> u64 {
        self.mem.read_u64(GpuAddr(self.write_index.0 - 8)).unwrap()
    }

    fn ts(&self, s: GpuAddr, field: u64) -> u64 {
        self.mem.read_u64(GpuAddr(s.0 + field)).unwrap()
    }
}

#[test]
fn pm4_cache_invalidation_completes_its_signal_and_drops_decoded_programs() {
    let mut g = Gpu::new();
    assert_eq!(g.shared.program_ranges().len(), 1, "the test registered the kernel's program");
    let done = g.signal(1, Some(31));
    g.mem.write_u64(GpuAddr(done.0 + signal::START_TS), u64::MAX).unwrap();
    g.pm4_ib(&cache_invalidation(), done);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.value(done), 0, "the PM4 packet's completion signal");
    assert_eq!(*g.events.0.lock().unwrap(), [31]);
    let (start, end) = (g.ts(done, signal::START_TS), g.ts(done, signal::END_TS));
    assert!(start != u64::MAX && start <= end, "start/end stamps {start}..{end}");
    assert_eq!(g.read_index(), 1, "the slot was consumed");
    assert!(g.shared.program_ranges().is_empty(), "ACQUIRE_MEM must drop decoded programs: {:?}", g.shared.program_ranges());

    // Code is decoded again from memory afterwards: the queue goes on.
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let done2 = g.signal(1, None);
    g.dispatch(out, 70, 64, true, done2);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.words(out, 2), [70, 71]);
    assert_eq!(g.value(done2), 0);
}

#[test]
fn an_unknown_pm4_opcode_faults_naming_it_and_stops_the_queue() {
    let mut g = Gpu::new();
    let done = g.signal(1, None);
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let ib = g.pm4_ib(&[pm4(PM4_NOP, 1), 0, pm4(PM4_WRITE_DATA, 4), 0x100, 0x1000, 0, 7], done);
    g.dispatch(out, 1, 64, false, GpuAddr(0));
    g.doorbell();
    g.sim.run();
    let faults = g.shared.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(faults[0].message.contains("0x37"), "the fault names the opcode: {}", faults[0].message);
    assert!(faults[0].place.contains("PM4"), "{}", faults[0].place);
    assert_eq!(faults[0].addr, Some(ib.0));
    assert_eq!(g.value(done), 1, "a faulting packet does not complete");
    assert_eq!(g.words(out, 1), [0], "nothing after the bad packet runs");
}

#[test]
fn a_pm4_ib_too_large_or_unreadable_faults_instead_of_panicking() {
    for (dwords, what) in [(1u32 << 15, "dwords"), (64, "unmapped")] {
        let mut g = Gpu::new();
        let mut p = Gpu::vendor_slot(amd_format::PM4_IB);
        let at: u64 = if what == "unmapped" { 0x10 } else { g.mem.alloc(4, 0).unwrap().0 };
        for (i, d) in [pm4(PM4_INDIRECT_BUFFER, 3), at as u32, (at >> 32) as u32, dwords].iter().enumerate() {
            p[4 + 4 * i..8 + 4 * i].copy_from_slice(&d.to_le_bytes());
        }
        g.push(p);
        g.doorbell();
        g.sim.run();
        let faults = g.shared.faults();
        assert_eq!(faults.len(), 1, "{what}: {faults:?}");
        assert!(faults[0].place.contains("PM4"), "{what}: {}", faults[0]);
    }
}

#[test]
fn barrier_value_waits_until_another_agent_sets_the_signal() {
    let mut g = Gpu::new();
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let (watched, done) = (g.signal(5, None), g.signal(1, None));
    // Wait for the low byte of the value to be 0 (EQ under a mask).
    g.barrier_value(watched, 0, 0, 0xff, done);
    g.dispatch(out, 11, 64, true, GpuAddr(0));
    g.doorbell();
    g.sim.run_until(Tick::us(20));
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!((g.value(done), g.words(out, 1)[0]), (1, 0), "the barrier-value must hold the queue");
    // Bits outside the mask do not satisfy it; the low byte still differs.
    g.mem.write_u64(GpuAddr(watched.0 + signal::VALUE), 0x1_0001).unwrap();
    g.sim.run_until(Tick::us(40));
    assert_eq!((g.value(done), g.words(out, 1)[0]), (1, 0));
    // Now the masked value is 0: the recheck timer sees it without a doorbell.
    g.mem.write_u64(GpuAddr(watched.0 + signal::VALUE), 0x7_0000).unwrap();
    g.sim.run_until(Tick::us(80));
    assert_eq!(g.value(done), 0, "the barrier-value's completion signal");
    assert!(g.ts(done, signal::END_TS) >= g.ts(done, signal::START_TS));
    assert_eq!(g.words(out, 1), [11], "the dispatch behind it ran");
    assert_eq!(g.read_index(), 2);
}

#[test]
fn barrier_value_opens_when_a_later_agents_dispatch_completes_the_signal() {
    // Two queues: queue 0 waits (LT 1: the value dropped below one) for the completion
    // signal of a dispatch queued later on queue 1.
    let mut g = Gpu::new();
    let handoff = g.signal(1, None);
    let (out_a, out_b) = (g.mem.alloc(4 * 64, 0).unwrap(), g.mem.alloc(4 * 64, 0).unwrap());
    g.barrier_value(handoff, 2, 1, -1, GpuAddr(0));
    g.dispatch(out_a, 200, 64, true, GpuAddr(0));
    g.doorbell();
    g.sim.run_until(Tick::us(10));
    assert_eq!(g.words(out_a, 1), [0]);

    let ring = g.mem.alloc(64 * PACKET_BYTES, 0).unwrap();
    let indices = g.mem.alloc(4096, 0).unwrap();
    let (queue0, ring0, write0, next0) = (g.queue, g.ring, g.write_index, g.next);
    g.queue = g.shared.add_queue(QueueDesc { ring, packets: 64, read_index: indices, write_index: GpuAddr(indices.0 + 8), queue_object: GpuAddr(0) });
    (g.ring, g.write_index, g.next) = (ring, GpuAddr(indices.0 + 8), 0);
    g.dispatch(out_b, 300, 64, false, handoff);
    g.doorbell();
    g.sim.run_until(Tick::us(100));
    (g.queue, g.ring, g.write_index, g.next) = (queue0, ring0, write0, next0);
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.words(out_b, 1), [300]);
    assert_eq!(g.value(handoff), 0);
    assert_eq!(g.words(out_a, 1), [200], "queue 0 went on once the signal dropped below 1");
}

#[test]
fn kernel_names_come_from_the_loaded_code_object() {
    let bytes = named_code_object();
    let code = CodeObject::parse(&bytes).unwrap();
    let mem = GpuMemory::new(1 << 26).unwrap();
    // Something else first, so the image does not start the memory.
    let _other = mem.alloc(3 << 12, 0).unwrap();
    let base = mem.alloc(code.flat_image().unwrap().len() as u64, 1 << 16).unwrap();
    mem.write(base, &code.load_image(base.0).unwrap()).unwrap();
    for name in ["fill", "second_kernel_with_a_longer_name"] {
        let kd = GpuAddr(base.0 + code.kernel(name).unwrap().descriptor_address.0);
        assert_eq!(amdgpu::gpu::loaded_image::kernel_name(&mem, kd).as_deref(), Some(name));
    }
    // The code entry is a symbol too, but not a kernel descriptor.
    let entry = code.kernel("fill").unwrap().descriptor_address.0 + 8;
    assert_eq!(amdgpu::gpu::loaded_image::kernel_name(&mem, GpuAddr(base.0 + entry)), None);
    // Memory without an image, and addresses outside any allocation.
    let plain = mem.alloc(1 << 16, 0).unwrap();
    assert_eq!(amdgpu::gpu::loaded_image::kernel_name(&mem, GpuAddr(plain.0 + 0x100)), None);
    assert_eq!(amdgpu::gpu::loaded_image::kernel_name(&mem, GpuAddr(0x10)), None);
}

/// Damages a loaded image in place.
type Corruption = Box<dyn Fn(&mut [u8])>;

#[test]
fn a_corrupt_loaded_image_gives_no_name_and_no_panic() {
    let bytes = named_code_object();
    let code = CodeObject::parse(&bytes).unwrap();
    let image = code.flat_image().unwrap();
    let kd_off = code.kernel("fill").unwrap().descriptor_address.0;
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([image[at], image[at + 1]]));
    let phoff = u64::from_le_bytes(image[32..40].try_into().unwrap()) as usize;
    let phnum = u16_at(56) as usize;
    let dynamic = (0..phnum).map(|i| phoff + 56 * i).find(|&ph| image[ph] == 2).expect("PT_DYNAMIC");
    let dyn_vaddr = u64::from_le_bytes(image[dynamic + 16..dynamic + 24].try_into().unwrap()) as usize;
    let corruptions: Vec<(&str, Corruption)> = vec![
        ("no ELF magic", Box::new(|b| b[1] = b'X')),
        ("another machine", Box::new(|b| b[18] = 62)),
        ("program headers far away", Box::new(|b| b[32..40].copy_from_slice(&0x7fff_ffff_0000u64.to_le_bytes()))),
        ("program header offset that wraps", Box::new(|b| b[32..40].copy_from_slice(&(u64::MAX - 0x20).to_le_bytes()))),
        ("tiny program header entries", Box::new(|b| b[54..56].copy_from_slice(&8u16.to_le_bytes()))),
        ("thousands of program headers", Box::new(|b| b[56..58].copy_from_slice(&0xffffu16.to_le_bytes()))),
        ("dynamic segment far away", Box::new(move |b| b[dynamic + 16..dynamic + 24].copy_from_slice(&(u64::MAX - 0x1000).to_le_bytes()))),
        ("no dynamic entries", Box::new(move |b| b[dyn_vaddr..dyn_vaddr + 8].copy_from_slice(&0u64.to_le_bytes()))),
        (
            "huge symbol entries",
            Box::new(move |b| {
                let syment = (0..8).map(|i| dyn_vaddr + 16 * i).find(|&at| b[at] == 11).expect("DT_SYMENT");
                b[syment + 8..syment + 16].copy_from_slice(&(1u64 << 63).to_le_bytes());
            }),
        ),
        (
            "every dynamic entry points far away",
            Box::new(move |b| {
                for i in 0..6 {
                    let at = dyn_vaddr + 16 * i + 8;
                    b[at..at + 8].copy_from_slice(&(u64::MAX - 7).to_le_bytes());
                }
            }),
        ),
    ];
    let mut panicked = Vec::new();
    for (what, corrupt) in &corruptions {
        let mem = GpuMemory::new(1 << 24).unwrap();
        let base = mem.alloc(image.len() as u64, 1 << 16).unwrap();
        let mut bytes = code.load_image(base.0).unwrap();
        corrupt(&mut bytes);
        mem.write(base, &bytes).unwrap();
        match std::panic::catch_unwind(|| amdgpu::gpu::loaded_image::kernel_name(&mem, GpuAddr(base.0 + kd_off))) {
            Ok(name) => assert_eq!(name, None, "{what}"),
            Err(_) => panicked.push(*what),
        }
    }
    assert!(panicked.is_empty(), "kernel_name panicked on corrupt images: {panicked:?}");
}

#[test]
fn dispatches_of_code_a_runtime_loaded_itself_report_the_kernel_name() {
    let mut g = Gpu::with_code(&named_code_object(), false, false);
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let done = g.signal(1, None);
    g.dispatch(out, 8, 64, false, done);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.words(out, 1), [8]);
    assert_eq!(g.shared.kernel_name(g.kernel), "fill");
    let kernels = g.shared.kernels();
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0].kernel, "fill", "read from the loaded image's dynamic symbols");
}

#[test]
fn cache_invalidation_keeps_kernel_names_the_loader_registered() {
    // The loader named the kernel; its code object exports no dynamic symbols, so the
    // name cannot be recovered from memory once forgotten.
    let mut g = Gpu::new();
    g.pm4_ib(&cache_invalidation(), GpuAddr(0));
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    g.dispatch(out, 1, 64, true, GpuAddr(0));
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.shared.kernels()[0].kernel, "fill", "an instruction-cache invalidate is not an unload");
}

/// Host hooks whose timestamp counter runs on another clock: a fixed offset plus
/// simulated picoseconds / 10.
struct HostClock;

const HOST_CLOCK_OFFSET: u64 = 5_000_000_000;

impl HostHooks for HostClock {
    fn timestamp(&self, sim_ps: u64) -> u64 {
        HOST_CLOCK_OFFSET + sim_ps / 10
    }
}

#[test]
fn completion_timestamps_come_from_the_host_hook() {
    let mut g = Gpu::new();
    g.shared.set_hooks(Arc::new(HostClock));
    let (after_pm4, after_dispatch, after_barrier) = (g.signal(1, None), g.signal(1, None), g.signal(1, None));
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    g.pm4_ib(&[pm4(PM4_NOP, 1), 0], after_pm4);
    g.dispatch(out, 1, 64, true, after_dispatch);
    g.barrier_value(after_dispatch, 0, 0, -1, after_barrier);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    for (what, s) in [("pm4", after_pm4), ("dispatch", after_dispatch), ("barrier-value", after_barrier)] {
        let (start, end) = (g.ts(s, signal::START_TS), g.ts(s, signal::END_TS));
        assert!(start >= HOST_CLOCK_OFFSET && end >= start, "{what}: {start}..{end}");
    }
    let dispatch_end = g.ts(after_dispatch, signal::END_TS);
    assert!(dispatch_end > g.ts(after_dispatch, signal::START_TS), "the kernel took time");
    assert!(g.ts(after_barrier, signal::START_TS) >= dispatch_end, "the barrier-value opened after the dispatch ended");
    assert_eq!(g.shared.timestamp(1_000), HOST_CLOCK_OFFSET + 100);
}

#[test]
fn a_retired_queue_ignores_its_doorbell() {
    let mut g = Gpu::new();
    let out = g.mem.alloc(4 * 64, 0).unwrap();
    let done = g.signal(1, None);
    g.shared.retire_queue(g.queue);
    assert!(g.shared.queue(g.queue).is_none());
    g.dispatch(out, 4, 64, false, done);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!((g.words(out, 1)[0], g.value(done), g.read_index()), (0, 1, 0), "nothing of a retired queue runs");
}

#[test]
fn forgetting_programs_forgets_names_only_in_the_range() {
    let g = Gpu::with_code(&named_code_object(), true, false);
    g.shared.name_kernel(g.kernel, "registered");
    assert_eq!(g.shared.kernel_name(g.kernel), "registered", "a registered name wins over the image");
    let elsewhere = g.mem.alloc(4096, 0).unwrap();
    g.shared.name_kernel(elsewhere, "other");
    let (start, end) = g.shared.program_ranges()[0];
    // Code below the kernel's allocation: nothing of it is forgotten.
    g.shared.forget_programs(0, 0x1000);
    assert_eq!((g.shared.kernel_name(g.kernel), g.shared.program_ranges().len()), ("registered".into(), 1));
    // The allocation holding descriptor and code was unloaded and reloaded.
    let region = g.mem.region_of(g.kernel).unwrap();
    assert!(region.start <= start && end <= region.end);
    g.shared.forget_programs(region.start, region.end);
    assert!(g.shared.program_ranges().is_empty());
    assert_eq!(g.shared.kernel_name(g.kernel), "fill", "the name is read again from the image in memory");
    assert_eq!(g.shared.kernel_name(elsewhere), "other");
}

/// A grid-wide barrier through global wave sync: every work-group counts itself in
/// `out[0]`, one wave of each meets the others at GWS barrier 0 (`value` work-groups),
/// then each records the count it sees in `out[1 + group]`.
const GWS_KERNEL: &str = r#"
void __attribute__((amdgpu_kernel)) fill(unsigned *out, unsigned value) {
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  unsigned t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) {
    __atomic_fetch_add(&out[0], 1u, __ATOMIC_RELAXED);
    __builtin_amdgcn_ds_gws_barrier(value - 1, 0);
    out[1 + g] = __atomic_load_n(&out[0], __ATOMIC_RELAXED);
  }
}
"#;

fn gws_code_object() -> Vec<u8> {
    static IMAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    IMAGE.get_or_init(|| compile_kernel("gpu-aql-gws", GWS_KERNEL, &[])).clone()
}

#[test]
fn gws_barriers_release_the_whole_grid_on_a_queue_that_holds_gws() {
    let mut g = Gpu::with_code(&gws_code_object(), true, true);
    g.shared.set_queue_gws(g.queue, true);
    let groups = 24;
    let out = g.mem.alloc(4 * (1 + groups as u64), 0).unwrap();
    let done = g.signal(1, None);
    g.dispatch(out, groups, 64 * groups, false, done);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.value(done), 0);
    let seen = g.words(out, 1 + groups as usize);
    assert_eq!(seen[0], groups);
    assert!(seen[1..].iter().all(|&c| c == groups), "a group left the barrier before every group counted itself: {seen:?}");
}

#[test]
fn gws_on_a_queue_without_gws_faults_the_dispatch_and_stops_the_queue() {
    let mut g = Gpu::with_code(&gws_code_object(), true, true);
    let out = g.mem.alloc(4 * 9, 0).unwrap();
    let done = g.signal(1, None);
    g.dispatch(out, 8, 64 * 8, false, done);
    g.doorbell();
    g.sim.run();
    let faults = g.shared.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(faults[0].message.contains("ds_gws_barrier") && faults[0].message.contains("holds no global wave sync"), "{}", faults[0]);
    assert_eq!(g.value(done), 1, "a faulted dispatch does not complete its signal");
    assert_eq!(g.words(GpuAddr(out.0 + 4), 8), [0; 8], "no wave passed the barrier");
}

#[test]
fn a_gws_barrier_wider_than_the_gpu_holds_faults_instead_of_hanging() {
    let mut g = Gpu::with_code(&gws_code_object(), true, true);
    g.shared.set_queue_gws(g.queue, true);
    // 4 compute units of at most 64 wave slots: 1000 one-wave groups never fit at once.
    let groups = 1000;
    let out = g.mem.alloc(4 * (1 + groups as u64), 0).unwrap();
    let done = g.signal(1, None);
    g.dispatch(out, groups, 64 * groups, false, done);
    g.doorbell();
    let status = g.sim.run();
    let faults = g.shared.faults();
    assert_eq!(faults.len(), 1, "{faults:?} ({status:?})");
    assert!(faults[0].message.contains("waits for 1000 waves") && faults[0].message.contains("could never open"), "{}", faults[0]);
    assert_eq!(g.value(done), 1);
}

/// An SDMA queue of the test GPU: its ring (4 KiB), pointers and bytes published.
struct Sdma {
    queue: QueueId,
    ring: GpuAddr,
    write_pointer: GpuAddr,
    read_pointer: GpuAddr,
    written: u64,
}

/// Packets as ROCr 5.2.3's `BlitSdmaV4` (gfx9) builds them.
mod rocr {
    use amdgpu::gpu::ids::GpuAddr;

    fn lo(a: GpuAddr) -> u32 {
        a.0 as u32
    }
    fn hi(a: GpuAddr) -> u32 {
        (a.0 >> 32) as u32
    }
    /// `BuildCopyCommand`: count = bytes - 1.
    pub fn copy(src: GpuAddr, dst: GpuAddr, bytes: u32) -> Vec<u32> {
        vec![1, bytes - 1, 0, lo(src), hi(src), lo(dst), hi(dst)]
    }
    /// `BuildFenceCommand`.
    pub fn fence(addr: GpuAddr, data: u32) -> Vec<u32> {
        vec![5, lo(addr), hi(addr), data]
    }
    /// `BuildTrapCommand`.
    pub fn trap(event: u32) -> Vec<u32> {
        vec![6, event]
    }
    /// `BuildPollCommand`: a memory poll until the dword equals `reference`.
    pub fn poll(addr: GpuAddr, reference: u32) -> Vec<u32> {
        vec![8 | (3 << 28) | (1 << 31), lo(addr), hi(addr), reference, !0, 4 | (0xfff << 16)]
    }
    /// `hdp_flush_cmd`.
    pub fn hdp_flush() -> Vec<u32> {
        vec![8, 0, 0x8000_0000, 0, 0, 0]
    }
    /// `BuildAtomicDecrementCommand`: ADD64 of all ones.
    pub fn decrement(addr: GpuAddr) -> Vec<u32> {
        vec![10 | (47 << 25), lo(addr), hi(addr), !0, !0, 0, 0, 0]
    }
    /// `BuildFillCommand`: dword fill, count = (dwords - 1) * 4.
    pub fn fill(dst: GpuAddr, value: u32, dwords: u32) -> Vec<u32> {
        vec![11 | (2 << 30), lo(dst), hi(dst), value, (dwords - 1) * 4]
    }
    /// `BuildGetGlobalTimestampCommand`.
    pub fn timestamp(addr: GpuAddr) -> Vec<u32> {
        vec![13 | (2 << 8), lo(addr), hi(addr)]
    }
}

impl Gpu {
    fn sdma_queue(&self) -> Sdma {
        let ring = self.mem.alloc(4096, 256).unwrap();
        let pointers = self.mem.alloc(16, 0).unwrap();
        let (read_pointer, write_pointer) = (pointers, GpuAddr(pointers.0 + 8));
        let queue = self.shared.add_sdma_queue(SdmaRing { base: ring, bytes: 4096, read_pointer, write_pointer });
        Sdma { queue, ring, write_pointer, read_pointer, written: 0 }
    }

    /// Writes `packets` at the queue's write pointer and publishes them (no doorbell).
    fn sdma_push(&self, q: &mut Sdma, packets: &[Vec<u32>]) {
        for dw in packets.iter().flatten() {
            self.mem.write(GpuAddr(q.ring.0 + q.written % 4096), &dw.to_le_bytes()).unwrap();
            q.written += 4;
        }
        self.mem.write_u64(q.write_pointer, q.written).unwrap();
    }

    fn ring_queue(&self, q: QueueId) {
        self.sim.external_sender(ComponentId::from_index(0)).send(SocInput::Doorbell(q));
    }

    fn bytes(&self, at: GpuAddr, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        self.mem.read(at, &mut b).unwrap();
        b
    }
}

#[test]
fn sdma_packets_run_as_rocr_writes_them() {
    let mut g = Gpu::new();
    let mut q = g.sdma_queue();
    let src = g.mem.alloc(8192, 0).unwrap();
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    g.mem.write(src, &data).unwrap();
    let (dst, filled, stamps) = (g.mem.alloc(8192, 0).unwrap(), g.mem.alloc(1024, 0).unwrap(), g.mem.alloc(16, 0).unwrap());
    // A kernel's output copied after the kernel's signal reaches zero (the dependency
    // polls ROCr writes: the signal's high dword, then its low dword).
    let (out, kernel_done) = (g.mem.alloc(4 * 128, 0).unwrap(), g.signal(1, None));
    let copied_out = g.mem.alloc(4 * 128, 0).unwrap();
    let copy_done = g.signal(1, Some(31));
    let mailbox = g.mem.read_u64(GpuAddr(copy_done.0 + signal::EVENT_MAILBOX)).unwrap();
    let value = GpuAddr(kernel_done.0 + signal::VALUE);
    g.sdma_push(&mut q, &[
        rocr::hdp_flush(),
        rocr::timestamp(stamps),
        rocr::copy(src, dst, 8000),
        rocr::fill(filled, 0xdead_beef, 200),
        rocr::poll(GpuAddr(value.0 + 4), 0),
        rocr::poll(value, 0),
        rocr::copy(out, copied_out, 4 * 128),
        rocr::timestamp(GpuAddr(stamps.0 + 8)),
        rocr::decrement(GpuAddr(copy_done.0 + signal::VALUE)),
        rocr::fence(GpuAddr(mailbox), 31),
        rocr::trap(31),
    ]);
    g.ring_queue(q.queue);
    g.sim.run_until(Tick::us(5));
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.bytes(dst, 8192)[..8000], data[..8000]);
    assert_eq!(g.bytes(dst, 8192)[8000..], [0; 192], "a copy writes its bytes and no more");
    assert_eq!(g.words(filled, 201)[..200], [0xdead_beef; 200]);
    assert_eq!(g.words(filled, 201)[200], 0);
    assert_eq!(g.value(copy_done), 1, "the engine waits in the poll for the kernel's signal");
    assert!(g.events.0.lock().unwrap().is_empty());
    // The kernel runs and completes its signal; the engine's poll sees it.
    g.dispatch(out, 500, 128, false, kernel_done);
    g.doorbell();
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.words(copied_out, 128), (500..628).collect::<Vec<u32>>());
    assert_eq!(g.value(copy_done), 0, "the atomic decremented the signal");
    assert_eq!(g.mem.read_u64(GpuAddr(mailbox)).unwrap(), 31, "the fence wrote the event id");
    assert_eq!(*g.events.0.lock().unwrap(), [31], "the trap raised the event");
    assert_eq!(*g.events.1.lock().unwrap(), [q.queue], "of the SDMA queue");
    assert_eq!(g.mem.read_u64(q.read_pointer).unwrap(), q.written, "the read pointer reaches the write pointer");
    let (t0, t1) = (g.mem.read_u64(stamps).unwrap(), g.mem.read_u64(GpuAddr(stamps.0 + 8)).unwrap());
    assert!(t1 > t0, "the second timestamp is written after the kernel ({t0}..{t1})");
}

#[test]
fn an_unknown_sdma_packet_stops_its_queue_naming_opcode_and_offset() {
    let mut g = Gpu::new();
    let mut q = g.sdma_queue();
    let (a, b) = (g.mem.alloc(64, 0).unwrap(), g.mem.alloc(64, 0).unwrap());
    // GCR (opcode 17) is an SDMA 5 packet; the fence after it must not run.
    g.sdma_push(&mut q, &[rocr::fence(a, 1), vec![17 | (1 << 8), 0, 0, 0, 0], rocr::fence(b, 2)]);
    g.ring_queue(q.queue);
    g.sim.run();
    let faults = g.shared.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(faults[0].message.contains("opcode 17"), "{}", faults[0]);
    assert!(faults[0].place.contains("SDMA queue") && faults[0].place.contains("ring offset 0x10"), "{}", faults[0]);
    assert_eq!((g.words(a, 1)[0], g.words(b, 1)[0]), (1, 0));
    // A later doorbell does not revive the queue.
    g.sdma_push(&mut q, &[rocr::fence(b, 3)]);
    g.ring_queue(q.queue);
    g.sim.run();
    assert_eq!(g.words(b, 1)[0], 0);
}

/// Runs a 16 KiB SDMA copy and a kernel started together; returns the copy's and the
/// kernel's (start, end) timestamps.
fn copy_beside_kernel(mode: &str) -> ((u64, u64), (u64, u64)) {
    let mut g = Gpu::with_code_in(&code_object(), true, true, mode);
    let mut q = g.sdma_queue();
    const BYTES: u32 = 16 << 10;
    let (src, dst, stamps) = (g.mem.alloc(BYTES.into(), 0).unwrap(), g.mem.alloc(BYTES.into(), 0).unwrap(), g.mem.alloc(16, 0).unwrap());
    let data: Vec<u8> = (0..BYTES).map(|i| (i % 251) as u8).collect();
    g.mem.write(src, &data).unwrap();
    let items = 64 * 1024;
    let (out, done) = (g.mem.alloc(4 * items as u64, 0).unwrap(), g.signal(1, None));
    g.dispatch(out, 7, items, false, done);
    g.sdma_push(&mut q, &[rocr::timestamp(stamps), rocr::copy(src, dst, BYTES), rocr::timestamp(GpuAddr(stamps.0 + 8))]);
    g.doorbell();
    g.ring_queue(q.queue);
    g.sim.run();
    assert!(g.shared.faults().is_empty(), "{:?}", g.shared.faults());
    assert_eq!(g.bytes(dst, BYTES as usize), data, "{mode}: the copy's result");
    assert_eq!(g.words(out, items as usize)[items as usize - 1], 7 + items - 1);
    let copy = (g.mem.read_u64(stamps).unwrap(), g.mem.read_u64(GpuAddr(stamps.0 + 8)).unwrap());
    let kernel = (g.mem.read_u64(GpuAddr(done.0 + signal::START_TS)).unwrap(), g.mem.read_u64(GpuAddr(done.0 + signal::END_TS)).unwrap());
    (copy, kernel)
}

#[test]
fn an_sdma_copy_overlaps_a_kernel_in_timing_mode() {
    let ((c0, c1), (k0, k1)) = copy_beside_kernel("timing");
    // The SoC's defaults: 1 us per packet plus 16 KiB at 25 GB/s (655.36 ns), in
    // ticks of the 100 MHz timestamp clock.
    let expected = (1000.0 + 16384.0 / 25.0) / 10.0;
    assert!(((c1 - c0) as f64 - expected).abs() <= 1.0, "copy {c0}..{c1}: {} ticks, expected {expected}", c1 - c0);
    assert!(c0 < k1 && k0 < c1, "copy {c0}..{c1} and kernel {k0}..{k1} overlap in simulated time");
    assert!(c1 < k1, "the copy ends while the kernel runs (copy {c0}..{c1}, kernel {k0}..{k1})");
    // Functional mode: the same results, and the copy takes no simulated time.
    let ((f0, f1), _) = copy_beside_kernel("functional");
    assert_eq!(f0, f1);
}
