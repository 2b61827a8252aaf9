//! CORS: Put/Get/DeleteBucketCors, the preflight `OPTIONS` answered from the
//! bucket's rules, and the `Access-Control-*` headers on every response to
//! a request that carries `Origin`, errors included.
//!
//! A preflight carries no signature (a browser sends none), so it is
//! answered before authentication, from the rules alone, and acts on
//! nothing: it reads the bucket's CORS document and says what a browser may
//! send. The request that follows is authenticated as any other.

mod rules;

use std::sync::Arc;

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use storage_client::{BucketDocument, Namespace, Owner};

pub use self::rules::{CorsConfiguration, CorsRequest, CorsRule};
use super::bucket_documents;
use super::empty_response;
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::state::AppState;

/// AWS caps a CORS configuration at 64 KB.
const MAX_CORS_BODY: usize = 64 * 1024;

/// What a preflight answer varies with, for caches between browser and us.
const PREFLIGHT_VARY: &str =
    "Origin, Access-Control-Request-Headers, Access-Control-Request-Method";

pub async fn put_bucket_cors(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    let body = bucket_documents::read_body(parts, payload, MAX_CORS_BODY).await?;
    let document = CorsConfiguration::from_request_body(&body)?.to_document()?;
    bucket_documents::store(state, owner, bucket, BucketDocument::Cors, Some(document)).await?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn get_bucket_cors(state: &AppState, owner: &Owner, bucket: &str) -> S3Result<Response> {
    bucket_documents::get(state, owner, bucket, BucketDocument::Cors, || {
        S3Error::new(
            Code::NoSuchCORSConfiguration,
            "The CORS configuration does not exist",
        )
        .with("BucketName", bucket)
    })
    .await
}

pub async fn delete_bucket_cors(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::Cors).await
}

/// Answers `OPTIONS` from the bucket's rules, unauthenticated as on AWS:
/// so only a bucket of the shared namespace (an unsigned request names no
/// tenant).
pub async fn preflight(state: &AppState, parts: &Parts, bucket: &str) -> S3Result<Response> {
    let headers = &parts.headers;
    let origin = text_header(headers, header::ORIGIN)
        .ok_or_else(|| bad_request("Insufficient information. Origin request header needed."))?;
    let method = text_header(headers, header::ACCESS_CONTROL_REQUEST_METHOD)
        .ok_or_else(|| bad_request("Invalid Access-Control-Request-Method: null"))?;
    let requested = requested_headers(headers);
    let config = bucket_rules(state, &Namespace::Shared, bucket)
        .await?
        .ok_or_else(|| forbidden("CORSResponse: CORS is not enabled for this bucket."))?;
    let request = CorsRequest {
        origin,
        method,
        headers: requested.iter().map(String::as_str).collect(),
    };
    let rule = config.matching_rule(&request).ok_or_else(|| {
        forbidden(
            "CORSResponse: This CORS request is not allowed. This is usually because the \
             evalution of Origin, request method / Access-Control-Request-Method or \
             Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.",
        )
    })?;
    let mut response = empty_response(StatusCode::OK);
    let out = response.headers_mut();
    allow(out, rule, origin);
    if !requested.is_empty() {
        put(
            out,
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            &requested.join(", "),
        );
    }
    put(out, header::VARY, PREFLIGHT_VARY);
    Ok(response)
}

/// Adds the bucket's CORS headers to the answer to a request that carried
/// `Origin`, errors too, so that a page can read why it was refused.
pub async fn with_headers(
    state: &AppState,
    parts: &Parts,
    (namespace, bucket): (&Namespace, &str),
    result: S3Result<Response>,
) -> S3Result<Response> {
    let Some(cors) = response_headers(state, parts, namespace, bucket).await else {
        return result;
    };
    match result {
        Ok(mut response) => {
            response.headers_mut().extend(cors);
            Ok(response)
        }
        Err(mut error) => {
            let named = cors
                .into_iter()
                .filter_map(|(name, value)| Some((name?, value)));
            error.headers.extend(named);
            Err(error)
        }
    }
}

