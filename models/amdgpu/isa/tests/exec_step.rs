//! The embedding API of the executor: stepping waves under an external scheduler
//! (`exec::step`), routing and deferring vector memory accesses (`DeviceMemory::route`,
//! `VmemRequest`), work-group launch (`init_group_waves`) and wave checkpoints (serde).

mod support;

use amdgpu_isa::code_object::{CodeObject, KernelMetadata};
use amdgpu_isa::exec::{
    init_group_waves, load, prepare_dispatch, run_program, step, AccessKind, AtomicOp, CachePolicy, DeviceMemory, DispatchConfig,
    Element, ExecFault, MemFault, MemFaultKind, Memory, Program, Route, Space, StepEnv, StepOutcome, StepStop, VmemAccess, Wave,
    WaveStatus, CODE_BASE, KERNARG_BASE,
};
use amdgpu_isa::Target;
use support::build::{build_or_fail, read_or_fail, BuildRequest};
use support::corpus::{load_all, make_args, ArgValue, Buffer};
use support::reference::expected_outputs;

/// Device address of the first argument buffer; buffers are 16 MiB apart.
const BUFFER_BASE: u64 = 0x1_0000_0000;
const BUFFER_STRIDE: u64 = 0x100_0000;

/// A [`Memory`] whose `route` defers every vector atomic and logs every access it sees.
struct DeferAtomics {
    inner: Memory,
    defer_atomics: bool,
    log: Vec<(AccessKind, Space, CachePolicy, u32, u64, u64)>,
}

impl DeferAtomics {
    fn new(inner: Memory, defer_atomics: bool) -> DeferAtomics {
        DeferAtomics { inner, defer_atomics, log: Vec::new() }
    }
}

impl DeviceMemory for DeferAtomics {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        DeviceMemory::read(&mut self.inner, addr, buf)
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        DeviceMemory::write(&mut self.inner, addr, data)
    }

    fn reserve(&mut self, addr: u64, len: u64) -> Result<(), MemFault> {
        self.inner.map(addr, len)
    }

    fn route(&mut self, access: &VmemAccess<'_>) -> Route {
        let first = access.addrs[access.mask.trailing_zeros().min(63) as usize];
        self.log.push((access.kind, access.space, access.policy, access.bytes_per_lane, access.mask, first));
        if self.defer_atomics && matches!(access.kind, AccessKind::Atomic { .. }) {
            Route::Defer
        } else {
            Route::Now
        }
    }
}

