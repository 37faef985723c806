//! The amdgpu driver's `gpu_metrics` device file: the binary table the power-management
//! firmware fills and the driver attaches a timestamp to, which rocm-smi
//! (librocm_smi64's `rsmi_dev_gpu_metrics_info_get`) reads for coarse-grain activity
//! ("GFX Activity", "Memory Activity"), energy and HBM temperatures.
//!
//! The layout is the Linux kernel's `struct gpu_metrics_v1_3` (`kgd_pp_interface.h`),
//! the one the driver exposes for Aldebaran (gfx90a, MI200): header
//! `{structure_size 120, format_revision 1, content_revision 3}`, little-endian, C
//! alignment (every field is naturally aligned in declaration order, so the fields
//! follow each other with the struct's own padding fields and no hidden gaps).
//! librocm_smi64 5.2.3 reads exactly these 120 bytes for content revision 3 and takes
//! `firmware_timestamp * 10` as the sample's time in nanoseconds.
//!
//! Values ([`GpuMetrics::of`]): activity from the simulated dispatches and the HBM
//! model's traffic ([`amdgpu::gpu::clock::GpuClock`], the shares `gpu_busy_percent` and
//! `mem_busy_percent` show), clocks the DPM levels the device files publish,
//! temperatures, power and gfx voltage the documented constants of the hwmon
//! ([`crate::amdgpu_sysfs`]), timestamps simulated time. A field the simulator has no
//! value for holds all ones, as the driver leaves a field the firmware does not fill
//! (it initialises the table with `0xff` bytes).

use amdgpu::gpu::clock::reference_ticks;
use simdojo::time::Tick;

use crate::amdgpu_sysfs::{LiveValues, POWER_AVERAGE_UW, TEMPERATURES_MC, VDDGFX_MV};
use crate::identity::{GpuIdentity, TargetDefaults};
use crate::kfd::clock::NS_PER_TICK;

/// Bytes of a `gpu_metrics_v1_3` table.
pub const STRUCTURE_SIZE: usize = 120;

/// `format_revision` of the dGPU tables (`gpu_metrics_v1_*`).
pub const FORMAT_REVISION: u8 = 1;

/// `content_revision` of `gpu_metrics_v1_3`.
pub const CONTENT_REVISION: u8 = 3;

/// A 16-bit field the firmware did not fill.
pub const NOT_AVAILABLE: u16 = u16::MAX;

/// Simulated time one unit of `gfx_activity_acc` and `mem_activity_acc` stands for: the
/// firmware adds the activity percentage of each 1 ms sample, so an accumulator counts
/// busy time in units of 1 % of 1 ms.
pub const ACTIVITY_ACC_UNIT: Tick = Tick(10_000_000);

/// Energy per unit of `energy_accumulator`, in joules: 2^-16 J (15.259 µJ).
pub const ENERGY_UNITS_PER_JOULE: u128 = 1 << 16;

/// Number of HBM temperature sensors in the table (`NUM_HBM_INSTANCES`).
pub const HBM_INSTANCES: usize = 4;

/// The fields of `struct gpu_metrics_v1_3`, in declaration order (the header is
/// written by [`GpuMetrics::to_bytes`]). Units as the kernel documents them:
/// temperatures °C, power W, clocks MHz, link speed 0.1 GT/s, voltages mV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // the kernel's field names
pub struct GpuMetrics {
    pub temperature_edge: u16,
    pub temperature_hotspot: u16,
    pub temperature_mem: u16,
    pub temperature_vrgfx: u16,
    pub temperature_vrsoc: u16,
    pub temperature_vrmem: u16,
    pub average_gfx_activity: u16,
    pub average_umc_activity: u16,
    pub average_mm_activity: u16,
    pub average_socket_power: u16,
    pub energy_accumulator: u64,
    /// Driver timestamp, ns.
    pub system_clock_counter: u64,
    pub average_gfxclk_frequency: u16,
    pub average_socclk_frequency: u16,
    pub average_uclk_frequency: u16,
    pub average_vclk0_frequency: u16,
    pub average_dclk0_frequency: u16,
    pub average_vclk1_frequency: u16,
    pub average_dclk1_frequency: u16,
    pub current_gfxclk: u16,
    pub current_socclk: u16,
    pub current_uclk: u16,
    pub current_vclk0: u16,
    pub current_dclk0: u16,
    pub current_vclk1: u16,
    pub current_dclk1: u16,
    pub throttle_status: u32,
    pub current_fan_speed: u16,
    pub pcie_link_width: u16,
    pub pcie_link_speed: u16,
    pub padding: u16,
    pub gfx_activity_acc: u32,
    pub mem_activity_acc: u32,
    pub temperature_hbm: [u16; HBM_INSTANCES],
    /// Firmware timestamp, 10 ns units.
    pub firmware_timestamp: u64,
    pub voltage_soc: u16,
    pub voltage_gfx: u16,
    pub voltage_mem: u16,
    pub padding1: u16,
    pub indep_throttle_status: u64,
}

