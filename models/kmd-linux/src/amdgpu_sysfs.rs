//! The amdgpu driver's device files, as rocm-smi (librocm_smi64) and other monitors
//! read them: the DRM class entries, the GPU's PCI device directory and its hwmon.
//!
//! Layout under the fake root, with the symlinks of a real machine (`BDF` is the GPU's
//! PCI address, `0000:03:00.0` for the first GPU; `BRIDGE` its upstream port):
//!
//! ```text
//! sys/class/drm/version                       "drm 1.1.0 20060810"
//! sys/class/drm/cardN     -> ../../devices/pci0000:00/BRIDGE/BDF/drm/cardN
//! sys/class/drm/renderDM  -> ../../devices/pci0000:00/BRIDGE/BDF/drm/renderDM
//! sys/devices/pci0000:00/BRIDGE/BDF/
//!     vendor device subsystem_vendor subsystem_device revision class
//!     product_name serial_number unique_id vbios_version
//!     mem_info_vram_total mem_info_vis_vram_total mem_info_gtt_total
//!     mem_info_vram_used mem_info_vis_vram_used       (live)
//!     gpu_busy_percent mem_busy_percent gpu_metrics   (live)
//!     pp_dpm_sclk pp_dpm_mclk power_dpm_force_performance_level
//!     current_link_speed current_link_width max_link_speed max_link_width
//!     drm/cardN/{dev,device -> ../../../BDF}  drm/renderDM/{dev,device -> ../../../BDF}
//!     hwmon/hwmon0/{name,device -> ../../../BDF, power1_*, temp*_*, in0_*}
//! ```
//!
//! N is the GPU's index, M its render minor. Only `/sys/class/drm` is redirected by
//! the interposer: paths reached through it resolve inside the fake root, while the
//! absolute `/sys/devices/pci0000:00/...` path stays the host's (redirecting it would
//! hide the host's PCI devices).
//!
//! Values: identity (ids, names, sizes, clocks) from the topology's [`GpuIdentity`];
//! live values ([`LiveValues`]) are rewritten by the driver as the simulation runs
//! (`kfd::live`); `gpu_metrics` is the binary table of [`crate::gpu_metrics`]. The
//! clocks are one DPM level each, the topology's engine and memory clocks, at which the
//! simulated GPU always runs. Power, temperature and voltage cannot be simulated: the
//! hwmon files hold the documented constants below, never measurements. Files the
//! simulator has no value for (fan, GTT use, RAS counters, firmware versions) are
//! absent, so monitors print "N/A" or "not supported" rather than an invented figure.

use std::io;
use std::path::Path;

use crate::gpu_metrics::GpuMetrics;
use crate::identity::{GpuIdentity, SystemIdentity, TargetDefaults, FIRST_RENDER_MINOR};

/// The DRM class directory under a root.
pub const DRM_CLASS_DIR: &str = "sys/class/drm";

/// Average power the hwmon reports, `power1_average` (microwatts): a constant (40 W),
/// not a measurement; power is not simulated.
pub const POWER_AVERAGE_UW: u64 = 40_000_000;

/// Temperatures the hwmon reports, `temp1_input` (edge), `temp2_input` (junction),
/// `temp3_input` (memory), in millidegrees Celsius: constants (35, 40 and 38 °C), not
/// measurements; temperature is not simulated.
pub const TEMPERATURES_MC: [(&str, u64); 3] = [("edge", 35_000), ("junction", 40_000), ("mem", 38_000)];

/// Critical temperatures of the same sensors (`temp#_crit`), in millidegrees Celsius.
pub const CRITICAL_TEMPERATURES_MC: [u64; 3] = [100_000, 110_000, 105_000];

/// The graphics voltage the hwmon reports, `in0_input` (millivolts): a constant, not a
/// measurement.
pub const VDDGFX_MV: u64 = 800;

/// What the driver updates while the simulation runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveValues {
    /// Bytes of VRAM allocated (every process's buffers).
    pub vram_used: u64,
    /// `gpu_busy_percent` (see `amdgpu::gpu::clock::GpuClock::busy_percent`).
    pub busy_percent: u32,
    /// Simulated time with a dispatch in flight so far, ps
    /// (`amdgpu::gpu::clock::GpuClock::busy_time`).
    pub busy_ps: u64,
    /// `mem_busy_percent` (`amdgpu::gpu::clock::GpuClock::memory_percent`).
    pub memory_percent: u32,
    /// The HBM's bytes so far as time at its peak bandwidth, ps
    /// (`amdgpu::gpu::clock::GpuClock::memory_busy_time`).
    pub memory_busy_ps: u64,
    /// The GPU's simulated time, ps (`amdgpu::gpu::clock::GpuClock::now`).
    pub now_ps: u64,
}

