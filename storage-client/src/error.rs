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
    #[error("the multipart upload does not exist")]
    NoSuchUpload,
    #[error("invalid part: {0}")]
    InvalidPart(String),
    #[error("a write condition did not hold")]
    PreconditionFailed,
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
