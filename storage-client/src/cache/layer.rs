//! One cache: nothing kept, concurrent loads shared while they run
//! ([`SingleFlight`]), or moka with single-flight loads; generation-based
//! invalidation and hit/miss/eviction counters.
//!
//! Invalidation uses generations rather than removal: every write bumps a
//! counter for the name it touched (after the write returns), and the
//! counter is part of every cache key. A load that began before the write
//! can still be in flight, but a load that starts after the write reads
//! the new generation and so can never join it or see its result.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use moka::future::Cache;

use super::CacheCounters;
use super::single_flight::SingleFlight;

/// How long a layer keeps what it loaded.
#[derive(Clone, Copy, Debug)]
pub(super) enum Keep {
    /// Nothing is cached: every call loads.
    Nothing,
    /// Concurrent loads of one key share one call; nothing is kept after.
    WhileLoading,
    /// Loaded values are kept this long.
    For(Duration),
}

impl Keep {
    /// `For(ttl)`, or `otherwise` when `ttl` is zero.
    pub(super) fn for_ttl(ttl: Duration, otherwise: Self) -> Self {
        if ttl.is_zero() {
            otherwise
        } else {
            Self::For(ttl)
        }
    }
}

/// Hashed generation counters: a write bumps the stripe its name hashes to
/// (an unrelated name sharing the stripe just misses the cache once).
struct Generations {
    stripes: Box<[AtomicU64]>,
    hasher: RandomState,
}

impl Generations {
    const STRIPES: usize = 4096;

    fn new() -> Self {
        Self {
            stripes: (0..Self::STRIPES).map(|_| AtomicU64::new(0)).collect(),
            hasher: RandomState::new(),
        }
    }

    fn stripe<N: Hash + ?Sized>(&self, name: &N) -> &AtomicU64 {
        let index = self.hasher.hash_one(name) as usize % self.stripes.len();
        &self.stripes[index]
    }

    fn current<N: Hash + ?Sized>(&self, name: &N) -> u64 {
        self.stripe(name).load(Ordering::Acquire)
    }

    fn bump<N: Hash + ?Sized>(&self, name: &N) {
        self.stripe(name).fetch_add(1, Ordering::AcqRel);
    }
}

#[derive(Default)]
pub(super) struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

impl Counters {
    pub(super) fn hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self) -> CacheCounters {
        CacheCounters {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }
}

/// Values of type `V` by key `K`; a load fails with `E`, which is never kept.
pub(super) struct Layer<K, V, E> {
    store: Store<K, V, E>,
    generations: Generations,
    counters: Arc<Counters>,
}

enum Store<K, V, E> {
    Nothing,
    WhileLoading(SingleFlight<(K, u64), Result<V, E>>),
    Kept(Cache<(K, u64), V>),
}

impl<K, V, E> Layer<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    E: Clone + Send + Sync + 'static,
{
    pub(super) fn new(capacity: u64, keep: Keep) -> Self {
        Self::weighed(capacity, keep, |_| 1)
    }

    /// As [`Self::new`], `capacity` counting `weigh` of each value kept.
    pub(super) fn weighed(capacity: u64, keep: Keep, weigh: fn(&V) -> u32) -> Self {
        let counters = Arc::new(Counters::default());
        let evictions = Arc::clone(&counters);
        let store = match keep {
            Keep::Nothing => Store::Nothing,
            // Nothing is kept, so nothing is evicted: hits are joined loads.
            Keep::WhileLoading => Store::WhileLoading(SingleFlight::new()),
            Keep::For(ttl) => Store::Kept(
                Cache::builder()
                    .max_capacity(capacity)
                    .weigher(move |_, value| weigh(value))
                    .time_to_live(ttl)
                    .eviction_listener(move |_, _, cause| {
                        if cause.was_evicted() {
                            evictions.evictions.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                    .build(),
            ),
        };
        Self {
            store,
            generations: Generations::new(),
            counters,
        }
    }

    /// The value under `key` (whose generation is that of `name`), from
    /// the cache or from `load`, which concurrent callers of one key share.
    pub(super) async fn get<N>(
        &self,
        name: &N,
        key: K,
        load: impl Future<Output = Result<V, E>>,
    ) -> Result<V, E>
    where
        N: Hash + ?Sized,
    {
        let entry = || (key, self.generations.current(name));
        let (result, loaded) = match &self.store {
            Store::Nothing => (load.await, true),
            Store::WhileLoading(calls) => calls.run(entry(), load).await,
            Store::Kept(cache) => {
                let entry = entry();
                let loaded = AtomicBool::new(false);
                let result = cache
                    .try_get_with_by_ref(&entry, async {
                        loaded.store(true, Ordering::Relaxed);
                        load.await
                    })
                    .await
                    .map_err(Arc::unwrap_or_clone);
                (result, loaded.load(Ordering::Relaxed))
            }
        };
        if loaded {
            self.counters.miss();
        } else {
            self.counters.hit();
        }
        result
    }

    /// Forgets every value whose generation is that of `name`: call after
    /// a write to it returns (whatever its outcome).
    pub(super) fn wrote<N: Hash + ?Sized>(&self, name: &N) {
        self.generations.bump(name);
    }

    pub(super) fn counters(&self) -> CacheCounters {
        self.counters.snapshot()
    }
}
