//! What each back end is opened with: its tunables and their defaults.

use std::path::PathBuf;
use std::time::Duration;

use crate::cache::CacheConfig;
use crate::ozone_tls::OzoneTls;
use crate::{Result, StorageError};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The embedded back end and its tunables. Build it with
/// `StorageConfig { data_dir, ..Default::default() }` or [`StorageConfig::new`].
#[derive(Clone, Debug)]
pub struct StorageConfig {
    pub data_dir: PathBuf,
    /// Bytes per block; a larger object spans several. A multiple of `chunk_size`.
    pub block_size: u64,
    /// Bytes buffered per upload before they go to the block role. A
    /// multiple of `bytes_per_checksum`.
    pub chunk_size: usize,
    /// The most blocks of one upload written or sealed at once. One (the
    /// default): a block is fsynced once, at its seal, on this machine's
    /// own disk, so the next block's chunks have little to wait for.
    pub blocks_in_flight: usize,
    /// Bytes per piece of a read stream (rounded down to whole checksum windows).
    pub read_buffer: usize,
    /// Reads of up to this many bytes of a block run on the calling thread,
    /// not the blocking pool; 0 sends every read to the pool.
    pub inline_read: usize,
    /// Blocks written in one piece of up to this many bytes (an object
    /// smaller than `chunk_size` is one) go to the DN's group-committed
    /// small-block store instead of a file pair each; 0 keeps every block
    /// in files. At most 1 MiB.
    pub small_block_max: usize,
    /// An object of up to this many bytes, written in one piece, is kept
    /// with its key in `om.redb` (written in its commit's transaction, read
    /// in its lookup's) instead of in a block; 0 keeps every object in
    /// blocks. At most 1 MiB.
    pub object_with_key_max: usize,
    /// Bytes of `om.redb` pages the embedded store keeps in memory (redb's
    /// cache); reads beyond it come from the OS page cache.
    pub metadata_db_cache: usize,
    /// The same for `dn.redb`, the small-block store.
    pub small_block_db_cache: usize,
    /// Bytes covered by one stored CRC32; reads verify whole windows.
    pub bytes_per_checksum: u32,
    /// How long a block token stays valid.
    pub token_lifetime: Duration,
    /// How often the OM starts signing with a new secret key.
    pub token_key_rotation: Duration,
    /// Uploads left open longer than this are abandoned and reclaimed.
    pub open_key_expiry: Duration,
    /// Multipart uploads neither completed nor aborted within this time
    /// since they started are aborted and their parts reclaimed.
    pub multipart_upload_expiry: Duration,
    /// Pause between background reclamation passes.
    pub reclaim_interval: Duration,
    /// How long blocks of replaced or deleted objects stay on disk, so that
    /// reads that looked up the old object just before can finish.
    pub reclaim_grace: Duration,
    /// Staleness bound for credentials and bucket info changed through
    /// another replica (this replica's own writes apply at once); zero
    /// disables those caches.
    pub metadata_cache_ttl: Duration,
    /// How long a key lookup is kept after it completes. Zero (default):
    /// lookups are only coalesced, so reads always see the latest write.
    pub key_cache_ttl: Duration,
    /// The least time between two listings of the existing access keys,
    /// which refuse unknown keys without a lookup each (a key is refused
    /// only by a listing begun after its request arrived, so keys created
    /// through another replica work at once). Zero asks about every
    /// unknown key, as does a set larger than `cache_capacity`.
    pub unknown_key_cache_ttl: Duration,
    /// Entries per cache (and the most access keys listed to refuse
    /// unknown ones).
    pub cache_capacity: u64,
}

