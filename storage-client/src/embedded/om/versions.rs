//! S3 versioning in the embedded OM. The current object of every key stays
//! in `KEYS`, as in an unversioned bucket, so GET and ListObjects read what
//! they always read; what versioning adds lives beside it: the bucket's
//! state (`BUCKET_VERSIONING`), the current row's version (`CURRENT_VERSIONS`)
//! and every noncurrent version and delete marker (`VERSIONS`, newest first
//! per key). Each write below runs inside the caller's transaction, so a
//! version moves between the tables atomically with the write that moved
//! it, and its blocks are queued for reclamation only when the version
//! itself is deleted (or, as `null`, replaced).

use std::ops::Bound;
use std::time::SystemTime;

use async_trait::async_trait;
use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use super::{EmbeddedOm, Inner, next_counter, owned_bucket, queue_for_reclaim};
use crate::embedded::DbResult;
use crate::embedded::schema::{
    BUCKET_VERSIONING, BUCKETS, CURRENT_VERSIONS, CurrentVersion, KEYS, KeyRecord,
    NEXT_VERSION_SEQ, StoredVersion, VERSIONING_ENABLED, VERSIONING_SUSPENDED, VERSIONS,
    VersionRecord, bucket_end, decode, encode, object_key, split_version_key, version_key,
};
use crate::om::{ObjectName, ScanRange, VersionStore, validate_key};
use crate::{
    DeleteCondition, Deleted, KeyInfo, MetaEntryChange, NULL_VERSION_ID, ObjectMeta, Owner, Result,
    StorageError, VersionEntry, VersionLock, Versioning,
};

/// A table of byte-string rows, from a read or a write transaction.
trait Rows: ReadableTable<&'static [u8], &'static [u8]> {}

impl<T: ReadableTable<&'static [u8], &'static [u8]>> Rows for T {}

/// Version ids are the version's seq in fixed-width hex: they sort like
/// the versions and name their `VERSIONS` row directly.
fn version_id(seq: u64) -> String {
    format!("{seq:016x}")
}

/// The seq a version id names (`None` for `null`, whose seq must be looked
/// up); anything else is not an id this store gave out.
fn parse_version_id(id: &str) -> Result<Option<u64>> {
    if id == NULL_VERSION_ID {
        return Ok(None);
    }
    let valid = id.len() == 16 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    match valid.then(|| u64::from_str_radix(id, 16).ok()).flatten() {
        Some(seq) => Ok(Some(seq)),
        None => Err(invalid_version_id()),
    }
}

fn invalid_version_id() -> StorageError {
    StorageError::InvalidArgument("Invalid version id specified".into())
}

fn state_of(table: &impl ReadableTable<&'static str, u8>, bucket: &str) -> Result<Versioning> {
    Ok(match table.get(bucket).db()?.map(|v| v.value()) {
        Some(VERSIONING_ENABLED) => Versioning::Enabled,
        Some(VERSIONING_SUSPENDED) => Versioning::Suspended,
        Some(other) => {
            return Err(StorageError::Corrupt(format!(
                "bucket versioning state {other}"
            )));
        }
        None => Versioning::Unversioned,
    })
}

pub(super) fn write_state(txn: &WriteTransaction, bucket: &str) -> Result<Versioning> {
    state_of(&txn.open_table(BUCKET_VERSIONING).db()?, bucket)
}

pub(super) fn read_state(txn: &ReadTransaction, bucket: &str) -> Result<Versioning> {
    state_of(&txn.open_table(BUCKET_VERSIONING).db()?, bucket)
}

/// A version found by its id.
enum Found {
    /// The key's current object (its `KEYS` row).
    Current(Box<KeyRecord>),
    /// A noncurrent version or a delete marker, with its `VERSIONS` row.
    Other(Vec<u8>, VersionRecord),
}

