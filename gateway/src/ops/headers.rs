//! Object metadata between HTTP headers and `ObjectMeta`: what a PUT stores
//! and what GET/HEAD return.

use std::borrow::Cow;
use std::time::SystemTime;

use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, header};
use storage_client::{ChecksumType, KeyInfo, NULL_VERSION_ID, ObjectMeta};

use crate::access_control::Identity;

use crate::checksum::{AlgorithmHeader, ChecksumAlgorithm};
use crate::error::{DELETE_MARKER, S3Error, VERSION_ID};
use crate::router::{Endpoint, Query};

pub const USER_META_PREFIX: &str = "x-amz-meta-";

/// AWS limits user metadata (names plus values) to 2 KB.
const MAX_USER_META_BYTES: usize = 2048;

/// Content-Type AWS reports for an object stored without one.
const DEFAULT_CONTENT_TYPE: &str = "binary/octet-stream";

/// A header as text. Non-UTF-8 bytes cannot be stored faithfully as a
/// String; they are replaced rather than failing the upload.
pub fn text(headers: &HeaderMap, name: impl http::header::AsHeaderName) -> Option<String> {
    headers
        .get(name)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// The metadata a PutObject stores, taken from its headers.
pub fn object_meta_from_request(headers: &HeaderMap) -> Result<ObjectMeta, S3Error> {
    let mut meta = ObjectMeta {
        content_type: text(headers, header::CONTENT_TYPE),
        content_encoding: text(headers, header::CONTENT_ENCODING)
            .and_then(|value| without_aws_chunked(&value)),
        content_disposition: text(headers, header::CONTENT_DISPOSITION),
        content_language: text(headers, header::CONTENT_LANGUAGE),
        cache_control: text(headers, header::CACHE_CONTROL),
        expires: text(headers, header::EXPIRES),
        ..ObjectMeta::default()
    };
    let mut size = 0;
    for (name, value) in headers {
        // Header names arrive lower-cased, which makes `x-amz-meta-*` case-insensitive.
        let Some(user_name) = name.as_str().strip_prefix(USER_META_PREFIX) else {
            continue;
        };
        let value = meta_value_text(value.as_bytes());
        size += user_name.len() + value.len();
        meta.user
            .entry(user_name.to_owned())
            .and_modify(|joined: &mut String| {
                // Repeated headers are joined, as HTTP defines for lists.
                joined.push(',');
                joined.push_str(&value);
            })
            .or_insert(value);
    }
    if size > MAX_USER_META_BYTES {
        return Err(S3Error::metadata_too_large(MAX_USER_META_BYTES));
    }
    Ok(meta)
}

/// A user-metadata value as text: UTF-8 when the bytes are UTF-8, else each
/// byte as its ISO-8859-1 character (what HTTP once defined header bytes to
/// be), so no byte a client sent is lost to a replacement character.
fn meta_value_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().map(|&byte| char::from(byte)).collect(),
    }
}

/// A user-metadata value as S3 returns it: as is when US-ASCII, else one
/// RFC 2047 encoded word (`=?UTF-8?B?<base64>?=`), which S3 documents for
/// non-ASCII values and which any HTTP client can carry.
fn meta_value_header(value: &str) -> Cow<'_, str> {
    if value.is_ascii() {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!("=?UTF-8?B?{}?=", BASE64_STANDARD.encode(value)))
    }
}

/// Content-Encoding with the transfer-only `aws-chunked` removed; `None`
/// when nothing else was listed.
fn without_aws_chunked(value: &str) -> Option<String> {
    let kept: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|coding| !coding.is_empty() && !coding.eq_ignore_ascii_case("aws-chunked"))
        .collect();
    (!kept.is_empty()).then(|| kept.join(", "))
}

/// The RFC 1123 date HTTP headers carry.
pub fn http_date(at: SystemTime) -> String {
    httpdate::fmt_http_date(at)
}

