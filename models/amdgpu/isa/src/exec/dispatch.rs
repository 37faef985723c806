//! Dispatching a kernel: device-memory layout of the code object, kernarg segment (with the
//! hidden arguments of code object v5+), AQL packet and scratch; initial register state of
//! each wave from the kernel descriptor; and the work-group scheduler.
//!
//! Work-groups run one after another. Inside a work-group the waves are interleaved: each
//! runs until it ends or reaches `s_barrier`; when every unfinished wave waits at the
//! barrier, all are released.
//!
//! Device memory layout used by [`run_kernel`] (all far above typical test buffers):
//!
//! ```text
//! CODE_BASE      0x7f00_0000_0000  code object image (relocated)
//! DISPATCH_BASE  0x7e00_0000_0000  AQL dispatch packet, then a zeroed queue descriptor
//! KERNARG_BASE   0x7e00_0001_0000  kernarg segment
//! SCRATCH_BASE   0x7d00_0000_0000  per-wave private memory (lane-major)
//! ```

use std::collections::BTreeMap;

use crate::code_object::{ArgValueKind, CodeObject, InitialSgpr, Kernel, KernelDescriptor, WorkitemIdVgprs};
use crate::decode::{Encoding, Opcode};
use crate::numeric::Mode;

use super::gws::FunctionalGws;
use super::interp::{run_wave, Stop};
use super::operands::{Ctx, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use super::device::DeviceMemory;
use super::hwreg::GroupPlace;
use super::memory::Memory;
use super::program::Program;
use super::wave::{Wave, WaveStatus, FLAT_SCRATCH_LO, WAVE_LANES};
use super::ExecFault;

/// Where [`run_kernel`] loads the code object.
pub const CODE_BASE: u64 = 0x7f00_0000_0000;
/// Address of the AQL dispatch packet.
pub const DISPATCH_BASE: u64 = 0x7e00_0000_0000;
/// Address of the (zeroed) AQL queue descriptor.
pub const QUEUE_BASE: u64 = DISPATCH_BASE + 0x1000;
/// Address of the kernarg segment.
pub const KERNARG_BASE: u64 = 0x7e00_0001_0000;
/// Base of the scratch area.
pub const SCRATCH_BASE: u64 = 0x7d00_0000_0000;

/// Largest private segment per work-item a dispatch may ask for (the hardware limit is
/// lower); larger descriptors are rejected instead of allocating gigabytes.
pub const MAX_SCRATCH_PER_LANE: u32 = 1 << 20;

/// Size of the opcode counter table (greater than the number of opcodes).
const OPCODE_SLOTS: usize = 4096;

/// Launch parameters besides the kernel and its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchConfig {
    /// Work-items per dimension (HSA grid size).
    pub grid: [u32; 3],
    /// Work-group size per dimension.
    pub block: [u32; 3],
    /// Bytes of dynamic LDS added to the descriptor's static size.
    pub dynamic_lds: u32,
    /// Wave-instructions the whole dispatch may execute before it is declared hung.
    pub max_wave_instructions: u64,
}

impl DispatchConfig {
    /// A dispatch of `grid` work-items in work-groups of `block`, no dynamic LDS, and a
    /// budget of 2^32 wave-instructions.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> DispatchConfig {
        DispatchConfig { grid, block, dynamic_lds: 0, max_wave_instructions: 1 << 32 }
    }
}

/// What a dispatch executed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Wave-instructions executed in total.
    pub wave_instructions: u64,
    /// Waves launched.
    pub waves: u64,
    /// Work-groups launched.
    pub workgroups: u64,
    /// Executed wave-instructions per opcode (only opcodes that ran).
    pub per_opcode: BTreeMap<Opcode, u64>,
    /// Executed wave-instructions per encoding family name (`VOP2`, `SMEM`, ...).
    pub per_class: BTreeMap<&'static str, u64>,
}

