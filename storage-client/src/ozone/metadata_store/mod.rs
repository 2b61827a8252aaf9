//! The metadata role on a real Ozone Manager: S3 buckets in volume `s3v`
//! (OBJECT_STORE layout), keys, tags and multipart uploads through the OM
//! client, and the gateway's S3 credentials kept in Ozone too, so that
//! every gateway replica shares them.
//!
//! A bucket belongs to the access key that created it (the bucket's Ozone
//! owner); the gateway has decided who may act on it before any command
//! here runs, and each command is signed as the owner it names.
//!
//! Credentials: the OM hands out an S3 secret only in the answer that
//! creates it, so it cannot serve the secrets SigV4 verification needs.
//! Each credential is instead an empty key in a system bucket (named by
//! its access key, the credential in its metadata, the secret wrapped
//! under the records key), owned by an identity no S3 client signs as.
//! The system buckets live in the gateway's own volume
//! ([`system_volume`](super::system_volume)), not in `s3v`, and every
//! record is sealed ([`records`](super::records)): one that fails its MAC
//! is treated as absent.
//!
//! Write conditions and tags are given to the OM at CreateKey (the only
//! place it takes them): it checks `If-None-Match: *` and `If-Match` there
//! and again atomically with CommitKey, and the tags become the object's
//! with the commit. Multipart checksums, which Ozone has no place for, are
//! kept as [`ChecksumRecords`] in a second system bucket, with the changes
//! to existing objects' metadata entries (PutObjectAcl) that Ozone cannot
//! make ([`EntryRecords`]); bucket configuration as [`BucketDocuments`] in
//! a third.

use std::sync::Arc;
use std::time::Duration;

use crate::metadata::{ObjectName, OpenKey, ScanRange, UploadName, UploadStore, validate_key};
use crate::{
    BucketInfo, Credential, KeyInfo, ListEntry, Owner, OzoneStorageConfig, Result, StorageError,
    WriteCondition, WriteIntent,
};

use super::bucket_documents::BucketDocuments;
use super::checksum_records::{ChecksumRecords, ObjectChecksums};
use super::entry_records::EntryRecords;
use super::keyring::{CredentialRecords, Keyring, SYSTEM_OWNER};
use super::model::{KeyExpectation, OzoneOpenKey};
use super::object_mapping::{listed, location_from_block};
use super::om_client::OmClient;
use super::record_bucket::RecordBucket;
use super::records::Sealer;
use super::records::records_bucket;
use super::system_volume;

mod buckets;
mod credentials;
mod documents;
mod objects;
mod uploads;

pub(crate) use uploads::completed_by;

/// The system bucket holding one empty key per credential.
const CREDENTIALS_BUCKET: &str = "s3gw-credentials";
/// The system bucket holding per-object records: multipart checksums and
/// changes to metadata entries (named for the first, which came first).
const CHECKSUMS_BUCKET: &str = "s3gw-checksums";
/// The system bucket holding bucket documents.
const DOCUMENTS_BUCKET: &str = "s3gw-bucket-documents";
/// Keys and uploads asked of the OM per listing command (its own cap).
const LIST_BATCH: usize = 1000;

/// Credential lookups in flight at once when listing every credential.
const PARALLEL_LOOKUPS: usize = 16;

/// The records key, which the back end cannot do without.
pub(super) fn records_key(config: &OzoneStorageConfig) -> Result<&crate::RecordsKey> {
    config.records_key.as_ref().ok_or_else(|| {
        StorageError::InvalidArgument(
            "the Ozone back end needs a records key, which seals the gateway's credentials, \
             bucket documents and checksum records in Ozone: make one with `(umask 077; \
             openssl rand -base64 32 > /etc/s3-gateway/records.key)`, give every replica the \
             same file, and name it with the setting ozone_records_key_file"
                .into(),
        )
    })
}

/// The secrets to sign with on a security-on cluster: the system
/// identity's from `config`, the others from the credentials bucket.
pub(super) fn system_keyring(config: &OzoneStorageConfig, sealer: Arc<Sealer>) -> Result<Keyring> {
    let secret = config.system_secret.clone().ok_or_else(|| {
        StorageError::InvalidArgument(format!(
            "the Ozone cluster has security on, so its OM checks the S3 signature of every \
             request: the gateway needs the S3 secret of its system identity {SYSTEM_OWNER:?} \
             (made once by an Ozone administrator with `ozone s3 getsecret -u {SYSTEM_OWNER}`) \
             in a file readable by the gateway only, named by the setting \
             ozone_system_secret_file"
        ))
    })?;
    let place = CredentialRecords {
        bucket: records_bucket(&format!("{}{CREDENTIALS_BUCKET}", config.bucket_prefix)),
        sealer,
    };
    #[cfg(feature = "test-support")]
    let fixed = config.test_secrets.clone();
    #[cfg(not(feature = "test-support"))]
    let fixed = Vec::new();
    Ok(Keyring::new(
        (SYSTEM_OWNER, secret),
        fixed,
        place,
        config.metadata_cache_ttl,
        config.cache_capacity,
    ))
}

