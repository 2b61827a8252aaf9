//! The facade: one struct the gateway holds, whatever the back end.

use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::{Stream, StreamExt, TryStreamExt, stream};

use crate::cache::{CacheConfig, CachedOm};
use crate::dn::BlockStore;
use crate::embedded::{
    BackgroundTask, EmbeddedDn, EmbeddedOm, OmSettings, ReclaimStats, Reclaimer, blocking,
};
use crate::listing::{self, KeyScan};
use crate::multipart::{self, UploadScan};
use crate::om::{MetadataStore, OpenKey};
use crate::ozone::dn_client::{DnClient, DnConfig};
use crate::ozone::om_client::{OmClient, OmConfig};
use crate::ozone::ratis_client::{RatisClient, RatisConfig};
use crate::ozone::{OzoneBlocks, OzoneMetadata};
use crate::token::KeyRing;
use crate::{
    BucketInfo, CompleteUpload, Credential, Identity, KeyInfo, ListEntry, ListPage, ListQuery,
    NewUpload, ObjectWriter, PartInfo, PartListPage, Result, StorageError, UploadInfo,
    UploadListPage, UploadListQuery, WriteIntent, private_files,
};

/// Object bytes as they stream out of the block role, already verified.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes>> + Send>>;

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Back-end selection and its tunables. Build it with
/// `StorageConfig { data_dir, ..Default::default() }` or [`StorageConfig::new`].
#[derive(Clone, Debug)]
pub struct StorageConfig {
    pub data_dir: PathBuf,
    /// Bytes per block; a larger object spans several. A multiple of `chunk_size`.
    pub block_size: u64,
    /// Bytes buffered per upload before they go to the block role. A
    /// multiple of `bytes_per_checksum`.
    pub chunk_size: usize,
    /// Bytes per piece of a read stream (rounded down to whole checksum windows).
    pub read_buffer: usize,
    /// Bytes covered by one stored CRC32; reads verify whole windows.
    pub bytes_per_checksum: u32,
    /// How long a block token stays valid.
    pub token_lifetime: Duration,
    /// How often the OM starts signing with a new secret key.
    pub token_key_rotation: Duration,
    /// Uploads left open longer than this are abandoned and reclaimed.
    pub open_key_expiry: Duration,
    /// Multipart uploads neither completed nor aborted within this time
    /// since they started are aborted and their parts reclaimed.
    pub multipart_upload_expiry: Duration,
    /// Pause between background reclamation passes.
    pub reclaim_interval: Duration,
    /// How long blocks of replaced or deleted objects stay on disk, so that
    /// reads that looked up the old object just before can finish.
    pub reclaim_grace: Duration,
    /// Staleness bound for credentials and bucket info changed through
    /// another replica (this replica's own writes apply at once); zero
    /// disables those caches.
    pub metadata_cache_ttl: Duration,
    /// How long a key lookup is kept after it completes. Zero (default):
    /// lookups are only coalesced, so reads always see the latest write.
    pub key_cache_ttl: Duration,
    /// Entries per cache.
    pub cache_capacity: u64,
}

impl StorageConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            ..Self::default()
        }
    }

    fn validate(&self) -> Result<()> {
        let window = self.bytes_per_checksum as usize;
        let problem = if window == 0 || self.chunk_size == 0 || self.read_buffer == 0 {
            "bytes_per_checksum, chunk_size and read_buffer must be positive"
        } else if !self.chunk_size.is_multiple_of(window) {
            "chunk_size must be a multiple of bytes_per_checksum"
        } else if self.block_size == 0 || !self.block_size.is_multiple_of(self.chunk_size as u64) {
            "block_size must be a positive multiple of chunk_size"
        } else {
            return Ok(());
        };
        Err(StorageError::InvalidArgument(problem.into()))
    }
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("./data"),
            // Ozone's default; with 5 GiB objects at most 20 blocks per key.
            block_size: 256 * MIB as u64,
            // Measured (BENCHMARKS.md): writes peak at 256 KiB-1 MiB, 4 MiB is slower; the
            // smallest peak size keeps per-upload memory low.
            chunk_size: 256 * KIB,
            // Measured (BENCHMARKS.md): 64 KiB pieces read 2x slower, 1 MiB gains nothing.
            read_buffer: 256 * KIB,
            // Ozone's default window, so checksums mean the same on both back ends.
            bytes_per_checksum: 16 * KIB as u32,
            token_lifetime: DAY,
            token_key_rotation: DAY,
            open_key_expiry: DAY,
            // What S3 lifecycle rules commonly use for AbortIncompleteMultipartUpload.
            multipart_upload_expiry: 7 * DAY,
            reclaim_interval: Duration::from_secs(60),
            reclaim_grace: Duration::from_secs(15 * 60),
            metadata_cache_ttl: Duration::from_secs(60),
            key_cache_ttl: Duration::ZERO,
            cache_capacity: 100_000,
        }
    }
}

