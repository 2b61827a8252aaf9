//! The cache on its own, with loaders that count their calls and can be
//! held until released, so interleavings are exact.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use tokio::sync::{Notify, Semaphore};

use super::*;

/// A back end stand-in: counts loads and holds each until released.
struct Gate {
    permits: Semaphore,
    calls: AtomicUsize,
    arrived: Notify,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            permits: Semaphore::new(0),
            calls: AtomicUsize::new(0),
            arrived: Notify::new(),
        }
    }
}

impl Gate {
    /// `value` once a permit is given; counts the call first.
    async fn load<T>(&self, value: T) -> T {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.arrived.notify_one();
        drop(self.permits.acquire().await);
        value
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn open(&self) {
        self.permits.add_permits(100);
    }
}

fn cache(config: impl FnOnce(&mut CacheConfig)) -> Arc<MetadataCache> {
    let mut defaults = CacheConfig {
        capacity: 100,
        metadata_ttl: Duration::from_secs(60),
        key_ttl: Duration::ZERO,
        unknown_key_ttl: Duration::from_secs(60),
    };
    config(&mut defaults);
    Arc::new(MetadataCache::new(defaults))
}

fn object(etag: &str) -> KeyInfo {
    KeyInfo {
        bucket: "b".into(),
        key: "k".into(),
        size: 0,
        etag: etag.into(),
        last_modified: SystemTime::UNIX_EPOCH,
        owner: "alice".into(),
        meta: Default::default(),
        tags: Vec::new(),
        checksum: None,
        locations: Vec::new(),
        parts: Vec::new(),
        version_id: None,
    }
}

fn bucket_of(owner: &str) -> BucketInfo {
    BucketInfo {
        name: "b".into(),
        owner: owner.into(),
        created: SystemTime::UNIX_EPOCH,
        region: String::new(),
    }
}

fn credential(access_key: &str) -> Credential {
    Credential {
        name: access_key.to_lowercase(),
        access_key: access_key.into(),
        secret_key: "s".into(),
        is_root: false,
    }
}

/// Lets spawned tasks run until they wait on something.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

/// `owner`'s lookup of b/k through `cache`, answered by `gate` with `etag`.
fn spawn_lookup(
    cache: &Arc<MetadataCache>,
    gate: &Arc<Gate>,
    owner: &str,
    etag: &'static str,
) -> tokio::task::JoinHandle<Result<KeyInfo>> {
    let (cache, gate, owner) = (Arc::clone(cache), Arc::clone(gate), Owner::new(owner));
    tokio::spawn(async move {
        let load = async { Ok(gate.load(object(etag)).await) };
        cache.lookup(&owner, &ObjectName::new("b", "k"), load).await
    })
}

#[tokio::test(flavor = "current_thread")]
async fn a_lookup_after_a_write_never_joins_an_older_lookup() {
    let (cache, gate) = (cache(|_| {}), Arc::new(Gate::default()));
    let old = spawn_lookup(&cache, &gate, "alice", "v1");
    gate.arrived.notified().await;
    cache.wrote_object(&ObjectName::new("b", "k"));
    let new = spawn_lookup(&cache, &gate, "alice", "v2");
    // The second lookup reaches the back end itself instead of waiting on the first.
    gate.arrived.notified().await;
    assert_eq!(gate.calls(), 2);
    gate.open();
    assert_eq!(new.await.unwrap().unwrap().etag, "v2");
    assert_eq!(old.await.unwrap().unwrap().etag, "v1");
}

#[tokio::test(flavor = "current_thread")]
async fn concurrent_lookups_share_one_call_per_identity() {
    let (cache, gate) = (cache(|_| {}), Arc::new(Gate::default()));
    let first = spawn_lookup(&cache, &gate, "alice", "v1");
    gate.arrived.notified().await;
    let second = spawn_lookup(&cache, &gate, "alice", "never loaded");
    let other = spawn_lookup(&cache, &gate, "bob", "bob's answer");
    // Bob's lookup is never coalesced with Alice's: it reaches the back end.
    gate.arrived.notified().await;
    settle().await;
    gate.open();
    assert_eq!(first.await.unwrap().unwrap().etag, "v1");
    assert_eq!(second.await.unwrap().unwrap().etag, "v1");
    assert_eq!(other.await.unwrap().unwrap().etag, "bob's answer");
    assert_eq!(gate.calls(), 2);
    let stats = cache.stats().lookups;
    assert_eq!((stats.hits, stats.misses), (1, 2));
}

#[tokio::test(flavor = "current_thread")]
async fn lookups_are_not_kept_by_default() {
    let (cache, gate) = (cache(|_| {}), Arc::new(Gate::default()));
    gate.open();
    spawn_lookup(&cache, &gate, "alice", "v1")
        .await
        .unwrap()
        .unwrap();
    spawn_lookup(&cache, &gate, "alice", "v1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(gate.calls(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn lookups_are_kept_for_the_key_ttl() {
    let cache = cache(|c| c.key_ttl = Duration::from_secs(60));
    let gate = Arc::new(Gate::default());
    gate.open();
    spawn_lookup(&cache, &gate, "alice", "v1")
        .await
        .unwrap()
        .unwrap();
    spawn_lookup(&cache, &gate, "alice", "v2")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(gate.calls(), 1);
    cache.wrote_object(&ObjectName::new("b", "k"));
    let after = spawn_lookup(&cache, &gate, "alice", "v2").await.unwrap();
    assert_eq!(after.unwrap().etag, "v2");
}

#[tokio::test(flavor = "current_thread")]
async fn bucket_facts_are_cached_and_forgotten_on_a_write() {
    let (cache, gate) = (cache(|_| {}), Arc::new(Gate::default()));
    gate.open();
    for _ in 0..3 {
        let load = async { Ok(gate.load(Arc::new(bucket_of("alice"))).await) };
        let facts = cache.bucket_facts("b", load).await.unwrap();
        assert_eq!(facts.owner, "alice");
    }
    assert_eq!(gate.calls(), 1);
    cache.wrote_bucket("b");
    let load = async { Ok(gate.load(Arc::new(bucket_of("bob"))).await) };
    let facts = cache.bucket_facts("b", load).await.unwrap();
    assert_eq!((facts.owner.as_str(), gate.calls()), ("bob", 2));
}

/// Credential lookups through `cache`: `listed` is every access key the
/// back end has, `stored` what a per-key load answers.
struct Keys {
    cache: Arc<MetadataCache>,
    lists: AtomicUsize,
    loads: AtomicUsize,
}

impl Keys {
    fn new(cache: Arc<MetadataCache>) -> Self {
        Self {
            cache,
            lists: AtomicUsize::new(0),
            loads: AtomicUsize::new(0),
        }
    }

    async fn credential(&self, access_key: &str, stored: &[&str]) -> Option<Credential> {
        let listed: Vec<String> = stored.iter().map(|k| (*k).to_owned()).collect();
        let load = async {
            self.loads.fetch_add(1, Ordering::SeqCst);
            Ok(stored.contains(&access_key).then(|| credential(access_key)))
        };
        let list = || async {
            self.lists.fetch_add(1, Ordering::SeqCst);
            Ok(listed)
        };
        self.cache.credential(access_key, load, list).await.unwrap()
    }

    fn counts(&self) -> (usize, usize) {
        (
            self.lists.load(Ordering::SeqCst),
            self.loads.load(Ordering::SeqCst),
        )
    }
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_access_keys_cost_no_lookup_each() {
    let keys = Keys::new(cache(|c| c.unknown_key_ttl = Duration::from_millis(50)));
    // A burst: the first listing began before most of them arrived, the
    // next one answers all of those.
    let burst = (0..50).map(|i| {
        let keys = &keys;
        async move { keys.credential(&format!("RANDOM{i}"), &["ALICE"]).await }
    });
    let answers = futures::future::join_all(burst).await;
    assert!(answers.iter().all(Option::is_none));
    let (lists, loads) = keys.counts();
    assert!(lists <= 2, "{lists} listings for one burst");
    assert_eq!(loads, 0, "no per-key lookup");
    assert!(keys.credential("ALICE", &["ALICE"]).await.is_some());
    assert!(keys.credential("ALICE", &["ALICE"]).await.is_some());
    assert_eq!(
        keys.counts(),
        (lists, 1),
        "the known key is loaded once, then cached"
    );
    let stats = keys.cache.stats();
    assert_eq!(
        (stats.access_keys.hits, stats.access_keys.misses),
        (50 - lists as u64, lists as u64)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_key_written_here_works_at_once_and_a_deleted_one_stops() {
    let keys = Keys::new(cache(|c| c.unknown_key_ttl = Duration::from_millis(50)));
    assert_eq!(keys.credential("NEW", &[]).await, None);
    keys.cache.wrote_credential("NEW", true).await;
    assert!(keys.credential("NEW", &["NEW"]).await.is_some());
    assert_eq!(
        keys.counts().0,
        1,
        "a key written here needs no new listing"
    );
    keys.cache.wrote_credential("NEW", false).await;
    assert_eq!(keys.credential("NEW", &[]).await, None);
}

#[tokio::test(flavor = "current_thread")]
async fn a_vouched_key_waits_for_no_listing_until_it_becomes_the_gateways() {
    let keys = Keys::new(cache(|c| c.unknown_key_ttl = Duration::from_secs(3600)));
    assert_eq!(keys.credential("OZONEUSER", &[]).await, None);
    let before = keys.counts();
    keys.cache.vouched("OZONEUSER").await;
    // Within the hour-long unknown-key bound a second listing would be a
    // wait; a vouched key needs neither listing nor lookup.
    for _ in 0..3 {
        assert_eq!(keys.credential("OZONEUSER", &[]).await, None);
    }
    assert_eq!(keys.counts(), before);
    keys.cache.wrote_credential("OZONEUSER", true).await;
    assert!(keys.credential("OZONEUSER", &["OZONEUSER"]).await.is_some());
}

#[tokio::test(flavor = "current_thread")]
async fn with_no_unknown_key_ttl_every_unknown_key_is_asked_for() {
    let keys = Keys::new(cache(|c| c.unknown_key_ttl = Duration::ZERO));
    for _ in 0..3 {
        assert_eq!(keys.credential("NOBODY", &["ALICE"]).await, None);
    }
    assert_eq!(keys.counts(), (0, 3));
}

#[tokio::test(flavor = "current_thread")]
async fn a_key_created_through_another_replica_works_at_once() {
    let keys = Keys::new(cache(|c| c.unknown_key_ttl = Duration::from_secs(1)));
    assert_eq!(keys.credential("LATER", &[]).await, None);
    // Created elsewhere since: the listing that refused it began before, so
    // the next one (after the ttl) is asked and finds it.
    assert!(keys.credential("LATER", &["LATER"]).await.is_some());
    assert_eq!(keys.counts(), (2, 1));
}

/// Runs `test`, failing if it waits for a listing: `LONG` is the
/// unknown-key ttl of the tests below, so a second listing (or a wait for
/// one) cannot finish within `FAR_LESS`.
async fn without_waiting_for_a_listing<T>(test: impl Future<Output = T>) -> T {
    const FAR_LESS: Duration = Duration::from_secs(5);
    tokio::time::timeout(FAR_LESS, test)
        .await
        .expect("a request waited for a listing")
}

const LONG: Duration = Duration::from_secs(600);

#[tokio::test(flavor = "current_thread")]
async fn past_the_capacity_every_key_is_asked_for_without_waiting() {
    let keys = Keys::new(cache(|c| {
        c.capacity = 2;
        c.unknown_key_ttl = LONG;
    }));
    let stored = ["ALICE", "BOB", "CAROL"];
    without_waiting_for_a_listing(async {
        assert!(keys.credential("ALICE", &stored).await.is_some());
        // Known keys and unknown ones together, as a busy replica sees them.
        let burst = (0..50).map(|i| {
            let keys = &keys;
            let key = if i % 2 == 0 {
                "BOB".to_owned()
            } else {
                format!("RANDOM{i}")
            };
            async move { (i, keys.credential(&key, &stored).await) }
        });
        for (i, answer) in futures::future::join_all(burst).await {
            assert_eq!(answer.is_some(), i % 2 == 0, "request {i}");
        }
    })
    .await;
    let (lists, loads) = keys.counts();
    assert_eq!(lists, 1, "a set past the capacity is not listed again");
    // ALICE and BOB once each (then cached), each unknown key once.
    assert_eq!(loads, 2 + 25);
}

#[tokio::test(flavor = "current_thread")]
async fn a_key_written_past_the_capacity_drops_the_set_without_waiting() {
    let keys = Keys::new(cache(|c| {
        c.capacity = 2;
        c.unknown_key_ttl = LONG;
    }));
    without_waiting_for_a_listing(async {
        assert_eq!(keys.credential("NOBODY", &["ALICE", "BOB"]).await, None);
        keys.cache.wrote_credential("CAROL", true).await;
        let stored = ["ALICE", "BOB", "CAROL"];
        assert!(keys.credential("CAROL", &stored).await.is_some());
        assert_eq!(keys.credential("NOBODY", &stored).await, None);
    })
    .await;
    assert_eq!(keys.counts(), (1, 2), "one listing, then a lookup per key");
}

#[tokio::test(flavor = "current_thread")]
async fn after_a_failed_listing_every_key_is_asked_for_until_the_next() {
    let cache = cache(|c| c.unknown_key_ttl = LONG);
    let lists = AtomicUsize::new(0);
    let ask = |access_key: &'static str| {
        let (cache, lists) = (&cache, &lists);
        async move {
            let load = async { Ok((access_key == "ALICE").then(|| credential(access_key))) };
            let list = || async {
                lists.fetch_add(1, Ordering::SeqCst);
                Err(StorageError::Unavailable("no listing".into()))
            };
            cache.credential(access_key, load, list).await.unwrap()
        }
    };
    without_waiting_for_a_listing(async {
        for _ in 0..3 {
            assert!(ask("ALICE").await.is_some());
            assert_eq!(ask("NOBODY").await, None);
        }
    })
    .await;
    assert_eq!(lists.load(Ordering::SeqCst), 1);
}

#[test]
fn a_kept_lookup_weighs_one_plus_a_kib_per_kib_of_bytes_it_carries() {
    let mut info = object("e");
    assert_eq!(lookup_weight(&info), 1);
    info.locations.push(crate::BlockLocation {
        block: crate::BlockId {
            container: 1,
            local: 1,
        },
        offset: 0,
        length: 16 * 1024,
        datanodes: Vec::new(),
        token: None,
        commit_sequence_id: 0,
        replicas: Vec::new(),
        write_group: None,
        bytes_with_key: Some(crate::BytesWithKey(bytes::Bytes::from(vec![0; 16 * 1024]))),
    });
    assert_eq!(lookup_weight(&info), 17);
}
