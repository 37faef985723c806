//! The KFD topology tree (sysfs) and `/proc/modules`, as the amdgpu driver exposes
//! them and ROCm's libhsakmt reads them.
//!
//! Layout (`topology/` is `sys/devices/virtual/kfd/kfd/topology`, also reached as
//! `sys/class/kfd/kfd/topology` through the `sys/class/kfd/kfd` symlink, as on Linux):
//!
//! ```text
//! topology/generation_id              "1\n"
//! topology/system_properties          platform_oem / platform_id / platform_rev
//! topology/nodes/N/{gpu_id,name,properties}
//! topology/nodes/N/mem_banks/M/{properties,used_memory}
//! topology/nodes/N/caches/M/properties
//! topology/nodes/N/io_links/M/properties
//! topology/nodes/N/p2p_links/M/properties
//! ```
//!
//! Every `properties` file is `key value\n` lines (decimal) in the driver's order and
//! stays below one page, as libhsakmt reads one page. Node 0 is the CPU (gpu_id 0, no
//! caches: libhsakmt reads the host's CPU caches from /sys/devices/system/node), nodes
//! 1.. the GPUs, each with one VRAM bank, its caches as the driver lists them (vector L1
//! per CU, scalar L1 and instruction cache per CU pair, one L2 entry, one memory-side
//! cache entry) and a PCIe link to the CPU, then an XGMI io link to each GPU its
//! `amdgpu.xgmi` block is linked to (one hive: the same `hive_id`); GPUs reach the
//! other GPUs through p2p links (PCIe, through the CPU).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::identity::{CacheGeometry, CpuIdentity, GpuIdentity, SystemIdentity};

/// Path of the topology directory under a root, as the driver creates it.
pub const TOPOLOGY_DIR: &str = "sys/devices/virtual/kfd/kfd/topology";

/// Path of the class symlink under a root (points at `sys/devices/virtual/kfd/kfd`).
pub const CLASS_LINK: &str = "sys/class/kfd/kfd";

/// `HSA_CACHE_TYPE_*` bits of a cache entry's `type`.
pub mod cache_type {
    /// Holds data.
    pub const DATA: u32 = 1;
    /// Holds instructions.
    pub const INSTRUCTION: u32 = 2;
    /// A CPU cache.
    pub const CPU: u32 = 4;
    /// A cache of HSA compute units (what ROCR looks for on GPU nodes).
    pub const HSACU: u32 = 8;
}

/// `HSA_MEM_HEAP_TYPE_*` of memory banks.
pub mod heap_type {
    /// System memory.
    pub const SYSTEM: u32 = 0;
    /// Host-visible device memory (large BAR).
    pub const FB_PUBLIC: u32 = 1;
}

/// `HSA_IOLINK_TYPE_*` and `HSA_IOLINK_FLAGS_*` of io links.
pub mod iolink {
    /// PCI Express.
    pub const TYPE_PCIEXPRESS: u32 = 2;
    /// XGMI.
    pub const TYPE_XGMI: u32 = 11;
    /// The link is enabled.
    pub const FLAGS_ENABLED: u32 = 1;
    /// Accesses over the link are not coherent.
    pub const FLAGS_NON_COHERENT: u32 = 2;
    /// Weight of a direct PCIe link (libhsakmt treats <= 20 as direct).
    pub const WEIGHT_PCIE: u32 = 20;
    /// Weight of a one-hop XGMI link (the driver's `KFD_CRAT_XGMI_WEIGHT`).
    pub const WEIGHT_XGMI: u32 = 15;
}

/// Builder of one `properties` file.
struct Props(String);

impl Props {
    fn new() -> Props {
        Props(String::new())
    }
    fn kv(&mut self, key: &str, value: impl Into<u64>) -> &mut Props {
        // Writing into a String cannot fail.
        let _ = writeln!(self.0, "{key} {}", value.into());
        self
    }
    fn done(&mut self) -> String {
        std::mem::take(&mut self.0)
    }
}

/// One io link or p2p link.
struct Link {
    kind: u32,
    from: u32,
    to: u32,
    weight: u32,
    min_bandwidth: u32,
    max_bandwidth: u32,
    sdma_mask: u32,
    flags: u32,
}

