//! Gateway configuration: defaults < TOML file (`--config`) < `S3GW_*`
//! environment < command-line flags, validated once at start.
//!
//! Each setting is declared once, in [`settings::SETTINGS`]: its flag, its
//! environment variable, its TOML key, its default, its bounds and its row
//! in the documentation follow from that entry. This module turns the
//! merged layers ([`layer`]) into the typed [`Config`], checking what
//! involves more than one setting (chunk and block size, the back end).

mod flags;
mod layer;
mod private_file;
mod records_key;
pub mod settings;
mod sse_master_key;
mod system_secret;
mod unknown_env;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use storage_client::{OzoneStorageConfig, OzoneTls, RecordsKey, StorageConfig, SystemSecret};

use crate::client_address::TrustedProxies;
use crate::credentials_file::{self, KeyEntry};
use crate::lifecycle::worker::Schedule;
use crate::sse::keyring::Keyring;
pub use flags::{ADMIN_SETTINGS, AdminConfigArgs, Flags, ServeArgs};
use layer::Layer;
use settings::{ReadBy, SETTINGS, setting};
pub use unknown_env::unknown_vars;

/// The root key given in the environment, instead of a generated one.
pub const ROOT_ACCESS_KEY_ENV: &str = "S3GW_ROOT_ACCESS_KEY";
pub const ROOT_SECRET_KEY_ENV: &str = "S3GW_ROOT_SECRET_KEY";

/// The validated configuration the server runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Every address `listen` names (a host name can resolve to several),
    /// at least one; the gateway serves on all of them.
    pub listen: Vec<SocketAddr>,
    /// Where objects live.
    pub backend: Backend,
    /// The embedded store; on every back end also where a generated root
    /// key is written.
    pub data_dir: PathBuf,
    pub region: String,
    /// Base domain for virtual-host style (`bucket.<domain>`).
    pub domain: Option<String>,
    /// The proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: TrustedProxies,
    /// Whether connections from `trusted_proxies` start with a PROXY header.
    pub proxy_protocol: bool,
    /// Keys loaded from the credentials file, upserted into storage at start.
    pub keys: Vec<KeyEntry>,
    /// The credentials file `keys` came from.
    pub credentials: Option<PathBuf>,
    /// Root key given by `S3GW_ROOT_ACCESS_KEY` + `S3GW_ROOT_SECRET_KEY`.
    pub root_key: Option<KeyEntry>,
    /// Storage tunables; `None` keeps the storage back end's default (see
    /// [`StorageConfig`] for what each one means).
    pub block_size: Option<u64>,
    pub chunk_size: Option<u64>,
    pub read_buffer: Option<u64>,
    pub small_block_max: Option<u64>,
    pub metadata_db_cache: Option<u64>,
    pub small_block_db_cache: Option<u64>,
    pub multipart_upload_expiry: Option<Duration>,
    pub open_key_expiry: Option<Duration>,
    pub reclaim_interval: Option<Duration>,
    pub reclaim_grace: Option<Duration>,
    pub key_cache_ttl: Option<Duration>,
    pub metadata_cache_ttl: Option<Duration>,
    pub unknown_key_cache_ttl: Option<Duration>,
    /// A `tracing` filter directive such as `info` or `s3_gateway=debug`.
    pub log_level: String,
    pub log_format: LogFormat,
    /// Whether every request is logged (one line, target `s3_gateway::access`).
    pub access_log: bool,
    /// How long a gateway told to stop keeps accepting connections while
    /// `/ready` already fails, so that load balancers take it out first.
    pub drain_delay: Duration,
    /// When the lifecycle worker runs, and how long its day is.
    pub lifecycle: Schedule,
    pub tls: Option<TlsFiles>,
    /// Whether AWS Signature Version 2 is accepted (old tools need it).
    pub sigv2: bool,
    /// Whether SSE-C keys are accepted over plain HTTP (they always are
    /// over TLS).
    pub sse_c_over_http: bool,
    /// The web console (docs/console.md), if `console` is on.
    pub console: Option<ConsoleSettings>,
    /// SSE-S3's master keys from `sse_master_key_file`; unset, the
    /// embedded back end generates its own at start.
    pub sse_master_keys: Option<Keyring>,
    pub limits: Limits,
}

/// The web console's session timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsoleSettings {
    /// A session unused this long ends.
    pub idle: Duration,
    /// A session ends this long after its sign-in.
    pub max: Duration,
}

/// How log lines are written to stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// `tracing`'s human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// What one client may hold of the server: connections, time, header bytes
/// and buffered body bytes. Each default says why it is what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Open connections served at once; beyond them the longest-idle one
    /// makes way, else the newcomer is only answered for `/health`.
    pub max_connections: usize,
    /// Time to send a request's headers (and to finish a TLS handshake),
    /// counted from the connection's start or the end of its last response.
    pub request_header_timeout: Duration,
    /// A connection with no request in flight for this long is closed.
    pub idle_timeout: Duration,
    /// HTTP/2 pings on a connection that has been silent this long...
    pub http2_keepalive_interval: Duration,
    /// ...and the connection is closed if a ping is not answered in this time.
    pub http2_keepalive_timeout: Duration,
    /// Longest wait for the next piece of a request body: `400 RequestTimeout`.
    pub body_idle_timeout: Duration,
    /// Request header section (names, values, separators), in bytes.
    pub max_header_bytes: usize,
    pub max_header_count: usize,
    /// Request target (path and query), in bytes.
    pub max_url_length: usize,
    /// Largest signed aws-chunked chunk, which is buffered until verified.
    pub max_signed_chunk: usize,
    /// Signed chunk bytes buffered across all requests at once.
    pub chunk_buffer_budget: usize,
    /// How long a chunk waits for room in that budget before `503 SlowDown`.
    pub chunk_buffer_wait: Duration,
}

/// The storage back end and what only it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// OM and datanode roles in this process, on local disk (`data_dir`).
    Embedded,
    /// A real Apache Ozone cluster.
    Ozone(OzoneSettings),
}

/// How to reach an Ozone cluster; `None` keeps the back end's default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneSettings {
    /// `HOST:PORT` of every Ozone Manager's gRPC server, at least one.
    pub om: Vec<String>,
    pub connect_timeout: Option<Duration>,
    /// Deadline of one attempt of one command at an OM or a datanode.
    pub request_timeout: Option<Duration>,
    /// The system identity's secret on a security-on cluster.
    pub system_secret: Option<SystemSecret>,
    /// The key the gateway's records in Ozone are sealed with; the back
    /// end refuses to start without it.
    pub records_key: Option<RecordsKey>,
    /// TLS to the cluster's servers (`hdds.grpc.tls.enabled`).
    pub tls: Option<OzoneTls>,
    /// Whether keys of Ozone's own users are vouched for by the OM.
    pub user_secrets: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// An invalid configuration; its message is one line meant for stderr.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(String);

impl Default for Limits {
    /// The declared defaults; [`settings::SETTINGS`] says why each is what it is.
    fn default() -> Self {
        match Layer::default().limits() {
            Ok(limits) => limits,
            Err(e) => panic!("the declared limits are invalid: {e}"),
        }
    }
}

/// The layers of one invocation: the file (`--config` or `S3GW_CONFIG`),
/// the environment, then `flags`.
fn layers(flags: &Flags, env: &impl Fn(&str) -> Option<String>) -> Result<Layer, ConfigError> {
    let config_file = match &flags.config {
        Some(path) => Some(path.clone()),
        None => env(settings::CONFIG_ENV).map(PathBuf::from),
    };
    let mut layer = match &config_file {
        Some(path) => layer::file_layer(path)?,
        None => Layer::default(),
    };
    layer.merge(layer::env_layer(env));
    layer.merge(flags.layer());
    Ok(layer)
}

