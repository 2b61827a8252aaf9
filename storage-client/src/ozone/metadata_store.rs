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
//! kept as [`ChecksumRecords`] in a second system bucket, bucket
//! configuration as [`BucketDocuments`] in a third.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt, stream};

use crate::multipart::{
    CompleteUpload, NewUpload, PartCommit, PartInfo, UploadInfo, position as upload_position,
};
use crate::om::{
    BucketDocumentStore, BucketStore, CredentialStore, NewBucket, ObjectRef, ObjectStore, OpenKey,
    PartRef, ScanRange, UploadRef, UploadStore, validate_key,
};
use crate::{
    BlockLocation, BucketDocument, BucketInfo, ChecksumAlgorithm, Credential, DeleteCondition,
    Deleted, KeyInfo, ListEntry, MetaEntryChange, NewObject, ObjectChecksum, Owner,
    OzoneStorageConfig, Result, StorageError, WriteCondition, WriteIntent,
};

use super::bucket_documents::BucketDocuments;
use super::checksum_records::{ChecksumRecords, ObjectChecksums};
use super::fso_listing;
use super::keyring::{CredentialRecords, Keyring, SYSTEM_OWNER};
use super::model::{KeyExpectation, OpenPart, OzoneOpenKey};
use super::object_mapping::{
    block_from_location, committed_info, key_info, location_from_block, object_metadata,
    ozone_multipart_etag,
};
use super::om_client::OmClient;
use super::records::Sealer;
use super::records::records_bucket;
use super::system_volume;

/// The system bucket holding one empty key per credential.
const CREDENTIALS_BUCKET: &str = "s3gw-credentials";
/// The system bucket holding multipart checksum records.
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
    /// Bucket configuration, which Ozone does not keep.
    documents: BucketDocuments,
    /// Put in front of every bucket name on the cluster, so that several
    /// gateways (or test runs) can share one cluster without meeting.
    bucket_prefix: String,
    /// Open keys by id with what Ozone wants repeated on AllocateBlock and
    /// CommitKey; those of abandoned uploads expire.
    open_keys: moka::future::Cache<u64, OzoneOpenKey>,
}

