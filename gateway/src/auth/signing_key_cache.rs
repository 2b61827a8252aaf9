//! Derived SigV4 signing keys, cached so that the four HMACs of the
//! derivation run once per key and day rather than once per request.
//!
//! The cache key includes a fingerprint of the secret: when a secret is
//! rotated, the new secret misses the cache instead of finding a key derived
//! from the old one, so a rotated-out secret stops working at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::sigv4::parse_amz_date;

/// Entries kept before the cache starts over. One entry per active key per
/// day: thousands of keys fit, and starting over only costs re-derivation.
const CAPACITY: usize = 4096;

#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    access_key: String,
    secret_fingerprint: [u8; 32],
    date: String,
    region: String,
    service: String,
}

#[derive(Default)]
pub(crate) struct SigningKeyCache {
    entries: Mutex<HashMap<CacheKey, [u8; 32]>>,
}

impl SigningKeyCache {
    /// The signing key for `secret` on `date` (`YYYYMMDD`), or `None` if the
    /// date is not a real day.
    pub(crate) fn get(
        &self,
        access_key: &str,
        secret: &str,
        date: &str,
        region: &str,
        service: &str,
    ) -> Option<[u8; 32]> {
        let key = CacheKey {
            access_key: access_key.to_owned(),
            secret_fingerprint: Sha256::digest(secret.as_bytes()).into(),
            date: date.to_owned(),
            region: region.to_owned(),
            service: service.to_owned(),
        };
        if let Some(found) = self.lock().get(&key) {
            return Some(*found);
        }
        let derived = derive(secret, day_start(date)?, region, service);
        let mut entries = self.lock();
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key, derived);
        Some(derived)
    }

    /// Drops every key derived for `access_key` (it was deleted or rotated).
    pub(crate) fn forget(&self, access_key: &str) {
        self.lock().retain(|key, _| key.access_key != access_key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, [u8; 32]>> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (every operation is a single map call), so a poisoned lock is usable.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

fn day_start(date: &str) -> Option<SystemTime> {
    parse_amz_date(&format!("{date}T000000Z"))
}

fn derive(secret: &str, day: SystemTime, region: &str, service: &str) -> [u8; 32] {
    let key = aws_sigv4::sign::v4::generate_signing_key(secret, day, region, service);
    let mut out = [0u8; 32];
    out.copy_from_slice(key.as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    #[test]
    fn derives_the_documented_signing_key() {
        let cache = SigningKeyCache::default();
        let key = cache
            .get(
                "AKIAIOSFODNN7EXAMPLE",
                SECRET,
                "20130524",
                "us-east-1",
                "s3",
            )
            .unwrap();
        // The AWS chunked-upload example's seed signature depends only on
        // this key; here we check the key against an independent derivation.
        let k_date =
            super::super::sigv4::hmac_sha256(format!("AWS4{SECRET}").as_bytes(), b"20130524");
        let k_region = super::super::sigv4::hmac_sha256(&k_date, b"us-east-1");
        let k_service = super::super::sigv4::hmac_sha256(&k_region, b"s3");
        let k_signing = super::super::sigv4::hmac_sha256(&k_service, b"aws4_request");
        assert_eq!(key, k_signing);
    }

    #[test]
    fn a_rotated_secret_never_reuses_the_old_key() {
        let cache = SigningKeyCache::default();
        let old = cache
            .get("AK", "old", "20250101", "us-east-1", "s3")
            .unwrap();
        let new = cache
            .get("AK", "new", "20250101", "us-east-1", "s3")
            .unwrap();
        assert_ne!(old, new);
        assert_eq!(
            cache.get("AK", "new", "20250101", "us-east-1", "s3"),
            Some(new)
        );
    }

    #[test]
    fn forget_drops_only_that_access_key() {
        let cache = SigningKeyCache::default();
        cache.get("A", "s", "20250101", "us-east-1", "s3").unwrap();
        cache.get("A", "s", "20250102", "us-east-1", "s3").unwrap();
        cache.get("B", "s", "20250101", "us-east-1", "s3").unwrap();
        cache.forget("A");
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn refuses_impossible_dates() {
        let cache = SigningKeyCache::default();
        assert_eq!(cache.get("A", "s", "20251399", "us-east-1", "s3"), None);
    }
}
