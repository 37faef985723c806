//! What the KFD topology tells user space about the machine: one CPU node (the real
//! host) and the simulated GPUs, each described by a [`GpuIdentity`] read from a
//! simdojo topology.
//!
//! Values the topology does not carry (device ids, firmware versions, cache sharing,
//! capability bits, memory clocks) come from a per-target table ([`TargetDefaults`])
//! filled from the public amdgpu/amdkfd driver sources and AMD's product tables.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use amdgpu::isa::target::UnknownTarget;
use amdgpu::isa::Target;
use simdojo::params::{ParamError, Params};
use simdojo::topology::{ComponentDecl, Topology};

/// PCI vendor id of AMD/ATI (4098).
pub const AMD_VENDOR_ID: u32 = 0x1002;

/// First render-node minor (`/dev/dri/renderD128`).
pub const FIRST_RENDER_MINOR: u32 = 128;

/// First GPU `simd_id_base` the driver hands out (the KFD starts GPU processor ids at
/// 0x80001000 and advances by each GPU's CU count).
pub const FIRST_SIMD_ID_BASE: u32 = 0x8000_1000;

/// KFD node capability bits (`HSA_CAP_*` in `linux/kfd_sysfs.h`).
pub mod cap {
    /// Watch points supported.
    pub const WATCH_POINTS_SUPPORTED: u32 = 0x0000_0080;
    /// Shift of log2(number of watch points).
    pub const WATCH_POINTS_TOTALBITS_SHIFT: u32 = 8;
    /// Shift of the doorbell type field.
    pub const DOORBELL_TYPE_TOTALBITS_SHIFT: u32 = 12;
    /// Doorbell type 2.0 (gfx9 and later).
    pub const DOORBELL_TYPE_2_0: u32 = 2;
    /// Trap-based debugging supported.
    pub const TRAP_DEBUG_SUPPORT: u32 = 0x0000_8000;
    /// Wave launch trap override supported.
    pub const TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE: u32 = 0x0001_0000;
    /// Wave launch mode supported.
    pub const TRAP_DEBUG_WAVE_LAUNCH_MODE: u32 = 0x0002_0000;
    /// Precise memory operations supported (gfx90a and later).
    pub const TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS: u32 = 0x0004_0000;
    /// HBM ECC.
    pub const MEM_EDC_SUPPORTED: u32 = 0x0010_0000;
    /// RAS event notification.
    pub const RAS_EVENT_NOTIFY: u32 = 0x0020_0000;
    /// SRAM ECC.
    pub const SRAM_EDC_SUPPORTED: u32 = 0x0400_0000;
    /// The SVM ioctl is supported.
    pub const SVM_API_SUPPORTED: u32 = 0x0800_0000;
    /// Debugger firmware support.
    pub const TRAP_DEBUG_FIRMWARE_SUPPORTED: u32 = 0x2000_0000;
}

