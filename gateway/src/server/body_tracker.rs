//! Knowing whether a handler read the request body to its end.
//!
//! A handler that refuses a request (bad signature, missing bucket) often
//! answers without reading the body. Hyper then cannot reuse the HTTP/1.1
//! connection and closes it; unless the response says `Connection: close`,
//! a keep-alive client only learns that when its next request fails.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::{Body as _, Frame, SizeHint};

/// Reports whether the tracked body reached its end.
pub struct ReadTracker(Arc<AtomicBool>);

impl ReadTracker {
    pub fn fully_read(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Wraps `body`; the tracker says whether it was read to the end.
pub fn track(body: Body) -> (Body, ReadTracker) {
    let done = Arc::new(AtomicBool::new(body.is_end_stream()));
    let tracked = Tracked {
        inner: body,
        done: Arc::clone(&done),
    };
    (Body::new(tracked), ReadTracker(done))
}

struct Tracked {
    inner: Body,
    done: Arc<AtomicBool>,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.done.store(true, Ordering::Relaxed);
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
        let (_body, tracker) = track(Body::empty());
        assert!(tracker.fully_read());
    }

    #[tokio::test]
    async fn a_body_is_read_only_once_consumed() {
        let (body, tracker) = track(Body::from("payload"));
        assert!(!tracker.fully_read());
        body.collect().await.expect("body");
        assert!(tracker.fully_read());
    }

    #[test]
    fn a_dropped_body_is_unread() {
        let (body, tracker) = track(Body::from("payload"));
        drop(body);
        assert!(!tracker.fully_read());
    }
}
