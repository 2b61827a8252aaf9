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
//!
//! When the set cannot answer, every key is asked for, as with a zero
//! `ttl`, and no request waits for a listing: an unknown key then costs
//! one per-key lookup, what a known key's first request costs anyway, and
//! nothing is kept for it. That happens for good once the set outgrows
//! `capacity` (listing it again would cost the back end more than the
//! lookups it saves, and it would still not be kept), and until the next
//! listing is due after a listing failed. Known keys never wait for a
//! listing in either case.

use std::collections::HashSet;
use std::future::Future;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::CacheCounters;
use super::layer::Counters;
use crate::Result;

/// What the last listing left.
enum Set {
    /// Every key that existed when the listing began.
    Loaded(Loaded),
    /// The set cannot answer: every key is asked for without waiting,
    /// until this instant (a failed listing: the next one is due then) or
    /// for good (with none: the set outgrew the capacity).
    Unusable { until: Option<Instant> },
}

struct Loaded {
    keys: HashSet<String>,
    /// When the listing began: it holds every key created before then.
    began: Instant,
}

/// What the set says of a key without waiting for a listing.
enum Answer {
    Known(bool),
    /// It cannot tell: ask the back end for this key.
    AskForKey,
    /// It cannot tell, and a listing is due: list unless one is running.
    Retry,
    /// The next listing may tell.
    List,
}

pub(super) struct AccessKeys {
    /// The least time between two listings; zero: the set is never loaded
    /// and every key is asked for.
    ttl: Duration,
    /// The most keys kept; past it the set is dropped for good.
    capacity: usize,
    set: RwLock<Option<Set>>,
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
            set: RwLock::new(None),
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
        let mut last_listing = match self.answer_since(access_key, None) {
            Answer::Known(known) => return self.answered(known),
            Answer::AskForKey => return true,
            // Whoever finds the loader free lists; the others ask for their key.
            Answer::Retry => match self.loading.try_lock() {
                Ok(last_listing) => last_listing,
                Err(_) => return true,
            },
            Answer::List => self.loading.lock().await,
        };
        // A listing that began while this call waited answers it.
        match self.answer_since(access_key, Some(arrived)) {
            Answer::Known(known) => return self.answered(known),
            Answer::AskForKey => return true,
            Answer::Retry | Answer::List => {}
        }
        if let Some(last) = *last_listing {
            tokio::time::sleep_until(last + self.ttl).await;
        }
        self.counters.miss();
        let writes = self.writes.load(Ordering::Acquire);
        let began = Instant::now();
        *last_listing = Some(began);
        let (set, known) = match load().await {
            Ok(keys) if keys.len() <= self.capacity => {
                let keys: HashSet<String> = keys.into_iter().collect();
                let known = keys.contains(access_key);
                (Set::Loaded(Loaded { keys, began }), known)
            }
            Ok(keys) => {
                tracing::warn!(
                    keys = keys.len(),
                    capacity = self.capacity,
                    "more access keys than the cache holds; asking for each key from now on"
                );
                (Set::Unusable { until: None }, true)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the access keys; asking for each until the next listing");
                let until = Some(began + self.ttl);
                (Set::Unusable { until }, true)
            }
        };
        let mut kept = self.set.write().unwrap_or_else(|e| e.into_inner());
        if self.writes.load(Ordering::Acquire) == writes {
            *kept = Some(set);
        }
        known
    }

    fn answered(&self, known: bool) -> bool {
        if !known {
            self.counters.hit();
        }
        known
    }

    /// What the set says of `access_key`: that it exists, from any
    /// listing; that it does not, only from one begun at or after `since`
    /// (with no `since`, never).
    fn answer_since(&self, access_key: &str, since: Option<Instant>) -> Answer {
        let set = self.set.read().unwrap_or_else(|e| e.into_inner());
        match &*set {
            None => Answer::List,
            Some(Set::Unusable { until }) => match until {
                Some(until) if Instant::now() >= *until => Answer::Retry,
                _ => Answer::AskForKey,
            },
            Some(Set::Loaded(loaded)) if loaded.keys.contains(access_key) => Answer::Known(true),
            Some(Set::Loaded(loaded)) => match since {
                Some(since) if loaded.began >= since => Answer::Known(false),
                _ => Answer::List,
            },
        }
    }

    /// Records a write of `access_key` by this replica: `exists` after it.
    pub(super) fn wrote(&self, access_key: &str, exists: bool) {
        let mut set = self.set.write().unwrap_or_else(|e| e.into_inner());
        self.writes.fetch_add(1, Ordering::AcqRel);
        let Some(Set::Loaded(loaded)) = set.as_mut() else {
            return;
        };
        if !exists {
            loaded.keys.remove(access_key);
        } else if loaded.keys.len() < self.capacity || loaded.keys.contains(access_key) {
            loaded.keys.insert(access_key.to_owned());
        } else {
            // Past the capacity, as when a listing finds too many.
            *set = Some(Set::Unusable { until: None });
        }
    }

    pub(super) fn counters(&self) -> CacheCounters {
        self.counters.snapshot()
    }
}
