//! CopyObject: the source's bytes streamed into a new upload of the
//! destination, with metadata and tags copied or replaced as the
//! directives say, committed under the destination's write conditions.
//! An SSE-S3 source is copied as its plaintext; the copy is sealed with
//! SSE-S3 when the request asks (`x-amz-server-side-encryption: AES256`)
//! or the destination bucket has default encryption, else stored plain,
//! as AWS copies without encryption parameters.
//!
//! The embedded back end copies blocks rather than sharing them with the
//! source. Each block then belongs to exactly one object, so reclamation
//! needs no reference counts and deleting or overwriting one key can never
//! free blocks another key still reads. The price is the copy I/O, which
//! S3 clients already expect to happen server-side.

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderValue};
use storage_client::{BucketRef, ChecksumType, NewObject, ObjectChecksum, Owner, WriteIntent};

use super::authorise::BucketContext;
use super::copy_source::CopySource;
use super::headers::written_version_header;
use super::headers::{object_meta_from_request, quoted_etag};
use super::integrity::requested_algorithm;
use super::put::{MAX_OBJECT_SIZE, check_storage_class, write_condition};
use super::sse::write::Sealing;
use super::tagging::tags_from_header;
use super::xml_response;
use crate::checksum::{ChecksumAlgorithm, Checksummer};
use crate::error::{S3Error, S3Result};
use crate::state::AppState;
use crate::xml::{ChecksumValues, CopyObjectResult, S3_NAMESPACE, iso8601};

/// `x-amz-metadata-directive` / `x-amz-tagging-directive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    Copy,
    Replace,
}

/// Headers that change an object copied onto itself, which AWS requires
/// of such a copy (besides `x-amz-metadata-directive: REPLACE`).
const IN_PLACE_CHANGES: [&str; 4] = [
    "x-amz-storage-class",
    "x-amz-checksum-algorithm",
    "x-amz-server-side-encryption",
    "x-amz-website-redirect-location",
];

pub async fn copy_object(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    parts: &Parts,
    bucket: &str,
    key: &str,
) -> S3Result<Response> {
    let headers = &parts.headers;
    check_storage_class(headers)?;
    let metadata_directive = directive(headers, "x-amz-metadata-directive")?;
    let tagging_directive = directive(headers, "x-amz-tagging-directive")?;
    let requested_algorithm = requested_algorithm(headers, "x-amz-checksum-algorithm")?;
    let condition = write_condition(headers)?;
    let asked = super::sse::for_write(state, &parts.headers).await?;
    let encryption =
        super::bucket_encryption::asked_or_default(state, asked, &owner.namespace, bucket).await?;
    let source = CopySource::from_request_opening(state, parts, owner).await?;

    if source.bucket == bucket
        && source.key == key
        && metadata_directive == Directive::Copy
        && !IN_PLACE_CHANGES
            .iter()
            .any(|name| headers.contains_key(*name))
    {
        return Err(S3Error::invalid_request(
            "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
        ));
    }
    let plain_size = source.plain_size();
    check_copy_size(plain_size)?;
    let mut meta = match metadata_directive {
        Directive::Copy => source.info.meta.clone(),
        Directive::Replace => object_meta_from_request(headers)?,
    };
    // The source's encryption record describes the source's bytes, never
    // the copy's: the copy gets its own, or none.
    meta.user.remove(crate::sse::record::ENTRY);
    super::acl::record_object_acl(state, owner, context, headers, bucket, &mut meta).await?;
    let (query, write) = (parts.uri.query(), super::object_lock::Write::Other);
    super::object_lock::record(
        state,
        &owner.namespace,
        bucket,
        headers,
        query,
        write,
        &mut meta,
    )
    .await?;
    let tags = match tagging_directive {
        Directive::Copy => source.info.tags.clone(),
        Directive::Replace => tags_from_header(headers)?,
    };
    let (summer, carried) = checksum_plan(requested_algorithm, source.info.checksum.as_ref());

    let intent = WriteIntent {
        condition,
        tags,
        size_hint: Some(match encryption {
            Some(_) => crate::sse::segments::sealed_size(plain_size),
            None => plain_size,
        }),
    };
    let mut writer = state
        .storage
        .create_object(BucketRef::new(owner, bucket).object(key), intent)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
    let mut sealing = encryption
        .as_ref()
        .map(|encryption| Sealing::new(encryption, MAX_OBJECT_SIZE));
    let copied = async {
        let digests = source
            .copy_into(
                state,
                owner,
                0..plain_size,
                &mut writer,
                summer,
                sealing.as_mut(),
            )
            .await?;
        let sealed = match sealing {
            Some(sealing) => Some(sealing.finish(&mut writer, plain_size, &digests).await?),
            None => None,
        };
        Ok::<_, S3Error>((digests, sealed))
    };
    let (digests, sealed) = match copied.await {
        Ok(copied) => copied,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };
    let checksum = carried.or_else(|| digests.stored_checksum());
    let etag = match &sealed {
        Some(sealed) => {
            sealed.store(&mut meta);
            sealed.etag.clone()
        }
        None => digests.etag(),
    };
    let committed = writer
        .commit(NewObject {
            etag,
            meta,
            checksum: checksum.clone(),
        })
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;

    // Ozone's OM stamps a key's modification time itself, so what a commit
    // reports there is the gateway's clock a little later; the answer gives
    // the stored time, the Last-Modified that HEAD and listings show.
    let last_modified = match state
        .storage
        .lookup(BucketRef::new(owner, bucket).object(key))
        .await
    {
        Ok(stored) if stored.etag == committed.etag => stored.last_modified,
        _ => committed.last_modified,
    };
    let document = CopyObjectResult {
        xmlns: S3_NAMESPACE,
        etag: quoted_etag(&committed.etag),
        last_modified: iso8601(last_modified),
        checksum: checksum.as_ref().and_then(ChecksumValues::from_stored),
    };
    let mut response = xml_response("CopyObjectResult", &document)?;
    let out = response.headers_mut();
    written_version_header(out, committed.version_id.as_deref());
    if let Some(encryption) = &encryption {
        encryption.echo(out);
    }
    if let Some(value) = source
        .info
        .version_id
        .as_deref()
        .and_then(|id| HeaderValue::from_str(id).ok())
    {
        out.insert("x-amz-copy-source-version-id", value);
    }
    Ok(response)
}

