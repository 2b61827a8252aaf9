//! The metadata role (Ozone's OM): buckets, keys and their block
//! locations, S3 credentials. Every bucket and object call carries the
//! caller's identity and the OM enforces ownership: a bucket belongs to the
//! access key that created it and any other identity gets `AccessDenied`.
//!
//! Implemented by the embedded back end (redb) and by the Ozone gRPC
//! client ([`crate::ozone`]); wrapped by [`crate::cache::CachedOm`].

use async_trait::async_trait;

use crate::multipart::{CompleteUpload, NewUpload, PartCommit, PartInfo, UploadInfo};
use crate::{
    BlockLocation, BucketInfo, Credential, Identity, KeyInfo, ListEntry, NewObject, Result,
    StorageError, WriteIntent,
};

/// S3's limit on key length, in UTF-8 bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// An allocation that is not visible yet: the key is created by `commit_key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenKey {
    /// The OM's handle for this upload (Ozone's client id).
    pub id: u64,
    pub bucket: String,
    pub key: String,
    /// Blocks allocated with the key, in the order to fill them, so that
    /// most objects need no separate `allocate_block` round trip.
    pub first_blocks: Vec<BlockLocation>,
    /// What the write stated when it opened the key; `commit_key` applies it.
    pub intent: WriteIntent,
}

#[async_trait]
pub trait MetadataStore: Send + Sync {
    // ---- credentials ----
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>>;
    /// A secret for the new access key `access_key` from the back end's
    /// own S3 secret store, which then knows the key too (Ozone:
    /// GetS3Secret); `None` where there is no such store and the caller
    /// makes up the secret.
    async fn issue_secret(&self, _access_key: &str) -> Result<Option<String>> {
        Ok(None)
    }
    async fn put_credential(&self, cred: Credential) -> Result<()>;
    async fn list_credentials(&self) -> Result<Vec<Credential>>;
    /// Returns false if no such key existed.
    async fn delete_credential(&self, access_key: &str) -> Result<bool>;

    // ---- buckets ----
    /// `BucketAlreadyOwnedByYou` if `who` owns it already, `BucketAlreadyExists` otherwise.
    async fn create_bucket(&self, who: &Identity, name: &str, region: &str) -> Result<()>;
    async fn bucket(&self, who: &Identity, name: &str) -> Result<BucketInfo>;
    /// Buckets owned by `who`, sorted by name.
    async fn list_buckets(&self, who: &Identity) -> Result<Vec<BucketInfo>>;
    /// `BucketNotEmpty` unless the bucket holds no key.
    async fn delete_bucket(&self, who: &Identity, name: &str) -> Result<()>;

