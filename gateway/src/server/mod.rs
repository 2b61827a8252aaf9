//! The HTTP server: opens storage, sets up keys, and serves HTTP/1.1 and
//! HTTP/2 (h2c, or h2 over TLS) until a shutdown signal, then drains: `/ready`
//! fails at once, connections are still accepted for `drain_delay`, then
//! in-flight requests finish.
//!
//! One axum fallback handler ([`s3::handle`]) takes every request: probes
//! (`/health`, `/ready`, `/metrics`) for unauthenticated GETs, the admin API
//! under `/_s3gw/`, and S3 for everything else.

mod body_tracker;
mod connection_threads;
mod connections;
mod metrics;
mod probes;
mod proxy_header;
mod request_id;
mod request_limits;
mod request_record;
mod s3;
pub mod signals;
mod tls;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto;
use storage_client::{Storage, StorageError};
use tokio::net::TcpListener;

use self::connection_threads::ConnectionThreads;
use crate::admin::bootstrap::{self, BootstrapError, RootKeys};
use crate::client_address::TrustedProxies;
use crate::config::{Backend, Config, ConnectionRuntime, Limits};
use crate::console::Console;
use crate::lifecycle::worker::Worker;
use crate::sse::keyring::Keyring;
use crate::sse::kms::Kms;
use crate::state::AppState;

pub use metrics::Metrics;
pub use tls::{Certificates, TlsError};

/// What the request handler shares across requests.
struct Shared {
    app: Arc<AppState>,
    metrics: Arc<Metrics>,
    ids: request_id::RequestIds,
    /// The web console, if `console` is on.
    console: Option<Console>,
    /// Set when the server is told to stop: `/ready` fails from then on.
    draining: Arc<AtomicBool>,
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
    #[error("cannot set up SSE-S3 master keys: {0}")]
    Keyring(String),
    #[error("cannot set up the SSE-KMS client: {0}")]
    Kms(String),
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

/// Stack of each runtime thread, the shared runtime's workers and the
/// connection threads alike. Tokio's 2 MiB overflowed in a debug build
/// polling a PostObject on the Ozone back end (CI, 2026-12-05): the
/// request futures of the larger operations are deep; stacks are virtual
/// memory, so a roomier one costs only what is touched.
pub const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// A gateway that is set up and bound, ready to serve.
pub struct Gateway {
    listeners: Vec<TcpListener>,
    /// Where each listener is bound, in `listen` order.
    local_addrs: Vec<SocketAddr>,
    tls: Option<Arc<Certificates>>,
    /// The proxies that send a PROXY header, with `proxy_protocol` on.
    proxy_protocol: Option<TrustedProxies>,
    app: axum::Router,
    metrics: Arc<Metrics>,
    draining: Arc<AtomicBool>,
    root_keys: RootKeys,
    limits: Limits,
    drain_delay: Duration,
    connection_runtime: ConnectionRuntime,
    /// Applies the buckets' lifecycle rules while the gateway runs.
    _lifecycle: Worker,
}

impl Gateway {
    /// Opens storage, upserts the configured keys (generating a root key on
    /// first start), loads TLS files and binds the listener.
    pub async fn open(config: &Config) -> Result<Self, StartError> {
        // TLS files and the address first: a mistake there should not leave a
        // freshly created data dir and root key behind.
        let tls = config
            .tls
            .as_ref()
            .map(Certificates::load)
            .transpose()?
            .map(Arc::new);
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
        let sse_keyring = match (&config.sse_master_keys, &config.backend) {
            (Some(ring), _) => Some(ring.clone()),
            // One command on a laptop: `--sse AES256` works out of the box.
            // Not on Ozone, whose replicas must share one keyring.
            (None, Backend::Embedded) => Some(
                Keyring::generated_in(&config.settings.data_dir).map_err(StartError::Keyring)?,
            ),
            (None, Backend::Ozone(_)) => None,
        };
        let sse_kms = config
            .sse_kms
            .as_ref()
            .map(|kms| {
                let ttl = config.settings.sse_kms_key_cache_ttl;
                Kms::new(&kms.url, &kms.user, kms.default_key.clone(), ttl)
            })
            .transpose()
            .map_err(StartError::Kms)?;
        let state = AppState::new(Arc::new(storage), config, sse_keyring, sse_kms);
        let metrics = Arc::<Metrics>::default();
        let lifecycle = Worker::spawn(
            &state.storage,
            config.lifecycle,
            Arc::clone(&metrics.lifecycle),
        );
        let shared = Shared {
            app: Arc::new(state),
            metrics,
            ids: request_id::RequestIds::new(),
            console: config.console.map(|settings| {
                Console::new(
                    settings,
                    config.tls.is_some(),
                    config.settings.region.clone(),
                    config.settings.domain.clone(),
                )
            }),
            draining: Arc::default(),
        };
        Ok(Self {
            listeners,
            local_addrs,
            tls,
            proxy_protocol: config
                .settings
                .proxy_protocol
                .then(|| config.trusted_proxies.clone()),
            metrics: Arc::clone(&shared.metrics),
            draining: Arc::clone(&shared.draining),
            app: axum::Router::new()
                .fallback(s3::handle)
                .with_state(Arc::new(shared)),
            root_keys,
            limits: config.limits.clone(),
            drain_delay: config.settings.drain_delay,
            connection_runtime: config.connection_runtime,
            _lifecycle: lifecycle,
        })
    }

    /// The TLS certificate being served, to reload while serving.
    pub fn certificates(&self) -> Option<Arc<Certificates>> {
        self.tls.clone()
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

    /// Serves until `shutdown` resolves, then drains: `/ready` fails at
    /// once, connections are accepted for `drain_delay` more, then the
    /// listener closes and open connections finish their in-flight requests.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let (draining, drain_delay) = (self.draining, self.drain_delay);
        let drain = async move {
            shutdown.await;
            draining.store(true, Ordering::Relaxed);
            tracing::info!(?drain_delay, "draining: /ready fails from now on");
            tokio::time::sleep(drain_delay).await;
        };
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
        let front = connections::Front {
            tls: self.tls,
            proxy_protocol: self.proxy_protocol,
        };
        let threads = if self.connection_runtime == ConnectionRuntime::PerThread {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            match ConnectionThreads::per_thread(cores, WORKER_STACK_BYTES) {
                Ok(threads) => threads,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot start connection threads: serving on the shared runtime");
                    ConnectionThreads::Shared
                }
            }
        } else {
            ConnectionThreads::Shared
        };
        let runner = connections::Runner {
            http: builder,
            threads,
        };
        connections::serve(
            self.listeners,
            front,
            runner,
            self.app,
            connection_limits,
            self.metrics,
            drain,
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
                dir: config.settings.data_dir.display().to_string(),
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

/// Reloads `certificates` from their files on every SIGHUP, keeping the
/// ones in use when the new files are unusable.
pub async fn reload_on_hangup(
    mut hangups: signals::Reload,
    certificates: Option<Arc<Certificates>>,
) {
    loop {
        hangups.requested().await;
        match &certificates {
            None => tracing::info!("SIGHUP: no TLS certificate to reload"),
            Some(certificates) => match certificates.reload() {
                Ok(()) => tracing::info!("SIGHUP: TLS certificate reloaded"),
                Err(e) => {
                    tracing::warn!(error = %e, "SIGHUP: TLS certificate not reloaded, still serving the previous one");
                }
            },
        }
    }
}