/// Saturates a figure into a 16-bit field (all ones stays "not available" only where
/// the caller means it).
fn u16_of(v: u64) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX - 1)
}

impl GpuMetrics {
    /// The table of GPU `g` with live values `v`.
    pub fn of(g: &GpuIdentity, v: &LiveValues) -> GpuMetrics {
        let d = TargetDefaults::of(g.target);
        let celsius = |mc: u64| u16_of(mc / 1000);
        let [(_, edge), (_, junction), (_, mem)] = TEMPERATURES_MC;
        let ticks = reference_ticks(Tick(v.now_ps));
        let energy = u128::from(POWER_AVERAGE_UW) * u128::from(v.now_ps) * ENERGY_UNITS_PER_JOULE / 1_000_000_000_000_000_000;
        let (gfx, uclk) = (u16_of(g.engine_clock_mhz.into()), u16_of(g.memory_clock_mhz.into()));
        GpuMetrics {
            temperature_edge: celsius(edge),
            temperature_hotspot: celsius(junction),
            temperature_mem: celsius(mem),
            temperature_vrgfx: NOT_AVAILABLE,
            temperature_vrsoc: NOT_AVAILABLE,
            temperature_vrmem: NOT_AVAILABLE,
            average_gfx_activity: u16_of(v.busy_percent.into()),
            average_umc_activity: u16_of(v.memory_percent.into()),
            average_mm_activity: NOT_AVAILABLE,
            average_socket_power: u16_of(POWER_AVERAGE_UW / 1_000_000),
            energy_accumulator: energy as u64,
            system_clock_counter: ticks * NS_PER_TICK,
            average_gfxclk_frequency: gfx,
            average_socclk_frequency: NOT_AVAILABLE,
            average_uclk_frequency: uclk,
            average_vclk0_frequency: NOT_AVAILABLE,
            average_dclk0_frequency: NOT_AVAILABLE,
            average_vclk1_frequency: NOT_AVAILABLE,
            average_dclk1_frequency: NOT_AVAILABLE,
            current_gfxclk: gfx,
            current_socclk: NOT_AVAILABLE,
            current_uclk: uclk,
            current_vclk0: NOT_AVAILABLE,
            current_dclk0: NOT_AVAILABLE,
            current_vclk1: NOT_AVAILABLE,
            current_dclk1: NOT_AVAILABLE,
            // The simulated GPU never throttles.
            throttle_status: 0,
            current_fan_speed: NOT_AVAILABLE,
            pcie_link_width: 16,
            pcie_link_speed: u16_of(u64::from(d.host_link_gts) * 10),
            padding: NOT_AVAILABLE,
            // They wrap, as the firmware's counters do.
            gfx_activity_acc: (v.busy_ps / ACTIVITY_ACC_UNIT.0) as u32,
            mem_activity_acc: (v.memory_busy_ps / ACTIVITY_ACC_UNIT.0) as u32,
            temperature_hbm: [celsius(mem); HBM_INSTANCES],
            firmware_timestamp: ticks,
            voltage_soc: NOT_AVAILABLE,
            voltage_gfx: u16_of(VDDGFX_MV),
            voltage_mem: NOT_AVAILABLE,
            padding1: NOT_AVAILABLE,
            indep_throttle_status: 0,
        }
    }