/// The GPU's PCI address, `DDDD:BB:DD.F`, from its KFD location.
pub fn pci_address(g: &GpuIdentity) -> String {
    let (bus, devfn) = ((g.location_id >> 8) & 0xff, g.location_id & 0xff);
    format!("{:04x}:{bus:02x}:{:02x}.{}", g.domain, devfn >> 3, devfn & 7)
}

/// The GPU's index (its card number): render minors start at 128.
pub fn card_index(g: &GpuIdentity) -> u32 {
    g.drm_render_minor.saturating_sub(FIRST_RENDER_MINOR)
}

/// The GPU's PCI device directory under a root.
pub fn device_dir(g: &GpuIdentity) -> String {
    let root = format!("{:04x}:00", g.domain);
    // Each GPU behind its own root port, as in a multi-GPU server.
    let bridge = format!("{root}:{:02x}.0", card_index(g) + 1);
    format!("sys/devices/pci{root}/{bridge}/{}", pci_address(g))
}

/// The files whose content never changes, by path relative to the device directory.
fn static_files(g: &GpuIdentity, host_mem_bytes: u64) -> Vec<(String, String)> {
    let d = TargetDefaults::of(g.target);
    let card = card_index(g);
    let minor = g.drm_render_minor;
    let mut files = vec![
        ("vendor", format!("{:#06x}", g.vendor_id)),
        ("device", format!("{:#06x}", g.device_id)),
        ("subsystem_vendor", format!("{:#06x}", g.vendor_id)),
        ("subsystem_device", format!("{:#06x}", d.subsystem_device_id)),
        ("revision", format!("{:#04x}", g.pci_revision)),
        ("class", "0x038000".to_string()),
        ("product_name", d.product_name.to_string()),
        ("serial_number", format!("{:016X}", g.unique_id)),
        ("unique_id", format!("{:016x}", g.unique_id)),
        // A part number of the usual form (`113-SKU-version`): rocm-smi derives the SKU
        // from its second field.
        ("vbios_version", "113-DOJO-001".to_string()),
        ("mem_info_vram_total", g.vram_bytes.to_string()),
        ("mem_info_vis_vram_total", g.vram_bytes.to_string()),
        ("mem_info_gtt_total", host_mem_bytes.to_string()),
        ("pp_dpm_sclk", format!("0: {}Mhz *", g.engine_clock_mhz)),
        ("pp_dpm_mclk", format!("0: {}Mhz *", g.memory_clock_mhz)),
        ("power_dpm_force_performance_level", "auto".to_string()),
        ("current_link_speed", format!("{}.0 GT/s PCIe", d.host_link_gts)),
        ("max_link_speed", format!("{}.0 GT/s PCIe", d.host_link_gts)),
        ("current_link_width", "16".to_string()),
        ("max_link_width", "16".to_string()),
        (&*format!("drm/card{card}/dev"), format!("226:{card}")),
        (&*format!("drm/renderD{minor}/dev"), format!("226:{minor}")),
        ("hwmon/hwmon0/name", "amdgpu".to_string()),
        ("hwmon/hwmon0/power1_average", POWER_AVERAGE_UW.to_string()),
        ("hwmon/hwmon0/in0_input", VDDGFX_MV.to_string()),
        ("hwmon/hwmon0/in0_label", "vddgfx".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), format!("{v}\n")))
    .collect::<Vec<_>>();
    let cap = (u64::from(d.board_power_w) * 1_000_000).to_string();
    for name in ["power1_cap", "power1_cap_max", "power1_cap_default"] {
        files.push((format!("hwmon/hwmon0/{name}"), format!("{cap}\n")));
    }
    files.push(("hwmon/hwmon0/power1_cap_min".into(), "0\n".into()));
    for (i, ((label, value), crit)) in TEMPERATURES_MC.iter().zip(CRITICAL_TEMPERATURES_MC).enumerate() {
        let n = i + 1;
        files.push((format!("hwmon/hwmon0/temp{n}_input"), format!("{value}\n")));
        files.push((format!("hwmon/hwmon0/temp{n}_label"), format!("{label}\n")));
        files.push((format!("hwmon/hwmon0/temp{n}_crit"), format!("{crit}\n")));
    }
    files
}

