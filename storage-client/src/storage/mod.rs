//! The facade: one struct the gateway holds, whatever the back end. It
//! calls the back end's metadata roles through the cache
//! ([`CachedMetadata`], which implements them all), so it names no cache
//! itself. The metadata calls the gateway makes as they are, the role
//! declarations make into methods here (see [`crate::metadata::role`]);
//! this file holds the ones that compose them: the writer, reads, pages
//! of listings, version ids that may be absent. It decides nothing about who may ask: the gateway has
//! decided before it calls, and names the bucket's [`Owner`] it judged
//! inside the [`BucketRef`] each bucket-scoped call takes; see
//! [`crate::metadata`] for what the back ends still check.

mod versions;

use std::ops::Range;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt, stream};

use crate::backend::{Backend, BackgroundTask, ClusterReport, LocalStoreReport, Reclaim};
use crate::blocks::{BlockStore, ByteStream};
use crate::cache::{CacheStats, MetadataCache};
use crate::calls::{CallSample, CallTable};
use crate::listing;
use crate::metadata::{
    CachedMetadata, CompletedBy, Metadata, MetadataFacade, OpenKey, PartName, ScanRange,
};
use crate::multipart;
use crate::refs::bucket_path;
use crate::writer::WriteSizes;
use crate::{
    BlockLocation, BucketDocument, BucketInfo, BucketRef, ChecksumAlgorithm, ClusterView,
    DeleteCondition, Deleted, DiskUsage, KeyInfo, ListPage, ListQuery, MAX_BUCKET_DOCUMENT_BYTES,
    MAX_PART_NUMBER, Namespace, ObjectRef, ObjectWriter, Owner, OzoneStorageConfig, PartInfo,
    PartListPage, PartNumber, ReclaimStats, Result, SmallBlockUsage, StorageConfig, StorageError,
    Tags, UploadListPage, UploadListQuery, UploadRef, WriteIntent,
};

pub struct Storage {
    /// The back end's metadata roles with the cache in front, and the
    /// calls the gateway makes on them as they are.
    metadata: MetadataFacade,
    keeps_versions: bool,
    completed_by: CompletedBy,
    /// The same cache, for its counters.
    cache: Arc<MetadataCache>,
    blocks: Arc<dyn BlockStore>,
    write: WriteSizes,
    reclaimer: Option<Arc<dyn Reclaim>>,
    /// Keeps the back end's background work running while the facade lives.
    _background: Option<BackgroundTask>,
    calls: Vec<Arc<CallTable>>,
    local_store: Option<Arc<dyn LocalStoreReport>>,
    cluster: Option<Arc<dyn ClusterReport>>,
}

/// The metadata calls the gateway makes as they are (see
/// [`MetadataFacade`]): `storage.lookup(object)` and the like.
impl std::ops::Deref for Storage {
    type Target = MetadataFacade;

    fn deref(&self) -> &MetadataFacade {
        &self.metadata
    }
}

impl Storage {
    /// Opens (creating if needed) the embedded back end under `config.data_dir`.
    pub async fn open_embedded(config: StorageConfig) -> Result<Self> {
        Ok(Self::new(crate::embedded::open(config).await?))
    }

    /// Connects to a real Ozone cluster. Fails (`Unavailable`) when no OM
    /// answers; creates the gateway's system buckets on first use.
    pub async fn open_ozone(config: OzoneStorageConfig) -> Result<Self> {
        Ok(Self::new(crate::ozone::open(config).await?))
    }

    fn new(backend: Backend) -> Self {
        let cache = Arc::new(MetadataCache::new(backend.cache));
        Self {
            metadata: MetadataFacade::new(Arc::new(CachedMetadata::new(
                backend.metadata,
                Arc::clone(&cache),
            ))),
            keeps_versions: backend.keeps_versions,
            completed_by: backend.completed_by,
            cache,
            blocks: backend.blocks,
            write: backend.write,
            reclaimer: backend.reclaimer,
            _background: backend.background,
            calls: backend.calls,
            cluster: backend.cluster,
            local_store: backend.local_store,
        }
    }

    /// The back end's metadata roles with the cache in front.
    fn om(&self) -> &Arc<dyn Metadata> {
        self.metadata.roles()
    }

    /// Runs one reclamation pass now (the background task runs one every
    /// `reclaim_interval`). Back ends that reclaim on their own report zeros.
    pub async fn reclaim_now(&self) -> Result<ReclaimStats> {
        match &self.reclaimer {
            Some(reclaimer) => reclaimer.run_once().await,
            None => Ok(ReclaimStats::default()),
        }
    }

    /// Latency and failures of each kind of back-end call made since the
    /// start (Ozone's OM, datanode and Ratis calls; none on embedded).
    pub fn call_stats(&self) -> Vec<CallSample> {
        self.calls
            .iter()
            .flat_map(|table| table.samples())
            .collect()
    }

