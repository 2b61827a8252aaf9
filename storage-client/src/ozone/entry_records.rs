//! Changes to an existing object's user metadata entries (the ACL of
//! PutObjectAcl), which Ozone's OM cannot make: it has no call that
//! changes a committed key's metadata, and rewriting the data to change one
//! entry would be a copy nobody asked for.
//!
//! A change is kept as a record in the per-object records bucket (the one
//! multipart checksums live in, so that deleting an object drops both in
//! one command), an empty key whose metadata holds the entries changed and
//! what was written: a digest of the key's size, modification time, block
//! ids and metadata ([`written`]). Every write of a key (by this gateway or
//! any Ozone client) allocates new blocks and sets the modification time,
//! while tagging changes none of them; the OM's own `objectID` will not do,
//! as it keeps a key's `objectID` when the key is written over. So a record
//! applies to exactly the object it was decided on, and never to one
//! written over it later, even if the change raced that write. Changes to
//! one record are conditional on the record's own generation (Ozone's
//! atomic rewrite), so two changes decided on the same entry never both
//! land.
//!
//! Looking for a record on every read would cost every GET a second OM
//! lookup. Only the buckets that have records are asked: the first change
//! in a bucket writes the bucket's marker first, and each replica reads a
//! bucket's marker at most once per `metadata_cache_ttl`. So the first
//! change in a bucket reaches the other replicas within that bound, as any
//! bucket setting does; later ones at once.
//!
//! A deleted object's record goes with it. Records are not swept with a
//! deleted bucket: one written meanwhile for a bucket made again under
//! the name would go too, and its object would fall back to the ACL it was
//! written with. What stays behind (the marker, records of keys deleted by
//! other Ozone clients) applies to nothing written since.
//!
//! Records are sealed ([`Sealer`](super::records::Sealer)): one that fails its MAC is treated as
//! absent.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::{MetaEntryChange, Result, StorageError};

use super::model::{KeyExpectation, OzoneKey};
use super::object_mapping::meta_from_metadata;
use super::record_bucket::RecordBucket;

/// What was written under the key the record belongs to ([`written`]).
const WRITTEN_KEY: &str = "s3gw-written";
/// The entries changed, as a JSON object: a string sets, `null` removes.
/// One field, since entry names are not all header-safe (`s3gw acl`), and
/// Ozone's S3 gateway shows key metadata as headers.
const CHANGES_KEY: &str = "s3gw-changes";
/// What a bucket's marker holds (a record needs one field to be sealed).
const MARKER_KEY: &str = "s3gw-bucket";
/// Buckets whose marker is remembered: an entry is one bucket name.
const KEPT_MARKERS: u64 = 100_000;

/// The entries a record changes: `Some` sets, `None` removes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct EntryChanges(BTreeMap<String, Option<String>>);

impl EntryChanges {
    /// Applies the changes to an object's user metadata.
    pub fn apply(self, user: &mut BTreeMap<String, String>) {
        for (name, value) in self.0 {
            match value {
                Some(value) => user.insert(name, value),
                None => user.remove(&name),
            };
        }
    }
}

/// A record as read: what it changes, for which object, at which
/// generation of the record itself.
struct StoredRecord {
    written: String,
    changes: EntryChanges,
    update_id: u64,
}

pub(super) struct EntryRecords {
    records: RecordBucket,
    /// Whether each bucket (its Ozone path) has a marker; `None` when
    /// `metadata_cache_ttl` is 0: every read asks.
    markers: Option<moka::future::Cache<String, bool>>,
}

impl EntryRecords {
    pub fn new(records: RecordBucket, marker_ttl: Duration) -> Self {
        let markers = (!marker_ttl.is_zero()).then(|| {
            moka::future::Cache::builder()
                .max_capacity(KEPT_MARKERS)
                .time_to_live(marker_ttl)
                .build()
        });
        Self { records, markers }
    }

