//! PutObject: validate every header first, then stream the verified body
//! into an open key while computing MD5 and any requested checksum, verify,
//! and only then commit. Any failure aborts the writer, so nothing is stored.

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderName, StatusCode, header};
use storage_client::{Identity, NewObject, ObjectWriter, WriteCondition};

use super::empty_response;
use super::headers::{insert, object_meta_from_request, quoted_etag};
use super::integrity::IntegrityPlan;
use crate::auth::Payload;
use crate::checksum::{ChecksumAlgorithm, Checksummer, Digests};
use crate::error::S3Error;
use crate::router::Query;
use crate::state::AppState;

/// S3's limit for a single PUT.
pub const MAX_OBJECT_SIZE: u64 = 5 * 1024 * 1024 * 1024;

/// S3 allows at most 10 tags per object.
const MAX_TAGS: usize = 10;
const MAX_TAG_KEY_LEN: usize = 128;
const MAX_TAG_VALUE_LEN: usize = 256;

pub async fn put_object(
    state: &AppState,
    who: &Identity,
    parts: &Parts,
    bucket: &str,
    key: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let headers = &parts.headers;
    check_storage_class(headers)?;
    let plan = IntegrityPlan::from_headers(headers)?;
    let meta = object_meta_from_request(headers)?;
    let tags = tags_from_header(headers)?;
    let condition = write_condition(headers)?;
    if payload
        .declared_length()
        .is_some_and(|length| length > MAX_OBJECT_SIZE)
    {
        return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
    }

    let mut writer = state
        .storage
        .create_object(who, bucket, key)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
    let outcome = receive(&mut writer, payload, plan.checksummer())
        .await
        .and_then(|digests| Ok((plan.verify(&digests, payload.trailers())?, digests)));
    let (checksum, digests) = match outcome {
        Ok(verified) => verified,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };

    let etag = digests.etag();
    let object = NewObject {
        etag: etag.clone(),
        meta,
        tags,
        checksum: checksum.clone(),
        condition,
    };
    writer
        .commit(object)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;

    let mut response = empty_response(StatusCode::OK);
    let out = response.headers_mut();
    insert(out, header::ETAG, &quoted_etag(&etag));
    if let Some(checksum) = checksum
        && let Some(alg) = ChecksumAlgorithm::from_name(&checksum.algorithm)
    {
        insert(
            out,
            HeaderName::from_static(alg.header_name()),
            &checksum.value,
        );
        insert(
            out,
            HeaderName::from_static("x-amz-checksum-type"),
            &checksum.kind,
        );
    }
    Ok(response)
}

/// Streams the payload into the writer; returns the digests once the
/// payload has ended cleanly (`None` from `next_chunk`).
async fn receive(
    writer: &mut ObjectWriter,
    payload: &mut Payload,
    mut summer: Checksummer,
) -> Result<Digests, S3Error> {
    let mut received: u64 = 0;
    while let Some(chunk) = payload.next_chunk().await {
        let chunk = chunk?;
        received += chunk.len() as u64;
        if received > MAX_OBJECT_SIZE {
            return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
        }
        summer.update(&chunk);
        writer.write(chunk).await?;
    }
    Ok(summer.finish())
}

/// Only the STANDARD class exists here; AWS refuses unknown classes the same way.
fn check_storage_class(headers: &HeaderMap) -> Result<(), S3Error> {
    match headers.get("x-amz-storage-class") {
        None => Ok(()),
        Some(value) if value == "STANDARD" => Ok(()),
        Some(_) => Err(S3Error::invalid_storage_class()),
    }
}