/// Refuses a system secret the OM does not hold, before the first request
/// that needs it fails with a bare "access denied".
pub(super) async fn check_system_secret(om: &OmClient, config: &OzoneStorageConfig) -> Result<()> {
    let Some(secret) = &config.system_secret else {
        return Ok(());
    };
    match om.check_secret(SYSTEM_OWNER, secret.expose()).await {
        Err(StorageError::AccessDenied) => Err(StorageError::InvalidArgument(format!(
            "the Ozone Manager does not hold the configured secret (ozone_system_secret_file) \
             for the gateway's system identity {SYSTEM_OWNER:?}: give the gateway the secret \
             `ozone s3 getsecret -u {SYSTEM_OWNER}` printed, or set this one with \
             `ozone s3 setsecret -u {SYSTEM_OWNER} -s <secret>` as an Ozone administrator"
        ))),
        other => other,
    }
}

pub(crate) struct OzoneMetadata {
    om: Arc<OmClient>,
    /// Credentials, sealed.
    credentials: CredentialRecords,
    /// Multipart checksums, which Ozone does not keep.
    checksums: ChecksumRecords,
    /// Changes to existing objects' metadata entries, which Ozone cannot
    /// make; in the checksums' bucket.
    entries: EntryRecords,
    /// Bucket configuration, which Ozone does not keep.
    documents: BucketDocuments,
    /// Put in front of every bucket name on the cluster, so that several
    /// gateways (or test runs) can share one cluster without meeting.
    bucket_prefix: String,
    /// Open keys by id with what Ozone wants repeated on AllocateBlock and
    /// CommitKey; those of abandoned uploads expire.
    open_keys: moka::future::Cache<u64, OzoneOpenKey>,
    /// Whether the OM is asked to vouch for keys of Ozone's own users.
    vouches_for_users: bool,
}

impl OzoneMetadata {
    /// `abandon_after`: how long an open key is remembered without use;
    /// `metadata_cache_ttl`: how long a bucket's facts read from Ozone are.
    pub(crate) fn new(
        om: Arc<OmClient>,
        sealer: Arc<Sealer>,
        bucket_prefix: String,
        abandon_after: Duration,
        metadata_cache_ttl: Duration,
    ) -> Self {
        let system_bucket = |name: &str| records_bucket(&format!("{bucket_prefix}{name}"));
        let records = |name: &str| {
            RecordBucket::new(
                Arc::clone(&om),
                Arc::clone(&sealer),
                SYSTEM_OWNER,
                system_bucket(name),
            )
        };
        let checksums = ChecksumRecords::new(records(CHECKSUMS_BUCKET));
        let entries = EntryRecords::new(records(CHECKSUMS_BUCKET), metadata_cache_ttl);
        let documents = BucketDocuments::new(records(DOCUMENTS_BUCKET));
        Self {
            credentials: CredentialRecords {
                bucket: system_bucket(CREDENTIALS_BUCKET),
                sealer,
            },
            checksums,
            entries,
            documents,
            om,
            bucket_prefix,
            open_keys: moka::future::Cache::builder()
                .time_to_idle(abandon_after)
                .build(),
            vouches_for_users: false,
        }
    }

    /// Asks the OM to vouch for the signatures of access keys the gateway
    /// holds no credential for (`ozone_user_secrets`).
    pub(crate) fn vouching_for_users(mut self, on: bool) -> Self {
        self.vouches_for_users = on;
        self
    }

    /// Checks that the OM answers and creates the records volume and the
    /// system buckets if this is the first gateway on the cluster, with
    /// owner-only ACLs. A volume or bucket someone else owns or that
    /// grants others access is refused (see [`system_volume::prepare`]).
    pub(crate) async fn prepare(&self) -> Result<()> {
        let buckets = [
            self.credentials_bucket().to_owned(),
            self.checksums.bucket().to_owned(),
            self.documents.bucket().to_owned(),
        ];
        system_volume::prepare(&self.om, SYSTEM_OWNER, &buckets).await
    }

