//! `/health`, `/ready` and `/metrics` for load balancers and Prometheus.
//!
//! These paths are also valid S3 paths (buckets named health, ready or
//! metrics), so they are answered here only for an unauthenticated GET or
//! HEAD (many load balancers probe with HEAD): a signed or presigned
//! request always goes to S3.

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};

use super::Shared;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Health,
    Ready,
    Metrics,
}

/// A probe and whether it came as HEAD (answered like GET, without the body).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeRequest {
    pub probe: Probe,
    pub head: bool,
}

/// Which probe a request asks for, if it is one.
pub fn probe_of(request: &Request) -> Option<ProbeRequest> {
    let head = match *request.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => return None,
    };
    if request.headers().contains_key(header::AUTHORIZATION) {
        return None;
    }
    let presigned = request.uri().query().is_some_and(|query| {
        query.split('&').any(|pair| {
            let name = pair.split_once('=').map_or(pair, |(name, _)| name);
            matches!(
                name,
                "X-Amz-Credential" | "X-Amz-Signature" | "AWSAccessKeyId" | "Signature"
            )
        })
    });
    if presigned {
        return None;
    }
    let probe = match request.uri().path() {
        "/health" => Probe::Health,
        "/ready" => Probe::Ready,
        "/metrics" => Probe::Metrics,
        _ => return None,
    };
    Some(ProbeRequest { probe, head })
}

/// How long `/ready` waits for storage. A back end that has not answered
/// by then is as good as down to a load balancer, and a short bound keeps a
/// dead Ozone Manager (with its client's retries) from stalling the probe.
/// Generous next to a healthy answer (milliseconds) so load does not flap it.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

pub(super) async fn answer(request: ProbeRequest, shared: &Shared) -> Response {
    let mut response = answer_get(request.probe, shared).await;
    if request.head {
        // The GET answer's headers (Content-Length included), no body.
        *response.body_mut() = Body::empty();
    }
    response
}

async fn answer_get(probe: Probe, shared: &Shared) -> Response {
    let state = &shared.app;
    match probe {
        Probe::Health => text(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into()),
        // One small read that reaches the back end (the OM on Ozone) every
        // time, never a scan: probes come many times a minute.
        // A draining gateway is taken out of its balancer first.
        Probe::Ready if shared.draining.load(Ordering::Relaxed) => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain; charset=utf-8",
            "draining\n".into(),
        ),
        Probe::Ready => {
            let check = tokio::time::timeout(READY_TIMEOUT, state.storage.ready());
            let failure = match check.await {
                Ok(Ok(_)) => {
                    return text(
                        StatusCode::OK,
                        "text/plain; charset=utf-8",
                        "ready\n".into(),
                    );
                }
                Ok(Err(e)) => e.to_string(),
                Err(_elapsed) => format!("no answer within {READY_TIMEOUT:?}"),
            };
            tracing::warn!(error = %failure, "readiness check failed");
            text(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain; charset=utf-8",
                "storage unavailable\n".into(),
            )
        }
        Probe::Metrics => {
            let mut page = shared
                .metrics
                .render(&state.storage.cache_stats(), &state.storage.call_stats());
            if let Some(usage) = state.storage.small_block_usage() {
                super::metrics::render_small_blocks(&mut page, usage);
            }
            if let Some(usage) = state.storage.disk_usage() {
                super::metrics::render_disk(&mut page, usage);
            }
            if let Some(view) = state.storage.cluster_view() {
                super::metrics::render_cluster(&mut page, &view);
            }
            text(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                page,
            )
        }
    }
}

fn text(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, length);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, uri: &str, authorization: bool) -> Request {
        let mut builder = http::Request::builder().method(method).uri(uri);
        if authorization {
            builder = builder.header(header::AUTHORIZATION, "AWS4-HMAC-SHA256 Credential=x");
        }
        builder.body(Body::empty()).expect("valid request")
    }

    fn get(probe: Probe) -> Option<ProbeRequest> {
        Some(ProbeRequest { probe, head: false })
    }

    #[test]
    fn only_unauthenticated_gets_and_heads_are_probes() {
        assert_eq!(
            probe_of(&request(Method::GET, "/health", false)),
            get(Probe::Health)
        );
        assert_eq!(
            probe_of(&request(Method::GET, "/ready", false)),
            get(Probe::Ready)
        );
        assert_eq!(
            probe_of(&request(Method::GET, "/metrics?x=1", false)),
            get(Probe::Metrics)
        );
        for (path, probe) in [("/health", Probe::Health), ("/ready", Probe::Ready)] {
            assert_eq!(
                probe_of(&request(Method::HEAD, path, false)),
                Some(ProbeRequest { probe, head: true })
            );
        }
        assert_eq!(probe_of(&request(Method::HEAD, "/health", true)), None);
        assert_eq!(probe_of(&request(Method::GET, "/health", true)), None);
        assert_eq!(probe_of(&request(Method::PUT, "/health", false)), None);
        assert_eq!(probe_of(&request(Method::GET, "/health/x", false)), None);
        assert_eq!(
            probe_of(&request(
                Method::GET,
                "/health?X-Amz-Credential=a&X-Amz-Signature=b",
                false
            )),
            None
        );
    }
}
