//! The 64-byte AMDHSA kernel descriptor (`NAME.kd`) and its register fields.
//!
//! Layout (little-endian):
//!
//! ```text
//!  0 u32 group_segment_fixed_size      16 i64 kernel_code_entry_byte_offset
//!  4 u32 private_segment_fixed_size    24 ..  reserved (20 bytes)
//!  8 u32 kernarg_size                  44 u32 compute_pgm_rsrc3
//! 12 ..  reserved                      48 u32 compute_pgm_rsrc1
//!                                      52 u32 compute_pgm_rsrc2
//!                                      56 u16 kernel_code_properties
//!                                      58 u16 kernarg_preload
//!                                      60 ..  reserved
//! ```
//!
//! Decoding is total except for encodings the format reserves (see
//! [`KernelDescriptor::decode`]); reserved *bits* are ignored.

/// Size in bytes of a kernel descriptor.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;

/// A field of a descriptor that holds a reserved encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedEncoding {
    /// The field, e.g. "compute_pgm_rsrc2.enable_vgpr_workitem_id".
    pub field: &'static str,
    /// The value found.
    pub value: u64,
}

/// Extract `width` bits of `word` starting at bit `lo`.
fn bits(word: u32, lo: u32, width: u32) -> u32 {
    (word >> lo) & ((1u32 << width) - 1)
}

fn bit(word: u32, at: u32) -> bool {
    bits(word, at, 1) == 1
}

/// IEEE rounding mode of one float precision class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundMode {
    /// Round to nearest, ties to even.
    NearestEven,
    /// Round toward +infinity.
    PlusInfinity,
    /// Round toward -infinity.
    MinusInfinity,
    /// Round toward zero.
    Zero,
}

impl RoundMode {
    /// The 2-bit field encoding.
    pub fn encoding(self) -> u8 {
        match self {
            RoundMode::NearestEven => 0,
            RoundMode::PlusInfinity => 1,
            RoundMode::MinusInfinity => 2,
            RoundMode::Zero => 3,
        }
    }

    fn from_bits(value: u32) -> RoundMode {
        match value & 0b11 {
            0 => RoundMode::NearestEven,
            1 => RoundMode::PlusInfinity,
            2 => RoundMode::MinusInfinity,
            _ => RoundMode::Zero,
        }
    }
}

/// Denormal handling of one float precision class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DenormMode {
    /// Flush denormal sources and results to zero.
    FlushSourceAndResult,
    /// Keep denormal sources, flush denormal results.
    FlushResult,
    /// Flush denormal sources, keep denormal results.
    FlushSource,
    /// Keep denormals everywhere.
    FlushNone,
}

impl DenormMode {
    /// The 2-bit field encoding.
    pub fn encoding(self) -> u8 {
        match self {
            DenormMode::FlushSourceAndResult => 0,
            DenormMode::FlushResult => 1,
            DenormMode::FlushSource => 2,
            DenormMode::FlushNone => 3,
        }
    }

    fn from_bits(value: u32) -> DenormMode {
        match value & 0b11 {
            0 => DenormMode::FlushSourceAndResult,
            1 => DenormMode::FlushResult,
            2 => DenormMode::FlushSource,
            _ => DenormMode::FlushNone,
        }
    }
}

/// The initial float mode of a wavefront (the MODE register's round and denorm fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FloatMode {
    /// Rounding of f32 operations.
    pub round_32: RoundMode,
    /// Rounding of f16 and f64 operations.
    pub round_16_64: RoundMode,
    /// Denormals of f32 operations.
    pub denorm_32: DenormMode,
    /// Denormals of f16 and f64 operations.
    pub denorm_16_64: DenormMode,
}

