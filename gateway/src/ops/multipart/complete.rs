//! CompleteMultipartUpload: the client's part list is checked against the
//! stored parts (order, existence, ETags, sizes, checksums), the final ETag
//! `md5(concat(binary part md5s))-N` and the object checksum are computed
//! from the part records alone, and storage swaps the object in atomically
//! (re-checking the part ETags and the write condition in the same step).

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderName, header};
use md5::{Digest, Md5};
use storage_client::{
    CompleteUpload, KeyInfo, ObjectChecksum, PartInfo, StorageError, UploadInfo, UploadRef,
};

use super::checksum::{combine, default_type};
use super::upload_error;
use crate::auth::Payload;
use crate::checksum::{AlgorithmHeader, ChecksumAlgorithm};
use crate::error::{Code, S3Error};
use crate::ops::body::read_to_end;
use crate::ops::headers::written_version_header;
use crate::ops::headers::{insert, quoted_etag};
use crate::ops::put::write_condition;
use crate::ops::xml_response;
use crate::sse::record::{Stored, Wrapping};
use crate::state::AppState;
use crate::xml::{self, ChecksumValues, CompletedPart, S3_NAMESPACE};

/// AWS's minimum size of every part but the last.
pub const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;
/// AWS's maximum object size.
pub const MAX_MULTIPART_OBJECT_SIZE: u64 = 5 * 1024 * 1024 * 1024 * 1024;
/// 10,000 parts at a generous 400 bytes of XML each.
const MAX_BODY: usize = 4 * 1024 * 1024;

pub async fn complete_multipart_upload(
    state: &AppState,
    parts: &Parts,
    upload: UploadRef<'_>,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let condition = write_condition(&parts.headers)?;
    // Read to the end whatever the framing: a chunked body has no length.
    let body = read_to_end(payload, MAX_BODY).await?;
    let request: xml::CompleteMultipartUpload = xml::from_xml(&body)?;
    if request.parts.is_empty() {
        return Err(S3Error::malformed_xml());
    }
    let info = match state.storage.multipart_upload(upload).await {
        Ok(info) => info,
        Err(StorageError::NoSuchUpload) => {
            // S3 answers a retried completion with the object it made, so a
            // client whose first response was lost does not see an error.
            return match already_completed(state, upload, &request.parts).await {
                Some(object) => completed_response(&parts.headers, upload, &object),
                None => Err(upload_error(upload, StorageError::NoSuchUpload)),
            };
        }
        Err(err) => return Err(upload_error(upload, err)),
    };
    // AWS takes an SSE-C upload's key here too: if sent, it must be the
    // upload's; it is required where the upload has a checksum algorithm
    // (the CompleteMultipartUpload reference), and optional otherwise.
    let customer_key = crate::ops::sse::customer_key(state, parts)?;
    let stored_record = Stored::of(&info.meta);
    let encrypted = matches!(stored_record, Ok(Some(Stored::Multipart(_))));
    let is_customer = matches!(
        stored_record
            .as_ref()
            .map(|s| s.as_ref().map(Stored::wrapping)),
        Ok(Some(Wrapping::Customer { .. }))
    );
    if customer_key.is_some() || (is_customer && info.checksum_algorithm.is_some()) {
        let keys = crate::ops::sse::Keys::of(state);
        crate::ops::sse::write::Upload::open(&info.meta, customer_key.as_ref(), keys).await?;
    }
    // It may repeat an SSE-KMS upload's `aws:kms` too (see `ops::sse`),
    // judged by the record alone: no KMS call to complete an upload.
    let wrapping = match &stored_record {
        Ok(Some(stored @ Stored::Multipart(_))) => Some(stored.wrapping()),
        _ => None,
    };
    crate::ops::sse::check_repeated_kms(parts, wrapping)?;
    let mut stored = state
        .storage
        .all_parts(upload)
        .await
        .map_err(|err| upload_error(upload, err))?;
    if encrypted {
        plaintext_sizes(&mut stored)?;
    }
    let plan = plan(&info, &stored, &request.parts)?;
    check_declared_checksum(&parts.headers, plan.checksum.as_ref())?;

    let complete = CompleteUpload {
        parts: plan.chosen,
        etag: plan.etag,
        checksum: plan.checksum,
        condition,
    };
    let object = state
        .storage
        .complete_multipart_upload(upload, complete)
        .await
        .map_err(|err| upload_error(upload, err))?;
    completed_response(&parts.headers, upload, &object)
}

