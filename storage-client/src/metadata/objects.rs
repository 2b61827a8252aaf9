//! The objects role: lookup, write (open, allocate, commit, abort),
//! delete, tags and the listing scan.

use super::ObjectName;
use super::role::metadata_role;
use crate::{
    BlockLocation, BucketRef, DeleteCondition, Deleted, KeyInfo, ListEntry, MetaEntryChange,
    NewObject, ObjectRef, Owner, Result, Tags, WriteIntent,
};

/// One step of a range scan over a bucket, in byte order: up to `limit`
/// entries whose name starts with `prefix` and sorts strictly after
/// `after` (raw bytes, which may end in 0xFF to skip a whole prefix). The
/// primitive [`crate::listing`] and [`crate::multipart`] page on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ScanRange {
    pub bucket: String,
    pub prefix: String,
    pub after: Vec<u8>,
    pub limit: usize,
}

/// The id of an [`OpenKey`] no OM call opened: see [`OpenKey::unopened`].
pub(crate) const UNOPENED: u64 = 0;

/// An allocation that is not visible yet: the object is made by
/// `commit_object` (or, for a part, `commit_part`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OpenKey {
    /// The OM's handle for this upload (Ozone's client id).
    pub id: u64,
    pub object: ObjectName,
    /// Blocks allocated with the key, in the order to fill them, so that
    /// most objects need no separate `allocate_block` round trip.
    pub first_blocks: Vec<BlockLocation>,
    /// What the write stated when it opened the key; `commit_object` applies it.
    pub intent: WriteIntent,
}

impl OpenKey {
    /// A key the writer holds without asking the OM: an object declared
    /// small enough to be kept with its key (see
    /// [`crate::BlockLocation::bytes_with_key`]) is written by one
    /// `commit_object`, which takes its block id in the same transaction.
    /// Should it grow past that, the writer opens it for real first.
    pub(crate) fn unopened(object: ObjectName, intent: WriteIntent) -> Self {
        Self {
            id: UNOPENED,
            object,
            first_blocks: Vec::new(),
            intent,
        }
    }

    pub(crate) fn is_unopened(&self) -> bool {
        self.id == UNOPENED
    }
}

metadata_role! {
    pub(crate) trait ObjectStore {
        /// The committed object with a READ token on every block the block
        /// role serves (bytes kept with the key come with it and need none).
        async fn lookup(&self, object: ObjectRef<'_>) -> Result<KeyInfo>
            => facade, custom(cached_lookup);
        /// Starts writing `object`; nothing becomes visible until
        /// `commit_object`. A back end may refuse a failed `intent.condition`
        /// here already (`PreconditionFailed`, or `NoSuchKey` for
        /// `IfEtag`/`IfExists` when there is no object); `commit_object`
        /// checks it again in any case.
        async fn create_object(&self, owner: &Owner, object: ObjectName, intent: WriteIntent)
            -> Result<OpenKey>
            => internal, pass;
        /// One more block (READ+WRITE token) for an open key.
        async fn allocate_block(&self, owner: &Owner, open: &OpenKey) -> Result<BlockLocation>
            => internal, pass;
        /// Makes the object visible atomically with `open.intent`'s tags,
        /// replacing any previous one, if `open.intent.condition` holds
        /// (checked in the same transaction; otherwise `PreconditionFailed`,
        /// or `NoSuchKey` for `IfEtag` when there is no object, as S3
        /// answers). `blocks` are the written blocks in object order with
        /// their final lengths. The open key is consumed whatever the outcome;
        /// blocks left unused or replaced are queued for reclamation.
        async fn commit_object(
            &self,
            owner: &Owner,
            open: OpenKey,
            blocks: Vec<BlockLocation>,
            object: NewObject
        ) -> Result<KeyInfo>
            => internal, forgets_object(open.object.clone());
        /// Drops an open key; its blocks are queued for reclamation.
        async fn abort_object(&self, owner: &Owner, open: &OpenKey) -> Result<()>
            => internal, pass;
        /// Deletes the object if it meets `condition` (see
        /// [`DeleteCondition`]; the default holds for any). Idempotent:
        /// deleting a missing object succeeds (the bucket must exist). In a
        /// versioned bucket it adds a delete marker instead (see
        /// [`Deleted`]).
        async fn delete_object_if(&self, object: ObjectRef<'_>, condition: DeleteCondition)
            -> Result<Deleted>
            => facade, forgets_object(object.into());
        /// Deletes each of `keys` in the bucket as `delete_object_if` with no
        /// condition would, one after another, in as few back-end calls as
        /// the back end can give the same answers in (one transaction on
        /// the embedded store; key by key on Ozone): an outcome per key,
        /// in order. A refusal of the whole call (no such bucket, another
        /// owner's) is the call's error.
        async fn delete_objects(&self, bucket: BucketRef<'_>, keys: Vec<String>)
            -> Result<Vec<Result<Deleted>>>
            => facade, forgets_objects(keys.iter().map(|key| bucket.object(key).into()));
        /// Replaces the committed object's tag set (empty removes every tag),
        /// atomically and without changing its data, ETag or Last-Modified.
        /// `NoSuchKey` if there is no object.
        async fn put_tags(&self, object: ObjectRef<'_>, tags: Tags) -> Result<()>
            => facade, forgets_object(object.into());
        /// Changes one entry of the committed object's user metadata (see
        /// [`MetaEntryChange`]), atomically and without changing its data,
        /// ETag or Last-Modified. `NoSuchKey` if there is no object.
        async fn put_meta_entry(&self, object: ObjectRef<'_>, change: MetaEntryChange)
            -> Result<()>
            => facade, forgets_object(object.into());
        /// One step of a listing (see [`ScanRange`]).
        async fn scan_objects(&self, owner: &Owner, scan: ScanRange) -> Result<Vec<ListEntry>>
            => internal, pass;
    }
}
