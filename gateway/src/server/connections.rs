//! Accepting, bounding and closing connections.
//!
//! - At most `max_connections` are served at once. When all are taken, the
//!   connection that has been idle longest (no request in flight) is asked
//!   to close, and the newcomer waits briefly for a place (at most
//!   `max_connections` wait). If none frees up, it joins a small overflow
//!   lane that answers `/health` (so a load balancer still sees a live
//!   process) and `503 SlowDown` to everything else, then closes. Beyond
//!   that, connections are closed at once. Every connection costs one file
//!   descriptor; a served one ~30 KiB.
//! - A connection that sends no complete request within
//!   `request_header_timeout` is closed (an HTTP/2 preface and nothing else,
//!   a HEADERS frame that never ends; hyper bounds HTTP/1.1 itself), and so
//!   is one with no request in flight for `idle_timeout`.
//! - Closing is graceful (HTTP/2 GOAWAY, HTTP/1.1 after the response), but a
//!   connection with nothing in flight that is still open [`CLOSE_GRACE`]
//!   later is dropped: a peer that never answers cannot hold it, nor hold
//!   up shutdown.
//! - Accept errors (out of file descriptors) back off and are logged at
//!   most once a second.
//! - With `proxy_protocol`, a connection from a trusted proxy starts with a
//!   PROXY header ([`super::proxy_header`]) naming the client, read within
//!   `request_header_timeout`; one without it is closed.

use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use futures::StreamExt;
use http::Request;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::time::{Instant, sleep, sleep_until, timeout};
use tokio_rustls::rustls::ProtocolVersion;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::connection_threads::ConnectionThreads;
use super::metrics::Metrics;
use super::proxy_header;
use super::tls::Certificates;
use crate::client_address::{ClientAddr, Tls, TrustedProxies};

