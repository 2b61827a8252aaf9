//! GetObject and HeadObject: one metadata lookup (none when authorising
//! already looked the version up: it is served, see
//! [`super::authorise::ObjectVersion`]), the preconditions, the range,
//! then (GET only) one streamed read. Nothing buffers the object.

use axum::body::Body;
use axum::response::Response;
use futures::TryStreamExt;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use storage_client::KeyInfo;

use super::authorise::ObjectVersion;
use super::conditional::{Conditions, Outcome, if_range_holds};
use super::expiration::insert_expiration;
use super::headers::version_headers;
use super::headers::{RESPONSE_OVERRIDES, insert, insert_checksum, object_headers};
use super::range::{RangeRequest, content_range, resolve};
use super::sse::Keys;
use super::sse::read::{Opened, Purpose, client_sizes};
use super::sse::write::echo;
use crate::error::{Code, DELETE_MARKER, S3Error};
use crate::router::Query;
use crate::state::AppState;

/// Which object a GET/HEAD names, with its validated selectors (the
/// version is the capability's, [`ObjectVersion`]).
pub struct Target<'a> {
    bucket: &'a str,
    key: &'a str,
    part_number: Option<u16>,
}

impl<'a> Target<'a> {
    pub fn new(bucket: &'a str, key: &'a str, part_number: Option<u16>) -> Self {
        Self {
            bucket,
            key,
            part_number,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Body,
    /// HEAD: the same status and headers, no read.
    HeadersOnly,
}

pub async fn get_object(
    state: &AppState,
    object: ObjectVersion<'_>,
    parts: &Parts,
    target: Target<'_>,
    mode: Mode,
) -> Result<Response, S3Error> {
    let headers = &parts.headers;
    let range_header = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
    if range_header.is_some() && target.part_number.is_some() {
        return Err(S3Error::invalid_request(
            "Cannot specify both Range header and partNumber query parameter",
        ));
    }
    let overrides = response_overrides(parts.uri.query())?;
    let conditions = Conditions::from_headers(headers);

    // Exactly the version that was authorised (see `ObjectVersion`).
    let owner = object.owner();
    let bucket = object.bucket();
    let customer_key = super::sse::customer_key(state, parts)?;
    let lock_headers = object.lock_headers();
    let info = object
        .resolve(state)
        .await
        .map_err(no_delete_marker_either)?;
    let purpose = match mode {
        Mode::Body => Purpose::Read,
        Mode::HeadersOnly => Purpose::Describe,
    };
    let opened = Opened::check(&info, customer_key.as_ref(), Keys::of(state), purpose).await?;

    match conditions.evaluate(&info.etag, info.last_modified) {
        Outcome::Proceed => {}
        Outcome::NotModified => return Ok(not_modified(&info)),
        Outcome::PreconditionFailed(condition) => {
            return Err(S3Error::precondition_failed().with("Condition", condition));
        }
    }

    let (size, part_sizes) = client_sizes(opened.as_ref(), &info);
    let requested = match target.part_number {
        Some(number) => part_range(&part_sizes, number, size)?,
        None => match range_header {
            Some(range) if range_applies(headers, &info) => resolve(range, size),
            _ => RangeRequest::Whole,
        },
    };
    let (status, range) = match requested {
        RangeRequest::Whole => (StatusCode::OK, 0..size),
        RangeRequest::Partial(range) => (StatusCode::PARTIAL_CONTENT, range),
        RangeRequest::Unsatisfiable => return Err(S3Error::invalid_range(size)),
    };

    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    let out = response.headers_mut();
    object_headers(out, &info);
    super::object_lock::response_headers(out, &info, lock_headers);
    version_headers(out, info.version_id.as_deref(), false);
    if !names_a_version(parts) {
        insert_expiration(state, out, &owner.namespace, bucket, &info).await;
    }
    out.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(range.end - range.start),
    );
    if status == StatusCode::PARTIAL_CONTENT {
        insert(out, header::CONTENT_RANGE, &content_range(&range, size));
    }
    if let Some(opened) = &opened {
        echo(out, &opened.wrapping);
    }
    if target.part_number.is_some() && !info.parts.is_empty() {
        out.insert("x-amz-mp-parts-count", HeaderValue::from(info.parts.len()));
    }
    if checksum_mode_enabled(headers) {
        match target.part_number {
            // A part of a multipart object is described by its own checksum.
            Some(number) if !info.parts.is_empty() => part_checksum_headers(out, &info, number),
            _ if status == StatusCode::OK => checksum_headers(out, &info),
            _ => {}
        }
    }
    for (name, value) in overrides {
        out.insert(name, value);
    }

    if mode == Mode::Body && !range.is_empty() {
        let naming = |err| S3Error::from(err).naming(target.bucket, Some(target.key));
        // An error after the headers are sent can only cut the connection;
        // log it so the truncated response is explained.
        *response.body_mut() = match &opened {
            None => {
                let stream = state
                    .storage
                    .read(owner, &info, range)
                    .await
                    .map_err(naming)?;
                Body::from_stream(stream.inspect_err(|err| {
                    tracing::warn!(error = %err, "object read failed mid-stream");
                }))
            }
            Some(opened) => {
                let stream = opened
                    .read(&state.storage, owner, &info, range)
                    .await
                    .map_err(naming)?;
                Body::from_stream(stream.inspect_err(|err| {
                    tracing::error!(error = %err, "encrypted object read failed mid-stream");
                }))
            }
        };
    }
    Ok(response)
}

/// The bytes of part `number`, sent the way S3 sends a part (206 with
/// Content-Range) when it has bytes. Parts are counted in object order, so
/// 1..=`x-amz-mp-parts-count` are always valid; an object written by a
/// single PUT has one part, itself, of `size` bytes (its plaintext's).
fn part_range(parts: &[u64], number: u16, size: u64) -> Result<RangeRequest, S3Error> {
    let parts_count = parts.len().max(1) as u64;
    let Some(index) = usize::from(number).checked_sub(1) else {
        return Err(S3Error::invalid_part_number(parts_count));
    };
    let range = if parts.is_empty() {
        (index == 0).then_some(0..size)
    } else {
        parts.get(index).map(|part| {
            let start: u64 = parts[..index].iter().sum();
            start..start + part
        })
    };
    match range {
        Some(range) if range.is_empty() => Ok(RangeRequest::Whole),
        Some(range) => Ok(RangeRequest::Partial(range)),
        None => Err(S3Error::invalid_part_number(parts_count)),
    }
}

/// A GET or HEAD of a key with no object says whether a delete marker
/// hides it: `x-amz-delete-marker: true` comes with the marker's answer
/// (`S3Error::from(StorageError::DeleteMarker)`), and `false` with any other
/// `NoSuchKey`, as S3 answers (s3-tests `test_delete_marker_nonversioned`).
fn no_delete_marker_either(err: S3Error) -> S3Error {
    let marked = err.headers.iter().any(|(name, _)| name == DELETE_MARKER);
    if err.code == Code::NoSuchKey.as_str() && !marked {
        err.with_header(DELETE_MARKER.clone(), HeaderValue::from_static("false"))
    } else {
        err
    }
}

/// 304 carries the validators and caching headers, never a body.
fn not_modified(info: &KeyInfo) -> Response {
    let mut full = HeaderMap::new();
    object_headers(&mut full, info);
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    let out = response.headers_mut();
    for name in [
        header::ETAG,
        header::LAST_MODIFIED,
        header::CACHE_CONTROL,
        header::EXPIRES,
    ] {
        if let Some(value) = full.remove(&name) {
            out.insert(name, value);
        }
    }
    response
}

/// `If-Range` lets a client ask for the range only if the object is the
/// one it already has part of.
fn range_applies(headers: &HeaderMap, info: &KeyInfo) -> bool {
    match headers.get(header::IF_RANGE).map(|v| v.to_str()) {
        None => true,
        Some(Ok(value)) => if_range_holds(value, &info.etag, info.last_modified),
        Some(Err(_)) => false,
    }
}

fn checksum_mode_enabled(headers: &HeaderMap) -> bool {
    headers
        .get("x-amz-checksum-mode")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"ENABLED"))
}

