//! The crate's error: what went wrong, in terms the gateway can map to S3.

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    #[error("the bucket does not exist")]
    NoSuchBucket,
    #[error("the key does not exist")]
    NoSuchKey,
    #[error("the bucket name is taken by another owner")]
    BucketAlreadyExists,
    #[error("the bucket already exists and is yours")]
    BucketAlreadyOwnedByYou,
    #[error("the bucket is not empty")]
    BucketNotEmpty,
    #[error("access denied")]
    AccessDenied,
    #[error("the version does not exist")]
    NoSuchVersion,
    /// The version named, or (`addressed` false) the key's latest, is a
    /// delete marker: S3 answers 405 or 404 with `x-amz-delete-marker`.
    #[error("the version is a delete marker")]
    DeleteMarker { version_id: String, addressed: bool },
    /// The back end cannot keep what was asked (it is named in the message).
    #[error("not implemented: {0}")]
    NotImplemented(String),
    #[error("the multipart upload does not exist")]
    NoSuchUpload,
    #[error("invalid part: {0}")]
    InvalidPart(String),
    #[error("a write condition did not hold")]
    PreconditionFailed,
    /// The version is under retention or legal hold (see `VersionLock`).
    #[error("the version is protected by object lock")]
    ObjectLocked,
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("block token refused: {0}")]
    TokenRefused(String),
    #[error("stored data failed its checksum: {0}")]
    Corrupt(String),
    #[error("the back end is unavailable: {0}")]
    Unavailable(String),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("internal error: {0}")]
    Internal(String),
}

/// A copy for each caller that shares one outcome (a coalesced load). An
/// I/O error keeps its kind and message; its source chain is not copied.
impl Clone for StorageError {
    fn clone(&self) -> Self {
        match self {
            Self::NoSuchBucket => Self::NoSuchBucket,
            Self::NoSuchKey => Self::NoSuchKey,
            Self::BucketAlreadyExists => Self::BucketAlreadyExists,
            Self::BucketAlreadyOwnedByYou => Self::BucketAlreadyOwnedByYou,
            Self::BucketNotEmpty => Self::BucketNotEmpty,
            Self::AccessDenied => Self::AccessDenied,
            Self::PreconditionFailed => Self::PreconditionFailed,
            Self::ObjectLocked => Self::ObjectLocked,
            Self::NoSuchUpload => Self::NoSuchUpload,
            Self::NoSuchVersion => Self::NoSuchVersion,
            Self::DeleteMarker {
                version_id,
                addressed,
            } => Self::DeleteMarker {
                version_id: version_id.clone(),
                addressed: *addressed,
            },
            Self::NotImplemented(m) => Self::NotImplemented(m.clone()),
            Self::InvalidPart(m) => Self::InvalidPart(m.clone()),
            Self::InvalidArgument(m) => Self::InvalidArgument(m.clone()),
            Self::TokenRefused(m) => Self::TokenRefused(m.clone()),
            Self::Corrupt(m) => Self::Corrupt(m.clone()),
            Self::Unavailable(m) => Self::Unavailable(m.clone()),
            Self::Io(e) => Self::Io(std::io::Error::new(e.kind(), e.to_string())),
            Self::Internal(m) => Self::Internal(m.clone()),
        }
    }
}
