//! Reclamation of blocks nobody references any more: blocks of replaced or
//! deleted objects and of uploads that were aborted or never committed.
//! The OM queues them in the same transaction that drops the reference;
//! this task deletes the blocks (files, or rows of the DN's small-block
//! store) and only then forgets the queue rows, so a crash in between just
//! repeats the work.

use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;

use super::dn::EmbeddedDn;
use super::now_ms;
use super::om::EmbeddedOm;
use crate::backend::{BackgroundTask, Reclaim};
use crate::{ReclaimStats, Result};

/// Queue rows handled per step, bounding one transaction's size.
const BATCH: usize = 1000;

pub(super) struct Reclaimer {
    om: Arc<EmbeddedOm>,
    dn: Arc<EmbeddedDn>,
    open_key_expiry: Duration,
    upload_expiry: Duration,
    grace: Duration,
}

impl Reclaimer {
    /// `grace`: how long a queued block stays readable, so that a read that
    /// looked the old object up just before an overwrite can still finish.
    pub(crate) fn new(
        om: Arc<EmbeddedOm>,
        dn: Arc<EmbeddedDn>,
        open_key_expiry: Duration,
        upload_expiry: Duration,
        grace: Duration,
    ) -> Self {
        Self {
            om,
            dn,
            open_key_expiry,
            upload_expiry,
            grace,
        }
    }

    /// Runs a pass every `interval` for as long as the reclaimer is alive.
    pub(crate) fn spawn(self: &Arc<Self>, interval: Duration) -> BackgroundTask {
        // A weak reference, so the task never keeps the database open.
        let weak: Weak<Self> = Arc::downgrade(self);
        BackgroundTask(tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                let Some(reclaimer) = weak.upgrade() else {
                    return;
                };
                if let Err(e) = reclaimer.run_once().await {
                    tracing::warn!(error = %e, "block reclamation failed; will retry");
                }
            }
        }))
    }
}

#[async_trait]
impl Reclaim for Reclaimer {
    /// Expires stale open keys and multipart uploads, then deletes every block queued longer than the grace period.
    async fn run_once(&self) -> Result<ReclaimStats> {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let now = now_ms();
        let mut stats = ReclaimStats {
            expired_uploads: self
                .om
                .expire_open_keys(now.saturating_sub(ms(self.open_key_expiry)))
                .await?
                + self
                    .om
                    .expire_uploads(now.saturating_sub(ms(self.upload_expiry)))
                    .await?,
            deleted_blocks: 0,
        };
        // Read the clock again: rows queued by the expiries above carry a time
        // at or after `now`, and a zero grace must include them.
        let cutoff = now_ms().saturating_sub(ms(self.grace)).saturating_add(1);
        loop {
            let blocks = self.om.deleted_blocks(cutoff, BATCH).await?;
            if blocks.is_empty() {
                return Ok(stats);
            }
            self.dn.delete_blocks(blocks.clone()).await?;
            stats.deleted_blocks += blocks.len();
            self.om.forget_deleted(blocks).await?;
        }
    }
}