/// Conditional writes: `If-None-Match: *` and `If-Match: <etag>`.
fn write_condition(headers: &HeaderMap) -> Result<WriteCondition, S3Error> {
    if let Some(value) = headers.get(header::IF_MATCH) {
        let etag = value.to_str().unwrap_or_default().trim();
        return Ok(WriteCondition::IfEtag(
            etag.trim_start_matches("W/").trim_matches('"').to_owned(),
        ));
    }
    match headers.get(header::IF_NONE_MATCH) {
        None => Ok(WriteCondition::None),
        Some(value) if value.to_str().is_ok_and(|v| v.trim() == "*") => {
            Ok(WriteCondition::IfAbsent)
        }
        // AWS supports only `*` here and answers anything else this way.
        Some(_) => Err(S3Error::not_implemented(
            "If-None-Match with a value other than * on PutObject",
        )),
    }
}

/// `x-amz-tagging: k1=v1&k2=v2` (URL query encoding).
fn tags_from_header(headers: &HeaderMap) -> Result<Vec<(String, String)>, S3Error> {
    let Some(value) = headers.get("x-amz-tagging") else {
        return Ok(Vec::new());
    };
    let text = value
        .to_str()
        .map_err(|_| S3Error::invalid_tag("The x-amz-tagging header is not valid."))?;
    let query = Query::parse(Some(text))
        .map_err(|_| S3Error::invalid_tag("The x-amz-tagging header is not valid."))?;
    let tags = query.pairs().to_vec();
    if tags.len() > MAX_TAGS {
        return Err(S3Error::invalid_tag(
            "Object tags cannot be greater than 10",
        ));
    }
    for (i, (key, value)) in tags.iter().enumerate() {
        if key.is_empty() || key.chars().count() > MAX_TAG_KEY_LEN {
            return Err(S3Error::invalid_tag(
                "The TagKey you have provided is invalid",
            ));
        }
        if value.chars().count() > MAX_TAG_VALUE_LEN {
            return Err(S3Error::invalid_tag(
                "The TagValue you have provided is invalid",
            ));
        }
        if tags[..i].iter().any(|(earlier, _)| earlier == key) {
            return Err(S3Error::invalid_tag(
                "Cannot provide multiple Tags with the same key",
            ));
        }
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn only_standard_storage_class_is_accepted() {
        assert!(check_storage_class(&headers(&[])).is_ok());
        assert!(check_storage_class(&headers(&[("x-amz-storage-class", "STANDARD")])).is_ok());
        for class in ["GLACIER", "standard", "REDUCED_REDUNDANCY", "BOGUS"] {
            let err = check_storage_class(&headers(&[("x-amz-storage-class", class)])).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidStorageClass", 400)
            );
        }
    }

    #[test]
    fn conditional_write_headers() {
        assert_eq!(
            write_condition(&headers(&[])).unwrap(),
            WriteCondition::None
        );
        assert_eq!(
            write_condition(&headers(&[("if-none-match", "*")])).unwrap(),
            WriteCondition::IfAbsent
        );
        assert_eq!(
            write_condition(&headers(&[("if-match", "\"abc\"")])).unwrap(),
            WriteCondition::IfEtag("abc".into())
        );
        assert_eq!(
            write_condition(&headers(&[("if-none-match", "\"abc\"")]))
                .unwrap_err()
                .code,
            "NotImplemented"
        );
    }

    #[test]
    fn tagging_header_is_parsed_and_limited() {
        assert_eq!(
            tags_from_header(&headers(&[("x-amz-tagging", "a=1&b=two%20words&c=")])).unwrap(),
            vec![
                ("a".to_owned(), "1".to_owned()),
                ("b".to_owned(), "two words".to_owned()),
                ("c".to_owned(), String::new()),
            ]
        );
        let eleven: Vec<String> = (0..11).map(|i| format!("k{i}=v")).collect();
        for bad in [
            eleven.join("&"),
            "a=1&a=2".to_owned(),
            "=v".to_owned(),
            format!("k={}", "v".repeat(257)),
        ] {
            let err = tags_from_header(&headers(&[("x-amz-tagging", &bad)])).unwrap_err();
            assert_eq!(err.code, "InvalidTag", "{bad}");
        }
    }
}