fn buffer_bytes(buffer: &Buffer) -> Vec<u8> {
    match buffer {
        Buffer::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// Kernarg bytes of the explicit arguments; buffers are placed and filled in `mem`.
fn kernargs(metadata: &KernelMetadata, values: &[ArgValue], mem: &mut Memory) -> (Vec<u8>, Vec<u64>) {
    let explicit: Vec<_> = metadata.args.iter().filter(|a| !a.value_kind.is_hidden()).collect();
    assert_eq!(explicit.len(), values.len(), "sidecar vs metadata argument count");
    let end = explicit.iter().map(|a| (a.offset + a.size) as usize).max().unwrap_or(0);
    let mut bytes = vec![0u8; end];
    let mut addrs = Vec::new();
    for (i, (arg, value)) in explicit.iter().zip(values).enumerate() {
        let raw: Vec<u8> = match value {
            ArgValue::U32(v) => v.to_le_bytes().to_vec(),
            ArgValue::I32(v) => v.to_le_bytes().to_vec(),
            ArgValue::F32(v) => v.to_le_bytes().to_vec(),
            ArgValue::F64(v) => v.to_le_bytes().to_vec(),
            ArgValue::Buffer(b) => {
                let addr = BUFFER_BASE + i as u64 * BUFFER_STRIDE;
                let data = buffer_bytes(b);
                mem.map(addr, data.len().max(4) as u64).expect("map buffer");
                mem.write(addr, &data).expect("fill buffer");
                addr.to_le_bytes().to_vec()
            }
        };
        addrs.push(if let ArgValue::Buffer(_) = value { BUFFER_BASE + i as u64 * BUFFER_STRIDE } else { 0 });
        let at = arg.offset as usize;
        bytes[at..at + raw.len()].copy_from_slice(&raw);
    }
    (bytes, addrs)
}

fn read_u32s(mem: &Memory, addr: u64, n: usize) -> Vec<u32> {
    (0..n).map(|i| mem.read_u32(addr + 4 * i as u64).expect("output buffer is mapped")).collect()
}

/// Serializes every wave with postcard and replaces it by its deserialized copy.
fn checkpoint(waves: &mut [Wave]) {
    for w in waves.iter_mut() {
        let bytes = postcard::to_allocvec(&*w).expect("a wave serializes");
        let back: Wave = postcard::from_bytes(&bytes).expect("a serialized wave deserializes");
        assert_eq!(postcard::to_allocvec(&back).expect("serializes again"), bytes, "round trip is lossless");
        *w = back;
    }
}

/// What [`run_stepped`] observed.
#[derive(Debug, Default)]
struct SteppedRun {
    deferred: u64,
    checkpoints_with_pending: u64,
    instructions: u64,
}

/// Runs every work-group of a dispatch with `step` (budget 5 per turn, waves in turn),
/// ships deferred requests after each turn and performs them in reverse wave order,
/// releasing barriers when every unfinished wave waits at one. With `checkpoints`, all
/// waves go through a serde round trip after every turn, before the requests are shipped.
fn run_stepped(code: &CodeObject, kernel_name: &str, config: &DispatchConfig, explicit: &[u8], mem: &mut DeferAtomics, checkpoints: bool) -> SteppedRun {
    let program = load(code, CODE_BASE, mem).expect("code object loads");
    let kernel = code.kernel(kernel_name).expect("kernel exists");
    let setup = prepare_dispatch(&program, kernel, config, explicit, mem).expect("dispatch is valid");
    let mut run = SteppedRun::default();
    let mut counts = vec![0u64; 4096];
    for gz in 0..setup.groups[2] {
        for gy in 0..setup.groups[1] {
            for gx in 0..setup.groups[0] {
                let mut waves = init_group_waves(&setup.launch([gx, gy, gz]));
                let mut lds = vec![0u8; setup.lds_bytes as usize];
                for turn in 0u64.. {
                    assert!(turn < 1_000_000, "work-group [{gx}, {gy}, {gz}] does not finish");
                    for (i, w) in waves.iter_mut().enumerate() {
                        let mut env = StepEnv { mem: &mut *mem, lds: &mut lds, clock: turn, realtime: turn / 4, counts: Some(&mut counts) };
                        match step(w, &program, &mut env, 5) {
                            Ok(StepOutcome { executed, stop }) => {
                                run.instructions += executed;
                                run.deferred += (stop == StepStop::WaitMemory && executed > 0) as u64;
                            }
                            Err(fault) => panic!("wave {i} of group [{gx}, {gy}, {gz}] faulted: {fault}"),
                        }
                    }
                    if checkpoints {
                        run.checkpoints_with_pending += waves.iter().any(|w| w.pending.is_some()) as u64;
                        checkpoint(&mut waves);
                    }
                    let shipped: Vec<_> = waves.iter_mut().enumerate().filter_map(|(i, w)| w.take_request().map(|r| (i, r))).collect();
                    for (i, request) in shipped.into_iter().rev() {
                        let response = request.perform(&mut mem.inner).expect("deferred access succeeds");
                        waves[i].complete(&response).expect("the wave waits for this response");
                    }
                    if waves.iter().all(|w| w.status == WaveStatus::Ended) {
                        break;
                    }
                    if waves.iter().all(|w| matches!(w.status, WaveStatus::Ended | WaveStatus::Barrier)) {
                        for w in waves.iter_mut().filter(|w| w.status == WaveStatus::Barrier) {
                            w.status = WaveStatus::Running;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(counts.iter().sum::<u64>(), run.instructions, "per-opcode tallies add up to the executed instructions");
    run
}

/// The corpus kernels with global atomics, stepped with every atomic deferred, performed
/// out of issue order: outputs match the CPU reference. With checkpoints: every wave is
/// serialized and restored after every turn, including waves parked on a request.
#[test]
fn stepped_kernels_with_deferred_atomics_match_the_reference() {
    for name in ["histogram", "reduce_sum"] {
        let sidecar = load_all().into_iter().find(|s| s.kernel == name).expect("corpus sidecar");
        for processor in ["gfx90a", "gfx942"] {
            for checkpoints in [false, true] {
                let code = CodeObject::parse(&read_or_fail(&build_or_fail(&BuildRequest::new(sidecar.source_path(), processor)))).expect("parses");
                let metadata = code.kernel(name).and_then(|k| k.metadata.clone()).expect("metadata");
                let values = make_args(&sidecar).expect("args");
                let mut mem = Memory::new();
                let (bytes, addrs) = kernargs(&metadata, &values, &mut mem);
                let mut mem = DeferAtomics::new(mem, true);
                let config = DispatchConfig::new(sidecar.launch.grid, sidecar.launch.block);
                let run = run_stepped(&code, name, &config, &bytes, &mut mem, checkpoints);
                assert!(run.deferred > 0, "{name} on {processor}: no atomic was deferred");
                if checkpoints {
                    assert!(run.checkpoints_with_pending > 0, "{name} on {processor}: no checkpoint held a parked request");
                }
                let expected = expected_outputs(&sidecar, &values, processor).expect("reference");
                for (index, want) in expected {
                    let got = read_u32s(&mem.inner, addrs[index], want.len());
                    let want: Vec<u32> = match want {
                        Buffer::U32(v) => v,
                        Buffer::I32(v) => v.into_iter().map(|x| x as u32).collect(),
                        other => panic!("{name}: unexpected output type {}", other.elem()),
                    };
                    assert_eq!(got, want, "{name} on {processor} (checkpoints: {checkpoints}): output {index}");
                }
            }
        }
    }
}

/// A hand-written kernel with one of each routed access; `{..}` are the cache-policy
/// modifiers of the target's syntax.
const ROUTE_PROBE: &str = r#"
	.text
	.globl	route_probe
	.p2align	8
	.type	route_probe,@function
route_probe:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	v_lshlrev_b32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5] {LOAD}
	s_waitcnt vmcnt(0)
	v_mov_b32 v3, 1
	global_store_dwordx2 v1, v[2:3], s[4:5] offset:256 {STORE}
	global_atomic_add v3, v1, v3, s[4:5] offset:1024 {ATOMIC}
	s_waitcnt vmcnt(0)
	buffer_wbl2 {WB}
	s_endpgm
.Lroute_probe_end:
	.size	route_probe, .Lroute_probe_end-route_probe

	.rodata
	.p2align	6
	.amdhsa_kernel route_probe
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 4
		.amdhsa_next_free_sgpr 8
		.amdhsa_accum_offset 4
		.amdhsa_kernarg_size 8
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name:                       route_probe
    .symbol:                     route_probe.kd
    .kernarg_segment_size:       8
    .kernarg_segment_align:      8
    .group_segment_fixed_size:   0
    .private_segment_fixed_size: 0
    .wavefront_size:             64
    .sgpr_count:                 14
    .vgpr_count:                 4
    .max_flat_workgroup_size:    64
    .args:
      - { .name: buf, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
...
	.end_amdgpu_metadata
"#;

/// `route` sees the right kind, space, bytes per lane, lanes, first address and policy for
/// a scalar load, a global load, store and atomic, and a cache write-back, in both cache
/// policy syntaxes (gfx90a glc/slc/scc, gfx942 sc0/nt/sc1).
#[test]
fn route_sees_every_memory_access_of_a_compiled_kernel() {
    let none = CachePolicy::default();
    let sc0 = CachePolicy { sc0: true, ..none };
    let nt = CachePolicy { nt: true, ..none };
    let sc1 = CachePolicy { sc1: true, ..none };
    let cases = [
        ("gfx90a", ["glc", "slc", "glc", ""], none),
        ("gfx942", ["sc0", "nt", "sc0", "sc1"], sc1),
    ];
    for (processor, [load_bits, store_bits, atomic_bits, wb_bits], wb_policy) in cases {
        let source = ROUTE_PROBE
            .replace("{LOAD}", load_bits)
            .replace("{STORE}", store_bits)
            .replace("{ATOMIC}", atomic_bits)
            .replace("{WB}", wb_bits);
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-step");
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(format!("route_probe_{processor}.s"));
        std::fs::write(&path, source).expect("write probe source");
        let code = CodeObject::parse(&read_or_fail(&build_or_fail(&BuildRequest::new(&path, processor)))).expect("parses");
        let mut mem = DeferAtomics::new(Memory::new(), false);
        mem.inner.map(BUFFER_BASE, 4096).expect("map buffer");
        let program = load(&code, CODE_BASE, &mut mem).expect("loads");
        let kernel = code.kernel("route_probe").expect("kernel");
        let config = DispatchConfig::new([64, 1, 1], [64, 1, 1]);
        run_program(&program, kernel, &config, &BUFFER_BASE.to_le_bytes(), &mut mem).expect("runs");
        let all = u64::MAX;
        let expected = vec![
            (AccessKind::ScalarLoad, Space::Scalar, none, 8, 1, KERNARG_BASE),
            (AccessKind::Load, Space::Global, sc0, 4, all, BUFFER_BASE),
            (AccessKind::Store, Space::Global, nt, 8, all, BUFFER_BASE + 256),
            (AccessKind::Atomic { returns: true }, Space::Global, sc0, 4, all, BUFFER_BASE + 1024),
            (AccessKind::Writeback, Space::Buffer, wb_policy, 0, 1, 0),
        ];
        assert_eq!(mem.log, expected, "{processor}");
        assert_eq!(read_u32s(&mem.inner, BUFFER_BASE + 1024, 64), vec![1; 64], "{processor}: the atomics ran");
    }
}

const BASE: u64 = 0x10_0000;
const S_SLEEP_3: u32 = 0xbf8e_0003;
const S_BARRIER: u32 = 0xbf8a_0000;
const S_ENDPGM: u32 = 0xbf81_0000;
/// `s_memtime s[2:3]` (two words).
const S_MEMTIME: [u32; 2] = [0xc090_0080, 0];
/// `s_memrealtime s[6:7]` (two words).
const S_MEMREALTIME: [u32; 2] = [0xc094_0180, 0];
/// `global_load_dword v2, v1, s[4:5]` (two words).
const GLOBAL_LOAD: [u32; 2] = [0xdc50_8000, 0x0204_0001];

fn env<'a>(mem: &'a mut Memory, lds: &'a mut [u8], clock: u64) -> StepEnv<'a, Memory> {
    StepEnv { mem, lds, clock, realtime: clock / 100, counts: None }
}

/// `step` stops at the budget, at `s_sleep` (wave still runnable, 64 cycles per unit),
/// at `s_barrier` (until the caller releases it) and at `s_endpgm`; the clocks of the
/// environment are what `s_memtime`/`s_memrealtime` read.
#[test]
fn step_stops_at_budget_sleep_barrier_and_end() {
    let mut words = vec![S_MEMTIME[0], S_MEMTIME[1], S_MEMREALTIME[0], S_MEMREALTIME[1], S_SLEEP_3, S_BARRIER, S_ENDPGM];
    words.push(S_ENDPGM);
    let program = Program::from_words(Target::Gfx942, BASE, &words);
    let mut mem = Memory::new();
    let mut lds = vec![0u8; 64];
    let mut wave = Wave::new(BASE, 0x3f0);
    let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 12_345), 1).expect("steps");
    assert_eq!(out, StepOutcome { executed: 1, stop: StepStop::Budget });
    assert_eq!(wave.sgpr_pair(2), 12_345, "s_memtime reads the clock");
    let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 77_700), 100).expect("steps");
    assert_eq!(out, StepOutcome { executed: 2, stop: StepStop::Sleep { cycles: 192 } });
    assert_eq!(wave.sgpr_pair(6), 777, "s_memrealtime reads the real-time clock");
    assert_eq!(wave.status, WaveStatus::Running, "a sleeping wave resumes when stepped again");
    assert_eq!(wave.pc, BASE + 20, "the wave continues after s_sleep");
    let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 100).expect("steps");
    assert_eq!(out, StepOutcome { executed: 1, stop: StepStop::Barrier });
    assert_eq!(wave.status, WaveStatus::Barrier);
    let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 100).expect("steps");
    assert_eq!(out, StepOutcome { executed: 0, stop: StepStop::Barrier }, "a waiting wave does not run");
    wave.status = WaveStatus::Running;
    let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 100).expect("steps");
    assert_eq!(out, StepOutcome { executed: 1, stop: StepStop::Ended });
    assert!(wave.ended());
}

/// A fault stops the wave for good: the first step returns the fault, later ones
/// `WaveFaulted`.
#[test]
fn a_faulting_wave_stays_stopped() {
    let program = Program::from_words(Target::Gfx942, BASE, &[GLOBAL_LOAD[0], GLOBAL_LOAD[1], S_ENDPGM]);
    let mut mem = Memory::new();
    let mut lds = vec![0u8; 64];
    let mut wave = Wave::new(BASE, 0x3f0);
    wave.set_sgpr_pair(4, 0xdead_0000);
    let fault = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 100).expect_err("unmapped load faults");
    assert_eq!(fault, ExecFault::Memory { pc: BASE, addr: 0xdead_0000, kind: MemFaultKind::Unmapped });
    assert_eq!(wave.status, WaveStatus::Faulted);
    let again = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 100).expect_err("still faulted");
    assert!(matches!(again, ExecFault::WaveFaulted { .. }), "{again}");
}

