//! A request's record, from its arrival to the end of its response body:
//! the body wrapper counts the bytes sent, and when it ends (or is dropped,
//! or the request is abandoned before answering) the record is added to the
//! metrics and, unless turned off, written as the request's one access log
//! line (target `s3_gateway::access`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use http::Method;
use http_body_util::BodyExt;

use super::body_tracker::ReadTracker;
use super::metrics::{Metrics, Operation};

/// The status logged and counted for a request whose client went away
/// before it was answered (nginx's convention).
const CLIENT_CLOSED: u16 = 499;

pub struct RequestRecord {
    metrics: Arc<Metrics>,
    started: Instant,
    pub operation: Operation,
    pub status: u16,
    bytes_out: u64,
    /// The request body's bytes, once it is tracked.
    pub body: Option<ReadTracker>,
    /// What the access log line needs beyond the counters; `None` when the
    /// access log is off, so nothing is copied for it.
    pub access: Option<AccessEntry>,
}

pub struct AccessEntry {
    pub request_id: String,
    pub method: Method,
    pub bucket: Option<String>,
    /// The access key id the request's signature proved; none when
    /// anonymous or refused before that.
    pub access_key: Option<String>,
    /// The connection's peer, or the client a trusted proxy forwarded
    /// (see [`crate::client_address`]).
    pub client: Option<IpAddr>,
}

impl RequestRecord {
    /// A request arrives: it counts as in flight until the record is dropped.
    pub fn start(metrics: &Arc<Metrics>, access: Option<AccessEntry>) -> Self {
        metrics.begin();
        Self {
            metrics: Arc::clone(metrics),
            started: Instant::now(),
            operation: Operation::UNROUTED,
            status: CLIENT_CLOSED,
            bytes_out: 0,
            body: None,
            access,
        }
    }

    /// Wraps the response body, counting the bytes sent; the record is
    /// finished when the body ends or is dropped.
    pub fn into_body(mut self, body: Body) -> Body {
        Body::new(body.map_frame(move |frame| {
            if let Some(data) = frame.data_ref() {
                let len = data.len() as u64;
                self.bytes_out += len;
                self.metrics.add_bytes_out(len);
            }
            frame
        }))
    }
}

/// A client's address as the access log writes it: its IP, `-` if unknown
/// (written straight into the line, no string of its own).
struct Client(Option<IpAddr>);

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(address) => address.fmt(f),
            None => f.write_str("-"),
        }
    }
}

impl Drop for RequestRecord {
    fn drop(&mut self) {
        let elapsed = self.started.elapsed();
        self.metrics.finish(self.operation, self.status, elapsed);
        if let Some(access) = &self.access {
            tracing::info!(
                target: "s3_gateway::access",
                request_id = %access.request_id,
                method = %access.method,
                operation = self.operation.name(),
                bucket = access.bucket.as_deref().unwrap_or("-"),
                access_key = access.access_key.as_deref().unwrap_or("-"),
                client = %Client(access.client),
                status = self.status,
                bytes_in = self.body.as_ref().map_or(0, ReadTracker::bytes),
                bytes_out = self.bytes_out,
                duration_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                "request"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use storage_client::CacheStats;

    use super::*;

    fn page(metrics: &Metrics) -> String {
        metrics.render(&CacheStats::default(), &[])
    }

    #[tokio::test]
    async fn a_request_is_in_flight_until_its_body_is_sent() {
        let metrics = Arc::new(Metrics::default());
        let mut record = RequestRecord::start(&metrics, None);
        assert!(page(&metrics).contains("s3gw_requests_in_flight 1\n"));
        record.operation = Operation::ADMIN;
        record.status = 200;
        let body = record.into_body(Body::from("hello world"));
        assert!(
            page(&metrics).contains("s3gw_requests_in_flight 1\n"),
            "still streaming"
        );
        let sent = body.collect().await.expect("body").to_bytes();
        assert_eq!(sent.len(), 11);
        let text = page(&metrics);
        assert!(text.contains("s3gw_sent_bytes_total 11\n"), "{text}");
        assert!(text.contains("s3gw_requests_in_flight 0\n"), "{text}");
        assert!(
            text.contains("s3gw_requests_total{operation=\"Admin\",class=\"2xx\"} 1\n"),
            "{text}"
        );
    }

    #[test]
    fn an_abandoned_request_counts_as_closed_by_the_client() {
        let metrics = Arc::new(Metrics::default());
        drop(RequestRecord::start(&metrics, None));
        let text = page(&metrics);
        assert!(text.contains("s3gw_requests_in_flight 0\n"), "{text}");
        assert!(
            text.contains("s3gw_requests_total{operation=\"Unrouted\",class=\"4xx\"} 1\n"),
            "{text}"
        );
    }
}