fn link_properties(l: &Link) -> String {
    Props::new()
        .kv("type", l.kind)
        .kv("version_major", 0u32)
        .kv("version_minor", 0u32)
        .kv("node_from", l.from)
        .kv("node_to", l.to)
        .kv("weight", l.weight)
        .kv("min_latency", 0u32)
        .kv("max_latency", 0u32)
        .kv("min_bandwidth", l.min_bandwidth)
        .kv("max_bandwidth", l.max_bandwidth)
        .kv("recommended_transfer_size", 0u32)
        .kv("recommended_sdma_engine_id_mask", l.sdma_mask)
        .kv("flags", l.flags)
        .done()
}

fn sdma_mask(g: &GpuIdentity) -> u32 {
    (1u32 << g.num_sdma_engines.min(31)) - 1
}

fn host_link(g: &GpuIdentity, from: u32, to: u32, flags: u32) -> Link {
    Link {
        kind: iolink::TYPE_PCIEXPRESS,
        from,
        to,
        weight: iolink::WEIGHT_PCIE,
        min_bandwidth: 312,
        max_bandwidth: g.host_link_max_bandwidth,
        sdma_mask: sdma_mask(g),
        flags,
    }
}

fn cpu_node_properties(cpu: &CpuIdentity, io_links: u32) -> String {
    let mut p = Props::new();
    p.kv("cpu_cores_count", cpu.cores)
        .kv("simd_count", 0u32)
        .kv("mem_banks_count", 1u32)
        .kv("caches_count", 0u32)
        .kv("io_links_count", io_links)
        .kv("p2p_links_count", 0u32)
        .kv("cpu_core_id_base", 0u32)
        .kv("simd_id_base", 0u32);
    for key in [
        "max_waves_per_simd",
        "lds_size_in_kb",
        "gds_size_in_kb",
        "num_gws",
        "wave_front_size",
        "array_count",
        "simd_arrays_per_engine",
        "cu_per_simd_array",
        "simd_per_cu",
        "max_slots_scratch_cu",
        "gfx_target_version",
        "vendor_id",
        "device_id",
        "location_id",
        "domain",
        "drm_render_minor",
        "hive_id",
        "num_sdma_engines",
        "num_sdma_xgmi_engines",
        "num_sdma_queues_per_engine",
        "num_cp_queues",
    ] {
        p.kv(key, 0u32);
    }
    p.kv("max_engine_clk_ccompute", cpu.max_clock_mhz).done()
}

fn gpu_node_properties(
    g: &GpuIdentity,
    cpu: &CpuIdentity,
    caches: usize,
    io_links: u32,
    p2p_links: u32,
) -> String {
    Props::new()
        .kv("cpu_cores_count", 0u32)
        .kv("simd_count", g.simd_count())
        .kv("mem_banks_count", 1u32)
        .kv("caches_count", caches as u64)
        .kv("io_links_count", io_links)
        .kv("p2p_links_count", p2p_links)
        .kv("cpu_core_id_base", 0u32)
        .kv("simd_id_base", g.simd_id_base)
        .kv("max_waves_per_simd", g.max_waves_per_simd)
        .kv("lds_size_in_kb", g.lds_bytes >> 10)
        .kv("gds_size_in_kb", g.gds_bytes >> 10)
        .kv("num_gws", g.num_gws)
        .kv("wave_front_size", g.wave_size)
        .kv("array_count", g.array_count())
        .kv("simd_arrays_per_engine", g.simd_arrays_per_engine)
        .kv("cu_per_simd_array", g.cu_per_simd_array)
        .kv("simd_per_cu", g.simd_per_cu)
        .kv("max_slots_scratch_cu", g.max_slots_scratch_cu)
        .kv("gfx_target_version", g.gfx_target_version)
        .kv("vendor_id", g.vendor_id)
        .kv("device_id", g.device_id)
        .kv("location_id", g.location_id)
        .kv("domain", g.domain)
        .kv("drm_render_minor", g.drm_render_minor)
        .kv("hive_id", g.hive_id)
        .kv("num_sdma_engines", g.num_sdma_engines)
        .kv("num_sdma_xgmi_engines", g.num_sdma_xgmi_engines)
        .kv("num_sdma_queues_per_engine", g.num_sdma_queues_per_engine)
        .kv("num_cp_queues", g.num_cp_queues)
        .kv("max_engine_clk_fcompute", g.engine_clock_mhz)
        // The driver reports VRAM through the memory bank, and 0 here.
        .kv("local_mem_size", 0u32)
        .kv("fw_version", g.fw_version)
        .kv("capability", g.capability)
        .kv("capability2", g.capability2)
        .kv("debug_prop", g.debug_prop)
        .kv("sdma_fw_version", g.sdma_fw_version)
        .kv("unique_id", g.unique_id)
        .kv("num_xcc", g.xcc_count)
        .kv("max_engine_clk_ccompute", cpu.max_clock_mhz)
        .done()
}

