//! `--copies N` of the benchmarks: the same run N times at once, each on its own
//! threads, to measure what the machine gives simulations that never synchronize.

use std::sync::Barrier;

/// Runs `copy` on `n` scoped threads and returns their results in order. Each copy
/// gets the same barrier for `n` threads, to wait on once its set-up is done, so that
/// the timed parts start together. A panicking copy panics the caller.
pub fn run_copies<T: Send>(n: u32, copy: impl Fn(&Barrier) -> T + Sync) -> Vec<T> {
    let start = Barrier::new(n as usize);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n).map(|_| s.spawn(|| copy(&start))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// The per-copy rates as a readable list (`12.345 M, 11.000 M`), `decimals` digits.
pub fn rates_line(rates: &[f64], decimals: usize) -> String {
    rates.iter().map(|r| format!("{:.*} M", decimals, r / 1e6)).collect::<Vec<_>>().join(", ")
}

/// What `--ceiling` measured: N one-worker copies at once against the N-worker run.
pub struct Ceiling<'a> {
    /// The copies' summed rate.
    pub rate: f64,
    /// Each copy's rate.
    pub per_copy: &'a [f64],
    /// N: the copies, and the parallel run's workers.
    pub workers: u32,
}

impl Ceiling<'_> {
    /// Prints the two `--ceiling` lines (`ceiling:` and `of ceiling:`), their labels
    /// padded to `width`, rates in millions of `unit` with `decimals` digits.
    pub fn print(&self, width: usize, unit: &str, parallel_rate: f64, decimals: usize) -> anyhow::Result<()> {
        crate::output::outln!(
            "{:<width$}{:.decimals$} M{unit} from {} one-worker copies at once ({} each)",
            "ceiling:",
            self.rate / 1e6,
            self.workers,
            rates_line(self.per_copy, decimals)
        )?;
        crate::output::outln!(
            "{:<width$}{:.3} ({} workers against {} copies)",
            "of ceiling:",
            parallel_rate / self.rate,
            self.workers,
            self.workers
        )?;
        Ok(())
    }
}