/// Connections answered on the overflow lane beyond `max_connections`.
/// Small, since each only gets one answer.
const OVERFLOW_CONNECTIONS: usize = 64;
/// How long a connection waits for a place freed by closing an idle one
/// (which takes at most [`CLOSE_GRACE`]).
const ADMISSION_WAIT: Duration = Duration::from_secs(2);
/// How long an overflow connection may take to send its one request.
const OVERFLOW_REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a connection being closed, with nothing in flight, may take to
/// go: a well-behaved peer answers a GOAWAY in a round trip.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// Accept errors back off from this...
const FIRST_ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// ...doubling up to this, until an accept succeeds.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The limits this module enforces.
#[derive(Clone, Copy, Debug)]
pub(super) struct ConnectionLimits {
    pub max_connections: usize,
    pub request_header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// How an accepted connection is served: HTTP with `http`, on a runtime
/// `threads` picks.
pub(super) struct Runner {
    pub http: auto::Builder<TokioExecutor>,
    pub threads: ConnectionThreads,
}

/// What comes before HTTP on a connection.
pub(super) struct Front {
    /// Served over TLS with these, if any.
    pub tls: Option<Arc<Certificates>>,
    /// The proxies whose connections start with a PROXY header, when
    /// `proxy_protocol` is on.
    pub proxy_protocol: Option<TrustedProxies>,
}

/// Marks a request that arrived on the overflow lane; the handler answers
/// it with `/health` or `503 SlowDown` only.
#[derive(Clone, Copy, Debug)]
pub(super) struct Overflow;

/// A TLS connection's protocol version as `s3:TlsVersion` compares it.
fn tls_version(version: Option<ProtocolVersion>) -> Tls {
    let version = match version {
        Some(ProtocolVersion::TLSv1_3) => Some("1.3"),
        Some(ProtocolVersion::TLSv1_2) => Some("1.2"),
        _ => None,
    };
    Tls { version }
}

/// Serves connections from `listeners` until `shutdown` resolves, then
/// closes them gracefully and returns once every one has ended.
pub(super) async fn serve(
    listeners: Vec<TcpListener>,
    front: Front,
    runner: Runner,
    app: axum::Router,
    limits: ConnectionLimits,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) {
    let Runner { http, threads } = runner;
    let server = Arc::new(Server {
        builder: http,
        app,
        tls: front.tls,
        proxy_protocol: front.proxy_protocol,
        limits,
        metrics,
        places: Arc::new(Semaphore::new(limits.max_connections)),
        waiting: Arc::new(Semaphore::new(limits.max_connections)),
        overflow: Arc::new(Semaphore::new(OVERFLOW_CONNECTIONS)),
        open: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(0),
        closing: CancellationToken::new(),
    });
    let mut accept_errors = Throttled::default();
    let mut refusals = Throttled::default();
    let mut backoff = FIRST_ACCEPT_BACKOFF;
    let mut shutdown = pin!(shutdown);
    // One stream of accepted connections from every listener, taken in turn.
    let mut accepted = futures::stream::select_all(listeners.into_iter().map(|listener| {
        Box::pin(futures::stream::unfold(listener, |listener| async move {
            let next = listener.accept().await;
            Some((next, listener))
        }))
    }));
    loop {
        let stream = tokio::select! {
            Some(next) = accepted.next() => match next {
                Ok((stream, _peer)) => {
                    backoff = FIRST_ACCEPT_BACKOFF;
                    stream
                }
                Err(e) => {
                    // Usually out of file descriptors: retrying at once
                    // would spin, and logging each failure would flood.
                    if let Some(suppressed) = accept_errors.due() {
                        tracing::warn!(error = %e, suppressed, "accept failed");
                    }
                    sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Small responses should leave at once, not wait for Nagle.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        if let Ok(place) = Arc::clone(&server.places).try_acquire_owned() {
            let server = Arc::clone(&server);
            threads.spawn(stream, move |stream| {
                server.run(stream, place, Lane::Regular)
            });
            continue;
        }
        // Full: an idle connection makes way, and the newcomer waits for a
        // place in a waiting room as large as the connection limit.
        let handoff = server.close_longest_idle();
        if let Ok(waiting) = Arc::clone(&server.waiting).try_acquire_owned() {
            let server = Arc::clone(&server);
            threads.spawn(stream, move |stream| server.admit(stream, waiting, handoff));
            continue;
        }
        match Arc::clone(&server.overflow).try_acquire_owned() {
            Ok(lane) => {
                let server = Arc::clone(&server);
                threads.spawn(stream, move |stream| {
                    server.run(stream, lane, Lane::Overflow)
                });
            }
            Err(_) => {
                if let Some(suppressed) = refusals.due() {
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        suppressed,
                        "connection limit reached: closing new connections"
                    );
                }
            }
        }
    }
    drop(accepted);
    tracing::info!("shutting down: waiting for in-flight requests");
    server.closing.cancel();
    let all = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    // Every connection holds a permit until it ends.
    let _ = server
        .places
        .acquire_many(all(limits.max_connections))
        .await;
    let _ = server
        .overflow
        .acquire_many(all(OVERFLOW_CONNECTIONS))
        .await;
}

/// What every connection task shares.
struct Server {
    builder: auto::Builder<TokioExecutor>,
    app: axum::Router,
    tls: Option<Arc<Certificates>>,
    proxy_protocol: Option<TrustedProxies>,
    limits: ConnectionLimits,
    metrics: Arc<Metrics>,
    /// One permit per connection served.
    places: Arc<Semaphore>,
    /// One permit per connection waiting for a place.
    waiting: Arc<Semaphore>,
    /// One permit per connection on the overflow lane.
    overflow: Arc<Semaphore>,
    /// The served connections, so that an idle one can be asked to close.
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next_id: AtomicU64,
    /// Cancelled at shutdown.
    closing: CancellationToken,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lane {
    Regular,
    Overflow,
}

impl Server {
    /// Waits briefly for a place (an idle connection is freeing one, or a
    /// busy one may end), else serves `stream` on the overflow lane, else
    /// closes it.
    async fn admit(
        self: Arc<Self>,
        stream: TcpStream,
        waiting: OwnedSemaphorePermit,
        handoff: Option<oneshot::Receiver<OwnedSemaphorePermit>>,
    ) {
        // The place of the connection this one asked to close comes straight
        // here, not to whoever queued first: a flood of waiting connections
        // cannot keep a newcomer out.
        let place = match handoff {
            Some(handoff) => timeout(ADMISSION_WAIT, handoff)
                .await
                .ok()
                .and_then(Result::ok),
            None => timeout(ADMISSION_WAIT, Arc::clone(&self.places).acquire_owned())
                .await
                .ok()
                .and_then(Result::ok),
        };
        drop(waiting);
        if let Some(place) = place {
            return self.run(stream, place, Lane::Regular).await;
        }
        if let Ok(lane) = Arc::clone(&self.overflow).try_acquire_owned() {
            self.run(stream, lane, Lane::Overflow).await;
        }
    }

    /// Asks the connection idle the longest to close (one that never sent a
    /// request goes first), if there is one; its place will be sent on the
    /// returned channel.
    fn close_longest_idle(&self) -> Option<oneshot::Receiver<OwnedSemaphorePermit>> {
        let open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let victim = open
            .values()
            .filter_map(|activity| activity.idle_rank().map(|rank| (rank, activity)))
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, activity)| activity);
        victim.map(|activity| activity.ask_to_close())
    }

    async fn run(self: Arc<Self>, mut stream: TcpStream, place: OwnedSemaphorePermit, lane: Lane) {
        let _open = self.metrics.open_connection();
        let mut client = stream.peer_addr().ok().map(ClientAddr);
        if let (Some(proxies), Some(peer)) = (&self.proxy_protocol, client)
            && proxies.trusts(peer.0.ip())
        {
            let header = proxy_header::read(&mut stream);
            match timeout(self.limits.request_header_timeout, header).await {
                Ok(Ok(named)) => client = named.map(ClientAddr).or(client),
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, peer = %peer.0, "PROXY header refused");
                    return;
                }
                Err(_elapsed) => {
                    tracing::debug!(peer = %peer.0, "PROXY header timed out");
                    return;
                }
            }
        }
        let activity = Arc::new(Activity::new());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if lane == Lane::Regular {
            self.lock_open().insert(id, Arc::clone(&activity));
        }
        let limits = match lane {
            Lane::Regular => self.limits,
            // One request, answered, then the connection goes.
            Lane::Overflow => ConnectionLimits {
                request_header_timeout: OVERFLOW_REQUEST_TIMEOUT,
                idle_timeout: Duration::ZERO,
                ..self.limits
            },
        };
        match &self.tls {
            None => {
                self.watch(stream, &activity, limits, lane, client, None)
                    .await;
            }
            Some(certificates) => {
                let acceptor = certificates.acceptor();
                match timeout(limits.request_header_timeout, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => {
                        let tls = tls_version(stream.get_ref().1.protocol_version());
                        self.watch(stream, &activity, limits, lane, client, Some(tls))
                            .await;
                    }
                    Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                    Err(_elapsed) => tracing::debug!("TLS handshake timed out"),
                }
            }
        }
        self.lock_open().remove(&id);
        if let Some(newcomer) = activity.take_handoff() {
            // A newcomer that stopped waiting hands it back (dropped: released).
            let _ = newcomer.send(place);
        }
    }