/// Loads `code` at [`CODE_BASE`] into `mem` and runs kernel `name` over `grid` work-items
/// in work-groups of `block`, with the explicit kernel arguments `kernarg` (the hidden
/// arguments are filled in from the metadata).
pub fn run_kernel(
    code: &CodeObject,
    name: &str,
    grid: [u32; 3],
    block: [u32; 3],
    kernarg: &[u8],
    mem: &mut Memory,
) -> Result<DispatchStats, ExecFault> {
    let program = load(code, CODE_BASE, mem)?;
    let kernel = code.kernel(name).ok_or_else(|| ExecFault::NoSuchKernel { name: name.to_string() })?;
    run_program(&program, kernel, &DispatchConfig::new(grid, block), kernarg, mem)
}

/// Writes the relocated image of `code` at `base` and pre-decodes it.
pub fn load<M: DeviceMemory + ?Sized>(code: &CodeObject, base: u64, mem: &mut M) -> Result<Program, ExecFault> {
    let image = code.load_image(base).map_err(|e| ExecFault::Load { reason: e.to_string() })?;
    mem.reserve(base, image.len() as u64).map_err(|e| ExecFault::Load { reason: e.to_string() })?;
    mem.write(base, &image).map_err(|e| ExecFault::Load { reason: e.to_string() })?;
    Program::new(code, base)
}

/// Lays out the kernarg segment: explicit bytes first, hidden arguments (grid and
/// work-group sizes, dimensions, remainders...) at their metadata offsets. Loaders use
/// it to build what a dispatch packet's `kernarg_address` points to.
pub fn kernarg_segment(kernel: &Kernel, config: &DispatchConfig, explicit: &[u8]) -> Vec<u8> {
    let size = (kernel.descriptor.kernarg_size as usize).max(explicit.len()).max(256);
    let mut seg = vec![0u8; size];
    seg[..explicit.len()].copy_from_slice(explicit);
    let Some(meta) = &kernel.metadata else { return seg };
    let dims = if config.grid[2] > 1 {
        3
    } else if config.grid[1] > 1 {
        2
    } else {
        1
    };
    for arg in &meta.args {
        let d = |i: usize| i;
        let value: u64 = match arg.value_kind {
            ArgValueKind::HiddenBlockCountX => config.grid[d(0)].div_ceil(config.block[0]) as u64,
            ArgValueKind::HiddenBlockCountY => config.grid[d(1)].div_ceil(config.block[1]) as u64,
            ArgValueKind::HiddenBlockCountZ => config.grid[d(2)].div_ceil(config.block[2]) as u64,
            ArgValueKind::HiddenGroupSizeX => config.block[0] as u64,
            ArgValueKind::HiddenGroupSizeY => config.block[1] as u64,
            ArgValueKind::HiddenGroupSizeZ => config.block[2] as u64,
            ArgValueKind::HiddenRemainderX => (config.grid[0] % config.block[0]) as u64,
            ArgValueKind::HiddenRemainderY => (config.grid[1] % config.block[1]) as u64,
            ArgValueKind::HiddenRemainderZ => (config.grid[2] % config.block[2]) as u64,
            ArgValueKind::HiddenGridDims => dims,
            ArgValueKind::HiddenQueuePtr => QUEUE_BASE,
            ArgValueKind::HiddenDynamicLdsSize => config.dynamic_lds as u64,
            ArgValueKind::HiddenPrivateBase => PRIVATE_APERTURE_HI as u64,
            ArgValueKind::HiddenSharedBase => SHARED_APERTURE_HI as u64,
            _ if arg.value_kind.is_hidden() => 0,
            _ => continue,
        };
        let start = arg.offset as usize;
        let len = (arg.size as usize).min(8);
        if let Some(dst) = seg.get_mut(start..start + len) {
            dst.copy_from_slice(&value.to_le_bytes()[..len]);
        }
    }
    seg
}

