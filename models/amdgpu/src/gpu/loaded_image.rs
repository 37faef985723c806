//! Kernel names of code objects a runtime loaded into GPU memory by itself (ROCR
//! copies a code object's loadable segments into device memory and hands the packet
//! processor only kernel-descriptor addresses). The loaded image starts with its ELF
//! header; its dynamic segment leads to the dynamic symbol table, whose `NAME.kd`
//! symbol names the descriptor. Everything read is bounds-checked: a corrupt image
//! gives no name, never a fault.

use crate::gpu::ids::GpuAddr;
use crate::gpu::memory::GpuMemory;

/// How far below a descriptor the image's ELF header is looked for.
const MAX_IMAGE_BYTES: u64 = 64 << 20;
/// Most symbols read.
const MAX_SYMBOLS: u64 = 1 << 16;
/// `EM_AMDGPU`.
const EM_AMDGPU: u16 = 224;

fn read<const N: usize>(mem: &GpuMemory, at: u64) -> Option<[u8; N]> {
    let mut b = [0u8; N];
    mem.read(GpuAddr(at), &mut b).ok()?;
    Some(b)
}

fn u16_at(mem: &GpuMemory, at: u64) -> Option<u16> {
    read::<2>(mem, at).map(u16::from_le_bytes)
}

fn u32_at(mem: &GpuMemory, at: u64) -> Option<u32> {
    read::<4>(mem, at).map(u32::from_le_bytes)
}

fn u64_at(mem: &GpuMemory, at: u64) -> Option<u64> {
    read::<8>(mem, at).map(u64::from_le_bytes)
}

/// The ELF header of the loaded image holding `descriptor`: the nearest page at or
/// below it, inside the same allocation, that starts an AMDGPU ELF.
fn image_base(mem: &GpuMemory, descriptor: GpuAddr) -> Option<u64> {
    let region = mem.region_of(descriptor)?;
    let lowest = region.start.max(descriptor.0.saturating_sub(MAX_IMAGE_BYTES));
    let mut page = descriptor.0 & !0xfff;
    while page >= lowest {
        if read::<4>(mem, page) == Some(*b"\x7fELF") && u16_at(mem, page + 18) == Some(EM_AMDGPU) {
            return Some(page);
        }
        page = page.checked_sub(0x1000)?;
    }
    None
}

/// The name of the kernel whose descriptor is at `descriptor`, from the loaded image's
/// dynamic symbols (`None` when there is no such image or symbol).
pub fn kernel_name(mem: &GpuMemory, descriptor: GpuAddr) -> Option<String> {
    let base = image_base(mem, descriptor)?;
    // Every offset below comes from the image: a corrupt one must not overflow.
    let at = |a: u64, b: u64| a.checked_add(b);
    let phoff = u64_at(mem, base + 32)?;
    let phentsize = u64::from(u16_at(mem, base + 54)?);
    let phnum = u64::from(u16_at(mem, base + 56)?);
    if phentsize < 56 || phnum > 64 {
        return None;
    }
    // PT_DYNAMIC.
    let dynamic = (0..phnum).filter_map(|i| at(at(base, phoff)?, i * phentsize)).find(|&ph| u32_at(mem, ph) == Some(2))?;
    let dyn_at = at(base, u64_at(mem, dynamic + 16)?)?;
    let dyn_size = u64_at(mem, dynamic + 40)?.min(4096);
    let (mut symtab, mut strtab, mut strsz, mut hash, mut syment) = (None, None, 0u64, None, 24u64);
    for i in 0..dyn_size / 16 {
        let tag = u64_at(mem, at(dyn_at, 16 * i)?)?;
        let val = u64_at(mem, at(dyn_at, 16 * i + 8)?)?;
        match tag {
            0 => break,
            4 => hash = Some(val),
            5 => strtab = Some(val),
            6 => symtab = Some(val),
            10 => strsz = val,
            11 => syment = val,
            _ => {}
        }
    }
    let (symtab, strtab, hash) = (at(base, symtab?)?, at(base, strtab?)?, at(base, hash?)?);
    if !(24..=4096).contains(&syment) {
        return None;
    }
    let nsyms = u64::from(u32_at(mem, at(hash, 4)?)?).min(MAX_SYMBOLS);
    let value = descriptor.0.checked_sub(base)?;
    for i in 0..nsyms {
        let sym = at(symtab, i * syment)?;
        if u64_at(mem, at(sym, 8)?)? != value {
            continue;
        }
        let name_off = u64::from(u32_at(mem, sym)?);
        if name_off >= strsz {
            continue;
        }
        let mut bytes = vec![0u8; (strsz - name_off).min(512) as usize];
        mem.read(GpuAddr(at(strtab, name_off)?), &mut bytes).ok()?;
        let end = bytes.iter().position(|&b| b == 0)?;
        let name = std::str::from_utf8(&bytes[..end]).ok()?;
        if let Some(kernel) = name.strip_suffix(".kd") {
            return Some(kernel.to_string());
        }
    }
    None
}
