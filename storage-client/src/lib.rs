//! Everything below HTTP: the facade the gateway calls.
//!
//! The object store is split the way Ozone splits it: a metadata role (the
//! OM, [`metadata`]: credentials, buckets, objects, uploads) maps bucket/key to
//! [`KeyInfo`] with block locations and block tokens, and a block role (the
//! DN, [`blocks`]) stores and serves block byte ranges after checking the
//! token. Each back end ([`embedded`], [`ozone`]) opens itself into trait
//! objects of those roles; [`Storage`], the only way in from outside,
//! holds them with the [`cache`] in front. The gateway never sees redb,
//! files or gRPC, and the compiler enforces it: only the facade, the data
//! it takes and returns, and [`private_files`] (the owner-only file modes
//! of the data directory, which the gateway's admin bootstrap writes into
//! too) are public.
//!
//! Nothing here decides who may ask: the gateway decides, then every
//! bucket-scoped call names the bucket's [`Owner`] the decision judged,
//! inside the [`BucketRef`] it takes (a precondition the back end checks
//! where it can, see [`metadata`]), and every cache whose answer depends on it
//! is keyed by it.

mod backend;
mod blocks;
mod bucket_document;
mod cache;
mod calls;
mod config;
mod embedded;
mod error;
mod listing;
mod metadata;
mod multipart;
mod object_lock;
mod ozone;
mod ozone_tls;
pub mod private_files;
mod refs;
mod storage;
mod token;
mod types;
mod version_listing;
mod versions;
mod writer;

pub use backend::{ClusterView, DatanodeSeen, DiskUsage, SmallBlockUsage};
pub use blocks::ByteStream;
pub use bucket_document::{BucketDocument, MAX_BUCKET_DOCUMENT_BYTES};
pub use cache::{CacheCounters, CacheStats};
pub use calls::{CallSample, Histogram, HistogramSnapshot, LATENCY_BUCKETS};
pub use config::{OzoneStorageConfig, RecordsKey, StorageConfig, SystemSecret};
pub use error::{Result, StorageError};
pub use metadata::{MAX_KEY_BYTES, MetadataFacade};
pub use multipart::{
    CompleteUpload, NewUpload, PartCommit, PartInfo, PartListPage, PartSettings, UploadInfo,
    UploadListPage, UploadListQuery,
};
pub use object_lock::{
    LEGAL_HOLD_ENTRY, LEGAL_HOLD_OFF, LEGAL_HOLD_ON, RETENTION_ENTRY, Retention, RetentionMode,
    VersionLock,
};
pub use ozone_tls::OzoneTls;
pub use refs::{BucketRef, MAX_PART_NUMBER, ObjectRef, PartNumber, UploadRef};
pub use storage::Storage;
pub use types::*;
pub use versions::{
    Deleted, NULL_VERSION_ID, VersionEntry, VersionListPage, VersionListQuery, Versioning,
};
pub use writer::ObjectWriter;

/// What the live tests of the Ozone wire clients reach past the facade:
/// the clients themselves and the block model they speak. Not part of the
/// gateway's interface; built only with the `test-support` feature.
#[cfg(feature = "test-support")]
pub mod test_support {
    pub use crate::ozone::dn_client::{DnClient, DnConfig};
    pub use crate::ozone::model::{Datanode, KeyExpectation, OzoneBlock, OzoneKey, RatisPipeline};
    pub use crate::ozone::om_client::{OmClient, OmConfig};
    pub use crate::ozone::proto;
    pub use crate::ozone::ratis_client::{RatisClient, RatisConfig, Replicated};
}

/// What the block-token fuzz target in `fuzz/` drives, and the token
/// microbenchmarks in `benches/` time: the token codec and its checks,
/// which only the block role uses. Built only with the `fuzzing` feature
/// (see docs/fuzzing.md).
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    pub use crate::token::{
        Access, AccessMode, KeyRing, SecretKey, TokenIdentifier, issue, verify,
    };
}
