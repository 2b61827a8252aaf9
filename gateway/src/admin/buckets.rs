//! The admin API's bucket commands, for what S3 gives nobody: every
//! bucket whoever owns it, a bucket handed to another key (a deleted
//! key's buckets are otherwise stranded: their names stay taken and only
//! their owner could empty them), and a bucket deleted with everything
//! in it. The API is for root keys only (see [`super::api`]), so these act
//! for the bucket's owner without a decision on any bucket.
//!
//! - `GET /_s3gw/admin/buckets` -> 200 `[BucketSummary]`, sorted by name
//! - `PUT /_s3gw/admin/buckets/NAME/owner?access_key=AK` -> 200 `BucketSummary`
//! - `DELETE /_s3gw/admin/buckets/NAME[?force=true]` -> 204

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use storage_client::{
    BucketDocument, BucketInfo, BucketRef, Namespace, Owner, Storage, StorageError,
    UploadListQuery, VersionListQuery,
};

use crate::error::{Code, S3Error};

/// Entries asked for per listing page while emptying.
const PAGE: usize = 1000;

/// A bucket as `list` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketSummary {
    pub name: String,
    /// The owning access key id.
    pub owner: String,
    /// The owning key's name; `None` when no such key exists any more.
    pub owner_name: Option<String>,
    /// Seconds since the Unix epoch.
    pub created: u64,
    /// Current objects (the latest version of each key, delete markers
    /// not counted) and their bytes.
    pub objects: u64,
    pub bytes: u64,
    /// Older versions kept by versioning, and their bytes.
    pub noncurrent_versions: u64,
    pub noncurrent_bytes: u64,
}

/// Every bucket with its owner and what it holds (each counted by the
/// back end in one pass: see `MetadataFacade::bucket_usage`).
pub async fn list(storage: &Storage) -> Result<Vec<BucketSummary>, S3Error> {
    let names = key_names(storage).await?;
    let mut out = Vec::new();
    for bucket in storage.all_buckets().await? {
        match summary(storage, bucket, &names).await {
            Ok(summary) => out.push(summary),
            // Deleted since the listing named it: no longer one to show.
            Err(err) if err.code == Code::NoSuchBucket.as_str() => {}
            Err(err) => return Err(err),
        }
    }
    Ok(out)
}

/// Gives `bucket` to the key `access_key`. The bucket's ACL becomes the
/// new owner's private one (grants made by the old owner go with it);
/// its policy and other settings stay as they are.
pub async fn set_owner(
    storage: &Storage,
    bucket: &str,
    access_key: &str,
) -> Result<BucketSummary, S3Error> {
    let names = key_names(storage).await?;
    if !names.iter().any(|(key, _)| key == access_key) {
        return Err(super::no_such_key(access_key));
    }
    let before = facts(storage, bucket).await?;
    let (from, to) = (Owner::new(&before.owner), Owner::new(access_key));
    if from != to {
        storage
            .set_bucket_owner(BucketRef::new(&from, bucket), &to)
            .await
            .map_err(|err| changed_meanwhile(err, bucket))?;
        storage
            .put_bucket_document(BucketRef::new(&to, bucket), BucketDocument::Acl, None)
            .await?;
    }
    tracing::info!(bucket, from = %from.access_key, to = %to.access_key, "bucket owner set");
    summary(storage, facts(storage, bucket).await?, &names).await
}

/// Deletes `bucket`; with `force`, first every version, delete marker and
/// upload in it. A write racing the emptying can still leave it not
/// empty: `409 BucketNotEmpty`, and the command can be run again.
pub async fn delete(storage: &Storage, bucket: &str, force: bool) -> Result<(), S3Error> {
    let owner = Owner::new(facts(storage, bucket).await?.owner);
    if force {
        empty(storage, &owner, bucket).await?;
    }
    storage
        .delete_bucket(BucketRef::new(&owner, bucket))
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    tracing::info!(bucket, force, "bucket deleted");
    Ok(())
}

/// Removes every version (and delete marker), then every upload. Each
/// round lists from the start, since what it deleted is gone.
async fn empty(storage: &Storage, owner: &Owner, bucket: &str) -> Result<(), S3Error> {
    let named = |err: StorageError| S3Error::from(err).naming(bucket, None);
    let every_version = VersionListQuery {
        max_keys: PAGE,
        ..VersionListQuery::default()
    };
    loop {
        let page = storage
            .list_versions(BucketRef::new(owner, bucket), &every_version)
            .await
            .map_err(named)?;
        if page.entries.is_empty() {
            break;
        }
        for entry in page.entries {
            storage
                .delete_version(
                    BucketRef::new(owner, bucket).object(&entry.key),
                    &entry.version_id,
                )
                .await
                .map_err(named)?;
        }
    }
    let every_upload = UploadListQuery {
        max_uploads: PAGE,
        ..UploadListQuery::default()
    };
    loop {
        let page = storage
            .list_multipart_uploads(BucketRef::new(owner, bucket), &every_upload)
            .await
            .map_err(named)?;
        if page.uploads.is_empty() {
            return Ok(());
        }
        for upload in page.uploads {
            match storage
                .abort_multipart_upload(
                    BucketRef::new(owner, bucket)
                        .object(&upload.key)
                        .upload(&upload.upload_id),
                )
                .await
            {
                Ok(()) | Err(StorageError::NoSuchUpload) => {}
                Err(err) => return Err(named(err)),
            }
        }
    }
}

async fn summary(
    storage: &Storage,
    bucket: BucketInfo,
    names: &[(String, String)],
) -> Result<BucketSummary, S3Error> {
    let owner = Owner::new(&bucket.owner);
    let usage = storage
        .bucket_usage(BucketRef::new(&owner, &bucket.name))
        .await
        .map_err(|err| S3Error::from(err).naming(&bucket.name, None))?;
    Ok(BucketSummary {
        owner_name: names
            .iter()
            .find(|(key, _)| *key == bucket.owner)
            .map(|(_, name)| name.clone()),
        created: bucket
            .created
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs()),
        objects: usage.objects,
        bytes: usage.bytes,
        noncurrent_versions: usage.noncurrent_versions,
        noncurrent_bytes: usage.noncurrent_bytes,
        owner: bucket.owner,
        name: bucket.name,
    })
}

/// Every key's access key id and name.
async fn key_names(storage: &Storage) -> Result<Vec<(String, String)>, S3Error> {
    Ok(storage
        .list_credentials()
        .await?
        .into_iter()
        .map(|credential| (credential.access_key, credential.name))
        .collect())
}

async fn facts(storage: &Storage, bucket: &str) -> Result<BucketInfo, S3Error> {
    storage
        .bucket_facts(&Namespace::Shared, bucket)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

/// The bucket changed owner between reading it and handing it on.
fn changed_meanwhile(err: StorageError, bucket: &str) -> S3Error {
    match err {
        StorageError::PreconditionFailed => S3Error::new(
            Code::OperationAborted,
            "The bucket changed owner meanwhile; run the command again.",
        ),
        other => S3Error::from(other).naming(bucket, None),
    }
}
