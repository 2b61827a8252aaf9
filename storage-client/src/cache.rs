//! The cached OM client: a [`MetadataStore`] in front of another one.
//!
//! - Credentials are cached by access key and bucket info by name, both
//!   for `metadata_ttl` (the staleness bound for writes made through other
//!   replicas); this replica's own writes take effect at once.
//! - Key lookups are coalesced: concurrent lookups of one key by one
//!   identity share a single OM call. The result is kept afterwards only if
//!   `key_ttl` is non-zero, so by default every lookup that starts after a
//!   write sees it (S3's read-after-write).
//!
//! Invalidation uses generations rather than removal: every write bumps a
//! counter for the name it touched (after the write returns), and the
//! counter is part of every cache key. A lookup that began before the write
//! can still be in flight, but a lookup that starts after the write reads
//! the new generation and so can never join it or see its result.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;

use crate::multipart::{CompleteUpload, NewUpload, PartCommit, PartInfo, UploadInfo};
use crate::om::{MetadataStore, OpenKey};
use crate::{
    BlockLocation, BucketInfo, Credential, Identity, KeyInfo, ListEntry, NewObject, Result,
    StorageError, WriteIntent,
};

/// Sizes and lifetimes of the caches.
#[derive(Clone, Copy, Debug)]
pub struct CacheConfig {
    /// Entries per cache.
    pub capacity: u64,
    /// How long credentials and bucket info are kept; zero disables them.
    pub metadata_ttl: Duration,
    /// How long a key lookup is kept after it completes; zero (the default)
    /// means lookups are only coalesced, never served stale.
    pub key_ttl: Duration,
}

/// Hashed generation counters: a write bumps the stripe its name hashes to
/// (an unrelated name sharing the stripe just misses the cache once).
struct Generations {
    stripes: Box<[AtomicU64]>,
    hasher: RandomState,
}

impl Generations {
    const STRIPES: usize = 4096;

    fn new() -> Self {
        Self {
            stripes: (0..Self::STRIPES).map(|_| AtomicU64::new(0)).collect(),
            hasher: RandomState::new(),
        }
    }

    fn stripe(&self, name: &impl Hash) -> &AtomicU64 {
        let index = self.hasher.hash_one(name) as usize % self.stripes.len();
        &self.stripes[index]
    }

    fn current(&self, name: &impl Hash) -> u64 {
        self.stripe(name).load(Ordering::Acquire)
    }

    fn bump(&self, name: &impl Hash) {
        self.stripe(name).fetch_add(1, Ordering::AcqRel);
    }
}

/// Why a credential load produced no value.
enum CredentialMiss {
    Absent,
    Failed(StorageError),
}

/// Copies an error for one more caller of a coalesced load.
pub(crate) fn clone_error(error: &StorageError) -> StorageError {
    match error {
        StorageError::NoSuchBucket => StorageError::NoSuchBucket,
        StorageError::NoSuchKey => StorageError::NoSuchKey,
        StorageError::BucketAlreadyExists => StorageError::BucketAlreadyExists,
        StorageError::BucketAlreadyOwnedByYou => StorageError::BucketAlreadyOwnedByYou,
        StorageError::BucketNotEmpty => StorageError::BucketNotEmpty,
        StorageError::AccessDenied => StorageError::AccessDenied,
        StorageError::PreconditionFailed => StorageError::PreconditionFailed,
        StorageError::NoSuchUpload => StorageError::NoSuchUpload,
        StorageError::InvalidPart(m) => StorageError::InvalidPart(m.clone()),
        StorageError::InvalidArgument(m) => StorageError::InvalidArgument(m.clone()),
        StorageError::TokenRefused(m) => StorageError::TokenRefused(m.clone()),
        StorageError::Corrupt(m) => StorageError::Corrupt(m.clone()),
        StorageError::Unavailable(m) => StorageError::Unavailable(m.clone()),
        StorageError::Io(e) => StorageError::Io(std::io::Error::new(e.kind(), e.to_string())),
        StorageError::Internal(m) => StorageError::Internal(m.clone()),
    }
}

/// The error of a coalesced load, owned if this was its last caller.
fn unshare(error: Arc<StorageError>) -> StorageError {
    Arc::try_unwrap(error).unwrap_or_else(|shared| clone_error(&shared))
}

