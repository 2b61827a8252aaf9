//! PostObject: a browser form upload (`POST /bucket`, multipart/form-data).
//!
//! The fields before the file are read (a small budget), the policy's
//! signature is verified and its conditions checked against them, and only
//! then is the file part streamed into a new object, never held whole.
//! Fields after the file are ignored, as S3 ignores them. What the request
//! acts on is exactly what the signed policy allows: the key, metadata and
//! tags all come from fields the policy names.

mod form;
mod policy;

use std::ops::RangeInclusive;
use std::time::SystemTime;

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use percent_encoding::utf8_percent_encode;
use serde::Serialize;
use storage_client::{MAX_KEY_BYTES, ObjectWriter, WriteCondition, WriteIntent};

use crate::access_control::Identity;
use crate::access_control::policy::context::{Form, RequestContext};

use self::form::{FormReader, PartHead, malformed};
use self::policy::PostPolicy;
use super::authorise::authorise;
use super::headers::{insert, object_meta_from_request, quoted_etag};
use super::integrity::IntegrityPlan;
use super::list::URL_ENCODE;
use super::put::{Filled, MAX_OBJECT_SIZE, check_storage_class, write_object};
use super::sse::write::Sealing;
use super::tagging::tags_from_xml;
use super::{empty_response, xml_response};
use crate::auth::Payload;
use crate::checksum::{Checksummer, Digests};
use crate::error::{Code, S3Error, S3Result};
use crate::router::Endpoint;
use crate::state::AppState;

/// What the fields before the file may take together: a policy with its
/// conditions and a few metadata fields fit in a few KiB; AWS caps the
/// policy alone at 20 KiB.
const MAX_FORM_FIELDS_BYTES: usize = 64 * 1024;

/// Form fields stored as the object's headers, as PutObject takes them
/// (and `x-amz-meta-*`, `x-amz-checksum-*`).
const HEADER_FIELDS: [&str; 7] = [
    "content-type",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "expires",
    "x-amz-storage-class",
];

/// A checksum of the file, verified against it and stored with it; it can
/// only make the upload fail, so the policy need not name it.
const CHECKSUM_FIELD_PREFIX: &str = "x-amz-checksum-";

/// The object lock fields, PutObject's `x-amz-object-lock-*` headers.
const LOCK_FIELD_PREFIX: &str = "x-amz-object-lock-";

/// Reads and stores a form upload from `payload`, the body as sent:
/// authenticated by the form's policy, not by the request's headers. On an
/// error the caller drains what is left of it.
pub async fn post_object(
    state: &AppState,
    parts: &Parts,
    payload: &mut Payload,
    bucket: &str,
) -> S3Result<Response> {
    let boundary = boundary(&parts.headers)?;
    let response = receive(state, parts, bucket, payload, &boundary).await?;
    skip_epilogue(payload).await;
    Ok(response)
}

/// Reads what follows a stored file: the closing boundary and any fields
/// after the file, which S3 ignores; read (within the fields' budget) so
/// the connection can carry the next request.
async fn skip_epilogue(payload: &mut Payload) {
    let mut left = MAX_FORM_FIELDS_BYTES;
    while let Some(Ok(piece)) = payload.next_chunk().await {
        match left.checked_sub(piece.len()) {
            Some(rest) => left = rest,
            None => return,
        }
    }
}