impl OzoneMetadata {
    /// `abandon_after`: how long an open key is remembered without use.
    pub(crate) fn new(
        om: OmClient,
        sealer: Arc<Sealer>,
        bucket_prefix: String,
        abandon_after: Duration,
    ) -> Self {
        let om = Arc::new(om);
        let system_bucket = |name: &str| records_bucket(&format!("{bucket_prefix}{name}"));
        let checksums = ChecksumRecords::new(
            Arc::clone(&om),
            Arc::clone(&sealer),
            SYSTEM_OWNER,
            system_bucket(CHECKSUMS_BUCKET),
        );
        let documents = BucketDocuments::new(
            Arc::clone(&om),
            Arc::clone(&sealer),
            SYSTEM_OWNER,
            system_bucket(DOCUMENTS_BUCKET),
        );
        Self {
            credentials: CredentialRecords {
                bucket: system_bucket(CREDENTIALS_BUCKET),
                sealer,
            },
            checksums,
            documents,
            om,
            bucket_prefix,
            open_keys: moka::future::Cache::builder()
                .time_to_idle(abandon_after)
                .build(),
        }
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
    fn ozone_name(&self, bucket: &str) -> String {
        format!("{}{}", self.bucket_prefix, bucket.replace('/', "%2F"))
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
    /// every caller.
    async fn info_bucket(&self, name: &str) -> Result<BucketInfo> {
        let info = self
            .om
            .info_bucket(SYSTEM_OWNER, &self.ozone_name(name))
            .await?;
        Ok(self.facade_bucket(info))
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
        object: ObjectRef,
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
                let upload = UploadRef {
                    object: ObjectRef::new(bucket, &upload.key),
                    upload_id: upload.upload_id,
                };
                match self.abort_multipart_upload(owner, upload).await {
                    Ok(()) | Err(StorageError::NoSuchUpload) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// Every key of an Ozone bucket starting with `prefix` after `start`
    /// (exclusive), at most `limit`.
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
    if (1..=crate::multipart::MAX_PART_NUMBER).contains(&number) {
        Ok(u32::from(number))
    } else {
        Err(StorageError::InvalidArgument(format!(
            "part number {number} outside 1-{}",
            crate::multipart::MAX_PART_NUMBER
        )))
    }
}

#[async_trait]
impl CredentialStore for OzoneMetadata {
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        if validate_key(access_key).is_err() {
            return Ok(None);
        }
        self.credential_at(access_key).await
    }

    /// Every record's name, those that fail their seal included (a
    /// credential lookup refuses them).
    async fn access_keys(&self) -> Result<Vec<String>> {
        let bucket = self.credentials_bucket();
        let mut names: Vec<String> = Vec::new();
        loop {
            let start = names.last().cloned().unwrap_or_default();
            let (page, truncated) = self
                .list_ozone_keys(SYSTEM_OWNER, bucket, "", &start, LIST_BATCH)
                .await?;
            let done = !truncated || page.is_empty();
            names.extend(page.into_iter().map(|e| e.key));
            if done {
                return Ok(names);
            }
        }
    }

    /// The OM makes the secret, so Ozone's own S3 gateway accepts the key
    /// too (with security on it verifies signatures against it).
    async fn issue_secret(&self, access_key: &str) -> Result<Option<String>> {
        validate_key(access_key)?;
        self.om.issue_s3_secret(access_key).await.map(Some)
    }

    async fn put_credential(&self, cred: Credential) -> Result<()> {
        validate_key(&cred.access_key)?;
        let fields = self.credentials.fields(&cred)?;
        let bucket = self.credentials_bucket();
        let open = self
            .om
            .create_key(
                SYSTEM_OWNER,
                bucket,
                &cred.access_key,
                0,
                &[],
                &KeyExpectation::Anything,
            )
            .await?;
        self.om
            .remember_secret(&cred.access_key, &cred.secret_key)
            .await;
        self.om
            .commit_key(SYSTEM_OWNER, &open, &[], "", &fields)
            .await
    }

    /// On a security-on cluster the OM must hold the same secret: every
    /// request by the key is signed with it.
    async fn check_secret(&self, access_key: &str, secret: &str) -> Result<()> {
        if !self.om.signs() {
            return Ok(());
        }
        match self.om.check_secret(access_key, secret).await {
            Err(StorageError::AccessDenied) => Err(StorageError::InvalidArgument(format!(
                "the Ozone cluster has security on and its OM does not hold this secret for \
                 access key {access_key}: as an Ozone administrator, give the key a secret \
                 there if it has none (`ozone s3 getsecret -u {access_key}`), then set this one \
                 (`ozone s3 setsecret -u {access_key} -s <its secret>`)"
            ))),
            other => other,
        }
    }

    async fn list_credentials(&self) -> Result<Vec<Credential>> {
        let found: Vec<Option<Credential>> = stream::iter(self.access_keys().await?)
            .map(|name| async move { self.credential_at(&name).await })
            .buffered(PARALLEL_LOOKUPS)
            .try_collect()
            .await?;
        Ok(found.into_iter().flatten().collect())
    }

    async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        if validate_key(access_key).is_err() {
            return Ok(false);
        }
        // Keys the OM issued a secret for must stop working there too; keys
        // from the environment or a credentials file have none. First, while
        // the credential still holds the secret the revocation is signed with.
        if let Err(e) = self.om.revoke_s3_secret(access_key).await {
            tracing::warn!(error = %e, access_key, "cannot revoke the Ozone S3 secret");
        }
        let deleted = match self
            .om
            .delete_key(SYSTEM_OWNER, self.credentials_bucket(), access_key)
            .await
        {
            Ok(()) => true,
            Err(StorageError::NoSuchKey) => false,
            Err(e) => return Err(e),
        };
        Ok(deleted)
    }

    /// One InfoBucket of the credentials bucket: the OM (its leader, after
    /// any failover) answers and the gateway's credentials are there.
    async fn ready(&self) -> Result<()> {
        self.om
            .info_bucket(SYSTEM_OWNER, self.credentials_bucket())
            .await
            .map(drop)
    }
}

#[async_trait]
impl BucketStore for OzoneMetadata {
    async fn create_bucket(&self, owner: &Owner, bucket: NewBucket) -> Result<()> {
        match self
            .om
            .create_bucket(
                &owner.access_key,
                &self.ozone_name(&bucket.name),
                &bucket.region,
            )
            .await
        {
            Err(StorageError::BucketAlreadyExists) => match self.info_bucket(&bucket.name).await {
                Ok(info) if info.owner == owner.access_key => {
                    Err(StorageError::BucketAlreadyOwnedByYou)
                }
                _ => Err(StorageError::BucketAlreadyExists),
            },
            other => other,
        }
    }

    async fn bucket(&self, name: &str) -> Result<BucketInfo> {
        self.info_bucket(name).await
    }

    async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        let mut owned = Vec::new();
        let mut start = String::new();
        // Every bucket is listed as the gateway's system identity.
        let signer = owner.map_or(SYSTEM_OWNER, |owner| &owner.access_key);
        loop {
            let page = self
                .om
                .list_buckets(signer, &self.bucket_prefix, &start, LIST_BATCH)
                .await?;
            let Some(last) = page.last() else { break };
            start = last.name.clone();
            let full = page.len() >= LIST_BATCH;
            owned.extend(
                page.into_iter()
                    .filter(|b| owner.is_none_or(|owner| b.owner == owner.access_key))
                    .map(|b| self.facade_bucket(b)),
            );
            if !full {
                break;
            }
        }
        Ok(owned)
    }

    /// The OM has no conditional set-owner: the owner is checked first,
    /// then changed (a change by another replica in between is not seen).
    /// Signed as the system identity: `from` may be a deleted key, whose
    /// secret is gone.
    async fn set_bucket_owner(&self, name: &str, from: &Owner, to: &Owner) -> Result<()> {
        if self.info_bucket(name).await?.owner != from.access_key {
            return Err(StorageError::PreconditionFailed);
        }
        self.om
            .set_bucket_owner(SYSTEM_OWNER, &self.ozone_name(name), &to.access_key)
            .await
    }

    async fn delete_bucket(&self, owner: &Owner, name: &str) -> Result<()> {
        self.delete_own_bucket(owner, name).await?;
        // A bucket made again under the name never sees these (see
        // `BucketDocuments`): the sweep only reclaims their space.
        if let Err(e) = self.documents.sweep(name).await {
            tracing::warn!(bucket = name, error = %e, "bucket documents left behind");
        }
        Ok(())
    }
}

#[async_trait]
impl BucketDocumentStore for OzoneMetadata {
    async fn bucket_document(
        &self,
        bucket: &BucketInfo,
        kind: BucketDocument,
    ) -> Result<Option<String>> {
        self.documents.get(bucket, kind).await
    }