/// `COMPUTE_PGM_RSRC1` as used by gfx90a, gfx942 and gfx950.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComputePgmRsrc1 {
    /// `GRANULATED_WORKITEM_VGPR_COUNT` (bits 5:0): VGPR blocks minus one.
    pub granulated_workitem_vgpr_count: u8,
    /// `GRANULATED_WAVEFRONT_SGPR_COUNT` (bits 9:6): SGPR blocks, encoded (see
    /// [`KernelDescriptor::sgpr_count`]).
    pub granulated_wavefront_sgpr_count: u8,
    /// `PRIORITY` (bits 11:10).
    pub priority: u8,
    /// Float round and denorm modes (bits 19:12).
    pub float_mode: FloatMode,
    /// `PRIV` (bit 20).
    pub privileged: bool,
    /// `ENABLE_DX10_CLAMP` (bit 21).
    pub dx10_clamp: bool,
    /// `DEBUG_MODE` (bit 22).
    pub debug_mode: bool,
    /// `ENABLE_IEEE_MODE` (bit 23).
    pub ieee_mode: bool,
    /// `BULKY` (bit 24).
    pub bulky: bool,
    /// `CDBG_USER` (bit 25).
    pub cdbg_user: bool,
    /// `FP16_OVFL` (bit 26): clamp f16 overflow to max finite instead of infinity.
    pub fp16_overflow: bool,
    /// The raw register value.
    pub raw: u32,
}

impl ComputePgmRsrc1 {
    /// Decode the register value.
    pub fn decode(raw: u32) -> ComputePgmRsrc1 {
        ComputePgmRsrc1 {
            // Each field is masked to at most 6 bits, so the casts are lossless.
            granulated_workitem_vgpr_count: bits(raw, 0, 6) as u8,
            granulated_wavefront_sgpr_count: bits(raw, 6, 4) as u8,
            priority: bits(raw, 10, 2) as u8,
            float_mode: FloatMode {
                round_32: RoundMode::from_bits(bits(raw, 12, 2)),
                round_16_64: RoundMode::from_bits(bits(raw, 14, 2)),
                denorm_32: DenormMode::from_bits(bits(raw, 16, 2)),
                denorm_16_64: DenormMode::from_bits(bits(raw, 18, 2)),
            },
            privileged: bit(raw, 20),
            dx10_clamp: bit(raw, 21),
            debug_mode: bit(raw, 22),
            ieee_mode: bit(raw, 23),
            bulky: bit(raw, 24),
            cdbg_user: bit(raw, 25),
            fp16_overflow: bit(raw, 26),
            raw,
        }
    }
}

/// Which work-item id VGPRs the hardware initialises (`ENABLE_VGPR_WORKITEM_ID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkitemIdVgprs {
    /// v0 = X (packed or not, per target).
    X,
    /// X and Y.
    Xy,
    /// X, Y and Z.
    Xyz,
}

impl WorkitemIdVgprs {
    /// The numeric encoding, 0..=2.
    pub fn encoding(self) -> u8 {
        match self {
            WorkitemIdVgprs::X => 0,
            WorkitemIdVgprs::Xy => 1,
            WorkitemIdVgprs::Xyz => 2,
        }
    }
}

/// Which floating-point and integer exceptions raise a trap (`COMPUTE_PGM_RSRC2` bits 30:24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExceptionEnables {
    /// IEEE 754 invalid operation.
    pub fp_invalid_operation: bool,
    /// A denormal source operand.
    pub fp_denormal_source: bool,
    /// Float division by zero.
    pub fp_division_by_zero: bool,
    /// Float overflow.
    pub fp_overflow: bool,
    /// Float underflow.
    pub fp_underflow: bool,
    /// Inexact result.
    pub fp_inexact: bool,
    /// Integer division by zero.
    pub int_division_by_zero: bool,
}