/// CopyObject copies at most what one PUT may store; bigger sources are
/// copied part by part with UploadPartCopy.
fn check_copy_size(size: u64) -> S3Result<()> {
    if size > MAX_OBJECT_SIZE {
        return Err(S3Error::invalid_request(format!(
            "The specified copy source is larger than the maximum allowable size for a copy source: {MAX_OBJECT_SIZE}"
        )));
    }
    Ok(())
}

fn directive(headers: &HeaderMap, name: &'static str) -> S3Result<Directive> {
    match headers.get(name).map(|value| value.as_bytes()) {
        None | Some(b"COPY") => Ok(Directive::Copy),
        Some(b"REPLACE") => Ok(Directive::Replace),
        Some(other) => Err(S3Error::invalid_argument(format!(
            "Unknown {name}: {}",
            String::from_utf8_lossy(other)
        ))
        .with("ArgumentName", name)),
    }
}

/// What to compute while copying, and the source checksum to carry over
/// instead when it still describes the copy: a whole-object value does,
/// a composite one (per part of a multipart source) does not, because the
/// copy is a single-part object, so it is recomputed with its algorithm.
fn checksum_plan(
    requested: Option<ChecksumAlgorithm>,
    source: Option<&ObjectChecksum>,
) -> (Checksummer, Option<ObjectChecksum>) {
    if let Some(alg) = requested {
        return (Checksummer::new(Some(alg)), None);
    }
    match source {
        Some(stored) if stored.kind == ChecksumType::FullObject => {
            (Checksummer::new(None), Some(stored.clone()))
        }
        Some(stored) => (Checksummer::new(Some(stored.algorithm)), None),
        None => (Checksummer::new(None), None),
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::ops::test_headers as headers;

    fn stored(kind: &str) -> ObjectChecksum {
        ObjectChecksum {
            algorithm: ChecksumAlgorithm::Crc32,
            value: "y/Q5Jg==".into(),
            kind: ChecksumType::from_name(kind).unwrap(),
        }
    }

    #[test]
    fn directives_default_to_copy_and_reject_other_values() {
        let name = "x-amz-metadata-directive";
        assert_eq!(directive(&headers(&[]), name).unwrap(), Directive::Copy);
        assert_eq!(
            directive(&headers(&[(name, "COPY")]), name).unwrap(),
            Directive::Copy
        );
        assert_eq!(
            directive(&headers(&[(name, "REPLACE")]), name).unwrap(),
            Directive::Replace
        );
        for bad in ["replace", "MOVE", ""] {
            let err = directive(&headers(&[(name, bad)]), name).unwrap_err();
            assert_eq!(err.code, "InvalidArgument", "{bad:?}");
        }
    }

    #[test]
    fn sources_over_5_gib_need_upload_part_copy() {
        assert!(check_copy_size(0).is_ok());
        assert!(check_copy_size(MAX_OBJECT_SIZE).is_ok());
        let err = check_copy_size(MAX_OBJECT_SIZE + 1).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("InvalidRequest", 400));
    }

    #[test]
    fn checksum_algorithm_must_be_known() {
        let name = "x-amz-checksum-algorithm";
        assert_eq!(requested_algorithm(&headers(&[]), name).unwrap(), None);
        assert_eq!(
            requested_algorithm(&headers(&[(name, "SHA256")]), name).unwrap(),
            Some(ChecksumAlgorithm::Sha256)
        );
        let err = requested_algorithm(&headers(&[(name, "MD5")]), name).unwrap_err();
        assert_eq!(err.code, "InvalidRequest");
    }

    #[test]
    fn whole_object_checksums_are_carried_and_composite_ones_recomputed() {
        let (mut summer, carried) = checksum_plan(None, Some(&stored("FULL_OBJECT")));
        assert_eq!(carried, Some(stored("FULL_OBJECT")));
        summer.update(b"123456789");
        assert_eq!(summer.finish().checksum, None);

        let (mut summer, carried) = checksum_plan(None, Some(&stored("COMPOSITE")));
        assert_eq!(carried, None);
        summer.update(b"123456789");
        let digests = summer.finish();
        assert_eq!(digests.stored_checksum(), Some(stored("FULL_OBJECT")));

        let (mut summer, carried) =
            checksum_plan(Some(ChecksumAlgorithm::Crc32), Some(&stored("FULL_OBJECT")));
        assert_eq!(carried, None);
        summer.update(b"123456789");
        assert_eq!(
            summer.finish().stored_checksum(),
            Some(stored("FULL_OBJECT"))
        );

        let (summer, carried) = checksum_plan(None, None);
        assert_eq!((summer.finish().checksum, carried), (None, None));
    }
}
