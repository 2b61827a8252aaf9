//! The embedded back end: the OM role on redb and the DN role on local
//! container directories, both in-process.
//!
//! On disk, under `data_dir`:
//! - `om.redb`: buckets, keys, credentials, open keys, multipart uploads
//!   and their parts, blocks awaiting reclamation and block-token secret
//!   keys (see [`schema`]).
//! - `containers/<container id>/<local id>.block` and `.crc`: block bytes
//!   and their per-window CRC32s (see [`block_file`]).

mod block_file;
mod dn;
mod om;
mod reclaimer;
mod schema;

pub use dn::EmbeddedDn;
pub use om::EmbeddedOm;
pub(crate) use om::OmSettings;
pub(crate) use reclaimer::BackgroundTask;
pub use reclaimer::{ReclaimStats, Reclaimer};

use std::time::{SystemTime, UNIX_EPOCH};

use crate::{Result, StorageError};

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Runs blocking file or database work off the async runtime.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StorageError::Internal(format!("blocking task failed: {e}")))?
}

/// Maps redb's error types into ours without letting redb into the public API.
pub(crate) trait DbResult<T> {
    fn db(self) -> Result<T>;
}

impl<T, E: Into<redb::Error>> DbResult<T> for std::result::Result<T, E> {
    fn db(self) -> Result<T> {
        self.map_err(|e| match e.into() {
            redb::Error::Io(io) => StorageError::Io(io),
            // An I/O error still, as far as callers (and the reopening) go.
            redb::Error::PreviousIo => StorageError::Io(std::io::Error::other(
                "the metadata store failed an earlier I/O and is being reopened",
            )),
            redb::Error::DatabaseAlreadyOpen => {
                StorageError::Unavailable("the database is open in another process".into())
            }
            other => StorageError::Internal(format!("metadata store: {other}")),
        })
    }
}
