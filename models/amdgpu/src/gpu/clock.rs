//! The GPU's time as its host sees it: the 100 MHz reference clock (the counter that
//! stamps completion signals, that `s_memrealtime` reads and that a driver reports in
//! GET_CLOCK_COUNTERS), the packet processor's current simulated time, how busy the
//! GPU has been recently (what a driver reports as `gpu_busy_percent`) and in all (the
//! busy accumulator of `gpu_metrics`), and the same two figures for its memory: the
//! HBM bytes moved relative to the HBM model's peak bandwidth (`mem_busy_percent` and
//! the memory accumulator).
//!
//! Everything here is simulated time: one reference-clock tick is
//! [`REFERENCE_PERIOD`] engine ticks (10 ns), counted from the start of the
//! simulation. Host wall time never enters.
//!
//! [`GpuClock`] is written by the GPU's components on the simulation's threads and read
//! by host threads at any time, so every field is atomic or behind a short lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use simdojo::time::Tick;

/// Frequency of the reference clock, as GET_CLOCK_COUNTERS and the runtimes know it.
pub const REFERENCE_HZ: u64 = 100_000_000;

/// One reference-clock tick in engine ticks (picoseconds): 10 ns.
pub const REFERENCE_PERIOD: Tick = Tick(1_000_000_000_000 / REFERENCE_HZ);

/// The reference-clock counter at simulated time `t` (whole ticks elapsed since the
/// simulation started).
pub fn reference_ticks(t: Tick) -> u64 {
    t.0 / REFERENCE_PERIOD.0
}

/// Engine ticks (picoseconds) per second.
const PS_PER_S: u128 = 1_000_000_000_000;

/// Window of simulated time over which [`GpuClock::busy_percent`] and
/// [`GpuClock::memory_percent`] average.
pub const BUSY_WINDOW: Tick = Tick(1_000_000_000);

/// See the [module docs](self).
#[derive(Debug, Default)]
pub struct GpuClock {
    /// Simulated time of the latest event the packet processor handled (ps).
    packet_processor: AtomicU64,
    activity: Mutex<Activity>,
    traffic: Mutex<Traffic>,
}

/// HBM bytes moved: the running total and its recent history.
#[derive(Debug, Default)]
struct Traffic {
    /// Peak bandwidth of the HBM model, bytes per second (0: no HBM model reports).
    peak_bytes_per_s: u64,
    /// Bytes moved so far.
    total: u64,
    /// `(time, total after the bytes moved then)`, oldest first; samples older than the
    /// window before the latest one are dropped.
    samples: VecDeque<(Tick, u64)>,
    /// The total before the oldest sample kept.
    before: u64,
}

impl Traffic {
    /// The total at time `t`: the latest sample at or before it.
    fn total_at(&self, t: Tick) -> u64 {
        self.samples.iter().rev().find(|&&(at, _)| at.0 <= t.0).map_or(self.before, |&(_, total)| total)
    }
}

/// Dispatches in flight and the recent stretches of simulated time with some.
#[derive(Debug, Default)]
struct Activity {
    in_flight: u32,
    /// Start of the current busy stretch (valid while `in_flight > 0`).
    since: Tick,
    /// Ended busy stretches `[start, end)`, oldest first, trimmed to the window.
    ended: VecDeque<(Tick, Tick)>,
    /// Total length of every ended busy stretch (ps).
    ended_total: u64,
}

impl GpuClock {
    /// The packet processor handles an event at `t`: a packet, a completion, or its
    /// heartbeat while dispatches run. Called before it writes any signal, so a host
    /// that sees a completion reads a time at or after it.
    pub fn packet_processor_at(&self, t: Tick) {
        self.packet_processor.fetch_max(t.0, Ordering::SeqCst);
    }

    /// The packet processor's simulated time: the latest time at which the GPU did
    /// anything the host can see (read a packet, completed a signal), or its latest
    /// heartbeat during a dispatch.
    pub fn now(&self) -> Tick {
        Tick(self.packet_processor.load(Ordering::SeqCst))
    }

    /// A dispatch starts at `t`.
    pub fn dispatch_started(&self, t: Tick) {
        let mut a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        if a.in_flight == 0 {
            a.since = t;
        }
        a.in_flight += 1;
    }

