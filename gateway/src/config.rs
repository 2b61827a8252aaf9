//! Gateway configuration: defaults < TOML file (`--config`) < `S3GW_*`
//! environment < command-line flags, validated once at start.
//!
//! Every setting is first collected as text together with where it came from,
//! so that an invalid value is reported in one line naming its source
//! (`--listen`, `S3GW_LISTEN` or `listen in gateway.toml`). A setting is named
//! once, in [`SETTINGS`]; its environment variable and flag follow from that
//! name, so adding one costs an entry there, a flag, and its validation.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use storage_client::{OzoneStorageConfig, StorageConfig};

pub const DEFAULT_LISTEN: &str = "127.0.0.1:9878";
pub const DEFAULT_DATA_DIR: &str = "./data";
pub const DEFAULT_REGION: &str = "us-east-1";
pub const DEFAULT_LOG_LEVEL: &str = "info";

/// Longer durations are refused: nobody means them, and the caches panic
/// on a time-to-live beyond a thousand years.
const MAX_DURATION: Duration = Duration::from_secs(3650 * 24 * 60 * 60);

/// The validated configuration the server runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    /// Where objects live.
    pub backend: Backend,
    /// The embedded store; on every back end also where a generated root
    /// key is written.
    pub data_dir: PathBuf,
    pub region: String,
    /// Base domain for virtual-host style (`bucket.<domain>`).
    pub domain: Option<String>,
    /// Keys loaded from the credentials file, upserted into storage at start.
    pub keys: Vec<KeyEntry>,
    /// Root key given by `S3GW_ROOT_ACCESS_KEY` + `S3GW_ROOT_SECRET_KEY`.
    pub root_key: Option<KeyEntry>,
    /// Storage tunables; `None` keeps the storage back end's default (see
    /// [`StorageConfig`] for what each one means).
    pub block_size: Option<u64>,
    pub chunk_size: Option<u64>,
    pub read_buffer: Option<u64>,
    pub multipart_upload_expiry: Option<Duration>,
    pub open_key_expiry: Option<Duration>,
    pub reclaim_interval: Option<Duration>,
    pub reclaim_grace: Option<Duration>,
    pub key_cache_ttl: Option<Duration>,
    pub metadata_cache_ttl: Option<Duration>,
    pub unknown_key_cache_ttl: Option<Duration>,
    /// A `tracing` filter directive such as `info` or `s3_gateway=debug`.
    pub log_level: String,
    pub tls: Option<TlsFiles>,
    /// Whether AWS Signature Version 2 is accepted (old tools need it).
    pub sigv2: bool,
    pub limits: Limits,
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

impl Default for Limits {
    fn default() -> Self {
        Self {
            // 34 KiB per idle HTTP/2 connection, 26 KiB per HTTP/1.1 one
            // (measured): 4096 cost ~140 MiB, far above any client pool.
            max_connections: 4096,
            // hyper's own default for HTTP/1.1 headers; a real client sends
            // its headers in one write, milliseconds.
            request_header_timeout: Duration::from_secs(30),
            // The same as HTTP/1.1's wait for the next request's headers, so
            // both protocols close an idle connection alike.
            idle_timeout: Duration::from_secs(30),
            // A vanished peer is noticed within 40 s; one ping per 20 s of
            // silence costs nothing.
            http2_keepalive_interval: Duration::from_secs(20),
            http2_keepalive_timeout: Duration::from_secs(20),
            // As long as the header deadline: a streaming client never pauses
            // that long between writes, and a loaded one gets slack.
            body_idle_timeout: Duration::from_secs(30),
            // As AWS (MaxSizeAllowed 8192). The largest header section the
            // conformance suite and SDK matrix sent was 1.1 KiB (p99 0.9 KiB).
            max_header_bytes: 8 << 10,
            // hyper's own HTTP/1.1 cap (above it hyper answers 431 without
            // an S3 body); the most any client sent was 18.
            max_header_count: 100,
            // The longest target the suite sent was 3.1 KiB (a 1024-byte key
            // percent-encoded); a session token adds ~1-2 KiB to a URL.
            max_url_length: 16 << 10,
            // The largest signed chunk the SDK matrix and the suite sent was
            // 128 KiB (Java SDK v2 over plain HTTP); eight times that.
            max_signed_chunk: 1 << 20,
            // 256 concurrent signed uploads at the largest chunk; what the
            // gateway will hold unverified in memory at once.
            chunk_buffer_budget: 256 << 20,
            // Long enough to ride out a burst, short enough that the client
            // retries (SDKs back off on SlowDown) before its own timeout.
            chunk_buffer_wait: Duration::from_secs(5),
        }
    }
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
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// One `[[keys]]` table of a credentials file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    pub name: String,
    pub access_key: String,
    pub secret_key: String,
    /// Root keys may use the admin API.
    #[serde(default)]
    pub root: bool,
}

/// An invalid configuration; its message is one line meant for stderr.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(String);

