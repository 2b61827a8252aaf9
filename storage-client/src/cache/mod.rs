//! The one cache layer between the facade and a back end's metadata
//! roles, put in front of them by [`crate::metadata::CachedMetadata`] (a
//! decorator implementing every role), for the answers every request
//! needs:
//!
//! - credentials by access key, and the set of access keys that exist
//!   (see [`access_keys`]), so unknown keys cost no lookup each;
//! - bucket facts by name, loaded without an identity: the gateway
//!   decides on them for each caller, so one caller's refusal is never
//!   another's answer;
//! - bucket documents by bucket and kind, loaded the same way;
//! - key lookups by owner and object: concurrent lookups of one object
//!   share a single OM call, and the result is kept
//!   afterwards only if `key_ttl` is non-zero, so by default every lookup
//!   that starts after a write sees it (S3's read-after-write).
//!
//! Credentials, buckets and bucket documents are kept for `metadata_ttl`, the staleness
//! bound for writes made through other replicas; this replica's own
//! writes take effect at once (see [`layer`] for how). Each cache counts
//! hits, misses (back-end loads) and evictions ([`CacheStats`]).

mod access_keys;
mod layer;
mod single_flight;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use access_keys::AccessKeys;
use layer::{Keep, Layer};

use crate::refs::ObjectName;
use crate::{BucketDocument, BucketInfo, Credential, KeyInfo, Owner, Result, StorageError};

/// Sizes and lifetimes of the caches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CacheConfig {
    /// Entries per cache (a kept lookup carrying a small object's bytes
    /// counts one more per KiB of them).
    pub capacity: u64,
    /// How long credentials and bucket info are kept; zero disables them.
    pub metadata_ttl: Duration,
    /// How long a key lookup is kept after it completes; zero means
    /// lookups are only coalesced, never served stale.
    pub key_ttl: Duration,
    /// How long the set of existing access keys is trusted to refuse an
    /// unknown key; zero asks the back end about every unknown key.
    pub unknown_key_ttl: Duration,
}

/// What one cache did since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheCounters {
    /// Answers given without a back-end call.
    pub hits: u64,
    /// Back-end loads.
    pub misses: u64,
    /// Entries dropped for capacity or age (not for a write).
    pub evictions: u64,
}

/// The counters of every cache, for `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub credentials: CacheCounters,
    /// The access-key set: hits are unknown keys refused without a lookup,
    /// misses are loads of the whole set.
    pub access_keys: CacheCounters,
    pub buckets: CacheCounters,
    pub bucket_documents: CacheCounters,
    pub lookups: CacheCounters,
}

impl CacheStats {
    /// Each cache with its name.
    pub fn by_name(&self) -> [(&'static str, CacheCounters); 5] {
        [
            ("credentials", self.credentials),
            ("access_keys", self.access_keys),
            ("buckets", self.buckets),
            ("bucket_documents", self.bucket_documents),
            ("lookups", self.lookups),
        ]
    }
}

/// Why a credential load produced no value (an absent key is not kept).
#[derive(Clone)]
enum CredentialMiss {
    Absent,
    Failed(StorageError),
}

pub(crate) struct MetadataCache {
    credentials: Layer<String, Credential, CredentialMiss>,
    access_keys: AccessKeys,
    /// Keys the back end's own secret store vouched for lately (Ozone's
    /// users' keys): not the gateway's, so their requests neither look up
    /// a credential nor wait for the next listing of [`access_keys`].
    vouched: moka::future::Cache<String, ()>,
    buckets: Layer<String, Arc<BucketInfo>, StorageError>,
    /// By bucket and kind; a bucket's writes bump the bucket's generation.
    documents: Layer<(String, BucketDocument), Option<Arc<str>>, StorageError>,
    lookups: Layer<(String, ObjectName), KeyInfo, StorageError>,
}

/// A kept lookup weighs one, plus a KiB's worth for each KiB of the bytes
/// it carries (a small object kept with its key), so a full cache holds
/// at most about as many KiB of object bytes as it holds entries.
fn lookup_weight(info: &KeyInfo) -> u32 {
    let carried: usize = info
        .locations
        .iter()
        .filter_map(|l| l.bytes_with_key.as_ref())
        .map(|d| d.0.len())
        .sum();
    u32::try_from(1 + carried / 1024).unwrap_or(u32::MAX)
}

impl MetadataCache {
    pub(crate) fn new(config: CacheConfig) -> Self {
        let metadata = Keep::for_ttl(config.metadata_ttl, Keep::Nothing);
        Self {
            credentials: Layer::new(config.capacity, metadata),
            access_keys: AccessKeys::new(config.unknown_key_ttl, config.capacity),
            vouched: moka::future::Cache::builder()
                .time_to_live(config.metadata_ttl)
                .max_capacity(config.capacity)
                .build(),
            buckets: Layer::new(config.capacity, metadata),
            documents: Layer::new(config.capacity, metadata),
            lookups: Layer::weighed(
                config.capacity,
                Keep::for_ttl(config.key_ttl, Keep::WhileLoading),
                lookup_weight,
            ),
        }
    }

