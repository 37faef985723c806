//! The mmaps of the device files: buffers through the render node (the same pages the
//! simulator reads), the doorbell page and the MMIO page through the KFD file; and the
//! DRM ioctls libdrm uses to identify the device.

use std::ffi::c_void;

use rustix::mm::{MapFlags, ProtFlags};

use crate::backend::Errno;
use crate::kfd::abi::{self, drm, mmap, DOORBELL_PAGE_BYTES};
use crate::kfd::backing::PAGE;
use crate::kfd::user::UserMemory;
use crate::kfd::{lock, BoMemory, Kfd, RENDER_MMAP_BASE};

/// The DRM interface version the render node reports (amdgpu 3.x).
const DRM_VERSION: (i32, i32, i32) = (3, 49, 0);

/// `PROT_*` bits as rustix flags.
pub(crate) fn prot_of(prot: i32) -> ProtFlags {
    ProtFlags::from_bits_truncate(prot as u32)
}

/// `mmap` flags the application passed, keeping the ones that matter for a device
/// mapping (fixed placement and its no-replace variant).
pub(crate) fn placement(flags: i32) -> MapFlags {
    let mut f = MapFlags::SHARED;
    if flags & libc::MAP_FIXED != 0 {
        f |= MapFlags::FIXED;
    }
    if flags & libc::MAP_FIXED_NOREPLACE != 0 {
        f |= MapFlags::FIXED_NOREPLACE;
    }
    f
}

impl Kfd {
    /// An mmap of the render node: a VRAM or GTT buffer, by the offset ALLOC returned.
    ///
    /// # Safety
    /// With `MAP_FIXED`, replaces the application's mapping at `addr`, as mmap does.
    pub unsafe fn render_mmap(
        &self,
        addr: *mut c_void,
        len: usize,
        prot: i32,
        flags: i32,
        offset: u64,
    ) -> Result<*mut c_void, Errno> {
        let off = self.render_range(len, offset)?;
        // SAFETY: maps a range of our backing file that belongs to a live buffer; the
        // placement is the application's request.
        unsafe {
            rustix::mm::mmap(
                addr,
                len,
                prot_of(prot),
                placement(flags),
                self.backing_fd_borrowed(),
                off,
            )
        }
    }

    /// An mmap of the KFD file: the doorbell page or the MMIO page of a GPU.
    ///
    /// # Safety
    /// With `MAP_FIXED`, replaces the application's mapping at `addr`, as mmap does.
    pub unsafe fn kfd_mmap(
        &self,
        addr: *mut c_void,
        len: usize,
        prot: i32,
        flags: i32,
        offset: u64,
    ) -> Result<*mut c_void, Errno> {
        let g = self.kfd_mapping_check(len, offset)?;
        let anon = MapFlags::from_bits_retain(placement(flags).bits()) | MapFlags::SHARED;
        // SAFETY: a fresh anonymous shared page at the application's placement. (The
        // MMIO page is the HDP flush page: simulated memory is coherent with the host,
        // so writes there have nothing to flush.)
        let p = unsafe { rustix::mm::mmap_anonymous(addr, len, prot_of(prot), anon) }?;
        if offset & mmap::TYPE_MASK == mmap::TYPE_DOORBELL {
            self.watch_doorbells(g, p as usize, len)?;
        }
        Ok(p)
    }

    /// The offset in the buffer file of a render-node mapping of `len` bytes at mmap
    /// offset `offset`: it must lie inside one live VRAM or GTT buffer.
    fn render_range(&self, len: usize, offset: u64) -> Result<u64, Errno> {
        let off = offset.checked_sub(RENDER_MMAP_BASE).ok_or(Errno::INVAL)?;
        let bos = lock(&self.bos);
        let fits = bos.by_handle.values().any(|b| match b.memory {
            BoMemory::Vram(o) | BoMemory::Gtt(o) => off >= o && off.checked_add(len as u64).is_some_and(|e| e <= o + b.size),
            _ => false,
        });
        if !fits || len == 0 {
            return Err(Errno::INVAL);
        }
        Ok(off)
    }

    /// Daemon mode: what the client maps for a render-node mmap of `len` bytes at
    /// offset `offset`: this process's buffer file at the returned offset.
    pub fn render_share(&self, len: usize, offset: u64) -> Result<(std::os::fd::BorrowedFd<'_>, u64), Errno> {
        Ok((self.backing.fd(), self.render_range(len, offset)?))
    }

    /// Checks a mapping of the KFD file (a doorbell or MMIO page; in daemon mode the
    /// client makes it of its own anonymous memory); returns the GPU index.
    pub fn kfd_mapping_check(&self, len: usize, offset: u64) -> Result<usize, Errno> {
        let gpu_id = ((offset & mmap::GPU_ID_MASK) >> mmap::GPU_ID_SHIFT) as u32;
        let g = self.gpu_index(gpu_id)?;
        let ok = match offset & mmap::TYPE_MASK {
            mmap::TYPE_DOORBELL => len as u64 == DOORBELL_PAGE_BYTES && offset & !(mmap::TYPE_MASK | mmap::GPU_ID_MASK) == 0,
            mmap::TYPE_MMIO => len as u64 == PAGE,
            _ => {
                self.warn_once(format!("mmap of /dev/kfd at offset {offset:#x}: only doorbell and MMIO pages are mapped there"));
                false
            }
        };
        if ok {
            Ok(g)
        } else {
            Err(Errno::INVAL)
        }
    }

