//! Plain data that crosses the facade: no behaviour, no I/O.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;

/// An object's tag set: key/value pairs in the order they were given
/// (S3's limits on them are the gateway's to apply). A plain vector, as
/// storage keeps it and returns it, under one name wherever tags travel.
pub type Tags = Vec<(String, String)>;

/// Where an access key's bucket names live: S3's one shared namespace,
/// or an Ozone tenant's volume (`ozone tenant create`), whose `b` is not
/// the shared `b` and which no other tenant's key can name. Decided by
/// the back end when it vouches for a key (see `Storage::vouch`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Namespace {
    /// Every gateway key and every Ozone user outside a tenant (Ozone's
    /// volume `s3v`).
    #[default]
    Shared,
    /// The buckets of an Ozone tenant, in this volume.
    Tenant(Arc<str>),
}

/// The access key that owns the buckets a call acts on: the owner of
/// the bucket the gateway's decision judged (for `create_bucket`, the key
/// the new bucket will belong to). Not who asks: storage never decides
/// that. The back end acts under this name (it owns what the call
/// writes; on Ozone it is the OM user the call is signed as) and, where
/// it has transactions, requires the bucket to still have this owner.
/// Its [`Namespace`] is the one the bucket was found in (a tenant's
/// buckets are only ever reached by the tenant's own keys).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    /// The owning S3 access key id.
    pub access_key: String,
    pub namespace: Namespace,
}

impl Owner {
    /// An owner in S3's shared namespace.
    pub fn new(access_key: impl Into<String>) -> Self {
        Self::in_namespace(access_key, Namespace::Shared)
    }

    pub fn in_namespace(access_key: impl Into<String>, namespace: Namespace) -> Self {
        Self {
            access_key: access_key.into(),
            namespace,
        }
    }
}

/// An S3 access key as the OM stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    /// Human-readable name, e.g. "root" or "alice"; shown as the owner's display name.
    pub name: String,
    pub access_key: String,
    pub secret_key: String,
    /// Root keys may manage other keys through the admin API.
    pub is_root: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BucketInfo {
    pub name: String,
    /// Access key id of the key that created the bucket.
    pub owner: String,
    pub created: SystemTime,
    /// The LocationConstraint given at creation (empty for us-east-1).
    pub region: String,
}

/// System and user metadata stored with an object and returned on GET/HEAD.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectMeta {
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub content_disposition: Option<String>,
    pub content_language: Option<String>,
    pub cache_control: Option<String>,
    pub expires: Option<String>,
    /// `x-amz-meta-*` without the prefix, names lower-cased.
    pub user: BTreeMap<String, String>,
}

/// An object checksum as S3 reports it (`x-amz-checksum-<algorithm>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectChecksum {
    pub algorithm: ChecksumAlgorithm,
    /// Base64 value, with a `-N` suffix for composite multipart checksums.
    pub value: String,
    pub kind: ChecksumType,
}

/// The additional checksum algorithms S3 supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChecksumAlgorithm {
    Crc32,
    Crc32c,
    Crc64Nvme,
    Sha1,
    Sha256,
}

impl ChecksumAlgorithm {
    pub const ALL: [Self; 5] = [
        Self::Crc32,
        Self::Crc32c,
        Self::Crc64Nvme,
        Self::Sha1,
        Self::Sha256,
    ];

    /// Parses the name as S3 spells it anywhere (`CRC32`, `crc64nvme`,
    /// ...), case-insensitively.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|alg| alg.name().eq_ignore_ascii_case(name))
    }

    /// The lower-case name: crc32, crc32c, crc64nvme, sha1, sha256.
    pub fn name(self) -> &'static str {
        match self {
            Self::Crc32 => "crc32",
            Self::Crc32c => "crc32c",
            Self::Crc64Nvme => "crc64nvme",
            Self::Sha1 => "sha1",
            Self::Sha256 => "sha256",
        }
    }
}

/// How a multipart object's checksum covers it: S3's `x-amz-checksum-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChecksumType {
    /// The checksum of the part checksums, with a `-N` suffix.
    Composite,
    /// The checksum of every byte of the object.
    FullObject,
}

impl ChecksumType {
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Composite, Self::FullObject]
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// `COMPOSITE` or `FULL_OBJECT`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Composite => "COMPOSITE",
            Self::FullObject => "FULL_OBJECT",
        }
    }
}