/// The version of the key's `KEYS` row, if it has one.
fn current_version(
    keys: &impl Rows,
    current: &impl Rows,
    row: &[u8],
) -> Result<Option<(CurrentVersion, KeyRecord)>> {
    let Some(record) = keys.get(row).db()? else {
        return Ok(None);
    };
    let record: KeyRecord = decode(record.value())?;
    let version = match current.get(row).db()? {
        Some(v) => decode(v.value())?,
        None => CurrentVersion::written_unversioned(),
    };
    Ok(Some((version, record)))
}

/// The `VERSIONS` rows of one key, newest first.
fn versions_of(
    versions: &impl Rows,
    bucket: &str,
    key: &str,
) -> Result<Vec<(Vec<u8>, VersionRecord)>> {
    let start = version_key(bucket, key.as_bytes(), u64::MAX);
    let end = version_key(bucket, key.as_bytes(), 0);
    let mut out = Vec::new();
    for row in versions
        .range::<&[u8]>(start.as_slice()..=end.as_slice())
        .db()?
    {
        let (name, value) = row.db()?;
        out.push((name.value().to_vec(), decode(value.value())?));
    }
    Ok(out)
}

fn find(
    keys: &impl Rows,
    current: &impl Rows,
    versions: &impl Rows,
    object: &ObjectName,
    id: &str,
) -> Result<Option<Found>> {
    let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
    let seq = parse_version_id(id)?;
    let row = object_key(bucket, key.as_bytes());
    if let Some((version, record)) = current_version(keys, current, &row)?
        && version.id == id
    {
        return Ok(Some(Found::Current(Box::new(record))));
    }
    let found = match seq {
        Some(seq) => {
            let row = version_key(bucket, key.as_bytes(), seq);
            match versions.get(row.as_slice()).db()? {
                Some(value) => Some((row, decode::<VersionRecord>(value.value())?)),
                None => None,
            }
        }
        None => versions_of(versions, bucket, key)?
            .into_iter()
            .find(|(_, v)| v.id == NULL_VERSION_ID),
    };
    Ok(found
        .filter(|(_, v)| v.id == id)
        .map(|(row, v)| Found::Other(row, v)))
}

/// The key's newest `VERSIONS` row, if any.
fn newest(
    versions: &impl Rows,
    bucket: &str,
    key: &[u8],
) -> Result<Option<(Vec<u8>, VersionRecord)>> {
    let start = version_key(bucket, key, u64::MAX);
    let end = version_key(bucket, key, 0);
    let first = versions
        .range::<&[u8]>(start.as_slice()..=end.as_slice())
        .db()?
        .next();
    match first {
        Some(row) => {
            let (name, value) = row.db()?;
            Ok(Some((name.value().to_vec(), decode(value.value())?)))
        }
        None => Ok(None),
    }
}

/// The latest version of a key with no `KEYS` row, if it is a delete
/// marker: its id.
fn latest_marker(versions: &impl Rows, bucket: &str, key: &str) -> Result<Option<String>> {
    Ok(newest(versions, bucket, key.as_bytes())?
        .filter(|(_, record)| matches!(record.version, StoredVersion::DeleteMarker { .. }))
        .map(|(_, record)| record.id))
}

fn refuse_nul(key: &str) -> Result<()> {
    if key.contains('\0') {
        return Err(StorageError::InvalidArgument(
            "a key in a versioned bucket cannot contain U+0000".into(),
        ));
    }
    Ok(())
}

fn blocks(record: &KeyRecord) -> impl Iterator<Item = crate::BlockId> + '_ {
    record.blocks.iter().map(|b| b.block)
}

/// The seq and id of a new version written in `state`.
fn new_version(txn: &WriteTransaction, state: Versioning) -> Result<CurrentVersion> {
    let seq = next_counter(txn, NEXT_VERSION_SEQ)?;
    let id = match state {
        Versioning::Enabled => version_id(seq),
        _ => NULL_VERSION_ID.to_owned(),
    };
    Ok(CurrentVersion { id, seq })
}