    async fn put_bucket_document(
        &self,
        _owner: &Owner,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        self.documents.put(bucket, kind, document).await
    }
}

#[async_trait]
impl ObjectStore for OzoneMetadata {
    async fn lookup(&self, owner: &Owner, object: &ObjectRef) -> Result<KeyInfo> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        if is_blank(key) {
            return Err(StorageError::NoSuchKey);
        }
        let name = self.ozone_name(bucket);
        let found = self
            .om
            .get_key_info(&owner.access_key, &name, key, false)
            .await?;
        let recorded = if found.is_multipart {
            self.checksums.object(&name, &found).await?
        } else {
            ObjectChecksums::default()
        };
        let mut info = key_info(found);
        info.bucket = bucket.to_owned();
        Ok(with_checksums(info, recorded))
    }

    async fn create_object(
        &self,
        owner: &Owner,
        object: ObjectRef,
        intent: WriteIntent,
    ) -> Result<OpenKey> {
        storable_key(&object.key)?;
        let name = self.ozone_name(&object.bucket);
        let key = object.key.as_str();
        let expect = self
            .expectation(owner, &name, key, &intent.condition)
            .await?;
        let size_hint = intent.size_hint.unwrap_or(0);
        let created = self
            .om
            .create_key(
                &owner.access_key,
                &name,
                key,
                size_hint,
                &intent.tags,
                &expect,
            )
            .await;
        match created {
            Ok(open) => Ok(self.remember(object, open, intent).await),
            Err(err) => Err(self.refusal(owner, &name, key, &expect, err).await),
        }
    }

