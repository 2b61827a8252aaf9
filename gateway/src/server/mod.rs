//! The HTTP server: opens storage, sets up keys, and serves HTTP/1.1 and
//! HTTP/2 (h2c, or h2 over TLS) until a shutdown signal, then lets in-flight
//! requests finish.
//!
//! One axum fallback handler ([`s3::handle`]) takes every request: probes
//! (`/health`, `/ready`, `/metrics`) for unauthenticated GETs, the admin API
//! under `/_s3gw/`, and S3 for everything else.

mod body_tracker;
mod metrics;
mod probes;
mod request_id;
mod s3;
mod tls;

use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use storage_client::{Storage, StorageError};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;
use tokio_rustls::TlsAcceptor;

use crate::admin::bootstrap::{self, BootstrapError, RootKeys};
use crate::config::{Backend, Config};
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
    listener: TcpListener,
    local_addr: SocketAddr,
    tls: Option<TlsAcceptor>,
    app: axum::Router,
    root_keys: RootKeys,
}

impl Gateway {
    /// Opens storage, upserts the configured keys (generating a root key on
    /// first start), loads TLS files and binds the listener.
    pub async fn open(config: &Config) -> Result<Self, StartError> {
        // TLS files and the address first: a mistake there should not leave a
        // freshly created data dir and root key behind.
        let tls = config.tls.as_ref().map(tls::acceptor).transpose()?;
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| StartError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let local_addr = listener.local_addr().map_err(|source| StartError::Bind {
            addr: config.listen,
            source,
        })?;
        let storage = open_storage(config).await?;
        let root_keys = bootstrap::ensure_keys(&storage, config).await?;
        let state = AppState::new(Arc::new(storage), config);
        Ok(Self {
            listener,
            local_addr,
            tls,
            app: app(Arc::new(state)),
            root_keys,
        })
    }

    /// The bound address (useful when listening on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL a client on this machine should use.
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let mut addr = self.local_addr;
        // 0.0.0.0 / [::] are not addresses to connect to; loopback is.
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
            });
        }
        format!("{scheme}://{addr}")
    }

    /// What start-up did about root keys (for the banner).
    pub fn root_keys(&self) -> &RootKeys {
        &self.root_keys
    }

    /// Serves until `shutdown` resolves, then stops accepting and waits for
    /// open connections to finish their in-flight requests.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let graceful = GracefulShutdown::new();
        let mut builder = auto::Builder::new(TokioExecutor::new());
        // Without a timer hyper has no header-read timeout, and a client that
        // never finishes its headers would hold shutdown open for ever.
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT);
        builder.http2().timer(TokioTimer::new());
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _peer)) => stream,
                    Err(e) => {
                        // Usually out of file descriptors: back off briefly
                        // instead of spinning on the error.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            // Small responses should leave at once, not wait for Nagle.
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
            let connection = Connection {
                builder: builder.clone(),
                service: TowerToHyperService::new(self.app.clone()),
                watcher: graceful.watcher(),
            };
            tokio::spawn(connection.run(stream, self.tls.clone()));
        }
        drop(self.listener);
        tracing::info!("shutting down: waiting for in-flight requests");
        graceful.shutdown().await;
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

/// How long a client may take to send its request headers (or finish the
/// TLS handshake); hyper's own default, made explicit.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One accepted connection, served on its own task.
struct Connection {
    builder: auto::Builder<TokioExecutor>,
    service: TowerToHyperService<axum::Router>,
    watcher: hyper_util::server::graceful::Watcher,
}

impl Connection {
    async fn run(self, stream: TcpStream, tls: Option<TlsAcceptor>) {
        let result = match tls {
            None => {
                let connection = self
                    .builder
                    .serve_connection(TokioIo::new(stream), self.service);
                self.watcher.watch(connection).await
            }
            Some(acceptor) => match timeout(HEADER_READ_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let connection = self
                        .builder
                        .serve_connection(TokioIo::new(stream), self.service);
                    self.watcher.watch(connection).await
                }
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "TLS handshake failed");
                    return;
                }
                Err(_elapsed) => {
                    tracing::debug!("TLS handshake timed out");
                    return;
                }
            },
        };
        if let Err(e) = result {
            tracing::debug!(error = %e, "connection ended with an error");
        }
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
