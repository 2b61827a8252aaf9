//! One request and one reply on a gRPC bidi stream, as the datanodes'
//! container service and Ratis's `unordered` client stream are used: take
//! the reply, and let the stream end cleanly after it.
//!
//! Dropping a stream the server has not ended yet resets it (RST_STREAM).
//! Under minutes of small reads at a few thousand a second, h2 then logged
//! "locally-reset streams reached limit (1024)" and gave the connection
//! up: the calls on it failed with "Unknown transport error", mid-GET
//! (BENCHMARKS.md, "Ozone: a small block in one call each way"). The server ends the
//! stream right after the reply, once it sees our half-close: the rest of
//! the stream (its trailers) is read in the background, so the caller
//! waits for nothing more than the reply.

use std::time::Duration;

use tonic::{Status, Streaming};

/// How long the background read waits for the end of a stream after its
/// reply; a server that never ends one costs a reset, as before.
const END_WAIT: Duration = Duration::from_secs(5);

/// The first message of `replies` (`None` if the stream ended without
/// one); the rest of the stream is read to its end in the background.
pub(super) async fn one_reply<T: Send + 'static>(
    mut replies: Streaming<T>,
) -> Result<Option<T>, Status> {
    let reply = replies.message().await?;
    if reply.is_some() {
        tokio::spawn(async move {
            let rest = async { while let Ok(Some(_)) = replies.message().await {} };
            // Timing out only drops the stream, which resets it.
            let _ = tokio::time::timeout(END_WAIT, rest).await;
        });
    }
    Ok(reply)
}