/// The `ozone` back end: a real Apache Ozone 2.x cluster. Build it with
/// [`OzoneStorageConfig::new`] and adjust fields as needed.
#[derive(Clone, Debug)]
pub struct OzoneStorageConfig {
    /// `host:port` of every Ozone Manager's gRPC server (`ozone.om.grpc.port`).
    pub om_addresses: Vec<String>,
    /// The most bytes written per block. The OM allocates blocks of the
    /// cluster's `ozone.scm.block.size` and the writer never fills one
    /// further, so the default (Ozone's 256 MiB) suits any cluster; a
    /// smaller value cuts objects into smaller blocks.
    pub block_size: u64,
    /// Bytes per WriteChunk; a multiple of `bytes_per_checksum`.
    pub chunk_size: usize,
    /// Bytes covered by one stored CRC32.
    pub bytes_per_checksum: u32,
    /// Put in front of every bucket name on the cluster; empty (the
    /// default) keeps names as S3 clients give them, which Ozone's own S3
    /// gateway needs to see the same buckets.
    pub bucket_prefix: String,
    pub connect_timeout: Duration,
    /// Deadline of one attempt of one command at an OM or datanode.
    pub request_timeout: Duration,
    /// How long an upload may go without allocating a block before this
    /// gateway forgets it (so an upload that stays this long in one block
    /// fails at commit); Ozone expires the open key on its own.
    pub open_key_expiry: Duration,
    /// As in [`StorageConfig`].
    pub metadata_cache_ttl: Duration,
    pub key_cache_ttl: Duration,
    pub cache_capacity: u64,
}

impl OzoneStorageConfig {
    pub fn new(om_addresses: Vec<String>) -> Self {
        let defaults = StorageConfig::default();
        Self {
            om_addresses,
            block_size: defaults.block_size,
            // Each chunk is one Raft round trip and one buffer per upload:
            // Ozone's own client uses 4 MiB; 1 MiB keeps uploads lighter.
            chunk_size: MIB,
            bytes_per_checksum: defaults.bytes_per_checksum,
            bucket_prefix: String::new(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(60),
            open_key_expiry: defaults.open_key_expiry,
            metadata_cache_ttl: defaults.metadata_cache_ttl,
            key_cache_ttl: defaults.key_cache_ttl,
            cache_capacity: defaults.cache_capacity,
        }
    }
}

pub struct Storage {
    om: Arc<CachedOm>,
    dn: Arc<dyn BlockStore>,
    block_size: u64,
    chunk_size: usize,
    reclaimer: Option<Arc<Reclaimer>>,
    /// Keeps the background reclaimer running while the facade lives.
    _background: Option<BackgroundTask>,
}

/// Listing's scan primitive for one bucket, prefix and caller.
struct BucketScan<'a> {
    om: &'a CachedOm,
    who: &'a Identity,
    bucket: &'a str,
    prefix: &'a str,
}

#[async_trait]
impl KeyScan for BucketScan<'_> {
    async fn scan(&self, after: &[u8], limit: usize) -> Result<Vec<ListEntry>> {
        self.om
            .scan_keys(self.who, self.bucket, self.prefix, after, limit)
            .await
    }
}

/// ListMultipartUploads' scan primitive for one bucket, prefix and caller.
struct BucketUploads<'a> {
    om: &'a CachedOm,
    who: &'a Identity,
    bucket: &'a str,
    prefix: &'a str,
}

#[async_trait]
impl UploadScan for BucketUploads<'_> {
    async fn scan(&self, after: &[u8], limit: usize) -> Result<Vec<UploadInfo>> {
        self.om
            .scan_uploads(self.who, self.bucket, self.prefix, after, limit)
            .await
    }
}

