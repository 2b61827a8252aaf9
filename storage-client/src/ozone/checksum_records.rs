//! Multipart checksums, which Ozone does not keep: the upload's algorithm,
//! each part's checksum, and a completed object's checksum and part
//! checksums are recorded as empty keys, their values in key metadata, in
//! a system bucket.
//!
//! Ozone has nowhere to put them: ListMultipartUploads and ListParts
//! return no metadata, and a completed key gets the metadata given when
//! the upload started, before any part existed. A completed object's
//! record names the key's content: its size, modification time and ETag,
//! so an object written over it later, by this gateway or any other Ozone
//! client, never shows a stale checksum (a write sets the modification
//! time), while tagging it, which changes its `updateID` but none of the
//! three, keeps its checksums. Records written by earlier builds name the
//! `updateID` instead, and still count for the key until it changes. A
//! record outliving its object (written over by a plain PUT) is harmless
//! for the same reason; a deleted object's record goes with it, an
//! upload's when it completes or aborts.
//!
//! An upload's settings never change while it lives and its id is unique,
//! so they are kept once read: every UploadPart needs them, and the OM
//! should see only the part's own commands.
//!
//! Records are sealed ([`Sealer`](super::records::Sealer)): one that fails its MAC (forged,
//! altered, or copied from another record) is treated as absent.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::{ChecksumAlgorithm, ChecksumType, ObjectChecksum, ObjectMeta, Result};

use super::model::{KeyExpectation, OzoneKey};
use super::object_mapping::{checksum_text, meta_from_metadata, object_metadata, parse_checksum};
use super::record_bucket::RecordBucket;

const ALGORITHM_KEY: &str = "s3gw-checksum-algorithm";
const TYPE_KEY: &str = "s3gw-checksum-type";
const CHECKSUM_KEY: &str = "s3gw-checksum";
/// What a record written by earlier builds named: the key's `updateID`.
const GENERATION_KEY: &str = "s3gw-generation";
/// What a record names now: [`content`] of the key.
const CONTENT_KEY: &str = "s3gw-content";
/// Followed by the part number: one entry per part of a completed object.
const PART_KEY_PREFIX: &str = "s3gw-part-";
/// Followed by an entry's Ozone metadata name: the metadata the upload
/// was started with, which Ozone does not hand back before completion.
const UPLOAD_META_PREFIX: &str = "s3gw-upload-meta-";
/// Records listed per ListKeys call (the OM's own cap).
const LIST_BATCH: usize = 1000;
/// Upload settings kept: an entry is about 100 bytes, so at most ~1 MB
/// for as many uploads in progress as a gateway is likely to serve at once.
const KEPT_UPLOADS: u64 = 10_000;
/// An upload unused this long is read again when it is next used; a
/// client pausing longer between parts pays one record read.
const KEEP_UPLOAD_IDLE: Duration = Duration::from_secs(3600);

/// An upload's checksum algorithm and type, and the metadata it was
/// started with (which becomes the object's at completion: the gateway's
/// server-side encryption record is in it, needed by every part).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct UploadSettings {
    pub algorithm: Option<ChecksumAlgorithm>,
    pub kind: Option<ChecksumType>,
    pub meta: ObjectMeta,
}

impl UploadSettings {
    /// Whether there is anything to record: an upload with neither is
    /// recorded by nothing (and costs the OM no write).
    pub fn worth_recording(&self) -> bool {
        self.algorithm.is_some() || self.meta != ObjectMeta::default()
    }
}

/// A completed object's checksums.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ObjectChecksums {
    pub whole: Option<ObjectChecksum>,
    pub parts: BTreeMap<u16, ObjectChecksum>,
}

impl ObjectChecksums {
    pub fn is_empty(&self) -> bool {
        self.whole.is_none() && self.parts.is_empty()
    }
}

pub(super) struct ChecksumRecords {
    records: RecordBucket,
    /// Upload settings by upload id, those without a record included: an
    /// upload id reaches clients only after its record is written.
    uploads: moka::future::Cache<String, UploadSettings>,
}

