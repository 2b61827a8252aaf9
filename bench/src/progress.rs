//! A live progress line on stderr while the timed phase runs: elapsed
//! time, operations so far, the rate over the last second and the errors,
//! redrawn in place once a second.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

const TICK: Duration = Duration::from_secs(1);

/// Counters the workers bump after each operation.
#[derive(Default)]
pub struct Progress {
    done: AtomicU64,
    errors: AtomicU64,
}

impl Progress {
    pub fn record(&self, ok: bool) {
        self.done.fetch_add(1, Ordering::Relaxed);
        if !ok {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Starts redrawing the line every second until the ticker is stopped.
    /// `total` is the operation count when the run is bounded by one.
    pub fn show(self: &Arc<Self>, total: Option<u64>) -> Ticker {
        let progress = Arc::clone(self);
        let task = tokio::spawn(async move {
            let start = Instant::now();
            let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
            let mut before = 0;
            loop {
                interval.tick().await;
                let done = progress.done.load(Ordering::Relaxed);
                let errors = progress.errors.load(Ordering::Relaxed);
                let text = line(start.elapsed(), done, done - before, errors, total);
                before = done;
                let mut stderr = std::io::stderr().lock();
                // \r returns to the line's start, ESC[K clears what is left.
                let _ = write!(stderr, "\r{text}\x1b[K");
                let _ = stderr.flush();
            }
        });
        Ticker { task }
    }
}

/// Stops the redrawing; the line is then ended so later output starts on
/// a fresh one.
pub struct Ticker {
    task: JoinHandle<()>,
}

impl Ticker {
    pub fn stop(self) {
        self.task.abort();
        eprintln!();
    }
}

fn line(elapsed: Duration, done: u64, last_second: u64, errors: u64, total: Option<u64>) -> String {
    let seconds = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let of_total = match total {
        Some(total) => format!("/{total}"),
        None => String::new(),
    };
    format!(
        "[{:>5.0} s] {done}{of_total} ops, {:.0} ops/s (last second {last_second}), {errors} errors",
        elapsed.as_secs_f64(),
        done as f64 / seconds,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_counts_rates_and_errors() {
        assert_eq!(
            line(Duration::from_secs(4), 2000, 450, 3, None),
            "[    4 s] 2000 ops, 500 ops/s (last second 450), 3 errors"
        );
        assert_eq!(
            line(Duration::from_secs(2), 10, 5, 0, Some(100)),
            "[    2 s] 10/100 ops, 5 ops/s (last second 5), 0 errors"
        );
    }

    #[test]
    fn workers_count_successes_and_errors() {
        let progress = Progress::default();
        progress.record(true);
        progress.record(false);
        progress.record(true);
        assert_eq!(progress.done.load(Ordering::Relaxed), 3);
        assert_eq!(progress.errors.load(Ordering::Relaxed), 1);
    }
}