/// Takes the key's current object out of `KEYS`: it becomes a noncurrent
/// version, or, if it is `null` and `drop_null`, is deleted.
fn retire_current(txn: &WriteTransaction, bucket: &str, key: &str, drop_null: bool) -> Result<()> {
    let row = object_key(bucket, key.as_bytes());
    let old: Option<KeyRecord> = {
        let mut keys = txn.open_table(KEYS).db()?;
        let removed = keys.remove(row.as_slice()).db()?;
        removed.map(|v| decode(v.value())).transpose()?
    };
    let Some(old) = old else {
        return Ok(());
    };
    let version: Option<CurrentVersion> = {
        let mut current = txn.open_table(CURRENT_VERSIONS).db()?;
        let removed = current.remove(row.as_slice()).db()?;
        removed.map(|v| decode(v.value())).transpose()?
    };
    let version = version.unwrap_or(CurrentVersion::written_unversioned());
    if drop_null && version.id == NULL_VERSION_ID {
        return queue_for_reclaim(txn, blocks(&old));
    }
    let record = VersionRecord {
        id: version.id,
        version: StoredVersion::Object(Box::new(old)),
    };
    txn.open_table(VERSIONS)
        .db()?
        .insert(
            version_key(bucket, key.as_bytes(), version.seq).as_slice(),
            encode(&record)?.as_slice(),
        )
        .db()?;
    Ok(())
}

/// Deletes the key's noncurrent `null` version, which a write in a
/// suspended bucket replaces.
fn drop_noncurrent_null(txn: &WriteTransaction, bucket: &str, key: &str) -> Result<()> {
    let mut versions = txn.open_table(VERSIONS).db()?;
    let null = versions_of(&versions, bucket, key)?
        .into_iter()
        .find(|(_, v)| v.id == NULL_VERSION_ID);
    if let Some((row, record)) = null {
        versions.remove(row.as_slice()).db()?;
        if let StoredVersion::Object(old) = record.version {
            queue_for_reclaim(txn, blocks(&old))?;
        }
    }
    Ok(())
}

/// Makes `record` the key's current object, replacing `existing` (its
/// `KEYS` row, already read) as the bucket's versioning state says: an
/// unversioned bucket deletes it, an enabled one keeps it as a noncurrent
/// version, a suspended one replaces the `null` version. Returns the new
/// object's version id (`None` in an unversioned bucket).
pub(super) fn install(
    txn: &WriteTransaction,
    bucket: &str,
    key: &str,
    existing: Option<&KeyRecord>,
    record: &KeyRecord,
) -> Result<Option<String>> {
    let state = write_state(txn, bucket)?;
    let row = object_key(bucket, key.as_bytes());
    let version = if state == Versioning::Unversioned {
        if let Some(old) = existing {
            queue_for_reclaim(txn, blocks(old))?;
        }
        None
    } else {
        refuse_nul(key)?;
        let suspended = state == Versioning::Suspended;
        retire_current(txn, bucket, key, suspended)?;
        if suspended {
            drop_noncurrent_null(txn, bucket, key)?;
        }
        let version = new_version(txn, state)?;
        txn.open_table(CURRENT_VERSIONS)
            .db()?
            .insert(row.as_slice(), encode(&version)?.as_slice())
            .db()?;
        Some(version.id)
    };
    txn.open_table(KEYS)
        .db()?
        .insert(row.as_slice(), encode(record)?.as_slice())
        .db()?;
    Ok(version)
}

/// DeleteObject without a version id in a versioned bucket: a new delete
/// marker becomes the key's latest version.
pub(super) fn add_delete_marker(
    txn: &WriteTransaction,
    owner: &Owner,
    object: &ObjectName,
    state: Versioning,
) -> Result<Deleted> {
    let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
    refuse_nul(key)?;
    let suspended = state == Versioning::Suspended;
    retire_current(txn, bucket, key, suspended)?;
    if suspended {
        drop_noncurrent_null(txn, bucket, key)?;
    }
    let version = new_version(txn, state)?;
    let marker = VersionRecord {
        id: version.id.clone(),
        version: StoredVersion::DeleteMarker {
            last_modified: SystemTime::now(),
            owner: owner.access_key.clone(),
        },
    };
    txn.open_table(VERSIONS)
        .db()?
        .insert(
            version_key(bucket, key.as_bytes(), version.seq).as_slice(),
            encode(&marker)?.as_slice(),
        )
        .db()?;
    Ok(Deleted {
        version_id: Some(version.id),
        delete_marker: true,
    })
}