    fn lock_open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Serves one connection, closing it when a deadline passes.
    async fn watch<S>(
        &self,
        stream: S,
        activity: &Arc<Activity>,
        limits: ConnectionLimits,
        lane: Lane,
        client: Option<ClientAddr>,
        tls: Option<Tls>,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let app = self.app.clone();
        let tracked = Arc::clone(activity);
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let in_flight = tracked.begin();
            if lane == Lane::Overflow {
                request.extensions_mut().insert(Overflow);
            }
            if let Some(client) = client {
                request.extensions_mut().insert(client);
            }
            if let Some(tls) = tls {
                request.extensions_mut().insert(tls);
            }
            let response = app.clone().oneshot(request);
            async move {
                let response = response.await?;
                // The closure owns the guard, so the request counts as in
                // flight until its response body is sent or dropped.
                Ok::<_, std::convert::Infallible>(response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _held = &in_flight;
                        frame
                    }))
                }))
            }
        });
        let mut connection = pin!(self.builder.serve_connection(TokioIo::new(stream), service));
        let mut closing_since: Option<Instant> = None;
        loop {
            let deadline = activity.deadline(&limits, closing_since);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                    return;
                }
                () = sleep_until_or_never(deadline) => {
                    // A request may have begun since the deadline was set.
                    let due = activity.deadline(&limits, closing_since);
                    if due.is_none_or(|due| due > Instant::now()) {
                        continue;
                    }
                    if closing_since.is_some() {
                        tracing::debug!("dropping a connection that did not close in time");
                        return;
                    }
                    connection.as_mut().graceful_shutdown();
                    closing_since = Some(Instant::now());
                }
                () = activity.changed.notified() => {
                    if activity.asked_to_close() && closing_since.is_none() {
                        connection.as_mut().graceful_shutdown();
                        closing_since = Some(Instant::now());
                    }
                }
                () = self.closing.cancelled(), if closing_since.is_none() => {
                    connection.as_mut().graceful_shutdown();
                    closing_since = Some(Instant::now());
                }
            }
        }
    }
}