async fn receive(
    state: &AppState,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
    boundary: &str,
) -> S3Result<Response> {
    let mut form = FormReader::new(payload, boundary);
    let (mut fields, file) = fields_before_file(&mut form, bucket).await?;
    let who = authenticate(state, &fields).await?;
    super::sse::refuse_fields(fields.iter().map(|(name, _)| name.as_str()))?;

    let template = field(&fields, "key")
        .ok_or_else(|| missing_field("key"))?
        .to_owned();
    // `${filename}` stands for the name the browser gave the file.
    let key = template.replace("${filename}", file.filename.as_deref().unwrap_or(""));
    if key.is_empty() {
        return Err(S3Error::invalid_argument(
            "User key must have a length greater than 0.",
        ));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(S3Error::key_too_long());
    }
    set_field(&mut fields, "key", &key);
    // A signed form carries a policy (`authenticate` saw to it); an
    // anonymous one has none to check.
    let policy = field(&fields, "policy")
        .map(PostPolicy::parse)
        .transpose()?;
    if let Some(policy) = &policy {
        policy.check(&fields, SystemTime::now())?;
    }
    // Once its signer and key are known, a form upload is decided as the
    // PutObject it is: a policy's Deny binds it, a grant lets it in.
    let put = Endpoint::PutObject {
        bucket: bucket.to_owned(),
        key: key.clone(),
    };
    let headers = object_headers(&fields)?;
    let tags = match field(&fields, "tagging") {
        Some(document) => tags_from_xml(document.as_bytes())?,
        None => Vec::new(),
    };
    let context_headers = policy_headers(&headers, &fields)?;
    let signed = Form {
        tags: &tags,
        signature_version: signature_version(&fields),
    };
    let context = RequestContext::form(parts, &state.trusted_proxies, &context_headers, signed);
    let owner = authorise(state, &put, parts, &who, &context).await?;

    check_storage_class(&headers)?;
    let plan = IntegrityPlan::from_headers(&headers)?;
    let mut meta = object_meta_from_request(&headers)?;
    // The `acl` field is PutObject's `x-amz-acl`, refused the same ways.
    let mut acl_header = HeaderMap::new();
    if let Some(acl) = field(&fields, "acl") {
        let value = HeaderValue::from_str(acl)
            .map_err(|_| S3Error::invalid_argument("The acl field is not a canned ACL."))?;
        acl_header.insert(HeaderName::from_static("x-amz-acl"), value);
    }
    super::acl::record_object_acl(state, &owner, None, &acl_header, bucket, &mut meta).await?;
    let write = super::object_lock::Write::Other;
    super::object_lock::record(
        state,
        &owner.namespace,
        bucket,
        &headers,
        None,
        write,
        &mut meta,
    )
    .await?;
    // SSE-C, SSE-S3 or SSE-KMS by the form's fields, else by the bucket's
    // default.
    let asked = super::sse::form_encryption(state, &fields).await?;
    let encryption =
        super::bucket_encryption::asked_or_default(state, asked, &owner.namespace, bucket).await?;

    let intent = WriteIntent {
        condition: WriteCondition::None,
        tags,
        size_hint: None,
    };
    let sizes = policy
        .as_ref()
        .and_then(PostPolicy::length_range)
        .unwrap_or(0..=MAX_OBJECT_SIZE);
    let written = write_object(state, &owner, bucket, &key, intent, meta, async |writer| {
        let mut sealing = encryption
            .as_ref()
            .map(|encryption| Sealing::new(encryption, MAX_OBJECT_SIZE));
        let (digests, received) = stream_file(
            &mut form,
            writer,
            &sizes,
            plan.checksummer(),
            sealing.as_mut(),
        )
        .await?;
        let sealed = match sealing {
            Some(sealing) => Some(sealing.finish(writer, received, &digests).await?),
            None => None,
        };
        Ok(Filled {
            checksum: plan.verify(&digests, &HeaderMap::new())?,
            digests,
            sealed,
        })
    })
    .await?;
    let mut response = answer(parts, &fields, bucket, &key, &written.etag)?;
    if let Some(encryption) = &encryption {
        encryption.echo(response.headers_mut());
    }
    Ok(response)
}

/// [`fields_before_file`], the policy check and the file read to its end,
/// for the `post_form` fuzz target.
#[cfg(feature = "fuzzing")]
pub(super) async fn read_form_for_fuzzing(
    payload: &mut Payload,
    boundary: &str,
    now: SystemTime,
) -> S3Result<(Vec<(String, String)>, u64)> {
    let mut form = FormReader::new(payload, boundary);
    let (fields, _) = fields_before_file(&mut form, "bucket").await?;
    if let Some(encoded) = field(&fields, "policy") {
        PostPolicy::parse(encoded)?.check(&fields, now)?;
    }
    let mut file_length = 0;
    while let Some(chunk) = form.next_chunk().await? {
        file_length += chunk.len() as u64;
    }
    Ok((fields, file_length))
}

/// The fields up to the file, names lower-cased, with the bucket from the
/// request's target first (a `bucket` field in the form is ignored: the
/// target is what the policy's `bucket` condition is checked against).
async fn fields_before_file(
    form: &mut FormReader<'_>,
    bucket: &str,
) -> S3Result<(Vec<(String, String)>, PartHead)> {
    let mut fields = vec![("bucket".to_owned(), bucket.to_owned())];
    let mut budget = MAX_FORM_FIELDS_BYTES;
    loop {
        let head = form.next_part().await?.ok_or_else(|| {
            S3Error::invalid_argument("POST requires exactly one file upload per request.")
        })?;
        if head.name == "file" {
            return Ok((fields, head));
        }
        let value = form.read_value(&mut budget).await?;
        let value = String::from_utf8(value.to_vec())
            .map_err(|_| malformed(&format!("the field {} is not UTF-8.", head.name)))?;
        if head.name == "bucket" {
            continue;
        }
        if field(&fields, &head.name).is_some() {
            return Err(S3Error::invalid_argument(format!(
                "The form field {} appears more than once.",
                head.name
            )));
        }
        fields.push((head.name, value));
    }
}

