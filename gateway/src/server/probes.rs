//! `/health`, `/ready` and `/metrics` for load balancers and Prometheus.
//!
//! These paths are also valid S3 paths (buckets named health, ready or
//! metrics), so they are answered here only for an unauthenticated GET: a
//! signed or presigned request always goes to S3.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};

use crate::state::AppState;

use super::metrics::{Metrics, render_caches};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Health,
    Ready,
    Metrics,
}

/// Which probe a request asks for, if it is one.
pub fn probe_of(request: &Request) -> Option<Probe> {
    if request.method() != Method::GET || request.headers().contains_key(header::AUTHORIZATION) {
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
    match request.uri().path() {
        "/health" => Some(Probe::Health),
        "/ready" => Some(Probe::Ready),
        "/metrics" => Some(Probe::Metrics),
        _ => None,
    }
}

/// How long `/ready` waits for storage. A back end that has not answered
/// by then is as good as down to a load balancer, and a short bound keeps a
/// dead Ozone Manager (with its client's retries) from stalling the probe.
/// Generous next to a healthy answer (milliseconds) so load does not flap it.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn answer(probe: Probe, state: &AppState, metrics: &Metrics) -> Response {
    match probe {
        Probe::Health => text(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into()),
        // One small read that reaches the back end (the OM on Ozone) every
        // time, never a scan: probes come many times a minute.
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
            let mut page = metrics.render();
            render_caches(&mut page, &state.storage.cache_stats());
            text(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                page,
            )
        }
    }
}

fn text(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
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

    #[test]
    fn only_unauthenticated_gets_are_probes() {
        assert_eq!(
            probe_of(&request(Method::GET, "/health", false)),
            Some(Probe::Health)
        );
        assert_eq!(
            probe_of(&request(Method::GET, "/ready", false)),
            Some(Probe::Ready)
        );
        assert_eq!(
            probe_of(&request(Method::GET, "/metrics?x=1", false)),
            Some(Probe::Metrics)
        );
        assert_eq!(probe_of(&request(Method::GET, "/health", true)), None);
        assert_eq!(probe_of(&request(Method::PUT, "/health", false)), None);
        assert_eq!(probe_of(&request(Method::HEAD, "/health", false)), None);
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
