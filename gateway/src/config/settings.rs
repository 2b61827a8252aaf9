//! Every setting, declared once: its TOML key (from which its flag and its
//! environment variable follow), what its value looks like, its default,
//! which back end reads it and what it means. The flags, the file and
//! environment readers, the bounds checked at start and the configuration
//! table of README.md and docs/configuration.md (`s3-gateway settings`) all
//! come from [`SETTINGS`].

use std::time::Duration;

use crate::word::{Chars, Word};

/// One setting.
#[derive(Debug)]
pub struct Setting {
    /// The TOML key; the flag is `--` and the key with `-` for `_`, the
    /// environment variable `S3GW_` and the key in upper case.
    pub key: &'static str,
    pub kind: Kind,
    pub default: Default,
    pub read_by: ReadBy,
    /// The `--help` line.
    pub help: &'static str,
    /// The configuration table's "Meaning" cell (Markdown).
    pub doc: &'static str,
}

/// What a setting's value looks like, with the bounds checked at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text, named in `--help` by its placeholder (`ADDR`, `FILTER`),
    /// checked by its own code at start.
    Text(&'static str),
    /// Text that `word` accepts; `expected` says what is, when it does not.
    Word {
        name: &'static str,
        word: Word,
        expected: &'static str,
    },
    /// One of `values`.
    Choice {
        name: &'static str,
        values: &'static [&'static str],
    },
    /// A file or directory; in a TOML file relative to the file.
    Path(&'static str),
    /// Comma-separated text, or a TOML array of strings.
    List(&'static str),
    /// `4194304`, `64KiB`, `4MiB` ([`SIZE_UNITS`]): greater than zero, at
    /// most `max`.
    Size { max: u64 },
    /// A size as above, or `0` for off.
    SizeOrOff { max: u64 },
    /// `90s`, `15m`, `2h`, `7d` ([`DURATION_UNITS`]), or a number of
    /// seconds: at least `min`, at most [`MAX_DURATION`].
    Duration { min: Duration },
    /// A whole number greater than zero, at most `max`.
    Count { max: u64 },
    /// `true` or `false`.
    Flag,
}

/// What an unset setting means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Default {
    /// This value, parsed like a given one.
    Value(&'static str),
    /// The storage back end's own default (shown as given here; a test
    /// holds them to storage-client's): on the embedded store, on Ozone.
    Storage {
        embedded: Option<&'static str>,
        ozone: Option<&'static str>,
    },
    /// Nothing: this text says what that means.
    Unset(&'static str),
}

/// Which back end reads a setting; the other refuses it, since a setting
/// that silently does nothing hides a mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBy {
    Both,
    Embedded,
    Ozone,
}

const DIGITS_LOWER_DASH: Chars = Chars(&[(b'-', b'-'), (b'0', b'9'), (b'a', b'z')]);
/// Region names: lower-case letters, digits and `-`.
const REGION: Word = Word {
    min: 1,
    max: None,
    first: DIGITS_LOWER_DASH,
    chars: DIGITS_LOWER_DASH,
};
const HOST_CHARS: Chars = Chars(&[
    (b'-', b'.'),
    (b'0', b'9'),
    (b':', b':'),
    (b'A', b'Z'),
    (b'a', b'z'),
]);
/// Host names (and `HOST:PORT`), without scheme or path.
const HOST: Word = Word {
    min: 1,
    max: None,
    first: HOST_CHARS,
    chars: HOST_CHARS,
};

/// Size units, any case; all binary.
pub const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("b", 1),
    ("k", 1 << 10),
    ("kb", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mb", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gb", 1 << 30),
    ("gib", 1 << 30),
];

/// Duration units in seconds, lower case only: `15M` could as well mean months.
pub const DURATION_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("s", 1),
    ("m", 60),
    ("h", 60 * 60),
    ("d", 24 * 60 * 60),
];

/// Longer durations are refused: nobody means them, and the caches panic
/// on a time-to-live beyond a thousand years.
pub const MAX_DURATION: Duration = Duration::from_secs(3650 * 24 * 60 * 60);

/// A whole number greater than zero, as the patterns of sizes, durations
/// and counts write it.
const POSITIVE: &str = "0*[1-9][0-9]*";

/// Bounds: the semaphore and the HTTP/2 settings take 32 bits.
const U32: u64 = u32::MAX as u64;
const ANY: u64 = u64::MAX;
const SECOND: Duration = Duration::from_secs(1);
const ZERO: Duration = Duration::ZERO;

const fn storage(value: &'static str) -> Default {
    Default::Storage {
        embedded: Some(value),
        ozone: Some(value),
    }
}

const fn embedded(value: &'static str) -> Default {
    Default::Storage {
        embedded: Some(value),
        ozone: None,
    }
}

const fn ozone(value: &'static str) -> Default {
    Default::Storage {
        embedded: None,
        ozone: Some(value),
    }
}

/// The configuration file's own flag and variable (it has no TOML key).
pub const CONFIG_FLAG: &str = "config";
pub const CONFIG_ENV: &str = "S3GW_CONFIG";

pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "listen",
        kind: Kind::Text("ADDR"),
        default: Default::Value("127.0.0.1:9878"),
        read_by: ReadBy::Both,
        help: "Address to listen on: IP:PORT, or HOST:PORT for every address HOST resolves to",
        doc: "IP address and port to serve on; a host name (`localhost:9878`) serves on every address it resolves to, logged at start",
    },
    Setting {
        key: "backend",
        kind: Kind::Choice {
            name: "NAME",
            values: &["embedded", "ozone"],
        },
        default: Default::Value("embedded"),
        read_by: ReadBy::Both,
        help: "Storage back end: embedded or ozone",
        doc: "`embedded` (local disk) or `ozone` (an Apache Ozone cluster, below)",
    },
    Setting {
        key: "om",
        kind: Kind::List("HOST:PORT[,HOST:PORT...]"),
        default: Default::Unset("none; required with `ozone`"),
        read_by: ReadBy::Ozone,
        help: "Ozone Manager gRPC address(es)",
        doc: "Ozone Managers' gRPC addresses (port 8981 by default); TOML: a string or an array",
    },
    Setting {
        key: "ozone_connect_timeout",
        kind: Kind::Duration { min: SECOND },
        default: ozone("5s"),
        read_by: ReadBy::Ozone,
        help: "Connection timeout to Ozone Managers and datanodes",
        doc: "Opening a connection to an OM or datanode",
    },
    Setting {
        key: "ozone_request_timeout",
        kind: Kind::Duration { min: SECOND },
        default: ozone("60s"),
        read_by: ReadBy::Ozone,
        help: "Deadline of one Ozone command attempt",
        doc: "One attempt of one OM or datanode command",
    },
    Setting {
        key: "ozone_system_secret_file",
        kind: Kind::Path("FILE"),
        default: Default::Unset("none; required on a cluster with security on"),
        read_by: ReadBy::Ozone,
        help: "File with the S3 secret of the gateway's identity .s3gw in a secure Ozone cluster",
        doc: "The S3 secret of the gateway's own identity `.s3gw` in the OM's store (`ozone s3 getsecret -u .s3gw`, or the bare secret), for a cluster with security on; refused unless readable by its owner only (see docs/security.md)",
    },
    Setting {
        key: "ozone_user_secrets",
        kind: Kind::Flag,
        default: ozone("true"),
        read_by: ReadBy::Ozone,
        help: "Accept the S3 keys of Ozone's own users (ozone s3 getsecret), vouched by the OM: true or false",
        doc: "On a cluster with security on: an access key the gateway holds no credential for is checked by the OM against its own S3 secret store (`ozone s3 getsecret`), and the request then acts in the OM as that user, as Ozone's own S3 gateway does; `ozone s3 revokesecret` stops the key at its next request. Each aws-chunked chunk signature is vouched for too (one OM read per chunk); a tenant's access id (`tenant$user`) names the buckets of its tenant's volume, as Ozone's S3 gateway serves them. Off, only the gateway's own keys sign requests. No effect with security off, where the OM checks no signature and unknown keys stay refused (see docs/security.md)",
    },
    Setting {
        key: "ozone_records_key_file",
        kind: Kind::Path("FILE"),
        default: Default::Unset("none; required with `ozone`"),
        read_by: ReadBy::Ozone,
        help: "File with the key that seals the gateway's records in Ozone (same on every replica)",
        doc: "The key that seals the gateway's own records in Ozone (credentials, bucket documents, checksum records): one line of at least 32 characters, e.g. `(umask 077; openssl rand -base64 32 > FILE)`; the same file on every replica, refused if open to other users (see docs/security.md)",
    },
    Setting {
        key: "ozone_tls_ca_file",
        kind: Kind::Path("FILE"),
        default: Default::Unset("none: plaintext gRPC"),
        read_by: ReadBy::Ozone,
        help: "PEM file of the Ozone SCM's CA certificate, for a cluster with hdds.grpc.tls.enabled",
        doc: "For a cluster with `hdds.grpc.tls.enabled=true`: the SCM's root CA certificate (PEM; `ozone admin cert list -r` and `ozone admin cert info`, or `ca.crt` from an SCM's metadata dir). With it every OM and datanode connection (OM gRPC, datanode gRPC, Ratis) is TLS and verified against it; no client certificate is needed (Ozone asks for none)",
    },
    Setting {
        key: "ozone_tls_server_name",
        kind: Kind::Text("NAME"),
        default: Default::Unset("the host of each address"),
        read_by: ReadBy::Ozone,
        help: "Name every Ozone server certificate is checked against, instead of the host dialled",
        doc: "With `ozone_tls_ca_file`: the name every OM and datanode certificate is verified against, when the certificates do not name the hosts the gateway dials (e.g. all issued for one service name)",
    },
    Setting {
        key: "data_dir",
        kind: Kind::Path("DIR"),
        default: Default::Value("./data"),
        read_by: ReadBy::Both,
        help: "Directory of the embedded store and of a generated root key",
        doc: "Embedded store's directory; on `ozone` only `root-credentials.toml`",
    },
    Setting {
        key: "region",
        kind: Kind::Word {
            name: "NAME",
            word: REGION,
            expected: "a region name such as us-east-1",
        },
        default: Default::Value("us-east-1"),
        read_by: ReadBy::Both,
        help: "Region this gateway answers for",
        doc: "Region in SigV4 scopes and GetBucketLocation (lower-case letters, digits, `-`)",
    },
    Setting {
        key: "domain",
        kind: Kind::Word {
            name: "HOST",
            word: HOST,
            expected: "a host name such as s3.example.com",
        },
        default: Default::Unset("none (path style only)"),
        read_by: ReadBy::Both,
        help: "Base domain for virtual-host style requests",
        doc: "Base domain for virtual-host style (`bucket.HOST`)",
    },
    Setting {
        key: "trusted_proxies",
        kind: Kind::List("ADDR[/PREFIX][,...]"),
        default: Default::Unset("none: the connection's peer is the client"),
        read_by: ReadBy::Both,
        help: "Proxies (load balancers) whose X-Forwarded-For names the client",
        doc: "Address blocks of the proxies in front (e.g. `10.0.0.0/8`): from them, the client is the address they forward in `X-Forwarded-For` (read from the right, past every trusted hop); from anyone else the header is ignored. Used by the access log's `client`; TOML: a string or an array",
    },
    Setting {
        key: "proxy_protocol",
        kind: Kind::Flag,
        default: Default::Value("false"),
        read_by: ReadBy::Both,
        help: "Read a PROXY protocol header (v1 or v2) first on connections from --trusted-proxies",
        doc: "`true`: every connection from a proxy in `trusted_proxies` starts with a PROXY protocol header (HAProxy's `send-proxy` or `send-proxy-v2`, a TCP-mode balancer), whose client address becomes the connection's; one without it is closed. Connections from anyone else are served as they come. Needs `trusted_proxies`",
    },
    Setting {
        key: "credentials",
        kind: Kind::Path("FILE"),
        default: Default::Unset("none"),
        read_by: ReadBy::Both,
        help: "TOML file of [[keys]] to load at start",
        doc: "Keys to load at start (below)",
    },
    Setting {
        key: "block_size",
        kind: Kind::Size { max: ANY },
        default: storage("256MiB"),
        read_by: ReadBy::Both,
        help: "Storage block size, e.g. 256MiB",
        doc: "Storage block size (`268435456`, `256MiB`)",
    },
    Setting {
        key: "chunk_size",
        kind: Kind::Size { max: ANY },
        default: Default::Storage {
            embedded: Some("256KiB"),
            ozone: Some("1MiB"),
        },
        read_by: ReadBy::Both,
        // 256 KiB to 1 MiB measured fastest on the embedded store (BENCHMARKS.md).
        help: "Storage chunk size, at most the block size, e.g. 1MiB",
        doc: "Storage chunk size, at most the block size (`1MiB`)",
    },
    Setting {
        key: "read_buffer",
        kind: Kind::Size { max: ANY },
        default: embedded("256KiB"),
        read_by: ReadBy::Embedded,
        help: "Bytes per piece of a read stream, in whole 16KiB checksum windows",
        doc: "Bytes per piece of a read stream, rounded to whole 16 KiB checksum windows (at least one); a rounded value is logged with the value in effect",
    },
    Setting {
        key: "small_block_max",
        kind: Kind::SizeOrOff { max: 1 << 20 },
        // Measured (BENCHMARKS.md, "Small PUTs share their fsyncs"): see the sweep there.
        default: embedded("64KiB"),
        read_by: ReadBy::Embedded,
        help: "Objects up to this size go to the DN's group-committed small-block store; 0 turns it off",
        doc: "Blocks written in one piece of up to this size (objects smaller than `chunk_size`) are kept in the DN's small-block store (`dn.redb`), whose group commit shares one fsync among concurrent PUTs, instead of a file pair each; `0` keeps every block in files. At most `1MiB`",
    },
    Setting {
        key: "metadata_db_cache",
        kind: Kind::Size { max: ANY },
        // Measured (BENCHMARKS.md, "redb caches"): see the sweep there.
        default: embedded("16MiB"),
        read_by: ReadBy::Embedded,
        help: "Memory for om.redb's page cache; reads beyond it come from the OS page cache",
        doc: "Bytes of the metadata store's pages (`om.redb`) kept in the gateway's memory; pages beyond it are read from the file (the OS page cache). The gateway's memory grows with its stores up to this and `small_block_db_cache`",
    },
    Setting {
        key: "small_block_db_cache",
        kind: Kind::Size { max: ANY },
        // Measured (BENCHMARKS.md, "redb caches"): see the sweep there.
        default: embedded("16MiB"),
        read_by: ReadBy::Embedded,
        help: "Memory for dn.redb's page cache (the small-block store)",
        doc: "Bytes of the small-block store's pages (`dn.redb`) kept in the gateway's memory; pages beyond it are read from the file (the OS page cache)",
    },
    Setting {
        key: "multipart_upload_expiry",
        // Zero would abort every upload at the next reclamation pass.
        kind: Kind::Duration { min: SECOND },
        default: embedded("7d"),
        read_by: ReadBy::Embedded,
        help: "Abort multipart uploads not completed within this time",
        doc: "Multipart uploads neither completed nor aborted this long after they start are aborted and their parts reclaimed (Ozone expires them itself)",
    },
    Setting {
        key: "open_key_expiry",
        kind: Kind::Duration { min: SECOND },
        default: embedded("1d"),
        read_by: ReadBy::Embedded,
        help: "Reclaim the blocks of a PUT or part upload left unfinished this long",
        doc: "Blocks of a PUT or part upload left unfinished (client gone, gateway killed) this long are reclaimed",
    },
    Setting {
        key: "reclaim_interval",
        // Zero would spin.
        kind: Kind::Duration { min: SECOND },
        default: embedded("60s"),
        read_by: ReadBy::Embedded,
        help: "Pause between background reclamation passes",
        doc: "Pause between background passes that delete unreferenced blocks",
    },
    Setting {
        key: "reclaim_grace",
        // Zero is meaningful: reclaim at the next pass.
        kind: Kind::Duration { min: ZERO },
        default: embedded("15m"),
        read_by: ReadBy::Embedded,
        help: "How long blocks of replaced or deleted objects stay readable",
        doc: "How long blocks of a replaced or deleted object stay readable for GETs already streaming it",
    },
    Setting {
        key: "key_cache_ttl",
        kind: Kind::Duration { min: ZERO },
        default: storage("0"),
        read_by: ReadBy::Both,
        help: "Keep completed key lookups this long; 0 only coalesces concurrent ones",
        doc: "How long a key lookup is reused; `0` only coalesces concurrent lookups, so reads see the latest write. Set it to accept that much staleness across replicas for fewer OM calls",
    },
    Setting {
        key: "metadata_cache_ttl",
        kind: Kind::Duration { min: ZERO },
        default: storage("60s"),
        read_by: ReadBy::Both,
        help: "Staleness bound for credentials and buckets changed via other replicas; 0 disables",
        doc: "Staleness bound for access keys and buckets changed through another replica (own writes apply at once): a key deleted through one replica is refused by the others within it; `0` disables these caches",
    },
    Setting {
        key: "unknown_key_cache_ttl",
        kind: Kind::Duration { min: ZERO },
        default: storage("1s"),
        read_by: ReadBy::Both,
        help: "Least time between listings of the access keys that refuse unknown keys; 0 asks every time (as does a set of over 100,000 keys)",
        doc: "Unknown access keys are refused by a listing of the existing keys (names only) instead of a lookup each; a key is refused only by a listing begun after its request arrived, so a key made through any replica works at once. This is the least time between two listings: what a flood of unknown keys costs the back end (one listing per interval) and the most a request with a new or unknown key waits. Past 100,000 keys (the cache capacity) the list is not kept: every key is asked for, as with `0`, and no request waits for a listing. `0` asks the back end about every unknown key",
    },
    Setting {
        key: "log_level",
        kind: Kind::Text("FILTER"),
        default: Default::Value("info"),
        read_by: ReadBy::Both,
        help: "Log filter: off, error, warn, info, debug, trace, or directives such as s3_gateway=debug,info; other crates log at warn unless named",
        doc: "`tracing` filter, e.g. `debug` or `s3_gateway=debug`; a bare word must be a level (`off`, `error`, `warn`, `info`, `debug`, `trace`), so `warning` stops the start. A bare level applies to the gateway's own crates, dependencies (h2, hyper, rustls) stay at `warn` unless the filter names them",
    },
    Setting {
        key: "log_format",
        kind: Kind::Choice {
            name: "FORMAT",
            values: &["text", "json"],
        },
        default: Default::Value("text"),
        read_by: ReadBy::Both,
        help: "Log line format: text or json",
        doc: "`text` (human-readable lines) or `json` (one JSON object per line, for log collectors)",
    },
    Setting {
        key: "access_log",
        kind: Kind::Flag,
        default: Default::Value("true"),
        read_by: ReadBy::Both,
        help: "Log one line per request: true or false",
        doc: "One `info` line per request (target `s3_gateway::access`: request id, operation, bucket, status, bytes in/out, duration); `false` turns it off",
    },
    Setting {
        key: "drain_delay",
        kind: Kind::Duration { min: ZERO },
        // Off by default: behind a balancer that retries refused connections
        // (HAProxy in docs/operations.md) or with the Helm chart's preStop
        // sleep an immediate stop lost no request (measured).
        default: Default::Value("0s"),
        read_by: ReadBy::Both,
        help: "On SIGTERM, keep accepting this long with /ready failing, then stop",
        doc: "On SIGTERM `/ready` fails at once; the gateway keeps accepting for this long (so a load balancer notices), then stops accepting and finishes in-flight requests",
    },
    Setting {
        key: "lifecycle_interval",
        // Zero would spin. Rules count in days: an hourly pass applies them
        // within an hour of due, for one listing per rule and bucket an hour.
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("1h"),
        read_by: ReadBy::Both,
        help: "Pause between passes of the lifecycle worker",
        doc: "Pause between passes of the lifecycle worker, which applies every bucket's lifecycle rules (docs/operations.md)",
    },
    Setting {
        key: "lifecycle_day",
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("1d"),
        read_by: ReadBy::Both,
        help: "For tests only: the length of a lifecycle day",
        doc: "**For tests only**: the length of the day in which lifecycle rules count `Days`, `NoncurrentDays` and `DaysAfterInitiation` (rounded up to whole days since the epoch, as S3 rounds to midnight UTC); anything but `1d` expires objects early",
    },
    Setting {
        key: "tls_cert",
        kind: Kind::Path("FILE"),
        default: Default::Unset("none (plain HTTP)"),
        read_by: ReadBy::Both,
        help: "PEM certificate chain; serves HTTPS when given with --tls-key",
        doc: "PEM certificate chain; with `--tls-key`, serve HTTPS (h2 and HTTP/1.1)",
    },
    Setting {
        key: "tls_key",
        kind: Kind::Path("FILE"),
        default: Default::Unset("none"),
        read_by: ReadBy::Both,
        help: "PEM private key",
        doc: "PEM private key",
    },
    Setting {
        key: "sigv2",
        kind: Kind::Flag,
        default: Default::Value("true"),
        read_by: ReadBy::Both,
        help: "Accept AWS Signature Version 2: true or false",
        doc: "Accept AWS Signature Version 2 (old tools); `false` refuses it with `400 InvalidRequest`, as AWS's newer regions do",
    },
    Setting {
        key: "sse_c_over_http",
        kind: Kind::Flag,
        default: Default::Value("false"),
        read_by: ReadBy::Both,
        help: "Accept SSE-C customer keys over plain HTTP: true or false",
        doc: "Accept SSE-C requests (a customer key in the headers) over plain HTTP. Off, a gateway serving HTTP refuses them with `400 InvalidRequest`, as AWS refuses them without TLS: the key would cross the network in the clear. Turn on only where TLS ends in front of the gateway (a load balancer) or in tests",
    },
    Setting {
        key: "console",
        kind: Kind::Flag,
        default: Default::Value("false"),
        read_by: ReadBy::Both,
        help: "Serve the web console under /_s3gw/console/: true or false",
        doc: "Serve the web console (docs/console.md) under `/_s3gw/console/`, where the admin API answers: sign in with an access key and secret, browse, upload, download, share and set buckets up, each action an S3 request signed as that key (the console adds no rights). Off, those paths answer as any other admin path",
    },
    Setting {
        key: "console_session_idle",
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("30m"),
        read_by: ReadBy::Both,
        help: "A console session unused this long ends",
        doc: "A console session (docs/console.md) not used for this long ends; the next request signs in again",
    },
    Setting {
        key: "console_session_max",
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("12h"),
        read_by: ReadBy::Both,
        help: "A console session ends this long after its sign-in, used or not",
        doc: "A console session (docs/console.md) ends this long after its sign-in, however busy",
    },
    Setting {
        key: "sse_master_key_file",
        kind: Kind::Path("FILE"),
        default: Default::Unset("embedded: DATA_DIR/sse-master-keys, generated; ozone: none"),
        read_by: ReadBy::Both,
        help: "File of SSE-S3 master keys, `<key-id> <base64 32 bytes>` a line, the last active",
        doc: "SSE-S3's master keys, which seal every SSE-S3 object's key: one `<key-id> <base64 of 32 bytes>` a line (e.g. `echo \"k1 $(openssl rand -base64 32)\"`), the last line sealing new objects, every line opening what it sealed (rotate by appending a line and restarting; never remove a line objects still use). Refused if open to other users. Unset on the embedded back end, `DATA_DIR/sse-master-keys` is generated on first start; unset on `ozone`, SSE-S3 requests are refused with `501 NotImplemented` (see docs/security.md)",
    },
    Setting {
        key: "sse_kms_url",
        kind: Kind::Text("URL"),
        default: Default::Unset("none: SSE-KMS refused"),
        read_by: ReadBy::Both,
        help: "URL of the Hadoop KMS that SSE-KMS (`aws:kms`) data keys come from, e.g. http://kms:9600/kms",
        doc: "The Apache Hadoop KMS (the one Ozone's transparent encryption uses) that makes and opens SSE-KMS data keys, e.g. `http://kms:9600/kms`: `aws:kms` with `x-amz-server-side-encryption-aws-kms-key-id: NAME` seals the object under a fresh data key of KMS key NAME, and only the KMS can open it again. The gateway authenticates as `sse_kms_user` (Hadoop's simple authentication); grant that user GENERATE_EEK and DECRYPT_EEK on the keys, nothing else (docs/security.md). Unset, `aws:kms` is refused with `501 NotImplemented` naming this setting",
    },
    Setting {
        key: "sse_kms_user",
        kind: Kind::Text("NAME"),
        default: Default::Value("s3gw"),
        read_by: ReadBy::Both,
        help: "User the gateway is to the KMS of `sse_kms_url`",
        doc: "The user name the gateway sends the KMS of `sse_kms_url` (`user.name`, Hadoop's simple authentication), whom the KMS's ACLs name",
    },
    Setting {
        key: "sse_kms_default_key",
        kind: Kind::Text("NAME"),
        default: Default::Unset("none: aws:kms needs a key id"),
        read_by: ReadBy::Both,
        help: "KMS key for `aws:kms` without a key id (AWS's aws/s3 key)",
        doc: "The KMS key an `aws:kms` write (or bucket default) that names no key id is sealed under, the part AWS's `aws/s3` key plays; unset, such a write is refused `400 InvalidArgument`",
    },
    Setting {
        key: "max_connections",
        kind: Kind::Count { max: U32 },
        // 34 KiB per idle HTTP/2 connection, 26 KiB per HTTP/1.1 one
        // (measured): 4096 cost ~140 MiB, far above any client pool.
        default: Default::Value("4096"),
        read_by: ReadBy::Both,
        help: "Connections served at once",
        doc: "Connections served at once; beyond them the longest-idle connection makes way, else a small overflow lane answers `/health` and `503 SlowDown` (below)",
    },
    Setting {
        key: "request_header_timeout",
        // A zero timeout would close every connection or refuse every body.
        kind: Kind::Duration { min: SECOND },
        // hyper's own default for HTTP/1.1 headers; a real client sends
        // its headers in one write, milliseconds.
        default: Default::Value("30s"),
        read_by: ReadBy::Both,
        help: "Time to send request headers or finish a TLS handshake",
        doc: "Time to finish a TLS handshake and send a request's headers (HTTP/1.1: also the wait for the next request; HTTP/2: the first request)",
    },
    Setting {
        key: "idle_timeout",
        kind: Kind::Duration { min: SECOND },
        // The same as HTTP/1.1's wait for the next request's headers, so
        // both protocols close an idle connection alike.
        default: Default::Value("30s"),
        read_by: ReadBy::Both,
        help: "Close a connection with no request in flight after this",
        doc: "A connection with no request in flight this long is closed",
    },
    Setting {
        key: "http2_keepalive_interval",
        kind: Kind::Duration { min: SECOND },
        // A vanished peer is noticed within 40 s; one ping per 20 s of
        // silence costs nothing.
        default: Default::Value("20s"),
        read_by: ReadBy::Both,
        help: "HTTP/2 ping after this much silence",
        doc: "HTTP/2 ping after this much silence...",
    },
    Setting {
        key: "http2_keepalive_timeout",
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("20s"),
        read_by: ReadBy::Both,
        help: "Close an HTTP/2 connection whose ping is not answered in this time",
        doc: "...closing the connection if unanswered this long",
    },
    Setting {
        key: "body_idle_timeout",
        kind: Kind::Duration { min: SECOND },
        // As long as the header deadline: a streaming client never pauses
        // that long between writes, and a loaded one gets slack.
        default: Default::Value("30s"),
        read_by: ReadBy::Both,
        help: "Longest wait for the next piece of a request body",
        doc: "Longest wait for the next piece of a request body: `400 RequestTimeout`, nothing stored",
    },
    Setting {
        key: "max_header_bytes",
        kind: Kind::Size { max: U32 },
        // As AWS (MaxSizeAllowed 8192). The largest header section the
        // conformance suite and SDK matrix sent was 1.1 KiB (p99 0.9 KiB).
        default: Default::Value("8KiB"),
        read_by: ReadBy::Both,
        help: "Largest request header section",
        doc: "Request header section (AWS's limit): `400 RequestHeaderSectionTooLarge`",
    },
    Setting {
        key: "max_header_count",
        kind: Kind::Count { max: ANY },
        // hyper's own HTTP/1.1 cap (above it hyper answers 431 without an
        // S3 body); the most any client sent was 18.
        default: Default::Value("100"),
        read_by: ReadBy::Both,
        help: "Most request headers",
        doc: "Request header fields: `400 RequestHeaderSectionTooLarge`",
    },
    Setting {
        key: "max_url_length",
        kind: Kind::Size { max: U32 },
        // The longest target the suite sent was 3.1 KiB (a 1024-byte key
        // percent-encoded); a session token adds ~1-2 KiB to a URL.
        default: Default::Value("16KiB"),
        read_by: ReadBy::Both,
        help: "Longest request target (path and query)",
        doc: "Request target (path and query): `414 RequestURITooLong`",
    },
    Setting {
        key: "max_signed_chunk",
        kind: Kind::Size { max: ANY },
        // The largest signed chunk the SDK matrix and the suite sent was
        // 128 KiB (Java SDK v2 over plain HTTP); eight times that.
        default: Default::Value("1MiB"),
        read_by: ReadBy::Both,
        help: "Largest signed aws-chunked chunk",
        doc: "Largest signed aws-chunked chunk (buffered until its signature checks): `400 InvalidRequest`",
    },
    Setting {
        key: "chunk_buffer_budget",
        kind: Kind::Size { max: U32 },
        // 256 concurrent signed uploads at the largest chunk; what the
        // gateway will hold unverified in memory at once.
        default: Default::Value("256MiB"),
        read_by: ReadBy::Both,
        help: "Signed chunk bytes buffered across all requests",
        doc: "Signed chunk bytes buffered across all requests at once",
    },
    Setting {
        key: "chunk_buffer_wait",
        // Zero means "never wait": answer SlowDown at once.
        kind: Kind::Duration { min: ZERO },
        // Long enough to ride out a burst, short enough that the client
        // retries (SDKs back off on SlowDown) before its own timeout.
        default: Default::Value("5s"),
        read_by: ReadBy::Both,
        help: "Wait for room in that budget before 503 SlowDown",
        doc: "How long a chunk waits for room in that budget before `503 SlowDown` (`0`: no wait)",
    },
];