/// Makes the newest remaining version current again after the current one
/// was deleted, if it is an object (a delete marker stays where it is).
fn promote_newest(txn: &WriteTransaction, bucket: &str, key: &str) -> Result<()> {
    let row = object_key(bucket, key.as_bytes());
    if txn
        .open_table(KEYS)
        .db()?
        .get(row.as_slice())
        .db()?
        .is_some()
    {
        return Ok(());
    }
    let mut versions = txn.open_table(VERSIONS).db()?;
    let Some((version_row, latest)) = newest(&versions, bucket, key.as_bytes())? else {
        return Ok(());
    };
    let StoredVersion::Object(record) = latest.version else {
        return Ok(());
    };
    let Some((_, seq)) = split_version_key(bucket, &version_row) else {
        return Err(StorageError::Corrupt("version row".into()));
    };
    versions.remove(version_row.as_slice()).db()?;
    let current = CurrentVersion { id: latest.id, seq };
    txn.open_table(CURRENT_VERSIONS)
        .db()?
        .insert(row.as_slice(), encode(&current)?.as_slice())
        .db()?;
    txn.open_table(KEYS)
        .db()?
        .insert(row.as_slice(), encode(&record)?.as_slice())
        .db()?;
    Ok(())
}

impl Inner {
    pub(super) fn versioning(&self, owner: &Owner, bucket: &str) -> Result<Versioning> {
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        read_state(&txn, bucket)
    }

    pub(super) fn set_versioning(
        &self,
        owner: &Owner,
        bucket: &str,
        state: Versioning,
    ) -> Result<()> {
        let value = match state {
            Versioning::Enabled => VERSIONING_ENABLED,
            Versioning::Suspended => VERSIONING_SUSPENDED,
            Versioning::Unversioned => {
                return Err(StorageError::InvalidArgument(
                    "a bucket's versioning can be Enabled or Suspended".into(),
                ));
            }
        };
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        txn.open_table(BUCKET_VERSIONING)
            .db()?
            .insert(bucket, value)
            .db()?;
        txn.commit().db()
    }