/// The AQL kernel dispatch packet (64 bytes).
fn dispatch_packet(kernel: &Kernel, config: &DispatchConfig, lds: u32, program: &Program) -> [u8; 64] {
    let mut p = [0u8; 64];
    let dims: u16 = if config.grid[2] > 1 {
        3
    } else if config.grid[1] > 1 {
        2
    } else {
        1
    };
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for i in 0..3 {
        p[4 + 2 * i..6 + 2 * i].copy_from_slice(&(config.block[i] as u16).to_le_bytes());
        p[12 + 4 * i..16 + 4 * i].copy_from_slice(&config.grid[i].to_le_bytes());
    }
    p[24..28].copy_from_slice(&kernel.descriptor.private_segment_fixed_size.to_le_bytes());
    p[28..32].copy_from_slice(&lds.to_le_bytes());
    p[32..40].copy_from_slice(&program.base().wrapping_add(kernel.descriptor_address.0).to_le_bytes());
    p[40..48].copy_from_slice(&KERNARG_BASE.to_le_bytes());
    p
}

/// A dispatch whose kernarg segment, AQL packet, queue descriptor and scratch are in
/// memory (at the `*_BASE` addresses): what [`run_program`] and external schedulers launch
/// work-groups from.
#[derive(Debug, Clone)]
pub struct DispatchSetup<'k> {
    /// The kernel.
    pub kernel: &'k Kernel,
    /// Launch parameters.
    pub config: DispatchConfig,
    /// The kernarg segment as written to [`KERNARG_BASE`] (hidden arguments included).
    pub kernarg: Vec<u8>,
    /// Bytes of LDS per work-group (static plus dynamic).
    pub lds_bytes: u32,
    /// Bytes of scratch per work-item (0: none).
    pub scratch_lane_bytes: u32,
    /// Initial MODE register.
    pub mode_bits: u32,
    /// Work-groups per dimension.
    pub groups: [u32; 3],
    /// Device address of the kernel's first instruction.
    pub entry_pc: u64,
}

impl DispatchSetup<'_> {
    /// The launch of work-group `group_id` (all work-groups share the scratch at
    /// [`SCRATCH_BASE`], so only one group may run at a time), placed alone on compute
    /// unit 0 ([`GroupPlace::alone`]).
    pub fn launch(&self, group_id: [u32; 3]) -> WaveLaunch<'_> {
        WaveLaunch {
            descriptor: &self.kernel.descriptor,
            entry_pc: self.entry_pc,
            grid: self.config.grid,
            block: self.config.block,
            group_id,
            dispatch_ptr: DISPATCH_BASE,
            queue_ptr: QUEUE_BASE,
            kernarg_ptr: KERNARG_BASE,
            dispatch_id: 0,
            kernarg: &self.kernarg,
            scratch_base: SCRATCH_BASE,
            scratch_lane_bytes: self.scratch_lane_bytes,
            mode_bits: self.mode_bits,
            lds_bytes: self.lds_bytes,
            place: GroupPlace::alone(),
        }
    }
}

