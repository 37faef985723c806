//! The application's virtual memory areas, as the kernel's `vma_lookup` sees them: what
//! the SVM code checks ranges against (a range must lie in mapped memory; a GPU mapping
//! is read-only where the CPU's is). Local mode reads them from `/proc/self/maps`.

use crate::backend::Errno;
use crate::kfd::backing::MEMFD_NAME;

/// What backs a [`Vma`], as far as the driver cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    /// The initial heap (`[heap]`).
    Heap,
    /// The initial stack (`[stack]`).
    Stack,
    /// A device mapping (the real driver's `VM_IO | VM_PFNMAP` buffer mappings: here the
    /// buffer store's memfd).
    Device,
    /// Anything else: anonymous memory, files.
    Other,
}

/// One virtual memory area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vma {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Readable (on x86 every writable mapping is).
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// What backs it.
    pub kind: VmaKind,
}


/// Parses one `/proc/<pid>/maps` line (`start-end perms offset dev inode [path]`).
fn parse_line(line: &str) -> Option<Vma> {
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?.as_bytes();
    let path = fields.nth(3).unwrap_or("").trim_start();
    let kind = match path {
        "[heap]" => VmaKind::Heap,
        "[stack]" => VmaKind::Stack,
        p if p.strip_prefix("/memfd:").is_some_and(|name| name.starts_with(MEMFD_NAME)) => VmaKind::Device,
        _ => VmaKind::Other,
    };
    let write = perms.get(1) == Some(&b'w');
    Some(Vma {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        read: perms.first() == Some(&b'r') || write,
        write,
        kind,
    })
}

/// The areas of this process that overlap `[start, end)`, in address order.
pub fn own_mappings(start: u64, end: u64) -> Result<Vec<Vma>, Errno> {
    let text = std::fs::read_to_string("/proc/self/maps").map_err(|_| Errno::NOMEM)?;
    Ok(text
        .lines()
        .filter_map(parse_line)
        .filter(|v| v.start < end && start < v.end)
        .collect())
}

/// Checks that `vmas` (in address order) cover `[start, end)` without a gap or a device
/// area: the real driver's `svm_range_is_valid` (`EFAULT` otherwise).
pub fn check_covered(vmas: &[Vma], start: u64, end: u64) -> Result<(), Errno> {
    let mut at = start;
    for v in vmas {
        if v.end <= at || v.start >= end {
            continue;
        }
        if v.start > at || v.kind == VmaKind::Device {
            return Err(Errno::FAULT);
        }
        at = v.end;
        if at >= end {
            return Ok(());
        }
    }
    if at >= end {
        Ok(())
    } else {
        Err(Errno::FAULT)
    }
}

/// The area holding `addr`.
pub fn find(vmas: &[Vma], addr: u64) -> Option<&Vma> {
    vmas.iter().find(|v| v.start <= addr && addr < v.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_coverage_is_checked() {
        let heap = parse_line("55d0c000-55d2d000 rw-p 00000000 00:00 0                          [heap]").unwrap();
        assert_eq!((heap.start, heap.end, heap.read, heap.write, heap.kind), (0x55d0_c000, 0x55d2_d000, true, true, VmaKind::Heap));
        let ro = parse_line("7f00-8f00 r--p 00001000 08:01 1234 /usr/lib/libc.so.6").unwrap();
        assert!(ro.read && !ro.write && ro.kind == VmaKind::Other);
        let none = parse_line("9000-a000 ---p 00000000 00:00 0").unwrap();
        assert!(!none.read && !none.write);
        let dev = parse_line("a000-b000 rw-s 00000000 00:01 77 /memfd:dojo-gpu-buffers (deleted)").unwrap();
        assert_eq!(dev.kind, VmaKind::Device);
        let v = [none, dev];
        assert_eq!(check_covered(&v, 0x9000, 0xa000), Ok(()));
        assert_eq!(check_covered(&v, 0x9000, 0xa800), Err(Errno::FAULT), "device area");
        assert_eq!(check_covered(&v, 0x8000, 0x9800), Err(Errno::FAULT), "gap");
        assert_eq!(check_covered(&v[..1], 0x9000, 0xb000), Err(Errno::FAULT), "runs past the end");
    }

    #[test]
    fn this_process_has_its_stack_mapped() {
        let local = 0u64;
        let at = &local as *const u64 as u64;
        let vmas = own_mappings(at, at + 1).unwrap();
        assert_eq!(vmas.len(), 1);
        assert!(vmas[0].write);
        assert_eq!(check_covered(&vmas, at & !4095, (at & !4095) + 4096), Ok(()));
    }
}
