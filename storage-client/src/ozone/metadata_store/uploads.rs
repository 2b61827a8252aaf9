//! The multipart role on Ozone: the OM's own multipart uploads, with the
//! checksums Ozone has no place for kept as [`ChecksumRecords`].

use std::collections::BTreeMap;
use std::time::SystemTime;

use async_trait::async_trait;

use super::{LIST_BATCH, OzoneMetadata, part_number, storable_key, upload_markers, with_checksums};
use crate::metadata::{ObjectName, OpenKey, PartName, ScanRange, UploadName, UploadStore};
use crate::multipart::{
    CompleteUpload, NewUpload, PartCommit, PartInfo, PartSettings, UploadInfo,
    position as upload_position,
};
use crate::ozone::checksum_records::{ObjectChecksums, UploadSettings};
use crate::ozone::model::OpenPart;
use crate::ozone::object_mapping::{
    block_from_location, key_info, object_metadata, ozone_multipart_etag,
};
use crate::{
    BlockLocation, KeyInfo, ObjectChecksum, ObjectRef, Owner, Result, StorageError, UploadRef,
    WriteIntent,
};

#[async_trait]
impl UploadStore for OzoneMetadata {
    async fn create_multipart_upload(
        &self,
        object: ObjectRef<'_>,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        let (owner, object) = (object.owner(), ObjectName::from(object));
        storable_key(&object.key)?;
        let metadata = object_metadata(&upload.meta, None);
        let upload_id = self
            .om
            .initiate_multipart(
                &owner.access_key,
                &self.ozone_name(&object.bucket),
                &object.key,
                &metadata,
                &upload.tags,
            )
            .await?;
        let settings = UploadSettings {
            algorithm: upload.checksum_algorithm,
            kind: upload.checksum_type,
            meta: upload.meta.clone(),
        };
        self.checksums.record_upload(&upload_id, settings).await?;
        Ok(UploadInfo {
            bucket: object.bucket,
            key: object.key,
            upload_id,
            owner: owner.access_key.clone(),
            initiated: SystemTime::now(),
            meta: upload.meta,
            tags: upload.tags,
            checksum_algorithm: upload.checksum_algorithm,
            checksum_type: upload.checksum_type,
        })
    }

    async fn multipart_upload(&self, upload: UploadRef<'_>) -> Result<UploadInfo> {
        let (owner, upload) = (upload.object.owner(), &UploadName::from(upload));
        let (bucket, key, upload_id) = (
            upload.object.bucket.as_str(),
            upload.object.key.as_str(),
            upload.upload_id.as_str(),
        );
        let name = self.ozone_name(bucket);
        let mut key_marker = String::new();
        let mut id_marker = String::new();
        loop {
            let page = self
                .om
                .list_uploads(
                    &owner.access_key,
                    &name,
                    key,
                    &key_marker,
                    &id_marker,
                    LIST_BATCH,
                )
                .await?;
            if let Some(found) = page
                .uploads
                .iter()
                .find(|u| u.key == key && u.upload_id == upload_id)
            {
                // Ozone does not hand back the metadata and tags the upload
                // was started with; the checksum settings and the metadata
                // are our record (the tags are not kept).
                let settings = self.checksums.upload(upload_id).await?;
                return Ok(UploadInfo {
                    bucket: bucket.to_owned(),
                    key: key.to_owned(),
                    upload_id: upload_id.to_owned(),
                    owner: owner.access_key.clone(),
                    initiated: found.created,
                    meta: settings.meta,
                    tags: Vec::new(),
                    checksum_algorithm: settings.algorithm,
                    checksum_type: settings.kind,
                });
            }
            match (
                page.is_truncated,
                page.next_key_marker,
                page.next_upload_id_marker,
            ) {
                (true, Some(next_key), next_id) if next_key.as_str() <= key => {
                    key_marker = next_key;
                    id_marker = next_id.unwrap_or_default();
                }
                _ => return Err(StorageError::NoSuchUpload),
            }
        }
    }

