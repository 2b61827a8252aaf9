//! Prometheus metrics: requests by operation and status class, their
//! latency, bytes in and out, requests in flight, open connections and
//! multipart uploads in progress; the storage caches' and back-end calls'
//! counters are added at render time.
//!
//! Every per-operation counter has its slot from the start (the router
//! numbers the operations), so recording a request is a few relaxed atomic
//! adds: no lock, no map, no allocation.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use storage_client::{
    CacheStats, CallSample, ClusterView, DiskUsage, Histogram, HistogramSnapshot, LATENCY_BUCKETS,
    SmallBlockUsage,
};

use crate::lifecycle;
use crate::router::{Endpoint, OPERATION_NAMES};

/// What a request is counted as: an S3 operation, the admin API, or a
/// request refused before it could be routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operation(usize);

impl Operation {
    pub const ADMIN: Self = Self(OPERATION_NAMES.len());
    pub const UNROUTED: Self = Self(OPERATION_NAMES.len() + 1);
    const COUNT: usize = OPERATION_NAMES.len() + 2;

    pub fn of(endpoint: &Endpoint) -> Self {
        Self(endpoint.index())
    }

    pub fn name(self) -> &'static str {
        match OPERATION_NAMES.get(self.0) {
            Some(name) => name,
            None if self == Self::ADMIN => "Admin",
            None => "Unrouted",
        }
    }

    fn named(name: &str) -> Self {
        Self(
            OPERATION_NAMES
                .iter()
                .position(|known| *known == name)
                .unwrap_or(Self::UNROUTED.0),
        )
    }
}

/// Status classes counted: 1xx to 5xx, and 501 on its own: a feature the
/// gateway does not offer, which a client may merely probe for, is no
/// server error for an alert on `5xx` to page about.
const CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "not_implemented"];

/// The index in [`CLASSES`] that `status` is counted under.
fn class_of(status: u16) -> usize {
    if status == 501 {
        return CLASSES.len() - 1;
    }
    usize::from(status / 100).clamp(1, 5) - 1
}

#[derive(Default)]
struct OperationStats {
    by_class: [AtomicU64; CLASSES.len()],
    latency: Histogram,
}

pub struct Metrics {
    operations: Box<[OperationStats]>,
    in_flight: AtomicI64,
    connections: AtomicI64,
    /// Shared with the request body trackers, which count as bytes arrive.
    bytes_in: Arc<AtomicU64>,
    bytes_out: AtomicU64,
    multipart_uploads: AtomicI64,
    /// What the lifecycle worker did, counted by the worker itself.
    pub lifecycle: Arc<lifecycle::worker::Counters>,
    /// The operations that start and finish a multipart upload.
    create_upload: Operation,
    finish_upload: [Operation; 2],
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            operations: (0..Operation::COUNT)
                .map(|_| OperationStats::default())
                .collect(),
            in_flight: AtomicI64::new(0),
            connections: AtomicI64::new(0),
            bytes_in: Arc::default(),
            bytes_out: AtomicU64::new(0),
            multipart_uploads: AtomicI64::new(0),
            lifecycle: Arc::default(),
            create_upload: Operation::named("CreateMultipartUpload"),
            finish_upload: [
                Operation::named("CompleteMultipartUpload"),
                Operation::named("AbortMultipartUpload"),
            ],
        }
    }
}