/// The setting `key` names; a key missing from [`SETTINGS`] is a bug here.
pub fn setting(key: &str) -> &'static Setting {
    SETTINGS
        .iter()
        .find(|s| s.key == key)
        .unwrap_or_else(|| panic!("{key} is not in SETTINGS"))
}

impl Setting {
    /// `--read-buffer`.
    pub fn flag(&self) -> String {
        format!("--{}", self.key.replace('_', "-"))
    }

    /// `S3GW_READ_BUFFER`.
    pub fn env(&self) -> String {
        format!("S3GW_{}", self.key.to_ascii_uppercase())
    }

    /// The placeholder after the flag: `SIZE`, `DURATION`, `ADDR`.
    pub fn value_name(&self) -> &'static str {
        match self.kind {
            Kind::Text(name)
            | Kind::Path(name)
            | Kind::List(name)
            | Kind::Word { name, .. }
            | Kind::Choice { name, .. } => name,
            Kind::Size { .. } | Kind::SizeOrOff { .. } => "SIZE",
            Kind::Duration { .. } => "DURATION",
            Kind::Count { .. } => "COUNT",
            Kind::Flag => "BOOL",
        }
    }

    /// The declared default value, unless it is the back end's or none.
    pub fn default_value(&self) -> Option<&'static str> {
        match self.default {
            Default::Value(value) => Some(value),
            Default::Storage { .. } | Default::Unset(_) => None,
        }
    }

    /// The default as `--help` shows it, if there is one to show.
    pub fn help_default(&self) -> Option<String> {
        match self.default {
            Default::Value(value) => Some(value.to_owned()),
            Default::Storage {
                embedded: Some(e),
                ozone: Some(o),
            } if e != o => Some(format!("{e} (embedded), {o} (ozone)")),
            Default::Storage {
                embedded: Some(value),
                ..
            }
            | Default::Storage {
                ozone: Some(value), ..
            } => Some(value.to_owned()),
            Default::Storage { .. } | Default::Unset(_) => None,
        }
    }

    /// A JSON Schema of the values a TOML file may give: the bounds
    /// declared here, which the parsers check too. Text the gateway checks
    /// with code of its own (`listen`, `log_level`) is only a string here,
    /// and a size or duration with a unit is bounded by its syntax and by
    /// "not zero" (where zero is refused), not by its maximum.
    pub fn schema(&self) -> serde_json::Value {
        use serde_json::json;
        // TOML integers are 64-bit and signed: a larger bound is no bound.
        let at_most = |max: u64, schema: &mut serde_json::Value| {
            if i64::try_from(max).is_ok() {
                schema["maximum"] = json!(max);
            }
        };
        match self.kind {
            Kind::Text(_) | Kind::Path(_) => json!({"type": "string"}),
            Kind::List(_) => json!({"type": ["string", "array"], "items": {"type": "string"}}),
            Kind::Word { word, .. } => json!({"type": "string", "pattern": word.pattern()}),
            Kind::Choice { values, .. } => json!({"type": "string", "enum": values}),
            Kind::Size { max } | Kind::SizeOrOff { max } => {
                let off = matches!(self.kind, Kind::SizeOrOff { .. });
                let units: Vec<String> = SIZE_UNITS
                    .iter()
                    .map(|(unit, _)| {
                        unit.chars()
                            .map(|c| format!("[{c}{}]", c.to_ascii_uppercase()))
                            .collect()
                    })
                    .collect();
                let size = format!("{POSITIVE} *(?:{})", units.join("|"));
                let pattern = if off {
                    format!("^(?:0|{size})$")
                } else {
                    format!("^{size}$")
                };
                let mut schema = json!({
                    "type": ["integer", "string"],
                    "minimum": u64::from(!off),
                    "pattern": pattern,
                });
                at_most(max, &mut schema);
                schema
            }
            Kind::Duration { min } => {
                let units: Vec<&str> = DURATION_UNITS.iter().map(|(unit, _)| *unit).collect();
                let number = if min.is_zero() { "[0-9]+" } else { POSITIVE };
                let mut schema = json!({
                    "type": ["integer", "string"],
                    "minimum": min.as_secs(),
                    "pattern": format!("^{number} *(?:{})$", units.join("|")),
                });
                at_most(MAX_DURATION.as_secs(), &mut schema);
                schema
            }
            Kind::Count { max } => {
                let mut schema = json!({
                    "type": ["integer", "string"],
                    "minimum": 1,
                    "pattern": format!("^{POSITIVE}$"),
                });
                at_most(max, &mut schema);
                schema
            }
            Kind::Flag => json!({"type": ["boolean", "string"], "pattern": "^(?:true|false)$"}),
        }
    }

    /// The `--help` text: what it means, its variable and default.
    pub fn long_help(&self) -> String {
        let mut help = format!("{} [env: {}]", self.help, self.env());
        if let Some(default) = self.help_default() {
            help.push_str(&format!(" [default: {default}]"));
        }
        match self.read_by {
            ReadBy::Both => {}
            ReadBy::Embedded => help.push_str(" (embedded only)"),
            ReadBy::Ozone => help.push_str(" (ozone only)"),
        }
        help
    }
}