/// `COMPUTE_PGM_RSRC2` as used by gfx90a, gfx942 and gfx950.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComputePgmRsrc2 {
    /// `ENABLE_PRIVATE_SEGMENT` (bit 0): the private segment wavefront offset SGPR is set up.
    pub enable_private_segment: bool,
    /// `USER_SGPR_COUNT` (bits 5:1).
    pub user_sgpr_count: u8,
    /// `ENABLE_TRAP_HANDLER` (bit 6).
    pub enable_trap_handler: bool,
    /// `ENABLE_SGPR_WORKGROUP_ID_X` (bit 7).
    pub enable_sgpr_workgroup_id_x: bool,
    /// `ENABLE_SGPR_WORKGROUP_ID_Y` (bit 8).
    pub enable_sgpr_workgroup_id_y: bool,
    /// `ENABLE_SGPR_WORKGROUP_ID_Z` (bit 9).
    pub enable_sgpr_workgroup_id_z: bool,
    /// `ENABLE_SGPR_WORKGROUP_INFO` (bit 10).
    pub enable_sgpr_workgroup_info: bool,
    /// `ENABLE_VGPR_WORKITEM_ID` (bits 12:11).
    pub enable_vgpr_workitem_id: WorkitemIdVgprs,
    /// `ENABLE_EXCEPTION_ADDRESS_WATCH` (bit 13).
    pub enable_exception_address_watch: bool,
    /// `ENABLE_EXCEPTION_MEMORY` (bit 14).
    pub enable_exception_memory: bool,
    /// `GRANULATED_LDS_SIZE` (bits 23:15); the CP fills it in, code objects leave 0.
    pub granulated_lds_size: u16,
    /// Trap-enabling exceptions (bits 30:24).
    pub exceptions: ExceptionEnables,
    /// The raw register value.
    pub raw: u32,
}

impl ComputePgmRsrc2 {
    /// Decode the register value; `ENABLE_VGPR_WORKITEM_ID` = 3 is reserved.
    pub fn decode(raw: u32) -> Result<ComputePgmRsrc2, ReservedEncoding> {
        let enable_vgpr_workitem_id = match bits(raw, 11, 2) {
            0 => WorkitemIdVgprs::X,
            1 => WorkitemIdVgprs::Xy,
            2 => WorkitemIdVgprs::Xyz,
            value => {
                return Err(ReservedEncoding {
                    field: "compute_pgm_rsrc2.enable_vgpr_workitem_id",
                    value: u64::from(value),
                })
            }
        };
        Ok(ComputePgmRsrc2 {
            enable_private_segment: bit(raw, 0),
            // Masked to 5 and 9 bits: the casts are lossless.
            user_sgpr_count: bits(raw, 1, 5) as u8,
            enable_trap_handler: bit(raw, 6),
            enable_sgpr_workgroup_id_x: bit(raw, 7),
            enable_sgpr_workgroup_id_y: bit(raw, 8),
            enable_sgpr_workgroup_id_z: bit(raw, 9),
            enable_sgpr_workgroup_info: bit(raw, 10),
            enable_vgpr_workitem_id,
            enable_exception_address_watch: bit(raw, 13),
            enable_exception_memory: bit(raw, 14),
            granulated_lds_size: bits(raw, 15, 9) as u16,
            exceptions: ExceptionEnables {
                fp_invalid_operation: bit(raw, 24),
                fp_denormal_source: bit(raw, 25),
                fp_division_by_zero: bit(raw, 26),
                fp_overflow: bit(raw, 27),
                fp_underflow: bit(raw, 28),
                fp_inexact: bit(raw, 29),
                int_division_by_zero: bit(raw, 30),
            },
            raw,
        })
    }
}

/// `COMPUTE_PGM_RSRC3` as used by gfx90a, gfx942 and gfx950.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComputePgmRsrc3 {
    /// `ACCUM_OFFSET` (bits 5:0): first AccVGPR index, in units of 4, minus one.
    pub accum_offset_field: u8,
    /// `TG_SPLIT` (bit 16): work-group may be split across compute units.
    pub tg_split: bool,
    /// The raw register value.
    pub raw: u32,
}

impl ComputePgmRsrc3 {
    /// Decode the register value.
    pub fn decode(raw: u32) -> ComputePgmRsrc3 {
        ComputePgmRsrc3 {
            // Masked to 6 bits: lossless.
            accum_offset_field: bits(raw, 0, 6) as u8,
            tg_split: bit(raw, 16),
            raw,
        }
    }

