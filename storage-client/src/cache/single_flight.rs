//! Concurrent loads of one key share one call, and nothing is kept after
//! it: the lookup cache's default (`key_ttl` 0), where every GET passes
//! through. A cache (moka) would insert and invalidate an entry per call,
//! which profiled at a tenth of a 1 KiB GET's CPU; this is a sharded map
//! of the calls in flight, two short lock holds per call.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::OnceCell;

type Calls<K, T> = Mutex<HashMap<K, Arc<OnceCell<T>>>>;

pub(super) struct SingleFlight<K, T> {
    shards: Box<[Calls<K, T>]>,
    hasher: RandomState,
}

impl<K: Hash + Eq + Clone, T: Clone> SingleFlight<K, T> {
    /// Enough shards that callers of different keys rarely wait for one
    /// another's lock on two cores or twenty.
    const SHARDS: usize = 64;

    pub(super) fn new() -> Self {
        Self {
            shards: (0..Self::SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
        }
    }

    /// `load`'s result, or that of the call of `key` already in flight;
    /// `true` when it was this caller's own `load` that ran. A caller that
    /// gives up (its future dropped) leaves the call to the next waiter.
    pub(super) async fn run(&self, key: K, load: impl Future<Output = T>) -> (T, bool) {
        let calls = &self.shards[self.hasher.hash_one(&key) as usize % self.shards.len()];
        let cell = Arc::clone(lock(calls).entry(key.clone()).or_default());
        let _leave = Leave {
            calls,
            key,
            cell: Arc::clone(&cell),
        };
        // On the heap, as moka keeps its loads: inline, a lookup's whole
        // back-end call would sit in every caller's future, and debug
        // builds (which copy futures through the stack) overflowed it.
        let load = Box::pin(load);
        let mut ran = false;
        let value = cell
            .get_or_init(|| {
                ran = true;
                load
            })
            .await
            .clone();
        (value, ran)
    }

    #[cfg(test)]
    pub(super) fn in_flight(&self) -> usize {
        self.shards.iter().map(|calls| lock(calls).len()).sum()
    }
}

fn lock<K, T>(calls: &Calls<K, T>) -> MutexGuard<'_, HashMap<K, Arc<OnceCell<T>>>> {
    // The map is consistent between statements, so a panic elsewhere
    // while it was held leaves nothing to repair.
    calls.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes the call from the map when its first participant is done (or
/// gone), so a later caller starts a fresh load.
struct Leave<'a, K: Hash + Eq, T> {
    calls: &'a Calls<K, T>,
    key: K,
    cell: Arc<OnceCell<T>>,
}

impl<K: Hash + Eq, T> Drop for Leave<'_, K, T> {
    fn drop(&mut self) {
        let mut calls = lock(self.calls);
        if calls
            .get(&self.key)
            .is_some_and(|cell| Arc::ptr_eq(cell, &self.cell))
        {
            calls.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn concurrent_calls_of_one_key_share_one_load_and_leave_nothing() {
        let flight = SingleFlight::<&str, usize>::new();
        let loads = AtomicUsize::new(0);
        let gate = tokio::sync::Notify::new();
        let calls = (0..8).map(|_| {
            flight.run("k", async {
                gate.notified().await;
                loads.fetch_add(1, Ordering::SeqCst) + 7
            })
        });
        let all = futures::future::join_all(calls);
        tokio::pin!(all);
        // One round of polls: every call has joined, the first one's load waits.
        assert!(futures::poll!(&mut all).is_pending());
        assert_eq!(flight.in_flight(), 1);
        gate.notify_one();
        let results = all.await;
        assert!(results.iter().all(|(value, _)| *value == 7));
        let ran = results.iter().filter(|(_, own)| *own).count();
        assert_eq!((loads.load(Ordering::SeqCst), ran), (1, 1));
        assert_eq!(flight.in_flight(), 0);
        // Nothing is kept: the next call loads again.
        assert_eq!(flight.run("k", async { 9 }).await, (9, true));
    }

    #[tokio::test]
    async fn a_caller_that_gives_up_leaves_no_call_behind() {
        let flight = SingleFlight::<&str, u8>::new();
        let mut pending = Box::pin(flight.run("k", std::future::pending()));
        assert!(futures::poll!(&mut pending).is_pending());
        assert_eq!(flight.in_flight(), 1);
        drop(pending);
        assert_eq!(flight.in_flight(), 0);
        assert_eq!(flight.run("k", async { 1 }).await, (1, true));
    }
}
