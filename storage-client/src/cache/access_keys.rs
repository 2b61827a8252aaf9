//! The set of access keys that exist, so that requests signed with unknown
//! keys (typos, or an attacker trying random keys) cost no back-end lookup
//! each: the whole set is listed (names only) instead, at most once per
//! `ttl` however many unknown keys are tried.
//!
//! A key is refused only by a listing that began after its request
//! arrived, so a key created anywhere (through another replica too) before
//! the request works at once; a request with a key outside the last
//! listing waits for the next one, which starts at most `ttl` after the
//! one before. Unknown keys thus cost their senders up to `ttl` each and
//! the back end one listing per `ttl`. This replica's own writes update
//! the set at once.

use std::collections::HashSet;
use std::future::Future;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::CacheCounters;
use super::layer::Counters;
use crate::Result;

struct Loaded {
    keys: HashSet<String>,
    /// When the listing began: it holds every key created before then.
    began: Instant,
}

pub(super) struct AccessKeys {
    /// The least time between two listings; zero: the set is never loaded
    /// and every key is asked for.
    ttl: Duration,
    /// The most keys kept; a larger set is not kept (every key is asked for).
    capacity: usize,
    loaded: RwLock<Option<Loaded>>,
    /// Serialises loads, so a burst of unknown keys costs one; holds when
    /// the last listing began.
    loading: tokio::sync::Mutex<Option<Instant>>,
    /// Bumped by every write: a load that saw another number when it began
    /// may miss that write and is not kept.
    writes: AtomicU64,
    counters: Counters,
}

impl AccessKeys {
    pub(super) fn new(ttl: Duration, capacity: u64) -> Self {
        Self {
            ttl,
            capacity: usize::try_from(capacity).unwrap_or(usize::MAX),
            loaded: RwLock::new(None),
            loading: tokio::sync::Mutex::new(None),
            writes: AtomicU64::new(0),
            counters: Counters::default(),
        }
    }

    /// False only if `access_key` is surely unknown (a listing begun after
    /// this call lacks it); true if it exists or the set cannot tell (the
    /// back end is then asked). `load` lists every access key.
    pub(super) async fn may_exist<F>(&self, access_key: &str, load: impl FnOnce() -> F) -> bool
    where
        F: Future<Output = Result<Vec<String>>>,
    {
        if self.ttl.is_zero() {
            return true;
        }
        let arrived = Instant::now();
        if let Some(known) = self.answer_since(access_key, None) {
            return self.answered(known);
        }
        let mut last_listing = self.loading.lock().await;
        // A listing that began while this call waited answers it.
        if let Some(known) = self.answer_since(access_key, Some(arrived)) {
            return self.answered(known);
        }
        if let Some(last) = *last_listing {
            tokio::time::sleep_until(last + self.ttl).await;
        }
        self.counters.miss();
        let writes = self.writes.load(Ordering::Acquire);
        let began = Instant::now();
        *last_listing = Some(began);
        let keys = match load().await {
            Ok(keys) if keys.len() <= self.capacity => keys,
            Ok(_) => return true,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the access keys; asking for each");
                return true;
            }
        };
        let keys: HashSet<String> = keys.into_iter().collect();
        let known = keys.contains(access_key);
        let mut loaded = self.loaded.write().unwrap_or_else(|e| e.into_inner());
        if self.writes.load(Ordering::Acquire) == writes {
            *loaded = Some(Loaded { keys, began });
        }
        known
    }

    fn answered(&self, known: bool) -> bool {
        if !known {
            self.counters.hit();
        }
        known
    }

    /// What the set says of `access_key`, if it can say: that it exists,
    /// from any listing; that it does not, only from one begun at or after
    /// `since` (with no `since`, never).
    fn answer_since(&self, access_key: &str, since: Option<Instant>) -> Option<bool> {
        let loaded = self.loaded.read().unwrap_or_else(|e| e.into_inner());
        let loaded = loaded.as_ref()?;
        if loaded.keys.contains(access_key) {
            return Some(true);
        }
        since.filter(|since| loaded.began >= *since).map(|_| false)
    }

    /// Records a write of `access_key` by this replica: `exists` after it.
    pub(super) fn wrote(&self, access_key: &str, exists: bool) {
        let mut loaded = self.loaded.write().unwrap_or_else(|e| e.into_inner());
        self.writes.fetch_add(1, Ordering::AcqRel);
        let Some(set) = loaded.as_mut() else { return };
        if !exists {
            set.keys.remove(access_key);
        } else if set.keys.len() < self.capacity || set.keys.contains(access_key) {
            set.keys.insert(access_key.to_owned());
        } else {
            // Past the capacity the set is not kept, as when loaded.
            *loaded = None;
        }
    }

    pub(super) fn counters(&self) -> CacheCounters {
        self.counters.snapshot()
    }
}