async fn sleep_until_or_never(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Requests in flight on one connection, and since when it has been idle.
struct Activity {
    state: Mutex<ActivityState>,
    /// Woken when the last request in flight ends, or when asked to close.
    changed: Notify,
}

struct ActivityState {
    in_flight: usize,
    /// When the connection started, or its last request ended.
    idle_since: Instant,
    served_any: bool,
    close_requested: bool,
    /// Where this connection's place goes when it ends, once asked to close.
    handoff: Option<oneshot::Sender<OwnedSemaphorePermit>>,
}

impl Activity {
    fn new() -> Self {
        Self {
            state: Mutex::new(ActivityState {
                in_flight: 0,
                idle_since: Instant::now(),
                served_any: false,
                close_requested: false,
                handoff: None,
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        let mut state = self.lock();
        state.in_flight += 1;
        state.served_any = true;
        InFlight(Arc::clone(self))
    }

    fn end(&self) {
        let mut state = self.lock();
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.idle_since = Instant::now();
            drop(state);
            // `notify_one` keeps the wake-up if the watcher is not waiting yet.
            self.changed.notify_one();
        }
    }

    /// When the connection is to be closed (or, when `closing_since` is
    /// set, dropped); `None` while a request is in flight.
    fn deadline(
        &self,
        limits: &ConnectionLimits,
        closing_since: Option<Instant>,
    ) -> Option<Instant> {
        let state = self.lock();
        if state.in_flight > 0 {
            return None;
        }
        Some(match closing_since {
            Some(since) => since.max(state.idle_since) + CLOSE_GRACE,
            None if state.served_any => state.idle_since + limits.idle_timeout,
            None => state.idle_since + limits.request_header_timeout,
        })
    }

    /// Idle connections ordered for closing: never-served first, then the
    /// longest idle; `None` for a busy one or one already closing.
    fn idle_rank(&self) -> Option<(bool, Instant)> {
        let state = self.lock();
        (state.in_flight == 0 && !state.close_requested)
            .then_some((state.served_any, state.idle_since))
    }

    /// Asks the connection to close; its place will come on the receiver.
    fn ask_to_close(&self) -> oneshot::Receiver<OwnedSemaphorePermit> {
        let (sender, receiver) = oneshot::channel();
        let mut state = self.lock();
        state.close_requested = true;
        state.handoff = Some(sender);
        drop(state);
        self.changed.notify_one();
        receiver
    }

    fn take_handoff(&self) -> Option<oneshot::Sender<OwnedSemaphorePermit>> {
        self.lock().handoff.take()
    }

    fn asked_to_close(&self) -> bool {
        self.lock().close_requested
    }
}

/// A request in flight until its response body has been sent or dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// Lets a repeated warning through at most once a second, counting the
/// ones it held back.
#[derive(Default)]
struct Throttled {
    last: Option<Instant>,
    suppressed: u64,
}

impl Throttled {
    /// `Some(held back since the last one)` when a warning may be logged.
    fn due(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(1))
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn repeated_warnings_pass_once_a_second() {
        let mut throttled = Throttled::default();
        assert_eq!(throttled.due(), Some(0));
        assert_eq!(throttled.due(), None);
        assert_eq!(throttled.due(), None);
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert_eq!(throttled.due(), Some(2));
    }

    #[tokio::test(start_paused = true)]
    async fn deadlines_follow_the_requests_in_flight() {
        let limits = ConnectionLimits {
            max_connections: 1,
            request_header_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
        };
        let activity = Arc::new(Activity::new());
        let start = Instant::now();
        assert_eq!(
            activity.deadline(&limits, None),
            Some(start + limits.request_header_timeout)
        );
        assert_eq!(activity.idle_rank(), Some((false, start)));

        let in_flight = activity.begin();
        assert_eq!(activity.deadline(&limits, None), None, "busy: no deadline");
        assert_eq!(
            activity.idle_rank(),
            None,
            "busy connections are never closed for others"
        );
        tokio::time::advance(Duration::from_secs(5)).await;
        drop(in_flight);
        let idle = start + Duration::from_secs(5);
        assert_eq!(
            activity.deadline(&limits, None),
            Some(idle + limits.idle_timeout)
        );
        assert_eq!(
            activity.deadline(&limits, Some(start)),
            Some(idle + CLOSE_GRACE)
        );

        let _handoff = activity.ask_to_close();
        assert!(activity.asked_to_close());
        assert_eq!(activity.idle_rank(), None, "asked once");
    }
}