impl Config {
    /// Loads the configuration from the process environment and `flags`.
    pub fn load(flags: &ServeArgs) -> Result<Self, ConfigError> {
        Self::load_from(flags, |name| std::env::var(name).ok())
    }

    /// Loads the configuration with `env` standing in for the environment.
    pub fn load_from(
        flags: &ServeArgs,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let layer = layers(&flags.0, &env)?;
        let root_key = root_key_from_env(&env)?;
        layer.validate(root_key)
    }

    /// Every setting at its declared default, serving the embedded store in
    /// `data_dir` on a free loopback port: what an in-process test starts
    /// from, setting only the fields it is about, so that a new setting
    /// touches no test.
    ///
    /// # Panics
    /// If the declared defaults do not make a valid configuration, which
    /// the tests of [`settings`] rule out.
    pub fn for_tests(data_dir: &Path) -> Self {
        let flags = ServeArgs::default()
            .with("listen", "127.0.0.1:0")
            .with("data_dir", data_dir.display().to_string());
        match Self::load_from(&flags, |_| None) {
            Ok(config) => config,
            Err(error) => panic!("the declared defaults are invalid: {error}"),
        }
    }

    /// The storage back end's configuration: its defaults, overridden by
    /// every tunable set here.
    pub fn storage_config(&self) -> StorageConfig {
        let defaults = StorageConfig::new(&self.data_dir);
        StorageConfig {
            block_size: self.block_size.unwrap_or(defaults.block_size),
            chunk_size: self.chunk_size.map_or(defaults.chunk_size, in_memory),
            read_buffer: self.read_buffer.map_or(defaults.read_buffer, in_memory),
            small_block_max: self
                .small_block_max
                .map_or(defaults.small_block_max, in_memory),
            metadata_db_cache: self
                .metadata_db_cache
                .map_or(defaults.metadata_db_cache, in_memory),
            small_block_db_cache: self
                .small_block_db_cache
                .map_or(defaults.small_block_db_cache, in_memory),
            multipart_upload_expiry: self
                .multipart_upload_expiry
                .unwrap_or(defaults.multipart_upload_expiry),
            open_key_expiry: self.open_key_expiry.unwrap_or(defaults.open_key_expiry),
            reclaim_interval: self.reclaim_interval.unwrap_or(defaults.reclaim_interval),
            reclaim_grace: self.reclaim_grace.unwrap_or(defaults.reclaim_grace),
            key_cache_ttl: self.key_cache_ttl.unwrap_or(defaults.key_cache_ttl),
            metadata_cache_ttl: self
                .metadata_cache_ttl
                .unwrap_or(defaults.metadata_cache_ttl),
            unknown_key_cache_ttl: self
                .unknown_key_cache_ttl
                .unwrap_or(defaults.unknown_key_cache_ttl),
            ..defaults
        }
    }

    /// The `ozone` back end's configuration: its defaults, overridden by
    /// `ozone` and by the tunables both back ends share.
    pub fn ozone_storage_config(&self, ozone: &OzoneSettings) -> OzoneStorageConfig {
        let defaults = OzoneStorageConfig::new(ozone.om.clone());
        OzoneStorageConfig {
            block_size: self.block_size.unwrap_or(defaults.block_size),
            chunk_size: self.chunk_size.map_or(defaults.chunk_size, in_memory),
            connect_timeout: ozone.connect_timeout.unwrap_or(defaults.connect_timeout),
            request_timeout: ozone.request_timeout.unwrap_or(defaults.request_timeout),
            system_secret: ozone.system_secret.clone(),
            records_key: ozone.records_key.clone(),
            tls: ozone.tls.clone(),
            user_secrets: ozone.user_secrets.unwrap_or(defaults.user_secrets),
            key_cache_ttl: self.key_cache_ttl.unwrap_or(defaults.key_cache_ttl),
            metadata_cache_ttl: self
                .metadata_cache_ttl
                .unwrap_or(defaults.metadata_cache_ttl),
            unknown_key_cache_ttl: self
                .unknown_key_cache_ttl
                .unwrap_or(defaults.unknown_key_cache_ttl),
            ..defaults
        }
    }
}

/// What `admin` reads of the server's configuration, by the same rules:
/// the region to sign for, the data dir with a generated root key, the
/// credentials file (whose `root = true` key it may sign with), and where
/// the server listens (with or without TLS), for a default endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminConfig {
    pub region: String,
    pub data_dir: PathBuf,
    pub credentials: Option<PathBuf>,
    /// `http(s)://HOST:PORT` of the server this configuration describes.
    pub endpoint: String,
}

impl AdminConfig {
    pub fn load(flags: &AdminConfigArgs) -> Result<Self, ConfigError> {
        Self::load_from(flags, |name| std::env::var(name).ok())
    }

    pub fn load_from(
        flags: &AdminConfigArgs,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let layer = layers(&flags.0, &env)?;
        let scheme = if layer.get("tls_cert").is_some() {
            "https"
        } else {
            "http"
        };
        Ok(Self {
            region: layer.region()?,
            data_dir: layer.data_dir()?,
            credentials: layer.get("credentials").map(|s| PathBuf::from(&s.value)),
            endpoint: format!("{scheme}://{}", reachable(layer.listen()?[0])),
        })
    }
}

