//! The embedded back end: the OM role on redb and the DN role on local
//! container directories, both in-process.
//!
//! On disk, under `data_dir`:
//! - `om.redb`: buckets, keys, credentials, open keys, multipart uploads
//!   and their parts, blocks awaiting reclamation, block-token secret keys
//!   (see [`schema`]), and the bytes of objects of up to
//!   `object_with_key_max`, each kept with its key (see [`block_row`]).
//! - `containers/<container id>/<local id>.block` and `.crc`: block bytes
//!   and their per-window CRC32s (see [`block_file`]).
//! - `dn.redb`: the DN's small blocks, each with its CRC32s (see
//!   [`small_blocks`]).

mod block_file;
mod block_row;
mod dn;
mod local_report;
mod om;
mod reclaimer;
mod schema;
mod small_blocks;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use dn::{DnSettings, EmbeddedDn};
use om::{EmbeddedOm, OmSettings};
use reclaimer::Reclaimer;
use small_blocks::SmallBlocks;

use crate::backend::Backend;
use crate::token::KeyRing;
use crate::writer::WriteSizes;
use crate::{Result, StorageConfig, StorageError, private_files};

/// Opens (creating if needed) the embedded back end under `config.data_dir`
/// and starts its reclaimer.
pub(crate) async fn open(config: StorageConfig) -> Result<Backend> {
    config.validate()?;
    let containers = config.data_dir.join("containers");
    let db_path = config.data_dir.join("om.redb");
    let (dir, containers_dir) = (config.data_dir.clone(), containers.clone());
    blocking(move || {
        private_files::ensure_private_dir(&dir)?;
        private_files::ensure_private_dir(&containers_dir)?;
        Ok(())
    })
    .await?;
    let keys = Arc::new(KeyRing::default());
    let settings = OmSettings {
        block_size: config.block_size,
        token_lifetime: config.token_lifetime,
        key_rotation: config.token_key_rotation,
        db_cache: config.metadata_db_cache,
        bytes_per_checksum: config.bytes_per_checksum,
    };
    let om_keys = Arc::clone(&keys);
    let data_dir = config.data_dir.clone();
    let small_path = config.data_dir.join("dn.redb");
    let bytes_per_checksum = config.bytes_per_checksum;
    let small_block_cache = config.small_block_db_cache;
    let (om, small) = blocking(move || {
        create_private(&db_path)?;
        let om = EmbeddedOm::open(&db_path, om_keys, settings)?;
        create_private(&small_path)?;
        let small = SmallBlocks::open(&small_path, bytes_per_checksum, small_block_cache)?;
        // Make the new directory entries (om.redb, dn.redb, containers/) durable too.
        std::fs::File::open(&data_dir)?.sync_all()?;
        Ok((om, small))
    })
    .await?;
    let om = Arc::new(om);
    // Nothing of this process is writing yet: every open key belongs to
    // a previous process and can never be committed.
    om.expire_open_keys(u64::MAX).await?;
    let read_piece = config.read_piece();
    if read_piece != config.read_buffer {
        tracing::info!(
            read_buffer = config.read_buffer,
            in_effect = read_piece,
            "read_buffer rounded to whole checksum windows"
        );
    }
    let dn = Arc::new(EmbeddedDn::new(
        &containers,
        keys,
        small,
        DnSettings {
            bytes_per_checksum: config.bytes_per_checksum,
            read_buffer: read_piece,
            inline_read: config.inline_read,
            small_block_max: config.small_block_max,
        },
    ));
    // Allocations are not durable until a commit follows them: files a
    // crash left for ids the OM will hand out again are removed here.
    let orphans = dn
        .remove_unallocated(om.first_unallocated_block().await?)
        .await?;
    if orphans > 0 {
        tracing::info!(
            blocks = orphans,
            "removed blocks of uploads lost in a crash"
        );
    }
    let reclaimer = Arc::new(Reclaimer::new(
        Arc::clone(&om),
        Arc::clone(&dn),
        config.open_key_expiry,
        config.multipart_upload_expiry,
        config.reclaim_grace,
    ));
    let background = reclaimer.spawn(config.reclaim_interval);
    Ok(Backend {
        metadata: om.clone(),
        keeps_versions: true,
        completed_by: crate::metadata::recorded_parts_are,
        blocks: dn.clone(),
        write: WriteSizes {
            block_size: config.block_size,
            chunk_size: config.chunk_size,
            blocks_in_flight: config.blocks_in_flight,
            with_key_max: config.object_with_key_max,
        },
        cache: config.cache(),
        reclaimer: Some(reclaimer),
        background: Some(background),
        local_store: Some(Arc::new(local_report::LocalReport {
            om: Arc::clone(&om),
            dn: Arc::clone(&dn),
        })),
        calls: Vec::new(),
        cluster: None,
    })
}

/// redb would create its file with the umask's mode; the OM's holds every
/// secret and the DN's object bytes, so each starts out as an empty
/// owner-only file (which redb initialises), and an old one is narrowed.
fn create_private(path: &std::path::Path) -> Result<()> {
    if path.exists() {
        private_files::tighten_file(path)?;
    } else {
        private_files::private_file_options()
            .write(true)
            .create_new(true)
            .open(path)?;
    }
    Ok(())
}

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
