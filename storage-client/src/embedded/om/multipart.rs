//! The embedded OM's multipart uploads. An upload is one `UPLOADS` row; each
//! part is one `PARTS` row holding the blocks the part was written to.
//! Completing writes the object's `KEYS` row with those very blocks, so
//! no byte is copied, and drops the upload in the same transaction.

use std::time::SystemTime;

use async_trait::async_trait;
use rand::RngCore;
use redb::{ReadableTable, WriteTransaction};

use super::{
    EmbeddedOm, Found, Inner, check_condition, owned_bucket, queue_for_reclaim, scan_bucket,
    validate_layout, versions,
};
use crate::MAX_PART_NUMBER;
use crate::embedded::schema::{
    BUCKETS, KEYS, KeyRecord, PARTS, PartRecord, StoredBlock, UPLOADS, UploadRecord, bucket_end,
    decode, encode, object_key,
};
use crate::embedded::{DbResult, now_ms};
use crate::metadata::{
    ObjectName, ObjectStore, OpenKey, PartName, ScanRange, UploadName, UploadStore, validate_key,
};
use crate::multipart::{
    CompleteUpload, NewUpload, PartCommit, PartInfo, PartSettings, UploadInfo, position,
};
use crate::{
    BlockId, BlockLocation, KeyInfo, ObjectRef, Owner, PartSummary, Result, StorageError,
    UploadRef, WriteIntent,
};

/// Upload ids are 128 random bits in hex: unguessable, and free of the
/// 0x00 that separates key and id in an `UPLOADS` row.
fn new_upload_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn upload_row(upload: &UploadName) -> Result<Vec<u8>> {
    let (bucket, key, upload_id) = (
        upload.object.bucket.as_str(),
        upload.object.key.as_str(),
        upload.upload_id.as_str(),
    );
    validate_key(key)?;
    // Any other id cannot exist, and a 0x00 in it could alias another key's row.
    if upload_id.is_empty() || !upload_id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(StorageError::NoSuchUpload);
    }
    Ok(object_key(bucket, &position(key, upload_id)))
}

fn upload_names(upload: &UploadName) -> (&str, &str, &str) {
    (&upload.object.bucket, &upload.object.key, &upload.upload_id)
}

/// The upload's record, if it exists. Whoever started it, it belongs to
/// its bucket: every caller checks the bucket's owner first (so an upload
/// begun before the bucket changed owner is the new owner's to finish).
fn upload_record(
    uploads: &impl ReadableTable<&'static [u8], &'static [u8]>,
    row: &[u8],
) -> Result<UploadRecord> {
    match uploads.get(row).db()? {
        Some(bytes) => decode(bytes.value()),
        None => Err(StorageError::NoSuchUpload),
    }
}

fn upload_info(bucket: &str, key: &str, upload_id: &str, record: UploadRecord) -> UploadInfo {
    UploadInfo {
        bucket: bucket.to_owned(),
        key: key.to_owned(),
        upload_id: upload_id.to_owned(),
        owner: record.owner,
        initiated: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(record.initiated_ms),
        meta: record.meta,
        tags: record.tags,
        checksum_algorithm: record.checksum_algorithm,
        checksum_type: record.checksum_type,
    }
}

fn part_info(number: u16, record: PartRecord) -> PartInfo {
    PartInfo {
        number,
        size: record.size,
        etag: record.etag,
        checksum: record.checksum,
        last_modified: record.last_modified,
    }
}

/// Splits an `UPLOADS` row of `bucket` into key and upload id.
fn split_row<'r>(bucket: &str, row: &'r [u8]) -> Result<(&'r str, &'r str)> {
    let rest = &row[bucket.len() + 1..];
    let at = rest
        .iter()
        .rposition(|&b| b == 0)
        .ok_or_else(|| StorageError::Corrupt("upload row without an id".into()))?;
    let text = |bytes| {
        std::str::from_utf8(bytes)
            .map_err(|_| StorageError::Corrupt("upload row is not UTF-8".into()))
    };
    Ok((text(&rest[..at])?, text(&rest[at + 1..])?))
}

/// Removes every part of the upload and returns their blocks.
fn take_parts(txn: &WriteTransaction, upload_id: &str) -> Result<Vec<(u16, PartRecord)>> {
    let mut parts = txn.open_table(PARTS).db()?;
    let mut taken = Vec::new();
    for row in parts
        .extract_from_if((upload_id, 0u16)..=(upload_id, MAX_PART_NUMBER), |_, _| {
            true
        })
        .db()?
    {
        let (key, value) = row.db()?;
        taken.push((key.value().1, decode(value.value())?));
    }
    Ok(taken)
}