/// The configuration table of README.md and docs/configuration.md, in
/// Markdown; `s3-gateway settings` prints it and a test holds both files to it.
pub fn markdown_table() -> String {
    let code = |s: &str| format!("`{s}`");
    let mut out = String::from(
        "| Flag | Environment | TOML key | Default | Meaning |\n|---|---|---|---|---|\n",
    );
    out.push_str(&format!(
        "| `--{CONFIG_FLAG} FILE` | `{CONFIG_ENV}` | – | none | TOML file with any of the keys below |\n"
    ));
    for setting in SETTINGS {
        let default = match setting.default {
            Default::Value(value) => code(value),
            Default::Storage { embedded, ozone } => match (embedded, ozone) {
                (Some(e), Some(o)) if e != o => format!("`{e}`; `{o}` on `ozone`"),
                (Some(value), _) | (None, Some(value)) => code(value),
                (None, None) => "the back end's".to_owned(),
            },
            Default::Unset(text) => text.to_owned(),
        };
        let only = match setting.read_by {
            ReadBy::Both => "",
            ReadBy::Embedded => "; `embedded` only",
            ReadBy::Ozone => "; `ozone` only",
        };
        out.push_str(&format!(
            "| `{} {}` | `{}` | `{}` | {default} | {}{only} |\n",
            setting.flag(),
            setting.value_name(),
            setting.env(),
            setting.key,
            setting.doc,
        ));
        if setting.key == "credentials" {
            out.push_str(&format!(
                "| – | `{}` + `{}` | – | generated | Root key to use instead of generating one; both or neither |\n",
                super::ROOT_ACCESS_KEY_ENV,
                super::ROOT_SECRET_KEY_ENV
            ));
        }
    }
    out
}

