//! The set of access keys that exist, so that a request signed with an
//! unknown key (a typo, or an attacker trying random keys) is refused
//! without a back-end lookup each: the whole set is loaded (names only) at
//! most once per `ttl`, whatever the number of unknown keys tried.
//!
//! This replica's own writes update the set at once, so a key created here
//! works here immediately; a key created through another replica is
//! refused here until the next load, at most `ttl` later.

use std::collections::HashSet;
use std::future::Future;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::CacheCounters;
use super::layer::Counters;
use crate::Result;

struct Loaded {
    keys: HashSet<String>,
    at: Instant,
}

pub(super) struct AccessKeys {
    /// Zero: the set is never loaded and every key is asked for.
    ttl: Duration,
    /// The most keys kept; a larger set is not kept (every key is asked for).
    capacity: usize,
    loaded: RwLock<Option<Loaded>>,
    /// Serialises loads, so a burst of unknown keys costs one.
    loading: tokio::sync::Mutex<()>,
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
            loading: tokio::sync::Mutex::new(()),
            writes: AtomicU64::new(0),
            counters: Counters::default(),
        }
    }

    /// False only if `access_key` is surely unknown; true if it exists or
    /// the set cannot tell (the back end is then asked). `load` lists every
    /// access key.
    pub(super) async fn may_exist<F>(&self, access_key: &str, load: impl FnOnce() -> F) -> bool
    where
        F: Future<Output = Result<Vec<String>>>,
    {
        if self.ttl.is_zero() {
            return true;
        }
        if let Some(known) = self.fresh(access_key) {
            return self.answered(known);
        }
        let _loading = self.loading.lock().await;
        if let Some(known) = self.fresh(access_key) {
            return self.answered(known);
        }
        self.counters.miss();
        let writes = self.writes.load(Ordering::Acquire);
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
            *loaded = Some(Loaded {
                keys,
                at: Instant::now(),
            });
        }
        known
    }

    fn answered(&self, known: bool) -> bool {
        if !known {
            self.counters.hit();
        }
        known
    }

    /// Whether the key is in a set loaded less than `ttl` ago, if there is one.
    fn fresh(&self, access_key: &str) -> Option<bool> {
        let loaded = self.loaded.read().unwrap_or_else(|e| e.into_inner());
        let loaded = loaded.as_ref().filter(|l| l.at.elapsed() < self.ttl)?;
        Some(loaded.keys.contains(access_key))
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