/// Why a [`GpuIdentity`] could not be read from a topology.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The topology has no GPU root.
    #[error("{component}: gpu = {gpu:?} names no amdgpu.soc of the topology")]
    XgmiGpu {
        /// The `amdgpu.xgmi` block.
        component: String,
        /// The name it gives.
        gpu: String,
    },
    #[error("no amdgpu.soc component in the topology")]
    NoSoc,
    /// [`GpuIdentity::from_topology`] found several GPUs.
    #[error("{0} amdgpu.soc components in the topology; use GpuIdentity::all_from_topology")]
    SeveralSocs(usize),
    /// A GPU without compute units.
    #[error("no amdgpu.cu component under the GPU `{soc}`")]
    NoComputeUnits {
        /// The SoC's path.
        soc: String,
    },
    /// A GPU without command processors (one per XCD).
    #[error("no amdgpu.cp component under the GPU `{soc}`")]
    NoCommandProcessors {
        /// The SoC's path.
        soc: String,
    },
    /// A parameter of the wrong kind.
    #[error("component `{component}`: {source}")]
    Param {
        /// The component's path.
        component: String,
        /// The parameter problem.
        #[source]
        source: ParamError,
    },
    /// The SoC's `target` is not a supported ISA.
    #[error("component `{component}`: {source}")]
    Target {
        /// The SoC's path.
        component: String,
        /// The unknown name.
        #[source]
        source: UnknownTarget,
    },
    /// The host's /proc files could not be read.
    #[error("reading the host's {what}: {source}")]
    Host {
        /// Which file.
        what: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Size and shape of one cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheGeometry {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Line size in bytes.
    pub line_bytes: u32,
    /// Associativity (0 when unknown).
    pub ways: u32,
}

/// Per-target values that topology files do not carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetDefaults {
    /// `gfx_target_version` (major*10000 + minor*100 + stepping).
    pub gfx_target_version: u32,
    /// PCI device id.
    pub device_id: u32,
    /// PCI revision (with the device id, names the product in libdrm's table).
    pub pci_revision: u32,
    /// amdgpu family id (`AMDGPU_FAMILY_AI` = 141 for all gfx9 dGPUs).
    pub family_id: u32,
    /// The KFD node `name` (the lower-cased amdgpu ASIC name).
    pub kfd_name: &'static str,
    /// Shader engines per XCD.
    pub shader_engines_per_xcd: u32,
    /// Shader arrays per engine.
    pub simd_arrays_per_engine: u32,
    /// CU slots per shader array (including harvested ones).
    pub cu_per_simd_array: u32,
    /// LDS bytes per CU.
    pub lds_bytes: u64,
    /// Vector L1 (per CU).
    pub vector_l1: CacheGeometry,
    /// Scalar L1 data cache.
    pub scalar_l1: CacheGeometry,
    /// CUs sharing one scalar L1.
    pub scalar_l1_cus: u32,
    /// Instruction cache.
    pub instruction_cache: CacheGeometry,
    /// CUs sharing one instruction cache.
    pub instruction_cache_cus: u32,
    /// L2 of one XCD.
    pub l2: CacheGeometry,
    /// HBM bus width in bits.
    pub vram_width_bits: u32,
    /// Peak memory clock in MHz.
    pub memory_clock_mhz: u32,
    /// Peak engine clock in MHz.
    pub engine_clock_mhz: u32,
    /// SDMA engines for PCIe transfers.
    pub num_sdma_engines: u32,
    /// SDMA engines for XGMI transfers.
    pub num_sdma_xgmi_engines: u32,
    /// SDMA queues per engine.
    pub num_sdma_queues_per_engine: u32,
    /// Compute queues available to KFD per XCC.
    pub num_cp_queues_per_xcc: u32,
    /// MEC firmware version.
    pub fw_version: u32,
    /// SDMA firmware version.
    pub sdma_fw_version: u32,
    /// Node capability bits.
    pub capability: u32,
    /// Debug properties (watch address mask bits, dispatch info validity).
    pub debug_prop: u64,
    /// Bandwidth of the host link in MB/s (PCIe 4 x16 or PCIe 5 x16).
    pub host_link_max_bandwidth: u32,
    /// The product's marketing name (sysfs `product_name`).
    pub product_name: &'static str,
    /// PCI subsystem device id of the reference board.
    pub subsystem_device_id: u32,
    /// Typical board power in watts (the hwmon power cap).
    pub board_power_w: u32,
    /// Host link speed in GT/s (PCIe 4: 16, PCIe 5: 32).
    pub host_link_gts: u32,
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

const fn common_capability() -> u32 {
    cap::WATCH_POINTS_SUPPORTED
        | (2 << cap::WATCH_POINTS_TOTALBITS_SHIFT) // 4 watch points
        | (cap::DOORBELL_TYPE_2_0 << cap::DOORBELL_TYPE_TOTALBITS_SHIFT)
        | cap::TRAP_DEBUG_SUPPORT
        | cap::TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE
        | cap::TRAP_DEBUG_WAVE_LAUNCH_MODE
        | cap::TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS
        | cap::MEM_EDC_SUPPORTED
        | cap::RAS_EVENT_NOTIFY
        | cap::SRAM_EDC_SUPPORTED
        | cap::SVM_API_SUPPORTED
        | cap::TRAP_DEBUG_FIRMWARE_SUPPORTED
}

impl TargetDefaults {
    /// The table entry of `target`.
    pub const fn of(target: Target) -> TargetDefaults {
        match target {
            // MI210: one Aldebaran GCD, 104 of 112 CUs (8 SE x 14), HBM2e 4096-bit.
            Target::Gfx90a => TargetDefaults {
                gfx_target_version: 90010,
                device_id: 0x740f,
                pci_revision: 0x02,
                family_id: 141,
                kfd_name: "aldebaran",
                shader_engines_per_xcd: 8,
                simd_arrays_per_engine: 1,
                cu_per_simd_array: 14,
                lds_bytes: 64 * KIB,
                vector_l1: CacheGeometry {
                    size_bytes: 16 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                scalar_l1: CacheGeometry {
                    size_bytes: 16 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                scalar_l1_cus: 2,
                instruction_cache: CacheGeometry {
                    size_bytes: 32 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                instruction_cache_cus: 2,
                l2: CacheGeometry {
                    size_bytes: 8 * MIB,
                    line_bytes: 128,
                    ways: 16,
                },
                vram_width_bits: 4096,
                memory_clock_mhz: 1600,
                engine_clock_mhz: 1700,
                num_sdma_engines: 2,
                num_sdma_xgmi_engines: 3,
                num_sdma_queues_per_engine: 8,
                num_cp_queues_per_xcc: 24,
                fw_version: 78,
                sdma_fw_version: 8,
                capability: common_capability(),
                // HSA_DBG_WATCH_ADDR_MASK_LO_BIT_GFX9 | HI_BIT (29 << 4)
                debug_prop: 6 | (29 << 4),
                host_link_max_bandwidth: 31_504,
                product_name: "AMD Instinct MI210",
                subsystem_device_id: 0x0c34,
                board_power_w: 300,
                host_link_gts: 16,
            },
            // MI300X: 8 XCDs of 38 of 40 CUs (4 SE x 10), HBM3 8192-bit.
            Target::Gfx942 => TargetDefaults {
                gfx_target_version: 90402,
                device_id: 0x74a1,
                pci_revision: 0x00,
                family_id: 141,
                kfd_name: "ip discovery",
                shader_engines_per_xcd: 4,
                simd_arrays_per_engine: 1,
                cu_per_simd_array: 10,
                lds_bytes: 64 * KIB,
                vector_l1: CacheGeometry {
                    size_bytes: 32 * KIB,
                    line_bytes: 128,
                    ways: 0,
                },
                scalar_l1: CacheGeometry {
                    size_bytes: 16 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                scalar_l1_cus: 2,
                instruction_cache: CacheGeometry {
                    size_bytes: 64 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                instruction_cache_cus: 2,
                l2: CacheGeometry {
                    size_bytes: 4 * MIB,
                    line_bytes: 128,
                    ways: 16,
                },
                vram_width_bits: 8192,
                memory_clock_mhz: 1300,
                engine_clock_mhz: 2100,
                num_sdma_engines: 2,
                num_sdma_xgmi_engines: 14,
                num_sdma_queues_per_engine: 8,
                num_cp_queues_per_xcc: 24,
                fw_version: 177,
                sdma_fw_version: 19,
                capability: common_capability(),
                // LO_BIT_GFX9_4_3 (7) | HI_BIT_GFX9_4_3 (30 << 4) | DISPATCH_INFO_ALWAYS_VALID
                debug_prop: 7 | (30 << 4) | 0x400,
                host_link_max_bandwidth: 63_015,
                product_name: "AMD Instinct MI300X",
                subsystem_device_id: 0x74a1,
                board_power_w: 750,
                host_link_gts: 32,
            },
            // MI355X class: 8 XCDs of 32 of 36 CUs (4 SE x 9), 160 KiB LDS, HBM3E 8192-bit.
            Target::Gfx950 => TargetDefaults {
                gfx_target_version: 90500,
                device_id: 0x75a3,
                pci_revision: 0x00,
                family_id: 141,
                kfd_name: "ip discovery",
                shader_engines_per_xcd: 4,
                simd_arrays_per_engine: 1,
                cu_per_simd_array: 9,
                lds_bytes: 160 * KIB,
                vector_l1: CacheGeometry {
                    size_bytes: 32 * KIB,
                    line_bytes: 128,
                    ways: 0,
                },
                scalar_l1: CacheGeometry {
                    size_bytes: 16 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                scalar_l1_cus: 2,
                instruction_cache: CacheGeometry {
                    size_bytes: 64 * KIB,
                    line_bytes: 64,
                    ways: 0,
                },
                instruction_cache_cus: 2,
                l2: CacheGeometry {
                    size_bytes: 4 * MIB,
                    line_bytes: 128,
                    ways: 16,
                },
                vram_width_bits: 8192,
                memory_clock_mhz: 2000,
                engine_clock_mhz: 2400,
                num_sdma_engines: 2,
                num_sdma_xgmi_engines: 14,
                num_sdma_queues_per_engine: 8,
                num_cp_queues_per_xcc: 24,
                fw_version: 177,
                sdma_fw_version: 19,
                capability: common_capability(),
                debug_prop: 6 | (29 << 4) | 0x400,
                host_link_max_bandwidth: 63_015,
                product_name: "AMD Instinct MI355X",
                subsystem_device_id: 0x75a3,
                board_power_w: 1400,
                host_link_gts: 32,
            },
        }
    }
}

/// Everything the KFD topology exposes about one GPU node.
///
/// [`GpuIdentity::from_topology`] fills it for slot 0 of a machine;
/// [`SystemIdentity::new`] re-derives the slot-dependent fields (`gpu_id`,
/// `drm_render_minor`, `location_id`, `unique_id`, `simd_id_base`) for each GPU's
/// position. Every field is public so a caller can override a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuIdentity {
    /// ISA.
    pub target: Target,
    /// `gfx_target_version` (90010, 90402, 90500).
    pub gfx_target_version: u32,
    /// PCI vendor id.
    pub vendor_id: u32,
    /// PCI device id.
    pub device_id: u32,
    /// PCI revision (with the device id, names the product in libdrm's table).
    pub pci_revision: u32,
    /// amdgpu family id.
    pub family_id: u32,
    /// The node `name` file's content.
    pub kfd_name: String,
    /// Compute units in total.
    pub cu_count: u32,
    /// XCDs (accelerator complex dies), one `amdgpu.cp` each.
    pub xcc_count: u32,
    /// SIMDs per CU.
    pub simd_per_cu: u32,
    /// Shader engines per XCD.
    pub shader_engines_per_xcd: u32,
    /// Shader arrays per engine.
    pub simd_arrays_per_engine: u32,
    /// CU slots per shader array.
    pub cu_per_simd_array: u32,
    /// LDS bytes per CU.
    pub lds_bytes: u64,
    /// GDS bytes (none on CDNA2 and later).
    pub gds_bytes: u64,
    /// Wave size.
    pub wave_size: u32,
    /// Wave slots per SIMD.
    pub max_waves_per_simd: u32,
    /// Global wave sync resources: the GPU model's per-queue GWS unit (ROCR offers
    /// cooperative queues, and HIP cooperative launches, when this is not zero; the
    /// driver's `ALLOC_QUEUE_GWS` refuses a GPU where it is zero).
    pub num_gws: u32,
    /// Scratch slots per CU.
    pub max_slots_scratch_cu: u32,
    /// Vector L1, one per CU.
    pub vector_l1: CacheGeometry,
    /// Scalar L1 data cache.
    pub scalar_l1: CacheGeometry,
    /// CUs sharing one scalar L1.
    pub scalar_l1_cus: u32,
    /// Instruction cache.
    pub instruction_cache: CacheGeometry,
    /// CUs sharing one instruction cache.
    pub instruction_cache_cus: u32,
    /// L2 of one XCD.
    pub l2: CacheGeometry,
    /// Memory-side cache (Infinity Cache / MALL), all slices together; `None` without one.
    pub mall: Option<CacheGeometry>,
    /// Device memory in bytes.
    pub vram_bytes: u64,
    /// Memory bus width in bits.
    pub vram_width_bits: u32,
    /// Peak engine clock in MHz.
    pub engine_clock_mhz: u32,
    /// Peak memory clock in MHz.
    pub memory_clock_mhz: u32,
    /// KFD gpu id (a stable non-zero 16-bit hash, like the driver's).
    pub gpu_id: u32,
    /// Render node minor (`/dev/dri/renderD<minor>`).
    pub drm_render_minor: u32,
    /// PCI location (bus << 8 | devfn).
    pub location_id: u32,
    /// PCI domain.
    pub domain: u32,
    /// Unique id (the amdgpu serial).
    pub unique_id: u64,
    /// XGMI hive id (0: no hive).
    pub hive_id: u64,
    /// First processor id of the GPU's CUs.
    pub simd_id_base: u32,
    /// SDMA engines for PCIe transfers.
    pub num_sdma_engines: u32,
    /// SDMA engines for XGMI transfers.
    pub num_sdma_xgmi_engines: u32,
    /// SDMA queues per engine.
    pub num_sdma_queues_per_engine: u32,
    /// Compute queues available to KFD.
    pub num_cp_queues: u32,
    /// MEC firmware version.
    pub fw_version: u32,
    /// SDMA firmware version.
    pub sdma_fw_version: u32,
    /// Capability bits ([`cap`]).
    pub capability: u32,
    /// Second capability word.
    pub capability2: u32,
    /// Debug properties.
    pub debug_prop: u64,
    /// Peak bandwidth of the host link in MB/s.
    pub host_link_max_bandwidth: u32,
}

impl GpuIdentity {
    /// The identity of the only GPU of `t`.
    pub fn from_topology(t: &Topology) -> Result<GpuIdentity, IdentityError> {
        let mut all = GpuIdentity::all_from_topology(t)?;
        match all.len() {
            1 => Ok(all.remove(0)),
            n => Err(IdentityError::SeveralSocs(n)),
        }
    }

    /// The identities of every GPU of `t` (one per `amdgpu.soc`; a component belongs
    /// to the SoC whose path prefixes its own), each placed as if it were slot 0.
    pub fn all_from_topology(t: &Topology) -> Result<Vec<GpuIdentity>, IdentityError> {
        let socs: Vec<&ComponentDecl> = t
            .components
            .iter()
            .filter(|c| c.type_name == "amdgpu.soc")
            .collect();
        if socs.is_empty() {
            return Err(IdentityError::NoSoc);
        }
        socs.iter()
            .map(|soc| GpuIdentity::from_soc(t, soc))
            .collect()
    }

    fn from_soc(t: &Topology, soc: &ComponentDecl) -> Result<GpuIdentity, IdentityError> {
        let prefix = format!("{}.", soc.path);
        let prefix = prefix.as_str();
        let under = |kind: &'static str| {
            t.components
                .iter()
                .filter(move |c| c.path.starts_with(prefix) && type_matches(&c.type_name, kind))
        };
        let target_name = opt(
            soc,
            soc.params
                .get("target")
                .map(|_| soc.params.string("target")),
        )?;
        let target: Target = match target_name {
            Some(name) => name.parse().map_err(|source| IdentityError::Target {
                component: soc.path.clone(),
                source,
            })?,
            None => Target::Gfx942,
        };
        let d = TargetDefaults::of(target);

        let vram_bytes = bytes(soc, "memory")?.unwrap_or(64 << 30);
        let soc_clock = mhz(soc, "clock")?;
        let cus: Vec<&ComponentDecl> = under("amdgpu.cu").collect();
        let cu_count = u32::try_from(cus.len()).unwrap_or(u32::MAX);
        if cu_count == 0 {
            return Err(IdentityError::NoComputeUnits {
                soc: soc.path.clone(),
            });
        }
        let xcc_count = u32::try_from(under("amdgpu.cp").count()).unwrap_or(u32::MAX);
        if xcc_count == 0 {
            return Err(IdentityError::NoCommandProcessors {
                soc: soc.path.clone(),
            });
        }
        let cu = cus[0];
        let l2 = under("amdgpu.l2").next();
        let malls: Vec<&ComponentDecl> = under("amdgpu.mall").collect();

        let engine_clock_mhz = soc_clock
            .or(mhz(cu, "clock")?)
            .unwrap_or(d.engine_clock_mhz);
        let lds_bytes = bytes(cu, "lds_bytes")?.unwrap_or(d.lds_bytes);
        let simd_per_cu = uint(cu, "simds")?.map_or(4, |v| v as u32);
        let wave_slots = uint(cu, "wave_slots")?.map_or(32, |v| v as u32);
        let vector_l1 = CacheGeometry {
            size_bytes: bytes(cu, "l1_size")?.unwrap_or(d.vector_l1.size_bytes),
            line_bytes: uint(cu, "line_bytes")?.map_or(d.vector_l1.line_bytes, |v| v as u32),
            ways: uint(cu, "l1_ways")?.map_or(d.vector_l1.ways, |v| v as u32),
        };
        let scalar_l1 = CacheGeometry {
            size_bytes: bytes(cu, "scalar_size")?.unwrap_or(d.scalar_l1.size_bytes),
            line_bytes: d.scalar_l1.line_bytes,
            ways: uint(cu, "scalar_ways")?.map_or(d.scalar_l1.ways, |v| v as u32),
        };
        let l2 = match l2 {
            Some(c) => CacheGeometry {
                size_bytes: bytes(c, "size")?.unwrap_or(d.l2.size_bytes),
                line_bytes: uint(c, "line_bytes")?.map_or(d.l2.line_bytes, |v| v as u32),
                ways: uint(c, "ways")?.map_or(d.l2.ways, |v| v as u32),
            },
            None => d.l2,
        };
        let mall = match malls.first() {
            None => None,
            Some(first) => {
                let mut total = 0u64;
                for m in &malls {
                    total += bytes(m, "size")?.unwrap_or(32 * MIB);
                }
                Some(CacheGeometry {
                    size_bytes: total,
                    line_bytes: uint(first, "line_bytes")?.map_or(128, |v| v as u32),
                    ways: uint(first, "ways")?.map_or(16, |v| v as u32),
                })
            }
        };
        let cus_per_xcd = cu_count.div_ceil(xcc_count);
        let cu_per_simd_array = d
            .cu_per_simd_array
            .max(cus_per_xcd.div_ceil(d.shader_engines_per_xcd * d.simd_arrays_per_engine));

        let mut gpu = GpuIdentity {
            target,
            gfx_target_version: d.gfx_target_version,
            vendor_id: AMD_VENDOR_ID,
            device_id: d.device_id,
            pci_revision: d.pci_revision,
            family_id: d.family_id,
            kfd_name: d.kfd_name.to_string(),
            cu_count,
            xcc_count,
            simd_per_cu,
            shader_engines_per_xcd: d.shader_engines_per_xcd,
            simd_arrays_per_engine: d.simd_arrays_per_engine,
            cu_per_simd_array,
            lds_bytes,
            gds_bytes: 0,
            wave_size: 64,
            max_waves_per_simd: wave_slots.checked_div(simd_per_cu).unwrap_or(8),
            num_gws: amdgpu::isa::exec::gws::GWS_RESOURCES as u32,
            max_slots_scratch_cu: 32,
            vector_l1,
            scalar_l1,
            scalar_l1_cus: d.scalar_l1_cus,
            instruction_cache: d.instruction_cache,
            instruction_cache_cus: d.instruction_cache_cus,
            l2,
            mall,
            vram_bytes,
            vram_width_bits: d.vram_width_bits,
            engine_clock_mhz,
            memory_clock_mhz: d.memory_clock_mhz,
            gpu_id: 0,
            drm_render_minor: FIRST_RENDER_MINOR,
            location_id: 0,
            domain: 0,
            unique_id: 0,
            hive_id: 0,
            simd_id_base: FIRST_SIMD_ID_BASE,
            num_sdma_engines: d.num_sdma_engines,
            num_sdma_xgmi_engines: d.num_sdma_xgmi_engines,
            num_sdma_queues_per_engine: d.num_sdma_queues_per_engine,
            num_cp_queues: d.num_cp_queues_per_xcc * xcc_count,
            fw_version: d.fw_version,
            sdma_fw_version: d.sdma_fw_version,
            capability: d.capability,
            capability2: 0,
            debug_prop: d.debug_prop,
            host_link_max_bandwidth: d.host_link_max_bandwidth,
        };
        gpu.place(0, FIRST_SIMD_ID_BASE);
        Ok(gpu)
    }

    /// Derives the slot-dependent fields for the `slot`-th GPU of a machine whose CUs
    /// start at processor id `simd_id_base`.
    pub fn place(&mut self, slot: u32, simd_id_base: u32) {
        self.drm_render_minor = FIRST_RENDER_MINOR + slot;
        // PCI bus 0x03, 0x23, 0x43, ... device 0 function 0.
        self.location_id = ((0x03 + 0x20 * slot) & 0xff) << 8;
        self.simd_id_base = simd_id_base;
        let mut h = Fnv::new();
        h.u32(self.device_id);
        h.u32(self.location_id);
        h.u32(self.domain);
        h.u64(self.vram_bytes);
        h.u32(self.xcc_count);
        h.u32(self.cu_count);
        let folded = (h.0 ^ (h.0 >> 32)) as u32;
        let id = (folded ^ (folded >> 16)) & 0xffff;
        self.gpu_id = if id == 0 { 1 } else { id };
        h.u32(0x5349_4d44); // "SIMD"
        self.unique_id = h.0;
    }

    /// SIMDs in total (`simd_count` of the node).
    pub fn simd_count(&self) -> u32 {
        self.cu_count * self.simd_per_cu
    }

    /// Shader arrays in total (`array_count` of the node).
    pub fn array_count(&self) -> u32 {
        self.shader_engines_per_xcd * self.simd_arrays_per_engine * self.xcc_count
    }

    /// CUs of one XCD (the last XCD may have fewer when CUs do not divide evenly).
    pub fn cus_per_xcc(&self) -> u32 {
        self.cu_count.div_ceil(self.xcc_count.max(1))
    }
}

fn type_matches(type_name: &str, kind: &str) -> bool {
    type_name == kind
        || type_name
            .strip_prefix(kind)
            .is_some_and(|rest| rest.starts_with('.'))
}

fn opt<T>(c: &ComponentDecl, v: Option<Result<T, ParamError>>) -> Result<Option<T>, IdentityError> {
    v.transpose().map_err(|source| IdentityError::Param {
        component: c.path.clone(),
        source,
    })
}

fn bytes(c: &ComponentDecl, name: &str) -> Result<Option<u64>, IdentityError> {
    opt(c, c.params.get(name).map(|_| c.params.bytes(name)))
}

fn uint(c: &ComponentDecl, name: &str) -> Result<Option<u64>, IdentityError> {
    opt(c, c.params.get(name).map(|_| c.params.uint(name)))
}

fn mhz(c: &ComponentDecl, name: &str) -> Result<Option<u32>, IdentityError> {
    let p: &Params = &c.params;
    // Clocks are stored as a whole-picosecond period (2400 MHz reads back as 2398.08
    // MHz): report the nearest multiple of 5 MHz, as product clocks are.
    Ok(opt(c, p.get(name).map(|_| p.clock(name)))?
        .map(|clk| ((clk.hz() / 5e6).round() * 5.0) as u32))
}

/// 64-bit FNV-1a, for stable ids.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
}

/// The CPU node (node 0): what the KFD reports about the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuIdentity {
    /// Logical processors (`processor` entries of /proc/cpuinfo).
    pub cores: u32,
    /// System memory in bytes (`MemTotal`).
    pub mem_bytes: u64,
    /// Peak CPU clock in MHz (0 when unknown).
    pub max_clock_mhz: u32,
    /// `model name` of the first processor.
    pub model_name: String,
    /// `vendor_id` of the first processor.
    pub vendor: String,
}

impl CpuIdentity {
    /// Reads the host: /proc/cpuinfo, /proc/meminfo and, when present, cpu0's cpufreq
    /// maximum.
    pub fn from_host() -> Result<CpuIdentity, IdentityError> {
        let read = |what: &'static str| {
            std::fs::read_to_string(what).map_err(|source| IdentityError::Host { what, source })
        };
        let mut cpu = CpuIdentity::parse(&read("/proc/cpuinfo")?, &read("/proc/meminfo")?);
        let freq = Path::new("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
        if let Some(khz) = std::fs::read_to_string(freq)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
        {
            cpu.max_clock_mhz = (khz / 1000) as u32;
        }
        Ok(cpu)
    }

    /// Parses the text of /proc/cpuinfo and /proc/meminfo.
    pub fn parse(cpuinfo: &str, meminfo: &str) -> CpuIdentity {
        let mut cpu = CpuIdentity {
            cores: 0,
            mem_bytes: 0,
            max_clock_mhz: 0,
            model_name: String::new(),
            vendor: String::new(),
        };
        let mut mhz = 0f64;
        for line in cpuinfo.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "processor" => cpu.cores += 1,
                "model name" if cpu.model_name.is_empty() => cpu.model_name = value.to_string(),
                "vendor_id" if cpu.vendor.is_empty() => cpu.vendor = value.to_string(),
                "cpu MHz" => mhz = mhz.max(value.parse().unwrap_or(0.0)),
                _ => {}
            }
        }
        cpu.cores = cpu.cores.max(1);
        cpu.max_clock_mhz = mhz.round() as u32;
        for line in meminfo.lines() {
            if let Some(rest) = line.strip_prefix("MemTotal:") {
                let kib: u64 = rest
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .unwrap_or(0);
                cpu.mem_bytes = kib * 1024;
            }
        }
        cpu
    }
}

/// The machine as the KFD topology shows it: node 0 is the CPU, nodes 1.. the GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemIdentity {
    /// Node 0.
    pub cpu: CpuIdentity,
    /// Nodes 1.. in order.
    pub gpus: Vec<GpuIdentity>,
    /// Direct XGMI links between GPUs (indices into `gpus`), from the topology's
    /// `amdgpu.xgmi` blocks and the links between them.
    pub xgmi: Vec<XgmiLink>,
}