/// The stored checksum, sent only with the whole object it describes.
fn checksum_headers(out: &mut HeaderMap, info: &KeyInfo) {
    if let Some(checksum) = &info.checksum {
        insert_checksum(
            out,
            checksum.algorithm,
            &checksum.value,
            Some(checksum.kind),
        );
    }
}

/// Part `number`'s own checksum, typed like the object's (COMPOSITE or
/// FULL_OBJECT), as S3 answers a `?partNumber=` GET in checksum mode.
fn part_checksum_headers(out: &mut HeaderMap, info: &KeyInfo, number: u16) {
    let (Some(object), Some(part)) = (
        &info.checksum,
        usize::from(number)
            .checked_sub(1)
            .and_then(|index| info.parts.get(index))
            .and_then(|part| part.checksum.as_ref()),
    ) else {
        return;
    };
    insert_checksum(out, part.algorithm, &part.value, Some(object.kind));
}

/// Header overrides from `response-content-type` and friends.
fn response_overrides(raw_query: Option<&str>) -> Result<Vec<(HeaderName, HeaderValue)>, S3Error> {
    if raw_query.is_none() {
        return Ok(Vec::new());
    }
    let query = Query::parse(raw_query)?;
    let mut overrides = Vec::new();
    for (param, name) in RESPONSE_OVERRIDES {
        if let Some(value) = query.get(param) {
            let value = HeaderValue::from_str(value).map_err(|_| {
                S3Error::invalid_argument(format!("Invalid value for {param}"))
                    .with("ArgumentName", param)
            })?;
            overrides.push((name, value));
        }
    }
    Ok(overrides)
}