/// Checks the dispatch and writes its kernarg segment (explicit bytes `kernarg`, hidden
/// arguments from the metadata), AQL packet and queue descriptor to `mem`, and reserves
/// the scratch of one work-group.
pub fn prepare_dispatch<'k, M: DeviceMemory + ?Sized>(
    program: &Program,
    kernel: &'k Kernel,
    config: &DispatchConfig,
    kernarg: &[u8],
    mem: &mut M,
) -> Result<DispatchSetup<'k>, ExecFault> {
    let kd = &kernel.descriptor;
    if kd.wavefront_size() != 64 {
        return Err(ExecFault::BadDispatch { reason: format!("kernel {} is wave32; CDNA runs wave64 only", kernel.name) });
    }
    if config.grid.contains(&0) || config.block.contains(&0) {
        return Err(ExecFault::BadDispatch { reason: format!("zero grid {:?} or block {:?}", config.grid, config.block) });
    }
    let group_items = config.block.iter().map(|&b| b as u64).product::<u64>();
    if group_items > 1024 {
        return Err(ExecFault::BadDispatch { reason: format!("work-group of {group_items} work-items exceeds 1024") });
    }
    let lds_bytes = kd.group_segment_fixed_size.saturating_add(config.dynamic_lds);
    if lds_bytes > 160 * 1024 {
        return Err(ExecFault::BadDispatch { reason: format!("{lds_bytes} bytes of LDS exceed 160 KiB") });
    }
    let seg = kernarg_segment(kernel, config, kernarg);
    let mem_err = |e: super::MemFault| ExecFault::Load { reason: e.to_string() };
    mem.reserve(KERNARG_BASE, seg.len() as u64).map_err(mem_err)?;
    mem.write(KERNARG_BASE, &seg).map_err(mem_err)?;
    mem.reserve(DISPATCH_BASE, 64).map_err(mem_err)?;
    mem.write(DISPATCH_BASE, &dispatch_packet(kernel, config, lds_bytes, program)).map_err(mem_err)?;
    mem.reserve(QUEUE_BASE, 256).map_err(mem_err)?;
    mem.write(QUEUE_BASE, &[0u8; 256]).map_err(mem_err)?;

    let waves_per_group = group_items.div_ceil(WAVE_LANES as u64) as usize;
    let lane_bytes = if kd.properties.uses_dynamic_stack { kd.private_segment_fixed_size.max(16 * 1024) } else { kd.private_segment_fixed_size }
        .next_multiple_of(16);
    if lane_bytes > MAX_SCRATCH_PER_LANE {
        return Err(ExecFault::BadDispatch { reason: format!("{lane_bytes} bytes of scratch per work-item exceed {MAX_SCRATCH_PER_LANE}") });
    }
    if lane_bytes > 0 {
        mem.reserve(SCRATCH_BASE, lane_bytes as u64 * WAVE_LANES as u64 * waves_per_group as u64).map_err(mem_err)?;
    }
    Ok(DispatchSetup {
        kernel,
        config: *config,
        kernarg: seg,
        lds_bytes,
        scratch_lane_bytes: lane_bytes,
        mode_bits: initial_mode_bits(kd),
        groups: [0, 1, 2].map(|d| config.grid[d].div_ceil(config.block[d])),
        entry_pc: program.base().wrapping_add(kernel.entry.0),
    })
}