fn blocks_of(parts: &[(u16, PartRecord)]) -> impl Iterator<Item = BlockId> + '_ {
    parts
        .iter()
        .flat_map(|(_, part)| part.blocks.iter().map(|b| b.block))
}

impl Inner {
    pub(super) fn create_multipart_upload(
        &self,
        owner: &Owner,
        object: &ObjectName,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        let upload_id = new_upload_id();
        let row = upload_row(&UploadName {
            object: object.clone(),
            upload_id: upload_id.clone(),
        })?;
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let record = UploadRecord {
            owner: owner.access_key.clone(),
            initiated_ms: now_ms(),
            meta: upload.meta,
            tags: upload.tags,
            checksum_algorithm: upload.checksum_algorithm,
            checksum_type: upload.checksum_type,
        };
        txn.open_table(UPLOADS)
            .db()?
            .insert(row.as_slice(), encode(&record)?.as_slice())
            .db()?;
        txn.commit().db()?;
        Ok(upload_info(bucket, key, &upload_id, record))
    }

    pub(super) fn multipart_upload(
        &self,
        owner: &Owner,
        upload: &UploadName,
    ) -> Result<UploadInfo> {
        let (bucket, key, upload_id) = upload_names(upload);
        let row = upload_row(upload)?;
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let record = upload_record(&txn.open_table(UPLOADS).db()?, &row)?;
        Ok(upload_info(bucket, key, upload_id, record))
    }

    pub(super) fn commit_part(
        &self,
        owner: &Owner,
        open: &OpenKey,
        part: &PartName,
        blocks: &[BlockLocation],
        commit: PartCommit,
    ) -> Result<PartInfo> {
        let number = part.number;
        let txn = self.write()?;
        let written = Self::take_open_key(&txn, owner, open)?;
        // A bad block list is a caller bug: returning before `commit` keeps
        // the open key, so it can still be aborted.
        let stored = validate_layout(blocks, &written.blocks, self.settings.block_size)?;
        let outcome = Self::store_part(&txn, owner, open, part, stored, commit);
        let used: Vec<BlockId> = match &outcome {
            Ok(record) => record.blocks.iter().map(|b| b.block).collect(),
            Err(_) => Vec::new(),
        };
        queue_for_reclaim(
            &txn,
            written.blocks.iter().copied().filter(|b| !used.contains(b)),
        )?;
        txn.commit().db()?;
        Ok(part_info(number, outcome?))
    }

