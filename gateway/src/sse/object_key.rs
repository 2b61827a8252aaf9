//! The per-object key: a random AES-256 data key and a random segment
//! nonce base, made fresh for every object written encrypted. It is stored
//! only sealed (AES-256-GCM) under a wrapping key the gateway does not
//! keep: the customer's key for SSE-C. So a customer key never touches the
//! disk, and whoever reads the stored bytes and metadata without the
//! wrapping key learns nothing but sizes.

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

use super::segments::SealError;

/// What sealing binds the object key to, so a sealed key is only ever
/// opened as one (and with the plaintext size it was recorded with).
fn aad(plain_size: u64) -> Vec<u8> {
    format!("s3gw sse object key v1 {plain_size}").into_bytes()
}

pub struct ObjectKey {
    data_key: [u8; 32],
    pub base: [u8; 12],
}

impl ObjectKey {
    pub fn random() -> Self {
        let mut key = Self {
            data_key: [0; 32],
            base: [0; 12],
        };
        let mut rng = rand::rng();
        rng.fill_bytes(&mut key.data_key);
        rng.fill_bytes(&mut key.base);
        key
    }

    pub fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(&self.data_key.into())
    }

    /// The key sealed under `wrapping` for an object of `plain_size`
    /// bytes, as base64 of nonce, ciphertext and tag.
    pub fn seal(&self, wrapping: &[u8; 32], plain_size: u64) -> Result<String, SealError> {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let mut material = [0u8; 44];
        material[..32].copy_from_slice(&self.data_key);
        material[32..].copy_from_slice(&self.base);
        let aad = aad(plain_size);
        let sealed = Aes256Gcm::new(wrapping.into())
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: &material,
                    aad: &aad,
                },
            )
            .map_err(|_| SealError)?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(STANDARD.encode(out))
    }

    /// Opens what [`ObjectKey::seal`] made; `None` when `wrapping` is not the
    /// key that sealed it or the record was changed.
    pub fn open(sealed: &str, wrapping: &[u8; 32], plain_size: u64) -> Option<Self> {
        let bytes = STANDARD.decode(sealed).ok()?;
        let (nonce, sealed) = bytes.split_at_checked(12)?;
        let aad = aad(plain_size);
        let material = Aes256Gcm::new(wrapping.into())
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .ok()?;
        let (data_key, base) = material.split_at_checked(32)?;
        Some(Self {
            data_key: data_key.try_into().ok()?,
            base: base.try_into().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_only_with_the_wrapping_key_and_size_it_was_sealed_with() {
        let key = ObjectKey::random();
        let sealed = key.seal(&[1; 32], 10).unwrap();
        let opened = ObjectKey::open(&sealed, &[1; 32], 10).unwrap();
        assert_eq!((opened.data_key, opened.base), (key.data_key, key.base));
        assert!(ObjectKey::open(&sealed, &[2; 32], 10).is_none());
        assert!(ObjectKey::open(&sealed, &[1; 32], 11).is_none());
        assert!(ObjectKey::open("not base64!", &[1; 32], 10).is_none());
        assert!(ObjectKey::open("", &[1; 32], 10).is_none());
    }

    #[test]
    fn every_object_gets_its_own_key() {
        let (a, b) = (ObjectKey::random(), ObjectKey::random());
        assert_ne!(a.data_key, b.data_key);
        assert_ne!(a.base, b.base);
    }
}