impl ChecksumRecords {
    pub fn new(records: RecordBucket) -> Self {
        Self {
            records,
            uploads: moka::future::Cache::builder()
                .max_capacity(KEPT_UPLOADS)
                .time_to_idle(KEEP_UPLOAD_IDLE)
                .build(),
        }
    }

    pub fn bucket(&self) -> &str {
        &self.records.path
    }

    /// The new upload's checksum algorithm and type and its metadata: a
    /// record where it has either, and kept here either way.
    pub async fn record_upload(&self, upload_id: &str, settings: UploadSettings) -> Result<()> {
        if settings.worth_recording() {
            let mut fields = Vec::new();
            if let Some(algorithm) = settings.algorithm {
                fields.push((ALGORITHM_KEY.to_owned(), algorithm.name().to_owned()));
                fields.push((
                    TYPE_KEY.to_owned(),
                    settings.kind.map_or("", ChecksumType::name).to_owned(),
                ));
            }
            fields.extend(
                object_metadata(&settings.meta, None)
                    .into_iter()
                    .map(|(name, value)| (format!("{UPLOAD_META_PREFIX}{name}"), value)),
            );
            self.put(&upload_name(upload_id), &fields).await?;
        }
        self.uploads.insert(upload_id.to_owned(), settings).await;
        Ok(())
    }

    /// What [`Self::record_upload`] recorded: nothing where it was not called.
    pub async fn upload(&self, upload_id: &str) -> Result<UploadSettings> {
        if let Some(kept) = self.uploads.get(upload_id).await {
            return Ok(kept);
        }
        let settings = match self.get(&upload_name(upload_id)).await? {
            Some(fields) => {
                let field = |name: &str| fields.get(name).map(String::as_str).unwrap_or_default();
                let meta = fields
                    .iter()
                    .filter_map(|(name, value)| {
                        let name = name.strip_prefix(UPLOAD_META_PREFIX)?;
                        Some((name.to_owned(), value.clone()))
                    })
                    .collect();
                UploadSettings {
                    algorithm: ChecksumAlgorithm::from_name(field(ALGORITHM_KEY)),
                    kind: ChecksumType::from_name(field(TYPE_KEY)),
                    meta: meta_from_metadata(&meta).0,
                }
            }
            None => UploadSettings::default(),
        };
        self.uploads
            .insert(upload_id.to_owned(), settings.clone())
            .await;
        Ok(settings)
    }

    /// Part `number`'s checksum, replacing an earlier part's.
    pub async fn record_part(
        &self,
        upload_id: &str,
        number: u16,
        checksum: &ObjectChecksum,
    ) -> Result<()> {
        let fields = [(CHECKSUM_KEY.to_owned(), checksum_text(checksum))];
        self.put(&part_name(upload_id, number), &fields).await
    }

    /// Every part checksum recorded for the upload, by part number.
    pub async fn parts(&self, upload_id: &str) -> Result<BTreeMap<u16, ObjectChecksum>> {
        let prefix = parts_prefix(upload_id);
        let mut out = BTreeMap::new();
        let mut after = String::new();
        loop {
            let (om, owner, path) = (&self.records.om, self.records.owner, &self.records.path);
            let (page, truncated) = om
                .list_keys_with_metadata(owner, path, &prefix, &after, LIST_BATCH)
                .await?;
            let done = !truncated || page.is_empty();
            for record in page {
                let number = record.key[prefix.len()..].parse::<u16>().ok();
                let checksum = self
                    .records
                    .verify(&record.key, &record.metadata)
                    .and_then(|fields| parse_checksum(fields.get(CHECKSUM_KEY)?));
                if let (Some(number), Some(checksum)) = (number, checksum) {
                    out.insert(number, checksum);
                }
                after = record.key;
            }
            if done {
                return Ok(out);
            }
        }
    }

    /// Drops the upload's record and those of the parts numbered `parts`,
    /// in one command; a failure only leaves records behind.
    pub async fn forget_upload(&self, upload_id: &str, parts: impl IntoIterator<Item = u16>) {
        self.uploads.invalidate(upload_id).await;
        let mut names = vec![upload_name(upload_id)];
        names.extend(parts.into_iter().map(|n| part_name(upload_id, n)));
        let (om, owner, path) = (&self.records.om, self.records.owner, &self.records.path);
        if let Err(e) = om.delete_keys(owner, path, &names).await {
            tracing::warn!(error = %e, upload_id, "cannot drop checksum records");
        }
    }