/// The `serve` flags; every one is optional so that unset flags fall back to
/// the environment, the file, then the defaults.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ServeArgs {
    /// TOML configuration file [env: S3GW_CONFIG]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on [env: S3GW_LISTEN] [default: 127.0.0.1:9878]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Directory for the embedded store [env: S3GW_DATA_DIR] [default: ./data]
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<String>,
    /// Region this gateway answers for [env: S3GW_REGION] [default: us-east-1]
    #[arg(long)]
    pub region: Option<String>,
    /// Base domain for virtual-host style requests [env: S3GW_DOMAIN]
    #[arg(long)]
    pub domain: Option<String>,
    /// Storage back end: embedded or ozone [env: S3GW_BACKEND] [default: embedded]
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,
    /// Ozone Manager gRPC address(es), for --backend ozone [env: S3GW_OM]
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    pub om: Option<String>,
    /// Connection timeout to Ozone Managers and datanodes, e.g. 5s [env: S3GW_OZONE_CONNECT_TIMEOUT]
    #[arg(long, value_name = "DURATION")]
    pub ozone_connect_timeout: Option<String>,
    /// Deadline of one Ozone command attempt, e.g. 60s [env: S3GW_OZONE_REQUEST_TIMEOUT]
    #[arg(long, value_name = "DURATION")]
    pub ozone_request_timeout: Option<String>,
    /// TOML file of `[[keys]]` to load at start [env: S3GW_CREDENTIALS]
    #[arg(long, value_name = "FILE")]
    pub credentials: Option<String>,
    /// Storage block size, e.g. 256MiB [env: S3GW_BLOCK_SIZE]
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<String>,
    /// Storage chunk size, e.g. 4MiB [env: S3GW_CHUNK_SIZE]
    #[arg(long, value_name = "SIZE")]
    pub chunk_size: Option<String>,
    /// Bytes per piece of a read stream, e.g. 256KiB [env: S3GW_READ_BUFFER]
    #[arg(long, value_name = "SIZE")]
    pub read_buffer: Option<String>,
    /// Abort multipart uploads not completed within this time, e.g. 7d [env: S3GW_MULTIPART_UPLOAD_EXPIRY]
    #[arg(long, value_name = "DURATION")]
    pub multipart_upload_expiry: Option<String>,
    /// Reclaim the blocks of a PUT or part upload left unfinished this long, e.g. 1d [env: S3GW_OPEN_KEY_EXPIRY]
    #[arg(long, value_name = "DURATION")]
    pub open_key_expiry: Option<String>,
    /// Pause between background reclamation passes, e.g. 60s [env: S3GW_RECLAIM_INTERVAL]
    #[arg(long, value_name = "DURATION")]
    pub reclaim_interval: Option<String>,
    /// How long blocks of replaced or deleted objects stay readable, e.g. 15m [env: S3GW_RECLAIM_GRACE]
    #[arg(long, value_name = "DURATION")]
    pub reclaim_grace: Option<String>,
    /// Keep completed key lookups this long; 0 only coalesces concurrent ones [env: S3GW_KEY_CACHE_TTL]
    #[arg(long, value_name = "DURATION")]
    pub key_cache_ttl: Option<String>,
    /// Staleness bound for credentials and buckets changed via other replicas; 0 disables [env: S3GW_METADATA_CACHE_TTL]
    #[arg(long, value_name = "DURATION")]
    pub metadata_cache_ttl: Option<String>,
    /// Staleness bound for access keys created via other replicas: unknown keys are refused without a lookup for this long; 0 asks every time [env: S3GW_UNKNOWN_KEY_CACHE_TTL]
    #[arg(long, value_name = "DURATION")]
    pub unknown_key_cache_ttl: Option<String>,
    /// Log filter, e.g. info or s3_gateway=debug [env: S3GW_LOG_LEVEL] [default: info]
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
    /// PEM certificate chain; serves HTTPS when given with --tls-key [env: S3GW_TLS_CERT]
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<String>,
    /// PEM private key [env: S3GW_TLS_KEY]
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<String>,
    /// Accept AWS Signature Version 2: true or false [env: S3GW_SIGV2] [default: true]
    #[arg(long, value_name = "BOOL")]
    pub sigv2: Option<String>,
    /// Connections served at once [env: S3GW_MAX_CONNECTIONS] [default: 4096]
    #[arg(long, value_name = "COUNT")]
    pub max_connections: Option<String>,
    /// Time to send request headers or finish a TLS handshake [env: S3GW_REQUEST_HEADER_TIMEOUT] [default: 30s]
    #[arg(long, value_name = "DURATION")]
    pub request_header_timeout: Option<String>,
    /// Close a connection with no request in flight after this [env: S3GW_IDLE_TIMEOUT] [default: 30s]
    #[arg(long, value_name = "DURATION")]
    pub idle_timeout: Option<String>,
    /// HTTP/2 ping after this much silence [env: S3GW_HTTP2_KEEPALIVE_INTERVAL] [default: 20s]
    #[arg(long, value_name = "DURATION")]
    pub http2_keepalive_interval: Option<String>,
    /// Close an HTTP/2 connection whose ping is not answered in this time [env: S3GW_HTTP2_KEEPALIVE_TIMEOUT] [default: 20s]
    #[arg(long, value_name = "DURATION")]
    pub http2_keepalive_timeout: Option<String>,
    /// Longest wait for the next piece of a request body [env: S3GW_BODY_IDLE_TIMEOUT] [default: 30s]
    #[arg(long, value_name = "DURATION")]
    pub body_idle_timeout: Option<String>,
    /// Largest request header section [env: S3GW_MAX_HEADER_BYTES] [default: 8KiB]
    #[arg(long, value_name = "SIZE")]
    pub max_header_bytes: Option<String>,
    /// Most request headers [env: S3GW_MAX_HEADER_COUNT] [default: 100]
    #[arg(long, value_name = "COUNT")]
    pub max_header_count: Option<String>,
    /// Longest request target (path and query) [env: S3GW_MAX_URL_LENGTH] [default: 16KiB]
    #[arg(long, value_name = "SIZE")]
    pub max_url_length: Option<String>,
    /// Largest signed aws-chunked chunk [env: S3GW_MAX_SIGNED_CHUNK] [default: 1MiB]
    #[arg(long, value_name = "SIZE")]
    pub max_signed_chunk: Option<String>,
    /// Signed chunk bytes buffered across all requests [env: S3GW_CHUNK_BUFFER_BUDGET] [default: 256MiB]
    #[arg(long, value_name = "SIZE")]
    pub chunk_buffer_budget: Option<String>,
    /// Wait for room in that budget before 503 SlowDown [env: S3GW_CHUNK_BUFFER_WAIT] [default: 5s]
    #[arg(long, value_name = "DURATION")]
    pub chunk_buffer_wait: Option<String>,
}

