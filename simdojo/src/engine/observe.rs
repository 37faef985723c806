//! Observation of where a run's wall time goes (`SimConfig::observe`): per-component
//! events and host time, every partition's window (activation: which worker ran it,
//! when, how many events, the simulated time it covered), every worker's idle waits,
//! and sampled per-event spans. Off by default; when on, each event is timed (two clock
//! reads).
//!
//! [`Observation::parallelism`] derives the available parallelism from the windows by
//! the lookahead: simulated time is cut into slices of the smallest cross-partition
//! latency L; nothing a partition handles in one slice can reach another partition
//! before the next, so the partitions' work within a slice is independent and the
//! slices are ordered. A window's cost is spread evenly over the simulated time it
//! covered; the critical path is the sum over slices of the costliest partition's
//! share, and N workers take per slice the longer of that and the slice's work / N.
//! Without a lookahead (one partition) the whole run is one slice.

use std::cell::Cell;
use std::sync::Mutex;
use std::time::Instant;

use crate::ids::{ComponentId, PartitionId};
use crate::time::Tick;

/// Per-partition event spans kept before the sampling stride doubles.
const SPANS_PER_PARTITION: usize = 1 << 15;

thread_local! {
    /// The worker index of the current thread, for the spans it records.
    static WORKER: Cell<u32> = const { Cell::new(0) };
}

/// Marks the current thread as worker `w`.
pub(crate) fn set_worker(w: usize) {
    WORKER.with(|c| c.set(w as u32));
}

/// The current thread's worker index.
pub(crate) fn worker() -> u32 {
    WORKER.with(Cell::get)
}

/// One partition's window: one activation, up to its horizon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpan {
    /// The worker thread that ran it.
    pub worker: u32,
    /// The partition.
    pub partition: PartitionId,
    /// The horizon pass it started after (counted over the whole run).
    pub epoch: u64,
    /// The simulated time of the first and the last event it handled.
    pub first: Tick,
    /// See `first`.
    pub last: Tick,
    /// Wall-clock start and end, nanoseconds since the simulation was built.
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Events handled.
    pub events: u64,
}

/// A worker's wait for a ready partition (no global barrier: it waits for another
/// partition's progress or a pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitSpan {
    /// The worker thread.
    pub worker: u32,
    /// Wall-clock start, nanoseconds since the simulation was built.
    pub start_ns: u64,
    /// Wall-clock end.
    pub end_ns: u64,
}

/// One handled event (sampled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSpan {
    /// The worker thread.
    pub worker: u32,
    /// The component that handled it.
    pub component: ComponentId,
    /// Wall-clock start, nanoseconds since the simulation was built.
    pub start_ns: u64,
    /// Duration in nanoseconds.
    pub dur_ns: u64,
}

/// Per component: events handled and host time spent in `handle`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComponentCost {
    /// Events handled.
    pub events: u64,
    /// Nanoseconds in `handle`.
    pub host_ns: u64,
}

/// What a partition records while observed.
#[derive(Debug, Default)]
pub(crate) struct PartitionLog {
    /// Sampled event spans and the stride of the sampling (every `stride`-th event).
    pub spans: Vec<EventSpan>,
    pub stride: u64,
    pub seen: u64,
}

impl PartitionLog {
    /// Records an event span if it falls on the sampling stride; halves the kept
    /// spans and doubles the stride when full.
    pub fn span(&mut self, span: EventSpan) {
        self.seen += 1;
        if !self.seen.is_multiple_of(self.stride.max(1)) {
            return;
        }
        if self.spans.len() >= SPANS_PER_PARTITION {
            let mut i = 0;
            self.spans.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.stride = self.stride.max(1) * 2;
        }
        self.spans.push(span);
    }
}

/// The shared recorder of one observed simulation.
#[derive(Debug)]
pub(crate) struct Observer {
    origin: Instant,
    windows: Mutex<Vec<WindowSpan>>,
    waits: Mutex<Vec<WaitSpan>>,
}

