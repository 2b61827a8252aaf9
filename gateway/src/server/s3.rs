//! Every request that is not a probe: request ids and S3 headers on every
//! response, then route -> dispatch (or the admin API), with
//! errors rendered as S3 XML and a panic turned into a 500, never a dropped
//! connection.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::request::Parts;
use http::{HeaderName, HeaderValue, Method, Version, header};

use crate::admin;
use crate::console::Console;
use crate::error::S3Error;
use crate::state::AppState;
use crate::{ops, router};

use super::connections::Overflow;
use super::metrics::Operation;
use super::probes::Probe;
use super::request_record::{AccessEntry, RequestRecord};
use super::{Shared, body_tracker, probes, request_limits};
use crate::client_address::ClientAddr;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-amz-request-id");
const EXTENDED_ID: HeaderName = HeaderName::from_static("x-amz-id-2");
const SERVER_NAME: HeaderValue = HeaderValue::from_static("s3-gateway");

pub(super) async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let request_id = shared.ids.next();
    let probe = probes::probe_of(&request);
    let overflow = request.extensions().get::<Overflow>().is_some();
    let refusal = request_limits::check(request.uri(), request.headers(), &shared.app.limits)
        .err()
        .or_else(|| {
            let health = probe.is_some_and(|p| p.probe == Probe::Health);
            (overflow && !health).then(S3Error::slow_down)
        });
    if refusal.is_none()
        && let Some(probe) = probe
    {
        let mut response = probes::answer(probe, &shared).await;
        stamp(&mut response, &request_id.id, &request_id.extended);
        // The overflow lane answers once, then closes.
        if overflow && request.version() <= Version::HTTP_11 {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        return response;
    }

    // Probes aside, every request is recorded from here on, even if its
    // client goes away before the answer.
    let access = shared.app.access_log.then(|| AccessEntry {
        request_id: request_id.id.clone(),
        method: request.method().clone(),
        bucket: None,
        access_key: None,
        client: request.extensions().get::<ClientAddr>().map(|peer| {
            let trusted = &shared.app.trusted_proxies;
            trusted.client(peer.0.ip(), request.headers())
        }),
    });
    let mut record = RequestRecord::start(&shared.metrics, access);
    if let Some(error) = refusal {
        record.status = error.status.as_u16();
        let mut response = error.into_response(request.uri().path(), &request_id.id);
        stamp(&mut response, &request_id.id, &request_id.extended);
        // The body was not read: an HTTP/1.1 connection cannot go on.
        if request.version() <= Version::HTTP_11 {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        let (response_parts, body) = response.into_parts();
        return Response::from_parts(response_parts, record.into_body(body));
    }

    let (parts, body) = request.into_parts();
    let (body, body_read) = body_tracker::track(body, shared.metrics.bytes_in());
    let (served, mut response) = render(
        serve(
            &shared.app,
            shared.console.as_ref(),
            &parts,
            body,
            record.access.is_some(),
        ),
        &parts,
        &request_id.id,
    )
    .await;
    let status = response.status();
    record.operation = served.operation;
    record.status = status.as_u16();
    if let Some(access) = &mut record.access {
        access.bucket = served.bucket;
        access.access_key = served.caller;
    }

    stamp(&mut response, &request_id.id, &request_id.extended);
    // An unread HTTP/1 body leaves the connection unusable: say so.
    if parts.version <= Version::HTTP_11 && !body_read.fully_read() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    record.body = Some(body_read);
    let (response_parts, body) = response.into_parts();
    // HEAD answers carry the headers a GET would (Content-Length included) but
    // never a body, whatever the handler produced.
    let body = if parts.method == Method::HEAD {
        Body::empty()
    } else {
        body
    };
    Response::from_parts(response_parts, record.into_body(body))
}

/// What a request was, once routed: its operation (for metrics), the
/// bucket it named (for the access log, when that is on) and the access
/// key id its signature proved (none: anonymous or refused).
struct Served {
    operation: Operation,
    bucket: Option<String>,
    caller: Option<String>,
}

impl Served {
    const UNROUTED: Self = Self {
        operation: Operation::UNROUTED,
        bucket: None,
        caller: None,
    };
}

/// Runs a handler and turns its outcome into a response: S3 errors as XML
/// naming the request path and id, and a panic as a 500 InternalError so
/// the client gets an answer and the connection survives.
async fn render(
    handler: impl Future<Output = (Served, Result<Response, S3Error>)>,
    parts: &Parts,
    request_id: &str,
) -> (Served, Response) {
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok((operation, Ok(response))) => (operation, response),
        Ok((operation, Err(error))) => {
            (operation, error.into_response(parts.uri.path(), request_id))
        }
        Err(panic) => {
            tracing::error!(
                request_id,
                method = %parts.method,
                path = parts.uri.path(),
                panic = panic_message(&*panic),
                "request handler panicked"
            );
            let error = S3Error::internal("We encountered an internal error. Please try again.");
            (
                Served::UNROUTED,
                error.into_response(parts.uri.path(), request_id),
            )
        }
    }
}

