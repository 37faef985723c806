//! Reading the ELF container into a [`CodeObject`] (uses the `object` crate's ELF reader).

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader, SectionTable, Sym, SymbolTable};
use object::LittleEndian;

use super::descriptor::{KernelDescriptor, KERNEL_DESCRIPTOR_SIZE};
use super::metadata::{Metadata, NT_AMDGPU_METADATA};
use super::target::{CodeObjectVersion, TargetFlags, ELFOSABI_AMDGPU_HSA, EM_AMDGPU};
use super::{
    CodeObject, CodeObjectError, Kernel, LoadSegment, Symbol, SymbolBinding, SymbolKind, TextSection, VirtAddr,
};

type Header = elf::FileHeader64<LittleEndian>;
type Sections<'data> = SectionTable<'data, Header, &'data [u8]>;

const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
const KD_SUFFIX: &str = ".kd";

pub(super) fn parse(data: &[u8]) -> Result<CodeObject, CodeObjectError> {
    check_ident(data)?;
    let header = Header::parse(data).map_err(|err| CodeObjectError::elf("file header", err))?;
    let endian = LittleEndian;
    let ident = header.e_ident();
    if ident.os_abi.0 != ELFOSABI_AMDGPU_HSA {
        return Err(CodeObjectError::WrongOsAbi { os_abi: ident.os_abi.0 });
    }
    let machine = header.e_machine(endian).0;
    if machine != EM_AMDGPU {
        return Err(CodeObjectError::WrongMachine { machine });
    }
    let version = CodeObjectVersion::from_abi_version(ident.abi_version)
        .ok_or(CodeObjectError::UnsupportedVersion { abi_version: ident.abi_version })?;
    let flags = TargetFlags::from_e_flags(header.e_flags(endian).0);

    let sections = header.sections(endian, data).map_err(|err| CodeObjectError::elf("section headers", err))?;
    let text = read_text(&sections, data)?;
    let metadata = read_metadata(&sections, data)?;
    let (symbols, raw_symbols) = read_symbols(&sections, data)?;
    let kernels = read_kernels(&sections, data, &raw_symbols, metadata.as_ref())?;
    let segments = read_segments(header, data)?;
    let relocations = super::relocation::read_dynamic_relocations(&sections, data)?;
    Ok(CodeObject { flags, version, text, symbols, kernels, metadata, segments, relocations })
}

fn check_ident(data: &[u8]) -> Result<(), CodeObjectError> {
    let Some(ident) = data.get(..16) else {
        return Err(CodeObjectError::MalformedElf {
            what: "file header",
            detail: format!("file is {} bytes, shorter than e_ident", data.len()),
        });
    };
    if ident[..4] != ELF_MAGIC {
        return Err(CodeObjectError::MalformedElf { what: "file header", detail: "no ELF magic".to_string() });
    }
    let (class, data_encoding) = (ident[4], ident[5]);
    if class != elf::ELFCLASS64.0 || data_encoding != elf::ELFDATA2LSB.0 {
        return Err(CodeObjectError::NotElf64Le { class, data: data_encoding });
    }
    Ok(())
}

fn section_name<'data>(sections: &Sections<'data>, section: &'data elf::SectionHeader64<LittleEndian>) -> &'data [u8] {
    // A name outside the string table is treated as no name: such a section is never one
    // we look for by name.
    sections.section_name(LittleEndian, section).unwrap_or(&[])
}

fn read_text(sections: &Sections<'_>, data: &[u8]) -> Result<TextSection, CodeObjectError> {
    let section = sections
        .iter()
        .find(|section| section_name(sections, section) == b".text")
        .ok_or(CodeObjectError::MissingSection { name: ".text" })?;
    let bytes = section.data(LittleEndian, data).map_err(|err| CodeObjectError::elf(".text contents", err))?;
    Ok(TextSection { address: VirtAddr(section.sh_addr(LittleEndian)), bytes: bytes.to_vec() })
}