impl Observer {
    pub fn new() -> Observer {
        Observer { origin: Instant::now(), windows: Mutex::default(), waits: Mutex::default() }
    }

    /// Nanoseconds since the observer was made.
    pub fn ns(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.origin).as_nanos() as u64
    }

    pub fn window(&self, span: WindowSpan) {
        self.windows.lock().unwrap_or_else(|e| e.into_inner()).push(span);
    }

    pub fn wait(&self, started: Instant, ended: Instant) {
        let span = WaitSpan { worker: worker(), start_ns: self.ns(started), end_ns: self.ns(ended) };
        self.waits.lock().unwrap_or_else(|e| e.into_inner()).push(span);
    }

    /// Everything recorded so far.
    pub fn snapshot(&self) -> (Vec<WindowSpan>, Vec<WaitSpan>) {
        let w = self.windows.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let b = self.waits.lock().unwrap_or_else(|e| e.into_inner()).clone();
        (w, b)
    }
}

/// What an observed run recorded (`Simulation::observation`).
#[derive(Clone, Debug, Default)]
pub struct Observation {
    /// Per component (indexed by id): events and host time.
    pub components: Vec<ComponentCost>,
    /// Every partition's window of every epoch that ran events, in record order.
    pub windows: Vec<WindowSpan>,
    /// Every barrier wait.
    pub waits: Vec<WaitSpan>,
    /// Sampled event spans.
    pub spans: Vec<EventSpan>,
    /// Horizon passes run.
    pub epochs: u64,
    /// The smallest cross-partition latency of the partitioning (`None`: one partition).
    pub lookahead: Option<Tick>,
    /// The worker threads the run was given (`SimConfig::workers`, at most one per
    /// partition): workers `0..workers`, whether or not each ran a window. A worker
    /// that never claimed a partition (a short run, a merged one) still counts.
    pub workers: u32,
}

/// What one worker did in an observed run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerLoad {
    /// Nanoseconds inside windows.
    pub busy_ns: u64,
    /// Nanoseconds waiting at barriers.
    pub barrier_ns: u64,
    /// Events handled.
    pub events: u64,
}

/// The available parallelism of an observed run (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct Parallelism {
    /// Nanoseconds of window work, all partitions.
    pub work_ns: u64,
    /// Nanoseconds of the critical path: the sum over lookahead slices of the costliest
    /// partition's work in the slice.
    pub critical_ns: u64,
    /// Lookahead slices with work.
    pub epochs: u64,
}

impl Parallelism {
    /// `work / critical path`: the speedup of infinitely many workers with free barriers.
    pub fn available(&self) -> f64 {
        self.work_ns as f64 / self.critical_ns.max(1) as f64
    }
}

impl Observation {
    /// Every worker's load, indexed by worker: `0..workers`, and any worker a window
    /// or wait names beyond that. Idle workers have zero figures.
    pub fn worker_loads(&self) -> Vec<WorkerLoad> {
        let named = self.windows.iter().map(|w| w.worker).chain(self.waits.iter().map(|b| b.worker)).max();
        let n = named.map_or(0, |w| w as usize + 1).max(self.workers as usize);
        let mut loads = vec![WorkerLoad::default(); n];
        for w in &self.windows {
            let l = &mut loads[w.worker as usize];
            l.busy_ns += w.end_ns.saturating_sub(w.start_ns);
            l.events += w.events;
        }
        for b in &self.waits {
            loads[b.worker as usize].barrier_ns += b.end_ns.saturating_sub(b.start_ns);
        }
        loads
    }

    /// The work and critical path of the windows.
    pub fn parallelism(&self) -> Parallelism {
        let slices = self.slices(&[1]);
        Parallelism { work_ns: slices.work as u64, critical_ns: slices.critical as u64, epochs: slices.count }
    }