/// Runs `kernel` of an already loaded `program` on any [`DeviceMemory`] (its `route` is
/// consulted, but deferral is not supported here: a deferred access is performed at once
/// with [`VmemRequest::perform`](super::VmemRequest::perform)). `ds_gws_*` requests go to
/// one [`GwsUnit`](super::GwsUnit) of the dispatch; a wave left waiting in it is a
/// [`ExecFault::Hang`] (work-groups run one after the other).
pub fn run_program<M: DeviceMemory>(
    program: &Program,
    kernel: &Kernel,
    config: &DispatchConfig,
    kernarg: &[u8],
    mem: &mut M,
) -> Result<DispatchStats, ExecFault> {
    let setup = prepare_dispatch(program, kernel, config, kernarg, mem)?;
    let groups = setup.groups;
    let mut counts = vec![0u64; OPCODE_SLOTS];
    let mut lds = vec![0u8; setup.lds_bytes as usize];
    let mut stats = DispatchStats::default();
    let mut budget = config.max_wave_instructions;
    let mut gws = FunctionalGws::default();

    for gz in 0..groups[2] {
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                let gid = [gx, gy, gz];
                lds.fill(0);
                let launch = setup.launch(gid);
                let mut waves = init_group_waves(&launch);
                let n_waves = waves.len();
                stats.waves += n_waves as u64;
                stats.workgroups += 1;
                let mut ctx = Ctx { mem: &mut *mem, lds: &mut lds, target: program.target(), counts: &mut counts, clock: 0, realtime: 0 };
                let before = budget;
                gws.next_group();
                loop {
                    for (wi, w) in waves.iter_mut().enumerate() {
                        gws.resume(wi as u64, w)?;
                        while w.status == WaveStatus::Running {
                            if run_wave(w, program, &mut ctx, &mut budget)? == Stop::Budget {
                                return Err(ExecFault::Hang {
                                    group: gid,
                                    reason: format!("instruction budget of {} wave-instructions exhausted", config.max_wave_instructions),
                                });
                            }
                            resume_functionally(w, wi as u64, ctx.mem, &mut gws)?;
                        }
                    }
                    if waves.iter().all(|w| w.status == WaveStatus::Ended) {
                        break;
                    }
                    if gws.has_answers() {
                        continue;
                    }
                    // Every unfinished wave waits at the barrier: release them. A wave
                    // waiting in GWS that nothing answered is a hang.
                    if waves.iter().any(|w| w.status == WaveStatus::WaitMemory) {
                        return Err(gws.stuck(gid));
                    }
                    for w in waves.iter_mut() {
                        if w.status == WaveStatus::Barrier {
                            w.status = WaveStatus::Running;
                        }
                    }
                }
                stats.wave_instructions += before - budget;
            }
        }
    }
    // Per-opcode and per-class tallies, keyed through the program's cached instructions.
    let mut seen = vec![false; OPCODE_SLOTS];
    let mut pc = 0usize;
    while pc < program.len() {
        if let Some(c) = program.inst_at(program_text_addr(program, pc)) {
            let idx = c.inst.opcode() as usize;
            if idx < OPCODE_SLOTS && !seen[idx] && counts[idx] > 0 {
                seen[idx] = true;
                stats.per_opcode.insert(c.inst.opcode(), counts[idx]);
                *stats.per_class.entry(class_name(c.inst.encoding())).or_default() += counts[idx];
            }
        }
        pc += 1;
    }
    Ok(stats)
}

fn class_name(e: Encoding) -> &'static str {
    e.name()
}

fn program_text_addr(program: &Program, slot: usize) -> u64 {
    program.text_start().wrapping_add(4 * slot as u64)
}

/// The initial MODE register of a kernel's waves (from `COMPUTE_PGM_RSRC1`).
pub fn initial_mode_bits(kd: &KernelDescriptor) -> u32 {
    Mode::from_pgm_rsrc1(kd.rsrc1.raw).encode()
}

/// Everything the initial state of a work-group's waves depends on.
#[derive(Debug, Clone, Copy)]
pub struct WaveLaunch<'a> {
    /// The kernel descriptor (which user/system SGPRs and work-item VGPRs to set up).
    pub descriptor: &'a KernelDescriptor,
    /// Device address of the kernel's first instruction.
    pub entry_pc: u64,
    /// Work-items per dimension of the whole dispatch.
    pub grid: [u32; 3],
    /// Work-group size per dimension.
    pub block: [u32; 3],
    /// This work-group's id.
    pub group_id: [u32; 3],
    /// Device address of the AQL dispatch packet.
    pub dispatch_ptr: u64,
    /// Device address of the AQL queue descriptor.
    pub queue_ptr: u64,
    /// Device address of the kernarg segment.
    pub kernarg_ptr: u64,
    /// The dispatch id (`DispatchId` SGPRs).
    pub dispatch_id: u64,
    /// The kernarg segment's bytes (source of preloaded kernarg SGPRs).
    pub kernarg: &'a [u8],
    /// Scratch of wave 0 of the group; wave `i` gets `scratch_base + i * 64 * scratch_lane_bytes`.
    pub scratch_base: u64,
    /// Bytes of scratch per work-item.
    pub scratch_lane_bytes: u32,
    /// Initial MODE register ([`initial_mode_bits`]).
    pub mode_bits: u32,
    /// Bytes of LDS the work-group was given (static plus dynamic), for LDS_ALLOC.
    pub lds_bytes: u32,
    /// Where the group runs: HW_ID, XCC_ID and the allocation bases of its waves (wave `i`
    /// takes wave slot `place.first_slot + i`).
    pub place: GroupPlace,
}