pub fn quoted_etag(etag: &str) -> String {
    format!("\"{etag}\"")
}

/// The ETag of a stored object, quoted; none for a key written without
/// one (by Ozone's shell or through `ofs://`), which S3 answers without
/// the header or element rather than with an empty tag, as Ozone's own
/// S3 gateway does.
pub fn stored_etag(etag: &str) -> Option<String> {
    (!etag.is_empty()).then(|| quoted_etag(etag))
}

/// An entity tag a client sent, as storage keeps it: no quotes, no weak
/// prefix (`If-Match` on writes and deletes).
pub fn bare_etag(etag: &str) -> String {
    etag.trim()
        .trim_start_matches("W/")
        .trim_matches('"')
        .to_owned()
}

/// Inserts a header whose value came from a client or from storage; a
/// value HTTP cannot carry is skipped rather than failing the response.
pub fn insert(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
        headers.insert(name, value);
    }
}

/// The headers GET and HEAD return for an object: validators, stored
/// system metadata and user metadata.
pub fn object_headers(headers: &mut HeaderMap, info: &KeyInfo) {
    if let Some(etag) = stored_etag(&info.etag) {
        insert(headers, header::ETAG, &etag);
    }
    insert(
        headers,
        header::LAST_MODIFIED,
        &http_date(info.last_modified),
    );
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let meta = &info.meta;
    let content_type = meta.content_type.as_deref().unwrap_or(DEFAULT_CONTENT_TYPE);
    insert(headers, header::CONTENT_TYPE, content_type);
    let optional = [
        (header::CONTENT_ENCODING, &meta.content_encoding),
        (header::CONTENT_DISPOSITION, &meta.content_disposition),
        (header::CONTENT_LANGUAGE, &meta.content_language),
        (header::CACHE_CONTROL, &meta.cache_control),
        (header::EXPIRES, &meta.expires),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            insert(headers, name, value);
        }
    }
    let user = meta.user.iter().filter(|(name, _)| {
        *name != crate::access_control::object_acl::ENTRY
            && *name != crate::sse::record::ENTRY
            && !super::object_lock::is_lock_entry(name)
    });
    for (name, value) in user {
        if let Ok(name) = HeaderName::from_bytes(format!("{USER_META_PREFIX}{name}").as_bytes()) {
            insert(headers, name, &meta_value_header(value));
        }
    }
    if !info.tags.is_empty() {
        insert(
            headers,
            HeaderName::from_static("x-amz-tagging-count"),
            &info.tags.len().to_string(),
        );
    }
}

/// `x-amz-checksum-<alg>` with a stored checksum value, and
/// `x-amz-checksum-type` when the answer carries the type.
pub fn insert_checksum(
    out: &mut HeaderMap,
    alg: ChecksumAlgorithm,
    value: &str,
    kind: Option<ChecksumType>,
) {
    insert(out, HeaderName::from_static(alg.header_name()), value);
    if let Some(kind) = kind {
        insert(
            out,
            HeaderName::from_static("x-amz-checksum-type"),
            kind.name(),
        );
    }
}

/// `response-*` query parameters: a signed GET may override these headers.
pub const RESPONSE_OVERRIDES: [(&str, HeaderName); 6] = [
    ("response-content-type", header::CONTENT_TYPE),
    ("response-content-language", header::CONTENT_LANGUAGE),
    ("response-expires", header::EXPIRES),
    ("response-cache-control", header::CACHE_CONTROL),
    ("response-content-disposition", header::CONTENT_DISPOSITION),
    ("response-content-encoding", header::CONTENT_ENCODING),
];