/// A memory that defers every vector access.
struct DeferAll(Memory);

impl DeviceMemory for DeferAll {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        DeviceMemory::read(&mut self.0, addr, buf)
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        DeviceMemory::write(&mut self.0, addr, data)
    }

    fn route(&mut self, _access: &VmemAccess<'_>) -> Route {
        Route::Defer
    }
}

/// A deferred load parks a self-contained request and stops the wave; performing it and
/// completing the wave writes exactly the EXEC lanes of the destination; a request that
/// faults stops the wave with a memory fault naming the instruction.
#[test]
fn deferred_load_completes_or_fails() {
    let program = Program::from_words(Target::Gfx942, BASE, &[GLOBAL_LOAD[0], GLOBAL_LOAD[1], S_ENDPGM]);
    let data = 0x4000_0000u64;
    let mut mem = DeferAll(Memory::new());
    mem.0.map(data, 4096).expect("map");
    for i in 0..64u64 {
        mem.0.write_u32(data + 4 * i, 1000 + i as u32).expect("fill");
    }
    let mut wave = Wave::new(BASE, 0x3f0);
    wave.set_sgpr_pair(4, data);
    wave.set_exec(0x0000_ffff_0000_ffff);
    for lane in 0..64 {
        wave.vgpr[1][lane] = 4 * lane as u32;
        wave.vgpr[2][lane] = 7;
    }
    let mut lds = vec![0u8; 64];
    let mut env = StepEnv { mem: &mut mem, lds: &mut lds, clock: 0, realtime: 0, counts: None };
    let out = step(&mut wave, &program, &mut env, 100).expect("steps");
    assert_eq!(out, StepOutcome { executed: 1, stop: StepStop::WaitMemory });
    assert_eq!(wave.status, WaveStatus::WaitMemory);
    assert_eq!(wave.vgpr[2], [7; 64], "nothing written before completion");
    let mut saved = wave.clone();
    let request = wave.take_request().expect("a parked request");
    assert!(wave.take_request().is_none(), "taken once");
    assert_eq!((request.kind, request.space, request.element, request.dwords), (AccessKind::Load, Space::Global, Element::Dwords, 1));
    assert_eq!(request.mask, 0x0000_ffff_0000_ffff);
    assert_eq!(request.addrs[5], data + 20);
    assert_eq!(request.dest.map(|d| (d.first, d.count, d.acc)), Some((2, 1, false)));
    let response = request.perform(&mut mem.0).expect("mapped");
    wave.complete(&response).expect("waiting for it");
    for lane in 0..64 {
        let want = if (0x0000_ffff_0000_ffffu64 >> lane) & 1 != 0 { 1000 + lane as u32 } else { 7 };
        assert_eq!(wave.vgpr[2][lane], want, "lane {lane}");
    }
    assert!(wave.complete(&response).is_err(), "a second completion is refused");
    assert_eq!(step(&mut wave, &program, &mut StepEnv { mem: &mut mem, lds: &mut lds, clock: 0, realtime: 0, counts: None }, 100).expect("steps").stop, StepStop::Ended);

    // The same request against an unmapped address: the wave stops with the fault.
    let mut request = saved.take_request().expect("parked in the clone");
    request.addrs[0] = 0xbad_0000;
    let fault = request.perform(&mut mem.0).expect_err("unmapped");
    let fault = saved.fail_pending(fault);
    assert_eq!(fault, ExecFault::Memory { pc: BASE, addr: 0xbad_0000, kind: MemFaultKind::Unmapped });
    assert_eq!(saved.status, WaveStatus::Faulted);
}

