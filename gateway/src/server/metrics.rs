//! Prometheus counters: requests by operation and status, requests in
//! flight, and body bytes in and out. Plain atomics; the per-(operation,
//! status) map takes its write lock only the first time a pair is seen.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use storage_client::CacheStats;

#[derive(Default)]
pub struct Metrics {
    requests: RwLock<BTreeMap<(&'static str, u16), AtomicU64>>,
    in_flight: Arc<AtomicI64>,
    bytes_in: Arc<AtomicU64>,
    bytes_out: Arc<AtomicU64>,
}

/// Counts a request as in flight until dropped.
pub struct InFlight(Arc<AtomicI64>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    pub fn start_request(&self) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(Arc::clone(&self.in_flight))
    }

    pub fn record(&self, operation: &'static str, status: u16) {
        let key = (operation, status);
        // A poisoned lock only means another thread panicked mid-increment;
        // the counters are still usable.
        {
            let map = self.requests.read().unwrap_or_else(|e| e.into_inner());
            if let Some(counter) = map.get(&key) {
                counter.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut map = self.requests.write().unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_default().fetch_add(1, Ordering::Relaxed);
    }

    /// Wraps a request body so the bytes read from it are counted.
    pub fn count_in(&self, body: Body) -> Body {
        Body::new(Counted {
            inner: body,
            counter: Arc::clone(&self.bytes_in),
            _in_flight: None,
        })
    }

    /// Wraps a response body so the bytes sent are counted and the request
    /// stays in flight until its body is finished or dropped.
    pub fn count_out(&self, body: Body, in_flight: InFlight) -> Body {
        Body::new(Counted {
            inner: body,
            counter: Arc::clone(&self.bytes_out),
            _in_flight: Some(in_flight),
        })
    }

    /// The Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(1024);
        out.push_str("# HELP s3gw_requests_total S3 requests by operation and HTTP status.\n");
        out.push_str("# TYPE s3gw_requests_total counter\n");
        {
            let map = self.requests.read().unwrap_or_else(|e| e.into_inner());
            for ((operation, status), count) in map.iter() {
                let _ = writeln!(
                    out,
                    "s3gw_requests_total{{operation=\"{operation}\",status=\"{status}\"}} {}",
                    count.load(Ordering::Relaxed)
                );
            }
        }
        let mut single = |name: &str, kind: &str, help: &str, value: String| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        single(
            "s3gw_requests_in_flight",
            "gauge",
            "S3 requests being served.",
            self.in_flight.load(Ordering::Relaxed).to_string(),
        );
        single(
            "s3gw_received_bytes_total",
            "counter",
            "Request body bytes received.",
            self.bytes_in.load(Ordering::Relaxed).to_string(),
        );
        single(
            "s3gw_sent_bytes_total",
            "counter",
            "Response body bytes sent.",
            self.bytes_out.load(Ordering::Relaxed).to_string(),
        );
        out
    }
}

/// Appends the storage caches' counters (hits, misses, evictions of each
/// cache) to a [`Metrics::render`] page.
pub fn render_caches(out: &mut String, stats: &CacheStats) {
    for (what, help) in [
        ("hits", "Cache answers given without a back-end call."),
        ("misses", "Cache misses: back-end loads."),
        ("evictions", "Cache entries dropped for capacity or age."),
    ] {
        let name = format!("s3gw_cache_{what}_total");
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
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

/// A body that adds the length of every data frame to a counter.
struct Counted {
    inner: Body,
    counter: Arc<AtomicU64>,
    _in_flight: Option<InFlight>,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.counter.fetch_add(data.len() as u64, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[test]
    fn requests_are_counted_by_operation_and_status() {
        let metrics = Metrics::default();
        metrics.record("GetObject", 200);
        metrics.record("GetObject", 200);
        metrics.record("GetObject", 404);
        let text = metrics.render();
        assert!(
            text.contains("s3gw_requests_total{operation=\"GetObject\",status=\"200\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("s3gw_requests_total{operation=\"GetObject\",status=\"404\"} 1\n"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn bodies_are_counted_and_hold_the_request_in_flight() {
        let metrics = Metrics::default();
        let in_flight = metrics.start_request();
        assert!(metrics.render().contains("s3gw_requests_in_flight 1\n"));
        let incoming = metrics.count_in(Body::from("hello"));
        let read = incoming.collect().await.expect("body").to_bytes();
        assert_eq!(read.len(), 5);
        let outgoing = metrics.count_out(Body::from("hello world"), in_flight);
        assert!(
            metrics.render().contains("s3gw_requests_in_flight 1\n"),
            "still streaming"
        );
        let sent = outgoing.collect().await.expect("body").to_bytes();
        assert_eq!(sent.len(), 11);
        let text = metrics.render();
        assert!(text.contains("s3gw_received_bytes_total 5\n"), "{text}");
        assert!(text.contains("s3gw_sent_bytes_total 11\n"), "{text}");
        assert!(text.contains("s3gw_requests_in_flight 0\n"), "{text}");
    }
}