/// Refuses `response-*` overrides on an anonymous GET or HEAD, as S3 does
/// (`400 InvalidRequest`): only a signed request (a presigned URL included)
/// may change the headers an object is served with, so that no one can
/// make a public object answer as, say, `text/html` through a link of
/// their own making.
pub fn refuse_anonymous_overrides(
    endpoint: &Endpoint,
    parts: &Parts,
    who: &Identity,
) -> Result<(), S3Error> {
    let reads = matches!(
        endpoint,
        Endpoint::GetObject { .. } | Endpoint::HeadObject { .. }
    );
    let Some(raw) = parts.uri.query() else {
        return Ok(());
    };
    if !reads || !crate::access_control::is_anonymous(who) {
        return Ok(());
    }
    // A query that does not parse is refused where the overrides are read.
    let overrides = Query::parse(Some(raw))
        .is_ok_and(|query| RESPONSE_OVERRIDES.iter().any(|(param, _)| query.has(param)));
    if overrides {
        return Err(S3Error::invalid_request(
            "Request specific response headers cannot be used for anonymous GET requests.",
        ));
    }
    Ok(())
}

/// Sets `x-amz-version-id` (when the bucket has versions) and, for a
/// delete marker, `x-amz-delete-marker: true`.
pub fn version_headers(out: &mut HeaderMap, version_id: Option<&str>, delete_marker: bool) {
    if let Some(value) = version_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        out.insert(VERSION_ID.clone(), value);
    }
    if delete_marker {
        out.insert(DELETE_MARKER.clone(), HeaderValue::from_static("true"));
    }
}