    /// What the block role keeps in its small-block store (embedded only;
    /// the rest of the blocks are files under the data dir).
    pub fn small_block_usage(&self) -> Option<SmallBlockUsage> {
        self.local_store.as_ref().map(|s| s.small_block_usage())
    }

    /// The size and free space of the file system under the data dir
    /// (embedded only: Ozone's datanodes keep their own disks).
    pub fn disk_usage(&self) -> Option<DiskUsage> {
        self.local_store.as_ref().and_then(|s| s.disk_usage())
    }

    /// What the gateway sees of the cluster it stores in (Ozone only).
    pub fn cluster_view(&self) -> Option<ClusterView> {
        self.cluster.as_ref().map(|c| c.cluster_view())
    }

    /// What the caches did since the start.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    // ---- buckets ----

    /// The facts of the bucket `name` in `namespace` (the asker's), whoever
    /// asks: for the gateway's authorisation, which decides per request on
    /// identity-free facts (its owner, ACL and policy), then calls naming
    /// the owner it judged.
    pub async fn bucket_facts(&self, namespace: &Namespace, name: &str) -> Result<BucketInfo> {
        let path = bucket_path(namespace, name);
        Ok(BucketInfo::clone(&*self.om().bucket(&path).await?))
    }

    /// Buckets owned by `owner`, sorted by name.
    pub async fn list_buckets(&self, owner: &Owner) -> Result<Vec<BucketInfo>> {
        self.om().list_buckets(Some(owner)).await
    }

    /// Every bucket, whoever owns it, sorted by name: for the admin API
    /// and the lifecycle worker (a deleted key's buckets included).
    pub async fn all_buckets(&self) -> Result<Vec<BucketInfo>> {
        self.om().list_buckets(None).await
    }

    // ---- bucket documents (see `BucketDocument`) ----

    /// The bucket's document of `kind`, whoever asks (cached like the
    /// bucket's facts): the caller decides owner may see it.
    /// `NoSuchBucket` if there is no bucket.
    pub async fn bucket_document(
        &self,
        namespace: &Namespace,
        bucket: &str,
        kind: BucketDocument,
    ) -> Result<Option<Arc<str>>> {
        let path = bucket_path(namespace, bucket);
        // A back end that needs the facts to load it has them cached too.
        self.om().bucket_document(&path, kind, &**self.om()).await
    }

    /// Stores (`Some`) or removes (`None`) the bucket's document of `kind`.
    pub async fn put_bucket_document(
        &self,
        bucket: BucketRef<'_>,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        if let Some(text) = &document
            && text.len() > MAX_BUCKET_DOCUMENT_BYTES
        {
            return Err(StorageError::InvalidArgument(format!(
                "the {} document is {} bytes, more than {MAX_BUCKET_DOCUMENT_BYTES}",
                kind.stored_name(),
                text.len()
            )));
        }
        let facts = self.om().bucket(&bucket.path()).await?;
        self.om()
            .put_bucket_document(bucket.owner, &facts, kind, document)
            .await
    }

    // ---- objects ----

    /// The object if completing an upload with `parts` (number, ETag
    /// without quotes) made it, for answering a retried
    /// CompleteMultipartUpload as S3 does.
    pub async fn completed_by(
        &self,
        object: ObjectRef<'_>,
        parts: &[(u16, String)],
    ) -> Option<KeyInfo> {
        let found = self.lookup(object).await.ok()?;
        (self.completed_by)(&found, parts).then_some(found)
    }

    /// Streams `range` of a looked-up object. The caller's authority is the
    /// block tokens inside `info` (or, for bytes kept with the key, the
    /// lookup that returned them), so `_owner` is not consulted again.
    pub async fn read(
        &self,
        _owner: &Owner,
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
        let head = read_block(&*self.blocks, &first, first_range).await?;
        let blocks = Arc::clone(&self.blocks);
        let rest = stream::iter(parts.collect::<Vec<_>>())
            .then(move |(location, range)| {
                let blocks = Arc::clone(&blocks);
                async move { read_block(&*blocks, &location, range).await }
            })
            .try_flatten();
        Ok(Box::pin(head.chain(rest)))
    }

    /// Starts writing an object; `intent` is what the client stated up
    /// front (condition, tags, declared size). A failed condition may be
    /// refused here already, before any byte is sent.
    pub async fn create_object(
        &self,
        object: ObjectRef<'_>,
        intent: WriteIntent,
    ) -> Result<ObjectWriter> {
        let owner = object.owner();
        let with_key_max = self.write.with_key_max as u64;
        if with_key_max > 0 && intent.size_hint.is_some_and(|size| size <= with_key_max) {
            // Kept with its key: one metadata commit is the whole write.
            return Ok(self.writer(owner, OpenKey::unopened(object.into(), intent)));
        }
        let open = self
            .om()
            .create_object(owner, object.into(), intent)
            .await?;
        Ok(self.writer(owner, open))
    }