/// The CORS headers for a request that carried `Origin`, if the bucket has
/// a rule allowing its origin and method; `None` otherwise (no headers, and
/// the browser withholds the answer from the page). Storage faults while
/// looking only leave the headers out: the answer itself stands.
async fn response_headers(
    state: &AppState,
    parts: &Parts,
    namespace: &Namespace,
    bucket: &str,
) -> Option<HeaderMap> {
    let origin = text_header(&parts.headers, header::ORIGIN)?;
    let config = bucket_rules(state, namespace, bucket)
        .await
        .ok()
        .flatten()?;
    let request = CorsRequest {
        origin,
        method: parts.method.as_str(),
        headers: Vec::new(),
    };
    let rule = config.matching_rule(&request)?;
    let mut out = HeaderMap::new();
    allow(&mut out, rule, origin);
    put(&mut out, header::VARY, "Origin");
    Some(out)
}

async fn bucket_rules(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
) -> S3Result<Option<Arc<CorsConfiguration>>> {
    bucket_documents::load_parsed(state, namespace, bucket, BucketDocument::Cors, |text| {
        CorsConfiguration::from_stored(text.as_bytes())
    })
    .await
}

/// The headers a matched rule grants, preflight or not.
fn allow(out: &mut HeaderMap, rule: &CorsRule, origin: &str) {
    if rule.any_origin() {
        put(out, header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    } else {
        put(out, header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        put(out, header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
    }
    put(
        out,
        header::ACCESS_CONTROL_ALLOW_METHODS,
        &rule.allowed_methods.join(", "),
    );
    if !rule.expose_headers.is_empty() {
        put(
            out,
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            &rule.expose_headers.join(", "),
        );
    }
    if let Some(seconds) = rule.max_age_seconds {
        put(out, header::ACCESS_CONTROL_MAX_AGE, &seconds.to_string());
    }
}

/// `Access-Control-Request-Headers`, split, trimmed and lower-cased.
fn requested_headers(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect()
}

fn text_header(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .filter(|value| !value.is_empty())
}

/// Values come from a validated configuration or the request's own
/// headers, so they are valid header text; anything else is left out.
fn put(out: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        out.insert(name, value);
    }
}

fn bad_request(message: &str) -> S3Error {
    S3Error::new(Code::BadRequest, message)
}

fn forbidden(message: &str) -> S3Error {
    S3Error::new(Code::AccessForbidden, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_headers;

    #[test]
    fn requested_headers_are_split_and_lower_cased() {
        let headers = test_headers(&[
            ("access-control-request-headers", "Content-Type, X-Amz-Date"),
            ("access-control-request-headers", "x-amz-meta-a,"),
        ]);
        assert_eq!(
            requested_headers(&headers),
            ["content-type", "x-amz-date", "x-amz-meta-a"]
        );
    }

    #[test]
    fn a_rule_for_one_origin_allows_credentials_and_names_the_origin() {
        let rule = CorsRule {
            allowed_origins: vec!["http://a.test".into()],
            allowed_methods: vec!["GET".into(), "PUT".into()],
            expose_headers: vec!["ETag".into(), "x-amz-request-id".into()],
            max_age_seconds: Some(60),
            ..CorsRule::default()
        };
        let mut out = HeaderMap::new();
        allow(&mut out, &rule, "http://a.test");
        assert_eq!(out["access-control-allow-origin"], "http://a.test");
        assert_eq!(out["access-control-allow-credentials"], "true");
        assert_eq!(out["access-control-allow-methods"], "GET, PUT");
        assert_eq!(
            out["access-control-expose-headers"],
            "ETag, x-amz-request-id"
        );
        assert_eq!(out["access-control-max-age"], "60");

        let any = CorsRule {
            allowed_origins: vec!["*".into()],
            allowed_methods: vec!["GET".into()],
            ..CorsRule::default()
        };
        let mut out = HeaderMap::new();
        allow(&mut out, &any, "http://b.test");
        assert_eq!(out["access-control-allow-origin"], "*");
        assert!(!out.contains_key("access-control-allow-credentials"));
        assert!(!out.contains_key("access-control-max-age"));
    }
}