    /// Index of the first AccVGPR in the unified register file: `(field + 1) * 4`.
    pub fn accum_offset(&self) -> u32 {
        (u32::from(self.accum_offset_field) + 1) * 4
    }
}

/// `kernel_code_properties`: which user SGPRs are set up, wave size, dynamic stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelCodeProperties {
    /// Bit 0: private segment buffer descriptor (4 SGPRs).
    pub enable_sgpr_private_segment_buffer: bool,
    /// Bit 1: dispatch packet pointer (2 SGPRs).
    pub enable_sgpr_dispatch_ptr: bool,
    /// Bit 2: queue pointer (2 SGPRs).
    pub enable_sgpr_queue_ptr: bool,
    /// Bit 3: kernarg segment pointer (2 SGPRs).
    pub enable_sgpr_kernarg_segment_ptr: bool,
    /// Bit 4: dispatch id (2 SGPRs).
    pub enable_sgpr_dispatch_id: bool,
    /// Bit 5: flat scratch init (2 SGPRs).
    pub enable_sgpr_flat_scratch_init: bool,
    /// Bit 6: private segment size (1 SGPR).
    pub enable_sgpr_private_segment_size: bool,
    /// Bit 10: wave32 (never set on CDNA targets).
    pub wavefront_size32: bool,
    /// Bit 11: the kernel uses a dynamically sized stack.
    pub uses_dynamic_stack: bool,
    /// The raw 16-bit value.
    pub raw: u16,
}

impl KernelCodeProperties {
    /// Decode the 16-bit field.
    pub fn decode(raw: u16) -> KernelCodeProperties {
        let word = u32::from(raw);
        KernelCodeProperties {
            enable_sgpr_private_segment_buffer: bit(word, 0),
            enable_sgpr_dispatch_ptr: bit(word, 1),
            enable_sgpr_queue_ptr: bit(word, 2),
            enable_sgpr_kernarg_segment_ptr: bit(word, 3),
            enable_sgpr_dispatch_id: bit(word, 4),
            enable_sgpr_flat_scratch_init: bit(word, 5),
            enable_sgpr_private_segment_size: bit(word, 6),
            wavefront_size32: bit(word, 10),
            uses_dynamic_stack: bit(word, 11),
            raw,
        }
    }
}

/// Kernel arguments preloaded into user SGPRs (gfx90a, gfx942, gfx950).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KernargPreload {
    /// `KERNARG_PRELOAD_SPEC_LENGTH`: number of dwords preloaded.
    pub length_dwords: u8,
    /// `KERNARG_PRELOAD_SPEC_OFFSET`: first preloaded dword of the kernarg segment.
    pub offset_dwords: u16,
}

/// What a user or system SGPR holds when a wavefront starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InitialSgpr {
    /// 128-bit private segment buffer resource descriptor.
    PrivateSegmentBuffer,
    /// 64-bit address of the AQL dispatch packet.
    DispatchPtr,
    /// 64-bit address of the AQL queue.
    QueuePtr,
    /// 64-bit address of the kernarg segment.
    KernargSegmentPtr,
    /// 64-bit dispatch id.
    DispatchId,
    /// Flat scratch base and per-lane size.
    FlatScratchInit,
    /// 32-bit per-work-item private segment size.
    PrivateSegmentSize,
    /// Preloaded kernarg dwords, starting at this dword of the kernarg segment.
    PreloadedKernarg {
        /// First kernarg dword.
        first_dword: u16,
    },
    /// Work-group id X (system SGPR).
    WorkgroupIdX,
    /// Work-group id Y (system SGPR).
    WorkgroupIdY,
    /// Work-group id Z (system SGPR).
    WorkgroupIdZ,
    /// Work-group info (system SGPR).
    WorkgroupInfo,
    /// Private segment wavefront offset (system SGPR).
    PrivateSegmentWaveOffset,
}

