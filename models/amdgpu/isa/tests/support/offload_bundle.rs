//! Clang offload bundles, read without external tools: the `.hip_fatbin` section of a
//! HIP library or host object, or the whole file `hipcc --cuda-device-only` writes.
//!
//! An uncompressed bundle (clang's `OffloadBundler`) is the magic
//! `__CLANG_OFFLOAD_BUNDLE__` (24 bytes), a little-endian u64 entry count, then per entry
//! a u64 offset (from the bundle's first byte), a u64 size, a u64 triple length and the
//! triple (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`, `host-x86_64-unknown-linux`).
//! A library's section holds one bundle per translation unit, back to back, each
//! followed by zero padding up to the next (rocSPARSE 5.3 has 111 of them in 1.3 GB).
//!
//! Compressed bundles (magic `CCOB`, written by ROCm 6 and later) are an error naming
//! what was found: Debian's ROCm 5.x does not compress, so meeting one means the input
//! changed and the reader must learn the format, not skip it.
//!
//! Only headers and the requested entries are read (positioned reads), never a whole
//! section: rocSPARSE's is larger than all of its gfx90a code objects together.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use object::{Object, ObjectSection};

const MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";

/// One entry of one bundle, located in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Index of the bundle in its region (0 for the first).
    pub bundle: usize,
    /// The entry's triple and target id.
    pub triple: String,
    /// Absolute file offset of the entry's bytes.
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
}

impl Entry {
    /// The processor of an offload triple (`gfx90a` for
    /// `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`), or `None` for a host entry.
    pub fn processor(&self) -> Option<&str> {
        let (_, target_id) = self.triple.split_once("--")?;
        target_id.split(':').next()
    }

    /// The entry's bytes.
    pub fn read(&self, file: &File) -> Result<Vec<u8>, String> {
        let len = usize::try_from(self.size).map_err(|_| format!("entry of {} bytes", self.size))?;
        let mut bytes = vec![0; len];
        file.read_exact_at(&mut bytes, self.offset).map_err(|e| format!("reading entry {}: {e}", self.triple))?;
        Ok(bytes)
    }
}

/// `(file offset, size)` of the `.hip_fatbin` section of the ELF file at `path`, or
/// `None` when it has none (a host-only library).
pub fn fatbin_section(path: &Path) -> Result<Option<(u64, u64)>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cache = object::read::ReadCache::new(file);
    let elf = object::File::parse(&cache).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(elf.section_by_name(".hip_fatbin").and_then(|section| section.file_range()))
}

fn u64_at(header: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(header.get(at..at + 8)?.try_into().ok()?))
}

fn read_at(file: &File, offset: u64, len: usize) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0; len];
    file.read_exact_at(&mut bytes, offset).map_err(|e| format!("reading {len} bytes at {offset:#x}: {e}"))?;
    Ok(bytes)
}

/// Parses one bundle header at `start`; returns its entries and where the bundle ends.
fn bundle_at(file: &File, index: usize, start: u64, end: u64) -> Result<(Vec<Entry>, u64), String> {
    let fixed = read_at(file, start, 32.min((end - start) as usize))?;
    if fixed.starts_with(COMPRESSED_MAGIC) {
        return Err(format!("compressed offload bundle (CCOB) at {start:#x}: not supported"));
    }
    if fixed.len() < 32 || &fixed[..24] != MAGIC {
        return Err(format!("no offload bundle magic at {start:#x}: {:02x?}", &fixed[..fixed.len().min(24)]));
    }
    let count = u64_at(&fixed, 24).unwrap_or(0);
    let mut entries = Vec::new();
    let mut cursor = start + 32;
    let mut bundle_end = cursor;
    for _ in 0..count {
        let head = read_at(file, cursor, 24)?;
        let (offset, size, triple_len) =
            (u64_at(&head, 0).unwrap_or(0), u64_at(&head, 8).unwrap_or(0), u64_at(&head, 16).unwrap_or(0));
        if triple_len > 4096 {
            return Err(format!("bundle at {start:#x}: triple of {triple_len} bytes"));
        }
        let triple = read_at(file, cursor + 24, triple_len as usize)?;
        cursor += 24 + triple_len;
        let triple = String::from_utf8(triple).map_err(|_| format!("bundle at {start:#x}: triple is not UTF-8"))?;
        let absolute = start.checked_add(offset).filter(|a| a.checked_add(size).is_some_and(|e| e <= end));
        let Some(absolute) = absolute else {
            return Err(format!("bundle at {start:#x}: entry {triple} ({offset:#x}+{size:#x}) leaves the region"));
        };
        bundle_end = bundle_end.max(absolute + size);
        entries.push(Entry { bundle: index, triple, offset: absolute, size });
    }
    Ok((entries, bundle_end.max(cursor)))
}

/// The first non-zero byte at or after `from` (before `end`), or `end`.
fn skip_padding(file: &File, mut from: u64, end: u64) -> Result<u64, String> {
    const CHUNK: u64 = 64 * 1024;
    while from < end {
        let chunk = read_at(file, from, CHUNK.min(end - from) as usize)?;
        if let Some(i) = chunk.iter().position(|&b| b != 0) {
            return Ok(from + i as u64);
        }
        from += chunk.len() as u64;
    }
    Ok(end)
}

/// Every entry of every bundle in `file[start..start + len]`: bundles back to back,
/// separated by zero padding only (anything else is an error).
pub fn entries(file: &File, start: u64, len: u64) -> Result<Vec<Entry>, String> {
    let end = start.checked_add(len).ok_or("region overflows")?;
    let mut out = Vec::new();
    let mut at = skip_padding(file, start, end)?;
    let mut index = 0;
    while at < end {
        let (found, bundle_end) = bundle_at(file, index, at, end)?;
        out.extend(found);
        index += 1;
        at = skip_padding(file, bundle_end, end)?;
    }
    Ok(out)
}