    /// The predicted speedup of `workers` workers over one, from the windows: each
    /// lookahead slice takes the longer of its costliest partition's work and its work
    /// divided by the workers, plus `sync_ns` per slice when there is more than one
    /// worker (the cost of learning the other partitions' progress).
    pub fn predicted_speedup(&self, workers: usize, sync_ns: u64) -> f64 {
        let s = self.slices(&[workers.max(1)]);
        let many = s.many[0] + if workers > 1 { (sync_ns * s.count) as f64 } else { 0.0 };
        s.work / many.max(1.0)
    }

    /// The lookahead slices of the windows (see the module docs), summed: work, critical
    /// path and, per entry of `workers`, the time on that many workers. A window's cost
    /// is its events times its partition's median cost per event over its windows, so
    /// a window stretched by the host preempting its worker (frequent on a shared
    /// machine) does not stretch the critical path.
    fn slices(&self, workers: &[usize]) -> Slices {
        use std::collections::BTreeMap;
        let windows: Vec<&WindowSpan> = self.windows.iter().filter(|w| w.events > 0).collect();
        let mut rates: BTreeMap<PartitionId, Vec<f64>> = BTreeMap::new();
        for w in &windows {
            rates.entry(w.partition).or_default().push(w.end_ns.saturating_sub(w.start_ns) as f64 / w.events as f64);
        }
        let median: BTreeMap<PartitionId, f64> = rates
            .into_iter()
            .map(|(p, mut r)| {
                r.sort_by(f64::total_cmp);
                (p, r[r.len() / 2])
            })
            .collect();
        let parts = windows.iter().map(|w| w.partition.index() + 1).max().unwrap_or(0);
        let slice = self.lookahead.map_or(u64::MAX, |l| l.0.max(1));
        // Piecewise-constant cost densities per partition: a change at each window's
        // first tick and after its last.
        let mut changes: Vec<(u64, usize, f64, i64)> = Vec::with_capacity(2 * windows.len());
        for w in &windows {
            let cost = w.events as f64 * median[&w.partition];
            let (a, b) = (w.first.0, w.last.0.max(w.first.0).saturating_add(1));
            let density = cost / (b - a) as f64;
            changes.push((a, w.partition.index(), density, 1));
            changes.push((b, w.partition.index(), -density, -1));
        }
        changes.sort_by_key(|c| c.0);
        let mut out = Slices { work: 0.0, critical: 0.0, count: 0, many: vec![0.0; workers.len()] };
        let mut density = vec![0.0f64; parts];
        let mut active = vec![0i64; parts];
        let mut acc = vec![0.0f64; parts];
        let mut current = 0u64;
        let flush = |acc: &mut [f64], times: f64, out: &mut Slices| {
            let work: f64 = acc.iter().sum();
            if work <= 0.0 {
                return;
            }
            let longest = acc.iter().copied().fold(0.0, f64::max);
            out.work += work * times;
            out.critical += longest * times;
            out.count += times as u64;
            for (m, &n) in out.many.iter_mut().zip(workers) {
                *m += longest.max(work / n as f64) * times;
            }
            acc.iter_mut().for_each(|a| *a = 0.0);
        };
        let mut at = changes.first().map_or(0, |c| c.0);
        for (t, p, d, opened) in changes {
            // Spread the densities over [at, t), slice by slice.
            while at < t {
                let index = at / slice;
                if index != current {
                    flush(&mut acc, 1.0, &mut out);
                    current = index;
                }
                let slice_end = index.saturating_add(1).saturating_mul(slice);
                let end = t.min(slice_end);
                if at == index.saturating_mul(slice) && end == slice_end && t - at >= slice.saturating_mul(2) {
                    // Whole slices of constant density: add them at once.
                    let whole = (t - at) / slice;
                    let mut one: Vec<f64> = density.iter().map(|d| d * slice as f64).collect();
                    flush(&mut one, whole as f64, &mut out);
                    at += whole * slice;
                    current = at / slice;
                    continue;
                }
                for (a, d) in acc.iter_mut().zip(&density) {
                    *a += d * (end - at) as f64;
                }
                at = end;
            }
            active[p] += opened;
            // Exactly zero once no window is open (no rounding residue in empty time).
            density[p] = if active[p] == 0 { 0.0 } else { density[p] + d };
        }
        flush(&mut acc, 1.0, &mut out);
        out
    }
}