/// What a setting's value looks like in a TOML file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    /// Text; a relative path is relative to the file.
    Path,
    /// A size, a duration or a count: a TOML integer or text (with a unit).
    Quantity,
    /// `true` or `false`: a TOML boolean or text.
    Flag,
    /// Comma-separated text, or a TOML array of strings.
    List,
}

/// Every setting by its TOML key. Its environment variable is `S3GW_` and
/// the key in upper case; its flag is `--` and the key with `-` for `_`.
const SETTINGS: &[(&str, Kind)] = &[
    ("listen", Kind::Text),
    ("backend", Kind::Text),
    ("om", Kind::List),
    ("ozone_connect_timeout", Kind::Quantity),
    ("ozone_request_timeout", Kind::Quantity),
    ("data_dir", Kind::Path),
    ("region", Kind::Text),
    ("domain", Kind::Text),
    ("credentials", Kind::Path),
    ("block_size", Kind::Quantity),
    ("chunk_size", Kind::Quantity),
    ("read_buffer", Kind::Quantity),
    ("multipart_upload_expiry", Kind::Quantity),
    ("open_key_expiry", Kind::Quantity),
    ("reclaim_interval", Kind::Quantity),
    ("reclaim_grace", Kind::Quantity),
    ("key_cache_ttl", Kind::Quantity),
    ("metadata_cache_ttl", Kind::Quantity),
    ("unknown_key_cache_ttl", Kind::Quantity),
    ("log_level", Kind::Text),
    ("tls_cert", Kind::Path),
    ("tls_key", Kind::Path),
    ("sigv2", Kind::Flag),
    ("max_connections", Kind::Quantity),
    ("request_header_timeout", Kind::Quantity),
    ("idle_timeout", Kind::Quantity),
    ("http2_keepalive_interval", Kind::Quantity),
    ("http2_keepalive_timeout", Kind::Quantity),
    ("body_idle_timeout", Kind::Quantity),
    ("max_header_bytes", Kind::Quantity),
    ("max_header_count", Kind::Quantity),
    ("max_url_length", Kind::Quantity),
    ("max_signed_chunk", Kind::Quantity),
    ("chunk_buffer_budget", Kind::Quantity),
    ("chunk_buffer_wait", Kind::Quantity),
];

/// A raw setting and where it came from, for error messages.
#[derive(Clone, Debug)]
struct Setting {
    value: String,
    origin: String,
}

