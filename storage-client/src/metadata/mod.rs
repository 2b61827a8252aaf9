//! The metadata role (Ozone's OM), split the way its data splits: one role
//! trait for credentials, buckets, bucket documents, objects, multipart
//! uploads and versions each. Every back end implements all of them
//! ([`Metadata`]), and so does the cache's decorator
//! ([`crate::cache::CachedMetadata`]) that the facade holds around the back
//! end's, as one trait object.
//!
//! Authorisation is not here. A bucket belongs to the access key that
//! created it; the gateway decides who may act on it and every
//! bucket-scoped call names the [`Owner`] the decision judged. That is a
//! precondition, not a decision: the embedded OM requires, inside the
//! call's transaction, that the bucket still has that owner (so a bucket
//! deleted and made again by another key since the decision is refused);
//! Ozone acts under the owner's name in the OM (the user its requests are
//! signed as) and has no transaction to check it in.
//!
//! Arguments travel as small named structs ([`ObjectName`], [`UploadName`],
//! [`ScanRange`]) and no role method has a default body, so a back end
//! states every behaviour it has.

mod bucket_documents;
mod buckets;
mod credentials;
mod objects;
mod uploads;
mod versions;

pub(crate) use bucket_documents::BucketDocumentStore;
pub(crate) use buckets::{BucketStore, NewBucket};
pub(crate) use credentials::CredentialStore;
pub(crate) use objects::{ObjectName, ObjectStore, OpenKey, ScanRange};
pub(crate) use uploads::{PartName, UploadName, UploadStore, recorded_parts_are};
pub(crate) use versions::VersionStore;

use crate::{Result, StorageError};

/// S3's limit on key length, in UTF-8 bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// Every metadata role of one back end.
pub(crate) trait Metadata:
    CredentialStore + BucketStore + BucketDocumentStore + ObjectStore + UploadStore + VersionStore
{
}

impl<T> Metadata for T where
    T: CredentialStore
        + BucketStore
        + BucketDocumentStore
        + ObjectStore
        + UploadStore
        + VersionStore
{
}

/// S3 object-key rules every back end applies: non-empty, at most
/// [`MAX_KEY_BYTES`] bytes.
pub(crate) fn validate_key(key: &str) -> Result<()> {
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