    /// What the records change of `object` (a key of Ozone bucket
    /// `bucket`) as it is now: nothing in a bucket without records, or
    /// where the record belongs to an object written over since.
    pub async fn changes(&self, bucket: &str, object: &OzoneKey) -> Result<EntryChanges> {
        if !self.marked(bucket).await? {
            return Ok(EntryChanges::default());
        }
        let record = self.read(&object_record(bucket, &object.key)).await?;
        let written = written(object);
        Ok(record
            .filter(|r| r.written == written)
            .map(|r| r.changes)
            .unwrap_or_default())
    }

    /// Makes `change` to `object` (a key of Ozone bucket `bucket`, as just
    /// read), checking its `expected` against the entry as the object's
    /// metadata and record have it, atomically with the write:
    /// `PreconditionFailed` if the entry holds something else, or if
    /// another change to the record lands first.
    pub async fn change(
        &self,
        bucket: &str,
        object: &OzoneKey,
        change: MetaEntryChange,
    ) -> Result<()> {
        let name = object_record(bucket, &object.key);
        let stored = self.read(&name).await?;
        let expectation = match &stored {
            Some(record) => KeyExpectation::Generation(record.update_id),
            None => KeyExpectation::Absent,
        };
        let written = written(object);
        let mut changes = stored
            .filter(|r| r.written == written)
            .map(|r| r.changes)
            .unwrap_or_default();
        if let Some(expected) = &change.expected {
            let now = match changes.0.get(&change.name) {
                Some(changed) => changed.clone(),
                None => meta_from_metadata(&object.metadata)
                    .0
                    .user
                    .get(&change.name)
                    .cloned(),
            };
            if now != *expected {
                return Err(StorageError::PreconditionFailed);
            }
        }
        changes.0.insert(change.name, change.value);
        self.mark(bucket).await?;
        let changes = serde_json::to_string(&changes.0)
            .map_err(|e| StorageError::Internal(format!("recording a metadata change: {e}")))?;
        let fields = [
            (WRITTEN_KEY.to_owned(), written),
            (CHANGES_KEY.to_owned(), changes),
        ];
        match self.records.write(&name, &fields, &expectation).await {
            // The record was written or removed since it was read.
            Err(StorageError::NoSuchKey) => Err(StorageError::PreconditionFailed),
            other => other,
        }
    }

    /// The name of `key`'s record, for deleting it with the object.
    pub fn record_of(&self, bucket: &str, key: &str) -> String {
        object_record(bucket, key)
    }

    /// Whether `bucket` has a marker, as read at most `marker_ttl` ago.
    async fn marked(&self, bucket: &str) -> Result<bool> {
        let Some(markers) = &self.markers else {
            return self.read_marker(bucket).await;
        };
        markers
            .try_get_with_by_ref(bucket, self.read_marker(bucket))
            .await
            .map_err(Arc::unwrap_or_clone)
    }

    async fn read_marker(&self, bucket: &str) -> Result<bool> {
        let name = marker_record(bucket);
        Ok(self
            .records
            .read(&name)
            .await?
            .is_some_and(|(fields, _)| fields.get(MARKER_KEY).map(String::as_str) == Some(bucket)))
    }

    /// Writes `bucket`'s marker unless this replica knows it is there.
    async fn mark(&self, bucket: &str) -> Result<()> {
        if let Some(markers) = &self.markers
            && markers.get(bucket).await == Some(true)
        {
            return Ok(());
        }
        let fields = [(MARKER_KEY.to_owned(), bucket.to_owned())];
        self.records
            .write(&marker_record(bucket), &fields, &KeyExpectation::Anything)
            .await?;
        if let Some(markers) = &self.markers {
            markers.insert(bucket.to_owned(), true).await;
        }
        Ok(())
    }

    async fn read(&self, name: &str) -> Result<Option<StoredRecord>> {
        let Some((fields, update_id)) = self.records.read(name).await? else {
            return Ok(None);
        };
        let Some(written) = fields.get(WRITTEN_KEY).cloned() else {
            return Ok(None);
        };
        // A sealed record that does not parse was written by no release.
        let Some(changes) = fields
            .get(CHANGES_KEY)
            .and_then(|text| serde_json::from_str(text).ok())
        else {
            return Ok(None);
        };
        Ok(Some(StoredRecord {
            written,
            changes: EntryChanges(changes),
            update_id,
        }))
    }
}

