//! The SoC's packet processor as a runtime drives it: kernel-dispatch and barrier
//! packets written into an AQL ring in GPU memory, doorbells from another thread,
//! completion signals with HSA semantics, and malformed packets.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use amdgpu::aql::{signal, Barrier, FenceScope, Header, KernelDispatch, PacketType, PACKET_BYTES};
use amdgpu::ids::{GpuAddr, QueueId};
use amdgpu::isa::code_object::CodeObject;
use amdgpu::isa::exec::{kernarg_segment, DispatchConfig, Program};
use amdgpu::memory::GpuMemory;
use amdgpu::shared::{GpuShared, HostHooks, QueueDesc};
use amdgpu::soc::SocInput;
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
    IMAGE.get_or_init(compile_kernel).clone()
}

fn compile_kernel() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpu-aql");
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj, co) = (dir.join("fill.c"), dir.join("fill.o"), dir.join("fill.co"));
    std::fs::write(&src, KERNEL).unwrap();
    let ok = Command::new("clang-19")
        .args(["--target=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-nogpulib", "-O2", "-c"])
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

#[derive(Default)]
struct Events(Mutex<Vec<u32>>);

impl HostHooks for Events {
    fn signal_event(&self, event_id: u32) {
        self.0.lock().unwrap().push(event_id);
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
        let t = topology::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/test-gfx942.toml")).unwrap();
        let sim = Simulation::build(&t, &SimConfig::default()).unwrap();
        let shared: Arc<GpuShared> = sim.resource("gpu").unwrap();
        let events = Arc::new(Events::default());
        shared.set_hooks(events.clone());
        let mem = shared.memory().unwrap().clone();
        let bytes = code_object();
        let code = CodeObject::parse(&bytes).unwrap();
        let size = code.flat_image().unwrap().len() as u64;
        let base = mem.alloc(size, 1 << 16).unwrap();
        mem.write(base, &code.load_image(base.0).unwrap()).unwrap();
        if register {
            let program = Program::new(&code, base.0).unwrap();
            let text = program.text_start();
            shared.add_program(text, text + 4 * program.len() as u64, Arc::new(program));
        }
        let kernel = GpuAddr(base.0 + code.kernel("fill").unwrap().descriptor_address.0);
        shared.name_kernel(kernel, "fill");
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