macro_rules! named {
    ($($name:ident),*) => {$(
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}

named!(ChecksumAlgorithm, ChecksumType);

/// An Ozone-compatible block token: identifier bytes and HMAC password
/// (issued and checked by [`crate::token`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockToken {
    pub identifier: Vec<u8>,
    pub password: Vec<u8>,
    pub kind: String,
    pub service: String,
}

/// The identity of one block: the container that holds it and its id there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId {
    pub container: u64,
    pub local: u64,
}

/// Where one slice of an object lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockLocation {
    pub block: BlockId,
    /// Offset of this block's first byte within the object.
    pub offset: u64,
    pub length: u64,
    /// Datanode addresses that hold a replica, preferred first.
    pub datanodes: Vec<String>,
    /// Token issued by the OM for this block; the DN refuses a request without it.
    pub token: Option<BlockToken>,
    /// The version of the block a replica must have reached to serve it
    /// (Ozone's block commit sequence id); 0 where the back end keeps none.
    pub commit_sequence_id: u64,
    /// The datanodes holding a replica with their read endpoints, preferred
    /// first; empty where `datanodes` alone addresses the replicas.
    pub replicas: Vec<Replica>,
    /// The replication group writes to the block go through (Ozone's Raft
    /// pipeline); `None` where the back end writes replicas directly.
    pub write_group: Option<WriteGroup>,
    /// The block's bytes where the metadata service keeps them with the
    /// key (the embedded back end's small objects), verified against their
    /// checksums as it read them: served from here, with no block read.
    pub bytes_with_key: Option<BytesWithKey>,
}

/// A small block's bytes as the metadata service keeps them with its key.
/// Its `Debug` shows only the length: object bytes never reach a log.
#[derive(Clone, PartialEq, Eq)]
pub struct BytesWithKey(pub Bytes);

impl std::fmt::Debug for BytesWithKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BytesWithKey({} bytes)", self.0.len())
    }
}

/// One datanode as a distributed back end addresses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replica {
    /// The datanode's id, which every command to it must name.
    pub id: String,
    /// `host:port` of the service the command goes to.
    pub address: String,
}

/// A replication group: a consensus group whose leader orders the writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteGroup {
    pub id: uuid::Uuid,
    /// The members with their write endpoints, the leader first.
    pub members: Vec<Replica>,
    /// Every member seals a block with the write of its last chunk, in one
    /// call (Ozone datanodes of wire version 2 and later).
    pub seals_with_last_write: bool,
}

/// Everything the OM knows about one committed object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyInfo {
    pub bucket: String,
    pub key: String,
    pub size: u64,
    /// The S3 ETag without quotes: hex MD5, or `<hex>-N` for multipart.
    pub etag: String,
    pub last_modified: SystemTime,
    /// Access key id of the key that wrote the object.
    pub owner: String,
    pub meta: ObjectMeta,
    pub tags: Tags,
    pub checksum: Option<ObjectChecksum>,
    pub locations: Vec<BlockLocation>,
    /// The parts of a multipart object in order (empty for a single PUT);
    /// part N starts where the sizes of the parts before it end.
    pub parts: Vec<PartSummary>,
    /// The object's version id in a bucket that has been versioned (`null`
    /// for one written while unversioned or suspended); `None` otherwise.
    pub version_id: Option<String>,
}

/// One part of a completed multipart object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartSummary {
    /// The part number the client gave (1-10000); numbers may have gaps.
    pub number: u16,
    pub size: u64,
    /// The part's ETag without quotes (hex MD5 of its bytes).
    pub etag: String,
    pub checksum: Option<ObjectChecksum>,
}

/// A condition that `commit` checks atomically with the swap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WriteCondition {
    #[default]
    None,
    /// `If-None-Match: *`: fail if any object exists under the key.
    IfAbsent,
    /// `If-Match: <etag>`: fail unless the current object has this ETag.
    IfEtag(String),
    /// `If-Match: *`: fail unless an object exists under the key.
    IfExists,
}

/// What a conditional delete requires of the current object (each given
/// must hold): `PreconditionFailed` otherwise, `NoSuchKey` when there is
/// no current object. Checked atomically with the delete where the back
/// end has transactions; refused (`NotImplemented`) where it has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteCondition {
    /// `If-Match`: the current ETag (unquoted), or `*` for any object.
    pub etag: Option<String>,
    /// `x-amz-if-match-size`.
    pub size: Option<u64>,
    /// `x-amz-if-match-last-modified-time`, compared in whole seconds (an
    /// HTTP date carries no more).
    pub last_modified: Option<SystemTime>,
}