/// The settings as JSON lines, for tools that check themselves against
/// them (the Helm chart's tests and its values schema): key, kind,
/// defaults, which back end reads it, the JSON Schema of its TOML value
/// and, for `credentials`, of the file it names.
pub fn json_lines() -> String {
    let mut out = String::new();
    for setting in SETTINGS {
        let kind = match setting.kind {
            Kind::Text(_) | Kind::Word { .. } => "text",
            Kind::Choice { .. } => "choice",
            Kind::Path(_) => "path",
            Kind::List(_) => "list",
            Kind::Size { .. } | Kind::SizeOrOff { .. } => "size",
            Kind::Duration { .. } => "duration",
            Kind::Count { .. } => "count",
            Kind::Flag => "bool",
        };
        let read_by = match setting.read_by {
            ReadBy::Both => "both",
            ReadBy::Embedded => "embedded",
            ReadBy::Ozone => "ozone",
        };
        // Every value the default takes (one per back end where they differ).
        let defaults: Vec<&str> = match setting.default {
            Default::Value(value) => vec![value],
            Default::Storage { embedded, ozone } => {
                let mut values: Vec<&str> = embedded.into_iter().chain(ozone).collect();
                values.dedup();
                values
            }
            Default::Unset(_) => Vec::new(),
        };
        let mut line = serde_json::json!({
            "key": setting.key,
            "flag": setting.flag(),
            "env": setting.env(),
            "kind": kind,
            "defaults": defaults,
            "read_by": read_by,
            "schema": setting.schema(),
        });
        if setting.key == "credentials" {
            line["file_schema"] = crate::credentials_file::schema();
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials_file::{ACCESS_KEY, NAME, SECRET_KEY};

    #[test]
    fn a_word_pattern_is_its_characters_and_lengths() {
        assert_eq!(ACCESS_KEY.pattern(), "^[0-9A-Z][0-9A-Z]{15,127}$");
        assert_eq!(SECRET_KEY.pattern(), r"^[\x21-\x7e][\x21-\x7e]{29,127}$");
        assert_eq!(
            NAME.pattern(),
            r"^[0-9A-Za-z][\x2d-\x2e0-9\x40A-Z\x5fa-z]{0,63}$"
        );
        assert_eq!(REGION.pattern(), r"^[\x2d0-9a-z][\x2d0-9a-z]{0,}$");
    }

    #[test]
    fn words_accept_exactly_their_lengths_and_characters() {
        for (word, good, bad) in [
            (ACCESS_KEY, 'A', 'a'),
            (SECRET_KEY, '~', ' '),
            (NAME, 'a', '/'),
        ] {
            let max = word.max.expect("bounded");
            for length in [word.min, max] {
                assert!(word.accepts(&good.to_string().repeat(length)), "{length}");
            }
            for length in [word.min - 1, max + 1] {
                assert!(!word.accepts(&good.to_string().repeat(length)), "{length}");
            }
            let one_bad = format!("{}{bad}", good.to_string().repeat(word.min - 1));
            assert!(!word.accepts(&one_bad), "{one_bad:?}");
        }
        assert!(!NAME.accepts("-dash") && NAME.accepts("a-dash"));
        assert!(REGION.accepts("eu-west-1") && !REGION.accepts("EU") && !REGION.accepts(""));
    }

    #[test]
    fn schemas_carry_the_declared_bounds() {
        let schema = |key| setting(key).schema();
        assert_eq!(schema("max_connections")["maximum"], u64::from(u32::MAX));
        assert_eq!(schema("max_connections")["minimum"], 1);
        assert!(
            schema("max_header_count").get("maximum").is_none(),
            "u64::MAX is no TOML integer"
        );
        assert_eq!(schema("small_block_max")["minimum"], 0);
        assert_eq!(schema("small_block_max")["maximum"], 1 << 20);
        assert_eq!(schema("reclaim_interval")["minimum"], 1);
        assert_eq!(schema("reclaim_grace")["minimum"], 0);
        assert_eq!(schema("reclaim_grace")["maximum"], MAX_DURATION.as_secs());
        assert_eq!(
            schema("reclaim_interval")["pattern"],
            "^0*[1-9][0-9]* *(?:|s|m|h|d)$"
        );
        assert_eq!(
            schema("small_block_max")["pattern"],
            "^(?:0|0*[1-9][0-9]* *(?:|[bB]|[kK]|[kK][bB]|[kK][iI][bB]|[mM]|[mM][bB]|[mM][iI][bB]|[gG]|[gG][bB]|[gG][iI][bB]))$"
        );
        assert_eq!(
            schema("log_format")["enum"],
            serde_json::json!(["text", "json"])
        );
        // Only 0 and 1 s minimums exist; a larger one the pattern would not hold.
        for s in SETTINGS {
            if let Kind::Duration { min } = s.kind {
                assert!(min <= SECOND, "{}", s.key);
            }
        }
    }
}