impl Layer {
    /// `IP:PORT`, or `HOST:PORT` resolved to every address of HOST.
    fn listen(&self) -> Result<Vec<SocketAddr>, ConfigError> {
        let Some(s) = self.text("listen") else {
            unreachable!("listen has a default");
        };
        if let Ok(addr) = s.value.parse::<SocketAddr>() {
            return Ok(vec![addr]);
        }
        let expected = "expected an IP address or host name and a port, such as 127.0.0.1:9878";
        if !is_host_port(&s.value) {
            return Err(s.invalid(expected));
        }
        let mut addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&s.value)
            .map_err(|e| s.invalid(&format!("does not resolve: {e}")))?
            .collect();
        addrs.dedup();
        if addrs.is_empty() {
            return Err(s.invalid("resolves to no address"));
        }
        Ok(addrs)
    }

    fn data_dir(&self) -> Result<PathBuf, ConfigError> {
        match self.text("data_dir") {
            Some(s) if s.value.is_empty() => Err(s.invalid("must not be empty")),
            Some(s) => Ok(PathBuf::from(&s.value)),
            None => unreachable!("data_dir has a default"),
        }
    }

    fn region(&self) -> Result<String, ConfigError> {
        let Some(s) = self.word("region")? else {
            unreachable!("region has a default");
        };
        Ok(s.value)
    }

    fn validate(self, root_key: Option<KeyEntry>) -> Result<Config, ConfigError> {
        let listen = self.listen()?;
        let data_dir = self.data_dir()?;
        let region = self.region()?;
        let domain = self.word("domain")?.map(|s| s.value.to_ascii_lowercase());
        let trusted_proxies = match self.get("trusted_proxies") {
            None => TrustedProxies::default(),
            Some(s) => TrustedProxies::parse(s.value.split(',')).map_err(|why| s.invalid(&why))?,
        };
        let proxy_protocol = self.flag("proxy_protocol")?.unwrap_or(false);
        if proxy_protocol
            && trusted_proxies.is_empty()
            && let Some(s) = self.get("proxy_protocol")
        {
            return Err(s.invalid("needs trusted_proxies: the proxies that send the header"));
        }
        let keys = match self.get("credentials") {
            Some(s) => private_file::check(Path::new(&s.value), "secret keys")
                .map_err(|why| format!("credentials file {why}"))
                .and_then(|()| {
                    credentials_file::load(Path::new(&s.value)).map_err(|e| e.to_string())
                })
                .map_err(|e| ConfigError(format!("{}: {e}", s.origin)))?,
            None => Vec::new(),
        };
        let block_size = self.size("block_size")?;
        let chunk_size = self.size("chunk_size")?;
        if let (Some(block), Some(chunk)) = (block_size, chunk_size)
            && chunk > block
            && let Some(s) = self.get("chunk_size")
        {
            let block = self.get("block_size").map_or_else(
                || format!("the default block size {block}"),
                |b| format!("{} = {:?}", b.origin, b.value),
            );
            return Err(s.invalid(&format!("is larger than the block size ({block})")));
        }
        let read_buffer = self.size("read_buffer")?;
        let small_block_max = self.size("small_block_max")?;
        let metadata_db_cache = self.size("metadata_db_cache")?;
        let small_block_db_cache = self.size("small_block_db_cache")?;
        let multipart_upload_expiry = self.duration("multipart_upload_expiry")?;
        let open_key_expiry = self.duration("open_key_expiry")?;
        let reclaim_interval = self.duration("reclaim_interval")?;
        let reclaim_grace = self.duration("reclaim_grace")?;
        let key_cache_ttl = self.duration("key_cache_ttl")?;
        let metadata_cache_ttl = self.duration("metadata_cache_ttl")?;
        let unknown_key_cache_ttl = self.duration("unknown_key_cache_ttl")?;
        let backend = self.backend()?;
        let log_level = match self.text("log_level") {
            Some(s) => {
                crate::logging::check(&s.value).map_err(|why| s.invalid(&why))?;
                s.value
            }
            None => unreachable!("log_level has a default"),
        };
        let tls = match (self.get("tls_cert"), self.get("tls_key")) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: PathBuf::from(&cert.value),
                key: PathBuf::from(&key.value),
            }),
            (None, None) => None,
            (Some(s), None) | (None, Some(s)) => {
                return Err(s.invalid("TLS needs both a certificate and a key"));
            }
        };
        let log_format = match self.choice("log_format")? {
            Some("json") => LogFormat::Json,
            Some(_) => LogFormat::Text,
            None => unreachable!("log_format has a default"),
        };
        let access_log = self.flag("access_log")?.unwrap_or(true);
        let drain_delay = self.duration("drain_delay")?.unwrap_or(Duration::ZERO);
        let sigv2 = self.flag("sigv2")?.unwrap_or(true);
        let sse_c_over_http = self.flag("sse_c_over_http")?.unwrap_or(false);
        // Read (and so checked) whether or not the console is on: a bad
        // value is refused at start, not when the console is turned on.
        let console_settings = ConsoleSettings {
            idle: self
                .duration("console_session_idle")?
                .unwrap_or_else(|| unreachable!("console_session_idle has a default")),
            max: self
                .duration("console_session_max")?
                .unwrap_or_else(|| unreachable!("console_session_max has a default")),
        };
        let console = self
            .flag("console")?
            .unwrap_or(false)
            .then_some(console_settings);
        let sse_master_keys = self
            .get("sse_master_key_file")
            .map(|s| {
                sse_master_key::read(Path::new(&s.value))
                    .map_err(|why| ConfigError(format!("{}: {why}", s.origin)))
            })
            .transpose()?;
        let limits = self.limits()?;
        let lifecycle = Schedule {
            interval: self
                .duration("lifecycle_interval")?
                .unwrap_or_else(|| unreachable!("lifecycle_interval has a default")),
            day: self
                .duration("lifecycle_day")?
                .unwrap_or_else(|| unreachable!("lifecycle_day has a default")),
        };
        Ok(Config {
            listen,
            backend,
            data_dir,
            region,
            domain,
            trusted_proxies,
            proxy_protocol,
            keys,
            credentials: self.get("credentials").map(|s| PathBuf::from(&s.value)),
            root_key,
            block_size,
            chunk_size,
            read_buffer,
            small_block_max,
            metadata_db_cache,
            small_block_db_cache,
            multipart_upload_expiry,
            open_key_expiry,
            reclaim_interval,
            reclaim_grace,
            key_cache_ttl,
            metadata_cache_ttl,
            unknown_key_cache_ttl,
            log_level,
            log_format,
            access_log,
            drain_delay,
            lifecycle,
            tls,
            sigv2,
            sse_c_over_http,
            console,
            sse_master_keys,
            limits,
        })
    }

    /// The connection and request limits, each given or its declared default.
    fn limits(&self) -> Result<Limits, ConfigError> {
        let duration = |key| -> Result<Duration, ConfigError> {
            Ok(self
                .duration(key)?
                .unwrap_or_else(|| unreachable!("{key} has a default")))
        };
        let size = |key| -> Result<usize, ConfigError> {
            Ok(in_memory(
                self.size(key)?
                    .unwrap_or_else(|| unreachable!("{key} has a default")),
            ))
        };
        let count = |key| -> Result<usize, ConfigError> {
            Ok(in_memory(
                self.count(key)?
                    .unwrap_or_else(|| unreachable!("{key} has a default")),
            ))
        };
        let limits = Limits {
            max_connections: count("max_connections")?,
            request_header_timeout: duration("request_header_timeout")?,
            idle_timeout: duration("idle_timeout")?,
            http2_keepalive_interval: duration("http2_keepalive_interval")?,
            http2_keepalive_timeout: duration("http2_keepalive_timeout")?,
            body_idle_timeout: duration("body_idle_timeout")?,
            max_header_bytes: size("max_header_bytes")?,
            max_header_count: count("max_header_count")?,
            max_url_length: size("max_url_length")?,
            max_signed_chunk: size("max_signed_chunk")?,
            chunk_buffer_budget: size("chunk_buffer_budget")?,
            chunk_buffer_wait: duration("chunk_buffer_wait")?,
        };
        if limits.max_signed_chunk > limits.chunk_buffer_budget {
            let named = |key: &str| {
                self.get(key)
                    .map_or_else(|| format!("{key}'s default"), |s| s.origin.clone())
            };
            return Err(ConfigError(format!(
                "max signed chunk {} ({}) is larger than the chunk buffer budget {} ({}): no signed chunk could ever be buffered",
                limits.max_signed_chunk,
                named("max_signed_chunk"),
                limits.chunk_buffer_budget,
                named("chunk_buffer_budget"),
            )));
        }
        Ok(limits)
    }

    /// The back end, refusing settings that only the other one reads: a
    /// setting that silently does nothing hides a mistake.
    fn backend(&self) -> Result<Backend, ConfigError> {
        let ozone = self.choice("backend")? == Some("ozone");
        let (not_read_here, reader) = if ozone {
            (ReadBy::Ozone, "the embedded back end")
        } else {
            (ReadBy::Embedded, "--backend ozone")
        };
        let refused = SETTINGS
            .iter()
            .filter(|s| s.read_by != ReadBy::Both && s.read_by != not_read_here)
            .find_map(|s| self.get(s.key));
        if let Some(s) = refused {
            return Err(s.invalid(&format!("only {reader} reads this setting")));
        }
        if !ozone {
            return Ok(Backend::Embedded);
        }
        let Some(om) = self.get("om") else {
            let om = setting("om");
            return Err(ConfigError(format!(
                "backend ozone needs the Ozone Manager address: {} {} (or {})",
                om.flag(),
                om.value_name(),
                om.env()
            )));
        };
        let addresses: Vec<String> = om.value.split(',').map(|a| a.trim().to_owned()).collect();
        if let Some(bad) = addresses.iter().find(|a| !is_host_port(a)) {
            return Err(om.invalid(&format!(
                "{bad:?} is not HOST:PORT (e.g. om1.example.com:8981)"
            )));
        }
        Ok(Backend::Ozone(OzoneSettings {
            om: addresses,
            connect_timeout: self.duration("ozone_connect_timeout")?,
            request_timeout: self.duration("ozone_request_timeout")?,
            system_secret: self
                .get("ozone_system_secret_file")
                .map(|s| {
                    system_secret::read(Path::new(&s.value))
                        .map_err(|why| ConfigError(format!("{}: {why}", s.origin)))
                })
                .transpose()?,
            records_key: self
                .get("ozone_records_key_file")
                .map(|s| {
                    records_key::read(Path::new(&s.value))
                        .map_err(|why| ConfigError(format!("{}: {why}", s.origin)))
                })
                .transpose()?,
            tls: self.ozone_tls()?,
            user_secrets: self.flag("ozone_user_secrets")?,
        }))
    }

    /// `ozone_tls_ca_file` read, with `ozone_tls_server_name`; a server
    /// name without a CA file is refused rather than ignored.
    fn ozone_tls(&self) -> Result<Option<OzoneTls>, ConfigError> {
        let server_name = self.get("ozone_tls_server_name");
        let Some(ca) = self.get("ozone_tls_ca_file") else {
            return match server_name {
                Some(name) => Err(name.invalid("needs ozone_tls_ca_file")),
                None => Ok(None),
            };
        };
        let pem = std::fs::read(&ca.value)
            .map_err(|e| ConfigError(format!("{}: cannot read {}: {e}", ca.origin, ca.value)))?;
        OzoneTls::new(pem, server_name.map(|name| name.value.clone()))
            .map(Some)
            .map_err(|e| ConfigError(format!("{}: {e}", ca.origin)))
    }
}