fn read_metadata(sections: &Sections<'_>, data: &[u8]) -> Result<Option<Metadata>, CodeObjectError> {
    for section in sections.iter() {
        let Some(mut notes) =
            section.notes(LittleEndian, data).map_err(|err| CodeObjectError::elf("note section", err))?
        else {
            continue;
        };
        while let Some(note) = notes.next().map_err(|err| CodeObjectError::elf("note entry", err))? {
            if note.name() == b"AMDGPU" && note.n_type(LittleEndian).0 == NT_AMDGPU_METADATA {
                return Metadata::decode(note.desc(), section.sh_offset(LittleEndian)).map(Some);
            }
        }
    }
    Ok(None)
}

/// A symbol as read, plus what kernel lookup needs beyond [`Symbol`].
struct RawSymbol {
    symbol: Symbol,
    section: Option<usize>,
}

fn read_symbols(sections: &Sections<'_>, data: &[u8]) -> Result<(Vec<Symbol>, Vec<RawSymbol>), CodeObjectError> {
    let endian = LittleEndian;
    let mut table_name = ".symtab";
    let mut table: SymbolTable<'_, Header, &[u8]> =
        sections.symbols(endian, data, elf::SHT_SYMTAB).map_err(|err| CodeObjectError::elf(".symtab", err))?;
    if table.is_empty() {
        table_name = ".dynsym";
        table =
            sections.symbols(endian, data, elf::SHT_DYNSYM).map_err(|err| CodeObjectError::elf(".dynsym", err))?;
    }
    let mut raw = Vec::new();
    for (index, sym) in table.enumerate().skip(1) {
        let name_bytes = table.symbol_name(endian, sym).map_err(|err| CodeObjectError::elf("symbol name", err))?;
        if name_bytes.is_empty() {
            continue;
        }
        let name = std::str::from_utf8(name_bytes)
            .map_err(|_| CodeObjectError::SymbolName { table: table_name, index: index.0 })?
            .to_string();
        let section = table
            .symbol_section(endian, sym, index)
            .map_err(|err| CodeObjectError::elf("symbol section index", err))?
            .map(|section| section.0);
        let kind = match sym.st_type() {
            elf::STT_NOTYPE => SymbolKind::NoType,
            elf::STT_OBJECT => SymbolKind::Object,
            elf::STT_FUNC => SymbolKind::Function,
            elf::STT_SECTION => SymbolKind::Section,
            elf::STT_FILE => SymbolKind::File,
            other => SymbolKind::Other(other.0),
        };
        let binding = match sym.st_bind() {
            elf::STB_LOCAL => SymbolBinding::Local,
            elf::STB_GLOBAL => SymbolBinding::Global,
            elf::STB_WEAK => SymbolBinding::Weak,
            other => SymbolBinding::Other(other.0),
        };
        let symbol =
            Symbol { name, value: VirtAddr(sym.st_value(endian)), size: sym.st_size(endian), kind, binding };
        raw.push(RawSymbol { symbol, section });
    }
    let symbols = raw.iter().map(|raw| raw.symbol.clone()).collect();
    Ok((symbols, raw))
}

