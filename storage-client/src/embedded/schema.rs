//! The embedded OM's on-disk schema: redb tables and the postcard records
//! stored in them.
//!
//! The records are this file's types alone. Where a record holds one of the
//! crate's public types, a mirror here ([`MetaRecord`], [`ChecksumRecord`],
//! ...) says how it is written, so a field added to a public type fails to
//! compile here instead of silently changing what `om.redb` decodes. The
//! database says which [`STORE_FORMAT`] it is written in; a change to any
//! record is a new format, read by a migration, and `tests/upgrade.rs`
//! opens a store of every earlier format.

use std::collections::BTreeMap;
use std::time::SystemTime;

use redb::TableDefinition;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{
    BlockId, ChecksumAlgorithm, ChecksumType, Credential, ObjectChecksum, ObjectMeta, PartSummary,
    Result, StorageError,
};

/// `"store"` -> the store format of the database.
pub(crate) const FORMAT: TableDefinition<&str, u64> = TableDefinition::new("format");
pub(crate) const FORMAT_ROW: &str = "store";
/// The format this build writes, and the latest it reads. 1: the records
/// as first recorded (written by every build before the format was, too).
/// 2: [`BLOCKS_WITH_KEYS`] added; no record changed, so a store of
/// format 1 is of format 2 once it has the (empty) table, and a build
/// that reads only format 1, which would look for those blocks on the
/// DN, refuses it.
pub(crate) const STORE_FORMAT: u64 = 2;

/// Bucket name -> [`BucketRecord`].
pub(crate) const BUCKETS: TableDefinition<&str, &[u8]> = TableDefinition::new("buckets");
/// `bucket 0x00 key` -> [`KeyRecord`]; byte order within a bucket is S3's listing order.
pub(crate) const KEYS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("keys");
/// Access key id -> [`CredentialRecord`].
pub(crate) const CREDENTIALS: TableDefinition<&str, &[u8]> = TableDefinition::new("credentials");
/// Open key id -> [`OpenKeyRecord`]: allocations not committed yet.
pub(crate) const OPEN_KEYS: TableDefinition<u64, &[u8]> = TableDefinition::new("open_keys");
/// (container, local id) -> time queued (ms): blocks waiting for the reclaimer.
pub(crate) const DELETED_BLOCKS: TableDefinition<(u64, u64), u64> =
    TableDefinition::new("deleted_blocks");
/// Secret key UUID -> [`SecretKeyRecord`]: block-token signing keys.
pub(crate) const SECRET_KEYS: TableDefinition<u128, &[u8]> = TableDefinition::new("secret_keys");
/// `bucket 0x00 key 0x00 upload id` -> [`UploadRecord`]: multipart uploads in
/// progress, in ListMultipartUploads order.
pub(crate) const UPLOADS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("uploads");
/// (upload id, part number) -> [`PartRecord`].
pub(crate) const PARTS: TableDefinition<(&str, u16), &[u8]> = TableDefinition::new("parts");
/// (bucket, document kind's stored name) -> the document's text.
pub(crate) const BUCKET_DOCUMENTS: TableDefinition<(&str, &str), &str> =
    TableDefinition::new("bucket_documents");
/// Bucket name -> [`VersioningRecord`]; no row for a bucket never versioned.
pub(crate) const BUCKET_VERSIONING: TableDefinition<&str, u8> =
    TableDefinition::new("bucket_versioning");
/// [`version_key`] -> [`VersionRecord`]: every noncurrent version and every
/// delete marker (current or not) of a versioned bucket; the current
/// object of each key stays in `KEYS`.
pub(crate) const VERSIONS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("versions");
/// [`object_key`] -> [`CurrentVersion`]: the version of the `KEYS` row,
/// for keys written since their bucket was first versioned. A `KEYS` row
/// without one is the `null` version written before, older than any other.
pub(crate) const CURRENT_VERSIONS: TableDefinition<&[u8], &[u8]> =
    TableDefinition::new("current_versions");
/// (container, local id) -> the block's row (see
/// [`crate::embedded::block_row`]): the only block of an object of at most
/// `object_with_key_max` bytes, written in the transaction that commits the
/// object and removed in the one that frees its block, never on the DN.
pub(crate) const BLOCKS_WITH_KEYS: TableDefinition<(u64, u64), &[u8]> =
    TableDefinition::new("blocks_with_keys");
/// Counter name -> next value (or, for the `*_WITH_KEYS` names, a total).
pub(crate) const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");

pub(crate) const NEXT_LOCAL_ID: &str = "next_local_id";
pub(crate) const NEXT_OPEN_KEY_ID: &str = "next_open_key_id";
/// Versions are numbered in write order across the database.
pub(crate) const NEXT_VERSION_SEQ: &str = "next_version_seq";
/// How many rows `BLOCKS_WITH_KEYS` holds, and their bytes, kept in the
/// transactions that change it.
pub(crate) const COUNT_WITH_KEYS: &str = "blocks_with_keys";
pub(crate) const BYTES_WITH_KEYS: &str = "bytes_with_keys";

