//! Gateway configuration: defaults < TOML file (`--config`) < `S3GW_*`
//! environment < command-line flags, validated once at start.
//!
//! Each setting is declared once, in [`settings::SETTINGS`]: its flag, its
//! environment variable, its TOML key, its default, its bounds and its row
//! in the documentation follow from that entry, and so does its field of
//! [`settings::Values`], read from the merged layers ([`layer`]) with its
//! bounds checked. This module puts those values into the [`Config`] and
//! builds from them what involves more than one setting (chunk and block
//! size, the back end, TLS) or more than a value (addresses, key files).

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
use settings::{ReadBy, SETTINGS, Setting, Values};
pub use unknown_env::unknown_vars;

/// The root key given in the environment, instead of a generated one.
pub const ROOT_ACCESS_KEY_ENV: &str = "S3GW_ROOT_ACCESS_KEY";
pub const ROOT_SECRET_KEY_ENV: &str = "S3GW_ROOT_SECRET_KEY";

/// The validated configuration the server runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Every setting's value, checked against its declared bounds
    /// (`config.settings.block_size`); `domain` is lower-cased. What
    /// involves more than one setting, or a file a setting names, is
    /// built from them below.
    pub settings: Values,
    /// Every address `listen` names (a host name can resolve to several),
    /// at least one; the gateway serves on all of them.
    pub listen: Vec<SocketAddr>,
    /// Where objects live.
    pub backend: Backend,
    /// The proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: TrustedProxies,
    /// Keys loaded from the credentials file, upserted into storage at start.
    pub keys: Vec<KeyEntry>,
    /// Root key given by `S3GW_ROOT_ACCESS_KEY` + `S3GW_ROOT_SECRET_KEY`.
    pub root_key: Option<KeyEntry>,
    pub log_format: LogFormat,
    /// Where connections are served (`connection_runtime`).
    pub connection_runtime: ConnectionRuntime,
    /// When the lifecycle worker runs, and how long its day is.
    pub lifecycle: Schedule,
    pub tls: Option<TlsFiles>,
    /// The web console (docs/console.md), if `console` is on.
    pub console: Option<ConsoleSettings>,
    /// SSE-S3's master keys from `sse_master_key_file`; unset, the
    /// embedded back end generates its own at start.
    pub sse_master_keys: Option<Keyring>,
    /// SSE-KMS's key service, if `sse_kms_url` names one.
    pub sse_kms: Option<KmsSettings>,
    pub limits: Limits,
}

/// Where SSE-KMS's data keys come from (see `crate::sse::kms`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KmsSettings {
    /// The Hadoop KMS's URL, checked at start.
    pub url: String,
    /// Who the gateway is to it.
    pub user: String,
    /// The key `aws:kms` without a key id is sealed under.
    pub default_key: Option<String>,
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