    /// Inside the part's commit transaction: checks the upload, then puts
    /// the part in place, queueing the blocks of a part it replaces.
    fn store_part(
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
        part: &PartName,
        blocks: Vec<StoredBlock>,
        commit: PartCommit,
    ) -> Result<PartRecord> {
        let (number, upload_id) = (part.number, part.upload.upload_id.as_str());
        if !(1..=MAX_PART_NUMBER).contains(&number) {
            return Err(StorageError::InvalidArgument(format!(
                "part number {number} is not between 1 and {MAX_PART_NUMBER}"
            )));
        }
        if part.upload.object != open.object {
            return Err(StorageError::InvalidArgument(
                "the part was written for another object".into(),
            ));
        }
        let row = upload_row(&part.upload)?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, &open.object.bucket, owner)?;
        upload_record(&txn.open_table(UPLOADS).db()?, &row)?;
        let record = PartRecord {
            size: blocks.iter().map(|b| b.length).sum(),
            etag: commit.etag,
            checksum: commit.checksum,
            last_modified: SystemTime::now(),
            blocks,
        };
        let replaced: Option<PartRecord> = txn
            .open_table(PARTS)
            .db()?
            .insert((upload_id, number), encode(&record)?.as_slice())
            .db()?
            .map(|old| decode(old.value()))
            .transpose()?;
        if let Some(old) = replaced {
            queue_for_reclaim(txn, old.blocks.iter().map(|b| b.block))?;
        }
        Ok(record)
    }

    pub(super) fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadName,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        let (bucket, _, upload_id) = upload_names(upload);
        let row = upload_row(upload)?;
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        upload_record(&txn.open_table(UPLOADS).db()?, &row)?;
        let parts = txn.open_table(PARTS).db()?;
        let mut out = Vec::new();
        if after >= MAX_PART_NUMBER {
            return Ok(out);
        }
        for entry in parts
            .range((upload_id, after + 1)..=(upload_id, MAX_PART_NUMBER))
            .db()?
            .take(limit)
        {
            let (id, value) = entry.db()?;
            out.push(part_info(id.value().1, decode(value.value())?));
        }
        Ok(out)
    }

    pub(super) fn complete_multipart_upload(
        &self,
        owner: &Owner,
        upload_ref: &UploadName,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        let (bucket, key, upload_id) = upload_names(upload_ref);
        let row = upload_row(upload_ref)?;
        let signer = self.signing_key()?;
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let upload = upload_record(&txn.open_table(UPLOADS).db()?, &row)?;
        // Every failure below returns before `commit`, so the upload stays
        // as it was and the client may fix its list and retry.
        let parts = take_parts(&txn, upload_id)?;
        let (blocks, summaries) = assemble(&parts, &complete.parts)?;

        let keys = txn.open_table(KEYS).db()?;
        let key_row = object_key(bucket, key.as_bytes());
        let existing: Option<KeyRecord> = keys
            .get(key_row.as_slice())
            .db()?
            .map(|v| decode(v.value()))
            .transpose()?;
        if !check_condition(&complete.condition, existing.as_ref()) {
            return Err(StorageError::PreconditionFailed);
        }
        let record = KeyRecord {
            size: summaries.iter().map(|p| p.size).sum(),
            etag: complete.etag,
            last_modified: SystemTime::now(),
            owner: owner.access_key.clone(),
            meta: upload.meta,
            tags: upload.tags,
            checksum: complete.checksum,
            blocks,
            parts: summaries,
        };
        drop(keys);
        let version_id = versions::install(&txn, bucket, key, existing.as_ref(), &record)?;
        txn.open_table(UPLOADS).db()?.remove(row.as_slice()).db()?;
        let chosen: Vec<u16> = complete.parts.iter().map(|(n, _)| *n).collect();
        let unchosen: Vec<(u16, PartRecord)> = parts
            .into_iter()
            .filter(|(n, _)| !chosen.contains(n))
            .collect();
        queue_for_reclaim(&txn, blocks_of(&unchosen))?;
        txn.commit().db()?;
        let found = Found {
            record,
            version_id,
            kept: None,
        };
        Ok(self.key_info(&signer, owner, bucket, key, found))
    }

    pub(super) fn abort_multipart_upload(&self, owner: &Owner, upload: &UploadName) -> Result<()> {
        let (bucket, _, upload_id) = upload_names(upload);
        let row = upload_row(upload)?;
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        upload_record(&txn.open_table(UPLOADS).db()?, &row)?;
        txn.open_table(UPLOADS).db()?.remove(row.as_slice()).db()?;
        let parts = take_parts(&txn, upload_id)?;
        queue_for_reclaim(&txn, blocks_of(&parts))?;
        txn.commit().db()
    }

    pub(super) fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: &ScanRange,
    ) -> Result<Vec<UploadInfo>> {
        let bucket = scan.bucket.as_str();
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let uploads = txn.open_table(UPLOADS).db()?;
        scan_bucket(&uploads, scan, |name, value| {
            let record: UploadRecord = decode(value)?;
            let (key, upload_id) = split_row(bucket, name)?;
            Ok(upload_info(bucket, key, upload_id, record))
        })
    }

    /// Aborts uploads started before `initiated_before_ms`; returns how many.
    pub(super) fn expire_uploads(&self, initiated_before_ms: u64) -> Result<usize> {
        let txn = self.write()?;
        let mut expired = Vec::new();
        for entry in txn.open_table(UPLOADS).db()?.iter().db()? {
            let (name, value) = entry.db()?;
            let record: UploadRecord = decode(value.value())?;
            if record.initiated_ms < initiated_before_ms {
                expired.push(name.value().to_vec());
            }
        }
        for row in &expired {
            txn.open_table(UPLOADS).db()?.remove(row.as_slice()).db()?;
            let at = row.iter().position(|&b| b == 0).unwrap_or(0);
            let bucket = std::str::from_utf8(&row[..at])
                .map_err(|_| StorageError::Corrupt("upload row is not UTF-8".into()))?;
            let (_, upload_id) = split_row(bucket, row)?;
            let parts = take_parts(&txn, upload_id)?;
            queue_for_reclaim(&txn, blocks_of(&parts))?;
        }
        txn.commit().db()?;
        Ok(expired.len())
    }
}