/// The settings one source provides, by TOML key; later layers override
/// earlier ones.
#[derive(Clone, Debug, Default)]
struct Layer(BTreeMap<&'static str, Setting>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialsFile {
    #[serde(default)]
    keys: Vec<KeyEntry>,
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
        let config_file = match &flags.config {
            Some(path) => Some(path.clone()),
            None => env("S3GW_CONFIG").map(PathBuf::from),
        };
        let mut layer = match &config_file {
            Some(path) => file_layer(path)?,
            None => Layer::default(),
        };
        layer.merge(env_layer(&env));
        layer.merge(flag_layer(flags));
        let root_key = root_key_from_env(&env)?;
        layer.validate(root_key)
    }

    /// The storage back end's configuration: its defaults, overridden by
    /// every tunable set here.
    pub fn storage_config(&self) -> StorageConfig {
        let defaults = StorageConfig::new(&self.data_dir);
        StorageConfig {
            block_size: self.block_size.unwrap_or(defaults.block_size),
            chunk_size: self.chunk_size.map_or(defaults.chunk_size, in_memory),
            read_buffer: self.read_buffer.map_or(defaults.read_buffer, in_memory),
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

impl Layer {
    fn merge(&mut self, over: Layer) {
        self.0.extend(over.0);
    }

    fn get(&self, key: &str) -> Option<&Setting> {
        debug_assert!(
            SETTINGS.iter().any(|(name, _)| *name == key),
            "{key} is not in SETTINGS"
        );
        self.0.get(key)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        self.get(key).map(parse_size).transpose()
    }

    /// A duration setting, refused below `at_least`.
    fn duration(&self, key: &str, at_least: Duration) -> Result<Option<Duration>, ConfigError> {
        let Some(s) = self.get(key) else {
            return Ok(None);
        };
        let duration = parse_duration(s)?;
        if duration < at_least {
            return Err(s.invalid(&format!("must be at least {}s", at_least.as_secs())));
        }
        Ok(Some(duration))
    }

    fn validate(self, root_key: Option<KeyEntry>) -> Result<Config, ConfigError> {
        let listen = match self.get("listen") {
            Some(s) => s
                .value
                .parse::<SocketAddr>()
                .map_err(|_| s.invalid("expected an IP address and port such as 127.0.0.1:9878"))?,
            None => DEFAULT_LISTEN
                .parse()
                .map_err(|_| ConfigError("the default listen address is invalid".into()))?,
        };
        let data_dir = match self.get("data_dir") {
            Some(s) if s.value.is_empty() => return Err(s.invalid("must not be empty")),
            Some(s) => PathBuf::from(&s.value),
            None => PathBuf::from(DEFAULT_DATA_DIR),
        };
        let region = match self.get("region") {
            Some(s) => {
                let valid = !s.value.is_empty()
                    && s.value
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
                if !valid {
                    return Err(s.invalid("expected a region name such as us-east-1"));
                }
                s.value.clone()
            }
            None => DEFAULT_REGION.to_string(),
        };
        let domain = match self.get("domain") {
            Some(s) => {
                let valid = !s.value.is_empty()
                    && s.value
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b':');
                if !valid {
                    return Err(s.invalid("expected a host name such as s3.example.com"));
                }
                Some(s.value.to_ascii_lowercase())
            }
            None => None,
        };
        let keys = match self.get("credentials") {
            Some(s) => load_credentials_file(Path::new(&s.value))?,
            None => Vec::new(),
        };
        let block_size = self.size("block_size")?;
        let chunk_size = self.size("chunk_size")?;
        if let (Some(block), Some(chunk)) = (block_size, chunk_size)
            && chunk > block
        {
            return Err(ConfigError(format!(
                "chunk size {chunk} is larger than block size {block}"
            )));
        }
        let read_buffer = self.size("read_buffer")?;
        // An expiry of zero would abort every upload at the next reclamation
        // pass; zero TTLs are meaningful (no caching).
        let multipart_upload_expiry =
            self.duration("multipart_upload_expiry", Duration::from_secs(1))?;
        let open_key_expiry = self.duration("open_key_expiry", Duration::from_secs(1))?;
        // A zero interval would spin; a zero grace is meaningful (reclaim at once).
        let reclaim_interval = self.duration("reclaim_interval", Duration::from_secs(1))?;
        let reclaim_grace = self.duration("reclaim_grace", Duration::ZERO)?;
        let key_cache_ttl = self.duration("key_cache_ttl", Duration::ZERO)?;
        let metadata_cache_ttl = self.duration("metadata_cache_ttl", Duration::ZERO)?;
        let unknown_key_cache_ttl = self.duration("unknown_key_cache_ttl", Duration::ZERO)?;
        let backend = self.backend()?;
        let log_level = match self.get("log_level") {
            Some(s) => {
                tracing_subscriber::EnvFilter::try_new(&s.value)
                    .map_err(|e| s.invalid(&e.to_string()))?;
                s.value.clone()
            }
            None => DEFAULT_LOG_LEVEL.to_string(),
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
        let sigv2 = match self.get("sigv2") {
            Some(s) => match s.value.as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(s.invalid("expected true or false")),
            },
            None => true,
        };
        let limits = self.limits()?;
        Ok(Config {
            listen,
            backend,
            data_dir,
            region,
            domain,
            keys,
            root_key,
            block_size,
            chunk_size,
            read_buffer,
            multipart_upload_expiry,
            open_key_expiry,
            reclaim_interval,
            reclaim_grace,
            key_cache_ttl,
            metadata_cache_ttl,
            unknown_key_cache_ttl,
            log_level,
            tls,
            sigv2,
            limits,
        })
    }

    /// The connection and request limits, each defaulting to [`Limits::default`].
    fn limits(&self) -> Result<Limits, ConfigError> {
        let defaults = Limits::default();
        // A zero timeout would close every connection or refuse every body.
        let second = Duration::from_secs(1);
        let duration = |key, default| -> Result<Duration, ConfigError> {
            Ok(self.duration(key, second)?.unwrap_or(default))
        };
        let size = |key, default| -> Result<usize, ConfigError> {
            Ok(self.size(key)?.map_or(default, in_memory))
        };
        let count = |key, default| -> Result<usize, ConfigError> {
            Ok(self
                .get(key)
                .map(parse_count)
                .transpose()?
                .unwrap_or(default))
        };
        let limits = Limits {
            max_connections: count("max_connections", defaults.max_connections)?,
            request_header_timeout: duration(
                "request_header_timeout",
                defaults.request_header_timeout,
            )?,
            idle_timeout: duration("idle_timeout", defaults.idle_timeout)?,
            http2_keepalive_interval: duration(
                "http2_keepalive_interval",
                defaults.http2_keepalive_interval,
            )?,
            http2_keepalive_timeout: duration(
                "http2_keepalive_timeout",
                defaults.http2_keepalive_timeout,
            )?,
            body_idle_timeout: duration("body_idle_timeout", defaults.body_idle_timeout)?,
            max_header_bytes: size("max_header_bytes", defaults.max_header_bytes)?,
            max_header_count: count("max_header_count", defaults.max_header_count)?,
            max_url_length: size("max_url_length", defaults.max_url_length)?,
            max_signed_chunk: size("max_signed_chunk", defaults.max_signed_chunk)?,
            chunk_buffer_budget: size("chunk_buffer_budget", defaults.chunk_buffer_budget)?,
            // Zero means "never wait": answer SlowDown at once.
            chunk_buffer_wait: self
                .duration("chunk_buffer_wait", Duration::ZERO)?
                .unwrap_or(defaults.chunk_buffer_wait),
        };
        if limits.max_signed_chunk > limits.chunk_buffer_budget {
            return Err(ConfigError(format!(
                "max signed chunk {} is larger than the chunk buffer budget {}: no signed chunk could ever be buffered",
                limits.max_signed_chunk, limits.chunk_buffer_budget
            )));
        }
        // The semaphore and the h2 settings take 32 bits.
        for (key, value) in [
            ("max_connections", limits.max_connections),
            ("max_header_bytes", limits.max_header_bytes),
            ("max_url_length", limits.max_url_length),
            ("chunk_buffer_budget", limits.chunk_buffer_budget),
        ] {
            if u32::try_from(value).is_err()
                && let Some(s) = self.get(key)
            {
                return Err(s.invalid("is too large"));
            }
        }
        Ok(limits)
    }

    /// The back end, refusing settings that only the other one reads: a
    /// setting that silently does nothing hides a mistake.
    fn backend(&self) -> Result<Backend, ConfigError> {
        const OZONE_ONLY: [&str; 3] = ["om", "ozone_connect_timeout", "ozone_request_timeout"];
        const EMBEDDED_ONLY: [&str; 5] = [
            "read_buffer",
            "multipart_upload_expiry",
            "open_key_expiry",
            "reclaim_interval",
            "reclaim_grace",
        ];
        let ozone = match self.get("backend") {
            None => false,
            Some(s) => match s.value.as_str() {
                "embedded" => false,
                "ozone" => true,
                _ => return Err(s.invalid("expected embedded or ozone")),
            },
        };
        let (not_read_here, reader) = if ozone {
            (EMBEDDED_ONLY.as_slice(), "the embedded back end")
        } else {
            (OZONE_ONLY.as_slice(), "--backend ozone")
        };
        if let Some(s) = not_read_here.iter().find_map(|key| self.get(key)) {
            return Err(s.invalid(&format!("only {reader} reads this setting")));
        }
        if !ozone {
            return Ok(Backend::Embedded);
        }
        let Some(om) = self.get("om") else {
            return Err(ConfigError(
                "backend ozone needs the Ozone Manager address: --om HOST:PORT[,HOST:PORT...] (or S3GW_OM)"
                    .into(),
            ));
        };
        let addresses: Vec<String> = om.value.split(',').map(|a| a.trim().to_owned()).collect();
        if let Some(bad) = addresses.iter().find(|a| !is_host_port(a)) {
            return Err(om.invalid(&format!(
                "{bad:?} is not HOST:PORT (e.g. om1.example.com:8981)"
            )));
        }
        // A zero timeout would fail every command.
        let at_least = Duration::from_secs(1);
        Ok(Backend::Ozone(OzoneSettings {
            om: addresses,
            connect_timeout: self.duration("ozone_connect_timeout", at_least)?,
            request_timeout: self.duration("ozone_request_timeout", at_least)?,
        }))
    }
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

impl Setting {
    fn new(value: impl Into<String>, origin: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            origin: origin.into(),
        }
    }

    fn invalid(&self, why: &str) -> ConfigError {
        ConfigError(format!("{} = {:?}: {why}", self.origin, self.value))
    }
}

fn file_layer(path: &Path) -> Result<Layer, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read config file {}: {e}", path.display())))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        ConfigError(format!(
            "config file {}: {}",
            path.display(),
            one_line(e.message())
        ))
    })?;
    // Relative paths inside the file are relative to the file, as a reader expects.
    let base = path.parent().unwrap_or(Path::new(""));
    let mut layer = Layer::default();
    for (key, value) in table {
        // Unknown keys are refused so that typos do not pass silently.
        let Some(&(name, kind)) = SETTINGS.iter().find(|(name, _)| *name == key) else {
            return Err(ConfigError(format!(
                "config file {}: unknown key {key:?}",
                path.display()
            )));
        };
        let origin = format!("{name} in {}", path.display());
        let value = match (kind, value) {
            (Kind::Text | Kind::Quantity, toml::Value::String(text)) => text,
            (Kind::Path, toml::Value::String(text)) => base.join(text).to_string_lossy().into(),
            (Kind::Quantity, toml::Value::Integer(n)) => n.to_string(),
            (Kind::Flag, toml::Value::Boolean(b)) => b.to_string(),
            (Kind::Flag, toml::Value::String(text)) => text,
            (Kind::Flag, _) => {
                return Err(ConfigError(format!("{origin}: expected true or false")));
            }
            (Kind::List, toml::Value::String(text)) => text,
            (Kind::List, toml::Value::Array(items)) => items
                .into_iter()
                .map(|item| match item {
                    toml::Value::String(text) => Ok(text),
                    _ => Err(ConfigError(format!(
                        "{origin}: expected an array of strings"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            (Kind::List, _) => {
                return Err(ConfigError(format!(
                    "{origin}: expected a string or an array of strings"
                )));
            }
            (Kind::Quantity, _) => {
                return Err(ConfigError(format!(
                    "{origin}: expected a number or a string"
                )));
            }
            (Kind::Text | Kind::Path, _) => {
                return Err(ConfigError(format!("{origin}: expected a string")));
            }
        };
        layer.0.insert(name, Setting::new(value, origin));
    }
    Ok(layer)
}

fn env_layer(env: &impl Fn(&str) -> Option<String>) -> Layer {
    let settings = SETTINGS.iter().filter_map(|&(name, _)| {
        let var = format!("S3GW_{}", name.to_ascii_uppercase());
        env(&var).map(|value| (name, Setting::new(value, var)))
    });
    Layer(settings.collect())
}

fn flag_layer(flags: &ServeArgs) -> Layer {
    let given = [
        ("listen", &flags.listen),
        ("backend", &flags.backend),
        ("om", &flags.om),
        ("ozone_connect_timeout", &flags.ozone_connect_timeout),
        ("ozone_request_timeout", &flags.ozone_request_timeout),
        ("data_dir", &flags.data_dir),
        ("region", &flags.region),
        ("domain", &flags.domain),
        ("credentials", &flags.credentials),
        ("block_size", &flags.block_size),
        ("chunk_size", &flags.chunk_size),
        ("read_buffer", &flags.read_buffer),
        ("multipart_upload_expiry", &flags.multipart_upload_expiry),
        ("open_key_expiry", &flags.open_key_expiry),
        ("reclaim_interval", &flags.reclaim_interval),
        ("reclaim_grace", &flags.reclaim_grace),
        ("key_cache_ttl", &flags.key_cache_ttl),
        ("metadata_cache_ttl", &flags.metadata_cache_ttl),
        ("unknown_key_cache_ttl", &flags.unknown_key_cache_ttl),
        ("log_level", &flags.log_level),
        ("tls_cert", &flags.tls_cert),
        ("tls_key", &flags.tls_key),
        ("sigv2", &flags.sigv2),
        ("max_connections", &flags.max_connections),
        ("request_header_timeout", &flags.request_header_timeout),
        ("idle_timeout", &flags.idle_timeout),
        ("http2_keepalive_interval", &flags.http2_keepalive_interval),
        ("http2_keepalive_timeout", &flags.http2_keepalive_timeout),
        ("body_idle_timeout", &flags.body_idle_timeout),
        ("max_header_bytes", &flags.max_header_bytes),
        ("max_header_count", &flags.max_header_count),
        ("max_url_length", &flags.max_url_length),
        ("max_signed_chunk", &flags.max_signed_chunk),
        ("chunk_buffer_budget", &flags.chunk_buffer_budget),
        ("chunk_buffer_wait", &flags.chunk_buffer_wait),
    ];
    let settings = given.into_iter().filter_map(|(name, value)| {
        let flag = format!("--{}", name.replace('_', "-"));
        value
            .as_ref()
            .map(|v| (name, Setting::new(v.clone(), flag)))
    });
    Layer(settings.collect())
}

fn root_key_from_env(
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<KeyEntry>, ConfigError> {
    match (env("S3GW_ROOT_ACCESS_KEY"), env("S3GW_ROOT_SECRET_KEY")) {
        (None, None) => Ok(None),
        (Some(access_key), Some(secret_key)) => {
            let key = KeyEntry {
                name: "root".to_string(),
                access_key,
                secret_key,
                root: true,
            };
            validate_key(&key).map_err(|why| {
                ConfigError(format!("S3GW_ROOT_ACCESS_KEY/S3GW_ROOT_SECRET_KEY: {why}"))
            })?;
            Ok(Some(key))
        }
        _ => Err(ConfigError(
            "S3GW_ROOT_ACCESS_KEY and S3GW_ROOT_SECRET_KEY must be set together".into(),
        )),
    }
}

/// Reads a credentials file: one `[[keys]]` table per key.
pub fn load_credentials_file(path: &Path) -> Result<Vec<KeyEntry>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError(format!(
            "cannot read credentials file {}: {e}",
            path.display()
        ))
    })?;
    let file: CredentialsFile = toml::from_str(&text).map_err(|e| {
        ConfigError(format!(
            "credentials file {}: {}",
            path.display(),
            one_line(e.message())
        ))
    })?;
    let mut seen = std::collections::HashSet::new();
    for key in &file.keys {
        validate_key(key).map_err(|why| {
            ConfigError(format!(
                "credentials file {}: key {:?}: {why}",
                path.display(),
                key.name
            ))
        })?;
        if !seen.insert(key.access_key.as_str()) {
            return Err(ConfigError(format!(
                "credentials file {}: access key {} appears twice",
                path.display(),
                key.access_key
            )));
        }
    }
    Ok(file.keys)
}

/// Renders one `[[keys]]` table of a credentials file, ready to paste.
pub fn render_key_entry(key: &KeyEntry) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = format!(
        "[[keys]]\nname = {}\naccess_key = {}\nsecret_key = {}\n",
        quoted(&key.name),
        quoted(&key.access_key),
        quoted(&key.secret_key)
    );
    if key.root {
        out.push_str("root = true\n");
    }
    out
}

/// Access keys as AWS issues them (`AKIA` + 16): 16 to 128 upper-case
/// letters and digits. That also keeps out `/` (the SigV4 credential scope's
/// separator) and `.` (the Ozone back end's system buckets belong to a
/// dotted owner no key may be).
pub const ACCESS_KEY_LENGTH: std::ops::RangeInclusive<usize> = 16..=128;
/// Secrets at least as long as AWS's 40-character ones less a margin: a
/// short secret can be guessed offline from one signed request.
pub const SECRET_KEY_LENGTH: std::ops::RangeInclusive<usize> = 30..=128;

/// Checks the shape of a key loaded from a file or the environment; the
/// keys the gateway generates (`S3GW` + 16, 40-character secrets) comply.
pub fn validate_key(key: &KeyEntry) -> Result<(), String> {
    if key.name.trim().is_empty() || key.name.len() > 128 {
        return Err("name must be 1 to 128 characters".into());
    }
    let access_ok = ACCESS_KEY_LENGTH.contains(&key.access_key.len())
        && key
            .access_key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if !access_ok {
        return Err(format!(
            "access_key must be {} to {} characters of A-Z and 0-9 (as AWS issues them)",
            ACCESS_KEY_LENGTH.start(),
            ACCESS_KEY_LENGTH.end()
        ));
    }
    let secret_ok = SECRET_KEY_LENGTH.contains(&key.secret_key.len())
        && key.secret_key.bytes().all(|b| b.is_ascii_graphic());
    if !secret_ok {
        return Err(format!(
            "secret_key must be {} to {} printable ASCII characters without spaces",
            SECRET_KEY_LENGTH.start(),
            SECRET_KEY_LENGTH.end()
        ));
    }
    Ok(())
}

/// Parses `4194304`, `64KiB`, `4MiB`, `1GiB` (also `K`, `M`, `G`, `KB`...; all binary).
fn parse_size(s: &Setting) -> Result<u64, ConfigError> {
    let text = s.value.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(s.invalid("expected a size such as 4194304, 64KiB or 4MiB")),
    };
    let size = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| s.invalid("expected a size such as 4194304, 64KiB or 4MiB"))?;
    if size == 0 {
        return Err(s.invalid("must be greater than zero"));
    }
    Ok(size)
}

