//! S3 versioning in the embedded OM. The current object of every key stays
//! in `KEYS`, as in an unversioned bucket, so GET and ListObjects read what
//! they always read; what versioning adds lives beside it: the bucket's
//! state (`BUCKET_VERSIONING`), the current row's version (`CURRENT_VERSIONS`)
//! and every noncurrent version and delete marker (`VERSIONS`, newest first
//! per key). Each write below runs inside the caller's transaction, so a
//! version moves between the tables atomically with the write that moved
//! it, and its blocks are queued for reclamation only when the version
//! itself is deleted (or, as `null`, replaced).
//!
//! This module holds the requests on versions as `Inner` operations: the
//! bucket's versioning state, GET/HEAD of the latest or a given version,
//! deleting a version and rewriting one's tags or metadata. Beside it:
//! [`chain`], the primitives on a key's versions that these and the other
//! writes of `om` share; [`listing`], ListObjectVersions; and [`store`],
//! the `VersionStore` trait impl that calls them.

use std::time::SystemTime;

use redb::{ReadTransaction, WriteTransaction};

mod chain;
mod listing;
mod store;

// The moves the object, upload and bucket writes make inside their own
// transactions.
pub(super) use chain::{add_delete_marker, drop_bucket, holds_versions, install, write_state};

use chain::{
    Found, blocks, current_version, find, invalid_version_id, latest_marker, parse_version_id,
    promote_newest, read_state,
};

use super::{Inner, owned_bucket, queue_for_reclaim};
use crate::embedded::DbResult;
use crate::embedded::schema::{
    BUCKET_VERSIONING, BUCKETS, CURRENT_VERSIONS, KEYS, KeyRecord, StoredVersion,
    VERSIONING_ENABLED, VERSIONING_SUSPENDED, VERSIONS, VersionRecord, decode, encode, object_key,
};
use crate::metadata::{ObjectName, validate_key};
use crate::{
    DeleteCondition, Deleted, MetaEntryChange, NULL_VERSION_ID, Owner, Result, StorageError,
    VersionLock, Versioning,
};

impl Inner {
    fn versioning(&self, owner: &Owner, bucket: &str) -> Result<Versioning> {
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        read_state(&txn, bucket)
    }

    fn set_versioning(&self, owner: &Owner, bucket: &str, state: Versioning) -> Result<()> {
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
    fn delete_version(
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
    fn put_version_tags(
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
    fn put_version_meta_entry(
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
}
