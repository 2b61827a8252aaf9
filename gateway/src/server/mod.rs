//! The HTTP server: opens storage, sets up keys, and serves HTTP/1.1 and
//! HTTP/2 (h2c, or h2 over TLS) until a shutdown signal, then lets in-flight
//! requests finish.
//!
//! One axum fallback handler ([`s3::handle`]) takes every request: probes
//! (`/health`, `/ready`, `/metrics`) for unauthenticated GETs, the admin API
//! under `/_s3gw/`, and S3 for everything else.

mod body_tracker;
mod connections;
mod metrics;
mod probes;
mod request_id;
mod request_limits;
mod s3;
mod tls;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto;
use storage_client::{Storage, StorageError};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::admin::bootstrap::{self, BootstrapError, RootKeys};
use crate::config::{Backend, Config, Limits};
use crate::state::AppState;

pub use metrics::Metrics;
pub use tls::TlsError;

/// What the request handler shares across requests.
struct Shared {
    app: Arc<AppState>,
    metrics: Metrics,
    ids: request_id::RequestIds,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot open storage in {dir}: {source}")]
    Storage { dir: String, source: StorageError },
    #[error("cannot use the Ozone cluster at {om}: {source}")]
    Ozone { om: String, source: StorageError },
    #[error("cannot set up keys: {0}")]
    Keys(#[from] BootstrapError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
}

impl StartError {
    /// Whether the operator's configuration is at fault (bad TLS files, or
    /// storage tunables the back end refuses) rather than the environment.
    /// An Ozone Manager that does not answer is the environment's fault: it
    /// may be starting, so a supervisor should retry.
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            StartError::Tls(_)
                | StartError::Storage {
                    source: StorageError::InvalidArgument(_),
                    ..
                }
                | StartError::Ozone {
                    source: StorageError::InvalidArgument(_),
                    ..
                }
        )
    }
}

/// A gateway that is set up and bound, ready to serve.
pub struct Gateway {
    listeners: Vec<TcpListener>,
    /// Where each listener is bound, in `listen` order.
    local_addrs: Vec<SocketAddr>,
    tls: Option<TlsAcceptor>,
    app: axum::Router,
    root_keys: RootKeys,
    limits: Limits,
}

impl Gateway {
    /// Opens storage, upserts the configured keys (generating a root key on
    /// first start), loads TLS files and binds the listener.
    pub async fn open(config: &Config) -> Result<Self, StartError> {
        // TLS files and the address first: a mistake there should not leave a
        // freshly created data dir and root key behind.
        let tls = config.tls.as_ref().map(tls::acceptor).transpose()?;
        let mut listeners = Vec::with_capacity(config.listen.len());
        let mut local_addrs = Vec::with_capacity(config.listen.len());
        for &addr in &config.listen {
            let bound = TcpListener::bind(addr).await;
            let listener = bound.map_err(|source| StartError::Bind { addr, source })?;
            let local = listener
                .local_addr()
                .map_err(|source| StartError::Bind { addr, source })?;
            listeners.push(listener);
            local_addrs.push(local);
        }
        let storage = open_storage(config).await?;
        let root_keys = bootstrap::ensure_keys(&storage, config).await?;
        let state = AppState::new(Arc::new(storage), config);
        Ok(Self {
            listeners,
            local_addrs,
            tls,
            app: app(Arc::new(state)),
            root_keys,
            limits: config.limits.clone(),
        })
    }

    /// The first bound address (useful when listening on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addrs[0]
    }

    /// Every bound address: a `listen` host name can resolve to several.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// The endpoint URL a client on this machine should use.
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", crate::config::reachable(self.local_addr()))
    }

    /// What start-up did about root keys (for the banner).
    pub fn root_keys(&self) -> &RootKeys {
        &self.root_keys
    }

    /// Serves until `shutdown` resolves, then stops accepting and waits for
    /// open connections to finish their in-flight requests.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let limits = &self.limits;
        let mut builder = auto::Builder::new(TokioExecutor::new());
        // Without a timer hyper has no header-read timeout, and a client that
        // never finishes its headers would hold its connection for ever.
        // HTTP/1.1 heads beyond hyper's read buffer (~400 KiB) get hyper's
        // bare 431; the handler refuses smaller oversized ones in S3 XML.
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.request_header_timeout);
        // HTTP/2 header lists beyond this are refused by hyper itself; below
        // it the handler answers with an S3 error.
        let head_backstop = 2 * (limits.max_header_bytes + limits.max_url_length);
        builder
            .http2()
            .timer(TokioTimer::new())
            .keep_alive_interval(limits.http2_keepalive_interval)
            .keep_alive_timeout(limits.http2_keepalive_timeout)
            .max_header_list_size(u32::try_from(head_backstop).unwrap_or(u32::MAX));
        let connection_limits = connections::ConnectionLimits {
            max_connections: limits.max_connections,
            request_header_timeout: limits.request_header_timeout,
            idle_timeout: limits.idle_timeout,
        };
        connections::serve(
            self.listeners,
            self.tls,
            builder,
            self.app,
            connection_limits,
            shutdown,
        )
        .await;
    }
}

/// Opens the configured back end.
async fn open_storage(config: &Config) -> Result<Storage, StartError> {
    match &config.backend {
        Backend::Embedded => Storage::open_embedded(config.storage_config())
            .await
            .map_err(|source| StartError::Storage {
                dir: config.data_dir.display().to_string(),
                source,
            }),
        Backend::Ozone(ozone) => Storage::open_ozone(config.ozone_storage_config(ozone))
            .await
            .map_err(|source| StartError::Ozone {
                om: ozone.om.join(","),
                source,
            }),
    }
}

/// The request handler as an axum app, for serving or for in-process tests.
pub fn app(state: Arc<AppState>) -> axum::Router {
    let shared = Arc::new(Shared {
        app: state,
        metrics: Metrics::default(),
        ids: request_id::RequestIds::new(),
    });
    axum::Router::new().fallback(s3::handle).with_state(shared)
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
