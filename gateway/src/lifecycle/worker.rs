//! The background worker: every `lifecycle_interval` it reads each bucket's
//! lifecycle rules and applies the enabled ones, as the bucket's owner:
//! objects past their expiry are deleted, multipart uploads older than
//! `DaysAfterInitiation` aborted, noncurrent versions expired.
//!
//! Several replicas may run it against one store at once. Every step is
//! idempotent (deleting a deleted key succeeds, aborting an aborted upload
//! is `NoSuchUpload`, taken as done), and an object is looked up again just
//! before it is deleted, so one rewritten since it was listed is kept. A
//! write landing between that lookup and the delete is still lost: storage
//! has no delete-if-unchanged yet (the same gap as conditional DeleteObject
//! in docs/s3-tests.md).
//!
//! Memory is bounded: one listing page at a time, never a whole bucket.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use storage_client::{
    BucketDocument, BucketInfo, BucketRef, ListQuery, Namespace, Owner, Storage, StorageError,
    UploadListQuery,
};
use tokio::task::JoinHandle;

use super::Target;
use super::rules::{Configuration, Expiration, after_days};
use super::versions;
use crate::sse::size::client_size;

const REAL_DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Keys or uploads read per listing call: S3's own page size.
const PAGE: usize = 1000;

/// How often and on what clock the worker runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Pause between passes.
    pub interval: Duration,
    /// The length of a lifecycle day: 24 h, shorter only in tests.
    pub day: Duration,
}

/// What the worker did since the start, for `/metrics`.
#[derive(Debug, Default)]
pub struct Counters {
    pub passes: AtomicU64,
    pub expired_objects: AtomicU64,
    pub expired_versions: AtomicU64,
    pub aborted_uploads: AtomicU64,
    /// Buckets whose pass stopped on an error (retried at the next pass).
    pub failed_buckets: AtomicU64,
}

impl Counters {
    /// Objects expired, versions expired and uploads aborted so far.
    fn removed(&self) -> [u64; 3] {
        [
            self.expired_objects.load(Ordering::Relaxed),
            self.expired_versions.load(Ordering::Relaxed),
            self.aborted_uploads.load(Ordering::Relaxed),
        ]
    }
}

/// The running worker; dropping it stops it.
pub struct Worker(JoinHandle<()>);

impl Drop for Worker {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Worker {
    /// Starts passes every `schedule.interval`, the first one interval
    /// after the start. Between passes the worker holds no reference to
    /// storage, so dropping the gateway closes it at once (an embedded
    /// database can then be opened again in the same process).
    pub fn spawn(storage: &Arc<Storage>, schedule: Schedule, counters: Arc<Counters>) -> Self {
        if schedule.day != REAL_DAY {
            tracing::warn!(day = ?schedule.day, "lifecycle_day is not 1d: rules expire objects early (a test setting)");
        }
        let storage = Arc::downgrade(storage);
        Self(tokio::spawn(async move {
            loop {
                tokio::time::sleep(schedule.interval).await;
                let Some(storage) = storage.upgrade() else {
                    return;
                };
                let pass = Pass {
                    storage: &storage,
                    day: schedule.day,
                    page: PAGE,
                    counters: &counters,
                };
                pass.run(SystemTime::now()).await;
            }
        }))
    }
}

struct Pass<'a> {
    storage: &'a Storage,
    day: Duration,
    /// Keys or uploads per listing call.
    page: usize,
    counters: &'a Counters,
}