    fn backing_fd_borrowed(&self) -> std::os::fd::BorrowedFd<'_> {
        self.backing.fd()
    }

    /// Forgets device mappings and SVM ranges in `[addr, addr + len)` the application
    /// unmaps (or maps something else over).
    pub fn unmapping(&self, addr: usize, len: usize) {
        self.svm_unmapping(addr, len);
        let end = addr.saturating_add(len);
        let mut doorbells = lock(&self.doorbells);
        let gone: Vec<usize> = doorbells
            .iter()
            .filter(|(_, &(a, l, _))| a < end && addr < a + l)
            .map(|(&g, _)| g)
            .collect();
        for g in gone {
            if let Some((_, _, watch)) = doorbells.remove(&g) {
                self.unwatch_doorbells(watch);
            }
        }
    }

    /// A DRM ioctl on the render node: the version and the amdgpu queries libdrm makes
    /// when it initializes a device.
    pub fn drm_ioctl(
        &self,
        request: u64,
        arg: u64,
        minor: u32,
        user: &impl UserMemory,
    ) -> Result<i32, Errno> {
        let r = abi::Request::decode(request);
        if r.ty != abi::DRM_TYPE {
            return Err(Errno::NOTTY);
        }
        let gpu = self
            .system()
            .gpus
            .iter()
            .position(|g| g.drm_render_minor == minor)
            .ok_or(Errno::NODEV)?;
        match r.nr {
            drm::NR_VERSION if r.size == size_of::<drm::Version>() => {
                let mut v: drm::Version = user.read_value(arg)?;
                v.version_major = DRM_VERSION.0;
                v.version_minor = DRM_VERSION.1;
                v.version_patchlevel = DRM_VERSION.2;
                let put = |ptr: u64, cap: u64, text: &[u8]| -> Result<u64, Errno> {
                    if ptr != 0 && cap > 0 {
                        let n = (cap as usize).min(text.len());
                        user.write(ptr, &text[..n])?;
                    }
                    Ok(text.len() as u64)
                };
                v.name_len = put(v.name, v.name_len, b"amdgpu")?;
                v.date_len = put(v.date, v.date_len, b"20150101")?;
                v.desc_len = put(v.desc, v.desc_len, b"AMD GPU (simulated by dojo)")?;
                user.write(arg, bytemuck::bytes_of(&v))?;
                Ok(0)
            }
            drm::NR_GET_CLIENT if r.size == size_of::<drm::Client>() => {
                let mut c: drm::Client = user.read_value(arg)?;
                if c.idx != 0 {
                    return Err(Errno::INVAL);
                }
                // The only client of the node is this process, authenticated.
                c.auth = 1;
                c.pid = u64::from(std::process::id());
                // SAFETY: getuid cannot fail.
                c.uid = u64::from(unsafe { libc::getuid() });
                c.magic = 0;
                c.iocs = 0;
                user.write(arg, bytemuck::bytes_of(&c))?;
                Ok(0)
            }
            n if n == drm::COMMAND_BASE + drm::AMDGPU_INFO => {
                let q: drm::AmdgpuInfo = user.read_value(arg)?;
                self.amdgpu_info(gpu, &q, user)
            }
            other => {
                self.warn_once(format!("DRM ioctl {other:#04x} ({request:#x}) on the render node is not supported by the simulated driver"));
                Err(Errno::INVAL)
            }
        }
    }

    fn amdgpu_info(
        &self,
        gpu: usize,
        q: &drm::AmdgpuInfo,
        user: &impl UserMemory,
    ) -> Result<i32, Errno> {
        let id = &self.system().gpus[gpu];
        let out = |bytes: &[u8]| -> Result<i32, Errno> {
            let n = (q.return_size as usize).min(bytes.len());
            user.write(q.return_pointer, &bytes[..n])?;
            Ok(0)
        };
        match q.query {
            drm::query::ACCEL_WORKING => out(&1u32.to_le_bytes()),
            drm::query::DEV_INFO => {
                // struct drm_amdgpu_info_device: the leading fields libdrm reads for
                // identity (device id, chip revision, family, clocks, CU layout).
                let mut words = [0u32; 96];
                words[0] = id.device_id;
                words[1] = 0; // chip_rev
                words[2] = 0; // external_rev
                words[3] = id.pci_revision;
                words[4] = id.family_id;
                words[5] = id.shader_engines_per_xcd * id.xcc_count;
                out(bytemuck::cast_slice(&words))
            }
            drm::query::READ_MMR_REG => out(&vec![0u8; q.return_size as usize]),
            drm::query::FW_VERSION => out(&[0u8; 8]),
            other => {
                self.warn_once(format!(
                    "AMDGPU_INFO query {other:#x} is not supported by the simulated driver"
                ));
                Err(Errno::INVAL)
            }
        }
    }
}
