//! The declarations themselves: one [`Setting`] per setting, with the
//! bounds and the word shapes they name. What a declaration means, and
//! everything made from the table, is the parent module's.

use std::time::Duration;

use super::key::declare;
use super::{Default, Kind, ReadBy, Setting};
use crate::word::{Chars, Word};

const DIGITS_LOWER_DASH: Chars = Chars(&[(b'-', b'-'), (b'0', b'9'), (b'a', b'z')]);
/// Region names: lower-case letters, digits and `-`.
pub(super) const REGION_NAME: Word = Word {
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

/// Bounds: the semaphore and the HTTP/2 settings take 32 bits.
const U32: u64 = u32::MAX as u64;
const ANY: u64 = u64::MAX;
pub(super) const SECOND: Duration = Duration::from_secs(1);
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

declare! {
    LISTEN = Setting {
        key: listen,
        kind: Kind::Text("ADDR"),
        default: Default::Value("127.0.0.1:9878"),
        read_by: ReadBy::Both,
        help: "Address to listen on: IP:PORT, or HOST:PORT for every address HOST resolves to",
        doc: "IP address and port to serve on; a host name (`localhost:9878`) serves on every address it resolves to, logged at start",
    },
    BACKEND = Setting {
        key: backend,
        kind: Kind::Choice {
            name: "NAME",
            values: &["embedded", "ozone"],
        },
        default: Default::Value("embedded"),
        read_by: ReadBy::Both,
        help: "Storage back end: embedded or ozone",
        doc: "`embedded` (local disk) or `ozone` (an Apache Ozone cluster, below)",
    },
    OM = Setting {
        key: om,
        kind: Kind::List("HOST:PORT[,HOST:PORT...]"),
        default: Default::Unset("none; required with `ozone`"),
        read_by: ReadBy::Ozone,
        help: "Ozone Manager gRPC address(es)",
        doc: "Ozone Managers' gRPC addresses (port 8981 by default); TOML: a string or an array",
    },
    OZONE_CONNECT_TIMEOUT = Setting {
        key: ozone_connect_timeout,
        kind: Kind::Duration { min: SECOND },
        default: ozone("5s"),
        read_by: ReadBy::Ozone,
        help: "Connection timeout to Ozone Managers and datanodes",
        doc: "Opening a connection to an OM or datanode",
    },
    OZONE_REQUEST_TIMEOUT = Setting {
        key: ozone_request_timeout,
        kind: Kind::Duration { min: SECOND },
        default: ozone("60s"),
        read_by: ReadBy::Ozone,
        help: "Deadline of one Ozone command attempt",
        doc: "One attempt of one OM or datanode command",
    },
    OZONE_BLOCKS_IN_FLIGHT = Setting {
        key: ozone_blocks_in_flight,
        kind: Kind::Count { max: 64 },
        // 16 MiB PUTs on the dev cluster (1 MiB blocks): 8 beat 4 by 0-26%
        // and 1 by 1.4x (BENCHMARKS.md, "Ozone: blocks in flight"); memory
        // stays at two chunks per block in flight.
        default: ozone("8"),
        read_by: ReadBy::Ozone,
        help: "Blocks of one upload written to datanodes at once",
        doc: "The most blocks of one upload whose chunks and seal are in flight at once (each block's chunks go through its Raft group in order); each block in flight holds up to `ozone_chunks_in_flight` + 1 chunks of memory. `1` writes one block after another",
    },
    OZONE_CHUNKS_IN_FLIGHT = Setting {
        key: ozone_chunks_in_flight,
        kind: Kind::Count { max: 64 },
        // BENCHMARKS.md, "Ozone: chunks in flight"; Ozone's own client keeps
        // up to 16 MiB of 4 MiB chunks unanswered per stream.
        default: ozone("4"),
        read_by: ReadBy::Ozone,
        help: "Chunks of one block written to datanodes at once (Ratis ordered stream)",
        doc: "The most chunks of one block unanswered at once: they travel on Ratis's ordered stream, which keeps them in the order a datanode requires (as Ozone's own client sends them); each holds a chunk of memory until answered. `1` sends each chunk after the last is answered",
    },
    OZONE_SYSTEM_SECRET_FILE = Setting {
        key: ozone_system_secret_file,
        kind: Kind::Path("FILE"),
        default: Default::Unset("none; required on a cluster with security on"),
        read_by: ReadBy::Ozone,
        help: "File with the S3 secret of the gateway's identity .s3gw in a secure Ozone cluster",
        doc: "The S3 secret of the gateway's own identity `.s3gw` in the OM's store (`ozone s3 getsecret -u .s3gw`, or the bare secret), for a cluster with security on; refused unless readable by its owner only (see docs/security.md)",
    },
    OZONE_USER_SECRETS = Setting {
        key: ozone_user_secrets,
        kind: Kind::Flag,
        default: ozone("true"),
        read_by: ReadBy::Ozone,
        help: "Accept the S3 keys of Ozone's own users (ozone s3 getsecret), vouched by the OM: true or false",
        doc: "On a cluster with security on: an access key the gateway holds no credential for is checked by the OM against its own S3 secret store (`ozone s3 getsecret`), and the request then acts in the OM as that user, as Ozone's own S3 gateway does; `ozone s3 revokesecret` stops the key at its next request. Each aws-chunked chunk signature is vouched for too (one OM read per chunk); a tenant's access id (`tenant$user`) names the buckets of its tenant's volume, as Ozone's S3 gateway serves them. Off, only the gateway's own keys sign requests. No effect with security off, where the OM checks no signature and unknown keys stay refused (see docs/security.md)",
    },
    OZONE_RECORDS_KEY_FILE = Setting {
        key: ozone_records_key_file,
        kind: Kind::Path("FILE"),
        default: Default::Unset("none; required with `ozone`"),
        read_by: ReadBy::Ozone,
        help: "File with the key that seals the gateway's records in Ozone (same on every replica)",
        doc: "The key that seals the gateway's own records in Ozone (credentials, bucket documents, checksum records): one line of at least 32 characters, e.g. `(umask 077; openssl rand -base64 32 > FILE)`; the same file on every replica, refused if open to other users (see docs/security.md)",
    },
    OZONE_TLS_CA_FILE = Setting {
        key: ozone_tls_ca_file,
        kind: Kind::Path("FILE"),
        default: Default::Unset("none: plaintext gRPC"),
        read_by: ReadBy::Ozone,
        help: "PEM file of the Ozone SCM's CA certificate, for a cluster with hdds.grpc.tls.enabled",
        doc: "For a cluster with `hdds.grpc.tls.enabled=true`: the SCM's root CA certificate (PEM; `ozone admin cert list -r` and `ozone admin cert info`, or `ca.crt` from an SCM's metadata dir). With it every OM and datanode connection (OM gRPC, datanode gRPC, Ratis) is TLS and verified against it; no client certificate is needed (Ozone asks for none)",
    },
    OZONE_TLS_SERVER_NAME = Setting {
        key: ozone_tls_server_name,
        kind: Kind::Text("NAME"),
        default: Default::Unset("the host of each address"),
        read_by: ReadBy::Ozone,
        help: "Name every Ozone server certificate is checked against, instead of the host dialled",
        doc: "With `ozone_tls_ca_file`: the name every OM and datanode certificate is verified against, when the certificates do not name the hosts the gateway dials (e.g. all issued for one service name)",
    },
    DATA_DIR = Setting {
        key: data_dir,
        kind: Kind::Path("DIR"),
        default: Default::Value("./data"),
        read_by: ReadBy::Both,
        help: "Directory of the embedded store and of a generated root key",
        doc: "Embedded store's directory; on `ozone` only `root-credentials.toml`",
    },
    REGION = Setting {
        key: region,
        kind: Kind::Word {
            name: "NAME",
            word: REGION_NAME,
            expected: "a region name such as us-east-1",
        },
        default: Default::Value("us-east-1"),
        read_by: ReadBy::Both,
        help: "Region this gateway answers for",
        doc: "Region in SigV4 scopes and GetBucketLocation (lower-case letters, digits, `-`)",
    },
    DOMAIN = Setting {
        key: domain,
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
    TRUSTED_PROXIES = Setting {
        key: trusted_proxies,
        kind: Kind::List("ADDR[/PREFIX][,...]"),
        default: Default::Unset("none: the connection's peer is the client"),
        read_by: ReadBy::Both,
        help: "Proxies (load balancers) whose X-Forwarded-For names the client",
        doc: "Address blocks of the proxies in front (e.g. `10.0.0.0/8`): from them, the client is the address they forward in `X-Forwarded-For` (read from the right, past every trusted hop); from anyone else the header is ignored. Used by the access log's `client`; TOML: a string or an array",
    },
    PROXY_PROTOCOL = Setting {
        key: proxy_protocol,
        kind: Kind::Flag,
        default: Default::Value("false"),
        read_by: ReadBy::Both,
        help: "Read a PROXY protocol header (v1 or v2) first on connections from --trusted-proxies",
        doc: "`true`: every connection from a proxy in `trusted_proxies` starts with a PROXY protocol header (HAProxy's `send-proxy` or `send-proxy-v2`, a TCP-mode balancer), whose client address becomes the connection's; one without it is closed. Connections from anyone else are served as they come. Needs `trusted_proxies`",
    },
    CREDENTIALS = Setting {
        key: credentials,
        kind: Kind::Path("FILE"),
        default: Default::Unset("none"),
        read_by: ReadBy::Both,
        help: "TOML file of [[keys]] to load at start",
        doc: "Keys to load at start (below)",
    },
    BLOCK_SIZE = Setting {
        key: block_size,
        kind: Kind::Size { max: ANY },
        default: storage("256MiB"),
        read_by: ReadBy::Both,
        help: "Storage block size, e.g. 256MiB",
        doc: "Storage block size (`268435456`, `256MiB`)",
    },
    CHUNK_SIZE = Setting {
        key: chunk_size,
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
    READ_BUFFER = Setting {
        key: read_buffer,
        kind: Kind::Size { max: ANY },
        default: embedded("256KiB"),
        read_by: ReadBy::Embedded,
        help: "Bytes per piece of a read stream, in whole 16KiB checksum windows",
        doc: "Bytes per piece of a read stream, rounded to whole 16 KiB checksum windows (at least one); a rounded value is logged with the value in effect",
    },
    SMALL_BLOCK_MAX = Setting {
        key: small_block_max,
        kind: Kind::SizeOrOff { max: 1 << 20 },
        // Measured (BENCHMARKS.md, "Small PUTs share their fsyncs"): see the sweep there.
        default: embedded("64KiB"),
        read_by: ReadBy::Embedded,
        help: "Objects up to this size go to the DN's group-committed small-block store; 0 turns it off",
        doc: "Blocks written in one piece of up to this size (objects smaller than `chunk_size`) are kept in the DN's small-block store (`dn.redb`), whose group commit shares one fsync among concurrent PUTs, instead of a file pair each; `0` keeps every block in files. At most `1MiB`",
    },
    OBJECT_WITH_KEY_MAX = Setting {
        key: object_with_key_max,
        kind: Kind::SizeOrOff { max: 1 << 20 },
        // Measured (BENCHMARKS.md, "Small objects kept with their key"): see the comparison there.
        default: embedded("16KiB"),
        read_by: ReadBy::Embedded,
        help: "Objects up to this size are kept with their key in om.redb, not on the DN; 0 turns it off",
        doc: "An object of up to this size written in one piece is kept with its key in the metadata store (`om.redb`): its PUT is one metadata commit with no DN write, its GET one read transaction with no DN read. `0` keeps every object on the DN. At most `1MiB`; objects already kept stay readable whatever it is set to later",
    },
    METADATA_DB_CACHE = Setting {
        key: metadata_db_cache,
        kind: Kind::Size { max: ANY },
        // Measured (BENCHMARKS.md, "redb caches"): see the sweep there.
        default: embedded("16MiB"),
        read_by: ReadBy::Embedded,
        help: "Memory for om.redb's page cache; reads beyond it come from the OS page cache",
        doc: "Bytes of the metadata store's pages (`om.redb`) kept in the gateway's memory; pages beyond it are read from the file (the OS page cache). The gateway's memory grows with its stores up to this and `small_block_db_cache`",
    },
    SMALL_BLOCK_DB_CACHE = Setting {
        key: small_block_db_cache,
        kind: Kind::Size { max: ANY },
        // Measured (BENCHMARKS.md, "redb caches"): see the sweep there.
        default: embedded("16MiB"),
        read_by: ReadBy::Embedded,
        help: "Memory for dn.redb's page cache (the small-block store)",
        doc: "Bytes of the small-block store's pages (`dn.redb`) kept in the gateway's memory; pages beyond it are read from the file (the OS page cache)",
    },
    MULTIPART_UPLOAD_EXPIRY = Setting {
        key: multipart_upload_expiry,
        // Zero would abort every upload at the next reclamation pass.
        kind: Kind::Duration { min: SECOND },
        default: embedded("7d"),
        read_by: ReadBy::Embedded,
        help: "Abort multipart uploads not completed within this time",
        doc: "Multipart uploads neither completed nor aborted this long after they start are aborted and their parts reclaimed (Ozone expires them itself)",
    },
    OPEN_KEY_EXPIRY = Setting {
        key: open_key_expiry,
        kind: Kind::Duration { min: SECOND },
        default: embedded("1d"),
        read_by: ReadBy::Embedded,
        help: "Reclaim the blocks of a PUT or part upload left unfinished this long",
        doc: "Blocks of a PUT or part upload left unfinished (client gone, gateway killed) this long are reclaimed",
    },
    RECLAIM_INTERVAL = Setting {
        key: reclaim_interval,
        // Zero would spin.
        kind: Kind::Duration { min: SECOND },
        default: embedded("60s"),
        read_by: ReadBy::Embedded,
        help: "Pause between background reclamation passes",
        doc: "Pause between background passes that delete unreferenced blocks",
    },
    RECLAIM_GRACE = Setting {
        key: reclaim_grace,
        // Zero is meaningful: reclaim at the next pass.
        kind: Kind::Duration { min: ZERO },
        default: embedded("15m"),
        read_by: ReadBy::Embedded,
        help: "How long blocks of replaced or deleted objects stay readable",
        doc: "How long blocks of a replaced or deleted object stay readable for GETs already streaming it",
    },
    KEY_CACHE_TTL = Setting {
        key: key_cache_ttl,
        kind: Kind::Duration { min: ZERO },
        default: storage("0"),
        read_by: ReadBy::Both,
        help: "Keep completed key lookups this long; 0 only coalesces concurrent ones",
        doc: "How long a key lookup is reused; `0` only coalesces concurrent lookups, so reads see the latest write. Set it to accept that much staleness across replicas for fewer OM calls",
    },
    METADATA_CACHE_TTL = Setting {
        key: metadata_cache_ttl,
        kind: Kind::Duration { min: ZERO },
        default: storage("60s"),
        read_by: ReadBy::Both,
        help: "Staleness bound for credentials and buckets changed via other replicas; 0 disables",
        doc: "Staleness bound for access keys and buckets changed through another replica (own writes apply at once): a key deleted through one replica is refused by the others within it; `0` disables these caches",
    },
    UNKNOWN_KEY_CACHE_TTL = Setting {
        key: unknown_key_cache_ttl,
        kind: Kind::Duration { min: ZERO },
        default: storage("1s"),
        read_by: ReadBy::Both,
        help: "Least time between listings of the access keys that refuse unknown keys; 0 asks every time (as does a set of over 100,000 keys)",
        doc: "Unknown access keys are refused by a listing of the existing keys (names only) instead of a lookup each; a key is refused only by a listing begun after its request arrived, so a key made through any replica works at once. This is the least time between two listings: what a flood of unknown keys costs the back end (one listing per interval) and the most a request with a new or unknown key waits. Past 100,000 keys (the cache capacity) the list is not kept: every key is asked for, as with `0`, and no request waits for a listing. `0` asks the back end about every unknown key",
    },
    LOG_LEVEL = Setting {
        key: log_level,
        kind: Kind::Text("FILTER"),
        default: Default::Value("info"),
        read_by: ReadBy::Both,
        help: "Log filter: off, error, warn, info, debug, trace, or directives such as s3_gateway=debug,info; other crates log at warn unless named",
        doc: "`tracing` filter, e.g. `debug` or `s3_gateway=debug`; a bare word must be a level (`off`, `error`, `warn`, `info`, `debug`, `trace`), so `warning` stops the start. A bare level applies to the gateway's own crates, dependencies (h2, hyper, rustls) stay at `warn` unless the filter names them",
    },
    LOG_FORMAT = Setting {
        key: log_format,
        kind: Kind::Choice {
            name: "FORMAT",
            values: &["text", "json"],
        },
        default: Default::Value("text"),
        read_by: ReadBy::Both,
        help: "Log line format: text or json",
        doc: "`text` (human-readable lines) or `json` (one JSON object per line, for log collectors)",
    },
    ACCESS_LOG = Setting {
        key: access_log,
        kind: Kind::Flag,
        default: Default::Value("true"),
        read_by: ReadBy::Both,
        help: "Log one line per request: true or false",
        doc: "One `info` line per request (target `s3_gateway::access`: request id, operation, bucket, status, bytes in/out, duration); `false` turns it off",
    },
    DRAIN_DELAY = Setting {
        key: drain_delay,
        kind: Kind::Duration { min: ZERO },
        // Off by default: behind a balancer that retries refused connections
        // (HAProxy in docs/operations.md) or with the Helm chart's preStop
        // sleep an immediate stop lost no request (measured).
        default: Default::Value("0s"),
        read_by: ReadBy::Both,
        help: "On SIGTERM, keep accepting this long with /ready failing, then stop",
        doc: "On SIGTERM `/ready` fails at once; the gateway keeps accepting for this long (so a load balancer notices), then stops accepting and finishes in-flight requests",
    },
    LIFECYCLE_INTERVAL = Setting {
        key: lifecycle_interval,
        // Zero would spin. Rules count in days: an hourly pass applies them
        // within an hour of due, for one listing per rule and bucket an hour.
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("1h"),
        read_by: ReadBy::Both,
        help: "Pause between passes of the lifecycle worker",
        doc: "Pause between passes of the lifecycle worker, which applies every bucket's lifecycle rules (docs/operations.md)",
    },
    LIFECYCLE_DAY = Setting {
        key: lifecycle_day,
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("1d"),
        read_by: ReadBy::Both,
        help: "For tests only: the length of a lifecycle day",
        doc: "**For tests only**: the length of the day in which lifecycle rules count `Days`, `NoncurrentDays` and `DaysAfterInitiation` (rounded up to whole days since the epoch, as S3 rounds to midnight UTC); anything but `1d` expires objects early",
    },
    TLS_CERT = Setting {
        key: tls_cert,
        kind: Kind::Path("FILE"),
        default: Default::Unset("none (plain HTTP)"),
        read_by: ReadBy::Both,
        help: "PEM certificate chain; serves HTTPS when given with --tls-key",
        doc: "PEM certificate chain; with `--tls-key`, serve HTTPS (h2 and HTTP/1.1)",
    },
    TLS_KEY = Setting {
        key: tls_key,
        kind: Kind::Path("FILE"),
        default: Default::Unset("none"),
        read_by: ReadBy::Both,
        help: "PEM private key",
        doc: "PEM private key",
    },
    SIGV2 = Setting {
        key: sigv2,
        kind: Kind::Flag,
        default: Default::Value("true"),
        read_by: ReadBy::Both,
        help: "Accept AWS Signature Version 2: true or false",
        doc: "Accept AWS Signature Version 2 (old tools); `false` refuses it with `400 InvalidRequest`, as AWS's newer regions do",
    },
    SSE_C_OVER_HTTP = Setting {
        key: sse_c_over_http,
        kind: Kind::Flag,
        default: Default::Value("false"),
        read_by: ReadBy::Both,
        help: "Accept SSE-C customer keys over plain HTTP: true or false",
        doc: "Accept SSE-C requests (a customer key in the headers) over plain HTTP. Off, a gateway serving HTTP refuses them with `400 InvalidRequest`, as AWS refuses them without TLS: the key would cross the network in the clear. Turn on only where TLS ends in front of the gateway (a load balancer) or in tests",
    },
    CONSOLE = Setting {
        key: console,
        kind: Kind::Flag,
        default: Default::Value("false"),
        read_by: ReadBy::Both,
        help: "Serve the web console under /_s3gw/console/: true or false",
        doc: "Serve the web console (docs/console.md) under `/_s3gw/console/`, where the admin API answers: sign in with an access key and secret, browse, upload, download, share and set buckets up, each action an S3 request signed as that key (the console adds no rights). Off, those paths answer as any other admin path",
    },
    CONSOLE_SESSION_IDLE = Setting {
        key: console_session_idle,
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("30m"),
        read_by: ReadBy::Both,
        help: "A console session unused this long ends",
        doc: "A console session (docs/console.md) not used for this long ends; the next request signs in again",
    },
    CONSOLE_SESSION_MAX = Setting {
        key: console_session_max,
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("12h"),
        read_by: ReadBy::Both,
        help: "A console session ends this long after its sign-in, used or not",
        doc: "A console session (docs/console.md) ends this long after its sign-in, however busy",
    },
    SSE_MASTER_KEY_FILE = Setting {
        key: sse_master_key_file,
        kind: Kind::Path("FILE"),
        default: Default::Unset("embedded: DATA_DIR/sse-master-keys, generated; ozone: none"),
        read_by: ReadBy::Both,
        help: "File of SSE-S3 master keys, `<key-id> <base64 32 bytes>` a line, the last active",
        doc: "SSE-S3's master keys, which seal every SSE-S3 object's key: one `<key-id> <base64 of 32 bytes>` a line (e.g. `echo \"k1 $(openssl rand -base64 32)\"`), the last line sealing new objects, every line opening what it sealed (rotate by appending a line and restarting; never remove a line objects still use). Refused if open to other users. Unset on the embedded back end, `DATA_DIR/sse-master-keys` is generated on first start; unset on `ozone`, SSE-S3 requests are refused with `501 NotImplemented` (see docs/security.md)",
    },
    SSE_KMS_URL = Setting {
        key: sse_kms_url,
        kind: Kind::Text("URL"),
        default: Default::Unset("none: SSE-KMS refused"),
        read_by: ReadBy::Both,
        help: "URL of the Hadoop KMS that SSE-KMS (`aws:kms`) data keys come from, e.g. http://kms:9600/kms",
        doc: "The Apache Hadoop KMS (the one Ozone's transparent encryption uses) that makes and opens SSE-KMS data keys, e.g. `http://kms:9600/kms`: `aws:kms` with `x-amz-server-side-encryption-aws-kms-key-id: NAME` seals the object under a fresh data key of KMS key NAME, and only the KMS can open it again. The gateway authenticates as `sse_kms_user` (Hadoop's simple authentication); grant that user GENERATE_EEK and DECRYPT_EEK on the keys, nothing else (docs/security.md). Unset, `aws:kms` is refused with `501 NotImplemented` naming this setting",
    },
    SSE_KMS_USER = Setting {
        key: sse_kms_user,
        kind: Kind::Text("NAME"),
        default: Default::Value("s3gw"),
        read_by: ReadBy::Both,
        help: "User the gateway is to the KMS of `sse_kms_url`",
        doc: "The user name the gateway sends the KMS of `sse_kms_url` (`user.name`, Hadoop's simple authentication), whom the KMS's ACLs name",
    },
    SSE_KMS_DEFAULT_KEY = Setting {
        key: sse_kms_default_key,
        kind: Kind::Text("NAME"),
        default: Default::Unset("none: aws:kms needs a key id"),
        read_by: ReadBy::Both,
        help: "KMS key for `aws:kms` without a key id (AWS's aws/s3 key)",
        doc: "The KMS key an `aws:kms` write (or bucket default) that names no key id is sealed under, the part AWS's `aws/s3` key plays; unset, such a write is refused `400 InvalidArgument`",
    },
    SSE_KMS_KEY_CACHE_TTL = Setting {
        key: sse_kms_key_cache_ttl,
        kind: Kind::Duration { min: ZERO },
        // A minute: a hot object's GETs cost no KMS round trip, and a KMS
        // key the KMS stops granting stops opening objects within it.
        default: Default::Value("60s"),
        read_by: ReadBy::Both,
        help: "Reuse a data key the KMS opened for this long; 0 asks the KMS on every read",
        doc: "With `sse_kms_url`: how long a data key the KMS opened is reused to read the objects it seals (at most 10,000 keys are kept), so reads of a hot object cost no KMS round trip; a KMS key the KMS stops granting stops opening objects within this long. `0` asks the KMS on every read",
    },
    CONNECTION_RUNTIME = Setting {
        key: connection_runtime,
        kind: Kind::Choice {
            name: "RUNTIME",
            values: &["shared", "per-thread"],
        },
        default: Default::Value("shared"),
        read_by: ReadBy::Both,
        help: "Where connections are served: shared or per-thread",
        doc: "`shared`: every connection on the shared runtime's worker threads, which steal work from each other; `per-thread`: each connection on one of as many single-threaded runtimes as there are cores, for its whole life (no work stealing, no waking of other workers)",
    },
    MAX_CONNECTIONS = Setting {
        key: max_connections,
        kind: Kind::Count { max: U32 },
        // 34 KiB per idle HTTP/2 connection, 26 KiB per HTTP/1.1 one
        // (measured): 4096 cost ~140 MiB, far above any client pool.
        default: Default::Value("4096"),
        read_by: ReadBy::Both,
        help: "Connections served at once",
        doc: "Connections served at once; beyond them the longest-idle connection makes way, else a small overflow lane answers `/health` and `503 SlowDown` (below)",
    },
    REQUEST_HEADER_TIMEOUT = Setting {
        key: request_header_timeout,
        // A zero timeout would close every connection or refuse every body.
        kind: Kind::Duration { min: SECOND },
        // hyper's own default for HTTP/1.1 headers; a real client sends
        // its headers in one write, milliseconds.
        default: Default::Value("30s"),
        read_by: ReadBy::Both,
        help: "Time to send request headers or finish a TLS handshake",
        doc: "Time to finish a TLS handshake and send a request's headers (HTTP/1.1: also the wait for the next request; HTTP/2: the first request)",
    },
    IDLE_TIMEOUT = Setting {
        key: idle_timeout,
        kind: Kind::Duration { min: SECOND },
        // The same as HTTP/1.1's wait for the next request's headers, so
        // both protocols close an idle connection alike.
        default: Default::Value("30s"),
        read_by: ReadBy::Both,
        help: "Close a connection with no request in flight after this",
        doc: "A connection with no request in flight this long is closed",
    },
    HTTP2_KEEPALIVE_INTERVAL = Setting {
        key: http2_keepalive_interval,
        kind: Kind::Duration { min: SECOND },
        // A vanished peer is noticed within 40 s; one ping per 20 s of
        // silence costs nothing.
        default: Default::Value("20s"),
        read_by: ReadBy::Both,
        help: "HTTP/2 ping after this much silence",
        doc: "HTTP/2 ping after this much silence...",
    },
    HTTP2_KEEPALIVE_TIMEOUT = Setting {
        key: http2_keepalive_timeout,
        kind: Kind::Duration { min: SECOND },
        default: Default::Value("20s"),
        read_by: ReadBy::Both,
        help: "Close an HTTP/2 connection whose ping is not answered in this time",
        doc: "...closing the connection if unanswered this long",
    },
    BODY_IDLE_TIMEOUT = Setting {
        key: body_idle_timeout,
        kind: Kind::Duration { min: SECOND },
        // As long as the header deadline: a streaming client never pauses
        // that long between writes, and a loaded one gets slack.
        default: Default::Value("30s"),
        read_by: ReadBy::Both,
        help: "Longest wait for the next piece of a request body",
        doc: "Longest wait for the next piece of a request body: `400 RequestTimeout`, nothing stored",
    },
    MAX_HEADER_BYTES = Setting {
        key: max_header_bytes,
        kind: Kind::Size { max: U32 },
        // As AWS (MaxSizeAllowed 8192). The largest header section the
        // conformance suite and SDK matrix sent was 1.1 KiB (p99 0.9 KiB).
        default: Default::Value("8KiB"),
        read_by: ReadBy::Both,
        help: "Largest request header section",
        doc: "Request header section (AWS's limit): `400 RequestHeaderSectionTooLarge`",
    },
    MAX_HEADER_COUNT = Setting {
        key: max_header_count,
        kind: Kind::Count { max: ANY },
        // hyper's own HTTP/1.1 cap (above it hyper answers 431 without an
        // S3 body); the most any client sent was 18.
        default: Default::Value("100"),
        read_by: ReadBy::Both,
        help: "Most request headers",
        doc: "Request header fields: `400 RequestHeaderSectionTooLarge`",
    },
    MAX_URL_LENGTH = Setting {
        key: max_url_length,
        kind: Kind::Size { max: U32 },
        // The longest target the suite sent was 3.1 KiB (a 1024-byte key
        // percent-encoded); a session token adds ~1-2 KiB to a URL.
        default: Default::Value("16KiB"),
        read_by: ReadBy::Both,
        help: "Longest request target (path and query)",
        doc: "Request target (path and query): `414 RequestURITooLong`",
    },
    MAX_SIGNED_CHUNK = Setting {
        key: max_signed_chunk,
        kind: Kind::Size { max: ANY },
        // The largest signed chunk the SDK matrix and the suite sent was
        // 128 KiB (Java SDK v2 over plain HTTP); eight times that.
        default: Default::Value("1MiB"),
        read_by: ReadBy::Both,
        help: "Largest signed aws-chunked chunk",
        doc: "Largest signed aws-chunked chunk (buffered until its signature checks): `400 InvalidRequest`",
    },
    CHUNK_BUFFER_BUDGET = Setting {
        key: chunk_buffer_budget,
        kind: Kind::Size { max: U32 },
        // 256 concurrent signed uploads at the largest chunk; what the
        // gateway will hold unverified in memory at once.
        default: Default::Value("256MiB"),
        read_by: ReadBy::Both,
        help: "Signed chunk bytes buffered across all requests",
        doc: "Signed chunk bytes buffered across all requests at once",
    },
    CHUNK_BUFFER_WAIT = Setting {
        key: chunk_buffer_wait,
        // Zero means "never wait": answer SlowDown at once.
        kind: Kind::Duration { min: ZERO },
        // Long enough to ride out a burst, short enough that the client
        // retries (SDKs back off on SlowDown) before its own timeout.
        default: Default::Value("5s"),
        read_by: ReadBy::Both,
        help: "Wait for room in that budget before 503 SlowDown",
        doc: "How long a chunk waits for room in that budget before `503 SlowDown` (`0`: no wait)",
    },
}