type LookupKey = (String, String, String, u64);

pub struct CachedOm {
    inner: Arc<dyn MetadataStore>,
    credentials: Option<Cache<(String, u64), Credential>>,
    buckets: Option<Cache<(String, u64), BucketInfo>>,
    lookups: Cache<LookupKey, KeyInfo>,
    keep_lookups: bool,
    credential_generations: Generations,
    bucket_generations: Generations,
    key_generations: Generations,
}

fn build<K, V>(capacity: u64, ttl: Duration) -> Cache<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    let builder = Cache::builder().max_capacity(capacity);
    if ttl.is_zero() {
        builder.build()
    } else {
        builder.time_to_live(ttl).build()
    }
}

impl CachedOm {
    pub fn new(inner: Arc<dyn MetadataStore>, config: CacheConfig) -> Self {
        let metadata = !config.metadata_ttl.is_zero();
        Self {
            inner,
            credentials: metadata.then(|| build(config.capacity, config.metadata_ttl)),
            buckets: metadata.then(|| build(config.capacity, config.metadata_ttl)),
            lookups: build(config.capacity, config.key_ttl),
            keep_lookups: !config.key_ttl.is_zero(),
            credential_generations: Generations::new(),
            bucket_generations: Generations::new(),
            key_generations: Generations::new(),
        }
    }
}