    /// A dispatch ends (completes or faults) at `t`.
    pub fn dispatch_ended(&self, t: Tick) {
        let mut a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        if a.in_flight == 0 {
            return;
        }
        a.in_flight -= 1;
        if a.in_flight == 0 {
            let since = a.since;
            a.ended.push_back((since, t));
            a.ended_total += t.0.saturating_sub(since.0);
            while a.ended.front().is_some_and(|&(_, end)| end.0 + BUSY_WINDOW.0 < t.0) {
                a.ended.pop_front();
            }
        }
    }

    /// Whether a dispatch is in flight.
    pub fn busy(&self) -> bool {
        self.activity.lock().unwrap_or_else(|e| e.into_inner()).in_flight > 0
    }

    /// How busy the GPU is, in percent: 0 while no dispatch is in flight (simulated
    /// time stands still while the GPU is idle, so a window of simulated time would
    /// freeze at its last value); otherwise the share of the last [`BUSY_WINDOW`] of
    /// simulated time (or of all of it, early on) during which at least one dispatch
    /// was in flight, rounded down.
    pub fn busy_percent(&self) -> u32 {
        let a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        if a.in_flight == 0 {
            return 0;
        }
        let now = Tick(self.now().0.max(a.since.0));
        busy_share(&a.ended, a.since, now)
    }

    /// The HBM model's peak bandwidth, bytes per second (the HBM component reports it
    /// when it is built).
    pub fn set_memory_peak(&self, bytes_per_s: u64) {
        self.traffic.lock().unwrap_or_else(|e| e.into_inner()).peak_bytes_per_s = bytes_per_s;
    }

    /// The HBM moved `bytes` at simulated time `t`.
    pub fn memory_moved(&self, t: Tick, bytes: u64) {
        let mut m = self.traffic.lock().unwrap_or_else(|e| e.into_inner());
        m.total += bytes;
        let total = m.total;
        match m.samples.back_mut() {
            Some(last) if last.0 .0 >= t.0 => last.1 = total,
            _ => m.samples.push_back((t, total)),
        }
        let newest = m.samples.back().map_or(t, |&(at, _)| at);
        while m.samples.len() > 1 && m.samples[0].0 .0 + BUSY_WINDOW.0 < newest.0 {
            if let Some((_, total)) = m.samples.pop_front() {
                m.before = total;
            }
        }
    }

    /// How busy the memory is, in percent: 0 while no dispatch is in flight (as
    /// [`GpuClock::busy_percent`]) or without an HBM model; otherwise the bytes the HBM
    /// moved during the last [`BUSY_WINDOW`] of simulated time (or all of it, early on)
    /// over what its peak bandwidth moves in that time, rounded down, at most 100.
    pub fn memory_percent(&self) -> u32 {
        if !self.busy() {
            return 0;
        }
        let now = self.now();
        let m = self.traffic.lock().unwrap_or_else(|e| e.into_inner());
        let start = Tick(now.0.saturating_sub(BUSY_WINDOW.0));
        let span = now.0 - start.0;
        if m.peak_bytes_per_s == 0 || span == 0 {
            return 0;
        }
        let moved = u128::from(m.total - m.total_at(start));
        let capacity = u128::from(m.peak_bytes_per_s) * u128::from(span);
        (moved * 100 * PS_PER_S / capacity).min(100) as u32
    }

    /// The HBM's bytes moved so far as time at its peak bandwidth (0 without an HBM
    /// model). It never decreases.
    pub fn memory_busy_time(&self) -> Tick {
        let m = self.traffic.lock().unwrap_or_else(|e| e.into_inner());
        if m.peak_bytes_per_s == 0 {
            return Tick(0);
        }
        Tick((u128::from(m.total) * PS_PER_S / u128::from(m.peak_bytes_per_s)) as u64)
    }

    /// Simulated time during which at least one dispatch was in flight, since the
    /// simulation started and up to the packet processor's time ([`GpuClock::now`]).
    /// It never decreases.
    pub fn busy_time(&self) -> Tick {
        let a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        let open = if a.in_flight > 0 { self.now().0.saturating_sub(a.since.0) } else { 0 };
        Tick(a.ended_total + open)
    }
}