/// Whether the request names a version (`versionId`): only a current
/// object has an expiration to report.
fn names_a_version(parts: &Parts) -> bool {
    Query::parse(parts.uri.query()).is_ok_and(|query| query.has("versionId"))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use storage_client::{
        ChecksumAlgorithm, ChecksumType, ObjectChecksum, ObjectMeta, PartSummary,
    };

    use super::*;

    fn info() -> KeyInfo {
        KeyInfo {
            bucket: "b".into(),
            key: "k".into(),
            size: 10,
            etag: "abc".into(),
            last_modified: SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777),
            owner: "AK".into(),
            meta: ObjectMeta {
                cache_control: Some("max-age=5".into()),
                content_language: Some("en".into()),
                ..ObjectMeta::default()
            },
            tags: vec![],
            checksum: Some(ObjectChecksum {
                algorithm: ChecksumAlgorithm::Crc32,
                value: "y/Q5Jg==".into(),
                kind: ChecksumType::FullObject,
            }),
            locations: vec![],
            parts: vec![],
            version_id: None,
        }
    }

    #[test]
    fn part_numbers_select_parts_in_object_order() {
        let object = info();
        assert!(matches!(
            part_range(&[], 1, object.size),
            Ok(RangeRequest::Partial(r)) if r == (0..10)
        ));
        assert_eq!(
            part_range(&[], 2, object.size).err().map(|e| e.code),
            Some("InvalidPartNumber")
        );
        // Parts 1 and 5 of 6 and 4 bytes: counted in object order.
        let parts = [6, 4];
        assert!(matches!(
            part_range(&parts, 2, object.size),
            Ok(RangeRequest::Partial(r)) if r == (6..10)
        ));
        let err = part_range(&parts, 3, object.size).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("InvalidPartNumber", 416));
    }

    #[test]
    fn response_overrides_replace_stored_headers() {
        let overrides = response_overrides(Some(
            "response-content-type=text%2Fhtml&response-content-disposition=attachment%3B%20filename%3Dx.txt&other=1",
        ))
        .unwrap();
        assert_eq!(
            overrides,
            vec![
                (header::CONTENT_TYPE, HeaderValue::from_static("text/html")),
                (
                    header::CONTENT_DISPOSITION,
                    HeaderValue::from_static("attachment; filename=x.txt")
                ),
            ]
        );
        assert!(response_overrides(None).unwrap().is_empty());
        let err = response_overrides(Some("response-content-type=a%0Ab")).unwrap_err();
        assert_eq!(err.code, "InvalidArgument");
    }

    #[test]
    fn not_modified_keeps_only_validators_and_caching_headers() {
        let response = not_modified(&info());
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
        let headers = response.headers();
        assert_eq!(headers["etag"], "\"abc\"");
        assert_eq!(headers["last-modified"], "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(headers["cache-control"], "max-age=5");
        assert!(!headers.contains_key("content-language"));
        assert!(!headers.contains_key("content-type"));
    }

    #[test]
    fn checksum_mode_returns_the_stored_checksum() {
        let mut request = HeaderMap::new();
        assert!(!checksum_mode_enabled(&request));
        request.insert("x-amz-checksum-mode", HeaderValue::from_static("ENABLED"));
        assert!(checksum_mode_enabled(&request));
        let mut out = HeaderMap::new();
        checksum_headers(&mut out, &info());
        assert_eq!(out["x-amz-checksum-crc32"], "y/Q5Jg==");
        assert_eq!(out["x-amz-checksum-type"], "FULL_OBJECT");
    }

    #[test]
    fn a_part_is_described_by_its_own_checksum_and_the_object_type() {
        let mut object = info();
        object.checksum = Some(ObjectChecksum {
            algorithm: ChecksumAlgorithm::Sha256,
            value: "whole-2".into(),
            kind: ChecksumType::Composite,
        });
        let part = |number, value: &str| PartSummary {
            number,
            size: 5,
            etag: "e".into(),
            checksum: Some(ObjectChecksum {
                algorithm: ChecksumAlgorithm::Sha256,
                value: value.into(),
                kind: ChecksumType::FullObject,
            }),
        };
        object.parts = vec![part(1, "first"), part(2, "second")];
        let mut out = HeaderMap::new();
        part_checksum_headers(&mut out, &object, 2);
        assert_eq!(out["x-amz-checksum-sha256"], "second");
        assert_eq!(out["x-amz-checksum-type"], "COMPOSITE");
        let mut out = HeaderMap::new();
        part_checksum_headers(&mut out, &object, 3);
        assert!(out.is_empty());
    }

    #[test]
    fn if_range_decides_whether_the_range_is_served() {
        let mut request = HeaderMap::new();
        assert!(range_applies(&request, &info()));
        request.insert(header::IF_RANGE, HeaderValue::from_static("\"abc\""));
        assert!(range_applies(&request, &info()));
        request.insert(header::IF_RANGE, HeaderValue::from_static("\"changed\""));
        assert!(!range_applies(&request, &info()));
    }
}