    // ---- keys ----
    /// The committed object with a READ token on every block.
    async fn lookup_key(&self, who: &Identity, bucket: &str, key: &str) -> Result<KeyInfo>;
    /// Starts an upload; nothing becomes visible until `commit_key`. A back
    /// end may refuse a failed `intent.condition` here already
    /// (`PreconditionFailed`, or `NoSuchKey` for `IfEtag`/`IfExists` when
    /// there is no object); `commit_key` checks it again in any case.
    async fn open_key(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        intent: WriteIntent,
    ) -> Result<OpenKey>;
    /// Starts the upload of part `number` of multipart upload `upload_id`
    /// (for `bucket`/`key`), to be committed with `commit_part`. Back ends
    /// that must know the part when the upload starts (Ozone) override
    /// this; for the others a part is opened like any key. `size_hint`
    /// as in [`WriteIntent`].
    async fn open_part(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        _upload_id: &str,
        _number: u16,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        let intent = WriteIntent {
            size_hint,
            ..WriteIntent::default()
        };
        self.open_key(who, bucket, key, intent).await
    }
    /// One more block (READ+WRITE token) for an open key.
    async fn allocate_block(&self, who: &Identity, open: &OpenKey) -> Result<BlockLocation>;
    /// Makes the object visible atomically with `open.intent`'s tags,
    /// replacing any previous one, if `open.intent.condition` holds (checked in the same transaction; otherwise
    /// `PreconditionFailed`, or `NoSuchKey` for `IfEtag` when there is no
    /// object, as S3 answers). `blocks` are the written blocks in object
    /// order with their final lengths. The open key is consumed whatever
    /// the outcome; blocks left unused or replaced are queued for reclamation.
    async fn commit_key(
        &self,
        who: &Identity,
        open: &OpenKey,
        blocks: Vec<BlockLocation>,
        obj: NewObject,
    ) -> Result<KeyInfo>;
    /// Drops an open key; its blocks are queued for reclamation.
    async fn abort_key(&self, who: &Identity, open: &OpenKey) -> Result<()>;
    /// Idempotent: deleting a missing key succeeds (the bucket must exist).
    async fn delete_key(&self, who: &Identity, bucket: &str, key: &str) -> Result<()>;
    /// Replaces the committed object's tag set (empty removes every tag),
    /// atomically and without changing its data, ETag or Last-Modified.
    /// `NoSuchKey` if there is no object.
    async fn set_tags(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        tags: Vec<(String, String)>,
    ) -> Result<()>;
    /// Up to `limit` keys that start with `prefix` and sort strictly after
    /// `after` (raw UTF-8 bytes, which may end in 0xFF to skip a whole
    /// prefix), in byte order. The primitive [`crate::listing`] builds on.
    async fn scan_keys(
        &self,
        who: &Identity,
        bucket: &str,
        prefix: &str,
        after: &[u8],
        limit: usize,
    ) -> Result<Vec<ListEntry>>;

    // ---- multipart uploads ----
    /// Starts an upload under a new random upload id.
    async fn create_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload: NewUpload,
    ) -> Result<UploadInfo>;
    /// The upload, `NoSuchUpload` unless it is in progress for this key.
    async fn upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<UploadInfo>;
    /// Makes the blocks written under `open` (an open key for the upload's
    /// key) part `number` of the upload, replacing any earlier part with
    /// that number. The open key is consumed whatever the outcome; blocks
    /// left unused or replaced are queued for reclamation.
    async fn commit_part(
        &self,
        who: &Identity,
        open: &OpenKey,
        upload_id: &str,
        number: u16,
        blocks: Vec<BlockLocation>,
        part: PartCommit,
    ) -> Result<PartInfo>;
    /// Up to `limit` parts numbered above `after`, in number order.
    async fn list_parts(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>>;
    /// In one transaction: checks the upload and that each chosen part
    /// still has the given ETag (`InvalidPart` otherwise) and the write
    /// condition, then makes the chosen parts' blocks the object's blocks
    /// (no data is copied), queues every other part's blocks and the
    /// replaced object's for reclamation, and ends the upload.
    async fn complete_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
        complete: CompleteUpload,
    ) -> Result<KeyInfo>;
    /// Whether `object` is what completing an upload with `parts` (number,
    /// ETag without quotes, in object order) made: S3 answers a retried
    /// completion with that object. By default the object's recorded parts
    /// must be exactly these.
    fn made_by_completion(&self, object: &KeyInfo, parts: &[(u16, String)]) -> bool {
        !object.parts.is_empty()
            && object.parts.len() == parts.len()
            && object
                .parts
                .iter()
                .zip(parts)
                .all(|(part, (number, etag))| part.number == *number && part.etag == *etag)
    }
    /// Ends the upload and queues all its parts' blocks for reclamation.
    async fn abort_upload(
        &self,
        who: &Identity,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<()>;
    /// Up to `limit` uploads whose key starts with `prefix`, after the scan
    /// position `after` (see [`crate::multipart`]), in key then id order.
    async fn scan_uploads(
        &self,
        who: &Identity,
        bucket: &str,
        prefix: &str,
        after: &[u8],
        limit: usize,
    ) -> Result<Vec<UploadInfo>>;
}

/// S3 object-key rules every back end applies: non-empty, at most 1024 bytes.
pub fn validate_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(StorageError::InvalidArgument("the key is empty".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(StorageError::InvalidArgument(format!(
            "the key is {} bytes, longer than {MAX_KEY_BYTES}",
            key.len()
        )));
    }
    Ok(())
}