/// The key that signed the policy. A form with neither a policy nor a
/// signature is anonymous, and decided as an anonymous PutObject: a bucket
/// whose ACL or policy lets anyone write takes it, as S3 does. A form with
/// a signature but no policy is refused.
async fn authenticate(state: &AppState, fields: &[(String, String)]) -> S3Result<Identity> {
    let signed = SIGNATURE_FIELDS
        .iter()
        .any(|name| field(fields, name).is_some());
    match (field(fields, "policy"), signed) {
        (None, false) => Ok(crate::access_control::anonymous()),
        (None, true) => Err(S3Error::access_denied()),
        (Some(_), _) => state.verifier.verify_post_policy(fields).await,
    }
}

/// The fields that make a form a signed one (SigV4, then SigV2).
const SIGNATURE_FIELDS: [&str; 4] = [
    "x-amz-signature",
    "x-amz-credential",
    "signature",
    "awsaccesskeyid",
];

/// Streams the file part into the writer (sealed by `sealing`, if any)
/// within the allowed sizes; returns its digests and size.
async fn stream_file(
    form: &mut FormReader<'_>,
    writer: &mut ObjectWriter,
    sizes: &RangeInclusive<u64>,
    mut summer: Checksummer,
    mut sealing: Option<&mut Sealing<'_>>,
) -> S3Result<(Digests, u64)> {
    let max = (*sizes.end()).min(MAX_OBJECT_SIZE);
    let mut received: u64 = 0;
    while let Some(chunk) = form.next_chunk().await? {
        received += chunk.len() as u64;
        if received > max {
            return Err(S3Error::entity_too_large(max));
        }
        summer.update(&chunk);
        match sealing.as_deref_mut() {
            Some(sealing) => sealing.write(writer, &chunk).await?,
            None => writer.write(chunk).await?,
        }
    }
    if received < *sizes.start() {
        return Err(S3Error::new(
            Code::EntityTooSmall,
            "Your proposed upload is smaller than the minimum allowed size",
        )
        .with("MinSizeAllowed", sizes.start().to_string()));
    }
    Ok((summer.finish(), received))
}