impl StorageConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            ..Self::default()
        }
    }

    /// The bytes per piece a read stream yields: `read_buffer` rounded down
    /// to whole checksum windows, at least one (a piece is verified whole).
    pub fn read_piece(&self) -> usize {
        let window = self.bytes_per_checksum as usize;
        (self.read_buffer / window).max(1) * window
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let window = self.bytes_per_checksum as usize;
        let problem = if window == 0 || self.chunk_size == 0 || self.read_buffer == 0 {
            "bytes_per_checksum, chunk_size and read_buffer must be positive"
        } else if !self.chunk_size.is_multiple_of(window) {
            "chunk_size must be a multiple of bytes_per_checksum"
        } else if self.small_block_max > MIB {
            "small_block_max must be at most 1 MiB"
        } else if self.object_with_key_max > MIB {
            "object_with_key_max must be at most 1 MiB"
        } else if self.block_size == 0 || !self.block_size.is_multiple_of(self.chunk_size as u64) {
            "block_size must be a positive multiple of chunk_size"
        } else {
            return Ok(());
        };
        Err(StorageError::InvalidArgument(problem.into()))
    }
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("./data"),
            // Ozone's default; with 5 GiB objects at most 20 blocks per key.
            block_size: 256 * MIB as u64,
            // Measured (BENCHMARKS.md): writes peak at 256 KiB-1 MiB, 4 MiB is slower; the
            // smallest peak size keeps per-upload memory low.
            chunk_size: 256 * KIB,
            // Measured (BENCHMARKS.md): 64 KiB pieces read 2x slower, 1 MiB gains nothing.
            read_buffer: 256 * KIB,
            // Measured (BENCHMARKS.md, "GET without a hand-off"): inline, 16 and 64 KiB
            // GETs cost 25-33% less gateway CPU than with the pool's hop; larger reads
            // are few and stream in read_buffer pieces through the pool.
            inline_read: 64 * KIB,
            small_block_max: 64 * KIB,
            // Measured (BENCHMARKS.md, "Small objects kept with their key"):
            // see the comparison there.
            object_with_key_max: 16 * KIB,
            blocks_in_flight: 1,
            // Measured (BENCHMARKS.md, "redb caches"): GETs over 300k objects and PUTs
            // within noise of redb's 1 GiB default, at a peak RSS of ~60 MiB, not 600.
            metadata_db_cache: 16 * MIB,
            small_block_db_cache: 16 * MIB,
            // Ozone's default window, so checksums mean the same on both back ends.
            bytes_per_checksum: 16 * KIB as u32,
            token_lifetime: DAY,
            token_key_rotation: DAY,
            open_key_expiry: DAY,
            // What S3 lifecycle rules commonly use for AbortIncompleteMultipartUpload.
            multipart_upload_expiry: 7 * DAY,
            reclaim_interval: Duration::from_secs(60),
            reclaim_grace: Duration::from_secs(15 * 60),
            metadata_cache_ttl: Duration::from_secs(60),
            key_cache_ttl: Duration::ZERO,
            // Measured (examples/unknown_keys.rs, 1000 keys): a listing costs Ozone
            // ~40 ms, so a flood of unknown keys costs it at most 4% of one OM
            // stream, and a new key's first request here waits at most 1 s.
            unknown_key_cache_ttl: Duration::from_secs(1),
            cache_capacity: 100_000,
        }
    }
}

/// The S3 secret of the gateway's system identity in the OM's store
/// (`ozone s3 getsecret -u .s3gw`). Its `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SystemSecret(String);

impl SystemSecret {
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SystemSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SystemSecret(..)")
    }
}

/// The key the Ozone back end seals its own records with (wrapping stored
/// secrets, a MAC on every credential, bucket document and checksum
/// record): held outside Ozone, the same for every replica
/// (`ozone_records_key_file`). Its `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct RecordsKey(Vec<u8>);

impl RecordsKey {
    /// The fewest bytes a records key may have.
    pub const MIN_BYTES: usize = 32;

    pub fn new(key: Vec<u8>) -> Self {
        Self(key)
    }

    pub(crate) fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for RecordsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordsKey(..)")
    }
}