/// `init_group_waves` gives a partial work-group at the grid's edge only its work-items:
/// the right number of waves, a partial EXEC on the last one, packed work-item ids.
#[test]
fn init_group_waves_handles_partial_groups() {
    let sidecar = load_all().into_iter().find(|s| s.kernel == "asm_vector_add").expect("sidecar");
    let code = CodeObject::parse(&read_or_fail(&build_or_fail(&BuildRequest::new(sidecar.source_path(), "gfx942")))).expect("parses");
    let kernel = code.kernel("asm_vector_add").expect("kernel");
    let mut mem = Memory::new();
    let program = load(&code, CODE_BASE, &mut mem).expect("loads");
    let config = DispatchConfig::new([300, 1, 1], [128, 1, 1]);
    let setup = prepare_dispatch(&program, kernel, &config, &[0u8; 24], &mut mem).expect("valid");
    assert_eq!(setup.groups, [3, 1, 1]);
    let full = init_group_waves(&setup.launch([0, 0, 0]));
    assert_eq!(full.len(), 2);
    assert!(full.iter().all(|w| w.exec() == u64::MAX));
    let edge = init_group_waves(&setup.launch([2, 0, 0]));
    assert_eq!(edge.len(), 1, "300 - 256 = 44 work-items");
    assert_eq!(edge[0].exec(), (1u64 << 44) - 1);
    assert_eq!(edge[0].vgpr[0][43], 43);
    assert_eq!(edge[0].sgpr[2], 2, "work-group id x in the first system SGPR");
    assert_eq!(edge[0].sgpr_pair(0), KERNARG_BASE, "kernarg pointer in s[0:1]");
    assert!(init_group_waves(&setup.launch([3, 0, 0])).is_empty(), "a group outside the grid has no waves");
    // The register files are what the descriptor allocates, not the architectural 256.
    let kd = &kernel.descriptor;
    assert_eq!(edge[0].vgpr.len(), kd.arch_vgprs() as usize);
    assert!(kd.vgpr_count() < 64, "a small kernel allocates few VGPRs");
    assert_eq!(edge[0].agpr.len(), kd.acc_vgprs() as usize);
}

