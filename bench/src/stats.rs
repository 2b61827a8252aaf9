//! Per-operation results and their summary: throughput and latency
//! percentiles, computed from every recorded latency (no sampling), so p99
//! and max are exact for the run.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

/// What one operation kind recorded during the timed phase.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    /// Latency of each successful operation, in microseconds.
    latencies_us: Vec<u64>,
    /// Object bytes moved by successful operations.
    bytes: u64,
    errors: u64,
}

impl Samples {
    pub fn record_success(&mut self, latency: Duration, bytes: u64) {
        self.latencies_us
            .push(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX));
        self.bytes += bytes;
    }

    pub fn record_error(&mut self) {
        self.errors += 1;
    }

    pub fn merge(&mut self, other: Samples) {
        self.latencies_us.extend(other.latencies_us);
        self.bytes += other.bytes;
        self.errors += other.errors;
    }
}

/// The summary of one operation kind over the timed phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub op: String,
    pub ops: u64,
    pub errors: u64,
    pub ops_per_sec: f64,
    pub mib_per_sec: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    pub fn new(op: &str, mut samples: Samples, elapsed: Duration) -> Self {
        samples.latencies_us.sort_unstable();
        let sorted = &samples.latencies_us;
        let seconds = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        let ms = |us: u64| us as f64 / 1000.0;
        Self {
            op: op.to_string(),
            ops: sorted.len() as u64,
            errors: samples.errors,
            ops_per_sec: sorted.len() as f64 / seconds,
            mib_per_sec: samples.bytes as f64 / (1024.0 * 1024.0) / seconds,
            p50_ms: ms(percentile(sorted, 50.0)),
            p90_ms: ms(percentile(sorted, 90.0)),
            p99_ms: ms(percentile(sorted, 99.0)),
            max_ms: ms(sorted.last().copied().unwrap_or(0)),
        }
    }
}

/// Summaries per operation kind, then a total row when there is more than
/// one kind (the mixed mode).
pub fn summarize(by_op: BTreeMap<&'static str, Samples>, elapsed: Duration) -> Vec<Summary> {
    let mut rows = Vec::new();
    let mut total = Samples::default();
    let kinds = by_op.len();
    for (op, samples) in by_op {
        if kinds > 1 {
            total.merge(samples.clone());
        }
        rows.push(Summary::new(op, samples, elapsed));
    }
    if kinds > 1 {
        rows.push(Summary::new("TOTAL", total, elapsed));
    }
    rows
}

/// The nearest-rank percentile of an ascending slice: the smallest value
/// with at least `p` percent of the values at or below it; 0 when empty.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50.0), 50);
        assert_eq!(percentile(&values, 90.0), 90);
        assert_eq!(percentile(&values, 99.0), 99);
        assert_eq!(percentile(&values, 100.0), 100);
        assert_eq!(percentile(&values, 0.0), 1);

        let few = [10, 20, 30, 40];
        assert_eq!(percentile(&few, 50.0), 20);
        assert_eq!(percentile(&few, 51.0), 30);
        assert_eq!(percentile(&few, 99.0), 40);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn summary_counts_throughput_and_latency() {
        let mut samples = Samples::default();
        for ms in [4u64, 1, 3, 2] {
            samples.record_success(Duration::from_millis(ms), 1 << 20);
        }
        samples.record_error();
        let summary = Summary::new("GET", samples, Duration::from_secs(2));
        assert_eq!(summary.ops, 4);
        assert_eq!(summary.errors, 1);
        assert_eq!(summary.ops_per_sec, 2.0);
        assert_eq!(summary.mib_per_sec, 2.0);
        assert_eq!(summary.p50_ms, 2.0);
        assert_eq!(summary.p90_ms, 4.0);
        assert_eq!(summary.max_ms, 4.0);
    }

    #[test]
    fn mixed_runs_get_a_total_row() {
        let mut get = Samples::default();
        get.record_success(Duration::from_millis(1), 10);
        let mut put = Samples::default();
        put.record_success(Duration::from_millis(3), 30);
        put.record_error();
        let rows = summarize(
            BTreeMap::from([("GET", get.clone()), ("PUT", put)]),
            Duration::from_secs(1),
        );
        let names: Vec<&str> = rows.iter().map(|row| row.op.as_str()).collect();
        assert_eq!(names, ["GET", "PUT", "TOTAL"]);
        assert_eq!(rows[2].ops, 2);
        assert_eq!(rows[2].errors, 1);
        assert_eq!(rows[2].max_ms, 3.0);

        let single = summarize(BTreeMap::from([("GET", get)]), Duration::from_secs(1));
        assert_eq!(single.len(), 1);
    }
}