    async fn allocate_block(&self, owner: &Owner, open: &OpenKey) -> Result<BlockLocation> {
        let ozone_open = self.open_key_of(open).await?;
        let block = self
            .om
            .allocate_block(&owner.access_key, &ozone_open)
            .await?;
        Ok(location_from_block(block))
    }

    async fn commit_object(
        &self,
        owner: &Owner,
        open: OpenKey,
        blocks: Vec<BlockLocation>,
        object: NewObject,
    ) -> Result<KeyInfo> {
        let ozone_open = self.take_open_key(&open).await?;
        if ozone_open.part.is_some() {
            return Err(StorageError::InvalidArgument(
                "an upload opened as a part must be committed as a part".into(),
            ));
        }
        let ozone_blocks: Vec<_> = blocks
            .iter()
            .map(|b| block_from_location(b, None))
            .collect();
        let metadata = object_metadata(&object.meta, object.checksum.as_ref());
        self.om
            .commit_key(
                &owner.access_key,
                &ozone_open,
                &ozone_blocks,
                &object.etag,
                &metadata,
            )
            .await?;
        Ok(committed_info(&open, &owner.access_key, blocks, object))
    }

    async fn abort_object(&self, _owner: &Owner, open: &OpenKey) -> Result<()> {
        // Ozone has no client command to drop an open key: the OM expires
        // it (and reclaims its blocks) on its own; it is never visible.
        self.open_keys.invalidate(&open.id).await;
        Ok(())
    }

    /// The OM deletes unconditionally: a condition is refused, never
    /// ignored.
    async fn delete_object(
        &self,
        owner: &Owner,
        object: ObjectRef,
        condition: DeleteCondition,
    ) -> Result<Deleted> {
        if !condition.is_none() {
            return Err(StorageError::NotImplemented(
                "a conditional delete on the Ozone back end (its OM deletes unconditionally)"
                    .into(),
            ));
        }
        if is_blank(&object.key) {
            // No such key can exist here; the OM would look at the bucket.
            return Ok(Deleted::default());
        }
        let name = self.ozone_name(&object.bucket);
        // Only a completed multipart object can have a record; finding out
        // which this is would cost a lookup on every delete as well.
        self.checksums.forget_object(&name, &object.key).await?;
        match self
            .om
            .delete_key(&owner.access_key, &name, &object.key)
            .await
        {
            Ok(()) | Err(StorageError::NoSuchKey) => Ok(Deleted::default()),
            Err(e) => Err(e),
        }
    }

    async fn put_tags(
        &self,
        owner: &Owner,
        object: ObjectRef,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        if is_blank(&object.key) {
            return Err(StorageError::NoSuchKey);
        }
        let name = self.ozone_name(&object.bucket);
        if tags.is_empty() {
            self.om
                .delete_tags(&owner.access_key, &name, &object.key)
                .await
        } else {
            self.om
                .put_tags(&owner.access_key, &name, &object.key, &tags)
                .await
        }
    }

    /// Ozone's OM has no call that changes a committed key's metadata
    /// alone (only its tags), and rewriting the data to change one entry
    /// would be a copy the caller did not ask for.
    async fn put_meta_entry(
        &self,
        _owner: &Owner,
        _object: ObjectRef,
        _change: MetaEntryChange,
    ) -> Result<()> {
        Err(StorageError::NotImplemented(
            "changing an existing object's metadata on the Ozone back end".into(),
        ))
    }