fn cache_properties(
    processor_id_low: u32,
    level: u32,
    c: &CacheGeometry,
    kind: u32,
    siblings: &[bool],
) -> String {
    let mut text = Props::new()
        .kv("processor_id_low", processor_id_low)
        .kv("level", level)
        .kv("size", c.size_bytes >> 10)
        .kv("cache_line_size", c.line_bytes)
        .kv("cache_lines_per_tag", 1u32)
        .kv("association", c.ways)
        .kv("latency", 0u32)
        .kv("type", kind)
        .done();
    text.push_str("sibling_map ");
    let map: Vec<&str> = siblings
        .iter()
        .map(|&b| if b { "1" } else { "0" })
        .collect();
    text.push_str(&map.join(","));
    text.push('\n');
    text
}

/// The cache entries of one GPU node, in the driver's order: each level-1 cache type
/// over all CUs (XCD by XCD), then the L2, then the memory-side cache.
fn gpu_caches(g: &GpuIdentity) -> Vec<String> {
    let mut out = Vec::new();
    let per_xcc = g.cus_per_xcc();
    let data_cu = cache_type::DATA | cache_type::HSACU;
    let inst_cu = cache_type::INSTRUCTION | cache_type::HSACU;
    let l1_types = [
        (&g.vector_l1, 1u32, data_cu),
        (&g.instruction_cache, g.instruction_cache_cus, inst_cu),
        (&g.scalar_l1, g.scalar_l1_cus, data_cu),
    ];
    for (geometry, shared, kind) in l1_types {
        let shared = shared.max(1);
        for xcc in 0..g.xcc_count {
            let first = xcc * per_xcc;
            let cus = per_xcc.min(g.cu_count.saturating_sub(first));
            let mut cu = 0;
            while cu < cus {
                let n = shared.min(cus - cu);
                let siblings: Vec<bool> = (0..32).map(|b| b < n).collect();
                out.push(cache_properties(
                    g.simd_id_base + first + cu,
                    1,
                    geometry,
                    kind,
                    &siblings,
                ));
                cu += n;
            }
        }
    }
    // One 32-bit sibling group per shader array of every XCD, bits for its active CUs.
    let arrays_per_xcc = (g.shader_engines_per_xcd * g.simd_arrays_per_engine).max(1);
    let mut all = Vec::new();
    for xcc in 0..g.xcc_count {
        let cus = per_xcc.min(g.cu_count.saturating_sub(xcc * per_xcc));
        for a in 0..arrays_per_xcc {
            let active = cus / arrays_per_xcc + u32::from(a < cus % arrays_per_xcc);
            all.extend((0..32).map(|b| b < active));
        }
    }
    out.push(cache_properties(g.simd_id_base, 2, &g.l2, data_cu, &all));
    if let Some(mall) = &g.mall {
        out.push(cache_properties(g.simd_id_base, 3, mall, data_cu, &all));
    }
    out
}