/// Sets `x-amz-version-id` on the answer to a write (PUT, copy, multipart
/// completion): only a version id versioning gave out. A write in a
/// suspended bucket makes the `null` version, which S3 does not name there
/// (s3-tests `test_versioning_bucket_*_upload_return_version_id`, which
/// AWS passes); reads and deletes still name `null`.
pub fn written_version_header(out: &mut HeaderMap, version_id: Option<&str>) {
    version_headers(out, version_id.filter(|id| *id != NULL_VERSION_ID), false);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ops::test_headers as headers;

    #[test]
    fn put_headers_become_stored_metadata() {
        let meta = object_meta_from_request(&headers(&[
            ("content-type", "text/plain"),
            ("content-encoding", "aws-chunked,gzip"),
            ("content-disposition", "attachment; filename=\"a.txt\""),
            ("content-language", "de"),
            ("cache-control", "no-cache"),
            ("expires", "Thu, 01 Dec 1994 16:00:00 GMT"),
            ("X-Amz-Meta-Color", "blue"),
            ("x-amz-meta-list", "a"),
            ("x-amz-meta-list", "b"),
            ("x-amz-acl", "private"),
        ]))
        .unwrap();
        assert_eq!(meta.content_type.as_deref(), Some("text/plain"));
        assert_eq!(meta.content_encoding.as_deref(), Some("gzip"));
        assert_eq!(
            meta.content_disposition.as_deref(),
            Some("attachment; filename=\"a.txt\"")
        );
        assert_eq!(meta.content_language.as_deref(), Some("de"));
        assert_eq!(meta.cache_control.as_deref(), Some("no-cache"));
        assert_eq!(
            meta.expires.as_deref(),
            Some("Thu, 01 Dec 1994 16:00:00 GMT")
        );
        assert_eq!(
            meta.user.into_iter().collect::<Vec<_>>(),
            vec![
                ("color".to_owned(), "blue".to_owned()),
                ("list".to_owned(), "a,b".to_owned())
            ]
        );
    }

    #[test]
    fn aws_chunked_alone_leaves_no_content_encoding() {
        let meta =
            object_meta_from_request(&headers(&[("content-encoding", "aws-chunked")])).unwrap();
        assert_eq!(meta.content_encoding, None);
        assert_eq!(meta.content_type, None);
    }

    #[test]
    fn oversized_user_metadata_is_refused() {
        let big = "v".repeat(MAX_USER_META_BYTES);
        let err = object_meta_from_request(&headers(&[("x-amz-meta-k", &big)])).unwrap_err();
        assert_eq!(err.code, "MetadataTooLarge");
    }

    fn key_info(meta: ObjectMeta) -> KeyInfo {
        KeyInfo {
            bucket: "b".into(),
            key: "k".into(),
            size: 3,
            etag: "abc".into(),
            last_modified: SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777),
            owner: "AK".into(),
            meta,
            tags: vec![("t".into(), "1".into())],
            checksum: None,
            locations: vec![],
            parts: vec![],
            version_id: None,
        }
    }

    #[test]
    fn stored_metadata_is_returned_with_validators() {
        let mut meta = ObjectMeta {
            cache_control: Some("max-age=60".into()),
            ..ObjectMeta::default()
        };
        meta.user.insert("color".into(), "blue".into());
        let info = key_info(meta);
        let mut out = HeaderMap::new();
        object_headers(&mut out, &info);
        assert_eq!(out["etag"], "\"abc\"");
        assert_eq!(out["last-modified"], "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(out["accept-ranges"], "bytes");
        assert_eq!(out["content-type"], "binary/octet-stream");
        assert_eq!(out["cache-control"], "max-age=60");
        assert_eq!(out["x-amz-meta-color"], "blue");
        assert_eq!(out["x-amz-tagging-count"], "1");
        assert!(!out.contains_key("content-encoding"));
    }

    #[test]
    fn anonymous_reads_may_not_override_response_headers() {
        let parts = |uri: &str| {
            http::Request::builder()
                .uri(uri)
                .body(())
                .expect("request")
                .into_parts()
                .0
        };
        let get = Endpoint::GetObject {
            bucket: "b".into(),
            key: "avatar.png".into(),
            part_number: None,
            version_id: None,
        };
        let anonymous = crate::access_control::anonymous();
        let signed = Identity::new("AKIAIOSFODNN7EXAMPLE");
        for param in RESPONSE_OVERRIDES.map(|(param, _)| param) {
            let overriding = parts(&format!("/b/avatar.png?{param}=text%2Fhtml"));
            let err = refuse_anonymous_overrides(&get, &overriding, &anonymous).unwrap_err();
            assert_eq!((err.code, err.status.as_u16()), ("InvalidRequest", 400));
            refuse_anonymous_overrides(&get, &overriding, &signed).unwrap();
        }
        let plain = parts("/b/avatar.png?versionId=null");
        refuse_anonymous_overrides(&get, &plain, &anonymous).unwrap();
        let tagging = Endpoint::GetObjectTagging {
            bucket: "b".into(),
            key: "k".into(),
            version_id: None,
        };
        let other = parts("/b/k?tagging&response-content-type=x");
        refuse_anonymous_overrides(&tagging, &other, &anonymous).unwrap();
    }

    #[test]
    fn non_ascii_metadata_is_kept_and_returned_rfc2047_encoded() {
        let mut request = HeaderMap::new();
        request.insert(
            "x-amz-meta-utf8",
            HeaderValue::from_bytes("Hello World\u{e9}".as_bytes()).unwrap(),
        );
        request.insert(
            "x-amz-meta-latin1",
            HeaderValue::from_bytes(b"caf\xe9").unwrap(),
        );
        request.insert("x-amz-meta-ascii", HeaderValue::from_static("plain"));
        let meta = object_meta_from_request(&request).unwrap();
        assert_eq!(meta.user["utf8"], "Hello World\u{e9}");
        assert_eq!(meta.user["latin1"], "caf\u{e9}");

        let mut out = HeaderMap::new();
        object_headers(&mut out, &key_info(meta));
        // base64 of the UTF-8 bytes of "Hello World\u{e9}" and "caf\u{e9}".
        assert_eq!(out["x-amz-meta-utf8"], "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?=");
        assert_eq!(out["x-amz-meta-latin1"], "=?UTF-8?B?Y2Fmw6k=?=");
        assert_eq!(out["x-amz-meta-ascii"], "plain");
    }
}