    /// Starts writing part `number` of the upload; commit it with
    /// [`ObjectWriter::commit_part`] for that upload and number. Some back
    /// ends (Ozone) must know the part before its first byte; `size_hint`
    /// is the part's declared size, as in [`WriteIntent`].
    pub async fn create_part(
        &self,
        upload: UploadRef<'_>,
        number: PartNumber,
        size_hint: Option<u64>,
    ) -> Result<ObjectWriter> {
        let owner = upload.object.owner();
        let part = PartName {
            upload: upload.into(),
            number: number.get(),
        };
        let open = self.om().create_part(owner, &part, size_hint).await?;
        Ok(self.writer(owner, open))
    }

    fn writer(&self, owner: &Owner, open: OpenKey) -> ObjectWriter {
        ObjectWriter::new(
            Arc::clone(self.om()),
            Arc::clone(&self.blocks),
            owner.clone(),
            open,
            self.write,
        )
    }

    /// [`Self::delete_object_if`] whatever the object is.
    pub async fn delete_object(&self, object: ObjectRef<'_>) -> Result<Deleted> {
        self.delete_object_if(object, DeleteCondition::default())
            .await
    }

    /// Removes every tag of the object. `NoSuchKey` if there is no object.
    pub async fn delete_tags(&self, object: ObjectRef<'_>) -> Result<()> {
        self.put_tags(object, Tags::new()).await
    }

    pub async fn list_objects(&self, bucket: BucketRef<'_>, query: &ListQuery) -> Result<ListPage> {
        let scan = |after: Vec<u8>, limit| {
            self.om().scan_objects(
                bucket.owner,
                scan_range(&bucket.path(), &query.prefix, after, limit),
            )
        };
        listing::list_page(scan, query).await
    }

    // ---- multipart uploads ----

    /// The checksum algorithm every part of the upload is checksummed
    /// with, which is all UploadPart needs of the upload. `NoSuchUpload`
    /// unless it is in progress for this key, here or, on a back end that
    /// checks it there anyway (Ozone), from [`Storage::create_part`].
    pub async fn part_checksum_algorithm(
        &self,
        upload: UploadRef<'_>,
    ) -> Result<Option<ChecksumAlgorithm>> {
        Ok(self.part_settings(upload).await?.checksum_algorithm)
    }

    /// Up to `max_parts` parts numbered above `after` (0: from the first).
    pub async fn list_parts(
        &self,
        upload: UploadRef<'_>,
        after: u16,
        max_parts: usize,
    ) -> Result<PartListPage> {
        let owner = upload.object.owner();
        let mut parts = self
            .om()
            .list_parts(owner, &upload.into(), after, max_parts + 1)
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
    pub async fn all_parts(&self, upload: UploadRef<'_>) -> Result<Vec<PartInfo>> {
        let owner = upload.object.owner();
        self.om()
            .list_parts(owner, &upload.into(), 0, usize::from(MAX_PART_NUMBER))
            .await
    }

    pub async fn list_multipart_uploads(
        &self,
        bucket: BucketRef<'_>,
        query: &UploadListQuery,
    ) -> Result<UploadListPage> {
        let scan = |after: Vec<u8>, limit| {
            self.om().scan_multipart_uploads(
                bucket.owner,
                scan_range(&bucket.path(), &query.prefix, after, limit),
            )
        };
        multipart::list_uploads(scan, query).await
    }
}

fn scan_range(bucket: &str, prefix: &str, after: Vec<u8>, limit: usize) -> ScanRange {
    ScanRange {
        bucket: bucket.to_owned(),
        prefix: prefix.to_owned(),
        after,
        limit,
    }
}

#[cfg(test)]
mod tests;

/// `range` of one block: from the bytes kept with its key if the lookup
/// returned them, else from the block role.
async fn read_block(
    blocks: &dyn BlockStore,
    location: &BlockLocation,
    range: Range<u64>,
) -> Result<ByteStream> {
    if let Some(data) = &location.bytes_with_key {
        let (start, end) = (range.start as usize, range.end as usize);
        if end > data.0.len() {
            return Err(StorageError::Corrupt(format!(
                "block {}/{} kept with its key holds {} bytes, not {end}",
                location.block.container,
                location.block.local,
                data.0.len()
            )));
        }
        return Ok(Box::pin(stream::once(std::future::ready(Ok(data
            .0
            .slice(start..end))))));
    }
    blocks.read(location, range).await
}