/// What was written under the key: a digest of its size, modification
/// time (milliseconds), block ids and metadata (the ETag and every entry
/// the write gave it). Only a write changes any of them; a write of the
/// same metadata and no data within the same millisecond is the one
/// object this cannot tell apart, and is the same object in every respect
/// but the moment.
fn written(object: &OzoneKey) -> String {
    let mut digest = Sha256::new();
    let modified = object
        .modified
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    digest.update(object.size.to_le_bytes());
    digest.update(modified.to_le_bytes());
    digest.update(object.blocks.len().to_le_bytes());
    for block in &object.blocks {
        digest.update(block.id.container.to_le_bytes());
        digest.update(block.id.local.to_le_bytes());
    }
    for (name, value) in &object.metadata {
        // Lengths first: no two maps digest alike.
        digest.update(name.len().to_le_bytes());
        digest.update(value.len().to_le_bytes());
        digest.update(name);
        digest.update(value);
    }
    hex::encode(&digest.finalize()[..16])
}

/// A bucket's marker. A tenant's bucket path (`volume/name`) keeps its
/// `/` out of the name, so no shared bucket's key can name the same
/// record; a key is never empty, so no object's record is a marker.
fn marker_record(bucket: &str) -> String {
    format!("entries/{}", bucket.replace('/', ":"))
}

fn object_record(bucket: &str, key: &str) -> String {
    format!("{}/{key}", marker_record(bucket))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_named_under_their_buckets_marker() {
        assert_eq!(marker_record("photos"), "entries/photos");
        assert_eq!(object_record("photos", "a/b"), "entries/photos/a/b");
        assert_eq!(object_record("t1/photos", "k"), "entries/t1:photos/k");
        // A bucket's records are not another bucket's, by prefix.
        assert!(
            !object_record("photos2", "k").starts_with(&format!("{}/", marker_record("photos")))
        );
    }

    fn key(modified_ms: u64, local: u64, etag: &str) -> OzoneKey {
        let at = UNIX_EPOCH + Duration::from_millis(modified_ms);
        OzoneKey {
            bucket: "b".into(),
            key: "k".into(),
            size: 5,
            created: at,
            modified: at,
            owner: "o".into(),
            metadata: BTreeMap::from([("ETag".to_owned(), etag.to_owned())]),
            tags: Vec::new(),
            blocks: vec![super::super::model::OzoneBlock {
                id: crate::BlockId {
                    container: 1,
                    local,
                },
                commit_sequence_id: 0,
                offset: 0,
                length: 5,
                token: None,
                datanodes: Vec::new(),
                part_number: None,
                pipeline: None,
            }],
            is_multipart: false,
            update_id: 7,
        }
    }

    #[test]
    fn what_was_written_changes_with_every_write_and_not_with_tags() {
        let object = key(1_000, 42, "e1");
        let mut tagged = object.clone();
        tagged.tags.push(("t".into(), "v".into()));
        tagged.update_id = 8;
        assert_eq!(written(&tagged), written(&object));
        // Another write: new blocks, or a later time, or other metadata.
        assert_ne!(written(&key(1_000, 43, "e1")), written(&object));
        assert_ne!(written(&key(1_001, 42, "e1")), written(&object));
        assert_ne!(written(&key(1_000, 42, "e2")), written(&object));
    }

    #[test]
    fn changes_set_and_remove_entries() {
        let mut user = BTreeMap::from([
            ("s3gw acl".to_owned(), "old".to_owned()),
            ("kept".to_owned(), "v".to_owned()),
        ]);
        EntryChanges(BTreeMap::from([
            ("s3gw acl".to_owned(), None),
            ("new".to_owned(), Some("x".to_owned())),
        ]))
        .apply(&mut user);
        assert_eq!(
            user,
            BTreeMap::from([
                ("kept".to_owned(), "v".to_owned()),
                ("new".to_owned(), "x".to_owned()),
            ])
        );
    }
}