/// The waves of work-group `l.group_id`, ready to run: a partial group at the grid's edge
/// gets only its work-items, the last wave a partial EXEC; work-item ids are packed in v0
/// (x | y << 10 | z << 20, as the descriptor enables them); user and system SGPRs hold what
/// the descriptor asks for; each wave's [`Placement`](super::Placement) comes from
/// `l.place` and the descriptor's allocation. Empty when the group lies outside the grid.
pub fn init_group_waves(l: &WaveLaunch) -> Vec<Wave> {
    init_group_waves_from(l, &mut Vec::new())
}

/// [`init_group_waves`], taking the waves' storage from `spare` (finished waves, see
/// [`Wave::recycle`]) while it lasts.
pub fn init_group_waves_from(l: &WaveLaunch, spare: &mut Vec<Wave>) -> Vec<Wave> {
    let kd = l.descriptor;
    let size = [0, 1, 2].map(|d| l.block[d].min(l.grid[d].saturating_sub(l.group_id[d].saturating_mul(l.block[d]))));
    let items = size[0] * size[1] * size[2];
    let n_waves = items.div_ceil(WAVE_LANES as u32) as usize;
    let user = kd.user_sgprs();
    let system = kd.system_sgprs();
    let workitem_vgprs = kd.rsrc2.enable_vgpr_workitem_id;
    let (vgprs, agprs) = (kd.arch_vgprs() as usize, kd.acc_vgprs() as usize);
    let alloc_vgprs = kd.vgpr_count().min(u32::from(u16::MAX)) as u16;
    let alloc_sgprs = kd.sgpr_count().min(u32::from(u16::MAX)) as u16;
    (0..n_waves)
        .map(|wi| {
            let mut w = match spare.pop() {
                Some(old) => old.recycle(l.entry_pc, l.mode_bits, vgprs, agprs),
                None => Wave::with_registers(l.entry_pc, l.mode_bits, vgprs, agprs),
            };
            w.wave_in_group = wi as u32;
            w.place = l.place.wave(wi as u32, n_waves as u32, alloc_vgprs, alloc_sgprs, l.lds_bytes);
            w.scratch_lane_bytes = l.scratch_lane_bytes;
            w.scratch_base = l.scratch_base.wrapping_add((wi as u64) * WAVE_LANES as u64 * l.scratch_lane_bytes as u64);
            init_wave(&mut w, &user, &system, l);
            let mut exec = 0u64;
            for lane in 0..WAVE_LANES {
                let flat = (wi * WAVE_LANES + lane) as u32;
                if flat >= items {
                    continue;
                }
                exec |= 1 << lane;
                // Work-item ids within the (possibly partial) group.
                let x = flat % size[0];
                let y = (flat / size[0]) % size[1];
                let z = flat / (size[0] * size[1]);
                let (y, z) = match workitem_vgprs {
                    WorkitemIdVgprs::X => (0, 0),
                    WorkitemIdVgprs::Xy => (y, 0),
                    WorkitemIdVgprs::Xyz => (y, z),
                };
                w.vgpr[0][lane] = x | (y << 10) | (z << 20);
            }
            w.set_exec(exec);
            w
        })
        .collect()
}