/// A run of consecutive SGPRs initialised with one value at wave launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SgprSlot {
    /// What the SGPRs hold.
    pub value: InitialSgpr,
    /// Index of the first SGPR (s0 = 0).
    pub first: u8,
    /// Number of SGPRs.
    pub count: u8,
}

/// A decoded kernel descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelDescriptor {
    /// Bytes of LDS the kernel allocates statically (dynamic LDS is added at dispatch).
    pub group_segment_fixed_size: u32,
    /// Bytes of scratch per work-item, not counting a dynamic stack.
    pub private_segment_fixed_size: u32,
    /// Bytes of the kernarg segment, hidden arguments included.
    pub kernarg_size: u32,
    /// Byte offset from the descriptor's address to the kernel's first instruction.
    pub kernel_code_entry_byte_offset: i64,
    /// `COMPUTE_PGM_RSRC1`.
    pub rsrc1: ComputePgmRsrc1,
    /// `COMPUTE_PGM_RSRC2`.
    pub rsrc2: ComputePgmRsrc2,
    /// `COMPUTE_PGM_RSRC3`.
    pub rsrc3: ComputePgmRsrc3,
    /// `kernel_code_properties`.
    pub properties: KernelCodeProperties,
    /// `kernarg_preload`.
    pub kernarg_preload: KernargPreload,
}

