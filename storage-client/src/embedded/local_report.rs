//! What the embedded store reports of this machine's disk: its small
//! blocks, on the DN (`dn.redb`) and kept with their keys (`om.redb`), and
//! the file system under the block files.

use std::sync::Arc;

use super::dn::EmbeddedDn;
use super::om::EmbeddedOm;
use crate::backend::{DiskUsage, LocalStoreReport, SmallBlockUsage};

pub(super) struct LocalReport {
    pub(super) om: Arc<EmbeddedOm>,
    pub(super) dn: Arc<EmbeddedDn>,
}

impl LocalStoreReport for LocalReport {
    fn small_block_usage(&self) -> SmallBlockUsage {
        let on_dn = self.dn.small_block_usage();
        // A read of the OM's totals fails only while its database is being
        // reopened after an I/O error, which the OM's own calls report.
        let with_keys = self.om.usage_with_keys().unwrap_or_default();
        SmallBlockUsage {
            blocks: on_dn.blocks + with_keys.blocks,
            bytes: on_dn.bytes + with_keys.bytes,
        }
    }

    fn disk_usage(&self) -> Option<DiskUsage> {
        self.dn.disk_usage()
    }
}