    async fn scan_objects(&self, owner: &Owner, scan: ScanRange) -> Result<Vec<ListEntry>> {
        let (prefix, after, limit) = (scan.prefix.as_str(), scan.after.as_slice(), scan.limit);
        let name = self.ozone_name(&scan.bucket);
        let mut start = start_key(after);
        // Ozone seeks to `startKey` only within the prefix.
        if start.as_str() < prefix {
            start.clear();
        }
        let mut out = Vec::new();
        let mut seen_any = false;
        'scan: while out.len() < limit {
            let (page, truncated) = self
                .list_ozone_keys(&owner.access_key, &name, prefix, &start, limit - out.len())
                .await?;
            let Some(last) = page.last() else { break };
            seen_any = true;
            start = last.key.clone();
            for entry in page {
                // The OM ignores a blank prefix and widens `/` to the whole
                // bucket: keys outside the prefix are dropped, and once one
                // sorts after it no later key can be inside it.
                if !entry.key.starts_with(prefix) {
                    if entry.key.as_str() > prefix {
                        break 'scan;
                    }
                    continue;
                }
                if entry.key.as_bytes() > after {
                    out.push(entry);
                }
            }
            if !truncated {
                break;
            }
        }
        // ListKeys reads no FILE_SYSTEM_OPTIMIZED bucket (its keys are in
        // the directory tables): it answers nothing, then, and only then
        // the bucket's layout is asked.
        if !seen_any
            && self
                .om
                .is_file_system_optimized(&owner.access_key, &name)
                .await?
        {
            return fso_listing::scan(&self.om, &owner.access_key, &name, prefix, after, limit)
                .await;
        }
        out.truncate(limit);
        Ok(out)
    }
}

#[async_trait]
impl UploadStore for OzoneMetadata {
    async fn create_multipart_upload(
        &self,
        owner: &Owner,
        object: ObjectRef,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        storable_key(&object.key)?;
        let metadata = object_metadata(&upload.meta, None);
        let upload_id = self
            .om
            .initiate_multipart(
                &owner.access_key,
                &self.ozone_name(&object.bucket),
                &object.key,
                &metadata,
                &upload.tags,
            )
            .await?;
        self.checksums
            .record_upload(
                &upload_id,
                (upload.checksum_algorithm, upload.checksum_type),
            )
            .await?;
        Ok(UploadInfo {
            bucket: object.bucket,
            key: object.key,
            upload_id,
            owner: owner.access_key.clone(),
            initiated: SystemTime::now(),
            meta: upload.meta,
            tags: upload.tags,
            checksum_algorithm: upload.checksum_algorithm,
            checksum_type: upload.checksum_type,
        })
    }

    async fn multipart_upload(&self, owner: &Owner, upload: &UploadRef) -> Result<UploadInfo> {
        let (bucket, key, upload_id) = (
            upload.object.bucket.as_str(),
            upload.object.key.as_str(),
            upload.upload_id.as_str(),
        );
        let name = self.ozone_name(bucket);
        let mut key_marker = String::new();
        let mut id_marker = String::new();
        loop {
            let page = self
                .om
                .list_uploads(
                    &owner.access_key,
                    &name,
                    key,
                    &key_marker,
                    &id_marker,
                    LIST_BATCH,
                )
                .await?;
            if let Some(found) = page
                .uploads
                .iter()
                .find(|u| u.key == key && u.upload_id == upload_id)
            {
                // Ozone does not hand back the metadata and tags the upload
                // was started with; the checksum settings are our record.
                let (algorithm, kind) = self.checksums.upload(upload_id).await?;
                return Ok(UploadInfo {
                    bucket: bucket.to_owned(),
                    key: key.to_owned(),
                    upload_id: upload_id.to_owned(),
                    owner: owner.access_key.clone(),
                    initiated: found.created,
                    meta: Default::default(),
                    tags: Vec::new(),
                    checksum_algorithm: algorithm,
                    checksum_type: kind,
                });
            }
            match (
                page.is_truncated,
                page.next_key_marker,
                page.next_upload_id_marker,
            ) {
                (true, Some(next_key), next_id) if next_key.as_str() <= key => {
                    key_marker = next_key;
                    id_marker = next_id.unwrap_or_default();
                }
                _ => return Err(StorageError::NoSuchUpload),
            }
        }
    }