/// The `ozone` back end: a real Apache Ozone 2.x cluster. Build it with
/// [`OzoneStorageConfig::new`] and adjust fields as needed.
#[derive(Clone, Debug)]
pub struct OzoneStorageConfig {
    /// `host:port` of every Ozone Manager's gRPC server (`ozone.om.grpc.port`).
    pub om_addresses: Vec<String>,
    /// The most bytes written per block. The OM allocates blocks of the
    /// cluster's `ozone.scm.block.size` and the writer never fills one
    /// further, so the default (Ozone's 256 MiB) suits any cluster; a
    /// smaller value cuts objects into smaller blocks.
    pub block_size: u64,
    /// Bytes per WriteChunk; a multiple of `bytes_per_checksum`.
    pub chunk_size: usize,
    /// The most blocks of one upload written or sealed at once: each
    /// block's chunks go through its Raft group in order, so an upload of
    /// several blocks overlaps their round trips.
    pub blocks_in_flight: usize,
    /// The most chunks of one block unanswered at once: they travel on
    /// Ratis's `ordered` stream, which keeps them in order; 1 sends each
    /// after the last is answered.
    pub chunks_in_flight: usize,
    /// Bytes covered by one stored CRC32.
    pub bytes_per_checksum: u32,
    /// Put in front of every bucket name on the cluster; empty (the
    /// default) keeps names as S3 clients give them, which Ozone's own S3
    /// gateway needs to see the same buckets.
    pub bucket_prefix: String,
    pub connect_timeout: Duration,
    /// Deadline of one attempt of one command at an OM or datanode.
    pub request_timeout: Duration,
    /// How long an upload may go without allocating a block before this
    /// gateway forgets it (so an upload that stays this long in one block
    /// fails at commit); Ozone expires the open key on its own.
    pub open_key_expiry: Duration,
    /// As in [`StorageConfig`].
    pub metadata_cache_ttl: Duration,
    pub key_cache_ttl: Duration,
    pub unknown_key_cache_ttl: Duration,
    pub cache_capacity: u64,
    /// The S3 secret of the gateway's system identity in the OM's store;
    /// needed (and only read) when the cluster has security on.
    pub system_secret: Option<SystemSecret>,
    /// The key the gateway's records in Ozone are sealed with; required
    /// (the back end refuses to open without it).
    pub records_key: Option<RecordsKey>,
    /// TLS to every OM and datanode, for a cluster with
    /// `hdds.grpc.tls.enabled`; plaintext gRPC when `None`.
    pub tls: Option<OzoneTls>,
    /// Whether an access key the gateway holds no credential for may sign
    /// requests with the secret the OM's own S3 secret store holds for it
    /// (security on only: the OM vouches for each request's signature).
    pub user_secrets: bool,
    /// Secrets of the identities tests act as without a stored credential
    /// (on a security-on cluster every request is signed).
    #[cfg(feature = "test-support")]
    pub test_secrets: Vec<(String, SystemSecret)>,
}

impl OzoneStorageConfig {
    pub fn new(om_addresses: Vec<String>) -> Self {
        let defaults = StorageConfig::default();
        Self {
            om_addresses,
            block_size: defaults.block_size,
            // Each chunk is one Raft round trip and one buffer per upload:
            // Ozone's own client uses 4 MiB; 1 MiB keeps uploads lighter.
            chunk_size: MIB,
            // Measured in BENCHMARKS.md ("Ozone: blocks in flight").
            blocks_in_flight: 8,
            // Measured in BENCHMARKS.md ("Ozone: chunks in flight").
            chunks_in_flight: 4,
            bytes_per_checksum: defaults.bytes_per_checksum,
            bucket_prefix: String::new(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(60),
            open_key_expiry: defaults.open_key_expiry,
            metadata_cache_ttl: defaults.metadata_cache_ttl,
            key_cache_ttl: defaults.key_cache_ttl,
            unknown_key_cache_ttl: defaults.unknown_key_cache_ttl,
            cache_capacity: defaults.cache_capacity,
            system_secret: None,
            records_key: None,
            tls: None,
            user_secrets: true,
            #[cfg(feature = "test-support")]
            test_secrets: Vec::new(),
        }
    }
}

impl StorageConfig {
    pub(crate) fn cache(&self) -> CacheConfig {
        CacheConfig {
            capacity: self.cache_capacity,
            metadata_ttl: self.metadata_cache_ttl,
            key_ttl: self.key_cache_ttl,
            unknown_key_ttl: self.unknown_key_cache_ttl,
        }
    }
}

impl OzoneStorageConfig {
    pub(crate) fn cache(&self) -> CacheConfig {
        CacheConfig {
            capacity: self.cache_capacity,
            metadata_ttl: self.metadata_cache_ttl,
            key_ttl: self.key_cache_ttl,
            unknown_key_ttl: self.unknown_key_cache_ttl,
        }
    }

    /// The sizes both back ends share must be consistent.
    pub(crate) fn validate(&self) -> Result<()> {
        StorageConfig {
            block_size: self.block_size,
            chunk_size: self.chunk_size,
            bytes_per_checksum: self.bytes_per_checksum,
            ..StorageConfig::default()
        }
        .validate()
    }
}