/// Where accepted connections are served (`server::connection_threads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionRuntime {
    /// On the shared runtime's workers, which steal work from each other.
    Shared,
    /// Each on one of a single-threaded runtime per core, for its whole life.
    PerThread,
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
    pub blocks_in_flight: Option<u64>,
    pub chunks_in_flight: Option<u64>,
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
        let layer = Layer::default();
        match Values::read(&layer).and_then(|values| layer.limits(&values)) {
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
            .with(settings::LISTEN, "127.0.0.1:0")
            .with(settings::DATA_DIR, data_dir.display().to_string());
        match Self::load_from(&flags, |_| None) {
            Ok(config) => config,
            Err(error) => panic!("the declared defaults are invalid: {error}"),
        }
    }

    /// The storage back end's configuration: its defaults, overridden by
    /// every tunable set here.
    pub fn storage_config(&self) -> StorageConfig {
        let v = &self.settings;
        let defaults = StorageConfig::new(&v.data_dir);
        StorageConfig {
            block_size: v.block_size.unwrap_or(defaults.block_size),
            chunk_size: v.chunk_size.map_or(defaults.chunk_size, in_memory),
            read_buffer: v.read_buffer.map_or(defaults.read_buffer, in_memory),
            small_block_max: v
                .small_block_max
                .map_or(defaults.small_block_max, in_memory),
            object_with_key_max: v
                .object_with_key_max
                .map_or(defaults.object_with_key_max, in_memory),
            metadata_db_cache: v
                .metadata_db_cache
                .map_or(defaults.metadata_db_cache, in_memory),
            small_block_db_cache: v
                .small_block_db_cache
                .map_or(defaults.small_block_db_cache, in_memory),
            multipart_upload_expiry: v
                .multipart_upload_expiry
                .unwrap_or(defaults.multipart_upload_expiry),
            open_key_expiry: v.open_key_expiry.unwrap_or(defaults.open_key_expiry),
            reclaim_interval: v.reclaim_interval.unwrap_or(defaults.reclaim_interval),
            reclaim_grace: v.reclaim_grace.unwrap_or(defaults.reclaim_grace),
            key_cache_ttl: v.key_cache_ttl.unwrap_or(defaults.key_cache_ttl),
            metadata_cache_ttl: v.metadata_cache_ttl.unwrap_or(defaults.metadata_cache_ttl),
            unknown_key_cache_ttl: v
                .unknown_key_cache_ttl
                .unwrap_or(defaults.unknown_key_cache_ttl),
            ..defaults
        }
    }

    /// The `ozone` back end's configuration: its defaults, overridden by
    /// `ozone` and by the tunables both back ends share.
    pub fn ozone_storage_config(&self, ozone: &OzoneSettings) -> OzoneStorageConfig {
        let v = &self.settings;
        let defaults = OzoneStorageConfig::new(ozone.om.clone());
        OzoneStorageConfig {
            block_size: v.block_size.unwrap_or(defaults.block_size),
            chunk_size: v.chunk_size.map_or(defaults.chunk_size, in_memory),
            connect_timeout: ozone.connect_timeout.unwrap_or(defaults.connect_timeout),
            request_timeout: ozone.request_timeout.unwrap_or(defaults.request_timeout),
            blocks_in_flight: ozone
                .blocks_in_flight
                .map_or(defaults.blocks_in_flight, in_memory),
            chunks_in_flight: ozone
                .chunks_in_flight
                .map_or(defaults.chunks_in_flight, in_memory),
            system_secret: ozone.system_secret.clone(),
            records_key: ozone.records_key.clone(),
            tls: ozone.tls.clone(),
            user_secrets: ozone.user_secrets.unwrap_or(defaults.user_secrets),
            key_cache_ttl: v.key_cache_ttl.unwrap_or(defaults.key_cache_ttl),
            metadata_cache_ttl: v.metadata_cache_ttl.unwrap_or(defaults.metadata_cache_ttl),
            unknown_key_cache_ttl: v
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
        let scheme = if layer.get(&settings::TLS_CERT).is_some() {
            "https"
        } else {
            "http"
        };
        Ok(Self {
            region: layer.region()?,
            data_dir: layer.data_dir()?,
            credentials: layer
                .path(settings::CREDENTIALS)
                .map(|s| PathBuf::from(&s.value)),
            endpoint: format!("{scheme}://{}", reachable(layer.listen()?[0])),
        })
    }
}

impl Layer {
    /// `IP:PORT`, or `HOST:PORT` resolved to every address of HOST.
    fn listen(&self) -> Result<Vec<SocketAddr>, ConfigError> {
        let s = self.text(settings::LISTEN);
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
        let s = self.path(settings::DATA_DIR);
        if s.value.is_empty() {
            return Err(s.invalid("must not be empty"));
        }
        Ok(PathBuf::from(&s.value))
    }

    fn region(&self) -> Result<String, ConfigError> {
        Ok(self.word(settings::REGION)?.value)
    }