/// `AtomicOp` is usable by a memory-side component on its own.
#[test]
fn atomic_ops_are_applied_by_a_memory_side_component() {
    assert_eq!(AtomicOp::Umax.apply_u32(3, 9, 0), 9);
    assert_eq!(AtomicOp::Cmpswap.apply_u64(5, 6, 5), 6);
    let mut mem = Memory::new();
    mem.map(0x1000, 16).expect("map");
    assert_eq!(DeviceMemory::atomic_u32(&mut mem, 0x1000, AtomicOp::Add, 5, 0), Ok(0));
    assert_eq!(DeviceMemory::atomic_u32(&mut mem, 0x1000, AtomicOp::Add, 5, 0), Ok(5));
    assert_eq!(mem.read_u32(0x1000), Ok(10));
}

/// VOP2/VOP1 `_e32` forms (`v_op v3, v1, v2`; assembled with llvm-mc-19 -mcpu=gfx942):
/// the executor runs them through its pre-resolved fast path.
const FAST_E32: &[(&str, u32)] = &[
    ("v_cndmask_b32", 0x0006_0501),
    ("v_add_f32", 0x0206_0501),
    ("v_sub_f32", 0x0406_0501),
    ("v_mul_f32", 0x0a06_0501),
    ("v_min_f32", 0x1406_0501),
    ("v_max_f32", 0x1606_0501),
    ("v_lshrrev_b32", 0x2006_0501),
    ("v_ashrrev_i32", 0x2206_0501),
    ("v_lshlrev_b32", 0x2406_0501),
    ("v_and_b32", 0x2606_0501),
    ("v_or_b32", 0x2806_0501),
    ("v_xor_b32", 0x2a06_0501),
    ("v_add_u32", 0x6806_0501),
    ("v_sub_u32", 0x6a06_0501),
    ("v_subrev_u32", 0x6c06_0501),
    ("v_fmac_f32", 0x7606_0501),
    ("v_mul_u32_u24", 0x1006_0501),
    ("v_min_u32", 0x1c06_0501),
    ("v_max_u32", 0x1e06_0501),
    ("v_mov_b32", 0x7e06_0301),
    ("v_not_b32", 0x7e06_5701),
];