/// A direct XGMI (Infinity Fabric) link between two GPUs of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XgmiLink {
    /// Index of one GPU in [`SystemIdentity::gpus`].
    pub a: usize,
    /// Index of the other.
    pub b: usize,
    /// Peak bandwidth of one direction in MB/s (the slower end's `amdgpu.xgmi`).
    pub bandwidth_mbs: u32,
}

/// The XGMI links of `t`: every engine link between the `link` ports of two
/// `amdgpu.xgmi` blocks, each block belonging to the GPU its `gpu` parameter names
/// (the SoC's `name`), in the order of `t`'s SoCs.
fn xgmi_links(t: &Topology) -> Result<Vec<XgmiLink>, IdentityError> {
    let socs: Vec<String> = t
        .components
        .iter()
        .filter(|c| c.type_name == "amdgpu.soc")
        .map(|c| c.params.string("name").unwrap_or_else(|_| "gpu".into()))
        .collect();
    // Component index -> (GPU index, MB/s each direction).
    let mut blocks: BTreeMap<usize, (usize, u32)> = BTreeMap::new();
    for (i, c) in t.components.iter().enumerate().filter(|(_, c)| c.type_name == "amdgpu.xgmi") {
        let gpu = c.params.string("gpu").unwrap_or_else(|_| "gpu".into());
        let Some(g) = socs.iter().position(|s| *s == gpu) else {
            return Err(IdentityError::XgmiGpu { component: c.path.clone(), gpu });
        };
        let per_clock = uint(c, "bytes_per_clock")?.unwrap_or(64);
        let hz = mhz(c, "clock")?.map_or(1e9, |m| f64::from(m) * 1e6);
        let mbs = (per_clock as f64 * hz / 1e6).min(f64::from(u32::MAX)) as u32;
        blocks.insert(i, (g, mbs));
    }
    let mut out: Vec<XgmiLink> = Vec::new();
    for l in &t.links {
        let (Some(&(a, ma)), Some(&(b, mb))) = (blocks.get(&l.a.component.index()), blocks.get(&l.b.component.index())) else {
            continue;
        };
        let (a, b) = (a.min(b), a.max(b));
        if a != b && !out.iter().any(|x| x.a == a && x.b == b) {
            out.push(XgmiLink { a, b, bandwidth_mbs: ma.min(mb) });
        }
    }
    out.sort_by_key(|x| (x.a, x.b));
    Ok(out)
}