fn le_u32(bytes: &[u8; KERNEL_DESCRIPTOR_SIZE], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn le_u16(bytes: &[u8; KERNEL_DESCRIPTOR_SIZE], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// VGPR allocation granule of the encoded VGPR count on CDNA (wave64).
const VGPR_ENCODING_GRANULE: u32 = 8;
/// SGPR encoding granule on GFX9 (the field counts 8-SGPR units, always in pairs).
const SGPR_ENCODING_GRANULE: u32 = 16;

impl KernelDescriptor {
    /// Decode 64 descriptor bytes. Fails only on reserved encodings of enumerated fields.
    pub fn decode(bytes: &[u8; KERNEL_DESCRIPTOR_SIZE]) -> Result<KernelDescriptor, ReservedEncoding> {
        let entry = i64::from_le_bytes([
            bytes[16], bytes[17], bytes[18], bytes[19], bytes[20], bytes[21], bytes[22], bytes[23],
        ]);
        let preload = le_u16(bytes, 58);
        Ok(KernelDescriptor {
            group_segment_fixed_size: le_u32(bytes, 0),
            private_segment_fixed_size: le_u32(bytes, 4),
            kernarg_size: le_u32(bytes, 8),
            kernel_code_entry_byte_offset: entry,
            rsrc3: ComputePgmRsrc3::decode(le_u32(bytes, 44)),
            rsrc1: ComputePgmRsrc1::decode(le_u32(bytes, 48)),
            rsrc2: ComputePgmRsrc2::decode(le_u32(bytes, 52))?,
            properties: KernelCodeProperties::decode(le_u16(bytes, 56)),
            kernarg_preload: KernargPreload {
                // 7-bit and 9-bit fields of a u16: lossless.
                length_dwords: (preload & 0x7f) as u8,
                offset_dwords: preload >> 7,
            },
        })
    }

    /// Wavefront size in lanes (32 or 64).
    pub fn wavefront_size(&self) -> u32 {
        if self.properties.wavefront_size32 {
            32
        } else {
            64
        }
    }

    /// VGPRs (architected plus AccVGPRs, in the unified file) allocated per work-item:
    /// `(GRANULATED_WORKITEM_VGPR_COUNT + 1) * 8`.
    pub fn vgpr_count(&self) -> u32 {
        (u32::from(self.rsrc1.granulated_workitem_vgpr_count) + 1) * VGPR_ENCODING_GRANULE
    }

    /// SGPRs the compiler encoded for the wavefront, VCC and friends included. On GFX9 the
    /// field holds `2 * (blocks of 16) - 2`, so this is `(field / 2 + 1) * 16`.
    pub fn sgpr_count(&self) -> u32 {
        (u32::from(self.rsrc1.granulated_wavefront_sgpr_count) / 2 + 1) * SGPR_ENCODING_GRANULE
    }

    /// Index of the first AccVGPR (`ACCUM_OFFSET`), valid on gfx90a and later.
    pub fn accum_offset(&self) -> u32 {
        self.rsrc3.accum_offset()
    }

    /// Architected VGPRs a wave of this kernel can name: the allocation, at most 256.
    pub fn arch_vgprs(&self) -> u32 {
        self.vgpr_count().min(256)
    }

    /// AccVGPRs a wave of this kernel can name: the unified allocation above
    /// `ACCUM_OFFSET`, at most 256.
    pub fn acc_vgprs(&self) -> u32 {
        self.vgpr_count().saturating_sub(self.accum_offset()).min(256)
    }

    /// User SGPRs in the order the hardware loads them, starting at s0. Includes the
    /// preloaded kernarg dwords, which follow the other user SGPRs.
    pub fn user_sgprs(&self) -> Vec<SgprSlot> {
        let props = &self.properties;
        let candidates = [
            (props.enable_sgpr_private_segment_buffer, InitialSgpr::PrivateSegmentBuffer, 4),
            (props.enable_sgpr_dispatch_ptr, InitialSgpr::DispatchPtr, 2),
            (props.enable_sgpr_queue_ptr, InitialSgpr::QueuePtr, 2),
            (props.enable_sgpr_kernarg_segment_ptr, InitialSgpr::KernargSegmentPtr, 2),
            (props.enable_sgpr_dispatch_id, InitialSgpr::DispatchId, 2),
            (props.enable_sgpr_flat_scratch_init, InitialSgpr::FlatScratchInit, 2),
            (props.enable_sgpr_private_segment_size, InitialSgpr::PrivateSegmentSize, 1),
            (
                self.kernarg_preload.length_dwords > 0,
                InitialSgpr::PreloadedKernarg { first_dword: self.kernarg_preload.offset_dwords },
                self.kernarg_preload.length_dwords,
            ),
        ];
        let mut next = 0u8;
        let mut slots = Vec::new();
        for (enabled, value, count) in candidates {
            if enabled {
                slots.push(SgprSlot { value, first: next, count });
                // At most 4+2*5+1+127 = 142 SGPRs: fits in u8 without wrapping.
                next = next.saturating_add(count);
            }
        }
        slots
    }

    /// Number of user SGPRs implied by [`KernelDescriptor::user_sgprs`]. The
    /// `USER_SGPR_COUNT` field is at least this (compilers may reserve more).
    pub fn implied_user_sgpr_count(&self) -> u32 {
        self.user_sgprs().iter().map(|slot| u32::from(slot.count)).sum()
    }

    /// System SGPRs in load order; they start right after `USER_SGPR_COUNT` user SGPRs.
    pub fn system_sgprs(&self) -> Vec<SgprSlot> {
        let rsrc2 = &self.rsrc2;
        let candidates = [
            (rsrc2.enable_sgpr_workgroup_id_x, InitialSgpr::WorkgroupIdX),
            (rsrc2.enable_sgpr_workgroup_id_y, InitialSgpr::WorkgroupIdY),
            (rsrc2.enable_sgpr_workgroup_id_z, InitialSgpr::WorkgroupIdZ),
            (rsrc2.enable_sgpr_workgroup_info, InitialSgpr::WorkgroupInfo),
            (rsrc2.enable_private_segment, InitialSgpr::PrivateSegmentWaveOffset),
        ];
        let mut next = rsrc2.user_sgpr_count;
        let mut slots = Vec::new();
        for (enabled, value) in candidates {
            if enabled {
                slots.push(SgprSlot { value, first: next, count: 1 });
                next = next.saturating_add(1);
            }
        }
        slots
    }
}
