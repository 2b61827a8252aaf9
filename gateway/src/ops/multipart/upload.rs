//! UploadPart and UploadPartCopy: a part is written like a PutObject body
//! (streamed, digested, verified before anything is kept), then committed
//! as part N of the upload, replacing an earlier part N.

use axum::response::Response;
use http::request::Parts;
use http::{StatusCode, header};
use storage_client::{Owner, PartCommit};

use super::UploadRef;
use crate::auth::Payload;
use crate::checksum::{ChecksumAlgorithm, Checksummer};
use crate::error::S3Error;
use crate::ops::copy_source::CopySource;
use crate::ops::empty_response;
use crate::ops::headers::{insert, insert_checksum, quoted_etag};
use crate::ops::integrity::IntegrityPlan;
use crate::ops::put::{MAX_OBJECT_SIZE, receive};
use crate::ops::xml_response;
use crate::state::AppState;
use crate::xml::{self, ChecksumValues, S3_NAMESPACE};

/// The algorithm every part of `upload` is checksummed with, if any.
async fn upload_algorithm(
    state: &AppState,
    owner: &Owner,
    upload: &UploadRef<'_>,
) -> Result<Option<ChecksumAlgorithm>, S3Error> {
    state
        .storage
        .part_checksum_algorithm(owner, upload.bucket, upload.key, upload.upload_id)
        .await
        .map_err(|err| upload.error(err))
}

pub async fn upload_part(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    upload: UploadRef<'_>,
    number: u16,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let plan = IntegrityPlan::from_headers(&parts.headers)?;
    if payload
        .declared_length()
        .is_some_and(|length| length > MAX_OBJECT_SIZE)
    {
        return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
    }
    let required = upload_algorithm(state, owner, &upload).await?;
    if let (Some(sent), Some(required)) = (plan.algorithm(), required)
        && sent != required
    {
        return Err(S3Error::invalid_request(format!(
            "Checksum Type mismatch occurred, expected checksum Type: {}, actual checksum Type: {}",
            required.name(),
            sent.name()
        )));
    }
    // A part of a checksummed upload gets its checksum even if the client
    // sent none, so completion can combine them.
    let summer = Checksummer::new(plan.algorithm().or(required));

    let size_hint = payload.declared_length();
    let mut writer = state
        .storage
        .create_part(
            owner,
            upload.bucket,
            upload.key,
            upload.upload_id,
            number,
            size_hint,
        )
        .await
        .map_err(|err| upload.error(err))?;
    let verified = receive(&mut writer, payload, summer)
        .await
        .and_then(|digests| Ok((plan.verify(&digests, payload.trailers())?, digests)));
    let (checksum, digests) = match verified {
        Ok(verified) => verified,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };
    let part = writer
        .commit_part(
            upload.upload_id,
            number,
            PartCommit {
                etag: digests.etag(),
                checksum,
            },
        )
        .await
        .map_err(|err| upload.error(err))?;

    let mut response = empty_response(StatusCode::OK);
    let out = response.headers_mut();
    insert(out, header::ETAG, &quoted_etag(&part.etag));
    if let Some(checksum) = &part.checksum {
        insert_checksum(out, checksum.algorithm, &checksum.value, None);
    }
    Ok(response)
}

/// UploadPartCopy: the part's bytes come from an existing object (all of
/// it, or `x-amz-copy-source-range`). They are copied into the part's own
/// blocks, so the part stays valid whatever happens to the source later.
pub async fn upload_part_copy(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    upload: UploadRef<'_>,
    number: u16,
) -> Result<Response, S3Error> {
    let algorithm = upload_algorithm(state, owner, &upload).await?;
    let source = CopySource::from_request(state, parts, owner).await?;
    let range = source.range(&parts.headers)?;
    if range.end - range.start > MAX_OBJECT_SIZE {
        return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
    }
    let size_hint = Some(range.end - range.start);
    let mut writer = state
        .storage
        .create_part(
            owner,
            upload.bucket,
            upload.key,
            upload.upload_id,
            number,
            size_hint,
        )
        .await
        .map_err(|err| upload.error(err))?;
    let summer = Checksummer::new(algorithm);
    let digests = match source
        .copy_into(state, owner, range, &mut writer, summer, None)
        .await
    {
        Ok(digests) => digests,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };
    let checksum = digests.stored_checksum();
    let part = writer
        .commit_part(
            upload.upload_id,
            number,
            PartCommit {
                etag: digests.etag(),
                checksum,
            },
        )
        .await
        .map_err(|err| upload.error(err))?;
    xml_response(
        "CopyPartResult",
        &xml::CopyObjectResult {
            xmlns: S3_NAMESPACE,
            etag: quoted_etag(&part.etag),
            last_modified: xml::iso8601(part.last_modified),
            checksum: part
                .checksum
                .as_ref()
                .and_then(ChecksumValues::from_stored_part),
        },
    )
}