    /// Only the upload's checksum record, which [`ChecksumRecords`] keeps
    /// once read: the OM itself refuses CreateKey for a part of an upload
    /// not in progress (NO_SUCH_MULTIPART_UPLOAD_ERROR), so UploadPart
    /// sends it only the part's own commands (CreateKey, AllocateBlock,
    /// CommitMultipartUploadPart), as Ozone's own S3 gateway does.
    async fn part_checksum_algorithm(
        &self,
        _owner: &Owner,
        upload: &UploadRef,
    ) -> Result<Option<ChecksumAlgorithm>> {
        Ok(self.checksums.upload(&upload.upload_id).await?.0)
    }

    async fn create_part(
        &self,
        owner: &Owner,
        part: &PartRef,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        let object = &part.upload.object;
        storable_key(&object.key)?;
        let number = part_number(part.number)?;
        let open = self
            .om
            .create_part(
                &owner.access_key,
                &self.ozone_name(&object.bucket),
                &object.key,
                &part.upload.upload_id,
                number,
                size_hint.unwrap_or(0),
            )
            .await?;
        Ok(self
            .remember(object.clone(), open, WriteIntent::default())
            .await)
    }

    async fn commit_part(
        &self,
        owner: &Owner,
        open: OpenKey,
        part: PartRef,
        blocks: Vec<BlockLocation>,
        commit: PartCommit,
    ) -> Result<PartInfo> {
        let ozone_open = self.take_open_key(&open).await?;
        let (upload_id, number) = (part.upload.upload_id.as_str(), part.number);
        let wanted = OpenPart {
            upload_id: upload_id.to_owned(),
            number: part_number(number)?,
        };
        if ozone_open.part.as_ref() != Some(&wanted) || part.upload.object != open.object {
            return Err(StorageError::InvalidArgument(format!(
                "this back end needs part {number} opened as that part (Storage::create_part)"
            )));
        }
        let ozone_blocks: Vec<_> = blocks
            .iter()
            .map(|b| block_from_location(b, Some(wanted.number)))
            .collect();
        self.om
            .commit_part(&owner.access_key, &ozone_open, &ozone_blocks, &commit.etag)
            .await?;
        if let Some(checksum) = &commit.checksum {
            self.checksums
                .record_part(upload_id, number, checksum)
                .await?;
        }
        Ok(PartInfo {
            number,
            size: blocks.iter().map(|b| b.length).sum(),
            etag: commit.etag,
            checksum: commit.checksum,
            last_modified: SystemTime::now(),
        })
    }

