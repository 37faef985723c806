//! The device runtime running on the ISA crate's functional executor, served
//! by the Rust RPC server: compiled by `cc`, loaded, launched as
//! `_begin` / `_start` / `_end` with the protocol of [`amdgpu::host::rpc::launch`],
//! polled between slices of wave execution. This is the whole path `dojo
//! exec` takes, minus the timed GPU model.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;

use amdgpu::host::cc::{compile, CcOptions, OptLevel};
use amdgpu::isa::code_object::{ArgValueKind, CodeObject, InitialSgpr, WorkitemIdVgprs};
use amdgpu::isa::exec::{self, ExecFault, MemFault, Memory, Program, Wave, WaveStatus};
use amdgpu::isa::Target;
use amdgpu::host::rpc::launch::{end_kernargs, ArgBlock, BEGIN_KERNEL, CLIENT_SYMBOL, END_KERNEL, START_KERNEL};
use amdgpu::host::rpc::{GpuAddr, HostError, HostServices, OutputStream, RpcError, RpcLayout, RpcMemory, RpcServer};

const RPC_BUFFER: u64 = 0x1000_0000;
const ARGS: u64 = 0x2000_0000;
const RET: u64 = 0x3000_0000;
const HEAP: u64 = 0x4000_0000;
const KERNARG: u64 = 0x7e00_0001_0000;
const SCRATCH: u64 = 0x7d00_0000_0000;
const SHARED_APERTURE_HI: u64 = 0x0001_0000;
const PRIVATE_APERTURE_HI: u64 = 0x0002_0000;

/// The executor's memory seen through the server's trait (the server only
/// runs between execution slices, so a RefCell is enough).
struct ExecMemory<'a>(RefCell<&'a mut Memory>);

fn fault(addr: u64, len: usize, e: MemFault) -> RpcError {
    RpcError::Memory { addr, len: len as u64, reason: e.to_string() }
}

impl RpcMemory for ExecMemory<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), RpcError> {
        self.0.borrow().read(addr, buf).map_err(|e| fault(addr, buf.len(), e))
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), RpcError> {
        self.0.borrow_mut().write(addr, data).map_err(|e| fault(addr, data.len(), e))
    }
    fn load_u32_acquire(&self, addr: u64) -> Result<u32, RpcError> {
        self.0.borrow().read_u32(addr).map_err(|e| fault(addr, 4, e))
    }
    fn store_u32_release(&self, addr: u64, v: u32) -> Result<(), RpcError> {
        self.0.borrow_mut().write_u32(addr, v).map_err(|e| fault(addr, 4, e))
    }
}

#[derive(Default)]
struct Host {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: Option<i32>,
    next: u64,
    live: BTreeSet<u64>,
}

impl HostServices for Host {
    fn write(&mut self, stream: OutputStream, bytes: &[u8]) -> std::io::Result<()> {
        match stream {
            OutputStream::Stdout => self.stdout.extend_from_slice(bytes),
            OutputStream::Stderr => self.stderr.extend_from_slice(bytes),
        }
        Ok(())
    }
    fn exit(&mut self, status: i32) {
        self.exit.get_or_insert(status);
    }
    fn abort(&mut self) {
        panic!("the program aborted");
    }
    fn malloc(&mut self, size: u64) -> Result<GpuAddr, HostError> {
        let addr = HEAP + self.next;
        self.next += size.next_multiple_of(64).max(64);
        self.live.insert(addr);
        Ok(GpuAddr(addr))
    }
    fn free(&mut self, addr: GpuAddr) -> Result<(), HostError> {
        self.live.remove(&addr.0).then_some(()).ok_or_else(|| HostError("not allocated".into()))
    }
}