/// Inside a bucket's deletion: ends every upload into it and queues their blocks.
pub(super) fn drop_bucket_uploads(txn: &WriteTransaction, bucket: &str) -> Result<()> {
    let start = object_key(bucket, b"");
    let end = bucket_end(bucket);
    let mut rows = Vec::new();
    {
        let mut uploads = txn.open_table(UPLOADS).db()?;
        for entry in uploads
            .extract_from_if::<&[u8], _>(start.as_slice()..end.as_slice(), |_, _| true)
            .db()?
        {
            let (name, _) = entry.db()?;
            rows.push(name.value().to_vec());
        }
    }
    for row in rows {
        let (_, upload_id) = split_row(bucket, &row)?;
        let parts = take_parts(txn, upload_id)?;
        queue_for_reclaim(txn, blocks_of(&parts))?;
    }
    Ok(())
}

/// The object's blocks (offsets within the object) and part summaries for
/// the chosen parts, each of which must exist with the given ETag.
fn assemble(
    stored: &[(u16, PartRecord)],
    chosen: &[(u16, String)],
) -> Result<(Vec<StoredBlock>, Vec<PartSummary>)> {
    let mut blocks = Vec::new();
    let mut summaries: Vec<PartSummary> = Vec::with_capacity(chosen.len());
    let mut offset = 0;
    for (number, etag) in chosen {
        if summaries.last().is_some_and(|last| last.number >= *number) {
            return Err(StorageError::InvalidArgument(
                "parts must be listed in ascending order without repeats".into(),
            ));
        }
        let part = stored
            .iter()
            .find(|(n, _)| n == number)
            .map(|(_, part)| part)
            .filter(|part| part.etag.trim_matches('"') == etag.trim_matches('"'))
            .ok_or_else(|| {
                StorageError::InvalidPart(format!(
                    "part {number} was not found or its ETag is not {etag}"
                ))
            })?;
        for block in &part.blocks {
            blocks.push(StoredBlock {
                block: block.block,
                offset: offset + block.offset,
                length: block.length,
            });
        }
        offset += part.size;
        summaries.push(PartSummary {
            number: *number,
            size: part.size,
            etag: part.etag.clone(),
            checksum: part.checksum.clone(),
        });
    }
    Ok((blocks, summaries))
}

#[async_trait]
impl UploadStore for EmbeddedOm {
    async fn create_multipart_upload(
        &self,
        object: ObjectRef<'_>,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        let (owner, object) = (object.owner().clone(), ObjectName::from(object));
        self.run(move |om| om.create_multipart_upload(&owner, &object, upload))
            .await
    }

    async fn multipart_upload(&self, upload: UploadRef<'_>) -> Result<UploadInfo> {
        let (owner, upload) = (upload.object.owner().clone(), UploadName::from(upload));
        self.run(move |om| om.multipart_upload(&owner, &upload))
            .await
    }

    /// Looks the upload up: `create_part` does not.
    async fn part_settings(&self, upload: UploadRef<'_>) -> Result<PartSettings> {
        let upload = self.multipart_upload(upload).await?;
        Ok(PartSettings {
            checksum_algorithm: upload.checksum_algorithm,
            meta: upload.meta,
        })
    }

    /// A part is written like any object: the upload is checked when it
    /// is committed.
    async fn create_part(
        &self,
        owner: &Owner,
        part: &PartName,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        let intent = WriteIntent {
            size_hint,
            ..WriteIntent::default()
        };
        self.create_object(owner, part.upload.object.clone(), intent)
            .await
    }

    async fn commit_part(
        &self,
        owner: &Owner,
        open: OpenKey,
        part: PartName,
        blocks: Vec<BlockLocation>,
        commit: PartCommit,
    ) -> Result<PartInfo> {
        let owner = owner.clone();
        self.run(move |om| om.commit_part(&owner, &open, &part, &blocks, commit))
            .await
    }

    async fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadName,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        let (owner, upload) = (owner.clone(), upload.clone());
        self.run(move |om| om.list_parts(&owner, &upload, after, limit))
            .await
    }

    async fn complete_multipart_upload(
        &self,
        upload: UploadRef<'_>,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        let (owner, upload) = (upload.object.owner().clone(), UploadName::from(upload));
        self.run(move |om| om.complete_multipart_upload(&owner, &upload, complete))
            .await
    }

    async fn abort_multipart_upload(&self, upload: UploadRef<'_>) -> Result<()> {
        let (owner, upload) = (upload.object.owner().clone(), UploadName::from(upload));
        self.run(move |om| om.abort_multipart_upload(&owner, &upload))
            .await
    }

    async fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: ScanRange,
    ) -> Result<Vec<UploadInfo>> {
        let owner = owner.clone();
        self.run(move |om| om.scan_multipart_uploads(&owner, &scan))
            .await
    }
}