/// A bucket's versioning state in `BUCKET_VERSIONING`.
pub(crate) const VERSIONING_ENABLED: u8 = 1;
pub(crate) const VERSIONING_SUSPENDED: u8 = 2;

#[derive(Serialize, Deserialize)]
pub(crate) struct BucketRecord {
    pub(crate) owner: String,
    pub(crate) created: SystemTime,
    pub(crate) region: String,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct StoredBlock {
    #[serde(with = "BlockIdRecord")]
    pub(crate) block: BlockId,
    pub(crate) offset: u64,
    pub(crate) length: u64,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct KeyRecord {
    pub(crate) size: u64,
    pub(crate) etag: String,
    pub(crate) last_modified: SystemTime,
    pub(crate) owner: String,
    #[serde(with = "MetaRecord")]
    pub(crate) meta: ObjectMeta,
    pub(crate) tags: Vec<(String, String)>,
    #[serde(with = "optional_checksum")]
    pub(crate) checksum: Option<ObjectChecksum>,
    pub(crate) blocks: Vec<StoredBlock>,
    /// Empty unless the object was completed from a multipart upload.
    #[serde(with = "part_summaries")]
    pub(crate) parts: Vec<PartSummary>,
}

/// A version's id and its place in write order (`seq`; 0 for the `null`
/// version written before the bucket was first versioned).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct CurrentVersion {
    pub(crate) id: String,
    pub(crate) seq: u64,
}

impl CurrentVersion {
    /// What a `KEYS` row without a `CURRENT_VERSIONS` row is.
    pub(crate) fn written_unversioned() -> Self {
        Self {
            id: crate::NULL_VERSION_ID.to_owned(),
            seq: 0,
        }
    }
}

#[derive(Serialize, Deserialize)]
pub(crate) struct VersionRecord {
    pub(crate) id: String,
    pub(crate) version: StoredVersion,
}

#[derive(Serialize, Deserialize)]
pub(crate) enum StoredVersion {
    /// Boxed: a delete marker is much smaller (postcard encodes both alike).
    Object(Box<KeyRecord>),
    DeleteMarker {
        last_modified: SystemTime,
        owner: String,
    },
}

#[derive(Serialize, Deserialize)]
pub(crate) struct UploadRecord {
    pub(crate) owner: String,
    pub(crate) initiated_ms: u64,
    #[serde(with = "MetaRecord")]
    pub(crate) meta: ObjectMeta,
    pub(crate) tags: Vec<(String, String)>,
    #[serde(with = "optional_name")]
    pub(crate) checksum_algorithm: Option<ChecksumAlgorithm>,
    #[serde(with = "optional_name")]
    pub(crate) checksum_type: Option<ChecksumType>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct PartRecord {
    pub(crate) size: u64,
    pub(crate) etag: String,
    #[serde(with = "optional_checksum")]
    pub(crate) checksum: Option<ObjectChecksum>,
    pub(crate) last_modified: SystemTime,
    /// Offsets are within the part.
    pub(crate) blocks: Vec<StoredBlock>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct OpenKeyRecord {
    pub(crate) bucket: String,
    pub(crate) key: String,
    pub(crate) owner: String,
    pub(crate) created_ms: u64,
    #[serde(with = "block_ids")]
    pub(crate) blocks: Vec<BlockId>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct SecretKeyRecord {
    pub(crate) created_ms: u64,
    pub(crate) expires_ms: u64,
    pub(crate) bytes: [u8; 32],
}

/// An access key as stored in `CREDENTIALS`.
#[derive(Serialize, Deserialize)]
pub(crate) struct CredentialRecord(#[serde(with = "CredentialFields")] pub(crate) Credential);

#[derive(Serialize, Deserialize)]
#[serde(remote = "Credential")]
struct CredentialFields {
    name: String,
    access_key: String,
    secret_key: String,
    is_root: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "BlockId")]
struct BlockIdRecord {
    container: u64,
    local: u64,
}

/// [`ObjectMeta`] as stored.
#[derive(Serialize, Deserialize)]
#[serde(remote = "ObjectMeta")]
struct MetaRecord {
    content_type: Option<String>,
    content_encoding: Option<String>,
    content_disposition: Option<String>,
    content_language: Option<String>,
    cache_control: Option<String>,
    expires: Option<String>,
    user: BTreeMap<String, String>,
}

/// [`ObjectChecksum`] as stored: the algorithm and the type by name.
#[derive(Serialize, Deserialize)]
#[serde(remote = "ObjectChecksum")]
struct ChecksumRecord {
    #[serde(with = "name")]
    algorithm: ChecksumAlgorithm,
    value: String,
    #[serde(with = "name")]
    kind: ChecksumType,
}

/// [`PartSummary`] as stored.
#[derive(Serialize, Deserialize)]
#[serde(remote = "PartSummary")]
struct PartSummaryRecord {
    number: u16,
    size: u64,
    etag: String,
    #[serde(with = "optional_checksum")]
    checksum: Option<ObjectChecksum>,
}

/// A value stored by the name it goes by in S3 (`sha256`, `COMPOSITE`).
trait Named: Sized + Copy {
    fn name(self) -> &'static str;
    fn from_name(name: &str) -> Option<Self>;
}

impl Named for ChecksumAlgorithm {
    fn name(self) -> &'static str {
        ChecksumAlgorithm::name(self)
    }
    fn from_name(name: &str) -> Option<Self> {
        ChecksumAlgorithm::from_name(name)
    }
}

impl Named for ChecksumType {
    fn name(self) -> &'static str {
        ChecksumType::name(self)
    }
    fn from_name(name: &str) -> Option<Self> {
        ChecksumType::from_name(name)
    }
}

mod name {
    use super::*;