/// Kernarg segment: explicit bytes, then the hidden arguments the runtime
/// may read (group sizes, grid dims, apertures).
fn kernarg_segment(kernel: &amdgpu::isa::code_object::Kernel, block: u32, explicit: &[u8]) -> Vec<u8> {
    let mut seg = vec![0u8; (kernel.descriptor.kernarg_size as usize).max(explicit.len()).max(256)];
    seg[..explicit.len()].copy_from_slice(explicit);
    for arg in kernel.metadata.as_ref().map(|m| m.args.as_slice()).unwrap_or_default() {
        let value: u64 = match arg.value_kind {
            ArgValueKind::HiddenBlockCountX | ArgValueKind::HiddenBlockCountY | ArgValueKind::HiddenBlockCountZ => 1,
            ArgValueKind::HiddenGroupSizeX => u64::from(block),
            ArgValueKind::HiddenGroupSizeY | ArgValueKind::HiddenGroupSizeZ | ArgValueKind::HiddenGridDims => 1,
            ArgValueKind::HiddenPrivateBase => PRIVATE_APERTURE_HI,
            ArgValueKind::HiddenSharedBase => SHARED_APERTURE_HI,
            _ => continue,
        };
        let (start, len) = (arg.offset as usize, (arg.size as usize).min(8));
        if let Some(dst) = seg.get_mut(start..start + len) {
            dst.copy_from_slice(&value.to_le_bytes()[..len]);
        }
    }
    seg
}

/// A loaded program with its memory, RPC server and host.
struct Machine {
    co: CodeObject,
    program: Program,
    mem: Memory,
    server: RpcServer,
    host: Host,
}

/// Wave `wi` of a work-group of `lanes` work-items, with its registers set
/// as the hardware initializes them from the kernel descriptor.
fn new_wave(kernel: &amdgpu::isa::code_object::Kernel, lane_bytes: u32, wi: u32, lanes: u32) -> Wave {
    let kd = &kernel.descriptor;
    let scratch = SCRATCH + u64::from(wi) * 64 * u64::from(lane_bytes);
    let mode = amdgpu::isa::numeric::Mode::from_pgm_rsrc1(kd.rsrc1.raw).encode();
    let mut w = Wave::new(exec::CODE_BASE.wrapping_add(kernel.entry.0), mode);
    w.scratch_base = scratch;
    w.scratch_lane_bytes = lane_bytes;
    w.wave_in_group = wi;
    for slot in kd.user_sgprs().iter().chain(&kd.system_sgprs()) {
        let s = slot.first as usize;
        match slot.value {
            InitialSgpr::PrivateSegmentBuffer => {
                w.set_sgpr(s, scratch as u32);
                w.set_sgpr(s + 1, ((scratch >> 32) as u32 & 0xffff) | (lane_bytes.min(0x3fff) << 16));
                w.set_sgpr(s + 2, u32::MAX);
                w.set_sgpr(s + 3, 1 << 23);
            }
            InitialSgpr::KernargSegmentPtr => w.set_sgpr_pair(s, KERNARG),
            InitialSgpr::FlatScratchInit => {
                w.set_sgpr(s, 0);
                w.set_sgpr(s + 1, lane_bytes);
                w.set_sgpr_pair(exec::wave::FLAT_SCRATCH_LO, scratch);
            }
            InitialSgpr::PrivateSegmentSize => w.set_sgpr(s, lane_bytes),
            _ => {}
        }
    }
    // One work-group in x only: y and z ids are 0 whatever the descriptor
    // enables (CDNA packs x | y << 10 | z << 20 into v0).
    let _ = WorkitemIdVgprs::X;
    let mut exec_mask = 0u64;
    for lane in 0..64u32 {
        let id = wi * 64 + lane;
        w.vgpr[0][lane as usize] = id;
        if id < lanes {
            exec_mask |= 1 << lane;
        }
    }
    w.set_exec(exec_mask);
    w
}