    /// The table as the device file holds it: header, then the fields little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(STRUCTURE_SIZE);
        let u16s = |b: &mut Vec<u8>, vs: &[u16]| vs.iter().for_each(|v| b.extend(v.to_le_bytes()));
        b.extend((STRUCTURE_SIZE as u16).to_le_bytes());
        b.extend([FORMAT_REVISION, CONTENT_REVISION]);
        u16s(&mut b, &[
            self.temperature_edge, self.temperature_hotspot, self.temperature_mem,
            self.temperature_vrgfx, self.temperature_vrsoc, self.temperature_vrmem,
            self.average_gfx_activity, self.average_umc_activity, self.average_mm_activity,
            self.average_socket_power,
        ]);
        b.extend(self.energy_accumulator.to_le_bytes());
        b.extend(self.system_clock_counter.to_le_bytes());
        u16s(&mut b, &[
            self.average_gfxclk_frequency, self.average_socclk_frequency, self.average_uclk_frequency,
            self.average_vclk0_frequency, self.average_dclk0_frequency, self.average_vclk1_frequency,
            self.average_dclk1_frequency, self.current_gfxclk, self.current_socclk, self.current_uclk,
            self.current_vclk0, self.current_dclk0, self.current_vclk1, self.current_dclk1,
        ]);
        b.extend(self.throttle_status.to_le_bytes());
        u16s(&mut b, &[self.current_fan_speed, self.pcie_link_width, self.pcie_link_speed, self.padding]);
        b.extend(self.gfx_activity_acc.to_le_bytes());
        b.extend(self.mem_activity_acc.to_le_bytes());
        u16s(&mut b, &self.temperature_hbm);
        b.extend(self.firmware_timestamp.to_le_bytes());
        u16s(&mut b, &[self.voltage_soc, self.voltage_gfx, self.voltage_mem, self.padding1]);
        b.extend(self.indep_throttle_status.to_le_bytes());
        debug_assert_eq!(b.len(), STRUCTURE_SIZE);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::SystemIdentity;

    #[test]
    fn the_mi210_table_has_the_kernel_layout_of_gpu_metrics_v1_3() {
        let sys = SystemIdentity::of_default_topology();
        let g = &sys.gpus[0];
        // 2.5 ms of simulated time, 1.25 ms of it busy, 30 % over the last window; the
        // HBM moved 0.5 ms worth of its peak bandwidth, 20 % of it in the window.
        let v = LiveValues {
            vram_used: 0,
            busy_percent: 30,
            busy_ps: 1_250_000_000,
            memory_percent: 20,
            memory_busy_ps: 500_000_000,
            now_ps: 2_500_000_000,
        };
        let b = GpuMetrics::of(g, &v).to_bytes();
        assert_eq!(b.len(), 120);
        assert_eq!((&b[0..2], b[2], b[3]), (&120u16.to_le_bytes()[..], 1, 3), "header");
        let na = u64::from(NOT_AVAILABLE);
        // (offset in the C struct and in librocm_smi64's copy of it, bytes, value, field)
        let expected: &[(usize, usize, u64, &str)] = &[
            (4, 2, 35, "temperature_edge (°C)"),
            (6, 2, 40, "temperature_hotspot"),
            (16, 2, 30, "average_gfx_activity"),
            (18, 2, 20, "average_umc_activity"),
            (22, 2, 40, "average_socket_power (W)"),
            (24, 8, 40 * 25 * 65536 / 10_000, "energy_accumulator: 40 W for 2.5 ms in 2^-16 J"),
            (32, 8, 2_500_000, "system_clock_counter (ns)"),
            (40, 2, 1700, "average_gfxclk_frequency"),
            (42, 2, na, "average_socclk_frequency"),
            (44, 2, 1600, "average_uclk_frequency"),
            (54, 2, 1700, "current_gfxclk"),
            (58, 2, 1600, "current_uclk"),
            (68, 4, 0, "throttle_status"),
            (72, 2, na, "current_fan_speed"),
            (74, 2, 16, "pcie_link_width"),
            (76, 2, 160, "pcie_link_speed: 16.0 GT/s"),
            (80, 4, 125, "gfx_activity_acc: 1.25 ms busy = 125 units of 1 % of 1 ms"),
            (84, 4, 50, "mem_activity_acc: 0.5 ms at peak bandwidth"),
            (88, 2, 38, "temperature_hbm[0]"),
            (94, 2, 38, "temperature_hbm[3]"),
            (96, 8, 250_000, "firmware_timestamp (10 ns)"),
            (106, 2, 800, "voltage_gfx (mV)"),
            (112, 8, 0, "indep_throttle_status"),
        ];
        for &(at, n, want, name) in expected {
            let mut le = [0u8; 8];
            le[..n].copy_from_slice(&b[at..at + n]);
            assert_eq!(u64::from_le_bytes(le), want, "{name} at {at}");
        }
    }
}