    /// The key's latest object and its version id, or why there is none:
    /// `DeleteMarker` if the latest version is one, `NoSuchKey` otherwise.
    pub(super) fn latest(
        txn: &ReadTransaction,
        object: &ObjectName,
    ) -> Result<(KeyRecord, Option<String>)> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        let row = object_key(bucket, key.as_bytes());
        let keys = txn.open_table(KEYS).db()?;
        let state = read_state(txn, bucket)?;
        if state == Versioning::Unversioned {
            return match keys.get(row.as_slice()).db()? {
                Some(bytes) => Ok((decode(bytes.value())?, None)),
                None => Err(StorageError::NoSuchKey),
            };
        }
        let current = txn.open_table(CURRENT_VERSIONS).db()?;
        if let Some((version, record)) = current_version(&keys, &current, &row)? {
            return Ok((record, Some(version.id)));
        }
        match latest_marker(&txn.open_table(VERSIONS).db()?, bucket, key)? {
            Some(version_id) => Err(StorageError::DeleteMarker {
                version_id,
                addressed: false,
            }),
            None => Err(StorageError::NoSuchKey),
        }
    }

    /// The object version `id` of the key, for GET/HEAD, and the version
    /// id to answer with (`None` in an unversioned bucket).
    pub(super) fn version(
        txn: &ReadTransaction,
        object: &ObjectName,
        id: &str,
    ) -> Result<(KeyRecord, Option<String>)> {
        if read_state(txn, &object.bucket)? == Versioning::Unversioned {
            return match parse_version_id(id)? {
                None => Self::latest(txn, object),
                Some(_) => Err(invalid_version_id()),
            };
        }
        let (keys, current, versions) = (
            txn.open_table(KEYS).db()?,
            txn.open_table(CURRENT_VERSIONS).db()?,
            txn.open_table(VERSIONS).db()?,
        );
        let record = match find(&keys, &current, &versions, object, id)? {
            Some(Found::Current(record)) => record,
            Some(Found::Other(
                _,
                VersionRecord {
                    version: StoredVersion::Object(record),
                    ..
                },
            )) => record,
            Some(Found::Other(_, VersionRecord { id, .. })) => {
                return Err(StorageError::DeleteMarker {
                    version_id: id,
                    addressed: true,
                });
            }
            None => return Err(StorageError::NoSuchVersion),
        };
        Ok((*record, Some(id.to_owned())))
    }

    /// Deletes one version; deleting one that does not exist succeeds, as
    /// in S3. If it was current, the newest remaining one becomes current.
    /// A locked version is left (`ObjectLocked`): its lock is read in this
    /// transaction, so no retention or legal hold committed before it is
    /// missed.
    pub(super) fn delete_version(
        txn: &WriteTransaction,
        owner: &Owner,
        object: &ObjectName,
        id: &str,
        bypass_governance: bool,
    ) -> Result<Result<Deleted>> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        let checked = validate_key(key)
            .and_then(|()| owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner))
            .and_then(|_| parse_version_id(id))
            .and_then(|_| write_state(txn, bucket));
        let state = match checked {
            Ok(state) => state,
            Err(e) => return Ok(Err(e)),
        };
        if state == Versioning::Unversioned {
            if id != NULL_VERSION_ID {
                return Ok(Err(invalid_version_id()));
            }
            return Self::delete_object(txn, owner, object, &DeleteCondition::default()).map(|r| {
                r.map(|_| Deleted {
                    version_id: Some(NULL_VERSION_ID.to_owned()),
                    delete_marker: false,
                })
            });
        }
        let found = find(
            &txn.open_table(KEYS).db()?,
            &txn.open_table(CURRENT_VERSIONS).db()?,
            &txn.open_table(VERSIONS).db()?,
            object,
            id,
        )?;
        let locked = match &found {
            Some(Found::Current(record)) => Some(&record.meta.user),
            Some(Found::Other(_, VersionRecord { version, .. })) => match version {
                StoredVersion::Object(record) => Some(&record.meta.user),
                StoredVersion::DeleteMarker { .. } => None,
            },
            None => None,
        }
        .map(|user| VersionLock::of(user)?.check_delete(SystemTime::now(), bypass_governance))
        .transpose();
        if let Err(refused) = locked {
            return Ok(Err(refused));
        }
        let row = object_key(bucket, key.as_bytes());
        let delete_marker = match found {
            Some(Found::Current(record)) => {
                txn.open_table(KEYS).db()?.remove(row.as_slice()).db()?;
                txn.open_table(CURRENT_VERSIONS)
                    .db()?
                    .remove(row.as_slice())
                    .db()?;
                queue_for_reclaim(txn, blocks(&record))?;
                false
            }
            Some(Found::Other(version_row, record)) => {
                txn.open_table(VERSIONS)
                    .db()?
                    .remove(version_row.as_slice())
                    .db()?;
                match record.version {
                    StoredVersion::Object(old) => {
                        queue_for_reclaim(txn, blocks(&old))?;
                        false
                    }
                    StoredVersion::DeleteMarker { .. } => true,
                }
            }
            None => false,
        };
        promote_newest(txn, bucket, key)?;
        Ok(Ok(Deleted {
            version_id: Some(id.to_owned()),
            delete_marker,
        }))
    }

    /// Replaces the tag set of one object version.
    pub(super) fn put_version_tags(
        &self,
        owner: &Owner,
        object: &ObjectName,
        id: &str,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        self.rewrite_version(owner, object, id, |record| {
            record.tags = tags;
            Ok(())
        })
    }

    /// Changes one user metadata entry of one object version.
    pub(super) fn put_version_meta_entry(
        &self,
        owner: &Owner,
        object: &ObjectName,
        id: &str,
        change: MetaEntryChange,
    ) -> Result<()> {
        self.rewrite_version(owner, object, id, |record| {
            change.apply(&mut record.meta.user)
        })
    }

    /// Changes one version's record in place, in one transaction; in an
    /// unversioned bucket only `null` names a version, the key's record.
    /// A change that fails writes nothing.
    fn rewrite_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        id: &str,
        change: impl FnOnce(&mut KeyRecord) -> Result<()>,
    ) -> Result<()> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        validate_key(key)?;
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        if write_state(&txn, bucket)? == Versioning::Unversioned {
            drop(txn);
            return match parse_version_id(id)? {
                None => self.rewrite_record(owner, object, change),
                Some(_) => Err(invalid_version_id()),
            };
        }
        let found = find(
            &txn.open_table(KEYS).db()?,
            &txn.open_table(CURRENT_VERSIONS).db()?,
            &txn.open_table(VERSIONS).db()?,
            object,
            id,
        )?;
        match found {
            Some(Found::Current(mut record)) => {
                change(&mut record)?;
                let row = object_key(bucket, key.as_bytes());
                txn.open_table(KEYS)
                    .db()?
                    .insert(row.as_slice(), encode(&record)?.as_slice())
                    .db()?;
            }
            Some(Found::Other(row, mut version)) => {
                let StoredVersion::Object(record) = &mut version.version else {
                    return Err(StorageError::DeleteMarker {
                        version_id: version.id,
                        addressed: true,
                    });
                };
                change(record)?;
                txn.open_table(VERSIONS)
                    .db()?
                    .insert(row.as_slice(), encode(&version)?.as_slice())
                    .db()?;
            }
            None => return Err(StorageError::NoSuchVersion),
        }
        txn.commit().db()
    }

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

