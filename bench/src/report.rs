//! What the user sees: the first few errors as they happen, then the
//! results as a table or as JSON.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::stats::Summary;

/// How many errors are printed in full; the rest are only counted.
const PRINTED_ERRORS: u64 = 5;

/// Prints the first errors of a run to stderr.
#[derive(Default)]
pub struct ErrorLog {
    seen: AtomicU64,
}

impl ErrorLog {
    pub fn report(&self, op: &str, key: &str, error: &dyn std::fmt::Display) {
        let seen = self.seen.fetch_add(1, Ordering::Relaxed);
        if seen < PRINTED_ERRORS {
            eprintln!("error: {op} {key}: {error}");
        } else if seen == PRINTED_ERRORS {
            eprintln!("error: further errors are counted but not printed");
        }
    }
}

/// The whole result of one run, as printed with `--json`.
#[derive(Debug, Serialize)]
pub struct RunReport {
    pub mode: String,
    pub endpoint: String,
    pub bucket: String,
    pub concurrency: usize,
    pub object_size: u64,
    pub objects: usize,
    pub seconds: f64,
    /// GETs that returned other bytes than written; only with `--verify`.
    pub wrong_bytes: Option<u64>,
    pub results: Vec<Summary>,
}

impl RunReport {
    pub fn table(&self) -> String {
        let mut out = format!(
            "{} against {}: concurrency {}, object size {}, {:.1} s\n",
            self.mode,
            self.endpoint,
            self.concurrency,
            crate::units::format_size(self.object_size),
            self.seconds
        );
        out.push_str(&format!(
            "{:<9} {:>9} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7}\n",
            "op", "ops", "ops/s", "MiB/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors"
        ));
        for row in &self.results {
            out.push_str(&format!(
                "{:<9} {:>9} {:>10.1} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7}\n",
                row.op,
                row.ops,
                row.ops_per_sec,
                row.mib_per_sec,
                row.p50_ms,
                row.p90_ms,
                row.p99_ms,
                row.max_ms,
                row.errors
            ));
        }
        if let Some(wrong) = self.wrong_bytes {
            out.push_str(&format!(
                "every GET verified: {wrong} returned wrong bytes\n"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_one_line_per_result() {
        let report = RunReport {
            mode: "get".into(),
            endpoint: "http://127.0.0.1:9878".into(),
            bucket: "b".into(),
            concurrency: 20,
            object_size: 4096,
            objects: 100,
            seconds: 10.0,
            wrong_bytes: None,
            results: vec![Summary {
                op: "GET".into(),
                ops: 12345,
                errors: 0,
                ops_per_sec: 1234.5,
                mib_per_sec: 4.82,
                p50_ms: 1.5,
                p90_ms: 2.0,
                p99_ms: 3.25,
                max_ms: 9.0,
            }],
        };
        let table = report.table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].contains("object size 4 KiB"), "{}", lines[0]);
        assert!(lines[2].starts_with("GET"), "{}", lines[2]);
        assert!(lines[2].contains("1234.5"), "{}", lines[2]);
        assert!(lines[2].contains("3.25"), "{}", lines[2]);
    }
}