    /// The checksums of `object` (a key of Ozone bucket `bucket`) as it
    /// is now.
    pub async fn record_object(
        &self,
        bucket: &str,
        object: &OzoneKey,
        checksums: &ObjectChecksums,
    ) -> Result<()> {
        let mut fields = vec![(CONTENT_KEY.to_owned(), content(object))];
        if let Some(whole) = &checksums.whole {
            fields.push((CHECKSUM_KEY.to_owned(), checksum_text(whole)));
        }
        fields.extend(
            checksums
                .parts
                .iter()
                .map(|(number, c)| (format!("{PART_KEY_PREFIX}{number}"), checksum_text(c))),
        );
        self.put(&object_name(bucket, &object.key), &fields).await
    }

    /// The name of `key`'s record, for deleting it with the object: before
    /// the object itself, since a record dropped after it could be one
    /// written meanwhile for a new object under the same name.
    pub fn record_of(&self, bucket: &str, key: &str) -> String {
        object_name(bucket, key)
    }

    /// What [`Self::record_object`] recorded for `object` as it is now;
    /// nothing for an object written over it since.
    pub async fn object(&self, bucket: &str, object: &OzoneKey) -> Result<ObjectChecksums> {
        let Some(fields) = self.get(&object_name(bucket, &object.key)).await? else {
            return Ok(ObjectChecksums::default());
        };
        let current = match (fields.get(CONTENT_KEY), fields.get(GENERATION_KEY)) {
            (Some(recorded), _) => *recorded == content(object),
            (None, Some(generation)) => *generation == object.update_id.to_string(),
            (None, None) => false,
        };
        if !current {
            return Ok(ObjectChecksums::default());
        }
        let parts = fields
            .iter()
            .filter_map(|(name, text)| {
                let number = name.strip_prefix(PART_KEY_PREFIX)?.parse::<u16>().ok()?;
                Some((number, parse_checksum(text)?))
            })
            .collect();
        Ok(ObjectChecksums {
            whole: fields.get(CHECKSUM_KEY).and_then(|t| parse_checksum(t)),
            parts,
        })
    }

    async fn put(&self, name: &str, fields: &[(String, String)]) -> Result<()> {
        self.records
            .write(name, fields, &KeyExpectation::Anything)
            .await
    }

    async fn get(&self, name: &str) -> Result<Option<BTreeMap<String, String>>> {
        Ok(self.records.read(name).await?.map(|(fields, _)| fields))
    }
}

fn upload_name(upload_id: &str) -> String {
    format!("upload/{upload_id}")
}

fn parts_prefix(upload_id: &str) -> String {
    format!("upload/{upload_id}/")
}

fn part_name(upload_id: &str, number: u16) -> String {
    format!("{}{number:05}", parts_prefix(upload_id))
}

fn object_name(bucket: &str, key: &str) -> String {
    // A tenant's bucket path (`volume/name`) keeps its `/` out of the
    // record's name, so no shared bucket's key can name the same record.
    format!("object/{}/{key}", bucket.replace('/', ":"))
}

/// What a record names of the key it belongs to: size, modification time
/// (milliseconds, as the OM keeps it) and ETag. Every write sets the
/// modification time; tagging changes none of them.
fn content(object: &OzoneKey) -> String {
    let modified = object
        .modified
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    format!(
        "{}/{modified}/{}",
        object.size,
        object.etag().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_records_sort_by_number_under_their_upload() {
        assert_eq!(part_name("u1", 7), "upload/u1/00007");
        assert!(part_name("u1", 9) < part_name("u1", 10));
        assert!(part_name("u1", 10_000).starts_with(&parts_prefix("u1")));
        // An upload's own record is not one of its parts.
        assert!(!upload_name("u1").starts_with(&parts_prefix("u1")));
    }
}