/// The object under the upload's key, if it is what completing `requested`
/// made (the storage back end knows how to tell).
async fn already_completed(
    state: &AppState,
    upload: UploadRef<'_>,
    requested: &[CompletedPart],
) -> Option<KeyInfo> {
    let parts = requested
        .iter()
        .map(|part| {
            Some((
                u16::try_from(part.part_number).ok()?,
                unquoted(&part.etag).to_owned(),
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    state.storage.completed_by(upload.object, &parts).await
}

fn completed_response(
    headers: &HeaderMap,
    upload: UploadRef<'_>,
    object: &KeyInfo,
) -> Result<Response, S3Error> {
    let mut response = xml_response(
        "CompleteMultipartUploadResult",
        &xml::CompleteMultipartUploadResult {
            xmlns: S3_NAMESPACE,
            location: location(headers, upload.object.bucket.name, upload.object.key),
            bucket: upload.object.bucket.name.to_owned(),
            key: upload.object.key.to_owned(),
            etag: quoted_etag(&object.etag),
            checksum: object
                .checksum
                .as_ref()
                .and_then(ChecksumValues::from_stored),
        },
    )?;
    if let Some(checksum) = &object.checksum {
        insert(
            response.headers_mut(),
            HeaderName::from_static("x-amz-checksum-type"),
            checksum.kind.name(),
        );
    }
    written_version_header(response.headers_mut(), object.version_id.as_deref());
    // An SSE-S3 or SSE-KMS object is answered with its encryption, as AWS
    // answers (whose CompleteMultipartUpload response has no SSE-C headers).
    if let Ok(Some(stored)) = Stored::of(&object.meta)
        && let wrapping @ (Wrapping::Master { .. } | Wrapping::Kms(_)) = stored.wrapping()
    {
        crate::ops::sse::write::echo(response.headers_mut(), wrapping);
    }
    Ok(response)
}

/// An encrypted upload's parts as the client sent them: the minimum part
/// size, the object size limit and a FULL_OBJECT checksum's combination
/// are all about the plaintext.
fn plaintext_sizes(parts: &mut [PartInfo]) -> Result<(), S3Error> {
    for part in parts {
        part.size = crate::sse::multipart::plain_size(part.size).ok_or_else(|| {
            tracing::error!(
                part = part.number,
                "encrypted part has a size no part seals to"
            );
            S3Error::internal("The encrypted upload is damaged and cannot be completed")
        })?;
    }
    Ok(())
}

/// What completion will store, computed from the part records.
#[derive(Debug, PartialEq)]
struct Plan {
    chosen: Vec<(u16, String)>,
    etag: String,
    checksum: Option<ObjectChecksum>,
}

fn invalid_part(number: u32, etag: &str) -> S3Error {
    S3Error::new(Code::InvalidPart, "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
    )
    .with("PartNumber", number.to_string())
    .with("ETag", etag)
}

fn unquoted(etag: &str) -> &str {
    etag.trim().trim_matches('"')
}

/// Validates the request's part list against `stored` (in number order)
/// the way AWS does, and computes the ETag and checksum to store.
fn plan(
    upload: &UploadInfo,
    stored: &[PartInfo],
    requested: &[CompletedPart],
) -> Result<Plan, S3Error> {
    if requested
        .windows(2)
        .any(|pair| pair[0].part_number >= pair[1].part_number)
    {
        return Err(S3Error::new(
            Code::InvalidPartOrder,
            "The list of parts was not in ascending order. Parts must be ordered by part number.",
        ));
    }
    let mut chosen: Vec<&PartInfo> = Vec::with_capacity(requested.len());
    for wanted in requested {
        let part = stored
            .iter()
            .find(|p| u32::from(p.number) == wanted.part_number)
            .filter(|p| p.etag == unquoted(&wanted.etag))
            .ok_or_else(|| invalid_part(wanted.part_number, &wanted.etag))?;
        // A checksum the client lists for a part must be the one stored.
        if let Some(stored_checksum) = &part.checksum
            && wanted
                .checksum(stored_checksum.algorithm)
                .is_some_and(|sent| sent.trim() != stored_checksum.value)
        {
            return Err(invalid_part(wanted.part_number, &wanted.etag));
        }
        chosen.push(part);
    }
    // Every part but the last must reach the minimum.
    let all_but_last = &chosen[..chosen.len().saturating_sub(1)];
    if let Some(part) = all_but_last.iter().find(|part| part.size < MIN_PART_SIZE) {
        return Err(S3Error::new(
            Code::EntityTooSmall,
            "Your proposed upload is smaller than the minimum allowed object size.",
        )
        .with("ProposedSize", part.size.to_string())
        .with("MinSizeAllowed", MIN_PART_SIZE.to_string())
        .with("PartNumber", part.number.to_string())
        .with("ETag", part.etag.clone()));
    }
    let total: u64 = chosen.iter().map(|p| p.size).sum();
    if total > MAX_MULTIPART_OBJECT_SIZE {
        return Err(S3Error::entity_too_large(MAX_MULTIPART_OBJECT_SIZE));
    }
    Ok(Plan {
        chosen: chosen.iter().map(|p| (p.number, p.etag.clone())).collect(),
        etag: multipart_etag(&chosen)?,
        checksum: object_checksum(upload, &chosen)?,
    })
}

/// `hex(md5(md5(part 1) ‖ md5(part 2) ‖ ...))-N`, over the binary MD5s.
fn multipart_etag(parts: &[&PartInfo]) -> Result<String, S3Error> {
    let mut md5 = Md5::new();
    for part in parts {
        let binary = hex::decode(&part.etag)
            .map_err(|_| S3Error::internal(format!("part {} has a malformed ETag", part.number)))?;
        md5.update(&binary);
    }
    Ok(format!("{}-{}", hex::encode(md5.finalize()), parts.len()))
}

/// The object checksum the upload asked for, combined from the parts'.
fn object_checksum(
    upload: &UploadInfo,
    parts: &[&PartInfo],
) -> Result<Option<ObjectChecksum>, S3Error> {
    let Some(alg) = upload.checksum_algorithm else {
        return Ok(None);
    };
    let kind = upload.checksum_type.unwrap_or(default_type(alg));
    let mut values = Vec::with_capacity(parts.len());
    for part in parts {
        match &part.checksum {
            Some(checksum) if checksum.algorithm == alg => {
                values.push((part.size, checksum.value.as_str()));
            }
            _ => {
                return Err(S3Error::invalid_request(format!(
                    "The upload was created using a {} checksum, but part {} has none.",
                    alg.name(),
                    part.number
                )));
            }
        }
    }
    let value = combine(alg, kind, &values)
        .ok_or_else(|| S3Error::internal("stored part checksums could not be combined"))?;
    Ok(Some(ObjectChecksum {
        algorithm: alg,
        value,
        kind,
    }))
}

/// An object checksum sent with the request must be the one computed.
fn check_declared_checksum(
    headers: &HeaderMap,
    computed: Option<&ObjectChecksum>,
) -> Result<(), S3Error> {
    for alg in ChecksumAlgorithm::ALL {
        let Some(sent) = headers.get(alg.header_name()) else {
            continue;
        };
        let sent = sent.to_str().unwrap_or_default().trim();
        let matches = computed.is_some_and(|c| c.algorithm == alg && c.value == sent);
        if !matches {
            return Err(S3Error::bad_digest(format!(
                "The {} you specified did not match the calculated checksum.",
                alg.name().to_ascii_uppercase()
            )));
        }
    }
    Ok(())
}

/// Where the object can be fetched, as the client addressed us.
fn location(headers: &HeaderMap, bucket: &str, key: &str) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    let key = percent_encoding::utf8_percent_encode(key, crate::ops::list::URL_ENCODE);
    format!("http://{host}/{bucket}/{key}")
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use base64::Engine;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use storage_client::{ChecksumType, ObjectMeta};

    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn upload(alg: Option<&str>, kind: Option<&str>) -> UploadInfo {
        UploadInfo {
            bucket: "b".into(),
            key: "k".into(),
            upload_id: "u".into(),
            owner: "o".into(),
            initiated: SystemTime::UNIX_EPOCH,
            meta: ObjectMeta::default(),
            tags: Vec::new(),
            checksum_algorithm: alg.and_then(ChecksumAlgorithm::from_name),
            checksum_type: kind.and_then(ChecksumType::from_name),
        }
    }

    /// A stored part whose body is `fill` repeated `size` times.
    fn stored(number: u16, size: u64, fill: u8, alg: Option<ChecksumAlgorithm>) -> PartInfo {
        let body = vec![fill; size as usize];
        PartInfo {
            number,
            size,
            etag: hex::encode(Md5::digest(&body)),
            checksum: alg.map(|alg| ObjectChecksum {
                algorithm: alg,
                value: alg.digest(&body),
                kind: ChecksumType::FullObject,
            }),
            last_modified: SystemTime::UNIX_EPOCH,
        }
    }

    fn request(number: u32, etag: &str) -> CompletedPart {
        CompletedPart {
            part_number: number,
            etag: etag.to_owned(),
            crc32: None,
            crc32c: None,
            crc64nvme: None,
            sha1: None,
            sha256: None,
        }
    }

    #[test]
    fn etag_is_md5_of_binary_part_md5s_with_count() {
        let parts = [stored(1, 5 * MIB, b'a', None), stored(2, 10, b'b', None)];
        let requested = [
            request(1, &format!("\"{}\"", parts[0].etag)),
            request(2, &parts[1].etag),
        ];
        let plan = plan(&upload(None, None), &parts, &requested).unwrap();
        let mut joined = hex::decode(&parts[0].etag).unwrap();
        joined.extend(hex::decode(&parts[1].etag).unwrap());
        assert_eq!(
            plan.etag,
            format!("{}-2", hex::encode(Md5::digest(&joined)))
        );
        assert_eq!(
            plan.chosen,
            vec![(1, parts[0].etag.clone()), (2, parts[1].etag.clone())]
        );
        assert_eq!(plan.checksum, None);
    }

    #[test]
    fn part_list_errors_match_aws() {
        let parts = [
            stored(1, 5 * MIB, b'a', None),
            stored(2, MIB, b'b', None),
            stored(3, 10, b'c', None),
        ];
        let code = |requested: &[CompletedPart]| {
            plan(&upload(None, None), &parts, requested)
                .map(|_| ())
                .unwrap_err()
                .code
        };
        let e = |i: usize| parts[i].etag.clone();
        assert_eq!(
            code(&[request(2, &e(1)), request(1, &e(0))]),
            "InvalidPartOrder"
        );
        assert_eq!(
            code(&[request(1, &e(0)), request(1, &e(0))]),
            "InvalidPartOrder"
        );
        assert_eq!(code(&[request(1, &e(0)), request(4, &e(0))]), "InvalidPart");
        assert_eq!(code(&[request(1, &e(1))]), "InvalidPart");
        assert_eq!(
            code(&[request(2, &e(1)), request(3, &e(2))]),
            "EntityTooSmall"
        );
        // The last part may be small; so may an only part.
        assert!(
            plan(
                &upload(None, None),
                &parts,
                &[request(1, &e(0)), request(3, &e(2))]
            )
            .is_ok()
        );
        assert!(plan(&upload(None, None), &parts, &[request(3, &e(2))]).is_ok());
    }

    #[test]
    fn checksums_are_combined_and_client_part_checksums_verified() {
        let alg = ChecksumAlgorithm::Crc64Nvme;
        let parts = [
            stored(1, 5 * MIB, b'a', Some(alg)),
            stored(2, 7, b'b', Some(alg)),
        ];
        let mut requested = vec![request(1, &parts[0].etag), request(2, &parts[1].etag)];
        let plan_for =
            |requested: &[CompletedPart]| plan(&upload(Some("crc64nvme"), None), &parts, requested);
        let whole = [vec![b'a'; 5 * MIB as usize], vec![b'b'; 7]].concat();
        let checksum = plan_for(&requested).unwrap().checksum.unwrap();
        assert_eq!(checksum.value, alg.digest(&whole));
        assert_eq!(checksum.kind, ChecksumType::FullObject);

        requested[1].crc64nvme = Some(BASE64.encode([0u8; 8]));
        assert_eq!(plan_for(&requested).unwrap_err().code, "InvalidPart");
        requested[1].crc64nvme = parts[1].checksum.as_ref().map(|c| c.value.clone());
        assert!(plan_for(&requested).is_ok());

        let crc32 = ChecksumAlgorithm::Crc32;
        let parts = [
            stored(1, 5 * MIB, b'a', Some(crc32)),
            stored(2, 7, b'b', Some(crc32)),
        ];
        let requested = [request(1, &parts[0].etag), request(2, &parts[1].etag)];
        let composite = plan(
            &upload(Some("crc32"), Some("COMPOSITE")),
            &parts,
            &requested,
        )
        .unwrap()
        .checksum
        .unwrap();
        assert!(composite.value.ends_with("-2"), "{}", composite.value);
        assert_eq!(composite.kind, ChecksumType::Composite);
    }

    #[test]
    fn declared_object_checksum_must_match() {
        let computed = ObjectChecksum {
            algorithm: ChecksumAlgorithm::Crc64Nvme,
            value: "AAAAAAAAAAA=".into(),
            kind: ChecksumType::FullObject,
        };
        let mut headers = HeaderMap::new();
        assert!(check_declared_checksum(&headers, Some(&computed)).is_ok());
        headers.insert("x-amz-checksum-crc64nvme", "AAAAAAAAAAA=".parse().unwrap());
        assert!(check_declared_checksum(&headers, Some(&computed)).is_ok());
        headers.insert("x-amz-checksum-crc64nvme", "AAAAAAAAAAE=".parse().unwrap());
        assert_eq!(
            check_declared_checksum(&headers, Some(&computed))
                .unwrap_err()
                .code,
            "BadDigest"
        );
    }
}