/// Counts a connection as open until dropped.
pub struct OpenConnection(Arc<Metrics>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    pub fn open_connection(self: &Arc<Self>) -> OpenConnection {
        self.connections.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(self))
    }

    /// A request starts being served.
    pub fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A request begun with [`Metrics::begin`] is finished: its response
    /// was sent (or abandoned) after `elapsed`.
    pub fn finish(&self, operation: Operation, status: u16, elapsed: Duration) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.count(operation, status);
        if let Some(stats) = self.operations.get(operation.0) {
            stats.latency.observe(elapsed);
        }
        if (200..300).contains(&status) {
            if operation == self.create_upload {
                self.multipart_uploads.fetch_add(1, Ordering::Relaxed);
            } else if self.finish_upload.contains(&operation) {
                self.multipart_uploads.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts a request that was refused before it was served.
    pub fn count(&self, operation: Operation, status: u16) {
        let class = class_of(status);
        if let Some(stats) = self.operations.get(operation.0) {
            stats.by_class[class].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The counter request body trackers add received bytes to.
    pub fn bytes_in(&self) -> &Arc<AtomicU64> {
        &self.bytes_in
    }

    pub fn add_bytes_out(&self, bytes: u64) {
        self.bytes_out.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The Prometheus text exposition format, with the storage caches'
    /// counters and the back-end calls made so far.
    pub fn render(&self, caches: &CacheStats, calls: &[CallSample]) -> String {
        let mut out = String::with_capacity(16 << 10);
        family(
            &mut out,
            "s3gw_build_info",
            "gauge",
            "The running version (always 1).",
        );
        let _ = writeln!(
            out,
            "s3gw_build_info{{version=\"{}\",commit=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION"),
            env!("S3GW_COMMIT")
        );
        self.render_requests(&mut out);
        for (name, kind, help, value) in [
            (
                "s3gw_requests_in_flight",
                "gauge",
                "Requests being served, until their response body is sent.",
                self.in_flight.load(Ordering::Relaxed),
            ),
            (
                "s3gw_connections_open",
                "gauge",
                "Client connections open.",
                self.connections.load(Ordering::Relaxed),
            ),
            (
                "s3gw_multipart_uploads_in_progress",
                "gauge",
                "Multipart uploads created through this process minus those completed or aborted through it.",
                self.multipart_uploads.load(Ordering::Relaxed),
            ),
        ] {
            family(&mut out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
        for (name, help, value) in [
            (
                "s3gw_received_bytes_total",
                "Request body bytes received.",
                self.bytes_in.load(Ordering::Relaxed),
            ),
            (
                "s3gw_sent_bytes_total",
                "Response body bytes sent.",
                self.bytes_out.load(Ordering::Relaxed),
            ),
        ] {
            family(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {value}");
        }
        self.render_lifecycle(&mut out);
        render_caches(&mut out, caches);
        render_calls(&mut out, calls);
        out
    }

    fn render_lifecycle(&self, out: &mut String) {
        let counters = &self.lifecycle;
        for (name, help, value) in [
            (
                "s3gw_lifecycle_passes_total",
                "Passes of the lifecycle worker over every bucket.",
                &counters.passes,
            ),
            (
                "s3gw_lifecycle_expired_objects_total",
                "Objects the lifecycle worker deleted as expired.",
                &counters.expired_objects,
            ),
            (
                "s3gw_lifecycle_expired_versions_total",
                "Noncurrent versions and delete markers the lifecycle worker removed.",
                &counters.expired_versions,
            ),
            (
                "s3gw_lifecycle_aborted_uploads_total",
                "Multipart uploads the lifecycle worker aborted.",
                &counters.aborted_uploads,
            ),
            (
                "s3gw_lifecycle_failed_buckets_total",
                "Bucket passes of the lifecycle worker that stopped on an error.",
                &counters.failed_buckets,
            ),
        ] {
            family(out, name, "counter", help);
            let _ = writeln!(out, "{name} {}", value.load(Ordering::Relaxed));
        }
    }

    fn render_requests(&self, out: &mut String) {
        family(
            out,
            "s3gw_requests_total",
            "counter",
            "Requests by operation and HTTP status class.",
        );
        for (index, stats) in self.operations.iter().enumerate() {
            let operation = Operation(index).name();
            for (class, counter) in CLASSES.iter().zip(&stats.by_class) {
                let count = counter.load(Ordering::Relaxed);
                if count > 0 {
                    let _ = writeln!(
                        out,
                        "s3gw_requests_total{{operation=\"{operation}\",class=\"{class}\"}} {count}"
                    );
                }
            }
        }
        let name = "s3gw_request_duration_seconds";
        family(
            out,
            name,
            "histogram",
            "Time from a request's arrival to the end of its response body, by operation.",
        );
        for (index, stats) in self.operations.iter().enumerate() {
            let latency = stats.latency.snapshot();
            if latency.count > 0 {
                let labels = format!("operation=\"{}\"", Operation(index).name());
                histogram(out, name, &labels, &latency);
            }
        }
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn histogram(out: &mut String, name: &str, labels: &str, latency: &HistogramSnapshot) {
    for (bound, count) in LATENCY_BUCKETS.iter().zip(latency.cumulative) {
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {count}");
    }
    let count = latency.count;
    let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {count}");
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", latency.sum_seconds);
    let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
}

/// Hits, misses and evictions of each storage cache.
fn render_caches(out: &mut String, stats: &CacheStats) {
    for (what, help) in [
        ("hits", "Cache answers given without a back-end call."),
        ("misses", "Cache misses: back-end loads."),
        ("evictions", "Cache entries dropped for capacity or age."),
    ] {
        let name = format!("s3gw_cache_{what}_total");
        family(out, &name, "counter", help);
        for (cache, counters) in stats.by_name() {
            let value = match what {
                "hits" => counters.hits,
                "misses" => counters.misses,
                _ => counters.evictions,
            };
            let _ = writeln!(out, "{name}{{cache=\"{cache}\"}} {value}");
        }
    }
}

/// What the embedded store keeps as database rows: small objects kept with
/// their key (`om.redb`) and the DN's small blocks (`dn.redb`); the other
/// blocks are files under the data dir.
pub fn render_small_blocks(out: &mut String, usage: SmallBlockUsage) {
    gauges(
        out,
        [
            (
                "s3gw_small_blocks",
                "Blocks kept as database rows (with their key, or in the DN's small-block store).",
                usage.blocks,
            ),
            (
                "s3gw_small_block_bytes",
                "Bytes of the blocks kept as database rows.",
                usage.bytes,
            ),
        ],
    );
}

/// The file system under the embedded data dir: its size and what is left.
pub fn render_disk(out: &mut String, usage: DiskUsage) {
    gauges(
        out,
        [
            (
                "s3gw_data_dir_filesystem_bytes",
                "Size of the file system holding the embedded data dir.",
                usage.total_bytes,
            ),
            (
                "s3gw_data_dir_available_bytes",
                "Bytes of that file system the gateway can still write.",
                usage.available_bytes,
            ),
        ],
    );
}

/// What the gateway sees of the Ozone cluster: which OM it believes leads,
/// and whether each datanode it has called answered its last call.
pub fn render_cluster(out: &mut String, view: &ClusterView) {
    let name = "s3gw_ozone_om_leader";
    family(
        out,
        name,
        "gauge",
        "1 for the OM the gateway believes leads its ring (the last to take a command), 0 for the others.",
    );
    for address in &view.oms {
        let leads = u8::from(view.om_leader.as_ref() == Some(address));
        let _ = writeln!(
            out,
            "{name}{{address=\"{}\"}} {leads}",
            label_value(address)
        );
    }
    let name = "s3gw_ozone_datanode_reachable";
    family(
        out,
        name,
        "gauge",
        "1 if the gateway's last call to this datanode got an answer; datanodes called since the start only.",
    );
    for node in &view.datanodes {
        let _ = writeln!(
            out,
            "{name}{{datanode=\"{}\",host=\"{}\"}} {}",
            label_value(&node.uuid),
            label_value(&node.host),
            u8::from(node.reachable)
        );
    }
}

/// A label value as the text format escapes it.
fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Gauges without labels: (name, help, value).
fn gauges<const N: usize>(out: &mut String, list: [(&str, &str, u64); N]) {
    for (name, help, value) in list {
        family(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {value}");
    }
}

/// Latency and errors of each kind of back-end call made so far.
fn render_calls(out: &mut String, calls: &[CallSample]) {
    let name = "s3gw_backend_call_duration_seconds";
    family(
        out,
        name,
        "histogram",
        "Back-end calls (service om, dn or ratis) by wire command, retries and failover included.",
    );
    for sample in calls {
        let labels = format!("service=\"{}\",call=\"{}\"", sample.service, sample.call);
        histogram(out, name, &labels, &sample.latency);
    }
    let name = "s3gw_backend_call_errors_total";
    family(
        out,
        name,
        "counter",
        "Back-end calls that failed: unreachable, timed out or an internal fault.",
    );
    for sample in calls {
        let _ = writeln!(
            out,
            "{name}{{service=\"{}\",call=\"{}\"}} {}",
            sample.service, sample.call, sample.errors
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(metrics: &Metrics) -> String {
        metrics.render(&CacheStats::default(), &[])
    }

    #[test]
    fn the_cluster_view_names_the_leader_and_each_datanode_seen() {
        let view = ClusterView {
            oms: vec!["om1:9862".into(), "om2:9862".into()],
            om_leader: Some("om2:9862".into()),
            datanodes: vec![storage_client::DatanodeSeen {
                uuid: "u-1".into(),
                host: "dn\"1".into(),
                reachable: false,
            }],
        };
        let mut text = String::new();
        render_cluster(&mut text, &view);
        for line in [
            "s3gw_ozone_om_leader{address=\"om1:9862\"} 0\n",
            "s3gw_ozone_om_leader{address=\"om2:9862\"} 1\n",
            "s3gw_ozone_datanode_reachable{datanode=\"u-1\",host=\"dn\\\"1\"} 0\n",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
    }

    #[test]
    fn requests_are_counted_by_operation_and_status_class() {
        let metrics = Metrics::default();
        let get = Operation::named("GetObject");
        for status in [200, 206, 404] {
            metrics.begin();
            metrics.finish(get, status, Duration::from_millis(3));
        }
        metrics.count(Operation::UNROUTED, 400);
        let put_acl = Operation::named("PutObjectAcl");
        metrics.count(put_acl, 501);
        metrics.count(put_acl, 503);
        let text = render(&metrics);
        for line in [
            "s3gw_requests_total{operation=\"PutObjectAcl\",class=\"not_implemented\"} 1\n",
            "s3gw_requests_total{operation=\"PutObjectAcl\",class=\"5xx\"} 1\n",
            "s3gw_requests_total{operation=\"GetObject\",class=\"2xx\"} 2\n",
            "s3gw_requests_total{operation=\"GetObject\",class=\"4xx\"} 1\n",
            "s3gw_requests_total{operation=\"Unrouted\",class=\"4xx\"} 1\n",
            "s3gw_request_duration_seconds_bucket{operation=\"GetObject\",le=\"0.0025\"} 0\n",
            "s3gw_request_duration_seconds_bucket{operation=\"GetObject\",le=\"0.005\"} 3\n",
            "s3gw_request_duration_seconds_count{operation=\"GetObject\"} 3\n",
            "s3gw_requests_in_flight 0\n",
        ] {
            assert!(text.contains(line), "{line} missing from {text}");
        }
        assert!(
            !text.contains("s3gw_request_duration_seconds_count{operation=\"Unrouted\"}"),
            "a refused request was never served"
        );
    }

    #[test]
    fn multipart_uploads_in_progress_follow_successful_creates_and_finishes() {
        let metrics = Metrics::default();
        for (operation, status) in [
            ("CreateMultipartUpload", 200),
            ("CreateMultipartUpload", 200),
            ("CreateMultipartUpload", 403),
            ("CompleteMultipartUpload", 200),
            ("AbortMultipartUpload", 404),
        ] {
            metrics.begin();
            metrics.finish(Operation::named(operation), status, Duration::ZERO);
        }
        assert!(render(&metrics).contains("s3gw_multipart_uploads_in_progress 1\n"));
    }

    #[test]
    fn connections_are_open_until_dropped() {
        let metrics = Arc::new(Metrics::default());
        let first = metrics.open_connection();
        let _second = metrics.open_connection();
        assert!(render(&metrics).contains("s3gw_connections_open 2\n"));
        drop(first);
        assert!(render(&metrics).contains("s3gw_connections_open 1\n"));
    }

    #[test]
    fn every_operation_has_its_own_name() {
        assert_eq!(Operation::ADMIN.name(), "Admin");
        assert_eq!(Operation::UNROUTED.name(), "Unrouted");
        assert_eq!(Operation::named("PutObject").name(), "PutObject");
        assert_eq!(Operation::named("NoSuchOperation"), Operation::UNROUTED);
    }
}