/// Every file of the topology directory, by path relative to it (`nodes/1/properties`),
/// with its content. [`write_tree`] writes these; an interposer can also serve them
/// from memory.
pub fn topology_files(sys: &SystemIdentity) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let gpus = sys.gpus.len() as u32;
    files.insert("generation_id".to_string(), "1\n".to_string());
    files.insert(
        "system_properties".to_string(),
        Props::new()
            .kv("platform_oem", 0u32)
            .kv("platform_id", 0u32)
            .kv("platform_rev", 0u32)
            .done(),
    );

    // Node 0: the CPU.
    files.insert("nodes/0/gpu_id".into(), "0\n".into());
    files.insert("nodes/0/name".into(), "\n".into());
    files.insert(
        "nodes/0/properties".into(),
        cpu_node_properties(&sys.cpu, gpus),
    );
    files.insert(
        "nodes/0/mem_banks/0/properties".into(),
        Props::new()
            .kv("heap_type", heap_type::SYSTEM)
            .kv("size_in_bytes", sys.cpu.mem_bytes)
            .kv("flags", 0u32)
            .kv("width", 0u32)
            .kv("mem_clk_max", 0u32)
            .done(),
    );
    files.insert("nodes/0/mem_banks/0/used_memory".into(), "0\n".into());
    for (i, g) in sys.gpus.iter().enumerate() {
        let link = host_link(
            g,
            0,
            i as u32 + 1,
            iolink::FLAGS_ENABLED | iolink::FLAGS_NON_COHERENT,
        );
        files.insert(
            format!("nodes/0/io_links/{i}/properties"),
            link_properties(&link),
        );
    }

    // Nodes 1..: the GPUs.
    for (i, g) in sys.gpus.iter().enumerate() {
        let node = i as u32 + 1;
        let dir = format!("nodes/{node}");
        let caches = gpu_caches(g);
        let peers: Vec<(u32, &GpuIdentity)> = sys
            .gpus
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(j, p)| (j as u32 + 1, p))
            .collect();
        // Peers joined by XGMI are direct io links (as the driver's CRAT lists them);
        // the others are reached through the CPU (p2p links).
        let (xgmi, pcie): (Vec<_>, Vec<_>) = peers
            .into_iter()
            .partition(|&(peer_node, _)| sys.xgmi_between(i, peer_node as usize - 1).is_some());
        files.insert(format!("{dir}/gpu_id"), format!("{}\n", g.gpu_id));
        files.insert(format!("{dir}/name"), format!("{}\n", g.kfd_name));
        files.insert(
            format!("{dir}/properties"),
            gpu_node_properties(g, &sys.cpu, caches.len(), 1 + xgmi.len() as u32, pcie.len() as u32),
        );
        files.insert(
            format!("{dir}/mem_banks/0/properties"),
            Props::new()
                .kv("heap_type", heap_type::FB_PUBLIC)
                .kv("size_in_bytes", g.vram_bytes)
                .kv("flags", 0u32)
                .kv("width", g.vram_width_bits)
                .kv("mem_clk_max", g.memory_clock_mhz)
                .done(),
        );
        files.insert(format!("{dir}/mem_banks/0/used_memory"), "0\n".into());
        for (c, text) in caches.into_iter().enumerate() {
            files.insert(format!("{dir}/caches/{c}/properties"), text);
        }
        files.insert(
            format!("{dir}/io_links/0/properties"),
            link_properties(&host_link(g, node, 0, iolink::FLAGS_ENABLED)),
        );
        for (k, &(peer_node, _)) in xgmi.iter().enumerate() {
            let bandwidth = sys.xgmi_between(i, peer_node as usize - 1).map_or(0, |l| l.bandwidth_mbs);
            let link = Link {
                kind: iolink::TYPE_XGMI,
                from: node,
                to: peer_node,
                weight: iolink::WEIGHT_XGMI,
                min_bandwidth: bandwidth,
                max_bandwidth: bandwidth,
                sdma_mask: sdma_mask(g),
                flags: iolink::FLAGS_ENABLED,
            };
            files.insert(format!("{dir}/io_links/{}/properties", k + 1), link_properties(&link));
        }
        // GPU <-> GPU through the CPU: two PCIe hops.
        for (k, (peer_node, peer)) in pcie.iter().enumerate() {
            let link = Link {
                kind: iolink::TYPE_PCIEXPRESS,
                from: node,
                to: *peer_node,
                weight: 2 * iolink::WEIGHT_PCIE,
                min_bandwidth: 312,
                max_bandwidth: g.host_link_max_bandwidth.min(peer.host_link_max_bandwidth),
                sdma_mask: sdma_mask(g),
                flags: iolink::FLAGS_ENABLED | iolink::FLAGS_NON_COHERENT,
            };
            files.insert(
                format!("{dir}/p2p_links/{k}/properties"),
                link_properties(&link),
            );
        }
    }
    files
}

/// Directories that exist even when empty (the driver always creates them).
fn topology_dirs(sys: &SystemIdentity) -> Vec<String> {
    let mut dirs = vec!["nodes".to_string()];
    for node in 0..=sys.gpus.len() {
        for sub in ["mem_banks", "caches", "io_links", "p2p_links"] {
            dirs.push(format!("nodes/{node}/{sub}"));
        }
    }
    dirs
}