impl SystemIdentity {
    /// A machine of `cpu` and `gpus`, placing each GPU in its slot (render minor
    /// 128 + slot, distinct gpu ids and processor id ranges).
    pub fn new(cpu: CpuIdentity, mut gpus: Vec<GpuIdentity>) -> SystemIdentity {
        let mut base = FIRST_SIMD_ID_BASE;
        for (slot, gpu) in gpus.iter_mut().enumerate() {
            gpu.place(slot as u32, base);
            base = base.wrapping_add(gpu.cu_count);
        }
        // Distinct gpu ids even if two GPUs hash alike.
        for i in 1..gpus.len() {
            while gpus[..i].iter().any(|g| g.gpu_id == gpus[i].gpu_id) {
                gpus[i].gpu_id = (gpus[i].gpu_id % 0xffff) + 1;
            }
        }
        SystemIdentity { cpu, gpus, xgmi: Vec::new() }
    }

    /// The same machine with the XGMI links of `t`; the GPUs joined by them form one
    /// hive (the same non-zero `hive_id`: the smallest `unique_id` among them).
    pub fn with_xgmi_of(mut self, t: &Topology) -> Result<SystemIdentity, IdentityError> {
        self.xgmi = xgmi_links(t)?;
        let members: std::collections::BTreeSet<usize> = self.xgmi.iter().flat_map(|l| [l.a, l.b]).collect();
        if let Some(hive) = members.iter().map(|&g| self.gpus[g].unique_id).min() {
            for &g in &members {
                self.gpus[g].hive_id = hive.max(1);
            }
        }
        Ok(self)
    }

