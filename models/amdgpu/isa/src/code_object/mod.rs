//! AMDGPU HSA code objects: the ELF files a GPU loader places in device memory.
//!
//! [`CodeObject::parse`] reads a 64-bit little-endian `EM_AMDGPU` shared object of code
//! object version 4, 5 or 6 and decodes everything a loader and an executor need:
//!
//! - the target processor and its xnack/sramecc settings (`e_flags`, [`TargetFlags`]),
//! - the `.text` section, the symbols and the `PT_LOAD` segments ([`LoadSegment`]),
//! - one [`Kernel`] per `NAME.kd` symbol: its decoded 64-byte [`KernelDescriptor`], its
//!   absolute entry address, and its [`KernelMetadata`] from the `NT_AMDGPU_METADATA` note.
//!
//! **Architecture Invariant:** parsing never panics on any input bytes; every defect is a
//! [`CodeObjectError`] naming what and where. A fuzz target (`fuzz/`) and a mutation test
//! hold the line.
//!
//! **Architecture Invariant:** an unknown processor is *not* a parse error: it is reported
//! as [`Target::Other`] and the consumer refuses it.

mod descriptor;
mod error;
mod metadata;
mod parse;
mod relocation;
mod target;

use std::fmt;

pub use descriptor::{
    ComputePgmRsrc1, ComputePgmRsrc2, ComputePgmRsrc3, DenormMode, ExceptionEnables, FloatMode, InitialSgpr,
    KernargPreload, KernelCodeProperties, KernelDescriptor, ReservedEncoding, RoundMode, SgprSlot,
    WorkitemIdVgprs, KERNEL_DESCRIPTOR_SIZE,
};
pub use error::CodeObjectError;
pub use relocation::{DynamicRelocation, LoadError, RelocationKind};
pub use metadata::{AddressSpace, ArgValueKind, KernelArg, KernelMetadata, Metadata, NT_AMDGPU_METADATA};
pub use target::{
    CodeObjectVersion, FeatureSetting, MachValue, Target, TargetFlags, ELFOSABI_AMDGPU_HSA, EM_AMDGPU,
};

/// A virtual address inside a code object (relative to the address it is loaded at).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct VirtAddr(pub u64);

impl VirtAddr {
    /// `self + delta`, or `None` on overflow.
    pub fn checked_offset(self, delta: i64) -> Option<VirtAddr> {
        self.0.checked_add_signed(delta).map(VirtAddr)
    }
}

impl fmt::Display for VirtAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// The executable `.text` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSection {
    /// Address of the first byte.
    pub address: VirtAddr,
    /// The machine code.
    pub bytes: Vec<u8>,
}

/// The ELF type of a symbol (`STT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// `STT_NOTYPE`.
    NoType,
    /// `STT_OBJECT` (kernel descriptors, global variables).
    Object,
    /// `STT_FUNC` (kernel and device function code).
    Function,
    /// `STT_SECTION`.
    Section,
    /// `STT_FILE`.
    File,
    /// Any other type value.
    Other(u8),
}

/// The ELF binding of a symbol (`STB_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolBinding {
    /// `STB_LOCAL`.
    Local,
    /// `STB_GLOBAL`.
    Global,
    /// `STB_WEAK`.
    Weak,
    /// Any other binding value.
    Other(u8),
}

/// One named symbol of the code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// The name.
    pub name: String,
    /// `st_value`: its address.
    pub value: VirtAddr,
    /// `st_size`: bytes.
    pub size: u64,
    /// `st_info` type.
    pub kind: SymbolKind,
    /// `st_info` binding.
    pub binding: SymbolBinding,
}

/// A kernel: its descriptor, entry point and metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// Kernel name (the descriptor symbol without `.kd`).
    pub name: String,
    /// The descriptor symbol, `NAME.kd`.
    pub descriptor_symbol: String,
    /// Address of the 64-byte kernel descriptor.
    pub descriptor_address: VirtAddr,
    /// Absolute address of the first instruction (descriptor address + entry offset).
    pub entry: VirtAddr,
    /// The decoded descriptor.
    pub descriptor: KernelDescriptor,
    /// The metadata whose `.symbol` names this descriptor, if the note has one.
    pub metadata: Option<KernelMetadata>,
}

