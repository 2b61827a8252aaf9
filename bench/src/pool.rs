//! The set of objects that exist in the bucket during a run. GET and HEAD
//! lease a key; DELETE only takes keys nobody holds a lease on, so a read
//! never races with the deletion of its own object and every 404 seen is a
//! real error in the server, not in the benchmark.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct State {
    keys: Vec<String>,
    /// Leases held per key; keys without a lease are absent.
    readers: HashMap<String, u32>,
}

#[derive(Default)]
pub struct ObjectPool {
    state: Mutex<State>,
}

/// A key that stays in the pool (and in the bucket) while this lives.
pub struct Lease<'a> {
    pool: &'a ObjectPool,
    key: String,
}

impl Lease<'_> {
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut state = self.pool.lock();
        if let Some(count) = state.readers.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                state.readers.remove(&self.key);
            }
        }
    }
}

impl ObjectPool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking worker cannot leave the pool half-updated: every
        // critical section is a single push, remove or counter change.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn is_empty(&self) -> bool {
        self.lock().keys.is_empty()
    }

    pub fn insert(&self, key: String) {
        self.lock().keys.push(key);
    }

    /// Leases the key at `hint` (modulo the pool size); None when empty.
    pub fn lease(&self, hint: usize) -> Option<Lease<'_>> {
        let mut state = self.lock();
        if state.keys.is_empty() {
            return None;
        }
        let key = state.keys[hint % state.keys.len()].clone();
        *state.readers.entry(key.clone()).or_insert(0) += 1;
        Some(Lease { pool: self, key })
    }

    /// Removes and returns the first unleased key at or after `hint`
    /// (wrapping around); None when every key is leased or the pool is empty.
    pub fn take_unleased(&self, hint: usize) -> Option<String> {
        let mut state = self.lock();
        let len = state.keys.len();
        let index = (0..len)
            .map(|step| (hint + step) % len)
            .find(|&index| !state.readers.contains_key(&state.keys[index]))?;
        Some(state.keys.swap_remove(index))
    }

    /// Empties the pool, returning every key (for cleanup).
    pub fn drain(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(keys: &[&str]) -> ObjectPool {
        let pool = ObjectPool::default();
        for key in keys {
            pool.insert(key.to_string());
        }
        pool
    }

    #[test]
    fn leased_keys_are_never_taken() {
        let pool = pool(&["a", "b"]);
        let lease = pool.lease(0).expect("lease");
        assert_eq!(lease.key(), "a");
        assert_eq!(pool.take_unleased(0).as_deref(), Some("b"));
        assert_eq!(pool.take_unleased(0), None);
        drop(lease);
        assert_eq!(pool.take_unleased(0).as_deref(), Some("a"));
        assert!(pool.is_empty());
        assert!(pool.lease(3).is_none());
    }

    #[test]
    fn a_key_leased_twice_stays_until_both_leases_end() {
        let pool = pool(&["a"]);
        let first = pool.lease(0).expect("lease");
        let second = pool.lease(7).expect("lease");
        drop(first);
        assert_eq!(pool.take_unleased(0), None);
        drop(second);
        assert_eq!(pool.take_unleased(0).as_deref(), Some("a"));
    }

    #[test]
    fn hints_wrap_around_and_inserts_are_visible() {
        let pool = pool(&["a", "b", "c"]);
        assert_eq!(pool.lease(4).expect("lease").key(), "b");
        pool.insert("d".into());
        assert_eq!(pool.take_unleased(3).as_deref(), Some("d"));
        let mut rest = pool.drain();
        rest.sort();
        assert_eq!(rest, ["a", "b", "c"]);
        assert!(pool.drain().is_empty());
    }
}