    /// The Ozone name of the S3 bucket `bucket`, in `s3v`. S3 bucket
    /// names have no `/` (the router splits there); one that did would
    /// name another volume ([`super::om_client::volume_and_bucket`]), so a
    /// `/` becomes a character no Ozone bucket name has.
    /// `bucket` is a path as the facade keeps it (`refs::bucket_path`): a
    /// name in `s3v`, or `volume/name` for a tenant's bucket.
    fn ozone_name(&self, bucket: &str) -> String {
        match bucket.split_once('/') {
            Some((volume, name)) => format!("{volume}/{}{name}", self.bucket_prefix),
            None => format!("{}{bucket}", self.bucket_prefix),
        }
    }

    /// Drops the records `key` of Ozone bucket `name` has (its multipart
    /// checksums, its metadata entry changes), if it has any: most keys
    /// have none, and looking is two OM reads where a DeleteKeys naming
    /// both is a Raft write. Called beside the key's own delete, not
    /// before it: a record names the object it was made for and applies
    /// to nothing written since, so one left behind by a failure here is
    /// only garbage, and is logged.
    async fn forget_records(&self, name: &str, key: &str) {
        let dropped = async {
            let mut records = Vec::new();
            for record in [
                self.checksums.record_of(name, key),
                self.entries.record_of(name, key),
            ] {
                // The first name with the record's as prefix is the
                // record's own, if it exists.
                let (first, _) = self
                    .list_ozone_keys(SYSTEM_OWNER, self.checksums.bucket(), &record, "", 1)
                    .await?;
                if first.first().is_some_and(|entry| entry.key == record) {
                    records.push(record);
                }
            }
            if records.is_empty() {
                return Ok(Vec::new());
            }
            let bucket = self.checksums.bucket();
            self.om.delete_keys(SYSTEM_OWNER, bucket, &records).await
        };
        match dropped.await {
            Ok(left) if left.is_empty() => {}
            Ok(left) => tracing::warn!(bucket = name, records = left.len(), "records left behind"),
            Err(e) => tracing::warn!(bucket = name, error = %e, "records left behind"),
        }
    }

    /// The credentials bucket's path in the records volume.
    fn credentials_bucket(&self) -> &str {
        &self.credentials.bucket
    }

    /// The bucket as the facade names it (prefix removed).
    fn facade_bucket(&self, mut bucket: BucketInfo) -> BucketInfo {
        if let Some(name) = bucket.name.strip_prefix(&self.bucket_prefix) {
            bucket.name = name.to_owned();
        }
        bucket
    }

    /// The bucket's facts, asked as the gateway itself: the same for
    /// every caller. Named by its path, so a tenant's bucket's documents
    /// are kept apart from those of the shared bucket of the same name.
    async fn info_bucket(&self, path: &str) -> Result<BucketInfo> {
        let info = self
            .om
            .info_bucket(SYSTEM_OWNER, &self.ozone_name(path))
            .await?;
        Ok(BucketInfo {
            name: path.to_owned(),
            ..self.facade_bucket(info)
        })
    }

    /// The open key behind the facade's handle.
    async fn open_key_of(&self, open: &OpenKey) -> Result<OzoneOpenKey> {
        self.open_keys
            .get(&open.id)
            .await
            .ok_or_else(|| abandoned(open))
    }

    /// The open key behind the facade's handle, forgotten: the command
    /// about to run consumes it whatever its outcome.
    async fn take_open_key(&self, open: &OpenKey) -> Result<OzoneOpenKey> {
        self.open_keys
            .remove(&open.id)
            .await
            .ok_or_else(|| abandoned(open))
    }

    /// Keeps `open` for the later commands on it and returns the facade's
    /// handle, in facade `bucket`.
    async fn remember(
        &self,
        object: ObjectName,
        mut open: OzoneOpenKey,
        intent: WriteIntent,
    ) -> OpenKey {
        // The preallocated blocks go to the writer; later commands need
        // only the key's identity and replication.
        let first_blocks = std::mem::take(&mut open.blocks);
        let handle = OpenKey {
            id: open.id,
            object,
            first_blocks: first_blocks.into_iter().map(location_from_block).collect(),
            intent,
        };
        self.open_keys.insert(open.id, open).await;
        handle
    }

