//! Knowing whether a handler read the request body to its end, and how many
//! bytes of it arrived.
//!
//! A handler that refuses a request (bad signature, missing bucket) often
//! answers without reading the body. Hyper then cannot reuse the HTTP/1.1
//! connection and closes it; unless the response says `Connection: close`,
//! a keep-alive client only learns that when its next request fails.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::{Body as _, Frame, SizeHint};

/// Reports whether the tracked body reached its end, and its bytes so far.
pub struct ReadTracker(Arc<ReadState>);

struct ReadState {
    done: AtomicBool,
    bytes: AtomicU64,
}

impl ReadTracker {
    pub fn fully_read(&self) -> bool {
        self.0.done.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.0.bytes.load(Ordering::Relaxed)
    }
}

/// Wraps `body`; the tracker says whether it was read to the end and how
/// many bytes it gave, and every byte is also added to `total` as it arrives.
pub fn track(body: Body, total: &Arc<AtomicU64>) -> (Body, ReadTracker) {
    let state = Arc::new(ReadState {
        done: AtomicBool::new(body.is_end_stream()),
        bytes: AtomicU64::new(0),
    });
    let tracked = Tracked {
        inner: body,
        state: Arc::clone(&state),
        total: Arc::clone(total),
    };
    (Body::new(tracked), ReadTracker(state))
}

struct Tracked {
    inner: Body,
    state: Arc<ReadState>,
    total: Arc<AtomicU64>,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            let len = data.len() as u64;
            self.state.bytes.fetch_add(len, Ordering::Relaxed);
            self.total.fetch_add(len, Ordering::Relaxed);
        }
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.state.done.store(true, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[test]
    fn an_empty_body_counts_as_read() {
        let (_body, tracker) = track(Body::empty(), &Arc::default());
        assert!(tracker.fully_read());
    }

    #[tokio::test]
    async fn a_body_is_read_only_once_consumed() {
        let total = Arc::new(AtomicU64::new(10));
        let (body, tracker) = track(Body::from("payload"), &total);
        assert!(!tracker.fully_read());
        body.collect().await.expect("body");
        assert!(tracker.fully_read());
        assert_eq!(tracker.bytes(), 7);
        assert_eq!(total.load(Ordering::Relaxed), 17);
    }

    #[test]
    fn a_dropped_body_is_unread() {
        let (body, tracker) = track(Body::from("payload"), &Arc::default());
        drop(body);
        assert!(!tracker.fully_read());
    }
}