/// The live files of GPU `g` with `values`, by path relative to the device directory.
pub fn live_files(g: &GpuIdentity, values: &LiveValues) -> [(&'static str, Vec<u8>); 5] {
    [
        ("mem_info_vram_used", format!("{}\n", values.vram_used).into_bytes()),
        ("mem_info_vis_vram_used", format!("{}\n", values.vram_used).into_bytes()),
        ("gpu_busy_percent", format!("{}\n", values.busy_percent).into_bytes()),
        ("mem_busy_percent", format!("{}\n", values.memory_percent).into_bytes()),
        ("gpu_metrics", GpuMetrics::of(g, values).to_bytes()),
    ]
}

/// Replaces `path` with `text` atomically (a reader sees the old or the new content,
/// never a mix).
pub fn replace_file(path: &Path, text: impl AsRef<[u8]>) -> io::Result<()> {
    let Some(name) = path.file_name() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a file path"));
    };
    let mut tmp = path.to_path_buf();
    tmp.set_file_name(format!(".{}.{}", name.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Writes the device files of every GPU of `sys` under `root`, with idle live values.
/// An existing DRM class directory is replaced.
pub fn write_device_files(root: &Path, sys: &SystemIdentity) -> io::Result<()> {
    let class = root.join(DRM_CLASS_DIR);
    if class.exists() {
        std::fs::remove_dir_all(&class)?;
    }
    std::fs::create_dir_all(&class)?;
    std::fs::write(class.join("version"), "drm 1.1.0 20060810\n")?;
    for g in &sys.gpus {
        let dir = root.join(device_dir(g));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        let files = static_files(g, sys.cpu.mem_bytes)
            .into_iter()
            .map(|(k, v)| (k, v.into_bytes()))
            .chain(live_files(g, &LiveValues::default()).map(|(k, v)| (k.to_string(), v)));
        for (rel, text) in files {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        let bdf = pci_address(g);
        let card = format!("card{}", card_index(g));
        let render = format!("renderD{}", g.drm_render_minor);
        for node in [&card, &render] {
            std::os::unix::fs::symlink(format!("../../../{bdf}"), dir.join("drm").join(node).join("device"))?;
            std::os::unix::fs::symlink(format!("../../{}/drm/{node}", device_dir(g).trim_start_matches("sys/")), class.join(node))?;
        }
        std::os::unix::fs::symlink(format!("../../../{bdf}"), dir.join("hwmon/hwmon0/device"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_gpu_is_card0_at_its_kfd_location_and_reads_through_the_class_link() {
        let sys = SystemIdentity::of_default_topology();
        let g = &sys.gpus[0];
        assert_eq!(pci_address(g), "0000:03:00.0");
        assert_eq!(card_index(g), 0);
        let root = tempfile::tempdir().unwrap();
        write_device_files(root.path(), &sys).unwrap();
        let dev = root.path().join("sys/class/drm/card0/device");
        let read = |f: &str| std::fs::read_to_string(dev.join(f)).unwrap();
        assert_eq!(read("vendor"), "0x1002\n");
        assert_eq!(read("device"), "0x740f\n");
        assert_eq!(read("product_name"), "AMD Instinct MI210\n");
        assert_eq!(read("mem_info_vram_total"), format!("{}\n", g.vram_bytes));
        assert_eq!(read("mem_info_vram_used"), "0\n");
        assert_eq!(read("mem_busy_percent"), "0\n");
        assert_eq!(std::fs::read(dev.join("gpu_metrics")).unwrap().len(), crate::gpu_metrics::STRUCTURE_SIZE);
        assert_eq!(read("pp_dpm_sclk"), "0: 1700Mhz *\n");
        assert_eq!(read("hwmon/hwmon0/name"), "amdgpu\n");
        assert!(dev.join("drm/renderD128").is_dir());
        let link = std::fs::read_link(root.path().join("sys/class/drm/card0")).unwrap();
        assert_eq!(link.to_str().unwrap(), "../../devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/card0");
        // Written again (a second tree in the same root), still one consistent tree.
        write_device_files(root.path(), &sys).unwrap();
        replace_file(&dev.join("gpu_busy_percent"), "7\n").unwrap();
        assert_eq!(read("gpu_busy_percent"), "7\n");
    }
}
