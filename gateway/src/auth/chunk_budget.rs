//! The memory signed aws-chunked bodies may hold across all requests.
//!
//! A signed chunk is buffered whole until its signature verifies, so each
//! upload holds up to one chunk in memory. The budget bounds the sum: a
//! chunk waits for room up to `wait`, then its request fails with
//! `503 SlowDown`, which SDKs retry with backoff.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::S3Error;

#[derive(Clone)]
pub(crate) struct ChunkBudget {
    bytes: Arc<Semaphore>,
    wait: Duration,
}

impl ChunkBudget {
    /// `bytes` at most `u32::MAX` (the configuration checks it).
    pub(crate) fn new(bytes: usize, wait: Duration) -> Self {
        Self {
            bytes: Arc::new(Semaphore::new(bytes)),
            wait,
        }
    }

    /// Room for a chunk of `size` bytes, held until the permit is dropped.
    pub(crate) async fn reserve(&self, size: usize) -> Result<OwnedSemaphorePermit, S3Error> {
        let permits = u32::try_from(size).map_err(|_| S3Error::slow_down())?;
        let reserve = Arc::clone(&self.bytes).acquire_many_owned(permits);
        match tokio::time::timeout(self.wait, reserve).await {
            Ok(Ok(permit)) => Ok(permit),
            // Closed never happens; timed out means too many uploads at once.
            Ok(Err(_)) | Err(_) => Err(S3Error::slow_down()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn chunks_wait_for_room_then_slow_down() {
        let budget = ChunkBudget::new(100, Duration::from_secs(5));
        let first = budget.reserve(60).await.expect("room");
        let error = budget
            .reserve(60)
            .await
            .expect_err("no room within the wait");
        assert_eq!((error.code, error.status.as_u16()), ("SlowDown", 503));

        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.reserve(60).await.map(drop) }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(first);
        assert!(
            waiting.await.expect("task").is_ok(),
            "room freed within the wait"
        );
    }
}
