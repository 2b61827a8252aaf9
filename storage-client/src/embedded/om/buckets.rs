//! The embedded OM's buckets: one `BUCKETS` row each; deleting one drops
//! its uploads and documents in the same transaction.

use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use redb::ReadableTable;

use super::{EmbeddedOm, Inner, bucket_documents, bucket_info, multipart, owned_bucket, versions};
use crate::embedded::DbResult;
use crate::embedded::schema::{
    BUCKETS, BucketRecord, KEYS, KeyRecord, StoredVersion, VERSIONS, VersionRecord, bucket_end,
    decode, encode, object_key, split_version_key,
};
use crate::metadata::{BucketStore, NewBucket};
use crate::{BucketInfo, BucketRef, BucketUsage, Owner, Result, StorageError};

impl Inner {
    pub(super) fn create_bucket(&self, owner: &Owner, bucket: &NewBucket) -> Result<()> {
        let (name, region) = (bucket.name.as_str(), bucket.region.as_str());
        if name.is_empty() || name.contains('\0') {
            return Err(StorageError::InvalidArgument("invalid bucket name".into()));
        }
        let txn = self.write()?;
        {
            let mut buckets = txn.open_table(BUCKETS).db()?;
            if let Some(existing) = buckets.get(name).db()? {
                let record: BucketRecord = decode(existing.value())?;
                return Err(if record.owner == owner.access_key {
                    StorageError::BucketAlreadyOwnedByYou
                } else {
                    StorageError::BucketAlreadyExists
                });
            }
            let record = BucketRecord {
                owner: owner.access_key.clone(),
                created: SystemTime::now(),
                region: region.to_owned(),
            };
            buckets.insert(name, encode(&record)?.as_slice()).db()?;
        }
        txn.commit().db()
    }

    pub(super) fn bucket(&self, name: &str) -> Result<BucketInfo> {
        let txn = self.db.begin_read()?;
        let buckets = txn.open_table(BUCKETS).db()?;
        match buckets.get(name).db()? {
            Some(bytes) => Ok(bucket_info(name, decode(bytes.value())?)),
            None => Err(StorageError::NoSuchBucket),
        }
    }

    pub(super) fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        let txn = self.db.begin_read()?;
        let buckets = txn.open_table(BUCKETS).db()?;
        let mut out = Vec::new();
        // Bucket counts per deployment are small (S3 caps them per account);
        // the table is in name order, so the result is sorted.
        for row in buckets.iter().db()? {
            let (name, value) = row.db()?;
            let record: BucketRecord = decode(value.value())?;
            if owner.is_none_or(|owner| record.owner == owner.access_key) {
                out.push(bucket_info(name.value(), record));
            }
        }
        Ok(out)
    }

    pub(super) fn set_bucket_owner(&self, name: &str, from: &Owner, to: &Owner) -> Result<()> {
        let txn = self.write()?;
        {
            let mut buckets = txn.open_table(BUCKETS).db()?;
            let mut record = match owned_bucket(&buckets, name, from) {
                Err(StorageError::AccessDenied) => return Err(StorageError::PreconditionFailed),
                found => found?,
            };
            record.owner = to.access_key.clone();
            buckets.insert(name, encode(&record)?.as_slice()).db()?;
        }
        txn.commit().db()
    }

    /// What `name` holds, read in one transaction: every `KEYS` row is a
    /// current object, and a `VERSIONS` row is one only when it is its
    /// key's newest (rows run newest first within a key) and the key has
    /// no `KEYS` row; every other object version is noncurrent.
    pub(super) fn bucket_usage(&self, owner: &Owner, name: &str) -> Result<BucketUsage> {
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, name, owner)?;
        let (keys, versions) = (txn.open_table(KEYS).db()?, txn.open_table(VERSIONS).db()?);
        let (start, end) = (object_key(name, b""), bucket_end(name));
        let mut usage = BucketUsage::default();
        for row in keys.range::<&[u8]>(start.as_slice()..end.as_slice()).db()? {
            let record: KeyRecord = decode(row.db()?.1.value())?;
            usage.objects += 1;
            usage.bytes += record.size;
        }
        let mut previous_key: Option<Vec<u8>> = None;
        for row in versions
            .range::<&[u8]>(start.as_slice()..end.as_slice())
            .db()?
        {
            let (row, value) = row.db()?;
            let Some((key, _)) = split_version_key(name, row.value()) else {
                return Err(StorageError::Corrupt("version row".into()));
            };
            let newest_of_its_key = previous_key.as_deref() != Some(key);
            if newest_of_its_key {
                previous_key = Some(key.to_vec());
            }
            let record: VersionRecord = decode(value.value())?;
            let StoredVersion::Object(object) = record.version else {
                continue;
            };
            let current =
                newest_of_its_key && keys.get(object_key(name, key).as_slice()).db()?.is_none();
            let (count, bytes) = match current {
                true => (&mut usage.objects, &mut usage.bytes),
                false => (&mut usage.noncurrent_versions, &mut usage.noncurrent_bytes),
            };
            *count += 1;
            *bytes += object.size;
        }
        Ok(usage)
    }

    pub(super) fn delete_bucket(&self, owner: &Owner, name: &str) -> Result<()> {
        let txn = self.write()?;
        {
            let mut buckets = txn.open_table(BUCKETS).db()?;
            owned_bucket(&buckets, name, owner)?;
            let keys = txn.open_table(KEYS).db()?;
            let start = object_key(name, b"");
            let end = bucket_end(name);
            if keys
                .range::<&[u8]>(start.as_slice()..end.as_slice())
                .db()?
                .next()
                .is_some()
            {
                return Err(StorageError::BucketNotEmpty);
            }
            if versions::holds_versions(&txn, name)? {
                return Err(StorageError::BucketNotEmpty);
            }
            buckets.remove(name).db()?;
        }
        versions::drop_bucket(&txn, name)?;
        // As in S3, uploads in progress do not keep a bucket alive.
        multipart::drop_bucket_uploads(&txn, name)?;
        bucket_documents::drop_bucket_documents(&txn, name)?;
        txn.commit().db()
    }
}

#[async_trait]
impl BucketStore for EmbeddedOm {
    async fn create_bucket(&self, bucket: BucketRef<'_>, region: &str) -> Result<()> {
        let (owner, bucket) = (bucket.owner.clone(), NewBucket::new(bucket, region));
        self.run(move |om| om.create_bucket(&owner, &bucket)).await
    }

    async fn bucket(&self, name: &str) -> Result<Arc<BucketInfo>> {
        let name = name.to_owned();
        self.run(move |om| om.bucket(&name).map(Arc::new)).await
    }

    async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        let owner = owner.cloned();
        self.run(move |om| om.list_buckets(owner.as_ref())).await
    }

    async fn set_bucket_owner(&self, bucket: BucketRef<'_>, to: &Owner) -> Result<()> {
        let (name, from, to) = (bucket.path().into_owned(), bucket.owner.clone(), to.clone());
        self.run(move |om| om.set_bucket_owner(&name, &from, &to))
            .await
    }

    async fn bucket_usage(&self, bucket: BucketRef<'_>) -> Result<BucketUsage> {
        let (owner, name) = (bucket.owner.clone(), bucket.path().into_owned());
        self.run(move |om| om.bucket_usage(&owner, &name)).await
    }

    async fn delete_bucket(&self, bucket: BucketRef<'_>) -> Result<()> {
        let (owner, name) = (bucket.owner.clone(), bucket.path().into_owned());
        self.run(move |om| om.delete_bucket(&owner, &name)).await
    }
}