    fn validate(self, root_key: Option<KeyEntry>) -> Result<Config, ConfigError> {
        // A setting only the other back end reads is refused before any
        // value is read: that it does nothing is the mistake to report.
        self.refuse_the_other_back_ends_settings()?;
        let mut values = Values::read(&self)?;
        let listen = self.listen()?;
        self.data_dir()?; // not empty; the value is `values.data_dir`
        if let Some(domain) = &mut values.domain {
            domain.make_ascii_lowercase();
        }
        let trusted_proxies = match self.list(settings::TRUSTED_PROXIES) {
            None => TrustedProxies::default(),
            Some(s) => TrustedProxies::parse(s.value.split(',')).map_err(|why| s.invalid(&why))?,
        };
        if values.proxy_protocol
            && trusted_proxies.is_empty()
            && let Some(s) = self.get(&settings::PROXY_PROTOCOL)
        {
            return Err(s.invalid("needs trusted_proxies: the proxies that send the header"));
        }
        let keys = match self.path(settings::CREDENTIALS) {
            Some(s) => private_file::check(Path::new(&s.value), "secret keys")
                .map_err(|why| format!("credentials file {why}"))
                .and_then(|()| {
                    credentials_file::load(Path::new(&s.value)).map_err(|e| e.to_string())
                })
                .map_err(|e| ConfigError(format!("{}: {e}", s.origin)))?,
            None => Vec::new(),
        };
        if let (Some(block), Some(chunk)) = (values.block_size, values.chunk_size)
            && chunk > block
            && let Some(s) = self.get(&settings::CHUNK_SIZE)
        {
            let block = self.get(&settings::BLOCK_SIZE).map_or_else(
                || format!("the default block size {block}"),
                |b| format!("{} = {:?}", b.origin, b.value),
            );
            return Err(s.invalid(&format!("is larger than the block size ({block})")));
        }
        let backend = self.backend(&values)?;
        crate::logging::check(&values.log_level)
            .map_err(|why| self.text(settings::LOG_LEVEL).invalid(&why))?;
        let tls = match (self.path(settings::TLS_CERT), self.path(settings::TLS_KEY)) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: PathBuf::from(&cert.value),
                key: PathBuf::from(&key.value),
            }),
            (None, None) => None,
            (Some(s), None) | (None, Some(s)) => {
                return Err(s.invalid("TLS needs both a certificate and a key"));
            }
        };
        let log_format = match values.log_format {
            "json" => LogFormat::Json,
            _ => LogFormat::Text,
        };
        let connection_runtime = match values.connection_runtime {
            "per-thread" => ConnectionRuntime::PerThread,
            _ => ConnectionRuntime::Shared,
        };
        // Both durations are checked whether or not the console is on: a
        // bad value is refused at start, not when the console is turned on.
        let console = values.console.then_some(ConsoleSettings {
            idle: values.console_session_idle,
            max: values.console_session_max,
        });
        let sse_master_keys = self
            .path(settings::SSE_MASTER_KEY_FILE)
            .map(|s| {
                sse_master_key::read(Path::new(&s.value))
                    .map_err(|why| ConfigError(format!("{}: {why}", s.origin)))
            })
            .transpose()?;
        let sse_kms = self.kms_settings(&values)?;
        let limits = self.limits(&values)?;
        let lifecycle = Schedule {
            interval: values.lifecycle_interval,
            day: values.lifecycle_day,
        };
        Ok(Config {
            settings: values,
            listen,
            backend,
            trusted_proxies,
            keys,
            root_key,
            log_format,
            connection_runtime,
            lifecycle,
            tls,
            console,
            sse_master_keys,
            sse_kms,
            limits,
        })
    }

    /// SSE-KMS's settings, if `sse_kms_url` is given; the default key is
    /// refused without it, as it would do nothing.
    fn kms_settings(&self, values: &Values) -> Result<Option<KmsSettings>, ConfigError> {
        let trimmed = |s: &String| s.trim().to_owned();
        let Some(url) = values
            .sse_kms_url
            .as_ref()
            .map(trimmed)
            .filter(|url| !url.is_empty())
        else {
            if let Some(given) = self.get(&settings::SSE_KMS_DEFAULT_KEY) {
                return Err(ConfigError(format!(
                    "{} names a default KMS key, but no KMS is configured (sse_kms_url)",
                    given.origin
                )));
            }
            return Ok(None);
        };
        crate::sse::kms::Kms::check_url(&url)
            .map_err(|why| ConfigError(format!("sse_kms_url: {why}")))?;
        Ok(Some(KmsSettings {
            url,
            user: trimmed(&values.sse_kms_user),
            default_key: values
                .sse_kms_default_key
                .as_ref()
                .map(trimmed)
                .filter(|key| !key.is_empty()),
        }))
    }

    /// The connection and request limits, in memory's units.
    fn limits(&self, values: &Values) -> Result<Limits, ConfigError> {
        let limits = Limits {
            max_connections: in_memory(values.max_connections),
            request_header_timeout: values.request_header_timeout,
            idle_timeout: values.idle_timeout,
            http2_keepalive_interval: values.http2_keepalive_interval,
            http2_keepalive_timeout: values.http2_keepalive_timeout,
            body_idle_timeout: values.body_idle_timeout,
            max_header_bytes: in_memory(values.max_header_bytes),
            max_header_count: in_memory(values.max_header_count),
            max_url_length: in_memory(values.max_url_length),
            max_signed_chunk: in_memory(values.max_signed_chunk),
            chunk_buffer_budget: in_memory(values.chunk_buffer_budget),
            chunk_buffer_wait: values.chunk_buffer_wait,
        };
        if limits.max_signed_chunk > limits.chunk_buffer_budget {
            let named = |setting: &Setting| {
                self.get(setting).map_or_else(
                    || format!("{}'s default", setting.key),
                    |s| s.origin.clone(),
                )
            };
            return Err(ConfigError(format!(
                "max signed chunk {} ({}) is larger than the chunk buffer budget {} ({}): no signed chunk could ever be buffered",
                limits.max_signed_chunk,
                named(&settings::MAX_SIGNED_CHUNK),
                limits.chunk_buffer_budget,
                named(&settings::CHUNK_BUFFER_BUDGET),
            )));
        }
        Ok(limits)
    }

    /// Refuses a setting that only the other back end reads: a setting
    /// that silently does nothing hides a mistake.
    fn refuse_the_other_back_ends_settings(&self) -> Result<(), ConfigError> {
        let (not_read_here, reader) = if self.choice(settings::BACKEND)? == "ozone" {
            (ReadBy::Ozone, "the embedded back end")
        } else {
            (ReadBy::Embedded, "--backend ozone")
        };
        let refused = SETTINGS
            .iter()
            .filter(|s| s.read_by != ReadBy::Both && s.read_by != not_read_here)
            .find_map(|s| self.get(s));
        match refused {
            Some(s) => Err(s.invalid(&format!("only {reader} reads this setting"))),
            None => Ok(()),
        }
    }

    /// The back end, with what only `ozone` needs.
    fn backend(&self, values: &Values) -> Result<Backend, ConfigError> {
        if values.backend != "ozone" {
            return Ok(Backend::Embedded);
        }
        let Some(om) = self.list(settings::OM) else {
            return Err(ConfigError(format!(
                "backend ozone needs the Ozone Manager address: {} {} (or {})",
                settings::OM.flag(),
                settings::OM.value_name(),
                settings::OM.env()
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
            connect_timeout: values.ozone_connect_timeout,
            request_timeout: values.ozone_request_timeout,
            blocks_in_flight: values.ozone_blocks_in_flight,
            chunks_in_flight: values.ozone_chunks_in_flight,
            system_secret: self
                .path(settings::OZONE_SYSTEM_SECRET_FILE)
                .map(|s| {
                    system_secret::read(Path::new(&s.value))
                        .map_err(|why| ConfigError(format!("{}: {why}", s.origin)))
                })
                .transpose()?,
            records_key: self
                .path(settings::OZONE_RECORDS_KEY_FILE)
                .map(|s| {
                    records_key::read(Path::new(&s.value))
                        .map_err(|why| ConfigError(format!("{}: {why}", s.origin)))
                })
                .transpose()?,
            tls: self.ozone_tls()?,
            user_secrets: values.ozone_user_secrets,
        }))
    }

    /// `ozone_tls_ca_file` read, with `ozone_tls_server_name`; a server
    /// name without a CA file is refused rather than ignored.
    fn ozone_tls(&self) -> Result<Option<OzoneTls>, ConfigError> {
        let server_name = self.text(settings::OZONE_TLS_SERVER_NAME);
        let Some(ca) = self.path(settings::OZONE_TLS_CA_FILE) else {
            return match server_name {
                Some(name) => Err(name.invalid("needs ozone_tls_ca_file")),
                None => Ok(None),
            };
        };
        let pem = std::fs::read(&ca.value)
            .map_err(|e| ConfigError(format!("{}: cannot read {}: {e}", ca.origin, ca.value)))?;
        OzoneTls::new(pem, server_name.map(|name| name.value))
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

/// A size of an in-memory buffer, or a count of things held in memory.
/// Both were validated as u64; on a 32-bit target an oversized one
/// saturates and storage refuses it at open.
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
mod tests;