    /// The OM's form of a write condition. `If-Match: *` has none, so it
    /// becomes "the generation the key has now": stricter only when another
    /// write lands in between, which then fails as a conflicting write.
    async fn expectation(
        &self,
        owner: &Owner,
        name: &str,
        key: &str,
        condition: &WriteCondition,
    ) -> Result<KeyExpectation> {
        Ok(match condition {
            WriteCondition::None => KeyExpectation::Anything,
            WriteCondition::IfAbsent => KeyExpectation::Absent,
            WriteCondition::IfEtag(etag) => KeyExpectation::Etag(etag.trim_matches('"').into()),
            WriteCondition::IfExists => KeyExpectation::Generation(
                self.om
                    .get_key_info(&owner.access_key, name, key, true)
                    .await?
                    .update_id,
            ),
        })
    }

    /// The S3 answer to a refused condition. The OM reports a generation
    /// that moved on as a missing key; S3 answers 412 while a key is there.
    async fn refusal(
        &self,
        owner: &Owner,
        name: &str,
        key: &str,
        expect: &KeyExpectation,
        err: StorageError,
    ) -> StorageError {
        let generation_moved = matches!(expect, KeyExpectation::Generation(_))
            && matches!(err, StorageError::NoSuchKey)
            && self
                .om
                .get_key_info(&owner.access_key, name, key, true)
                .await
                .is_ok();
        if generation_moved {
            StorageError::PreconditionFailed
        } else {
            err
        }
    }

    /// Deletes `name`, ending its uploads when they are all that is left
    /// (Ozone counts them as content, S3 ends them with the bucket).
    async fn delete_own_bucket(&self, owner: &Owner, name: &str) -> Result<()> {
        let ozone_name = self.ozone_name(name);
        match self.om.delete_bucket(&owner.access_key, &ozone_name).await {
            // Only a bucket without objects gets past this.
            Err(StorageError::BucketNotEmpty) => {
                let (objects, _) = self
                    .list_ozone_keys(&owner.access_key, &ozone_name, "", "", 1)
                    .await?;
                if !objects.is_empty() {
                    return Err(StorageError::BucketNotEmpty);
                }
                self.abort_every_upload(owner, name).await?;
                self.om.delete_bucket(&owner.access_key, &ozone_name).await
            }
            other => other,
        }
    }