/// Lane values mixing random bits with the f32 edge cases (zeros, infinities, quiet and
/// signalling NaNs, denormals, small shift counts); with `finite`, finite floats only
/// (the fast path declines f32 arithmetic on infinities and NaNs).
fn lane_values(seed: u64, finite: bool) -> [u32; 64] {
    const SPECIAL: [u32; 12] =
        [0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0001, 0x7f80_0001, 0xffc0_0000, 1, 0x8000_0001, 0x3f80_0000, 31, 5];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    std::array::from_fn(|i| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = if x.is_multiple_of(3) {
            SPECIAL[(x >> 8) as usize % SPECIAL.len()]
        } else if i % 5 == 0 {
            (x >> 20) as u32 & 0x3f
        } else {
            (x >> 16) as u32
        };
        if finite && v & 0x7f80_0000 == 0x7f80_0000 {
            v & 0xbfff_ffff
        } else {
            v
        }
    })
}

/// Every pre-resolved VOP1/VOP2 operation gives the same registers as its DPP form with
/// the identity `quad_perm` (which the general handlers execute), for distinct and
/// aliased registers, full and partial EXEC, and MODE with IEEE on and off.
#[test]
fn fast_path_matches_the_general_handlers() {
    for &(name, e32) in FAST_E32 {
        let unary = e32 >> 25 == 0x3f;
        // (vdst, src0, vsrc1) layouts: distinct, dst = src0, dst = src1, all the same.
        for (d, a, b) in [(3u32, 1u32, 2u32), (1, 1, 2), (2, 1, 2), (1, 1, 1)] {
            // VOP1 keeps its opcode in bits 16:9, where VOP2 has vsrc1.
            let fast = if unary {
                (e32 & !((0xff << 17) | 0x1ff)) | (d << 17) | (256 + a)
            } else {
                (e32 & !((0xff << 17) | (0xff << 9) | 0x1ff)) | (d << 17) | (b << 9) | (256 + a)
            };
            let dpp = [(fast & !0x1ff) | 0xfa, 0xff00_e400 | a];
            let configs = [
                (u64::MAX, 0x3f0, 1u64, false),
                (0xf0f0_1234_8000_ffff, 0x3f0, 2, false),
                (u64::MAX, 0x1f0, 3, false),
                (u64::MAX, 0x3f0, 4, true),
                (0x0123_4567_89ab_cdef, 0x1f0, 5, true),
            ];
            for (exec, mode, seed, finite) in configs {
                let run = |words: &[u32]| {
                    let mut all = words.to_vec();
                    all.push(S_ENDPGM);
                    let program = Program::from_words(Target::Gfx942, BASE, &all);
                    let mut wave = Wave::new(BASE, mode);
                    for r in 0..4 {
                        wave.vgpr[r] = lane_values(seed * 10 + r as u64, finite);
                    }
                    wave.set_vcc(0x1234_5678_9abc_def0 ^ seed);
                    wave.set_exec(exec);
                    let mut mem = Memory::new();
                    let mut lds = vec![0u8; 64];
                    let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 10).expect("runs");
                    assert_eq!(out.stop, StepStop::Ended, "{name}");
                    wave.vgpr.as_slice()[..4].to_vec()
                };
                let (got, want) = (run(&[fast]), run(&dpp));
                for r in 0..4 {
                    for lane in 0..64 {
                        assert_eq!(
                            got[r][lane], want[r][lane],
                            "{name} v{d}, v{a}, v{b} (unary: {unary}) exec {exec:#x} mode {mode:#x}: v{r} lane {lane}"
                        );
                    }
                }
            }
        }
    }
}

