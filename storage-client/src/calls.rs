//! How long back-end calls take and how often they fail, by service (`om`,
//! `dn`, `ratis`) and call (the wire command, e.g. `GET_KEY_INFO`), for the
//! gateway's `/metrics`. Every call a client can make has its slot from the
//! start, so recording one is a few relaxed atomic adds: no lock, no
//! allocation.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{Result, StorageError};

/// Upper bounds of the latency buckets, in seconds: from a cached OM answer
/// on loopback (~0.2 ms) to a datanode at its 30 s request timeout.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0,
];

/// A latency histogram over [`LATENCY_BUCKETS`] (and one beyond them).
#[derive(Default)]
pub struct Histogram {
    /// Observations per bucket, not cumulative; the last is `+Inf`.
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

/// A histogram as Prometheus shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramSnapshot {
    /// Observations at or below each bound of [`LATENCY_BUCKETS`], cumulative.
    pub cumulative: [u64; LATENCY_BUCKETS.len()],
    pub count: u64,
    pub sum_seconds: f64,
}

impl Histogram {
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = [0; LATENCY_BUCKETS.len()];
        let mut running = 0;
        for (slot, bucket) in cumulative.iter_mut().zip(&self.buckets) {
            running += bucket.load(Ordering::Relaxed);
            *slot = running;
        }
        HistogramSnapshot {
            cumulative,
            count: running + self.buckets[LATENCY_BUCKETS.len()].load(Ordering::Relaxed),
            sum_seconds: self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

/// One kind of back-end call that has been made at least once.
#[derive(Clone, Debug, PartialEq)]
pub struct CallSample {
    pub service: &'static str,
    pub call: &'static str,
    pub latency: HistogramSnapshot,
    /// Calls that failed for the back end's sake: it was unreachable or
    /// answered with an internal fault. A missing key is an answer, not
    /// an error.
    pub errors: u64,
}

#[derive(Default)]
struct Slot {
    latency: Histogram,
    errors: AtomicU64,
}

/// The calls of one service, indexed by their wire command number.
pub(crate) struct CallTable {
    service: &'static str,
    slots: Box<[Slot]>,
    name_of: fn(usize) -> Option<&'static str>,
}

impl CallTable {
    /// A table for commands numbered below `len`, named by `name_of`.
    pub(crate) fn new(
        service: &'static str,
        len: usize,
        name_of: fn(usize) -> Option<&'static str>,
    ) -> Self {
        Self {
            service,
            slots: (0..len).map(|_| Slot::default()).collect(),
            name_of,
        }
    }

    /// Runs `call` (command number `command`), recording how long it took
    /// and whether it failed.
    pub(crate) async fn time<T>(
        &self,
        command: usize,
        call: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let started = Instant::now();
        let outcome = call.await;
        let failed = matches!(
            outcome,
            Err(StorageError::Unavailable(_) | StorageError::Internal(_))
        );
        self.observe(command, started.elapsed(), failed);
        outcome
    }

    /// Records one call of command `command` that took `elapsed`, for a
    /// call not made through [`Self::time`].
    pub(crate) fn observe(&self, command: usize, elapsed: Duration, failed: bool) {
        if let Some(slot) = self.slots.get(command) {
            slot.latency.observe(elapsed);
            if failed {
                slot.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The calls made so far.
    pub(crate) fn samples(&self) -> impl Iterator<Item = CallSample> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(command, slot)| {
                let latency = slot.latency.snapshot();
                let call = (self.name_of)(command)?;
                (latency.count > 0).then(|| CallSample {
                    service: self.service,
                    call,
                    latency,
                    errors: slot.errors.load(Ordering::Relaxed),
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(command: usize) -> Option<&'static str> {
        ["NOTHING", "FETCH"].get(command).copied()
    }

    #[test]
    fn observations_land_in_cumulative_buckets() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_micros(300));
        histogram.observe(Duration::from_millis(20));
        histogram.observe(Duration::from_secs(60));
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.count, 3);
        assert_eq!(snapshot.cumulative[0], 1, "<= 0.5 ms");
        assert_eq!(snapshot.cumulative[4], 1, "<= 10 ms");
        assert_eq!(snapshot.cumulative[5], 2, "<= 25 ms");
        assert_eq!(snapshot.cumulative[LATENCY_BUCKETS.len() - 1], 2);
        assert!((snapshot.sum_seconds - 60.0203).abs() < 1e-6);
    }

    #[tokio::test]
    async fn calls_are_timed_and_back_end_faults_counted() {
        let table = CallTable::new("om", 2, name);
        let found: Result<u8> = table.time(1, async { Ok(1) }).await;
        assert!(found.is_ok());
        let absent: Result<u8> = table.time(1, async { Err(StorageError::NoSuchKey) }).await;
        assert!(absent.is_err());
        let down: Result<u8> = table
            .time(1, async { Err(StorageError::Unavailable("down".into())) })
            .await;
        assert!(down.is_err());
        let samples: Vec<_> = table.samples().collect();
        assert_eq!(samples.len(), 1, "only calls that were made");
        assert_eq!(samples[0].service, "om");
        assert_eq!(samples[0].call, "FETCH");
        assert_eq!(samples[0].latency.count, 3);
        assert_eq!(samples[0].errors, 1, "a missing key is an answer");
    }
}