    /// The credential of `access_key`; `None` where there is none, or
    /// its record fails its seal (refused and logged).
    async fn credential_at(&self, access_key: &str) -> Result<Option<Credential>> {
        let bucket = self.credentials_bucket();
        match self
            .om
            .get_key_info(SYSTEM_OWNER, bucket, access_key, true)
            .await
        {
            Ok(key) => {
                let Some(credential) = self.credentials.read(access_key, &key.metadata) else {
                    return Ok(None);
                };
                self.om
                    .remember_secret(access_key, &credential.secret_key)
                    .await;
                Ok(Some(credential))
            }
            Err(StorageError::NoSuchKey) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Aborts every multipart upload in progress in the bucket.
    async fn abort_every_upload(&self, owner: &Owner, bucket: &str) -> Result<()> {
        loop {
            let scan = ScanRange {
                bucket: bucket.to_owned(),
                prefix: String::new(),
                after: Vec::new(),
                limit: LIST_BATCH,
            };
            let uploads = self.scan_multipart_uploads(owner, scan).await?;
            if uploads.is_empty() {
                return Ok(());
            }
            for upload in uploads {
                let upload = UploadName {
                    object: ObjectName::new(bucket, &upload.key),
                    upload_id: upload.upload_id,
                };
                match self.abort_named(owner, upload).await {
                    Ok(()) | Err(StorageError::NoSuchUpload) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// The objects of an Ozone bucket starting with `prefix` after `start`
    /// (exclusive), at most `limit`, each with its metadata and parts
    /// (ListKeys: the OM scans as for [`Self::list_ozone_keys`] and
    /// answers each key's full record, less the datanodes of its blocks).
    async fn list_ozone_objects(
        &self,
        owner: &str,
        bucket: &str,
        prefix: &str,
        start: &str,
        limit: usize,
    ) -> Result<(Vec<ListEntry>, bool)> {
        let (keys, truncated) = self
            .om
            .list_keys_with_metadata(owner, bucket, prefix, start, limit.min(LIST_BATCH))
            .await?;
        Ok((keys.into_iter().map(listed).collect(), truncated))
    }

    /// Every key of an Ozone bucket starting with `prefix` after `start`
    /// (exclusive), at most `limit`, by name (ListKeysLight: the entries
    /// carry no metadata).
    async fn list_ozone_keys(
        &self,
        owner: &str,
        bucket: &str,
        prefix: &str,
        start: &str,
        limit: usize,
    ) -> Result<(Vec<ListEntry>, bool)> {
        self.om
            .list_keys(owner, bucket, prefix, start, limit.min(LIST_BATCH))
            .await
    }
}

/// A string start key for Ozone's exclusive `startKey` that sorts at or
/// before `after` (raw bytes that may not be UTF-8): results between the
/// two are dropped by the caller.
fn start_key(after: &[u8]) -> String {
    match std::str::from_utf8(after) {
        Ok(text) => text.to_owned(),
        Err(e) => {
            let valid = &after[..e.valid_up_to()];
            let mut start = String::from_utf8_lossy(valid).into_owned();
            // A byte no UTF-8 text contains (such as 0xFF, "past every key
            // with this prefix") sorts after the largest character.
            if after[e.valid_up_to()] >= 0xF5 {
                start.push(char::MAX);
            }
            start
        }
    }
}

/// The upload a facade scan position names: (key marker, upload-id
/// marker) for Ozone, at or before the position.
fn upload_markers(after: &[u8]) -> (String, String) {
    match after.iter().position(|b| *b == 0) {
        Some(at) => (
            String::from_utf8_lossy(&after[..at]).into_owned(),
            String::from_utf8_lossy(&after[at + 1..]).into_owned(),
        ),
        // "Past every upload of key K" (K then 0x01) or "past prefix P"
        // (P then 0xFF): uploads of keys after K, or after P, which the
        // caller filters further.
        None => {
            let trimmed = match after.last() {
                Some(0x01 | 0xFF) => &after[..after.len() - 1],
                _ => after,
            };
            (String::from_utf8_lossy(trimmed).into_owned(), String::new())
        }
    }
}

/// Whether Ozone takes `key` for no key at all: its `getOzoneKey` drops a
/// blank name (Java's `isBlank`), so the OM would address the bucket itself.
fn is_blank(key: &str) -> bool {
    key.chars()
        .all(|c| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// S3's key rules plus Ozone's: a whitespace-only name cannot be stored.
fn storable_key(key: &str) -> Result<()> {
    validate_key(key)?;
    if is_blank(key) {
        return Err(StorageError::InvalidArgument(
            "the Ozone back end cannot store a key name made only of whitespace".into(),
        ));
    }
    Ok(())
}

/// `info` with the checksums recorded for it (Ozone keeps none for a
/// multipart object).
fn with_checksums(mut info: KeyInfo, recorded: ObjectChecksums) -> KeyInfo {
    if recorded.whole.is_some() {
        info.checksum = recorded.whole;
    }
    for part in &mut info.parts {
        if let Some(checksum) = recorded.parts.get(&part.number) {
            part.checksum = Some(checksum.clone());
        }
    }
    info
}

fn abandoned(open: &OpenKey) -> StorageError {
    StorageError::InvalidArgument(format!(
        "upload {} of {:?} is unknown or abandoned",
        open.id, open.object.key
    ))
}

fn part_number(number: u16) -> Result<u32> {
    if (1..=crate::MAX_PART_NUMBER).contains(&number) {
        Ok(u32::from(number))
    } else {
        Err(StorageError::InvalidArgument(format!(
            "part number {number} outside 1-{}",
            crate::MAX_PART_NUMBER
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_keys_never_pass_the_position() {
        assert_eq!(start_key(b""), "");
        assert_eq!(start_key("a/é".as_bytes()), "a/é");
        let past_prefix = start_key(b"a/\xff");
        assert_eq!(past_prefix, format!("a/{}", char::MAX));
        assert!(past_prefix.as_bytes() < b"a/\xff".as_slice());
        // A cut-off character: start at the text before it.
        assert_eq!(start_key(b"ab\xc3"), "ab");
    }

    #[test]
    fn whitespace_only_names_are_not_storable() {
        for blank in [" ", "  ", "\t", "\n", " \r\n\u{1f}"] {
            assert!(is_blank(blank), "{blank:?}");
            assert!(matches!(
                storable_key(blank),
                Err(StorageError::InvalidArgument(_))
            ));
        }
        for fine in [" a", "a ", "\u{a0}x", "/"] {
            assert!(!is_blank(fine), "{fine:?}");
            assert!(storable_key(fine).is_ok(), "{fine:?}");
        }
    }

    #[test]
    fn upload_markers_follow_scan_positions() {
        assert_eq!(upload_markers(b""), (String::new(), String::new()));
        assert_eq!(
            upload_markers(b"k\0id-1"),
            ("k".to_owned(), "id-1".to_owned())
        );
        assert_eq!(upload_markers(b"k\x01"), ("k".to_owned(), String::new()));
        assert_eq!(
            upload_markers(b"logs/\xff"),
            ("logs/".to_owned(), String::new())
        );
    }
}