/// The `amdgpu` line of `/proc/modules` (name, size, users, used-by, state, address).
pub const AMDGPU_MODULE_LINE: &str = "amdgpu 9805824 0 - Live 0x0000000000000000\n";

/// The module's size in that line.
pub const AMDGPU_MODULE_SIZE: u64 = 9805824;

/// The module's sysfs directory under a root (`refcnt`, `coresize`, `initstate`,
/// `holders/`), which lsmod reads.
pub const MODULE_DIR: &str = "sys/module/amdgpu";

/// `/proc/modules` as the simulated machine shows it: the host's lines (if any) plus
/// an `amdgpu` line, unless the host already has one.
pub fn proc_modules(host: Option<&str>) -> String {
    let mut text = host.unwrap_or("").to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text
        .lines()
        .any(|l| l.split_whitespace().next() == Some("amdgpu"))
    {
        text.push_str(AMDGPU_MODULE_LINE);
    }
    text
}

/// Writes the KFD topology of `sys` under `root` (`root/sys/devices/virtual/kfd/kfd/
/// topology/...`, the `root/sys/class/kfd/kfd` symlink to it), `root/proc/modules`
/// (the host's modules plus `amdgpu`) and the amdgpu device files
/// ([`crate::amdgpu_sysfs`]). A topology directory already under `root` is
/// replaced, so no stale node survives.
pub fn write_tree(root: &Path, sys: &SystemIdentity) -> io::Result<()> {
    let topo = root.join(TOPOLOGY_DIR);
    if topo.exists() {
        std::fs::remove_dir_all(&topo)?;
    }
    for dir in topology_dirs(sys) {
        std::fs::create_dir_all(topo.join(dir))?;
    }
    for (rel, text) in topology_files(sys) {
        let path = topo.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }

    let class = root.join(CLASS_LINK);
    if let Some(parent) = class.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::symlink_metadata(&class) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&class)?,
        Ok(_) => std::fs::remove_file(&class)?,
        Err(_) => {}
    }
    std::os::unix::fs::symlink("../../devices/virtual/kfd/kfd", &class)?;

    let proc_dir = root.join("proc");
    std::fs::create_dir_all(&proc_dir)?;
    let host = std::fs::read_to_string("/proc/modules").ok();
    std::fs::write(proc_dir.join("modules"), proc_modules(host.as_deref()))?;

    // What lsmod reads besides /proc/modules.
    let module = root.join(MODULE_DIR);
    std::fs::create_dir_all(module.join("holders"))?;
    std::fs::write(module.join("refcnt"), "0\n")?;
    std::fs::write(module.join("coresize"), format!("{AMDGPU_MODULE_SIZE}\n"))?;
    std::fs::write(module.join("initstate"), "live\n")?;

    crate::amdgpu_sysfs::write_device_files(root, sys)
}