/// Runs one work-group of `lanes` work-items of kernel `name`, round-robin
/// over its waves in slices, serving RPC after every round.
fn launch(m: &mut Machine, name: &str, lanes: u32, explicit: &[u8]) {
    let Machine { co, program, mem, server, host } = m;
    let kernel = co.kernel(name).unwrap_or_else(|| panic!("kernel {name}"));
    let kd = &kernel.descriptor;
    mem.write(KERNARG, &kernarg_segment(kernel, lanes, explicit)).expect("kernargs");
    let lane_bytes = if kd.properties.uses_dynamic_stack { kd.private_segment_fixed_size.max(16 * 1024) } else { kd.private_segment_fixed_size }
        .next_multiple_of(16);
    let n_waves = lanes.div_ceil(64);
    mem.map(SCRATCH, u64::from(lane_bytes.max(16)) * 64 * u64::from(n_waves)).expect("scratch");
    let mut waves: Vec<Wave> = (0..n_waves).map(|wi| new_wave(kernel, lane_bytes, wi, lanes)).collect();
    let mut lds = vec![0u8; kd.group_segment_fixed_size as usize];
    let mut rounds = 0;
    while waves.iter().any(|w| w.status != WaveStatus::Ended) {
        for w in waves.iter_mut().filter(|w| w.status != WaveStatus::Ended) {
            match exec::run_single_wave(program, w, mem, &mut lds, 5_000) {
                Ok(_) | Err(ExecFault::Hang { .. }) => {}
                Err(e) => panic!("{name}: {e} at {w:?}"),
            }
        }
        let view = ExecMemory(RefCell::new(mem));
        server.poll(&view, host).unwrap_or_else(|e| panic!("{name}: RPC error {e}"));
        rounds += 1;
        assert!(rounds < 20_000, "{name} does not finish");
    }
    // Requests sent right before s_endpgm (EXIT) still need serving.
    let view = ExecMemory(RefCell::new(mem));
    server.poll(&view, host).unwrap_or_else(|e| panic!("{name}: RPC error {e}"));
}

/// The executor does not implement the cache write-back / invalidate
/// instructions that system-scope fences compile to (`buffer_wbinvl1_vol` on
/// gfx90a, `buffer_inv` / `buffer_invl2` / `buffer_wbl2` on gfx94x). Its memory is one
/// coherent store, where they do nothing; replace each with two `s_nop 0`.
fn without_cache_maintenance(co: &CodeObject, loaded: &Program, mem: &Memory) -> Program {
    const S_NOP_0: u32 = 0xbf80_0000;
    let start = exec::CODE_BASE + co.text().address.0;
    let mut bytes = vec![0u8; co.text().bytes.len()];
    mem.read(start, &mut bytes).expect("loaded text");
    let mut words: Vec<u32> = bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let mut i = 0;
    while i < words.len() {
        let Some(c) = loaded.inst_at(start + 4 * i as u64) else {
            i += 1;
            continue;
        };
        let size = (c.size as usize / 4).max(1);
        if matches!(c.inst.opcode().mnemonic(), "buffer_wbinvl1_vol" | "buffer_wbinvl1" | "buffer_inv" | "buffer_invl2" | "buffer_wbl2") {
            for w in &mut words[i..i + size] {
                *w = S_NOP_0;
            }
        }
        i += size;
    }
    Program::from_words(loaded.target(), start, &words)
}

