//! ListObjectVersions in the embedded OM: one step of the scan, merging a
//! bucket's current objects (`KEYS`) with its other versions (`VERSIONS`),
//! and the entry each row becomes. Apart from the other operations because
//! it is the one read that walks a range of keys rather than one key's
//! versions.

use std::ops::Bound;

use super::chain::{Found, current_version, find, newest, parse_version_id};
use crate::embedded::DbResult;
use crate::embedded::om::{Inner, owned_bucket};
use crate::embedded::schema::{
    BUCKETS, CURRENT_VERSIONS, CurrentVersion, KEYS, KeyRecord, StoredVersion, VERSIONS,
    VersionRecord, bucket_end, decode, object_key, split_version_key, version_key,
};
use crate::metadata::{ObjectName, ScanRange};
use crate::{NULL_VERSION_ID, ObjectMeta, Owner, Result, StorageError, VersionEntry};

impl Inner {
    /// One step of ListObjectVersions: up to `scan.limit` versions of keys
    /// with the prefix, in key order and newest first within a key,
    /// strictly after version `after_version` of key `scan.after` (after
    /// every version of it when `None`).
    pub(super) fn scan_versions(
        &self,
        owner: &Owner,
        scan: &ScanRange,
        after_version: Option<&str>,
    ) -> Result<Vec<VersionEntry>> {
        let bucket = scan.bucket.as_str();
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let (keys, current, versions) = (
            txn.open_table(KEYS).db()?,
            txn.open_table(CURRENT_VERSIONS).db()?,
            txn.open_table(VERSIONS).db()?,
        );
        let after_key = String::from_utf8_lossy(&scan.after).into_owned();
        // Where the scan starts, as a `VERSIONS` row: just past the marker.
        let after_seq = match after_version {
            None => 0,
            Some(id) => match parse_version_id(id)? {
                Some(seq) => seq,
                None => {
                    let object = ObjectName::new(bucket, &after_key);
                    let null = find(&keys, &current, &versions, &object, NULL_VERSION_ID)?;
                    match null {
                        Some(Found::Other(row, _)) => {
                            split_version_key(bucket, &row).map_or(0, |(_, seq)| seq)
                        }
                        Some(Found::Current(_)) => current_version(
                            &keys,
                            &current,
                            &object_key(bucket, after_key.as_bytes()),
                        )?
                        .map_or(0, |(v, _)| v.seq),
                        None => 0,
                    }
                }
            },
        };
        let mut position = object_key(bucket, &scan.after);
        position.push(0);
        position.extend_from_slice(&(u64::MAX - after_seq).to_be_bytes());
        let prefix_row = object_key(bucket, scan.prefix.as_bytes());
        let start = if position > prefix_row {
            position.clone()
        } else {
            prefix_row.clone()
        };
        let end = bucket_end(bucket);
        let in_scope = |row: &[u8]| row > position.as_slice() && row.starts_with(&prefix_row);

        // The current objects (KEYS) and the other versions (VERSIONS) are
        // two runs of the same order: take up to `limit` of each, merge.
        let key_start = object_key(bucket, scan.after.as_slice().max(scan.prefix.as_bytes()));
        let mut entries: Vec<(Vec<u8>, VersionEntry)> = Vec::new();
        for row in keys
            .range::<&[u8]>((
                Bound::Included(key_start.as_slice()),
                Bound::Excluded(end.as_slice()),
            ))
            .db()?
        {
            let (name, value) = row.db()?;
            let name = name.value();
            if !name.starts_with(&prefix_row) || entries.len() == scan.limit {
                break;
            }
            let version = match current.get(name).db()? {
                Some(v) => decode(v.value())?,
                None => CurrentVersion::written_unversioned(),
            };
            let at = version_key(bucket, &name[bucket.len() + 1..], version.seq);
            if !in_scope(&at) {
                continue;
            }
            let record: KeyRecord = decode(value.value())?;
            let entry = VersionEntry {
                key: key_text(&name[bucket.len() + 1..])?,
                version_id: version.id,
                is_latest: true,
                delete_marker: false,
                size: record.size,
                part_sizes: record.parts.iter().map(|part| part.size).collect(),
                etag: record.etag,
                last_modified: record.last_modified,
                owner: record.owner,
                meta: record.meta,
            };
            entries.push((at, entry));
        }
        let mut taken = 0;
        let mut previous_key: Option<Vec<u8>> = None;
        for row in versions
            .range::<&[u8]>((
                Bound::Included(start.as_slice()),
                Bound::Excluded(end.as_slice()),
            ))
            .db()?
        {
            let (name, value) = row.db()?;
            let name = name.value();
            if !name.starts_with(&prefix_row) || taken == scan.limit {
                break;
            }
            if !in_scope(name) {
                continue;
            }
            taken += 1;
            let Some((key, seq)) = split_version_key(bucket, name) else {
                return Err(StorageError::Corrupt("version row".into()));
            };
            // The latest only if nothing is newer: no current object and
            // no newer row of the key. A key's first row after another key's
            // is its newest; only the scan's first row may follow newer rows
            // of its key that the scan started past.
            let newest_of_its_key = match previous_key.as_deref() {
                Some(previous) => previous != key,
                None => {
                    newest(&versions, bucket, key)?
                        .and_then(|(row, _)| split_version_key(bucket, &row).map(|(_, s)| s))
                        == Some(seq)
                }
            };
            previous_key = Some(key.to_vec());
            let is_latest =
                newest_of_its_key && keys.get(object_key(bucket, key).as_slice()).db()?.is_none();
            let record: VersionRecord = decode(value.value())?;
            let entry = version_entry(key_text(key)?, record, is_latest);
            entries.push((name.to_vec(), entry));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.truncate(scan.limit);
        let out = entries.into_iter().map(|(_, entry)| entry).collect();
        Ok(out)
    }
}

fn key_text(key: &[u8]) -> Result<String> {
    String::from_utf8(key.to_vec())
        .map_err(|_| StorageError::Corrupt("stored key is not UTF-8".into()))
}

fn version_entry(key: String, record: VersionRecord, is_latest: bool) -> VersionEntry {
    let version_id = record.id;
    match record.version {
        StoredVersion::Object(object) => VersionEntry {
            key,
            version_id,
            is_latest,
            delete_marker: false,
            size: object.size,
            etag: object.etag,
            last_modified: object.last_modified,
            owner: object.owner,
            part_sizes: object.parts.iter().map(|part| part.size).collect(),
            meta: object.meta,
        },
        StoredVersion::DeleteMarker {
            last_modified,
            owner,
        } => VersionEntry {
            key,
            version_id,
            is_latest,
            delete_marker: true,
            size: 0,
            etag: String::new(),
            last_modified,
            owner,
            meta: ObjectMeta::default(),
            part_sizes: Vec::new(),
        },
    }
}