/// After [`run_wave`] stopped the wave `tag` outside [`step`](super::step::step): an
/// `s_sleep` is a no-op, a deferred access is performed at once and a GWS request goes to
/// `gws` (the wave resumes when the unit answers it).
fn resume_functionally<M: DeviceMemory>(w: &mut Wave, tag: u64, mem: &mut M, gws: &mut FunctionalGws) -> Result<(), ExecFault> {
    match w.status {
        WaveStatus::Sleep { .. } => w.status = WaveStatus::Running,
        WaveStatus::WaitMemory => {
            if let Some(request) = w.take_request() {
                if FunctionalGws::is_gws(&request) {
                    return gws.submit(tag, w, *request);
                }
                let mut request = request;
                match request.perform_in_place(mem) {
                    Ok(()) => w.complete_request(request)?,
                    Err(fault) => return Err(w.fail_pending(fault)),
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Initial scalar registers of a wave.
fn init_wave(w: &mut Wave, user: &[crate::code_object::SgprSlot], system: &[crate::code_object::SgprSlot], l: &WaveLaunch) {
    let (gid, kernarg) = (l.group_id, l.kernarg);
    for slot in user.iter().chain(system) {
        let s = slot.first as usize;
        match slot.value {
            InitialSgpr::PrivateSegmentBuffer => {
                let base = w.scratch_base;
                w.set_sgpr(s, base as u32);
                // Stride = bytes per lane, swizzle off; add_tid_enable in dword 3.
                w.set_sgpr(s + 1, ((base >> 32) as u32 & 0xffff) | ((w.scratch_lane_bytes.min(0x3fff)) << 16));
                w.set_sgpr(s + 2, u32::MAX);
                w.set_sgpr(s + 3, 1 << 23);
            }
            InitialSgpr::DispatchPtr => w.set_sgpr_pair(s, l.dispatch_ptr),
            InitialSgpr::QueuePtr => w.set_sgpr_pair(s, l.queue_ptr),
            InitialSgpr::KernargSegmentPtr => w.set_sgpr_pair(s, l.kernarg_ptr),
            InitialSgpr::DispatchId => w.set_sgpr_pair(s, l.dispatch_id),
            InitialSgpr::FlatScratchInit => {
                w.set_sgpr(s, 0);
                w.set_sgpr(s + 1, w.scratch_lane_bytes);
                w.set_sgpr_pair(FLAT_SCRATCH_LO, w.scratch_base);
            }
            InitialSgpr::PrivateSegmentSize => w.set_sgpr(s, w.scratch_lane_bytes),
            InitialSgpr::PreloadedKernarg { first_dword } => {
                for k in 0..slot.count as usize {
                    let at = (first_dword as usize + k) * 4;
                    let v = kernarg.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    w.set_sgpr(s + k, v);
                }
            }
            InitialSgpr::WorkgroupIdX => w.set_sgpr(s, gid[0]),
            InitialSgpr::WorkgroupIdY => w.set_sgpr(s, gid[1]),
            InitialSgpr::WorkgroupIdZ => w.set_sgpr(s, gid[2]),
            InitialSgpr::WorkgroupInfo => w.set_sgpr(s, 0),
            InitialSgpr::PrivateSegmentWaveOffset => w.set_sgpr(s, 0),
        }
    }
}

/// Runs one wave on its own until `s_endpgm` (an `s_barrier` releases at once, since the
/// wave is alone in its work-group; `ds_gws_*` go to a [`GwsUnit`](super::GwsUnit) of its
/// own, and a GWS wait nothing can answer is a [`ExecFault::Hang`]). Returns the
/// wave-instructions executed.
pub fn run_single_wave<M: DeviceMemory>(
    program: &Program,
    wave: &mut Wave,
    mem: &mut M,
    lds: &mut [u8],
    max_instructions: u64,
) -> Result<u64, ExecFault> {
    let mut ctx = Ctx { mem, lds, target: program.target(), counts: &mut [], clock: 0, realtime: 0 };
    let mut budget = max_instructions;
    let mut gws = FunctionalGws::default();
    loop {
        if run_wave(wave, program, &mut ctx, &mut budget)? == Stop::Budget {
            return Err(ExecFault::Hang { group: [0; 3], reason: format!("{max_instructions} wave-instructions executed without s_endpgm") });
        }
        match wave.status {
            WaveStatus::Ended => return Ok(max_instructions - budget),
            WaveStatus::Barrier => wave.status = WaveStatus::Running,
            _ => resume_functionally(wave, 0, ctx.mem, &mut gws)?,
        }
        if wave.status == WaveStatus::WaitMemory {
            return Err(gws.stuck([0; 3]));
        }
    }
}