fn build(target: Target, name: &str, source: &str) -> CodeObject {
    let dir = std::env::temp_dir().join(format!("simdojo-rpc-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src: PathBuf = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).expect("source");
    let out = dir.join(format!("{name}-{target}.co"));
    compile(&CcOptions { mcpu: target, opt: OptLevel::O2, output: out.clone(), inputs: vec![src], extra_flags: vec![] })
        .unwrap_or_else(|e| panic!("{e}"));
    CodeObject::parse(&std::fs::read(out).expect("code object")).expect("parse")
}

/// Runs a program on one wave of `lanes` work-items; returns stdout and the exit status.
fn run(target: Target, name: &str, source: &str, lanes: u32, ports: u32, args: &[&str]) -> (String, i32, Host) {
    let co = build(target, name, source);
    let mut mem = Memory::new();
    let loaded = exec::load(&co, exec::CODE_BASE, &mut mem).expect("load");
    let program = without_cache_maintenance(&co, &loaded, &mem);
    let layout = RpcLayout::new(64, ports).expect("layout");
    mem.write(RPC_BUFFER, &vec![0u8; layout.allocation_size() as usize]).expect("rpc buffer");
    let server = RpcServer::new(layout, RPC_BUFFER);
    let client = co.symbol(CLIENT_SYMBOL).expect("client symbol");
    mem.write(exec::CODE_BASE + client.value.0, &server.client_image()).expect("client image");
    let block = ArgBlock::new(ARGS, args, &["HOME=/"]);
    mem.write(ARGS, &block.bytes).expect("argv");
    mem.write(RET, &[0; 4]).expect("ret");
    mem.map(HEAP, 1 << 20).expect("heap");

    let mut m = Machine { co, program, mem, server, host: Host::default() };
    launch(&mut m, BEGIN_KERNEL, 1, &block.begin_kernargs());
    launch(&mut m, START_KERNEL, lanes, &block.start_kernargs(RET));
    let ret = m.mem.read_u32(RET).expect("ret");
    if m.host.exit.is_none() {
        launch(&mut m, END_KERNEL, 1, &end_kernargs(RET));
    }
    let mut host = m.host;
    let status = host.exit.expect("the program sent EXIT");
    assert_eq!(status as u32, ret, "EXIT carries *ret");
    (String::from_utf8(std::mem::take(&mut host.stdout)).expect("utf-8 output"), status, host)
}

#[test]
fn hello_world_runs_on_the_functional_executor() {
    // gfx950 code uses v_bitop3_b32, which the functional executor does not
    // implement yet; the gfx950 code object itself is checked in tests/cc.rs.
    for target in [Target::Gfx90a, Target::Gfx942] {
        let (out, status, _) = run(target, "hello", "#include <stdio.h>\nint main(void) { puts(\"Hello from the GPU\"); return 0; }\n", 1, 8, &["hello"]);
        assert_eq!(out, "Hello from the GPU\n", "{target}");
        assert_eq!(status, 0);
    }
}

#[test]
fn every_lane_of_a_wave_prints_and_allocates() {
    let source = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  char *copy = malloc(32);
  strcpy(copy, argv[argc - 1]);
  printf("lane %2u of %d: %s %5.2f %lx %c\n", lane, argc, copy, lane * 0.25, (unsigned long)lane << 36, 'A' + (lane & 15));
  free(copy);
  return lane == 7 ? 4 : 0;
}
"#;
    // gfx942 only: on gfx90a, `_start` sets the stack pointer to
    // `s_movk_i32 s32, 0xc00` (48 bytes per lane, wave-scaled as gfx9 MUBUF
    // scratch is) and the functional executor applies that soffset to each
    // lane unscaled, so lane L's callee frame lands on lane L+48's printf
    // arguments (lanes 48..63 print garbage). Reported to the executor's
    // owner; the runtime is right on gfx942 and in the multi-wave test below.
    let target = Target::Gfx942;
    let (out, status, host) = run(target, "lanes", source, 64, 8, &["prog", "arg"]);
    let want: String = (0..64u64)
        .map(|l| format!("lane {l:2} of 2: arg {:5.2} {:x} {}\n", l as f64 * 0.25, l << 36, (b'A' + (l & 15) as u8) as char))
        .collect();
    let bad: Vec<(usize, &str)> = out.lines().zip(want.lines()).enumerate().filter(|(_, (g, w))| g != w).map(|(k, (g, _))| (k, g)).collect();
    assert!(bad.is_empty(), "{target}: {bad:?}");
    assert_eq!(out, want, "{target}: lanes print whole lines in lane order");
    assert_eq!(status, 4, "main's results are ORed into ret");
    assert!(host.live.is_empty(), "every malloc was freed");
}

#[test]
fn waves_contend_for_fewer_ports_than_waves() {
    let source = r#"
#include <stdio.h>
int main(void) {
  unsigned id = __builtin_amdgcn_workitem_id_x();
  for (int round = 0; round < 2; ++round)
    printf("item %3u round %d %s\n", id, round, id % 2 ? "odd" : "even");
  if (id == 100)
    fprintf(stderr, "%s", "");
  return 0;
}
"#;
    // 160 work-items: two full waves and one of 32 lanes, over 2 ports.
    for target in [Target::Gfx90a, Target::Gfx942] {
        let (out, status, _) = run(target, "contend", source, 160, 2, &["contend"]);
        assert_eq!(status, 0);
        let mut got: Vec<&str> = out.lines().collect();
        got.sort();
        let mut want: Vec<String> = (0..160u32)
            .flat_map(|id| (0..2).map(move |r| format!("item {id:3} round {r} {}", if id % 2 == 1 { "odd" } else { "even" })))
            .collect();
        want.sort();
        assert_eq!(got, want, "{target}");
    }
}