/// A positive whole number (`4096`), no unit.
fn parse_count(s: &Setting) -> Result<usize, ConfigError> {
    match s.value.trim().parse::<usize>() {
        Ok(0) => Err(s.invalid("must be greater than zero")),
        Ok(n) => Ok(n),
        Err(_) => Err(s.invalid("expected a whole number such as 4096")),
    }
}

/// Parses `90s`, `15m`, `2h`, `7d` or a plain number of seconds (`3600`).
fn parse_duration(s: &Setting) -> Result<Duration, ConfigError> {
    let expected = "expected a duration such as 90s, 15m, 2h, 7d or a number of seconds";
    let text = s.value.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    // Lower case only: `15M` could as well mean months.
    let seconds_per_unit: u64 = match unit.trim() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        _ => return Err(s.invalid(expected)),
    };
    let seconds = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(seconds_per_unit))
        .ok_or_else(|| s.invalid(expected))?;
    let duration = Duration::from_secs(seconds);
    if duration > MAX_DURATION {
        return Err(s.invalid(&format!(
            "must be at most {}d",
            MAX_DURATION.as_secs() / (24 * 60 * 60)
        )));
    }
    Ok(duration)
}

/// TOML parse messages can span lines; stderr gets one.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
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
    fn defaults_apply_when_nothing_is_set() {
        let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
        assert_eq!(config.listen, "127.0.0.1:9878".parse().expect("addr"));
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
        let flags = ServeArgs {
            config: Some(file.path().to_path_buf()),
            listen: Some("127.0.0.1:3000".into()),
            ..ServeArgs::default()
        };
        let env = [
            ("S3GW_LISTEN", "127.0.0.1:2000"),
            ("S3GW_REGION", "eu-central-1"),
            ("S3GW_CHUNK_SIZE", "64KiB"),
        ];
        let config = Config::load_from(&flags, env_of(&env)).expect("valid");
        assert_eq!(
            config.listen,
            "127.0.0.1:3000".parse().expect("addr"),
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
        let flags = ServeArgs {
            config: Some(path),
            ..ServeArgs::default()
        };
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert_eq!(config.data_dir, dir.path().join("store"));
    }

    #[test]
    fn a_bad_listen_address_names_its_source() {
        let message = error_of(&ServeArgs::default(), &[("S3GW_LISTEN", "nowhere")]);
        assert!(message.contains("S3GW_LISTEN"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
        let flags = ServeArgs {
            listen: Some("1.2.3.4".into()),
            ..ServeArgs::default()
        };
        assert!(error_of(&flags, &[]).contains("--listen"));
    }

    #[test]
    fn an_unknown_key_in_the_file_is_refused() {
        let file = file_with("listen = \"127.0.0.1:1\"\nlisten_addr = \"x\"\n");
        let flags = ServeArgs {
            config: Some(file.path().to_path_buf()),
            ..ServeArgs::default()
        };
        let message = error_of(&flags, &[]);
        assert!(message.contains("listen_addr"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }

    #[test]
    fn an_unreadable_config_file_is_refused() {
        let flags = ServeArgs {
            config: Some(PathBuf::from("/nonexistent/s3gw.toml")),
            ..ServeArgs::default()
        };
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
        let flags = ServeArgs {
            credentials: Some(file.path().to_string_lossy().to_string()),
            ..ServeArgs::default()
        };
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert_eq!(config.keys.len(), 2);
        assert_eq!(config.keys[0].name, "alice");
        assert!(!config.keys[0].root);
        assert!(config.keys[1].root);
    }

    #[test]
    fn rendered_keys_read_back_from_a_credentials_file() {
        let keys = [
            KeyEntry {
                name: "quote \" and \\ backslash".into(),
                access_key: "S3GWABCDEFGHIJKLMNOP".into(),
                secret_key: "secret\"and\\with-quotes-and-backslashes".into(),
                root: false,
            },
            KeyEntry {
                name: "root".into(),
                access_key: "S3GWROOT00000001".into(),
                secret_key: "rootsecret-rootsecret-rootsecret".into(),
                root: true,
            },
        ];
        let text: Vec<String> = keys.iter().map(render_key_entry).collect();
        let file = file_with(&text.join("\n"));
        assert_eq!(load_credentials_file(file.path()).expect("valid"), keys);
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
        ];
        for (text, expected) in cases {
            let file = file_with(&text);
            let flags = ServeArgs {
                credentials: Some(file.path().to_string_lossy().to_string()),
                ..ServeArgs::default()
            };
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
    fn generated_keys_pass_the_checks_loaded_keys_must() {
        for _ in 0..100 {
            let key = crate::admin::keygen::generate("any", false);
            let entry = KeyEntry {
                name: key.name,
                access_key: key.access_key,
                secret_key: key.secret_key,
                root: false,
            };
            validate_key(&entry).expect("generated keys comply");
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
        assert!(error_of(&ServeArgs::default(), &env).contains("larger than block size"));
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
        let flags = ServeArgs {
            multipart_upload_expiry: Some("0s".into()),
            ..ServeArgs::default()
        };
        let message = error_of(&flags, &[]);
        assert!(message.contains("--multipart-upload-expiry"), "{message}");
        assert!(message.contains("at least 1s"), "{message}");
    }

    #[test]
    fn a_zero_reclaim_interval_is_refused_and_a_zero_grace_is_not() {
        let flags = ServeArgs {
            reclaim_interval: Some("0s".into()),
            ..ServeArgs::default()
        };
        let message = error_of(&flags, &[]);
        assert!(message.contains("--reclaim-interval"), "{message}");
        assert!(message.contains("at least 1s"), "{message}");
        let flags = ServeArgs {
            reclaim_grace: Some("0s".into()),
            ..ServeArgs::default()
        };
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        assert_eq!(config.storage_config().reclaim_grace, Duration::ZERO);
    }

    #[test]
    fn storage_settings_follow_file_then_env_then_flags() {
        let file = file_with(
            "read_buffer = \"64KiB\"\nmultipart_upload_expiry = \"2d\"\nkey_cache_ttl = 5\nmetadata_cache_ttl = \"10m\"\n",
        );
        let flags = ServeArgs {
            config: Some(file.path().to_path_buf()),
            metadata_cache_ttl: Some("0".into()),
            ..ServeArgs::default()
        };
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
        let flags = ServeArgs {
            config: None,
            listen: Some("x".into()),
            backend: Some("x".into()),
            om: Some("x".into()),
            ozone_connect_timeout: Some("x".into()),
            ozone_request_timeout: Some("x".into()),
            data_dir: Some("x".into()),
            region: Some("x".into()),
            domain: Some("x".into()),
            credentials: Some("x".into()),
            block_size: Some("x".into()),
            chunk_size: Some("x".into()),
            read_buffer: Some("x".into()),
            multipart_upload_expiry: Some("x".into()),
            open_key_expiry: Some("x".into()),
            reclaim_interval: Some("x".into()),
            reclaim_grace: Some("x".into()),
            key_cache_ttl: Some("x".into()),
            metadata_cache_ttl: Some("x".into()),
            unknown_key_cache_ttl: Some("x".into()),
            log_level: Some("x".into()),
            tls_cert: Some("x".into()),
            tls_key: Some("x".into()),
            sigv2: Some("x".into()),
            max_connections: Some("x".into()),
            request_header_timeout: Some("x".into()),
            idle_timeout: Some("x".into()),
            http2_keepalive_interval: Some("x".into()),
            http2_keepalive_timeout: Some("x".into()),
            body_idle_timeout: Some("x".into()),
            max_header_bytes: Some("x".into()),
            max_header_count: Some("x".into()),
            max_url_length: Some("x".into()),
            max_signed_chunk: Some("x".into()),
            chunk_buffer_budget: Some("x".into()),
            chunk_buffer_wait: Some("x".into()),
        };
        let layer = flag_layer(&flags);
        let mut flagged: Vec<&str> = layer.0.keys().copied().collect();
        let mut named: Vec<&str> = SETTINGS.iter().map(|(name, _)| *name).collect();
        flagged.sort_unstable();
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
        let flags = ServeArgs {
            backend: Some("ozone".into()),
            om: Some("om1:8981, om2.example.com:8981,[::1]:8981".into()),
            ..ServeArgs::default()
        };
        let config = Config::load_from(&flags, env_of(&[])).expect("valid");
        let ozone = ozone_settings_of(&config);
        assert_eq!(ozone.om, ["om1:8981", "om2.example.com:8981", "[::1]:8981"]);
        assert_eq!(ozone.connect_timeout, None);

        let file = file_with(
            "backend = \"ozone\"\nom = [\"om1:8981\", \"om2:8981\"]\nozone_request_timeout = \"90s\"\n",
        );
        let flags = ServeArgs {
            config: Some(file.path().to_path_buf()),
            ..ServeArgs::default()
        };
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
    fn the_ozone_back_end_needs_an_om() {
        let env = [("S3GW_BACKEND", "ozone")];
        let message = error_of(&ServeArgs::default(), &env);
        assert!(message.contains("--om HOST:PORT"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }

    #[test]
    fn an_om_without_the_ozone_back_end_is_refused() {
        let flags = ServeArgs {
            om: Some("127.0.0.1:8981".into()),
            ..ServeArgs::default()
        };
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
        let flags = ServeArgs {
            config: Some(file.path().to_path_buf()),
            ..ServeArgs::default()
        };
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
            let flags = ServeArgs {
                config: Some(file.path().to_path_buf()),
                ..ServeArgs::default()
            };
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
        let flags = ServeArgs {
            config: Some(file.path().to_path_buf()),
            max_header_bytes: Some("4KiB".into()),
            ..ServeArgs::default()
        };
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
            ("S3GW_MAX_HEADER_BYTES", "8GiB", "too large"),
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