    /// The XGMI link between GPUs `a` and `b` (indices into `gpus`), if any.
    pub fn xgmi_between(&self, a: usize, b: usize) -> Option<&XgmiLink> {
        self.xgmi.iter().find(|l| (l.a, l.b) == (a.min(b), a.max(b)))
    }

    /// A fixed small host (one core, 1 MiB) and every GPU of `t`: for tests and tools
    /// whose output must not depend on the machine they run on.
    pub fn with_fixed_host(t: &Topology) -> Result<SystemIdentity, IdentityError> {
        let cpu = CpuIdentity::parse("processor : 0\n", "MemTotal: 1024 kB\n");
        SystemIdentity::new(cpu, GpuIdentity::all_from_topology(t)?).with_xgmi_of(t)
    }

    /// [`SystemIdentity::with_fixed_host`] of the default topology: the machine the
    /// unit tests describe.
    #[cfg(test)]
    pub(crate) fn of_default_topology() -> SystemIdentity {
        amdgpu::link_components();
        SystemIdentity::with_fixed_host(&crate::config::load_topology(None).unwrap()).unwrap()
    }

    /// The host CPU and every GPU of `t`.
    pub fn from_topology(t: &Topology) -> Result<SystemIdentity, IdentityError> {
        SystemIdentity::new(CpuIdentity::from_host()?, GpuIdentity::all_from_topology(t)?).with_xgmi_of(t)
    }

