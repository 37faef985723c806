//! The one error type of code object parsing.
//!
//! Every variant names *what* was wrong and *where* (a file offset, a section, a symbol or
//! a kernel), so a malformed file can be diagnosed from the message alone. All variants are
//! fatal for the parse that produced them: no partial [`CodeObject`](super::CodeObject) is
//! returned.

use super::VirtAddr;

/// Why a byte slice is not a usable AMDGPU HSA code object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeObjectError {
    /// The ELF container itself could not be read (bad header, a table or string pointing
    /// outside the file, ...). `what` names the structure being read.
    #[error("malformed ELF while reading {what}: {detail}")]
    MalformedElf {
        /// The ELF structure being read, e.g. "file header" or "section headers".
        what: &'static str,
        /// The reader's description of the problem.
        detail: String,
    },
    /// `e_ident` does not describe a 64-bit little-endian ELF file.
    #[error("not a 64-bit little-endian ELF file (EI_CLASS={class}, EI_DATA={data})")]
    NotElf64Le {
        /// `e_ident[EI_CLASS]`.
        class: u8,
        /// `e_ident[EI_DATA]`.
        data: u8,
    },
    /// `e_machine` is not `EM_AMDGPU` (224).
    #[error("e_machine is {machine}, expected EM_AMDGPU (224)")]
    WrongMachine {
        /// The `e_machine` value found.
        machine: u16,
    },
    /// `e_ident[EI_OSABI]` is not `ELFOSABI_AMDGPU_HSA` (64).
    #[error("EI_OSABI is {os_abi}, expected ELFOSABI_AMDGPU_HSA (64)")]
    WrongOsAbi {
        /// The `EI_OSABI` value found.
        os_abi: u8,
    },
    /// `e_ident[EI_ABIVERSION]` names a code object version this crate does not read
    /// (only v4, v5 and v6 are supported).
    #[error("EI_ABIVERSION {abi_version} is not code object v4, v5 or v6")]
    UnsupportedVersion {
        /// The `EI_ABIVERSION` value found (2 = v4, 3 = v5, 4 = v6).
        abi_version: u8,
    },
    /// A section the code object needs is absent.
    #[error("section {name} is missing")]
    MissingSection {
        /// The section name, e.g. ".text".
        name: &'static str,
    },
    /// A symbol's name is not valid UTF-8.
    #[error("symbol #{index} in {table} has a name that is not UTF-8")]
    SymbolName {
        /// The symbol table, ".symtab" or ".dynsym".
        table: &'static str,
        /// The symbol's index in that table.
        index: usize,
    },
    /// A kernel descriptor symbol does not have the 64-byte size of a kernel descriptor.
    #[error("kernel descriptor symbol {symbol} has size {size}, expected 64")]
    DescriptorSize {
        /// The `NAME.kd` symbol.
        symbol: String,
        /// Its `st_size`.
        size: u64,
    },
    /// A kernel descriptor's 64 bytes are not inside the file data of its section.
    #[error("kernel descriptor {symbol} at {address} is not inside the file data of section #{section}")]
    DescriptorOutOfBounds {
        /// The `NAME.kd` symbol.
        symbol: String,
        /// The symbol's value.
        address: VirtAddr,
        /// The section index the symbol names.
        section: usize,
    },
    /// A kernel descriptor field holds a value that its encoding reserves.
    #[error("kernel descriptor {symbol} (file offset {file_offset:#x}): field {field} has reserved value {value}")]
    DescriptorField {
        /// The `NAME.kd` symbol.
        symbol: String,
        /// File offset of the descriptor's first byte.
        file_offset: u64,
        /// The field, e.g. "compute_pgm_rsrc2.enable_vgpr_workitem_id".
        field: &'static str,
        /// The value found.
        value: u64,
    },
    /// A kernel's entry point (descriptor address + `kernel_code_entry_byte_offset`) lies
    /// outside every executable section.
    #[error("kernel descriptor {symbol} at {descriptor}: entry offset {offset} lands outside executable code")]
    EntryOutOfCode {
        /// The `NAME.kd` symbol.
        symbol: String,
        /// The descriptor's address.
        descriptor: VirtAddr,
        /// `kernel_code_entry_byte_offset`.
        offset: i64,
    },
    /// The `NT_AMDGPU_METADATA` note is not valid MessagePack.
    #[error("NT_AMDGPU_METADATA note at file offset {note_offset:#x}: invalid MessagePack: {detail}")]
    MetadataMsgpack {
        /// File offset of the note's section.
        note_offset: u64,
        /// The decoder's description.
        detail: String,
    },
    /// The metadata is MessagePack but a field is missing or of the wrong shape.
    #[error("NT_AMDGPU_METADATA: {location}: field {field}: {problem}")]
    MetadataField {
        /// Where in the metadata, e.g. `amdhsa.kernels[1] (saxpy)` or `amdhsa.kernels[0].args[2]`.
        location: String,
        /// The field name, e.g. ".value_kind".
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// A `PT_LOAD` program header's file range lies outside the file or is larger than
    /// its memory size.
    #[error("program header #{index} (PT_LOAD at {vaddr}): file range {offset:#x}+{file_size:#x} invalid (file is {file_len:#x} bytes, p_memsz {mem_size:#x})")]
    SegmentBounds {
        /// Index of the program header.
        index: usize,
        /// `p_vaddr`.
        vaddr: VirtAddr,
        /// `p_offset`.
        offset: u64,
        /// `p_filesz`.
        file_size: u64,
        /// `p_memsz`.
        mem_size: u64,
        /// Length of the whole file.
        file_len: u64,
    },
}

impl CodeObjectError {
    /// Wrap an error of the `object` crate with the name of what was being read.
    pub(crate) fn elf(what: &'static str, err: object::read::Error) -> Self {
        CodeObjectError::MalformedElf { what, detail: err.to_string() }
    }
}