    /// Only the upload's record, which [`ChecksumRecords`] keeps once
    /// read: the OM itself refuses CreateKey for a part of an upload not
    /// in progress (NO_SUCH_MULTIPART_UPLOAD_ERROR), so UploadPart sends it
    /// only the part's own commands (CreateKey, AllocateBlock,
    /// CommitMultipartUploadPart), as Ozone's own S3 gateway does.
    async fn part_settings(&self, upload: UploadRef<'_>) -> Result<PartSettings> {
        let settings = self.checksums.upload(upload.upload_id).await?;
        Ok(PartSettings {
            checksum_algorithm: settings.algorithm,
            meta: settings.meta,
        })
    }

    async fn create_part(
        &self,
        owner: &Owner,
        part: &PartName,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        let object = &part.upload.object;
        storable_key(&object.key)?;
        let number = part_number(part.number)?;
        let open = self
            .om
            .create_part(
                &owner.access_key,
                &self.ozone_name(&object.bucket),
                &object.key,
                &part.upload.upload_id,
                number,
                size_hint.unwrap_or(0),
            )
            .await?;
        Ok(self
            .remember(object.clone(), open, WriteIntent::default())
            .await)
    }

    async fn commit_part(
        &self,
        owner: &Owner,
        open: OpenKey,
        part: PartName,
        blocks: Vec<BlockLocation>,
        commit: PartCommit,
    ) -> Result<PartInfo> {
        let ozone_open = self.take_open_key(&open).await?;
        let (upload_id, number) = (part.upload.upload_id.as_str(), part.number);
        let wanted = OpenPart {
            upload_id: upload_id.to_owned(),
            number: part_number(number)?,
        };
        if ozone_open.part.as_ref() != Some(&wanted) || part.upload.object != open.object {
            return Err(StorageError::InvalidArgument(format!(
                "this back end needs part {number} opened as that part (Storage::create_part)"
            )));
        }
        let ozone_blocks: Vec<_> = blocks
            .iter()
            .map(|b| block_from_location(b, Some(wanted.number)))
            .collect();
        self.om
            .commit_part(&owner.access_key, &ozone_open, &ozone_blocks, &commit.etag)
            .await?;
        if let Some(checksum) = &commit.checksum {
            self.checksums
                .record_part(upload_id, number, checksum)
                .await?;
        }
        Ok(PartInfo {
            number,
            size: blocks.iter().map(|b| b.length).sum(),
            etag: commit.etag,
            checksum: commit.checksum,
            last_modified: SystemTime::now(),
        })
    }

