//! Everything below HTTP: the facade the gateway calls.
//!
//! The object store is split the way Ozone splits it: a metadata role (the
//! OM, [`om::MetadataStore`]) maps bucket/key to [`KeyInfo`] with block
//! locations and block tokens, and a block role (the DN, [`dn::BlockStore`])
//! stores and serves block byte ranges after checking the token. The gateway
//! only ever talks to [`Storage`]; it never sees redb, files or gRPC.
//!
//! Every call carries the caller's [`Identity`]. The OM role enforces
//! ownership (as Ozone's OM enforces ACLs), and every cache is keyed by the
//! identity, so nothing looked up for one access key ever serves another.

pub mod cache;
pub mod dn;
pub mod embedded;
pub mod error;
pub mod listing;
pub mod multipart;
pub mod om;
pub mod ozone;
pub mod private_files;
pub mod token;
mod types;
mod writer;

pub use embedded::ReclaimStats;
pub use error::{Result, StorageError};
pub use multipart::{
    CompleteUpload, NewUpload, PartCommit, PartInfo, PartListPage, UploadInfo, UploadListPage,
    UploadListQuery,
};
pub use storage::{ByteStream, OzoneStorageConfig, Storage, StorageConfig};
pub use types::*;
pub use writer::ObjectWriter;

mod storage;