/// Whether any version of any key is left in the bucket (a bucket holding
/// only noncurrent versions or delete markers is not empty, as in S3).
pub(super) fn holds_versions(txn: &WriteTransaction, bucket: &str) -> Result<bool> {
    let start = object_key(bucket, b"");
    let end = bucket_end(bucket);
    Ok(txn
        .open_table(VERSIONS)
        .db()?
        .range::<&[u8]>(start.as_slice()..end.as_slice())
        .db()?
        .next()
        .is_some())
}

/// Forgets a deleted bucket's versioning state.
pub(super) fn drop_bucket(txn: &WriteTransaction, bucket: &str) -> Result<()> {
    txn.open_table(BUCKET_VERSIONING)
        .db()?
        .remove(bucket)
        .db()?;
    Ok(())
}

#[async_trait]
impl VersionStore for EmbeddedOm {
    async fn versioning(&self, owner: &Owner, bucket: &str) -> Result<Versioning> {
        let (owner, bucket) = (owner.clone(), bucket.to_owned());
        self.run(move |om| om.versioning(&owner, &bucket)).await
    }

    async fn set_versioning(&self, owner: &Owner, bucket: &str, state: Versioning) -> Result<()> {
        let (owner, bucket) = (owner.clone(), bucket.to_owned());
        self.run(move |om| om.set_versioning(&owner, &bucket, state))
            .await
    }

    async fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: &str,
    ) -> Result<KeyInfo> {
        let (owner, object, id) = (owner.clone(), object.clone(), version_id.to_owned());
        self.run(move |om| om.lookup_version(&owner, &object, &id))
            .await
    }

    async fn delete_version(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        bypass_governance: bool,
    ) -> Result<Deleted> {
        let owner = owner.clone();
        self.batched(
            true,
            Box::new(move |_, _, txn| {
                Inner::delete_version(txn, &owner, &object, &version_id, bypass_governance)
            }),
        )
        .await
    }

    async fn put_version_tags(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.put_version_tags(&owner, &object, &version_id, tags))
            .await
    }

    async fn put_version_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        change: MetaEntryChange,
    ) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.put_version_meta_entry(&owner, &object, &version_id, change))
            .await
    }

    async fn scan_versions(
        &self,
        owner: &Owner,
        scan: ScanRange,
        after_version: Option<String>,
    ) -> Result<Vec<VersionEntry>> {
        let owner = owner.clone();
        self.run(move |om| om.scan_versions(&owner, &scan, after_version.as_deref()))
            .await
    }
}