impl DeleteCondition {
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    /// Whether the current object (`None`: there is none), by its ETag,
    /// size and modification time, meets the condition.
    pub(crate) fn check(&self, current: Option<(&str, u64, SystemTime)>) -> crate::Result<()> {
        if self.is_none() {
            return Ok(());
        }
        let Some((etag, size, modified)) = current else {
            return Err(crate::StorageError::NoSuchKey);
        };
        let seconds = |at: SystemTime| {
            at.duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        };
        let holds = self.etag.as_deref().is_none_or(|e| e == "*" || e == etag)
            && self.size.is_none_or(|s| s == size)
            && self
                .last_modified
                .is_none_or(|at| seconds(at) == seconds(modified));
        match holds {
            true => Ok(()),
            false => Err(crate::StorageError::PreconditionFailed),
        }
    }
}

/// A change to one entry of an object's user metadata (the ACL of
/// PutObjectAcl): set it (`value` is `Some`) or remove it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaEntryChange {
    pub name: String,
    pub value: Option<String>,
    /// `Some(v)`: only while the entry still holds `v` (`Some(None)`: while
    /// it is absent), checked atomically with the write, else
    /// `PreconditionFailed`: a change decided on what the entry said (a
    /// grant in the ACL being replaced) never lands on an entry rewritten
    /// since.
    pub expected: Option<Option<String>>,
}

impl MetaEntryChange {
    /// Sets (`Some`) or removes (`None`) the entry, whatever it holds.
    pub fn new(name: &str, value: Option<String>) -> Self {
        Self {
            name: name.to_owned(),
            value,
            expected: None,
        }
    }

    /// Applies the change to `user`, the record's user metadata, unless
    /// the entry no longer holds what was expected.
    pub(crate) fn apply(self, user: &mut BTreeMap<String, String>) -> crate::Result<()> {
        if let Some(expected) = &self.expected
            && user.get(&self.name) != expected.as_ref()
        {
            return Err(crate::StorageError::PreconditionFailed);
        }
        match self.value {
            Some(value) => user.insert(self.name, value),
            None => user.remove(&self.name),
        };
        Ok(())
    }
}

/// What a write states before its first byte (`Storage::create_object`).
/// Given up front because some back ends act on it when the key is
/// opened: Ozone checks the condition and records the tags at CreateKey.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteIntent {
    /// Checked when the key is opened where the back end can, and always
    /// again atomically with the commit.
    pub condition: WriteCondition,
    pub tags: Tags,
    /// The object's size when the client declared it, so a back end can
    /// allocate every block at once; a hint, never a limit.
    pub size_hint: Option<u64>,
}

/// What `ObjectWriter::commit` records with the bytes written.
#[derive(Clone, Debug, Default)]
pub struct NewObject {
    pub etag: String,
    pub meta: ObjectMeta,
    pub checksum: Option<ObjectChecksum>,
}

/// What a bucket holds, counted in one pass (see
/// [`crate::MetadataFacade::bucket_usage`]). Delete markers are not
/// counted; uploads in progress are not objects yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BucketUsage {
    /// Current objects: the latest version of each key, unless that is a
    /// delete marker.
    pub objects: u64,
    pub bytes: u64,
    /// Older versions kept by versioning.
    pub noncurrent_versions: u64,
    pub noncurrent_bytes: u64,
}

/// What one reclamation pass did (see [`crate::Storage::reclaim_now`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimStats {
    /// Open keys and multipart uploads that were abandoned.
    pub expired_uploads: usize,
    pub deleted_blocks: usize,
}

/// A listing request: a range scan in byte order.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    pub prefix: String,
    /// Group keys sharing the text up to the first delimiter after the prefix.
    pub delimiter: Option<String>,
    /// Exclusive lower bound: list keys strictly after this one.
    pub start_after: Option<String>,
    pub max_keys: usize,
}

/// One object of a listing: what the listing shows of it, and what was
/// stored with it, read by the same scan (never a lookup per key), so the
/// caller can describe it as it describes a looked-up object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListEntry {
    pub key: String,
    /// The stored size, as [`KeyInfo::size`].
    pub size: u64,
    pub etag: String,
    pub last_modified: SystemTime,
    pub owner: String,
    /// The object's metadata, as [`KeyInfo::meta`] (a folder of a
    /// directory-tree bucket has none).
    pub meta: ObjectMeta,
    /// The stored sizes of a multipart object's parts in object order, as
    /// in [`KeyInfo::parts`]; empty for an object written in one piece.
    pub part_sizes: Vec<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListPage {
    pub entries: Vec<ListEntry>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    /// The last key or common prefix returned; continue after it.
    pub next_marker: Option<String>,
}
