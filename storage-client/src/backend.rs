//! What a back end hands the facade when it opens (`embedded::open`,
//! `ozone::open`): its roles as trait objects and how to drive them.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::task::JoinHandle;

use crate::blocks::BlockStore;
use crate::cache::CacheConfig;
use crate::calls::CallTable;
use crate::metadata::{CompletedBy, Metadata};
use crate::writer::WriteSizes;
use crate::{ReclaimStats, Result};

pub(crate) struct Backend {
    pub metadata: Arc<dyn Metadata>,
    /// Whether it keeps object versions (Ozone does not), and so can keep
    /// object lock, which protects versions.
    pub keeps_versions: bool,
    /// How it recognises the object an upload's completion made.
    pub completed_by: CompletedBy,
    pub blocks: Arc<dyn BlockStore>,
    /// How the writer cuts uploads into chunks and blocks.
    pub write: WriteSizes,
    pub cache: CacheConfig,
    /// `None` where the back end reclaims on its own (Ozone).
    pub reclaimer: Option<Arc<dyn Reclaim>>,
    /// Work the back end runs while the facade lives.
    pub background: Option<BackgroundTask>,
    /// `None` where the blocks are on no local disk of the gateway (Ozone).
    pub local_store: Option<Arc<dyn LocalStoreReport>>,
    /// Its remote calls, timed (none for the embedded back end, whose
    /// roles run in this process).
    pub calls: Vec<Arc<CallTable>>,
    /// `None` where the back end runs in this process (embedded).
    pub cluster: Option<Arc<dyn ClusterReport>>,
}

/// Reclamation of blocks nobody references any more.
#[async_trait]
pub(crate) trait Reclaim: Send + Sync {
    /// One pass now.
    async fn run_once(&self) -> Result<ReclaimStats>;
}

/// A store on this machine's disk (the embedded back end), saying how
/// much its small-block stores hold and how full the disk is.
pub(crate) trait LocalStoreReport: Send + Sync {
    fn small_block_usage(&self) -> SmallBlockUsage;
    /// The file system holding the block files; `None` if it cannot be read.
    fn disk_usage(&self) -> Option<DiskUsage>;
}

/// A back end on a cluster, saying what the gateway sees of it.
pub(crate) trait ClusterReport: Send + Sync {
    fn cluster_view(&self) -> ClusterView;
}

/// What the gateway sees of a cluster: its metadata servers, the one it
/// believes leads, and each datanode it has called since the start, with
/// whether the last call to it got an answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterView {
    pub oms: Vec<String>,
    pub om_leader: Option<String>,
    pub datanodes: Vec<DatanodeSeen>,
}

/// A datanode as the gateway last found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatanodeSeen {
    pub uuid: String,
    pub host: String,
    pub reachable: bool,
}

/// A background loop; stops when dropped.
pub(crate) struct BackgroundTask(pub JoinHandle<()>);

impl Drop for BackgroundTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The size of the file system under a data dir and what is left of it
/// for the gateway (an unprivileged process: `statvfs`'s `f_bavail`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskUsage {
    pub total_bytes: u64,
    pub available_bytes: u64,
}

/// How many small blocks the store holds (on the DN or kept with their
/// keys), and their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmallBlockUsage {
    pub blocks: u64,
    pub bytes: u64,
}