fn read_kernels(
    sections: &Sections<'_>,
    data: &[u8],
    symbols: &[RawSymbol],
    metadata: Option<&Metadata>,
) -> Result<Vec<Kernel>, CodeObjectError> {
    let mut kernels = Vec::new();
    for raw in symbols {
        let symbol = &raw.symbol;
        let Some(name) = symbol.name.strip_suffix(KD_SUFFIX) else { continue };
        if symbol.kind != SymbolKind::Object {
            continue;
        }
        if symbol.size != KERNEL_DESCRIPTOR_SIZE as u64 {
            return Err(CodeObjectError::DescriptorSize { symbol: symbol.name.clone(), size: symbol.size });
        }
        let out_of_bounds = || CodeObjectError::DescriptorOutOfBounds {
            symbol: symbol.name.clone(),
            address: symbol.value,
            section: raw.section.unwrap_or(0),
        };
        let section_index = raw.section.ok_or_else(out_of_bounds)?;
        let section = sections.section(object::SectionIndex(section_index)).map_err(|_| out_of_bounds())?;
        let contents = section.data(LittleEndian, data).map_err(|_| out_of_bounds())?;
        let start = symbol.value.0.checked_sub(section.sh_addr(LittleEndian)).ok_or_else(out_of_bounds)?;
        let start = usize::try_from(start).map_err(|_| out_of_bounds())?;
        let end = start.checked_add(KERNEL_DESCRIPTOR_SIZE).ok_or_else(out_of_bounds)?;
        let bytes: &[u8; KERNEL_DESCRIPTOR_SIZE] =
            contents.get(start..end).and_then(|slice| slice.try_into().ok()).ok_or_else(out_of_bounds)?;
        let file_offset = section.sh_offset(LittleEndian).saturating_add(start as u64);
        let descriptor = KernelDescriptor::decode(bytes).map_err(|reserved| CodeObjectError::DescriptorField {
            symbol: symbol.name.clone(),
            file_offset,
            field: reserved.field,
            value: reserved.value,
        })?;
        let offset = descriptor.kernel_code_entry_byte_offset;
        let entry = symbol
            .value
            .checked_offset(offset)
            .filter(|entry| is_executable_address(sections, *entry))
            .ok_or_else(|| CodeObjectError::EntryOutOfCode {
                symbol: symbol.name.clone(),
                descriptor: symbol.value,
                offset,
            })?;
        let kernel_metadata =
            metadata.and_then(|metadata| metadata.kernels.iter().find(|kernel| kernel.symbol == symbol.name)).cloned();
        kernels.push(Kernel {
            name: name.to_string(),
            descriptor_symbol: symbol.name.clone(),
            descriptor_address: symbol.value,
            entry,
            descriptor,
            metadata: kernel_metadata,
        });
    }
    Ok(kernels)
}

fn is_executable_address(sections: &Sections<'_>, address: VirtAddr) -> bool {
    sections.iter().any(|section| {
        let flags = section.sh_flags(LittleEndian);
        let start = section.sh_addr(LittleEndian);
        let size = section.sh_size(LittleEndian);
        flags.0 & elf::SHF_EXECINSTR.0 != 0
            && address.0 >= start
            && address.0 - start < size
    })
}

fn read_segments(header: &Header, data: &[u8]) -> Result<Vec<LoadSegment>, CodeObjectError> {
    let endian = LittleEndian;
    let headers =
        header.program_headers(endian, data).map_err(|err| CodeObjectError::elf("program headers", err))?;
    let mut segments = Vec::new();
    for (index, program_header) in headers.iter().enumerate() {
        if program_header.p_type(endian) != elf::PT_LOAD {
            continue;
        }
        let vaddr = program_header.p_vaddr(endian);
        let offset = program_header.p_offset(endian);
        let file_size = program_header.p_filesz(endian);
        let mem_size = program_header.p_memsz(endian);
        let bounds_error = || CodeObjectError::SegmentBounds {
            index,
            vaddr: VirtAddr(vaddr),
            offset,
            file_size,
            mem_size,
            file_len: data.len() as u64,
        };
        if file_size > mem_size || vaddr.checked_add(mem_size).is_none() {
            return Err(bounds_error());
        }
        let file_bytes = program_header.data(endian, data).map_err(|_| bounds_error())?;
        let flags = program_header.p_flags(endian);
        segments.push(LoadSegment {
            vaddr: VirtAddr(vaddr),
            file_bytes: file_bytes.to_vec(),
            mem_size,
            align: program_header.p_align(endian),
            readable: flags.0 & elf::PF_R.0 != 0,
            writable: flags.0 & elf::PF_W.0 != 0,
            executable: flags.0 & elf::PF_X.0 != 0,
        });
    }
    Ok(segments)
}