/// Reads a `properties` file as libhsakmt does: `key value` lines with a decimal
/// value; other lines (the cache `sibling_map`) are skipped.
pub fn parse_properties(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            let (key, value) = (it.next()?, it.next()?);
            Some((key.to_string(), value.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{CpuIdentity, GpuIdentity, SystemIdentity};
    use std::path::PathBuf;

    fn system(file: &str) -> SystemIdentity {
        let t = crate::identity::tests::load(file);
        let cpu = CpuIdentity::parse(
            "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: EPYC\ncpu MHz\t\t: 2445.4\nprocessor\t: 1\n",
            "MemTotal:       24683584 kB\n",
        );
        SystemIdentity::new(cpu, vec![GpuIdentity::from_topology(&t).unwrap()])
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kmd-sysfs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn read(path: PathBuf) -> String {
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Writes the tree and checks it through the class path, as rocm_agent_enumerator
    /// reads it, and through the devices path, as libhsakmt does.
    fn check(
        file: &str,
        gfx: u64,
        cus: u64,
        xcc: u64,
        lds_kb: u64,
        l2_kb: u64,
        l3_kb: Option<u64>,
    ) {
        let sys = system(file);
        let root = scratch(file);
        write_tree(&root, &sys).unwrap();
        let topo = root.join(TOPOLOGY_DIR);
        let class = root.join(CLASS_LINK).join("topology");

        // Nodes: the CPU and one GPU, found by listing the directory.
        let nodes: Vec<String> = std::fs::read_dir(class.join("nodes"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(nodes.len(), 2, "{nodes:?}");
        assert_eq!(read(topo.join("generation_id")), "1\n");
        assert!(read(topo.join("system_properties")).starts_with("platform_oem 0\n"));

        let cpu = parse_properties(&read(class.join("nodes/0/properties")));
        assert_eq!(read(topo.join("nodes/0/gpu_id")), "0\n");
        assert_eq!(cpu["cpu_cores_count"], 2);
        assert_eq!(cpu["simd_count"], 0);
        assert_eq!(cpu["io_links_count"], 1);
        assert_eq!(cpu["max_engine_clk_ccompute"], 2445);
        let bank = parse_properties(&read(topo.join("nodes/0/mem_banks/0/properties")));
        assert_eq!(bank["size_in_bytes"], 24683584 * 1024);

        let g = &sys.gpus[0];
        let text = read(class.join("nodes/1/properties"));
        assert!(text.len() < 4096);
        assert!(text
            .lines()
            .all(|l| l.split(' ').count() == 2
                && l.split(' ').nth(1).unwrap().parse::<u64>().is_ok()));
        let p = parse_properties(&text);
        assert_eq!(read(topo.join("nodes/1/gpu_id")), format!("{}\n", g.gpu_id));
        assert_eq!(p["gfx_target_version"], gfx);
        assert_eq!(p["simd_count"], cus * 4);
        assert_eq!(p["num_xcc"], xcc);
        assert_eq!(p["lds_size_in_kb"], lds_kb);
        assert_eq!(p["cpu_cores_count"], 0);
        assert_eq!(p["wave_front_size"], 64);
        assert_eq!(p["max_waves_per_simd"], 8);
        assert_eq!(p["simd_per_cu"], 4);
        assert_eq!(p["drm_render_minor"], 128);
        assert_eq!(p["vendor_id"], 0x1002);
        assert_eq!(p["device_id"], u64::from(g.device_id));
        assert_eq!(p["io_links_count"], 1);
        assert_eq!(p["mem_banks_count"], 1);
        assert_eq!(
            p["array_count"] / p["simd_arrays_per_engine"],
            u64::from(g.shader_engines_per_xcd) * xcc
        );
        assert!(p["cu_per_simd_array"] * p["array_count"] >= cus);
        let capability = p["capability"] as u32;
        assert_eq!(
            capability & 0x0008_0000,
            0,
            "old ROCm reads bit 19 as SRAM ECC"
        );
        assert_eq!((capability >> 12) & 3, 2, "doorbell type 2.0");

        let bank = parse_properties(&read(topo.join("nodes/1/mem_banks/0/properties")));
        assert_eq!(bank["heap_type"], 1);
        assert_eq!(bank["size_in_bytes"], g.vram_bytes);

        // Caches: as many as announced, each with the HSA CU bit.
        let caches = p["caches_count"];
        assert_eq!(
            std::fs::read_dir(topo.join("nodes/1/caches"))
                .unwrap()
                .count() as u64,
            caches
        );
        let mut by_level: BTreeMap<u64, Vec<BTreeMap<String, u64>>> = BTreeMap::new();
        for c in 0..caches {
            let text = read(topo.join(format!("nodes/1/caches/{c}/properties")));
            assert!(text.len() < 4096, "cache {c}: {} bytes", text.len());
            assert!(text.lines().last().unwrap().starts_with("sibling_map "));
            let props = parse_properties(&text);
            assert_ne!(props["type"] & u64::from(cache_type::HSACU), 0, "cache {c}");
            assert!(props["processor_id_low"] >= p["simd_id_base"]);
            by_level.entry(props["level"]).or_default().push(props);
        }
        let l1 = &by_level[&1];
        // Vector L1 per CU, instruction and scalar caches per CU pair.
        assert_eq!(l1.len() as u64, cus + 2 * cus.div_ceil(2));
        assert_eq!(l1[0]["size"], g.vector_l1.size_bytes >> 10);
        assert_eq!(by_level[&2].len(), 1);
        assert_eq!(by_level[&2][0]["size"], l2_kb);
        assert_eq!(by_level.get(&3).map(|v| v[0]["size"]), l3_kb);

        // The GPU's link to the CPU and back.
        let up = parse_properties(&read(topo.join("nodes/1/io_links/0/properties")));
        assert_eq!(
            (up["type"], up["node_from"], up["node_to"], up["weight"]),
            (2, 1, 0, 20)
        );
        let down = parse_properties(&read(topo.join("nodes/0/io_links/0/properties")));
        assert_eq!((down["node_from"], down["node_to"]), (0, 1));
        assert!(topo.join("nodes/1/p2p_links").is_dir());

        let modules = read(root.join("proc/modules"));
        assert!(
            modules
                .lines()
                .any(|l| l.starts_with("amdgpu ") && l.split(' ').count() == 6),
            "{modules}"
        );

        // Writing again replaces the tree (and the symlink).
        write_tree(&root, &sys).unwrap();
        assert_eq!(std::fs::read_dir(class.join("nodes")).unwrap().count(), 2);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn mi210_tree() {
        check("mi210.toml", 90010, 104, 1, 64, 8 << 10, None);
    }

    #[test]
    fn mi300x_tree() {
        check("mi300x.toml", 90402, 304, 8, 64, 4 << 10, Some(256 << 10));
    }

    #[test]
    fn mi355x_tree() {
        check("mi355x.toml", 90500, 256, 8, 160, 4 << 10, Some(256 << 10));
    }

    #[test]
    fn two_gpus_see_each_other() {
        let one = system("mi210.toml");
        let sys = SystemIdentity::new(
            one.cpu.clone(),
            vec![one.gpus[0].clone(), one.gpus[0].clone()],
        );
        let files = topology_files(&sys);
        let cpu = parse_properties(&files["nodes/0/properties"]);
        assert_eq!(cpu["io_links_count"], 2);
        for (node, peer) in [(1, 2), (2, 1)] {
            let p = parse_properties(&files[&format!("nodes/{node}/properties")]);
            assert_eq!(p["p2p_links_count"], 1);
            assert_eq!(p["drm_render_minor"], 127 + node);
            let l = parse_properties(&files[&format!("nodes/{node}/p2p_links/0/properties")]);
            assert_eq!((l["node_from"], l["node_to"]), (node, peer));
        }
        assert_ne!(files["nodes/1/gpu_id"], files["nodes/2/gpu_id"]);
    }

    #[test]
    fn xgmi_peers_are_io_links_of_one_hive() {
        let t = crate::identity::tests::load("mi210x4.toml");
        let sys = SystemIdentity::with_fixed_host(&t).unwrap();
        assert_eq!(sys.xgmi.len(), 6, "a fully connected quad");
        let files = topology_files(&sys);
        let hive = parse_properties(&files["nodes/1/properties"])["hive_id"];
        assert_ne!(hive, 0);
        for node in 1..=4u64 {
            let p = parse_properties(&files[&format!("nodes/{node}/properties")]);
            assert_eq!((p["io_links_count"], p["p2p_links_count"], p["hive_id"]), (4, 0, hive), "node {node}");
            let host = parse_properties(&files[&format!("nodes/{node}/io_links/0/properties")]);
            assert_eq!((host["type"], host["node_to"]), (u64::from(iolink::TYPE_PCIEXPRESS), 0));
            let mut peers = Vec::new();
            for k in 1..=3 {
                let l = parse_properties(&files[&format!("nodes/{node}/io_links/{k}/properties")]);
                assert_eq!(l["type"], u64::from(iolink::TYPE_XGMI));
                assert_eq!(l["weight"], u64::from(iolink::WEIGHT_XGMI));
                assert_eq!(l["node_from"], node);
                // 50 bytes per 1 GHz clock: 50 GB/s each way.
                assert_eq!((l["min_bandwidth"], l["max_bandwidth"]), (50_000, 50_000));
                peers.push(l["node_to"]);
            }
            let want: Vec<u64> = (1..=4).filter(|&n| n != node).collect();
            assert_eq!(peers, want, "node {node}");
        }
    }

    #[test]
    fn proc_modules_keeps_host_lines() {
        assert_eq!(proc_modules(None), AMDGPU_MODULE_LINE);
        let host = "nvme 61440 3 - Live 0x0000000000000000";
        let text = proc_modules(Some(host));
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with("nvme "));
        assert_eq!(proc_modules(Some(AMDGPU_MODULE_LINE)), AMDGPU_MODULE_LINE);
    }
}