impl Pass<'_> {
    /// One pass over every bucket that has rules; a bucket that fails is
    /// logged and retried at the next pass, the others go on.
    async fn run(&self, now: SystemTime) {
        let before = self.counters.removed();
        match self.buckets().await {
            Ok(buckets) => {
                for bucket in buckets {
                    match self.bucket(&bucket, now).await {
                        // Deleted since it was listed: nothing left to do.
                        Ok(()) | Err(StorageError::NoSuchBucket) => {}
                        Err(err) => {
                            self.counters.failed_buckets.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(bucket = %bucket.name, %err, "lifecycle pass failed for a bucket");
                        }
                    }
                }
            }
            Err(err) => tracing::warn!(%err, "lifecycle pass could not list the buckets"),
        }
        let after = self.counters.removed();
        if after != before {
            tracing::info!(
                expired_objects = after[0] - before[0],
                expired_versions = after[1] - before[1],
                aborted_uploads = after[2] - before[2],
                "lifecycle pass removed what was due"
            );
        }
        self.counters.passes.fetch_add(1, Ordering::Relaxed);
    }

    /// Every bucket, a deleted key's too (its rules still apply).
    async fn buckets(&self) -> Result<Vec<BucketInfo>, StorageError> {
        self.storage.all_buckets().await
    }

    async fn bucket(&self, bucket: &BucketInfo, now: SystemTime) -> Result<(), StorageError> {
        let stored = self
            .storage
            .bucket_document(&Namespace::Shared, &bucket.name, BucketDocument::Lifecycle)
            .await?;
        let Some(stored) = stored else {
            return Ok(());
        };
        let config = Configuration::from_stored(stored.as_bytes()).map_err(|err| {
            StorageError::Internal(format!(
                "stored lifecycle rules unreadable: {}",
                err.message
            ))
        })?;
        let owner = Owner::new(bucket.owner.clone());
        for rule in config.rules.iter().filter(|rule| rule.enabled) {
            let target = Target {
                bucket: BucketRef::new(&owner, &bucket.name),
                rule,
                now,
            };
            if matches!(
                rule.expiration,
                Some(Expiration::Days(_) | Expiration::Date(_))
            ) {
                self.expire_objects(target).await?;
            }
            if let Some(days) = rule.abort_incomplete_after_days {
                self.abort_uploads(target, days).await?;
            }
            if rule.noncurrent_expiration.is_some()
                || rule.expiration == Some(Expiration::ExpiredObjectDeleteMarker)
            {
                let expired = versions::expire(self.storage, target, self.day, self.page).await?;
                self.counters
                    .expired_versions
                    .fetch_add(expired, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    async fn expire_objects(&self, target: Target<'_>) -> Result<(), StorageError> {
        let Target { bucket, rule, now } = target;
        let mut query = ListQuery {
            prefix: rule.filter.prefix.clone(),
            delimiter: None,
            start_after: None,
            max_keys: self.page,
        };
        loop {
            let page = self.storage.list_objects(bucket, &query).await?;
            for entry in &page.entries {
                let due = rule.expiry_of(entry.last_modified, self.day);
                let size = client_size(&entry.meta, entry.size, &entry.part_sizes);
                if !rule.filter.matches_listing(&entry.key, size) || due.is_none_or(|due| due > now)
                {
                    continue;
                }
                // Read again: the tags are not in the listing, and the
                // object may have been replaced since.
                let object = match self.storage.lookup(bucket.object(&entry.key)).await {
                    Ok(object) => object,
                    Err(StorageError::NoSuchKey) => continue,
                    Err(err) => return Err(err),
                };
                if object.etag != entry.etag
                    || object.last_modified != entry.last_modified
                    || !rule.filter.matches_tags(&object.tags)
                {
                    continue;
                }
                self.storage
                    .delete_object(bucket.object(&entry.key))
                    .await?;
                self.counters
                    .expired_objects
                    .fetch_add(1, Ordering::Relaxed);
                tracing::debug!(bucket = bucket.name, key = %entry.key, rule = %rule.id, "lifecycle expired an object");
            }
            match page.next_marker.filter(|_| page.is_truncated) {
                Some(next) => query.start_after = Some(next),
                None => return Ok(()),
            }
        }
    }

    async fn abort_uploads(&self, target: Target<'_>, days: u32) -> Result<(), StorageError> {
        let Target { bucket, rule, now } = target;
        let mut query = UploadListQuery {
            prefix: rule.filter.prefix.clone(),
            delimiter: None,
            key_marker: None,
            upload_id_marker: None,
            max_uploads: self.page,
        };
        loop {
            let page = self.storage.list_multipart_uploads(bucket, &query).await?;
            for upload in &page.uploads {
                if after_days(upload.initiated, days, self.day) > now {
                    continue;
                }
                let aborted = self
                    .storage
                    .abort_multipart_upload(bucket.object(&upload.key).upload(&upload.upload_id))
                    .await;
                match aborted {
                    Ok(()) => {
                        self.counters
                            .aborted_uploads
                            .fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(bucket = bucket.name, key = %upload.key, rule = %rule.id, "lifecycle aborted a multipart upload");
                    }
                    // Another replica aborted it (or the client completed
                    // it) since the listing.
                    Err(StorageError::NoSuchUpload) => {}
                    Err(err) => return Err(err),
                }
            }
            if !page.is_truncated {
                return Ok(());
            }
            query.key_marker = page.next_key_marker;
            query.upload_id_marker = page.next_upload_id_marker;
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use storage_client::{
        Credential, NewObject, NewUpload, StorageConfig, VersionListQuery, Versioning, WriteIntent,
    };

    use super::*;

    const OWNER: &str = "LIFECYCLEOWNER000001";
    /// Long enough that nothing written in a test is due before it asks.
    const DAY: Duration = Duration::from_secs(3600);
    /// Small pages, so that listings are followed across pages.
    const TEST_PAGE: usize = 4;

    async fn bucket_with_rules(
        dir: &std::path::Path,
        bucket: &str,
        rules: &str,
    ) -> (Storage, Owner) {
        let storage = Storage::open_embedded(StorageConfig::new(dir))
            .await
            .expect("open");
        storage
            .put_credential(Credential {
                name: "owner".into(),
                access_key: OWNER.into(),
                secret_key: "s".repeat(40),
                is_root: false,
            })
            .await
            .expect("key");
        let owner = Owner::new(OWNER);
        storage
            .create_bucket(BucketRef::new(&owner, bucket), "")
            .await
            .expect("bucket");
        let body = format!("<LifecycleConfiguration>{rules}</LifecycleConfiguration>");
        let config = Configuration::from_request(body.as_bytes()).expect("rules");
        storage
            .put_bucket_document(
                BucketRef::new(&owner, bucket),
                BucketDocument::Lifecycle,
                Some(config.document),
            )
            .await
            .expect("stored");
        (storage, owner)
    }

    async fn put(storage: &Storage, owner: &Owner, bucket: &str, key: &str) {
        let mut writer = storage
            .create_object(
                BucketRef::new(owner, bucket).object(key),
                WriteIntent::default(),
            )
            .await
            .expect("create");
        writer.write(Bytes::from_static(b"x")).await.expect("write");
        writer
            .commit(NewObject {
                etag: "9dd4e461268c8034f5c8564e155c67a6".into(),
                ..NewObject::default()
            })
            .await
            .expect("commit");
    }

    async fn keys(storage: &Storage, owner: &Owner, bucket: &str) -> Vec<String> {
        let query = ListQuery {
            max_keys: PAGE,
            ..ListQuery::default()
        };
        let page = storage
            .list_objects(BucketRef::new(owner, bucket), &query)
            .await
            .expect("list");
        page.entries.into_iter().map(|entry| entry.key).collect()
    }

    #[tokio::test]
    async fn two_passes_at_once_expire_every_due_object_and_fail_nothing() {
        let dir = tempfile::tempdir().expect("dir");
        let bucket = "lc-two-passes";
        let rule = "<Rule><ID>tmp</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status>\
                    <Expiration><Days>1</Days></Expiration>\
                    <AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>";
        let (storage, owner) = bucket_with_rules(dir.path(), bucket, rule).await;
        for i in 0..(TEST_PAGE * 3 + 1) {
            put(&storage, &owner, bucket, &format!("tmp/{i:05}")).await;
        }
        put(&storage, &owner, bucket, "keep").await;
        storage
            .create_multipart_upload(
                BucketRef::new(&owner, bucket).object("tmp/upload"),
                NewUpload::default(),
            )
            .await
            .expect("upload");
        let counters = Counters::default();
        let pass = Pass {
            storage: &storage,
            day: DAY,
            page: TEST_PAGE,
            counters: &counters,
        };

        // Written just now: nothing is due yet.
        pass.run(SystemTime::now()).await;
        assert_eq!(
            keys(&storage, &owner, bucket).await.len(),
            TEST_PAGE * 3 + 2
        );
        assert_eq!(counters.expired_objects.load(Ordering::Relaxed), 0);

        // Two replicas' passes over the same store at once.
        let later = SystemTime::now() + 3 * DAY;
        tokio::join!(pass.run(later), pass.run(later));
        assert_eq!(keys(&storage, &owner, bucket).await, ["keep"]);
        assert_eq!(counters.failed_buckets.load(Ordering::Relaxed), 0);
        let expired = counters.expired_objects.load(Ordering::Relaxed);
        assert!(expired >= (TEST_PAGE * 3 + 1) as u64, "{expired}");
        assert_eq!(counters.aborted_uploads.load(Ordering::Relaxed), 1);
        let uploads = storage
            .list_multipart_uploads(
                BucketRef::new(&owner, bucket),
                &UploadListQuery {
                    prefix: String::new(),
                    delimiter: None,
                    key_marker: None,
                    upload_id_marker: None,
                    max_uploads: PAGE,
                },
            )
            .await
            .expect("uploads");
        assert!(uploads.uploads.is_empty());
        assert_eq!(counters.passes.load(Ordering::Relaxed), 3);
    }

    #[tokio::test]
    async fn disabled_rules_and_rules_not_yet_due_delete_nothing() {
        let dir = tempfile::tempdir().expect("dir");
        let bucket = "lc-disabled";
        let rules = "<Rule><ID>off</ID><Prefix></Prefix><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>\
                     <Rule><ID>later</ID><Prefix></Prefix><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule>";
        let (storage, owner) = bucket_with_rules(dir.path(), bucket, rules).await;
        put(&storage, &owner, bucket, "a").await;
        let counters = Counters::default();
        let pass = Pass {
            storage: &storage,
            day: DAY,
            page: TEST_PAGE,
            counters: &counters,
        };
        pass.run(SystemTime::now() + 10 * DAY).await;
        assert_eq!(keys(&storage, &owner, bucket).await, ["a"]);
        pass.run(SystemTime::now() + 31 * DAY).await;
        assert!(keys(&storage, &owner, bucket).await.is_empty());
        assert_eq!(counters.failed_buckets.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn noncurrent_versions_and_lone_markers_expire_across_pages() {
        let dir = tempfile::tempdir().expect("dir");
        let bucket = "lc-versions";
        let rule = "<Rule><ID>v</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status>\
                    <Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>\
                    <NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>";
        let (storage, owner) = bucket_with_rules(dir.path(), bucket, rule).await;
        storage
            .put_bucket_versioning(BucketRef::new(&owner, bucket), Versioning::Enabled)
            .await
            .expect("versioning");
        // Five versions of "a" span the first two pages of TEST_PAGE.
        for _ in 0..5 {
            put(&storage, &owner, bucket, "a").await;
        }
        storage
            .delete_object(BucketRef::new(&owner, bucket).object("b"))
            .await
            .expect("lone marker");
        put(&storage, &owner, bucket, "c").await;
        let versions = || async {
            let query = VersionListQuery {
                max_keys: PAGE,
                ..VersionListQuery::default()
            };
            let page = storage
                .list_versions(BucketRef::new(&owner, bucket), &query)
                .await
                .expect("versions");
            page.entries
                .into_iter()
                .map(|entry| (entry.key, entry.is_latest))
                .collect::<Vec<_>>()
        };
        let counters = Counters::default();
        let pass = Pass {
            storage: &storage,
            day: DAY,
            page: TEST_PAGE,
            counters: &counters,
        };

        assert_eq!(versions().await.len(), 7);
        // A lone marker goes at once; no noncurrent version is due yet.
        pass.run(SystemTime::now()).await;
        assert_eq!(versions().await.len(), 6);
        assert_eq!(counters.expired_versions.load(Ordering::Relaxed), 1);
        pass.run(SystemTime::now() + 3 * DAY).await;
        let latest_only = [("a".to_owned(), true), ("c".to_owned(), true)];
        assert_eq!(versions().await, latest_only);
        assert_eq!(counters.expired_versions.load(Ordering::Relaxed), 5);
        assert_eq!(counters.failed_buckets.load(Ordering::Relaxed), 0);
    }
}
