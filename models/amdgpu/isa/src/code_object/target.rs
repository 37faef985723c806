//! The processor and ABI a code object was built for: `EI_ABIVERSION` and `e_flags`.
//!
//! `e_flags` layout for code object v4 and later: bits 7:0 are `EF_AMDGPU_MACH` (the
//! processor), bits 9:8 the xnack setting, bits 11:10 the sramecc setting, and for v6
//! bits 31:24 the generic-target version (0 for a specific processor).

use std::fmt;

/// `e_ident[EI_OSABI]` of AMDGPU HSA code objects.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `e_machine` of AMDGPU code objects.
pub const EM_AMDGPU: u16 = 224;

const MACH_MASK: u32 = 0x0ff;
const MACH_GFX90A: u8 = 0x3f;
const MACH_GFX942: u8 = 0x4c;
const MACH_GFX950: u8 = 0x4f;
const XNACK_SHIFT: u32 = 8;
const SRAMECC_SHIFT: u32 = 10;
const GENERIC_VERSION_SHIFT: u32 = 24;

/// A raw `EF_AMDGPU_MACH` value (the low byte of `e_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MachValue(pub u8);

impl fmt::Display for MachValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EF_AMDGPU_MACH {:#05x}", self.0)
    }
}

/// The processor a code object targets.
///
/// Parsing never rejects an unknown processor: it is reported as [`Target::Other`] and the
/// consumer (loader, executor) decides that it cannot run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// CDNA2, MI210/MI250 (`EF_AMDGPU_MACH` 0x03f).
    Gfx90a,
    /// CDNA3, MI300 (`EF_AMDGPU_MACH` 0x04c).
    Gfx942,
    /// CDNA4, MI350/MI355 (`EF_AMDGPU_MACH` 0x04f).
    Gfx950,
    /// Any other processor; not supported by this crate's consumers.
    Other(MachValue),
}

impl Target {
    /// Decode the `EF_AMDGPU_MACH` field of `e_flags`.
    pub fn from_e_flags(e_flags: u32) -> Target {
        // Masked to 8 bits, so the cast is lossless.
        match (e_flags & MACH_MASK) as u8 {
            MACH_GFX90A => Target::Gfx90a,
            MACH_GFX942 => Target::Gfx942,
            MACH_GFX950 => Target::Gfx950,
            other => Target::Other(MachValue(other)),
        }
    }

    /// The `EF_AMDGPU_MACH` value of this target.
    pub fn mach(self) -> MachValue {
        match self {
            Target::Gfx90a => MachValue(MACH_GFX90A),
            Target::Gfx942 => MachValue(MACH_GFX942),
            Target::Gfx950 => MachValue(MACH_GFX950),
            Target::Other(mach) => mach,
        }
    }

    /// The LLVM processor name (`gfx90a`, ...), or `None` for [`Target::Other`].
    pub fn name(self) -> Option<&'static str> {
        match self {
            Target::Gfx90a => Some("gfx90a"),
            Target::Gfx942 => Some("gfx942"),
            Target::Gfx950 => Some("gfx950"),
            Target::Other(_) => None,
        }
    }

    /// Whether this crate models the target (every variant but [`Target::Other`]).
    pub fn is_supported(self) -> bool {
        !matches!(self, Target::Other(_))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name(), self) {
            (Some(name), _) => f.write_str(name),
            (None, Target::Other(mach)) => write!(f, "unsupported target ({mach})"),
            (None, _) => f.write_str("unknown target"),
        }
    }
}

/// The code object version, from `e_ident[EI_ABIVERSION]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeObjectVersion {
    /// `ELFABIVERSION_AMDGPU_HSA_V4` (2): grid and workgroup sizes come from the AQL packet.
    V4,
    /// `ELFABIVERSION_AMDGPU_HSA_V5` (3): adds hidden block-count/group-size arguments.
    V5,
    /// `ELFABIVERSION_AMDGPU_HSA_V6` (4): adds generic targets.
    V6,
}

impl CodeObjectVersion {
    /// Decode `EI_ABIVERSION`; `None` for versions other than v4, v5 and v6.
    pub fn from_abi_version(abi_version: u8) -> Option<CodeObjectVersion> {
        match abi_version {
            2 => Some(CodeObjectVersion::V4),
            3 => Some(CodeObjectVersion::V5),
            4 => Some(CodeObjectVersion::V6),
            _ => None,
        }
    }

    /// The version number (4, 5 or 6).
    pub fn number(self) -> u8 {
        match self {
            CodeObjectVersion::V4 => 4,
            CodeObjectVersion::V5 => 5,
            CodeObjectVersion::V6 => 6,
        }
    }
}

/// The setting of a target feature (xnack, sramecc) recorded in `e_flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The processor does not support the feature.
    Unsupported,
    /// The code runs with the feature either on or off.
    Any,
    /// The code requires the feature off.
    Off,
    /// The code requires the feature on.
    On,
}

impl FeatureSetting {
    fn from_bits(bits: u32) -> FeatureSetting {
        match bits & 0b11 {
            0 => FeatureSetting::Unsupported,
            1 => FeatureSetting::Any,
            2 => FeatureSetting::Off,
            _ => FeatureSetting::On,
        }
    }
}

/// Everything `e_flags` says, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetFlags {
    /// The processor.
    pub target: Target,
    /// The xnack (page-fault replay) setting.
    pub xnack: FeatureSetting,
    /// The sramecc setting.
    pub sramecc: FeatureSetting,
    /// The generic-target version (v6 generic code objects); 0 for a specific processor.
    pub generic_version: u8,
    /// The raw `e_flags`.
    pub raw: u32,
}

impl TargetFlags {
    /// Decode `e_flags` of a v4+ code object.
    pub fn from_e_flags(e_flags: u32) -> TargetFlags {
        TargetFlags {
            target: Target::from_e_flags(e_flags),
            xnack: FeatureSetting::from_bits(e_flags >> XNACK_SHIFT),
            sramecc: FeatureSetting::from_bits(e_flags >> SRAMECC_SHIFT),
            // A u32 shifted right by 24 fits in 8 bits.
            generic_version: (e_flags >> GENERIC_VERSION_SHIFT) as u8,
            raw: e_flags,
        }
    }
}
