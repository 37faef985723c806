//! Dynamic relocations (`.rela.dyn`) and placing a loaded image at a base address.
//!
//! A code object is linked at address 0. Loading it at `base` means copying the `PT_LOAD`
//! segments to `base + vaddr` and patching every dynamic relocation: ld.lld emits
//! `R_AMDGPU_RELATIVE64` for pointers to the object's own data (tables of global
//! pointers, for instance) and `R_AMDGPU_ABS64`/`R_AMDGPU_ABS32` for symbol references.

use object::elf;
use object::read::elf::{Rela, SectionHeader, SectionTable, Sym};
use object::LittleEndian;

use super::{CodeObjectError, VirtAddr};

/// `R_AMDGPU_ABS32`.
const R_AMDGPU_ABS32: u32 = 6;
/// `R_AMDGPU_ABS64`.
const R_AMDGPU_ABS64: u32 = 3;
/// `R_AMDGPU_RELATIVE64`.
const R_AMDGPU_RELATIVE64: u32 = 13;

/// What a dynamic relocation computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelocationKind {
    /// `R_AMDGPU_RELATIVE64`: 64-bit `base + addend`.
    Relative64,
    /// `R_AMDGPU_ABS64`: 64-bit `base + symbol + addend`.
    Abs64,
    /// `R_AMDGPU_ABS32`: 32-bit `base + symbol + addend`.
    Abs32,
    /// Any other `R_AMDGPU_*` type; [`super::CodeObject::load_image`] refuses it.
    Other(u32),
}

/// One dynamic relocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicRelocation {
    /// Address of the patched bytes.
    pub offset: VirtAddr,
    /// The relocation type.
    pub kind: RelocationKind,
    /// The referenced symbol's name, if any.
    pub symbol: Option<String>,
    /// The referenced symbol's address, if it is defined in this object.
    pub symbol_value: Option<VirtAddr>,
    /// `r_addend`.
    pub addend: i64,
}

/// Why a code object could not be laid out or relocated in memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The segments span more than [`super::MAX_FLAT_IMAGE_BYTES`].
    #[error("load segments span {span:#x} bytes, more than the {limit:#x}-byte limit")]
    TooLarge {
        /// Bytes from address 0 to the end of the last segment.
        span: u64,
        /// The limit.
        limit: u64,
    },
    /// A relocation patches bytes outside the image.
    #[error("relocation at {offset} ({kind:?}) patches bytes outside the {image_len:#x}-byte image")]
    OutOfImage {
        /// The relocation's address.
        offset: VirtAddr,
        /// Its type.
        kind: RelocationKind,
        /// The image length.
        image_len: u64,
    },
    /// A relocation type the loader does not implement.
    #[error("relocation at {offset}: unsupported type R_AMDGPU #{r_type}")]
    UnsupportedRelocation {
        /// The relocation's address.
        offset: VirtAddr,
        /// The raw `r_type`.
        r_type: u32,
    },
    /// A relocation refers to a symbol this object does not define.
    #[error("relocation at {offset}: symbol {symbol:?} is not defined in the code object")]
    UndefinedSymbol {
        /// The relocation's address.
        offset: VirtAddr,
        /// The symbol name ("" when the relocation names none).
        symbol: String,
    },
    /// An `R_AMDGPU_ABS32` value does not fit in 32 bits at this base address.
    #[error("relocation at {offset}: value {value:#x} does not fit in 32 bits")]
    Abs32Overflow {
        /// The relocation's address.
        offset: VirtAddr,
        /// The computed value.
        value: u64,
    },
}

/// Read every `SHT_RELA` section that is loaded (`SHF_ALLOC`), i.e. the dynamic ones.
pub(super) fn read_dynamic_relocations<'data>(
    sections: &SectionTable<'data, elf::FileHeader64<LittleEndian>, &'data [u8]>,
    data: &'data [u8],
) -> Result<Vec<DynamicRelocation>, CodeObjectError> {
    let endian = LittleEndian;
    let mut relocations = Vec::new();
    for section in sections.iter() {
        if section.sh_flags(endian).0 & elf::SHF_ALLOC.0 == 0 {
            continue;
        }
        let Some((entries, link)) =
            section.rela(endian, data).map_err(|err| CodeObjectError::elf("dynamic relocation section", err))?
        else {
            continue;
        };
        let symbols = if link.0 == 0 {
            None
        } else {
            Some(
                sections
                    .symbol_table_by_index(endian, data, link)
                    .map_err(|err| CodeObjectError::elf("dynamic relocation symbol table", err))?,
            )
        };
        for entry in entries {
            let r_type = entry.r_type(endian, false).0;
            let kind = match r_type {
                R_AMDGPU_RELATIVE64 => RelocationKind::Relative64,
                R_AMDGPU_ABS64 => RelocationKind::Abs64,
                R_AMDGPU_ABS32 => RelocationKind::Abs32,
                other => RelocationKind::Other(other),
            };
            let (mut symbol, mut symbol_value) = (None, None);
            if let (Some(index), Some(table)) = (entry.symbol(endian, false), symbols.as_ref()) {
                let sym = table.symbol(index).map_err(|err| CodeObjectError::elf("relocation symbol index", err))?;
                let name =
                    table.symbol_name(endian, sym).map_err(|err| CodeObjectError::elf("relocation symbol name", err))?;
                symbol = Some(String::from_utf8_lossy(name).into_owned());
                if !sym.is_undefined(endian) {
                    symbol_value = Some(VirtAddr(sym.st_value(endian)));
                }
            }
            relocations.push(DynamicRelocation {
                offset: VirtAddr(entry.r_offset(endian)),
                kind,
                symbol,
                symbol_value,
                addend: entry.r_addend(endian),
            });
        }
    }
    Ok(relocations)
}

/// Patch `image` (the flat image of a code object) for loading at `base`.
pub(super) fn apply(relocations: &[DynamicRelocation], image: &mut [u8], base: u64) -> Result<(), LoadError> {
    for relocation in relocations {
        let offset = relocation.offset;
        let symbol_address = || {
            relocation
                .symbol_value
                .map(|value| base.wrapping_add(value.0))
                .ok_or_else(|| LoadError::UndefinedSymbol { offset, symbol: relocation.symbol.clone().unwrap_or_default() })
        };
        let (value, width) = match relocation.kind {
            RelocationKind::Relative64 => (base.wrapping_add_signed(relocation.addend), 8),
            RelocationKind::Abs64 => (symbol_address()?.wrapping_add_signed(relocation.addend), 8),
            RelocationKind::Abs32 => {
                let value = symbol_address()?.wrapping_add_signed(relocation.addend);
                if u32::try_from(value).is_err() {
                    return Err(LoadError::Abs32Overflow { offset, value });
                }
                (value, 4)
            }
            RelocationKind::Other(r_type) => return Err(LoadError::UnsupportedRelocation { offset, r_type }),
        };
        let image_len = image.len() as u64;
        let target = usize::try_from(offset.0)
            .ok()
            .and_then(|start| Some(start..start.checked_add(width)?))
            .and_then(|range| image.get_mut(range))
            .ok_or(LoadError::OutOfImage { offset, kind: relocation.kind, image_len })?;
        target.copy_from_slice(&value.to_le_bytes()[..width]);
    }
    Ok(())
}