    async fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadRef,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        let name = self.ozone_name(&upload.object.bucket);
        let checksums = self.checksums.parts(&upload.upload_id).await?;
        let mut out = Vec::new();
        let mut marker = u32::from(after);
        while out.len() < limit {
            let want = (limit - out.len()).min(LIST_BATCH) as u32;
            let page = self
                .om
                .list_parts(
                    &owner.access_key,
                    &name,
                    &upload.object.key,
                    &upload.upload_id,
                    marker,
                    want,
                )
                .await?;
            out.extend(page.parts.into_iter().filter_map(|p| {
                let number = u16::try_from(p.number).ok()?;
                Some(PartInfo {
                    number,
                    size: p.size,
                    etag: p.etag.unwrap_or(p.name),
                    checksum: checksums.get(&number).cloned(),
                    last_modified: p.modified,
                })
            }));
            if !page.is_truncated || page.next_marker <= marker {
                break;
            }
            marker = page.next_marker;
        }
        out.truncate(limit);
        Ok(out)
    }

    async fn complete_multipart_upload(
        &self,
        owner: &Owner,
        upload: UploadRef,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        let (bucket, key, upload_id) = (
            upload.object.bucket.as_str(),
            upload.object.key.as_str(),
            upload.upload_id.as_str(),
        );
        let name = self.ozone_name(bucket);
        let expect = self
            .expectation(owner, &name, key, &complete.condition)
            .await?;
        let parts: Vec<(u32, String)> = complete
            .parts
            .iter()
            // Clients may quote part ETags; the OM compares bare ones.
            .map(|(number, etag)| (u32::from(*number), etag.trim_matches('"').to_owned()))
            .collect();
        let recorded = self.checksums.parts(upload_id).await?;
        let part_checksums: BTreeMap<u16, ObjectChecksum> = recorded
            .iter()
            .filter(|(number, _)| complete.parts.iter().any(|(n, _)| n == *number))
            .map(|(number, checksum)| (*number, checksum.clone()))
            .collect();
        let completed = self
            .om
            .complete_multipart(&owner.access_key, &name, key, upload_id, &parts, &expect)
            .await;
        if let Err(err) = completed {
            return Err(self.refusal(owner, &name, key, &expect, err).await);
        }
        let found = self
            .om
            .get_key_info(&owner.access_key, &name, key, false)
            .await?;
        let checksums = ObjectChecksums {
            whole: complete.checksum,
            parts: part_checksums,
        };
        if !checksums.is_empty() {
            let recorded = self
                .checksums
                .record_object(&name, &found, &checksums)
                .await;
            if let Err(e) = recorded {
                // The object is complete either way; it only lacks its checksums.
                tracing::warn!(error = %e, bucket, key, "cannot record the object's checksums");
            }
        }
        // An upload with a checksum algorithm has a checksum for every
        // part: without part records there is no upload record either.
        if !recorded.is_empty() {
            self.checksums
                .forget_upload(upload_id, recorded.into_keys())
                .await;
        }
        let mut info = key_info(found);
        info.bucket = bucket.to_owned();
        Ok(with_checksums(info, checksums))
    }

    /// Ozone keeps no part ETags on a completed key, but names the object
    /// after them (see [`ozone_multipart_etag`]).
    fn completed_by(&self, object: &KeyInfo, parts: &[(u16, String)]) -> bool {
        object.parts.len() == parts.len()
            && object
                .parts
                .iter()
                .zip(parts)
                .all(|(part, (number, _))| part.number == *number)
            && object.etag == ozone_multipart_etag(parts)
    }

    async fn abort_multipart_upload(&self, owner: &Owner, upload: UploadRef) -> Result<()> {
        self.om
            .abort_multipart(
                &owner.access_key,
                &self.ozone_name(&upload.object.bucket),
                &upload.object.key,
                &upload.upload_id,
            )
            .await?;
        let upload_id = upload.upload_id.as_str();
        match self.checksums.parts(upload_id).await {
            Ok(recorded) => {
                self.checksums
                    .forget_upload(upload_id, recorded.into_keys())
                    .await
            }
            Err(e) => tracing::warn!(error = %e, upload_id, "cannot list part checksum records"),
        }
        Ok(())
    }

    async fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: ScanRange,
    ) -> Result<Vec<UploadInfo>> {
        let (after, limit) = (scan.after.as_slice(), scan.limit);
        let name = self.ozone_name(&scan.bucket);
        let (mut key_marker, mut id_marker) = upload_markers(after);
        let mut out = Vec::new();
        while out.len() < limit {
            let page = self
                .om
                .list_uploads(
                    &owner.access_key,
                    &name,
                    &scan.prefix,
                    &key_marker,
                    &id_marker,
                    LIST_BATCH.min(limit - out.len()),
                )
                .await?;
            out.extend(
                page.uploads
                    .into_iter()
                    .filter(|u| upload_position(&u.key, &u.upload_id).as_slice() > after)
                    .map(|u| UploadInfo {
                        bucket: scan.bucket.clone(),
                        key: u.key,
                        upload_id: u.upload_id,
                        owner: owner.access_key.clone(),
                        initiated: u.created,
                        meta: Default::default(),
                        tags: Vec::new(),
                        checksum_algorithm: None,
                        checksum_type: None,
                    }),
            );
            match (page.is_truncated, page.next_key_marker) {
                (true, Some(next_key)) => {
                    key_marker = next_key;
                    id_marker = page.next_upload_id_marker.unwrap_or_default();
                }
                _ => break,
            }
        }
        out.truncate(limit);
        Ok(out)
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