impl Storage {
    /// Opens (creating if needed) the embedded back end under `config.data_dir`.
    pub async fn open_embedded(config: StorageConfig) -> Result<Self> {
        config.validate()?;
        let containers = config.data_dir.join("containers");
        let db_path = config.data_dir.join("om.redb");
        let (dir, containers_dir) = (config.data_dir.clone(), containers.clone());
        blocking(move || {
            private_files::ensure_private_dir(&dir)?;
            private_files::ensure_private_dir(&containers_dir)?;
            Ok(())
        })
        .await?;
        let keys = Arc::new(KeyRing::default());
        let settings = OmSettings {
            block_size: config.block_size,
            token_lifetime: config.token_lifetime,
            key_rotation: config.token_key_rotation,
        };
        let om_keys = Arc::clone(&keys);
        let data_dir = config.data_dir.clone();
        let om = Arc::new(
            blocking(move || {
                // redb would create its file with the umask's mode; it holds
                // every secret, so it starts out as an empty owner-only file
                // (which redb initialises), and an old one is narrowed.
                if db_path.exists() {
                    private_files::tighten_file(&db_path)?;
                } else {
                    private_files::private_file_options()
                        .write(true)
                        .create_new(true)
                        .open(&db_path)?;
                }
                let om = EmbeddedOm::open(&db_path, om_keys, settings)?;
                // Make the new directory entries (om.redb, containers/) durable too.
                std::fs::File::open(&data_dir)?.sync_all()?;
                Ok(om)
            })
            .await?,
        );
        // Nothing of this process is writing yet: every open key belongs to
        // a previous process and can never be committed.
        om.expire_open_keys(u64::MAX).await?;
        let dn = Arc::new(EmbeddedDn::new(
            &containers,
            keys,
            config.bytes_per_checksum,
            config.read_buffer,
        ));
        // Allocations are not durable until a commit follows them: files a
        // crash left for ids the OM will hand out again are removed here.
        let orphans = dn
            .remove_unallocated(om.first_unallocated_block().await?)
            .await?;
        if orphans > 0 {
            tracing::info!(
                blocks = orphans,
                "removed blocks of uploads lost in a crash"
            );
        }
        let reclaimer = Arc::new(Reclaimer::new(
            Arc::clone(&om),
            Arc::clone(&dn),
            config.open_key_expiry,
            config.multipart_upload_expiry,
            config.reclaim_grace,
        ));
        let background = reclaimer.spawn(config.reclaim_interval);
        let cache = CacheConfig {
            capacity: config.cache_capacity,
            metadata_ttl: config.metadata_cache_ttl,
            key_ttl: config.key_cache_ttl,
        };
        Ok(Self {
            om: Arc::new(CachedOm::new(om, cache)),
            dn,
            block_size: config.block_size,
            chunk_size: config.chunk_size,
            reclaimer: Some(reclaimer),
            _background: Some(background),
        })
    }

    /// Connects to a real Ozone cluster. Fails (`Unavailable`) when no OM
    /// answers; creates the gateway's credentials bucket on first use.
    pub async fn open_ozone(config: OzoneStorageConfig) -> Result<Self> {
        StorageConfig {
            block_size: config.block_size,
            chunk_size: config.chunk_size,
            bytes_per_checksum: config.bytes_per_checksum,
            ..StorageConfig::default()
        }
        .validate()?;
        let om_config = OmConfig {
            connect_timeout: config.connect_timeout,
            request_timeout: config.request_timeout,
            ..OmConfig::new(config.om_addresses.clone())
        };
        let metadata = OzoneMetadata::new(
            OmClient::new(&om_config)?,
            config.bucket_prefix.clone(),
            config.open_key_expiry,
            config.metadata_cache_ttl,
        );
        metadata.prepare().await?;
        let reader = DnClient::new(DnConfig {
            connect_timeout: config.connect_timeout,
            request_timeout: config.request_timeout,
        });
        let writer = RatisClient::new(RatisConfig {
            connect_timeout: config.connect_timeout,
            request_timeout: config.request_timeout,
            ..RatisConfig::default()
        });
        let blocks = OzoneBlocks::new(
            reader,
            writer,
            config.bytes_per_checksum,
            config.open_key_expiry,
        );
        let cache = CacheConfig {
            capacity: config.cache_capacity,
            metadata_ttl: config.metadata_cache_ttl,
            key_ttl: config.key_cache_ttl,
        };
        Ok(Self {
            om: Arc::new(CachedOm::new(Arc::new(metadata), cache)),
            dn: Arc::new(blocks),
            block_size: config.block_size,
            chunk_size: config.chunk_size,
            // Ozone reclaims replaced and abandoned blocks itself.
            reclaimer: None,
            _background: None,
        })
    }