/// Sums over lookahead slices (see [`Observation::slices`]).
struct Slices {
    work: f64,
    critical: f64,
    count: u64,
    /// Per requested worker count, the time of the slices on that many workers.
    many: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(first: u64, last: u64, partition: u32, dur: u64, events: u64) -> WindowSpan {
        WindowSpan {
            worker: 0,
            partition: PartitionId(partition),
            epoch: 0,
            first: Tick(first),
            last: Tick(last),
            start_ns: 0,
            end_ns: dur,
            events,
        }
    }

    #[test]
    fn the_critical_path_is_the_costliest_partition_of_each_lookahead_slice() {
        // Slices of 10 ticks. Partition 0 costs 10 ns per event, partition 1 5 ns;
        // partition 0's third window was preempted (1000 ns for 2 events) and counts
        // as 20 ns.
        let o = Observation {
            windows: vec![
                window(0, 9, 0, 10, 1),
                window(0, 9, 1, 30, 6),
                window(10, 19, 0, 20, 2),
                window(10, 19, 1, 20, 4),
                window(20, 29, 0, 1000, 2),
                window(20, 29, 1, 0, 0),
            ],
            lookahead: Some(Tick(10)),
            ..Observation::default()
        };
        let p = o.parallelism();
        assert_eq!((p.work_ns, p.critical_ns, p.epochs), (100, 70, 3));
        assert!((p.available() - 100.0 / 70.0).abs() < 1e-12);
        // Two workers: slice 0 takes 30 (its costliest partition), slice 1 20, slice 2 20.
        assert!((o.predicted_speedup(2, 0) - 100.0 / 70.0).abs() < 1e-9);
        assert!((o.predicted_speedup(2, 5) - 100.0 / 85.0).abs() < 1e-9);
        assert!((o.predicted_speedup(1, 5) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_window_over_several_slices_spreads_its_cost() {
        // Partition 0 covers slices 0 and 1 (10 ns each), partition 1 slice 1 only; far
        // later, 1,000 whole slices of partition 0 alone.
        let o = Observation {
            windows: vec![window(0, 19, 0, 20, 2), window(10, 19, 1, 10, 1), window(100_000, 109_999, 0, 100_000, 10_000)],
            lookahead: Some(Tick(10)),
            ..Observation::default()
        };
        let p = o.parallelism();
        assert_eq!((p.work_ns, p.critical_ns, p.epochs), (30 + 10_000 * 10, 20 + 10_000 * 10, 2 + 1000));
        // Without a lookahead the run is one slice: the busiest partition is the path.
        let one = Observation { lookahead: None, ..o };
        let p = one.parallelism();
        assert_eq!((p.work_ns, p.critical_ns, p.epochs), (100_030, 100_020, 1));
    }

    #[test]
    fn idle_workers_are_listed() {
        let o = Observation { windows: vec![window(0, 0, 0, 10, 3)], workers: 3, ..Observation::default() };
        let loads = o.worker_loads();
        assert_eq!(loads.len(), 3);
        assert_eq!(loads[0], WorkerLoad { busy_ns: 10, barrier_ns: 0, events: 3 });
        assert_eq!(loads[1], WorkerLoad::default());
        assert_eq!(loads[2], WorkerLoad::default());
    }

    #[test]
    fn a_full_span_log_halves_and_samples_more_sparsely() {
        let mut log = PartitionLog::default();
        let span = EventSpan { worker: 0, component: ComponentId(0), start_ns: 0, dur_ns: 1 };
        for _ in 0..(SPANS_PER_PARTITION as u64 * 3) {
            log.span(span);
        }
        assert!(log.spans.len() <= SPANS_PER_PARTITION, "{}", log.spans.len());
        assert!(log.stride >= 2);
    }
}