/// `global_atomic_pk_add_f16` / `_bf16` add both 16-bit halves per lane, performed at
/// once or deferred and performed by the memory side with the same result.
#[test]
fn packed_16_bit_atomic_adds_run_now_and_deferred() {
    // global_atomic_pk_add_f16 v1, v2, s[4:5] and global_atomic_pk_add_bf16 v1, v2, s[4:5]
    // (llvm-mc-19 -mcpu=gfx942).
    let cases = [([0xdd38_8000u32, 0x0004_0201u32], 0x3c00_3800u32, 0x4000_3c00u32, 0x4200_3e00u32), ([0xdd48_8000, 0x0004_0201], 0x3f80_3f00, 0x3f80_3f80, 0x4000_3fc0)];
    for (words, init, add, want) in cases {
        for defer in [false, true] {
            let program = Program::from_words(Target::Gfx942, BASE, &[words[0], words[1], S_ENDPGM]);
            let data = 0x5000_0000u64;
            let mut inner = Memory::new();
            inner.map(data, 4096).expect("map");
            for lane in 0..64u64 {
                inner.write_u32(data + 4 * lane, init).expect("fill");
            }
            let mut mem = DeferAtomics::new(inner, defer);
            let mut wave = Wave::new(BASE, 0x3f0);
            wave.set_sgpr_pair(4, data);
            for lane in 0..64 {
                wave.vgpr[1][lane] = 4 * lane as u32;
                wave.vgpr[2][lane] = add;
            }
            let mut lds = vec![0u8; 64];
            let mut env = StepEnv { mem: &mut mem, lds: &mut lds, clock: 0, realtime: 0, counts: None };
            let out = step(&mut wave, &program, &mut env, 10).expect("runs");
            if defer {
                assert_eq!(out.stop, StepStop::WaitMemory);
                let request = wave.take_request().expect("parked");
                assert_eq!(request.op, Some(if words[0] == 0xdd38_8000 { AtomicOp::PkAddF16 } else { AtomicOp::PkAddBf16 }));
                let response = request.perform(&mut mem.inner).expect("mapped");
                wave.complete(&response).expect("waiting");
            } else {
                assert_eq!(out.stop, StepStop::Ended);
            }
            assert_eq!(read_u32s(&mem.inner, data, 64), vec![want; 64], "{words:x?} deferred: {defer}");
        }
    }
}