/// The console (when on), the admin API or the S3 service; says what the
/// request was, with its bucket and its caller if it is `logged`.
async fn serve(
    state: &AppState,
    console: Option<&Console>,
    parts: &Parts,
    body: Body,
    logged: bool,
) -> (Served, Result<Response, S3Error>) {
    let Some(console) = console else {
        return serve_api(state, parts, body, logged).await;
    };
    if console.claims(parts) {
        // The console's requests, re-signed, go where any other would.
        let dispatch = |parts: Parts, body: Body| -> BoxFuture<'_, Result<Response, S3Error>> {
            Box::pin(async move { serve_api(state, &parts, body, false).await.1 })
        };
        let response = console.serve(parts, body, &dispatch).await;
        let served = Served {
            operation: Operation::ADMIN,
            bucket: None,
            caller: None,
        };
        return (served, Ok(response));
    }
    let (served, mut result) = serve_api(state, parts, body, logged).await;
    if let Ok(response) = &mut result {
        Console::sandbox(response);
    }
    (served, result)
}

/// The admin API or the S3 service.
async fn serve_api(
    state: &AppState,
    parts: &Parts,
    body: Body,
    logged: bool,
) -> (Served, Result<Response, S3Error>) {
    if admin::api::is_admin_request(parts, state.domain.as_deref()) {
        let result = admin::api::serve(state, parts, body).await;
        let served = Served {
            operation: Operation::ADMIN,
            bucket: None,
            caller: None,
        };
        return (served, result);
    }
    let endpoint = match router::route(
        &parts.method,
        &parts.uri,
        &parts.headers,
        state.domain.as_deref(),
    ) {
        Ok(endpoint) => endpoint,
        Err(error) => return (Served::UNROUTED, Err(error)),
    };
    let mut served = Served {
        operation: Operation::of(&endpoint),
        bucket: logged
            .then(|| endpoint.bucket().map(str::to_owned))
            .flatten(),
        caller: None,
    };
    // Only a request with Origin may get CORS headers: others pay nothing.
    // A preflight's answer is all CORS headers already.
    let cors_bucket = parts
        .headers
        .contains_key(header::ORIGIN)
        .then(|| match &endpoint {
            router::Endpoint::PreflightRequest { .. } => None,
            endpoint => endpoint.bucket().map(str::to_owned),
        })
        .flatten();
    let mut requester = ops::Requester {
        wants_access_key: logged,
        ..ops::Requester::default()
    };
    let result = ops::dispatch(state, endpoint, parts, body, &mut requester).await;
    served.caller = requester.access_key;
    let namespace = &requester.namespace;
    let result = match cors_bucket {
        Some(bucket) => ops::cors::with_headers(state, parts, (namespace, &bucket), result).await,
        None => result,
    };
    (served, result)
}

/// The headers S3 puts on every response, errors included.
fn stamp(response: &mut Response, id: &str, extended: &str) {
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(id) {
        headers.insert(REQUEST_ID, value);
    }
    if let Ok(value) = HeaderValue::from_str(extended) {
        headers.insert(EXTENDED_ID, value);
    }
    headers.insert(header::SERVER, SERVER_NAME);
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    if let Some(message) = panic.downcast_ref::<&str>() {
        message
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message
    } else {
        "a non-text panic payload"
    }
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use http_body_util::BodyExt;

    use super::*;

    fn parts() -> Parts {
        let (parts, ()) = http::Request::builder()
            .uri("/bucket/key")
            .body(())
            .expect("valid request")
            .into_parts();
        parts
    }

    async fn body_text(response: Response) -> String {
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test]
    async fn a_panicking_handler_becomes_a_500_with_the_request_id() {
        let handler = async {
            if parts().uri.path().len() > 1 {
                panic!("handler bug");
            }
            (Served::UNROUTED, Ok(Response::new(Body::empty())))
        };
        let (served, response) = render(handler, &parts(), "00000000000000AB").await;
        assert_eq!(served.operation, Operation::UNROUTED);
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = body_text(response).await;
        assert!(body.contains("<Code>InternalError</Code>"), "{body}");
        assert!(
            body.contains("<RequestId>00000000000000AB</RequestId>"),
            "{body}"
        );
    }

    #[tokio::test]
    async fn errors_name_the_request_path() {
        let handler = async {
            (
                Served::UNROUTED,
                Err(S3Error::from(storage_client::StorageError::NoSuchKey).naming("b", Some("key"))),
            )
        };
        let (_, response) = render(handler, &parts(), "R1").await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(
            body_text(response)
                .await
                .contains("<Resource>/bucket/key</Resource>")
        );
    }
}
