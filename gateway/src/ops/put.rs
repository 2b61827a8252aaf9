//! PutObject: validate every header first, then stream the verified body
//! into an open key while computing MD5 and any requested checksum, verify,
//! and only then commit. Any failure aborts the writer, so nothing is stored.

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode, header};
use storage_client::{
    BucketRef, KeyInfo, NewObject, ObjectChecksum, ObjectMeta, ObjectWriter, Owner, WriteCondition,
    WriteIntent,
};

use super::authorise::BucketContext;
use super::empty_response;
use super::expiration::insert_expiration;
use super::headers::written_version_header;
use super::headers::{insert, insert_checksum, object_meta_from_request, quoted_etag};
use super::integrity::IntegrityPlan;
use super::object_lock::Write;
use super::sse::write::{Sealed, receive_sealed};
use super::tagging::tags_from_header;
use crate::auth::Payload;
use crate::checksum::{Checksummer, Digests};
use crate::error::S3Error;
use crate::state::AppState;

/// S3's limit for a single PUT.
pub const MAX_OBJECT_SIZE: u64 = 5 * 1024 * 1024 * 1024;

pub async fn put_object(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    parts: &Parts,
    bucket: &str,
    key: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let headers = &parts.headers;
    check_storage_class(headers)?;
    let plan = IntegrityPlan::from_headers(headers)?;
    let mut meta = object_meta_from_request(headers)?;
    super::acl::record_object_acl(state, owner, context, headers, bucket, &mut meta).await?;
    let query = parts.uri.query();
    super::object_lock::record(
        state,
        &owner.namespace,
        bucket,
        headers,
        query,
        Write::Put,
        &mut meta,
    )
    .await?;
    let tags = tags_from_header(headers)?;
    let condition = write_condition(headers)?;
    let asked = super::sse::for_write(state, &parts.headers).await?;
    let encryption =
        super::bucket_encryption::asked_or_default(state, asked, &owner.namespace, bucket).await?;
    if payload
        .declared_length()
        .is_some_and(|length| length > MAX_OBJECT_SIZE)
    {
        return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
    }

    let declared = payload.declared_length();
    let intent = WriteIntent {
        condition,
        tags,
        size_hint: match encryption {
            Some(_) => declared.map(crate::sse::segments::sealed_size),
            None => declared,
        },
    };
    let written = write_object(state, owner, bucket, key, intent, meta, async |writer| {
        let (digests, sealed) = match &encryption {
            Some(encryption) => {
                let (digests, sealed) = receive_sealed(
                    writer,
                    payload,
                    plan.checksummer(),
                    encryption,
                    MAX_OBJECT_SIZE,
                )
                .await?;
                (digests, Some(sealed))
            }
            None => (receive(writer, payload, plan.checksummer()).await?, None),
        };
        Ok(Filled {
            checksum: plan.verify(&digests, payload.trailers())?,
            digests,
            sealed,
        })
    })
    .await?;

    let mut response = empty_response(StatusCode::OK);
    let out = response.headers_mut();
    insert(out, header::ETAG, &quoted_etag(&written.etag));
    if let Some(encryption) = &encryption {
        encryption.echo(out);
    }
    written_version_header(out, written.committed.version_id.as_deref());
    insert_expiration(state, out, &owner.namespace, bucket, &written.committed).await;
    if let Some(checksum) = written.checksum {
        insert_checksum(
            out,
            checksum.algorithm,
            &checksum.value,
            Some(checksum.kind),
        );
    }
    Ok(response)
}

/// What filling a new object gave: its verified checksum, the digests of
/// the bytes the client sent, and, when they were stored sealed, how.
pub(super) struct Filled {
    pub checksum: Option<ObjectChecksum>,
    pub digests: Digests,
    pub sealed: Option<Sealed>,
}

/// An object [`write_object`] stored.
pub(super) struct Written {
    pub etag: String,
    pub checksum: Option<ObjectChecksum>,
    pub committed: KeyInfo,
}

/// Opens `key`, lets `fill` stream the body into it (returning the
/// verified checksum and the digests), and commits it with `meta` (and
/// the record of a sealed body); any failure aborts the writer, so
/// nothing is stored.
pub(super) async fn write_object(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    key: &str,
    intent: WriteIntent,
    mut meta: ObjectMeta,
    fill: impl AsyncFnOnce(&mut ObjectWriter) -> Result<Filled, S3Error>,
) -> Result<Written, S3Error> {
    let named = |err| S3Error::from(err).naming(bucket, Some(key));
    let mut writer = state
        .storage
        .create_object(BucketRef::new(owner, bucket).object(key), intent)
        .await
        .map_err(named)?;
    let filled = match fill(&mut writer).await {
        Ok(verified) => verified,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };
    let checksum = filled.checksum;
    let etag = match filled.sealed {
        Some(sealed) => {
            sealed.store(&mut meta);
            sealed.etag
        }
        None => filled.digests.etag(),
    };
    let object = NewObject {
        etag: etag.clone(),
        meta,
        checksum: checksum.clone(),
    };
    let committed = writer.commit(object).await.map_err(named)?;
    Ok(Written {
        etag,
        checksum,
        committed,
    })
}

/// Streams the payload into the writer; returns the digests once the
/// payload has ended cleanly (`None` from `next_chunk`).
pub(super) async fn receive(
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

/// The one storage class every object has here.
pub const STORAGE_CLASS: &str = "STANDARD";

/// Only [`STORAGE_CLASS`] exists here; AWS refuses unknown classes the same way.
pub fn check_storage_class(headers: &HeaderMap) -> Result<(), S3Error> {
    match headers.get("x-amz-storage-class") {
        None => Ok(()),
        Some(value) if value == STORAGE_CLASS => Ok(()),
        Some(_) => Err(S3Error::invalid_storage_class()),
    }
}

/// Conditional writes: `If-None-Match: *` and `If-Match: <etag>`.
pub fn write_condition(headers: &HeaderMap) -> Result<WriteCondition, S3Error> {
    if let Some(value) = headers.get(header::IF_MATCH) {
        let etag = value.to_str().unwrap_or_default().trim();
        if etag == "*" {
            return Ok(WriteCondition::IfExists);
        }
        return Ok(WriteCondition::IfEtag(super::headers::bare_etag(etag)));
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

#[cfg(test)]
mod tests {

    use super::*;
    use crate::ops::test_headers as headers;

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
            write_condition(&headers(&[("if-match", "*")])).unwrap(),
            WriteCondition::IfExists
        );
        assert_eq!(
            write_condition(&headers(&[("if-none-match", "\"abc\"")]))
                .unwrap_err()
                .code,
            "NotImplemented"
        );
    }
}
