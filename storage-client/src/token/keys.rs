//! The rotating set of symmetric secret keys that sign block tokens.

use std::sync::RwLock;

use rand::RngCore;
use uuid::Uuid;

/// One HMAC key with its validity window (milliseconds since the epoch).
#[derive(Clone)]
pub struct SecretKey {
    id: Uuid,
    created_ms: u64,
    expires_ms: u64,
    bytes: [u8; 32],
}

impl std::fmt::Debug for SecretKey {
    // Never print key material.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretKey")
            .field("id", &self.id)
            .field("created_ms", &self.created_ms)
            .field("expires_ms", &self.expires_ms)
            .finish_non_exhaustive()
    }
}

impl SecretKey {
    pub fn new(id: Uuid, created_ms: u64, expires_ms: u64, bytes: [u8; 32]) -> Self {
        Self {
            id,
            created_ms,
            expires_ms,
            bytes,
        }
    }

    /// A fresh random key.
    pub fn generate(created_ms: u64, expires_ms: u64) -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        Self::new(Uuid::new_v4(), created_ms, expires_ms, bytes)
    }

    pub fn id(&self) -> Uuid {
        self.id
    }
    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }
    pub fn expires_ms(&self) -> u64 {
        self.expires_ms
    }
    pub fn bytes(&self) -> &[u8; 32] {
        &self.bytes
    }
}

/// The keys a signer may sign with and a verifier accepts, newest last.
/// Shared by the OM (which rotates and persists) and the DN (which verifies).
#[derive(Debug, Default)]
pub struct KeyRing {
    keys: RwLock<Vec<SecretKey>>,
}

impl KeyRing {
    #[cfg(test)]
    pub fn new(keys: Vec<SecretKey>) -> Self {
        let ring = Self::default();
        ring.replace(keys);
        ring
    }

    /// Replaces the whole set (after a rotation or a reload).
    pub fn replace(&self, mut keys: Vec<SecretKey>) {
        keys.sort_by_key(SecretKey::created_ms);
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
    }

    pub fn newest(&self) -> Option<SecretKey> {
        self.read().last().cloned()
    }

    pub fn get(&self, id: Uuid) -> Option<SecretKey> {
        self.read().iter().find(|k| k.id == id).cloned()
    }

    pub fn all(&self) -> Vec<SecretKey> {
        self.read().clone()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<SecretKey>> {
        // A panic elsewhere cannot leave the Vec half-updated (replace is one store).
        self.keys.read().unwrap_or_else(|e| e.into_inner())
    }
}