/// The fields PutObject would take as headers, as a header map.
fn object_headers(fields: &[(String, String)]) -> S3Result<HeaderMap> {
    let mut headers = HeaderMap::new();
    for (name, value) in fields {
        let wanted = HEADER_FIELDS.contains(&name.as_str())
            || name.starts_with("x-amz-meta-")
            || name.starts_with(CHECKSUM_FIELD_PREFIX)
            || name.starts_with(LOCK_FIELD_PREFIX);
        if !wanted {
            continue;
        }
        let invalid = || {
            S3Error::invalid_argument(format!(
                "The form field {name} is not a valid header value."
            ))
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let value = HeaderValue::from_bytes(value.as_bytes()).map_err(|_| invalid())?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// What a bucket policy's conditions read of a form upload as its
/// headers: the object's, and its `acl` field as `x-amz-acl`.
fn policy_headers(headers: &HeaderMap, fields: &[(String, String)]) -> S3Result<HeaderMap> {
    let mut headers = headers.clone();
    if let Some(acl) = field(fields, "acl") {
        let value = HeaderValue::from_str(acl).map_err(|_| {
            S3Error::invalid_argument("The form field acl is not a valid header value.")
        })?;
        headers.insert("x-amz-acl", value);
    }
    Ok(headers)
}

/// How the form was signed, as `s3:signatureversion` names it.
fn signature_version(fields: &[(String, String)]) -> Option<&'static str> {
    if field(fields, "x-amz-algorithm").is_some() {
        Some("AWS4-HMAC-SHA256")
    } else if field(fields, "signature").is_some() {
        Some("AWS")
    } else {
        None
    }
}

#[derive(Serialize)]
struct PostResponse {
    #[serde(rename = "Location")]
    location: String,
    #[serde(rename = "Bucket")]
    bucket: String,
    #[serde(rename = "Key")]
    key: String,
    #[serde(rename = "ETag")]
    etag: String,
}

/// `success_action_redirect` (or the older `redirect`) to a valid URL: a
/// 303 there; else `success_action_status` 200, 201 (with a PostResponse
/// document) or, by default, 204.
fn answer(
    parts: &Parts,
    fields: &[(String, String)],
    bucket: &str,
    key: &str,
    etag: &str,
) -> S3Result<Response> {
    let etag = quoted_etag(etag);
    let redirect = field(fields, "success_action_redirect")
        .or_else(|| field(fields, "redirect"))
        .filter(|url| url.starts_with("http://") || url.starts_with("https://"));
    let location = object_url(parts, bucket, key);
    let mut response = if let Some(url) = redirect {
        let separator = if url.contains('?') { '&' } else { '?' };
        let target = format!(
            "{url}{separator}bucket={}&key={}&etag={}",
            encode(bucket),
            encode(key),
            encode(&etag)
        );
        let mut response = empty_response(StatusCode::SEE_OTHER);
        insert(response.headers_mut(), header::LOCATION, &target);
        response
    } else {
        match field(fields, "success_action_status") {
            Some("200") => empty_response(StatusCode::OK),
            Some("201") => {
                let document = PostResponse {
                    location: location.clone(),
                    bucket: bucket.to_owned(),
                    key: key.to_owned(),
                    etag: etag.clone(),
                };
                let mut response = xml_response("PostResponse", &document)?;
                *response.status_mut() = StatusCode::CREATED;
                response
            }
            _ => empty_response(StatusCode::NO_CONTENT),
        }
    };
    let out = response.headers_mut();
    insert(out, header::ETAG, &etag);
    if !out.contains_key(header::LOCATION) {
        insert(out, header::LOCATION, &location);
    }
    Ok(response)
}

/// The new object's path-style URL on the host the form was posted to.
fn object_url(parts: &Parts, bucket: &str, key: &str) -> String {
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("localhost");
    let scheme = parts.uri.scheme_str().unwrap_or("http");
    // Bucket names need no escaping.
    format!(
        "{scheme}://{host}/{bucket}/{}",
        utf8_percent_encode(key, URL_ENCODE)
    )
}

fn encode(text: &str) -> String {
    utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The boundary of a `multipart/form-data` Content-Type; S3 answers any
/// other body this way.
fn boundary(headers: &HeaderMap) -> S3Result<String> {
    let wrong = || {
        S3Error::new(
            Code::PreconditionFailed,
            "At least one of the pre-conditions you specified did not hold",
        )
        .with(
            "Condition",
            "Bucket POST must be of the enclosure-type multipart/form-data",
        )
    };
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(wrong)?;
    let mut params = value.split(';').map(str::trim);
    if !params
        .next()
        .is_some_and(|kind| kind.eq_ignore_ascii_case("multipart/form-data"))
    {
        return Err(wrong());
    }
    params
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, value)| value.trim().trim_matches('"').to_owned())
        .filter(|boundary| (1..=70).contains(&boundary.len()))
        .ok_or_else(|| malformed("the Content-Type names no boundary (1 to 70 characters)."))
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(field, _)| field == name)
        .map(|(_, value)| value.as_str())
}

fn set_field(fields: &mut [(String, String)], name: &str, value: &str) {
    if let Some((_, old)) = fields.iter_mut().find(|(field, _)| field == name) {
        value.clone_into(old);
    }
}

fn missing_field(name: &str) -> S3Error {
    S3Error::invalid_argument(format!(
        "Bucket POST must contain a field named '{name}'.  If it is specified, please check the order of the fields."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_headers;

    #[test]
    fn the_boundary_comes_from_a_form_data_content_type() {
        let boundary_of = |value: &str| boundary(&test_headers(&[("content-type", value)]));
        assert_eq!(
            boundary_of("multipart/form-data; boundary=----WebKitFormBoundaryX").unwrap(),
            "----WebKitFormBoundaryX"
        );
        assert_eq!(
            boundary_of("Multipart/Form-Data; charset=utf-8; boundary=\"a b\"").unwrap(),
            "a b"
        );
        assert_eq!(
            boundary_of("application/x-www-form-urlencoded")
                .unwrap_err()
                .code,
            "PreconditionFailed"
        );
        assert_eq!(
            boundary_of("multipart/form-data").unwrap_err().code,
            "MalformedPOSTRequest"
        );
        assert_eq!(boundary(&HeaderMap::new()).unwrap_err().status, 412);
    }

    #[test]
    fn metadata_fields_become_object_headers() {
        let fields: Vec<(String, String)> = [
            ("key", "k"),
            ("content-type", "text/plain"),
            ("x-amz-meta-colour", "blue"),
            ("policy", "p"),
        ]
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
        let headers = object_headers(&fields).unwrap();
        assert_eq!(headers.len(), 2);
        assert_eq!(headers["content-type"], "text/plain");
        assert_eq!(headers["x-amz-meta-colour"], "blue");
        let bad = vec![("content-type".to_owned(), "a\nb".to_owned())];
        assert_eq!(object_headers(&bad).unwrap_err().code, "InvalidArgument");
    }
}