    async fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadName,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        let name = self.ozone_name(&upload.object.bucket);
        let checksums = self.checksums.parts(&upload.upload_id).await?;
        let mut out = Vec::new();
        let mut marker = u32::from(after);
        while out.len() < limit {
            let want = (limit - out.len()).min(LIST_BATCH) as u32;
            let page = self
                .om
                .list_parts(
                    &owner.access_key,
                    &name,
                    &upload.object.key,
                    &upload.upload_id,
                    marker,
                    want,
                )
                .await?;
            out.extend(page.parts.into_iter().filter_map(|p| {
                let number = u16::try_from(p.number).ok()?;
                Some(PartInfo {
                    number,
                    size: p.size,
                    etag: p.etag.unwrap_or(p.name),
                    checksum: checksums.get(&number).cloned(),
                    last_modified: p.modified,
                })
            }));
            if !page.is_truncated || page.next_marker <= marker {
                break;
            }
            marker = page.next_marker;
        }
        out.truncate(limit);
        Ok(out)
    }

    async fn complete_multipart_upload(
        &self,
        upload: UploadRef<'_>,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        let (owner, upload) = (upload.object.owner(), UploadName::from(upload));
        let (bucket, key, upload_id) = (
            upload.object.bucket.as_str(),
            upload.object.key.as_str(),
            upload.upload_id.as_str(),
        );
        let name = self.ozone_name(bucket);
        let expect = self
            .expectation(owner, &name, key, &complete.condition)
            .await?;
        let parts: Vec<(u32, String)> = complete
            .parts
            .iter()
            // Clients may quote part ETags; the OM compares bare ones.
            .map(|(number, etag)| (u32::from(*number), etag.trim_matches('"').to_owned()))
            .collect();
        let recorded = self.checksums.parts(upload_id).await?;
        let has_record = self
            .checksums
            .upload(upload_id)
            .await
            .is_ok_and(|settings| settings.worth_recording());
        let part_checksums: BTreeMap<u16, ObjectChecksum> = recorded
            .iter()
            .filter(|(number, _)| complete.parts.iter().any(|(n, _)| n == *number))
            .map(|(number, checksum)| (*number, checksum.clone()))
            .collect();
        let completed = self
            .om
            .complete_multipart(&owner.access_key, &name, key, upload_id, &parts, &expect)
            .await;
        if let Err(err) = completed {
            return Err(self.refusal(owner, &name, key, &expect, err).await);
        }
        let found = self
            .om
            .get_key_info(&owner.access_key, &name, key, false)
            .await?;
        let checksums = ObjectChecksums {
            whole: complete.checksum,
            parts: part_checksums,
        };
        if !checksums.is_empty() {
            let recorded = self
                .checksums
                .record_object(&name, &found, &checksums)
                .await;
            if let Err(e) = recorded {
                // The object is complete either way; it only lacks its checksums.
                tracing::warn!(error = %e, bucket, key, "cannot record the object's checksums");
            }
        }
        // An upload with a checksum algorithm has a checksum for every
        // part; one with metadata has a record of its own.
        if !recorded.is_empty() || has_record {
            self.checksums
                .forget_upload(upload_id, recorded.into_keys())
                .await;
        }
        let mut info = key_info(found);
        info.bucket = bucket.to_owned();
        Ok(with_checksums(info, checksums))
    }

    async fn abort_multipart_upload(&self, upload: UploadRef<'_>) -> Result<()> {
        self.abort_named(upload.object.owner(), upload.into()).await
    }

    async fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: ScanRange,
    ) -> Result<Vec<UploadInfo>> {
        let (after, limit) = (scan.after.as_slice(), scan.limit);
        let name = self.ozone_name(&scan.bucket);
        let (mut key_marker, mut id_marker) = upload_markers(after);
        let mut out = Vec::new();
        while out.len() < limit {
            let page = self
                .om
                .list_uploads(
                    &owner.access_key,
                    &name,
                    &scan.prefix,
                    &key_marker,
                    &id_marker,
                    LIST_BATCH.min(limit - out.len()),
                )
                .await?;
            out.extend(
                page.uploads
                    .into_iter()
                    .filter(|u| upload_position(&u.key, &u.upload_id).as_slice() > after)
                    .map(|u| UploadInfo {
                        bucket: scan.bucket.clone(),
                        key: u.key,
                        upload_id: u.upload_id,
                        owner: owner.access_key.clone(),
                        initiated: u.created,
                        meta: Default::default(),
                        tags: Vec::new(),
                        checksum_algorithm: None,
                        checksum_type: None,
                    }),
            );
            match (page.is_truncated, page.next_key_marker) {
                (true, Some(next_key)) => {
                    key_marker = next_key;
                    id_marker = page.next_upload_id_marker.unwrap_or_default();
                }
                _ => break,
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

impl OzoneMetadata {
    /// Ends the upload `upload`, named as the facade resolved it.
    pub(crate) async fn abort_named(&self, owner: &Owner, upload: UploadName) -> Result<()> {
        self.om
            .abort_multipart(
                &owner.access_key,
                &self.ozone_name(&upload.object.bucket),
                &upload.object.key,
                &upload.upload_id,
            )
            .await?;
        let upload_id = upload.upload_id.as_str();
        match self.checksums.parts(upload_id).await {
            Ok(recorded) => {
                self.checksums
                    .forget_upload(upload_id, recorded.into_keys())
                    .await;
            }
            Err(e) => tracing::warn!(error = %e, upload_id, "cannot list part checksum records"),
        }
        Ok(())
    }
}

/// Ozone keeps no part ETags on a completed key, but names the object
/// after them (see [`ozone_multipart_etag`]).
pub(crate) fn completed_by(object: &KeyInfo, parts: &[(u16, String)]) -> bool {
    object.parts.len() == parts.len()
        && object
            .parts
            .iter()
            .zip(parts)
            .all(|(part, (number, _))| part.number == *number)
        && object.etag == ozone_multipart_etag(parts)
}