    pub(super) fn serialize<T: Named, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(value.name())
    }

    pub(super) fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let name = String::deserialize(d)?;
        T::from_name(&name).ok_or_else(|| D::Error::custom(format!("unknown name {name:?}")))
    }
}

mod optional_name {
    use super::*;

    pub(super) fn serialize<T: Named, S: Serializer>(
        value: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        value.map(Named::name).serialize(s)
    }

    pub(super) fn deserialize<'de, T: Named, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|name| {
                T::from_name(&name)
                    .ok_or_else(|| D::Error::custom(format!("unknown name {name:?}")))
            })
            .transpose()
    }
}

/// A mirrored value inside an `Option` or a `Vec`, written through its
/// mirror: serde's `with` reaches only a field's own type. `Out` and `In`
/// are newtypes, which postcard writes as their content.
macro_rules! through_mirror {
    ($module:ident, $public:ty, $mirror:ident) => {
        mod $module {
            use super::*;

            pub(super) struct Out<'a>(pub(super) &'a $public);

            impl Serialize for Out<'_> {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    $mirror::serialize(self.0, s)
                }
            }

            pub(super) struct In(pub(super) $public);

            impl<'de> Deserialize<'de> for In {
                fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    $mirror::deserialize(d).map(In)
                }
            }
        }
    };
}

through_mirror!(checksum_mirror, ObjectChecksum, ChecksumRecord);
through_mirror!(part_mirror, PartSummary, PartSummaryRecord);
through_mirror!(block_id_mirror, BlockId, BlockIdRecord);

mod optional_checksum {
    use super::checksum_mirror::{In, Out};
    use super::*;

    pub(super) fn serialize<S: Serializer>(
        value: &Option<ObjectChecksum>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        value.as_ref().map(Out).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<ObjectChecksum>, D::Error> {
        Ok(Option::<In>::deserialize(d)?.map(|checksum| checksum.0))
    }
}

mod part_summaries {
    use super::part_mirror::{In, Out};
    use super::*;

    pub(super) fn serialize<S: Serializer>(value: &[PartSummary], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(value.iter().map(Out))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<PartSummary>, D::Error> {
        Ok(Vec::<In>::deserialize(d)?
            .into_iter()
            .map(|part| part.0)
            .collect())
    }
}

mod block_ids {
    use super::block_id_mirror::{In, Out};
    use super::*;

    pub(super) fn serialize<S: Serializer>(value: &[BlockId], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(value.iter().map(Out))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<BlockId>, D::Error> {
        Ok(Vec::<In>::deserialize(d)?
            .into_iter()
            .map(|block| block.0)
            .collect())
    }
}

/// The `KEYS` table key: bucket names never contain 0x00, so every bucket's
/// keys form one contiguous range.
pub(crate) fn object_key(bucket: &str, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bucket.len() + 1 + key.len());
    out.extend_from_slice(bucket.as_bytes());
    out.push(0);
    out.extend_from_slice(key);
    out
}

/// The `VERSIONS` table key: the key's [`object_key`], 0x00, then the
/// version's seq inverted and big-endian, so a key's versions sort newest
/// first right after it (for keys without 0x00, which versioned buckets
/// refuse).
pub(crate) fn version_key(bucket: &str, key: &[u8], seq: u64) -> Vec<u8> {
    let mut out = object_key(bucket, key);
    out.push(0);
    out.extend_from_slice(&(u64::MAX - seq).to_be_bytes());
    out
}

/// The key and seq of a `VERSIONS` row of `bucket`.
pub(crate) fn split_version_key<'r>(bucket: &str, row: &'r [u8]) -> Option<(&'r [u8], u64)> {
    let rest = row.get(bucket.len() + 1..)?;
    let (key, seq) = rest.split_at_checked(rest.len().checked_sub(9)?)?;
    let inverted = u64::from_be_bytes(seq.get(1..)?.try_into().ok()?);
    Some((key, u64::MAX - inverted))
}

/// The exclusive upper bound of a bucket's range in `KEYS`.
pub(crate) fn bucket_end(bucket: &str) -> Vec<u8> {
    let mut out = bucket.as_bytes().to_vec();
    out.push(1);
    out
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(|e| StorageError::Internal(format!("encode: {e}")))
}

pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    postcard::from_bytes(bytes).map_err(|e| StorageError::Corrupt(format!("metadata record: {e}")))
}
