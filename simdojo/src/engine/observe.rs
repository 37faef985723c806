//! Observation of where a run's wall time goes (`SimConfig::observe`): per-component
//! events and host time, every partition's window per epoch (which worker ran it,
//! when, how many events), every worker's barrier waits, and sampled per-event spans.
//! Off by default; when on, each event is timed (two clock reads).
//!
//! [`Observation::parallelism`] derives the available parallelism from the windows:
//! within an epoch the partitions' windows are independent and the barrier orders the
//! epochs, so the epochs' longest windows form the critical path.

use std::cell::Cell;
use std::sync::Mutex;
use std::time::Instant;

use crate::ids::{ComponentId, PartitionId};

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

/// One partition's window in one epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpan {
    /// The worker thread that ran it.
    pub worker: u32,
    /// The partition.
    pub partition: PartitionId,
    /// The epoch (counted over the whole run).
    pub epoch: u64,
    /// Wall-clock start and end, nanoseconds since the simulation was built.
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Events handled.
    pub events: u64,
}

/// A worker's wait at the epoch barrier.
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
    /// Epochs run.
    pub epochs: u64,
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
    /// Nanoseconds of the critical path: the sum over epochs of the longest window.
    pub critical_ns: u64,
    /// Epochs with work.
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
        let (work, critical, epochs) = self.per_epoch().fold((0, 0, 0), |(w, c, e), (work, longest)| {
            (w + work, c + longest, e + 1)
        });
        Parallelism { work_ns: work, critical_ns: critical, epochs }
    }

    /// The predicted speedup of `workers` workers over one, from the windows: each epoch
    /// takes the longer of its longest window and its work divided by the workers, plus
    /// `barrier_ns` when there is more than one worker.
    pub fn predicted_speedup(&self, workers: usize, barrier_ns: u64) -> f64 {
        let workers = workers.max(1) as u64;
        let mut one = 0u64;
        let mut many = 0u64;
        for (work, longest) in self.per_epoch() {
            one += work;
            many += longest.max(work.div_ceil(workers)) + if workers > 1 { barrier_ns } else { 0 };
        }
        one as f64 / many.max(1) as f64
    }

    /// Per epoch with work: (total window cost, costliest window), in epoch order. A
    /// window's cost is its events times its partition's median cost per event over its
    /// windows, so a window stretched by the host preempting its worker (frequent on a
    /// shared machine) does not stretch the critical path.
    fn per_epoch(&self) -> impl Iterator<Item = (u64, u64)> {
        use std::collections::BTreeMap;
        let mut rates: BTreeMap<PartitionId, Vec<f64>> = BTreeMap::new();
        for w in self.windows.iter().filter(|w| w.events > 0) {
            rates.entry(w.partition).or_default().push(w.end_ns.saturating_sub(w.start_ns) as f64 / w.events as f64);
        }
        let median: BTreeMap<PartitionId, f64> = rates
            .into_iter()
            .map(|(p, mut r)| {
                r.sort_by(f64::total_cmp);
                (p, r[r.len() / 2])
            })
            .collect();
        let mut by_epoch: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        for w in self.windows.iter().filter(|w| w.events > 0) {
            let cost = (w.events as f64 * median[&w.partition]).round() as u64;
            let e = by_epoch.entry(w.epoch).or_default();
            e.0 += cost;
            e.1 = e.1.max(cost);
        }
        by_epoch.into_values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(epoch: u64, partition: u32, dur: u64, events: u64) -> WindowSpan {
        WindowSpan { worker: 0, partition: PartitionId(partition), epoch, start_ns: 0, end_ns: dur, events }
    }

    #[test]
    fn the_critical_path_is_the_costliest_window_of_each_epoch() {
        // Partition 0 costs 10 ns per event, partition 1 5 ns; partition 0's third
        // window was preempted (1000 ns for 2 events) and counts as 20 ns.
        let o = Observation {
            windows: vec![
                window(0, 0, 10, 1),
                window(0, 1, 30, 6),
                window(1, 0, 20, 2),
                window(1, 1, 20, 4),
                window(2, 0, 1000, 2),
                window(2, 1, 0, 0),
            ],
            ..Observation::default()
        };
        let p = o.parallelism();
        assert_eq!((p.work_ns, p.critical_ns, p.epochs), (100, 70, 3));
        assert!((p.available() - 100.0 / 70.0).abs() < 1e-12);
        // Two workers: epoch 0 takes 30 (its costliest window), epoch 1 20, epoch 2 20.
        assert!((o.predicted_speedup(2, 0) - 100.0 / 70.0).abs() < 1e-12);
        assert!((o.predicted_speedup(2, 5) - 100.0 / 85.0).abs() < 1e-12);
        assert!((o.predicted_speedup(1, 5) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn idle_workers_are_listed() {
        let o = Observation { windows: vec![window(0, 0, 10, 3)], workers: 3, ..Observation::default() };
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