    /// The credential of `access_key`: `load` asks the back end for it,
    /// `list` for every access key (see [`access_keys`]).
    pub(crate) async fn credential<L>(
        &self,
        access_key: &str,
        load: impl Future<Output = Result<Option<Credential>>>,
        list: impl FnOnce() -> L,
    ) -> Result<Option<Credential>>
    where
        L: Future<Output = Result<Vec<String>>>,
    {
        if self.vouched.contains_key(access_key)
            || !self.access_keys.may_exist(access_key, list).await
        {
            return Ok(None);
        }
        let load = async {
            match load.await {
                Ok(Some(cred)) => Ok(cred),
                Ok(None) => Err(CredentialMiss::Absent),
                Err(e) => Err(CredentialMiss::Failed(e)),
            }
        };
        match self
            .credentials
            .get(access_key, access_key.to_owned(), load)
            .await
        {
            Ok(cred) => Ok(Some(cred)),
            Err(CredentialMiss::Absent) => Ok(None),
            Err(CredentialMiss::Failed(e)) => Err(e),
        }
    }

    /// Call after this replica wrote `access_key`'s credential: whether it
    /// exists now.
    pub(crate) async fn wrote_credential(&self, access_key: &str, exists: bool) {
        self.credentials.wrote(access_key);
        self.access_keys.wrote(access_key, exists);
        self.vouched.invalidate(access_key).await;
    }

    /// Call when the back end's own secret store vouched for a request by
    /// `access_key`, a key the gateway has no credential for: until the
    /// metadata bound passes, its requests go straight to being vouched.
    pub(crate) async fn vouched(&self, access_key: &str) {
        self.vouched.insert(access_key.to_owned(), ()).await;
    }

    pub(crate) async fn bucket_facts(
        &self,
        name: &str,
        load: impl Future<Output = Result<Arc<BucketInfo>>>,
    ) -> Result<Arc<BucketInfo>> {
        self.buckets.get(name, name.to_owned(), load).await
    }

    pub(crate) fn wrote_bucket(&self, name: &str) {
        self.buckets.wrote(name);
        self.documents.wrote(name);
    }

    /// The bucket's document of `kind`, from the cache or from `load`.
    pub(crate) async fn bucket_document(
        &self,
        bucket: &str,
        kind: BucketDocument,
        load: impl Future<Output = Result<Option<Arc<str>>>>,
    ) -> Result<Option<Arc<str>>> {
        self.documents
            .get(bucket, (bucket.to_owned(), kind), load)
            .await
    }

    pub(crate) fn wrote_bucket_document(&self, bucket: &str) {
        self.documents.wrote(bucket);
    }

    /// `owner`'s lookup of `object`, shared with `owner`'s concurrent ones.
    pub(crate) async fn lookup(
        &self,
        owner: &Owner,
        object: &ObjectName,
        load: impl Future<Output = Result<KeyInfo>>,
    ) -> Result<KeyInfo> {
        let key = (owner.access_key.clone(), object.clone());
        self.lookups.get(object, key, load).await
    }

    /// Call after a write to `object` returns, whatever its outcome.
    pub(crate) fn wrote_object(&self, object: &ObjectName) {
        self.lookups.wrote(object);
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            credentials: self.credentials.counters(),
            access_keys: self.access_keys.counters(),
            buckets: self.buckets.counters(),
            bucket_documents: self.documents.counters(),
            lookups: self.lookups.counters(),
        }
    }
}

#[cfg(test)]
mod tests;