    /// Runs one reclamation pass now (the background task runs one every
    /// `reclaim_interval`). Back ends that reclaim on their own report zeros.
    pub async fn reclaim_now(&self) -> Result<ReclaimStats> {
        match &self.reclaimer {
            Some(reclaimer) => reclaimer.run_once().await,
            None => Ok(ReclaimStats::default()),
        }
    }

    // ---- credentials (cached by access key; writes invalidate at once) ----

    pub async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        self.om.credential(access_key).await
    }
    /// A secret for a new access key from the back end's own secret store,
    /// if it has one (see [`MetadataStore::issue_secret`]).
    pub async fn issue_secret(&self, access_key: &str) -> Result<Option<String>> {
        self.om.issue_secret(access_key).await
    }

    pub async fn put_credential(&self, cred: Credential) -> Result<()> {
        self.om.put_credential(cred).await
    }
    pub async fn list_credentials(&self) -> Result<Vec<Credential>> {
        self.om.list_credentials().await
    }
    /// Returns false if no such key existed.
    pub async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        self.om.delete_credential(access_key).await
    }

    // ---- buckets ----

    pub async fn create_bucket(&self, who: &Identity, name: &str, region: &str) -> Result<()> {
        self.om.create_bucket(who, name, region).await
    }
    pub async fn bucket(&self, who: &Identity, name: &str) -> Result<BucketInfo> {
        self.om.bucket(who, name).await
    }
    /// Buckets owned by `who`, sorted by name.
    pub async fn list_buckets(&self, who: &Identity) -> Result<Vec<BucketInfo>> {
        self.om.list_buckets(who).await
    }
    pub async fn delete_bucket(&self, who: &Identity, name: &str) -> Result<()> {
        self.om.delete_bucket(who, name).await
    }

    // ---- objects ----

    pub async fn lookup(&self, who: &Identity, bucket: &str, key: &str) -> Result<KeyInfo> {
        self.om.lookup_key(who, bucket, key).await
    }

    /// The object under `key` if completing an upload with `parts` (number,
    /// ETag without quotes) made it, for answering a retried
    /// CompleteMultipartUpload as S3 does.
    pub async fn completed_by(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        parts: &[(u16, String)],
    ) -> Option<KeyInfo> {
        let object = self.lookup(who, bucket, key).await.ok()?;
        self.om.made_by_completion(&object, parts).then_some(object)
    }

    /// Streams `range` of a looked-up object. The caller's authority is the
    /// block tokens inside `info`, so `_who` is not consulted again.
    pub async fn read(
        &self,
        _who: &Identity,
        info: &KeyInfo,
        range: Range<u64>,
    ) -> Result<ByteStream> {
        if range.start > range.end || range.end > info.size {
            return Err(StorageError::InvalidArgument(format!(
                "range {range:?} outside an object of {} bytes",
                info.size
            )));
        }
        let mut parts = info.locations.iter().filter_map(|location| {
            let block_end = location.offset + location.length;
            let start = range.start.max(location.offset);
            let end = range.end.min(block_end);
            (start < end).then(|| {
                (
                    location.clone(),
                    start - location.offset..end - location.offset,
                )
            })
        });
        let Some((first, first_range)) = parts.next() else {
            return Ok(Box::pin(stream::empty()));
        };
        // The first block is opened now so that a refused token or a missing
        // block is an error before any byte is sent.
        let head = self.dn.read(&first, first_range).await?;
        let dn = Arc::clone(&self.dn);
        let rest = stream::iter(parts.collect::<Vec<_>>())
            .then(move |(location, range)| {
                let dn = Arc::clone(&dn);
                async move { dn.read(&location, range).await }
            })
            .try_flatten();
        Ok(Box::pin(head.chain(rest)))
    }

    /// Starts writing an object; `intent` is what the client stated up
    /// front (condition, tags, declared size). A failed condition may be
    /// refused here already, before any byte is sent.
    pub async fn create_object(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        intent: WriteIntent,
    ) -> Result<ObjectWriter> {
        let open = self.om.open_key(who, bucket, key, intent).await?;
        Ok(self.writer_for(who, open))
    }

    /// Starts writing part `number` of multipart upload `upload_id`; commit
    /// it with [`ObjectWriter::commit_part`] for that upload and number.
    /// Some back ends (Ozone) must know the part before its first byte;
    /// `size_hint` is the part's declared size, as in [`WriteIntent`].
    pub async fn create_part(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u16,
        size_hint: Option<u64>,
    ) -> Result<ObjectWriter> {
        let open = self
            .om
            .open_part(who, bucket, key, upload_id, number, size_hint)
            .await?;
        Ok(self.writer_for(who, open))
    }

    fn writer_for(&self, who: &Identity, open: OpenKey) -> ObjectWriter {
        ObjectWriter::new(
            Arc::clone(&self.om) as Arc<dyn MetadataStore>,
            Arc::clone(&self.dn),
            who.clone(),
            open,
            self.block_size,
            self.chunk_size,
        )
    }

    /// Idempotent: deleting a missing key succeeds.
    pub async fn delete_object(&self, who: &Identity, bucket: &str, key: &str) -> Result<()> {
        self.om.delete_key(who, bucket, key).await
    }

    /// Replaces the object's tag set; its data, ETag and Last-Modified stay.
    /// `NoSuchKey` if there is no object.
    pub async fn put_tags(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        self.om.set_tags(who, bucket, key, tags).await
    }

    /// Removes every tag of the object. `NoSuchKey` if there is no object.
    pub async fn delete_tags(&self, who: &Identity, bucket: &str, key: &str) -> Result<()> {
        self.om.set_tags(who, bucket, key, Vec::new()).await
    }

    pub async fn list_objects(
        &self,
        who: &Identity,
        bucket: &str,
        query: &ListQuery,
    ) -> Result<ListPage> {
        let scan = BucketScan {
            om: &self.om,
            who,
            bucket,
            prefix: &query.prefix,
        };
        listing::list_page(&scan, query).await
    }

    // ---- multipart uploads ----

    /// Starts a multipart upload; parts are written with [`Storage::create_part`]
    /// and [`ObjectWriter::commit_part`].
    pub async fn create_multipart_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        self.om.create_upload(who, bucket, key, upload).await
    }

    /// `NoSuchUpload` unless the upload is in progress for this key.
    pub async fn multipart_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<UploadInfo> {
        self.om.upload(who, bucket, key, upload_id).await
    }

    /// Up to `max_parts` parts numbered above `after`.
    pub async fn list_parts(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        after: u16,
        max_parts: usize,
    ) -> Result<PartListPage> {
        let mut parts = self
            .om
            .list_parts(who, bucket, key, upload_id, after, max_parts + 1)
            .await?;
        let is_truncated = parts.len() > max_parts;
        parts.truncate(max_parts);
        Ok(PartListPage {
            next_marker: parts.last().filter(|_| is_truncated).map(|p| p.number),
            parts,
            is_truncated,
        })
    }

    /// Every stored part of the upload, in number order.
    pub async fn all_parts(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<Vec<PartInfo>> {
        let limit = usize::from(crate::multipart::MAX_PART_NUMBER);
        self.om
            .list_parts(who, bucket, key, upload_id, 0, limit)
            .await
    }

    /// Makes the chosen parts the object, atomically and without copying
    /// data (see [`MetadataStore::complete_upload`]).
    pub async fn complete_multipart_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        self.om
            .complete_upload(who, bucket, key, upload_id, complete)
            .await
    }

    pub async fn abort_multipart_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<()> {
        self.om.abort_upload(who, bucket, key, upload_id).await
    }

    pub async fn list_multipart_uploads(
        &self,
        who: &Identity,
        bucket: &str,
        query: &UploadListQuery,
    ) -> Result<UploadListPage> {
        let scan = BucketUploads {
            om: &self.om,
            who,
            bucket,
            prefix: &query.prefix,
        };
        multipart::list_uploads(&scan, query).await
    }
}