/// `v_fmamk_f32` (D = S0 * K + S1) and `v_fmaak_f32` (D = S0 * S1 + K), which the fast
/// path runs as fmas with the literal as an operand, against the host's fused multiply-add
/// lane by lane (finite values, round-to-nearest-even, denormals kept).
#[test]
fn fmamk_and_fmaak_are_fused_multiply_adds_with_the_literal() {
    let (k_mk, k_ak) = (0x3f7f_f972u32, 0x4049_0fdbu32);
    /// Name, encoding, host reference `(s0, s1, k)`, literal.
    type Case = (&'static str, [u32; 2], fn(f32, f32, f32) -> f32, u32);
    let cases: [Case; 2] = [
        ("v_fmamk_f32", [0x2e06_0501, k_mk], |a, b, k| a.mul_add(k, b), k_mk),
        ("v_fmaak_f32", [0x3006_0501, k_ak], |a, b, k| a.mul_add(b, k), k_ak),
    ];
    for (name, words, reference, k) in cases {
        let mut all = words.to_vec();
        all.push(S_ENDPGM);
        let program = Program::from_words(Target::Gfx942, BASE, &all);
        let mut wave = Wave::new(BASE, 0x3f0);
        wave.vgpr[1] = lane_values(7, true);
        wave.vgpr[2] = lane_values(8, true);
        let exec = 0xffff_0f0f_ffff_fff0u64;
        wave.set_exec(exec);
        let before = wave.vgpr[3];
        let mut mem = Memory::new();
        let mut lds = vec![0u8; 64];
        let out = step(&mut wave, &program, &mut env(&mut mem, &mut lds, 0), 10).expect("runs");
        assert_eq!(out.stop, StepStop::Ended, "{name}");
        for (lane, &old) in before.iter().enumerate() {
            let want = if (exec >> lane) & 1 == 1 {
                reference(f32::from_bits(wave.vgpr[1][lane]), f32::from_bits(wave.vgpr[2][lane]), f32::from_bits(k)).to_bits()
            } else {
                old
            };
            let got = wave.vgpr[3][lane];
            let both_nan = f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan();
            assert!(got == want || both_nan, "{name} lane {lane}: {got:#x} != {want:#x}");
        }
    }
}