    /// The same machine with GPUs that offer no SVM API (no `SVM_API_SUPPORTED`
    /// capability): what daemon mode presents, since the daemon does not share its
    /// clients' address spaces.
    pub fn without_svm(mut self) -> SystemIdentity {
        for g in &mut self.gpus {
            g.capability &= !cap::SVM_API_SUPPORTED;
        }
        self
    }
}

impl fmt::Display for GpuIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} CUs, {} XCCs, {} GiB, gpu_id {})",
            self.target,
            self.cu_count,
            self.xcc_count,
            self.vram_bytes >> 30,
            self.gpu_id
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use simdojo::params::ParamValue;

    pub(crate) fn load(name: &str) -> Topology {
        amdgpu::link_components();
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../topologies")
            .join(name);
        simdojo::topology::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn mi210() {
        let g = GpuIdentity::from_topology(&load("mi210.toml")).unwrap();
        assert_eq!(g.target, Target::Gfx90a);
        assert_eq!(g.gfx_target_version, 90010);
        assert_eq!(g.device_id, 0x740f);
        assert_eq!((g.cu_count, g.xcc_count, g.simd_count()), (104, 1, 416));
        assert_eq!(g.lds_bytes, 64 << 10);
        assert_eq!(g.l2.size_bytes, 8 << 20);
        assert_eq!(g.vector_l1.size_bytes, 16 << 10);
        assert_eq!(g.mall, None);
        assert_eq!(g.vram_bytes, 64 << 30);
        assert_eq!(g.engine_clock_mhz, 1700);
        assert_eq!(g.max_waves_per_simd, 8);
        assert_ne!(g.gpu_id, 0);
    }

    #[test]
    fn mi300x() {
        let g = GpuIdentity::from_topology(&load("mi300x.toml")).unwrap();
        assert_eq!(g.gfx_target_version, 90402);
        assert_eq!((g.cu_count, g.xcc_count, g.simd_count()), (304, 8, 1216));
        assert_eq!(g.array_count(), 32);
        assert_eq!(
            g.l2,
            CacheGeometry {
                size_bytes: 4 << 20,
                line_bytes: 128,
                ways: 16
            }
        );
        assert_eq!(g.mall.map(|m| m.size_bytes), Some(256 << 20));
        assert_eq!(g.vram_bytes, 192 << 30);
        assert_eq!(g.engine_clock_mhz, 2100);
    }

    #[test]
    fn mi355x() {
        let g = GpuIdentity::from_topology(&load("mi355x.toml")).unwrap();
        assert_eq!(g.gfx_target_version, 90500);
        assert_eq!((g.cu_count, g.xcc_count, g.simd_count()), (256, 8, 1024));
        assert_eq!(g.lds_bytes, 160 << 10);
        assert_eq!(g.mall.map(|m| m.size_bytes), Some(256 << 20));
        assert_eq!(g.vram_bytes, 288 << 30);
        assert_eq!(g.engine_clock_mhz, 2400);
    }

    #[test]
    fn missing_parts_are_typed_errors() {
        let mut t = Topology::new();
        let e = GpuIdentity::from_topology(&t).unwrap_err();
        assert!(matches!(e, IdentityError::NoSoc), "{e}");
        assert_eq!(e.to_string(), "no amdgpu.soc component in the topology");

        t.add_component(
            "gpu",
            "amdgpu.soc",
            Params::new().with("target", ParamValue::String("gfx90a".into())),
        );
        let e = GpuIdentity::from_topology(&t).unwrap_err();
        assert!(matches!(e, IdentityError::NoComputeUnits { .. }), "{e}");
        t.add_component("gpu.xcd[0].cu[0]", "amdgpu.cu", Params::new());
        let e = GpuIdentity::from_topology(&t).unwrap_err();
        assert!(
            matches!(e, IdentityError::NoCommandProcessors { .. }),
            "{e}"
        );
        t.add_component("gpu.xcd[0].cp", "amdgpu.cp", Params::new());
        // Silent topology: per-target defaults.
        let g = GpuIdentity::from_topology(&t).unwrap();
        assert_eq!(
            (g.cu_count, g.lds_bytes, g.l2.size_bytes),
            (1, 64 << 10, 8 << 20)
        );

        let mut bad = Topology::new();
        bad.add_component(
            "gpu",
            "amdgpu.soc",
            Params::new().with("target", ParamValue::String("gfx1100".into())),
        );
        assert!(matches!(
            GpuIdentity::from_topology(&bad),
            Err(IdentityError::Target { .. })
        ));
        let mut bad = Topology::new();
        bad.add_component(
            "gpu",
            "amdgpu.soc",
            Params::new().with("memory", ParamValue::UInt(3)),
        );
        let e = GpuIdentity::from_topology(&bad).unwrap_err();
        assert!(e.to_string().contains("`memory`"), "{e}");
    }

    #[test]
    fn slots_get_distinct_ids() {
        let g = GpuIdentity::from_topology(&load("mi300x.toml")).unwrap();
        let cpu = CpuIdentity::parse("processor\t: 0\nmodel name\t: X\n", "MemTotal:  1024 kB\n");
        let sys = SystemIdentity::new(cpu, vec![g.clone(), g]);
        assert_eq!(sys.cpu.mem_bytes, 1 << 20);
        let (a, b) = (&sys.gpus[0], &sys.gpus[1]);
        assert_ne!(a.gpu_id, b.gpu_id);
        assert_eq!((a.drm_render_minor, b.drm_render_minor), (128, 129));
        assert_eq!(b.simd_id_base, a.simd_id_base + 304);
    }

    #[test]
    fn host_cpu_is_read() {
        let cpu = CpuIdentity::from_host().unwrap();
        assert!(cpu.cores >= 1);
        assert!(cpu.mem_bytes > 0);
    }
}
