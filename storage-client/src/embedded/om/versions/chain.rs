//! A key's chain of versions in the tables, as primitives on a
//! transaction: how a version id is given out and read back, how a
//! version is found by its id or as the key's newest, and the moves a
//! write makes (retire the current object, install a new one, add a
//! delete marker, promote the newest after a delete). Kept apart from the
//! requests that use them (the parent's operations, the listing, and the
//! object, upload and bucket writes of `om`) so each move is written once
//! and runs inside its caller's transaction.

use std::time::SystemTime;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use crate::embedded::DbResult;
use crate::embedded::om::{next_counter, queue_for_reclaim};
use crate::embedded::schema::{
    BUCKET_VERSIONING, CURRENT_VERSIONS, CurrentVersion, KEYS, KeyRecord, NEXT_VERSION_SEQ,
    StoredVersion, VERSIONING_ENABLED, VERSIONING_SUSPENDED, VERSIONS, VersionRecord, bucket_end,
    decode, encode, object_key, split_version_key, version_key,
};
use crate::metadata::ObjectName;
use crate::{Deleted, NULL_VERSION_ID, Owner, Result, StorageError, Versioning};

/// A table of byte-string rows, from a read or a write transaction.
pub(super) trait Rows: ReadableTable<&'static [u8], &'static [u8]> {}

impl<T: ReadableTable<&'static [u8], &'static [u8]>> Rows for T {}

/// Version ids are the version's seq in fixed-width hex: they sort like
/// the versions and name their `VERSIONS` row directly.
fn version_id(seq: u64) -> String {
    format!("{seq:016x}")
}

/// The seq a version id names (`None` for `null`, whose seq must be looked
/// up); anything else is not an id this store gave out.
pub(super) fn parse_version_id(id: &str) -> Result<Option<u64>> {
    if id == NULL_VERSION_ID {
        return Ok(None);
    }
    let valid = id.len() == 16 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    match valid.then(|| u64::from_str_radix(id, 16).ok()).flatten() {
        Some(seq) => Ok(Some(seq)),
        None => Err(invalid_version_id()),
    }
}

pub(super) fn invalid_version_id() -> StorageError {
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

pub(in crate::embedded::om) fn write_state(
    txn: &WriteTransaction,
    bucket: &str,
) -> Result<Versioning> {
    state_of(&txn.open_table(BUCKET_VERSIONING).db()?, bucket)
}

pub(super) fn read_state(txn: &ReadTransaction, bucket: &str) -> Result<Versioning> {
    state_of(&txn.open_table(BUCKET_VERSIONING).db()?, bucket)
}

/// A version found by its id.
pub(super) enum Found {
    /// The key's current object (its `KEYS` row).
    Current(Box<KeyRecord>),
    /// A noncurrent version or a delete marker, with its `VERSIONS` row.
    Other(Vec<u8>, VersionRecord),
}

/// The version of the key's `KEYS` row, if it has one.
pub(super) fn current_version(
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

pub(super) fn find(
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
pub(super) fn newest(
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
pub(super) fn latest_marker(
    versions: &impl Rows,
    bucket: &str,
    key: &str,
) -> Result<Option<String>> {
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

pub(super) fn blocks(record: &KeyRecord) -> impl Iterator<Item = crate::BlockId> + '_ {
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
pub(in crate::embedded::om) fn install(
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
pub(in crate::embedded::om) fn add_delete_marker(
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
pub(super) fn promote_newest(txn: &WriteTransaction, bucket: &str, key: &str) -> Result<()> {
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

/// Whether any version of any key is left in the bucket (a bucket holding
/// only noncurrent versions or delete markers is not empty, as in S3).
pub(in crate::embedded::om) fn holds_versions(
    txn: &WriteTransaction,
    bucket: &str,
) -> Result<bool> {
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
pub(in crate::embedded::om) fn drop_bucket(txn: &WriteTransaction, bucket: &str) -> Result<()> {
    txn.open_table(BUCKET_VERSIONING)
        .db()?
        .remove(bucket)
        .db()?;
    Ok(())
}