/// Where a client on this machine reaches a server listening on `addr`:
/// the loopback address for a wildcard one.
pub fn reachable(mut addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    addr
}

/// A size of an in-memory buffer. Sizes were validated as u64; on a 32-bit
/// target an oversized one saturates and storage refuses it at open.
fn in_memory(size: u64) -> usize {
    usize::try_from(size).unwrap_or(usize::MAX)
}

/// `host:port` or `[v6]:port` with a non-zero port; no scheme, no path.
fn is_host_port(address: &str) -> bool {
    let Some((host, port)) = address.rsplit_once(':') else {
        return false;
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':'));
    host_ok && port.parse::<u16>().is_ok_and(|p| p > 0)
}

fn root_key_from_env(
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<KeyEntry>, ConfigError> {
    match (env(ROOT_ACCESS_KEY_ENV), env(ROOT_SECRET_KEY_ENV)) {
        (None, None) => Ok(None),
        (Some(access_key), Some(secret_key)) => {
            let key = KeyEntry {
                name: "root".to_string(),
                access_key,
                secret_key,
                root: true,
            };
            credentials_file::validate_key(&key).map_err(|why| {
                ConfigError(format!(
                    "{ROOT_ACCESS_KEY_ENV}/{ROOT_SECRET_KEY_ENV}: {why}"
                ))
            })?;
            Ok(Some(key))
        }
        _ => Err(ConfigError(format!(
            "{ROOT_ACCESS_KEY_ENV} and {ROOT_SECRET_KEY_ENV} must be set together"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::io::Write;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn file_with(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        file.write_all(text.as_bytes()).expect("write temp file");
        file
    }

    fn error_of(flags: &ServeArgs, env: &[(&str, &str)]) -> String {
        match Config::load_from(flags, env_of(env)) {
            Ok(config) => panic!("expected an error, got {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn operations_settings_have_defaults_and_are_checked() {
        let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("defaults");
        assert_eq!(config.log_format, LogFormat::Text);
        assert!(config.access_log);
        assert_eq!(config.drain_delay, Duration::ZERO);
        let set = |var: &str, value: &str| {
            Config::load_from(&ServeArgs::default(), env_of(&[(var, value)]))
        };
        assert_eq!(
            set("S3GW_LOG_FORMAT", "json").expect("json").log_format,
            LogFormat::Json
        );
        assert!(!set("S3GW_ACCESS_LOG", "false").expect("off").access_log);
        assert_eq!(
            set("S3GW_DRAIN_DELAY", "5s").expect("delay").drain_delay,
            Duration::from_secs(5)
        );
        for (var, value) in [
            ("S3GW_LOG_FORMAT", "xml"),
            ("S3GW_ACCESS_LOG", "yes"),
            ("S3GW_DRAIN_DELAY", "soon"),
        ] {
            let error = set(var, value).expect_err(value).to_string();
            assert!(error.contains(var), "{error}");
        }
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
        assert_eq!(config.listen, ["127.0.0.1:9878".parse().expect("addr")]);
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert_eq!(config.region, "us-east-1");
        assert_eq!(config.domain, None);
        assert_eq!(config.log_level, "info");
        assert!(config.keys.is_empty());
        assert_eq!(config.root_key, None);
        assert_eq!(config.tls, None);
    }

    #[test]
    fn file_then_env_then_flags_override_each_other() {
        let file = file_with(
            "listen = \"0.0.0.0:1000\"\nregion = \"eu-west-1\"\ndomain = \"s3.file\"\nlog_level = \"warn\"\nblock_size = 1048576\n",
        );
        let flags = ServeArgs::config(file.path().to_path_buf()).with("listen", "127.0.0.1:3000");
        let env = [
            ("S3GW_LISTEN", "127.0.0.1:2000"),
            ("S3GW_REGION", "eu-central-1"),
            ("S3GW_CHUNK_SIZE", "64KiB"),
        ];
        let config = Config::load_from(&flags, env_of(&env)).expect("valid");
        assert_eq!(
            config.listen,
            ["127.0.0.1:3000".parse().expect("addr")],
            "flag wins"
        );
        assert_eq!(config.region, "eu-central-1", "env beats file");
        assert_eq!(
            config.domain.as_deref(),
            Some("s3.file"),
            "file beats default"
        );
        assert_eq!(config.log_level, "warn");
        assert_eq!(config.block_size, Some(1 << 20));
        assert_eq!(config.chunk_size, Some(64 << 10));
    }

    #[test]
    fn config_file_can_come_from_the_environment() {
        let file = file_with("region = \"ap-south-1\"\n");
        let path = file.path().to_string_lossy().to_string();
        let config = Config::load_from(&ServeArgs::default(), env_of(&[("S3GW_CONFIG", &path)]))
            .expect("valid");
        assert_eq!(config.region, "ap-south-1");
    }

    #[test]
    fn relative_paths_in_the_file_are_relative_to_it() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("gw.toml");
        std::fs::write(&path, "data_dir = \"store\"\n").expect("write");
        let flags = ServeArgs::config(path);
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert_eq!(config.data_dir, dir.path().join("store"));
    }

    #[test]
    fn a_listen_host_name_resolves_to_its_addresses() {
        let flags = ServeArgs::default().with("listen", "localhost:9000");
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert!(!config.listen.is_empty());
        for addr in &config.listen {
            assert!(addr.ip().is_loopback(), "{addr}");
            assert_eq!(addr.port(), 9000);
        }
        let flags = ServeArgs::default().with("listen", "no-such-host.invalid:9000");
        let message = error_of(&flags, &[]);
        assert!(
            message.contains("--listen") && message.contains("resolve"),
            "{message}"
        );
    }

    #[test]
    fn a_bad_listen_address_names_its_source() {
        let message = error_of(&ServeArgs::default(), &[("S3GW_LISTEN", "nowhere")]);
        assert!(message.contains("S3GW_LISTEN"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
        let flags = ServeArgs::default().with("listen", "1.2.3.4");
        assert!(error_of(&flags, &[]).contains("--listen"));
    }

    #[test]
    fn an_unknown_key_in_the_file_is_refused() {
        let file = file_with("listen = \"127.0.0.1:1\"\nlisten_addr = \"x\"\n");
        let flags = ServeArgs::config(file.path().to_path_buf());
        let message = error_of(&flags, &[]);
        assert!(message.contains("listen_addr"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }

    #[test]
    fn a_duplicate_key_in_the_file_is_named() {
        let file =
            file_with("listen = \"127.0.0.1:1\"\nregion = \"eu-west-3\"\nregion = \"eu-west-1\"\n");
        let message = error_of(&ServeArgs::config(file.path()), &[]);
        assert!(message.contains("duplicate key"), "{message}");
        assert!(message.contains("`region`"), "names the key: {message}");
        assert!(message.contains("line 3"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }

    #[test]
    fn declared_storage_defaults_are_storage_clients() {
        use settings::Default;
        let embedded = StorageConfig::default();
        let ozone = OzoneStorageConfig::new(Vec::new());
        let given = |text: &str| layer::Given::new(text, "the declaration");
        let size = |text: &str| layer::parse_size(&given(text)).expect(text);
        let duration = |text: &str| layer::parse_duration(&given(text)).expect(text).as_secs();
        for s in SETTINGS {
            let Default::Storage {
                embedded: e,
                ozone: o,
            } = s.default
            else {
                continue;
            };
            let (embedded_actual, ozone_actual): (Option<u64>, Option<u64>) = match s.key {
                "block_size" => (Some(embedded.block_size), Some(ozone.block_size)),
                "chunk_size" => (
                    Some(embedded.chunk_size as u64),
                    Some(ozone.chunk_size as u64),
                ),
                "read_buffer" => (Some(embedded.read_buffer as u64), None),
                "small_block_max" => (Some(embedded.small_block_max as u64), None),
                "metadata_db_cache" => (Some(embedded.metadata_db_cache as u64), None),
                "small_block_db_cache" => (Some(embedded.small_block_db_cache as u64), None),
                "multipart_upload_expiry" => {
                    (Some(embedded.multipart_upload_expiry.as_secs()), None)
                }
                "open_key_expiry" => (Some(embedded.open_key_expiry.as_secs()), None),
                "reclaim_interval" => (Some(embedded.reclaim_interval.as_secs()), None),
                "reclaim_grace" => (Some(embedded.reclaim_grace.as_secs()), None),
                "key_cache_ttl" => (
                    Some(embedded.key_cache_ttl.as_secs()),
                    Some(ozone.key_cache_ttl.as_secs()),
                ),
                "metadata_cache_ttl" => (
                    Some(embedded.metadata_cache_ttl.as_secs()),
                    Some(ozone.metadata_cache_ttl.as_secs()),
                ),
                "unknown_key_cache_ttl" => (
                    Some(embedded.unknown_key_cache_ttl.as_secs()),
                    Some(ozone.unknown_key_cache_ttl.as_secs()),
                ),
                "ozone_connect_timeout" => (None, Some(ozone.connect_timeout.as_secs())),
                "ozone_request_timeout" => (None, Some(ozone.request_timeout.as_secs())),
                "ozone_user_secrets" => (None, Some(u64::from(ozone.user_secrets))),
                other => panic!("{other}: no storage-client default to compare with"),
            };
            let parse = |text: &str| match s.kind {
                settings::Kind::Size { .. } | settings::Kind::SizeOrOff { .. } => size(text),
                settings::Kind::Duration { .. } => duration(text),
                settings::Kind::Flag => u64::from(text == "true"),
                _ => panic!(
                    "{}: a storage default is a size, a duration or a flag",
                    s.key
                ),
            };
            assert_eq!(e.map(parse), embedded_actual, "{} on embedded", s.key);
            assert_eq!(o.map(parse), ozone_actual, "{} on ozone", s.key);
        }
    }

    #[test]
    fn an_unreadable_config_file_is_refused() {
        let flags = ServeArgs::config(PathBuf::from("/nonexistent/s3gw.toml"));
        assert!(error_of(&flags, &[]).contains("cannot read config file"));
    }

    #[test]
    fn root_key_needs_both_halves() {
        let message = error_of(
            &ServeArgs::default(),
            &[("S3GW_ROOT_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE")],
        );
        assert!(message.contains("together"), "{message}");
        let env = [
            ("S3GW_ROOT_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE"),
            (
                "S3GW_ROOT_SECRET_KEY",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
        ];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
        let root = config.root_key.expect("root key");
        assert!(root.root);
        assert_eq!(root.access_key, "AKIAIOSFODNN7EXAMPLE");
    }

    #[test]
    fn credentials_file_is_loaded_and_checked() {
        let file = file_with(
            "[[keys]]\nname = \"alice\"\naccess_key = \"ALICEKEY00000001\"\nsecret_key = \"alice-secret-alice-secret-alice-secret\"\n\n[[keys]]\nname = \"bob\"\naccess_key = \"BOBKEY0000000001\"\nsecret_key = \"bob-secret-bob-secret-bob-secret-bob\"\nroot = true\n",
        );
        let flags = ServeArgs::default().with("credentials", file.path().to_string_lossy());
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert_eq!(config.keys.len(), 2);
        assert_eq!(config.keys[0].name, "alice");
        assert!(!config.keys[0].root);
        assert!(config.keys[1].root);
    }

    #[test]
    fn bad_credentials_files_are_refused() {
        let key = |access: &str, secret: &str| {
            format!(
                "[[keys]]\nname = \"a\"\naccess_key = \"{access}\"\nsecret_key = \"{secret}\"\n"
            )
        };
        let good_secret = "0123456789abcdefghijklmnopqrstuvwxyz";
        let cases = [
            (key("AKIA/0000000000000", good_secret), "access_key"),
            (key("AKIA.0000000000000", good_secret), "access_key"),
            (key("akia00000000000000", good_secret), "access_key"),
            (key("AKIA00000000000", good_secret), "16 to 128"),
            (key(&"A".repeat(129), good_secret), "access_key"),
            (key("AKIA000000000000", "short"), "secret_key"),
            (key("AKIA000000000000", &good_secret[..29]), "30 to 128"),
            (
                key("AKIA000000000000", "with a space in the secret 000000"),
                "secret_key",
            ),
            (
                "[[keys]]\nname = \"a\"\naccess_key = \"AKIA000000000000\"\n".to_owned(),
                "secret_key",
            ),
            (
                key("AKIA000000000000", good_secret) + "extra = 1\n",
                "extra",
            ),
            (
                key("AKIA000000000000", good_secret) + &key("AKIA000000000000", good_secret),
                "twice",
            ),
            (
                key("AKIA000000000000", good_secret) + &key("AKIA000000000001", good_secret),
                "the name appears twice",
            ),
            (
                key("AKIA000000000000", good_secret).replace("name = \"a\"", "name = \"bad/name\""),
                "name must be",
            ),
        ];
        for (text, expected) in cases {
            let file = file_with(&text);
            let flags = ServeArgs::default().with("credentials", file.path().to_string_lossy());
            let message = error_of(&flags, &[]);
            assert!(message.contains(expected), "{text:?} gave {message}");
            assert!(
                message.contains(&file.path().display().to_string()),
                "names the file: {message}"
            );
            assert!(!message.contains('\n'), "one line: {message}");
        }
    }

    #[test]
    fn a_credentials_file_others_may_read_is_refused_like_the_system_secret() {
        use std::os::unix::fs::PermissionsExt;
        let secret = "alice-secret-alice-secret-alice-secret";
        let file = file_with(&format!(
            "[[keys]]\nname = \"alice\"\naccess_key = \"ALICEKEY00000001\"\nsecret_key = \"{secret}\"\n"
        ));
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let path = file.path().to_string_lossy().to_string();
        let message = error_of(&ServeArgs::default().with("credentials", &path), &[]);
        assert!(message.contains(": --credentials: "), "{message}");
        assert!(message.contains(&path), "{message}");
        assert!(message.contains("mode 644"), "{message}");
        assert!(message.contains("chmod 600"), "{message}");
        assert!(
            !message.contains('\n') && !message.contains(secret),
            "{message}"
        );
        let from_env = error_of(&ServeArgs::default(), &[("S3GW_CREDENTIALS", &path)]);
        assert!(from_env.contains(": S3GW_CREDENTIALS: "), "{from_env}");

        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        let flags = ServeArgs::default().with("credentials", &path);
        assert_eq!(
            Config::load_from(&flags, env_of(&[]))
                .expect("valid")
                .keys
                .len(),
            1
        );
    }

    #[test]
    fn the_sse_master_key_file_is_loaded_from_an_owner_only_file() {
        use std::os::unix::fs::PermissionsExt;
        let key = "q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=";
        let file = file_with(&format!("old {key}\nnew {key}\n"));
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        let path = file.path().to_string_lossy().to_string();
        let config = Config::load_from(
            &ServeArgs::default(),
            env_of(&[("S3GW_SSE_MASTER_KEY_FILE", &path)]),
        )
        .expect("valid");
        assert_eq!(config.sse_master_keys.expect("loaded").active().id, "new");
        assert!(
            Config::load_from(&ServeArgs::default(), env_of(&[]))
                .expect("defaults")
                .sse_master_keys
                .is_none()
        );
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let message = error_of(
            &ServeArgs::default().with("sse_master_key_file", &path),
            &[],
        );
        assert!(message.contains("--sse-master-key-file"), "{message}");
        assert!(message.contains("chmod 600"), "{message}");
        assert!(
            !message.contains(key) && !message.contains('\n'),
            "{message}"
        );
    }

    #[test]
    fn a_weak_root_key_in_the_environment_is_refused() {
        for (access, secret) in [
            ("AKIAIOSFODNN7EXAMPLE", "short-secret"),
            (
                "S3GW.ROOT00000001",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
        ] {
            let env = [
                ("S3GW_ROOT_ACCESS_KEY", access),
                ("S3GW_ROOT_SECRET_KEY", secret),
            ];
            let message = error_of(&ServeArgs::default(), &env);
            assert!(message.contains("S3GW_ROOT_ACCESS_KEY"), "{message}");
            assert!(
                !message.contains(secret),
                "never echoes the secret: {message}"
            );
        }
    }

    #[test]
    fn small_block_max_takes_zero_for_off_and_at_most_a_mib() {
        for (text, expected) in [("0", 0), ("64KiB", 64 << 10), ("1MiB", 1 << 20)] {
            let env = [("S3GW_SMALL_BLOCK_MAX", text)];
            let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect(text);
            assert_eq!(config.small_block_max, Some(expected), "{text}");
            assert_eq!(config.storage_config().small_block_max, expected as usize);
        }
        for bad in ["2MiB", "-1", "0x"] {
            let message = error_of(&ServeArgs::default(), &[("S3GW_SMALL_BLOCK_MAX", bad)]);
            assert!(
                message.contains("S3GW_SMALL_BLOCK_MAX"),
                "{bad:?}: {message}"
            );
        }
    }

    #[test]
    fn sizes_accept_units_and_refuse_nonsense() {
        let ok = [
            ("4194304", 4 << 20),
            ("64KiB", 64 << 10),
            ("4MiB", 4 << 20),
            ("1G", 1 << 30),
        ];
        for (text, expected) in ok {
            let env = [("S3GW_BLOCK_SIZE", text)];
            let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect(text);
            assert_eq!(config.block_size, Some(expected), "{text}");
        }
        for bad in ["", "0", "4XB", "-1", "99999999999999999999"] {
            let message = error_of(&ServeArgs::default(), &[("S3GW_BLOCK_SIZE", bad)]);
            assert!(message.contains("S3GW_BLOCK_SIZE"), "{bad:?}: {message}");
        }
        let env = [("S3GW_BLOCK_SIZE", "1MiB"), ("S3GW_CHUNK_SIZE", "2MiB")];
        let message = error_of(&ServeArgs::default(), &env);
        assert!(message.contains("larger than the block size"), "{message}");
        let flags = ServeArgs::default().with("chunk_size", "2MiB");
        let message = error_of(&flags, &env);
        assert!(
            message.contains("--chunk-size") && message.contains("S3GW_BLOCK_SIZE"),
            "names both sources: {message}"
        );
    }

    #[test]
    fn other_settings_are_validated() {
        assert!(
            error_of(&ServeArgs::default(), &[("S3GW_REGION", "US East")]).contains("S3GW_REGION")
        );
        assert!(
            error_of(&ServeArgs::default(), &[("S3GW_DOMAIN", "http://x/")])
                .contains("S3GW_DOMAIN")
        );
        assert!(
            error_of(&ServeArgs::default(), &[("S3GW_LOG_LEVEL", "s3=verbose[")])
                .contains("S3GW_LOG_LEVEL")
        );
        assert!(error_of(&ServeArgs::default(), &[("S3GW_TLS_CERT", "cert.pem")]).contains("both"));
    }

    #[test]
    fn durations_accept_units_and_refuse_nonsense() {
        let ok = [
            ("90s", 90),
            ("15m", 15 * 60),
            ("2h", 2 * 3600),
            ("7d", 7 * 86400),
            ("3600", 3600),
            ("0", 0),
            ("3650d", 3650 * 86400),
        ];
        for (text, seconds) in ok {
            let env = [("S3GW_KEY_CACHE_TTL", text)];
            let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect(text);
            assert_eq!(
                config.key_cache_ttl,
                Some(Duration::from_secs(seconds)),
                "{text}"
            );
        }
        for bad in [
            "",
            "1w",
            "15M",
            "-1",
            "1.5h",
            "1h30m",
            "h",
            "3651d",
            "99999999999999999999",
        ] {
            let message = error_of(&ServeArgs::default(), &[("S3GW_KEY_CACHE_TTL", bad)]);
            assert!(message.contains("S3GW_KEY_CACHE_TTL"), "{bad:?}: {message}");
            assert!(!message.contains('\n'), "one line: {message}");
        }
    }

    #[test]
    fn a_zero_multipart_upload_expiry_is_refused() {
        let flags = ServeArgs::default().with("multipart_upload_expiry", "0s");
        let message = error_of(&flags, &[]);
        assert!(message.contains("--multipart-upload-expiry"), "{message}");
        assert!(message.contains("at least 1s"), "{message}");
    }

    #[test]
    fn console_timeouts_are_checked_with_the_console_off() {
        for key in ["S3GW_CONSOLE_SESSION_IDLE", "S3GW_CONSOLE_SESSION_MAX"] {
            let message = error_of(&ServeArgs::default(), &[(key, "0s")]);
            assert!(message.contains(key), "{message}");
            assert!(message.contains("at least 1s"), "{message}");
        }
        let on = Config::load_from(&ServeArgs::default(), env_of(&[("S3GW_CONSOLE", "true")]));
        assert!(on.expect("valid").console.is_some());
    }

    #[test]
    fn a_zero_reclaim_interval_is_refused_and_a_zero_grace_is_not() {
        let flags = ServeArgs::default().with("reclaim_interval", "0s");
        let message = error_of(&flags, &[]);
        assert!(message.contains("--reclaim-interval"), "{message}");
        assert!(message.contains("at least 1s"), "{message}");
        let flags = ServeArgs::default().with("reclaim_grace", "0s");
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert_eq!(config.storage_config().reclaim_grace, Duration::ZERO);
    }

    #[test]
    fn storage_settings_follow_file_then_env_then_flags() {
        let file = file_with(
            "read_buffer = \"64KiB\"\nmultipart_upload_expiry = \"2d\"\nkey_cache_ttl = 5\nmetadata_cache_ttl = \"10m\"\n",
        );
        let flags = ServeArgs::config(file.path().to_path_buf()).with("metadata_cache_ttl", "0");
        let env = [
            ("S3GW_MULTIPART_UPLOAD_EXPIRY", "36h"),
            ("S3GW_METADATA_CACHE_TTL", "1m"),
        ];
        let config = Config::load_from(&flags, env_of(&env)).expect("valid");
        assert_eq!(config.read_buffer, Some(64 << 10), "file beats default");
        assert_eq!(
            config.key_cache_ttl,
            Some(Duration::from_secs(5)),
            "TOML integer"
        );
        assert_eq!(
            config.multipart_upload_expiry,
            Some(Duration::from_secs(36 * 3600)),
            "env beats file"
        );
        assert_eq!(
            config.metadata_cache_ttl,
            Some(Duration::ZERO),
            "flag beats env"
        );
    }

    #[test]
    fn unset_storage_settings_keep_the_storage_defaults() {
        let defaults = StorageConfig::default();
        let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
        let storage = config.storage_config();
        assert_eq!(storage.data_dir, config.data_dir);
        assert_eq!(storage.block_size, defaults.block_size);
        assert_eq!(storage.chunk_size, defaults.chunk_size);
        assert_eq!(storage.read_buffer, defaults.read_buffer);
        assert_eq!(
            storage.multipart_upload_expiry,
            defaults.multipart_upload_expiry
        );
        assert_eq!(storage.open_key_expiry, defaults.open_key_expiry);
        assert_eq!(storage.reclaim_interval, defaults.reclaim_interval);
        assert_eq!(storage.reclaim_grace, defaults.reclaim_grace);
        assert_eq!(storage.key_cache_ttl, defaults.key_cache_ttl);
        assert_eq!(storage.metadata_cache_ttl, defaults.metadata_cache_ttl);
        assert_eq!(
            storage.unknown_key_cache_ttl,
            defaults.unknown_key_cache_ttl
        );

        let env = [
            ("S3GW_BLOCK_SIZE", "8MiB"),
            ("S3GW_CHUNK_SIZE", "1MiB"),
            ("S3GW_READ_BUFFER", "512KiB"),
            ("S3GW_MULTIPART_UPLOAD_EXPIRY", "1d"),
            ("S3GW_OPEN_KEY_EXPIRY", "1h"),
            ("S3GW_RECLAIM_INTERVAL", "5s"),
            ("S3GW_RECLAIM_GRACE", "0"),
            ("S3GW_KEY_CACHE_TTL", "2s"),
            ("S3GW_METADATA_CACHE_TTL", "0"),
            ("S3GW_UNKNOWN_KEY_CACHE_TTL", "3s"),
        ];
        let storage = Config::load_from(&ServeArgs::default(), env_of(&env))
            .expect("valid")
            .storage_config();
        assert_eq!(storage.block_size, 8 << 20);
        assert_eq!(storage.chunk_size, 1 << 20);
        assert_eq!(storage.read_buffer, 512 << 10);
        assert_eq!(storage.multipart_upload_expiry, Duration::from_secs(86400));
        assert_eq!(storage.open_key_expiry, Duration::from_secs(3600));
        assert_eq!(storage.reclaim_interval, Duration::from_secs(5));
        assert_eq!(storage.reclaim_grace, Duration::ZERO);
        assert_eq!(storage.key_cache_ttl, Duration::from_secs(2));
        assert_eq!(storage.metadata_cache_ttl, Duration::ZERO);
        assert_eq!(storage.unknown_key_cache_ttl, Duration::from_secs(3));
    }

    #[test]
    fn every_setting_has_a_flag() {
        use clap::{Args, FromArgMatches};
        let mut argv = vec!["s3-gateway".to_owned()];
        for s in SETTINGS {
            argv.extend([s.flag(), "x".to_owned()]);
        }
        let command = ServeArgs::augment_args(clap::Command::new("s3-gateway"));
        let matches = command
            .try_get_matches_from(argv)
            .expect("every flag parses");
        let flags = ServeArgs::from_arg_matches(&matches).expect("flags");
        let layer = flags.0.layer();
        let flagged: Vec<&str> = layer.0.keys().copied().collect();
        let mut named: Vec<&str> = SETTINGS.iter().map(|s| s.key).collect();
        named.sort_unstable();
        assert_eq!(flagged, named);
        assert_eq!(
            layer.get("key_cache_ttl").map(|s| s.origin.as_str()),
            Some("--key-cache-ttl")
        );
    }

    fn ozone_settings_of(config: &Config) -> &OzoneSettings {
        match &config.backend {
            Backend::Ozone(ozone) => ozone,
            Backend::Embedded => panic!("expected the ozone back end"),
        }
    }

    #[test]
    fn the_embedded_back_end_is_the_default() {
        let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
        assert_eq!(config.backend, Backend::Embedded);
        let env = [("S3GW_BACKEND", "embedded")];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
        assert_eq!(config.backend, Backend::Embedded);
    }

    #[test]
    fn the_ozone_back_end_takes_one_or_more_oms_from_any_layer() {
        let flags = ServeArgs::default()
            .with("backend", "ozone")
            .with("om", "om1:8981, om2.example.com:8981,[::1]:8981");
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        let ozone = ozone_settings_of(&config);
        assert_eq!(ozone.om, ["om1:8981", "om2.example.com:8981", "[::1]:8981"]);
        assert_eq!(ozone.connect_timeout, None);

        let file = file_with(
            "backend = \"ozone\"\nom = [\"om1:8981\", \"om2:8981\"]\nozone_request_timeout = \"90s\"\n",
        );
        let flags = ServeArgs::config(file.path().to_path_buf());
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        let ozone = ozone_settings_of(&config);
        assert_eq!(ozone.om, ["om1:8981", "om2:8981"], "TOML array");
        assert_eq!(ozone.request_timeout, Some(Duration::from_secs(90)));

        let env = [
            ("S3GW_OM", "127.0.0.1:8981"),
            ("S3GW_OZONE_CONNECT_TIMEOUT", "2s"),
        ];
        let config = Config::load_from(&flags, env_of(&env)).expect("valid");
        let ozone = ozone_settings_of(&config);
        assert_eq!(ozone.om, ["127.0.0.1:8981"], "env beats file");
        assert_eq!(ozone.connect_timeout, Some(Duration::from_secs(2)));
    }

    #[test]
    fn the_ozone_records_key_comes_from_an_owner_only_file() {
        use std::os::unix::fs::PermissionsExt;
        let key = "q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=";
        let file = file_with(&format!("{key}\n"));
        let path = file.path().to_string_lossy().to_string();
        let env = [
            ("S3GW_BACKEND", "ozone"),
            ("S3GW_OM", "om1:8981"),
            ("S3GW_OZONE_RECORDS_KEY_FILE", path.as_str()),
        ];
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let message = Config::load_from(&ServeArgs::default(), env_of(&env))
            .expect_err("open to others")
            .to_string();
        assert!(message.contains("chmod 600"), "{message}");
        assert!(!message.contains(key), "{message}");
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
        let storage = config.ozone_storage_config(ozone_settings_of(&config));
        assert_eq!(
            storage.records_key,
            Some(RecordsKey::new(key.as_bytes().to_vec()))
        );
        assert!(!format!("{config:?}").contains(key), "the key in Debug");
    }

    #[test]
    fn the_ozone_system_secret_comes_from_an_owner_only_file() {
        use std::os::unix::fs::PermissionsExt;
        let file = file_with("awsAccessKey=.s3gw\nawsSecret=0123abcd\n");
        let path = file.path().to_string_lossy().to_string();
        let env = [
            ("S3GW_BACKEND", "ozone"),
            ("S3GW_OM", "om1:8981"),
            ("S3GW_OZONE_SYSTEM_SECRET_FILE", path.as_str()),
        ];
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
        let storage = config.ozone_storage_config(ozone_settings_of(&config));
        assert_eq!(
            storage.system_secret,
            Some(SystemSecret::new("0123abcd".into()))
        );
        assert!(
            !format!("{config:?}").contains("0123abcd"),
            "the secret in Debug"
        );

        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let message = error_of(&ServeArgs::default(), &env);
        assert!(
            message.contains("S3GW_OZONE_SYSTEM_SECRET_FILE"),
            "{message}"
        );
        assert!(message.contains("chmod 600"), "{message}");
        assert!(!message.contains("0123abcd"), "{message}");

        let embedded = [("S3GW_OZONE_SYSTEM_SECRET_FILE", path.as_str())];
        assert!(error_of(&ServeArgs::default(), &embedded).contains("--backend ozone"));
    }

    #[test]
    fn the_ozone_back_end_needs_an_om() {
        let env = [("S3GW_BACKEND", "ozone")];
        let message = error_of(&ServeArgs::default(), &env);
        assert!(message.contains("--om HOST:PORT"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }

    #[test]
    fn an_om_without_the_ozone_back_end_is_refused() {
        let flags = ServeArgs::default().with("om", "127.0.0.1:8981");
        let message = error_of(&flags, &[]);
        assert!(message.contains("--om"), "{message}");
        assert!(message.contains("--backend ozone"), "{message}");
        let env = [("S3GW_OZONE_REQUEST_TIMEOUT", "10s")];
        assert!(error_of(&ServeArgs::default(), &env).contains("S3GW_OZONE_REQUEST_TIMEOUT"));
    }

    #[test]
    fn embedded_only_settings_are_refused_on_ozone() {
        let env = [
            ("S3GW_BACKEND", "ozone"),
            ("S3GW_OM", "om1:8981"),
            ("S3GW_READ_BUFFER", "64KiB"),
        ];
        let message = error_of(&ServeArgs::default(), &env);
        assert!(message.contains("S3GW_READ_BUFFER"), "{message}");
        assert!(message.contains("embedded"), "{message}");
    }

    #[test]
    fn unknown_back_ends_and_bad_om_addresses_are_refused() {
        let message = error_of(&ServeArgs::default(), &[("S3GW_BACKEND", "s3")]);
        assert!(message.contains("S3GW_BACKEND"), "{message}");
        assert!(message.contains("embedded or ozone"), "{message}");
        for bad in [
            "",
            "om1",
            "om1:",
            "om1:0",
            "om1:99999",
            "http://om1:8981",
            ":8981",
            "om1:8981,",
            "om 1:8981",
        ] {
            let env = [("S3GW_BACKEND", "ozone"), ("S3GW_OM", bad)];
            let message = error_of(&ServeArgs::default(), &env);
            assert!(message.contains("S3GW_OM"), "{bad:?}: {message}");
            assert!(message.contains("HOST:PORT"), "{bad:?}: {message}");
        }
        let file = file_with("backend = \"ozone\"\nom = [8981]\n");
        let flags = ServeArgs::config(file.path().to_path_buf());
        assert!(error_of(&flags, &[]).contains("array of strings"));
        let env = [
            ("S3GW_BACKEND", "ozone"),
            ("S3GW_OM", "om1:8981"),
            ("S3GW_OZONE_CONNECT_TIMEOUT", "0"),
        ];
        assert!(error_of(&ServeArgs::default(), &env).contains("at least 1s"));
    }

    #[test]
    fn ozone_storage_settings_keep_the_back_end_defaults_unless_set() {
        let env = [("S3GW_BACKEND", "ozone"), ("S3GW_OM", "om1:8981,om2:8981")];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
        let storage = config.ozone_storage_config(ozone_settings_of(&config));
        let defaults = OzoneStorageConfig::new(Vec::new());
        assert_eq!(storage.om_addresses, ["om1:8981", "om2:8981"]);
        assert_eq!(storage.block_size, defaults.block_size);
        assert_eq!(storage.chunk_size, defaults.chunk_size);
        assert_eq!(storage.connect_timeout, defaults.connect_timeout);
        assert_eq!(storage.request_timeout, defaults.request_timeout);
        assert_eq!(storage.metadata_cache_ttl, defaults.metadata_cache_ttl);
        assert_eq!(
            storage.unknown_key_cache_ttl,
            defaults.unknown_key_cache_ttl
        );

        let env = [
            ("S3GW_BACKEND", "ozone"),
            ("S3GW_OM", "om1:8981"),
            ("S3GW_BLOCK_SIZE", "1MiB"),
            ("S3GW_CHUNK_SIZE", "256KiB"),
            ("S3GW_OZONE_CONNECT_TIMEOUT", "3s"),
            ("S3GW_OZONE_REQUEST_TIMEOUT", "20s"),
            ("S3GW_KEY_CACHE_TTL", "1s"),
        ];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
        let storage = config.ozone_storage_config(ozone_settings_of(&config));
        assert_eq!(storage.block_size, 1 << 20);
        assert_eq!(storage.chunk_size, 256 << 10);
        assert_eq!(storage.connect_timeout, Duration::from_secs(3));
        assert_eq!(storage.request_timeout, Duration::from_secs(20));
        assert_eq!(storage.key_cache_ttl, Duration::from_secs(1));
    }

    #[test]
    fn file_values_of_the_wrong_type_are_refused() {
        for (text, expected) in [
            ("listen = 9878\n", "listen in"),
            ("key_cache_ttl = true\n", "key_cache_ttl in"),
        ] {
            let file = file_with(text);
            let flags = ServeArgs::config(file.path().to_path_buf());
            let message = error_of(&flags, &[]);
            assert!(message.contains(expected), "{text:?} gave {message}");
            assert!(!message.contains('\n'), "one line: {message}");
        }
    }

    #[test]
    fn limits_default_and_follow_every_layer() {
        let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
        assert_eq!(config.limits, Limits::default());
        assert!(config.sigv2, "SigV2 is on unless turned off");

        let file = file_with("max_connections = 10\nidle_timeout = \"5s\"\nsigv2 = false\n");
        let flags = ServeArgs::config(file.path().to_path_buf()).with("max_header_bytes", "4KiB");
        let env = [
            ("S3GW_MAX_CONNECTIONS", "20"),
            ("S3GW_CHUNK_BUFFER_WAIT", "0"),
        ];
        let config = Config::load_from(&flags, env_of(&env)).expect("valid");
        assert!(!config.sigv2, "TOML boolean");
        assert_eq!(config.limits.max_connections, 20, "env beats file");
        assert_eq!(config.limits.idle_timeout, Duration::from_secs(5));
        assert_eq!(config.limits.max_header_bytes, 4 << 10);
        assert_eq!(config.limits.chunk_buffer_wait, Duration::ZERO);
    }

    #[test]
    fn bad_limits_are_refused() {
        for (var, value, expected) in [
            ("S3GW_MAX_CONNECTIONS", "0", "greater than zero"),
            ("S3GW_MAX_CONNECTIONS", "4KiB", "whole number"),
            ("S3GW_IDLE_TIMEOUT", "0", "at least 1s"),
            ("S3GW_BODY_IDLE_TIMEOUT", "0s", "at least 1s"),
            ("S3GW_SIGV2", "yes", "true or false"),
            ("S3GW_MAX_HEADER_BYTES", "8GiB", "too large (at most "),
        ] {
            let message = error_of(&ServeArgs::default(), &[(var, value)]);
            assert!(message.contains(var), "{var}={value}: {message}");
            assert!(message.contains(expected), "{var}={value}: {message}");
        }
        let env = [
            ("S3GW_MAX_SIGNED_CHUNK", "2MiB"),
            ("S3GW_CHUNK_BUFFER_BUDGET", "1MiB"),
        ];
        assert!(error_of(&ServeArgs::default(), &env).contains("chunk buffer budget"));
    }
}