/// A `PT_LOAD` segment: what a loader copies to `base + vaddr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSegment {
    /// `p_vaddr`.
    pub vaddr: VirtAddr,
    /// The `p_filesz` bytes from the file.
    pub file_bytes: Vec<u8>,
    /// `p_memsz`: bytes in memory; the tail past the file bytes is zero.
    pub mem_size: u64,
    /// `p_align`.
    pub align: u64,
    /// `PF_R`.
    pub readable: bool,
    /// `PF_W`.
    pub writable: bool,
    /// `PF_X`.
    pub executable: bool,
}

/// Largest flat image [`CodeObject::flat_image`] builds (1 GiB): anything larger is a
/// malformed or hostile file, not a GPU program.
pub const MAX_FLAT_IMAGE_BYTES: u64 = 1 << 30;

/// A parsed AMDGPU HSA code object. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObject {
    flags: TargetFlags,
    version: CodeObjectVersion,
    text: TextSection,
    symbols: Vec<Symbol>,
    kernels: Vec<Kernel>,
    metadata: Option<Metadata>,
    segments: Vec<LoadSegment>,
    relocations: Vec<DynamicRelocation>,
}

impl CodeObject {
    /// Parse a code object. Never panics; every defect is an error.
    pub fn parse(bytes: &[u8]) -> Result<CodeObject, CodeObjectError> {
        parse::parse(bytes)
    }

    /// The target processor.
    pub fn target(&self) -> Target {
        self.flags.target
    }

    /// All of `e_flags`, decoded.
    pub fn flags(&self) -> TargetFlags {
        self.flags
    }

    /// The xnack setting.
    pub fn xnack(&self) -> FeatureSetting {
        self.flags.xnack
    }

    /// The sramecc setting.
    pub fn sramecc(&self) -> FeatureSetting {
        self.flags.sramecc
    }

    /// The code object version.
    pub fn version(&self) -> CodeObjectVersion {
        self.version
    }

    /// The `.text` section.
    pub fn text(&self) -> &TextSection {
        &self.text
    }

    /// Named symbols (from `.symtab`, or `.dynsym` when the file is stripped).
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// The first symbol with this name.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|symbol| symbol.name == name)
    }

    /// Kernels in symbol-table order.
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// The kernel with this name (without `.kd`).
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|kernel| kernel.name == name)
    }

    /// The whole metadata note, if present.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref()
    }

    /// The `PT_LOAD` segments, in program header order.
    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// Bytes from address 0 to the end of the highest segment: the size of the memory
    /// a loader reserves at its base address.
    pub fn image_span(&self) -> u64 {
        self.segments
            .iter()
            // Parsing checked that vaddr + mem_size does not overflow.
            .map(|segment| segment.vaddr.0 + segment.mem_size)
            .max()
            .unwrap_or(0)
    }

    /// The loaded image as one byte vector indexed by virtual address: segment file bytes
    /// copied in, everything else zero. Place it at any suitably aligned base address.
    /// Relocations are *not* applied: see [`CodeObject::load_image`].
    pub fn flat_image(&self) -> Result<Vec<u8>, LoadError> {
        let span = self.image_span();
        if span > MAX_FLAT_IMAGE_BYTES {
            return Err(LoadError::TooLarge { span, limit: MAX_FLAT_IMAGE_BYTES });
        }
        // span <= 1 GiB fits in usize on every supported host.
        let mut image = vec![0u8; span as usize];
        for segment in &self.segments {
            // Parsing checked file_bytes.len() <= mem_size and vaddr + mem_size <= span.
            let start = segment.vaddr.0 as usize;
            image[start..start + segment.file_bytes.len()].copy_from_slice(&segment.file_bytes);
        }
        Ok(image)
    }

    /// The dynamic relocations a loader must apply.
    pub fn relocations(&self) -> &[DynamicRelocation] {
        &self.relocations
    }

    /// The image ready to copy to device address `base`: [`CodeObject::flat_image`] with
    /// every dynamic relocation applied for that base.
    pub fn load_image(&self, base: u64) -> Result<Vec<u8>, LoadError> {
        let mut image = self.flat_image()?;
        relocation::apply(&self.relocations, &mut image, base)?;
        Ok(image)
    }
}