/// Percent of `[now - BUSY_WINDOW, now]` covered by the `ended` stretches and the open
/// one from `since`.
fn busy_share(ended: &VecDeque<(Tick, Tick)>, since: Tick, now: Tick) -> u32 {
    let start = now.0.saturating_sub(BUSY_WINDOW.0);
    let span = now.0 - start;
    if span == 0 {
        return 100;
    }
    let overlap = |(s, e): (Tick, Tick)| e.0.min(now.0).saturating_sub(s.0.max(start));
    let busy: u64 = ended.iter().map(|&r| overlap(r)).sum::<u64>() + overlap((since, now));
    (busy.min(span) * 100 / span) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_clock_ticks_every_ten_nanoseconds() {
        assert_eq!(REFERENCE_PERIOD, Tick(10_000));
        assert_eq!(reference_ticks(Tick(0)), 0);
        assert_eq!(reference_ticks(Tick(9_999)), 0);
        assert_eq!(reference_ticks(Tick(10_000)), 1);
        assert_eq!(reference_ticks(Tick(1_000_000_000)), 100_000, "1 ms");
    }

    #[test]
    fn the_packet_processor_clock_only_moves_forward() {
        let c = GpuClock::default();
        c.packet_processor_at(Tick(50));
        c.packet_processor_at(Tick(20));
        assert_eq!(c.now(), Tick(50));
    }

    #[test]
    fn busy_is_the_share_of_the_window_with_a_dispatch_in_flight() {
        let c = GpuClock::default();
        assert_eq!(c.busy_percent(), 0);
        let w = BUSY_WINDOW.0;
        // Busy for the first quarter of a window, idle for half, busy again.
        c.dispatch_started(Tick(w));
        c.dispatch_ended(Tick(w + w / 4));
        assert_eq!(c.busy_percent(), 0, "idle now");
        c.dispatch_started(Tick(w + 3 * w / 4));
        c.packet_processor_at(Tick(2 * w));
        assert!(c.busy());
        assert_eq!(c.busy_percent(), 50, "a quarter before the gap and a quarter after");
        c.packet_processor_at(Tick(3 * w));
        assert_eq!(c.busy_percent(), 100, "the whole last window");
        c.dispatch_ended(Tick(3 * w));
        assert_eq!(c.busy_percent(), 0);
        assert_eq!(c.busy_time(), Tick(w / 4 + 3 * w - (w + 3 * w / 4)), "both stretches, whole");
    }

    #[test]
    fn memory_activity_is_the_hbm_bytes_of_the_window_over_its_peak() {
        let c = GpuClock::default();
        let w = BUSY_WINDOW.0;
        // 1 GB/s: the window (1 ms) moves at most 1 MB.
        c.set_memory_peak(1_000_000_000);
        c.dispatch_started(Tick(0));
        c.memory_moved(Tick(w / 2), 250_000);
        c.memory_moved(Tick(w / 2), 250_000);
        c.packet_processor_at(Tick(w));
        assert_eq!(c.memory_percent(), 50, "half the window's capacity");
        assert_eq!(c.memory_busy_time(), Tick(w / 2), "500 kB at 1 GB/s take half a millisecond");
        c.memory_moved(Tick(2 * w), 100_000);
        c.packet_processor_at(Tick(2 * w));
        assert_eq!(c.memory_percent(), 10, "the first bytes left the window");
        c.memory_moved(Tick(2 * w), 10_000_000);
        assert_eq!(c.memory_percent(), 100, "capped");
        c.dispatch_ended(Tick(2 * w));
        assert_eq!(c.memory_percent(), 0, "idle");
        assert_eq!(c.memory_busy_time(), Tick(w / 2 + w / 10 + 10 * w), "the total stays");
    }

    #[test]
    fn overlapping_dispatches_count_once() {
        let c = GpuClock::default();
        let w = BUSY_WINDOW.0;
        c.dispatch_started(Tick(0));
        c.dispatch_started(Tick(w / 10));
        c.dispatch_ended(Tick(w / 5));
        c.packet_processor_at(Tick(w / 2));
        assert_eq!(c.busy_percent(), 100, "early on, the share of all the time so far");
        c.dispatch_ended(Tick(w / 2));
        c.dispatch_started(Tick(w));
        c.packet_processor_at(Tick(w + w / 4));
        assert_eq!(c.busy_percent(), 50, "[w/4, w/2) and [w, 5w/4) of [w/4, 5w/4)");
        assert_eq!(c.busy_time(), Tick(w / 2 + w / 4), "[0, w/2) ended and [w, 5w/4) open");
    }
}
