//! A live progress line on a terminal: simulated time, events/s, epochs/s.
//! Quiet when standard error is not a terminal.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::time::Tick;

/// The progress line of one run.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
    last: Instant,
    last_events: u64,
    last_epochs: u64,
}

impl Progress {
    /// A progress line, or `None` when standard error is not a terminal.
    pub fn on_terminal() -> Option<Progress> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        // The template is a constant known to be valid.
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        // The first update draws at once (a short run shows its line too), later ones
        // at most four times a second.
        let now = Instant::now();
        let last = now.checked_sub(Duration::from_secs(1)).unwrap_or(now);
        Some(Progress { bar, last, last_events: 0, last_epochs: 0 })
    }

    /// Updates the line if at least 250 ms have passed since the last update.
    pub fn update(&mut self, sim: Tick, events: u64, epochs: u64, _spent: Duration) {
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64();
        if dt < 0.25 {
            return;
        }
        let ev_rate = (events.saturating_sub(self.last_events)) as f64 / dt;
        let ep_rate = (epochs.saturating_sub(self.last_epochs)) as f64 / dt;
        self.bar.set_message(format!(
            "sim {sim}  {events} events  {:.2} M events/s  {:.0} epochs/s",
            ev_rate / 1e6,
            ep_rate
        ));
        self.bar.tick();
        self.last = now;
        self.last_events = events;
        self.last_epochs = epochs;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
