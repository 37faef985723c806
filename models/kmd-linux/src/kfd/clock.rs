//! GET_CLOCK_COUNTERS from simulated time.
//!
//! ROCR relates the GPU's timestamps to host time by two readings of this ioctl: it
//! scales a timestamp by `Δsystem / Δgpu` between its first reading (at start-up) and
//! its latest one. Every counter here is simulated time, so the ratio is exactly the
//! reference clock's period and a translated duration is a simulated duration:
//!
//! - `gpu_clock_counter`: the 100 MHz reference clock
//!   ([`amdgpu::gpu::clock::reference_ticks`]) of the packet processor's simulated time, the
//!   counter that stamps completion signals;
//! - `system_clock_counter` and `cpu_clock_counter`: the simulated machine's boot clock,
//!   simulated nanoseconds since the simulation started, 10 ns per GPU tick
//!   (`system_clock_freq` 1 GHz). For a GPU they are derived from the GPU reading
//!   itself (exactly `10 * gpu_clock_counter`), so the pair is always consistent.
//!
//! Two rules keep ROCR's arithmetic sound while simulated time stands still (an idle
//! GPU): a process's first reading of a GPU is one tick before the packet processor's
//! time, so every packet the process submits afterwards is stamped later than it; and
//! each later reading of that GPU is at least one tick after the process's previous one
//! (ROCR divides by the difference of two readings). Neither affects a translated
//! timestamp: with `system = 10 * gpu`, ROCR maps tick `t` to `10 * t` ns whichever
//! readings it took. The host's wall clocks never enter, so every figure is
//! deterministic.

use amdgpu::gpu::clock::{reference_ticks, REFERENCE_PERIOD};

use crate::backend::Errno;
use crate::kfd::{abi, lock, Kfd};

/// Nanoseconds of the boot clock per reference-clock tick.
pub(crate) const NS_PER_TICK: u64 = REFERENCE_PERIOD.0 / 1000;

/// `system_clock_freq`: the boot clock counts nanoseconds.
const SYSTEM_CLOCK_HZ: u64 = 1_000_000_000;

impl Kfd {
    /// GET_CLOCK_COUNTERS for `a.gpu_id` (0, or any id that is not a GPU: the system
    /// clocks only, as the driver answers for the CPU node).
    pub(crate) fn clock_counters(&self, a: &mut abi::ClockCounters) -> Result<i32, Errno> {
        let machine = self.machine();
        a.system_clock_freq = SYSTEM_CLOCK_HZ;
        match self.gpu_index(a.gpu_id) {
            Ok(g) => {
                let now = reference_ticks(machine.gpus[g].shared.clock().now()).saturating_sub(1);
                let mut settings = lock(&self.settings);
                let reading = match settings.clock_reads.get(&g) {
                    Some(&last) => now.max(last + 1),
                    None => now,
                };
                settings.clock_reads.insert(g, reading);
                a.gpu_clock_counter = reading;
                a.system_clock_counter = reading * NS_PER_TICK;
            }
            Err(_) => {
                let latest = machine.gpus.iter().map(|g| g.shared.clock().now()).max().unwrap_or_default();
                a.gpu_clock_counter = 0;
                a.system_clock_counter = latest.0 / 1000;
            }
        }
        a.cpu_clock_counter = a.system_clock_counter;
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load_topology, DriverConfig};
    use crate::identity::SystemIdentity;
    use crate::kfd::abi::request;
    use crate::kfd::user::OwnMemory;

    fn read(k: &Kfd, gpu_id: u32) -> abi::ClockCounters {
        let mut a = abi::ClockCounters { gpu_id, ..Default::default() };
        k.kfd_ioctl(request::GET_CLOCK_COUNTERS, &mut a as *mut _ as u64, &OwnMemory).unwrap();
        a
    }

    #[test]
    fn readings_are_simulated_time_strictly_increasing_and_consistent() {
        amdgpu::link_components();
        let topology = load_topology(None).unwrap();
        let system = SystemIdentity::with_fixed_host(&topology).unwrap();
        let k = Kfd::open(&DriverConfig::single_partition(topology), system).unwrap();
        let gpu_id = k.system().gpus[0].gpu_id;
        let shared = k.machine().gpus[0].shared.clone();
        let first = read(&k, gpu_id);
        let after = reference_ticks(shared.clock().now());
        assert_eq!(first.system_clock_freq, SYSTEM_CLOCK_HZ);
        assert!(first.gpu_clock_counter < after.max(1), "one tick before the GPU's time");
        let mut last = first;
        for _ in 0..3 {
            let r = read(&k, gpu_id);
            assert!(r.gpu_clock_counter > last.gpu_clock_counter, "ROCR divides by the difference");
            assert_eq!(r.system_clock_counter, r.gpu_clock_counter * NS_PER_TICK, "the pair is one clock");
            assert_eq!(r.cpu_clock_counter, r.system_clock_counter);
            last = r;
        }
        // The CPU node: system clocks only, the simulated boot clock.
        let cpu = read(&k, 0);
        assert_eq!((cpu.gpu_clock_counter, cpu.system_clock_freq), (0, SYSTEM_CLOCK_HZ));
        assert_eq!(cpu.system_clock_counter, shared.clock().now().0 / 1000);
        // A bad argument pointer is EFAULT and changes nothing.
        assert_eq!(k.kfd_ioctl(request::GET_CLOCK_COUNTERS, 8, &OwnMemory), Err(Errno::FAULT));
        assert!(read(&k, gpu_id).gpu_clock_counter > last.gpu_clock_counter);
        k.close();
        k.device().stop();
    }
}