#[async_trait]
impl MetadataStore for CachedOm {
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let Some(cache) = &self.credentials else {
            return self.inner.credential(access_key).await;
        };
        let generation = self.credential_generations.current(&access_key);
        let load = async {
            match self.inner.credential(access_key).await {
                Ok(Some(cred)) => Ok(cred),
                Ok(None) => Err(CredentialMiss::Absent),
                Err(e) => Err(CredentialMiss::Failed(e)),
            }
        };
        match cache
            .try_get_with((access_key.to_owned(), generation), load)
            .await
        {
            Ok(cred) => Ok(Some(cred)),
            Err(miss) => match Arc::try_unwrap(miss) {
                Ok(CredentialMiss::Absent) => Ok(None),
                Ok(CredentialMiss::Failed(e)) => Err(e),
                Err(shared) => match &*shared {
                    CredentialMiss::Absent => Ok(None),
                    CredentialMiss::Failed(e) => Err(clone_error(e)),
                },
            },
        }
    }

    async fn put_credential(&self, cred: Credential) -> Result<()> {
        let access_key = cred.access_key.clone();
        let result = self.inner.put_credential(cred).await;
        self.credential_generations.bump(&access_key.as_str());
        result
    }

    async fn list_credentials(&self) -> Result<Vec<Credential>> {
        self.inner.list_credentials().await
    }

    async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        let result = self.inner.delete_credential(access_key).await;
        self.credential_generations.bump(&access_key);
        result
    }

    async fn create_bucket(&self, who: &Identity, name: &str, region: &str) -> Result<()> {
        let result = self.inner.create_bucket(who, name, region).await;
        self.bucket_generations.bump(&name);
        result
    }

    async fn bucket(&self, who: &Identity, name: &str) -> Result<BucketInfo> {
        let Some(cache) = &self.buckets else {
            return self.inner.bucket(who, name).await;
        };
        let generation = self.bucket_generations.current(&name);
        let info = cache
            .try_get_with((name.to_owned(), generation), self.inner.bucket(who, name))
            .await
            .map_err(unshare)?;
        // The entry may have been loaded by the owner: authorise every caller.
        if info.owner != who.access_key {
            return Err(StorageError::AccessDenied);
        }
        Ok(info)
    }

    async fn list_buckets(&self, who: &Identity) -> Result<Vec<BucketInfo>> {
        self.inner.list_buckets(who).await
    }

    async fn delete_bucket(&self, who: &Identity, name: &str) -> Result<()> {
        let result = self.inner.delete_bucket(who, name).await;
        self.bucket_generations.bump(&name);
        result
    }

    async fn lookup_key(&self, who: &Identity, bucket: &str, key: &str) -> Result<KeyInfo> {
        let generation = self.key_generations.current(&(bucket, key));
        let cache_key = (
            who.access_key.clone(),
            bucket.to_owned(),
            key.to_owned(),
            generation,
        );
        let result = self
            .lookups
            .try_get_with(cache_key.clone(), self.inner.lookup_key(who, bucket, key))
            .await
            .map_err(unshare);
        if !self.keep_lookups {
            self.lookups.invalidate(&cache_key).await;
        }
        result
    }

    async fn open_key(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        intent: WriteIntent,
    ) -> Result<OpenKey> {
        self.inner.open_key(who, bucket, key, intent).await
    }

    async fn issue_secret(&self, access_key: &str) -> Result<Option<String>> {
        self.inner.issue_secret(access_key).await
    }

    fn made_by_completion(&self, object: &KeyInfo, parts: &[(u16, String)]) -> bool {
        self.inner.made_by_completion(object, parts)
    }

    async fn open_part(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u16,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        self.inner
            .open_part(who, bucket, key, upload_id, number, size_hint)
            .await
    }

    async fn allocate_block(&self, who: &Identity, open: &OpenKey) -> Result<BlockLocation> {
        self.inner.allocate_block(who, open).await
    }

    async fn commit_key(
        &self,
        who: &Identity,
        open: &OpenKey,
        blocks: Vec<BlockLocation>,
        obj: NewObject,
    ) -> Result<KeyInfo> {
        let result = self.inner.commit_key(who, open, blocks, obj).await;
        self.key_generations
            .bump(&(open.bucket.as_str(), open.key.as_str()));
        result
    }

    async fn abort_key(&self, who: &Identity, open: &OpenKey) -> Result<()> {
        self.inner.abort_key(who, open).await
    }

    async fn delete_key(&self, who: &Identity, bucket: &str, key: &str) -> Result<()> {
        let result = self.inner.delete_key(who, bucket, key).await;
        self.key_generations.bump(&(bucket, key));
        result
    }

    async fn set_tags(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        let result = self.inner.set_tags(who, bucket, key, tags).await;
        self.key_generations.bump(&(bucket, key));
        result
    }

    async fn scan_keys(
        &self,
        who: &Identity,
        bucket: &str,
        prefix: &str,
        after: &[u8],
        limit: usize,
    ) -> Result<Vec<ListEntry>> {
        self.inner
            .scan_keys(who, bucket, prefix, after, limit)
            .await
    }

    async fn create_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        self.inner.create_upload(who, bucket, key, upload).await
    }

    async fn upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<UploadInfo> {
        self.inner.upload(who, bucket, key, upload_id).await
    }

    async fn commit_part(
        &self,
        who: &Identity,
        open: &OpenKey,
        upload_id: &str,
        number: u16,
        blocks: Vec<BlockLocation>,
        part: PartCommit,
    ) -> Result<PartInfo> {
        self.inner
            .commit_part(who, open, upload_id, number, blocks, part)
            .await
    }

    async fn list_parts(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        self.inner
            .list_parts(who, bucket, key, upload_id, after, limit)
            .await
    }

    async fn complete_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        let result = self
            .inner
            .complete_upload(who, bucket, key, upload_id, complete)
            .await;
        self.key_generations.bump(&(bucket, key));
        result
    }

    async fn abort_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<()> {
        self.inner.abort_upload(who, bucket, key, upload_id).await
    }

    async fn scan_uploads(
        &self,
        who: &Identity,
        bucket: &str,
        prefix: &str,
        after: &[u8],
        limit: usize,
    ) -> Result<Vec<UploadInfo>> {
        self.inner
            .scan_uploads(who, bucket, prefix, after, limit)
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    use tokio::sync::Semaphore;

    use super::*;
    use crate::embedded::{EmbeddedOm, OmSettings};
    use crate::token::KeyRing;

    /// Delegates to a real OM, but holds every key lookup until released
    /// and counts how many reached it.
    struct Gated {
        inner: EmbeddedOm,
        gate: Semaphore,
        lookups: AtomicUsize,
        arrived: tokio::sync::Notify,
    }

    #[async_trait]
    impl MetadataStore for Gated {
        async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
            self.inner.credential(access_key).await
        }
        async fn put_credential(&self, cred: Credential) -> Result<()> {
            self.inner.put_credential(cred).await
        }
        async fn list_credentials(&self) -> Result<Vec<Credential>> {
            self.inner.list_credentials().await
        }
        async fn delete_credential(&self, access_key: &str) -> Result<bool> {
            self.inner.delete_credential(access_key).await
        }
        async fn create_bucket(&self, who: &Identity, name: &str, region: &str) -> Result<()> {
            self.inner.create_bucket(who, name, region).await
        }
        async fn bucket(&self, who: &Identity, name: &str) -> Result<BucketInfo> {
            self.inner.bucket(who, name).await
        }
        async fn list_buckets(&self, who: &Identity) -> Result<Vec<BucketInfo>> {
            self.inner.list_buckets(who).await
        }
        async fn delete_bucket(&self, who: &Identity, name: &str) -> Result<()> {
            self.inner.delete_bucket(who, name).await
        }
        async fn lookup_key(&self, who: &Identity, bucket: &str, key: &str) -> Result<KeyInfo> {
            self.lookups.fetch_add(1, Ordering::SeqCst);
            self.arrived.notify_one();
            let permit = self.gate.acquire().await;
            drop(permit);
            self.inner.lookup_key(who, bucket, key).await
        }
        async fn open_key(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            intent: WriteIntent,
        ) -> Result<OpenKey> {
            self.inner.open_key(who, bucket, key, intent).await
        }
        async fn allocate_block(&self, who: &Identity, open: &OpenKey) -> Result<BlockLocation> {
            self.inner.allocate_block(who, open).await
        }
        async fn commit_key(
            &self,
            who: &Identity,
            open: &OpenKey,
            blocks: Vec<BlockLocation>,
            obj: NewObject,
        ) -> Result<KeyInfo> {
            self.inner.commit_key(who, open, blocks, obj).await
        }
        async fn abort_key(&self, who: &Identity, open: &OpenKey) -> Result<()> {
            self.inner.abort_key(who, open).await
        }
        async fn delete_key(&self, who: &Identity, bucket: &str, key: &str) -> Result<()> {
            self.inner.delete_key(who, bucket, key).await
        }
        async fn set_tags(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            tags: Vec<(String, String)>,
        ) -> Result<()> {
            self.inner.set_tags(who, bucket, key, tags).await
        }
        async fn scan_keys(
            &self,
            who: &Identity,
            bucket: &str,
            prefix: &str,
            after: &[u8],
            limit: usize,
        ) -> Result<Vec<ListEntry>> {
            self.inner
                .scan_keys(who, bucket, prefix, after, limit)
                .await
        }

        async fn create_upload(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            upload: NewUpload,
        ) -> Result<UploadInfo> {
            self.inner.create_upload(who, bucket, key, upload).await
        }
        async fn upload(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            upload_id: &str,
        ) -> Result<UploadInfo> {
            self.inner.upload(who, bucket, key, upload_id).await
        }
        async fn commit_part(
            &self,
            who: &Identity,
            open: &OpenKey,
            upload_id: &str,
            number: u16,
            blocks: Vec<BlockLocation>,
            part: PartCommit,
        ) -> Result<PartInfo> {
            self.inner
                .commit_part(who, open, upload_id, number, blocks, part)
                .await
        }
        async fn list_parts(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            upload_id: &str,
            after: u16,
            limit: usize,
        ) -> Result<Vec<PartInfo>> {
            self.inner
                .list_parts(who, bucket, key, upload_id, after, limit)
                .await
        }
        async fn complete_upload(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            upload_id: &str,
            complete: CompleteUpload,
        ) -> Result<KeyInfo> {
            self.inner
                .complete_upload(who, bucket, key, upload_id, complete)
                .await
        }
        async fn abort_upload(
            &self,
            who: &Identity,
            bucket: &str,
            key: &str,
            upload_id: &str,
        ) -> Result<()> {
            self.inner.abort_upload(who, bucket, key, upload_id).await
        }
        async fn scan_uploads(
            &self,
            who: &Identity,
            bucket: &str,
            prefix: &str,
            after: &[u8],
            limit: usize,
        ) -> Result<Vec<UploadInfo>> {
            self.inner
                .scan_uploads(who, bucket, prefix, after, limit)
                .await
        }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        gated: Arc<Gated>,
        cached: Arc<CachedOm>,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let settings = OmSettings {
            block_size: 1 << 20,
            token_lifetime: Duration::from_secs(3600),
            key_rotation: Duration::from_secs(3600),
        };
        let om = EmbeddedOm::open(
            &dir.path().join("om.redb"),
            Arc::new(KeyRing::default()),
            settings,
        )
        .unwrap();
        let gated = Arc::new(Gated {
            inner: om,
            gate: Semaphore::new(0),
            lookups: AtomicUsize::new(0),
            arrived: tokio::sync::Notify::new(),
        });
        let config = CacheConfig {
            capacity: 100,
            metadata_ttl: Duration::from_secs(60),
            key_ttl: Duration::ZERO,
        };
        let cached = Arc::new(CachedOm::new(
            Arc::clone(&gated) as Arc<dyn MetadataStore>,
            config,
        ));
        Fixture {
            _dir: dir,
            gated,
            cached,
        }
    }

    /// Commits an empty object with `etag` (no block bytes are needed for metadata).
    async fn commit(om: &CachedOm, who: &Identity, etag: &str) {
        let open = om
            .open_key(who, "b", "k", WriteIntent::default())
            .await
            .unwrap();
        let obj = NewObject {
            etag: etag.into(),
            ..Default::default()
        };
        om.commit_key(who, &open, Vec::new(), obj).await.unwrap();
    }

    fn spawn_lookup(
        cached: &Arc<CachedOm>,
        who: &Identity,
    ) -> tokio::task::JoinHandle<Result<KeyInfo>> {
        let (cached, who) = (Arc::clone(cached), who.clone());
        tokio::spawn(async move { cached.lookup_key(&who, "b", "k").await })
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_lookup_after_a_write_never_joins_an_older_lookup() {
        let f = fixture();
        let alice = Identity::new("alice");
        f.cached.create_bucket(&alice, "b", "").await.unwrap();
        commit(&f.cached, &alice, "v1").await;

        let old = spawn_lookup(&f.cached, &alice);
        f.gated.arrived.notified().await;
        commit(&f.cached, &alice, "v2").await;
        let new = spawn_lookup(&f.cached, &alice);
        // The second lookup reaches the OM itself instead of waiting on the first.
        f.gated.arrived.notified().await;
        assert_eq!(f.gated.lookups.load(Ordering::SeqCst), 2);
        f.gated.gate.add_permits(2);
        assert_eq!(new.await.unwrap().unwrap().etag, "v2");
        old.await.unwrap().unwrap();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn concurrent_lookups_share_one_call_per_identity() {
        let f = fixture();
        let (alice, bob) = (Identity::new("alice"), Identity::new("bob"));
        f.cached.create_bucket(&alice, "b", "").await.unwrap();
        commit(&f.cached, &alice, "v1").await;

        let first = spawn_lookup(&f.cached, &alice);
        f.gated.arrived.notified().await;
        let second = spawn_lookup(&f.cached, &alice);
        let other = spawn_lookup(&f.cached, &bob);
        // Bob's lookup is never coalesced with Alice's: it reaches the OM.
        f.gated.arrived.notified().await;
        // Let the second Alice lookup run until it waits on the first.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        f.gated.gate.add_permits(10);
        assert_eq!(first.await.unwrap().unwrap().etag, "v1");
        assert_eq!(second.await.unwrap().unwrap().etag, "v1");
        assert!(matches!(
            other.await.unwrap(),
            Err(StorageError::AccessDenied)
        ));
        assert_eq!(f.gated.lookups.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn lookups_are_not_kept_by_default() {
        let f = fixture();
        let alice = Identity::new("alice");
        f.cached.create_bucket(&alice, "b", "").await.unwrap();
        commit(&f.cached, &alice, "v1").await;
        f.gated.gate.add_permits(10);
        f.cached.lookup_key(&alice, "b", "k").await.unwrap();
        f.cached.lookup_key(&alice, "b", "k").await.unwrap();
        assert_eq!(f.gated.lookups.load(Ordering::SeqCst), 2);
    }
}
