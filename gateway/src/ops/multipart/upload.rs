//! UploadPart and UploadPartCopy: a part is written like a PutObject body
//! (streamed, digested, verified before anything is kept), then committed
//! as part N of the upload, replacing an earlier part N.

use std::time::SystemTime;

use axum::response::Response;
use http::request::Parts;
use http::{StatusCode, header};
use storage_client::{PartCommit, PartInfo, PartNumber, UploadRef};

use super::upload_error;
use crate::auth::Payload;
use crate::checksum::{ChecksumAlgorithm, Checksummer};
use crate::error::S3Error;
use crate::ops::copy_source::CopySource;
use crate::ops::empty_response;
use crate::ops::headers::{insert, insert_checksum, quoted_etag};
use crate::ops::integrity::IntegrityPlan;
use crate::ops::put::{MAX_OBJECT_SIZE, receive};
use crate::ops::sse::write::{Sealing, Upload, receive_sealing};
use crate::ops::xml_response;
use crate::state::AppState;
use crate::xml::{self, ChecksumValues, S3_NAMESPACE};

/// The algorithm every part of `upload` is checksummed with, if any, and
/// the upload's encryption, opened with the request's SSE-C key (if the
/// upload has one, the request must carry it).
async fn upload_settings(
    state: &AppState,
    parts: &Parts,
    upload: UploadRef<'_>,
) -> Result<(Option<ChecksumAlgorithm>, Option<Upload>), S3Error> {
    let customer_key = crate::ops::sse::customer_key(state, parts)?;
    let settings = state
        .storage
        .part_settings(upload)
        .await
        .map_err(|err| upload_error(upload, err))?;
    let keys = crate::ops::sse::Keys::of(state);
    let encrypted = Upload::open(&settings.meta, customer_key.as_ref(), keys).await?;
    crate::ops::sse::check_repeated_kms(parts, encrypted.as_ref().map(Upload::wrapping))?;
    Ok((settings.checksum_algorithm, encrypted))
}

pub async fn upload_part(
    state: &AppState,
    parts: &Parts,
    upload: UploadRef<'_>,
    number: PartNumber,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let plan = IntegrityPlan::from_headers(&parts.headers)?;
    if payload
        .declared_length()
        .is_some_and(|length| length > MAX_OBJECT_SIZE)
    {
        return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
    }
    let (required, encrypted) = upload_settings(state, parts, upload).await?;
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

    // What storage will hold: an encrypted part's sealed size.
    let size_hint = payload.declared_length().map(|plain| match &encrypted {
        Some(_) => crate::sse::multipart::stored_size(plain),
        None => plain,
    });
    let mut writer = state
        .storage
        .create_part(upload, number, size_hint)
        .await
        .map_err(|err| upload_error(upload, err))?;
    // An encrypted upload's part is sealed on its way in; its ETag is
    // what the single-PUT rule gives (see `Sealed::etag`).
    let received = match &encrypted {
        None => receive(&mut writer, payload, summer)
            .await
            .map(|digests| (digests.etag(), digests)),
        Some(encrypted) => {
            let sealing = Sealing::part(encrypted, number.get(), MAX_OBJECT_SIZE);
            receive_sealing(&mut writer, payload, summer, sealing, MAX_OBJECT_SIZE)
                .await
                .map(|(digests, sealed)| (sealed.etag, digests))
        }
    };
    let verified =
        received.and_then(|(etag, digests)| Ok((plan.verify(&digests, payload.trailers())?, etag)));
    let (checksum, etag) = match verified {
        Ok(verified) => verified,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };
    let part = writer
        .commit_part(upload.upload_id, number, PartCommit { etag, checksum })
        .await
        .map_err(|err| upload_error(upload, err))?;

    let mut response = empty_response(StatusCode::OK);
    let out = response.headers_mut();
    if let Some(encrypted) = &encrypted {
        encrypted.echo(out);
    }
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
    parts: &Parts,
    upload: UploadRef<'_>,
    number: PartNumber,
) -> Result<Response, S3Error> {
    let (algorithm, encrypted) = upload_settings(state, parts, upload).await?;
    // An encrypted source is opened (an SSE-C one with the key in the
    // x-amz-copy-source- SSE-C headers) and copied as its plaintext.
    let source = CopySource::from_request_opening(state, parts, upload.object.owner()).await?;
    let range = source.range(&parts.headers)?;
    if range.end - range.start > MAX_OBJECT_SIZE {
        return Err(S3Error::entity_too_large(MAX_OBJECT_SIZE));
    }
    let plain_len = range.end - range.start;
    let size_hint = Some(match &encrypted {
        Some(_) => crate::sse::multipart::stored_size(plain_len),
        None => plain_len,
    });
    let mut writer = state
        .storage
        .create_part(upload, number, size_hint)
        .await
        .map_err(|err| upload_error(upload, err))?;
    let summer = Checksummer::new(algorithm);
    let mut sealing = encrypted
        .as_ref()
        .map(|encrypted| Sealing::part(encrypted, number.get(), MAX_OBJECT_SIZE));
    let copied = async {
        let digests = source
            .copy_into(
                state,
                upload.object.owner(),
                range,
                &mut writer,
                summer,
                sealing.as_mut(),
            )
            .await?;
        let etag = match sealing {
            Some(sealing) => sealing.finish(&mut writer, plain_len, &digests).await?.etag,
            None => digests.etag(),
        };
        Ok::<_, S3Error>((etag, digests))
    }
    .await;
    let (etag, digests) = match copied {
        Ok(copied) => copied,
        Err(err) => {
            writer.abort().await;
            return Err(err);
        }
    };
    let checksum = digests.stored_checksum();
    let part = writer
        .commit_part(upload.upload_id, number, PartCommit { etag, checksum })
        .await
        .map_err(|err| upload_error(upload, err))?;
    let last_modified = stored_time(state, upload, number, &part).await;
    let mut response = xml_response(
        "CopyPartResult",
        &xml::CopyObjectResult {
            xmlns: S3_NAMESPACE,
            etag: quoted_etag(&part.etag),
            last_modified: xml::iso8601(last_modified),
            checksum: part
                .checksum
                .as_ref()
                .and_then(ChecksumValues::from_stored_part),
        },
    )?;
    if let Some(encrypted) = &encrypted {
        encrypted.echo(response.headers_mut());
    }
    Ok(response)
}

/// The part's Last-Modified as ListParts shows it. Ozone's OM stamps a
/// part's time itself (as it does a key's, see CopyObject), so what a
/// commit reports there is the gateway's clock a little later; one
/// ListParts call per copied part gives the stored time.
async fn stored_time(
    state: &AppState,
    upload: UploadRef<'_>,
    number: PartNumber,
    committed: &PartInfo,
) -> SystemTime {
    let listed = state.storage.list_parts(upload, number.get() - 1, 1).await;
    listed
        .ok()
        .and_then(|page| page.parts.into_iter().next())
        .filter(|stored| stored.number == number.get() && stored.etag == committed.etag)
        .map_or(committed.last_modified, |stored| stored.last_modified)
}
